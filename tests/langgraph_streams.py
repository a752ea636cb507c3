"""What the tests of saved LangGraph streams look at (spec A-1, A-2, L-3, L-4, P-7, H-6): the
warnings a load gives, how its turns read, its calls, whether every event was read, and the
warnings a stream's ending gives, in the reader's words.

A stream either says how its run ended, or reads cut off (:func:`stopped_by_the_cut`: the
warning :func:`cut_off`), or cannot tell and is read as it ends (:func:`read_as_it_ends`),
its warning naming each way of ending its events leave alike (:func:`in_doubt`,
:func:`between_checkpoint`, :func:`before_calls_ran`, :func:`checkpoints_next`,
:func:`unanswered`)::

    loaded = turnfold.load(path)
    assert reasons(loaded) == [in_doubt("c1", line_count(path), "updates")]
    read_as_it_ends(loaded)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixtures.frameworks.langchain import langgraph_stream_runs as lookup
from turnfold.formats.common import UNFINISHED
from turnfold.model import AbortMarker, Transcript
from turnfold.process import Turn, project

FIXTURES = Path(__file__).parent / "fixtures" / "frameworks" / "langchain"


def reasons(transcript: Transcript) -> list[str]:
    """The reasons of the load's warnings, in order."""
    return [w.reason for w in transcript.warnings]


def statuses(transcript: Transcript) -> list[str]:
    """Each turn's status, as its header shows it."""
    return [item.header.status for item in project(transcript) if isinstance(item, Turn)]


def calls(transcript: Transcript) -> list[tuple[str, str, str | None]]:
    """Each call's id, status and result's text."""
    return [
        (c.call_id, c.status, c.result.text if c.result else None) for c in transcript.tool_calls()
    ]


def read_as_it_ends(transcript: Transcript) -> None:
    """Neither cut off nor stopped: no outcome, no abort marker, the turn completed."""
    assert "outcome" not in transcript.metadata
    assert not any(isinstance(e, AbortMarker) for e in transcript.entries)
    assert statuses(transcript) == ["completed"]


def stopped_by_the_cut(transcript: Transcript) -> None:
    """Cut off (``common.stream_cut_off``): the turn ends in the unfinished run's abort
    marker and reads stopped, the run ``incomplete``."""
    last = transcript.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.reason == UNFINISHED
    assert transcript.metadata["outcome"] == "incomplete"
    assert statuses(transcript) == ["stopped"]


def line_count(path: Path) -> int:
    """How many events a saved stream holds, one a line."""
    return len(path.read_text(encoding="utf-8").splitlines())


def saved_events(path: Path) -> list[dict[str, Any]]:
    """A saved stream's events as JSON."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def accounted(transcript: Transcript, path: Path, kind: str | None = None) -> None:
    """Every event of the file read, none warned of (its warning is the stream's end's);
    ``kind``: each read as an event of that kind (``"debug event"``)."""
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    if kind is None:
        assert accounting.total("mapped") == line_count(path)
    else:
        assert accounting.counts == {kind: {"mapped": line_count(path)}}


def kinds(events: list[Any], mode: Any) -> list[tuple[Any, Any]]:
    """Each event as its mode and node: all a stream says of where its run is."""
    bare = mode if isinstance(mode, str) else None
    return [(bare or event[0], lookup.node(event, bare)) for event in events]


def cut_off(end: str) -> str:
    """The warning of a stream read cut off that lacks ``end`` (``common.stream_cut_off``)."""
    return (
        f"the stream ends inside the run begun on line 1 (no {end}): how that run ended is "
        "not recorded"
    )


def unrecorded_pause(mode: str) -> str:
    """What a ``debug`` or ``tasks`` stream in ``mode`` says it cannot record: a pause at a
    static breakpoint."""
    return (
        "paused at a breakpoint (interrupt_before / interrupt_after, which "
        f"{mode} events do not record)"
    )


#: What a ``debug`` stream says it cannot record (:func:`unrecorded_pause`).
PAUSE = unrecorded_pause("debug")

#: How a run LangGraph stopped unfinished between two steps and raised out of the stream
#: (which no mode records) may have ended, as every warning of a stream that cannot tell
#: names it: its recursion limit reached, a drain
#: (tests/test_langgraph_recursion_limit_and_drain.py).
UNFINISHED_STOPS = (
    "stopped by its recursion limit (GraphRecursionError), was drained (GraphDrained)"
)


def between_checkpoint(line: int, node: str) -> str:
    """The warning of a ``debug`` stream (no ``updates``) ending on the checkpoint on
    ``line`` that names ``node`` next."""
    return (
        f"the stream ends on the checkpoint on line {line}, which names {node!r} next, before "
        f"that step began: whether the run {PAUSE}, {UNFINISHED_STOPS} or the stream was cut "
        "off is not recorded"
    )


def before_calls_ran(line: int, node: str, call_ids: str, mode: str = "debug") -> str:
    """The warning of a ``debug`` or ``tasks`` stream in ``mode`` (no ``updates``, no
    checkpoint after the step) ending on the result of ``node``'s task on ``line``, its
    calls (``call_ids``, quoted: ``"'c1'"``) not run."""
    return (
        f"the stream ends on the result of the {node!r} task (line {line}), before call "
        f"{call_ids} ran: whether the run {unrecorded_pause(mode)}, {UNFINISHED_STOPS} or "
        "the stream was cut off is not recorded"
    )


def checkpoints_next(line: int, node: str) -> str:
    """The warning of a ``checkpoints`` stream (no ``updates``) ending on the checkpoint on
    ``line`` that names ``node`` next: that step's own stops are not streamed either."""
    return (
        f"the stream ends on the checkpoint on line {line}, which names {node!r} next: whether "
        "that step paused the run (interrupt() or a breakpoint) or failed, the run "
        f"{UNFINISHED_STOPS} or the stream was cut off is not recorded (checkpoints events "
        'record none of these; "updates" among the stream modes records a pause, "debug" each '
        "task)"
    )


