"""Turns → one process disclosure plus the answer, with activity groups (spec P-1 … P-11).

:func:`project` is a pure function from a transcript and its display settings to the structure a
person sees: top-level rows (user messages, system notices, compaction dividers) and assistant
turns, each with a header, a process (thinking, batches, commands, progress text, grouped by
the display mode) and the answer outside it. It decides every default fold state; it renders no
HTML (``render/viewmodel.py`` does, for all three renderers alike).

Keys are derived from entry ids, never from positions or labels, so a view keyed on them keeps
its fold state while entries are appended, the mode changes, or a single item becomes a group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeVar

from turnfold import keys
from turnfold.batches import (
    BatchView,
    LabelIndex,
    SummaryRow,
    ToolRow,
    build_batch_view,
    label_for,
    split_batches,
)
from turnfold.i18n import join_list, plural, translate
from turnfold.model import (
    ACTIVE_STATUSES,
    FAILED_STATUSES,
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolUseSummary,
    Transcript,
    UserMessage,
    span_ms,
)
from turnfold.settings import SettingsSnapshot, snapshot_of
from turnfold.tools import format_duration, tool_category

if TYPE_CHECKING:  # a name for types only: the class imports traitlets (issue 19)
    from turnfold.live_settings import DisplaySettings

TurnStatus: TypeAlias = Literal["completed", "running", "stopped", "failed"]

#: Entries shown outside the fold, actionable without opening the process (P-3).
_OUTSIDE = (AssistantError, AbortMarker, PendingAction)
#: Group titles longer than this are cut with an ellipsis before the count ever is (P-6).
GROUP_TITLE_LIMIT = 60


# --- what the projection produces ------------------------------------------------------------


@dataclass(frozen=True)
class ThinkingRow:
    """A visible reasoning row; ``open`` is its default fold state (P-8, P-9)."""

    key: str
    entry: Thinking
    open: bool


@dataclass(frozen=True)
class ThinkingIndicator:
    """The shimmering ``Thinking`` label while reasoning streams and thinking is hidden (P-9)."""

    key: str


@dataclass(frozen=True)
class ProgressRow:
    """Assistant text inside the process: a progress note, not the answer (P-1, P-2)."""

    key: str
    entry: AssistantText


@dataclass(frozen=True)
class BatchPiece:
    """The rows of one tool batch that sit together (all of them, unless commands were pulled
    out in command-first mode), plus the batch's memory badges and label line when this piece
    ends the batch (F-11, F-15)."""

    key: str
    calls: tuple[ToolCall, ...]
    items: tuple[SummaryRow | ToolRow, ...]
    memory_badges: str | None
    label_line: str | None
    active: bool


@dataclass(frozen=True)
class CommandRow:
    """A command pulled out of its batch as its own row in command-first mode (P-4)."""

    key: str
    call: ToolCall
    row: ToolRow


ActivityItem: TypeAlias = ThinkingRow | ThinkingIndicator | BatchPiece | CommandRow
ProcessItem: TypeAlias = "ActivityItem | ProgressRow | ActivityGroup"


@dataclass(frozen=True)
class ActivityGroup:
    """Two or more consecutive activity items under one title (P-4, P-5, P-6)."""

    key: str
    title: str
    count_text: str
    open: bool
    active: bool
    items: tuple[ActivityItem, ...]


@dataclass(frozen=True)
class TurnHeader:
    """Outcome and bounded metadata only (P-7): no command, search term or problem count."""

    status: TurnStatus
    label: str
    duration: str | None
    tool_count: int
    count_text: str
    duration_ms: float | None = None
    """The duration ``duration`` shows, in milliseconds (:func:`recorded_duration_ms`), for
    the corpus's turn rows to take from the header rather than find again."""
    duration_note: str | None = None
    """Why a settled turn shows no duration where one would be expected (P-7: never a wrong
    one): its moments were stamped by a clock that changed (:func:`clock_changed`)."""


@dataclass(frozen=True)
class TurnProcess:
    """The one outer disclosure of a turn (P-1); ``open`` only while the turn runs (P-8)."""

    key: str
    open: bool
    active: bool
    items: tuple[ProcessItem, ...]


