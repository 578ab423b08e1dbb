"""Parallel corpus preparation (`smtbench data prepare`): any language pair from two plain files or a TSV with
named columns, split by whole Bible books (the shipped bible-es-en corpus), counts, fractions or line lists;
Moses-style tokenization and lowercasing, truecasing or the text's own case.

Tokenization is sacremoses' MosesTokenizer (Moses' tokenizer.perl conventions) with ``escape=False``
(``&``, ``<``, ``>``, ``'``, ``"``, ``[``, ``]`` stay literal instead of becoming XML entities) and
``aggressive_dash_splits=False`` (Moses' default), followed by lowercasing (``str.lower``).
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from .ioutil import atomic_open, line_count_mismatch, open_text
from .ioutil import words as split_words, join_words

# The split the corpus README suggests: whole books held out.
DEV_BOOKS = ("Ruth", "Esth", "Eccl", "Joel", "Eph", "Phil", "Col", "1Thess", "2Thess")
TEST_BOOKS = ("Ezra", "Dan", "Amos", "Mark", "Gal", "Heb", "1Pet")
SPLITS = ("train", "dev", "test")
LANGS = ("es", "en")


class CorpusFormatError(ValueError):
    """A malformed corpus line (message: path:lineno: what is wrong)."""


@dataclass
class Verse:
    ref: str
    es: str
    en: str


def split_of(ref: str) -> str:
    book = ref.split(".", 1)[0]
    if book in DEV_BOOKS:
        return "dev"
    if book in TEST_BOOKS:
        return "test"
    return "train"


def read_tsv(path: str | os.PathLike[str]) -> list[Verse]:
    out: list[Verse] = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            parts = line.split("\t")
            if len(parts) != 3:
                raise CorpusFormatError(f"{path}:{lineno}: expected ref<TAB>es<TAB>en, got {len(parts)} fields")
            ref, es, en = parts
            if ref.count(".") != 2 or not es.strip() or not en.strip():
                raise CorpusFormatError(f"{path}:{lineno}: bad verse reference or empty side: {line[:60]!r}")
            out.append(Verse(ref, es.strip(), en.strip()))
    return out


class Tokenizer:
    """sacremoses tokenizer (+ lowercasing unless ``lower`` is false), Moses conventions, escape=False. ``lang``
    picks the non-breaking prefixes of a language sacremoses knows; any other code gets the generic rules."""

    def __init__(self, lang: str, lower: bool = True):
        from sacremoses import MosesTokenizer
        self._tok = MosesTokenizer(lang=lang)
        self._lower = lower

    def __call__(self, text: str) -> str:
        out = self._tok.tokenize(text, escape=False, return_str=True, aggressive_dash_splits=False)
        return out.lower() if self._lower else out


def truecase_train(lines: list[str], model: str, progress: bool = False) -> list[str]:
    """Train sacremoses' truecaser (Moses' train-truecaser.perl) on tokenized ``lines``, save its model to
    ``model`` (atomically) and return the truecased lines."""
    from sacremoses import MosesTruecaser

    from .ioutil import atomic_path
    tc = MosesTruecaser()
    tc.train([split_words(s) for s in lines], save_to=None, progress_bar=False)
    with atomic_path(model) as tmp:
        tc.save_model(tmp)
    return [tc.truecase(s, return_str=True) for s in lines]


def truecase_apply(lines: Iterable[str], model: str) -> list[str]:
    """Truecase tokenized lines with a model ``truecase_train`` saved."""
    from sacremoses import MosesTruecaser
    tc = MosesTruecaser(load_from=model)
    return [tc.truecase(s, return_str=True) for s in lines]


def tokenize_lines(lines: Iterable[str], lang: str, lower: bool = True) -> list[str]:
    tok = Tokenizer(lang, lower)
    return [join_words(tok(s)) for s in lines]


@dataclass
class Corpus:
    """Parallel text read for `prepare`: the two sides, one reference per line (a verse reference, or the
    line number in the input) and the names of the two sides (output extensions, tokenizer languages)."""
    f: list[str]
    e: list[str]
    refs: list[str]
    f_name: str
    e_name: str
    origin: str


def read_parallel_tsv(path: str | os.PathLike[str], f: str, e: str, columns: list[str] | None = None,
                      ref: str | None = None) -> Corpus:
    """A TSV whose columns are named by its first line (``columns`` None) or by ``columns``; ``f`` and ``e``
    name the two sides' columns, ``ref`` an optional column of line references."""
    fs: list[str] = []
    es: list[str] = []
    refs: list[str] = []
    with open_text(path) as fh:
        names = columns
        first = 1
        if columns is not None:
            dup = next((c for i, c in enumerate(columns) if c in columns[:i]), None)
            if dup is not None or not all(columns):
                raise CorpusFormatError(f"--columns {','.join(columns)}: "
                                        + (f"names column {dup!r} twice" if dup is not None else "an empty name")
                                        + "; give each column its own name")
        if names is None:
            head = fh.readline()
            if not head:
                raise CorpusFormatError(f"{path}: empty file")
            names = head.rstrip("\n").split("\t")
            first = 2
        for want, what in ((f, "--f"), (e, "--e"), (ref, "--ref-column")):
            if want is not None and want not in names:
                raise CorpusFormatError(f"{path}: no column {want!r} ({what}); the columns are "
                                        f"{', '.join(names)}" + (" (from its first line)" if columns is None else ""))
        if f == e:
            raise CorpusFormatError(f"{path}: --f and --e both name column {f!r}")
        for want, what in ((f, "--f"), (e, "--e"), (ref, "--ref-column")):
            if want is not None and names.count(want) > 1:
                raise CorpusFormatError(f"{path}: its first line names column {want!r} ({what}) "
                                        f"{names.count(want)} times; which one is meant?")
        fi, ei = names.index(f), names.index(e)
        ri = names.index(ref) if ref is not None else None
        for lineno, line in enumerate(fh, first):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != len(names):
                raise CorpusFormatError(f"{path}:{lineno}: expected {len(names)} tab-separated fields "
                                        f"({', '.join(names)}), got {len(parts)}")
            a, b = parts[fi].strip(), parts[ei].strip()
            if not a or not b:
                raise CorpusFormatError(f"{path}:{lineno}: empty {f if not a else e} side")
            fs.append(a)
            es.append(b)
            refs.append(parts[ri] if ri is not None else str(lineno))
    if not fs:
        raise CorpusFormatError(f"{path}: no sentence pairs")
    return Corpus(fs, es, refs, f, e, str(path))


