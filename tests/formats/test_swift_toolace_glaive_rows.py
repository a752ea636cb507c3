"""Rows of function-calling and SFT datasets that were no run (spec L-2, L-3, C-1, X-2):
ms-swift's older ``query``/``response``/``history`` rows, ToolACE's calls written as a Python
list of calls, glaive-function-calling-v2's raw ``system``/``chat`` text.

The fixtures are real rows: three of ms-swift's test data (``tests/llm/data/swift_multi.jsonl``)
and three of its documentation's preference rows (Apache-2.0); a row of Team-ACE/ToolACE and
two of glaiveai/glaive-function-calling-v2 (both Apache-2.0), as public repositories quote
them; see tests/fixtures/SOURCES.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import openai_chat
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import AssistantText, ToolCall, UserMessage

DATASETS = Path(__file__).parents[1] / "fixtures" / "datasets"
SWIFT_MULTI = DATASETS / "ms-swift_tests_swift-multi_three-rows.jsonl"
SWIFT_DPO = DATASETS / "ms-swift_customization-doc_dpo_three-rows.jsonl"
SWIFT_ALPACA = DATASETS / "ms-swift_tests_alpaca_three-rows.jsonl"
SWIFT_SHAREGPT = DATASETS / "ms-swift_tests_sharegpt_three-rows.jsonl"
TOOLACE = DATASETS / "toolace_data_one-row.json"
GLAIVE = DATASETS / "glaive-function-calling-v2_rows-25475-107105.jsonl"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _said(transcript: turnfold.Transcript) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(type(e).__name__, getattr(e, "text", None), e.meta) for e in transcript.entries]


# --- ms-swift's query / response / history rows ------------------------------------------------


def test_L2_an_ms_swift_query_response_row_is_its_system_history_then_query_and_response() -> None:
    # Each row read "no known transcript structure".
    first, _, third = _rows(SWIFT_MULTI)
    transcript = turnfold.load(first)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.metadata["system"] == "00000"
    assert _said(transcript) == [("UserMessage", "55555", {}), ("AssistantText", "66666", {})]
    transcript = turnfold.load(third)
    assert transcript.warnings == []
    assert [e.text for e in transcript.entries] == [  # type: ignore[attr-defined]
        "AAAAA", "BBBBB", "CCCCC", "DDDDD", "EEEEE", "FFFFF",
    ]  # fmt: skip
    assert [type(e) for e in transcript.entries[-2:]] == [UserMessage, AssistantText]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"user": {"mapped": 3}, "assistant": {"mapped": 3}}
    assert "history" not in transcript.metadata


def test_L2_a_query_response_preference_row_shows_its_rejected_response_marked() -> None:
    row = _rows(SWIFT_DPO)[0]
    transcript = turnfold.load(row)
    assert transcript.warnings == []
    assert transcript.metadata["system"] == "123"  # once: no second copy from the row's key
    assert _said(transcript)[-3:] == [
        ("UserMessage", "11111", {}),
        ("AssistantText", "33333", {"rejected": True}),
        ("AssistantText", "22222", {}),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["rejected"] == {"mapped": 1}
    assert "rejected_response" not in transcript.metadata


def test_L2_a_history_given_as_text_is_read_as_a_literal_never_run() -> None:
    # ms-swift reads a history column of text with ast.literal_eval.
    row = {"query": "q2", "response": "r2", "history": "[['q1', 'r1']]", "label": True}
    transcript = turnfold.load(row)
    assert [e.text for e in transcript.entries] == ["q1", "r1", "q2", "r2"]  # type: ignore[attr-defined]
    assert transcript.metadata["label"] is True
    with pytest.raises(TranscriptFormatError, match="no known transcript structure"):
        turnfold.load({"query": "q", "response": "r", "history": "__import__('os').getcwd()"})


def test_C1_a_file_of_query_response_rows_scans_to_a_row_each() -> None:
    rows = turnfold.scan(SWIFT_MULTI, workers=1).to_pandas()
    assert list(rows["format"]) == ["openai"] * 3
    assert list(rows["turns"]) == [1, 1, 3]
    assert list(rows["warnings"]) == [0, 0, 0]
    says = re.escape("one, under 'query', 'response' and 'history'")
    with pytest.raises(TranscriptFormatError, match=says):
        turnfold.load(SWIFT_MULTI)
    assert turnfold.load(SWIFT_MULTI, sample=1).entries[0].text == "eeeee"  # type: ignore[attr-defined]


def test_L2_an_alpaca_row_is_its_system_history_then_instruction_and_input_and_output() -> None:
    """ms-swift's ``AlpacaPreprocessor``: the query is ``instruction`` and ``input`` on two
    lines (either alone when the other is missing), the response ``output``; then as a
    query-response row (``system``, ``history``). Each row read "no known transcript
    structure"."""
    first, second, third = _rows(SWIFT_ALPACA)
    transcript = turnfold.load(first)
    assert transcript.warnings == []
    assert transcript.metadata["system"] == "system123"
    assert _said(transcript) == [
        ("UserMessage", "aaaaa", {}), ("AssistantText", "bbbbb", {}),
        ("UserMessage", "11111\n22222", {}), ("AssistantText", "33333", {}),
    ]  # fmt: skip
    assert not {"instruction", "input", "output", "history"} & set(transcript.metadata)
    assert [e.text for e in turnfold.load(second).entries] == ["aaaaa", "ccccc"]  # type: ignore[attr-defined]
    assert [e.text for e in turnfold.load(third).entries] == ["AAAAA\nBBBBB", "CCCCC"]  # type: ignore[attr-defined]
    rows = turnfold.scan(SWIFT_ALPACA, workers=1).to_pandas()
    assert list(rows["turns"]) == [2, 1, 1]
    says = re.escape("one, under 'instruction', 'input' and 'output'")
    with pytest.raises(TranscriptFormatError, match=says):
        turnfold.load(SWIFT_ALPACA)


