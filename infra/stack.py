"""The local stack: a private PostgreSQL server and a single-node KRaft Kafka broker.

Both run from the machine's own packages (PostgreSQL from Debian, Kafka jars resolved by Maven
from ``infra/kafka/pom.xml``), in a private directory (``Settings.instance_dir``) on their own
ports, so they never clash with another server. Everything here is idempotent: ``up`` on a
running stack checks readiness and returns; ``down`` on a stopped one does nothing.

Layout of the instance directory::

    pg/data  pg/sock  kafka/data  kafka/server.properties  logs/postgres.log  logs/kafka.log
    kafka.pid

Set ``VAEO_DATABASE_URL`` and ``VAEO_KAFKA_BOOTSTRAP`` to use existing servers instead.
"""

from __future__ import annotations

import asyncio
import base64
import glob
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from infra.settings import Settings

HERE = Path(__file__).resolve().parent
POM = HERE / "kafka" / "pom.xml"
LOG4J = HERE / "kafka" / "log4j2.yaml"


class StackError(RuntimeError):
    pass


def _run(cmd: list[str], *, check: bool = True, env: dict | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-2000:]
        raise StackError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")
    return proc.stdout


def _is_root() -> bool:
    return os.geteuid() == 0


def _apt_install(*packages: str) -> None:
    """Install Debian packages; only possible as root (the machines this runs on are)."""
    if not _is_root():
        raise StackError(f"missing {packages}; install them (apt-get install {' '.join(packages)})")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    stamp = Path("/var/lib/apt/periodic/vaeo-update-stamp")
    if not stamp.exists() or time.time() - stamp.stat().st_mtime > 86400:
        _run(["apt-get", "update", "-q"], env=env)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages], env=env, timeout=1200)


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def _wait(predicate, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise StackError(f"{what} not ready after {timeout:.0f}s\n{tail}")


# ----------------------------------------------------------------------------------- PostgreSQL


def pg_bindir() -> Path:
    """Directory of the newest installed PostgreSQL server binaries, installing them if absent."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        _apt_install("postgresql")
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise StackError("PostgreSQL server binaries not found after apt-get install postgresql")
    return Path(found[-1]).parent


def _as_postgres(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as the `postgres` user the Debian package creates.
    return ["runuser", "-u", "postgres", "--", *cmd] if _is_root() else cmd


@dataclass
class PgPaths:
    root: Path

    @property
    def data(self) -> Path:
        return self.root / "pg" / "data"

    @property
    def sock(self) -> Path:
        return self.root / "pg" / "sock"

    @property
    def log(self) -> Path:
        return self.root / "logs" / "postgres.log"


def _chown_postgres(path: Path) -> None:
    if _is_root():
        shutil.chown(path, "postgres", "postgres")


def pg_running(settings: Settings) -> bool:
    paths = PgPaths(settings.instance_dir)
    if not (paths.data / "PG_VERSION").exists():
        return False
    out = subprocess.run(
        _as_postgres([str(pg_bindir() / "pg_ctl"), "-D", str(paths.data), "status"]),
        capture_output=True, text=True,
    )
    return out.returncode == 0


def pg_up(settings: Settings) -> None:
    bindir = pg_bindir()
    paths = PgPaths(settings.instance_dir)
    for d in (settings.stack_dir, settings.instance_dir, paths.root / "pg", paths.root / "logs"):
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(0o755)
    for d in (paths.root / "pg", paths.root / "logs"):
        _chown_postgres(d)
    if not (paths.data / "PG_VERSION").exists():
        if paths.data.exists():
            shutil.rmtree(paths.data)
        _run(_as_postgres([str(bindir / "initdb"), "-D", str(paths.data), "-U", "postgres", "-A", "trust",
                           "-E", "UTF8", "--locale=C.UTF-8"]))
        paths.sock.mkdir(exist_ok=True)
        _chown_postgres(paths.sock)
        conf = paths.data / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                "\n# vaeo local stack\n"
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{paths.sock}'\n"
                "max_connections = 300\n"
                "shared_buffers = 256MB\n"
                "synchronous_commit = on\n"
                "fsync = on\n"
            )
    if not pg_running(settings):
        _run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(paths.data), "-l", str(paths.log), "-w", "-t", "60",
                           "-o", f"-p {settings.stack_pg_port}", "start"]))
    _wait(lambda: _port_open(settings.stack_pg_port), 60, "PostgreSQL", paths.log)
    exists = _run([str(bindir / "psql"), "-h", "127.0.0.1", "-p", str(settings.stack_pg_port), "-U", "postgres",
                   "-d", "postgres", "-tAc", "SELECT 1 FROM pg_database WHERE datname = 'vaeo'"])
    if exists.strip() != "1":
        _run([str(bindir / "psql"), "-h", "127.0.0.1", "-p", str(settings.stack_pg_port), "-U", "postgres",
              "-d", "postgres", "-c", "CREATE DATABASE vaeo"])


def pg_down(settings: Settings, mode: str = "fast") -> None:
    paths = PgPaths(settings.instance_dir)
    if pg_running(settings):
        _run(_as_postgres([str(pg_bindir() / "pg_ctl"), "-D", str(paths.data), "-m", mode, "-w", "stop"]))


# ---------------------------------------------------------------------------------------- Kafka


def java() -> str:
    """The Java runtime the broker runs on (and the tests' HTML checker): ``java`` on the PATH,
    installed from Debian's packages when absent."""
    if not shutil.which("java"):
        _apt_install("openjdk-17-jre-headless")
    found = shutil.which("java")
    if found is None:
        raise StackError("java is not on the PATH after installing openjdk-17-jre-headless")
    return found


def _kafka_libs(settings: Settings) -> Path:
    """Resolve the broker jars with Maven into a cache keyed by the pom's content."""
    java()
    if not shutil.which("mvn"):
        _apt_install("maven")
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:12]
    target = settings.kafka_jar_cache / digest
    if (target / ".complete").exists():
        return target / "libs"
    target.mkdir(parents=True, exist_ok=True)
    _run(["mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
          f"-DoutputDirectory={target / 'libs'}", "-DincludeScope=runtime"], timeout=1200)
    (target / ".complete").touch()
    return target / "libs"


def _kafka_dir(settings: Settings) -> Path:
    return settings.instance_dir / "kafka"


def _kafka_pid(settings: Settings) -> int | None:
    pidfile = settings.instance_dir / "kafka.pid"
    if not pidfile.exists():
        return None
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError, PermissionError):
        return None
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists() or b"kafka.Kafka" not in cmdline.read_bytes():
        return None
    return pid


