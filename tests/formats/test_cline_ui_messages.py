"""A lone Cline 3 ``ui_messages.json`` read as what the chat panel showed, on the file the real
Cline CLI 2.18.0 (Cline core 3.x) wrote for a scripted task: a command that succeeds, one that
fails, a file read, the completion (``tests/fixtures/cline/cline-cli-2.18.0_ui-messages/``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import turnfold
from turnfold import AssistantText, ToolCall, UserMessage

UI = Path(__file__).parents[1] / "fixtures" / "cline" / "cline-cli-2.18.0_ui-messages"
UI = UI / "ui_messages.json"


def test_a_lone_ui_messages_file_is_the_panel_s_view_with_one_warning() -> None:
    transcript = turnfold.load(UI)
    assert transcript.metadata["source_format"] == "cline"
    assert [w.reason for w in transcript.warnings] == [
        "read as what Cline's chat panel showed: the model's own messages "
        "(api_conversation_history.json) were not found beside it"
    ]
    entries = transcript.entries
    assert isinstance(entries[0], UserMessage)
    assert entries[0].text == "TF-FIRST: run the checks and read the notes."
    texts = [e.text for e in entries if isinstance(e, AssistantText)]
    assert texts[-1] == "TF-DONE-1: ran the check, saw the failure, read the notes."
    assert "TF-READ: reading the notes." in texts


def test_commands_their_outputs_and_outcomes_and_the_tool_s_payload() -> None:
    calls = turnfold.load(UI).tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("execute_command", "success"),
        ("execute_command", "error"),  # the next request says "Command failed with exit code 3."
        ("readFile", "success"),
    ]
    assert calls[0].args == {"command": "printf 'TF-OK-%s\\n' 23"}
    assert calls[0].result is not None
    assert calls[0].result.text == "TF-OK-23\n"
    assert calls[1].result is not None
    assert calls[1].result.text == (
        "TF-FAIL-OUT\n\nls: cannot access '/tf-missing': No such file or directory"
    )
    assert calls[2].args["path"] == "notes.txt"
    # The panel shows no file content: the result is what the next request sent the model.
    assert calls[2].result is not None
    assert calls[2].result.text == (
        "1 | A file for the agents to read.\n2 | TF-NOTE-LINE: the line the edit replaces."
        "\n\n(File has 2 lines total.)"
    )


def test_each_request_s_usage_goes_on_its_response() -> None:
    transcript = turnfold.load(UI)
    used = [
        (e.usage.input_tokens, e.usage.output_tokens, e.usage.cache_read_tokens)
        for e in transcript.entries
        if isinstance(e, (AssistantText, ToolCall)) and e.usage is not None
    ]
    # What the scripted server sent: prompt 1000n+7 (cached tokens included: the OpenAI-
    # compatible handler passes prompt_tokens on), completion 10n+3, 100(n-1) cached.
    assert used == [(1007, 13, 0), (2007, 23, 100), (3007, 33, 200), (4007, 43, 300)]
    assert transcript.metadata["api_requests"] == 4
    assert (transcript.metadata["model"], transcript.metadata["model_provider"]) == (
        "fake-model", "openai",
    )  # fmt: skip


def test_with_the_history_beside_it_the_warning_points_there(tmp_path: Path) -> None:
    shutil.copy(UI, tmp_path / "ui_messages.json")
    (tmp_path / "api_conversation_history.json").write_text("[]")
    transcript = turnfold.load(tmp_path / "ui_messages.json")
    assert [w.reason for w in transcript.warnings] == [
        "read as what Cline's chat panel showed: the model's own messages "
        "(api_conversation_history.json) are beside it; load that file for them"
    ]
    assert len(transcript.tool_calls()) == 3
