# Two entry points for a fresh machine: `make train` and `make test`.
# Each creates .venv on first use. torch is pinned through constraints.txt so that
# pip takes the CPU wheel instead of a multi-GB CUDA build.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test bench notebooks clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[train,dev]"
	touch $(STAMP)

train: $(STAMP)
	$(PY) train/ppo.py $(ARGS)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q $(ARGS)

bench: $(STAMP)
	$(PY) -m pis_env.bench
	$(PY) -m pis_env.bench_batched

notebooks: $(STAMP)
	PY=$(PY) scripts/run_notebooks.sh

clean:
	rm -rf $(VENV)
