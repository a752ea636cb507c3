"""Rollouts of real Codex CLIs, 0.63 to 0.171
(``tests/fixtures/codex/v0.63-0.171_interrupts-cells-web_recipe.py``; ``v0.72_…`` from
``v0.72-0.100_recipe.py``), and what a reader makes of them:

- ``codex exec`` up to 0.89 quits on Ctrl-C without waiting for its turn to end
  (codex-rs/exec/src/lib.rs), so a rollout keeps only part of what Codex writes of an
  interrupt: a call answered ``aborted by user`` (core/src/tools/parallel.rs ``abort_message``)
  with no ``turn_aborted`` after it (0.80), or the call with no output at all (0.63, 0.72;
  0.50 kept only the message). The first is an interrupt: the turn reads stopped, by the user.
  The second records no end: the call stays ``unknown`` and the turn says its record stops
  before that call's result. 0.63's TUI, which stays up, writes the whole of it, ending in
  ``turn_aborted``: one stop, as before.
- Code mode in 0.144 is the custom tool ``exec`` (and ``wait``), as in 0.171: a cell answered
  ``Script completed`` ran to its end, a success unless it printed a failing exit code; a cell
  that calls no tool is described by its first line of code.
- A ``find_in_page`` web search is described as Codex says it: ``'pattern' in url``.
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from tests.formats.test_codex import call, event, load, meta, of, output, user_item
from turnfold.formats import codex
from turnfold.formats.openai_responses import web_search_detail
from turnfold.model import AbortMarker, AssistantError, ToolCall, Transcript, UserMessage
from turnfold.process import plan_projection, segment_header
from turnfold.tools import tool_category

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures/codex"


def _statuses(t: Transcript) -> list[str]:
    """Each turn's status, as its header says it (P-7)."""
    segments = [item.segment for item in plan_projection(t) if item.segment is not None]
    return [segment_header(s, False, "en").status for s in segments]


def _stops(t: Transcript) -> list[tuple[str | None, str | None]]:
    """Each stop: the catalog key of the reader's words (None: the source's), its reason."""
    return [(m.wording.key if m.wording else None, m.reason) for m in of(t, AbortMarker)]


def _calls(t: Transcript) -> dict[str, ToolCall]:
    return {c.call_id: c for c in t.tool_calls()}


# --- Ctrl-C: what codex exec leaves of it ----------------------------------------------------


def test_P7_codex_080_aborted_call_without_turn_aborted_is_an_interrupted_turn() -> None:
    t = turnfold.load(FIXTURES / "v0.80_exec_interrupted-then-resumed.jsonl")
    assert t.metadata["cli_version"] == "0.80.0"
    long = _calls(t)["call_long"]
    assert (long.status, long.meta["output_header"]) == ("cancelled", "Wall time: 7.0 seconds")
    assert long.result is not None
    assert long.result.text == "aborted by user"
    # The interrupt ends its own turn, before the resumed prompt.
    kinds = [type(e).__name__ for e in t.entries]
    assert kinds == [
        "UserMessage", "AssistantText", "ToolCall", "AbortMarker",
        "UserMessage", "ToolCall", "AssistantText",
    ]  # fmt: skip
    (marker,) = of(t, AbortMarker)
    assert _stops(t) == [("reader.interrupted_by_user", "Interrupted by the user")]
    assert marker.meta == {"aborted_call": "call_long"}
    assert marker.timestamp == long.ended_at
    assert _statuses(t) == ["stopped", "completed"]
    assert t.warnings == []


def test_P7_codex_063_tui_turn_aborted_stays_the_one_stop() -> None:
    t = turnfold.load(FIXTURES / "v0.63_tui_interrupted.jsonl")
    long = _calls(t)["call_long"]
    assert (long.status, long.duration_ms) == ("cancelled", 6000.0)
    # turn_aborted is the stop; the aborted output does not add one of the reader's own.
    assert _stops(t) == [(None, "interrupted")]
    assert isinstance(t.entries[-1], AbortMarker)
    assert _statuses(t) == ["stopped"]
    assert t.warnings == []


def test_P7_codex_063_call_with_no_output_then_a_resume_says_the_end_is_unrecorded() -> None:
    t = turnfold.load(FIXTURES / "v0.63_exec_interrupted-then-resumed.jsonl")
    calls = _calls(t)
    assert (calls["call_long"].status, calls["call_long"].result) == ("unknown", None)
    assert calls["call_two"].status == "success"
    marker, second = of(t, AbortMarker)[0], of(t, UserMessage)[1]
    assert t.entries.index(marker) < t.entries.index(second)
    assert _stops(t) == [
        (
            "reader.turn_end_not_recorded",
            "The record stops before the last call's result: how this turn ended is not recorded",
        )
    ]
    assert marker.meta == {"waiting_call": "call_long"}
    assert _statuses(t) == ["stopped", "completed"]
    assert t.warnings == []


