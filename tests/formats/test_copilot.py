"""GitHub Copilot CLI sessions (``copilot`` format): the real files @github/copilot 1.0.102
wrote playing the harness's ``work`` and ``interrupt`` scenarios (tests/agents/scenarios.py)
against the scripted model server (tests/fixtures/copilot/README.md says how)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.corpus import scan
from turnfold.model import (
    AbortMarker,
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    UserMessage,
)
from turnfold.session import session_facts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "copilot"
WORK = FIXTURES / "session-state" / "5522b163-29bf-4e3e-82c6-062172639e01" / "events.jsonl"
INTERRUPT = FIXTURES / "session-state" / "7eb3eca4-e4ba-4bac-9395-7f6bb4b47243" / "events.jsonl"
STDOUT = FIXTURES / "stdout"


def sent(n: int) -> dict[str, int]:
    """The counts the scripted server sent with its ``n``-th response (Chat Completions:
    ``SentUsage.numbered`` with cache reads and reasoning)."""
    read, reasoning = 1000 * n + 20, 10 * n + 4
    return {
        "input_tokens": 1000 * n + 100 + read,
        "output_tokens": 10 * n + 5 + reasoning,
        "cache_read_tokens": read,
        "cache_write_tokens": 0,
        "reasoning_tokens": reasoning,
    }


def total(numbers: list[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in numbers:
        for key, value in sent(n).items():
            out[key] = out.get(key, 0) + value
    return out


def counts(entry: object) -> dict[str, int]:
    usage = getattr(entry, "usage", None)
    assert usage is not None, entry
    return {k: v for k, v in vars(usage).items() if v is not None and k != "response_id"}


@pytest.fixture(scope="module")
def work() -> turnfold.Transcript:
    return turnfold.load(WORK)


def test_detected_as_copilot_and_every_event_accounted_for(work: turnfold.Transcript) -> None:
    assert work.metadata["source_format"] == "copilot"
    assert work.warnings == []
    accounting = work.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["tool.execution_complete"] == {"mapped": 11}
    assert accounting.counts["assistant.turn_start"] == {"ignored": 11}


def test_session_metadata(work: turnfold.Transcript) -> None:
    meta = work.metadata
    assert meta["session_id"] == "5522b163-29bf-4e3e-82c6-062172639e01"
    assert meta["version"] == "1.0.102"
    assert meta["model"] == "fake-model"
    assert meta["cwd"].endswith("/work")
    assert meta["resumes"] == 1
    assert meta["system_prompt"].startswith("You are the GitHub Copilot CLI")
    assert session_facts(work).agent == "GitHub Copilot CLI"


def test_prompts_thinking_texts_and_calls_in_order(work: turnfold.Transcript) -> None:
    shown = [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None))
        for e in work.entries
    ]
    assert shown == [
        ("UserMessage", "TF-FIRST: look around this folder, run the checks, fix the notes and "
         "delegate a step."),
        ("Thinking", "TF-THINK: read, search and list at once."),
        ("ToolCall", "view"), ("ToolCall", "grep"), ("ToolCall", "view"),
        ("ToolCall", "bash"), ("ToolCall", "bash"),
        ("AssistantText", "TF-FIX: editing the notes and adding a file."),
        ("ToolCall", "edit"), ("ToolCall", "create"), ("ToolCall", "bash"), ("ToolCall", "task"),
        ("AssistantText", "TF-DONE-1: read, searched, listed, ran, edited, wrote and delegated."),
        ("UserMessage", "TF-SECOND: one more check after the resume, please."),
        ("ToolCall", "bash"),
        ("AssistantText", "TF-DONE-2: still fine after the resume."),
    ]  # fmt: skip
    texts = [e for e in work.entries if isinstance(e, AssistantText)]
    assert {t.model for t in texts} == {"fake-model"}


def test_calls_arguments_results_and_the_cli_s_own_outcomes(work: turnfold.Transcript) -> None:
    calls = work.tool_calls()
    assert [c.call_id for c in calls[:3]] == [f"call_tffirst_0_{i}" for i in range(3)]
    assert calls[0].batch_id == calls[1].batch_id == calls[2].batch_id != calls[3].batch_id
    read, search, listed, ok, failed, edit, write, long, task, again = calls
    assert read.args["path"].endswith("/work/notes.txt")
    assert read.description == "notes.txt"
    assert "TF-NOTE-LINE" in read.result.text
    assert search.args["pattern"] == "TF-NEEDLE"
    assert search.result.text.endswith("src/app.py")
    assert "notes.txt" in listed.result.text
    assert ok.args["command"] == "printf 'TF-OK-%s\\n' 23"
    assert ok.status == "success"
    assert "TF-OK-23" in ok.result.text
    assert ok.meta["exit_code"] == 0
    # Copilot records the exit code 3 with success: true; the exit code makes it an error.
    assert failed.status == "error"
    assert failed.meta["exit_code"] == 3
    assert "TF-FAIL-OUT" in failed.result.text
    assert "exit code 3" in failed.result.text
    assert edit.args["old_str"] == "TF-NOTE-LINE"
    assert edit.args["new_str"] == "TF-EDITED"
    assert edit.status == "success"
    assert "+TF-EDITED" in edit.meta["detail"]
    assert write.args["file_text"] == "TF-NEW-FILE\n"
    assert write.status == "success"
    assert long.status == "success"
    assert "TF-LINE-1" in long.result.text
    assert task.status == "success"
    assert task.result.text == "TF-SUB-DONE: the sub-agent echoed its word."
    assert again.status == "success"
    assert "TF-AGAIN" in again.result.text
    for call in calls:
        assert call.started_at is not None
        assert call.ended_at is not None
        assert call.started_at <= call.ended_at


def test_the_sub_agent_nests_under_its_task_call(work: turnfold.Transcript) -> None:
    task = work.tool_calls()[8]
    agent = task.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert agent.agent_id == "9301f0f6-b3c2-4640-9a26-b8ed1611bdf4"
    assert agent.name == "scripted"
    # The task call's description names the task, as Claude Code's sub-agent line does; its
    # prompt is the child's first message.
    assert task.args["description"] == "scripted sub-agent"
    assert agent.task == "scripted sub-agent"
    assert agent.tool_count == 1
    assert agent.duration_ms == 91.0
    child = agent.transcript.entries
    assert isinstance(child[0], UserMessage)
    assert child[0].text.startswith("TF-SUBTASK")
    assert isinstance(child[1], ToolCall)
    assert child[1].args["command"] == "echo TF-SUB-OK"
    assert child[1].status == "success"
    assert "TF-SUB-OK" in child[1].result.text
    assert isinstance(child[2], AssistantText)
    assert child[2].text.startswith("TF-SUB-DONE")
    assert len(child) == 3
    # The sub-agent's model change (its first model) is no notice.
    assert all(type(e).__name__ != "SystemNotice" for e in work.entries + child)


def test_usage_per_response_and_the_recorded_totals(work: turnfold.Transcript) -> None:
    """Responses 1-6 and 9-11 are the lead's, 7-8 the sub-agent's (the server numbers them in
    the order it answered); each response's usage record sits on its entries."""
    entries = work.entries
    thinking = entries[1]
    assert isinstance(thinking, Thinking)
    assert counts(thinking) == sent(1)
    calls = work.tool_calls()
    assert counts(calls[3]) == sent(2)
    assert counts(calls[4]) == sent(3)
    assert counts(entries[7]) == sent(4)  # the text of the response that also edits and writes
    assert counts(calls[7]) == sent(5)
    assert counts(calls[8]) == sent(6)
    assert counts(entries[12]) == sent(9)
    assert counts(entries[15]) == sent(11)
    child = calls[8].subagent.transcript.entries
    assert counts(child[1]) == sent(7)
    assert counts(child[2]) == sent(8)
    meta = work.metadata
    assert meta["usage"] == total([1, 2, 3, 4, 5, 6, 9, 10, 11])
    assert meta["session_usage"] == total(list(range(1, 12)))
    assert meta["model_usage"] == {"fake-model": {**total(list(range(1, 12))), "requests": 11}}
    # The lead's recorded total and its sub-agent's responses: every response once.
    assert session_facts(work).tokens == total(list(range(1, 12)))


