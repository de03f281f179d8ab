"""The assistant without a model, over HTTP against the real processes: POST /agent/chat,
POST /agent/stream (read with the spec-following SSE reader of test_streams) and
GET /agent/conversations/{id}.

One module service and one analysed talk (a short generated video with WebVTT captions whose
transcript holds an instruction aimed at the assistant). Each request kind of the planner in
English and French, scopes per action, the cap of 15, conversations continued and isolated,
refusals before any byte, the rate limit counted per action, a client leaving mid-stream. The
article, clip and revival operations through the assistant.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import aiohttp
import orjson
import pytest

from services.application.jobs import QueueJob
from tests.helpers import handle, wait_projected
from tests.support.agent_talk import analysed_talk, chat, events_of, make_talk, stream
from tests.support.api_videos import upload
from tests.support.event_streams import EventStreamReader, _alarming, open_streams_gauge, until
from tests.support.service import running_service


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory):
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"), apis=1,
                               VAEO_API_STREAM_KEEPALIVE_S="0.5") as svc:
        yield svc


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict:
    return make_talk(tmp_path_factory.mktemp("talk"))


@pytest.fixture(scope="module")
async def talk(service, media):
    return await analysed_talk(service, media)


def names(reply) -> list[str]:
    return [a["name"] for a in reply.data["actions"]]


# ------------------------------------------------------------------------------------ account


async def test_balance_usage_and_alerts_in_english_and_in_french(service):
    ws = await service.workspace(credits=250)

    r = await chat(ws.client, "What is my balance?")
    assert r.status == 200, r.body
    [action] = r.data["actions"]
    assert action == {"name": "get_credits", "arguments": {}, "status": "ok",
                      "result": {"balance": 250, "total": 250, "used": 0, "plan": "pro"}}
    assert "250 credits" in r.data["reply"]
    uuid.UUID(r.data["conversationId"])

    r = await chat(ws.client, "Quel est mon solde, ma consommation et mes alertes ?")
    assert r.status == 200, r.body
    assert names(r) == ["get_credits", "get_usage", "get_monitoring_alerts"]
    assert all(a["status"] == "ok" for a in r.data["actions"])
    reply = r.data["reply"]
    assert "Votre solde est de 250 crédits" in reply and "Aucune alerte active." in reply


async def test_a_message_it_does_not_understand_gets_what_it_can_do_and_no_action(service):
    ws = await service.workspace()
    r = await chat(ws.client, "make me a sandwich")
    assert r.status == 200 and r.data["actions"] == []
    assert "make me a sandwich" in r.data["reply"] and "I can:" in r.data["reply"]
    r = await chat(ws.client, "bonjour")
    assert r.data["actions"] == [] and "Je peux" in r.data["reply"]


# ------------------------------------------------------------------------------------ videos, jobs, articles


async def test_lists_and_details_of_videos_jobs_and_articles(service, talk):
    ws, video_id, article_id, job_id = talk

    r = await chat(ws.client, "list my videos")
    [action] = r.data["actions"]
    assert action["name"] == "list_videos" and action["result"]["count"] == 1
    assert action["result"]["videos"][0] == {"id": video_id, "name": "Fusion talk", "status": "analyzed",
                                             "duration_seconds": action["result"]["videos"][0]["duration_seconds"],
                                             "article_id": article_id, "link": f"/v1/videos/{video_id}"}
    assert f"#{video_id}" in r.data["reply"]

    r = await chat(ws.client, f"montre la vidéo {video_id}")
    [action] = r.data["actions"]
    assert action["name"] == "get_video" and action["result"]["article_id"] == article_id
    assert r.data["reply"].startswith(f"Vidéo {video_id} « Fusion talk » : analysée")

    r = await chat(ws.client, "les 5 derniers jobs")
    [action] = r.data["actions"]
    assert action["arguments"] == {"limit": 5} and action["result"]["jobs"][0]["id"] == job_id

    r = await chat(ws.client, f"status of job {job_id}, then show article {article_id}")
    assert names(r) == ["get_job", "get_article"]
    job, article = r.data["actions"]
    assert job["result"]["status"] == "completed" and job["result"]["link"] == f"/v1/jobs/{job_id}"
    detail = (await ws.client.get(f"/articles/{article_id}")).data
    assert article["result"]["title"] == detail["title"] and article["result"]["geo_score"] == detail["geo_score"]
    assert article["result"]["links"]["scores"] == f"/v1/articles/{article_id}/scores"
    assert "content" not in article["result"] and "markdown" not in article["result"]  # short: no article body

    r = await chat(ws.client, f"the claims and the topics of video {video_id}")
    assert names(r) == ["get_claims", "get_topics"]
    claims = (await ws.client.get(f"/videos/{video_id}/claims")).data
    assert r.data["actions"][0]["result"]["count"] == len(claims)


async def test_enumerations_run_one_action_per_id(service, talk):
    ws, video_id, _, _ = talk
    r = await chat(ws.client, f"videos {video_id}, {video_id + 100000} and {video_id + 100001}")
    assert names(r) == ["get_video"] * 3
    assert [a["arguments"]["id"] for a in r.data["actions"]] == [video_id, video_id + 100000, video_id + 100001]
    assert [a["status"] for a in r.data["actions"]] == ["ok", "failed", "failed"]
    assert r.data["actions"][1]["error"]["code"] == "not_found"


async def test_an_analysis_with_options_queues_a_job_charges_credits_and_is_tied_to_the_request(service, media):
    ws = await service.workspace(credits=50)
    status, body = await upload(ws.client, media["video"], captions=media["vtt"], name="options")
    assert status == 201
    video_id = body["data"]["id"]

    r = await chat(ws.client, f"analyse la vidéo {video_id} avec les chapitres et la transcription, "
                              "style journalistique")
    assert r.status == 200, r.body
    [action] = r.data["actions"]
    assert action["name"] == "analyze_video" and action["status"] == "ok", action
    assert action["arguments"] == {"id": video_id, "outputs": {"chapters": True, "transcript": True},
                                   "writing_style": "journalistic"}
    job_id = action["result"]["job_id"]
    assert action["result"]["link"] == f"/v1/jobs/{job_id}" and action["result"]["credits_charged"] == 1
    assert f"job {job_id}" in r.data["reply"]
    assert (await ws.client.get("/credits")).data["used"] == 1  # charged as the operation charges
    assert (await ws.client.get(f"/jobs/{job_id}")).status == 200  # read-your-writes, as over HTTP
    # The job's events carry the assistant call's request id, and so does the conversation's record.
    request_id = r.headers["X-Request-Id"]
    [queued] = [e for e in await events_of(service, ws.id, "JobQueued") if str(e["stream_id"]) == job_id]
    assert queued["meta"]["request_id"] == request_id
    assert queued["meta"]["agent_action"] == "0"  # the action of the turn that caused it
    assert queued["data"]["params"]["outputs"] == {"article": True, "transcript": True, "chapters": True}
    [performed] = await events_of(service, ws.id, "ConversationActionPerformed")
    assert performed["data"]["request_id"] == request_id and performed["meta"]["request_id"] == request_id


async def test_a_sequence_runs_in_order(service, talk):
    ws, video_id, article_id, _ = talk
    r = await chat(ws.client, f"show video {video_id}, then show article {article_id}; then list my jobs")
    assert names(r) == ["get_video", "get_article", "list_jobs"]


# ------------------------------------------------------------------------------------ scopes and refusals


async def test_each_action_needs_its_scope_and_the_reply_names_the_missing_ones(service, talk):
    ws, video_id, _, _ = talk
    key = await service.key(ws, ["agent:use", "videos:read"])
    client = ws.client.with_key(key)
    jobs_before = (await ws.client.get("/jobs")).data

    r = await chat(client, f"analyse video {video_id} and show my balance, then show video {video_id}")
    assert r.status == 200, r.body
    assert names(r) == ["analyze_video", "get_credits", "get_video"]
    analyse, balance, video = r.data["actions"]
    assert (analyse["status"], analyse["error"]["code"], analyse["error"]["details"]) == (
        "refused", "insufficient_scope", {"required": "analyses:create"})
    assert analyse["result"] is None and balance["result"] is None  # nothing of the resource shows
    assert balance["error"]["details"] == {"required": "credits:read"}
    assert video["status"] == "ok"
    assert "analyses:create" in r.data["reply"] and "credits:read" in r.data["reply"]
    assert (await ws.client.get("/jobs")).data == jobs_before  # nothing was queued

    # Another workspace's video is the 404 of a missing one: nothing tells that it exists.
    other = await service.workspace()
    theirs = (await chat(other.client, f"show video {video_id}")).data["actions"][0]
    nowhere = (await chat(other.client, "show video 2000000000")).data["actions"][0]
    assert theirs["status"] == nowhere["status"] == "failed"
    assert theirs["error"]["code"] == nowhere["error"]["code"] == "not_found"
    assert theirs["error"]["message"] == nowhere["error"]["message"]


SCOPED = [
    ("what is my balance?", "get_credits", "credits:read"),
    ("my usage", "get_usage", "usage:read"),
    ("my alerts", "get_monitoring_alerts", "usage:read"),
    ("list my videos", "list_videos", "videos:read"),
    ("list my jobs", "list_jobs", "jobs:read"),
    ("list my articles", "list_articles", "articles:read"),
    ("claims of video {video}", "get_claims", "analyses:read"),
    ("export article {article} as markdown", "export_article", "exports:read"),
    ("analyse video {video}", "analyze_video", "analyses:create"),
    ("cancel job {pending}", "cancel_job", "jobs:write"),
    ("rename article {article} to « Fusion »", "update_article", "articles:create"),
    ("translate article {article} into German", "translate_article", "articles:create"),
    ("cut video {video} from 0:01 to 0:03", "create_video_clip", "clips:create"),
    ("list the templates", "list_templates", "production:read"),
    ("revival candidates", "list_revival_candidates", "revival:read"),
]


async def test_every_kind_of_action_is_refused_without_its_scope_and_nothing_of_it_shows(service, talk):
    ws, video_id, article_id, _ = talk
    pending, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    client = ws.client.with_key(await service.key(ws, ["agent:use"]))
    for template, name, scope in SCOPED:
        message = template.format(video=video_id, article=article_id, pending=pending.id)
        r = await chat(client, message)
        assert r.status == 200, r.body
        [action] = r.data["actions"]
        assert (action["name"], action["status"], action["result"]) == (name, "refused", None), (message, action)
        assert (action["error"]["code"], action["error"]["details"]) == ("insufficient_scope", {"required": scope})
        assert scope in r.data["reply"], (message, r.data["reply"])
    await wait_projected(service.settings, service.pool, ["jobs"])
    assert (await ws.client.get(f"/jobs/{pending.id}")).data["status"] == "pending"  # nothing changed


async def test_without_agent_use_both_operations_are_403_before_any_byte(service):
    ws = await service.workspace()
    key = await service.key(ws, ["videos:read", "credits:read"])
    client = ws.client.with_key(key)
    r = await chat(client, "what is my balance?")
    assert r.status == 403 and r.error["code"] == "insufficient_scope" and r.error["details"]["required"] == "agent:use"
    response, body = await stream(client, "what is my balance?")
    assert response.status == 403 and response.headers["Content-Type"].startswith("application/json")
    assert body["error"]["code"] == "insufficient_scope"
    assert await events_of(service, ws.id, "ConversationStarted") == []


BAD_BODIES = [
    ({}, "body.message", "missing"),
    ({"message": ""}, "body.message", "string_too_short"),
    ({"message": "x" * 4001}, "body.message", "string_too_long"),
    ({"message": " \u200b\n "}, "body.message", "string_pattern_mismatch"),
    ({"message": 5}, "body.message", "string_type"),
    ({"message": "hi", "conversationId": "not-a-uuid"}, "body.conversationId", "uuid_parsing"),
    ({"message": "hi", "conversationId": 7}, "body.conversationId", "uuid_type"),
    ({"message": "hi", "model": "gpt"}, "body.model", "extra_forbidden"),
]


@pytest.mark.parametrize(("body", "field", "rule"), BAD_BODIES)
async def test_a_bad_body_is_400_naming_the_field(service, body, field, rule):
    ws = await service.workspace()
    for path in ("/agent/chat", "/agent/stream"):
        r = await ws.client.post(path, body)
        assert r.status == 400, r.body
        assert r.headers["Content-Type"].startswith("application/json")
        assert {"field": field, "rule": rule} in [{k: f[k] for k in ("field", "rule")}
                                                  for f in r.error["details"]["fields"]]


async def test_at_most_15_actions_run_and_the_reply_says_how_many_were_left(service, talk):
    ws, video_id, _, _ = talk
    r = await chat(ws.client, f"show videos {video_id} to {video_id + 19}")
    assert len(r.data["actions"]) == 15
    assert [a["arguments"]["id"] for a in r.data["actions"]] == list(range(video_id, video_id + 15))
    assert "5 more requested actions were not done: at most 15 actions run per message" in r.data["reply"]
    [replied] = [e for e in await events_of(service, ws.id, "ConversationReplied")
                 if str(e["stream_id"]) == r.data["conversationId"]]
    assert replied["data"]["not_done"] == 5 and replied["data"]["outcome"] == "completed"


async def test_each_action_counts_against_the_rate_limit(service):
    ws = await service.workspace(rate_limit=6)
    r = await chat(ws.client, "show videos 1 to 10")
    assert r.status == 200, r.body
    # The call is the window's first request and its first action's; five actions follow, the
    # sixth of them is over the limit.
    statuses = [a["status"] for a in r.data["actions"]]
    assert statuses == ["failed"] * 6 + ["refused"], r.data["actions"]
    assert r.data["actions"][-1]["error"]["code"] == "rate_limited"
    assert "3 requested actions were not done: your workspace's rate limit is reached" in r.data["reply"]
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert (await ws.client.get("/me")).status == 429


async def test_a_read_refused_by_its_count_reveals_nothing_though_it_ran_alongside_it(service):
    """A read runs while its rate-limit count is in flight; when the count refuses it, its answer is
    dropped: the action is refused and neither it nor the reply shows the balance. The first
    action runs on the call's own count."""
    ws = await service.workspace(rate_limit=1, credits=4321)
    r = await chat(ws.client, "show my usage and my balance")
    assert r.status == 200, r.body
    usage, balance = r.data["actions"]
    assert (usage["name"], usage["status"]) == ("get_usage", "ok")
    assert (balance["name"], balance["status"], balance["error"]["code"]) == ("get_credits", "refused",
                                                                              "rate_limited")
    shown = orjson.dumps(r.body).decode()
    assert "4321" not in shown and "4,321" not in shown and "4 321" not in shown
    assert await window_count(service, ws.id) == 2  # the call (with its first action) and the refused one


