# Two entry points (see README): `make reproduce` and `make test`. Both create .venv if needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# the profile (workflow/profiles/$(PROFILE)): its grid and its executor (default: this machine's, the default grid)
PROFILE ?= default
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: setup reproduce retake test test-asan test-slurm smoke lmplz moses moses-test valgrind clean

$(BIN)/smtbench: pyproject.toml setup.py pylib/smtbench/_build.py $(filter-out csrc/cuda/%,$(wildcard csrc/*.[ch] csrc/*/*.[ch]))
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip wheel
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

setup: $(BIN)/smtbench

# Regenerate every table and figure of the profile (default: this 2-core machine → results/).
reproduce: setup lmplz moses
	$(BIN)/snakemake --profile workflow/profiles/$(PROFILE)

# KenLM's lmplz, build_binary, query, kenlm_benchmark and probing_hash_table_benchmark (patched: one size), built
# from the PyPI sdist into build/lmplz (the live reference for our estimator, the C++ peers of the LM tables and
# of the hash table).
lmplz: setup
	bash tools/build_lmplz.sh > /dev/null

# Moses' programs, the live peers of every decoding, scoring and tuning table, built from MOSES_SRC (a checkout or
# its tarball; default ../shared/peers/mosesdecoder-34452895.tar.xz) into build/moses/bin. `moses`: all of them
# (moses2, moses, extract, score, consolidate, lexical-reordering-score, CreateProbingPT, mert, kbmira, ...);
# `moses-test`: the set the tests compare with (moses2, mert, kbmira, extractor).
moses:
	bash tools/build_moses.sh all > /dev/null

moses-test:
	bash tools/build_moses.sh test > /dev/null

# Valgrind for `smtbench count` (callgrind counts, CI's gate on them; apt-get where missing), before the extension
# is built so that it compiles callgrind's client requests in.
valgrind:
	bash tools/install_valgrind.sh

# Unit tests (correctness), then the smoke sweep with its regression checks against the baselines (the exact
# metrics and the counts: workflow/baselines/smoke.csv, workflow/baselines/counts.csv).
test: valgrind setup lmplz moses-test
	$(BIN)/python -m pytest -q
	$(BIN)/snakemake --profile workflow/profiles/smoke

# The cluster path against a real SLURM (not part of `make test`: a SLURM from Debian's packages, as root:
# `apt-get install slurm-wlm munge`): tools/slurm-local.sh starts a one-node cluster, tests/test_slurm.py runs
# (sharded decoding as jobs, a cancelled and a timed-out job resumed), then the smoke grid runs through the SLURM
# executor into build/slurm-smoke and its exact metrics are checked (baseline, and a local smoke run's if there is
# one); the cluster is stopped and removed whatever happens. See tools/test-slurm.sh.
test-slurm: setup lmplz moses-test
	$(BIN)/python -m pip install -q -e '.[slurm]'
	bash tools/test-slurm.sh

# The C-heavy tests under AddressSanitizer + UndefinedBehaviorSanitizer (the extension is rebuilt sanitized, the
# sanitizer runtimes are preloaded into Python, leaks are not checked: CPython itself does not free everything at
# exit), then the extension is rebuilt normally.
ASAN_TESTS := tests/test_lm_arpa.py tests/test_lm_probing.py tests/test_btree.py tests/test_hash.py \
              tests/test_tm_score.py tests/test_fuzz.py tests/test_hardening.py tests/test_decode_normal.py \
              tests/test_decode_cube.py tests/test_outputs.py tests/test_extract_c.py tests/test_tm_extract_tables.py
test-asan: setup
	SMTBENCH_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  SMTBENCH_LDFLAGS="-fsanitize=address,undefined" $(BIN)/python pylib/smtbench/_build.py > /dev/null
	SMTBENCH_FUZZ_BIN=$${SMTBENCH_FUZZ_BIN:-1000} \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow" $(ASAN_TESTS); \
	  rc=$$?; $(BIN)/python pylib/smtbench/_build.py > /dev/null; exit $$rc

# Re-take measured points without deleting rows by hand: `make retake POINT="results/raw/mokry_lm/bible.o5.jsonl"`
# (one or more row files, or rule names: an experiment's timing rule is <experiment>_bench, e.g. mokry_hash_bench)
# re-measures them under the repeat protocol, replaces the rows atomically and redraws whatever reads them; the old
# rows stay in git (`smtbench report history`).
retake: setup
	@test -n "$(POINT)" || { echo "make retake: name the row file(s) or rule(s): POINT=results/raw/<experiment>/<point>.jsonl"; exit 2; }
	$(BIN)/snakemake --profile workflow/profiles/$(PROFILE) --forcerun $(POINT)

clean:
	rm -rf build .snakemake
