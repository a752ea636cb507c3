"""The view model of a comparison: two runs side by side, each drawn as its own view (B-3).

:func:`build_compare_view` lays out a :class:`~turnfold.comparison.TranscriptComparison`: each
side's turns are the very nodes :mod:`turnfold.render.viewmodel` builds for a transcript (the
notebook view, the static page and the text outline draw them as they draw any transcript), cut
into the blocks the comparison aligned, with each pair's header stating what differs. The first
pair that differs has its processes open by default; every other fold keeps its own default.
:func:`build_pair_table` lays out a page of a :class:`~turnfold.comparison.CorpusComparison`.

Keys: every key of side ``a`` starts with ``a/`` and of side ``b`` with ``b/`` (two runs of one
harness number their entries alike), so the folds of the two sides never share a key. A page
of many comparisons (two corpora, each changed sample's pair in a section of its own) numbers
them: ``pair-2/a/``, so that no two of its elements share an ``id`` (``call-<key>``); the run of
a sample only one corpus holds (:func:`compare_alone`) is numbered ``only-3/a/`` there.
"""

from __future__ import annotations

from collections.abc import Sequence

from turnfold.comparison import (
    MATCH_THRESHOLD,
    AlignedPair,
    BlockFacts,
    CorpusComparison,
    LoneRow,
    Row,
    RowPair,
    Side,
    Totals,
    TranscriptComparison,
    compare_transcripts,
    side_of,
)
from turnfold.cost import NoCost, format_usd
from turnfold.gcpause import collector_paused
from turnfold.i18n import plural, translate
from turnfold.model import Transcript
from turnfold.render.compare_nodes import (
    CompareSide,
    CompareView,
    DiffPart,
    PairHeader,
    PairNode,
    PairTable,
    TableRow,
    TotalsLine,
)
from turnfold.render.content import MORE_CHARS, plain_text
from turnfold.render.nodes import SessionNode, SessionPart, TopNode
from turnfold.render.viewmodel import (
    SCHEMA_VERSION,
    ViewHead,
    compact_count,
    outcome_badge,
    plan_view,
)
from turnfold.settings import DisplaySettings, SettingsSnapshot, snapshot_of
from turnfold.tools import format_duration

__all__ = [
    "ONLY_NAMED",
    "PAGE_ROWS",
    "SIDES",
    "build_compare_view",
    "build_pair_table",
    "compare_alone",
    "compare_runs",
    "left_out",
    "side_prefix",
    "split_key",
    "table_rows",
]

#: The two sides, by the prefix of their keys.
SIDES = ("a", "b")
#: Rows of the table of changed samples a page shows.
PAGE_ROWS = 50
#: Tools whose counts changed that a pair's header names; the rest is "…".
TOOLS_SHOWN = 4
#: Samples of one corpus only that the summary names, per corpus; the rest it counts (a log of
#: thousands against an empty one is still a summary of one line).
ONLY_NAMED = 10
#: Reasons a corpus's totals give for its items with no cost; the rest is "…".
NO_COST_SHOWN = 3


def side_prefix(side: str, pair: int | None = None, *, section: str = "pair") -> str:
    """The prefix of every key of a side's nodes; with ``pair``, of the side of the
    ``pair``-th comparison of a page of many, whose section is named ``section`` (see the
    module docstring).

    >>> side_prefix("a"), side_prefix("b", 2), side_prefix("a", 3, section="only")
    ('a/', 'pair-2/b/', 'only-3/a/')
    """
    return f"{side}/" if pair is None else f"{section}-{pair}/{side}/"


def split_key(key: str) -> tuple[str, str] | None:
    """A comparison's node key as ``(side, the key in its own transcript's view)``; None for a
    key of no side (a numbered pair's are a page's, never a widget's)."""
    side, slash, own = key.partition("/")
    return (side, own) if slash and side in SIDES else None


def compare_runs(
    a: Transcript,
    b: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    pair: int | None = None,
) -> TranscriptComparison:
    """``a`` and ``b`` aligned, planned under ``settings`` with their sides' key prefixes (of
    the ``pair``-th comparison of a page of many, when given)."""
    snapshot = snapshot_of(settings)
    return compare_transcripts(
        side_of(a, snapshot, key_prefix=side_prefix("a", pair)),
        side_of(b, snapshot, key_prefix=side_prefix("b", pair)),
    )


