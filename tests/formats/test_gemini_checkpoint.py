"""Gemini CLI's and Qwen Code's ``/restore`` checkpoints (``gemini-checkpoint``, spec L-2, L-3,
L-4, X-2): the conversation up to the file-changing call each was saved before.

The four files are what the real CLIs wrote with checkpointing on, in their terminal UI against
the scripted model of tests/agents, the user approving each edit (Gemini CLI 0.61.0: ``replace``
on ``notes.txt``, then ``write_file`` of ``new.txt``; Qwen Code 0.24.4: ``edit``, then
``write_file``): tests/fixtures/gemini/home-files and tests/fixtures/qwen/home-files, whose
READMEs say how. The shapes no run makes (no conversation, a call the conversation lacks) are
those files with a field taken out.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from turnfold import (
    SystemNotice,
    ToolCall,
    TranscriptFormatError,
    UserMessage,
    load,
)
from turnfold.formats import which_format
from turnfold.formats.source import from_object
from turnfold.session import session_facts

FIXTURES = Path(__file__).parents[1] / "fixtures"
GEMINI = FIXTURES / "gemini" / "home-files" / ".gemini" / "tmp" / "work" / "checkpoints"
QWEN = next((FIXTURES / "qwen" / "home-files" / ".qwen" / "tmp").glob("*/checkpoints"))
BEFORE_REPLACE = GEMINI / "2026-12-07T08-22-51_341Z-notes.txt-replace.json"
BEFORE_WRITE = GEMINI / "2026-12-07T08-22-53_278Z-new.txt-write_file.json"
QWEN_BEFORE_EDIT = QWEN / "2026-12-07T08-25-00_115Z-notes.txt-edit.json"
GEMINI_SESSION = "5a4a7738-049f-47df-9ed5-2cc2ece6d699"
PROMPT = "TF-CKPT: read the notes, then fix them and add a file."


def _document(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _function_calls(document: dict[str, Any]) -> list[str]:
    """The names of the function calls the checkpoint's contents hold, counted apart from the
    reader: every part with a ``functionCall``."""
    return [
        part["functionCall"]["name"]
        for content in document["clientHistory"]
        for part in content.get("parts", [])
        if "functionCall" in part
    ]


def test_L2_a_gemini_cli_checkpoint_is_the_conversation_up_to_the_call_it_precedes() -> None:
    transcript = load(BEFORE_REPLACE)
    assert transcript.metadata["source_format"] == "gemini-checkpoint"
    assert transcript.metadata["session_id"] == GEMINI_SESSION
    assert transcript.metadata["agent"] == "gemini-cli"
    assert session_facts(transcript).agent == "Gemini CLI"
    assert transcript.metadata["checkpoint"]["commitHash"] == (
        "9267e7614e9dbb81948483b690f27b0b51aff131"
    )
    first = transcript.entries[0]
    assert isinstance(first, SystemNotice)
    assert first.subtype == "checkpoint"
    assert first.text == (
        "A checkpoint of the session, saved before the call replace on "
        "/tmp/hF/inter-gemini/work/notes.txt ran: the conversation up to that call"
    )
    # The briefing Gemini CLI sent with the first prompt is its notice, the prompt the user's.
    notices = [e.subtype for e in transcript if isinstance(e, SystemNotice)]
    assert notices == ["checkpoint", "session_context"]
    assert [e.text for e in transcript if isinstance(e, UserMessage)] == [PROMPT]
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [("read_file", "success"), ("replace", "unknown")]
    assert calls[-1].meta["checkpoint"] is True  # it had not run: no result, unknown (L-3)
    assert [c.name for c in calls] == _function_calls(_document(BEFORE_REPLACE))
    assert transcript.warnings == []


def test_X2_every_content_is_read_and_the_ui_history_counted_as_ignored() -> None:
    document = _document(BEFORE_WRITE)
    transcript = load(BEFORE_WRITE)
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["history"] == {"ignored": len(document["history"])}
    contents = document["clientHistory"]
    assert sum(accounting.counts[k].get("mapped", 0) for k in ("user", "model")) == len(contents)
    calls = transcript.tool_calls()
    assert [c.name for c in calls] == _function_calls(document)
    assert [(c.name, c.status) for c in calls][-2:] == [
        ("replace", "success"),  # the edit before it ran, its result in the conversation
        ("write_file", "unknown"),
    ]
    assert [c.name for c in calls if c.meta.get("checkpoint")] == ["write_file"]


def test_L2_a_qwen_code_checkpoint_names_qwen_and_shows_its_context_as_notices() -> None:
    transcript = load(QWEN_BEFORE_EDIT)
    assert transcript.metadata["agent"] == "qwen"
    assert session_facts(transcript).agent == "Qwen Code"
    assert transcript.metadata["session_id"] == "d0752af8-28f3-4d32-86a8-79d97b29edec"
    assert transcript.metadata["checkpoint"]["filePath"] == "/tmp/hF/inter-qwen/work/notes.txt"
    notices = [e for e in transcript if isinstance(e, SystemNotice)]
    assert [n.subtype for n in notices] == ["checkpoint", "context", "context"]
    skills, date = notices[1:]
    assert skills.text.startswith("<system-reminder>\nThe following skills are available")
    assert skills.meta["context"].endswith("</system-reminder>")  # cut in the notice, kept whole
    assert date.text.startswith("<system-reminder>\nThe current date is")
    assert [e.text for e in transcript if isinstance(e, UserMessage)] == [PROMPT]
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [("read_file", "success"), ("edit", "unknown")]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_L2_the_agent_is_told_by_the_folder_then_by_the_fields_only_it_writes(
    tmp_path: Path,
) -> None:
    gemini, qwen = _document(BEFORE_REPLACE), _document(QWEN_BEFORE_EDIT)
    for document, agent in ((gemini, "gemini-cli"), (qwen, "qwen")):
        elsewhere = tmp_path / f"{agent}.json"
        elsewhere.write_text(json.dumps(document), encoding="utf-8")
        assert load(elsewhere).metadata["agent"] == agent
    # Older Qwen Code wrote Gemini CLI's fields: with neither folder nor field to go by, the
    # briefing names Gemini CLI where it is Gemini CLI's, and nothing else names an agent.
    older = {k: v for k, v in qwen.items() if k not in ("promptId", "filePath")}
    older["commitHash"] = "0" * 40
    path = tmp_path / "older.json"
    path.write_text(json.dumps(older), encoding="utf-8")
    assert "agent" not in load(path).metadata


def test_L4_a_checkpoint_without_its_conversation_says_so_naming_the_file(tmp_path: Path) -> None:
    document = _document(BEFORE_REPLACE)
    del document["clientHistory"]
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(TranscriptFormatError) as raised:
        load(path)
    said = str(raised.value)
    assert said.startswith(f"{path}, line 1: not a transcript (a Gemini CLI /restore checkpoint")
    assert "no clientHistory" in said


def test_L4_a_call_the_conversation_lacks_is_warned_of() -> None:
    document = _document(BEFORE_REPLACE)
    document["clientHistory"] = document["clientHistory"][:-1]  # the model's call left out
    kept = copy.deepcopy(document)
    transcript = load(document)
    assert [w.reason for w in transcript.warnings] == [
        "the call the checkpoint was taken before (replace) is not in its conversation"
    ]
    assert transcript.entries[0].text.startswith("A checkpoint of the session")
    assert document == kept  # nothing the user passed is modified


@pytest.mark.parametrize(
    "value",
    [
        # Gemini CLI's /chat save: its history alone, the contents reader's.
        {"history": [{"role": "user", "parts": [{"text": "hi"}]}], "authType": "gemini-api-key"},
        # A list of contents.
        [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}],
        # A tool call of another program's record, without a checkpoint's fields.
        {"toolCall": {"name": "replace", "args": {}}, "result": "ok"},
    ],
    ids=["chat-save", "contents", "other-tool-call"],
)
def test_L2_detection_takes_no_other_file_for_a_checkpoint(value: Any) -> None:
    assert which_format(from_object(value)) != "gemini-checkpoint"


def test_L2_detection_takes_each_real_checkpoint_for_one() -> None:
    for path in (*sorted(GEMINI.glob("*.json")), *sorted(QWEN.glob("*.json"))):
        assert which_format(from_object(_document(path))) == "gemini-checkpoint", path.name


def test_L2_the_notice_without_a_file_names_the_call_alone() -> None:
    document = _document(QWEN_BEFORE_EDIT)
    document["toolCall"]["args"].pop("file_path")
    del document["filePath"]
    transcript = load(document)
    first = transcript.entries[0]
    assert isinstance(first, SystemNotice)
    assert first.text == (
        "A checkpoint of the session, saved before the call edit ran: the conversation up to "
        "that call"
    )
    # Its arguments no longer those of the call in the conversation: said, not hidden.
    assert not any(isinstance(e, ToolCall) and e.meta.get("checkpoint") for e in transcript)
    assert len(transcript.warnings) == 1
