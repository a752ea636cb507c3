"""Google ADK sessions and events (spec A-1, A-2, A-3, L-1, L-3, L-4, X-2; issue 22).

The fixtures under ``tests/fixtures/frameworks/adk/`` were written by the real ADK
(``google-adk`` 2.13.0, agents on a scripted ``BaseLlm``, no network) with
``tests/formats/adk_runs.py``: ``session.model_dump_json()``, the same session
``by_alias`` (camelCase, nulls left out) and the events of a run whose tool raised. The tests
that run the ADK again (skipped without it; CI installs it) check that a fresh run, its
``Session`` object, its events and the live ``run_async`` stream read the same. The small
event lists built in the tests below are hand-made, in the shape ``Event.model_dump`` writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.adk_runs import PROMPT
from tests.formats.adk_runs import dumped_event as _event
from tests.formats.counters_adk import adk as count_calls
from tests.formats.counters_adk import adk_by_agent as count_by_agent
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks import adk
from turnfold.formats.openai_responses import unix_timestamp
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.usage import counts_of

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "adk"
SESSION = FIXTURES / "adk_v2.13.0_session_subagents.json"
CAMEL = FIXTURES / "adk_v2.13.0_session-camel_subagents.json"
RAISES = FIXTURES / "adk_v2.13.0_events_tool-raises.json"
HANDOFFS = FIXTURES / "adk_v2.13.0_session_handoff-chain.json"


def _format_of(value: Any) -> str | None:
    source, _ = open_source(value)
    return which_format(source)


def all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def _calls(transcript: Transcript) -> dict[str, ToolCall]:
    return {c.call_id: c for c in all_calls(transcript)}


def _fc(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"function_call": {"id": call_id, "name": name, "args": args}}


def _fr(call_id: str, name: str, response: dict[str, Any]) -> dict[str, Any]:
    return {"function_response": {"id": call_id, "name": name, "response": response}}


def _shape(transcript: Transcript) -> list[Any]:
    """What a live follow must agree with a load on: calls (ids, names, args, statuses,
    results, sub-agents, nested), texts and thinking, usage."""
    out: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            sub = entry.subagent
            out.append(
                (entry.call_id, entry.name, entry.args, entry.status,
                 entry.result.text if entry.result else None,
                 (sub.name, sub.tool_count, sub.task, sub.steps_missing) if sub else None)
            )  # fmt: skip
            if sub is not None and sub.transcript is not None:
                out.append(_shape(sub.transcript))
        elif isinstance(entry, (AssistantText, Thinking)):
            out.append((type(entry).__name__, entry.text, getattr(entry, "usage", None)))
        elif isinstance(entry, SystemNotice):
            out.append((entry.subtype, entry.text))
    return out


# --- the real ADK's saved session ------------------------------------------------------------


def test_A1_a_saved_session_reads_prompt_thinking_calls_sub_agents_and_answer() -> None:
    transcript = turnfold.load(SESSION)
    assert transcript.warnings == []
    metadata = transcript.metadata
    assert metadata["source_format"] == "adk"
    assert (metadata["app_name"], metadata["user_id"], metadata["agent"]) == ("demo", "u", "calc")
    assert metadata["model"] == "scripted-1"
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage", "Thinking", "ToolCall", "ToolCall", "ToolCall", "ToolCall",
        "AssistantText", "ToolCall", "AssistantText",
    ]  # fmt: skip
    user, thinking = transcript.entries[:2]
    assert isinstance(user, UserMessage)
    assert user.text == PROMPT
    assert isinstance(thinking, Thinking)
    assert thinking.text == "First add, then the risky tool."
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "1+2=3, 3+4=7; explode failed."
    assert answer.meta["agent"] == "writer"
    calls = transcript.tool_calls()
    assert [(c.call_id, c.name, c.args) for c in calls] == [
        ("call_1", "add", {"a": 1, "b": 2}),
        ("call_2", "explode", {"x": "y"}),
        ("call_3", "helper", {"request": "five and five?"}),
        ("call_4", "researcher", {"request": "why?"}),
        ("call_5", "transfer_to_agent", {"agent_name": "writer"}),
    ]
    assert [c.result.text if c.result else None for c in calls] == [
        "3", "boom: y", "helper: 10", "Because tools fail.", None,
    ]  # fmt: skip
    assert len(all_calls(transcript)) == count_calls(SESSION) == 7


def test_A1_the_by_alias_camel_case_session_reads_the_same() -> None:
    assert _format_of(CAMEL) == "adk"
    assert turnfold.load(CAMEL) == turnfold.load(SESSION)


def test_L3_a_response_is_adk_s_success_and_an_error_response_a_failure() -> None:
    calls = _calls(turnfold.load(SESSION))
    assert calls["call_2"].status == "error"  # on_tool_error_callback's {"error": ...}
    assert {k: c.status for k, c in calls.items() if k != "call_2"} == dict.fromkeys(
        ["call_1", "call_3", "h_1", "call_4", "call_5", "w_1"], "success"
    )


def test_L3_a_tool_that_raised_is_an_error_from_adk_s_error_event() -> None:
    transcript = turnfold.load(RAISES)
    assert transcript.warnings == []
    ok, failed = transcript.tool_calls()
    assert (ok.name, ok.status) == ("add", "success")
    assert (failed.name, failed.status) == ("explode", "error")
    assert failed.result is not None
    assert failed.result.text == "ValueError: boom: z"
    raw = json.loads(RAISES.read_text(encoding="utf-8"))
    ended = datetime.fromtimestamp(raw[-1]["timestamp"], tz=timezone.utc)
    assert failed.ended_at == ended.isoformat().replace("+00:00", "Z")  # the error event's
    # The run ended on the exception: said by an error of the run (test_adk_run_end.py).
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == ["The run ended: explode raised ValueError: boom: z"]
    assert len(transcript.tool_calls()) == count_calls(RAISES)


def test_L1_a_single_turn_sub_agent_is_nested_under_its_call_by_branch() -> None:
    helper = _calls(turnfold.load(SESSION))["call_3"]
    assert helper.subagent is not None
    assert (helper.subagent.name, helper.subagent.tool_count) == ("helper", 1)
    assert helper.subagent.output_tokens == 10  # its two responses, 5 each
    child = helper.subagent.transcript
    assert child is not None
    (inner,) = child.tool_calls()
    assert (inner.call_id, inner.name, inner.args, inner.status) == (
        "h_1", "add", {"a": 5, "b": 5}, "success",
    )  # fmt: skip
    texts = [e for e in child.entries if isinstance(e, AssistantText)]
    assert [(t.text, t.meta["agent"]) for t in texts] == [("helper: 10", "helper")]


def test_L1_a_transfer_nests_the_new_agent_s_steps_and_keeps_its_answer_on_top() -> None:
    transcript = turnfold.load(SESSION)
    transfer = _calls(transcript)["call_5"]
    assert transfer.subagent is not None
    assert (transfer.subagent.name, transfer.subagent.task) == ("writer", "handoff from calc")
    assert not transfer.subagent.steps_missing
    child = transfer.subagent.transcript
    assert child is not None
    assert [(type(e).__name__, e.meta["agent"]) for e in child.entries] == [("ToolCall", "writer")]
    (inner,) = child.tool_calls()
    assert (inner.call_id, inner.status, transfer.subagent.tool_count) == ("w_1", "success", 1)
    # the call line says who took over: no notice; the writer's answer is the turn's, on top
    assert not any(isinstance(e, SystemNotice) for e in transcript.entries)
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"]) == ("1+2=3, 3+4=7; explode failed.", "writer")
    assert transcript.entries.index(answer) == transcript.entries.index(transfer) + 1


def _shown_by_agent(transcript: Transcript, into: dict[str, int] | None = None) -> dict[str, int]:
    """The calls shown for each agent (``meta["agent"]``), nested ones included."""
    counts = {} if into is None else into
    for call in all_calls(transcript):
        counts[call.meta["agent"]] = counts.get(call.meta["agent"], 0) + 1
    return counts


def test_L1_a_handoff_chain_nests_again_and_a_handoff_back_closes_the_child() -> None:
    transcript = turnfold.load(HANDOFFS)
    assert transcript.warnings == []
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "AssistantText",
    ]  # fmt: skip
    to_billing = transcript.entries[1]
    assert isinstance(to_billing, ToolCall)
    assert to_billing.subagent is not None
    assert (to_billing.subagent.name, to_billing.subagent.task) == (
        "billing", "handoff from triage",
    )  # fmt: skip
    billing = to_billing.subagent.transcript
    assert billing is not None
    assert [(type(e).__name__, getattr(e, "name", None)) for e in billing.entries] == [
        ("ToolCall", "add"), ("AssistantText", None), ("ToolCall", "transfer_to_agent"),
    ]  # fmt: skip
    to_refunds = billing.entries[-1]
    assert isinstance(to_refunds, ToolCall)
    assert to_refunds.subagent is not None
    assert (to_refunds.subagent.name, to_refunds.subagent.task) == (
        "refunds", "handoff from billing",
    )  # fmt: skip
    refunds = to_refunds.subagent.transcript
    assert refunds is not None
    add, back = refunds.tool_calls()
    assert (add.call_id, add.status) == ("f_1", "success")
    # the handoff back to billing (an ancestor) opens nothing: billing goes on at its level
    assert back.subagent is not None
    assert (back.subagent.name, back.subagent.transcript) == ("billing", None)
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"]) == ("Refunded 4; billed 2.", "billing")
    assert not any(isinstance(e, SystemNotice) for e in [*transcript, *billing, *refunds])
    assert _shown_by_agent(transcript) == count_by_agent(HANDOFFS)
    assert len(all_calls(transcript)) == count_calls(HANDOFFS) == 5


def test_L1_a_new_user_message_ends_the_turn_and_its_handoffs() -> None:
    events = [
        _event("user", [{"text": "hi"}]),
        _event("calc", [_fc("t1", "transfer_to_agent", {"agent_name": "writer"})]),
        _event("calc", [_fr("t1", "transfer_to_agent", {"result": None})],
               actions={"transfer_to_agent": "writer"}),
        _event("writer", [{"text": "Hello."}]),
        _event("user", [{"text": "again"}]),
        _event("writer", [{"text": "Still here."}]),
    ]  # fmt: skip
    transcript = turnfold.load(events)
    assert transcript.warnings == []
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["UserMessage", "ToolCall", "AssistantText", "UserMessage", "AssistantText"]
    call = transcript.tool_calls()[0]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert call.subagent.transcript.entries == []  # its only step was the answer, shown on top


def test_L1_the_next_turn_s_agent_is_in_control_and_a_handoff_to_the_first_nests() -> None:
    events = [
        _event("user", [{"text": "hi"}]),
        _event("calc", [_fc("t1", "transfer_to_agent", {"agent_name": "writer"})]),
        _event("calc", [_fr("t1", "transfer_to_agent", {"result": None})],
               actions={"transfer_to_agent": "writer"}),
        _event("writer", [{"text": "Hello."}]),
        _event("user", [{"text": "sum it"}]),
        # the ADK resumes with the writer; its handoff to calc is no handoff back this turn
        _event("writer", [_fc("t2", "transfer_to_agent", {"agent_name": "calc"})]),
        _event("writer", [_fr("t2", "transfer_to_agent", {"result": None})],
               actions={"transfer_to_agent": "calc"}),
        _event("calc", [_fc("c1", "add", {"a": 1})]),
        _event("calc", [_fr("c1", "add", {"result": 1})]),
        _event("calc", [{"text": "1."}]),
    ]  # fmt: skip
    transcript = turnfold.load(events)
    assert transcript.warnings == []
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "AssistantText", "UserMessage", "ToolCall", "AssistantText",
    ]  # fmt: skip
    second = transcript.tool_calls()[1]
    assert second.subagent is not None
    assert (second.subagent.name, second.subagent.task) == ("calc", "handoff from writer")
    assert second.subagent.transcript is not None
    assert [c.call_id for c in second.subagent.transcript.tool_calls()] == ["c1"]
    assert transcript.entries[-1].meta["agent"] == "calc"


def test_L3_an_agent_tool_s_steps_are_not_in_the_session_so_none_are_shown() -> None:
    research = _calls(turnfold.load(SESSION))["call_4"]
    assert research.subagent is None  # nothing in the session says an agent ran
    authors = {e["author"] for e in json.loads(SESSION.read_text(encoding="utf-8"))["events"]}
    assert "researcher" not in authors


def _agent_tool_calls(session: Any, agent: Any) -> list[tuple[str, str]]:
    """The framework's own account of the calls of agents used as tools: each call in the
    session's events (``Event.get_function_calls()``) of a tool the agent tree holds as an
    ``AgentTool`` (``isinstance``, the ADK's type), with that tool's agent's name."""
    from google.adk.tools.agent_tool import AgentTool

    tools = {t.name: t.agent.name for t in agent.tools if type(t) is AgentTool}
    return [
        (call.id, tools[call.name])
        for event in session.events
        if not event.partial
        for call in event.get_function_calls()
        if call.name in tools
    ]


def test_L1_given_the_agent_an_agent_tool_s_call_is_a_sub_agent_without_its_steps() -> None:
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    agent = adk_runs.root_agent()
    session, _ = adk_runs.run()
    transcript = turnfold.load(session, agent=agent)
    shown = [
        (c.call_id, c.subagent.name)
        for c in all_calls(transcript)
        if c.subagent is not None and c.subagent.steps_missing
    ]
    assert shown == _agent_tool_calls(session, agent) == [("call_4", "researcher")]
    research = _calls(transcript)["call_4"].subagent
    assert research is not None
    assert (research.task, research.transcript) == ("why?", None)
    helper = _calls(transcript)["call_3"].subagent  # single_turn: its steps are in the session
    assert helper is not None
    assert helper.transcript is not None
    assert not helper.steps_missing
    # Only the agent tool's line changes; the saved file and the Runner read the same.
    without = _shape(turnfold.load(session))
    assert [row for row in _shape(transcript) if row not in without] == [
        ("call_4", "researcher", {"request": "why?"}, "success", "Because tools fail.",
         ("researcher", None, "why?", True)),
    ]  # fmt: skip
    assert _shape(turnfold.load(SESSION, agent=agent)) == _shape(transcript)
    assert _shape(turnfold.load(session, agent=adk_runs._runner())) == _shape(transcript)


def test_L4_agent_is_refused_where_the_run_says_itself_what_ran() -> None:
    with pytest.raises(ValueError, match="agent="):
        turnfold.load([{"role": "user", "content": "hi"}], agent=object())


def test_A1_usage_model_and_timestamps_come_from_each_event() -> None:
    transcript = turnfold.load(SESSION)
    raw = json.loads(SESSION.read_text(encoding="utf-8"))["events"]
    handing = next(
        e for e in transcript.entries if isinstance(e, AssistantText) and e.text == "Handing over."
    )
    assert handing.model == "scripted-1"
    assert handing.usage is not None
    assert (handing.usage.input_tokens, handing.usage.output_tokens) == (10, 5)
    assert handing.usage.cache_read_tokens == 2
    thinking = transcript.entries[1]
    # A response without text keeps it on its first entry; Gemini counts thoughts apart from
    # the candidates (5), turnfold's output includes them (turnfold.usage).
    assert counts_of(thinking.usage) == {
        "input_tokens": 10, "output_tokens": 8, "cache_read_tokens": 2, "reasoning_tokens": 3,
    }  # fmt: skip
    first = transcript.tool_calls()[0]
    stamp = datetime.fromtimestamp(raw[1]["timestamp"], tz=timezone.utc)
    assert first.started_at == stamp.isoformat().replace("+00:00", "Z")
    assert first.batch_id == raw[1]["id"]
    assert first.ended_at is not None
    assert first.ended_at > first.started_at


def test_A1_saved_forms_are_detected_from_files_and_text() -> None:
    assert _format_of(SESSION) == _format_of(RAISES) == "adk"
    text = SESSION.read_text(encoding="utf-8")
    assert _format_of(text) == "adk"
    events = json.loads(text)["events"]
    assert turnfold.load(json.dumps(events)).tool_calls() == turnfold.load(SESSION).tool_calls()
    single = turnfold.load(json.dumps(events[1]))
    assert [type(e).__name__ for e in single.entries] == ["Thinking", "ToolCall"]


# --- hand-made events, in the shape Event.model_dump writes -----------------------------------


def test_A1_a_session_s_ids_and_state_scalars_go_to_metadata() -> None:
    document = {
        "id": "s1", "appName": "demo", "userId": "u", "lastUpdateTime": 1796000009.0,
        "state": {"count": 2, "user:name": "Ada", "cart": {"items": [1, 2]}},
        "events": [_event("user", [{"text": "hi"}]), _event("calc", [{"text": "hello"}])],
    }  # fmt: skip
    assert _format_of(json.dumps(document)) == "adk"
    transcript = turnfold.load(document)
    assert transcript.warnings == []
    metadata = transcript.metadata
    assert (metadata["session_id"], metadata["app_name"], metadata["user_id"]) == (
        "s1",
        "demo",
        "u",
    )
    assert metadata["updated_at"] == "2026-11-30T00:53:29Z"
    assert metadata["state"] == {"count": 2, "user:name": "Ada"}  # scalars only
    assert [type(e).__name__ for e in transcript.entries] == ["UserMessage", "AssistantText"]


def test_L3_an_error_event_with_no_open_call_is_the_model_s_error() -> None:
    events = [
        _event("user", [{"text": "hi"}]),
        {"author": "calc", "invocation_id": "e-1", "error_code": "SAFETY",
         "error_message": "blocked", "actions": {}, "timestamp": 1796000001.0},
    ]  # fmt: skip
    transcript = turnfold.load(events)
    error = transcript.entries[-1]
    assert isinstance(error, AssistantError)
    assert error.message == "SAFETY: blocked"


def test_L1_code_execution_parts_are_a_call_settled_by_its_outcome() -> None:
    events = [
        _event("user", [{"text": "run it"}]),
        _event("calc", [
            {"executable_code": {"code": "print(1/0)", "language": "PYTHON"}},
            {"code_execution_result": {"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"}},
            {"executable_code": {"code": "print(2)", "language": "PYTHON"}},
            {"code_execution_result": {"outcome": "OUTCOME_OK", "output": "2\n"}},
            {"text": "It printed 2."},
        ], id="ev-2"),
    ]  # fmt: skip
    transcript = turnfold.load(events)
    assert transcript.warnings == []
    failed, ok = transcript.tool_calls()
    assert (failed.name, failed.args["code"], failed.status) == (
        "code_execution",
        "print(1/0)",
        "error",
    )
    assert failed.result is not None
    assert failed.result.text == "ZeroDivisionError"
    assert (ok.status, ok.description) == ("success", "print(2)")
    assert isinstance(transcript.entries[-1], AssistantText)


def test_L1_escalation_compaction_and_output_are_shown_state_bookkeeping_is_not() -> None:
    events = [
        _event("user", [{"text": "loop"}]),
        {"author": "checker", "invocation_id": "e-1", "timestamp": 1796000002.0,
         "actions": {"escalate": True}},
        {"author": "calc", "invocation_id": "e-1", "timestamp": 1796000003.0,
         "actions": {"compaction": {"start_timestamp": 1.0, "end_timestamp": 2.0,
                                    "compacted_content": {"parts": [{"text": "earlier: 1+2"}]}}}},
        {"author": "node", "invocation_id": "e-1", "timestamp": 1796000004.0,
         "output": {"total": 3}, "actions": {}},
        {"author": "calc", "invocation_id": "e-1", "timestamp": 1796000005.0,
         "actions": {"state_delta": {"k": 1}}},
    ]  # fmt: skip
    transcript = turnfold.load(events)
    assert transcript.warnings == []
    _, escalate, compaction, output = transcript.entries
    assert isinstance(escalate, SystemNotice)
    assert escalate.text == "checker escalated"
    assert isinstance(compaction, CompactionBoundary)
    assert compaction.summary == "earlier: 1+2"
    assert isinstance(output, SystemNotice)
    assert output.subtype == "output"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["state_delta"] == {"ignored": 1}


def test_A2_partial_events_in_a_saved_list_are_not_shown_twice() -> None:
    events = [
        _event("user", [{"text": "hi"}]),
        _event("calc", [{"text": "Hel"}], partial=True),
        _event("calc", [{"text": "lo"}], partial=True),
        _event("calc", [{"text": "Hello"}]),
    ]
    transcript = turnfold.load(events)
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["Hello"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["partial"] == {"ignored": 2}


def test_A2_a_follower_streams_text_runs_calls_and_settles_them() -> None:
    transcript = Transcript()
    follower = adk.Follower(transcript)
    follower.feed(_event("calc", [{"text": "Let me "}], partial=True))
    follower.feed(_event("calc", [{"text": "add."}], partial=True))
    (streamed,) = transcript.entries
    assert isinstance(streamed, AssistantText)
    assert streamed.text == "Let me add."
    usage = {"prompt_token_count": 7, "candidates_token_count": 3}
    follower.feed(
        _event("calc", [{"text": "Let me add."}, _fc("c1", "add", {"a": 1})], usage_metadata=usage)
    )
    assert transcript.entries[0] is streamed  # settled in place, not shown twice
    assert streamed.usage is not None
    assert streamed.usage.input_tokens == 7
    call = transcript.entries[1]
    assert isinstance(call, ToolCall)
    assert call.status == "executing"
    follower.feed(_event("calc", [_fc("c2", "add", {"a": 2})]))
    follower.feed(_event("calc", [_fr("c1", "add", {"result": 1})]))
    assert call.status == "success"
    follower.close()
    assert [c.status for c in transcript.tool_calls()] == ["success", "unknown"]  # as a load


def test_L4_bad_events_warn_and_the_rest_is_shown() -> None:
    events = [
        _event("user", [{"text": "hi"}]),
        {"something": "else"},
        _event("calc", [_fr("nope", "add", {"result": 1})]),
        _event("calc", [{"text": "done"}]),
    ]
    transcript = turnfold.load(events, format="adk")
    reasons = [w.reason for w in transcript.warnings]
    assert any("not an ADK event" in r for r in reasons)
    assert any("unknown call id 'nope'" in r for r in reasons)
    assert isinstance(transcript.entries[-1], AssistantText)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_L4_a_malformed_saved_file_is_a_format_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "session.json"
    broken.write_text(SESSION.read_text(encoding="utf-8")[:500], encoding="utf-8")
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(broken, format="adk")
    assert str(broken) in str(raised.value)


def test_A3_reading_adk_json_imports_no_framework() -> None:
    code = (
        "import sys, turnfold; from turnfold.formats.frameworks import adk; "
        f"turnfold.load({str(SESSION)!r}); "
        "assert not any(m.startswith('google.adk') for m in sys.modules), 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the real ADK, run again (offline) --------------------------------------------------------


def _objects_calls(session: Any) -> int:
    """The calls the ADK's own types hold: ``Event.get_function_calls()`` of the final events."""
    return sum(len(e.get_function_calls()) for e in session.events if not e.partial)


def test_A1_a_session_its_events_and_one_event_load_as_objects() -> None:
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    session, _ = adk_runs.run()
    before = session.model_dump_json()
    transcript = turnfold.load(session)
    assert session.model_dump_json() == before  # the value is never modified
    assert transcript.metadata["session_id"] == session.id
    assert len(all_calls(transcript)) == _objects_calls(session) == 7
    assert _shape(turnfold.load(session.events)) == _shape(transcript)
    assert _shape(turnfold.load(session.model_dump_json())) == _shape(transcript)
    first = turnfold.load(session.events[0])
    assert [type(e).__name__ for e in first.entries] == ["UserMessage"]
    assert _calls(transcript)["call_2"].status == "error"


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "sse"])
def test_A2_following_a_handoff_chain_gives_what_a_load_gives(stream: bool) -> None:
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    followed: list[Any] = []

    def wrap(events: Any) -> Any:
        followed.append(turnfold.follow(events, display=False))
        return followed[0]

    session, _ = adk_runs.handoff_run(wrap, stream=stream)
    live = followed[0].transcript
    loaded = turnfold.load(session)
    assert live.warnings == []
    assert _shape(live) == _shape(loaded)
    assert _shape(loaded) == _shape(turnfold.load(HANDOFFS))
    assert _shown_by_agent(loaded) == {"triage": 1, "billing": 2, "refunds": 2}
    assert sum(_shown_by_agent(live).values()) == _objects_calls(session)
    answer = live.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "Refunded 4; billed 2."


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "sse"])
def test_A2_following_run_async_gives_what_a_load_of_the_session_gives(stream: bool) -> None:
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    followed: list[Any] = []

    def wrap(events: Any) -> Any:
        followed.append(turnfold.follow(events, display=False))
        return followed[0]

    session, events = adk_runs.run(wrap, stream=stream)
    assert any(e.partial for e in events) == stream
    live = followed[0].transcript
    # The generator's runner says which tools are agents, as agent= does for a load.
    loaded = turnfold.load(session, agent=adk_runs.root_agent())
    assert live.warnings == []
    assert _shape(live) == _shape(loaded)
    # run_async does not yield the user's message: the follow reads it off the generator
    # (its new_message), so the followed run begins with the prompt, as the session does.
    prompts = [e.text for e in live.entries if isinstance(e, UserMessage)]
    assert isinstance(loaded.entries[0], UserMessage)
    assert isinstance(live.entries[0], UserMessage)
    assert prompts == [loaded.entries[0].text] == [adk_runs.PROMPT]
    texts = [e.text for e in live.entries if isinstance(e, AssistantText)]
    assert texts == ["Handing over.", "1+2=3, 3+4=7; explode failed."]  # the answer on top


