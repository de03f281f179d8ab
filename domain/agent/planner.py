"""The offline planner: a person's message, in English or French, to the API operations it asks for.

Deterministic and model-free: the same message and context always give the same plan. It reads
the message clause by clause (clauses end at a sentence's end, a line break, a semicolon or a
word of sequence such as "then", "puis", "ensuite"; "and", "et" or a comma start a new clause when
a verb follows), finds in each clause what is asked (a kind of request, found by its words) and
what it is about (ids after the name of their kind: "video 12", "vidéos 3, 4 et 7", "articles 2 to
5"; a job's uuid; a format, a language, a time range, options), and emits one action per object
("videos 3, 4 and 7": three actions). A clause that names no id where one is needed takes the last
one of its kind from earlier in the message or the conversation ("export it as markdown").

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from domain.agent.policy import fold
from domain.exports import ASSISTANT_DEFAULT_FORMAT, EXPORT_FORMATS
from domain.languages import CODES, assistant_words, table

RANGE_MAX = 100  # ids one range may name ("videos 1 to 100"); a larger range is cut here, with a note
LIST_LIMIT_MAX = 100  # the page size the list operations accept
PLATFORMS = ("videosite_long", "videosite_shorts", "professional_network_long", "social_network_a_video",
             "social_network_a_reels", "social_network_b_reels", "short_video_app", "microblog_video",
             "pinboard_site", "blog_embed")
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
    language: str  # "en" or "fr": the language of the reply
    actions: tuple[PlannedAction, ...]
    not_understood: tuple[str, ...] = ()  # clauses it could not read, as written
    asked_help: bool = False
    notes: tuple[Note, ...] = ()

    @property
    def understood(self) -> bool:
        return bool(self.actions or self.notes)


# ------------------------------------------------------------------------------------ language

def detect_language(folded: str) -> str:
    """French when more of the message's words are French markers than English ones (ids and
    numbers, whose letters say nothing, are left out)."""
    words = re.findall(r"[a-z]+", _UUID.sub(" ", folded))
    french_markers, english_markers = assistant_words("fr").markers, assistant_words("en").markers
    french = sum(w in french_markers for w in words) + 2 * len(re.findall(r"[àâçéèêëîïôûùüÿœ]", folded))
    english = sum(w in english_markers for w in words)
    return "fr" if french > english else "en"


def detect_language_of(message: str) -> str:
    return detect_language(fold(message) + " " + message.lower())


# ------------------------------------------------------------------------------------ clauses

_VERBS = (r"show|list|give|get|tell|display|check|see|view|fetch|read|open|analy[sz]e|export|cancel|detect|render|"
          r"translate|regenerate|rename|attach|cut|extract|create|complete|find|what|which|how|download|track|"
          r"montre|montrer|affiche|afficher|liste|lister|donne|donner|lance|lancer|analyser|analysez|exporte|exporter|"
          r"annule|annuler|detecte|detecter|rends|rendre|traduis|traduire|regenere|regenerer|renomme|renommer|"
          r"rattache|coupe|couper|decoupe|decouper|extrais|extraire|cree|creer|complete|completer|trouve|trouver|"
          r"quel|quelle|quels|quelles|combien|ouvre|lis|voir|telecharge|telecharger|suis")
_STRONG = re.compile(r"\n+|;|[.!?](?=\s|$)|,?\s*\b(?:and then|then|after that|afterwards|finally|"
                     r"et ensuite|ensuite|et puis|puis|apres ca|apres cela|apres quoi|enfin)\b")
_WEAK = re.compile(rf"(?:,|\band\b|\bet\b|&|\balso\b|\baussi\b)\s*(?=(?:please\s+|stp\s+)?(?:{_VERBS})\b)")
_JOINED_OBJECT = re.compile(r"(?:,|\band\b|\bet\b|&)\s*(?=(?:the |my |la |le |l'|les |mes |mon |ma )?"
                            r"(videos?|articles?|jobs?|medias?|templates?|modeles?)\b)")


def clauses(folded: str) -> list[tuple[int, int]]:
    """Spans of the clauses of a folded message (see the module's text)."""
    spans = []
    start = 0
    for cut in _STRONG.finditer(folded):
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(folded)))
    out = []
    for a, b in spans:
        part_start = a
        cuts = sorted([(m.start(), m.end(), None) for m in _WEAK.finditer(folded, a, b)]
                      + [(m.start(), m.end(), m.group(1)) for m in _JOINED_OBJECT.finditer(folded, a, b)])
        for start, end, noun in cuts:
            if start < part_start:
                continue
            # "video 3 and article 5" is two requests; "video 3 and video 4" one enumeration.
            if noun is not None and re.search(rf"\b{noun.rstrip('s')}s?\b", folded[part_start:start]):
                continue
            out.append((part_start, start))
            part_start = end
        out.append((part_start, b))
    return [(a, b) for a, b in out if folded[a:b].strip(" ,.:;!?-")]