async def window_count(service, workspace_id) -> int:
    """The requests the workspace's rate-limit windows count."""
    async with service.pool.acquire() as conn:
        return await conn.fetchval("SELECT coalesce(sum(count), 0) FROM api_rate_windows WHERE workspace_id = $1",
                                   workspace_id)


async def test_a_plan_is_counted_at_once_and_the_window_keeps_only_the_actions_that_ran(service):
    ws = await service.workspace(rate_limit=100)
    # Four actions known up front: the first on the call's own count, the other three counted
    # together before it runs: 4 requests.
    r = await chat(ws.client, "show videos 1 to 4")
    assert r.status == 200 and names(r) == ["get_video"] * 4, r.body
    assert r.headers["X-RateLimit-Remaining"] == "96"
    assert await window_count(service, ws.id) == 4
    # A message with one action costs one request, as the same call over HTTP; one with none, too.
    r = await chat(ws.client, "what is my balance?")
    assert names(r) == ["get_credits"] and r.headers["X-RateLimit-Remaining"] == "95", r.body
    r = await chat(ws.client, "hello")
    assert names(r) == [] and r.headers["X-RateLimit-Remaining"] == "94", r.body
    assert await window_count(service, ws.id) == 6
    # An action whose argument cannot be taken from the one before it never reaches the check: it was
    # counted with the plan, and given back.
    r = await chat(ws.client, f"render the clips of job {uuid.uuid4()}")
    assert names(r) == ["get_clip_job", "render_clips"], r.body
    assert [a["status"] for a in r.data["actions"]] == ["failed", "failed"]
    assert r.data["actions"][1]["error"]["code"] == "not_resolved"
    assert r.headers["X-RateLimit-Remaining"] == "93"
    assert await window_count(service, ws.id) == 7
    # The limit reached mid-plan: the refused action counts, the three never run do not.
    limited = await service.workspace(rate_limit=6)
    r = await chat(limited.client, "show videos 1 to 10")
    assert [a["status"] for a in r.data["actions"]] == ["failed"] * 6 + ["refused"], r.body
    assert await window_count(service, limited.id) == 7


