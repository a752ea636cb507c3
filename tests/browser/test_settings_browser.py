"""The settings panel (T-4) driving transcript widgets in real JupyterLab (issue 5; P-10).

The reader clicks the panel's own controls (ipywidgets drawn by JupyterLab's widget manager), found
by their visible labels and roles; what the transcripts draw is checked in the same page, and what
the kernel holds is read back from a cell's output. Fixtures and helpers: ``conftest.py``.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from tests.browser.labkit import Lab

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

#: How long a click in the panel may take to reach the transcripts: "at once" (T-4).
REDRAW_MS = 3_000
#: Bounded waits for anything else drawn after the cells ran.
WAIT_MS = 10_000

# The demo session's first turn: its process (a stable view-model key) and its first group,
# found by the title a reader sees.
PROCESS = "process:turn:e0"
GROUP_TITLE = "Thought, searched and read files"

# The kernel side of scenario 3: every change any linked object sees to the two children, with
# the state of their parent choice at that moment, and a cell printing the linked values.
STATE_MARKER = "TF-STATE "
RECORD_CHANGES = """\
changes = []

def _record(owner):
    def record(change):
        s = panel.settings
        changes.append([owner, change["name"], change["old"], change["new"],
                        s.transcript_display_mode, s.show_thinking])
    return record

CHILDREN = ["auto_collapse_settled_groups", "auto_collapse_thinking"]
for _owner, _obj in (("panel", panel.settings), ("widget", widget), ("view", widget.settings)):
    _obj.observe(_record(_owner), names=CHILDREN)"""
PRINT_STATE = f"""\
import json
print({STATE_MARKER!r} + json.dumps({{
    "panel": {{n: getattr(panel.settings, n) for n in CHILDREN}},
    "widget": {{n: getattr(widget, n) for n in CHILDREN}},
    "view": {{n: getattr(widget.settings, n) for n in CHILDREN}},
    "mode": panel.settings.transcript_display_mode,
    "show_thinking": panel.settings.show_thinking,
    "changes": changes,
}}))"""


def _setup(*widgets: str, locale: str | None = None) -> str:
    """Imports, the demo transcript in each named widget, and ``panel`` linked to all of them."""
    lines = [
        "from turnfold.samples import demo_session",
        "from turnfold.settings_widget import SettingsWidget",
        "from turnfold.widget import TranscriptWidget",
        "",
    ]
    lines += [f"{name} = TranscriptWidget(demo_session())" for name in widgets]
    arguments = [*widgets, *([f"locale={locale!r}"] if locale else [])]
    lines.append(f"panel = SettingsWidget({', '.join(arguments)})")
    return "\n".join(lines)


def _outputs(lab: Lab, cell: int) -> Locator:
    """The output area of the notebook's cell at ``cell``."""
    panel = lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return lab.page.locator(f"#{panel} .jp-Cell").nth(cell).locator(".jp-OutputArea")


def _panel(lab: Lab, cell: int, first_label: str = "Show thinking") -> Locator:
    """The settings panel shown by the cell at ``cell``, once JupyterLab has drawn it."""
    panel = _outputs(lab, cell)
    expect(panel.get_by_role("checkbox", name=first_label, exact=True)).to_be_visible(
        timeout=WAIT_MS
    )
    return panel


def _checkbox(panel: Locator, label: str) -> Locator:
    return panel.get_by_role("checkbox", name=label, exact=True)


def _mode(panel: Locator, label: str) -> Locator:
    return panel.get_by_role("button", name=label, exact=True)


def _prompts(lab: Lab) -> list[str]:
    """The input prompts of every cell (``[3]:``): they change only when a cell runs."""
    panel = lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return [
        text.strip()
        for text in lab.page.locator(f"#{panel} .jp-Cell .jp-InputPrompt").all_inner_texts()
    ]


def _kernel_state(lab: Lab, cell: int) -> dict[str, Any]:
    """Run the state cell again and parse what it printed."""
    lab.run_cell(cell)
    output = _outputs(lab, cell)
    expect(output).to_contain_text(STATE_MARKER, timeout=WAIT_MS)
    text = output.inner_text()
    line = next(line for line in text.splitlines() if line.startswith(STATE_MARKER))
    return dict(json.loads(line[len(STATE_MARKER) :]))


def _group(widget: Locator) -> Locator:
    """The header of the demo's first group, by the title the reader sees."""
    return widget.get_by_role("button", name=GROUP_TITLE)


