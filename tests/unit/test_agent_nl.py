"""The assistant in Dutch: the planner reads a Dutch message as it reads an English or a French one,
the reply to a Dutch message is Dutch from its first word to its last (no English frame word), and
a change is asked for with Dutch words (``AssistantWords.asks``) and never by a message that only
reads."""

from __future__ import annotations

import re

import pytest

from domain.agent.planner import Context, Note, plan
from domain.agent.policy import asked_reads, asked_writes
from domain.agent.reply import ActionView, compose, describe
from domain.languages import ASSISTANT_LANGUAGES, LANGUAGES

JOB = "0f8fad5b-d9cb-469f-a165-70867728950e"


def steps(message: str) -> list[tuple[str, dict]]:
    return [(a.name, a.arguments) for a in plan(message).actions]


DUTCH = [
    ("wat is mijn tegoed?", [("get_credits", {})]),
    ("de video's 3, 4 en 7", [("get_video", {"id": 3}), ("get_video", {"id": 4}), ("get_video", {"id": 7})]),
    ("de artikelen 2 tot en met 4", [("get_article", {"id": 2}), ("get_article", {"id": 3}),
                                     ("get_article", {"id": 4})]),
    ("de laatste 5 taken", [("list_jobs", {"limit": 5})]),
    ("mijn 5 laatste video's", [("list_videos", {"limit": 5})]),
    ("analyseer video 12 met hoofdstukken, journalistieke stijl, in hoge kwaliteit",
     [("analyze_video", {"id": 12, "outputs": {"chapters": True}, "writing_style": "journalistic",
                         "quality_profile": "premium"})]),
    ("analyseer video 3 zonder artikel, in het Engels",
     [("analyze_video", {"id": 3, "outputs": {"article": False}, "language": "en"})]),
    ("exporteer de artikelen 5 tot 7 als json", [("export_article", {"id": i, "format": "json"}) for i in (5, 6, 7)]),
    ("vertaal artikel 5 naar het Duits", [("translate_article", {"id": 5, "target_language": "de"})]),
    (f"breek taak {JOB} af", [("cancel_job", {"id": JOB})]),
    ("knip video 3 van 0:10 tot 0:40 als webm",
     [("create_video_clip", {"id": 3, "start_ms": 10_000, "end_ms": 40_000, "format": "webm"})]),
    ("knip video 3 tussen 10 s en 25 s", [("create_video_clip", {"id": 3, "start_ms": 10_000, "end_ms": 25_000})]),
    ("de onderwerpen en de entiteiten van video 3", [("get_topics", {"id": 3}), ("get_entities", {"id": 3})]),
    ("toon video 12 en toon de onderwerpen van video 3", [("get_video", {"id": 12}), ("get_topics", {"id": 3})]),
    ("mijn tegoed en dan analyseer video 3", [("get_credits", {}), ("analyze_video", {"id": 3})]),
    ("geef de scores van artikel 5 en daarna de graaf van artikel 5",
     [("get_article_scores", {"id": 5}), ("get_article_graph", {"id": 5})]),
    ("mijn saldo en mijn waarschuwingen", [("get_credits", {}), ("get_monitoring_alerts", {})]),
    ("mijn verbruik van het taalmodel", [("get_usage_llm", {})]),
    ("mijn verbruik", [("get_usage", {})]),
    ("wie ben ik", [("get_me", {})]),
    ("detecteer 5 clips in artikel 4 met sjabloon 2",
     [("detect_clips", {"article_id": 4, "template_id": 2, "requested_clip_count": 5})]),
    ("herlanceringskandidaten met een score van minstens 50", [("list_revival_candidates", {"min_score": 50})]),
    ("maak een nieuw medium genaamd “Podcasts 2025”", [("create_media", {"name": "Podcasts 2025"})]),
    ("hernoem artikel 5 naar “Fusie”", [("update_article", {"id": 5, "custom_name": "Fusie"})]),
]


