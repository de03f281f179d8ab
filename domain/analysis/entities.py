"""Named entities without a model: capitalised spans, dates, numbers, and cues that type them.

Typing rules, first match wins: a speaker's name or a title (Dr, Mme, President...) or a known
first name -> person; an organisation word (Université, Inc, Agency...) or an acronym ->
organization; a gazetteer hit or a locative cue (``in``, ``à``, ``en``) -> place; letters mixed
with digits or inner capitals (iPhone, GPT-4) or a product cue -> product. Mentions of a person's
surname alone are counted under the full name. Ids are a hash of type and folded name, so the same
transcript always gives the same ids.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.language import Language
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import ELISION_RE, fold, word_after, word_before
from domain.languages import DEFAULT_LANGUAGE, table

# Month names and unit words of all seven languages (domain.languages): a talk in one language names
# dates and figures in others' words too ("in March", "15 Prozent" in a French talk about Germany).
MONTHS = sorted({m for names in table("month_names").values() for m in names.split()})
MONTHS_SET = frozenset(MONTHS)
MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))
# Month names that are common words or names alone ("may", "August"): a date only with a day or a year.
LONE_MONTH_WORDS = frozenset({"mai", "may", "march", "mars", "august", "mayo", "mei"})

UNITS = "|".join([r"%|€|\$|£|km/h|km|kg|°C|°|kW|MW|GW|TWh|kWh|MWh|GWh",
                  *sorted(set(table("unit_words").values()))])
DATE_RES = [
    re.compile(rf"\b(?:\d{{1,2}}(?:er|\.)?\s+(?:de\s+)?)?(?:{MONTH_ALT})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?,?)?"
               rf"(?:\s+(?:de\s+|del\s+)?\d{{4}})?\b", re.IGNORECASE),
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
    re.compile(rf"\b(?:1[5-9]|20)\d{{2}}s?\b(?![\s\u202f]?(?:{UNITS})(?!\w))(?![.,]\d)", re.IGNORECASE),
    re.compile(r"\b[XVI]{1,5}(?:e|ème|eme)\s+siècle\b"),
    re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\s+century\b", re.IGNORECASE),
]

NUMBER_RE = re.compile(rf"(?<![\w.])[$€£]?\d+(?:[ .,\u202f]\d{{3}})*(?:[.,]\d+)?\s?(?:{UNITS})?(?![\w])",
                       re.IGNORECASE)

PERSON_TITLES = frozenset("""
m. m mme mme. mlle dr dr. docteur docteure mr mr. mrs mrs. ms ms. prof prof. professeur professeure président
présidente president ministre minister sénateur senator maire mayor général general sir madame monsieur saint
sainte pape pope roi king reine queen prince princesse princess capitaine captain chef ceo fondateur founder
""".split())

FIRST_NAMES = frozenset("""
jean marie pierre paul jacques michel anne sophie claire julie louis marc luc emma léa chloé camille lucas hugo
thomas nicolas julien antoine alexandre nathalie isabelle catherine françoise françois philippe alain bernard
patrick laurent stéphane sylvie christine valérie céline aurélie sarah laura manon inès jules arthur gabriel
raphaël louise alice elise élise hélène martin david daniel john james robert michael william richard joseph
charles mary patricia jennifer linda elizabeth barbara susan jessica karen nancy lisa emily olivia sophia
isabella ava mia grace albert isaac ada alan elon steve bill mark jeff tim satya sundar marie-curie simone
emmanuel nelson martin-luther barack donald joe angela greta rosalind niels werner enrico lise max
""".split())

ORG_WORDS = frozenset("""
inc inc. corp corp. corporation ltd ltd. llc sa sas sarl gmbh ag plc group groupe company compagnie société
societe university université universite institute institut agency agence bank banque foundation fondation
association ministry ministère ministere commission council conseil parliament parlement assemblée assemblee
school école ecole college lycée hôpital hopital hospital laboratory laboratoire lab labs center centre museum
musée musee club federation fédération federation union organisation organization office committee comité
department département team équipe airlines airways motors technologies systems labs studios records press
journal times news media médias cnrs cnes esa nasa oms who onu un ue eu unesco iter cern inserm ifop
agencia agenzia agência agentur agentschap universidad università universidade universität universiteit
instituto istituto institut banco banca stiftung stichting fundación fondazione fundação ministerio ministero
ministério ministerium ministerie comisión commissione comissão kommission commissie gobierno governo
regierung regering gouvernement government empresa sociedad società sociedade gesellschaft asociación
associazione associação verein vereniging organización organizzazione organização organisatie
""".split())

PLACES = frozenset("""
france paris lyon marseille toulouse bordeaux lille nantes strasbourg nice rennes montpellier grenoble cadarache
provence bretagne normandie alsace europe afrique asie amérique amerique océanie oceanie antarctique arctique
allemagne germany berlin munich espagne spain madrid barcelone barcelona italie italy rome milan portugal
lisbonne lisbon belgique belgium bruxelles brussels suisse switzerland genève geneva zurich pays-bas netherlands
amsterdam royaume-uni uk england angleterre londres london écosse scotland irlande ireland dublin états-unis
usa america new york washington californie california texas floride florida chicago boston seattle canada
québec quebec montréal montreal toronto mexique mexico brésil brazil argentine argentina chili chile pérou peru
chine china pékin beijing shanghai japon japan tokyo corée korea séoul seoul inde india delhi mumbai russie
russia moscou moscow ukraine kiev kyiv pologne poland varsovie suède sweden norvège norway danemark denmark
finlande finland grèce greece athènes athens turquie turkey istanbul égypte egypt maroc morocco algérie algeria
tunisie tunisia sénégal senegal nigeria kenya afrique-du-sud australie australia sydney
""".split())

PRODUCT_CUES = frozenset("""
app application logiciel software modèle model version appareil device smartphone téléphone phone voiture car
console plateforme platform outil tool
""".split())

LOCATIVE_CUES = frozenset("in à au aux en from near de depuis vers at".split())

CONNECTORS = frozenset("de du des del della do dos das la le of the and & von van der da di y".split())

CAP_WORD = r"[A-ZÀ-ÖØ-Þ][\w'’\-\.]*"
# Up to two connectors between capitalised words: "Agencia Internacional de la Energía", "Bank of
# the West", "Ludwig van der Rohe".
SPAN_RE = re.compile(rf"{CAP_WORD}(?:\s+(?:(?:de|du|des|del|della|do|dos|das|la|le|of|the|&|von|van|der|da|di|y)"
                     rf"\s+){{0,2}}{CAP_WORD})*")
ACRONYM_RE = re.compile(r"^[A-Z]{2,6}s?$")
MIXED_RE = re.compile(r"[a-z][A-Z]|[A-Za-z]-?\d|\d[A-Za-z]")

TYPES = ("person", "organization", "place", "product", "date", "number", "other")


@dataclass(slots=True)
class Entity:
    id: str
    name: str
    type: str
    mentions: int
    first_ms: int
    sentences: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "mentions": self.mentions,
                "firstMs": self.first_ms}


@dataclass(slots=True)
class SentenceEntities:
    """What the claim scorer needs to know about one sentence."""

    names: list[str] = field(default_factory=list)
    dates: int = 0
    numbers: int = 0


def entity_id(kind: str, name: str) -> str:
    return "ent_" + hashlib.sha1(f"{kind}|{fold(name)}".encode()).hexdigest()[:12]


def _strip_span(words: list[str]) -> list[str]:
    while words and words[-1].lower() in CONNECTORS:
        words = words[:-1]
    return words


# French, Italian, Spanish and Portuguese often capitalise an organisation's first word only
# ("l'Agence internationale de l'énergie", "Organisation mondiale de la santé", "Banque centrale
# européenne", "l'Agenzia internazionale dell'energia"): after an organisation word the name goes on
# through up to two adjectives (by their endings) and one complement ("de l'énergie"), with an
# adjective after it. A word followed by a conjunction ("que", "che") or an article is a verb
# ("l'Agence indique que"), and ends the name.
_LOWER = r"[a-zà-öø-ÿ]"


def _tail_re(endings: str, complements: str, verb_next: str) -> re.Pattern[str]:
    adjective = rf"{_LOWER}[\w\-]*(?:{endings})\b(?!\s+(?:{verb_next})\b)"
    complement = rf"(?:{complements}){_LOWER}[\w\-]+"
    return re.compile(rf"(?:\s+{adjective}){{0,2}}(?:\s+{complement}(?:\s+{adjective})?)?")


ORG_TAIL_RE = {code: _tail_re(*tail) for code, tail in table("org_tail").items()}


def _org_tail(code: str, text: str, end: int, tokens: list[str], raw: str) -> str:
    """The lowercase rest of an organisation's name after its capitalised words (``ORG_TAIL_RE``)."""
    tail_re = ORG_TAIL_RE.get(code)
    if not tail_re or not raw.endswith(tokens[-1]):
        return ""
    head = ELISION_RE.sub("", tokens[-1]) or tokens[-1]
    if head.lower() not in ORG_WORDS:
        return ""
    tail = tail_re.match(text, end)
    assert tail is not None  # the pattern matches the empty string
    return " ".join(tail.group(0).split())


