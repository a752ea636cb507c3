"""Turn process projection: one disclosure per turn, groups, titles, headers, fold defaults (§5)."""

from __future__ import annotations

import itertools

import pytest

from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    PendingAction,
    SubAgent,
    Thinking,
    ToolCall,
    ToolResult,
    Transcript,
    UserMessage,
)
from turnfold.process import (
    ActivityGroup,
    BatchPiece,
    CommandRow,
    ProgressRow,
    ThinkingIndicator,
    ThinkingRow,
    Turn,
    project,
)
from turnfold.recording import Recorder
from turnfold.settings import DisplaySettings

MODES = ("flat", "command-first", "fully-folded")


def recorder() -> Recorder:
    ticks = itertools.count()
    return Recorder(clock=lambda: f"2026-01-01T00:00:{next(ticks):02d}Z")


def settings(**options: object) -> DisplaySettings:
    return DisplaySettings(**options)


def turns(t: Transcript, **options: object) -> list[Turn]:
    running = options.pop("running", None)
    nodes = project(t, settings(**options), running=running)  # type: ignore[arg-type]
    return [n for n in nodes if isinstance(n, Turn)]


def only_turn(t: Transcript, **options: object) -> Turn:
    (turn,) = turns(t, **options)
    return turn


def kinds(items: object) -> list[str]:
    return [type(i).__name__ for i in items]  # type: ignore[attr-defined]


def sample() -> Transcript:
    """Thinking, a read batch, progress, a command, an edit, thinking, a search: one turn."""
    rec = recorder()
    rec.user("Fix the bug")
    rec.thinking("Where is it?")
    for path in ("a.ts", "b.ts"):
        rec.finish_tool(rec.start_tool("Read", {"file_path": path}), "code")
    rec.assistant("Found it; running the tests.")
    rec.finish_tool(rec.start_tool("Bash", {"command": "npm test"}), "1 failed", status="error")
    rec.end_batch()
    rec.finish_tool(rec.start_tool("Edit", {"file_path": "a.ts"}), "ok")
    rec.thinking("Now verify.")
    rec.finish_tool(rec.start_tool("Bash", {"command": "npm test"}), "ok")
    rec.end_batch()
    rec.finish_tool(rec.start_tool("Grep", {"pattern": "TODO"}), "none")
    rec.assistant("Fixed.")
    return rec.transcript


# --- P-1, P-2: one process plus the answer -------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_P1_one_process_per_turn_and_the_answer_outside(mode: str) -> None:
    turn = only_turn(sample(), transcript_display_mode=mode)
    assert turn.process is not None
    assert turn.answer is not None
    assert turn.answer.text == "Fixed."
    flat_keys = [i.key for i in turn.process.items]
    assert turn.answer.id not in flat_keys


def test_P1_user_messages_and_compaction_keep_their_own_boundaries() -> None:
    rec = recorder()
    rec.user("one")
    rec.assistant("first answer")
    rec.transcript.append(__import__("turnfold").CompactionBoundary(summary="so far"))
    rec.assistant("after compaction")
    rec.user("two")
    rec.assistant("second answer")
    nodes = project(rec.transcript)
    assert kinds(nodes) == [
        "UserMessage",
        "Turn",
        "CompactionBoundary",
        "Turn",
        "UserMessage",
        "Turn",
    ]


def test_P2_trailing_text_is_the_tentative_answer_until_activity_follows() -> None:
    rec = recorder()
    rec.user("go")
    text = rec.assistant("Let me check the file")
    turn = only_turn(rec.transcript, running=True)
    assert turn.answer is text
    assert turn.tentative
    rec.start_tool("Read", {"file_path": "a.ts"})
    turn = only_turn(rec.transcript)
    assert turn.answer is None
    assert turn.process is not None
    progress = [i for i in turn.process.items if isinstance(i, ProgressRow)]
    assert [p.entry for p in progress] == [text]  # the stored entry moved, unchanged
    assert text.text == "Let me check the file"