def compare_alone(
    transcript: Transcript,
    side: str,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    pair: int | None = None,
) -> TranscriptComparison:
    """The run of a sample only one corpus holds, on its ``side``, against nothing: each of its
    blocks a pair with no counterpart, drawn by :func:`build_compare_view` with ``only=side``
    (numbered ``only-<pair>`` on a page of many)."""
    snapshot = snapshot_of(settings)
    a, b = (
        side_of(transcript if each == side else Transcript(), snapshot,
                key_prefix=side_prefix(each, pair, section="only"))
        for each in SIDES
    )  # fmt: skip
    return compare_transcripts(a, b, by_kind=False)


def build_compare_view(
    comparison: TranscriptComparison,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    names: Sequence[str] = ("A", "B"),
    key: str = "compare",
    more_chars: int | None = MORE_CHARS,
    only: str | None = None,
) -> CompareView:
    """The view of ``comparison`` (made by :func:`compare_runs` with the same settings; by
    :func:`compare_alone`, with its side as ``only``).

    ``names`` are the two runs' names as the headers say them; ``key`` is the comparison's
    own, under which a widget remembers the reader's folds.
    """
    snapshot = snapshot_of(settings)
    locale = snapshot.locale
    sides: list[CompareSide] = []
    blocks: list[list[list[TopNode]]] = []
    for side, run, name in zip(SIDES, (comparison.a, comparison.b), names, strict=True):
        # Two views of long sessions are millions of new, long-lived objects, as one is.
        with collector_paused():
            head, nodes = _side_view(run, snapshot, more_chars)
        blocks.append(nodes)
        if only is not None and side != only:  # no run at all, not a run of no turns
            absent = translate("compare.not_in", locale, side=name)
            sides.append({"key": side, "name": name, "session": None, "outcome": None,
                          "notice": None, "gap": absent})  # fmt: skip
            continue
        sides.append({
            "key": side,
            "name": name,
            "session": head.session if _has_turns(run) else _no_turns(head.session, locale),
            "outcome": head.outcome,
            "notice": head.notice,
            "gap": translate("compare.gap", locale, side=name),
        })  # fmt: skip
    # A run alone differs from nothing: its folds keep its own view's defaults.
    first = comparison.first_difference if only is None else None
    pairs: list[PairNode] = []
    links: dict[str, str] = {}
    for index, pair in enumerate(comparison.pairs):
        a_nodes = blocks[0][pair.a] if pair.a is not None else None
        b_nodes = blocks[1][pair.b] if pair.b is not None else None
        if index == first:  # the first place the runs part: open, ready to read (B-3)
            for node in (*(a_nodes or []), *(b_nodes or [])):
                if node["kind"] == "turn" and node["process"]:
                    node["process"]["open"] = True
        links.update(_links(a_nodes or [], b_nodes or []))
        pairs.append({
            "kind": "pair",
            "key": f"pair:{_first_key(a_nodes)}|{_first_key(b_nodes)}",
            "header": _notices_header(pair, _notice_count(comparison, pair), locale, names)
            if pair.notices
            else _pair_header(pair, locale, names, by_kind=comparison.by_kind),
            "a": a_nodes,
            "b": b_nodes,
        })  # fmt: skip
    summary = (
        _summary(comparison, locale, names) if only is None else _alone_summary(only, locale, names)
    )
    return {
        "schema": SCHEMA_VERSION,
        "key": key,
        "locale": locale,
        "mode": snapshot.transcript_display_mode,
        "show_thinking": snapshot.show_thinking,
        "sides": sides,
        "summary": summary,
        "first": pairs[first]["key"] if first is not None else None,
        "links": links,
        "pairs": pairs,
        "only": only,
    }


