"""Rows of RL rollout, eval and fine-tuning datasets in shapes beside the plain ``messages`` list
(spec L-2, L-3, C-1, X-2): verifiers' (and prime-rl's) ``results.jsonl`` prompt-completion rows,
ms-swift's agent rows with ``tool_call`` / ``tool_response`` messages, TRL's conversational
preference rows, a JSON array of one row.

The fixtures are real rows: the first two lines of a PrimeIntellect-ai/verifiers eval output
(MIT), two rows of ms-swift's custom-dataset documentation (Apache-2.0) and two of torchtune's
test assets (BSD-3-Clause); see tests/fixtures/SOURCES.md."""

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
VERIFIERS = DATASETS / "verifiers_results_math-python_gpt-5-nano_two-rows.jsonl"
SWIFT = DATASETS / "ms-swift_agent_custom-dataset-doc_two-rows.jsonl"
CHAT_TINY = DATASETS / "torchtune_chat-tiny_one-sharegpt-row.json"
HH_RLHF_TINY = DATASETS / "torchtune_hh-rlhf-tiny_one-chat-pair.json"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- verifiers' results.jsonl: prompt, completion, reward -------------------------------------


def test_C1_a_prompt_completion_rollout_row_reads_as_its_prompt_then_its_completion() -> None:
    # Each row read "no known transcript structure": its run is in two lists, and the scan of
    # the file made no row at all.
    row = _rows(VERIFIERS)[0]
    transcript = turnfold.load(row)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    assert transcript.metadata["system"] == row["prompt"][0]["content"]
    assert [type(e) for e in transcript.entries] == [UserMessage, ToolCall, AssistantText]
    assert transcript.entries[-1].text == row["completion"][-1]["content"]
    # The row's other keys are its metadata; its reward, the run's score.
    assert (transcript.metadata["reward"], transcript.metadata["score"]) == (1.0, 1.0)
    assert transcript.metadata["answer"] == row["answer"]
    assert transcript.metadata["info"]["oai_tools"][0]["function"]["name"] == "python"


def test_L3_a_tool_call_saved_as_json_text_is_a_call_and_a_result_without_an_id_answers_it() -> (
    None
):
    # verifiers writes each tool call as the JSON text of one, and its tool messages with no
    # tool_call_id: the calls were dropped without a word and each result became a call of
    # its own, named "", with a warning.
    row = _rows(VERIFIERS)[0]
    made = json.loads(row["completion"][0]["tool_calls"][0])
    (call,) = turnfold.load(row).tool_calls()
    assert (call.call_id, call.name) == (made["id"], "python")
    assert call.args == json.loads(made["function"]["arguments"])
    assert call.result is not None
    assert call.result.text == row["completion"][1]["content"]
    assert call.status == "unknown"  # Chat records no error flag (L-3)


def test_C1_a_file_of_prompt_completion_rows_scans_to_a_row_each() -> None:
    rows = turnfold.scan(VERIFIERS, workers=1).to_pandas()
    assert list(rows["sample"]) == ["0", "1"]
    assert set(rows["format"]) == {"openai"}
    assert list(rows["tool_calls"]) == [1, 1]
    assert list(rows["score"]) == [1.0, 1.0]
    assert list(rows["warnings"]) == [0, 0]
    with pytest.raises(TranscriptFormatError, match="under 'prompt'"):
        turnfold.load(VERIFIERS)  # many runs: load(path, sample=n) names one
    second = turnfold.load(VERIFIERS, sample=1)
    assert second.metadata["id"] == _rows(VERIFIERS)[1]["id"]


def test_U3_a_verifiers_rollout_lasts_its_generation_time_not_its_scoring() -> None:
    """``generation_ms`` was kept as metadata only: the run's duration was null."""
    rows = turnfold.scan(VERIFIERS, workers=1).to_pandas()
    generated = [row["generation_ms"] / 1000 for row in _rows(VERIFIERS)]
    assert list(rows["duration_s"]) == pytest.approx(generated)  # 16.2 s and 25.3 s
    untimed = {"prompt": [{"role": "user", "content": "2+2?"}], "generation_ms": 0.0}
    assert turnfold.session.session_facts(turnfold.load(untimed)).duration_s is None


def test_C1_a_prompt_completion_row_with_an_empty_completion_is_its_prompt() -> None:
    row = {"prompt": [{"role": "user", "content": "2+2?"}], "completion": [], "reward": 0.0}
    transcript = turnfold.load(row)
    assert [e.text for e in transcript.entries] == ["2+2?"]
    assert transcript.metadata["score"] == 0.0


