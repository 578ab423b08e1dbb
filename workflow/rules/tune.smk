# Weight tuning as Moses' mert-moses.pl does it (issue 27): config `tune.model` oracle = the paper-faithful tables our
# pipeline trains from the oracle's shipped alignment (moses_training.smk's tm_oracle_tables) with the oracle's 5-gram
# LM (needs ../shared; listed as not run without it, whatever the profile's oracle_absent), trained = the workflow's own tables and LM (TRAINED_LM); either
# filtered to the dev and test books; tuned on the dev books by `smtbench tune` (MERT and k-best batch MIRA, our cube pruning for the
# n-best lists), evaluated on the dev and test books beside the untuned train-model.perl weights; our optimisers
# beside Moses' mert/kbmira on the tuning run's n-best lists (needs make moses-test; NOT_BUILT rows otherwise).
TUNE = GRID["tune"] if "tune" in GRID else None  # absent from the grid: not run
# never switched where the oracle is absent (configured oracle, oracle absent): not run
TUNE_WHAT = {"trained": "the workflow's own tables and LM",
             "oracle": "our tables from the oracle's alignment + its 5-gram LM"}
TUNE_MODEL = experiment_model("tune", TUNE, TUNE_WHAT["trained"], fallback=False,
                            oracle=TUNE_WHAT["oracle"]) if TUNE else None
TUNE_DIR = f"work/tune/{TUNE_MODEL}"  # one per model: the rows' ini paths name it
TUNE_ORACLE = TUNE_MODEL == "oracle"
if TUNE_ORACLE:
    TUNE_TABLES, TUNE_LM, TUNE_ORDER = TM_ORACLE, f"{ORACLE}/lm-en5.arpa.xz", 5
elif TUNE_MODEL:
    TUNE_TABLES, TUNE_LM, TUNE_ORDER = TM, lm_model_path(TRAINED_LM), LM_MODELS[TRAINED_LM]["order"]

# mert-moses.pl's loop with the tune block's settings (tune_run; moore_quirk.smk's moore_quirk_tune)
TUNE_SHELL = ("smtbench tune -f {input.ini} --input {input.src} --reference {input.ref} --decoder cube "
              "--optimizer {wildcards.optimizer} --seed {params.seed} --nbest {params.nbest} --nbest-factor {params.factor} "
              "--max-iterations {params.iterations} --sentences {params.sentences} --return-best-dev "
              "--workdir {params.workdir} --out {output.ini} --summary {output.summary} --no-progress "
              "-- {params.decoder} > {log} 2>&1")
TUNE_DECODER = f"--pop-limit {TUNE['pop_limit']} -s {TUNE['stack_size']}" if TUNE else None

