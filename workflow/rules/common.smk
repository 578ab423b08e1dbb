# Shared paths and the helper functions of all the rule files, which hold rules only (as `snakemake --lint` asks).
# The native build and the machine record: build.smk. Every benchmark rule takes BUILD (the machine record) as an
# input, so a profile's flags are what its rows record.
#
# Reproduction integrity: the native build of THIS checkout writes a stamp under build/ (never committed), and the
# machine record depends on it. A fresh clone has no stamp, so the build runs, the machine record is rewritten and
# every measurement (all downstream of BUILD) is redone -- committed results never pass for this machine's. An
# interrupted run keeps its stamp and resumes.

import os
import re

NATIVE_BUILD = f"build/native/{GRID_NAME}/buildinfo.json"
NATIVE_SOURCES = sorted(str(p) for p in Path("csrc").rglob("*.[ch]") if p.parts[1] != "cuda") + ["pylib/smtbench/_build.py"]
MACHINE = f"{OUT}/machine.json"
BUILD = [NATIVE_BUILD, MACHINE]  # the input of every measurement: both, so that a missing stamp reruns them
ALL.append(MACHINE)

# Timing jobs never share a machine: besides the global `bench` resource (1: one timing job at a time), each asks
# for more threads than any machine has, which Snakemake caps at --cores (local profiles) or --max-threads, so
# that no other job (an LM estimation, a table build) runs beside a measurement. Cluster profiles give timing jobs
# whole nodes instead (slurm: --exclusive, and --cpus-per-task = the threads, capped at max-threads).
BENCH_THREADS = 1 << 12

# The shared folder (oracle, peers' source) beside the checkout: config key `shared` (default ../shared), or the
# environment variable SMTBENCH_SHARED (tests point it at an empty folder to play a clone without it). The Moses
# oracle is used only where a rule says so; without it those rules are not defined and NOT_RUN names them (the
# results index lists them), so nothing is skipped silently.
SHARED = os.environ.get("SMTBENCH_SHARED") or config["shared"]
ORACLE = f"{SHARED}/oracles/moses-bible-dev"
HAVE_ORACLE = Path(ORACLE, "moses.ini").exists()
NOT_RUN = []  # "experiment:reason" for every experiment a rule file could not schedule


def needs_oracle(experiment):
    """True when the oracle is here; else records `experiment` in NOT_RUN and returns False."""
    if not HAVE_ORACLE:
        NOT_RUN.append(f"{experiment}:needs the Moses oracle ({ORACLE}), absent")
    return HAVE_ORACLE


# The counts table (issue 42: workflow/rules/counts.smk) the headline reports take their instruction and LL-miss
# columns from, when this grid counts; COUNTS_OPTION: the reports' `--counts` option for a rule's input.counts
COUNTS_TABLE = [f"{OUT}/counts/counts.csv"] if "counts" in GRID and HAVE_ORACLE else []


def counts_option(wildcards, input):
    return f"--counts {input.counts}" if input.counts else ""


# The model of a decoding experiment (its config key `model`: trained = the workflow's own model, which needs nothing
# beside the checkout; oracle = the Moses oracle's). An experiment asking for the oracle where it is absent is never
# switched silently: the profile's `oracle_absent` decides -- `skip` (the schema's default): not run, listed in
# NOT_RUN; `trained`: run on the workflow's own model instead, and MODELS says so -- only for experiments whose rows
# record the model's moses.ini and whose tables' notes name it (fallback=True: the decoding experiments); the others
# (tune, whose rows name only its own work/tune ini) are not run. MODELS ("experiment:what") names the model of every
# model-keyed experiment for the results index.
ORACLE_ABSENT = GRID["oracle_absent"]  # default in the schema
MODELS = []


