"""The assistant speaks Spanish: a message written in Spanish is planned (``domain.agent.planner``)
and its reply composed (``domain.agent.reply``) in Spanish end to end, with Spanish plurals, quotation
marks and statuses and no English frame; and the words of a Spanish message ask for the writes it
names (``domain.agent.policy.asked_writes``), never for one a read-only message does not name."""

from __future__ import annotations

import re
from typing import Any

import pytest

from domain.agent.actions import ACTIONS
from domain.agent.planner import Context, plan
from domain.agent.policy import asked_writes
from domain.agent.prompt import system_prompt
from domain.agent.reply import ActionView, compose, describe, label, missing_scopes, model_failed
from domain.languages import ASSISTANT_LANGUAGES, say

JOB = "0f8fad5b-d9cb-469f-a165-70867728950e"

# Words of the English reply's frame: none may be left in a Spanish reply.
ENGLISH_FRAME = ("Done", "I could not", "I did not", "I can", "I performed", "understand", "read your",
                 "Your balance", "Queued", "tell me", "No format", "requested actions", "(and more)", "lacks",
                 "credits", "charged", "Job ", "Video ", "Article ", "show ", "analyse ")


def ok(result: dict) -> tuple[str, dict, None]:
    return "ok", result, None


def failed(code: str, message: str = "", **details: object) -> tuple[str, None, dict]:
    return "failed", None, {"code": code, "message": message, "details": details}


def reply(message: str, *outcomes: tuple, context: Context | None = None, **frame: Any) -> list[str]:
    """The lines of the offline reply to ``message``: its plan, each planned action with its
    outcome in order (an action past the outcomes given is left out), composed in the plan's
    language; which must be Spanish, with no English frame word in it."""
    p = plan(message, context)
    assert p.language == "es", message
    views = [ActionView(a.name, a.arguments, *outcome) for a, outcome in zip(p.actions, outcomes, strict=False)]
    text = compose(p.language, views, notes=p.notes, not_understood=p.not_understood, asked_help=p.asked_help,
                   **frame)
    assert [w for w in ENGLISH_FRAME if w in text] == [], text
    return text.splitlines()


# ------------------------------------------------------------------------------------ the reply


def test_the_balance_is_told_in_spanish_with_its_singular_and_plural():
    assert reply("¿cuál es mi saldo?", ok({"balance": 999, "used": 1, "total": 1000, "plan": "free"})) == [
        "Tu saldo es de 999 créditos (1 usado de 1000, plan free)."]
    assert reply("mi saldo, por favor", ok({"balance": 990, "used": 10, "total": 1000, "plan": "pro"})) == [
        "Tu saldo es de 990 créditos (10 usados de 1000, plan pro)."]


def test_a_video_and_its_analysis_are_read_in_spanish():
    video = {"id": 12, "name": "Bombas de calor", "status": "analyzed", "duration_seconds": 95, "article_id": 4,
             "link": "/v1/videos/12"}
    assert reply("muéstrame el vídeo 12", ok(video)) == [
        "Vídeo 12 «Bombas de calor»: analizado, 95 s, artículo 4 (/v1/videos/12)."]
    topics = {"count": 2, "first": ["Energía", "Clima"], "link": "/v1/videos/3/topics"}
    entities = {"count": 1, "first": ["Madrid"], "link": "/v1/videos/3/entities"}
    assert reply("los temas y las entidades del vídeo 3", ok(topics), ok(entities)) == [
        "Vídeo 3: 2 elementos (temas del vídeo 3, /v1/videos/3/topics). Primeros: «Energía»; «Clima».",
        "Vídeo 3: 1 elemento (entidades del vídeo 3, /v1/videos/3/entities). Primeros: «Madrid»."]


def test_a_list_of_jobs_is_told_in_spanish_with_its_statuses():
    jobs = [{"id": "j-1", "type": "analysis", "status": "running", "progress": 40},
            {"id": "j-2", "type": "analysis", "status": "completed", "progress": 100}]
    assert reply("los 5 últimos trabajos", ok({"count": 2, "jobs": jobs})) == [
        "2 trabajos: j-1 analysis en curso 40 %; j-2 analysis completado 100 %."]
    assert reply("mis trabajos", ok({"count": 1, "jobs": jobs[:1]})) == ["1 trabajo: j-1 analysis en curso 40 %."]
    assert reply("mis trabajos", ok({"count": 0, "jobs": []})) == ["No tienes ningún trabajo."]


def test_a_write_refused_for_a_missing_scope_names_the_scope_in_spanish():
    refused = ("refused", None, {"code": "insufficient_scope", "message": "m",
                                 "details": {"required": "analyses:create"}})
    assert reply("analiza el vídeo 3", refused) == [
        "No he podido analizar el vídeo 3: a tu clave le falta el permiso analyses:create."]
    view = ActionView("analyze_video", {"id": 3}, *refused)
    assert missing_scopes([view], "", "es") == "Sin hacer por falta de permisos: tu clave no tiene analyses:create."


