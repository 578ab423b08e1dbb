"""`smtbench bench <experiment>`: every experiment's verbs, built from its declaration (``VERBS`` in
experiments/<experiment>.py; experiments/frame.py) -- no hand-written options per experiment."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..experiments import frame
    frame.register(groups, "bench")