# ------------------------------------------------------------------------------------ entities

_NUM = r"\d{1,10}(?![\d:])"
_JOIN = r"(?:,|&|\+|/|\band\b|\bet\b|\bor\b|\bou\b|\bto\b|\bthrough\b|\bthru\b|\ba\b|\bjusqu'a\b|-)"
_NUM_LIST = rf"{_NUM}(?:\s*{_JOIN}\s*{_NUM})*"
_RANGE_WORDS = {"to", "through", "thru", "a", "jusqu'a", "-"}
_KIND_WORDS = {
    "video": r"videos?",
    "article": r"articles?",
    "job": r"jobs?|taches?|travaux|traitements?",
    "media": r"medias?",
    "template": r"templates?|modeles?|gabarits?",
    "clip": r"clips?",
}
_NUMBERED = r"\s*(?:n[o°]\.?\s*|#\s*|numbers?\s*|numeros?\s*|ids?\s*|nr\.?\s*)?"
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_TOKEN_AFTER_JOB = re.compile(r"\bjob\s+(?:id\s+)?([a-z0-9][a-z0-9_-]{15,159})\b")


@cache
def _ids_after(kind: str) -> re.Pattern:
    return re.compile(rf"\b(?:{_KIND_WORDS[kind]}){_NUMBERED}({_NUM_LIST})")


def numbers_after(kind: str, clause: str) -> tuple[list[int], bool]:
    """The ids written after the name of ``kind`` ("videos 3, 4 and 7", "articles 2 to 5"), in
    order, each once; and whether a range was cut at ``RANGE_MAX``."""
    out: list[int] = []
    cut = False
    for match in _ids_after(kind).finditer(clause):
        tokens = re.findall(rf"{_NUM}|{_JOIN}", match.group(1))
        previous: int | None = None
        in_range = False
        for token in tokens:
            if token.isdigit():
                value = int(token)
                if in_range and previous is not None and value >= previous:
                    last = min(value, previous + RANGE_MAX - 1)
                    cut = cut or last < value
                    out.extend(range(previous + 1, last + 1))
                else:
                    out.append(value)
                previous, in_range = value, False
            else:
                in_range = token.strip() in _RANGE_WORDS
    return list(dict.fromkeys(v for v in out if 1 <= v <= 2_147_483_647)), cut


def uuids(clause: str) -> list[str]:
    return list(dict.fromkeys(_UUID.findall(clause)))


def job_token(clause: str, original: str) -> str | None:
    """A clip job's id: a uuid, or the token after "job" (16 to 160 characters), as written."""
    found = uuids(clause)
    if found:
        return found[0]
    match = _TOKEN_AFTER_JOB.search(clause)
    return original[match.start(1):match.end(1)] if match else None


_LANGUAGES = table("called")  # how a message names a language (domain.languages)


def language_in(clause: str) -> str | None:
    for code, words in _LANGUAGES.items():
        if re.search(rf"\b(?:{words})\b", clause):
            return code
    match = re.search(rf"\b(?:language|langue|lang|target|cible|code)\s*[:=]?\s*({'|'.join(CODES)})\b", clause)
    return match.group(1) if match else None


_STYLES = {"journalistic": r"journalisti\w*", "narrative": r"narrati\w*", "analytical": r"analytic\w*|analytique",
           "tutorial": r"tutori\w*", "conversational": r"conversation\w*",
           "documentary": r"documentar\w*|documentaire", "interview": r"interview\w*|entretien"}


def style_in(clause: str, allowed: Sequence[str] = tuple(_STYLES)) -> str | None:
    for style in allowed:
        if re.search(rf"\b(?:{_STYLES[style]})\b", clause):
            return style
    return None


# The export formats' words (domain.exports), tried in their rank: a name holding another first.
_FORMATS = tuple((f.name, "|".join(map(re.escape, f.assistant_words)))
                 for f in sorted(EXPORT_FORMATS.values(), key=lambda f: f.assistant_rank))


