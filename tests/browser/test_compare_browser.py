"""Two runs side by side in real JupyterLab, driven by Chromium (spec B-3; W-3, X-1, Q-2).

Fixtures and helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab
from tests.browser.test_widget_browser import _hostile_parts, _hostile_transcript
from turnfold.model import UserMessage

RUNS = Path(__file__).parents[1] / "fixtures" / "compare"

# The demo session against itself with its second turn's memory write failing: its first turn
# is the same on both sides (closed), its second differs (open from the start).
TWO_DEMOS = """\
import turnfold
from turnfold.samples import demo_session

changed = demo_session()
changed.get("e15").status = "error"
widget = turnfold.compare(demo_session(), changed, names=("before", "after"))"""

FIRST_A, FIRST_B = "a/process:turn:e0", "b/process:turn:e0"


def _side(widget: Locator, side: str) -> Locator:
    return widget.locator(f'.tf-col[data-side="{side}"]')


def test_B3_opening_a_process_opens_its_counterpart_both_ways_by_mouse_and_keyboard(
    lab: Lab,
) -> None:
    widget = lab.open_notebook("compare.ipynb", [TWO_DEMOS, "widget"])
    pairs = widget.locator(".tf-pair")
    assert pairs.count() == 2
    assert [pairs.nth(n).get_attribute("data-status") for n in range(2)] == ["same", "differs"]
    # the same first turn is closed and its work not drawn; the first difference is open.
    assert not lab.expanded(widget, FIRST_A)
    assert not lab.expanded(widget, FIRST_B)
    assert widget.locator(".tf-pair").first.locator(".tf-body").count() == 0
    second = pairs.nth(1).locator(".tf-process > .tf-toggle")
    assert second.evaluate_all("b => b.map(x => x.ariaExpanded)") == ["true", "true"]
    lab.screenshot("compare-demo.png", widget)

    lab.toggle(widget, FIRST_A)  # the mouse, on the left
    expect(lab.header(widget, FIRST_B)).to_have_attribute("aria-expanded", "true")
    expect(_side(widget, "b").locator(f'[data-key="{FIRST_B}"] .tf-group').first).to_be_visible()

    header = lab.header(widget, FIRST_B)  # the keyboard, on the right
    header.focus()
    lab.page.keyboard.press("Enter")
    expect(lab.header(widget, FIRST_A)).to_have_attribute("aria-expanded", "false")
    assert not lab.expanded(widget, FIRST_B)
    lab.page.keyboard.press("Space")
    expect(lab.header(widget, FIRST_A)).to_have_attribute("aria-expanded", "true")

    # P-10: each side keeps its own choices below the process: a group opened on one side only.
    group = _side(widget, "a").locator(".tf-group").first
    lab.toggle(widget, str(group.get_attribute("data-key")))
    other = _side(widget, "b").locator(".tf-group").first
    assert lab.expanded(widget, str(group.get_attribute("data-key")))
    assert not lab.expanded(widget, str(other.get_attribute("data-key")))


EVAL_LOGS = f"""\
import os, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()
import turnfold
widget = turnfold.compare({str(RUNS / "arithmetic_baseline.eval")!r},
                          {str(RUNS / "arithmetic_candidate.eval")!r},
                          names=("baseline", "candidate"))"""


def test_B3_the_table_of_changed_samples_opens_each_pair_by_keyboard(lab: Lab) -> None:
    widget = lab.open_notebook("evals.ipynb", [EVAL_LOGS, "widget"])
    rows = widget.locator(".tf-cmp-table tbody tr")
    expect(rows).to_have_count(2)
    assert rows.first.locator(".tf-change").inner_text() == "Regressed"
    # The first regression is open from the start, its differing turn open on both sides.
    assert rows.first.locator(".tf-cmp-pick").get_attribute("aria-current") == "true"
    expect(widget.locator(".tf-pair")).to_have_attribute("data-status", "differs")
    opened = widget.locator(".tf-pair .tf-process > .tf-toggle")
    assert opened.evaluate_all("b => b.map(x => x.ariaExpanded)") == ["true", "true"]
    assert "42" in _side(widget, "a").inner_text()
    assert "43" in _side(widget, "b").inner_text()

    rows.first.locator(".tf-cmp-pick").focus()
    lab.page.keyboard.press("ArrowDown")  # the arrow keys move, Enter opens
    lab.page.keyboard.press("Enter")
    expect(rows.nth(1).locator(".tf-cmp-pick")).to_have_attribute("aria-current", "true")
    expect(widget.locator(".tf-pair-head")).to_contain_text("lookup 1 → 0, add 0 → 1")
    expect(rows.nth(1).locator(".tf-cmp-pick")).to_be_focused()  # the keyboard stays put
    assert lab.page.locator(".tf-cmp-page[disabled]").count() == 2  # one page: nowhere to go
    lab.screenshot("compare-evals.png", widget)


HOSTILE = "turnfold.compare(turnfold.load({path!r}), turnfold.load({other!r}))"


def test_X1_hostile_content_on_both_sides_stays_inert(lab: Lab) -> None:
    """Every payload in every field on both sides, spread over comparisons of a part of them
    each (``HOSTILE_PARTS``), every fold opened: linked pairs open together (B-3)."""
    cells = ["import turnfold"]
    parts = _hostile_parts()
    for index, payloads in enumerate(parts):
        a = lab.server.root / f"hostile-{index}-a.jsonl"
        b = lab.server.root / f"hostile-{index}-b.jsonl"
        a.write_text(_hostile_transcript(payloads).dump(), encoding="utf-8")
        changed = _hostile_transcript(payloads)
        changed.append(UserMessage(text="<img src=x onerror=\"console.log('TF-PWNED')\">"))
        b.write_text(changed.dump(), encoding="utf-8")  # a turn more: a gap on the other side
        cells.append(HOSTILE.format(path=str(a), other=str(b)))
    lab.open_notebook("hostile-compare.ipynb", cells, widgets=len(parts))
    views = lab.views()
    assert views.count() == len(parts)
    for index in range(len(parts)):
        expect(views.nth(index).locator(".tf-gap")).to_have_count(1)
    opened = [lab.open_everything(views.nth(index)) for index in range(len(parts))]
    assert all(count > 100 for count in opened), opened
    lab.page.wait_for_timeout(1000)  # give any injected handler time to fire
    shown = ""
    for index in range(len(parts)):
        lab.assert_inert(views.nth(index))
        shown += views.nth(index).inner_text()
    assert "<script>alert(1)</script>" in shown  # shown as text, not dropped


AGENTS = Path(__file__).parents[1] / "fixtures" / "agents"
GEMINI = AGENTS / "gemini-stream-json" / "gemini-cli_v0.61.0_stream-json_tools-subagent.jsonl"
QWEN = AGENTS / "qwen-stream-json" / "qwen-code_v0.24.4_stream-json_subagent.jsonl"
# Gemini CLI and Qwen Code on one task: Qwen Code's stream does not print the prompt, and the two
# name some tools apart (list_directory against glob, replace against edit).
TWO_AGENTS = f"""\
import turnfold

widget = turnfold.compare({str(GEMINI)!r}, {str(QWEN)!r}, names=("gemini", "qwen"))"""


def test_B3_two_agents_pair_header_reads_as_python_wrote_it(lab: Lab) -> None:
    widget = lab.open_notebook("compare-agents.ipynb", [TWO_AGENTS, "widget"])
    pairs = widget.locator(".tf-pair")
    expect(pairs).to_have_count(1)  # were two: "only in gemini", then "only in qwen"
    head = " ".join(pairs.first.locator(".tf-pair-head").inner_text().split())
    assert "prompt not recorded in qwen" in head
    assert "list 1 → 0 (list_directory)" in head
    changed = pairs.first.locator(".tf-dp-changed").all_inner_texts()
    assert any(text.startswith("list 1 → 0") for text in changed)
