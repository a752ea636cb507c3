"""The OpenAI Agents SDK's run items (spec A-1, L-1, L-3, L-4, X-2; issues 13 and 22).

The fixtures under ``tests/fixtures/frameworks/openai-agents/`` were written by the real SDK
(``openai-agents`` 0.24.0, its ``agents.testing.ScriptedModel``, no network) with
``tests/formats/openai_agents_runs.py``; the tests at the end run the SDK again when it is
installed (the ``test`` extra): a fresh run reads the same, and following its stream gives
what loading its result gives. The small item lists built in the tests below are hand-made, in
the shape ``RunState._serialize_item`` writes.

Handoffs nest (issue 22, the rule for handoffs): the agent handed off to writes its steps in
the handoff call's sub-agent, its last text (the run's answer) stays at the top level.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import turnfold
from tests.formats.counters_openai_agents import calls_by_agent
from tests.formats.counters_openai_agents import openai_agents as count_calls
from tests.formats.flat_reads import assert_read_alike, read_both
from tests.formats.nesting import calls_by_id, calls_by_level
from tests.formats.structured_answers import answer_of, structured_answers
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantError,
    AssistantText,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "openai-agents"
STATE = FIXTURES / "openai-agents_v0.24.0_run-state_handoff.json"
ITEMS = FIXTURES / "openai-agents_v0.24.0_run-items_handoff.json"
INPUT_LIST = FIXTURES / "openai-agents_v0.24.0_input-list_handoff.json"
CHAIN = FIXTURES / "openai-agents_v0.24.0_run-state_handoff-chain.json"
PROMPT = "Add 1 and 2, try the exploding tool, then let the writer answer."
ANSWER = "1+2=3, 3+4=7; explode failed."


def _format_of(value: Any) -> str | None:
    source, _ = open_source(value)
    return which_format(source)


def _all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def _item(kind: str, agent: str, raw: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": kind, "raw_item": raw, "agent": {"name": agent}, **extra}


def _call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def _output(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


# --- the real SDK's run state ------------------------------------------------------------


def test_A1_a_saved_run_state_reads_prompt_thinking_calls_handoff_and_answer() -> None:
    transcript = turnfold.load(STATE)
    assert transcript.warnings == []
    assert transcript.metadata["source_format"] == "openai-agents"
    assert transcript.metadata["agent"] == "writer"  # current_agent: the one that answered
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage", "Thinking", "AssistantText", "ToolCall", "ToolCall", "ToolCall",
        "ToolCall", "AssistantText",
    ]  # fmt: skip
    user, thinking, first = transcript.entries[:3]
    assert isinstance(user, UserMessage)
    assert user.text == PROMPT
    assert isinstance(thinking, Thinking)
    assert (thinking.text, thinking.form) == ("First add, then the risky tool.", "summary")
    assert isinstance(first, AssistantText)
    assert first.text == "Adding first."
    assert first.meta["agent"] == "triage"
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == ANSWER
    assert answer.meta["agent"] == "writer"  # the writer's answer, on top where it is read
    calls = calls_by_id(transcript)
    assert [(c.name, c.args, c.meta["agent"]) for c in calls.values()] == [
        ("add", {"a": 1, "b": 2}, "triage"),
        ("explode", {"x": "y"}, "triage"),
        ("research", {"input": "why?"}, "triage"),
        ("transfer_to_writer", {}, "triage"),
        ("add", {"a": 3, "b": 4}, "writer"),
    ]
    assert calls["call_1"].result is not None
    assert calls["call_1"].result.text == "3"
    assert calls["call_4"].result is not None
    assert calls["call_4"].result.text == "7"
    assert calls["call_1"].meta["tool_description"] == "Add two numbers."
    assert len(calls) == count_calls(STATE)
    assert calls_by_level(transcript, "triage") == calls_by_agent(STATE)


def test_L3_the_sdk_s_tool_error_text_is_an_error_and_other_outputs_stay_unknown() -> None:
    calls = calls_by_id(turnfold.load(STATE))
    failed = calls["call_2"]
    assert failed.status == "error"
    assert failed.result is not None
    assert failed.result.text == "An error occurred while running the tool. Please try again."
    # The SDK records no success flag either: a plain output is not claimed a success.
    assert calls["call_1"].status == calls["call_4"].status == "unknown"


def test_L1_an_agent_used_as_a_tool_is_a_sub_agent_whose_steps_are_not_recorded() -> None:
    research = calls_by_id(turnfold.load(STATE))["call_2r"]
    assert research.result is not None
    assert research.result.text == "Because tools fail."
    assert research.subagent is not None
    assert (research.subagent.name, research.subagent.steps_missing) == ("researcher", True)
    assert research.meta["tool_origin"] == {
        "type": "agent_as_tool", "agent_name": "researcher", "agent_tool_name": "research",
    }  # fmt: skip


def test_L4_each_call_keeps_a_tool_origin_of_its_own() -> None:
    """A call's tool origin is a copy of its own: changing it changes neither the saved state
    it was read from nor another call's, whichever way the run was read (a state's records,
    a finished run read flat, a run read item by item)."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    state = json.loads(STATE.read_text(encoding="utf-8"))
    kept = json.loads(STATE.read_text(encoding="utf-8"))
    read = calls_by_id(turnfold.load(state, format="openai-agents"))
    read["call_2r"].meta["tool_origin"]["agent_name"] = "changed"
    assert state == kept
    for result in (
        openai_agents_runs.run(openai_agents_runs.solo, "Go."),
        openai_agents_runs.run(),
    ):
        calls = turnfold.load(result).tool_calls(nested=True)
        origins = [c.meta["tool_origin"] for c in calls if "tool_origin" in c.meta]
        assert len(origins) > 1
        assert len({id(origin) for origin in origins}) == len(origins)


def test_L1_a_handoff_nests_the_new_agent_s_steps_and_leaves_its_answer_on_top() -> None:
    transcript = turnfold.load(STATE)
    handoff = transcript.entries[-2]
    assert isinstance(handoff, ToolCall)
    assert (handoff.call_id, handoff.name, handoff.status) == (
        "call_3", "transfer_to_writer", "success",
    )  # fmt: skip
    agent = handoff.subagent
    assert agent is not None
    assert (agent.name, agent.task, agent.steps_missing) == ("writer", "handoff from triage", False)
    assert (agent.tool_count, agent.subagent_count) == (1, 0)
    assert agent.transcript is not None
    (step,) = agent.transcript.entries  # the writer's call; its answer is not in the fold
    assert isinstance(step, ToolCall)
    assert (step.call_id, step.args, step.meta["agent"]) == ("call_4", {"a": 3, "b": 4}, "writer")
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == ANSWER
    # The call line says it: no notice of the handoff, and the answer is shown once.
    assert not any(isinstance(e, SystemNotice) for e in transcript.entries)
    texts = [e.text for e in _entries(transcript) if isinstance(e, AssistantText)]
    assert texts.count(ANSWER) == 1


def _entries(transcript: Transcript) -> list[Any]:
    """Every entry, those nested in sub-agents included, depth first."""
    out: list[Any] = []
    for entry in transcript.entries:
        out.append(entry)
        if isinstance(entry, ToolCall) and entry.subagent and entry.subagent.transcript:
            out += _entries(entry.subagent.transcript)
    return out


