"""Which adapters go with a store (``adapters_for``): the in-memory twins beside an in-memory
store, the production ones beside PostgreSQL. Its own module: ``infra.adapters`` and
``infra.memory_ports`` each define one set, and this is where configuration chooses."""

from __future__ import annotations

from typing import Any

from infra.adapters import Adapters, database_adapters
from infra.memory_ports import memory_adapters
from infra.memory_store import MemoryEventStore


def adapters_for(store: Any, *, storage: Any = None) -> Adapters:
    """The adapters that go with ``store``: the in-memory twins beside an in-memory store (over its
    own ``database``), the production ones over a PostgreSQL store's pool. For the processes' parts
    that unit tests also run over an in-memory store (the worker, a reader, the sender)."""
    if isinstance(store, MemoryEventStore):
        return memory_adapters(store.database, files=storage)
    return database_adapters(store.pool, storage=storage)