if TUNE_MODEL:
    ALL += [f"{OUT}/tables/tune_bleu.md", f"{OUT}/tables/tune_optimizers.md"]
    METRICS.append(f"{OUT}/metrics/tune.csv")

    rule tune_model:
        conda: CONDA_ENV
        input:
            pt=f"{TUNE_TABLES}/phrase-table.gz",
            rt=f"{TUNE_TABLES}/reordering-table.wbe-msd-bidirectional-fe.gz",
            lm=TUNE_LM,
            dev="work/data/dev.es",
            test="work/data/test.es",
        output:
            ini=f"{TUNE_DIR}/model/moses.ini",
        params:
            tables=lambda wildcards, output: str(Path(output.ini).parent.parent / "tables"),
            model=lambda wildcards, output: str(Path(output.ini).parent),
            order=TUNE_ORDER,
        log:
            f"{TUNE_DIR}/logs/model.log",
        shell:
            "(smtbench tm filter --input {input.dev} {input.test} --table {input.pt} {input.rt} --outdir {params.tables} "
            "&& smtbench tm model --phrase-table {params.tables}/phrase-table.gz "
            "--reordering-table {params.tables}/reordering-table.wbe-msd-bidirectional-fe.gz --lm {input.lm} --order {params.order} "
            "--outdir {params.model}) > {log} 2>&1"

    rule tune_run:
        """mert-moses.pl's loop; resumable from its work directory (kept when the rule fails)."""
        conda: CONDA_ENV
        input:
            ini=rules.tune_model.output.ini,
            src="work/data/dev.es",
            ref="work/data/dev.en",
        output:
            ini=f"{TUNE_DIR}/{{optimizer}}/tuned.ini",
            summary=f"{OUT}/raw/tune/{{optimizer}}.iterations.jsonl",
        wildcard_constraints:
            optimizer="mert|mira",
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
            f"{TUNE_DIR}/logs/{{optimizer}}.log",
        shell:
            TUNE_SHELL

    rule tune_eval:
        conda: CONDA_ENV
        input:
            ini=lambda wildcards: (rules.tune_model.output.ini if wildcards.weights == "default"
                                   else f"{TUNE_DIR}/{wildcards.weights}/tuned.ini"),
            src="work/data/{split}.es",
            ref="work/data/{split}.en",
        output:
            f"{OUT}/raw/tune/{{weights}}.{{split}}.json",
        wildcard_constraints:
            weights="default|mert|mira",
            split="dev|test",
        params:
            sentences=lambda wildcards: TUNE["sentences"] if wildcards.split == "dev" else TUNE["test_sentences"],
            decoder=TUNE_DECODER,
        log:
            f"{OUT}/logs/tune/{{weights}}.{{split}}.log",
        shell:
            "smtbench tune-eval -f {input.ini} --input {input.src} --reference {input.ref} --decoder cube "
            "--sentences {params.sentences} --label {wildcards.weights} --out {output} -- {params.decoder} 2> {log}"

    rule tune_peers:
        """Our MERT/MIRA and Moses' mert/kbmira on the MERT run's merged n-best lists."""
        conda: CONDA_ENV
        input:
            ini=f"{TUNE_DIR}/mert/tuned.ini",
        output:
            f"{OUT}/raw/tune/peers.jsonl",
        params:
            workdir=lambda wildcards, input: str(Path(input.ini).parent / "work"),
            seed=TUNE["seed"],
            runs=TUNE["peer_runs"],
        log:
            f"{OUT}/logs/tune/peers.log",
        shell:
            "smtbench tune-peers --workdir {params.workdir} --runs {params.runs} --seed {params.seed} --out {output} "
            "2> {log}"

    rule tune_report:
        conda: CONDA_ENV
        input:
            evals=expand(f"{OUT}/raw/tune/{{weights}}.{{split}}.json", weights=["default", *TUNE["optimizers"]],
                         split=["dev", "test"]),
            iterations=expand(f"{OUT}/raw/tune/{{optimizer}}.iterations.jsonl", optimizer=TUNE["optimizers"]),
            peers=rules.tune_peers.output,
        output:
            shown_all(expand(f"{OUT}/tables/tune_{{t}}.{{ext}}", t=["bleu", "iterations", "optimizers"],
                             ext=["csv", "md"]), "tune"),
            metrics=f"{OUT}/metrics/tune.csv",
        params:
            evals=lambda wildcards, input: " ".join(f"{Path(p).stem.split('.')[1]}={p}" for p in input.evals),
            tables=lambda wildcards, output: str(Path(output.metrics).parent.parent / "tables"),
            model=f"{TUNE_MODEL}: {TUNE_WHAT[TUNE_MODEL]}",
        log:
            f"{OUT}/logs/tune/report.log",
        shell:
            "smtbench report tune --evals {params.evals} --iterations {input.iterations} --peers {input.peers} "
            "--tables {params.tables} --metrics {output.metrics} --model {params.model:q} 2> {log}"

    if TUNE_MODEL == "trained":
        rule tune_apply:
            """The decoding tables' trained model (test books) with the weights tuned on the same tables (the
            `weights:` runs of moses_decode, mokry_decoder, moses2_search: common.smk weight_runs)."""
            conda: CONDA_ENV
            input:
                ini=f"{TM}/model-test/moses.ini",
                weights=f"{TUNE_DIR}/{{optimizer}}/tuned.ini",
            output:
                ini=f"{TM}/model-test-{{optimizer}}/moses.ini",
            wildcard_constraints:
                optimizer="mert|mira",
            log:
                f"{TM}/logs/model-test-{{optimizer}}.log",
            shell:
                "smtbench tm reweight -f {input.ini} --weights {input.weights} --out {output.ini} > {log} 2>&1"
