# The two commands of the README: `make run` (the service) and `make test` (the suite).
# Both work on a fresh machine: they create .venv, install the pinned dependencies, install the
# system packages (`vaeo provision`: ffmpeg, PostgreSQL, Java, Maven, ... from Debian, once, before
# anything runs in parallel), and the service and the test fixtures start PostgreSQL and Kafka.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)

.PHONY: run lint test test-fast bench install stop clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/vaeo provision
	$(BIN)/vaeo up $(if $(PORT),--port $(PORT),)

# The linter and the type checker (configured in pyproject.toml: [tool.ruff], [tool.mypy], strict on
# domain/ and services/application/), before any test: a lint or type error stops the run.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The suite, its files spread over parallel workers: much of a test's time is spent waiting on
# PostgreSQL, Kafka or a child process, so more workers than cores pay. A worker takes a whole
# file at a time (loadfile), so a file's module fixtures are set up once; the files come costly
# first, in the order tests/conftest.py gives them (--no-loadscope-reorder keeps it).
TEST_WORKERS ?= 4
test: $(STAMP) lint
	$(BIN)/vaeo provision --tests
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The linter, the type checker, and the unit tests, without servers (domain rules, command
# handlers on the in-memory store, the adapters' pure parts). A unit test that asks for PostgreSQL or Kafka fails (tests/unit/conftest.py).
test-fast: $(STAMP) lint
	$(BIN)/pytest -q -n 2 tests/unit $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m tests.benchmarks $(BENCH)

# Stop the local stacks (dev and test instances).
stop: $(STAMP)
	$(BIN)/vaeo stack down
	VAEO_STACK_INSTANCE=test VAEO_STACK_PG_PORT=25433 VAEO_STACK_KAFKA_PORT=29092 $(BIN)/vaeo stack down

clean:
	rm -rf $(VENV) *.egg-info
