"""Build hook: cffi compiles every C file under csrc/ (but cuda/) into smtbench._native (see pylib/smtbench/_build.py)."""
from pathlib import Path

from setuptools import setup

# An in-place build (python pylib/smtbench/_build.py) leaves a differently named .so that Python
# would import before the one built here: remove it so the new build is the one that loads.
for stale in Path(__file__).resolve().parent.glob("pylib/smtbench/_native*.so"):
    stale.unlink()

setup(cffi_modules=["pylib/smtbench/_build.py:ffibuilder"])
