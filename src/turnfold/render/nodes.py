"""The view model's schema: one ``TypedDict`` per node kind (spec W-1, issue 14).

This module is the contract between the builder (:mod:`turnfold.render.viewmodel`) and every
renderer: the static page (:mod:`turnfold.render.html`), the text outline
(:mod:`turnfold.render.text`) and the notebook view (``js/src``). mypy checks that the builder
fills every field and that the Python renderers read only declared ones; ``js/src/nodes.d.ts``
is generated from these classes (``python -m turnfold.render.nodes``), so ``tsc --strict`` checks
the JS view against the same fields, and a test keeps the two equal.

Conventions, for every node:

- ``kind`` says what it is (a turn's process is ``"process"``); ``key`` is unique in the tree and
  stable: built by :mod:`turnfold.render.keys` from entry ids, never from positions or labels.
- ``open`` is the **default** fold state (P-8); a renderer that remembers the reader's choices
  (P-10) applies them on top.
- Fields ending in ``html`` are sanitized HTML fragments (X-1). Other strings are plain text the
  renderer escapes, except the few the builder escaped already (``escaped`` below).
- Phrases and fold facts (``fold``, ``status_label``, ``more_label``, ``form_label``, …) are
  computed here once, in the reader's language; no renderer derives them (W-1).
- ``rejected_label`` ("Rejected") is set on the node of an entry its source marks rejected
  (``meta["rejected"]``: a preference pair's rejected reply, a response the harness refused),
  and None elsewhere: every renderer draws it beside the node, muted. It is always present, so
  a live patch (which sends only the fields a node has) can clear it as well as set it.

A node kind added later changes this module, the builder and one draw function per renderer;
the type checkers point at anything missed.
"""

from __future__ import annotations

import sys
from typing import Literal, TypedDict

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired

# --- the head of a view ---------------------------------------------------------------------------


class OutcomeNode(TypedDict):
    """H-6: the run's outcome, score and cost, beside the title."""

    kind: Literal["outcome"]
    key: str
    status: str  #: one of ``viewmodel.OUTCOMES``, or ``"other"``
    text: str


class SessionPart(TypedDict):
    """One fact of the session header: its ``name`` (``agent``, ``model``, ``started``,
    ``duration``, ``turns``, ``tools``, ``tokens``, ``tokens_so_far``, ``tokens_failed_attempts``,
    ``cost``), the text shown, and a fuller form for a tooltip (the full model name, the exact
    time, the token breakdown), or None. ``tokens_so_far`` is what the whole session had spent
    when the run was written, earlier runs included, shown when the run's own tokens are not
    recorded; ``tokens_failed_attempts`` what the attempts retried before the run spent."""

    name: str
    text: str
    title: str | None


class SessionNode(TypedDict):
    """U-3: the session header, above the turns: ``text`` is its parts joined, for one line."""

    kind: Literal["session"]
    key: str
    text: str
    parts: list[SessionPart]


class TimelineBar(TypedDict):
    """U-4: one tool call on the time axis. Coordinates are seconds on the axis (idle gaps
    shortened), so a view scales them to its width and a live session's bars keep theirs."""

    key: str  #: the call's key: a click reveals it (P-11), the static page links to its row
    x: float  #: where it starts on the axis
    w: float  #: its recorded duration on the axis, at least ``timeline.MIN_W``
    y: int  #: its top in pixels: calls that overlap in time stack in lanes
    category: str  #: the call's category (F-1), whose colour its row's palette gives
    failed: bool
    label: str  #: name, description, duration and status, for a tooltip


class TimelineGap(TypedDict):
    """U-4: an idle stretch over a minute, drawn shortened to ``w`` and labelled; or where the
    computer's clock changed, drawn as a break of its own look, never as idle time."""

    x: float
    w: float
    label: str  #: how long it really was: ``12m idle``; or ``clock changed``
    clock: bool  #: where the clock changed (else idle time): each is drawn its own way


class TimelineTurn(TypedDict):
    """U-4: one turn on the time axis, with the idle gaps before and inside it."""

    key: str  #: ``timeline:<turn key>``: what a view asks for to draw the turn in detail
    x: float
    w: float
    height: int  #: pixels its bars need
    number: str | None  #: drawn above the turn where there is room (None in a coarse timeline)
    label: str  #: ``Turn 3 · 2m 3s · 12 tools (1 failed)``, for a tooltip
    gaps: list[TimelineGap]
    #: Its calls; None in a coarse timeline, which draws the turn as one bar of ``category``.
    bars: list[TimelineBar] | None
    category: str | None  #: the category that took most of its tools' time
    failed: bool  #: a call of the turn failed
    call: str | None  #: the key of its first call: where the static page's coarse bar links


