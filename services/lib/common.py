"""What every process shares: signal handling, backoff and the retry through outages, sleeping until
stopped, the transient-error test, JSON logs."""

from __future__ import annotations

import asyncio
import gc
import logging
import random
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterator

import asyncpg
import orjson
from aiokafka.errors import KafkaError

log = logging.getLogger("vaeo")


def backoff_delays(first: float = 0.2, cap: float = 10.0) -> Iterator[float]:
    """Exponential backoff with full jitter, capped: 0.2, 0.4, 0.8 ... 10 s."""
    delay = first
    while True:
        yield random.uniform(delay / 2, delay)
        delay = min(cap, delay * 2)


_TRANSIENT_SQLSTATE_CLASSES = ("08", "57", "53")  # connection, operator intervention, resources


def is_transient(exc: BaseException) -> bool:
    """An outage of PostgreSQL or Kafka (retry forever), as opposed to a failing event or bug."""
    if isinstance(exc, (OSError, ConnectionError, TimeoutError, asyncpg.InterfaceError,
                        asyncpg.PostgresConnectionError, asyncpg.InternalClientError)):
        # InternalClientError: asyncpg's protocol state after a connection dropped mid-operation.
        return True
    if isinstance(exc, asyncpg.PostgresError):
        return (exc.sqlstate or "")[:2] in _TRANSIENT_SQLSTATE_CLASSES
    if isinstance(exc, KafkaError):
        return True  # the broker is the only party; a bad request is a bug that will repeat loudly
    return False


def freeze_startup_heap() -> None:
    """Exempt what a process holds after start-up (modules, classes, settings) from the cyclic
    garbage collector: it lives as long as the process, yet every full collection walked it
    again. For busy loops that allocate much (the dispatcher: 40 % of its collector time, about
    10 % of its throughput). Garbage is collected first, so only live objects are frozen."""
    gc.collect()
    gc.freeze()


async def sleep_until_stopped(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds`` or until ``stop`` is set, whichever comes first; True when stopped."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
        return True
    except TimeoutError:
        return False


async def until_connected(connect: Callable[[], Awaitable], stop: asyncio.Event, what: str, *,
                          on_outage: Callable[[], None] | None = None):
    """Call ``connect`` until it succeeds, backing off through outages of PostgreSQL or Kafka
    (``is_transient``) forever: a process started while they are down waits for them instead of
    exiting. Any other error propagates (a bug must be loud). ``on_outage`` is told of each
    outage before the pause (to show "reconnecting"). Returns what ``connect`` returned, or None
    if stopped first."""
    delays = backoff_delays()
    while not stop.is_set():
        try:
            return await connect()
        except Exception as exc:
            if not is_transient(exc):
                raise
            if on_outage is not None:
                on_outage()
            delay = next(delays)
            log.warning("%s: %s: %s; retrying in %.1fs", what, type(exc).__name__, exc, delay)
            await sleep_until_stopped(stop, delay)
    return None


async def supervise(body: Callable[[asyncio.Event], Awaitable[None]], stop: asyncio.Event, what: str, *,
                    on_outage: Callable[[], None] | None = None) -> None:
    """Run ``body(stop)`` until it returns, restarting it through outages (``until_connected``)."""
    await until_connected(lambda: body(stop), stop, what, on_outage=on_outage)


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``main(stop)`` on a fresh loop; SIGINT/SIGTERM set ``stop`` for a clean exit."""

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await main(stop)

    asyncio.run(runner())


# Credentials never reach a log line, whichever layer wrote it (ours, aiohttp, a library quoting
# a request): API keys, webhook secrets and whatever follows "Bearer" are masked in the line.
_CREDENTIALS = re.compile(r"(service_(?:live|test)_|whsec_)[A-Za-z0-9_+/=-]+|(?i:(bearer)(\s+))[^\s\"',]+")


def redact(text: str) -> str:
    return _CREDENTIALS.sub(lambda m: (m.group(1) or m.group(2) + m.group(3)) + "<redacted>", text)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(self._format(record))

    def _format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("request_id", "process_name", "projection", "job_id"):
            if hasattr(record, key):
                out[key] = getattr(record, key)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out).decode()


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup_logging(level: str = "INFO", json_logs: bool = True) -> None:
    handler = logging.StreamHandler(sys.stderr)
    plain = RedactingFormatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    handler.setFormatter(JsonFormatter() if json_logs else plain)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("aiokafka").setLevel(logging.WARNING)
