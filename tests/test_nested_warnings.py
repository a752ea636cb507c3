"""A sub-agent's own load warnings reach the view's notice (spec L-4: a load that drops a record
says so, never silently).

Readers build a sub-agent's transcript from a source of its own (a Claude Code sub-agent file,
a Codex sub-agent thread, a Cursor sub-agent transcript): a bad line there lands in the
sub-agent's ``transcript.warnings``, which the notice of the top-level transcript did not show.
Now the notice lists them after the top's own, each saying whose it is, and counts them.
"""

from __future__ import annotations

import shutil
from html import escape
from pathlib import Path

import pytest

import turnfold
import turnfold.corpus
from turnfold.formats.source import MAX_LISTED_WARNINGS, UnlistedWarnings, keep_warning
from turnfold.i18n import plural
from turnfold.model import LoadWarning, SubAgent, ToolCall, Transcript
from turnfold.nesting import MAX_DEPTH, cut_under, subagent_warnings, warning_total
from turnfold.recording import Recorder
from turnfold.render import viewmodel
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings
from turnfold.widget import TranscriptWidget

FIXTURES = Path(__file__).parent / "fixtures"
#: A Claude Code 2.1.73 session whose Task call's sub-agent wrote its own file beside it.
CLAUDE_TREE = FIXTURES / "claude-code" / "v2.1_progress-and-subagent-file"
CLAUDE_AGENT = "subagents/agent-ab12cd34ef56ab78c.jsonl"
#: A Codex session whose spawn_agent calls ran threads of their own files.
CODEX_TREE = FIXTURES / "codex" / "threads"
CODEX_SESSION = "rollout-2026-05-12T10-00-00-019c1a00-0000-7000-8000-0000000000aa.jsonl"
CODEX_THREAD = "019c1a00-0000-7000-8000-0000000000c1.jsonl"
#: A Cursor session whose sub-agent's transcript is a file of its own: the reader joins the
#: sub-agent's warnings to the session's too.
CURSOR_TREE = FIXTURES / "cursor" / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13"
CURSOR_AGENT = "subagents/b7e2d4f0-5c1a-4e93-8f60-2a9d1c3e4b57.jsonl"


def broken(path: Path) -> None:
    """A line cut short at the end of ``path``, as a crash mid-write leaves a JSONL file."""
    with path.open("a", encoding="utf-8") as file:
        file.write('{"type": "assistant", "message": {"role"\n')


def claude_session(tmp_path: Path) -> Path:
    """The Claude Code session and its sub-agent's file, the last line of that file cut short."""
    folder = tmp_path / "claude"
    shutil.copytree(CLAUDE_TREE, folder / CLAUDE_TREE.name)
    session = folder / f"{CLAUDE_TREE.name}.jsonl"
    shutil.copy(CLAUDE_TREE.parent / session.name, session)
    broken(folder / CLAUDE_TREE.name / CLAUDE_AGENT)
    return session


def only_subagent(transcript: Transcript, call_id: str) -> SubAgent:
    (call,) = [c for c in transcript.tool_calls() if c.call_id == call_id]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    return call.subagent


def test_L4_a_bad_line_of_a_claude_code_sub_agent_file_is_in_the_notice(tmp_path: Path) -> None:
    transcript = turnfold.load(claude_session(tmp_path))
    # Where the reader puts it: the sub-agent's own transcript, not the top's.
    assert transcript.warnings == []
    agent = only_subagent(transcript, "toolu_task_2")
    (warning,) = agent.transcript.warnings if agent.transcript else []
    assert (warning.line, Path(warning.source or "").name) == (5, Path(CLAUDE_AGENT).name)
    assert warning.reason.startswith("invalid JSON")

    view = build_view_model(transcript)
    assert view["notice"] is not None
    whose = "general-purpose ab12cd34ef56ab78c (toolu_task_2)"
    said = f"agent-ab12cd34ef56ab78c.jsonl:5: {warning.reason}"
    assert view["notice"]["items"] == [escape(f"Sub-agent {whose}: {said}")]
    assert view["notice"]["text"] == "Loaded with 1 problem: some records may not be shown"
    zh = build_view_model(transcript, DisplaySettings(locale="zh"))["notice"]
    assert zh is not None
    assert zh["items"] == [escape(f"子代理 {whose}：{said}")]
    # The renderings show the view's notice: the outline its count, the page its items.
    assert "Loaded with 1 problem" in render_text(view)
    assert escape(f"Sub-agent {whose}: {said}") in render_html(view)
    # A corpus row counts what its view's notice does.
    (row,) = turnfold.corpus.scan(tmp_path / "claude", workers=1, cache=False).rows
    assert row["warnings"] == warning_total(transcript) == 1


