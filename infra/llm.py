"""The optional article provider: an async client of the OpenAI-compatible Chat Completions protocol.

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` (none when the key is
empty, for local servers) and a JSON body ``{"model", "messages"[, "response_format":
{"type": "json_object"}]}``; the answer's ``choices[0].message.content`` is the text and
``usage.prompt_tokens`` / ``usage.completion_tokens`` the token counts (0 when a server omits
``usage``). Configured by the ``llm_*`` settings; ``ChatProvider.from_settings`` is None when no
provider is configured.

Retries are bounded: one call makes at most ``llm_max_attempts`` requests. Only transient
failures are tried again: 408, 429 and 5xx answers, no answer within ``llm_timeout_s``, a
connection refused or cut. The delay before try n+1 is ``llm_retry_backoff_s * 2**(n-1)``, or
the ``Retry-After`` of the answer when it gives one; either is clamped to
``llm_retry_after_max_s``. Anything else fails at once: another 4xx (bad request, wrong key,
unknown model), a redirect (never followed), an answer over ``llm_max_response_bytes``, a 2xx
whose body is not a Chat Completions response.

The API key is a secret: it is sent in the ``Authorization`` header and nowhere else. It is kept
out of ``repr``, and error messages quote the provider's own error text (bounded) with the key
replaced by ``***``, so neither a log line nor a job's ``error_message`` can carry it.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import aiohttp
import orjson
from yarl import URL

from infra.settings import Settings, wall_clock

log = logging.getLogger("vaeo.llm")

USER_AGENT = "vaeo-llm/1"
TRANSIENT_STATUSES = frozenset({408, 429})


class ProviderError(Exception):
    """A call that failed; ``transient`` says whether trying again may help."""

    def __init__(self, message: str, *, transient: bool = False, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Completion:
    content: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    attempts: int  # requests made for this call, retries included


@dataclass(frozen=True)
class ChatProvider:
    """Built by ``from_settings`` (the ``llm_*`` settings and their defaults are the one source)."""

    base_url: str
    model: str
    api_key: str = field(repr=False)
    timeout_s: float
    max_attempts: int
    backoff_s: float
    retry_after_max_s: float
    max_response_bytes: int
    json_mode: bool
    clock: Callable[[], datetime] = field(default=wall_clock, repr=False, compare=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatProvider | None:
        if not settings.llm_configured:
            return None
        return cls(base_url=settings.llm_base_url, model=settings.llm_model,
                   api_key=settings.llm_api_key.get_secret_value(), timeout_s=settings.llm_timeout_s,
                   max_attempts=max(1, settings.llm_max_attempts), backoff_s=settings.llm_retry_backoff_s,
                   retry_after_max_s=settings.llm_retry_after_max_s,
                   max_response_bytes=settings.llm_max_response_bytes, json_mode=settings.llm_json_mode,
                   clock=settings.now)

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def where(self) -> str:
        """The provider's origin as shown in messages (no path, no user info)."""
        url = URL(self.base_url)
        return f"{url.host}:{url.port}" if url.host else self.base_url

    async def complete(self, messages: Sequence[dict]) -> Completion:
        """One Chat Completions call, retried on transient failures; ``ProviderError`` at the end."""
        body: dict = {"model": self.model, "messages": list(messages)}
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": USER_AGENT}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        payload = orjson.dumps(body)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s), trust_env=False) as http:
            for attempt in range(1, self.max_attempts + 1):
                started = time.monotonic()
                try:
                    completion = await self._once(http, payload, headers, attempt)
                except ProviderError as exc:
                    if not exc.transient or attempt == self.max_attempts:
                        tries = f" (after {attempt} attempts)" if attempt > 1 else ""
                        raise ProviderError(f"{exc}{tries}", transient=exc.transient, status=exc.status) from None
                    delay = min(self.retry_after_max_s, exc.retry_after if exc.retry_after is not None
                                else self.backoff_s * 2 ** (attempt - 1))
                    log.warning("llm: attempt %d/%d failed: %s; retrying in %.2fs", attempt, self.max_attempts,
                                exc, delay)
                    await asyncio.sleep(delay)
                    continue
                log.info("llm: %s answered in %.2fs (%d prompt + %d completion tokens)", self.where,
                         time.monotonic() - started, completion.prompt_tokens, completion.completion_tokens)
                return completion
        raise AssertionError("unreachable")

    async def _once(self, http: aiohttp.ClientSession, payload: bytes, headers: dict, attempt: int) -> Completion:
        try:
            async with http.post(self.endpoint, data=payload, headers=headers, allow_redirects=False) as resp:
                status, reason = resp.status, resp.reason or ""
                retry_after = _retry_after(resp.headers.get("Retry-After"), self.clock())
                raw = bytearray()
                async for chunk in resp.content.iter_chunked(65536):
                    raw += chunk
                    if len(raw) > self.max_response_bytes:
                        raise ProviderError(f"the provider's answer is larger than {self.max_response_bytes} bytes")
        except TimeoutError:
            raise ProviderError(f"the provider at {self.where} did not answer within {self.timeout_s:g} s",
                                transient=True) from None
        except aiohttp.ClientConnectorError as exc:
            errno = getattr(exc.os_error, "errno", None)
            cause = os.strerror(errno) if errno else str(exc.os_error or exc)
            raise ProviderError(f"could not connect to the provider at {self.where}: {cause}", transient=True) from None
        except aiohttp.ClientError as exc:
            raise ProviderError(f"the connection to the provider at {self.where} failed: "
                                f"{type(exc).__name__}: {self._redact(str(exc))[:200]}", transient=True) from None
        if not 200 <= status < 300:
            transient = status in TRANSIENT_STATUSES or status >= 500
            detail = self._error_detail(bytes(raw))
            raise ProviderError(f"the provider answered {status} {reason}".rstrip() + (f": {detail}" if detail else ""),
                                transient=transient, status=status, retry_after=retry_after)
        return self._completion(bytes(raw), attempt)

    def _completion(self, raw: bytes, attempt: int) -> Completion:
        try:
            answer = orjson.loads(raw)
            choice = answer["choices"][0]
            content = choice["message"]["content"]
            if not isinstance(content, str):
                raise TypeError("message.content is not a string")
            usage = answer.get("usage") or {}
            prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            sample = self._redact(raw[:120].decode("utf-8", "replace"))
            raise ProviderError(f"the provider's answer is not a Chat Completions response ({type(exc).__name__}: "
                                f"{self._redact(str(exc))[:120]}); it began with {sample!r}") from None
        return Completion(content=content, prompt_tokens=max(0, prompt), completion_tokens=max(0, completion),
                          finish_reason=choice.get("finish_reason"), attempts=attempt)

    def _error_detail(self, raw: bytes) -> str:
        """The provider's own error message (``{"error": {"message": ...}}`` or text), bounded, key redacted."""
        text = raw.decode("utf-8", "replace").strip()
        try:
            data = orjson.loads(raw)
            error = data.get("error") if isinstance(data, dict) else None
            text = str(error.get("message") if isinstance(error, dict) else error or data.get("message") or text)
        except (orjson.JSONDecodeError, AttributeError):
            pass
        text = " ".join(self._redact(text).split())
        return text if len(text) <= 300 else text[:297] + "..."

    def _redact(self, text: str) -> str:
        return text.replace(self.api_key, "***") if self.api_key else text


def _retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date, counted from ``now``);
    None if absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())