def test_L3_results_without_ids_answer_the_oldest_waiting_call_of_their_tool() -> None:
    calls = [
        {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "fetch", "arguments": "{}"}},
        {"id": "c", "type": "function", "function": {"name": "search", "arguments": "{}"}},
    ]
    transcript = turnfold.load(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "name": "fetch", "content": "page"},
            {"role": "tool", "content": "first hits"},
            {"role": "tool", "tool_call_id": "c", "content": "second hits"},
            {"role": "tool", "name": "search", "content": "late"},
        ]
    )
    results = {c.call_id: c.result.text if c.result else None for c in transcript.tool_calls()}
    assert results == {"a": "first hits", "b": "page", "c": "second hits", "tool@6": "late"}
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (6, "tool result without a tool_call_id, and no call waits for one")
    ]
    assert transcript.tool_calls()[-1].name == "search"  # the result's own tool


def test_X2_a_tool_call_that_is_no_object_is_warned_about() -> None:
    transcript = turnfold.load(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "ok", "tool_calls": ["not json", 3]},
        ]
    )
    assert transcript.tool_calls() == []
    assert [w.line for w in transcript.warnings] == [2, 2]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["assistant"] == {"warned": 1}


# --- ms-swift's agent rows: tool_call and tool_response messages ------------------------------


def test_L2_ms_swift_tool_call_and_tool_response_messages_are_calls_and_their_results() -> None:
    # Both roles were "unknown role ... skipped", each with a warning: the calls were lost.
    row = _rows(SWIFT)[0]
    transcript = turnfold.load(row)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.args) for c in calls] == [
        ("realtime_aqi", {"city": "北京"}),
        ("realtime_aqi", {"city": "上海"}),
    ]
    assert [c.result.text if c.result else None for c in calls] == [
        row["messages"][3]["content"],
        row["messages"][4]["content"],
    ]
    assert calls[0].batch_id == calls[1].batch_id  # consecutive tool_call messages: one batch
    # The row's tools, one JSON string, are the list it holds.
    assert [t["function"]["name"] for t in transcript.metadata["tools"]] == ["realtime_aqi"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["tool_call"] == {"mapped": 2}
    assert set(transcript.accounting.types("mapped")) <= set(openai_chat.RECORDS.mapped)


def test_L2_ms_swift_row_with_thinking_text_and_an_image_result() -> None:
    row = _rows(SWIFT)[1]
    transcript = turnfold.load(row)
    # Each <image> tag stands for the next file of the row's images, the prompt's and the
    # screenshot the tool returned alike: the tags read as the files they are, not "<image>".
    (prompt,) = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompt.text == "[image: desktop.png]现在几点了？"
    (call,) = transcript.tool_calls()
    assert (call.name, call.args) == ("click", {"x": 105, "y": 132})
    assert call.result is not None
    assert call.result.text == '{"images": "[image: calendar.png]", "status": "success"}'
    assert transcript.entries[-1].text == row["messages"][-1]["content"]
    assert transcript.metadata["images"] == row["images"]


def test_X2_an_ms_swift_tool_call_that_is_no_json_is_kept_with_a_warning() -> None:
    transcript = turnfold.load(
        [
            {"role": "user", "content": "go"},
            {"role": "tool_call", "content": "click(1, 2)"},
            {"role": "tool_response", "content": "ok"},
        ]
    )
    (call,) = transcript.tool_calls()
    assert (call.name, call.args) == ("tool_call", {"text": "click(1, 2)"})
    assert call.result is not None
    assert call.result.text == "ok"
    assert [w.line for w in transcript.warnings] == [2]


def test_C1_ms_swift_rows_scan_to_a_row_each() -> None:
    rows = turnfold.scan(SWIFT, workers=1).to_pandas()
    assert list(rows["format"]) == ["openai", "openai"]
    assert list(rows["tool_calls"]) == [2, 1]
    assert list(rows["warnings"]) == [0, 0]


# --- TRL's conversational preference rows; a JSON array of one row ---------------------------


def test_C1_a_json_array_of_one_dataset_row_is_a_file_of_one_run() -> None:
    # It read "no known transcript structure", and scanned to no row: a file of runs had to
    # hold two.
    assert len(turnfold.scan(CHAT_TINY, workers=1)) == 1
    transcript = turnfold.load(CHAT_TINY, sample=0)
    assert transcript.metadata["source_format"] == "sharegpt"
    assert (
        transcript.entries[-1].text
        == json.loads(CHAT_TINY.read_text())[0]["conversations"][-1]["value"]
    )


def test_L2_a_conversational_preference_pair_reads_its_rejected_reply_before_the_chosen() -> None:
    # {"chosen": [...], "rejected": [...]}, each the whole conversation (TRL's implicit prompt):
    # "no known transcript structure".
    (row,) = json.loads(HH_RLHF_TINY.read_text())
    assert len(turnfold.scan(HH_RLHF_TINY, workers=1)) == 1
    transcript = turnfold.load(HH_RLHF_TINY, sample=0)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    assert [(type(e).__name__, e.text, e.meta) for e in transcript.entries] == [
        ("UserMessage", row["chosen"][0]["content"], {}),
        ("AssistantText", row["rejected"][1]["content"], {"rejected": True}),
        ("AssistantText", row["chosen"][1]["content"], {}),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["rejected/conversation"] == {"ignored": 1}
    assert transcript.accounting.counts["rejected"] == {"mapped": 1}
    assert transcript.accounting.unaccounted == []


def test_L2_a_preference_pair_with_its_prompt_apart_and_calls_in_both_replies() -> None:
    def call(answer: str) -> list[dict]:
        made = {
            "id": "call_0",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"q": answer})},
        }
        return [
            {"role": "assistant", "content": None, "tool_calls": [made]},
            {"role": "tool", "tool_call_id": "call_0", "content": answer},
            {"role": "assistant", "content": f"It is {answer}."},
        ]  # fmt: skip

    row = {
        "prompt": [{"role": "user", "content": "Capital of France?"}],
        "chosen": call("Paris"),
        "rejected": call("Lyon"),
        "score_chosen": 9.0,
    }
    transcript = turnfold.load(row)
    assert transcript.warnings == []
    rejected, chosen = transcript.tool_calls()
    # Both replies call "call_0": the chosen result answers the chosen call only.
    assert (rejected.meta, rejected.result.text if rejected.result else None) == (
        {"rejected": True},
        "Lyon",
    )
    assert (chosen.meta, chosen.result.text if chosen.result else None) == ({}, "Paris")
    assert transcript.entries[-1].text == "It is Paris."
    assert transcript.metadata["score_chosen"] == 9.0


