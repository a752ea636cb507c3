"""Microsoft Agent Framework runs (spec A-1, A-2, A-3, L-3, L-4; issue 22).

The runs are scripted offline with a ``BaseChatClient`` subclass answering from a script
(``agent_framework_runs.py``), function invocation on: ``add`` succeeds, ``explode`` raises,
``researcher`` is an agent used as a tool; reasoning, a final answer, usage per model call; and
two workflows, sequential and handoff.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.frameworks import RUN_OBJECTS, adapter_of, agent_framework
from turnfold.model import (
    AssistantText,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)

pytest.importorskip("agent_framework")

from tests.formats import agent_framework_runs as runs
from tests.formats.counters_agent_framework import agent_framework as count_calls

RESPONSE = runs.FIXTURES / "agent-framework_v1.23.0_response_calc.json"
SESSION = runs.FIXTURES / "agent-framework_v1.23.0_session_calc.json"
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", "Error: Function failed."),
    ("call_3", "researcher", {"task": "5+6?"}, "success", "It is 11."),
]
ANSWER = "1+2=3; explode failed; the researcher says 11."


@pytest.fixture(scope="module")
def run() -> tuple[Any, Any, Any]:
    return runs.run()


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


# --- after the run -------------------------------------------------------------------------


def test_A1_load_response_shows_thinking_calls_statuses_usage_model_and_time(
    run: tuple[Any, Any, Any],
) -> None:
    _, _, response = run
    transcript = turnfold.load(response)
    assert transcript.metadata == {
        "source_format": "agent-framework",
        "agent": "calc",
        "model": runs.MODEL,
        "response_id": "resp_3",
    }
    assert kinds(transcript) == [
        "Thinking", "AssistantText", "ToolCall", "ToolCall", "ToolCall", "AssistantText",
    ]  # fmt: skip
    assert calls_of(transcript) == CALLS
    thinking, first, *_, answer = transcript.entries
    assert isinstance(thinking, Thinking)
    assert thinking.text == "I should add and explode"
    assert isinstance(first, AssistantText)
    assert first.text == "Working on it."
    # The two calls of one response are one batch; the researcher's call another.
    batches = [c.batch_id for c in transcript.tool_calls()]
    assert batches[0] == batches[1] != batches[2]
    # The function-invocation loop adds up its three model calls' usage into the run's.
    assert isinstance(answer, AssistantText)
    assert answer.text == ANSWER
    assert answer.usage == Usage(input_tokens=60, output_tokens=6)
    assert answer.model == runs.MODEL
    assert answer.timestamp == "2025-06-01T12:00:03Z"
    assert first.timestamp is None  # the messages record no time of their own (L-3)


def test_A1_the_framework_s_own_records_of_the_run_agree(run: tuple[Any, Any, Any]) -> None:
    """The calls and their outcomes as the framework's own types hold them."""
    _, _, response = run
    contents = [c for m in response.messages for c in m.contents]
    calls = [c.call_id for c in contents if c.type == "function_call"]
    failed = [c.call_id for c in contents if c.type == "function_result" and c.exception]
    assert calls == [c[0] for c in CALLS]
    assert failed == ["call_2"]


def test_A1_the_session_holds_the_prompt_and_the_run_s_messages(
    run: tuple[Any, Any, Any],
) -> None:
    _, session, response = run
    transcript = turnfold.load(session)
    prompt = transcript.entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == runs.PROMPT
    assert calls_of(transcript) == CALLS
    assert kinds(transcript)[1:] == kinds(turnfold.load(response))


def test_A1_an_agent_used_as_a_tool_is_a_sub_agent_when_the_agent_is_given(
    run: tuple[Any, Any, Any],
) -> None:
    agent, _, response = run
    plain = turnfold.load(response).tool_calls()[2]
    assert plain.subagent is None  # the response alone does not say the tool is an agent
    researcher = turnfold.load(response, agent=agent).tool_calls()[2]
    assert researcher.subagent is not None
    assert researcher.subagent.name == "researcher"
    assert researcher.subagent.steps_missing  # its run is not in the parent's messages


