"""``vaeo``: the command line of the service. ``vaeo --help`` lists the commands."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from uuid import UUID

from domain.languages import CODES, DEFAULT_LANGUAGE, supported
from infra import provision, stack
from infra.settings import Settings
from services.cli.ready import API_READY_TIMEOUT_S, wait_for_api

PROCESSES = ("api", "relay", "projector", "worker", "dispatcher", "credits-watch")


def _settings(args: argparse.Namespace | None = None) -> Settings:
    settings = Settings()
    if args is not None and getattr(args, "port", None):
        settings = settings.model_copy(update={"api_port": args.port})
    return settings


def ensure_secret_key(settings: Settings) -> Settings:
    """Development convenience: a service key generated once into the stack dir.

    Production must set ``VAEO_SECRET_KEY``; the mode check refuses to start without it.
    """
    if settings.secret_key:
        return settings
    if settings.mode == "production":
        sys.exit("VAEO_SECRET_KEY must be set in production mode (64 hex characters)")
    from infra.crypto import SecretBox

    path = settings.instance_dir / "secret.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SecretBox.generate_key_hex())
        path.chmod(0o600)
    return settings.model_copy(update={"secret_key": path.read_text().strip()})


async def prepare(settings: Settings) -> None:
    """Migrate the database and create the topics (idempotent)."""
    from infra.db import migrate
    from infra.eventlog import ensure_topics
    from projections import all_ddl

    await migrate(settings.resolved_database_url(), all_ddl())
    await ensure_topics(settings)


# ------------------------------------------------------------------------------------ commands


def provision_for(settings: Settings, *, tests: bool = False) -> list[str]:
    """The system packages of the service and of the local servers the settings ask for (and the
    tests'), installed when absent (``infra.provision``); the packages installed."""
    return provision.provision(provision.wanted(local_postgres=not settings.database_url,
                                                local_kafka=not settings.kafka_bootstrap, tests=tests))


def cmd_provision(args: argparse.Namespace) -> int:
    installed = provision_for(_settings(), tests=args.tests)
    print(f"system packages: installed {' '.join(installed)}" if installed else "system packages: all present")
    return 0


def cmd_stack(args: argparse.Namespace) -> int:
    settings = _settings()
    if args.action == "up":
        provision_for(settings)
        print(json.dumps(stack.up(settings), indent=2, default=str))
    elif args.action == "down":
        stack.down(settings)
        print("stack stopped")
    else:
        print(json.dumps(stack.status(settings), indent=2, default=str))
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    asyncio.run(prepare(_settings()))
    print("migrated; topics ready")
    return 0


def cmd_relay(args: argparse.Namespace) -> int:
    from services.lib.common import run_until_signalled, setup_logging
    from services.lib.status import with_heartbeat
    from services.processes import relay

    setup_logging()
    settings = _settings()
    active = relay.Relay(settings)
    started = time.monotonic()
    run_until_signalled(with_heartbeat(settings, "relay", active.run))
    logging.getLogger("vaeo.relay").info("relay: stopped after %.0fs, %d events relayed in %d batches "
                                         "(%d fetches held for unhurried appends)",
                                         time.monotonic() - started, active.relayed, active.batches, active.held)
    return 0


def cmd_projector(args: argparse.Namespace) -> int:
    from services.lib.common import run_until_signalled, setup_logging
    from services.lib.status import with_heartbeat
    from services.processes.projector.runner import run_projector

    setup_logging()
    settings = _settings()
    run_until_signalled(with_heartbeat(settings, "projector",
                                       lambda stop: run_projector(settings, stop, args.only or None)))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from services.jobs.registry import default_handlers
    from services.lib.common import run_until_signalled, setup_logging
    from services.lib.status import with_heartbeat
    from services.processes.exports_watch import ExportsWatch
    from services.processes.worker import Worker

    setup_logging()
    settings = ensure_secret_key(_settings())
    worker = Worker(settings, default_handlers(settings))
    watch = ExportsWatch(settings)  # the write side of a first export (a GET only reports it)

    async def work(stop: asyncio.Event) -> None:
        await asyncio.gather(worker.run(stop), watch.run(stop))

    run_until_signalled(with_heartbeat(settings, "worker", work))
    return 0


def cmd_dispatcher(args: argparse.Namespace) -> int:
    from services.lib.common import freeze_startup_heap, run_until_signalled, setup_logging
    from services.lib.status import with_heartbeat
    from services.processes.dispatcher import run_dispatcher

    setup_logging()
    settings = ensure_secret_key(_settings())
    freeze_startup_heap()
    run_until_signalled(with_heartbeat(settings, "dispatcher", lambda stop: run_dispatcher(settings, stop)))
    return 0


def cmd_credits_watch(args: argparse.Namespace) -> int:
    from services.lib.common import run_until_signalled, setup_logging
    from services.lib.status import with_heartbeat
    from services.processes.credits_watch import CreditsWatch

    setup_logging()
    settings = _settings()
    run_until_signalled(with_heartbeat(settings, "credits-watch", CreditsWatch(settings).run))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from services.lib.status import collect, render

    settings = _settings()
    state = asyncio.run(collect(settings))
    if args.json:
        print(json.dumps(state, default=str))
    else:
        print(render(state, settings.heartbeat_interval_s))
    return 0


def cmd_api(args: argparse.Namespace) -> int:
    from services.api.app import serve
    from services.lib.common import setup_logging

    setup_logging()
    serve(ensure_secret_key(_settings(args)))
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Provision the stack, migrate, start every process, stop them all on Ctrl-C or SIGTERM."""
    settings = ensure_secret_key(_settings(args))
    provision_for(settings)  # before anything starts: a fresh machine has no ffmpeg, no PostgreSQL
    print("provisioning PostgreSQL and Kafka ...", flush=True)
    stack.up(settings)
    asyncio.run(prepare(settings))
    env = dict(os.environ, VAEO_SECRET_KEY=settings.secret_key, VAEO_API_PORT=str(settings.api_port),
               VAEO_DATABASE_URL=settings.resolved_database_url(),
               VAEO_KAFKA_BOOTSTRAP=settings.resolved_kafka_bootstrap())
    logs = settings.instance_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    counts = process_counts(args)
    instances = instance_names(counts)
    if counts["api"] > 1:
        env["VAEO_API_REUSE_PORT"] = "1"  # every API process on the one port (Settings.api_reuse_port)
    children: dict[str, subprocess.Popen] = {}

    def spawn(name: str) -> None:
        out = (logs / f"{name}.log").open("ab")
        children[name] = subprocess.Popen([sys.executable, "-m", "services.cli", instances[name]], env=env,
                                          stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    for name in instances:
        spawn(name)
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    base = f"http://{settings.api_host}:{settings.api_port}/v1"
    bootstrap = asyncio.run(_bootstrap_key(settings))
    apis = [proc for name, proc in children.items() if instances[name] == "api"]
    if not wait_for_api(base.removesuffix("/v1"), apis, API_READY_TIMEOUT_S, lambda: stopping):
        print(f"the API has not answered in {API_READY_TIMEOUT_S} s; see {logs / 'api.log'}", flush=True)
    print(f"vaeo is up: {base}")
    print(f"processes: {', '.join(f'{n} (pid {p.pid})' for n, p in children.items())}; logs in {logs}")
    if bootstrap:
        print(f"bootstrap workspace key (shown once): {bootstrap}")
        print(f"try: curl -s -H 'Authorization: Bearer {bootstrap}' {base}/me")
    else:
        print("create a workspace and key: vaeo workspace create --name NAME --json")
    print("Ctrl-C stops everything (the stack keeps running; `vaeo stack down` stops it).", flush=True)
    restarts: dict[str, list[float]] = {n: [] for n in instances}
    while not stopping:
        time.sleep(0.5)
        for name, proc in list(children.items()):
            if proc.poll() is not None and not stopping:
                recent = [t for t in restarts[name] if time.monotonic() - t < 60]
                if len(recent) >= 5:
                    print(f"{name} keeps exiting (code {proc.returncode}); see {logs / (name + '.log')}", flush=True)
                    stopping = True
                    break
                restarts[name] = [*recent, time.monotonic()]
                print(f"{name} exited with {proc.returncode}; restarting", flush=True)
                spawn(name)
    for proc in children.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    for proc in children.values():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
    print("stopped", flush=True)
    return 0


def process_counts(args: argparse.Namespace) -> dict[str, int]:
    """How many processes of each kind ``vaeo up`` starts. Asking for more than one of anything
    starts a standby relay too (unless ``--relays`` says otherwise): one relay is active at a
    time, the other waits on its lock and takes over when the active one dies."""
    counts = {"api": args.api, "projector": args.projectors, "worker": args.workers,
              "dispatcher": args.dispatchers, "credits-watch": 1}
    relays = args.relays if args.relays is not None else (2 if max(counts.values()) > 1 else 1)
    counts["relay"] = relays
    return {kind: counts[kind] for kind in PROCESSES}


def instance_names(counts: dict[str, int]) -> dict[str, str]:
    """{instance name: process kind}: the first of a kind is named after it (``worker``), the
    others numbered (``worker-2``); the name is also its log file's."""
    return {(kind if i == 1 else f"{kind}-{i}"): kind for kind, n in counts.items() for i in range(1, n + 1)}


async def _bootstrap_key(settings: Settings) -> str | None:
    """A first workspace and key when the store has no workspace yet (first `vaeo up`)."""
    from infra.adapters import database_adapters
    from infra.codec import EventRegistry
    from infra.db import create_pool
    from infra.eventstore_postgres import PostgresEventStore
    from services.application.bootstrap import bootstrap
    from services.application.meta import command_meta
    from services.application.workspaces import CreateWorkspace

    pool = await create_pool(settings.resolved_database_url(), max_size=2)
    try:
        async with pool.acquire() as conn:
            if await conn.fetchval("SELECT EXISTS (SELECT 1 FROM events WHERE type = 'WorkspaceCreated')"):
                return None
        ctx = bootstrap(settings, PostgresEventStore(pool, EventRegistry(), clock=settings.now),
                        database_adapters(pool)).context(
            command_meta("up"))
        _, issued = await ctx.handle(CreateWorkspace(name="default", plan="free", credits=1000, rate_limit=600))
        return issued.key
    finally:
        await pool.close()


def cmd_workspace(args: argparse.Namespace) -> int:
    from services.application.meta import command_meta
    from services.application.workspaces import AddCredits, CreateWorkspace

    settings = _settings()

    async def run() -> dict:
        app, pool = await _application(settings)
        try:
            if args.action == "create":
                ctx = app.context(command_meta("workspace create"))
                ws, issued = await ctx.handle(CreateWorkspace(name=args.name, plan=args.plan, credits=args.credits,
                                                              rate_limit=args.rate_limit))
                return {"workspace_id": str(ws), "key": issued.key}
            ctx = app.context(command_meta("workspace credits"))
            position = await ctx.handle(AddCredits(UUID(args.workspace), args.add))
            return {"workspace_id": args.workspace, "added": args.add, "position": position}
        finally:
            await pool.close()

    out = asyncio.run(run())
    if getattr(args, "json", False) or args.action != "create":
        print(json.dumps(out))
    else:
        print(f"workspace {out['workspace_id']}\nkey (shown once): {out['key']}")
    return 0


async def _application(settings: Settings, *, storage=None):
    """The application of a CLI command, and the pool to close when it is done. Its secret key is
    the one the processes use (``ensure_secret_key``: the environment's, else the local stack's
    key file): a webhook secret the CLI encrypts must be readable by the dispatcher."""
    from infra.adapters import database_adapters
    from infra.codec import EventRegistry
    from infra.db import create_pool
    from infra.eventstore_postgres import PostgresEventStore
    from services.application.bootstrap import bootstrap

    settings = ensure_secret_key(settings)
    pool = await create_pool(settings.resolved_database_url(), max_size=2)
    store = PostgresEventStore(pool, EventRegistry(), notify=settings.notify_on_append, clock=settings.now)
    return bootstrap(settings, store, database_adapters(pool, storage=storage)), pool


def cmd_videos(args: argparse.Namespace) -> int:
    """``vaeo videos import FILE``: what POST /videos does, from a local file (copied, never moved)."""
    import shutil
    from pathlib import Path

    from infra.storage import storage_for
    from services.application.meta import command_meta
    from services.application.videos import IngestVideo

    settings = _settings()
    source = Path(args.file)
    if not source.is_file():
        print(f"vaeo: {source} is not a file", file=sys.stderr)
        return 2
    if source.stat().st_size > settings.video_max_bytes:
        print(f"vaeo: {source} is larger than {settings.video_max_bytes} bytes (VAEO_VIDEO_MAX_BYTES)", file=sys.stderr)
        return 2
    captions = Path(args.captions).read_bytes() if args.captions else None

    async def run() -> dict:
        storage = storage_for(settings)
        app, pool = await _application(settings, storage=storage)
        staged = storage.staging_path("cli")
        try:
            await asyncio.to_thread(shutil.copyfile, source, staged)
            video, position = await app.context(command_meta("videos import")).handle(IngestVideo(
                UUID(args.workspace), args.environment, staged, filename=source.name, name=args.name,
                description=args.description, language=args.language, media_id=args.media_id, captions=captions))
            return {"video_id": video.video_id, "name": video.name, "duration_seconds": video.duration_ms / 1000,
                    "width": video.width, "height": video.height, "has_transcript": video.has_transcript,
                    "position": position}
        finally:
            storage.discard(staged)
            await pool.close()

    print(json.dumps(asyncio.run(run())))  # a refusal: exit 1 with its code (main)
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    from services.cli.tail import tail

    settings = _settings()
    try:
        asyncio.run(tail(settings, sys.stdout, from_position=args.from_position, types=set(args.type or []),
                         workspace=args.workspace, follow=args.follow))
    except KeyboardInterrupt:
        pass
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    """``vaeo jobs history JOB_ID``: the job's chain from the log (``services.cli.history``); an id the
    log does not know is refused like any missing thing (exit 1, ``not_found``)."""
    from services.cli.history import job_history

    asyncio.run(job_history(_settings(), UUID(args.job_id), sys.stdout, as_json=args.json))
    return 0


def cmd_projections(args: argparse.Namespace) -> int:
    settings = _settings()
    if args.action == "list":
        from services.processes.projector import listing

        rows = asyncio.run(listing.list_projections(settings))
        print(json.dumps(rows) if args.json else listing.render(rows))
        return 0
    from services.processes.projector.rebuild import progress_bar, rebuild

    result = asyncio.run(rebuild(settings, args.name, progress=progress_bar()))
    sys.stderr.write("\n")
    print(json.dumps(result))
    return 0


def _uuid(text: str) -> str:
    """argparse type: a malformed id is a usage error (exit 2), not a traceback."""
    try:
        return str(UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a uuid: {text!r}") from None


def _language(text: str) -> str:
    """argparse type: a language the service writes (a tag such as en-US names en), else a usage error."""
    code = supported(text)
    if code is None:
        raise argparse.ArgumentTypeError(f"not a language the service writes: {text!r} (one of {', '.join(CODES)})")
    return code


def _count(text: str) -> int:
    """argparse type: a number of processes, 1 to 16."""
    value = int(text) if text.isascii() and text.isdigit() else 0
    if not 1 <= value <= 16:
        raise argparse.ArgumentTypeError(f"a number of processes is 1 to 16: {text!r}")
    return value


def _position(text: str) -> int:
    """A position to start from: 1 or more, or 0 for "from the beginning" (as Kafka's tools read
    offset 0); the first event's position is 1, so 0 and 1 print the same."""
    value = int(text) if text.isascii() and text.isdigit() else -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"a position is 0 (the beginning) or more: {text!r}")
    return max(value, 1)


def _projection(text: str) -> str:
    from projections import ALL

    if text not in ALL:
        raise argparse.ArgumentTypeError(f"unknown projection {text!r} (known: {', '.join(sorted(ALL))})")
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vaeo", description="vaeo: videos into AEO/GEO content, event-sourced.")
    sub = p.add_subparsers(dest="command", required=True)
    _process_commands(sub)
    _data_commands(sub)
    _audit_commands(sub)
    return p


def _process_commands(sub) -> None:
    """The stack, the processes of the service, and the operator's screen."""
    up = sub.add_parser("up", help="provision the stack and run every process until Ctrl-C")
    up.add_argument("--port", type=int, help="HTTP port of the API (default VAEO_API_PORT or 8080)")
    for flag, what in (("--api", "API processes, all on the one port (SO_REUSEPORT)"),
                       ("--workers", "job workers (jobs are claimed in PostgreSQL)"),
                       ("--projectors", "projectors (they share the partitions in one consumer group)"),
                       ("--dispatchers", "webhook dispatchers (intake in one consumer group, deliveries "
                                         "claimed in PostgreSQL)")):
        up.add_argument(flag, type=_count, default=1, help=f"number of {what}; default 1")
    up.add_argument("--relays", type=_count, default=None,
                    help="relays: one active, the others standing by on its lock; default 1, or 2 when "
                         "more than one of anything is asked")
    up.set_defaults(fn=cmd_up)

    pv = sub.add_parser("provision", help="install the system packages the service needs (ffmpeg, PostgreSQL, "
                        "Java, Maven, ...) when absent; root and apt-get")
    pv.add_argument("--tests", action="store_true", help="and those the test suite needs")
    pv.set_defaults(fn=cmd_provision)

    st = sub.add_parser("stack", help="the local PostgreSQL and Kafka")
    st.add_argument("action", choices=["up", "down", "status"])
    st.set_defaults(fn=cmd_stack)

    sub.add_parser("migrate", help="apply migrations and create topics").set_defaults(fn=cmd_migrate)
    api = sub.add_parser("api", help="run the HTTP API")
    api.add_argument("--port", type=int)
    api.set_defaults(fn=cmd_api)
    sub.add_parser("relay", help="run the relay (events table to Kafka)").set_defaults(fn=cmd_relay)
    pr = sub.add_parser("projector", help="run the projections")
    pr.add_argument("--only", nargs="*", type=_projection, help="projection names (default: all)")
    pr.set_defaults(fn=cmd_projector)
    sub.add_parser("worker", help="run a job worker").set_defaults(fn=cmd_worker)
    sub.add_parser("dispatcher", help="run the webhook dispatcher (signed deliveries from the log)").set_defaults(
        fn=cmd_dispatcher)

    sub.add_parser("credits-watch", help="run the credits watch (CreditsLow once per crossing of the threshold)"
                   ).set_defaults(fn=cmd_credits_watch)
    stt = sub.add_parser("status", help="one screen: processes, log head, relay, projections, consumers, queue, "
                         "webhooks")
    stt.add_argument("--json", action="store_true")
    stt.set_defaults(fn=cmd_status)


def _data_commands(sub) -> None:
    """Workspaces and videos, written from the command line."""
    ws = sub.add_parser("workspace", help="create a workspace, add credits")
    ws_sub = ws.add_subparsers(dest="action", required=True)
    wc = ws_sub.add_parser("create", help="a new workspace with a wildcard production key (shown once)")
    wc.add_argument("--name", required=True)
    wc.add_argument("--plan", default="free")
    wc.add_argument("--credits", type=int, default=1000)
    wc.add_argument("--rate-limit", type=int, default=600, help="requests per minute")
    wc.add_argument("--json", action="store_true")
    wcr = ws_sub.add_parser("credits", help="top up a workspace's credits")
    wcr.add_argument("workspace", type=_uuid)
    wcr.add_argument("--add", type=int, required=True)
    ws.set_defaults(fn=cmd_workspace)

    vd = sub.add_parser("videos", help="import a video file into a workspace")
    vd_sub = vd.add_subparsers(dest="action", required=True)
    vi = vd_sub.add_parser("import", help="probe, store and register a video (prints its id as JSON)")
    vi.add_argument("file")
    vi.add_argument("--captions", help="WebVTT or SRT captions file")
    vi.add_argument("--workspace", required=True, type=_uuid, help="workspace id")
    vi.add_argument("--name")
    vi.add_argument("--description")
    vi.add_argument("--language", default=DEFAULT_LANGUAGE, type=_language)
    vi.add_argument("--media-id", type=int)
    vi.add_argument("--environment", default="production", choices=["production", "sandbox"])
    vd.set_defaults(fn=cmd_videos)


def _audit_commands(sub) -> None:
    """The log, a job's history and the read models, read and rebuilt."""
    ev = sub.add_parser("events", help="read the event log from Kafka")
    ev_sub = ev.add_subparsers(dest="action", required=True)
    tl = ev_sub.add_parser("tail", help="print events as JSON lines")
    tl.add_argument("--from", dest="from_position", type=_position, default=1,
                    help="first position to print (0 or 1: from the beginning)")
    tl.add_argument("--type", action="append", help="only this event type (repeatable)")
    tl.add_argument("--workspace", type=_uuid, help="only this workspace id")
    tl.add_argument("--follow", action="store_true", help="keep printing new events until Ctrl-C")
    ev.set_defaults(fn=cmd_events)

    jb = sub.add_parser("jobs", help="audit a job from the event log")
    jb_sub = jb.add_subparsers(dest="action", required=True)
    jh = jb_sub.add_parser("history", help="every event of the job's chain, in order: its stream, its charge and "
                           "refund, its results, its deliveries")
    jh.add_argument("job_id", type=_uuid, help="job id")
    jh.add_argument("--json", action="store_true", help="the events' envelopes as JSON lines")
    jb.set_defaults(fn=cmd_jobs)

    pj = sub.add_parser("projections", help="list the log's readers (read models, dispatcher intake, credits "
                        "watch) or rebuild a read model")
    pj_sub = pj.add_subparsers(dest="action", required=True)
    pl = pj_sub.add_parser("list", help="status, position and lag of every read model and consumer with effects")
    pl.add_argument("--json", action="store_true")
    rb = pj_sub.add_parser("rebuild")
    rb.add_argument("name", type=_projection)
    pj.set_defaults(fn=cmd_projections)


def main(argv: list[str] | None = None) -> int:
    from domain.base import DomainError
    from infra.db import name_connections

    args = build_parser().parse_args(argv)
    name_connections(args.command)
    try:
        return args.fn(args) or 0
    except (stack.StackError, provision.ProvisionError) as exc:
        print(f"vaeo: {exc}", file=sys.stderr)
        return 2
    except DomainError as exc:  # a refused command (an invariant, a missing workspace): its code and why
        print(f"vaeo: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader of the output went away (`vaeo status | head`): stop quietly, as a shell tool
        # does. stdout is pointed at /dev/null first, so the interpreter's own flush at exit cannot
        # fail on the closed pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
