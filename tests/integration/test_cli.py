"""The `vaeo` command line against the real servers, run as a user runs it."""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import subprocess
import sys

import aiohttp
import orjson

from infra.crypto import key_digest
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from tests.helpers import wait_projected, wait_relayed
from tests.support.cli import _free_port, vaeo
from tests.support.stack import ROOT, env_for


async def test_workspace_create_prints_the_id_and_a_key_that_is_stored_only_as_a_digest(settings, pool):
    code, out, err = await vaeo(settings, "workspace", "create", "--name", "Acme", "--plan", "pro",
                                "--credits", "500", "--rate-limit", "120", "--json")
    assert code == 0, err
    created = json.loads(out)
    assert created["key"].startswith("service_live_")
    async with pool.acquire() as conn:
        indexed = await conn.fetchrow("SELECT * FROM api_key_digests WHERE digest = $1", key_digest(created["key"]))
        dump = await conn.fetchval("SELECT string_agg(data::text || meta::text, '') FROM events")
        ws = await conn.fetchrow("SELECT data FROM events WHERE type = 'WorkspaceCreated'")
    assert str(indexed["workspace_id"]) == created["workspace_id"]
    assert created["key"] not in dump
    assert ws["data"] == {"workspace_id": created["workspace_id"], "name": "Acme", "plan": "pro",
                          "credits_total": 500, "rate_limit_per_min": 120}


async def test_workspace_credits_top_up(settings, pool):
    _, out, _ = await vaeo(settings, "workspace", "create", "--name", "T", "--json")
    ws = json.loads(out)["workspace_id"]
    code, out, err = await vaeo(settings, "workspace", "credits", ws, "--add", "250")
    assert code == 0, err
    async with pool.acquire() as conn:
        added = await conn.fetchval("SELECT data FROM events WHERE type = 'CreditsAdded'")
    assert added == {"amount": 250}


async def test_refusals_and_malformed_arguments_are_one_line_never_a_traceback(settings, pool):
    _, out, _ = await vaeo(settings, "workspace", "create", "--name", "R", "--json")
    ws = json.loads(out)["workspace_id"]
    cases = [  # (arguments, exit code, what stderr says)
        (("workspace", "create", "--name", "x", "--credits", "-5"), 1, "vaeo: invalid_request: credits must be"),
        (("workspace", "create", "--name", " "), 1, "vaeo: invalid_request: workspace name"),
        (("workspace", "credits", ws, "--add", "-5"), 1, "vaeo: invalid_request: a top-up must be positive"),
        (("workspace", "credits", "11111111-1111-4111-8111-111111111111", "--add", "5"), 1,
         "vaeo: not_found: workspace not found"),
        (("workspace", "credits", "nope", "--add", "5"), 2, "not a uuid: 'nope'"),
        (("videos", "import", "/etc/hostname", "--workspace", "nope"), 2, "not a uuid"),
        (("events", "tail", "--from", "-1"), 2, "a position is 0 (the beginning) or more"),
        (("events", "tail", "--from", "²"), 2, "a position is 0 (the beginning) or more"),
        (("projections", "rebuild", "nosuch"), 2, "unknown projection 'nosuch' (known: "),
        (("projector", "--only", "nosuch"), 2, "unknown projection"),
    ]
    for args, code, says in cases:
        got, _, err = await vaeo(settings, *args)
        assert (got, "Traceback" in err) == (code, False) and says in err, (args, got, err)
    async with pool.acquire() as conn:  # nothing refused was written: R's creation only
        assert await conn.fetchval("SELECT count(*) FROM events WHERE type IN ('CreditsAdded', 'WorkspaceCreated')"
                                   ) == 1


async def test_events_tail_prints_the_log_from_kafka_in_position_order_with_filters(settings, pool, background):
    for name in ("A", "B"):
        assert (await vaeo(settings, "workspace", "create", "--name", name, "--json"))[0] == 0
    background.start(Relay(settings).run)
    head = await wait_relayed(pool)
    code, out, err = await vaeo(settings, "events", "tail")
    assert code == 0, err
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert [e["position"] for e in lines] == list(range(1, head + 1))
    assert {e["type"] for e in lines} == {"WorkspaceCreated", "ApiKeyIssued"}
    code, from_zero, err = await vaeo(settings, "events", "tail", "--from", "0")  # Kafka's "from the beginning"
    assert code == 0 and from_zero == out, err
    _, out, _ = await vaeo(settings, "events", "tail", "--type", "ApiKeyIssued", "--from", "3")
    filtered = [orjson.loads(line) for line in out.splitlines()]
    assert [e["position"] for e in filtered] == [4]
    ws = lines[0]["workspace_id"]
    _, out, _ = await vaeo(settings, "events", "tail", "--workspace", ws)
    assert {orjson.loads(line)["workspace_id"] for line in out.splitlines()} == {ws}


