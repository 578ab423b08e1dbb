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

# its own shape: TOY_ARPA (tests/toy_models.py) plus a word c and its n-grams (c a, c a b), which TEXT below queries
# in every mutant
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


# ------------------------------------------------------- the binarized phrase table (csrc/pb/bin_read.c, bin_write.c)
# A small table over toy words: every mutant of its binary (bit flips, field overwrites with 0 / max / random bytes,
# truncations, extensions, splices of two valid binaries) either loads and decodes exactly as the text table does,
# or is refused with a one-line BinaryTableError naming the file. A second family recomputes the checksums after
# mutating, so the structural checks beneath them (header ranges, bounded records and probes) are what stands
# between a crafted file and the decoder: those mutants may decode differently, but never crash or hang.
# SMTBENCH_FUZZ_BIN=N: mutants per binary variant (CI: 60 x 4 variants; make test-asan: thousands).
N_BIN = int(os.environ.get("SMTBENCH_FUZZ_BIN", str(max(60, N))))
SENTENCES = ["s0 s1 s2", "s3 s0 s5 s7", "s1 zz s2 s2", "s6 s4 s3 s2 s1 s0", "s7", "s5 s5 s5 s1"]


_M64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _checksum(data: bytes, seed: int) -> int:
    """pb/bin_format.c sb_pb_bin_sum_final(sb_pb_bin_sum_block(data, sb_pb_bin_sum_init(seed)), len(data)): four
    lanes, word i in lane i % 4."""
    import struct
    h = [seed, seed ^ 0x1111111111111111, seed ^ 0x2222222222222222, seed ^ 0x3333333333333333]
    padded = data + b"\0" * (-len(data) % 8)
    for i, (w,) in enumerate(struct.iter_unpack("<Q", padded)):
        x = h[i % 4] ^ w
        h[i % 4] = ((((x << 29) | (x >> 35)) & _M64) * 0x9E3779B97F4A7C15) & _M64

    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & _M64
    return _mix64(h[0] ^ rotl(h[1], 16) ^ rotl(h[2], 32) ^ rotl(h[3], 48) ^ len(data)) | 1


_SEED = 0x53425054424E3253
_HDR_SUM_AT = 184


def _reseal(data: bytearray) -> bytearray:
    """Recompute the body and header checksums of a (mutated) binary, as a crafted file would."""
    if len(data) < 256:
        return data
    data[176:184] = _checksum(bytes(data[256:]), _SEED).to_bytes(8, "little")
    data[_HDR_SUM_AT:_HDR_SUM_AT + 8] = bytes(8)
    data[_HDR_SUM_AT:_HDR_SUM_AT + 8] = _checksum(bytes(data[:256]), _SEED + 1).to_bytes(8, "little")
    return data


def mutate_binary(data: bytes, other: bytes, rng: random.Random) -> bytearray:
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        if not b:
            break
        if op == 0:  # bit flips
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # a field overwritten with 0 / max / random; half of them in the header
            width = rng.choice([1, 2, 4, 8])
            i = rng.randrange(min(len(b), 256)) if rng.random() < 0.5 else rng.randrange(len(b))
            i -= i % width
            val = rng.choice([0, (1 << (8 * width)) - 1, rng.getrandbits(8 * width), 1 << (8 * width - 1)])
            b[i:i + width] = val.to_bytes(width, "little")[: len(b) - i]
        elif op == 2:  # truncation
            del b[rng.randrange(len(b)):]
        elif op == 3:  # extension
            b += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64)))
        elif op == 4:  # splice: a prefix of one valid file, the rest of the other
            cut = rng.randrange(min(len(b), len(other)) + 1)
            b = b[:cut] + bytearray(other[cut:])
        else:  # a run of random bytes
            i = rng.randrange(len(b))
            n = rng.randint(1, 32)
            b[i:i + n] = bytes(rng.getrandbits(8) for _ in range(min(n, len(b) - i)))
    return b


@pytest.fixture(scope="module")
def toy_binaries(tmp_path_factory):
    from toy_models import toy_phrase_model

    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.model import PhraseModel
    from smtbench.tm.binarize import build
    d = tmp_path_factory.mktemp("fuzzbin")
    ini = toy_phrase_model(d)
    pt, rt = d / "pt.txt", d / "rt.txt"
    text = PhraseModel(ini)
    dec = CubeDecoder(text, pop_limit=50, stack_size=50, nbest=3)
    ref = [_nbest_key(dec.translate(s)) for s in SENTENCES]
    bins = {}
    for ro, comp in (("integrated", True), ("integrated", False), ("separate", True), ("separate", False)):
        path = d / f"{ro}-{int(comp)}.bin"
        build(pt, path, rt, ro, comp)
        bins[(ro, comp)] = path.read_bytes()
    return {"dir": d, "ini": ini, "lm": text.lm, "ref": ref, "bins": bins}


def _nbest_key(tr):
    return [(e.text, tuple(e.features), e.total) for e in tr.entries]


def _decode_binary(toy, path, cache):
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.model import PhraseModel
    m = PhraseModel(toy["ini"], binary=path, cache=cache, lm=toy["lm"])
    dec = CubeDecoder(m, pop_limit=50, stack_size=50, nbest=3)
    return [_nbest_key(dec.translate(s)) for s in SENTENCES]


def _fuzz_binary(toy, tmp_path, reseal: bool, seed: int) -> dict:
    from smtbench.tm.binarize import BinaryTableError
    rng = random.Random(seed)
    counts = {"mutants": 0, "refused": 0, "identical": 0, "different": 0}
    variants = list(toy["bins"].items())
    for k in range(N_BIN * len(variants)):
        (ro, comp), data = variants[k % len(variants)]
        other = rng.choice(variants)[1]
        mutant = mutate_binary(data, other, rng)
        if reseal:
            mutant = _reseal(mutant)
        if bytes(mutant) == data:
            continue
        path = tmp_path / f"m{k}.bin"
        path.write_bytes(bytes(mutant))
        counts["mutants"] += 1
        try:
            got = _decode_binary(toy, path, rng.choice([0, 3, 1000]))
        except BinaryTableError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc), str(exc)
            counts["refused"] += 1
            continue
        except ValueError as exc:  # a corrupt record met while decoding (only a resealed file gets that far)
            assert reseal, f"{path}: {type(exc).__name__}: {exc}"
            counts["refused"] += 1
            continue
        if got == toy["ref"]:
            counts["identical"] += 1
        else:
            assert reseal, f"{path} ({ro}, compressed={comp}) loaded and decoded differently"
            counts["different"] += 1
        path.unlink()
    print(f"binary fuzz (reseal={reseal}): {counts}")
    return counts


def test_binary_table_reference(toy_binaries, tmp_path):
    """The unmutated binaries decode as the text table (the fuzz test's premise)."""
    for (ro, comp), data in toy_binaries["bins"].items():
        path = tmp_path / f"{ro}{comp}.bin"
        path.write_bytes(data)
        for cache in (0, 1000):
            assert _decode_binary(toy_binaries, path, cache) == toy_binaries["ref"], (ro, comp, cache)


def test_fuzz_binary_table(toy_binaries, tmp_path):
    c = _fuzz_binary(toy_binaries, tmp_path, reseal=False, seed=11)
    assert c["different"] == 0 and c["refused"] + c["identical"] == c["mutants"] > 0


def test_fuzz_binary_table_resealed(toy_binaries, tmp_path):
    """Crafted files (valid checksums): the bounds checks alone keep the decoder from crashing or hanging."""
    c = _fuzz_binary(toy_binaries, tmp_path, reseal=True, seed=12)
    assert c["mutants"] > 0