def test_L2_a_sharegpt_row_of_human_and_assistant_turns_is_its_conversation() -> None:
    """ms-swift's ShareGPT rows (``MessagesPreprocessor.sharegpt_to_messages``): each item of
    ``conversation`` is a turn, the user's words and the reply; ``system`` the system prompt.
    Each row read "a file of runs" (its list under 'conversation') and no message."""
    first, _, third = _rows(SWIFT_SHAREGPT)
    transcript = turnfold.load(first)
    assert transcript.warnings == []
    assert transcript.metadata["system"] == "00000"
    assert _said(transcript) == [("UserMessage", "11111", {}), ("AssistantText", "22222", {})]
    transcript = turnfold.load(third)
    assert [(type(e).__name__, e.text) for e in transcript.entries] == [  # type: ignore[attr-defined]
        ("UserMessage", "AAAAA"), ("AssistantText", "BBBBB"), ("UserMessage", "CCCCC"),
        ("AssistantText", "DDDDD"), ("UserMessage", "EEEEE"), ("AssistantText", "FFFFF"),
    ]  # fmt: skip
    assert "conversation" not in transcript.metadata
    # The other names of ms-swift's user and assistant roles, under ``conversations``.
    row = {"conversations": [{"user": "q", "bot": "r"}, {"human": "q2", "gpt": "r2"}]}
    assert [e.text for e in turnfold.load(row).entries] == ["q", "r", "q2", "r2"]  # type: ignore[attr-defined]
    rows = turnfold.scan(SWIFT_SHAREGPT, workers=1).to_pandas()
    assert list(rows["turns"]) == [1, 1, 3]
    assert list(rows["warnings"]) == [0, 0, 0]


def test_L2_a_response_that_is_a_list_is_its_first_the_list_kept() -> None:
    """Hand-made in the shape of the documentation's Query-Response row (``Custom-dataset.md``)
    with the list ``ResponsePreprocessor`` takes the first of (``RANDOM_DATASET_RESPONSE``
    unset): the reply shown is that one, the list kept in the metadata, nothing dropped; an
    alpaca ``output`` likewise."""
    row = {"system": "<system>", "query": "<query2>", "response": ["<response2>", "<other>"],
           "history": [["<query1>", "<response1>"]]}  # fmt: skip
    transcript = turnfold.load(row)
    assert transcript.warnings == []
    assert [e.text for e in transcript.entries] == [  # type: ignore[attr-defined]
        "<query1>", "<response1>", "<query2>", "<response2>",
    ]  # fmt: skip
    assert transcript.metadata["response"] == ["<response2>", "<other>"]
    alpaca = {"instruction": "<query-inst>", "input": "<query-input>", "output": ["<response>"]}
    transcript = turnfold.load(alpaca)
    assert [e.text for e in transcript.entries] == ["<query-inst>\n<query-input>", "<response>"]  # type: ignore[attr-defined]
    assert "output" not in transcript.metadata
    with pytest.raises(TranscriptFormatError, match="no known transcript structure"):
        turnfold.load({"query": "q", "response": []})


