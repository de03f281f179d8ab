"""API keys: issue one (its digest indexed with its events), revoke one (its idempotency keys and
their stored answers deleted with its revocation)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from domain.api_keys import ApiKey
from infra import crypto
from infra.effects import KeyAnswersDropped, KeyDigest
from services.application.context import Context, with_retries
from services.application.results import Saved


@dataclass(frozen=True)
class IssuedKey:
    key_id: UUID
    key: str  # shown once, never stored
    position: int


@dataclass(frozen=True)
class IssueKey:
    """A new key of the workspace, issued by ``issued_by`` (whose scopes bind the new key's)."""

    workspace_id: UUID
    name: str
    scopes: list[str]
    environment: str
    expires_at: datetime | None = None
    issuer_scopes: list[str] | None = None
    issued_by: UUID | None = None


@dataclass(frozen=True)
class RevokeKey:
    """Revoke a key of the workspace; ``environment`` limits it to that environment's keys (None:
    any), ``revoker_scopes`` binds it by the creating rule (``ApiKey.revoke``)."""

    workspace_id: UUID
    key_id: UUID
    environment: str | None = None
    revoker_scopes: list[str] | None = None


def index_key_digest(api_key: ApiKey) -> KeyDigest:
    """The key's digest, written with the key's events: a new key authenticates on the next
    request, on every API process, without waiting for Kafka."""
    return KeyDigest(api_key.key_digest, api_key.id, api_key.workspace_id)


def new_key(ctx: Context, workspace_id: UUID, *, name: str, scopes: list[str], environment: str,
            expires_at: datetime | None, issuer_scopes: list[str] | None,
            issued_by: UUID | None) -> tuple[ApiKey, str]:
    key = crypto.new_api_key(environment)
    api_key = ApiKey.issue(
        key_id=ctx.new_id(), workspace_id=workspace_id, name=name, scopes=scopes, environment=environment,
        key_prefix=crypto.key_display_prefix(key), key_digest=crypto.key_digest(key), expires_at=expires_at,
        issuer_scopes=issuer_scopes, issued_by=issued_by)
    return api_key, key


async def issue_key(command: IssueKey, ctx: Context) -> IssuedKey:
    c = command
    api_key, key = new_key(ctx, c.workspace_id, name=c.name, scopes=c.scopes, environment=c.environment,
                           expires_at=c.expires_at, issuer_scopes=c.issuer_scopes, issued_by=c.issued_by)
    position = await ctx.save(api_key, workspace_id=c.workspace_id, effects=[index_key_digest(api_key)])
    return IssuedKey(api_key.id, key, position)


async def revoke_key(command: RevokeKey, ctx: Context) -> Saved[ApiKey]:
    c = command

    async def attempt() -> Saved[ApiKey]:
        api_key = await ctx.load_in(c.key_id, ApiKey, c.workspace_id, c.environment, "key")
        api_key.revoke(revoker_scopes=c.revoker_scopes)
        # A revoked key's stored answers (a key it created, a webhook secret) are kept for nobody.
        dropped = KeyAnswersDropped(c.workspace_id, api_key.environment, api_key.id)
        return Saved(api_key, await ctx.save(api_key, workspace_id=c.workspace_id, effects=[dropped]))

    return await with_retries(attempt)
