"""The truth check's own rules, on hand-made transcripts (no CLI needed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.agents import truth
from turnfold import AssistantText, SystemNotice, ToolCall, Transcript, UserMessage


def _play(*prompts: str) -> Any:
    return SimpleNamespace(
        scenario=SimpleNamespace(prompts=[SimpleNamespace(text=p) for p in prompts])
    )


def _resumed() -> Transcript:
    return Transcript(
        [UserMessage(text="FIRST"), AssistantText(text="a"), UserMessage(text="SECOND")]
    )


def test_a_gemini_resume_stub_beside_the_session_is_no_second_session() -> None:
    # Gemini CLI 0.61, resumed in a later minute: a stub file of the briefing alone.
    stub = Transcript([SystemNotice(text="<session_context> briefing")])
    findings: list[truth.Finding] = []
    files = [(Path("session-23-11.jsonl"), _resumed()), (Path("session-23-12.jsonl"), stub)]
    main = truth._main_transcript(_play("FIRST", "SECOND"), files, findings)
    assert findings == []
    assert main is files[0][1]


def test_a_second_file_holding_a_call_is_a_finding() -> None:
    other = Transcript([ToolCall(call_id="c", name="Bash", status="success")])
    findings: list[truth.Finding] = []
    files = [(Path("a.jsonl"), _resumed()), (Path("b.jsonl"), other)]
    truth._main_transcript(_play("FIRST", "SECOND"), files, findings)
    assert [f.check for f in findings] == ["resume"]
    assert "2 session files, not one: a.jsonl, b.jsonl" in findings[0].message
