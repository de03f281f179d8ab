"""One clock: code that needs "now" gets it from ``Settings.now`` (which a test or a replay can fix
or shift with ``VAEO_CLOCK_FIXED`` / ``VAEO_CLOCK_OFFSET_S``) or as a parameter, never from the
machine's clock directly. ``infra.settings.wall_clock`` is the one reader of that clock.

Allowed besides it: ages of files on disk, which the file system stamps with the machine's clock
(abandoned staging files, the package-list stamp of the local stack)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# datetime.now(), utcnow(), today(); time.time() and time_ns(); gmtime(), localtime(), ctime() with no
# argument (with one they only format a time they were given, as the log formatter does).
READS_THE_CLOCK = re.compile(r"\bdatetime\.(?:now|utcnow|today)\(|\btime\.time(?:_ns)?\(\)|\bdate\.today\(|"
                             r"\btime\.(?:gmtime|localtime|ctime)\(\)")
ALLOWED = {
    "infra/settings.py": "wall_clock, the one reader",
    "infra/storage.py": "staging files' ages against their mtimes",
}


def test_no_code_reads_the_machine_clock_but_the_settings():
    readers = []
    for room in ("domain", "infra", "projections", "services"):
        for path in sorted((ROOT / room).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if READS_THE_CLOCK.search(line.split("#", 1)[0]) and relative not in ALLOWED:
                    readers.append(f"{relative}:{number}: {line.strip()}")
    assert not readers, "read the clock from Settings.now or a parameter:\n" + "\n".join(readers)


def test_the_allowed_readers_still_need_their_exception():
    for relative in ALLOWED:
        assert READS_THE_CLOCK.search((ROOT / relative).read_text()), f"{relative} no longer reads the clock"


# PostgreSQL's clock: now(), clock_timestamp(), statement_timestamp(), transaction_timestamp(),
# timeofday(), current_timestamp / current_date / current_time / localtimestamp / localtime.
SQL_READS_THE_CLOCK = re.compile(
    r"\b(?:now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\s*\(\s*\)"
    r"|\b(?:current_timestamp|current_date|current_time|localtimestamp)\b", re.IGNORECASE)
# Column defaults that stamp a row for operators; no decision reads them, and the service writes
# every time a decision reads (a job's due time, a lease, a window, an event's recorded_at) itself.
SQL_ALLOWED_DEFAULT = re.compile(r"\bDEFAULT\s+(?:now|clock_timestamp)\(\)", re.IGNORECASE)


def _sql_clock_reads(text: str) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = SQL_ALLOWED_DEFAULT.sub("", line.split("--", 1)[0])
        if SQL_READS_THE_CLOCK.search(code.split("#", 1)[0]):
            found.append((number, line.strip()))
    return found


def _strings(source: str) -> list[tuple[int, str]]:
    """The string literals of a Python module (where its SQL is), with their first lines; the
    f-strings' literal parts too."""
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_no_sql_reads_the_database_clock():
    """Retries are scheduled by the service's clock and claimed by it too: a statement that read
    PostgreSQL's clock instead would compare two clocks (a fixed or shifted service clock, or
    two machines' clocks). SQL is read where it is: Python's string literals, and the migrations."""
    readers = []
    for room in ("domain", "infra", "projections", "services"):
        for path in sorted((ROOT / room).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for first, text in _strings(path.read_text()):
                readers += [f"{relative}:{first + n - 1}: {line}" for n, line in _sql_clock_reads(text)]
        for path in sorted((ROOT / room).rglob("*.sql")):
            relative = path.relative_to(ROOT).as_posix()
            readers += [f"{relative}:{n}: {line}" for n, line in _sql_clock_reads(path.read_text())]
    assert not readers, "pass the service's clock (Settings.now) as a parameter:\n" + "\n".join(readers)


def test_the_sql_rule_sees_a_clock_read():
    assert _sql_clock_reads("UPDATE job_queue SET lease_expires_at = now() + make_interval(secs => $2)")
    assert _sql_clock_reads("WHERE window_start < floor(extract(epoch FROM clock_timestamp()) / 60)")
    assert _sql_clock_reads("SELECT CURRENT_TIMESTAMP")
    assert not _sql_clock_reads("updated_at timestamptz NOT NULL DEFAULT now()")
    assert not _sql_clock_reads("next_attempt_at = $4 + make_interval(secs => $2)")
