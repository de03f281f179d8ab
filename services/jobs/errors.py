"""How a job's work fails, and the ``error_message`` clients read of it.

The errors a job handler raises or meets (``PermanentJobError``, ``JobCancelledError``,
``LeaseLost``, ``ItemsFailed``) live here, beside the handlers, so a handler never imports the
worker process that runs it. A job's ``error_message`` (``GET /v1/jobs/{id}``, the job's webhook)
says what went wrong, in words, without what only the service knows (a server path, an internal
stream id or version)."""

from __future__ import annotations

import re

import asyncpg

from infra.eventstore import ConcurrencyError

CONFLICTED = ("recording the job's work kept conflicting with concurrent changes to the same records; it was "
              "not recorded")
# Control characters (NUL above all, which PostgreSQL refuses in JSON text) never go into a
# job's message: a message that cannot be stored would leave the job unfinished.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class PermanentJobError(Exception):
    """A failure that another attempt cannot fix (bad input, missing provider): fail at once."""


class JobCancelledError(Exception):
    """The job was cancelled (or finished elsewhere) while it ran."""


class LeaseLost(Exception):
    """This attempt no longer owns the job (its lease expired and another attempt took it over)."""


class ItemsFailed(Exception):
    """Some items of this attempt failed (each is recorded with its error): the attempt fails and
    the job's next attempt does them again, and only them."""

    def __init__(self, failed: dict[str, str], total: int) -> None:
        self.failed = failed
        listed = "; ".join(f"{item}: {error}" for item, error in failed.items())
        super().__init__(f"{len(failed)} of {total} items failed: {listed}")


def readable(exc: Exception) -> str:
    """The message of ``exc``: an OSError names its file by the server's path, so it is told by its
    reason alone (``No such file or directory``), and a conflict by what it means (the store's text
    names internal streams and versions); control characters are dropped (a message that cannot be
    stored would leave the job unfinished); at most 500 characters."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    if isinstance(exc, ConcurrencyError):
        return CONFLICTED
    text = _CONTROL_RE.sub("", str(exc)).strip() or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def database_reason(exc: Exception) -> str:
    """The database's message and its detail (``\\u0000 cannot be converted to text.``)."""
    detail = getattr(exc, "detail", None) if isinstance(exc, asyncpg.PostgresError) else None
    return f"{readable(exc)} ({detail})" if detail else readable(exc)
