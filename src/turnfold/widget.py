"""The notebook widget: a live, foldable view of a transcript (spec W-1 … W-4, P-8 … P-12).

:class:`TranscriptWidget` is an ``anywidget.AnyWidget``. Python computes everything a person sees
as the view model of :mod:`turnfold.render.viewmodel`; the JS view in ``js/`` (bundled into
``turnfold/static/``) only draws it and remembers the reader's disclosure choices.

How state travels, and why:

* ``_view`` is the *wire form* of the view model (:mod:`turnfold.ondemand`), compressed
  (:func:`turnfold.transport.pack_view`): a view within ``WHOLE_VIEW_BUDGET`` whole, so a
  notebook saved with widget state folds completely with no kernel (N-1); a larger one as every
  turn's header and answer, a closed process only as its header and a large hidden output only as
  its row. A settled transcript paints closed from the first frame (P-8) at about the cost of its
  text rendering (Q-2). It is set at construction, renewed when displayed, when a cell ends
  and when a live run ends (what a notebook saves), never per change.
* What a reader opens is asked for by key (``content``) and sent to that view alone; the whole of
  a capped output likewise (``output``, in parts).
* After that, changes travel as small custom messages: the widget observes its transcript, coalesces
  bursts on a timer thread (so an agent appending from any thread updates the view while a cell is
  still running, L-5), rebuilds only the turns whose entries changed (the running turn, a turn a
  new label names), and within the running turn only the steps that changed (the projection and
  the nodes of the rest are reused, ``process.TurnMemo`` and ``viewmodel.NodeReuse``), and sends
  only what changed: a new top-level node whole, with the key of the node it follows, and a turn
  that grew as a patch of what it gained (:mod:`turnfold.patches`). One appended tool call
  therefore costs the bytes of its own row, not of its turn or the transcript (W-2, Q-3).
  Settings changes rebuild everything.
* A view that mounts later (the widget displayed again in another cell) says ``hello`` and is sent
  the current view once, addressed to it alone.
* ``_folds`` (synced, written only by the JS) holds the reader's open/closed choices keyed by the
  view model's keys, so a re-displayed widget restores them (P-10). It is presentation state only:
  never written into the transcript or the settings.

The display bundle also carries the deterministic ``text/plain`` and ``text/html`` renderings
(W-4), so a saved notebook reads well without a kernel.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from turnfold.config import load_settings
from turnfold.display import kernel_shell
from turnfold.gcpause import collector_paused
from turnfold.i18n import normalize_locale, plural, translate
from turnfold.keys import TIMELINE
from turnfold.model import Transcript, TranscriptChange
from turnfold.ondemand import entry_for_key, output_parts
from turnfold.process import ProjectionPlanner
from turnfold.render.anchors import key_of_anchor
from turnfold.render.content import content_css, escape
from turnfold.render.html import render_html, timeline_css
from turnfold.render.nodes import TimelineNode, TopNode, View
from turnfold.render.search import QueryTooLong, search_view
from turnfold.render.text import render_text
from turnfold.render.viewmodel import NodeReuse, ancestor_path, plan_view, rebuilt
from turnfold.session import SessionTally
from turnfold.settings import DisplaySettings, normalize_settings
from turnfold.summaries.usage import UsageTracker, usage_footer, usage_for
from turnfold.timeline import Timeline
from turnfold.transport import DRAW_S_PER_BYTE, Coalescer, SearchHit, ViewTransport

__all__ = ["SYNCED_SETTINGS", "USAGE_KEY", "TranscriptWidget", "view_bundle", "view_css"]

_STATIC = Path(__file__).parent / "static"
_LOG = logging.getLogger(__name__)

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
    "show_turn_usage",
)

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


def view_bundle(name: str = "widget.js") -> str | Path:
    """A bundled view (``widget.js``, or the compare widget's ``compare.js``), or a stub that
    says how to build it (a dev checkout before npm)."""
    built = _STATIC / name
    if built.is_file():
        return built
    message = json.dumps(_BUNDLE_MISSING)
    return f"export default {{ render({{ el }}) {{ el.textContent = {message}; }} }}\n"


_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def view_css(extra: str = "") -> str:
    """The view's stylesheet, ``extra`` rules (a comparison's layout), and the CSS of the
    content fragments (code, ANSI, diffs) and of the timeline, which the static page shares."""
    built = _STATIC / "widget.css"
    own = built.read_text(encoding="utf-8") if built.is_file() else ""
    shared = f"{content_css()}\n{timeline_css()}\n"
    # Every view's state carries it (and every saved notebook, N-1): the comments Pygments
    # writes after each token's rule (``/* Keyword */``) are an eighth of it, and go.
    shared = _CSS_COMMENT.sub("", shared)
    # A multi-line string, so anywidget takes it as CSS text rather than a file name.
    return f"{own}\n{extra}{shared}"


def ui_strings(locale: str) -> dict[str, str]:
    """The phrases the view's controls show, in ``locale``."""
    return {name: translate(key, locale) for name, key in _UI_KEYS.items()}