def test_an_unknown_id_is_told_in_spanish():
    assert reply("muéstrame el artículo 99", failed("not_found", "article not found")) == [
        "No ha sido posible mostrar el artículo 99: article not found."]


def test_an_argument_missing_from_the_earlier_answers_is_told_in_spanish():
    no_article = {"id": 12, "name": "Bombas de calor", "status": "uploaded", "duration_seconds": 95,
                  "link": "/v1/videos/12"}
    lines = reply("detecta clips en el vídeo 12", ok({"count": 1, "templates": [{"id": 1, "name": "Corto",
                                                                                 "format": "9:16"}]}),
                  ok(no_article), failed("not_resolved", "not done", reason="no_article", video=12))
    assert lines == ["1 plantilla: #1 «Corto» 9:16.", "Vídeo 12 «Bombas de calor»: subido, 95 s (/v1/videos/12).",
                     "No ha sido posible detectar clips: el vídeo 12 todavía no tiene artículo (analízalo primero)."]


def test_the_help_is_in_spanish_and_its_examples_are_read_as_asked():
    (help_text,) = reply("hola")
    assert help_text.startswith("Puedo: consultar tu saldo") and help_text == reply("¿qué puedes hacer?")[0]
    examples = re.findall(r"«([^»]+)»", help_text)
    assert len(examples) == 4
    for example in examples:
        p = plan(example)
        assert p.language == "es" and p.actions and not p.notes and not p.not_understood, example


def test_the_notes_of_a_plan_are_in_spanish():
    export = {"bytes": 2048, "link": "/v1/articles/5/export?format=markdown"}
    assert reply("exporta el artículo 5", ok(export)) == [
        "Exportación del artículo 5 en markdown, 2048 bytes: /v1/articles/5/export?format=markdown.",
        "No has indicado ningún formato: he usado markdown (existen html, markdown, json, schema, opengraph y txt)."]
    assert reply("analiza el vídeo") == ["Para analizar el vídeo, dime qué vídeo (su identificador)."]
    assert reply("exporta el artículo")[1] == "Para exportar el artículo, dime qué artículo (su identificador)."
    assert reply("traduce el artículo 5") == ["Para traducir, dime el idioma de destino (en, de, es, it, pt o nl)."]
    assert reply("corta el vídeo 3") == ["Para cortar un clip, indica el intervalo, por ejemplo «de 0:10 a 0:40»."]


def test_what_was_not_understood_is_quoted_in_spanish():
    assert reply("mi saldo y luego hazme una tortilla", ok({"balance": 5, "used": 5, "total": 10, "plan": "pro"})) == [
        "Tu saldo es de 5 créditos (5 usados de 10, plan pro).", "No he entendido: «hazme una tortilla»."]


def test_actions_left_undone_are_counted_in_spanish():
    videos = [ok({"id": i, "name": f"V{i}", "status": "analyzed", "duration_seconds": 60, "link": f"/v1/videos/{i}"})
              for i in range(1, 16)]
    assert len(plan("los vídeos 1 a 17").actions) == 17
    lines = reply("los vídeos 1 a 17", *videos, left=2, left_reason="cap", cap=15)
    assert lines[0] == "He realizado 15 acciones: 15 con éxito, 0 sin éxito."
    assert lines[-1] == ("Quedan 2 acciones pedidas sin hacer: se ejecutan como máximo 15 acciones por mensaje. "
                         "Vuelve a pedir el resto.")
    assert reply("los vídeos 1 y 2", videos[0], left=1, left_reason="rate_limited", retry_after_s=12)[-1] == (
        "Queda 1 acción pedida sin hacer: se ha alcanzado el límite de peticiones de tu espacio de trabajo; vuelve a "
        "intentarlo dentro de 12 s.")
    assert reply("los vídeos 1 a 4", *videos[:1], left=3, left_reason="stopped")[-1] == (
        "Interrumpido: quedan 3 acciones pedidas sin hacer.")


def test_an_analysis_queued_says_the_credits_charged_in_the_singular_and_the_plural():
    queued = {"job_id": "j-1", "credits_charged": 1, "link": "/v1/jobs/j-1"}
    assert reply("analiza el vídeo 3", ok(queued)) == [
        "En cola: analizar el vídeo 3, trabajo j-1, 1 crédito cobrado (/v1/jobs/j-1)."]
    assert reply("analiza el vídeo 3", ok({**queued, "credits_charged": 3}))[0].endswith(
        ", 3 créditos cobrados (/v1/jobs/j-1).")


def test_zero_is_plural_in_spanish():
    assert say("es").n(0, "vídeo", "vídeos") == "0 vídeos" and say("es").n(1, "vídeo", "vídeos") == "1 vídeo"
    assert say("es").q("Fusión") == "«Fusión»"


