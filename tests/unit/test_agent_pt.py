"""The assistant in Portuguese: it reads a request written in Portuguese (``domain.languages.pt``,
``REQUESTS``), answers it in Portuguese end to end (``plan`` then ``compose``, ``ASSISTANT``), and
lets a model perform a write only when the Portuguese message asks for it (``asked_writes``)."""

from __future__ import annotations

import re

import pytest

from domain.agent.planner import plan
from domain.agent.policy import asked_writes
from domain.agent.reply import ActionView, compose, help_text, left_undone
from domain.languages import ASSISTANT_LANGUAGES, LANGUAGES, say

JOB = "0f8fad5b-d9cb-469f-a165-70867728950e"

# The frame of an English reply: none of these may be in a Portuguese one.
ENGLISH = re.compile(r"\b(?:Done|Queued|read|your|Your|balance|credits?|You|have|could|did|tell|format|requested|"
                     r"actions?|videos?|jobs?|understand|active|alerts?|more|Usage|Workspace)\b")


def steps(message: str) -> list[tuple[str, dict]]:
    return [(a.name, a.arguments) for a in plan(message).actions]


def reply(message: str, *results: tuple[str, dict | None, dict | None], **options) -> str:
    """The reply to ``message``: its plan's actions, in order, answered by ``results`` (a result,
    or an error), composed in the language the planner read."""
    p = plan(message)
    assert p.language == "pt", message
    assert len(p.actions) == len(results), [a.name for a in p.actions]
    views = [ActionView(a.name, a.arguments, status, result, error)
             for a, (status, result, error) in zip(p.actions, results, strict=True)]
    text = compose(p.language, views, notes=p.notes, not_understood=p.not_understood, asked_help=p.asked_help,
                   **options)
    assert not ENGLISH.search(re.sub(r"/v1/[^\s)]*|\b\w+:(?:read|write)\b", "", text)), text  # links, scopes
    return text


PORTUGUESE = [
    ("qual é o meu saldo?", [("get_credits", {})]),
    ("mostre o vídeo 12", [("get_video", {"id": 12})]),
    ("os vídeos 3, 4 e 7", [("get_video", {"id": 3}), ("get_video", {"id": 4}), ("get_video", {"id": 7})]),
    ("os artigos 2 a 4", [("get_article", {"id": 2}), ("get_article", {"id": 3}), ("get_article", {"id": 4})]),
    ("as minhas últimas 5 tarefas", [("list_jobs", {"limit": 5})]),
    ("os 5 últimos trabalhos", [("list_jobs", {"limit": 5})]),
    ("analise o vídeo 12 com os capítulos, sem artigo, estilo jornalístico, em alta qualidade",
     [("analyze_video", {"id": 12, "outputs": {"chapters": True, "article": False}, "writing_style": "journalistic",
                         "quality_profile": "premium"})]),
    ("exporte o artigo 5 em markdown", [("export_article", {"id": 5, "format": "markdown"})]),
    ("traduza o artigo 5 para o alemão", [("translate_article", {"id": 5, "target_language": "de"})]),
    (f"anule a tarefa {JOB}", [("cancel_job", {"id": JOB})]),
    ("corte o vídeo 3 de 0:10 a 0:40 em webm",
     [("create_video_clip", {"id": 3, "start_ms": 10_000, "end_ms": 40_000, "format": "webm"})]),
    ("os temas e as entidades do vídeo 3", [("get_topics", {"id": 3}), ("get_entities", {"id": 3})]),
    ("as afirmações e os momentos do vídeo 5", [("get_claims", {"id": 5}), ("get_moments", {"id": 5})]),
    ("o meu saldo e depois analise o vídeo 3", [("get_credits", {}), ("analyze_video", {"id": 3})]),
    ("o meu saldo e os meus alertas", [("get_credits", {}), ("get_monitoring_alerts", {})]),
    ("mostre os meus vídeos e o artigo 5", [("list_videos", {}), ("get_article", {"id": 5})]),
    ("os resultados da análise do vídeo 4", [("get_video_graph", {"id": 4})]),
    ("as traduções do artigo 5", [("list_article_translations", {"id": 5})]),
    ("o grafo do artigo 5", [("get_article_graph", {"id": 5})]),
    ("as pontuações do artigo 5", [("get_article_scores", {"id": 5})]),
    ("regenere o artigo 5 em estilo narrativo", [("regenerate_article", {"id": 5, "writing_style": "narrative"})]),
    ("renomeie o artigo 5 para «Fusão nuclear»", [("update_article", {"id": 5, "custom_name": "Fusão nuclear"})]),
    ("detete 5 clips no artigo 4 com o modelo 2",
     [("detect_clips", {"article_id": 4, "template_id": 2, "requested_clip_count": 5})]),
    ("o meu consumo de modelos de linguagem", [("get_usage_llm", {})]),
    ("liste os modelos", [("list_templates", {})]),
    ("quem sou eu", [("get_me", {})]),
    ("crie um média chamado «Podcasts 2025»", [("create_media", {"name": "Podcasts 2025"})]),
    ("mostre o vídeo 12 e depois analise-o", [("get_video", {"id": 12}), ("analyze_video", {"id": 12})]),
]


