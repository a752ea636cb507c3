"""The transcript widget in real JupyterLab, driven by Chromium (issue 5; P-7 … P-12, W-3, X-1).

Fixtures and helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from playwright.sync_api import expect

from tests.browser.labkit import Lab
from turnfold.model import Transcript
from turnfold.render.content import PROSE_CHARS

if TYPE_CHECKING:
    from playwright.sync_api import FloatRect, Locator

DEMO_SETUP = """\
from turnfold.samples import demo_session
from turnfold.widget import TranscriptWidget

widget = TranscriptWidget(demo_session())"""

# The demo session's first turn: process > group > summary row > its tools (see the view model).
PROCESS = "process:turn:e0"
GROUP = "group:e1"
SUMMARY = "summary:e2"
TOOL = "e2"  # Grep, inside the summary row
COMMAND_GROUP = "group:batch:e7"
FAILED_COMMAND = "e7"


def test_P8_demo_renders_closed_then_each_level_opens_on_its_own(lab: Lab) -> None:
    widget = lab.open_notebook("demo.ipynb", [DEMO_SETUP, "widget"])
    processes = widget.locator(".tf-process > .tf-toggle")
    assert processes.count() == 2
    assert all(v == "false" for v in processes.evaluate_all("b => b.map(x => x.ariaExpanded)"))
    # nothing behind a closed disclosure is in the DOM yet.
    assert widget.locator(".tf-process .tf-body").count() == 0
    # P-2: the answers are visible without opening anything.
    assert "parseConfig now defaults port" in widget.locator(".tf-answer").first.inner_text()

    lab.toggle(widget, PROCESS)
    assert lab.expanded(widget, PROCESS)
    assert not lab.expanded(widget, GROUP)  # P-8: settled groups stay closed
    assert lab.keyed(widget, COMMAND_GROUP).is_visible()

    lab.toggle(widget, GROUP)
    assert lab.expanded(widget, GROUP)
    assert not lab.expanded(widget, SUMMARY)
    lab.toggle(widget, SUMMARY)  # F-10a: a summary opens to its tools
    assert lab.keyed(widget, TOOL).is_visible()
    lab.toggle(widget, TOOL)
    tool = lab.keyed(widget, TOOL)
    assert "src/config.ts:12" in tool.inner_text()  # the folded result, now shown
    assert tool.locator(".tf-name").first.evaluate("e => getComputedStyle(e).fontWeight") in (
        "700",
        "bold",
    )  # F-13


def test_P10_closing_a_parent_keeps_its_childrens_choices(lab: Lab) -> None:
    widget = lab.open_notebook("memory.ipynb", [DEMO_SETUP, "widget"])
    for key in (PROCESS, GROUP, SUMMARY, TOOL):
        lab.toggle(widget, key)
    lab.toggle(widget, COMMAND_GROUP)  # a sibling: not an accordion
    assert lab.expanded(widget, GROUP)
    assert lab.expanded(widget, COMMAND_GROUP)

    lab.toggle(widget, PROCESS)
    assert not lab.expanded(widget, PROCESS)
    assert not lab.keyed(widget, GROUP).is_visible()
    lab.toggle(widget, PROCESS)
    for key in (GROUP, SUMMARY, TOOL, COMMAND_GROUP):
        assert lab.expanded(widget, key), key

    # A child closed by the reader stays closed across its parent's close and reopen.
    lab.toggle(widget, SUMMARY)
    lab.toggle(widget, GROUP)
    lab.toggle(widget, GROUP)
    assert not lab.expanded(widget, SUMMARY)


def test_P12_the_fold_rail_closes_its_group_and_headers_work_by_keyboard(lab: Lab) -> None:
    widget = lab.open_notebook("rail.ipynb", [DEMO_SETUP, "widget"])
    lab.toggle(widget, PROCESS)
    lab.toggle(widget, GROUP)
    group = lab.keyed(widget, GROUP)
    body = group.locator(":scope > .tf-body")
    assert body.evaluate("e => getComputedStyle(e).paddingLeft") == "12px"
    rail = body.locator(":scope > .tf-rail")
    bar = "e => getComputedStyle(e, '::before').backgroundColor"
    lab.page.mouse.move(0, 0)
    lab.page.evaluate("() => document.activeElement?.blur()")  # focus inside shows it too
    assert rail.evaluate(bar) == "rgba(0, 0, 0, 0)"  # invisible at rest
    rail.hover()
    assert rail.evaluate(bar) != "rgba(0, 0, 0, 0)"
    assert rail.evaluate("e => getComputedStyle(e, '::before').width") == "2px"
    rail.click()
    assert not lab.expanded(widget, GROUP)

    header = lab.header(widget, GROUP)
    header.focus()
    lab.page.keyboard.press("Enter")
    assert lab.expanded(widget, GROUP)
    lab.page.keyboard.press("Space")
    assert not lab.expanded(widget, GROUP)


def test_P10_the_same_widget_shown_again_restores_the_readers_folds(lab: Lab) -> None:
    widget = lab.open_notebook("again.ipynb", [DEMO_SETUP, "widget", "widget"], widgets=2)
    lab.toggle(widget, PROCESS)
    lab.toggle(widget, GROUP)
    lab.run_cell(2)  # the third cell draws a brand-new view of the same widget
    second = lab.views().nth(1)
    second.locator(f'[data-key="{GROUP}"]').wait_for()
    # The reader's folds reach the model one click at a time (the kernel echoes each), so the
    # new view may first draw an earlier state: wait for the last one rather than sample once.
    expect(lab.header(second, PROCESS)).to_have_attribute("aria-expanded", "true")
    expect(lab.header(second, GROUP)).to_have_attribute("aria-expanded", "true")
    assert not lab.expanded(second, SUMMARY)


LIVE_SETUP = """\
import threading, time
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

