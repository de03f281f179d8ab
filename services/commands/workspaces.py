"""Workspaces: open one with its first key, top it up, rotate its job-notification secret."""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import UUID, uuid4

from domain.workspaces import JobSecretVersions, Workspace
from infra.eventstore import EventStore
from services.commands.common import load_owned, with_retries
from services.commands.keys import IssuedKey, index_key_digest, new_key


async def create_workspace(store: EventStore, *, name: str, plan: str, credits: int, rate_limit: int,
                           key_name: str = "bootstrap", meta: dict | None = None) -> tuple[UUID, IssuedKey]:
    """A new workspace and its first key: wildcard scope, production."""
    workspace = Workspace.open(uuid4(), name, plan, credits, rate_limit)
    api_key, key = new_key(workspace.id, name=key_name, scopes=["*"], environment="production", expires_at=None,
                           issuer_scopes=None, issued_by=None)
    position = await store.save(workspace, api_key, workspace_id=workspace.id, meta=meta,
                                before=[index_key_digest(api_key.key_digest, api_key.id, workspace.id)])
    return workspace.id, IssuedKey(api_key.id, key, position)


async def add_credits(store: EventStore, workspace_id: UUID, amount: int, meta: dict | None = None) -> int:
    async def attempt() -> int:
        workspace = await load_owned(store, workspace_id, Workspace, workspace_id, "workspace")
        workspace.add_credits(amount)
        return await store.save(workspace, workspace_id=workspace_id, meta=meta)

    return await with_retries(attempt)


async def rotate_workspace_job_secret(store: EventStore, workspace_id: UUID, environment: str, *, grace: timedelta,
                                      now: datetime, meta: dict | None = None) -> tuple[JobSecretVersions, int]:
    """A new version of the workspace's job-notification secret for ``environment``; the current
    one stays valid for ``grace``. Returns the versions now and the position of the event."""

    async def attempt() -> tuple[JobSecretVersions, int]:
        workspace = await load_owned(store, workspace_id, Workspace, workspace_id, "workspace")
        versions = workspace.rotate_job_secret(environment, now=now, grace=grace)
        return versions, await store.save(workspace, workspace_id=workspace_id, meta=meta)

    return await with_retries(attempt)


async def job_secret_versions(store: EventStore, workspace_id: UUID, environment: str) -> JobSecretVersions:
    workspace = await load_owned(store, workspace_id, Workspace, workspace_id, "workspace")
    return workspace.job_secret_versions(environment)
