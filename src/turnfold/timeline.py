"""Where the time went: a session laid out in time (spec U-4).

The layout is computed here, once, for every renderer: turns along one time axis, each tool call
a bar at its start, as long as its recorded duration, coloured by its category, failures marked,
calls that overlap in time stacked in lanes, and idle stretches over a minute shortened and
labelled. The renderers only draw it (the widget as SVG, the static page as inline SVG with
links and no script, the text rendering as one line of its :attr:`sparkline`).

Coordinates are seconds on the *axis*: real time from the session's first moment, with each idle
gap over :data:`GAP_S` drawn as :data:`GAP_SHOWN_S`. A view scales the axis to its width, so a
live session's earlier bars keep their coordinates as it grows, and an update sends only the
turn that changed (Q-3). A bar lasts its call's :attr:`~turnfold.model.ToolCall.
recorded_duration_ms`: the same duration a corpus's ``tool_calls()`` table carries (C-3).

Where a reader found that the computer's clock changed while the session was recorded, it gave
each stamp taken after a change the seconds that put it back on the clock the session started
on (an entry's ``meta["clock_shift_s"]``, by stamp: ``timestamp``, ``started_at``,
``ended_at``; :mod:`turnfold.formats.harnesses.inspect_clock`). The layout places every moment
so: a 43-hour jump is no 43 hours of idle, and no bar is as long as one. Each change is drawn
where it happened (after a call it happened during) as a break of :data:`GAP_SHOWN_S`,
labelled as the clock's change and marked so (``TimelineGap.clock``), which each renderer
draws apart from idle time (the sparkline's ``¦``). Idle time is read on that first clock too:
where the session sat idle over :data:`GAP_S` and the clock changed between the same two
moments (two turns, or two moments of one), both are drawn, the idle gap, then the break.

A session of more than :data:`DETAIL_CALLS` calls is drawn coarse: each turn one bar, of the
category that took most of its tools' time. A reader zooms into a turn to see its calls
(:meth:`Timeline.turn`, fetched by key like any closed content): a long session's timeline costs
its first view about one small record per turn (the figures are in ``benchmarks/scale.py``).

>>> from turnfold.samples import demo_session
>>> from turnfold.process import plan_projection
>>> from turnfold.session import session_facts
>>> session = demo_session()
>>> node = Timeline().node(plan_projection(session), "en", session_facts(session))
>>> [(turn["number"], turn["x"], turn["w"]) for turn in node["turns"]]
[('1', 0.0, 25.0), ('2', 60.0, 2.0)]
>>> [(bar["key"], bar["category"], bar["w"], bar["failed"]) for bar in node["turns"][0]["bars"]][3]
('e7', 'command', 3.4, True)
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from turnfold import keys
from turnfold.i18n import plural, translate
from turnfold.model import ACTIVE_STATUSES, FAILED_STATUSES, Entry, ToolCall
from turnfold.nesting import MAX_DEPTH
from turnfold.process import PlannedItem, Segment, recorded_duration_ms
from turnfold.session import SessionFacts
from turnfold.tools import (
    display_name,
    format_duration,
    safe_description,
    status_text,
    tool_category,
)

if TYPE_CHECKING:  # the view model's schema, for types only (issue 19: not imported by a page)
    from turnfold.render.nodes import TimelineBar, TimelineGap, TimelineNode, TimelineTurn

#: Idle stretches longer than this many seconds are shortened on the axis.
GAP_S = 60.0
#: ... to this many seconds of the axis: long enough to see and label, short against any turn.
GAP_SHOWN_S = 15.0
#: Sessions with more calls than this are drawn coarse: one bar per turn (see the module doc).
DETAIL_CALLS = 400
#: Calls stack in at most this many lanes; more overlapping calls share the last one.
MAX_LANES = 8
#: Pixels: the row of failure marks above the bars, a bar, and the space between lanes.
MARK_PX = 4
BAR_PX = 8
LANE_PX = BAR_PX + 4  # bars' strokes take one pixel above and below: two pixels between lanes
#: Cells of the text rendering's one line.
SPARK_CELLS = 48
#: Seconds: the least a bar or a turn is drawn as. SVG draws nothing for a zero width, and a
#: call that recorded no duration (or a turn of one moment) must still show.
MIN_W = 0.001
_LEVELS = "▁▂▃▄▅▆▇█"
_IDLE = "·"
_CLOCK = "¦"
#: The stamps a reader may have shifted back onto the session's first clock.
_STAMPS = ("timestamp", "started_at", "ended_at")


def _seconds(stamp: str | None) -> float | None:
    """An ISO-8601 timestamp as seconds since the epoch (a naive one taken as UTC), or None."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp)  # a long session has tens of thousands
    except ValueError:  # Python 3.10 reads no "Z"; anything else is no moment
        try:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _shifts(entry: Entry) -> dict[str, float] | None:
    """``meta["clock_shift_s"]`` of ``entry`` (see the module's doc), each shift a number, or
    None when none of its stamps moved: the meta is the source's reader's, but read with care."""
    said = entry.meta.get("clock_shift_s")
    if not said or not isinstance(said, dict):
        return None
    shifts = {}
    for name in _STAMPS:
        shift = said.get(name)
        if isinstance(shift, bool) or not isinstance(shift, (int, float)):
            continue
        try:
            seconds = float(shift)
        except OverflowError:  # an integer past a float's range: no moment
            continue
        if math.isfinite(seconds):
            shifts[name] = seconds
    return shifts or None