def test_L1_a_handoff_chain_nests_onward_and_a_handoff_back_continues_at_its_level() -> None:
    transcript = turnfold.load(CHAIN)
    assert transcript.warnings == []
    assert transcript.metadata["agent"] == "writer"
    user, add, to_writer, answer = transcript.entries
    assert isinstance(user, UserMessage)
    assert isinstance(add, ToolCall)
    assert (add.name, add.meta["agent"]) == ("add", "triage")
    assert isinstance(to_writer, ToolCall)
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"]) == (
        "1+2=3, 3+4=7 and 3+7=10, checked by the editor.", "writer",
    )  # fmt: skip
    writer = to_writer.subagent
    assert writer is not None
    assert writer.transcript is not None
    assert (writer.name, writer.task) == ("writer", "handoff from triage")
    # The editor's steps inside the writer's, and after the handoff back the writer goes on
    # in its own fold (call_c7).
    shown = [(type(e).__name__, getattr(e, "call_id", None)) for e in writer.transcript.entries]
    assert shown == [("ToolCall", "call_c3"), ("ToolCall", "call_c4"), ("ToolCall", "call_c7")]
    assert (writer.tool_count, writer.subagent_count) == (3, 1)
    to_editor = writer.transcript.entries[1]
    assert isinstance(to_editor, ToolCall)
    editor = to_editor.subagent
    assert editor is not None
    assert editor.transcript is not None
    assert (editor.name, editor.task, editor.tool_count, editor.subagent_count) == (
        "editor", "handoff from writer", 2, 0,
    )  # fmt: skip
    note, check, back = editor.transcript.entries
    assert isinstance(note, AssistantText)
    assert (note.text, note.meta["agent"]) == ("Checking the first sum.", "editor")
    assert isinstance(check, ToolCall)
    assert isinstance(back, ToolCall)
    assert (back.name, back.status) == ("transfer_to_writer", "success")
    # Back to an agent whose fold holds this one: nothing nests under the call.
    assert back.subagent is not None
    assert (back.subagent.name, back.subagent.transcript) == ("writer", None)
    assert not any(isinstance(e, SystemNotice) for e in _entries(transcript))
    calls = calls_by_id(transcript)
    assert len(calls) == count_calls(CHAIN) == 7
    assert calls_by_level(transcript, "triage") == calls_by_agent(CHAIN)
    # Usage per response wherever its entries went.
    assert calls["call_c5"].usage is None  # its response's text carries it
    assert note.usage is not None
    assert note.usage.output_tokens == 5
    assert calls["call_c7"].usage.output_tokens == 7
    assert answer.usage is not None
    assert answer.usage.output_tokens == 8


def test_A1_usage_comes_from_each_model_response() -> None:
    transcript = turnfold.load(STATE)
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in texts if t.usage] == [
        (10, 1),
        (50, 5),
    ]
    calls = calls_by_id(transcript)
    # Responses of calls alone keep their usage on their first entry.
    assert calls["call_2"].usage.input_tokens == 20
    assert calls["call_3"].usage.output_tokens == 3
    assert calls["call_4"].usage.input_tokens == 40
    assert "usage" not in calls["call_1"].meta  # its response's text carries it
    # One response's two calls form one batch, under the response's id.
    assert [c.batch_id for c in calls.values()] == [
        "resp_1", "resp_2", "resp_2", "resp_3", "resp_4",
    ]  # fmt: skip
    # The run's total counts the researcher's request too, which model_responses does not list.
    assert transcript.metadata["run_usage"] == {
        "requests": 6, "input_tokens": 210, "output_tokens": 21, "total_tokens": 231,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("path", "run", "nested"), [(STATE, (210, 21), (100, 10)), (CHAIN, (360, 36), (250, 25))]
)
def test_U1_a_handoff_s_responses_count_once_in_the_session(
    path: Path, run: tuple[int, int], nested: tuple[int, int]
) -> None:
    """``context.usage`` counts the responses of the agents handed off to, which are counted
    under their handoff calls too, and those of the agent used as a tool: the session's tokens
    are the run's, not more, and the sub-agents' are the writer's (40, 4) and the
    researcher's (60, 6)."""
    from turnfold.session import session_facts

    transcript = turnfold.load(path)
    facts = session_facts(transcript)
    assert (facts.tokens["input_tokens"], facts.tokens["output_tokens"]) == run
    sub = facts.subagent_tokens
    assert (sub["input_tokens"], sub["output_tokens"]) == nested
    own = transcript.metadata["usage"]
    assert (own["input_tokens"], own["output_tokens"]) == (run[0] - nested[0], run[1] - nested[1])
    row = turnfold.scan([path]).to_pandas().iloc[0]
    assert (row["input_tokens"], row["output_tokens"]) == run


def test_A1_the_run_items_alone_read_like_the_state() -> None:
    assert _format_of(ITEMS) == "openai-agents"
    items, state = turnfold.load(ITEMS), turnfold.load(STATE)
    assert items.warnings == []
    assert [(c.call_id, c.status, c.meta["agent"]) for c in _all_calls(items)] == [
        (c.call_id, c.status, c.meta["agent"]) for c in _all_calls(state)
    ]
    assert isinstance(items.entries[-1], AssistantText)
    assert items.entries[-1].text == ANSWER  # the answer on top
    assert not any(isinstance(e, UserMessage) for e in items.entries)  # no original_input


def test_A1_detection_prefers_the_run_state_over_the_responses_items_inside_it() -> None:
    assert _format_of(STATE) == "openai-agents"
    document = json.loads(STATE.read_text(encoding="utf-8"))
    renamed = {"new_items" if k == "generated_items" else k: v for k, v in document.items()}
    assert _format_of(renamed) == "openai-agents"
    # to_input_list() is a plain Responses item list: nothing in it is the SDK's own.
    assert _format_of(INPUT_LIST) == "openai-responses"


def test_A1_to_input_list_reads_as_responses_items_without_agents_or_error_flags_but_the_sdks() -> (
    None
):
    transcript = turnfold.load(INPUT_LIST)
    assert transcript.warnings == []
    calls = calls_by_id(transcript)
    assert [(c.name, c.args) for c in calls.values()] == [
        ("add", {"a": 1, "b": 2}),
        ("explode", {"x": "y"}),
        ("research", {"input": "why?"}),
        ("transfer_to_writer", {}),
        ("add", {"a": 3, "b": 4}),
    ]
    # The list has no agents and no error flags: the SDK's default tool-error text is the one
    # sign of a failure, read as by the Agents SDK's own reader.
    assert {c.name: c.status for c in calls.values()} == {
        "add": "unknown", "explode": "error", "research": "unknown", "transfer_to_writer": "unknown"
    }  # fmt: skip
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["Adding first.", "1+2=3, 3+4=7; explode failed."]


# --- shapes the fixture run does not produce (hand-made from RunState._serialize_item) ----


def test_A1_agent_as_tool_approval_and_an_unannounced_agent_change() -> None:
    items = [
        _item(
            "tool_call_item",
            "boss",
            _call("c1", "research", '{"input": "why"}'),
            tool_origin={"type": "agent_as_tool", "agent_name": "researcher"},
        ),
        _item("tool_call_output_item", "boss", _output("c1", "because"), output="because"),
        _item("message_output_item", "helper", _message("Helper here.")),
        _item("tool_approval_item", "helper", _call("c2", "delete"), tool_name="delete"),
    ]
    transcript = turnfold.load(items)
    assert transcript.warnings == []
    research = calls_by_id(transcript)["c1"]
    assert research.args == {"input": "why"}
    assert research.subagent is not None
    assert (research.subagent.name, research.subagent.steps_missing) == ("researcher", True)
    notice, text, pending = transcript.entries[1:]
    assert isinstance(notice, SystemNotice)
    assert (notice.text, notice.subtype) == ("Agent: helper", "agent")
    assert isinstance(text, AssistantText)
    assert text.meta["agent"] == "helper"
    assert isinstance(pending, PendingAction)
    assert (pending.action, pending.call_id) == ("permission", "c2")
    assert pending.text == "Approve delete?"


def test_U1_a_response_s_usage_is_not_lost_when_an_approval_comes_first() -> None:
    """A response whose first call waits for approval and whose second ran: its usage goes
    on the call that ran, as every reader puts it (its last text, else its first reasoning or
    call); it went on the first entry, the approval, which holds none, and was lost."""
    state = {
        "new_items": [
            _item("tool_approval_item", "a", _call("c1", "delete"), tool_name="delete"),
            _item("tool_call_item", "a", _call("c2", "look")),
            _item("tool_call_output_item", "a", _output("c2", "seen")),
        ],
        "raw_responses": [{
            "response_id": "r1",
            "usage": {"requests": 1, "input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
            "output": [_call("c1", "delete"), _call("c2", "look")],
        }],
    }  # fmt: skip
    transcript = turnfold.load(state, format="openai-agents")
    pending, call = transcript.entries
    assert isinstance(pending, PendingAction)
    assert isinstance(call, ToolCall)
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens) == (12, 3)


