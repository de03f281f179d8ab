"""German: what the service knows of it, and the assistant's German.

The assistant reads requests in it (``REQUESTS``) and answers in it (``ASSISTANT``): its labels,
sentences and the words that ask for its actions, with the same keys as the English home
(``domain.languages.en``; see there). The reply addresses the person formally ("Sie"), as the
French one does ("vous").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.languages.base import AssistantWords, Language, RequestWords, Say, optional_words

R = dict[str, Any]


def _negated(what: str, modal: str) -> str:
    """``what`` (an infinitive phrase, its verb last: "Video 3 analysieren") after ``modal`` and
    negated where German puts ``nicht``, before the verb: "Ich konnte Video 3 nicht analysieren"."""
    rest, _, verb = what.rpartition(" ")
    return f"Ich {modal} {rest} nicht {verb}" if rest else f"Ich {modal} nicht {verb}"


def _credits(s: Say, n: str, r: R, a: R) -> str:
    return (f"Ihr Guthaben beträgt {r.get('balance')} Credits ({r.get('used')} von {r.get('total')} verbraucht, "
            f"Tarif {r.get('plan')}).")


def _usage(s: Say, n: str, r: R, a: R) -> str:
    return (f"Nutzung: {s.n(r.get('totalApiCalls'), 'API-Aufruf', 'API-Aufrufe')}, "
            f"{r.get('totalCreditsConsumed')} Credits verbraucht, im Schnitt {r.get('averageResponseMs')} ms.")


def _usage_llm(s: Say, n: str, r: R, a: R) -> str:
    totals = r.get("totals") or {}
    return (f"Sprachmodell-Nutzung: {s.n(totals.get('calls', 0), 'Aufruf', 'Aufrufe')}, "
            f"{totals.get('totalTokens', 0)} Tokens.")


def _me(s: Say, n: str, r: R, a: R) -> str:
    scopes = ", ".join(r.get("scopes") or [])
    return (f"Arbeitsbereich {s.q(r.get('workspace'))}, Tarif {r.get('plan')}, noch {r.get('credits_balance')} "
            f"Credits; Ihr Schlüssel ({r.get('environment')}) hat die Scopes {scopes}.")


def _monitoring(s: Say, n: str, r: R, a: R) -> str:
    return (f"Überwachung: {s.n(r.get('calls_last_hour'), 'Aufruf', 'Aufrufe')} in der letzten Stunde "
            f"(Fehlerquote {r.get('error_rate_last_hour')}), {r.get('jobs_pending')} Aufträge ausstehend, "
            f"{r.get('jobs_running')} laufend, {r.get('jobs_failed_24h')} in 24 h fehlgeschlagen, "
            f"{s.n(r.get('alerts'), 'aktive Warnung', 'aktive Warnungen')}.")


def _alerts(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Keine aktive Warnung."
    shown = s.listing(r.get("alerts") or [], lambda x: f"{x.get('severity')} {x.get('type')}: {x.get('message')}")
    return f"{s.n(r['count'], 'aktive Warnung', 'aktive Warnungen')} ({r.get('critical', 0)} kritisch): {shown}."


def _videos(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Sie haben noch kein Video."
    shown = s.listing(r.get("videos") or [], lambda v: f"#{v.get('id')} {s.q(v.get('name'))} "
                                                       f"({s.status(v.get('status'))})", r.get("has_more"))
    return f"{s.n(r['count'], 'Video', 'Videos')}: {shown}."


def _video(s: Say, n: str, r: R, a: R) -> str:
    article = f", Artikel {r.get('article_id')}" if r.get("article_id") else ""
    return (f"Video {r.get('id')} {s.q(r.get('name'))}: {s.status(r.get('status'))}, "
            f"{r.get('duration_seconds')} s{article} ({r.get('link')}).")


def _queued(s: Say, n: str, r: R, a: R) -> str:
    charged = r.get("credits_charged")
    cost = f", {s.n(charged, 'Credit', 'Credits')} abgebucht" if charged is not None else ""
    return f"Gestartet: {s.label(n, a)}, Auftrag {r.get('job_id')}{cost} ({r.get('link')})."


def _clip_job_queued(s: Say, n: str, r: R, a: R) -> str:
    reused = " (eine gleiche frühere Anfrage, wiederverwendet)" if r.get("reused") else ""
    return f"Gestartet: {s.label(n, a)}, Clip-Auftrag {r.get('job_id')}{reused} ({r.get('link')})."


# What a read of a video's analysis counts, singular and plural.
_MEMBERS = {"get_claims": ("Aussage", "Aussagen"), "get_entities": ("Entität", "Entitäten"),
            "get_intents": ("Suchintention", "Suchintentionen"), "get_moments": ("Clip-Moment", "Clip-Momente"),
            "get_topics": ("Thema", "Themen"), "get_visual_elements": ("visuelles Element", "visuelle Elemente"),
            "get_audio_elements": ("Audio-Element", "Audio-Elemente")}


def _video_member(s: Say, n: str, r: R, a: R) -> str:
    first = [f for f in (r.get("first") or []) if f]
    shown = (" Die ersten: " + "; ".join(s.q(f) for f in first) + ".") if first else ""
    if r.get("on_screen"):  # the behavioural summaries are written in English
        shown += " Im Bild (auf Englisch): " + "; ".join(str(f) for f in r["on_screen"]) + "."
    one, many = _MEMBERS.get(n, ("Eintrag", "Einträge"))
    return f"Video {a.get('id')}: {s.n(r.get('count'), one, many)} ({r.get('link')}).{shown}"


def _narrative(s: Say, n: str, r: R, a: R) -> str:
    chapters = "; ".join(str(c) for c in (r.get("chapters") or []))
    return (f"Video {a.get('id')}: Struktur {', '.join(map(str, r.get('structure') or []))}; Kapitel: "
            f"{chapters or 'keine'} ({r.get('link')}).")


def _graph(whose: str) -> Callable[[Say, str, R, R], str]:
    def sentence(s: Say, n: str, r: R, a: R) -> str:
        return (f"Inhaltsgraph von {whose} {a.get('id')}: {r.get('claims', 0)} Aussagen, {r.get('entities', 0)} "
                f"Entitäten, {r.get('searchIntents', 0)} Suchintentionen, {r.get('clipMoments', 0)} Clip-Momente, "
                f"GEO-Bereitschaft {r.get('geo_readiness_score')} ({r.get('link')}).")

    return sentence


def _jobs(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Sie haben keine Aufträge."
    shown = s.listing(r.get("jobs") or [], lambda j: f"{j.get('id')} {j.get('type')} {s.status(j.get('status'))} "
                                                     f"{j.get('progress')} %")
    return f"{s.n(r['count'], 'Auftrag', 'Aufträge')}: {shown}."


def _job(s: Say, n: str, r: R, a: R) -> str:
    error = f" ({r.get('error_message')})" if r.get("error_message") else ""
    article = f", Artikel {r['article_id']}" if r.get("article_id") else ""
    return (f"Auftrag {r.get('id')} ({r.get('type')}): {s.status(r.get('status'))}, {r.get('progress')} %, "
            f"{r.get('step')}{article}{error} ({r.get('link')}).")


def _articles(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Sie haben noch keinen Artikel."
    shown = s.listing(r.get("articles") or [], lambda x: f"#{x.get('id')} {s.q(x.get('title'))} (AEO "
                                                         f"{x.get('aeo_score')}, GEO {x.get('geo_score')})",
                      r.get("has_more"))
    return f"{s.n(r['count'], 'Artikel', 'Artikel')}: {shown}."


def _article(s: Say, n: str, r: R, a: R) -> str:
    ident = r.get("id", r.get("article_id", a.get("id")))
    title = f" {s.q(r.get('title'))}" if r.get("title") else ""
    return (f"Artikel {ident}{title}: AEO {r.get('aeo_score')}, GEO {r.get('geo_score')}, Gesamtwert "
            f"{r.get('composite_score')} ({r.get('link')}).")


def _export(s: Say, n: str, r: R, a: R) -> str:
    size = f", {r['bytes']} Bytes" if r.get("bytes") is not None else ""
    return f"Export von Artikel {a.get('id')} als {a.get('format')}{size}: {r.get('link')}."


def _article_updated(s: Say, n: str, r: R, a: R) -> str:
    return f"Artikel {a.get('id')} {'geändert' if r.get('updated') else 'unverändert'} ({r.get('link')})."


def _medias(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("medias") or [], lambda m: f"#{m.get('id')} {s.q(m.get('name'))}")
    return f"{s.n(r.get('count', 0), 'Medium', 'Medien')}{': ' + shown if shown else ''}."


def _media_created(s: Say, n: str, r: R, a: R) -> str:
    return f"Medium {r.get('id')} {s.q(r.get('name'))} angelegt."


def _templates(s: Say, n: str, r: R, a: R) -> str:
    shown = s.listing(r.get("templates") or [], lambda x: f"#{x.get('id')} {s.q(x.get('name'))} {x.get('format')}"
                      + (" (Standard)" if x.get("is_default") else ""))
    return f"{s.n(r.get('count', 0), 'Vorlage', 'Vorlagen')}{': ' + shown if shown else ''}."


def _clip_job(s: Say, n: str, r: R, a: R) -> str:
    return (f"Clip-Auftrag {a.get('jobId')}: {s.status(r.get('status'))}, {r.get('clips', 0)} Clips, "
            f"{r.get('rendered_clips', 0)} gerendert, {r.get('failed_clips', 0)} fehlgeschlagen ({r.get('link')}).")


def _candidates(s: Say, n: str, r: R, a: R) -> str:
    if not r.get("count"):
        return "Keine Reaktivierungskandidaten."
    shown = s.listing(r.get("candidates") or [], lambda x: f"{x.get('id')} {s.q(x.get('title'))} (Medium "
                      f"{x.get('media_id')}, Score {x.get('score')}, {s.status(x.get('status'))})")
    return f"{s.n(r['count'], 'Reaktivierungskandidat', 'Reaktivierungskandidaten')}: {shown}."


def _descriptions(s: Say, n: str, r: R, a: R) -> str:
    drafts = "; ".join(f"{d.get('platform_id')} {d.get('measured_length')}/{d.get('max_length')}"
                       for d in r.get("drafts") or [])
    return f"Beschreibungen für Medium {r.get('media_id')} vervollständigt ({drafts}); Anfrage {r.get('request_id')}."


def _done(s: Say, n: str, r: R, a: R) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in r.items() if not isinstance(v, dict | list))
    return f"Erledigt: {s.label(n, a)}{': ' + facts if facts else ''}."


# A kind of object whose id a request lacks: how German asks which one (the accusative of "meinen"),
# and its possessive ("seine ID").
_WHICH = {"video": ("Welches Video", "seine"), "article": ("Welchen Artikel", "seine"),
          "job": ("Welchen Auftrag", "seine"), "media": ("Welches Medium", "seine"),
          "clip_job": ("Welchen Clip-Auftrag", "seine"), "template": ("Welche Vorlage", "ihre")}


def _missing_id(s: Say, v: R) -> str:
    action = s.label(v.get("action", ""), {}).replace(" ?", "")
    which, its = _WHICH.get(v.get("kind", ""), (f"Welches Objekt ({v.get('kind', '')})", "seine"))
    return f"{which} meinen Sie? Für {s.q(action)} brauche ich {its} ID."


def _undone(count: int, more: str = "") -> str:
    """"3 (weitere) angeforderte Aktionen wurden nicht ausgeführt", in the number of ``count``."""
    if count == 1:
        return f"1 {more}angeforderte Aktion wurde nicht ausgeführt"
    return f"{count} {more}angeforderte Aktionen wurden nicht ausgeführt"


_HELP = ("Ich kann: Ihr Guthaben, Ihre Nutzung und Ihre Warnungen abrufen; Ihre Videos, Aufträge und Artikel "
         "auflisten oder anzeigen; ein Video analysieren (mit Kapiteln, Transkript, einem Schreibstil, in "
         "Premium-Qualität); die Aussagen, Entitäten, Themen oder den Inhaltsgraphen eines Videos abrufen; die "
         "Bewertungen, den Graphen oder den Export eines Artikels (html, markdown, json, schema, opengraph, txt), "
         "ihn übersetzen oder neu generieren; einen Clip schneiden, Clips erkennen und rendern; "
         "Reaktivierungskandidaten auflisten und Beschreibungen vervollständigen; einen Auftrag abbrechen. Zum "
         "Beispiel: „analysiere das Video 12 mit Kapiteln“, „exportiere den Artikel 5 als Markdown“, „die Videos "
         "3, 4 und 7“, „mein Guthaben und meine Warnungen“. Höchstens 15 Aktionen pro Nachricht.")

_VIDEO_MEMBERS = tuple(_MEMBERS)

ASSISTANT = AssistantWords(
    quotes=("„", "“"),
    zero_is_singular=False,
    statuses={"pending": "ausstehend", "running": "läuft", "completed": "abgeschlossen", "failed": "fehlgeschlagen",
              "cancelled": "abgebrochen", "uploaded": "hochgeladen", "analyzing": "wird analysiert",
              "analyzed": "analysiert", "queued": "in der Warteschlange", "eligible": "geeignet",
              "reviewing": "in Prüfung", "selected": "ausgewählt", "dismissed": "verworfen", "stale": "veraltet"},
    and_more=" (und weitere)",
    # infinitive phrases, the verb last (the sentences about a refusal put "nicht" before it: ``_negated``)
    labels={
        "get_me": "Ihren Arbeitsbereich und Ihren Schlüssel abrufen",
        "get_credits": "Ihr Guthaben abrufen",
        "get_usage": "Ihre Nutzung abrufen",
        "get_usage_llm": "Ihre Sprachmodell-Nutzung abrufen",
        "get_monitoring": "Ihre Überwachungsdaten abrufen",
        "get_monitoring_alerts": "Ihre Warnungen abrufen",
        "list_videos": "Ihre Videos auflisten",
        "get_video": "Video {id} anzeigen",
        "get_transcript": "das Transkript von Video {id} abrufen",
        "analyze_video": "Video {id} analysieren",
        "get_claims": "die Aussagen von Video {id} abrufen",
        "get_entities": "die Entitäten von Video {id} abrufen",
        "get_intents": "die Suchintentionen von Video {id} abrufen",
        "get_moments": "die Clip-Momente von Video {id} abrufen",
        "get_topics": "die Themen von Video {id} abrufen",
        "get_narrative": "die Erzählstruktur von Video {id} abrufen",
        "get_visual_elements": "die visuellen Elemente von Video {id} abrufen",
        "get_audio_elements": "die Audio-Elemente von Video {id} abrufen",
        "get_video_graph": "den Inhaltsgraphen von Video {id} abrufen",
        "list_jobs": "Ihre Aufträge auflisten",
        "get_job": "Auftrag {id} anzeigen",
        "cancel_job": "Auftrag {id} abbrechen",
        "list_articles": "Ihre Artikel auflisten",
        "get_article": "Artikel {id} anzeigen",
        "get_article_scores": "die Bewertungen von Artikel {id} abrufen",
        "get_article_graph": "den Graphen von Artikel {id} abrufen",
        "export_article": "Artikel {id} als {format} exportieren",
        "update_article": "Artikel {id} ändern",
        "translate_article": "Artikel {id} übersetzen",
        "list_article_translations": "die Übersetzungen von Artikel {id} auflisten",
        "regenerate_article": "Artikel {id} neu generieren",
        "list_medias": "Ihre Medien auflisten",
        "create_media": "das Medium anlegen",
        "create_video_clip": "einen Clip aus Video {id} schneiden",
        "list_templates": "die Vorlagen auflisten",
        "detect_clips": lambda a: "Clips in Artikel {article_id} erkennen" if "article_id" in a else "Clips erkennen",
        "render_clips": "die Clips rendern",
        "get_clip_job": "Clip-Auftrag {jobId} abrufen",
        "list_revival_candidates": "die Reaktivierungskandidaten auflisten",
        "complete_descriptions": "die Beschreibungen von Medium {media_id} vervollständigen",
        "update_revival_candidate": "Reaktivierungskandidat {id} ändern",
        "update_video": "die Beschreibung von Video {id} ändern",
    },
    label_unknown="{name} ausführen",
    found={
        "get_credits": _credits, "get_usage": _usage, "get_usage_llm": _usage_llm, "get_me": _me,
        "get_monitoring": _monitoring, "get_monitoring_alerts": _alerts, "list_videos": _videos, "get_video": _video,
        "get_transcript": _done,
        **dict.fromkeys(("analyze_video", "translate_article", "regenerate_article", "create_video_clip"), _queued),
        "detect_clips": _clip_job_queued, "render_clips": _clip_job_queued,
        **dict.fromkeys(_VIDEO_MEMBERS, _video_member),
        "get_narrative": _narrative, "get_video_graph": _graph("Video"), "get_article_graph": _graph("Artikel"),
        "list_jobs": _jobs, "get_job": _job, "cancel_job": _job, "list_articles": _articles, "get_article": _article,
        "get_article_scores": _article, "export_article": _export, "update_article": _article_updated,
        "list_article_translations": _done, "list_medias": _medias, "create_media": _media_created,
        "list_templates": _templates, "get_clip_job": _clip_job, "list_revival_candidates": _candidates,
        "complete_descriptions": _descriptions, "update_revival_candidate": _done, "update_video": _done,
    },
    # Folded words (no umlauts: "ändere" is "andere"), each matched against a whole word of the message.
    # "neu…", "such…" and "ander…" are written out: "neuesten", "Suchintentionen" and "anderen" ask for nothing.
    asks={
        "analyze_video": (r"analy[sz]\w*", r"\w+analyse\w*"),
        "cancel_job": (r"storn\w*", r"abbrech\w*", r"abbruch", r"brich", r"bricht", r"beend\w*", r"stopp\w*"),
        "create_media": (r"anleg\w*", r"erstell\w*", r"neues", r"hinzufug\w*"),
        "update_article": (r"umbenenn\w*", r"benenn\w*", r"verknupf\w*", r"zuordn\w*", r"ordne"),
        "translate_article": (r"ubersetz(?!ung)\w*",),  # not the noun: "die Übersetzungen" reads them
        "regenerate_article": (r"regenerier\w*", r"neu", r"umschreib\w*", r"uberarbeit\w*"),
        "create_video_clip": (r"clip", r"schneid\w*", r"ausschneid\w*", r"ausschnitt\w*", r"extrahier\w*",
                              r"trimm\w*"),
        "detect_clips": (r"erkenn\w*", r"find\w*", r"suche", r"suchen", r"sucht", r"vorschlag\w*", r"schlag",
                         r"identifizier\w*", r"ermittl\w*"),
        "render_clips": (r"render\w*", r"produzier\w*", r"generier\w*", r"erzeug\w*"),
        "complete_descriptions": (r"beschreibung\w*", r"vervollstandig\w*", r"erganz\w*"),
        "update_video": (r"andere", r"andern", r"andert", r"geandert", r"anderung\w*", r"modifizier\w*",
                         r"aktualisier\w*", r"bearbeit\w*", r"ersetz\w*"),
        "update_revival_candidate": (r"prufe", r"prufen", r"uberpruf\w*", r"verwirf", r"verwerf\w*",
                                     r"\w*kandidat\w*", r"wiedereroffn\w*", r"geeignet\w*"),
    },
    kind_words={
        "account": (r"wer", r"identitat\w*", r"schlussel\w*", r"scopes?", r"konto\w*", r"arbeitsbereich\w*",
                    r"umgebung\w*"),
        "credits": (r"guthaben", r"kontostand", r"credits?", r"geld", r"tarif\w*", r"plan"),
        "usage": (r"\w*nutzung\w*", r"verbrauch\w*", r"uberwachung\w*", r"monitoring", r"warnung\w*", r"alarm\w*",
                  r"tokens?", r"llm", r"latenz\w*", r"fehler\w*", r"statistik\w*", r"metrik\w*", r"anfragen",
                  r"aufrufe?"),
        "jobs": (r"jobs?", r"\w*auftrag\w*", r"aufgaben?", r"status", r"zustand", r"fortschritt\w*",
                 r"warteschlange"),
        "content": (r"\w*video\w*", r"artikel\w*", r"medien", r"medium", r"aussagen?", r"behauptung\w*", r"fakten",
                    r"entitat\w*", r"\w*intention\w*", r"suchanfragen?", r"momente?", r"highlights?", r"kapitel\w*",
                    r"narrativ\w*", r"\w*struktur\w*", r"themen?", r"thema", r"graph\w*", r"elemente?",
                    r"transkri\w*", r"zusammenfass\w*", r"export\w*", r"bewertung\w*", r"aeo", r"geo",
                    r"ubersetzung\w*", r"\w*clips?", r"inhalt\w*", r"kanal\w*", r"kanale", r"\w*analys\w*"),
        "templates": (r"vorlage\w*", r"\w*clips?", r"render\w*", r"erkenn\w*"),
        "revival": (r"\w*kandidat\w*", r"reaktivier\w*", r"wiederbeleb\w*", r"beschreibung\w*", r"plattform\w*"),
    },
    done=_done,
    lacks_scope=lambda what, scope: f"{_negated(what, 'konnte')}: Ihrem Schlüssel fehlt der Scope {scope}.",
    refused=lambda what, why: f"{_negated(what, 'werde')}: {why}.",
    failed=lambda what, why: f"{_negated(what, 'konnte')}: {why}.",
    notes={
        "missing_id": _missing_id,
        "missing_language": lambda s, v: "Zum Übersetzen nennen Sie mir bitte die Zielsprache (en, de, es, it, pt "
                                         "oder nl).",
        "missing_range": lambda s, v: "Zum Schneiden eines Clips nennen Sie bitte den Zeitbereich, zum Beispiel "
                                      "„von 0:10 bis 0:40“.",
        "missing_name": lambda s, v: "Nennen Sie den Namen in Anführungszeichen, zum Beispiel „Kernfusion“.",
        "range_cut": lambda s, v: f"Ein Bereich umfasst höchstens {v.get('max')} IDs; ich habe die ersten "
                                  f"{v.get('max')} genommen.",
        "default_format": lambda s, v: f"Es wurde kein Format genannt: Ich habe {v.get('format')} gewählt (es gibt "
                                       "html, markdown, json, schema, opengraph und txt).",
        "default_platforms": lambda s, v: "Es wurde keine Plattform genannt: Ich habe "
                                          f"{', '.join(v.get('platforms') or [])} gewählt.",
    },
    # after a colon, as a sentence of its own: capitalised
    unresolved={
        "failed_before": "Dafür ist die Antwort von {name} nötig, und {name} war nicht erfolgreich",
        "not_run": "Dafür ist die Antwort von {name} nötig, und {name} wurde nicht ausgeführt",
        "no_article": "Video {video} hat noch keinen Artikel (analysieren Sie es zuerst)",
        "no_template": "Es gibt keine Vorlage, die sich verwenden lässt",
        "template_without_id": "Die Vorlagen haben keine ID",
        "no_detected_clips": "Der Clip-Auftrag hat keine erkannten Clips (ist seine Erkennung abgeschlossen?)",
        "no_such_clip": "Der Clip-Auftrag hat {count} Clips erkannt; einen Clip {clip} gibt es nicht",
        "no_candidate": "Medium {media} hat keinen Reaktivierungskandidaten",
        "unknown_need": "Unbekannter Bedarf {need}",
    },
    performed=lambda count, ok: f"Ich habe {count} Aktionen ausgeführt: {ok} erfolgreich, {count - ok} nicht.",
    not_understood=lambda shown: f"Nicht verstanden habe ich: {shown}.",
    missing_scopes=lambda listed: (f"Mangels Scope nicht ausgeführt: Ihrem Schlüssel "
                                   f"{'fehlen' if ',' in listed else 'fehlt'} {listed}."),
    model_failed="Fehler des Sprachmodells: ",
    left_undone={
        "cap": lambda count, cap, wait: f"{_undone(count, 'weitere ')}: Pro Nachricht laufen höchstens {cap} "
                                        "Aktionen. Fragen Sie für den Rest bitte erneut.",
        "rate_limited": lambda count, cap, wait: f"{_undone(count)}: Das Anfragelimit Ihres Arbeitsbereichs ist "
                                                 f"erreicht; versuchen Sie es {f'in {wait} s ' if wait else 'später '}"
                                                 "erneut.",
        "stopped": lambda count, cap, wait: f"Abgebrochen: {_undone(count)}.",
    },
    help=_HELP,
)


# How a message asks for things in German (domain.agent.planner reads them, folded: no umlauts).
REQUESTS = RequestWords(
    verbs=(r"zeig|zeige|zeigen|liste|listen|auflisten|gib|analysiere|analysieren|exportiere|exportieren|"
           r"storniere|stornieren|abbrechen|erkenne|erkennen|finde|finden|rendere|rendern|ubersetze|ubersetzen|"
           r"regeneriere|regenerieren|benenne|schneide|schneiden|erstelle|erstellen|vervollstandige|erganze|"
           r"erganzen|lade|offne|lies|welche|welcher|welches|wie|brich"),
    sequence=r"und dann|dann|danach|anschlie(?:ß|ss)end|schlie(?:ß|ss)lich|zuletzt",
    conjunction="und",
    also="auch",
    polite="bitte",
    determiners="der |die |das |den |dem |mein |meine |meinen |meiner ",
    kinds={"video": r"videos?", "article": r"artikel\w*", "job": r"jobs?|auftrage?n?|aufgaben?",
           "media": r"medien|medium", "template": r"vorlagen?", "clip": r"clips?"},
    numbered=r"nummer",
    joins=r"und|oder",
    ranges=r"bis",
    this=r"diese[snmr]?|dies|das gleiche|derselbe|dieselbe|dasselbe",
    counted=r"videos?|jobs?|auftrage?n?|artikel\w*|kandidat\w*|medien",
    limit_before=r"letzten?|neuesten?|ersten?|limit",
    limit_after=r"letzten?|neuesten?|ersten?",
    seconds=r"s|sek|sekunden?",
    minutes=r"min|minuten?",
    time_from=r"von|zwischen|ab",
    time_to=r"bis|und",
    language_word=r"sprache|zielsprache|code",
    languages={"en": r"englisch\w*", "fr": r"franzosisch\w*", "de": r"deutsch\w*", "es": r"spanisch\w*",
               "it": r"italienisch\w*", "pt": r"portugiesisch\w*", "nl": r"niederlandisch\w*"},
    without_article=r"ohne\s*(?:einen |den )?artikel",
    styles={"journalistic": r"journalisti\w*", "narrative": r"narrativ\w*|erzahlend\w*", "analytical": r"analytisch\w*",
            "tutorial": r"tutorial\w*|anleitung\w*", "conversational": r"gesprach\w*|dialog\w*",
            "documentary": r"dokumentar\w*", "interview": r"interview\w*"},
    statuses={"eligible": r"geeignet\w*", "reviewing": r"in prufung|zu prufen", "selected": r"ausgewahlt\w*",
              "dismissed": r"verworfen\w*|abgelehnt\w*", "stale": r"veraltet\w*"},
    platforms={"professional_network_long": r"berufliche[sn]? netzwerk", "short_video_app": r"kurzvideo[- ]app"},
    all_platforms=r"(?:alle|jede)\s+(?:die\s+)?plattformen?",
    asks={
        "cancel": r"storn\w*|abbrech\w*|abbruch|brich\b", "translate": r"ubersetz\w*",
        "translations": r"ubersetzungen\b",
        "translate_verb": r"ubersetze\b|ubersetzen\b", "regenerate": r"regenerier\w*|umschreib\w*|neu schreib\w*",
        "rename": r"umbenenn\w*|benenne\w*", "rename_to": r"zu|als", "attach": r"verknupf\w*|zuordn\w*",
        "descriptions": r"beschreibung\w*", "write": r"vervollstandig\w*|erganz\w*|schreib\w*|generier\w*|erstell\w*",
        "clips": r"clips?|ausschnitte?", "moments": r"momente?",
        "detect": r"erkenn\w*|finde\w*|suche\w*|sucht|vorschlag\w*|identifizier\w*",
        "generate": r"generier\w*|erstell\w*|mache|machen", "render": r"render\w*|produzier\w*|generier\w*",
        "track": r"status|fortschritt|verfolg\w*", "cut": r"schneid\w*|ausschneid\w*|extrahier\w*",
        "candidates": r"kandidat\w*|wiederbeleb\w*|reaktivier\w*", "at_least": r"uber|mindestens|mehr als",
        "export": r"exportier\w*|herunterlad\w*", "analyse": r"analy[sz]\w*", "results": r"ergebnis\w*|der analyse",
        "run": r"analysiere\b|analysieren|starte\b|starten", "chapters": r"kapitel\w*", "transcript": r"transkri\w*",
        "behavioral": r"verhalten\w*", "premium": r"premium|hohe[rn]? qualitat|beste[rn]? qualitat",
        "scores": r"bewertung\w*|punktzahl\w*", "graph": r"graph\w*", "create": r"erstell\w*|neue[snmr]?\b|anlegen",
        "named": r"namens|genannt|betitelt", "status": r"status|zustand",
    },
    account={
        "get_usage_llm": r"llm|tokens?|sprachmodell\w*", "get_credits": r"guthaben|kontostand|credits?",
        "get_usage": r"nutzung|verbrauch\w*|aufrufe", "get_monitoring_alerts": r"warnungen|warnung|alarm\w*",
        "get_monitoring": r"uberwachung|monitoring|dashboard",
        "get_me": r"wer bin ich|mein arbeitsbereich|mein plan|mein schlussel|meine scopes",
    },
    video_reads={
        "get_claims": r"aussagen|behauptungen|fakten", "get_entities": r"entitat\w*",
        "get_intents": r"suchintention\w*|suchanfragen|fragen", "get_moments": r"momente|highlights",
        "get_topics": r"themen|thema", "get_narrative": r"narrativ\w*|struktur|kapitel",
        "get_visual_elements": (r"visuell\w*|einstellungen|szenen?|gesten|blick\w*|haltung|korpersprache|mimik|"
                                r"lacheln|hande|verhalten\w*"),
        "get_audio_elements": r"audio|stille|lautstarke",
    },
    help=r"hilfe|hallo|danke|was kannst du|befehle",
)


# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"zuerst|zunächst|dann|jetzt|nun|schließlich|zum\s+schluss|als\s+nächstes")

# how a question read out opens (domain.analysis.text.read_out_question)
_ASKING = r"(?:warum|wieso|weshalb|wie|was|wann|wo|welche[rsnm]?|wer)\b"


LANGUAGE = Language(
    code="de",
    markers=frozenset({
        "der", "die", "das", "den", "dem", "mein", "meine", "meinen", "meiner", "zeig", "zeige", "zeigen",
        "exportiere", "ubersetze", "analysiere", "storniere", "abbrechen", "hallo", "danke", "bitte", "und", "mit",
        "von", "ist", "wie", "viele", "auf", "ins", "nach", "dann", "danach", "ich", "habe", "wer", "bin", "ein",
        "eine", "letzten", "mir", "gib", "artikel", "auftrage", "guthaben", "warnungen", "kapiteln", "was", "kannst",
        "hilfe", "bis",
    }),
    letters="äöüß",
    name="German",
    locale="de_DE",
    stemmer="german",
    called=r"german|allemand|deutsch",
    spoken_fillers=(
        "äh ähm öhm hm mhm ja jo naja halt eben genau okay ok also quasi sozusagen irgendwie eigentlich "
        "hallo willkommen danke tschüss "
        "wirklich einfach mal"
    ),
    hesitations="äh ähm öh öhm hm hmm",
    leading_fillers="äh ähm also und naja gut okay ok ja aber",
    comma_openers="schließlich dann zuerst erstens zweitens jetzt nun also auch zuletzt",
    leading_words="also okay ok und aber gut so ähm naja",
    cue_phrases=(
        r"jetzt|nun|als\s+nächstes|kommen\s+wir|lass(?:t)?\s+uns|sprechen\s+wir|reden\s+wir|zunächst|erstens|"
        r"zweitens|drittens|schließlich|zum\s+schluss|abschließend|zusammenfassend|ein\s+(?:anderes|weiteres)\s+"
        r"(?:thema|beispiel)|weiter\s+geht|(?:das|der|die)\s+nächste|was\s+(?:ist|sind|passiert)|wie\s+"
        r"(?:funktioniert|kann)|warum"
    ),
    announce_phrases=(
        _OPENERS + r"(?:sprechen|reden)\s+wir\s+(?:jetzt\s+|nun\s+)?über(?:\s+(?:den|die|das))?|"
        + _OPENERS + r"kommen\s+wir\s+(?:jetzt\s+|nun\s+)?(?:zum|zur|zu(?:\s+den)?)"
    ),
    instruction_phrases=(
        r"(?:(?:zuerst|dann|danach|jetzt|schließlich|zunächst)[,\s]+)?"
        r"(?:klicken|öffnen|installieren|laden|starten|geben|wählen|drücken|fügen|löschen|kopieren|speichern|"
        r"schließen|verbinden|messen|prüfen|gehen)\s+sie\b|(?:stellen\s+sie\s+sicher|vergessen\s+sie\s+nicht|"
        r"beginnen\s+sie\s+mit)\b|"
        r".*?\b(?:schritt\s+(?:\d+|eins|zwei|drei|vier|fünf)|(?:der\s+)?(?:erste|nächste|letzte)n?\s+schritt)\b"
    ),
    step_openers=r"zuerst|zunächst|als\s+erstes|erstens|beginnen\s+sie\s+mit",
    video_subject_phrases=(
        r"\b(?:diese[mnrs]?|unsere[mnrs]?)\s+(?:kurzen?\s+)?(?:Video|Folge|Episode|Vortrag|Podcast|Präsentation|"
        r"Einführung|Anleitung)\s+(?:über|zum\s+Thema|in)\s+(?:den\s+|die\s+|das\s+)?"
    ),
    conclusion_phrases=r"zusammenfassend|abschließend|zum\s+schluss|alles\s+in\s+allem|fazit",
    sponsor_phrases=r"\bsponsor(?:ed|s)?\b|\bpräsentiert\s+von\b|\bgutscheincode\b|\brabattcode\b",
    definition_phrases=(
        r"\b(?:ist|sind|war|waren)\s+(?:ein|eine|einer|eines|der|die|das)\b|\bbedeutet\b|\bheißt\b|\bnennt\s+man\b|"
        r"\bnennen\s+wir\b|\bbezeichnet\b|\bbesteht\s+aus\b|\bsteht\s+für\b|\bist\s+definiert\b|\bversteht\s+man\b"
    ),
    cause_phrases=(
        r"\bweil\b|\bdeshalb\b|\bdaher\b|\bdeswegen\b|\bdarum\b|\bführ(?:t|en)\s+zu\b|\bverursach|\bwegen\b|"
        r"\bdank\b|\bermöglich|\bso\s*dass\b|\bfolglich\b|\baufgrund\b|\bda\s+(?:er|sie|es|wir|man)\b"
    ),
    comparison_phrases=(
        r"\bmehr\s+als\b|\bweniger\s+als\b|\bam\s+(?:meisten|größten|höchsten|niedrigsten|kleinsten)\b|"
        r"\b(?:der|die|das)\s+erste\b|\b(?:doppelt|zweimal|dreimal)\b|\bmal\s+(?:mehr|weniger|schneller|größer)\b|"
        r"\bMillionen?\b|\bMilliarden?\b|\bdie\s+meisten\b|\bfür\s+jede[nrs]?\b"
    ),
    hedge_phrases=(
        r"\bich\s+denke\b|\bich\s+glaube\b|\bvielleicht\b|\bwahrscheinlich\b|\bmeiner\s+Meinung\s+nach\b|"
        r"\bich\s+finde\b|\bich\s+vermute\b|\birgendwie\b|\bsozusagen\b"
    ),
    social_phrases=(
        r"\bhallo\b|\bwillkommen\b|\bdanke\b|\bvielen\s+dank\b|\babonnier|\bbis\s+(?:bald|zum\s+nächsten\s+mal)\b|"
        r"\btschüss\b|\bauf\s+wiedersehen\b"
    ),
    connective_openers="und aber also oder dann auch denn weil außerdem sonst trotzdem deshalb",
    anaphora_openers="dies es er sie",
    hook_openers=(
        "warum|wieso|was wäre,? wenn|wusstest du|wussten sie|stell dir vor|"
        "stellen sie sich vor|hier ist|das geheimnis|die wahrheit|achtung|stopp"
    ),
    attribution_phrases="laut|zufolge|sagte|erklärte|behauptet",
    speech_markers=r"\bweißt du\b|\bsag ich mal\b|\boder so\b",
    question_leads="die (?:eigentliche |große |erste )?frage(?: für euch| für sie)?(?:,[^,?]{1,30},)? (?:ist|lautet)",
    # a question reported after a verb is a clause ("fragt, wie man das macht"): read out only after a colon
    read_questions=(rf"\b(?:fragt|schreibt|will wissen|möchte wissen):\s+(?={_ASKING})"
                    rf"|\bfragen? (?:ist |kommt )?von [^,.?!:]{{1,40}}[,:]\s*(?={_ASKING})"
                    r"|\bfrage kommt von [^,.?!:]{1,40}[.!]?\s*$"),
    tag_questions="oder|nicht wahr|ne|gell|weißt du|verstehst du|okay|ok",
    process_words="wie (?:man|funktioniert|geht)|schritte?|prozess|verfahren|methode|funktioniert",
    month_names="januar februar märz maerz april mai juni juli august september oktober november dezember",
    unit_words=(
        r"prozent|euro|dollar|pfund|milliarden?|millionen|million|tausend|kilometer|meter|kilo(?:gramm)?|"
        r"tonnen?|grad|watt|stunden?|minuten?|sekunden?|jahren?|jahre|tagen?|tage|monaten?|monate|wochen?|"
        r"mal|einwohner|menschen|personen|mitarbeiter|nutzer"
    ),
    question_openers=("warum", "wieso", "weshalb"),
    conjunction="und",
    scales={"tausend": 3, "million": 6, "millionen": 6, "milliarde": 9, "milliarden": 9},
    vague_amounts=(r"mehrere|einige|ein paar|viele", r"hundert|tausend", r"hunderte|tausende"),
    compound_letters=10,
    vague_heads="art menge reihe paar haufen bisschen teil mal bezug hinblick",
    judgement_words=("gut gute guter gutes guten toll tolle toller super großartig großartige riesig riesige "
                     "seltsam seltsame komisch komische verrückt verrückte interessant interessante schön schöne "
                     "witzig schrecklich fantastisch unglaublich unglaubliche cool kompliziert komplizierte "
                     "glücklich enttäuschend"),
    connectors="der die das des von vom zum zur und für mit im",
    pronouns=(
        "ich mich mir du dich dir er sie es wir uns ihr euch ihm ihn ihnen dies diese dieser dieses das "
        "mein meine dein deine sein seine unser unsere euer eure etwas nichts jemand"
    ),
    article_pronouns="das die",
    dangling="und oder aber der die das ein eine des von vom zu zum zur in im für mit",
    verb_signals="ich du er wir ihr man zu",
    articles_of_nouns="der die das den dem des ein eine einen einem einer eines kein keine keinen keinem keiner",
    noun_rule=-1,
    plural_endings=("e", "en", "n", "s", "er"),
    plural_templates={"what": "was sind {t}", "how": "wie funktionieren {t}"},
    query_indefinite={"ein": "ein", "eine": "eine", "einen": "ein", "einem": "ein", "einer": "eine", "eines": "ein"},
    query_plural_endings=("en", "n"),
    labels={
        "introduction": "Einleitung", "key_facts": "Das Wichtigste", "faq": "Häufige Fragen", "conclusion": "Fazit",
        "step": "Schritt", "in_short": "Kurz gesagt", "analysis": "Analyse", "figures": "Zahlen und Fakten",
        "timeline": "Chronologie", "and": "und", "what": "was ist {t}", "how": "wie funktioniert {t}",
        "why": "was macht {t} wichtig", "how_to": "wie {t}", "who": "wer ist {t}", "hook": "Einstieg",
        "context": "Kontext", "development": "Hauptteil", "conclusion_part": "Schluss", "chapters": "Kapitel",
        "source": "Quelle", "watch": "Ansehen ab", "question": "F", "answer": "A",
        "also_answered": "Weitere beantwortete Fragen", "main_entities": "Wichtigste Namen und Begriffe",
    },
    colon=": ",
    question_mark="?",
    requests=REQUESTS,
    assistant=ASSISTANT,
)
