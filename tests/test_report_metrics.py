"""Regression metrics: the per-experiment writers (each report module's regression_metrics) on small synthetic
rows, the `report ... --metrics` options, and that every experiment of the smoke profile feeds `rule regression`."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ORACLE

from smtbench.cli import main
from smtbench.report import glm_btree, mediani_scoring, metrics, mokry_hash, mokry_lm
from smtbench.report.regress import compare, read_metrics


def _frame(recs) -> pd.DataFrame:
    return pd.DataFrame(recs, columns=metrics.COLUMNS)


def _get(df: pd.DataFrame, key: str, metric: str) -> tuple[str, str]:
    r = df[(df.key == key) & (df.metric == metric)]
    assert len(r) == 1, (key, metric, df)
    return r.value.iloc[0], r.kind.iloc[0]


def lm_rows(checksum_b="-0x1.8p+4") -> pd.DataFrame:
    rows = []
    for model, mb in (("a", 1e6), ("b", 2e6)):
        for rep in range(2):
            rows.append(dict(model=model, backend="sequential", queue_size=None, ns_per_query=100.0 + rep,
                             checksum="-0x1.8p+4", model_bytes=mb, order=3, ngrams=10, queries=50,
                             synthetic=False))
            for q, ns in ((1, 90.0), (4, 50.0 + rep)):
                rows.append(dict(model=model, backend="automaton", queue_size=q, ns_per_query=ns,
                                 checksum=checksum_b if model == "b" and q == 4 else "-0x1.8p+4", model_bytes=mb,
                                 order=3, ngrams=10, queries=50, synthetic=False))
            rows.append(dict(model=model, backend="kenlm-module", queue_size=None, ns_per_query=300.0,
                             checksum="-0x1.7ffp+4", model_bytes=mb, order=3, ngrams=10, queries=50,
                             synthetic=False))
    return pd.DataFrame(rows)


def test_mokry_lm_metrics():
    df = _frame(mokry_lm.regression_metrics(lm_rows()))
    assert _get(df, "model=a", "checksum") == ("-0x1.8p+4", "exact")  # ours only, not the kenlm module's
    assert _get(df, "model=a", "speedup") == ("2.0000", "ratio")       # min 100 / min 50
    assert _get(df, "model=a", "sequential_vs_kenlm") == ("3.0000", "ratio")
    # points that disagree show up as a changed exact value (the benchmark itself would also fail)
    bad = _frame(mokry_lm.regression_metrics(lm_rows(checksum_b="-0x1.9p+4")))
    assert _get(bad, "model=b", "checksum")[0] == "-0x1.8p+4,-0x1.9p+4"


def btree_rows() -> pd.DataFrame:
    rows = []
    base = dict(model_bytes=1000, order=3, ngrams=10, synthetic=False, queries=100, gpu=None)
    for rep in range(2):
        for t, q_bt, q_pr in ((1, 100.0, 200.0), (2, 150.0 + rep, 300.0)):
            rows.append(dict(base, model="m", sweep="table", backend="btree", path="cpu", node_size=31, threads=t,
                             batch=100, qps=q_bt, checksum="0x1p+0"))
            rows.append(dict(base, model="m", sweep="table", backend="probing", path="sequential", node_size=None,
                             threads=t, batch=100, qps=q_pr, checksum="0x1.1p+0"))
        rows.append(dict(base, model="m", sweep="node_size", backend="btree", path="cpu", node_size=5, threads=1,
                         batch=100, qps=90.0, checksum="0x1p+0"))
        rows.append(dict(base, model="m", sweep="table", backend="kenlm-module", path="Model.score",
                         node_size=None, threads=1, batch=100, qps=50.0, checksum="0x1.2p+0"))
    # a GPU point (none lent here; with a GPU its checksum must still not become a metric)
    for path in ("gpu-kernel", "gpu-with-copies"):
        rows.append(dict(base, model="m", sweep="table", backend="btree-cuda", path=path, node_size=31,
                         threads=None, batch=100, qps=None, checksum="0x1.3p+0", gpu="no GPU lent: test"))
    rows.append(dict(base, model="m", sweep="stats", backend="btree", path="cpu", node_size=31, threads=None,
                     batch=None, qps=None, checksum=None))
    return pd.DataFrame(rows)


def test_glm_btree_metrics():
    df = _frame(glm_btree.regression_metrics(btree_rows()))
    assert _get(df, "model=m", "btree_checksum") == ("0x1p+0", "exact")
    assert _get(df, "model=m", "probing_checksum") == ("0x1.1p+0", "exact")
    assert _get(df, "model=m", "btree_vs_probing") == ("0.5000", "ratio")
    assert _get(df, "model=m", "btree_thread_scaling") == ("1.5100", "ratio")  # best of repeats: 151 / 100
    assert _get(df, "model=m", "probing_thread_scaling") == ("1.5000", "ratio")
    assert not df.value.str.contains("0x1.3p").any()  # nothing from GPU rows
    assert not df.key.str.contains("t=").any()        # keys carry no machine-dependent thread count


def mediani_rows() -> pd.DataFrame:
    rows = []
    for frac, lines, pairs, md5 in ((0.5, 1000, 300, "aa"), (1.0, 2000, 500, "bb")):
        for t, s in ((1, 10.0), (2, 6.0)):
            rows.append(dict(system="ours", fraction=frac, threads=t, memory="16M", partitions=0, lines=lines,
                             seconds=s * frac, peak_rss_bytes=1 << 20, pairs=pairs, table_md5=md5))
        rows.append(dict(system="sort", fraction=frac, threads=1, memory="256M", partitions=0, lines=lines,
                         seconds=30.0 * frac, peak_rss_bytes=1 << 20))
    rows.append(dict(system="distributed", fraction=1.0, threads=2, memory="16M", partitions=2, lines=2000,
                     seconds=20.0, peak_rss_bytes=1 << 20, table_md5="bb", s_critical_path=15.0))
    return pd.DataFrame(rows)


def test_mediani_metrics():
    df = _frame(mediani_scoring.regression_metrics(mediani_rows()))
    assert _get(df, "fraction=0.5", "distinct_tables") == ("1", "exact")
    assert _get(df, "fraction=1", "distinct_tables") == ("1", "exact")  # ours (1 and 2 threads) and distributed
    # the alignment (eflomal, unseeded) changes between fresh runs: no digest or count of it is exact
    assert not set(df.metric) & {"table_md5", "lines", "pairs"}
    assert _get(df, "fraction=1", "thread_speedup") == ("1.6667", "ratio")
    assert _get(df, "fraction=1", "speedup_vs_sort") == ("5.0000", "ratio")
    # k = 2 partitions timed one after another: the critical path is a projection, no ratio (issue 40)
    assert df[(df.key == "distributed,k=2") & (df.metric == "speedup_vs_sort")].empty
    bad = mediani_rows()
    bad.loc[(bad.system == "ours") & (bad.threads == 2) & (bad.fraction == 1.0), "table_md5"] = "cc"
    assert _get(_frame(mediani_scoring.regression_metrics(bad)), "fraction=1", "distinct_tables")[0] == "2"
    # rows written before the digest was recorded still give the ratios
    old = _frame(mediani_scoring.regression_metrics(mediani_rows().drop(columns="table_md5")))
    assert set(old.kind) == {"ratio"}


def hash_rows() -> pd.DataFrame:
    rows = []
    for mode, ck in (("miss", "7"), ("hit", "11"), ("line", "99")):
        for t in (1, 2):
            for q, ns in ((0, 100.0), (4, 40.0 * t), (8, 50.0)) if mode != "line" else ((0, 10.0),):
                rows.append(dict(table_mib=1, mode=mode, threads=t, queue_size=q, ns_per_lookup=ns,
                                 machine_load1=0.5, checksum=ck))
    return pd.DataFrame(rows)


def test_mokry_hash_metrics():
    df = _frame(mokry_hash.regression_metrics(hash_rows()))
    assert _get(df, "mib=1,miss", "checksum") == ("7", "exact")
    assert _get(df, "mib=1,hit", "checksum") == ("11", "exact")
    assert "mib=1,line" not in set(df.key)  # random line reads: not deterministic across runs
    assert _get(df, "mib=1,miss,t=1", "speedup") == ("2.5000", "ratio")
    assert _get(df, "mib=1,hit,t=2", "speedup") == ("2.0000", "ratio")


def test_lm_metrics_cli(tmp_path):
    models = pd.DataFrame([
        dict(model="x.o2", synthetic=False, order=2, training_tokens=100, ngrams=30, ngrams_1=10, ngrams_2=20,
             ngrams_3=None, estimate_seconds=0.1),
        dict(model="x.o3", synthetic=False, order=3, training_tokens=100, ngrams=60, ngrams_1=10, ngrams_2=20,
             ngrams_3=30, estimate_seconds=0.2)])
    parity = pd.DataFrame([dict(order=3, ppl_ours=65.234560731224, ppl_lmplz=65.23456122478461, ngrams_ours=60,
                                ngrams_lmplz=60, ngrams_only_one_side=0, seconds_ours=0.5, seconds_lmplz=3.0)])
    models.to_csv(tmp_path / "models.csv", index=False)
    parity.to_csv(tmp_path / "parity.csv", index=False)
    a, b = tmp_path / "lm_models.csv", tmp_path / "lm_estimator_parity.csv"
    assert main(["report", "lm-metrics", "--models-table", str(tmp_path / "models.csv"), "--metrics", str(a)]) == 0
    assert main(["report", "lm-metrics", "--parity-table", str(tmp_path / "parity.csv"), "--metrics", str(b)]) == 0
    df = read_metrics([a, b])
    assert set(df.kind) == {"exact"}  # no timings from these tables
    assert _get(df, "model=x.o3", "ngrams_3") == ("30", "exact")
    assert "ngrams_3" not in set(df[df.key == "model=x.o2"].metric)
    assert _get(df, "order=3", "ppl_ours") == ("65.234561", "exact")
    assert "ppl_lmplz" not in set(df.metric)
    # the files compare clean against themselves, and a changed exact value fails
    assert compare(df, df, 0.5).failures == 0
    changed = df.copy()
    changed.loc[changed.metric == "ppl_ours", "value"] = "65.234562"
    assert compare(changed, df, 0.5).failures == 1


def test_report_options_write_metrics(tmp_path):
    rows = tmp_path / "lm.jsonl"
    lm_rows().assign(experiment="mokry_lm").to_json(rows, orient="records", lines=True)
    out = tmp_path / "mokry_lm.csv"
    assert main(["report", "mokry-lm", "--rows", str(rows), "--metrics", str(out)]) == 0
    df = read_metrics([out])
    assert set(df.experiment) == {"mokry_lm"} and set(df.kind) == {"exact", "ratio"}
    with pytest.raises(ValueError):
        metrics.write([("e", "k", "m", "1", "fuzzy")], tmp_path / "bad.csv")


# --- the workflow: every experiment of the smoke profile contributes a metrics file ----------------------

# profile key -> the metrics experiments it must produce
EXPERIMENT_METRICS = {
    "mokry_hash": ["mokry_hash"],
    "mokry_lm": ["mokry_lm"],
    "glm_btree": ["glm_btree"],
    "mediani_scoring": ["mediani_scoring", "mediani_distributed"],
    "decode_shards": ["decode_shards"],
    "moses_decode": ["moses_decode"],
    "mokry_decoder": ["mokry_decoder"],
    "moses2_search": ["moses2_search"],
    "moses2_scaling": ["moses2_scaling"],
    "moses2_moses1": ["moses2_moses1"],
    "moore_quirk": ["moore_quirk"],
    "lm_models": ["lm_models"],  # + lm_estimator_parity where lmplz is built (the Snakefile adds it then)
}
NOT_EXPERIMENTS = {"grid", "outdir", "native", "regression", "protocol",
                   "counts"}  # counts: its own gate and baseline (workflow/baselines/counts.csv, smtbench count --check)


def test_every_smoke_experiment_has_metrics(root):
    smoke = yaml.safe_load((root / "config/smoke.yaml").read_text())
    unknown = set(smoke) - set(EXPERIMENT_METRICS) - NOT_EXPERIMENTS
    assert not unknown, f"smoke profile experiments without an entry here (and maybe without metrics): {unknown}"
    want = {e for k in smoke if k in EXPERIMENT_METRICS for e in EXPERIMENT_METRICS[k]}
    if not ORACLE.is_dir() and smoke.get("oracle_absent", "skip") == "skip":
        # a clone without ../shared: the smoke grid's oracle-model experiments are not run (listed as not run)
        want -= {e for k, v in smoke.items() if isinstance(v, dict) and v.get("model") == "oracle"
                 for e in EXPERIMENT_METRICS.get(k, ())}
    if (root / "build/lmplz/bin/lmplz").exists():
        want.add("lm_estimator_parity")
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "-n", "--forceall", "--nolock",
                        "regression"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    m = re.search(r"smtbench report regress --metrics (.*?) --baseline", r.stdout)
    assert m, r.stdout[-3000:]
    got = {Path(p).stem for p in m.group(1).split()}
    assert want <= got, f"experiments without a metrics file in rule regression: {sorted(want - got)}"


def test_rule_files_that_publish_results_write_metrics(root):
    """A rule file that adds tables or figures to ALL also appends its metrics to METRICS."""
    for smk in sorted((root / "workflow/rules").glob("*.smk")):
        if smk.name == "history.smk":  # draws the other experiments' metrics over commits; measures nothing itself
            continue
        text = smk.read_text()
        if re.search(r"^\s*ALL \+= .*(tables|figures)/", text, re.M):
            assert "METRICS.append(" in text, f"{smk.name} publishes results but no regression metrics"


def test_committed_baseline_covers_every_experiment(root):
    base = read_metrics([root / "workflow/baselines/smoke.csv"])
    want = {e for es in EXPERIMENT_METRICS.values() for e in es} | {"lm_estimator_parity"}
    assert want <= set(base.experiment)
    assert set(base.kind) <= {"exact", "ratio", "ci"}
    assert not base.duplicated(["experiment", "key", "metric"]).any()


def test_regress_names_experiments_not_run_here():
    """An experiment the workflow did not schedule (NOT_RUN: no oracle beside this clone) reads 'not run' in the
    regression table and fails nothing; one that was scheduled and wrote nothing is still MISSING."""
    base = pd.DataFrame({"experiment": ["a", "b"], "key": ["k", "k"], "metric": ["bleu", "bleu"],
                         "value": ["1", "2"], "kind": ["exact", "exact"]})
    cur = base.iloc[:0]
    v = compare(cur, base, 0.5, {"a": "needs the Moses oracle"})
    assert v.failures == 1
    assert v.table.set_index("experiment").status.to_dict() == {"a": "not run: needs the Moses oracle", "b": "MISSING"}
