"""Dutch: what the service knows of it (see ``domain.languages.base``).

The assistant does not speak it: a reply to a message in it is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, optional_words

# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"eerst|dan|nu|daarna|tot\s+slot|ten\s+slotte")

LANGUAGE = Language(
    code="nl",
    markers=frozenset({
        "het", "een", "mijn", "toon", "laat", "zien", "lijst", "exporteer", "vertaal", "analyseer",
        "annuleer", "hallo", "bedankt", "dank", "alsjeblieft", "van", "met", "naar", "wat", "hoeveel", "welke",
        "ben", "wie", "ik", "heb", "daarna", "dan", "ook", "taken", "saldo", "waarschuwingen", "laatste",
        "hoofdstukken", "geef", "mij",
    }),
    letters="",
    name="Dutch",
    locale="nl_NL",
    stemmer="dutch",
    called=r"dutch|neerlandais|hollandais",
    spoken_fillers=(
        "eh uh uhm ehm nou zeg gewoon even eigenlijk dus oké okay ok ja nee hè toch hallo welkom bedankt dank "
        "doei"
    ),
    leading_fillers="eh uhm nou dus en oké okay ok ja maar",
    leading_words="oké okay ok goed dus en maar nou",
    cue_phrases=(
        r"nu|vervolgens|daarna|laten\s+we|we\s+gaan\s+(?:nu|verder)|eerst|ten\s+(?:eerste|tweede|derde|slotte)|"
        r"tot\s+slot|concluderend|samenvattend|een\s+ander\s+(?:punt|onderwerp|voorbeeld)|(?:het|de)\s+volgende|"
        r"wat\s+is|hoe\s+werkt|waarom"
    ),
    announce_phrases=_OPENERS + r"laten\s+we\s+het\s+(?:nu\s+)?(?:even\s+)?hebben\s+over(?:\s+(?:de|het))?",
    instruction_phrases=(
        r"(?:(?:eerst|dan|daarna|nu|tenslotte)[,\s]+)?"
        r"(?:klik|installeer|download|typ|selecteer|druk\s+op|voeg|verwijder|kopieer|plak|sla|sluit|giet|meng|"
        r"ga\s+naar|controleer|meet|zorg\s+ervoor|vergeet\s+niet|begin\s+met)\b|"
        r".*?\b(?:stap\s+(?:\d+|een|twee|drie|vier|vijf)|(?:de\s+)?(?:eerste|volgende|laatste)\s+stap)\b"
    ),
    step_openers=r"eerst|begin\s+met|ten\s+eerste|om\s+te\s+beginnen",
    video_subject_phrases=(
        r"\b(?:deze|dit)\s+(?:korte\s+)?(?:video|aflevering|les|podcast|presentatie|introductie|gids)\s+"
        r"(?:over|van)\s+(?:de\s+|het\s+)?"
    ),
    conclusion_phrases=r"tot\s+slot|concluderend|samenvattend|kortom|ten\s+slotte",
    sponsor_phrases=r"\bsponsor(?:s|ed)?\b|\bkortingscode\b",
    question_openers=("waarom", "hoe komt"),
    conjunction="en",
    scales={"duizend": 3, "miljoen": 6, "miljard": 9},
    vague_amounts=(r"enkele|een paar|meerdere|vele", r"honderd|duizend", r"honderden|duizenden"),
    compound_letters=10,
    vague_heads="soort aantal paar manier beetje deel hoop",
    connectors="van de het en voor met in op",
    pronouns=(
        "ik me mij mijn jij je jou jouw u uw hij hem zijn zij ze haar wij we ons onze jullie hun hen het dit dat "
        "deze die iets niets iemand"
    ),
    article_pronouns="het de die",
    dangling="en of maar de het een van voor met in op aan",
    verb_signals="ik jij hij wij we jullie men te",
    plural_endings=("s", "en"),
    plural_templates={"what": "wat zijn {t}", "how": "hoe werken {t}", "why": "waarom {t} belangrijk zijn"},
    labels={
        "introduction": "Inleiding", "key_facts": "Kernpunten", "faq": "Veelgestelde vragen",
        "conclusion": "Conclusie", "step": "Stap", "in_short": "In het kort", "analysis": "Analyse",
        "figures": "Cijfers en feiten", "timeline": "Tijdlijn", "and": "en", "what": "wat is {t}",
        "how": "hoe werkt {t}", "why": "waarom {t} belangrijk is", "how_to": "hoe {t}", "who": "wie is {t}",
        "hook": "opening", "context": "context", "development": "uitwerking", "conclusion_part": "conclusie",
        "chapters": "Hoofdstukken", "source": "Bron", "watch": "Bekijk vanaf", "question": "V", "answer": "A",
        "also_answered": "Ook beantwoord", "main_entities": "Belangrijkste namen en begrippen",
    },
    colon=": ",
    question_mark="?",
)