@pytest.mark.parametrize(("message", "expected"), DUTCH, ids=[m for m, _ in DUTCH])
def test_the_planner_reads_a_dutch_request(message, expected):
    assert steps(message) == expected


def test_this_names_the_video_or_the_job_named_last():
    context = Context(video_id=12, job_id=JOB)
    assert [(a.name, a.arguments) for a in plan("toon deze video", context).actions] == [("get_video", {"id": 12})]
    assert [(a.name, a.arguments) for a in plan("hoe staat het met deze taak", context).actions] == [
        ("get_job", {"id": JOB})]


def test_a_dutch_request_for_descriptions_names_every_platform_in_dutch():
    actions = plan("vul de beschrijvingen van medium 7 aan voor alle platforms").actions
    assert [a.name for a in actions] == ["list_revival_candidates", "complete_descriptions"]
    assert len(actions[1].arguments["platforms"]) > 1 and actions[1].arguments["media_id"] == 7


# ------------------------------------------------------------------------------------ the reply

# Words of the English frame: none may appear in a Dutch reply.
ENGLISH = re.compile(r"\b(?:Done|Queued|I could not|I did not|read your|your|show video|of video|video \d+ has|"
                     r"tell me|which|active alerts?|no video|credits? charged|Your balance|I can|For example|"
                     r"actions? (?:were|was) not done|Stopped|No format)\b")


def dutch_reply(message: str, *views: ActionView, **extra) -> str:
    """The reply to ``message``, composed in the language the planner read in it: Dutch."""
    p = plan(message)
    assert p.language == "nl"
    reply = compose(p.language, list(views), notes=p.notes, not_understood=p.not_understood,
                    asked_help=p.asked_help, **extra)
    assert not ENGLISH.search(reply), reply
    return reply


def test_the_balance_is_told_in_dutch():
    balance = ActionView("get_credits", {}, "ok", {"balance": 9, "used": 1, "total": 10, "plan": "pro"}, None)
    assert dutch_reply("wat is mijn saldo?", balance) == "Je saldo is 9 credits (1 gebruikt van 10, abonnement pro)."


def test_a_video_read_is_told_in_dutch():
    result = {"id": 12, "name": "Warmtepompen", "status": "analyzed", "duration_seconds": 300, "article_id": 4,
              "link": "/v1/videos/12"}
    reply = dutch_reply("toon video 12", ActionView("get_video", {"id": 12}, "ok", result, None))
    assert reply == "Video 12 “Warmtepompen”: geanalyseerd, 300 s, artikel 4 (/v1/videos/12)."


def test_a_list_of_jobs_is_told_in_dutch_with_its_plural():
    job = {"id": "j1", "type": "analysis", "status": "running", "progress": 40}
    one = ActionView("list_jobs", {"limit": 5}, "ok", {"count": 1, "jobs": [job]}, None)
    two = ActionView("list_jobs", {"limit": 5}, "ok", {"count": 2, "jobs": [job, {**job, "id": "j2"}]}, None)
    none = ActionView("list_jobs", {"limit": 5}, "ok", {"count": 0, "jobs": []}, None)
    assert dutch_reply("de laatste 5 taken", one) == "1 taak: j1 analysis bezig 40 %."
    assert dutch_reply("de laatste 5 taken", two).startswith("2 taken: j1 analysis bezig 40 %; j2 ")
    assert dutch_reply("de laatste 5 taken", none) == "Je hebt geen taken."


def test_zero_is_plural_in_dutch():
    videos = ActionView("list_videos", {}, "ok", {"count": 0, "videos": []}, None)
    graph = ActionView("get_video_graph", {"id": 3}, "ok", {"claims": 0, "entities": 1, "searchIntents": 2,
                                                             "clipMoments": 0, "link": "/l"}, None)
    assert dutch_reply("toon mijn video's", videos) == "Je hebt nog geen video's."
    assert dutch_reply("de graaf van video 3", graph).startswith(
        "Contentgraaf van video 3: 0 beweringen, 1 entiteit, 2 zoekintenties, 0 clipmomenten")


