# The two commands: `make demo` (fill the built-in suite, open the dashboard) and `make test`.
# `make docs` builds the docs site (mkdocs.yml) into build/site; `make test` builds it too.
# `make test-full` is `make test` with every random sweep at its full size (GENEB_TEST_FULL=1;
# tests/helpers.sweep_size): the fill killed at 20 random times per --jobs setting instead of 6,
# the monkey test at both terminal sizes on every kind of store instead of one.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch==2.13.0: on these machines pip takes the local CPU build (a plain `torch` pulls CUDA).
TORCH := torch==2.13.0
STAMP := $(VENV)/.installed
# The second environment: the newest transformers 4.x, which the remote code of most official
# families was written for (.venv takes transformers 5). TF4_TESTS are the tests whose code
# path goes through transformers or huggingface_hub (the generic encoder, remote code, the
# adapters, cached-hub loading, the random-init control, the recipes against the official
# extractors).
VENV_TF4 := .venv-tf4
BIN_TF4 := $(VENV_TF4)/bin
STAMP_TF4 := $(VENV_TF4)/.installed
TF4_TESTS := tests/engine/test_hf_encoder.py tests/engine/test_remote_code.py \
	tests/engine/test_enformer_adapter.py tests/engine/test_lucaone_adapter.py \
	tests/engine/test_offline_models.py tests/engine/test_random_init.py \
	tests/engine/test_quiet_model_load.py tests/engine/test_remote_pins.py \
	tests/engine/test_recipe_parity.py tests/engine/test_splicebert_adapter.py \
	tests/engine/test_checkpoint_checks.py tests/engine/test_preset_parity.py

.PHONY: demo test test-full checks browser-check lint test-suite test-tf4 docs clean bench

# Installs go through uv (pip would take about 2 minutes per environment, uv about 15 s), itself
# installed by the environment's pip; .ci/uv_flags.py hands uv this machine's pip configuration.
UV_VERSION := uv==0.13.9
UV = $(BIN)/uv pip install -q $(shell $(PY) .ci/uv_flags.py) --python

$(STAMP): pyproject.toml .ci/uv_flags.py
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q $(UV_VERSION)
	$(UV) $(BIN)/python $(TORCH) -e ".[models,adapters,cluster,figures,genome,test,docs]"
	# The Evo-1 adapter's packages without their declared flash-attn and triton (CUDA builds;
	# the Hyena code imports without them): an extra has no per-package --no-deps.
	$(UV) $(BIN)/python --no-deps evo-model==0.5 stripedhyena==0.2.2
	touch $(STAMP)

# After .venv's (two editable installs at once would both write geneb.egg-info in this folder).
$(STAMP_TF4): $(STAMP)
	test -x $(BIN_TF4)/python || $(PY) -m venv $(VENV_TF4)
	$(UV) $(BIN_TF4)/python $(TORCH) "transformers<5" -e ".[models,adapters,test]"
	touch $(STAMP_TF4)

demo: $(STAMP)
	$(BIN)/geneb-engine demo
	$(BIN)/geneb-tui
	@command -v geneb-tui >/dev/null || echo "geneb-engine and geneb-tui are in $(BIN), which is \
	not on your PATH: run \`source $(BIN)/activate\` to run them by name"

# The site's browser tests (tests/engine/test_site_browser.py, one xdist group) need Debian's
# chromium and chromium-driver; GENEB_NO_BROWSER=1 skips them, saying so.
# Checked first: a machine without them is told in one line before anything installs or runs.
# Then the checks run at once, each as soon as its environment is there (the two environments
# are built at once too); each one's output is printed whole when it ends.
test: browser-check
	$(MAKE) --no-print-directory -j4 --output-sync=target checks

test-full: browser-check
	GENEB_TEST_FULL=1 $(MAKE) --no-print-directory -j4 --output-sync=target checks

checks: lint docs test-tf4 test-suite

# The tests start several hundred Python processes (`geneb-engine` runs, their workers): each
# reads this folder's modules compiled once, not compiled again (an environment that sets
# PYTHONDONTWRITEBYTECODE would make every process compile them; Python reads it empty as unset).
test-suite test-tf4: export PYTHONDONTWRITEBYTECODE =
# --durations=25: the log of every run names its 25 slowest tests (where to look when CI grows).
# --no-loadscope-reorder: the files run in tests/conftest.py's order, slowest first (measured:
# tests/durations.json, bench/test_order.py), not xdist's by number of tests, which left the
# few long files (the monkey runs, the Ray fills) to run alone at the end.
test-suite: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=25

lint: $(STAMP)
	$(BIN)/ruff check engine store geneb_tui tests bench

browser-check:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null \
		|| [ -n "$$GENEB_NO_BROWSER" ] \
		|| { echo "make test: Chromium is missing (apt-get install chromium chromium-driver), or set GENEB_NO_BROWSER=1 to skip the browser tests" >&2; exit 1; }

test-tf4: $(STAMP_TF4)
	$(BIN_TF4)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder $(TF4_TESTS)

# --strict: a broken link or anchor, or a page left out of the nav, fails the build
# (mkdocs.yml's validation settings); NO_MKDOCS_2_WARNING quiets Material's notice about MkDocs 2.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict   # into build/site (site_dir)

bench: $(STAMP)
	$(BIN)/python bench/probe.py
	$(BIN)/python bench/embed.py
	$(BIN)/python bench/tui_startup.py
	$(BIN)/python bench/uncertainty.py
	$(BIN)/python bench/cluster.py
	$(BIN)/python bench/site.py

clean:
	rm -rf $(VENV) $(VENV_TF4) .pytest_cache