@pytest.mark.parametrize(("message", "expected"), PORTUGUESE, ids=[m for m, _ in PORTUGUESE])
def test_the_planner_reads_a_portuguese_request(message, expected):
    p = plan(message)
    assert (p.language, steps(message), p.not_understood) == ("pt", expected, ())


def test_a_portuguese_request_for_descriptions_names_its_platforms_in_portuguese():
    actions = plan("complete as descrições do média 7 para a rede profissional").actions
    assert [a.name for a in actions] == ["list_revival_candidates", "complete_descriptions"]
    assert actions[1].arguments["platforms"] == ["professional_network_long"]


def test_the_assistant_speaks_portuguese():
    assert "pt" in ASSISTANT_LANGUAGES and say("pt").words is LANGUAGES["pt"].assistant


# ------------------------------------------------------------------------------------ replies


def test_the_balance_is_told_in_portuguese_with_its_plurals():
    text = reply("qual é o meu saldo?", ("ok", {"balance": 120, "used": 1, "total": 121, "plan": "pro"}, None))
    assert text == "O seu saldo é de 120 créditos (1 usado de 121, plano pro)."
    # zero is plural in Portuguese ("0 créditos"), one singular
    empty = reply("o meu saldo", ("ok", {"balance": 0, "used": 0, "total": 0, "plan": "free"}, None))
    assert empty.startswith("O seu saldo é de 0 créditos (0 usados de 0")
    one = reply("o meu saldo", ("ok", {"balance": 1, "used": 0, "total": 1, "plan": "free"}, None))
    assert one.startswith("O seu saldo é de 1 crédito (")


def test_a_video_read_is_told_in_portuguese():
    text = reply("mostre o vídeo 12", ("ok", {"id": 12, "name": "Fusão", "status": "analyzed",
                                              "duration_seconds": 300, "article_id": 4, "link": "/v1/videos/12"}, None))
    assert text == "Vídeo 12 «Fusão»: analisado, 300 s, artigo 4 (/v1/videos/12)."


def test_a_list_of_jobs_is_told_in_portuguese():
    jobs = [{"id": "a1", "type": "analysis", "status": "running", "progress": 40},
            {"id": "b2", "type": "export", "status": "completed", "progress": 100}]
    text = reply("as minhas últimas 5 tarefas", ("ok", {"count": 2, "jobs": jobs}, None))
    assert text == "2 tarefas: a1 analysis em curso 40 %; b2 export concluída 100 %."
    assert reply("as minhas tarefas", ("ok", {"count": 0, "jobs": []}, None)) == "Não tem nenhuma tarefa."


def test_a_write_refused_for_a_missing_scope_is_told_in_portuguese():
    error = {"code": "insufficient_scope", "message": "insufficient scope", "details": {"required": "videos:write"}}
    text = reply("analise o vídeo 3", ("refused", None, error))
    assert text == "Não consegui analisar o vídeo 3: a sua chave não tem o âmbito videos:write."


def test_an_unknown_id_is_told_in_portuguese():
    error = {"code": "not_found", "message": "vídeo não encontrado"}
    text = reply("mostre o vídeo 99", ("failed", None, error))
    assert text == "Não foi possível mostrar o vídeo 99: vídeo não encontrado."


def test_an_argument_not_found_in_the_earlier_answers_is_told_in_portuguese():
    error = {"code": "not_resolved", "message": "no article", "details": {"reason": "no_article", "video": 3}}
    text = reply("analise o vídeo 3", ("refused", None, error))
    assert text == "Não pude analisar o vídeo 3: o vídeo 3 ainda não tem artigo (analise-o primeiro)."


