"""The experiments, one module per paper experiment (the sweep drivers), all on one harness (:mod:`.harness`).

An experiment's name is the same everywhere: its config key, its rule file ``workflow/rules/<name>.smk``, its
``smtbench bench <name>`` verb (old verbs kept as aliases), its module here ``experiments/<name>.py``, its report
module ``report/<name>.py`` and ``smtbench report <name>`` verb, its notebook ``notebooks/<name>.ipynb`` and its raw
folder ``results/raw/<name>/``. Modules here hold only the sweep (points, repeats, rows, agreement checks); the
mechanisms they time live in their domain folders (``hash/``, ``lm/``, ``tm/``, ``decode/``)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

#: the experiments with a module here (a sweep driver declaring VERBS: experiments/frame.py), found by their
#: declaration, so that a new experiment is one module here and no line elsewhere; moses_training and tune have
#: none: moses_training's timed decode is `bench moses_decode` on the trained model, tune's rows come from the
#: `tune` toolkit verbs
SWEEPS = tuple(sorted(p.stem for p in Path(__file__).parent.glob("*.py") if "\nVERBS = (" in p.read_text()))


def add_verb(sub: argparse._SubParsersAction, name: str, old: Sequence[str] = (), **kw: Any) -> argparse.ArgumentParser:
    """``smtbench bench|report <name>``: the experiment's one name (underscores), with its hyphenated spelling and
    its old verbs as aliases (``bench mokry_hash`` = ``bench mokry-hash`` = ``bench hash``)."""
    aliases = [a for a in dict.fromkeys([name.replace("_", "-"), *old]) if a != name]
    return sub.add_parser(name, aliases=aliases, **kw)
