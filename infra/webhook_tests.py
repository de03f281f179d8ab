"""The sender of POST /webhooks/{id}/test (the port ``services.application.ports.WebhookTestSender``):
the destination checked again now by ``infra.netguard`` with the environment's allowance (names
resolved within a bound), then one signed POST pinned to the checked address, the whole send
within the time it is given. A refusal or a failure is an outcome, never an exception."""

from __future__ import annotations

import time

from infra.netguard import BoundedResolver, DestinationRefused, allowance_for, vet
from infra.settings import Settings
from infra.webhook_http import Outcome, WebhookClient, signature_headers

# The least time the POST itself is given when checking the destination took most of the bound.
LEAST_POST_S = 0.5


class HttpWebhookTests:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def send(self, url: str, environment: str, secret: str, body: bytes, message_id: str, signed_at: int,
                   timeout_s: float) -> Outcome:
        s = self.settings
        started = time.perf_counter()
        try:
            vetted = await vet(url, BoundedResolver(), allowance_for(s.webhook_test_allow, s.mode, environment))
        except DestinationRefused as exc:
            return Outcome(None, 0.0, f"destination refused: {exc.reason}")
        remaining = max(LEAST_POST_S, min(s.webhook_timeout_s, timeout_s) - (time.perf_counter() - started))
        async with WebhookClient(timeout_s=remaining, max_response_bytes=s.webhook_max_response_bytes,
                                 extra_ca_file=s.webhook_extra_ca_file, limit=1, clock=s.now) as client:
            return await client.post(vetted, body, signature_headers(secret, message_id, body, signed_at))
