"""What an action's answer becomes: a short result for a person, and a bounded view for a model.

The short ``result`` of an action holds what a person needs from the operation's answer: ids,
counts, statuses, scores and the links (``/v1/...`` paths) to the resources, never the resource
itself (a transcript, an article, an export's body). The summarisers are here; which one an action
uses is declared with the action (``domain.agent.actions``), and one for any other (``generic``:
the scalar fields of an object, the count and ids of a list) gives an operation added later a
sensible result before it gets a summariser of its own. Text that came from a person or a
transcript (a title, a claim) is cut to ``TEXT_MAX`` characters.

``model_view`` is what a language model reads of an answer: the answer itself, shrunk to a budget
(long texts cut, long lists shortened, with a marker saying how much was left out), so that one
action's answer cannot fill a model's context.

``without_file_links`` is what may be kept of a result: no signed file URL (below).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

TEXT_MAX = 160
LIST_SHOWN = 10  # items a list's result names (the count says how many there are)
MODEL_VIEW_CHARS = 6000
# A signed file URL (``<base>/v1/files/<token>``, absolute or not) is a capability: whoever holds it
# downloads the file without a key until it expires; a public link (``<base>/v1/public/<token>``)
# until it is revoked. An answer hands one to its caller, whose key
# may read the file; a conversation's record is kept for good and read by other keys, so it never
# holds one. The token runs to the next character that cannot be in a URL.
FILE_LINK = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*?)?/v1/(?:files|public)/[^\s\"'<>]*")
FILE_LINK_LEFT_OUT = "[file link not kept]"

# (arguments, answer) -> short result; the factories below (``listing``, ``video_member``) return one.
Summariser = Callable[[dict[str, Any], Any], dict[str, Any]]


def clip(text: Any, limit: int = TEXT_MAX) -> Any:
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit - 1].rstrip() + "…"


def _data(answer: Any) -> Any:
    return answer.get("data") if isinstance(answer, dict) and "data" in answer else answer


def _pick(item: Any, *keys: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        return {}
    return {k: clip(item[k]) for k in keys if k in item}


def job_link(job_id: Any) -> str:
    return f"/v1/jobs/{job_id}"


def video_link(video_id: Any) -> str:
    return f"/v1/videos/{video_id}"


def article_link(article_id: Any) -> str:
    return f"/v1/articles/{article_id}"


def listing(key: str, fields: tuple[str, ...], link: Callable[[Any], str] | None = None) -> Summariser:
    def summarise(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
        items = _data(answer) if isinstance(_data(answer), list) else []
        shown = []
        for item in items[:LIST_SHOWN]:
            entry = _pick(item, *fields)
            if link is not None and isinstance(item, dict) and "id" in item:
                entry["link"] = link(item["id"])
            shown.append(entry)
        out: dict[str, Any] = {"count": len(items), key: shown}
        pagination = answer.get("pagination") if isinstance(answer, dict) else None
        if isinstance(pagination, dict) and "has_more" in pagination:
            out["has_more"] = pagination["has_more"]
        return out

    return summarise


def credits(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    return _pick(_data(answer), "balance", "total", "used", "plan")


def usage(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    return _pick(_data(answer), "totalApiCalls", "totalCreditsConsumed", "averageResponseMs", "plan")


def usage_llm(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    return {"totals": _pick(data.get("totals"), "calls", "totalTokens"),
            "operations": [_pick(o, "name", "calls", "totalTokens") for o in (data.get("operations") or [])]}


def me(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    workspace, key = data.get("workspace") or {}, data.get("apiKey") or {}
    return {"workspace": clip(workspace.get("name")), "plan": workspace.get("plan"),
            "credits_balance": (workspace.get("creditsTotal") or 0) - (workspace.get("creditsUsed") or 0),
            "rate_limit_per_min": workspace.get("rateLimitPerMin"), "scopes": key.get("scopes"),
            "environment": key.get("environment")}


def monitoring(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    hour, day, jobs = data.get("last1h") or {}, data.get("last24h") or {}, data.get("jobs") or {}
    return {"calls_last_hour": hour.get("totalCalls"), "error_rate_last_hour": hour.get("errorRate"),
            "credits_last_24h": day.get("creditsConsumed"), "jobs_pending": jobs.get("pending"),
            "jobs_running": jobs.get("running"), "jobs_failed_24h": jobs.get("failed24h"),
            "alerts": len(data.get("alerts") or [])}


def alerts(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    alerts = _data(answer) if isinstance(_data(answer), list) else []
    return {"count": len(alerts), "critical": answer.get("critical_count", 0) if isinstance(answer, dict) else 0,
            "alerts": [_pick(a, "type", "severity", "message") for a in alerts[:LIST_SHOWN]]}


def video(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "id", "name", "status", "duration_seconds", "has_transcript", "article_id", "last_job_id")
    if "id" in data:
        out["link"] = video_link(data["id"])
    if data.get("source_url"):
        out["source_url"] = data["source_url"]
    return out


def job_created(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "job_id", "type", "status", "reused", "credits_charged", "estimated_duration_seconds",
                "target_language", "compute_billing")
    if "job_id" in data:
        out["link"] = job_link(data["job_id"])
    return out


def clip_job_created(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    out = job_created(arguments, answer)
    if "job_id" in out:
        out["link"] = f"/v1/production/clips/jobs/{out['job_id']}"
    return out


def job(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "id", "type", "status", "progress", "step", "article_id", "error_message")
    if "id" in data:
        out["link"] = job_link(data["id"])
    return out


def video_member(kind: str, text_key: str | None) -> Summariser:
    def summarise(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
        items = _data(answer) if isinstance(_data(answer), list) else []
        out: dict[str, Any] = {"video_id": arguments.get("id"), "count": len(items),
                               "link": f"{video_link(arguments.get('id'))}/{kind}"}
        if text_key is not None:
            out["first"] = [clip(item.get(text_key)) for item in items[:3] if isinstance(item, dict)]
        return out

    return summarise


ON_SCREEN_SHOWN = 8  # the behavioural summaries, every signal and the rhythm


def visual_elements(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    """The visual elements' count and link, and the behavioural summaries when the analysis saw the
    person (``analysis_mode=behavioral``): what the assistant tells of what the picture shows."""
    out = video_member("visual-elements", None)(arguments, answer)
    items = _data(answer) if isinstance(_data(answer), list) else []
    seen = [clip(item.get("description")) for item in items
            if isinstance(item, dict) and item.get("type") == "behaviour" and item.get("description")]
    if seen:
        out["on_screen"] = seen[:ON_SCREEN_SHOWN]
    return out


def narrative(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    chapters = [c for c in (data.get("chapters") or [])[:LIST_SHOWN] if isinstance(c, dict)]
    return {"video_id": arguments.get("id"), "structure": data.get("structure"),
            "chapters": [clip(c.get("title")) for c in chapters],
            "link": f"{video_link(arguments.get('id'))}/narrative"}


def _graph_counts(data: Any) -> dict[str, Any]:
    data = data if isinstance(data, dict) else {}
    counts = {k: len(data[k]) for k in ("claims", "entities", "searchIntents", "clipMoments", "topics", "chapters")
              if isinstance(data.get(k), list)}
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    if "geoReadinessScore" in summary:
        counts["geo_readiness_score"] = summary["geoReadinessScore"]
    return counts


def video_graph(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    return {"video_id": arguments.get("id"), **_graph_counts(_data(answer)),
            "link": f"{video_link(arguments.get('id'))}/graph"}


def article(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "id", "title", "language", "aeo_score", "geo_score", "composite_score", "video_id", "media_id")
    if "id" in data:
        out["link"] = article_link(data["id"])
    links = answer.get("_links") if isinstance(answer, dict) else None
    if isinstance(links, dict):
        out["links"] = links
    return out


def scores(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "article_id", "aeo_score", "geo_score", "composite_score")
    out["link"] = f"{article_link(arguments.get('id'))}/scores"
    return out


def article_graph(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    return {"article_id": arguments.get("id"), **_graph_counts(_data(answer)),
            "link": f"{article_link(arguments.get('id'))}/graph"}


def export(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"article_id": arguments.get("id"), "format": arguments.get("format"),
                           "link": f"{article_link(arguments.get('id'))}/export/{arguments.get('format')}"}
    if isinstance(answer, dict) and "content_type" in answer and "bytes" in answer:
        out.update(content_type=answer["content_type"], bytes=answer["bytes"])
    else:
        out["bytes"] = len(json.dumps(answer, ensure_ascii=False, default=str).encode())
    return out


def article_updated(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "id", "updated")
    out["link"] = article_link(arguments.get("id"))
    return out


def clip_job(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    out = _pick(data, "job_id", "type", "status", "progress", "stage", "article_id", "template_id", "credits_used")
    for key in ("clips", "rendered_clips", "failed_clips"):
        if isinstance(data.get(key), list):
            out[key] = len(data[key])
    out["link"] = f"/v1/production/clips/jobs/{arguments.get('jobId')}"
    return out


def descriptions(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    data = _data(answer) or {}
    drafts: list[Any] = data["drafts"] if isinstance(data.get("drafts"), list) else []
    out = _pick(data, "request_id", "media_id", "article_id", "candidate_id", "reused", "videosite_experiment_id")
    out["drafts"] = [_pick(d, "platform_id", "measured_length", "max_length", "was_truncated") for d in drafts]
    out["warnings"] = len(data.get("warnings") or [])
    return out


def generic(arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    """Any operation without a summariser: the scalar fields of an object (texts cut), or a list's
    count and its items' ids."""
    data = _data(answer)
    if isinstance(data, list):
        ids = [item.get("id") for item in data[:LIST_SHOWN] if isinstance(item, dict) and "id" in item]
        return {"count": len(data), **({"ids": ids} if ids else {})}
    if isinstance(data, dict):
        return {k: clip(v) for k, v in list(data.items())[:20] if isinstance(v, str | int | float | bool) or v is None}
    return {"value": clip(data)} if data is not None else {}


