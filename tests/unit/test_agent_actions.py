"""The assistant's actions are declared once (``domain.agent.actions``) and spoken in every language
the assistant speaks (``domain.languages``): these tests walk the registry against the route table,
the language homes and the summarisers, and fail on an action declared in one place and missing in
another."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from domain.agent import results
from domain.agent.actions import ACTIONS
from domain.agent.policy import KIND_WORDS, WRITE_WORDS, asked_writes
from domain.languages import ASSISTANT_LANGUAGES, CODES, ENGLISH, assistant_words
from services.api.assistant.actions import Catalog
from services.api.routes import ROUTES


def test_every_action_of_the_catalogue_is_declared_and_every_declaration_is_an_action():
    catalog = Catalog.of(ROUTES)
    assert set(catalog.actions) - set(ACTIONS) == set(), "actions of the route table without a declaration"
    assert set(ACTIONS) - set(catalog.actions) == set(), "declared actions the route table does not expose"


def test_a_declaration_writes_exactly_when_its_route_writes():
    catalog = Catalog.of(ROUTES)
    assert {n for n, a in ACTIONS.items() if a.writes != catalog.actions[n].writes} == set()
    assert all(a.kinds == () for a in ACTIONS.values() if a.writes)
    assert all(a.kinds for a in ACTIONS.values() if not a.writes)


def test_the_assistant_speaks_every_language_of_the_service():
    assert set(ASSISTANT_LANGUAGES) == set(CODES) and ASSISTANT_LANGUAGES[0] == "en"


@pytest.mark.parametrize("code", ASSISTANT_LANGUAGES)
def test_every_action_has_its_label_and_sentence_in_every_language_the_assistant_speaks(code):
    words = assistant_words(code)
    assert set(words.labels) == set(ACTIONS), "labels"
    assert set(words.found) == set(ACTIONS), "sentences about what an action found"
    assert all(callable(words.found[n]) for n in ACTIONS)


@pytest.mark.parametrize("code", ASSISTANT_LANGUAGES)
def test_every_write_has_the_words_that_ask_for_it_in_every_language(code):
    """A model may perform a write only when the person's message asks for it: a write without
    words in one language could never be asked for in that language."""
    words = assistant_words(code)
    writes = {n for n, a in ACTIONS.items() if a.writes}
    assert set(words.asks) == writes
    assert all(words.asks[n] for n in writes)


@pytest.mark.parametrize("code", ASSISTANT_LANGUAGES)
def test_every_kind_a_read_reads_is_named_by_words_of_every_language(code):
    kinds = {k for a in ACTIONS.values() for k in a.kinds}
    words = assistant_words(code)
    assert set(words.kind_words) == kinds and all(words.kind_words[k] for k in kinds)
    assert set(KIND_WORDS) == kinds


@pytest.mark.parametrize("code", ASSISTANT_LANGUAGES)
def test_the_reply_frame_has_the_same_keys_in_every_language(code):
    words, english = assistant_words(code), ENGLISH.assistant
    assert words.help and words.quotes[0] and words.quotes[1]
    for field in ("statuses", "notes", "unresolved", "left_undone"):
        assert set(getattr(words, field)) == set(getattr(english, field)), field


def test_a_message_asks_for_a_write_in_either_language():
    assert WRITE_WORDS["cancel_job"] and asked_writes("annule le job") == {"cancel_job"}
    assert asked_writes("cancel job 3") == {"cancel_job"}


def _summarisers() -> set[str]:
    """The summarisers ``domain.agent.results`` defines: functions of (arguments, answer), and the
    factories that make one."""
    found = set()
    for name, fn in inspect.getmembers(results, inspect.isfunction):
        if fn.__module__ != results.__name__ or name.startswith("_"):
            continue
        params = list(inspect.signature(fn).parameters)
        if params == ["arguments", "answer"] or inspect.signature(fn).return_annotation == "Summariser":
            found.add(name)
    return found


def test_every_summariser_belongs_to_a_declared_action():
    used = {a.summarise.__qualname__.split(".")[0] for a in ACTIONS.values()}
    defined = _summarisers()
    assert defined and used <= defined
    assert defined - used == set(), "summarisers no declared action uses"


def test_the_assistant_does_not_import_the_route_table():
    """The catalogue is handed the route table (the app builds it): the route table holds the
    assistant's own routes, and importing it from the assistant made an import circle."""
    code = ("import sys, services.api.assistant.turn, services.api.assistant.actions; "
            "print(sorted(m for m in ('services.api.routes', 'services.api.agent') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
