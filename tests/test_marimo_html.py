"""turnfold's static HTML shown by marimo's ``mo.Html`` (spec N-2, W-4).

marimo draws an HTML output through React (``frontend/src/plugins/core/RenderHTML.tsx``): a link
to the same page (``<a href="#…">``, not ``#code/…``) becomes its ``QueryParamPreservingLink``,
given the link's attributes as they are, so a ``style`` reaches React as a string, which React
throws on (its error #62): the whole output showed "Something went wrong" instead. The page
timeline's call links had their place in an inline ``style`` (``--x``, ``--w``, …).

``marimo export html`` runs :data:`APP` with the real marimo; these tests read the outputs the
export holds. ``tests/browser/test_marimo_html_browser.py`` draws the same export in Chromium.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("marimo")

COMPARE_RUNS = Path(__file__).parent / "fixtures" / "compare"

#: One output per cell, each of turnfold's HTML renderings a notebook can hold: a transcript's
#: (with its timeline's call links), its page, the comparison of two transcripts and of two eval
#: logs (a table of links to its pairs), the session browser's fallback and the corpus table.
APP = """\
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

    import turnfold
    import turnfold.samples
    from turnfold.render.page import render_page

    demo = turnfold.samples.demo_session()
    claude = turnfold.samples.claude_code_session()
    corpus = turnfold.scan([demo, claude])

    def saved(value):
        # What a notebook keeps of a widget: the text/html of its bundle (W-4).
        return value._repr_mimebundle_()[0]["text/html"]

    return claude, corpus, demo, mo, render_page, saved, turnfold


@app.cell
def _(claude, mo, saved, turnfold):
    mo.Html(saved(turnfold.TranscriptWidget(claude)))
    return


@app.cell
def _(claude, mo, render_page):
    mo.Html(render_page(claude, title="claude"))
    return


@app.cell
def _(claude, demo, mo, saved, turnfold):
    mo.Html(saved(turnfold.compare(demo, claude)))
    return


@app.cell
def _(mo, saved, turnfold):
    mo.Html(saved(turnfold.compare({baseline!r}, {candidate!r})))
    return


@app.cell
def _(corpus, mo, saved, turnfold):
    mo.Html(saved(turnfold.SessionBrowser(corpus)))
    return


@app.cell
def _(corpus, mo):
    mo.Html(corpus._repr_html_())
    return
""".format(
    baseline=str(COMPARE_RUNS / "arithmetic_baseline.eval"),
    candidate=str(COMPARE_RUNS / "arithmetic_candidate.eval"),
)
#: What marks each cell's output, in the cells' order (the first cell shows nothing).
OUTPUTS = (
    ("transcript", 'class="tf-tl-plot"'),
    ("page", "<title>claude</title>"),
    ("compare", 'class="tf-cmp'),
    ("compare of eval logs", 'class="tf-cmp-pick" href="#pair-1"'),
    ("session browser", "<p>2 rows, 0 errors, 0 skipped</p>"),
    ("corpus table", "<p>2 rows, 0 errors, 0 skipped</p>"),
)


def export(directory: Path) -> Path:
    """``marimo export html`` of :data:`APP` in ``directory``: the exported file."""
    app = directory / "turnfold_html.py"
    app.write_text(APP, encoding="utf-8")
    out = directory / "turnfold_html.html"
    env = {
        **os.environ,
        "MARIMO_SKIP_UPDATE_CHECK": "1",  # no look-up of marimo's latest version
        "XDG_CONFIG_HOME": str(directory / "config"),  # the reader's own marimo settings stay out
        "XDG_STATE_HOME": str(directory / "state"),
        "XDG_CACHE_HOME": str(directory / "cache"),
        "TURNFOLD_CACHE_DIR": str(directory / "turnfold-cache"),
        "JUPYTER_CONFIG_DIR": str(directory / "jupyter"),  # and turnfold's saved defaults
    }
    command = [sys.executable, "-m", "marimo", "export", "html", str(app), "-o", str(out),
               "--no-sandbox"]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=directory, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def exported_outputs(page: Path) -> list[str]:
    """The ``text/html`` each cell of an exported notebook shows, in the cells' order."""
    text = page.read_text(encoding="utf-8")
    found = re.search(
        r'"__MARIMO_MOUNT_CONFIG__", \{\s*value: Object\.freeze\((.*?)\),\s*writable', text, re.S
    )
    assert found is not None, "the export holds no notebook session"
    cells: list[dict[str, Any]] = json.loads(found.group(1))["session"]["cells"]
    for cell in cells:
        errors = [o for o in cell["outputs"] if o.get("type") == "error"]
        assert not errors, errors
    return [o["data"]["text/html"] for c in cells for o in c["outputs"] if "text/html" in o["data"]]


class _Links(HTMLParser):
    """Every link of a fragment to the same page, as its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        href = attributes.get("href") or ""
        # marimo's RenderHTML leaves ``#code/…`` to the browser.
        if tag == "a" and href.startswith("#") and not href.startswith("#code/"):
            self.links.append(attributes)


def same_page_links(html: str) -> list[dict[str, str | None]]:
    parser = _Links()
    parser.feed(html)
    parser.close()
    return parser.links


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return exported_outputs(export(tmp_path_factory.mktemp("marimo-html")))


def test_N2_marimo_exports_each_of_turnfold_s_html_outputs(outputs: list[str]) -> None:
    assert len(outputs) == len(OUTPUTS)
    for (name, mark), html in zip(OUTPUTS, outputs, strict=True):
        assert mark in html, name


def test_N2_no_link_to_the_page_carries_a_style_marimo_would_crash_on(outputs: list[str]) -> None:
    links = {name: same_page_links(html) for (name, _), html in zip(OUTPUTS, outputs, strict=True)}
    # The timeline's call links are there, each a link to its call's row...
    calls = [link for link in links["transcript"] if (link["href"] or "").startswith("#call-")]
    assert len(calls) > 10
    assert all(link["title"] for link in calls)
    assert any((link["href"] or "").startswith("#call-") for link in links["page"])
    assert links["compare of eval logs"]
    # ...and none of any output has a style for marimo to hand React as a string.
    styled = {name: [link for link in found if "style" in link] for name, found in links.items()}
    assert styled == {name: [] for name in links}
