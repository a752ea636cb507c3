"""Agno agents and teams after the run and live (spec A-1, A-2, A-3, L-3, L-4).

The runs are real ``agno`` 3.1.10 ``Agent``s and ``Team``s with real tools on a scripted model,
a subclass of Agno's own ``Model`` (``agno_runs``): an agent that thinks, calls ``add``
(succeeds) and ``explode`` (raises: ``tool_call_error``) and answers; a team whose leader
delegates to a member agent that calls ``add``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

pytest.importorskip("agno")

import turnfold
from tests.formats import agno_runs
from tests.formats.counters_agno import agno as count_calls
from tests.formats.loops import run_async
from turnfold.formats.frameworks import adapter_of, agno
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    PendingAction,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.session import utc

SOLO = agno_runs.FIXTURES / "agno_v3.1.10_run_solo.json"
TEAM = agno_runs.FIXTURES / "agno_v3.1.10_run_team.json"
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", "boom: y"),  # the exception's text
]
ANSWER = "1+2=3; explode failed."
KINDS = ["UserMessage", "Thinking", "AssistantText", "ToolCall", "ToolCall", "AssistantText"]


@pytest.fixture(scope="module")
def solo() -> Any:
    return agno_runs.run("solo")


@pytest.fixture(scope="module")
def team() -> Any:
    return agno_runs.run("team")


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


# --- after the run -------------------------------------------------------------------------


def test_A1_a_run_output_reads_its_thinking_calls_outcomes_usage_and_answer(solo: Any) -> None:
    assert adapter_of(solo) is agno
    transcript = turnfold.load(solo)
    assert transcript.metadata["source_format"] == "agno"
    assert kinds(transcript) == KINDS
    user, thinking, note, add, explode, answer = transcript.entries
    assert isinstance(user, UserMessage)
    assert user.text == "What is 1+2?"
    assert isinstance(thinking, Thinking)
    assert thinking.text == "I should add first."
    assert isinstance(note, AssistantText)
    assert note.text == "Let me add."
    assert calls_of(transcript) == CALLS  # explode failed by Agno's tool_call_error
    assert isinstance(add, ToolCall)
    assert isinstance(explode, ToolCall)
    # The calls of one response are one batch: the assistant message's own id.
    assistant = solo.messages[2]
    assert add.batch_id == explode.batch_id == assistant.id
    assert add.started_at is not None
    assert add.duration_ms is not None
    assert add.duration_ms > 0
    assert isinstance(answer, AssistantText)
    assert answer.text == ANSWER
    assert answer.model == note.model == "scripted-1"
    # Each response's usage once: on its last text.
    assert note.usage is not None
    assert (note.usage.input_tokens, note.usage.output_tokens) == (
        10,
        5,
    )
    assert answer.usage is not None
    assert answer.usage.input_tokens == 20
    assert thinking.usage is None
    assert add.usage is None
    assert transcript.metadata["system"] == "Be brief."
    assert transcript.metadata["model"] == "scripted-1"
    assert transcript.metadata["agent"] == "solo"
    assert transcript.metadata["run_id"] == solo.run_id
    assert transcript.metadata["usage"]["input_tokens"] == 30
    assert user.timestamp is not None
    assert user.timestamp.endswith("Z")
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_A1_objects_read_by_attribute_equal_their_saved_to_json(solo: Any, team: Any) -> None:
    for run in (solo, team):
        from_object = turnfold.load(run)
        from_json = turnfold.load(run.to_json())
        assert from_json == from_object
        assert turnfold.load(json.loads(run.to_json()), format="agno") == from_object


def test_A1_the_messages_alone_read(solo: Any) -> None:
    transcript = turnfold.load(solo.messages)
    assert calls_of(transcript) == CALLS
    saved = [m.to_dict() for m in solo.messages]
    assert turnfold.load(json.dumps(saved)).entries == transcript.entries
    one_a_line = "\n".join(json.dumps(m) for m in saved)
    assert calls_of(turnfold.load(one_a_line)) == CALLS


def test_A1_the_saved_fixtures_are_detected_and_every_record_accounted_for() -> None:
    for path, count in ((SOLO, 2), (TEAM, 2)):
        transcript = turnfold.load(path)
        assert transcript.metadata["source_format"] == "agno"
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []
        assert len(transcript.tool_calls(nested=True)) == count_calls(path) == count
    assert calls_of(turnfold.load(SOLO)) == CALLS


def test_A1_a_team_nests_its_member_run_as_a_sub_agent(team: Any) -> None:
    transcript = turnfold.load(team)
    assert kinds(transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    (call,) = transcript.tool_calls()
    assert (call.name, call.status, call.args["member_id"]) == (
        "delegate_task_to_member",
        "success",
        "helper",
    )
    sub = call.subagent
    assert sub is not None
    assert sub.transcript is not None
    assert (sub.name, sub.task, sub.agent_id, sub.tool_count) == (
        "helper",
        "add 2 and 2",
        "helper",
        1,
    )
    assert kinds(sub.transcript) == ["UserMessage", "Thinking", "ToolCall", "AssistantText"]
    assert calls_of(sub.transcript) == [("h_1", "add", {"a": 2, "b": 2}, "success", "4")]
    assert transcript.entries[-1].text == "The helper says 4."  # type: ignore[attr-defined]
    assert transcript.metadata["agent"] == "lead"
    assert [c.name for c in turnfold.load(TEAM).tool_calls(nested=True)] == [
        "delegate_task_to_member",
        "add",
    ]


def test_A1_a_session_reads_its_runs_in_order_each_call_its_own() -> None:
    from agno.db.in_memory import InMemoryDb

    made = agno_runs.agent(db=InMemoryDb(), session_id="s1", add_history_to_context=True)
    made.run("What is 1+2?")
    made.run("Once more?")  # the script again: the same call ids, in a run of its own
    session = made.get_session()
    transcript = turnfold.load(session)
    assert kinds(transcript) == KINDS + KINDS
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "What is 1+2?",
        "Once more?",
    ]
    assert calls_of(transcript) == CALLS + CALLS
    assert transcript.warnings == []
    assert transcript.metadata["session_id"] == "s1"
    # The session's usage is both runs' (each records its own metrics), its system prompt
    # once though each run repeats it.
    assert transcript.metadata["usage"] == {"input_tokens": 60, "output_tokens": 22}
    assert transcript.metadata["system"] == "Be brief."
    saved = json.loads(json.dumps(session.to_dict()))
    assert turnfold.load(saved) == transcript
    assert turnfold.load([saved]).entries == transcript.entries  # JsonDb's file: a list


def test_A1_a_failed_run_ends_in_its_error() -> None:
    run = agno_runs.agent(script=[]).run("hi")  # the model raises at once
    transcript = turnfold.load(run)
    assert kinds(transcript) == ["UserMessage", "AssistantError"]
    error = transcript.entries[-1]
    assert isinstance(error, AssistantError)
    assert "index out of range" in error.message


def test_A1_a_paused_run_waits_for_the_users_confirmation() -> None:
    from agno.tools import tool

    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return "deleted"

    script: list[agno_runs.Reply] = [(None, None, [("c_1", "delete", {"path": "/tmp/x"})], (1, 1))]
    made = agno_runs.agent(script=script)
    made.tools = [delete]
    run = made.run("clean up")
    assert run.is_paused
    transcript = turnfold.load(run)
    (call,) = transcript.tool_calls()
    assert call.status == "confirming"
    action = transcript.entries[-1]
    assert isinstance(action, PendingAction)
    assert (action.action, action.text, action.call_id) == ("permission", "Approve delete?", "c_1")


def test_L4_a_result_for_no_call_and_an_unknown_role_are_warned_of(solo: Any) -> None:
    saved = [m.to_dict() for m in solo.messages]
    orphan = {**saved[3], "tool_call_id": "nowhere"}
    odd = {**saved[1], "role": "narrator"}
    transcript = turnfold.load([*saved[:3], orphan, odd], format="agno")
    reasons = [w.reason for w in transcript.warnings]
    assert "a tool result for no call ('nowhere')" in reasons
    assert "not an Agno message (role 'narrator')" in reasons
    # The calls no result reached have no recorded outcome (L-3).
    assert [c.status for c in transcript.tool_calls()] == ["unknown", "unknown"]


def test_A1_an_agent_object_is_refused_with_what_to_load() -> None:
    with pytest.raises(turnfold.TranscriptFormatError, match="load what its run"):
        turnfold.load(agno_runs.agent())


# --- live ----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["solo", "team"])
def test_A2_following_the_stream_ends_as_load_of_the_final_run(which: str) -> None:
    runner = agno_runs.runner(which)
    events = runner.run(agno_runs.PROMPTS[which], stream=True, stream_events=True)
    followed = turnfold.follow(events, display=False)
    seen = list(followed)
    assert not any(agno._is_run(e) for e in seen)  # every event, unchanged, and no more
    final = followed.run  # the run Agno built while it streamed, the one run() would return
    assert final is not None
    assert final.status.value == "COMPLETED"
    assert followed.transcript == turnfold.load(final)
    assert followed.transcript.warnings == []
    if which == "solo":
        assert calls_of(followed.transcript) == CALLS


def test_A2_a_yielded_run_output_settles_the_run_too() -> None:
    runner = agno_runs.runner("team")
    stream = runner.run("What is 2+2?", stream=True, stream_events=True, yield_run_output=True)
    followed = turnfold.follow(stream, display=False)
    *events, final = list(followed)
    assert type(final).__name__ == "TeamRunOutput"
    assert followed.transcript == turnfold.load(final)
    # Replayed later, the events alone (no generator): the prompt is not in them, and the
    # transcript says so instead of showing it after the answer.
    replayed = turnfold.follow([*events, final], display=False)
    list(replayed)
    expected = turnfold.load(final)
    assert kinds(replayed.transcript) == kinds(expected)[1:]
    assert calls_of(replayed.transcript) == calls_of(expected)
    assert "carry no prompt" in replayed.transcript.warnings[0].reason


def test_A2_the_stream_shows_the_run_as_it_happens() -> None:
    runner = agno_runs.runner("solo")
    followed = turnfold.follow(
        runner.run("What is 1+2?", stream=True, stream_events=True), display=False
    )
    shown: list[list[str]] = []
    statuses: dict[str, list[str]] = {}
    for event in followed:
        transcript = followed.transcript
        if event.event == "RunStarted":
            shown.append(kinds(transcript))  # the prompt, from the run being built
        if event.event == "ToolCallStarted":
            call = transcript.tool_calls()[-1]
            statuses.setdefault(call.name, []).append(call.status)
        if event.event == "ToolCallCompleted":
            call = transcript.tool_calls()[-1]
            statuses.setdefault(call.name, []).append(call.status)
        if event.event == "RunContent" and event.reasoning_content:
            thinking = transcript.entries[-1]
            assert isinstance(thinking, Thinking)
            assert thinking.streaming
    assert shown == [["UserMessage"]]
    assert statuses == {"add": ["executing", "success"], "explode": ["executing", "error"]}


@pytest.mark.parametrize("second_turns", [False, True], ids=["same-second", "second-turns"])
def test_A2_a_response_is_shown_with_the_timestamp_and_usage_the_run_ends_with(
    second_turns: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The events give a response's second (its request's start, when Agno makes its message)
    # and its usage, zeros read as not counted as a load reads the message's metrics: the run's
    # end has only what no event carries to tell the view (the prompt's time, the calls'
    # batches and timings, the reasoning done, the run's duration on its last entry).
    if second_turns:
        # Agno's messages stamped a second after its events, as when a second turns between
        # the two stamps: what a run does by chance, rarely, made certain.
        import agno.models.message

        clock = agno.models.message.time
        monkeypatch.setattr(agno.models.message, "time", lambda: clock() + 1)
    runner = agno_runs.runner("solo")
    followed = turnfold.follow(
        runner.run("What is 1+2?", stream=True, stream_events=True), display=False
    )
    changes: list[Any] = []
    followed.transcript.observe(changes.append)
    live: dict[str, tuple[Any, Any]] = {}
    shown: dict[str, str | None] = {}  # each entry's time as the last event left it
    for event in followed:
        changes.clear()  # what the run's end changes is what is left after the last event
        shown = {e.id: e.timestamp for e in followed.transcript.entries}
        if event.event == "ModelRequestCompleted":
            for entry in followed.transcript.entries:
                if isinstance(entry, (Thinking, AssistantText)):
                    live[entry.id] = (entry.timestamp, entry.usage)
    responses = [e for e in followed.transcript.entries if isinstance(e, (Thinking, AssistantText))]
    assert {k: usage for k, (_, usage) in live.items()} == {e.id: e.usage for e in responses}
    assert all(e.timestamp for e in responses)
    assert [e.usage.reasoning_tokens for e in responses if e.usage] == [None, None]
    # Agno stamps the event and the message in whole seconds, microseconds apart: a run whose two
    # stamps fall on either side of a second's turn has its message's second, one later, settled
    # at the end (as a load reads it) on the response and the calls it made, and nothing else
    # differs.
    late = {
        e.id
        for e in followed.transcript.entries
        if shown.get(e.id) is not None and shown[e.id] != e.timestamp
    }
    for entry in followed.transcript.entries:
        if entry.id in late:
            assert utc(entry.timestamp) - utc(shown[entry.id]) == timedelta(seconds=1)
    if second_turns:  # the turn made certain: every response's second, and its calls'
        kinds = {type(e).__name__ for e in followed.transcript.entries if e.id in late}
        assert kinds == {"Thinking", "AssistantText", "ToolCall"}
    settled = {
        (type(c.entry).__name__, tuple(f for f in c.fields if c.entry.id not in late
                                       or f != "timestamp"))
        for c in changes
    }  # fmt: skip
    settled.discard(("AssistantText", ()))
    assert settled == {
        ("UserMessage", ("timestamp",)),
        ("Thinking", ("streaming",)),
        ("ToolCall", ("batch_id", "started_at", "ended_at", "duration_ms")),
        ("AssistantText", ("meta",)),
    }


def _arun_followed(which: str) -> tuple[Transcript, Any]:
    """``arun`` of a scripted runner followed to its end, under a running loop: the
    transcript and the final run."""

    async def follow() -> tuple[Transcript, Any]:
        stream = agno_runs.runner(which).arun(
            agno_runs.PROMPTS[which], stream=True, stream_events=True
        )
        followed = turnfold.follow(stream, display=False)
        async for _ in followed:
            pass
        return followed.transcript, followed.run

    return run_async(follow())


def test_A2_arun_streams_under_a_running_loop() -> None:
    transcript, final = _arun_followed("team")
    assert transcript == turnfold.load(final)
    (call,) = transcript.tool_calls()
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert calls_of(call.subagent.transcript) == [("h_1", "add", {"a": 2, "b": 2}, "success", "4")]


def test_A2_an_event_it_cannot_map_never_breaks_the_run() -> None:
    runner = agno_runs.runner("solo")

    def with_odd_events() -> Iterator[Any]:
        from agno.run.agent import CustomEvent, MemoryUpdateStartedEvent

        stream = runner.run("What is 1+2?", stream=True, stream_events=True, yield_run_output=True)
        for event in stream:
            yield event
            if getattr(event, "event", None) == "RunStarted":
                yield CustomEvent(event="CustomEvent", run_id=event.run_id)
                yield MemoryUpdateStartedEvent(run_id=event.run_id)  # quiet: nothing to show

    followed = turnfold.follow(with_odd_events(), format="agno", display=False)
    *_, final = list(followed)
    assert calls_of(followed.transcript) == CALLS
    reasons = [w.reason for w in followed.transcript.warnings]
    assert "event CustomEvent not shown" in reasons
    assert not any("MemoryUpdate" in reason for reason in reasons)
    assert not any(isinstance(e, AbortMarker) for e in followed.transcript.entries)
    assert final.status.value == "COMPLETED"


def _follow_to_end(script: list[Any]) -> tuple[agno.Follower, Any]:
    """A scripted run followed until its stream ends, its run's end not yet settled."""
    stream = agno_runs.agent(script).run(agno_runs.PROMPTS["solo"], stream=True, stream_events=True)
    follower = agno.Follower(Transcript())
    follower.begin(agno.run_of_generator(stream))
    for event in stream:
        follower.feed(event)
    return follower, agno.run_of_generator(stream) or follower._run


def test_A2_a_response_of_calls_alone_shows_its_usage_on_its_first_call_while_it_runs() -> None:
    # Agno sends a response's usage before its calls: the first call takes it when it is
    # shown, where a load puts it (no text, no reasoning), not only at the run's end.
    script = [
        (None, None, [("call_1", "add", {"a": 1, "b": 2})], (10, 5)),
        (None, "3", [], (20, 6)),
    ]
    follower, run = _follow_to_end(script)
    (call,) = follower.transcript.tool_calls()
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens) == (10, 5)
    follower.close()
    assert follower.transcript == turnfold.load(run)


def test_A2_arun_of_an_agent_ends_as_load_of_the_final_run() -> None:
    transcript, final = _arun_followed("solo")
    assert transcript == turnfold.load(final)
    assert calls_of(transcript) == CALLS
    assert all(c.batch_id and c.started_at for c in transcript.tool_calls())