def test_A1_a_new_prompt_ends_the_turn_of_the_agent_handed_off_to() -> None:
    handoff = _call("h1", "transfer_to_b")
    items = [
        _item("handoff_call_item", "a", handoff),
        _item("handoff_output_item", "a", _output("h1", "{}"),
              source_agent={"name": "a"}, target_agent={"name": "b"}),
        _item("tool_call_item", "b", _call("c1", "look")),
        _item("tool_call_output_item", "b", _output("c1", "seen")),
        _item("message_output_item", "b", _message("First answer.")),
        _item("input_item", "b", {"type": "message", "role": "user", "content": "And then?"}),
        _item("tool_approval_item", "b", _call("c2", "delete"), tool_name="delete"),
    ]  # fmt: skip
    transcript = turnfold.load(items)
    assert transcript.warnings == []
    shown = [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries]
    assert shown == [
        ("ToolCall", None),
        ("AssistantText", "First answer."),  # the first turn's answer, on top
        ("UserMessage", "And then?"),
        ("PendingAction", "Approve delete?"),  # b goes on at the top, as the call said
    ]
    call = transcript.entries[0]
    assert isinstance(call, ToolCall)
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert [c.call_id for c in call.subagent.transcript.tool_calls()] == ["c1"]


def test_L4_a_run_item_it_cannot_read_is_a_warning_naming_the_source_and_line() -> None:
    items = [
        _item("message_output_item", "a", _message("hello")),
        {"type": "tool_call_item", "raw_item": None, "agent": {"name": "a"}},
        _item("handoff_output_item", "a", _output("nope", "{}"), target_agent={"name": "b"}),
        _item("tool_call_item", "a", {"type": "a_future_call", "call_id": "s1"}),
    ]
    transcript = turnfold.load(items)
    reasons = [(w.line, w.reason) for w in transcript.warnings]
    assert (2, "tool_call_item without a readable raw_item skipped") in reasons
    assert (3, "handoff output for an unknown call id 'nope'") in reasons
    # an item type newer than openai-responses knows
    assert (4, "tool_call_item of Responses type 'a_future_call' not read, skipped") in reasons
    assert all(w.source for w in transcript.warnings)
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == ["hello"]


def test_X2_each_run_item_is_accounted_for_by_its_type() -> None:
    items = [
        _item("tool_call_item", "a", _call("c1", "look")),
        _item("mcp_list_tools_item", "a", {"type": "mcp_list_tools", "id": "l1"}),
        _item("tool_call_output_item", "a", _output("c1", "seen")),
        _item("a_future_item", "a", _message("later")),
        {"type": ["not", "a", "name"], "raw_item": {}, "agent": None},
        _item("message_output_item", "a", _message("Seen.")),
    ]
    transcript = turnfold.load(items)
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "tool_call_item": {"mapped": 1},
        "mcp_list_tools_item": {"ignored": 1},
        "tool_call_output_item": {"mapped": 1},
        "a_future_item": {"warned": 1},
        "(object)": {"warned": 1},
        "message_output_item": {"mapped": 1},
    }
    assert transcript.accounting.unaccounted == []
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (4, "run item 'a_future_item' skipped"),
        (5, "run item '(object)' skipped"),
    ]


def test_L4_a_state_without_run_items_is_a_format_error() -> None:
    with pytest.raises(TranscriptFormatError):
        turnfold.load({"generated_items": [1, 2], "model_responses": []}, format="openai-agents")
    with pytest.raises(TranscriptFormatError):
        turnfold.load({"generated_items": [1, 2]})


# --- the installed SDK, run again --------------------------------------------------------


def _summary(transcript: Transcript) -> list[Any]:
    """Each entry's kind and text, each call's name, arguments, status, result and nested
    steps (a sub-agent's own summary)."""
    rows: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result else None
            rows.append(("call", entry.name, entry.args, entry.status, result))
            child = entry.subagent.transcript if entry.subagent else None
            if child is not None:
                rows.append(_summary(child))
        else:
            rows.append((type(entry).__name__, getattr(entry, "text", None)))
    return rows


def test_A1_a_fresh_run_of_the_installed_sdk_reads_like_the_fixtures() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    fresh = openai_agents_runs.documents()
    for name, value in fresh.items():
        shape = name.split("_", 2)[-1]  # input-list_handoff.json, run-state_handoff-chain.json…
        (fixture,) = FIXTURES.glob(f"*_{shape}")
        on_disk = json.loads(fixture.read_text(encoding="utf-8"))
        if fixture.name == name:  # the same release writes the same bytes
            assert json.loads(json.dumps(value)) == on_disk
        assert _summary(turnfold.load(value)) == _summary(turnfold.load(on_disk))


def test_A1_a_run_result_and_its_new_items_read_like_the_saved_state() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    result = openai_agents_runs.run()
    state = turnfold.load(result.to_state().to_json())
    whole, items = turnfold.load(result), turnfold.load(result.new_items)
    for transcript in (whole, items):
        assert transcript.warnings == []
        assert transcript.metadata["source_format"] == "openai-agents"
        assert [r for r in _summary(transcript) if r[0] != "UserMessage"] == [
            r for r in _summary(state) if r[0] != "UserMessage"
        ]
    assert _summary(whole) == _summary(state)  # its input is the prompt
    assert whole.metadata["final_output"] == ANSWER
    assert whole.metadata["agent"] == state.metadata["agent"] == "writer"
    assert whole.metadata["usage"] == state.metadata["usage"]
    usages = [e.usage for e in whole.entries if isinstance(e, AssistantText)]
    assert usages == [e.usage for e in state.entries if isinstance(e, AssistantText)]


def test_A1_a_run_whose_items_released_their_agents_reads_as_before() -> None:
    """``RunItem.release_agent()`` (the SDK calls it once a run is over) leaves the agent
    behind a weak reference: the items are read past the SDK's ``__getattribute__``, and
    the agent still names each item's writer."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    result = openai_agents_runs.run()
    before = turnfold.load(result)
    for item in result.new_items:
        item.release_agent()
    assert all(item.__dict__["agent"] is None for item in result.new_items)
    assert turnfold.load(result) == before
    assert turnfold.load(result).dump() == before.dump()


def test_A1_a_chat_completions_model_s_placeholder_ids_name_no_batch_and_no_response() -> None:
    """A model that is not the Responses API's (Chat Completions, LiteLLM) gives every item the
    id ``__fake_id__`` and every response none: its responses are still told apart by order,
    so each response's calls are one batch of their own and its usage lands on its entries."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    result = openai_agents_runs.run(openai_agents_runs.chat_completions, "Add.")
    made = [item.raw_item for item in result.new_items if item.type != "tool_call_output_item"]
    assert {raw.id for raw in made} == {"__fake_id__"}
    transcript = turnfold.load(result)
    calls = calls_by_id(transcript)
    assert [calls[c].batch_id for c in ("c1", "c2", "c3")] == ["resp-0", "resp-0", "resp-1"]
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [(t.text, t.usage and t.usage.input_tokens) for t in texts] == [
        ("Adding twice.", 10),
        ("Once more.", 20),
        ("3.", 30),
    ]


async def _passed_on(events: Any) -> Any:
    """``events`` passed on by a generator of the test's own: the run's events alone, which
    lead to no run (``turnfold.follow(run.stream_events())`` reads the run off its generator)."""
    async for event in events:
        yield event


