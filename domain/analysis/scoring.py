"""The scoring rubric: a GEO score and an AEO score (0-100 each), every criterion with its evidence.

GEO asks "will a generative engine cite this?". Its criteria follow the levers that measurably
raise how often generative engines cite a source (Aggarwal et al., "GEO: Generative Engine
Optimization", KDD 2024: quotations, statistics and cited sources raise visibility by 30-40%,
fluency and technical terms by 15-30%, keyword stuffing lowers it):

======================  ======  =====================================================================
statistics                20    figures with their unit (%, €, km, years...), full credit with a date
quotations                15    statements shown with the speaker who made them
cited_sources             15    sentences naming their source ("selon ...", "according to ...")
fluency                   15    sentence length, fillers ("euh", "you know"), stutters, fragments
technical_terms           15    named organisations, places, products, people, acronyms, key phrases
citable_facts             20    key facts tied to a timestamped claim of the video, by confidence
keyword_stuffing         -25    penalty: one word taking more than 6% of the meaningful words
======================  ======  =====================================================================

AEO asks "does it answer common queries directly?", as answer engines pick answers:

======================  ======  =====================================================================
question_headings         25    question headings (FAQ, sections) whose first sentence answers them
concise_answers           20    openers (introduction, sections, answers) of 6-30 words, declarative
faq                       20    answered FAQ entries, target 3
structured_data           15    what the JSON-LD export can carry: headline, video, key moments, FAQ
definitions               10    definitional sentences ("X is a ..."), target 2
intents_answered          10    the top search intents of the video that the text answers
======================  ======  =====================================================================

Each criterion has a weight and a value 0-1 (points = weight x value) and reports what it counted
(``evidence``: the sentences, quotations, sources, headings, terms). Composite = 0.7 GEO + 0.3 AEO,
one decimal. GEO 70+ is "well structured for citation", AEO 75+ "answers common queries directly".

One rubric scores two kinds of text (``domain.analysis.scoring_documents`` reads each into a
``Document``). An article (``score_article``) is scored from its structured content and the
Content Graph of its analysis, both as stored (plain dicts): so the scores route recomputes
exactly what the article was scored with when it was written under this rubric version. A
transcript (``score`` without an article, the graph's ``geoReadinessScore``) is scored as the
text the video says: its sentences, its claims as facts, its questions and the answers that follow.
The cue lists cover the service's article languages (fr, en, de, es, it, pt, nl).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.scoring_documents import (
    SOURCE_RE,
    Document,
    answers_directly,
    document_from_article,
    document_from_transcript,
    fold_key,
    is_question,
    shorten,
)
from domain.analysis.text import content_tokens, words
from domain.languages import table

RUBRIC_VERSION = 2
GEO_WEIGHT = 0.7
AEO_WEIGHT = 0.3
GEO_GOOD = 70
AEO_GOOD = 75
EVIDENCE_ITEMS = 10  # evidence listed per criterion: enough to check it, bounded for any article

# A figure with its unit: a currency sign before, or a unit word or sign after ("20 milliards",
# "45 percent", "15 million degrees", "3,5 %", "$4.2bn", "12 km/h", "2 ans").
_UNITS = (
    r"%|‰|pour ?cent|pourcent|percent|per ?cent|prozent|por ?ciento|per ?cento|por ?cento|procent|"
    r"€|\$|£|¥|euros?|dollars?|livres?|pounds?|francs?|yens?|"
    r"milliards?|millions?|mille|billions?|trillions?|thousand|bn|mn|k|"
    r"milliarden?|millionen|tausend|mil ?millones|millones|miliardi|milioni|bilhões|milhões|miljard|miljoen|"
    r"km/h|km²|km|kilom[eèé]tres?|kilometers?|kilometres?|miles?|m²|m³|mètres?|meters?|metres?|metros?|"
    r"cm|mm|kg|kilos?|grammes?|grams?|g|tonnes?|tons?|t|litres?|liters?|l|"
    r"degrés?|degrees?|grad|grados|gradi|°C|°F|°|"
    r"watts?|kW|MW|GW|TW|kWh|MWh|GWh|TWh|Wh|volts?|V|Hz|GHz|MHz|"
    r"heures?|hours?|h|minutes?|min|secondes?|seconds?|s|ms|"
    r"ans|années?|years?|jahre?n?|años|anni|anos|jaar|jours?|days?|tage?n?|días|giorni|dias|"
    r"mois|months?|monate?n?|meses|mesi|semaines?|weeks?|wochen|"
    r"fois|times|mal|veces|volte|vezes|keer|"
    r"habitants|inhabitants|einwohner|habitantes|abitanti|inwoners|"
    r"people|personnes|personen|personas|persone|pessoas|mensen|pays|countries|länder|países|paesi|landen|"
    r"employés|employees|mitarbeiter|empleados|dipendenti|funcionários|werknemers|"
    r"users|utilisateurs|nutzer|usuarios|utenti|usuários|gebruikers|"
    r"clients|customers|kunden|clientes|elèves|students|étudiants|patients|patienten|pacientes|"
    r"cas|cases|fälle|casos|casi|gevallen|morts|deaths|tote|muertos|morti|mortes|doden"
)
STAT_RE = re.compile(
    rf"(?:[$€£¥]\s?\d[\d.,\u202f\u00a0 ]*\d?(?:\s?(?:bn|mn|k|m|billion|million|milliards?|millions?))?)|"
    rf"(?<![\w.])\d+(?:[.,\u202f\u00a0 ]\d+)*\s?(?:{_UNITS})(?![\w])",
    re.IGNORECASE)
_MONTHS = (
    "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|"
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "januar|februar|märz|juni|juli|oktober|dezember|"
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
    "gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|"
    "janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|dezembro|"
    "januari|februari|maart|augustus"
)
DATE_RE = re.compile(
    rf"\b(?:1[5-9]|20)\d{{2}}s?\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|\b(?:{_MONTHS})\b",
    re.IGNORECASE)

STUDY_RE = re.compile(
    r"\b(?:une étude|l['’]étude|un rapport|le rapport|une enquête|un sondage|les données|"
    r"a study|the study|a report|the report|a survey|the survey|the data|research by|"
    r"eine studie|die studie|der bericht|un estudio|el estudio|el informe|uno studio|lo studio|il rapporto|"
    r"um estudo|o estudo|o relatório|een studie|het rapport)\s+(?:de |du |des |of |by |der |del |di |do |van )?"
    r"([A-ZÀ-Ý][^.;:!?]{1,60})")
URL_RE = re.compile(r"https?://[^\s)>\]]+")


# A definition and a hedge in any of the seven languages (a document is scored whatever it is written in).
ANY_DEFINITION_RE = re.compile("|".join(table("definition_phrases").values()), re.IGNORECASE)
ANY_HEDGE_RE = re.compile("|".join(table("hedge_phrases").values()), re.IGNORECASE)
ACRONYM_RE = re.compile(r"\b[A-Z][A-Z0-9]{1,}(?:-[A-Z0-9]+)*\b")
_FILLER_RE = re.compile(
    r"\b(?:euh|heu|hum|bah|ben|um|uh|erm|hmm|ähm|äh|ehm|eh|pues|tipo|cioè|tipo|né|nou|"
    r"tu vois|vous voyez|tu sais|you know|i mean|kind of|sort of|genre|quoi\s*[,.!?]|du weißt|o sea|sabes|"
    r"diciamo|sabe|weet je)\b",
    re.IGNORECASE)
_STUTTER_RE = re.compile(r"\b(\w{2,})\s+\1\b", re.IGNORECASE)


NAMED_TYPES = frozenset({"person", "organization", "place", "product", "event", "work"})
STUFFING_DENSITY = 0.08  # a natural text's most frequent meaningful word rarely passes 8% of them
STUFFING_FULL = 0.20  # at 20% the penalty is whole
STUFFING_MIN_COUNT = 8  # fewer repetitions say nothing in a short text


@dataclass(slots=True)
class Criterion:
    name: str
    weight: int
    value: float
    detail: str
    evidence: list[Any] = field(default_factory=list)

    @property
    def points(self) -> float:
        return round(self.weight * self.value, 1)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight, "value": round(self.value, 3), "points": self.points,
                "detail": self.detail, "evidence": self.evidence}


@dataclass(slots=True)
class Scores:
    aeo_score: int
    geo_score: int
    composite_score: float
    aeo_criteria: list[Criterion]
    geo_criteria: list[Criterion]
    geo_summary: dict[str, Any] = field(default_factory=dict)
    geo_penalties: list[Criterion] = field(default_factory=list)

    @property
    def verdicts(self) -> dict[str, Any]:
        return {"geo_well_structured_for_citation": self.geo_score >= GEO_GOOD,
                "aeo_answers_common_queries_directly": self.aeo_score >= AEO_GOOD}

    def to_dict(self) -> dict[str, Any]:
        return {"aeo_score": self.aeo_score, "geo_score": self.geo_score, "composite_score": self.composite_score,
                "geo_summary": self.geo_summary, "verdicts": self.verdicts,
                "rubric": {"version": RUBRIC_VERSION, "composite": "0.7 * geo_score + 0.3 * aeo_score",
                           "geo_well_structured_at": GEO_GOOD, "aeo_answers_queries_at": AEO_GOOD,
                           "geo": [c.to_dict() for c in self.geo_criteria],
                           "geo_penalties": [c.to_dict() for c in self.geo_penalties],
                           "aeo": [c.to_dict() for c in self.aeo_criteria]}}


def _target(doc_words: int, per_words: int, low: float, high: float) -> float:
    """A target that grows with the text: one per ``per_words`` words, between ``low`` and ``high``
    (three dated figures make a short article citable; an hour of talk needs more than three)."""
    return max(low, min(high, doc_words / per_words))


def _ratio(value: float, target: float) -> float:
    return max(0.0, min(1.0, value / target)) if target > 0 else 0.0


def composite(geo: float, aeo: float) -> float:
    return round(GEO_WEIGHT * geo + AEO_WEIGHT * aeo, 1)


# ------------------------------------------------------------------------------- criteria


def _words(doc: Document) -> int:
    return sum(len(words(s.text)) for s in doc.sentences)


def _statistics(doc: Document) -> Criterion:
    found, credit = [], 0.0
    for s in doc.sentences:
        figure = STAT_RE.search(s.text)
        if figure is None:
            continue
        date = DATE_RE.search(s.text.replace(figure.group(0), " "))
        credit += 1.0 if date else 0.6
        found.append({"text": shorten(s.text), "figure": figure.group(0).strip(),
                      "date": date.group(0) if date else None})
    dated = sum(1 for f in found if f["date"])
    target = _target(_words(doc), 400, 3, 8)
    return Criterion("statistics", 20, _ratio(credit, target),
                     f"{len(found)} sentences with a figure and its unit, {dated} of them dated (target {target:.0f} "
                     f"dated; undated ones count 0.6)", found[:EVIDENCE_ITEMS])


def _quotations(doc: Document) -> Criterion:
    evidence = [{"quote": shorten(q.text), "speaker": q.speaker} for q in doc.quotations]
    target = _target(_words(doc), 500, 3, 6)
    return Criterion("quotations", 15, _ratio(len(doc.quotations), target),
                     f"{len(doc.quotations)} statements shown with who said them (target {target:.0f})",
                     evidence[:EVIDENCE_ITEMS])


# Words without which a pattern cannot match: one search for any of them in the lowered text (a
# plain alternation of literals) spares most sentences the pattern itself, whose alternation of
# cues with word boundaries is tried at every word otherwise.
_SOURCE_HINTS = ("selon", "après", "source", "cité", "rapporte", "publi", "according", "reported", "cited", "laut",
                 "gemäß", "zufolge", "quelle", "según", "acuerdo", "fuente", "secondo", "stando", "fonte", "segundo",
                 "acordo", "volgens", "bron")
_STUDY_HINTS = ("étude", "rapport", "enquête", "sondage", "données", "study", "report", "survey", "data", "research",
                "studie", "bericht", "estudio", "informe", "studio", "estudo", "relatório")
_SOURCE_PATTERNS = tuple((regex, re.compile("|".join(re.escape(h) for h in hints)))
                         for regex, hints in ((SOURCE_RE, _SOURCE_HINTS), (STUDY_RE, _STUDY_HINTS),
                                              (URL_RE, ("http",))))


def cited_sources(sentences: Iterable[str]) -> list[dict[str, Any]]:
    """The sources the text names (``{"source", "text"}``), once each, in order of appearance: what
    follows "selon", "according to", "laut"..., a study or report named after its author, a URL."""
    sources: dict[str, dict[str, Any]] = {}
    for text in sentences:
        lowered = text.lower()
        for regex, hints in _SOURCE_PATTERNS:
            if not hints.search(lowered):
                continue
            for match in regex.finditer(text):
                name = (match.group(1) if match.groups() else match.group(0)).strip(" ,\"”»)")
                name = " ".join(name.split()[:6])
                if len(name) >= 2 and fold_key(name) not in sources:
                    sources[fold_key(name)] = {"source": name, "text": shorten(text)}
    return list(sources.values())


def _sources(doc: Document) -> Criterion:
    sources = cited_sources(s.text for s in doc.sentences)
    target = _target(_words(doc), 800, 2, 4)
    return Criterion("cited_sources", 15, _ratio(len(sources), target),
                     f"{len(sources)} distinct sources named (target {target:.0f})", sources[:EVIDENCE_ITEMS])


def _fluency(doc: Document) -> Criterion:
    texts = [s.text for s in doc.sentences if s.text.strip()]
    counts = [len(words(t)) for t in texts]
    total = sum(counts)
    if not total:
        return Criterion("fluency", 15, 0.0, "no text", [])
    mean = total / len(counts)
    length = 1.0 if 10 <= mean <= 25 else 0.6 if 6 <= mean <= 35 else 0.2
    fillers = [m.group(0).strip(" ,.!?") for t in texts for m in _FILLER_RE.finditer(t)]
    stutters = [m.group(0) for t in texts for m in _STUTTER_RE.finditer(t) if not m.group(1).isdigit()]
    fragments = sum(1 for c in counts if c < 4)
    per100 = 100 / total
    value = (0.4 * length + 0.3 * max(0.0, 1 - len(fillers) * per100 / 3)
             + 0.15 * max(0.0, 1 - len(stutters) * per100 / 1.5)
             + 0.15 * max(0.0, 1 - 2 * fragments / len(counts)))
    longest = max(texts, key=lambda t: len(words(t)))
    common = Counter(f.lower() for f in fillers).most_common(5)
    evidence = [{"mean_words_per_sentence": round(mean, 1), "fillers": [{"filler": f, "count": n} for f, n in common],
                 "stutters": stutters[:5], "fragments": fragments, "longest_sentence": shorten(longest)}]
    return Criterion("fluency", 15, value,
                     f"{mean:.1f} words per sentence (10-25 reads best), {len(fillers)} fillers, {len(stutters)} "
                     f"stutters, {fragments} fragments in {len(counts)} sentences", evidence)


def _technical_terms(doc: Document) -> Criterion:
    text = " ".join(fold_key(s.text) for s in doc.sentences)
    padded = f" {text} "
    terms: dict[str, str] = {}
    for entity in doc.entities:
        name = entity.get("name") or ""
        if entity.get("type") in NAMED_TYPES and fold_key(name) and f" {fold_key(name)} " in padded:
            terms.setdefault(fold_key(name), name)
    for topic in doc.topics[:10]:
        name = topic.get("name") or ""
        if len(name.split()) >= 2 and f" {fold_key(name)} " in padded:
            terms.setdefault(fold_key(name), name)
    for s in doc.sentences:
        for match in ACRONYM_RE.finditer(s.text):
            terms.setdefault(fold_key(match.group(0)), match.group(0))
    target = _target(_words(doc), 250, 6, 12)
    return Criterion("technical_terms", 15, _ratio(len(terms), target),
                     f"{len(terms)} named organisations, places, products, people, acronyms and key phrases "
                     f"(target {target:.0f})", list(terms.values())[:EVIDENCE_ITEMS])


def _citable_facts(doc: Document) -> Criterion:
    claims = {c.get("id"): c for c in doc.claims}
    grounded = [(f, claims[f["claimId"]]) for f in doc.key_facts if f.get("claimId") in claims]
    credit = sum(c.get("confidence", 0.0) for _, c in grounded)
    evidence = [{"text": shorten(f.get("text") or ""), "startMs": c.get("startMs"), "claimId": c.get("id"),
                 "confidence": c.get("confidence")} for f, c in grounded]
    return Criterion("citable_facts", 20, _ratio(credit, 2.4),
                     f"{len(grounded)} key facts tied to a timestamped claim of the video, confidence "
                     f"{credit:.2f} in all (target 2.4: three facts at 0.8)", evidence[:EVIDENCE_ITEMS])


def _keyword_stuffing(doc: Document) -> Criterion:
    per_sentence = doc.tokens
    tokens = [t for sentence in per_sentence for t in sentence]
    if not tokens:
        return Criterion("keyword_stuffing", 25, 0.0, "no meaningful words", [])
    word, count = Counter(tokens).most_common(1)[0]
    density = count / len(tokens)
    value = 0.0
    if count >= STUFFING_MIN_COUNT and density > STUFFING_DENSITY:
        value = min(1.0, (density - STUFFING_DENSITY) / (STUFFING_FULL - STUFFING_DENSITY))
    repeated = [shorten(s.text) for s, toks in zip(doc.sentences, per_sentence, strict=True) if toks.count(word) >= 3]
    return Criterion("keyword_stuffing", 25, value,
                     f"most frequent word {word!r}: {count} of {len(tokens)} meaningful words ({100 * density:.1f}%; "
                     f"a penalty above {100 * STUFFING_DENSITY:.0f}%, whole at {100 * STUFFING_FULL:.0f}%)",
                     [{"keyword": word, "count": count, "density": round(density, 3),
                       "sentences_repeating_it": repeated[:5]}])


def _question_headings(doc: Document) -> Criterion:
    evidence, direct = [], 0
    for a in doc.answered:
        count = len(words(a.first))
        ok = answers_directly(a)
        direct += ok
        why = ("answered in its first sentence" if ok else "first sentence is a question" if is_question(a.first)
               else f"first sentence has {count} words" if not 5 <= count <= 40
               else "first sentence does not take up the question's words")
        evidence.append({"question": shorten(a.question), "first_sentence": shorten(a.first), "direct": ok,
                         "where": a.where, "why": why})
    return Criterion("question_headings", 25, _ratio(direct, 3.0),
                     f"{direct} of {len(doc.answered)} question headings answered in their first sentence (target 3)",
                     evidence[:EVIDENCE_ITEMS])


def _concise_answers(doc: Document) -> Criterion:
    def concise(text: str) -> bool:
        return 6 <= len(words(text)) <= 30 and not is_question(text) and not ANY_HEDGE_RE.search(text)

    good = [o for o in doc.openers if concise(o)]
    value = len(good) / len(doc.openers) if doc.openers else 0.0
    return Criterion("concise_answers", 20, value,
                     f"{len(good)} of {len(doc.openers)} opening sentences (introduction, sections, answers) are "
                     f"direct statements of 6-30 words", [shorten(o) for o in good][:EVIDENCE_ITEMS])


def _faq(doc: Document) -> Criterion:
    questions = [shorten(a.question) for a in doc.answered if a.where in ("faq", "video")]
    return Criterion("faq", 20, _ratio(doc.faq_count, 3.0), f"{doc.faq_count} answered questions (target 3)",
                     questions[:EVIDENCE_ITEMS])


def _structured_data(doc: Document) -> Criterion:
    parts = {"Article headline of 1-110 characters": 0 < len(doc.title) <= 110,
             "VideoObject of the video": doc.has_video,
             "Clip key moments (2 chapters or more)": doc.moments >= 2,
             "FAQPage (1 answered question or more)": doc.faq_count >= 1}
    present = [name for name, ok in parts.items() if ok]
    return Criterion("structured_data", 15, len(present) / len(parts),
                     f"the JSON-LD export carries {len(present)} of {len(parts)}: "
                     + ", ".join(f"{name} {'yes' if ok else 'no'}" for name, ok in parts.items()), present)


def _definitions(doc: Document) -> Criterion:
    found = [shorten(s.text) for s in doc.sentences if not is_question(s.text)
             and ANY_DEFINITION_RE.search(s.text)]
    return Criterion("definitions", 10, _ratio(len(found), 2.0), f"{len(found)} definitional sentences (target 2)",
                     found[:EVIDENCE_ITEMS])


def _intents_answered(doc: Document) -> Criterion:
    top = sorted(doc.intents, key=lambda i: -float(i.get("relevance") or 0))[:5]
    text_tokens = {t for sentence in doc.tokens for t in sentence}
    asked = [set(content_tokens(a.question)) for a in doc.answered]
    evidence, answered = [], 0
    for intent in top:
        query = set(content_tokens(intent.get("query") or ""))
        as_heading = any(query and len(query & q) / len(query | q) >= 0.5 for q in asked)
        in_text = bool(intent.get("answered")) and bool(query) and query <= text_tokens
        ok = as_heading or in_text
        answered += ok
        evidence.append({"query": intent.get("query"), "answered": ok,
                         "how": "a question heading" if as_heading else "in the text" if in_text else None})
    return Criterion("intents_answered", 10, answered / len(top) if top else 0.0,
                     f"{answered} of the {len(top)} most relevant search intents answered", evidence)


def geo_summary(doc: Document) -> dict[str, Any]:
    named = [e for e in doc.entities if e.get("type") not in ("date", "number")]
    return {"main_entities": [e["name"] for e in named[:5]],
            "main_topics": [t["name"] for t in doc.topics[:5]],
            "user_intents_answered": [i["query"] for i in doc.intents if i.get("answered")][:5],
            "key_facts": [f["text"] for f in doc.key_facts if f.get("text")][:7]}


def score_document(doc: Document) -> Scores:
    geo = [_statistics(doc), _quotations(doc), _sources(doc), _fluency(doc), _technical_terms(doc),
           _citable_facts(doc)]
    penalties = [_keyword_stuffing(doc)]
    aeo = [_question_headings(doc), _concise_answers(doc), _faq(doc), _structured_data(doc), _definitions(doc),
           _intents_answered(doc)]
    geo_points = sum(c.weight * c.value for c in geo) - sum(p.weight * p.value for p in penalties)
    geo_score = max(0, min(100, round(geo_points)))
    aeo_score = max(0, min(100, round(sum(c.weight * c.value for c in aeo))))
    return Scores(aeo_score, geo_score, composite(geo_score, aeo_score), aeo, geo, geo_summary(doc), penalties)


def score_article(article: dict[str, Any], graph: dict[str, Any]) -> Scores:
    """The rubric on a stored article and the stored Content Graph of its analysis (plain dicts)."""
    return score_document(document_from_article(article, graph))


def score(*, sentences: Sequence[Any], claims: Sequence[Any], entities: Sequence[Any], topics: Sequence[Any],
          intents: Sequence[Any], moments: Sequence[Any], chapters: Sequence[Any], diarisation: Any, duration_ms: int,
          article: dict[str, Any] | None = None) -> Scores:
    """The rubric from the analysis' own objects: the article when one is given (scored exactly as
    ``score_article`` scores it later from the stored graph), else the transcript itself."""
    graph = {"claims": [c.to_dict() for c in claims], "entities": [e.to_dict() for e in entities],
             "topics": [t.to_dict() for t in topics], "searchIntents": [i.to_dict() for i in intents],
             "chapters": [c.to_dict() for c in chapters], "speakers": diarisation.to_dict(), "durationMs": duration_ms}
    if article is not None:
        return score_article(article, graph)
    return score_document(document_from_transcript(sentences, graph))
