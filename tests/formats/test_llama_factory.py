"""LLaMA-Factory v1 messages datasets (spec L-2, C-1): rows of ``{role, content: [{type,
value}]}`` messages. The fixtures are real rows of hiyouga/LLaMA-Factory's
``data/reason_tool_use_demo_50.jsonl`` and ``data/v1_sft_demo.jsonl`` (Apache-2.0; see
tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import from_object
from turnfold.model import AssistantText, Thinking, ToolCall, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROW = FIXTURES / "messages" / "llama-factory_v1_reason-tool-use_row.json"
REASON_TOOL_USE = FIXTURES / "datasets" / "llama-factory_v1_reason-tool-use_four-rows.jsonl"
SFT_DEMO = FIXTURES / "datasets" / "llama-factory_v1_sft-demo_three-rows.jsonl"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))


def test_L2_a_row_reads_as_prompts_reasoning_calls_their_results_and_answers() -> None:
    transcript = turnfold.load(ROW)
    row = json.loads(ROW.read_text())
    assert transcript.metadata["source_format"] == "llama-factory"
    assert transcript.warnings == []
    assert transcript.metadata["system"] == row["messages"][0]["content"][0]["value"]
    assert [t["function"]["name"] for t in transcript.metadata["tools"]] == ["circle_area"]
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage", "Thinking", "ToolCall", "ToolCall", "Thinking", "AssistantText",
        "UserMessage", "Thinking", "ToolCall", "ToolCall", "ToolCall", "Thinking",
        "AssistantText",
    ]  # fmt: skip
    reasoning = transcript.entries[1]
    assert isinstance(reasoning, Thinking)
    assert reasoning.text.startswith("Okay, the user wants the area of a circle")
    calls = transcript.tool_calls()
    assert [c.call_id for c in calls] == [f"call-{n}" for n in range(1, 6)]
    assert [c.args for c in calls] == [{"radius": r} for r in (1.5, 3, 2.5, 4, 5.5)]
    # The calls of one message are one batch.
    assert calls[0].batch_id == calls[1].batch_id != calls[2].batch_id
    # One text part answers the message's calls, as a list of {name, content}, in order.
    assert [c.result.text if c.result else None for c in calls] == [
        "{'area': 7.0686, 'radius': 1.5, 'unit':'square meters'}",
        "{'area': 28.2743, 'radius': 3, 'unit':'square meters'}",
        "{'area': 19.6349, 'radius': 2.5, 'unit':'square meters'}",
        "{'area': 50.2655, 'radius': 4.0, 'unit':'square meters'}",
        "{'area': 95.0332, 'radius': 5.5, 'unit':'square meters'}",
    ]
    assert {c.status for c in calls} == {"unknown"}  # no error flag is recorded (L-3)
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "system": {"mapped": 1}, "user": {"mapped": 2}, "assistant": {"mapped": 4},
        "tool": {"mapped": 2},
    }  # fmt: skip


def test_C1_a_dataset_is_scanned_a_row_per_run_and_loaded_by_its_place() -> None:
    rows = turnfold.scan(REASON_TOOL_USE, workers=1).to_pandas()
    assert list(rows["key"]) == [f"{REASON_TOOL_USE}#{n}" for n in range(4)]
    assert list(rows["format"]) == ["llama-factory"] * 4
    assert list(rows["tool_calls"]) == [0, 2, 5, 3]
    assert rows["error"].isna().all()
    assert rows["warnings"].sum() == 0
    with pytest.raises(TranscriptFormatError, match=r"a file of runs .*under 'messages'"):
        turnfold.load(REASON_TOOL_USE)
    # A one-call answer in the list's shape is unwrapped too; a tool's own list is kept whole.
    fourth = turnfold.load(REASON_TOOL_USE, sample=3)
    first = fourth.tool_calls()[0]
    assert first.result is not None
    assert first.result.text is not None
    assert json.loads(first.result.text)["data"]["name"] == "ABC Corporation"
    second = turnfold.load(REASON_TOOL_USE, sample=1).tool_calls()[0]
    assert second.result is not None
    assert second.result.text is not None
    assert json.loads(second.result.text)[0]["title"] == "Inception"


def test_C1_a_plain_sft_dataset_keeps_each_message_s_loss_weight() -> None:
    rows = turnfold.scan(SFT_DEMO, workers=1).to_pandas()
    assert list(rows["format"]) == ["llama-factory"] * 3
    assert list(rows["title"]) == ["hi", "hello", "Who are you?"]
    prompt, answer = turnfold.load(SFT_DEMO, sample=2).entries
    assert isinstance(prompt, UserMessage)
    assert prompt.meta == {"loss_weight": 0.0}
    assert isinstance(answer, AssistantText)
    assert answer.text.startswith("I am {{name}}")
    assert answer.meta == {"loss_weight": 1.0}


def _message(role: str, *parts: tuple[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": [{"type": t, "value": v} for t, v in parts]}


def _call(name: str, **arguments: Any) -> tuple[str, str]:
    return ("tool_call", json.dumps({"name": name, "arguments": arguments}))


def test_L2_media_parts_are_lines_in_place_and_results_answer_the_oldest_call() -> None:
    transcript = turnfold.load(
        {
            "messages": [
                _message("user", ("text", "What is in "), ("image_url", "mllm_demo/1.jpg"),
                         ("text", "?")),
                _message("assistant", _call("look", at="left"), _call("look", at="right")),
                # The sharegpt converter's shape: a tool message per observation.
                _message("tool", ("text", "a cat")),
                _message("tool", ("text", "a dog")),
                _message("assistant", ("text", "A cat and a dog.")),
            ],
            "extra_info": "kto",
        }
    )  # fmt: skip
    prompt = transcript.entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == "What is in [image: mllm_demo/1.jpg]?"
    left, right = transcript.tool_calls()
    assert (left.result and left.result.text, right.result and right.result.text) == (
        "a cat", "a dog",
    )  # fmt: skip
    assert transcript.metadata["extra_info"] == "kto"
    assert transcript.warnings == []


def test_L4_what_does_not_pair_or_parse_is_kept_and_said() -> None:
    transcript = turnfold.load(
        [
            _message("user", ("text", "go")),
            _message("assistant", ("tool_call", "look(left)"), ("audio", "x.wav")),
            _message("tool", ("text", "seen"), ("text", "a result no call waits for")),
            {"role": "narrator", "content": []},
        ]
    )
    unparsed, stray = transcript.tool_calls()
    assert isinstance(unparsed, ToolCall)
    assert (unparsed.name, unparsed.args) == ("tool_call", {"text": "look(left)"})
    assert unparsed.result is not None
    assert unparsed.result.text == "seen"
    assert stray.result is not None
    assert stray.result.text == "a result no call waits for"
    reasons = sorted((w.line, w.reason) for w in transcript.warnings)
    assert reasons == [
        (2, "a content part of type 'audio' not read"),
        (2, "a tool_call that is no {name, arguments} JSON"),
        (3, "tool result for an unknown tool_call_id 'result-3.1'"),
        (4, "not a LLaMA-Factory message (role and a list of parts)"),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_L2_detection_tells_v1_messages_from_chat_and_sharegpt_rows() -> None:
    row = json.loads(ROW.read_text())
    assert which_format(from_object(row)) == "llama-factory"
    assert which_format(from_object(row["messages"])) == "llama-factory"
    lines = "\n".join(json.dumps(m) for m in row["messages"])
    assert turnfold.load(lines).metadata["source_format"] == "llama-factory"
    chat = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                         {"role": "assistant", "content": "hello"}]}  # fmt: skip
    assert which_format(from_object(chat)) == "openai"
    sharegpt = {"conversations": [{"from": "human", "value": "hi"}]}
    assert which_format(from_object(sharegpt)) == "sharegpt"