def _follow(
    agent: Any = None, prompt: str = PROMPT, *, events_only: bool = False
) -> tuple[turnfold.Follow, Any, list[list[Any]]]:
    """The run followed as it streams: the follow, the finished ``RunResultStreaming`` and
    the top transcript's nesting (:func:`_summary`) after each change its observers heard;
    ``events_only``: its events alone (:func:`_passed_on`)."""
    from tests.formats import openai_agents_runs

    followed: list[turnfold.Follow] = []
    seen: list[list[Any]] = []

    def wrap(run: Any) -> turnfold.Follow:
        events = _passed_on(run.stream_events()) if events_only else run
        follow = turnfold.follow(events, display=False)
        follow.transcript.observe(lambda change: seen.append(_summary(follow.transcript)))
        followed.append(follow)
        return follow

    result = openai_agents_runs.run_streamed(wrap, agent, prompt)
    return followed[0], result, seen


def test_A2_following_the_streamed_run_gives_what_loading_the_result_gives() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    follow, result, _ = _follow()
    live, loaded = follow.transcript, turnfold.load(result)
    assert live.warnings == loaded.warnings == []
    # The same entries, ids, nesting, usage and metadata (final output, totals, last agent).
    assert live == loaded
    assert _summary(live) == _summary(turnfold.load(STATE))
    usages = [e.usage for e in live.entries if isinstance(e, AssistantText)]
    assert usages
    assert all(u is not None for u in usages)


def test_A2_following_a_handoff_chain_nests_live_as_the_load_does() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    follow, result, seen = _follow(openai_agents_runs.chain, openai_agents_runs.CHAIN_PROMPT)
    live, loaded = follow.transcript, turnfold.load(result)
    assert live.warnings == []
    assert live == loaded
    assert _summary(loaded) == _summary(turnfold.load(CHAIN))
    # While the editor worked, the top transcript's observers (a widget) saw its steps in
    # the fold of the writer's: the editor's add call inside the writer's handoff call.
    editor_steps = [
        rows[3][2]
        for rows in seen
        if len(rows) == 4 and len(rows[3]) >= 3 and isinstance(rows[3][2], list)
    ]
    assert any(("call", "add", {"a": 1, "b": 2}, "executing", None) in e for e in editor_steps)
    # The answer arrived inside the writer's fold and ended on top when the run did.
    answer = openai_agents_runs.CHAIN_ANSWER
    assert any(("AssistantText", answer) in rows[3] for rows in seen if len(rows) == 4)
    assert seen[-1][-1] == ("AssistantText", answer)
    assert ("AssistantText", answer) not in seen[-1][3]


def test_A2_the_live_widget_ends_showing_what_a_widget_of_the_loaded_chain_shows() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs
    from turnfold.widget import TranscriptWidget

    widgets: list[TranscriptWidget] = []

    def wrap(run: Any) -> turnfold.Follow:
        follow = turnfold.follow(run, display=False)
        widgets.append(follow.widget)  # shown from the start, as in a notebook
        return follow

    result = openai_agents_runs.run_streamed(
        wrap, openai_agents_runs.chain, openai_agents_runs.CHAIN_PROMPT
    )
    live, fresh = widgets[0], TranscriptWidget(turnfold.load(result))
    try:
        live.flush()
        assert live.view == fresh.view
    finally:
        live.close()
        fresh.close()


def test_A2_following_only_the_events_shows_the_run_without_its_prompt() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    follow, result, _ = _follow(events_only=True)
    live, loaded = follow.transcript, turnfold.load(result)
    assert live.metadata["source_format"] == "openai-agents"  # known by the events' type
    assert _summary(live) == [r for r in _summary(loaded) if r[0] != "UserMessage"]
    assert live.warnings == []  # every call answered: no approval it could have missed


# --- a RunResult read in place (issue 22) ------------------------------------------------


def _copied(result: Any) -> dict[str, Any]:
    """A ``RunResult`` as plain records, every item and response copied: what ``plain()``
    gave before the run was read in place, which the saved state reads like."""
    from turnfold.formats.frameworks import openai_agents

    items, raws = [], {}
    for item in result.new_items:
        record, raw = openai_agents._plain_item(item)
        items.append(record)
        if raw is not None:
            raws[id(raw)] = record["raw_item"]

    def output(item: Any) -> Any:
        if id(item) in raws:
            return raws[id(item)]
        ids = {k: getattr(item, k, None) for k in ("type", "id", "call_id")}
        return {k: v for k, v in ids.items() if isinstance(v, str)}

    responses = [
        {
            "response_id": response.response_id,
            "usage": openai_agents._plain_usage(response.usage),
            "output": [output(item) for item in response.output],
        }
        for response in result.raw_responses
    ]
    return {**openai_agents.plain(result), "new_items": items, "raw_responses": responses}


def _benchmark_run(steps: int) -> Any:
    from benchmarks import frameworks

    return frameworks.CASES["openai-agents"](steps).run()


