"""ApiKey: a credential bound to one workspace, a set of scopes and an environment.

The key itself never enters an event: only its SHA-256 digest and a short display prefix do.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, InvalidTransition, aggregate

SCOPES = frozenset({
    "articles:read", "articles:create", "exports:read", "videos:read", "analyses:read", "analyses:create",
    "clips:create", "jobs:read", "jobs:write", "webhooks:admin", "usage:read", "credits:read", "keys:admin",
    "agent:use", "production:read", "revival:read", "revival:create", "*",
})
ENVIRONMENTS = ("production", "sandbox")


@aggregate("ApiKey")
class ApiKey(Aggregate):
    class Issued(Aggregate.Created):
        """A credential now exists for one workspace, scope set and environment. It carries the key's SHA-256 digest and
        display prefix, never the key, so the key can be listed, audited and revoked while only its holder can present
        it.

        Read by the `api_keys` read model (GET /keys). Authentication does not wait for it: the digest index is written
        in the same transaction, and the key's state is read from its own stream."""

        published_as = "ApiKeyIssued"
        key_id: UUID
        workspace_id: UUID
        name: str
        scopes: list[str]
        environment: str
        key_prefix: str
        key_digest: str
        expires_at: datetime | None
        issued_by: UUID | None

    class Revoked(Aggregate.Event):
        """A key stops working, with the reason: it must fail on the next request on every API process and its
        revocation stays on record.

        Read by the `api_keys` read model (GET /keys shows it revoked); authentication reads the key's own stream, so it
        is refused at once."""

        published_as = "ApiKeyRevoked"
        reason: str

    @staticmethod
    def create_id(key_id: UUID) -> UUID:
        return key_id

    @event(Issued)
    def __init__(self, key_id: UUID, workspace_id: UUID, name: str, scopes: list[str], environment: str,
                 key_prefix: str, key_digest: str, expires_at: datetime | None, issued_by: UUID | None):
        self.workspace_id = workspace_id
        self.name = name
        self.scopes = list(scopes)
        self.environment = environment
        self.key_prefix = key_prefix
        self.key_digest = key_digest
        self.expires_at = expires_at
        self.issued_by = issued_by
        self.active = True

    @classmethod
    def issue(cls, *, key_id: UUID, workspace_id: UUID, name: str, scopes: list[str], environment: str,
              key_prefix: str, key_digest: str, expires_at: datetime | None,
              issuer_scopes: list[str] | None, issued_by: UUID | None) -> ApiKey:
        """Issue a key. ``issuer_scopes`` None means an operator (the CLI), bound by nothing."""
        if not name.strip():
            raise DomainError("name must not be empty", field="name")
        if not scopes:
            raise DomainError("at least one scope is required", field="scopes")
        if len(set(scopes)) != len(scopes):
            raise DomainError("scopes must be unique", field="scopes")
        unknown = sorted(set(scopes) - SCOPES)
        if unknown:
            raise DomainError(f"unknown scopes: {', '.join(unknown)}", field="scopes", unknown=unknown)
        if environment not in ENVIRONMENTS:
            raise DomainError("environment must be production or sandbox", field="environment")
        if issuer_scopes is not None:
            check_scopes_subset(scopes, issuer_scopes, action="create")
        return cls(key_id=key_id, workspace_id=workspace_id, name=name, scopes=list(scopes),
                   environment=environment, key_prefix=key_prefix, key_digest=key_digest,
                   expires_at=expires_at, issued_by=issued_by)

    def revoke(self, reason: str = "revoked by API", *, revoker_scopes: list[str] | None = None) -> None:
        """Revoke the key. The creating rule binds the revoker too: the key's scopes must be within
        ``revoker_scopes`` and only a wildcard key revokes a wildcard key, so a lesser key cannot
        lock the owner out. ``revoker_scopes`` None means an operator (the CLI), bound by nothing."""
        if revoker_scopes is not None:
            check_scopes_subset(self.scopes, revoker_scopes, action="revoke")
        if not self.active:
            raise InvalidTransition("the key is already revoked", key_id=str(self.id))
        self._revoked(reason=reason)

    @event(Revoked)
    def _revoked(self, reason: str) -> None:
        self.active = False


class ScopeNotGranted(DomainError):
    code = "insufficient_scope"
    status = 403


def check_scopes_subset(requested: list[str], issuer: list[str], *, action: str = "create") -> None:
    """The target key's scopes must be a subset of the acting key's; only a wildcard key creates
    (``action="create"``) or revokes (``action="revoke"``) a wildcard key."""
    if "*" in requested and "*" not in issuer:
        raise ScopeNotGranted(f"only a wildcard key can {action} a wildcard key", field="scopes")
    if "*" in issuer:
        return
    extra = sorted(set(requested) - set(issuer))
    if extra:
        raise ScopeNotGranted(f"scopes not held by the {action[:-1]}ing key: {', '.join(extra)}",
                              field="scopes", not_granted=extra)
