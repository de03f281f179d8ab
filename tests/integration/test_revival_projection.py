"""The revival candidates read model's statements on PostgreSQL: the stored score equals the
domain's formula, a history applied twice (a replay, a rebuild) gives the same rows, and a decision
that races a change of its video ends stale, as the write side sees it."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime

from domain.analysis import analyse
from domain.revival import Candidate, analysis_facts, candidate_score, parse_description, visible_length
from domain.videos import Video
from projections import revival_candidates
from services.processes.projector.runner import execute_statements
from tests.helpers import snapshot
from tests.media_factory import podcast_cues
from tests.support.projection_events import WORKSPACE, stored

JOB_A, JOB_B = uuid.uuid4(), uuid.uuid4()
PUBLISHED = datetime(2020, 6, 1, tzinfo=UTC)


def history(race: bool = False) -> tuple[list, Video]:
    """Upload (with a media and a publication date), an analysis with an article, a person's review,
    then a second analysis; with ``race``, the review is made on the first analysis but lands after
    the second one."""
    graph = analyse(podcast_cues(80, max_chars=4500), language="fr").to_dict()
    video = Video.upload(video_id=9, workspace_id=WORKSPACE, environment="production", name="Rénovation",
                         storage_key="k", size_bytes=1, duration_ms=80_000, media_id=3, caption_cues=3,
                         description="Un guide.", published_at=PUBLISHED)
    events = stored(video)
    video.record_analysis(job_id=JOB_A, graph=graph, analysis_mode="standard", article_id=4)
    events += stored(video)
    candidate = Candidate.open(video_id=9, workspace_id=WORKSPACE, environment="production", media_id=3)
    candidate.move("reviewing", (JOB_A, 0))
    review = stored(candidate)
    video.record_analysis(job_id=JOB_B, graph=graph, analysis_mode="standard", article_id=5)
    second = stored(video)
    events += [*second, *review] if race else [*review, *second]
    return [dataclasses.replace(ev, position=i) for i, ev in enumerate(events, start=1)], video


async def apply(pool, events) -> None:
    async with pool.acquire() as conn, conn.transaction():
        for ev in events:
            await execute_statements(conn, revival_candidates.projection.apply(ev))


async def rows(pool) -> list[dict]:
    return await snapshot(pool, "revival_candidates", "video_id")


async def test_the_stored_score_is_the_domains_formula(pool):
    events, video = history()
    await apply(pool, events[:3])  # upload and the first analysis
    [row] = await rows(pool)
    parsed = parse_description(video.description)
    uploaded_at = events[0].recorded_at
    expected = candidate_score(parsed.presence, visible_length(parsed.prose), analysis_facts(video.graph), 80_000,
                               (uploaded_at - PUBLISHED).total_seconds() / 86_400)
    assert row["is_candidate"] and row["status"] == "eligible" and row["article_id"] == 4
    assert round(row["score"], 2) == expected
    assert row["search_text"] == "renovation\nun guide"


async def test_a_history_applied_again_changes_nothing(pool):
    events, _ = history()
    await apply(pool, events)
    once = await rows(pool)
    assert once[0]["status"] == "stale"  # the review was made on the first analysis
    await apply(pool, events)
    await apply(pool, events[:4])
    assert await rows(pool) == once


async def test_a_decision_landing_after_a_change_it_did_not_see_is_stale(pool):
    events, video = history(race=True)
    await apply(pool, events)
    [row] = await rows(pool)
    assert row["status"] == "stale"
    # the write side says the same of the candidate's stream
    candidate = Candidate.open(video_id=9, workspace_id=WORKSPACE, environment="production", media_id=3)
    candidate.move("reviewing", (JOB_A, 0))
    assert candidate.status_on((video.last_analysis_job_id, video.description_revision)) == "stale"
