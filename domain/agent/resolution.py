"""What a plan's actions take from each other: the context that earlier actions leave (the last id
of each kind, for "export it as markdown" in the next message), and the arguments an action takes
from the answers of the actions before it in the plan (``PlannedAction.needs``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from domain.agent.planner import Context, PlannedAction
from domain.languages import assistant_words

_ID_KINDS = {"video": ("get_video", "analyze_video", "get_claims", "get_entities", "get_intents", "get_moments",
                       "get_topics", "get_narrative", "get_visual_elements", "get_audio_elements", "get_video_graph",
                       "create_video_clip"),
             "article": ("get_article", "get_article_scores", "get_article_graph", "export_article",
                         "translate_article", "regenerate_article", "update_article", "list_article_translations"),
             "job": ("get_job", "cancel_job")}


def context_from(actions: Sequence[tuple[str, dict[str, Any], str, dict[str, Any] | None]]) -> Context:
    """The context that earlier actions leave: ``(name, arguments, status, result)`` in order. The
    last id of each kind an action named or produced (an analysis' job) wins."""
    context = Context()
    for name, arguments, status, result in actions:
        for kind, names in _ID_KINDS.items():
            if name in names and isinstance(arguments.get("id"), int | str):
                value = arguments["id"]
                if kind != "job":
                    try:
                        value = int(value)
                    except (TypeError, ValueError):
                        continue
                context = replace(context, **{f"{kind}_id": value})
        if status != "ok" or not isinstance(result, dict):
            continue
        if isinstance(result.get("job_id"), str):
            kind = "clip_job_id" if name in ("detect_clips", "render_clips") else "job_id"
            context = replace(context, **{kind: result["job_id"]})
        if isinstance(result.get("article_id"), int):
            context = replace(context, article_id=result["article_id"])
        if name in ("get_clip_job",) and isinstance(arguments.get("jobId"), str):
            context = replace(context, clip_job_id=arguments["jobId"])
        if name == "complete_descriptions" and isinstance(arguments.get("media_id"), int):
            context = replace(context, media_id=arguments["media_id"])
    return context


# ------------------------------------------------------------------------------------ resolution


class Unresolved(Exception):
    """An argument could not be taken from the earlier answers: ``reason`` (a key of the
    assistant's ``unresolved`` sentences, ``domain.languages``) and its values; ``str()`` is the
    English sentence, ``text(language)`` the sentence in the assistant's ``language``."""

    def __init__(self, reason: str, **values: Any) -> None:
        self.reason, self.values = reason, values
        super().__init__(self.text("en"))

    def text(self, language: str) -> str:
        return unresolved_text(self.reason, self.values, language)


def unresolved_text(reason: str, values: dict[str, Any], language: str) -> str:
    """Why an argument was not found, in ``language`` (English where the assistant does not speak it)."""
    sentence = assistant_words(language).unresolved.get(reason, "{reason}")
    return sentence.format_map({"reason": reason, **values})


_CLIP_FIELDS = ("id", "title", "thumbnail_title", "start_ms", "end_ms", "duration_ms", "viral_score", "rationale")


def resolve(action: PlannedAction, earlier: Sequence[tuple[str, str, Any]]) -> dict[str, Any]:
    """The arguments of ``action`` with what it ``needs`` taken from the answers of the actions
    before it in the plan: ``earlier`` is ``(name, status, data)`` in order, ``data`` being the
    operation's answer (its ``data`` member). Raises ``Unresolved``."""
    arguments = dict(action.arguments)
    if action.needs is None:
        return arguments

    def last_ok(name: str) -> Any:
        for done, status, data in reversed(earlier):
            if done == name:
                if status != "ok":
                    raise Unresolved("failed_before", name=name)
                return data
        raise Unresolved("not_run", name=name)

    for need in (action.needs,) if isinstance(action.needs, str) else action.needs:
        _resolve_need(need, arguments, last_ok)
    return arguments


def _resolve_need(need: str, arguments: dict[str, Any], last_ok: Callable[[str], Any]) -> None:
    if need == "video_article":
        video = last_ok("get_video")
        article = video.get("article_id") if isinstance(video, dict) else None
        if not isinstance(article, int):
            raise Unresolved("no_article", video=video.get("id") if isinstance(video, dict) else "")
        arguments["article_id"] = article
    elif need == "default_template":
        templates = last_ok("list_templates")
        if not isinstance(templates, list) or not templates:
            raise Unresolved("no_template")
        chosen = next((t for t in templates if isinstance(t, dict) and t.get("is_default")), templates[0])
        if not isinstance(chosen, dict) or not isinstance(chosen.get("id"), int):
            raise Unresolved("template_without_id")
        arguments["template_id"] = chosen["id"]
    elif need == "detected_clips":
        tracking = last_ok("get_clip_job")
        clips = tracking.get("clips") if isinstance(tracking, dict) else None
        if not isinstance(clips, list) or not clips:
            raise Unresolved("no_detected_clips")
        picked = arguments.pop("pick", None)
        if picked:
            missing = [n for n in picked if not 1 <= n <= len(clips)]
            if missing:
                raise Unresolved("no_such_clip", count=len(clips), clip=missing[0])
            clips = [clips[n - 1] for n in picked]
        arguments["clips"] = [{k: clip[k] for k in _CLIP_FIELDS if isinstance(clip, dict) and clip.get(k) is not None}
                              for clip in clips[:50]]
        for name in ("article_id", "template_id", "target_duration_seconds"):
            if name not in arguments and tracking.get(name) is not None:
                arguments[name] = tracking[name]
    elif need == "candidate":
        candidates = last_ok("list_revival_candidates")
        if not isinstance(candidates, list) or not candidates:
            raise Unresolved("no_candidate", media=arguments.get("media_id"))
        candidate = candidates[0]
        arguments["candidate_id"] = candidate.get("id")
        if "article_id" not in arguments and isinstance(candidate.get("article_id"), int):
            arguments["article_id"] = candidate["article_id"]
    else:
        raise Unresolved("unknown_need", need=need)