def test_A2_following_with_the_agent_shows_its_agent_tool_as_a_load_with_it_does() -> None:
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    agent = adk_runs.root_agent()
    followed: list[Any] = []

    def wrap(events: Any) -> Any:
        followed.append(turnfold.follow(events, agent=agent, display=False))
        return followed[0]

    session, _ = adk_runs.run(wrap)
    live = followed[0].transcript
    assert live.warnings == []
    assert _shape(live) == _shape(turnfold.load(session, agent=agent))
    research = _calls(live)["call_4"].subagent
    assert research is not None
    assert (research.name, research.steps_missing) == ("researcher", True)


def test_A2_a_followed_run_whose_tool_raises_shows_the_error() -> None:
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    (session, _, failure), live = adk_runs.followed(adk_runs.raising_run)
    assert isinstance(failure, ValueError)
    assert _shape(live) == _shape(turnfold.load(session))
    assert [c.status for c in live.tool_calls()] == ["success", "error"]
    assert len(live.tool_calls()) == _objects_calls(session)


# --- long-running tools and calls that wait on the user (the real ADK) -------------------------


def test_L3_a_long_running_call_runs_on_with_its_interim_response_until_the_client_answers() -> (
    None
):
    """A ``LongRunningFunctionTool`` returns an interim response at once ("pending", a
    ticket) and its result comes later from the client. The call was ``success`` while it
    waited, and the client's answer replaced the interim response without a trace."""
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    waiting, done = adk_runs.long_running_run()
    for saved in (waiting, waiting.model_dump_json(by_alias=True, exclude_none=True)):
        transcript = turnfold.load(saved)
        assert transcript.warnings == []
        lookup, approval = transcript.tool_calls()
        assert lookup.status == "success"
        assert (approval.name, approval.status, approval.ended_at) == (
            "ask_approval", "executing", None,
        )  # fmt: skip
        assert approval.meta["long_running"] is True
        assert approval.result is not None
        assert json.loads(approval.result.text or "") == {"status": "pending", "ticket": "T-1"}
    answered = _calls(turnfold.load(done))["l_2"]
    assert answered.status == "success"
    assert answered.result is not None
    assert json.loads(answered.result.text or "") == {"status": "approved"}
    assert answered.meta["interim_responses"] == [{"status": "pending", "ticket": "T-1"}]
    client = next(
        e for e in done.events if e.author == "user" and e.content.parts[0].function_response
    )
    assert answered.ended_at == unix_timestamp(client.timestamp)


