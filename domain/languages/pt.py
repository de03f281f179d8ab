"""Portuguese: what the service knows of it, and the assistant's Portuguese.

The assistant reads requests in it (``REQUESTS``) and answers in it (``ASSISTANT``), in the
Portuguese of Portugal (the language's ``locale``): "ecrã", "detetar", quotes « ». The same keys as
the English home (``domain.languages.en``); see there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, optional_words

R = dict[str, Any]


def _credits(s: Say, n: str, r: R, a: R) -> str:
    return (f"O seu saldo é de {s.n(r.get('balance'), 'crédito', 'créditos')} ({s.n(r.get('used'), 'usado', 'usados')}"
            f" de {r.get('total')}, plano {r.get('plan')}).")


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Consumo: {s.n(r.get('totalApiCalls'), 'chamada à API', 'chamadas à API')}, "
            f"{s.n(r.get('totalCreditsConsumed'), 'crédito consumido', 'créditos consumidos')}, "
            f"{r.get('averageResponseMs')} ms em média.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return (f"Consumo de modelo de linguagem: {s.n(totals.get('calls', 0), 'chamada', 'chamadas')}, "
            f"{s.n(totals.get('totalTokens', 0), 'token', 'tokens')}.")


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Espaço de trabalho {s.q(r.get('workspace'))}, plano {r.get('plan')}, "
            f"{s.n(r.get('credits_balance'), 'crédito disponível', 'créditos disponíveis')}; a sua chave "
            f"{r.get('environment')} tem os âmbitos {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Monitorização: {s.n(r.get('calls_last_hour'), 'chamada', 'chamadas')} na última hora (taxa de erro "
            f"{r.get('error_rate_last_hour')}), {s.n(r.get('jobs_pending'), 'tarefa pendente', 'tarefas pendentes')}, "
            f"{r.get('jobs_running')} em curso, {r.get('jobs_failed_24h')} com falha nas últimas 24 h, "
            f"{s.n(r.get('alerts'), 'alerta ativo', 'alertas ativos')}.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Nenhum alerta ativo."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return (f"{s.n(r['count'], 'alerta ativo', 'alertas ativos')} ({s.n(r.get('critical', 0), 'crítico', 'críticos')}):"
            f" {shown}.")


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Ainda não tem nenhum vídeo."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'vídeo', 'vídeos')}: {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", artigo {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Vídeo {r.get('id')} {s.q(r.get('name'))}: {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'crédito debitado', 'créditos debitados')}" if charged is not None else ""
    return f"Pedido em fila: {s.label(n, a)}, tarefa {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (um pedido idêntico anterior, reutilizado)" if r.get("reused") else ""
    return f"{s.label(n, a).capitalize()}: tarefa de clips {r.get('job_id')}{reused} ({r.get('link')})."


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" Primeiros: " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):  # the behavioural summaries are written in English
        shown += " No ecrã (em inglês): " + "; ".join(str(f) for f in r["on_screen"]) + "."
    what = s.label(n, a).split(" ", 2)[-1]  # "afirmações do vídeo 3"
    return (f"Vídeo {a.get('id')}: {s.n(r.get('count'), 'elemento', 'elementos')} ({what}, "
            f"{r.get('link')}).{shown}")


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Vídeo {a.get('id')}: estrutura {', '.join(map(str, r.get('structure') or []))}; capítulos: "
            f"{chapters or 'nenhum'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Grafo de conteúdo {whose} {a.get('id')}: {s.n(r.get('claims', 0), 'afirmação', 'afirmações')}, "
                f"{s.n(r.get('entities', 0), 'entidade', 'entidades')}, "
                f"{s.n(r.get('searchIntents', 0), 'intenção de pesquisa', 'intenções de pesquisa')}, "
                f"{s.n(r.get('clipMoments', 0), 'momento', 'momentos')}, preparação GEO "
                f"{r.get('geo_readiness_score')} ({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Não tem nenhuma tarefa."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')} %")
    return f"{s.n(r['count'], 'tarefa', 'tarefas')}: {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", artigo {r['article_id']}" if r.get("article_id") else ""
    return (f"Tarefa {r.get('id')} ({r.get('type')}): {s.status(r.get('status'))}, {r.get('progress')} %, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Ainda não tem nenhum artigo."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'artigo', 'artigos')}: {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Artigo {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, pontuação global "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {s.n(r['bytes'], 'byte', 'bytes')}" if r.get("bytes") is not None else ""
    return f"Exportação do artigo {a.get('id')} em {a.get('format')}{size}: {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Artigo {a.get('id')} {'alterado' if r.get('updated') else 'sem alterações'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Ainda não tem nenhum média."
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{s.n(r.get('count', 0), 'média', 'médias')}{': ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Média {r.get('id')} {s.q(r.get('name'))} criado."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (predefinido)" if x.get("is_default") else ""))
    return f"{s.n(r.get('count', 0), 'modelo', 'modelos')}{': ' + shown if shown else ''}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Tarefa de clips {a.get('jobId')}: {s.status(r.get('status'))}, {s.n(r.get('clips', 0), 'clip', 'clips')}"
            f", {s.n(r.get('rendered_clips', 0), 'renderizado', 'renderizados')}, {r.get('failed_clips', 0)} com falha "
            f"({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Nenhum candidato à reativação."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (média "
                      f"{x.get('media_id')}, pontuação {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'candidato à reativação', 'candidatos à reativação')}: {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return f"Descrições completadas para o média {r.get('media_id')} ({drafts}); pedido {r.get('request_id')}."


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Feito: {s.label(n, a)}{': ' + facts if facts else ''}."


# Whose id is missing, after "o identificador": "do vídeo", "da tarefa".
_OF_KINDS = {"video": "do vídeo", "article": "do artigo", "job": "da tarefa", "media": "do média",
             "clip_job": "da tarefa de clips", "template": "do modelo"}


def _missing_id(s: Say, v: R) -> str:
    action = re.sub(r"(?: em)? \?", "", s.label(v.get("action", ""), {}))  # "exportar o artigo ? em ?"
    kind = v.get("kind", "")
    return f"Para {action}, indique o identificador {_OF_KINDS.get(kind, 'de ' + kind)}."


def _actions(count: int, one: str, many: str) -> str:
    """``count`` requested actions, and the rest of the sentence agreeing with it (zero is plural)."""
    return f"{count} {one if count == 1 else many}"


_HELP = ("Posso: ler o seu saldo, o seu consumo e os seus alertas; listar ou mostrar os seus vídeos, tarefas e "
         "artigos; analisar um vídeo (com capítulos, transcrição, um estilo de escrita, em premium); ler as "
         "afirmações, entidades, temas ou o grafo de um vídeo; as pontuações, o grafo ou a exportação de um artigo "
         "(html, markdown, json, schema, opengraph, txt), traduzi-lo ou regenerá-lo; cortar um clip, detetar e "
         "renderizar clips; listar os candidatos à reativação e completar descrições; cancelar uma tarefa. Por "
         "exemplo: «analise o vídeo 12 com os capítulos», «exporte o artigo 5 em markdown», «os vídeos 3, 4 e 7», "
         "«o meu saldo e os meus alertas». No máximo 15 ações por mensagem.")

_VIDEO_MEMBERS = ("get_claims", "get_entities", "get_intents", "get_moments", "get_topics", "get_visual_elements",
                  "get_audio_elements")

ASSISTANT = AssistantWords(
    quotes=("«", "»"),
    zero_is_singular=False,
    # a job is "a tarefa" (feminine), a video and a candidate masculine: each status names one of them
    statuses={"pending": "pendente", "running": "em curso", "completed": "concluída", "failed": "falhou",
              "cancelled": "cancelada", "uploaded": "carregado", "analyzing": "em análise", "analyzed": "analisado",
              "queued": "em fila", "eligible": "elegível", "reviewing": "em revisão", "selected": "selecionado",
              "dismissed": "descartado", "stale": "desatualizado"},
    and_more=" (e outros)",
    labels={
        "get_me": "ler o seu espaço de trabalho e a sua chave",
        "get_credits": "ler o seu saldo",
        "get_usage": "ler o seu consumo",
        "get_usage_llm": "ler o seu consumo de modelo de linguagem",
        "get_monitoring": "ler a sua monitorização",
        "get_monitoring_alerts": "ler os seus alertas",
        "list_videos": "listar os seus vídeos",
        "get_video": "mostrar o vídeo {id}",
        "get_transcript": "ler a transcrição do vídeo {id}",
        "analyze_video": "analisar o vídeo {id}",
        "get_claims": "ler as afirmações do vídeo {id}",
        "get_entities": "ler as entidades do vídeo {id}",
        "get_intents": "ler as intenções de pesquisa do vídeo {id}",
        "get_moments": "ler os momentos do vídeo {id}",
        "get_topics": "ler os temas do vídeo {id}",
        "get_narrative": "ler a estrutura narrativa do vídeo {id}",
        "get_visual_elements": "ler os elementos visuais do vídeo {id}",
        "get_audio_elements": "ler os elementos de áudio do vídeo {id}",
        "get_video_graph": "ler o grafo de conteúdo do vídeo {id}",
        "list_jobs": "listar as suas tarefas",
        "get_job": "mostrar a tarefa {id}",
        "cancel_job": "cancelar a tarefa {id}",
        "list_articles": "listar os seus artigos",
        "get_article": "mostrar o artigo {id}",
        "get_article_scores": "ler as pontuações do artigo {id}",
        "get_article_graph": "ler o grafo do artigo {id}",
        "export_article": "exportar o artigo {id} em {format}",
        "update_article": "alterar o artigo {id}",
        "translate_article": "traduzir o artigo {id}",
        "list_article_translations": "listar as traduções do artigo {id}",
        "regenerate_article": "regenerar o artigo {id}",
        "list_medias": "listar os seus médias",
        "create_media": "criar o média",
        "create_video_clip": "cortar um clip do vídeo {id}",
        "list_templates": "listar os modelos",
        "detect_clips": lambda a: "detetar clips no artigo {article_id}" if "article_id" in a else "detetar clips",
        "render_clips": "renderizar os clips",
        "get_clip_job": "ler a tarefa de clips {jobId}",
        "list_revival_candidates": "listar os candidatos à reativação",
        "complete_descriptions": "completar as descrições do média {media_id}",
        "update_revival_candidate": "alterar o candidato {id}",
        "update_video": "alterar a descrição do vídeo {id}",
    },
    label_unknown="executar {name}",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("do vídeo"), "get_article_graph": _graph("do artigo"),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    # one word each (folded): "para" (for) is no word of stopping, "pare" and "parar" are
    asks={
        "analyze_video": (r"anali[sz](?!is$|i$)\w*",),  # not the Spanish and Italian nouns
        "cancel_job": (r"cancel\w*", r"anul\w*", r"interromp\w*", r"pare", r"parar", r"abort\w*"),
        "create_media": (r"cri[ae]\w*", r"nov[oa]s?", r"adicion\w*", r"acrescent\w*"),
        "update_article": (r"renome\w*", r"renomei\w*", r"associ\w*", r"vincul\w*"),
        "translate_article": (r"traduz\w*", r"traducao", r"traducoes"),
        "regenerate_article": (r"regener\w*", r"reescrev\w*", r"refaz\w*", r"refac\w*"),
        "create_video_clip": (r"clip", r"clipe", r"cort(?:e|a|ar|em|ando)", r"recort(?:e|a|ar|em)", r"extrai\w*"),
        "detect_clips": (r"detet\w*", r"detect\w*", r"encontr\w*", r"sugir\w*", r"sugere\w*", r"propo(?:r|e|nha|nham)",
                         r"identific\w*"),
        "render_clips": (r"renderiz\w*", r"produz\w*", r"gerar", r"gere", r"gera", r"gerem"),
        "complete_descriptions": (r"descric\w*", r"complet\w*"),
        "update_video": (r"alter\w*", r"modific\w*", r"mud[ae]\w*", r"substitu\w*", r"edit\w*", r"atualiz\w*"),
        "update_revival_candidate": (r"revis(?:e|a|ar|em|ao|oes)", r"rever", r"descart\w*", r"candidat\w*", r"reabr\w*",
                                     r"elegiv\w*"),
    },
    kind_words={
        "account": (r"quem", r"identidades?", r"chaves?", r"ambitos?", r"scopes?", r"espacos?", r"contas?",
                    r"ambientes?"),
        "credits": (r"saldos?", r"creditos?", r"dinheiro", r"planos?"),
        "usage": (r"usos?", r"consumos?", r"utilizac\w*", r"monitoriz\w*", r"alertas?", r"tokens?", r"llm",
                  r"latenc\w*", r"erros?", r"estat\w*", r"metric\w*", r"pedidos?"),
        "jobs": (r"jobs?", r"tarefas?", r"trabalhos?", r"processamentos?", r"estado", r"progresso", r"fila",
                 r"renderiz\w*"),
        "content": (r"videos?", r"artigos?", r"medias?", r"midias?", r"afirmac\w*", r"entidades?", r"intenc\w*",
                    r"momentos?", r"capitulos?", r"narrativ\w*", r"temas?", r"topicos?", r"assuntos?", r"grafos?",
                    r"elementos?", r"transcri\w*", r"resum\w*", r"export\w*", r"pontuac\w*", r"scores?", r"aeo",
                    r"geo", r"traduc\w*", r"clips?", r"clipes?", r"conteudos?", r"canal", r"canais",
                    r"anali[sz]\w*"),
        "templates": (r"modelos?", r"templates?", r"clips?", r"clipes?", r"renderiz\w*", r"detet\w*", r"detect\w*"),
        "revival": (r"reativ\w*", r"candidat\w*", r"descric\w*", r"plataformas?"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"Não consegui {what}: a sua chave não tem o âmbito {scope}.",
    refused=lambda what, why: f"Não pude {what}: {why}.",
    failed=lambda what, why: f"Não foi possível {what}: {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "Para traduzir, indique a língua de destino (en, de, es, it, pt ou nl).",
        "missing_range": lambda s, v: "Para cortar um clip, indique o intervalo de tempo, por exemplo «de 0:10 a "
                                      "0:40».",
        "missing_name": lambda s, v: "Indique o nome entre aspas, por exemplo «Energia de fusão».",
        "range_cut": lambda s, v: f"Um intervalo indica no máximo {v.get('max')} identificadores; mantive os "
                                  f"{v.get('max')} primeiros.",
        "default_format": lambda s, v: f"Não indicou nenhum formato: usei {v.get('format')} (existem html, markdown, "
                                       "json, schema, opengraph e txt).",
        "default_platforms": lambda s, v: "Não indicou nenhuma plataforma: usei "
                                          f"{', '.join(v.get('platforms') or [])}.",
    },
    unresolved={
        "failed_before": "precisa da resposta de {name}, que não teve êxito",
        "not_run": "precisa da resposta de {name}, que não foi executada",
        "no_article": "o vídeo {video} ainda não tem artigo (analise-o primeiro)",
        "no_template": "não há nenhum modelo para usar",
        "template_without_id": "os modelos não têm identificador",
        "no_detected_clips": "a tarefa de clips não detetou nenhum clip (a deteção já terminou?)",
        "no_such_clip": "não existe o clip {clip} (a tarefa de clips detetou {count})",
        "no_candidate": "o média {media} não tem nenhum candidato à reativação",
        "unknown_need": "necessidade desconhecida: {need}",
    },
    performed=lambda count, ok: f"Executei {count} ações: {ok} com êxito, {count - ok} sem êxito.",
    not_understood=lambda shown: f"Não percebi: {shown}.",
    missing_scopes=lambda listed: f"Ficou por fazer por falta de âmbito: a sua chave não tem {listed}.",
    model_failed="O modelo de linguagem falhou: ",
    left_undone={
        "cap": lambda count, cap, wait: (
            f"{_actions(count, 'outra ação pedida não foi feita', 'outras ações pedidas não foram feitas')}: no "
            f"máximo {cap} ações por mensagem. Peça o resto de novo."),
        "rate_limited": lambda count, cap, wait: (
            f"{_actions(count, 'ação pedida não foi feita', 'ações pedidas não foram feitas')}: o limite de pedidos "
            f"do seu espaço de trabalho foi atingido; tente de novo{f' dentro de {wait} s' if wait else ''}."),
        "stopped": lambda count, cap, wait: (
            f"Interrompido: {_actions(count, 'ação pedida não foi feita', 'ações pedidas não foram feitas')}."),
    },
    help=_HELP,
)


# How a message asks for things in Portuguese (domain.agent.planner reads them, folded: no accents).
# "para" is the word of a purpose ("para o alemão"), never of stopping; "plano" is a plan, never a shot.
REQUESTS = RequestWords(
    verbs=(r"mostre|mostra|mostrar|liste|lista|listar|exiba|exibe|exibir|analise|analisa|analisar|exporte|exporta|"
           r"exportar|cancele|cancela|cancelar|detete|deteta|detetar|detecte|detecta|detectar|renderize|renderiza|"
           r"renderizar|traduza|traduz|traduzir|regenere|regenera|regenerar|renomeie|renomeia|renomear|corte|corta|"
           r"cortar|extraia|extrair|crie|cria|criar|complete|completa|completar|encontre|encontra|procure|qual|quais|"
           r"quanto|quantos|quantas|baixe|abra|leia|veja|diga"),
    sequence=r"e depois|depois disso|depois|e em seguida|em seguida|e a seguir|a seguir|e entao|por fim|finalmente",
    conjunction="e",
    also="tambem",
    polite="por favor",
    determiners="o |a |os |as |meu |meus |minha |minhas |o meu |a minha |os meus |as minhas ",
    kinds={"video": r"videos?", "article": r"artigos?", "job": r"jobs?|trabalhos?|tarefas?",
           "media": r"medias?|midias?", "template": r"modelos?\b(?! de linguagem)|templates?", "clip": r"clip(?:e?s)?"},
    numbered=r"numeros?",
    joins=r"e|ou",
    ranges=r"a|ate",
    this=r"este|esta|esse|essa|o mesmo|a mesma",
    counted=r"videos?|trabalhos?|tarefas?|artigos?|candidat\w*|medias?|midias?",
    limit_before=r"ultim\w*|primeir\w*|limite",
    limit_after=r"ultim\w*|primeir\w*|recentes?|mais recentes",
    seconds=r"s|seg|segundos?",
    minutes=r"min|minutos?",
    time_from=r"de|desde|entre",
    time_to=r"a|ate|e",
    language_word=r"idioma|lingua|destino|codigo",
    languages={"en": r"ingles", "fr": r"frances", "de": r"alemao", "es": r"espanhol|castelhano", "it": r"italiano",
               "pt": r"portugues", "nl": r"neerlandes|holandes"},
    without_article=r"sem\s*(?:o |um )?artigo",
    styles={"journalistic": r"jornalisti\w*", "narrative": r"narrativ\w*", "analytical": r"analitic\w*",
            "tutorial": r"tutorial\w*", "conversational": r"conversacional\w*|de conversa",
            "documentary": r"documental\w*|documentario\w*", "interview": r"entrevista\w*"},
    statuses={"eligible": r"elegive\w*", "reviewing": r"em revisao|por rever|a rever", "selected": r"selecionad\w*",
              "dismissed": r"descartad\w*|rejeitad\w*", "stale": r"obsolet\w*|desatualizad\w*"},
    platforms={"professional_network_long": r"rede profissional",
               "short_video_app": r"(?:aplicacao|app) de videos curtos"},
    all_platforms=r"(?:todas|cada)\s+(?:as\s+)?plataformas?",
    asks={
        "cancel": r"cancel\w*|anul\w*|interromp\w*|pare\b|parar\b|abort\w*", "translate": r"tradu\w*",
        "translations": r"traducoes\b", "translate_verb": r"traduz(?:a|am|ir|e|em|i)?\b",
        "regenerate": r"regener\w*|reescrev\w*|refaz\w*",
        "rename": r"renome\w*|renomei\w*", "rename_to": r"para|como", "attach": r"associ\w*|vincul\w*|anex\w*",
        "descriptions": r"descric\w*", "write": r"complet\w*|redig\w*|redij\w*|escrev\w*|preench\w*|gerar\b|gere\b",
        "clips": r"clip(?:e?s)?\b|trechos?", "moments": r"momentos?",
        "detect": r"detet\w*|detect\w*|encontr\w*|identific\w*|sugir\w*|sugere\w*|propo\w*|procur\w*",
        "generate": r"gerar\b|gere\b|gera\b|faca\b|faz\b|fazer\b|crie\b|cria\b|criar\b",
        "render": r"renderiz\w*|produz\w*|gerar\b|gere\b", "track": r"estado|progresso|acompanh\w*",
        "cut": r"cort\w*|recort\w*|extrai\w*", "candidates": r"candidat\w*|reativ\w*|relanc\w*",
        "at_least": r"pelo menos|no minimo|mais de|acima de|superior a",
        "export": r"export\w*|descarreg\w*|baixar\b|baixe\b",
        "analyse": r"anali[sz]\w*", "results": r"resultados?|da analise",
        # "analise" is also the noun ("a análise do vídeo"): it runs one only before its object
        "run": r"analise (?:o|a|os|as)\b|analisa\b|analisar\b|execute\b|executar\b|inicie\b|iniciar\b|lance\b",
        "chapters": r"capitul\w*", "transcript": r"transcri\w*", "behavioral": r"comportament\w*",
        "premium": r"premium|alta qualidade|melhor qualidade|maxima qualidade", "scores": r"pontuac\w*|notas?\b",
        "graph": r"grafos?\b", "create": r"cri[ae]\w*|nov[oa]s?\b|adicion\w*",
        "named": r"chamad[oa]s?|nomead[oa]s?|intitulad[oa]s?|com o nome", "status": r"estado|situacao",
    },
    account={
        "get_usage_llm": r"llm|tokens?|modelos? de linguagem", "get_credits": r"saldo|creditos?",
        "get_usage": r"uso|utilizacao|consumo|chamadas|gast\w*|consumid\w*",
        "get_monitoring_alerts": r"alertas?|avisos?",
        "get_monitoring": r"monitoriza\w*|monitoramento|supervisao|saude|painel",
        "get_me": r"quem sou|meu espaco|meu plano|minha chave|meus scopes|meus ambitos",
    },
    video_reads={
        "get_claims": r"afirmac\w*|alegac\w*|factos?|fatos?", "get_entities": r"entidades?",
        "get_intents": r"intenc\w*|pesquisas?|consultas?|perguntas?", "get_moments": r"momentos?|destaques?",
        "get_topics": r"temas?|topicos?|assuntos?", "get_narrative": r"narrativ\w*|estrutura|capitulos?",
        "get_visual_elements": (r"visuais|visual\b|cenas?|gestos?|olhar para a (?:camara|camera)|contac?to visual|"
                                r"postura|linguagem corporal|expressoes|expressao|sorri\w*|maos?|comportament\w*"),
        "get_audio_elements": r"audio|sonor\w*|silencios?|volume",
    },
    help=(r"ajuda|ola|oi|obrigad[oa]|o que (?:voce |tu )?(?:pode|podes|sabe|sabes|consegue|consegues) fazer|"
          r"comandos?"),
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"primeiro|depois|agora|finalmente|por\s+fim|para\s+terminar")

# how a question read out opens (domain.analysis.text.read_out_question; not "porque", also "because")
_ASKING = r"(?:por que|como|quando|onde|qual|quais|quant[oa]s?|o que|quem)\b"


LANGUAGE = Language(
    code="pt",
    markers=frozenset({
        "o", "os", "meu", "meus", "minha", "minhas", "mostre", "mostrar", "exporte", "traduza",
        "analise", "cancele", "obrigado", "obrigada", "ola", "da", "dos", "das", "em", "com", "nao",
        "quantos", "quantas", "qual", "quais", "depois", "tambem", "artigo", "artigos", "trabalhos", "tarefas",
        "saldo", "alertas", "ultimos", "ultimas", "capitulos", "sou", "quem", "por", "favor", "do", "no", "na",
        "nas", "ao", "aos", "as", "mostra", "liste", "exiba", "corte", "renomeie", "regenere", "detete", "tarefa",
        "afirmacoes", "descricoes", "traducoes", "pontuacoes", "linguagem", "ajuda", "oi", "voce", "podes", "pode",
        "fazer", "sem", "qualidade", "alemao", "grafo", "entao", "ate", "isso", "eu", "trabalho", "um", "uma", "crie",
        "chamado", "chamada", "transcricao", "reativacao",
    }),
    # the accents Spanish or French also write (and ç) weigh for Portuguese too, so that "vídeo" or "ações"
    # tell nothing on their own; a tie goes to the language named first (es, fr)
    letters="ãõáíóúâêôçà",
    name="Portuguese",
    locale="pt_PT",
    stemmer="portuguese",
    called=r"portuguese|portugais",
    spoken_fillers=(
        "é né tipo então pronto bem bom okay ok ah eh hum digamos realmente olá bem-vindos obrigado obrigada "
        "tchau"
    ),
    hesitations="hum ahn éh hmm",
    leading_fillers="é então e bom bem ok okay sim mas",
    comma_openers="finalmente depois primeiro segundo agora também então",
    leading_words="então bom bem e mas ok",
    cue_phrases=(
        r"agora|a\s+seguir|em\s+seguida|passemos|vamos\s+(?:falar|passar|ver|agora)|falemos|primeiro|segundo|"
        r"terceiro|em\s+primeiro\s+lugar|finalmente|por\s+fim|para\s+(?:concluir|terminar|começar)|"
        r"em\s+conclusão|outro\s+(?:ponto|tema|assunto|exemplo)|(?:o|a)\s+próxim[oa]|o\s+que\s+é|como|por\s+que"
    ),
    announce_phrases=(
        _OPENERS + r"(?:vamos\s+falar|falemos)\s+(?:agora\s+)?(?:sobre\s+(?:o|a|os|as)|do|da|dos|das|de)|"
        + _OPENERS + r"passemos\s+(?:agora\s+)?(?:aos|às|ao|à)"
    ),
    instruction_phrases=(
        r"(?:(?:primeiro|depois|então|agora|finalmente)[,\s]+)?"
        r"(?:clique|abra|instale|baixe|execute|digite|selecione|pressione|insira|apague|cole|salve|conecte|"
        r"despeje|misture|vá\s+para|verifique|meça|certifique-se|não\s+se\s+esqueça|comece\s+por)\b|"
        r".*?\b(?:passo\s+(?:\d+|um|dois|três|quatro|cinco)|(?:o\s+)?(?:primeiro|próximo|último)\s+passo)\b"
    ),
    step_openers=r"primeiro|para\s+começar|comece|em\s+primeiro\s+lugar",
    video_subject_phrases=(
        r"\b(?:este|esta)\s+(?:(?:breve|pequeno|pequena)\s+)?(?:vídeo|video|episódio|aula|podcast|apresentação|"
        r"guia|introdução)\s+(?:sobre|acerca\s+de)\s+(?:o\s+|a\s+|os\s+|as\s+)?"
    ),
    conclusion_phrases=r"em\s+conclusão|para\s+concluir|em\s+resumo|para\s+terminar|resumindo",
    sponsor_phrases=r"\bpatrocina(?:dor|do|da)\b|\bcódigo\s+(?:promocional|de\s+desconto)\b",
    definition_phrases=(
        r"\b(?:é|são|era|eram|foi)\s+(?:um|uma|uns|umas|o|a|os|as|o\s+que)\b|\bsignifica\b|\bse\s+refere\s+a\b|"
        r"\brefere-se\s+a\b|\bdefine-se\b|\bconsiste\s+em\b|\bchama-se\b|\bse\s+chama\b|\bchamamos\b|"
        r"\bcorresponde\s+a\b"
    ),
    cause_phrases=(
        r"\bporque\b|\bportanto\b|\bpor\s+isso\b|\blevam?\s+a\b|\bcausam?\b|\bprovoca|\bdevido\s+a\b|\bgraças\s+a\b|"
        r"\bpermitem?\b|\bde\s+modo\s+que\b|\bcomo\s+resultado\b|\bjá\s+que\b|\buma\s+vez\s+que\b"
    ),
    comparison_phrases=(
        r"\bmais\s+(?:de|do\s+que|que)\b|\bmenos\s+(?:de|do\s+que|que)\b|\b(?:o|a|os|as)\s+mais\b|\bo\s+primeiro\b|"
        r"\ba\s+primeira\b|\bvezes\s+(?:mais|menos)\b|\bo\s+(?:dobro|triplo)\b|\bmilh(?:ão|ões)\b|\bbilh(?:ão|ões)\b|"
        r"\ba\s+maioria\b|\b(?:para|por)\s+cada\b"
    ),
    hedge_phrases=(
        r"\beu\s+acho\b|\bacho\s+que\b|\bcreio\b|\btalvez\b|\bprovavelmente\b|\bna\s+minha\s+opinião\b|"
        r"\bme\s+parece\b|\bparece-me\b|\bsuponho\b|\bde\s+certa\s+forma\b"
    ),
    social_phrases=(
        r"\bolá\b|\bbem-vind[oa]s?\b|\bobrigad[oa]\b|\binscrev|\bat[ée]\s+(?:logo|breve|a\s+próxima)\b|\btchau\b|"
        r"\badeus\b"
    ),
    connective_openers="e mas então ou depois também porque além pois portanto",
    anaphora_openers="isso isto ele ela eles elas é são era eram foi",
    hook_openers="por que|e se|você sabia|sabia que|imagine|aqui está|eis|o segredo|a verdade|atenção",
    attribution_phrases="segundo|de acordo com|disse|afirma|declarou",
    speech_markers=r"\btipo,|\bsabe,|\btipo assim\b",
    question_leads="a (?:grande |verdadeira |primeira )?pergunta(?: para você| para vocês)?(?:,[^,?]{1,30},)? é",
    read_questions=(rf"\b(?:pergunta|perguntou|escreve|quer saber)[,:]?\s+(?={_ASKING})"
                    rf"|\bperguntas? (?:é |vem )?de [^,.?!]{{1,40}},\s*(?={_ASKING})"
                    r"|\bperguntas?(?: seguinte)? vem de [^,.?!]{1,40}[.!]?\s*$"),
    tag_questions="né|certo|não|sabe|viu|entende|ok|okay|tá",
    process_words="como (?:se|funciona|fazer|faz)|passos?|processo|método|funciona",
    month_names="janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    unit_words=(
        r"por\s?cento|euros?|dólares?|libras?|bilhões|bilhão|milhões|milhão|mil|quilômetros?|quilómetros?|"
        r"metros?|quilos?|toneladas?|graus?|watts?|horas?|minutos?|segundos?|anos?|dias?|meses|mês|"
        r"semanas?|vezes|habitantes|pessoas|funcionários|usuários|utilizadores"
    ),
    question_openers=("por que", "porque é que"),
    conjunction="e",
    scales={"mil": 3, "milhão": 6, "milhões": 6, "bilhão": 9, "bilhões": 9},
    indefinite="um uma uns umas",
    vague_heads="espécie forma maneira monte pouco parte metade vez vezes",
    judgement_words=("bom boa bons boas claro clara claros claras ótimo ótima estranho estranha enorme enormes "
                     "incrível interessante interessantes fantástico fantástica terrível louco louca engraçado "
                     "engraçada complicado complicada feliz decepcionante"),
    connectors="de do da dos das e em para com",
    pronouns=(
        "eu me mim tu te ti ele ela nós nos vós vos eles elas lhe lhes isto isso aquilo este esta esse essa meu "
        "minha teu tua seu sua nosso nossa algo nada alguém lo la los las"
    ),
    article_pronouns="o a os as",
    dangling="e ou mas o a os as um uma de do da a ao em para com por",
    verb_signals="eu tu ele ela nós eles elas se me te lhe não para",
    determiners=(
        "o a os as um uma uns umas do da dos das no na nos nas ao aos à às pelo pela pelos pelas este esta "
        "estes estas esse essa esses essas aquele aquela meu minha meus minhas teu tua seu sua seus suas nosso "
        "nossa nossos nossas cada vários várias alguns algumas todo toda todos todas"
    ),
    noun_rule=0,
    verb_endings=("amos", "emos", "imos"),
    contractions="do da dos das no na nos nas ao aos à às pelo pela pelos pelas",
    plural_endings=("s", "es"),
    adverb_endings=("mente",),  # "extraordinariamente" of "extraordinaria"; "la mente" is too short a rest
    definite={"do": "o", "da": "a", "dos": "os", "das": "as", "no": "o", "na": "a", "nos": "os", "nas": "as",
    "ao": "o", "aos": "os", "à": "a", "às": "as", "pelo": "o", "pela": "a", "pelos": "os", "pelas": "as"},
    definite_articles=("o", "a", "os", "as"),
    aspect_articles={"o": "do", "a": "da", "os": "dos", "as": "das"},
    plural_articles={"os", "as"},
    plural_templates={"what": "o que são {t}", "how": "como funcionam {t}", "why": "porque {t} importam"},
    org_tail=(
        "al|ais|ana|anas|ano|anos|ica|icas|ico|icos|ense|enses|eira|eiras|eiro|eiros|eia|eias|eu|eus",
        r"da\s+|do\s+|das\s+|dos\s+|de\s+",
        r"que|o|a|os|as|um|uma",
    ),
    labels={
        "introduction": "Introdução", "key_facts": "Pontos-chave", "faq": "Perguntas frequentes",
        "conclusion": "Conclusão", "step": "Passo", "in_short": "Em resumo", "analysis": "Análise",
        "figures": "Números e factos", "timeline": "Cronologia", "and": "e", "what": "o que é {t}",
        "how": "como funciona {t}", "why": "porque {t} importa", "how_to": "como {t}", "who": "quem é {t}",
        "hook": "gancho", "context": "contexto", "development": "desenvolvimento", "conclusion_part": "conclusão",
        "chapters": "Capítulos", "source": "Fonte", "watch": "Ver em", "question": "P", "answer": "R",
        "also_answered": "Outras perguntas respondidas", "main_entities": "Entidades principais",
    },
    colon=": ",
    question_mark="?",
    requests=REQUESTS,
    assistant=ASSISTANT,
)