def refuse_unknown(widget: traitlets.HasTraits, kwargs: dict[str, Any], hint: str) -> None:
    """Refuse a keyword argument that is no trait of ``widget``'s class (a misspelt setting,
    ``mode=`` for ``transcript_display_mode=``): traitlets would drop it with a deprecation
    warning few ever see, and the widget would show something else than was asked."""
    unknown = sorted(set(kwargs) - set(widget.class_trait_names()))
    if unknown:
        raise TypeError(f"{type(widget).__name__}() got no argument {unknown[0]!r}; {hint}")


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

    _esm = view_bundle()
    _css = view_css()

    # Display settings, mirrored under DisplaySettings' names (T-1). Kernel-side only: the view
    # needs no settings, only the view model they produce.
    show_thinking = traitlets.Bool(True)
    transcript_display_mode = _ModeTrait("fully-folded")
    auto_collapse_settled_groups = traitlets.Bool(True)
    auto_collapse_thinking = traitlets.Bool(True)
    locale = _LocaleTrait("en")
    full_detail = traitlets.Bool(False)
    show_tool_call_args = traitlets.Bool(False)
    show_turn_usage = traitlets.Bool(False)

    running = traitlets.Bool(None, allow_none=True)

    _view = traitlets.Bytes().tag(sync=True)
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
        # T-1: a display setting given by name (``TranscriptWidget(t, locale="zh")``) is that
        # setting, checked as DisplaySettings checks it. Any other name that is no trait of a
        # widget is refused: traitlets would drop it with a warning few ever see.
        chosen = {name: kwargs.pop(name) for name in SYNCED_SETTINGS if name in kwargs}
        refuse_unknown(self, kwargs, f"its display settings are {', '.join(SYNCED_SETTINGS)}")
        # T-5: without explicit settings, the layered defaults (Jupyter config, environment).
        self.settings = settings if settings is not None else load_settings()
        for name, value in chosen.items():
            setattr(self.settings, name, value)
        self._flush_lock = threading.RLock()
        self._dirty_lock = threading.Lock()
        self._take(transcript)
        self._updates = Coalescer(self.flush)
        initial = {name: getattr(self.settings, name) for name in SYNCED_SETTINGS}
        # W-2, Q-2: what the views were sent, and how changes and requests travel.
        self._transport = ViewTransport(
            self._build(running), self.send, lambda: getattr(self, "_folds", {})
        )
        super().__init__(
            **initial,
            running=running,
            _view=self._transport.saved(),
            _strings=ui_strings(self.settings.locale),
            **kwargs,
        )
        self._links = [
            traitlets.link((self.settings, name), (self, name)) for name in SYNCED_SETTINGS
        ]
        self.settings.observe(self._on_setting, names=list(SYNCED_SETTINGS))
        self.observe(self._on_running, names=["running"])
        self.on_msg(self._on_view_message)
        self._follow()

    def _take(self, transcript: Transcript) -> None:
        """Make ``transcript`` the one shown: what the builds keep about it starts afresh."""
        if not isinstance(transcript, Transcript):
            raise TypeError(f"TranscriptWidget shows a Transcript, not {type(transcript).__name__}")
        self.transcript = transcript
        with self._dirty_lock:
            # the projection planned as the transcript grows, and the top-level nodes
            # built from it by key, reused while the planner does not plan their item anew.
            self._planner = ProjectionPlanner(transcript)
            self._nodes: dict[str, TopNode] = {}
            self._nodes_per_turn = True  # the tokens_per_turn they were built with
            # the nodes inside a growing turn, reused for what its projection reused.
            self._reuse = self._node_reuse()
            self._dirty: set[str] = set()  # ids of the entries changed since the last build
            # U-3: the session header's facts, updated by the entries that changed.
            self._tally = SessionTally(transcript)
            self._tally_current = False
            # U-4: the timeline's layout, kept turn by turn like the nodes, and made only
            # when a reader opens it or a static rendering draws it.
            self._timeline = Timeline(lazy=True)
        # S-8: what the fast model cost for this transcript, shown as a footer line when non-zero.
        self._usage: UsageTracker = usage_for(transcript)

    def _follow(self) -> None:
        """Redraw when the transcript or its fast model's usage changes (W-2, S-8)."""
        # A weak reference: a transcript outliving its widget does not keep the widget alive.
        self_ref = weakref.ref(self)

        def observer(change: TranscriptChange) -> None:
            widget = self_ref()
            if widget is not None:
                widget._changed(change)
                widget._schedule()

        self._stop_observing: Callable[[], None] = self.transcript.observe(observer)

        def usage_changed() -> None:
            widget = self_ref()
            if widget is not None:
                widget._schedule()

        self._stop_usage: Callable[[], None] = self._usage.observe(usage_changed)
        self._stop_saving = self._save_after_cells(self_ref)

    def _save_after_cells(self, self_ref: weakref.ref[TranscriptWidget]) -> Callable[[], None]:
        """N-1: renew the saved view when a cell of the kernel ends, so a notebook saved then
        (``nbconvert --execute``, JupyterLab) keeps the transcript as the cell left it; in
        between, views follow patches. Returns what stops it (nothing to stop outside a kernel)."""
        shell = kernel_shell()
        if shell is None:
            return lambda: None

        def after_cell() -> None:
            widget = self_ref()
            try:
                if widget is not None:
                    widget.save_view()
            except Exception:  # a failed save must never disturb the notebook's run
                _LOG.exception("turnfold: could not save the transcript view")

        shell.events.register("post_execute", after_cell)
        return lambda: shell.events.unregister("post_execute", after_cell)

    def show(self, transcript: Transcript, folds: Mapping[str, str] | None = None) -> None:
        """Show ``transcript`` instead, in this widget and every view of it, with the reader's
        fold choices ``folds`` (P-10; none: its defaults).

        A session browser reuses one widget for every session it opens (B-1): a view draws the
        new transcript whole and forgets the old one's folds, whose keys could name entries of
        the new one. Settings stay as they are; what the widget followed before it no longer
        follows.
        """
        with self._flush_lock:
            if self._closed:
                return
            self._stop_observing()
            self._stop_usage()
            self._take(transcript)
            self._follow()
            self._folds = dict(folds or {})
            self._transport.replace(self._build(self.running))

    # --- scheduling ---------------------------------------------------------------------------

    def _schedule(self, delay: float | None = None) -> None:
        """Flush soon, on the update timer, however many changes arrive meanwhile (W-2)."""
        self._updates.schedule(delay)

    def _changed(self, change: TranscriptChange) -> None:
        """Remember what changed, so the next build redraws exactly the turns that show it.

        The entry's id is enough: the planner knows which turn shows each entry, and which turns
        a label names.
        """
        with self._dirty_lock:
            self._dirty.add(change.entry.id)

    def _node_reuse(self) -> NodeReuse:
        """What the builds reuse, told when a sub-agent's transcript grows under a call: its
        call's turn is built again, and the views updated (W-2), as when the call changes."""
        self_ref = weakref.ref(self)

        def subagent_changed(call_id: str) -> None:
            widget = self_ref()
            if widget is not None:
                with widget._dirty_lock:
                    widget._dirty.add(call_id)
                widget._schedule()

        return NodeReuse(subagent_changed)

    def _on_setting(self, change: Mapping[str, Any]) -> None:
        if change["name"] == "locale":
            self._strings = ui_strings(change["new"])
        with self._dirty_lock:
            self._nodes = {}  # every node depends on the settings
            self._reuse = self._node_reuse()
        self._schedule(0.0)  # one setting, or a burst of linked ones, redraws once

    def _on_running(self, change: Mapping[str, Any]) -> None:
        if change["old"] and not change["new"]:
            # N-1: a run watched live ends on a worker thread or a task after its cell did, so
            # no cell's end renews what a notebook saves: its end does, once.
            self.save_view()
        else:
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
            sent = self._transport.publish(self._build(self.running))
            # Building, sending and the browser's drawing all count (REDRAW_SHARE).
            self._updates.timed(time.perf_counter() - started + sent * DRAW_S_PER_BYTE)

    def save_view(self) -> None:
        """Renew the ``_view`` trait (what a saved notebook keeps) if the view changed since
        (N-1). Called when the widget is displayed, when a cell ends and when a run ends."""
        self.flush()
        with self._flush_lock:
            if not self._closed and self._transport.saved_rev != self._transport.rev:
                self._view = self._transport.saved()

    def refresh(self) -> None:
        """Rebuild every turn and send what changed (after entries were changed in place)."""
        with self._dirty_lock:
            self._nodes = {}
            self._reuse = self._node_reuse()
            self._planner = ProjectionPlanner(self.transcript)
            self._tally_current = False  # entries changed in place: read them all again
            self._timeline = Timeline(lazy=not self._timeline.laid_out)
        self.flush()

    def _build(self, running: bool | None) -> View:
        """The decorated view model, rebuilding only the nodes whose entries changed (Q-3)."""
        with self._dirty_lock:
            dirty, self._dirty = self._dirty, set()
            cache, reuse = self._nodes, self._reuse
        reuse.changed(dirty)
        snapshot = self.settings.snapshot()
        # A first build of a long session is millions of new objects, like a load.
        with collector_paused():
            items, fresh = self._planner.plan(snapshot, running=running, changed=dirty)
            turns = sum(1 for item in items if item.segment is not None)
            facts = self._tally.facts(dirty if self._tally_current else None, turns=turns)
            self._tally_current = True
            plan = plan_view(
                self.transcript, snapshot, more_chars=OUTPUT_REST_CHARS, items=items, facts=facts,
                timeline=self._timeline,
            )  # fmt: skip
            per_turn = plan.options.tokens_per_turn
            # A session total that arrives after its turns (a claude -p result) can show that
            # they record their tokens in part only: every turn's header then says so (U-1).
            last = cache if per_turn == self._nodes_per_turn else {}
            built = rebuilt(items, fresh, last, lambda item: plan.nodes([item], reuse)[0])
            nodes: list[TopNode] = list(built.values())
            reuse.next_build()
        with self._dirty_lock:
            if self._nodes is cache:  # not cleared by a settings change meanwhile
                self._nodes, self._nodes_per_turn = built, per_turn
        view = plan.view(nodes)
        footer = usage_footer(self._usage, view["locale"])
        if footer:
            # A quiet info line after everything, drawn by every renderer as it draws a runtime
            # notice, so the JS needs no code of its own for it (W-1).
            nodes.append(
                {"kind": "system", "key": USAGE_KEY, "level": "info", "html": escape(footer)}
            )
        return view

    @property
    def view(self) -> View:
        """The whole view model as of the last flush (closed content included; the timeline
        only its header until a reader opens it or a static rendering draws it, U-4)."""
        return self._transport.view

    @property
    def _closed(self) -> bool:
        return self._updates.closed

    def _on_view_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") in ("hello", "search", "reveal"):
            self.flush()  # a greeting, a search or a reveal answers from the latest transcript
        with self._flush_lock:
            self._transport.receive(content, self)

    # --- what the transport asks the widget (transport.Answers) -------------------------------

    def search_hits(self, query: str) -> tuple[list[SearchHit], int, str]:
        """The hits of ``query`` in the view, their number, and the label that says so."""
        locale = self.view["locale"]
        try:
            hits, total = search_view(self.view, query, skip={USAGE_KEY}, whole=self._whole_text)
        except QueryTooLong:  # a view's request: said in its search box, never raised
            return [], 0, QueryTooLong.said(locale)
        if total:
            label = plural("search.matches", total, locale)
        else:
            label = translate("search.none", locale) if query.strip() else ""
        return [{"key": h["key"], "path": h["path"]} for h in hits], total, label

    def output_parts(self, key: str) -> list[str]:
        """The whole output of the tool ``key``, or text of the message ``key``, as plain text in
        parts (F-12: never lost)."""
        return output_parts(entry_for_key(self.transcript, key), self.view["locale"])

    def timeline(self, key: str) -> TimelineNode | None:
        """The whole timeline, laid out now if it was not yet, or the turn ``key``
        (``timeline:<turn key>``) in detail, which a reader zooms into in a long session's
        coarse timeline (U-4)."""
        if not self._timeline.laid_out:
            self._timeline.lay_out()
            self.flush()
        if key == TIMELINE:
            return self.view["timeline"]
        return self._timeline.turn(key, self.view["locale"])

    # --- navigation (P-11) --------------------------------------------------------------------

    def reveal(self, entry_id: str) -> list[str] | None:
        """Open the ancestor path of an entry in every view and scroll to it (P-11).

        ``entry_id`` is the id of an entry of this transcript, or any view-model key (an entry of
        a sub-agent's transcript is ``"<key of the spawning call>/<its id>"``), or a static
        page's anchor (``"#turn-3"``, ``"#call-<key>"``: B-2's deep links).

        Only the keys that must open to show the entry are opened (its turn's process, its group,
        summary row or sub-agent call), once: a later manual close stands. Returns that path, or
        None when the entry is not shown (for example reasoning hidden by ``show_thinking``,
        which stays hidden).
        """
        self.flush()
        with self._flush_lock:
            key = entry_id if not entry_id.startswith("#") else None
            path = ancestor_path(self.view, key) if key is not None else None
            if path is None:  # no key of the view: a static page's anchor names it (B-2)
                key = key_of_anchor(self.view, entry_id)
                path = ancestor_path(self.view, key) if key is not None else None
            if key is None or path is None:
                return None
            # What must open to show the entry travels with the request, so it opens at once.
            self._transport.reveal(key, path)
        return path

    def search(self, query: str) -> tuple[list[dict[str, Any]], int]:
        """The hits of ``query`` in what the view shows (see :func:`render.search.search_view`)."""
        self.flush()
        return search_view(self.view, query, skip={USAGE_KEY}, whole=self._whole_text)

    def _whole_text(self, key: str) -> str:
        # P-11: the rest of a capped output is the reader's to see (F-12), so it is searched.
        return "".join(self.output_parts(key))

    # --- outputs (W-4) ------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The widget view plus deterministic ``text/plain`` and ``text/html`` (W-4)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        self._timeline.lay_out()  # the static renderings draw the timeline (U-4)
        self.save_view()  # N-1: the state a notebook saves, current and, if it fits, whole
        view = self.view
        data = {
            **data,
            "text/plain": render_text(view),
            "text/html": render_html(view, standalone=False, budget=STATIC_HTML_BUDGET),
        }
        return data, metadata

    def close(self) -> None:
        """Stop following the transcript and the settings, then close the widget. Idempotent."""
        updates = getattr(self, "_updates", None)
        # None, or no observers yet: __init__ failed before it got there (a widget that never
        # was is still closed by ipywidgets when it is collected).
        if updates is not None and hasattr(self, "_stop_observing") and updates.close():
            self._stop_observing()
            self._stop_usage()
            self._stop_saving()
            self.settings.unobserve(self._on_setting, names=list(SYNCED_SETTINGS))
            for link in self._links:
                link.unlink()
        super().close()
