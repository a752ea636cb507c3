"""The view model: a JSON-ready tree of everything a person sees (spec W-1). The JS contract.

:func:`build_view_model` turns the projection of :mod:`turnfold.process` into plain dicts with
sanitized HTML fragments (:mod:`turnfold.render.content`). The notebook view, the static HTML
page and the text rendering all draw this tree and nothing else, so they cannot disagree about
what a turn contains or how it is summarized.

Every node has a ``kind`` and a ``key``. Keys come from entry ids (never list positions), so fold
state keyed on them survives appends, mode switches and a single item becoming a group (P-10);
keys inside a sub-agent's transcript are prefixed with the key of the call that spawned it.
A node's ``open`` is its *default* fold state (P-8); a renderer that remembers the reader's
choices applies them on top. The full schema is documented in ``docs/view-model.md``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from turnfold import keys
from turnfold.batches import SummaryRow, ToolRow
from turnfold.gcpause import collector_paused
from turnfold.i18n import DEFAULT_LOCALE, catalog, localized, plural, translate
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    LoadWarning,
    PendingAction,
    SystemNotice,
    ToolCall,
    ToolResult,
    Transcript,
    UserMessage,
    Wording,
)
from turnfold.nesting import MAX_DEPTH, Cut, cut_under, notice_warnings
from turnfold.process import (
    ActivityGroup,
    BatchPiece,
    CommandRow,
    PlannedItem,
    ProcessItem,
    ProgressRow,
    ProjectionPlanner,
    Segment,
    ThinkingIndicator,
    ThinkingRow,
    Turn,
    is_scoring_call,
    plan_projection,
)
from turnfold.render.content import (
    MORE_CHARS,
    capped_prose,
    capped_text,
    escape,
    image_html,
    image_note,
    markdown_html,
    omitted_note_html,
    plain_text,
    pretty_json,
    result_view,
    thinking_html,
)
from turnfold.settings import SettingsSnapshot, snapshot_of
from turnfold.tools import display_name, format_duration
from turnfold.tools import status_text as tool_status_text
from turnfold.usage import TOKEN_FIELDS, output_not_recorded, records_tokens_per_turn, total_of

# The session's facts, price and timeline make the view's head alone: their modules are imported
# where the head (or a turn's usage) is built, which a page does beside its turns
# (turnfold.render.page), and named below for types.
if TYPE_CHECKING:  # names for types only: traitlets and the schema are not needed (issue 19)
    from turnfold.live_settings import DisplaySettings
    from turnfold.render.nodes import (
        AnswerNode,
        AnyNode,
        BatchNode,
        ChildNode,
        CommandNode,
        GroupNode,
        NoticeNode,
        OutcomeNode,
        OutsideNode,
        ProcessNode,
        ProgressNode,
        ProseNode,
        ResultNote,
        ResultView,
        RowNode,
        SessionNode,
        SessionPart,
        SubagentView,
        SummaryNode,
        ThinkingIndicatorNode,
        ThinkingNode,
        TimelineNode,
        ToolFold,
        ToolNode,
        TopNode,
        TurnHeader,
        TurnNode,
        UserNode,
        View,
    )
    from turnfold.session import SessionFacts
    from turnfold.timeline import Timeline

SCHEMA_VERSION = 1
#: A user's message longer than this many lines, or characters, shows its first lines and the
#: rest behind "Show the whole message": 200 pasted lines must not fill the screen above the
#: turn they asked for (the caps of a tool's output, F-12, on prose).
USER_LINES = 12
USER_CHARS = 2_000
#: Tool statuses during which no output is expected yet, so "no output recorded" is not said.
_ACTIVE_STATUSES = frozenset({"pending", "executing", "confirming"})


_Built = TypeVar("_Built")


class _Builds(Generic[_Built]):
    """What the last build and this one made, by key: the next build sees both (a build that
    failed midway kept some of this one's), and nothing older."""

    def __init__(self) -> None:
        self._last: dict[str, _Built] = {}
        self._now: dict[str, _Built] = {}

    def get(self, key: str) -> _Built | None:
        known = self._last.get(key)
        return known if known is not None else self._now.get(key)

    def put(self, key: str, made: _Built) -> None:
        self._now[key] = made

    def drop(self, key: str) -> None:
        self._last.pop(key, None)
        self._now.pop(key, None)

    def next_build(self) -> None:
        self._last, self._now = self._now, {}


class NodeReuse:
    """The nodes built for a turn's process items last time, by item (Q-3).

    A growing turn's projection hands back the very item objects it made before for what did
    not change (:class:`turnfold.process.TurnMemo`); their nodes are handed back the same way,
    so the nodes of a followed run's earlier steps are built once, and the transport's diff
    passes over them by identity. Only the last build's nodes are kept.

    A sub-agent's transcript grows on its own, under a call that does not change: each one is
    followed by a :class:`SubagentReuse`, which builds it at the cost of what changed in it and
    calls ``on_change`` with its call's id when it changes, so the call's turn is built again.
    """

    def __init__(self, on_change: Callable[[str], None] | None = None) -> None:
        self._items: _Builds[tuple[object, ChildNode]] = _Builds()
        #: A tool's node by its call's id, with the call and the row it was built from: a
        #: batch that grows (calls of one response arriving one by one) is a new item every
        #: time, but its earlier rows are not.
        self._tools: _Builds[tuple[ToolCall, ToolRow, ToolNode]] = _Builds()
        #: Every sub-agent followed so far, by its call's id. Kept for as long as this object
        #: (a widget makes a new one when its settings change), whether or not the last build
        #: drew its call: a change inside it must still reach the call's turn.
        self._subagents: dict[str, SubagentReuse] = {}
        self.on_change = on_change

    def changed(self, entry_ids: Iterable[str]) -> None:
        """These entries changed in place since the last build: their tools are built anew."""
        for entry_id in entry_ids:
            self._tools.drop(entry_id)

    def tool(self, call: ToolCall, row: ToolRow, build: Callable[[], ToolNode]) -> ToolNode:
        """The node of ``call`` on ``row``: the one built last time if the call is the same,
        unchanged (:meth:`changed`), holds no sub-agent (whose transcript grows without its
        call changing) and its row is equal; else ``build()``."""
        known = self._tools.get(call.id)
        if known is not None and known[0] is call and known[1] == row and call.subagent is None:
            node = known[2]
        else:
            node = build()
        self._tools.put(call.id, (call, row, node))
        return node

    def node(self, item: ProcessItem, build: Callable[[], ChildNode]) -> ChildNode:
        """The node of ``item``: the one built for this very object last time, or ``build()``."""
        known = self._items.get(item.key)
        node = known[1] if known is not None and known[0] is item else build()
        self._items.put(item.key, (item, node))
        return node

    def subagent_nodes(
        self, call: ToolCall, child: Transcript, prefix: str, options: _Options
    ) -> list[TopNode]:
        """The nodes of ``call``'s sub-agent transcript ``child``, built at the cost of what
        changed in it since the last build."""
        known = self._subagents.get(call.id)
        if known is None or known.transcript is not child or known.prefix != prefix:
            known = SubagentReuse(child, prefix, call.id, self.on_change)
            self._subagents[call.id] = known
        return known.nodes(options)

    def next_build(self) -> None:
        """A build is done: the next one reuses what this one built, and nothing older."""
        self._items.next_build()
        self._tools.next_build()


class SubagentReuse:
    """A sub-agent's transcript as a live view follows it (Q-3): planned by a
    :class:`~turnfold.process.ProjectionPlanner` and built like the widget's own transcript,
    each build re-planning and rebuilding only the turns that show a changed entry.

    It observes the transcript (weakly: a reuse no longer kept stops observing), collects the
    ids of what changed for the next build, and tells ``on_change`` the id of the call the
    sub-agent runs under. A sub-agent of the sub-agent tells this one the same way.
    """

    def __init__(
        self,
        transcript: Transcript,
        prefix: str,
        call_id: str,
        on_change: Callable[[str], None] | None,
    ) -> None:
        self.transcript = transcript
        self.prefix = prefix
        self._call_id = call_id
        self._on_change = on_change
        self._lock = threading.Lock()
        self._dirty: set[str] = set()  # ids of the entries changed since the last build
        own = weakref.ref(self)  # held weakly by what it observes, so it can be let go

        def changed(entry_id: str) -> None:
            reuse = own()
            if reuse is not None:
                reuse._changed(entry_id)

        self._planner = ProjectionPlanner(transcript, prefix)
        self._reuse = NodeReuse(changed)
        self._nodes: dict[str, TopNode] = {}
        self._nodes_per_turn = True  # the tokens_per_turn they were built with
        weakref.finalize(self, transcript.observe(lambda change: changed(change.entry.id)))

    def _changed(self, entry_id: str) -> None:
        """An entry of this transcript changed (or a sub-agent under it): build it again."""
        with self._lock:
            self._dirty.add(entry_id)
        if self._on_change is not None:
            self._on_change(self._call_id)

    def nodes(self, options: _Options) -> list[TopNode]:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        self._reuse.changed(dirty)
        items, fresh = self._planner.plan(options.settings, running=None, changed=dirty)
        inner = replace(_drawing(self.transcript, options), reuse=self._reuse)
        # Its parent's session total arriving can show that its turns' tokens are not recorded
        # per turn either (_drawing): the turns built before then say so too.
        last = self._nodes if inner.tokens_per_turn == self._nodes_per_turn else {}
        built = rebuilt(
            items,
            fresh,
            last,
            lambda item: _planned(item, self.transcript, inner, self.prefix),
        )
        self._reuse.next_build()
        self._nodes, self._nodes_per_turn = built, inner.tokens_per_turn
        return list(built.values())


def rebuilt(
    items: Sequence[PlannedItem],
    fresh: set[str],
    last: Mapping[str, TopNode],
    build: Callable[[PlannedItem], TopNode],
) -> dict[str, TopNode]:
    """The top-level nodes of ``items`` by key, in their order (Q-3): the node of the last
    build (``last``) again, unless its item was planned anew (``fresh``, what
    :meth:`~turnfold.process.ProjectionPlanner.plan` says) or runs; ``build`` makes the rest."""
    built: dict[str, TopNode] = {}
    for item in items:
        node = last.get(item.key)
        if node is None or item.key in fresh or item.running:
            node = build(item)
        built[item.key] = node
    return built


@dataclass(frozen=True)
class _Options:
    """What every node of one view is built with."""

    settings: SettingsSnapshot
    more_chars: int | None
    #: The nodes of the last build, reused for the same process items (a live widget's).
    reuse: NodeReuse | None = None
    #: Whether the transcript being drawn records its tokens per turn (:func:`_drawing`).
    tokens_per_turn: bool = True
    #: How many sub-agents deep the transcript being drawn nests (0: the top-level one).
    depth: int = 0


def _drawing(transcript: Transcript, options: _Options) -> _Options:
    """``options`` for the turns of ``transcript``: with ``show_turn_usage``, whether its
    source records tokens per turn (:func:`~turnfold.usage.records_tokens_per_turn`, a walk
    over its entries, done once per view). A sub-agent's transcript came from its parent's
    source: where the parent's turns do not record their tokens, its responses lack the same
    counts (Claude Code's stream-json writes no output tokens for either), though it records
    no total to tell."""
    if not options.settings.show_turn_usage or not options.tokens_per_turn:
        return options
    if records_tokens_per_turn(transcript):
        return options
    return replace(options, tokens_per_turn=False)


def build_view_model(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    running: bool | None = None,
    more_chars: int | None = MORE_CHARS,
    timeline: Timeline | None = None,
) -> View:
    """The whole view of ``transcript`` under ``settings`` as JSON-ready dicts.

    ``more_chars`` caps how much of each long output's hidden rest is rendered (the rest is
    counted as ``omitted_lines``); ``None`` renders every output whole. ``timeline`` lays out
    the timeline (a lazy one, as the widget's, gives only its closed header).
    """
    # A view of a long session is millions of new, long-lived objects, like a load.
    with collector_paused():
        plan = plan_view(
            transcript, settings, running=running, more_chars=more_chars, timeline=timeline
        )
        return plan.view(plan.nodes(plan.items))


@dataclass(frozen=True)
class ViewHead:
    """The fields of a view besides its ``nodes``."""

    locale: str
    mode: str
    show_thinking: bool
    session: SessionNode | None
    timeline: TimelineNode | None
    outcome: OutcomeNode | None
    notice: NoticeNode | None


@dataclass(frozen=True)
class ViewPlan:
    """A view model before its nodes are built: the projection and what building needs.

    The top-level nodes are independent of each other, so a renderer may build them in any
    order, in pieces or in another process (:mod:`turnfold.render.page`), and join the pieces:
    ``{**plan.head, "nodes": plan.nodes(plan.items)}`` is :func:`build_view_model`'s result.
    """

    items: list[PlannedItem]
    """The projection still to do: one item per top-level node."""
    options: _Options
    transcript: Transcript
    facts: SessionFacts | None = None
    """The session's facts when the caller keeps them (else counted for :attr:`head`)."""
    timeline: Timeline | None = None
    """The timeline that keeps its turns' layout (else a fresh one, for :attr:`head`)."""

    @cached_property
    def head(self) -> ViewHead:
        """The view's fields besides ``nodes``, computed when first asked for: the session's
        facts, its price and its timeline are the longest single piece of a page (a walk over
        every entry; a fifth of a second more when the price table must be imported), which a
        page builds beside its turns (:mod:`turnfold.render.page`)."""
        # Imported here: only the head walks the session for its facts, price and timeline, and
        # a page builds it beside its turns (turnfold.render.page; issue 19).
        from turnfold.session import session_facts
        from turnfold.timeline import Timeline

        transcript, items, snapshot = self.transcript, self.items, self.options.settings
        facts = self.facts
        if facts is None:
            facts = session_facts(transcript, turns=sum(1 for i in items if i.segment is not None))
        return ViewHead(
            locale=snapshot.locale,
            mode=snapshot.transcript_display_mode,
            show_thinking=snapshot.show_thinking,
            session=session_header(transcript, snapshot.locale, facts),
            timeline=(self.timeline or Timeline()).node(items, snapshot.locale, facts),
            outcome=outcome_badge(transcript.metadata, snapshot.locale),
            notice=_warnings_notice(transcript, snapshot.locale, _cuts(transcript, items)),
        )

    def nodes(self, items: list[PlannedItem], reuse: NodeReuse | None = None) -> list[TopNode]:
        """The top-level nodes of ``items`` (a slice of :attr:`items`); ``reuse``: the nodes
        of the last build, handed back for the process items that are the same objects."""
        options = self.options if reuse is None else replace(self.options, reuse=reuse)
        return [_planned(item, self.transcript, options, "") for item in items]

    def view(self, nodes: list[TopNode]) -> View:
        """The view of these top-level nodes, in the view's key order."""
        head = self.head
        return {
            "schema": SCHEMA_VERSION,
            "locale": head.locale,
            "mode": head.mode,
            "show_thinking": head.show_thinking,
            "session": head.session,
            "timeline": head.timeline,
            "outcome": head.outcome,
            "notice": head.notice,
            "nodes": nodes,
        }


def plan_view(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    running: bool | None = None,
    more_chars: int | None = MORE_CHARS,
    items: list[PlannedItem] | None = None,
    facts: SessionFacts | None = None,
    timeline: Timeline | None = None,
    head: bool = True,
) -> ViewPlan:
    """The head of ``transcript``'s view model and its projection, still to be done.

    ``items`` are the planned items when the caller planned them already (a widget following a
    growing transcript plans with a :class:`turnfold.process.ProjectionPlanner`), ``facts``
    the session's facts when it keeps them (:class:`turnfold.session.SessionTally`), and
    ``timeline`` the :class:`~turnfold.timeline.Timeline` that keeps its turns' layout.
    ``head=False`` leaves :attr:`ViewPlan.head` to be computed when first asked for; by default
    it is computed now, before any node, as a caller that keeps a timeline or a tally expects.
    """
    snapshot = snapshot_of(settings)
    if items is None:
        items = plan_projection(transcript, snapshot, running=running)
    options = _drawing(transcript, _Options(snapshot, more_chars))
    plan = ViewPlan(items, options, transcript, facts, timeline)
    if head:
        plan.head  # noqa: B018  # computed now, cached on the plan
    return plan


def _nodes(
    transcript: Transcript, options: _Options, *, running: bool | None, prefix: str
) -> list[TopNode]:
    planned = plan_projection(transcript, options.settings, running=running, key_prefix=prefix)
    options = _drawing(transcript, options)
    return [_planned(item, transcript, options, prefix) for item in planned]


def _planned(item: PlannedItem, transcript: Transcript, options: _Options, prefix: str) -> TopNode:
    """The node of one planned item of ``transcript``."""
    projected = item.project()
    if not isinstance(projected, Turn):
        return _top_level(projected, options, prefix)
    usage = None
    if options.settings.show_turn_usage and item.segment is not None:
        usage = turn_usage(
            transcript, item.segment, options.settings.locale, per_turn=options.tokens_per_turn
        )
    return _turn(projected, options, usage)


def turn_usage(
    transcript: Transcript, segment: Segment, locale: str, *, per_turn: bool = True
) -> tuple[str, str | None] | None:
    """U-3: a turn's tokens and ≈ cost, for its header (``show_turn_usage``): the numbers the
    corpus's ``turns()`` table carries (:func:`turnfold.cost.spend_of` at the turn's start);
    None when the turn records no tokens. Tokens with no cost say why, as the session's header
    does (its ``no_cost`` part) and the turn's row (``no_cost``), from the same decision: the
    text says it in a few words, and the title, second, in full, as the session header's
    part's title does (None where there is no reason to give).

    ``per_turn=False``, for a source that records tokens for the session only
    (:func:`~turnfold.usage.records_tokens_per_turn`), says so, as a comparison's pair does:
    what its responses record would be a part of the turn's tokens shown as the whole (U-1),
    and a cost of that part an underestimate.
    """
    if not per_turn:
        return translate("session.tokens_not_per_turn", locale), None
    from turnfold.cost import format_usd, spend_of  # as the head's (see ViewPlan.head)
    from turnfold.session import utc

    everything = ([segment.user] if segment.user else []) + segment.entries
    moments = [moment for entry in everything if (moment := utc(entry.timestamp)) is not None]
    spent = spend_of(transcript, everything, min(moments, default=None))
    total = total_of(spent.tokens)
    if not total:
        return None
    text = translate("session.tokens", locale, tokens=compact_count(total))
    if spent.cost is not None:
        return f"{text} · ≈ ${format_usd(spent.cost.usd)}", None
    if spent.no_cost is not None:  # U-2: a model no price table knows, output not recorded…
        # A model's name in the reason is the transcript's: its controls made visible,
        # as the session header's are, for the widget sets it as text.
        why = spent.no_cost
        return f"{text} · {plain_text(why.text_in(locale))}", plain_text(why.title_in(locale))
    return text, None


def session_header(
    transcript: Transcript, locale: str, facts: SessionFacts | None = None
) -> SessionNode | None:
    """U-3: the session's facts in one line above the turns; None when it records none.

    ``facts`` are :func:`~turnfold.session.session_facts` when the caller keeps them already
    (a live widget keeps a :class:`~turnfold.session.SessionTally`)."""
    from turnfold.cost import format_usd, no_cost_said  # as the head's (see ViewPlan.head)
    from turnfold.session import session_facts, short_model

    if facts is None:
        facts = session_facts(transcript)
    parts: list[SessionPart] = []

    def part(name: str, text: str, title: str | None = None) -> None:
        # The agent's and the model's names are the transcript's (spec X-1): the widget sets
        # them as text, so a bidi override or control in one must already be made visible here,
        # as the page and the terminal show it, or it reorders the whole header line.
        parts.append({"name": name, "text": plain_text(text),
                      "title": plain_text(title) if title else None})  # fmt: skip

    if facts.agent:
        part("agent", facts.agent)
    if facts.models:
        shown = ", ".join(short_model(m) for m in facts.models)
        full = ", ".join(facts.models)
        part("model", shown, full if full != shown else None)
    if facts.started is not None:
        # The reader's local time, as a clock on the wall; the exact UTC moment in the title.
        local = facts.started.astimezone()
        exact = facts.started.strftime("%Y-%m-%d %H:%M:%S")
        part("started", local.strftime("%Y-%m-%d %H:%M"),
             translate("session.started_title", locale, started=exact))  # fmt: skip
    if facts.duration_s:
        part("duration", format_duration(facts.duration_s * 1000, hide_trailing_zeros=True))
    if facts.turns:
        part("turns", plural("session.turns", facts.turns, locale))
    if facts.tool_calls:
        text = plural("session.tools", facts.tool_calls, locale)
        if facts.failed_tools:
            text = translate("session.failed", locale, tools=text, count=facts.failed_tools)
        part("tools", text)
    total = facts.total_tokens
    if total:
        tokens = facts.tokens
        # U-1: a count the source does not record reads so, never as 0.
        unknown = translate("session.tokens_not_recorded", locale)
        named = {
            name.removesuffix("_tokens"): f"{tokens[name]:,}" if name in tokens else unknown
            for name in TOKEN_FIELDS
        }
        breakdown = translate(
            "session.tokens_title", locale, input=named["input"], output=named["output"],
            cache_read=named["cache_read"], cache_write=named["cache_write"],
        )  # fmt: skip
        # U-1: the total says what it includes beyond the responses shown: what the sub-agents
        # spent, and the harness's own side requests, which are in no turn.
        key = "session.tokens"
        for name, spent in (("subagents", total_of(facts.subagent_tokens)),
                            ("side_requests", total_of(facts.side_request_tokens))):  # fmt: skip
            if spent:
                key = f"{key}_{name}"
                breakdown = translate(
                    "list.clauses", locale, first=breakdown,
                    second=translate(f"session.tokens_{name}_title", locale, tokens=f"{spent:,}"),
                )  # fmt: skip
        text = translate(key, locale, tokens=compact_count(total))
        if output_not_recorded(tokens) or transcript.metadata.get("usage_lower_bound") is True:
            # The input alone, or a total holding some responses' input without their output
            # (a Claude Code run stopped after others: usage_lower_bound): a lower bound, marked
            # as one, as an estimated cost is marked ≈.
            text = f"≥ {text}"
        part("tokens", text, breakdown)
    so_far = total_of(facts.session_usage)
    if so_far:  # U-1: not this run's tokens, and labelled so (facts.session_usage says when)
        part("tokens_so_far",
             translate("session.tokens_so_far", locale, tokens=compact_count(so_far)),
             translate("session.tokens_so_far_title", locale, tokens=f"{so_far:,}"))  # fmt: skip
    failed = total_of(facts.failed_attempts_tokens)
    if failed:  # U-1: spent, but not in the run's own total (the source's), and labelled so
        key = "session.tokens_failed_attempts"
        part("tokens_failed_attempts",
             translate(key, locale, tokens=compact_count(failed)),
             translate(f"{key}_title", locale, tokens=f"{failed:,}"))  # fmt: skip
    if facts.cost is not None:
        cost = format_usd(facts.cost.usd)
        if facts.cost.recorded:
            part("cost", f"${cost}", translate("session.cost_recorded", locale, cost=cost))
        else:  # U-2: an estimate reads as one, its price table in the title
            part("cost", f"≈ ${cost}", facts.cost.source_in(locale))
    elif (why := no_cost_said(facts.tokens, facts.no_cost)) is not None:
        # U-2: tokens shown with no cost say why, as turnfold.cost decided it (a model no price
        # table knows, a total of several models not split), not leave the reader to wonder;
        # a part of its own, as a "cost" part is always a price.
        part("no_cost", why.text_in(locale), why.title_in(locale))
    if not parts:
        return None
    return {
        "kind": "session",
        "key": "session",
        "text": " · ".join(p["text"] for p in parts),
        "parts": parts,
    }


def compact_count(count: int) -> str:
    """A count as a header shows it: ``950``, ``48.2k``, ``1.3M``.

    >>> compact_count(950), compact_count(48_213), compact_count(1_310_000)
    ('950', '48.2k', '1.3M')
    """
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


#: The outcomes every harness's loader normalises to (spec H-6); others are named as written.
OUTCOMES = ("pass", "fail", "error", "incomplete")
#: At most this many scorers are named in the badge (an eval may have dozens).
_SCORERS_SHOWN = 4


def outcome_badge(metadata: Mapping[str, Any], locale: str) -> OutcomeNode | None:
    """H-6: the run's outcome and score, shown beside the transcript's title, from the
    standard metadata keys (``outcome``, ``score``); None when neither is recorded."""
    outcome = metadata.get("outcome")
    parts = []
    if isinstance(outcome, str) and outcome:
        known = outcome in OUTCOMES
        parts.append(
            translate(f"outcome.{outcome}", locale)
            if known
            else translate("outcome.other", locale, outcome=outcome)
        )
    score = _score_text(metadata.get("score"))
    if score:
        parts.append(translate("outcome.score", locale, score=score))
    if isinstance(metadata.get("invalidation"), Mapping):
        # Marked invalid after it ran (an Inspect sample): the outcome stays as scored (H-6),
        # and the badge says it no longer counts; the transcript's notice says who and why.
        parts.append(translate("outcome.invalidated", locale))
    if not parts:  # the session's cost is in its header (U-3), not repeated here
        return None
    status = outcome if isinstance(outcome, str) and outcome in OUTCOMES else "other"
    # The source's own words: set as text by the JS and the comparison's text/plain.
    text = plain_text(" · ".join(parts))
    return {"kind": "outcome", "key": "outcome", "status": status, "text": text}


def _score_text(score: Any) -> str:
    """A score (a number, a grade such as Inspect's ``C``, or one per scorer) as short text."""
    if isinstance(score, bool) or score is None:
        return ""
    if isinstance(score, float):
        return f"{score:.4g}"
    if isinstance(score, (int, str)):
        return str(score)[:40]
    if isinstance(score, Mapping):
        shown = list(score.items())[:_SCORERS_SHOWN]
        named = [f"{name} {_score_text(value)}".strip() for name, value in shown]
        return ", ".join(named) + (", …" if len(score) > _SCORERS_SHOWN else "")
    return ""


#: What the view leaves out of each turn's sub-agents and which it draws
#: (:class:`~turnfold.nesting.Cut`), by the id of the transcript, with each turn's planned item
#: (weakly) by its key: a widget's head walks only the sub-agents of the turns its projection
#: planned anew (Q-3), as its timeline lays out only those. A change in a sub-agent it draws
#: plans its turn anew; one deeper does not.
_CUTS: dict[int, tuple[weakref.ref[Transcript], dict[str, tuple[weakref.ref[PlannedItem], Cut]]]]
_CUTS = {}


def _cuts(transcript: Transcript, items: Sequence[PlannedItem]) -> list[Cut]:
    """What the view of ``transcript`` (planned as ``items``) leaves out of sub-agents nested
    past :data:`~turnfold.nesting.MAX_DEPTH` and which sub-agents it draws, turn by turn."""
    known = _CUTS.get(id(transcript))
    last = known[1] if known is not None and known[0]() is transcript else {}
    cuts: dict[str, tuple[weakref.ref[PlannedItem], Cut]] = {}
    for item in items:
        if item.segment is None:
            continue  # a prompt, a notice or a compaction of its own runs nothing
        kept = last.get(item.key)
        if kept is not None and kept[0]() is item:
            cuts[item.key] = kept
        else:
            cuts[item.key] = (weakref.ref(item), cut_under(item.segment.entries, transcript))
    if known is None or known[0]() is not transcript:
        weakref.finalize(transcript, _CUTS.pop, id(transcript), None)
    _CUTS[id(transcript)] = (weakref.ref(transcript), cuts)
    return [cut for _, cut in cuts.values()]


def _warnings_notice(
    transcript: Transcript, locale: str, cuts: Sequence[Cut] = ()
) -> NoticeNode | None:
    """One quiet notice for everything the loader skipped (L-4): first what the view leaves
    out of sub-agents nested too deep (:func:`~turnfold.nesting.cut_warning`; the loader's list
    may end on a count of the warnings it did not list), then the top-level transcript's own
    warnings, then those of each sub-agent the view draws, saying whose
    (:func:`~turnfold.nesting.subagent_warnings`): a bad line of a sub-agent's file is a record
    dropped from this view as much as one of the top's."""
    own, nested, count = notice_warnings(transcript, cuts)
    if not own and not nested:
        return None
    # Only here: a transcript with warnings was loaded, so the loaders are imported already.
    from turnfold.formats.source import MAX_LISTED_WARNINGS, UnlistedWarnings

    items = [escape(str(_published(w))) for w in own]
    listed = sum(type(w) is not UnlistedWarnings for w in own)
    # Each sub-agent's list is bounded by its source, not their sum: past as many as one source
    # lists, the sub-agents' warnings are only counted, in one last item.
    room, unlisted = MAX_LISTED_WARNINGS, 0
    for who, warnings in nested:
        for warning in warnings:
            if not room:
                unlisted += warning.count if type(warning) is UnlistedWarnings else 1
                continue
            said = str(_published(warning))
            items.append(escape(translate("warnings.subagent", locale, agent=who, warning=said)))
            room, listed = room - 1, listed + (type(warning) is not UnlistedWarnings)
    if unlisted:
        items.append(escape(str(UnlistedWarnings(reason="", count=unlisted))))
    # Past the listed ones a load only counts its warnings: the count is all of them (L-4).
    text = (
        plural("warnings.skipped", count, locale)
        if listed == count
        else plural("warnings.skipped_listed", count, locale, listed=listed)
    )
    return {"kind": "notice", "key": "warnings", "text": text, "items": items}


def _published(warning: LoadWarning) -> LoadWarning:
    """The warning naming its file, never the file's absolute path: pages get published."""
    if warning.source is None or warning.source.startswith("<"):
        return warning
    return replace(warning, source=PurePath(warning.source).name)


def _pasted_images(images: list[ImageData], locale: str) -> str:
    """Images pasted into a prompt, or returned by the model with its text, shown the way a
    tool result's images are (issue 21.4): after the text, each in its own box, or a note."""
    boxes = []
    for image in images:
        shown = image_html(image)
        if shown is not None:
            boxes.append(f'<div class="tf-image-box">{shown}</div>')
        else:
            note = image_note(image)
            text = translate(note["key"], locale, **note["params"])
            boxes.append(f'<div class="tf-note">{escape(text)}</div>')
    return "".join(boxes)


def _top_level(
    item: UserMessage | SystemNotice | CompactionBoundary, options: _Options, prefix: str
) -> TopNode:
    locale = options.settings.locale
    if isinstance(item, UserMessage):
        return _user(item, locale, prefix)
    if isinstance(item, SystemNotice):
        notice, omitted = capped_prose(_worded(item.text, item.wording, locale))
        return {"kind": "system", "key": keys.entry(item.id, prefix), "level": item.level,
                "html": escape(notice) + omitted_note_html(omitted, locale)}  # fmt: skip
    summary, omitted = capped_prose(item.summary or "")
    return {
        "kind": "compaction",
        "key": keys.entry(item.id, prefix),
        "text": translate("turn.compacted", locale),
        "summary_html": markdown_html(summary) + omitted_note_html(omitted, locale)
        if summary
        else None,
    }


def _worded(text: str, wording: Wording | None, locale: str) -> str:
    """An entry's text in the view's language where a reader wrote it (:class:`Wording`);
    the source's own text, as it is."""
    return text if wording is None else localized(text, wording.key, wording.params, locale)


def _user(item: UserMessage, locale: str, prefix: str) -> UserNode:
    """A user's message, a long one capped (:data:`USER_LINES`) with the rest one click away;
    where the source does not record a turn's prompt (``meta["prompt_not_recorded"]``,
    :func:`~turnfold.formats.common.prompt_not_recorded`), a muted note says so, as a note
    says what an image box cannot show."""
    text, omitted = capped_prose(item.text)
    head, rest, more = capped_text(text, USER_LINES, USER_CHARS)
    html = head + _pasted_images(item.images, locale)
    if item.meta.get("prompt_not_recorded") is True:
        note = escape(translate(_prompt_note(item.meta), locale))
        html += f'<div class="tf-note">{note}</div>'
    node: UserNode = {
        "kind": "user",
        "key": keys.entry(item.id, prefix),
        "label": translate("user.label", locale),
        "command": escape(item.command) if item.command else None,
        "html": html,
    }
    if rest is not None:
        node["more_html"] = rest + omitted_note_html(omitted, locale)
        node["more_label"] = _counted("user.show_more", more, locale)
    _say_omitted(node, omitted, len(item.text), locale)
    return node


def _prompt_note(meta: Mapping[str, Any]) -> str:
    """The note of a prompt not recorded: a reader's own, which says why and how to keep it
    (``meta["prompt_note"]``, a catalog key of this family), else the plain one. A key a
    file names is only ever one of the family's phrases."""
    key = meta.get("prompt_note")
    family = "user.prompt_not_recorded."
    if isinstance(key, str) and key.startswith(family) and key in catalog(DEFAULT_LOCALE):
        return key
    return "user.prompt_not_recorded"


def _prose_html(text: str, node: ProseNode, locale: str) -> str:
    """A message's text as Markdown HTML, cut past :data:`~turnfold.render.content.PROSE_CHARS`
    with ``node`` saying what was left out (see :func:`_say_omitted`)."""
    shown, omitted = capped_prose(text)
    _say_omitted(node, omitted, len(text), locale)
    return markdown_html(shown)


def _say_omitted(node: ProseNode, omitted: int, whole: int, locale: str) -> None:
    """Name what a capped message leaves out (X-2): the static renderings print
    ``omitted_label``; the widget offers ``all_label``, which fetches the whole text."""
    if omitted:
        node["omitted_label"] = _counted("text.not_included", omitted, locale)
        node["all_label"] = _counted("text.show_all", whole, locale)


def _turn(turn: Turn, options: _Options, usage: tuple[str, str | None] | None) -> TurnNode:
    header = turn.header
    count = header.count_text if header.tool_count else None
    usage_text, usage_title = usage or (None, None)
    parts = [header.label, header.duration, count, usage_text]
    process = turn.process
    answer = turn.answer
    process_node: ProcessNode | None = None
    if process is not None:
        process_node = {
            "kind": "process",
            "key": process.key,
            "open": process.open,
            "active": process.active,
            "children": [_child(item, options) for item in process.items],
        }
    answer_node: AnswerNode | None = None
    if answer is not None:
        locale = options.settings.locale
        answer_node = {
            "kind": "answer",
            "key": _entry_key(turn.key, answer.id),
            "html": "",
            "tentative": turn.tentative,
            "rejected_label": _rejected_mark(answer, locale),
        }
        answer_node["html"] = _prose_html(answer.text, answer_node, locale) + _pasted_images(
            answer.images, locale
        )
    header_node: TurnHeader = {
        "label": header.label,
        "duration": header.duration,
        "count": count,
        "text": " · ".join(p for p in parts if p),
    }
    if usage_text:
        header_node["usage"] = usage_text
    if usage_text and usage_title:
        header_node["usage_title"] = usage_title
    if header.duration_note:
        header_node["duration_title"] = header.duration_note
    return {
        "kind": "turn",
        "key": turn.key,
        "status": header.status,
        "running": turn.running,
        "header": header_node,
        "process": process_node,
        "outside": [_outside(entry, turn.key, options.settings.locale) for entry in turn.outside],
        "answer": answer_node,
    }


def _entry_key(turn_key: str, entry_id: str) -> str:
    """An entry's key under the same sub-agent prefix as its turn's key."""
    return keys.entry(entry_id, keys.prefix_of(turn_key))


def _outside(
    entry: AssistantError | AbortMarker | PendingAction, turn_key: str, locale: str
) -> OutsideNode:
    key = _entry_key(turn_key, entry.id)
    if isinstance(entry, AssistantError):
        message = _worded(entry.message, entry.wording, locale)
        return {"kind": "error", "key": key, "html": escape(message)}
    if isinstance(entry, AbortMarker):
        text = translate("turn.aborted", locale)
        reason = _worded(entry.reason, entry.wording, locale) if entry.reason else text
        return {"kind": "abort", "key": key, "html": escape(reason)}
    return {
        "kind": "pending",
        "key": key,
        "action": entry.action,
        "label": translate(f"pending.{entry.action}", locale),
        "html": escape(entry.text),
        "options": [escape(option) for option in entry.options],
    }


def _child(item: ProcessItem, options: _Options) -> ChildNode:
    """The node of one item of a turn's process, drawn by its kind's builder."""
    build = _CHILDREN.get(type(item))
    if build is None:
        raise TypeError(f"unknown process item {item!r}")
    if options.reuse is not None:
        return options.reuse.node(item, lambda: build(item, options))
    return build(item, options)


def _group(item: ActivityGroup, options: _Options) -> GroupNode:
    return {
        "kind": "group",
        "key": item.key,
        "title": item.title,
        "count": item.count_text,
        "open": item.open,
        "active": item.active,
        "children": [_child(i, options) for i in item.items],
    }


def _thinking(item: ThinkingRow, options: _Options) -> ThinkingNode:
    locale, entry = options.settings.locale, item.entry
    node: ThinkingNode = {
        "kind": "thinking",
        "key": item.key,
        "label": translate("thinking.label", locale),
        "form": entry.form,
        # Withheld reasoning names itself on the row, never an empty fold (P-9).
        "form_label": translate(f"thinking.{entry.form}", locale)
        if entry.form in ("redacted", "encrypted")
        else None,
        "html": thinking_html(entry, locale),
        "open": item.open,
        "streaming": entry.streaming,
        "rejected_label": _rejected_mark(entry, locale),
    }
    return node


def _indicator(item: ThinkingIndicator, options: _Options) -> ThinkingIndicatorNode:
    label = translate("thinking.label", options.settings.locale)
    return {"kind": "thinking-indicator", "key": item.key, "label": label}


def _progress(item: ProgressRow, options: _Options) -> ProgressNode:
    locale = options.settings.locale
    images = _pasted_images(item.entry.images, locale)
    node: ProgressNode = {
        "kind": "progress",
        "key": item.key,
        "html": "",
        "rejected_label": _rejected_mark(item.entry, locale),
    }
    node["html"] = _prose_html(item.entry.text, node, locale) + images
    return node


def _command(item: CommandRow, options: _Options) -> CommandNode:
    tool_key = keys.entry(item.row.entry_id, keys.prefix_of(item.key))  # the entry's own key
    return {"kind": "command", "key": item.key,
            "tool": _reused_tool(item.call, item.row, tool_key, options)}  # fmt: skip


def _batch(piece: BatchPiece, options: _Options) -> BatchNode:
    prefix = keys.prefix_of(piece.key)
    calls = {c.id: c for c in piece.calls}
    rows: list[RowNode] = []

    def tool(row: ToolRow) -> ToolNode:
        return _reused_tool(calls[row.entry_id], row, keys.entry(row.entry_id, prefix), options)

    for item in piece.items:
        if isinstance(item, SummaryRow):
            summary: SummaryNode = {
                "kind": "summary",
                "key": keys.summary(item.rows[0].entry_id, prefix),
                "text": item.text,
                "active": item.active,
                "open": False,  # P-8: no leaf payload opens by default
                "tools": [tool(r) for r in item.rows],
                # Its one line stands for its tools: rejected when they all are (the calls of
                # one rejected reply), else the rejected ones say so when it is opened.
                "rejected_label": _rejected_label(options.settings.locale)
                if all(_rejected(calls[r.entry_id]) for r in item.rows)
                else None,
            }
            rows.append(summary)
        else:
            rows.append(tool(item))
    return {
        "kind": "batch",
        "key": piece.key,
        "active": piece.active,
        "rows": rows,
        "memory": piece.memory_badges,
        # The fast model's label, or a file's: the JS sets it as text, so a control or
        # bidi character in it is made visible here.
        "label": plain_text(piece.label_line) if piece.label_line else None,
    }


#: The builder of each kind of process item (:data:`turnfold.process.ProcessItem`).
_CHILDREN: dict[type, Callable[[Any, _Options], ChildNode]] = {
    ActivityGroup: _group,
    ThinkingRow: _thinking,
    ThinkingIndicator: _indicator,
    ProgressRow: _progress,
    CommandRow: _command,
    BatchPiece: _batch,
}


def _rejected(entry: Entry) -> bool:
    """Whether the source marks ``entry`` rejected (``meta["rejected"]``): a preference pair's
    rejected reply, a response the harness refused. It is shown, but is not what happened."""
    return entry.meta.get("rejected") is True


def _rejected_label(locale: str) -> str:
    return translate("entry.rejected", locale)


def _rejected_mark(entry: Entry, locale: str) -> str | None:
    """The label of a rejected entry's node, which every renderer draws beside it, muted: the
    one place a rejected reply is told from an ordinary one; None for any other entry."""
    return _rejected_label(locale) if _rejected(entry) else None


def _arguments(args: Any) -> str | None:
    if args is None or args == {} or args == "":
        return None
    return escape(args if isinstance(args, str) else pretty_json(args))


def _reused_tool(call: ToolCall, row: ToolRow, key: str, options: _Options) -> ToolNode:
    if options.reuse is None:
        return _tool(call, row, key, options)
    return options.reuse.tool(call, row, lambda: _tool(call, row, key, options))


def _tool(call: ToolCall, row: ToolRow, key: str, options: _Options) -> ToolNode:
    locale = options.settings.locale
    subagent: SubagentView | None = None
    if call.subagent is not None:
        child = call.subagent.transcript
        prefix = keys.child_prefix(key)
        deeper = replace(options, depth=options.depth + 1)
        nodes: list[TopNode] = []
        line = row.subagent_line
        if child and options.depth >= MAX_DEPTH:
            # Past the bound (turnfold.nesting, which says why it is not drawn flat): the line
            # and the result its caller read, its steps counted in the view's notice.
            too_deep = translate("subagent.too_deep", locale, limit=MAX_DEPTH)
            line = f"{line} · {too_deep}" if line else too_deep
        elif child and options.reuse is not None:  # a live view: built as it changed
            nodes = options.reuse.subagent_nodes(call, child, prefix, deeper)
        elif child:
            nodes = _nodes(child, deeper, running=None, prefix=prefix)
        subagent = {"line": escape(line) if line else None, "nodes": nodes}
    args = _arguments(call.args)
    # A sub-agent's report that is its own last answer, word for word, is shown once: as the
    # answer that ends its transcript, above where the call's result would repeat it.
    reported = bool(subagent and subagent["nodes"]) and _answer_is_result(call)
    result = None if reported else _result(call.result, options)
    status_text = tool_status_text(call, locale)
    no_output = result is None and not reported and call.status not in _ACTIVE_STATUSES
    fold: ToolFold = {
        "args": bool(args) and not row.show_args,
        "result": result is not None and row.result_folded,
        "note": translate("tool.no_output", locale) if no_output else None,
        "subagent": bool(subagent and subagent["nodes"]),
    }
    node: ToolNode = {
        "kind": "tool",
        "key": key,
        "call_id": escape(call.call_id),
        "name": escape(display_name(call.name)),
        "category": row.category,
        "status": call.status,
        "status_text": status_text,
        # A success says nothing; every other outcome names itself on the row (L-3: unknown too).
        "status_label": None if call.status == "success" else status_text,
        "description": escape(row.description) if row.description else None,
        "args": args,
        "show_args": row.show_args,
        "result": result,
        "result_folded": row.result_folded,
        "forced_open": row.result_forced_open,
        "struck": row.struck,
        "open": False,  # P-8: no leaf payload opens by default
        "fold": fold,
        "subagent": subagent,
        "rejected_label": _rejected_mark(call, locale),
    }
    if is_scoring_call(call):
        # Shown where it ran, but the scorer's: its row says so, as a status does, so a row
        # the turn's header and group do not count is not read as the agent's.
        node["scoring"] = True
        node["scoring_label"] = translate("tool.scoring", locale)
    return node


def _answer_is_result(call: ToolCall) -> bool:
    """Whether a sub-agent's call returned its transcript's last text, word for word (and
    nothing else: no image, no structured value), as Claude Code's ``Agent`` and most
    frameworks' agents-as-tools hand back their final answer."""
    result, child = call.result, call.subagent.transcript if call.subagent else None
    if result is None or result.images or not result.text or not child or not child.entries:
        return False
    last = child.entries[-1]
    return isinstance(last, AssistantText) and last.text.strip() == result.text.strip()


def worded_result(result: ToolResult, locale: str) -> ToolResult:
    """``result`` with its text in the view's language where a reader wrote it
    (:class:`Wording`): what the view and its "show all" show."""
    if result.wording is None or not result.text:
        return result
    return replace(result, text=_worded(result.text, result.wording, locale))


def _result(result: Any, options: _Options) -> ResultView | None:
    """A tool's result as the view shows it, with its phrases in the reader's language."""
    locale = options.settings.locale
    if result is not None:
        result = worded_result(result, locale)
    shown = result_view(result, more_chars=options.more_chars)
    if shown is None:
        return None
    omitted = int(shown.get("omitted_lines") or 0)
    notes: list[ResultNote] = shown["notes"]
    more = int(shown.get("more_lines") or 0)
    # result_view's dict is the node's own: the phrases go in, with no copy.
    shown["notes_text"] = [note_text(note, locale) for note in notes] if notes else []
    shown["more_label"] = _counted("tool.show_more", more, locale) if shown["truncated"] else None
    # a static rendering says exactly what it leaves out; the widget fetches it.
    shown["omitted_label"] = _counted("tool.not_included", omitted, locale) if omitted else None
    shown["all_label"] = _counted("tool.show_all", shown["lines"], locale) if omitted else None
    view: ResultView = shown  # type: ignore[assignment]
    return view


@lru_cache(maxsize=1024)
def _counted(key: str, count: int, locale: str) -> str:
    """A count phrase: a long session's results ask for the same few thousand (Q-1)."""
    return plural(key, count, locale)


def note_text(note: Any, locale: str) -> str:
    """A result note (``{"key", "params"}``) in the reader's language, as plain text.

    A key missing from the catalog still says what it was, so no note is silently lost (X-2).
    """
    if not isinstance(note, dict):
        return str(note)
    params = {str(k): str(v) for k, v in (note.get("params") or {}).items()}
    try:
        return translate(str(note.get("key")), locale, **params)
    except (KeyError, TypeError):
        return " ".join([str(note.get("key")), *params.values()])


# --- navigation (P-11) ---------------------------------------------------------------------------


def _walk(nodes: Sequence[AnyNode], path: list[str]) -> Iterator[tuple[AnyNode, list[str]]]:
    """Every node with the keys of the disclosures that contain it."""
    for node in nodes:
        yield node, path
        if node["kind"] == "turn":
            process = node["process"]
            if process:
                yield from _walk(process["children"], [*path, process["key"]])
            yield from _walk(node["outside"], path)
            if node["answer"]:
                yield node["answer"], path
        elif node["kind"] == "group":
            yield from _walk(node["children"], [*path, node["key"]])
        elif node["kind"] == "batch":
            yield from _walk(node["rows"], path)
        elif node["kind"] == "command":
            yield from _walk([node["tool"]], path)
        elif node["kind"] == "summary":
            yield from _walk(node["tools"], [*path, node["key"]])
        elif node["kind"] == "tool" and node["subagent"]:
            yield from _walk(node["subagent"]["nodes"], [*path, node["key"]])


def ancestor_path(view: Mapping[str, Any], key: str) -> list[str] | None:
    """The keys to open so the node ``key`` (an entry's key) is visible, outermost first.

    Only the path is returned (P-11): the turn's process and, where one exists, the activity
    group, summary row or sub-agent call containing it; nothing else is opened. None when no
    node has that key. ``view`` is a view, or any mapping whose ``nodes`` are top-level nodes.
    """
    for node, path in _walk(view["nodes"], []):
        if node["key"] == key:
            return path
    return None


def iter_nodes(view: Mapping[str, Any]) -> Iterator[AnyNode]:
    """Every node of the view, depth first (for renderers, search and tests); ``view`` is a
    view, or any mapping whose ``nodes`` are top-level nodes."""
    for node, _ in _walk(view["nodes"], []):
        yield node


def open_all(nodes: list[TopNode]) -> list[TopNode]:
    """``nodes`` with every fold open (changes them and returns them): ``turnfold --expand``.

    Only the default ``open`` flags change; what each fold holds stays as the view model says.
    """
    for node, _ in _walk(nodes, []):
        if node["kind"] in _FOLDS:
            node["open"] = True  # type: ignore[typeddict-unknown-key]
        elif node["kind"] == "turn" and node["process"]:
            node["process"]["open"] = True
    return nodes


#: The kinds of node that are a fold of their own (have an ``open`` flag).
_FOLDS = frozenset({"group", "thinking", "summary", "tool"})


__all__ = [
    "SCHEMA_VERSION",
    "USER_CHARS",
    "USER_LINES",
    "NodeReuse",
    "ViewHead",
    "ViewPlan",
    "ancestor_path",
    "build_view_model",
    "compact_count",
    "iter_nodes",
    "note_text",
    "open_all",
    "plan_view",
    "rebuilt",
    "session_header",
    "turn_usage",
    "worded_result",
]
