"""The assistant reads a request in any language whose module declares its request words
(``domain.languages``, ``RequestWords``): each such language names every request the planner looks
for, the planner reads a Spanish or a German message end to end as it reads an English or a French
one, and it tells which of the seven languages a message is in."""

from __future__ import annotations

import pytest

from domain.agent.actions import ACTIONS
from domain.agent.grammar import ASK, KINDS, READERS, detect_language_of, platforms_in
from domain.agent.planner import plan
from domain.agent.reply import ActionView, compose, model_failed
from domain.languages import CODES, LANGUAGES, table
from domain.platforms import PLATFORM_IDS

READING = table("requests")


def steps(message: str) -> list[tuple[str, dict]]:
    return [(a.name, a.arguments) for a in plan(message).actions]


@pytest.mark.parametrize("code", READING)
def test_a_language_that_reads_requests_names_every_request(code):
    words, english = READING[code], READING["en"]
    assert set(words.asks) == set(ASK) and all(words.asks.values())
    assert set(words.kinds) == set(KINDS) and all(words.kinds.values())
    for field in ("styles", "statuses", "account", "video_reads"):
        assert set(getattr(words, field)) == set(getattr(english, field)), field
    assert set(words.account) | set(words.video_reads) <= set(ACTIONS)
    assert set(words.platforms) <= set(PLATFORM_IDS) and set(words.languages) <= set(CODES)


def test_every_language_of_the_service_is_read():
    assert set(READING) == set(CODES) and len(READERS) == len(READING)


SPANISH = [
    ("¿cuál es mi saldo?", [("get_credits", {})]),
    ("muéstrame el vídeo 12", [("get_video", {"id": 12})]),
    ("los vídeos 3, 4 y 7", [("get_video", {"id": 3}), ("get_video", {"id": 4}), ("get_video", {"id": 7})]),
    ("los artículos 2 a 4", [("get_article", {"id": 2}), ("get_article", {"id": 3}), ("get_article", {"id": 4})]),
    ("los 5 últimos trabajos", [("list_jobs", {"limit": 5})]),
    ("analiza el vídeo 12 con los capítulos, estilo periodístico, en alta calidad",
     [("analyze_video", {"id": 12, "outputs": {"chapters": True}, "writing_style": "journalistic",
                         "quality_profile": "premium"})]),
    ("exporta el artículo 5 en markdown", [("export_article", {"id": 5, "format": "markdown"})]),
    ("traduce el artículo 5 al alemán", [("translate_article", {"id": 5, "target_language": "de"})]),
    ("cancela el trabajo 0f8fad5b-d9cb-469f-a165-70867728950e",
     [("cancel_job", {"id": "0f8fad5b-d9cb-469f-a165-70867728950e"})]),
    ("corta el vídeo 3 de 0:10 a 0:40 en webm",
     [("create_video_clip", {"id": 3, "start_ms": 10_000, "end_ms": 40_000, "format": "webm"})]),
    ("los temas y las entidades del vídeo 3", [("get_topics", {"id": 3}), ("get_entities", {"id": 3})]),
    ("mi saldo y luego analiza el vídeo 3", [("get_credits", {}), ("analyze_video", {"id": 3})]),
]


GERMAN = [
    ("wie hoch ist mein Guthaben?", [("get_credits", {})]),
    ("zeige das Video 12", [("get_video", {"id": 12})]),
    ("die Videos 3, 4 und 7", [("get_video", {"id": 3}), ("get_video", {"id": 4}), ("get_video", {"id": 7})]),
    ("meine letzten 5 Aufträge", [("list_jobs", {"limit": 5})]),
    ("analysiere das Video 12 mit Kapiteln", [("analyze_video", {"id": 12, "outputs": {"chapters": True}})]),
    ("exportiere den Artikel 5 als Markdown", [("export_article", {"id": 5, "format": "markdown"})]),
    ("übersetze den Artikel 5 ins Spanische", [("translate_article", {"id": 5, "target_language": "es"})]),
    ("storniere den Auftrag 0f8fad5b-d9cb-469f-a165-70867728950e",
     [("cancel_job", {"id": "0f8fad5b-d9cb-469f-a165-70867728950e"})]),
    ("schneide das Video 3 von 0:10 bis 0:40 als webm",
     [("create_video_clip", {"id": 3, "start_ms": 10_000, "end_ms": 40_000, "format": "webm"})]),
    ("die Themen und die Entitäten des Videos 3", [("get_topics", {"id": 3}), ("get_entities", {"id": 3})]),
    ("mein Guthaben und dann analysiere das Video 3", [("get_credits", {}), ("analyze_video", {"id": 3})]),
]


@pytest.mark.parametrize(("message", "expected"), SPANISH + GERMAN, ids=[m for m, _ in SPANISH + GERMAN])
def test_the_planner_reads_a_spanish_or_german_request(message, expected):
    assert steps(message) == expected


def test_a_spanish_request_for_descriptions_names_its_platforms_in_spanish():
    actions = plan("completa las descripciones del medio 7 para todas las plataformas").actions
    assert [a.name for a in actions] == ["list_revival_candidates", "complete_descriptions"]
    assert actions[1].arguments["platforms"] == list(PLATFORM_IDS)


def test_the_platforms_a_message_names_come_from_the_platform_table():
    assert platforms_in("all platforms") == platforms_in("toutes les plateformes") == list(PLATFORM_IDS)
    assert platforms_in("videosite shorts and microblog") == ["videosite_shorts", "microblog_video"]
    assert platforms_in("la red profesional y shorts") == ["professional_network_long", "videosite_shorts"]


@pytest.mark.parametrize(("message", "code"), [
    ("show me my last videos and my balance", "en"),
    ("montre-moi mes dernières vidéos et mon solde", "fr"),
    ("zeige mir bitte meine letzten Videos und mein Guthaben", "de"),
    ("übersetze den Artikel 5 ins Deutsche", "de"),
    ("traduis l'article 5 en allemand", "fr"),
    ("muéstrame mis últimos vídeos y mi saldo, por favor", "es"),
    ("mostrami i miei ultimi video e il saldo, per favore", "it"),
    ("mostre os meus últimos vídeos e o meu saldo", "pt"),
    ("toon mijn laatste video's en mijn saldo alsjeblieft", "nl"),
])
def test_the_language_of_a_message_is_any_of_the_seven(message, code):
    assert code in LANGUAGES
    assert detect_language_of(message) == code == plan(message).language


def test_a_reply_is_in_the_messages_language_and_english_for_a_code_outside_the_seven():
    view = ActionView("get_video", {"id": 12}, "failed", None, {"code": "not_found", "message": "video not found"})
    replies = {code: compose(code, [view]) for code in CODES}
    assert len(set(replies.values())) == len(CODES)  # seven languages, seven replies
    assert compose("zz", [view]) == replies["en"]


def test_a_failed_model_is_told_in_the_assistants_language():
    assert model_failed("timed out", "fr") == "Le modèle de langue a échoué : timed out"
    assert model_failed("timed out", "zz") == model_failed("timed out", "en") == "The language model failed: timed out"
    assert len({model_failed("timed out", code) for code in CODES}) == len(CODES)