def _side_view(
    run: Side, settings: SettingsSnapshot, more_chars: int | None
) -> tuple[ViewHead, list[list[TopNode]]]:
    """A side's head (session, outcome, notice) and its nodes, block by block."""
    plan = plan_view(run.transcript, settings, items=run.items, more_chars=more_chars)
    nodes = plan.nodes(run.items)
    for node in nodes:
        # A turn's keys carry the side's prefix from its projection; an item that is an entry
        # of its own (a prompt, a notice) is keyed by its id alone.
        if node["kind"] != "turn":
            node["key"] = run.key_prefix + node["key"]
    cut: list[list[TopNode]] = []
    start = 0
    for block in run.blocks:
        cut.append(nodes[start : start + len(block.items)])
        start += len(block.items)
    return plan.head, cut


def _has_turns(run: Side) -> bool:
    """Whether a run has a turn: one whose only blocks are notices (or that has none) has not."""
    return any(block.segments for block in run.blocks)


def _no_turns(session: SessionNode | None, locale: str) -> SessionNode:
    """A run's session header saying it has no turns, where a header with turns counts them
    (its header leaves out a count of none; a run of nothing has no header at all): a run
    read as nothing says so rather than show its name over an empty line."""
    said: SessionPart = {"name": "turns", "text": translate("compare.no_turns", locale),
                         "title": None}  # fmt: skip
    parts = list(session["parts"]) if session else []
    at = next((n for n, part in enumerate(parts) if part["name"] in _AFTER_TURNS), len(parts))
    parts.insert(at, said)
    return {"kind": "session", "key": "session", "text": " · ".join(p["text"] for p in parts),
            "parts": parts}  # fmt: skip


#: The parts of a session header that follow its count of turns (see ``session_header``).
_AFTER_TURNS = frozenset({"tools", "tokens", "tokens_so_far", "tokens_failed_attempts", "cost",
                          "no_cost"})  # fmt: skip


def _first_key(nodes: list[TopNode] | None) -> str:
    return nodes[0]["key"] if nodes else ""


def _links(a: list[TopNode], b: list[TopNode]) -> dict[str, str]:
    """The processes of the two sides' turns, in order, each linked to its counterpart."""
    processes = [
        [n["process"]["key"] for n in nodes if n["kind"] == "turn" and n["process"]]
        for nodes in (a, b)
    ]
    links: dict[str, str] = {}
    for key_a, key_b in zip(*processes, strict=False):
        links[key_a], links[key_b] = key_b, key_a
    return links


# --- a pair's header ---------------------------------------------------------------------------


def _pair_header(
    pair: AlignedPair, locale: str, names: Sequence[str], *, by_kind: bool
) -> PairHeader:
    status = pair.status
    if pair.a is not None and pair.b is not None and pair.a != pair.b:
        label = translate("compare.turns", locale, a=pair.a + 1, b=pair.b + 1)
    else:
        number = pair.a if pair.a is not None else pair.b
        label = translate("compare.turn", locale, number=(number or 0) + 1)
    if status == "only-a" or status == "only-b":
        status_label = translate("compare.only_in", locale, side=names[SIDES.index(status[-1])])
    else:
        status_label = translate(f"compare.{status}", locale)
    if pair.facts_a is not None and pair.facts_b is not None:
        parts = _differences(pair, pair.facts_a, pair.facts_b, locale, names, by_kind)
    else:
        facts = pair.facts_a or pair.facts_b
        assert facts is not None
        parts = _facts(facts, locale)
    text = " · ".join([label, status_label, *(part["text"] for part in parts)])
    return {"label": label, "status": status, "status_label": status_label, "parts": parts,
            "text": text}  # fmt: skip


def _notices_header(pair: AlignedPair, count: int, locale: str, names: Sequence[str]) -> PairHeader:
    """The header of the ``count`` notices of a run that has no turn: how many, on which side,
    and that the run has no turn; no turn's facts, for there is none."""
    side = names[0] if pair.b is None else names[1]
    label = plural("compare.notices", count, locale)
    status_label = translate("compare.only_in", locale, side=side)
    parts = [_part("turns", translate("compare.no_turns_in", locale, side=side))]
    text = " · ".join([label, status_label, *(part["text"] for part in parts)])
    return {"label": label, "status": pair.status, "status_label": status_label,
            "parts": parts, "text": text}  # fmt: skip