# The end of a German or Dutch compound that names an organisation: "Energieagentur",
# "Bundesministerium", "Max-Planck-Institut", "Rijksuniversiteit".
COMPOUND_ORG_WORDS = ("agentur", "institut", "stiftung", "ministerium", "kommission", "regierung", "gesellschaft",
                      "universität", "behörde", "verband", "agentschap", "ministerie", "universiteit", "stichting")

ORG_CUES = frozenset("l'agence agence organisation organization société company groupe group chez at".split())


def _speaker_parts(speakers: set[str]) -> set[str]:
    return {part for name in speakers for part in name.split() if len(part) >= 3}


def _type_of(name: str, prev_word: str, next_word: str, speakers: set[str]) -> str:
    tokens = name.split()
    low = [t.lower().strip(".,") for t in tokens]
    folded = fold(name)
    if folded in speakers or (len(tokens) == 1 and folded in _speaker_parts(speakers)):
        return "person"
    if prev_word in PERSON_TITLES or low[0] in PERSON_TITLES:
        return "person"
    if any(t in ORG_WORDS or t.endswith(COMPOUND_ORG_WORDS) for t in low) or (
            len(tokens) == 1 and ACRONYM_RE.match(tokens[0]) and prev_word in ORG_CUES):
        return "organization"
    if folded in PLACES or " ".join(low) in PLACES or (len(tokens) == 1 and low[0] in PLACES):
        return "place"
    if MIXED_RE.search(name) or next_word in PRODUCT_CUES or prev_word in PRODUCT_CUES:
        return "product"
    if low[0] in FIRST_NAMES and len(tokens) >= 2:
        return "person"
    if prev_word in LOCATIVE_CUES and len(tokens) == 1:
        return "place"
    return "other"


