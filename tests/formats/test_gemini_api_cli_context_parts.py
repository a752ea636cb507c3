"""A plain Gemini API contents list holding a CLI's injected text (spec L-1, L-2, H-6, X-2):
Gemini CLI 0.61's briefing sent in one content with the first prompt, and Qwen Code's
``<system-reminder>`` parts, read as ``gemini-checkpoint`` reads them (one rule:
``turnfold.formats.gemini_injected.split_user_parts``).

The contents are the real ones of tests/fixtures/{gemini,qwen}/home-files (Gemini CLI 0.61.0
and Qwen Code 0.24.4 in their terminal UI, their READMEs say how): a ``/restore`` checkpoint's
``clientHistory`` is ``GeminiClient.getHistory()``, the very list ``/chat share FILE.json``
writes (``exportHistoryToFile``: ``JSON.stringify(chat.getHistory(), null, 2)``, @google/gemini-cli
0.61.0 ``packages/cli/src/ui/commands/chatCommand.ts``), so each is written out here so.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from turnfold import SystemNotice, UserMessage, load

FIXTURES = Path(__file__).parents[1] / "fixtures"
GEMINI_CHECKPOINT = (
    FIXTURES / "gemini" / "home-files" / ".gemini" / "tmp" / "work" / "checkpoints"
    / "2026-12-07T08-22-51_341Z-notes.txt-replace.json"
)  # fmt: skip
QWEN_CHECKPOINT = next(
    (FIXTURES / "qwen" / "home-files" / ".qwen" / "tmp").glob("*/checkpoints/*-edit.json")
)
PROMPT = "TF-CKPT: read the notes, then fix them and add a file."


def _shared(checkpoint: Path, folder: Path, edit: Any = None) -> Path:
    """The checkpoint's conversation as ``/chat share chat.json`` writes it, in ``folder``
    (``edit`` changes the list first)."""
    contents = json.loads(checkpoint.read_text(encoding="utf-8"))["clientHistory"]
    if edit is not None:
        edit(contents)
    path = folder / "chat.json"
    path.write_text(json.dumps(contents, indent=2), encoding="utf-8")
    return path


def _briefing_part(checkpoint: Path) -> str:
    text: str = json.loads(checkpoint.read_text(encoding="utf-8"))["clientHistory"][0]["parts"][0][
        "text"
    ]
    return text


def test_L1_gemini_cli_0_61_s_briefing_beside_the_first_prompt_is_its_notice(
    tmp_path: Path,
) -> None:
    transcript = load(_shared(GEMINI_CHECKPOINT, tmp_path))
    assert transcript.metadata["source_format"] == "gemini-api"
    assert transcript.metadata["agent"] == "gemini-cli"  # the briefing's own words name it
    first, second = transcript.entries[:2]
    assert isinstance(first, SystemNotice)
    assert first.subtype == "session_context"
    assert first.meta["context"] == _briefing_part(GEMINI_CHECKPOINT)  # kept whole
    assert isinstance(second, UserMessage)
    assert second.text == PROMPT
    assert [e.text for e in transcript if isinstance(e, UserMessage)] == [PROMPT]
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    # The same conversation read as the checkpoint: the same notice and message.
    checkpoint = load(GEMINI_CHECKPOINT)
    assert [(type(e).__name__, getattr(e, "text", None)) for e in checkpoint.entries[1:3]] == [
        (type(e).__name__, getattr(e, "text", None)) for e in transcript.entries[:2]
    ]


def test_L1_qwen_code_s_system_reminders_are_context_notices_after_its_briefing(
    tmp_path: Path,
) -> None:
    transcript = load(_shared(QWEN_CHECKPOINT, tmp_path))
    assert transcript.metadata["source_format"] == "gemini-api"
    notices = [e for e in transcript if isinstance(e, SystemNotice)]
    assert [n.subtype for n in notices] == ["context", "context"]
    skills, date = notices
    assert skills.text.startswith("<system-reminder>\nThe following skills are available")
    # The first content's three reminders (skills, Qwen Code's briefing, tools), kept whole.
    assert "This is the Qwen Code. We are setting up the context" in skills.meta["context"]
    assert date.text.startswith("<system-reminder>\nThe current date is")
    assert [e.text for e in transcript if isinstance(e, UserMessage)] == [PROMPT]
    assert "agent" not in transcript.metadata  # Qwen Code's briefing names no Gemini CLI


def test_L1_a_users_own_reminder_tag_stays_their_words_where_no_cli_briefing_is(
    tmp_path: Path,
) -> None:
    """Without a CLI's briefing among the contents, nothing says a CLI put the tag there: a
    user's plain contents list keeps it in the message (never dropped, never a notice)."""

    def no_briefing(contents: list[dict[str, Any]]) -> None:
        del contents[0]  # Qwen Code's skills, briefing and tools

    transcript = load(_shared(QWEN_CHECKPOINT, tmp_path, no_briefing))
    assert not [e for e in transcript if isinstance(e, SystemNotice)]
    (message,) = [e for e in transcript if isinstance(e, UserMessage)]
    assert message.text.startswith("<system-reminder>\nThe current date is")
    assert message.text.endswith(PROMPT)


def test_L1_a_part_that_only_resembles_a_briefing_is_not_split_off(tmp_path: Path) -> None:
    """A prompt that quotes the briefing's first words inside other text is the user's."""

    def quoted(contents: list[dict[str, Any]]) -> None:
        first = contents[0]["parts"][0]
        first["text"] = "Why does it say: " + first["text"]

    transcript = load(_shared(GEMINI_CHECKPOINT, tmp_path, quoted))
    assert not [e for e in transcript if isinstance(e, SystemNotice)]
    (message, *_) = [e for e in transcript if isinstance(e, UserMessage)]
    assert message.text.startswith("Why does it say: <session_context>")
    assert message.text.endswith(PROMPT)
    assert "agent" not in transcript.metadata


def test_X2_the_checkpoint_reads_the_same_when_the_split_rule_moves(tmp_path: Path) -> None:
    """The checkpoint's reading of its contents is the list's: no content is counted twice."""
    document = json.loads(QWEN_CHECKPOINT.read_text(encoding="utf-8"))
    moved = tmp_path / "elsewhere.json"
    moved.write_text(json.dumps(copy.deepcopy(document)), encoding="utf-8")
    checkpoint = load(moved)
    accounting = checkpoint.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    contents = document["clientHistory"]
    mapped = sum(accounting.counts[k].get("mapped", 0) for k in ("user", "model"))
    assert mapped == len(contents)
    assert [n.subtype for n in checkpoint if isinstance(n, SystemNotice)] == [
        "checkpoint", "context", "context",
    ]  # fmt: skip
