"""The application layer's modules import each other without a circle: the context and the ports
below, the handlers above, the registry and the start-up on top (a circle would make what imports
first decide what works)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "services.application"


def _imports(path: Path) -> set[str]:
    """The modules of the package that ``path`` imports, anywhere in it (function bodies too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:
                found.update(f"{PACKAGE}.{alias.name}" for alias in node.names)
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(PACKAGE + "."))
    return found


def test_the_application_modules_import_each_other_without_a_circle():
    graph = {f"{PACKAGE}.{path.stem}": _imports(path) for path in (ROOT / "services/application").glob("*.py")
             if path.stem != "__init__"}
    assert len(graph) > 10
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssertionError(f"an import circle: {exc.args[1]}") from None
    assert order.index(f"{PACKAGE}.context") < order.index(f"{PACKAGE}.jobs") < order.index(f"{PACKAGE}.handlers")
    assert graph[f"{PACKAGE}.context"] <= {f"{PACKAGE}.meta"}, "the context knows no handler"