OPENING_CHARS = " «\"'(-—–"


def _opening(text: str) -> int:
    """Where the sentence's first word starts: a span at or before it opens the sentence."""
    return len(text) - len(text.lstrip(OPENING_CHARS))


class _Spans:
    """Disjoint character ranges already taken by a date or a figure, sorted, so that whether a new
    match overlaps one is a bisection rather than a scan of them all (a sentence of many figures
    was quadratic)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        k = bisect.bisect_left(self.starts, end)  # the ranges that start before this one ends
        return k > 0 and self.ends[k - 1] > start  # disjoint: the last of them ends last

    def add(self, start: int, end: int) -> None:
        k = bisect.bisect_left(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


class _Found:
    """The entities found so far, each with the spellings it was said with (the most said names it)."""

    def __init__(self) -> None:
        self.entities: dict[tuple[str, str], Entity] = {}
        self.surface: dict[tuple[str, str], Counter[str]] = {}

    def add(self, kind: str, name: str, sentence: Sentence) -> tuple[str, str]:
        key = (kind, fold(name))
        entity = self.entities.get(key)
        if entity is None:
            entity = self.entities[key] = Entity(entity_id(kind, name), name, kind, 0, sentence.start_ms)
            self.surface[key] = Counter()
        entity.mentions += 1
        if not entity.sentences or entity.sentences[-1] != sentence.index:
            entity.sentences.append(sentence.index)
        self.surface[key][name] += 1
        return key


def extract_entities(sentences: Sequence[Sentence], speakers: Sequence[str] = (),
                     language: str | None = DEFAULT_LANGUAGE) -> tuple[list[Entity], list[SentenceEntities]]:
    """Entities of the transcript, most mentioned first, and per-sentence entity facts. Numbers
    spoken as words ("twenty-three thousand tonnes", "cinq cents mégawatts") are figures too."""
    kit = language_of(language)
    speaker_folds = {fold(s) for s in speakers if s}
    found = _Found()
    per_sentence: list[SentenceEntities] = []
    inner_names = _inner_names(sentences)
    common = _mostly_lowercase(sentences)
    for sentence in sentences:
        facts = SentenceEntities()
        taken = _Spans()
        _dates_and_figures(sentence, kit, found, facts, taken)
        _names(sentence, kit, found, facts, inner_names, speaker_folds, common)
        per_sentence.append(facts)

    _fold_surnames(found.entities)
    for key, entity in found.entities.items():
        entity.name = found.surface[key].most_common(1)[0][0] if found.surface.get(key) else entity.name
    entities = [e for e in found.entities.values() if e.mentions > 0]
    entities.sort(key=lambda e: (-e.mentions, e.first_ms, e.name))
    return entities, per_sentence


def _mostly_lowercase(sentences: Sequence[Sentence]) -> set[str]:
    """Words the transcript writes in lowercase ``LOWERCASE_RATIO`` times as often as capitalised or more:
    a common word, even where it opens a sentence the splitter missed ("¿Cuántos enteros...",
    "...Podemos"); a name the captions also write in lowercase ("React", "react") is capitalised
    ``NAME_CAPITALISED`` times or more."""
    lower: Counter[str] = Counter()
    upper: Counter[str] = Counter()
    for sentence in sentences:
        for word in WORD_RUN_RE.findall(sentence.text):
            (lower if word.islower() else upper)[fold(word)] += 1
    return {w for w, n in lower.items() if n >= LOWERCASE_RATIO * upper[w] and upper[w] < NAME_CAPITALISED}


def _inner_names(sentences: Sequence[Sentence]) -> set[str]:
    """Words seen capitalised inside sentences: a name, even when it opens a sentence elsewhere."""
    inner_names: set[str] = set()
    for sentence in sentences:
        opening = _opening(sentence.text)
        for match in SPAN_RE.finditer(sentence.text):
            found_words = match.group(0).split()
            if match.start() > opening:
                inner_names.update(fold(w) for w in found_words)
            else:
                inner_names.update(fold(w) for w in found_words[1:])
    return inner_names


def _dates_and_figures(sentence: Sentence, kit: Language, found: _Found, facts: SentenceEntities,
                       taken: _Spans) -> None:
    text = sentence.text
    for date_re in DATE_RES:
        for match in date_re.finditer(text):
            if taken.overlaps(match.start(), match.end()):
                continue
            value = match.group(0).strip(" ,")
            if value.lower() in LONE_MONTH_WORDS:
                continue  # "mai"/"may"/"march" alone are far more often words than dates
            taken.add(match.start(), match.end())
            found.add("date", value, sentence)
            facts.dates += 1
    written: list[str] = []
    for match in NUMBER_RE.finditer(text):
        if taken.overlaps(match.start(), match.end()):
            continue
        value = match.group(0).strip()
        if not _is_figure(value):
            continue
        taken.add(match.start(), match.end())
        found.add("number", value, sentence)
        written.append(value)
        facts.numbers += 1
    for value in _spoken_figures(text, written, kit):
        found.add("number", value, sentence)
        facts.numbers += 1


WORD_RUN_RE = re.compile(r"[^\W\d_]+")
LOWERCASE_RATIO = 2
NAME_CAPITALISED = 3
COMMON_ZIPF = 3.0  # a word at least this frequent in the language ("download" 3.9; "wordle", "jest" under it)
GERMAN_WORD_ZIPF = 2.0  # a word the German list holds at least this often (about one in 100 million words)


def _german_word(token: str, kit: Language) -> bool:
    """A word of German's own (its frequency list, or a stop word: "die", "sie"), not a name: a span of
    them only, capitalised because German capitalises its nouns and a sentence's first word, names nothing."""
    word = token.lower().strip(".-")
    return word in kit.stop_words or kit.zipf(word) >= GERMAN_WORD_ZIPF


