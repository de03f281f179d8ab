"""The assistant speaks German (``domain.languages.de``, ``ASSISTANT``): a message in German is
planned, and the offline reply to it (``domain.agent.reply``) is German from its first word to its
last, with no English frame sentence left; and a German message asks for a write (the policy's
``asks`` words) exactly when it names one."""

from __future__ import annotations

import re

import pytest

from domain.agent.planner import plan
from domain.agent.policy import asked_writes
from domain.agent.reply import ActionView, compose
from domain.languages import ASSISTANT_LANGUAGES, assistant_words

JOB = "0f8fad5b-d9cb-469f-a165-70867728950e"

# Words of the English reply's frame: none may be left in a German reply.
ENGLISH_FRAME = ("Done", "I could not", "I did not", "Queued", "Your ", "your ", "read ", "balance", "tell me",
                 "No format", "were not done", " of video", "charged", "(and more)", "succeeded", "For example")


def reply(message: str, results: dict[str, dict] | None = None, errors: dict[str, dict] | None = None,
          **frame) -> str:
    """The offline reply to ``message``: each planned action answered ``results[name]`` (ok), or
    ``errors[name]`` (failed; refused for a missing scope)."""
    p = plan(message)
    assert p.language == "de", message
    views = []
    for a in p.actions:
        error = (errors or {}).get(a.name)
        if error is None:
            views.append(ActionView(a.name, a.arguments, "ok", (results or {}).get(a.name, {}), None))
        else:
            status = "refused" if error["code"] == "insufficient_scope" else "failed"
            views.append(ActionView(a.name, a.arguments, status, None, error))
    text = compose(p.language, views, notes=p.notes, not_understood=p.not_understood, asked_help=p.asked_help,
                   **frame)
    leaked = [w for w in ENGLISH_FRAME if w in text]
    assert not leaked, (leaked, text)
    assert text != compose("en", views, notes=p.notes, not_understood=p.not_understood, asked_help=p.asked_help,
                           **frame)
    return text


def test_the_assistant_speaks_german():
    assert "de" in ASSISTANT_LANGUAGES


def test_the_balance_is_told_in_german():
    text = reply("wie hoch ist mein Guthaben?",
                 {"get_credits": {"balance": 120, "used": 30, "total": 150, "plan": "pro"}})
    assert text == "Ihr Guthaben beträgt 120 Credits (30 von 150 verbraucht, Tarif pro)."


def test_a_read_of_a_video_counts_in_german_singular_and_plural():
    many = reply("die Aussagen von Video 3", {"get_claims": {"count": 2, "first": ["Fusion ist sauber", "ITER"],
                                                             "link": "/v1/videos/3/claims"}})
    assert many == "Video 3: 2 Aussagen (/v1/videos/3/claims). Die ersten: „Fusion ist sauber“; „ITER“."
    one = reply("die Themen von Video 3", {"get_topics": {"count": 1, "first": [], "link": "/v1/videos/3/topics"}})
    assert one == "Video 3: 1 Thema (/v1/videos/3/topics)."


def test_a_list_of_jobs_names_their_statuses_in_german():
    jobs = [{"id": "j1", "type": "analysis", "status": "running", "progress": 40},
            {"id": "j2", "type": "clips", "status": "failed", "progress": 100}]
    text = reply("meine letzten 5 Aufträge", {"list_jobs": {"count": 2, "jobs": jobs}})
    assert text == "2 Aufträge: j1 analysis läuft 40 %; j2 clips fehlgeschlagen 100 %."
    assert reply("meine letzten 5 Aufträge", {"list_jobs": {"count": 0, "jobs": []}}) == "Sie haben keine Aufträge."


def test_zero_is_plural_in_german():
    assert reply("zeige meine Medien", {"list_medias": {"count": 0, "medias": []}}) == "0 Medien."
    assert reply("zeige meine Medien", {"list_medias": {"count": 1, "medias": [{"id": 4, "name": "Kanal"}]}}) == (
        "1 Medium: #4 „Kanal“.")