@dataclass(frozen=True)
class Turn:
    """An assistant turn: header, process, the surfaces outside the fold, and the answer."""

    key: str
    header: TurnHeader
    process: TurnProcess | None
    #: Errors, the stop marker and pending decisions: actionable without opening (P-3).
    outside: tuple[AssistantError | AbortMarker | PendingAction, ...]
    answer: AssistantText | None
    #: The trailing text of a running turn, which may still move into the process (P-2).
    tentative: bool
    running: bool


TopLevel: TypeAlias = UserMessage | SystemNotice | CompactionBoundary | Turn


# --- segmentation --------------------------------------------------------------------------------


@dataclass
class Segment:
    """The entries of one assistant turn, and the user message that opened it, if any (the
    unit the planner splits a transcript into; :class:`PlannedItem` holds one per turn)."""

    user: UserMessage | None
    entries: list[Entry] = field(default_factory=list)

    @property
    def first(self) -> Entry:
        """The entry the turn's keys are made from: its prompt, else its first step."""
        return self.user or self.entries[0]


_Item: TypeAlias = UserMessage | SystemNotice | CompactionBoundary | Segment


class _Splitter:
    """Splits entries, fed one by one, at the rows that keep their own turn boundaries (P-1).

    Feeding more entries never changes what earlier entries were split into, except that the
    last turn grows: that is what lets :class:`ProjectionPlanner` follow a growing transcript.
    """

    def __init__(self) -> None:
        self.out: list[_Item] = []  # may end with a turn that has no entries yet
        self.current: Segment | None = None
        self.last_segment = -1  # the index of the last turn in ``out`` with entries

    def feed(self, entry: Entry) -> int | None:
        """Take ``entry``; the index in :attr:`out` of the item that shows it (None: none)."""
        if isinstance(entry, UserMessage):
            self.out.append(entry)
            self.current = Segment(entry)
            self.out.append(self.current)
            return len(self.out) - 2
        if isinstance(entry, (SystemNotice, CompactionBoundary)):
            self.out.append(entry)
            self.current = None
            return len(self.out) - 1
        if isinstance(entry, ToolUseSummary):
            return None  # labels attach to their batch by call ids (S-6), wherever they were stored
        if self.current is None or _ran_after_the_agent(entry, self.current):
            self.current = Segment(None)
            self.out.append(self.current)
        self.current.entries.append(entry)
        self.last_segment = len(self.out) - 1
        return self.last_segment


def _ran_after_the_agent(entry: Entry, current: Segment) -> bool:
    """Whether ``entry`` is a command the user ran (F-14: Claude Code's ``!``, aider's ``/run``,
    Codex's shell) after the agent had acted in the current turn: the user's own act keeps its
    own turn, as a prompt does (P-1). Inside the agent's turn it would come after the answer
    and take its place (P-2: the answer is the last text only if nothing follows it). Commands
    run one after another, and a command run before the agent acted, stay together."""
    return (
        isinstance(entry, ToolCall)
        and entry.user_initiated
        and any(not (isinstance(e, ToolCall) and e.user_initiated) for e in current.entries)
    )


# --- one turn ------------------------------------------------------------------------------------


def _answer_index(entries: Sequence[Entry]) -> int | None:
    """The turn's last assistant text, if no thinking or tool activity follows it (P-2).

    A side call (``meta["side_call"]``: another model a solver or a scorer asked beside the
    run, as an Inspect log records it) is no activity of the agent's: one after the text
    leaves it the answer."""
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if isinstance(entry, AssistantText):
            return index
        if isinstance(entry, ToolCall) and entry.meta.get("side_call") is True:
            continue
        if isinstance(entry, (Thinking, ToolCall)):
            return None
    return None


def is_scoring_call(entry: Entry) -> bool:
    """Whether ``entry`` is a call a scorer made after the run (``meta["scoring"]``: an Inspect
    model-graded scorer's grader call). It is shown where it ran, but it is the scoring's, not
    one of the agent's tool calls: no header counts it, nor does a corpus row (C-2)."""
    return isinstance(entry, ToolCall) and entry.meta.get("scoring") is True