def experiment_model(experiment, section, trained="the workflow's own model", fallback=True,
                     oracle="the Moses oracle's model, dev books"):
    """'trained' or 'oracle', the model `section['model']` resolves to here; None when it cannot run (NOT_RUN).
    `trained` / `oracle`: what each model is, for the results index."""
    want = section["model"]
    if want == "trained" or HAVE_ORACLE:
        what = trained if want == "trained" else f"{oracle}; {ORACLE}"
        MODELS.append(f"{experiment}:{want} ({what})")
        return want
    if ORACLE_ABSENT == "trained" and fallback:
        MODELS.append(f"{experiment}:trained ({trained}), NOT the configured oracle: {ORACLE} is absent "
                      "(oracle_absent: trained); the rows and tables name the model")
        return "trained"
    needs_oracle(experiment)
    return None


PROTOCOL_FLAGS = {"max_repeats": "--max-repeats", "ci_target": "--ci-target", "time_budget": "--time-budget",
                  "order": "--order", "seed": "--order-seed", "spell_factor": "--spell-factor", "max_retakes": "--max-retakes",
                  "spell_probe_mib": "--spell-probe-mib", "focus": "--focus", "regime_reference": "--regime-reference",
                  "regime_factor": "--regime-factor", "regime_wait": "--regime-wait", "regime_pause": "--regime-pause"}


def protocol_args(experiment):
    """The repeat protocol's options (smtbench.protocol) of an experiment's timing rules: the grid's `protocol:`
    block, with the keys of the experiment's own `protocol:` over it."""
    merged = {**GRID["protocol"], **GRID[experiment]["protocol"]}
    return " ".join(PROTOCOL_FLAGS[k] if v is True else f"{PROTOCOL_FLAGS[k]} {v}"
                    for k, v in sorted(merged.items()) if v is not False)  # a boolean is a flag


def hash_variants(mib):
    """The layout variants of the hash sweep at a table size (config mokry_hash.variants, those of variant_max_mib
    only up to their size, plus kv and split on plain pages up to nohuge_max_mib)."""
    h = GRID["mokry_hash"]
    most = h["variant_max_mib"]  # the schema's default: {} (every variant at every size)
    v = [x for x in h["variants"] if x not in most or int(mib) <= most[x]]
    if int(mib) <= h["nohuge_max_mib"]:
        v += [f"{x}:nohuge" for x in ("kv", "split") if x in v]
    return v


def expected_build(wildcards, input):
    """The native-build stamp a timing rule's benchmark must find loaded: the first file of BUILD, which every
    timing rule takes as its first input (the benchmark compares it with the extension's compiled flags)."""
    return input[0]


def shown(path, paper):
    """A table (.csv) or figure marked for `snakemake --report`, under its paper, with that paper's caption."""
    return report(path, caption=f"../report/{paper}.rst", category=paper)


def shown_all(paths, paper):
    return [shown(p, paper) if p.endswith((".csv", ".png")) else p for p in paths]



# --- lm_models.smk: paths of the LM models and KenLM's binaries of them

def lm_model_path(name):
    return f"work/lm/{name}.arpa.gz"


def lm_text(name):
    m = LM_MODELS[name]
    if "sample_from" in m:
        return f"work/lm/text/synth-{m['sample_from']}-w{m['words']}-s{m['seed']}.txt"
    return LM_TRAIN


def kenlm_binaries(name):
    """KenLM's own probing and trie binaries of work/lm/{name}.arpa.gz (the C++ peers of the LM tables)."""
    return {kind: f"work/lm/kenlm/{name}.{kind}" for kind in ("probing", "trie")}


# --- tm_train.smk

def _tm_partial_counts(wc):
    parts = checkpoints.tm_partition.get(k=wc.k).output[0]
    return [f"{TM}/dist{wc.k}/part{i}.counts.gz" for i in range(int(wc.k))]


# --- mokry_lm.smk

def _mokry_lm_models():
    if "models" in MOKRY_LM:
        return list(MOKRY_LM["models"])
    return [m["name"] for m in GRID["lm_models"]]


def _mokry_lm_peers(wildcards):
    return kenlm_binaries(wildcards.name) if MOKRY_LM["kenlm_cpp"] else {}