# --- Hermes' calls and results written in the text ----------------------------------------------

#: A row of NousResearch/hermes-function-calling-v1 (``func-calling``), hand-made in the shape
#: its dataset card shows: calls as Python literals in ``<tool_call>`` tags, the results of a
#: turn's calls in one ``tool`` message of ``<tool_response>`` blocks.
HERMES_ROW = {
    "id": "753d8365-0e54-43b1-9514-3f9b819fd31c",
    "conversations": [
        {"from": "system", "value": "You are a function calling AI model. ...\n<tools>\n[]\n"
         "</tools>\nFor each function call return a json object with function name and "
         "arguments within <tool_call> </tool_call> tags with the following schema:\n"
         "<tool_call>\n{'arguments': <args-dict>, 'name': <function-name>}\n</tool_call>\n"},
        {"from": "human", "value": "Book me flights to Auckland, and rent a kayak there."},
        {"from": "gpt", "value": "<tool_call>\n{'arguments': {'destination_city': 'Auckland', "
         "'flexible_cancellation': True}, 'name': 'search_flights'}\n</tool_call>\n<tool_call>\n"
         "{'arguments': {'city': 'Auckland'}, 'name': 'rent_kayak'}\n</tool_call>\n"},
        {"from": "tool", "value": "<tool_response>\n{\"name\": \"rent_kayak\", \"content\": "
         "{\"ok\": true}}\n</tool_response>\n<tool_response>\n{\"name\": \"search_flights\", "
         "\"content\": {\"flights\": [\"AA118\"]}}\n</tool_response>\n"},
        {"from": "gpt", "value": "Flight AA118 is available and your kayak is booked."},
    ],
    "category": "Travel",
}  # fmt: skip


def test_L3_hermes_calls_written_in_a_sharegpt_row_are_calls_answered_by_their_responses() -> None:
    # Each <tool_call> stayed text, and each tool message became a call of its own named "",
    # with a warning.
    transcript = turnfold.load(HERMES_ROW)
    assert transcript.metadata["source_format"] == "sharegpt"
    assert transcript.warnings == []
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "ToolCall", "AssistantText",
    ]  # fmt: skip
    flights, kayak = transcript.tool_calls()
    assert (flights.name, flights.args) == (
        "search_flights",
        {"destination_city": "Auckland", "flexible_cancellation": True},
    )
    assert flights.batch_id == kayak.batch_id
    # The responses name their tools: each answers its own call, whatever their order.
    assert kayak.result is not None
    assert json.loads(kayak.result.text) == {"name": "rent_kayak", "content": {"ok": True}}
    assert flights.result is not None
    assert json.loads(flights.result.text)["content"] == {"flights": ["AA118"]}
    assert transcript.metadata["category"] == "Travel"


