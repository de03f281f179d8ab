"""How the tests are laid out: what several test files share lives in support modules (``tests/support/``
and the older ones at the top of ``tests/``, such as ``tests/helpers.py``), never in a test file or a
conftest file. A test file imported as a library runs its module-level code, fixtures and marks in
its importer, and ties one test's edits to every file that borrowed from it; a fixture is named by
the test that needs it, and pytest finds it in the nearest ``conftest.py``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# A test module or a conftest module, named as an import names it.
NOT_A_LIBRARY = re.compile(r"^(tests(\.\w+)*\.)?(test_\w*|conftest)$")
PACKAGE = re.compile(r"^tests(\.\w+)*$")
# The same, in the text of a script a test writes and runs (``python -c``, a file it spawns).
IMPORT_IN_TEXT = re.compile(r"^\s*(from\s+tests(\.\w+)*\.(test_\w*|conftest)\s+import|"
                            r"import\s+tests(\.\w+)*\.(test_\w*|conftest)\b)", re.MULTILINE)


def imported_test_modules(source: str) -> list[str]:
    """The test and conftest modules that ``source`` imports: by import statements (absolute or
    relative), and by the text of a script it holds."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if NOT_A_LIBRARY.match(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if NOT_A_LIBRARY.match(module):
                found.append("." * node.level + module)
            elif node.level or PACKAGE.match(module):  # from tests.e2e import test_x, from . import conftest
                found += [f"{'.' * node.level}{module}.{alias.name}" for alias in node.names
                          if NOT_A_LIBRARY.match(alias.name)]
    found += [match.group(0).strip() for match in IMPORT_IN_TEXT.finditer(source)]
    return found


def test_no_file_of_the_tests_imports_a_test_or_conftest_module() -> None:
    offenders = {}
    for path in sorted(TESTS.rglob("*.py")):
        imported = imported_test_modules(path.read_text())
        if imported:
            offenders[str(path.relative_to(TESTS.parent))] = imported
    assert not offenders, ("move what these files borrow into a support module (tests/support/), "
                           f"a fixture into the nearest conftest.py: {offenders}")


def test_the_rule_sees_every_way_of_importing_a_test_module() -> None:
    borrowing = [
        "from tests.e2e.test_videos import upload",
        "from tests.conftest import env_for",
        "import tests.integration.test_worker",
        "from .test_exports import source",
        "from . import conftest",
        "from tests.e2e import test_videos",
        "def f():\n    from tests.unit.test_analysis import EN_LINES",
        'SCRIPT = """\nfrom tests.integration.test_clip_media import long_render\n"""',
    ]
    for source in borrowing:
        assert imported_test_modules(source), source
    allowed = ["from tests.support.api_videos import upload", "from tests.helpers import handle",
               "from tests.store_contract import *", "import tests.support.stack",
               "from tests.testing_tools import x", "from tests.support import conftest_like"]
    for source in allowed:
        assert not imported_test_modules(source), source
