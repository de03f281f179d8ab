"""A Python client generated from the OpenAPI document by ``openapi-python-client``, and what its
generated code says about each operation.

``generate`` runs the generator's command line (offline, no formatting hook) into a folder and
imports the package; ``untyped_responses`` reads the generated modules (their syntax tree, not
their text) and lists every declared response with content that the client would not parse into
a type: a missing operation module, a status without its branch in ``_parse_response``, or a
branch that gives ``cast(Any, None)`` (what the generator writes for content it cannot read).
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

GENERATOR = str(Path(sys.executable).with_name("openapi-python-client"))
# What the generator prints when it leaves an endpoint or a response out of the client.
_PLACEHOLDER = re.compile(r"{[^}]*}")  # the generator renames path parameters ({jobId} -> {job_id})
SKIPPED_SIGNS = ("WARNING", "Cannot parse", "will be omitted", "will not be generated", "Unable to")


def generate(document: dict[str, Any], folder: Path, package: str) -> tuple[ModuleType, str]:
    """Generate the client of ``document`` as the package ``package`` in ``folder`` and import it;
    returns the package and everything the generator printed."""
    spec = folder / "openapi.json"
    spec.write_text(json.dumps(document))
    config = folder / "generator.yaml"
    config.write_text(f"package_name_override: {package}\npost_hooks: []\n")
    done = subprocess.run([GENERATOR, "generate", "--path", str(spec), "--meta", "none", "--output-path",
                           str(folder / package), "--config", str(config)],
                          capture_output=True, text=True, timeout=120, cwd=folder)
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(package), printed
    finally:
        sys.path.remove(str(folder))


def skipped(printed: str) -> list[str]:
    """The generator's lines saying that something of the document is not in the client."""
    return [line for line in printed.splitlines() if any(sign in line for sign in SKIPPED_SIGNS)]


def _operation_of(module: ast.Module) -> tuple[str, str] | None:
    """(METHOD, path) of a generated operation module, from the dict its ``_get_kwargs`` builds."""
    for node in ast.walk(module):
        if isinstance(node, ast.Dict):
            items = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant)}
            if "method" in items and "url" in items:
                url = items["url"]
                if isinstance(url, ast.Call):  # "/videos/{id}".format(id=...)
                    url = url.func.value  # type: ignore[attr-defined]
                return items["method"].value.upper(), _PLACEHOLDER.sub("{}", url.value)  # type: ignore
    return None


def _parsed_statuses(module: ast.Module) -> dict[int, bool]:
    """Each status ``_parse_response`` handles, and whether its branch yields a typed value."""
    parse = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "_parse_response")
    statuses: dict[int, bool] = {}
    for branch in parse.body:
        if not (isinstance(branch, ast.If) and isinstance(branch.test, ast.Compare)
                and isinstance(branch.test.comparators[0], ast.Constant)):
            continue
        status = branch.test.comparators[0].value
        untyped = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "cast"
                      and ast.unparse(n.args[0]) == "Any" for n in ast.walk(branch))
        statuses[status] = not untyped
    return statuses


def untyped_responses(document: dict[str, Any], package_dir: Path) -> list[str]:
    generated: dict[tuple[str, str], dict[int, bool]] = {}
    for path in (package_dir / "api").rglob("*.py"):
        module = ast.parse(path.read_text())
        operation = _operation_of(module)
        if operation is not None:
            generated[operation] = _parsed_statuses(module)
    missing = []
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            parsed = generated.get((method.upper(), _PLACEHOLDER.sub("{}", path)))
            if parsed is None:
                missing.append(f"{method.upper()} {path}: no operation in the client")
                continue
            for status, response in op["responses"].items():
                if not response.get("content"):
                    continue  # nothing to parse (304): None is its right value
                if not parsed.get(int(status), False):
                    missing.append(f"{method.upper()} {path} {status}: "
                                   + ("untyped" if int(status) in parsed else "not parsed"))
    return missing