class TimelineNode(TypedDict):
    """U-4: where the time went, under the session header, closed by default.

    A view draws ``turns`` on an axis from ``origin`` to ``origin + span`` (seconds, idle gaps
    shortened) at its full width, ``height`` pixels high. A long session's timeline is coarse:
    each turn one bar, and a turn's calls come in detail as a timeline of their own (key
    ``timeline:<turn key>``, with ``back``) when a reader zooms into it."""

    kind: Literal["timeline"]
    key: str
    open: bool
    title: str
    note: str | None  #: what a coarse timeline draws, in a word
    origin: float
    span: float
    height: int
    bar: int  #: the height of a bar, in pixels
    mark: int  #: the height of a failure's mark above the bars, in pixels
    sparkline: str  #: the text rendering's one line: how busy the tools were along the axis
    back: str | None  #: a zoomed turn's way back to the whole session
    turns: list[TimelineTurn]
    #: Wire form only (:mod:`turnfold.ondemand`): the turns are sent when opened.
    deferred: NotRequired[bool]


class NoticeNode(TypedDict):
    """L-4: one quiet notice for everything the loader skipped."""

    kind: Literal["notice"]
    key: str
    text: str
    items: list[str]  #: escaped


# --- top-level nodes ------------------------------------------------------------------------------


class UserNode(TypedDict):
    """A user's message; a long one is capped as a long output is (the rest behind
    ``more_label``, both absent when the whole message shows)."""

    kind: Literal["user"]
    key: str
    label: str
    command: str | None  #: escaped
    html: str  #: the escaped text (its first lines, when capped), then the pasted images' boxes
    more_html: NotRequired[str]  #: the escaped rest of a capped message
    more_label: NotRequired[str]  #: "Show the whole message (N more lines)"
    #: A message past ``content.PROSE_CHARS``: what the view left out (noted in ``more_html``)
    #: and the label of the widget's control that fetches the whole text; absent when whole.
    omitted_label: NotRequired[str]
    all_label: NotRequired[str]


class SystemNode(TypedDict):
    kind: Literal["system"]
    key: str
    level: str  #: ``"info"``, ``"warning"`` or ``"error"``
    html: str


class CompactionNode(TypedDict):
    kind: Literal["compaction"]
    key: str
    text: str
    summary_html: str | None


class TurnHeader(TypedDict):
    """P-7: the turn's one-line header (not a node: it has no key of its own)."""

    label: str
    duration: str | None
    count: str | None
    #: U-3: the turn's tokens and ≈ cost, with ``show_turn_usage`` on (absent otherwise: a
    #: long session's headers do not each carry a null).
    usage: NotRequired[str]
    #: U-2: why ``usage`` shows tokens with no cost, in full (its title, as the session
    #: header's ``no_cost`` part's); absent where it gives no reason.
    usage_title: NotRequired[str]
    #: Why a settled turn shows no duration (its stamps' clock changed), the status's title;
    #: absent otherwise.
    duration_title: NotRequired[str]
    text: str  #: the parts joined, for the text and HTML renderings


class ErrorNode(TypedDict):
    kind: Literal["error"]
    key: str
    html: str


class AbortNode(TypedDict):
    kind: Literal["abort"]
    key: str
    html: str


class PendingNode(TypedDict):
    kind: Literal["pending"]
    key: str
    action: str
    label: str
    html: str
    options: list[str]  #: escaped


class AnswerNode(TypedDict):
    """P-2: the turn's final answer, outside the process."""

    kind: Literal["answer"]
    key: str
    html: str
    tentative: bool
    #: "Rejected" on a rejected entry's node, else None (see the module's conventions).
    rejected_label: str | None
    #: An answer past ``content.PROSE_CHARS``: what ``html`` leaves out, and the label of the
    #: widget's control that fetches the whole text (as a capped output's); absent when whole.
    omitted_label: NotRequired[str]
    all_label: NotRequired[str]