def _notice_count(comparison: TranscriptComparison, pair: AlignedPair) -> int:
    """How many notices a pair of notices holds (each an item of its block)."""
    side, index = (comparison.a, pair.a) if pair.a is not None else (comparison.b, pair.b)
    assert index is not None
    return len(side.blocks[index].items)


def _part(name: str, text: str, changed: bool = False) -> DiffPart:
    return {"name": name, "text": text, "changed": changed}


def _differences(
    pair: AlignedPair,
    a: BlockFacts,
    b: BlockFacts,
    locale: str,
    names: Sequence[str],
    by_kind: bool,
) -> list[DiffPart]:
    differ = set(pair.differences)
    parts: list[DiffPart] = []
    if "prompt" in differ:
        # Paired by its place rather than by its words: another prompt, not an edited one.
        edited = pair.similarity >= MATCH_THRESHOLD
        phrase = "compare.prompt_edited" if edited else "compare.prompt_other"
        parts.append(_part("prompt", translate(phrase, locale), True))
    elif a.prompt is None or b.prompt is None:
        parts.append(_part("prompt", _prompt_not_recorded(a, b, locale, names)))
    if "status" in differ:
        text = f"{_status(a, locale)} → {_status(b, locale)}"
        parts.append(_part("status", text, True))
    tools = _kinds(a, b, locale) if by_kind else _tools(a, b, locale)
    parts.append(_part("tools", tools, "tools" in differ))
    if "failed" in differ:
        parts.append(_part("failed", translate("compare.failed", locale, a=a.failed_tools,
                                               b=b.failed_tools), True))  # fmt: skip
    elif a.failed_tools:
        parts.append(_part("failed", plural("compare.failed_same", a.failed_tools, locale)))
    tokens = _pair_tokens(a, b, locale, names)
    if tokens is not None:
        parts.append(_part("tokens", tokens))
    duration = _pair_duration(a, b, locale, names)
    if duration is not None:
        parts.append(_part("duration", duration))
    if (a.answer is None) != (b.answer is None):  # one run never answered: not another answer
        side = names[0] if a.answer is None else names[1]
        parts.append(_part("answer", translate("compare.no_answer_in", locale, side=side), True))
    elif a.answer is not None:
        changed = "answer" in differ
        phrase = "compare.answer_changed" if changed else "compare.answer_same"
        parts.append(_part("answer", translate(phrase, locale), changed))
    return parts


def _facts(facts: BlockFacts, locale: str) -> list[DiffPart]:
    """The parts of a block with no counterpart: what it did, on its own."""
    parts = [_part("tools", plural("session.tools", facts.tool_calls, locale))]
    if facts.status is not None:
        parts.insert(0, _part("status", _status(facts, locale)))
    if facts.failed_tools:
        parts.append(_part("failed", plural("compare.failed_same", facts.failed_tools, locale)))
    if not facts.tokens_per_turn:
        parts.append(_part("tokens", translate("session.tokens_not_per_turn", locale)))
    elif facts.tokens is not None:
        parts.append(_part("tokens", translate("session.tokens", locale,
                                               tokens=compact_count(facts.tokens))))  # fmt: skip
    if facts.duration_ms is not None:
        parts.append(_part("duration", _duration(facts.duration_ms)))
    return parts


def _status(facts: BlockFacts, locale: str) -> str:
    """A block's status as its turn header says it; a prompt no turn answered says so."""
    return translate(f"header.{facts.status}" if facts.status else "compare.not_answered", locale)


def _tools(a: BlockFacts, b: BlockFacts, locale: str) -> str:
    """The tools whose call counts differ (``Read 3 → 1``), or the count both made."""
    counts_a, counts_b = dict(a.tools), dict(b.tools)
    if counts_a == counts_b:
        return plural("session.tools", a.tool_calls, locale)
    names = dict.fromkeys([*counts_a, *counts_b])
    changed = [f"{name} {counts_a.get(name, 0)} → {counts_b.get(name, 0)}" for name in names
               if counts_a.get(name, 0) != counts_b.get(name, 0)]  # fmt: skip
    shown = ", ".join(changed[:TOOLS_SHOWN])
    return shown + (", …" if len(changed) > TOOLS_SHOWN else "")


