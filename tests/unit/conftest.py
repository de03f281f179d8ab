"""Unit tests run without servers (``make test-fast``): domain rules, command handlers on the
in-memory store, pure functions of the adapters. A unit test that asks for the real stack fails
here instead of starting PostgreSQL and Kafka."""

import pytest

from domain.export_source import ExportSource
from tests.support.exports import export_source


@pytest.fixture(scope="session")
def stack_settings():
    raise pytest.UsageError("a unit test needs no PostgreSQL or Kafka: move it to tests/integration")


@pytest.fixture(scope="module")
def source() -> ExportSource:
    """An article to export (``export_source``), once per module: the export tests render it."""
    return export_source()
