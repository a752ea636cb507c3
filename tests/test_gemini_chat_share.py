"""Real files nobody here made, read as their tools wrote them (spec L-2, L-4, C-2).

``gemini/gemini-cli_2026-04-06_chat-share_compressed.json`` is a Gemini CLI chat history as the
CLI writes it (``/chat share FILE.json``: ``JSON.stringify(history, null, 2)``), committed to
google-gemini/gemini-cli as ``trajectory.json``; contents 1-6 and 25-26 of its 105 are kept, byte
for byte as the CLI serialises them (tests/fixtures/SOURCES.md). It opens with the CLI's
``<session_context>`` briefing, then the ``<state_snapshot>`` a compression left and the model's
reply to it, then the user's prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

from turnfold import AssistantText, CompactionBoundary, SystemNotice, UserMessage, load
from turnfold.corpus import summarize
from turnfold.corpus.discover import Item

SHARED = (
    Path(__file__).parent
    / "fixtures"
    / "gemini"
    / ("gemini-cli_2026-04-06_chat-share_compressed.json")
)
PROMPT = "agent teams shouldn't persist, I want it to ask me every boot"


def test_L2_gemini_cli_chat_share_briefing_and_state_snapshot_are_no_prompts() -> None:
    transcript = load(SHARED)

    assert transcript.metadata["source_format"] == "gemini-api"
    briefing, boundary, prompt = transcript.entries[:3]
    assert isinstance(briefing, SystemNotice)
    assert briefing.subtype == "session_context"
    assert briefing.text.startswith("<session_context>\nThis is the Gemini CLI.")
    assert isinstance(boundary, CompactionBoundary)
    assert boundary.summary is not None
    assert boundary.summary.startswith("<state_snapshot>")
    assert boundary.summary.endswith("</state_snapshot>")
    assert boundary.meta["reply"] == "Got it. Thanks for the additional context!"
    assert isinstance(prompt, UserMessage)
    assert prompt.text == PROMPT
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [PROMPT]
    assert not any(
        isinstance(e, AssistantText) and e.text.startswith("Got it.") for e in transcript.entries
    )
    assert transcript.warnings == []


def test_C2_gemini_cli_chat_share_row_counts_the_users_turn_only() -> None:
    row = summarize(Item(key=str(SHARED), path=str(SHARED)))

    keys = ("format", "title", "turns", "tool_calls", "failed_tools", "warnings", "error")
    assert {k: row[k] for k in keys} == {
        "format": "gemini-api",
        "title": PROMPT,
        "turns": 1,
        "tool_calls": 2,  # read_file, and run_shell_command whose response holds an error
        "failed_tools": 1,
        "warnings": 0,
        "error": None,
    }


def test_L2_gemini_cli_chat_save_checkpoint_reads_as_its_history() -> None:
    """``/chat save TAG`` writes ``{"history": [...], "authType": ...}`` (Logger.saveCheckpoint)."""
    contents = json.loads(SHARED.read_text(encoding="utf-8"))
    shared = load(SHARED)

    saved = load({"history": contents, "authType": "oauth-personal"})

    assert [type(e).__name__ for e in saved.entries] == [type(e).__name__ for e in shared.entries]
    assert isinstance(saved.entries[1], CompactionBoundary)


def test_L2_a_prompt_that_only_mentions_a_snapshot_stays_the_users() -> None:
    """Only a content that is one whole ``<state_snapshot>`` is the CLI's; the reply is folded in
    only right after it, and a model content after a snapshot that is not the reply is kept."""
    contents = json.loads(SHARED.read_text(encoding="utf-8"))
    snapshot = contents[1]
    asked = {"role": "user", "parts": [{"text": "What goes in a <state_snapshot>? " + PROMPT}]}
    other = {"role": "model", "parts": [{"text": "Noted."}]}

    transcript = load([contents[0], snapshot, other, asked, contents[2]])

    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "SystemNotice",
        "CompactionBoundary",
        "AssistantText",
        "UserMessage",
        "AssistantText",
    ]
    assert "reply" not in transcript.entries[1].meta
    assert transcript.entries[3].text == asked["parts"][0]["text"]
    assert transcript.entries[4].text == "Got it. Thanks for the additional context!"