def _timed(action: Callable[[], None], check: Callable[[], None]) -> float:
    """Seconds from ``action()`` until ``check()`` (a bounded Playwright expectation) passes."""
    started = time.monotonic()
    action()
    check()
    return time.monotonic() - started


def test_T4_the_mode_control_redraws_the_transcript_at_once_and_keeps_choices(lab: Lab) -> None:
    cells = [_setup("widget"), "widget", "panel"]
    widget = lab.open_notebook("settings-mode.ipynb", cells)
    panel = _panel(lab, 2)
    expect(_mode(panel, "Fully folded")).to_be_visible()

    lab.toggle(widget, PROCESS)  # the reader opens the first turn …
    _group(widget).click()  # … and its first group
    expect(lab.header(widget, PROCESS)).to_have_attribute("aria-expanded", "true")
    expect(_group(widget)).to_have_attribute("aria-expanded", "true")
    prompts = _prompts(lab)
    groups = widget.locator(".tf-group")
    assert groups.count() > 0

    flat = _timed(
        lambda: _mode(panel, "Flat").click(),
        lambda: expect(groups).to_have_count(0, timeout=REDRAW_MS),  # P-4: flat has no groups
    )
    expect(lab.header(widget, PROCESS)).to_have_attribute("aria-expanded", "true")
    # The thinking row that sat in the group is now a direct row of the open process.
    expect(widget.locator(".tf-thinking").first).to_be_visible()

    folded = _timed(
        lambda: _mode(panel, "Fully folded").click(),
        lambda: expect(_group(widget)).to_be_visible(timeout=REDRAW_MS),
    )
    expect(_group(widget)).to_have_attribute("aria-expanded", "true")  # the reader's choice
    expect(lab.header(widget, PROCESS)).to_have_attribute("aria-expanded", "true")
    # Nothing was re-run: the redraws came from the panel, not from a cell.
    assert _prompts(lab) == prompts
    assert flat < REDRAW_MS / 1000
    assert folded < REDRAW_MS / 1000
    print(f"redraw after a mode click: flat {flat:.3f} s, fully folded {folded:.3f} s")


def test_T4_one_panel_hides_thinking_in_every_linked_transcript(lab: Lab) -> None:
    cells = [_setup("first", "second"), "first", "second", "panel"]
    lab.open_notebook("settings-two.ipynb", cells, widgets=2)
    views = [lab.views().nth(0), lab.views().nth(1)]
    panel = _panel(lab, 3)
    for view in views:  # thinking rows are drawn once their disclosures open
        lab.toggle(view, PROCESS)
        _group(view).click()
        expect(view.locator(".tf-thinking").first).to_be_visible()

    show = _checkbox(panel, "Show thinking")
    expect(show).to_be_checked()
    started = time.monotonic()
    show.uncheck()
    for view in views:
        expect(view.locator(".tf-thinking")).to_have_count(0, timeout=REDRAW_MS)
    hidden = time.monotonic() - started
    assert hidden < REDRAW_MS / 1000

    show.check()  # P-9: the stored reasoning comes back in both
    for view in views:
        expect(view.locator(".tf-thinking").first).to_be_visible(timeout=REDRAW_MS)
    print(f"thinking hidden in both transcripts after {hidden:.3f} s")


def test_U3_T4_the_turn_usage_box_adds_tokens_and_cost_to_each_turn_header(lab: Lab) -> None:
    cells = [_setup("widget"), "widget", "panel"]
    widget = lab.open_notebook("settings-usage.ipynb", cells)
    panel = _panel(lab, 2)
    usage = _checkbox(panel, "Show tokens and cost on each turn")
    expect(usage).not_to_be_checked()  # off by default
    headers = widget.locator(".tf-turn .tf-head")
    expect(headers.first).not_to_contain_text("tokens")
    usage.check()
    expect(headers.first).to_contain_text("tokens · ≈ $", timeout=REDRAW_MS)
    expect(headers.nth(1)).not_to_contain_text("tokens")  # the demo's second turn records none
    # The fold indicator still closes the header's line, after the usage (P-7).
    last = headers.first.evaluate("(head) => head.lastElementChild.className")
    assert last == "tf-chev"
    usage.uncheck()
    expect(headers.first).not_to_contain_text("tokens", timeout=REDRAW_MS)


