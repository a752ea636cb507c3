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
from pathlib import Path
from typing import Any

import pytest

import turnfold
import turnfold.corpus
from turnfold.cli import expand_all
from turnfold.corpus.summarize import _delegations
from turnfold.cost import responses_apart
from turnfold.formats import native
from turnfold.formats.native import MOST_LEVELS, TooDeepToDump
from turnfold.model import AssistantText, LoadWarning, SubAgent, ToolCall, Transcript, Usage
from turnfold.nesting import MAX_DEPTH, cut_under, cut_warning
from turnfold.recording import Recorder
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.session import session_facts
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


# --- the load path and the model's own walks ------------------------------------------------


def levels_loaded(transcript: Transcript) -> tuple[int, ToolCall]:
    """How many sub-agents deep a chain loaded nests (each level's first call that runs one),
    and the deepest level's call."""
    depth, inner = 0, transcript
    (call, *_) = inner.tool_calls()
    while call.subagent is not None and call.subagent.transcript is not None:
        depth, inner = depth + 1, call.subagent.transcript
        (call, *_) = inner.tool_calls()
    return depth, call


def claude_code_chain(path: Path, levels: int) -> Path:
    """A Claude Code 2.1 session whose Agent call's sub-agent runs an Agent call of its own,
    ``levels`` deep, each sub-agent's step a ``progress``/``agent_progress`` line of the
    session's file naming its call in ``parentToolUseID``: the records as Claude Code 2.1.52
    writes them (tests/fixtures/claude-code/v2.1.52_real_progress-subagent-last-response.jsonl,
    the same keys), one step a sub-agent."""
    base = {"userType": "external", "cwd": "/w", "sessionId": "s1", "version": "2.1.52",
            "isSidechain": False}  # fmt: skip
    stamp = "2026-03-11T10:00:0{}.000Z"

    def agent_call(level: int) -> dict[str, Any]:
        call = {"type": "tool_use", "id": f"toolu_L{level}", "name": "Agent",
                "input": {"description": f"d{level}", "prompt": f"p{level}"}}  # fmt: skip
        return {"model": "claude-sonnet-4-6", "id": f"msg{level}", "type": "message",
                "role": "assistant", "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [call]}  # fmt: skip

    records: list[dict[str, Any]] = [
        {**base, "parentUuid": None, "type": "user", "uuid": "u0", "timestamp": stamp.format(1),
         "message": {"role": "user", "content": "go"}},
        {**base, "parentUuid": "u0", "type": "assistant", "uuid": "a0",
         "timestamp": stamp.format(2), "message": agent_call(0)},
    ]  # fmt: skip
    for level in range(1, levels + 1):
        step = {"type": "assistant", "uuid": f"s{level}", "timestamp": stamp.format(3),
                "message": agent_call(level)}  # fmt: skip
        records.append(
            {**base, "parentUuid": records[-1]["uuid"], "type": "progress", "uuid": f"p{level}",
             "timestamp": stamp.format(3), "parentToolUseID": f"toolu_L{level - 1}",
             "toolUseID": f"agent_msg_{level}",
             "data": {"type": "agent_progress", "agentId": f"ag{level}", "prompt": f"p{level}",
                      "normalizedMessages": [], "message": step}}
        )  # fmt: skip
    records.append(
        {**base, "parentUuid": records[-1]["uuid"], "type": "user", "uuid": "u9",
         "timestamp": stamp.format(4), "message": {"role": "user", "content": [
             {"tool_use_id": "toolu_L0", "type": "tool_result", "content": "done"}]}}
    )  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("levels", [200, 2_000])
def test_F7_a_claude_code_session_of_sub_agents_deeper_than_the_bound_loads_and_says_so(
    tmp_path: Path, levels: int
) -> None:
    path = claude_code_chain(tmp_path / "s1.jsonl", levels)
    with stack_limit(300):  # the whole load takes some 165 frames, however deep the file
        transcript = turnfold.load(path)
    depth, last = levels_loaded(transcript)
    assert depth == MAX_DEPTH  # every level down to the bound is read
    assert last.call_id == f"toolu_L{MAX_DEPTH}"
    assert last.subagent is not None
    assert (last.subagent.agent_id, last.subagent.steps_missing) == (f"ag{MAX_DEPTH + 1}", False)
    unread = levels - MAX_DEPTH
    first = MAX_DEPTH + 3  # the line of the step of level 33: two lines before the first step
    (warning,) = transcript.warnings
    assert (warning.line, warning.source) == (first, str(path))
    assert warning.reason == (
        f"sub-agent 'ag{MAX_DEPTH + 1}' of call toolu_L{MAX_DEPTH} is {MAX_DEPTH + 1} sub-agents "
        f"deep, past the {MAX_DEPTH} that nest under their calls: not shown here; the "
        f"{unread:,} step records of it and the {unread - 1:,} sub-agents under it (lines "
        f"{first}-{first + unread - 1}) are not read"
    )
    view = build_view_model(transcript)
    assert view["notice"] is not None
    assert view["notice"]["items"] == [f"s1.jsonl:{first}: {warning.reason}".replace("'", "&#x27;")]


def test_F7_a_claude_code_sub_agent_one_past_the_bound_is_named_by_its_one_step(
    tmp_path: Path,
) -> None:
    transcript = turnfold.load(claude_code_chain(tmp_path / "s1.jsonl", MAX_DEPTH + 1))
    assert levels_loaded(transcript)[0] == MAX_DEPTH
    (warning,) = transcript.warnings
    assert warning.reason.endswith(
        f"not shown here; its step record (line {MAX_DEPTH + 3}) is not read"
    )
    whole = turnfold.load(claude_code_chain(tmp_path / "s2.jsonl", MAX_DEPTH))
    assert levels_loaded(whole)[0] == MAX_DEPTH
    assert whole.warnings == []


def otlp_chain(path: Path, levels: int) -> Path:
    """A trace of agent spans, each under the one before, ``levels`` sub-agents under the
    session's run: one span a line as the OpenTelemetry SDK's ``ConsoleSpanExporter`` writes
    them (``ReadableSpan.to_json``, opentelemetry-sdk 1.x), with the GenAI semantic
    conventions' ``invoke_agent`` attributes."""
    lines: list[dict[str, Any]] = []
    parent = None
    for level in range(levels + 1):
        span_id = f"0x{level + 1:016x}"
        lines.append(
            {"name": f"invoke_agent a{level}",
             "context": {"trace_id": "0x" + "1" * 32, "span_id": span_id, "trace_state": "[]"},
             "kind": "SpanKind.INTERNAL", "parent_id": parent,
             "start_time": f"2026-12-05T07:33:{8 + level % 50:02d}.000000Z",
             "end_time": "2026-12-05T07:59:00.000000Z", "status": {"status_code": "UNSET"},
             "attributes": {"gen_ai.operation.name": "invoke_agent",
                            "gen_ai.agent.name": f"a{level}"},
             "events": [], "links": [], "resource": {"attributes": {}, "schema_url": ""}}
        )  # fmt: skip
        parent = span_id
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("levels", [300, 2_000])
def test_F7_a_trace_of_agent_spans_deeper_than_the_bound_loads_and_says_so(
    tmp_path: Path, levels: int
) -> None:
    path = otlp_chain(tmp_path / "trace.jsonl", levels)
    with stack_limit(300):  # the whole load takes some 115 frames, however deep the trace
        transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "otlp"
    depth, last = levels_loaded(transcript)
    assert depth == MAX_DEPTH
    assert last.subagent is not None
    assert (last.subagent.name, last.subagent.transcript) == (f"a{MAX_DEPTH + 1}", None)
    first = MAX_DEPTH + 2  # the session's run is line 1, the sub-agent of level 1 line 2
    (warning,) = transcript.warnings
    assert warning.line == first
    assert warning.reason == (
        f"sub-agent span {MAX_DEPTH + 2:016x} (a{MAX_DEPTH + 1}) is {MAX_DEPTH + 1} sub-agents "
        f"deep, past the {MAX_DEPTH} that nest under their calls: not shown here; it and the "
        f"{levels - MAX_DEPTH - 1:,} spans under it (lines {first}-{levels + 1}) are not read"
    )


def test_F7_a_dump_round_trips_down_to_what_turnfold_s_format_holds() -> None:
    """``load(t.dump()) == t`` (L-2.1) down to ``native.MOST_LEVELS`` sub-agents deep; the
    writer and the loader then take some 525 and 400 frames."""
    transcript = chain(MOST_LEVELS)
    with stack_limit(700):
        text = transcript.dump()
        back = turnfold.load(text.encode(), format="turnfold")
    assert back == transcript
    assert levels_loaded(back)[0] == MOST_LEVELS


@pytest.mark.parametrize("levels", [200, 2_000])
def test_F7_a_dump_deeper_than_turnfold_s_format_holds_is_refused_naming_the_depth(
    levels: int,
) -> None:
    """Rather than a file no loader here reads back: a JSON reader stops at Python's recursion
    limit, some 250 levels of sub-agents (four of JSON each), the loader sooner."""
    transcript = chain(levels)
    with stack_limit(300), pytest.raises(TooDeepToDump) as refused:
        transcript.dump(layout="json")
    assert str(refused.value) == (
        f"cannot dump: sub-agents nest {levels:,} deep, past the {MOST_LEVELS} turnfold's "
        "format holds (a file deeper than that could not be loaded back within Python's "
        "recursion limit)"
    )


def test_F7_a_dump_of_a_transcript_that_runs_itself_is_refused() -> None:
    rec = Recorder()
    rec.user("loop")
    call = rec.start_tool("Task", {"description": "again"})
    rec.attach_subagent(call, rec.transcript, name="self")
    with pytest.raises(TooDeepToDump, match="sub-agents nest in a circle"):
        rec.transcript.dump()
    assert rec.transcript.tool_calls(nested=True) == [call]  # listed once, not forever


def test_F7_a_file_in_turnfold_s_format_nesting_deeper_than_a_dump_loads_what_it_can(
    tmp_path: Path,
) -> None:
    """One written by hand (or hostile): read down to the levels a dump holds; the call there
    keeps its line and result, and the warning names the field left unread."""
    transcript = chain(MOST_LEVELS + 20)
    lines = [{"turnfold": 1, "metadata": transcript.metadata}]
    lines += [native.entry_to_dict(entry) for entry in transcript.entries]
    path = tmp_path / "deep.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with stack_limit(700):
        back = turnfold.load(path)
    depth, last = levels_loaded(back)
    assert depth == MOST_LEVELS
    assert last.result is not None
    assert last.result.text == f"report of level {MOST_LEVELS + 1}"
    (warning,) = back.warnings
    assert warning.line == 3  # the line of the top-level call
    assert warning.reason.endswith(
        f"subagent.transcript: sub-agents nest deeper than the {MOST_LEVELS} levels turnfold's "
        f"format holds; the steps of the sub-agent at level {MOST_LEVELS + 1} (and any under "
        "it) are not read"
    )


def test_F7_the_model_s_walks_take_no_stack_however_deep_the_sub_agents_nest() -> None:
    """``tool_calls(nested=True)`` (the LangChain and smolagents readers ask it), a corpus
    row's count of delegations, and the tokens of sub-agents: every level, under a limit far
    below the depth."""
    levels = 2_000
    transcript = chain(levels)
    with stack_limit(100):
        calls = transcript.tool_calls(nested=True)
        delegations = _delegations(transcript)
    assert len(calls) == levels + 1
    assert [call.args["description"] for call in calls[:2]] == [
        "delegate to level 1",
        "delegate to level 2",
    ]
    assert delegations == levels + 1  # each call ran an agent, the last one an empty one


def spending_chain(levels: int) -> Transcript:
    """A chain ``levels`` sub-agents deep whose every agent spends 1 input and 2 output tokens
    on one response (each its own), the top-level agent's on ``claude-sonnet-4-5``."""
    inner: Transcript | None = None
    for level in range(levels, -1, -1):
        transcript = Transcript(metadata={"model": "claude-sonnet-4-5"} if level == 0 else {})
        usage = Usage(input_tokens=1, output_tokens=2, response_id=f"r{level}")
        transcript.append(AssistantText(text=f"level {level}", usage=usage))
        if inner is not None:
            transcript.append(
                ToolCall(call_id=f"c{level}", name="Task", status="success",
                         subagent=SubAgent(name=f"agent{level + 1}", transcript=inner))
            )  # fmt: skip
        inner = transcript
    assert inner is not None
    return inner


@pytest.mark.parametrize("levels", [100, 2_000])
def test_U1_the_tokens_of_sub_agents_are_counted_at_every_level(levels: int) -> None:
    """Tokens were counted 64 levels down and no further, and said nothing of the rest: each
    level counts now, and the responses a cost is priced on are the same ones."""
    transcript = spending_chain(levels)
    with stack_limit(150):
        facts = session_facts(transcript)
        delegated, own = responses_apart(transcript.entries, "claude-sonnet-4-5")
    assert facts.subagent_tokens == {"input_tokens": levels, "output_tokens": 2 * levels}
    assert facts.tokens == {"input_tokens": levels + 1, "output_tokens": 2 * (levels + 1)}
    assert len(delegated) == levels
    assert {model for model, _ in delegated} == {"claude-sonnet-4-5"}  # the caller's, named
    assert sum(counts["output_tokens"] for _, counts in delegated) == 2 * levels
    assert own == [("claude-sonnet-4-5", {"input_tokens": 1, "output_tokens": 2})]


def test_U1_a_sub_agent_that_runs_its_own_transcript_counts_once() -> None:
    transcript = spending_chain(1)
    (call,) = transcript.tool_calls()
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    call.subagent.transcript.append(
        ToolCall(
            call_id="again", name="Task", subagent=SubAgent(transcript=call.subagent.transcript)
        )
    )
    assert session_facts(transcript).subagent_tokens == {"input_tokens": 1, "output_tokens": 2}
    delegated, _ = responses_apart(transcript.entries, None)
    assert len(delegated) == 1


def test_C1_a_corpus_row_of_a_session_deeper_than_the_bound(tmp_path: Path) -> None:
    claude_code_chain(tmp_path / "s1.jsonl", 2_000)
    with stack_limit(400):
        (row,) = turnfold.corpus.scan(tmp_path, workers=1, cache=False).rows
    # The top-level agent's call and the sub-agents' down to the bound, whose call at level
    # 32 runs one more, named but not read.
    assert (row["subagents"], row["warnings"]) == (MAX_DEPTH + 1, 1)


def test_F7_claude_code_sub_agent_files_deeper_than_the_bound_load_and_say_so(
    tmp_path: Path,
) -> None:
    """Claude Code 2.1 writes each sub-agent's records to ``<session>/subagents/agent-<id>.jsonl``
    beside an ``agent-<id>.meta.json`` naming the call that ran it (``toolUseId``) and its
    ``spawnDepth``, as in tests/fixtures/claude-code/v2.1.337_real_background-agent-folder: a
    sub-agent's sub-agent's file is one more there. Each file is read by a reader of its own,
    down to the bound."""
    levels = 60
    folder = tmp_path / "s1" / "subagents"
    folder.mkdir(parents=True)
    base = {"userType": "external", "cwd": "/w", "sessionId": "s1", "version": "2.1.52"}
    stamp = "2026-03-11T10:00:0{}.000Z"

    def records(level: int) -> str:
        own = {**base, "isSidechain": bool(level), **({"agentId": f"a{level}"} if level else {})}
        call = {"type": "tool_use", "id": f"toolu_L{level}", "name": "Agent",
                "input": {"description": f"d{level}", "prompt": f"p{level}"}}  # fmt: skip
        result = {"tool_use_id": f"toolu_L{level}", "type": "tool_result", "content": "done"}
        lines = [
            {**own, "parentUuid": None, "type": "user", "uuid": f"u{level}",
             "timestamp": stamp.format(1), "message": {"role": "user", "content": f"p{level}"}},
            {**own, "parentUuid": f"u{level}", "type": "assistant", "uuid": f"a{level}",
             "timestamp": stamp.format(2),
             "message": {"model": "claude-sonnet-4-6", "id": f"msg{level}", "type": "message",
                         "role": "assistant", "content": [call],
                         "usage": {"input_tokens": 1, "output_tokens": 1}}},
            {**own, "parentUuid": f"a{level}", "type": "user", "uuid": f"r{level}",
             "timestamp": stamp.format(3), "message": {"role": "user", "content": [result]}},
        ]  # fmt: skip
        return "".join(json.dumps(line) + "\n" for line in lines)

    (tmp_path / "s1.jsonl").write_text(records(0), encoding="utf-8")
    for level in range(1, levels + 1):
        (folder / f"agent-a{level}.jsonl").write_text(records(level), encoding="utf-8")
        meta = {"agentType": "general-purpose", "description": f"d{level - 1}",
                "toolUseId": f"toolu_L{level - 1}", "spawnDepth": level}  # fmt: skip
        (folder / f"agent-a{level}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with stack_limit(400):
        transcript = turnfold.load(tmp_path / "s1.jsonl")
    depth, last = levels_loaded(transcript)
    assert depth == MAX_DEPTH
    assert last.subagent is not None
    assert (last.subagent.transcript, last.subagent.steps_missing) == (None, False)
    deepest = next(w for w in transcript.warnings if w.line is not None)
    assert deepest.source == str(folder / f"agent-a{MAX_DEPTH}.jsonl")
    assert (deepest.line, deepest.reason) == (
        2,
        f"sub-agent file agent-a{MAX_DEPTH + 1}.jsonl is {MAX_DEPTH + 1} sub-agents deep, past "
        f"the {MAX_DEPTH} that nest under their calls: not shown here; it loads as a file of "
        "its own",
    )
    # The file under it, whose call is not read, is shown at the end and said so, the files
    # under that one nested in it (the calls of every reader claim theirs for the session).
    (unclaimed,) = [w for w in transcript.warnings if "names no call" in w.reason]
    assert unclaimed.reason.startswith(f"sub-agent file agent-a{MAX_DEPTH + 2}.jsonl ")
    end = transcript.entries[-1]
    assert isinstance(end, ToolCall)
    assert end.subagent is not None
    assert end.subagent.transcript is not None
    assert levels_loaded(end.subagent.transcript)[0] == levels - MAX_DEPTH - 2


def test_F7_U4_the_timeline_places_the_calls_the_view_draws_down_to_the_bound() -> None:
    """The timeline placed sub-agents' calls 16 levels down, and none deeper, unsaid; now down
    to the bound, each bar a call row of the view (whose notice counts the rest)."""
    view = build_view_model(chain(MAX_DEPTH + 3))
    timeline = view["timeline"]
    assert timeline is not None
    keys = [bar["key"] for turn in timeline["turns"] for bar in turn["bars"]]
    assert max(key.count("/") for key in keys) == MAX_DEPTH
    calls = {node["key"] for node in iter_nodes(view) if node["kind"] == "tool"}
    assert set(keys) <= calls
    assert "not shown" in str(view["notice"])
