# The Moses2 paper ("Fast, scalable phrase-based decoding") sections 4.1 and 4.3-4.5: sentence-level threads, memory
# pools, the binarized phrase table (static cache, compression, reordering integrated or separate), the component
# profile; on the Moses oracle's model (dev verses), with our pipeline's full table binarized (profile key
# `table: full`, the rule output of moses_training.smk) or the oracle's dev-filtered table (`dev`, for CI).
MSC = P.get("moses2_scaling")
MSC_TABLES = ["plain-int", "comp-int", "plain-sep", "comp-sep"]

if MSC and needs_oracle("moses2_scaling"):
    ALL += [f"{OUT}/tables/moses2_scaling_acceptance.md", f"{OUT}/figures/moses2_fig9.png"]
    METRICS.append(f"{OUT}/metrics/moses2_scaling.csv")
    # text tables with the binarized tables' numbers (every timed point must reproduce their decoding exactly): our
    # full table filtered to the dev verses, or the oracle's own
    MSC_SAME = {"full": (f"{TMO}/dev/phrase-table.gz", f"{TMO}/dev/reordering-table.wbe-msd-bidirectional-fe.gz"),
                "dev": (f"{ORACLE}/phrase-table.dev.gz", f"{ORACLE}/reordering-table.dev.gz")}[MSC["table"]]
    MSC_SOURCES = {
        "full": (f"{TMO}/phrase-table.gz", f"{TMO}/reordering-table.wbe-msd-bidirectional-fe.gz"),
        "dev": (f"{ORACLE}/phrase-table.dev.gz", f"{ORACLE}/reordering-table.dev.gz"),
    }

    rule moses2_scaling_binarize:
        """One binarized table per source (full / dev) and storage: {plain,comp} target side x reordering {int,sep}."""
        conda: CONDA_ENV
        input:
            BUILD,  # the file format is this checkout's C
            pt=lambda wildcards: MSC_SOURCES[wildcards.source][0],
            rt=lambda wildcards: MSC_SOURCES[wildcards.source][1],
        output:
            "work/moses2_scaling/{source}/{variant}.bin",
        wildcard_constraints:
            source="full|dev",
            variant="(plain|comp)-(int|sep)",
        params:
            compress=lambda wildcards: "--no-compress" if wildcards.variant.startswith("plain") else "",
            ro=lambda wildcards: "integrated" if wildcards.variant.endswith("int") else "separate",
        log:
            f"{OUT}/logs/moses2_scaling/binarize-{{source}}-{{variant}}.log",
        shell:
            "smtbench tm binarize --phrase-table {input.pt} --reordering-table {input.rt} --reordering {params.ro} "
            "{params.compress} --out {output} > {log} 2>&1"

    rule moses2_scaling_bench:
        conda: CONDA_ENV
        input:
            BUILD,
            ini=f"{ORACLE}/moses.ini",
            src=f"{ORACLE}/dev.es",
            ref=f"{ORACLE}/dev.en",
            tables=expand(f"work/moses2_scaling/{MSC['table']}/{{v}}.bin", v=MSC_TABLES),
            same="work/moses2_scaling/dev/plain-int.bin",  # peak RSS on exactly Moses2's (filtered) model
            same_pt=MSC_SAME[0],
            same_rt=MSC_SAME[1],
        output:
            f"{OUT}/raw/moses2_scaling/rows.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            oracle=f"{ORACLE}/m2-cube400",
            tables=lambda wildcards, input: " ".join(f"--table {v} {p}" for v, p in zip(MSC_TABLES, input.tables)),
            threads=",".join(map(str, MSC["threads"])),
            caches=",".join(map(str, MSC["caches"])),
            cache=MSC["cache"],
            pop_limit=MSC["pop_limit"],
            stack=MSC["stack_size"],
            sentences=MSC["sentences"],
            repeats=MSC["repeats"],
            protocol=PROTOCOL_ARGS,  # the profile's repeat protocol (smtbench.protocol)
            profile_us=MSC["profile_us"],
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses2_scaling/bench.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench scaling -f {input.ini} --input {input.src} "
            "--reference {input.ref} --oracle {params.oracle} {params.tables} --threads {params.threads} "
            "--caches {params.caches} --cache {params.cache} --pop-limit {params.pop_limit} -s {params.stack} "
            "--sentences {params.sentences} --repeats {params.repeats} {params.protocol} --profile-us {params.profile_us} --rss "
            "--rss-same-model {input.same} --same-tables {input.same_pt} {input.same_rt} "
            "--out {output} 2> {log}"

    rule moses2_scaling_report:
        conda: CONDA_ENV
        input:
            rows=rules.moses2_scaling_bench.output,
            quiet=f"{ORACLE}/runs-quiet.tsv",
        output:
            shown_all(expand(f"{OUT}/tables/moses2_{{t}}.{{ext}}",
                             t=["table3", "table6", "table7", "fig3", "fig8", "fig9", "scaling_acceptance"],
                             ext=["csv", "md"]), "moses2_scaling"),
            shown_all(expand(f"{OUT}/figures/moses2_fig{{f}}.png", f=[3, 8, 9]), "moses2_scaling"),
            metrics=f"{OUT}/metrics/moses2_scaling.csv",
        params:
            tables=lambda wildcards, output: str(Path(output.metrics).parent.parent / "tables"),
            figures=lambda wildcards, output: str(Path(output.metrics).parent.parent / "figures"),
            oracle=lambda wildcards, input: str(Path(input.quiet).parent),
        log:
            f"{OUT}/logs/moses2_scaling/report.log",
        shell:
            "smtbench report moses2-scaling --rows {input.rows} --oracle {params.oracle} --tables {params.tables} "
            "--figures {params.figures} --metrics {output.metrics} 2> {log}"
