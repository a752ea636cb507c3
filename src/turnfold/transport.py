"""One transport for every widget: how a view model travels to the JS views (W-2, Q-2, issue 14).

A widget builds view models (:mod:`turnfold.render.viewmodel`); this module sends them. It owns:

* the **messages**, declared as ``TypedDict``s (and generated for the JS as
  ``js/src/messages.d.ts``): what the kernel sends (``patch``, ``full``, ``replace``,
  ``content``, ``output``, ``reveal``, ``search``) and what a view asks (``hello``,
  ``content``, ``output``, ``search``, ``reveal``);
* **diffing** (:mod:`turnfold.patches`): after the first view, only what changed travels: a
  top-level node new or moved whole, with the key of the node it follows, and a node changed in
  place (a growing turn) as a patch of what changed inside it; the timeline's turns likewise
  (:func:`diff_timeline`);
* the **wire form** of each node (:mod:`turnfold.ondemand`): closed content is sent when opened;
* the **update timer** (:class:`Coalescer`): bursts of changes from any thread become one
  rebuild, with a delay that grows with the cost of the last one;
* the **late-view greeting**: a view that mounts later says ``hello`` and gets the current view,
  addressed to it alone;
* the **saved view** (N-1): the ``_view`` trait, the wire form as zlib-compressed JSON
  (:func:`pack_view`), which is what a notebook saves as the widget's state. A view small enough
  travels whole (:class:`turnfold.ondemand.WholeSize`), so the saved state alone folds
  completely with no kernel; the widget renews the trait when a cell ends, not on every patch.
* **replacing** the transcript shown (``replace``): a widget reused for another transcript.

A widget hands :class:`ViewTransport` its ``send``, its synced fold choices and each new view;
the view's requests are routed back through :meth:`ViewTransport.receive`.
"""

from __future__ import annotations

import logging
import sys
import threading
import zlib
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypedDict

from turnfold import codec, keys
from turnfold.ondemand import Folds, NodeIndex, WholeSize, wire_node, wire_timeline
from turnfold.patches import Patcher, diff_nodes
from turnfold.render.nodes import (
    AnyNode,
    ChildNode,
    RowNode,
    TimelineNode,
    TimelineTurn,
    TopNode,
    View,
)
from turnfold.render.search import MAX_QUERY_LENGTH, QueryTooLong, search_query
from turnfold.render.viewmodel import ancestor_path

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired

_LOG = logging.getLogger(__name__)

#: The top-level fields of a view besides its nodes and its timeline; sent again only when they
#: change (the timeline's changes travel as :class:`TimelinePatch`).
VIEW_FIELDS = ("schema", "locale", "mode", "show_thinking", "session", "outcome", "notice")

# --- messages, kernel → view ---------------------------------------------------------------------


class Upsert(TypedDict):
    """A top-level node to insert or replace, after the node keyed ``after`` (None: first)."""

    after: str | None
    node: TopNode


class ChildUpsert(TypedDict):
    """A node inside a process, a group, a batch or a summary row, to insert or replace whole,
    after its sibling keyed ``after`` (None: first)."""

    after: str | None
    node: ChildNode | RowNode


class NodePatch(TypedDict):
    """What changed inside the node ``key``, which the view has (:mod:`turnfold.patches`):
    its own ``fields`` that changed (each whole; a turn's ``process`` whole only when it
    appeared, went or is deferred), and the changes to its nested nodes: ``upsert`` and
    ``remove`` in its list (``ondemand.NESTED``: a process's or a group's ``children``, a
    batch's ``rows``, a summary's ``tools``), ``change`` patching a nested node in place (a
    turn's process, or a node of its list that holds a list in turn)."""

    key: str
    fields: NotRequired[dict[str, Any]]
    upsert: NotRequired[list[ChildUpsert]]
    remove: NotRequired[list[str]]
    change: NotRequired[list[NodePatch]]


