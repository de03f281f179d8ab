"""Spanish: what the service knows of it, and the assistant's Spanish.

The assistant reads requests in it (``REQUESTS``) and answers in it (``ASSISTANT``): its labels,
sentences and the words that ask for its actions, with the same keys as the English home
(``domain.languages.en``; see there). It speaks to the person with "tú", as Spanish software does,
writes the quotation marks « » and says zero in the plural ("0 vídeos").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, optional_words

R = dict[str, Any]


def _credits(s: Say, n: str, r: R, a: R) -> str:
    balance, used = s.n(r.get("balance"), "crédito", "créditos"), s.n(r.get("used"), "usado", "usados")
    return f"Tu saldo es de {balance} ({used} de {r.get('total')}, plan {r.get('plan')})."


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Consumo: {s.n(r.get('totalApiCalls'), 'llamada', 'llamadas')} a la API, "
            f"{s.n(r.get('totalCreditsConsumed'), 'crédito consumido', 'créditos consumidos')}, "
            f"{r.get('averageResponseMs')} ms de media.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return (f"Consumo del modelo de lenguaje: {s.n(totals.get('calls', 0), 'llamada', 'llamadas')}, "
            f"{s.n(totals.get('totalTokens', 0), 'token', 'tokens')}.")


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Espacio de trabajo {s.q(r.get('workspace'))}, plan {r.get('plan')}, "
            f"{s.n(r.get('credits_balance'), 'crédito restante', 'créditos restantes')}; tu clave de "
            f"{r.get('environment')} tiene los permisos {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Supervisión: {s.n(r.get('calls_last_hour'), 'llamada', 'llamadas')} en la última hora (tasa de "
            f"error {r.get('error_rate_last_hour')}), "
            f"{s.n(r.get('jobs_pending'), 'trabajo pendiente', 'trabajos pendientes')}, {r.get('jobs_running')} en "
            f"curso, {s.n(r.get('jobs_failed_24h'), 'fallido', 'fallidos')} en 24 h, "
            f"{s.n(r.get('alerts'), 'alerta activa', 'alertas activas')}.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "No hay ninguna alerta activa."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return (f"{s.n(r['count'], 'alerta activa', 'alertas activas')} "
            f"({s.n(r.get('critical', 0), 'crítica', 'críticas')}): {shown}.")


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Todavía no tienes ningún vídeo."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'vídeo', 'vídeos')}: {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", artículo {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Vídeo {r.get('id')} {s.q(r.get('name'))}: {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'crédito cobrado', 'créditos cobrados')}" if charged is not None else ""
    return f"En cola: {s.label(n, a)}, trabajo {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (una solicitud idéntica anterior, reutilizada)" if r.get("reused") else ""
    return f"{s.label(n, a).capitalize()}: trabajo de clips {r.get('job_id')}{reused} ({r.get('link')})."


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" Primeros: " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):  # the behavioural summaries are written in English
        shown += " En pantalla (en inglés): " + "; ".join(str(f) for f in r["on_screen"]) + "."
    what = s.label(n, a).split(" ", 2)[-1]  # "afirmaciones del vídeo 3"
    return (f"Vídeo {a.get('id')}: {s.n(r.get('count'), 'elemento', 'elementos')} ({what}, "
            f"{r.get('link')}).{shown}")


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Vídeo {a.get('id')}: estructura {', '.join(map(str, r.get('structure') or []))}; capítulos: "
            f"{chapters or 'ninguno'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Grafo de contenido {whose} {a.get('id')}: {s.n(r.get('claims', 0), 'afirmación', 'afirmaciones')}, "
                f"{s.n(r.get('entities', 0), 'entidad', 'entidades')}, "
                f"{s.n(r.get('searchIntents', 0), 'intención de búsqueda', 'intenciones de búsqueda')}, "
                f"{s.n(r.get('clipMoments', 0), 'momento de clip', 'momentos de clip')}, preparación GEO "
                f"{r.get('geo_readiness_score')} ({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "No tienes ningún trabajo."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')} %")
    return f"{s.n(r['count'], 'trabajo', 'trabajos')}: {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", artículo {r['article_id']}" if r.get("article_id") else ""
    return (f"Trabajo {r.get('id')} ({r.get('type')}): {s.status(r.get('status'))}, {r.get('progress')} %, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Todavía no tienes ningún artículo."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'artículo', 'artículos')}: {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Artículo {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, puntuación compuesta "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {s.n(r['bytes'], 'byte', 'bytes')}" if r.get("bytes") is not None else ""
    return f"Exportación del artículo {a.get('id')} en {a.get('format')}{size}: {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Artículo {a.get('id')} {'modificado' if r.get('updated') else 'sin cambios'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{s.n(r.get('count', 0), 'medio', 'medios')}{': ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Medio {r.get('id')} {s.q(r.get('name'))} creado."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (predeterminada)" if x.get("is_default") else ""))
    return f"{s.n(r.get('count', 0), 'plantilla', 'plantillas')}: {shown}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Trabajo de clips {a.get('jobId')}: {s.status(r.get('status'))}, "
            f"{s.n(r.get('clips', 0), 'clip', 'clips')}, "
            f"{s.n(r.get('rendered_clips', 0), 'renderizado', 'renderizados')}, "
            f"{s.n(r.get('failed_clips', 0), 'fallido', 'fallidos')} ({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "No hay ningún candidato a reactivación."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (medio "
                      f"{x.get('media_id')}, puntuación {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'candidato a reactivación', 'candidatos a reactivación')}: {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return (f"Descripciones completadas para el medio {r.get('media_id')} ({drafts}); solicitud "
            f"{r.get('request_id')}.")


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Hecho: {s.label(n, a)}{': ' + facts if facts else ''}."


_KINDS = {"video": "vídeo", "article": "artículo", "job": "trabajo", "media": "medio", "clip_job": "trabajo de clips",
          "template": "plantilla"}


def _missing_id(s: Say, v: R) -> str:
    action = s.label(v.get("action", ""), {}).replace(" ?", "").replace(" {id}", "")
    kind = v.get("kind", "")
    return f"Para {action}, dime qué {_KINDS.get(kind, kind)} (su identificador)."


def _left(count: int) -> str:
    """The actions left undone, with the verb agreeing: "queda 1 acción", "quedan 3 acciones"."""
    return "queda 1 acción pedida" if count == 1 else f"quedan {count} acciones pedidas"


_HELP = ("Puedo: consultar tu saldo, tu consumo y tus alertas; listar o mostrar tus vídeos, trabajos y artículos; "
         "analizar un vídeo (con capítulos, transcripción, un estilo de redacción, en premium); consultar las "
         "afirmaciones, entidades, temas o el grafo de contenido de un vídeo; las puntuaciones, el grafo o la "
         "exportación de un artículo (html, markdown, json, schema, opengraph, txt), traducirlo o regenerarlo; "
         "cortar un clip, detectar y renderizar clips; listar los candidatos a reactivación y completar "
         "descripciones; cancelar un trabajo. Por ejemplo: «analiza el vídeo 12 con los capítulos», «exporta el "
         "artículo 5 en markdown», «los vídeos 3, 4 y 7», «mi saldo y mis alertas». Como máximo 15 acciones por "
         "mensaje.")

_VIDEO_MEMBERS = ("get_claims", "get_entities", "get_intents", "get_moments", "get_topics", "get_visual_elements",
                  "get_audio_elements")

ASSISTANT = AssistantWords(
    quotes=("«", "»"),
    zero_is_singular=False,
    statuses={"pending": "pendiente", "running": "en curso", "completed": "completado", "failed": "fallido",
              "cancelled": "cancelado", "uploaded": "subido", "analyzing": "en análisis", "analyzed": "analizado",
              "queued": "en cola", "eligible": "elegible", "reviewing": "en revisión", "selected": "seleccionado",
              "dismissed": "descartado", "stale": "obsoleto"},
    and_more=" (y más)",
    labels={
        "get_me": "consultar tu espacio de trabajo y tu clave",
        "get_credits": "consultar tu saldo",
        "get_usage": "consultar tu consumo",
        "get_usage_llm": "consultar tu consumo del modelo de lenguaje",
        "get_monitoring": "consultar tu supervisión",
        "get_monitoring_alerts": "consultar tus alertas",
        "list_videos": "listar tus vídeos",
        "get_video": "mostrar el vídeo {id}",
        "get_transcript": "leer la transcripción del vídeo {id}",
        "analyze_video": "analizar el vídeo {id}",
        "get_claims": "consultar las afirmaciones del vídeo {id}",
        "get_entities": "consultar las entidades del vídeo {id}",
        "get_intents": "consultar las intenciones de búsqueda del vídeo {id}",
        "get_moments": "consultar los momentos de clip del vídeo {id}",
        "get_topics": "consultar los temas del vídeo {id}",
        "get_narrative": "consultar la estructura narrativa del vídeo {id}",
        "get_visual_elements": "consultar los elementos visuales del vídeo {id}",
        "get_audio_elements": "consultar los elementos de audio del vídeo {id}",
        "get_video_graph": "consultar el grafo de contenido del vídeo {id}",
        "list_jobs": "listar tus trabajos",
        "get_job": "mostrar el trabajo {id}",
        "cancel_job": "cancelar el trabajo {id}",
        "list_articles": "listar tus artículos",
        "get_article": "mostrar el artículo {id}",
        "get_article_scores": "consultar las puntuaciones del artículo {id}",
        "get_article_graph": "consultar el grafo del artículo {id}",
        # without its format (a note asking for the id), "exportar el artículo" ends there
        "export_article": lambda a: ("exportar el artículo {id} en {format}" if "format" in a
                                     else "exportar el artículo {id}"),
        "update_article": "modificar el artículo {id}",
        "translate_article": "traducir el artículo {id}",
        "list_article_translations": "listar las traducciones del artículo {id}",
        "regenerate_article": "regenerar el artículo {id}",
        "list_medias": "listar tus medios",
        "create_media": "crear el medio",
        "create_video_clip": "cortar un clip del vídeo {id}",
        "list_templates": "listar las plantillas",
        "detect_clips": lambda a: ("detectar clips en el artículo {article_id}" if "article_id" in a
                                   else "detectar clips"),
        "render_clips": "renderizar los clips",
        "get_clip_job": "consultar el trabajo de clips {jobId}",
        "list_revival_candidates": "listar los candidatos a reactivación",
        "complete_descriptions": "completar las descripciones del medio {media_id}",
        "update_revival_candidate": "modificar el candidato {id}",
        "update_video": "cambiar la descripción del vídeo {id}",
    },
    label_unknown="ejecutar {name}",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("del vídeo"),
        "get_article_graph": _graph("del artículo"),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    # the verbs' forms, not their nouns: "analiza" asks for an analysis, "el análisis" does not
    asks={
        "analyze_video": (r"anali[zc]\w*",),
        "cancel_job": (r"cancel\w*", r"anul\w*", r"deten\w*", r"interrump\w*", r"abort\w*"),
        "create_media": (r"cre[ae]\w*", r"nuev\w*", r"anad\w*", r"agreg\w*"),
        "update_article": (r"renombr\w*", r"retitul\w*", r"vincul\w*", r"asoci\w*", r"adjunt\w*"),
        "translate_article": (r"tradu[cz]\w*",),
        "regenerate_article": (r"regener\w*", r"reescrib\w*", r"reha[cz]\w*"),
        "create_video_clip": (r"clip", r"cortar?\w*", r"recort\w*", r"extra[ei]\w*"),
        "detect_clips": (r"detect\w*", r"encuentr\w*", r"busc\w*", r"propon(?:er|ga|gas|me|le)?",
                        r"propone(?:r|me|s)?", r"identific\w*",
                        r"sugier\w*"),
        "render_clips": (r"renderiz\w*", r"produc[ei]\w*", r"genera", r"generar\w*", r"generen?"),
        "complete_descriptions": (r"descripcion\w*", r"completa", r"completar\w*", r"completen?"),
        "update_video": (r"cambi\w*", r"modific\w*", r"actualiz\w*", r"edit\w*", r"reemplaz\w*", r"sustitu\w*"),
        "update_revival_candidate": (r"descart\w*", r"revis(?:a|ar|e|en|alo|ala)", r"candidat\w*", r"reabr\w*",
                                     r"elegib\w*"),
    },
    kind_words={
        "account": (r"quien", r"identidad\w*", r"claves?", r"scopes?", r"permisos?", r"cuentas?", r"espacios?",
                    r"entornos?"),
        "credits": (r"saldos?", r"creditos?", r"dinero", r"plan(?:es)?"),
        "usage": (r"usos?", r"consumos?", r"utilizacion", r"supervision", r"monitori\w*", r"alertas?", r"tokens?",
                  r"llm", r"latencia\w*", r"error(?:es)?", r"estadistic\w*", r"metric\w*", r"peticion\w*",
                  r"solicitud\w*"),
        "jobs": (r"trabajos?", r"tareas?", r"jobs?", r"estados?", r"progreso", r"cola", r"renderizad\w*"),
        "content": (r"videos?", r"articulos?", r"medios?", r"afirmacion\w*", r"entidad\w*", r"intencion\w*",
                    r"momentos?", r"capitulos?", r"narrativ\w*", r"temas?", r"grafos?", r"elementos?",
                    r"transcripcion\w*", r"resum\w*", r"export\w*", r"puntuacion\w*", r"aeo", r"geo",
                    r"traduccion\w*", r"clips?", r"contenidos?", r"canal\w*", r"analisis"),
        "templates": (r"plantillas?", r"clips?", r"renderiz\w*", r"detect\w*"),
        "revival": (r"reactiv\w*", r"candidat\w*", r"descripcion\w*", r"plataformas?"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"No he podido {what}: a tu clave le falta el permiso {scope}.",
    refused=lambda what, why: f"No he podido {what}: {why}.",
    failed=lambda what, why: f"No ha sido posible {what}: {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "Para traducir, dime el idioma de destino (en, de, es, it, pt o nl).",
        "missing_range": lambda s, v: "Para cortar un clip, indica el intervalo, por ejemplo «de 0:10 a 0:40».",
        "missing_name": lambda s, v: "Indica el nombre entre comillas, por ejemplo «Energía de fusión».",
        "range_cut": lambda s, v: f"Un intervalo abarca como máximo {v.get('max')} identificadores; me he quedado "
                                  f"con los {v.get('max')} primeros.",
        "default_format": lambda s, v: f"No has indicado ningún formato: he usado {v.get('format')} (existen html, "
                                       "markdown, json, schema, opengraph y txt).",
        "default_platforms": lambda s, v: f"No has indicado ninguna plataforma: he usado "
                                          f"{', '.join(v.get('platforms') or [])}.",
    },
    unresolved={
        "failed_before": "necesita la respuesta de {name}, que no ha salido bien",
        "not_run": "necesita la respuesta de {name}, que no se ha ejecutado",
        "no_article": "el vídeo {video} todavía no tiene artículo (analízalo primero)",
        "no_template": "no hay ninguna plantilla que usar",
        "template_without_id": "las plantillas no tienen identificador",
        "no_detected_clips": "el trabajo de clips no ha detectado ningún clip (¿ha terminado la detección?)",
        "no_such_clip": "el trabajo de clips solo ha detectado {count}; no existe el clip {clip}",
        "no_candidate": "el medio {media} no tiene ningún candidato a reactivación",
        "unknown_need": "necesidad desconocida {need}",
    },
    performed=lambda count, ok: f"He realizado {count} acciones: {ok} con éxito, {count - ok} sin éxito.",
    not_understood=lambda shown: f"No he entendido: {shown}.",
    missing_scopes=lambda listed: f"Sin hacer por falta de permisos: tu clave no tiene {listed}.",
    model_failed="El modelo de lenguaje ha fallado: ",
    left_undone={
        "cap": lambda count, cap, wait: f"{_left(count).capitalize()} sin hacer: se ejecutan como máximo {cap} "
                                        "acciones por mensaje. Vuelve a pedir el resto.",
        "rate_limited": lambda count, cap, wait: f"{_left(count).capitalize()} sin hacer: se ha alcanzado el límite "
                                                 "de peticiones de tu espacio de trabajo; vuelve a intentarlo"
                                                 f"{f' dentro de {wait} s' if wait else ''}.",
        "stopped": lambda count, cap, wait: f"Interrumpido: {_left(count)} sin hacer.",
    },
    help=_HELP,
)


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
        "export": r"export\w*|descarg\w*", "analyse": r"anali[sz]\w*",
        "results": r"resultados?|del analisis|el analisis de",
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

# how a question read out opens (domain.analysis.text.read_out_question)
_ASKING = r"(?:qué|cómo|por qué|cuándo|dónde|cuál(?:es)?|quién(?:es)?|cuánt[oa]s?)\b"


LANGUAGE = Language(
    code="es",
    markers=frozenset({
        "el", "los", "las", "mi", "mis", "del", "al", "y", "con", "por", "para", "favor", "muestra", "muestrame",
        "dame", "analiza", "exporta", "traduce", "cancela", "cual", "cuales", "cuanto", "cuantos", "cuantas",
        "hola", "gracias", "ayuda", "articulo", "articulos", "trabajos", "tareas", "saldo", "creditos",
        "alertas", "uso", "luego", "despues", "tambien", "quien", "soy", "como", "ultimos", "ultimas",
        "capitulos", "formato", "estado", "plantillas", "este", "esta", "tengo", "hasta", "desde", "lista",
        "trabajo", "tarea", "medio", "plantilla", "deten", "anula", "corta", "renombra", "detecta", "renderiza",
        "haz", "hazme", "dime", "puedes", "descripciones", "crea", "llamado", "llamada",
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
    hesitations="eh ehm em mm hmm",
    leading_fillers="eh este pues bueno y vale entonces ok sí pero",
    comma_openers="finalmente luego después primero segundo ahora también entonces",
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
    definition_phrases=(
        r"\b(?:es|son|era|eran|fue)\s+(?:un|una|unos|unas|el|la|los|las|lo\s+que)\b|\bsignifica\b|"
        r"\bse\s+refiere\s+a\b|\bse\s+define\s+como\b|\bconsiste\s+en\b|\bse\s+llama\b|\bllamamos\b|"
        r"\bse\s+conoce\s+como\b|\bcorresponde\s+a\b"
    ),
    cause_phrases=(
        r"\bporque\b|\bpor\s+lo\s+tanto\b|\bpor\s+eso\b|\bpor\s+esta\s+raz[oó]n\b|\bllevan?\s+a\b|\bcausan?\b|"
        r"\bprovoca|\bdebido\s+a\b|\bgracias\s+a\b|\bpermiten?\b|\bde\s+modo\s+que\b|\bcomo\s+resultado\b|"
        r"\bya\s+que\b|\bpuesto\s+que\b|\bda\s+lugar\s+a\b"
    ),
    comparison_phrases=(
        r"\bm[aá]s\s+(?:de|que)\b|\bmenos\s+(?:de|que)\b|\b(?:el|la|los|las)\s+(?:m[aá]s|mayor(?:es)?|menor(?:es)?)\b|"
        r"\bel\s+primer[oa]?\b|\bla\s+primera\b|\bveces\s+(?:m[aá]s|menos)\b|\bel\s+(?:doble|triple)\b|"
        r"\bmill[oó]n(?:es)?\b|\bla\s+mayor[ií]a\b|\bpor\s+cada\b"
    ),
    hedge_phrases=(
        r"\bcreo\b|\bpienso\b|\bquiz[aá]s?\b|\btal\s+vez\b|\bprobablemente\b|\ben\s+mi\s+opini[oó]n\b|"
        r"\bme\s+parece\b|\bsupongo\b|\bde\s+alguna\s+manera\b"
    ),
    social_phrases=(
        r"\bhola\b|\bbienvenid[oa]s?\b|\bgracias\b|\bsuscr[ií]b|\bnos\s+vemos\b|\bhasta\s+(?:luego|pronto|la\s+pr[oó]xima)\b|"
        r"\badi[oó]s\b"
    ),
    connective_openers="y pero entonces o luego también porque además pues así sino",
    anaphora_openers="esto eso ello él ella ellos ellas es son era eran fue",
    hook_openers=(
        "por qué|cómo|qué pasaría si|sabías que|imagina|imagínate|aquí está|he aquí|"
        "el secreto|la verdad|atención"
    ),
    attribution_phrases="según|dijo|afirma|declaró",
    speech_markers=r"\bo sea\b|\ben plan\b|\bsabes,",
    question_leads="la (?:gran |verdadera |primera )?pregunta(?: para ti| para ustedes)?(?:,[^,?]{1,30},)? es",
    read_questions=(rf"\b(?:pregunta|preguntó|escribe|dice|quiere saber|se pregunta)[,:]?\s+(?={_ASKING})"
                    rf"|\bpreguntas? (?:es |viene )?de [^,.?!]{{1,40}},\s*(?={_ASKING})"
                    r"|\bpreguntas?(?: siguiente)? viene de [^,.?!]{1,40}[.!]?\s*$"),
    tag_questions="verdad|no|vale|sabes|ves|entiendes|ok|okay",
    process_words="cómo|pasos?|proceso|método|funciona",
    month_names=(
        "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre "
        "diciembre"
    ),
    unit_words=(
        r"por\s?ciento|euros?|dólares?|libras?|millones|millón|mil|kilómetros?|metros?|kilos?|toneladas?|"
        r"grados?|vatios?|horas?|minutos?|segundos?|años?|días?|meses|mes|semanas?|veces|habitantes|"
        r"personas|empleados|usuarios"
    ),
    question_openers=("por qué", "cómo"),
    conjunction="y",
    scales={"mil": 3, "millón": 6, "millones": 6},
    indefinite="un una unos unas",
    vague_amounts=(r"varios|varias|algunos|algunas|muchos|muchas", r"cien|mil", r"cientos|miles|centenares"),
    vague_heads="especie forma manera montón poco parte mitad vez veces",
    judgement_words=("bueno buena buenos buenas claro clara claros claras genial geniales increíble increíbles "
                     "interesante interesantes raro rara extraño extraña enorme enormes terrible horrible "
                     "fantástico fantástica maravilloso maravillosa loco loca divertido divertida complicado "
                     "complicada feliz decepcionante"),
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
    verb_endings=("amos", "emos", "imos", "áis", "éis",
                  # gerunds ("diciendo"), and infinitives and gerunds with their pronouns ("traducirlo",
                  # "diciéndonos"): a noun said with these endings ("el comando", "la charla") is said
                  # after a determiner, so it stays a noun
                  "ando", "iendo", "yendo", "rlo", "rla", "rlos", "rlas", "rle", "rles", "rse", "ndolo", "ndola",
                  "ndolos", "ndolas", "ndole", "ndoles", "ndonos", "ndose", "ndome"),
    contractions="del al",
    plural_endings=("s", "es"),
    adverb_endings=("mente",),  # "extraordinariamente" of "extraordinaria"; "la mente" is too short a rest
    definite={"del": "el", "al": "el"},
    definite_articles=("el", "la", "los", "las"),
    aspect_articles={"el": "del", "la": "de la", "los": "de los", "las": "de las"},
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
    assistant=ASSISTANT,
)
