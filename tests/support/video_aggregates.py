"""A video as uploaded, a content graph and job ids, for the tests of the video and article
aggregates and their projections."""

from __future__ import annotations

import uuid

from domain.videos import Video

WORKSPACE = uuid.UUID("55555555-5555-4555-8555-555555555555")
JOB_A, JOB_B = uuid.UUID(int=0xA), uuid.UUID(int=0xB)


GRAPH = {"claims": [{"id": "clm_1"}, {"id": "clm_2"}], "entities": [{"id": "ent_1"}], "searchIntents": [],
         "clipMoments": [{"title": "m"}] * 3, "topics": [{"name": "fusion"}], "chapters": [],
         "visualElements": [{}, {}], "audioElements": [{}], "summary": {"geoReadinessScore": 62}}


def uploaded(**overrides) -> Video:
    """Given: a video that was uploaded (its VideoUploaded already collected)."""
    args = {"video_id": 41, "workspace_id": WORKSPACE, "environment": "production", "name": "Fusion",
            "storage_key": "videos/w/41/source.mp4", "size_bytes": 1234, "duration_ms": 30_000}
    args.update(overrides)
    video = Video.upload(**args)
    video.collect_events()
    return video
