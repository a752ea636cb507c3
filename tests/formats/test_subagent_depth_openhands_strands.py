"""Sub-agents nested under calls down to ``turnfold.nesting.MAX_DEPTH``, one deeper said (spec
F-7, X-2): the OpenHands SDK's sub-agent conversations (``subagents/`` of each conversation
folder) and Strands' agents used as tools of agents used as tools.

The OpenHands SDK reader read sub-agents' folders eight levels down and silently no further,
and the Strands reader described agents' runs three levels down, the fourth level's call then
saying its steps were missing. Both now nest every level down to the bound every reader and the
view share, name what is deeper in a warning, and stop at a folder linked into itself or an
agent that is a tool of itself.
"""

from __future__ import annotations

import html
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.test_nesting_depth import stack_limit
from turnfold.formats.frameworks import strands
from turnfold.model import ToolCall, Transcript
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.render.viewmodel import build_view_model


def nested(transcript: Transcript, name: str | None = None) -> list[tuple[ToolCall, Transcript]]:
    """Each level's first call that runs a sub-agent (named ``name``, when given), with the
    transcript it is in, from the top down, as far as a sub-agent's transcript is nested."""
    found: list[tuple[ToolCall, Transcript]] = []
    inner: Transcript | None = transcript
    while inner is not None:
        call = next((c for c in inner.tool_calls() if c.subagent and name in (None, c.name)), None)
        if call is None:
            break
        found.append((call, inner))
        assert call.subagent is not None
        inner = call.subagent.transcript
    return found


# --- OpenHands SDK --------------------------------------------------------------------------

#: The real conversation the OpenHands SDK 1.58.2 wrote (its README says how): its ``task``
#: call ran the ``helper`` sub-agent, whose conversation is in its ``subagents/``.
CONVERSATION = (
    Path(__file__).parents[1]
    / "fixtures"
    / "harnesses"
    / "openhands-sdk"
    / "conversations"
    / "2e6c222a6c254b28bab45a8281ad9b15"
)
HELPER = CONVERSATION / "subagents" / "babb720b46a340dcbdc07d4e40acf62c"
#: The ``task`` call's prompt, which the ``TaskManager`` sends as is as the sub-agent's first.
TASK = "SUBTASK: count the lines of hello.py"
#: The event file of the conversation's first prompt.
FIRST_PROMPT = "event-00001-416c59c8-9cff-4941-ad3d-de4d960bd371.json"


def as_sub_agent(folder: Path) -> Path:
    """A copy of the fixture's conversation (``folder``) made a sub-agent's: its first prompt
    is the task its caller's ``task`` call sent, as the SDK persists a task's conversation.
    The event file is rewritten as JSON, as ``EventLog`` writes one (its key order kept)."""
    shutil.copytree(CONVERSATION, folder, ignore=shutil.ignore_patterns("subagents"))
    path = folder / "events" / FIRST_PROMPT
    event = json.loads(path.read_text(encoding="utf-8"))
    assert event["kind"] == "MessageEvent"
    assert event["source"] == "user"
    event["llm_message"]["content"][0]["text"] = TASK
    path.write_text(json.dumps(event, separators=(",", ":")), encoding="utf-8")
    return folder


def openhands_chain(root: Path, levels: int) -> Path:
    """A conversation whose ``task`` sub-agent runs a ``task`` of its own, ``levels``
    sub-agents deep, each one's conversation in ``subagents/<id hex>/`` of its caller's as
    the SDK lays them out: the fixture's conversation at the top, a copy of it as a
    sub-agent's (:func:`as_sub_agent`) at each level down to the last but one, and the real
    ``helper`` conversation (``wc -l hello.py``, no sub-agent) at the last."""
    top = root / CONVERSATION.name
    shutil.copytree(CONVERSATION, top, ignore=shutil.ignore_patterns("subagents"))
    folder = top
    for level in range(1, levels + 1):
        inner = folder / "subagents" / f"{level:032x}"
        if level == levels:
            shutil.copytree(HELPER, inner)
        else:
            as_sub_agent(inner)
        folder = inner
    return top


