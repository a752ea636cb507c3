"""OpenCode sessions (``opencode``: its SQLite database and ``opencode export``) and its
``run --format json`` events (``opencode-json``), on fixtures OpenCode 1.18.33 wrote playing the
scripted scenarios of ``tests/agents`` (``fixtures/opencode/opencode_recipe.py``). ``truth.txt``
beside each is what the scripted server issued and saw."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.oversized import PADDING, lower_limit, shown, skipped
from turnfold.formats import TranscriptFormatError, path_format, which_format
from turnfold.formats.agents import opencode
from turnfold.formats.source import open_source
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    Transcript,
    UserMessage,
)

HERE = Path(__file__).parents[1] / "fixtures" / "opencode"
WORK, INTERRUPT = HERE / "work", HERE / "interrupt"
#: The calls of the work scenario's lead, in order, and the status each must load with.
LEAD_CALLS = [
    ("read", "success"),
    ("grep", "success"),
    ("glob", "success"),
    ("bash", "success"),
    ("bash", "error"),  # echo TF-FAIL-OUT; ...; exit 3: completed, metadata.exit 3
    ("edit", "success"),
    ("write", "success"),
    ("bash", "success"),  # seq 6000 lines: OpenCode kept the tail and saved the rest
    ("task", "success"),
    ("bash", "success"),  # the resumed second prompt's
]


def truth(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "truth.txt").read_text())


def sent(folder: Path, thread: str) -> list[tuple[int, int, int, int]]:
    """The counts of each response the server sent a conversation, as loaded usage holds them."""
    return [
        tuple(
            r["usage"][k]
            for k in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")
        )
        for r in truth(folder)["responses"]
        if r["thread"] in thread.split("|") and not r["side"]
    ]


def usages(transcript: Transcript) -> list[tuple[int | None, ...]]:
    return [
        (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.reasoning_tokens)
        for e in transcript.entries
        if (u := getattr(e, "usage", None)) is not None
    ]


def issued_ids(folder: Path, thread: str) -> list[str]:
    return [i["call_id"] for i in truth(folder)["issued"] if i["thread"] in thread.split("|")]


# --- the database -------------------------------------------------------------------------------


def test_the_database_is_read_by_its_tables() -> None:
    assert opencode.detect_path(WORK / "opencode.db") is not None
    assert opencode.detect_path(WORK / "export.json") is None
    transcript = turnfold.load(WORK / "opencode.db")
    assert transcript.metadata["source_format"] == "opencode"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.warnings == []


def test_the_lead_s_calls_outcomes_and_results() -> None:
    transcript = turnfold.load(WORK / "opencode.db")
    loaded = transcript.tool_calls()
    assert [(c.name, c.status) for c in loaded] == LEAD_CALLS
    assert [c.call_id for c in loaded] == issued_ids(WORK, "TF-FIRST|TF-SECOND")
    by_id = {i["call_id"]: i for i in truth(WORK)["issued"]}
    for call in loaded:
        assert call.result is not None
        assert call.result.text
        assert call.result.text.startswith(by_id[call.call_id]["result"][:200])
    failed = loaded[4]
    assert failed.args == {"command": "echo TF-FAIL-OUT; ls /tf-missing; exit 3"}
    assert failed.meta["exit_code"] == 3
    assert "TF-FAIL-OUT" in (failed.result.text or "")
    assert "TF-NOTE-LINE" in (loaded[0].result.text or "")
    assert "TF-LINE-6000" in (loaded[7].result.text or "")
    for call in loaded:  # the part's own times
        assert call.started_at
        assert call.ended_at
        assert call.duration_ms is not None
        assert call.started_at <= call.ended_at


def test_the_prompts_thinking_and_texts() -> None:
    transcript = turnfold.load(WORK / "opencode.db")
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    # ``opencode run`` stores the message it was given in quotes.
    assert [p.strip('"') for p in prompts] == [
        "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
        "TF-SECOND: one more check after the resume, please.",
    ]
    thinking = [e.text for e in transcript.entries if isinstance(e, Thinking)]
    assert thinking == ["TF-THINK: read, search and list at once."]
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [t.text[:9] for t in texts] == ["TF-FIX: e", "TF-DONE-1", "TF-DONE-2"]
    assert {t.model for t in texts} == {"fake-model"}
    assert transcript.metadata["model_provider"] == "scripted"
    assert transcript.metadata["version"] == "1.18.33"


def test_each_step_s_usage_is_the_response_s_as_sent() -> None:
    transcript = turnfold.load(WORK / "opencode.db")
    assert usages(transcript) == sent(WORK, "TF-FIRST|TF-SECOND")
    own = sent(WORK, "TF-FIRST|TF-SECOND")
    session = transcript.metadata["session_usage"]
    assert session["input_tokens"] == sum(u[0] for u in own)
    assert session["output_tokens"] == sum(u[1] for u in own)
    assert "cost_usd" not in transcript.metadata  # a model without prices costs 0: unrecorded


def test_the_task_call_nests_its_sub_agent_s_session() -> None:
    task = turnfold.load(WORK / "opencode.db").tool_calls()[8]
    sub = task.subagent
    assert sub is not None
    assert sub.transcript is not None
    assert not sub.steps_missing
    assert sub.name == "general"
    assert sub.task == "TF-SUBTASK: echo a word and report back."
    inner = sub.transcript.tool_calls()
    assert [(c.name, c.status, c.call_id) for c in inner] == [
        ("bash", "success", issued_ids(WORK, "TF-SUBTASK")[0])
    ]
    assert (inner[0].result.text or "").strip() == "TF-SUB-OK"
    texts = [e.text for e in sub.transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-SUB-DONE: the sub-agent echoed its word."]
    assert usages(sub.transcript) == sent(WORK, "TF-SUBTASK")
    assert (
        sub.transcript.metadata["parent_session_id"]
        == turnfold.load(WORK / "opencode.db").metadata["session_id"]
    )


def test_a_call_running_when_opencode_was_stopped_has_no_outcome() -> None:
    transcript = turnfold.load(INTERRUPT / "opencode.db")
    [call] = transcript.tool_calls()
    assert call.status == "unknown"
    assert call.args == {"command": "echo TF-SLOW-START; sleep 45"}
    assert (call.result.text or "").strip() == "TF-SLOW-START"  # its output so far
    assert call.started_at
    assert call.ended_at is None


def _copy(tmp_path: Path, folder: Path = WORK) -> Path:
    target = tmp_path / "opencode.db"
    shutil.copyfile(folder / "opencode.db", target)
    return target


def test_an_aborted_call_is_cancelled_with_what_it_had_printed(tmp_path: Path) -> None:
    """An abort (Esc, ``session.abort``) ends a running call as OpenCode 1.18's processor does:
    ``error`` "Tool execution aborted", its metadata kept and ``interrupted`` set, the output
    so far in ``metadata.output`` (what the model is then sent as the call's output). Written
    here into the interrupt fixture's running call (no fixture holds a real abort)."""
    path = _copy(tmp_path, INTERRUPT)
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE part SET data = json_set(data, '$.state', json(?)) "
            "WHERE data LIKE '%sleep 45%'",
            (json.dumps({
                "status": "error", "input": {"command": "echo TF-SLOW-START; sleep 45"},
                "error": "Tool execution aborted",
                "metadata": {"output": "TF-SLOW-START\n", "interrupted": True},
                "time": {"start": 1796477264026, "end": 1796477266026},
            }),),
        )  # fmt: skip
    db.close()
    [call] = turnfold.load(path).tool_calls()
    assert call.status == "cancelled"
    assert call.result is not None
    assert call.result.text == "TF-SLOW-START\n\nTool execution aborted"
    assert call.duration_ms == 2000.0
    # A tool's own error keeps its text, whatever its metadata holds.
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE part SET data = json_set(data, '$.state.error', 'boom', "
            "'$.state.metadata.interrupted', json('false')) WHERE data LIKE '%sleep 45%'"
        )
    db.close()
    [call] = turnfold.load(path).tool_calls()
    assert (call.status, call.result.text if call.result else None) == ("error", "boom")