class TimelineUpsert(TypedDict):
    """A turn of the timeline to insert or replace, after the turn keyed ``after``."""

    after: str | None
    turn: TimelineTurn


class TimelinePatch(TypedDict):
    """U-4: what changed in a timeline the view has whole: its fields besides ``turns``, and
    the turns that changed (a live session's earlier turns keep their coordinates)."""

    fields: dict[str, Any]
    upsert: list[TimelineUpsert]
    remove: list[str]


class PatchMessage(TypedDict):
    """Top-level changes on top of revision ``base``; a view on another revision asks anew.

    ``upsert`` and ``remove``: top-level nodes new, moved or removed; ``change``: top-level
    nodes that kept their key and place, changed inside (W-2: a growing turn sends what it
    gained). ``fields.timeline`` replaces the timeline (its wire form); ``timeline`` changes
    it."""

    type: Literal["patch"]
    rev: int
    base: int
    upsert: list[Upsert]
    remove: list[str]
    change: NotRequired[list[NodePatch]]
    fields: NotRequired[dict[str, Any]]
    timeline: NotRequired[TimelinePatch]


class FullMessage(TypedDict):
    """The whole current view, for the view that said ``hello`` (None: ``_view`` is current)."""

    type: Literal["full"]
    to: str
    rev: int
    view: View | None


class ReplaceMessage(TypedDict):
    """Another transcript in place of the one shown (a session browser's reused widget, B-1):
    draw ``view`` whole and take ``folds`` as the reader's fold choices, forgetting the old."""

    type: Literal["replace"]
    rev: int
    view: View
    folds: dict[str, Literal["open", "closed", "owned"]]


class ContentMessage(TypedDict):
    """What a view asked for by key: each node's wire form with its content, None when gone."""

    type: Literal["content"]
    to: str
    nodes: dict[str, AnyNode | None]


class OutputMessage(TypedDict):
    """One part of the whole output of the tool ``key``, as plain text (F-12)."""

    type: Literal["output"]
    to: str
    key: str
    part: int
    parts: int
    text: str


class RevealMessage(TypedDict):
    """Open exactly ``path``, once, and scroll to ``key`` (P-11); ``nodes``: what it opens.
    ``to``: the view that asked (a timeline's bar clicked), else every view."""

    type: Literal["reveal"]
    key: str
    path: list[str]
    nodes: dict[str, AnyNode | None]
    to: NotRequired[str]


class SearchHit(TypedDict):
    key: str
    path: list[str]


class SearchMessage(TypedDict):
    """The answer to a view's query (P-11), with the content of the deferred folds it opens."""

    type: Literal["search"]
    to: str
    id: int  #: the request's own id, echoed
    query: str
    hits: list[SearchHit]
    total: int
    label: str
    nodes: dict[str, AnyNode | None]


# --- messages, view → kernel ---------------------------------------------------------------------


class HelloRequest(TypedDict):
    """A view mounted; ``rev``: the revision it drew (none: the saved ``_view``'s)."""

    type: Literal["hello"]
    view: str
    rev: NotRequired[int]


class ContentRequest(TypedDict):
    type: Literal["content"]
    view: str
    keys: list[str]


class OutputRequest(TypedDict):
    type: Literal["output"]
    view: str
    key: str


class RevealRequest(TypedDict):
    """Reveal the node ``key`` in this view (a timeline's bar was clicked, U-4 and P-11)."""

    type: Literal["reveal"]
    view: str
    key: str


class SearchRequest(TypedDict):
    type: Literal["search"]
    view: str
    id: int  #: a counter of the view's, so a late answer to an old query is ignored
    query: str


class SavedView(TypedDict):
    """What the ``_view`` trait holds once inflated: a wire form and its revision."""

    rev: int
    view: View