def test_F7_openhands_sub_agents_past_the_old_bound_of_8_nest_whole(tmp_path: Path) -> None:
    levels = 10
    top = openhands_chain(tmp_path, levels)
    with stack_limit(300):
        transcript = turnfold.load(top)
    found = nested(transcript, "task")
    assert len(found) == levels  # each level's task call, the last running the helper
    for call, inner in found:
        assert call.subagent is not None
        assert call.subagent.transcript is not None
        assert not call.subagent.steps_missing
        assert inner.warnings == []
    helper = found[-1][0].subagent
    assert helper is not None
    assert helper.transcript is not None
    assert helper.transcript.tool_calls()[0].description == "wc -l hello.py"
    assert helper.transcript.tool_calls(nested=False)[0].result is not None
    assert build_view_model(transcript)["notice"] is None


def test_F7_openhands_sub_agents_past_the_bound_nest_to_it_and_the_next_is_named(
    tmp_path: Path,
) -> None:
    levels = MAX_DEPTH + 2
    top = openhands_chain(tmp_path, levels)
    with stack_limit(300):  # no RecursionError: the load takes some 3 frames a level
        transcript = turnfold.load(top)
    found = nested(transcript, "task")
    assert len(found) == MAX_DEPTH + 1  # the calls of levels 0 to 32; level 32's nests nothing
    last, at_bound = found[-1]
    assert last.subagent is not None
    # Its steps are in the folder the warning names, not missing: its line and result show.
    assert (last.subagent.transcript, last.subagent.steps_missing) == (None, False)
    assert last.subagent.task == TASK
    assert last.result is not None
    assert last.result.text == "hello.py has 1 line."
    assert all(inner.warnings == [] for _, inner in found[:-1])
    (warning,) = at_bound.warnings
    assert warning.reason == too_deep(
        f"sub-agent conversation subagents/{MAX_DEPTH + 1:032x}",
        MAX_DEPTH + 1,
        "it loads as a conversation of its own",
    )
    assert warning.reason == (
        f"sub-agent conversation subagents/{MAX_DEPTH + 1:032x} is {MAX_DEPTH + 1} sub-agents "
        f"deep, past the {MAX_DEPTH} that nest under their calls: not shown here; it loads as "
        "a conversation of its own"
    )
    folder = top.joinpath(*[f"subagents/{level:032x}" for level in range(1, MAX_DEPTH + 1)])
    assert warning.source == str(folder / "events")
    # And so it does, with the level under it.
    alone = turnfold.load(folder / "subagents" / f"{MAX_DEPTH + 1:032x}")
    assert len(nested(alone, "task")) == 1
    assert alone.warnings == []
    view = build_view_model(transcript)
    assert view["notice"] is not None
    assert any(html.escape(warning.reason) in item for item in view["notice"]["items"])


@pytest.mark.parametrize("target", ["itself", "its caller"])
def test_F7_an_openhands_sub_agent_folder_linked_into_itself_is_read_once_and_said(
    tmp_path: Path, target: str
) -> None:
    """A link in ``subagents/`` to the conversation it is in, or to one that conversation is
    nested in, is no sub-agent deeper: it is not read again, and not called too deep."""
    top = openhands_chain(tmp_path, 3)
    first = top / "subagents" / f"{1:032x}"
    second = first / "subagents" / f"{2:032x}"
    shutil.rmtree(second / "subagents")
    linked = first if target == "its caller" else second
    (second / "subagents").mkdir()
    (second / "subagents" / "ffffffffffffffffffffffffffffffff").symlink_to(linked)
    with stack_limit(300):
        transcript = turnfold.load(top)
    found = nested(transcript, "task")
    assert len(found) == 3  # the top's, level 1's and level 2's calls
    last, inner = found[-1]
    assert last.subagent is not None
    assert (last.subagent.transcript, last.subagent.steps_missing) == (None, False)
    (warning,) = inner.warnings
    assert warning.reason == (
        f"sub-agent conversation subagents/ffffffffffffffffffffffffffffffff is a link to "
        f"{linked.resolve()}, a conversation it is nested in (a folder linked into itself): "
        "not read again"
    )
    assert "sub-agents deep" not in warning.reason
    assert all(inner.warnings == [] for _, inner in found[:-1])