def test_T4_hidden_children_keep_their_values(lab: Lab) -> None:
    cells = [_setup("widget"), RECORD_CHANGES, "widget", "panel", PRINT_STATE]
    lab.open_notebook("settings-hidden.ipynb", cells)
    panel = _panel(lab, 3)
    state_cell = 4
    groups_child = _checkbox(panel, "Auto-collapse settled groups")
    thinking_child = _checkbox(panel, "Auto-collapse finished thinking")
    start = _kernel_state(lab, state_cell)
    assert start["panel"] == {"auto_collapse_settled_groups": True, "auto_collapse_thinking": True}
    assert start["mode"] == "fully-folded"
    assert start["changes"] == []

    # Auto-collapse settled groups, under Process display.
    groups_child.uncheck()
    expect(groups_child).not_to_be_checked()
    _mode(panel, "Flat").click()
    expect(groups_child).to_be_hidden(timeout=REDRAW_MS)
    hidden = _kernel_state(lab, state_cell)
    assert hidden["mode"] == "flat"
    for owner in ("panel", "widget", "view"):
        assert hidden[owner]["auto_collapse_settled_groups"] is False, owner
    _mode(panel, "Command-first").click()
    expect(groups_child).to_be_visible(timeout=REDRAW_MS)
    expect(groups_child).not_to_be_checked()

    # Auto-collapse finished thinking, under Show thinking.
    show = _checkbox(panel, "Show thinking")
    thinking_child.uncheck()
    expect(thinking_child).not_to_be_checked()
    show.uncheck()
    expect(thinking_child).to_be_hidden(timeout=REDRAW_MS)
    hidden = _kernel_state(lab, state_cell)
    assert hidden["show_thinking"] is False
    for owner in ("panel", "widget", "view"):
        assert hidden[owner]["auto_collapse_thinking"] is False, owner
    show.check()
    expect(thinking_child).to_be_visible(timeout=REDRAW_MS)
    expect(thinking_child).not_to_be_checked()

    end = _kernel_state(lab, state_cell)
    assert end["mode"] == "command-first"
    assert end["show_thinking"] is True
    for owner in ("panel", "widget", "view"):
        assert end[owner] == {
            "auto_collapse_settled_groups": False,
            "auto_collapse_thinking": False,
        }, owner
    # Every linked object saw exactly the reader's one untick of each child, made while its
    # parent showed it, and nothing while the child was hidden.
    expected = [
        [owner, name, True, False, mode, True]
        for name, mode in (
            ("auto_collapse_settled_groups", "fully-folded"),
            ("auto_collapse_thinking", "command-first"),
        )
        for owner in ("panel", "widget", "view")
    ]
    assert sorted(end["changes"]) == sorted(expected)


def test_T4_the_panel_speaks_chinese(lab: Lab) -> None:
    cells = [_setup("widget", locale="zh"), "widget", "panel"]
    widget = lab.open_notebook("settings-zh.ipynb", cells)
    panel = _panel(lab, 2, first_label="显示思考")
    for label in ("平铺显示", "命令工具优先", "全折叠显示"):
        expect(_mode(panel, label)).to_be_visible()
    expect(panel).to_contain_text("过程显示")
    child = _checkbox(panel, "已完成小组自动收起")
    expect(child).to_be_visible()
    expect(_checkbox(panel, "已完成思考自动收起")).to_be_visible()
    expect(_checkbox(panel, "在每轮标题显示 token 与费用")).to_be_visible()
    for english in ("Flat", "Command-first", "Fully folded", "Show thinking"):
        expect(panel).not_to_contain_text(english)

    lab.toggle(widget, PROCESS)
    _mode(panel, "平铺显示").click()  # the Chinese controls drive the transcript too
    expect(widget.locator(".tf-group")).to_have_count(0, timeout=REDRAW_MS)
    expect(child).to_be_hidden(timeout=REDRAW_MS)


def test_T4_the_save_button_shows_its_whole_label(lab: Lab) -> None:
    lab.open_notebook("settings-save.ipynb", [_setup("widget"), "widget", "panel"])
    button = _panel(lab, 2).get_by_role("button", name="Save as my defaults")
    expect(button).to_be_visible()
    scroll, client = button.evaluate("(b) => [b.scrollWidth, b.clientWidth]")
    assert scroll <= client  # nothing of the label is cut off ("Save as my de…")