def read_parallel_text(f_path: str | os.PathLike[str], e_path: str | os.PathLike[str], f: str, e: str) -> Corpus:
    """Two line-parallel plain-text files (plain/.gz/.xz); references are line numbers."""
    with open_text(f_path) as fh:
        fs = [line.rstrip("\n").strip() for line in fh]
    with open_text(e_path) as fh:
        es = [line.rstrip("\n").strip() for line in fh]
    if len(fs) != len(es):
        raise CorpusFormatError(line_count_mismatch(f_path, len(fs), e_path, len(es)))
    if not fs:
        raise CorpusFormatError(f"{f_path}: empty file")
    for i, (a, b) in enumerate(zip(fs, es), 1):
        if not a or not b:
            raise CorpusFormatError(f"{f_path if not a else e_path}:{i}: empty line (every line needs a translation)")
    if f == e:
        raise CorpusFormatError(f"--f and --e are both {f!r}: the two sides need different names")
    return Corpus(fs, es, [str(i) for i in range(1, len(fs) + 1)], f, e, str(f_path))


def _amount(text: str | None, n: int, what: str) -> int:
    """A split size: a count (``500``) or a fraction of the corpus (``0.05``, or ``5%``)."""
    if text is None:
        return 0
    t = str(text).strip()
    try:
        if t.endswith("%"):
            x = float(t[:-1]) / 100
        elif "." in t or "e" in t.lower():
            x = float(t)
        else:
            k = int(t)
            if k < 0:
                raise ValueError
            return k
    except ValueError:
        raise CorpusFormatError(f"{what} {text!r}: give a line count (500) or a fraction (0.05 or 5%)") from None
    if not 0 <= x < 1:  # NaN fails too
        raise CorpusFormatError(f"{what} {text!r}: a fraction must lie in [0, 1)")
    k = round(x * n)
    if x > 0 and k == 0:
        raise CorpusFormatError(f"{what} {text!r}: that fraction of the corpus' {n} lines is 0 lines; give a "
                                "larger fraction or a line count")
    return k


