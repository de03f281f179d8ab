# The two commands of the README: `make run` (the service) and `make test` (the suite).
# Both work on a fresh machine: they create .venv, install the pinned dependencies, and the
# service and the test fixtures provision PostgreSQL (Debian packages) and Kafka (Maven) themselves.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)

.PHONY: run test test-fast bench install stop clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/vaeo up $(if $(PORT),--port $(PORT),)

test: $(STAMP)
	$(BIN)/pytest -q $(PYTEST_ARGS)

# Everything but the slow fault-injection tests.
test-fast: $(STAMP)
	$(BIN)/pytest -q -m 'not slow' $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m tests.benchmarks $(BENCH)

# Stop the local stacks (dev and test instances).
stop: $(STAMP)
	$(BIN)/vaeo stack down
	VAEO_STACK_INSTANCE=test VAEO_STACK_PG_PORT=25433 VAEO_STACK_KAFKA_PORT=29092 $(BIN)/vaeo stack down

clean:
	rm -rf $(VENV) *.egg-info
