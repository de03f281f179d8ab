"""Webhooks: register (the secret encrypted in the event), delete, record a test send, resend a delivery."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from domain.base import NotFound
from domain.webhooks import Webhook, WebhookDelivery
from infra.webhook_http import new_webhook_secret
from services.application.context import Context, with_retries
from services.application.results import WebhookRegistered


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
class RecordWebhookTest:
    """What the test endpoint did (``WebhookTestSent``), never the secret."""

    workspace_id: UUID
    webhook_id: UUID
    message_id: UUID
    signed_at: int
    status_code: int | None
    latency_ms: float
    error: str | None


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


async def record_webhook_test(command: RecordWebhookTest, ctx: Context) -> int:
    c = command

    async def attempt() -> int:
        webhook = await ctx.store.fetch_for_writing(c.webhook_id)
        webhook.record_test(message_id=c.message_id, signed_at=c.signed_at, status_code=c.status_code,
                            latency_ms=c.latency_ms, error=c.error)
        return await ctx.save(webhook, workspace_id=c.workspace_id)

    return await with_retries(attempt)
