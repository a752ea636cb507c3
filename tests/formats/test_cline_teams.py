"""Cline 4.x agent teams: a teammate's runs, ``<agentId>__<teamTaskId>.messages.json`` in the
session's folder, nested under the ``team_run_task`` calls that gave their tasks (spec H-5, C-1).

The fixture was written by the real ``cline`` CLI 3.0.65 against a scripted Anthropic server
(see tests/fixtures/SOURCES.md): the lead spawns a reviewer and a tester, mails the reviewer,
runs both (the tester routes a task to the reviewer in turn), spawns a sub-agent, then has the
reviewer continue its conversation in an async run it awaits.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.model import SystemNotice, ToolCall, Transcript, UserMessage
from turnfold.usage import transcript_tokens

SESSION_ID = "1796443893972_gleub"
FOLDER = Path(__file__).parents[1] / "fixtures" / "cline" / "cline-cli-3.0.65_team-session"
SESSION = FOLDER / SESSION_ID / f"{SESSION_ID}.messages.json"
#: The reviewer's runs: its first task, the task the tester routed to it, and the async run
#: that continued that conversation.
FIRST, ROUTED, CONTINUED = "reviewer__zrE1M8", "reviewer__T6H1FN", "reviewer__SHB9qZ"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _runs(transcript: Transcript) -> dict[str, ToolCall]:
    """The team_run_task calls at any depth, by the task each gave."""
    return {
        call.args["task"].split(":")[0]: call
        for call in transcript.tool_calls(nested=True)
        if call.name == "team_run_task"
    }


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / SESSION_ID
    shutil.copytree(FOLDER / SESSION_ID, folder)
    return folder


def test_H5_each_teammate_run_is_the_sub_agent_of_the_call_that_gave_its_task() -> None:
    transcript = turnfold.load(SESSION)
    assert transcript.warnings == []
    runs = _runs(transcript)
    assert sorted(runs) == ["TEAMMATE-TASK-1", "TEAMMATE-TASK-2", "TEAMMATE-TASK-3",
                            "TEAMMATE-TASK-4"]  # fmt: skip
    first = runs["TEAMMATE-TASK-1"]
    assert first.subagent is not None
    assert first.subagent.transcript is not None
    assert (first.subagent.name, first.subagent.agent_id, first.subagent.steps_missing) == (
        "reviewer", FIRST, False,
    )  # fmt: skip
    assert first.subagent.task == "TEAMMATE-TASK-1: list the files in the work folder."
    # The run opened with the reviewer's unread mail, then the task.
    prompt = first.subagent.transcript.entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text.startswith("[MAILBOX] You have 1 unread message(s):")
    assert prompt.text.endswith("\n\nTEAMMATE-TASK-1: list the files in the work folder.")
    # A sync run's result is the teammate's answer; an async one's, the run it queued.
    assert first.result is not None
    assert first.result.text == "The folder holds notes.txt."
    queued = runs["TEAMMATE-TASK-2"].result
    assert queued is not None
    assert queued.text == "Task dispatched to reviewer and queued as run_00001."
    # The tester routed a task to the reviewer: that run sits in the tester's run.
    tester = runs["TEAMMATE-TASK-3"].subagent
    assert tester is not None
    assert tester.transcript is not None
    assert (tester.name, tester.tool_count) == ("tester", 2)
    routed = next(c for c in tester.transcript.tool_calls() if c.name == "team_run_task")
    assert routed is runs["TEAMMATE-TASK-4"]
    assert routed.subagent is not None
    assert routed.subagent.agent_id == ROUTED
    # The sub-agent of the same session is nested as before.
    (spawn,) = [c for c in transcript.tool_calls() if c.name == "spawn_agent"]
    assert spawn.subagent is not None
    assert not spawn.subagent.steps_missing


def test_H5_a_continued_teammate_run_shows_its_own_messages_and_counts_them_once() -> None:
    transcript = turnfold.load(SESSION)
    continued = _runs(transcript)["TEAMMATE-TASK-2"].subagent
    assert continued is not None
    assert continued.transcript is not None
    assert continued.agent_id == CONTINUED
    # Its file repeats the routed run (TASK-4) before its own: shown with that run, once.
    kinds = [type(e).__name__ for e in continued.transcript.entries]
    assert kinds == ["UserMessage", "ToolCall", "AssistantText"]
    assert continued.transcript.entries[0].text == "TEAMMATE-TASK-2: count the lines of notes.txt."
    assert continued.transcript.metadata["cost_usd"] == pytest.approx(2 * 0.00042975, abs=1e-6)
    # Every model response of the session (the lead's 8, the sub-agent's 2, the teammates' 9),
    # each counted once: 125 input tokens apiece, as the scripted server reported them.
    assert transcript_tokens(transcript).combined["input_tokens"] == 19 * 125
    assert transcript.metadata["cost_usd"] == pytest.approx(19 * 0.00042975, abs=1e-5)


def test_H5_a_continued_run_whose_earlier_run_s_file_is_gone_is_shown_whole(
    tmp_path: Path,
) -> None:
    folder = _copy(tmp_path)
    (folder / f"{ROUTED}.messages.json").unlink()
    transcript = turnfold.load(folder / SESSION.name)
    runs = _runs(transcript)
    continued = runs["TEAMMATE-TASK-2"].subagent
    assert continued is not None
    assert continued.transcript is not None
    assert [e.text for e in continued.transcript.entries if isinstance(e, UserMessage)] == [
        "TEAMMATE-TASK-4: say which file is largest.",
        "TEAMMATE-TASK-2: count the lines of notes.txt.",
    ]  # fmt: skip
    routed = runs["TEAMMATE-TASK-4"].subagent
    assert routed is not None
    assert routed.steps_missing
    assert transcript.warnings == []


def test_H5_an_earlier_run_whose_file_matches_no_call_is_shown_in_the_run_that_continued_it(
    tmp_path: Path,
) -> None:
    # Without the tester's file, no call gives the routed run (TASK-4) its task: its messages
    # are the continued run's to show, counted once, and its file is said.
    folder = _copy(tmp_path)
    (folder / "tester__vAH3uF.messages.json").unlink()
    transcript = turnfold.load(folder / SESSION.name)
    continued = _runs(transcript)["TEAMMATE-TASK-2"].subagent
    assert continued is not None
    assert continued.transcript is not None
    assert [e.text for e in continued.transcript.entries if isinstance(e, UserMessage)] == [
        "TEAMMATE-TASK-4: say which file is largest.",
        "TEAMMATE-TASK-2: count the lines of notes.txt.",
    ]  # fmt: skip
    assert [w.reason for w in transcript.warnings] == [
        f"teammate session {ROUTED}.messages.json matches no team_run_task call's task; its "
        f"messages are shown in the run that continued it, {CONTINUED}"
    ]
    # The lead's 8 responses, the sub-agent's 2, the reviewer's 6: each once.
    assert transcript_tokens(transcript).combined["input_tokens"] == 16 * 125
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"user": {"mapped": 18}, "assistant": {"mapped": 16}}


def test_H5_a_continued_run_skips_only_the_earlier_runs_shown_under_their_calls(
    tmp_path: Path,
) -> None:
    # The reviewer's conversation continued from its first run (shown under TASK-1's call)
    # through the routed run (whose file matches no call once the tester's is gone).
    folder = _copy(tmp_path)
    (folder / "tester__vAH3uF.messages.json").unlink()
    first = json.loads((folder / f"{FIRST}.messages.json").read_text())
    continued_file = folder / f"{CONTINUED}.messages.json"
    continued = json.loads(continued_file.read_text())
    continued["messages"] = first["messages"] + continued["messages"]
    continued_file.write_text(json.dumps(continued))
    transcript = turnfold.load(folder / SESSION.name)
    runs = _runs(transcript)
    shown = {
        task: [e.text for e in run.subagent.transcript.entries if isinstance(e, UserMessage)]
        for task, run in runs.items()
        if run.subagent is not None and run.subagent.transcript is not None
    }
    assert shown["TEAMMATE-TASK-1"][0].endswith(
        "TEAMMATE-TASK-1: list the files in the work folder."
    )
    assert shown["TEAMMATE-TASK-2"] == [
        "TEAMMATE-TASK-4: say which file is largest.",
        "TEAMMATE-TASK-2: count the lines of notes.txt.",
    ]  # fmt: skip


def test_H5_a_child_s_file_with_no_messages_yet_is_passed_over(tmp_path: Path) -> None:
    # The SDK writes a run's file empty when it starts, its messages when it ends
    # (writeEmptyMessagesFile): a run still going, or one that failed, has nothing to show.
    folder = _copy(tmp_path)
    for child in (folder / f"{ROUTED}.messages.json", *folder.glob("agent_*.messages.json")):
        document = json.loads(child.read_text())
        document["messages"] = []
        child.write_text(json.dumps(document, indent=2) + "\n")
    transcript = turnfold.load(folder / SESSION.name)
    assert transcript.warnings == []
    (spawn,) = [c for c in transcript.tool_calls() if c.name == "spawn_agent"]
    for agent in (_runs(transcript)["TEAMMATE-TASK-4"].subagent, spawn.subagent):
        assert agent is not None
        assert agent.steps_missing


def test_H5_a_teammate_file_that_matches_no_call_is_said(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    stray = json.loads((folder / f"{FIRST}.messages.json").read_text())
    stray["messages"][0]["content"][0]["text"] = "A task no call gave."
    (folder / "reviewer__Zz9Yy8.messages.json").write_text(json.dumps(stray))
    transcript = turnfold.load(folder / SESSION.name)
    assert [w.reason for w in transcript.warnings] == [
        "teammate session reviewer__Zz9Yy8.messages.json matches no team_run_task call's task; "
        "not shown"
    ]


def test_H5_the_runtime_s_report_of_finished_teammate_runs_is_a_notice() -> None:
    transcript = turnfold.load(SESSION)
    (notice,) = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert notice.subtype == "team_run_updates"
    assert notice.text.startswith("System-delivered teammate async run updates:\n- run_00001")
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "LEAD-TASK: review the work folder with a team"
    ]


def test_H5_a_teammate_s_file_alone_is_its_run() -> None:
    alone = turnfold.load(FOLDER / SESSION_ID / f"{CONTINUED}.messages.json")
    assert (alone.metadata["agent_role"], alone.metadata["task_type"]) == ("teammate", "team")
    assert len(alone.tool_calls()) == 2  # both runs of its conversation: nothing shows them else


def test_C1_a_teammate_s_files_are_no_rows_and_count_in_their_session_s_row(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(FOLDER / SESSION_ID, sessions / SESSION_ID)
    corpus = turnfold.scan(sessions, workers=1)
    assert corpus.keys == [str(sessions / SESSION_ID / SESSION.name)]
    assert (corpus.skipped, corpus.errors) == (0, 0)
    row = corpus.to_pandas().iloc[0]
    # The lead's 8 calls, 4 of them runs of teammates and 1 a sub-agent's; every response's
    # tokens, the teammates' and the sub-agent's included, each once.
    assert (row["tool_calls"], row["subagents"], row["input_tokens"]) == (8, 5, 19 * 125)
    (sessions / SESSION_ID / SESSION.name).unlink()  # no session to nest them in: rows
    alone = turnfold.scan(sessions, workers=1, cache=False)
    assert len(alone.keys) == 5


def test_C4_a_changed_teammate_file_reads_its_session_again(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(FOLDER / SESSION_ID, sessions / SESSION_ID)
    first = turnfold.scan(sessions, workers=1)
    child = sessions / SESSION_ID / f"{FIRST}.messages.json"
    grown = json.loads(child.read_text())
    grown["messages"][-1]["metrics"]["cost"] = 0.5
    child.write_text(json.dumps(grown))
    again = turnfold.scan(sessions, workers=1)
    assert again.read == 2  # the teammate's file and its session
    before, after = first.to_pandas()["cost_usd"][0], again.to_pandas()["cost_usd"][0]
    assert after == pytest.approx(before - 0.00042975 + 0.5, abs=1e-5)


def test_L4_a_teammate_file_of_unexpected_shapes_is_read_and_its_warnings_kept(
    tmp_path: Path,
) -> None:
    folder = _copy(tmp_path)
    child = folder / f"{FIRST}.messages.json"
    odd = json.loads(child.read_text())
    odd.update(origin=3, updated_at=["x"])
    odd["messages"] = [1, {"role": "user", "content": 5}, {"role": "user", "content": [7]},
                       *odd["messages"]]  # fmt: skip
    child.write_text(json.dumps(odd))
    transcript = turnfold.load(folder / SESSION.name)
    # Named by its file, it is still the first run; what it could not read is said.
    first = _runs(transcript)["TEAMMATE-TASK-1"].subagent
    assert first is not None
    assert first.agent_id == FIRST
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (1, "not a message object"),
        (2, "not an Anthropic message (role 'user')"),
        (3, "unknown content block type 'int' skipped"),
    ]


def test_L4_a_team_run_task_whose_input_is_no_object_is_read() -> None:
    result = '{"agentId":"reviewer","mode":"sync","dispatched":true,"text":"done"}'
    transcript = turnfold.load({
        "version": 1, "sessionId": "s1", "agent": "lead", "messages": [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "team_run_task", "input": "oops"}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": result}]},
        ],
    })  # fmt: skip
    assert transcript.warnings == []
    (call,) = transcript.tool_calls()
    assert call.result is not None
    assert call.result.text == "done"
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.steps_missing) == (None, True)


def test_a_teammate_s_calls_are_described_relative_to_the_lead_s_folder() -> None:
    # A teammate's or sub-agent's file has no manifest of its own: it works in the lead's cwd
    # (/tmp/clinefx/work), which the lead's manifest gives.
    transcript = turnfold.load(SESSION)
    assert transcript.metadata["cwd"] == "/tmp/clinefx/work"
    nested = {
        call.description: [c.description for c in call.subagent.transcript.tool_calls()]
        for call in transcript.tool_calls()
        if call.subagent is not None and call.subagent.transcript is not None
    }
    assert nested["TEAMMATE-TASK-2: count the lines of notes.txt."] == ["notes.txt"]
    assert nested["SUBAGENT-TASK: count the lines of notes.txt with wc."] == ["wc -l notes.txt"]
