# n-gram LMs for the LM experiments: work/lm/{name}.arpa.gz (+ {name}.arpa.gz.json: counts, discounts, and
# "synthetic": true for models estimated on sampled text).
#   - corpus models (no `sample_from`): estimated on work/data/train.en (the data rule's output);
#   - synthetic models (`sample_from: <model>`, `words`, `seed`): `smtbench lm sample` draws `words` words from
#     that model into work/lm/text/synth-<model>-w<words>-s<seed>.txt (+ .json label), then they are estimated
#     on it. Their names must start with `synth-` so that they read as synthetic wherever they appear.
# Also: {OUT}/tables/lm_estimator_parity.{csv,md} (ours vs KenLM lmplz on the corpus, held-out perplexity by the
# kenlm module), built when lmplz is there (`bash tools/build_lmplz.sh`, or `snakemake build/lmplz/bin/lmplz`).
import re as _re

LM_MODELS = {m["name"]: m for m in GRID["lm_models"]}
LM_TRAIN = "work/data/train.en"
LM_HELDOUT = "work/data/test.en"
LMPLZ = "build/lmplz/bin/lmplz"

for _m in LM_MODELS.values():
    if "sample_from" in _m:
        if not _m["name"].startswith("synth-"):
            raise ValueError(f"lm_models: {_m['name']} is sampled from {_m['sample_from']}: name it synth-...")
        if _m["sample_from"] not in LM_MODELS:
            raise ValueError(f"lm_models: {_m['name']} samples from unknown model {_m['sample_from']}")
    elif _m["name"].startswith("synth-"):
        raise ValueError(f"lm_models: {_m['name']} is estimated on the corpus: do not call it synth-...")


LM_ALL = [lm_model_path(n) for n in LM_MODELS]
if LM_MODELS:
    ALL += [f"{OUT}/tables/lm_models.md"]
    METRICS.append(f"{OUT}/metrics/lm_models.csv")
if LM_MODELS and Path(LMPLZ).exists():
    ALL += [f"{OUT}/tables/lm_estimator_parity.md"]
    METRICS.append(f"{OUT}/metrics/lm_estimator_parity.csv")


wildcard_constraints:
    lmname="|".join(_re.escape(n) for n in LM_MODELS) or "NO_LM_MODELS",
    lmsrc="|".join(_re.escape(n) for n in LM_MODELS) or "NO_LM_MODELS",


rule lm_sample_text:
    """SYNTHETIC text drawn from a model (seeded); the .json beside it labels it."""
    conda: CONDA_ENV
    input:
        "work/lm/{lmsrc}.arpa.gz",
    output:
        text="work/lm/text/synth-{lmsrc}-w{words,[0-9]+}-s{seed,[0-9]+}.txt",
        meta="work/lm/text/synth-{lmsrc}-w{words,[0-9]+}-s{seed,[0-9]+}.txt.json",
    log:
        "work/logs/lm/sample-{lmsrc}-w{words}-s{seed}.log",
    shell:
        "smtbench lm sample --arpa {input} --words {wildcards.words} --seed {wildcards.seed} "
        "--out {output.text} > {log}.json 2> {log}"


rule lm_estimate_model:
    """Interpolated modified Kneser-Ney (lmplz's rules). Synthetic text has no rare unigrams, so its models use
    lmplz's discount fallback where counts-of-counts give no valid discounts (recorded in the .json)."""
    conda: CONDA_ENV
    input:
        text=lambda wc: lm_text(wc.lmname),
    output:
        arpa="work/lm/{lmname}.arpa.gz",
        meta="work/lm/{lmname}.arpa.gz.json",
    params:
        order=lambda wc: LM_MODELS[wc.lmname]["order"],
        memory=lambda wc: LM_MODELS[wc.lmname]["memory"],
        fallback=lambda wc: "--discount-fallback" if "sample_from" in LM_MODELS[wc.lmname] else "",
    resources:
        mem_mb=lambda wc: 6144 if "sample_from" in LM_MODELS[wc.lmname] and LM_MODELS[wc.lmname]["words"] > 20_000_000 else 2048,
    log:
        "work/logs/lm/estimate-{lmname}.log",
    shell:
        "smtbench guard --what 'estimating {wildcards.lmname}' -- "
        "smtbench lm estimate -o {params.order} --text {input.text} --arpa {output.arpa} "
        "--memory {params.memory} {params.fallback} > /dev/null 2> {log}"


