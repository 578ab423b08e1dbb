# smtbench: one command regenerates every table and figure. The grid (what is run) is a config file,
# config/<grid>.yaml; the executor (where) is a profile under workflow/profiles/, named when used (this Snakefile sits
# at the checkout's root, so Snakemake lays no workflow profile over any run):
#   snakemake --cores 2                                  the default grid here (config/default.yaml), into results/
#   snakemake --profile workflow/profiles/default        the same, with this machine's settings (one timing job at
#                                                        a time, failed jobs' logs shown); `make reproduce`
#   snakemake --profile workflow/profiles/smoke          (CI: minutes, writes build/smoke/, checks regressions)
#   snakemake --profile workflow/profiles/paper          (a big server: the papers' grids)
#   snakemake --profile workflow/profiles/slurm          (the paper grid on a SLURM cluster)
#   snakemake -s workflow/report.smk --report results/report.html   (one HTML page: every table and figure of
#                                                results/, grouped by paper, with captions)
# Any grid runs on any executor: `--configfile config/<grid>.yaml` beside the executor's profile. The rules, the
# config schema, the conda environment and the profiles are under workflow/ (the snakemake-workflows template's
# layout). Every rule calls the `smtbench` CLI with shell:; timing rules hold the global `bench` resource (1) and
# the whole machine (BENCH_THREADS).
import shlex
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("8.0")


# The grid: one config file per grid (config/smoke.yaml, config/default.yaml, config/paper.yaml), named by the
# profile (`configfile:`) or by `--configfile`; the default grid when none is given. The executor is the profile's.
if "grid" not in config:

    configfile: "config/default.yaml"


# A new experiment (CONTRIBUTING: Add an experiment) has no block in the schema: its config block is checked against
# its declaration (VERBS in experiments/<name>.py) and given its declared defaults instead (experiments/frame.py).
from smtbench.experiments import frame as _frame

_NEW_EXPERIMENTS = _frame.unlisted(str(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"))
_new_blocks = _frame.config_blocks(config, str(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"))
validate(config, "workflow/schemas/config.schema.yaml")  # relative to this file; fills in every default
config.update(_new_blocks)

GRID_NAME = config["grid"]
GRID = config  # this grid's sweeps
OUT = config["outdir"]  # `--config outdir=DIR`: the same grid into another folder (slurm-smoke)
# The software of every rule: one conda environment file for all of them (the package is a cffi build of this
# checkout), used only with `--sdm conda`; by default rules run in the environment Snakemake runs in (`make` sets
# up .venv). An absolute path, so that rules of every included file name the same file.
CONDA_ENV = str(Path(workflow.basedir) / "workflow" / "envs" / "smtbench.yaml")
ALL = []  # every rule file appends its final tables and figures here
METRICS = []  # ...and its regression metrics CSV (experiment,key,metric,value,kind) here


rule all:
    conda: CONDA_ENV
    input:
        lambda wildcards: ALL + [f"{OUT}/README.md"],


include: "workflow/rules/common.smk"
include: "workflow/rules/build.smk"


# Explicit includes, producers before consumers (a rule file may use the paths and rules of those above it).
# A new experiment's rule file needs no line here (CONTRIBUTING: Add an experiment; the loop below).
include: "workflow/rules/data.smk"
include: "workflow/rules/lm_models.smk"
include: "workflow/rules/tm_train.smk"
include: "workflow/rules/mokry_hash.smk"
include: "workflow/rules/mokry_lm.smk"
include: "workflow/rules/glm_btree.smk"
include: "workflow/rules/mediani_scoring.smk"
include: "workflow/rules/moses_decode.smk"
include: "workflow/rules/moses_training.smk"
include: "workflow/rules/decode_shards.smk"
include: "workflow/rules/mokry_decoder.smk"
include: "workflow/rules/moses2_search.smk"
include: "workflow/rules/moses2_scaling.smk"
include: "workflow/rules/moses2_moses1.smk"
include: "workflow/rules/tune.smk"  # before moore_quirk.smk, whose tuning rules run tune's loop with tune's settings
include: "workflow/rules/moore_quirk.smk"
include: "workflow/rules/history.smk"
include: "workflow/rules/counts.smk"
# ...and a new experiment's rule file with no line here: every experiment the schema does not list, in name order
for _name in _NEW_EXPERIMENTS:

    include: f"workflow/rules/{_name}.smk"


# CI regression check (profiles with a `regression` section, i.e. smoke): correctness metrics must
# equal the committed baseline; speed-up drift beyond the tolerance is reported and plotted.
if "regression" in GRID:
    ALL.append(f"{OUT}/regression/regression.md")

    rule regression:
        conda: CONDA_ENV
        input:
            lambda wildcards: METRICS,
        output:
            f"{OUT}/regression/regression.md",
        params:
            baseline=GRID["regression"]["baseline"],
            tol=GRID["regression"]["speedup_tolerance"],
            outdir=lambda wildcards, output: str(Path(output[0]).parent),
            not_run=lambda wildcards: " ".join(shlex.quote(x) for x in NOT_RUN),  # (their baseline rows: not run)
        log:
            f"{OUT}/logs/regression.log",
        shell:
            "smtbench report regress --metrics {input} --baseline {params.baseline} "
            "--tolerance {params.tol} --outdir {params.outdir} --not-run {params.not_run} 2> {log}"


# Cluster executors: every timing job (resource `bench`) asks SLURM for a node to itself, so that no two
# measurements, nor anything else, share a machine (ignored by local runs; a profile's set-resources overrides it).
for _rule in workflow.rules:
    if "bench" in _rule.resources and "slurm_extra" not in _rule.resources:
        _rule.resources["slurm_extra"] = "--exclusive"


# Every rule's Snakemake benchmark record, {OUT}/benchmarks/<rule file>/<rule>[/<wildcards>].tsv: the results index
# sums them per experiment ("Cost on this machine": what a reproduction costs here). Set after the rules are defined
# (as Snakemake's parser would for a `benchmark:` directive), so that no rule file needs one of its own.
for _rule in workflow.rules:
    if _rule.benchmark is None and _rule.name != "all":
        _rule.benchmark_modifier = workflow.modifier.path_modifier
        _stem = Path(_rule.snakefile).stem if Path(_rule.snakefile).suffix == ".smk" else "workflow"
        _wildcards = (f"{{{w}}}" for w in sorted(_rule.wildcard_names))
        _rule.benchmark = str(Path(OUT, "benchmarks", _stem, _rule.name, *_wildcards)) + ".tsv"


# The results index comes last: it lists whatever the rule files above produce.
rule results_index:
    conda: CONDA_ENV
    input:
        lambda wildcards: ALL,
    output:
        f"{OUT}/README.md",
    params:
        outdir=lambda wildcards, output: str(Path(output[0]).parent),
        profile=GRID_NAME,
        not_run=lambda wildcards: " ".join(shlex.quote(x) for x in NOT_RUN),  # experiments not scheduled, and why
        models=lambda wildcards: " ".join(shlex.quote(x) for x in MODELS),  # the model each decoding experiment ran on
    log:
        f"{OUT}/logs/results_index.log",
    shell:
        "smtbench report index --outdir {params.outdir} --profile {params.profile} --not-run {params.not_run} "
        "--models {params.models} "
        "--out {output} 2> {log}"
