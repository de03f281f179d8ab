"""The assistant reads a request in Italian and answers in Italian (``domain.languages.it``): the
planner reads an Italian message end to end as it reads an English or a French one, the reply
says what was done in Italian (its plurals, its quotation marks, no English frame word), and a
write is asked for with Italian words."""

from __future__ import annotations

import re

import pytest

from domain.agent.actions import ACTIONS
from domain.agent.planner import plan
from domain.agent.policy import MAX_ACTIONS, asked_reads, asked_writes
from domain.agent.reply import ActionView, compose, describe, model_failed
from domain.languages import ASSISTANT_LANGUAGES, assistant_words

JOB = "0f8fad5b-d9cb-469f-a165-70867728950e"


def steps(message: str) -> list[tuple[str, dict]]:
    return [(a.name, a.arguments) for a in plan(message).actions]


ITALIAN = [
    ("qual è il mio saldo?", [("get_credits", {})]),
    ("mostrami il video 12", [("get_video", {"id": 12})]),
    ("mostrami i video 3, 4 e 7", [("get_video", {"id": 3}), ("get_video", {"id": 4}), ("get_video", {"id": 7})]),
    ("gli articoli dal 2 al 4", [("get_article", {"id": 2}), ("get_article", {"id": 3}), ("get_article", {"id": 4})]),
    ("mostrami l'articolo numero 7", [("get_article", {"id": 7})]),
    ("gli ultimi 5 lavori", [("list_jobs", {"limit": 5})]),
    ("analizza il video 12 con i capitoli, stile giornalistico, in alta qualità",
     [("analyze_video", {"id": 12, "outputs": {"chapters": True}, "writing_style": "journalistic",
                         "quality_profile": "premium"})]),
    ("analizza il video 12 con la trascrizione ma senza articolo",
     [("analyze_video", {"id": 12, "outputs": {"transcript": True, "article": False}})]),
    ("esporta l'articolo 5 in markdown", [("export_article", {"id": 5, "format": "markdown"})]),
    ("traduci l'articolo 5 in tedesco", [("translate_article", {"id": 5, "target_language": "de"})]),
    ("le traduzioni dell'articolo 5", [("list_article_translations", {"id": 5})]),
    (f"annulla il job {JOB}", [("cancel_job", {"id": JOB})]),
    (f"lo stato del job {JOB}", [("get_job", {"id": JOB})]),
    ("taglia il video 3 da 0:10 a 0:40 in webm",
     [("create_video_clip", {"id": 3, "start_ms": 10_000, "end_ms": 40_000, "format": "webm"})]),
    ("i temi e le entità del video 3", [("get_topics", {"id": 3}), ("get_entities", {"id": 3})]),
    ("il mio saldo e poi analizza il video 3", [("get_credits", {}), ("analyze_video", {"id": 3})]),
    ("il mio saldo e i miei avvisi", [("get_credits", {}), ("get_monitoring_alerts", {})]),
    ("rigenera l'articolo 5 in stile narrativo", [("regenerate_article", {"id": 5, "writing_style": "narrative"})]),
    ("rinomina l'articolo 5 in «Fusione»", [("update_article", {"id": 5, "custom_name": "Fusione"})]),
    ("rileva 5 clip nell'articolo 4 con il modello 2",
     [("detect_clips", {"article_id": 4, "template_id": 2, "requested_clip_count": 5})]),
    ("i candidati al rilancio idonei", [("list_revival_candidates", {"status": "eligible"})]),
    ("i miei consumi del modello linguistico", [("get_usage_llm", {})]),
    ("crea un media chiamato Conferenze", [("create_media", {"name": "Conferenze"})]),
    ("chi sono?", [("get_me", {})]),
]


@pytest.mark.parametrize(("message", "expected"), ITALIAN, ids=[m for m, _ in ITALIAN])
def test_the_planner_reads_an_italian_request_and_knows_it_is_italian(message, expected):
    p = plan(message)
    assert [(a.name, a.arguments) for a in p.actions] == expected
    assert p.language == "it" and not p.not_understood and not p.notes


def test_an_italian_request_for_descriptions_names_its_platforms_in_italian():
    actions = plan("completa le descrizioni del media 7 per la rete professionale").actions
    assert [a.name for a in actions] == ["list_revival_candidates", "complete_descriptions"]
    assert actions[1].arguments["platforms"] == ["professional_network_long"]


@pytest.mark.parametrize("message", ["aiuto", "ciao!", "cosa puoi fare?", "grazie"])
def test_a_greeting_or_a_question_about_the_assistant_gets_the_italian_help(message):
    p = plan(message)
    assert p.asked_help and not p.actions and not p.not_understood
    assert compose(p.language, [], asked_help=True) == assistant_words("it").help


