"""Speakers from the audio, on the real servers: a talk without captions read by two voices in turn
is recognised, its sentences attributed to two speakers found from the voices (the number is not
given), and the graph's speakers, turns and article read them; a talk of one voice has one."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.articles import Article
from services.jobs.speech import LocalRecogniser
from tests.media_factory import make_spoken_talk
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.speech_jobs import DIALOGUE, WHOLE_WINDOWS, analyse_video, analysis_worker, speech_settings, upload

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def dialogue(tmp_path_factory):
    return make_spoken_talk(tmp_path_factory.mktemp("dialogue"), DIALOGUE, "dialogue.mp4", voices=("en+m3", "en+f4"))


def voice_at(talk, start_ms, end_ms):
    """The voice of the line a segment overlaps most."""
    overlaps = [max(0, min(end_ms, e) - max(start_ms, s)) for s, e in
                zip(talk["starts_ms"], talk["ends_ms"], strict=True)]
    return talk["voices"][overlaps.index(max(overlaps))]


async def analysed_graph(fast, store, pool, background, talk):
    settings = speech_settings(fast, **WHOLE_WINDOWS)  # the speakers are the subject, not the windows
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, talk["video"])
    background.start(analysis_worker(settings, pool, LocalRecogniser(settings)).run)
    job = await analyse_video(store, ws, video, writing_style="conversational")
    done = await wait_for(lambda: job_finished(store, job.id), timeout=300, what="analysis finished")
    assert done.status == "completed", done.error_message
    article = await store.fetch_for_writing(Article.create_id(job.id))
    return article, (await store.fetch_for_writing(video.id)).graph


async def test_a_two_voice_talk_has_two_speakers_and_its_sentences_are_attributed(fast, store, pool, background,
                                                                                  dialogue):
    article, graph = await analysed_graph(fast, store, pool, background, dialogue)
    source = graph["transcriptSource"]
    assert source["speakers"] == 2 and "speakers_note" not in source
    segments = graph["transcript"]
    assert {s["speaker"] for s in segments} == {"Speaker 1", "Speaker 2"}
    pairs = Counter((voice_at(dialogue, s["startMs"], s["endMs"]), s["speaker"]) for s in segments)
    best = max(pairs[("en+m3", "Speaker 1")] + pairs[("en+f4", "Speaker 2")],
               pairs[("en+m3", "Speaker 2")] + pairs[("en+f4", "Speaker 1")])
    assert best >= 0.8 * len(segments), pairs
    speakers = graph["speakers"]
    assert speakers["diarised"] and speakers["speakerCount"] == 2
    assert len(speakers["turns"]) >= 8  # the voices alternate line by line
    said_by = {p["speaker"] for section in article.content["sections"] for p in section["paragraphs"]}
    assert said_by == {"Speaker 1", "Speaker 2"}  # the conversational article attributes its paragraphs


async def test_a_one_voice_talk_has_one_speaker_and_no_turns_invented(fast, store, pool, background, tmp_path):
    talk = make_spoken_talk(tmp_path, DIALOGUE[:8], "monologue.mp4", voice="en+m3")
    article, graph = await analysed_graph(fast, store, pool, background, talk)
    assert graph["transcriptSource"]["speakers"] == 1
    assert all(s["speaker"] is None for s in graph["transcript"])
    assert not graph["speakers"]["diarised"] and graph["speakers"]["speakerCount"] == 1
    assert not any(p["speaker"] for section in article.content["sections"] for p in section["paragraphs"])