def test_every_action_is_described_in_spanish_without_a_placeholder():
    results = {"get_me": {"scopes": ["*"]}, "list_videos": {"count": 0}, "list_jobs": {"count": 1, "jobs": [{}]},
               "list_medias": {"count": 1, "medias": [{"id": 1, "name": "Podcast"}]}}
    for name in ACTIONS:
        view = ActionView(name, {"id": 1, "format": "html", "media_id": 2, "jobId": "c"}, "ok",
                          results.get(name, {}), None)
        sentence = describe(view, "es")
        assert sentence and "{" not in sentence and sentence != describe(view, "en"), (name, sentence)
        assert "?" not in label(name, {"id": 1, "format": "html", "media_id": 2, "jobId": "c"}, "es"), name
    assert describe(ActionView("list_medias", {}, "ok", results["list_medias"], None), "es") == "1 medio: #1 «Podcast»."


def test_the_model_is_told_to_reply_in_spanish_and_its_failure_is_told_in_spanish():
    assert "es" in ASSISTANT_LANGUAGES
    assert "Reply in Spanish" in system_prompt("es")
    assert model_failed("timed out", "es") == "El modelo de lenguaje ha fallado: timed out"


# ------------------------------------------------------------------------------------ the writes asked


@pytest.mark.parametrize(("message", "action", "spoken"), [
    ("analiza el vídeo 12 con los capítulos", "analyze_video", "analizar el vídeo 12"),
    ("vuelve a analizar el vídeo 12", "analyze_video", "analizar el vídeo 12"),
    (f"cancela el trabajo {JOB}", "cancel_job", f"cancelar el trabajo {JOB}"),
    (f"anula el trabajo {JOB}", "cancel_job", f"cancelar el trabajo {JOB}"),
    (f"detén el trabajo {JOB}", "cancel_job", f"cancelar el trabajo {JOB}"),
    ("traduce el artículo 5 al inglés", "translate_article", "traducir el artículo 5"),
    ("tradúcelo al italiano", "translate_article", "traducir el artículo 5"),
    ("reescribe el artículo 5", "regenerate_article", "regenerar el artículo 5"),
    ("renombra el artículo 5 a «Fusión»", "update_article", "modificar el artículo 5"),
    ("vincula el artículo 5 al medio 7", "update_article", "modificar el artículo 5"),
    ("añade un medio llamado «Podcast»", "create_media", "crear el medio"),
    ("crea un medio llamado «Podcast»", "create_media", "crear el medio"),
    ("corta el vídeo 3 de 0:10 a 0:40", "create_video_clip", "cortar un clip del vídeo 3"),
    ("completa las descripciones del medio 7", "complete_descriptions", "completar las descripciones del medio 7"),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_a_write_asked_in_spanish_is_planned_permitted_and_spoken_in_spanish(message, action, spoken):
    p = plan(message, Context(article_id=5))
    assert p.language == "es"
    planned = [a for a in p.actions if a.name == action]
    assert planned, [a.name for a in p.actions]
    assert action in asked_writes(message)
    assert label(action, planned[0].arguments, p.language) == spoken


@pytest.mark.parametrize(("message", "fmt"), [("exporta el artículo 5 en html", "html"),
                                              ("descarga el artículo 5 en json", "json"),
                                              ("exporta el artículo 5 en markdown", "markdown")])
def test_an_export_asked_in_spanish_is_planned_and_told_in_spanish(message, fmt):
    assert [(a.name, a.arguments) for a in plan(message).actions] == [("export_article", {"id": 5, "format": fmt})]
    expected = f"Exportación del artículo 5 en {fmt}, 10 bytes: /v1/x."
    assert reply(message, ok({"bytes": 10, "link": "/v1/x"})) == [expected]


@pytest.mark.parametrize("message", [
    "¿cuál es mi saldo?", "muéstrame el vídeo 12", "los resultados del análisis del vídeo 3", "el análisis del vídeo 3",
    "los 5 últimos trabajos", "el estado del trabajo 0f8fad5b-d9cb-469f-a165-70867728950e",
    "los temas y las entidades del vídeo 3", "las puntuaciones del artículo 5", "mis alertas y mi consumo",
    "exporta el artículo 5 en markdown", "lista las plantillas", "lista mis vídeos cortos",
])
def test_a_read_only_spanish_message_asks_for_no_write(message):
    assert asked_writes(message) == frozenset()
    p = plan(message)
    assert p.language == "es" and p.actions
    assert [a.name for a in p.actions if ACTIONS[a.name].writes] == []


def test_the_translations_of_an_article_are_read_not_asked_for():
    p = plan("las traducciones del artículo 5")
    assert [(a.name, a.arguments) for a in p.actions] == [("list_article_translations", {"id": 5})]
    assert reply("las traducciones del artículo 5", ok({"count": 2})) == [
        "Hecho: listar las traducciones del artículo 5: count 2."]
