"""The tool batch rendering rules (spec F-10 … F-15) as one pure function.

A *batch* is the set of tool calls one model response issued. :func:`build_batch_view` decides,
once and for every renderer, what a batch looks like: which tools fold into the summary row, which
render as their own row, which results are hidden or forced open, the memory badges and the label.

>>> from turnfold.model import ToolCall
>>> view = build_batch_view([
...     ToolCall(call_id="1", name="Read", description="a.ts", status="success"),
...     ToolCall(call_id="2", name="Read", description="b.ts", status="success"),
...     ToolCall(call_id="3", name="Bash", description="npm test", status="executing"),
... ])
>>> [item.text if isinstance(item, SummaryRow) else item.name for item in view.items]
['Reading a.ts, b.ts…', 'Bash']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from turnfold.i18n import plural
from turnfold.model import ACTIVE_STATUSES, Entry, ToolCall, ToolStatus, ToolUseSummary
from turnfold.tools import (
    ToolCategory,
    build_tool_summary,
    format_subagent_line,
    is_collapsible_tool,
    memory_operation,
    safe_description,
    tool_category,
)
from turnfold.userwarn import warn_at_caller

#: Result kinds that may fold away; everything else is the answer itself (spec F-12).
FOLDABLE_RESULT_KINDS = frozenset({"text", "ansi"})
ACTIVE_SUFFIX = "…"
LABEL_GLYPH = "●"


@dataclass(frozen=True)
class ToolRow:
    """One tool on its own row. Tool names are always drawn bold (spec F-13)."""

    entry_id: str
    call_id: str
    name: str
    category: ToolCategory
    status: ToolStatus
    description: str | None
    #: The result is hidden until the row is opened (spec F-12).
    result_folded: bool
    #: This tool triggered force-expand, so its result shows whatever else holds (spec F-14).
    result_forced_open: bool
    #: A cancelled collapsible tool is struck through and keeps its partial output (spec F-10).
    struck: bool
    #: The one-line account of a finished sub-agent (spec F-7), else None.
    subagent_line: str | None
    show_args: bool


@dataclass(frozen=True)
class SummaryRow:
    """The collapsible tools of a batch as one line; opening it lists ``rows`` (spec F-10a)."""

    summary: str
    active: bool
    rows: tuple[ToolRow, ...]

    @property
    def text(self) -> str:
        """The line as shown: the summary, with ``…`` while the batch runs (spec F-5)."""
        return self.summary + ACTIVE_SUFFIX if self.active else self.summary


@dataclass(frozen=True)
class BatchView:
    """Everything a renderer needs to draw one batch, in display order."""

    items: tuple[SummaryRow | ToolRow, ...]
    #: ``Recalled 2 memories, Wrote 1 memory``: the badges of an all-memory batch, or the dim
    #: line beside the rows of a mixed one (spec F-11); None when there is none.
    memory_badges: str | None
    memory_only: bool
    force_expand: bool
    active: bool
    #: The fast model's label for this batch (spec F-15), drawn as ``● label`` after it.
    label: str | None

    @property
    def label_line(self) -> str | None:
        return f"{LABEL_GLYPH} {self.label}" if self.label else None


def _awaits_subagent_confirmation(call: ToolCall) -> bool:
    child = call.subagent.transcript if call.subagent else None
    return child is not None and any(c.status == "confirming" for c in child.tool_calls())


def _is_finished_subagent(call: ToolCall) -> bool:
    # A call that only holds what it ran (a code-mode cell's commands) is no agent's run.
    is_agent = (call.subagent is not None and call.subagent.is_run) or tool_category(
        call.name
    ) == "agent"
    return is_agent and call.status not in ACTIVE_STATUSES


def _triggers_force_expand(call: ToolCall, user_initiated: bool) -> bool:
    """Whether this tool alone forces the batch open and its own result visible (spec F-14)."""
    return (
        user_initiated
        or call.user_initiated
        or call.status in ("confirming", "error")
        or _awaits_subagent_confirmation(call)
        or _is_finished_subagent(call)
    )


def _result_folded(call: ToolCall, forced_open: bool) -> bool:
    """Spec F-12: only a successful collapsible tool's plain text or ANSI output folds."""
    result = call.result
    return (
        not forced_open
        and result is not None
        and call.status == "success"
        and is_collapsible_tool(call.name)
        and result.kind in FOLDABLE_RESULT_KINDS
        and not result.images
    )