# ------------------------------------------------------------------------------------ conversations


async def test_a_conversation_continues_with_its_context_and_stays_in_its_workspace(service, talk):
    ws, video_id, article_id, _ = talk
    first = await chat(ws.client, f"show article {article_id}")
    conversation = first.data["conversationId"]

    second = await chat(ws.client, "and its scores?", conversation)
    assert second.status == 200 and second.data["conversationId"] == conversation
    assert second.data["actions"][0]["name"] == "get_article_scores"
    assert second.data["actions"][0]["arguments"] == {"id": article_id}  # "its": the article of the first turn

    await wait_projected(service.settings, service.pool, ["conversations"])
    r = await ws.client.get(f"/agent/conversations/{conversation}")
    assert r.status == 200, r.body
    turns = r.data["turns"]
    assert [t["turn"] for t in turns] == [1, 2] and turns[0]["message"] == f"show article {article_id}"
    assert turns[0]["actions"] == first.data["actions"] and turns[0]["reply"] == first.data["reply"]
    assert turns[1]["actions"] == second.data["actions"] and turns[1]["outcome"] == "completed"
    assert [t["requestId"] for t in turns] == [first.headers["X-Request-Id"], second.headers["X-Request-Id"]]

    other = await service.workspace()
    for client in (other.client, ws.client.with_key(await service.key(ws, ["agent:use"], environment="sandbox"))):
        r = await chat(client, "and the graph?", conversation)
        assert r.status == 404 and r.error["code"] == "not_found", r.body
        response, body = await stream(client, "and the graph?", conversation)
        assert response.status == 404 and body["error"]["code"] == "not_found"
        assert (await client.get(f"/agent/conversations/{conversation}")).status == 404
    r = await chat(ws.client, "hello", str(uuid.uuid4()))
    assert r.status == 404
    assert (await ws.client.get("/agent/conversations/not-a-uuid")).status == 404


