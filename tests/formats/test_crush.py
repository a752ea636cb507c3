"""Crush sessions (``crush``: a project's ``.crush/crush.db``), on two real databases Crush wrote,
committed to public repositories (``fixtures/crush``, see SOURCES.md): ``quay``'s (Crush of
October 2025 on Vertex AI: two sessions, one cut off mid-response, the other delegating to an
``agent`` sub-agent whose run ends on the provider's error, a call the user denied) and
``cisco-auto``'s (Crush of April 2026, trimmed to one session: a pasted text attachment, a
failed view, a cancel during a call).

The shapes no real database here holds (reasoning, an image, a cancelled call's result, a
``!`` command, a broken row) are written into a copy of the real one, as Crush's
``internal/message`` marshals them."""

from __future__ import annotations

import html
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import turnfold
from tests.formats.oversized import PADDING, lower_limit, shown, skipped
from turnfold.formats import databases, path_format
from turnfold.formats.agents import crush, opencode
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH
from turnfold.render.viewmodel import build_view_model

FIXTURES = Path(__file__).parents[1] / "fixtures"
QUAY = FIXTURES / "crush" / "quay" / ".crush" / "crush.db"
CISCO = FIXTURES / "crush" / "cisco-auto" / "crush.db"
#: The quay session cut off in the middle of a response (Crush wrote no finish).
CUT_OFF = "17c2d974-eab7-4a44-83d2-97c5186a5789"
#: The quay session that delegated to a sub-agent (whose session is the call's id, as Crush
#: before 0.10 named it).
DELEGATED = "5ee78d3f-abf5-487a-82f0-02cf36a0e8ee"
SUB_AGENT = "toolu_vrtx_01LWrvAJeVgibzAgkSFVDkVe"


def test_the_database_is_told_apart_by_its_tables() -> None:
    assert crush.detect_path(QUAY) is not None
    assert crush.detect_path(CISCO) is not None
    assert opencode.detect_path(CISCO) is None
    assert crush.detect_path(FIXTURES / "opencode" / "work" / "opencode.db") is None
    assert path_format(CISCO) == "crush"
    transcript = turnfold.load(CISCO)
    assert transcript.metadata["source_format"] == "crush"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.warnings == []


def test_the_calls_their_outcomes_and_results() -> None:
    loaded = turnfold.load(CISCO).tool_calls()
    assert len(loaded) == 51
    assert [c.status for c in loaded].count("success") == 49
    first = loaded[0]
    assert (first.call_id, first.name) == ("toolu_vrtx_01TpQLcM8ef6AimiEuzNbYri", "view")
    assert first.args == {
        "file_path": "/Users/andresgaibor/code/javascript/cisco-auto/packages/pt-runtime/src/"
        "templates/main.ts"
    }
    assert first.result is not None
    assert "Main.js Template - PT Script Module" in (first.result.text or "")
    # The tool result's own is_error.
    failed, exited = [c for c in loaded if c.status == "error"]
    assert failed.name == "view"
    assert failed.result is not None
    assert (failed.result.text or "").startswith("Path is a directory, not a file:")
    assert "exit_code" not in failed.meta
    # A command that exited 1: Crush answered it as a success (is_error false) whose output
    # ends on the "Exit code 1" its bash tool adds, before the <cwd> note.
    assert exited.call_id == "toolu_vrtx_01PtQuR8CMTuc1U34P7ByxtW"
    assert exited.name == "bash"
    assert exited.meta["exit_code"] == 1
    assert exited.result is not None
    assert exited.result.text == (
        "\nexit status 1\nExit code 1\n\n<cwd>/Users/andresgaibor/code/javascript/cisco-auto</cwd>"
    )
    # The commands that exited 0 (no such line) stay successes, with no code invented.
    ran = [c for c in loaded if c.name == "bash" and c is not exited]
    assert len(ran) == 8
    assert {c.status for c in ran} == {"success"}
    assert not any("exit_code" in c.meta for c in ran)
    # A command's result metadata holds its own times.
    bash = [c for c in loaded if c.name == "bash"]
    assert bash
    assert all(c.duration_ms is not None and c.duration_ms >= 0 for c in bash)
    assert bash[0].started_at == "2026-04-01T22:42:40Z"


