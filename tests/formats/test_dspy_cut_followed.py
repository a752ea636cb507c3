"""Following a DSPy ReAct run whose trajectory ReAct cut to fit the context window (spec A-2,
L-4).

The real ``dspy`` ReAct with a ``DummyLM`` whose third call exceeds the context window once
(``dspy_more_runs.cut``): ReAct drops step 0 (``truncate_trajectory``) and goes on, so the final
``Prediction``'s trajectory holds steps 1 to 3. Live, every step's call was shown as it
started; the Prediction then settled them by place, so the steps after the cut took other
steps' entries (and were shown again, the ones live left executing).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import turnfold
from tests.formats import dspy_more_runs
from turnfold.model import Entry, SystemNotice, Thinking, ToolCall

dspy = pytest.importorskip("dspy")


def calls_of(transcript: turnfold.Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def unnamed(entries: list[Entry]) -> list[Entry]:
    """The entries without their ids (a transcript numbers its own)."""
    return [dataclasses.replace(entry, id="") for entry in entries]


@pytest.mark.parametrize("listeners", [False, True], ids=["status messages", "thoughts streamed"])
def test_A2_a_followed_run_cut_to_fit_settles_each_step_by_its_number(listeners: bool) -> None:
    agent, lm = dspy_more_runs.cut()
    stream_listeners = (
        [dspy.streaming.StreamListener("next_thought", predict=agent.react, allow_reuse=True)]
        if listeners
        else None
    )
    program = dspy.streamify(agent, stream_listeners=stream_listeners, async_streaming=False)
    with dspy.context(lm=lm):
        followed = turnfold.follow(program(question="add"), display=False, agent=agent)
        events = list(followed)
    final = events[-1]
    assert list(final.trajectory)[:4] == ["thought_1", "tool_name_1", "tool_args_1",
                                          "observation_1"]  # fmt: skip
    transcript = followed.transcript
    # Step 0 was shown live; the Prediction holds nothing of it: its outcome is unknown.
    assert calls_of(transcript) == [
        ("step-0", "add", None, "unknown", None),
        ("step-1", "add", {"a": 1, "b": 1}, "success", "2"),
        ("step-2", "add", {"a": 2, "b": 1}, "success", "3"),
    ]
    # From step 1 on, the entries are the load's, after its notice of the cut.
    loaded = turnfold.load(final, agent=agent)
    notice = loaded.entries[0]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "truncated"
    start = transcript.entries.index(transcript.tool_calls()[1]) - 1
    assert unnamed(transcript.entries[start:]) == unnamed(loaded.entries[1:])
    assert [t.text for t in transcript.entries if isinstance(t, Thinking)][-4:] == [
        "step 1", "step 2", "done", "all added",
    ]  # fmt: skip
    assert not any(isinstance(e, Thinking) and e.streaming for e in transcript.entries)
    assert [w.reason for w in transcript.warnings] == [
        "DSPy cut step 0 off the trajectory to fit the model's context window "
        "(truncate_trajectory): shown live, their arguments and results are not in the "
        "Prediction"
    ]
    assert not any(isinstance(e, ToolCall) and e.status == "executing" for e in transcript.entries)
