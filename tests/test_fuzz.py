"""A seeded mutator over the ARPA, extract and lex readers: every mutant gives either a clear error (a ValueError
naming the file) or a result identical across backends (ARPA: sequential, automaton and B-tree scores; extract:
the C scorer and the pandas oracle) -- never a traceback. SMTBENCH_FUZZ=N runs N mutants per reader (CI: a few
dozen, seconds)."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

N = int(os.environ.get("SMTBENCH_FUZZ", "40"))

ARPA = """\\data\\
ngram 1=6
ngram 2=5
ngram 3=3

\\1-grams:
-1.0\t<unk>\t0
-99\t<s>\t-0.5
-0.7\t</s>
-0.6\ta\t-0.3
-0.8\tb\t-0.2
-0.9\tc\t-0.1

\\2-grams:
-0.3\t<s> a\t-0.1
-0.4\ta b\t-0.15
-0.5\tb </s>
-0.6\tb a\t0
-0.45\tc a\t-0.05

\\3-grams:
-0.2\t<s> a b
-0.1\ta b </s>
-0.25\tc a b

\\end\\
"""
TEXT = ["a b", "b a c a b", "", "c c a b zz", "a a a b b b c"]
EXTRACT = ["a ||| x ||| 0-0", "a b ||| x y ||| 0-0 1-1", "b ||| y ||| 0-0", "a ||| x ||| 0-0", "b c ||| y ||| 0-0",
           "c ||| z ||| 0-0", "a b ||| x y ||| 0-1 1-0"]
LEX = ["x a 0.5", "y b 0.6", "z c 0.9", "y c 0.1", "x NULL 0.01", "NULL a 0.2"]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        i = rng.randrange(len(lines))
        line = lines[i]
        if op == 0 and lines:
            del lines[i]
        elif op == 1:
            lines.insert(i, rng.choice(lines))
        elif op == 2 and line:
            j = rng.randrange(len(line))
            lines[i] = line[:j] + rng.choice(["", " ", "\t", "|||", "-", "0", "9e99", "nan", "\x00", "é", "\ufffd",
                                              "-1", "x", "1-"]) + line[j + 1:]
        elif op == 3:
            lines[i] = line.replace("\t", " ", 1) if "\t" in line else line + "\t"
        elif op == 4:
            lines[i] = " ".join(reversed(line.split(" ")))
        elif op == 5:
            lines[i] = line[: len(line) // 2]
        elif op == 6:
            lines[i] = line + " " + line
        else:
            lines[i] = ""
    return "\n".join(lines)


def _clean_error(exc: Exception, *paths) -> None:
    """A ValueError whose message names one of the input files (or, for an ARPA model, the model)."""
    assert isinstance(exc, ValueError), f"{type(exc).__name__}: {exc}"
    assert any(str(p) in str(exc) for p in paths) or "model" in str(exc), str(exc)


def test_fuzz_arpa(tmp_path):
    from smtbench.lm import backends
    from smtbench.lm.arpa import read_arpa
    rng = random.Random(1)
    for k in range(N):
        path = tmp_path / f"m{k}.arpa"
        path.write_text(mutate(ARPA, rng), encoding="utf-8", errors="surrogateescape")
        try:
            model = read_arpa(path)
        except Exception as exc:  # noqa: BLE001 - the point is which exceptions
            _clean_error(exc, path)
            continue
        results = {}
        for name, opts in (("sequential", {}), ("automaton", {"queue_size": 3}), ("btree", {})):
            try:
                scorer = backends.make(name, model, **opts)
                enc = backends.encode_lines(model, TEXT)
                results[name] = np.asarray(scorer.score_stream(enc.tokens).logprob)
            except Exception as exc:  # noqa: BLE001
                assert isinstance(exc, ValueError), f"{name} on {path}: {type(exc).__name__}: {exc}"
        if "sequential" in results and "automaton" in results:
            assert results["sequential"].tobytes() == results["automaton"].tobytes(), path
        if "sequential" in results and "btree" in results:
            np.testing.assert_allclose(results["btree"], results["sequential"], atol=1e-5, err_msg=str(path))


def test_fuzz_extract_and_lex(tmp_path):
    from smtbench.tm import score as S
    rng = random.Random(2)
    for k in range(N):
        ex = tmp_path / f"e{k}"
        lex = tmp_path / f"l{k}"
        which = rng.randrange(2)
        ex.write_text(mutate("\n".join(EXTRACT) + "\n", rng) if which == 0 else "\n".join(EXTRACT) + "\n",
                      encoding="utf-8", errors="surrogateescape")
        lex.write_text(mutate("\n".join(LEX) + "\n", rng) if which == 1 else "\n".join(LEX) + "\n",
                       encoding="utf-8", errors="surrogateescape")
        bad = ex if which == 0 else lex
        out = tmp_path / f"o{k}.gz"
        errors = []
        try:
            S.score_native(str(ex), str(lex), str(lex), str(out), memory=1 << 20)
        except Exception as exc:  # noqa: BLE001
            _clean_error(exc, ex, lex)
            assert not out.exists()
            errors.append("native")
        try:
            ref = S.score_pandas(str(ex), str(lex), str(lex))
        except Exception as exc:  # noqa: BLE001
            _clean_error(exc, ex, lex)
            errors.append("pandas")
        assert errors in ([], ["native", "pandas"]), f"only {errors} refused {bad}"
        if errors:
            continue
        got = S.read_table(str(out))
        assert list(got["src"]) == list(ref["src"]) and list(got["tgt"]) == list(ref["tgt"]), bad
        for col in ("p_fe", "p_ef", "lex_fe", "lex_ef"):
            np.testing.assert_allclose(got[col].to_numpy(float), ref[col].to_numpy(float), rtol=2e-5,
                                       err_msg=f"{bad} {col}")