def test_a_call_denied_permission_is_cancelled(tmp_path: Path) -> None:
    """The user's "reject" of a permission ask ends the call as OpenCode's processor does:
    ``error``, the ``PermissionRejectedError``'s message (or ``PermissionCorrectedError``'s,
    with the user's feedback). It never ran: cancelled, as a denied call is
    (``model.FAILED_STATUSES``), not an error of the tool's. Written into the work fixture's
    failing command (no fixture holds a denial)."""
    path = _copy(tmp_path)
    for said in (
        "The user rejected permission to use this specific tool call.",
        "The user rejected permission to use this specific tool call with the following "
        "feedback: not in my home folder",
    ):
        with sqlite3.connect(path) as db:
            db.execute(
                "UPDATE part SET data = json_set(data, '$.state', json(?)) "
                "WHERE data LIKE '%tf-missing%'",
                (json.dumps({
                    "status": "error", "error": said,
                    "input": {"command": "echo TF-FAIL-OUT; ls /tf-missing; exit 3"},
                    "time": {"start": 1796477257433, "end": 1796477257455},
                }),),
            )  # fmt: skip
        db.close()
        calls = turnfold.load(path).tool_calls()
        denied = calls[4]
        assert (denied.name, denied.status) == ("bash", "cancelled")
        assert denied.result is not None
        assert denied.result.text == said
        assert [c.status for c in calls].count("cancelled") == 1