def test_A2_a_followed_long_running_call_runs_on_as_a_load_shows_it() -> None:
    """Followed, the call waiting on the client ended ``success`` (its interim response taken
    for the result); at the stream's end it runs on, as a load of the session shows it."""
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    (waiting, _), live = adk_runs.followed(adk_runs.long_running_run)
    assert live.warnings == []
    assert _shape(live) == _shape(turnfold.load(waiting))
    assert [c.status for c in live.tool_calls()] == ["success", "executing"]


def test_L1_a_confirmation_the_run_waits_on_is_confirming_with_its_pending_action() -> None:
    """A tool that needs confirmation (``require_confirmation``): the ADK asks the client with
    an ``adk_request_confirmation`` call and the run stops. That call was ``unknown`` and
    nothing said the run waits on the user; loaded or followed, it is ``confirming`` with a
    pending action, and answered it is settled."""
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    (session, _), live = adk_runs.followed(adk_runs.confirming_run)
    loaded = turnfold.load(session)
    for transcript in (loaded, live):
        assert transcript.warnings == []
        delete, asked = transcript.tool_calls()
        assert delete.status == "error"  # the ADK's own response: it needs confirmation
        assert (asked.name, asked.status) == ("adk_request_confirmation", "confirming")
        pending = transcript.entries[-1]
        assert isinstance(pending, PendingAction)
        assert (pending.action, pending.text, pending.call_id) == (
            "permission", "Approve delete?", asked.call_id,
        )  # fmt: skip
        assert "approve or reject" in pending.meta["hint"]
    events = json.loads(session.model_dump_json())["events"]
    asked_id = loaded.tool_calls()[1].call_id
    answer = _event("user", [_fr(asked_id, "adk_request_confirmation", {"confirmed": True})])
    answered = turnfold.load([*events, answer])
    assert not any(isinstance(e, PendingAction) for e in answered.entries)
    assert answered.tool_calls()[1].status == "success"