def export_format_in(clause: str) -> str | None:
    for name, words in _FORMATS:
        if re.search(rf"\b(?:{words})\b", clause):
            return name
    return None


_TIME = (r"(?:\d{1,2}:)?\d{1,2}:\d{2}(?:\.\d{1,3})?"
         r"|\d+(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds?|secondes?|min|mins|minutes?)\b")


def to_ms(text: str) -> int:
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        seconds = float(parts[-1]) + 60 * int(parts[-2]) + (3600 * int(parts[-3]) if len(parts) == 3 else 0)
        return round(seconds * 1000)
    value, unit = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text).groups()
    factor = 1 if unit == "ms" else 60_000 if unit.startswith("min") else 1000
    return round(float(value) * factor)


def time_range_in(clause: str) -> tuple[int, int] | None:
    match = (re.search(rf"\b(?:from|de|du|between|entre)\s+({_TIME})\s*(?:to|a|and|et|until|jusqu'a|-)\s*({_TIME})",
                       clause)
             or re.search(rf"({_TIME})\s*(?:-|to|a)\s*({_TIME})", clause))
    if not match:
        return None
    return to_ms(match.group(1)), to_ms(match.group(2))


def limit_in(clause: str) -> int | None:
    match = (re.search(r"\b(?:last|latest|recent|most recent|derni\w*|top|first|premi\w*|limit|limite)\s+(\d{1,4})\b",
                       clause)
             or re.search(r"\b(\d{1,4})\s+(?:last|latest|derni\w*|recent\w*|premi\w*)\b", clause)
             or re.search(r"\b(\d{1,4})\s+(?:videos?|jobs?|articles?|candidat\w*|taches?|medias?)\b", clause))
    if not match:
        return None
    return max(1, min(LIST_LIMIT_MAX, int(match.group(1))))


_CANDIDATE_STATUS = {"eligible": r"eligib\w*", "reviewing": r"review\w*|en revue|a revoir|en cours de revue",
                     "selected": r"selected|selectionn\w*", "dismissed": r"dismiss\w*|ecart\w*|rejet\w*",
                     "stale": r"stale|perime\w*|obsolete\w*"}


def candidate_status_in(clause: str) -> str | None:
    for status, words in _CANDIDATE_STATUS.items():
        if re.search(rf"\b(?:{words})\b", clause):
            return status
    return None


_PLATFORM_ALIASES = (("videosite_shorts", r"videosite[ _]shorts|shorts"),
                     ("videosite_long", r"videosite[ _]long|videosite|video site|long videos?"),
                     ("professional_network_long", r"professional[ _]network(?:[ _]long)?|reseau professionnel"),
                     ("social_network_a_video", r"social[ _]network[ _]a[ _]video"),
                     ("social_network_a_reels", r"social[ _]network[ _]a[ _]reels"),
                     ("social_network_b_reels", r"social[ _]network[ _]b(?:[ _]reels)?"),
                     ("short_video_app", r"short[ _]video[ _]app|application de videos courtes"),
                     ("microblog_video", r"microblog(?:[ _]video)?"),
                     ("pinboard_site", r"pinboard(?:[ _]site)?"),
                     ("blog_embed", r"blog(?:[ _]embed)?"))


def platforms_in(clause: str) -> list[str]:
    if re.search(r"\b(?:all|every|toutes?|chaque)\s+(?:the\s+|les\s+)?(?:platforms?|plateformes?)\b", clause):
        return list(PLATFORMS)
    found = []
    rest = clause
    for platform, words in _PLATFORM_ALIASES:
        match = re.search(rf"\b(?:{words})\b", rest)
        if match:
            found.append((match.start(), platform))
            rest = rest[:match.start()] + " " * (match.end() - match.start()) + rest[match.end():]
    return [p for _, p in sorted(found)]


def quoted(original: str) -> str | None:
    match = re.search(r"[\"“«]\s*([^\"“«»”]+?)\s*[\"”»]", original)
    if match:
        return match.group(1).strip()
    return None


def name_after(clause: str, original: str, words: str) -> str | None:
    """A name given in quotes, else the text after one of ``words`` to the end of the clause."""
    name = quoted(original)
    if name:
        return name
    match = re.search(rf"\b(?:{words})\s+(.+)$", clause)
    if match:
        return original[match.start(1):match.end(1)].strip(" .,;:!?\"'") or None
    return None


