"""Signing and sending webhook deliveries: HTTPS to the vetted address, nothing else.

Signing (each attempt afresh, with its own timestamp):

- ``X-Service-Signature: sha256=<hex HMAC-SHA256(key, raw body)>`` (the interface's header), the
  key being the secret exactly as shown at registration (``whsec_...``, as UTF-8 bytes);
- Standard Webhooks: ``webhook-id`` (the delivery id, stable across retries),
  ``webhook-timestamp`` (seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256(key,
  "{id}.{timestamp}.{body}")>``, the key being the base64-decoded part after ``whsec_``, as the
  ``standardwebhooks`` libraries expect; during a job secret's grace period a second ``v1,``
  signature, space-separated, made with the previous secret.

Sending: ``WebhookClient.post`` takes a ``netguard.Vetted`` destination and connects to its
vetted address only: the request's URL carries that address itself, so the client never looks
a name up (its resolver refuses every lookup): no second lookup, no DNS rebinding. The Host
header and the TLS server name (SNI and the certificate check) are the original host. Kept-alive
connections are pooled per (vetted address, port, server name), so a connection opened for one
host or one address is never reused for another. No redirect is followed (a 3xx is a failed
attempt), the whole exchange has a total timeout, the response body is read up to a cap, and no
proxy from the environment is used.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import hmac
import secrets
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import aiohttp
from aiohttp.abc import AbstractResolver
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from yarl import URL

from infra.netguard import Vetted
from infra.settings import wall_clock

SECRET_PREFIX = "whsec_"
USER_AGENT = "vaeo-webhooks/1"


def new_webhook_secret() -> str:
    """``whsec_`` and 32 random bytes in standard base64 (the Standard Webhooks secret format)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


JOB_SECRET_SALT = b"vaeo job webhook secret v2"


@functools.lru_cache(maxsize=4096)  # a pure function of its arguments, computed for every job URL attempt
def job_notification_secret(service_key_hex: str, workspace_id: UUID | str, environment: str,
                            version: int = 1) -> str:
    """The secret that signs deliveries to jobs' per-request ``webhook_url`` of one workspace and
    environment, at one version (the workspace's ``JobSecretRotated`` events make new versions).

    Derived (HKDF-SHA256) from the service key and ``{workspace id}/{environment}/v{version}``, so
    it is never stored nor written in any event, every process computes the same one, a sandbox
    key's secret says nothing about production's, and a rotation is only a new version number.
    A workspace reads its environment's current one through GET /webhooks/job-secret.
    """
    if environment not in ("production", "sandbox") or version < 1:
        raise ValueError("a job secret is per environment (production or sandbox) and version (from 1)")
    info = f"{workspace_id}/{environment}/v{version}".encode()
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=JOB_SECRET_SALT,
               info=info).derive(bytes.fromhex(service_key_hex))
    return SECRET_PREFIX + base64.b64encode(key).decode()


@functools.lru_cache(maxsize=4096)
def _keys(secret: str) -> tuple[bytes, bytes]:
    """(the X-Service-Signature key: the secret as shown, the Standard Webhooks key: base64 after whsec_)."""
    raw = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    return secret.encode(), base64.b64decode(raw + "==")


def signature_headers(secret: str, message_id: str, body: bytes, timestamp: int | None = None,
                      also: tuple[str, ...] = ()) -> dict[str, str]:
    """The signature headers of one attempt. ``secret`` signs both schemes; each of ``also``
    (an older secret in its grace period) adds a signature to ``webhook-signature`` only, which
    Standard Webhooks allows (space-separated ``v1,`` signatures: a verifier accepts any)."""
    ts = int(wall_clock().timestamp()) if timestamp is None else timestamp
    spec_key, _ = _keys(secret)
    spec = hmac.digest(spec_key, body, "sha256").hex()
    signed = f"{message_id}.{ts}.".encode() + body
    standard = " ".join("v1," + base64.b64encode(hmac.digest(_keys(key)[1], signed, "sha256")).decode()
                        for key in (secret, *also))
    return {
        "X-Service-Signature": f"sha256={spec}",
        "webhook-id": message_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": standard,
    }


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    latency_ms: float
    error: str | None = None
    retry_after_s: float | None = None
    timed_out: bool = False
    body_excerpt: str = ""

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds, or an HTTP date counted from ``now``)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now.timestamp())


class NoLookups(AbstractResolver):
    """The webhook client's resolver: every URL it is given holds the vetted address already, so
    a lookup can only mean a bug; it is refused rather than made."""

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
        raise OSError(f"the webhook client does not resolve names ({host}): it connects to vetted addresses")

    async def close(self) -> None:
        return None


@functools.lru_cache(maxsize=4096)
def _pinned(url: str, host: str, address: str, literal: bool) -> tuple[URL, str, str | None]:
    """(the URL with the vetted address as its host, the Host header, the TLS server name)."""
    original = URL(url)
    return original.with_host(address), original.host_port_subcomponent or host, None if literal else host


def ssl_context(extra_ca_file: str = "") -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if extra_ca_file:
        ctx.load_verify_locations(cafile=extra_ca_file)
    return ctx


class WebhookClient:
    """One connection pool for many destinations; every request pinned to its vetted address."""

    def __init__(self, *, timeout_s: float = 10.0, max_response_bytes: int = 65536, extra_ca_file: str = "",
                 limit: int = 100, clock: Callable[[], datetime] = wall_clock) -> None:
        self.clock = clock
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self.extra_ca_file = extra_ca_file
        self.limit = limit
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> WebhookClient:
        connector = aiohttp.TCPConnector(resolver=NoLookups(), use_dns_cache=False,
                                         ssl=ssl_context(self.extra_ca_file), limit=self.limit, limit_per_host=0)
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False, auto_decompress=False,
                                              timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, vetted: Vetted, body: bytes, headers: dict[str, str],
                   timeout_s: float | None = None) -> Outcome:
        assert self._session is not None, "use WebhookClient as an async context manager"
        dest = vetted.destination
        # Any numeric form of a literal host becomes the canonical address that was checked.
        address = str(dest.literal) if dest.literal is not None else vetted.address
        url, host_header, server_name = _pinned(dest.url, dest.host, address, dest.literal is not None)
        hdrs = {"Host": host_header, "Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
        total = timeout_s or self.timeout_s
        # The session's timeout unless the caller gives another (building one per request costs).
        extra = {"timeout": aiohttp.ClientTimeout(total=timeout_s)} if timeout_s else {}
        started = time.perf_counter()
        try:
            async with self._session.post(url, data=body, headers=hdrs, allow_redirects=False,
                                          server_hostname=server_name, **extra) as resp:
                excerpt = await resp.content.read(self.max_response_bytes)
                if not resp.content.at_eof():
                    resp.close()  # more than the cap: drop the connection rather than read on
                latency = (time.perf_counter() - started) * 1000
                status = resp.status
                error = None
                if 300 <= status < 400:
                    error = f"redirect ({status}) not followed"
                elif not 200 <= status < 300:
                    error = f"HTTP {status}"
                return Outcome(status, latency, error, parse_retry_after(resp.headers.get("Retry-After"), self.clock()),
                               body_excerpt=excerpt[:200].decode(errors="replace"))
        except TimeoutError:
            latency = (time.perf_counter() - started) * 1000
            return Outcome(None, latency, f"timed out after {total:g} s", timed_out=True)
        except (aiohttp.ClientError, OSError, ssl.SSLError, ValueError) as exc:
            latency = (time.perf_counter() - started) * 1000
            return Outcome(None, latency, f"{type(exc).__name__}: {exc}"[:300])
