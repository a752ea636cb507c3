"""LangGraph streams the QA pass found short (spec A-1, A-2, L-4): a ``debug`` stream kept in a
list, a run resumed from a checkpoint, and a saved ``updates`` stream, which holds no prompt.

The runs are real: ``create_agent`` with the scripted offline model of
``tests/formats/langchain_runs.py`` (thinking, a call that succeeds, a ``ToolException`` the
tool handles, usage, an answer), and its ``interrupt_agent``, whose tool asks a human with
``interrupt()``; LangGraph's own ``stream`` / ``astream`` and its ``InMemorySaver`` run them.
The events are saved as users save them: ``langchain_core.load.dumps``, or a JSON line per
event with a ``default`` that calls a message's ``model_dump()``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph")

from langgraph.types import Command

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats.langchain_runs import RESUMED, said
from turnfold.model import Transcript, UserMessage
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

INPUTS = {"messages": [("user", runs.PROMPT)]}


def _model_dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else str(value)


def _dumps(events: list[Any]) -> str:
    from langchain_core.load import dumps

    return dumps(events, pretty=True)


#: Each way of saving a stream's events: the text of the file.
SAVERS: dict[str, Callable[[list[Any]], str]] = {
    "dumps": _dumps,
    "jsonl": lambda events: "\n".join(json.dumps(e, default=_model_dump) for e in events) + "\n",
}


def _text(transcript: Transcript, locale: str = "en") -> str:
    return render_text(build_view_model(transcript, DisplaySettings(locale=locale)))


# --- 1. a debug stream kept in a list --------------------------------------------------------


@pytest.mark.parametrize("saved", [None, *SAVERS], ids=lambda s: s or "objects")
def test_A1_a_debug_stream_kept_in_a_list_loads_as_its_followed_run(saved: str | None) -> None:
    """``turnfold.load(list(graph.stream(inputs, stream_mode="debug")))``, or the list saved:
    its checkpoints' states read as a followed debug stream reads them, the prompt included."""
    agent = runs.scripted_agent()
    config = runs._config("debug-list")
    events = list(agent.stream(INPUTS, config, stream_mode="debug"))
    assert {e["type"] for e in events} == {"checkpoint", "task", "task_result"}
    final = turnfold.load(agent.get_state(config).values)
    loaded = turnfold.load(events if saved is None else SAVERS[saved](events))
    assert loaded.warnings == []
    assert loaded.entries == final.entries
    assert [c.status for c in loaded.tool_calls()] == ["success", "error"]
    accounting = loaded.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["debug event"] == {"mapped": len(events)}
    # Followed live, the same events make the same transcript.
    followed = turnfold.follow(iter(events), format="langchain", display=False)
    list(followed)
    assert followed.transcript.entries == loaded.entries


# --- 2. a run resumed from a checkpoint ------------------------------------------------------


def _interrupted(thread: str) -> tuple[Any, Any]:
    """The interrupt agent run until its tool asks to delete ``/a``: the agent, its config."""
    agent = runs.interrupt_agent(["/a"])
    config = runs._config(thread)
    list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode="updates"))
    assert agent.get_state(config).interrupts
    return agent, config


@pytest.mark.parametrize("mode", ["updates", "messages", ["updates", "messages"], None], ids=str)
def test_A2_a_resumed_run_followed_shows_the_thread_s_earlier_messages(mode: Any) -> None:
    """``stream(Command(resume=...), config)`` in a mode that streams no state: the prompt
    and the call the interrupt stopped are read from the thread's checkpointer, so the call
    is settled by its result, with no warning, as the load of the final state shows it."""
    agent, config = _interrupted(f"resumed-{mode}")
    modes = {} if mode is None else {"stream_mode": mode}
    run = turnfold.follow(agent.stream(Command(resume="yes"), config, **modes), display=False)
    list(run)
    assert run.transcript.warnings == []
    assert said(run.transcript) == RESUMED
    assert run.transcript.entries == turnfold.load(agent.get_state(config).values).entries
    (call,) = run.transcript.tool_calls()
    assert call.result is not None
    assert (call.call_id, call.result.text) == ("d1", "deleted /a")


def test_A2_a_resumed_astream_followed_with_async_for_shows_its_history() -> None:
    async def main() -> tuple[Any, Any, Any]:
        agent, config = _interrupted("resumed-async")
        stream = agent.astream(Command(resume="yes"), config, stream_mode="updates")
        run = turnfold.follow(stream, display=False)
        _ = [event async for event in run]
        return run, agent, config

    # A fresh thread's loop: other tests may leave one running in this thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run, agent, config = pool.submit(asyncio.run, main()).result()
    assert run.transcript.warnings == []
    assert run.transcript.entries == turnfold.load(agent.get_state(config).values).entries