def test_a_retried_request_is_a_warning_at_its_own_moment(tmp_path: Path) -> None:
    """A ``retry`` part (``RetryPart``: attempt, the provider's ``APIError``, ``time.created``)
    is a warning notice at the moment OpenCode retried, not its message's start. Written into
    the work fixture's first response (no fixture holds a retry)."""
    path = _copy(tmp_path)
    with sqlite3.connect(path) as db:
        (message_id, session_id) = db.execute(
            "SELECT message_id, session_id FROM part WHERE data LIKE '%TF-THINK%'"
        ).fetchone()
        retry = {"type": "retry", "attempt": 1, "time": {"created": 1796477256800},
                 "error": {"name": "APIError", "data": {"message": "Overloaded",
                                                        "isRetryable": True}}}  # fmt: skip
        db.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
            "VALUES ('prt_2466384a0001RetryRetryRetry', ?, ?, 1796477256800, 1796477256800, ?)",
            (message_id, session_id, json.dumps(retry)),
        )
    db.close()
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    [notice] = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert (notice.text, notice.level) == ("Retry 1: Overloaded", "warning")
    assert notice.timestamp == "2026-12-05T13:27:36.800Z"


def test_a_broken_part_is_warned_of_naming_the_file_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    with sqlite3.connect(path) as db:
        [(part_id,)] = db.execute("SELECT id FROM part WHERE data LIKE '%TF-THINK%'").fetchall()
        db.execute("UPDATE part SET data = substr(data, 1, 20) WHERE id = ?", (part_id,))
    db.close()
    transcript = turnfold.load(path)
    [warning] = transcript.warnings
    assert warning.source == str(path)
    assert part_id in warning.reason
    assert "unreadable JSON" in warning.reason
    assert not any(isinstance(e, Thinking) for e in transcript.entries)
    assert [(c.name, c.status) for c in transcript.tool_calls()] == LEAD_CALLS