class TranscriptTraits(TypedDict):
    """The traits a ``TranscriptWidget`` syncs with its views (typed on the JS side through
    ``@anywidget/types``' ``AnyModel``)."""

    #: A :class:`SavedView`, zlib-compressed JSON (:func:`pack_view`): the view as of the last
    #: ended cell, which a saved notebook keeps (N-1); between, ``patch`` and ``full``.
    _view: bytes
    #: The reader's fold choices by key (P-10), written by the views only.
    _folds: dict[str, Literal["open", "closed", "owned"]]
    #: The phrases of the view's own controls, in the reader's language.
    _strings: dict[str, str]


KernelMessage = (
    PatchMessage
    | FullMessage
    | ReplaceMessage
    | ContentMessage
    | OutputMessage
    | RevealMessage
    | SearchMessage
)
ViewRequest = HelloRequest | ContentRequest | OutputRequest | SearchRequest | RevealRequest

#: Every message class, in the order the JS declarations are written.
MESSAGES: tuple[type, ...] = (
    Upsert, ChildUpsert, NodePatch, TimelineUpsert, TimelinePatch, PatchMessage, FullMessage,
    ReplaceMessage, ContentMessage, OutputMessage, RevealMessage, SearchHit, SearchMessage,
    HelloRequest, ContentRequest, OutputRequest, SearchRequest, RevealRequest, SavedView,
    TranscriptTraits,
)  # fmt: skip
MESSAGE_UNIONS: dict[str, object] = {"KernelMessage": KernelMessage, "ViewRequest": ViewRequest}


def typescript() -> str:
    """The messages as TypeScript declarations (``js/src/messages.d.ts``)."""
    from turnfold.render import nodes
    from turnfold.render.declarations import typescript as declare

    return declare(
        MESSAGES,
        MESSAGE_UNIONS,
        source="src/turnfold/transport.py",
        imports={
            "./nodes": (
                (nodes.View, nodes.TimelineTurn),
                {
                    "TopNode": nodes.TopNode,
                    "ChildNode": nodes.ChildNode,
                    "RowNode": nodes.RowNode,
                    "AnyNode": nodes.AnyNode,
                },
            )
        },
    )


# --- the saved view (N-1) -----------------------------------------------------------------------

#: zlib's fastest level: a 2,000-turn view's 1.9 MB of JSON shrinks about sixfold in a few
#: milliseconds; the slower levels save little more on text this repetitive.
COMPRESSION_LEVEL = 1


def pack_view(rev: int, view: Mapping[str, Any]) -> bytes:
    """The ``_view`` trait's bytes: ``{"rev", "view"}`` as zlib-compressed JSON. The JS view
    inflates it with the browser's own ``DecompressionStream("deflate")``."""
    return zlib.compress(codec.dump_bytes({"rev": rev, "view": view}), COMPRESSION_LEVEL)


def unpack_view(data: bytes) -> SavedView:
    """What :func:`pack_view` packed (for tests and tools that read a saved notebook)."""
    saved: SavedView = codec.loads(zlib.decompress(data))
    return saved


# --- diffing (W-2, Q-3) --------------------------------------------------------------------------


def diff_timeline(
    old: TimelineNode | None, new: TimelineNode | None, folds: Folds, *, shown: bool = False
) -> tuple[dict[str, Any], TimelinePatch | None]:
    """What to send for the timeline: ``({"timeline": wire form}, None)`` when it is replaced
    (it appeared, went, or is deferred: a closed timeline's changes cost its few fields), else
    ``({}, changes)`` with the fields and turns that changed. ``shown``: a view was sent its
    turns, so it gets their changes even before the reader's folds say it is open (a view that
    has not opened it keeps only the fields)."""
    if old == new:
        return {}, None
    wired = new if shown else wire_timeline(new, folds)
    if old is None or new is None or (wired is not None and wired.get("deferred")):
        return ({"timeline": wired} if wire_timeline(old, folds) != wired else {}), None
    fields = {name: value for name, value in new.items()
              if name != "turns" and old.get(name) != value}  # fmt: skip
    upserts, removed = diff_nodes(old["turns"], new["turns"])
    patch: TimelinePatch = {
        "fields": fields,
        "upsert": [{"after": u["after"], "turn": u["node"]} for u in upserts],
        "remove": removed,
    }
    return {}, patch