def test_P2_a_settled_answer_is_not_tentative() -> None:
    turn = only_turn(sample())
    assert not turn.tentative
    assert not turn.running


# --- P-3: outside the fold ------------------------------------------------------------------------


def test_P3_errors_aborts_and_pending_decisions_sit_outside_the_process() -> None:
    rec = recorder()
    rec.user("go")
    rec.finish_tool(rec.start_tool("Read"), "x")
    rec.assistant("partial answer")
    pending = rec.pending("permission", "Allow rm -rf build?")
    marker = rec.abort()
    error = rec.fail("API error 529")
    turn = only_turn(rec.transcript)
    assert turn.outside == (pending, marker, error)
    assert turn.process is not None
    process_entries = [getattr(i, "entry", None) for i in turn.process.items]
    assert pending not in process_entries
    assert turn.answer is not None
    assert turn.answer.text == "partial answer"


# --- P-4: display modes ---------------------------------------------------------------------------


def test_P4_fully_folded_keeps_commands_inside_their_group() -> None:
    turn = only_turn(sample(), transcript_display_mode="fully-folded")
    assert turn.process is not None
    assert kinds(turn.process.items) == ["ActivityGroup", "ProgressRow", "ActivityGroup"]
    second = turn.process.items[2]
    assert isinstance(second, ActivityGroup)
    assert kinds(second.items) == ["BatchPiece", "BatchPiece", "ThinkingRow", "BatchPiece",
                                   "BatchPiece"]  # fmt: skip


def test_P4_command_first_pulls_every_command_out_as_its_own_row() -> None:
    turn = only_turn(sample(), transcript_display_mode="command-first")
    assert turn.process is not None
    top = kinds(turn.process.items)
    assert top.count("CommandRow") == 2
    commands = [i for i in turn.process.items if isinstance(i, CommandRow)]
    assert all(c.call.name == "Bash" for c in commands)
    for item in turn.process.items:
        if isinstance(item, ActivityGroup):
            assert not any(isinstance(i, CommandRow) for i in item.items)


def test_P4_command_first_adjacent_commands_stay_separate() -> None:
    rec = recorder()
    rec.user("go")
    rec.finish_tool(rec.start_tool("Bash", {"command": "a"}), "")
    rec.finish_tool(rec.start_tool("Bash", {"command": "b"}), "")
    turn = only_turn(rec.transcript, transcript_display_mode="command-first")
    assert turn.process is not None
    assert kinds(turn.process.items) == ["CommandRow", "CommandRow"]


def test_P4_flat_has_no_groups() -> None:
    turn = only_turn(sample(), transcript_display_mode="flat")
    assert turn.process is not None
    assert not any(isinstance(i, ActivityGroup) for i in turn.process.items)
    assert kinds(turn.process.items) == [
        "ThinkingRow", "BatchPiece", "ProgressRow", "BatchPiece", "BatchPiece", "ThinkingRow",
        "BatchPiece", "BatchPiece",
    ]  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_P4_a_subagent_is_the_container_of_its_own_work(mode: str) -> None:
    rec = recorder()
    rec.user("go")
    child = recorder()
    child.user("research")
    child.finish_tool(child.start_tool("Read"), "x")
    task = rec.start_tool("Task", {"description": "research"})
    rec.attach_subagent(task, child.transcript, name="r")
    rec.finish_tool(task, ToolResult(text="done", kind="subagent"))
    turn = only_turn(rec.transcript, transcript_display_mode=mode)
    assert turn.process is not None
    calls = [c for i in turn.process.items if isinstance(i, BatchPiece) for c in i.calls]
    assert [c.name for c in calls] == ["Task"]  # the child's Read is not repeated here


# --- P-5, P-6: groups need two; titles ------------------------------------------------------------


