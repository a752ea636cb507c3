"""What the widget sends up front, and what it sends only when a reader opens it (spec Q-2, W-2).

The view model holds everything a person could see. The *wire form* of a node is what the JS
view needs to draw it now, and the widget sends only that:

* A turn whose process is closed is sent as its header, answer and the surfaces outside the fold,
  with ``process.deferred = true`` and no children: a settled transcript of thousands of turns
  costs about what its text rendering costs, not what its tool outputs cost.
* A tool whose hidden part (a folded result, a sub-agent's transcript) is large is sent as its
  row, with ``deferred = true`` instead of that part: a 5 MB output travels only when its row
  is opened, and then capped as the view model caps it (F-12).
* The timeline under the session header (U-4), closed by default, is sent without its turns.
* Fields that only Python reads are left out (:data:`PYTHON_ONLY`): a result's plain ``text``
  (search runs in Python), facts the view model already turned into the ``fold`` flags and labels
  the view draws, and a turn header's joined ``text`` (for the text and HTML renderings).

A view small enough travels **whole** instead (spec N-1): when the wire form of every node with
everything it holds is at most :data:`WHOLE_VIEW_BUDGET` bytes of JSON (:class:`WholeSize`),
nothing is deferred, so the widget's saved state alone folds completely in a notebook exported
with no kernel, and a live view never waits for a round trip.

When the reader opens a deferred disclosure, the view asks for it by key (``content``) and gets
its wire form with the content inside. A fold the reader already opened (the ``_folds`` the view
syncs) is never deferred, so a re-displayed view restores it without a round trip. The whole of
an output the view model capped is sent on request too, as plain text in parts (``output``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from turnfold import codec, keys
from turnfold.model import AssistantText, Entry, ToolCall, Transcript, UserMessage
from turnfold.render.content import plain_text, result_text
from turnfold.render.nodes import TimelineNode
from turnfold.render.viewmodel import iter_nodes, worded_result
from turnfold.timeline import closed

__all__ = [
    "INLINE_HIDDEN_CHARS",
    "NESTED",
    "OUTPUT_PART_CHARS",
    "PYTHON_ONLY",
    "WHOLE_VIEW_BUDGET",
    "NodeIndex",
    "WholeSize",
    "entry_for_key",
    "output_parts",
    "process_deferred",
    "wire_child",
    "wire_header",
    "wire_node",
    "wire_process",
    "wire_timeline",
]

#: A node of the view model (read only here; see :mod:`turnfold.render.nodes`).
Node = Mapping[str, Any]
#: A node's wire form, built here.
Wire = dict[str, Any]
Folds = Mapping[str, Any]

#: A tool's hidden part up to this many characters of HTML travels with its row: fetching it
#: would cost a round trip for fewer bytes than the request and reply themselves.
INLINE_HIDDEN_CHARS = 2_000

#: The whole of a capped output is sent in parts of this many characters, so neither side parses
#: one multi-megabyte message in a single task.
OUTPUT_PART_CHARS = 256 * 1024

#: N-1: a view whose whole wire form is at most this many bytes of JSON is sent whole (1 MB per
#: widget): a notebook saved with widget state then folds completely without a kernel. Past it,
#: what is closed is sent when a reader opens it, and a saved notebook shows headers and answers.
WHOLE_VIEW_BUDGET = 1_000_000

_OPENED = ("open", "owned")

#: The kinds of node that hold a list of nested nodes, and the field that holds it.
NESTED = {"process": "children", "group": "children", "batch": "rows", "summary": "tools"}

#: Fields of the view model that no view reads, by the kind of node (``result``: a tool's result).
PYTHON_ONLY: dict[str, frozenset[str]] = {
    "turn": frozenset({"running"}),
    "header": frozenset({"text"}),
    "tool": frozenset({"call_id", "category", "status_text", "result_folded", "forced_open"}),
    "result": frozenset(
        {
            "text",
            "kind",
            "lines",
            "truncated",
            "more_lines",
            "notes",
            "omitted_lines",
            "omitted_label",
        }
    ),
}


def _without(node: Node, kind: str) -> Wire:
    drop = PYTHON_ONLY[kind]
    return {key: value for key, value in node.items() if key not in drop}


def wire_node(node: Node, folds: Folds, *, whole: bool = False) -> Node:
    """The wire form of a top-level node (see the module docstring); ``whole``: with every
    disclosure's content (N-1). ``node`` is not changed."""
    if node.get("kind") != "turn":
        return node
    turn = _without(node, "turn")
    turn["header"] = wire_header(node["header"])
    process = node.get("process")
    if process is not None:
        turn["process"] = wire_process(process, folds, whole=whole)
    return turn