def _names(sentence: Sentence, kit: Language, found: _Found, facts: SentenceEntities, inner_names: set[str],
           speaker_folds: set[str], common: set[str]) -> None:
    text = sentence.text
    opening = _opening(text)
    stops = kit.stop_words
    for match in SPAN_RE.finditer(text):
        raw = match.group(0).rstrip(".")
        tokens = _strip_span(raw.split())
        if not tokens:
            continue
        start = match.start()
        at_sentence_start = start <= opening
        tail = _org_tail(kit.code, text, match.start() + len(raw), tokens, raw)
        if tail and len(tokens) == 1:  # "L'Organisation mondiale de la santé" opening a sentence
            tokens = [ELISION_RE.sub("", tokens[0]) or tokens[0]]
        elif at_sentence_start:
            # The first word is capitalised anyway: keep the span only when what follows is
            # itself a name, or the word is never a common word.
            if tokens[0].lower() in stops or (len(tokens) == 1 and not ACRONYM_RE.match(tokens[0])
                                                 and tokens[0].lower() not in PLACES
                                                 and fold(tokens[0]) not in inner_names):
                tokens = tokens[1:]
                tokens = _strip_span(tokens)
                while tokens and tokens[0].lower() in CONNECTORS:
                    tokens = tokens[1:]
                if not tokens:
                    continue
        name = " ".join(tokens)
        if len(name) < 2 or name.lower() in stops or name.lower() in MONTHS_SET:
            continue
        if tail:
            name = f"{name} {tail}"
        prev_word = word_before(text, start).lower().strip(",;:«\"'(")
        next_word = word_after(text, match.end()).lower().strip(",;:.!?»\"')")
        kind = _type_of(name, prev_word, next_word, speaker_folds)
        if kit.code == "de" and kind == "other" and (len(tokens) == 1 or any(
                t in CONNECTORS for t in tokens) or all(_german_word(t, kit) for t in tokens)):
            # German capitalises every noun: "Preis", "Kosten der Anlage", "Einheiten Wärme", "Die
            # Identität", "Denken Sie" are no names; "Noethers Theorem", "Fields Medaille" may be
            continue
        if (kind == "other" and len(tokens) == 1 and fold(tokens[0]) in common and not ACRONYM_RE.match(tokens[0])
                and kit.zipf(tokens[0].lower()) >= COMMON_ZIPF):
            continue  # "Enteros", "Podemos", "Download": a common word, mostly written in lowercase
        if kind == "person" and tokens[0].lower().strip(".") in PERSON_TITLES and len(tokens) > 1:
            name = " ".join(tokens[1:])
        found.add(kind, name, sentence)
        facts.names.append(name)


