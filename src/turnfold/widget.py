"""The notebook widget: a live, foldable view of a transcript (spec W-1 … W-4, P-8 … P-12).

:class:`TranscriptWidget` is an ``anywidget.AnyWidget``. Python computes everything a person sees
as the view model of :mod:`turnfold.render.viewmodel`; the JS view in ``js/`` (bundled into
``turnfold/static/``) only draws it and remembers the reader's disclosure choices.

How state travels, and why:

* ``_view`` (synced once, at construction) is the *wire form* of the view model
  (:mod:`turnfold.ondemand`): every turn's header and answer, but a closed process only as its
  header and a large hidden output only as its row. A settled transcript paints closed from the
  first frame (P-8) at about the cost of its text rendering (Q-2).
* What a reader opens is asked for by key (``content``) and sent to that view alone; the whole of
  a capped output likewise (``output``, in parts).
* After that, changes travel as small custom messages: the widget observes its transcript, coalesces
  bursts on a timer thread (so an agent appending from any thread updates the view while a cell is
  still running, L-5), rebuilds only the turns whose entries changed (the running turn, a turn a
  new label names) and sends only the top-level nodes that changed, each with the key of the node
  it follows. One appended tool call therefore costs the bytes of its own turn, not of the
  transcript, and Python work of about its turn (W-2, Q-3). Settings changes rebuild everything.
* A view that mounts later (the widget displayed again in another cell) says ``hello`` and is sent
  the current view once, addressed to it alone.
* ``_folds`` (synced, written only by the JS) holds the reader's open/closed choices keyed by the
  view model's keys, so a re-displayed widget restores them (P-10). It is presentation state only:
  never written into the transcript or the settings.

The display bundle also carries the deterministic ``text/plain`` and ``text/html`` renderings
(W-4), so a saved notebook reads well without a kernel.
"""

from __future__ import annotations

import html
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from turnfold.config import load_settings
from turnfold.gcpause import collector_paused
from turnfold.i18n import normalize_locale, plural, translate
from turnfold.model import Transcript, TranscriptChange
from turnfold.ondemand import NodeIndex, call_for_key, output_parts, wire_node
from turnfold.process import ProjectionPlanner
from turnfold.render.content import content_css, escape
from turnfold.render.html import render_html
from turnfold.render.nodes import TopNode, View
from turnfold.render.text import html_to_text, render_text
from turnfold.render.viewmodel import ancestor_path, iter_nodes, plan_view
from turnfold.settings import DisplaySettings, normalize_settings
from turnfold.summaries.usage import UsageTracker, usage_footer, usage_for

__all__ = ["SYNCED_SETTINGS", "USAGE_KEY", "TranscriptWidget"]

_LOG = logging.getLogger(__name__)

Node = dict[str, Any]

_STATIC = Path(__file__).parent / "static"

#: The DisplaySettings traits a TranscriptWidget mirrors under the same names, so a settings
#: widget can ``traitlets.link`` to either (T-4).
SYNCED_SETTINGS: tuple[str, ...] = (
    "show_thinking",
    "transcript_display_mode",
    "auto_collapse_settled_groups",
    "auto_collapse_thinking",
    "locale",
    "full_detail",
    "show_tool_call_args",
)

#: The top-level fields of the view besides its nodes; sent again only when they change.
_VIEW_FIELDS = ("schema", "locale", "mode", "show_thinking", "outcome", "notice")

#: Coalescing window for transcript changes: a burst of appends becomes one message.
_MIN_DELAY_S = 0.05
_MAX_DELAY_S = 1.0

#: The key of the footer line with the fast model's usage (spec S-8), the last top-level node.
USAGE_KEY = "usage:tool_use_summary_generation"

#: How much of a long output's hidden rest the widget renders beyond its first part: none. The
#: view fetches the whole output when asked (``output``), so a rest rendered up front would only
#: cost build time, bytes and the size of the notebook's ``text/html`` (Q-2); the standalone
#: page, which cannot ask, embeds ``render.content.MORE_CHARS`` of it.
OUTPUT_REST_CHARS = 0

#: Characters of the ``text/html`` fallback a display carries at most (W-4): the notebook saves it,
#: and every display sends it. Past this, the oldest turns' processes are left out of it, saying
#: so; headers, answers and everything outside the folds stay (``render_html``'s ``budget``).
STATIC_HTML_BUDGET = 4 * 1024 * 1024

#: At most this many search hits are reported (and opened) per query.
MAX_SEARCH_HITS = 200

