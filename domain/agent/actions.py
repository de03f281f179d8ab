"""The assistant's actions, each declared once (``AssistantAction``): what it is and how it is used.

An action is an operation of the API (``services.api.assistant.actions`` builds its tool from the route
table) that the assistant may run. Its declaration says what the assistant's policy needs of it
(``domain.agent.policy``): whether it writes (then it runs only when the person's message asks for
that kind of change) or which kinds of resource it reads (once content has been read, it runs only
when the person's messages name one of them); and how its answer becomes a short result
(``domain.agent.results``). Its words (its label, the sentence about what it found, the words that
ask for it) live in each language's home (``domain.languages``), keyed by its name.

``tests/unit/test_agent_actions.py`` walks this registry against the route table and the language
homes: an action declared in one place and missing in another fails it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.agent import results as r

Summariser = r.Summariser

CONTENT = ("content",)  # videos, articles and what analyses found: what most reads read


@dataclass(frozen=True)
class AssistantAction:
    """One action the assistant may run (see the module's text)."""

    name: str  # the operation's id
    writes: bool
    kinds: tuple[str, ...]  # the kinds of resource a read reads (any one asked lets it run); () for a write
    summarise: Summariser = r.generic


def _read(name: str, summarise: Summariser = r.generic, kinds: tuple[str, ...] = CONTENT) -> AssistantAction:
    return AssistantAction(name, writes=False, kinds=kinds, summarise=summarise)


def _write(name: str, summarise: Summariser = r.generic) -> AssistantAction:
    return AssistantAction(name, writes=True, kinds=(), summarise=summarise)


_DECLARED = (
    # the account
    _read("get_me", r.me, ("account",)),
    _read("get_credits", r.credits, ("credits", "account")),
    _read("get_usage", r.usage, ("usage",)),
    _read("get_usage_llm", r.usage_llm, ("usage",)),
    _read("get_monitoring", r.monitoring, ("usage",)),
    _read("get_monitoring_alerts", r.alerts, ("usage",)),
    # videos and what their analysis found
    _read("list_videos", r.listing("videos", ("id", "name", "status", "duration_seconds", "article_id"),
                                   r.video_link)),
    _read("get_video", r.video),
    _write("update_video"),
    _write("analyze_video", r.job_created),
    _read("get_transcript"),
    _read("get_claims", r.video_member("claims", "text")),
    _read("get_entities", r.video_member("entities", "name")),
    _read("get_intents", r.video_member("intents", "query")),
    _read("get_moments", r.video_member("moments", "title")),
    _read("get_topics", r.video_member("topics", "name")),
    _read("get_narrative", r.narrative),
    _read("get_visual_elements", r.visual_elements),
    _read("get_audio_elements", r.video_member("audio-elements", None)),
    _read("get_video_graph", r.video_graph),
    # jobs
    _read("list_jobs", r.listing("jobs", ("id", "type", "status", "progress"), r.job_link), ("jobs",)),
    _read("get_job", r.job, ("jobs",)),
    _write("cancel_job", r.job),
    # articles
    _read("list_articles", r.listing("articles", ("id", "title", "aeo_score", "geo_score"), r.article_link)),
    _read("get_article", r.article),
    _write("update_article", r.article_updated),
    _read("get_article_scores", r.scores),
    _read("get_article_graph", r.article_graph),
    _read("export_article", r.export),
    _write("translate_article", r.job_created),
    _read("list_article_translations"),
    _write("regenerate_article", r.job_created),
    # medias
    _read("list_medias", r.listing("medias", ("id", "name"))),
    _write("create_media"),
    # clips
    _write("create_video_clip", r.job_created),
    _read("list_templates", r.listing("templates", ("id", "name", "format", "target_duration_seconds",
                                                    "is_default")), ("templates",)),
    _write("detect_clips", r.clip_job_created),
    _write("render_clips", r.clip_job_created),
    _read("get_clip_job", r.clip_job, ("jobs", "templates")),
    # revival
    _read("list_revival_candidates", r.listing("candidates", ("id", "media_id", "article_id", "title", "score",
                                                              "status")), ("revival",)),
    _write("update_revival_candidate"),
    _write("complete_descriptions", r.descriptions),
)
ACTIONS: dict[str, AssistantAction] = {a.name: a for a in _DECLARED}
if len(ACTIONS) != len(_DECLARED):
    raise ValueError("an assistant action is declared twice")


def summarise(name: str, arguments: dict[str, Any], answer: Any) -> dict[str, Any]:
    """The short result of an action of ``name`` whose operation answered ``answer``: its own
    summariser's, or the generic one's for an operation declared later than this build."""
    action = ACTIONS.get(name)
    try:
        result = (action.summarise if action else r.generic)(arguments, answer)
    except (AttributeError, TypeError, KeyError, ValueError):  # an answer of another shape than expected
        result = {}
    return result or r.generic(arguments, answer)


def read_kinds(name: str) -> tuple[str, ...]:
    """The kinds of resource an operation that reads reads (any one of them asked lets it run)."""
    action = ACTIONS.get(name)
    return action.kinds if action is not None and action.kinds else CONTENT
