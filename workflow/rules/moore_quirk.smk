# Moore & Quirk 2007, "Faster Beam-Search Decoding for Phrasal SMT": Pharaoh's beam search against distortion-penalty
# estimation (DE) and DE + early pruning (DE+EP) -- Fig 2 (BLEU vs ms/word), Fig 3 (BLEU vs hypotheses evaluated per
# word), the time and search-space ratios at equal BLEU on the upper hulls, and the same-settings comparisons.
# The paper-faithful model: a phrase table (max phrase length 7, as the paper) filtered to the test books; no
# lexicalized reordering; the 3-gram LM of the shipped corpus' train books (lm_models.smk); Moses' default (untuned)
# weights, recorded in every row; distortion limit 5; table-limit 25 (the largest t-table limit searched). Its phrase
# table (config moore_quirk.model): `trained` = the workflow's own (our eflomal alignment, tm_train.smk's tm_score),
# which needs nothing beside the checkout; `oracle` = ours from the oracle's shipped alignment (moses_training.smk's
# tm_oracle_tables; the committed run's). Without the oracle, `oracle` follows the profile's oracle_absent (common.smk).
# Second configuration (MOORE_QUIRK["moses"]), the oracle's extra job wherever it is present, whatever the model: DE+EP in
# Moses mode on the oracle's own Moses model (dev verses) against our normal search and cube pruning and, live in the
# same repeats (issue 40: `live_peers`, config/peers.yaml entries), Moses2 at the same settings (m2-normal200,
# m2-cube400) and Moses v1 normal -s 200, plain and -early-distortion-cost (the DE of DE+EP), on the first
# `moses1_sentences` verses (its 4-7 minutes a pass on all of them), all 1 thread, no n-best, loading subtracted
# alike (bench moses_decode's way), at equal BLEU; the oracle's recorded Moses runs stay as rows labelled
# `recorded`, without a ratio. A Moses program not built (make moses) gets a row saying so. Without the oracle it is
# in NOT_RUN.
# `weights:` (optimizers of the tune block, issue 27): the sweep again with the paper-faithful model's weights tuned
# on the dev books (moore_quirk_tune below, tune.smk's settings and loop; the same tables and test verses, the ini
# reweighted by `tm reweight`): rows-<w>.jsonl, moore_quirk_*_<w> tables and figures (no metrics).
MOORE_QUIRK = GRID["moore_quirk"] if "moore_quirk" in GRID else None  # absent from the grid: not run
MOORE_QUIRK_MODEL = experiment_model("moore_quirk", MOORE_QUIRK, "the paper-faithful model on the workflow's own phrase table, test "
                            "books", oracle="the paper-faithful model on our phrase table from the oracle's "
                            "alignment, test books") if MOORE_QUIRK else None
MOORE_QUIRK_DIR = "work/moore-quirk" if MOORE_QUIRK_MODEL == "oracle" else "work/moore-quirk/trained"
MOORE_QUIRK_MOSES = MOORE_QUIRK["moses"] if MOORE_QUIRK_MODEL and "moses" in MOORE_QUIRK else None
MOORE_QUIRK_MOSES = MOORE_QUIRK_MOSES if MOORE_QUIRK_MOSES and needs_oracle("moore_quirk_moses") else None
if MOORE_QUIRK_MOSES:  # the live peers are entries of config/peers.yaml serving moore_quirk: else one line now
    from smtbench import peers as _peers
    _peers.select(MOORE_QUIRK_MOSES["live_peers"], "moore_quirk", _peers.load(), option="moore_quirk.moses.live_peers:")
MOORE_QUIRK_TABLE_LIMIT = 25  # the model loads the paper's largest t-table limit in every profile (one shared model)
if MOORE_QUIRK and max(MOORE_QUIRK["limits"]) > MOORE_QUIRK_TABLE_LIMIT:
    raise ValueError(f"moore_quirk.limits: at most {MOORE_QUIRK_TABLE_LIMIT} (the model's table-limit)")