def _is_running(entries: Sequence[Entry], hint: bool) -> bool:
    active = any(
        (isinstance(e, ToolCall) and e.status in ACTIVE_STATUSES)
        or (isinstance(e, Thinking) and e.streaming)
        for e in entries
    )
    return active or hint


def _status(entries: Sequence[Entry], running: bool) -> TurnStatus:
    """Failed > stopped > running > completed (P-7): a recorded failure produced no answer."""
    if any(isinstance(e, AssistantError) for e in entries):
        return "failed"
    if any(isinstance(e, AbortMarker) for e in entries):
        return "stopped"
    return "running" if running else "completed"


def recorded_duration_ms(segment: Segment) -> float | None:
    """The turn's duration in milliseconds, as its header shows it (P-7), or None.

    A duration the source recorded for the turn (an entry's ``meta["turn_duration_ms"]``, the
    last one) wins; else the span from the earliest to the latest real timestamp of the turn's
    prompt, entries and tool-call ends; None with fewer than two timestamps, or when the
    reader said the turn's stamps were taken on a clock that changed (:func:`clock_changed`).
    ``segment`` is a turn of :func:`plan_projection` (``PlannedItem.segment``); the corpus's
    turn rows use this so their ``duration_s`` is the header's.
    """
    everything: list[Entry] = ([segment.user] if segment.user else []) + segment.entries
    for entry in reversed(everything):
        recorded = entry.meta.get("turn_duration_ms")
        if isinstance(recorded, (int, float)) and not isinstance(recorded, bool) and recorded > 0:
            return float(recorded)
    if clock_changed(segment):
        return None
    stamps = [e.timestamp for e in everything if e.timestamp]
    stamps += [e.ended_at for e in segment.entries if isinstance(e, ToolCall) and e.ended_at]
    if len(stamps) < 2:
        return None
    return span_ms(min(stamps), max(stamps))


def clock_changed(segment: Segment) -> bool:
    """Whether a reader marked an entry of the turn ``meta["clock_changed"]``: the computer's
    clock was set while the run was recorded (the reader warned of it), so the span of the
    turn's stamps may hold the jump (43 hours for a run of 51 ms) and measures nothing."""
    everything: list[Entry] = ([segment.user] if segment.user else []) + segment.entries
    return any(entry.meta.get("clock_changed") is True for entry in everything)


def segment_header(segment: Segment, running: bool, locale: str) -> TurnHeader:
    """The header of a planned turn (P-7) without projecting the rest of it: what the corpus's
    rows count (C-2), so a row and the turn's header cannot disagree."""
    return _header(segment, _status(segment.entries, running), locale)


def segment_answer(segment: Segment) -> AssistantText | None:
    """The answer of a planned turn (P-2) without projecting the rest of it: what a comparison
    of two runs reads of each turn (B-3), so it and the turn's view agree on the answer."""
    at = _answer_index(segment.entries)
    answer = segment.entries[at] if at is not None else None
    return answer if isinstance(answer, AssistantText) else None


def _header(segment: Segment, status: TurnStatus, locale: str) -> TurnHeader:
    tools = sum(1 for e in segment.entries if isinstance(e, ToolCall) and not is_scoring_call(e))
    label_key: str = status
    if status == "running":
        last = next(
            (e for e in reversed(segment.entries) if not isinstance(e, AssistantText)), None
        )
        if isinstance(last, Thinking) and last.streaming:
            label_key = "thinking"
        elif isinstance(last, SystemNotice) and last.subtype in ("compacting", "resuming"):
            label_key = "compressing" if last.subtype == "compacting" else "resuming"
    duration_ms = None if status == "running" else recorded_duration_ms(segment)
    unmeasured = status != "running" and duration_ms is None and clock_changed(segment)
    return TurnHeader(
        status=status,
        label=translate(f"header.{label_key}", locale),
        duration=format_duration(duration_ms, hide_trailing_zeros=True) if duration_ms else None,
        tool_count=tools,
        count_text=_counted("header.tools", tools, locale),
        duration_ms=duration_ms,
        duration_note=translate("header.clock_changed", locale) if unmeasured else None,
    )