def _read_line_list(path: str, n: int, what: str) -> set[int]:
    """1-based line numbers (one per line, blank lines and #-comments skipped), checked against the corpus."""
    out: set[int] = set()
    if not os.path.isfile(path):  # `--split lines --dev 2`: a count where a file of line numbers goes
        raise CorpusFormatError(f"{what} {path}: with --split lines, give a file of 1-based line numbers (no such "
                                "file)" if not os.path.exists(path) else f"{what} {path}: not a file")
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            t = line.split("#", 1)[0].strip()
            if not t:
                continue
            if not t.isdigit() or not 1 <= int(t) <= n:
                raise CorpusFormatError(f"{path}:{lineno}: {what}: {t!r} is not a line number in 1..{n}")
            out.add(int(t))
    return out


def assign_splits(c: Corpus, split: str = "auto", dev: str | None = None, test: str | None = None) -> list[str]:
    """The split of each line. ``split``: ``books`` (the Bible's whole books, needs verse references),
    ``tail`` (dev and test are the last lines: train, then dev, then test, in corpus order; sizes from ``dev``
    and ``test``), ``lines`` (``dev`` and ``test`` are files of 1-based line numbers), or ``auto`` (``books``
    when every reference is a Bible verse of a known book and no size is given, else ``tail``)."""
    n = len(c.f)
    if split == "auto":
        split = "books" if dev is None and test is None and all(_is_verse(r) for r in c.refs) else "tail"
    if split == "books":
        if dev is not None or test is not None:
            raise CorpusFormatError("--split books takes no --dev/--test (the books are fixed); use --split tail")
        bad = next((r for r in c.refs if not _is_verse(r)), None)
        if bad is not None:
            raise CorpusFormatError(f"{c.origin}: --split books needs Bible verse references (Book.chapter.verse) "
                                    f"in a ref column; got {bad!r}; use --dev/--test counts, fractions or line lists")
        out = [split_of(r) for r in c.refs]
    elif split == "tail":
        if dev is None and test is None:
            raise CorpusFormatError(f"{c.origin}: cannot split {n} lines without sizes: give --dev and --test (a "
                                    "count such as 500 or a fraction such as 0.05), or --split lines")
        d, t = _amount(dev, n, "--dev"), _amount(test, n, "--test")
        if d + t >= n:
            raise CorpusFormatError(f"{c.origin}: --dev {dev} and --test {test} take {d + t} of {n} lines, leaving "
                                    "nothing to train on")
        out = ["train"] * (n - d - t) + ["dev"] * d + ["test"] * t
    elif split == "lines":
        if dev is None or test is None:
            raise CorpusFormatError("--split lines needs --dev FILE and --test FILE (1-based line numbers)")
        dl, tl = _read_line_list(dev, n, "--dev"), _read_line_list(test, n, "--test")
        both = dl & tl
        if both:
            raise CorpusFormatError(f"{test}: line {min(both)} is in both --dev and --test")
        out = ["dev" if i in dl else "test" if i in tl else "train" for i in range(1, n + 1)]
    else:
        raise CorpusFormatError(f"--split {split}: one of auto, books, tail, lines")
    counts = {s: out.count(s) for s in SPLITS}
    empty = [s for s in ("train", "dev", "test") if not counts[s]]
    if "train" in empty or (empty and split != "tail"):
        raise CorpusFormatError(f"{c.origin}: the {split} split leaves {', '.join(empty)} empty "
                                f"({' '.join(f'{k}={v}' for k, v in counts.items())} of {n} lines)"
                                + ("; this is not the Bible corpus' verse references: use --split tail with "
                                   "--dev/--test sizes" if split == "books" else ""))
    return out


def _is_verse(ref: str) -> bool:
    book, _, rest = ref.partition(".")
    ch, _, v = rest.partition(".")
    return bool(book) and ch.isdigit() and v.isdigit()


