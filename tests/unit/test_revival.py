"""Revival's pure rules: the candidate state machine, the score's order on obvious cases, what an
original description already has, the completion's sections, and the read model's statements."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.analysis import analyse, write_article
from domain.base import InvalidTransition
from domain.revival import (
    OPEN,
    PERSON_MOVES,
    STATUSES,
    AnalysisFacts,
    Candidate,
    VideositeExperiment,
    analysis_facts,
    assess,
    candidate_score,
    effective_status,
    parse_description,
)
from domain.revival_completion import complete_descriptions
from infra.codec import StoredEvent
from projections import revival_candidates
from tests.media_factory import podcast_cues

WS = uuid.UUID("00000000-0000-0000-0000-00000000000a")
J1, J2 = uuid.uuid4(), uuid.uuid4()

# ------------------------------------------------------------------ the state machine


def candidate() -> Candidate:
    return Candidate.open(video_id=7, workspace_id=WS, environment="production", media_id=3)


@pytest.mark.parametrize("start", ["eligible", "reviewing", "dismissed", "selected", "stale"])
@pytest.mark.parametrize("target", STATUSES)
def test_a_person_moves_only_along_the_documented_transitions(start, target):
    c = candidate()
    if start == "selected":
        c.select(uuid.uuid4(), ["videosite_long"], (J1, 0))
    elif start == "stale":
        c.move("reviewing", (J1, 0))
    elif start != "eligible":
        c.move(start, (J1, 0))
    basis = (J2, 0) if start == "stale" else (J1, 0)
    assert c.status_on(basis) == start
    allowed = target == start or target in PERSON_MOVES[start]
    if allowed:
        c.move(target, basis)
        assert c.status_on(basis) == target
    else:
        with pytest.raises(InvalidTransition) as refused:
            c.move(target, basis)
        assert refused.value.details["status"] == start and refused.value.status == 409


def test_selected_and_stale_are_never_a_persons_move():
    assert all({"selected", "stale"}.isdisjoint(targets) for targets in PERSON_MOVES.values())


def test_completing_selects_from_anything_but_dismissed():
    for start in ("eligible", "reviewing", "selected"):
        c = candidate()
        if start != "eligible":
            c.move("reviewing", (J1, 0)) if start == "reviewing" else c.select(uuid.uuid4(), ["blog_embed"], (J1, 0))
        c.select(uuid.uuid4(), ["blog_embed"], (J1, 0))
        assert c.status_on((J1, 0)) == "selected"
    c = candidate()
    c.move("dismissed", (J1, 0))
    with pytest.raises(InvalidTransition):
        c.select(uuid.uuid4(), ["blog_embed"], (J1, 0))


def test_an_open_decision_on_another_analysis_or_description_is_stale():
    for status in OPEN:
        assert effective_status(status, (J1, 0), (J2, 0)) == "stale"
        assert effective_status(status, (J1, 0), (J1, 1)) == "stale"
        assert effective_status(status, (J1, 2), (J1, 2)) == status
    for status in ("eligible", "dismissed"):
        assert effective_status(status, (J1, 0), (J2, 5)) == status


def test_a_move_to_the_status_it_has_records_nothing():
    c = candidate()
    c.collect_events()
    assert c.move("eligible", (J1, 0)) is False and list(c.collect_events()) == []
    assert c.move("reviewing", (J1, 0)) is True
    [changed] = c.collect_events()
    assert (changed.from_status, changed.to_status, changed.analysis_job_id) == ("eligible", "reviewing", J1)


def test_the_experiment_compares_only_video_site_drafts():
    completion = uuid.uuid4()
    assert VideositeExperiment.draft(completion_id=completion, workspace_id=WS, environment="production",
                                     candidate=uuid.uuid4(), video_id=1, platforms=["pinboard_site"]) is None
    record = VideositeExperiment.draft(completion_id=completion, workspace_id=WS, environment="production",
                                       candidate=uuid.uuid4(), video_id=1,
                                       platforms=["pinboard_site", "videosite_long", "videosite_shorts"])
    [drafted] = record.collect_events()
    assert drafted.status == "draft"
    assert [v["platform_id"] for v in drafted.variants] == [None, "videosite_long", "videosite_shorts"]


# ------------------------------------------------------------------ the score


FULL = {"description": True, "chapters": True, "geo_summary": True}
EMPTY = {"description": False, "chapters": False, "geo_summary": False}
RICH = AnalysisFacts(claims=25, answered=5, chapter_problem=None)
POOR = AnalysisFacts(claims=1, answered=0, chapter_problem="the video is too short for chapters")


def test_the_score_orders_obvious_cases():
    opportunity = candidate_score(EMPTY, 0, RICH, 30 * 60_000, age_days=6 * 365)
    finished = candidate_score(FULL, 800, RICH, 30 * 60_000, age_days=6 * 365)
    tiny = candidate_score(FULL, 800, POOR, 20_000, age_days=0)
    newer = candidate_score(EMPTY, 0, RICH, 30 * 60_000, age_days=10)
    shorter = candidate_score(EMPTY, 0, RICH, 2 * 60_000, age_days=6 * 365)
    thinner = candidate_score(EMPTY, 0, POOR, 30 * 60_000, age_days=6 * 365)

    assert opportunity == 100.0 and tiny < 5
    assert opportunity > finished > tiny  # what is missing counts
    assert opportunity > newer and opportunity > shorter and opportunity > thinner  # age, length, substance
    assert all(0 <= s <= 100 for s in (opportunity, finished, tiny, newer, shorter, thinner))


def test_chapters_count_only_when_the_video_can_have_them():
    no_chapters = {"description": True, "chapters": False, "geo_summary": True}
    assert candidate_score(no_chapters, 800, RICH, 60_000, 0) - candidate_score(FULL, 800, RICH, 60_000, 0) == 15
    assert candidate_score(no_chapters, 800, POOR, 60_000, 0) == candidate_score(FULL, 800, POOR, 60_000, 0)


def test_reasons_say_what_can_be_added_and_what_cannot():
    eligible, reasons = assess(EMPTY, 0, RICH)
    assert eligible and "the description has no chapters" in reasons
    assert "the description has no summary for answer engines" in reasons
    eligible, reasons = assess(FULL, 10, POOR)
    assert not eligible and reasons[-1].startswith("nothing to complete")
    assert "the description is short (10 visible characters)" in reasons


# ------------------------------------------------------------------ the original description


@pytest.mark.parametrize(("text", "presence"), [
    ("", (False, False, False)),
    ("A video about heat pumps.", (True, False, False)),
    ("Intro\n\n0:00 Start\n1:05 Middle\n12:40 End", (True, True, False)),
    ("[00:00] Start\n(01:05) Middle", (False, True, False)),
    ("See 1:05 for the demo.\n0:00 only one line", (True, False, False)),  # one timestamp line is prose
    ("Text.\n\nIn short: it works.\n- fact (0:10)", (True, False, True)),  # our own marker
    ("## Summary\nIt works.", (False, False, True)),  # a heading
    ("**Key takeaways**\n- one", (False, False, True)),
    ("Summary of the race was bad.", (True, False, False)),  # a sentence, not a heading
    ("En bref : ça marche.", (False, False, True)),
])
def test_what_an_original_description_already_has(text, presence):
    parsed = parse_description(text)
    assert tuple(parsed.presence.values()) == presence


def test_a_completed_description_reads_back_as_complete():
    cues = podcast_cues(80, max_chars=4500)
    graph = analyse(cues, language="fr")
    article = write_article(graph, "auto", "fr").to_dict()
    first = complete_descriptions("", graph.to_dict(), article, "fr", ["videosite_long"])
    [draft] = first.drafts
    assert draft["sections"]["description"] == article["introduction"]  # the article stands in for none
    assert draft["section_presence_before"] == {"description": False, "chapters": False, "geo_summary": False}
    again = complete_descriptions(draft["completed_description"], graph.to_dict(), article, "fr", ["videosite_long"])
    assert again.drafts[0]["section_presence_before"] == {"description": True, "chapters": True, "geo_summary": True}
    assert again.drafts[0]["completed_description"] == draft["completed_description"]  # nothing added twice
    eligible, _ = assess(again.drafts[0]["section_presence_before"], 500, analysis_facts(graph.to_dict()))
    assert not eligible


def test_an_article_with_no_introduction_lends_its_opening_paragraph_to_the_description():
    # a tutorial's introduction takes no step, and its opening chapter keeps its own sentences: the description
    # of a video that has none is that opening, not nothing
    cues = podcast_cues(80, max_chars=4500)
    graph = analyse(cues, language="fr")
    article = write_article(graph, "auto", "fr").to_dict()
    opening = " ".join(article["sections"][0]["paragraphs"][0]["sentences"])
    article["introduction"] = ""
    [draft] = complete_descriptions("", graph.to_dict(), article, "fr", ["videosite_long"]).drafts
    assert opening and draft["sections"]["description"] == opening


def test_chapters_a_video_cannot_satisfy_are_left_out_with_a_warning():
    cues = podcast_cues(20, max_chars=600)
    graph = analyse(cues, language="fr")
    article = write_article(graph, "auto", "fr").to_dict()
    done = complete_descriptions("Texte.", graph.to_dict(), article, "fr", ["videosite_long"])
    assert done.drafts[0]["sections"]["chapters"] == ""
    assert any(w.startswith("no chapters: the video is too short for chapters") for w in done.warnings)


# ------------------------------------------------------------------ the read model


def stored(kind: str, data: dict, *, stream_id: uuid.UUID, position: int, version: int = 1) -> StoredEvent:
    return StoredEvent(position, stream_id, "Video", version, WS, kind, 3, data, {},
                       datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=position))


def test_the_read_model_applies_each_event_with_a_position_guard():
    video = uuid.uuid4()
    uploaded = stored("VideoUploaded", {
        "video_id": 5, "environment": "production", "media_id": 2, "name": "Énergie", "description": "Texte.",
        "duration_ms": 600_000, "published_at": "2020-01-01T00:00:00+00:00", "thumbnail_key": "videos/w/5/t.jpg"},
        stream_id=video, position=10)
    [(sql, args)] = revival_candidates.projection.apply(uploaded)
    assert "ON CONFLICT (video_id) DO NOTHING" in sql
    assert args[6:10] == ("Énergie", "Texte.", "energie", "texte")  # title and description, folded for query
    assert args[-3] == pytest.approx(10.0) and args[-4] == pytest.approx(15.0)  # age (5 years), length (10 min)

    for kind, data in (("VideoGraphRecorded", {"job_id": str(J1), "graph": {"durationMs": 600_000}}),
                       ("VideoAnalyzed", {"job_id": str(J1), "article_id": 4}),
                       ("VideoDescriptionChanged", {"description": "Autre.", "revision": 1})):
        [(sql, args)] = revival_candidates.projection.apply(stored(kind, data, stream_id=video, position=11))
        assert "position < $" in sql and args[-1] == 11
    [(sql, args)] = revival_candidates.projection.apply(stored(
        "CandidateStatusChanged", {"from_status": "eligible", "to_status": "reviewing", "analysis_job_id": str(J1),
                                   "description_revision": 0}, stream_id=uuid.uuid4(), position=12))
    assert "THEN 'stale'" in sql and args[1] == "reviewing"


def test_completing_reads_the_graph_and_the_article_without_changing_them():
    """A completion is given the video's graph and the article as the store's shared read-only views
    (``EventStore.fetch_latest``): it drafts the same from them as from its own copies."""
    from domain.platforms import PLATFORM_IDS
    from infra.readonly import freeze

    cues = podcast_cues(80, max_chars=4500)
    graph = analyse(cues, language="fr").to_dict()
    article = write_article(analyse(cues, language="fr"), "auto", "fr").to_dict()
    platforms = list(PLATFORM_IDS)
    shared = complete_descriptions("Texte.", freeze(graph), freeze(article), "fr", platforms)
    own = complete_descriptions("Texte.", graph, article, "fr", platforms)
    assert shared.drafts == own.drafts and shared.warnings == own.warnings