@lru_cache(maxsize=1024)
def _counted(key: str, count: int, locale: str) -> str:
    """:func:`~turnfold.i18n.plural` of a count token, asked for once per turn and per group
    of a long session with the same few counts (Q-1)."""
    return plural(key, count, locale)


_Row = TypeVar("_Row", ThinkingRow, ProgressRow)


class TurnMemo:
    """What projecting a growing turn made last time, handed back where nothing changed (Q-3).

    A followed run is one turn that grows with every call, and it is projected again at every
    update. Its earlier batches, rows and groups are the same as last time unless an entry of
    theirs was updated, so they are reused as the *same objects*: building a batch's view is
    skipped, and the view model builder and the transport's diff, which go by identity, skip
    them too. An item is reused only when it is made of the very entries it was made of, none
    of them changed since (:meth:`forget`), under the same settings (the planner makes a new
    memo when they change).
    """

    def __init__(self) -> None:
        #: A batch's first call id -> its calls, its label and the pieces made of them.
        self._batches: dict[str, tuple[tuple[ToolCall, ...], object, list[ActivityItem]]] = {}
        #: A row's entry id -> the row (thinking, progress).
        self._rows: dict[str, ThinkingRow | ProgressRow] = {}
        self._groups: dict[str, ActivityGroup] = {}
        #: An entry id -> the key its item is memoized under, to forget it when it changes.
        self._owner: dict[str, str] = {}

    def forget(self, entry_id: str) -> None:
        """The entry ``entry_id`` changed: what was made of it is made anew."""
        owner = self._owner.pop(entry_id, None)
        if owner is not None:
            self._batches.pop(owner, None)
            self._rows.pop(owner, None)

    def pieces(
        self, batch: list[ToolCall], label: object, make: Callable[[], list[ActivityItem]]
    ) -> list[ActivityItem]:
        """The pieces of ``batch`` made last time, or made now by ``make``.

        A batch that holds a sub-agent is always made anew: its child transcript grows without
        its parent's call being updated."""
        first = batch[0].id
        known = self._batches.get(first)
        if known is not None and known[1] is label and _same_objects(known[0], batch):
            return known[2]
        pieces = make()
        if all(call.subagent is None for call in batch):
            self._batches[first] = (tuple(batch), label, pieces)
            for call in batch:
                self._owner[call.id] = first
        return pieces

    def row(self, entry: Entry, made: _Row) -> _Row:
        """The row made last time for ``entry`` if it equals ``made`` (its entry unchanged)."""
        known = self._rows.get(entry.id)
        if known is not None and type(known) is type(made) and known == made:
            return known
        self._rows[entry.id] = made
        self._owner[entry.id] = entry.id
        return made

    def group(self, made: ActivityGroup) -> ActivityGroup:
        """The group made last time under this key if it holds the very same items."""
        known = self._groups.get(made.key)
        if (
            known is not None
            and _same_objects(known.items, made.items)
            and (known.title, known.count_text, known.open, known.active)
            == (made.title, made.count_text, made.open, made.active)
        ):
            return known
        self._groups[made.key] = made
        return made


def _same_objects(known: Sequence[object], made: Sequence[object]) -> bool:
    """Whether two sequences hold the very same objects, in order (what the memo reuses by)."""
    return len(known) == len(made) and all(a is b for a, b in zip(known, made, strict=True))


@dataclass
class ProjectionContext:
    """What projecting one turn needs beyond its entries: the settings, the fast model's
    labels, whether the turn is still running, the key prefix of a sub-agent's transcript, and
    the memo of a turn projected again as it grows."""

    settings: SettingsSnapshot
    labels: dict[str, ToolUseSummary]  # by the key of the call (``batches.label_key``)
    running: bool
    key_prefix: str
    memo: TurnMemo | None = None