# --- the update timer ----------------------------------------------------------------------------

#: Coalescing window for changes: a burst of appends becomes one rebuild. Three updates a second
#: read as live; each more costs the run a redraw in the browser (about 30 ms of wall time for a
#: LangGraph run in JupyterLab on two cores: Chromium's style, layout and paint, and the server's
#: relaying, share the kernel's cores). In ``benchmarks/frameworks.py --browser`` a 500-step
#: LangGraph run took 1.27-1.43x its bare time at 20 updates a second, 1.14-1.17x at 5 and
#: 1.08-1.15x at 3.
MIN_DELAY_S = 0.3
MAX_DELAY_S = 1.0
#: The share of a live run's time its view's updates may take (the follow bar, A-2): the next
#: update waits nine times as long as the last one cost (up to MAX_DELAY_S), its drawing in the
#: browser included (:data:`DRAW_S_PER_BYTE`).
REDRAW_SHARE = 0.1
#: What drawing a patch costs the browser, by its size: the kernel cannot hear it from the view
#: while a cell runs (the view's messages wait for the cell to end), so it is estimated. About a
#: millisecond a kilobyte: in JupyterLab on two cores, Chromium spent 0.2-0.3 s of its main
#: thread on the 290 KB of patches of a 500-step LangGraph run followed live (new rows' DOM,
#: style, layout and paint), and the kernel 0.05 s building them; sending them made the run
#: 1.12x its bare time, building them alone 1.04x. A slow agent's patches of a row or two still
#: update the view three times a second; a fast one's of a hundred rows, once or twice.
DRAW_S_PER_BYTE = 1e-6


class Coalescer:
    """Runs ``work`` soon on a timer thread, once however many times :meth:`schedule` is called
    meanwhile; the delay grows with the cost of the last run, so a fast agent on a long
    transcript spends at most about a tenth of its time redrawing (:data:`REDRAW_SHARE`).

    :meth:`schedule` only starts a timer: it is called from whatever thread changed the
    transcript, while the transcript is locked. A failing ``work`` is logged, never raised on
    that thread: a failed redraw must never take down the agent's run (X-2).
    """

    def __init__(self, work: Callable[[], None]) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._delay = MIN_DELAY_S
        self._closed = False

    def schedule(self, delay: float | None = None) -> None:
        """Run the work after ``delay`` seconds (by default the adaptive delay)."""
        with self._lock:
            if self._timer is not None or self._closed:
                return
            self._timer = threading.Timer(self._delay if delay is None else delay, self._tick)
            self._timer.daemon = True
            self._timer.start()

    def timed(self, seconds: float) -> None:
        """Tell the coalescer what a run cost (the view's drawing of it included), to set the
        next delay."""
        wait = seconds * (1 / REDRAW_SHARE - 1)
        self._delay = min(MAX_DELAY_S, max(MIN_DELAY_S, wait))

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def close(self) -> bool:
        """Cancel a pending run and refuse new ones; whether it was open until now."""
        with self._lock:
            was_open, self._closed = not self._closed, True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return was_open

    def _tick(self) -> None:
        with self._lock:
            self._timer = None
        try:
            self._work()
        except Exception:
            _LOG.exception("turnfold: could not update the transcript view")


# --- sending a view ------------------------------------------------------------------------------


class Answers(Protocol):
    """What a widget answers that the transport cannot: searches, whole outputs and the
    timeline, which it lays out when first asked."""

    def search_hits(self, query: str) -> tuple[list[SearchHit], int, str]:
        """The hits of ``query`` in the current view, how many there were, and the label that
        says so in the reader's language."""
        ...

    def output_parts(self, key: str) -> list[str]:
        """The whole output of the tool ``key``, or the whole text of the message ``key`` a
        view capped, as plain text in parts."""
        ...

    def timeline(self, key: str) -> TimelineNode | None:
        """The whole timeline (its key), or one of its turns in detail (``timeline:<turn
        key>``), laid out now if it was not yet (U-4)."""
        ...