def test_L1_a_confirmation_of_a_call_it_does_not_name_asks_to_approve_the_call() -> None:
    """``originalFunctionCall`` without a name: the pending action still asks, for the call."""
    args = {"originalFunctionCall": {"id": "c1", "args": {}}, "toolConfirmation": {"hint": "Ok?"}}
    asked = _fc("adk-1", "adk_request_confirmation", args)
    events = [
        _event("user", [{"text": "Delete it."}]),
        _event("root", [asked], long_running_tool_ids=["adk-1"]),
    ]
    transcript = turnfold.load(events)
    assert transcript.warnings == []
    assert [c.status for c in transcript.tool_calls()] == ["confirming"]
    pending = transcript.entries[-1]
    assert isinstance(pending, PendingAction)
    assert (pending.action, pending.text, pending.call_id, pending.meta) == (
        "permission", "Approve the call?", "adk-1", {"agent": "root", "hint": "Ok?"},
    )  # fmt: skip


def test_L1_a_request_for_input_left_open_is_a_question_even_from_an_older_session() -> None:
    """``adk_request_input`` asks the user (a workflow's ``RequestInput``); an older session
    lists no ``long_running_tool_ids`` for it, and the ADK knows it by its name alike."""
    asked = _fc("adk-1", "adk_request_input", {"message": "Which account?", "payload": None})
    events = [_event("user", [{"text": "Pay the bill."}]), _event("billing", [asked])]
    for saved in (events, [events[0], {**events[1], "long_running_tool_ids": ["adk-1"]}]):
        transcript = turnfold.load(saved)
        assert transcript.warnings == []
        assert [c.status for c in transcript.tool_calls()] == ["confirming"]
        pending = transcript.entries[-1]
        assert isinstance(pending, PendingAction)
        assert (pending.action, pending.text, pending.call_id) == (
            "question", "Which account?", "adk-1",
        )  # fmt: skip