class _Call(NamedTuple):
    """A call placed in real time: ``end`` is ``start`` when it recorded no duration (a tuple:
    a long session places tens of thousands)."""

    start: float
    end: float
    call: ToolCall
    key: str
    depth: int  # 0: a call of the turn's own; more: a sub-agent's
    category: str
    running: bool  # still running, with no duration recorded yet


_END = itemgetter(1)
_ORDER = itemgetter(0, 4)  # by start, a call before its sub-agent's calls


@dataclass
class _Span:
    """What one turn did in real time (seconds since the epoch, on the session's first clock):
    computed once per turn."""

    first: float
    last: float
    calls: list[_Call]  # in order of start; sub-agents' calls included
    gaps: list[tuple[float, float]]  # idle stretches over GAP_S inside the turn
    breaks: list[float] = field(default_factory=list)  # moments the clock changed at
    #: The gaps and the breaks (a break a stretch of no time), in order: each drawn as
    #: GAP_SHOWN_S of the axis.
    stretches: list[tuple[float, float]] = field(default_factory=list)
    cut: list[float] = field(default_factory=list)  # seconds shortened up to each stretch's end
    ends: list[float] = field(default_factory=list)  # each stretch's end
    #: Each stretch on the axis from the turn's start, with the idle seconds it stands for
    #: (None for a break).
    shown: list[tuple[float, float | None]] = field(default_factory=list)
    #: The clock (shift) of its first and of its last moment: where a turn's first differs from
    #: the last one's before it, the clock changed between them.
    first_clock: float = 0.0
    last_clock: float = 0.0
    tools: int = 0  # the turn's own calls, as its header counts them
    failed: int = 0
    duration_ms: float | None = None  # as its header shows it
    category: str | None = None  # the category that took most of its own calls' time
    call: str | None = None  # the key of its first own call

    def axis(self, moment: float) -> float:
        """Seconds on the axis from the turn's start to ``moment`` (a moment the clock changed
        at: after its break)."""
        if not self.stretches:
            return moment - self.first
        index = bisect_right(self.ends, moment)
        shortened = self.cut[index - 1] if index else 0.0
        if index < len(self.stretches) and moment > self.stretches[index][0]:  # inside a gap
            start, end = self.stretches[index]
            inside = (moment - start) / (end - start)
            return start - self.first - shortened + inside * GAP_SHOWN_S
        return moment - self.first - shortened

    @property
    def length(self) -> float:
        return self.axis(self.last)


def _span(segment: Segment, prefix: str, running: bool) -> _Span | None:
    """The real-time facts of one turn, or None when it records no moment."""
    entries: list[Entry] = ([segment.user] if segment.user else []) + segment.entries
    moments: list[float] = []
    clocks: dict[float, float] = {}  # the shifted moments' shifts (most sessions: none)
    calls: list[_Call] = []
    tools = failed = 0
    for entry in entries:
        shifts = _shifts(entry)
        moment = _moment(entry.timestamp, shifts, "timestamp", clocks)
        if moment is not None:
            moments.append(moment)
        if isinstance(entry, ToolCall):
            tools += 1
            failed += entry.status in FAILED_STATUSES
            _place(entry, keys.entry(entry.id, prefix), 0, moments, calls, moment, clocks)
    if not moments:
        return None
    first, last = min(moments), max(moments)
    if calls:
        last = max(last, max(map(_END, calls)))
    if running:  # a call still running lasts until the latest moment the turn shows (L-5)
        calls = [c._replace(end=last) if c.running else c for c in calls]
    calls.sort(key=_ORDER)
    gaps = _idle(first, moments, calls)
    own = [placed for placed in calls if not placed.depth]
    span = _Span(first, last, calls, gaps, tools=tools, failed=failed, category=_busiest(own),
                 call=own[0].key if own else None)  # fmt: skip
    if clocks:
        _breaks(span, moments, clocks)
    # A gap and a break that end at one moment: the gap first, as the moment ends both.
    span.stretches = sorted([*gaps, *((at, at) for at in span.breaks)], key=_BY_END)
    shortened = 0.0
    for start, end in span.stretches:
        span.shown.append((start - span.first - shortened, end - start if end > start else None))
        shortened += end - start - GAP_SHOWN_S
        span.cut.append(shortened)
        span.ends.append(end)
    span.duration_ms = recorded_duration_ms(segment)
    return span