def test_P7_codex_072_file_ending_before_the_last_call_s_result_says_so() -> None:
    t = turnfold.load(FIXTURES / "v0.72_apply-patch-via-shell.jsonl")
    assert _calls(t)["call_long"].status == "unknown"
    last = t.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.wording is not None
    assert last.wording.key == "reader.turn_end_not_recorded"
    assert _statuses(t) == ["completed", "completed", "stopped"]


def test_P7_codex_aborted_output_after_turn_aborted_adds_no_second_stop() -> None:
    t = load(
        user_item("q"),
        call("cut"),
        event("turn_aborted", reason="interrupted"),
        output("cut", "Wall time: 1.0 seconds\naborted by user"),
    )
    assert _stops(t) == [(None, "interrupted")]


def test_P7_codex_aborted_output_then_task_complete_is_a_completed_turn() -> None:
    t = load(
        event("task_started"),
        user_item("q"),
        call("cut"),
        output("cut", "aborted by user after 1.2s"),
        event("task_complete"),
    )
    assert _stops(t) == []
    assert _statuses(t) == ["completed"]


def test_P7_codex_interrupt_cancels_the_calls_still_waiting() -> None:
    t = load(
        user_item("q"),
        call("cut"),
        call("other"),
        output("cut", "aborted by user after 1.2s"),
    )
    assert [c.status for c in t.tool_calls()] == ["cancelled", "cancelled"]
    assert _stops(t) == [("reader.interrupted_by_user", "Interrupted by the user")]


def test_P7_codex_turn_ending_in_an_error_gets_no_stop_of_its_own() -> None:
    t = load(user_item("q"), call("c1"), event("error", message="stream disconnected"))
    assert _stops(t) == []
    assert of(t, AssistantError)[0].message == "stream disconnected"


def test_L5_codex_followed_rollout_keeps_a_waiting_call_running() -> None:
    t = Transcript()
    builder = codex.CodexBuilder(t, live=True)
    for line, record in enumerate([meta(), user_item("q"), call("c1")], 1):
        builder.feed(record, line)
    builder.finish()
    assert of(t, AbortMarker) == []
    assert [c.status for c in t.tool_calls()] == ["executing"]


# --- code mode (0.144) and web search (0.171) ------------------------------------------------


def test_F2_codex_0144_code_mode_cells_are_commands_with_the_status_of_their_end() -> None:
    t = turnfold.load(FIXTURES / "v0.144_code-mode-cells.jsonl")
    assert t.metadata["cli_version"] == "0.144.0"
    shown = [(c.name, tool_category(c.name), c.description, c.status) for c in t.tool_calls()]
    assert shown == [
        # Script completed, printed the output and no exit code: it ran to its end.
        ("exec", "command", "echo TF-QUIET", "success"),
        # Calls no tool: its first line of code (the // @exec: settings line is none).
        ("exec", "command", 'text("TF-PLAIN");', "success"),
        # Script completed, but printed the exit code 2 of its command.
        ("exec", "command", "echo TF-LOUD; exit 2", "error"),
    ]
    quiet = t.tool_calls()[0]
    assert quiet.result is not None
    assert (quiet.result.text or "").startswith("Script completed\nWall time")
    assert t.warnings == []


def test_F2_codex_web_search_actions_are_described_as_codex_says_them() -> None:
    t = turnfold.load(FIXTURES / "v0.171_web-search-actions.jsonl")
    shown = [(c.name, c.description, c.status) for c in t.tool_calls()]
    assert shown == [
        ("web_search", "TF-SEARCH codex rollout", "success"),
        ("web_search", "TF-QUERY one ...", "success"),  # queries only: the first, and more
        ("web_search", "https://example.com/tf-page", "success"),
        ("web_search", "'TF-PATTERN' in https://example.com/tf-page", "success"),
    ]
    assert t.warnings == []


def test_F2_codex_find_in_page_pattern_is_one_line() -> None:
    action = {"type": "find_in_page", "url": "https://a.example", "pattern": "\nTF one\nTF two"}
    assert web_search_detail(action) == "'TF one TF two' in https://a.example"
    assert web_search_detail({"type": "find_in_page", "pattern": "TF"}) == "'TF'"
    assert web_search_detail({"type": "other"}) is None