def test_A1_the_saved_json_loads_from_files_with_detection(
    run: tuple[Any, Any, Any], tmp_path: Path
) -> None:
    _, session, response = run
    path = tmp_path / "response.json"
    path.write_text(response.to_json(), encoding="utf-8")
    from_file = turnfold.load(path)
    assert from_file.metadata["source_format"] == "agent-framework"
    assert calls_of(from_file) == CALLS
    # ``to_json`` leaves the model id out (the response holds it only in its raw form).
    assert "model" not in from_file.metadata
    messages = tmp_path / "messages.jsonl"
    stored = session.to_dict()["state"]["in_memory"]["messages"]
    messages.write_text("\n".join(json.dumps(m) for m in stored) + "\n", encoding="utf-8")
    assert calls_of(turnfold.load(messages)) == CALLS


def test_A1_the_fixtures_written_by_the_framework_load(run: tuple[Any, Any, Any]) -> None:
    response = turnfold.load(RESPONSE)
    assert calls_of(response) == CALLS
    assert len(response.tool_calls()) == count_calls(RESPONSE)
    session = turnfold.load(SESSION)
    assert calls_of(session) == CALLS
    assert len(session.tool_calls()) == count_calls(SESSION)


def test_A1_a_sequential_workflow_nests_each_agent_s_run() -> None:
    result = runs.workflow_run(runs.sequential(), "write it")
    transcript = turnfold.load(result)
    assert kinds(transcript) == ["UserMessage", "ToolCall", "ToolCall"]
    writer, reviewer = transcript.tool_calls()
    assert (writer.name, writer.status, writer.result and writer.result.text) == (
        "writer", "success", "Draft: 1+2 is 3.",
    )  # fmt: skip
    assert writer.subagent is not None
    assert writer.subagent.transcript is not None
    assert calls_of(writer.subagent.transcript) == [
        ("w_1", "add", {"a": 1, "b": 2}, "success", "3")
    ]
    assert writer.subagent.tool_count == 1
    assert reviewer.subagent is not None
    assert reviewer.subagent.name == "reviewer"
    assert [c.name for c in transcript.tool_calls(nested=True)] == ["writer", "add", "reviewer"]


def test_A1_a_handoff_workflow_nests_each_agent_and_says_where_it_handed_off() -> None:
    result = runs.workflow_run(runs.handoff(), "my bill?")
    transcript = turnfold.load(result)
    assert kinds(transcript) == ["UserMessage", "ToolCall", "SystemNotice", "ToolCall"]
    notice = transcript.entries[2]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "handoff"
    assert notice.text == "triage handed off to billing"
    triage, billing = transcript.tool_calls()
    assert triage.subagent is not None
    assert triage.subagent.transcript is not None
    handoff = triage.subagent.transcript.tool_calls()[0]
    assert (handoff.name, handoff.status) == ("handoff_to_billing", "success")
    assert billing.subagent is not None
    assert billing.subagent.transcript is not None
    assert calls_of(billing.subagent.transcript) == [
        ("b_1", "add", {"a": 1, "b": 2}, "success", "3")
    ]
    assert billing.result is not None
    assert billing.result.text == "You owe 3."


def test_A1_run_objects_are_shown_as_a_cell_s_last_value(run: tuple[Any, Any, Any]) -> None:
    _, _, response = run
    result = runs.workflow_run(runs.sequential(), "write it")
    for value in (response, result):
        assert (type(value).__module__, type(value).__name__) in RUN_OBJECTS
        assert adapter_of(value) is agent_framework


# --- L-3, L-4 ----------------------------------------------------------------------------------


