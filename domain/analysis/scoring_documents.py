"""What the scoring rubric (``domain.analysis.scoring``) reads: a ``Document``, made from one of two
kinds of text. An article (``document_from_article``) is read from its structured content and the
Content Graph of its analysis, both as stored (plain dicts); a transcript
(``document_from_transcript``) as the text the video says: its sentences, its claims as facts,
its questions and the answers that follow.

Here too are the readings of a sentence that both the documents and the criteria make: its
splitting, whether it asks a question, whether it answers one directly, a quotation shown with
its speaker, and the key texts are matched by (``key``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.text import content_tokens, words

EVIDENCE_CHARS = 300

# A sentence that names where its statement comes from.
SOURCE_RE = re.compile(
    r"\b(?:selon|d['’]après|source\s*:|sources\s*:|cité par|rapporte|a publié|publié (?:par|dans)|"
    r"according to|as reported by|reported by|published (?:by|in)|cited by|sources?:|"
    r"laut|gemäß|zufolge|quelle\s*:|según|de acuerdo con|fuente\s*:|secondo|stando a|fonte\s*:|segundo|"
    r"de acordo com|volgens|bron\s*:)\s+([^.;:!?]{2,80})",
    re.IGNORECASE)

# A quotation shown as one, with who said it: «...», "...", “...” and a reporting verb or a name.
QUOTED_RE = re.compile(r"[«“\"]\s*([^«»“”\"]{12,400}?)\s*[»”\"]")

REPORTING_RE = re.compile(
    r"\b(?:dit|déclare|a déclaré|explique|a expliqué|affirme|souligne|précise|estime|rappelle|ajoute|"
    r"says|said|explains|explained|states|stated|notes|noted|adds|added|argues|told|"
    r"sagt|sagte|erklärt|betont|dice|dijo|explica|afirma|afferma|spiega|diz|disse|explica|zegt|zei|verklaart)\b",
    re.IGNORECASE)

QUESTION_START_RE = re.compile(
    r"^(?:comment|pourquoi|quand|où|qui|quel(?:le)?s?|combien|qu['’]est-ce|est-ce|faut-il|peut-on|"
    r"how|what|why|when|where|who|which|can|should|is|are|does|do|"
    r"wie|was|warum|wann|wo|wer|welche[rsn]?|cómo|qué|por qué|cuándo|dónde|quién|cuál|"
    r"come|cosa|che cosa|perché|quando|dove|chi|quale|como|o que|porque|porquê|onde|quem|qual|"
    r"hoe|wat|waarom|wanneer|waar|wie|welke)\b",
    re.IGNORECASE)

_SPLIT_RE = re.compile(r"(?<=[.!?…])[\"”»)]*\s+(?=[\"“«(¿¡]?[A-ZÀ-ÝĀ-Ž0-9])")

_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")

_NON_WORD_RE = re.compile(r"[\W_]+")


def fold_key(text: str) -> str:
    """Accent-free lowercase words with single spaces, for matching texts against each other (what
    ``text.fold`` gives, with the diacritics removed by one regular expression: an article's whole
    text is folded at each scoring, and a character-by-character pass cost most of it)."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    return " ".join(_NON_WORD_RE.sub(" ", _COMBINING_RE.sub("", decomposed)).split())


@dataclass(slots=True)
class Said:
    """One sentence of the text and, when the text shows it, who said it."""

    text: str
    speaker: str | None = None


@dataclass(slots=True)
class Answered:
    """A question the text asks as a heading, and the first sentence under it."""

    question: str
    first: str
    where: str  # faq, section, video


@dataclass(slots=True)
class Document:
    """What the rubric reads: the text, its structure, and what the analysis found in the video."""

    title: str
    sentences: list[Said]
    quotations: list[Said]
    answered: list[Answered]
    openers: list[str]
    faq_count: int
    key_facts: list[dict[str, Any]]
    moments: int  # chapters or sections with a time in the video (key moments)
    has_video: bool
    claims: list[dict[str, Any]]
    entities: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    intents: list[dict[str, Any]]
    tokens: list[list[str]] = field(init=False)  # each sentence's meaningful words, counted by several criteria

    def __post_init__(self) -> None:
        self.tokens = [content_tokens(s.text) for s in self.sentences]


def shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS - 1] + "…"


def split_text(text: str) -> list[str]:
    """Sentences of a paragraph (provider and translated articles keep whole paragraphs)."""
    return [s.strip() for s in _SPLIT_RE.split(" ".join((text or "").split())) if s.strip()]


def is_question(text: str) -> bool:
    stripped = text.strip().rstrip("\"”»)").strip()
    return stripped.endswith("?") or bool(QUESTION_START_RE.match(stripped) and stripped.endswith("?"))


def is_named(name: str | None) -> bool:
    return name is not None and name.strip().lower() not in ("unknown", "inconnu", "speaker", "")


def unique(items: Iterable[Said]) -> list[Said]:
    seen, out = set(), []
    for item in items:
        key = fold_key(item.text)
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _graph_parts(graph: dict[str, Any]) -> dict[str, Any]:
    speakers = graph.get("speakers") or {}
    return {"claims": list(graph.get("claims") or []), "entities": list(graph.get("entities") or []),
            "topics": list(graph.get("topics") or []), "intents": list(graph.get("searchIntents") or []),
            "diarised": bool(speakers.get("diarised")) if isinstance(speakers, dict) else False}


