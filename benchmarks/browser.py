"""The transcript widget in a real JupyterLab against the static page, in the same browser (#7).

Generates a Claude Code session of exactly ``--turns`` turns with ``benchmarks/load.py``'s generator
(imported from this directory) and renders it with ``turnfold render FILE -o PAGE``. Tool outputs
are cut to 200, 800 or 3,000 characters (load.py's ``SMALL_OUTPUT_SIZES``): its default sizes,
up to 40,000, would make 2,000 turns about 250 MB, far more than a session a reader opens in a
notebook; the size of the file is printed. Then, in JupyterLab in headless Chromium
(``/usr/bin/chromium``, never downloaded), measures in the same run:

  baseline  loading the static page from a file:// URL: navigation start until the load event
            and two animation frames after it (performance.now() in the page)
  measured  first paint: running the cell ``TranscriptWidget(transcript)``, the transcript
            already loaded in the kernel, until every turn is in the widget's DOM and two
            animation frames have passed; the widget is built in that cell, so its view model
            and the bytes sent for it are part of the figure
  dom       elements inside the widget's root (``.tf-widget``) per turn, nothing opened
  open      one turn's process header clicked: elements before and after, and the time from the
            click until its rows are drawn (two animation frames after the first shows)
  whole     a 5 MB tool output (a second widget, displayed again in each run): its turn,
            summary row and row opened, then "Show the whole output" clicked; the time until
            its last line is drawn, and the longest time between two animation frames meanwhile
            over the median one (nothing may hold the page for more than a frame)
  where     kernel time to build and to display the widget, when its state and its display
            reached the page, and the bytes of both (the display bundle with its text/html
            fallback)

Bars (issue #7): <= 30 elements per turn; first paint <= 1.0x the page load; while the whole
5 MB output is drawn, no frame longer than 1.5x the median frame (no frame dropped). The figures
are printed as the last line.

The session browser (issue 16, B-1, Q-5), on a corpus scanned from a generated Parquet file of
``--rows`` short trajectories (``benchmarks/corpus.py``'s generator), in the same JupyterLab:

  state     the bytes of the browser's initial state, with the transcript widget made
            with it (empty until a run is opened: its code and style)
  paint     ``display(SessionBrowser(corpus))`` until its first page of rows is drawn (two
            animation frames after), from the moment its output reached the page
  trips     a sort (a heading clicked, ascending and descending in turn), a filter (the
            reader's own, ``title contains``, added and removed in turn) and a page turn (next
            and previous in turn): each from the click until the new rows are drawn, ``--trips``
            times, the median

Bars (issue 16): state <= 128 KB; each round trip <= 150 ms; first paint <= 1 s.

Times are best of ``--runs`` alternating runs. JupyterLab runs with its own settings and config
directories (``tests/browser/labkit.py``, as the browser tests do), and, as in the test suite,
the display defaults are the built-in ones: TURNFOLD_* display and fast-model variables are
ignored, so the widget and the page show the same thing and nothing is summarized over the
network.

    python benchmarks/browser.py [--turns 2000] [--runs 3] [--keep DIR] [--rows 100000]
                                 [--trips 20] [--only transcript|sessions]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The repository: the generator is imported from benchmarks/, the JupyterLab harness from the
# browser tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.browser.labkit import STATIC, TIMEOUT_MS, Lab, browsing_lab, missing

from benchmarks.corpus import trajectories
from benchmarks.load import SMALL_OUTPUT_SIZES, generate_turns

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog

DOM_BAR = 30.0
PAINT_BAR = 1.0
#: The longest frame while a 5 MB output is drawn, over the median frame: a dropped frame is 2x.
FRAME_BAR = 1.5
#: How long the page may take to draw 2,000 turns or open one before the run is abandoned.
WAIT_MS = 300_000
#: The session browser's bars (issue 16): bytes of its initial state, ms of a round trip and of
#: its first paint.
STATE_BAR = 128 * 1024
TRIP_BAR = 150.0
BROWSER_PAINT_BAR = 1000.0

SETUP_CELL = """\
import json, time
from pathlib import Path
import turnfold
from turnfold.widget import TranscriptWidget

