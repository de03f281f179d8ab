"""GET /keys, POST /keys, DELETE /keys/{id}.

The full key is returned once, by POST /keys, and never stored: the event and the digest index
hold its SHA-256 digest, the read model its first characters (``keyPrefix``). A sandbox key
manages only sandbox keys (it can neither see, create nor revoke production keys), so a sandbox
credential can never mint a production one. Revoking follows the creating rule: the target's
scopes within the caller's, and only a wildcard key revokes a wildcard key, so a lesser key
cannot lock the owner's bootstrap key out.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from domain.api_keys import SCOPES
from infra import crypto
from projections import api_keys_queries as queries
from services.api.base import SETTINGS, ApiError, Call, Route, not_found
from services.api.models import Environment, Name
from services.application.keys import IssueKey, RevokeKey

Scope = Literal[tuple(sorted(SCOPES))]  # type: ignore[valid-type]

WARNING = "Store this key now: it is shown only once and cannot be recovered."


class CreateKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name(200)
    scopes: list[Scope] = Field(min_length=1, max_length=len(SCOPES), json_schema_extra={"uniqueItems": True},
                                description="a subset of the creating key's scopes; only a wildcard key "
                                            "creates a wildcard key")
    environment: Environment = "production"
    expiresInDays: int | None = Field(default=None, ge=1, le=3650)

    @field_validator("scopes")
    @classmethod
    def _unique(cls, scopes: list[str]) -> list[str]:
        if len(set(scopes)) != len(scopes):
            raise PydanticCustomError("unique_items", "scopes must be unique")
        return scopes


class KeyItem(BaseModel):
    id: UUID
    name: str
    keyPrefix: str
    scopes: list[str]
    environment: Environment
    active: bool
    createdAt: datetime
    expiresAt: datetime | None


class KeyList(BaseModel):
    data: list[KeyItem]


class CreatedKey(BaseModel):
    id: UUID
    key: str = Field(description="the full key, shown only in this response")
    name: str
    scopes: list[str]
    environment: Environment
    keyPrefix: str
    expiresAt: datetime | None


class CreatedKeyResponse(BaseModel):
    data: CreatedKey
    warning: str = Field(alias="_warning")


class RevokedKey(BaseModel):
    id: UUID
    active: bool


class RevokedKeyResponse(BaseModel):
    data: RevokedKey


def _visible_environment(call: Call) -> str | None:
    """The environment whose keys the caller manages: its own if sandbox, any if production."""
    return "sandbox" if call.environment == "sandbox" else None


async def list_keys(call: Call) -> dict:
    now = call.app[SETTINGS].now()
    rows = await queries.every(call.pool, call.workspace_id, _visible_environment(call))
    return {"data": [
        {"id": r["id"], "name": r["name"], "keyPrefix": r["key_prefix"], "scopes": list(r["scopes"]),
         "environment": r["environment"],
         "active": r["revoked_at"] is None and (r["expires_at"] is None or r["expires_at"] > now),
         "createdAt": r["created_at"], "expiresAt": r["expires_at"]}
        for r in rows
    ]}


async def create_key(call: Call) -> dict:
    body: CreateKey = call.body
    if call.environment == "sandbox" and body.environment != "sandbox":
        raise ApiError(403, "sandbox_only", "a sandbox key can only create sandbox keys",
                       {"field": "environment", "allowed": ["sandbox"]})
    expires_at = (call.app[SETTINGS].now() + timedelta(days=body.expiresInDays)) if body.expiresInDays else None
    issued = await call.context.handle(IssueKey(
        call.workspace_id, name=body.name, scopes=list(body.scopes), environment=body.environment,
        expires_at=expires_at, issuer_scopes=sorted(call.principal.scopes), issued_by=call.principal.key_id))
    await call.read_your_writes("api_keys", issued.position)
    return {"data": {"id": issued.key_id, "key": issued.key, "name": body.name, "scopes": list(body.scopes),
                     "environment": body.environment, "keyPrefix": crypto.key_display_prefix(issued.key),
                     "expiresAt": expires_at},
            "_warning": WARNING}


async def revoke_key(call: Call) -> dict:
    try:
        key_id = UUID(call.path("id"))
    except ValueError:
        raise not_found("key", call.path("id")) from None
    _, position = await call.context.handle(RevokeKey(call.workspace_id, key_id, environment=_visible_environment(call),
                                                      revoker_scopes=sorted(call.principal.scopes)))
    await call.read_your_writes("api_keys", position)
    return {"data": {"id": key_id, "active": False}}


ROUTES = [
    Route("GET", "/keys", list_keys, scope="keys:admin", tag="Foundation", response=KeyList,
          summary="The workspace's API keys (never the full key; keyPrefix shown)"),
    Route("POST", "/keys", create_key, scope="keys:admin", tag="Foundation", status=201, body=CreateKey,
          response=CreatedKeyResponse, writes=True,
          summary="Create a key; the full key is in this response only (see _warning)"),
    Route("DELETE", "/keys/{id}", revoke_key, scope="keys:admin", tag="Foundation", response=RevokedKeyResponse,
          writes=True, errors=(403, 404, 409),
          summary="Revoke a key; it fails on the very next request. Revoking it again is 409 invalid_state. "
                  "The key's scopes must be within the caller's, and only a wildcard key revokes a wildcard "
                  "key (403 insufficient_scope)"),
]
