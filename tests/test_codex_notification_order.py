"""Code mode's ``notify()`` output recorded before its cell's answer (spec L-2.3, L-4, X-2).

A script's ``notify(value)`` makes Codex inject one more ``custom_tool_call_output`` under its
``exec`` cell's call id (openai/codex, codex-rs ``core/src/tools/code_mode/mod.rs``,
``CoreTurnHost::notify`` → ``Session::inject_response_items``): it is recorded when the turn
next takes its pending input, which Codex 0.171 always did after the cell's answer. Nothing in
the protocol orders the two, so a notification may be recorded first: it is still the cell's,
shown in record order before the answer, and the answer still gives the cell its status.

``v0.171_code-mode-notify_before-answer.jsonl`` is the real Codex CLI 0.171.0 rollout of
``tests/formats/test_codex_notify.py`` with two records moved, verbatim, each to just before
its cell's answer: cell 1's ``TF-N1-NOTE`` (a cell that completes) and cell 2's
``TF-N2-EARLY`` (a cell that yields, collected by a ``wait``).
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from tests.formats.codex_cells import calls_by_id, results_shown, status_texts

FIXTURES = Path(__file__).parent / "fixtures" / "codex"
ROLLOUT = FIXTURES / "v0.171_code-mode-notify_before-answer.jsonl"
RECORDED_AFTER = FIXTURES / "v0.171_code-mode-notify.jsonl"


def _lines() -> list[str]:
    return ROLLOUT.read_text(encoding="utf-8").splitlines(keepends=True)


def _prefix_to(needle: str) -> turnfold.Transcript:
    """The rollout as it stood once the line holding ``needle`` was written."""
    lines = _lines()
    end = next(n for n, line in enumerate(lines, 1) if needle in line)
    return turnfold.load("".join(lines[:end]), format="codex")


def test_L3_a_notification_before_its_cell_s_answer_is_kept_before_the_answer() -> None:
    transcript = turnfold.load(ROLLOUT)
    assert transcript.warnings == []
    cell = calls_by_id(transcript)["call_cell1"]
    assert cell.status == "success"  # the answer's, not the notification's
    assert cell.result is not None
    assert cell.result.text == (
        "TF-N1-NOTE\nScript completed\nWall time 0.1 seconds\nOutput:\n\n"
        "TF-N1-BEGIN\nexit_code: 0\nTF-N1-CMD\n"
    )
    assert cell.meta["notifications"] == ["TF-N1-NOTE"]
    assert sum(text.count("TF-N1-NOTE") for text in results_shown(transcript)) == 1


def test_L3_a_yielded_cell_s_early_notification_keeps_its_wait_and_outcome() -> None:
    calls = calls_by_id(turnfold.load(ROLLOUT))
    cell, wait = calls["call_cell2"], calls["call_wait1"]
    assert (cell.status, cell.meta.get("collected_by"), wait.status) == (
        "success",
        "call_wait1",
        "success",
    )
    assert cell.result is not None
    assert cell.result.text == (
        "TF-N2-EARLY\nScript running with cell ID 2\nWall time 1.0 seconds\nOutput:\nTF-N2-LATE"
    )
    assert cell.meta["notifications"] == ["TF-N2-EARLY", "TF-N2-LATE"]
    assert wait.result is not None
    assert "TF-N2-EARLY" not in wait.result.text
    assert "TF-N2-LATE" not in wait.result.text


def test_L3_the_move_changes_nothing_but_where_the_notification_shows() -> None:
    """Every call of the rollout as recorded (notifications after the answers) keeps its
    status, its notifications and the rest of its output."""
    moved, recorded = (
        calls_by_id(turnfold.load(ROLLOUT)),
        calls_by_id(turnfold.load(RECORDED_AFTER)),
    )
    assert list(moved) == list(recorded)
    for call_id, call in recorded.items():
        other = moved[call_id]
        assert (other.status, other.meta) == (call.status, call.meta), call_id
        notes = call.meta.get("notifications", [])
        assert other.result is not None
        assert call.result is not None
        assert sorted(other.result.text.splitlines()) == sorted(call.result.text.splitlines())
        for note in notes:
            assert other.result.text.count(note) == 1
    assert status_texts(turnfold.load(ROLLOUT)) == status_texts(turnfold.load(RECORDED_AFTER))


def test_L5_an_early_notification_shows_while_its_cell_runs() -> None:
    running = _prefix_to('"output":"TF-N1-NOTE"')
    cell = calls_by_id(running)["call_cell1"]
    # No answer yet: no outcome (the file ends here), the notification no answer of its own.
    assert cell.status == "unknown"
    assert cell.result is not None
    assert cell.result.text == "TF-N1-NOTE"
    assert cell.meta["notifications"] == ["TF-N1-NOTE"]
    assert running.warnings == []