async def test_a_conversation_is_read_and_continued_by_its_key_or_a_wildcard_key_only(service, talk):
    """A narrow key cannot read nor continue what a wider key's turns returned (its balance, its key's
    details, a video's link): another key's conversation is the 404 of an unknown one, except for a
    wildcard key of the workspace (its administrator)."""
    ws, video_id, _, _ = talk
    narrow = ws.client.with_key(await service.key(ws, ["agent:use"]))
    owner = ws.client.with_key(await service.key(ws, ["agent:use", "credits:read"]))
    unknown = await chat(ws.client, "hello", str(uuid.uuid4()))
    assert unknown.status == 404

    wide = await chat(ws.client, f"what is my balance? who am I? then show video {video_id}")
    assert names(wide) == ["get_credits", "get_me", "get_video"], wide.body
    theirs = wide.data["conversationId"]
    own = await chat(owner, "what is my balance?")
    mine = own.data["conversationId"]
    await wait_projected(service.settings, service.pool, ["conversations"])

    for client, conversation in ((narrow, theirs), (narrow, mine), (owner, theirs)):
        r = await client.get(f"/agent/conversations/{conversation}")
        assert r.status == 404 and r.error["code"] == "not_found", r.body
        r = await chat(client, "and my balance?", conversation)
        assert (r.status, r.error["code"], r.error["message"]) == (404, "not_found", unknown.error["message"]), r.body
        assert r.error["details"] == {"id": conversation}
        response, body = await stream(client, "and my balance?", conversation)
        assert response.status == 404 and body["error"]["code"] == "not_found"

    again = await chat(owner, "and my balance again?", mine)
    assert again.status == 200 and again.data["conversationId"] == mine, again.body
    admin = await chat(ws.client, "and my usage?", mine)  # a wildcard key of the workspace
    assert admin.status == 200, admin.body
    await wait_projected(service.settings, service.pool, ["conversations"])
    for client in (owner, ws.client):
        r = await client.get(f"/agent/conversations/{mine}")
        assert r.status == 200 and len(r.data["turns"]) == 3, r.body
    assert (await ws.client.get(f"/agent/conversations/{theirs}")).status == 200