MOORE_QUIRK_WEIGHTS = list(MOORE_QUIRK["weights"]) if MOORE_QUIRK_MODEL else []
for _w in MOORE_QUIRK_WEIGHTS:
    if _w == "default" or "tune" not in GRID or _w not in GRID["tune"]["optimizers"]:
        raise ValueError(f"moore_quirk.weights: {_w}: an optimizer of the tune block (tune.optimizers; the main "
                         "run is the default weights)")
MOORE_QUIRK_RUNS = {"rows": "model", **{f"rows-{w}": f"model-{w}" for w in MOORE_QUIRK_WEIGHTS}}  # rows: model folder

if MOORE_QUIRK_MODEL:
    ALL += [f"{OUT}/tables/moore_quirk_ratios.md", f"{OUT}/figures/moore_quirk_fig2.png",
            f"{OUT}/figures/moore_quirk_fig3.png"]
    METRICS.append(f"{OUT}/metrics/moore_quirk.csv")
    ALL += [f"{OUT}/tables/moore_quirk_ratios_{w}.md" for w in MOORE_QUIRK_WEIGHTS]

    rule moore_quirk_model:
        conda: CONDA_ENV
        input:
            pt=rules.tm_oracle_tables.output.pt if MOORE_QUIRK_MODEL == "oracle" else rules.tm_score.output[0],
            lm=lm_model_path(MOORE_QUIRK["lm"]),
            books=lambda wildcards: ["work/data/test.es"] if wildcards.which == "model" else
            ["work/data/dev.es", "work/data/test.es"],
        output:  # model: the test books' (the sweeps); tune/model: dev + test (tune.smk's moore_quirk_tune)
            ini=f"{MOORE_QUIRK_DIR}/{{which}}/moses.ini",
        wildcard_constraints:
            which="model|tune/model",
        params:
            order=LM_MODELS[MOORE_QUIRK["lm"]]["order"],
            tables=lambda wildcards, output: str(Path(output.ini).parent.parent / "tables"),
            model=lambda wildcards, output: str(Path(output.ini).parent),
            dl=MOORE_QUIRK["distortion_limit"],
            tl=MOORE_QUIRK_TABLE_LIMIT,
        log:
            f"{MOORE_QUIRK_DIR}/logs/{{which}}.log",
        shell:
            "(smtbench tm filter --input {input.books} --table {input.pt} --outdir {params.tables} "
            "&& smtbench tm model --phrase-table {params.tables}/phrase-table.gz --lm {input.lm} "
            "--order {params.order} --distortion-limit {params.dl} --table-limit {params.tl} "
            "--outdir {params.model}) > {log} 2>&1"

    rule moore_quirk_bench:
        conda: CONDA_ENV
        input:
            BUILD,
            ini=lambda wildcards: f"{MOORE_QUIRK_DIR}/{MOORE_QUIRK_RUNS[wildcards.rows]}/moses.ini",
            src="work/data/test.es",
            ref="work/data/test.en",
        output:
            f"{OUT}/raw/moore_quirk/{{rows}}.jsonl",
        wildcard_constraints:
            rows="|".join(MOORE_QUIRK_RUNS),
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            thresholds=",".join(map(str, MOORE_QUIRK["thresholds"])),
            limits=",".join(map(str, MOORE_QUIRK["limits"])),
            pharaoh=",".join(map(str, MOORE_QUIRK["pharaoh_beam_limits"])),
            search=MOORE_QUIRK["search"],
            sentences=MOORE_QUIRK["sentences"],
            every=MOORE_QUIRK["every"],
            repeats=MOORE_QUIRK["repeats"],
            protocol=protocol_args("moore_quirk"),  # the grid's repeat protocol with the experiment's own keys
            dl=MOORE_QUIRK["distortion_limit"],
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moore_quirk/bench-{{rows}}.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moore_quirk -f {input.ini} --input {input.src} "
            "--reference {input.ref} --mode paper --distortion-limit {params.dl} --search {params.search} "
            "--thresholds {params.thresholds} --limits {params.limits} --pharaoh-beam-limits {params.pharaoh} "
            "--every {params.every} --sentences {params.sentences} --repeats {params.repeats} {params.protocol} --out {output} 2> {log}"

    if MOORE_QUIRK_MOSES:
        ALL += [f"{OUT}/tables/moore_quirk_moses.md", f"{OUT}/figures/moore_quirk_moses.png"]

        rule moore_quirk_moses_bench:
            conda: CONDA_ENV
            input:
                BUILD,
                ini=f"{ORACLE}/moses.ini",
                src=f"{ORACLE}/dev.es",
                ref=f"{ORACLE}/dev.en",
            output:
                f"{OUT}/raw/moore_quirk/moses.jsonl",
            params:
                expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
                thresholds=",".join(map(str, MOORE_QUIRK_MOSES["thresholds"])),
                limits=",".join(map(str, MOORE_QUIRK_MOSES["limits"])),
                peers=",".join(MOORE_QUIRK_MOSES["peers"]),
                extra=",".join(map(str, MOORE_QUIRK_MOSES["extra_beam_limits"])) or "''",
                live=",".join(MOORE_QUIRK_MOSES["live_peers"]) or "''",
                moses1=MOORE_QUIRK_MOSES["moses1_sentences"],
                sentences=MOORE_QUIRK_MOSES["sentences"],
                repeats=MOORE_QUIRK_MOSES["repeats"],
                protocol=protocol_args("moore_quirk"),
                oracle=lambda wildcards, input: str(Path(input.ini).parent),
            threads: BENCH_THREADS  # the whole machine (see common.smk)
            resources:
                bench=1,
            log:
                f"{OUT}/logs/moore_quirk/moses-bench.log",
            shell:
                # the oracle's ini holds relative paths: run from its folder, as Moses was
                "SMTBENCH_EXPECT_BUILD=$PWD/{params.expect_build} OUTFILE=$PWD/{output} LOGFILE=$PWD/{log} && cd {params.oracle} && "
                "smtbench bench moore_quirk -f moses.ini --input dev.es --reference dev.en --mode moses --variants de+ep "
                "--search hill-climb --thresholds {params.thresholds} --limits {params.limits} --extra-beam-limits {params.extra} --peers {params.peers} "
                "--live-peers {params.live} --moses1-sentences {params.moses1} --sentences {params.sentences} --repeats {params.repeats} {params.protocol} --out $OUTFILE 2> $LOGFILE"

    rule moore_quirk_report:
        conda: CONDA_ENV
        input:
            rows=f"{OUT}/raw/moore_quirk/rows.jsonl",
            moses=f"{OUT}/raw/moore_quirk/moses.jsonl" if MOORE_QUIRK_MOSES else [],
        output:
            shown_all(expand(f"{OUT}/tables/moore_quirk_{{t}}.{{ext}}",
                             t=["ratios", "same_settings", "points", "score_ratios"], ext=["csv", "md"]),
                      "moore_quirk"),
            moses=shown_all([f"{OUT}/tables/moore_quirk_moses.csv", f"{OUT}/tables/moore_quirk_moses.md",
                             f"{OUT}/figures/moore_quirk_moses.png"] if MOORE_QUIRK_MOSES else [], "moore_quirk"),
            fig2=shown(f"{OUT}/figures/moore_quirk_fig2.png", "moore_quirk"),
            fig3=shown(f"{OUT}/figures/moore_quirk_fig3.png", "moore_quirk"),
            score_fig=shown(f"{OUT}/figures/moore_quirk_score.png", "moore_quirk"),
            metrics=f"{OUT}/metrics/moore_quirk.csv",
        params:
            ratios=lambda wildcards, output: output[0].removesuffix(".csv"),
            same=lambda wildcards, output: output[2].removesuffix(".csv"),
            points=lambda wildcards, output: output[4].removesuffix(".csv"),
            score=lambda wildcards, output: output[6].removesuffix(".csv"),
            moses=(f"--moses-rows {OUT}/raw/moore_quirk/moses.jsonl --moses-table {OUT}/tables/moore_quirk_moses "
                   f"--moses-figure {OUT}/figures/moore_quirk_moses.png --oracle {ORACLE}") if MOORE_QUIRK_MOSES else "",
        log:
            f"{OUT}/logs/moore_quirk/report.log",
        shell:
            "smtbench report moore_quirk --rows {input.rows} --ratios {params.ratios} --same-settings {params.same} "
            "--points {params.points} --score-ratios {params.score} --fig2 {output.fig2} --fig3 {output.fig3} --score-figure {output.score_fig} {params.moses} --metrics {output.metrics} 2> {log}"

    if MOORE_QUIRK_WEIGHTS:
        rule moore_quirk_weights_report:
            """The sweep on tuned weights: the ratio, same-settings, points and score tables and Figs 2-3 again."""
            conda: CONDA_ENV
            input:
                rows=f"{OUT}/raw/moore_quirk/rows-{{weights}}.jsonl",
                iterations=f"{OUT}/raw/moore_quirk/tune-{{weights}}.iterations.jsonl",
            output:
                shown_all([f"{OUT}/tables/moore_quirk_{t}_{{weights}}.{ext}"
                           for t in ("ratios", "same_settings", "points", "score_ratios") for ext in ("csv", "md")],
                          "moore_quirk"),
                fig2=shown(f"{OUT}/figures/moore_quirk_fig2_{{weights}}.png", "moore_quirk"),
                fig3=shown(f"{OUT}/figures/moore_quirk_fig3_{{weights}}.png", "moore_quirk"),
                score_fig=shown(f"{OUT}/figures/moore_quirk_score_{{weights}}.png", "moore_quirk"),
            wildcard_constraints:
                weights="|".join(MOORE_QUIRK_WEIGHTS),
            params:
                ratios=lambda wildcards, output: output[0].removesuffix(".csv"),
                same=lambda wildcards, output: output[2].removesuffix(".csv"),
                points=lambda wildcards, output: output[4].removesuffix(".csv"),
                score=lambda wildcards, output: output[6].removesuffix(".csv"),
            log:
                f"{OUT}/logs/moore_quirk/report-{{weights}}.log",
            shell:
                "smtbench report moore_quirk --rows {input.rows} --tuning {input.iterations} --ratios {params.ratios} "
                "--same-settings {params.same} --points {params.points} --score-ratios {params.score} "
                "--fig2 {output.fig2} --fig3 {output.fig3} --score-figure {output.score_fig} 2> {log}"

