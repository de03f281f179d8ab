"""A job's ``error_message``, which clients read (``GET /v1/jobs/{id}``, the job's webhook): what
went wrong, in words, without what only the service knows (a server path, an internal stream id
or version)."""

from __future__ import annotations

import re

import asyncpg

from infra.eventstore import ConcurrencyError

CONFLICTED = ("recording the job's work kept conflicting with concurrent changes to the same records; it was "
              "not recorded")
# Control characters (NUL above all, which PostgreSQL refuses in JSON text) never go into a
# job's message: a message that cannot be stored would leave the job unfinished.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


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
