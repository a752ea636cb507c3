"""Code mode's ``notify()`` outputs, and cells no ``wait`` collects before their turn ends
(spec L-2.3, L-3).

A script's ``notify(value)`` makes Codex write one more ``custom_tool_call_output`` under its
``exec`` cell's call id while the cell runs (openai/codex, codex-rs
``core/src/tools/code_mode/mod.rs``, ``CoreTurnHost::notify``: the bare text, injected into
the turn, so recorded after the cell's answer). A cell that yielded belongs to the session,
not the turn: when the turn ends Codex neither stops nor settles it, and a ``wait`` in a later
turn collects it (code-mode ``service.rs``: dropping the turn's worker leaves the cells).

Read from a rollout of the **real** Codex CLI 0.171.0 through ``codex app-server``, two turns
in one process (``tests/fixtures/codex/v0.171_code-mode-notify_recipe.py``): cells that
notify before and after they yield; a cell left running when turn 1 ended, collected by a
``wait`` in turn 2; a cell left running when turn 2 ended, uncollected when the file ends.
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from tests.formats.codex_cells import calls_by_id, nested, results_shown, status_texts
from tests.formats.codex_cells import rows as view_rows
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

ROLLOUT = Path(__file__).parents[1] / "fixtures" / "codex" / "v0.171_code-mode-notify.jsonl"


def _lines() -> list[str]:
    return ROLLOUT.read_text(encoding="utf-8").splitlines(keepends=True)


def _line_of(needle: str) -> int:
    return next(n for n, line in enumerate(_lines(), 1) if needle in line)


def _prefix(lines: int) -> turnfold.Transcript:
    """The rollout as it stood after its first ``lines`` lines, while the run went on."""
    return turnfold.load("".join(_lines()[:lines]), format="codex")


def test_L3_a_notification_joins_its_cell_output_after_the_answer() -> None:
    transcript = turnfold.load(ROLLOUT)
    assert transcript.warnings == []
    calls = calls_by_id(transcript)
    cell = calls["call_cell1"]
    assert cell.status == "success"
    assert cell.result is not None
    # The cell's answer is kept whole and the notification follows it, as the file has them.
    assert cell.result.text == (
        "Script completed\nWall time 0.1 seconds\nOutput:\n\n"
        "TF-N1-BEGIN\nexit_code: 0\nTF-N1-CMD\nTF-N1-NOTE"
    )
    assert cell.meta["notifications"] == ["TF-N1-NOTE"]
    # Shown once, in the cell's row.
    assert sum(text.count("TF-N1-NOTE") for text in results_shown(transcript)) == 1


def test_L3_notifications_of_a_yielded_cell_keep_its_status_and_order() -> None:
    transcript = turnfold.load(ROLLOUT)
    calls = calls_by_id(transcript)
    cell, wait = calls["call_cell2"], calls["call_wait1"]
    # One notification before the yield, one while the wait ran: both the cell's, in order;
    # the wait that collected the script gives it its outcome, as without notifications.
    assert (cell.status, cell.meta.get("collected_by"), wait.status) == (
        "success",
        "call_wait1",
        "success",
    )
    assert "still_running" not in cell.meta
    assert cell.result is not None
    assert cell.result.text == (
        "Script running with cell ID 2\nWall time 1.0 seconds\nOutput:\nTF-N2-EARLY\nTF-N2-LATE"
    )
    assert cell.meta["notifications"] == ["TF-N2-EARLY", "TF-N2-LATE"]
    assert wait.result is not None
    assert "TF-N2-LATE" not in (wait.result.text or "")
    # No call was made of a notification.
    assert [c.call_id for c in transcript.tool_calls() if c.name == "exec"] == [
        "call_cell1",
        "call_cell2",
        "call_cell3",
        "call_cell4",
    ]


def test_L5_a_notification_while_the_cell_runs_leaves_it_running() -> None:
    running = _prefix(_line_of('"call_id":"call_cell2","name":"exec","output":"TF-N2-EARLY"'))
    cell = calls_by_id(running)["call_cell2"]
    assert (cell.status, cell.meta.get("still_running")) == ("unknown", True)
    assert status_texts(running)["call_cell2"] == "Still running"
    assert cell.result is not None
    assert cell.result.text == (
        "Script running with cell ID 2\nWall time 1.0 seconds\nOutput:\nTF-N2-EARLY"
    )
    assert cell.meta["notifications"] == ["TF-N2-EARLY"]


def test_L3_a_cell_left_running_reads_so_when_its_turn_ended() -> None:
    ended = _line_of('"type":"task_complete"')
    cut = _prefix(ended - 1)  # the file cut off before the turn's end: still running
    assert calls_by_id(cut)["call_cell3"].meta.get("running_at_turn_end") is None
    assert status_texts(cut)["call_cell3"] == "Still running"

    after = _prefix(ended)
    cell = calls_by_id(after)["call_cell3"]
    assert (cell.status, cell.meta.get("still_running")) == ("unknown", True)
    assert cell.meta.get("running_at_turn_end") is True
    assert status_texts(after)["call_cell3"] == "Still running when the turn ended"
    assert after.warnings == []


def test_L3_a_wait_of_a_later_turn_collects_the_cell_left_running() -> None:
    transcript = turnfold.load(ROLLOUT)
    calls = calls_by_id(transcript)
    cell = calls["call_cell3"]
    assert (cell.status, cell.meta.get("collected_by")) == ("success", "call_wait2")
    assert "still_running" not in cell.meta
    assert "running_at_turn_end" not in cell.meta
    # The command its script ran on into turn 2 is still the cell's, not a row of its own.
    assert nested(cell) == [("sleep 3; echo TF-LEFT-END", "success", 0)]
    assert not [c for c in calls.values() if c.name == "exec_command"]
    assert status_texts(transcript)["call_cell3"] == "Done"


def test_L3_a_cell_uncollected_when_the_file_ends_still_ran_when_its_turn_ended() -> None:
    transcript = turnfold.load(ROLLOUT)
    cell = calls_by_id(transcript)["call_cell4"]
    assert (cell.status, cell.meta.get("still_running")) == ("unknown", True)
    assert cell.meta.get("running_at_turn_end") is True
    # Its command, killed when Codex exited after the turn, is recorded under it as it ended.
    assert nested(cell) == [("sleep 30; echo TF-LONG-END", "error", 137)]
    texts = status_texts(transcript)
    assert texts["call_cell4"] == "Still running when the turn ended"
    zh = build_view_model(transcript, DisplaySettings(locale="zh"))
    (row,) = [r for r in view_rows(zh["nodes"]) if r["call_id"] == "call_cell4"]
    assert row["status_text"] == "回合结束时仍在运行"