async def test_projections_list_and_rebuild(settings, pool, background):
    assert (await vaeo(settings, "workspace", "create", "--name", "A", "--json"))[0] == 0
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop))
    await wait_projected(settings, pool, ["event_counts", "jobs"])
    code, out, err = await vaeo(settings, "projections", "list", "--json")
    assert code == 0, err
    listed = {p["name"]: p for p in json.loads(out)}
    assert listed["event_counts"] == {"name": "event_counts", "status": "live", "position": 2, "lag": 0,
                                      "error": None, "error_position": None}
    code, out, err = await vaeo(settings, "projections", "list")
    assert code == 0, err
    table = [line.split() for line in out.splitlines()]
    # Every row splits into its columns, the longest names (monitoring_events) included.
    assert table[0] == ["NAME", "STATUS", "POSITION", "LAG", "ERROR"]
    assert "monitoring_events" in {row[0] for row in table[1:]}, out
    assert all(len(row) == 4 for row in table[1:]), out
    code, out, err = await vaeo(settings, "projections", "rebuild", "event_counts")
    assert code == 0, err
    assert json.loads(out)["messages"] == 2
    assert "ev/s" in err and "lag 0" in err  # the progress bar
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT sum(count) FROM event_counts") == 2


async def test_vaeo_up_starts_every_process_and_stops_them_on_sigterm(settings):
    port = _free_port()
    env = env_for(settings)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", "up", "--port", str(port), env=env, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    try:
        while True:
            line = (await asyncio.wait_for(proc.stdout.readline(), 240)).decode()
            assert line, "vaeo up exited early:\n" + "".join(lines)
            lines.append(line)
            if line.startswith("vaeo is up"):
                # said when it is: the first request a user pastes is answered, ready for commands
                async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    assert resp.status == 200 and (await resp.json())["data"]["kafka"] is True
            if line.startswith("Ctrl-C"):
                break
        text = "".join(lines)
        assert f"vaeo is up: http://127.0.0.1:{port}/v1" in text
        assert "has not answered" not in text
        assert "curl -s -H 'Authorization: Bearer service_live_" in text
        assert all(name in text for name in ("api (pid", "relay (pid", "projector (pid", "worker (pid"))
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = (await asyncio.wait_for(proc.stdout.read(), 60)).decode()
        code = await asyncio.wait_for(proc.wait(), 60)
    assert code == 0
    assert rest.strip().endswith("stopped")


async def test_stack_up_on_a_running_stack_is_idempotent_and_status_reports_it(stack_settings):
    env = {k: v for k, v in env_for(stack_settings).items() if k not in ("VAEO_DATABASE_URL", "VAEO_KAFKA_BOOTSTRAP")}
    env.update({"VAEO_STACK_INSTANCE": "test", "VAEO_STACK_PG_PORT": "25433", "VAEO_STACK_KAFKA_PORT": "29092"})
    if stack_settings.database_url or stack_settings.kafka_bootstrap:
        return  # the suite runs against external servers: there is no local stack to check
    for action in ("up", "status"):
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "services.cli", "stack", action, env=env,
                                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        status = json.loads(out)
        assert status["postgres"]["running"] is True and status["kafka"]["ready"] is True
        assert status["kafka"]["rss_mb"] < 1024
        assert status["kafka"]["log"].endswith("/test/logs/kafka.log")
    assert status.get("kafka_ready_seconds") is None  # status does not start anything


async def test_a_new_user_creates_a_workspace_without_setting_a_secret_key(settings, tmp_path):
    """As after ``make run`` on a fresh machine: no ``VAEO_SECRET_KEY`` in the environment; the CLI
    uses the local stack's key file, as the processes do (and makes it when there is none)."""
    env = {k: v for k, v in env_for(settings).items() if k != "VAEO_SECRET_KEY"}
    env["VAEO_STACK_DIR"] = str(tmp_path)  # a stack folder of its own: the key file is made there
    code, out, err = await vaeo(settings, "workspace", "create", "--name", "first", "--json", env=env)
    assert code == 0, err
    assert json.loads(out)["key"].startswith("service_live_")
    assert len((tmp_path / "test" / "secret.key").read_text().strip()) == 64


async def test_output_to_a_reader_that_went_away_ends_quietly(settings, pool, background):
    """`vaeo events tail | head -1`: the reader stops reading; the command stops with it, exit 0,
    no traceback (it printed one on the closed pipe)."""
    assert (await vaeo(settings, "workspace", "create", "--name", "piped", "--json"))[0] == 0
    background.start(Relay(settings).run)
    await wait_relayed(pool)
    # `true` reads nothing and is gone long before the command has started, so every write meets a
    # closed pipe; PIPESTATUS[0] is the command's own exit code.
    script = (f"{shlex.quote(sys.executable)} -m services.cli events tail | true; "
              "echo \"vaeo exited ${PIPESTATUS[0]}\" >&2")
    proc = await asyncio.create_subprocess_exec("bash", "-c", script, env=env_for(settings), cwd=ROOT,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert "Traceback" not in err.decode() and err.decode().strip().endswith("vaeo exited 0"), err.decode()
