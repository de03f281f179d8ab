"""``vaeo projections list``: every tracked reader with its status, position and lag.

The read models first, then the consumers with effects (the dispatcher's intake and the credits
watch), which the same machinery runs and which stop the same way on a failing event: a stopped
one shows the failing event's position and the error. The figures are ``vaeo status``'s
(``services.lib.status.reader_states``).
"""

from __future__ import annotations

from infra.db import connect
from infra.settings import Settings
from services.lib.status import EndOffsets, consumer_states, projection_states

LISTED = ("name", "status", "position", "lag", "error", "error_position")


async def list_projections(settings: Settings) -> list[dict]:
    """One row per reader: ``LISTED``'s fields. Kafka unreachable: the lags are None."""
    probe = EndOffsets(settings)
    conn = await connect(settings.resolved_database_url())
    try:
        try:
            ends = await probe.get()
        except Exception:  # noqa: BLE001  the states still show; the lags are unknown
            ends = None
        rows = await projection_states(conn, ends) + await consumer_states(conn, ends)
        return [{key: r[key] for key in LISTED} for r in rows]
    finally:
        await conn.close()
        await probe.close()


def render(rows: list[dict]) -> str:
    """The listing as a table: one row per reader, the error last."""
    width = max([len("NAME"), *(len(r["name"]) for r in rows)]) + 2  # names never run into statuses
    lines = [f"{'NAME':<{width}}{'STATUS':<12}{'POSITION':>10}{'LAG':>10}  ERROR"]
    for r in rows:
        lag = "?" if r["lag"] is None else r["lag"]
        err = f"at {r['error_position']}: {r['error']}" if r["error"] else ""
        lines.append(f"{r['name']:<{width}}{r['status']:<12}{r['position']:>10}{lag:>10}  {err}")
    return "\n".join(lines)