def test_F7_openhands_a_task_whose_conversation_is_missing_still_says_so_at_the_bound(
    tmp_path: Path,
) -> None:
    """Only the call whose conversation the warning names is spared "steps missing": at the
    bound, a task none of the folders not read began with still says its steps are missing."""
    top = openhands_chain(tmp_path, MAX_DEPTH + 1)
    folder = top.joinpath(*[f"subagents/{level:032x}" for level in range(1, MAX_DEPTH + 2)])
    shutil.rmtree(folder)
    shutil.copytree(CONVERSATION, folder, ignore=shutil.ignore_patterns("subagents"))
    transcript = turnfold.load(top)  # the folder past the bound begins with another prompt
    last, at_bound = nested(transcript, "task")[-1]
    assert last.subagent is not None
    assert (last.subagent.transcript, last.subagent.steps_missing) == (None, True)
    (warning,) = at_bound.warnings
    assert warning.reason.startswith(f"sub-agent conversation subagents/{MAX_DEPTH + 1:032x} is")


# --- Strands ----------------------------------------------------------------------------------

needs_strands = pytest.mark.skipif(
    importlib.util.find_spec("strands") is None, reason="strands-agents is not installed"
)


def strands_chain(levels: int) -> Any:
    """A Strands agent whose tool is an agent (``Agent.as_tool()``) whose tool is an agent,
    ``levels`` deep, after its run: each agent, scripted offline (``strands_runs``), calls its
    tool's agent with the task of the level below, then answers; the last only answers."""
    from strands import Agent

    from tests.formats.strands_runs import on_fresh_thread, scripted_model, turn

    async def go() -> Any:
        inner: Any = None
        for level in range(levels, -1, -1):
            turns = [turn(("text", f"answer of level {level}"), stop="end_turn")]
            if inner is not None:
                task = {"input": f"task of level {level + 1}"}
                call = ("tool", f"c{level}", f"agent{level + 1}", task)
                turns.insert(0, turn(call, stop="tool_use"))
            inner = Agent(
                name=f"agent{level}",
                tools=[inner.as_tool()] if inner is not None else [],
                callback_handler=None,
                model=scripted_model(turns),
            )
        await inner.invoke_async("task of level 0")
        return inner

    return on_fresh_thread(go)


@needs_strands
def test_F7_strands_agents_as_tools_past_the_old_bound_of_3_nest_whole() -> None:
    levels = 5
    transcript = turnfold.load(strands_chain(levels))
    assert transcript.warnings == []
    found = nested(transcript)
    assert [call.name for call, _ in found] == [f"agent{level}" for level in range(1, levels + 1)]
    for call, _ in found:
        assert call.subagent is not None
        assert not call.subagent.steps_missing  # the 4th level's said so, its steps unread
        assert call.subagent.transcript is not None
    leaf = found[-1][0].subagent
    assert leaf is not None
    assert leaf.transcript is not None
    assert [getattr(e, "text", None) for e in leaf.transcript.entries] == [
        f"task of level {levels}",
        f"answer of level {levels} ",
    ]
    assert build_view_model(transcript)["notice"] is None


