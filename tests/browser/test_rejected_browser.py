"""A rejected reply in the notebook view, in real JupyterLab driven by Chromium: muted, with
its label beside it, as the static page and the text draw it (the view model says which).

Fixtures and helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.labkit import Lab

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


MARKED_LIVE_SETUP = """\
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.widget import TranscriptWidget

calls = [
    ToolCall(call_id=f"c{n}", name="Read", args={"file_path": f"{n}.py"}, status="success",
             batch_id="b")
    for n in (1, 2)
]
transcript = Transcript([UserMessage(text="Read both"), *calls, AssistantText(text="Done.")])
widget = TranscriptWidget(transcript)"""


def test_L2_a_patch_marks_a_summary_row_rejected_and_takes_the_mark_away(lab: Lab) -> None:
    """The row is patched where it is (its header and its class), not drawn anew."""
    widget = lab.open_notebook("marked-live.ipynb", [MARKED_LIVE_SETUP, "widget"])
    lab.toggle(widget, "process:turn:e0")
    summary = widget.locator(".tf-disc.tf-summary").first
    expect(summary).not_to_have_class("tf-rejected")
    summary.evaluate("e => { e.tfKept = true; }")  # a mark only this very element carries
    for marks, rejected in (('{"rejected": True}', True), ("{}", False)):
        lab.execute(f"for call in calls: transcript.update(call, meta={marks})")
        label = lab.header(widget, str(summary.get_attribute("data-key"))).locator(".tf-rlabel")
        if rejected:
            expect(summary).to_have_class("tf-disc tf-summary tf-rejected")
            expect(label).to_have_text("Rejected")
        else:
            expect(summary).to_have_class("tf-disc tf-summary")
            expect(label).to_have_count(0)
        assert summary.evaluate("e => e.tfKept === true && e.isConnected")
