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
