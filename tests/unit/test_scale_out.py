"""``vaeo up``'s process counts and ``vaeo status``'s one line per running instance."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.cli import build_parser, instance_names, process_counts
from services.lib.status import render


def _counts(*argv: str) -> dict[str, int]:
    return process_counts(build_parser().parse_args(["up", *argv]))


def test_up_starts_one_of_each_kind_by_default_and_a_standby_relay_as_soon_as_anything_is_scaled():
    assert _counts() == {"api": 1, "relay": 1, "projector": 1, "worker": 1, "dispatcher": 1, "credits-watch": 1}
    scaled = _counts("--api", "2", "--workers", "3", "--projectors", "2", "--dispatchers", "2")
    assert scaled == {"api": 2, "relay": 2, "projector": 2, "worker": 3, "dispatcher": 2, "credits-watch": 1}
    assert _counts("--workers", "2", "--relays", "1")["relay"] == 1
    assert _counts("--relays", "3")["relay"] == 3
    names = instance_names(scaled)
    assert [n for n, kind in names.items() if kind == "worker"] == ["worker", "worker-2", "worker-3"]
    assert len(names) == 12


@pytest.mark.parametrize("bad", ["0", "-1", "17", "two", ""])
def test_a_count_out_of_range_is_a_usage_error(bad, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["up", "--workers", bad])
    assert exit_.value.code == 2
    assert "a number of processes is 1 to 16" in capsys.readouterr().err


def test_status_lists_two_workers_of_one_host_as_two_lines():
    started = datetime(2026, 1, 1, tzinfo=UTC)
    processes = [{"process_id": f"worker@h:{pid}:ab", "kind": "worker", "host": "h", "pid": pid,
                  "started_at": started, "beat_at": started, "stopped_at": None, "beat_age_s": 1.0,
                  "stopped_age_s": None} for pid in (101, 202)]
    state = {"processes": processes, "head": 0, "relay_checkpoint": 0, "relay_lag": 0, "projections": [],
             "consumers": [], "queue": [], "webhooks": None}
    lines = [line for line in render(state, 5.0).splitlines() if line.strip().startswith("worker")]
    assert len(lines) == 2
    assert "h:101" in lines[0] and "h:202" in lines[1] and all(" up " in line for line in lines)


def test_status_says_which_relay_is_active_and_which_stands_by():
    started = datetime(2026, 1, 1, tzinfo=UTC)
    processes = [{"process_id": f"relay@h:{pid}:ab", "kind": "relay", "host": "h", "pid": pid, "role": role,
                  "started_at": started, "beat_at": started, "stopped_at": None, "beat_age_s": 1.0,
                  "stopped_age_s": None} for pid, role in ((7, "active"), (8, "standby"))]
    state = {"processes": processes, "head": 0, "relay_checkpoint": 0, "relay_lag": 0, "projections": [],
             "consumers": [], "queue": [], "webhooks": None}
    lines = [line for line in render(state, 5.0).splitlines() if line.strip().startswith("relay")]
    assert "h:7" in lines[0] and "up active" in lines[0]
    assert "h:8" in lines[1] and "up standby" in lines[1]
