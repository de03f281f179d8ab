"""Authentication: ``Authorization: Bearer <key>`` to a principal (key, workspace, scopes, environment).

It never waits for Kafka: the digest index ``api_key_digests`` is written in the append
transaction that issues a key, and the key's state (scopes, environment, expiry, revocation)
comes from the key's own stream in the events table, read in the same round trip. So a key
works on the request right after its creation, and a revoked key fails on the very next request,
whichever API process serves it. No cache: the one indexed query is the price of that promise.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

import asyncpg

from infra import crypto
from infra.codec import EventRegistry
from services.api.errors import ApiError

_LOOKUP = """SELECT d.key_id, d.workspace_id, e.type, e.schema, e.data
               FROM api_key_digests d JOIN events e ON e.stream_id = d.key_id
              WHERE d.digest = $1 ORDER BY e.version"""


@dataclass(frozen=True, slots=True)
class Principal:
    key_id: UUID
    workspace_id: UUID
    scopes: frozenset[str]
    environment: str  # production or sandbox

    def has(self, scope: str) -> bool:
        return "*" in self.scopes or scope in self.scopes


def missing_key() -> ApiError:
    return ApiError(401, "missing_key", "no API key: send Authorization: Bearer <key>", {},
                    headers={"WWW-Authenticate": 'Bearer realm="vaeo"'})


def invalid_key(why: str) -> ApiError:
    return ApiError(401, "invalid_key", f"invalid API key: {why}", {},
                    headers={"WWW-Authenticate": 'Bearer realm="vaeo", error="invalid_token"'})


def bearer_token(header: str | None) -> str:
    if header is None:
        raise missing_key()
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise invalid_key("the Authorization header must be 'Bearer <key>'")
    if crypto.environment_of_key(token) is None or len(token) > 200:
        raise invalid_key("not a key of this service")
    return token


async def authenticate(conn: asyncpg.Connection, registry: EventRegistry, token: str,
                       now: datetime | None = None) -> Principal:
    rows = await conn.fetch(_LOOKUP, crypto.key_digest(token))
    if not rows:
        raise invalid_key("unknown key")
    issued = None
    revoked = False
    for row in rows:
        if row["type"] == "ApiKeyIssued":
            issued = registry.upcast(row["type"], row["schema"], row["data"])
        elif row["type"] == "ApiKeyRevoked":
            revoked = True
    if issued is None:
        raise invalid_key("unknown key")
    if revoked:
        raise invalid_key("the key was revoked")
    expires_at = issued.get("expires_at")
    if expires_at and datetime.fromisoformat(expires_at) <= (now or datetime.now(UTC)):
        raise invalid_key("the key has expired")
    # asyncpg's own UUID type is not one orjson (the event codec) serialises: plain uuid.UUID.
    return Principal(key_id=UUID(bytes=rows[0]["key_id"].bytes), workspace_id=UUID(bytes=rows[0]["workspace_id"].bytes),
                     scopes=frozenset(issued["scopes"]), environment=issued["environment"])
