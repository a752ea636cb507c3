"""Rollouts of Codex CLI 0.72.0 and 0.100.0, written by the real CLIs
(``tests/fixtures/codex/v0.72-0.100_recipe.py``; the same session on 0.50.0 to 0.95.0 loads as
these do).

- Codex tells the model ``Warning: apply_patch was requested via shell…`` in a user-role message
  when it runs ``apply_patch`` through a shell tool (``Session::record_model_warning``). Nobody
  typed it: it is context, as Codex itself counts it (the ``Legacy…Warning`` fragments of
  codex-rs/core/src/context/contextual_user_message.rs), not a prompt that starts a turn.
- A call that is not a shell command, cut off by an interrupt, is answered ``aborted by user
  after 7.7s`` (codex-rs/core/src/tools/parallel.rs ``abort_message``): cancelled, for 7.7 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import turnfold
from turnfold.formats.codex import model_warning
from turnfold.model import AbortMarker, ToolCall, UserMessage

FIXTURES = Path(__file__).parent.parent / "fixtures/codex"


def test_L2_codex_072_warnings_to_the_model_are_no_prompts() -> None:
    t = turnfold.load(FIXTURES / "v0.72_apply-patch-via-shell.jsonl")
    prompts = [e.text for e in t.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "TF-ONE: look around, run the check, write notes.",
        "TF-TWO: once more.",
        "TF-STOP: the long job.",
    ]
    # The first turn holds every call it made, the two patches and the ones after them too.
    second = [i for i, e in enumerate(t.entries) if isinstance(e, UserMessage)][1]
    assert [e.call_id for e in t.entries[:second] if isinstance(e, ToolCall)] == [
        "call_ls", "call_fail", "call_plan", "call_add", "call_edit", "call_cat", "call_wc",
    ]  # fmt: skip
    calls = {c.call_id: c for c in t.tool_calls()}
    assert (calls["call_add"].status, calls["call_edit"].status) == ("success", "success")
    assert not any("Warning: apply_patch" in str(getattr(e, "text", "")) for e in t.entries)
    assert t.warnings == []


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        # The three texts of codex-rs/core/src/context/contextual_user_message.rs.
        ("Warning: apply_patch was requested via exec_command. Use the apply_patch tool instead"
         " of exec_command.", True),
        ("Warning: The maximum number of unified exec processes you can keep open is 60 and you"
         " currently have 61 processes open. Reuse older processes or close them.", True),
        ("Warning: Your account was flagged for potentially high-risk cyber activity and this"
         " request was routed to gpt-5.2 as a fallback.", True),
        # Prompts a user may type.
        ("Warning: apply_patch was requested via shell, can you see why?", False),
        ("Warning: the build is red", False),
    ],
)  # fmt: skip
def test_L2_codex_model_warnings_are_told_from_prompts(text: str, warning: bool) -> None:
    assert model_warning(text) is warning


def test_L3_codex_0100_interrupted_exec_command_is_cancelled() -> None:
    t = turnfold.load(FIXTURES / "v0.100_exec-command-interrupted.jsonl")
    calls = {c.call_id: c for c in t.tool_calls()}
    long = calls["call_long"]
    assert (long.name, long.status) == ("exec_command", "cancelled")
    assert long.result is not None
    assert long.result.text == "aborted by user after 7.7s"
    assert long.duration_ms == 7700.0
    assert isinstance(t.entries[-1], AbortMarker)
    assert [c.status for c in calls.values()].count("cancelled") == 1
    assert t.warnings == []
