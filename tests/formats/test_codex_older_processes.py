"""Background processes in rollouts older than Codex 0.171 (spec L-3, F-2).

0.171 writes a process's end as an ``item_completed`` ``CommandExecution`` under the id of the
``exec_command`` that started it (``test_codex_write_stdin.py``). Before that, rollouts had one
of two shapes, each read from a rollout of the **real** CLI
(``tests/fixtures/codex/v0.110-0.130_background_recipe.py``, the same scripted ``background``
run as 0.171's):

- ``codex exec`` (0.130.0 here) keeps the limited events: nothing records the process's end
  but the ``write_stdin`` answer that saw it (``Process exited with code 0``);
- an app-server thread with ``persistExtendedHistory`` (0.110.0 here) also keeps the exit
  watcher's ``exec_command_end`` (codex-rs ``unified_exec/async_watcher.rs``): the starting
  call's id, the process's ``process_id``, its exit code and whole duration, written after that
  call was answered.

Either way the starting call read "Still running" (before: "Finished, outcome not recorded")
though the file says how its process ended.
"""

from __future__ import annotations

import json
from pathlib import Path

import turnfold
from turnfold.tools import status_text

CODEX = Path(__file__).parents[1] / "fixtures" / "codex"
LIMITED = CODEX / "v0.130_background.jsonl"
EXTENDED = CODEX / "v0.110_background_extended-history.jsonl"
JOB = "echo TF-BG-START; sleep 7; echo TF-BG-END"
READER = "read -r line; echo TF-GOT-$line; exit 4"


def _outcomes(path: Path) -> list[tuple[str, str | None, str, int | None, str]]:
    calls = turnfold.load(path).tool_calls()
    return [
        (c.name, c.description, c.status, c.meta.get("exit_code"), status_text(c)) for c in calls
    ]


def test_L3_codex_exec_0_130_the_poll_that_saw_the_exit_settles_the_starting_call() -> None:
    assert "exec_command_end" not in LIMITED.read_text(encoding="utf-8")  # no end record
    assert turnfold.load(LIMITED).warnings == []
    assert _outcomes(LIMITED) == [
        ("exec_command", JOB, "success", 0, "Done"),  # from the poll's "exited with code 0"
        ("write_stdin", JOB, "unknown", None, "Still running"),
        ("write_stdin", JOB, "success", 0, "Done"),
        ("exec_command", READER, "error", 4, "Failed"),  # from the typed line's answer
        ("write_stdin", f'"TF-LINE\\n" → {READER}', "success", 4, "Done"),  # counted once
    ]
    job = turnfold.load(LIMITED).tool_calls()[0]
    assert job.result is not None
    assert job.result.text == "TF-BG-START\n"  # what the model was given stays
    assert job.duration_ms is not None
    assert job.duration_ms < 1000  # its answer's wall time: the process's is not recorded


def test_L3_extended_history_0_110_exec_command_end_settles_the_call_it_names() -> None:
    ends = [
        json.loads(line)["payload"]
        for line in EXTENDED.read_text(encoding="utf-8").splitlines()
        if '"exec_command_end"' in line
    ]
    assert [(e["call_id"], e["source"], e["exit_code"]) for e in ends] == [
        ("call_bg", "unified_exec_startup", 0),
        ("call_ask", "unified_exec_startup", 4),
    ]
    transcript = turnfold.load(EXTENDED)
    assert transcript.warnings == []
    assert _outcomes(EXTENDED) == [
        ("exec_command", JOB, "success", 0, "Done"),
        ("write_stdin", JOB, "unknown", None, "Still running"),
        ("write_stdin", JOB, "success", 0, "Done"),
        ("exec_command", READER, "error", 4, "Failed"),
        ("write_stdin", f'"TF-LINE\\n" → {READER}', "success", 4, "Done"),  # counted once
    ]
    job, _, _, reader, _ = transcript.tool_calls()
    # The end event's duration is the process's (the job slept 7 s), not its first answer's.
    assert job.duration_ms is not None
    assert 6000 < job.duration_ms < 8000
    assert reader.duration_ms is not None
    assert reader.duration_ms > 600
    # What the model was given stays the result (the event's output is only the last chunk).
    assert job.result is not None
    assert job.result.text == "TF-BG-START\n"
    assert "still_running" not in job.meta