def test_the_prompt_holds_its_pasted_text_and_the_cancel_ends_the_session() -> None:
    transcript = turnfold.load(CISCO)
    (prompt,) = [e for e in transcript.entries if isinstance(e, UserMessage)]
    # The paste is a binary part of text/plain, the whole prompt: shown under its name, not in
    # the <system_info> note Crush wraps it in for the model (the user did not write that).
    assert prompt.text.startswith(
        "[attachment: paste_1.txt]\nPerfecto. Aquí tienes el checklist técnico"
    )
    assert "system_info" not in prompt.text
    assert "<file" not in prompt.text
    row = turnfold.scan([CISCO], cache=False).to_pandas().iloc[0]
    assert row["title"].startswith("[attachment: paste_1.txt] Perfecto. Aquí tienes")
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts[0].text.startswith("He revisado el checklist técnico.")
    assert {t.model for t in texts} == {"claude-haiku-4.5"}
    last = transcript.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.reason == "User canceled request"
    meta = transcript.metadata
    assert (meta["model"], meta["model_provider"]) == ("claude-haiku-4.5", "copilot")
    assert meta["started_at"] == "2026-04-01T22:40:44Z"
    # Copilot's responses cost nothing Crush counted; its token columns are the last
    # response's, not a total.
    assert "cost_usd" not in meta
    assert "session_usage" not in meta
    assert meta["last_response_tokens"] == {"input_tokens": 75188, "output_tokens": 72}


def test_the_agent_call_nests_its_sub_agent_s_session() -> None:
    transcript = turnfold.load(QUAY, sample=DELEGATED)
    (agent,) = [c for c in transcript.tool_calls() if c.name == "agent"]
    assert agent.call_id == SUB_AGENT
    sub = agent.subagent
    assert sub is not None
    assert sub.agent_id == SUB_AGENT
    assert sub.task is not None
    assert sub.task.startswith(
        "I need help with PROJQUAY-9272 - a regex search dropdown that isn't working in the "
        "React UI. Please search the codebase for:"
    )
    assert sub.task == agent.args["prompt"]
    assert sub.transcript is not None
    entries = sub.transcript.entries
    prompt = entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == sub.task
    sub_calls = sub.transcript.tool_calls()
    assert [c.name for c in sub_calls] == [
        "ls", "grep", "grep", "view", "view", "view", "view", "view", "grep", "grep", "grep"
    ]  # fmt: skip
    assert {c.status for c in sub_calls} == {"success"}
    assert sub_calls[3].args == {
        "file_path": "/var/home/bpratt/git/quay/quay/web/src/components/toolbar/SearchDropdown.tsx"
    }
    # Its last grep's result (trimmed in the fixture) was too long for the provider: the
    # sub-agent's run ends on the error Crush wrote as the next response's finish.
    last = sub_calls[-1].result
    assert last is not None
    assert (last.text or "").startswith("Found 96 matches\n")
    error = entries[-1]
    assert isinstance(error, AssistantError)
    assert error.message.startswith(
        'API Error: POST "https://us-east5-aiplatform.googleapis.com/v1/messages": '
        "413 Request Entity Too Large"
    )
    assert "Prompt is too long" in error.message
    meta = sub.transcript.metadata
    assert meta["parent_session_id"] == DELEGATED
    assert meta["cost_usd"] == pytest.approx(0.378427, abs=1e-6)
    # This Crush answered the call with an empty, non-error result all the same: the call is
    # an error, as its run ended on one.
    assert agent.status == "error"
    assert agent.result is not None
    assert agent.result.text == ""


#: The quay lead's message holding its agent call, and the tool message answering it.
DELEGATING = "da10e058-9ae5-4cb2-b00c-17a87bba656e"
ANSWERING = "1f80dd81-3edd-40c5-8359-7d2a3230c0bf"


def _link(k: int) -> str:
    return f"toolu_chain{k:03d}"