class ProcessNode(TypedDict):
    """P-1: the one disclosure of a turn's work."""

    kind: Literal["process"]
    key: str
    open: bool
    active: bool
    children: list[ChildNode]
    #: Wire form only (:mod:`turnfold.ondemand`): the children are sent when opened.
    deferred: NotRequired[bool]
    #: Static pages only (``render_html``'s budget): the work was left out of the page.
    left_out: NotRequired[bool]


class TurnNode(TypedDict):
    kind: Literal["turn"]
    key: str
    status: str  #: ``"completed"``, ``"running"``, ``"stopped"`` or ``"failed"``
    running: bool
    header: TurnHeader
    process: ProcessNode | None
    outside: list[OutsideNode]
    answer: AnswerNode | None


# --- what a process holds -------------------------------------------------------------------------


class GroupNode(TypedDict):
    """P-4 … P-6: an activity group titled by what happened."""

    kind: Literal["group"]
    key: str
    title: str
    count: str | None
    open: bool
    active: bool
    children: list[ChildNode]


class ThinkingNode(TypedDict):
    """P-9: a reasoning row; withheld reasoning is named by ``form_label``."""

    kind: Literal["thinking"]
    key: str
    label: str
    form: str  #: ``"text"``, ``"summary"``, ``"redacted"`` or ``"encrypted"``
    form_label: str | None
    html: str
    open: bool
    streaming: bool
    #: "Rejected" on a rejected entry's node, else None (see the module's conventions).
    rejected_label: str | None


class ThinkingIndicatorNode(TypedDict):
    kind: Literal["thinking-indicator"]
    key: str
    label: str


class ProgressNode(TypedDict):
    kind: Literal["progress"]
    key: str
    html: str
    #: "Rejected" on a rejected entry's node, else None (see the module's conventions).
    rejected_label: str | None
    omitted_label: NotRequired[str]  #: as an answer's
    all_label: NotRequired[str]


class CommandNode(TypedDict):
    """A command-first row: one tool shown as the command it ran."""

    kind: Literal["command"]
    key: str
    tool: ToolNode


class SummaryNode(TypedDict):
    """F-10a: collapsible tools of a batch as one semantic line."""

    kind: Literal["summary"]
    key: str
    text: str
    active: bool
    open: bool
    tools: list[ToolNode]
    #: "Rejected" when every tool it holds is rejected (its one line stands for them), else None.
    rejected_label: str | None


class BatchNode(TypedDict):
    """F-10 … F-15: the calls of one model response."""

    kind: Literal["batch"]
    key: str
    active: bool
    rows: list[RowNode]
    memory: str | None
    label: str | None


# --- one tool -------------------------------------------------------------------------------------


class ResultNote(TypedDict):
    """A note about a result, as a catalog key and its parameters (translated in ``notes_text``)."""

    key: str
    params: dict[str, str]


class ResultView(TypedDict):
    """F-12, W-5, X-2: a capped result and the rest behind "Show N more lines"."""

    kind: str  #: the result's kind (``text``, ``diff``, ``json``, ``markdown``, …)
    html: str
    text: str
    lines: int
    truncated: bool
    more_html: NotRequired[str]
    more_lines: NotRequired[int]
    #: Lines past the cap that the view leaves out altogether (the widget can fetch them).
    omitted_lines: NotRequired[int]
    images: list[str]  #: HTML
    notes: list[ResultNote]
    notes_text: list[str]
    #: "Show N more lines" when the result is truncated, else None.
    more_label: str | None
    #: What a static rendering leaves out ("N lines not included"), else None.
    omitted_label: str | None
    #: "Show all N lines": the whole output is one request away (the widget), else None.
    all_label: str | None


class ToolFold(TypedDict):
    """What a tool row keeps behind its title (F-12, P-12); the title is a disclosure when any
    of them is set."""

    args: bool
    result: bool
    note: str | None  #: "No output recorded", for a finished call without a result
    subagent: bool


class SubagentView(TypedDict):
    """F-7: the line under a sub-agent call and the child transcript's nodes."""

    line: str | None  #: escaped
    nodes: list[TopNode]


