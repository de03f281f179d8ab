"""Aggregates, their events and pure policies. No I/O here."""

from domain import api_keys, jobs, media, webhooks, workspaces  # noqa: F401  (registers the published events)