if MOORE_QUIRK_WEIGHTS:
    # The paper-faithful model tuned on the dev books with the tune block's settings (tune.smk's TUNE_SHELL loop):
    # its tables filtered to dev + test (moore_quirk_model's tune/model), tuned, and its test model reweighted
    # (moore_quirk_bench's rows-<w>).
    rule moore_quirk_tune:
        """tune_run's loop on the paper-faithful model; resumable from its work directory."""
        conda: CONDA_ENV
        input:
            ini=f"{MOORE_QUIRK_DIR}/tune/model/moses.ini",  # moore_quirk_model
            src="work/data/dev.es",
            ref="work/data/dev.en",
        output:
            ini=f"{MOORE_QUIRK_DIR}/tune/{{optimizer}}/tuned.ini",
            summary=f"{OUT}/raw/moore_quirk/tune-{{optimizer}}.iterations.jsonl",
        wildcard_constraints:
            optimizer="|".join(MOORE_QUIRK_WEIGHTS),
        params:
            workdir=lambda wildcards, output: str(Path(output.ini).parent / "work"),
            seed=TUNE["seed"],
            nbest=TUNE["nbest"],
            factor=TUNE["nbest_factor"],
            iterations=TUNE["max_iterations"],
            sentences=TUNE["sentences"],
            decoder=TUNE_DECODER,
        threads: 1
        log:
            f"{MOORE_QUIRK_DIR}/logs/tune-{{optimizer}}.log",
        shell:
            TUNE_SHELL

    rule moore_quirk_tune_apply:
        conda: CONDA_ENV
        input:
            ini=f"{MOORE_QUIRK_DIR}/model/moses.ini",
            weights=f"{MOORE_QUIRK_DIR}/tune/{{optimizer}}/tuned.ini",
        output:
            ini=f"{MOORE_QUIRK_DIR}/model-{{optimizer}}/moses.ini",
        wildcard_constraints:
            optimizer="|".join(MOORE_QUIRK_WEIGHTS),
        log:
            f"{MOORE_QUIRK_DIR}/logs/model-{{optimizer}}.log",
        shell:
            "smtbench tm reweight -f {input.ini} --weights {input.weights} --out {output.ini} > {log} 2>&1"