def test_P5_a_single_item_is_not_wrapped_in_a_group() -> None:
    rec = recorder()
    rec.user("go")
    rec.finish_tool(rec.start_tool("Bash", {"command": "ls"}), "")
    rec.assistant("done")
    turn = only_turn(rec.transcript)
    assert turn.process is not None
    assert kinds(turn.process.items) == ["BatchPiece"]


@pytest.mark.parametrize(("show", "expected"), [(True, ["ActivityGroup"]), (False, ["BatchPiece"])])
def test_P5_hidden_thinking_never_makes_a_group(show: bool, expected: list[str]) -> None:
    rec = recorder()
    rec.user("go")
    rec.thinking("hmm")
    rec.finish_tool(rec.start_tool("Bash", {"command": "ls"}), "")
    rec.assistant("done")
    turn = only_turn(rec.transcript, show_thinking=show)
    assert turn.process is not None
    assert kinds(turn.process.items) == expected


def test_P5_only_hidden_thinking_leaves_no_process_rows() -> None:
    rec = recorder()
    rec.user("go")
    rec.thinking("hmm")
    rec.assistant("done")
    assert only_turn(rec.transcript, show_thinking=False).process is None


@pytest.mark.parametrize(
    ("locale", "title", "count"),
    [("en", "Searched and read files", "3 operations"), ("zh", "搜索并读取文件", "3 次操作")],
)
def test_P6_group_title_states_the_composition_then_the_count(
    locale: str, title: str, count: str
) -> None:
    rec = recorder()
    rec.user("go")
    rec.finish_tool(rec.start_tool("Grep", {"pattern": "x"}), "")
    rec.end_batch()
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}), "")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "b"}), "")
    rec.assistant("done")
    turn = only_turn(rec.transcript, locale=locale)
    assert turn.process is not None
    (group,) = turn.process.items
    assert isinstance(group, ActivityGroup)
    assert (group.title, group.count_text) == (title, count)


def test_P6_at_most_three_actions_then_etc_and_thinking_is_not_counted() -> None:
    turn = only_turn(sample(), transcript_display_mode="fully-folded")
    assert turn.process is not None
    first, _, second = turn.process.items
    assert isinstance(first, ActivityGroup)
    assert isinstance(second, ActivityGroup)
    assert (first.title, first.count_text) == ("Thought and read files", "2 operations")
    assert second.title == "Ran commands, edited files, thought, etc."
    assert second.count_text == "4 operations"


def test_P6_a_thinking_only_group_counts_its_segments() -> None:
    rec = recorder()
    rec.user("go")
    rec.thinking("one")
    rec.thinking("two")
    rec.assistant("done")
    turn = only_turn(rec.transcript)
    assert turn.process is not None
    (group,) = turn.process.items
    assert isinstance(group, ActivityGroup)
    assert (group.title, group.count_text) == ("Thought", "2 segments")


def test_P6_long_compositions_are_cut_before_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    import turnfold.process

    monkeypatch.setattr(turnfold.process, "GROUP_TITLE_LIMIT", 20)
    rec = recorder()
    rec.user("go")
    for name in ("LS", "Bash", "Edit"):
        rec.finish_tool(rec.start_tool(name), "")
    turn = only_turn(rec.transcript)
    assert turn.process is not None
    (group,) = turn.process.items
    assert isinstance(group, ActivityGroup)
    assert group.title == "Listed directories,…"
    assert group.count_text == "3 operations"  # the count is never cut


# --- P-7: the header --------------------------------------------------------------------------


def test_P7_a_failed_tool_does_not_fail_a_completed_turn() -> None:
    header = only_turn(sample()).header
    assert (header.status, header.label) == ("completed", "Completed")


def test_P7_status_priority_failed_over_stopped_over_running() -> None:
    rec = recorder()
    rec.user("go")
    rec.start_tool("Bash", {"command": "sleep 100"})
    assert only_turn(rec.transcript).header.status == "running"
    rec.transcript.append(AbortMarker())
    assert only_turn(rec.transcript).header.status == "stopped"
    rec.transcript.append(AssistantError(message="boom"))
    assert only_turn(rec.transcript).header.status == "failed"


