"""Every command of the write side and its handler: one row per operation (``Context.handle``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from services.application import articles, clips, jobs, keys, media, revival, videos, webhooks, workspaces

HANDLERS: Mapping[type, Callable[[Any, Any], Awaitable[Any]]] = {
    jobs.QueueJob: jobs.queue_job,
    jobs.CancelJob: jobs.cancel_job,
    workspaces.CreateWorkspace: workspaces.create_workspace,
    workspaces.AddCredits: workspaces.add_credits,
    workspaces.RotateJobSecret: workspaces.rotate_job_secret,
    keys.IssueKey: keys.issue_key,
    keys.RevokeKey: keys.revoke_key,
    media.CreateMedia: media.create_media,
    videos.IngestVideo: videos.ingest_video,
    videos.ChangeVideoDescription: videos.change_video_description,
    videos.RevokePublicLinks: videos.revoke_public_links,
    videos.RequestAnalysis: videos.request_analysis,
    articles.UpdateArticle: articles.update_article,
    articles.RequestTranslation: articles.request_translation,
    articles.RequestRegeneration: articles.request_regeneration,
    articles.RecordExport: articles.record_export,
    clips.RequestClip: clips.request_clip,
    clips.RequestDetection: clips.request_detection,
    clips.RequestRender: clips.request_render,
    revival.MoveCandidate: revival.move_candidate,
    revival.CompleteDescriptions: revival.complete_descriptions,
    webhooks.RegisterWebhook: webhooks.register_webhook,
    webhooks.DeleteWebhook: webhooks.delete_webhook,
    webhooks.ResendDelivery: webhooks.resend_delivery,
    webhooks.SendWebhookTest: webhooks.send_webhook_test,
}
