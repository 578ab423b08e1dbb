"""Sharded decoding: a test set split into contiguous shards, each decoded as its own job (any decoder, any model),
the outputs merged back in input order. Sentences are decoded independently, so the merge equals one unsharded run
byte for byte: the 1-best and score files concatenated, the n-best lists with their sentence ids (the first field,
0-based within the shard) shifted to the global ids. The manifest (``shards.json``, written by the split) is what
the merge checks every part against: a part with another line count than its shard's input (a truncated, stale or
foreign output), a part whose last line has no newline (concatenated it would glue onto the next part: refused,
not repaired, since a missing newline is what a part cut short looks like), and an n-best part whose ids leave the
shard, go backwards or skip a sentence are refused with one line naming the file; nothing is replaced before every
part is checked, and the merged outputs are renamed into place together at the end."""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ..ioutil import atomic_open, check_distinct_outputs
from .search import InputError, check_sentence, input_lines

MANIFEST = "shards.json"
WHOLE = "whole.txt"  # the same sentences unsplit: the input of the one-job run the merged output must equal


class ShardError(ValueError):
    """A part that does not fit the manifest; the message names the file (and line)."""


@dataclass(frozen=True)
class Shard:
    file: str  # relative to the manifest's folder
    first: int  # global 0-based id of its first sentence
    lines: int


def shard_name(i: int) -> str:
    return f"shard{i}.txt"