rule lm_models_table:
    """One row per model: order, n-gram counts, synthetic or not, source."""
    conda: CONDA_ENV
    input:
        [f"work/lm/{n}.arpa.gz.json" for n in LM_MODELS],
    output:
        md=f"{OUT}/tables/lm_models.md",
        csv=shown(f"{OUT}/tables/lm_models.csv", "lm_models"),
    log:
        f"{OUT}/logs/lm_models_table.log",
    shell:
        "smtbench lm models-table --meta {input} --csv {output.csv} --md {output.md} 2> {log}"


KENLM_BIN = "build/lmplz/bin"


rule build_lmplz:
    """KenLM's lmplz, build_binary, query, kenlm_benchmark and probing_hash_table_benchmark from the kenlm 0.3.0
    sdist (reference and live peers; nothing of it is committed)."""
    conda: CONDA_ENV
    input:
        "tools/kenlm-probing-benchmark.patch",  # a new revision of the patch rebuilds the hash benchmark
    output:
        LMPLZ,
        f"{KENLM_BIN}/build_binary",
        f"{KENLM_BIN}/kenlm_benchmark",
        f"{KENLM_BIN}/probing_hash_table_benchmark",  # patched (tools/kenlm-probing-benchmark.patch): mokry_hash's peer
    log:
        "work/logs/build_lmplz.log",
    shell:
        "bash tools/build_lmplz.sh > /dev/null 2> {log}"


rule kenlm_build_binary:
    """KenLM's build_binary (probing: KenLM's default, multiplier 1.5; trie) of one of our ARPA models."""
    conda: CONDA_ENV
    input:
        arpa="work/lm/{lmname}.arpa.gz",
        program=f"{KENLM_BIN}/build_binary",
    output:
        "work/lm/kenlm/{lmname}.{kind,probing|trie}",
    log:
        "work/logs/lm/kenlm-{lmname}.{kind}.log",
    shell:
        "{input.program} {wildcards.kind} {input.arpa} {output} > {log} 2>&1"


rule lm_estimator_parity:
    """Ours vs lmplz: held-out perplexity (kenlm module) and every n-gram, orders 3 and 5, on the corpus."""
    conda: CONDA_ENV
    input:
        train=LM_TRAIN,
        heldout=LM_HELDOUT,
        lmplz=LMPLZ,
    output:
        csv=shown(f"{OUT}/tables/lm_estimator_parity.csv", "lm_models"),
        md=f"{OUT}/tables/lm_estimator_parity.md",
    log:
        f"{OUT}/logs/lm_estimator_parity.log",
    shell:
        "smtbench lm estimate-parity -q --train {input.train} --heldout {input.heldout} --orders 3,5 "
        "--lmplz {input.lmplz} --workdir work --csv {output.csv} --md {output.md} > {log} 2>&1"


rule lm_models_metrics:
    """Regression metrics (exact): training tokens and n-gram counts per model."""
    conda: CONDA_ENV
    input:
        f"{OUT}/tables/lm_models.csv",
    output:
        f"{OUT}/metrics/lm_models.csv",
    log:
        f"{OUT}/logs/lm_models_metrics.log",
    shell:
        "smtbench report lm-metrics --models-table {input} --metrics {output} 2> {log}"


rule lm_estimator_parity_metrics:
    """Regression metrics (exact): n-gram counts of ours and lmplz, and our held-out perplexity (fixed digits)."""
    conda: CONDA_ENV
    input:
        f"{OUT}/tables/lm_estimator_parity.csv",
    output:
        f"{OUT}/metrics/lm_estimator_parity.csv",
    log:
        f"{OUT}/logs/lm_estimator_parity_metrics.log",
    shell:
        "smtbench report lm-metrics --parity-table {input} --metrics {output} 2> {log}"
