"""Deterministic drivers for callgrind instruction counts of the hot kernels (no wall clock).

    valgrind --tool=callgrind --callgrind-out-file=OUT python tools/cg_kernels.py hash|lm|arpa [ORACLE_DIR]
    callgrind_annotate --inclusive=yes OUT | grep -E 'sb_hash_find_batch|sb_lm_score_stream|sb_arpa_feed'

hash: a 16 MiB table (load 2/3) of every layout, filled from a fixed seed, 200 K lookups (half hits, half misses)
      through sb_hash_find_batch, plain and with a queue of 16; prints a checksum of the values found.
lm:   the oracle 5-gram (lm-en5.arpa.xz) as a probing LM, dev.en scored by sb_lm_score_stream sequentially and with
      the automaton queue of 8; prints the summed log10 probabilities (hex of the double: bit-exact).
arpa: only the ARPA reading of the oracle 5-gram (sb_arpa_*: vocabulary and duplicate tables); prints its counts.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

# the shared folder beside the checkout (../shared), or SMTBENCH_SHARED as for the workflow (workflow/rules/common.smk)
SHARED = Path(os.environ.get("SMTBENCH_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")
ORACLE = SHARED / "oracles" / "moses-bible-dev"


def run_hash() -> None:
    from smtbench.hash.table import LAYOUTS, ProbingHashTable

    rng = np.random.default_rng(20261126)
    for layout in sorted(LAYOUTS):
        try:
            t, cap = ProbingHashTable.for_bytes(16 << 20, 2 / 3, "pow2", layout, huge=False)
        except Exception as e:  # a layout this build lacks
            print(layout, "skipped:", e)
            continue
        keys = rng.integers(1, 2**63, size=cap, dtype=np.uint64)
        keys = np.unique(keys)
        t.insert(keys, keys * np.uint64(3))
        hits = rng.choice(keys, size=100_000)
        miss = rng.integers(2**63, 2**64 - 1, size=100_000, dtype=np.uint64)
        q = np.concatenate([hits, miss])
        rng.shuffle(q)
        for queue in (0, 16):
            v, f = t.find(q, queue)
            print(layout, queue, int(f.sum()), hex(int(np.bitwise_xor.reduce(v))))


def run_lm(oracle: Path, score: bool = True) -> None:
    from smtbench.lm.arpa import read_arpa

    m = read_arpa(oracle / "lm-en5.arpa.xz")
    print("counts", [len(t) for t in m.ngrams])
    if not score:
        return
    from smtbench.lm.probing import ProbingLM

    lm = ProbingLM(m)
    enc = lm.encode((oracle / "dev.en").read_text(encoding="utf-8").splitlines())
    for queue in (0, 8):
        r = lm.score_stream(enc.tokens, queue)
        print("queue", queue, "queries", len(r.logprob), "sum", float(r.logprob.astype(np.float64).sum()).hex())


if __name__ == "__main__":
    what = sys.argv[1]
    oracle = Path(sys.argv[2]) if len(sys.argv) > 2 else ORACLE
    if what == "hash":
        run_hash()
    elif what == "lm":
        run_lm(oracle)
    elif what == "arpa":
        run_lm(oracle, score=False)
    else:
        sys.exit(f"unknown driver {what!r}: hash, lm or arpa")