def prepare(tsv: str | os.PathLike[str] | None, outdir: str | os.PathLike[str], progress: bool = False, *,
            text: tuple[str, str] | None = None, f: str = "es", e: str = "en", columns: list[str] | None = None,
            ref: str | None = None, split: str = "auto", dev: str | None = None, test: str | None = None,
            casing: str = "lower", tokenize: bool = True, f_lang: str | None = None,
            e_lang: str | None = None) -> dict[str, int]:
    """Write {train,dev,test}.{F,E} (tokenized and cased as asked), {dev,test}.raw.{F,E} (the untouched text,
    references for sacrebleu) and {split}.ref (a reference per line). Returns lines per split.

    The input is a TSV (``tsv``; columns named by ``columns`` or its first line; ``f``/``e`` name the sides'
    columns) or two plain files (``text``; ``f``/``e`` name the sides). The defaults read the shipped Bible
    corpus (``ref<TAB>es<TAB>en``, no header) split by whole books, tokenized and lowercased.

    Check, then publish: the names, the corpus and the split are checked first; the files are written into a
    staging folder inside ``outdir`` and moved over the earlier run's only once all of them are written, so a
    failed run leaves the folder as it was. One run at a time per ``outdir`` (``folderlock``)."""
    if casing not in ("lower", "keep", "truecase"):
        raise CorpusFormatError(f"--casing {casing}: one of lower, keep, truecase")
    names = output_names(f, e, casing)  # refused before anything is read or written
    from .ioutil import check_outputs_not_inputs
    check_outputs_not_inputs({f"--outdir's {n}": Path(outdir) / n for n in names},  # e.g. --text D/train.es ... --outdir D
                             {"--tsv": tsv, "--text": list(text) if text is not None else None})
    if text is not None:
        corpus = read_parallel_text(text[0], text[1], f, e)
    elif columns is None and ref is None and f == "es" and e == "en" and _looks_like_bible(tsv):
        corpus = _bible(tsv)
    else:
        corpus = read_parallel_tsv(tsv, f, e, columns, ref)
    where = assign_splits(corpus, split, dev, test)
    from .folderlock import folder_lock
    from .ioutil import resolve_output
    with folder_lock(outdir, "data prepare", option="--outdir"), _staging(Path(outdir)) as stage:
        for name in names:  # a directory where a file goes: refused before any work
            resolve_output(Path(outdir) / name)
        counts = _prepare_into(stage, corpus, where, f, e, casing, tokenize, f_lang, e_lang, progress)
        made = sorted(p.name for p in stage.iterdir())
        assert set(made) == set(names), (made, names)
        for name in made:  # every check passed: the whole set replaces the earlier run's files
            _publish_staged(stage / name, Path(outdir) / name)
    return counts


def _publish_staged(staged: Path, target: Path) -> None:
    """Move a staged file over ``target`` as ``atomic_open`` would have written it: the replaced file's mode kept,
    a symlink followed (copied when its file lies on another file system), a FIFO or device written through."""
    import errno
    import shutil

    from .ioutil import atomic_path, publish, resolve_output
    real, mode, replace = resolve_output(target)
    if not replace:
        with open(staged, "rb") as src, open(real, "wb") as dst:
            shutil.copyfileobj(src, dst)
        return
    try:
        publish(staged, real, mode)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with atomic_path(target) as tmp:
            shutil.copyfile(staged, tmp)


def output_names(f: str, e: str, casing: str = "lower") -> list[str]:
    """The files `prepare` writes for sides ``f`` and ``e``; raises (one line naming the options) where a side's
    name is not a plain extension or two outputs would get one name (``--f ref`` would write its train split
    to ``train.ref``, the references' file; ``--f raw.es --e es`` its dev split to ``dev.raw.es``, the raw target)."""
    for opt, name in (("--f", f), ("--e", e)):
        if not name or "/" in name or "\0" in name or name in (".", ".."):
            raise CorpusFormatError(f"{opt} {name!r}: give a file extension for that side (e.g. {opt} de)")
    if f == e:
        raise CorpusFormatError(f"--f and --e are both {f!r}: the two sides need different names")
    made: dict[str, str] = {}
    for sp in SPLITS:
        outs = [(f"{sp}.{f}", f"--f {f}"), (f"{sp}.{e}", f"--e {e}"), (f"{sp}.ref", "the line references")]
        if sp != "train":
            outs += [(f"{sp}.raw.{f}", f"--f {f} (raw)"), (f"{sp}.raw.{e}", f"--e {e} (raw)")]
        if sp == "train" and casing == "truecase":
            outs += [(f"truecase-model.{f}", f"--f {f} (truecase model)"),
                     (f"truecase-model.{e}", f"--e {e} (truecase model)")]
        for name, what in outs:
            if name in made:
                raise CorpusFormatError(f"--f {f!r} --e {e!r}: {made[name]} and {what} would both be written to "
                                        f"{name}; give the sides other names")
            made[name] = what
    return list(made)


