"""Workspaces: open one with its first key, top it up, rotate its job-notification secret."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from domain.workspaces import JobSecretVersions, Workspace
from services.application.context import Context, with_retries
from services.application.keys import IssuedKey, index_key_digest, new_key
from services.application.results import NewWorkspace, SecretRotated


@dataclass(frozen=True)
class CreateWorkspace:
    """A new workspace and its first key (``key_name``): wildcard scope, production."""

    name: str
    plan: str
    credits: int
    rate_limit: int
    key_name: str = "bootstrap"


@dataclass(frozen=True)
class AddCredits:
    workspace_id: UUID
    amount: int


@dataclass(frozen=True)
class RotateJobSecret:
    """A new version of the workspace's job-notification secret for ``environment``; the current
    one stays valid for the application's grace period."""

    workspace_id: UUID
    environment: str


async def create_workspace(command: CreateWorkspace, ctx: Context) -> NewWorkspace:
    c = command
    workspace = Workspace.open(ctx.new_id(), c.name, c.plan, c.credits, c.rate_limit)
    api_key, key = new_key(ctx, workspace.id, name=c.key_name, scopes=["*"], environment="production",
                           expires_at=None, issuer_scopes=None, issued_by=None)
    position = await ctx.save(workspace, api_key, workspace_id=workspace.id, effects=[index_key_digest(api_key)])
    return NewWorkspace(workspace.id, IssuedKey(api_key.id, key, position))


async def add_credits(command: AddCredits, ctx: Context) -> int:
    async def attempt() -> int:
        workspace = await ctx.load_owned(command.workspace_id, Workspace, command.workspace_id, "workspace")
        workspace.add_credits(command.amount)
        return await ctx.save(workspace, workspace_id=command.workspace_id)

    return await with_retries(attempt)


async def rotate_job_secret(command: RotateJobSecret, ctx: Context) -> SecretRotated:
    """Returns the versions now and the position of the event."""
    grace = timedelta(seconds=ctx.app.job_secret_grace_s)

    async def attempt() -> SecretRotated:
        workspace = await ctx.load_owned(command.workspace_id, Workspace, command.workspace_id, "workspace")
        versions = workspace.rotate_job_secret(command.environment, now=ctx.now(), grace=grace)
        return SecretRotated(versions, await ctx.save(workspace, workspace_id=command.workspace_id))

    return await with_retries(attempt)


async def job_secret_versions(ctx: Context, workspace_id: UUID, environment: str) -> JobSecretVersions:
    workspace = await ctx.load_owned(workspace_id, Workspace, workspace_id, "workspace")
    versions: JobSecretVersions = workspace.job_secret_versions(environment)
    return versions