# ------------------------------------------------------------------------------------ the rules


@cache
def _word_start(pattern: str) -> re.Pattern:
    """``pattern`` at the start of a word, compiled once (every rule tries its words on every clause)."""
    return re.compile(rf"\b(?:{pattern})")


def _has(pattern: str, clause: str) -> re.Match | None:
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
    if not _has(r"cancel\w*|annul\w*|stop\w*|arret\w*|interromp\w*|abort\w*", c.text):
        return None
    ids = uuids(c.text)
    if not ids and c.context.job_id:
        ids = [c.context.job_id]
    if not ids:
        c.notes.append(Note("missing_id", {"kind": "job", "action": "cancel_job"}))
    c.remember(job_id=ids[-1] if ids else None)
    return [PlannedAction("cancel_job", {"id": i}) for i in ids]


def _translate(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"translat\w*|tradu\w*", c.text):
        return None
    # "the translations of article 5" (the noun, no verb asking for one) reads those already asked.
    if _has(r"translations\b|traductions\b", c.text) and not _has(r"translate\b|tradui\w*|traduis\b", c.text):
        return _each(c, "article", "list_article_translations")
    language = language_in(c.text)
    if language is None:
        c.notes.append(Note("missing_language", {"action": "translate_article"}))
        return []
    return _each(c, "article", "translate_article", target_language=language)


def _regenerate(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"regenerat\w*|regener\w*|rewrit\w*|reecri\w*", c.text):
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
    if _has(r"renam\w*|renomm\w*|retitl\w*", c.text):
        name = name_after(c.text, c.original, r"to|as|en|comme|into")
        if not name:
            c.notes.append(Note("missing_name", {"action": "update_article"}))
            return []
        ids = c.ids("article", "update_article")[:1]
        c.remember(article_id=ids[0] if ids else None)
        return [PlannedAction("update_article", {"id": i, "custom_name": name}) for i in ids]
    if _has(r"attach\w*|rattach\w*", c.text) and _has(r"articles?", c.text):
        media, _ = c.numbers("media")
        if not media:
            c.notes.append(Note("missing_id", {"kind": "media", "action": "update_article"}))
            return []
        ids = c.ids("article", "update_article")[:1]
        return [PlannedAction("update_article", {"id": i, "media_id": media[0]}) for i in ids]
    return None


def _descriptions(c: _Clause) -> list[PlannedAction] | None:
    if not (_has(r"descriptions?", c.text)
            and _has(r"complet\w*|writ\w*|redig\w*|ecri\w*|fill\w*|rempli\w*|generat\w*|gener\w*|draft\w*", c.text)):
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


def _template_options(c: _Clause) -> dict[str, Any]:
    options: dict[str, Any] = {}
    templates, _ = c.numbers("template")
    if templates:
        options["template_id"] = templates[0]
    duration = re.search(r"\b(\d{1,3})\s*(?:s|sec|secs|seconds?|secondes?)\b", c.text)
    if duration:
        options["target_duration_seconds"] = int(duration.group(1))
    return options


def _detect(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"clips?|extraits?|moments?", c.text):
        return None
    detect = _has(r"detect\w*|find\w*|trouv\w*|suggest\w*|propos\w*|repere\w*|identif\w*", c.text)
    # "generate clips for article 4" asks for clips from scratch: a detection (a render needs
    # clips already chosen: a clip job or a time range).
    generate = (_has(r"generat\w*|gener\w*|make|fais|faire|cree\w*|creat\w*", c.text) and _has(r"articles?", c.text)
                and job_token(c.text, c.original) is None and time_range_in(c.text) is None)
    if not (detect or generate):
        return None
    body = _template_options(c)
    count = re.search(r"\b(\d{1,2})\s+(?:clips?|extraits?|moments?)\b", c.text)
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
    if not (_has(r"clips?|extraits?", c.text) and _has(r"render\w*|rend\w*|produc\w*|produi\w*|generat\w*|gener\w*",
                                                      c.text)):
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
    if not (_has(r"clips?", c.text) and _has(r"jobs?|suivi|track\w*|status|statut|etat|progress\w*", c.text)):
        return None
    job = job_token(c.text, c.original)
    if job is None:
        return None
    c.remember(clip_job_id=job)
    return [PlannedAction("get_clip_job", {"jobId": job})]