def _chain(tmp_path: Path, links: int) -> Path:
    """The quay database with ``links`` sessions between the delegating lead and its real
    sub-agent: each link a copy of the lead's session whose agent call (its session the call's
    id, as this Crush named it) runs the next link, the last link's the real sub-agent."""
    path = tmp_path / "crush.db"
    shutil.copyfile(QUAY, path)
    ids = [DELEGATED, *(_link(k) for k in range(1, links + 1)), SUB_AGENT]
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(messages)")]
        written = {m: db.execute("SELECT parts FROM messages WHERE id = ?", (m,)).fetchone()[0]
                   for m in (DELEGATING, ANSWERING)}  # fmt: skip
        for k in range(links + 1):
            if k:
                db.execute("INSERT INTO sessions (id, parent_session_id, title, message_count, "
                           "updated_at, created_at) SELECT ?, ?, title, 2, updated_at + ?, "
                           "created_at + ? FROM sessions WHERE id = ?",
                           (ids[k], ids[k - 1], k, k, DELEGATED))  # fmt: skip
            for message in (DELEGATING, ANSWERING):
                picked = ", ".join(
                    "?" if c in ("id", "session_id", "parts") else c for c in columns
                )
                named = written[message].replace(SUB_AGENT, ids[k + 1])
                if k:  # the lead's own messages are renamed in place; each link's are copies
                    db.execute(f"INSERT INTO messages ({', '.join(columns)}) SELECT {picked} "
                               "FROM messages WHERE id = ?",
                               [*(v for c, v in (("id", f"{message}-{k:03d}"),
                                                 ("session_id", ids[k]), ("parts", named))
                                  if c in columns), message])  # fmt: skip
                else:
                    db.execute("UPDATE messages SET parts = ? WHERE id = ?", (named, message))
        db.execute("UPDATE sessions SET parent_session_id = ? WHERE id = ?",
                   (ids[links], SUB_AGENT))  # fmt: skip
    db.close()
    return path


def _levels(transcript: Transcript) -> list[SubAgent]:
    """Each level's sub-agent down the chain, the lead's first."""
    found = []
    while True:
        agents = [c.subagent for c in transcript.tool_calls() if c.name == "agent"]
        if len(agents) != 1 or agents[0] is None:
            return found
        found.append(agents[0])
        if agents[0].transcript is None:
            return found
        transcript = agents[0].transcript


def test_C7_sub_agents_nest_down_to_the_bound_and_one_deeper_is_named(tmp_path: Path) -> None:
    """A chain of sub-agents nested only 8 deep: the ninth session was not read, and nothing
    said so. Now they nest down to every reader's bound (turnfold.nesting); the session one
    level deeper is named in a warning and loads on its own, its sub-agent nested in it."""
    path = _chain(tmp_path, MAX_DEPTH + 1)
    transcript = turnfold.load(path, sample=DELEGATED)
    levels = _levels(transcript)
    assert [a.agent_id for a in levels] == [_link(k) for k in range(1, MAX_DEPTH + 2)]
    past = levels[-1]
    assert past.transcript is None
    assert not past.steps_missing  # recorded, not missing: loaded on its own below
    assert [w.reason for w in transcript.warnings] == [
        f"sub-agent session {_link(MAX_DEPTH + 1)} of session {_link(MAX_DEPTH)} is "
        f"{MAX_DEPTH + 1} sub-agents deep, past the {MAX_DEPTH} that nest under their calls: "
        f"not shown here; sample={_link(MAX_DEPTH + 1)!r} loads it as a session of its own"
    ]
    alone = turnfold.load(path, sample=_link(MAX_DEPTH + 1))
    assert [a.agent_id for a in _levels(alone)] == [SUB_AGENT]
    assert alone.warnings == []
    # The deepest level read is one the view draws, with no cut of its own to warn of.
    view = build_view_model(transcript)
    assert view["notice"] is not None
    (warning,) = transcript.warnings
    assert [html.unescape(item) for item in view["notice"]["items"]] == [
        f"crush.db: {warning.reason}"
    ]