def test_L4_unknown_contents_orphan_results_and_other_objects_say_what_they_are() -> None:
    document = {
        "type": "agent_response",
        "messages": [
            {"type": "message", "role": "assistant", "contents": [
                {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
                {"type": "code_interpreter_tool_call", "call_id": "ci"},
                {"type": "code_interpreter_tool_call", "call_id": "ci2"},
            ]},
            {"type": "message", "role": "tool", "contents": [
                {"type": "function_result", "call_id": "zzz", "result": "lost"},
            ]},
        ],
    }  # fmt: skip
    transcript = turnfold.load(document)
    reasons = [w.reason for w in transcript.warnings]
    assert reasons == [
        "content of type 'code_interpreter_tool_call' not shown",
        "function_result for an unknown call_id 'zzz'",
    ]
    # A call whose result the object does not hold has no recorded outcome (L-3).
    assert transcript.tool_calls()[0].status == "unknown"
    with pytest.raises(TranscriptFormatError, match="holds no run"):
        turnfold.load(runs.calc_agent(), format="agent-framework")


def test_A1_an_approval_request_waits_for_the_user() -> None:
    call = {"type": "function_call", "call_id": "d1", "name": "delete", "arguments": {"p": "x"}}
    document = [
        {"type": "message", "role": "assistant", "contents": [
            {"type": "function_approval_request", "id": "r1", "function_call": call,
             "user_input_request": True},
        ]},
    ]  # fmt: skip
    transcript = turnfold.load(document)
    waiting = transcript.tool_calls()[0]
    assert (waiting.name, waiting.status) == ("delete", "confirming")
    action = transcript.entries[-1]
    assert isinstance(action, PendingAction)
    assert action.text == "Approve delete?"


def test_A1_an_approval_the_user_answered_waits_no_longer() -> None:
    """The session holds the user's answer after the request: the run waits for nothing, so
    no "waiting for permission" is shown; the call keeps the answer."""
    transcript = turnfold.load(runs.FIXTURES / "agent-framework_v1.26.0_session_denied.json")
    assert not any(isinstance(e, PendingAction) for e in transcript.entries)
    (call,) = transcript.tool_calls()
    assert (call.status, call.meta["approval"]) == ("cancelled", "rejected")
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "AssistantText",
    ]  # fmt: skip
    call = {"type": "function_call", "call_id": "d1", "name": "delete", "arguments": {"p": "x"}}
    approved = [
        {"type": "message", "role": "user", "contents": [{"type": "text", "text": "delete x"}]},
        {"type": "message", "role": "assistant", "contents": [
            call, {"type": "function_approval_request", "id": "r1", "function_call": call}]},
        {"type": "message", "role": "user", "contents": [
            {"type": "function_approval_response", "id": "r1", "function_call": call,
             "approved": True}]},
        {"type": "message", "role": "tool", "contents": [
            {"type": "function_result", "call_id": "d1", "result": "deleted"}]},
    ]  # fmt: skip
    loaded = turnfold.load(approved)
    assert not any(isinstance(e, PendingAction) for e in loaded.entries)
    (done,) = loaded.tool_calls()
    assert (done.status, done.meta["approval"]) == ("success", "approved")


# --- live ----------------------------------------------------------------------------------


def test_A2_the_follower_fed_the_stream_ends_as_load_of_the_final_response() -> None:
    transcript = Transcript()
    follower = agent_framework.Follower(transcript)
    seen: list[tuple[str, str, str]] = []
    longest = [0]

    def observe(change: Any) -> None:
        entry = change.entry
        if isinstance(entry, ToolCall):
            seen.append((entry.call_id, entry.status, type(entry.args).__name__))
        if isinstance(entry, AssistantText):
            longest[0] = max(longest[0], len(entry.text))

    transcript.observe(observe)
    _, updates, final = runs.streamed(follower.feed)
    follower.close()
    assert transcript == turnfold.load(final)
    assert calls_of(transcript) == CALLS
    # The text grew word by word; add's arguments arrived as two JSON pieces.
    assert longest[0] == len(ANSWER)
    assert ("call_1", "executing", "str") in seen
    assert ("call_2", "error", "dict") in seen
    assert all(adapter_of(u) is agent_framework for u in updates)


