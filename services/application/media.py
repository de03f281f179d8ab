"""Medias: the named containers articles and videos are attached to."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from domain.languages import DEFAULT_LANGUAGE
from domain.media import Media
from services.application.context import Context
from services.application.results import Saved


@dataclass(frozen=True)
class CreateMedia:
    workspace_id: UUID
    environment: str
    name: str
    description: str | None = None
    category: str | None = None
    language: str = DEFAULT_LANGUAGE


async def create_media(command: CreateMedia, ctx: Context) -> Saved[Media]:
    c = command
    media_id = await ctx.next_id("media_id_seq")
    media = Media.create(media_id=media_id, workspace_id=c.workspace_id, environment=c.environment, name=c.name,
                         description=c.description, category=c.category, language=c.language)
    return Saved(media, await ctx.save(media, workspace_id=c.workspace_id))
