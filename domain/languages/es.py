"""Spanish: what the service knows of it (see ``domain.languages.base``).

The assistant does not speak it: a reply to a message in it is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, optional_words

# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"primero|luego|después|ahora|finalmente|por\s+último|para\s+terminar")

LANGUAGE = Language(
    code="es",
    name="Spanish",
    locale="es_ES",
    stemmer="spanish",
    called=r"spanish|espagnol",
    spoken_fillers=(
        "eh em ehm este pues bueno vale o sea tipo vamos verdad okay ok entonces digamos realmente "
        "hola bienvenidos gracias adiós"
    ),
    leading_fillers="eh este pues bueno y vale entonces ok sí pero",
    leading_words="bueno pues y pero vale entonces bien eh",
    cue_phrases=(
        r"ahora|a\s+continuación|pasemos|hablemos|vamos\s+(?:a|con)|veamos|primero|segundo|tercero|"
        r"en\s+(?:primer|segundo|tercer)\s+lugar|finalmente|por\s+último|para\s+(?:terminar|concluir|empezar)|"
        r"en\s+conclusión|otro\s+(?:tema|punto|ejemplo)|(?:el|la)\s+siguiente|¿?\s*qué\s+es|¿?\s*cómo|¿?\s*por\s+qué"
    ),
    announce_phrases=(
        _OPENERS + r"hablemos\s+(?:ahora\s+|un\s+poco\s+)?(?:de\s+la|de\s+los|de\s+las|del|de)|"
        + _OPENERS + r"pasemos\s+(?:ahora\s+)?(?:a\s+la|a\s+los|a\s+las|al)"
    ),
    instruction_phrases=(
        r"(?:(?:primero|luego|después|ahora|finalmente)[,\s]+)?"
        r"(?:haz\s+clic|pulsa|abre|instala|descarga|ejecuta|escribe|selecciona|presiona|inserta|borra|pega|"
        r"guarda|conecta|vierte|mezcla|ve\s+a|comprueba|mide|asegúrate|no\s+olvides|empieza\s+por)\b|"
        r".*?\b(?:paso\s+(?:\d+|uno|dos|tres|cuatro|cinco)|(?:el\s+)?(?:primer|siguiente|último)\s+paso)\b"
    ),
    step_openers=r"primero|para\s+empezar|empieza|comienza|en\s+primer\s+lugar",
    video_subject_phrases=(
        r"\b(?:este|esta)\s+(?:(?:breve|pequeño|pequeña)\s+)?(?:vídeo|video|episodio|clase|podcast|presentación|"
        r"guía|introducción)\s+(?:sobre|acerca\s+de|a)\s+(?:la\s+|el\s+|los\s+|las\s+)?"
    ),
    conclusion_phrases=r"en\s+conclusión|para\s+concluir|en\s+resumen|para\s+terminar|en\s+definitiva",
    sponsor_phrases=r"\bpatrocina(?:dor|do|da)\b|\bcódigo\s+(?:promocional|de\s+descuento)\b",
    question_openers=("por qué", "cómo"),
    conjunction="y",
    scales={"mil": 3, "millón": 6, "millones": 6},
    indefinite="un una unos unas",
    vague_amounts=(r"varios|varias|algunos|algunas|muchos|muchas", r"cien|mil", r"cientos|miles|centenares"),
    vague_heads="especie forma manera montón poco parte mitad",
    connectors="de del la el y en para con",
    pronouns=(
        "yo me mí tú te ti él ella ello nosotros nosotras vosotros ellos ellas le les lo la los las se esto eso "
        "aquello este esta ese esa mi mis tu tus su sus nuestro nuestra algo nada alguien"
    ),
    article_pronouns="la las los lo",
    dangling="y o pero el la los las un una de del a al en para con por",
    verb_signals="yo tú él ella nosotros ellos ellas se me te no para",
    determiners=(
        "el la los las lo un una unos unas del al este esta estos estas ese esa esos esas aquel aquella mi mis tu "
        "tus su sus nuestro nuestra nuestros nuestras cada varios varias algunos algunas todo toda todos todas"
    ),
    noun_rule=0,
    verb_endings=("amos", "emos", "imos", "áis", "éis"),
    contractions="del al",
    plural_endings=("s", "es"),
    definite={"del": "el", "al": "el"},
    definite_articles=("el", "la", "los", "las"),
    plural_articles={"los", "las"},
    plural_templates={"what": "qué son {t}", "how": "cómo funcionan {t}", "why": "por qué importan {t}"},
    org_tail=(
        "al|ales|ana|anas|ano|anos|ica|icas|ico|icos|ense|enses|ista|istas|ea|eas|eo|eos",
        r"de\s+la\s+|de\s+los\s+|de\s+las\s+|del\s+|de\s+",
        r"que|el|la|los|las|un|una",
    ),
    labels={
        "introduction": "Introducción", "key_facts": "Puntos clave", "faq": "Preguntas frecuentes",
        "conclusion": "Conclusión", "step": "Paso", "in_short": "En resumen", "analysis": "Análisis",
        "figures": "Cifras y datos", "timeline": "Cronología", "and": "y", "what": "qué es {t}",
        "how": "cómo funciona {t}", "why": "por qué importa {t}", "how_to": "cómo {t}", "who": "quién es {t}",
        "hook": "gancho", "context": "contexto", "development": "desarrollo", "conclusion_part": "conclusión",
        "chapters": "Capítulos", "source": "Fuente", "watch": "Ver en", "question": "P", "answer": "R",
        "also_answered": "Otras preguntas respondidas", "main_entities": "Entidades principales",
    },
    colon=": ",
    question_mark="?",
)
