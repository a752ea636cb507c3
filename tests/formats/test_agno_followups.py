"""Agno follow-ups: durations as Agno records them (its messages' ``created_at`` are whole
seconds; its run, calls and responses have timers), and a call ``tool_call_limit`` refused in
its place when the run is followed live.

Real Agno (``agno`` 3.1.10) runs on the scripted model of ``agno_runs`` (offline).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

pytest.importorskip("agno")

import turnfold
from tests.formats import agno_runs
from tests.formats.loops import run_async
from turnfold.model import AssistantText, ToolCall, Transcript
from turnfold.process import plan_projection, recorded_duration_ms

SOLO = agno_runs.FIXTURES / f"agno_v{agno_runs.VERSION}_run_solo.json"


def turn_durations(transcript: Transcript) -> list[float | None]:
    """Each turn's duration as its header shows it (P-7)."""
    return [recorded_duration_ms(i.segment) for i in plan_projection(transcript) if i.segment]


# --- durations --------------------------------------------------------------------------------


def test_a_run_s_turn_lasts_what_agno_timed_not_the_span_of_its_whole_second_stamps() -> None:
    """A run of 0.03 s whose messages' ``created_at`` straddle a second's turn showed a turn
    of over a second (the span from the prompt's whole second to the last call's end); its
    header now shows Agno's own timer (``metrics.duration``), and so does the transcript."""
    run = json.loads(SOLO.read_text(encoding="utf-8"))
    duration = run["metrics"]["duration"]
    assert duration < 0.1
    straddling = copy.deepcopy(run)
    second = straddling["created_at"]
    for message in straddling["messages"]:  # the prompt in one second, the rest in the next
        message["created_at"] = second if message["role"] in ("system", "user") else second + 1
    for raw in (run, straddling):
        transcript = turnfold.load(raw)
        assert turn_durations(transcript) == [pytest.approx(duration * 1000)]
        assert transcript.metadata["duration_ms"] == pytest.approx(duration * 1000)
        last = transcript.entries[-1]
        assert isinstance(last, AssistantText)
        assert last.meta["turn_duration_ms"] == pytest.approx(duration * 1000)
        # Each call keeps its own timer's figures.
        timings = [t["metrics"] for t in run["tools"]]
        assert [c.duration_ms for c in transcript.tool_calls()] == [
            pytest.approx(t["duration"] * 1000) for t in timings
        ]


def test_calls_of_messages_alone_claim_no_duration_from_whole_second_stamps() -> None:
    """Loaded without the run's ``tools`` (its messages alone), a call got its result
    message's ``created_at`` as its end: with its own message's second as its start, a call
    of a millisecond lasted 0 or 1 s. Whole-second stamps now give a call no end."""
    run = json.loads(SOLO.read_text(encoding="utf-8"))
    messages = run["messages"]
    for message in messages:
        if message["role"] == "tool":
            message["created_at"] += 1  # answered in the next second, as Agno may stamp it
    transcript = turnfold.load(messages)
    calls = transcript.tool_calls()
    assert [(c.call_id, c.status) for c in calls] == [("call_1", "success"), ("call_2", "error")]
    assert all(c.ended_at is None and c.recorded_duration_ms is None for c in calls)
    assert "duration_ms" not in transcript.metadata  # the messages do not time the run


def test_a_session_s_runs_each_have_their_duration_and_the_session_spans_them() -> None:
    first, second = (agno_runs.run("solo") for _ in range(2))
    session = {"session_id": "s", "runs": [first.to_dict(), second.to_dict()]}
    transcript = turnfold.load(session)
    assert turn_durations(transcript) == [
        pytest.approx(first.metrics.duration * 1000), pytest.approx(second.metrics.duration * 1000)
    ]  # fmt: skip
    assert "duration_ms" not in transcript.metadata  # the time between runs counts too


# --- a call past tool_call_limit, followed ----------------------------------------------------

LIMITED: list[agno_runs.Reply] = [
    (None, "Adding twice.",
     [("c_1", "add", {"a": 1, "b": 2}), ("c_2", "add", {"a": 3, "b": 4})], (10, 5)),
    (None, "1+2=3; the second add was refused.", [], (20, 6)),
]  # fmt: skip
REFUSED = "Tool call limit reached. Tool call add not executed. Don't try to execute it again."


def limited() -> Any:
    return agno_runs.agent(LIMITED, tool_call_limit=1)


def shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (e.call_id, e.status, e.result.text if e.result else None)
        if isinstance(e, ToolCall)
        else (type(e).__name__, getattr(e, "text", None))
        for e in transcript.entries
    ]


EXPECTED = [
    ("UserMessage", "add twice"),
    ("AssistantText", "Adding twice."),
    ("c_1", "success", "3"),
    ("c_2", "error", REFUSED),
    ("AssistantText", "1+2=3; the second add was refused."),
]


def test_a_refused_call_loads_in_its_place() -> None:
    assert shown(turnfold.load(limited().run("add twice"))) == EXPECTED


def test_followed_a_refused_call_is_shown_before_the_answer_as_the_run_has_it() -> None:
    """Agno refuses a call past ``tool_call_limit`` without running it (no
    ``ToolCallStarted``): followed, it came only with the run's messages at the end, after the
    answer. It is shown when the next response starts, after its response's calls."""
    followed = turnfold.follow(
        limited().run("add twice", stream=True, stream_events=True), display=False
    )
    before_answer = None
    for event in followed:
        texts = [e for e in followed.transcript.entries if isinstance(e, AssistantText)]
        if event.event == "RunContent" and before_answer is None and len(texts) == 2:
            before_answer = shown(followed.transcript)[:4]  # as the answer begins
    assert before_answer == EXPECTED[:4]
    assert shown(followed.transcript) == EXPECTED
    assert followed.transcript == turnfold.load(followed.run)
    assert followed.transcript.warnings == []


def test_followed_with_arun_a_refused_call_is_in_its_place_too() -> None:
    async def follow() -> tuple[Transcript, Any]:
        followed = turnfold.follow(
            limited().arun("add twice", stream=True, stream_events=True), display=False
        )
        async for _ in followed:
            pass
        return followed.transcript, followed.run

    transcript, final = run_async(follow())
    assert shown(transcript) == EXPECTED
    assert transcript == turnfold.load(final)
