"""Reading the API's server-sent event streams, and the gauges and log lines that watch them."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import orjson
from prometheus_client.parser import text_string_to_metric_families


@dataclass
class ServerEvent:
    id: str
    event: str
    data: str

    @property
    def json(self):
        return orjson.loads(self.data)


@dataclass
class EventStreamReader:
    """Parses ``text/event-stream`` bytes as a browser's EventSource does."""

    response: aiohttp.ClientResponse
    comments: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, text)
    last_event_id: str = ""
    ended: bool = False

    async def _lines(self) -> AsyncIterator[str]:
        buffer = b""
        async for chunk in self.response.content.iter_any():
            buffer += chunk
            while True:
                match = re.search(rb"\r\n|\n|\r", buffer)
                # A CR at the very end may be the first half of a CRLF still on its way.
                if match is None or (match.group() == b"\r" and match.end() == len(buffer)):
                    break
                yield buffer[:match.start()].decode("utf-8")
                buffer = buffer[match.end():]
        self.ended = True

    async def events(self) -> AsyncIterator[ServerEvent]:
        event_type, data = "", []
        async for line in self._lines():
            if line == "":
                if data:
                    yield ServerEvent(self.last_event_id, event_type or "message", "\n".join(data))
                event_type, data = "", []
                continue
            if line.startswith(":"):
                self.comments.append((time.monotonic(), line[1:].removeprefix(" ")))
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event_type = value
            elif name == "data":
                data.append(value)
            elif name == "id" and "\0" not in value:
                self.last_event_id = value


async def open_streams_gauge(service, api: int = 0) -> float:
    async with service.http.get(service.bases[api].removesuffix("/v1") + "/metrics") as resp:
        text = await resp.text()
    for family in text_string_to_metric_families(text):
        if family.name == "vaeo_http_open_streams":
            return family.samples[0].value
    raise AssertionError("vaeo_http_open_streams is not in /metrics")


async def until(predicate, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


def _alarming(line: str) -> bool:
    """A log line that is not an informational JSON record (a warning, an error, a traceback,
    anything printed outside the logging setup)."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return bool(line.strip())
    return record.get("level") not in ("debug", "info") or "exc" in record