def test_L3_hermes_calls_in_chat_messages_of_a_rollout_are_calls() -> None:
    # A rollout saved as Chat messages with the model's raw text (Qwen's chat template writes
    # calls and results so): no tool_calls, no tool_call_id.
    transcript = turnfold.load(
        {
            "messages": [
                {"role": "user", "content": "What is 2**10?"},
                {"role": "assistant", "content": "<think>Use python.</think>\n<tool_call>\n"
                 '{"name": "python", "arguments": {"code": "print(2**10)"}}\n</tool_call>'},
                {"role": "tool", "content": "<tool_response>\n1024\n</tool_response>"},
                {"role": "assistant", "content": "It is 1024."},
            ],
            "reward": 1.0,
        }
    )  # fmt: skip
    assert transcript.warnings == []
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name, call.args) == ("call@2.0", "python", {"code": "print(2**10)"})
    assert call.result is not None
    assert call.result.text == "1024"
    assert [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries[1:]] == [
        ("Thinking", "Use python."),
        ("ToolCall", None),
        ("AssistantText", "It is 1024."),
    ]


def test_X2_a_written_call_that_is_no_call_object_stays_text() -> None:
    text = "Write <tool_call>{'arguments': <args-dict>, 'name': <name>}</tool_call> to call."
    transcript = turnfold.load(
        [{"role": "user", "content": "How do I call?"}, {"role": "assistant", "content": text}]
    )
    assert transcript.tool_calls() == []
    assert transcript.entries[-1].text == text
    assert transcript.warnings == []


def test_X2_a_tool_response_no_call_waits_for_is_kept_with_a_warning() -> None:
    transcript = turnfold.load(
        [
            {"role": "user", "content": "hi"},
            {"role": "tool", "content": "<tool_response>\n{\"name\": \"ls\", \"content\": 1}\n"
             "</tool_response>"},
        ]
    )  # fmt: skip
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name) == ("tool@2.0", "ls")
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (2, "a <tool_response> no call waits for")
    ]


# --- messages that keep their text under "text" ------------------------------------------------


def _swe_agent_message(role: str, text: str | None, system_prompt: str | None = None) -> dict:
    return {"role": role, "text": text, "system_prompt": system_prompt, "mask": role == "ai",
            "cutoff_date": "01.01.2023" if role == "system" else None}  # fmt: skip


#: A row of nebius/SWE-agent-trajectories, hand-made in the shape its dataset card documents.
SWE_AGENT_ROW = {
    "instance_id": "AnalogJ__lexicon-336",
    "model_name": "swe-agent-llama-70b",
    "target": False,
    "exit_status": "submitted (exit_context)",
    "generated_patch": "diff --git a/x b/x",
    "trajectory": [
        _swe_agent_message("system", None, "SETTING: You are an autonomous programmer"),
        _swe_agent_message("user", "We're currently solving the following issue.\nISSUE: bug"),
        _swe_agent_message("ai", "Let's list the files.\n\n```\nls -F\n```"),
        _swe_agent_message("user", "setup.py\nlexicon/\n(Open file: n/a)\nbash-$"),
        _swe_agent_message("ai", "Done.\n\n```\nsubmit\n```"),
    ],
}


def test_L2_an_swe_agent_trajectories_row_reads_its_system_prompt_prompts_and_replies() -> None:
    # Its messages keep their text under "text" (the system's under "system_prompt") and name
    # the assistant "ai": each run read "no known transcript structure".
    transcript = turnfold.load(SWE_AGENT_ROW)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    assert transcript.metadata["system"] == "SETTING: You are an autonomous programmer"
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "AssistantText", "UserMessage", "AssistantText",
    ]  # fmt: skip
    assert transcript.entries[-1].text == SWE_AGENT_ROW["trajectory"][-1]["text"]
    assert (transcript.metadata["instance_id"], transcript.metadata["target"]) == (
        "AnalogJ__lexicon-336",
        False,
    )
    assert transcript.accounting is not None
    assert transcript.accounting.counts["ai"] == {"mapped": 2}