def test_an_interrupt_cancels_the_running_call_and_is_an_abort() -> None:
    transcript = turnfold.load(INTERRUPT)
    (call,) = transcript.tool_calls()
    assert call.args["command"] == "echo TF-SLOW-START; sleep 45"
    assert call.status == "cancelled"
    assert call.result is None
    assert isinstance(transcript.entries[-1], AbortMarker)
    # The event's reason code, in words (the CLI's session-events schema says what it means).
    assert transcript.entries[-1].reason == "Interrupted by the user"
    assert transcript.entries[-1].meta["reason"] == "user_initiated"


USER_ABORT = FIXTURES / "interrupt-user-abort" / "dd7fc556-2021-4665-9109-ba5e125a491f"


def test_an_abort_s_reason_code_is_shown_in_words_not_as_the_code() -> None:
    """Copilot CLI 1.0.102 also writes ``user_abort`` for the same SIGINT (a real file of the
    ``interrupt`` scenario): the stop reads as the user's, the code kept in ``meta``; a code
    the schema does not list is shown as it is."""
    transcript = turnfold.load(USER_ABORT / "events.jsonl")
    assert transcript.warnings == []
    abort = transcript.entries[-1]
    assert isinstance(abort, AbortMarker)
    assert (abort.reason, abort.meta["reason"]) == ("Stopped by the user", "user_abort")
    (call,) = transcript.tool_calls()
    assert (call.args["command"], call.status) == ("echo TF-SLOW-START; sleep 45", "cancelled")
    lines = [json.dumps({"type": "user.message", "data": {"content": "go"}, "id": "u",
                         "parentId": None, "timestamp": "2026-12-05T13:27:24.782Z"}),
             json.dumps({"type": "abort", "data": {"reason": "TF-NEW-CODE"}, "id": "a",
                         "parentId": "u", "timestamp": "2026-12-05T13:27:25.782Z"})]  # fmt: skip
    other = turnfold.load("\n".join(lines).encode(), format="copilot").entries[-1]
    assert isinstance(other, AbortMarker)
    assert other.reason == "TF-NEW-CODE"


