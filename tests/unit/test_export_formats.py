"""The export formats are declared once, in ``domain.exports.EXPORT_FORMATS``: this walks the
registry through every place that serves, validates, records or names a format, and fails when a
format declared there is missing in one of them, or when a module spells the formats out again in
a list of its own (a second list is how a new format came to answer 400 until it was edited too)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from uuid import uuid4

import pytest

from domain.agent.grammar import export_format_in
from domain.agent.planner import DEFAULT_EXPORT_FORMAT
from domain.agent.policy import fold
from domain.articles import ArticleExport
from domain.base import DomainError
from domain.exports import EXPORT_FORMATS, FORMATS, export_format, render
from services.api.article_exports import requested_format
from services.api.articles import ROUTES
from services.api.base import ApiError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_is_served_recorded_and_nameable(name: str, source) -> None:
    fmt = export_format(name)
    assert fmt.name == name and render(name, source)
    assert re.fullmatch(r"[a-z]+/[a-z0-9.+-]+(; charset=utf-8)?", fmt.content_type)
    assert re.fullmatch(r"[a-z0-9]+", fmt.extension)
    assert requested_format(name) is fmt  # the API's path validation
    recorded = ArticleExport.record(article_id=1, workspace_id=uuid4(), environment="production",
                                    export_format=name, content_type=fmt.content_type, etag='"e"', size=1,
                                    path=f"/v1/articles/1/export/{name}")
    assert recorded.format == name  # the ExportReady event accepts it
    assert fmt.assistant_words
    for words in fmt.assistant_words:  # each of its words names it to the assistant, and no other format
        assert export_format_in(fold(f"export article 5 as {words}")) == name, words


def test_an_unknown_format_is_refused_everywhere() -> None:
    with pytest.raises(ApiError) as refused:
        requested_format("pdf")
    assert refused.value.status == 400
    with pytest.raises(ValueError):
        export_format("pdf")
    with pytest.raises(DomainError):
        ArticleExport.record(article_id=1, workspace_id=uuid4(), environment="production", export_format="pdf",
                             content_type="application/pdf", etag='"e"', size=1, path="/v1/x")


def test_the_assistant_has_one_default_and_the_route_names_every_format() -> None:
    assert [f.name for f in EXPORT_FORMATS.values() if f.assistant_default] == [DEFAULT_EXPORT_FORMAT]
    route = next(r for r in ROUTES if r.path == "/articles/{id}/export/{format}")
    assert all(name in route.summary for name in FORMATS)


def _spelled_out_lists(path: Path) -> list[int]:
    """Lines of ``path`` where a literal tuple, list, set or dict holds three or more format names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) or not items:
            continue
        names = {i.value for i in items if isinstance(i, ast.Constant) and i.value in EXPORT_FORMATS}
        if len(names) >= 3:
            found.append(node.lineno)
    return found


def test_no_module_spells_the_formats_out_again() -> None:
    """Application code and benchmarks take the formats from the registry (tests may enumerate
    what they expect)."""
    places = [p for folder in ("domain", "infra", "projections", "services", "tests/benchmarks")
              for p in (ROOT / folder).rglob("*.py") if p != ROOT / "domain/exports.py"]
    assert len(places) > 50
    repeated = {str(p.relative_to(ROOT)): lines for p in places if (lines := _spelled_out_lists(p))}
    assert repeated == {}
