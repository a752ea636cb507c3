"""W-2, Q-3: what a live widget sends is what changed, and it turns each view into the next.

A view applies a ``patch`` to what it has (``js/src/tree.js``); :func:`apply_patch` does the
same here. Over random growth of a transcript (calls appended to one batch or to new ones,
statuses changing, reasoning, progress notes, labels, new turns, the display mode switched,
the run settling), every patch applied to the view before it gives the view after it, in both
regimes of N-1 (whole, and past the budget with closed processes deferred). The same patches
applied by the JS view's own code give the same views.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnfold import ondemand
from turnfold.model import ToolCall
from turnfold.patches import Patcher, diff_keyed
from turnfold.recording import Recorder
from turnfold.widget import TranscriptWidget

JS_TREE = Path(__file__).resolve().parent.parent / "js" / "src" / "tree.js"

# --- what a view does with a patch (mirrors js/src/tree.js) ---------------------------------------

NESTED = ondemand.NESTED


def upsert_keyed(
    items: list[dict[str, Any]], upserts: list[dict[str, Any]], removed: list[str]
) -> list[dict[str, Any]]:
    gone = set(removed)
    out = [item for item in items if item["key"] not in gone]
    for upsert in upserts:
        node = upsert["node"]
        out = [item for item in out if item["key"] != node["key"]]
        after = upsert["after"]
        index = 0 if after is None else [i["key"] for i in out].index(after) + 1
        out.insert(index, node)
    return out


def apply_changes(
    items: list[dict[str, Any]], changes: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    by_key = {change["key"]: change for change in changes or []}
    return [apply_node_patch(i, by_key[i["key"]]) if i["key"] in by_key else i for i in items]


def apply_node_patch(node: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = {**node, **patch.get("fields", {})}
    field = NESTED.get(out["kind"])
    if field and not out.get("deferred"):
        items = upsert_keyed(out[field], patch.get("upsert", []), patch.get("remove", []))
        out[field] = apply_changes(items, patch.get("change"))
    if out["kind"] == "turn" and out["process"]:
        (out["process"],) = apply_changes([out["process"]], patch.get("change"))
    if out["kind"] == "tool" and out.get("subagent"):
        nodes = upsert_keyed(
            out["subagent"]["nodes"], patch.get("upsert", []), patch.get("remove", [])
        )
        out["subagent"] = {**out["subagent"], "nodes": apply_changes(nodes, patch.get("change"))}
    return out


def apply_patch(view: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    assert patch["type"] == "patch"
    nodes = upsert_keyed(view["nodes"], patch["upsert"], patch["remove"])
    assert "timeline" not in patch  # a closed timeline changes only as a field
    return {**view, **patch.get("fields", {}), "nodes": apply_changes(nodes, patch.get("change"))}


# --- a transcript that grows at random ------------------------------------------------------------

TOOLS = ("Read", "Grep", "Bash", "Edit", "Glob", "Task")
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("tool"), st.sampled_from(TOOLS)),
        st.tuples(st.just("finish"), st.sampled_from(("success", "error"))),
        st.tuples(st.just("end_batch"), st.none()),
        st.tuples(st.just("text"), st.none()),
        st.tuples(st.just("think"), st.none()),
        st.tuples(st.just("user"), st.none()),
        st.tuples(st.just("label"), st.none()),
        st.tuples(st.just("mode"), st.sampled_from(("flat", "command-first", "fully-folded"))),
        st.tuples(st.just("settle"), st.booleans()),
        st.tuples(st.just("subagent"), st.none()),
        st.tuples(st.just("child"), st.sampled_from(("tool", "finish", "text", "think"))),
    ),
    min_size=1,
    max_size=40,
)


class Growth:
    """A recorded run shown in a widget, every message it sends kept."""

    def __init__(self) -> None:
        self.rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
        self.rec.user("Fix the failing tests")
        self.widget = TranscriptWidget(self.rec.transcript, running=True)
        self.sent: list[dict[str, Any]] = []
        self.widget._transport._send = self.sent.append
        # Each step is flushed by hand (patches): the update timer, whose thread may run a step
        # late on a busy machine, would split one step's changes over two patches.
        self.widget._schedule = lambda delay=None: None  # type: ignore[method-assign]
        self.count = 0
        #: The sub-agents' own recorders, growing apart from the run (as a framework's do).
        self.children: list[Recorder] = []

    def step(self, kind: str, arg: Any) -> None:
        rec, self.count = self.rec, self.count + 1
        running = [c for c in rec.transcript.tool_calls() if c.status == "executing"]
        if kind == "tool":
            rec.start_tool(str(arg), {"path": f"src/m{self.count}.py", "pattern": "x"})
        elif kind == "finish" and running:
            rec.finish_tool(running[0], f"output {self.count}\n" * 3, status=arg)
        elif kind == "end_batch":
            rec.end_batch()
        elif kind == "text":
            rec.assistant(f"Progress {self.count}")
        elif kind == "think":
            rec.thinking(f"Reasoning {self.count}")
        elif kind == "user":
            rec.user(f"Question {self.count}")
        elif kind == "label":
            calls = [e for e in rec.transcript.entries if isinstance(e, ToolCall)]
            if calls:
                rec.label(calls[-1:], f"Did step {self.count}")
        elif kind == "mode":
            self.widget.transcript_display_mode = arg
        elif kind == "settle":
            self.widget.running = arg
        elif kind == "subagent":
            child = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
            child.user(f"Sub-task {self.count}")
            call = rec.start_tool("Task", {"description": f"sub-task {self.count}"})
            rec.attach_subagent(call, child.transcript, name="helper")
            self.children.append(child)
        elif kind == "child" and self.children:
            self.grow_child(self.children[-1], arg)

    def grow_child(self, child: Recorder, kind: str) -> None:
        """A step of the latest sub-agent: its transcript alone changes, not its call."""
        running = [c for c in child.transcript.tool_calls() if c.status == "executing"]
        if kind == "tool":
            child.start_tool("Bash", {"command": f"make {self.count}"})
        elif kind == "finish" and running:
            child.finish_tool(running[0], f"built {self.count}\n")
        elif kind == "text":
            child.assistant(f"Sub-step {self.count}")
        elif kind == "think":
            child.thinking(f"Sub-reasoning {self.count}")

    def patches(self, steps: list[tuple[str, Any]]) -> Iterator[tuple[Any, Any, Any]]:
        """Each step's ``(view before, patch, view after)``, as the views were sent them."""
        for kind, arg in steps:
            before = self.widget._transport.wire_view()
            self.sent.clear()
            self.step(kind, arg)
            self.widget.flush()
            patches = [m for m in self.sent if m["type"] == "patch"]
            assert len(patches) <= 1
            after = self.widget._transport.wire_view()
            yield before, (patches[0] if patches else None), after

    def close(self) -> None:
        self.widget.close()


