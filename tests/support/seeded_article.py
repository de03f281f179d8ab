"""A workspace with a captioned talk analysed into an article, as the analysis job leaves them."""

from __future__ import annotations

import uuid
from pathlib import Path

from domain.analysis import analyse
from domain.articles import Article
from domain.videos import Video
from infra.captions import read_captions
from infra.storage import LocalStorage
from services.application.workspaces import CreateWorkspace
from tests.helpers import handle

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"


async def seeded(settings, store, tmp_path):
    """A workspace with a captioned talk analysed into an article (as the analysis job leaves them)."""
    ws, _ = await handle(store, CreateWorkspace(name="w", plan="pro", credits=100, rate_limit=1000))
    storage = LocalStorage(tmp_path / "storage")
    folder = f"videos/{ws}/7"
    storage.write_bytes(f"{folder}/source.mp4", b"not read by the detection")
    storage.write_bytes(f"{folder}/captions.vtt", FIXTURE.read_bytes())
    segments = read_captions(FIXTURE)
    duration = segments[-1].end_ms + 2000
    video = Video.upload(video_id=7, workspace_id=ws, environment="production", name="talk",
                         storage_key=f"{folder}/source.mp4", size_bytes=10, duration_ms=duration,
                         captions_key=f"{folder}/captions.vtt", caption_cues=len(segments), demuxer="mov",
                         width=1280, height=720, frame_rate=25.0, video_codec="h264", audio_codec="aac")
    analysis_job = uuid.uuid4()
    graph = analyse(segments, language="fr").to_dict()
    video.record_analysis(job_id=analysis_job, graph=graph, analysis_mode="standard", article_id=3)
    article = Article(article_id=3, workspace_id=ws, environment="production", job_id=analysis_job, video_id=7,
                      media_id=None, title="Rénovation", language="fr", writing_style="auto", aeo_score=50,
                      geo_score=50, composite_score=50.0, keywords_primary=[], has_transcript=True, content={},
                      markdown="")
    await store.save(video, article, workspace_id=ws)
    return ws, video, article, storage