def test_a_write_refused_for_a_missing_scope_is_told_in_german():
    scope = {"code": "insufficient_scope", "message": "forbidden", "details": {"required": "videos:write"}}
    text = reply("analysiere das Video 12", errors={"analyze_video": scope})
    assert text == "Ich konnte Video 12 nicht analysieren: Ihrem Schlüssel fehlt der Scope videos:write."


def test_an_unknown_id_is_told_in_german():
    missing = {"code": "not_found", "message": "video not found"}
    assert reply("zeige das Video 999", errors={"get_video": missing}) == (
        "Ich konnte Video 999 nicht anzeigen: video not found.")


def test_an_argument_not_found_in_earlier_answers_is_told_in_german():
    unresolved = {"code": "not_resolved", "message": "x", "details": {"reason": "no_article", "video": 3}}
    assert reply("zeige das Video 3", errors={"get_video": unresolved}) == (
        "Ich konnte Video 3 nicht anzeigen: Video 3 hat noch keinen Artikel (analysieren Sie es zuerst).")


def test_the_help_text_is_german():
    for message in ("hallo", "was kannst du?"):
        text = reply(message)
        assert text.startswith("Ich kann: Ihr Guthaben") and "„analysiere das Video 12 mit Kapiteln“" in text


def test_the_examples_of_the_help_text_are_german_and_read_as_they_say():
    examples = re.findall(r"„(.*?)“", assistant_words("de").help)
    assert len(examples) == 4
    plans = [plan(e) for e in examples]
    assert [p.language for p in plans] == ["de"] * 4
    assert [[(a.name, a.arguments.get("id")) for a in p.actions] for p in plans] == [
        [("analyze_video", 12)], [("export_article", 5)], [("get_video", 3), ("get_video", 4), ("get_video", 7)],
        [("get_credits", None), ("get_monitoring_alerts", None)]]


def test_a_default_the_plan_chose_is_noted_in_german():
    text = reply("exportiere den Artikel 5", {"export_article": {"bytes": 2048, "link": "/v1/articles/5/export"}})
    assert text.splitlines() == [
        "Export von Artikel 5 als markdown, 2048 Bytes: /v1/articles/5/export.",
        "Es wurde kein Format genannt: Ich habe markdown gewählt (es gibt html, markdown, json, schema, opengraph "
        "und txt).",
    ]


def test_a_missing_id_is_asked_for_in_german_in_the_accusative():
    assert reply("storniere den Auftrag") == "Welchen Auftrag meinen Sie? Für „Auftrag abbrechen“ brauche ich seine ID."
    assert reply("analysiere das Video") == "Welches Video meinen Sie? Für „Video analysieren“ brauche ich seine ID."


def test_actions_left_undone_are_told_in_german_in_their_number():
    assert reply("hallo", left=3, left_reason="cap").splitlines()[0] == (
        "3 weitere angeforderte Aktionen wurden nicht ausgeführt: Pro Nachricht laufen höchstens 15 Aktionen. "
        "Fragen Sie für den Rest bitte erneut.")
    assert reply("mein Guthaben", {"get_credits": {}}, left=1, left_reason="rate_limited", retry_after_s=30).endswith(
        "1 angeforderte Aktion wurde nicht ausgeführt: Das Anfragelimit Ihres Arbeitsbereichs ist erreicht; "
        "versuchen Sie es in 30 s erneut.")
    assert reply("mein Guthaben", {"get_credits": {}}, left=2, left_reason="stopped").endswith(
        "Abgebrochen: 2 angeforderte Aktionen wurden nicht ausgeführt.")


def test_many_actions_are_counted_in_german():
    text = reply("die Videos 3 bis 6", {"get_video": {"id": 3, "name": "Fusion", "status": "analyzed",
                                                      "duration_seconds": 61, "link": "/v1/videos/3"}})
    assert text.splitlines()[0] == "Ich habe 4 Aktionen ausgeführt: 4 erfolgreich, 0 nicht."
    assert text.splitlines()[1] == "Video 3 „Fusion“: analysiert, 61 s (/v1/videos/3)."