def test_X1_a_part_too_long_to_read_is_warned_of_by_its_row_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row over the record limit is never read whole (SQLite refuses it): its part is left
    out with a warning naming the row and its id, every other part read as before."""
    lower_limit(monkeypatch)
    path = _copy(tmp_path)
    whole = turnfold.load(path)
    with sqlite3.connect(path) as db:
        [(rowid, part_id)] = db.execute(
            "SELECT rowid, id FROM part WHERE data LIKE '%TF-THINK%'"
        ).fetchall()
        db.execute("UPDATE part SET data = data || ? WHERE id = ?", (PADDING, part_id))
    db.close()
    assert path_format(path) == "opencode"
    transcript = turnfold.load(path)
    [warning] = transcript.warnings
    assert warning.source == str(path)
    assert warning.reason == skipped(path, "part", rowid, "data", "id")
    assert shown(transcript.entries) == shown(
        [e for e in whole.entries if not isinstance(e, Thinking)]
    )
    assert [(c.name, c.status) for c in transcript.tool_calls()] == LEAD_CALLS
    assert transcript.accounting is not None
    assert transcript.accounting.counts["part"] == {"warned": 1}


def test_an_unknown_part_type_is_warned_of(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE part SET data = json_set(data, '$.type', 'hologram') "
            "WHERE data LIKE '%TF-THINK%'"
        )
    db.close()
    transcript = turnfold.load(path)
    assert any("unknown type 'hologram'" in w.reason for w in transcript.warnings)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["part/hologram"] == {"warned": 1}


def test_sample_names_a_session_of_a_database_of_many(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    lead = turnfold.load(path)
    child = lead.tool_calls()[8].subagent
    assert child is not None
    assert child.agent_id
    alone = turnfold.load(path, sample=child.agent_id)
    assert [c.name for c in alone.tool_calls()] == ["bash"]
    with sqlite3.connect(path) as db:  # a second top-level session: which one is no longer clear
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created,"
            " time_updated) VALUES ('ses_other', 'global', 's', '/', 'other', '1.18.33', 1, 1)"
        )
    db.close()
    with pytest.raises(ValueError, match=r"holds 2 OpenCode sessions.*ses_other"):
        turnfold.load(path)
    assert turnfold.load(path, sample=lead.metadata["session_id"]).tool_calls() == lead.tool_calls()
    with pytest.raises(ValueError, match="no OpenCode session 'ses_nope'"):
        turnfold.load(path, sample="ses_nope")


def test_a_scan_of_the_data_folder_is_a_row_per_session_each_opened_by_its_key(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    with sqlite3.connect(path) as db:  # a second top-level session, empty
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created,"
            " time_updated) VALUES ('ses_other', 'global', 's', '/', 'other', '1.18.33', 1, 1)"
        )
    db.close()
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    frame = corpus.to_pandas().set_index("key")
    lead = turnfold.load(path, sample=turnfold.load(WORK / "opencode.db").metadata["session_id"])
    key = f"{path}#{lead.metadata['session_id']}"
    # The sub-agent's session nests in its parent's row: no row of its own.
    assert sorted(frame.index) == sorted([key, f"{path}#ses_other"])
    assert (frame.loc[key, "tool_calls"], frame.loc[key, "subagents"]) == (10, 1)
    assert frame.loc[key, "format"] == "opencode"
    assert corpus[key].tool_calls() == lead.tool_calls()


def test_an_export_named_as_opencode_reads_as_detected() -> None:
    named = turnfold.load(WORK / "export.json", format="opencode")
    assert named.tool_calls() == turnfold.load(WORK / "export.json").tool_calls()


# --- the export ---------------------------------------------------------------------------------


def test_the_export_reads_as_the_database_does_but_its_sub_agent_s_steps() -> None:
    exported = turnfold.load(WORK / "export.json")
    stored = turnfold.load(WORK / "opencode.db")
    assert exported.metadata["source_format"] == "opencode"
    assert exported.warnings == []
    assert [(c.call_id, c.name, c.status) for c in exported.tool_calls()] == [
        (c.call_id, c.name, c.status) for c in stored.tool_calls()
    ]
    assert usages(exported) == usages(stored)
    sub = exported.tool_calls()[8].subagent
    assert sub is not None
    assert sub.steps_missing
    assert sub.transcript is None
    assert "TF-SUB-DONE" in (exported.tool_calls()[8].result.text or "")


def test_an_export_cut_off_is_an_error_naming_the_file(tmp_path: Path) -> None:
    # 1.18.33 exits before a pipe has taken all of its stdout: an export cut at 64 KiB.
    cut = tmp_path / "export.json"
    cut.write_bytes((WORK / "export.json").read_bytes()[:65536])
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(cut, format="opencode")
    assert str(cut) in str(caught.value)


# --- run --format json --------------------------------------------------------------------------


def test_the_run_events_hold_the_run_s_calls_and_usage() -> None:
    first = turnfold.load(WORK / "stdout-0.jsonl")
    assert first.metadata["source_format"] == "opencode-json"
    assert first.warnings == []
    assert [(c.name, c.status) for c in first.tool_calls()] == LEAD_CALLS[:-1]
    assert [c.call_id for c in first.tool_calls()] == issued_ids(WORK, "TF-FIRST")
    assert usages(first) == sent(WORK, "TF-FIRST")
    second = turnfold.load(WORK / "stdout-1.jsonl")
    assert [(c.name, c.status) for c in second.tool_calls()] == LEAD_CALLS[-1:]
    assert usages(second) == sent(WORK, "TF-SECOND")
    texts = [e.text for e in second.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-DONE-2: still fine after the resume."]


def test_a_run_stopped_mid_call_prints_no_call_and_says_so() -> None:
    # SIGINT killed `opencode run` mid-call: its stream is the step's start alone, cut off
    # inside the run (test_opencode_json_cut_off.py), so it reads stopped, not empty.
    transcript = turnfold.load(INTERRUPT / "stdout-0.jsonl")
    assert [type(e).__name__ for e in transcript.entries] == ["AbortMarker"]
    assert transcript.tool_calls() == []
    assert [w.reason for w in transcript.warnings] == [
        "the stream ends inside the run begun on line 1 (no closing step_finish, error or "
        "done): how that run ended is not recorded"
    ]


def test_a_run_s_error_events_an_abort_is_no_failure(tmp_path: Path) -> None:
    """``run --format json`` prints the session's ``session.error`` as ``{"type": "error",
    "error": {name, data: {message}}}`` (``src/cli/cmd/run.ts``); an abort's is
    ``MessageAbortedError``, which the database's reader shows as an abort marker: so must
    this one. Appended to the real run's events (no run here was aborted)."""
    events = (WORK / "stdout-1.jsonl").read_text().splitlines()
    session = json.loads(events[0])["sessionID"]
    for at, name, said in (
        (1796477260500, "APIError", "Bad Gateway"),
        (1796477260600, "MessageAbortedError", "The operation was aborted."),
    ):
        events.append(
            json.dumps(
                {
                    "type": "error",
                    "timestamp": at,
                    "sessionID": session,
                    "error": {"name": name, "data": {"message": said}},
                }
            )
        )
    path = tmp_path / "stdout.jsonl"
    path.write_text("\n".join(events) + "\n")
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    failed, aborted = transcript.entries[-2:]
    assert isinstance(failed, AssistantError)
    assert (failed.message, failed.timestamp) == ("Bad Gateway", "2026-12-05T13:27:40.500Z")
    assert isinstance(aborted, AbortMarker)
    assert (aborted.reason, aborted.timestamp) == (
        "The operation was aborted.", "2026-12-05T13:27:40.600Z")  # fmt: skip
    row = turnfold.scan([path], cache=False).to_pandas().iloc[0]
    assert row["errors"] == 1


def test_detection_tells_the_export_and_the_events_apart() -> None:
    for path, name in (
        (WORK / "export.json", "opencode"),
        (WORK / "stdout-0.jsonl", "opencode-json"),
    ):
        source, stream = open_source(path)
        try:
            assert which_format(source) == name
        finally:
            if stream is not None:
                stream.close()


def test_calls_are_described_relative_to_the_session_s_folder_not_the_worktree() -> None:
    # Outside a git repository OpenCode's worktree is "/", so a call's title reads
    # tmp/.../work/notes.txt; the session's directory is the folder the paths are under.
    transcript = turnfold.load(WORK / "opencode.db")
    described = [(c.name, c.description) for c in transcript.tool_calls()]
    assert described[:3] == [("read", "notes.txt"), ("grep", "TF-NEEDLE"), ("glob", "*")]
    assert ("edit", "notes.txt") in described
    assert ("write", "new.txt") in described
    # The export prints the same session, its directory with it.
    exported = turnfold.load(WORK / "export.json")
    assert [c.description for c in exported.tool_calls()] == [d for _, d in described]