# The phrases of the view's own controls (P-11), by the names the JS reads them with.
_UI_KEYS = {
    "search": "search.placeholder",
    "previous": "search.previous",
    "next": "search.next",
    "close_group": "group.close",
    "arguments": "tool.arguments",
    "loading": "widget.loading",
    "unavailable": "widget.unavailable",
}
_BUNDLE_MISSING = "The turnfold widget bundle is not built: run `npm run build` in js/."


def _esm() -> str | Path:
    """The bundled view, or a stub that says how to build it (a dev checkout before npm)."""
    built = _STATIC / "widget.js"
    if built.is_file():
        return built
    message = json.dumps(_BUNDLE_MISSING)
    return f"export default {{ render({{ el }}) {{ el.textContent = {message}; }} }}\n"


def _css() -> str:
    """The view's stylesheet plus the CSS of the content fragments (code, ANSI, diffs)."""
    built = _STATIC / "widget.css"
    own = built.read_text(encoding="utf-8") if built.is_file() else ""
    # A multi-line string, so anywidget takes it as CSS text rather than a file name.
    return f"{own}\n{content_css()}\n"


def ui_strings(locale: str) -> dict[str, str]:
    """The phrases the view's controls show, in ``locale``."""
    return {name: translate(key, locale) for name, key in _UI_KEYS.items()}


# --- search (P-11) --------------------------------------------------------------------------------


def _searchable_text(node: Mapping[str, Any]) -> Iterator[str]:
    """The transcript text a node shows: what a reader would expect a search to find.

    Only the view is searched, so reasoning hidden by ``show_thinking`` is never found (P-11).
    Generated titles and counts are not transcript text and are left out.
    """
    kind = node.get("kind")
    if kind == "tool":
        for field in ("name", "description", "args"):
            if node.get(field):
                yield html.unescape(str(node[field]))
        result = node.get("result") or {}
        if result.get("text"):
            yield str(result["text"])
        if result.get("more_html"):
            yield html_to_text(str(result["more_html"]))
        line = (node.get("subagent") or {}).get("line")
        if line:
            yield html.unescape(str(line))
        return
    if kind == "user" and node.get("command"):
        yield html.unescape(str(node["command"]))
    if kind == "summary":
        yield str(node.get("text") or "")
    for field in ("html", "summary_html"):
        if node.get(field):
            yield html_to_text(str(node[field]))
    for option in node.get("options") or []:
        yield html.unescape(str(option))


def search_view(
    view: Mapping[str, Any], query: str, *, limit: int = MAX_SEARCH_HITS
) -> tuple[list[Node], int]:
    """Nodes whose text contains ``query`` (case-insensitive), with the keys that reveal each.

    Returns ``([{"key", "path"}, …], total)``: at most ``limit`` hits in reading order, and how
    many there were in all. ``path`` is :func:`ancestor_path` of the hit: only what must open.
    """
    needle = query.casefold().strip()
    if not needle:
        return [], 0
    hits: list[Node] = []
    total = 0
    for top in view.get("nodes", []):
        if top.get("key") == USAGE_KEY:
            continue  # the usage footer is not transcript text
        # Paths are looked up inside the hit's own top-level node: O(size of its turn) each.
        scope = {"nodes": [top]}
        for node in iter_nodes(scope):
            if not any(needle in text.casefold() for text in _searchable_text(node)):
                continue
            total += 1
            if len(hits) < limit:
                key = str(node["key"])
                hits.append({"key": key, "path": ancestor_path(scope, key) or []})
    return hits, total


# --- incremental updates (W-2) --------------------------------------------------------------------


def diff_nodes(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> tuple[list[Node], list[str]]:
    """The top-level changes that turn ``old`` into ``new``: ``(upserts, removed keys)``.

    Each upsert is ``{"after": key or None, "node": node}``: the node to insert or replace, placed
    after the node with key ``after`` (None: first). A node is sent when it is new, when it
    differs (JSON equality), or when the node before it changed, so the receiver can keep order
    with no list of every key: an append sends one node, whatever the length of the list.
    Nodes the widget reused are the same objects, so the unchanged head of the list is skipped
    by identity: the work is about the size of what changed (Q-3).
    """
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] is new[start]:
        start += 1
    anchor = str(new[start - 1]["key"]) if start else None
    old, new = old[start:], new[start:]
    new_keys = [str(node["key"]) for node in new]
    present = set(new_keys)
    removed = [str(node["key"]) for node in old if node["key"] not in present]
    kept = [node for node in old if node["key"] in present]
    before: dict[str, str | None] = {}
    previous: str | None = anchor
    for node in kept:
        before[str(node["key"])] = previous
        previous = str(node["key"])
    old_by_key = {str(node["key"]): node for node in kept}
    upserts: list[Node] = []
    previous = anchor
    for key, node in zip(new_keys, new, strict=True):
        if key not in old_by_key or old_by_key[key] != node or before[key] != previous:
            upserts.append({"after": previous, "node": node})
        previous = key
    return upserts, removed