def test_L4_a_bad_line_of_a_codex_sub_agent_thread_is_in_the_notice(tmp_path: Path) -> None:
    folder = tmp_path / "threads"
    shutil.copytree(CODEX_TREE, folder)
    broken(folder / CODEX_THREAD)
    transcript = turnfold.load(folder / CODEX_SESSION)
    assert transcript.warnings == []
    agent = only_subagent(transcript, "call_sp1")
    assert agent.transcript is not None
    (warning,) = agent.transcript.warnings
    assert Path(warning.source or "").name == CODEX_THREAD

    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    assert notice["items"] == [
        escape(
            f"Sub-agent Kepler {agent.agent_id} (call_sp1): {CODEX_THREAD}:{warning.line}: "
            f"{warning.reason}"
        )
    ]
    assert warning_total(transcript) == 1


def test_L4_a_sub_agent_s_warnings_its_reader_joined_to_the_session_s_are_listed_once(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cursor"
    shutil.copytree(CURSOR_TREE, folder)
    broken(folder / CURSOR_AGENT)
    transcript = turnfold.load(folder / f"{CURSOR_TREE.name}.jsonl")
    (warning,) = transcript.warnings  # the reader joined the sub-agent's to the session's
    (call,) = [c for c in transcript.tool_calls() if c.subagent and c.subagent.transcript]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert call.subagent.transcript.warnings == [warning]
    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    said = f"{Path(CURSOR_AGENT).name}:{warning.line}: {warning.reason}"
    assert notice["items"] == [escape(said)]
    assert notice["text"] == "Loaded with 1 problem: some records may not be shown"
    assert warning_total(transcript) == 1


def chain_with_warnings(levels: int) -> Transcript:
    """Sub-agents nested ``levels`` deep, each with one warning of a file of its own; each
    level's one step runs the next, the deepest's reads a file."""
    top = inner = Transcript()
    for level in range(1, levels + 1):
        child = Transcript(warnings=[
            LoadWarning(reason=f"bad line of level {level}", line=level,
                        source=f"/home/dev/agents/agent-{level}.jsonl")
        ])  # fmt: skip
        agent = SubAgent(name=f"agent{level}", transcript=child)
        inner.append(ToolCall(call_id=f"call-{level}", name="Task", subagent=agent))
        inner = child
    inner.append(ToolCall(call_id="read", name="Read"))
    return top


def test_L4_the_notice_lists_the_sub_agents_it_draws_down_to_the_bound() -> None:
    """Each drawn level's warnings, in reading order after the view's own; none of a level
    past :data:`MAX_DEPTH`, which the view's warning counts as not shown."""
    levels = MAX_DEPTH + 3
    transcript = chain_with_warnings(levels)
    transcript.warnings.append(LoadWarning(reason="top's own", line=9, source="/x/top.jsonl"))
    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    items = notice["items"]
    assert items[0].startswith(f"(call-{MAX_DEPTH + 1}): sub-agents nest {levels} deep")
    assert items[1] == "top.jsonl:9: top&#x27;s own"
    assert items[2:] == [
        f"Sub-agent agent{level} (call-{level}): agent-{level}.jsonl:{level}: "
        f"bad line of level {level}"
        for level in range(1, MAX_DEPTH + 1)
    ]
    assert notice["text"] == plural("warnings.skipped", MAX_DEPTH + 2, "en")
    assert warning_total(transcript) == MAX_DEPTH + 2


def test_L4_a_sub_agent_run_by_two_calls_or_running_its_caller_is_listed_once() -> None:
    shared = Transcript([ToolCall(call_id="read", name="Read")],
                        warnings=[LoadWarning(reason="bad", line=1, source="a.jsonl")])  # fmt: skip
    top = Transcript(warnings=[LoadWarning(reason="own", line=2, source="t.jsonl")])
    for call_id in ("first", "second"):
        top.append(ToolCall(call_id=call_id, name="Task",
                            subagent=SubAgent(name="helper", transcript=shared)))  # fmt: skip
    notice = build_view_model(top)["notice"]
    assert notice is not None
    assert notice["items"] == ["t.jsonl:2: own", "Sub-agent helper (first): a.jsonl:1: bad"]
    assert subagent_warnings([cut_under(top.entries, top)], top.warnings) == [
        ("helper (first)", shared.warnings)
    ]
    # A transcript that runs itself is drawn down to the bound: its warnings are its own, once.
    loop = Transcript(warnings=[LoadWarning(reason="own", line=2, source="t.jsonl")])
    loop.append(ToolCall(call_id="again", name="Task", subagent=SubAgent(transcript=loop)))
    notice = build_view_model(loop)["notice"]
    assert notice is not None
    assert notice["items"][1:] == ["t.jsonl:2: own"]  # after the view's, of the circle
    assert warning_total(loop) == 2


def test_L4_the_notice_counts_a_sub_agent_s_warnings_past_those_it_lists() -> None:
    """A sub-agent's source lists so many, then counts the rest: the notice counts them all,
    and lists no more of all the sub-agents' than one source does."""
    top = Transcript()
    for index in range(2):
        child = Transcript()
        for line in range(1, MAX_LISTED_WARNINGS + 6):
            keep_warning(child.warnings, LoadWarning(reason="bad", line=line, source=f"{index}.j"))
        assert type(child.warnings[-1]) is UnlistedWarnings
        top.append(ToolCall(call_id=f"c{index}", name="Task",
                            subagent=SubAgent(name=f"a{index}", transcript=child)))  # fmt: skip
    total = 2 * (MAX_LISTED_WARNINGS + 5)
    notice = build_view_model(top)["notice"]
    assert notice is not None
    items = notice["items"]
    assert len(items) == MAX_LISTED_WARNINGS + 1
    assert items[0] == "Sub-agent a0 (c0): 0.j:1: bad"
    assert items[-2] == f"Sub-agent a0 (c0): 0.j:{MAX_LISTED_WARNINGS}: bad"
    assert items[-1] == (
        f"{total - MAX_LISTED_WARNINGS:,} more problem(s) like those above, not listed one by one"
    )
    assert notice["text"] == plural(
        "warnings.skipped_listed", total, "en", listed=MAX_LISTED_WARNINGS
    )
    assert warning_total(top) == total


def test_L4_a_sub_agent_with_no_step_read_still_shows_its_warnings() -> None:
    """Every line of its file bad: its transcript holds no entry, so nothing nests under its
    call, but its call's line is drawn and its warnings are listed."""
    child = Transcript(warnings=[LoadWarning(reason="invalid JSON", line=1, source="a.jsonl")])
    top = Transcript()
    top.append(ToolCall(call_id="c1", name="Task", subagent=SubAgent(name="x", transcript=child)))
    notice = build_view_model(top)["notice"]
    assert notice is not None
    assert notice["items"] == ["Sub-agent x (c1): a.jsonl:1: invalid JSON"]
    assert warning_total(top) == 1


def test_L4_whose_a_warning_is_is_shown_as_text_not_obeyed() -> None:
    """A sub-agent's name is the transcript's (X-1): escaped on a page, an escape sequence
    written out for a terminal."""
    child = Transcript(warnings=[LoadWarning(reason="bad", line=1, source="a.jsonl")])
    top = Transcript()
    top.append(ToolCall(call_id="c1", name="Task",
                        subagent=SubAgent(name="<b>x</b>\x1b[2J", transcript=child)))  # fmt: skip
    notice = build_view_model(top)["notice"]
    assert notice is not None
    assert notice["items"] == [r"Sub-agent &lt;b&gt;x&lt;/b&gt;\x1b[2J (c1): a.jsonl:1: bad"]


def test_Q3_a_widget_walks_only_changed_turns_and_shows_a_live_sub_agent_s_new_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The notice is made on every update: it walks the sub-agents of the turns planned anew
    only, yet lists a warning a sub-agent's reader adds with no entry (which plans nothing)."""
    rec = Recorder()
    rec.user("first")
    call = rec.start_tool("Task", {"description": "work"})
    child = Transcript([ToolCall(call_id="read", name="Read")])
    rec.attach_subagent(call, child, name="worker")
    rec.finish_tool(call, "done")
    rec.user("second")
    widget = TranscriptWidget(rec.transcript)
    widget.flush()
    assert widget.view["notice"] is None

    walked: list[int] = []

    def counting(entries: list[object], top: Transcript) -> object:
        walked.append(len(entries))
        return cut_under(entries, top)  # type: ignore[arg-type]

    monkeypatch.setattr(viewmodel, "cut_under", counting)
    keep_warning(child.warnings, LoadWarning(reason="bad line", line=4, source="/w/agent.jsonl"))
    rec.assistant("the last turn grows")
    widget.flush()
    assert len(walked) == 1  # the last turn, planned anew; the first's walk is kept
    notice = widget.view["notice"]
    assert notice is not None
    assert notice["items"] == ["Sub-agent worker (live-call-1): agent.jsonl:4: bad line"]


def test_L4_the_command_counts_a_sub_agent_s_warnings_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``turnfold render`` says on stderr how many problems the page's notice shows: a
    sub-agent's own included, though the top-level transcript has none."""
    from turnfold.cli import main

    session = claude_session(tmp_path)
    assert main(["render", str(session), "-o", str(tmp_path / "page.html")]) == 0
    said = capsys.readouterr().err
    assert f"turnfold: {session}: 1 problem while loading (shown as a notice)" in said
    assert "first:" not in said  # the top-level transcript's own list is empty