def test_the_json_output_stream_reads_too() -> None:
    """What ``copilot -p --output-format json`` printed: the same events, the live-only ones
    among them, and a closing ``result``."""
    first = turnfold.load(STDOUT / "work_stdout-0.jsonl")
    assert first.metadata["source_format"] == "copilot"
    assert first.warnings == []
    assert [c.name for c in first.tool_calls()][:3] == ["view", "grep", "view"]
    assert first.tool_calls()[4].status == "error"
    assert first.metadata["exit_code"] == 0
    assert first.metadata["duration_ms"] > 0
    assert first.accounting.counts["assistant.message_delta"]["ignored"] >= 1
    second = turnfold.load(STDOUT / "work_stdout-1.jsonl")
    assert [e.text for e in second.entries if isinstance(e, AssistantText)] == [
        "TF-DONE-2: still fine after the resume."
    ]


def test_a_file_created_info_in_the_stream_does_not_split_the_turn() -> None:
    """``--output-format json`` prints a live-only ``session.info`` of ``infoType``
    ``file_created`` (its message the path alone) after the ``create`` call: the call shows the
    file, and a notice there split the run's one turn in two (a corpus row of two turns; the
    session's events.jsonl, which has no such event, reads as one)."""
    infos = [e["data"] for e in _events(STDOUT / "work_stdout-0.jsonl")
             if e["type"] == "session.info"]  # fmt: skip
    assert [i["infoType"] for i in infos] == ["file_created"]
    first = turnfold.load(STDOUT / "work_stdout-0.jsonl")
    assert not [e for e in first.entries if isinstance(e, SystemNotice)]
    assert first.accounting is not None
    assert first.accounting.counts["session.info/file_created"] == {"ignored": 1}
    create = next(c for c in first.tool_calls() if c.name == "create")
    assert create.result is not None
    assert "new.txt" in create.result.text
    row = scan([STDOUT / "work_stdout-0.jsonl"], workers=1, cache=False).to_pandas().iloc[0]
    assert (row["turns"], row["tool_calls"]) == (1, 9)


