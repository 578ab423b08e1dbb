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