def _pieces(batch: list[ToolCall], view: BatchView, ctx: ProjectionContext) -> list[ActivityItem]:
    """A batch as one piece, or in command-first mode split around its commands (P-4)."""
    prefix = ctx.key_prefix
    by_id = {c.id: c for c in batch}
    mode = ctx.settings.transcript_display_mode
    if mode != "command-first":
        return [
            BatchPiece(
                keys.batch(batch[0].id, prefix),
                tuple(batch),
                view.items,
                view.memory_badges,
                view.label_line,
                view.active,
            )
        ]
    pieces: list[ActivityItem] = []
    run: list[SummaryRow | ToolRow] = []

    def flush() -> None:
        if run:
            first = run[0].rows[0] if isinstance(run[0], SummaryRow) else run[0]
            calls = tuple(by_id[r.entry_id] for item in run for r in _rows_of(item))
            pieces.append(
                BatchPiece(
                    keys.batch(first.entry_id, prefix), calls, tuple(run), None, None, view.active
                )
            )
            run.clear()

    for item in view.items:
        if isinstance(item, ToolRow) and item.category == "command":
            flush()
            pieces.append(
                CommandRow(keys.command(item.entry_id, prefix), by_id[item.entry_id], item)
            )
        else:
            run.append(item)
    flush()
    if not (view.memory_badges or view.label_line):
        return pieces
    # The badges and the label end the batch: on its last piece, or after a trailing command.
    last = pieces[-1] if pieces else None
    if isinstance(last, BatchPiece):
        pieces[-1] = replace(last, memory_badges=view.memory_badges, label_line=view.label_line)
    else:
        key = keys.batch(batch[0].id, prefix, tail=bool(pieces))
        pieces.append(BatchPiece(key, (), (), view.memory_badges, view.label_line, view.active))
    return pieces


def _rows_of(item: SummaryRow | ToolRow) -> tuple[ToolRow, ...]:
    return item.rows if isinstance(item, SummaryRow) else (item,)


def _visible_rows(item: ActivityItem) -> int:
    """How many rows an item shows, for the groups-need-two rule (P-5)."""
    if isinstance(item, BatchPiece):
        return len(item.items) + (1 if item.memory_badges and not item.items else 0)
    return 1


def _item_calls(item: ActivityItem) -> tuple[ToolCall, ...]:
    if isinstance(item, BatchPiece):
        return item.calls
    if isinstance(item, CommandRow):
        return (item.call,)
    return ()


def _own_calls(item: ActivityItem) -> list[ToolCall]:
    """The agent's calls an item shows: a scorer's call in one batch with them is no
    operation of the agent's group (as the header counts it)."""
    return [c for c in _item_calls(item) if not is_scoring_call(c)]


def _is_scoring(item: ActivityItem) -> bool:
    """Whether ``item`` shows a scorer's calls alone (:func:`is_scoring_call`)."""
    calls = _item_calls(item)
    return bool(calls) and all(is_scoring_call(c) for c in calls)


def _group_title(items: Sequence[ActivityItem], locale: str) -> tuple[str, str]:
    """The composition (actions in order of first appearance) and the count token (P-6); the
    scorer's calls (:func:`_group_items` groups them apart) are titled as the scoring."""
    if all(_is_scoring(item) for item in items):
        operations = sum(len(_item_calls(i)) for i in items)
        return translate("group.scoring", locale), _counted("group.operations", operations, locale)
    actions: list[str] = []
    for item in items:
        names: list[str] = []
        if isinstance(item, (ThinkingRow, ThinkingIndicator)):
            names = ["thinking"]
        else:
            names = [tool_category(c.name) for c in _own_calls(item)]
        for name in names:
            if name not in actions:
                actions.append(name)
    composition = _composition(tuple(actions), locale)
    operations = sum(len(_own_calls(i)) for i in items)
    if operations:
        return composition, _counted("group.operations", operations, locale)
    segments = sum(1 for i in items if isinstance(i, (ThinkingRow, ThinkingIndicator)))
    return composition, _counted("group.segments", segments, locale)


@lru_cache(maxsize=1024)
def _composition(actions: tuple[str, ...], locale: str) -> str:
    """A group's title from its actions: a long session has thousands of groups and a few
    dozen distinct titles (Q-1)."""
    words = [translate(f"group.action.{a}", locale) for a in actions]
    composition = join_list(words, locale)
    composition = composition[:1].upper() + composition[1:]
    if len(composition) > GROUP_TITLE_LIMIT:
        composition = composition[: GROUP_TITLE_LIMIT - 1].rstrip() + "…"
    return composition


