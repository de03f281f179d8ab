"""The offline reply: what was done, in the person's language (English or French), with the numbers
and ids the actions found.

One sentence per action, from its short result (``domain.agent.results``): what it found (a
balance, a list with its ids, a job and its link) or why it was not done (the missing scope, the
error's message). Then what the plan noted (a default it chose, an id it missed), what it did not
understand, and how many requested actions were left undone and why (the cap of 15, the rate
limit, a client that left). A message it does not understand at all gets the list of what it can
do (``help_text``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from domain.agent.planner import DEFAULT_EXPORT_FORMAT, Note, unresolved_text
from domain.agent.policy import fold


@dataclass(frozen=True)
class ActionView:
    """An action as the reply describes it."""

    name: str
    arguments: dict[str, Any]
    status: str  # ok, refused, failed
    result: dict[str, Any] | None
    error: dict[str, Any] | None  # {code, message, details}


_STATUS_FR = {"pending": "en attente", "running": "en cours", "completed": "terminé", "failed": "échoué",
              "cancelled": "annulé", "uploaded": "téléversée", "analyzing": "en analyse", "analyzed": "analysée",
              "queued": "en file", "eligible": "éligible", "reviewing": "en revue", "selected": "sélectionné",
              "dismissed": "écarté", "stale": "périmé"}


def _status(value: Any, fr: bool) -> str:
    return _STATUS_FR.get(str(value), str(value)) if fr else str(value)


def _q(text: Any, fr: bool) -> str:
    return f"« {text} »" if fr else f"“{text}”"


def _t(fr: bool, en: str, french: str) -> str:
    return french if fr else en


def _n(count: Any, one: str, many: str, *, fr: bool = False) -> str:
    """``count`` and its noun, singular for one (and for zero in French): "1 video", "3 vidéos"."""
    return f"{count} {one if count == 1 or (fr and count == 0) else many}"


def _de(what: str) -> str:
    """French "de" before an infinitive, elided before a vowel or a mute h: "d'analyser", "de lire"."""
    return f"d'{what}" if fold(what[:1]) in "aeiouyh" and what[:1] else f"de {what}"


# ------------------------------------------------------------------------------------ labels

_LABELS: dict[str, tuple[str, str]] = {
    "get_me": ("read your workspace and key", "lire votre espace et votre clé"),
    "get_credits": ("read your balance", "lire votre solde"),
    "get_usage": ("read your usage", "lire votre consommation"),
    "get_usage_llm": ("read your language-model usage", "lire votre consommation de modèle de langue"),
    "get_monitoring": ("read your monitoring", "lire votre supervision"),
    "get_monitoring_alerts": ("read your alerts", "lire vos alertes"),
    "list_videos": ("list your videos", "lister vos vidéos"),
    "get_video": ("show video {id}", "afficher la vidéo {id}"),
    "get_transcript": ("read the transcript of video {id}", "lire la transcription de la vidéo {id}"),
    "analyze_video": ("analyse video {id}", "analyser la vidéo {id}"),
    "get_claims": ("read the claims of video {id}", "lire les affirmations de la vidéo {id}"),
    "get_entities": ("read the entities of video {id}", "lire les entités de la vidéo {id}"),
    "get_intents": ("read the search intents of video {id}", "lire les intentions de recherche de la vidéo {id}"),
    "get_moments": ("read the clip moments of video {id}", "lire les moments de la vidéo {id}"),
    "get_topics": ("read the topics of video {id}", "lire les thèmes de la vidéo {id}"),
    "get_narrative": ("read the narrative structure of video {id}", "lire la structure narrative de la vidéo {id}"),
    "get_visual_elements": ("read the visual elements of video {id}", "lire les éléments visuels de la vidéo {id}"),
    "get_audio_elements": ("read the audio elements of video {id}", "lire les éléments audio de la vidéo {id}"),
    "get_video_graph": ("read the content graph of video {id}", "lire le graphe de contenu de la vidéo {id}"),
    "list_jobs": ("list your jobs", "lister vos jobs"),
    "get_job": ("show job {id}", "afficher le job {id}"),
    "cancel_job": ("cancel job {id}", "annuler le job {id}"),
    "list_articles": ("list your articles", "lister vos articles"),
    "get_article": ("show article {id}", "afficher l'article {id}"),
    "get_article_scores": ("read the scores of article {id}", "lire les scores de l'article {id}"),
    "get_article_graph": ("read the graph of article {id}", "lire le graphe de l'article {id}"),
    "export_article": ("export article {id} as {format}", "exporter l'article {id} en {format}"),
    "update_article": ("update article {id}", "modifier l'article {id}"),
    "translate_article": ("translate article {id}", "traduire l'article {id}"),
    "list_article_translations": ("list the translations of article {id}", "lister les traductions de l'article {id}"),
    "regenerate_article": ("regenerate article {id}", "régénérer l'article {id}"),
    "list_medias": ("list your medias", "lister vos médias"),
    "create_media": ("create the media", "créer le média"),
    "create_video_clip": ("cut a clip of video {id}", "découper un clip de la vidéo {id}"),
    "list_templates": ("list the templates", "lister les modèles"),
    "detect_clips": ("detect clips in article {article_id}", "détecter des clips dans l'article {article_id}"),
    "render_clips": ("render the clips", "rendre les clips"),
    "get_clip_job": ("read clip job {jobId}", "lire le job de clips {jobId}"),
    "list_revival_candidates": ("list the revival candidates", "lister les candidats à la relance"),
    "complete_descriptions": ("complete the descriptions of media {media_id}",
                              "compléter les descriptions du média {media_id}"),
    "update_revival_candidate": ("update revival candidate {id}", "modifier le candidat {id}"),
    "update_video": ("change the description of video {id}", "modifier la description de la vidéo {id}"),
}


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def label(name: str, arguments: dict[str, Any], fr: bool) -> str:
    if name == "detect_clips" and "article_id" not in arguments:  # its article comes from a video's answer
        return _t(fr, "detect clips", "détecter des clips")
    en, french = _LABELS.get(name, (f"run {name}", f"exécuter {name}"))
    return (french if fr else en).format_map(_Blank(arguments))


# ------------------------------------------------------------------------------------ what was found


def _list(items: list, fmt: Callable[[dict], str], fr: bool, has_more: bool = False) -> str:
    shown = "; ".join(fmt(i) for i in items)
    more = _t(fr, " (and more)", " (et d'autres)") if has_more else ""
    return shown + more


def _found(view: ActionView, fr: bool) -> str:
    r, a = view.result or {}, view.arguments
    n = view.name
    if n == "get_credits":
        return _t(fr, f"Your balance is {r.get('balance')} credits ({r.get('used')} used of {r.get('total')}, "
                      f"plan {r.get('plan')}).",
                  f"Votre solde est de {r.get('balance')} crédits "
                  f"({_n(r.get('used'), 'utilisé', 'utilisés', fr=True)} sur {r.get('total')}, "
                  f"offre {r.get('plan')}).")
    if n == "get_usage":
        return _t(fr, f"Usage: {r.get('totalApiCalls')} API calls, {r.get('totalCreditsConsumed')} credits consumed, "
                      f"{r.get('averageResponseMs')} ms on average.",
                  f"Consommation : {r.get('totalApiCalls')} appels à l'API, {r.get('totalCreditsConsumed')} crédits "
                  f"consommés, {r.get('averageResponseMs')} ms en moyenne.")
    if n == "get_usage_llm":
        totals = r.get("totals") or {}
        return _t(fr, f"Language-model usage: {totals.get('calls', 0)} calls, {totals.get('totalTokens', 0)} tokens.",
                  f"Consommation de modèle de langue : {totals.get('calls', 0)} appels, "
                  f"{totals.get('totalTokens', 0)} jetons.")
    if n == "get_me":
        scopes = ", ".join(r.get("scopes") or [])
        return _t(fr, f"Workspace {_q(r.get('workspace'), fr)}, plan {r.get('plan')}, {r.get('credits_balance')} "
                      f"credits left; your {r.get('environment')} key has the scopes {scopes}.",
                  f"Espace {_q(r.get('workspace'), fr)}, offre {r.get('plan')}, {r.get('credits_balance')} crédits "
                  f"restants ; votre clé {r.get('environment')} a les scopes {scopes}.")
    if n == "get_monitoring":
        return _t(fr, f"Monitoring: {r.get('calls_last_hour')} calls in the last hour (error rate "
                      f"{r.get('error_rate_last_hour')}), {r.get('jobs_pending')} jobs pending, "
                      f"{r.get('jobs_running')} running, {r.get('jobs_failed_24h')} failed in 24 h, "
                      f"{r.get('alerts')} active alerts.",
                  f"Supervision : {r.get('calls_last_hour')} appels dans l'heure (taux d'erreur "
                  f"{r.get('error_rate_last_hour')}), {r.get('jobs_pending')} jobs en attente, {r.get('jobs_running')} "
                  f"en cours, {r.get('jobs_failed_24h')} échoués en 24 h, {r.get('alerts')} alertes actives.")
    if n == "get_monitoring_alerts":
        if not r.get("count"):
            return _t(fr, "No active alert.", "Aucune alerte active.")
        shown = _list(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}", fr)
        return _t(fr, f"{_n(r['count'], 'active alert', 'active alerts')} ({r.get('critical', 0)} critical): "
                      f"{shown}.",
                  f"{_n(r['count'], 'alerte active', 'alertes actives', fr=True)} "
                  f"({r.get('critical', 0)} critiques) : {shown}.")
    if n == "list_videos":
        if not r.get("count"):
            return _t(fr, "You have no video yet.", "Vous n'avez pas encore de vidéo.")
        shown = _list(r.get("videos") or [], lambda v: f"#{v.get('id')} {_q(v.get('name'), fr)} "
                                                       f"({_status(v.get('status'), fr)})", fr, r.get("has_more"))
        return _t(fr, f"{_n(r['count'], 'video', 'videos')}: {shown}.",
                  f"{_n(r['count'], 'vidéo', 'vidéos', fr=True)} : {shown}.")
    if n == "get_video":
        article = r.get("article_id")
        extra = (_t(fr, f", article {article}", f", article {article}") if article else "")
        return _t(fr, f"Video {r.get('id')} {_q(r.get('name'), fr)}: {_status(r.get('status'), fr)}, "
                      f"{r.get('duration_seconds')} s{extra} ({r.get('link')}).",
                  f"Vidéo {r.get('id')} {_q(r.get('name'), fr)} : {_status(r.get('status'), fr)}, "
                  f"{r.get('duration_seconds')} s{extra} ({r.get('link')}).")
    if n in ("analyze_video", "translate_article", "regenerate_article", "create_video_clip"):
        what = label(n, a, fr)
        charged = r.get("credits_charged")
        cost = _t(fr, f", {_n(charged, 'credit', 'credits')} charged",
                  f", {_n(charged, 'crédit débité', 'crédits débités', fr=True)}") if charged is not None else ""
        return _t(fr, f"Queued: {what}, job {r.get('job_id')}{cost} ({r.get('link')}).",
                  f"Lancé : {what}, job {r.get('job_id')}{cost} ({r.get('link')}).")
    if n in ("detect_clips", "render_clips"):
        reused = _t(fr, " (an identical earlier request, reused)", " (une requête identique, réutilisée)") \
            if r.get("reused") else ""
        return _t(fr, f"{label(n, a, fr).capitalize()}: clip job {r.get('job_id')}{reused} ({r.get('link')}).",
                  f"{label(n, a, fr).capitalize()} : job de clips {r.get('job_id')}{reused} ({r.get('link')}).")
    if n in ("get_claims", "get_entities", "get_intents", "get_moments", "get_topics", "get_visual_elements",
             "get_audio_elements"):
        first = [f for f in (r.get("first") or []) if f]
        shown = (" " + _t(fr, "First: ", "Premiers : ") + "; ".join(_q(f, fr) for f in first) + ".") if first else ""
        what = label(n, a, fr).split(" ", 2)[-1]  # "the claims of video 3"
        return _t(fr, f"Video {a.get('id')}: {_n(r.get('count'), 'item', 'items')} ({what}, "
                      f"{r.get('link')}).{shown}",
                  f"Vidéo {a.get('id')} : {_n(r.get('count'), 'élément', 'éléments', fr=True)} ({what}, "
                  f"{r.get('link')}).{shown}")
    if n == "get_narrative":
        chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
        return _t(fr, f"Video {a.get('id')}: structure {', '.join(map(str, r.get('structure') or []))}; chapters: "
                      f"{chapters or 'none'} ({r.get('link')}).",
                  f"Vidéo {a.get('id')} : structure {', '.join(map(str, r.get('structure') or []))} ; chapitres : "
                  f"{chapters or 'aucun'} ({r.get('link')}).")
    if n in ("get_video_graph", "get_article_graph"):
        whose = _t(fr, f"video {a.get('id')}", f"la vidéo {a.get('id')}") if n == "get_video_graph" else \
            _t(fr, f"article {a.get('id')}", f"l'article {a.get('id')}")
        return _t(fr, f"Content graph of {whose}: {r.get('claims', 0)} claims, {r.get('entities', 0)} entities, "
                      f"{r.get('searchIntents', 0)} search intents, {r.get('clipMoments', 0)} clip moments, GEO "
                      f"readiness {r.get('geo_readiness_score')} ({r.get('link')}).",
                  f"Graphe de contenu de {whose} : {r.get('claims', 0)} affirmations, {r.get('entities', 0)} entités, "
                  f"{r.get('searchIntents', 0)} intentions de recherche, {r.get('clipMoments', 0)} moments, "
                  f"préparation GEO {r.get('geo_readiness_score')} ({r.get('link')}).")
    if n == "list_jobs":
        if not r.get("count"):
            return _t(fr, "You have no job.", "Vous n'avez aucun job.")
        shown = _list(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {_status(j.get('status'), fr)} "
                                                     f"{j.get('progress')} %", fr)
        return _t(fr, f"{_n(r['count'], 'job', 'jobs')}: {shown}.",
                  f"{_n(r['count'], 'job', 'jobs', fr=True)} : {shown}.")
    if n in ("get_job", "cancel_job"):
        error = f" ({r.get('error_message')})" if r.get("error_message") else ""
        article = _t(fr, f", article {r['article_id']}", f", article {r['article_id']}") if r.get("article_id") else ""
        return _t(fr, f"Job {r.get('id')} ({r.get('type')}): {_status(r.get('status'), fr)}, {r.get('progress')} %, "
                      f"{r.get('step')}{article}{error} ({r.get('link')}).",
                  f"Job {r.get('id')} ({r.get('type')}) : {_status(r.get('status'), fr)}, {r.get('progress')} %, "
                  f"{r.get('step')}{article}{error} ({r.get('link')}).")
    if n == "list_articles":
        if not r.get("count"):
            return _t(fr, "You have no article yet.", "Vous n'avez pas encore d'article.")
        shown = _list(r.get("articles") or [], lambda x: f"#{x.get('id')} {_q(x.get('title'), fr)} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})", fr,
                      r.get("has_more"))
        return _t(fr, f"{_n(r['count'], 'article', 'articles')}: {shown}.",
                  f"{_n(r['count'], 'article', 'articles', fr=True)} : {shown}.")
    if n in ("get_article", "get_article_scores"):
        ident = r.get("id", r.get("article_id", a.get("id")))
        title = f" {_q(r.get('title'), fr)}" if r.get("title") else ""
        return _t(fr, f"Article {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, composite "
                      f"{r.get('composite_score')} ({r.get('link')}).",
                  f"Article {ident}{title} : AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, composite "
                  f"{r.get('composite_score')} ({r.get('link')}).")
    if n == "export_article":
        size = f", {r['bytes']} " + _t(fr, "bytes", "octets") if r.get("bytes") is not None else ""
        return _t(fr, f"Export of article {a.get('id')} as {a.get('format')}{size}: {r.get('link')}.",
                  f"Export de l'article {a.get('id')} en {a.get('format')}{size} : {r.get('link')}.")
    if n == "update_article":
        changed = r.get("updated")
        return _t(fr, f"Article {a.get('id')} {'updated' if changed else 'unchanged'} ({r.get('link')}).",
                  f"Article {a.get('id')} {'modifié' if changed else 'inchangé'} ({r.get('link')}).")
    if n == "list_medias":
        shown = _list(r.get("medias") or [], lambda m: f"#{m.get('id')} {_q(m.get('name'), fr)}", fr)
        return _t(fr, f"{r.get('count', 0)} medias{': ' + shown if shown else ''}.",
                  f"{r.get('count', 0)} médias{' : ' + shown if shown else ''}.")
    if n == "create_media":
        return _t(fr, f"Media {r.get('id')} {_q(r.get('name'), fr)} created.",
                  f"Média {r.get('id')} {_q(r.get('name'), fr)} créé.")
    if n == "list_templates":
        shown = _list(r.get("templates") or [], lambda x: f"#{x.get('id')} {_q(x.get('name'), fr)} {x.get('format')}"
                      + (_t(fr, " (default)", " (par défaut)") if x.get("is_default") else ""), fr)
        return _t(fr, f"{r.get('count', 0)} templates: {shown}.", f"{r.get('count', 0)} modèles : {shown}.")
    if n == "get_clip_job":
        return _t(fr, f"Clip job {a.get('jobId')}: {_status(r.get('status'), fr)}, {r.get('clips', 0)} clips, "
                      f"{r.get('rendered_clips', 0)} rendered, {r.get('failed_clips', 0)} failed ({r.get('link')}).",
                  f"Job de clips {a.get('jobId')} : {_status(r.get('status'), fr)}, {r.get('clips', 0)} clips, "
                  f"{r.get('rendered_clips', 0)} rendus, {r.get('failed_clips', 0)} échoués ({r.get('link')}).")
    if n == "list_revival_candidates":
        if not r.get("count"):
            return _t(fr, "No revival candidate.", "Aucun candidat à la relance.")
        shown = _list(r.get("candidates") or [], lambda x: f"{x.get('id')} {_q(x.get('title'), fr)} (media "
                      f"{x.get('media_id')}, score {x.get('score')}, {_status(x.get('status'), fr)})", fr)
        return _t(fr, f"{_n(r['count'], 'revival candidate', 'revival candidates')}: {shown}.",
                  f"{_n(r['count'], 'candidat à la relance', 'candidats à la relance', fr=True)} : {shown}.")
    if n == "complete_descriptions":
        drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                           for d in r.get("drafts") or [])
        return _t(fr, f"Descriptions completed for media {r.get('media_id')} ({drafts}); request "
                      f"{r.get('request_id')}.",
                  f"Descriptions complétées pour le média {r.get('media_id')} ({drafts}) ; requête "
                  f"{r.get('request_id')}.")
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return _t(fr, f"Done: {label(n, a, fr)}{': ' + facts if facts else ''}.",
              f"Fait : {label(n, a, fr)}{' : ' + facts if facts else ''}.")


def describe(view: ActionView, fr: bool) -> str:
    """One sentence about one action."""
    if view.status == "ok":
        return _found(view, fr)
    error = view.error or {}
    what = label(view.name, view.arguments, fr)
    if error.get("code") == "insufficient_scope":
        scope = (error.get("details") or {}).get("required", "?")
        return _t(fr, f"I could not {what}: your key lacks the scope {scope}.",
                  f"Je n'ai pas pu {what} : votre clé n'a pas le scope {scope}.")
    message = str(error.get("message") or error.get("code") or "")
    details = error.get("details") or {}
    if error.get("code") == "not_resolved" and isinstance(details.get("reason"), str):
        message = unresolved_text(details["reason"], details, fr)
    if view.status == "refused":
        return _t(fr, f"I did not {what}: {message}.", f"Je n'ai pas pu {what} : {message}.")
    return _t(fr, f"I could not {what}: {message}.", f"Impossible {_de(what)} : {message}.")


# ------------------------------------------------------------------------------------ the reply

_KIND_FR = {"video": "vidéo", "article": "article", "job": "job", "media": "média", "clip_job": "job de clips",
            "template": "modèle"}


def _note(note: Note, fr: bool) -> str:
    v = note.values
    action = label(v.get("action", ""), {}, fr).replace(" ?", "").replace(" {id}", "")
    if note.code == "missing_id":
        kind = v.get("kind", "")
        return _t(fr, f"To {action}, tell me which {kind.replace('_', ' ')} (its id).",
                  f"Pour {action}, dites-moi quel {_KIND_FR.get(kind, kind)} (son identifiant).")
    if note.code == "missing_language":
        return _t(fr, "To translate, tell me the target language (en, de, es, it, pt or nl).",
                  "Pour traduire, dites-moi la langue cible (en, de, es, it, pt ou nl).")
    if note.code == "missing_range":
        return _t(fr, "To cut a clip, give the time range, for example “from 0:10 to 0:40”.",
                  "Pour découper un clip, donnez l'intervalle, par exemple « de 0:10 à 0:40 ».")
    if note.code == "missing_name":
        return _t(fr, "Give the name in quotes, for example “Fusion energy”.",
                  "Donnez le nom entre guillemets, par exemple « Énergie de fusion ».")
    if note.code == "range_cut":
        return _t(fr, f"A range names at most {v.get('max')} ids; I kept the first {v.get('max')}.",
                  f"Un intervalle nomme au plus {v.get('max')} identifiants ; j'ai gardé les {v.get('max')} premiers.")
    if note.code == "default_format":
        return _t(fr, f"No format was named: I used {v.get('format', DEFAULT_EXPORT_FORMAT)} (html, markdown, json, "
                      "schema, opengraph and txt exist).",
                  f"Aucun format demandé : j'ai pris {v.get('format', DEFAULT_EXPORT_FORMAT)} (html, markdown, json, "
                  "schema, opengraph et txt existent).")
    if note.code == "default_platforms":
        return _t(fr, f"No platform was named: I used {', '.join(v.get('platforms') or [])}.",
                  f"Aucune plateforme demandée : j'ai pris {', '.join(v.get('platforms') or [])}.")
    return note.code


def help_text(fr: bool) -> str:
    if fr:
        return ("Je peux : lire votre solde, votre consommation et vos alertes ; lister ou afficher vos vidéos, jobs "
                "et articles ; analyser une vidéo (avec chapitres, transcription, un style, en premium) ; lire les "
                "affirmations, entités, thèmes ou le graphe d'une vidéo ; les scores, le graphe ou l'export d'un "
                "article (html, markdown, json, schema, opengraph, txt), le traduire ou le régénérer ; découper un "
                "clip, détecter et rendre des clips ; lister les candidats à la relance et compléter des "
                "descriptions ; annuler un job. Par exemple : « analyse la vidéo 12 avec les chapitres », « exporte "
                "l'article 5 en markdown », « les vidéos 3, 4 et 7 », « mon solde et mes alertes ». Au plus 15 "
                "actions par message.")
    return ("I can: read your balance, usage and alerts; list or show your videos, jobs and articles; analyse a "
            "video (with chapters, a transcript, a writing style, premium); read a video's claims, entities, topics "
            "or content graph; an article's scores, graph or export (html, markdown, json, schema, opengraph, txt), "
            "translate or regenerate it; cut a clip, detect and render clips; list revival candidates and complete "
            "descriptions; cancel a job. For example: “analyse video 12 with chapters”, “export article 5 as "
            "markdown”, “videos 3, 4 and 7”, “my balance and my alerts”. At most 15 actions per message.")


def missing_scopes(views: Sequence[ActionView], reply: str, fr: bool) -> str:
    """The sentence naming the scopes that refused actions needed and ``reply`` does not name ("" when
    it names them all, or none was missing)."""
    scopes = sorted({str((v.error or {}).get("details", {}).get("required")) for v in views
                     if v.status == "refused" and (v.error or {}).get("code") == "insufficient_scope"})
    unnamed = [s for s in scopes if s not in reply]
    if not unnamed:
        return ""
    listed = ", ".join(unnamed)
    return _t(fr, f"Not done for lack of a scope: your key lacks {listed}.",
              f"Non fait faute de scope : votre clé n'a pas {listed}.")


LEFT_REASONS = ("cap", "rate_limited", "stopped")


def left_undone(count: int, reason: str, fr: bool, *, cap: int, retry_after_s: int | None = None) -> str:
    """The sentence about the ``count`` requested actions that were not done, and why."""
    if reason == "cap":
        return _t(fr, f"{count} more requested actions were not done: at most {cap} actions run per message. Ask "
                      "again for the rest.",
                  f"{count} autres actions demandées n'ont pas été faites : au plus {cap} actions par message. "
                  "Redemandez la suite.")
    if reason == "rate_limited":
        wait = _t(fr, f" in {retry_after_s} s", f" dans {retry_after_s} s") if retry_after_s else ""
        return _t(fr, f"{count} requested actions were not done: your workspace's rate limit is reached; retry{wait}.",
                  f"{count} actions demandées n'ont pas été faites : la limite de débit de votre espace est "
                  f"atteinte ; réessayez{wait}.")
    return _t(fr, f"Stopped: {count} requested actions were not done.",
              f"Interrompu : {count} actions demandées n'ont pas été faites.")


def compose(language: str, views: Sequence[ActionView], *, notes: Sequence[Note] = (),
            not_understood: Sequence[str] = (), asked_help: bool = False, left: int = 0, left_reason: str = "cap",
            cap: int = 15, retry_after_s: int | None = None) -> str:
    """The whole offline reply (see the module's text)."""
    fr = language == "fr"
    lines: list[str] = []
    if len(views) > 3:
        ok = sum(v.status == "ok" for v in views)
        lines.append(_t(fr, f"I performed {len(views)} actions: {ok} succeeded, {len(views) - ok} did not.",
                        f"J'ai effectué {len(views)} actions : {ok} réussies, {len(views) - ok} non."))
    lines.extend(describe(v, fr) for v in views)
    lines.extend(_note(n, fr) for n in notes)
    if not_understood:
        shown = "; ".join(_q(u, fr) for u in not_understood)
        lines.append(_t(fr, f"I did not understand: {shown}.", f"Je n'ai pas compris : {shown}."))
    if left:
        lines.append(left_undone(left, left_reason, fr, cap=cap, retry_after_s=retry_after_s))
    if asked_help and not views:
        lines.append(help_text(fr))
    return "\n".join(lines)