def test_a_write_refused_for_a_missing_scope_is_told_in_dutch():
    refused = ActionView("analyze_video", {"id": 3}, "refused", None,
                         {"code": "insufficient_scope", "message": "m", "details": {"required": "analyses:create"}})
    assert dutch_reply("analyseer video 3", refused) == \
        "Video 3 analyseren kan ik niet: je sleutel mist de scope analyses:create."


def test_an_unknown_id_is_told_in_dutch():
    failed = ActionView("get_video", {"id": 99}, "failed", None, {"code": "not_found", "message": "video not found"})
    assert dutch_reply("toon video 99", failed) == "Video 99 tonen is niet gelukt: video not found."
    unresolved = ActionView("detect_clips", {}, "failed", None, {
        "code": "not_resolved", "message": "not done", "details": {"reason": "no_article", "video": 12}})
    assert dutch_reply("detecteer de clips in video 12", unresolved) == (
        "Clips detecteren is niet gelukt: video 12 heeft nog geen artikel (analyseer de video eerst).")


def test_the_help_text_is_dutch_and_its_examples_are_read():
    reply = dutch_reply("hallo, wat kun je doen?")
    assert reply.startswith("Ik kan: je saldo, verbruik en waarschuwingen opvragen;")
    examples = re.findall(r"“([^”]+)”", reply)
    assert len(examples) == 4
    assert all(plan(e).actions and plan(e).language == "nl" for e in examples if not e.startswith("video's"))
    assert steps(examples[2]) == [("get_video", {"id": 3}), ("get_video", {"id": 4}), ("get_video", {"id": 7})]


def test_a_note_about_a_default_or_a_missing_part_is_dutch():
    export = ActionView("export_article", {"id": 5, "format": "markdown"}, "ok", {"bytes": 1, "link": "/e"}, None)
    reply = dutch_reply("exporteer artikel 5", export)
    assert reply.splitlines() == [
        "Export van artikel 5 als markdown, 1 byte: /e.",
        "Er was geen formaat opgegeven: ik heb markdown gekozen (html, markdown, json, schema, opengraph en txt "
        "zijn mogelijk)."]
    assert dutch_reply("vertaal artikel 5") == "Om te vertalen heb ik de doeltaal nodig (en, de, es, it, pt of nl)."
    assert dutch_reply("knip video 3 als webm").startswith("Om een clip te knippen heb ik het tijdsinterval nodig")
    # the note's example is itself a time range the planner reads
    assert steps("knip video 3 van 0:10 tot 0:40") == [("create_video_clip",
                                                        {"id": 3, "start_ms": 10_000, "end_ms": 40_000})]


def test_a_missing_id_names_the_kind_with_its_dutch_gender():
    assert compose("nl", [], notes=[Note("missing_id", {"kind": "article", "action": "export_article"})]) == \
        "Artikel exporteren: welk artikel bedoel je? Geef het nummer."
    assert compose("nl", [], notes=[Note("missing_id", {"kind": "job", "action": "cancel_job"})]) == \
        "Taak annuleren: welke taak bedoel je? Geef het id."


def test_actions_left_undone_are_told_in_dutch():
    balance = ActionView("get_credits", {}, "ok", {"balance": 1, "used": 0, "total": 1, "plan": "free"}, None)
    assert dutch_reply("mijn saldo", balance, left=1, left_reason="cap", cap=15).splitlines()[-1] == (
        "Nog 1 gevraagde actie is niet uitgevoerd: per bericht voer ik hoogstens 15 acties uit. "
        "Vraag de rest opnieuw.")
    assert dutch_reply("mijn saldo", balance, left=3, left_reason="rate_limited", retry_after_s=12).splitlines()[-1] \
        == "3 gevraagde acties zijn niet uitgevoerd: de limiet van je werkruimte is bereikt; probeer het over 12 s " \
           "opnieuw."
    stopped = dutch_reply("mijn saldo", left=2, left_reason="stopped")
    assert stopped == "Gestopt: 2 gevraagde acties zijn niet uitgevoerd."