def test_A1_a_run_result_read_in_place_reads_as_its_copied_records() -> None:
    """Loading a ``RunResult`` reads its items and responses in place; the transcript is the
    one its copied records give: entries, statuses, usage, batches, nesting, warnings and
    accounting alike (the benchmark's run, the handoffs, placeholder ids, agents as tools)."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    runs = [
        _benchmark_run(40),
        openai_agents_runs.run(),
        openai_agents_runs.run_chain(),
    ]
    for result in runs:
        read = turnfold.load(result)
        copied = turnfold.load(_copied(result), format="openai-agents")
        assert read == copied
        assert read.dump() == copied.dump()
        assert read.accounting == copied.accounting
        assert [c.subagent for c in read.tool_calls(nested=True)] == [
            c.subagent for c in copied.tool_calls(nested=True)
        ]


def test_A1_function_calls_with_a_nested_field_are_read_in_place_as_their_records() -> None:
    """A call a program made (the Responses API's ``caller``, a nested object) is read in
    place by its named fields, as a flat call is, and gives what its copied record gives.
    Only the fields a call is read by are tested, not every value of the SDK's object."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from openai.types.responses.response_function_tool_call import CallerProgram

    from turnfold.formats.frameworks import openai_agents

    result = _benchmark_run(6)
    calls = [item.raw_item for item in result.new_items if item.type == "tool_call_item"]
    for n, call in enumerate(calls[::2]):
        call.caller = CallerProgram(caller_id=f"program_{n}", type="program")
    responses = openai_agents._Responses(result.raw_responses, result.new_items)
    read = [responses.call_of(call) for call in calls]
    assert all(found is not None for found in read)  # each read in place, none left out
    assert [found[1] for found in read if found is not None] == list(range(6))  # its response
    loaded = turnfold.load(result)
    copied = turnfold.load(_copied(result), format="openai-agents")
    assert loaded == copied
    assert loaded.dump() == copied.dump()
    assert loaded.accounting == copied.accounting
    assert [c.name for c in loaded.tool_calls()] == ["add"] * 6


# --- a finished run read flat (issue 22) ---------------------------------------------------


def test_A1_a_finished_run_read_flat_reads_as_the_builder_reads_it_item_by_item(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A finished run of one agent is read flat, its calls made already settled: the
    transcript is the one the builder makes item by item, to the last field (entries and ids,
    statuses, failed tools, results as diffs and plans, an agent used as a tool, texts and
    reasoning between calls, batches, usage per response, metadata, warnings and the
    accounting of every record). A run the flat read does not know (handoffs, calls in its
    input) is the builder's alone, and reads as before."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs
    from turnfold.formats.frameworks import openai_agents

    first = openai_agents_runs.run(openai_agents_runs.solo, "Go.")
    again = [*first.to_input_list(), {"role": "user", "content": "Again."}]
    runs = {  # name: (the run, whether it is read flat)
        "benchmark": (_benchmark_run(40), True),
        "solo": (first, True),
        "chat completions": (
            openai_agents_runs.run(openai_agents_runs.chat_completions, "Add."),
            True,
        ),
        "handoff": (openai_agents_runs.run(), False),
        "chain": (openai_agents_runs.run_chain(), False),
        "input with calls": (
            openai_agents_runs.run(openai_agents_runs.solo, again),
            False,
        ),
    }
    for name, (result, flat) in runs.items():
        read, built, taken = read_both(
            monkeypatch, openai_agents, result, tried="_flat_run", declined=False
        )
        assert taken == flat, name
        assert_read_alike(read, built, name)
        assert read.warnings == [], name
        assert [c.subagent for c in read.tool_calls(nested=True)] == [
            c.subagent for c in built.tool_calls(nested=True)
        ], name


def test_A1_random_runs_of_one_agent_read_flat_as_the_builder_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Runs of random shapes (reasoning in each of its forms, texts before and after calls,
    one to three calls per response, failing tools, usage or none) read flat and item by
    item give the same transcript."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    import random

    from tests.formats import openai_agents_runs
    from turnfold.formats.frameworks import openai_agents

    for seed in range(8):
        agent = openai_agents_runs.random_agent(random.Random(seed))
        result = openai_agents_runs.run(lambda agent=agent: agent, "Go.")
        read, built, taken = read_both(
            monkeypatch, openai_agents, result, tried="_flat_run", declined=False
        )
        assert taken, seed
        assert_read_alike(read, built, seed)


# --- ids a run repeats ---------------------------------------------------------------------


def _usage_by_entry(transcript: Transcript) -> dict[str | None, int | None]:
    """The input tokens of each entry that carries usage (nested ones too), by its text or
    call id."""
    return {
        (entry.call_id if isinstance(entry, ToolCall) else getattr(entry, "text", None)): (
            entry.usage.input_tokens
        )
        for entry in _entries(transcript)
        if getattr(entry, "usage", None) is not None
    }


def test_U1_a_text_id_the_run_reuses_takes_no_other_response_s_usage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's own ``assistant_message`` gives every text the id ``scripted-message`` (a
    provider may reuse ids too): each response's usage still goes on its own entries, its
    last text or first call, never on a later response's text with the same id (the last
    response's usage was lost, the run's answer took an earlier one's). Read flat, item by
    item, from the saved state and from copied records alike."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs
    from turnfold.formats.frameworks import openai_agents

    for handoff in (False, True):
        result = openai_agents_runs.run(partial(openai_agents_runs.reused_ids, handoff), "Go.")
        texts = [item.raw_item for item in result.new_items if item.type == "message_output_item"]
        assert {raw.id for raw in texts} == {"scripted-message"}
        assert len(texts) == 4
        read, built, taken = read_both(
            monkeypatch, openai_agents, result, tried="_flat_run", declined=False
        )
        assert taken == (not handoff)  # one agent: read flat
        assert_read_alike(read, built, handoff)
        assert _usage_by_entry(read) == openai_agents_runs.REUSED_CARRIERS, handoff
        saved = turnfold.load(result.to_state().to_json())
        assert _usage_by_entry(saved) == openai_agents_runs.REUSED_CARRIERS, handoff
        copied = turnfold.load(_copied(result), format="openai-agents")
        assert_read_alike(read, copied, handoff)


def test_A2_following_a_run_that_reuses_text_ids_puts_each_usage_where_a_load_does() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    for handoff in (False, True):
        follow, result, _ = _follow(partial(openai_agents_runs.reused_ids, handoff), "Go.")
        live, loaded = follow.transcript, turnfold.load(result)
        assert live.warnings == []
        assert live == loaded, handoff
        assert _usage_by_entry(live) == openai_agents_runs.REUSED_CARRIERS, handoff


def test_U1_random_runs_that_reuse_ids_keep_every_response_s_usage_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random runs whose texts share one id and whose reasoning items share another: read
    flat and item by item alike, and every response's usage is on exactly one entry."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    import random

    from tests.formats import openai_agents_runs
    from turnfold.formats.frameworks import openai_agents

    for seed in range(8):
        agent = partial(openai_agents_runs.random_agent, random.Random(seed), reuse_ids=True)
        result = openai_agents_runs.run(agent, "Go.")
        read, built, taken = read_both(
            monkeypatch, openai_agents, result, tried="_flat_run", declined=False
        )
        assert taken, seed
        assert_read_alike(read, built, seed)
        counted = [r.usage.input_tokens for r in result.raw_responses]
        carried = [e.usage.input_tokens for e in _entries(read) if getattr(e, "usage", None)]
        assert sorted(carried) == sorted(counted), seed


# --- approvals (human in the loop) ---------------------------------------------------------


def _approvals(transcript: Transcript) -> list[Any]:
    """Each call's id, status, result and recorded approval, and each pending action's."""
    rows: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result else None
            rows.append((entry.call_id, entry.status, result, entry.meta.get("approval")))
        elif isinstance(entry, PendingAction):
            rows.append(("pending", entry.call_id, entry.text))
    return rows


def test_A2_following_a_run_that_stops_for_an_approval_ends_with_it_pending() -> None:
    """No event carries the approval a run stops for (the SDK streams no
    ``ToolApprovalItem``): when the stream ends, the run's ``interruptions`` tell it, so the
    followed run ends waiting for it, as its load does: the call ``confirming`` (as every
    adapter shows a call awaiting approval), never settled ``unknown`` as a call the stream
    left without an output is (it was, once confirming: the followed run and its load
    differed)."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    follow, result, _ = _follow(openai_agents_runs.approval, openai_agents_runs.APPROVAL_PROMPT)
    assert [item.raw_item.call_id for item in result.interruptions] == ["c2"]
    live, loaded = follow.transcript, turnfold.load(result)
    assert live.warnings == []
    assert live == loaded
    assert _approvals(live) == [
        ("c1", "unknown", "contents of /a", None),
        ("c2", "confirming", None, None),
        ("pending", "c2", "Approve delete?"),
    ]


def test_A2_following_only_the_events_of_a_run_stopped_for_approval_says_it_is_unshown() -> None:
    """The run's events alone carry the call a run stops for (``tool_called``) but not
    the approval (the SDK streams no ``ToolApprovalItem``; only the run's ``interruptions``
    hold it), nor that the run stopped for it: the call is left without an output, as a
    loop that broke off leaves one. So the followed transcript shows no pending action and
    says once, at its end, that approvals are not shown and to follow the run itself; not
    when the run raised (the follow ends it with the error), which stopped for none."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from agents import UserError
    from tests.formats import openai_agents_runs
    from turnfold.formats.frameworks.openai_agents import UNSHOWN_APPROVALS

    follow, result, _ = _follow(
        openai_agents_runs.approval, openai_agents_runs.APPROVAL_PROMPT, events_only=True
    )
    assert [item.raw_item.call_id for item in result.interruptions] == ["c2"]
    live = follow.transcript
    assert _approvals(live) == [
        ("c1", "unknown", "contents of /a", None),
        ("c2", "unknown", None, None),
    ]
    assert [(w.reason, w.source) for w in live.warnings] == [(UNSHOWN_APPROVALS, "<follow>")]
    assert "turnfold.follow(result)" in UNSHOWN_APPROVALS
    # A run that raised stopped for no approval, though it leaves a call without an output.
    followed: list[turnfold.Follow] = []

    def wrap(run: Any) -> turnfold.Follow:
        followed.append(turnfold.follow(_passed_on(run.stream_events()), display=False))
        return followed[-1]

    with pytest.raises(UserError, match="Error running tool strict"):
        openai_agents_runs.run_streamed(wrap, openai_agents_runs.strict)
    failed = followed[0].transcript
    assert [c.result for c in failed.tool_calls()][1:] == [None]
    assert isinstance(failed.entries[-1], AssistantError)
    assert failed.warnings == []


def test_A1_a_call_awaiting_approval_is_confirming_in_the_run_and_its_state() -> None:
    """The stopped run, its state and the state's JSON all show the call the run stopped for
    ``confirming``, with the action that asks for it."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    stopped = openai_agents_runs.run(
        openai_agents_runs.approval, openai_agents_runs.APPROVAL_PROMPT
    )
    for value in (stopped, stopped.to_state(), stopped.to_state().to_json()):
        transcript = turnfold.load(value)
        assert transcript.warnings == [], type(value)
        assert _approvals(transcript) == [
            ("c1", "unknown", "contents of /a", None),
            ("c2", "confirming", None, None),
            ("pending", "c2", "Approve delete?"),
        ], type(value)


async def _until(condition: Callable[[], bool]) -> None:
    """Wait (a few seconds at most) until ``condition()`` holds, the run going on meanwhile."""
    import asyncio

    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run did not get there")


def _follow_resumed(
    approve: bool, *, late: bool = False, texts: bool = False
) -> tuple[Transcript, Any]:
    """:func:`openai_agents_runs.run_approved`'s run (of ``approval(texts)``) resumed streamed
    from its decided state and followed (``late``: only after the resumed run went on, its
    events waiting): the followed transcript and the finished ``RunResultStreaming``."""
    import asyncio

    from agents import Runner
    from tests.formats import openai_agents_runs

    agent = openai_agents_runs.approval(texts)
    _, state = openai_agents_runs.run_approved(approve, resume=False, agent=agent)
    followed: list[turnfold.Follow] = []

    async def main() -> Any:
        result = Runner.run_streamed(agent, state)
        if late:  # the run resumes and asks the model again before it is followed
            await _until(lambda: len(result.raw_responses) == 2)
        followed.append(turnfold.follow(result, display=False))
        async for _ in followed[0]:
            pass
        return result

    result = openai_agents_runs.on_thread(lambda: asyncio.run(main()))
    return followed[0].transcript, result


def test_A2_following_a_resumed_run_shows_the_items_it_resumed_with() -> None:
    """A run resumed from its state (``Runner.run_streamed(agent, state)``) streams only what
    it adds; the items and responses of the state are the run's from the start, and the
    followed transcript holds them, as a load of the finished run does (it held only the
    new ones, and warned of an output for an unknown call). Followed late, the events of
    what the run holds already are not read twice."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    for approve, status, answer in (
        (True, "unknown", "deleted /a"),
        (False, "cancelled", "Tool execution was not approved."),
    ):
        for late in (False, True):
            live, result = _follow_resumed(approve, late=late)
            loaded = turnfold.load(result)
            assert live.warnings == [], (approve, late)
            assert live == loaded, (approve, late)
            assert _approvals(live) == [
                ("c1", "unknown", "contents of /a", None),
                ("c2", status, answer, "approved" if approve else "rejected"),
            ], (approve, late)
            assert _usage_by_entry(live) == {"c1": 10, "Done with /a.": 20}, (approve, late)


