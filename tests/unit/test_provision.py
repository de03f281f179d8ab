"""Provisioning the system packages (``infra.provision``) without running apt: a fake ``apt-get``
(a script that records its calls, says what it is told to and creates the files a package
would) stands for it, and the machine's lock is a real file lock between real processes."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest

from infra import provision
from infra.provision import TESTS, Apt, Need, ProvisionError

FAKE_APT = """#!{python}
import json, sys, time
from pathlib import Path

here = Path(__file__).parent
plan = json.loads((here / "plan.json").read_text())
step = "update" if "update" in sys.argv else "install"
log = here / "calls.log"
with log.open("a") as f:
    f.write(step + " " + " ".join(sys.argv[sys.argv.index(step) + 1:]) + "\\n")
calls = log.read_text().splitlines()
if step == "update":
    if len(calls) <= plan.get("update_locked_times", 0):
        print("E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)")
        print("E: Unable to lock directory /var/lib/apt/lists/")
        sys.exit(100)
    print(plan.get("update_says", "Reading package lists..."))
    sys.exit(plan.get("update_code", 0))
print("Setting up the packages...", flush=True)
time.sleep(plan.get("install_s", 0))
for made in plan.get("creates", []):
    Path(made).write_text("")
sys.exit(plan.get("install_code", 0))
"""


def fake_apt(root: Path, **plan) -> Path:
    root.mkdir(exist_ok=True)
    (root / "plan.json").write_text(json.dumps(plan))
    script = root / "apt-get"
    script.write_text(FAKE_APT.format(python=sys.executable))
    script.chmod(0o755)
    return script


def calls(fake: Path) -> list[str]:
    log = fake.parent / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def _provision_once(barrier, fake: str, marker: str, lock: str) -> None:
    barrier.wait()  # both processes look for the file at the same moment
    provision.provision([Need(marker, "fakepkg", TESTS)], apt=Apt(executable=fake, root=True),
                        lock_path=Path(lock), say=lambda line: None)


def test_two_processes_asking_at_once_install_once(tmp_path):
    marker = tmp_path / "usr-bin-fake"
    fake = fake_apt(tmp_path / "apt", creates=[str(marker)], install_s=1.0)
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(2)
    procs = [spawn.Process(target=_provision_once, args=(barrier, str(fake), str(marker), str(tmp_path / "lock")))
             for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    # One update and one install: the second process waited on the lock, looked again and found the file.
    assert [c.split()[0] for c in calls(fake)] == ["update", "install"]
    assert marker.exists()


def test_nothing_missing_takes_no_lock_and_runs_nothing(tmp_path):
    present = tmp_path / "present"
    present.write_text("")
    fake = fake_apt(tmp_path / "apt")
    unreachable_lock = tmp_path / "no-such-dir" / "lock"  # opening it would fail
    assert provision.provision([Need(str(present), "fakepkg", TESTS), Need("sh", "dash", TESTS)],
                               apt=Apt(executable=str(fake), root=True), lock_path=unreachable_lock) == []
    assert calls(fake) == []


def test_the_apt_commands_wait_for_apts_lock_and_fail_on_a_list_not_fetched():
    apt = Apt(root=True, lock_timeout_s=300)
    update = provision.update_command(apt)
    install = provision.install_command(apt, ["ffmpeg", "espeak-ng"])
    for command in (update, install):
        assert command[0] == "apt-get"
        assert command[command.index("DPkg::Lock::Timeout=300") - 1] == "-o"
    assert update[-1] == "update" and "APT::Update::Error-Mode=any" in update
    assert install[-3:] == ["install", "ffmpeg", "espeak-ng"]
    assert {"-y", "--no-install-recommends"} <= set(install)


def test_what_is_missing_is_installed_in_one_update_and_one_install_and_we_speak_first(tmp_path):
    made = [tmp_path / "a", tmp_path / "b"]
    fake = fake_apt(tmp_path / "apt", creates=[str(p) for p in made])
    said: list[str] = []
    needs = [Need(str(made[0]), "pkg-a", TESTS), Need(str(made[1]), "pkg-b", TESTS),
             Need(str(made[1]), "pkg-b", TESTS)]
    installed = provision.provision(needs, apt=Apt(executable=str(fake), root=True), lock_path=tmp_path / "lock",
                                    say=said.append)
    assert installed == ["pkg-a", "pkg-b"]
    assert calls(fake)[0].startswith("update") and calls(fake)[1].endswith("install pkg-a pkg-b")
    assert len(calls(fake)) == 2
    assert said[0].startswith("vaeo: installing pkg-a pkg-b") and "waits for it, 300 s at most" in said[0]
    assert "  | Setting up the packages..." in said[1:]


def test_not_root_names_the_command_to_run_and_runs_nothing(tmp_path):
    fake = fake_apt(tmp_path / "apt")
    with pytest.raises(ProvisionError) as refused:
        provision.provision([Need(str(tmp_path / "absent"), "fakepkg", TESTS)],
                            apt=Apt(executable=str(fake), root=False), lock_path=tmp_path / "lock")
    assert "installing needs root" in str(refused.value)
    assert "`sudo apt-get update && sudo apt-get install -y --no-install-recommends fakepkg`" in str(refused.value)
    assert calls(fake) == []


def test_no_apt_get_names_the_packages(tmp_path):
    with pytest.raises(ProvisionError) as refused:
        provision.provision([Need("no-such-tool-here", "fakepkg", TESTS)],
                            apt=Apt(executable=str(tmp_path / "apt-get"), root=True), lock_path=tmp_path / "lock")
    assert "missing no-such-tool-here" in str(refused.value) and "no " in str(refused.value)
    assert "(Debian: fakepkg)" in str(refused.value)


def test_a_network_failure_says_so_with_apts_words_and_the_command(tmp_path):
    says = "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving"
    fake = fake_apt(tmp_path / "apt", update_code=100, update_says=says)
    with pytest.raises(ProvisionError) as failed:
        provision.provision([Need(str(tmp_path / "absent"), "fakepkg", TESTS)],
                            apt=Apt(executable=str(fake), root=True), lock_path=tmp_path / "lock",
                            say=lambda line: None)
    message = str(failed.value)
    assert "could not fetch the package lists (exit 100): is the network up" in message
    assert "Temporary failure resolving" in message
    assert message.endswith("run `apt-get update && apt-get install -y --no-install-recommends fakepkg`")
    assert [c.split()[0] for c in calls(fake)] == ["update"]  # no install after a failed update


def test_a_failed_install_and_a_package_that_brings_nothing_are_errors(tmp_path):
    fake = fake_apt(tmp_path / "apt", install_code=100)
    needs = [Need(str(tmp_path / "absent"), "fakepkg", TESTS)]
    apt = Apt(executable=str(fake), root=True)
    with pytest.raises(ProvisionError, match=r"`apt-get install fakepkg` failed \(exit 100\)"):
        provision.provision(needs, apt=apt, lock_path=tmp_path / "lock", say=lambda line: None)
    fake_apt(tmp_path / "apt", install_code=0)  # succeeds, but creates nothing
    with pytest.raises(ProvisionError, match="installed fakepkg but .*absent is still missing"):
        provision.provision(needs, apt=apt, lock_path=tmp_path / "lock", say=lambda line: None)


def test_update_waits_while_another_apt_holds_the_lists_lock(tmp_path):
    """apt's own lock timeout does not cover the package lists' lock: ``apt-get update`` is tried
    again until it is free, within the same bound, and the user is told what it waits for."""
    marker = tmp_path / "made"
    fake = fake_apt(tmp_path / "apt", update_locked_times=2, creates=[str(marker)])
    said: list[str] = []
    apt = Apt(executable=str(fake), root=True, retry_every_s=0.05)
    provision.provision([Need(str(marker), "fakepkg", TESTS)], apt=apt, lock_path=tmp_path / "lock", say=said.append)
    assert [c.split()[0] for c in calls(fake)] == ["update", "update", "update", "install"]
    waiting = [line for line in said if "waiting for another apt" in line]
    assert waiting == ["vaeo: waiting for another apt to release /var/lib/apt/lists/lock (held by process 4242 "
                       "(apt-get)), 300 s at most"]


def test_a_lists_lock_held_beyond_the_bound_is_an_error_naming_the_command(tmp_path):
    fake = fake_apt(tmp_path / "apt", update_locked_times=100)
    apt = Apt(executable=str(fake), root=True, lock_timeout_s=0)
    with pytest.raises(ProvisionError) as failed:
        provision.provision([Need(str(tmp_path / "absent"), "fakepkg", TESTS)], apt=apt,
                            lock_path=tmp_path / "lock", say=lambda line: None)
    assert str(failed.value).startswith("another apt kept /var/lib/apt/lists/lock locked for 0 s (held by process 4242")
    assert "run `apt-get update && apt-get install -y --no-install-recommends fakepkg`" in str(failed.value)


def test_the_table_says_who_needs_what():
    assert {n.who for n in provision.NEEDS} == {provision.SERVICE, provision.POSTGRES, provision.KAFKA, TESTS}
    every = provision.packages_of(provision.wanted(tests=True))
    assert {"ffmpeg", "espeak-ng", "fonts-dejavu-core", "libgl1", "libglib2.0-0", "postgresql", "kcat"} <= set(every)
    service = provision.packages_of(provision.wanted(local_postgres=False, local_kafka=False))
    assert "ffmpeg" in service and not {"postgresql", "maven", "kcat"} & set(service)
    with pytest.raises(ValueError, match="not in infra.provision.NEEDS"):
        provision.ensure("ffmpeg", "no-such-package")
