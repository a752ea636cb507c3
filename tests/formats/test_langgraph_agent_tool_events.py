"""An agent used as a tool, in ``astream_events`` (spec A-1, A-2, F-7; issue 22).

The parent's ``ask_helper`` tool ``invoke``s a child agent (``create_agent``), so the child's
graph streams nothing of its own: its steps are in its nodes' events (namespace
``tools:<task id>|model:<id>``) and in its own ``on_chain_end``. Real runs, offline: the
scripted ``FakeToolModel`` of ``langchain_runs.py``, followed with ``turnfold.follow`` as
they run, and saved a line (or a list) of events the ways users save them
(``langgraph_saved_streams.SAVERS``). The static load of the parent's final state holds no
trace of the child (its messages are not the parent's), so the stream is what shows it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
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
from tests.formats.test_langgraph_saved_stream import shown
from turnfold.formats.frameworks import langchain as adapter
from turnfold.model import AssistantText, ToolCall, Transcript

PROMPT = "What is 2+3? Ask the helper."


def twice_parent() -> Any:
    """A parent whose one tool ``invoke``s the same child agent twice (two questions): two
    graph runs in one tool task's namespace."""
    child = create_agent(
        runs.FakeToolModel(
            responses=[
                runs._response("Add 2 and 3.", None, [("add", {"a": 2, "b": 3}, "c1")], 1),
                AIMessage(content="5.", usage_metadata=runs._usage(20, 2)),
                runs._response("Add 4 and 5.", None, [("add", {"a": 4, "b": 5}, "c2")], 3),
                AIMessage(content="9.", usage_metadata=runs._usage(30, 3)),
            ]
        ),
        tools=[runs.add],
        name="helper",
    )

    @tool
    def ask_helper_twice(question: str) -> str:
        """Ask the helper two sums."""
        first = child.invoke({"messages": [("user", "2+3?")]})["messages"][-1].content
        second = child.invoke({"messages": [("user", "4+5?")]})["messages"][-1].content
        return f"{first} {second}"

    calls = [{"name": "ask_helper_twice", "args": {"question": "sums"}, "id": "p1"}]
    return create_agent(
        runs.FakeToolModel(
            responses=[AIMessage("", tool_calls=calls), AIMessage("Both sums: 5 and 9.")]
        ),
        tools=[ask_helper_twice],
        name="parent",
        checkpointer=InMemorySaver(),
    )


def follow_events(agent: Any, version: str = "v2") -> tuple[Transcript, list[Any], list[Any]]:
    """``turnfold.follow(agent.astream_events(...))`` consumed with ``async for`` on a fresh
    thread's loop: the transcript, the events, and what the parent's call ``p1`` was at each
    change the transcript's observers were told of (its status, and its sub-agent's calls
    with theirs)."""

    async def main() -> tuple[Transcript, list[Any], list[Any]]:
        config = runs._config(f"tool-events-{version}")
        prompt = {"messages": [("user", PROMPT)]}
        run = turnfold.follow(agent.astream_events(prompt, config, version=version), display=False)
        moments: list[Any] = []

        def seen(change: Any) -> None:
            entry = change.entry
            if isinstance(entry, ToolCall) and entry.call_id == "p1" and entry.subagent:
                child = entry.subagent.transcript
                inner = [(c.call_id, c.status) for c in child.tool_calls()] if child else []
                moments.append((entry.status, inner))

        run.transcript.observe(seen)
        events = [event async for event in run]
        return run.transcript, events, moments

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        followed: tuple[Transcript, list[Any], list[Any]] = pool.submit(
            asyncio.run, main()
        ).result()
    return followed


def follow_stream(events: list[Any]) -> Transcript:
    transcript = Transcript()
    follower = adapter.Follower(transcript)
    for event in events:
        follower.feed(event)
    follower.close()
    return transcript


def texts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, AssistantText)]


def subgraphs_run(mode: Any) -> Transcript:
    """The same parent run streamed with ``subgraphs=True``, followed."""
    events, _ = runs.stream_graph(runs.parent_agent(), PROMPT, mode, subgraphs=True)
    return follow_stream(events)


