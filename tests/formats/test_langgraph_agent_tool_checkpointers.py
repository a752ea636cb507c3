"""An agent used as a tool in ``astream_events``, as users build and save it (spec A-1, A-2).

``test_langgraph_agent_tool_events.py`` runs the child agent with no checkpointer of its own
and saves ``version="v2"``'s events. Users also give the child a checkpointer
(``checkpointer=True``, so it remembers its thread across calls, or a saver of its own with a
thread of its own), and still use ``version="v1"``. Then its nodes' namespaces lose the tool
task's id (``tools|model:<id>``), or start afresh (``model:<id>``), and ``v1`` gives a model's
output as an ``LLMResult`` and names no parent runs. Real runs of the scripted
``FakeToolModel`` (``langchain_runs.py``), followed as they run and saved the ways users save
them (``langgraph_saved_streams.SAVERS``, and a line per event with ``json.dumps``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats import langgraph_saved_streams as saved
from tests.formats.test_langgraph_agent_tool_events import follow_events
from tests.formats.test_langgraph_saved_stream import shown
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import Transcript

#: What every run below shows: the child under the parent's call, the parent's own entries.
NESTED = [
    ("UserMessage", "What is 2+3? Ask the helper.", None),
    ("Thinking", "Ask the helper.", (107, 17)),
    ("call", "p1", "ask_helper", {"question": "2+3?"}, "success", runs.CHILD_ANSWER, ("helper", [
        ("UserMessage", "2+3?", None),
        ("Thinking", "Child adds.", (105, 15)),
        ("call", "child_call_1", "add", {"a": 2, "b": 3}, "success", "5", None),
        ("AssistantText", runs.CHILD_ANSWER, (50, 5)),
    ])),
    ("AssistantText", runs.PARENT_ANSWER, (60, 6)),
]  # fmt: skip


def parent_of(checkpointer: Any, config: Any = None) -> Any:
    """``runs.parent_agent`` with the child given ``checkpointer`` and invoked with
    ``config`` (a thread of its own)."""
    child = create_agent(
        runs.FakeToolModel(
            responses=[
                runs._response("Child adds.", None, [("add", {"a": 2, "b": 3}, "child_call_1")], 5),
                AIMessage(content=runs.CHILD_ANSWER, usage_metadata=runs._usage(50, 5)),
            ]
        ),
        tools=[runs.add],
        name="helper",
        checkpointer=checkpointer,
    )

    @tool
    def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        answer = child.invoke({"messages": [("user", question)]}, config)["messages"][-1]
        return str(answer.content)

    return create_agent(
        runs.FakeToolModel(
            responses=[
                runs._response(
                    "Ask the helper.", None, [("ask_helper", {"question": "2+3?"}, "p1")], 7
                ),
                AIMessage(content=runs.PARENT_ANSWER, usage_metadata=runs._usage(60, 6)),
            ]
        ),
        tools=[ask_helper],
        name="parent",
        checkpointer=InMemorySaver(),
    )


def all_warnings(transcript: Transcript) -> list[str]:
    """The warnings of a transcript and of every sub-agent's, nested at any depth."""
    out = [w.reason for w in transcript.warnings]
    for call in transcript.tool_calls():
        if call.subagent and call.subagent.transcript:
            out += all_warnings(call.subagent.transcript)
    return out


CHILDREN = {
    "no checkpointer": lambda: parent_of(None),
    "checkpointer=True": lambda: parent_of(True),
    "its own thread": lambda: parent_of(InMemorySaver(), {"configurable": {"thread_id": "c"}}),
}


@pytest.mark.filterwarnings("ignore:astream_events version='v1' is deprecated")
@pytest.mark.parametrize("version", ["v2", "v1"])
@pytest.mark.parametrize("child", list(CHILDREN))
def test_A2_an_agent_tool_with_its_own_checkpointer_nests_under_its_call(
    child: str, version: str
) -> None:
    """Whatever checkpointer the child has, its steps nest under the call that ran it,
    followed and saved alike, with no warning at any level: the namespace its graph was
    called in (``metadata["checkpoint_ns"]``) names the tool task where its own no longer
    does; the parent holds none of its messages."""
    followed, events, _ = follow_events(CHILDREN[child](), version)
    assert all_warnings(followed) == []
    assert shown(followed) == NESTED
    for saver, save in saved.SAVERS.items():
        loaded = turnfold.load(save(events))
        assert (saver, all_warnings(loaded)) == (saver, [])
        assert (saver, shown(loaded)) == (saver, NESTED)


@pytest.mark.filterwarnings("ignore:astream_events version='v1' is deprecated")
def test_A1_saved_v1_events_read_the_child_s_model_output_from_its_llm_result(
    tmp_path: Path,
) -> None:
    """``version="v1"`` gives a model's output as an ``LLMResult`` (``{"generations":
    [[{"message": ...}]]}``) and names no parent runs; saved, the model node's output (a
    ``Command``) is only its text, so the child's call is read from that result (by the
    node's namespace, which its model shares): its tool's result settles it, not a second
    call made of the result with a warning of an unknown tool_call_id."""
    _, events, _ = follow_events(runs.parent_agent(), "v1")
    path = tmp_path / "events.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for event in events:  # as a user writes them, one a line
            out.write(json.dumps(event, default=saved._model_dump) + "\n")
    loaded = turnfold.load(path)
    assert all_warnings(loaded) == []
    (call,) = loaded.tool_calls()
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    child = call.subagent.transcript
    assert [
        (c.call_id, c.args, c.status, c.result and c.result.text) for c in child.tool_calls()
    ] == [("child_call_1", {"a": 2, "b": 3}, "success", "5")]


def test_X1_events_saved_with_default_str_are_a_clear_error_saying_how_to_save_them(
    tmp_path: Path,
) -> None:
    """``json.dumps(event, default=str)`` writes each message as its ``str()``
    (``content='2+3?' additional_kwargs={} ...``): no type, nothing LangChain reads back. The
    load is an error naming the file, the line of the first such message and how to save the
    events instead, not a bare "no messages"."""
    _, events, _ = follow_events(runs.parent_agent())
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e, default=str) + "\n" for e in events), encoding="utf-8")
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(path)
    message = str(raised.value)
    assert str(path) in message
    assert "line 2 holds a message saved as its str()" in message
    assert "default=str" in message
    assert "langchain_core.load.dumps" in message
