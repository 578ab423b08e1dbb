"""Moses' own programs as live peers (built from the peers tarball or a user's checkout by tools/build_moses.sh,
never committed): ``moses2`` and ``moses`` (decoding), ``extract``/``score``/``consolidate``/
``lexical-reordering-score`` (the Mediani baseline), ``CreateProbingPT``/``processLexicalTable`` (binarizers),
``mert``/``kbmira``/``extractor`` (tuning).

``make test`` builds the set the tests need (``moses2 mert kbmira extractor``); ``make moses`` builds them all.
Where a program is missing, ``available()`` says so and ``NOT_BUILT`` is the text a table shows instead of a row."""
from __future__ import annotations

import os
from pathlib import Path

NOT_BUILT = "not built (make moses)"


def bin_dir() -> Path:
    """$SMTBENCH_MOSES_BIN, else build/moses/bin of this checkout."""
    env = os.environ.get("SMTBENCH_MOSES_BIN")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "build" / "moses" / "bin"


def available(name: str) -> bool:
    return os.access(bin_dir() / name, os.X_OK)


def program(name: str) -> Path:
    """The path of Moses' ``name``; FileNotFoundError naming how to build it when it is missing."""
    p = bin_dir() / name
    if not os.access(p, os.X_OK):
        raise FileNotFoundError(f"{p}: Moses' {name} is not built "
                                f"(run `make moses`, or `bash tools/build_moses.sh all`, or set SMTBENCH_MOSES_BIN)")
    return p


def scripts_dir() -> Path:
    """Moses' scripts/ (train-model.perl and the generic/*-parallel.perl it calls): $SMTBENCH_MOSES_SCRIPTS, else
    build/moses/src/scripts of this checkout (tools/build_moses.sh unpacks the source there)."""
    env = os.environ.get("SMTBENCH_MOSES_SCRIPTS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "build" / "moses" / "src" / "scripts"


#: what train-model.perl steps 4-7 run: its scripts and the programs it finds in <scripts>/../bin
TRAINING_SCRIPTS = ("training/train-model.perl", "training/LexicalTranslationModel.pm",
                    "generic/extract-parallel.perl", "generic/score-parallel.perl")
TRAINING_PROGRAMS = ("extract", "score", "consolidate", "lexical-reordering-score")


def training_missing() -> list[str]:
    """The scripts and programs of train-model.perl's steps 4-7 that are missing (empty: it can run)."""
    out = [f"scripts/{s}" for s in TRAINING_SCRIPTS if not (scripts_dir() / s).is_file()]
    return out + [p for p in TRAINING_PROGRAMS if not available(p)]


def training_root(where: Path) -> Path:
    """A Moses root train-model.perl runs from: ``where``/scripts a copy of scripts_dir() (the script finds its
    programs in $RealBin/../../bin, so a symlink to the source would lead it to the source's bin/) and
    ``where``/bin a link to bin_dir(). Returns the path of its train-model.perl."""
    import shutil

    missing = training_missing()
    if missing:
        raise FileNotFoundError(f"train-model.perl cannot run: {', '.join(missing)} missing under "
                                f"{scripts_dir()} / {bin_dir()} (make moses)")
    where.mkdir(parents=True, exist_ok=True)
    scripts, bin_ = where / "scripts", where / "bin"
    if not scripts.is_dir():
        shutil.copytree(scripts_dir(), where / "scripts.tmp", symlinks=True, dirs_exist_ok=True)
        os.replace(where / "scripts.tmp", scripts)
    if bin_.is_symlink() and os.readlink(bin_) != str(bin_dir().resolve()):
        bin_.unlink()
    if not bin_.exists():
        bin_.symlink_to(bin_dir().resolve(), target_is_directory=True)
    return scripts / "training" / "train-model.perl"


# ----------------------------------------------------------------------------------------------- how it was built

def _elf_needed(data: bytes) -> list[str] | None:
    """The DT_NEEDED names of a 64-bit little-endian ELF file (None: not such a file; [] for a static binary)."""
    import struct

    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = []
    for i in range(shnum):
        off = shoff + i * shentsize
        if off + 64 > len(data):
            return None
        _name, typ, _flags, _addr, offset, size, link = struct.unpack_from("<IIQQQQI", data, off)
        secs.append((typ, offset, size, link))
    out = []
    for typ, offset, size, link in secs:
        if typ != 6 or link >= len(secs):  # SHT_DYNAMIC; sh_link: its string table
            continue
        stroff = secs[link][1]
        for pos in range(offset, min(offset + size, len(data)) - 15, 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                end = data.find(b"\0", stroff + val)
                out.append(data[stroff + val:end].decode("ascii", "replace"))
    return out


def allocator_of(path: str | Path) -> str:
    """The malloc a Moses binary runs with, read from the file (no run): ``tcmalloc (shared: <lib>)`` when it links
    libtcmalloc dynamically, ``tcmalloc (static)`` when tcmalloc's own symbols or messages are linked in (bjam's
    ``link=static`` with libgoogle-perftools-dev installed), ``jemalloc ...`` likewise, else ``glibc malloc``."""
    data = Path(path).read_bytes()
    needed = _elf_needed(data)
    if needed is None:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF executable")
    for lib in needed:
        for name in ("tcmalloc", "jemalloc"):
            if name in lib:
                return f"{name} (shared: {lib})"
    if b"tc_malloc" in data or b"TCMALLOC_" in data:
        return "tcmalloc (static)"
    if b"je_malloc" in data or b"jemalloc" in data:
        return "jemalloc (static)"
    return "glibc malloc"


def build_fields(programs: tuple[str, ...] = ("moses2", "moses")) -> dict[str, str | None]:
    """The fields every row of an experiment that runs Moses carries (its RowWriter's ``fixed``): each built
    program's allocator (``moses2_allocator``, ``moses_allocator``; None where the program is not built)."""
    return {f"{p}_allocator": _allocator_or_why(bin_dir() / p) if available(p) else None for p in programs}


def _allocator_or_why(path: Path) -> str:
    """allocator_of, or why it cannot be read (a stand-in script under $SMTBENCH_MOSES_BIN: not an ELF file)."""
    try:
        return allocator_of(path)
    except (ValueError, OSError):
        return "unknown (not an ELF executable)"


# the experiments (their RowWriter names) that run Moses' programs live, and which programs: their rows carry
# build_fields(those programs) (experiments.harness.rows adds them to the writer's fixed fields)
RUNS = {"decode_normal": ("moses2", "moses"), "decode_cube": ("moses2", "moses"),  # bench moses_decode
        "moses2_moses1": ("moses2", "moses"), "mediani_scoring": ("extract", "score", "consolidate"),
        "moses2_scaling": ("moses2",),  # bench moses2_scaling --peers moses2
        "mediani_reorder": ("lexical-reordering-score",)}  # bench mediani_scoring_reorder