def _write_kafka_config(settings: Settings) -> Path:
    kdir = _kafka_dir(settings)
    port, ctl = settings.stack_kafka_port, settings.stack_kafka_port + 1
    props = kdir / "server.properties"
    props.write_text(
        "process.roles=broker,controller\n"
        "node.id=1\n"
        f"controller.quorum.bootstrap.servers=127.0.0.1:{ctl}\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{ctl}\n"
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
        "inter.broker.listener.name=PLAINTEXT\n"
        f"log.dirs={kdir / 'data'}\n"
        "num.partitions=1\n"
        "auto.create.topics.enable=false\n"
        "offsets.topic.replication.factor=1\n"
        "offsets.topic.num.partitions=6\n"
        "transaction.state.log.replication.factor=1\n"
        "transaction.state.log.min.isr=1\n"
        "share.coordinator.state.topic.replication.factor=1\n"
        "share.coordinator.state.topic.min.isr=1\n"
        "group.initial.rebalance.delay.ms=0\n"
        "log.flush.interval.messages=9223372036854775807\n"
    )
    return props


def kafka_ready(settings: Settings) -> bool:
    if not _port_open(settings.stack_kafka_port):
        return False
    return asyncio.run(_kafka_metadata_ok(settings.resolved_kafka_bootstrap()))


async def _kafka_metadata_ok(bootstrap: str) -> bool:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000)
    try:
        await admin.start()
        await admin.list_topics()
        return True
    except Exception:
        return False
    finally:
        await admin.close()


