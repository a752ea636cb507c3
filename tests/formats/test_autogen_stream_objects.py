"""AutoGen's ``run_stream`` items loaded as a Python list (spec A-1, issue 22).

``run_stream`` yields the run's messages, then the ``TaskResult`` that holds them all again.
``turnfold.load(events)`` on that list of objects read the result's messages a second time
(the prompt and the thinking twice, the calls skipped as second calls with their ids), while
the same list saved as JSON read them once. The list of objects and its JSON-saved form now
give equal transcripts. The runs are real (``autogen-agentchat`` 0.7.5 on its offline
``ReplayChatCompletionClient``, tests/formats/autogen_runs.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")

import turnfold
from tests.formats import autogen_runs as runs
from tests.formats.test_autogen import _shape
from turnfold.model import Thinking, ToolCall, Transcript, UserMessage

#: Each run_stream of autogen_runs, its prompt and the thoughts its TaskResult records (the
#: model's streamed replies carry no ThoughtEvent for the last one).
STREAMS = {
    "solo": (lambda: runs.solo_stream(stream=False), runs.PROMPT,
             ["First add.", "Both done; answer."]),
    "solo-streamed-model": (lambda: runs.solo_stream(stream=True), runs.PROMPT, ["First add."]),
    "swarm": (runs.team_stream, runs.TEAM_PROMPT, ["The writer answers."]),
    "swarm-chain": (runs.chain_stream, runs.CHAIN_PROMPT, ["The writer answers."]),
}  # fmt: skip


def _saved(events: list[Any]) -> str:
    """The list as a user saves it: each item's ``model_dump(mode="json")``, the
    ``TaskResult`` too (its messages and ``stop_reason``)."""
    return json.dumps([event.model_dump(mode="json") for event in events])


def _top(transcript: Transcript, kind: type[Any]) -> list[Any]:
    return [e for e in transcript.entries if isinstance(e, kind)]


@pytest.mark.parametrize("run", STREAMS)
def test_A1_a_run_stream_list_of_objects_reads_as_its_json_saved_form(run: str) -> None:
    make, prompt, thoughts = STREAMS[run]
    events = make()
    assert type(events[-1]).__name__ == "TaskResult"
    objects, saved = turnfold.load(events), turnfold.load(_saved(events))
    assert _shape(objects) == _shape(saved)
    assert objects.warnings == saved.warnings == []
    assert objects.metadata == saved.metadata
    # ... and as the run's TaskResult alone: its messages once.
    assert _shape(objects) == _shape(turnfold.load(events[-1]))
    assert [e.text for e in _top(objects, UserMessage)] == [prompt]
    assert [e.text for e in _top(objects, Thinking)] == thoughts
    calls = [c.call_id for c in objects.tool_calls(nested=True)]
    assert len(calls) == len(set(calls)) > 0
    assert objects.accounting is not None
    assert objects.accounting.unaccounted == []


def test_A1_the_solo_stream_s_calls_and_answer_are_read_once() -> None:
    """The concrete run: ``add`` succeeds, ``explode`` fails beside the ``researcher`` agent
    tool, whose own ``add`` nests under it; the answer last, once."""
    events = runs.solo_stream(stream=False)
    objects = turnfold.load(events)
    top = [(c.call_id, c.name, c.status) for c in _top(objects, ToolCall)]
    assert top == [
        ("call_1", "add", "success"),
        ("call_2", "explode", "error"),
        ("call_3", "researcher", "success"),
    ]
    researcher = _top(objects, ToolCall)[2].subagent
    assert researcher is not None
    assert researcher.transcript is not None
    assert [c.call_id for c in researcher.transcript.tool_calls()] == ["call_r1"]
    texts = [e.text for e in objects.entries if type(e).__name__ == "AssistantText"]
    assert texts == [runs.ANSWER]


def test_A1_a_list_of_task_result_objects_reads_each_run_once() -> None:
    """Several runs' ``TaskResult``s in one list (no messages before them): each run read
    once, in order, as the list of their messages reads. (Saved as JSON such a list is a
    file of runs, for ``turnfold.scan()``.)"""
    results = [runs.solo_run(), runs.team_run()]
    objects = turnfold.load(results)
    flat = turnfold.load([*results[0].messages, *results[1].messages])
    assert _shape(objects) == _shape(flat)
    assert [e.text for e in _top(objects, UserMessage)] == [runs.PROMPT, runs.TEAM_PROMPT]
