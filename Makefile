# Two entry points (see README): `make reproduce` and `make test`. Both create .venv if needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PROFILE ?= default
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: setup reproduce test smoke lmplz clean

$(BIN)/smtbench: pyproject.toml setup.py pylib/smtbench/_build.py $(wildcard csrc/*.c csrc/*.h)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip wheel
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

setup: $(BIN)/smtbench

# Regenerate every table and figure of the profile (default: this 2-core machine → results/).
reproduce: setup
	$(BIN)/snakemake --profile workflow/profiles/$(PROFILE)

# KenLM's lmplz, built from the PyPI sdist into build/lmplz (the live reference for our estimator).
lmplz: setup
	bash tools/build_lmplz.sh > /dev/null

# Unit tests (correctness), then the smoke sweep with its regression check against the baseline.
test: setup lmplz
	$(BIN)/python -m pytest -q
	$(BIN)/snakemake --profile workflow/profiles/smoke

clean:
	rm -rf build .snakemake