def test_a_queued_analysis_and_a_count_of_many_actions_are_dutch():
    queued = ActionView("analyze_video", {"id": 1}, "ok", {"job_id": "j", "credits_charged": 1, "link": "/j"}, None)
    views = [queued, *(ActionView("get_video", {"id": i}, "failed", None, {"code": "not_found", "message": "weg"})
                       for i in (2, 3, 4))]
    reply = dutch_reply("analyseer video 1 en toon de video's 2, 3 en 4", *views)
    assert reply.splitlines()[:2] == ["Ik heb 4 acties uitgevoerd: 1 gelukt, 3 niet.",
                                      "In de wachtrij: video 1 analyseren, taak j, 1 credit afgeschreven (/j)."]


def test_every_operation_is_described_in_dutch_without_a_placeholder():
    for name in ("get_me", "get_usage", "get_usage_llm", "get_monitoring", "get_monitoring_alerts", "list_videos",
                 "get_claims", "get_narrative", "get_job", "cancel_job", "list_articles", "get_article_scores",
                 "get_article_graph", "update_article", "list_medias", "create_media", "list_templates",
                 "detect_clips", "render_clips", "get_clip_job", "list_revival_candidates", "complete_descriptions",
                 "get_transcript", "update_video", "unknown_operation"):
        sentence = describe(ActionView(name, {"id": 1}, "ok", {"count": 2, "first": ["x"]}, None), "nl")
        assert sentence and "{" not in sentence and not ENGLISH.search(sentence), (name, sentence)


def test_the_assistant_speaks_dutch():
    assert "nl" in ASSISTANT_LANGUAGES and LANGUAGES["nl"].assistant is not None


# ------------------------------------------------------------------------------------ writes


WRITES = [
    ("analyseer video 12 met hoofdstukken", "analyze_video", {"id": 12, "outputs": {"chapters": True}}),
    (f"breek de taak {JOB} af", "cancel_job", {"id": JOB}),
    ("vertaal artikel 5 naar het Spaans", "translate_article", {"id": 5, "target_language": "es"}),
    ("herschrijf artikel 5 in een verhalende stijl", "regenerate_article", {"id": 5, "writing_style": "narrative"}),
]


@pytest.mark.parametrize(("message", "action", "arguments"), WRITES, ids=[m for m, _, _ in WRITES])
def test_a_write_is_asked_for_in_dutch(message, action, arguments):
    assert steps(message) == [(action, arguments)]
    assert asked_writes(message) >= {action}
    assert plan(message).language == "nl"


def test_an_export_is_planned_from_a_dutch_phrasing():
    assert steps("download artikel 5 als html en daarna de scores ervan") == [
        ("export_article", {"id": 5, "format": "html"}), ("get_article_scores", {"id": 5})]
    assert asked_writes("download artikel 5 als html") == frozenset()  # an export reads


@pytest.mark.parametrize(("message", "expected"), [
    ("toon video 12 en toon de onderwerpen van video 3", [("get_video", {"id": 12}), ("get_topics", {"id": 3})]),
    ("wat is de status van mijn taken", [("list_jobs", {})]),
    ("geef de scores van artikel 5 en mijn tegoed", [("get_article_scores", {"id": 5}), ("get_credits", {})]),
])
def test_a_dutch_message_that_only_reads_asks_for_no_write(message, expected):
    assert steps(message) == expected
    assert asked_writes(message) == frozenset()
    assert asked_reads([message])  # what it reads, it names in Dutch


def test_dutch_names_the_kinds_a_model_may_read():
    assert asked_reads(["wat is mijn tegoed", "en mijn taken", "de hoofdstukken van video 3"]) == {
        "credits", "jobs", "content"}
    assert asked_reads(["herlanceringskandidaten en sjablonen"]) >= {"revival", "templates"}
