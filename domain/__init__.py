"""Aggregates, their events and pure policies. No I/O here."""

from domain import (  # noqa: F401  (registers the published events)
    agent,
    api_keys,
    articles,
    clips,
    jobs,
    llm_usage,
    media,
    revival,
    videos,
    webhooks,
    workspaces,
)
