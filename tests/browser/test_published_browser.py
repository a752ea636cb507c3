"""A notebook executed and exported to HTML, read in Chromium with no kernel and no network (N-1).

The notebook is executed by ``jupyter nbconvert --execute`` (which saves the widgets' state in
the notebook, as JupyterLab's "Save Widget State Automatically" does) and exported with
``jupyter nbconvert --to html``. The page then loads RequireJS, the ipywidgets HTML manager and
anywidget's front end from CDNs; here Playwright's routing answers those requests from the copies
``tests/browser/cdn`` installs from the npm registry (``npm ci`` there; ``.ci/run`` does it), and
refuses everything else, which the tests then find in the page's requests.

Fixtures and helpers of the browser suite: ``conftest.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.labkit import TIMEOUT_MS, Lab, code_notebook, new_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page, Route

pytestmark = pytest.mark.browser

CDN = Path(__file__).parent / "cdn" / "node_modules"
#: The origin the exported pages are served from: nothing answers it but the routing below.
ORIGIN = "http://notebook.test"
#: What is asked of the page's own server and not found there, as on any server that holds only
#: the page: the HTML manager's RequireJS looks for a module beside the page before the CDN, and
#: the browser for the site's icon.
PROBED = {"anywidget.js", "favicon.ico"}

# Three transcripts: the demo and the bundled Claude Code session (with its sub-agents) fit the
# budget and are saved whole; the third is sent in parts, as a view past the budget is.
CELLS = [
    "from turnfold.samples import claude_code_session, demo_session\ndemo_session()",
    "claude_code_session()",
    "import turnfold.ondemand\n\nturnfold.ondemand.WHOLE_VIEW_BUDGET = 0  # as past the budget\n"
    "demo_session()",
]
# The demo session's first turn, as in test_widget_browser.py.
PROCESS = "process:turn:e0"
GROUP = "group:e1"
SUMMARY = "summary:e2"
TOOL = "e2"  # a Grep inside the summary row; its folded result names src/config.ts:12
# The bundled session: a sub-agent's call, its turn's process and a summary row of its own.
SUBAGENT_PATH = ("process:turn:e0", "group:batch:e2", "e7", "e7/process:turn:e0",
                 "group:e7/batch:e2", "e7/summary:e2")  # fmt: skip


def _local_file(url: str) -> Path | None:
    """The local copy of a CDN file the exported page asks for, or None."""
    parts = urlsplit(url)
    path = parts.path
    if parts.hostname == "cdnjs.cloudflare.com" and path.endswith("/require.min.js"):
        return CDN / "requirejs" / "require.js"
    if parts.hostname == "unpkg.com" and path.startswith("/@jupyter-widgets/html-manager@"):
        return CDN / "@jupyter-widgets" / "html-manager" / "dist" / path.rsplit("/dist/", 1)[1]
    if parts.hostname == "cdn.jsdelivr.net" and path.startswith("/npm/anywidget@"):
        return CDN / "anywidget" / "dist" / path.rsplit("/dist/", 1)[1]
    return None


def _is_mathjax(url: str) -> bool:
    """nbconvert's template asks for MathJax on every page; a transcript needs none."""
    parts = urlsplit(url)
    return parts.hostname == "cdnjs.cloudflare.com" and "/mathjax/" in parts.path


@dataclass
class Served:
    """What the routing answered, and what it refused."""

    pages: dict[str, Path]
    local: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def route(self, route: Route) -> None:
        url = route.request.url
        if url.startswith(ORIGIN):
            name = urlsplit(url).path.lstrip("/")
            page = self.pages.get(name)
            if page is not None:
                route.fulfill(path=str(page), content_type="text/html; charset=utf-8")
                return
            if name in PROBED:
                route.fulfill(status=404)
                return
        copy = _local_file(url)
        if copy is not None and copy.is_file():
            self.local.append(url)
            route.fulfill(path=str(copy))
            return
        if _is_mathjax(url):
            self.local.append(url)
            route.fulfill(body="", content_type="text/javascript")
            return
        self.refused.append(url)
        route.abort()