def test_a_cancellation_info_after_the_abort_is_not_said_twice() -> None:
    """The stdout of a real interrupted run: the ``abort`` event, then a live-only
    ``session.info`` ``cancellation`` ("Operation cancelled by user") saying the same; one
    left without an abort before it is still a notice."""
    transcript = turnfold.load(USER_ABORT.parent / "stdout-0.jsonl")
    assert transcript.warnings == []
    assert [e.kind for e in transcript.entries][-1] == "abort"
    assert not [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["session.info/cancellation"] == {"ignored": 1}
    line = {
        "type": "session.info",
        "id": "i",
        "parentId": None,
        "ephemeral": True,
        "timestamp": "2026-12-05T13:27:24.782Z",
        "data": {"infoType": "cancellation", "message": "Operation cancelled by user"},
    }
    alone = turnfold.load(json.dumps(line).encode(), format="copilot")
    notices = [e for e in alone.entries if isinstance(e, SystemNotice)]
    assert [(e.kind, e.text) for e in notices] == [("system", "Operation cancelled by user")]


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_truncated_last_line_is_warned_of_and_the_rest_read(tmp_path: Path) -> None:
    data = WORK.read_bytes()
    path = tmp_path / "events.jsonl"
    path.write_bytes(data[: len(data) - 200])  # the last shutdown cut off
    transcript = turnfold.load(path)
    lines = data.count(b"\n")
    assert any(w.line == lines for w in transcript.warnings), transcript.warnings
    assert transcript.entries[-1].text == "TF-DONE-2: still fine after the resume."
    # Without its last shutdown the totals are the first run's, the lead's not recorded anew
    # after the resumed run's responses.
    assert "usage" not in transcript.metadata
    assert transcript.metadata["session_usage"] == total(list(range(1, 10)))


def test_a_failed_tool_and_an_unknown_event(tmp_path: Path) -> None:
    lines = WORK.read_text(encoding="utf-8").splitlines()[:3]  # start, permissions, prompt
    message = {
        "type": "assistant.message",
        "data": {"messageId": "m", "content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "view", "arguments": {"path": "/nope"}}]},
        "id": "e1", "timestamp": "2026-12-05T13:26:44.000Z", "parentId": None,
    }  # fmt: skip
    complete = {
        "type": "tool.execution_complete",
        "data": {"toolCallId": "c1", "success": False,
                 "error": {"message": "Path /nope does not exist", "code": "failure"}},
        "id": "e2", "timestamp": "2026-12-05T13:26:45.000Z", "parentId": "e1",
    }  # fmt: skip
    novel = {"type": "session.novelty", "data": {}, "id": "e3", "timestamp": None, "parentId": "e2"}
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([*lines, *(json.dumps(v) for v in (message, complete, novel))]))
    transcript = turnfold.load(path)
    (call,) = transcript.tool_calls()
    assert call.status == "error"
    assert call.result.text == "Path /nope does not exist"
    assert call.meta["error_code"] == "failure"
    reasons = [w.reason for w in transcript.warnings]
    assert reasons == ["unknown Copilot event 'session.novelty' skipped"]


def test_a_scan_of_session_state_is_a_row_per_session(tmp_path: Path) -> None:
    """Each session folder holds the CLI's own files beside events.jsonl (workspace.yaml,
    checkpoints, rewind snapshots as JSON, files it saved): its events are the one row."""
    root = tmp_path / ".copilot" / "session-state"
    for events in (WORK, INTERRUPT):
        folder = root / events.parent.name
        shutil.copytree(events.parent, folder)
        (folder / "checkpoints").mkdir()
        (folder / "checkpoints" / "index.md").write_text("# Checkpoints\n")
        (folder / "rewind-file-snapshots").mkdir()
        (folder / "rewind-file-snapshots" / "tracking.json").write_text('{"snapshots": []}')
        (folder / "files").mkdir()
        (folder / "files" / "notes.json").write_text("{}")
    corpus = scan(tmp_path / ".copilot", workers=1, cache=False)
    rows = list(corpus)
    assert sorted(r["key"] for r in rows) == sorted(
        str(root / e.parent.name / "events.jsonl") for e in (WORK, INTERRUPT)
    )
    assert {r["format"] for r in rows} == {"copilot"}
    assert all(r["error"] is None for r in rows)
    assert sorted(r["tool_calls"] for r in rows) == [1, 10]


def test_the_stdout_stream_shows_each_reasoning_once() -> None:
    # --output-format json prints the assistant.message (its reasoningText) and then the
    # assistant.reasoning event that carries the same text: one thinking, as in events.jsonl.
    for path in (STDOUT / "work_stdout-0.jsonl", WORK):
        thoughts = [e.text for e in turnfold.load(path).entries if isinstance(e, Thinking)]
        assert thoughts == ["TF-THINK: read, search and list at once."], path


def test_the_stdout_of_an_interrupted_run_names_its_model() -> None:
    # No session.start in stdout, and the run wrote no text: its assistant.message names the
    # model (fake-model), which the header and the corpus row show.
    transcript = turnfold.load(STDOUT / "interrupt_stdout-0.jsonl")
    assert transcript.metadata["model"] == "fake-model"
    assert session_facts(transcript).models == ["fake-model"]


def test_the_stdout_of_an_interrupted_run_keeps_what_the_cancelled_call_printed() -> None:
    # The durable events.jsonl records no result for a call the interrupt cancels; the stdout
    # stream printed its output piece by piece (tool.shell_output) as it ran.
    (call,) = turnfold.load(STDOUT / "interrupt_stdout-0.jsonl").tool_calls()
    assert call.status == "cancelled"
    assert call.result is not None
    assert call.result.text == "TF-SLOW-START\n"


def test_a_cancelled_call_s_output_is_its_pieces_else_its_last_partial_output() -> None:
    def event(kind: str, **data: Any) -> str:
        stamp = "2026-12-05T13:27:24.782Z"
        return json.dumps({"type": kind, "data": data, "id": kind, "parentId": None,
                           "timestamp": stamp})  # fmt: skip

    def run(*middle: str) -> list[Any]:
        started = [
            event("tool.execution_start", toolCallId=i, toolName="bash", arguments={})
            for i in ("a", "b")
        ]
        lines = [event("user.message", content="go"), *started, *middle, event("abort")]
        return turnfold.load("\n".join(lines).encode(), format="copilot").tool_calls()

    a, b = run(
        event("tool.shell_output", toolCallId="a", stream="stdout", text="one\n", sequence=0),
        event("tool.execution_partial_result", toolCallId="a", partialOutput="one\n"),
        event("tool.shell_output", toolCallId="a", stream="stderr", text="two\n", sequence=1),
        event("tool.execution_partial_result", toolCallId="b", partialOutput="so far"),
    )
    assert (a.status, a.result and a.result.text) == ("cancelled", "one\ntwo\n")
    assert (b.status, b.result and b.result.text) == ("cancelled", "so far")
    # A call that ended before the abort keeps its own result, not the pieces.
    done = {"content": "one\n<exited 0>"}
    a, b = run(
        event("tool.shell_output", toolCallId="a", stream="stdout", text="one\n", sequence=0),
        event("tool.execution_complete", toolCallId="a", success=True, result=done),
    )
    assert (a.status, a.result and a.result.text) == ("success", "one\n<exited 0>")
    assert (b.status, b.result) == ("cancelled", None)
