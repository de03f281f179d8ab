"""German: what the service knows of it (see ``domain.languages.base``).

The assistant does not speak it: a reply to a message in it is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, optional_words

# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"zuerst|zunächst|dann|jetzt|nun|schließlich|zum\s+schluss|als\s+nächstes")

LANGUAGE = Language(
    code="de",
    markers=frozenset({
        "der", "die", "das", "den", "dem", "mein", "meine", "meinen", "meiner", "zeig", "zeige", "zeigen",
        "exportiere", "ubersetze", "analysiere", "storniere", "abbrechen", "hallo", "danke", "bitte", "und", "mit",
        "von", "ist", "wie", "viele", "auf", "ins", "nach", "dann", "danach", "ich", "habe", "wer", "bin", "ein",
        "eine", "letzten", "mir", "gib", "artikel", "auftrage", "guthaben", "warnungen", "kapiteln",
    }),
    letters="äöüß",
    name="German",
    locale="de_DE",
    stemmer="german",
    called=r"german|allemand|deutsch",
    spoken_fillers=(
        "äh ähm öhm hm mhm ja jo naja halt eben genau okay ok also quasi sozusagen irgendwie eigentlich "
        "hallo willkommen danke tschüss "
        "wirklich einfach mal"
    ),
    leading_fillers="äh ähm also und naja gut okay ok ja aber",
    leading_words="also okay ok und aber gut so ähm naja",
    cue_phrases=(
        r"jetzt|nun|als\s+nächstes|kommen\s+wir|lass(?:t)?\s+uns|sprechen\s+wir|reden\s+wir|zunächst|erstens|"
        r"zweitens|drittens|schließlich|zum\s+schluss|abschließend|zusammenfassend|ein\s+(?:anderes|weiteres)\s+"
        r"(?:thema|beispiel)|weiter\s+geht|(?:das|der|die)\s+nächste|was\s+(?:ist|sind|passiert)|wie\s+"
        r"(?:funktioniert|kann)|warum"
    ),
    announce_phrases=(
        _OPENERS + r"(?:sprechen|reden)\s+wir\s+(?:jetzt\s+|nun\s+)?über(?:\s+(?:den|die|das))?|"
        + _OPENERS + r"kommen\s+wir\s+(?:jetzt\s+|nun\s+)?(?:zum|zur|zu(?:\s+den)?)"
    ),
    instruction_phrases=(
        r"(?:(?:zuerst|dann|danach|jetzt|schließlich|zunächst)[,\s]+)?"
        r"(?:klicken|öffnen|installieren|laden|starten|geben|wählen|drücken|fügen|löschen|kopieren|speichern|"
        r"schließen|verbinden|messen|prüfen|gehen)\s+sie\b|(?:stellen\s+sie\s+sicher|vergessen\s+sie\s+nicht|"
        r"beginnen\s+sie\s+mit)\b|"
        r".*?\b(?:schritt\s+(?:\d+|eins|zwei|drei|vier|fünf)|(?:der\s+)?(?:erste|nächste|letzte)n?\s+schritt)\b"
    ),
    step_openers=r"zuerst|zunächst|als\s+erstes|erstens|beginnen\s+sie\s+mit",
    video_subject_phrases=(
        r"\b(?:diese[mnrs]?|unsere[mnrs]?)\s+(?:kurzen?\s+)?(?:Video|Folge|Episode|Vortrag|Podcast|Präsentation|"
        r"Einführung|Anleitung)\s+(?:über|zum\s+Thema|in)\s+(?:den\s+|die\s+|das\s+)?"
    ),
    conclusion_phrases=r"zusammenfassend|abschließend|zum\s+schluss|alles\s+in\s+allem|fazit",
    sponsor_phrases=r"\bsponsor(?:ed|s)?\b|\bpräsentiert\s+von\b|\bgutscheincode\b|\brabattcode\b",
    question_openers=("warum", "wieso", "weshalb"),
    conjunction="und",
    scales={"tausend": 3, "million": 6, "millionen": 6, "milliarde": 9, "milliarden": 9},
    vague_amounts=(r"mehrere|einige|ein paar|viele", r"hundert|tausend", r"hunderte|tausende"),
    compound_letters=10,
    vague_heads="art menge reihe paar haufen bisschen teil",
    connectors="der die das des von vom zum zur und für mit im",
    pronouns=(
        "ich mich mir du dich dir er sie es wir uns ihr euch ihm ihn ihnen dies diese dieser dieses das "
        "mein meine dein deine sein seine unser unsere euer eure etwas nichts jemand"
    ),
    article_pronouns="das die",
    dangling="und oder aber der die das ein eine des von vom zu zum zur in im für mit",
    verb_signals="ich du er wir ihr man zu",
    articles_of_nouns="der die das den dem des ein eine einen einem einer eines kein keine keinen keinem keiner",
    noun_rule=-1,
    plural_endings=("e", "en", "n", "s", "er"),
    labels={
        "introduction": "Einleitung", "key_facts": "Das Wichtigste", "faq": "Häufige Fragen", "conclusion": "Fazit",
        "step": "Schritt", "in_short": "Kurz gesagt", "analysis": "Analyse", "figures": "Zahlen und Fakten",
        "timeline": "Chronologie", "and": "und", "what": "was ist {t}", "how": "wie funktioniert {t}",
        "why": "warum {t} wichtig ist", "how_to": "wie {t}", "who": "wer ist {t}", "hook": "Einstieg",
        "context": "Kontext", "development": "Hauptteil", "conclusion_part": "Schluss", "chapters": "Kapitel",
        "source": "Quelle", "watch": "Ansehen ab", "question": "F", "answer": "A",
        "also_answered": "Weitere beantwortete Fragen", "main_entities": "Wichtigste Namen und Begriffe",
    },
    colon=": ",
    question_mark="?",
)