transcript = turnfold.load({source!r})
timings, widget = [], None"""

# The timed cell. display() rather than a bare ``widget`` keeps the widgets of earlier runs out of
# ``Out``, so closing them frees them; the two clock readings cost nothing next to the build.
DISPLAY_CELL = """\
started = time.perf_counter()
widget = TranscriptWidget(transcript)
built = time.perf_counter()
display(widget)
timings.append((built - started, time.perf_counter() - built))"""

# What the kernel measured, and the bytes it sends for one widget: its state (the comm_open, with
# any binary buffers) and its display bundle. Read from the widget's public surfaces only, so the
# report holds whatever the widget chooses to send up front.
REPORT = """\
from ipywidgets.widgets.widget import _remove_buffers

state, _, buffers = _remove_buffers(widget.get_state())
data, _ = widget._repr_mimebundle_()
Path({path!r}).write_text(json.dumps({{
    "timings": timings,
    "state": len(json.dumps(state).encode()) + sum(memoryview(b).nbytes for b in buffers),
    "display": len(json.dumps(data).encode()),
    "html": len(data.get("text/html", "").encode()),
}}))"""

# Shared by the page scripts below. `until` resolves once `test()` holds, checked again on every
# change under `root` that `watch` (MutationObserver options) selects: no polling delay is added
# to the figures. `frames` waits two animation frames: the first callback runs before the frame
# that shows what is in the DOM now, the second after it; it returns the time then (and fails
# rather than hangs in a page that draws no frames).
JS_HELPERS = """
const frames = () => new Promise((done, fail) => {
  const timer = setTimeout(() => fail(new Error("no animation frame in 10 s")), 10000);
  requestAnimationFrame(() => requestAnimationFrame(() => {
    clearTimeout(timer);
    done(performance.now());
  }));
});
const until = (root, watch, test, timeout, what) => new Promise((done, fail) => {
  if (test()) return done();
  const observer = new MutationObserver(() => {
    if (!test()) return;
    observer.disconnect();
    clearTimeout(timer);
    done();
  });
  const timer = setTimeout(() => {
    observer.disconnect();
    fail(new Error(`no ${what} after ${timeout} ms`));
  }, timeout);
  observer.observe(root, watch);
});
"""

# Runs cell `index` and waits for a widget holding `turns` turns. The clock starts in the page,
# right before the run command, so no Playwright round trip is counted. The kernel's iopub
# messages are timed on the way: the last comm_open before the display carries the widget's
# state (anywidget opens the widget's Layout model first).
FIRST_PAINT_JS = f"""async ({{ index, turns, timeout }}) => {{
  {JS_HELPERS}
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const notebook = panel.content;
  const kernel = panel.sessionContext.session.kernel;
  const arrived = {{}};
  const onMessage = (_, message) => {{
    const kind = message.header.msg_type;
    if (kind === "comm_open" || !(kind in arrived)) arrived[kind] = performance.now();
  }};
  const painted = () => {{
    const root = notebook.node.querySelector(".tf-widget");
    return root !== null && root.querySelectorAll(".tf-turn").length >= turns;
  }};
  notebook.activeCellIndex = index;
  kernel.iopubMessage.connect(onMessage);
  try {{
    const start = performance.now();
    app.commands.execute("notebook:run-cell"); // not awaited: it resolves when the kernel is done
    // Elements added or removed only: attribute records over the whole notebook would cost
    // time inside the measured window.
    const watch = {{ childList: true, subtree: true }};
    await until(notebook.node, watch, painted, timeout, `widget with ${{turns}} turns`);
    const end = await frames();
    const since = (kind) => (kind in arrived ? arrived[kind] - start : null);
    return {{ total: end - start, state: since("comm_open"), display: since("display_data") }};
  }} finally {{
    kernel.iopubMessage.disconnect(onMessage);
  }}
}}"""

# Arms a probe on one process disclosure (`wrap`, the element with its data-key): the clock starts
# in a capture listener on the wrapper, so before the widget's own click handler runs, and stops
# two frames after a row (a keyed element) inside the process is rendered. Nothing is assumed to
# exist before the click: the rows may be built by the click handler, or arrive later from the
# kernel; a row already in the DOM but hidden counts only once it is shown.
OPEN_PROBE_JS = f"""(wrap, timeout) => {{
  {JS_HELPERS}
  const probe = (window.__tfOpenProbe = {{}});
  const shown = () => [...wrap.querySelectorAll("[data-key]")]
    .some((row) => row.getClientRects().length > 0);
  wrap.addEventListener("click", () => {{
    probe.clicked = performance.now();
    // setTimeout: let the widget's handler (after this listener) run before the first check.
    setTimeout(() => {{
      const watch = {{ childList: true, subtree: true, attributes: true }}; // `hidden` too
      until(wrap, watch, shown, timeout, "rows in the opened process")
        .then(frames)
        .then((end) => {{ probe.drawn = end; }}, (error) => {{ probe.error = String(error); }});
    }}, 0);
  }}, {{ capture: true, once: true }});
}}"""

# Set on every page of the baseline's context before the page's own content (Playwright's init
# scripts are not subject to the page's Content-Security-Policy): the time of the second frame
# after the load event, since navigation start (performance.now()'s origin).
PAGE_PROBE_JS = """
addEventListener("load", () => requestAnimationFrame(() => requestAnimationFrame(() => {
  window.__tfPainted = performance.now();
})));
"""

COUNT_JS = "(root) => root.querySelectorAll('*').length"

# A settled session whose last turn read a 5 MB log: the whole-output figure opens it.
BIG_OUTPUT_CELL = """\
from turnfold.recording import Recorder

