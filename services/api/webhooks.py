"""POST /webhooks, GET /webhooks, DELETE /webhooks/{id}, POST /webhooks/{id}/test, and the
extensions GET /webhooks/{id}/deliveries, POST /webhooks/{id}/deliveries/{delivery_id}/resend,
GET /webhooks/job-secret, POST /webhooks/job-secret/rotate.

The secret is returned once, by POST /webhooks: the event holds it encrypted (AES-GCM under the
service key, the webhook id as associated data), the read model not at all. The destination is
checked by ``infra.netguard`` at registration, by the test endpoint just before it sends, and by
the dispatcher before every attempt. A webhook belongs to its key's workspace and environment;
another workspace's (or environment's) webhook answers 404 exactly like a missing one.

The job-notification secret (which signs deliveries to jobs' per-request ``webhook_url``) is one
per workspace and environment, derived from the service key and a version; a rotation appends
``JobSecretRotated`` (the new version and when the previous one stops being valid: no secret) to
the workspace's stream.
See docs/webhooks.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from domain.webhook_payloads import EVENT_NAMES
from domain.webhooks import TEST_EVENT
from domain.workspaces import JobSecretVersions
from infra.settings import Settings
from infra.webhook_http import (
    job_notification_secret,
)
from projections import webhooks_queries as queries
from services.api.base import HEX_ID, SETTINGS, Call, Route, not_found
from services.api.destinations import check_destination
from services.api.errors import found
from services.application.webhooks import (
    DeleteWebhook,
    RegisterWebhook,
    ResendDelivery,
    SendWebhookTest,
)
from services.application.workspaces import RotateJobSecret, job_secret_versions

WebhookEvent = Literal[EVENT_NAMES]  # type: ignore[valid-type]
WARNING = "Store this secret now: it is shown only once. It signs every delivery (see docs/webhooks.md)."


# ------------------------------------------------------------------------------- models


class CreateWebhook(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=9, max_length=2048, pattern=r"^https://[^\u0000]*$",
                     json_schema_extra={"format": "uri"},
                     description="a public HTTPS destination (checked after DNS resolution)")
    events: list[WebhookEvent] | None = Field(default=None, min_length=1, max_length=len(EVENT_NAMES),
                                              json_schema_extra={"uniqueItems": True},
                                              description="the events to receive; all of them when omitted")

    @field_validator("events")
    @classmethod
    def _unique(cls, events: list[str] | None) -> list[str] | None:
        if events is not None and len(set(events)) != len(events):
            raise PydanticCustomError("unique_items", "events must be unique")
        return events


class CreatedWebhook(BaseModel):
    id: UUID
    url: str
    secret: str = Field(description="whsec_<base64>; shown only in this response")
    events: list[str]


class CreatedWebhookResponse(BaseModel):
    data: CreatedWebhook
    warning: str = Field(alias="_warning")


class WebhookItem(BaseModel):
    id: UUID
    url: str
    events: list[str]
    status: str = Field(description="active, or disabled (the receiver answered 410 Gone)")
    active: bool
    reason: str | None
    createdAt: datetime


class WebhookList(BaseModel):
    data: list[WebhookItem]


class DeletedWebhook(BaseModel):
    id: UUID
    deleted: bool


class DeletedWebhookResponse(BaseModel):
    data: DeletedWebhook


class TestResult(BaseModel):
    id: str = Field(description="the test message's webhook-id")
    type: str
    delivered: bool
    status_code: int | None
    latency_ms: float
    error: str | None


class TestResponse(BaseModel):
    data: TestResult


class Attempt(BaseModel):
    attempt: int
    attempted_at: datetime
    outcome: str | None
    status_code: int | None
    error: str | None
    latency_ms: float | None


class DeliveryItem(BaseModel):
    id: UUID
    event: str
    status: str = Field(description="pending, succeeded, failed (410 Gone), exhausted, or cancelled (its webhook "
                                    "was deleted or disabled before it was delivered)")
    reason: str | None = Field(description="why a failed, exhausted or cancelled delivery ended: the last attempt's "
                                           "error, or 'webhook deleted' / 'webhook disabled'; null otherwise")
    attempts: list[Attempt]
    next_attempt_at: datetime | None
    source_position: int
    created_at: datetime


class DeliveryList(BaseModel):
    data: list[DeliveryItem]


class DeliveriesQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=50, ge=1, le=200)


class ResentDelivery(BaseModel):
    id: UUID
    status: str


class ResentResponse(BaseModel):
    data: ResentDelivery


class JobSecret(BaseModel):
    secret: str = Field(description="signs deliveries to jobs' per-request webhook_url (same scheme as a webhook); "
                                    "one per workspace and environment (the caller's)")
    environment: str
    version: int = Field(description="1 until a first rotation; each rotation adds one")
    previous_version: int | None = Field(description="the version replaced by the last rotation, if any")
    previous_valid_until: datetime | None = Field(
        description="until then deliveries also carry a signature made with the previous version's secret")


class JobSecretResponse(BaseModel):
    data: JobSecret


class RotatedJobSecretResponse(BaseModel):
    data: JobSecret
    warning: str = Field(alias="_warning")


# ------------------------------------------------------------------------------- handlers


def _settings(call: Call) -> Settings:
    return call.app[SETTINGS]


def _uuid(call: Call, name: str, what: str) -> UUID:
    try:
        return UUID(call.path(name))
    except ValueError:
        raise not_found(what, call.path(name)) from None


async def create_webhook(call: Call) -> dict:
    body: CreateWebhook = call.body
    settings = _settings(call)
    await check_destination(settings, call.environment, body.url, field="url")
    webhook, secret, position = await call.context.handle(RegisterWebhook(
        call.workspace_id, call.environment, url=body.url,
        events=list(body.events) if body.events is not None else None))
    await call.read_your_writes("webhooks", position)
    return {"data": {"id": webhook.id, "url": webhook.url, "secret": secret, "events": webhook.events},
            "_warning": WARNING}


async def list_webhooks(call: Call) -> dict:
    rows = await queries.every(call.pool, call.workspace_id, call.environment)
    return {"data": [{"id": r["id"], "url": r["url"], "events": list(r["events"]), "status": r["status"],
                      "active": r["status"] == "active", "reason": r["reason"], "createdAt": r["created_at"]}
                     for r in rows]}


async def remove_webhook(call: Call) -> dict:
    webhook_id = _uuid(call, "id", "webhook")
    position = await call.context.handle(DeleteWebhook(call.workspace_id, call.environment, webhook_id))
    await call.read_your_writes("webhooks", position)
    return {"data": {"id": webhook_id, "deleted": True}}


async def test_webhook(call: Call) -> dict:
    """Sign and send a ``webhook.test`` event now, within 10 s, to a destination checked again now,
    and record what happened (``WebhookTestSent``) before answering it (``SendWebhookTest``)."""
    webhook_id = _uuid(call, "id", "webhook")
    tested = await call.context.handle(SendWebhookTest(call.workspace_id, call.environment, webhook_id))
    return {"data": {"id": str(tested.message_id), "type": TEST_EVENT, "delivered": tested.delivered,
                     "status_code": tested.status_code, "latency_ms": tested.latency_ms, "error": tested.error}}


_ENDED_UNDELIVERED = frozenset({"failed", "exhausted", "cancelled"})


async def list_deliveries(call: Call) -> dict:
    webhook_id = _uuid(call, "id", "webhook")
    q: DeliveriesQuery = call.query
    # A deleted webhook's deliveries stay readable (how its pending ones ended is part of the audit).
    rows, attempts = found(await queries.deliveries(call.pool, webhook_id, call.workspace_id, call.environment,
                                                    q.limit), "webhook", webhook_id)
    by_delivery: dict = {}
    for a in attempts:
        by_delivery.setdefault(a["delivery_id"], []).append(
            {"attempt": a["attempt"], "attempted_at": a["attempted_at"], "outcome": a["outcome"],
             "status_code": a["status_code"], "error": a["error"], "latency_ms": a["latency_ms"]})
    return {"data": [{"id": r["id"], "event": r["event"], "status": r["status"],
                      "reason": r["last_error"] if r["status"] in _ENDED_UNDELIVERED else None,
                      "attempts": by_delivery.get(r["id"], []), "next_attempt_at": r["next_attempt_at"],
                      "source_position": r["source_position"], "created_at": r["created_at"]} for r in rows]}


async def resend(call: Call) -> dict:
    webhook_id = _uuid(call, "id", "webhook")
    delivery = _uuid(call, "delivery_id", "delivery")
    position = await call.context.handle(ResendDelivery(call.workspace_id, call.environment, webhook_id, delivery,
                                                        requested_by=str(call.principal.key_id)))
    await call.read_your_writes("webhooks", position)
    return {"data": {"id": delivery, "status": "pending"}}


def _job_secret_data(call: Call, versions: JobSecretVersions) -> dict:
    return {"secret": job_notification_secret(_settings(call).secret_key, call.workspace_id, call.environment,
                                              versions.current),
            "environment": call.environment, "version": versions.current,
            "previous_version": versions.previous, "previous_valid_until": versions.previous_valid_until}


async def job_secret(call: Call) -> dict:
    versions = await job_secret_versions(call.context, call.workspace_id, call.environment)
    return {"data": _job_secret_data(call, versions)}


ROTATION_WARNING = ("Deliveries to jobs' webhook_url are signed with this secret from now on, and also with the "
                    "previous one until previous_valid_until; update your receivers before then.")


async def rotate_job_secret(call: Call) -> dict:
    """A new job-notification secret for the caller's environment. The answer comes once the
    dispatcher has read the rotation (bounded wait), so deliveries signed after it carry the new
    signature; the previous secret still verifies ``webhook-signature`` during the grace period."""
    versions, position = await call.context.handle(RotateJobSecret(call.workspace_id, call.environment))
    await call.read_your_writes("dispatcher", position)
    return {"data": _job_secret_data(call, versions), "_warning": ROTATION_WARNING}


ROUTES = [
    Route("POST", "/webhooks", create_webhook, scope="webhooks:admin", tag="Webhooks", status=201,
          body=CreateWebhook, response=CreatedWebhookResponse, writes=True,
          summary="Register a webhook; the secret is in this response only (see _warning)"),
    Route("GET", "/webhooks", list_webhooks, scope="webhooks:admin", tag="Webhooks", response=WebhookList,
          summary="The workspace's webhooks (never the secret)"),
    Route("GET", "/webhooks/job-secret", job_secret, scope="webhooks:admin", tag="Webhooks",
          response=JobSecretResponse,
          summary="Extension: the secret that signs deliveries to jobs' per-request webhook_url (one per "
                  "workspace and environment)"),
    Route("POST", "/webhooks/job-secret/rotate", rotate_job_secret, scope="webhooks:admin", tag="Webhooks",
          response=RotatedJobSecretResponse, writes=True,
          summary="Extension: rotate the caller's environment's job-notification secret; the previous one keeps "
                  "signing webhook-signature during a grace period (24 h)"),
    Route("DELETE", "/webhooks/{id}", remove_webhook, scope="webhooks:admin", tag="Webhooks",
          response=DeletedWebhookResponse, writes=True, errors=(404,), patterns=(("id", HEX_ID),),
          summary="Delete a webhook; events after this get no delivery"),
    Route("POST", "/webhooks/{id}/test", test_webhook, scope="webhooks:admin", tag="Webhooks",
          response=TestResponse, errors=(404,),
          summary="Send a signed webhook.test event now (at most 10 s; destination checked again)"),
    Route("GET", "/webhooks/{id}/deliveries", list_deliveries, scope="webhooks:admin", tag="Webhooks",
          query=DeliveriesQuery, response=DeliveryList, errors=(404,),
          summary="Extension: the webhook's deliveries, newest first, with every attempt (a deleted webhook's too)"),
    Route("POST", "/webhooks/{id}/deliveries/{delivery_id}/resend", resend, scope="webhooks:admin",
          tag="Webhooks", status=202, response=ResentResponse, writes=True, errors=(404, 409),
          summary="Extension: send a failed or exhausted delivery again (the schedule starts over)"),
]