def _nbconvert(*args: str, cwd: Path, env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "jupyter", "nbconvert", *args]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The notebook executed with its widget state saved, exported with and without it."""
    if not (CDN / "@jupyter-widgets" / "html-manager" / "dist" / "embed-amd.js").is_file():
        pytest.fail(
            f"the exported page's CDN files are not installed: run `npm ci` in {CDN.parent}"
        )
    import nbformat

    base = tmp_path_factory.mktemp("published")
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),  # the reader's own defaults stay out
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
    }
    nbformat.write(code_notebook(CELLS), base / "report.ipynb")
    _nbconvert(
        "--to", "notebook", "--execute", "--output", "executed.ipynb", "report.ipynb",
        cwd=base, env=env,
    )  # fmt: skip
    executed = nbformat.read(base / "executed.ipynb", as_version=4)
    assert executed.metadata["widgets"]  # nbconvert saved the widgets' state
    without = nbformat.from_dict(json.loads(json.dumps(executed)))
    del without.metadata["widgets"]
    nbformat.write(without, base / "stateless.ipynb")
    for name in ("executed", "stateless"):
        _nbconvert("--to", "html", f"{name}.ipynb", cwd=base, env=env)
    return {"executed.html": base / "executed.html", "stateless.html": base / "stateless.html"}


@pytest.fixture
def offline(chromium: Browser, exported: dict[str, Path]) -> Iterator[tuple[Page, Served]]:
    """A page whose every request goes through :class:`Served`."""
    served = Served(exported)
    with new_page(chromium) as page:
        page.context.route("**/*", served.route)
        yield page, served


def _toggle(widget: Locator, key: str) -> None:
    widget.locator(f'[data-key="{key}"]').first.locator(":scope > .tf-toggle").click()


def _requested(page: Page) -> list[str]:
    """Every URL the page fetched over the network (data: and blob: URLs are its own)."""
    urls = page.evaluate("() => performance.getEntriesByType('resource').map((e) => e.name)")
    return [url for url in urls if url.startswith(("http:", "https:"))]


def test_N1_an_exported_notebook_folds_completely_with_no_kernel_and_no_network(
    offline: tuple[Page, Served],
) -> None:
    page, served = offline
    page.goto(f"{ORIGIN}/executed.html")
    widgets = page.locator(".tf-widget")
    expect(widgets).to_have_count(3, timeout=TIMEOUT_MS)
    demo, session, in_parts = widgets.nth(0), widgets.nth(1), widgets.nth(2)
    # The headers and answers show at once; every process starts closed (P-8).
    expect(demo.locator(".tf-answer").first).to_contain_text("parseConfig now defaults port")
    expect(demo.locator(".tf-process > .tf-toggle").first).to_have_attribute(
        "aria-expanded", "false"
    )

    # A saved-whole view: each level opens with its content, down to a folded tool result.
    for key in (PROCESS, GROUP, SUMMARY, TOOL):
        _toggle(demo, key)
    expect(demo.locator(f'[data-key="{TOOL}"]')).to_contain_text("src/config.ts:12")
    # The bundled session's sub-agent (the call e7) opens to its own transcript, in full.
    for key in SUBAGENT_PATH:
        _toggle(session, key)
    expect(session.locator('[data-key="e7/e2"]')).to_be_visible()

    # Past the budget, a closed process says once that it needs the running notebook.
    _toggle(in_parts, PROCESS)
    note = in_parts.locator(f'[data-key="{PROCESS}"] .tf-note')
    expect(note).to_have_count(1)
    expect(note).to_contain_text("needs the running notebook", timeout=TIMEOUT_MS)
    expect(in_parts.locator(".tf-answer").first).to_be_visible()
    # Search runs in the kernel: with none, no search box waits for an answer that never comes.
    expect(demo.locator(".tf-search")).to_be_hidden()

    # Nothing but the CDN files served locally was asked for.
    assert served.refused == []
    assert served.local
    probes = {f"{ORIGIN}/{name}" for name in PROBED}
    assert set(_requested(page)) <= {f"{ORIGIN}/executed.html", *probes, *served.local}


def test_N1_W4_the_notebook_exported_without_widget_state_shows_the_static_html(
    offline: tuple[Page, Served],
) -> None:
    page, served = offline
    page.goto(f"{ORIGIN}/stateless.html")
    static = page.locator(".jp-OutputArea-output .turnfold").first
    expect(static).to_be_visible(timeout=TIMEOUT_MS)
    assert page.locator(".tf-widget").count() == 0
    process = static.locator(f'details[data-key="{PROCESS}"]')
    expect(process).not_to_have_attribute("open", "")
    process.locator(":scope > summary").click()
    expect(process.locator(f'[data-key="{GROUP}"]')).to_be_visible()
    assert served.refused == []


# --- JupyterLab's own "Save Widget State Automatically" ----------------------------------------

#: Where the test server keeps the widget manager's user setting (``labkit.running_lab``).
SAVE_STATE = Path("@jupyter-widgets") / "jupyterlab-manager" / "plugin.jupyterlab-settings"


@pytest.fixture
def saving_lab(lab: Lab) -> Iterator[Lab]:
    """The test server's JupyterLab with "Save Widget State Automatically" on (its menu item
    writes this setting), for this test alone: the pages opened after it read the default."""
    setting = lab.server.root.parent / "settings" / SAVE_STATE
    setting.parent.mkdir(parents=True, exist_ok=True)
    setting.write_text(json.dumps({"saveState": True}), encoding="utf-8")
    try:
        yield lab
    finally:
        setting.unlink()


@pytest.mark.own_page  # JupyterLab reads the setting saving_lab writes when it starts
def test_N1_a_notebook_saved_in_jupyterlab_with_widget_state_folds_with_no_kernel(
    saving_lab: Lab, chromium: Browser
) -> None:
    """The reader's path: run the cells in JupyterLab with "Save Widget State Automatically"
    on, open a fold, save; the saved notebook exported to HTML shows the transcript with no
    kernel, everything opening, and the fold the reader opened open."""
    import nbformat

    lab = saving_lab
    widget = lab.open_notebook("saved.ipynb", [CELLS[0]])
    lab.toggle(widget, PROCESS)
    expect(widget.locator(f'[data-key="{GROUP}"]')).to_be_visible()
    lab.wait_idle()  # the fold choice has reached the kernel's model
    lab.command("docmanager:save")
    path = lab.server.root / "saved.ipynb"
    saved = nbformat.read(path, as_version=4)
    for _ in range(100):  # the save may still be on its way to the disk
        if saved.metadata.get("widgets"):
            break
        lab.page.wait_for_timeout(100)
        saved = nbformat.read(path, as_version=4)
    state = saved.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    views = [m for m in state.values() if "_view" in m["state"] or m.get("buffers")]
    assert views, "JupyterLab saved no transcript widget's state"

    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(path.parent / "export-config")}
    _nbconvert("--to", "html", "saved.ipynb", cwd=path.parent, env=env)
    served = Served({"saved.html": path.with_suffix(".html")})
    with new_page(chromium) as page:
        page.context.route("**/*", served.route)
        page.goto(f"{ORIGIN}/saved.html")
        shown = page.locator(".tf-widget")
        expect(shown).to_have_count(1, timeout=TIMEOUT_MS)
        expect(shown.locator(".tf-answer").first).to_contain_text("parseConfig now defaults port")
        # The fold the reader opened is open, with its content; the rest opens from the page.
        expect(shown.locator(f'[data-key="{GROUP}"]')).to_be_visible()
        for key in (GROUP, SUMMARY, TOOL):
            _toggle(shown, key)
        expect(shown.locator(f'[data-key="{TOOL}"]')).to_contain_text("src/config.ts:12")
        assert served.refused == []