rec = Recorder()
rec.user("Why is the build red?")
rec.thinking("Look at the sources first.")
for name in ("a.py", "b.py"):
    rec.finish_tool(rec.start_tool("Read", {"file_path": name}), "x = 1")
rec.assistant("The sources look fine; checking the tests.")
rec.thinking("Now the tests.")
running = rec.start_tool("Read", {"file_path": "test_a.py"})
widget = TranscriptWidget(rec.transcript)"""

LIVE_AGENT = """\
def agent():
    time.sleep(0.3)
    rec.finish_tool(running, "assert x == 2")
    for n in range(3):
        call = rec.start_tool("Grep", {"pattern": f"x{n}"})
        time.sleep(0.05)
        rec.finish_tool(call, "hit")
    rec.assistant("All done: the test expected 2.")

threading.Thread(target=agent).start()"""


def test_P10_live_updates_keep_what_the_reader_opened_and_settle_the_rest(lab: Lab) -> None:
    widget = lab.open_notebook("live.ipynb", [LIVE_SETUP, "widget"])
    process = widget.locator(".tf-process").first
    assert process.get_attribute("data-key") is not None
    process_key = str(process.get_attribute("data-key"))
    assert lab.expanded(widget, process_key)  # P-8: open while the turn runs
    groups = widget.locator(".tf-group")
    finished, current = (str(groups.nth(i).get_attribute("data-key")) for i in range(2))
    assert not lab.expanded(widget, finished)  # a finished group is closed
    assert lab.expanded(widget, current)  # the group of the step now executing is open
    lab.toggle(widget, finished)  # the reader opens the finished one

    lab.execute(LIVE_AGENT)  # a background thread finishes the turn (L-5, W-2)
    widget.locator(".tf-answer", has_text="All done").wait_for()
    assert "Completed" in lab.header(widget, process_key).inner_text()
    assert lab.expanded(widget, process_key)  # it holds what the reader opened
    assert lab.expanded(widget, finished)  # the reader's choice survived every patch
    assert not lab.expanded(widget, current)  # untouched: settled closed


GROWING_SETUP = """\
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

rec = Recorder()
rec.user("Count to twenty")
for n in range(20):  # one response's calls: one batch that grows, as a followed run's does
    rec.finish_tool(rec.start_tool("Bash", {"command": f"echo {n}"}), str(n))
