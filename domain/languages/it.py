"""Italian: what the service knows of it (see ``domain.languages.base``).

The assistant does not speak it: a reply to a message in it is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, optional_words

# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"prima\s+di\s+tutto|innanzitutto|poi|ora|adesso|infine|per\s+finire")

LANGUAGE = Language(
    code="it",
    markers=frozenset({
        "il", "gli", "lo", "della", "dello", "dei", "degli", "delle", "mio", "miei", "mia", "mie", "mostra",
        "mostrami", "elenca", "esporta", "traduci", "analizza", "annulla", "ciao", "grazie", "per", "favore",
        "con", "che", "quanti", "quante", "quale", "sono", "poi", "anche", "articolo", "articoli", "lavori",
        "saldo", "avvisi", "ultimi", "ultime", "capitoli", "dammi", "chi",
    }),
    letters="ìò",
    name="Italian",
    locale="it_IT",
    stemmer="italian",
    called=r"italian|italien",
    spoken_fillers=(
        "ehm eh uhm cioè allora insomma tipo praticamente diciamo okay ok beh vabbè ciao benvenuti grazie "
        "arrivederci"
    ),
    leading_fillers="ehm eh allora cioè e beh ok okay sì ma",
    leading_words="allora bene ok e ma dunque ehm",
    cue_phrases=(
        r"ora|adesso|passiamo|parliamo|vediamo|prima\s+di\s+tutto|innanzitutto|per\s+prima\s+cosa|"
        r"in\s+(?:primo|secondo|terzo)\s+luogo|infine|per\s+(?:concludere|finire|iniziare)|in\s+conclusione|"
        r"un\s+altro\s+(?:punto|tema|esempio)|(?:il|la)\s+prossim[oa]|che\s+cos['’]è|come|perché"
    ),
    announce_phrases=(
        _OPENERS + r"parliamo\s+(?:ora\s+|adesso\s+)?(?:dello|della|dei|degli|delle|dell['’]|del|di)|"
        + _OPENERS + r"passiamo\s+(?:ora\s+|adesso\s+)?(?:allo|alla|ai|agli|alle|all['’]|al)"
    ),
    instruction_phrases=(
        r"(?:(?:prima|poi|quindi|adesso|ora|infine)[,\s]+)?"
        r"(?:clicca|apri|installa|scarica|esegui|digita|seleziona|premi|inserisci|cancella|incolla|salva|"
        r"collega|versa|mescola|vai\s+su|controlla|misura|assicurati|non\s+dimenticare|inizia\s+con)\b|"
        r".*?\b(?:passo\s+(?:\d+|uno|due|tre|quattro|cinque)|(?:il\s+)?(?:primo|prossimo|ultimo)\s+passo)\b"
    ),
    step_openers=r"prima\s+di\s+tutto|innanzitutto|per\s+prima\s+cosa|inizia|comincia|in\s+primo\s+luogo",
    video_subject_phrases=(
        r"\b(?:questo|questa)\s+(?:(?:breve|piccolo|piccola)\s+)?(?:video|episodio|lezione|podcast|presentazione|"
        r"guida|introduzione)\s+(?:sull['’]|(?:sul|sullo|sulla|sui|sugli|sulle|su)\s+)"
    ),
    conclusion_phrases=r"in\s+conclusione|per\s+concludere|riassumendo|in\s+sintesi|per\s+finire",
    sponsor_phrases=r"\bsponsor\b|\bcodice\s+(?:sconto|promozionale)\b",
    question_openers=("perché", "come mai"),
    conjunction="e",
    scales={"mila": 3, "mille": 3, "milione": 6, "milioni": 6, "miliardo": 9, "miliardi": 9},
    indefinite="un uno una",
    vague_heads="sorta specie modo maniera mucchio po parte metà",
    connectors="di del della dei delle e in per con",
    pronouns=(
        "io me mi tu te ti lui lei egli ella noi ci voi vi loro esso essa questo questa quello quella mio mia "
        "tuo tua suo sua nostro nostra qualcosa niente nulla qualcuno"
    ),
    article_pronouns="lo la le",
    dangling="e o ma il lo la i gli le un una di del della a al in per con da",
    verb_signals="io tu lui lei noi voi loro si mi ti ci vi non per",
    determiners=(
        "il lo la i gli le l un uno una del dello della dei degli delle dell al allo alla ai agli alle all nel "
        "nello nella nei negli nelle nell sul sullo sulla sui sugli sulle sull dal dallo dalla dai dagli dalle "
        "dall questo questa questi queste quest quel quello quella quei quegli quelle quell mio mia miei mie tuo "
        "tua tuoi tue suo sua suoi sue nostro nostra nostri nostre ogni alcuni alcune"
    ),
    noun_rule=0,
    verb_endings=("iamo", "iate"),
    contractions=(
        "del dello della dei degli delle dell al allo alla ai agli alle all nel nello nella nei negli nelle nell "
        "sul sullo sulla sui sugli sulle sull dal dallo dalla dai dagli dalle dall"
    ),
    plural_endings=(),
    definite={f"{p}{a}": article for p in ("de", "a", "ne", "su", "da")
    for a, article in (("l", "il"), ("llo", "lo"), ("lla", "la"), ("lle", "le"), ("gli", "gli"), ("i", "i"),
                       ("ll", "l"))},
    definite_articles=("il", "lo", "la", "i", "gli", "le", "l"),
    plural_articles={"i", "gli", "le"},
    plural_templates={"what": "cosa sono {t}", "how": "come funzionano {t}", "why": "perché {t} sono importanti"},
    org_tail=(
        "ale|ali|ana|ane|ano|ani|ica|iche|ico|ici|ese|esi|ina|ine|ino|ini|aria|arie|ario|ari|ea|ee|eo|ei",
        r"dell['’]|della\s+|dello\s+|del\s+|dei\s+|degli\s+|delle\s+|di\s+|per\s+l['’]|per\s+la\s+",
        r"che|il|lo|la|i|gli|le|l['’]|un|una|uno",
    ),
    labels={
        "introduction": "Introduzione", "key_facts": "Punti chiave", "faq": "Domande frequenti",
        "conclusion": "Conclusione", "step": "Passo", "in_short": "In breve", "analysis": "Analisi",
        "figures": "Cifre e fatti", "timeline": "Cronologia", "and": "e", "what": "cos'è {t}",
        "how": "come funziona {t}", "why": "perché {t} è importante", "how_to": "come {t}", "who": "chi è {t}",
        "hook": "aggancio", "context": "contesto", "development": "sviluppo", "conclusion_part": "conclusione",
        "chapters": "Capitoli", "source": "Fonte", "watch": "Guarda a", "question": "D", "answer": "R",
        "also_answered": "Altre domande trattate", "main_entities": "Entità principali",
    },
    colon=": ",
    question_mark="?",
)
