"""Webhooks: register (the secret encrypted in the event), delete, send a test message (and record it), resend a
delivery."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

import orjson

from domain.base import NotFound
from domain.webhooks import TEST_EVENT, Webhook, WebhookDelivery, payload
from infra.webhook_http import new_webhook_secret
from services.application.context import Context, with_retries
from services.application.results import WebhookRegistered, WebhookTested

TEST_TIMEOUT_S = 10.0  # the interface's bound for a test send (POST /webhooks/{id}/test)


@dataclass(frozen=True)
class RegisterWebhook:
    workspace_id: UUID
    environment: str
    url: str
    events: list[str] | None = None


@dataclass(frozen=True)
class DeleteWebhook:
    workspace_id: UUID
    environment: str
    webhook_id: UUID


@dataclass(frozen=True)
class ResendDelivery:
    workspace_id: UUID
    environment: str
    webhook_id: UUID
    delivery_id: UUID
    requested_by: str


@dataclass(frozen=True)
class SendWebhookTest:
    """Send a signed ``webhook.test`` message to a webhook now, and record what happened."""

    workspace_id: UUID
    environment: str
    webhook_id: UUID


async def register_webhook(command: RegisterWebhook, ctx: Context) -> WebhookRegistered:
    """A new webhook; returns it, its secret (never stored in clear: encrypted with the
    application's secret box) and the position."""
    c = command
    webhook_id = ctx.new_id()
    secret = new_webhook_secret()
    encrypted = ctx.app.box.encrypt(secret, str(webhook_id))
    webhook = Webhook.register(webhook_id=webhook_id, workspace_id=c.workspace_id, environment=c.environment,
                               url=c.url, events=c.events, secret_encrypted=encrypted)
    return WebhookRegistered(webhook, secret, await ctx.save(webhook, workspace_id=c.workspace_id))


async def load_webhook(ctx: Context, workspace_id: UUID, environment: str, webhook_id: UUID) -> Webhook:
    """A live webhook of this workspace and environment; any other (or a deleted one) is a 404."""
    webhook = await ctx.store.fetch_for_writing(webhook_id)
    if (not isinstance(webhook, Webhook) or webhook.workspace_id != workspace_id
            or webhook.environment != environment or webhook.status == "deleted"):
        raise NotFound("webhook not found", id=str(webhook_id))
    return webhook


async def delete_webhook(command: DeleteWebhook, ctx: Context) -> int:
    c = command

    async def attempt() -> int:
        webhook = await load_webhook(ctx, c.workspace_id, c.environment, c.webhook_id)
        webhook.delete()
        return await ctx.save(webhook, workspace_id=c.workspace_id)

    return await with_retries(attempt)


async def resend_delivery(command: ResendDelivery, ctx: Context) -> int:
    c = command

    async def attempt() -> int:
        await load_webhook(ctx, c.workspace_id, c.environment, c.webhook_id)
        delivery = await ctx.store.fetch_for_writing(c.delivery_id)
        if not isinstance(delivery, WebhookDelivery) or delivery.webhook_id != c.webhook_id:
            raise NotFound("delivery not found", id=str(c.delivery_id))
        delivery.resend(c.requested_by)
        # The resend joins the chain of the event the delivery carries (``Context.joining``).
        chained = await ctx.joining(c.delivery_id)
        return await chained.save(delivery, workspace_id=c.workspace_id)

    return await with_retries(attempt)


async def send_webhook_test(command: SendWebhookTest, ctx: Context) -> WebhookTested:
    """Sign and send a ``webhook.test`` message through the application's sender (the port
    ``WebhookTestSender``: the destination checked again now, at most ``TEST_TIMEOUT_S`` or the
    deliveries' own timeout, whichever is shorter), then append ``WebhookTestSent`` with what
    happened (never the secret). A 404 for another workspace's webhook, before anything is sent."""
    c = command
    webhook = await load_webhook(ctx, c.workspace_id, c.environment, c.webhook_id)
    if ctx.app.webhook_tests is None:
        raise RuntimeError("this application has no webhook test sender")
    message_id = ctx.new_id()
    now = ctx.now()
    signed_at = int(now.timestamp())
    body = orjson.dumps(payload(message_id, TEST_EVENT, now.isoformat().replace("+00:00", "Z"), c.workspace_id,
                                {"webhook_id": str(c.webhook_id), "test": True}))
    secret = ctx.app.box.decrypt(webhook.secret_encrypted, str(c.webhook_id))
    outcome = await ctx.app.webhook_tests.send(webhook.url, c.environment, secret, body, str(message_id), signed_at,
                                               TEST_TIMEOUT_S)
    latency_ms = round(outcome.latency_ms, 1)

    async def attempt() -> int:
        tested = await ctx.store.fetch_for_writing(c.webhook_id)
        tested.record_test(message_id=message_id, signed_at=signed_at, status_code=outcome.status_code,
                           latency_ms=latency_ms, error=outcome.error)
        return await ctx.save(tested, workspace_id=c.workspace_id)

    return WebhookTested(message_id, outcome.delivered, outcome.status_code, latency_ms, outcome.error,
                         await with_retries(attempt))
