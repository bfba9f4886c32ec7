# The two commands a newcomer needs: `make run` and `make test`. Both set up first.
SHELL := /bin/bash
export DAGSTER_HOME ?= $(CURDIR)/dagster_home
EXPERIMENT ?= experiments/demo.yaml
# The bot's endurance window in `make run` (seconds): short, so the demo takes minutes.
ENDURANCE ?= 12
# Tests run on every core (more workers than cores made the browser tests' timing flaky
# for a minute's gain). worksteal: a worker that runs dry takes queued tests from a busy
# one; with the default `load` one worker was left playing the bot corpus alone for
# minutes. `make test PYTEST_ARGS="-m 'not slow'"` skips the slow ones.
PYTEST_ARGS ?=
TEST_WORKERS ?= auto

.PHONY: setup run test lint format ui bench clean

setup:
	@bash scripts/setup.sh

run: setup
	.venv/bin/bench run $(EXPERIMENT) --endurance-seconds $(ENDURANCE)

test: setup lint
	.venv/bin/pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format: setup
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

ui: setup
	.venv/bin/bench ui

bench: setup
	.venv/bin/python benchmarks/run_all.py

clean:
	rm -rf data .pytest_cache .ruff_cache
