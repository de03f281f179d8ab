"""One clock: code that needs "now" gets it from ``Settings.now`` (which a test or a replay can fix
or shift with ``VAEO_CLOCK_FIXED`` / ``VAEO_CLOCK_OFFSET_S``) or as a parameter, never from the
machine's clock directly. ``infra.settings.wall_clock`` is the one reader of that clock.

Allowed besides it: ages of files on disk, which the file system stamps with the machine's clock
(abandoned staging files, the package-list stamp of the local stack)."""

from __future__ import annotations

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
    "infra/stack.py": "the apt stamp file's age",
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
