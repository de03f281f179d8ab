"""The optional article provider: an async client of the OpenAI-compatible Chat Completions protocol.

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` (none when the key is
empty, for local servers) and a JSON body ``{"model", "messages"[, "max_tokens"][, "response_format"]}``;
the answer's ``choices[0].message.content`` is the text and ``usage.prompt_tokens`` /
``usage.completion_tokens`` the token counts (0 when a server omits ``usage``). Configured by the
``llm_*`` settings; ``ChatProvider.from_settings`` is None when no provider is configured.

Answers that follow a JSON Schema: ``complete(messages, schema=(name, schema))`` asks first for
``{"type": "json_schema", "json_schema": {"name", "schema", "strict": false}}`` (OpenAI's structured
outputs; llama.cpp's own server turns it into a grammar), then, when the server answers 400 or 422
naming the format (or a 500 naming it: llama-cpp-python's server answers so, and such a 500 is not
retried), ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server builds its grammar
from it), then the plain JSON mode ``{"type": "json_object"}``, then no
``response_format`` at all (the prompt alone asks for JSON). The form a server accepted is kept for
the provider's later calls. With ``llm_json_mode`` off only the last form is sent. The caller checks
the answer whatever the form: a server may ignore a schema it accepted.

Retries are bounded: one call makes at most ``llm_max_attempts`` requests. Only transient
failures are tried again: 408, 429 and 5xx answers, no answer within ``llm_timeout_s``, a
connection refused or cut. The delay before try n+1 is ``llm_retry_backoff_s * 2**(n-1)``, or
the ``Retry-After`` of the answer when it gives one; either is clamped to
``llm_retry_after_max_s``. Anything else fails at once: another 4xx (bad request, wrong key,
unknown model), a redirect (never followed), an answer over ``llm_max_response_bytes``, a 2xx
whose body is not a Chat Completions response.

``converse`` is the same call with tools (function calling, for the assistant): the request adds
``tools`` (and ``tool_choice``), the answer's ``message.tool_calls`` come back as ``ToolCall``s
whose ``arguments`` are the JSON text the model wrote, unparsed (malformed arguments are the
caller's to report, never an exception here). Given ``on_delta``, it asks for a stream
(``stream: true`` with ``stream_options.include_usage``): the answer is read as Server-Sent Events
of ``chat.completion.chunk``s, each piece of content is handed to ``on_delta`` as it arrives, and
tool calls are assembled from their fragments. A streamed call is retried like any other only until
its first piece was handed on; after that a failure is final (what was shown cannot be unshown).

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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import aiohttp
import orjson
from yarl import URL

from infra.settings import Settings, wall_clock

log = logging.getLogger("vaeo.llm")
T = TypeVar("T")

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
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text the model wrote, unparsed


@dataclass(frozen=True)
class Answer:
    """One ``converse`` call's answer: text, tool calls, token counts."""

    content: str
    tool_calls: tuple[ToolCall, ...]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    attempts: int