def test_statuses_finishes_and_cost_of_a_session() -> None:
    transcript = turnfold.load(QUAY, sample=DELEGATED)
    entries = transcript.entries
    (prompt,) = [e for e in entries if isinstance(e, UserMessage)]
    assert prompt.text.startswith(
        "Let's work on issue PROJQUAY-9272, the regex search drop down isn't working."
    )
    first = entries[1]
    assert isinstance(first, AssistantText)
    assert first.text.startswith(
        "I'll help you fix the regex search dropdown issue in PROJQUAY-9272."
    )
    assert first.model == "claude-sonnet-4@20250514"
    loaded = transcript.tool_calls()
    assert [c.name for c in loaded] == [
        "agent", "grep", "view", "view", "grep", "view", "view", "bash"
    ]  # fmt: skip
    assert [c.status for c in loaded[:-1]] == ["error"] + ["success"] * 6
    assert {c.meta["finish_reason"] for c in loaded[:-1]} == {"tool_use"}
    assert loaded[1].args == {"pattern": "regex", "path": "web/src", "literal_text": True}
    found = loaded[1].result
    assert found is not None
    assert (found.text or "").startswith("Found 45 matches\n")
    # The user denied the command: Crush answered it "Permission denied" (is_error) and ended
    # the response with permission_denied; the session stops there.
    denied = loaded[-1]
    assert denied.args == {"command": "cd /var/home/bpratt/git/quay/quay && npm install playwright"}
    assert denied.status == "cancelled"  # as a denied call is (model.ToolStatus): it never ran
    assert denied.result is not None
    assert denied.result.text == "Permission denied"
    assert denied.meta["finish_reason"] == "permission_denied"
    assert entries[-1] is denied
    meta = transcript.metadata
    assert (meta["model"], meta["model_provider"]) == ("claude-sonnet-4@20250514", "vertexai")
    assert meta["started_at"] == "2025-10-11T15:31:27Z"
    # The session's own cost column: this Crush added nothing of the failed sub-agent's run.
    assert meta["cost_usd"] == pytest.approx(0.203691, abs=1e-6)
    assert meta["last_response_tokens"] == {"input_tokens": 3083, "output_tokens": 28978}


def test_a_response_cut_off_mid_call_leaves_the_call_without_an_outcome() -> None:
    transcript = turnfold.load(QUAY, sample=CUT_OFF)
    assert transcript.warnings == []
    loaded = transcript.tool_calls()
    assert [(c.name, c.status) for c in loaded] == [
        ("view", "error"), ("view", "success"), ("glob", "success"), ("glob", "success"),
        ("view", "success"), ("view", "unknown"),
    ]  # fmt: skip
    missing = loaded[0]
    assert missing.result is not None
    assert missing.result.text == "File not found: /var/home/bpratt/git/quay/quay/CRUSH.md"
    # Crush stopped while the model was still writing the last call's input: the call has an
    # empty input, no result, and the response no finish.
    cut = loaded[-1]
    assert (cut.call_id, cut.args, cut.result) == ("toolu_vrtx_014q1yp4eJvJx17U1zxDStmn", "", None)
    assert "finish_reason" not in cut.meta
    assert transcript.entries[-1] is cut


def test_sample_names_a_session_and_without_one_a_database_of_many_is_refused() -> None:
    with pytest.raises(ValueError, match="holds 2 Crush sessions: pick one with sample="):
        turnfold.load(QUAY)
    with pytest.raises(ValueError, match="holds no Crush session 'nope'"):
        turnfold.load(QUAY, sample="nope")
    # The sub-agent's session is no session to pick.
    assert list(crush.sessions(QUAY)) == [(CUT_OFF, "New Session"), (DELEGATED, "New Session")]


def test_a_scan_of_a_project_is_a_row_per_top_level_session(tmp_path: Path) -> None:
    project = tmp_path / "project" / ".crush"
    project.mkdir(parents=True)
    shutil.copyfile(QUAY, project / "crush.db")
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    frame = corpus.to_pandas().set_index("key")
    path = project / "crush.db"
    # The sub-agent's session nests in its parent's row: no row of its own.
    assert sorted(frame.index) == [f"{path}#{CUT_OFF}", f"{path}#{DELEGATED}"]
    key = f"{path}#{DELEGATED}"
    row = frame.loc[key]
    assert (row["tool_calls"], row["subagents"], row["failed_tools"]) == (
        8,
        1,
        2,
    )  # the failed sub-agent run, the denied command
    assert row["cost_usd"] == pytest.approx(0.203691, abs=1e-6)
    assert frame.loc[f"{path}#{CUT_OFF}", "tool_calls"] == 6
    assert set(frame["format"]) == {"crush"}
    assert corpus[key].tool_calls() == turnfold.load(QUAY, sample=DELEGATED).tool_calls()