def _cut(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"clip\w*|cut\w*|coup\w*|decoup\w*|extrai\w*|extract\w*|trim\w*", c.text):
        return None
    window = time_range_in(c.text)
    videos, _ = c.numbers("video")
    if window is None:
        if videos and _has(r"cut\w*|coup\w*|decoup\w*|extrai\w*|extract\w*|trim\w*", c.text):
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
    if not _has(r"templates?|modeles?|gabarits?", c.text):
        return None
    return [PlannedAction("list_templates", {})]


def _candidates(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"candidat\w*|revival|reviv\w*|relanc\w*|a relancer", c.text):
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
    score = re.search(r"\bscores?\s*(?:>=|>|above|over|at least|au moins|superieur a|de plus de)\s*(\d{1,3})\b", c.text)
    if score:
        query["min_score"] = min(100, int(score.group(1)))
    return [PlannedAction("list_revival_candidates", query)]


def _export(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"export\w*|download\w*|telecharg\w*", c.text):
        return None
    fmt = export_format_in(c.text)
    if fmt is None:
        fmt = DEFAULT_EXPORT_FORMAT
        c.notes.append(Note("default_format", {"format": fmt}))
    return _each(c, "article", "export_article", format=fmt)


def _analyse(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"analy[sz]\w*", c.text):
        return None
    if _has(r"results?|resultats?|de l'analyse|of the analysis|the analysis of", c.text) and not _has(
            r"analy[sz]e\b|analyser|analysez|run|lance|start|demarre", c.text):
        return _each(c, "video", "get_video_graph")
    options: dict[str, Any] = {}
    outputs: dict[str, bool] = {}
    if _has(r"chapit\w*|chapter\w*", c.text):
        outputs["chapters"] = True
    if _has(r"transcri\w*", c.text):
        outputs["transcript"] = True
    if re.search(r"\b(?:sans|without|no|pas d')\s*(?:l'|an |un |d')?article", c.text):
        outputs["article"] = False
    if outputs:
        options["outputs"] = outputs
    style = style_in(c.text)
    if style:
        options["writing_style"] = style
    if _has(r"behavio\w*|comportement\w*", c.text):
        options["analysis_mode"] = "behavioral"
    if _has(r"premium|haute qualite|high quality|meilleure qualite|best quality", c.text):
        options["quality_profile"] = "premium"
    language = language_in(c.text)
    if language:
        options["language"] = language
    return _each(c, "video", "analyze_video", **options)


def _scores(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"scores?\b|notes?\b|scoring|aeo\b|geo\b", c.text):
        return None
    return _each(c, "article", "get_article_scores")


def _graph(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"graph\w*|graphe\w*", c.text):
        return None
    videos, _ = c.numbers("video")
    if videos or (_has(r"videos?", c.text) and not _has(r"articles?", c.text)):
        return _each(c, "video", "get_video_graph")
    return _each(c, "article", "get_article_graph")


_VIDEO_READS = (("get_claims", r"claims?|affirmations?|faits?|facts?|assertions?"),
                ("get_entities", r"entit\w*"),
                ("get_intents", r"intents?|intentions?|requetes?|queries|questions?"),
                ("get_moments", r"moments?|highlights?|temps forts"),
                ("get_topics", r"topics?|themes?|sujets?"),
                ("get_narrative", r"narrati\w*|structure|chapters?|chapitres?"),
                ("get_visual_elements", r"visual\w*|visuels?|shots?|scenes?|plans de camera|prises? de vue|gestures?|"
                 r"gestes?|gaze|regard\w*|posture|body language|langage corporel|facial expressions?|expressions?|"
                 r"look\w* at the camera|eye contact|smil\w*|sourit|sourire\w*|hands?|mains?|behaviou?r\w*|"
                 r"comportement\w*|proxemics|proxemie|laterality|lateralite"),
                ("get_audio_elements", r"audio|sonores?|silences?|loudness|volume"))


def _video_reads(c: _Clause) -> list[PlannedAction] | None:
    found = sorted((m.start(), name) for name, words in _VIDEO_READS if (m := _has(words, c.text)))
    if not found:
        return None
    ids = c.ids("video", found[0][1])
    c.remember(video_id=ids[-1] if ids else None)
    return [PlannedAction(name, {"id": i}) for i in ids for _, name in found]