def without_file_links(value: Any) -> Any:
    """``value`` (plain JSON values) with every signed file URL taken out: a string that is one
    is left out of its object or list (a video's ``source_url``), and one inside a longer text is
    replaced by ``FILE_LINK_LEFT_OUT``. Whoever reads it later asks for the resource again to get
    a link of their own."""
    if isinstance(value, str):
        return FILE_LINK.sub(FILE_LINK_LEFT_OUT, value) if "/v1/files/" in value or "/v1/public/" in value else value
    if isinstance(value, dict):
        return {k: without_file_links(v) for k, v in value.items() if not _file_link(v)}
    if isinstance(value, list):
        return [without_file_links(v) for v in value if not _file_link(v)]
    return value


def _file_link(value: Any) -> bool:
    return isinstance(value, str) and FILE_LINK.fullmatch(value.strip()) is not None


def shrink(value: Any, budget: int = MODEL_VIEW_CHARS) -> Any:
    """``value`` with texts and lists cut until its JSON fits ``budget`` characters (about).

    Texts are cut first, then lists keep their first items with a ``"… N more"`` marker; the
    limits halve until it fits."""
    text_limit, list_limit = 2000, 50
    while True:
        shrunk = _shrink(value, text_limit, list_limit)
        if len(json.dumps(shrunk, ensure_ascii=False, default=str)) <= budget or (text_limit <= 20 and list_limit <= 1):
            return shrunk
        text_limit, list_limit = max(20, text_limit // 2), max(1, list_limit // 2)


def _shrink(value: Any, text_limit: int, list_limit: int) -> Any:
    if isinstance(value, str):
        return clip(value, text_limit)
    if isinstance(value, list):
        kept = [_shrink(v, text_limit, list_limit) for v in value[:list_limit]]
        if len(value) > list_limit:
            kept.append(f"… {len(value) - list_limit} more")
        return kept
    if isinstance(value, dict):
        return {str(k): _shrink(v, text_limit, list_limit) for k, v in value.items()}
    return value