def _has_failure(items: Sequence[ActivityItem]) -> bool:
    return any(c.status in FAILED_STATUSES for i in items for c in _item_calls(i))


def _group_items(
    items: list[ActivityItem | ProgressRow], current: object, ctx: ProjectionContext
) -> list[ProcessItem]:
    """Consecutive activity between progress rows (and commands, in command-first) → groups.

    A scorer's calls (an Inspect model-graded scorer's grader calls, run after the agent's
    turn) end the agent's activity as progress text does, and group apart, titled as the
    scoring: P-4's groups are the agent's activity, and P-6's count is then the count of the
    agent's calls the turn header states (P-7, which counts no scorer's call); a group that
    held both would count a call no header does, or hide one of its rows from its own count.
    One scorer's call alone is its own row (P-5), which names itself the scorer's."""
    mode = ctx.settings.transcript_display_mode
    if mode == "flat":
        return list(items)
    out: list[ProcessItem] = []
    run: list[ActivityItem] = []

    def flush() -> None:
        if sum(_visible_rows(i) for i in run) >= 2:  # P-5: a group needs two visible items
            title, count = _group_title(run, ctx.settings.locale)
            owns_current = any(i is current for i in run)
            if not ctx.running:
                is_open = not ctx.settings.auto_collapse_settled_groups
            else:
                # P-8: the group of the step now executing is open; one that recorded a
                # failure stays open during recovery; other finished groups are closed.
                is_open = owns_current or _has_failure(run)
            group = ActivityGroup(keys.group(run[0].key), title, count, is_open,
                                  owns_current, tuple(run))  # fmt: skip
            out.append(ctx.memo.group(group) if ctx.memo is not None else group)
        else:
            out.extend(run)
        run.clear()

    for item in items:
        if isinstance(item, ProgressRow) or (
            mode == "command-first" and isinstance(item, CommandRow)
        ):
            flush()
            out.append(item)
        else:
            if run and _is_scoring(run[-1]) != _is_scoring(item):
                flush()  # the agent's activity and the scoring's are grouped apart
            run.append(item)
    flush()
    return out


def _thinking_open(entry: Thinking, is_current: bool, ctx: ProjectionContext) -> bool:
    """P-8/P-9: settled rows follow auto_collapse_thinking; running rows follow the mode."""
    if not ctx.running:
        return not ctx.settings.auto_collapse_thinking
    if ctx.settings.transcript_display_mode == "fully-folded":
        return is_current
    return True


def _batch_pieces(
    batch: list[ToolCall], label: ToolUseSummary | None, ctx: ProjectionContext
) -> list[ActivityItem]:
    """The rows of one tool batch (F-10 … F-15), as the pieces the display mode puts them in."""
    settings = ctx.settings
    view = build_batch_view(
        batch,
        full_detail=settings.full_detail,
        show_tool_call_args=settings.show_tool_call_args,
        label=label,
        locale=settings.locale,
    )
    return _pieces(batch, view, ctx)


