"""docs/events.md is generated: it must equal what the code renders, and cover every published event."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from domain.base import PUBLISHED
from infra import eventdocs
from infra.codec import ENVELOPE_FIELDS, ENVELOPE_SCHEMA, EventRegistry

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"


@pytest.fixture(scope="module")
def rendered() -> str:
    return eventdocs.render()


def sections(text: str) -> dict[str, str]:
    """``### Name`` heading -> the section's text, up to the next heading."""
    parts = re.split(r"^### (\w+)\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def json_blocks(text: str) -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, flags=re.DOTALL)]


def test_committed_catalogue_is_what_the_code_renders(rendered: str) -> None:
    assert DOC.read_text(encoding="utf-8") == rendered, (
        "docs/events.md is out of date: run `python -m infra.eventdocs --write` (and `python -m infra.asyncapi "
        "--write` for docs/asyncapi.json)")


def test_render_is_deterministic(rendered: str) -> None:
    assert eventdocs.render() == rendered


def test_intro_states_the_kafka_contract(rendered: str) -> None:
    intro = rendered.split("## Events", 1)[0]
    prose = " ".join(intro.split())

    for phrase in ("`vaeo.events.v1`", "workspace id", "`type`", "`position`", "at least once",
                   "deduplicates by `position` per partition", "upcast when read, never rewritten"):
        assert phrase in prose, phrase
    assert json_blocks(intro) == [ENVELOPE_SCHEMA]


def test_every_published_event_has_a_section_with_its_schema(rendered: str) -> None:
    registry = EventRegistry()
    by_name = sections(rendered)

    assert sorted(by_name) == sorted(PUBLISHED) == registry.names()
    for name, (event_cls, schema_number, stream_type) in PUBLISHED.items():
        section = by_name[name]
        assert f"- stream type: `{stream_type}`\n" in section, name
        assert re.search(rf"^- schema: {schema_number}( \(earlier schemas, still in the topic: .*\))?$", section,
                         flags=re.MULTILINE), name
        assert re.search(r"^- purpose: \S", section, flags=re.MULTILINE), name
        schema, *earlier = json_blocks(section)
        assert schema == registry.json_schema(name)
        assert earlier == [registry.json_schema(name, k) for k in range(schema_number - 1, 0, -1)], name
        data_fields = {f.name for f in fields(event_cls)} - ENVELOPE_FIELDS
        assert data_fields, name
        assert set(schema["properties"]) == data_fields, name
        assert set(schema["required"]) == data_fields, name


def test_event_index_lists_every_event_in_order(rendered: str) -> None:
    index = re.findall(r"^\| \[`(\w+)`\]\(#(\w+)\) \| `(\w+)` \| (\d+) \| (.*) \|$", rendered, flags=re.MULTILINE)

    assert [row[0] for row in index] == sorted(PUBLISHED)
    for name, anchor, stream_type, schema_number, earlier in index:
        assert anchor == name.lower()
        assert (stream_type, int(schema_number)) == (PUBLISHED[name][2], PUBLISHED[name][1])
        assert re.findall(r"\[(\d+)\]\(#([\w-]+)\)", earlier) == [
            (str(k), eventdocs.schema_anchor(name, k)) for k in range(1, int(schema_number))]


def test_schemas_are_printed_with_sorted_keys(rendered: str) -> None:
    [block] = re.findall(r"^### JobQueued\n.*?```json\n(.*?)\n```", rendered, flags=re.MULTILINE | re.DOTALL)

    assert block == json.dumps(json.loads(block), indent=2, sort_keys=True, ensure_ascii=False)


def test_main_prints_the_catalogue(rendered: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert eventdocs.main([]) == 0

    assert capsys.readouterr().out == rendered


def test_main_write_writes_the_catalogue(rendered: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "docs" / "events.md"
    monkeypatch.setattr(eventdocs, "DOC_PATH", target)

    assert eventdocs.main(["--write"]) == 0

    assert target.read_text(encoding="utf-8") == rendered


# ---------------------------------------------------------------------- purposes and readers

# A purpose says why the event exists; these say only that it exists.
GENERIC = re.compile(r"^(data of\b|(this|the|an?) event\b|records?( that| the fact)?\b|recorded when\b|emitted when\b|"
                     r"raised when\b|published when\b|happens when\b)", re.IGNORECASE)
MIN_PURPOSE_WORDS = 10  # fewer cannot say both what happened and why anybody needs it on the log
CREDITS_WATCH_READS = frozenset({"CreditsCharged"})  # services/processes/credits_watch.py: the charges it folds


def why_generic(name: str, purpose: str) -> str | None:
    """Why ``purpose`` does not say why ``name`` exists, or None when it does."""
    words = purpose.split()
    spelled = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    if not words:
        return "no purpose: give the event class a docstring"
    if GENERIC.match(purpose):
        return f"generic purpose {purpose[:40]!r}: say why the event exists and what depends on it"
    if len(words) < MIN_PURPOSE_WORDS or purpose.lower().rstrip(".") == spelled:
        return f"purpose too thin ({len(words)} words): say why the event exists and what depends on it"
    return None


def test_the_generic_purpose_check_refuses_what_says_nothing():
    assert why_generic("JobQueued", "") is not None
    assert why_generic("JobQueued", "data of JobQueued (stream type Job), schema 1") is not None
    assert why_generic("JobQueued", "Records that a job was queued, with all of its parameters and its attempts.") \
        is not None
    assert why_generic("JobQueued", "Job queued.") is not None
    assert why_generic("JobQueued", eventdocs.purpose(PUBLISHED["JobQueued"][0])) is None


def test_every_event_says_why_it_exists(rendered: str):
    by_name = sections(rendered)
    refused = {}
    for name, (event_cls, _, _) in PUBLISHED.items():
        purpose = eventdocs.purpose(event_cls)
        if (why := why_generic(name, purpose)) is not None:
            refused[name] = why
        assert f"- purpose: {purpose}\n" in by_name[name], name
    assert not refused, "events whose docstring does not say why they exist:\n" + "\n".join(
        f"{name}: {why}" for name, why in sorted(refused.items()))


def test_every_event_names_who_reads_it_and_every_reader_in_the_code_is_named(rendered: str):
    from projections import ALL
    from services.processes.dispatcher import INTAKE_TYPES

    by_name = sections(rendered)
    missing = []
    for name, (event_cls, _, _) in PUBLISHED.items():
        readers = eventdocs.read_by(event_cls)
        assert readers, f"{name}: its docstring has no paragraph beginning {eventdocs.READ_BY!r}"
        assert f"- read by: {readers}\n" in by_name[name], name
        named = [f"`{p.name}`" for p in ALL.values() if p.source == "events" and name in p.handlers]
        named += ["dispatcher"] * (name in INTAKE_TYPES) + ["credits watch"] * (name in CREDITS_WATCH_READS)
        missing += [f"{name}: {reader}" for reader in named if reader not in readers]
    assert not missing, "readers of these events are not named in their 'Read by' paragraph:\n" + "\n".join(missing)