def test_A2_a_resumed_run_whose_texts_share_an_id_puts_each_usage_where_a_load_does() -> None:
    """The responses a resumed run holds reuse a text id (the SDK's default), and so does
    the response it streams next: that response's text takes its own usage, not that of the
    last earlier response naming the id (the followed run's reading of repeated ids stops
    with the responses it held)."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    live, result = _follow_resumed(True, texts=True)
    loaded = turnfold.load(result)
    assert live.warnings == []
    assert live == loaded
    assert _usage_by_entry(live) == {"Reading.": 10, "Deleting.": 20, "Done with /a.": 30}


def test_A2_a_run_followed_after_it_went_on_reads_each_response_once() -> None:
    """Followed only once it went on (its first response's items made, its second streamed,
    its tool holding it), a run's items so far are read from the run and their events
    skipped, and so is the completed response they belong to: read again, it gave the
    next response's call (no id names either: a Chat Completions model) its usage."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    import asyncio
    import threading

    from agents import Runner
    from tests.formats import openai_agents_runs

    gate = threading.Event()
    followed: list[turnfold.Follow] = []

    async def main() -> Any:
        result = Runner.run_streamed(openai_agents_runs.gated(gate), "Add, then wait.")
        await _until(lambda: len(result.raw_responses) == 1)
        followed.append(turnfold.follow(result, display=False))
        gate.set()
        async for _ in followed[0]:
            pass
        return result

    result = openai_agents_runs.on_thread(lambda: asyncio.run(main()))
    live, loaded = followed[0].transcript, turnfold.load(result)
    assert live.warnings == []
    assert live == loaded
    assert _usage_by_entry(live) == {"c1": 10, "Waiting.": 20, "Done.": 30}


def test_A1_an_approval_the_user_decided_is_pending_no_longer() -> None:
    """A run resumed after the user's decision keeps the approval item, then the call's
    output: nothing waits any more. The call keeps the decision the SDK's state records:
    approved (the tool ran), or rejected (it never ran: ``cancelled``, the SDK's rejection
    text its result). The run, its saved state and a state decided but not yet resumed
    read alike."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    for approve, status, answer in (
        (True, "unknown", "deleted /a"),
        (False, "cancelled", "Tool execution was not approved."),
    ):
        decision = "approved" if approve else "rejected"
        _, resumed = openai_agents_runs.run_approved(approve)
        assert "tool_approval_item" in [item.type for item in resumed.new_items]
        expected = [
            ("c1", "unknown", "contents of /a", None),
            ("c2", status, answer, decision),
        ]
        for value in (resumed, resumed.to_state().to_json()):
            transcript = turnfold.load(value)
            assert transcript.warnings == []
            assert _approvals(transcript) == expected, (decision, type(value))
            assert isinstance(transcript.entries[-1], AssistantText)
        _, decided = openai_agents_runs.run_approved(approve, resume=False)
        assert _approvals(turnfold.load(decided.to_json())) == [
            ("c1", "unknown", "contents of /a", None),
            ("c2", "unknown", None, decision),  # decided, not yet run
        ]


def test_A1_an_approval_whose_call_was_answered_is_pending_no_longer() -> None:
    """Run items alone record no decision: an approval whose call's output follows (or came
    before it) was decided all the same (``decided``); one whose call has none still waits.
    A state that records a rejection of every call of the tool makes an answered call
    ``cancelled``, whichever came first."""
    rejected = "Tool execution was not approved."
    items = [
        _item("tool_call_item", "a", _call("c1", "delete")),
        _item("tool_call_item", "a", _call("c2", "delete")),
        _item("tool_call_item", "a", _call("c3", "delete")),
        _item("tool_call_output_item", "a", _output("c3", rejected)),
        _item("tool_approval_item", "a", _call("c1", "delete"), tool_name="delete"),
        _item("tool_approval_item", "a", _call("c2", "delete"), tool_name="delete"),
        _item("tool_approval_item", "a", _call("c3", "delete"), tool_name="delete"),
        _item("tool_call_output_item", "a", _output("c1", rejected)),
    ]
    transcript = turnfold.load(items)
    assert transcript.warnings == []
    assert _approvals(transcript) == [
        ("c1", "unknown", rejected, "decided"),
        ("c2", "confirming", None, None),  # the one still waiting
        ("c3", "unknown", rejected, "decided"),
        ("pending", "c2", "Approve delete?"),
    ]
    always = {"approvals": {"delete": {"approved": [], "rejected": True}}}
    state = turnfold.load({"generated_items": items, "context": always})
    assert _approvals(state) == [
        ("c1", "cancelled", rejected, "rejected"),
        ("c2", "unknown", None, "rejected"),  # rejected, not yet answered
        ("c3", "cancelled", rejected, "rejected"),
    ]


def test_A1_an_approval_waits_on_the_user_for_an_open_call_only() -> None:
    """The SDK asks approval of a call open until its output, or of a hosted MCP tool's
    ``mcp_approval_request`` (no call: the action names its id alone). A hosted call is its
    own outcome, so one an approval names (input the SDK does not write) keeps its status:
    nothing it waits for, though its status is unsettled (``unknown``, no status recorded)."""
    hosted = {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "drop",
        "server_label": "db",
        "arguments": "{}",
        "status": "in_progress",
    }
    request = {
        "type": "mcp_approval_request",
        "id": "mcpr_1",
        "name": "wipe",
        "server_label": "db",
        "arguments": "{}",
    }
    items = [
        _item("tool_call_item", "a", hosted),
        _item("tool_approval_item", "a", hosted, tool_name="drop"),
        _item("tool_call_item", "a", _call("c1", "delete")),
        _item("tool_approval_item", "a", _call("c1", "delete"), tool_name="delete"),
        _item("tool_approval_item", "a", request, tool_name="wipe"),
    ]
    transcript = turnfold.load(items)
    assert transcript.warnings == []
    assert _approvals(transcript) == [
        ("mcp_1", "unknown", None, None),
        ("pending", "mcp_1", "Approve drop?"),
        ("c1", "confirming", None, None),
        ("pending", "c1", "Approve delete?"),
        ("pending", "mcpr_1", "Approve wipe?"),
    ]
    pending = [e for e in transcript.entries if isinstance(e, PendingAction)]
    assert [p.meta for p in pending] == [{"agent": "a"}] * 3


# --- a run a tool's exception ends -----------------------------------------------------------


def test_A2_the_call_whose_exception_ends_a_followed_run_is_its_error() -> None:
    """A tool without a ``failure_error_function`` ends the run with the SDK's
    ``UserError("Error running tool strict: …")``: the one call of that tool the run's data
    leaves unanswered is the failed one, ``error`` with the exception's text; with two such
    calls the error does not say which, and neither is guessed."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from agents import UserError
    from tests.formats import openai_agents_runs

    followed: list[turnfold.Follow] = []

    def wrap(run: Any) -> turnfold.Follow:
        followed.append(turnfold.follow(run, display=False))
        return followed[-1]

    for calls, expected in (
        (1, [("s1", "error", "Error running tool strict: strict y")]),
        (2, [("s1", "unknown", None), ("s2", "unknown", None)]),
    ):
        with pytest.raises(UserError, match="Error running tool strict: strict y"):
            openai_agents_runs.run_streamed(wrap, partial(openai_agents_runs.strict, calls))
        live = followed[-1].transcript
        shown = [(c.call_id, c.status, c.result and c.result.text) for c in live.tool_calls()]
        assert shown == [("c1", "unknown", "3"), *expected], calls
        assert isinstance(live.entries[-1], AssistantError)
        assert live.entries[-1].message == "UserError: Error running tool strict: strict y"


