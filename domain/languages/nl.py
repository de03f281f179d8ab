"""Dutch: what the service knows of it, and the assistant's Dutch.

The assistant reads requests in it (``REQUESTS``) and answers in it (``ASSISTANT``): the same
keys as the English home (``domain.languages.en``); see there. Its Dutch says "je" to the person
(the informal address of most Dutch software) and writes an action as an infinitive phrase with
the verb last ("video 12 analyseren"), which opens a sentence as its subject: "Video 12
analyseren is niet gelukt: ...".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, optional_words

R = dict[str, Any]


def _cap(text: str) -> str:
    """An action's label at a sentence's start: its first letter capitalised."""
    return text[:1].upper() + text[1:]


def _credits(s: Say, n: str, r: R, a: R) -> str:
    return (f"Je saldo is {s.n(r.get('balance'), 'credit', 'credits')} ({r.get('used')} gebruikt van "
            f"{r.get('total')}, abonnement {r.get('plan')}).")


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Verbruik: {s.n(r.get('totalApiCalls'), 'API-aanroep', 'API-aanroepen')}, "
            f"{s.n(r.get('totalCreditsConsumed'), 'credit', 'credits')} verbruikt, gemiddeld "
            f"{r.get('averageResponseMs')} ms.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return (f"Verbruik van het taalmodel: {s.n(totals.get('calls', 0), 'aanroep', 'aanroepen')}, "
            f"{s.n(totals.get('totalTokens', 0), 'token', 'tokens')}.")


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Werkruimte {s.q(r.get('workspace'))}, abonnement {r.get('plan')}, nog "
            f"{s.n(r.get('credits_balance'), 'credit', 'credits')}; je sleutel ({r.get('environment')}) heeft "
            f"de scopes {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Monitoring: {s.n(r.get('calls_last_hour'), 'aanroep', 'aanroepen')} in het afgelopen uur "
            f"(foutpercentage {r.get('error_rate_last_hour')}), {r.get('jobs_pending')} taken in afwachting, "
            f"{r.get('jobs_running')} bezig, {r.get('jobs_failed_24h')} mislukt in 24 uur, "
            f"{s.n(r.get('alerts'), 'actieve waarschuwing', 'actieve waarschuwingen')}.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Geen actieve waarschuwingen."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return (f"{s.n(r['count'], 'actieve waarschuwing', 'actieve waarschuwingen')} ({r.get('critical', 0)} "
            f"kritiek): {shown}.")


_VIDEOS = "video's"  # the plural of "video" (an apostrophe after a long vowel)


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Je hebt nog geen video's."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'video', _VIDEOS)}: {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", artikel {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Video {r.get('id')} {s.q(r.get('name'))}: {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'credit', 'credits')} afgeschreven" if charged is not None else ""
    return f"In de wachtrij: {s.label(n, a)}, taak {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (een eerder, gelijk verzoek, hergebruikt)" if r.get("reused") else ""
    return f"{_cap(s.label(n, a))}: cliptaak {r.get('job_id')}{reused} ({r.get('link')})."


# What each read of a video's analysis reads: (one, many), its label and its sentence say it.
_MEMBERS = {
    "get_claims": ("bewering", "beweringen"), "get_entities": ("entiteit", "entiteiten"),
    "get_intents": ("zoekintentie", "zoekintenties"), "get_moments": ("clipmoment", "clipmomenten"),
    "get_topics": ("onderwerp", "onderwerpen"), "get_visual_elements": ("visueel element", "visuele elementen"),
    "get_audio_elements": ("audio-element", "audio-elementen"),
}


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" Eerste: " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):  # the behavioural summaries are written in English
        shown += " In beeld (in het Engels): " + "; ".join(str(f) for f in r["on_screen"]) + "."
    one, many = _MEMBERS.get(n, ("element", "elementen"))
    return f"Video {a.get('id')}: {s.n(r.get('count'), one, many)} ({r.get('link')}).{shown}"


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Video {a.get('id')}: structuur {', '.join(map(str, r.get('structure') or []))}; hoofdstukken: "
            f"{chapters or 'geen'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Contentgraaf van {whose} {a.get('id')}: {s.n(r.get('claims', 0), 'bewering', 'beweringen')}, "
                f"{s.n(r.get('entities', 0), 'entiteit', 'entiteiten')}, "
                f"{s.n(r.get('searchIntents', 0), 'zoekintentie', 'zoekintenties')}, "
                f"{s.n(r.get('clipMoments', 0), 'clipmoment', 'clipmomenten')}, GEO-gereedheid "
                f"{r.get('geo_readiness_score')} ({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Je hebt geen taken."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')} %")
    return f"{s.n(r['count'], 'taak', 'taken')}: {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", artikel {r['article_id']}" if r.get("article_id") else ""
    return (f"Taak {r.get('id')} ({r.get('type')}): {s.status(r.get('status'))}, {r.get('progress')} %, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Je hebt nog geen artikelen."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'artikel', 'artikelen')}: {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Artikel {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, samengestelde score "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {s.n(r['bytes'], 'byte', 'bytes')}" if r.get("bytes") is not None else ""
    return f"Export van artikel {a.get('id')} als {a.get('format')}{size}: {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Artikel {a.get('id')} {'bijgewerkt' if r.get('updated') else 'ongewijzigd'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{s.n(r.get('count', 0), 'medium', 'media')}{': ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Medium {r.get('id')} {s.q(r.get('name'))} aangemaakt."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (standaard)" if x.get("is_default") else ""))
    return f"{s.n(r.get('count', 0), 'sjabloon', 'sjablonen')}: {shown}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Cliptaak {a.get('jobId')}: {s.status(r.get('status'))}, {s.n(r.get('clips', 0), 'clip', 'clips')}, "
            f"{r.get('rendered_clips', 0)} gerenderd, {r.get('failed_clips', 0)} mislukt ({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Geen kandidaten voor herlancering."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (medium "
                      f"{x.get('media_id')}, score {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'kandidaat voor herlancering', 'kandidaten voor herlancering')}: {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return (f"Beschrijvingen aangevuld voor medium {r.get('media_id')} ({drafts}); verzoek "
            f"{r.get('request_id')}.")


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Uitgevoerd: {s.label(n, a)}{': ' + facts if facts else ''}."


# A kind of object, as the note about its missing id names it: (noun, "welk(e)", what identifies it).
# "welk" before a neuter noun (het artikel, het medium, het sjabloon), "welke" before the others.
_KINDS = {"video": ("video", "welke", "het nummer"), "article": ("artikel", "welk", "het nummer"),
          "job": ("taak", "welke", "het id"), "media": ("medium", "welk", "het nummer"),
          "clip_job": ("cliptaak", "welke", "het id"), "template": ("sjabloon", "welk", "het nummer")}


def _missing_id(s: Say, v: R) -> str:
    action = s.label(v.get("action", ""), {}).replace(" als ?", "").replace(" ?", "")
    kind = v.get("kind", "")
    noun, which, ident = _KINDS.get(kind, (kind.replace("_", " "), "welke", "het id"))
    return f"{_cap(action)}: {which} {noun} bedoel je? Geef {ident}."


def _undone(count: int) -> str:
    """"1 gevraagde actie is", "3 gevraagde acties zijn": the subject and its verb."""
    return "1 gevraagde actie is" if count == 1 else f"{count} gevraagde acties zijn"


_HELP = ("Ik kan: je saldo, verbruik en waarschuwingen opvragen; je video's, taken en artikelen tonen; een video "
         "analyseren (met hoofdstukken, een transcriptie, een schrijfstijl, in premiumkwaliteit); de beweringen, "
         "entiteiten, onderwerpen of de contentgraaf van een video lezen; de scores, de graaf of een export van "
         "een artikel (html, markdown, json, schema, opengraph, txt), het artikel vertalen of opnieuw genereren; "
         "een clip knippen, clips detecteren en renderen; kandidaten voor herlancering tonen en beschrijvingen "
         "aanvullen; een taak annuleren. Bijvoorbeeld: “analyseer video 12 met hoofdstukken”, “exporteer artikel "
         "5 als markdown”, “video's 3, 4 en 7”, “mijn saldo en mijn waarschuwingen”. Hoogstens 15 acties per "
         "bericht.")

_VIDEO_MEMBERS = tuple(_MEMBERS)

ASSISTANT = AssistantWords(
    quotes=("“", "”"),  # as most Dutch text writes them, and as the planner reads a quoted name
    zero_is_singular=False,  # "0 video's"
    statuses={"pending": "in afwachting", "running": "bezig", "completed": "voltooid", "failed": "mislukt",
              "cancelled": "geannuleerd", "uploaded": "geüpload", "analyzing": "wordt geanalyseerd",
              "analyzed": "geanalyseerd", "queued": "in de wachtrij", "eligible": "komt in aanmerking",
              "reviewing": "in beoordeling", "selected": "geselecteerd", "dismissed": "afgewezen",
              "stale": "verouderd"},
    and_more=" (en meer)",
    labels={
        "get_me": "je werkruimte en sleutel opvragen",
        "get_credits": "je saldo opvragen",
        "get_usage": "je verbruik opvragen",
        "get_usage_llm": "je verbruik van het taalmodel opvragen",
        "get_monitoring": "je monitoring opvragen",
        "get_monitoring_alerts": "je waarschuwingen opvragen",
        "list_videos": "je video's tonen",
        "get_video": "video {id} tonen",
        "get_transcript": "de transcriptie van video {id} lezen",
        "analyze_video": "video {id} analyseren",
        **{name: f"de {many} van video {{id}} lezen" for name, (_, many) in _MEMBERS.items()},
        "get_narrative": "de verhaalstructuur van video {id} lezen",
        "get_video_graph": "de contentgraaf van video {id} lezen",
        "list_jobs": "je taken tonen",
        "get_job": "taak {id} tonen",
        "cancel_job": "taak {id} annuleren",
        "list_articles": "je artikelen tonen",
        "get_article": "artikel {id} tonen",
        "get_article_scores": "de scores van artikel {id} lezen",
        "get_article_graph": "de graaf van artikel {id} lezen",
        "export_article": "artikel {id} als {format} exporteren",
        "update_article": "artikel {id} bijwerken",
        "translate_article": "artikel {id} vertalen",
        "list_article_translations": "de vertalingen van artikel {id} tonen",
        "regenerate_article": "artikel {id} opnieuw genereren",
        "list_medias": "je media tonen",
        "create_media": "het medium aanmaken",
        "create_video_clip": "een clip uit video {id} knippen",
        "list_templates": "de sjablonen tonen",
        # its article may come from a video's answer, then the arguments do not name it
        "detect_clips": lambda a: ("clips in artikel {article_id} detecteren" if "article_id" in a
                                   else "clips detecteren"),
        "render_clips": "de clips renderen",
        "get_clip_job": "cliptaak {jobId} opvragen",
        "list_revival_candidates": "de kandidaten voor herlancering tonen",
        "complete_descriptions": "de beschrijvingen van medium {media_id} aanvullen",
        "update_revival_candidate": "kandidaat {id} bijwerken",
        "update_video": "de beschrijving van video {id} wijzigen",
    },
    label_unknown="{name} uitvoeren",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("video"), "get_article_graph": _graph("artikel"),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    # one word each, folded (``domain.agent.policy`` matches them against a message's words)
    asks={
        "analyze_video": (r"analy[sz]\w*",),
        "cancel_job": (r"annul\w*", r"stop\w*", r"afbre\w*", r"afgebroken", r"breek"),
        "create_media": (r"maak\w*", r"aanma\w*", r"creeer\w*", r"nieuwe?", r"voeg", r"toevoeg\w*"),
        "update_article": (r"hernoem\w*", r"koppel\w*", r"gekoppeld"),
        "translate_article": (r"vertaa?l\w*", r"vertal\w*"),
        "regenerate_article": (r"hergenere\w*", r"herschr\w*"),
        "create_video_clip": (r"clip", r"knip\w*", r"snij\w*", r"extrahe\w*", r"uitknip\w*"),
        "detect_clips": (r"detecte\w*", r"vind\w*", r"zoek\w*", r"herken\w*", r"identifice\w*", r"voorstel\w*"),
        "render_clips": (r"render\w*", r"produce\w*", r"genere\w*"),
        "complete_descriptions": (r"beschrijving\w*", r"omschrijving\w*", r"aanvul\w*", r"vul"),
        "update_video": (r"wijzig\w*", r"verander\w*", r"bewerk\w*", r"aanpas\w*", r"pas", r"vervang\w*"),
        "update_revival_candidate": (r"beoorde\w*", r"afwijz\w*", r"wijs", r"kandida\w*", r"heropen\w*",
                                     r"geschikt\w*"),
    },
    kind_words={
        "account": (r"wie", r"identiteit\w*", r"sleutels?", r"scopes?", r"werkruimtes?", r"accounts?",
                    r"omgeving\w*"),
        "credits": (r"saldo", r"tegoed", r"credits?", r"geld", r"abonnement\w*"),
        "usage": (r"verbruik\w*", r"gebruik\w*", r"monitoring", r"bewaking", r"waarschuwing\w*", r"tokens?", r"llm",
                  r"latentie\w*", r"fout\w*", r"statistie\w*", r"metriek\w*", r"aanroep\w*", r"verzoeken"),
        "jobs": (r"taken", r"taak", r"jobs?", r"opdracht\w*", r"status", r"voortgang", r"wachtrij", r"renders?"),
        "content": (r"video", r"artikel\w*", r"media", r"medium", r"bewering\w*", r"entiteit\w*", r"\w*intentie\w*",
                    r"\w*moment\w*", r"hoofdstuk\w*", r"verha\w*", r"onderwerp\w*", r"thema\w*", r"\w*graaf",
                    r"grafen", r"element\w*", r"transcri\w*", r"samenvatting\w*", r"export\w*", r"scores?",
                    r"aeo", r"geo", r"vertaling\w*", r"clips?", r"inhoud", r"content", r"kana\w*", r"analyse\w*"),
        "templates": (r"sjablo\w*", r"templates?", r"clips?", r"render\w*", r"detect\w*"),
        "revival": (r"herlancering\w*", r"kandida\w*", r"beschrijving\w*", r"platforms?"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"{_cap(what)} kan ik niet: je sleutel mist de scope {scope}.",
    refused=lambda what, why: f"{_cap(what)} heb ik niet gedaan: {why}.",
    failed=lambda what, why: f"{_cap(what)} is niet gelukt: {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "Om te vertalen heb ik de doeltaal nodig (en, de, es, it, pt of nl).",
        "missing_range": lambda s, v: "Om een clip te knippen heb ik het tijdsinterval nodig, bijvoorbeeld "
                                      "“van 0:10 tot 0:40”.",
        "missing_name": lambda s, v: "Geef de naam tussen aanhalingstekens, bijvoorbeeld “Kernfusie”.",
        "range_cut": lambda s, v: f"Een reeks mag hoogstens {v.get('max')} nummers bevatten; ik heb de eerste "
                                  f"{v.get('max')} genomen.",
        "default_format": lambda s, v: f"Er was geen formaat opgegeven: ik heb {v.get('format')} gekozen (html, "
                                       "markdown, json, schema, opengraph en txt zijn mogelijk).",
        "default_platforms": lambda s, v: "Er was geen platform opgegeven: ik heb "
                                          f"{', '.join(v.get('platforms') or [])} gekozen.",
    },
    unresolved={
        "failed_before": "daarvoor is het antwoord van {name} nodig, en dat is niet gelukt",
        "not_run": "daarvoor is het antwoord van {name} nodig, en dat is niet uitgevoerd",
        "no_article": "video {video} heeft nog geen artikel (analyseer de video eerst)",
        "no_template": "er is geen sjabloon om te gebruiken",
        "template_without_id": "de sjablonen hebben geen id",
        "no_detected_clips": "de cliptaak heeft geen clips gedetecteerd (is de detectie al klaar?)",
        "no_such_clip": "de cliptaak heeft {count} clips gedetecteerd; er is geen clip {clip}",
        "no_candidate": "medium {media} heeft geen kandidaat voor herlancering",
        "unknown_need": "onbekende behoefte {need}",
    },
    performed=lambda count, ok: f"Ik heb {count} acties uitgevoerd: {ok} gelukt, {count - ok} niet.",
    not_understood=lambda shown: f"Dit heb ik niet begrepen: {shown}.",
    missing_scopes=lambda listed: f"Niet uitgevoerd omdat een scope ontbreekt: je sleutel mist {listed}.",
    model_failed="Het taalmodel gaf een fout: ",
    left_undone={
        "cap": lambda count, cap, wait: f"Nog {_undone(count)} niet uitgevoerd: per bericht voer ik hoogstens {cap} "
                                        "acties uit. Vraag de rest opnieuw.",
        "rate_limited": lambda count, cap, wait: f"{_undone(count)} niet uitgevoerd: de limiet van je werkruimte is "
                                                 f"bereikt; probeer het {f'over {wait} s' if wait else 'later'} "
                                                 "opnieuw.",
        "stopped": lambda count, cap, wait: f"Gestopt: {_undone(count)} niet uitgevoerd.",
    },
    help=_HELP,
)


# How a message asks for things in Dutch (domain.agent.planner reads them, folded). The planner reads
# every language's words at once, so a Dutch word here must not read as something else in a message
# in another language: "en" joins two requests only where no Spanish article follows ("en el vídeo 3"
# is "in the video"), ids are joined by "en" and not "of" ("clip 1 of 3" is English), "dan" ends a
# clause except before a number ("meer dan 50"), and "die" (a German article) is not "this".
REQUESTS = RequestWords(
    verbs=(r"toon|laat|geef|lijst|analyseer|analyseren|exporteer|exporteren|annuleer|annuleren|breek|detecteer|"
           r"detecteren|render|renderen|vertaal|vertalen|hergenereer|herschrijf|hernoem|koppel|knip|knippen|snijd|"
           r"extraheer|maak|vul|zoek|vind|lees|download|volg|wat|welke|welk|hoeveel|hoe"),
    sequence=r"en dan|en daarna|en vervolgens|daarna|vervolgens|dan(?!\s+\d)|tot slot|ten slotte",
    conjunction=r"en(?!\s+(?:el|la|los|las|un|una|le|les|l')\b)",
    also="ook",
    polite=r"alsjeblieft|alstublieft|aub|graag",
    determiners="de |het |mijn |een |deze |dit ",
    kinds={"video": r"video'?s?", "article": r"artikel\w*", "job": r"jobs?|taken|taak|opdrachten|opdracht",
           "media": r"media|medium", "template": r"sjablonen|sjabloon|templates?", "clip": r"clips?"},
    numbered=r"nummers?",
    joins=r"en",
    ranges=r"tot en met|t/m|tot",
    this=r"deze|dit|dat|hetzelfde|dezelfde",
    counted=r"video'?s|taken|taak|opdrachten|artikel\w*|kandida\w*|media",
    limit_before=r"laatste|recentste|nieuwste|eerste|limiet",
    limit_after=r"laatste|recentste|nieuwste|recente",
    seconds=r"s|sec|seconden?",
    minutes=r"min|minuten|minuut",
    time_from=r"van|vanaf|tussen",
    time_to=r"tot|en",
    language_word=r"taal|doeltaal|code",
    languages={"en": r"engels\w*", "fr": r"frans\w*", "de": r"duits\w*", "es": r"spaans\w*", "it": r"italiaans\w*",
               "pt": r"portugees\w*", "nl": r"nederlands\w*|hollands\w*|vlaams\w*"},
    without_article=r"zonder\s*(?:een |het )?artikel",
    styles={"journalistic": r"journalisti\w*", "narrative": r"verhalend\w*|narratie\w*",
            "analytical": r"analytisch\w*", "tutorial": r"tutorial\w*|handleiding\w*|instructie\w*",
            "conversational": r"gesprek\w*|conversatie\w*", "documentary": r"documentair\w*|documentaire",
            "interview": r"interview\w*|vraaggesprek\w*"},
    statuses={"eligible": r"in aanmerking|geschikt\w*", "reviewing": r"in beoordeling|te beoordelen",
              "selected": r"geselecteerd\w*", "dismissed": r"afgewezen\w*|verworpen\w*",
              "stale": r"verouderd\w*"},
    platforms={"professional_network_long": r"professionele? netwerk",
               "short_video_app": r"app (?:voor|met) korte video'?s"},
    all_platforms=r"(?:alle|elke?)\s+(?:de\s+)?platforms?",
    asks={
        "cancel": r"annuleer\w*|annuleren|afbre\w*|breek\w*|stopzet\w*", "translate": r"vertaa?l\w*",
        "translations": r"vertalingen\b", "translate_verb": r"vertaal\b|vertalen\b",
        "regenerate": r"hergenere\w*|herschr\w*|opnieuw genere\w*", "rename": r"hernoem\w*",
        "rename_to": r"naar|in|als|tot", "attach": r"koppel\w*", "descriptions": r"beschrijving\w*|omschrijving\w*",
        "write": r"vul\w*|aanvul\w*|schrijf\w*|schrijv\w*|genereer\w*|maak\w*|opstel\w*",
        "clips": r"clips?|fragmenten|fragment", "moments": r"momenten|moment",
        "detect": r"detecte\w*|vind\w*|zoek\w*|herken\w*|identifice\w*|stel\w* voor",
        "generate": r"genereer\w*|maak\w*|creeer\w*", "render": r"render\w*|produceer\w*|genereer\w*",
        "track": r"status|voortgang|volg\w*", "cut": r"knip\w*|snij\w*|extrahe\w*|uitknip\w*",
        "candidates": r"kandida\w*|herlancering\w*",
        "at_least": r"(?:van\s+)?(?:minstens|ten minste|minimaal|meer dan|hoger dan|boven)",
        "export": r"exporteer\w*|export\w*|download\w*", "analyse": r"analy[sz]\w*",
        "results": r"resultat\w*|van de analyse|de analyse van", "run": r"analyseer\b|analyseren|start\w*",
        "chapters": r"hoofdstuk\w*", "transcript": r"transcri\w*", "behavioral": r"gedrag\w*",
        "premium": r"premium|hoge kwaliteit|beste kwaliteit", "scores": r"scores?\b|beoordeling\w*",
        "graph": r"graaf\b|grafen\b|contentgraaf|inhoudsgraaf|kennisgraaf",
        "create": r"maak\w*|creeer\w*|nieuwe?\b|aanma\w*",
        "named": r"genaamd|met de naam|getiteld", "status": r"status|voortgang|stand van zaken",
    },
    account={
        "get_usage_llm": r"llm|tokens?|taalmodel\w*", "get_credits": r"saldo|tegoed|credits?",
        "get_usage": r"verbruik\w*|gebruik\b|api-aanroepen|aanroepen|besteed|uitgegeven",
        "get_monitoring_alerts": r"waarschuwingen|waarschuwing|meldingen",
        "get_monitoring": r"monitoring|bewaking|gezondheid|dashboard",
        "get_me": r"wie ben ik|mijn werkruimte|mijn abonnement|mijn sleutel|mijn scopes",
    },
    video_reads={
        "get_claims": r"beweringen|bewering|feiten", "get_entities": r"entiteit\w*",
        "get_intents": r"\w*intenties?|zoekvragen|vragen", "get_moments": r"\w*momenten|hoogtepunten",
        "get_topics": r"onderwerpen|onderwerp|thema'?s",
        "get_narrative": r"verhaal\w*|narratie\w*|structuur|hoofdstukken",
        "get_visual_elements": (r"visue\w*|shots?|scenes?|gebaren|oogcontact|houding|lichaamstaal|"
                                r"gezichtsuitdrukking\w*|uitdrukking\w*|glimlach\w*|handen|gedrag\w*"),
        "get_audio_elements": r"audio|stiltes?|geluid\w*|volume",
    },
    help=(r"help|hulp|hallo|hoi|dag|bedankt|dank je(?: wel)?|dank u(?: wel)?|wat kun je(?: doen)?|"
          r"wat kan je(?: doen)?|wat doe je|commando'?s"),
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"eerst|dan|nu|daarna|tot\s+slot|ten\s+slotte")

# how a question read out opens (domain.analysis.text.read_out_question)
_ASKING = r"(?:waarom|hoe|wat|wanneer|waar|welke|wie)\b"


LANGUAGE = Language(
    code="nl",
    markers=frozenset({
        "het", "een", "mijn", "toon", "laat", "zien", "lijst", "exporteer", "vertaal", "analyseer",
        "annuleer", "hallo", "bedankt", "dank", "alsjeblieft", "van", "met", "naar", "wat", "hoeveel", "welke",
        "ben", "wie", "ik", "heb", "daarna", "dan", "ook", "taken", "saldo", "waarschuwingen", "laatste",
        "hoofdstukken", "geef", "mij", "artikelen", "taak", "knip", "onderwerpen", "entiteiten",
        "tegoed", "verbruik", "sjablonen", "je", "kun", "wil", "graag", "aub", "alstublieft", "resultaten",
        "tot", "als", "artikel", "tussen", "voor", "uit", "aan", "af", "op", "bij", "nieuwste", "breek", "vul",
        "beschrijvingen", "graaf", "detecteer", "herschrijf",
        # French and Spanish write them too, but a Dutch request rarely goes without them ("toon de video's 3
        # en 4"); a tie goes to the languages named before Dutch
        "de", "en",
    }),
    letters="",
    name="Dutch",
    locale="nl_NL",
    stemmer="dutch",
    called=r"dutch|neerlandais|hollandais",
    spoken_fillers=(
        "eh uh uhm ehm nou zeg gewoon even eigenlijk dus oké okay ok ja nee hè toch hallo welkom bedankt dank "
        "doei"
    ),
    hesitations="eh ehm uh uhm hmm",
    leading_fillers="eh uhm nou dus en oké okay ok ja maar",
    comma_openers="tenslotte dan eerst nu ook daarna vervolgens",
    leading_words="oké okay ok goed dus en maar nou",
    cue_phrases=(
        r"nu|vervolgens|daarna|laten\s+we|we\s+gaan\s+(?:nu|verder)|eerst|ten\s+(?:eerste|tweede|derde|slotte)|"
        r"tot\s+slot|concluderend|samenvattend|een\s+ander\s+(?:punt|onderwerp|voorbeeld)|(?:het|de)\s+volgende|"
        r"wat\s+is|hoe\s+werkt|waarom"
    ),
    announce_phrases=_OPENERS + r"laten\s+we\s+het\s+(?:nu\s+)?(?:even\s+)?hebben\s+over(?:\s+(?:de|het))?",
    instruction_phrases=(
        r"(?:(?:eerst|dan|daarna|nu|tenslotte)[,\s]+)?"
        r"(?:klik|installeer|download|typ|selecteer|druk\s+op|voeg|verwijder|kopieer|plak|sla|sluit|giet|meng|"
        r"ga\s+naar|controleer|meet|zorg\s+ervoor|vergeet\s+niet|begin\s+met)\b|"
        r".*?\b(?:stap\s+(?:\d+|een|twee|drie|vier|vijf)|(?:de\s+)?(?:eerste|volgende|laatste)\s+stap)\b"
    ),
    step_openers=r"eerst|begin\s+met|ten\s+eerste|om\s+te\s+beginnen",
    video_subject_phrases=(
        r"\b(?:deze|dit)\s+(?:korte\s+)?(?:video|aflevering|les|podcast|presentatie|introductie|gids)\s+"
        r"(?:over|van)\s+(?:de\s+|het\s+)?"
    ),
    conclusion_phrases=r"tot\s+slot|concluderend|samenvattend|kortom|ten\s+slotte",
    sponsor_phrases=r"\bsponsor(?:s|ed)?\b|\bkortingscode\b",
    definition_phrases=(
        r"\b(?:is|zijn|was|waren)\s+(?:een|de|het)\b|\bbetekent\b|\bverwijst\s+naar\b|\bwordt\s+gedefinieerd\b|"
        r"\bbestaat\s+uit\b|\bheet\b|\bnoemen\s+we\b|\bnoemt\s+men\b|\bstaat\s+voor\b"
    ),
    cause_phrases=(
        r"\bomdat\b|\bdaarom\b|\bdaardoor\b|\bleid(?:t|en)\s+tot\b|\bveroorzaak|\bvanwege\b|\bdankzij\b|"
        r"\bmaakt\s+het\s+mogelijk\b|\bzodat\b|\bals\s+gevolg\b|\baangezien\b"
    ),
    comparison_phrases=(
        r"\bmeer\s+dan\b|\bminder\s+dan\b|\b(?:de|het)\s+eerste\b|\bhet\s+meest\b|"
        r"\bde\s+(?:grootste|hoogste|laagste|kleinste|meeste)\b|\bkeer\s+(?:meer|minder|sneller|groter)\b|"
        r"\bdubbel\b|\bmiljoen(?:en)?\b|\bmiljard(?:en)?\b|\bvoor\s+elke\b"
    ),
    hedge_phrases=(
        r"\bik\s+denk\b|\bik\s+geloof\b|\bmisschien\b|\bwaarschijnlijk\b|\bvolgens\s+mij\b|\bik\s+vind\b|"
        r"\bik\s+vermoed\b|\been\s+soort\s+van\b"
    ),
    social_phrases=r"\bhallo\b|\bwelkom\b|\bbedankt\b|\bdank\s+(?:je|u)\b|\babonneer|\btot\s+(?:ziens|snel)\b|\bdoei\b",
    connective_openers="en maar dus of dan ook want omdat bovendien daarom toch",
    anaphora_openers="dit dat hij zij ze",
    hook_openers="waarom|hoe|wat als|wist je dat|stel je voor|hier is|het geheim|de waarheid|let op|stop",
    attribution_phrases="volgens|zei|zegt|verklaarde",
    speech_markers=r"\bweet je\b|\bzeg maar\b|\bof zo\b",
    question_leads="de (?:echte |grote |eerste )?vraag(?: voor jou| voor jullie)?(?:,[^,?]{1,30},)? is",
    # a question reported after a verb is a clause ("vraagt hoe je dat doet"): read out only after a colon
    read_questions=(rf"\b(?:vraagt|schrijft|wil weten):\s+(?={_ASKING})"
                    rf"|\bvra(?:ag|gen) (?:is |komt )?van [^,.?!:]{{1,40}}[,:]\s*(?={_ASKING})"
                    r"|\bvraag komt van [^,.?!:]{1,40}[.!]?\s*$"),
    tag_questions="toch|hè|weet je|snap je|oké|ok",
    process_words=r"hoe(?!\s+(?:veel|lang|vaak|ver|oud|groot|snel))|stappen|stap|proces|methode|werkt",
    month_names="januari februari maart april mei juni juli augustus september oktober november december",
    unit_words=(
        r"procent|euro|dollar|pond|miljard|miljoen|duizend|kilometer|meter|kilo|ton|graden|graad|watt|uur|"
        r"uren|minuten|minuut|seconden|seconde|jaar|jaren|dagen|dag|maanden|maand|weken|week|keer|"
        r"inwoners|mensen|personen|werknemers|gebruikers"
    ),
    question_openers=("waarom", "hoe komt"),
    conjunction="en",
    scales={"duizend": 3, "miljoen": 6, "miljard": 9},
    vague_amounts=(r"enkele|een paar|meerdere|vele", r"honderd|duizend", r"honderden|duizenden"),
    compound_letters=10,
    vague_heads="soort aantal paar manier beetje deel hoop keer keren opzichte",
    aspect_title="van {subject}",
    judgement_words=("goed goede mooi mooie leuk leuke raar rare enorm enorme geweldig geweldige interessant "
                     "interessante vreemd vreemde gek gekke grappig grappige ingewikkeld ingewikkelde blij "
                     "teleurstellend"),
    connectors="van de het en voor met in op",
    pronouns=(
        "ik me mij mijn jij je jou jouw u uw hij hem zijn zij ze haar wij we ons onze jullie hun hen het dit dat "
        "deze die iets niets iemand"
    ),
    article_pronouns="het de die",
    dangling="en of maar de het een van voor met in op aan",
    verb_signals="ik jij hij wij we jullie men te",
    plural_endings=("s", "en"),
    plural_templates={"what": "wat zijn {t}", "how": "hoe werken {t}", "why": "waarom {t} belangrijk zijn"},
    query_plural_endings=("en", "s"),
    labels={
        "introduction": "Inleiding", "key_facts": "Kernpunten", "faq": "Veelgestelde vragen",
        "conclusion": "Conclusie", "step": "Stap", "in_short": "In het kort", "analysis": "Analyse",
        "figures": "Cijfers en feiten", "timeline": "Tijdlijn", "and": "en", "what": "wat is {t}",
        "how": "hoe werkt {t}", "why": "waarom {t} belangrijk is", "how_to": "hoe {t}", "who": "wie is {t}",
        "hook": "opening", "context": "context", "development": "uitwerking", "conclusion_part": "conclusie",
        "chapters": "Hoofdstukken", "source": "Bron", "watch": "Bekijk vanaf", "question": "V", "answer": "A",
        "also_answered": "Ook beantwoord", "main_entities": "Belangrijkste namen en begrippen",
    },
    colon=": ",
    question_mark="?",
    requests=REQUESTS,
    assistant=ASSISTANT,
)