def test_P7_thinking_label_while_reasoning_streams() -> None:
    rec = recorder()
    rec.user("go")
    rec.thinking("mm", streaming=True)
    header = only_turn(rec.transcript).header
    assert (header.status, header.label) == ("running", "Thinking")


def test_P7_no_duration_when_none_was_recorded() -> None:
    t = Transcript([UserMessage(text="go"), ToolCall(name="Read", status="success"),
                    AssistantText(text="ok")])  # fmt: skip
    header = only_turn(t).header
    assert header.duration is None
    timed = Transcript([UserMessage(text="go", timestamp="2026-01-01T00:00:00Z"),
                        AssistantText(text="ok", timestamp="2026-01-01T00:00:12Z")])  # fmt: skip
    assert only_turn(timed).header.duration == "12s"
    said = AssistantText(text="ok", meta={"turn_duration_ms": 61_000})
    recorded = Transcript([UserMessage(text="go"), said])
    assert only_turn(recorded).header.duration == "1m 1s"


def test_P7_subagent_work_is_not_counted_in_the_parent() -> None:
    child = Transcript([ToolCall(name="Read", status="success") for _ in range(5)])
    t = Transcript([
        UserMessage(text="go"),
        ToolCall(name="Task", status="success", subagent=SubAgent(transcript=child)),
        ToolCall(name="Read", status="success"),
        AssistantText(text="ok"),
    ])  # fmt: skip
    header = only_turn(t).header
    assert (header.tool_count, header.count_text) == (2, "2 tools")


def test_P7_header_in_chinese() -> None:
    header = only_turn(sample(), locale="zh").header
    assert (header.label, header.count_text) == ("已完成", "6 个工具")


# --- P-8, P-9: default fold states ----------------------------------------------------------


def running_sample() -> tuple[Recorder, ToolCall]:
    rec = recorder()
    rec.user("go")
    rec.thinking("plan")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}), "")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "b"}), "")
    rec.assistant("now the tests")
    rec.thinking("run them")
    running = rec.start_tool("Bash", {"command": "npm test"})
    return rec, running


def test_P8_running_work_stays_open_and_finished_groups_close() -> None:
    rec, _ = running_sample()
    turn = only_turn(rec.transcript)
    assert turn.running
    assert turn.process is not None
    assert turn.process.open
    first, _, current = turn.process.items
    assert isinstance(first, ActivityGroup)
    assert isinstance(current, ActivityGroup)
    assert not first.open
    assert current.open
    assert current.active


def test_P8_a_group_with_a_failure_stays_open_during_recovery() -> None:
    rec = recorder()
    rec.user("go")
    rec.finish_tool(rec.start_tool("Bash", {"command": "a"}), "", status="error")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "x"}), "")
    rec.assistant("recovering")
    rec.start_tool("Bash", {"command": "b"})
    turn = only_turn(rec.transcript)
    assert turn.process is not None
    failed = turn.process.items[0]
    assert isinstance(failed, ActivityGroup)
    assert failed.open
    rec.finish_tool(rec.transcript.tool_calls()[-1], "")
    rec.assistant("done")
    settled = only_turn(rec.transcript)
    assert settled.process is not None
    assert not settled.process.open
    assert not any(i.open for i in settled.process.items if isinstance(i, ActivityGroup))


