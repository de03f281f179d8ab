"""Workspace credits, API key issuance and revocation, media: given events, when a command, then events."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from eventsourcing.domain import Aggregate

from domain.api_keys import SCOPES, ApiKey, ScopeNotGranted
from domain.base import DomainError, InsufficientCredits, InvalidTransition
from domain.media import Media, media_stream_id
from domain.workspaces import Workspace

WORKSPACE = uuid.UUID("22222222-2222-4222-8222-222222222222")
JOB = uuid.UUID("33333333-3333-4333-8333-333333333333")


def then(agg: Aggregate) -> list[Aggregate.Event]:
    return list(agg.collect_events())


def workspace(credits_total: int = 100, used: int = 0) -> Workspace:
    """Given: a workspace opened with ``credits_total`` that has spent ``used``."""
    ws = Workspace.open(WORKSPACE, "Acme", "pro", credits_total, 60)
    if used:
        ws.charge(used, "earlier analysis")
    ws.collect_events()
    return ws


# ---- workspace


def test_open_records_workspace_created() -> None:
    ws = Workspace.open(WORKSPACE, "Acme", "pro", 500, 120)

    [ev] = then(ws)
    assert isinstance(ev, Workspace.Created)
    assert ev.originator_id == WORKSPACE
    assert (ev.name, ev.plan, ev.credits_total, ev.rate_limit_per_min) == ("Acme", "pro", 500, 120)
    assert (ws.credits_balance, ws.credits_used) == (500, 0)


@pytest.mark.parametrize(("args", "field"), [
    (("  ", "pro", 10, 60), "name"),
    (("Acme", "pro", -1, 60), "credits_total"),
    (("Acme", "pro", 10, 0), "rate_limit_per_min"),
])
def test_open_refuses_invalid_workspaces(args: tuple, field: str) -> None:
    with pytest.raises(DomainError) as err:
        Workspace.open(WORKSPACE, *args)
    assert err.value.details["field"] == field


def test_charge_records_credits_charged_and_lowers_the_balance() -> None:
    ws = workspace(100)

    ws.charge(30, "analysis", job_id=JOB)

    [ev] = then(ws)
    assert isinstance(ev, Workspace.CreditsCharged)
    assert (ev.amount, ev.reason, ev.job_id) == (30, "analysis", JOB)
    assert (ws.credits_used, ws.credits_balance) == (30, 70)


def test_charge_may_spend_the_whole_balance() -> None:
    ws = workspace(100, used=60)

    ws.charge(40, "analysis")

    [ev] = then(ws)
    assert ev.amount == 40
    assert ws.credits_balance == 0


def test_charge_beyond_the_balance_is_refused_with_the_figures() -> None:
    ws = workspace(100, used=60)

    with pytest.raises(InsufficientCredits) as err:
        ws.charge(41, "analysis")

    assert err.value.status == 402
    assert err.value.details == {"required": 41, "balance": 40}
    assert then(ws) == []
    assert ws.credits_balance == 40


@pytest.mark.parametrize("amount", [0, -5])
def test_charge_must_be_positive(amount: int) -> None:
    ws = workspace(100)

    with pytest.raises(DomainError) as err:
        ws.charge(amount, "analysis")
    assert not isinstance(err.value, InsufficientCredits)
    assert then(ws) == []


def test_refund_records_credits_refunded_and_restores_the_balance() -> None:
    ws = workspace(100, used=50)

    ws.refund(20, "job failed", job_id=JOB)

    [ev] = then(ws)
    assert isinstance(ev, Workspace.CreditsRefunded)
    assert (ev.amount, ev.reason, ev.job_id) == (20, "job failed", JOB)
    assert (ws.credits_used, ws.credits_balance) == (30, 70)


def test_refund_never_exceeds_what_was_used() -> None:
    ws = workspace(100, used=10)

    ws.refund(25, "job failed")

    [ev] = then(ws)
    assert ev.amount == 10
    assert (ws.credits_used, ws.credits_balance) == (0, 100)


@pytest.mark.parametrize("amount", [0, -1])
def test_refund_must_be_positive(amount: int) -> None:
    ws = workspace(100, used=10)

    with pytest.raises(DomainError):
        ws.refund(amount, "oops")
    assert then(ws) == []


def test_add_credits_raises_the_total() -> None:
    ws = workspace(100, used=100)

    ws.add_credits(50)

    [ev] = then(ws)
    assert isinstance(ev, Workspace.CreditsAdded)
    assert ev.amount == 50
    assert (ws.credits_total, ws.credits_balance) == (150, 50)


def test_added_credits_can_be_charged() -> None:
    ws = workspace(10, used=10)
    ws.add_credits(5)
    ws.collect_events()

    ws.charge(5, "clip")

    [ev] = then(ws)
    assert ev.amount == 5


@pytest.mark.parametrize("amount", [0, -10])
def test_add_credits_must_be_positive(amount: int) -> None:
    ws = workspace(100)

    with pytest.raises(DomainError):
        ws.add_credits(amount)
    assert then(ws) == []


# ---- API keys

DIGEST = "ab" * 32


def issue(scopes: list[str], issuer_scopes: list[str] | None = None, **overrides) -> ApiKey:
    args = {
        "key_id": uuid.uuid4(), "workspace_id": WORKSPACE, "name": "ci", "scopes": scopes,
        "environment": "production", "key_prefix": "service_live_abcdefg", "key_digest": DIGEST,
        "expires_at": None, "issuer_scopes": issuer_scopes, "issued_by": None,
    }
    args.update(overrides)
    return ApiKey.issue(**args)


def test_issue_records_api_key_issued_with_the_digest_only() -> None:
    key_id, issuer = uuid.uuid4(), uuid.uuid4()
    expires = datetime(2031, 5, 1, tzinfo=UTC)

    key = issue(["jobs:read", "jobs:write"], ["*"], key_id=key_id, environment="sandbox", expires_at=expires,
                issued_by=issuer)

    [ev] = then(key)
    assert isinstance(ev, ApiKey.Issued)
    assert (ev.originator_id, ev.key_id, ev.workspace_id) == (key_id, key_id, WORKSPACE)
    assert (ev.name, ev.scopes, ev.environment) == ("ci", ["jobs:read", "jobs:write"], "sandbox")
    assert (ev.key_prefix, ev.key_digest, ev.expires_at, ev.issued_by) == (
        "service_live_abcdefg", DIGEST, expires, issuer)
    assert key.active


@pytest.mark.parametrize(("overrides", "field"), [
    ({"scopes": []}, "scopes"),
    ({"scopes": ["jobs:read", "jobs:read"]}, "scopes"),
    ({"scopes": ["jobs:read", "root:everything"]}, "scopes"),
    ({"name": "   "}, "name"),
    ({"environment": "staging"}, "environment"),
])
def test_issue_refuses_invalid_keys(overrides: dict, field: str) -> None:
    args = {"scopes": ["jobs:read"], **overrides}
    with pytest.raises(DomainError) as err:
        issue(args.pop("scopes"), None, **args)
    assert err.value.details["field"] == field
    assert err.value.status == 400


def test_issue_names_the_unknown_scopes() -> None:
    with pytest.raises(DomainError) as err:
        issue(["zeta:x", "jobs:read", "alpha:y"])
    assert err.value.details["unknown"] == ["alpha:y", "zeta:x"]


def test_issue_within_the_issuers_scopes() -> None:
    key = issue(["jobs:read"], ["jobs:read", "jobs:write"])

    [ev] = then(key)
    assert ev.scopes == ["jobs:read"]


def test_issue_beyond_the_issuers_scopes_is_refused() -> None:
    with pytest.raises(ScopeNotGranted) as err:
        issue(["jobs:read", "webhooks:admin", "keys:admin"], ["jobs:read", "keys:admin"])

    assert (err.value.status, err.value.code) == (403, "insufficient_scope")
    assert err.value.details["not_granted"] == ["webhooks:admin"]


def test_only_a_wildcard_key_creates_a_wildcard_key() -> None:
    every_named_scope = sorted(SCOPES - {"*"})

    with pytest.raises(ScopeNotGranted):
        issue(["*"], every_named_scope)

    [ev] = then(issue(["*"], ["*"]))
    assert ev.scopes == ["*"]


def test_a_wildcard_issuer_grants_any_named_scope() -> None:
    key = issue(["webhooks:admin", "agent:use"], ["*"])

    [ev] = then(key)
    assert ev.scopes == ["webhooks:admin", "agent:use"]


def test_an_operator_is_bound_by_no_issuer_scopes() -> None:
    key = issue(["*"], issuer_scopes=None)

    [ev] = then(key)
    assert ev.scopes == ["*"]


def test_only_a_wildcard_key_revokes_a_wildcard_key() -> None:
    owner = issue(["*"], ["*"])
    owner.collect_events()

    with pytest.raises(ScopeNotGranted) as err:
        owner.revoke(revoker_scopes=["keys:admin"])
    assert (err.value.status, err.value.code) == (403, "insufficient_scope")
    assert "wildcard" in err.value.message
    assert owner.active and then(owner) == []

    owner.revoke(revoker_scopes=["*"])
    assert not owner.active


def test_revoking_a_key_with_scopes_beyond_the_revokers_is_refused() -> None:
    key = issue(["jobs:read", "webhooks:admin"], ["*"])
    key.collect_events()

    with pytest.raises(ScopeNotGranted) as err:
        key.revoke(revoker_scopes=["jobs:read", "keys:admin"])
    assert err.value.details["not_granted"] == ["webhooks:admin"]
    assert key.active

    key.revoke(revoker_scopes=["jobs:read", "keys:admin", "webhooks:admin"])
    assert not key.active


def test_revoke_records_api_key_revoked() -> None:
    key = issue(["jobs:read"])
    key.collect_events()

    key.revoke("leaked")

    [ev] = then(key)
    assert isinstance(ev, ApiKey.Revoked)
    assert (ev.reason, ev.originator_version) == ("leaked", 2)
    assert not key.active


def test_revoking_twice_is_refused() -> None:
    key = issue(["jobs:read"])
    key.revoke()
    key.collect_events()

    with pytest.raises(InvalidTransition) as err:
        key.revoke()
    assert err.value.status == 409
    assert then(key) == []


# ---- media


def test_create_media_records_media_created_on_a_deterministic_stream() -> None:
    media = Media.create(media_id=42, workspace_id=WORKSPACE, environment="production", name="  Podcast  ",
                         description="weekly", category="tech", language="en")

    [ev] = then(media)
    assert isinstance(ev, Media.Created)
    assert ev.originator_id == media_stream_id(42)
    assert (ev.media_id, ev.workspace_id, ev.environment) == (42, WORKSPACE, "production")
    assert (ev.name, ev.description, ev.category, ev.language) == ("Podcast", "weekly", "tech", "en")


def test_media_defaults_to_french_without_description_or_category() -> None:
    media = Media.create(media_id=1, workspace_id=WORKSPACE, environment="sandbox", name="Talks")

    [ev] = then(media)
    assert (ev.description, ev.category, ev.language) == (None, None, "fr")


def test_media_stream_id_is_stable_per_media_id() -> None:
    assert media_stream_id(7) == media_stream_id(7)
    assert media_stream_id(7) != media_stream_id(8)


def test_media_requires_a_name() -> None:
    with pytest.raises(DomainError) as err:
        Media.create(media_id=1, workspace_id=WORKSPACE, environment="production", name=" ")
    assert err.value.details["field"] == "name"
