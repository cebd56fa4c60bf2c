# One command per habit. Every target builds .venv first if it is missing.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
CONFIG  ?= samples/brief.toml
DATE    ?= 2025-08-06

export PREFECT_SERVER_ANALYTICS_ENABLED = false
export GX_ANALYTICS_ENABLED = false
export HF_HUB_OFFLINE = 1
export NO_MKDOCS_2_WARNING = 1

.PHONY: setup run test test-slow lint bench clean

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

setup: $(STAMP)

# torch first, pinned: 2.13.0 is the CPU build this machine keeps on disk (any other
# request pulls a multi-GB CUDA build); then everything else at the locked versions.
# Each step says what it installs and roughly how long it takes (a first setup: about 10 minutes).
$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@echo "setting up $(VENV) (first time only, about 10 minutes in all): upgrading pip (about 10 s)"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing torch 2.13.0, the CPU build (about 200 MB: 1 to 4 minutes)"
	$(BIN)/python -m pip install --quiet torch==2.13.0
	@echo "installing dailybrief and the $$(grep -c '==' requirements.lock) packages of requirements.lock (3 to 8 minutes)"
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)
	@echo "$(VENV) is ready; the first run also loads the embedding model once (about 40 s)"

run: $(STAMP)
	$(BIN)/brief run --config $(CONFIG) --date $(DATE) --show
	@echo "brief lives in $(VENV)/bin: 'source $(VENV)/bin/activate' puts it on your PATH, and 'export BRIEF_CONFIG=$(abspath $(CONFIG))' lets you leave out --config"

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=15

# The fanned-out backfill over two weeks of real days (make test runs it over two).
test-slow: $(STAMP)
	BRIEF_TEST_WORKER_DAYS=14 $(BIN)/python -m pytest tests/e2e/test_prefect_stack.py -k fans_out

lint: $(STAMP)
	$(BIN)/ruff check flows ops tasks storage validations tests bench
	$(BIN)/ruff format --check flows ops tasks storage validations tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/site

# Each script prints its table; the latest output of each is kept in docs/benchmarks/.
bench: $(STAMP)
	@test -d ../shared/data || { echo 'make bench reads ../shared/data (the real feeds and labels), absent here: nothing rewritten' >&2; exit 2; }
	mkdir -p docs/benchmarks
	$(BIN)/python bench/eventstore.py | tee docs/benchmarks/eventstore.md
	$(BIN)/python bench/dedup_quality.py | tee docs/benchmarks/dedup_quality.md
	$(BIN)/python bench/editorial.py | tee docs/benchmarks/editorial.md
	$(BIN)/python bench/daily_run.py | tee docs/benchmarks/daily_run.md
	$(BIN)/python bench/export.py | tee docs/benchmarks/export.md
	$(BIN)/python bench/history.py | tee docs/benchmarks/history.md
	$(BIN)/python bench/aiweb_month.py | tee docs/benchmarks/aiweb_month.md
	$(BIN)/python bench/llm.py | tee docs/benchmarks/llm.md
	$(BIN)/python bench/multilingual.py | tee docs/benchmarks/multilingual.md
	$(BIN)/python bench/purge.py | tee docs/benchmarks/purge.md
	$(BIN)/python bench/shadow.py | tee docs/benchmarks/shadow.md
	$(BIN)/python bench/collect_sources.py | tee docs/benchmarks/collect_sources.md
	$(BIN)/python bench/backfill_floor.py | tee docs/benchmarks/backfill_floor.md
	$(BIN)/python bench/model_memory.py | tee docs/benchmarks/model_memory.md
	{ $(BIN)/python bench/desk.py; echo; $(BIN)/python bench/desk.py --month 2026-03; } | tee docs/benchmarks/desk.md

clean:
	rm -rf $(VENV) var