# --- ToolACE: calls written as a Python list of calls ------------------------------------------


def test_L3_toolace_calls_written_as_python_are_calls_answered_by_the_tool_turn() -> None:
    # The calls stayed text ("[GetCompetitions()]"), and each tool turn was a call of its own
    # named "", with a warning.
    (row,) = json.loads(TOOLACE.read_text())
    transcript = turnfold.load(TOOLACE, sample=0)
    assert transcript.metadata["source_format"] == "sharegpt"
    assert transcript.warnings == []
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "AssistantText", "UserMessage", "AssistantText",
        "UserMessage", "ToolCall", "AssistantText",
    ]  # fmt: skip
    competitions, image = transcript.tool_calls()
    # A declared name that is no Python name ("Get Manager Placeholder Image") is a call too.
    assert [(c.name, c.args) for c in (competitions, image)] == [
        ("GetCompetitions", {}),
        ("Get Manager Placeholder Image", {"sport": "football"}),
    ]
    results = [json.loads(row["conversations"][at]["value"])[0]["results"] for at in (2, 8)]
    assert [json.loads(c.result.text) if c.result else None for c in (competitions, image)] == (
        results
    )
    assert [c.status for c in (competitions, image)] == ["unknown", "unknown"]  # no error flag
    assert transcript.entries[-1].text == row["conversations"][-1]["value"]  # type: ignore[attr-defined]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["tool"] == {"mapped": 2}


TOOLACE_SYSTEM = (
    "Here is a list of functions in JSON format that you can invoke:\n"
    '[{"name": "get_weather", "parameters": {}}, {"name": "Get Scores", "parameters": {}}]. '
)


def _toolace(reply: str, result: str | None = None) -> turnfold.Transcript:
    conversation = [{"from": "user", "value": "go"}, {"from": "assistant", "value": reply}]
    if result is not None:
        conversation.append({"from": "tool", "value": result})
    return turnfold.load({"system": TOOLACE_SYSTEM, "conversations": conversation})


def test_L3_calls_of_one_list_are_one_batch_each_answered_by_its_named_result() -> None:
    transcript = _toolace(
        '[get_weather(city="Paris", unit="c", days=[1, 2]), Get Scores(date="2023-07-04")]',
        '[{"name": "Get Scores", "results": {"games": 3}}, '
        '{"name": "get_weather", "results": {"temp": 21}}]',
    )
    assert transcript.warnings == []
    weather, scores = transcript.tool_calls()
    assert [(c.name, c.args) for c in (weather, scores)] == [
        ("get_weather", {"city": "Paris", "unit": "c", "days": [1, 2]}),
        ("Get Scores", {"date": "2023-07-04"}),
    ]
    assert weather.batch_id == scores.batch_id
    assert [json.loads(c.result.text) if c.result else None for c in (weather, scores)] == [
        {"temp": 21},
        {"games": 3},
    ]


@pytest.mark.parametrize(
    "reply",
    [
        "[see the docs](https://example.com)",  # prose
        "[1, 2, 3]",
        '[get_weather(city="Paris")] and then some words',  # more than the list
        '[undeclared(city="Paris")]',  # a tool the run does not declare
        '[get_weather("Paris")]',  # a positional argument
        '[get_weather(city=__import__("os").getcwd())]',  # an expression: never evaluated
        "[get_weather(city=town)]",  # a name
        "[get_weather(**options)]",
        '[get_weather(city="Get Scores(")]',  # a declared name's text inside a value
    ],
)
def test_X2_text_that_is_not_wholly_a_list_of_declared_calls_stays_text(reply: str) -> None:
    transcript = _toolace(reply)
    assert transcript.tool_calls() == []
    assert transcript.entries[-1].text == reply  # type: ignore[attr-defined]
    assert transcript.warnings == []


def test_X2_a_written_call_list_without_declared_tools_stays_text() -> None:
    transcript = turnfold.load(
        [{"role": "user", "content": "go"}, {"role": "assistant", "content": "[get_weather()]"}]
    )
    assert transcript.tool_calls() == []
    assert openai_chat.python_calls("[get_weather()]", frozenset()) is None


# --- glaive-function-calling-v2's raw rows -----------------------------------------------------