@needs_strands
def test_F7_strands_agents_as_tools_past_the_bound_nest_to_it_and_the_next_is_named() -> None:
    agent = strands_chain(MAX_DEPTH + 2)
    with stack_limit(300):  # no RecursionError: the description and the read, 32 levels
        transcript = turnfold.load(agent)
    found = nested(transcript)
    assert len(found) == MAX_DEPTH + 1  # the calls of levels 0 to 32; level 32's nests nothing
    last, _ = found[-1]
    assert last.name == f"agent{MAX_DEPTH + 1}"
    assert last.subagent is not None
    # Its agent holds its steps, not shown here: not missing; its line and result show.
    assert (last.subagent.transcript, last.subagent.steps_missing) == (None, False)
    assert last.result is not None
    assert last.result.text == f"answer of level {MAX_DEPTH + 1} \n"
    assert all(inner.warnings == [] for _, inner in found[1:])
    (warning,) = transcript.warnings  # the loaded transcript's, as the reader's others
    assert warning.reason == too_deep(
        f"sub-agent 'agent{MAX_DEPTH + 1}' of call c{MAX_DEPTH}",
        MAX_DEPTH + 1,
        f"turnfold.load() of 'agent{MAX_DEPTH + 1}' shows its last run and the agents under it",
    )
    assert warning.reason.startswith(
        f"sub-agent 'agent{MAX_DEPTH + 1}' of call c{MAX_DEPTH} is {MAX_DEPTH + 1} sub-agents "
        f"deep, past the {MAX_DEPTH} that nest under their calls: not shown here; "
    )
    # And so it does: agent33's run and the agent it ran as a tool.
    bottom = agent
    for level in range(1, MAX_DEPTH + 2):
        bottom = bottom.tool_registry.registry[f"agent{level}"].agent
    alone = turnfold.load(bottom)
    assert [call.name for call, _ in nested(alone)] == [f"agent{MAX_DEPTH + 2}"]
    assert alone.warnings == []
    view = build_view_model(transcript)
    assert view["notice"] is not None
    assert view["notice"]["items"] == [html.escape(f"<object>: {warning.reason}")]


@needs_strands
def test_F7_a_strands_agent_that_is_a_tool_of_itself_is_not_followed_into_itself() -> None:
    """An agent used as a tool by an agent it runs (``lead`` → ``helper`` → ``lead``, through
    a ``@tool`` function), and one that is a tool of itself: Strands refuses to run an agent
    while it runs, so the inner call ran nothing and says Strands' error; the description
    does not go round down to the bound."""
    from strands import Agent, tool

    from tests.formats.strands_runs import on_fresh_thread, scripted_model, turn

    async def go() -> tuple[Any, Any]:
        @tool
        def ask_lead(question: str) -> str:
            """Ask the lead agent."""
            return str(lead(question))

        @tool
        def ask_myself(question: str) -> str:
            """Ask this agent again."""
            return str(alone(question))

        helper = Agent(
            name="helper",
            tools=[ask_lead],
            callback_handler=None,
            model=scripted_model(
                [turn(("tool", "h1", "ask_lead", {"question": "and you?"}), stop="tool_use"),
                 turn(("text", "helper's answer"), stop="end_turn")]
            ),
        )  # fmt: skip
        lead = Agent(
            name="lead",
            tools=[helper.as_tool()],
            callback_handler=None,
            model=scripted_model(
                [turn(("tool", "l1", "helper", {"input": "help"}), stop="tool_use"),
                 turn(("text", "lead's answer"), stop="end_turn")]
            ),
        )  # fmt: skip
        alone = Agent(
            name="alone",
            tools=[ask_myself],
            callback_handler=None,
            model=scripted_model(
                [turn(("tool", "a1", "ask_myself", {"question": "again"}), stop="tool_use"),
                 turn(("text", "alone's answer"), stop="end_turn")]
            ),
        )  # fmt: skip
        await lead.invoke_async("start")
        await alone.invoke_async("start")
        return lead, alone

    lead, alone = on_fresh_thread(go)
    # The lead's description holds the helper's run, and the helper's tool that is the lead
    # by name only: no run of the lead under it, and none under that, down to the bound.
    helper_run = strands.agent_description(lead)["agent_runs"]["helper"]["agent"]
    assert helper_run["agent_tools"] == {"ask_lead": "lead"}
    assert "agent_runs" not in helper_run
    assert "agent_runs" not in strands.agent_description(alone)
    transcript = turnfold.load(lead)
    assert transcript.warnings == []
    (helper_call, _), (inner, _) = nested(transcript)
    assert helper_call.subagent is not None
    assert helper_call.subagent.transcript is not None
    assert (inner.name, inner.status) == ("ask_lead", "error")
    assert inner.subagent is not None
    assert (inner.subagent.name, inner.subagent.transcript) == ("lead", None)
    assert inner.result is not None
    assert "ConcurrencyException" in (inner.result.text or "")
    itself = turnfold.load(alone)
    assert itself.warnings == []
    ((call, _),) = nested(itself)
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.transcript, call.status) == ("alone", None, "error")