def wire_header(header: Node) -> Wire:
    """The wire form of a turn's header (what its process's disclosure draws)."""
    return _without(header, "header")


def wire_process(process: Node, folds: Folds, *, whole: bool = False) -> Wire:
    """The wire form of a turn's process: closed and not opened by the reader, only its fields
    (``deferred``), unless the view travels ``whole``."""
    if process_deferred(process, folds, whole=whole):
        return {**process, "children": [], "deferred": True}
    return {**process, "children": _children(process["children"], folds, whole)}


def process_deferred(process: Node, folds: Folds, *, whole: bool = False) -> bool:
    """Whether the wire form of ``process`` leaves its children out (:func:`wire_process`)."""
    return not whole and _deferred(process, folds)


def wire_child(node: Node, folds: Folds, *, whole: bool = False) -> Node:
    """The wire form of a node inside a process (a group, a batch, a row): its tools' large
    hidden parts deferred unless ``whole``."""
    return _child(node, folds, whole)


def wire_timeline(
    timeline: TimelineNode | None, folds: Folds, *, whole: bool = False
) -> TimelineNode | None:
    """The wire form of the timeline (U-4): closed, and not opened by the reader, it is sent
    as its header (:func:`turnfold.timeline.closed`); the view asks for the rest when it opens
    (``content`` of its key). ``whole``: a laid-out timeline is sent as it is (N-1)."""
    if timeline is None or timeline["open"] or folds.get(timeline["key"]) in _OPENED:
        return timeline
    if whole and not timeline.get("deferred"):
        return timeline
    return closed(timeline)


def _deferred(process: Node, folds: Folds) -> bool:
    """Closed by default, and nothing in it opened or worked in by the reader (P-10)."""
    if process.get("open") or folds.get(process["key"]) in _OPENED:
        return False
    if not any(choice in _OPENED for choice in folds.values()):
        return True  # the reader opened nothing anywhere: no need to walk what it holds
    return not any(folds.get(key) in _OPENED for key in _keys(process["children"]))


def _every(nodes: Sequence[Node]) -> Iterator[Node]:
    """Every node under ``nodes`` (the view model's own walk), and every turn's process."""
    for node in iter_nodes({"nodes": nodes}):
        yield node
        if node["kind"] == "turn" and node["process"]:
            yield node["process"]


def _keys(nodes: Sequence[Node]) -> Iterator[str]:
    return (node["key"] for node in _every(nodes))


def _children(nodes: Sequence[Node], folds: Folds, whole: bool = False) -> list[Node]:
    return [_child(node, folds, whole) for node in nodes]


def _child(node: Node, folds: Folds, whole: bool = False) -> Node:
    kind = node.get("kind")
    if kind == "tool":
        return _tool(node, folds, whole=whole)
    if kind == "command":
        return {**node, "tool": _tool(node["tool"], folds, whole=whole)}
    if kind == "group":
        return {**node, "children": _children(node["children"], folds, whole)}
    if kind == "batch":
        return {**node, "rows": _children(node["rows"], folds, whole)}
    if kind == "summary":
        return {**node, "tools": _children(node["tools"], folds, whole)}
    return node


def subagent_on_wire(node: Node, folds: Folds, *, whole: bool = False) -> bool:
    """Whether the wire form of tool ``node`` holds its sub-agent's nodes (a patch may then
    reach into them: :class:`turnfold.patches.Patcher`)."""
    return bool((node.get("subagent") or {}).get("nodes")) and not _tool_deferred(
        node, folds, expand=whole
    )


