"""Webhook receivers over real HTTPS (a test CA, a receiver that records every hit), their
signatures, and what the dispatcher delivers."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import ipaddress
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from standardwebhooks.webhooks import Webhook as StandardVerifier

from infra.crypto import SecretBox
from infra.eventstore import EventStore
from infra.settings import Settings
from services.application.jobs import QueueJob
from services.application.webhooks import RegisterWebhook
from services.processes.dispatcher.intake import NAME
from tests.helpers import end_offsets, handle, wait_relayed
from tests.webhook_bodies import check_body


class TestCA:
    """A CA and server certificates for names and addresses (cryptography, EC P-256)."""

    __test__ = False

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vaeo test CA")])
        now = dt.datetime.now(dt.UTC)
        self.cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.ca_file = directory / "ca.pem"
        self.ca_file.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def server_context(self, names: list[str], addresses: list[str]) -> ssl.SSLContext:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        sans = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (names or addresses)[0])]))
                .issuer_name(self.cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
                .add_extension(x509.SubjectAlternativeName(sans), critical=False)
                .sign(self.key, hashes.SHA256()))
        tag = uuid.uuid4().hex[:8]
        cert_file, key_file = self.dir / f"srv-{tag}.pem", self.dir / f"srv-{tag}.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert_file, key_file)
        return ctx


@dataclass
class Hit:
    headers: dict[str, str]
    body: bytes
    at: float
    host: str
    wall: float = 0.0
    peer: tuple | None = None  # the client's (address, port): one per connection
    path: str = ""


@dataclass
class Receiver:
    """An HTTPS receiver; ``answer(n)`` gives the status (and headers) of the n-th request (0-based).

    Every body it received is checked when it stops, and by ``bodies()``: the JSON Schema of its
    event type (docs/webhooks.md) and no internal field (``tests.webhook_bodies``). So every test
    that receives webhooks checks the payloads the dispatcher sends."""

    ca: TestCA
    address: str = "127.0.0.2"
    names: list[str] = field(default_factory=list)
    port: int = 0
    answer: Callable[[int], int | tuple[int, dict]] = lambda n: 200
    delay_s: float = 0.0
    hits: list[Hit] = field(default_factory=list)
    raw: bool = False  # the test posts bodies of its own, not the dispatcher's: they are not checked

    async def start(self) -> Receiver:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.address, self.port,
                           ssl_context=self.ca.server_context(self.names, [self.address]))
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        await self._runner.cleanup()
        self.checked()

    def checked(self) -> int:
        """Checks every body received (a test message, ``webhook.test``, has no payload); returns how many."""
        if self.raw:
            return 0
        bodies = [orjson.loads(h.body) for h in self.hits]
        for body in bodies:
            if body.get("type") != "webhook.test":
                check_body(body)
        return len(bodies)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        n = len(self.hits)
        self.hits.append(Hit(dict(request.headers), body, time.monotonic(), request.host, time.time(),
                             request.transport.get_extra_info("peername") if request.transport else None,
                           request.path))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        answer = self.answer(n)
        status, headers = answer if isinstance(answer, tuple) else (answer, {})
        return web.Response(status=status, text="ok", headers=headers)

    def url(self, path: str = "/hook", host: str | None = None) -> str:
        return f"https://{host or self.address}:{self.port}{path}"

    def bodies(self) -> list[dict]:
        self.checked()
        return [orjson.loads(h.body) for h in self.hits]


def verify(secret: str, hit: Hit) -> dict:
    """Both schemes, as a receiver would check them; raises on a mismatch."""
    expected = "sha256=" + hmac.new(secret.encode(), hit.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, hit.headers["X-Service-Signature"])
    body = StandardVerifier(secret).verify(hit.body, hit.headers)
    if body.get("type") != "webhook.test":
        check_body(body)
    return body


async def wait_until(predicate: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.05)


async def wait_dispatched(settings: Settings, pool, timeout: float = 60) -> None:
    """Until the intake has read every partition to its end and no delivery is due or in flight."""
    await wait_relayed(pool, timeout)
    ends = await end_offsets(settings)
    deadline = time.monotonic() + timeout
    while True:
        async with pool.acquire() as conn:
            rows = await conn.fetch("SELECT partition, next_offset FROM projection_offsets WHERE projection = $1",
                                    NAME)
            busy = await conn.fetchval("SELECT count(*) FROM webhook_deliveries WHERE status = 'sending' OR "
                                       "(status = 'pending' AND next_attempt_at <= now() + interval '2 seconds')")
        got = {r["partition"]: r["next_offset"] for r in rows}
        if all(got.get(p, 0) >= end for p, end in ends.items() if end > 0) and busy == 0:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"dispatcher behind: offsets {got} of {ends}, {busy} deliveries busy")
        await asyncio.sleep(0.05)


def webhook_settings(settings: Settings, ca: TestCA, **overrides) -> Settings:
    values = dict(webhook_test_allow="127.0.0.0/8", webhook_extra_ca_file=str(ca.ca_file),
                  webhook_retry_schedule_s=[0, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3], webhook_retry_jitter=0.1,
                  webhook_retry_floor_s=0.2, dispatcher_poll_interval_s=0.05,
                  dispatcher_group=settings.consumer_group_prefix + "dispatcher")
    values.update(overrides)
    return settings.model_copy(update=values)


async def end_job(store: EventStore, workspace_id, *, fail: bool = False, webhook_url: str | None = None,
                  environment: str = "production") -> uuid.UUID:
    job, _ = await handle(store, QueueJob(workspace_id, job_type="analyze", environment=environment,
        webhook_url=webhook_url))
    job.start(1, "test")
    job.fail("boom") if fail else job.complete({"ok": True}, article_id=3)
    await store.save(events=store.registry.to_new_events(job.collect_events(), workspace_id=workspace_id))
    return job.id


async def _register(store, settings, ws, url, events=None, environment="production"):
    webhook, secret, _ = await handle(store, RegisterWebhook(ws, environment=environment, url=url, events=events),
        box=SecretBox(settings.secret_key))
    return webhook.id, secret