big = Recorder()
big.user("Dump the log")
log = "".join(f"{i:07d} INFO worker: processed a batch of records\\n" for i in range(95_000))
big.finish_tool(big.start_tool("Read", {"file_path": "app.log"}), log + "the end\\n")
big.assistant("It is long.")
big_view = TranscriptWidget(big.transcript)
big_view"""

# Clicks "Show the whole output" and, on every animation frame until the last block holds the
# output's last line, records the time since the previous frame: the longest such gap is the
# longest the page was held while the output was drawn.
WHOLE_OUTPUT_JS = f"""async (tool, {{ timeout }}) => {{
  {JS_HELPERS}
  const button = tool.querySelector(".tf-all");
  const gaps = [];
  let last = null;  // the first frame only starts the count
  let done = false;
  const tick = (now) => {{
    if (last !== null) gaps.push(now - last);
    last = now;
    if (!done) requestAnimationFrame(tick);
  }};
  await frames();
  requestAnimationFrame(tick);
  const started = performance.now();
  button.click();
  const finished = () => {{
    const blocks = tool.querySelectorAll(".tf-chunk");
    return blocks.length > 0 && blocks[blocks.length - 1].textContent.endsWith("the end\\n");
  }};
  await until(tool, {{ childList: true, subtree: true }}, finished, timeout, "whole output");
  const drawn = (await frames()) - started;
  done = true;
  const sorted = [...gaps].sort((a, b) => a - b);
  return {{
    drawn,
    longest: sorted[sorted.length - 1],
    frame: sorted[Math.floor(sorted.length / 2)],
    blocks: tool.querySelectorAll(".tf-chunk").length,
  }};
}}"""


@dataclass
class Paint:
    """One first paint of the widget, in ms from running the cell, and the DOM it left."""

    total: float
    state: float | None  # the widget's state (its view model) reached the page
    display: float | None  # the display message reached the page
    elements: int  # inside the widget's root, nothing opened


@dataclass
class PageLoad:
    """One load of the static page, in ms from navigation start."""

    painted: float  # two frames after the load event
    loaded: float  # the load event ended
    contentful: float | None  # first contentful paint
    elements: int  # inside <body>


@dataclass
class Opening:
    """One process disclosure opened by a click."""

    key: str
    before: int
    after: int
    drawn: float  # ms from the click until its rows are drawn


def builtin_defaults() -> None:
    """Drop the TURNFOLD_* variables that change what is shown, as the root conftest.py does.

    The kernel inherits this environment (its Jupyter config directory is running_lab's, empty).
    Display variables would change what the widget shows but not the page (``turnfold render``
    ignores them), and a fast model configured here would summarize tool calls over the network
    while the cell is timed.
    """
    from turnfold.settings import SETTING_NAMES

    display = {f"TURNFOLD_{name.upper()}" for name in SETTING_NAMES}
    for name in [n for n in os.environ if n in display or n.startswith("TURNFOLD_FAST")]:
        del os.environ[name]


def render(source: Path, page: Path) -> None:
    from turnfold.cli import main

    with contextlib.redirect_stderr(io.StringIO()):  # "wrote …" is not part of the figures
        status = main(["render", str(source), "-o", str(page)])
    if status != 0:
        raise SystemExit(f"turnfold render failed with status {status}")


def turn_keys(source: Path) -> list[str | None]:
    """The process key of every turn of the view model (None for a turn without a process)."""
    import turnfold
    from turnfold.render.viewmodel import build_view_model

    view = build_view_model(turnfold.load(source))
    return [
        (node.get("process") or {}).get("key") for node in view["nodes"] if node["kind"] == "turn"
    ]


def middle_process(keys: list[str | None]) -> str:
    """The process key of the turn nearest the middle that has one."""
    middle = len(keys) // 2
    for index in sorted(range(len(keys)), key=lambda index: abs(index - middle)):
        found = keys[index]
        if found is not None:
            return found
    raise SystemExit("no turn of the session has a process to open")


def first_paint(lab: Lab, turns: int) -> Paint:
    """Run the display cell (index 1) on a clean output and time it until the widget is painted."""
    # The previous run's view is closed and its output cleared first, outside the clock: the
    # figure is about drawing this widget, not about tearing down the last one.
    lab.execute("if widget is not None: widget.close()")
    lab.page.evaluate(
        "() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 1; }"
    )
    lab.command("notebook:clear-cell-output")
    lab.views().first.wait_for(state="detached", timeout=TIMEOUT_MS)
    result = lab.page.evaluate(FIRST_PAINT_JS, {"index": 1, "turns": turns, "timeout": WAIT_MS})
    lab.wait_idle()  # the kernel answers the view's hello before anything else is measured
    elements = int(lab.views().first.evaluate(COUNT_JS))
    return Paint(float(result["total"]), _ms(result["state"]), _ms(result["display"]), elements)


def page_load(browser: Browser, page: Path) -> PageLoad:
    """Load the static page in a fresh context of the same browser."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        context.add_init_script(PAGE_PROBE_JS)
        tab = context.new_page()
        tab.goto(page.as_uri(), wait_until="load", timeout=WAIT_MS)
        tab.wait_for_function("() => window.__tfPainted !== undefined", timeout=WAIT_MS)
        # The paint entry may be queued after the frames above; it is informative only.
        with contextlib.suppress(PlaywrightTimeout):
            tab.wait_for_function(
                "() => performance.getEntriesByName('first-contentful-paint').length > 0",
                timeout=2_000,
            )
        found: dict[str, Any] = tab.evaluate(
            """() => ({
                painted: window.__tfPainted,
                loaded: performance.getEntriesByType("navigation")[0].loadEventEnd,
                contentful: performance.getEntriesByName("first-contentful-paint")[0]?.startTime
                    ?? null,
                elements: document.body.querySelectorAll("*").length,
            })"""
        )
    finally:
        context.close()
    return PageLoad(
        float(found["painted"]),
        float(found["loaded"]),
        _ms(found["contentful"]),
        int(found["elements"]),
    )


def open_turn(lab: Lab, key: str) -> Opening:
    """Click the process header of ``key`` and time it until its rows are drawn."""
    widget = lab.views().first
    header = lab.header(widget, key)
    if header.get_attribute("aria-expanded") != "false":
        raise SystemExit(f"{key} is open before any click: the transcript is not settled")
    # Scrolled to first, so the click below neither scrolls nor waits for the page to settle.
    header.scroll_into_view_if_needed()
    lab.page.evaluate("() => new Promise((done) => requestAnimationFrame(done))")
    before = int(widget.evaluate(COUNT_JS))
    lab.keyed(widget, key).evaluate(OPEN_PROBE_JS, WAIT_MS)
    # A real click, as a reader's: pointer events included. Should the page move between the
    # press and the release, the click lands on an ancestor and never reaches the header; the
    # probe, still armed, then waits for the next click.
    for _ in range(3):
        header.click()
        if lab.page.evaluate("() => 'clicked' in window.__tfOpenProbe"):
            break
    else:
        raise SystemExit(f"three clicks on the header of {key} did not reach it")
    # Polled on a timer, not on animation frames: the probe's own timeout reports a page that
    # stopped drawing.
    lab.page.wait_for_function(
        "() => 'drawn' in window.__tfOpenProbe || 'error' in window.__tfOpenProbe",
        polling=100,
        timeout=WAIT_MS + 30_000,
    )
    probe: dict[str, Any] = lab.page.evaluate("() => window.__tfOpenProbe")
    if "error" in probe:
        expanded = header.get_attribute("aria-expanded")
        raise SystemExit(f"opening {key} (aria-expanded={expanded}): {probe['error']}")
    after = int(widget.evaluate(COUNT_JS))
    return Opening(key, before, after, float(probe["drawn"]) - float(probe["clicked"]))


@dataclass(frozen=True)
class WholeOutput:
    """A 5 MB output's "Show the whole output": how long, and the longest frame meanwhile."""

    drawn: float
    longest: float
    frame: float
    blocks: int


def whole_output(lab: Lab) -> WholeOutput:
    """Display the 5 MB session, open its turn, summary row and tool, then show all of it."""
    lab.page.evaluate(
        "() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 2; }"
    )
    lab.command("notebook:run-cell")
    lab.wait_idle()
    view = lab.views().nth(1)
    view.locator(".tf-turn").first.wait_for()
    process = str(view.locator(".tf-process").first.get_attribute("data-key"))
    lab.toggle(view, process)
    summary = view.locator(".tf-summary").first
    summary.wait_for()
    lab.toggle(view, str(summary.get_attribute("data-key")))
    tool = view.locator(".tf-tool", has_text="app.log")
    tool.wait_for()
    lab.toggle(view, str(tool.get_attribute("data-key")))
    tool.locator(".tf-all").wait_for()
    found: dict[str, Any] = tool.evaluate(WHOLE_OUTPUT_JS, {"timeout": WAIT_MS})
    # Back to one view, as the next run's first paint expects.
    lab.execute("big_view.close()")
    lab.command("notebook:clear-cell-output")
    view.wait_for(state="detached", timeout=TIMEOUT_MS)
    return WholeOutput(
        float(found["drawn"]), float(found["longest"]), float(found["frame"]), int(found["blocks"])
    )


def _ms(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass
class Results:
    """Every run's figures, and what the kernel reported (its timings per run, the sizes sent)."""

    paints: list[Paint]
    loads: list[PageLoad]
    openings: list[Opening]
    kernel: dict[str, Any]
    wholes: list[WholeOutput]


def measure(source: Path, page: Path, turns: int, key: str, runs: int) -> Results:
    """Everything in the browser, ``runs`` times: the widget's first paint and its DOM, one of its
    turns opened, the static page loaded."""
    with lab_session() as (browser, lab, base):
        cells = [SETUP_CELL.format(source=str(source)), DISPLAY_CELL, BIG_OUTPUT_CELL]
        lab.write_notebook("browser.ipynb", cells)
        lab.open("browser.ipynb")
        lab.run_cell(0)  # the transcript is loaded before anything is timed

        results = Results([], [], [], {}, [])
        for _ in range(runs):
            # Each run's widget is new, with no folds remembered: the same turn opens every time.
            results.paints.append(first_paint(lab, turns))
            results.openings.append(open_turn(lab, key))
            results.loads.append(page_load(browser, page))
            # The second widget, shown again each run (a new view, nothing opened yet).
            results.wholes.append(whole_output(lab))

        report = base / "kernel.json"
        lab.execute(REPORT.format(path=str(report)))
        results.kernel = json.loads(report.read_text(encoding="utf-8"))
    return results


@contextlib.contextmanager
def lab_session() -> Iterator[tuple[Browser, Lab, Path]]:
    """Chromium on a JupyterLab of its own, in a folder of its own, for as long as it lasts."""
    with browsing_lab() as (browser, server, base):
        tab = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        tab.set_default_timeout(TIMEOUT_MS)

        def dismiss(dialog: Dialog) -> None:
            dialog.dismiss()

        tab.on("dialog", dismiss)
        try:
            yield browser, Lab(tab, server), base
        finally:
            with contextlib.suppress(Exception):  # the server is torn down right after anyway
                tab.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")


# --- the session browser (issue 16) ---------------------------------------------------------------

BROWSER_SETUP_CELL = """\
import json, os, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()
from pathlib import Path
import turnfold

corpus = turnfold.scan({source!r})
browser = None"""

BROWSER_DISPLAY_CELL = """\
browser = turnfold.SessionBrowser(corpus)
display(browser)"""

# The bytes of the browser's state as the comm_opens carry them, its own and the empty
# transcript widget's made with it (its code and style), read after the round trips: one page.
BROWSER_REPORT = """\
from ipywidgets.widgets.widget import _remove_buffers

size = 0
for made in (browser, browser.transcript_widget):
    state, _, buffers = _remove_buffers(made.get_state())
    size += len(json.dumps(state).encode()) + sum(memoryview(b).nbytes for b in buffers)
Path({path!r}).write_text(json.dumps({{"rows": len(corpus), "state": size}}))"""

# Runs the display cell and waits for the browser's first page of rows; the clock starts as the
# display message reaches the page (the cell's output appears) and stops two frames after the
# rows are in the DOM.
BROWSER_PAINT_JS = f"""async ({{ index, timeout }}) => {{
  {JS_HELPERS}
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const notebook = panel.content;
  const kernel = panel.sessionContext.session.kernel;
  let shown = null;
  const onMessage = (_, message) => {{
    if (shown === null && message.header.msg_type === "display_data") shown = performance.now();
  }};
  const painted = () => notebook.node.querySelector(".tf-browser .tf-b-grid tbody tr") !== null;
  notebook.activeCellIndex = index;
  kernel.iopubMessage.connect(onMessage);
  try {{
    const start = performance.now();
    app.commands.execute("notebook:run-cell");
    await until(notebook.node, {{ childList: true, subtree: true }}, painted, timeout, "rows");
    const end = await frames();
    return {{ total: end - start, shown: shown === null ? null : end - shown }};
  }} finally {{
    kernel.iopubMessage.disconnect(onMessage);
  }}
}}"""

# One round trip: `act` asks for other rows (its `turn`-th time: a sort goes back and forth, a
# filter is added then removed, a page turns back, or on from the first); the clock stops two
# frames after the grid holds new rows, drawn from the kernel's answer.
BROWSER_TRIP_JS = f"""async ({{ act, turn, timeout }}) => {{
  {JS_HELPERS}
  const root = document.querySelector(".tf-browser");
  const body = root.querySelector(".tf-b-grid tbody");
  for (const row of body.children) row.__tfOld = true;
  const fresh = () => body.firstElementChild !== null && !body.firstElementChild.__tfOld;
  const acts = {{
    sort: () => root.querySelectorAll(".tf-b-grid th button")[5].click(),  // Turns
    page: () => {{
      const [previous, next] = root.querySelectorAll(".tf-b-pager button");
      (previous.disabled ? next : previous).click();
    }},
    filter: () => {{
      if (turn % 2) return root.querySelector(".tf-b-chip button").click();
      const [column, op] = root.querySelectorAll(".tf-b-builder select");
      column.value = "title";
      column.dispatchEvent(new Event("change"));
      op.value = "contains";
      root.querySelector(".tf-b-builder input").value = "Task 1";
      root.querySelector(".tf-b-builder button").click();
    }},
  }};
  const start = performance.now();
  acts[act]();
  await until(body, {{ childList: true }}, fresh, timeout, `rows after ${{act}}`);
  return (await frames()) - start;
}}"""


@dataclass
class BrowserFigures:
    """The session browser's figures: its state, first paint and round trips (ms)."""

    rows: int
    state: int  # bytes: the browser's state, one page of rows
    paint: dict[str, Any]
    trips: dict[str, list[float]]


def measure_browser(source: Path, trips: int) -> BrowserFigures:
    """The session browser of ``source`` in JupyterLab: its first paint, then ``trips`` round
    trips of each kind."""
    with lab_session() as (_, lab, base):
        tab = lab.page
        lab.write_notebook("sessions.ipynb", [
            BROWSER_SETUP_CELL.format(source=str(source)), BROWSER_DISPLAY_CELL,
        ])  # fmt: skip
        lab.open("sessions.ipynb")
        lab.run_cell(0)  # the scan is done before anything is timed
        paint = tab.evaluate(BROWSER_PAINT_JS, {"index": 1, "timeout": WAIT_MS})
        lab.wait_idle()
        found: dict[str, list[float]] = {"sort": [], "filter": [], "page": []}
        for turn in range(trips):
            for act, times in found.items():
                arguments = {"act": act, "turn": turn, "timeout": WAIT_MS}
                times.append(float(tab.evaluate(BROWSER_TRIP_JS, arguments)))
        report = base / "browser.json"
        lab.execute(BROWSER_REPORT.format(path=str(report)))
        sizes = json.loads(report.read_text(encoding="utf-8"))
    return BrowserFigures(sizes["rows"], sizes["state"], paint, found)


def report_browser(rows: int, trips: int) -> str:
    """Measure the session browser on a corpus of ``rows`` generated trajectories; its line."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "rollouts.parquet"
        trajectories(source, rows)
        figures = measure_browser(source, trips)
    medians = {act: statistics.median(times) for act, times in figures.trips.items()}
    paint = figures.paint
    print(f"session browser of {figures.rows:,} rows: initial state {figures.state / 1024:.1f} KB")
    print(f"first paint: {_shown(paint['shown'])} after its output appeared "
          f"({paint['total']:.0f} ms after the cell ran)")  # fmt: skip
    for act, times in figures.trips.items():
        print(f"{act} round trip: median {medians[act]:.0f} ms of {len(times)} "
              f"(fastest {min(times):.0f}, slowest {max(times):.0f})")  # fmt: skip
    trips_line = ", ".join(f"{act} {ms:.0f} ms" for act, ms in medians.items())
    return (
        f"session browser: state {figures.state / 1024:.1f} KB (bar {STATE_BAR // 1024} KB); "
        f"round trips {trips_line} (bar {TRIP_BAR:.0f} ms); first paint "
        f"{_shown(paint['shown'])} after the output appeared (bar {BROWSER_PAINT_BAR:.0f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the session and the page in this folder")
    parser.add_argument("--rows", type=int, default=100_000, help="the session browser's corpus")
    parser.add_argument("--trips", type=int, default=20, help="round trips of each kind")
    parser.add_argument("--only", choices=("transcript", "sessions"), default=None)
    options = parser.parse_args()
    reason = missing()
    if reason is not None:
        raise SystemExit(f"cannot run in a browser here: {reason}")
    if not (STATIC / "widget.js").is_file() or not (STATIC / "browser.js").is_file():
        raise SystemExit("the widget bundle is not built: run `npm ci && npm run build` in js/")

    builtin_defaults()
    if options.only == "sessions":
        print(report_browser(options.rows, options.trips))
        return
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = options.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        source, page = folder / "session.jsonl", folder / "session.html"
        size = generate_turns(source, options.turns, output_sizes=SMALL_OUTPUT_SIZES)
        render(source, page)
        page_size = page.stat().st_size
        keys = turn_keys(source)
        turns = len(keys)
        results = measure(source, page, turns, middle_process(keys), options.runs)

    best = min(range(options.runs), key=lambda index: results.paints[index].total)
    paint, (build, show) = results.paints[best], results.kernel["timings"][best]
    baseline = min(results.loads, key=lambda load: load.painted)
    opening = min(results.openings, key=lambda opening: opening.drawn)
    kernel, elements = results.kernel, paint.elements
    per_turn, ratio = elements / turns, paint.total / baseline.painted
    *smaller, largest = (f"{chars:,}" for chars in SMALL_OUTPUT_SIZES)
    outputs = f"tool outputs of {', '.join(smaller)} or {largest} characters"
    print(f"{turns} turns, {size / 2**20:.1f} MB ({outputs}); page {page_size / 2**20:.1f} MB")
    print(
        f"static page: painted {baseline.painted:.0f} ms (load event {baseline.loaded:.0f} ms, "
        f"first contentful paint {_shown(baseline.contentful)}), "
        f"{baseline.elements / turns:.1f} elements/turn"
    )
    print(
        f"widget first paint: {paint.total:.0f} ms (state in the page at {_shown(paint.state)}, "
        f"display at {_shown(paint.display)}); kernel: build {build * 1e3:.0f} ms, "
        f"display {show * 1e3:.0f} ms; sent: widget state {kernel['state'] / 2**20:.1f} MB, "
        f"display bundle {kernel['display'] / 2**20:.1f} MB "
        f"(text/html {kernel['html'] / 2**20:.1f} MB)"
    )
    print(f"widget DOM, nothing open: {elements:,} elements, {per_turn:.1f} per turn")
    print(
        f"opening {opening.key}: {opening.before:,} -> {opening.after:,} elements, "
        f"rows drawn {opening.drawn:.0f} ms after the click"
    )
    whole = min(results.wholes, key=lambda found: found.longest / found.frame)
    frames = whole.longest / whole.frame
    print(
        f"whole 5.2 MB output: {whole.blocks} blocks drawn in {whole.drawn:.0f} ms; longest frame "
        f"{whole.longest:.0f} ms, {frames:.1f}x the median frame ({whole.frame:.0f} ms)"
    )
    print(f"best of {options.runs} runs, {time.perf_counter() - started:.0f} s in all")
    sessions = report_browser(options.rows, options.trips) if options.only is None else None
    print(
        f"elements/turn = {per_turn:.1f} (bar {DOM_BAR:.0f}); "
        f"first paint/page load = {ratio:.2f}x (bar {PAINT_BAR}x); "
        f"open = {opening.after - opening.before:+,} elements in {opening.drawn:.0f} ms (no bar); "
        f"whole 5 MB output: longest frame {frames:.1f}x the median (bar {FRAME_BAR}x)"
        + (f"; {sessions}" if sessions else "")
    )


def _shown(ms: float | None) -> str:
    return "n/a" if ms is None else f"{ms:.0f} ms"


if __name__ == "__main__":
    main()
