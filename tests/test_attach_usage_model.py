"""``attach_usage(..., model=)`` (spec U-1): a reasoning or call that carries a response's usage
also names the model that wrote it, which a text holds in its own field."""

from __future__ import annotations

from turnfold.model import AssistantText, Thinking, ToolCall, Transcript, TranscriptChange, Usage
from turnfold.usage import attach_usage

USAGE = Usage(input_tokens=10, output_tokens=2, response_id="r1")


def test_a_call_carrying_the_usage_names_the_model_in_its_meta() -> None:
    transcript = Transcript()
    call = transcript.append(ToolCall(call_id="c1", name="bash", meta={"cost": 0.01}))
    changes: list[TranscriptChange] = []
    transcript.observe(changes.append)
    assert attach_usage([call], USAGE, transcript, model="gpt-5") is call
    assert (call.usage, call.meta) == (USAGE, {"cost": 0.01, "model": "gpt-5"})
    assert [c.fields for c in changes] == [("usage", "meta")]  # one update: a view hears once


def test_a_text_keeps_its_own_model_field_and_meta() -> None:
    text = AssistantText(text="done", model="gpt-5")
    thinking = Thinking(text="hm")
    assert attach_usage([thinking, text], USAGE, model="gpt-5") is text
    assert (text.usage, text.meta, thinking.usage) == (USAGE, {}, None)


def test_without_a_model_or_a_carrier_nothing_else_changes() -> None:
    call = ToolCall(call_id="c1", name="bash")
    assert attach_usage([call], USAGE) is call
    assert call.meta == {}
    assert attach_usage([], USAGE, model="gpt-5") is None
    assert attach_usage([call], None, model="gpt-5") is None