def comparable(view: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    """``view`` as the view ``like`` sends what it holds differently only by N-1's regimes.

    A view may hold the content of a process or a tool sent while the view fitted whole, which
    is deferred since (it no longer draws from it: left as ``like`` sends it); and a process
    sent deferred may stay so after the view fits whole again (its content is asked for when it
    opens: taken as ``like`` sends it when their fields agree).
    """
    sent = {node["key"]: node for node in _walk(like["nodes"])}

    def normalized(node: dict[str, Any]) -> dict[str, Any]:
        now = sent.get(node["key"])
        if (
            now is not None
            and node["kind"] == "process"
            and node.get("deferred") != now.get("deferred")
        ):
            if now.get("deferred"):
                node = {**node, "children": [], "deferred": True}
            elif _fields(node, "children") == _fields(now, "children"):
                node = now
        elif (
            now is not None
            and node["kind"] == "tool"
            and now.get("deferred")
            and not node.get("deferred")
        ):
            fold, subagent = node["fold"], node["subagent"]
            node = {**node, "deferred": True}
            if fold["result"]:
                node["result"] = None
            if fold["subagent"]:
                node["subagent"] = {**subagent, "nodes": []}
        return _map_nodes(node, normalized)

    return {**view, "nodes": [normalized(node) for node in view["nodes"]]}


def _fields(node: dict[str, Any], nested: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in (nested, "deferred")}


def _inside(node: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Where a wire node holds nodes: ``(field, None)`` for a list, ``(field, "nodes")`` for a
    tool's sub-agent; a turn's process is ``("process", "")``."""
    if node["kind"] == "turn":
        return [("process", "")] if node.get("process") else []
    if node["kind"] in NESTED:
        return [(NESTED[node["kind"]], None)]
    if node["kind"] == "tool" and node.get("subagent"):
        return [("subagent", "nodes")]
    return []


def _map_nodes(node: dict[str, Any], change: Any) -> dict[str, Any]:
    """``node`` with ``change`` applied to every node directly inside it."""
    out = dict(node)
    for field, inner in _inside(node):
        if inner == "":
            out[field] = change(node[field])
        elif inner is None:
            out[field] = [change(child) for child in node[field]]
        else:
            out[field] = {**node[field], inner: [change(c) for c in node[field][inner]]}
    return out


def _walk(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        yield node
        for field, inner in _inside(node):
            if inner == "":
                yield from _walk([node[field]])
            elif inner is None:
                yield from _walk(node[field])
            else:
                yield from _walk(node[field][inner])


def _check(steps: list[tuple[str, Any]]) -> None:
    """The view a JS view holds, patch after patch, is the widget's view each time."""
    growth = Growth()
    try:
        held = growth.widget._transport.wire_view()
        for _, patch, after in growth.patches(steps):
            if patch is not None:
                held = apply_patch(held, patch)
            assert comparable(held, after) == after
    finally:
        growth.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_W2_every_patch_turns_the_view_into_the_next(steps: list[tuple[str, Any]]) -> None:
    _check(steps)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_W2_patches_hold_past_the_budget_with_closed_processes_deferred(
    steps: list[tuple[str, Any]],
) -> None:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(ondemand, "WHOLE_VIEW_BUDGET", 2_000)  # N-1: every view too large
        _check([("user", None), ("tool", "Read"), ("finish", "success"), *steps])


# --- what travels -------------------------------------------------------------------------------


def test_W2_a_call_appended_to_a_long_batch_sends_its_row_alone() -> None:
    """A framework that answers every step in one response id makes one batch of the whole
    run (the Agents SDK's scripted model): an appended call is still one row on the wire."""
    growth = Growth()
    try:
        for n in range(200):
            growth.rec.start_tool("Bash", {"command": f"echo {n}"})
        growth.widget.flush()
        steps = list(growth.patches([("tool", "Bash")]))
    finally:
        growth.close()
    ((_, patch, _),) = steps
    assert patch["upsert"] == []
    (turn,) = patch["change"]
    text = json.dumps(patch)
    assert text.count('"kind": "tool"') == 1  # the new call, and none of the 200 before it
    assert len(text) < 3_000
    assert turn["key"].startswith("turn:")


def test_Q3_a_growing_turn_reuses_the_nodes_of_its_unchanged_steps() -> None:
    growth = Growth()
    try:
        for n in range(5):
            call = growth.rec.start_tool("Bash", {"command": f"make {n}"})
            growth.rec.finish_tool(call, "ok")
            growth.rec.assistant(f"Step {n} done")
        growth.widget.flush()
        before = growth.widget.view["nodes"][-1]["process"]["children"]
        growth.rec.start_tool("Read", {"file_path": "a.py"})
        growth.widget.flush()
        after = growth.widget.view["nodes"][-1]["process"]["children"]
    finally:
        growth.close()
    # The answer became a progress note (P-2), and the new call's batch follows it.
    assert [node["kind"] for node in after[len(before) :]] == ["progress", "batch"]
    # The same objects, not equal copies: the diff passes over them by identity.
    assert all(a is b for a, b in zip(before, after[: len(before)], strict=True))


def test_W2_diff_keyed_tells_a_node_changed_in_place_from_a_moved_one() -> None:
    a, b, c = ({"key": k, "v": 0} for k in "abc")
    b2 = {"key": "b", "v": 1}
    steps, removed = diff_keyed([a, b, c], [a, b2, c])
    assert steps == [("a", b2, b)]  # in place: may be patched inside
    assert removed == []
    steps, removed = diff_keyed([a, b, c], [b2, a, c])
    # Moved, or after a node that moved: whole, with the anchor each now follows.
    assert steps == [(None, b2, None), ("b", a, None), ("a", c, None)]
    assert diff_keyed([a, b], [a, b]) == ([], [])


def test_W2_a_process_deferred_on_the_wire_is_sent_whole_never_patched_inside() -> None:
    child = {"kind": "progress", "key": "p1", "html": "<p>a</p>"}
    process = {"kind": "process", "key": "process:t", "open": False, "active": False,
               "children": [child]}  # fmt: skip
    turn = {"kind": "turn", "key": "t", "status": "completed", "running": False,
            "header": {"label": "Done", "duration": None, "count": None, "text": "Done"},
            "process": process, "outside": [], "answer": None}  # fmt: skip
    grown = {**turn, "process": {**process, "children": [child, {**child, "key": "p2"}]}}
    deferred = Patcher({}, whole_before=False, whole=False)
    _, _, (change,) = deferred.top([turn], [grown])
    assert change == {"key": "t", "fields": {"process": {**process, "children": [],
                                                         "deferred": True}}}  # fmt: skip
    opened = {**grown, "process": {**grown["process"], "open": True}}
    _, _, (change,) = deferred.top([turn], [opened])
    assert change["fields"]["process"]["children"] == opened["process"]["children"]
    whole = Patcher({}, whole_before=True, whole=True)
    _, _, (change,) = whole.top([turn], [grown])
    (nested,) = change["change"]
    assert nested == {
        "key": "process:t",
        "upsert": [{"after": "p1", "node": {**child, "key": "p2"}}],
    }


# --- the JS view applies them the same way ------------------------------------------------------

APPLY_IN_JS = """
import { applyPatch } from %s;
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { view, patches } = JSON.parse(input);
  const views = [];
  let current = view;
  for (const patch of patches) {
    current = applyPatch(current, patch);
    views.push(current);
  }
  process.stdout.write(JSON.stringify(views));
});
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_W2_the_js_view_applies_the_patches_to_the_same_views(tmp_path: Path) -> None:
    growth = Growth()
    steps: list[tuple[str, Any]] = [("tool", "Read"), ("tool", "Grep"), ("finish", "success")]
    steps += [("end_batch", None), ("think", None), ("tool", "Bash"), ("text", None)]
    steps += [("tool", "Edit"), ("label", None), ("finish", "error"), ("mode", "command-first")]
    steps += [("tool", "Bash"), ("user", None), ("tool", "Task"), ("settle", False)]
    steps += [("settle", True), ("subagent", None), ("child", "tool"), ("child", "think")]
    steps += [("child", "finish"), ("child", "text"), ("child", "tool")]
    try:
        first = growth.widget._transport.wire_view()
        seen = [(patch, after) for _, patch, after in growth.patches(steps) if patch is not None]
    finally:
        growth.close()
    script = tmp_path / "apply.mjs"
    script.write_text(APPLY_IN_JS % json.dumps(JS_TREE.as_uri()), encoding="utf-8")
    payload = json.dumps({"view": first, "patches": [patch for patch, _ in seen]})
    done = subprocess.run(
        ["node", str(script)], input=payload, capture_output=True, text=True, check=True
    )
    views = json.loads(done.stdout)
    assert len(views) == len(seen) > 5
    for view, (_, after) in zip(views, seen, strict=True):
        assert view == json.loads(json.dumps(after))