def test_A2_a_thread_s_next_turn_in_updates_mode_shows_its_earlier_turns() -> None:
    """The same read gives a thread's next turn its history, as its ``invoke`` result has."""
    agent = runs.scripted_agent()
    config = runs._config("next-turn")
    agent.invoke(INPUTS, config)
    again = {"messages": [("user", "Once more.")]}
    run = turnfold.follow(agent.stream(again, config, stream_mode="updates"), display=False)
    list(run)
    assert run.transcript.warnings == []
    assert run.transcript.entries == turnfold.load(agent.get_state(config).values).entries
    prompts = [e.text for e in run.transcript.entries if type(e) is UserMessage]
    assert prompts == [runs.PROMPT, "Once more."]


def _wrapped(events: Any) -> Iterator[Any]:
    """A stream of the user's own around LangGraph's: turnfold cannot reach the graph."""
    yield from events


def test_A2_a_resumed_run_whose_graph_is_out_of_reach_says_what_is_missing_and_how() -> None:
    agent, config = _interrupted("resumed-wrapped")
    stream = _wrapped(agent.stream(Command(resume="yes"), config, stream_mode="updates"))
    run = turnfold.follow(stream, format="langchain", display=False)
    list(run)
    (warning,) = run.transcript.warnings
    assert warning.reason == (
        "tool result for an unknown tool_call_id 'd1': the stream begins after its call "
        "(a run resumed from a checkpoint, or a thread's next turn), whose messages are in "
        "the thread's checkpointer, not in the stream; follow graph.stream(...) itself, not "
        "a wrapper, and turnfold reads them (graph.get_state(config)), or stream with "
        'stream_mode="values" (or add "values" to the modes), whose states hold them'
    )
    # Everything the stream holds is still shown: the call, settled by its result, after a
    # prompt not recorded, as the saved stream loads.
    (call,) = run.transcript.tool_calls()
    assert (call.call_id, call.name, call.status) == ("d1", "delete_file", "success")
    assert said(run.transcript) == [("UserMessage", None, None),
                                    ("ToolCall", "delete_file", "success"),
                                    ("AssistantText", "Done.", None)]  # fmt: skip


def test_L4_a_saved_resumed_stream_says_how_to_save_its_history() -> None:
    agent, config = _interrupted("resumed-saved")
    events = list(agent.stream(Command(resume="yes"), config, stream_mode="updates"))
    transcript = turnfold.load(SAVERS["jsonl"](events))
    (warning,) = transcript.warnings
    assert warning.line == 1
    assert warning.reason == (
        "tool result for an unknown tool_call_id 'd1': the stream begins after its call "
        "(a run resumed from a checkpoint, or a thread's next turn), whose messages are in "
        'the thread\'s checkpointer, not in the saved events; save the stream with "values" '
        'among its modes (stream_mode=["updates", "values"]) or "debug", whose states hold '
        "them, or load the thread itself: turnfold.load(graph.get_state(config))"
    )
    assert [c.status for c in transcript.tool_calls()] == ["success"]


# --- 3. a saved updates stream holds no prompt -----------------------------------------------


@pytest.mark.parametrize("mode", ["updates", "messages", ["updates", "messages"]], ids=str)
def test_A1_a_saved_stream_without_its_input_says_so_in_place_of_the_prompt(mode: Any) -> None:
    """The input is written to the state before the first step, and these modes stream what
    the nodes write: no event holds the prompt (checked here against the run's events). In
    its place, one line says so and how to keep it, in the view's language."""
    events, final = runs.stream_run(mode)
    assert runs.PROMPT not in repr(events)
    transcript = turnfold.load(SAVERS["dumps"](events))
    assert transcript.warnings == []
    first = transcript.entries[0]
    assert type(first) is UserMessage
    assert first.text == ""
    assert first.meta["prompt_not_recorded"] is True
    # Everything after it is the run, as its final state's load shows it after the prompt.
    loaded = turnfold.load(final)
    assert transcript.entries[1:] == loaded.entries[1:]
    note = "Prompt not recorded: LangGraph's updates and messages hold no input"
    lines = _text(transcript).splitlines()
    at = lines.index("User")  # after the header, however many lines it takes
    assert lines[at : at + 2] == ["User", f'  {note} (add "values" to keep it)']
    zh = _text(transcript, "zh").splitlines()
    said = "未记录提示：LangGraph 的 updates 与 messages 不含输入"
    assert f'  {said}（加上 "values" 即可保留）' in zh
    assert turnfold.load(transcript.dump()).entries[0].meta == first.meta


@pytest.mark.parametrize("mode", [["updates", "values"], "debug", ["updates", "debug"]], ids=str)
@pytest.mark.parametrize("saver", sorted(SAVERS))
def test_A1_a_stream_saved_with_a_state_mode_loads_with_its_prompt(mode: Any, saver: str) -> None:
    """The combined form the notice names: the first state holds the prompt."""
    events, final = runs.stream_run(mode)
    transcript = turnfold.load(SAVERS[saver](events))
    assert transcript.warnings == []
    assert transcript.entries == turnfold.load(final).entries
    first = transcript.entries[0]
    assert type(first) is UserMessage
    assert (first.text, first.meta) == (runs.PROMPT, {})