def _medias(c: _Clause) -> list[PlannedAction] | None:
    if not _has(r"medias?\b", c.text):
        return None
    if _has(r"creat\w*|cre[ea]\w*|new\b|nouve\w*|add\b|ajout\w*", c.text):
        name = name_after(c.text, c.original, r"named|called|nomme\w*|appele\w*|intitule\w*")
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
    if not _has(r"jobs?|taches?|travaux|traitements?", c.text):
        return None
    if _has(r"\bits\b|\bthis\b|\bthat\b|\bce\b|\bcette\b|\bsame\b|\bstatus\b|\betat\b", c.text) and c.context.job_id:
        return [PlannedAction("get_job", {"id": c.context.job_id})]
    limit = limit_in(c.text)
    return [PlannedAction("list_jobs", {"limit": limit} if limit else {})]


def _listing(kind: str, list_name: str, get_name: str):
    def rule(c: _Clause) -> list[PlannedAction] | None:
        if not _has(_KIND_WORDS[kind] + r"\b", c.text):
            return None
        ids, cut = c.numbers(kind)
        if cut:
            c.notes.append(Note("range_cut", {"kind": kind, "max": RANGE_MAX}))
        if ids:
            c.remember(**{f"{kind}_id": ids[-1]})
            return [PlannedAction(get_name, {"id": i}) for i in ids]
        singular = re.search(rf"\b(?:this|that|the same|it|cette|ce|cet|la meme|le meme)\s+(?:{_KIND_WORDS[kind]})\b",
                             c.text)
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

_ACCOUNT = (("get_usage_llm", r"llm|tokens?|language models?|modeles? de langue"),
            ("get_credits", r"balance|solde|credits?|credit"),
            ("get_usage", r"usage|utilisation|consommation|consumption|api calls?|appels?|spen[dt]|depense\w*|"
                          r"consumed|consomme\w*"),
            ("get_monitoring_alerts", r"alerts?|alertes?|warnings?|avertissements?"),
            ("get_monitoring", r"monitoring|surveillance|health|sante|dashboard|tableau de bord"),
            ("get_me", r"who am i|qui suis-je|qui suis je|my workspace|mon espace|my plan|mon offre|mon plan|"
                       r"my key|ma cle|my scopes|mes scopes|whoami"))


def _account(c: _Clause) -> list[tuple[int, PlannedAction]]:
    found = []
    for name, words in _ACCOUNT:
        match = _has(words + r"\b", c.text)
        if match and not (name == "get_usage" and any(a.name == "get_usage_llm" for _, a in found)):
            found.append((match.start(), PlannedAction(name, {})))
    return found


_HELP = re.compile(r"^\W*(?:help|aide|\?|hi|hello|hey|bonjour|salut|merci|thanks?|thank you|"
                   r"what can you do|que (?:peux|sais)-?tu faire|qu'est-ce que tu (?:peux|sais) faire|"
                   r"what do you do|tu fais quoi|commands?|commandes?)\W*$")


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


def _first_object_at(folded: str) -> int:
    """Where the clause's main request starts: the first word that names an object or a change."""
    match = re.search(r"\b(?:videos?|articles?|jobs?|taches?|medias?|clips?|templates?|modeles?|candidat\w*|"
                      r"analy[sz]\w*|export\w*|cancel\w*|annul\w*|tradu\w*|translat\w*|regener\w*|descriptions?|"
                      r"[0-9a-f]{8}-)", folded)
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


# ------------------------------------------------------------------------------------ context


_ID_KINDS = {"video": ("get_video", "analyze_video", "get_claims", "get_entities", "get_intents", "get_moments",
                       "get_topics", "get_narrative", "get_visual_elements", "get_audio_elements", "get_video_graph",
                       "create_video_clip"),
             "article": ("get_article", "get_article_scores", "get_article_graph", "export_article",
                         "translate_article", "regenerate_article", "update_article", "list_article_translations"),
             "job": ("get_job", "cancel_job")}


def context_from(actions: Sequence[tuple[str, dict, str, dict | None]]) -> Context:
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
    English sentence, ``text(fr=True)`` the French."""

    def __init__(self, reason: str, **values: Any) -> None:
        self.reason, self.values = reason, values
        super().__init__(self.text(fr=False))

    def text(self, fr: bool) -> str:
        return unresolved_text(self.reason, self.values, fr)


def unresolved_text(reason: str, values: dict[str, Any], fr: bool) -> str:
    sentence = assistant_words("fr" if fr else "en").unresolved.get(reason, "{reason}")
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
