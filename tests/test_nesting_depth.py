"""Sub-agents nested deeper than the view nests them (spec F-7, X-2: nothing dropped unsaid).

A transcript is a tree: a call's sub-agent holds a transcript whose calls run sub-agents of their
own. The view builds each level inside its parent's by recursion, so a chain 65 deep (a hostile
file, a framework's agents calling agents, a transcript built through the public model) raised
RecursionError in the view model, the text and HTML renderings and the widget. Now every level
down to ``turnfold.nesting.MAX_DEPTH`` nests; a call there shows its sub-agent's line and result,
says on its line that the steps are not shown, and the view's notice counts what is left out.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from turnfold.cli import expand_all
from turnfold.model import LoadWarning, SubAgent, ToolCall, Transcript
from turnfold.nesting import MAX_DEPTH, cut_under, cut_warning
from turnfold.recording import Recorder
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.widget import TranscriptWidget

#: The phrase a call at the bound adds to its sub-agent's line.
NOT_SHOWN = f"steps not shown: nested more than {MAX_DEPTH} sub-agents deep"


def chain(levels: int) -> Transcript:
    """A transcript whose sub-agents nest ``levels`` deep: the top-level agent (level 0) and
    each sub-agent delegate once, the one at level ``levels`` to none. Every level asks, runs
    its call and answers, so each is three entries."""
    inner: Transcript | None = None
    for level in range(levels, -1, -1):
        rec = Recorder()
        rec.user(f"task of level {level}")
        call = rec.start_tool("Task", {"description": f"delegate to level {level + 1}"})
        if inner is not None:
            rec.attach_subagent(call, inner, name=f"agent{level + 1}")
        rec.finish_tool(call, f"report of level {level + 1}")
        rec.assistant(f"answer of level {level}")
        inner = rec.transcript
    assert inner is not None
    return inner


def nesting(view: Any) -> int:
    """How many sub-agents deep the view model's nodes nest (walked without recursion)."""
    deepest, todo = 0, [(view, 0)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            todo += [(v, depth + (k == "subagent" and bool(v))) for k, v in node.items()]
        elif isinstance(node, list):
            todo += [(v, depth) for v in node]
    return deepest


@contextmanager
def stack_limit(limit: int) -> Iterator[None]:
    """Python's recursion limit lowered to ``limit``, from the default 1,000: the frames a
    view may take, the rest left to a notebook's kernel, cell and display hook."""
    was = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(was)


@pytest.mark.parametrize("levels", [200, 2_000])
def test_F7_a_chain_past_the_bound_renders_everywhere_and_says_what_it_cut(levels: int) -> None:
    transcript = chain(levels)
    with stack_limit(500):
        view = build_view_model(transcript)
        page = render_html(view)
        text = render_text(expand_all(view), width=4_000)  # opens its folds, no more
    assert nesting(view) == MAX_DEPTH + 1  # the last: the line of the call at the bound
    hidden = levels - MAX_DEPTH
    warning = (
        f"(live-call-1): sub-agents nest {levels:,} deep, past the {MAX_DEPTH} that nest "
        f"under their calls: {hidden:,} sub-agents deeper ({hidden * 3:,} entries) are not "
        f"shown; the call at level {MAX_DEPTH} that runs one shows its line and result"
    )
    assert view["notice"] is not None
    assert view["notice"]["items"] == [warning]
    tools = [n for n in iter_nodes(view) if n["kind"] == "tool" and n["subagent"]]
    (cut,) = [n for n in tools if NOT_SHOWN in (n["subagent"]["line"] or "")]
    line = cut["subagent"]["line"]
    assert line.startswith(f"✔ agent{MAX_DEPTH + 1}: delegate to level {MAX_DEPTH + 1} · ")
    assert line.endswith(f" · {NOT_SHOWN}")  # after its duration, which the Recorder timed
    assert cut["subagent"]["nodes"] == []
    # Its sub-agent's report is the call's result, shown as no nested answer repeats it.
    assert cut["result"] is not None
    assert f"report of level {MAX_DEPTH + 1}" in cut["result"]["html"]
    assert f"answer of level {MAX_DEPTH}" in text
    assert f"answer of level {MAX_DEPTH + 1}" not in text
    assert NOT_SHOWN in text
    assert warning in page
    assert NOT_SHOWN in page


def test_F7_the_widget_draws_a_deep_chain_and_one_that_grows_past_the_bound() -> None:
    """A live widget builds sub-agents as they change (Q-3): one attached deep while it is
    shown is cut at the same level, and its view goes on the wire whole. It builds a level in
    about 16 frames (a static view in 10): the bound takes it to some 550 of Python's 1,000."""
    transcript = chain(2_000)
    with stack_limit(700):
        widget = TranscriptWidget(transcript)
        widget.flush()
    view = widget.view
    assert nesting(view) == MAX_DEPTH + 1
    assert view["notice"] is not None
    assert "sub-agents nest 2,000 deep" in view["notice"]["items"][0]
    assert NOT_SHOWN in json.dumps(view, ensure_ascii=False)  # the wire's JSON, made whole

    rec = Recorder()
    rec.user("delegate")
    call = rec.start_tool("Task", {"description": "deep work"})
    rec.user("and then")
    live = TranscriptWidget(rec.transcript)
    live.flush()
    assert live.view["notice"] is None
    rec.attach_subagent(call, chain(300), name="deep")  # in the turn before the last
    with stack_limit(700):
        live.flush()
    assert nesting(live.view) == MAX_DEPTH + 1
    assert live.view["notice"] is not None
    (said,) = live.view["notice"]["items"]
    assert said.startswith("(live-call-1): sub-agents nest 301 deep")
    rec.assistant("the last turn grows; the first, planned as before, is not walked again")
    live.flush()
    assert live.view["notice"] is not None
    assert live.view["notice"]["items"] == [said]


def test_F7_a_chain_down_to_the_bound_nests_whole_with_no_warning() -> None:
    view = build_view_model(chain(MAX_DEPTH))
    assert nesting(view) == MAX_DEPTH
    assert view["notice"] is None
    assert NOT_SHOWN not in json.dumps(view, ensure_ascii=False)


def test_F7_a_sub_agent_that_runs_its_own_transcript_is_drawn_down_to_the_bound() -> None:
    """A transcript that holds itself (through the public model) is no endless tree: drawn
    down to the bound, where the notice says the sub-agents nest in a circle."""
    rec = Recorder()
    rec.user("loop")
    call = rec.start_tool("Task", {"description": "again"})
    rec.attach_subagent(call, rec.transcript, name="self")
    rec.finish_tool(call, "done")
    view = build_view_model(rec.transcript)
    assert nesting(view) == MAX_DEPTH + 1
    assert view["notice"] is not None
    assert view["notice"]["items"] == [
        f"(live-call-1): sub-agents nest in a circle (a transcript runs itself, or one it is "
        f"nested in): drawn down to level {MAX_DEPTH}, the last that nests under its call; the "
        f"call at level {MAX_DEPTH} that runs it again shows its line and result"
    ]


def test_F7_the_notice_counts_each_sub_agent_once_and_a_reader_s_warnings_after_it() -> None:
    """Two calls at the bound, one running a sub-agent the other's runs too: counted once; the
    load's own warnings follow the view's."""
    top = chain(MAX_DEPTH - 1)
    bottom = top
    for _ in range(MAX_DEPTH - 1):
        (only,) = bottom.tool_calls()
        assert only.subagent is not None
        assert only.subagent.transcript is not None
        bottom = only.subagent.transcript
    shared = chain(1)
    last = Transcript()
    for call_id in ("a", "b"):
        last.append(ToolCall(call_id=call_id, name="Task", status="success",
                             subagent=SubAgent(name="shared", transcript=shared)))  # fmt: skip
    (leaf,) = bottom.tool_calls()
    leaf.subagent = SubAgent(name="last", transcript=last)
    top.warnings.append(LoadWarning(reason="a record skipped", line=3, source="s.jsonl"))
    warning = cut_warning([cut_under(top.entries, top)])
    assert warning is not None
    assert str(warning) == (
        f"(a): sub-agents nest {MAX_DEPTH + 2} deep, past the {MAX_DEPTH} that nest under "
        f"their calls: 2 sub-agents deeper (6 entries) are not shown; the 2 calls at level "
        f"{MAX_DEPTH} that run one show their line and result"
    )
    view = build_view_model(top)
    assert view["notice"] is not None
    assert view["notice"]["items"] == [str(warning), "s.jsonl:3: a record skipped"]
