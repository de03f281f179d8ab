"""English: what the service knows of it, and the assistant's English.

The assistant's part: its labels, sentences and the words that ask for its actions.

Keyed by the assistant action's name (``domain.agent.actions``); the French home
(``domain.languages.fr``) has the same keys. Each sentence is ``(say, name, result,
arguments) -> str``, ``result`` being the action's short result (``domain.agent.results``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, optional_words

R = dict[str, Any]


def _credits(s: Say, n: str, r: R, a: R) -> str:
    return (f"Your balance is {r.get('balance')} credits ({r.get('used')} used of {r.get('total')}, "
            f"plan {r.get('plan')}).")


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Usage: {r.get('totalApiCalls')} API calls, {r.get('totalCreditsConsumed')} credits consumed, "
            f"{r.get('averageResponseMs')} ms on average.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return f"Language-model usage: {totals.get('calls', 0)} calls, {totals.get('totalTokens', 0)} tokens."


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Workspace {s.q(r.get('workspace'))}, plan {r.get('plan')}, {r.get('credits_balance')} "
            f"credits left; your {r.get('environment')} key has the scopes {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Monitoring: {r.get('calls_last_hour')} calls in the last hour (error rate "
            f"{r.get('error_rate_last_hour')}), {r.get('jobs_pending')} jobs pending, "
            f"{r.get('jobs_running')} running, {r.get('jobs_failed_24h')} failed in 24 h, "
            f"{r.get('alerts')} active alerts.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "No active alert."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return f"{s.n(r['count'], 'active alert', 'active alerts')} ({r.get('critical', 0)} critical): {shown}."


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "You have no video yet."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'video', 'videos')}: {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", article {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Video {r.get('id')} {s.q(r.get('name'))}: {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'credit', 'credits')} charged" if charged is not None else ""
    return f"Queued: {s.label(n, a)}, job {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (an identical earlier request, reused)" if r.get("reused") else ""
    return f"{s.label(n, a).capitalize()}: clip job {r.get('job_id')}{reused} ({r.get('link')})."


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" First: " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):
        shown += " On screen: " + "; ".join(str(f) for f in r["on_screen"]) + "."
    what = s.label(n, a).split(" ", 2)[-1]  # "the claims of video 3"
    return f"Video {a.get('id')}: {s.n(r.get('count'), 'item', 'items')} ({what}, {r.get('link')}).{shown}"


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Video {a.get('id')}: structure {', '.join(map(str, r.get('structure') or []))}; chapters: "
            f"{chapters or 'none'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Content graph of {whose} {a.get('id')}: {r.get('claims', 0)} claims, {r.get('entities', 0)} "
                f"entities, {r.get('searchIntents', 0)} search intents, {r.get('clipMoments', 0)} clip moments, "
                f"GEO readiness {r.get('geo_readiness_score')} ({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "You have no job."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')} %")
    return f"{s.n(r['count'], 'job', 'jobs')}: {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", article {r['article_id']}" if r.get("article_id") else ""
    return (f"Job {r.get('id')} ({r.get('type')}): {s.status(r.get('status'))}, {r.get('progress')} %, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "You have no article yet."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'article', 'articles')}: {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Article {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, composite "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {r['bytes']} bytes" if r.get("bytes") is not None else ""
    return f"Export of article {a.get('id')} as {a.get('format')}{size}: {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Article {a.get('id')} {'updated' if r.get('updated') else 'unchanged'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{r.get('count', 0)} medias{': ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Media {r.get('id')} {s.q(r.get('name'))} created."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (default)" if x.get("is_default") else ""))
    return f"{r.get('count', 0)} templates: {shown}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Clip job {a.get('jobId')}: {s.status(r.get('status'))}, {r.get('clips', 0)} clips, "
            f"{r.get('rendered_clips', 0)} rendered, {r.get('failed_clips', 0)} failed ({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "No revival candidate."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (media "
                      f"{x.get('media_id')}, score {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'revival candidate', 'revival candidates')}: {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return f"Descriptions completed for media {r.get('media_id')} ({drafts}); request {r.get('request_id')}."


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Done: {s.label(n, a)}{': ' + facts if facts else ''}."


def _missing_id(s: Say, v: R) -> str:
    action = s.label(v.get("action", ""), {}).replace(" ?", "").replace(" {id}", "")
    return f"To {action}, tell me which {v.get('kind', '').replace('_', ' ')} (its id)."


_HELP = ("I can: read your balance, usage and alerts; list or show your videos, jobs and articles; analyse a "
         "video (with chapters, a transcript, a writing style, premium); read a video's claims, entities, topics "
         "or content graph; an article's scores, graph or export (html, markdown, json, schema, opengraph, txt), "
         "translate or regenerate it; cut a clip, detect and render clips; list revival candidates and complete "
         "descriptions; cancel a job. For example: “analyse video 12 with chapters”, “export article 5 as "
         "markdown”, “videos 3, 4 and 7”, “my balance and my alerts”. At most 15 actions per message.")

_VIDEO_MEMBERS = ("get_claims", "get_entities", "get_intents", "get_moments", "get_topics", "get_visual_elements",
                  "get_audio_elements")

ASSISTANT = AssistantWords(
    quotes=("“", "”"),
    zero_is_singular=False,
    statuses={s: s for s in ("pending", "running", "completed", "failed", "cancelled", "uploaded", "analyzing",
                             "analyzed", "queued", "eligible", "reviewing", "selected", "dismissed", "stale")},
    and_more=" (and more)",
    labels={
        "get_me": "read your workspace and key",
        "get_credits": "read your balance",
        "get_usage": "read your usage",
        "get_usage_llm": "read your language-model usage",
        "get_monitoring": "read your monitoring",
        "get_monitoring_alerts": "read your alerts",
        "list_videos": "list your videos",
        "get_video": "show video {id}",
        "get_transcript": "read the transcript of video {id}",
        "analyze_video": "analyse video {id}",
        "get_claims": "read the claims of video {id}",
        "get_entities": "read the entities of video {id}",
        "get_intents": "read the search intents of video {id}",
        "get_moments": "read the clip moments of video {id}",
        "get_topics": "read the topics of video {id}",
        "get_narrative": "read the narrative structure of video {id}",
        "get_visual_elements": "read the visual elements of video {id}",
        "get_audio_elements": "read the audio elements of video {id}",
        "get_video_graph": "read the content graph of video {id}",
        "list_jobs": "list your jobs",
        "get_job": "show job {id}",
        "cancel_job": "cancel job {id}",
        "list_articles": "list your articles",
        "get_article": "show article {id}",
        "get_article_scores": "read the scores of article {id}",
        "get_article_graph": "read the graph of article {id}",
        "export_article": "export article {id} as {format}",
        "update_article": "update article {id}",
        "translate_article": "translate article {id}",
        "list_article_translations": "list the translations of article {id}",
        "regenerate_article": "regenerate article {id}",
        "list_medias": "list your medias",
        "create_media": "create the media",
        "create_video_clip": "cut a clip of video {id}",
        "list_templates": "list the templates",
        # its article may come from a video's answer, then the arguments do not name it
        "detect_clips": lambda a: "detect clips in article {article_id}" if "article_id" in a else "detect clips",
        "render_clips": "render the clips",
        "get_clip_job": "read clip job {jobId}",
        "list_revival_candidates": "list the revival candidates",
        "complete_descriptions": "complete the descriptions of media {media_id}",
        "update_revival_candidate": "update revival candidate {id}",
        "update_video": "change the description of video {id}",
    },
    label_unknown="run {name}",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("video"), "get_article_graph": _graph("article"),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    asks={
        "analyze_video": (r"analy[sz]\w*",),
        "cancel_job": (r"cancel\w*", r"stop\w*", r"abort\w*"),
        "create_media": (r"creat\w*", r"new", r"add\w*"),
        "update_article": (r"renam\w*", r"attach\w*", r"retitl\w*"),
        "translate_article": (r"translat\w*",),
        "regenerate_article": (r"regenerat\w*", r"rewrit\w*", r"redo"),
        "create_video_clip": (r"clip", r"cut\w*", r"extract\w*", r"trim\w*"),
        "detect_clips": (r"detect\w*", r"find\w*", r"suggest\w*", r"identif\w*"),
        "render_clips": (r"render\w*", r"produc\w*", r"generat\w*"),
        "complete_descriptions": (r"descriptions?", r"complet\w*"),
        "update_video": (r"chang\w*", r"modif\w*", r"updat\w*", r"edit\w*", r"replac\w*"),
        "update_revival_candidate": (r"review\w*", r"dismiss\w*", r"candidat\w*", r"reopen\w*", r"eligib\w*"),
    },
    kind_words={
        "account": (r"who", r"identit\w*", r"keys?", r"scopes?", r"workspaces?", r"accounts?", r"environments?"),
        "credits": (r"balance", r"credits?", r"money", r"plans?"),
        "usage": (r"usages?", r"consumption", r"monitoring", r"alerts?", r"tokens?", r"llm", r"latenc\w*",
                  r"errors?", r"stat\w*", r"metri\w*", r"requests?"),
        "jobs": (r"jobs?", r"status", r"progress\w*", r"queue", r"renders?"),
        "content": (r"videos?", r"articles?", r"medias?", r"claims?", r"entit\w*", r"intent\w*", r"moments?",
                    r"chapters?", r"narrat\w*", r"topics?", r"themes?", r"graph\w*", r"elements?", r"transcri\w*",
                    r"summar\w*", r"export\w*", r"scores?", r"aeo", r"geo", r"translations?", r"clips?",
                    r"contents?", r"channels?", r"analys\w*", r"analyz\w*"),
        "templates": (r"templates?", r"clips?", r"render\w*", r"detect\w*"),
        "revival": (r"revival", r"reviv\w*", r"candidat\w*", r"descriptions?", r"platforms?"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"I could not {what}: your key lacks the scope {scope}.",
    refused=lambda what, why: f"I did not {what}: {why}.",
    failed=lambda what, why: f"I could not {what}: {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "To translate, tell me the target language (en, de, es, it, pt or nl).",
        "missing_range": lambda s, v: "To cut a clip, give the time range, for example “from 0:10 to 0:40”.",
        "missing_name": lambda s, v: "Give the name in quotes, for example “Fusion energy”.",
        "range_cut": lambda s, v: f"A range names at most {v.get('max')} ids; I kept the first {v.get('max')}.",
        "default_format": lambda s, v: f"No format was named: I used {v.get('format')} (html, markdown, json, "
                                       "schema, opengraph and txt exist).",
        "default_platforms": lambda s, v: f"No platform was named: I used {', '.join(v.get('platforms') or [])}.",
    },
    unresolved={
        "failed_before": "it needs the answer of {name}, which did not succeed",
        "not_run": "it needs the answer of {name}, which did not run",
        "no_article": "video {video} has no article yet (analyse it first)",
        "no_template": "there is no template to use",
        "template_without_id": "the templates have no id",
        "no_detected_clips": "the clip job has no detected clips (is its detection finished?)",
        "no_such_clip": "the clip job detected {count} clips; there is no clip {clip}",
        "no_candidate": "media {media} has no revival candidate",
        "unknown_need": "unknown need {need}",
    },
    performed=lambda count, ok: f"I performed {count} actions: {ok} succeeded, {count - ok} did not.",
    not_understood=lambda shown: f"I did not understand: {shown}.",
    missing_scopes=lambda listed: f"Not done for lack of a scope: your key lacks {listed}.",
    model_failed="The language model failed: ",
    left_undone={
        "cap": lambda count, cap, wait: f"{count} more requested actions were not done: at most {cap} actions run "
                                        "per message. Ask again for the rest.",
        "rate_limited": lambda count, cap, wait: f"{count} requested actions were not done: your workspace's rate "
                                                 f"limit is reached; retry{f' in {wait} s' if wait else ''}.",
        "stopped": lambda count, cap, wait: f"Stopped: {count} requested actions were not done.",
    },
    help=_HELP,
)



# How a message asks for things in English (domain.agent.planner reads them).
REQUESTS = RequestWords(
    verbs=(r"show|list|give|get|tell|display|check|see|view|fetch|read|open|analy[sz]e|export|cancel|detect|render|"
           r"translate|regenerate|rename|attach|cut|extract|create|complete|find|what|which|how|download|track"),
    sequence=r"and then|then|after that|afterwards|finally",
    conjunction="and",
    also="also",
    polite="please",
    determiners="the |my ",
    kinds={"video": r"videos?", "article": r"articles?", "job": r"jobs?", "media": r"medias?",
           "template": r"templates?", "clip": r"clips?"},
    numbered=r"numbers?",
    joins=r"and|or",
    ranges=r"to|through|thru",
    this=r"this|that|the same|same|it|its",
    counted=r"videos?|jobs?|articles?|candidat\w*|medias?",
    limit_before=r"last|latest|recent|most recent|top|first|limit",
    limit_after=r"last|latest|recent\w*",
    seconds=r"s|sec|secs|seconds?",
    minutes=r"min|mins|minutes?",
    time_from=r"from|between",
    time_to=r"to|and|until",
    languages={},  # its names of the languages are their ``called``
    language_word=r"language|lang|target|code",
    without_article=r"(?:without|no)\s*(?:an )?article",
    styles={"journalistic": r"journalisti\w*", "narrative": r"narrati\w*", "analytical": r"analytic\w*",
            "tutorial": r"tutori\w*", "conversational": r"conversation\w*", "documentary": r"documentar\w*",
            "interview": r"interview\w*"},
    statuses={"eligible": r"eligib\w*", "reviewing": r"review\w*", "selected": r"selected", "dismissed": r"dismiss\w*",
              "stale": r"stale"},
    platforms={"videosite_long": r"video site|long videos?", "professional_network_long": r"professional[ _]network",
               "social_network_b_reels": r"social[ _]network[ _]b"},
    all_platforms=r"(?:all|every)\s+(?:the\s+)?platforms?",
    asks={
        "cancel": r"cancel\w*|stop\w*|abort\w*", "translate": r"translat\w*", "translations": r"translations\b",
        "translate_verb": r"translate\b", "regenerate": r"regenerat\w*|rewrit\w*", "rename": r"renam\w*|retitl\w*",
        "rename_to": r"to|as|into", "attach": r"attach\w*", "descriptions": r"descriptions?",
        "write": r"complet\w*|writ\w*|fill\w*|generat\w*|draft\w*", "clips": r"clips?", "moments": r"moments?",
        "detect": r"detect\w*|find\w*|suggest\w*|identif\w*", "generate": r"generat\w*|make|creat\w*",
        "render": r"render\w*|produc\w*|generat\w*", "track": r"jobs?|track\w*|status|progress\w*",
        "cut": r"cut\w*|extract\w*|trim\w*", "candidates": r"candidat\w*|revival|reviv\w*",
        "at_least": r"above|over|at least", "export": r"export\w*|download\w*", "analyse": r"analy[sz]\w*",
        "results": r"results?|of the analysis|the analysis of", "run": r"analy[sz]e\b|run|start",
        "chapters": r"chapter\w*", "transcript": r"transcri\w*", "behavioral": r"behavio\w*",
        "premium": r"premium|high quality|best quality", "scores": r"scores?\b|scoring|aeo\b|geo\b",
        "graph": r"graph\w*", "create": r"creat\w*|new\b|add\b", "named": r"named|called", "status": r"status",
    },
    account={
        "get_usage_llm": r"llm|tokens?|language models?", "get_credits": r"balance|credits?",
        "get_usage": r"usage|consumption|api calls?|spen[dt]|consumed", "get_monitoring_alerts": r"alerts?|warnings?",
        "get_monitoring": r"monitoring|health|dashboard",
        "get_me": r"who am i|my workspace|my plan|my key|my scopes|whoami",
    },
    video_reads={
        "get_claims": r"claims?|facts?|assertions?", "get_entities": r"entit\w*",
        "get_intents": r"intents?|queries|questions?", "get_moments": r"moments?|highlights?",
        "get_topics": r"topics?|themes?", "get_narrative": r"narrati\w*|structure|chapters?",
        "get_visual_elements": (r"visual\w*|shots?|scenes?|gestures?|gaze|posture|body language|facial expressions?|"
                                r"expressions?|look\w* at the camera|eye contact|smil\w*|hands?|behaviou?r\w*|"
                                r"proxemics|laterality"),
        "get_audio_elements": r"audio|silences?|loudness|volume",
    },
    help=r"help|\?|hi|hello|hey|thanks?|thank you|what can you do|what do you do|commands?",
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"next|first|finally|lastly|then")

# how a question read out opens: a question word and a verb ("what makes", "how do"; not "what happens is",
# which names a thing), or a verb and its subject
_ASKING = (r"(?:what|why|when|where|who|how(?: often| much| many| long)?)\s+(?:do|does|did|is|are|was|were|can|"
           r"could|should|would|will|has|have|(?!this\b|its\b|his\b|us\b)[a-z]+s)\b(?![^,.?!]*\b(?:is|was)\b)"
           r"|(?:do|does|did|can|could|should|would|have|has|is|are)\s+(?:you|i|we|they|it|there|people)\b")


LANGUAGE = Language(
    code="en",
    markers=frozenset({
        "the", "my", "show", "list", "what", "is", "and", "then", "with", "how", "many", "cancel", "balance",
        "please", "me", "of", "all", "give", "get", "for", "in", "to", "from", "into", "as", "latest", "last",
        "are", "do", "can", "you", "i", "help", "tell", "which", "jobs", "videos", "alerts", "usage",
        "chapters", "detect", "render", "candidates", "hello", "thanks", "analyze", "its", "it", "your",
    }),
    letters="",
    name="English",
    locale="en_US",
    stemmer="english",
    called=r"english|anglais",
    spoken_fillers=(
        "um umm uh uhh er erm hmm mm mhm yeah yep yup nope gonna wanna gotta kinda sorta okay ok alright "
        "hello hi hey welcome thanks thank bye goodbye "
        "right yes stuff things thing guys lot lots basically actually literally really totally pretty "
        "like just gonna y'all ain't cool awesome super cuz whatnot"
    ),
    hesitations="uh um uhm er erm hmm mm",
    leading_fillers="um uh er erm hmm so and well ok okay yeah yes but right alright",
    comma_openers=("finally next first firstly second secondly third thirdly then now also lastly so anyway like oh "
                   "actually basically"),
    leading_words="so and but okay ok alright well right um uh now yeah yes all",
    cue_phrases=(
        r"next(?:\s+(?:one|up|we|is|thing|step|topic|question|item|on))?|"
        r"let['’]?s\s+(?:now\s+)?(?:talk|move|turn|look|start|dive|get\s+into|switch|go\s+(?:on|back|to)|kick|jump|begin|finish|wrap|take\s+a\s+look|shift|"
        r"focus|think\s+about|zoom)|moving\s+on|the\s+next\s+(?:one|thing|topic|step|question|part|section|chapter|item|idea)|"
        r"first(?:ly)?(?:\s+(?:of\s+all|up|off))?|second(?:ly)?|third(?:ly)?|finally|lastly|to\s+(?:conclude|"
        r"wrap\s+up|sum\s+up|summari[sz]e|start)|in\s+conclusion|another\s+(?:thing|point|question|topic|one|"
        r"example|way)|turning\s+to|as\s+a\s+next\s+step|switching\s+gears|speaking\s+of|on\s+to|onto|"
        r"stepping\s+back|with\s+(?:all\s+of\s+)?(?:that|this|those)|at\s+this\s+point|before\s+we\s+(?:get|go|"
        r"dive|start|jump|move)|(?:we['’]re|we\s+are|i['’]m|i\s+am)\s+(?:gonna|going\s+to)\s+(?:now\s+)?"
        r"(?:move|talk|look|switch|turn|dive|get\s+into)|one\s+(?:more|last|other)\s+thing|"
        r"here['’]?s\s+(?:the\s+)?(?:next|second|first|last|thing)|alright|"
        r"the\s+(?:first|second|third|last|final)\s+(?:one|thing|step|part|question|topic)|"
        r"what\s+(?:is|are|about|happens)|how\s+(?:do|does|about|can)|why\s+(?:is|are|do|does)"
    ),
    announce_phrases=(
        _OPENERS + r"(?:let['’]?s|let\s+us)\s+(?:now\s+)?(?:(?:talk|speak|think)\s+about|"
        r"(?:move\s+on|turn|switch|get|go\s+on)\s+to|(?:look|take\s+a\s+look)\s+at|dive\s+into)|"
        r"moving\s+on\s+to|turning\s+to|next\s+up\s+is|next\s+up,"
    ),
    # an instruction to the viewer: an order of steps, then a verb of doing (never "imagine", "consider", "add"
    # or "take": a lecturer's imperatives), or a numbered step anywhere in the sentence
    instruction_phrases=(
        r"(?:(?:first(?:ly)?|then|next|now|after\s+that|finally|second(?:ly)?|third(?:ly)?)[,\s]+)?"
        r"(?:click|tap|open(?!\s+source)|install|download|run\s+the|type|enter|select|press|insert|delete|copy|paste|save|plug|"
        r"unplug|connect|attach|pour|stir|mix|navigate|go\s+(?:to|into)\s+(?:the|your)|drag|check|measure|"
        # the verbs of making things (a recipe, a repair); not "add", "take", "let", "set", which lectures use
        r"keep(?!\s+in\s+mind)|leave(?!\s+(?:it|that|this)\s+(?:as|for|to)\b)|bake|cook|boil|preheat|knead|shape|slice|chop|whisk|sprinkle|rinse|wash|tighten|loosen|"
        r"unscrew|screw|glue|sand|drill|trim|wrap|stretch\s+and\s+fold|let\s+(?:(?:the|your)\s+\w+|it|them)\s+"
        r"(?:rest|rise|cool|dry|sit|soak|cure|set)|"
        r"make\s+sure|be\s+sure\s+to|don['’]t\s+forget\s+to|start\s+by|begin\s+by)\b|"
        r".*?\b(?:step\s+(?:\d+|one|two|three|four|five)|the\s+(?:first|next|last|final)\s+step)\b"
    ),
    step_openers=r"first(?:ly)?|start(?:ing)?\s+(?:by|with)|begin\s+(?:by|with)|to\s+start|step\s+one",
    video_subject_phrases=(
        r"\b(?:this|today['’]s)\s+(?:(?:short|quick|brief|little)\s+)?(?:(?:video|episode|talk|lesson|lecture|"
        r"podcast|presentation|overview|tutorial)\s+(?:is\s+)?(?:about|on)|(?:guide|introduction)\s+to)\s+"
        r"(?:the\s+)?|"
        # "in this video I will show you how to bake a sourdough bread": what it shows is its subject
        r"\bin\s+(?:this|today['’]s)\s+(?:video|episode|tutorial|lesson),?\s+(?:i|we)\s*(?:['’]ll|\s+will|"
        r"['’]m\s+going\s+to|\s+am\s+going\s+to|['’]re\s+going\s+to|\s+are\s+going\s+to)\s+"
        r"(?:show\s+you|teach\s+you|explain)\s+(?=how\s+to\b)"
    ),
    conclusion_phrases=(
        r"in\s+conclusion|to\s+conclude|to\s+sum\s+up|to\s+summari[sz]e|in\s+summary|wrapping\s+up|to\s+wrap\s+up|"
        r"final(?:ly)?\s+(?:thought|word)s?|that['’]?s\s+(?:it|all)\s+for"
    ),
    sponsor_phrases=(
        r"\bsponsor(?:ed|s)?\b|\bbrought\s+to\s+you\s+by\b|\bpromo\s+code\b|\bcoupon\s+code\b|\bfree\s+trial\b"
    ),
    definition_phrases=(
        r"\b(?:is|are|was|were)\s+(?:a|an|the)\b|\bmeans\b|\brefers\s+to\b|\bis\s+defined\s+as\b|\bconsists\s+of\b|"
        r"\bis\s+called\b|\bstands\s+for\b"
    ),
    cause_phrases=(
        r"\bbecause\b|\btherefore\b|\bleads?\s+to\b|\bcauses?\b|\bresults?\s+in\b|\bdue\s+to\b|\bthanks\s+to\b|"
        r"\benables?\b|\ballows?\b|\bso\s+that\b|\bwhich\s+is\s+why\b|\bas\s+a\s+result\b"
    ),
    comparison_phrases=(
        r"\bmore\s+than\b|\bless\s+than\b|\bfewer\s+than\b|\bthe\s+(?:most|largest|biggest|first|highest|lowest|"
        r"smallest)\b|\btimes\s+(?:more|less|faster|bigger)\b|\bdouble\b|\btriple\b|\bmillions?\b|\bbillions?\b|"
        r"\bmost\b|\bfor\s+every\b"
    ),
    hedge_phrases=(
        r"\bI\s+think\b|\bI\s+believe\b|\bmaybe\b|\bperhaps\b|\bprobably\b|\bI\s+guess\b|\bin\s+my\s+opinion\b|"
        r"\bI\s+feel\b|\bkind\s+of\b|\bsort\s+of\b"
    ),
    social_phrases=(
        r"\bhello\b|\bwelcome\b|\bthank\s+you\b|\bthanks\b|\bsubscribe\b|\bsee\s+you\b|\bgoodbye\b|\blike\s+and\b"
    ),
    connective_openers="and but so or then also because anyway plus",
    anaphora_openers="this that it it's they he she these those",
    hook_openers="why|how|what if|did you know|imagine|here's|here is|the truth|the secret|stop",
    attribution_phrases="according to|said",
    speech_markers=r"\byou know\b|\bi mean\b|\b(?:is|was|are|were|i['’]m) like\b|['’]s like\b|\blike,|, like\b",
    question_leads=(r"(?:the|my|our|a) (?:real |big |main |first |next |key )?question"
                    r"(?: for you| here| now| then)?(?:,[^,?]{1,30},)? is"),
    # "Adam asks what makes...", "question is from Joel, how do you...", "Next question is from Tom." (it follows),
    # "How often do you make commits, I..."
    read_questions=(rf"\b(?:asks|asked|says|writes|wrote|wonders|wants to know)[,:]?\s+(?={_ASKING})"
                    rf"|\bquestions? (?:is |comes |here )?from [^,.?!]{{1,40}},\s*(?={_ASKING})"
                    r"|\bquestions? (?:we have (?:here )?)?(?:is|comes) from [^,.?!]{1,40}[.!]?\s*$"
                    r"|^(?=(?:why|how(?: often| much| many| long)?|what|where|when|which)\s+"
                    r"(?:do|does|did|can|could|should|would|will)\s)"),
    tag_questions=(r"right|you know|okay|ok|see|"
                   r"(?:is|was|are|were|do|does|did|has|have|had|can|could|wo|would|should)n['’]t "
                   r"(?:it|he|she|they|we|you|i|there|that)"),  # "..., wasn't it?", "..., don't you?"
    process_words=r"how(?!\s+(?:much|many|long|often|far|old|big|fast))|steps?|process|works?",  # not "how much"
    month_names="january february march april may june july august september october november december",
    unit_words=(
        r"percent|per\s?cent|euros?|dollars?|pounds?|billions?|millions?|trillions?|thousand|kilometers?|"
        r"kilometres?|miles?|meters?|metres?|kilos?|tonnes?|tons?|degrees?|watts?|hours?|minutes?|"
        r"seconds?|years?|days?|months?|weeks?|times|people|employees|users"
    ),
    question_openers=(),
    conjunction="and",
    scales={"thousand": 3, "million": 6, "millions": 6, "billion": 9, "billions": 9},
    vague_amounts=(r"several|a few|some|many", r"hundred|thousand", r"hundreds|thousands"),
    adverb_endings=("ly",),
    vague_heads="couple kind kinds sort sorts bunch lot lots piece bit level way ways amount amounts respect regard",
    aspect_title="of {subject}",
    judgement_words=("good great nice cool bad awesome amazing weird crazy funny huge tough terrible horrible "
                     "fantastic incredible interesting wonderful silly stupid wild insane tasty tastiest lovely "
                     "excellent brilliant beautiful happy sad disappointing complicated"),
    connectors="of for in to vs versus and with",
    pronouns=(
        "i me my mine we us our ours you your yours he him his she her hers they them their theirs it its this that "
        "these those something anything everything nothing someone anyone everyone one ones"
    ),
    dangling="and or but the a an of to in on for with vs versus as at by from",
    progressive=("is are was were am be been being", "ing"),
    participle_ending="ed",
    common_verbs=("make makes made take takes took get gets got give gives gave need needs want wants seem seems "
                  "equals"),
    verb_signals=(
        "i you he she it we they to can could will would should must might may don't doesn't didn't won't can't "
        "i'll we'll you'll they'll i'd we'd they'd"
    ),
    causative_verbs="let lets help helps watch watches",
    determiners="the a an this these those my your his her its our their some any each every",
    plural_endings=("s", "es"),
    plural_templates={"what": "what are {t}", "how": "how do {t} work", "why": "why do {t} matter"},
    query_indefinite={"a": "a", "an": "an"},
    labels={
        "introduction": "Introduction", "key_facts": "Key facts", "faq": "Frequently asked questions",
        "conclusion": "Conclusion", "step": "Step", "in_short": "In short", "analysis": "Analysis",
        "figures": "Facts and figures", "timeline": "Timeline", "and": "and", "what": "what is {t}",
        "how": "how does {t} work", "why": "why does {t} matter", "how_to": "how to {t}", "who": "who is {t}",
        "hook": "hook", "context": "context", "development": "development", "conclusion_part": "conclusion",
        "chapters": "Chapters", "source": "Source", "watch": "Watch at", "question": "Q", "answer": "A",
        "also_answered": "Also answered", "main_entities": "Main entities",
    },
    colon=": ",
    question_mark="?",
    requests=REQUESTS,
    assistant=ASSISTANT,
)