# --- glm_btree.smk

def _glm_order_arg():
    out = []
    for m in GLM_ORDERS:
        n = re.search(r"\.o(\d+)$", m)
        if not n:
            raise ValueError(f"glm_btree.order_models: cannot read the order of {m} (expected a name ending .oN)")
        out.append(f"{n.group(1)}={m}")
    return ",".join(out)


def _glm_sweeps(wildcards):
    """The main model gets the node-size and batch sweeps; the others only the Table 3 points."""
    if wildcards.name != GLM_MAIN:
        return ""
    ks = ",".join(map(str, GLM_BTREE["node_sizes"]))
    bs = ",".join(map(str, GLM_BTREE["batch_sizes"]))
    return (f"--node-sizes {ks} " if ks else "") + (f"--batch-sizes {bs}" if bs else "")


def _glm_peers(wildcards):
    return kenlm_binaries(wildcards.name) if GLM_BTREE["kenlm_cpp"] else {}


# --- mokry_decoder.smk

def _mokry_decoder_own(lm):
    """True for a rows file of a model's own LM: trained.jsonl, oracle.jsonl, trained-<weights>.jsonl."""
    return lm in ("oracle", "trained") or lm.startswith("trained-")


def _mokry_decoder_lm(wildcards):
    """The LM replacing the model's (timing only); none for the model's own (_mokry_decoder_own)."""
    return [] if _mokry_decoder_own(wildcards.lm) else [lm_model_path(wildcards.lm)]


def _mokry_decoder_model(wildcards):
    """(ini, source, reference) of a rows file: oracle.jsonl is the oracle's model (its own row where the
    experiment's model is trained), trained-<weights>.jsonl the trained model under those weights (weight_runs),
    every other one MOKRY_DECODER_MODEL's (mokry_decoder.smk)."""
    lm = wildcards.lm
    return decoding_model(lm if lm == "oracle" or lm.startswith("trained-") else MOKRY_DECODER_MODEL)


# --- moses_decode.smk: the decoding tables' model and search settings

def decoding_model(model):
    """(ini, source, reference) of the model the decoding tables run on: `oracle`, `trained` (train-model.perl's
    default weights), or `trained-<optimizer>`: the trained model with tune.smk's tuned weights (tune_apply)."""
    if model == "oracle":
        return f"{ORACLE}/moses.ini", f"{ORACLE}/dev.es", f"{ORACLE}/dev.en"
    if model.startswith("trained-") and model != "trained-default":
        return f"{TM}/model-test-{model.removeprefix('trained-')}/moses.ini", "work/data/test.es", "work/data/test.en"
    return f"{TM}/model-test/moses.ini", "work/data/test.es", "work/data/test.en"


def weight_runs(experiment, model):
    """The extra runs of an experiment's `weights:` list (issue 27: the decoding papers on tuned weights), as model
    names for decoding_model: `trained-default` (train-model.perl's weights; left out where the experiment's own
    model is already the trained one) and `trained-<optimizer>` (the weights tune.smk tunes on the same tables).
    Tuned weights need tune in the grid with that optimizer and tune.model: trained (weights tuned on other tables
    would load without complaint and mean nothing)."""
    runs = []
    for w in GRID[experiment]["weights"]:  # the schema's default: []
        if w != "default":
            tune = GRID.get("tune")
            if not tune or w not in tune["optimizers"] or tune["model"] != "trained":
                raise ValueError(f"{experiment}.weights: {w} needs the tune block with {w} in tune.optimizers and "
                                 "tune.model: trained (the tables it tunes are the trained model's)")
        elif model == "trained":
            continue  # the experiment's own run
        runs.append(f"trained-{w}")
    return runs


def decoding_search_args(wildcards):
    stack, pop, _ = MOSES_DECODE_SEARCH[wildcards.search]
    return f"--search {wildcards.search} -s {stack}" + (f" --pop-limit {pop}" if pop else "")
