"""The read side's rules (docs/architecture.md, "The read side"): the API's resource modules hold no
SQL and take no connection (their reads are the query modules beside the read models), every
query module sits beside a read model, and a missing row has one answer."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from services.api.errors import ApiError, found

ROOT = Path(__file__).resolve().parents[2]
API = sorted((ROOT / "services" / "api").rglob("*.py"))
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b", re.DOTALL)


def _strings(tree: ast.AST) -> list[str]:
    """The module's string literals but its docstrings; an f-string as its literal parts, joined."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    parts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append(" ".join(p.value for p in node.values if isinstance(p, ast.Constant)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in parts):
            out.append(node.value)
    return out


def test_the_sql_finder_finds_sql() -> None:
    """The rule below can fail: the statements it looks for are found, prose and routes are not."""
    tree = ast.parse('X = "SELECT id FROM videos WHERE id = $1"\nY = "UPDATE jobs SET status = $2"\n'
                     'Z = f"DELETE FROM t WHERE {w}"\nR = ("DELETE", "/keys/{id}")\nS = "GET /jobs, DELETE /jobs/{id}"')
    found_sql = sorted(text for text in _strings(tree) if SQL.search(text))
    assert found_sql == ["DELETE FROM t WHERE ", "SELECT id FROM videos WHERE id = $1", "UPDATE jobs SET status = $2"]


@pytest.mark.parametrize("path", API, ids=lambda p: str(p.relative_to(ROOT)))
def test_api_modules_hold_no_sql_and_take_no_connection(path: Path) -> None:
    tree = ast.parse(path.read_text())
    statements = [text[:60] for text in _strings(tree) if SQL.search(text)]
    acquired = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute) and node.func.attr == "acquire"]
    assert statements == [] and acquired == [], (
        "a read of a read model belongs in projections/<name>_queries.py beside it; the API's own "
        "database adapters in infra/")


def test_every_query_module_sits_beside_its_read_model() -> None:
    queries = sorted((ROOT / "projections").glob("*_queries.py"))
    assert len(queries) >= 10
    for path in queries:
        assert (path.parent / path.name.replace("_queries.py", ".py")).exists(), path.name


def test_a_missing_row_is_the_404_of_what_was_asked() -> None:
    row = {"id": 7}
    assert found(row, "article", 7) is row and found(True, "article", 7) is True
    for missing in (None, False):
        with pytest.raises(ApiError) as raised:
            found(missing, "article", 7)
        assert raised.value.status == 404
        assert raised.value.envelope()["error"] == {"code": "not_found", "message": "article not found",
                                                    "details": {"id": "7"}}
