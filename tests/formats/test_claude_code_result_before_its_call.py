"""Claude Code 2.1.1xx writes a tool result's line before the line of its call, now and then.

Real sessions of Claude Code 2.1.112 and 2.1.121 (public, under no licence, so not copied here:
leolin84200704/posthog-impact-dashboard ``claude-session.jsonl`` at 3adbaa8f, lines 27-31, 347-350
and 415-418; Sarthib7/FundWise ``claude-session.jsonl`` at 30970175, lines 226-229) hold
results whose ``parentUuid`` and ``sourceToolAssistantUUID`` name an assistant line written
just after them (a parallel ``Read``'s second call, an ``Edit``), and a ``turn_duration`` line
before the answer it follows; each call's own timestamp is the earlier. Claude Code resumes such
a session by its parent links, whatever the order. The fixture is hand-made in that shape
(``tests/fixtures/claude-code/v2.1.112_hand-made_result-before-its-call.jsonl``): a result
waits for its call instead of being dropped as a result of no call.
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.model import AssistantText, UserMessage

FIXTURE = (
    Path(__file__).parent.parent
    / "fixtures/claude-code/v2.1.112_hand-made_result-before-its-call.jsonl"
)


def test_L2_claude_code_result_written_before_its_call_is_its_outcome() -> None:
    t = turnfold.load(FIXTURE)
    calls = {c.call_id: c for c in t.tool_calls()}
    read_todo = calls["toolu_01READTODO00000000000000"]
    edit = calls["toolu_01EDITNOTES0000000000000"]
    assert [c.status for c in calls.values()] == ["success", "success", "success"]
    assert read_todo.result is not None
    assert read_todo.result.text is not None
    assert "Fix the typo in notes.md" in read_todo.result.text
    assert edit.result is not None
    assert edit.result.kind == "diff"
    assert edit.ended_at == "2026-04-26T10:00:06.020Z"
    assert t.warnings == []
    # One turn, its answer the last text, the recorded duration on it (written before it).
    assert [e.text for e in t.entries if isinstance(e, UserMessage)] == [
        "Read notes.md and todo.md, then fix the typo in notes.md."
    ]
    assert isinstance(t.entries[-1], AssistantText)
    assert t.entries[-1].text == "Fixed: notes.md now says Hello world."


def test_L4_claude_code_result_of_no_call_is_still_warned_of() -> None:
    """A result whose call never comes keeps its warning, naming its line and record."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    without_edit = "\n".join(line for line in lines if '"name":"Edit"' not in line) + "\n"
    t = turnfold.load(without_edit.encode("utf-8"), format="claude-code")
    reasons = [(w.line, w.record, w.reason) for w in t.warnings]
    assert (
        8,
        "1a2b3c4d-0008-4000-8000-000000000008",
        "tool result for an unknown tool_use_id 'toolu_01EDITNOTES0000000000000'; skipped",
    ) in reasons
