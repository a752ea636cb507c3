"""Codex's background processes: ``exec_command`` leaves one running, ``write_stdin`` polls it
or types into it (spec F-2, L-3, P-6, C-2).

A rollout of the **real** Codex CLI 0.171.0 (unified exec;
``tests/fixtures/codex/v0.171_cells-and-processes_recipe.py``) and the same run's ``codex exec
--json`` stdout: a command started with a short ``yield_time_ms`` (``Process running with
session ID 3219``), polled twice with empty ``chars`` (still running, then ``Process exited
with code 0``), and a ``tty`` command reading a line, typed one with ``write_stdin`` (``Process
exited with code 4``). Every answer has a ``Chunk ID`` and a ``Wall time``; the process's end is
also an ``item_completed`` ``CommandExecution`` under the starting call's id, written while the
poll that saw it runs.
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings
from turnfold.tools import status_text, tool_category

FIXTURES = Path(__file__).parents[1] / "fixtures"
BACKGROUND = FIXTURES / "codex" / "v0.171_background.jsonl"
BACKGROUND_STDOUT = (
    FIXTURES / "agents" / "codex-exec-json" / "codex_v0.171.0_exec-json_background.jsonl"
)
JOB = "echo TF-BG-START; sleep 7; echo TF-BG-END"
READER = "read -r line; echo TF-GOT-$line; exit 4"


def test_F2_write_stdin_is_part_of_running_the_command_it_polls_or_types_into() -> None:
    transcript = turnfold.load(BACKGROUND)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    shown = [(c.name, c.description, c.status, tool_category(c.name)) for c in calls]
    assert shown == [
        ("exec_command", JOB, "success", "command"),  # its process ended 0 (CommandExecution)
        ("write_stdin", JOB, "unknown", "command"),  # a poll: still running
        ("write_stdin", JOB, "success", "command"),  # a poll: Process exited with code 0
        ("exec_command", READER, "error", "command"),  # its process ended 4
        # Typed a line and read the exit: the failure is the process's, counted once.
        ("write_stdin", f'"TF-LINE\\n" → {READER}', "success", "command"),
    ]
    job, poll, last, reader, typed = calls
    session, reader_session = job.meta["session_id"], reader.meta["session_id"]
    assert session != reader_session
    assert [c.meta["session_id"] for c in (poll, last, typed)] == [session, session, reader_session]
    assert [c.meta["poll"] for c in (poll, last, typed)] == [True, True, False]
    assert [c.meta.get("exit_code") for c in calls] == [0, None, 0, 4, 4]
    # What the model was given stays each call's result; the header is kept apart.
    assert [c.result.text if c.result else None for c in calls] == [
        "TF-BG-START\n", "", "TF-BG-END\n", "", "TF-LINE\r\nTF-GOT-TF-LINE\r\n"
    ]  # fmt: skip
    assert job.meta["output_header"].startswith("Chunk ID: ")
    assert f"Process running with session ID {session}" in job.meta["output_header"]
    assert poll.duration_ms is not None
    assert 4900 < poll.duration_ms < 5200
    assert job.duration_ms is not None
    assert job.duration_ms > 6000


def test_F2_the_same_run_s_exec_json_shows_each_process_once_with_its_exit_code() -> None:
    """``codex exec --json`` prints no poll: a process is one ``command_execution`` item,
    completed with its exit code; the rollout's starting calls say the same."""
    calls = turnfold.load(BACKGROUND_STDOUT).tool_calls()
    assert [(c.name, c.description, c.status) for c in calls] == [
        ("exec_command", JOB, "success"),
        ("exec_command", READER, "error"),
    ]
    assert calls[1].result is not None
    assert calls[1].result.text == "TF-LINE\r\nTF-GOT-TF-LINE\r\n"


def test_P6_polls_and_input_are_titled_with_the_commands() -> None:
    plain = build_view_model(turnfold.load(BACKGROUND), DisplaySettings(locale="en"))
    (turn,) = [node for node in plain["nodes"] if node["kind"] == "turn"]
    groups = [node for node in turn["process"]["children"] if node["kind"] == "group"]
    assert [(g["title"], g["count"]) for g in groups] == [
        ("Thought and ran commands", "5 operations")
    ]
    rows = [row for g in groups for b in g["children"] if b["kind"] == "batch" for row in b["rows"]]
    assert [(r["name"], r["category"], r["status_text"]) for r in rows] == [
        ("exec_command", "command", "Done"),
        ("write_stdin", "command", "Still running"),  # a poll that found it running
        ("write_stdin", "command", "Done"),
        ("exec_command", "command", "Failed"),
        ("write_stdin", "command", "Done"),
    ]


def test_L3_a_poll_that_found_the_process_running_is_neither_done_nor_failed() -> None:
    """The first poll returned after its ``yield_time_ms`` while the job went on: it read
    "Finished, outcome not recorded". The job's own end settles the call that started it."""
    job, poll, last, reader, typed = turnfold.load(BACKGROUND).tool_calls()
    assert (poll.status, poll.meta.get("still_running")) == ("unknown", True)
    assert status_text(poll) == "Still running"
    assert status_text(poll, "zh") == "仍在运行"
    # The starting calls' processes ended (CommandExecution): no longer running.
    assert [c.meta.get("still_running") for c in (job, last, reader, typed)] == [None] * 4
    assert [status_text(c) for c in (job, reader)] == ["Done", "Failed"]


def test_C2_the_corpus_counts_write_stdin_among_commands() -> None:
    corpus = turnfold.scan([BACKGROUND], cache=False, workers=1)
    (row,) = corpus.rows
    assert (row["tool_calls"], row["subagents"]) == (5, 0)
    calls = corpus.tool_calls().to_pylist()
    assert [(c["name"], c["category"]) for c in calls] == [
        ("exec_command", "command"), ("write_stdin", "command"), ("write_stdin", "command"),
        ("exec_command", "command"), ("write_stdin", "command"),
    ]  # fmt: skip
