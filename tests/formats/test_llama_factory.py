"""LLaMA-Factory v1 messages datasets (spec L-2, C-1): rows of ``{role, content: [{type,
value}]}`` messages, and preference rows (v1 and alpaca). The fixtures are real rows of
hiyouga/LLaMA-Factory's ``data/reason_tool_use_demo_50.jsonl``, ``data/v1_sft_demo.jsonl`` and
``data/v1_dpo_demo.jsonl``, and rows of its ``data/dpo_en_demo.json`` put in the alpaca
columns (Apache-2.0; see tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.turns_shown import turns_shown
from turnfold.formats import which_format
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import from_object
from turnfold.model import AssistantText, Thinking, ToolCall, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROW = FIXTURES / "messages" / "llama-factory_v1_reason-tool-use_row.json"
REASON_TOOL_USE = FIXTURES / "datasets" / "llama-factory_v1_reason-tool-use_four-rows.jsonl"
SFT_DEMO = FIXTURES / "datasets" / "llama-factory_v1_sft-demo_three-rows.jsonl"


pytestmark = pytest.mark.usefixtures("cache_dir")


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


def test_L2_a_tool_call_part_reads_as_a_sharegpt_function_call_does() -> None:
    """LLaMA-Factory's sharegpt converter copies each ``function_call`` JSON into a
    ``tool_call`` part as it is: ``parameters`` in some datasets; a list is one batch."""
    renamed = json.dumps({"name": "area", "parameters": {"radius": 2}})
    listed = json.dumps([{"name": "look", "arguments": {"at": "left"}},
                         {"name": "look", "arguments": {"at": "right"}}])  # fmt: skip
    transcript = turnfold.load(
        [_message("user", ("text", "go")), _message("assistant", ("tool_call", renamed)),
         _message("assistant", ("tool_call", listed))]
    )  # fmt: skip
    area, left, right = transcript.tool_calls()
    assert (area.name, area.args) == ("area", {"radius": 2})
    assert (left.args, right.args) == ({"at": "left"}, {"at": "right"})
    assert left.batch_id == right.batch_id != area.batch_id
    assert transcript.warnings == []


# --- preference (ranking) rows: the chosen reply is the answer, the rejected one shown marked --

V1_PAIR_ROW = FIXTURES / "messages" / "llama-factory_v1_dpo-demo_row.json"
V1_PAIRS = FIXTURES / "datasets" / "llama-factory_v1_dpo-demo_three-rows.jsonl"
ALPACA_PAIRS = (
    FIXTURES / "datasets" / "llama-factory_alpaca_preference_from-dpo-en-demo_three-rows.json"
)


def test_L2_a_v1_preference_row_answers_with_the_chosen_reply_and_shows_the_rejected_one() -> None:
    """A ``DPOSample`` (``data/v1_dpo_demo.jsonl``): the conversation both lists start with is
    read once; the rejected reply is shown, marked, before the chosen one, the answer."""
    row = json.loads(V1_PAIR_ROW.read_text())
    transcript = turnfold.load(V1_PAIR_ROW)
    assert transcript.metadata["source_format"] == "llama-factory"
    assert transcript.metadata["system"] == row["chosen_messages"][0]["content"][0]["value"]
    assert "chosen_messages" not in transcript.metadata
    assert "rejected_messages" not in transcript.metadata
    prompt, rejected, chosen = transcript.entries
    assert isinstance(prompt, UserMessage)
    assert isinstance(rejected, AssistantText)
    assert isinstance(chosen, AssistantText)
    assert rejected.text == row["rejected_messages"][2]["content"][0]["value"]
    assert rejected.meta == {"loss_weight": 1.0, "rejected": True}
    assert chosen.text == row["chosen_messages"][2]["content"][0]["value"]
    assert chosen.meta == {"loss_weight": 1.0}
    assert turns_shown(transcript) == [([rejected.text.strip()], chosen.text)]
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "system": {"mapped": 1}, "user": {"mapped": 1}, "assistant": {"mapped": 1},
        "rejected": {"mapped": 1}, "rejected/conversation": {"ignored": 2},
    }  # fmt: skip


def test_L2_a_rejected_reply_s_call_takes_no_result_of_the_chosen_reply() -> None:
    """The rejected reply's calls never ran: the chosen reply's results answer its own calls."""
    prompt = _message("user", ("text", "How big is the circle?"))
    transcript = turnfold.load({
        "chosen_messages": [
            prompt,
            _message("assistant", _call("circle_area", radius=2)),
            _message("tool", ("text", "12.57")),
            _message("assistant", ("text", "About 12.57.")),
        ],
        "rejected_messages": [prompt, _message("assistant", _call("guess"))],
    })  # fmt: skip
    guess, area = transcript.tool_calls()
    assert (guess.name, guess.result, guess.meta) == ("guess", None, {"rejected": True})
    assert area.result is not None
    assert area.result.text == "12.57"
    assert guess.batch_id != area.batch_id
    assert turns_shown(transcript)[-1][1] == "About 12.57."
    assert transcript.warnings == []


def test_L4_a_rejected_list_with_another_prompt_keeps_its_reply_and_says_so() -> None:
    chosen = [_message("user", ("text", "Say hi")), _message("assistant", ("text", "Hi!"))]
    rejected = [_message("user", ("text", "Say hi!")), _message("assistant", ("text", "No."))]
    transcript = turnfold.load({"chosen_messages": chosen, "rejected_messages": rejected})
    assert [(type(e).__name__, getattr(e, "text", None), e.meta) for e in transcript.entries] == [
        ("UserMessage", "Say hi", {}),
        ("AssistantText", "No.", {"rejected": True}),
        ("AssistantText", "Hi!", {}),
    ]
    (warning,) = transcript.warnings
    assert "another conversation" in warning.reason
    assert transcript.accounting is not None
    assert transcript.accounting.counts["rejected/conversation"] == {"warned": 1}
    assert transcript.accounting.unaccounted == []


def test_L2_an_alpaca_preference_row_reads_as_its_prompt_and_both_replies() -> None:
    """The ``alpaca`` formatting's ranking row: ``system``, ``history`` pairs, the prompt of
    ``instruction`` and ``input`` on two lines, then the rejected and the chosen texts."""
    rows = json.loads(ALPACA_PAIRS.read_text())
    transcript = turnfold.load(rows[2])
    assert transcript.metadata["source_format"] == "llama-factory"
    texts = [(type(e).__name__, e.meta) for e in transcript.entries]
    assert texts == [
        ("UserMessage", {}), ("AssistantText", {}), ("UserMessage", {}), ("AssistantText", {}),
        ("UserMessage", {}), ("AssistantText", {"rejected": True}), ("AssistantText", {}),
    ]  # fmt: skip
    history = [t for pair in rows[2]["history"] for t in pair]
    shown = [e.text for e in transcript.entries if isinstance(e, (UserMessage, AssistantText))]
    assert shown[:4] == [t.strip() for t in history]
    assert turns_shown(transcript)[-1] == ([rows[2]["rejected"].strip()], rows[2]["chosen"].strip())
    assert set(transcript.metadata) == {"source_format"}  # every column read
    system = turnfold.load(rows[1])
    assert system.metadata["system"] == rows[1]["system"]
    both = turnfold.load({"instruction": "Translate:", "input": "Bonjour", "chosen": "Hello",
                          "rejected": "Goodbye"})  # fmt: skip
    prompt = both.entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == "Translate:\nBonjour"


@pytest.mark.parametrize("path", [V1_PAIRS, ALPACA_PAIRS], ids=lambda p: p.name)
def test_C1_a_preference_dataset_is_scanned_a_row_per_pair(path: Path) -> None:
    rows = turnfold.scan(path, workers=1).to_pandas()
    assert list(rows["format"]) == ["llama-factory"] * 3
    assert rows["error"].isna().all()
    last = turnfold.load(path, sample=2).entries
    assert [e.meta.get("rejected", False) for e in last[-2:]] == [True, False]


def test_L2_chosen_messages_alone_is_not_a_preference_row() -> None:
    """Detection claims no row the read refuses: a preference row needs both lists (the
    one list is left to the formats that read a wrapper's messages)."""
    lone = {"chosen_messages": [_message("user", ("text", "hi"))]}
    assert which_format(from_object(lone)) != "llama-factory"
    with pytest.raises(TranscriptFormatError, match="no messages list"):
        turnfold.load(lone, format="llama-factory")


def test_C1_a_file_of_alpaca_pairs_says_what_its_records_hold(tmp_path: Path) -> None:
    """An alpaca pair's ``chosen`` is a reply as text, not the run's messages."""
    row = {"instruction": "Say hi", "chosen": "Hi!", "rejected": "No."}
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(f"{json.dumps(row)}\n{json.dumps(row)}\n")
    with pytest.raises(TranscriptFormatError, match=r"holds a preference pair, its chosen reply"):
        turnfold.load(pairs, format=None)
