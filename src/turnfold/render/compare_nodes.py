"""The schema of a comparison's view model, and of the compare widget's messages (spec B-3).

A comparison is drawn from the same nodes a transcript is (:mod:`turnfold.render.nodes`): each
side of each aligned pair is a list of top-level nodes. What this module adds is what holds them
side by side: the pairs with their headers, the two sides' session headers, the links between
counterpart folds, and, for two corpora, the table of the samples that changed. As for the
transcript's schema, ``js/src/compare.d.ts`` is generated from these classes
(``python -m turnfold.render.compare_nodes``) and ``tsc --strict`` checks the JS view against it.
"""

from __future__ import annotations

import sys
from typing import Literal, TypedDict

from turnfold.render.nodes import NoticeNode, OutcomeNode, SessionNode, TopNode

# --- two transcripts ----------------------------------------------------------------------------


class DiffPart(TypedDict):
    """One fact of a pair's header: ``name`` (``prompt``, ``status``, ``tools``, ``failed``,
    ``tokens``, ``duration``, ``answer``; ``turns`` for a run's notices when it has no turn),
    the text shown (``A → B`` where the runs differ), and whether it makes the pair differ
    (tokens and time never do: any two runs differ)."""

    name: str
    text: str
    changed: bool


class PairHeader(TypedDict):
    """What a pair's header says: which turns, whether they differ, and how."""

    #: ``Turn 3``, or ``Turn 3 ↔ 4`` when the two sides number it apart; ``1 notice`` for
    #: the notices of a run that has no turn
    label: str
    #: ``"same"``, ``"differs"``, ``"only-a"`` or ``"only-b"``; ``"notices-a"`` or
    #: ``"notices-b"`` for a run's notices when it has no turn (aligned with nothing)
    status: str
    status_label: str
    parts: list[DiffPart]
    text: str  #: label, status and parts joined, for the text and HTML renderings


class PairNode(TypedDict):
    """One aligned pair: a prompt and its turns on each side, as the transcript view draws
    them (keys prefixed ``a/`` and ``b/``); None on the side where it has no counterpart."""

    kind: Literal["pair"]
    key: str
    header: PairHeader
    a: list[TopNode] | None
    b: list[TopNode] | None


class CompareSide(TypedDict):
    """One run's head: its name and the header its own view would open with (U-3, H-6, L-4)."""

    key: str  #: ``"a"`` or ``"b"``, the prefix of its nodes' keys
    name: str
    session: SessionNode | None
    outcome: OutcomeNode | None
    notice: NoticeNode | None
    gap: str  #: what a gap on this side says


class CompareView(TypedDict):
    """Two transcripts side by side (:func:`turnfold.render.compare_view.build_compare_view`)."""

    schema: int
    #: The comparison's own key: the folds of its two sides are remembered under it (P-10).
    key: str
    locale: str
    mode: str
    show_thinking: bool
    sides: list[CompareSide]
    summary: str
    #: The key of the first pair that differs (its processes open by default), or None.
    first: str | None
    #: Each turn process's counterpart on the other side, both ways: opening one opens both.
    links: dict[str, str]
    pairs: list[PairNode]
    #: ``"a"`` or ``"b"`` for the run of a sample only that corpus holds, shown on its side
    #: alone (the other side's gaps say the sample is not there); None for two runs.
    only: str | None


# --- two corpora --------------------------------------------------------------------------------


class TableRow(TypedDict):
    """A sample whose outcome or score changed, selecting it opens its two runs; or a sample
    only one corpus holds, selecting it opens its one run."""

    kind: Literal["pair-row"]
    key: str  #: the join key as text
    title: str | None  #: its prompt, one line
    #: ``"regressed"``, ``"improved"`` or ``"changed"``; ``"only"`` for a sample of one corpus
    change: str
    change_label: str
    a: str  #: outcome and score in the first corpus (or that the sample is not in it)
    b: str
    only: str | None  #: ``"a"`` or ``"b"``: the corpus that alone holds the sample


class TotalsLine(TypedDict):
    """One corpus in sum: items, pass rate, cost and time."""

    side: str
    name: str
    text: str


class PairTable(TypedDict):
    """The samples that changed between two corpora, then those only one of them holds, one
    page of them at a time."""

    summary: str
    totals: list[TotalsLine]
    columns: list[str]
    rows: list[TableRow]  #: this page's only
    page: int
    pages: int
    range_label: str
    selected: str | None
    #: The ``only`` of the selected row (two rows may share a key text: ``1`` and ``"1"``).
    selected_only: str | None
    empty: str | None  #: what the table says when nothing changed


# --- the widget's own traits and requests --------------------------------------------------------


class SelectRequest(TypedDict):
    """Open the runs of the table's row ``key`` (its ``only``: one run, on that side)."""

    type: Literal["select"]
    key: str
    only: str | None


class PageRequest(TypedDict):
    type: Literal["page"]
    page: int


class CompareTraits(TypedDict):
    """The traits a ``CompareWidget`` syncs with its views."""

    #: The comparison shown (its wire form: closed processes sent when opened), or None.
    _compare: CompareView | None
    #: The page of the table of changed samples (two corpora), or None (two transcripts).
    _table: PairTable | None
    #: The reader's fold choices by comparison key, then side (``"a"``, ``"b"``), then key.
    _folds: dict[str, dict[str, dict[str, Literal["open", "closed", "owned"]]]]
    _strings: dict[str, str]


#: Every class of the schema, in the order the JS declarations are written.
SCHEMA: tuple[type, ...] = (
    DiffPart, PairHeader, PairNode, CompareSide, CompareView, TableRow, TotalsLine, PairTable,
    SelectRequest, PageRequest, CompareTraits,
)  # fmt: skip


def typescript() -> str:
    """The schema as TypeScript declarations (``js/src/compare.d.ts``)."""
    from turnfold.render import nodes
    from turnfold.render.declarations import typescript as declare

    imported = (nodes.SessionNode, nodes.OutcomeNode, nodes.NoticeNode)
    return declare(
        SCHEMA,
        {},
        source="src/turnfold/render/compare_nodes.py",
        imports={"./nodes": (imported, {"TopNode": nodes.TopNode})},
    )


if __name__ == "__main__":
    sys.stdout.write(typescript())


__all__ = [
    "SCHEMA",
    "CompareSide",
    "CompareTraits",
    "CompareView",
    "DiffPart",
    "PageRequest",
    "PairHeader",
    "PairNode",
    "PairTable",
    "SelectRequest",
    "TableRow",
    "TotalsLine",
    "typescript",
]
