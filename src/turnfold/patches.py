"""What changed between two view models, as the widget sends it (spec W-2, Q-3).

A view has the last view model it was sent; a ``patch`` message turns it into the next one. At
the top level, a node that is new or moved travels whole, with the key of the node it follows
(:func:`diff_keyed`, :func:`diff_nodes`). A node that kept its key and its place but changed
inside (a followed run is one turn that grows with every call) travels as a **node patch**
(``transport.NodePatch``): only its own fields that changed, and the changes to its list of
nested nodes, by key, recursively:

* a turn: its fields (``status``, ``header``, ``outside``, ``answer``) and its process;
* a process, an activity group, a tool batch or a summary row (``ondemand.NESTED``): its own
  fields (``open``, ``active``, a group's ``title`` and ``count``, a batch's ``label``…) and
  its list of nested nodes (``children``, ``rows``, ``tools``): the new or moved ones whole,
  the removed ones by key, the changed ones of these kinds patched in turn, every other
  changed one whole (a tool, a thinking row, a progress note);
* a tool whose sub-agent's transcript is on the wire, before and now: its own fields, and the
  sub-agent's nodes (``subagent.nodes``) patched as the top-level nodes are, so a followed
  sub-agent's step costs its own bytes, not its whole transcript's.

So one appended call costs the bytes of its own row (and of the fields it changed), whatever
the length of the turn or of its batch, and the JS view redraws only that row.

Everything is compared by identity first: the widget reuses the node objects of what did not
change (``render.viewmodel.NodeReuse``), so the diff of a long turn passes over its unchanged
steps without looking into them.

What is sent is each node's wire form (:mod:`turnfold.ondemand`). A process deferred on the
wire, before or now, is never patched inside: it travels as a whole new process (only its
fields, if it is deferred now), and its content is asked for when it opens, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from turnfold.ondemand import (
    NESTED,
    Folds,
    process_deferred,
    subagent_on_wire,
    wire_child,
    wire_header,
    wire_node,
    wire_process,
    wire_tool_fields,
)

__all__ = ["Patcher", "diff_keyed", "diff_nodes"]

#: A node in a view model (read only here).
Node = Mapping[str, Any]

#: Fields of a turn that a patch never carries as fields: the process is patched on its own,
#: ``running`` no view reads (``ondemand.PYTHON_ONLY``).
_TURN_SKIP = frozenset({"kind", "key", "process", "running"})


def diff_keyed(
    old: Sequence[Node], new: Sequence[Node]
) -> tuple[list[tuple[str | None, Node, Node | None]], list[str]]:
    """How the keyed list ``old`` became ``new``: ``(steps, removed keys)``.

    Each step is ``(after, node, was)``, in ``new``'s order: ``node`` goes after the node keyed
    ``after`` (None: first). ``was`` is the node it replaces in the same place (same key, same
    node before it), which may be patched inside; None when ``node`` is new or moved, so it
    travels whole. Unchanged nodes are no step at all, and the unchanged head of the list is
    skipped by identity: the work is about the size of what changed (Q-3).
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
    steps: list[tuple[str | None, Node, Node | None]] = []
    previous = anchor
    for key, node in zip(new_keys, new, strict=True):
        was = old_by_key.get(key)
        if was is None or before[key] != previous:
            steps.append((previous, node, None))
        elif was is not node and was != node:
            steps.append((previous, node, was))
        previous = key
    return steps, removed