def test_L2_a_glaive_row_reads_its_turns_its_call_and_the_function_response() -> None:
    # "no known transcript structure".
    row = _rows(GLAIVE)[0]
    transcript = turnfold.load(row)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    assert transcript.metadata["system"].startswith("You are a helpful assistant with access")
    assert [t["name"] for t in transcript.metadata["tools"]] == ["detect_language"]
    assert _said(transcript) == [
        ("UserMessage", "I have a text here and I am not sure what language it is. Can you help "
         "me identify it?", {}),
        ("AssistantText", "Of course, I can help with that. Please provide me with the text.", {}),
        ("UserMessage", 'Here it is - "Je suis un étudiant"', {}),
        ("ToolCall", None, {}),
        ("AssistantText", "The text you provided is in French.", {}),
    ]  # fmt: skip
    (call,) = transcript.tool_calls()
    # The arguments are their JSON text in single quotes, read without evaluating it.
    assert (call.call_id, call.name, call.args) == (
        "call-1",
        "detect_language",
        {"text": "Je suis un étudiant"},
    )
    assert call.result is not None
    assert call.result.text == '{"language": "French"}'
    assert call.status == "unknown"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["tool"] == {"mapped": 1}


def test_L2_a_glaive_row_without_functions_is_its_system_prompt_and_turns() -> None:
    transcript = turnfold.load(_rows(GLAIVE)[1])
    assert transcript.metadata["system"] == (
        "You are a helpful assistant, with no access to external functions."
    )
    assert "tools" not in transcript.metadata
    assert [e.text for e in transcript.entries] == [  # type: ignore[attr-defined]
        "Assign this occupation to the appropriate category\nNurse", "Healthcare",
        "What about an electrician?", "Skilled Trades",
    ]  # fmt: skip


def _glaive(chat: str) -> turnfold.Transcript:
    system = 'SYSTEM: You are helpful -\n{"name": "send_sms", "parameters": {}}\n'
    return turnfold.load({"system": system, "chat": chat})


def test_L3_glaive_calls_with_an_apostrophe_or_object_arguments_and_text_before() -> None:
    transcript = _glaive(
        'USER: Text Bob.\n\n\nASSISTANT: Sure, sending it.\n<functioncall> {"name": '
        '"send_sms", "arguments": \'{"message": "Hey, let\'s meet"}\'} <|endoftext|>\n\n\n'
        'FUNCTION RESPONSE: {"status": "sent"}\n\n\nASSISTANT: <functioncall> {"name": '
        '"send_sms", "arguments": {"message": "Again"}} <|endoftext|>\n\n\n'
        'FUNCTION RESPONSE: {"status": "sent again"}\n\n\nASSISTANT: Done. <|endoftext|>'
    )
    assert transcript.warnings == []
    first, second = transcript.tool_calls()
    assert [(c.call_id, c.args) for c in (first, second)] == [
        ("call-1", {"message": "Hey, let's meet"}),
        ("call-2", {"message": "Again"}),
    ]
    assert [c.result.text if c.result else None for c in (first, second)] == [
        '{"status": "sent"}',
        '{"status": "sent again"}',
    ]
    assert transcript.entries[1].text == "Sure, sending it."  # type: ignore[attr-defined]


def test_X2_a_glaive_call_in_another_syntax_stays_text_and_its_response_is_warned() -> None:
    # glaive's row 17357: the call is written "AI to= name: {...}", no <functioncall>.
    chat = (
        "USER: The lyrics of Imagine?\n\n\nASSISTANT: Sure.\nAI to= get_song_lyrics: "
        '{"song_title": "Imagine"} <|endoftext|>\n\n\nFUNCTION RESPONSE: {"lyrics": "..."}'
    )
    transcript = _glaive(chat)
    assert transcript.entries[1].text == (  # type: ignore[attr-defined]
        'Sure.\nAI to= get_song_lyrics: {"song_title": "Imagine"}'
    )
    (kept,) = transcript.tool_calls()  # the response, kept as a call of its own
    assert kept.result is not None
    assert kept.result.text == '{"lyrics": "..."}'
    assert [w.reason for w in transcript.warnings] == [
        "tool result without a tool_call_id, and no call waits for one"
    ]


def test_C1_a_file_of_glaive_rows_scans_to_a_row_each() -> None:
    rows = turnfold.scan(GLAIVE, workers=1).to_pandas()
    assert list(rows["format"]) == ["openai", "openai"]
    assert list(rows["tool_calls"]) == [1, 0]
    assert list(rows["warnings"]) == [0, 0]
    with pytest.raises(TranscriptFormatError, match=re.escape("under 'system' and 'chat'")):
        turnfold.load(GLAIVE)
    (call,) = turnfold.load(GLAIVE, sample=0).tool_calls()
    assert isinstance(call, ToolCall)
    assert call.name == "detect_language"
