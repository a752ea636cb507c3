"""A code-mode cell whose script printed a failing exit code before it yielded (spec L-3, C-2).

Codex answers an ``exec`` cell that yields with only what its script printed so far (``Script
running with cell ID 1`` and those lines), and each ``wait`` on it with only what the script
printed since the previous answer (openai/codex, codex-rs ``core/src/tools/code_mode/mod.rs``,
``handle_runtime_response``). An ``exit_code: 2`` printed before the yield is therefore in the
cell's own answer and in no later one: the ``wait`` that collects the script may print
``exit_code: 0`` or no exit code at all.

Read from a rollout of the **real** Codex CLI 0.171.0
(``tests/fixtures/codex/v0.171_code-mode-failed-before-yield_recipe.py``, ``[features]
code_mode = true``): three cells, each running a command that fails (exit 2, 5, 7) and one or
more that pass; the failing exit code is printed before the cell yields (cells 1 and 2) or
in the answer of a ``wait`` that yields again (cell 3).
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from tests.formats.codex_cells import nested
from tests.formats.codex_cells import rows as view_rows
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

ROLLOUT = (
    Path(__file__).parents[1] / "fixtures" / "codex" / "v0.171_code-mode-failed-before-yield.jsonl"
)


def _prefix(lines: int) -> turnfold.Transcript:
    """The rollout as it stood after its first ``lines`` lines, while the run went on."""
    text = ROLLOUT.read_text(encoding="utf-8").splitlines(keepends=True)
    return turnfold.load("".join(text[:lines]), format="codex")


def _line_of(needle: str) -> int:
    text = ROLLOUT.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(text, 1) if needle in line)


def test_L3_a_cell_that_printed_a_failing_exit_before_it_yielded_failed() -> None:
    transcript = turnfold.load(ROLLOUT)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.call_id, c.name, c.status) for c in calls] == [
        ("call_cell1", "exec", "error"),  # exit_code: 2 before the yield; its wait printed 0
        ("call_wait1", "exec wait", "success"),  # it only collected the script
        ("call_cell2", "exec", "error"),  # exit_code: 5 before the yield; its wait printed none
        ("call_wait2", "exec wait", "unknown"),  # yielded again: still running
        ("call_wait3", "exec wait", "success"),
        ("call_cell3", "exec", "error"),  # exit_code: 7 in the answer of a wait that yielded
        ("call_wait4", "exec wait", "unknown"),  # that wait: it read the failure, still running
        ("call_wait5", "exec wait", "success"),
    ]
    cells = {c.call_id: c for c in calls if c.name == "exec"}
    assert {k: c.meta.get("collected_by") for k, c in cells.items()} == {
        "call_cell1": "call_wait1",
        "call_cell2": "call_wait3",
        "call_cell3": "call_wait5",
    }
    assert not any("still_running" in c.meta for c in cells.values())
    # What the model was given stays as recorded: the failure is in the cell's own answer.
    first = cells["call_cell1"].result
    assert first is not None
    header = "Script running with cell ID 1\nWall time 1.0 seconds\nOutput:\n"
    assert first.text == f"{header}\nexit_code: 2\nTF-EARLY-FAIL\n"
    # The commands the scripts ran keep their own outcomes, nested under their cells.
    assert [nested(c) for c in cells.values()] == [
        [("echo TF-EARLY-FAIL; exit 2", "error", 2), ("sleep 3; echo TF-LATE-OK", "success", 0)],
        [("echo TF-EARLY-FAIL-2; exit 5", "error", 5), ("sleep 4", "success", 0)],
        [
            ("sleep 2", "success", 0),
            ("echo TF-MID-FAIL; exit 7", "error", 7),
            ("sleep 3", "success", 0),
        ],
    ]


def test_C2_a_failed_script_counts_once_on_its_cell() -> None:
    corpus = turnfold.scan([ROLLOUT], cache=False, workers=1)
    (row,) = corpus.rows
    # Three cells failed; the waits that collected them, and the commands nested under them,
    # are not counted again.
    assert (row["tool_calls"], row["failed_tools"]) == (8, 3)
    failed = [c["call_id"] for c in corpus.tool_calls().to_pylist() if c["status"] == "error"]
    assert failed == ["call_cell1", "call_cell2", "call_cell3"]


def test_L5_a_cell_shows_failed_as_soon_as_its_answer_shows_the_failure() -> None:
    """While the run goes on: the yielded cell's answer already holds ``exit_code: 2``, so it
    reads Failed before any wait collects it; a failure printed in a wait that yields again
    fails its cell at once, and that wait still reads Still running."""
    yielded = _prefix(_line_of('"call_id":"call_cell1","output"'))
    (cell,) = yielded.tool_calls()
    assert (cell.status, cell.meta.get("still_running")) == ("error", True)
    plain = build_view_model(yielded, DisplaySettings(locale="en"))
    rows = [(r["name"], r["status_text"]) for r in view_rows(plain["nodes"])]
    assert rows[0] == ("exec", "Failed")

    waited = _prefix(_line_of('"call_id":"call_wait4","output"'))
    calls = {c.call_id: c for c in waited.tool_calls()}
    assert calls["call_cell3"].status == "error"
    assert calls["call_wait4"].status == "unknown"
    plain = build_view_model(waited, DisplaySettings(locale="en"))
    rows = [(r["name"], r["status_text"]) for r in view_rows(plain["nodes"])]
    assert rows[-1] == ("exec wait", "Still running")
