"""Media: a named container that articles and videos attach to. Ids are integers (spec)."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, aggregate, deterministic_id
from domain.languages import DEFAULT_LANGUAGE


def media_stream_id(media_id: int) -> UUID:
    return deterministic_id("media", media_id)


@aggregate("Media")
class Media(Aggregate):
    class Created(Aggregate.Created):
        """A named container that videos and articles attach to (POST /medias), with the integer id clients use.

        Read by the `medias` read model (GET /medias); commands that attach a video to it load its stream."""

        published_as = "MediaCreated"
        media_id: int
        workspace_id: UUID
        environment: str
        name: str
        description: str | None
        category: str | None
        language: str

    @staticmethod
    def create_id(media_id: int) -> UUID:
        return media_stream_id(media_id)

    @event(Created)
    def __init__(self, media_id: int, workspace_id: UUID, environment: str, name: str, description: str | None,
                 category: str | None, language: str):
        self.media_id = media_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.name = name
        self.description = description
        self.category = category
        self.language = language

    @classmethod
    def create(cls, *, media_id: int, workspace_id: UUID, environment: str, name: str,
               description: str | None = None, category: str | None = None, language: str = DEFAULT_LANGUAGE) -> Media:
        if not name.strip():
            raise DomainError("name must not be empty", field="name")
        return cls(media_id=media_id, workspace_id=workspace_id, environment=environment, name=name.strip(),
                   description=description, category=category, language=language)