def document_from_article(article: dict[str, Any], graph: dict[str, Any]) -> Document:
    """An article's structured content (``Article.to_dict()`` as stored) with the graph it came from.

    Quotations are the paragraphs an export shows with their speaker (conversational and interview
    articles put the speaker before each paragraph) and any quoted passage with a reporting verb."""
    parts = _graph_parts(graph)
    style = article.get("writing_style")
    shows_speakers = style in ("conversational", "interview") and parts["diarised"]
    sentences: list[Said] = []
    quotations: list[Said] = []
    answered: list[Answered] = []
    openers: list[str] = []
    intro = split_text(article.get("introduction") or "")
    sentences += [Said(s) for s in intro]
    openers += intro[:1]
    for section in article.get("sections") or []:
        heading = section.get("heading") or ""
        first_of_section = None
        for paragraph in section.get("paragraphs") or []:
            texts = paragraph.get("sentences") or split_text(paragraph.get("text") or "")
            speaker = paragraph.get("speaker") if shows_speakers and is_named(paragraph.get("speaker")) else None
            sentences += [Said(t, speaker) for t in texts]
            if speaker and paragraph.get("role") != "question":
                statement = " ".join(texts)
                if len(words(statement)) >= 6 and not is_question(statement):
                    quotations.append(Said(statement, speaker))
            if first_of_section is None and texts and paragraph.get("role") != "question":
                first_of_section = texts[0]
        if first_of_section:
            openers.append(first_of_section)
            if is_question(heading):
                answered.append(Answered(heading, first_of_section, "section"))
    faq = [f for f in article.get("faq") or [] if (f.get("answer") or "").strip()]
    for entry in faq:
        answer = split_text(entry["answer"])
        sentences += [Said(s) for s in answer]
        if answer:
            openers.append(answer[0])
            answered.append(Answered(entry.get("question") or "", answer[0], "faq"))
    sentences += [Said(s) for s in split_text(article.get("conclusion") or "")]
    key_facts = list(article.get("key_facts") or [])
    sentences += [Said(f.get("text") or "") for f in key_facts]
    sentences = unique(sentences)
    quotations += _explicit_quotations(sentences)
    moments = sum(1 for s in article.get("sections") or [] if isinstance(s.get("startMs"), int))
    return Document(title=article.get("title") or "", sentences=sentences, quotations=unique(quotations),
                    answered=answered, openers=openers, faq_count=len(faq), key_facts=key_facts, moments=moments,
                    has_video=True, claims=parts["claims"], entities=parts["entities"], topics=parts["topics"],
                    intents=parts["intents"])


def document_from_transcript(sentences: Sequence[Any], graph: dict[str, Any], title: str = "") -> Document:
    """The video's own words: ``sentences`` (``text``, ``speaker``, ``is_question``, ``start_ms``)
    with its graph. Quotations are claims made by a named speaker; the questions asked in the
    video are its headings, answered by the next sentence that is not a question; the openers are
    each chapter's first sentence; the key facts are the five strongest claims."""
    parts = _graph_parts(graph)
    said = [Said(s.text, s.speaker if parts["diarised"] and is_named(s.speaker) else None) for s in sentences]
    # A claim's text is its sentence without the fillers it started with: matched as a suffix.
    claim_texts = [fold_key(c["text"]) for c in parts["claims"] if c.get("confidence", 0) >= 0.6]
    claim_texts = [t for t in claim_texts if t]
    quotations = [q for q in said
                  if q.speaker and (key := fold_key(q.text)) and any(key.endswith(t) for t in claim_texts)]
    answered = []
    for i, s in enumerate(sentences):
        if getattr(s, "is_question", False) and len(words(s.text)) >= 4:
            after = next((t for t in sentences[i + 1:i + 4] if not getattr(t, "is_question", False)), None)
            if after is not None:
                answered.append(Answered(s.text, after.text, "video"))
    chapters = list(graph.get("chapters") or [])
    openers = []
    for chapter in chapters:
        first = next((s.text for s in sentences if s.start_ms >= chapter.get("startMs", 0)
                      and not getattr(s, "is_question", False)), None)
        if first:
            openers.append(first)
    strongest = sorted(parts["claims"], key=lambda c: (-c.get("confidence", 0), c.get("startMs", 0)))[:5]
    key_facts = [{"text": c["text"], "startMs": c.get("startMs"), "claimId": c.get("id")} for c in strongest]
    return Document(title=title, sentences=unique(said), quotations=unique(quotations), answered=answered,
                    openers=openers, faq_count=sum(1 for a in answered if answers_directly(a)),
                    key_facts=key_facts, moments=len(chapters), has_video=True, claims=parts["claims"],
                    entities=parts["entities"], topics=parts["topics"], intents=parts["intents"])


def _explicit_quotations(sentences: Sequence[Said]) -> list[Said]:
    """Quoted passages attributed in their sentence (a reporting verb, or ``selon``/``according to``)."""
    out = []
    for s in sentences:
        for match in QUOTED_RE.finditer(s.text):
            if len(words(match.group(1))) >= 4 and (REPORTING_RE.search(s.text) or SOURCE_RE.search(s.text)):
                rest = (s.text[:match.start()] + " " + s.text[match.end():]).strip(" ,;:-–—")
                out.append(Said(match.group(1), shorten(rest) or None))
    return out


def takes_up(question: str, answer: str) -> bool:
    asked = set(content_tokens(question))
    return bool(asked & set(content_tokens(answer))) if asked else False


def answers_directly(a: Answered) -> bool:
    """The first sentence answers: a statement of 5-40 words that takes up the question's words."""
    return not is_question(a.first) and 5 <= len(words(a.first)) <= 40 and takes_up(a.question, a.first)