class ViewTransport:
    """The current view of one widget, as its JS views have been sent it.

    ``send`` sends one message to every view of the widget (anywidget's ``send``); ``folds``
    returns the reader's synced fold choices, which decide what the wire form defers. Every
    method is called under the widget's lock: sending keeps the order views apply patches in.
    """

    def __init__(
        self,
        view: View,
        send: Callable[[Mapping[str, Any]], None],
        folds: Callable[[], Folds],
    ) -> None:
        self._send = send
        self._folds = folds
        self.rev = 0
        #: The revision the saved view (:meth:`saved`) was last made at.
        self.saved_rev = -1
        self.view = view
        self.index = NodeIndex(view["nodes"])
        #: A view was sent the timeline's turns: its changes travel from then on (U-4).
        self._timeline_shown = False
        self._size = WholeSize()
        #: N-1: the view fits the budget whole: nothing is deferred, in patches or saved.
        self.whole = self._fits(view)

    def _fits(self, view: View) -> bool:
        return self._size.fits(view["nodes"], (view["session"], view["timeline"]))

    def wire_view(self) -> dict[str, Any]:
        """The current view as a view is sent it: closed content deferred (Q-2), unless the
        view fits whole (N-1)."""
        folds, whole = self._folds(), self.whole
        view = self.view
        return {
            **view,
            "timeline": wire_timeline(view["timeline"], folds, whole=whole),
            "nodes": [wire_node(node, folds, whole=whole) for node in view["nodes"]],
        }

    def saved(self) -> bytes:
        """The current view packed for the ``_view`` trait (:func:`pack_view`)."""
        self.saved_rev = self.rev
        return pack_view(self.rev, self.wire_view())

    def publish(self, view: View) -> int:
        """Make ``view`` current and send every view what changed, as one ``patch`` (W-2);
        the patch's size in bytes, as JSON (0: nothing changed)."""
        changed = {
            name: view.get(name) for name in VIEW_FIELDS if self.view.get(name) != view.get(name)
        }
        folds = self._folds()
        whole_before, self.whole = self.whole, self._fits(view)
        whole = self.whole
        patcher = Patcher(folds, whole_before=whole_before, whole=whole)
        upserts, removed, changes = patcher.top(self.view["nodes"], view["nodes"])
        replaced, timeline = diff_timeline(
            self.view.get("timeline"),
            view.get("timeline"),
            folds,
            shown=self._timeline_shown or whole,
        )
        changed.update(replaced)
        self.view = view
        self.index = NodeIndex(view["nodes"])
        if not upserts and not removed and not changes and not changed and timeline is None:
            return 0
        self.rev += 1
        message: dict[str, Any] = {
            "type": "patch",
            "rev": self.rev,
            "base": self.rev - 1,
            "upsert": upserts,
            "remove": removed,
        }
        if changes:
            message["change"] = changes
        if changed:
            message["fields"] = changed
        if timeline is not None:
            message["timeline"] = timeline
        self._send(message)
        return len(codec.dump_bytes(message))  # what the browser draws it from

    def replace(self, view: View) -> None:
        """Make ``view``, another transcript's, current and send it whole to every view, with
        the fold choices it is to take (``replace``)."""
        self.view = view
        self.index = NodeIndex(view["nodes"])
        self.whole = self._fits(view)  # N-1: the other transcript may fit whole, or not
        self._timeline_shown = False
        self.rev += 1
        folds = dict(self._folds())
        self._send({"type": "replace", "rev": self.rev, "view": self.wire_view(), "folds": folds})

    def contents(
        self, keys: list[str], *, deferred_only: bool = False
    ) -> dict[str, Mapping[str, Any] | None]:
        """The content of each key; with ``deferred_only``, of the keys the wire form defers."""
        folds = self._folds()
        if deferred_only:
            # A whole view defers nothing; a view sent in parts, what its wire form leaves out.
            keys = [] if self.whole else [key for key in keys if self.index.defers(key, folds)]
        return {key: self.index.content(key, folds) for key in keys}

    def greet(self, view_id: str, rev: object = None) -> None:
        """A view mounted: tell it the revision, and send the whole view unless the view drew
        the current one (``rev``; by default, the saved ``_view``'s)."""
        drawn = rev if isinstance(rev, int) else self.saved_rev
        view = self.wire_view() if drawn != self.rev else None
        self._send({"type": "full", "to": view_id, "rev": self.rev, "view": view})

    def reveal(self, key: str, path: list[str], to: str | None = None) -> None:
        """Every view (or the view ``to``) opens ``path`` and scrolls to ``key``; the folds it
        opens come along."""
        nodes = self.contents(path, deferred_only=True)
        message: dict[str, Any] = {"type": "reveal", "key": key, "path": path, "nodes": nodes}
        if to is not None:
            message["to"] = to
        self._send(message)

    def content(self, key: str, answers: Answers) -> Mapping[str, Any] | None:
        """What the view asked for by ``key``: a disclosure's content, the timeline's turns, or
        one turn of the timeline in detail (U-4)."""
        if key == keys.TIMELINE:
            self._timeline_shown = True
            return answers.timeline(key)
        if key.startswith(keys.TIMELINE) and keys.parse(key).kind == "timeline":
            return answers.timeline(key)
        return self.index.content(key, self._folds())

    def receive(self, content: Any, answers: Answers) -> None:
        """Answer one request of a view (anything else is ignored: the view is untrusted)."""
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        view_id = str(content.get("view", ""))
        if kind == "hello":
            self.greet(view_id, content.get("rev"))
        elif kind == "search":
            query = str(content.get("query") or "")
            hits, total, label = answers.search_hits(query)
            opened = list(dict.fromkeys(k for hit in hits for k in hit["path"]))
            # The view marks the hits with the query as searched.
            try:
                searched = search_query(query)
            except QueryTooLong:  # a paste gone wrong: not sent back whole
                searched = query.strip()[:MAX_QUERY_LENGTH]
            self._send(
                {"type": "search", "to": view_id, "id": content.get("id"), "query": searched,
                 "hits": hits, "total": total, "label": label,
                 "nodes": self.contents(opened, deferred_only=True)}
            )  # fmt: skip
        elif kind == "content":
            asked = content.get("keys")
            if isinstance(asked, list):
                nodes = {str(key): self.content(str(key), answers) for key in asked}
                self._send({"type": "content", "to": view_id, "nodes": nodes})
        elif kind == "reveal":
            key = str(content.get("key", ""))
            path = ancestor_path(self.view, key)
            if path is not None:
                self.reveal(key, path, to=view_id)
        elif kind == "output":
            key = str(content.get("key", ""))
            parts = answers.output_parts(key)
            for number, text in enumerate(parts):
                self._send(
                    {"type": "output", "to": view_id, "key": key, "part": number,
                     "parts": len(parts), "text": text}
                )  # fmt: skip


if __name__ == "__main__":
    sys.stdout.write(typescript())


__all__ = [
    "COMPRESSION_LEVEL",
    "MESSAGES",
    "VIEW_FIELDS",
    "Answers",
    "ChildUpsert",
    "Coalescer",
    "ContentMessage",
    "ContentRequest",
    "FullMessage",
    "HelloRequest",
    "KernelMessage",
    "NodePatch",
    "OutputMessage",
    "OutputRequest",
    "PatchMessage",
    "ReplaceMessage",
    "RevealMessage",
    "RevealRequest",
    "SavedView",
    "SearchHit",
    "SearchMessage",
    "SearchRequest",
    "TimelinePatch",
    "TimelineUpsert",
    "TranscriptTraits",
    "Upsert",
    "ViewRequest",
    "ViewTransport",
    "diff_nodes",
    "diff_timeline",
    "pack_view",
    "typescript",
    "unpack_view",
]