@contextlib.contextmanager
def _staging(out: Path) -> Iterator[Path]:
    """A fresh folder inside ``out`` for one run's files (moved into ``out`` by the caller once every check
    passed); removed afterwards, on failure and on SIGTERM/SIGINT. A staging folder left by a run killed with
    SIGKILL is removed first (the caller holds the folder's lock, so no live run owns one)."""
    import shutil
    import tempfile

    from .ioutil import removed_on_signal
    for old in out.glob(".prepare-*.tmp"):
        shutil.rmtree(old, ignore_errors=True)
    stage = Path(tempfile.mkdtemp(prefix=f".prepare-{os.getpid()}.", suffix=".tmp", dir=out))
    try:
        with removed_on_signal(stage):
            yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _prepare_into(out: Path, corpus: Corpus, where: list[str], f: str, e: str, casing: str, tokenize: bool,
                  f_lang: str | None, e_lang: str | None, progress: bool) -> dict[str, int]:
    counts = {}
    sides = {f: (corpus.f, f_lang or f), e: (corpus.e, e_lang or e)}
    truecasers: dict[str, str] = {}
    for sp in SPLITS:
        idx = [i for i, s in enumerate(where) if s == sp]
        counts[sp] = len(idx)
        for name, (lines, lang) in sides.items():
            raw = [lines[i] for i in idx]
            if progress:
                import sys
                print(f"tokenizing {sp}.{name} ({len(raw)} lines)", file=sys.stderr)
            toks = tokenize_lines(raw, lang, lower=casing == "lower") if tokenize else \
                [join_words(s.lower() if casing == "lower" else s) for s in raw]
            if casing == "truecase":
                model = str(out / f"truecase-model.{name}")
                if sp == "train":
                    toks = truecase_train(toks, model, progress)
                    truecasers[name] = model
                else:
                    toks = truecase_apply(toks, truecasers[name])
            for k, t in enumerate(toks):
                if not t:
                    raise CorpusFormatError(f"{corpus.origin}: line {corpus.refs[idx[k]]} tokenizes to nothing "
                                            f"({name})")
            _write_lines(out / f"{sp}.{name}", toks)
            if sp != "train":
                _write_lines(out / f"{sp}.raw.{name}", raw)
        _write_lines(out / f"{sp}.ref", [corpus.refs[i] for i in idx])
    return counts


def _looks_like_bible(tsv) -> bool:
    """The shipped corpus' layout: three fields, the first a verse reference (no header line)."""
    with open_text(tsv) as fh:
        first = fh.readline().rstrip("\n").split("\t")
    return len(first) == 3 and _is_verse(first[0])


def _bible(tsv) -> Corpus:
    vs = read_tsv(tsv)
    return Corpus([v.es for v in vs], [v.en for v in vs], [v.ref for v in vs], "es", "en", str(tsv))


def postprocess_lines(lines: list[str], recase: str | None = None, detruecase: bool = False,
                      detokenize: str | None = None) -> list[str]:
    """Undo preparation on decoder output: recase with a truecase model (then capitalise sentence starts), or
    only capitalise them (``detruecase``), then detokenize with sacremoses' rules for ``detokenize``'s language."""
    from sacremoses import MosesDetokenizer, MosesDetruecaser
    out = [join_words(s) for s in lines]
    if recase:
        out = truecase_apply(out, recase)
    if recase or detruecase:
        dt = MosesDetruecaser()
        out = [dt.detruecase(s, return_str=True) if s else s for s in out]
    if detokenize:
        dk = MosesDetokenizer(lang=detokenize)
        out = [dk.detokenize(split_words(s)) for s in out]
    return out


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line + "\n")
