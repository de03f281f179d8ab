"""French: what the service knows of it, and the assistant's French.

The assistant's part: its labels, sentences and the words that ask for its actions.

The same keys as the English home (``domain.languages.en``); see there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, fold, optional_words

R = dict[str, Any]


def _de(what: str) -> str:
    """"de" before an infinitive, elided before a vowel or a mute h: "d'analyser", "de lire"."""
    return f"d'{what}" if fold(what[:1]) in "aeiouyh" and what[:1] else f"de {what}"


def _credits(s: Say, n: str, r: R, a: R) -> str:
    return (f"Votre solde est de {r.get('balance')} crédits ({s.n(r.get('used'), 'utilisé', 'utilisés')} sur "
            f"{r.get('total')}, offre {r.get('plan')}).")


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Consommation : {r.get('totalApiCalls')} appels à l'API, {r.get('totalCreditsConsumed')} crédits "
            f"consommés, {r.get('averageResponseMs')} ms en moyenne.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return (f"Consommation de modèle de langue : {totals.get('calls', 0)} appels, "
            f"{totals.get('totalTokens', 0)} jetons.")


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Espace {s.q(r.get('workspace'))}, offre {r.get('plan')}, {r.get('credits_balance')} crédits "
            f"restants ; votre clé {r.get('environment')} a les scopes {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Supervision : {r.get('calls_last_hour')} appels dans l'heure (taux d'erreur "
            f"{r.get('error_rate_last_hour')}), {r.get('jobs_pending')} jobs en attente, {r.get('jobs_running')} "
            f"en cours, {r.get('jobs_failed_24h')} échoués en 24 h, {r.get('alerts')} alertes actives.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Aucune alerte active."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return f"{s.n(r['count'], 'alerte active', 'alertes actives')} ({r.get('critical', 0)} critiques) : {shown}."


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Vous n'avez pas encore de vidéo."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'vidéo', 'vidéos')} : {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", article {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Vidéo {r.get('id')} {s.q(r.get('name'))} : {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'crédit débité', 'crédits débités')}" if charged is not None else ""
    return f"Lancé : {s.label(n, a)}, job {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (une requête identique, réutilisée)" if r.get("reused") else ""
    return f"{s.label(n, a).capitalize()} : job de clips {r.get('job_id')}{reused} ({r.get('link')})."


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" Premiers : " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):  # the behavioural summaries are written in English
        shown += " À l'écran (en anglais) : " + "; ".join(str(f) for f in r["on_screen"]) + "."
    what = s.label(n, a).split(" ", 2)[-1]  # "affirmations de la vidéo 3"
    return (f"Vidéo {a.get('id')} : {s.n(r.get('count'), 'élément', 'éléments')} ({what}, "
            f"{r.get('link')}).{shown}")


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Vidéo {a.get('id')} : structure {', '.join(map(str, r.get('structure') or []))} ; chapitres : "
            f"{chapters or 'aucun'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Graphe de contenu de {whose}{a.get('id')} : {r.get('claims', 0)} affirmations, "
                f"{r.get('entities', 0)} entités, {r.get('searchIntents', 0)} intentions de recherche, "
                f"{r.get('clipMoments', 0)} moments, préparation GEO {r.get('geo_readiness_score')} "
                f"({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Vous n'avez aucun job."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')} %")
    return f"{s.n(r['count'], 'job', 'jobs')} : {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", article {r['article_id']}" if r.get("article_id") else ""
    return (f"Job {r.get('id')} ({r.get('type')}) : {s.status(r.get('status'))}, {r.get('progress')} %, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Vous n'avez pas encore d'article."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'article', 'articles')} : {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Article {ident}{title} : AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, composite "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {r['bytes']} octets" if r.get("bytes") is not None else ""
    return f"Export de l'article {a.get('id')} en {a.get('format')}{size} : {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Article {a.get('id')} {'modifié' if r.get('updated') else 'inchangé'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{r.get('count', 0)} médias{' : ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Média {r.get('id')} {s.q(r.get('name'))} créé."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (par défaut)" if x.get("is_default") else ""))
    return f"{r.get('count', 0)} modèles : {shown}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Job de clips {a.get('jobId')} : {s.status(r.get('status'))}, {r.get('clips', 0)} clips, "
            f"{r.get('rendered_clips', 0)} rendus, {r.get('failed_clips', 0)} échoués ({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Aucun candidat à la relance."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (media "
                      f"{x.get('media_id')}, score {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'candidat à la relance', 'candidats à la relance')} : {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return (f"Descriptions complétées pour le média {r.get('media_id')} ({drafts}) ; requête "
            f"{r.get('request_id')}.")


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Fait : {s.label(n, a)}{' : ' + facts if facts else ''}."


_KINDS = {"video": "vidéo", "article": "article", "job": "job", "media": "média", "clip_job": "job de clips",
          "template": "modèle"}


def _missing_id(s: Say, v: R) -> str:
    action = s.label(v.get("action", ""), {}).replace(" ?", "").replace(" {id}", "")
    kind = v.get("kind", "")
    return f"Pour {action}, dites-moi quel {_KINDS.get(kind, kind)} (son identifiant)."


_HELP = ("Je peux : lire votre solde, votre consommation et vos alertes ; lister ou afficher vos vidéos, jobs "
         "et articles ; analyser une vidéo (avec chapitres, transcription, un style, en premium) ; lire les "
         "affirmations, entités, thèmes ou le graphe d'une vidéo ; les scores, le graphe ou l'export d'un "
         "article (html, markdown, json, schema, opengraph, txt), le traduire ou le régénérer ; découper un "
         "clip, détecter et rendre des clips ; lister les candidats à la relance et compléter des "
         "descriptions ; annuler un job. Par exemple : « analyse la vidéo 12 avec les chapitres », « exporte "
         "l'article 5 en markdown », « les vidéos 3, 4 et 7 », « mon solde et mes alertes ». Au plus 15 "
         "actions par message.")

_VIDEO_MEMBERS = ("get_claims", "get_entities", "get_intents", "get_moments", "get_topics", "get_visual_elements",
                  "get_audio_elements")

ASSISTANT = AssistantWords(
    quotes=("« ", " »"),
    zero_is_singular=True,
    statuses={"pending": "en attente", "running": "en cours", "completed": "terminé", "failed": "échoué",
              "cancelled": "annulé", "uploaded": "téléversée", "analyzing": "en analyse", "analyzed": "analysée",
              "queued": "en file", "eligible": "éligible", "reviewing": "en revue", "selected": "sélectionné",
              "dismissed": "écarté", "stale": "périmé"},
    and_more=" (et d'autres)",
    labels={
        "get_me": "lire votre espace et votre clé",
        "get_credits": "lire votre solde",
        "get_usage": "lire votre consommation",
        "get_usage_llm": "lire votre consommation de modèle de langue",
        "get_monitoring": "lire votre supervision",
        "get_monitoring_alerts": "lire vos alertes",
        "list_videos": "lister vos vidéos",
        "get_video": "afficher la vidéo {id}",
        "get_transcript": "lire la transcription de la vidéo {id}",
        "analyze_video": "analyser la vidéo {id}",
        "get_claims": "lire les affirmations de la vidéo {id}",
        "get_entities": "lire les entités de la vidéo {id}",
        "get_intents": "lire les intentions de recherche de la vidéo {id}",
        "get_moments": "lire les moments de la vidéo {id}",
        "get_topics": "lire les thèmes de la vidéo {id}",
        "get_narrative": "lire la structure narrative de la vidéo {id}",
        "get_visual_elements": "lire les éléments visuels de la vidéo {id}",
        "get_audio_elements": "lire les éléments audio de la vidéo {id}",
        "get_video_graph": "lire le graphe de contenu de la vidéo {id}",
        "list_jobs": "lister vos jobs",
        "get_job": "afficher le job {id}",
        "cancel_job": "annuler le job {id}",
        "list_articles": "lister vos articles",
        "get_article": "afficher l'article {id}",
        "get_article_scores": "lire les scores de l'article {id}",
        "get_article_graph": "lire le graphe de l'article {id}",
        "export_article": "exporter l'article {id} en {format}",
        "update_article": "modifier l'article {id}",
        "translate_article": "traduire l'article {id}",
        "list_article_translations": "lister les traductions de l'article {id}",
        "regenerate_article": "régénérer l'article {id}",
        "list_medias": "lister vos médias",
        "create_media": "créer le média",
        "create_video_clip": "découper un clip de la vidéo {id}",
        "list_templates": "lister les modèles",
        "detect_clips": lambda a: ("détecter des clips dans l'article {article_id}" if "article_id" in a
                                   else "détecter des clips"),
        "render_clips": "rendre les clips",
        "get_clip_job": "lire le job de clips {jobId}",
        "list_revival_candidates": "lister les candidats à la relance",
        "complete_descriptions": "compléter les descriptions du média {media_id}",
        "update_revival_candidate": "modifier le candidat {id}",
        "update_video": "modifier la description de la vidéo {id}",
    },
    label_unknown="exécuter {name}",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("la vidéo "),
        "get_article_graph": _graph("l'article "),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    asks={
        "analyze_video": (r"analy[sz]\w*",),
        "cancel_job": (r"annul\w*", r"stop\w*", r"arret\w*", r"interromp\w*"),
        "create_media": (r"cre[ea]\w*", r"nouve\w*", r"ajout\w*"),
        "update_article": (r"renomm\w*", r"rattach\w*"),
        "translate_article": (r"tradu\w*",),
        "regenerate_article": (r"regener\w*", r"reecri\w*", r"refai\w*"),
        "create_video_clip": (r"clip", r"coup\w*", r"decoup\w*", r"extrai\w*"),
        "detect_clips": (r"detect\w*", r"trouv\w*", r"propos\w*", r"repere\w*", r"identif\w*"),
        "render_clips": (r"rend\w*", r"produi\w*", r"gener\w*"),
        "complete_descriptions": (r"descriptions?", r"complet\w*"),
        "update_video": (r"chang\w*", r"modif\w*", r"remplac\w*"),
        "update_revival_candidate": (r"ecart\w*", r"revu\w*", r"revoir", r"candidat\w*", r"rouvr\w*",
                                     r"eligib\w*"),
    },
    kind_words={
        "account": (r"identit\w*", r"cles?", r"scopes?", r"comptes?", r"espaces?", r"environnements?"),
        "credits": (r"soldes?", r"credits?", r"argent", r"forfaits?"),
        "usage": (r"usages?", r"consommation", r"utilisation", r"surveillance", r"alertes?", r"tokens?", r"llm",
                  r"latenc\w*", r"erreurs?", r"stat\w*", r"metri\w*", r"requetes?"),
        "jobs": (r"jobs?", r"taches?", r"travaux", r"traitements?", r"statut", r"etat", r"progress\w*",
                 r"rendus?"),
        "content": (r"videos?", r"articles?", r"medias?", r"affirmations?", r"entit\w*", r"intent\w*", r"moments?",
                    r"chapitres?", r"narrat\w*", r"themes?", r"sujets?", r"graph\w*", r"elements?", r"transcri\w*",
                    r"resum\w*", r"export\w*", r"scores?", r"aeo", r"geo", r"traductions?", r"clips?",
                    r"contenus?", r"chaines?", r"analys\w*"),
        "templates": (r"modeles?", r"gabarits?", r"clips?", r"rend\w*", r"detect\w*"),
        "revival": (r"candidat\w*", r"relanc\w*", r"descriptions?", r"plateformes?"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"Je n'ai pas pu {what} : votre clé n'a pas le scope {scope}.",
    refused=lambda what, why: f"Je n'ai pas pu {what} : {why}.",
    failed=lambda what, why: f"Impossible {_de(what)} : {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "Pour traduire, dites-moi la langue cible (en, de, es, it, pt ou nl).",
        "missing_range": lambda s, v: "Pour découper un clip, donnez l'intervalle, par exemple « de 0:10 à 0:40 ».",
        "missing_name": lambda s, v: "Donnez le nom entre guillemets, par exemple « Énergie de fusion ».",
        "range_cut": lambda s, v: f"Un intervalle nomme au plus {v.get('max')} identifiants ; j'ai gardé les "
                                  f"{v.get('max')} premiers.",
        "default_format": lambda s, v: f"Aucun format demandé : j'ai pris {v.get('format')} (html, markdown, json, "
                                       "schema, opengraph et txt existent).",
        "default_platforms": lambda s, v: f"Aucune plateforme demandée : j'ai pris "
                                          f"{', '.join(v.get('platforms') or [])}.",
    },
    unresolved={
        "failed_before": "il lui faut la réponse de {name}, qui n'a pas abouti",
        "not_run": "il lui faut la réponse de {name}, qui n'a pas été exécutée",
        "no_article": "la vidéo {video} n'a pas encore d'article (analysez-la d'abord)",
        "no_template": "il n'y a aucun modèle à utiliser",
        "template_without_id": "les modèles n'ont pas d'identifiant",
        "no_detected_clips": "le job de clips n'a détecté aucun clip (sa détection est-elle terminée ?)",
        "no_such_clip": "le job de clips a détecté {count} clips ; il n'y a pas de clip {clip}",
        "no_candidate": "le média {media} n'a aucun candidat à la relance",
        "unknown_need": "besoin inconnu {need}",
    },
    performed=lambda count, ok: f"J'ai effectué {count} actions : {ok} réussies, {count - ok} non.",
    not_understood=lambda shown: f"Je n'ai pas compris : {shown}.",
    missing_scopes=lambda listed: f"Non fait faute de scope : votre clé n'a pas {listed}.",
    model_failed="Le modèle de langue a échoué : ",
    left_undone={
        "cap": lambda count, cap, wait: f"{count} autres actions demandées n'ont pas été faites : au plus {cap} "
                                        "actions par message. Redemandez la suite.",
        "rate_limited": lambda count, cap, wait: f"{count} actions demandées n'ont pas été faites : la limite de "
                                                 "débit de votre espace est atteinte ; "
                                                 f"réessayez{f' dans {wait} s' if wait else ''}.",
        "stopped": lambda count, cap, wait: f"Interrompu : {count} actions demandées n'ont pas été faites.",
    },
    help=_HELP,
)



# How a message asks for things in French (domain.agent.planner reads them, folded: no accents).
REQUESTS = RequestWords(
    verbs=(r"montre|montrer|affiche|afficher|liste|lister|donne|donner|lance|lancer|analyser|analysez|exporte|"
           r"exporter|annule|annuler|detecte|detecter|rends|rendre|traduis|traduire|regenere|regenerer|renomme|"
           r"renommer|rattache|coupe|couper|decoupe|decouper|extrais|extraire|cree|creer|complete|completer|trouve|"
           r"trouver|quel|quelle|quels|quelles|combien|ouvre|lis|voir|telecharge|telecharger|suis"),
    sequence=r"et ensuite|ensuite|et puis|puis|apres ca|apres cela|apres quoi|enfin",
    conjunction="et",
    also="aussi",
    polite="stp",
    determiners="la |le |l'|les |mes |mon |ma ",
    kinds={"video": r"videos?", "article": r"articles?", "job": r"jobs?|taches?|travaux|traitements?",
           "media": r"medias?", "template": r"modeles?|gabarits?", "clip": r"clips?"},
    numbered=r"numeros?",
    joins=r"et|ou",
    ranges=r"a|jusqu'a",
    this=r"ce|cet|cette|la meme|le meme",
    counted=r"videos?|jobs?|taches?|articles?|candidat\w*|medias?",
    limit_before=r"derni\w*|premi\w*|limite",
    limit_after=r"derni\w*|premi\w*|recent\w*",
    seconds=r"s|sec|secondes?",
    minutes=r"min|minutes?",
    time_from=r"de|du|entre",
    time_to=r"a|et|jusqu'a",
    languages={},  # its names of the languages are their ``called``
    language_word=r"langue|cible|code",
    without_article=r"(?:sans|pas d')\s*(?:l'|un |d')?article",
    styles={"journalistic": r"journalisti\w*", "narrative": r"narrati\w*", "analytical": r"analytique",
            "tutorial": r"tutori\w*", "conversational": r"conversation\w*", "documentary": r"documentaire",
            "interview": r"interview\w*|entretien"},
    statuses={"eligible": r"eligib\w*", "reviewing": r"en revue|a revoir|en cours de revue",
              "selected": r"selectionn\w*", "dismissed": r"ecart\w*|rejet\w*", "stale": r"perime\w*|obsolete\w*"},
    platforms={"professional_network_long": r"reseau professionnel",
               "short_video_app": r"application de videos courtes"},
    all_platforms=r"(?:toutes?|chaque)\s+(?:les\s+)?plateformes?",
    asks={
        "cancel": r"annul\w*|arret\w*|interromp\w*", "translate": r"tradu\w*", "translations": r"traductions\b",
        "translate_verb": r"tradui\w*|traduis\b", "regenerate": r"regener\w*|reecri\w*", "rename": r"renomm\w*",
        "rename_to": r"en|comme", "attach": r"rattach\w*", "descriptions": r"descriptions?",
        "write": r"complet\w*|redig\w*|ecri\w*|rempli\w*|gener\w*", "clips": r"clips?|extraits?",
        "moments": r"moments?", "detect": r"detect\w*|trouv\w*|propos\w*|repere\w*|identif\w*",
        "generate": r"gener\w*|fais|faire|cree\w*", "render": r"rend\w*|produi\w*|gener\w*",
        "track": r"suivi|statut|etat", "cut": r"coup\w*|decoup\w*|extrai\w*",
        "candidates": r"candidat\w*|relanc\w*|a relancer", "at_least": r"au moins|superieur a|de plus de",
        "export": r"export\w*|telecharg\w*", "analyse": r"analy[sz]\w*", "results": r"resultats?|de l'analyse",
        "run": r"analyser|analysez|lance|demarre", "chapters": r"chapit\w*", "transcript": r"transcri\w*",
        "behavioral": r"comportement\w*", "premium": r"premium|haute qualite|meilleure qualite",
        "scores": r"scores?\b|notes?\b", "graph": r"graphe\w*", "create": r"cre[ea]\w*|nouve\w*|ajout\w*",
        "named": r"nomme\w*|appele\w*|intitule\w*", "status": r"etat",
    },
    account={
        "get_usage_llm": r"llm|tokens?|modeles? de langue", "get_credits": r"solde|credits?",
        "get_usage": r"utilisation|consommation|appels?|depense\w*|consomme\w*",
        "get_monitoring_alerts": r"alertes?|avertissements?", "get_monitoring": r"surveillance|sante|tableau de bord",
        "get_me": r"qui suis-je|qui suis je|mon espace|mon offre|mon plan|ma cle|mes scopes",
    },
    video_reads={
        "get_claims": r"affirmations?|faits?|assertions?", "get_entities": r"entit\w*",
        "get_intents": r"intentions?|requetes?|questions?", "get_moments": r"moments?|temps forts",
        "get_topics": r"themes?|sujets?", "get_narrative": r"narrati\w*|structure|chapitres?",
        "get_visual_elements": (r"visuels?|scenes?|plans de camera|prises? de vue|gestes?|regard\w*|posture|"
                                r"langage corporel|expressions?|sourit|sourire\w*|mains?|comportement\w*|proxemie|"
                                r"lateralite"),
        "get_audio_elements": r"audio|sonores?|silences?|volume",
    },
    help=(r"aide|bonjour|salut|merci|que (?:peux|sais)-?tu faire|qu'est-ce que tu (?:peux|sais) faire|tu fais quoi|"
          r"commandes?"),
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"d['’]abord|ensuite|enfin|maintenant|puis|pour\s+finir|pour\s+commencer")

# how a question read out opens (domain.analysis.text.read_out_question)
_ASKING = r"(?:pourquoi|comment|combien|quand|où|quel(?:le)?s?|qu['’]est-ce|est-ce qu)\b"


LANGUAGE = Language(
    code="fr",
    markers=frozenset({
        "le", "la", "les", "des", "du", "de", "mon", "ma", "mes", "quel", "quelle", "quels", "quelles", "est",
        "et", "puis", "ensuite", "avec", "combien", "montre", "affiche", "liste", "donne", "annule", "moi",
        "sur", "pour", "dans", "une", "un", "au", "aux", "vers", "sans", "solde", "derniers", "dernieres",
        "je", "tu", "vous", "ses", "son", "sa", "cette", "ce", "qui", "que", "quoi", "lance", "traduis",
        "analyser", "exporte", "exporter", "en", "taches", "travaux", "apres", "stp", "merci", "bonjour",
        "l", "d", "aide", "peux", "chapitres", "detecte", "rends", "candidats", "alertes", "consommation",
    }),
    letters="àâçéèêëîïôûùÿœ",
    name="French",
    locale="fr_FR",
    stemmer="french",
    called=r"french|francais",
    spoken_fillers=(
        "euh heu hum bah ben hein ouais ok okay bon voilà genre truc trucs machin bref enfin quoi "
        "bonjour bonsoir salut bienvenue merci revoir c'est-à-dire est-à-dire "
        "vraiment carrément effectivement justement tellement c'est j'ai y'a"
    ),
    hesitations="euh heu hum hmm",
    leading_fillers="euh heu hum ben bah alors donc et bon voilà ok okay oui mais",
    comma_openers="enfin ensuite puis premièrement deuxièmement maintenant aussi finalement bref",
    leading_words="alors bon donc et mais euh bien ok bah ben",
    cue_phrases=(
        r"(?:et\s+)?maintenant|passons|parlons|venons-en|abordons|ensuite|deuxième(?:ment)?|troisième(?:ment)?|"
        r"premièrement|d['’]abord|tout\s+d['’]abord|pour\s+commencer|pour\s+conclure|en\s+conclusion|pour\s+finir|"
        r"enfin|autre\s+(?:point|question|sujet|chose|exemple)|revenons|à\s+présent|voyons|regardons|"
        r"(?:la|le)\s+(?:prochaine?|suivante?)\s+(?:étape|question|point|sujet|partie)|"
        r"(?:la|le)\s+(?:première?|deuxième|dernière?)\s+(?:étape|question|chose|partie)|"
        r"qu['’]est-ce\s+(?:que|qui)|comment|pourquoi|jusqu['’]à\s+présent|avant\s+(?:de|d['’])"
    ),
    announce_phrases=(
        _OPENERS + r"(?:parlons|discutons)\s+(?:maintenant\s+|un\s+peu\s+|enfin\s+|d['’]abord\s+|ensuite\s+)?"
        r"(?:de\s+la|de\s+l['’]|du|des|de|d['’])|"
        + _OPENERS + r"(?:passons|venons-en)\s+(?:maintenant\s+|enfin\s+|ensuite\s+)?(?:à\s+la|à\s+l['’]|au|aux)|"
        r"abordons\s+(?:maintenant\s+|enfin\s+)?(?:la|le|les|l['’])"
    ),
    instruction_phrases=(
        r"(?:(?:d['’]abord|ensuite|puis|enfin|maintenant|après)[,\s]+)?"
        r"(?:cliquez|ouvrez|installez|téléchargez|lancez|tapez|entrez|sélectionnez|appuyez|insérez|supprimez|"
        r"copiez|collez|enregistrez|branchez|connectez|versez|mélangez|allez\s+(?:dans|sur)|vérifiez|mesurez|"
        r"assurez-vous|n['’]oubliez\s+pas|commencez\s+par|il\s+faut\s+(?:d['’]abord|ensuite))\b|"
        r".*?\b(?:étape\s+(?:\d+|un|une|deux|trois|quatre|cinq)|(?:la\s+)?(?:première|deuxième|prochaine|"
        r"dernière)\s+étape)\b"
    ),
    step_openers=(
        r"d['’]abord|tout\s+d['’]abord|commence[zr]?\s+par|premièrement|il\s+faut\s+d['’]abord|"
        r"la\s+première\s+étape"
    ),
    video_subject_phrases=(
        r"\b(?:cette|cet|ce)\s+(?:petite?\s+)?(?:vidéo|épisode|cours|podcast|leçon|présentation|introduction|"
        r"guide|tutoriel)\s+(?:sur|consacrée?\s+à|à\s+propos\s+de)\s+(?:la\s+|le\s+|les\s+|l['’])?"
    ),
    conclusion_phrases=(
        r"en\s+conclusion|pour\s+conclure|pour\s+résumer|en\s+résumé|pour\s+finir|en\s+somme|"
        r"le\s+mot\s+de\s+la\s+fin"
    ),
    sponsor_phrases=(
        r"\bsponsor(?:isé|s)?\b|\bpartenaire\s+de\s+(?:cet|cette|l['’])|\bcode\s+promo\b|\bessai\s+gratuit\b"
    ),
    definition_phrases=(
        r"\b(?:est|sont|était|étaient)\s+(?:un|une|des|le|la|les|l['’])|\bc['’]est\s+(?:un|une|le|la|l['’]|ce\s+qu)|"
        r"\bsignifie\b|\bdésigne\b|\bconsiste\b|\bse\s+définit\b|\bon\s+appelle\b|\bcorrespond\s+à\b"
    ),
    cause_phrases=(
        r"\bparce\s+qu|\bcar\b|\bdonc\b|\bentraîne|\bprovoque|\bcause\b|\bà\s+cause\s+d|\bgrâce\s+à|"
        r"\bpermet(?:tent)?\s+d|\ben\s+raison\s+d|\bc['’]est\s+pourquoi|\bconduit\s+à|\baboutit|\bexplique\b"
    ),
    comparison_phrases=(
        r"\bplus\s+(?:de|que)\b|\bmoins\s+(?:de|que)\b|\b(?:le|la|les)\s+plus\b|\bpremier\b|\bpremière\b|"
        r"\bdeux\s+fois\b|\bfois\s+(?:plus|moins)\b|\bdouble\b|\btriple\b|\bmillions?\b|\bmilliards?\b|"
        r"\bla\s+plupart\b|\bpour\s+chaque\b"
    ),
    hedge_phrases=(
        r"\bje\s+pense\b|\bje\s+crois\b|\bpeut-être\b|\bà\s+mon\s+avis\b|\bil\s+me\s+semble\b|\bje\s+trouve\b|"
        r"\bj['’]ai\s+l['’]impression\b|\bsans\s+doute\b|\bprobablement\b|\ben\s+quelque\s+sorte\b"
    ),
    social_phrases=r"\bbonjour\b|\bbienvenue\b|\bmerci\b|\babonnez\b|\bà\s+bientôt\b|\bau\s+revoir\b",
    connective_openers="et mais donc ou alors puis aussi car parce ensuite sinon enfin",
    anaphora_openers="ça cela ce c'est il elle ils elles ceci",
    hook_openers="pourquoi|comment|saviez-vous|imaginez|voici|le secret|la vérité|attention",
    attribution_phrases=r"selon|d['’]après|a déclaré|affirme",
    speech_markers=r"\btu vois\b|\btu sais\b|\bvous voyez\b|\bgenre,|\benfin bref\b",
    question_leads=(r"(?:la|ma|une) (?:vraie |grande |première )?question(?: pour vous| ici)?"
                    r"(?:,[^,?]{1,30},)? (?:est|c['’]est)"),
    read_questions=(rf"\b(?:demande|demandait|écrit|se demande|veut savoir)[,:]?\s+(?={_ASKING})"
                    rf"|\bquestions? (?:est |vient )?de [^,.?!]{{1,40}},\s*(?={_ASKING})"
                    r"|\bquestions?(?: suivante)? vient de [^,.?!]{1,40}[.!]?\s*$"),
    tag_questions=r"n['’]est-ce pas|vous voyez|tu vois|d['’]accord|non|hein|ok",
    process_words="comment|étapes?|processus|méthode|fonctionne",
    month_names=(
        "janvier février fevrier mars avril mai juin juillet août aout septembre octobre novembre "
        "décembre decembre"
    ),
    unit_words=(
        r"pour\s?cent|euros?|dollars?|livres?|milliards?|millions?|mille|kilomètres?|mètres?|kilos?|"
        r"tonnes?|degrés?|watts?|heures?|minutes?|secondes?|ans|années?|jours?|mois|semaines?|fois|"
        r"habitants|personnes|employés|utilisateurs"
    ),
    question_openers=("pourquoi", "comment", "combien", "qu'est-ce", "est-ce que"),
    conjunction="et",
    scales={"mille": 3, "million": 6, "millions": 6, "milliard": 9, "milliards": 9},
    vague_heads="sorte sortes genre espèce façon manière peu tas plupart partie moitié bout fois égard",
    judgement_words=("bon bonne bons bonnes super génial géniale géniaux excellent excellente énorme énormes "
                     "bizarre bizarres incroyable incroyables intéressant intéressante intéressants formidable "
                     "magnifique terrible horrible fou folle drôle sympa chouette compliqué compliquée heureux "
                     "décevant"),
    connectors="de du des d à au aux en pour et sur",
    pronouns=(
        "je me moi tu te toi il elle nous vous ils elles lui leur leurs eux ce ceci cela ça celui celle ceux "
        "celles mon ma mes ton ta tes son sa ses notre nos votre vos y en quelqu quelque chose"
    ),
    preposition_pronouns="en",
    dangling="et ou mais le la les un une des de du d à au aux en pour par sur avec",
    verb_signals="je j tu il elle on nous vous ils elles ne n se s me m te t pour",
    determiners=(
        "le la les l un une des du au aux ce cet cette ces mon ma mes ton ta tes son sa ses notre nos votre vos "
        "leur leurs quel quelle quels quelles chaque plusieurs quelques aucun aucune certains certaines tout toute "
        "tous toutes"
    ),
    noun_rule=0,
    verb_endings=("ons", "ez"),
    contractions="des du au aux",
    plural_endings=("s", "x"),
    definite={"des": "les", "du": "le", "au": "le", "aux": "les"},
    definite_articles=("le", "la", "les", "l"),
    aspect_articles={"le": "du", "la": "de la", "les": "des", "l": "de l'"},
    plural_articles={"les"},
    plural_templates={"how": "comment fonctionnent {t}", "why": "pourquoi {t} comptent"},
    org_tail=(
        "ale|ales|al|aux|ienne|iennes|ien|iens|aise|aises|ais|ique|iques|aire|aires|elle|elles|el|els|"
        "éenne|éennes|éen|éens|aine|aines|ain|ains|ère|ères|eure|eures|ive|ives|if|ifs",
        r"de\s+l['’]|de\s+la\s+|du\s+|des\s+|d['’]",
        r"que|qu['’]|le|la|les|l['’]|un|une|des|du",
    ),
    labels={
        "introduction": "Introduction", "key_facts": "Points clés", "faq": "Questions fréquentes",
        "conclusion": "Conclusion", "step": "Étape", "in_short": "En bref", "analysis": "Analyse",
        "figures": "Chiffres et faits", "timeline": "Chronologie", "and": "et", "what": "qu'est-ce que {t}",
        "how": "comment fonctionne {t}", "why": "pourquoi {t} est important", "how_to": "comment {t}",
        "who": "qui est {t}", "hook": "accroche", "context": "contexte", "development": "développement",
        "conclusion_part": "conclusion", "chapters": "Chapitres", "source": "Source", "watch": "Voir à",
        "question": "Q", "answer": "R", "also_answered": "Autres questions traitées",
        "main_entities": "Entités principales",
    },
    colon=" : ",
    question_mark=" ?",
    requests=REQUESTS,
    assistant=ASSISTANT,
)