@pytest.mark.parametrize("message", ["olá", "ajuda", "o que podes fazer?", "obrigado"])
def test_a_greeting_gets_the_help_text_in_portuguese(message):
    text = reply(message)
    assert text == help_text("pt") and text.startswith("Posso: ler o seu saldo")


def test_every_example_of_the_help_text_is_read_as_portuguese():
    examples = re.findall(r"«([^»]+)»", help_text("pt"))
    assert len(examples) == 4
    for example in examples:
        p = plan(example)
        assert p.language == "pt" and p.actions and not p.notes and not p.not_understood, example


def test_a_default_the_plan_chose_is_noted_in_portuguese():
    text = reply("exporte o artigo 5", ("ok", {"bytes": 2048, "link": "/v1/articles/5/export"}, None))
    assert text == ("Exportação do artigo 5 em markdown, 2048 bytes: /v1/articles/5/export.\n"
                    "Não indicou nenhum formato: usei markdown (existem html, markdown, json, schema, opengraph "
                    "e txt).")


def test_a_missing_id_is_asked_for_in_portuguese():
    assert reply("exporte-o em json") == "Para exportar o artigo, indique o identificador do artigo."
    assert reply("renderize os clips") == "Para renderizar os clips, indique o identificador da tarefa de clips."


def test_what_was_not_understood_is_quoted_in_portuguese():
    text = reply("mostre o vídeo 12; blá blá", ("ok", {"id": 12, "name": "X", "status": "uploaded",
                                                        "duration_seconds": 5, "link": "/v1/videos/12"}, None))
    assert text.splitlines() == ["Vídeo 12 «X»: carregado, 5 s (/v1/videos/12).", "Não percebi: «blá blá»."]


def test_actions_left_undone_are_told_in_portuguese_singular_and_plural():
    text = reply("o meu saldo", ("ok", {"balance": 3, "used": 2, "total": 5, "plan": "pro"}, None), left=4)
    assert text.splitlines()[-1] == ("4 outras ações pedidas não foram feitas: no máximo 15 ações por mensagem. "
                                     "Peça o resto de novo.")
    assert left_undone(1, "cap", "pt", cap=15).startswith("1 outra ação pedida não foi feita:")
    assert left_undone(1, "rate_limited", "pt", cap=15, retry_after_s=30) == (
        "1 ação pedida não foi feita: o limite de pedidos do seu espaço de trabalho foi atingido; tente de novo "
        "dentro de 30 s.")
    assert left_undone(0, "stopped", "pt", cap=15) == "Interrompido: 0 ações pedidas não foram feitas."


def test_more_than_three_actions_are_counted_in_portuguese():
    ok = ("ok", {"id": 1, "name": "A", "status": "analyzing", "duration_seconds": 1, "link": "/v1/videos/1"}, None)
    missing = ("failed", None, {"code": "not_found", "message": "não encontrado"})
    text = reply("os vídeos 1 a 4", ok, ok, ok, missing)
    assert text.splitlines()[0] == "Executei 4 ações: 3 com êxito, 1 sem êxito."
    assert "em análise" in text


# ------------------------------------------------------------------------------------ writes asked for

# (a message asking for a change, the action planned, the writes it asks for; a read-only message
# on the same object, which must plan and ask for none of them)
WRITES = [
    ("analise o vídeo 12", "analyze_video", {"analyze_video"}, "os capítulos e os temas do vídeo 12"),
    (f"anule a tarefa {JOB}", "cancel_job", {"cancel_job"}, f"mostre a tarefa {JOB} para ver o progresso"),
    ("traduza o artigo 5 para inglês", "translate_article", {"translate_article"}, "mostre o artigo 5 em inglês"),
    ("exporte o artigo 5 em json", "export_article", set(), "mostre o artigo 5"),
    ("pare a tarefa " + JOB, "cancel_job", {"cancel_job"}, f"o estado da tarefa {JOB}, para o artigo 5"),
]


@pytest.mark.parametrize(("asks", "action", "writes", "reads"), WRITES, ids=[w[0] for w in WRITES])
def test_a_write_is_asked_for_in_portuguese_and_not_by_a_read(asks, action, writes, reads):
    assert action in [a.name for a in plan(asks).actions]
    assert asked_writes(asks) == writes
    assert plan(reads).language == "pt"
    assert action not in [a.name for a in plan(reads).actions]
    assert not (asked_writes(reads) & ({action} | writes))
