# The Moses2 paper ("Fast, scalable phrase-based decoding") Figs 1, 2 and 10, which only Moses v1 can show: its
# decoding time with its phrase-table implementations (in-memory text vs CreateProbingPT's probing table, the
# compact table where cmph was built), with its lexicalized-reordering implementations (in-memory text vs
# processLexicalTable's binarized tree), and its speed against threads. Decoded: the workflow's own model (our
# alignment, tables, LM; `tm model`'s moses.ini filtered to the dev verses: moses_training.smk's tm_model_filtered,
# defined in every profile), and the Moses oracle's model as an extra row where ../shared has it.
# Without Moses v1 (`make moses`) every row reads "not built (make moses)".
MOSES2_MOSES1 = GRID["moses2_moses1"] if "moses2_moses1" in GRID else None  # absent from the grid: not run

if MOSES2_MOSES1:
    ALL += expand(f"{OUT}/tables/moses2_fig{{f}}.md", f=[1, 2, 10])
    METRICS.append(f"{OUT}/metrics/moses2_moses1.csv")

    MOSES2_MOSES1_INI = f"{TM}/model-dev/moses.ini"  # the workflow's model filtered to the dev verses (moses_training.smk)

    MOSES2_MOSES1_EXTRA = {"oracle": f"{ORACLE}/moses.ini"} if MOSES2_MOSES1["oracle_row"] and HAVE_ORACLE else {}

    rule moses2_moses1_bench:
        conda: CONDA_ENV
        input:
            BUILD,
            ini=MOSES2_MOSES1_INI,
            src="work/data/dev.es",
            extra=list(MOSES2_MOSES1_EXTRA.values()),
        output:
            f"{OUT}/raw/moses2_moses1/rows.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            extra=" ".join(f"--model {k}={v}" for k, v in MOSES2_MOSES1_EXTRA.items()),
            threads=",".join(map(str, MOSES2_MOSES1["threads"])),
            pts=",".join(MOSES2_MOSES1["phrase_tables"]),
            lrs=",".join(MOSES2_MOSES1["reorderings"]),
            search=MOSES2_MOSES1["search"],
            stack=MOSES2_MOSES1["stack_size"],
            pop_limit=MOSES2_MOSES1["pop_limit"],
            sentences=MOSES2_MOSES1["sentences"],
            repeats=MOSES2_MOSES1["repeats"],
            workdir=f"work/moses2_moses1/{GRID_NAME}",
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses2_moses1/bench.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses2_moses1 --model workflow={input.ini} "
            "{params.extra} --input {input.src} --sentences {params.sentences} --threads {params.threads} "
            "--phrase-tables {params.pts} --reorderings {params.lrs} --search {params.search} -s {params.stack} "
            "--pop-limit {params.pop_limit} --repeats {params.repeats} --workdir {params.workdir} --progress "
            "--out {output} 2> {log}"

    rule moses2_moses1_report:
        conda: CONDA_ENV
        input:
            rows=rules.moses2_moses1_bench.output,
        output:
            shown_all(expand(f"{OUT}/tables/moses2_fig{{f}}.{{ext}}", f=[1, 2, 10], ext=["csv", "md"]),
                      "moses2_moses1"),
            shown_all(expand(f"{OUT}/figures/moses2_fig{{f}}.png", f=[1, 2, 10]), "moses2_moses1"),
            metrics=f"{OUT}/metrics/moses2_moses1.csv",
        params:
            tables=lambda wildcards, output: str(Path(output.metrics).parent.parent / "tables"),
            figures=lambda wildcards, output: str(Path(output.metrics).parent.parent / "figures"),
        log:
            f"{OUT}/logs/moses2_moses1/report.log",
        shell:
            "smtbench report moses2_moses1 --rows {input.rows} --tables {params.tables} --figures {params.figures} "
            "--metrics {output.metrics} 2> {log}"