_BY_END = itemgetter(1, 0)


def _moment(
    stamp: str | None, shifts: dict[str, float] | None, name: str, clocks: dict[float, float]
) -> float | None:
    """``stamp`` (the entry's ``name``) in seconds on the session's first clock; a moment a
    reader shifted there is kept in ``clocks`` with its shift."""
    moment = _seconds(stamp)
    if moment is None or shifts is None or name not in shifts:
        return moment
    moment += shifts[name]
    clocks[moment] = shifts[name]
    return moment


def _breaks(span: _Span, moments: list[float], clocks: dict[float, float]) -> None:
    """Where the clock changed inside the turn: each moment whose clock is not the one of the
    moment before it (in time, on the session's first clock)."""
    ordered = sorted(set(moments))
    before = clocks.get(ordered[0], 0.0)
    span.first_clock = before
    for moment in ordered[1:]:
        clock = clocks.get(moment, 0.0)
        if clock != before:
            span.breaks.append(moment)
        before = clock
    span.last_clock = before


def _place(
    call: ToolCall,
    key: str,
    depth: int,
    moments: list[float],
    calls: list[_Call],
    stamped: float | None,
    clocks: dict[float, float],
) -> None:
    """Put ``call`` (and its sub-agent's calls, keyed under it) on the time axis; ``stamped``
    is its ``timestamp``, read already (most sources start a call at its entry's moment)."""
    shifts = _shifts(call)
    if shifts is None:
        same = call.started_at == call.timestamp
        started = stamped if same else _seconds(call.started_at)
        ended = _seconds(call.ended_at)
    else:
        started = _moment(call.started_at, shifts, "started_at", clocks)
        ended = _moment(call.ended_at, shifts, "ended_at", clocks)
    start = started if started is not None else stamped
    duration_ms = _duration_ms(call, started, ended)
    if start is None and ended is not None:
        start = ended - (duration_ms or 0) / 1000
    if start is not None:
        end = start + duration_ms / 1000 if duration_ms is not None else start
        running = duration_ms is None and call.status in ACTIVE_STATUSES
        calls.append(_Call(start, end, call, key, depth, tool_category(call.name), running))
        moments.append(start)
    if ended is not None:
        moments.append(ended)  # the result's arrival is activity too
    child = call.subagent.transcript if call.subagent is not None else None
    # Down to the view's bound (turnfold.nesting): a call nested deeper has no row to link to,
    # and the view's notice counts it. A transcript that holds itself stops there too.
    if child is None or depth >= MAX_DEPTH:
        return
    prefix = keys.child_prefix(key)
    for entry in child.entries:
        moment = _moment(entry.timestamp, _shifts(entry), "timestamp", clocks)
        if moment is not None:
            moments.append(moment)
        if isinstance(entry, ToolCall):
            _place(entry, keys.entry(entry.id, prefix), depth + 1, moments, calls, moment, clocks)


def _duration_ms(call: ToolCall, started: float | None, ended: float | None) -> float | None:
    """:attr:`ToolCall.recorded_duration_ms <turnfold.model.ToolCall.recorded_duration_ms>`
    from the moments read here already (reading them again was a third of a layout): the
    duration the source recorded, else the span from ``started_at`` to ``ended_at``."""
    if call.duration_ms is not None:
        return call.duration_ms if call.duration_ms >= 0 else None
    if started is None or ended is None or ended < started:
        return None
    return (ended - started) * 1000


