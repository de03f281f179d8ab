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
import fcntl
import glob
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from infra import provision
from infra.llama_server import llama_down
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
    provision.ensure("postgresql")
    found = sorted(glob.glob(provision.POSTGRES_INITDB), key=lambda p: int(p.split("/")[4]))
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
    provision.ensure("openjdk-17-jre-headless")
    return shutil.which("java")


def _kafka_libs(settings: Settings) -> Path:
    """Resolve the broker jars with Maven into a cache keyed by the pom's content."""
    java()
    provision.ensure("maven")
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


# ------------------------------------------------------------------------------------ SeaweedFS

# The object store of the local stack: SeaweedFS (Apache-2.0), built from the Go module proxy with
# the machine's Go. Its go.mod has replace directives, so ``go install module@version`` is refused:
# the module's source is downloaded (``go mod download``), copied to a writable directory and built.
SEAWEEDFS_MODULE = "github.com/seaweedfs/seaweedfs"
SEAWEEDFS_VERSION = "v0.0.0-20261109003541-7506e5f91cd6"
GO_CANDIDATES = ("/usr/local/go/bin/go",)
SEAWEEDFS_MEMORY_MB = 512  # the Go heap's soft limit of the stack's SeaweedFS


def go_tool() -> str:
    """The Go toolchain that builds SeaweedFS: ``go`` on the PATH, else /usr/local/go/bin/go."""
    found = shutil.which("go") or next((c for c in GO_CANDIDATES if os.access(c, os.X_OK)), None)
    if found is None:
        raise StackError("the object store (SeaweedFS) is built with Go, and no `go` was found on the PATH nor "
                         "at /usr/local/go/bin/go: install Go 1.26 or newer from https://go.dev/dl/ (Debian's "
                         "golang package is too old)")
    return found


