"""Every language the service supports is one module of ``domain.languages`` declaring one value:
these tests walk the registry and fail on a language with a field left empty, a table with other
keys than English's, or two places that print a section under different labels."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Mapping

import pytest

import domain.languages as registry
from domain.analysis.text import labels as article_labels
from domain.export_source import labels as export_labels
from domain.languages import CODES, ENGLISH, LANGUAGES, TAG_PATTERN, supported
from domain.languages.base import MAY_BE_EMPTY, OPTIONAL, Language
from domain.revival_completion import _labels as revival_labels

FIELDS = [f.name for f in dataclasses.fields(Language)]
# Tables keyed by the service's own names (labels), not by the language's words: every language
# has the same keys as English, so that no label is missing in one of them.
KEYED = ("labels",)


def test_the_service_supports_seven_languages_one_module_each():
    modules = {m.name for m in pkgutil.iter_modules(registry.__path__) if m.name != "base"}
    assert modules == set(CODES) == {"en", "fr", "de", "es", "it", "pt", "nl"}
    for code in CODES:
        assert importlib.import_module(f"domain.languages.{code}").LANGUAGE is LANGUAGES[code]


@pytest.mark.parametrize("code", CODES)
def test_every_language_has_every_field_filled(code):
    lang = LANGUAGES[code]
    assert lang.code == code
    empty = [f for f in FIELDS if f not in OPTIONAL and f not in MAY_BE_EMPTY
             and (getattr(lang, f) is None or getattr(lang, f) == "" or
                  (isinstance(getattr(lang, f), Mapping | tuple) and not getattr(lang, f)))]
    assert empty == []


@pytest.mark.parametrize("code", CODES)
def test_every_language_has_the_same_labels_as_english(code):
    for field in KEYED:
        assert set(getattr(LANGUAGES[code], field)) == set(getattr(ENGLISH, field)), field
        assert all(isinstance(v, str) and v for v in getattr(LANGUAGES[code], field).values()), field


def test_optional_fields_are_named_with_a_reason():
    assert set(OPTIONAL) <= set(FIELDS) and set(MAY_BE_EMPTY) <= set(FIELDS)
    assert all(MAY_BE_EMPTY.values())


@pytest.mark.parametrize("code", CODES)
def test_the_article_its_export_and_a_description_print_a_section_under_one_label(code):
    article, export, description = article_labels(code), export_labels(code), revival_labels(code)
    for key in ("introduction", "key_facts", "faq", "conclusion"):
        assert article[key] == export[key], (code, key)
    assert description["key_facts"] == article["key_facts"] and description["in_short"] == article["in_short"]


@pytest.mark.parametrize("code", CODES)
def test_a_revived_description_has_its_own_labels_in_every_language(code):
    description = revival_labels(code)
    assert description["answers"] and description["entities"]
    if code != "en":
        assert description["answers"] != revival_labels("en")["answers"], code


def test_the_german_key_facts_read_as_in_the_article():
    """The export printed "Kernaussagen" where the article printed "Das Wichtigste": one table now,
    the article's (what a reader sees first)."""
    assert export_labels("de")["key_facts"] == "Das Wichtigste" == article_labels("de")["key_facts"]


@pytest.mark.parametrize(("tag", "code"), [("en", "en"), ("EN", "en"), ("en-US", "en"), ("en-Latn-GB", "en"),
                                           ("Fr-CA", "fr"), ("de-CH-1996", "de"), ("pt-BR", "pt")])
def test_a_tag_of_a_supported_language_names_its_code(tag, code):
    assert supported(tag) == code
    assert re.fullmatch(TAG_PATTERN, tag)  # the published pattern says the same


@pytest.mark.parametrize("tag", ["xx", "zh", "zh-Hans", "ja", "eng", "fra", "e", "en-", "en_US", "en US", "-en",
                                 "en-toolongsubtag", "", "é"])
def test_any_other_tag_is_refused(tag):
    assert supported(tag) is None
    assert not re.fullmatch(TAG_PATTERN, tag)
