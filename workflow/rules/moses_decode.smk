# Our decoders against the real Moses, live: normal stack search and cube pruning decode a model and an input, and
# Moses2 / Moses v1 (tools/build_moses.sh, `make moses`) decode the same model and input in the same rule: 1-best
# lines and model scores compared, every system timed as a process in each repeat, alternating order, loading
# excluded alike (bench decode --peers). A peer that is not built gets a row saying "not built (make moses)".
# The peers named in the grid (moses_decode.peers, weights_peers) are entries of config/peers.yaml (smtbench.peers);
# a user's own decoder is one more entry there (README "Benchmark your own system").
# The model (config moses_decode.model): `trained` = the workflow's own model (our alignment, tables, LM and
# moses.ini, moses_training.smk's tm_model_filtered) on the test books, which needs nothing beside the checkout;
# `oracle` = the Moses-trained oracle model on the dev books. Where the oracle is present and the model is
# `trained`, the oracle run is added as a second table: 1-best against its recorded Moses2 / Moses v1 outputs, and
# the live peers of `oracle_peers` (Moses2) timed beside ours in the same rule, as moses_decode_run does (issue 40:
# the recorded figures stay in the table, labelled, with no ratio); `oracle_moses1_sentences` > 0 adds Moses v1 live
# in a run of its own on the first N dev verses (it runs ~65 words/s), rows of the same normal table.
# `weights:` adds runs of the trained model under other weights (common.smk weight_runs; rows
# <search>-trained-<w>.jsonl, tables moses_decode_<search>_trained-<w>; no metrics), beside the live peers of
# `weights_peers` decoding the same reweighted ini (issue 27: BLEU beside Moses2 on tuned weights).
MOSES_DECODE = GRID["moses_decode"] if "moses_decode" in GRID else None  # absent from the grid: not run
MOSES_DECODE_MODEL = experiment_model("moses_decode", MOSES_DECODE, "the workflow's own model, test books") if MOSES_DECODE else None  # common.smk
MOSES_DECODE_SEARCH = {  # search -> (stack size, pop limit, live peers)
    "normal": (MOSES_DECODE["stack_size"], None, MOSES_DECODE["peers"]["normal"]),
    "cube": (MOSES_DECODE["cube"]["stack_size"], MOSES_DECODE["cube"]["pop_limit"], MOSES_DECODE["peers"]["cube"]),
} if MOSES_DECODE else {}
MOSES_DECODE_ORACLE_RUNS = {"normal": "m2-normal200 m1-normal200", "cube": "m2-cube400"}
if MOSES_DECODE:  # the peers the grid names are entries of config/peers.yaml serving moses_decode: else one line now
    from smtbench import peers as _peers

    _PEERS = _peers.load()
    for _key, _names in (("peers.normal", MOSES_DECODE["peers"]["normal"]),
                         ("peers.cube", MOSES_DECODE["peers"]["cube"]), ("weights_peers", MOSES_DECODE["weights_peers"]),
                         ("oracle_peers.normal", MOSES_DECODE["oracle_peers"]["normal"]),
                         ("oracle_peers.cube", MOSES_DECODE["oracle_peers"]["cube"])):
        for _name in _names:
            if _name not in _PEERS:
                raise ValueError(f"moses_decode.{_key}: {_name}: not an entry of {_peers.DEFAULT_FILE} (entries: "
                                 f"{', '.join(sorted(_PEERS))}; declare it there, README 'Benchmark your own system')")
        _peers.select(_names, "moses_decode", _PEERS, option=f"moses_decode.{_key}:")  # an entry serving another