def _project_turn(segment: Segment, ctx: ProjectionContext) -> Turn:
    entries = segment.entries
    status = _status(entries, ctx.running)
    answer_at = _answer_index(entries)
    answer = entries[answer_at] if answer_at is not None else None
    settings = ctx.settings
    prefix = ctx.key_prefix

    flow = [e for i, e in enumerate(entries) if i != answer_at and not isinstance(e, _OUTSIDE)]
    grouped = list(split_batches(flow))
    last_activity = next((e for e in reversed(grouped) if not isinstance(e, AssistantText)), None)
    items: list[ActivityItem | ProgressRow] = []
    current: object = None
    memo = ctx.memo
    for part in grouped:
        if isinstance(part, list):
            label = label_for(part, ctx.labels)
            make = partial(_batch_pieces, part, label, ctx)
            pieces = memo.pieces(part, label, make) if memo is not None else make()
            items.extend(pieces)
            if part is last_activity and ctx.running:
                # The step now executing: the last piece that shows rows (not a label tail).
                current = next(
                    (p for p in reversed(pieces) if not isinstance(p, BatchPiece) or p.items),
                    pieces[-1],  # a memory-only batch shows just its badges
                )
        elif isinstance(part, Thinking):
            is_current = ctx.running and part is last_activity
            if settings.show_thinking:
                key = keys.entry(part.id, prefix)
                row = ThinkingRow(key, part, _thinking_open(part, is_current, ctx))
                if memo is not None:
                    row = memo.row(part, row)
                items.append(row)
                if is_current:
                    current = row
            elif part.streaming:
                indicator = ThinkingIndicator(keys.entry(part.id, prefix))
                items.append(indicator)
                current = indicator
        elif isinstance(part, AssistantText):
            progress = ProgressRow(keys.entry(part.id, prefix), part)
            items.append(memo.row(part, progress) if memo is not None else progress)
    process_items = _group_items(items, current, ctx)
    process = (
        TurnProcess(
            keys.process(segment.first.id, prefix), ctx.running, ctx.running, tuple(process_items)
        )
        if process_items
        else None
    )
    outside = tuple(e for e in entries if isinstance(e, _OUTSIDE))
    return Turn(
        key=keys.turn(segment.first.id, prefix),
        header=_header(segment, status, settings.locale),
        process=process,
        outside=outside,
        answer=answer if isinstance(answer, AssistantText) else None,
        tentative=ctx.running and answer is not None,
        running=ctx.running,
    )


# --- the whole transcript ------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedItem:
    """One top-level item of a projection, before the work of projecting a turn is done.

    :func:`plan_projection` finds the items (cheap: one pass over the entries); each item's
    :meth:`project` is independent of every other item's, so a renderer can project them in
    pieces or in another process (:mod:`turnfold.render.page`).
    """

    entry: UserMessage | SystemNotice | CompactionBoundary | None
    segment: Segment | None = None
    context: ProjectionContext | None = None
    key: str = field(init=False)
    """The key of the item's node (a turn's key, or the entry's id)."""

    def __post_init__(self) -> None:
        if self.segment is not None and self.context is not None:
            key = keys.turn(self.segment.first.id, self.context.key_prefix)
        else:
            assert self.entry is not None
            key = self.entry.id
        object.__setattr__(self, "key", key)  # frozen: set once, here

    @property
    def running(self) -> bool:
        """Whether the item is a turn still running (its node changes as the agent works)."""
        return self.context is not None and self.context.running

    def project(self) -> TopLevel:
        if self.segment is None or self.context is None:
            assert self.entry is not None
            return self.entry
        return _project_turn(self.segment, self.context)


def plan_projection(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    running: bool | None = None,
    key_prefix: str = "",
) -> list[PlannedItem]:
    """The items of :func:`project`, each still to be projected (see :class:`PlannedItem`)."""
    planner = ProjectionPlanner(transcript, key_prefix)
    items, _ = planner.plan(settings, running=running)
    return items


def project(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    running: bool | None = None,
    key_prefix: str = "",
) -> list[TopLevel]:
    """The transcript as a person sees it, under ``settings`` (spec §5).

    ``running`` says whether the agent is still working on the last turn; by default a turn
    runs while any of its tools is active or its reasoning streams. ``key_prefix`` keeps the
    keys of a sub-agent's transcript apart from its parent's.
    """
    planned = plan_projection(transcript, settings, running=running, key_prefix=key_prefix)
    return [item.project() for item in planned]


