"""Spanish: what the service knows of it (see ``domain.languages.base``).

The assistant reads requests in it (``REQUESTS``) but does not speak it: a reply to a message in it
is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, RequestWords, optional_words

# How a message asks for things in Spanish (domain.agent.planner reads them, folded: no accents).
REQUESTS = RequestWords(
    verbs=(r"muestra|muestrame|mostrar|ensena|ensename|lista|listar|dame|analiza|analizar|exporta|exportar|cancela|"
           r"cancelar|detecta|detectar|renderiza|renderizar|traduce|traducir|regenera|regenerar|renombra|renombrar|"
           r"corta|cortar|extrae|extraer|crea|crear|completa|completar|busca|buscar|encuentra|cual|cuales|cuanto|"
           r"cuantos|cuantas|descarga|descargar|abre|lee"),
    sequence=r"y luego|luego|y despues|despues|despues de eso|finalmente|por ultimo",
    conjunction="y",
    also="tambien",
    polite="por favor",
    determiners="el |los |la |las |mi |mis ",
    kinds={"video": r"videos?", "article": r"articulos?", "job": r"jobs?|trabajos?|tareas?", "media": r"medios?",
           "template": r"plantillas?", "clip": r"clips?"},
    numbered=r"numeros?",
    joins=r"y|e|o|u",
    ranges=r"a|hasta",
    this=r"este|esta|ese|esa|el mismo|la misma",
    counted=r"videos?|trabajos?|tareas?|articulos?|candidat\w*|medios?",
    limit_before=r"ultim\w*|primer\w*|limite",
    limit_after=r"ultim\w*|primer\w*|recientes?",
    seconds=r"s|seg|segundos?",
    minutes=r"min|minutos?",
    time_from=r"de|desde|entre",
    time_to=r"a|y|hasta",
    language_word=r"idioma|lengua|destino|codigo",
    languages={"en": r"ingles", "fr": r"frances", "de": r"aleman", "es": r"espanol|castellano", "it": r"italiano",
               "pt": r"portugues", "nl": r"neerlandes|holandes"},
    without_article=r"sin\s*(?:el |un )?articulo",
    styles={"journalistic": r"periodisti\w*", "narrative": r"narrativ\w*", "analytical": r"analitic\w*",
            "tutorial": r"tutorial\w*", "conversational": r"conversacional\w*", "documentary": r"documental\w*",
            "interview": r"entrevista\w*"},
    statuses={"eligible": r"elegib\w*", "reviewing": r"en revision|por revisar", "selected": r"seleccionad\w*",
              "dismissed": r"descartad\w*|rechazad\w*", "stale": r"obsolet\w*|caducad\w*"},
    platforms={"professional_network_long": r"red profesional", "short_video_app": r"aplicacion de videos cortos"},
    all_platforms=r"(?:todas|cada)\s+(?:las\s+)?plataformas?",
    asks={
        "cancel": r"cancel\w*|anul\w*|deten\w*|interrump\w*", "translate": r"tradu\w*",
        "translations": r"traducciones\b", "translate_verb": r"traduce\b|traduci\w*",
        "regenerate": r"regener\w*|reescrib\w*", "rename": r"renombr\w*", "rename_to": r"a|como|en",
        "attach": r"vincul\w*|asoci\w*|adjunt\w*", "descriptions": r"descripcion\w*",
        "write": r"complet\w*|redact\w*|escrib\w*|rellen\w*|gener\w*", "clips": r"clips?|fragmentos?",
        "moments": r"momentos?", "detect": r"detect\w*|encuentr\w*|busc\w*|propon\w*|identific\w*|sugier\w*",
        "generate": r"gener\w*|haz|hacer|crea\w*", "render": r"renderiz\w*|produc\w*|gener\w*",
        "track": r"seguimiento|estado|progreso", "cut": r"cort\w*|recort\w*|extra[ei]\w*",
        "candidates": r"candidat\w*|reactiv\w*|relanz\w*", "at_least": r"al menos|mas de|superior a",
        "export": r"export\w*|descarg\w*", "analyse": r"anali[sz]\w*", "results": r"resultados?|del analisis",
        "run": r"analiza\b|analizar|ejecuta|lanza|inicia", "chapters": r"capitul\w*", "transcript": r"transcrip\w*",
        "behavioral": r"comportamiento\w*|conductual\w*", "premium": r"premium|alta calidad|mejor calidad",
        "scores": r"puntuacion\w*|puntajes?|notas?\b", "graph": r"grafo\w*", "create": r"crea\w*|nuev\w*|anad\w*",
        "named": r"llamad\w*|nombrad\w*|titulad\w*", "status": r"estado",
    },
    account={
        "get_usage_llm": r"llm|tokens?|modelos? de lenguaje", "get_credits": r"saldo|creditos?",
        "get_usage": r"uso|consumo|llamadas|gast\w*|consumid\w*", "get_monitoring_alerts": r"alertas?|avisos?",
        "get_monitoring": r"monitorizacion|monitoreo|supervision|salud|panel",
        "get_me": r"quien soy|mi espacio|mi plan|mi clave|mis scopes",
    },
    video_reads={
        "get_claims": r"afirmaciones?|hechos?", "get_entities": r"entidad\w*",
        "get_intents": r"intenciones?|consultas?|preguntas?", "get_moments": r"momentos?|destacad\w*",
        "get_topics": r"temas?", "get_narrative": r"narrativ\w*|estructura|capitulos?",
        "get_visual_elements": (r"visual\w*|planos?|escenas?|gestos?|mirada|postura|lenguaje corporal|expresion\w*|"
                                r"sonri\w*|manos?|comportamiento\w*"),
        "get_audio_elements": r"audio|sonid\w*|silencios?|volumen",
    },
    help=r"ayuda|hola|gracias|que puedes hacer|que sabes hacer|comandos?",
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"primero|luego|después|ahora|finalmente|por\s+último|para\s+terminar")

LANGUAGE = Language(
    code="es",
    markers=frozenset({
        "el", "los", "las", "mi", "mis", "del", "al", "y", "con", "por", "para", "favor", "muestra", "muestrame",
        "dame", "analiza", "exporta", "traduce", "cancela", "cual", "cuales", "cuanto", "cuantos", "cuantas",
        "hola", "gracias", "ayuda", "articulo", "articulos", "trabajos", "tareas", "saldo", "creditos",
        "alertas", "uso", "luego", "despues", "tambien", "quien", "soy", "como", "ultimos", "ultimas",
        "capitulos", "formato", "estado", "plantillas", "este", "esta", "tengo", "hasta", "desde", "lista",
    }),
    letters="ñáíóú¿¡",
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
    requests=REQUESTS,
)