def test_L4_other_adk_objects_are_refused_by_name() -> None:
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent

    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load([LlmAgent(name="calc", model="scripted-1")])
    assert "LlmAgent is not a session" in str(raised.value)
    assert "<object>" in str(raised.value)


def test_A1_events_saved_without_their_session_read_as_one() -> None:
    """``{"events": [...]}`` with no session fields around it, as the ADK records its own
    sample runs (google/adk-python ``contributing/samples/tools/parallel_functions/tests/``,
    camelCase): read, not refused as "no ADK session"."""
    path = FIXTURES / "adk_real_sample-recording_events-only_parallel-calls.json"
    assert _format_of(path) == "adk"
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("get_weather", "success"), ("get_currency_rate", "success"),
    ]  # fmt: skip
    assert calls[0].result is not None
    assert "rainy" in calls[0].result.text
    assert isinstance(transcript.entries[-1], AssistantText)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_U1_a_pre_release_session_s_logged_responses_give_model_and_usage() -> None:
    """The December 2024 session keeps its model calls in ``event_logs``, by the id of the
    event each response became: the model and tokens shown are theirs."""
    from turnfold.session import session_facts

    path = FIXTURES / "adk_real_pre-release-2024-12_session_calls-without-ids.json"
    transcript = turnfold.load(path)
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    shown = [(t.model, t.usage and (t.usage.input_tokens, t.usage.output_tokens)) for t in texts]
    assert shown == [("gemini-1.5-flash-001", (32, 13)), ("gemini-1.5-flash-001", (129, 14))]
    (call,) = transcript.tool_calls()
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens) == (94, 32)
    facts = session_facts(transcript)
    assert facts.models == ["gemini-1.5-flash-001"]
    assert (facts.tokens["input_tokens"], facts.tokens["output_tokens"]) == (255, 59)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_L3_calls_and_responses_without_ids_are_paired_by_name_in_order() -> None:
    """An ADK session of December 2024 (google/adk-python's own test fixture) gives the
    model's ``function_call`` no id and its ``function_response`` none either: the response
    settles the oldest open call of its name instead of being dropped as unknown."""
    path = FIXTURES / "adk_real_pre-release-2024-12_session_calls-without-ids.json"
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [("update_fc", "success")]
    twice = [{"function_call": {"name": "look", "args": {"q": n}}} for n in ("a", "b")]
    answers = [{"function_response": {"name": "look", "response": {"result": n}}} for n in "AB"]
    events = [_event("user", [{"text": "Look twice."}]), _event("root", twice)]
    transcript = turnfold.load([*events, _event("root", answers)])
    assert [(c.args, c.result and c.result.text) for c in transcript.tool_calls()] == [
        ({"q": "a"}, "A"), ({"q": "b"}, "B"),
    ]  # fmt: skip
