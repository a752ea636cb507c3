"""The readers added last, fed their real files with a hostile payload in every written string
(spec X-1, X-2): each still loads as its format, shows the payload as text, and renders inert in
the exported page, the widget's view and static HTML, the comparison page and the terminal.

``tests/test_security.py`` and ``tests/test_render_html.py`` audit transcripts built in Python;
these go through the readers, where a field a reader passes on as it is (a model's name, an
agent's role, a stream's delta) would reach the page by a way the built ones do not take.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

import turnfold
from tests.hostile_inputs import FIXTURES, NEW_READERS, PAYLOAD, hostile_copy
from tests.test_compare import _CompareAudit
from tests.test_render_html import audit as audit_page
from tests.test_security import audit as audit_fragment
from turnfold.cli import expand_all
from turnfold.render.compare_page import render_compare_page
from turnfold.render.page import render_page
from turnfold.render.text import render_terminal, render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.widget import TranscriptWidget

#: Characters that must never reach a terminal raw (a line's own newline aside).
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _fragments(value: object) -> list[str]:
    """Every HTML fragment of a view model (a field ending in ``html``, an image), which the
    widget's JS sets as HTML; the rest it sets as text."""
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            if isinstance(item, str) and str(key).endswith("html"):
                found.append(item)
            elif key == "images" and isinstance(item, list):
                found += [image for image in item if isinstance(image, str)]
            else:
                found += _fragments(item)
        return found
    if isinstance(value, list):
        return [fragment for item in value for fragment in _fragments(item)]
    return []


@pytest.mark.parametrize("name", NEW_READERS, ids=[Path(n).name for n in NEW_READERS])
def test_X1_X2_a_real_file_carrying_payloads_loads_as_its_format_and_renders_inert(
    name: str, tmp_path: Path
) -> None:
    original = turnfold.load(FIXTURES / name)
    transcript = turnfold.load(hostile_copy(name, tmp_path))
    assert transcript.metadata["source_format"] == original.metadata["source_format"]
    assert len(transcript.entries) >= len(original.entries)
    page = render_page(transcript, expand=True)
    audit_page(page)
    # the payload is shown, as text (escaped in the page's source).
    assert "&lt;script&gt;window.__pwned=&#x27;script&#x27;&lt;/script&gt;" in page
    widget = TranscriptWidget(transcript)
    for fragment in _fragments(widget.view):
        audit_fragment(fragment)
    bundle, _ = widget._repr_mimebundle_()
    audit_page(bundle["text/html"])
    for text in (bundle["text/plain"], render_text(build_view_model(transcript))):
        assert not RAW_CONTROLS.search(text.replace("\n", "")), text
    # `turnfold show` on a terminal: rich's own colours, and no escape sequence of the file's.
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, color_system="truecolor", width=100)
    render_terminal(expand_all(build_view_model(transcript)), console)
    drawn = re.sub(r"\x1b\[[0-9;]*m", "", terminal.getvalue())
    assert not RAW_CONTROLS.search(drawn.replace("\n", "")), drawn
    assert "<script>window.__pwned='script'</script>" in drawn
    compared = render_compare_page(original, transcript, names=(PAYLOAD, "b"), title=PAYLOAD)
    assert not re.search(r"<\s*/?\s*script", compared, re.I)
    audit = _CompareAudit()
    audit.feed(compared)
    audit.close()
    assert audit.problems == []
