"""Read models, one module each. ``ALL`` is what the projector runs."""

from projections import (
    api_keys,
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

ALL: dict[str, Projection] = {
    p.name: p for p in (jobs.projection, medias.projection, scheduler.projection, event_counts.projection)
}
# The HTTP API's read models.
ALL.update({p.name: p for p in (workspaces.projection, api_keys.projection, usage.projection)})
# Webhook subscriptions and delivery history; the dispatcher's own state is not here.
ALL[webhooks.projection.name] = webhooks.projection
# Videos, their content graphs and the articles the analysis writes.
ALL.update({p.name: p for p in (videos.projection, content_graph.projection, articles.projection)})
# Monitoring buckets from the telemetry topic and from the event log.
ALL.update({p.name: p for p in (monitoring.calls, monitoring.events)})
# LLM usage per operation (GET /usage/llm).
ALL[llm_usage.projection.name] = llm_usage.projection
# Conversations with the assistant (GET /agent/conversations/{id}).
ALL[conversations.projection.name] = conversations.projection


def all_ddl() -> list[str]:
    return [stmt for p in ALL.values() for stmt in p.ddl]
# Clip jobs: the tracking object of GET /production/clips/jobs/{jobId}.
ALL[clip_jobs.projection.name] = clip_jobs.projection
# Revival candidates (GET /production/revival/candidates).
ALL[revival_candidates.projection.name] = revival_candidates.projection

# What the article routes read besides the articles: each analysis' graph, the translations asked, the
# first export of each format.
from projections import analysis_graphs, article_exports, article_translations  # noqa: E402

ALL.update({p.name: p for p in (analysis_graphs.projection, article_translations.projection,
                                article_exports.projection)})
