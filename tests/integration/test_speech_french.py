"""French speech through the real local Whisper, window by window, on the real servers: the words
Whisper wrote as one ("l'eau", "c'est", "l'école") are whole in the transcript and in its cues,
and each window after the first is told the text the windows before it were recognised as (at
the recogniser's door, and as the engine recorded it received it, with the window's words)."""

from __future__ import annotations

import re

import pytest

from domain.analysis.model import Segment
from domain.analysis.speech import prompt_for, words_text
from infra.captions import transcript_webvtt
from services.jobs.speech import LocalRecogniser
from tests.media_factory import make_spoken_talk
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.speech_jobs import analyse_video, analysis_worker, speech_settings, upload

pytestmark = pytest.mark.slow

# Lines espeak-ng's French voice says clearly enough for Whisper base (most of its French is hard
# for it, "aujourd'hui" above all); read with pauses, they make three windows of at most 8 s.
LINES = [
    "Bonjour à tous.",
    "C'est l'heure de l'école.",
    "Je bois de l'eau tous les jours.",
    "Nous avons parlé de l'eau et de l'air.",
    "Qu'est-ce qu'on apprend à l'école ?",
    "L'enfant boit de l'eau fraîche.",
    "C'est l'histoire d'une rivière.",
    "Merci de votre attention.",
]
SPLIT = re.compile(r"\w '\w|\w' \w|\w -\w")  # "l 'eau", "l' eau", "arc -en"


@pytest.fixture(scope="module")
def french(tmp_path_factory):
    return make_spoken_talk(tmp_path_factory.mktemp("french"), LINES, "french.mp4", voice="fr")


class Listening(LocalRecogniser):
    """The local recogniser, noting what each window was told came before it."""

    def __init__(self, settings):
        super().__init__(settings)
        self.prompts: dict[tuple[int, int], str] = {}

    async def recognise(self, path, demuxer, window, language, prompt=""):
        self.prompts[window] = prompt
        return await super().recognise(path, demuxer, window, language, prompt)


async def test_french_elisions_stay_whole_and_each_window_is_told_the_text_before_it(fast, store, pool, background,
                                                                                    french):
    settings = speech_settings(fast)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, french["video"])
    recogniser = Listening(settings)
    background.start(analysis_worker(settings, pool, recogniser).run)
    job = await analyse_video(store, ws, video, language="fr")
    done = await wait_for(lambda: job_finished(store, job.id), timeout=300, what="analysis finished")
    assert done.status == "completed", done.error_message
    assert done.result["transcript_source"]["windows"] >= 3

    graph = (await store.fetch_for_writing(video.id)).graph
    cues = [cue["text"] for cue in graph["transcript"]]
    assert not [cue for cue in cues if SPLIT.search(cue)], cues
    said = " ".join(cues)
    for elided in ("c'est", "l'heure", "l'école", "l'eau"):
        assert re.search(rf"(?<!\w){elided}(?!\w)", said, re.IGNORECASE), (elided, cues)
    assert any(re.search(r"(?<!\w)l'eau(?!\w)", cue) for cue in cues), cues  # within one cue
    vtt = transcript_webvtt([Segment(c["startMs"], c["endMs"], c["text"]) for c in graph["transcript"]])
    assert "l'eau" in vtt and not SPLIT.search(vtt)  # the WebVTT download is made from the same cues

    windows = [(e.data["item_id"], e.data["result"]) for e in await store.read_stream(job.id)
               if e.type == "JobItemCompleted"]
    assert len(windows) == done.result["transcript_source"]["windows"]
    assert windows[0][1]["prompt"] == "" and words_text(windows[0][1]["words"])
    first_text = words_text(windows[0][1]["words"])
    for k, (item, result) in enumerate(windows[1:], 1):
        told = prompt_for([r["words"] for _, r in windows[:k]])
        window = tuple(int(x) for x in item.split("-")[2:])
        assert recogniser.prompts[window] == told  # what the job handed the recogniser
        assert result["prompt"] == told  # what faster-whisper recorded it was conditioned on
    assert windows[1][1]["prompt"].startswith(first_text)  # window 2 heard window 1's text