def _row(call: ToolCall, *, forced_open: bool, show_args: bool, locale: str) -> ToolRow:
    return ToolRow(
        entry_id=call.id,
        call_id=call.call_id,
        name=call.name,
        category=tool_category(call.name),
        status=call.status,
        description=safe_description(call.description),
        result_folded=_result_folded(call, forced_open),
        result_forced_open=forced_open,
        struck=call.status == "cancelled" and is_collapsible_tool(call.name),
        subagent_line=format_subagent_line(call, locale) if _is_finished_subagent(call) else None,
        show_args=show_args,
    )


def _memory_badges(calls: Sequence[ToolCall], locale: str) -> str | None:
    recalled = sum(1 for c in calls if memory_operation(c) == "read")
    wrote = sum(1 for c in calls if memory_operation(c) == "write")
    badges = [
        plural(key, count, locale)
        for key, count in (("memory.recalled", recalled), ("memory.wrote", wrote))
        if count
    ]
    return ", ".join(badges) or None


def _owns_row(call: ToolCall) -> bool:
    """Tools that never fold into the summary row (spec F-10)."""
    has_images = call.result is not None and bool(call.result.images)
    return not is_collapsible_tool(call.name) or call.status == "cancelled" or has_images


def build_batch_view(
    batch: Sequence[ToolCall],
    *,
    full_detail: bool = False,
    show_tool_call_args: bool = False,
    user_initiated: bool = False,
    label: str | ToolUseSummary | None = None,
    locale: str = "en",
) -> BatchView:
    """Apply the batch rules F-10 … F-15 to ``batch`` (the calls of one model response).

    ``full_detail`` and ``show_tool_call_args`` are the per-view toggles of spec T-1;
    ``user_initiated`` marks a batch the user ran directly. ``label`` is the batch's tool-use
    summary (a string or the :class:`ToolUseSummary` entry), if one was generated.
    """
    active = any(c.status in ACTIVE_STATUSES for c in batch)
    label_text = label.label if isinstance(label, ToolUseSummary) else label
    # Keyed by identity: calls not yet in a transcript have no id, and equal calls may repeat.
    triggers = {id(c): _triggers_force_expand(c, user_initiated) for c in batch}
    force_expand = full_detail or show_tool_call_args or any(triggers.values())

    def row(call: ToolCall) -> ToolRow:
        forced = full_detail or triggers[id(call)]
        return _row(call, forced_open=forced, show_args=show_tool_call_args, locale=locale)

    # F-11: a batch of successful memory operations is only badges, unless detail is asked for.
    remembered = [c for c in batch if memory_operation(c) and c.status == "success"]
    remembered_ids = {id(c) for c in remembered}
    if batch and not force_expand and len(remembered) == len(batch):
        return BatchView((), _memory_badges(batch, locale), True, False, active, label_text)

    if force_expand:
        # F-14: no partition; every tool is its own row, memory tools included.
        items: tuple[SummaryRow | ToolRow, ...] = tuple(row(c) for c in batch)
        return BatchView(items, None, False, True, active, label_text)

    shown = [c for c in batch if id(c) not in remembered_ids]
    summarized = [c for c in shown if not _owns_row(c)]
    summary = SummaryRow(
        build_tool_summary(summarized, active=active, locale=locale),
        active,
        tuple(row(c) for c in summarized),
    )
    # The summary row stands where its first tool was called, so call order still reads top-down.
    ordered: list[SummaryRow | ToolRow] = []
    for call in shown:
        if not _owns_row(call):
            if call is summarized[0]:
                ordered.append(summary)
        else:
            ordered.append(row(call))
    return BatchView(
        tuple(ordered), _memory_badges(remembered, locale), False, False, active, label_text
    )


def split_batches(entries: Iterable[Entry]) -> Iterator[Entry | list[ToolCall]]:
    """``entries`` in order, with consecutive calls of one ``batch_id`` gathered into a list.

    A call without a ``batch_id`` is a batch of its own; any other entry ends a batch.
    """
    batch: list[ToolCall] = []
    for entry in entries:
        if isinstance(entry, ToolCall):
            if batch and (entry.batch_id is None or entry.batch_id != batch[-1].batch_id):
                yield batch
                batch = []
            batch.append(entry)
            continue
        if batch:
            yield batch
            batch = []
        yield entry
    if batch:
        yield batch


def iter_batches(entries: Iterable[Entry]) -> Iterator[list[ToolCall]]:
    """Only the batches of :func:`split_batches`."""
    return (part for part in split_batches(entries) if isinstance(part, list))


def label_key(call: ToolCall) -> str:
    """The key a call's label is found by: its entry key (unique in its transcript, where a
    source's call ids need not be: Inspect's retried attempts repeat theirs); a call in no
    transcript yet, which has no key, by its identity."""
    return call.id or f"@{id(call)}"


