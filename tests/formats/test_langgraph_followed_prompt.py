"""A followed LangGraph run keeps its prompt (spec A-2), and a checkpointer database says which
threads it holds when a load names none or one it lacks (spec L-4, as an eval log does).

The runs are real: ``create_agent`` with the scripted offline model of
``tests/formats/langchain_runs.py`` (thinking, a call that succeeds, a ``ToolException`` the
tool handles, usage, an answer), streamed by LangGraph's own ``stream`` / ``astream``. No
``updates`` or ``messages`` event holds the input messages, so the follower reads them off the
generator ``stream`` returns. The databases are written by the real ``SqliteSaver``
(langgraph-checkpoint-sqlite) in a temporary folder.

What may differ between a followed run and ``load(agent.invoke(inputs))`` of another run of
the same agent: the ``batch_id`` of each call, which is its AI message's id, made afresh by
LangChain for every model call (``lc_run--<uuid7>``). Against the load of the very run
followed (its final state, which is what its ``invoke`` returns), nothing differs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph.checkpoint.sqlite")

from langgraph.types import Command

import turnfold
from tests.formats import langchain_runs as runs
from turnfold.formats.errors import SampleSelectionError
from turnfold.formats.harnesses import inspect_log
from turnfold.model import Entry, ToolCall, Transcript, UserMessage

INPUTS = {"messages": [("user", runs.PROMPT)]}
#: The modes the QA pass named, create_agent's default (None: ``updates``), and the modes
#: whose events hold the state (``debug``) or which tasks ran (``tasks``) beside updates.
MODES = ["updates", "messages", "values", ["updates", "messages"], None, "debug",
         ["updates", "tasks"]]  # fmt: skip


def _followed(mode: Any, inputs: Any = INPUTS, thread: str = "followed", **kwargs: Any) -> Any:
    """``turnfold.follow(agent.stream(inputs, config, stream_mode=mode))`` consumed, and the
    load of that run's final state (read from its checkpointer)."""
    agent = runs.scripted_agent()
    config = runs._config(thread)
    modes = {} if mode is None else {"stream_mode": mode}
    run = turnfold.follow(agent.stream(inputs, config, **modes, **kwargs), display=False)
    list(run)
    return run.transcript, turnfold.load(agent.get_state(config).values)


def _without_batches(entries: list[Entry]) -> list[Entry]:
    return [dataclasses.replace(e, batch_id=None) if type(e) is ToolCall else e for e in entries]


@pytest.fixture(scope="module")
def invoked() -> Transcript:
    """``turnfold.load(agent.invoke(inputs))``: the run the QA pass compared with."""
    return turnfold.load(runs.scripted_agent().invoke(INPUTS, runs._config("invoked")))


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_A2_a_followed_stream_in_any_mode_equals_the_load_of_invoke_prompt_included(
    mode: Any, invoked: Transcript
) -> None:
    followed, final = _followed(mode)
    assert followed.warnings == []
    first = followed.entries[0]
    assert type(first) is UserMessage
    assert first.text == runs.PROMPT
    # The very run followed: every entry, batch ids included, and its metadata.
    assert followed.entries == final.entries
    assert followed.metadata == final.metadata
    # Another run (invoke's): its calls' batch ids are its own messages' fresh ids.
    assert _without_batches(followed.entries) == _without_batches(invoked.entries)
    statuses = [c.status for c in followed.tool_calls()]
    assert statuses == [c.status for c in invoked.tool_calls()] == ["success", "error"]


@pytest.mark.parametrize("kwargs", [{"version": "v2"}, {"subgraphs": True}], ids=str)
def test_A2_the_prompt_is_kept_in_version_2_parts_and_with_subgraphs(kwargs: Any) -> None:
    followed, final = _followed(["updates", "messages"], **kwargs)
    assert followed.warnings == []
    assert followed.entries == final.entries


def test_A2_the_prompt_shows_with_the_first_event() -> None:
    agent = runs.scripted_agent()
    stream = agent.stream(INPUTS, runs._config("first"), stream_mode="updates")
    run = turnfold.follow(stream, display=False)
    events = iter(run)
    next(events)
    assert [type(e).__name__ for e in run.transcript.entries][:2] == ["UserMessage", "Thinking"]
    list(events)


def test_A2_an_astream_followed_with_async_for_keeps_its_prompt() -> None:
    # A fresh thread's loop: other tests may leave one running in this thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run, _, final = pool.submit(asyncio.run, runs.follow_astream("updates")).result()
    assert run.transcript.warnings == []
    assert run.transcript.entries == turnfold.load(final).entries


