"""GET /medias and POST /medias: the caller's environment's medias (sandbox has its own)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from domain.languages import DEFAULT_LANGUAGE
from projections import medias_queries as queries
from services.api.base import Call, Route
from services.api.models import Language, Name, Text
from services.application import media as commands


class CreateMedia(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name(500)
    description: Text(5000) | None = None
    category: Text(200) | None = None
    language: Language() = DEFAULT_LANGUAGE


class MediaItem(BaseModel):
    id: int
    name: str
    description: str | None
    category: str | None
    language: str
    createdAt: datetime


class MediaList(BaseModel):
    data: list[MediaItem]


class CreatedMedia(BaseModel):
    id: int
    name: str


class CreatedMediaResponse(BaseModel):
    data: CreatedMedia


async def list_medias(call: Call) -> dict:
    rows = await queries.every(call.pool, call.workspace_id, call.environment)
    return {"data": [
        {"id": r["id"], "name": r["name"], "description": r["description"], "category": r["category"],
         "language": r["language"], "createdAt": r["created_at"]}
        for r in rows
    ]}


async def create_media(call: Call) -> dict:
    body: CreateMedia = call.body
    media, position = await call.context.handle(commands.CreateMedia(
        call.workspace_id, call.environment, name=body.name, description=body.description, category=body.category,
        language=body.language))
    await call.read_your_writes("medias", position)
    return {"data": {"id": media.media_id, "name": media.name}}


ROUTES = [
    Route("GET", "/medias", list_medias, scope="articles:read", tag="Media", response=MediaList,
          summary="The medias of the caller's environment, oldest first"),
    Route("POST", "/medias", create_media, scope="articles:create", tag="Media", body=CreateMedia,
          response=CreatedMediaResponse, writes=True, summary="Create a media (400 when name is missing)"),
]