@dataclass(frozen=True, kw_only=True)
class HttpProvider:
    """The request loop shared by the OpenAI-compatible clients (chat here, speech in ``infra.asr_provider``):
    bounded retries of transient failures, ``Retry-After`` clamped, answers read up to a size bound,
    the key sent only in ``Authorization`` and redacted from every message. A subclass adds its own
    fields and gives ``endpoint``, ``kind`` (its logger's name) and ``user_agent``."""

    base_url: str
    model: str
    api_key: str = field(repr=False)
    timeout_s: float
    max_attempts: int
    backoff_s: float
    retry_after_max_s: float
    max_response_bytes: int
    clock: Callable[[], datetime] = field(default=wall_clock, repr=False, compare=False)

    kind = "llm"
    user_agent = USER_AGENT

    def final(self, exc: ProviderError) -> bool:
        """Whether a transient-looking failure is not worth another request (a subclass knows)."""
        return False

    @property
    def where(self) -> str:
        """The provider's origin as shown in messages (no path, no user info)."""
        url = URL(self.base_url)
        return f"{url.host}:{url.port}" if url.host else self.base_url

    async def _request(self, data: Callable[[], object], content_headers: dict,
                       read: Callable[[aiohttp.ClientResponse, int], Awaitable[T]], *,
                       retriable: Callable[[], bool] = lambda: True) -> T:
        """POST ``data()`` (made anew for each attempt) to ``endpoint``, retried on transient failures
        while ``retriable()``; ``read`` reads a 2xx."""
        headers = {**content_headers, "Accept": "application/json", "User-Agent": self.user_agent}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        logger = logging.getLogger(f"vaeo.{self.kind}")
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s), trust_env=False) as http:
            for attempt in range(1, self.max_attempts + 1):
                started = time.monotonic()
                try:
                    result = await self._once(http, data(), headers, attempt, read)
                except ProviderError as exc:
                    if not exc.transient or attempt == self.max_attempts or not retriable() or self.final(exc):
                        tries = f" (after {attempt} attempts)" if attempt > 1 else ""
                        raise ProviderError(f"{exc}{tries}", transient=exc.transient, status=exc.status) from None
                    delay = min(self.retry_after_max_s, exc.retry_after if exc.retry_after is not None
                                else self.backoff_s * 2 ** (attempt - 1))
                    logger.warning("%s: attempt %d/%d failed: %s; retrying in %.2fs", self.kind, attempt,
                                   self.max_attempts, exc, delay)
                    await asyncio.sleep(delay)
                    continue
                logger.debug("%s: %s answered in %.2fs", self.kind, self.where, time.monotonic() - started)
                return result
        raise AssertionError("unreachable")

    async def _once(self, http: aiohttp.ClientSession, payload: object, headers: dict, attempt: int,
                    read: Callable[[aiohttp.ClientResponse, int], Awaitable[T]]) -> T:
        try:
            async with http.post(self.endpoint, data=payload, headers=headers, allow_redirects=False) as resp:
                status, reason = resp.status, resp.reason or ""
                if 200 <= status < 300:
                    return await read(resp, attempt)
                retry_after = _retry_after(resp.headers.get("Retry-After"), self.clock())
                raw = await self._read_bounded(resp)
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
        transient = status in TRANSIENT_STATUSES or status >= 500
        detail = self._error_detail(raw)
        raise ProviderError(f"the provider answered {status} {reason}".rstrip() + (f": {detail}" if detail else ""),
                            transient=transient, status=status, retry_after=retry_after)

    async def _read_bounded(self, resp: aiohttp.ClientResponse) -> bytes:
        raw = bytearray()
        async for chunk in resp.content.iter_chunked(65536):
            raw += chunk
            if len(raw) > self.max_response_bytes:
                raise ProviderError(f"the provider's answer is larger than {self.max_response_bytes} bytes")
        return bytes(raw)

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