def _raised_run(calls: int) -> tuple[turnfold.Follow, Any, Any]:
    """:func:`openai_agents_runs.strict`'s run (``calls`` calls of ``strict``) streamed and
    followed until its tool's exception ends it: the follow, the ``RunResultStreaming`` and
    the exception its stream raised."""
    from agents import UserError
    from tests.formats import openai_agents_runs

    followed: list[tuple[turnfold.Follow, Any]] = []

    def wrap(run: Any) -> turnfold.Follow:
        followed.append((turnfold.follow(run, display=False), run))
        return followed[-1][0]

    with pytest.raises(UserError, match="Error running tool strict: strict y") as raised:
        openai_agents_runs.run_streamed(wrap, partial(openai_agents_runs.strict, calls))
    follow, run = followed[-1]
    return follow, run, raised.value


def _turn_statuses(transcript: Transcript) -> list[str]:
    from turnfold.process import Turn, project

    return [node.header.status for node in project(transcript) if isinstance(node, Turn)]


def _outcomes(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each call's id, status, result and tool description, and the error that ends it."""
    shown: list[tuple[Any, ...]] = [
        (c.call_id, c.status, c.result and c.result.text, c.meta.get("tool_description"))
        for c in transcript.tool_calls()
    ]
    last = transcript.entries[-1]
    return [*shown, ("error", last.message if isinstance(last, AssistantError) else None)]


def test_A1_a_run_a_tool_raised_loads_as_its_follow_ends() -> None:
    """The run a tool's exception ended keeps the finished tool's items and the model response,
    not the failed call's item: loading the finished ``RunResultStreaming``, or the exception
    itself (which carries ``run_data``), shows the calls that response made that no item
    holds, the one the exception names ``error`` with its text, and the exception at the end,
    so the turn reads failed: what following the run ended with (the house rule). With two
    calls of the tool the error does not say which failed, and neither is guessed."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    add, strict = "Add two numbers.", "Always fails, and the SDK raises."
    error = "UserError: Error running tool strict: strict y"
    for calls, expected in (
        (1, [("s1", "error", "Error running tool strict: strict y", strict)]),
        (2, [("s1", "unknown", None, strict), ("s2", "unknown", None, strict)]),
    ):
        follow, run, exc = _raised_run(calls)
        live = follow.transcript
        assert _outcomes(live) == [("c1", "unknown", "3", add), *expected, ("error", error)]
        for value in (run, exc):
            loaded = turnfold.load(value)
            assert loaded == live, (calls, type(value).__name__)
            assert _turn_statuses(loaded) == ["failed"]
            assert loaded.accounting is not None
            assert loaded.accounting.unaccounted == []
            assert "_raised" in loaded.accounting.types("mapped")
        # An exception the SDK kept no run data with: the run's own items tell the same.
        exc.run_data = None
        assert turnfold.load(run) == live, calls


def _guarded() -> Any:
    """An agent on the SDK's scripted model whose output guardrail trips on its answer."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message

    from agents import Agent, GuardrailFunctionOutput, output_guardrail, set_tracing_disabled

    set_tracing_disabled(True)

    @output_guardrail
    async def no_secrets(context: Any, agent: Any, output: Any) -> Any:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered="secret" in output)

    script = [ModelStep(output=[assistant_message("The secret is 3.", item_id="msg_1")])]
    return Agent(name="calc", output_guardrails=[no_secrets], model=ScriptedModel(script))


def test_A1_an_answer_an_output_guardrail_refused_is_rejected_not_the_answer() -> None:
    """``OutputGuardrailTripwireTriggered``: the agent wrote its final output and the guardrail
    refused it, so the run gave none. Loaded (the exception, or the streamed run) and
    followed, the text is a rejected reply (``meta["rejected"]``, labelled "Rejected")
    beside the run's error, not the answer of a turn that merely failed."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from agents import OutputGuardrailTripwireTriggered
    from tests.formats import openai_agents_runs

    followed: list[tuple[turnfold.Follow, Any]] = []

    def wrap(run: Any) -> turnfold.Follow:
        followed.append((turnfold.follow(run, display=False), run))
        return followed[-1][0]

    with pytest.raises(OutputGuardrailTripwireTriggered) as raised:
        openai_agents_runs.run_streamed(wrap, _guarded, "Tell me.")
    follow, run = followed[-1]
    bare: list[turnfold.Follow] = []  # followed by its events alone: no run, no prompt

    def wrap_events(run: Any) -> turnfold.Follow:
        bare.append(turnfold.follow(_passed_on(run.stream_events()), display=False))
        return bare[-1]

    with pytest.raises(OutputGuardrailTripwireTriggered):
        openai_agents_runs.run_streamed(wrap_events, _guarded, "Tell me.")
    loads = (turnfold.load(run), turnfold.load(raised.value))
    for transcript in (follow.transcript, bare[-1].transcript, *loads):
        kinds = [(type(e).__name__, e.meta.get("rejected", False)) for e in transcript.entries]
        prompt = [("UserMessage", False)] if transcript is not bare[-1].transcript else []
        assert kinds == [*prompt, ("AssistantText", True), ("AssistantError", False)]
        assert transcript.entries[-2].text == "The secret is 3."
        assert _turn_statuses(transcript) == ["failed"]


def test_A1_the_run_data_of_a_raised_run_shows_its_calls_and_that_it_raised() -> None:
    """``exc.run_data`` (``RunErrorDetails``, of a streamed run or of ``Runner.run``) is made
    only for a run that raised, but does not hold the exception: it shows the calls no item
    holds with no outcome, and an error that says to load the exception, which shows the
    failed call and the exception, as following the streamed run ends; the turn is failed
    either way. An exception without run data is refused, saying why."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from agents import UserError
    from tests.formats import openai_agents_runs
    from turnfold.formats.frameworks.openai_agents import UNKNOWN_EXCEPTION

    follow, _, streamed = _raised_run(1)
    with pytest.raises(UserError) as raised:
        openai_agents_runs.run(openai_agents_runs.strict, openai_agents_runs.PROMPT)
    strict = "Always fails, and the SDK raises."
    for exc in (streamed, raised.value):
        loaded = turnfold.load(exc.run_data)
        assert type(exc.run_data).__name__ == "RunErrorDetails"
        assert loaded.warnings == []
        assert _outcomes(loaded) == [
            ("c1", "unknown", "3", "Add two numbers."),
            ("s1", "unknown", None, strict),
            ("error", UNKNOWN_EXCEPTION),
        ]
        assert "turnfold.load(exc)" in UNKNOWN_EXCEPTION
        assert _turn_statuses(loaded) == ["failed"]
        assert turnfold.load(exc) == follow.transcript, type(exc.run_data)
    with pytest.raises(TranscriptFormatError, match="run_data is None"):
        turnfold.load(UserError("Error running tool strict: strict y"))