async def test_no_signed_file_link_is_recorded_in_a_conversation(service, talk):
    """A video's answer holds a signed link that downloads the file without a key: the caller gets
    it in the answer, but the conversation's events and its read model keep none."""
    ws, video_id, _, _ = talk
    r = await chat(ws.client, f"show video {video_id}")
    [action] = r.data["actions"]
    assert action["status"] == "ok" and "/v1/files/" in action["result"]["source_url"]  # the caller's answer
    conversation = r.data["conversationId"]

    async with service.pool.acquire() as conn:
        recorded = await conn.fetch("SELECT type, data::text AS data FROM events WHERE stream_id = $1",
                                    uuid.UUID(conversation))
    assert any(row["type"] == "ConversationActionPerformed" for row in recorded)
    assert not [row["type"] for row in recorded if "/v1/files/" in row["data"]]
    await wait_projected(service.settings, service.pool, ["conversations"])
    read = await ws.client.get(f"/agent/conversations/{conversation}")
    assert read.status == 200 and b"/v1/files/" not in orjson.dumps(read.body), read.body
    [turn] = read.data["turns"]
    assert turn["actions"][0]["result"]["id"] == video_id and "source_url" not in turn["actions"][0]["result"]


# ------------------------------------------------------------------------------------ the stream


async def test_the_stream_sends_the_turn_as_events_and_its_deltas_make_the_reply(service, talk):
    ws, video_id, article_id, _ = talk
    response, seen = await stream(ws.client, f"show video {video_id} and then article {article_id}, and my balance")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert response.headers["X-Request-Id"] and response.headers["X-RateLimit-Limit"]
    kinds = [event for event, _, _ in seen]
    assert kinds[0] == "conversation" and kinds[-1] == "done"
    ids = [int(i) for _, i, _ in seen]
    assert ids == list(range(1, len(seen) + 1))
    conversation = seen[0][2]["conversationId"]
    done = seen[-1][2]
    assert done["conversationId"] == conversation
    actions = [data for event, _, data in seen if event == "action.completed"]
    started = [data for event, _, data in seen if event == "action.started"]
    assert [a["index"] for a in actions] == [s["index"] for s in started] == [0, 1, 2]
    assert [{k: v for k, v in a.items() if k != "index"} for a in actions] == done["actions"]
    assert [a["name"] for a in done["actions"]] == ["get_video", "get_article", "get_credits"]
    # Each action.started comes before its action.completed; the reply's deltas come after the actions.
    assert kinds.index("action.started") < kinds.index("action.completed")
    deltas = [data["text"] for event, _, data in seen if event == "message.delta"]
    assert len(deltas) >= 3 and "".join(deltas) == done["reply"]
    assert kinds.index("message.delta") > max(i for i, k in enumerate(kinds) if k == "action.completed")


async def test_stream_refusals_come_before_any_byte_as_json(service):
    ws = await service.workspace(rate_limit=1)
    assert (await ws.client.get("/me")).status == 200  # the window's one request
    response, body = await stream(ws.client, "my balance")
    assert response.status == 429 and body["error"]["code"] == "rate_limited"
    fresh = await service.workspace()
    response, body = await stream(fresh.client.with_key(None), "my balance")
    assert response.status == 401 and body["error"]["code"] == "missing_key"
    response, body = await stream(fresh.client, "my balance", str(uuid.uuid4()))
    assert response.status == 404 and body["error"]["code"] == "not_found"