class LabelIndex:
    """The latest label of every call, by :func:`label_key`, from entries fed in order.

    A label that keeps the entry ids of its calls (``ToolUseSummary.entry_ids``) names those
    calls, wherever it stands: two batches of one call id labelled after both finished (a
    loaded Inspect sample's retried attempts) each keep their own label. A label without them
    (a dump written before they were kept, a hand-made transcript) names its calls by their
    call ids (S-1), so it attaches as it did: an id names the latest call of that id stored
    before the label, as a label is written once its batch finished, after the batch; a label
    stored before every call of its id names the first call of that id after it.

    A label that names no call fed (its ids all stale: a dump whose calls were cut out) shows
    on no batch; :meth:`warn_unplaced` says so, once the entries at hand are all fed.
    """

    def __init__(self) -> None:
        self.labels: dict[str, ToolUseSummary] = {}
        self._latest: dict[str, str] = {}  # call id -> key of the latest call of that id
        self._early: dict[str, ToolUseSummary] = {}  # call id -> a label before every such call
        self._keys: set[str] = set()  # the keys of the calls fed
        self._unplaced: dict[int, ToolUseSummary] = {}  # labels naming no call fed, by id()
        self._warned: set[int] = set()

    def feed(self, entry: Entry) -> list[str]:
        """Take ``entry``; the keys of the calls whose label it changed."""
        if isinstance(entry, ToolCall):
            key = label_key(entry)
            self._latest[entry.call_id] = key
            self._keys.add(key)
            if self._unplaced:
                self._place(entry, key)
            early = self._early.pop(entry.call_id, None)
            if early is not None:
                self.labels[key] = early
                return [key]
        elif isinstance(entry, ToolUseSummary):
            if entry.entry_ids:
                for key in entry.entry_ids:
                    self.labels[key] = entry
                if not any(key in self._keys for key in entry.entry_ids):
                    self._unplaced[id(entry)] = entry
                return list(entry.entry_ids)
            changed = []
            for call_id in entry.call_ids:
                latest = self._latest.get(call_id)
                if latest is None:
                    self._early[call_id] = entry
                else:
                    self.labels[latest] = entry
                    changed.append(latest)
            if not changed:
                self._unplaced[id(entry)] = entry
            return changed
        return []

    def _place(self, call: ToolCall, key: str) -> None:
        """Forget the labels that ``call``, fed after them, is named by."""
        for ident, label in list(self._unplaced.items()):
            if key in label.entry_ids or (not label.entry_ids and call.call_id in label.call_ids):
                del self._unplaced[ident]

    def warn_unplaced(self) -> None:
        """Warn once of each label fed that names no call fed: it is shown on no batch (S-6),
        and a record dropped out of sight is a warning, never silence (L-4)."""
        for ident, label in self._unplaced.items():
            if ident not in self._warned:
                self._warned.add(ident)
                warn_at_caller(_unplaced_message(label))


def _unplaced_message(label: ToolUseSummary) -> str:
    """The warning of a label that names no call: the label itself (its first 100 characters,
    as :func:`~turnfold.summaries.clean.clean_summary` keeps them) and the ids it names."""
    ids, what = (label.entry_ids, "entry ids") if label.entry_ids else (label.call_ids, "call ids")
    named = ", ".join(repr(i[:40]) for i in ids[:3]) + (", …" if len(ids) > 3 else "")
    said = f"{what} {named}" if ids else "no ids"
    return (
        f"the tool-use summary label {label.label[:100]!r} names no tool call of this "
        f"transcript ({said}): it is shown on no batch"
    )


def labels_by_call(entries: Iterable[Entry]) -> dict[str, ToolUseSummary]:
    """The latest label for every call, by :func:`label_key` (:class:`LabelIndex`; S-6)."""
    index = LabelIndex()
    for entry in entries:
        index.feed(entry)
    return index.labels


def label_for(
    batch: Sequence[ToolCall], entries: Iterable[Entry] | Mapping[str, ToolUseSummary]
) -> ToolUseSummary | None:
    """The tool-use summary shown for ``batch`` (spec S-6: attached by call ids).

    ``entries`` are the transcript's entries, or their :func:`labels_by_call` when many batches
    are looked up. Each call's latest label counts; of those, the one of the batch's last
    labelled call is shown (the projection uses this same rule).
    """
    labels = entries if isinstance(entries, Mapping) else labels_by_call(entries)
    found = [labels[key] for key in map(label_key, batch) if key in labels]
    return found[-1] if found else None
