# The two commands: `make demo` (fill the built-in suite, open the dashboard) and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch==2.13.0: on these machines pip takes the local CPU build (a plain `torch` pulls CUDA).
TORCH := torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q $(TORCH)
	$(BIN)/pip install -q $(TORCH) -e ".[models,adapters,test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/geneb-engine import --official
	$(BIN)/geneb-engine fill --suite geneb-mini --models kmer-3 kmer-4 kmer-6 --jobs 2
	$(BIN)/geneb-tui

test: $(STAMP)
	$(BIN)/ruff check engine store geneb_tui tests bench
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python bench/probe.py
	$(BIN)/python bench/embed.py
	$(BIN)/python bench/tui_startup.py
	$(BIN)/python bench/uncertainty.py

clean:
	rm -rf $(VENV) .pytest_cache