@dataclass(frozen=True, kw_only=True)
class ChatProvider(HttpProvider):
    """Built by ``from_settings`` (the ``llm_*`` settings and their defaults are the one source)."""

    json_mode: bool
    max_output_tokens: int = 0  # the ceiling of every answer's max_tokens; 0: none but the call's own
    # the first of the answer formats this server accepted, by kind of call ("schema", "plain"): a
    # server that refused a form is not asked in it again by this process
    accepted_format: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatProvider | None:
        if not settings.llm_configured:
            return None
        return cls(base_url=settings.llm_base_url, model=settings.llm_model,
                   api_key=settings.llm_api_key.get_secret_value(), timeout_s=settings.llm_timeout_s,
                   max_attempts=max(1, settings.llm_max_attempts), backoff_s=settings.llm_retry_backoff_s,
                   retry_after_max_s=settings.llm_retry_after_max_s,
                   max_response_bytes=settings.llm_max_response_bytes, json_mode=settings.llm_json_mode,
                   max_output_tokens=settings.llm_max_output_tokens, clock=settings.now)

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def final(self, exc: ProviderError) -> bool:
        return _refuses_format(exc)  # the next request would be refused alike: the next form is tried instead

    async def complete(self, messages: Sequence[dict], *, schema: tuple[str, dict] | None = None,
                       max_tokens: int | None = None) -> Completion:
        """One Chat Completions call, retried on transient failures; ``ProviderError`` at the end.

        ``schema`` (a name and a JSON Schema) asks for an answer that follows it, in the first form of
        ``ANSWER_FORMATS`` the server accepts (see the module's text); ``max_tokens`` bounds the answer."""
        formats = [None]
        if self.json_mode:
            formats = [*(ANSWER_FORMATS if schema else ("json_object",)), None]
        start = self.accepted_format.get("schema" if schema else "plain", 0)

        async def read(resp: aiohttp.ClientResponse, attempt: int) -> Completion:
            return self._completion(await self._read_bounded(resp), attempt)

        for index in range(min(start, len(formats) - 1), len(formats)):
            body: dict = {"model": self.model, "messages": list(messages)}
            if limit := self._limit(max_tokens):
                body["max_tokens"] = limit
            if formats[index] is not None:
                body["response_format"] = _response_format(formats[index], schema)
            try:
                completion = await self._call(body, read)
            except ProviderError as exc:
                if formats[index] is None or not _refuses_format(exc):
                    raise
                log.info("llm: %s refused response_format %s; trying the next form", self.where, formats[index])
                continue
            self.accepted_format["schema" if schema else "plain"] = index
            log.info("llm: %s answered (%d prompt + %d completion tokens)", self.where, completion.prompt_tokens,
                     completion.completion_tokens)
            return completion
        raise AssertionError("unreachable: the last form sends no response_format")

    def _limit(self, max_tokens: int | None) -> int | None:
        """The answer's bound: the call's, within ``max_output_tokens`` when that is set."""
        bounds = [b for b in (max_tokens, self.max_output_tokens) if b]
        return min(bounds) if bounds else None

    async def converse(self, messages: Sequence[dict], *, tools: Sequence[dict] = (), tool_choice: str | None = None,
                       on_delta: Callable[[str], None] | None = None) -> Answer:
        """A Chat Completions call with ``tools``, streamed to ``on_delta`` when given (see the module's text)."""
        body: dict = {"model": self.model, "messages": list(messages)}
        if limit := self._limit(None):
            body["max_tokens"] = limit
        if tools:
            body["tools"] = list(tools)
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if on_delta is None:
            async def read(resp: aiohttp.ClientResponse, attempt: int) -> Answer:
                return self._answer(await self._read_bounded(resp), attempt)

            return await self._call(body, read)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        delivered = False

        def deliver(text: str) -> None:
            nonlocal delivered
            delivered = True
            on_delta(text)

        async def read_stream(resp: aiohttp.ClientResponse, attempt: int) -> Answer:
            return await self._stream(resp, attempt, deliver)

        return await self._call(body, read_stream, retriable=lambda: not delivered)

    async def _call(self, body: dict, read: Callable[[aiohttp.ClientResponse, int], Awaitable[T]], *,
                    retriable: Callable[[], bool] = lambda: True) -> T:
        """Send ``body`` as JSON, retried on transient failures while ``retriable()``; ``read`` reads a 2xx."""
        payload = orjson.dumps(body)
        return await self._request(lambda: payload, {"Content-Type": "application/json"}, read, retriable=retriable)

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

    def _not_protocol(self, raw: bytes, exc: Exception) -> ProviderError:
        sample = self._redact(raw[:120].decode("utf-8", "replace"))
        return ProviderError(f"the provider's answer is not a Chat Completions response ({type(exc).__name__}: "
                             f"{self._redact(str(exc))[:120]}); it began with {sample!r}")

    def _answer(self, raw: bytes, attempt: int) -> Answer:
        try:
            answer = orjson.loads(raw)
            choice = answer["choices"][0]
            message = choice["message"]
            content = message.get("content") or ""
            if not isinstance(content, str):
                raise TypeError("message.content is not a string")
            calls = tuple(ToolCall(id=str(c.get("id") or f"call_{i}"), name=str(c["function"]["name"]),
                                   arguments=_arguments_text(c["function"].get("arguments")))
                          for i, c in enumerate(message.get("tool_calls") or []))
            usage = answer.get("usage") or {}
            prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise self._not_protocol(raw, exc) from None
        return Answer(content=content, tool_calls=calls, prompt_tokens=max(0, prompt),
                      completion_tokens=max(0, completion), finish_reason=choice.get("finish_reason"), attempts=attempt)

    async def _stream(self, resp: aiohttp.ClientResponse, attempt: int, deliver: Callable[[str], None]) -> Answer:
        """A streamed answer: ``data:`` lines of chunks until ``data: [DONE]`` (or the end). A server
        that answers one JSON document instead (it does not stream) is read as such."""
        if resp.content_type == "application/json":
            answer = self._answer(await self._read_bounded(resp), attempt)
            if answer.content:
                deliver(answer.content)
            return answer
        content: list[str] = []
        calls: dict[int, dict] = {}
        prompt = completion = 0
        finish_reason = None
        received = 0
        buffer = b""
        done = False
        async for piece in resp.content.iter_any():
            if done:
                break
            received += len(piece)
            if received > self.max_response_bytes:
                raise ProviderError(f"the provider's answer is larger than {self.max_response_bytes} bytes")
            buffer += piece
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue  # comments, event names, blank lines
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    break
                try:
                    chunk = orjson.loads(data)
                    if isinstance(chunk.get("error"), dict):
                        raise ProviderError(f"the provider failed mid-answer: "
                                            f"{self._redact(str(chunk['error'].get('message')))[:300]}")
                    usage = chunk.get("usage") or {}
                    prompt = int(usage.get("prompt_tokens") or prompt)
                    completion = int(usage.get("completion_tokens") or completion)
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or {}
                        text = delta.get("content")
                        if isinstance(text, str) and text:
                            content.append(text)
                            deliver(text)
                        for fragment in delta.get("tool_calls") or []:
                            call = calls.setdefault(int(fragment.get("index", len(calls))),
                                                    {"id": "", "name": "", "arguments": ""})
                            function = fragment.get("function") or {}
                            call["id"] = fragment.get("id") or call["id"]
                            call["name"] += function.get("name") or ""
                            call["arguments"] += function.get("arguments") or ""
                        finish_reason = choice.get("finish_reason") or finish_reason
                except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError) as exc:
                    raise self._not_protocol(data, exc) from None
        tool_calls = tuple(ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                           for i, c in sorted(calls.items()))
        return Answer(content="".join(content), tool_calls=tool_calls, prompt_tokens=max(0, prompt),
                      completion_tokens=max(0, completion), finish_reason=finish_reason, attempts=attempt)


ANSWER_FORMATS = ("json_schema", "json_object_schema", "json_object")


def _response_format(form: str, schema: tuple[str, dict] | None) -> dict:
    """``response_format`` in one of its forms: OpenAI's structured outputs (``json_schema``, which
    llama.cpp's own server also reads), the JSON mode with a ``schema`` member (llama-cpp-python's
    server builds its grammar from it), or the plain JSON mode."""
    if form == "json_schema" and schema:
        name, body = schema
        return {"type": "json_schema", "json_schema": {"name": name, "schema": body, "strict": False}}
    if form == "json_object_schema" and schema:
        return {"type": "json_object", "schema": schema[1]}
    return {"type": "json_object"}


def _refuses_format(exc: ProviderError) -> bool:
    """A 400 or 422 that names the answer's format: the server does not know this form of
    ``response_format``. A 500 that names it too: llama-cpp-python's server answers a request it
    cannot validate with a 500 whose message is the validation error."""
    text = str(exc).lower()
    return exc.status in (400, 422, 500) and any(word in text for word in ("response_format", "json_schema"))


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


def _arguments_text(value: object) -> str:
    """A tool call's arguments as text: providers send a JSON string; some send the object itself."""
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()