async def test_a_client_that_leaves_mid_stream_stops_the_turn_cleanly(service, talk):
    ws, _, _, _ = talk
    # Fifteen cancellations: each a write that waits for its read model, so the turn is still
    # running when the client leaves after the first one.
    jobs = [(await handle(service.store, QueueJob(ws.id, job_type="e2e_idle")))[0].id for _ in range(15)]
    await wait_projected(service.settings, service.pool, ["jobs"])
    log = service.logs / "api.log"
    log_before = log.stat().st_size
    async with aiohttp.ClientSession() as session:
        message = "cancel jobs " + ", ".join(str(j) for j in jobs)
        response = await session.post(ws.client.base + "/agent/stream", data=orjson.dumps({"message": message}),
                                      headers={"Authorization": f"Bearer {ws.key}", "Content-Type": "application/json"})
        reader = EventStreamReader(response)
        events = reader.events()
        first = await anext(events)
        assert first.event == "conversation"
        conversation = first.json["conversationId"]
        while (await anext(events)).event != "action.completed":
            pass
        response.close()  # the connection is dropped, not drained
    await until(lambda: _gauge(service, 0))

    async def replied() -> list:
        return [e for e in await events_of(service, ws.id, "ConversationReplied")
                if str(e["stream_id"]) == conversation]

    deadline = time.monotonic() + 15
    while not await replied():
        assert time.monotonic() < deadline, "the turn was not recorded"
        await asyncio.sleep(0.05)
    [end] = await replied()
    performed = [e for e in await events_of(service, ws.id, "ConversationActionPerformed")
                 if str(e["stream_id"]) == conversation]
    # The turn stopped after the action in progress: what was done is recorded, each action once,
    # and the jobs after it are untouched.
    assert 1 <= len(performed) < 15, len(performed)
    assert [e["data"]["index"] for e in performed] == list(range(len(performed)))
    assert (end["data"]["outcome"], end["data"]["not_done"]) == ("stopped", 15 - len(performed))
    await wait_projected(service.settings, service.pool, ["jobs"])
    statuses = [(await ws.client.get(f"/jobs/{j}")).data["status"] for j in jobs]
    assert statuses == ["cancelled"] * len(performed) + ["pending"] * (15 - len(performed))
    assert (await ws.client.get("/me")).status == 200  # the API still serves
    written = log.read_bytes()[log_before:].decode(errors="replace")
    assert not [line for line in written.splitlines() if _alarming(line)], written


async def _gauge(service, value: float) -> bool:
    return await open_streams_gauge(service) == value


# ------------------------------------------------------------------------------------ every kind, both ways

# (message, the operations it runs); {video}, {article}, {job} and {pending} are the talk's ids and a
# pending job's.
KINDS = [
    ("what is my balance?", ["get_credits"]),
    ("ma consommation et mes alertes", ["get_usage", "get_monitoring_alerts"]),
    ("monitoring and my LLM usage", ["get_monitoring", "get_usage_llm"]),
    ("who am I", ["get_me"]),
    ("list my videos", ["list_videos"]),
    ("montre la vidéo {video}", ["get_video"]),
    ("les 3 derniers jobs", ["list_jobs"]),
    ("status of job {job}", ["get_job"]),
    ("list my articles", ["list_articles"]),
    ("affiche l'article {article}", ["get_article"]),
    # no provider here: premium is refused before any charge, said in the reply (an analysis that
    # runs is test_an_analysis_with_options_queues_a_job_charges_credits_and_is_tied_to_the_request,
    # on a video of its own: one here would give the module's talk a new article mid-module)
    ("analyse video {video} with chapters, premium", ["analyze_video"], "failed"),
    ("les affirmations et les thèmes de la vidéo {video}", ["get_claims", "get_topics"]),
    ("graph of video {video}", ["get_video_graph"]),
    ("videos {video}, {video} and {video}", ["get_video"]),
    ("show video {video}, then list my jobs", ["get_video", "list_jobs"]),
    ("annule le job {pending}", ["cancel_job"]),
    ("show my medias", ["list_medias"]),
    ("scores of article {article}", ["get_article_scores"]),
    ("graph of article {article}", ["get_article_graph"]),
    ("exporte l'article {article} en html", ["export_article"]),
    ("list the templates", ["list_templates"]),
    ("list the translations of article {article}", ["list_article_translations"]),
    ("renomme l'article {article} en « Fusion talk »", ["update_article"]),
    ("revival candidates", ["list_revival_candidates"]),
    ("status of jobs {job} and {pending}", ["get_job", "get_job"]),
    ("cut video {video} from 0:01 to 0:03", ["create_video_clip"]),
    ("détecte 1 clip de 6 secondes dans l'article {article}", ["list_templates", "detect_clips"]),
    ("complete the descriptions of media {media} for videosite_long", ["list_revival_candidates",
                                                                       "complete_descriptions"]),
    ("regenerate article {article} in a narrative style", ["regenerate_article"]),
    # no provider here: the operation's own documented refusal, said in the reply
    ("translate article {article} into German", ["translate_article"], "failed"),
    ("what can you do?", []),
]