def _prompt_not_recorded(a: BlockFacts, b: BlockFacts, locale: str, names: Sequence[str]) -> str:
    """Which side's source does not record the prompt (so that no one can say it differs)."""
    if a.prompt is None and b.prompt is None:
        return translate("compare.prompts_not_recorded", locale)
    side = names[0] if a.prompt is None else names[1]
    return translate("compare.prompt_not_recorded", locale, side=side)


def _kinds(a: BlockFacts, b: BlockFacts, locale: str) -> str:
    """Two agents' tools by category, the real names beside each count: the categories whose
    counts differ (``read 1 → 2 (Read → read_file)``) or whose names do (``command 1 (Bash →
    run_shell_command)``); the count both made when they used the same tools alike."""
    kinds_a = {kind: (count, names) for kind, count, names in a.kinds}
    kinds_b = {kind: (count, names) for kind, count, names in b.kinds}
    said = []
    for kind in dict.fromkeys([*kinds_a, *kinds_b]):
        count_a, names_a = kinds_a.get(kind, (0, ()))
        count_b, names_b = kinds_b.get(kind, (0, ()))
        if count_a != count_b:
            said.append(f"{kind} {count_a} → {count_b} ({_names(names_a, names_b)})")
        elif names_a != names_b:
            said.append(f"{kind} {count_a} ({_names(names_a, names_b)})")
    if not said:
        return plural("session.tools", a.tool_calls, locale)
    shown = ", ".join(said[:TOOLS_SHOWN])
    return shown + (", …" if len(said) > TOOLS_SHOWN else "")


