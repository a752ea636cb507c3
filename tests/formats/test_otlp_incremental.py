"""The OTLP loader's shortcuts for history repeated in every model span (spec H-4, issue 13).

A model span's input repeats the conversation so far, so the loader reuses what it made of the
span before: the messages of a ``gen_ai.input.messages`` text that extends the last one, the
message of an OpenInference index whose attributes did not change, the content counts of an
input that extends the last one counted. Each shortcut must give what reading the span from
scratch gives; these tests compare the two over many random sequences of inputs that grow,
get trimmed, reordered and repeated, as frameworks send them.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from turnfold.formats.traces import otlp
from turnfold.formats.traces.messages import _genai_list, _indexed, _openinference, unflatten
from turnfold.model import Transcript

WORDS = ["ok", "read the file", "Error: exit code 1", "done", "sunny", "ok"]


def _message(rng: random.Random, index: int) -> dict[str, Any]:
    """A GenAI message; a few are equal to others on purpose (repeated prompts and results)."""
    role = rng.choice(["user", "assistant", "tool"])
    text = rng.choice(WORDS) if rng.random() < 0.4 else f"message {index}"
    if role == "tool":
        part = {"type": "tool_call_response", "id": f"call_{index % 7}", "response": text}
    elif role == "assistant" and rng.random() < 0.5:
        part = {"type": "tool_call", "id": f"call_{index}", "name": "get", "arguments": {"q": 1}}
    else:
        part = {"type": "text", "content": text}
    return {"role": role, "parts": [part]}


def _inputs(seed: int) -> list[list[dict[str, Any]]]:
    """Successive model inputs: mostly the last one grown, sometimes trimmed, reordered or a
    new run starting over."""
    rng = random.Random(seed)
    history: list[dict[str, Any]] = []
    out = []
    for step in range(40):
        roll = rng.random()
        if roll < 0.1:
            history = history[: rng.randrange(len(history) + 1)]
        elif roll < 0.15:
            history = history[::-1]
        elif roll < 0.2:
            history = []
        history = history + [_message(rng, step * 10 + i) for i in range(rng.randrange(0, 4))]
        out.append(list(history))
    return out


def _reference_new(fed: list[str], prints: list[str]) -> list[int]:
    """The rule as the loader states it: after the fed history when it is a prefix, else the
    messages whose content was not fed (as many times) before."""
    if prints[: len(fed)] == fed:
        return list(range(len(fed), len(prints)))
    seen = Counter(fed)
    new = []
    for index, fingerprint in enumerate(prints):
        if seen[fingerprint] > 0:
            seen[fingerprint] -= 1
        else:
            new.append(index)
    return new


class _Recorder(otlp._Builder):
    """A builder that records what it is fed instead of building entries."""

    def __init__(self) -> None:
        super().__init__(Transcript(), "<test>")
        self.got: list[dict[str, Any]] = []

    def feed(self, message: Any, line: int) -> None:
        self.got.append(message)


@pytest.mark.parametrize("seed", range(25))
def test_H4_inputs_read_with_the_last_ones_reused_give_what_reading_each_whole_gives(
    seed: int,
) -> None:
    builder = _Recorder()
    history = otlp._History()
    fed: list[str] = []
    expected: list[dict[str, Any]] = []
    for raw in _inputs(seed):
        text = json.dumps(raw)
        messages = _genai_list(text, history)
        assert messages == _genai_list(text)  # the grown text reads as the whole text
        assert messages is not None
        prints = [otlp._fingerprint(m) for m in messages]
        new = _reference_new(fed, prints)
        fed += [prints[i] for i in new]
        expected += [messages[i] for i in new]
        builder.add_new(messages, 1, history)
        # An agent's own prompt and its outputs come in between, without the history.
        extra = [{"role": "user", "content": f"prompt {len(fed)}"}]
        new = _reference_new(fed, [otlp._fingerprint(m) for m in extra])
        fed += [otlp._fingerprint(extra[i]) for i in new]
        expected += [extra[i] for i in new]
        builder.add_new(extra, 1)
    assert builder.got == expected


def _flattened(messages: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    """Chat messages as OpenInference flattens them into span attributes."""
    out: dict[str, Any] = {"llm.model_name": "m", "openinference.span.kind": "LLM"}
    for index, message in enumerate(messages):
        key = f"{prefix}.{index}.message"
        out[f"{key}.role"] = message["role"]
        part = message["parts"][0]
        if part["type"] == "tool_call":
            call = f"{key}.tool_calls.0.tool_call"
            out[f"{call}.id"] = part["id"]
            out[f"{call}.function.name"] = part["name"]
            out[f"{call}.function.arguments"] = json.dumps(part["arguments"])
        else:
            out[f"{key}.content"] = part.get("content", part.get("response"))
        if part["type"] == "tool_call_response":
            out[f"{key}.tool_call_id"] = part["id"]
    return out


@pytest.mark.parametrize("seed", range(25))
def test_H4_openinference_messages_kept_from_the_span_before_equal_those_made_anew(
    seed: int,
) -> None:
    memo: dict[str, Any] = {}
    for raw in _inputs(seed):
        attributes = _flattened(raw, "llm.input_messages")
        fresh = [_openinference(m) for m in unflatten(attributes, "llm.input_messages")]
        # None for a span with no such attribute: the next convention is tried then.
        assert _indexed(attributes, "llm.input_messages", memo) == (fresh if raw else None)
    assert _indexed({"llm.model_name": "m"}, "llm.input_messages", memo) is None
    # Keys that are not indices are not a list of messages, as unflatten reads them.
    odd = {"llm.input_messages.x.message.role": "user"}
    assert _indexed(odd, "llm.input_messages", memo) == []
    assert unflatten(odd, "llm.input_messages") == []


def test_H4_tool_spans_without_ids_settle_the_calls_asked_first_even_after_an_id_is_reused() -> (
    None
):
    """OpenInference tool spans carry no call id: each settles the first call of its name no
    span settled yet. A reused call id replaces its call, which a search resumed from where the
    last one stopped would miss."""
    builder = _Recorder()
    calls = builder.calls()
    from turnfold.model import ToolCall

    first, second, third = (ToolCall(call_id=f"c{i}", name="get", args={}) for i in range(3))
    calls["c0"], calls["c1"] = first, second
    assert builder.unclaimed("get") is first
    builder.claim("span-a", first)
    assert builder.unclaimed("get") is second
    builder.claim("span-b", second)
    assert builder.unclaimed("get") is None
    calls["c0"] = third  # the id reused: its new call is unsettled, and comes first
    assert builder.unclaimed("get") is third
    builder.claim("span-c", third)
    assert builder.unclaimed("get") is None
    builder.claim("span-b", third)  # a span id seen again: the call it settled is free again
    assert builder.unclaimed("get") is second