@pytest.mark.filterwarnings("ignore:astream_events version='v1' is deprecated")
@pytest.mark.parametrize("version", ["v2", "v1"])
def test_A2_an_agent_invoked_in_a_tool_nests_in_astream_events_as_in_a_subgraphs_stream(
    version: str,
) -> None:
    """Followed event by event, the child is the sub-agent of the call that ran it: its
    prompt, thinking, call and answer with their tokens, as ``stream_mode="values"`` with
    ``subgraphs=True`` nests it (``updates`` alone shows the same less the prompt, which no
    update holds); the parent shows its own messages once, none of the child's."""
    followed, _events, _ = follow_events(runs.parent_agent(), version)
    assert followed.warnings == []
    assert shown(followed) == shown(subgraphs_run(["values", "messages"]))
    (call,) = followed.tool_calls()
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    child = call.subagent.transcript
    assert (call.subagent.name, call.subagent.task) == ("helper", "2+3?")
    assert shown(child) == [
        ("UserMessage", "2+3?", None),
        ("Thinking", "Child adds.", (105, 15)),
        ("call", "child_call_1", "add", {"a": 2, "b": 3}, "success", "5", None),
        ("AssistantText", runs.CHILD_ANSWER, (50, 5)),
    ]
    (updates_call,) = subgraphs_run("updates").tool_calls()
    assert updates_call.subagent is not None
    assert updates_call.subagent.transcript is not None
    assert shown(child)[1:] == shown(updates_call.subagent.transcript)
    # Not duplicated into the parent: its own prompt, thinking, call and answer only.
    assert [type(e).__name__ for e in followed.entries] == [
        "UserMessage", "Thinking", "ToolCall", "AssistantText",
    ]  # fmt: skip
    assert texts(followed) == [runs.PARENT_ANSWER]
    assert len(followed.tool_calls(nested=True)) == 2
    # The final state the run left holds no trace of the child: the stream is what shows it.
    state = runs.parent_agent().invoke({"messages": [("user", PROMPT)]}, runs._config("s"))
    assert turnfold.load(state).tool_calls()[0].subagent is None


def test_A2_a_followed_child_s_call_shows_running_under_the_parent_s_running_call() -> None:
    """Live, the child's call shows as its model made it, running, while the parent's call
    runs, then settled: the child's steps arrive as they happen, not only at its end."""
    _, _, moments = follow_events(runs.parent_agent())
    assert ("executing", [("child_call_1", "executing")]) in moments
    assert ("executing", [("child_call_1", "success")]) in moments
    assert moments[-1] == ("success", [("child_call_1", "success")])


@pytest.mark.parametrize("saver", list(saved.SAVERS))
def test_A1_saved_astream_events_load_with_the_child_nested_as_followed(saver: str) -> None:
    """The events saved as users save them (``dumps``, ``json.dumps`` with a ``model_dump``
    or ``message_to_dict`` default, a line each): the same nesting as followed, though saved
    the model node's output (a ``Command``) is only its text."""
    followed, events, _ = follow_events(runs.parent_agent())
    loaded = turnfold.load(saved.SAVERS[saver](events))
    assert loaded.warnings == []
    assert shown(loaded) == shown(followed)
    (call,) = loaded.tool_calls()
    assert call.subagent is not None
    assert call.subagent.task == "2+3?"


def _runs_of(transcript: Transcript) -> list[Any]:
    (call,) = transcript.tool_calls()
    held = call.subagent
    assert held is not None
    assert held.transcript is not None
    out: list[Any] = [(call.call_id, call.status, held.name, held.subagent_count)]
    for each in held.transcript.tool_calls():
        sub = each.subagent
        assert sub is not None
        assert sub.transcript is not None
        result = each.result.text if each.result else None
        out.append((each.call_id, each.status, result, sub.name, sub.task, shown(sub.transcript)))
    return out


TWICE = [
    ("p1", "success", "helper", 2),
    ("p1/1", "success", "5.", "helper", "2+3?", [
        ("UserMessage", "2+3?", None),
        ("Thinking", "Add 2 and 3.", (101, 11)),
        ("call", "c1", "add", {"a": 2, "b": 3}, "success", "5", None),
        ("AssistantText", "5.", (20, 2)),
    ]),
    ("p1/2", "success", "9.", "helper", "4+5?", [
        ("UserMessage", "4+5?", None),
        ("Thinking", "Add 4 and 5.", (103, 13)),
        ("call", "c2", "add", {"a": 4, "b": 5}, "success", "9", None),
        ("AssistantText", "9.", (30, 3)),
    ]),
]  # fmt: skip


def test_A2_a_tool_that_runs_its_agent_twice_shows_two_sub_agents() -> None:
    """Each ``invoke`` is a graph run of its own (its ``run_id``, which its nodes' events
    name in their ``parent_ids``), in the one namespace of the tool task: the call's
    sub-agent holds each run as a call of its own with its sub-agent, followed and saved
    alike, and the parent holds none of their messages."""
    followed, events, _ = follow_events(twice_parent())
    assert followed.warnings == []
    assert _runs_of(followed) == TWICE
    assert texts(followed) == ["Both sums: 5 and 9."]
    assert len(followed.tool_calls(nested=True)) == 5  # p1, its two runs, c1, c2
    # The two runs are the sub-agents; the call's holder of them is none more (C-2).
    assert [row["subagents"] for row in turnfold.scan([followed]).rows] == [2]
    for saver in ("dumps", "jsonl"):
        loaded = turnfold.load(saved.SAVERS[saver](events))
        assert loaded.warnings == []
        assert _runs_of(loaded) == TWICE
        assert shown(loaded) == shown(followed)