#: The ways a run may end that leave a stream ending on a tool's result besides a cut, as
#: its warning names them (and :data:`UNFINISHED_STOPS`, in every mode).
ENDED = "ended there (a graph whose tools node leads to END, a return_direct tool)"
BREAKPOINT = "paused at a breakpoint (interrupt_before / interrupt_after)"
RAISED = "its next node raised an error"

#: By the stream's mode: the ways the stream's events leave in doubt besides the graph's
#: end, :data:`UNFINISHED_STOPS` and a cut (its modes record the others: ``updates`` a
#: pause, ``values`` an ``interrupt()``, ``tasks`` the next node's task), and its modes as
#: the warning names them (tests/test_langgraph_endings_on_a_result.py runs each way,
#: tests/test_langgraph_recursion_limit_and_drain.py the unfinished stops).
IN_DOUBT: dict[str, tuple[list[str], str]] = {
    "updates": ([RAISED], "updates"),
    "values": ([BREAKPOINT, RAISED], "values"),
    "messages": ([f"{BREAKPOINT} or on interrupt()", RAISED], "messages"),
    "['updates', 'messages']": ([RAISED], "messages and updates"),
    "['values', 'messages']": ([BREAKPOINT, RAISED], "messages and values"),
    "tasks": ([BREAKPOINT], "tasks"),
    "debug": ([BREAKPOINT], "debug"),
    "['updates', 'tasks']": ([], "tasks and updates"),
    "['updates', 'debug']": ([], "debug and updates"),
}


def in_doubt(call_id: str, line: int, mode: Any) -> str:
    """The warning of a stream in ``mode`` ending on a tool's result (:data:`IN_DOUBT`)."""
    ways, modes = IN_DOUBT[str(mode)]
    return (
        f"the stream ends on the result of call {call_id!r} (line {line}), no step after it: "
        f"whether the run {', '.join([ENDED, UNFINISHED_STOPS, *ways])} or the stream was cut "
        f"off is not recorded ({modes} events record none of these)"
    )


#: By the mode of a stream of ``values`` and ``messages`` events alone: how its run may have
#: paused between two steps (``values`` streams an ``interrupt()``), and its modes as the
#: warning names them.
UNANSWERED: dict[str, tuple[str, str]] = {
    "values": (BREAKPOINT, "values"),
    "messages": (f"{BREAKPOINT} or on interrupt()", "messages"),
    "['values', 'messages']": (BREAKPOINT, "messages and values"),
}


def unanswered(line: int, call_ids: str, mode: Any, *, in_step: bool = False) -> str:
    """The warning of a stream of ``values`` and ``messages`` events alone (:data:`UNANSWERED`)
    ending on ``line`` with calls ``call_ids`` (quoted: ``"'c1'"``) unanswered, between two
    steps; ``in_step``: inside a tools step, another call of it answered, where only
    ``interrupt()`` pauses (in ``messages`` alone), not a breakpoint nor
    :data:`UNFINISHED_STOPS`."""
    pauses, modes = UNANSWERED[str(mode)]
    ways = ["paused on interrupt()"] if in_step else [pauses, UNFINISHED_STOPS]
    return (
        f"the stream ends on line {line} with call {call_ids} unanswered: whether the run "
        f"{', '.join(ways)}, a node raised an error or the stream was cut off is not recorded "
        f'({modes} events record none of these; "updates" among the stream modes records a '
        'pause, "debug" each task)'
    )
