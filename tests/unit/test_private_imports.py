"""The job handlers and the other service modules share pieces through public names only: a name
with a leading underscore is its module's own business, and importing it from another module (as
the article and clip jobs once took the analysis job's ``_transcript``) ties one handler to the
insides of another. A shared piece gets a public home (``services.jobs.transcripts``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_service_module_imports_a_private_name_of_another() -> None:
    found = []
    modules = list((ROOT / "services").rglob("*.py"))
    assert len(modules) > 20
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("services"):
                found += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []
