"""The offline planner: a person's message, in a language the assistant reads, to the operations it asks.

Deterministic and model-free: the same message and context always give the same plan. It reads
the message clause by clause (``domain.agent.grammar``: clauses end at a sentence's end, a line
break, a semicolon or a word of sequence such as "then", "puis", "luego"; "and", "et", "y" or a
comma start a new clause when a verb follows), finds in each clause what is asked (a kind of
request, found by its words) and what it is about (ids after the name of their kind: "video 12",
"vidéos 3, 4 et 7", "articles 2 to 5"; a job's uuid; a format, a language, a time range,
options), and emits one action per object ("videos 3, 4 and 7": three actions). A clause that
names no id where one is needed takes the last one of its kind from earlier in the message or
the conversation ("export it as markdown").

The request kinds, with examples (docs/agent.md has the full list):

- balance, usage, LLM usage, alerts, monitoring, who am I: "what is my balance?", "mon solde et
  mes alertes";
- lists and details: "list my videos", "show video 12", "les 5 derniers jobs", "article 7";
- analyses: "analyse video 12 with chapters", "analyse la vidéo 12 avec les chapitres et la
  transcription, style journalistique, en premium";
- an analysis's reads: "claims of video 3", "les thèmes et les entités de la vidéo 3";
- articles: "scores of article 5", "graph of article 5", "export article 5 as markdown",
  "translate article 5 into German", "regenerate article 5 in a narrative style",
  "rename article 5 to \"Fusion\"";
- clips: "cut video 3 from 0:10 to 0:40 as webm", "detect 5 clips in article 4 with template 2",
  "render the clips of job <id>", "list the templates";
- revival: "revival candidates", "complete the descriptions of media 7 for videosite_long and
  short_video_app";
- jobs: "cancel job <uuid>", "status of job <uuid>";
- several at once: "videos 3, 4 and 7", "analyse video 3, then export article 5 as markdown".

A message with nothing it understands gives no action (the reply lists what it can do). The
planner emits what is asked, however many: the cap of 15 actions is applied when they run.

The words of each request are in the language modules (``domain.languages``, ``RequestWords``):
the rules below name what they look for (``ASK["cancel"]``, a kind of object, an account read) and
read it in every language at once. A language is read once its module declares its request
words; the reply is in the message's language where the assistant speaks it, else in English.
The arguments an action takes from the answers before it are ``domain.agent.resolution``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from domain.agent.grammar import (
    ASK,
    KIND_WORDS,
    RANGE_MAX,
    SECONDS,
    THIS,
    candidate_status_in,
    clauses,
    detect_language,
    either,
    export_format_in,
    job_token,
    language_in,
    limit_in,
    merged,
    name_after,
    numbers_after,
    platforms_in,
    style_in,
    time_range_in,
    uuids,
)
from domain.exports import ASSISTANT_DEFAULT_FORMAT
from domain.languages import fold

DEFAULT_EXPORT_FORMAT = ASSISTANT_DEFAULT_FORMAT
DEFAULT_PLATFORMS = ("videosite_long",)


@dataclass(frozen=True)
class PlannedAction:
    """One operation and its arguments (path parameters, query parameters and body fields, flat).

    ``needs`` names the arguments taken from earlier actions' answers when the plan runs
    (``resolve``), one name or several: ``default_template`` (from ``list_templates``),
    ``detected_clips`` (from ``get_clip_job``), ``candidate`` (from ``list_revival_candidates``),
    ``video_article`` (the article of the video ``get_video`` read)."""

    name: str
    arguments: dict[str, Any]
    needs: str | tuple[str, ...] | None = None


@dataclass(frozen=True)
class Note:
    """Something the reply tells the person about the plan: ``code`` and its values."""

    code: str  # missing_id, missing_language, missing_range, range_cut, default_format, default_platforms
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """The last ids of each kind named or produced earlier (in the message or the conversation)."""

    video_id: int | None = None
    article_id: int | None = None
    job_id: str | None = None
    media_id: int | None = None
    clip_job_id: str | None = None


@dataclass(frozen=True)
class Plan:
    language: str  # the message's language (a code of domain.languages): the reply's, where the assistant speaks it
    actions: tuple[PlannedAction, ...]
    not_understood: tuple[str, ...] = ()  # clauses it could not read, as written
    asked_help: bool = False
    notes: tuple[Note, ...] = ()

    @property
    def understood(self) -> bool:
        return bool(self.actions or self.notes)


# ------------------------------------------------------------------------------------ the rules


@cache
def _word_start(pattern: str) -> re.Pattern[str]:
    """``pattern`` at the start of a word, compiled once (every rule tries its words on every clause)."""
    return re.compile(rf"\b(?:{pattern})")


def _has(pattern: str, clause: str) -> re.Match[str] | None:
    return _word_start(pattern).search(clause)


class _Clause:
    """One clause being read: its folded and original text, the context, what it found."""

    def __init__(self, folded: str, original: str, context: Context) -> None:
        self.text = folded
        self.original = original
        self.context = context
        self.notes: list[Note] = []

    def numbers(self, kind: str) -> tuple[list[int], bool]:
        """The ids of ``kind`` written in the clause."""
        return numbers_after(kind, self.text)

    def ids(self, kind: str, what: str, *, fallback: bool = True) -> list[int]:
        found, cut = self.numbers(kind)
        if cut:
            self.notes.append(Note("range_cut", {"kind": kind, "max": RANGE_MAX}))
        if not found and fallback:
            last = getattr(self.context, f"{kind}_id", None)
            if last is not None:
                return [last]
        if not found and fallback:
            self.notes.append(Note("missing_id", {"kind": kind, "action": what}))
        return found

    def remember(self, **ids: Any) -> None:
        self.context = replace(self.context, **{k: v for k, v in ids.items() if v is not None})


def _each(c: _Clause, kind: str, name: str, **arguments: Any) -> list[PlannedAction]:
    ids = c.ids(kind, name)
    if ids:
        c.remember(**{f"{kind}_id": ids[-1]})
    return [PlannedAction(name, {"id": i, **arguments}) for i in ids]


def _cancel(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["cancel"], c.text):
        return None
    ids = uuids(c.text)
    if not ids and c.context.job_id:
        ids = [c.context.job_id]
    if not ids:
        c.notes.append(Note("missing_id", {"kind": "job", "action": "cancel_job"}))
    c.remember(job_id=ids[-1] if ids else None)
    return [PlannedAction("cancel_job", {"id": i}) for i in ids]


def _translate(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["translate"], c.text):
        return None
    # "the translations of article 5" (the noun, no verb asking for one) reads those already asked.
    if _has(ASK["translations"], c.text) and not _has(ASK["translate_verb"], c.text):
        return _each(c, "article", "list_article_translations")
    language = language_in(c.text)
    if language is None:
        c.notes.append(Note("missing_language", {"action": "translate_article"}))
        return []
    return _each(c, "article", "translate_article", target_language=language)


def _regenerate(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["regenerate"], c.text):
        return None
    options: dict[str, Any] = {}
    style = style_in(c.text, ("journalistic", "narrative", "analytical", "tutorial", "conversational"))
    if style:
        options["writing_style"] = style
    language = language_in(c.text)
    if language:
        options["language"] = language
    return _each(c, "article", "regenerate_article", **options)


def _rename_or_attach(c: _Clause) -> list[PlannedAction] | None:
    if _has(ASK["rename"], c.text):
        name = name_after(c.text, c.original, ASK["rename_to"])
        if not name:
            c.notes.append(Note("missing_name", {"action": "update_article"}))
            return []
        ids = c.ids("article", "update_article")[:1]
        c.remember(article_id=ids[0] if ids else None)
        return [PlannedAction("update_article", {"id": i, "custom_name": name}) for i in ids]
    if _has(ASK["attach"], c.text) and _has(KIND_WORDS["article"], c.text):
        media, _ = c.numbers("media")
        if not media:
            c.notes.append(Note("missing_id", {"kind": "media", "action": "update_article"}))
            return []
        ids = c.ids("article", "update_article")[:1]
        return [PlannedAction("update_article", {"id": i, "media_id": media[0]}) for i in ids]
    return None


def _descriptions(c: _Clause) -> list[PlannedAction] | None:
    if not (_has(ASK["descriptions"], c.text) and _has(ASK["write"], c.text)):
        return None
    platforms = platforms_in(c.text)
    if not platforms:
        platforms = list(DEFAULT_PLATFORMS)
        c.notes.append(Note("default_platforms", {"platforms": platforms}))
    media = c.ids("media", "complete_descriptions")[:1]
    if not media:
        return []
    c.remember(media_id=media[0])
    body: dict[str, Any] = {"media_id": media[0], "platforms": platforms}
    articles, _ = c.numbers("article")
    if articles:
        body["article_id"] = articles[0]
    candidate = uuids(c.text)
    if candidate:
        return [PlannedAction("complete_descriptions", {**body, "candidate_id": candidate[0]})]
    return [PlannedAction("list_revival_candidates", {"media_id": media[0], "limit": 1}),
            PlannedAction("complete_descriptions", body, needs="candidate")]


_DURATION = re.compile(rf"\b(\d{{1,3}})\s*(?:{SECONDS})\b")


def _template_options(c: _Clause) -> dict[str, Any]:
    options: dict[str, Any] = {}
    templates, _ = c.numbers("template")
    if templates:
        options["template_id"] = templates[0]
    duration = _DURATION.search(c.text)
    if duration:
        options["target_duration_seconds"] = int(duration.group(1))
    return options


_CLIPS = f"{ASK['clips']}|{ASK['moments']}"
_CLIP_COUNT = re.compile(rf"\b(\d{{1,2}})\s+(?:{_CLIPS})\b")


def _detect(c: _Clause) -> list[PlannedAction] | None:
    if not _has(_CLIPS, c.text):
        return None
    detect = _has(ASK["detect"], c.text)
    # "generate clips for article 4" asks for clips from scratch: a detection (a render needs
    # clips already chosen: a clip job or a time range).
    generate = (_has(ASK["generate"], c.text) and _has(KIND_WORDS["article"], c.text)
                and job_token(c.text, c.original) is None and time_range_in(c.text) is None)
    if not (detect or generate):
        return None
    body = _template_options(c)
    count = _CLIP_COUNT.search(c.text)
    if count:
        body["requested_clip_count"] = max(1, min(50, int(count.group(1))))
    articles = c.ids("article", "detect_clips", fallback=False)
    videos = [] if articles else c.ids("video", "detect_clips", fallback=False)
    if videos:  # "detect clips in video 12": the clips of its article
        c.remember(video_id=videos[-1])
        out = [] if "template_id" in body else [PlannedAction("list_templates", {})]
        for video in videos:
            out.append(PlannedAction("get_video", {"id": video}))
            out.append(PlannedAction("detect_clips", dict(body), needs=(
                "video_article" if "template_id" in body else ("video_article", "default_template"))))
        return out
    articles = articles or c.ids("article", "detect_clips")
    if not articles:
        return []
    c.remember(article_id=articles[-1])
    out = []
    for article in articles:
        if "template_id" in body:
            out.append(PlannedAction("detect_clips", {"article_id": article, **body}))
        else:
            if not out or out[0].name != "list_templates":
                out.insert(0, PlannedAction("list_templates", {}))
            out.append(PlannedAction("detect_clips", {"article_id": article, **body}, needs="default_template"))
    return out


def _render(c: _Clause) -> list[PlannedAction] | None:
    if not (_has(ASK["clips"], c.text) and _has(ASK["render"], c.text)):
        return None
    options = _template_options(c)
    picked, _ = c.numbers("clip")
    job = job_token(c.text, c.original) or c.context.clip_job_id
    window = time_range_in(c.text)
    if window is not None:
        articles = c.ids("article", "render_clips")[:1]
        if not articles:
            return []
        start, end = window
        clip = {"id": "clip-1", "title": f"Clip {_clock(start)}-{_clock(end)}", "start_ms": start, "end_ms": end,
                "duration_ms": end - start}
        body = {"article_id": articles[0], **options, "clips": [clip]}
        if "template_id" in options:
            return [PlannedAction("render_clips", body)]
        return [PlannedAction("list_templates", {}), PlannedAction("render_clips", body, needs="default_template")]
    if job is None:
        c.notes.append(Note("missing_id", {"kind": "clip_job", "action": "render_clips"}))
        return []
    c.remember(clip_job_id=job)
    return [PlannedAction("get_clip_job", {"jobId": job}),
            PlannedAction("render_clips", {**options, **({"pick": picked} if picked else {})}, needs="detected_clips")]


def _clip_job(c: _Clause) -> list[PlannedAction] | None:
    if not (_has(KIND_WORDS["clip"], c.text) and _has(ASK["track"], c.text)):
        return None
    job = job_token(c.text, c.original)
    if job is None:
        return None
    c.remember(clip_job_id=job)
    return [PlannedAction("get_clip_job", {"jobId": job})]


def _cut(c: _Clause) -> list[PlannedAction] | None:
    if not _has(rf"clip\w*|{ASK['cut']}", c.text):
        return None
    window = time_range_in(c.text)
    videos, _ = c.numbers("video")
    if window is None:
        if videos and _has(ASK["cut"], c.text):
            c.notes.append(Note("missing_range", {"action": "create_video_clip"}))
            return []
        return None
    ids = c.ids("video", "create_video_clip")
    start, end = window
    options: dict[str, Any] = {"start_ms": start, "end_ms": end}
    fmt = re.search(r"\b(mp4|webm|mp3)\b", c.text)
    if fmt:
        options["format"] = fmt.group(1)
    c.remember(video_id=ids[-1] if ids else None)
    return [PlannedAction("create_video_clip", {"id": i, **options}) for i in ids]


def _templates(c: _Clause) -> list[PlannedAction] | None:
    if not _has(KIND_WORDS["template"], c.text):
        return None
    return [PlannedAction("list_templates", {})]


_MIN_SCORE = re.compile(rf"\bscores?\s*(?:>=|>|{ASK['at_least']})\s*(\d{{1,3}})\b")


def _candidates(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["candidates"], c.text):
        return None
    query: dict[str, Any] = {}
    status = candidate_status_in(c.text)
    if status:
        query["status"] = status
    media, _ = c.numbers("media")
    if media:
        query["media_id"] = media[0]
    limit = limit_in(c.text)
    if limit:
        query["limit"] = limit
    score = _MIN_SCORE.search(c.text)
    if score:
        query["min_score"] = min(100, int(score.group(1)))
    return [PlannedAction("list_revival_candidates", query)]


def _export(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["export"], c.text):
        return None
    fmt = export_format_in(c.text)
    if fmt is None:
        fmt = DEFAULT_EXPORT_FORMAT
        c.notes.append(Note("default_format", {"format": fmt}))
    return _each(c, "article", "export_article", format=fmt)


_WITHOUT_ARTICLE = re.compile(rf"\b(?:{either('without_article')})")


def _analyse(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["analyse"], c.text):
        return None
    if _has(ASK["results"], c.text) and not _has(ASK["run"], c.text):
        return _each(c, "video", "get_video_graph")
    options: dict[str, Any] = {}
    outputs: dict[str, bool] = {}
    if _has(ASK["chapters"], c.text):
        outputs["chapters"] = True
    if _has(ASK["transcript"], c.text):
        outputs["transcript"] = True
    if _WITHOUT_ARTICLE.search(c.text):
        outputs["article"] = False
    if outputs:
        options["outputs"] = outputs
    style = style_in(c.text)
    if style:
        options["writing_style"] = style
    if _has(ASK["behavioral"], c.text):
        options["analysis_mode"] = "behavioral"
    if _has(ASK["premium"], c.text):
        options["quality_profile"] = "premium"
    language = language_in(c.text)
    if language:
        options["language"] = language
    return _each(c, "video", "analyze_video", **options)


def _scores(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["scores"], c.text):
        return None
    return _each(c, "article", "get_article_scores")


def _graph(c: _Clause) -> list[PlannedAction] | None:
    if not _has(ASK["graph"], c.text):
        return None
    videos, _ = c.numbers("video")
    if videos or (_has(KIND_WORDS["video"], c.text) and not _has(KIND_WORDS["article"], c.text)):
        return _each(c, "video", "get_video_graph")
    return _each(c, "article", "get_article_graph")


# The reads of a video's analysis, by the words that ask for them (a tie goes to the first).
_VIDEO_READS = tuple(merged("video_reads").items())


def _video_reads(c: _Clause) -> list[PlannedAction] | None:
    found = sorted((m.start(), name) for name, words in _VIDEO_READS if (m := _has(words, c.text)))
    if not found:
        return None
    ids = c.ids("video", found[0][1])
    c.remember(video_id=ids[-1] if ids else None)
    return [PlannedAction(name, {"id": i}) for i in ids for _, name in found]


def _medias(c: _Clause) -> list[PlannedAction] | None:
    if not _has(rf"(?:{KIND_WORDS['media']})\b", c.text):
        return None
    if _has(ASK["create"], c.text):
        name = name_after(c.text, c.original, ASK["named"])
        if not name:
            c.notes.append(Note("missing_name", {"action": "create_media"}))
            return []
        return [PlannedAction("create_media", {"name": name})]
    return [PlannedAction("list_medias", {})]


def _jobs(c: _Clause) -> list[PlannedAction] | None:
    ids = uuids(c.text)
    if ids:
        c.remember(job_id=ids[-1])
        return [PlannedAction("get_job", {"id": i}) for i in ids]
    if not _has(KIND_WORDS["job"], c.text):
        return None
    if _has(rf"(?:{THIS}|{ASK['status']})\b", c.text) and c.context.job_id:
        return [PlannedAction("get_job", {"id": c.context.job_id})]
    limit = limit_in(c.text)
    return [PlannedAction("list_jobs", {"limit": limit} if limit else {})]


def _listing(kind: str, list_name: str, get_name: str) -> Callable[[_Clause], list[PlannedAction] | None]:
    def rule(c: _Clause) -> list[PlannedAction] | None:
        if not _has(rf"(?:{KIND_WORDS[kind]})\b", c.text):
            return None
        ids, cut = c.numbers(kind)
        if cut:
            c.notes.append(Note("range_cut", {"kind": kind, "max": RANGE_MAX}))
        if ids:
            c.remember(**{f"{kind}_id": ids[-1]})
            return [PlannedAction(get_name, {"id": i}) for i in ids]
        singular = re.search(rf"\b(?:{THIS})\s+(?:{KIND_WORDS[kind]})\b", c.text)
        last = getattr(c.context, f"{kind}_id")
        if singular and last is not None:
            return [PlannedAction(get_name, {"id": last})]
        limit = limit_in(c.text)
        return [PlannedAction(list_name, {"limit": limit} if limit else {})]

    return rule


# In order: the first rule that applies reads the clause (a change before a read, the specific
# before the general). Account reads are found beside it (``_account``).
_RULES = (_cancel, _translate, _regenerate, _rename_or_attach, _descriptions, _detect, _render, _clip_job, _cut,
          _export, _analyse, _templates, _candidates, _scores, _graph, _video_reads, _medias, _jobs,
          _listing("article", "list_articles", "get_article"), _listing("video", "list_videos", "get_video"))

# The account reads, by the words that ask for them; a clause may ask for them beside its main request.
_ACCOUNT = tuple(merged("account").items())


def _account(c: _Clause) -> list[tuple[int, PlannedAction]]:
    found: list[tuple[int, PlannedAction]] = []
    for name, words in _ACCOUNT:
        match = _has(rf"(?:{words})\b", c.text)
        if match and not (name == "get_usage" and any(a.name == "get_usage_llm" for _, a in found)):
            found.append((match.start(), PlannedAction(name, {})))
    return found


_HELP = re.compile(rf"^\W*(?:{either('help')})\W*$")


def read_clause(folded: str, original: str, context: Context) -> tuple[list[PlannedAction], Context, list[Note]]:
    """The actions one clause asks for, in the order it names them, the context after it, and its
    notes. The first rule that applies reads the clause; account reads ("balance", "alerts") are
    found beside it ("my balance and my last videos")."""
    c = _Clause(folded, original, context)
    main: list[PlannedAction] = []
    for rule in _RULES:
        found = rule(c)
        if found is not None:
            main = found
            break
    at = _first_object_at(folded)
    ordered = sorted([*_account(c), *((at, a) for a in main)], key=lambda pair: pair[0])
    return [a for _, a in ordered], c.context, c.notes


_OBJECT = re.compile(r"\b(?:" + "|".join([*KIND_WORDS.values(), *(ASK[name] for name in (
    "candidates", "analyse", "export", "cancel", "translate", "regenerate", "descriptions"))]) + r"|[0-9a-f]{8}-)")


def _first_object_at(folded: str) -> int:
    """Where the clause's main request starts: the first word that names an object or a change."""
    match = _OBJECT.search(folded)
    return match.start() if match else len(folded)


def plan(message: str, context: Context | None = None) -> Plan:
    """The plan of ``message`` (see the module's text)."""
    text = message.strip()
    folded = fold(text)
    context = context or Context()
    actions: list[PlannedAction] = []
    notes: list[Note] = []
    not_understood: list[str] = []
    asked_help = False
    for start, end in clauses(folded):
        clause, original = folded[start:end].strip(), text[start:end].strip()
        if _HELP.match(clause):
            asked_help = True
            continue
        found, context, clause_notes = read_clause(folded[start:end], text[start:end], context)
        actions.extend(found)
        notes.extend(n for n in clause_notes if n not in notes)
        if not found and not clause_notes:
            not_understood.append(original)
    language = detect_language(folded + " " + text.lower())
    return Plan(language, tuple(actions), tuple(not_understood), asked_help or not (actions or notes),
                tuple(notes))


def _clock(ms: int) -> str:
    seconds = ms // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"