widget = TranscriptWidget(rec.transcript, running=True)"""


def test_W2_a_growing_turn_redraws_only_the_rows_it_gained(lab: Lab) -> None:
    widget = lab.open_notebook("growing.ipynb", [GROWING_SETUP, "widget"])
    first = lab.keyed(widget, "e1")  # the first call's row
    first.wait_for()
    lab.toggle(widget, "e1")  # the reader opens it
    first.evaluate("e => { e.tfKept = true; }")  # a mark only this very element carries
    process = str(widget.locator(".tf-process").first.get_attribute("data-key"))

    lab.execute('rec.finish_tool(rec.start_tool("Bash", {"command": "echo 20"}), "20")')
    lab.keyed(widget, "e21").wait_for()  # the new call's row, drawn into the batch
    expect(lab.header(widget, process)).to_contain_text("21 tools")  # the header, patched
    # The earlier row was not drawn anew: the same element, still open as the reader left it.
    assert first.evaluate("e => e.tfKept === true && e.isConnected")
    assert lab.expanded(widget, "e1")
    keys = widget.locator(".tf-batch > .tf-tool").evaluate_all("r => r.map(e => e.dataset.key)")
    assert keys == [f"e{n}" for n in range(1, 22)]


SUBAGENT_SETUP = """\
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

rec = Recorder()
rec.user("Delegate the count")
task = rec.start_tool("Task", {"description": "count"})
child = Recorder()  # the sub-agent's own run, growing apart from its call (Q-3)
child.user("Count")
for n in range(5):
    child.finish_tool(child.start_tool("Bash", {"command": f"echo {n}"}), str(n))
child.start_tool("Bash", {"command": "echo 5"})
rec.attach_subagent(task, child.transcript, name="counter")
widget = TranscriptWidget(rec.transcript, running=True)"""


def test_W2_a_growing_sub_agent_redraws_only_the_rows_it_gained(lab: Lab) -> None:
    widget = lab.open_notebook("sub-agent.ipynb", [SUBAGENT_SETUP, "widget"])
    lab.keyed(widget, "e1").wait_for()  # the Task call's row
    lab.toggle(widget, "e1")  # the reader opens the sub-agent
    first = lab.keyed(widget, "e1/e1")  # the sub-agent's first call
    first.wait_for()
    first.evaluate("e => { e.tfKept = true; }")

    # Only the sub-agent's transcript changes, not its call: the widget follows it all the same.
    lab.execute('child.finish_tool(child.transcript.tool_calls()[-1], "5")')
    lab.execute('child.start_tool("Bash", {"command": "echo 6"})')
    lab.keyed(widget, "e1/e7").wait_for()
    expect(lab.header(widget, "e1/process:turn:e0")).to_contain_text("7 tools")
    assert first.evaluate("e => e.tfKept === true && e.isConnected")  # not drawn anew
    assert lab.expanded(widget, "e1")


def test_P10_focus_inside_a_group_makes_it_the_readers_without_toggling(lab: Lab) -> None:
    widget = lab.open_notebook("owned.ipynb", [LIVE_SETUP, "widget"])
    current = str(widget.locator(".tf-group").nth(1).get_attribute("data-key"))
    inside = lab.keyed(widget, current).locator(".tf-body .tf-toggle").first
    inside.focus()  # keyboard focus on a row inside the running group: no toggle
    assert inside.get_attribute("aria-expanded") == "false"
    lab.execute(LIVE_AGENT)
    widget.locator(".tf-answer", has_text="All done").wait_for()
    assert lab.expanded(widget, current)  # completion did not close what the reader was in
    assert (
        widget.locator(".tf-group")
        .nth(1)
        .locator(".tf-body .tf-toggle")
        .first.get_attribute("aria-expanded")
        == "false"
    )


def test_P10_a_mode_switch_redraws_at_once_and_keeps_choices(lab: Lab) -> None:
    widget = lab.open_notebook("modes.ipynb", [DEMO_SETUP, "widget"])
    for key in (PROCESS, GROUP, SUMMARY, TOOL):
        lab.toggle(widget, key)
    lab.execute('widget.transcript_display_mode = "flat"')
    lab.keyed(widget, GROUP).wait_for(state="detached")  # P-4: flat has no groups
    assert lab.expanded(widget, PROCESS)
    assert lab.expanded(widget, SUMMARY)
    assert lab.expanded(widget, TOOL)
    lab.execute('widget.transcript_display_mode = "fully-folded"')
    lab.keyed(widget, GROUP).wait_for()
    assert lab.expanded(widget, GROUP)  # the choice came back with the group


def test_P11_reveal_opens_exactly_the_path_once(lab: Lab) -> None:
    widget = lab.open_notebook("reveal.ipynb", [DEMO_SETUP, "widget"])
    lab.execute('widget.reveal("e3")')  # a Read inside the first group's summary row
    lab.keyed(widget, "e3").wait_for()
    for key in (PROCESS, GROUP, SUMMARY):
        assert lab.expanded(widget, key), key
    assert not lab.expanded(widget, COMMAND_GROUP)
    lab.toggle(widget, GROUP)  # a later manual close stands, even after an update
    lab.execute("widget.show_tool_call_args = True")
    lab.page.wait_for_timeout(500)
    assert not lab.expanded(widget, GROUP)


THINKING_SETUP = """\
from turnfold.recording import Recorder
from turnfold.settings import DisplaySettings
from turnfold.widget import TranscriptWidget