def _is_figure(value: str) -> bool:
    """A bare "3" or "20" says little; with a unit, or "560 000", it is a figure."""
    return not (value.replace(" ", "").replace("\u202f", "").isdigit() and len(value) < 3)


def _spoken_figures(text: str, written: list[str], kit: Language) -> list[str]:
    """Figures said in words ("twenty-three thousand tonnes" -> "23000 tonnes"): those the
    language's number reader finds beyond the ones already written in digits."""
    if not any(ch.isalpha() for ch in text):
        return []
    converted = kit.digits(text)
    if converted == text:
        return []
    remaining = Counter(kit.digits(w) for w in written)  # "15 pour cent" written is the "15 %" read
    spoken = []
    for match in NUMBER_RE.finditer(converted):
        value = match.group(0).strip()
        if not _is_figure(value) or any(d.search(value) for d in DATE_RES[3:4]) and value.isdigit():
            continue
        if remaining[value] > 0:
            remaining[value] -= 1
            continue
        spoken.append(value)
    return spoken


def _fold_surnames(found: dict[tuple[str, str], Entity]) -> None:
    """"Curie" after "Marie Curie": count the lone surname (typed anything but date/number) as the person."""
    people = [(key, e) for key, e in found.items() if e.type == "person" and " " in key[1]]
    by_last: dict[str, tuple[str, str]] = {}
    for key, _ in people:
        last = key[1].split()[-1]
        by_last.setdefault(last, key)
    for key, entity in list(found.items()):
        if key[0] in ("date", "number") or " " in key[1]:
            continue
        target = by_last.get(key[1])
        if target and target != key:
            person = found[target]
            person.mentions += entity.mentions
            person.sentences = sorted(set(person.sentences) | set(entity.sentences))
            person.first_ms = min(person.first_ms, entity.first_ms)
            entity.mentions = 0
