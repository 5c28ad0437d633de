# Two entry points for a fresh machine: `make train` and `make test`.
# Each creates .venv on first use. torch is pinned through constraints.txt so that
# pip takes the CPU wheel instead of a multi-GB CUDA build.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test test-rllib bench bench-rllib notebooks fuzz mutation mutants mutants-rllib clean

$(STAMP): pyproject.toml setup.py constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[train,dev]"
	touch $(STAMP)

# RLlib (train/rllib/ppo.py) in a second virtualenv: ray[rllib] pins its own gymnasium.
# It is layered on .venv: a .pth file puts .venv's site-packages after its own, so torch
# and Ray come from .venv (a third of the install time) while everything ray[rllib] pins
# differently (gymnasium) is installed here and shadows .venv's copy.
RLLIB_VENV ?= .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed
SITE := import sysconfig; print(sysconfig.get_paths()["purelib"])

$(RLLIB_STAMP): $(STAMP) pyproject.toml setup.py constraints.txt
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(PY) -c '$(SITE)' > "$$($(RLLIB_VENV)/bin/python -c '$(SITE)')/_pis_yedili_main_venv.pth"
	$(RLLIB_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[rllib]" "pytest>=8"
	touch $(RLLIB_STAMP)

test-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -m pytest -q tests_rllib $(ARGS)

train: $(STAMP)
	$(PY) train/ppo.py $(ARGS)

# The suite runs on every core (pytest-xdist, -n auto); ARGS="-n0 tests/FILE.py" for one file.
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n auto $(ARGS)

# The benchmarks (benchmarks/, not installed); the bench extra adds the OpenSpiel peer.
bench: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[bench]"
	$(PY) -m benchmarks.engine
	$(PY) -m benchmarks.batched
	$(PY) -m benchmarks.search

# RLlib's sampling speed: the AEC env, the batched vector env, CartPoleVectorEnv's ceiling.
bench-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -m benchmarks.rllib_sampling $(ARGS)

notebooks: $(STAMP)
	PY=$(PY) scripts/run_notebooks.sh

# The AEC fuzz machine of tests/pis_env/test_fuzz.py for MINUTES minutes with fresh seeds.
MINUTES ?= 10
fuzz: $(STAMP)
	$(PY) scripts/fuzz.py --minutes $(MINUTES)

# Mutation testing with mutmut (docs/trust.md): every function of the modules listed in
# pyproject.toml's [tool.mutmut], mutated one change at a time in a copy of the tree
# (mutants/, whose results are kept between runs), against the tests that cover it. All
# modules take hours; one module: make mutation ARGS='"agents.tournament.stats.*"'.
# CI unset: under CI=true a skipped test fails, so a mutant whose test skips would count
# as killed. One torch thread: a thread pool torch started in mutmut's process hangs the
# children it forks, and a hung mutant counts as a timeout. Not part of CI.
mutation: $(STAMP)
	env -u CI OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=$(CURDIR) $(VENV)/bin/mutmut run --max-children 2 $(ARGS)
	$(VENV)/bin/mutmut results

# The numba kernels, which mutmut does not mutate: break the code each listed test guards
# (scripts/mutants.py) and check that the test
# fails; exit 1 if a mutant survives. ARGS="--only NAME" for one.
mutants: $(STAMP)
	$(PY) scripts/mutants.py $(ARGS)

# The mutants whose tests are in tests_rllib run in .venv-rllib.
mutants-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python scripts/mutants.py --suite tests_rllib $(ARGS)

clean:
	rm -rf $(VENV)