class ProjectionPlanner:
    """:func:`plan_projection` of one transcript as it grows, at the cost of what changed (Q-3).

    A transcript only grows at its end (:meth:`Transcript.append`), and segments depend only on
    the kinds of entries, so the planner splits each entry once, keeps the label of every call
    up to date from the entries it has not seen yet, and re-plans only the turns that show a
    changed entry (an appended or updated one, or a call a new label names), plus the last turn.
    Everything else is handed back as it was, so a renderer can reuse what it built for it.
    After entries were changed in place (without :meth:`Transcript.update`), make a new planner.
    """

    def __init__(self, transcript: Transcript, key_prefix: str = "") -> None:
        self.transcript = transcript
        self.key_prefix = key_prefix
        self._splitter = _Splitter()
        self._seen = 0
        self._labels = LabelIndex()
        self._where: dict[str, int] = {}  # entry ids -> index in the splitter's out
        self._planned: dict[int, PlannedItem] = {}
        self._settings: SettingsSnapshot | None = None
        self._running: bool | None = None
        self._last = -1
        #: The last turn, which grows, and the memo of its projection (Q-3).
        self._memo: tuple[int, TurnMemo] | None = None

    def plan(
        self,
        settings: DisplaySettings | SettingsSnapshot | None,
        *,
        running: bool | None = None,
        changed: Iterable[str] = (),
    ) -> tuple[list[PlannedItem], set[str]]:
        """The planned items now, and the keys of the items planned anew since the last call.

        ``changed`` holds the ids of the entries appended or updated since then (what each
        :class:`TranscriptChange` reports); a label's id re-plans the turns of the calls it names.
        """
        snapshot = snapshot_of(settings)
        stale: set[int] = set()
        if snapshot != self._settings or running != self._running:
            if snapshot != self._settings:
                self._memo = None  # what the memo holds was made under the old settings
            self._settings, self._running = snapshot, running
            self._planned.clear()  # every context changes
        entries = self.transcript.entries
        appended = entries[self._seen :]
        for entry in appended:
            index = self._splitter.feed(entry)
            if index is not None:
                self._where[entry.id] = index
                stale.add(index)
            if isinstance(entry, ToolUseSummary):
                self._where[entry.id] = -1
            for key in self._labels.feed(entry):  # the calls a label names, by their keys
                stale.add(self._where.get(key, -1))
        self._seen = len(entries)
        new_ids: set[str] | None = None  # built only if a label is among the changes
        labels_changed = False
        for key in changed:
            index = self._where.get(key)
            if index == -1:
                if new_ids is None:
                    new_ids = {entry.id for entry in appended}
                if key not in new_ids:  # a label updated in place: re-read them all
                    labels_changed = True
            elif index is not None and index >= 0:
                stale.add(index)
                if self._memo is not None and self._memo[0] == index:
                    self._memo[1].forget(key)
        if labels_changed:
            self._labels = LabelIndex()
            for entry in entries:
                self._labels.feed(entry)
            self._planned.clear()
            self._memo = None
        self._labels.warn_unplaced()
        out = self._splitter.out
        last = self._splitter.last_segment
        if running:
            # The last turn runs by the hint as well as by its entries: re-plan it, and the turn
            # that was last before it, which lost the hint.
            stale.update((last, self._last))
        self._last = last
        items: list[PlannedItem] = []
        fresh: set[str] = set()
        for index, item in enumerate(out):
            if isinstance(item, Segment) and not item.entries:
                continue
            planned = self._planned.get(index)
            if planned is None or index in stale:
                planned = self._item(item, index, hint=bool(running) and index == last)
                self._planned[index] = planned
                fresh.add(planned.key)
            items.append(planned)
        return items, fresh

    def _item(self, item: _Item, index: int, *, hint: bool) -> PlannedItem:
        if not isinstance(item, Segment):
            return PlannedItem(item)
        assert self._settings is not None
        running = _is_running(item.entries, hint)
        memo = None
        if index == self._splitter.last_segment:
            # Only the last turn grows, so only its projection is worth remembering.
            if self._memo is None or self._memo[0] != index:
                self._memo = (index, TurnMemo())
            memo = self._memo[1]
        labels = self._labels.labels
        context = ProjectionContext(self._settings, labels, running, self.key_prefix, memo)
        return PlannedItem(None, item, context)


__all__ = [
    "ActivityGroup",
    "ActivityItem",
    "BatchPiece",
    "CommandRow",
    "PlannedItem",
    "ProcessItem",
    "ProgressRow",
    "ProjectionContext",
    "ProjectionPlanner",
    "Segment",
    "ThinkingIndicator",
    "ThinkingRow",
    "TopLevel",
    "Turn",
    "TurnHeader",
    "TurnMemo",
    "TurnProcess",
    "clock_changed",
    "plan_projection",
    "project",
    "recorded_duration_ms",
    "segment_answer",
    "segment_header",
]
