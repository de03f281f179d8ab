"""Commands and idempotency decisions (``tests/command_contract.py``) on PostgreSQL, the commands'
process appending one by one or with group commit, as the API does."""

from __future__ import annotations

import pytest

from tests.command_contract import *  # noqa: F403
from tests.support.command_backends import PostgresBackend


@pytest.fixture(params=[False, True], ids=["one_by_one", "group_commit"])
def backend(request, pool, registry) -> PostgresBackend:
    return PostgresBackend(pool, registry, request.param)