@pytest.mark.parametrize(
    "given",
    [
        {"messages": runs.PROMPT},  # a string: add_messages makes it the human message
        {"messages": [{"role": "user", "content": runs.PROMPT}]},
        {"messages": [("system", "Be brief."), ("user", runs.PROMPT)]},
    ],
    ids=["string", "dict", "with-system"],
)
def test_A2_every_input_form_langgraph_accepts_is_the_prompt_its_state_holds(given: Any) -> None:
    followed, final = _followed("updates", given)
    assert followed.warnings == []
    assert followed.entries == final.entries
    assert followed.metadata.get("system") == final.metadata.get("system")


def test_A2_a_thread_s_next_turn_in_values_mode_keeps_its_history_before_the_prompt() -> None:
    """A mode that streams the state shows the prompt in its place, after the thread's
    earlier turns: it is not shown again, nor before them."""
    agent = runs.scripted_agent()
    config = runs._config("two-turns")
    agent.invoke(INPUTS, config)
    again = {"messages": [("user", "Once more.")]}
    run = turnfold.follow(agent.stream(again, config, stream_mode=["updates", "values"]))
    list(run)
    loaded = turnfold.load(agent.get_state(config).values)
    assert run.transcript.entries == loaded.entries
    prompts = [e.text for e in run.transcript.entries if type(e) is UserMessage]
    assert prompts == [runs.PROMPT, "Once more."]


def test_A2_a_resumed_run_is_given_no_prompt_it_does_not_have() -> None:
    """``stream(Command(resume=...))`` goes on from an interrupt: its input holds no message,
    and none is made up; the one prompt shown is the thread's own, read from its
    checkpointer (tests/test_langgraph_streams_more.py)."""
    agent = runs.interrupt_agent(["/a"])
    config = runs._config("resumed")
    list(agent.stream({"messages": [("user", "rm")]}, config, stream_mode="updates"))
    run = turnfold.follow(agent.stream(Command(resume="yes"), config, stream_mode="updates"))
    list(run)
    assert [e.text for e in run.transcript.entries if type(e) is UserMessage] == ["rm"]
    assert [getattr(e, "text", None) for e in run.transcript.entries][-1] == "Done."
    assert not [w for w in run.transcript.warnings if "given" in w.reason]


# --- thread errors of a checkpointer database ------------------------------------------------


def _database(path: Path, threads: list[str]) -> Path:
    """A ``SqliteSaver`` database holding one run of the scripted agent per thread."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()
        for thread in threads:
            agent = runs.scripted_agent()
            agent.checkpointer = saver
            agent.invoke(INPUTS, runs._config(thread))
    return path


def test_L4_a_database_of_several_threads_loaded_without_sample_lists_them(
    tmp_path: Path,
) -> None:
    path = _database(tmp_path / "checkpoints.sqlite", ["alpha", "beta"])
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path)
    assert str(caught.value) == (
        f"{path} holds 2 LangGraph threads: pick one with sample=<thread id> (ids 'alpha', "
        "'beta'), as turnfold.load(path, sample='alpha'), or read them all with "
        "turnfold.scan(path)"
    )
    first = turnfold.load(path, sample="beta").entries[0]
    assert isinstance(first, UserMessage)
    assert first.text == runs.PROMPT


def test_L4_a_thread_the_database_lacks_names_up_to_ten_it_holds(tmp_path: Path) -> None:
    threads = [f"thread-{n:02}" for n in range(12)]
    path = _database(tmp_path / "many.db", threads)
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path, sample="thread-1")
    said = str(caught.value)
    assert said.startswith(f"{path} holds no LangGraph thread 'thread-1'; it holds 12: ")
    assert ", ".join(repr(t) for t in threads[:10]) + ", …)" in said
    assert repr(threads[10]) not in said
    assert "turnfold.scan(path)" in said


def test_L4_a_database_of_no_thread_says_so(tmp_path: Path) -> None:
    path = _database(tmp_path / "empty.sqlite", [])
    with pytest.raises(SampleSelectionError, match=r"empty\.sqlite holds no LangGraph threads$"):
        turnfold.load(path, format="langgraph-checkpoints")


def test_L4_the_eval_log_and_the_database_raise_one_error_type() -> None:
    assert inspect_log.SampleSelectionError is SampleSelectionError
    assert issubclass(SampleSelectionError, ValueError)  # callers catching ValueError still do
