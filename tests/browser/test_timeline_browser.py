"""The timeline in real JupyterLab, driven by Chromium (spec U-4, P-11, W-3).

Fixtures and helpers are documented in ``conftest.py``; screenshots go to ``tests/artifacts/``.
"""

from __future__ import annotations

from playwright.sync_api import Locator, expect

from tests.browser.labkit import Lab
from tests.browser.test_widget_browser import _luminance
from turnfold.render.viewmodel import ancestor_path, build_view_model
from turnfold.samples import claude_code_session

REAL_SETUP = """\
from turnfold.samples import claude_code_session
from turnfold.widget import TranscriptWidget

widget = TranscriptWidget(claude_code_session())"""

#: A failed command of the second sub-agent: its row sits in a group of the sub-agent's own turn,
#: inside the sub-agent's call, inside a group of the session's one turn.
NESTED_CALL = "e9/e4"

LONG_SETUP = """\
from datetime import datetime, timedelta, timezone
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

start, ticks = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc), iter(range(10**6))
rec = Recorder(clock=lambda: (start + timedelta(seconds=next(ticks))).isoformat())
for turn in range(90):
    rec.user(f"task {turn}")
    for call in range(5):
        done = rec.start_tool("Read" if call % 2 else "Bash", {"file_path": f"f{turn}_{call}"})
        rec.finish_tool(done, "ok", status="error" if call == 4 and turn % 7 == 0 else "success")
    rec.assistant(f"done {turn}")
widget = TranscriptWidget(rec.transcript)"""


def _fill(scope: Locator, selector: str) -> str:
    return str(scope.locator(selector).first.evaluate("e => getComputedStyle(e).fill"))


def test_U4_the_timeline_opens_in_light_and_dark_and_a_bar_reveals_exactly_its_path(
    lab: Lab,
) -> None:
    lab.page.set_viewport_size({"width": 1100, "height": 1400})
    widget = lab.open_notebook("timeline.ipynb", [REAL_SETUP, "widget"])
    timeline = lab.keyed(widget, "timeline")
    assert not lab.expanded(widget, "timeline")  # U-4: closed by default under the header
    assert widget.evaluate(
        """(root) => {
            const [session, timeline, turn] = ['.tf-session', '.tf-timeline', '.tf-turn']
                .map((selector) => root.querySelector(selector));
            const follows = (a, b) => Boolean(a.compareDocumentPosition(b) & 4);
            return follows(session, timeline) && follows(timeline, turn);
        }"""
    )  # under the session header, above the turns
    assert widget.locator(".tf-tl-svg").count() == 0  # laid out and drawn when opened

    lab.toggle(widget, "timeline")
    bars = timeline.locator(".tf-tl-bar")
    expect(bars.first).to_be_visible()
    view = build_view_model(claude_code_session())
    expected = [bar for turn in view["timeline"]["turns"] for bar in turn["bars"] or []]
    assert bars.count() == len(expected)
    assert timeline.locator(".tf-tl-mark").count() == sum(bar["failed"] for bar in expected)
    read, command = _fill(timeline, ".tf-c-read"), _fill(timeline, ".tf-c-command")
    assert read != command
    assert "rgba(0, 0, 0, 0)" not in (read, command)
    output = widget.locator("xpath=ancestor::div[contains(@class,'jp-OutputArea-output')][1]")
    lab.page.mouse.move(0, 0)
    lab.screenshot("timeline-light.png", output)

    lab.set_theme(dark=True)
    lab.screenshot("timeline-dark.png", output)
    assert _fill(timeline, ".tf-c-read") != read  # the dark palette
    band = timeline.locator(".tf-tl-band").first.evaluate("e => getComputedStyle(e).fill")
    assert _luminance(band) < 0.2  # the turn's band is a dark surface
    lab.set_theme(dark=False)

    # P-11: a click on a sub-agent's failed command opens exactly the ancestor path of its row.
    timeline.locator(f'[data-call="{NESTED_CALL}"]').click()
    row = lab.keyed(widget, NESTED_CALL)
    expect(row).to_be_visible()
    path = ancestor_path(view, NESTED_CALL)
    assert path is not None
    assert "e9" in path
    opened = widget.evaluate(
        """(root) => [...root.querySelectorAll('.tf-toggle[aria-expanded="true"]')]
            .map((button) => button.parentElement.dataset.key)"""
    )
    assert sorted(opened) == sorted([*path, "timeline"])
    lab.screenshot("timeline-revealed.png", output)


def test_U4_a_long_session_is_one_bar_per_turn_and_zooms_into_a_turn(lab: Lab) -> None:
    widget = lab.open_notebook("timeline-long.ipynb", [LONG_SETUP, "widget"])
    lab.toggle(widget, "timeline")
    timeline = lab.keyed(widget, "timeline")
    coarse = timeline.locator(".tf-tl-hit")
    expect(coarse.first).to_be_visible()
    assert coarse.count() == 90
    assert "one bar per turn" in timeline.inner_text()
    coarse.nth(7).click()  # the eighth turn, whose last call failed
    zoomed = timeline.locator("[data-call]")
    expect(zoomed.first).to_be_visible()
    assert zoomed.count() == 5
    assert timeline.locator(".tf-tl-mark").count() == 1
    assert "Turn 8" in timeline.locator(".tf-tl-zoomed").inner_text()
    timeline.locator(".tf-tl-back").click()
    expect(coarse.first).to_be_visible()
    assert timeline.locator(".tf-tl-hit").count() == 90
    # Keyboard: a turn's bar zooms with Enter too (W-3).
    coarse.nth(0).focus()
    lab.page.keyboard.press("Enter")
    expect(timeline.locator("[data-call]").first).to_be_visible()


LIVE_SETUP = """\
from datetime import datetime, timedelta, timezone
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

start, ticks = datetime(2026, 3, 2, 14, 0, tzinfo=timezone.utc), iter(range(10**6))
rec = Recorder(clock=lambda: (start + timedelta(seconds=next(ticks))).isoformat())
rec.user("Why is the build red?")
for name in ("a.py", "b.py"):
    rec.finish_tool(rec.start_tool("Read", {"file_path": name}), "x = 1")
widget = TranscriptWidget(rec.transcript)"""


def test_U4_Q3_an_open_timeline_follows_a_live_agent(lab: Lab) -> None:
    widget = lab.open_notebook("timeline-live.ipynb", [LIVE_SETUP, "widget"])
    lab.toggle(widget, "timeline")
    timeline = lab.keyed(widget, "timeline")
    calls = timeline.locator("[data-call]")
    expect(calls).to_have_count(2)
    # At once, before the reader's folds reach the kernel (they are saved after a moment).
    lab.execute(
        'rec.finish_tool(rec.start_tool("Bash", {"command": "make"}), "1 failed", status="error")'
    )
    expect(calls).to_have_count(3)  # the new call, drawn from a patch of its turn
    expect(timeline.locator(".tf-tl-mark")).to_have_count(1)  # and its failure
    assert lab.expanded(widget, "timeline")  # still open: the reader's