class _ModeTrait(traitlets.Any):
    """``transcript_display_mode`` normalized exactly as DisplaySettings does (T-2).

    The widget's trait must coerce the same way as the settings' trait it is linked to, or a
    ``traitlets.link`` between them would see the two disagree and break.
    """

    allow_none = False

    def validate(self, obj: Any, value: Any) -> str:
        normalized = normalize_settings({"transcript_display_mode": value})
        return str(normalized["transcript_display_mode"])


class _LocaleTrait(traitlets.Unicode[str, str]):
    def validate(self, obj: Any, value: Any) -> str:
        return normalize_locale(super().validate(obj, value))


class TranscriptWidget(anywidget.AnyWidget):
    """A transcript drawn in the notebook, live while it grows.

    >>> from turnfold.samples import demo_session
    >>> widget = TranscriptWidget(demo_session())
    >>> widget.transcript_display_mode
    'fully-folded'
    >>> sorted(widget._repr_mimebundle_()[0])
    ['application/vnd.jupyter.widget-view+json', 'text/html', 'text/plain']
    >>> widget.close()

    ``settings`` is linked both ways: changing it redraws the widget, and changing the widget's
    setting traits changes it. ``running`` tells the header the agent is still working on the
    last turn (see :func:`turnfold.process.project`); set the trait while a run is in progress.
    """

    _esm = _esm()
    _css = _css()

    # Display settings, mirrored under DisplaySettings' names (T-1). Kernel-side only: the view
    # needs no settings, only the view model they produce.
    show_thinking = traitlets.Bool(True)
    transcript_display_mode = _ModeTrait("fully-folded")
    auto_collapse_settled_groups = traitlets.Bool(True)
    auto_collapse_thinking = traitlets.Bool(True)
    locale = _LocaleTrait("en")
    full_detail = traitlets.Bool(False)
    show_tool_call_args = traitlets.Bool(False)

    running = traitlets.Bool(None, allow_none=True)

    _view = traitlets.Dict().tag(sync=True)
    _folds = traitlets.Dict().tag(sync=True)
    _strings = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        transcript: Transcript,
        settings: DisplaySettings | None = None,
        *,
        running: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(transcript, Transcript):
            raise TypeError(f"TranscriptWidget shows a Transcript, not {type(transcript).__name__}")
        self.transcript = transcript
        # T-5: without explicit settings, the layered defaults (Jupyter config, environment).
        self.settings = settings if settings is not None else load_settings()
        self._flush_lock = threading.RLock()
        self._timer_lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._delay = _MIN_DELAY_S
        self._rev = 0
        self._closed = False
        # the projection planned as the transcript grows, and the top-level nodes built
        # from it by key, reused while the planner does not plan their item anew.
        self._planner = ProjectionPlanner(transcript)
        self._nodes: dict[str, TopNode] = {}
        self._dirty: set[str] = set()  # ids of the entries changed since the last build
        self._dirty_lock = threading.Lock()
        # S-8: what the fast model cost for this transcript, shown as a footer line when non-zero.
        self._usage: UsageTracker = usage_for(transcript)
        initial = {name: getattr(self.settings, name) for name in SYNCED_SETTINGS}
        self._current: View = self._build(running)
        self._index = NodeIndex(self._current["nodes"])
        super().__init__(
            **initial,
            running=running,
            _view=self._wire_view(),
            _strings=ui_strings(self.settings.locale),
            **kwargs,
        )
        self._links = [
            traitlets.link((self.settings, name), (self, name)) for name in SYNCED_SETTINGS
        ]
        self.settings.observe(self._on_setting, names=list(SYNCED_SETTINGS))
        self.observe(self._on_running, names=["running"])
        self.on_msg(self._on_view_message)
        # A weak reference: a transcript outliving its widget does not keep the widget alive.
        self_ref = weakref.ref(self)

        def observer(change: TranscriptChange) -> None:
            widget = self_ref()
            if widget is not None:
                widget._changed(change)
                widget._schedule()

        self._stop_observing: Callable[[], None] = transcript.observe(observer)

        def usage_changed() -> None:
            widget = self_ref()
            if widget is not None:
                widget._schedule()

        self._stop_usage: Callable[[], None] = self._usage.observe(usage_changed)

    # --- scheduling ---------------------------------------------------------------------------

    def _schedule(self, delay: float | None = None) -> None:
        """Flush soon, on a timer thread, however many changes arrive meanwhile.

        Called from whatever thread changed the transcript, while the transcript is locked, so it
        only starts a timer. The delay grows with the cost of the last rebuild, so a fast agent on
        a long transcript spends at most about a third of the time rebuilding the view.
        """
        with self._timer_lock:
            if self._timer is not None or self._closed:
                return
            self._timer = threading.Timer(self._delay if delay is None else delay, self._tick)
            self._timer.daemon = True
            self._timer.start()

    def _tick(self) -> None:
        with self._timer_lock:
            self._timer = None
        try:
            self.flush()
        except Exception:  # a failed redraw must never take down the agent's thread
            _LOG.exception("turnfold: could not update the transcript view")

    def _changed(self, change: TranscriptChange) -> None:
        """Remember what changed, so the next build redraws exactly the turns that show it.

        The entry's id is enough: the planner knows which turn shows each entry, and which turns
        a label names.
        """
        with self._dirty_lock:
            self._dirty.add(change.entry.id)

    def _on_setting(self, change: Mapping[str, Any]) -> None:
        if change["name"] == "locale":
            self._strings = ui_strings(change["new"])
        with self._dirty_lock:
            self._nodes = {}  # every node depends on the settings
        self._schedule(0.0)  # one setting, or a burst of linked ones, redraws once

    def _on_running(self, change: Mapping[str, Any]) -> None:
        self._schedule(0.0)

    # --- sending ------------------------------------------------------------------------------

    def flush(self) -> None:
        """Rebuild what changed and send it to every view (W-2).

        Changes are sent on their own after a short delay; call this to send them at once (tests,
        or before reading :attr:`view`). Changes must reach the transcript through
        :meth:`Transcript.append` / :meth:`Transcript.update` (or a Recorder), which tell the
        widget what changed; after changing entries in place, call :meth:`refresh`.
        """
        with self._flush_lock:
            if self._closed:
                return
            started = time.perf_counter()
            view = self._build(self.running)
            self._delay = min(_MAX_DELAY_S, max(_MIN_DELAY_S, 2 * (time.perf_counter() - started)))
            upserts, removed = diff_nodes(self._current["nodes"], view["nodes"])
            fields = {name: view.get(name) for name in _VIEW_FIELDS}
            changed_fields = {k: v for k, v in fields.items() if self._current.get(k) != v}
            self._current = view
            self._index = NodeIndex(view["nodes"])
            if not upserts and not removed and not changed_fields:
                return
            self._rev += 1
            folds = self._folds
            message: Node = {
                "type": "patch",
                "rev": self._rev,
                "base": self._rev - 1,
                "upsert": [{**u, "node": wire_node(u["node"], folds)} for u in upserts],
                "remove": removed,
            }
            if changed_fields:
                message["fields"] = changed_fields
            self.send(message)

    def refresh(self) -> None:
        """Rebuild every turn and send what changed (after entries were changed in place)."""
        with self._dirty_lock:
            self._nodes = {}
            self._planner = ProjectionPlanner(self.transcript)
        self.flush()

    def _build(self, running: bool | None) -> View:
        """The decorated view model, rebuilding only the nodes whose entries changed (Q-3)."""
        with self._dirty_lock:
            dirty, self._dirty = self._dirty, set()
            cache = self._nodes
        snapshot = self.settings.snapshot()
        # A first build of a long session is millions of new objects, like a load.
        with collector_paused():
            items, fresh = self._planner.plan(snapshot, running=running, changed=dirty)
            plan = plan_view(self.transcript, snapshot, more_chars=OUTPUT_REST_CHARS, items=items)
            nodes: list[TopNode] = []
            built: dict[str, TopNode] = {}
            for item in items:
                key = item.key
                node = cache.get(key)
                if node is None or key in fresh or item.running:
                    (node,) = plan.nodes([item])
                built[key] = node
                nodes.append(node)
        with self._dirty_lock:
            if self._nodes is cache:  # not cleared by a settings change meanwhile
                self._nodes = built
        view = plan.view(nodes)
        footer = usage_footer(self._usage, view["locale"])
        if footer:
            # A quiet info line after everything, drawn by every renderer as it draws a runtime
            # notice, so the JS needs no code of its own for it (W-1).
            nodes.append(
                {"kind": "system", "key": USAGE_KEY, "level": "info", "html": escape(footer)}
            )
        return view

    def _wire_view(self) -> Node:
        """The current view as a view is sent it: closed content deferred (Q-2)."""
        folds = self._folds if hasattr(self, "_folds") else {}
        view = self._current
        return {**view, "nodes": [wire_node(node, folds) for node in view["nodes"]]}

    @property
    def view(self) -> View:
        """The whole view model as of the last flush (closed content included)."""
        return self._current

    def _on_view_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        view_id = str(content.get("view", ""))
        if kind == "hello":
            self._greet(view_id)
        elif kind == "search":
            self._answer_search(view_id, content.get("id"), content.get("query"))
        elif kind == "content":
            keys = content.get("keys")
            if isinstance(keys, list):
                self._send_content(view_id, [str(key) for key in keys])
        elif kind == "output":
            self._send_output(view_id, str(content.get("key", "")))

    def _contents(
        self, keys: list[str], *, deferred_only: bool = False
    ) -> dict[str, Mapping[str, Any] | None]:
        """The content of each key; with ``deferred_only``, of the keys the wire form defers."""
        with self._flush_lock:
            folds = self._folds
            if deferred_only:
                keys = [key for key in keys if self._index.defers(key, folds)]
            return {key: self._index.content(key, folds) for key in keys}

    def _send_content(self, view_id: str, keys: list[str]) -> None:
        """What a view opened: each key's node with its content, or None when it is gone."""
        self.send({"type": "content", "to": view_id, "nodes": self._contents(keys)})

    def _send_output(self, view_id: str, key: str) -> None:
        """The whole output of the tool ``key``, as plain text in parts (F-12: never lost)."""
        call = call_for_key(self.transcript, key)
        parts = output_parts(call) if call is not None else [""]
        for number, text in enumerate(parts):
            self.send(
                {
                    "type": "output",
                    "to": view_id,
                    "key": key,
                    "part": number,
                    "parts": len(parts),
                    "text": text,
                }
            )

    def _greet(self, view_id: str) -> None:
        """A view mounted: tell it the revision, and send the whole view if ``_view`` is stale."""
        self.flush()
        with self._flush_lock:
            view = self._wire_view() if self._rev else None
            self.send({"type": "full", "to": view_id, "rev": self._rev, "view": view})

    # --- navigation (P-11) --------------------------------------------------------------------

    def reveal(self, entry_id: str) -> list[str] | None:
        """Open the ancestor path of an entry in every view and scroll to it (P-11).

        ``entry_id`` is the id of an entry of this transcript, or any view-model key (an entry of
        a sub-agent's transcript is ``"<key of the spawning call>/<its id>"``).

        Only the keys that must open to show the entry are opened (its turn's process, its group,
        summary row or sub-agent call), once: a later manual close stands. Returns that path, or
        None when the entry is not shown (for example reasoning hidden by ``show_thinking``,
        which stays hidden).
        """
        self.flush()
        path = ancestor_path(self._current, entry_id)
        if path is None:
            return None
        # What must open to show the entry travels with the request, so it opens at once.
        nodes = self._contents(path, deferred_only=True)
        self.send({"type": "reveal", "key": entry_id, "path": path, "nodes": nodes})
        return path

    def search(self, query: str) -> tuple[list[Node], int]:
        """The hits of ``query`` in what the view shows (see :func:`search_view`)."""
        self.flush()
        return search_view(self._current, query)

    def _answer_search(self, view_id: str, request: Any, query: Any) -> None:
        text = str(query or "")
        hits, total = self.search(text)
        locale = str(self._current.get("locale"))
        if total:
            label = plural("search.matches", total, locale)
        else:
            label = translate("search.none", locale) if text.strip() else ""
        self.send(
            {
                "type": "search",
                "to": view_id,
                "id": request,
                "query": text,
                "hits": hits,
                "total": total,
                "label": label,
                "nodes": self._contents(
                    list(dict.fromkeys(k for h in hits for k in h["path"])), deferred_only=True
                ),
            }
        )

    # --- outputs (W-4) ------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The widget view plus deterministic ``text/plain`` and ``text/html`` (W-4)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        self.flush()
        view = self._current
        data = {
            **data,
            "text/plain": render_text(view),
            "text/html": render_html(view, standalone=False, budget=STATIC_HTML_BUDGET),
        }
        return data, metadata

    def close(self) -> None:
        """Stop following the transcript and the settings, then close the widget. Idempotent."""
        lock = getattr(self, "_timer_lock", None)
        if lock is not None:  # None: __init__ failed before it got this far
            with lock:
                already, self._closed = self._closed, True
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
            if not already:
                self._stop_observing()
                self._stop_usage()
                self.settings.unobserve(self._on_setting, names=list(SYNCED_SETTINGS))
                for link in self._links:
                    link.unlink()
        super().close()
