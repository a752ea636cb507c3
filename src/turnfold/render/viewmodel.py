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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

from turnfold.batches import SummaryRow, ToolRow
from turnfold.gcpause import collector_paused
from turnfold.i18n import plural, translate
from turnfold.model import (
    AbortMarker,
    AssistantError,
    CompactionBoundary,
    ImageData,
    LoadWarning,
    PendingAction,
    SystemNotice,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.process import (
    ActivityGroup,
    BatchPiece,
    CommandRow,
    PlannedItem,
    ProgressRow,
    ThinkingIndicator,
    ThinkingRow,
    TopLevel,
    Turn,
    plan_projection,
    project,
)
from turnfold.render.content import (
    MORE_CHARS,
    escape,
    image_html,
    image_note,
    markdown_html,
    pretty_json,
    result_view,
    thinking_html,
)
from turnfold.settings import DisplaySettings, SettingsSnapshot, snapshot_of
from turnfold.tools import display_name

SCHEMA_VERSION = 1
Node = dict[str, Any]


@dataclass(frozen=True)
class _Options:
    """What every node of one view is built with."""

    settings: SettingsSnapshot
    more_chars: int | None


def build_view_model(
    transcript: Transcript,
    settings: DisplaySettings | None = None,
    *,
    running: bool | None = None,
    more_chars: int | None = MORE_CHARS,
) -> Node:
    """The whole view of ``transcript`` under ``settings`` as JSON-ready dicts.

    ``more_chars`` caps how much of each long output's hidden rest is rendered (the rest is
    counted as ``omitted_lines``); ``None`` renders every output whole.
    """
    # A view of a long session is millions of new, long-lived objects, like a load.
    with collector_paused():
        plan = plan_view(transcript, settings, running=running, more_chars=more_chars)
        return {**plan.head, "nodes": plan.nodes(plan.items)}


@dataclass(frozen=True)
class ViewPlan:
    """A view model before its nodes are built: the projection and what building needs.

    The top-level nodes are independent of each other, so a renderer may build them in any
    order, in pieces or in another process (:mod:`turnfold.render.page`), and join the pieces:
    ``{**plan.head, "nodes": plan.nodes(plan.items)}`` is :func:`build_view_model`'s result.
    """

    head: Node
    """The view's fields besides ``nodes``, in the view's key order."""
    items: list[PlannedItem]
    """The projection still to do: one item per top-level node."""
    options: _Options

    def nodes(self, items: list[PlannedItem]) -> list[Node]:
        """The top-level nodes of ``items`` (a slice of :attr:`items`)."""
        return [_top_level(item.project(), self.options, "") for item in items]


def plan_view(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    running: bool | None = None,
    more_chars: int | None = MORE_CHARS,
    items: list[PlannedItem] | None = None,
) -> ViewPlan:
    """The head of ``transcript``'s view model and its projection, still to be done.

    ``items`` are the planned items when the caller planned them already (a widget following a
    growing transcript plans with a :class:`turnfold.process.ProjectionPlanner`).
    """
    snapshot = snapshot_of(settings)
    head = {
        "schema": SCHEMA_VERSION,
        "locale": snapshot.locale,
        "mode": snapshot.transcript_display_mode,
        "show_thinking": snapshot.show_thinking,
        "outcome": outcome_badge(transcript.metadata, snapshot.locale),
        "notice": _warnings_notice(transcript, snapshot.locale),
    }
    if items is None:
        items = plan_projection(transcript, snapshot, running=running)
    return ViewPlan(head, items, _Options(snapshot, more_chars))


def _nodes(
    transcript: Transcript, options: _Options, *, running: bool | None, prefix: str
) -> list[Node]:
    projected = project(transcript, options.settings, running=running, key_prefix=prefix)
    return [_top_level(item, options, prefix) for item in projected]


#: The outcomes every harness's loader normalises to (spec H-6); others are named as written.
OUTCOMES = ("pass", "fail", "error", "incomplete")
#: At most this many scorers are named in the badge (an eval may have dozens).
_SCORERS_SHOWN = 4


def outcome_badge(metadata: Mapping[str, Any], locale: str) -> Node | None:
    """H-6: the run's outcome, score and cost, shown beside the transcript's title, from the
    standard metadata keys (``outcome``, ``score``, ``cost_usd``); None when none is recorded."""
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
    cost = metadata.get("cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        parts.append(translate("outcome.cost", locale, cost=f"{cost:.4g}"))
    if not parts:
        return None
    status = outcome if isinstance(outcome, str) and outcome in OUTCOMES else "other"
    return {"kind": "outcome", "key": "outcome", "status": status, "text": " · ".join(parts)}


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


def _warnings_notice(transcript: Transcript, locale: str) -> Node | None:
    """One quiet notice for everything the loader skipped (L-4)."""
    if not transcript.warnings:
        return None
    count = len(transcript.warnings)
    return {
        "kind": "notice",
        "key": "warnings",
        "text": plural("warnings.skipped", count, locale),
        "items": [escape(str(_published(w))) for w in transcript.warnings],
    }


def _published(warning: LoadWarning) -> LoadWarning:
    """The warning naming its file, never the file's absolute path: pages get published."""
    if warning.source is None or warning.source.startswith("<"):
        return warning
    return replace(warning, source=PurePath(warning.source).name)


def _pasted_images(images: list[ImageData], locale: str) -> str:
    """Images pasted into a prompt, shown the way a tool result's images are (issue 21.4):
    after the escaped text (which holds no markup), each in its own box, or a note."""
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


def _top_level(item: TopLevel, options: _Options, prefix: str) -> Node:
    locale = options.settings.locale
    if isinstance(item, UserMessage):
        return {
            "kind": "user",
            "key": f"{prefix}{item.id}",
            "label": translate("user.label", locale),
            "command": escape(item.command) if item.command else None,
            "html": escape(item.text) + _pasted_images(item.images, locale),
        }
    if isinstance(item, SystemNotice):
        return {"kind": "system", "key": f"{prefix}{item.id}", "level": item.level,
                "html": escape(item.text)}  # fmt: skip
    if isinstance(item, CompactionBoundary):
        return {
            "kind": "compaction",
            "key": f"{prefix}{item.id}",
            "text": translate("turn.compacted", locale),
            "summary_html": markdown_html(item.summary) if item.summary else None,
        }
    return _turn(item, options)


def _turn(turn: Turn, options: _Options) -> Node:
    header = turn.header
    parts = [header.label, header.duration, header.count_text if header.tool_count else None]
    process = turn.process
    return {
        "kind": "turn",
        "key": turn.key,
        "status": header.status,
        "running": turn.running,
        "header": {
            "label": header.label,
            "duration": header.duration,
            "count": header.count_text if header.tool_count else None,
            "text": " · ".join(p for p in parts if p),
        },
        "process": None
        if process is None
        else {
            "key": process.key,
            "open": process.open,
            "active": process.active,
            "children": [_child(item, options) for item in process.items],
        },
        "outside": [_outside(entry, turn.key, options.settings.locale) for entry in turn.outside],
        "answer": None
        if turn.answer is None
        else {
            "kind": "answer",
            "key": _entry_key(turn.key, turn.answer.id),
            "html": markdown_html(turn.answer.text),
            "tentative": turn.tentative,
        },
    }


def _entry_key(turn_key: str, entry_id: str) -> str:
    """An entry's key under the same sub-agent prefix as its turn's key."""
    prefix = turn_key[: turn_key.rfind("turn:")]
    return f"{prefix}{entry_id}"


def _outside(
    entry: AssistantError | AbortMarker | PendingAction, turn_key: str, locale: str
) -> Node:
    key = _entry_key(turn_key, entry.id)
    if isinstance(entry, AssistantError):
        return {"kind": "error", "key": key, "html": escape(entry.message)}
    if isinstance(entry, AbortMarker):
        text = translate("turn.aborted", locale)
        return {"kind": "abort", "key": key, "html": escape(entry.reason or text)}
    return {
        "kind": "pending",
        "key": key,
        "action": entry.action,
        "label": translate(f"pending.{entry.action}", locale),
        "html": escape(entry.text),
        "options": [escape(option) for option in entry.options],
    }


def _child(item: Any, options: _Options) -> Node:
    locale = options.settings.locale
    if isinstance(item, ActivityGroup):
        return {
            "kind": "group",
            "key": item.key,
            "title": item.title,
            "count": item.count_text,
            "open": item.open,
            "active": item.active,
            "children": [_child(i, options) for i in item.items],
        }
    if isinstance(item, ThinkingRow):
        entry = item.entry
        return {
            "kind": "thinking",
            "key": item.key,
            "label": translate("thinking.label", locale),
            "form": entry.form,
            "html": thinking_html(entry, locale),
            "open": item.open,
            "streaming": entry.streaming,
        }
    if isinstance(item, ThinkingIndicator):
        return {"kind": "thinking-indicator", "key": item.key,
                "label": translate("thinking.label", locale)}  # fmt: skip
    if isinstance(item, ProgressRow):
        return {"kind": "progress", "key": item.key, "html": markdown_html(item.entry.text)}
    if isinstance(item, CommandRow):
        tool_key = item.key.replace("command:", "", 1)  # the row keeps its entry's own key
        return {"kind": "command", "key": item.key,
                "tool": _tool(item.call, item.row, tool_key, options)}  # fmt: skip
    if isinstance(item, BatchPiece):
        return _batch(item, options)
    raise TypeError(f"unknown process item {item!r}")


def _batch(piece: BatchPiece, options: _Options) -> Node:
    prefix = piece.key[: piece.key.rfind("batch")]
    calls = {c.id: c for c in piece.calls}
    rows: list[Node] = []

    def tool(row: ToolRow) -> Node:
        return _tool(calls[row.entry_id], row, f"{prefix}{row.entry_id}", options)

    for item in piece.items:
        if isinstance(item, SummaryRow):
            rows.append({
                "kind": "summary",
                "key": f"{prefix}summary:{item.rows[0].entry_id}",
                "text": item.text,
                "active": item.active,
                "open": False,  # P-8: no leaf payload opens by default
                "tools": [tool(r) for r in item.rows],
            })  # fmt: skip
        else:
            rows.append(tool(item))
    return {
        "kind": "batch",
        "key": piece.key,
        "active": piece.active,
        "rows": rows,
        "memory": piece.memory_badges,
        "label": piece.label_line,
    }


def _arguments(args: Any) -> str | None:
    if args is None or args == {} or args == "":
        return None
    return escape(args if isinstance(args, str) else pretty_json(args))


def _tool(call: ToolCall, row: ToolRow, key: str, options: _Options) -> Node:
    locale = options.settings.locale
    subagent = None
    if call.subagent is not None:
        child = call.subagent.transcript
        subagent = {
            "line": escape(row.subagent_line) if row.subagent_line else None,
            "nodes": _nodes(child, options, running=None, prefix=f"{key}/") if child else [],
        }
    return {
        "kind": "tool",
        "key": key,
        "call_id": escape(call.call_id),
        "name": escape(display_name(call.name)),
        "category": row.category,
        "status": call.status,
        "status_text": translate(f"status.{call.status}", locale),
        "description": escape(row.description) if row.description else None,
        "args": _arguments(call.args),
        "show_args": row.show_args,
        "result": result_view(call.result, more_chars=options.more_chars),
        "result_folded": row.result_folded,
        "forced_open": row.result_forced_open,
        "struck": row.struck,
        "open": False,  # P-8: no leaf payload opens by default
        "subagent": subagent,
    }


# --- navigation (P-11) ---------------------------------------------------------------------------


def _walk(nodes: list[Node], path: list[str]) -> Iterator[tuple[Node, list[str]]]:
    """Every node with the keys of the disclosures that contain it."""
    for node in nodes:
        yield node, path
        kind = node.get("kind")
        if kind == "turn":
            process = node.get("process")
            if process:
                yield from _walk(process["children"], [*path, process["key"]])
            yield from _walk(node.get("outside", []), path)
            if node.get("answer"):
                yield node["answer"], path
        elif kind == "group":
            yield from _walk(node["children"], [*path, node["key"]])
        elif kind == "batch":
            yield from _walk(node["rows"], path)
        elif kind == "command":
            yield from _walk([node["tool"]], path)
        elif kind == "summary":
            yield from _walk(node["tools"], [*path, node["key"]])
        elif kind == "tool" and node.get("subagent"):
            yield from _walk(node["subagent"]["nodes"], [*path, node["key"]])


def ancestor_path(view: Node, key: str) -> list[str] | None:
    """The keys to open so the node ``key`` (an entry's key) is visible, outermost first.

    Only the path is returned (P-11): the turn's process and, where one exists, the activity
    group, summary row or sub-agent call containing it; nothing else is opened. None when no
    node has that key.
    """
    for node, path in _walk(view["nodes"], []):
        if node.get("key") == key:
            return path
    return None


def iter_nodes(view: Node) -> Iterator[Node]:
    """Every node of the view, depth first (for renderers, search and tests)."""
    for node, _ in _walk(view["nodes"], []):
        yield node


def open_all(nodes: list[Node]) -> list[Node]:
    """``nodes`` with every fold open (changes them and returns them): ``turnfold --expand``.

    Only the default ``open`` flags change; what each fold holds stays as the view model says.
    """
    for node, _ in _walk(nodes, []):
        if "open" in node:
            node["open"] = True
        if node.get("kind") == "turn" and node.get("process"):
            node["process"]["open"] = True
    return nodes


__all__ = [
    "SCHEMA_VERSION",
    "ViewPlan",
    "ancestor_path",
    "build_view_model",
    "iter_nodes",
    "open_all",
    "plan_view",
]