def split(input_path: str, shards: int, outdir: str | os.PathLike[str], sentences: int = 0) -> list[Shard]:
    """Write ``outdir/shard{i}.txt`` (i < shards; contiguous, sizes differ by at most one; ``shards`` at most the
    number of sentences, or 1 for an empty input), ``outdir/whole.txt`` (all of them) and the manifest ``outdir/shards.json``
    (last: its presence means the split is complete). ``sentences`` > 0 takes the first that many lines."""
    if shards < 1:
        raise ValueError(f"--shards {shards}: must be at least 1")
    if sentences < 0:
        raise ValueError(f"--sentences {sentences}: must be >= 0 (0 = all)")
    lines: list[bytes] = []
    for lineno, line in enumerate(input_lines(input_path), 1):
        if sentences and lineno > sentences:
            break
        check_sentence(line, f"{input_path}:{lineno}")  # a bad line is named in the input, not in a shard
        lines.append(line.encode("utf-8") + b"\n")
    if shards > max(len(lines), 1):
        raise ValueError(f"--shards {shards}: more than the {len(lines)} sentence(s) of {input_path}"
                         f"{f' (first --sentences {sentences})' if sentences else ''}; give at most {max(len(lines), 1)}")
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--outdir {outdir}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    n = len(lines)
    parts = [Shard(shard_name(i), i * n // shards, (i + 1) * n // shards - i * n // shards) for i in range(shards)]
    for s in parts:
        with atomic_open(out / s.file, "wb") as fh:
            fh.writelines(lines[s.first:s.first + s.lines])
    with atomic_open(out / WHOLE, "wb") as fh:
        fh.writelines(lines)
    manifest = {"input": str(input_path), "sentences": n, "whole": WHOLE,
                "shards": [{"file": s.file, "first": s.first, "lines": s.lines} for s in parts]}
    with atomic_open(out / MANIFEST) as fh:
        fh.write(json.dumps(manifest, indent=1) + "\n")
    return parts


def read_manifest(path: str | os.PathLike[str]) -> list[Shard]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        parts = [Shard(str(s["file"]), int(s["first"]), int(s["lines"])) for s in data["shards"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ShardError(f"{path}: not a shard manifest (smtbench decode split writes one): {exc}") from None
    first = 0
    for s in parts:
        if s.first != first or s.lines < 0:
            raise ShardError(f"{path}: shard {s.file} starts at sentence {s.first}, expected {first}")
        first += s.lines
    return parts


def _count_lines(path: str) -> int:
    """Lines of a part; a last line without its newline is refused (concatenated, it would glue onto the next
    part's first line: a part cut short while it was written)."""
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        for line in fh:
            n += 1
            last = line
    if not last.endswith(b"\n"):
        raise ShardError(f"{path}:{n}: the last line has no newline (a part cut short while it was written?)")
    return n


def _key(path: str) -> str:
    return os.path.realpath(path)


def _check_parts(parts: Sequence[Shard], files: Sequence[str], option: str, manifest: str) -> None:
    if len(files) != len(parts):
        raise ShardError(f"{option}: {len(files)} files for the {len(parts)} shards of {manifest}")
    seen: dict[str, str] = {}
    for f in files:  # one file given for two shards would be merged twice, silently
        k = _key(f)
        if k in seen:
            raise ShardError(f"{option}: {f} is given for two shards (as {seen[k]} too); give each shard its own part")
        seen[k] = f


def _nbest_lines(s: Shard, f: str) -> Iterator[bytes]:
    """The part's n-best lines with global sentence ids; every sentence of the shard must have entries, in input
    order (a part missing a sentence is refused naming the part and the sentence)."""
    last = -1
    lineno = 0
    with open(f, "rb") as part:
        for lineno, line in enumerate(part, 1):
            if not line.endswith(b"\n"):
                raise ShardError(f"{f}:{lineno}: the last line has no newline (a part cut short while it was "
                                 "written?)")
            sid, sep, rest = line.partition(b" ||| ")
            try:
                i = int(sid)
            except ValueError:
                i = -1
            if not sep or not max(last, 0) <= i < s.lines:
                raise ShardError(f"{f}:{lineno}: sentence id {sid.decode(errors='replace')!r} is not "
                                 f"in {max(last, 0)}..{s.lines - 1} (n-best ids of {s.file}, in input order)")
            if i > last + 1:
                raise ShardError(f"{f}:{lineno}: no n-best entry for sentence {last + 1} of {s.file} (ids jump from "
                                 f"{last} to {i}): a part missing a sentence")
            last = i
            yield b"%d ||| " % (i + s.first) + rest
    if last != s.lines - 1:
        raise ShardError(f"{f}: no n-best entry for sentence {last + 1} of {s.file} (the part ends after "
                         f"{lineno} lines; the shard has {s.lines} sentences)")


def merge(manifest: str, outputs: Sequence[str], out: str, *, nbests: Sequence[str] = (), nbest_out: str | None = None,
          scores: Sequence[str] = (), scores_out: str | None = None) -> int:
    """Merge the parts of a sharded decode in shard order; returns the number of sentences. Check, then publish:
    every part is checked (line counts, final newlines, n-best ids) and every merged file written to a temporary
    file before the first of ``-o``, ``--scores`` and ``--n-best`` replaces an existing file."""
    parts = read_manifest(manifest)
    check_distinct_outputs({"-o": out, "--n-best": nbest_out, "--scores": scores_out})
    _check_parts(parts, outputs, "--outputs", manifest)
    inputs = {_key(f): f"{opt} {f}" for opt, fs in (("--manifest", [manifest]), ("--outputs", outputs),
                                                   ("--n-best-parts", nbests), ("--scores-parts", scores))
              for f in fs}
    for opt, path in (("-o", out), ("--n-best", nbest_out), ("--scores", scores_out)):
        if path and _key(path) in inputs:  # writing over an input would lose it (the manifest, a part)
            raise ShardError(f"{opt} {path}: the same file as the input {inputs[_key(path)]}; write elsewhere")
    if bool(nbests) != bool(nbest_out):
        raise ValueError("--n-best-parts and --n-best go together")
    if bool(scores) != bool(scores_out):
        raise ValueError("--scores-parts and --scores go together")
    if nbests:
        _check_parts(parts, nbests, "--n-best-parts", manifest)
    if scores:
        _check_parts(parts, scores, "--scores-parts", manifest)
    for files in (outputs, scores):  # one line per input sentence: checked before anything is written
        for s, f in zip(parts, files):
            n = _count_lines(f)
            if n != s.lines:
                raise ShardError(f"{f}: {n} lines, but {s.file} of {manifest} has {s.lines} sentences (a truncated "
                                 "or foreign part)")
    for s, f in zip(parts, nbests):  # the n-best parts: read once to check, before any output is opened
        for _ in _nbest_lines(s, f):
            pass
    targets = [(out, outputs, None), (scores_out, scores, None), (nbest_out, nbests, True)]
    with contextlib.ExitStack() as stack:  # every output written whole to its temporary, then all renamed
        for target, files, is_nbest in targets:
            if not files:
                continue
            assert target is not None
            fh = stack.enter_context(atomic_open(target, "wb"))
            for s, f in zip(parts, files):
                if is_nbest:
                    fh.writelines(_nbest_lines(s, f))
                else:
                    with open(f, "rb") as part:
                        fh.write(part.read())
    return sum(s.lines for s in parts)


__all__ = ["InputError", "MANIFEST", "WHOLE", "Shard", "ShardError", "merge", "read_manifest", "split"]