def kafka_up(settings: Settings) -> float:
    """Start the broker if it is not running; returns the seconds it took to be ready."""
    started = time.monotonic()
    if _kafka_pid(settings) and kafka_ready(settings):
        return 0.0
    libs = _kafka_libs(settings)
    kdir = _kafka_dir(settings)
    (kdir / "data").mkdir(parents=True, exist_ok=True)
    (settings.instance_dir / "logs").mkdir(parents=True, exist_ok=True)
    props = _write_kafka_config(settings)
    java = ["java", "-cp", f"{libs}/*", f"-Dlog4j2.configurationFile={LOG4J}"]
    if not (kdir / "data" / "meta.properties").exists():
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        # --cluster-id=... form: a random id may start with "-", which argparse takes for an option.
        _run([*java, "kafka.tools.StorageTool", "format", "--standalone", f"--cluster-id={cluster_id}",
              "-c", str(props)])
    if _kafka_pid(settings) is None:
        log = settings.instance_dir / "logs" / "kafka.log"
        heap = settings.stack_kafka_heap_mb
        # TieredStopAtLevel=1: the client compiler only. On the two cores this stack is made for,
        # the server compiler was still recompiling the broker's hot paths ten minutes after its
        # start, taking half of the broker's CPU under load (docs/benchmarks.md, "Revival"); the
        # client compiler's code is a little slower, and the broker starts sooner.
        with log.open("ab") as out:
            proc = subprocess.Popen(
                ["java", f"-Xms{min(256, heap)}m", f"-Xmx{heap}m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                 "-XX:TieredStopAtLevel=1",
                 "-Djava.awt.headless=true", "-cp", f"{libs}/*", f"-Dlog4j2.configurationFile={LOG4J}",
                 "kafka.Kafka", str(props)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        (settings.instance_dir / "kafka.pid").write_text(str(proc.pid))
    log = settings.instance_dir / "logs" / "kafka.log"
    _wait(lambda: _kafka_pid(settings) is not None and kafka_ready(settings), 120, "Kafka", log)
    return time.monotonic() - started


def kafka_down(settings: Settings, kill: bool = False) -> None:
    pid = _kafka_pid(settings)
    if pid is None:
        return
    os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not _running(pid):
            break
        time.sleep(0.2)
    else:
        os.kill(pid, signal.SIGKILL)
    (settings.instance_dir / "kafka.pid").unlink(missing_ok=True)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs. A broker this process started (a test's stack) stays a zombie
    once it exits, until it is reaped, and a signal 0 still reaches a zombie: without the reaping,
    every stop waited out its whole deadline."""
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    except ChildProcessError:  # not this process' child: its parent reaps it
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def kafka_rss_mb(settings: Settings) -> float | None:
    pid = _kafka_pid(settings)
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


# ---------------------------------------------------------------------------------------- stack


def up(settings: Settings) -> dict:
    """Provision and start what the settings do not point elsewhere; return a status dict."""
    if not settings.database_url:
        pg_up(settings)
    kafka_seconds = None
    if not settings.kafka_bootstrap:
        kafka_seconds = kafka_up(settings)
    return status(settings) | {"kafka_ready_seconds": kafka_seconds}


def down(settings: Settings) -> None:
    if not settings.kafka_bootstrap:
        kafka_down(settings)
    if not settings.database_url:
        pg_down(settings)


def status(settings: Settings) -> dict:
    local_pg = not settings.database_url
    local_kafka = not settings.kafka_bootstrap
    return {
        "instance": settings.stack_instance,
        "dir": str(settings.instance_dir),
        "postgres": {
            "url": settings.resolved_database_url(),
            "managed": local_pg,
            "running": pg_running(settings) if local_pg else None,
            "log": str(PgPaths(settings.instance_dir).log) if local_pg else None,
        },
        "kafka": {
            "bootstrap": settings.resolved_kafka_bootstrap(),
            "managed": local_kafka,
            "pid": _kafka_pid(settings) if local_kafka else None,
            "ready": kafka_ready(settings) if local_kafka else None,
            "rss_mb": kafka_rss_mb(settings) if local_kafka else None,
            "log": str(settings.instance_dir / "logs" / "kafka.log") if local_kafka else None,
        },
    }
