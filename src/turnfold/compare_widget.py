"""``turnfold.compare(a, b)``: two runs side by side in the notebook (spec B-3).

:class:`CompareWidget` is an ``anywidget.AnyWidget`` over :mod:`turnfold.comparison`: Python
aligns the runs and builds the view (:mod:`turnfold.render.compare_view`); the JS view
(``js/src/compare.js``) draws each side with the transcript view's own renderer, keeps each
side's fold memory and opens a process's counterpart when the reader opens it.

* Two transcripts: the comparison is built once and sent in its wire form (``_compare``): as in
  a :class:`~turnfold.widget.TranscriptWidget`, a closed process travels as its header and is
  sent when opened, through the same transport (:mod:`turnfold.transport`).
* Two corpora: ``_table`` holds one page of the samples whose outcome or score changed, then
  of those only one corpus holds; the view asks for another page (``page``) or a sample
  (``select``), and Python loads that sample's two transcripts and sends their comparison (a
  sample of one corpus: its one transcript, on its side, the other side saying it is not
  there). The first changed sample (the first regression, if any) is open from the start.

The display bundle carries deterministic ``text/plain`` and ``text/html`` renderings (W-4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anywidget
import traitlets

from turnfold.comparison import (
    CorpusComparison,
    RowPair,
    Run,
    TranscriptComparison,
    compare_rows,
    open_run,
)
from turnfold.config import load_settings
from turnfold.corpus import Corpus
from turnfold.i18n import translate
from turnfold.model import Transcript
from turnfold.ondemand import entry_for_key, output_parts, wire_node
from turnfold.render.compare_html import COMPARE_CSS, render_compare_html, render_corpus_html
from turnfold.render.compare_nodes import CompareView, PairTable
from turnfold.render.compare_page import STATIC_TABLE_ROWS
from turnfold.render.compare_text import render_compare_text, render_table_text
from turnfold.render.compare_view import (
    PAGE_ROWS,
    build_compare_view,
    build_pair_table,
    compare_alone,
    compare_runs,
    left_out,
    split_key,
    table_rows,
)
from turnfold.render.nodes import TopNode, View
from turnfold.render.viewmodel import SCHEMA_VERSION
from turnfold.settings import DisplaySettings, SettingsSnapshot
from turnfold.transport import SearchHit, ViewTransport
from turnfold.widget import (
    OUTPUT_REST_CHARS,
    STATIC_HTML_BUDGET,
    refuse_unknown,
    ui_strings,
    view_bundle,
    view_css,
)

__all__ = ["CompareWidget", "compare"]

#: The phrases of the compare view's own controls, by the names the JS reads them with.
_UI_KEYS = {"previous": "compare.previous", "next": "compare.next", "choose": "compare.choose"}


def compare(
    a: Any,
    b: Any,
    *,
    key: Any = None,
    names: Sequence[str] = ("A", "B"),
    settings: DisplaySettings | None = None,
) -> CompareWidget:
    """Two runs side by side (spec B-3): two transcripts, or two corpora joined sample by sample.

    ``a`` and ``b`` are transcripts, corpora (:func:`turnfold.scan`), or anything
    :func:`turnfold.comparison.open_run` reads: a folder or an eval log of several samples is
    scanned, anything else loaded. Two corpora are joined by ``key``, a function of a row (C-2) to a
    value both runs of a sample share, or the name of a column holding one (a dataset's ``id``);
    by default an eval sample's task, id and epoch, else the row's ``sample`` or file name
    (:class:`turnfold.comparison.SampleKey`). ``names`` are what the headers call the two runs.

    >>> from turnfold.samples import demo_session
    >>> widget = compare(demo_session(), demo_session())
    >>> widget.view["summary"]
    '2 turns aligned · 0 differ'
    >>> widget.close()
    """
    return CompareWidget(open_run(a), open_run(b), key=key, names=names, settings=settings)


class CompareWidget(anywidget.AnyWidget):
    """Two runs side by side: two transcripts, or two corpora (see :func:`compare`)."""

    _esm = view_bundle("compare.js")
    _css = view_css(COMPARE_CSS)

    _compare = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _table = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _folds = traitlets.Dict().tag(sync=True)
    _strings = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        a: Run,
        b: Run,
        *,
        key: Any = None,
        names: Sequence[str] = ("A", "B"),
        settings: DisplaySettings | None = None,
        **kwargs: Any,
    ) -> None:
        refuse_unknown(self, kwargs, "give display settings as settings=DisplaySettings(...)")
        # T-5: without explicit settings, the layered defaults. A comparison is drawn once:
        # the settings it was made with stay its settings.
        self.settings: SettingsSnapshot = (settings or load_settings()).snapshot()
        self.names = (str(names[0]), str(names[1]))
        self.comparison: TranscriptComparison | None = None
        self.view: CompareView | None = None
        self.rows: CorpusComparison | None = None
        self._corpora: tuple[Corpus, Corpus] | None = None
        self._page = 0
        self._transport = ViewTransport(self._index([]), self.send, self._wire_folds)
        strings = {**ui_strings(self.settings.locale), **self._ui_strings()}
        if isinstance(a, Transcript) and isinstance(b, Transcript):
            super().__init__(_strings=strings, **kwargs)
            self._show(compare_runs(a, b, self.settings), "compare")
        elif isinstance(a, Corpus) and isinstance(b, Corpus):
            super().__init__(_strings=strings, **kwargs)
            self._corpora = (a, b)
            self.rows = compare_rows(a.rows, b.rows, key)
            if self.rows.changed:  # the first regression (else change) is open from the start
                self.select(self.rows.changed[0].key)
            else:
                self._table = self._page_table()
        else:
            raise TypeError(
                "compare two transcripts or two corpora, not "
                f"{type(a).__name__} and {type(b).__name__}"
            )
        self.on_msg(self._on_view_message)

    def _ui_strings(self) -> dict[str, str]:
        return {name: translate(phrase, self.settings.locale) for name, phrase in _UI_KEYS.items()}

    # --- what is shown ---------------------------------------------------------------------------

    def _show(self, comparison: TranscriptComparison, key: str, only: str | None = None) -> None:
        """Send the view of ``comparison`` (of one run on side ``only``, when given), closed
        processes deferred (Q-2)."""
        self.comparison = comparison
        view = build_compare_view(comparison, self.settings, names=self.names, key=key,
                                  more_chars=OUTPUT_REST_CHARS, only=only)  # fmt: skip
        self.view = view
        nodes = [n for pair in view["pairs"] for n in (*(pair["a"] or []), *(pair["b"] or []))]
        self._transport = ViewTransport(self._index(nodes), self.send, self._wire_folds)
        self._compare = self._wire(view)

    def _wire(self, view: CompareView) -> dict[str, Any]:
        folds = self._side_folds(view["key"])
        pairs = [
            {
                **pair,
                "a": _wired(pair["a"], folds.get("a", {})),
                "b": _wired(pair["b"], folds.get("b", {})),
            }
            for pair in view["pairs"]
        ]
        return {**view, "pairs": pairs}

    def _side_folds(self, key: str) -> dict[str, Mapping[str, Any]]:
        """The reader's folds of comparison ``key``, by side (the view writes them: checked)."""
        saved = self._folds.get(key) if isinstance(self._folds, dict) else None
        if not isinstance(saved, dict):
            return {}
        return {side: folds for side, folds in saved.items() if isinstance(folds, dict)}

    def _wire_folds(self) -> dict[str, Any]:
        """Both sides' folds as one map: their keys never meet (``a/…``, ``b/…``)."""
        if self.view is None:
            return {}
        merged: dict[str, Any] = {}
        for folds in self._side_folds(self.view["key"]).values():
            merged.update(folds)
        return merged

    def _index(self, nodes: list[TopNode]) -> View:
        """Every node of both sides, as a view the transport answers ``content`` requests from."""
        return {"schema": SCHEMA_VERSION, "locale": self.settings.locale, "mode": "",
                "show_thinking": True, "session": None, "timeline": None, "outcome": None,
                "notice": None,
                "nodes": nodes}  # fmt: skip

    def _page_table(self, page: int | None = None) -> dict[str, Any]:
        assert self.rows is not None
        if page is not None:
            self._page = page
        selected, only = self._selected()
        table: PairTable = build_pair_table(self.rows, self.settings.locale, names=self.names,
                                            page=self._page, selected=selected,
                                            selected_only=only)  # fmt: skip
        self._page = table["page"]
        return dict(table)

    def _selected(self) -> tuple[str | None, str | None]:
        """The key of the row shown, and its side when it is a sample of one corpus."""
        return (self.view["key"], self.view["only"]) if self.view is not None else (None, None)

    # --- what the reader does --------------------------------------------------------------------

    def select(self, key: str, only: str | None = None) -> None:
        """Open the two runs of the changed sample ``key`` (a row of the table) side by side;
        with ``only`` (``"a"`` or ``"b"``), the one run of the sample ``key`` only that corpus
        holds, on its side."""
        if self.rows is None or self._corpora is None:
            raise ValueError("select() chooses a sample of two corpora")
        listed = table_rows(self.rows)
        sides = [None if isinstance(each, RowPair) else each.side for each in listed]
        at = next((n for n, each in enumerate(listed) if (each.key, sides[n]) == (key, only)), None)
        if at is None:
            raise KeyError(key if only is None else f"{key} (only in {only})")
        chosen = listed[at]
        corpus_a, corpus_b = self._corpora
        if isinstance(chosen, RowPair):
            runs = corpus_a[chosen.a["key"]], corpus_b[chosen.b["key"]]
            self._show(compare_runs(*runs, self.settings), chosen.key)
        else:
            run = (corpus_a if chosen.side == "a" else corpus_b)[chosen.row["key"]]
            self._show(compare_alone(run, chosen.side, self.settings), chosen.key, chosen.side)
        self._table = self._page_table(at // PAGE_ROWS)

    def page(self, page: int) -> None:
        """Show page ``page`` (from 0) of the table of changed samples."""
        if self.rows is not None:
            self._table = self._page_table(page)

    def _on_view_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        try:
            if kind == "select":
                only = content.get("only")
                self.select(str(content.get("key")), only if only in ("a", "b") else None)
            elif kind == "page":
                self.page(int(content.get("page", 0)))
            else:
                self._transport.receive(content, self)
        except (KeyError, ValueError, TypeError, OSError):
            # A request for what is not there (the view is untrusted), or a run whose file
            # went away since the scan: nothing changes.
            return

    # --- what the transport asks the widget (transport.Answers) ----------------------------------

    def search_hits(self, query: str) -> tuple[list[SearchHit], int, str]:
        """A comparison has no search box: no hits."""
        return [], 0, ""

    def output_parts(self, key: str) -> list[str]:
        """The whole output of the tool (or text of the message) ``key`` of either side, as plain
        text in parts."""
        found = split_key(key)
        if found is None or self.comparison is None:
            return [""]
        side, own = found
        run = self.comparison.a if side == "a" else self.comparison.b
        return output_parts(entry_for_key(run.transcript, own), self.settings.locale)

    # --- outputs (W-4) ---------------------------------------------------------------------------

    def _static_table(self) -> PairTable | None:
        if self.rows is None:
            return None
        selected, only = self._selected()
        return build_pair_table(self.rows, self.settings.locale, names=self.names,
                                selected=selected, selected_only=only,
                                page_rows=STATIC_TABLE_ROWS)  # fmt: skip

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The widget view plus deterministic ``text/plain`` and ``text/html`` (W-4)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        views = [self.view] if self.view is not None else []
        table = self._static_table()
        if table is None:
            assert self.view is not None
            plain = render_compare_text(self.view)
            html = render_compare_html(self.view, standalone=False, budget=STATIC_HTML_BUDGET)
        else:
            assert self.rows is not None
            texts = [render_table_text(table), *(render_compare_text(v) for v in views)]
            plain = "\n\n".join(texts)
            changed, alone = left_out(self.rows, len(table["rows"]))
            html = render_corpus_html(
                table, views, locale=self.settings.locale, standalone=False,
                left_out=changed, left_out_alone=alone, budget=STATIC_HTML_BUDGET,
            )  # fmt: skip
        return {**data, "text/plain": plain, "text/html": html}, metadata


def _wired(nodes: list[TopNode] | None, folds: Mapping[str, Any]) -> list[Any] | None:
    return None if nodes is None else [wire_node(node, folds) for node in nodes]
