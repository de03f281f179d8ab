"""End-to-end fixtures: the real processes, as ``vaeo up`` starts them, driven over HTTP.

``service`` starts once per test module: its own database and topics (like the ``settings``
fixture), then ``python -m services.cli api`` twice (two API processes on two free ports, to
show what holds across processes: rate limit, revocation), ``relay``, ``projector`` and
``worker``, each with ``env_for(settings)``. Tests create their own workspaces, so they do not
depend on each other's data.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from infra.settings import Settings
from tests.support.service import LOG_FOLDERS, Service, running_service

SECRET_SHAPES = re.compile(rb"service_(?:live|test)_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/]{16,}")


@pytest.fixture(scope="session", autouse=True)
def no_credential_in_any_log():
    """After the whole session, no log line of any process holds an API key or a webhook secret
    (the tests send keys in malformed headers, register webhooks, rotate secrets...)."""
    yield
    found = []
    for folder in LOG_FOLDERS:
        for log in sorted(folder.glob("*.log")) if folder.is_dir() else ():
            for match in SECRET_SHAPES.finditer(log.read_bytes()):
                found.append(f"{log}: {match.group()[:24].decode(errors='replace')}...")
    assert not found, "credentials in the logs:\n" + "\n".join(found[:20])


@pytest.fixture(scope="module")
async def service(stack_settings: Settings, template_db: str, tmp_path_factory) -> AsyncIterator[Service]:
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs")) as svc:
        yield svc