def wire_tool_fields(node: Node, folds: Folds, *, whole: bool = False) -> Wire:
    """The wire form of tool ``node`` with its sub-agent's nodes left out (``[]``)."""
    return _tool(node, folds, whole=whole, nested=False)


def _tool_deferred(node: Node, folds: Folds, *, expand: bool) -> bool:
    """Whether a tool's hidden part is left out of its wire form (asked for when opened)."""
    return not (
        expand or folds.get(node["key"]) in _OPENED or _hidden_size(node) <= INLINE_HIDDEN_CHARS
    )


def _tool(
    node: Node, folds: Folds, *, expand: bool = False, whole: bool = False, nested: bool = True
) -> Wire:
    """A tool's wire form; ``expand``: with its hidden part, whatever its size; ``whole``: with
    everything under it too (a sub-agent's processes); ``nested=False``: its sub-agent's nodes
    left out."""
    expand = expand or whole
    tool = _without(node, "tool")
    result = node.get("result")
    if result is not None:
        tool["result"] = _without(result, "result")
    deferred = _tool_deferred(node, folds, expand=expand)
    fold = node.get("fold") or {}
    subagent = node.get("subagent")
    if subagent:
        # A folded sub-agent's transcript is left out before its wire form is made: a followed
        # sub-agent's row is sent at every step it takes.
        nodes = subagent.get("nodes") or []
        if not nested or (deferred and fold.get("subagent")):
            nodes = []
        tool["subagent"] = {**subagent, "nodes": [wire_node(n, folds, whole=whole) for n in nodes]}
    if not deferred:
        return tool
    if fold.get("result"):
        tool["result"] = None
    tool["deferred"] = True
    return tool


def _hidden_size(node: Node) -> int:
    """Characters of what the tool's row hides; a sub-agent's transcript always counts as large."""
    fold = node.get("fold") or {}
    if fold.get("subagent") and (node.get("subagent") or {}).get("nodes"):
        return INLINE_HIDDEN_CHARS + 1
    result = node.get("result") or {}
    if not fold.get("result"):
        return 0
    return sum(len(result.get(field) or "") for field in ("html", "more_html")) + sum(
        map(len, result.get("images") or [])
    )


class WholeSize:
    """Whether a view fits :data:`WHOLE_VIEW_BUDGET` whole (N-1), cheaply as it grows.

    Each top-level node's whole wire form is measured once, and remembered while the widget
    reuses the node (the same object: its turn did not change), so an update measures only the
    turns that changed (Q-3); past the budget, the nodes after it are not measured at all. A
    turn's process is measured child by child, each child remembered the same way, so a turn
    that grows is measured at the cost of what it gained (the JSON of a list is its items and
    the commas between them: the sum is exact).
    """

    def __init__(self, budget: int | None = None) -> None:
        self.budget = WHOLE_VIEW_BUDGET if budget is None else budget
        self._sizes: dict[str, tuple[Node, int]] = {}
        self._children: dict[str, tuple[Node, int]] = {}
        self._children_now: dict[str, tuple[Node, int]] = {}

    def fits(self, nodes: Sequence[Node], head: Sequence[Node | None] = ()) -> bool:
        """Whether ``nodes`` whole, and the head's fields ``head`` (the timeline laid out,
        the session header), are at most the budget together."""
        total = sum(len(codec.dump_bytes(part)) for part in head if part is not None)
        sizes: dict[str, tuple[Node, int]] = {}
        self._children_now = {}
        for node in nodes:
            known = self._sizes.get(node["key"])
            size = known[1] if known is not None and known[0] is node else self._top(node)
            sizes[node["key"]] = (node, size)
            total += size
            if total > self.budget:
                break
        self._sizes = sizes
        self._children = self._children_now
        return total <= self.budget

    def _top(self, node: Node) -> int:
        process = node.get("process") if node.get("kind") == "turn" else None
        if not process:
            return len(codec.dump_bytes(wire_node(node, {}, whole=True)))
        shell = wire_node({**node, "process": {**process, "children": []}}, {}, whole=True)
        return len(codec.dump_bytes(shell)) + self._list(process["children"])

    def _list(self, nodes: Sequence[Node]) -> int:
        return sum(self._child(node) for node in nodes) + max(len(nodes) - 1, 0)

    def _child(self, node: Node) -> int:
        known = self._children.get(node["key"])
        if known is not None and known[0] is node:
            size = known[1]
        elif node.get("kind") in NESTED:
            field = NESTED[node["kind"]]
            shell = {**node, field: []}
            size = len(codec.dump_bytes(shell)) + self._list(node[field])
        elif node.get("kind") == "tool" and (node.get("subagent") or {}).get("nodes"):
            # A sub-agent's transcript, measured node by node like the view's own (each
            # remembered while it is the same object), so a followed sub-agent's step costs
            # what it added.
            nested = node["subagent"]["nodes"]
            shell = {**node, "subagent": {**node["subagent"], "nodes": []}}
            size = len(codec.dump_bytes(_child(shell, {}, whole=True)))
            size += sum(map(self._nested_top, nested)) + len(nested) - 1
        else:
            size = len(codec.dump_bytes(_child(node, {}, whole=True)))
        self._children_now[node["key"]] = (node, size)
        return size

    def _nested_top(self, node: Node) -> int:
        """The size of a top-level node of a sub-agent's transcript, remembered as a child's."""
        known = self._children.get(node["key"])
        size = known[1] if known is not None and known[0] is node else self._top(node)
        self._children_now[node["key"]] = (node, size)
        return size