QUEUED = {"job_id": "j9", "credits_charged": 1, "link": "/v1/jobs/j9"}
CANCELLED = {"id": JOB, "type": "analysis", "status": "cancelled", "progress": 10, "step": "transcribe",
             "link": "/v1/j"}


@pytest.mark.parametrize(("message", "name", "result", "expected"), [
    ("analysiere das Video 12 mit Kapiteln", "analyze_video", QUEUED,
     "Gestartet: Video 12 analysieren, Auftrag j9, 1 Credit abgebucht (/v1/jobs/j9)."),
    ("exportiere den Artikel 5 als HTML", "export_article", {"link": "/v1/articles/5/export"},
     "Export von Artikel 5 als html: /v1/articles/5/export."),
    (f"storniere den Auftrag {JOB}", "cancel_job",
     CANCELLED, f"Auftrag {JOB} (analysis): abgebrochen, 10 %, transcribe (/v1/j)."),
    (f"brich den Auftrag {JOB} ab", "cancel_job",
     CANCELLED, f"Auftrag {JOB} (analysis): abgebrochen, 10 %, transcribe (/v1/j)."),
    ("übersetze den Artikel 5 ins Spanische", "translate_article", {**QUEUED, "credits_charged": 2},
     "Gestartet: Artikel 5 übersetzen, Auftrag j9, 2 Credits abgebucht (/v1/jobs/j9)."),
])
def test_a_change_asked_in_german_is_planned_allowed_and_answered_in_german(message, name, result, expected):
    assert [a.name for a in plan(message).actions] == [name]
    writes = asked_writes(message)
    assert writes == ({name} if name != "export_article" else set())  # an export reads
    assert reply(message, {name: result}) == expected


@pytest.mark.parametrize(("message", "writes"), [
    ("storniere den Auftrag 3", {"cancel_job"}),
    ("brich den Auftrag ab", {"cancel_job"}),
    ("übersetze den Artikel 5", {"translate_article"}),
    ("starte die Videoanalyse", {"analyze_video"}),
    ("benenne den Artikel 5 um", {"update_article"}),
    ("schneide einen Ausschnitt aus Video 3", {"create_video_clip"}),
    ("lege ein neues Medium an", {"create_media"}),
    ("erkenne Clips in Artikel 4", {"detect_clips"}),
    ("erzeuge die Clips", {"render_clips"}),
    ("vervollständige die Beschreibungen", {"complete_descriptions"}),
    ("ändere den Titel von Video 3", {"update_video"}),
    ("schreibe den Artikel 5 neu", {"regenerate_article"}),
    ("verwirf den Reaktivierungskandidaten 4", {"update_revival_candidate"}),
])
def test_a_german_message_asks_for_the_writes_its_words_name(message, writes):
    assert asked_writes(message) == writes


@pytest.mark.parametrize(("message", "results"), [
    ("zeige meine neuesten Videos", {"list_videos": {"count": 1, "videos": [{"id": 3, "name": "A", "status": "queued"}],
                                                     "has_more": True}}),
    ("die Suchintentionen von Video 3", {"get_intents": {"count": 0, "link": "/v1/videos/3/intents"}}),
    ("zeige die Übersetzungen von Artikel 5", {}),
    ("zeige die anderen Aufträge", {"list_jobs": {"count": 0}}),
    ("die Themen und die Entitäten des Videos 3", {}),
    ("wie hoch ist mein Guthaben?", {"get_credits": {"balance": 1}}),
])
def test_a_read_only_german_message_plans_and_allows_no_change_and_is_answered_in_german(message, results):
    actions = plan(message).actions
    assert actions and not {a.name for a in actions} & {"analyze_video", "export_article", "cancel_job",
                                                        "translate_article"}
    assert asked_writes(message) == frozenset()
    assert reply(message, results)