# --- structured output (P-2) --------------------------------------------------------------------


class City(BaseModel):
    name: str
    population: int
    country: str = "FR"  # left at its default: part of the output all the same


def _city_agent(tool_use_behavior: str = "run_llm_again") -> Any:
    """An agent whose ``output_type`` is a model: it calls ``add``, then either writes its
    output as its message's JSON (the SDK's way), or stops at that call's output
    (``stop_on_first_tool``: the run's output is the tool's, a model too)."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool

    @function_tool
    def census(name: str) -> City:
        """The city's census."""
        return City(name=name, population=3)

    steps = [ModelStep(output=[function_call("census", {"name": "Paris"}, call_id="call_1")])]
    if tool_use_behavior == "run_llm_again":
        steps.append(ModelStep(output=[assistant_message('{"name":"Paris","population":3}')]))
    return Agent(
        name="geo",
        tools=[census],
        output_type=City,
        tool_use_behavior=tool_use_behavior,  # type: ignore[arg-type]
        model=ScriptedModel(steps),
    )


CITY = {"name": "Paris", "population": 3, "country": "FR"}


def test_P2_a_structured_output_the_agent_wrote_as_its_message_is_its_only_answer() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    result = openai_agents_runs.run(_city_agent, "Which city?")
    transcript = turnfold.load(result)
    answer, _ = answer_of(transcript)
    assert answer.text == '{"name":"Paris","population":3}'
    assert structured_answers(transcript) == []
    assert transcript.metadata["final_output"] == CITY


def test_P2_a_run_that_stops_at_a_tool_s_structured_output_shows_it_as_the_answer() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs

    agent = partial(_city_agent, "stop_on_first_tool")
    result = openai_agents_runs.run(agent, "Which city?")
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    answer, shown = answer_of(transcript)
    assert answer.meta == {"structured_output": True}
    assert json.loads(shown) == CITY
    call = transcript.tool_calls()[0]
    assert call.name == "census"  # stays in the process, as it ran
    assert call.result is not None
    assert "Paris" in (call.result.text or "")
    # Followed as it streams, the run ends with the same answer.
    followed = []

    def wrap(run: Any) -> turnfold.Follow:
        followed.append(turnfold.follow(run, display=False))
        return followed[0]

    streamed = openai_agents_runs.run_streamed(wrap, agent, "Which city?")
    assert followed[0].transcript == turnfold.load(streamed)
    assert structured_answers(followed[0].transcript)


def test_P2_a_plain_string_output_is_shown_as_before() -> None:
    transcript = turnfold.load(STATE)
    assert structured_answers(transcript) == []
    assert isinstance(transcript.entries[-1], AssistantText)


# --- a conversation's later turns (a session, a previous run's input list) ---------------------


def _turns_agent() -> Any:
    """One agent on the SDK's scripted model, its steps left at the model's default response id
    (``resp-789``, every step's): turn 1 calls ``add`` in one response and ``explode`` in the
    next, then answers; turn 2 calls ``add``, then answers; turn 3 answers."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, set_tracing_disabled

    set_tracing_disabled(True)
    from tests.formats import openai_agents_runs as runs

    add, explode = runs._tools()
    steps = [
        [function_call("add", {"a": 1, "b": 2}, call_id="call_1")],
        [function_call("explode", {"x": "y"}, call_id="call_2")],
        [assistant_message("3, and explode failed.", item_id="msg_1")],
        [function_call("add", {"a": 3, "b": 4}, call_id="call_3")],
        [assistant_message("7.", item_id="msg_2")],
        [assistant_message("Done.", item_id="msg_3")],
    ]
    model = ScriptedModel(ModelStep(output=s, usage=runs._usage(n)) for n, s in enumerate(steps, 1))
    return Agent(name="calc", tools=[add, explode], model=model)


def _batches(transcript: Transcript) -> list[list[str]]:
    """The call ids of each batch of calls the transcript shows."""
    return [
        [c.call_id for c in batch]
        for batch in turnfold.iter_batches(transcript.entries)
        if isinstance(batch, list)
    ]


def test_A1_calls_of_two_responses_are_two_batches_in_the_input_and_the_items() -> None:
    """A previous turn's calls come back as the run's input items, all read at no line, and the
    SDK's scripted model gives every response one id: the calls of each response are a batch
    of their own all the same, as where the input list is loaded alone (``openai-responses``)."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from tests.formats import openai_agents_runs as runs

    agent = _turns_agent()
    first = runs.run(lambda: agent, "Add, then explode.")
    assert {r.response_id for r in first.raw_responses} == {"resp-789"}
    assert _batches(turnfold.load(first)) == [["call_1"], ["call_2"]]
    second = runs.run(lambda: agent, [*first.to_input_list(), {"role": "user", "content": "Again"}])
    expected = [["call_1"], ["call_2"], ["call_3"]]
    assert _batches(turnfold.load(second)) == expected
    assert _batches(turnfold.load(json.dumps(second.to_state().to_json()))) == expected
    assert _batches(turnfold.load(json.dumps(second.to_input_list()))) == expected


def test_A2_following_a_run_with_a_session_shows_its_history_as_the_load_does() -> None:
    """A session's history reaches the run's input only once the run loop prepared it, after
    the first event (the agent's): followed, the run shows it before the prompt, as loaded."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    import asyncio

    from agents import Runner, SQLiteSession
    from tests.formats.loops import on_thread

    agent, session = _turns_agent(), SQLiteSession("qa")
    for prompt in ("Add, then explode.", "Again"):
        on_thread(lambda prompt=prompt: Runner.run_sync(agent, prompt, session=session))

    async def third() -> tuple[turnfold.Follow, Any]:
        run = Runner.run_streamed(agent, "And now?", session=session)
        followed = turnfold.follow(run, display=False)
        async for _ in followed:
            pass
        return followed, run

    followed, run = on_thread(lambda: asyncio.run(third()))
    live, loaded = followed.transcript, turnfold.load(run)
    prompts = [e.text for e in live.entries if isinstance(e, UserMessage)]
    assert prompts == ["Add, then explode.", "Again", "And now?"]
    assert live.warnings == []
    assert live == loaded


def test_A1_a_streamed_run_past_its_max_turns_loads_with_its_error_as_followed() -> None:
    """``MaxTurnsExceeded`` ends a streamed run without its run loop task raising: the SDK
    stores it on the run (``_check_errors``) and ``stream_events()`` raises it. Loading the
    finished ``RunResultStreaming`` shows it at the end, as following the run and loading the
    exception do, so the turn reads failed."""
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    import asyncio

    from agents import MaxTurnsExceeded, Runner
    from tests.formats.loops import on_thread

    async def two_turns() -> tuple[turnfold.Follow, Any, BaseException]:
        run = Runner.run_streamed(_turns_agent(), "Add, then explode.", max_turns=2)
        follow = turnfold.follow(run, display=False)
        with pytest.raises(MaxTurnsExceeded) as raised:
            async for _ in follow:
                pass
        return follow, run, raised.value

    follow, run, exc = on_thread(lambda: asyncio.run(two_turns()))
    assert _outcomes(follow.transcript)[-1] == ("error", "MaxTurnsExceeded: Max turns (2) exceeded")
    for value in (run, exc):
        loaded = turnfold.load(value)
        assert loaded == follow.transcript, type(value).__name__
        assert [c.call_id for c in loaded.tool_calls()] == ["call_1", "call_2"]
        assert _turn_statuses(loaded) == ["failed"]