# ------------------------------------------------------------------------------------ the reply

# Words of the English frame that an Italian reply must never hold.
ENGLISH = ("Done", "Your ", "I could", "I did", "I can", "read your", "Queued", "charged", "was named", "requested",
           "tell me", "not done", "(and more)", "show video", " of video")
BALANCE = {"balance": 9, "total": 10, "used": 1, "plan": "pro"}
VIDEO = {"id": 12, "name": "Pompe di calore", "status": "analyzed", "duration_seconds": 61, "article_id": 4,
         "link": "/v1/videos/12"}
JOBS = {"count": 2, "jobs": [{"id": "a1", "type": "analysis", "status": "running", "progress": 40},
                             {"id": "b2", "type": "export", "status": "completed", "progress": 100}]}


def reply(message: str, outcome: list[tuple[str, dict | None, dict | None]], **frame) -> str:
    """The reply to ``message``: its plan, each action answering with (status, result, error)."""
    p = plan(message)
    assert p.language == "it"
    views = [ActionView(a.name, a.arguments, status, result, error)
             for a, (status, result, error) in zip(p.actions, outcome, strict=False)]
    text = compose(p.language, views, notes=p.notes, not_understood=p.not_understood, asked_help=p.asked_help,
                   **frame)
    leaked = [w for w in ENGLISH if w in text]
    assert not leaked, (leaked, text)
    return text


def test_the_balance_is_told_in_italian():
    assert reply("qual è il mio saldo?", [("ok", BALANCE, None)]) == \
        "Il tuo saldo è di 9 crediti (1 usato su 10, piano pro)."


def test_a_video_is_shown_in_italian_with_its_status_and_quotation_marks():
    assert reply("mostrami il video 12", [("ok", VIDEO, None)]) == \
        "Video 12 «Pompe di calore»: analizzato, 61 s, articolo 4 (/v1/videos/12)."


def test_a_list_of_jobs_is_told_in_italian():
    assert reply("gli ultimi 2 lavori", [("ok", JOBS, None)]) == \
        "2 job: a1 analysis in corso 40%; b2 export completato 100%."


def test_a_write_refused_for_a_missing_scope_is_said_in_italian():
    error = {"code": "insufficient_scope", "message": "m", "details": {"required": "analyses:create"}}
    assert reply("analizza il video 3", [("refused", None, error)]) == \
        "Non ho potuto analizzare il video 3: alla tua chiave manca lo scope analyses:create."


def test_an_unknown_id_is_said_in_italian():
    error = {"code": "not_found", "message": "video not found"}
    assert reply("mostrami il video 99", [("failed", None, error)]) == \
        "Impossibile mostrare il video 99: video not found."


def test_an_argument_missing_from_an_earlier_answer_is_said_in_italian():
    error = {"code": "not_resolved", "message": "x", "details": {"reason": "no_article", "video": 12}}
    text = reply("rileva le clip del video 12 con il modello 3", [("ok", VIDEO, None), ("failed", None, error)])
    assert text.splitlines()[1] == ("Impossibile rilevare clip: il video 12 non ha ancora un articolo "
                                    "(prima analizzalo).")


def test_the_help_is_in_italian_and_its_examples_are_read_as_italian_requests():
    text = reply("aiuto", [])
    assert text.startswith("Posso: leggere il tuo saldo")
    examples = re.findall(r"«([^»]+)»", text)
    assert len(examples) == 4
    for example in examples:
        p = plan(example)
        assert p.actions and p.language == "it" and not p.not_understood and not p.notes, example


def test_a_default_the_plan_chose_is_noted_in_italian():
    export = {"bytes": 2048, "link": "/v1/exports/5"}
    text = reply("esporta l'articolo 5", [("ok", export, None)])
    assert text.splitlines() == [
        "Esportazione dell'articolo 5 in markdown, 2048 byte: /v1/exports/5.",
        "Nessun formato indicato: ho usato markdown (esistono html, markdown, json, schema, opengraph e txt)."]


def test_a_missing_id_and_what_was_not_understood_are_said_in_italian():
    assert reply("annulla il job", []) == "Per annullare il job, dimmi quale job (il suo identificativo)."
    assert reply("il mio saldo; fai una torta", [("ok", BALANCE, None)]).splitlines()[1] == \
        "Non ho capito: «fai una torta»."


