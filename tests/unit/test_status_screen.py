"""`vaeo status`'s screen (services.lib.status.render): which processes it lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.lib.status import STOPPED_SHOWN_S, render

STARTED = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def process(kind: str, pid: int, *, beat_age_s: float = 1.0, stopped_age_s: float | None = None) -> dict:
    return {"process_id": f"{kind}-{pid}", "kind": kind, "host": "vm", "pid": pid, "started_at": STARTED,
            "beat_at": STARTED, "stopped_at": STARTED + timedelta(hours=1) if stopped_age_s is not None else None,
            "beat_age_s": beat_age_s, "stopped_age_s": stopped_age_s}


def screen(processes: list[dict]) -> list[str]:
    state = {"processes": processes, "head": 10, "relay_checkpoint": 10, "relay_lag": 0, "projections": [],
             "queue": [], "webhooks": None}
    text = render(state, heartbeat_interval_s=5.0)
    return text.split("\n\nLOG")[0].splitlines()[1:]


def test_running_silent_and_recently_stopped_processes_are_listed_older_stops_counted() -> None:
    rows = screen([process("api", 1), process("relay", 2, beat_age_s=60),
                   process("worker", 3, stopped_age_s=120), process("api", 4, stopped_age_s=STOPPED_SHOWN_S + 1),
                   process("relay", 5, stopped_age_s=86_400), process("worker", 6, beat_age_s=STOPPED_SHOWN_S + 1)])
    assert [r.split()[0:3] for r in rows[:3]] == [["api", "vm:1", "up"], ["relay", "vm:2", "silent"],
                                                  ["worker", "vm:3", "stopped"]]
    # "since": when it started, or for a stopped one, when it stopped (it showed the start).
    assert rows[0].endswith("since 2026-11-23 12:00:00") and rows[2].endswith("since 2026-11-23 13:00:00")
    # Every restart used to add a row forever: the stops of more than an hour ago are one line, and
    # so are the processes killed without a stop whose last heartbeat is that old.
    assert rows[3:] == ["  (3 stopped or silent for more than an hour not listed; --json lists them)"]


def test_nothing_hidden_says_nothing_about_hidden_rows() -> None:
    rows = screen([process("api", 1), process("api", 2, stopped_age_s=10)])
    assert len(rows) == 2 and not any("not listed" in r for r in rows)


def test_a_long_reader_name_or_job_type_keeps_its_columns_apart() -> None:
    reader = {"name": "article_translations_of_every_language", "source": "events", "status": "live",
              "position": 65, "lag": 0, "error": None, "error_position": None}
    state = {"processes": [], "head": 65, "relay_checkpoint": 65, "relay_lag": 0, "projections": [reader],
             "queue": [{"job_type": "regenerate_article_in_style", "state": "queued", "count": 3}], "webhooks": None}
    text = render(state, heartbeat_interval_s=5.0)
    assert "  article_translations_of_every_language  events" in text
    assert "  regenerate_article_in_style  queued" in text
