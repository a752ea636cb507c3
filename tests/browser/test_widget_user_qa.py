"""A user's QA pass of the transcript widget in real JupyterLab and Chromium (spec P-11): what
a reader searches for in a long output.

Fixtures and helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.labkit import Lab

# A command whose log is longer than the view shows (F-12: the first lines, a "show more",
# and the rest behind "Show the whole output"), and an answer longer than PROSE_CHARS.
LONG_LOG_SETUP = """\
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
rec.user("Why does the build fail?")
log = "\\n".join(f"step {n}: ok" for n in range(500))
log = log.replace("step 420: ok", "step 420: E1234 disk full")
rec.finish_tool(rec.start_tool("Bash", {"command": "make"}), log)
rec.assistant("It ran out of disk. " + "Details follow. " * 20_000 + "Free /var/tmp first.")
widget = TranscriptWidget(rec.transcript)"""

#: The class of the row of the current search hit, among the row's other classes.
CURRENT_HIT = re.compile(r"(^|\s)tf-hit-current(\s|$)")


def test_P11_search_finds_what_is_past_the_shown_part_of_an_output_or_an_answer(
    lab: Lab,
) -> None:
    widget = lab.open_notebook("search-long.ipynb", [LONG_LOG_SETUP, "widget"])
    box = widget.locator(".tf-search-input")
    box.fill("E1234 disk full")  # line 420 of 500: past the first lines and the "show more"
    box.press("Enter")
    expect(widget.locator(".tf-search-count")).to_contain_text("1 match")
    command = lab.keyed(widget, "e1")
    expect(command).to_have_class(CURRENT_HIT)
    assert lab.expanded(widget, "process:turn:e0")  # its path opened (P-11)
    lab.screenshot("user-qa-search-long.png", command)
    # The whole output, fetched on request, holds it: the hit was real.
    command.locator(".tf-all").click()
    expect(command.locator(".tf-whole")).to_contain_text("step 420: E1234 disk full")

    box.fill("Free /var/tmp first")  # the end of an answer past PROSE_CHARS
    box.press("Enter")
    expect(widget.locator(".tf-search-count")).to_contain_text("1 match")
    expect(lab.keyed(widget, "e2")).to_have_class(CURRENT_HIT)