def _idle(first: float, moments: list[float], calls: list[_Call]) -> list[tuple[float, float]]:
    """The stretches over :data:`GAP_S` in which nothing happened: no entry, no call running."""
    if max(moments) - first <= GAP_S:
        return []  # most turns: too short to hold one
    intervals = sorted([*((m, m) for m in moments), *((c.start, c.end) for c in calls)])
    gaps = []
    covered = first
    for start, end in intervals:
        if start - covered > GAP_S:
            gaps.append((covered, start))
        if end > covered:
            covered = end
    return gaps


@dataclass(frozen=True)
class _Placed:
    """A turn on the axis: its facts, its number among all turns, where it starts, the idle gap
    before it (seconds, on the session's first clock; None when not over :data:`GAP_S`), and
    whether the clock changed between it and the turn before (``changed``): a break before it,
    after the idle gap where there was both, as a gap and a break inside a turn are drawn."""

    item: PlannedItem
    span: _Span
    number: int
    x: float
    gap: float | None
    changed: bool = False

    def same(self, other: _Placed) -> bool:
        """Whether ``other`` draws the same (the same facts, at the same place)."""
        return (other.item is self.item and other.span is self.span and other.number == self.number
                and other.x == self.x and other.gap == self.gap
                and other.changed == self.changed)  # fmt: skip


class Timeline:
    """The timeline of one transcript, kept turn by turn: a widget's updates lay out again only
    the turns the projection planned anew (Q-3); a page uses one for one reading.

    A ``lazy`` timeline is only its closed header (:func:`closed`) until :meth:`lay_out`: a
    widget lays it out when a reader opens it or a static rendering needs it, so opening a
    transcript costs no layout its reader may never look at (Q-2).
    """

    def __init__(self, *, lazy: bool = False) -> None:
        self.laid_out = not lazy
        #: Each turn's facts by its key, with the planned item they were read from.
        self._spans: dict[str, tuple[PlannedItem, _Span | None]] = {}
        #: Each turn's drawn record by its timeline key, with what it was drawn from.
        self._drawn: dict[str, tuple[_Placed, bool, str, TimelineTurn]] = {}

    def lay_out(self) -> None:
        """Lay the timeline out from now on (a lazy one was only its header so far)."""
        self.laid_out = True

    def node(
        self, items: Sequence[PlannedItem], locale: str, facts: SessionFacts
    ) -> TimelineNode | None:
        """The timeline of the turns among ``items`` of the session ``facts`` describes; None
        when they record no time, or the session called no tool (its header says it all)."""
        if not facts.tool_calls:
            return None
        detail = facts.tool_calls <= DETAIL_CALLS
        if not self.laid_out:
            if facts.started is None or facts.started == facts.ended:
                return None
            return {**_header(keys.TIMELINE, locale, detail), "deferred": True}
        placed = self._placed(items)
        end = placed[-1].x + placed[-1].span.length if placed else 0.0
        if end <= 0:
            return None  # no moment, or every moment the same: no time to draw
        drawn = {}
        for turn in placed:
            key = keys.timeline(turn.item.key)
            known = self._drawn.get(key)
            if known is None or not known[0].same(turn) or known[1:3] != (detail, locale):
                known = (turn, detail, locale, _draw(turn, detail, locale))
            drawn[key] = known
        self._drawn = drawn
        turns = [record for _, _, _, record in drawn.values()]
        return {
            **_header(keys.TIMELINE, locale, detail),
            "span": _round(end),
            "height": max(turn["height"] for turn in turns),
            "sparkline": _sparkline(placed, 0.0, end),
            "turns": turns,
        }

    def turn(self, key: str, locale: str) -> TimelineNode | None:
        """The turn ``key`` (``timeline:<turn key>``) of the last :meth:`node`, in detail: the
        timeline a reader zooms into; None when there is no such turn."""
        known = self._drawn.get(key)
        if known is None:
            return None
        placed = known[0]
        turn = _draw(placed, True, locale)
        return {
            **_header(key, locale, True),
            "open": True,
            "title": turn["label"],
            "origin": turn["x"],
            "span": turn["w"],
            "height": turn["height"],
            "sparkline": _sparkline([placed], placed.x, placed.x + placed.span.length),
            "back": translate("timeline.back", locale),
            "turns": [turn],
        }

    def _placed(self, items: Sequence[PlannedItem]) -> list[_Placed]:
        """Each turn that records time, placed on the axis after the turns before it."""
        spans: dict[str, tuple[PlannedItem, _Span | None]] = {}
        placed: list[_Placed] = []
        number = 0
        end = last = 0.0  # where the turns placed so far end, on the axis and in real time
        clock = 0.0  # the shift of the latest moment placed so far (see the module's doc)
        for item in items:
            segment, context = item.segment, item.context
            if segment is None or context is None:
                continue
            number += 1
            known = self._spans.get(item.key)
            if known is not None and known[0] is item and not item.running:
                span = known[1]
            else:
                span = _span(segment, context.key_prefix, item.running)
            spans[item.key] = (item, span)
            if span is None:
                continue
            x, gap, changed = 0.0, None, False
            if placed:
                # Both moments on the first clock: the time between them is real, however the
                # clock was set between them (then a break too, which stands for any shorter
                # stretch than an idle gap's).
                idle = span.first - last
                gap = idle if idle > GAP_S else None
                changed = span.first_clock != clock
                x = end + (GAP_SHOWN_S if gap else 0.0 if changed else max(idle, 0.0))
                x += GAP_SHOWN_S if changed else 0.0
            placed.append(_Placed(item, span, number, x, gap, changed))
            end = x + span.length
            if len(placed) == 1 or span.last >= last:
                last, clock = span.last, span.last_clock
        self._spans = spans
        return placed


