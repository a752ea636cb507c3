"""Where the computer's clock changed while an Inspect sample ran, told by Inspect's own clock.

Inspect stamps each event twice: its ``timestamp`` (and a model or tool event's ``completed``)
from the wall clock (``datetime.now``), and its ``working_start`` from the sample's own clock
(``time.monotonic`` less the sample's waits: ``sample_working_time`` in
``inspect_ai/_util/working.py``), which starts at 0 as the sample's ``started_at`` is stamped
(``init_sample_working_time``). From one event to the next the wall clock moves as far as the
working time, or further by the waits between them; it moves less only when the computer's
clock was set back, and far more when it was set forward. So a step of the wall clock that
falls behind the working time by more than :data:`BACK_S` is a clock set back, and one that
runs ahead of it by more than the slack the reader allows for waits (a sample whose span and
Inspect's timing of it already disagree: :func:`turnfold.formats.harnesses.inspect_log.
_duration`) is a clock set forward. Events without a ``working_start`` (logs before Inspect
kept one) are told by their wall clock alone.

Each change found moves the stamps after it back onto the clock the sample started on: each
entry stamped after one carries ``meta["clock_shift_s"]``, the seconds to add to each of its
stamps that moved (``{"timestamp": -154800.0, "ended_at": -154800.0}``), which the timeline
places it by (:mod:`turnfold.timeline`) and where it changes, draws the change. The stamps
themselves are left as the source wrote them: the detail views show what was recorded.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from turnfold.model import ToolCall, Transcript, utc

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


#: An event as :func:`clock_changes` reads it: its wall-clock stamp, its working time, the
#: event, and whether it is of the setup before the sample's clock started.
_Point = tuple[datetime | None, float | None, Mapping[str, Any], bool]


def clock_changes(
    events: Any, started: datetime | None, timed: float, slack_s: float, far: bool
) -> ClockChanges:
    """The changes of the clock among a sample's ``events`` (its own, not a retried attempt's:
    each attempt starts its working time anew). ``started`` is its ``started_at``, where its
    working time is 0: an event stamped earlier than it is a clock set back. A step ahead of
    the working time by more than ``slack_s`` is a clock set forward where the sample's span
    and Inspect's timing of it (``timed`` seconds) disagree (``far``) or the clock went back
    (one set back is often set right again); elsewhere it is the sample's waits."""
    points = list(_points(events, timed + slack_s))
    steps = _steps(points, started)
    back = any(excess < -BACK_S for excess in steps.values())
    found = ClockChanges()
    shift = 0.0
    for index, (stamp, _, _, _) in enumerate(points):
        excess = steps.get(index)
        if excess is not None and (excess < -BACK_S or ((far or back) and excess > slack_s)):
            found.changes.append(excess)
            shift -= excess
        if stamp is not None:
            found.shifts[stamp] = shift
    if not found.changes:
        found.shifts.clear()
        return found
    for stamp, _, event, _ in points:
        if stamp is not None:
            _completed(event, stamp, found)
    return found


def _points(events: Any, longest: float, setup: set[str] | None = None) -> Iterator[_Point]:
    """Each event, in the order the log holds them (an older log's nested events after their
    parent). The setup (``sample_init``, the ``init`` span's events) runs before the sample's
    clock starts: its working time is the computer's uptime, and it is stamped before
    ``started_at`` by its nature. An event made outside the sample's run (a report added to
    the log after it) has the uptime for its working time too: one past the ``longest`` the
    sample's working time can be is none."""
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
        known = working is not None and 0 <= working <= longest
        yield utc(event.get("timestamp")), working if known else None, event, before
        yield from _points(event.get("events"), longest, setup)


def _steps(points: list[_Point], started: datetime | None) -> dict[int, float]:
    """For each stamped point of the sample's own run (its setup left out), how far the wall
    clock moved beyond the working time since the point before it (from ``started_at``, at
    working time 0, for the first); by the wall clock alone where either records no working
    time."""
    own = [(i, stamp, working) for i, (stamp, working, _, before) in enumerate(points)
           if stamp is not None and not before]  # fmt: skip
    steps: dict[int, float] = {}
    previous: tuple[datetime, float | None] | None = (started, 0.0) if started else None
    for at, (index, stamp, working) in enumerate(own):
        if previous is not None:
            wall = (stamp - previous[0]).total_seconds()
            worked = previous[1]
            if working is not None and worked is not None:
                wall -= working - worked
            elif wall < -BACK_S and not (
                at + 1 < len(own) and (own[at + 1][1] - previous[0]).total_seconds() < -BACK_S
            ):
                # By the wall clock alone, an event made early and logged late (a tool's event
                # after the events of its span) is behind the one before it too; the clock went
                # back only if the event after it is behind as well.
                continue
            steps[index] = wall
        previous = (stamp, working)
    return steps


def _completed(event: Mapping[str, Any], stamp: datetime, found: ClockChanges) -> None:
    """The shift of a model or tool event's ``completed``: of the clocks the sample ran on, the
    one on which the event lasted closest to the working time Inspect gave it (a tool call
    the clock changed during started on one and ended on the next)."""
    completed = utc(event.get("completed"))
    if completed is None:
        return
    working = _number(event.get("working_time"))
    expected = working if working is not None and working >= 0 else 0.0
    own = found.shifts.get(stamp, 0.0)
    lasted = (completed - stamp).total_seconds()
    candidates = sorted(set(found.shifts.values()) | {0.0})
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


__all__ = ["BACK_S", "STAMPS", "ClockChanges", "clock_changes", "restate"]