class ToolNode(TypedDict):
    kind: Literal["tool"]
    key: str
    call_id: str  #: escaped
    name: str  #: escaped, drawn bold (F-13)
    category: str
    status: str
    status_text: str
    #: The status named on the row: None for a success, which says nothing.
    status_label: str | None
    description: str | None  #: escaped
    args: str | None  #: escaped JSON
    show_args: bool
    result: ResultView | None
    result_folded: bool
    forced_open: bool
    struck: bool
    open: bool
    fold: ToolFold
    subagent: SubagentView | None
    #: "Rejected" on a rejected entry's node, else None (see the module's conventions).
    rejected_label: str | None
    #: Wire form only (:mod:`turnfold.ondemand`): the hidden part is sent when opened.
    deferred: NotRequired[bool]
    #: On a scorer's call alone (:func:`~turnfold.process.is_scoring_call`): shown where it
    #: ran, but none of the agent's tool calls, which the headers and a corpus row count.
    scoring: NotRequired[bool]
    #: With ``scoring``: the label every renderer draws on the row, as a status label.
    scoring_label: NotRequired[str]


# --- unions and the view --------------------------------------------------------------------------

TopNode = UserNode | SystemNode | CompactionNode | TurnNode
OutsideNode = ErrorNode | AbortNode | PendingNode
#: A message's text, capped past ``content.PROSE_CHARS`` (``omitted_label``, ``all_label``).
ProseNode = UserNode | AnswerNode | ProgressNode
ChildNode = (
    GroupNode | ThinkingNode | ThinkingIndicatorNode | ProgressNode | CommandNode | BatchNode
)
RowNode = SummaryNode | ToolNode
#: Every node that has a ``kind`` and a ``key``.
AnyNode = (
    TopNode
    | OutsideNode
    | AnswerNode
    | ProcessNode
    | ChildNode
    | RowNode
    | OutcomeNode
    | NoticeNode
    | TimelineNode
)


class View(TypedDict):
    """The whole view of a transcript (:func:`turnfold.render.viewmodel.build_view_model`)."""

    schema: int
    locale: str
    mode: str  #: ``"flat"``, ``"command-first"`` or ``"fully-folded"``
    show_thinking: bool
    session: SessionNode | None
    timeline: TimelineNode | None
    outcome: OutcomeNode | None
    notice: NoticeNode | None
    nodes: list[TopNode]


#: Every class of the schema, in the order the JS declarations are written.
SCHEMA: tuple[type, ...] = (
    View, SessionNode, SessionPart, TimelineNode, TimelineTurn, TimelineGap, TimelineBar,
    OutcomeNode, NoticeNode, UserNode, SystemNode, CompactionNode,
    TurnNode, TurnHeader, ProcessNode, ErrorNode, AbortNode, PendingNode, AnswerNode, GroupNode,
    ThinkingNode, ThinkingIndicatorNode, ProgressNode, CommandNode, BatchNode, SummaryNode,
    ToolNode, ToolFold, ResultView, ResultNote, SubagentView,
)  # fmt: skip
#: The unions, by name, as the JS declarations write them.
UNIONS: dict[str, object] = {
    "TopNode": TopNode, "OutsideNode": OutsideNode, "ChildNode": ChildNode, "RowNode": RowNode,
    "AnyNode": AnyNode, "ProseNode": ProseNode,
}  # fmt: skip


# --- the JS side's declarations ------------------------------------------------------------------


def typescript() -> str:
    """The schema as TypeScript declarations (``js/src/nodes.d.ts``)."""
    from turnfold.render.declarations import typescript as declare

    return declare(SCHEMA, UNIONS, source="src/turnfold/render/nodes.py")


if __name__ == "__main__":
    sys.stdout.write(typescript())


__all__ = [
    "SCHEMA",
    "UNIONS",
    "AbortNode",
    "AnswerNode",
    "AnyNode",
    "BatchNode",
    "ChildNode",
    "CommandNode",
    "CompactionNode",
    "ErrorNode",
    "GroupNode",
    "NoticeNode",
    "OutcomeNode",
    "OutsideNode",
    "PendingNode",
    "ProcessNode",
    "ProgressNode",
    "ProseNode",
    "ResultNote",
    "ResultView",
    "RowNode",
    "SessionNode",
    "SessionPart",
    "SubagentView",
    "SummaryNode",
    "SystemNode",
    "ThinkingIndicatorNode",
    "ThinkingNode",
    "TimelineBar",
    "TimelineGap",
    "TimelineNode",
    "TimelineTurn",
    "ToolFold",
    "ToolNode",
    "TopNode",
    "TurnHeader",
    "TurnNode",
    "UserNode",
    "View",
    "typescript",
]
