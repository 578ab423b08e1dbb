"""Build hook: cffi compiles every csrc/*.c into smtbench._native (see pylib/smtbench/_build.py)."""
from setuptools import setup

setup(cffi_modules=["pylib/smtbench/_build.py:ffibuilder"])
