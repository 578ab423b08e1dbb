"""Issue 5 acceptance (run from the repository root after the tm_extract rule):
    python -m smtbench.tm.acceptance [WORKDIR=work/tm]
Checks: our table equals the pandas oracle on the full corpus (1e-6), 1/2 threads, several budgets,
distributed form; sum_e p(e|f) = 1 per source."""
import sys, time
import numpy as np
from smtbench.tm import score as S
from smtbench.tm.distributed import partition_extract
W = (sys.argv[1].rstrip("/") + "/") if len(sys.argv) > 1 else "work/tm/"
import os
os.makedirs(W + "accept", exist_ok=True)
t = time.time()
oracle = S.score_pandas(W + "extract.gz", W + "lex.f2e", W + "lex.e2f")
print(f"oracle: {len(oracle)} pairs in {time.time()-t:.1f}s", flush=True)
s = oracle.groupby("src")["p_ef"].sum().to_numpy()
print(f"oracle sum_e p(e|f): max |1-sum| = {np.abs(s-1).max():.3g} over {len(s)} sources", flush=True)
for T, mem in [(1, "16M"), (1, "256M"), (2, "64M"), (2, "1G")]:
    from smtbench.benchutil import parse_size
    out = W + f"accept/pt.t{T}.m{mem}.gz"
    st = S.score_native(W + "extract.gz", W + "lex.f2e", W + "lex.e2f", out, threads=T, memory=parse_size(mem))
    ours = S.read_table(out)
    d = S.compare_tables(ours, oracle)
    s = ours.groupby("src")["p_ef"].sum().to_numpy()
    print(f"threads={T} memory={mem} runs1={st.runs1} runs2={st.runs2}: equal to oracle, max diffs {d}; "
          f"printed sum_e p(e|f): max |1-sum| = {np.abs(s-1).max():.3g}", flush=True)
    del ours
parts = partition_extract(W + "extract.gz", 4, W + "accept/dist4")
counts = []
for k, p in enumerate(parts):
    c = W + f"accept/dist4/part{k}.counts.gz"
    S.score_native(p, W + "lex.f2e", W + "lex.e2f", c, threads=2, memory=64 << 20, counts_only=True)
    counts.append(c)
out = W + "accept/pt.dist4.gz"
S.score_native(counts, W + "lex.f2e", W + "lex.e2f", out, threads=2, memory=64 << 20, weighted=True)
print(f"distributed (4 partitions): equal to oracle, max diffs {S.compare_tables(S.read_table(out), oracle)}", flush=True)
