"""`smtbench report <experiment>`: the report verbs the report modules declare (``VERBS`` in report/<name>.py;
experiments/frame.py) -- no hand-written options per experiment. (This module's name places them where the
experiments' own report modules stood in `report --help`.)"""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..experiments import frame
    frame.register(groups, "report")