class NodeIndex:
    """The nodes of one view by key, for answering ``content`` requests (built on first use)."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self._nodes = nodes
        self._by_key: dict[str, Node] | None = None

    def get(self, key: str) -> Node | None:
        if self._by_key is None:
            self._by_key = {node["key"]: node for node in _every(self._nodes)}
        return self._by_key.get(key)

    def defers(self, key: str, folds: Folds) -> bool:
        """Whether the (not whole) wire form leaves out what the disclosure ``key`` holds."""
        node = self.get(key)
        if node is None:
            return False
        if node.get("kind") == "tool":
            return bool(_tool(node, folds).get("deferred"))
        return node.get("kind") == "process" and _deferred(node, folds)

    def content(self, key: str, folds: Folds) -> Node | None:
        """The wire form of the disclosure ``key`` with what it holds, or None if there is none.

        A process comes with its children (large tool outputs inside still deferred); a tool
        with its hidden result or sub-agent transcript.
        """
        node = self.get(key)
        if node is None:
            return None
        if node.get("kind") == "tool":
            return _tool(node, folds, expand=True)
        if node.get("kind") == "process":
            return {**node, "children": _children(node["children"], folds)}
        return _child(node, folds)


def entry_for_key(transcript: Transcript, key: str) -> Entry | None:
    """The entry a view-model key names: an entry id, or ``"<spawning call key>/<id>"``."""
    *outer, own = keys.call_path(key)
    for part in outer:
        call = transcript.get(part)
        child = call.subagent.transcript if isinstance(call, ToolCall) and call.subagent else None
        if child is None:
            return None
        transcript = child
    return transcript.get(own)


def output_parts(entry: Entry | None, locale: str) -> list[str]:
    """The whole of what a view capped, in parts, as plain text (escape sequences read,
    controls made visible; the view sets it as text, never as HTML): a tool call's result, in
    ``locale`` as the view says it, or a message's text (an answer, a progress note or a prompt
    past ``content.PROSE_CHARS``)."""
    if isinstance(entry, ToolCall):
        text = result_text(worded_result(entry.result, locale) if entry.result else None)
    elif isinstance(entry, AssistantText | UserMessage):
        text = plain_text(entry.text)
    else:
        text = ""
    parts = [text[i : i + OUTPUT_PART_CHARS] for i in range(0, len(text), OUTPUT_PART_CHARS)]
    return parts or [""]