def _names(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    """The tools of one category on each side: ``Read``, or ``Read → read_file``."""
    said_a, said_b = ", ".join(a), ", ".join(b)
    if said_a == said_b or not said_b:
        return said_a
    return f"{said_a} → {said_b}" if said_a else said_b


def _pair_tokens(a: BlockFacts, b: BlockFacts, locale: str, names: Sequence[str]) -> str | None:
    """The pair's tokens; where one side records none for the turn (a source that records no
    usage, a response that failed before any) or records them for its session only, the pair
    says so rather than ``— → 30 tokens`` or a turn's figure that is not recorded (U-1), as
    the session header does."""
    if a.tokens is not None and b.tokens is not None:
        if a.tokens == b.tokens:
            return translate("session.tokens", locale, tokens=compact_count(a.tokens))
        said_a, said_b = compact_count(a.tokens), compact_count(b.tokens)
        return translate("compare.tokens", locale, a=said_a, b=said_b)
    if a.tokens is None and b.tokens is None:
        per_turn = a.tokens_per_turn and b.tokens_per_turn
        return None if per_turn else translate("session.tokens_not_per_turn", locale)
    count, side, missing, other = (a.tokens, names[0], b, names[1])
    if count is None:
        count, side, missing, other = (b.tokens, names[1], a, names[0])
    assert count is not None
    phrase = "compare.tokens_not_recorded_in"
    if not missing.tokens_per_turn:
        phrase = "compare.tokens_not_per_turn_in"
    return translate(phrase, locale, side=side, other=other, tokens=compact_count(count))


def _pair_duration(a: BlockFacts, b: BlockFacts, locale: str, names: Sequence[str]) -> str | None:
    """The pair's time; where one side's turns record none (Codex's ``exec --json`` events
    carry no time at all), the pair says so rather than ``292ms → —``, as it does of tokens."""
    if a.duration_ms is not None and b.duration_ms is not None:
        time_a, time_b = _duration(a.duration_ms), _duration(b.duration_ms)
        return time_a if time_a == time_b else f"{time_a} → {time_b}"
    if a.duration_ms is not None:
        return translate("compare.time_not_recorded_in", locale, time=_duration(a.duration_ms),
                         side=names[0], other=names[1])  # fmt: skip
    if b.duration_ms is not None:
        return translate("compare.time_not_recorded_in", locale, time=_duration(b.duration_ms),
                         side=names[1], other=names[0])  # fmt: skip
    return None


def _duration(ms: float) -> str:
    return format_duration(ms, hide_trailing_zeros=True)


def _summary(comparison: TranscriptComparison, locale: str, names: Sequence[str]) -> str:
    """How many turns aligned, how many of them differ, how many have no counterpart; a run
    with no turn says so (not "0 turns aligned", which reads as two runs that parted), its
    notices counted apart, for they are no turn."""
    statuses: list[str] = [pair.status for pair in comparison.pairs]
    parts: list[str] = []
    turnless = False
    for side, run, name in zip(SIDES, (comparison.a, comparison.b), names, strict=True):
        if _has_turns(run):
            continue
        turnless = True
        parts.append(translate("compare.no_turns_in", locale, side=name))
        notices = sum(_notice_count(comparison, pair) for pair in comparison.pairs
                      if pair.status == f"notices-{side}")  # fmt: skip
        if notices:
            parts.append(plural("compare.notices_in", notices, locale, side=name))
    if not turnless:
        aligned = sum(1 for s in statuses if s in ("same", "differs"))
        parts.append(plural("compare.aligned", aligned, locale))
        if aligned:
            parts.append(plural("compare.differ_count", statuses.count("differs"), locale))
    for side, name in zip(SIDES, names, strict=True):
        alone = statuses.count(f"only-{side}")
        if alone:
            parts.append(translate("compare.only_count", locale, count=alone, side=name))
    return " · ".join(parts)


def _alone_summary(only: str, locale: str, names: Sequence[str]) -> str:
    """What a run of a sample only one corpus holds is compared with: nothing."""
    at = SIDES.index(only)
    return translate("compare.sample_only_in", locale, side=names[at], other=names[1 - at])


# --- two corpora -------------------------------------------------------------------------------


def build_pair_table(
    comparison: CorpusComparison,
    locale: str,
    *,
    names: Sequence[str] = ("A", "B"),
    page: int = 0,
    selected: str | None = None,
    selected_only: str | None = None,
    page_rows: int | None = PAGE_ROWS,
) -> PairTable:
    """Page ``page`` of the samples that changed, then of those only one corpus holds
    (:func:`table_rows`; ``page_rows=None``: every one of them); ``selected`` and
    ``selected_only`` are the row shown."""
    listed = table_rows(comparison)
    size = page_rows or max(1, len(listed))
    pages = max(1, -(-len(listed) // size))
    page = min(max(page, 0), pages - 1)
    rows = [_row(each, locale, names) for each in listed[page * size : (page + 1) * size]]
    first = page * size + 1
    return {
        "summary": _table_summary(comparison, locale, names),
        "totals": [
            _totals(side, name, totals, locale)
            for side, name, totals in zip(
                SIDES, names, (comparison.totals_a, comparison.totals_b), strict=True
            )
        ],
        "columns": [
            translate("compare.column.sample", locale),
            translate("compare.column.change", locale),
            *names,
        ],
        "rows": rows,
        "page": page,
        "pages": pages,
        "range_label": _range(first, len(rows), len(listed), locale),
        "selected": selected,
        "selected_only": selected_only if selected is not None else None,
        "empty": None if comparison.changed else translate("compare.none_changed", locale),
    }


def table_rows(comparison: CorpusComparison) -> list[RowPair | LoneRow]:
    """The rows of the table, in order: the changed pairs, then the samples only one corpus
    holds (a sample added or removed is as much a change to read as a regression)."""
    return [*comparison.changed, *comparison.alone]


def left_out(comparison: CorpusComparison, shown: int) -> tuple[int, int]:
    """How many changed pairs, and how many samples of one corpus only, a table of its first
    ``shown`` rows (:func:`table_rows`) leaves out."""
    changed = min(len(comparison.changed), shown)
    return len(comparison.changed) - changed, len(comparison.alone) - (shown - changed)


def _row(listed: RowPair | LoneRow, locale: str, names: Sequence[str]) -> TableRow:
    if isinstance(listed, RowPair):
        return {
            "kind": "pair-row",
            "key": listed.key,
            "title": _one_line(listed.a.get("title") or listed.b.get("title")),
            "change": listed.change,
            "change_label": translate(f"compare.{listed.change}", locale),
            "a": _run(listed.a, locale),
            "b": _run(listed.b, locale),
            "only": None,
        }
    at = SIDES.index(listed.side)
    held, absent = _run(listed.row, locale), translate("compare.not_in", locale, side=names[1 - at])
    return {
        "kind": "pair-row",
        "key": listed.key,
        "title": _one_line(listed.row.get("title")),
        "change": "only",
        "change_label": translate("compare.only_in", locale, side=names[at]),
        "a": held if at == 0 else absent,
        "b": absent if at == 0 else held,
        "only": listed.side,
    }


def _range(first: int, shown: int, total: int, locale: str) -> str:
    """Which rows a page shows: ``1–50 of 120``."""
    if not shown:
        return ""
    return translate("compare.range", locale, first=first, last=first + shown - 1, total=total)


def _one_line(text: object) -> str | None:
    return " ".join(text.split()) if isinstance(text, str) and text.strip() else None


def _run(row: Row, locale: str) -> str:
    """A run's outcome and score as its transcript's badge says them (H-6)."""
    badge = outcome_badge({"outcome": row.get("outcome"), "score": row.get("score")}, locale)
    return badge["text"] if badge else translate("compare.no_outcome", locale)


def _totals(side: str, name: str, totals: Totals, locale: str) -> TotalsLine:
    parts = [plural("compare.items", totals.items, locale)]
    if totals.pass_rate is not None:
        parts.append(translate("compare.pass_rate", locale, rate=f"{totals.pass_rate:.0%}"))
    if totals.cost_usd is not None:
        cost = f"≈ ${format_usd(totals.cost_usd)}"
        if totals.priced < totals.items:  # U-2: a sum that leaves runs out says so
            cost = translate("compare.cost_of_some", locale, cost=cost, count=totals.priced,
                             items=totals.items)  # fmt: skip
        parts.append(cost)
    if totals.no_cost:
        parts.append(_no_cost(totals.no_cost, locale))
    if totals.duration_s is not None:
        parts.append(_duration(totals.duration_s * 1000))
    return {"side": side, "name": name, "text": " · ".join(parts)}


def _no_cost(reasons: Sequence[str], locale: str) -> str:
    """U-2: why a corpus's items with tokens have no cost, as their session headers say it
    (:class:`~turnfold.cost.NoCost`), in the reader's language: the reasons their rows hold,
    read back (a text this version does not word, from a row another version wrote, as the
    row holds it). A model's name is the transcript's (X-1): its controls made visible, as a
    header's are."""
    said = ""
    for reason in reasons[:NO_COST_SHOWN]:
        read = NoCost.read(reason)
        one = read.reason_in(locale) if read is not None else reason
        said = translate("list.clauses", locale, first=said, second=one) if said else one
    if len(reasons) > NO_COST_SHOWN:
        said = translate("list.clauses", locale, first=said, second="…")
    return plain_text(translate("cost.none", locale, reason=said))


def _table_summary(comparison: CorpusComparison, locale: str, names: Sequence[str]) -> str:
    counts = dict.fromkeys(("regressed", "improved", "changed"), 0)
    for pair in comparison.changed:
        counts[pair.change] += 1
    parts = [translate(f"compare.{change}_count", locale, count=count)
             for change, count in counts.items() if count or change == "regressed"]  # fmt: skip
    parts.append(translate("compare.same_count", locale, count=comparison.same))
    for alone, name in ((comparison.only_a, names[0]), (comparison.only_b, names[1])):
        if alone:
            parts.append(translate("compare.only_items_named", locale, count=len(alone),
                                   side=name, samples=_named(alone, locale)))  # fmt: skip
    return " · ".join(parts)


def _named(samples: Sequence[str], locale: str) -> str:
    """The samples of one corpus only, by their keys: the first :data:`ONLY_NAMED`, then how
    many more."""
    separator = translate("list.separator", locale)
    named = separator.join(samples[:ONLY_NAMED])
    if len(samples) <= ONLY_NAMED:
        return named
    return translate("compare.only_items_more", locale, samples=named,
                     count=len(samples) - ONLY_NAMED)  # fmt: skip