def test_actions_left_undone_are_counted_in_italian_with_the_verb_agreeing():
    message = "mostrami i video da 1 a 16"
    assert len(plan(message).actions) == 16
    outcome = [("ok", {**VIDEO, "id": i}, None) for i in range(1, MAX_ACTIONS + 1)]
    lines = reply(message, outcome, left=1, left_reason="cap", cap=MAX_ACTIONS).splitlines()
    assert lines[0] == "Ho eseguito 15 azioni: 15 riuscite, 0 non riuscite."
    assert lines[-1] == ("Non è stata eseguita 1 altra azione richiesta: al massimo 15 azioni per messaggio. "
                         "Chiedi di nuovo il resto.")
    limited = reply("qual è il mio saldo?", [("ok", BALANCE, None)], left=3, left_reason="rate_limited",
                    retry_after_s=12)
    assert limited.splitlines()[1] == ("Non sono state eseguite 3 azioni richieste: è stato raggiunto il limite di "
                                       "frequenza del tuo spazio di lavoro; riprova tra 12 s.")


def test_counts_take_the_italian_singular_for_one_and_the_plural_for_zero():
    one = ActionView("analyze_video", {"id": 1}, "ok", {"job_id": "j", "credits_charged": 1, "link": "/j"}, None)
    assert compose("it", [one]) == "In coda: analizzare il video 1, job j, 1 credito addebitato (/j)."
    none = ActionView("list_videos", {}, "ok", {"count": 0}, None)
    assert compose("it", [none]) == "Non hai ancora nessun video."
    graph = ActionView("get_video_graph", {"id": 5}, "ok", {"claims": 1, "entities": 0, "searchIntents": 2,
                                                            "clipMoments": 1, "geo_readiness_score": 70,
                                                            "link": "/g"}, None)
    assert compose("it", [graph]) == ("Grafo dei contenuti del video 5: 1 affermazione, 0 entità, 2 intenzioni di "
                                      "ricerca, 1 momento per clip, preparazione GEO 70 (/g).")


def test_every_action_is_described_in_italian_not_in_english():
    assert "it" in ASSISTANT_LANGUAGES
    for name in ACTIONS:
        view = ActionView(name, {"id": 1}, "ok", {}, None)
        italian = describe(view, "it")
        assert italian and "{" not in italian and italian != describe(view, "en"), (name, italian)


def test_a_failed_model_is_told_in_italian():
    assert model_failed("timed out", "it") == "Errore del modello linguistico: timed out"


# ------------------------------------------------------------------------------------ writes

WRITES = [
    ("analizza il video 12", "analyze_video"),
    ("esporta l'articolo 5 in html", "export_article"),  # a read: planned, and it asks for no write
    (f"annulla il job {JOB}", "cancel_job"),
    ("traduci l'articolo 5 in inglese", "translate_article"),
    ("rigenera l'articolo 5", "regenerate_article"),
    ("crea un media chiamato Corsi", "create_media"),
    ("taglia il video 3 da 0:10 a 0:40", "create_video_clip"),
]


@pytest.mark.parametrize(("message", "name"), WRITES, ids=[m for m, _ in WRITES])
def test_a_write_is_asked_for_in_italian(message, name):
    assert name in {a.name for a in plan(message).actions}
    assert name in asked_writes(message) if ACTIONS[name].writes else asked_writes(message) == frozenset()


READ_ONLY = [("mostrami il video 12 e le sue affermazioni", ["get_claims"]),
             ("il mio saldo e i miei avvisi", ["get_credits", "get_monitoring_alerts"]),
             ("i punteggi dell'articolo 5", ["get_article_scores"]), ("elenca i modelli", ["list_templates"])]


@pytest.mark.parametrize(("message", "reads"), READ_ONLY, ids=[m for m, _ in READ_ONLY])
def test_a_read_only_italian_message_plans_its_reads_and_asks_for_no_write(message, reads):
    assert [a.name for a in plan(message).actions] == reads
    assert asked_writes(message) == frozenset()


def test_the_kinds_an_italian_message_names_let_their_reads_run():
    assert asked_reads(["qual è il mio saldo?", "e i miei lavori"]) == {"credits", "jobs"}
    assert asked_reads(["riassumi l'articolo 5"]) == {"content"}


def test_the_italian_words_that_ask_for_a_write_are_no_english_word_of_another_sense():
    assert asked_writes("rinomina l'articolo 5 e allegalo al media 2") == {"update_article"}
    assert asked_writes("individua i momenti migliori dell'articolo 4") == {"detect_clips"}
    assert asked_writes("an individual allegation in the tagline of a revision, from a proponent") == frozenset()