def seaweedfs_binary(settings: Settings) -> Path:
    """The ``weed`` binary, built once into ``seaweedfs_cache/<version>/weed`` (a file lock keeps two
    processes from building at once; the second finds the first one's binary)."""
    target = settings.seaweedfs_cache / SEAWEEDFS_VERSION / "weed"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with (settings.seaweedfs_cache / f"{SEAWEEDFS_VERSION}.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not target.is_file():
            _build_seaweedfs(target)
    return target


def _build_seaweedfs(target: Path) -> None:
    go = go_tool()
    home = target.parent.parent.parent / "go"  # ~/.cache/vaeo/go: the module cache survives the build
    env = dict(os.environ, GOPATH=str(home), GOMODCACHE=str(home / "pkg" / "mod"), GOCACHE=str(home / "build-cache"),
               GOFLAGS="-mod=mod -buildvcs=false", GOTOOLCHAIN="local", CGO_ENABLED="0")
    started = time.monotonic()
    listing = _run([go, "mod", "download", "-json", f"{SEAWEEDFS_MODULE}@{SEAWEEDFS_VERSION}"], env=env, timeout=1800)
    source = Path(json.loads(listing)["Dir"])
    work = target.parent / "src"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    for folder, _, files in os.walk(work):  # the module cache is read-only; the build writes go.sum
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    partial = target.with_suffix(".part")
    proc = subprocess.run([go, "build", "-o", str(partial), "./weed"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=3600)
    shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        raise StackError(f"building SeaweedFS failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-2000:]}")
    os.replace(partial, target)
    shutil.rmtree(home / "build-cache", ignore_errors=True)  # 1.6 GB of objects no later start needs
    (target.parent / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")


def _seaweed_dir(settings: Settings) -> Path:
    return settings.instance_dir / "seaweedfs"


def seaweedfs_credentials(settings: Settings) -> tuple[str, str]:
    """The access key id and secret of the stack's SeaweedFS, generated once (file mode 0600)."""
    path = _seaweed_dir(settings) / "credentials.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        made = {"access_key_id": "vaeo" + secrets.token_hex(8), "secret_access_key": secrets.token_urlsafe(30)}
        partial = path.with_suffix(".part")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(made, f)
        os.replace(partial, path)
    known = json.loads(path.read_text())
    return known["access_key_id"], known["secret_access_key"]


def _write_seaweed_config(settings: Settings) -> Path:
    access, secret = seaweedfs_credentials(settings)
    identity = {"name": "vaeo", "credentials": [{"accessKey": access, "secretKey": secret}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"]}
    config = _seaweed_dir(settings) / "s3.json"
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"identities": [identity]}, f)
    return config


def _seaweed_pid(settings: Settings) -> int | None:
    pidfile = settings.instance_dir / "seaweedfs.pid"
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 0)
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if b"weed" in cmdline and _running(pid) else None


def seaweed_argv(settings: Settings, weed: Path, config: Path) -> list[str]:
    """``weed server``: master, volume, filer and the S3 gateway in one process, on loopback only,
    on ``stack_s3_port`` and the ports after it (gRPC: +11 to +14, below the ephemeral range)."""
    p = settings.stack_s3_port
    data = _seaweed_dir(settings) / "data"
    return [str(weed), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
            f"-master.port={p + 1}", f"-master.port.grpc={p + 11}", "-master.volumeSizeLimitMB=256",
            "-master.telemetry=false",  # no usage report leaves the machine
            f"-volume.port={p + 2}", f"-volume.port.grpc={p + 12}", "-volume.max=0",
            "-filer", f"-filer.port={p + 3}", f"-filer.port.grpc={p + 13}",
            "-s3", f"-s3.port={p}", f"-s3.port.grpc={p + 14}", "-s3.port.iceberg=0", "-s3.port.lance=0",
            "-s3.cacheCapacityMB=64",
            f"-s3.config={config}"]


def seaweed_ready(settings: Settings) -> bool:
    """The S3 gateway answers a signed request, and a write lands (volumes are allocated)."""
    if not _port_open(settings.stack_s3_port):
        return False
    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    access, secret = seaweedfs_credentials(settings)
    client = botocore.session.get_session().create_client(
        "s3", endpoint_url=f"http://127.0.0.1:{settings.stack_s3_port}", region_name=settings.s3_region,
        aws_access_key_id=access, aws_secret_access_key=secret,
        config=Config(s3={"addressing_style": "path"}, connect_timeout=2, read_timeout=5, retries={"max_attempts": 1}))
    try:
        try:
            client.head_bucket(Bucket=READY_BUCKET)
        except ClientError:
            client.create_bucket(Bucket=READY_BUCKET)
        client.put_object(Bucket=READY_BUCKET, Key="ready", Body=b"ok")
        return True
    except (BotoCoreError, ClientError):
        return False
    finally:
        client.close()


READY_BUCKET = "vaeo-ready"


def seaweed_up(settings: Settings) -> float:
    """Start the stack's SeaweedFS if it is not running (building it the first time); the seconds it took."""
    started = time.monotonic()
    if _seaweed_pid(settings) and seaweed_ready(settings):
        return 0.0
    weed = seaweedfs_binary(settings)
    (_seaweed_dir(settings) / "data").mkdir(parents=True, exist_ok=True)
    (settings.instance_dir / "logs").mkdir(parents=True, exist_ok=True)
    log = settings.instance_dir / "logs" / "seaweedfs.log"
    if _seaweed_pid(settings) is None:
        config = _write_seaweed_config(settings)
        # weed reads master.toml from its working directory: one volume per new collection (a bucket),
        # not seven, so that a bucket costs one volume of the disk's share (volume.max=0: free space
        # divided by the volume size).
        (_seaweed_dir(settings) / "master.toml").write_text(
            "[master.volume_growth]\ncopy_1 = 1\ncopy_2 = 2\ncopy_3 = 3\ncopy_other = 1\n")
        with log.open("ab") as out:
            # GOMEMLIMIT: the Go runtime collects sooner rather than grow past it (a soft bound: without
            # it the server held 730 MB after the test suite's uploads; with it, see docs/operations.md).
            # Not too close to the live heap: at 256 MiB it collected without end, idle.
            env = dict(os.environ, GOMEMLIMIT=f"{SEAWEEDFS_MEMORY_MB}MiB")
            proc = subprocess.Popen(seaweed_argv(settings, weed, config), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, cwd=_seaweed_dir(settings),
                                    env=env)
        (settings.instance_dir / "seaweedfs.pid").write_text(str(proc.pid))
    _wait(lambda: _seaweed_pid(settings) is not None and seaweed_ready(settings), 120, "SeaweedFS", log)
    return time.monotonic() - started


def seaweed_down(settings: Settings) -> None:
    pid = _seaweed_pid(settings)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.2)
    if _running(pid):
        os.kill(pid, signal.SIGKILL)
    (settings.instance_dir / "seaweedfs.pid").unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------- stack


def up(settings: Settings) -> dict:
    """Provision and start what the settings do not point elsewhere; return a status dict."""
    if not settings.database_url:
        pg_up(settings)
    kafka_seconds = None
    if not settings.kafka_bootstrap:
        kafka_seconds = kafka_up(settings)
    s3_seconds = seaweed_up(settings) if settings.uses_local_object_store else None
    return status(settings) | {"kafka_ready_seconds": kafka_seconds, "object_store_ready_seconds": s3_seconds}


def down(settings: Settings) -> None:
    seaweed_down(settings)  # whatever the backend: a SeaweedFS this stack started stops with it
    llama_down(settings)  # the test stack's language-model server, when it started one
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
        "object_store": {
            "backend": settings.storage_backend,
            "endpoint": settings.resolved_s3_endpoint() if settings.storage_backend == "s3" else None,
            "managed": settings.uses_local_object_store,
            "pid": _seaweed_pid(settings),
            "log": str(settings.instance_dir / "logs" / "seaweedfs.log"),
        },
    }
