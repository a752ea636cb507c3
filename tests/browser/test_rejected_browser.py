"""A rejected reply in the notebook view, in real JupyterLab driven by Chromium: muted, with
its label beside it, as the static page and the text draw it (the view model says which).

Fixtures and helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

from labkit import Lab
from playwright.sync_api import expect

REJECTED_SETUP = """\
from turnfold.model import AssistantText, Thinking, ToolCall, Transcript, UserMessage
from turnfold.widget import TranscriptWidget

rejected = {"rejected": True}
widget = TranscriptWidget(Transcript([
    UserMessage(text="How big is the circle?"),
    Thinking(text="Guessing is quicker.", meta=rejected),
    AssistantText(text="About 10.", meta=rejected),
    ToolCall(call_id="c1", name="Bash", description="guess", status="cancelled", meta=rejected),
    AssistantText(text="About 12.57."),
]))"""

COLOUR = "e => getComputedStyle(e).color"


def test_L2_a_rejected_reply_is_muted_with_its_label_and_the_answer_is_not(lab: Lab) -> None:
    widget = lab.open_notebook("rejected.ipynb", [REJECTED_SETUP, "widget"])
    answer = widget.locator(".tf-answer")
    expect(answer).to_have_text("About 12.57.")
    expect(answer.locator(".tf-rlabel")).to_have_count(0)
    lab.toggle(widget, "process:turn:e0")
    text = lab.keyed(widget, "e2")
    expect(text).to_have_class("tf-progress tf-rejected")
    expect(text.locator(".tf-rlabel")).to_have_text("Rejected")
    for key in ("e1", "e3"):  # the reasoning's and the call's title rows say it too
        expect(lab.header(widget, key).locator(".tf-rlabel")).to_have_text("Rejected")
    assert widget.locator(".tf-rlabel").count() == 3
    # Muted: the rejected text is drawn in the dim colour, the answer in the text's own.
    dim = widget.locator(".tf-sep").first.evaluate(COLOUR)
    assert text.locator("p").evaluate(COLOUR) == dim
    assert answer.locator("p").evaluate(COLOUR) != dim