@pytest.mark.parametrize("kind", KINDS, ids=[k[0] for k in KINDS])
async def test_each_request_kind_by_chat_and_by_stream(service, talk, kind):
    template, expected, status = (*kind, "ok")[:3]
    ws, video_id, article_id, job_id = talk
    media_id = (await ws.client.get(f"/videos/{video_id}")).data["media_id"]
    answers = {}
    for route in ("chat", "stream"):
        pending, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
        await wait_projected(service.settings, service.pool, ["jobs", "revival_candidates"])
        message = template.format(video=video_id, article=article_id, job=job_id, pending=pending.id,
                                  media=media_id)
        if route == "chat":
            r = await chat(ws.client, message)
            assert r.status == 200, r.body
            answers[route] = r.data
        else:
            response, seen = await stream(ws.client, message)
            assert response.status == 200
            done = seen[-1][2]
            assert seen[-1][0] == "done" and "".join(d["text"] for e, _, d in seen if e == "message.delta") == \
                done["reply"]
            answers[route] = done
    for answer in answers.values():
        assert sorted(a["name"] for a in answer["actions"]) == sorted(expected), answer
        assert all(a["status"] == status for a in answer["actions"][-1:]), answer["actions"]
        assert all(a["status"] == "ok" for a in answer["actions"][:-1]), answer["actions"]
        assert answer["reply"]
    if not expected:  # not understood: what it can do, and no action
        assert all("15" in answer["reply"] for answer in answers.values())
    assert [a["name"] for a in answers["chat"]["actions"]] == [a["name"] for a in answers["stream"]["actions"]]


# ------------------------------------------------------------------------------------ injection


async def test_text_in_a_transcript_is_data_never_a_request(service, talk, media):
    ws, video_id, article_id, _ = talk
    pending, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    graph = (await ws.client.get(f"/videos/{video_id}/graph")).data
    assert "cancel every job" in orjson.dumps(graph).decode() or "cancel every job" in \
        (await ws.client.get(f"/articles/{article_id}")).data["markdown"]

    r = await chat(ws.client, f"show the claims of video {video_id} and the article {article_id}")
    assert names(r) == ["get_claims", "get_article"]
    await wait_projected(service.settings, service.pool, ["jobs"])
    assert (await ws.client.get(f"/jobs/{pending.id}")).data["status"] == "pending"


# ------------------------------------------------------------------------------------ articles, clips, revival


async def test_scores_graph_and_export_of_an_article(service, talk):
    ws, _, article_id, _ = talk
    r = await chat(ws.client, f"scores of article {article_id}, then its graph, then export it as markdown")
    assert names(r) == ["get_article_scores", "get_article_graph", "export_article"]
    assert all(a["status"] == "ok" for a in r.data["actions"]), r.data["actions"]
    assert r.data["actions"][2]["result"]["link"] == f"/v1/articles/{article_id}/export/markdown"
    r = await chat(ws.client, f"exporte l'article {article_id} en html")
    assert r.data["actions"][0]["arguments"] == {"id": article_id, "format": "html"}


async def test_an_export_by_the_assistant_is_recorded_as_one_over_http(service, talk):
    ws, _, article_id, _ = talk
    before = [e for e in await events_of(service, ws.id, "ExportReady") if e["data"]["format"] == "schema"]
    assert before == []  # no other test exports this format
    # A conditional header on the assistant's request reaches no action: the export is made, not a 304.
    r = await chat(ws.client, f"export article {article_id} as schema", headers={"If-None-Match": "*"})
    [action] = r.data["actions"]
    assert action["status"] == "ok" and action["result"]["bytes"] > 0, action
    [ready] = [e for e in await events_of(service, ws.id, "ExportReady") if e["data"]["format"] == "schema"]
    assert ready["meta"]["request_id"] == r.headers["X-Request-Id"]  # tied to the assistant's request
    r = await chat(ws.client, f"export article {article_id} as schema")  # the second export records nothing
    assert r.data["actions"][0]["status"] == "ok"
    assert len([e for e in await events_of(service, ws.id, "ExportReady") if e["data"]["format"] == "schema"]) == 1


async def test_cut_a_clip_of_a_video(service, talk):
    ws, video_id, _, _ = talk
    r = await chat(ws.client, f"cut video {video_id} from 0:01 to 0:04 as webm")
    [action] = r.data["actions"]
    assert action["status"] == "ok", action
    assert action["arguments"] == {"id": video_id, "start_ms": 1000, "end_ms": 4000, "format": "webm"}
    assert action["result"]["job_id"]


