"""Medias: the named containers articles and videos are attached to."""

from __future__ import annotations

from uuid import UUID

from domain.media import Media
from infra.eventstore import EventStore


async def create_media(store: EventStore, workspace_id: UUID, *, environment: str, name: str,
                       description: str | None = None, category: str | None = None, language: str = "fr",
                       meta: dict | None = None) -> tuple[Media, int]:
    media_id = await store.next_id("media_id_seq")
    media = Media.create(media_id=media_id, workspace_id=workspace_id, environment=environment, name=name,
                         description=description, category=category, language=language)
    return media, await store.save(media, workspace_id=workspace_id, meta=meta)
