"""Read models, one module each. ``ALL`` is what the projector runs."""

from projections import jobs, medias, scheduler
from projections.base import Projection

ALL: dict[str, Projection] = {p.name: p for p in (jobs.projection, medias.projection, scheduler.projection)}


def all_ddl() -> list[str]:
    return [stmt for p in ALL.values() for stmt in p.ddl]