async def clip_job_ended(ws, job_id: str) -> dict:
    deadline = time.monotonic() + 120
    while True:
        tracking = (await ws.client.get(f"/production/clips/jobs/{job_id}")).data
        if tracking["status"] in ("completed", "failed", "cancelled"):
            return tracking
        assert time.monotonic() < deadline, tracking
        await asyncio.sleep(0.2)


async def test_detect_then_render_clips(service, talk):
    ws, video_id, article_id, _ = talk
    r = await chat(ws.client, f"detect 2 clips of 6 seconds in article {article_id}")  # the talk is 18 s
    assert names(r) == ["list_templates", "detect_clips"]
    detect = r.data["actions"][1]
    assert detect["status"] == "ok", detect
    assert detect["arguments"]["requested_clip_count"] == 2 and detect["arguments"]["target_duration_seconds"] == 6
    job_id = detect["result"]["job_id"]
    await clip_job_ended(ws, job_id)
    r = await chat(ws.client, f"render the clips of job {job_id}")
    assert names(r) == ["get_clip_job", "render_clips"]
    tracking, render = r.data["actions"]
    assert render["status"] == "ok", render
    assert len(render["arguments"]["clips"]) == tracking["result"]["clips"] >= 1  # the detected clips, as detected
    await clip_job_ended(ws, render["result"]["job_id"])
    # the same request over the stream: the same actions, the deltas making the reply
    response, seen = await stream(ws.client, f"rends les clips du job {job_id}")
    assert response.status == 200 and seen[-1][0] == "done"
    done = seen[-1][2]
    assert [a["name"] for a in done["actions"]] == ["get_clip_job", "render_clips"]
    assert all(a["status"] == "ok" for a in done["actions"]), done["actions"]
    assert "".join(d["text"] for e, _, d in seen if e == "message.delta") == done["reply"]
    await clip_job_ended(ws, done["actions"][1]["result"]["job_id"])

    # the clips of a video are those of its article
    r = await chat(ws.client, f"détecte 1 clip de 6 secondes dans la vidéo {video_id}")
    assert names(r) == ["list_templates", "get_video", "detect_clips"], r.body
    detect = r.data["actions"][2]
    assert detect["status"] == "ok" and detect["arguments"]["article_id"] == article_id, detect
    await clip_job_ended(ws, detect["result"]["job_id"])


async def test_revival_candidates_and_description_completion(service, talk):
    ws, video_id, article_id, _ = talk
    media_id = (await ws.client.get(f"/videos/{video_id}")).data["media_id"]
    await wait_projected(service.settings, service.pool, ["revival_candidates"])
    r = await chat(ws.client, "revival candidates")
    [listed] = r.data["actions"]
    assert listed["name"] == "list_revival_candidates" and listed["status"] == "ok", listed
    assert [c["media_id"] for c in listed["result"]["candidates"]] == [media_id]

    r = await chat(ws.client, f"complete the descriptions of media {media_id} for videosite_long and short_video_app")
    assert names(r) == ["list_revival_candidates", "complete_descriptions"]
    complete = r.data["actions"][1]
    assert complete["status"] == "ok", complete
    assert complete["arguments"]["candidate_id"] == listed["result"]["candidates"][0]["id"]
    assert [d["platform_id"] for d in complete["result"]["drafts"]] == ["videosite_long", "short_video_app"]
    assert all(d["measured_length"] <= d["max_length"] for d in complete["result"]["drafts"])
    assert complete["result"]["article_id"] == article_id


async def test_translate_an_article(service, talk):
    ws, _, article_id, _ = talk
    r = await chat(ws.client, f"traduis l'article {article_id} en allemand")
    [action] = r.data["actions"]
    assert action["arguments"] == {"id": article_id, "target_language": "de"}
    # This service has no language model provider: the operation's own documented refusal.
    assert action["status"] == "failed" and action["error"]["code"] == "provider_not_configured", action
    assert "provider" in r.data["reply"]


# ------------------------------------------------------------------------------------ the contract


async def test_openapi_describes_the_agent_operations(service):
    doc = (await service.client().get("/openapi.json")).body
    chat_op = doc["paths"]["/agent/chat"]["post"]
    assert chat_op["operationId"] == "agent_chat" and chat_op["security"] == [{"bearerAuth": ["agent:use"]}]
    stream_op = doc["paths"]["/agent/stream"]["post"]
    assert stream_op["operationId"] == "agent_stream"
    event = stream_op["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert event["properties"]["event"]["enum"] == ["conversation", "action.started", "action.completed",
                                                    "message.delta", "done", "error"]
    message = doc["components"]["schemas"]["AgentMessage"]["properties"]["message"]
    assert (message["minLength"], message["maxLength"]) == (1, 4000)
    assert doc["paths"]["/agent/conversations/{id}"]["get"]["operationId"] == "get_agent_conversation"