# --- shapes the real databases do not hold, written as Crush writes them -------------------------


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "crush.db"
    shutil.copyfile(CISCO, path)
    return path


def _add(path: Path, role: str, parts: list[dict[str, object]], at: int) -> None:
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at)"
            " VALUES (?, (SELECT id FROM sessions), ?, ?, 'm', ?, ?)",
            (f"added-{at}", role, json.dumps(parts), at, at),
        )
    db.close()


def test_reasoning_images_a_cancelled_call_and_a_user_command(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    at = 1775083900
    _add(path, "user", [
        {"type": "text", "data": {"text": "look at this"}},
        {"type": "binary", "data": {"Path": "a.png", "MIMEType": "image/png", "Data": "iVBORw0K"}},
        {"type": "image_url", "data": {"url": "https://example.com/b.png"}},
        {"type": "shell_command", "data": {"command": "ls x", "output": "no x", "exit_code": 2}},
        {"type": "finish", "data": {"reason": "stop", "time": 0}},
    ], at)  # fmt: skip
    _add(path, "assistant", [
        {"type": "reasoning", "data": {"thinking": "I should list.", "signature": "sig",
                                       "started_at": at + 1, "finished_at": at + 2}},
        {"type": "tool_call", "data": {"id": "c1", "name": "ls", "input": "{\"path\": \".\"}",
                                       "provider_executed": False, "finished": True}},
        {"type": "tool_call", "data": {"id": "c2", "name": "bash", "input": "{}",
                                       "finished": False}},
        {"type": "finish", "data": {"reason": "canceled", "time": at + 3,
                                    "message": "User canceled request"}},
    ], at + 1)  # fmt: skip
    _add(path, "tool", [
        {"type": "tool_result", "data": {"tool_call_id": "c1", "name": "ls",
         "content": "Error: user cancelled assistant tool calling", "is_error": True}},
        {"type": "finish", "data": {"reason": "stop", "time": 0}},
    ], at + 4)  # fmt: skip
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    tail = transcript.entries[-7:]
    user, notice, command, thinking, cancelled, unanswered, abort = tail
    assert isinstance(user, UserMessage)
    assert user.text == "look at this"
    assert [(i.media_type, i.data) for i in user.images] == [("image/png", "iVBORw0K")]
    assert isinstance(notice, SystemNotice)
    assert notice.text == "Attached image https://example.com/b.png"
    assert isinstance(command, ToolCall)
    assert command.user_initiated
    assert (command.args, command.status, command.meta["exit_code"]) == (
        {"command": "ls x"}, "error", 2)  # fmt: skip
    assert isinstance(thinking, Thinking)
    assert thinking.text == "I should list."
    assert isinstance(cancelled, ToolCall)
    assert (cancelled.name, cancelled.status, cancelled.batch_id) == (
        "ls",
        "cancelled",
        "added-1775083901",
    )
    # No result answered it: no recorded outcome.
    assert isinstance(unanswered, ToolCall)
    assert unanswered.status == "unknown"
    assert isinstance(abort, AbortMarker)


def test_a_background_command_s_exit_code_and_an_interrupted_command(tmp_path: Path) -> None:
    """``job_output`` ends a finished background command's output on ``Exit code N`` when it
    exited non-zero; ``bash`` ends one an interrupt stopped on ``Command was aborted before
    completion`` (``tools/job_output.go``, ``formatOutput`` of ``tools/bash.go``), both answered
    with ``is_error`` false."""
    path = _copy(tmp_path)
    at = 1775083900
    cwd = "\n\n<cwd>/w</cwd>"
    _add(path, "assistant", [
        {"type": "tool_call", "data": {"id": "j1", "name": "job_output",
                                       "input": "{\"shell_id\": \"009\", \"wait\": true}",
                                       "finished": True}},
        {"type": "tool_call", "data": {"id": "b1", "name": "bash",
                                       "input": "{\"command\": \"sleep 9\"}", "finished": True}},
        {"type": "tool_call", "data": {"id": "b2", "name": "bash",
                                       "input": "{\"command\": \"echo Exit code 3\"}",
                                       "finished": True}},
        {"type": "finish", "data": {"reason": "tool_use", "time": at}},
    ], at)  # fmt: skip
    _add(path, "tool", [
        {"type": "tool_result", "data": {"tool_call_id": "j1", "name": "job_output",
         "content": "Status: completed\n\nFAIL: 2 tests\nExit code 2", "is_error": False}},
        {"type": "tool_result", "data": {"tool_call_id": "b1", "name": "bash",
         "content": "\nsignal: interrupt\nCommand was aborted before completion" + cwd,
         "is_error": False}},
        {"type": "tool_result", "data": {"tool_call_id": "b2", "name": "bash",
         "content": "Exit code 3 is what it printed, and it exited 0" + cwd, "is_error": False}},
        {"type": "finish", "data": {"reason": "stop", "time": 0}},
    ], at + 1)  # fmt: skip
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    waited, interrupted, printed = transcript.tool_calls()[-3:]
    assert (waited.name, waited.status, waited.meta["exit_code"]) == ("job_output", "error", 2)
    assert (interrupted.status, "exit_code" in interrupted.meta) == ("cancelled", False)
    assert interrupted.result is not None
    assert (interrupted.result.text or "").startswith("\nsignal: interrupt\n")
    # Only a last line that is Crush's own says how the command ended.
    assert (printed.status, "exit_code" in printed.meta) == ("success", False)


def test_a_summary_of_the_session_is_a_compaction_boundary(tmp_path: Path) -> None:
    """``Summarize`` (asked for, or as the context fills) has the model write a summary into an
    assistant message flagged ``is_summary_message`` and named by the session's
    ``summary_message_id`` (``internal/agent/agent.go``); the model's history starts there.
    It is no answer of the model's: a compaction boundary holding the summary, the turns
    after it apart. Before the flag (quay's schema) the session's column alone names it."""
    path = _copy(tmp_path)
    at = 1775083900
    _add(path, "assistant", [
        {"type": "reasoning", "data": {"thinking": "What mattered so far?"}},
        {"type": "text", "data": {"text": "Fixed the topology contracts; tests still to run."}},
        {"type": "finish", "data": {"reason": "end_turn", "time": at}},
    ], at)  # fmt: skip
    _add(path, "user", [{"type": "text", "data": {"text": "now run the tests"}}], at + 1)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET is_summary_message = 1 WHERE id = ?", (f"added-{at}",))
    db.close()
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    thinking, boundary, prompt = transcript.entries[-3:]
    assert isinstance(boundary, CompactionBoundary), transcript.entries[-3:]
    assert boundary.summary == "Fixed the topology contracts; tests still to run."
    assert boundary.timestamp == "2026-04-01T22:51:40Z"
    assert isinstance(thinking, Thinking)  # what the model thought writing it, kept
    assert isinstance(prompt, UserMessage)
    assert not any(
        isinstance(e, AssistantText) and e.text.startswith("Fixed the topology")
        for e in transcript.entries
    )
    # A summary that failed compacted nothing (Crush leaves summary_message_id as it was):
    # its text and its error read as any response's.
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE messages SET parts = json_set(parts, '$[2].data', json(?)) WHERE id = ?",
            (json.dumps({"reason": "error", "time": at, "message": "Summarization Error",
                         "details": "context canceled"}), f"added-{at}"),
        )  # fmt: skip
    db.close()
    transcript = turnfold.load(path)
    assert not any(isinstance(e, CompactionBoundary) for e in transcript.entries)
    text, error = transcript.entries[-3:-1]
    assert isinstance(text, AssistantText)
    assert text.text == "Fixed the topology contracts; tests still to run."
    assert isinstance(error, AssistantError)
    assert error.message == "Summarization Error: context canceled"
    # The October 2025 schema: no is_summary_message; the session's summary_message_id.
    older = tmp_path / "older.db"
    shutil.copyfile(QUAY, older)
    with sqlite3.connect(older) as db:
        (last,) = db.execute(
            "SELECT id FROM messages WHERE session_id = ? AND role = 'assistant' "
            "ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (CUT_OFF,),
        ).fetchone()
        db.execute("UPDATE sessions SET summary_message_id = ? WHERE id = ?", (last, CUT_OFF))
    db.close()
    entries = turnfold.load(older, sample=CUT_OFF).entries
    assert sum(isinstance(e, CompactionBoundary) for e in entries) == 1


