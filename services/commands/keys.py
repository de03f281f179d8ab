"""API keys: issue (the digest indexed in the append's transaction) and revoke."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID, uuid4

import asyncpg

from domain.api_keys import ApiKey
from infra import crypto
from infra.eventstore import EventStore
from services.commands.common import load_in, load_owned, with_retries


@dataclass(frozen=True)
class IssuedKey:
    key_id: UUID
    key: str  # shown once, never stored
    position: int


def index_key_digest(digest: str, key_id: UUID, workspace_id: UUID):
    """The key's digest in ``api_key_digests``, written with the key's events: a new key
    authenticates on the next request, on every API process, without waiting for Kafka."""

    async def effect(conn: asyncpg.Connection) -> None:
        await conn.execute("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ($1, $2, $3)",
                           digest, key_id, workspace_id)

    return effect


def new_key(workspace_id: UUID, *, name: str, scopes: list[str], environment: str, expires_at: datetime | None,
            issuer_scopes: list[str] | None, issued_by: UUID | None) -> tuple[ApiKey, str]:
    key = crypto.new_api_key(environment)
    api_key = ApiKey.issue(
        key_id=uuid4(), workspace_id=workspace_id, name=name, scopes=scopes, environment=environment,
        key_prefix=crypto.key_display_prefix(key), key_digest=crypto.key_digest(key), expires_at=expires_at,
        issuer_scopes=issuer_scopes, issued_by=issued_by)
    return api_key, key


async def issue_key(store: EventStore, workspace_id: UUID, *, name: str, scopes: list[str], environment: str,
                    expires_at: datetime | None, issuer_scopes: list[str] | None,
                    issued_by: UUID | None, meta: dict | None = None) -> IssuedKey:
    api_key, key = new_key(workspace_id, name=name, scopes=scopes, environment=environment, expires_at=expires_at,
                           issuer_scopes=issuer_scopes, issued_by=issued_by)
    position = await store.save(api_key, workspace_id=workspace_id, meta=meta,
                                before=[index_key_digest(api_key.key_digest, api_key.id, workspace_id)])
    return IssuedKey(api_key.id, key, position)


async def revoke_key(store: EventStore, workspace_id: UUID, key_id: UUID, meta: dict | None = None) -> int:
    async def attempt() -> int:
        api_key = await load_owned(store, key_id, ApiKey, workspace_id, "key")
        api_key.revoke()
        return await store.save(api_key, workspace_id=workspace_id, meta=meta)

    return await with_retries(attempt)


async def revoke_key_in(store: EventStore, workspace_id: UUID, key_id: UUID, *, environment: str | None,
                        revoker_scopes: list[str] | None = None, meta: dict | None = None) -> tuple[ApiKey, int]:
    """Revoke a key of the workspace; ``environment`` limits it to that environment's keys (None: any),
    ``revoker_scopes`` binds it by the creating rule (``ApiKey.revoke``)."""

    async def attempt() -> tuple[ApiKey, int]:
        api_key = await load_in(store, key_id, ApiKey, workspace_id, environment, "key")
        api_key.revoke(revoker_scopes=revoker_scopes)
        return api_key, await store.save(api_key, workspace_id=workspace_id, meta=meta)

    return await with_retries(attempt)