@pytest.mark.parametrize("collapse_groups", [True, False])
@pytest.mark.parametrize("collapse_thinking", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_P8_settled_defaults_follow_the_two_switches(
    collapse_groups: bool, collapse_thinking: bool, mode: str
) -> None:
    turn = only_turn(
        sample(),
        transcript_display_mode=mode,
        auto_collapse_settled_groups=collapse_groups,
        auto_collapse_thinking=collapse_thinking,
    )
    assert turn.process is not None
    assert not turn.process.open  # a settled turn renders closed from its first paint
    items = list(turn.process.items)
    groups = [i for i in items if isinstance(i, ActivityGroup)]
    thinking = [i for i in items if isinstance(i, ThinkingRow)]
    thinking += [t for g in groups for t in g.items if isinstance(t, ThinkingRow)]
    assert thinking
    assert all(g.open is (not collapse_groups) for g in groups)
    assert all(t.open is (not collapse_thinking) for t in thinking)
    assert (mode == "flat") == (not groups)


@pytest.mark.parametrize(("mode", "expected"), [("flat", [True, True]),
                                                ("command-first", [True, True]),
                                                ("fully-folded", [False, True])])  # fmt: skip
def test_P9_thinking_rows_of_a_running_turn(mode: str, expected: list[bool]) -> None:
    rec = recorder()
    rec.user("go")
    rec.thinking("older")
    rec.finish_tool(rec.start_tool("Bash", {"command": "a"}), "")
    rec.thinking("current", streaming=True)
    turn = only_turn(rec.transcript, transcript_display_mode=mode)
    assert turn.process is not None
    rows = [i for i in turn.process.items if isinstance(i, ThinkingRow)]
    rows += [t for g in turn.process.items if isinstance(g, ActivityGroup)
             for t in g.items if isinstance(t, ThinkingRow)]  # fmt: skip
    assert [r.open for r in sorted(rows, key=lambda r: r.entry.text != "older")] == expected


def test_P9_hidden_thinking_shows_only_the_streaming_indicator_and_stays_stored() -> None:
    rec = recorder()
    rec.user("go")
    rec.thinking("done reasoning")
    live = rec.thinking("still reasoning", streaming=True)
    turn = only_turn(rec.transcript, show_thinking=False)
    assert turn.process is not None
    assert kinds(turn.process.items) == ["ThinkingIndicator"]
    assert isinstance(turn.process.items[0], ThinkingIndicator)
    rec.stream(live, "", done=True)
    assert only_turn(rec.transcript, show_thinking=False).process is None
    assert len([e for e in rec.transcript if isinstance(e, Thinking)]) == 2
    assert only_turn(rec.transcript, show_thinking=True).process is not None


# --- P-10: keys are stable ----------------------------------------------------------------------


def _keys(turn: Turn) -> set[str]:
    out = {turn.key}
    if turn.process:
        out.add(turn.process.key)
        for item in turn.process.items:
            out.add(item.key)
            for inner in getattr(item, "items", ()) if isinstance(item, ActivityGroup) else ():
                out.add(inner.key)
    return out


def test_P10_keys_survive_appends_and_mode_switches() -> None:
    rec, running = running_sample()
    before = only_turn(rec.transcript)
    rec.finish_tool(running, "ok")
    rec.assistant("done")
    after = only_turn(rec.transcript)
    assert before.key == after.key
    assert before.process is not None
    assert after.process is not None
    assert before.process.key == after.process.key
    assert {i.key for i in before.process.items} <= _keys(after)
    folded = only_turn(rec.transcript, transcript_display_mode="fully-folded")
    flat = only_turn(rec.transcript, transcript_display_mode="flat")
    # Items keep their keys whether or not a group wraps them.
    flat_items = {i.key for i in flat.process.items}  # type: ignore[union-attr]
    assert flat_items <= _keys(folded)


def test_P10_keys_come_from_entry_ids_not_positions() -> None:
    a = sample()
    b = Transcript(metadata={})
    b.append(UserMessage(text="earlier", id="u0"))
    b.append(AssistantText(text="earlier answer", id="a0"))
    for entry in a:
        b.append(entry)
    assert _keys(turns(a)[0]) == _keys(turns(b)[1])


def test_pending_action_alone_keeps_the_header() -> None:
    t = Transcript([UserMessage(text="go"), PendingAction(action="question", text="Which?")])
    turn = only_turn(t)
    assert turn.process is None
    assert turn.answer is None
    assert [e.text for e in turn.outside] == ["Which?"]  # type: ignore[union-attr]