def diff_nodes(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The changes that turn ``old`` into ``new`` with every changed node whole:
    ``([{"after": key or None, "node": node}], removed keys)`` (the timeline's turns travel so).

    A node is sent when it is new, when it differs (JSON equality), or when the node before it
    changed, so the receiver can keep order with no list of every key: an append sends one
    node, whatever the length of the list.
    """
    steps, removed = diff_keyed(old, new)
    return [{"after": after, "node": node} for after, node, _ in steps], removed


class Patcher:
    """The wire form of what changed between two lists of top-level nodes.

    ``folds`` are the reader's fold choices now; ``whole_before`` and ``whole`` whether the old
    and the new view travel whole (N-1), which decides which processes were and are sent
    deferred.
    """

    def __init__(self, folds: Folds, *, whole_before: bool, whole: bool) -> None:
        self.folds = folds
        self.whole_before = whole_before
        self.whole = whole

    def top(
        self, old: Sequence[Node], new: Sequence[Node]
    ) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]:
        """``(upserts, removed keys, node patches)`` that turn the top-level nodes ``old`` into
        ``new``, in wire form: what a ``patch`` message carries."""
        steps, removed = diff_keyed(old, new)
        upserts: list[dict[str, Any]] = []
        changes: list[dict[str, Any]] = []
        for after, node, was in steps:
            if was is not None and node["kind"] == "turn":
                change = self._turn(was, node)
                if change is not None:
                    changes.append(change)
                continue
            upserts.append({"after": after, "node": wire_node(node, self.folds, whole=self.whole)})
        return upserts, removed, changes

    def _turn(self, old: Node, new: Node) -> dict[str, Any] | None:
        fields = _changed_fields(old, new, _TURN_SKIP)
        if "header" in fields:
            header = wire_header(new["header"])
            if header == wire_header(old["header"]):  # only what no view reads changed
                del fields["header"]
            else:
                fields["header"] = header
        nested: list[dict[str, Any]] = []
        was, process = old["process"], new["process"]
        if was is not process:
            if was is None or process is None or was["key"] != process["key"]:
                fields["process"] = self._process(process)
            else:
                sent = process_deferred(was, self.folds, whole=self.whole_before)
                if sent or process_deferred(process, self.folds, whole=self.whole):
                    # A view may hold the process's content from before it was deferred (sent
                    # while it ran, or while the view fitted whole): the process travels as a
                    # whole new one, deferred or not, so no view keeps stale content.
                    fields["process"] = self._process(process)
                else:
                    change = self._nested(was, process)
                    if change is not None:
                        nested.append(change)
        return _patch(new["key"], fields, [], [], nested)

    def _process(self, process: Node | None) -> dict[str, Any] | None:
        return None if process is None else wire_process(process, self.folds, whole=self.whole)

    def _nested(self, old: Node, new: Node) -> dict[str, Any] | None:
        """The patch of a node that holds a list: its own fields, then its list by key."""
        field = NESTED[str(new["kind"])]
        fields = _changed_fields(old, new, frozenset({"kind", "key", field}))
        steps, removed = diff_keyed(old[field], new[field])
        upserts: list[dict[str, Any]] = []
        changes: list[dict[str, Any]] = []
        for after, node, was in steps:
            if was is not None and node["kind"] in NESTED:
                change = self._nested(was, node)
            elif was is not None and self._subagent_patchable(was, node):
                change = self._subagent(was, node)
            else:
                upserts.append(
                    {"after": after, "node": wire_child(node, self.folds, whole=self.whole)}
                )
                continue
            if change is not None:
                changes.append(change)
        return _patch(new["key"], fields, upserts, removed, changes)

    def _subagent_patchable(self, old: Node, new: Node) -> bool:
        """A tool whose sub-agent's nodes a view holds and will hold, under the same line."""
        return (
            new["kind"] == "tool"
            and old["kind"] == "tool"
            and subagent_on_wire(old, self.folds, whole=self.whole_before)
            and subagent_on_wire(new, self.folds, whole=self.whole)
            and old["subagent"].get("line") == new["subagent"].get("line")
        )

    def _subagent(self, old: Node, new: Node) -> dict[str, Any] | None:
        """The patch of a tool whose sub-agent grew: its own fields, its nodes as the top's."""
        was = wire_tool_fields(old, self.folds, whole=self.whole_before)
        now = wire_tool_fields(new, self.folds, whole=self.whole)
        fields = _changed_fields(was, now, frozenset({"kind", "key", "subagent"}))
        upserts, removed, changes = self.top(old["subagent"]["nodes"], new["subagent"]["nodes"])
        return _patch(new["key"], fields, upserts, removed, changes)


def _changed_fields(old: Node, new: Node, skip: frozenset[str]) -> dict[str, Any]:
    """The fields of ``new`` that differ from ``old``'s (a field ``old`` lacks differs)."""
    missing = object()
    return {
        name: value
        for name, value in new.items()
        if name not in skip and (known := old.get(name, missing)) is not value and known != value
    }


def _patch(
    key: str,
    fields: dict[str, Any],
    upserts: list[dict[str, Any]],
    removed: list[str],
    changes: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """A node patch with only the parts it needs; None when nothing a view reads changed."""
    if not (fields or upserts or removed or changes):
        return None
    patch: dict[str, Any] = {"key": key}
    if fields:
        patch["fields"] = fields
    if upserts:
        patch["upsert"] = upserts
    if removed:
        patch["remove"] = removed
    if changes:
        patch["change"] = changes
    return patch
