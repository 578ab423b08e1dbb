"""Toy models shared by the tests (one copy each): import them (`from toy_models import TOY_ARPA`) or use the
conftest fixture `toy_arpa` (a path)."""

#: a 3-gram ARPA with <unk>, a -99 <s>, back-offs and a missing-context-free trie; kenlm loads it
TOY_ARPA = """\\data\\
ngram 1=5
ngram 2=4
ngram 3=2

\\1-grams:
-1.0\t<unk>\t0
-99\t<s>\t-0.5
-0.7\t</s>
-0.6\ta\t-0.3
-0.8\tb\t-0.2

\\2-grams:
-0.3\t<s> a\t-0.1
-0.4\ta b\t-0.15
-0.5\tb </s>
-0.6\tb a\t0

\\3-grams:
-0.2\t<s> a b
-0.1\ta b </s>

\\end\\
"""


# ---- a toy phrase-based model (phrase + reordering table over words s0..s7, TOY_ARPA as the LM): decoders' tests
import random  # noqa: E402

_SRC = ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"]
_TGT = ["a", "b", "c", "d", "</s>x", "é"]


def toy_tables(d, seed=0):
    rng = random.Random(seed)
    pt, rt = [], []
    for n in (1, 2, 3):
        for _ in range(14 if n == 1 else 10):
            src = " ".join(rng.choice(_SRC) for _ in range(n))
            for _ in range(rng.randint(1, 4)):
                tgt = " ".join(rng.choice(_TGT) for _ in range(rng.randint(1, 3)))
                sc = " ".join(f"{rng.uniform(0.01, 1):.4f}" for _ in range(4))
                pt.append((src, tgt, f"{src} ||| {tgt} ||| {sc} ||| 0-0 ||| 3 {rng.randint(1, 9)} 1"))
                rt.append((src, tgt, f"{src} ||| {tgt} ||| " + " ".join(f"{rng.uniform(0.01, 1):.4f}" for _ in range(6))))
    seen = set()
    pt = [x for x in sorted(pt) if (x[0], x[1]) not in seen and not seen.add((x[0], x[1]))]
    seen = set()
    rt = [x for x in sorted(rt) if (x[0], x[1]) not in seen and not seen.add((x[0], x[1]))]
    (d / "pt.txt").write_text("".join(x[2] + "\n" for x in pt), encoding="utf-8")
    (d / "rt.txt").write_text("".join(x[2] + "\n" for x in rt), encoding="utf-8")
    return d / "pt.txt", d / "rt.txt"


def toy_ini(d, arpa):
    ini = d / "moses.ini"
    ini.write_text(f"""[feature]
UnknownWordPenalty
WordPenalty
PhrasePenalty
PhraseDictionaryMemory name=TranslationModel0 num-features=4 path={d / 'pt.txt'} input-factor=0 output-factor=0
LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff input-factor=0 output-factor=0 path={d / 'rt.txt'}
Distortion
KENLM name=LM0 factor=0 path={arpa} order=3
[weight]
UnknownWordPenalty0= 1
WordPenalty0= -1
PhrasePenalty0= 0.2
TranslationModel0= 0.2 0.2 0.2 0.2
LexicalReordering0= 0.3 0.3 0.3 0.3 0.3 0.3
Distortion0= 0.3
LM0= 0.5
""")
    return ini


def toy_phrase_model(d, seed=0):
    """Write pt.txt, rt.txt, toy.arpa and moses.ini into folder d; returns the ini's path."""
    arpa = d / "toy.arpa"
    arpa.write_text(TOY_ARPA)
    toy_tables(d, seed)
    return toy_ini(d, arpa)


def aligned_corpus(d, verses: int, unaligned_every: int, orientation: bool = False):
    """The first ``verses`` verses of the shipped corpus, tokenized, with a synthetic monotone alignment (every
    ``unaligned_every``-th target word unaligned), in folder ``d``: f, e, al, lex.f2e/e2f, extract(.inv).gz and,
    with ``orientation``, extract.o.gz (our extraction, Moses' semantics). Returns ``d``."""
    from pathlib import Path

    from smtbench import data
    from smtbench.tm.extract import extract_files, lex_files
    tsv = Path(__file__).resolve().parent.parent / "resources" / "bible-es-en" / "es-en.tsv.xz"
    vs = data.read_tsv(tsv)[:verses]
    es = data.tokenize_lines([v.es for v in vs], "es")
    en = data.tokenize_lines([v.en for v in vs], "en")
    al = []
    for f, e in zip(es, en):
        nf, ne = len(f.split()), len(e.split())
        al.append(" ".join(f"{min(nf - 1, j * nf // ne)}-{j}" for j in range(ne)
                           if j % unaligned_every != unaligned_every // 2))
    (d / "f").write_text("\n".join(es) + "\n")
    (d / "e").write_text("\n".join(en) + "\n")
    (d / "al").write_text("\n".join(al) + "\n")
    lex_files(str(d / "f"), str(d / "e"), str(d / "al"), str(d / "lex.f2e"), str(d / "lex.e2f"))
    extract_files(str(d / "f"), str(d / "e"), str(d / "al"), str(d / "extract.gz"), str(d / "extract.inv.gz"),
                  orientation_out=str(d / "extract.o.gz") if orientation else None)
    return d


def thin_lex(src, dst):
    """Copies of ``src``'s lex.f2e/lex.e2f in folder ``dst`` without every third pair (each word keeps at least one
    entry in each column, so every scorer loads them): phrase pairs then weigh word pairs absent from the lex table,
    the path real tables can hit and :func:`aligned_corpus`'s never does. Returns ``dst``."""
    for name in ("lex.f2e", "lex.e2f"):
        out, seen = [], set()
        for i, line in enumerate((src / name).read_text().splitlines()):
            a, b, _ = line.split()
            if i % 3 == 1 and (0, a) in seen and (1, b) in seen:
                continue
            seen.update({(0, a), (1, b)})
            out.append(line)
        (dst / name).write_text("\n".join(out) + "\n")
    return dst
