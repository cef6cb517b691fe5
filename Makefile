# Wharf: `make run` (embedded server) and `make test` (the test suite).
#
# Both create .venv with `python3 -m venv` when it is missing and install the project into
# it. An install runs again only when pyproject.toml is newer than its stamp file, so a
# second `make run` / `make test` starts at once.
#
#   make run                    serve on 127.0.0.1:8080 (WHARF_HOST, WHARF_PORT and every
#                               other WHARF_* variable in the environment are honoured)
#   make test                   the whole suite, on six xdist workers
#   make test PYTEST_ARGS=...   pass arguments to pytest instead of the default
#                               `-n 6 --durations=25` (the 25 slowest tests listed at the
#                               end: the suite's budget is 15 minutes in CI)
#                               (e.g. PYTEST_ARGS='-n 0 -k migrations')
#   make lint                   ruff (rules in pyproject.toml [tool.ruff]) and mypy, strict,
#                               on every package ([tool.mypy]); both must pass
#   make lint-imports           check the layer contracts ([tool.importlinter] in
#                               pyproject.toml; docs/architecture.md, "Layers")

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Six xdist workers on the CI machine's two cores: most tests wait (on subprocesses they
# start, servers, long-polls, leases), so two workers kept the cores 27-73 % busy. Measured
# on the same tree (issue 35): -n 2 1,118-1,586 s, -n 4 787 s with helpers' tests loading the
# machine, 1,158 CPU-s in 792 s; later (2026-12-07, quiet) -n 6 605 s and -n 8 617 s
# against -n 4 958-1,033 s. --durations=25 lists the slowest tests of each run.
# --dist worksteal: a worker that runs out of tests takes some of another's, so the long
# process tests do not leave one worker busy alone at the end.
PYTEST_ARGS ?= -n 6 --dist worksteal --durations=25

.DEFAULT_GOAL := help
.PHONY: help run test test-deps lint lint-imports install install-dev clean

help:
	@echo "make run    serve Wharf on 127.0.0.1:8080 (embedded: SQLite + files under ./var)"
	@echo "make test   run the test suite"
	@echo "make lint   ruff and mypy"
	@echo "make lint-imports   check the layer contracts (import-linter)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Runtime dependencies only.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

# Runtime + test dependencies (a superset of the above, so it refreshes both stamps).
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: $(VENV)/.installed
	$(BIN)/wharf serve

# The npm packages some tests run, installed into ~/.cache/wharf-tests or
# $$WHARF_TEST_NODE_CACHE: the real OpenID provider the external sign-in tests start
# (node-oidc-provider: tests/support/oidc_provider.py) and the TypeScript client's
# dependencies (clients/typescript/package-lock.json: tests/support/ts_client.py).
# Without npm the tests install nothing here and say so.
test-deps: $(VENV)/.installed-dev
	@if command -v npm >/dev/null 2>&1; then $(BIN)/python -m tests.support.oidc_provider \
	&& $(BIN)/python -m tests.support.ts_client; \
	else echo "make: npm is missing: the external sign-in and TypeScript client tests will skip (or fail in CI)"; fi

# Bytecode caches are written (and gitignored) even where PYTHONDONTWRITEBYTECODE is set:
# every xdist worker collects the whole suite and the tests start hundreds of `wharf`
# processes and commands, and without a cache each one compiles the code again (a
# collection took 18.7 CPU-s per worker without it, 6.1 with it; a `wharf api` start
# 2.31 CPU-s against 1.84: docs/benchmarks.md, tests/benchmarks/bench_startup.py).
test: $(VENV)/.installed-dev test-deps
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q $(PYTEST_ARGS)

# Both run even when the first fails, so one pass reports everything; either failing fails.
lint: $(VENV)/.installed-dev
	@status=0; \
	$(BIN)/ruff check . || status=1; \
	$(BIN)/mypy || status=1; \
	exit $$status
.PHONY: lint-imports
lint-imports: $(VENV)/.installed-dev
	$(BIN)/lint-imports --no-logo

clean:
	rm -rf $(VENV) build *.egg-info
