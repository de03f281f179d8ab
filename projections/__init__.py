"""Read models, one module each. ``ALL`` is what the projector runs.

Each read model's reads (the SQL the API runs on it) are in ``<name>_queries.py`` beside it.
"""

from projections import (
    analysis_graphs,
    api_keys,
    article_exports,
    article_translations,
    articles,
    clip_jobs,
    content_graph,
    conversations,
    event_counts,
    jobs,
    llm_usage,
    medias,
    monitoring,
    revival_candidates,
    scheduler,
    usage,
    videos,
    webhooks,
    workspaces,
)
from projections.base import Projection

ALL: dict[str, Projection] = {p.name: p for p in (
    # The jobs, their queue (scheduler: job_queue for the workers) and the count of events per type.
    jobs.projection, medias.projection, scheduler.projection, event_counts.projection,
    # The HTTP API's own read models.
    workspaces.projection, api_keys.projection, usage.projection,
    # Webhook subscriptions and delivery history; the dispatcher's own state is not here.
    webhooks.projection,
    # Videos, their content graphs and the articles the analysis writes.
    videos.projection, content_graph.projection, articles.projection,
    # Monitoring buckets from the telemetry topic and from the event log.
    monitoring.calls, monitoring.events,
    # LLM usage per operation (GET /usage/llm).
    llm_usage.projection,
    # Conversations with the assistant (GET /agent/conversations/{id}).
    conversations.projection,
    # Clip jobs: the tracking object of GET /production/clips/jobs/{jobId}.
    clip_jobs.projection,
    # Revival candidates (GET /production/revival/candidates).
    revival_candidates.projection,
    # What the article routes read besides the articles: each analysis' graph, the translations
    # asked, the first export of each format.
    analysis_graphs.projection, article_translations.projection, article_exports.projection,
)}


def all_ddl() -> list[str]:
    return [stmt for p in ALL.values() for stmt in p.ddl]