def test_C1_a_file_of_swe_agent_trajectories_rows_scans_to_a_row_each(tmp_path: Path) -> None:
    path = tmp_path / "swe-agent-trajectories.jsonl"
    path.write_text("".join(json.dumps(SWE_AGENT_ROW) + "\n" for _ in range(3)))
    rows = turnfold.scan(path, workers=1).to_pandas()
    assert list(rows["format"]) == ["openai"] * 3
    assert list(rows["turns"]) == [2] * 3


def test_L3_qwen3_coder_calls_written_in_a_rollout_are_calls_with_text_values() -> None:
    # Qwen3-Coder's template writes <function=…> with <parameter=…> tags (SWE rollouts of its
    # models are saved so): the call stayed text.
    text = (
        "Let me look.\n<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n</parameter>\n"
        "<parameter=timeout>\n30\n</parameter>\n</function>\n</tool_call>"
    )
    transcript = turnfold.load(
        [
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": text},
            {"role": "tool", "content": "total 0"},
        ]
    )
    (call,) = transcript.tool_calls()
    # Values stay text: the schema that types them is not the message's.
    assert (call.name, call.args) == ("bash", {"command": "ls -la", "timeout": "30"})
    assert call.result is not None
    assert call.result.text == "total 0"
    assert transcript.entries[1].text == "Let me look."


def test_C1_a_prompt_of_messages_with_a_text_completion_reads_the_text_as_the_reply() -> None:
    # A GRPO log's row: the prompt's messages and the sampled reply as text. The reply was
    # kept only as metadata.
    row = {"prompt": [{"role": "user", "content": "2+2?"}], "completion": "4", "reward": 1.0}
    transcript = turnfold.load(row)
    assert [type(e).__name__ for e in transcript.entries] == ["UserMessage", "AssistantText"]
    assert transcript.entries[-1].text == "4"
    assert "completion" not in transcript.metadata


# --- Salesforce's xLAM function-calling rows ----------------------------------------------------

#: A row of Salesforce/xlam-function-calling-60k, hand-made in the shape of its dataset card's
#: example: ``answers`` and ``tools`` are JSON text.
XLAM_ROW = {
    "id": 0,
    "query": "Where can I find live giveaways for beta access and games?",
    "answers": '[{"name": "live_giveaways_by_type", "arguments": {"type": "beta"}}, '
    '{"name": "live_giveaways_by_type", "arguments": {"type": "game"}}]',
    "tools": '[{"name": "live_giveaways_by_type", "description": "Retrieve live giveaways.", '
    '"parameters": {"type": {"description": "The type of giveaways.", "type": "str"}}}]',
}


def test_L2_an_xlam_row_reads_as_its_query_and_the_calls_that_answer_it() -> None:
    # It read "no known transcript structure", and a file of them scanned to no row.
    transcript = turnfold.load(XLAM_ROW)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    assert transcript.entries[0].text == XLAM_ROW["query"]
    calls = transcript.tool_calls()
    assert [(c.call_id, c.name, c.args) for c in calls] == [
        ("call-1", "live_giveaways_by_type", {"type": "beta"}),
        ("call-2", "live_giveaways_by_type", {"type": "game"}),
    ]
    assert calls[0].batch_id == calls[1].batch_id
    # The dataset records no results: the calls' outcome is unknown, never invented (L-3).
    assert [(c.status, c.result) for c in calls] == [("unknown", None)] * 2
    assert transcript.metadata["tools"][0]["name"] == "live_giveaways_by_type"


def test_C1_a_file_of_xlam_rows_scans_to_a_row_each(tmp_path: Path) -> None:
    path = tmp_path / "xlam.jsonl"
    path.write_text("".join(json.dumps({**XLAM_ROW, "id": n}) + "\n" for n in range(3)))
    rows = turnfold.scan(path, workers=1).to_pandas()
    assert list(rows["tool_calls"]) == [2, 2, 2]
    assert turnfold.load(path, sample=2).metadata["id"] == 2


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"prompt": [{"role": "user", "content": "2+2?"}],
          "completion": [{"role": "assistant", "content": "4"}], "reward": 1.0},
         "each record holds one, under 'prompt' and 'completion'"),
        ({"chosen": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
          "rejected": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "no"}]},
         "each record holds a preference pair, its chosen reply under 'chosen'"),
    ],
)  # fmt: skip
def test_L4_loading_a_file_of_rows_says_how_each_row_holds_its_run(
    row: dict[str, Any], says: str, tmp_path: Path
) -> None:
    """``load()`` of a file of rows says it holds many runs, and how a row holds one: a
    prompt-completion row's run is in two lists, a preference pair's chosen reply is not the
    whole of it."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for _ in range(3)))
    with pytest.raises(TranscriptFormatError, match=re.escape(says)):
        turnfold.load(path)