def _without_prompts(described: list[Any]) -> list[Any]:
    """:data:`TWICE` as a stream of ``updates`` shows it: no update holds a run's prompt."""
    head, *rest = described
    return [head] + [(*run[:4], None, [e for e in run[5] if e[0] != "UserMessage"]) for run in rest]


@pytest.mark.parametrize("mode", [["values", "messages"], "updates"], ids=str)
def test_A2_a_tool_that_runs_its_agent_twice_streamed_with_subgraphs_shows_two_sub_agents(
    mode: Any,
) -> None:
    """``stream(..., subgraphs=True)``: LangGraph counts the graph runs of a task after its
    first (namespace ``("tools:<task id>", "1")``); the second run is the same call's second
    sub-agent, as ``astream_events`` shows it, not a graph used as a node left out."""
    events, _ = runs.stream_graph(twice_parent(), PROMPT, mode, subgraphs=True)
    assert any(len(e[0]) == 2 and e[0][1] == "1" for e in events)  # the counted namespace
    transcript = follow_stream(events)
    assert transcript.warnings == []
    expected = TWICE if mode != "updates" else _without_prompts(TWICE)
    assert _runs_of(transcript) == expected
    assert len(transcript.tool_calls(nested=True)) == 5
    if mode != "updates":
        followed, _, _ = follow_events(twice_parent())
        assert shown(transcript) == shown(followed)
    loaded = turnfold.load(saved.SAVERS["dumps"](events))
    assert _runs_of(loaded) == expected


def deep_parent() -> Any:
    """A parent whose tool invokes a child agent whose own tool invokes a grandchild."""

    def agent(name: str, call: dict[str, Any], answer: str, tools: list[Any]) -> Any:
        model = runs.FakeToolModel(responses=[AIMessage("", tool_calls=[call]), AIMessage(answer)])
        saver = InMemorySaver() if name == "parent" else None
        return create_agent(model, tools=tools, name=name, checkpointer=saver)

    grand = agent("grand", {"name": "add", "args": {"a": 1, "b": 1}, "id": "g1"}, "2.", [runs.add])

    @tool
    def ask_grand(q: str) -> str:
        """Ask the grandchild."""
        return str(grand.invoke({"messages": [("user", q)]})["messages"][-1].content)

    child_call = {"name": "ask_grand", "args": {"q": "1+1"}, "id": "c1"}
    child = agent("child", child_call, "grand says 2.", [ask_grand])

    @tool
    def ask_child(q: str) -> str:
        """Ask the child."""
        return str(child.invoke({"messages": [("user", q)]})["messages"][-1].content)

    return agent(
        "parent", {"name": "ask_child", "args": {"q": "go"}, "id": "p1"}, "done", [ask_child]
    )


def test_A2_an_agent_s_agent_nests_two_levels_down_followed_and_saved() -> None:
    """The grandchild's graph run is the child's (the nearest graph run in its nodes'
    ``parent_ids``), nested under the child's call, not the parent's."""
    followed, events, _ = follow_events(deep_parent())
    grand = ("grand", [
        ("UserMessage", "1+1", None),
        ("call", "g1", "add", {"a": 1, "b": 1}, "success", "2", None),
        ("AssistantText", "2.", None),
    ])  # fmt: skip
    child = ("child", [
        ("UserMessage", "go", None),
        ("call", "c1", "ask_grand", {"q": "1+1"}, "success", "2.", grand),
        ("AssistantText", "grand says 2.", None),
    ])  # fmt: skip
    expected = [
        ("UserMessage", PROMPT, None),
        ("call", "p1", "ask_child", {"q": "go"}, "success", "grand says 2.", child),
        ("AssistantText", "done", None),
    ]
    assert followed.warnings == []
    assert shown(followed) == expected
    assert shown(turnfold.load(saved.SAVERS["jsonl"](events))) == expected


def test_A2_agents_run_as_tools_in_parallel_nest_by_their_tasks_with_no_guess() -> None:
    """Two agents run as tools in parallel, whose tools wrap their answers: a stream of
    ``updates`` can only guess which run is which call's (with a warning); in
    ``astream_events`` each tool task's node input names its call, so no guess is made."""
    followed, events, _ = follow_events(runs.parallel_parent(wrapped=True))
    for transcript in (followed, turnfold.load(saved.SAVERS["dumps"](events))):
        assert transcript.warnings == []
        nested = {}
        for call in transcript.tool_calls():
            sub = call.subagent
            assert sub is not None
            assert sub.transcript is not None
            inner = [
                (c.call_id, c.result.text if c.result else None)
                for c in sub.transcript.tool_calls()
            ]
            nested[call.call_id] = (sub.name, sub.task, inner, texts(sub.transcript))
        assert nested == {
            "p1": ("alice", "1+2", [("ca", "3")], ["alice: 3"]),
            "p2": ("bob", "3+4", [("cb", "7")], ["bob: 7"]),
        }