def _header(key: str, locale: str, detail: bool) -> TimelineNode:
    """A timeline with no turns yet: what a view draws while it is closed."""
    return {
        "kind": "timeline",
        "key": key,
        "open": False,  # U-4: closed by default under the session header
        "title": translate("timeline.title", locale),
        "note": None if detail else translate("timeline.coarse", locale),
        "origin": 0.0,
        "span": 0.0,
        "height": 0,
        "bar": BAR_PX,
        "mark": MARK_PX,
        "sparkline": "",
        "back": None,
        "turns": [],
    }


def closed(node: TimelineNode) -> TimelineNode:
    """``node`` as a view is sent it while it is closed (Q-2): its header, with no turns and no
    axis, which change as a live session grows; :attr:`TimelineNode.deferred`."""
    return {**node, "origin": 0.0, "span": 0.0, "height": 0, "sparkline": "", "turns": [],
            "deferred": True}  # fmt: skip


def _draw(turn: _Placed, detail: bool, locale: str) -> TimelineTurn:
    """The record of one turn a renderer draws: its calls as bars (``detail``), else one bar."""
    span, x = turn.span, turn.x
    gaps: list[TimelineGap] = []
    if turn.gap is not None:
        gaps.append(_gap(x - GAP_SHOWN_S * (1 + turn.changed), turn.gap, locale))
    if turn.changed:
        gaps.append(_gap(x - GAP_SHOWN_S, None, locale))
    for at, idle in span.shown:
        gaps.append(_gap(x + at, idle, locale))
    number = str(turn.number)
    label = translate("timeline.turn", locale, number=number)
    if span.duration_ms:
        label += " · " + format_duration(span.duration_ms, hide_trailing_zeros=True)
    if span.tools:
        tools = plural("session.tools", span.tools, locale)
        if span.failed:
            tools = translate("session.failed", locale, tools=tools, count=span.failed)
        label += " · " + tools
    bars = _bars(span, x, locale) if detail else None
    lanes = 1 + max((bar["y"] - MARK_PX) // LANE_PX for bar in bars) if bars else 1
    return {
        "key": keys.timeline(turn.item.key),
        "x": _round(x),
        "w": max(_round(span.length), MIN_W),
        "height": MARK_PX + lanes * LANE_PX,
        "number": number if detail else None,
        "label": label,
        "gaps": gaps,
        "bars": bars,
        "category": span.category,
        "failed": bool(span.failed),
        "call": span.call,
    }


def _gap(x: float, idle_s: float | None, locale: str) -> TimelineGap:
    """A shortened stretch: ``idle_s`` seconds of idle time, or where the clock changed (None):
    told apart by their labels and by ``clock``, which each renderer draws its own way (a
    break is no time at all, a gap is time in which nothing ran)."""
    if idle_s is None:
        label = translate("timeline.clock_changed", locale)
        return {"x": _round(x), "w": GAP_SHOWN_S, "label": label, "clock": True}
    duration = format_duration(idle_s * 1000, hide_trailing_zeros=True)
    label = translate("timeline.idle", locale, duration=duration)
    return {"x": _round(x), "w": GAP_SHOWN_S, "label": label, "clock": False}


def _bars(span: _Span, x: float, locale: str) -> list[TimelineBar]:
    """Each call of the turn as a bar, stacked in the first lane free at its start."""
    bars: list[TimelineBar] = []
    lane_ends: list[float] = []
    for placed in span.calls:
        # As long as the call lasted: no idle gap lies inside a call, but where the clock
        # changed while it ran, the break is drawn after it, not inside its length.
        start = x + span.axis(placed.start)
        end = start + placed.end - placed.start
        # A call of no recorded length still takes its bar's width: two at the same moment go
        # in two lanes, or one's bar would cover the other's and only one could be clicked.
        end = max(end, start + MIN_W)
        lane = next((i for i, free in enumerate(lane_ends) if free <= start), len(lane_ends))
        if lane == len(lane_ends):
            if lane < MAX_LANES:
                lane_ends.append(end)
            else:
                lane = MAX_LANES - 1
        lane_ends[lane] = max(lane_ends[lane], end)
        call = placed.call
        bars.append({
            "key": placed.key,
            "x": _round(start),
            "w": max(_round(end - start), MIN_W),
            "y": MARK_PX + lane * LANE_PX,
            "category": placed.category,
            "failed": call.status in FAILED_STATUSES,
            "label": _bar_label(call, locale),
        })  # fmt: skip
    return bars


def _bar_label(call: ToolCall, locale: str) -> str:
    parts = [display_name(call.name)]
    description = safe_description(call.description)
    if description:
        parts[0] += " " + description
    if call.recorded_duration_ms:
        parts.append(format_duration(call.recorded_duration_ms, hide_trailing_zeros=True))
    if call.status != "success":
        parts.append(status_text(call, locale))
    return " · ".join(parts)


def _busiest(calls: Iterable[_Call]) -> str | None:
    """The category that took most of these calls' time (the first such, on a tie; by count
    when none recorded a duration)."""
    time: dict[str, float] = {}
    count: dict[str, int] = {}
    for placed in calls:
        category = placed.category
        time[category] = time.get(category, 0.0) + placed.end - placed.start
        count[category] = count.get(category, 0) + 1
    if not time:
        return None
    weights = time if any(time.values()) else count
    return max(weights, key=lambda category: weights[category])


def _sparkline(placed: list[_Placed], start: float, end: float) -> str:
    """How busy the tools were along the axis, one character per cell: ``▁`` (none running,
    the model's time) to ``█`` (tools the whole cell), ``·`` for a shortened idle gap, ``¦``
    where the clock changed."""
    width = (end - start) / SPARK_CELLS
    if width <= 0:
        return ""
    busy = [0.0] * SPARK_CELLS
    idle = [0.0] * SPARK_CELLS
    changed = [0.0] * SPARK_CELLS

    def add(cells: list[float], begin: float, finish: float) -> None:
        first = max(int((begin - start) / width), 0)
        for cell in range(first, SPARK_CELLS):
            low = start + cell * width
            if low >= finish:
                break
            cells[cell] += min(finish, low + width) - max(begin, low)

    for turn in placed:
        span, x = turn.span, turn.x
        if turn.changed and x > start:
            add(changed, x - GAP_SHOWN_S, x)
        if turn.gap is not None and x > start:
            before = x - GAP_SHOWN_S * (1 + turn.changed)
            add(idle, before, before + GAP_SHOWN_S)
        for at, idle_s in span.shown:
            add(idle if idle_s is not None else changed, x + at, x + at + GAP_SHOWN_S)
        covered = float("-inf")
        for placed_call in span.calls:  # their union: parallel calls are not twice as busy
            if placed_call.depth:
                continue
            began = x + span.axis(placed_call.start)
            begin = max(began, covered)
            finish = began + placed_call.end - placed_call.start  # as its bar (:func:`_bars`)
            if finish > begin:
                add(busy, begin, finish)
                covered = finish
    cells = []
    for used, unused, broken in zip(busy, idle, changed, strict=True):
        if broken > width / 2:
            cells.append(_CLOCK)
        elif unused > width / 2:
            cells.append(_IDLE)
        else:
            level = min(int(used / width * len(_LEVELS)), len(_LEVELS) - 1)
            cells.append(_LEVELS[level])
    return "".join(cells)


def _round(value: float) -> float:
    """Milliseconds are enough, and keep the view model's numbers short."""
    return round(value, 3) + 0.0  # + 0.0: never -0.0


__all__ = ["DETAIL_CALLS", "GAP_S", "GAP_SHOWN_S", "MAX_LANES", "MIN_W", "Timeline", "closed"]
