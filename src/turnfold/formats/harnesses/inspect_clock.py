"""Where the computer's clock changed while an Inspect sample ran, told by Inspect's own clock.

Inspect stamps each event twice: its ``timestamp`` (and a model or tool event's ``completed``)
from the wall clock (``datetime.now``), and its ``working_start`` from the sample's own clock
(``time.monotonic`` less the sample's waits: ``sample_working_time`` in
``inspect_ai/_util/working.py``), which starts at 0 as the sample's ``started_at`` is stamped
(``init_sample_working_time``). From one event to the next the wall clock moves as far as the
working time, or further by the waits between them; it moves less only when the computer's
clock was set back, and far more when it was set forward. So a step of the wall clock that
falls behind the working time by more than :data:`BACK_S` is a clock set back, if the stamps
after it stay behind (one stamp alone behind is out of its place, not a change: see
:func:`_steps`). A step that runs ahead of it is a wait or a clock set forward; which, only the
sample's whole run tells: the wall clock's span of it (``started_at`` to ``completed_at``) less
Inspect's timing of it (``total_time``, the monotonic clock, waits included) is how far the
clock was set in all (``net_s``). The steps ahead that make up that sum (less the changes
back) are the changes forward; every other step ahead, however long, is a wait, as Inspect
counted it. Events without a ``working_start`` (logs before Inspect kept one) are told by
their wall clock alone.

A sandbox event is the one Inspect stamps at one moment and times at another (its command's
start, its end): it is read by its end (:func:`_points`), or two commands of a few seconds in a
row would read as a clock set back.

Two stamps lie outside those steps, and are looked at with them. The sample's setup (its
``init`` span, whose ``sample_init`` stamps the prompt) runs on the computer's monotonic clock
before the sample's own starts, and Inspect stamps ``started_at`` right as the setup's span ends
(``init_sample_working_time`` in ``_task_run_sample_attempt``): a ``started_at`` that the
prompt's stamp and the setup's monotonic time do not lead to is a clock changed as the sample
started, which no step of its own run shows, but its prompt's stamp does (:func:`_start`). And
``completed_at`` is stamped after every event, at the working time Inspect gives the sample
(``working_time``): a last step to it, as to any event (:func:`_steps`).

Each attempt of a sample starts its working time anew (``init_sample_working_time`` in
``_task_run_sample_attempt``), so the attempts retried before the one the sample holds
(``error_retries``) are looked at each on its own.

Each change found moves the stamps after it back onto the clock the attempt started on: each
entry stamped after one carries ``meta["clock_shift_s"]``, the seconds to add to each of its
stamps that moved (``{"timestamp": -154800.0, "ended_at": -154800.0}``), which the timeline
places it by (:mod:`turnfold.timeline`) and where it changes, draws the change. The stamps
themselves are left as the source wrote them: the detail views show what was recorded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from turnfold.model import Entry, ToolCall, Transcript, utc

#: Seconds the wall clock may fall behind Inspect's working time between two events before the
#: clock is taken to have been set back: a clock left alone never does, and two reads of the
#: two clocks for one event are microseconds apart.
BACK_S = 1.0
#: The stamps of an entry a change can move: ``Entry.timestamp``, a call's start and end.
STAMPS = ("timestamp", "started_at", "ended_at")


@dataclass
class ClockChanges:
    """The changes of a sample's clock: each a signed number of seconds (forward is more), in
    the order they happened, and each stamp's shift back onto the sample's first clock."""

    changes: list[float] = field(default_factory=list)
    shifts: dict[datetime, float] = field(default_factory=dict)
    #: Whether each change was measured on Inspect's working clock: False where one was found
    #: by the wall clock alone (a log that keeps no ``working_start``), so how long its step
    #: really took is unknown, and no span holding it measures anything.
    measured: bool = True
    #: The shift of the clock the attempt started on: 0 for a sample's first attempt; for a
    #: later one, what the changes found in the attempts before it left (:func:`clock_changes`).
    first: float = 0.0


#: An event as :func:`clock_changes` reads it: its wall-clock stamp, its working time, the
#: event, and whether it is of the setup before the sample's clock started.
_Point = tuple[datetime | None, float | None, Mapping[str, Any], bool]
#: A step between two events: how far the wall clock ran ahead of the working time (behind,
#: negative), and whether the working time measured it (else the wall clock alone did).
_Step = tuple[float, bool]


def clock_changes(
    events: Any,
    *,
    started: datetime | None,
    ended: datetime | None,
    longest: float,
    slack_s: float,
    net_s: float,
    first: float = 0.0,
    ended_working: float | None = None,
) -> ClockChanges:
    """The changes of the clock among an attempt's ``events`` (a sample's own, or a retried
    attempt's). ``started`` is its ``started_at``, where its working time is 0: an event
    stamped earlier than it is a clock set back; ``ended`` its ``completed_at``, stamped after
    every event; ``longest`` the most its working time can be (a working time past it is none).
    ``net_s`` is how far the clock was set in all over the attempt (see the module's doc): the
    steps ahead of the working time by more than ``slack_s`` that make it up, less the changes
    back, are the clock set forward, the rest waits. An attempt with no timing of its own says
    0: a clock set back is taken to have been set right again, and only that is found ahead.

    ``first`` is the shift of the clock the attempt started on, onto the clock the sample's
    first attempt started on: an attempt after one whose clock changed runs on the clock that
    one left (no change between them is seen, as none is between two events unless found), so
    each of its stamps carries that shift, changes or none. ``ended_working`` is the attempt's
    working time as ``ended`` was stamped (the sample's ``working_time``), None where unknown."""
    points = list(_points(events, longest))
    order, steps = _steps(points, started, ended, ended_working)
    chosen = _chosen(steps, slack_s, net_s)
    found = ClockChanges(first=first)
    shift = first
    start = _start(points, started, slack_s)
    if start is not None:  # before every step of the run: its setup is on the first clock
        found.changes.append(start[0])
        found.measured = start[1]
        shift -= start[0]
    for index, moment in order:
        change = chosen.get(index)
        if change is not None:
            found.changes.append(change)
            found.measured = found.measured and steps[index][1]
            shift -= change
        found.shifts[moment] = shift
    for stamp, _, _, before in points:
        if stamp is not None and before:  # the setup, before any change could be seen
            found.shifts.setdefault(stamp, first)
    if not found.changes and not first:
        found.shifts.clear()
        return found
    for stamp, _, event, _ in points:
        if stamp is not None:
            _completed(event, stamp, found)
    return found


def _chosen(steps: Mapping[int, _Step], slack_s: float, net_s: float) -> dict[int, float]:
    """The steps that are changes of the clock, with how far each set it: every step behind
    the working time by more than :data:`BACK_S`; and ahead, of the steps over ``slack_s``,
    those that make up what the changes back leave of ``net_s``: the step that fits what is
    left most closely first (a jump of ten minutes, not a longer wait), else the furthest ahead
    (jumps that sum to it). A change's step may hold a wait beside it: one that runs past what
    is left by more than the slack is taken as far as is left, and the rest stays a wait."""
    chosen = {index: excess for index, (excess, _) in steps.items() if excess < -BACK_S}
    needed = net_s - sum(chosen.values())
    ahead = {index: excess for index, (excess, _) in steps.items() if excess > slack_s}
    while needed > slack_s and ahead:
        fitting = [index for index, excess in ahead.items() if excess >= needed - slack_s]
        if fitting:
            index = min(fitting, key=lambda i: (ahead[i], i))
        else:
            index = max(ahead, key=lambda i: (ahead[i], -i))
        excess = ahead.pop(index)
        # Past what is left by more than the slack, the step held a wait beside the change;
        # within it, the two clocks read apart (``total_time`` is kept to the millisecond).
        change = needed if excess - needed > slack_s else excess
        chosen[index] = change
        needed -= change
    return chosen


def _points(events: Any, longest: float, setup: set[str] | None = None) -> Iterator[_Point]:
    """Each event, in the order the log holds them (an older log's nested events after their
    parent). The setup (``sample_init``, the ``init`` span's events) runs before the sample's
    clock starts: its working time is the computer's monotonic clock (its uptime), kept as it
    is for :func:`_start`, and it is stamped before ``started_at`` by its nature. An event made
    outside the sample's run (a report added to the log after it) has the uptime for its
    working time too: one past the ``longest`` the sample's working time can be is none.

    A sandbox event is stamped as its command started (``timestamp``), but made, and given its
    working time, once the command ended (``completed``: ``inspect_ai/util/_sandbox/events.py``),
    so it is read by its end: by its start it would lie behind the events before it by as long
    as its command ran, a stamp out of its place beside any change of the clock. One that
    records no end is read by neither."""
    if not isinstance(events, list):
        return
    setup = set() if setup is None else setup
    for event in events:
        if not isinstance(event, Mapping):
            continue
        kind, span = event.get("event"), event.get("id")
        if kind == "span_begin" and event.get("type") == "init" and isinstance(span, str):
            setup.add(span)
        before = kind == "sample_init" or event.get("span_id") in setup
        working = _number(event.get("working_start"))
        if not before and working is not None and not 0 <= working <= longest:
            working = None
        stamp = utc(event.get("completed" if kind == "sandbox" else "timestamp"))
        yield stamp, working, event, before
        yield from _points(event.get("events"), longest, setup)


def _start(
    points: list[_Point], started: datetime | None, slack_s: float
) -> tuple[float, bool] | None:
    """How far the clock was set as the sample's clock started (forward is more), and whether
    that was measured; None where it was not, or nothing tells.

    The setup's ``sample_init`` stamps the prompt; the setup's ``init`` span ends right before
    ``started_at`` is stamped, nothing run between them (``_task_run_sample_attempt`` in
    ``inspect_ai/_eval/task/run.py``). So ``started_at`` lies as far after the prompt's stamp as
    the setup's monotonic clock ran from ``sample_init`` to the span's end, and right after the
    span's end by the wall clock: short of it by more than :data:`BACK_S`, the clock was set
    back; past it by more than ``slack_s``, forward. No step of the sample's own run shows such
    a change (they all start from ``started_at``), but the prompt's stamp does. A log that
    records no span's end (older Inspect) may have started a sandbox between the prompt and
    ``started_at``: a clock set back is still seen, by the wall clock alone, and how long that
    step took is unknown."""
    if started is None:
        return None
    prompt = next(((stamp, working) for stamp, working, event, before in points
                   if before and event.get("event") == "sample_init" and stamp is not None),
                  None)  # fmt: skip
    ends = [(stamp, working) for stamp, working, event, before in points
            if before and event.get("event") == "span_end" and stamp is not None]  # fmt: skip
    if prompt is not None and ends and prompt[1] is not None and ends[-1][1] is not None:
        excess = (started - prompt[0]).total_seconds() - (ends[-1][1] - prompt[1])
    elif ends:  # no working times: from the span's end by the wall clock (the setup unseen)
        excess = (started - ends[-1][0]).total_seconds()
    elif prompt is not None:
        wall = (started - prompt[0]).total_seconds()
        return (wall, False) if wall < -BACK_S else None
    else:
        return None
    return (excess, True) if excess < -BACK_S or excess > slack_s else None


def _steps(
    points: list[_Point],
    started: datetime | None,
    ended: datetime | None,
    ended_working: float | None = None,
) -> tuple[list[tuple[int, datetime]], dict[int, _Step]]:
    """For each stamped point of the sample's own run (its setup left out), how far the wall
    clock moved beyond the working time since the point before it in time (from
    ``started_at``, at working time 0, for the first); by the wall clock alone, in the log's
    order, where either records no working time. With them, those points (their index and
    stamp), in that order. Where every point has a working time, ``ended`` (``completed_at``,
    at ``ended_working``) is one more, after them all, indexed ``len(points)``.

    A point behind the one before it is a clock set back only if the point after it is behind
    that one as well (after the last, the sample's ``completed_at``, stamped after every
    event): a clock set back stays so. One alone behind is a stamp out of its place (by the
    wall clock alone, a tool's event logged after the events of its span; a log whose stamps
    were edited), which is left out of the steps. ``completed_at`` behind the last event by the
    wall clock is a clock set back: Inspect stamps it after every event, and nothing is stamped
    after it. Behind by its working time alone it is not: that is ``total_time`` less the waits,
    a figure Inspect makes apart from the events' (a log edited or resumed may not keep the
    two in step)."""
    own = [(i, stamp, working) for i, (stamp, working, _, before) in enumerate(points)
           if stamp is not None and not before]  # fmt: skip
    timed = all(working is not None for _, _, working in own)
    if timed:
        # In the order they happened, which the working time keeps (it never runs back): a
        # log holds an event where it was finished, not always where it was stamped (a tool's
        # event after its span's first, though stamped before it), and a change of the clock
        # between the two would read as a change back, then forward.
        own.sort(key=lambda point: (point[2], point[0]))
    last = own[-1][2] if own else None
    # completed_at's working time is the attempt's alone (``working_time``), while a sample
    # resumed from a checkpoint counts its events' on from its earlier attempts': one behind
    # them is on another scale, and no point (to the millisecond Inspect keeps it to).
    if (
        timed
        and last is not None
        and ended is not None
        and ended_working is not None
        and (ended_working + 0.001 >= last)
    ):
        own.append((len(points), ended, ended_working))
    steps: dict[int, _Step] = {}
    previous: tuple[datetime, float | None] | None = (started, 0.0) if started else None
    for at, (index, stamp, working) in enumerate(own):
        if previous is not None:
            excess = _excess(previous, stamp, working)
            if excess < -BACK_S:
                after = own[at + 1] if at + 1 < len(own) else None
                if index == len(points):  # completed_at: see the doc
                    behind = (stamp - previous[0]).total_seconds() < -BACK_S
                elif after is not None:
                    behind = _excess(previous, after[1], after[2]) < -BACK_S
                else:  # the wall clock alone: completed_at records no working time
                    behind = ended is not None and (ended - previous[0]).total_seconds() < -BACK_S
                if not behind:
                    continue
            steps[index] = (excess, working is not None and previous[1] is not None)
        previous = (stamp, working)
    return [(index, stamp) for index, stamp, _ in own], steps


def _excess(
    previous: tuple[datetime, float | None], stamp: datetime, working: float | None
) -> float:
    """How far the wall clock moved beyond the working time from ``previous`` (a stamp and its
    working time) to ``stamp`` at ``working``: by the wall clock alone where either is None."""
    wall = (stamp - previous[0]).total_seconds()
    if working is not None and previous[1] is not None:
        wall -= working - previous[1]
    return wall


def _completed(event: Mapping[str, Any], stamp: datetime, found: ClockChanges) -> None:
    """The shift of a model or tool event's ``completed``: of the clocks the sample ran on, the
    one on which the event lasted closest to the working time Inspect gave it (a tool call
    the clock changed during started on one and ended on the next)."""
    completed = utc(event.get("completed"))
    if completed is None:
        return
    working = _number(event.get("working_time"))
    expected = working if working is not None and working >= 0 else 0.0
    own = found.shifts.get(stamp, found.first)
    lasted = (completed - stamp).total_seconds()
    candidates = sorted(set(found.shifts.values()) | {found.first})
    best = min(candidates, key=lambda shift: (abs(lasted + shift - own - expected), shift != own))
    found.shifts.setdefault(completed, best)


def _number(value: Any) -> float | None:
    """A log's number as a float; None for anything else (a log's values are untrusted)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer past a float's range
        return None
    return number if math.isfinite(number) else None


def restate(transcript: Transcript, shifts: Mapping[datetime, float], depth: int = 0) -> None:
    """Mark each entry of ``transcript`` (its sub-agents' too) stamped after a change with
    ``meta["clock_shift_s"]``; a call whose start and end are on two clocks is given the
    duration its stamps make on one (``duration_ms``), rather than one holding the change."""
    for entry in list(transcript.entries):
        moved: dict[str, float] = {}
        for name in STAMPS:
            stamp = utc(getattr(entry, name, None))
            shift = shifts.get(stamp) if stamp is not None else None
            if shift:
                moved[name] = round(shift, 6)  # stamps hold microseconds, and no more
        if moved:
            transcript.update(entry, meta={**entry.meta, "clock_shift_s": moved})
        if not isinstance(entry, ToolCall):
            continue
        began, ended = utc(entry.started_at), utc(entry.ended_at)
        apart = moved.get("ended_at", 0.0) - moved.get("started_at", 0.0)
        if began is not None and ended is not None and apart and entry.duration_ms is None:
            lasted = (ended - began).total_seconds() + apart
            if lasted >= 0:
                transcript.update(entry, duration_ms=lasted * 1000)
        child = entry.subagent.transcript if entry.subagent is not None else None
        if child is not None and depth < 16:  # a transcript that holds itself: not forever
            restate(child, shifts, depth + 1)


def span_on_first_clock_ms(entries: Iterable[Entry]) -> float | None:
    """The span of a turn's stamps (its prompt's and entries' ``timestamp``, its calls'
    ``ended_at``: those :func:`turnfold.process.recorded_duration_ms` spans) once each is put
    back on the first clock by its ``meta["clock_shift_s"]`` (:func:`restate`), in
    milliseconds: where the clock changed inside the turn, the step that held the change lasts
    the working time Inspect gave it, and every other step what the wall clock says, as in any
    turn. None with fewer than two stamps."""
    moments: list[datetime] = []
    for entry in entries:
        said = entry.meta.get("clock_shift_s")
        shifts = said if isinstance(said, Mapping) else {}
        names = ("timestamp", "ended_at") if isinstance(entry, ToolCall) else ("timestamp",)
        for name in names:
            stamp = utc(getattr(entry, name, None))
            shift = _number(shifts.get(name)) or 0.0
            if stamp is not None:
                moments.append(stamp + timedelta(seconds=shift))
    if len(moments) < 2:
        return None
    return (max(moments) - min(moments)).total_seconds() * 1000


__all__ = [
    "BACK_S",
    "STAMPS",
    "ClockChanges",
    "clock_changes",
    "restate",
    "span_on_first_clock_ms",
]