rec = Recorder()
rec.user("Think about it")
thought = rec.thinking("Hmm", streaming=True)
widget = TranscriptWidget(rec.transcript, DisplaySettings(show_thinking=False))"""


def test_P9_the_thinking_indicator_shimmers_then_fades(lab: Lab) -> None:
    widget = lab.open_notebook("thinking.ipynb", [THINKING_SETUP, "widget"])
    label = widget.locator(".tf-indicator .tf-shimmer")
    style = "e => { const s = getComputedStyle(e); return [s.animationName, s.animationDuration,"
    style += " s.animationTimingFunction, s.animationIterationCount]; }"
    assert label.evaluate(style) == ["tf-sweep", "1.2s", "linear", "infinite"]
    assert widget.locator(".tf-thinking").count() == 0  # hidden reasoning renders no row
    lab.page.emulate_media(reduced_motion="reduce")
    assert label.evaluate(style)[0] == "none"  # static under reduced motion
    lab.page.emulate_media(reduced_motion="no-preference")

    # Record every fading ghost as it appears: it lives for 220 ms only.
    widget.evaluate(
        """(root) => {
            window.tfFades = [];
            new MutationObserver((records) => {
                for (const record of records) for (const node of record.addedNodes) {
                    if (!(node instanceof Element)) continue;
                    const ghosts = [node, ...node.querySelectorAll('*')]
                        .filter((e) => e.classList.contains('tf-fading'));
                    for (const ghost of ghosts) {
                        window.tfFades.push(getComputedStyle(ghost).animationDuration);
                    }
                }
            }).observe(root, { childList: true, subtree: true });
        }"""
    )
    # The reasoning ends and the agent moves on: the process stays open, the indicator goes.
    lab.execute('rec.stream(thought, " done", done=True); rec.start_tool("Read", {"path": "a"})')
    lab.page.wait_for_function("() => window.tfFades.length > 0")
    assert lab.page.evaluate("() => window.tfFades") == ["0.22s"]
    widget.locator(".tf-fading").wait_for(state="detached")
    assert widget.locator(".tf-indicator").count() == 0


def test_W1_a_transcript_as_the_last_expression_shows_the_widget(lab: Lab) -> None:
    setup = (
        "from turnfold.display import register_display\n"
        "from turnfold.samples import demo_session\n"
        "register_display()"
    )
    widget = lab.open_notebook("display.ipynb", [setup, "demo_session()"])
    assert widget.locator(".tf-process").count() == 2


def test_P11_search_opens_only_the_paths_of_its_hits(lab: Lab) -> None:
    widget = lab.open_notebook("search.ipynb", [DEMO_SETUP, "widget"])
    box = widget.locator(".tf-search-input")
    box.fill("Received: undefined")  # only in the failing command's output
    box.press("Enter")
    hit = lab.keyed(widget, FAILED_COMMAND)
    hit.and_(widget.locator(".tf-hit-current")).wait_for()
    assert lab.expanded(widget, PROCESS)
    assert lab.expanded(widget, COMMAND_GROUP)
    assert not lab.expanded(widget, GROUP)  # nothing else opens
    assert "1 match" in widget.locator(".tf-search-count").inner_text()
    # The matched words themselves are marked (ranges over the drawn text), not the whole row.
    marked = lab.page.evaluate(
        """() => [...CSS.highlights.get('turnfold-hit-current')].map((r) => r.toString())"""
    )
    assert marked == ["Received: undefined"]
    assert "tf-hit-row" not in str(hit.get_attribute("class"))

    lab.toggle(widget, COMMAND_GROUP)  # the reader closes it again: that stands
    box.press("Enter")  # stepping through the same answer does not reopen it
    assert not lab.expanded(widget, COMMAND_GROUP)


def _hostile_payloads() -> list[str]:
    """Every payload of the security suites, and four that say TF-PWNED if they ever run."""
    security = _load_test_module("test_security")
    pages = _load_test_module("test_render_html")
    return [
        *security.PAYLOADS,
        *pages.HOSTILE,
        "<img src=x onerror=\"console.log('TF-PWNED')\">",
        "<script>console.log('TF-PWNED')</script>",
        "<svg onload=\"console.log('TF-PWNED')\"></svg>",
        "<a href=\"javascript:console.log('TF-PWNED')\">x</a>",
    ]


def _hostile_transcript(payloads: Sequence[str] | None = None) -> Transcript:
    """Every visible field of a transcript holding every payload of the security suites (or
    each of ``payloads``)."""
    pages = _load_test_module("test_render_html")
    chosen = _hostile_payloads() if payloads is None else payloads
    return Transcript([entry for payload in chosen for entry in pages.hostile_transcript(payload)])


#: The hostile tests of a widget spread the payloads over this many widgets, every payload in
#: one of them: a page of 5,000 folds in one widget is slow to draw and to open fold by fold
#: (until ``js/src/folds.js``, each click also copied the widget's whole fold memory: 24 s in
#: CI, 42 s for the comparison of two such runs).
HOSTILE_PARTS = 8


def _hostile_parts() -> list[list[str]]:
    """The payloads of :func:`_hostile_payloads` in :data:`HOSTILE_PARTS` runs, in order."""
    payloads = _hostile_payloads()
    size = -(-len(payloads) // HOSTILE_PARTS)
    return [payloads[start : start + size] for start in range(0, len(payloads), size)]


@functools.cache  # each hostile run of a test reads the payloads again
def _load_test_module(name: str) -> ModuleType:
    path = Path(__file__).parent.parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_turnfold_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_X1_hostile_payloads_display_without_running_anything(lab: Lab) -> None:
    cells = ["import turnfold\nfrom turnfold.widget import TranscriptWidget"]
    parts = _hostile_parts()
    for index, payloads in enumerate(parts):
        path = lab.server.root / f"hostile-{index}.jsonl"
        path.write_text(_hostile_transcript(payloads).dump(), encoding="utf-8")
        cells.append(f"TranscriptWidget(turnfold.load({str(path)!r}))")
    lab.open_notebook("hostile.ipynb", cells, widgets=len(parts))
    views = lab.views()
    assert views.count() == len(parts)
    opened = [lab.open_everything(views.nth(index)) for index in range(len(parts))]
    assert all(count > 100 for count in opened), opened
    lab.page.wait_for_timeout(1000)  # give any injected handler time to fire
    shown = ""
    for index in range(len(parts)):
        lab.assert_inert(views.nth(index))
        shown += views.nth(index).inner_text()
    # the payloads are shown as text, not dropped.
    assert "<script>alert(1)</script>" in shown


def test_W3_light_and_dark_themes_look_native(lab: Lab) -> None:
    lab.page.set_viewport_size({"width": 1100, "height": 1600})  # the opened demo fits
    widget = lab.open_notebook("themes.ipynb", [DEMO_SETUP, "widget"])
    output = widget.locator("xpath=ancestor::div[contains(@class,'jp-OutputArea-output')][1]")
    lab.screenshot("widget-settled-light.png", output)  # P-8: closed from the first paint
    for key in (PROCESS, GROUP, SUMMARY, COMMAND_GROUP):
        lab.toggle(widget, key)
    lab.page.mouse.move(0, 0)
    lab.page.evaluate("() => document.activeElement?.blur()")  # the rail shows on focus
    lab.screenshot("widget-light.png", output)
    light = _colours(widget)
    lab.set_theme(dark=True)
    lab.screenshot("widget-dark.png", output)
    dark = _colours(widget)
    lab.set_theme(dark=False)
    assert _luminance(light["text"]) < 0.3 < _luminance(light["background"])
    assert _luminance(dark["text"]) > 0.5 > _luminance(dark["background"])
    for colours in (light, dark):
        assert _contrast(colours["text"], colours["background"]) >= 7  # WCAG AAA for body text
        assert _contrast(colours["dim"], colours["background"]) >= 3
    # Coloured output (a red FAIL) stays readable on an output's box: 2:1 on JupyterLab
    # Dark's layout-color2.
    assert _contrast(_hex_rgb(dark["red"]), dark["box"]) >= 3


def _colours(widget: Any) -> dict[str, str]:
    return dict(
        widget.evaluate(
            """(root) => {
                let node = root, background = 'rgba(0, 0, 0, 0)';
                while (node && /rgba\\(0, 0, 0, 0\\)|transparent/.test(background)) {
                    background = getComputedStyle(node).backgroundColor;
                    node = node.parentElement;
                }
                const dim = root.querySelector('.tf-head') ?? root;
                const output = root.querySelector('.tf-output');
                return {
                    text: getComputedStyle(root).color,
                    dim: getComputedStyle(dim).color,
                    background,
                    box: output ? getComputedStyle(output).backgroundColor : background,
                    red: getComputedStyle(root).getPropertyValue('--tf-ansi-1').trim(),
                };
            }"""
        )
    )


def _hex_rgb(colour: str) -> str:
    """``#rrggbb`` as ``rgb(r, g, b)``, as the browser gives a computed colour."""
    red, green, blue = (int(colour.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgb({red}, {green}, {blue})"


def _rgb(colour: str) -> tuple[float, float, float]:
    red, green, blue = (float(v) for v in re.findall(r"[\d.]+", colour)[:3])
    return red, green, blue


def _luminance(colour: str) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in _rgb(colour))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def _contrast(first: str, second: str) -> float:
    high, low = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


BIG_OUTPUT_SETUP = """\
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

rec = Recorder()
for n in range(20):
    rec.user(f"Question {n}")
    rec.finish_tool(rec.start_tool("Read", {"file_path": f"m{n}.py"}), f"x = {n}\\n" * 5)
    rec.assistant(f"Answer {n}")
rec.user("Dump the log")
log = "".join(f"line {i:06d} <script>alert(1)</script>\\n" for i in range(120_000)) + "the end\\n"
call = rec.start_tool("Read", {"file_path": "app.log"})
rec.finish_tool(call, log)
rec.assistant("It is long.")
widget = TranscriptWidget(rec.transcript)"""


def test_Q2_closed_content_and_a_5_MB_output_are_fetched_only_when_opened(lab: Lab) -> None:
    widget = lab.open_notebook("big.ipynb", [BIG_OUTPUT_SETUP, "widget"])
    turns = widget.locator(".tf-turn")
    assert turns.count() == 21
    per_turn = widget.evaluate("e => e.querySelectorAll('*').length") / 21
    assert per_turn <= 30, per_turn  # headers and answers only, until something opens
    process = str(turns.last.locator(".tf-process").get_attribute("data-key"))
    lab.toggle(widget, process)  # the process comes from Python now (content on demand)
    summary = turns.last.locator(".tf-summary")  # F-10a: a read sits in its summary row
    summary.wait_for()
    lab.toggle(widget, str(summary.get_attribute("data-key")))
    tool = widget.locator(".tf-tool", has_text="app.log")
    tool.wait_for()
    tool_key = str(tool.get_attribute("data-key"))
    lab.toggle(widget, tool_key)  # and the big output, capped, when its row opens
    show_all = tool.locator(".tf-all")
    show_all.wait_for()
    assert "line 000000" in tool.inner_text()
    assert "the end" not in tool.inner_text()
    show_all.click()  # the whole of it, drawn in blocks frame by frame
    tool.locator(".tf-chunk", has_text="the end").wait_for()
    assert tool.locator(".tf-chunk").count() > 10
    blocks = tool.locator(".tf-chunk").evaluate_all("pres => pres.map((p) => p.textContent)")
    assert all(block.endswith("\n") for block in blocks)  # no line split between two blocks
    assert sum(len(block) for block in blocks) == 120_000 * 38 + len("the end\n")
    assert blocks[-1].endswith("the end\n")
    assert lab.dialogs == []  # the <script> lines stayed text
    assert tool.locator("script").count() == 0


HUGE_ANSWER_SETUP = """\
from turnfold.recording import Recorder
from turnfold.render.content import PROSE_CHARS
from turnfold.widget import TranscriptWidget

rec = Recorder()
rec.user("Write it all out")
lines = 2 * PROSE_CHARS // 38
rec.assistant("".join(f"line {i:06d} <script>alert(1)</script>\\n" for i in range(lines)) + "end")
widget = TranscriptWidget(rec.transcript)"""


def test_X1_a_huge_answer_shows_its_first_part_and_fetches_the_whole_on_request(lab: Lab) -> None:
    widget = lab.open_notebook("huge_answer.ipynb", [HUGE_ANSWER_SETUP, "widget"])
    answer = widget.locator(".tf-answer")
    expect(answer.locator(".tf-omitted")).to_contain_text("more characters not included here")
    assert "line 000000" in answer.inner_text()
    assert "end" not in answer.inner_text().rsplit("alert(1)", 1)[-1]  # the last line is cut
    answer.locator(".tf-all").click()  # the whole text, fetched from the kernel as an output's
    answer.locator(".tf-chunk", has_text="end").last.wait_for()
    blocks = answer.locator(".tf-chunk").evaluate_all("pres => pres.map((p) => p.textContent)")
    lines = 2 * PROSE_CHARS // 38
    assert (
        "".join(blocks)
        == "".join(f"line {i:06d} <script>alert(1)</script>\n" for i in range(lines)) + "end"
    )
    assert lab.dialogs == []  # the <script> lines stayed text
    assert answer.locator("script").count() == 0


def test_N1_Q2_a_fold_whose_content_never_comes_says_it_needs_the_running_notebook(
    lab: Lab,
) -> None:
    # Sent in parts, as a view past the budget is (a small one travels whole, N-1).
    in_parts = "import turnfold.ondemand\nturnfold.ondemand.WHOLE_VIEW_BUDGET = 0\n"
    widget = lab.open_notebook("nokernel.ipynb", [in_parts + DEMO_SETUP, "widget"])
    lab.page.evaluate(
        """async () => {
            const session = window.jupyterapp.shell.currentWidget.sessionContext.session;
            await session.kernel.shutdown();
        }"""
    )
    lab.toggle(widget, PROCESS)  # its rows were never sent, and nobody can send them now
    note = lab.keyed(widget, PROCESS).locator(".tf-loading")
    note.filter(has_text="needs the running notebook").wait_for(timeout=20_000)
    assert note.get_attribute("role") == "status"


# --- H-6 and A-2: an eval sample's outcome; a framework's run followed in the cell -------------

INSPECT_SAMPLE = Path(__file__).parents[1] / "fixtures/harnesses/inspect/mockllm_one-sample.json"
OUTCOME_CELL = f"import turnfold\nturnfold.load({str(INSPECT_SAMPLE)!r})"


def test_H6_an_eval_sample_shows_its_outcome_and_score_above_the_turns(lab: Lab) -> None:
    widget = lab.open_notebook("outcome.ipynb", [OUTCOME_CELL])
    line = widget.locator(".tf-outcome")
    expect(line).to_contain_text("score")
    assert line.get_attribute("data-status") in ("pass", "fail", "error", "incomplete")
    # above the turns, in the widget's head
    assert widget.locator(".tf-notice-slot .tf-outcome").count() == 1


FOLLOW_SETUP = """\
import threading

import turnfold
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import ToolException, tool


class ScriptedChatModel(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b


@tool
def explode(x: str) -> str:
    '''Always fails.'''
    raise ToolException(f"boom: {x}")


explode.handle_tool_error = True


def call(name, args, call_id):
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


replies = [call("add", {"a": 1, "b": 2}, "c1"), call("explode", {"x": "y"}, "c2"),
           AIMessage("1+2=3; explode failed.")]
graph = create_agent(ScriptedChatModel(responses=replies), tools=[add, explode])


resume = threading.Event()


def held(events):  # the run waits after its first call, so it is seen while it runs
    for index, event in enumerate(events):
        yield event
        if index == 0:
            resume.wait(timeout=120)  # set by the test once it saw the run running"""

FOLLOW_RUN = """\
inputs = {"messages": [("user", "Add 1 and 2, then explode")]}
followed = turnfold.follow(held(graph.stream(inputs, stream_mode="updates")), display=False)
threading.Thread(target=lambda: list(followed)).start()  # the run goes on in a worker thread
followed.widget"""


def test_A2_L5_a_framework_s_run_followed_on_a_worker_thread_folds_live_in_the_cell(
    lab: Lab,
) -> None:
    widget = lab.open_notebook("follow.ipynb", [FOLLOW_SETUP, FOLLOW_RUN])
    # drawn while the run is still going (held after its first call): the turn is running
    expect(widget.locator(".tf-head .tf-status").first).to_contain_text("Running", timeout=20_000)
    assert "1+2=3" not in widget.inner_text()
    lab.execute("resume.set()")
    # then the answer arrives in the same view and the run settles
    expect(widget.locator(".tf-answer")).to_contain_text("1+2=3; explode failed.", timeout=30_000)
    expect(widget.locator(".tf-head .tf-status").first).to_contain_text("Completed", timeout=20_000)


# --- rough edges a new user sees (issue 17) -------------------------------------------------------

HEADINGS_SETUP = """\
from turnfold.model import ToolResult
from turnfold.recording import Recorder

rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
rec.user("Ask a sub-agent to check the config")
call = rec.start_tool("Task", {"description": "check the config"})
rec.finish_tool(call, ToolResult(text="# Findings\\n\\n## Port\\n\\nThe port is 3000.",
                                 kind="subagent"))
rec.assistant("# Summary\\n\\nThe config is fine.")
rec.transcript"""


def test_W5_headings_inside_a_turns_work_step_down_and_the_answer_keeps_its_size(
    lab: Lab,
) -> None:
    widget = lab.open_notebook("headings.ipynb", [HEADINGS_SETUP])
    lab.toggle(widget, "process:turn:e0")
    lab.toggle(widget, "e1")  # the sub-agent's row: its result, a Markdown report
    size = "(e) => parseFloat(getComputedStyle(e).fontSize)"
    text = widget.evaluate(size)
    inside = widget.locator(".tf-process h1").first
    expect(inside).to_have_text("Findings")
    answer = widget.locator(".tf-answer h1").first
    expect(answer).to_have_text("Summary")
    assert inside.evaluate(size) <= 1.2 * text  # about the text's size, not 2em
    assert widget.locator(".tf-process h2").first.evaluate(size) <= inside.evaluate(size)
    assert answer.evaluate(size) >= 1.5 * text  # the answer's heading is a heading


LONG_PROMPT_SETUP = """\
from turnfold.recording import Recorder

rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
rec.user("Why does this fail?\\n" + "\\n".join(f"log line {n}" for n in range(200)))
rec.assistant("Line 150 says why.")
rec.transcript"""


def test_W5_a_prompt_of_200_pasted_lines_shows_its_first_lines_and_opens_whole(lab: Lab) -> None:
    widget = lab.open_notebook("long-prompt.ipynb", [LONG_PROMPT_SETUP])
    user = widget.locator(".tf-user").first
    box = user.bounding_box()
    assert box is not None
    assert box["height"] < 400  # a dozen lines, not two hundred, above the turn
    expect(user).not_to_contain_text("log line 150")
    more = user.get_by_role("button", name="Show the whole message (189 more lines)")
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    expect(user).to_contain_text("log line 150")
    expect(user).to_contain_text("log line 199")


LONG_COMMAND_SETUP = """\
from turnfold.recording import Recorder

rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
rec.user("Run the refund tests")
call = rec.start_tool("Bash", {"command": "cd /home/dev/projects/shop/services/payments && "
                               + "python -m pytest tests/integration/test_refunds.py -x -vv " * 3})
rec.finish_tool(call, "1 passed")
call = rec.start_tool("tool_" + "x" * 400, {})
rec.finish_tool(call, "ok")
rec.assistant("They pass.")
rec.transcript"""


def test_F13_a_long_command_cuts_its_description_never_the_tools_name(lab: Lab) -> None:
    widget = lab.open_notebook("long-command.ipynb", [LONG_COMMAND_SETUP])
    lab.toggle(widget, "process:turn:e0")
    lab.open_everything(widget)
    cut = "(e) => e.scrollWidth > e.clientWidth"
    heads = widget.locator(".tf-tool > .tf-tool-head")
    expect(heads).to_have_count(2)
    bash = heads.first
    expect(bash.locator(".tf-name")).to_have_text("Bash")
    assert bash.locator(".tf-desc").evaluate(cut)  # the command gives way ...
    assert not bash.locator(".tf-name").evaluate(cut)  # ... the name had been cut too: "Ba…"
    # A generated 400-character name is still cut, at 60% of its row, which it does not overflow.
    head = heads.nth(1)
    row, name = _box(head), _box(head.locator(".tf-name"))
    assert head.locator(".tf-name").evaluate(cut)
    assert name["width"] <= 0.6 * row["width"] + 1
    assert not head.evaluate(cut)


def _box(locator: Locator) -> FloatRect:
    box = locator.bounding_box()
    assert box is not None, locator
    return box