if MOSES_DECODE_MODEL:
    MOSES_DECODE_ORACLE_TOO = MOSES_DECODE_MODEL == "trained" and HAVE_ORACLE
    MOSES_DECODE_WEIGHTS = weight_runs("moses_decode", MOSES_DECODE_MODEL)
    ALL += [f"{OUT}/tables/moses_decode_{s}_{w}.md" for w in MOSES_DECODE_WEIGHTS for s in ("normal", "cube")]
    ALL += [f"{OUT}/tables/moses_decode_normal.md", f"{OUT}/tables/moses_decode_cube.md"]
    if MOSES_DECODE_ORACLE_TOO:
        ALL += [f"{OUT}/tables/moses_decode_normal_oracle.md", f"{OUT}/tables/moses_decode_cube_oracle.md"]
    METRICS.append(f"{OUT}/metrics/moses_decode.csv")

    rule moses_decode_run:
        """Ours and the live peers on decoding_model(MOSES_DECODE_MODEL), the first MOSES_DECODE['sentences'] lines (0 = all)."""
        conda: CONDA_ENV
        input:
            BUILD,
            ini=decoding_model(MOSES_DECODE_MODEL)[0],
            src=decoding_model(MOSES_DECODE_MODEL)[1],
            ref=decoding_model(MOSES_DECODE_MODEL)[2],
        output:
            f"{OUT}/raw/moses_decode/{{search}}.jsonl",
        wildcard_constraints:
            search="normal|cube",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            search=decoding_search_args,
            peers=lambda wildcards: " ".join(MOSES_DECODE_SEARCH[wildcards.search][2]),
            oracle=lambda wildcards: " ".join(f"{ORACLE}/{r}" for r in MOSES_DECODE_ORACLE_RUNS[wildcards.search].split())
            if MOSES_DECODE_MODEL == "oracle" else "",
            sentences=MOSES_DECODE["sentences"],
            repeats=MOSES_DECODE["repeats"],
            outputs=lambda wildcards, output: output[0].removesuffix(".jsonl") + "-outputs",
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses_decode/{{search}}.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses_decode -f {input.ini} {params.search} "
            "--input {input.src} --reference {input.ref} --oracle {params.oracle} --peers {params.peers} "
            "--sentences {params.sentences} --repeats {params.repeats} --outputs {params.outputs} --out {output} "
            "2> {log}"

    if MOSES_DECODE_ORACLE_TOO:
        rule moses_decode_oracle_run:
            """The oracle's model and dev books: 1-best against its recorded Moses2 / Moses v1 runs, and the live
            peers of `oracle_peers` (Moses2) decoding the same ini and input in the same run, timed beside ours as
            processes (interleaved repeats, loading subtracted alike: issue 40)."""
            conda: CONDA_ENV
            input:
                BUILD,
                ini=decoding_model("oracle")[0],
                src=decoding_model("oracle")[1],
                ref=decoding_model("oracle")[2],
            output:
                f"{OUT}/raw/moses_decode/{{search}}-oracle.jsonl",
            wildcard_constraints:
                search="normal|cube",
            params:
                expect_build=expected_build,
                search=decoding_search_args,
                oracle=lambda wildcards: " ".join(f"{ORACLE}/{r}" for r in MOSES_DECODE_ORACLE_RUNS[wildcards.search].split()),
                peers=lambda wildcards: " ".join(MOSES_DECODE["oracle_peers"][wildcards.search]),
                sentences=MOSES_DECODE["oracle_sentences"],
                repeats=MOSES_DECODE.get("oracle_repeats") or MOSES_DECODE["repeats"],
                outputs=lambda wildcards, output: output[0].removesuffix(".jsonl") + "-outputs",
            threads: BENCH_THREADS
            resources:
                bench=1,
            log:
                f"{OUT}/logs/moses_decode/{{search}}-oracle.log",
            shell:
                "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses_decode -f {input.ini} {params.search} "
                "--input {input.src} --reference {input.ref} --oracle {params.oracle} --peers {params.peers} "
                "--sentences {params.sentences} --repeats {params.repeats} --outputs {params.outputs} --out {output} "
                "2> {log}"

    MOSES_DECODE_ORACLE_M1 = MOSES_DECODE_ORACLE_TOO and MOSES_DECODE["oracle_moses1_sentences"] > 0
    if MOSES_DECODE_ORACLE_M1:
        rule moses_decode_oracle_moses1_run:
            """Moses v1 live on the oracle's model (normal search): a run of its own, ours and Moses v1 on the first
            oracle_moses1_sentences dev verses (Moses v1 runs ~65 words/s: fewer verses than the Moses2 run; the
            table says how many)."""
            conda: CONDA_ENV
            input:
                BUILD,
                ini=decoding_model("oracle")[0],
                src=decoding_model("oracle")[1],
                ref=decoding_model("oracle")[2],
            output:
                f"{OUT}/raw/moses_decode/normal-oracle-moses1.jsonl",
            params:
                expect_build=expected_build,
                search=f"--search normal -s {MOSES_DECODE['stack_size']}",
                sentences=MOSES_DECODE["oracle_moses1_sentences"],
                repeats=MOSES_DECODE["repeats"],
                outputs=lambda wildcards, output: output[0].removesuffix(".jsonl") + "-outputs",
            threads: BENCH_THREADS
            resources:
                bench=1,
            log:
                f"{OUT}/logs/moses_decode/normal-oracle-moses1.log",
            shell:
                "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses_decode -f {input.ini} {params.search} "
                "--input {input.src} --reference {input.ref} --peers moses --sentences {params.sentences} "
                "--repeats {params.repeats} --outputs {params.outputs} --out {output} 2> {log}"

    if MOSES_DECODE_WEIGHTS:
        rule moses_decode_weights_run:
            """Ours and the live peers of `weights_peers` on the trained model under other weights (decoding_model)."""
            conda: CONDA_ENV
            input:
                BUILD,
                ini=lambda wildcards: decoding_model(wildcards.weights)[0],
                src=lambda wildcards: decoding_model(wildcards.weights)[1],
                ref=lambda wildcards: decoding_model(wildcards.weights)[2],
            output:
                f"{OUT}/raw/moses_decode/{{search}}-{{weights}}.jsonl",
            wildcard_constraints:
                search="normal|cube",
                weights="|".join(re.escape(w) for w in MOSES_DECODE_WEIGHTS),
            params:
                expect_build=expected_build,
                search=decoding_search_args,
                peers=" ".join(MOSES_DECODE["weights_peers"]),
                sentences=MOSES_DECODE["sentences"],
                repeats=MOSES_DECODE["repeats"],
                outputs=lambda wildcards, output: output[0].removesuffix(".jsonl") + "-outputs",
            threads: BENCH_THREADS
            resources:
                bench=1,
            log:
                f"{OUT}/logs/moses_decode/{{search}}-{{weights}}.log",
            shell:
                "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses_decode -f {input.ini} {params.search} "
                "--input {input.src} --reference {input.ref} --peers {params.peers} --sentences {params.sentences} "
                "--repeats {params.repeats} --outputs {params.outputs} --out {output} 2> {log}"

        rule moses_decode_weights_report:
            conda: CONDA_ENV
            input:
                normal=f"{OUT}/raw/moses_decode/normal-{{weights}}.jsonl",
                cube=f"{OUT}/raw/moses_decode/cube-{{weights}}.jsonl",
            output:
                shown_all([f"{OUT}/tables/moses_decode_{s}_{{weights}}.{ext}" for s in ("normal", "cube")
                           for ext in ("csv", "md")], "moses_decode"),
            wildcard_constraints:
                weights="|".join(re.escape(w) for w in MOSES_DECODE_WEIGHTS),
            params:
                normal=lambda wildcards, output: output[0].removesuffix(".csv"),
                cube=lambda wildcards, output: output[2].removesuffix(".csv"),
            log:
                f"{OUT}/logs/moses_decode/report-{{weights}}.log",
            shell:
                "smtbench report moses_decode --rows {input.normal} --table {params.normal} "
                "--cube-rows {input.cube} --cube-table {params.cube} 2> {log}"

    rule moses_decode_report:
        conda: CONDA_ENV
        input:
            normal=f"{OUT}/raw/moses_decode/normal.jsonl",
            cube=f"{OUT}/raw/moses_decode/cube.jsonl",
            oracle=[f"{OUT}/raw/moses_decode/normal-oracle.jsonl", f"{OUT}/raw/moses_decode/cube-oracle.jsonl"]
            if MOSES_DECODE_ORACLE_TOO else [],
            moses1=f"{OUT}/raw/moses_decode/normal-oracle-moses1.jsonl" if MOSES_DECODE_ORACLE_M1 else [],
            counts=COUNTS_TABLE,
        output:
            shown_all(expand(f"{OUT}/tables/moses_decode_{{t}}.{{ext}}",
                             t=["normal", "cube"] + (["normal_oracle", "cube_oracle"] if MOSES_DECODE_ORACLE_TOO else []),
                             ext=["csv", "md"]), "moses_decode"),
            metrics=f"{OUT}/metrics/moses_decode.csv",
        params:
            tables=lambda wildcards, output: output[0].removesuffix("normal.csv"),
            counts=counts_option,
            oracle=lambda wildcards, input: (
                f"--oracle-rows {input.oracle[0]} --oracle-cube-rows {input.oracle[1]}" if input.oracle else "")
            + (f" --oracle-moses1-rows {input.moses1}" if input.moses1 else ""),
            oracle_tables=lambda wildcards, output: (
                f"--oracle-table {output[0].removesuffix('normal.csv')}normal_oracle "
                f"--oracle-cube-table {output[0].removesuffix('normal.csv')}cube_oracle") if MOSES_DECODE_ORACLE_TOO else "",
        log:
            f"{OUT}/logs/moses_decode/report.log",
        shell:
            "smtbench report moses_decode --rows {input.normal} --table {params.tables}normal "
            "--cube-rows {input.cube} --cube-table {params.tables}cube {params.oracle} {params.oracle_tables} "
            "{params.counts} --metrics {output.metrics} 2> {log}"