def test_A2_turnfold_follow_picks_the_framework_and_ends_as_load_with_the_agent() -> None:
    agent, followed, final = runs.followed()
    assert followed.transcript.metadata["source_format"] == "agent-framework"
    assert followed.transcript == turnfold.load(final, agent=agent)
    researcher = followed.transcript.tool_calls()[2]
    assert researcher.subagent is not None
    assert researcher.subagent.steps_missing


@pytest.mark.parametrize("workflow", ["sequential", "handoff"])
def test_A2_a_followed_workflow_ends_as_load_of_its_run_result(workflow: str) -> None:
    transcript = Transcript()
    follower = agent_framework.Follower(transcript)
    grown: list[int] = []

    def observe(change: Any) -> None:
        entry = change.entry
        if isinstance(entry, ToolCall) and entry.subagent and entry.subagent.transcript:
            grown.append(len(entry.subagent.transcript.entries))

    transcript.observe(observe)
    _events, final = runs.workflow_streamed(getattr(runs, workflow)(), "go", follower.feed)
    follower.close()
    assert transcript == turnfold.load(final)
    whole = turnfold.load(runs.workflow_run(getattr(runs, workflow)(), "go"))
    assert kinds(transcript) == kinds(whole)
    assert calls_of(transcript) == calls_of(whole)
    assert grown  # the streaming agent's run grew inside its call while it ran


def test_A2_an_event_of_another_kind_is_warned_of_once() -> None:
    transcript = Transcript()
    follower = agent_framework.Follower(transcript)
    follower.feed(object())
    follower.feed(object())
    follower.close()
    assert [w.reason for w in transcript.warnings] == ["event of type object not shown"]


# --- A-3 ----------------------------------------------------------------------------------------


def test_A3_the_module_imports_without_importing_the_framework() -> None:
    code = (
        "import sys, turnfold.formats.frameworks.agent_framework\n"
        "print([m for m in sys.modules if m.startswith('agent_framework')])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- the function-invocation loop's own stop ----------------------------------------------------


def _looping_agent() -> Any:
    """An agent whose model calls ``explode`` at every step: function invocation stops it at
    ``max_iterations`` (three rounds here), drops the model's next calls unrun and writes its
    own text in the answer's place."""
    from agent_framework import Agent, Content

    turns = [
        runs.turn(n + 1, Content.from_function_call(f"c{n}", "explode", arguments={"x": str(n)}))
        for n in range(5)
    ]
    _, explode = runs.tools()
    client = runs.client_class()(turns)
    client.function_invocation_configuration["max_iterations"] = 3
    return Agent(client=client, name="looper", tools=[explode])


@pytest.mark.parametrize("stream", [False, True], ids=["run", "streamed"])
def test_A1_the_invocation_limit_s_fallback_text_is_a_warning_not_the_answer(stream: bool) -> None:
    """The framework's fallback text ("Function invocation limit reached…") was shown as the
    agent's answer, in the model's words; no model wrote it: the run stopped without one."""
    from tests.formats.loops import run_async

    runs._quiet()
    agent = _looping_agent()

    async def go() -> tuple[Transcript, Any]:
        if not stream:
            response = await agent.run("loop")
            return turnfold.load(response), response
        updates = agent.run("loop", stream=True)
        followed = turnfold.follow(updates, display=False, agent=agent)
        async for _ in followed:
            pass
        return followed.transcript, await updates.get_final_response()

    transcript, response = run_async(go())
    assert [c[:4] for c in calls_of(transcript)] == [
        (f"c{n}", "explode", {"x": str(n)}, "error") for n in range(3)
    ]
    last = transcript.entries[-1]
    assert isinstance(last, SystemNotice)
    assert (last.level, last.subtype) == ("warning", "max_iterations")
    assert last.text == agent_framework.INVOCATION_LIMIT_TEXT == response.text
    assert not any(isinstance(e, AssistantText) for e in transcript.entries)
    assert transcript == turnfold.load(response)
    assert transcript.warnings == []
