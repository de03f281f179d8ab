"""German: what the service knows of it (see ``domain.languages.base``).

The assistant reads requests in it (``REQUESTS``) but does not speak it: a reply to a message in it
is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, RequestWords, optional_words

# How a message asks for things in German (domain.agent.planner reads them, folded: no umlauts).
REQUESTS = RequestWords(
    verbs=(r"zeig|zeige|zeigen|liste|listen|auflisten|gib|analysiere|analysieren|exportiere|exportieren|"
           r"storniere|stornieren|abbrechen|erkenne|erkennen|finde|finden|rendere|rendern|ubersetze|ubersetzen|"
           r"regeneriere|regenerieren|benenne|schneide|schneiden|erstelle|erstellen|vervollstandige|erganze|"
           r"erganzen|lade|offne|lies|welche|welcher|welches|wie"),
    sequence=r"und dann|dann|danach|anschlie(?:ß|ss)end|schlie(?:ß|ss)lich|zuletzt",
    conjunction="und",
    also="auch",
    polite="bitte",
    determiners="der |die |das |den |dem |mein |meine |meinen |meiner ",
    kinds={"video": r"videos?", "article": r"artikel\w*", "job": r"jobs?|auftrage?n?|aufgaben?",
           "media": r"medien|medium", "template": r"vorlagen?", "clip": r"clips?"},
    numbered=r"nummer",
    joins=r"und|oder",
    ranges=r"bis",
    this=r"diese[snmr]?|dies|das gleiche|derselbe|dieselbe|dasselbe",
    counted=r"videos?|jobs?|auftrage?n?|artikel\w*|kandidat\w*|medien",
    limit_before=r"letzten?|neuesten?|ersten?|limit",
    limit_after=r"letzten?|neuesten?|ersten?",
    seconds=r"s|sek|sekunden?",
    minutes=r"min|minuten?",
    time_from=r"von|zwischen|ab",
    time_to=r"bis|und",
    language_word=r"sprache|zielsprache|code",
    languages={"en": r"englisch\w*", "fr": r"franzosisch\w*", "de": r"deutsch\w*", "es": r"spanisch\w*",
               "it": r"italienisch\w*", "pt": r"portugiesisch\w*", "nl": r"niederlandisch\w*"},
    without_article=r"ohne\s*(?:einen |den )?artikel",
    styles={"journalistic": r"journalisti\w*", "narrative": r"narrativ\w*|erzahlend\w*", "analytical": r"analytisch\w*",
            "tutorial": r"tutorial\w*|anleitung\w*", "conversational": r"gesprach\w*|dialog\w*",
            "documentary": r"dokumentar\w*", "interview": r"interview\w*"},
    statuses={"eligible": r"geeignet\w*", "reviewing": r"in prufung|zu prufen", "selected": r"ausgewahlt\w*",
              "dismissed": r"verworfen\w*|abgelehnt\w*", "stale": r"veraltet\w*"},
    platforms={"professional_network_long": r"berufliche[sn]? netzwerk", "short_video_app": r"kurzvideo[- ]app"},
    all_platforms=r"(?:alle|jede)\s+(?:die\s+)?plattformen?",
    asks={
        "cancel": r"storn\w*|abbrech\w*|abbruch", "translate": r"ubersetz\w*", "translations": r"ubersetzungen\b",
        "translate_verb": r"ubersetze\b|ubersetzen\b", "regenerate": r"regenerier\w*|umschreib\w*|neu schreib\w*",
        "rename": r"umbenenn\w*|benenne\w*", "rename_to": r"zu|als", "attach": r"verknupf\w*|zuordn\w*",
        "descriptions": r"beschreibung\w*", "write": r"vervollstandig\w*|erganz\w*|schreib\w*|generier\w*|erstell\w*",
        "clips": r"clips?|ausschnitte?", "moments": r"momente?",
        "detect": r"erkenn\w*|finde\w*|suche\w*|sucht|vorschlag\w*|identifizier\w*",
        "generate": r"generier\w*|erstell\w*|mache|machen", "render": r"render\w*|produzier\w*|generier\w*",
        "track": r"status|fortschritt|verfolg\w*", "cut": r"schneid\w*|ausschneid\w*|extrahier\w*",
        "candidates": r"kandidat\w*|wiederbeleb\w*|reaktivier\w*", "at_least": r"uber|mindestens|mehr als",
        "export": r"exportier\w*|herunterlad\w*", "analyse": r"analy[sz]\w*", "results": r"ergebnis\w*|der analyse",
        "run": r"analysiere\b|analysieren|starte\b|starten", "chapters": r"kapitel\w*", "transcript": r"transkri\w*",
        "behavioral": r"verhalten\w*", "premium": r"premium|hohe[rn]? qualitat|beste[rn]? qualitat",
        "scores": r"bewertung\w*|punktzahl\w*", "graph": r"graph\w*", "create": r"erstell\w*|neue[snmr]?\b|anlegen",
        "named": r"namens|genannt|betitelt", "status": r"status|zustand",
    },
    account={
        "get_usage_llm": r"llm|tokens?|sprachmodell\w*", "get_credits": r"guthaben|kontostand|credits?",
        "get_usage": r"nutzung|verbrauch\w*|aufrufe", "get_monitoring_alerts": r"warnungen|warnung|alarm\w*",
        "get_monitoring": r"uberwachung|monitoring|dashboard",
        "get_me": r"wer bin ich|mein arbeitsbereich|mein plan|mein schlussel|meine scopes",
    },
    video_reads={
        "get_claims": r"aussagen|behauptungen|fakten", "get_entities": r"entitat\w*",
        "get_intents": r"suchintention\w*|suchanfragen|fragen", "get_moments": r"momente|highlights",
        "get_topics": r"themen|thema", "get_narrative": r"narrativ\w*|struktur|kapitel",
        "get_visual_elements": (r"visuell\w*|einstellungen|szenen?|gesten|blick\w*|haltung|korpersprache|mimik|"
                                r"lacheln|hande|verhalten\w*"),
        "get_audio_elements": r"audio|stille|lautstarke",
    },
    help=r"hilfe|hallo|danke|was kannst du|befehle",
)


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
    requests=REQUESTS,
)