def test_a_refusal_is_an_error_entry(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    _add(path, "assistant", [
        {"type": "finish", "data": {"reason": "content_filter", "time": 1775083900,
                                    "message": "Refused", "details": "safety"}},
    ], 1775083900)  # fmt: skip
    last = turnfold.load(path).entries[-1]
    assert isinstance(last, AssistantError)
    assert last.message == "Refused: safety"


def test_a_broken_row_is_warned_of_naming_the_file_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)"
            " VALUES ('broken', (SELECT id FROM sessions), 'assistant', '[{\"type\": ', 1, 1)"
        )
        db.execute(
            "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)"
            " VALUES ('odd', (SELECT id FROM sessions), 'assistant',"
            ' \'[{"type": "hologram", "data": {}}]\', 2, 2)'
        )
    db.close()
    transcript = turnfold.load(path)
    assert len(transcript.tool_calls()) == 51
    broken, odd = transcript.warnings
    assert broken.source == odd.source == str(path)
    assert broken.reason.startswith("message broken: unreadable parts")
    assert odd.reason == "message odd (assistant): unexpected part type 'hologram'"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["part/hologram"] == {"warned": 1}


def test_X1_a_message_too_long_to_read_is_warned_of_by_its_row_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row over the record limit is never read whole (SQLite refuses it): the message is
    left out with a warning naming its row and id; its call shows no result, all else as
    before."""
    lower_limit(monkeypatch)
    path = _copy(tmp_path)
    whole = turnfold.load(path)
    with sqlite3.connect(path) as db:
        rowid, call_id = db.execute(
            "SELECT rowid, json_extract(parts, '$[0].data.tool_call_id') FROM messages "
            "WHERE role = 'tool' ORDER BY created_at, rowid LIMIT 1 OFFSET 1"
        ).fetchone()
        db.execute("UPDATE messages SET parts = parts || ? WHERE rowid = ?", (PADDING, rowid))
    db.close()
    assert path_format(path) == "crush"
    transcript = turnfold.load(path)
    [warning] = transcript.warnings
    assert warning.source == str(path)
    assert warning.reason == skipped(path, "messages", rowid, "parts", "id")
    calls = {call.call_id: call for call in transcript.tool_calls()}
    assert calls.pop(call_id).result is None
    assert shown(list(calls.values())) == shown(
        [call for call in whole.tool_calls() if call.call_id != call_id]
    )
    assert shown([e for e in transcript.entries if not isinstance(e, ToolCall)]) == shown(
        [e for e in whole.entries if not isinstance(e, ToolCall)]
    )
    assert transcript.accounting is not None
    assert transcript.accounting.counts["message"] == {"warned": 1}


def test_X1_a_session_whose_title_is_too_long_is_listed_and_shown_clipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's own row is no row to skip: its title over the record limit, the database
    is still listed (the session by its id) and the session read with its title clipped to
    its first bytes, a warning naming the row, all else as before (a long title refused the
    whole database)."""
    lower_limit(monkeypatch)
    path = _copy(tmp_path)
    whole = turnfold.load(path)
    with sqlite3.connect(path) as db:
        session_id, title = db.execute("SELECT id, title FROM sessions").fetchone()
        db.execute("UPDATE sessions SET title = title || ?", (PADDING,))
    db.close()
    assert list(crush.sessions(path)) == [(session_id, "session")]
    transcript = turnfold.load(path)
    [warning] = transcript.warnings
    assert warning.reason == (
        f"sessions row 1 (id {session_id}): its title of {len(title + PADDING):,} bytes, over "
        f"the limit of 100,000 (TURNFOLD_MAX_RECORD_BYTES); clipped to its first "
        f"{databases.CLIPPED_BYTES:,} bytes"
    )  # fmt: skip
    assert transcript.metadata["title"] == (title + PADDING)[: databases.CLIPPED_BYTES]
    assert shown(transcript.entries) == shown(whole.entries)
