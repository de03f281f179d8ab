"""Italian: what the service knows of it, and the assistant's Italian.

The assistant reads requests in it (``REQUESTS``) and answers in it (``ASSISTANT``): its labels,
sentences and the words that ask for its actions, with the same keys as the English home
(``domain.languages.en``; see there). It says "tu" to the person, as Italian software does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, optional_words

R = dict[str, Any]


def _n(count: int, one: str, many: str) -> str:
    """``count`` and its noun where no ``Say`` is at hand (zero is plural in Italian)."""
    return f"{count} {one if count == 1 else many}"


def _credits(s: Say, n: str, r: R, a: R) -> str:
    return (f"Il tuo saldo è di {s.n(r.get('balance'), 'credito', 'crediti')} ({s.n(r.get('used'), 'usato', 'usati')} "
            f"su {r.get('total')}, piano {r.get('plan')}).")


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Consumi: {s.n(r.get('totalApiCalls'), 'chiamata API', 'chiamate API')}, "
            f"{s.n(r.get('totalCreditsConsumed'), 'credito consumato', 'crediti consumati')}, "
            f"{r.get('averageResponseMs')} ms in media.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return (f"Consumi del modello linguistico: {s.n(totals.get('calls', 0), 'chiamata', 'chiamate')}, "
            f"{totals.get('totalTokens', 0)} token.")


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Spazio di lavoro {s.q(r.get('workspace'))}, piano {r.get('plan')}, "
            f"{s.n(r.get('credits_balance'), 'credito rimanente', 'crediti rimanenti')}; la tua chiave "
            f"{r.get('environment')} ha gli scope {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Monitoraggio: {s.n(r.get('calls_last_hour'), 'chiamata', 'chiamate')} nell'ultima ora (tasso di "
            f"errore {r.get('error_rate_last_hour')}), {r.get('jobs_pending')} job in attesa, "
            f"{r.get('jobs_running')} in corso, {s.n(r.get('jobs_failed_24h'), 'non riuscito', 'non riusciti')} "
            f"nelle ultime 24 h, {s.n(r.get('alerts'), 'avviso attivo', 'avvisi attivi')}.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Nessun avviso attivo."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return (f"{s.n(r['count'], 'avviso attivo', 'avvisi attivi')} ({s.n(r.get('critical', 0), 'critico', 'critici')}): "
            f"{shown}.")


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Non hai ancora nessun video."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'video', 'video')}: {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", articolo {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Video {r.get('id')} {s.q(r.get('name'))}: {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'credito addebitato', 'crediti addebitati')}" if charged is not None else ""
    return f"In coda: {s.label(n, a)}, job {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (una richiesta identica già fatta, riutilizzata)" if r.get("reused") else ""
    return f"{s.label(n, a).capitalize()}: job di clip {r.get('job_id')}{reused} ({r.get('link')})."


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" Primi: " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):  # the behavioural summaries are written in English
        shown += " Sullo schermo (in inglese): " + "; ".join(str(f) for f in r["on_screen"]) + "."
    what = s.label(n, a).split(" ", 2)[-1]  # "affermazioni del video 3"
    return f"Video {a.get('id')}: {s.n(r.get('count'), 'elemento', 'elementi')} ({what}, {r.get('link')}).{shown}"


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Video {a.get('id')}: struttura {', '.join(map(str, r.get('structure') or []))}; capitoli: "
            f"{chapters or 'nessuno'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Grafo dei contenuti {whose}{a.get('id')}: "
                f"{s.n(r.get('claims', 0), 'affermazione', 'affermazioni')}, "
                f"{s.n(r.get('entities', 0), 'entità', 'entità')}, "
                f"{s.n(r.get('searchIntents', 0), 'intenzione di ricerca', 'intenzioni di ricerca')}, "
                f"{s.n(r.get('clipMoments', 0), 'momento per clip', 'momenti per clip')}, "
                f"preparazione GEO {r.get('geo_readiness_score')} ({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Non hai nessun job."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')}%")
    return f"{s.n(r['count'], 'job', 'job')}: {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", articolo {r['article_id']}" if r.get("article_id") else ""
    return (f"Job {r.get('id')} ({r.get('type')}): {s.status(r.get('status'))}, {r.get('progress')}%, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Non hai ancora nessun articolo."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'articolo', 'articoli')}: {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Articolo {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, complessivo "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {r['bytes']} byte" if r.get("bytes") is not None else ""
    return f"Esportazione dell'articolo {a.get('id')} in {a.get('format')}{size}: {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Articolo {a.get('id')} {'modificato' if r.get('updated') else 'invariato'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{s.n(r.get('count', 0), 'media', 'media')}{': ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Media {r.get('id')} {s.q(r.get('name'))} creato."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (predefinito)" if x.get("is_default") else ""))
    return f"{s.n(r.get('count', 0), 'modello', 'modelli')}: {shown}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Job di clip {a.get('jobId')}: {s.status(r.get('status'))}, {s.n(r.get('clips', 0), 'clip', 'clip')}, "
            f"{s.n(r.get('rendered_clips', 0), 'renderizzata', 'renderizzate')}, "
            f"{s.n(r.get('failed_clips', 0), 'non riuscita', 'non riuscite')} ({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Nessun candidato al rilancio."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (media "
                      f"{x.get('media_id')}, punteggio {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'candidato al rilancio', 'candidati al rilancio')}: {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return f"Descrizioni completate per il media {r.get('media_id')} ({drafts}); richiesta {r.get('request_id')}."


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Fatto: {s.label(n, a)}{': ' + facts if facts else ''}."


_KINDS = {"video": "video", "article": "articolo", "job": "job", "media": "media", "clip_job": "job di clip",
          "template": "modello"}


def _missing_id(s: Say, v: R) -> str:
    action = s.label(v.get("action", ""), {}).replace(" ?", "").replace(" {id}", "")
    kind = v.get("kind", "")
    return f"Per {action}, dimmi quale {_KINDS.get(kind, kind)} (il suo identificativo)."


def _not_done(count: int, more: bool = False) -> str:
    """"non sono state eseguite 3 (altre) azioni richieste": the verb agrees with the count."""
    other = ("altra " if count == 1 else "altre ") if more else ""
    if count == 1:
        return f"non è stata eseguita 1 {other}azione richiesta"
    return f"non sono state eseguite {count} {other}azioni richieste"


_HELP = ("Posso: leggere il tuo saldo, i consumi e gli avvisi; elencare o mostrare i tuoi video, job e articoli; "
         "analizzare un video (con capitoli, trascrizione, uno stile di scrittura, in premium); leggere le "
         "affermazioni, le entità, i temi o il grafo dei contenuti di un video; i punteggi, il grafo o "
         "l'esportazione di un articolo (html, markdown, json, schema, opengraph, txt), tradurlo o rigenerarlo; "
         "tagliare una clip, rilevare e renderizzare clip; elencare i candidati al rilancio e completare le "
         "descrizioni; annullare un job. Per esempio: «analizza il video 12 con i capitoli», «esporta l'articolo "
         "5 in markdown», «i video 3, 4 e 7», «il mio saldo e i miei avvisi». Al massimo 15 azioni per messaggio.")

_VIDEO_MEMBERS = ("get_claims", "get_entities", "get_intents", "get_moments", "get_topics", "get_visual_elements",
                  "get_audio_elements")

ASSISTANT = AssistantWords(
    quotes=("«", "»"),
    zero_is_singular=False,
    # of a video, a job or a candidate: masculine nouns all
    statuses={"pending": "in attesa", "running": "in corso", "completed": "completato", "failed": "non riuscito",
              "cancelled": "annullato", "uploaded": "caricato", "analyzing": "in analisi", "analyzed": "analizzato",
              "queued": "in coda", "eligible": "idoneo", "reviewing": "in revisione", "selected": "selezionato",
              "dismissed": "scartato", "stale": "obsoleto"},
    and_more=" (e altri)",
    labels={
        "get_me": "leggere il tuo spazio di lavoro e la tua chiave",
        "get_credits": "leggere il tuo saldo",
        "get_usage": "leggere i tuoi consumi",
        "get_usage_llm": "leggere i tuoi consumi del modello linguistico",
        "get_monitoring": "leggere il tuo monitoraggio",
        "get_monitoring_alerts": "leggere i tuoi avvisi",
        "list_videos": "elencare i tuoi video",
        "get_video": "mostrare il video {id}",
        "get_transcript": "leggere la trascrizione del video {id}",
        "analyze_video": "analizzare il video {id}",
        "get_claims": "leggere le affermazioni del video {id}",
        "get_entities": "leggere le entità del video {id}",
        "get_intents": "leggere le intenzioni di ricerca del video {id}",
        "get_moments": "leggere i momenti per clip del video {id}",
        "get_topics": "leggere i temi del video {id}",
        "get_narrative": "leggere la struttura narrativa del video {id}",
        "get_visual_elements": "leggere gli elementi visivi del video {id}",
        "get_audio_elements": "leggere gli elementi audio del video {id}",
        "get_video_graph": "leggere il grafo dei contenuti del video {id}",
        "list_jobs": "elencare i tuoi job",
        "get_job": "mostrare il job {id}",
        "cancel_job": "annullare il job {id}",
        "list_articles": "elencare i tuoi articoli",
        "get_article": "mostrare l'articolo {id}",
        "get_article_scores": "leggere i punteggi dell'articolo {id}",
        "get_article_graph": "leggere il grafo dell'articolo {id}",
        # the format is named once it is known ("Per esportare l'articolo, dimmi quale articolo")
        "export_article": lambda a: "esportare l'articolo {id} in {format}" if "format" in a else
                                    "esportare l'articolo {id}",
        "update_article": "modificare l'articolo {id}",
        "translate_article": "tradurre l'articolo {id}",
        "list_article_translations": "elencare le traduzioni dell'articolo {id}",
        "regenerate_article": "rigenerare l'articolo {id}",
        "list_medias": "elencare i tuoi media",
        "create_media": "creare il media",
        "create_video_clip": "tagliare una clip dal video {id}",
        "list_templates": "elencare i modelli",
        "detect_clips": lambda a: "rilevare clip nell'articolo {article_id}" if "article_id" in a else "rilevare clip",
        "render_clips": "renderizzare le clip",
        "get_clip_job": "leggere il job di clip {jobId}",
        "list_revival_candidates": "elencare i candidati al rilancio",
        "complete_descriptions": "completare le descrizioni del media {media_id}",
        "update_revival_candidate": "modificare il candidato {id}",
        "update_video": "modificare la descrizione del video {id}",
    },
    label_unknown="eseguire {name}",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("del video "),
        "get_article_graph": _graph("dell'articolo "),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    # whole words, folded; none of them an English or French word of another sense
    # ("individual", "tagline", "allegation")
    asks={
        "analyze_video": (r"analizz\w*",),
        "cancel_job": (r"annull\w*", r"interromp\w*", r"ferma", r"fermare", r"blocca\w*"),
        "create_media": (r"cre[ai]\w*", r"nuov[oai]", r"aggiung\w*"),
        "update_article": (r"rinomin\w*", r"collega(?:re|mi|lo)?", r"allega(?:re|mi|lo)?"),
        "translate_article": (r"tradu\w*",),
        "regenerate_article": (r"rigener\w*", r"riscriv\w*", r"rifai", r"rifare"),
        "create_video_clip": (r"clip", r"tagli[ao]?", r"tagliare", r"tagliami", r"ritagli\w*", r"estrai",
                              r"estrarre", r"estraimi"),
        "detect_clips": (r"rilev\w*", r"individua", r"individuare", r"individuami", r"trov\w*", r"proponi\w*",
                         r"suggerisc\w*", r"identific\w*"),
        "render_clips": (r"renderizz\w*", r"produc\w*", r"produrre", r"gener\w*"),
        "complete_descriptions": (r"descrizion[ei]", r"complet\w*"),
        "update_video": (r"modific\w*", r"cambi[aoi]\w*", r"aggiorn\w*", r"sostitu\w*"),
        "update_revival_candidate": (r"scart\w*", r"rived\w*", r"revision[ei]", r"candidat\w*", r"riapr\w*",
                                     r"idone\w*"),
    },
    kind_words={
        "account": (r"identit\w*", r"chiav[ei]", r"scope", r"account", r"profil[oi]", r"spazi[o]?",
                    r"ambient[ei]"),
        "credits": (r"saldo", r"credit[oi]", r"soldi", r"pian[oi]", r"abbonament[oi]"),
        "usage": (r"utilizz\w*", r"uso", r"consum[oi]", r"monitoraggio", r"avvis[oi]", r"allert\w*", r"token",
                  r"llm", r"latenz\w*", r"error[ei]", r"statistic\w*", r"metric\w*", r"richiest[ae]",
                  r"chiamat[ae]"),
        "jobs": (r"job", r"lavor[oi]", r"elaborazion[ei]", r"stato", r"avanzament[oi]", r"coda", r"rendering"),
        "content": (r"video", r"articol[oi]", r"media", r"affermazion[ei]", r"entita", r"intenzion[ei]",
                    r"moment[oi]", r"capitol[oi]", r"narrativ\w*", r"tem[ai]", r"argoment[oi]", r"graf[oi]",
                    r"element[oi]", r"trascri\w*", r"riassunt[oi]", r"riepilog\w*", r"esport\w*", r"punteggi[o]?",
                    r"aeo", r"geo", r"traduzion[ei]", r"clip", r"contenut[oi]", r"canal[ei]", r"anali[sz]\w*"),
        "templates": (r"modell[oi]", r"template", r"clip", r"renderizz\w*", r"rilev\w*"),
        "revival": (r"candidat\w*", r"rilanc\w*", r"descrizion[ei]", r"piattaform[ae]"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"Non ho potuto {what}: alla tua chiave manca lo scope {scope}.",
    refused=lambda what, why: f"Non ho potuto {what}: {why}.",
    failed=lambda what, why: f"Impossibile {what}: {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "Per tradurre, dimmi la lingua di destinazione (en, de, es, it, pt o nl).",
        "missing_range": lambda s, v: "Per tagliare una clip, indica l'intervallo, per esempio «da 0:10 a 0:40».",
        "missing_name": lambda s, v: "Indica il nome tra virgolette, per esempio «Energia da fusione».",
        "range_cut": lambda s, v: f"Un intervallo indica al massimo {v.get('max')} identificativi; ho tenuto i "
                                  f"primi {v.get('max')}.",
        "default_format": lambda s, v: f"Nessun formato indicato: ho usato {v.get('format')} (esistono html, "
                                       "markdown, json, schema, opengraph e txt).",
        "default_platforms": lambda s, v: f"Nessuna piattaforma indicata: ho usato "
                                          f"{', '.join(v.get('platforms') or [])}.",
    },
    unresolved={
        "failed_before": "richiede la risposta di {name}, che non è andata a buon fine",
        "not_run": "richiede la risposta di {name}, che non è stata eseguita",
        "no_article": "il video {video} non ha ancora un articolo (prima analizzalo)",
        "no_template": "non c'è nessun modello da usare",
        "template_without_id": "i modelli non hanno un identificativo",
        "no_detected_clips": "il job di clip non ha rilevato nessuna clip (il rilevamento è terminato?)",
        "no_such_clip": "il job di clip ha rilevato {count} clip; la clip {clip} non esiste",
        "no_candidate": "il media {media} non ha nessun candidato al rilancio",
        "unknown_need": "requisito sconosciuto {need}",
    },
    performed=lambda count, ok: (f"Ho eseguito {count} azioni: {_n(ok, 'riuscita', 'riuscite')}, "
                                 f"{_n(count - ok, 'non riuscita', 'non riuscite')}."),
    not_understood=lambda shown: f"Non ho capito: {shown}.",
    missing_scopes=lambda listed: f"Non eseguito per mancanza di uno scope: la tua chiave non ha {listed}.",
    model_failed="Errore del modello linguistico: ",
    left_undone={
        "cap": lambda count, cap, wait: f"{_not_done(count, more=True).capitalize()}: al massimo {cap} azioni per "
                                        "messaggio. Chiedi di nuovo il resto.",
        "rate_limited": lambda count, cap, wait: f"{_not_done(count).capitalize()}: è stato raggiunto il limite di "
                                                 "frequenza del tuo spazio di lavoro; "
                                                 f"riprova{f' tra {wait} s' if wait else ''}.",
        "stopped": lambda count, cap, wait: f"Interrotto: {_not_done(count)}.",
    },
    help=_HELP,
)



# How a message asks for things in Italian (domain.agent.planner reads them, folded: no accents).
REQUESTS = RequestWords(
    verbs=(r"mostra|mostrami|mostrare|fammi vedere|visualizza|elenca|elencami|elencare|dammi|apri|leggi|analizza|"
           r"analizzare|esporta|esportare|annulla|annullare|interrompi|ferma|rileva|rilevare|individua|trova|"
           r"trovare|cerca|renderizza|renderizzare|genera|traduci|tradurre|rigenera|rigenerare|riscrivi|rinomina|"
           r"rinominare|collega|taglia|tagliare|estrai|estrarre|crea|creare|completa|completare|scarica|segui|"
           r"controlla|quale|quali|quanto|quanti|quante"),
    sequence=r"e poi|poi|e quindi|quindi|dopodiche|dopo di che|successivamente|in seguito|infine",
    # "e", but not the "è" that folding makes of "qual è", "chi è", "cos'è"
    conjunction=r"(?<!qual )(?<!chi )(?<!')e",
    also="anche",
    polite=r"per favore|per piacere",
    determiners="il |lo |la |l'|i |gli |le |il mio |la mia |i miei |le mie |mio |mia |miei |mie ",
    kinds={"video": r"video", "article": r"articol[oi]", "job": r"job|lavor[oi]|elaborazion[ei]", "media": r"media",
           # "modello linguistico" is the language model (an account read), not a clip template
           "template": r"modell[oi](?! linguistic| di linguaggio)|template", "clip": r"clip"},
    numbered=r"numer[oi]|dal?",  # "l'articolo numero 5", "gli articoli dal 2 al 4"
    joins=r"e|o",
    ranges=r"a|al|fino a|fino al",
    this=r"questo|questa|lo stesso|la stessa|stesso|stessa",
    counted=r"video|job|lavori|articoli|candidat\w*|media",
    limit_before=r"ultim[oiae]|prim[oiae]|limite",
    limit_after=r"ultim[oiae]|piu recenti|recenti",
    seconds=r"s|sec|secondi|secondo",
    minutes=r"min|minuti|minuto",
    time_from=r"da|dal|tra|fra",
    time_to=r"a|al|e|fino a|fino al",
    language_word=r"lingua|destinazione|codice",
    languages={"en": r"inglese", "fr": r"francese", "de": r"tedesco", "es": r"spagnolo", "it": r"italiano",
               "pt": r"portoghese", "nl": r"olandese|neerlandese"},
    without_article=r"senza\s*(?:l'|un |alcun |nessun )?articolo",
    styles={"journalistic": r"giornalistic\w*", "narrative": r"narrativ\w*", "analytical": r"analitic\w*",
            "tutorial": r"tutorial\w*|didattic\w*", "conversational": r"colloquial\w*|conversazional\w*",
            "documentary": r"documentaristic\w*|documentari\w*", "interview": r"intervist\w*"},
    statuses={"eligible": r"idone\w*|eleggibil\w*", "reviewing": r"in revisione|da rivedere",
              "selected": r"selezionat\w*", "dismissed": r"scartat\w*|rifiutat\w*", "stale": r"obsolet\w*|scadut\w*"},
    platforms={"professional_network_long": r"rete professionale|social professionale",
               "short_video_app": r"app(?:licazione)? di video brevi"},
    all_platforms=r"(?:tutte|ogni)\s+(?:le\s+)?piattaform[ae]",
    asks={
        "cancel": r"annull\w*|interromp\w*|ferma\b|fermare\b|blocca\w*", "translate": r"tradu\w*",
        "translations": r"traduzioni\b", "translate_verb": r"traduci\b|tradurre\b|tradurlo\b",
        "regenerate": r"rigener\w*|riscriv\w*", "rename": r"rinomin\w*", "rename_to": r"in|come|a",
        "attach": r"collega\w*|allega\w*|associa\b|associare\b", "descriptions": r"descrizion[ei]",
        "write": r"complet\w*|scriv\w*|redig\w*|compila\b|compilare\b|gener\w*", "clips": r"clip|spezzon[ei]",
        "moments": r"moment[oi]",
        "detect": r"rilev\w*|individua\b|individuare\b|trov\w*|propon\w*|suggerisc\w*|identific\w*",
        "generate": r"gener\w*|crea\w*|fai\b", "render": r"renderizz\w*|produc\w*|produrre\b|gener\w*",
        "track": r"stato|avanzamento|monitora\w*",
        "cut": r"tagli[ao]?\b|tagliare\b|tagliami\b|ritagli\w*|estrai\b|estrarre\b|estraimi\b",
        "candidates": r"candidat\w*|rilanc\w*|da rilanciare", "at_least": r"almeno|oltre|superiore a|piu di",
        "export": r"esporta\w*|scarica\w*", "analyse": r"anali[sz]\w*", "results": r"risultat[oi]|dell'analisi",
        "run": r"analizza\b|analizzare\b|avvia\w*|lancia\b|esegui\b", "chapters": r"capitol\w*",
        "transcript": r"trascri\w*", "behavioral": r"comportament\w*",
        "premium": r"premium|alta qualita|qualita (?:alta|migliore|massima)|massima qualita|migliore qualita",
        "scores": r"punteggi\w*|valutazion[ei]|voti\b", "graph": r"graf[oi]\b",
        "create": r"cre[ai]\w*|nuov[oai]\b|aggiung\w*",
        "named": r"chiamat[oa]|intitolat[oa]|di nome|denominat[oa]", "status": r"stato",
    },
    account={
        "get_usage_llm": r"llm|token|modell[oi] linguistic[oi]|modell[oi] di linguaggio",
        "get_credits": r"saldo|credit[oi]",
        "get_usage": r"utilizzo|consum[oi]|chiamate|spes[ao]|consumat[oi]",
        "get_monitoring_alerts": r"avvis[oi]|allert\w*",
        "get_monitoring": r"monitoraggio|stato di salute|cruscotto",
        "get_me": r"chi sono|il mio spazio|il mio piano|la mia chiave|i miei scope|il mio account",
    },
    video_reads={
        "get_claims": r"affermazion[ei]|fatti|asserzion[ei]", "get_entities": r"entita",
        "get_intents": r"intenzion[ei]|ricerche|domande", "get_moments": r"moment[oi]|momenti salienti",
        "get_topics": r"temi|tema|argoment[oi]", "get_narrative": r"narrativ\w*|struttura|capitoli",
        "get_visual_elements": (r"visiv\w*|inquadratur[ae]|scen[ae]|gest[oi]|sguardo|postura|linguaggio del corpo|"
                                r"espression[ei]|sorris\w*|mani|comportament\w*|prossemica|lateralita"),
        "get_audio_elements": r"audio|sonor\w*|silenz[io]|volume",
    },
    help=r"aiuto|ciao|salve|buongiorno|grazie|cosa (?:puoi|sai) fare|che cosa (?:puoi|sai) fare|comandi",
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"prima\s+di\s+tutto|innanzitutto|poi|ora|adesso|infine|per\s+finire")
_ASKING = r"(?:perché|come|quando|dove|qual[ei]?|quant[oiae]|cosa|che cosa|chi)\b"  # a read-out question's opening


LANGUAGE = Language(
    code="it",
    markers=frozenset({
        "il", "gli", "lo", "della", "dello", "dei", "degli", "delle", "mio", "miei", "mia", "mie", "mostra",
        "mostrami", "elenca", "esporta", "traduci", "analizza", "annulla", "ciao", "grazie", "per", "favore",
        "con", "che", "quanti", "quante", "quale", "sono", "poi", "anche", "articolo", "articoli", "lavori",
        "saldo", "avvisi", "ultimi", "ultime", "capitoli", "dammi", "chi",
        # the articles, prepositions and words of a request to the assistant (never a word the others
        # write as often: "video", "media" and "clip" are every language's)
        "i", "e", "la", "le", "un", "una", "di", "da", "al", "dal", "del", "dell", "nel", "nell", "sul", "tra",
        "ma", "qual", "quali", "cos", "cosa", "puoi", "fare", "aiuto", "stato", "stile", "alta", "qualita",
        "senza", "fino", "piu", "recenti", "lavoro", "modello", "modelli", "linguistico", "consumi", "temi",
        "entita", "affermazioni", "punteggi", "grafo", "trascrizione", "traduzioni", "candidati", "rilancio",
        "descrizioni", "piattaforme", "tutte", "taglia", "rileva", "rigenera", "rinomina", "lingua", "tedesco",
        "inglese", "chiamato", "mostrare", "elencami",
    }),
    letters="ìò",
    name="Italian",
    locale="it_IT",
    stemmer="italian",
    called=r"italian|italien",
    spoken_fillers=("ehm eh uhm cioè allora insomma tipo praticamente diciamo okay ok beh vabbè ciao benvenuti "
                    "grazie arrivederci"),
    hesitations="ehm eh mh hmm",
    leading_fillers="ehm eh allora cioè e beh ok okay sì ma",
    comma_openers="infine poi dopo prima primo secondo ora adesso anche quindi",
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
    definition_phrases=(
        r"\b(?:è|sono|era|erano|fu)\s+(?:(?:un|uno|una|il|lo|la|i|gli|le|ciò\s+che)\b|l['’]|un['’])|\bsignifica\b|"
        r"\bsi\s+riferisce\s+a|\bsi\s+definisce\b|\bconsiste\s+(?:in|nel)|\bsi\s+chiama\b|\bchiamiamo\b|"
        r"\bcorrisponde\s+a"
    ),
    cause_phrases=(
        r"\bperché\b|\bperciò\b|\bpertanto\b|\bdi\s+conseguenza\b|\bportan?o?\s+a|\bcausan?o?\b|\bprovoca|"
        r"\ba\s+causa\s+d|\bgrazie\s+a|\bpermett(?:e|ono)\s+d|\bin\s+modo\s+che\b|\bdato\s+che\b|\bpoiché\b|"
        r"\bsiccome\b"
    ),
    comparison_phrases=(
        r"\bpiù\s+(?:di|che|del|della|dei|delle)\b|\bmeno\s+(?:di|che)\b|\b(?:il|la|i|le)\s+più\b|\bil\s+primo\b|"
        r"\bla\s+prima\b|\bvolte\s+(?:più|meno)\b|\bil\s+(?:doppio|triplo)\b|\bmilion[ei]\b|\bmiliard[io]\b|"
        r"\bla\s+maggior\s+parte\b|\bper\s+ogni\b"
    ),
    hedge_phrases=(r"\bpenso\b|\bcredo\b|\bforse\b|\bprobabilmente\b|\bsecondo\s+me\b|\bmi\s+sembra\b|"
                   r"\bsuppongo\b|\bin\s+un\s+certo\s+senso\b"),
    social_phrases=r"\bciao\b|\bbenvenut[ie]\b|\bgrazie\b|\biscriv|\bci\s+vediamo\b|\ba\s+presto\b|\barrivederci\b",
    connective_openers="e ma quindi o poi allora anche perché inoltre dunque però",
    anaphora_openers="ciò esso essa lui lei loro è sono era erano fu",
    hook_openers="perché|come mai|e se|lo sapevi|sapevi che|immagina|ecco|il segreto|la verità|attenzione",
    attribution_phrases="secondo|ha detto|afferma|ha dichiarato",
    speech_markers=r"\bcioè\b|\btipo,|\bdiciamo,",
    question_leads="la (?:vera |grande |prima )?domanda(?: per voi| per te)?(?:,[^,?]{1,30},)? è",
    read_questions=(rf"\b(?:chiede|chiedeva|scrive|vuole sapere|si chiede)[,:]?\s+(?={_ASKING})"
                    rf"|\bdomand[ae] (?:è |viene )?da [^,.?!]{{1,40}},\s*(?={_ASKING})"
                    r"|\bdomand[ae](?: successiva)? viene da [^,.?!]{1,40}[.!]?\s*$"),
    tag_questions="vero|no|capito|sai|vedi|ok|okay",
    process_words="come (?:si|funziona|fare|fa)|passi|passaggi|processo|metodo|funziona",
    month_names="gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    unit_words=(
        r"per\s?cento|euro|dollari|dollaro|sterline|miliardi|miliardo|milioni|milione|mila|chilometri|"
        r"chilometro|metri|metro|chili|chilo|tonnellate|tonnellata|gradi|grado|watt|ore|minuti|minuto|"
        r"secondi|anni|anno|giorni|giorno|mesi|mese|settimane|settimana|volte|abitanti|persone|dipendenti|"
        r"utenti"
    ),
    question_openers=("perché", "come mai"),
    conjunction="e", scales={"mila": 3, "mille": 3, "milione": 6, "milioni": 6, "miliardo": 9, "miliardi": 9},
    indefinite="un uno una",
    vague_heads="sorta specie modo maniera mucchio po parte metà volta volte",
    judgement_words=("buono buona buoni buone chiaro chiara chiari chiare bello bella belli belle ottimo ottima "
                     "strano strana enorme enormi incredibile interessante interessanti fantastico fantastica "
                     "terribile pazzo pazza divertente complicato complicata felice deludente"),
    connectors="di del della dei delle e in per con",
    pronouns=("io me mi tu te ti lui lei egli ella noi ci voi vi loro esso essa questo questa quello quella mio "
              "mia tuo tua suo sua nostro nostra qualcosa niente nulla qualcuno"),
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
    verb_endings=("iamo", "iate",
                  # gerunds ("facendo"), and infinitives and gerunds with their pronouns ("tradurlo",
                  # "guardandola"): a noun said with these endings ("il comando", "i corsi") is said after a
                  # determiner, so it stays a noun
                  "ando", "endo", "rlo", "rla", "rli", "rle", "ndolo", "ndola", "ndoli", "ndole", "ndosi", "ndone",
                  "ndoci"),
    contractions=(
        "del dello della dei degli delle dell al allo alla ai agli alle all nel nello nella nei negli nelle nell "
        "sul sullo sulla sui sugli sulle sull dal dallo dalla dai dagli dalle dall"
    ),
    plural_endings=(),
    adverb_endings=("mente",),  # "extraordinariamente" of "extraordinaria"; "la mente" is too short a rest
    definite={f"{p}{a}": article for p in ("de", "a", "ne", "su", "da")
    for a, article in (("l", "il"), ("llo", "lo"), ("lla", "la"), ("lle", "le"), ("gli", "gli"), ("i", "i"),
                       ("ll", "l"))},
    definite_articles=("il", "lo", "la", "i", "gli", "le", "l"),
    aspect_articles={"il": "del", "lo": "dello", "la": "della", "i": "dei", "gli": "degli", "le": "delle",
                     "l": "dell'"},
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
    requests=REQUESTS,
    assistant=ASSISTANT,
)
