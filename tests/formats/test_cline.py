"""Cline and Roo Code task histories (spec H-5, H-6; issue 13).

All three fixtures are hand-made (Cline cannot run here: it is a VS Code extension driving a
live model), written from Cline's source (``src/core/Cline.ts``: ``pushToolResult``,
``toolDescription``, ``loadContext``; ``src/core/prompts/responses.ts``; the tool tags of
``src/core/assistant-message/``; ``ToolResultUtils.ts`` for native tool calls) and Roo Code's
(``<args><file><path>`` reads, ``apply_diff``, ``ts`` on messages):

- ``cline_v3.x_hand-made_xml-tools/``: a task folder, XML-style tool tags, with
  ``ui_messages.json`` (``api_req_started`` usage and cost) and ``task_metadata.json``;
- ``cline_v3.3x_hand-made_native-tools.json``: ``tool_use`` / ``tool_result`` blocks;
- ``roo-code_v3.2x_hand-made_xml-tools.json``: Roo Code's tags and message ``ts``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.agents.cline import parse_tool, split_text, status_of
from turnfold.formats.source import from_object
from turnfold.model import AssistantText, SystemNotice, Thinking, UserMessage
from turnfold.tools import tool_category
from turnfold.usage import count_tokens

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cline"
FOLDER = FIXTURES / "cline_v3.x_hand-made_xml-tools"
XML = FOLDER / "api_conversation_history.json"
NATIVE = FIXTURES / "cline_v3.3x_hand-made_native-tools.json"
ROO = FIXTURES / "roo-code_v3.2x_hand-made_xml-tools.json"
TEXT_RESULTS = FIXTURES / "cline_v3.x_hand-made_native-tools-text-results.json"


def test_H5_xml_tool_tags_are_calls_with_their_args_results_and_status() -> None:
    transcript = turnfold.load(XML)
    assert transcript.metadata["source_format"] == "cline"
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("read_file", "success"), ("replace_in_file", "cancelled"), ("replace_in_file", "success"),
        ("execute_command", "success"), ("search_files", "error"),
    ]  # fmt: skip
    read, denied, edit, command, search = calls
    assert read.args == {"path": "cli.py"}
    assert read.result is not None
    assert (read.result.text or "").startswith("import argparse")
    assert denied.result is not None
    assert denied.result.text == "The user denied this operation."
    assert "-v" in edit.args["diff"]
    assert edit.args["diff"].startswith("<<<<<<< SEARCH")
    assert command.args == {"command": "python -m pytest -q", "requires_approval": "false"}
    assert command.description == "python -m pytest -q"
    assert command.result is not None
    assert "3 passed" in (command.result.text or "")
    assert search.args["file_pattern"] == "*.md"
    assert search.result is not None
    assert "spawn rg ENOENT" in (search.result.text or "")


def test_H5_task_feedback_thinking_notices_and_the_final_answer() -> None:
    entries = turnfold.load(XML).entries
    users = [e.text for e in entries if isinstance(e, UserMessage)]
    # The <task> and <feedback> wrappers and every <environment_details> block are left out.
    assert users == [
        "Add a --verbose flag to cli.py and run the tests",
        "Use -v as the short option too",
    ]
    assert not any("environment_details" in getattr(e, "text", "") for e in entries)
    thinking = [e for e in entries if isinstance(e, Thinking)]
    assert [t.text for t in thinking] == [
        "I need to see how cli.py parses its arguments before changing it."
    ]
    notices = [e for e in entries if isinstance(e, SystemNotice)]
    assert [(n.level, n.subtype) for n in notices] == [("warning", "no_tool_used")]
    final = entries[-1]
    assert isinstance(final, AssistantText)
    assert final.text == "Added -v/--verbose to cli.py; the three tests pass."


def test_H6_the_task_folder_gives_times_usage_cost_and_model() -> None:
    transcript = turnfold.load(XML)
    assert transcript.metadata["cost_usd"] == pytest.approx(0.1338)
    assert transcript.metadata["api_requests"] == 7
    assert transcript.metadata["model"] == "claude-3-7-sonnet-20250219"
    assert transcript.metadata["cwd"] == "/home/dev/proj"  # from the first environment details
    entries = transcript.entries
    assert entries[0].timestamp == "2025-12-01T09:00:00+00:00"  # the say "task" message
    texts = [e for e in entries if isinstance(e, AssistantText)]
    # The 2nd, 6th and 7th requests answered with text: their api_req_started usage is theirs.
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in texts if t.usage] == [
        (5600, 170), (6400, 12), (6500, 30)
    ]  # fmt: skip
    # The others wrote a thought or calls alone: it goes on the first of them (usage.py), with
    # the request's cost.
    carriers = [e for e in entries if getattr(e, "usage", None) is not None]
    assert [(e.kind, e.usage.input_tokens) for e in carriers if e.kind != "assistant"] == [
        ("thinking", 5210), ("tool_call", 5890), ("tool_call", 6120), ("tool_call", 6230)
    ]  # fmt: skip
    assert sum(e.meta["cost_usd"] for e in carriers) == pytest.approx(0.1338)
    assert texts[-1].timestamp == "2025-12-01T09:01:01+00:00"
    assert transcript.tool_calls()[0].timestamp == "2025-12-01T09:00:01+00:00"


def test_H6_a_history_outside_its_folder_loads_without_times(tmp_path: Path) -> None:
    copy = tmp_path / "history.json"
    shutil.copy(XML, copy)
    transcript = turnfold.load(copy)
    assert transcript.metadata["source_format"] == "cline"  # by its marks alone
    assert "cost_usd" not in transcript.metadata
    assert all(e.timestamp is None for e in transcript.entries)


def test_H6_the_extension_folder_names_the_agent(tmp_path: Path) -> None:
    task = tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "1764580000000"
    shutil.copytree(FOLDER, task)
    transcript = turnfold.load(task / "api_conversation_history.json")
    assert transcript.metadata["agent"] == "roo-code"
    assert len(transcript.tool_calls()) == 5


def test_H6_usage_is_paired_only_when_every_request_has_its_message(tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(FOLDER, task)
    ui = json.loads((task / "ui_messages.json").read_text())
    ui.append({"ts": 1764579700000, "type": "say", "say": "api_req_started", "text": "{}"})
    (task / "ui_messages.json").write_text(json.dumps(ui))
    transcript = turnfold.load(task / "api_conversation_history.json")
    assert transcript.metadata["cost_usd"] == pytest.approx(0.1338)
    assert all(t.usage is None for t in transcript.entries if isinstance(t, AssistantText))


def test_H5_native_tool_calls_lose_the_result_header_and_keep_the_status() -> None:
    transcript = turnfold.load(NATIVE)
    assert transcript.metadata["source_format"] == "cline"
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status, c.call_id) for c in calls] == [
        ("execute_command", "success", "toolu_01"), ("read_file", "success", "toolu_02"),
        ("write_to_file", "cancelled", "toolu_03"), ("replace_in_file", "success", "toolu_04"),
    ]  # fmt: skip
    assert calls[0].result is not None
    assert (
        calls[0].result.text
        == "Command executed.\nOutput:\nFAIL src/app.test.ts\n  expected 3, received 2"
    )
    users = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert users == ["Why does `npm test` fail?", "Edit the line instead of rewriting the file"]
    final = transcript.entries[-1]
    assert isinstance(final, AssistantText)  # attempt_completion is the answer, not a call
    assert final.text == "`add` subtracted; it now adds, and `npm test` passes."


def test_H5_native_tool_calls_answered_by_header_texts_are_paired() -> None:
    """Cline writes a ``tool_use`` block's result as a ``[tool for 'x'] Result:`` text block
    when it has no id for the call (ToolResultUtils, seen with an OpenAI-compatible provider
    in a real history of April 2026): each header settles the next call of its name in the
    message before it; a call cut off by a resumed task keeps no later call's result."""
    transcript = turnfold.load(TEXT_RESULTS)
    assert transcript.metadata["source_format"] == "cline"
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.call_id, c.name, c.status) for c in calls] == [
        ("tooluse_A1", "use_subagents", "success"),  # its header: [subagents]
        ("tooluse_B1", "read_file", "success"),
        ("tooluse_B2", "execute_command", "error"),  # Command failed with exit code 1.
        ("tooluse_C1", "ask_followup_question", "unknown"),  # cut off: [TASK RESUMPTION]
        ("tooluse_D1", "ask_followup_question", "success"),
    ]  # fmt: skip
    texts = [c.result.text if c.result is not None else None for c in calls]
    assert texts[0] is not None
    assert texts[0].startswith("Subagent results:")
    assert texts[1:] == [
        "1 | import { Pool } from 'pg';",
        "Command failed with exit code 1.\nOutput:\n1 failing",  # not the focus chain's reminder
        None,
        "yes",  # the user's answer, without Cline's <answer> wrapper (USER_CONTENT_TAGS)
    ]
    # After attempt_completion: Cline's "Done" and its sentence are not the user's words.
    users = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert users == ["Move the app to the new project.", "Use demo-dev.", "Also update the README."]
    answers = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert answers[-2:] == ["Moved to demo-dev.", "Moved to demo-dev; README updated."]


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("Command executed successfully (exit code 0).\nOutput:\nok", "success"),
        ("Command failed with exit code 2.\nOutput:\nboom", "error"),
        ("Command terminated by signal SIGTERM.", "error"),
        ("Command executed.", "success"),
        ("The user denied the command execution.", "cancelled"),
        ("Command cancelled. \nOutput captured before cancellation:\nx", "cancelled"),
    ],
)
def test_H5_a_command_s_status_line_decides(text: str, status: str) -> None:
    assert status_of(text) == status


def test_H5_roo_code_reads_nested_paths_one_tool_per_message_and_timestamps() -> None:
    transcript = turnfold.load(ROO)
    assert transcript.metadata["source_format"] == "cline"
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("read_file", "success"), ("apply_diff", "success"), ("list_files", "success"),
        ("execute_command", "cancelled"),
    ]  # fmt: skip
    assert calls[0].args["paths"] == ["utils.py"]
    assert calls[0].description == "utils.py"
    assert calls[3].result is not None
    assert "already been used" in (calls[3].result.text or "")
    assert transcript.entries[0].timestamp == "2025-12-01T09:06:40+00:00"
    assert isinstance(transcript.entries[-1], AssistantText)


def test_H5_detection_tells_a_cline_history_from_a_plain_anthropic_list() -> None:
    native = json.loads(NATIVE.read_text())
    assert which_format(from_object(native)) == "cline"
    # The same calls without Cline's marks are an Anthropic list.
    plain = [
        {"role": "user", "content": [{"type": "text", "text": "Why does npm test fail?"}]},
        native[1],
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "ok"}],
        },
    ]
    assert which_format(from_object(plain)) == "anthropic"
    assert which_format(from_object([{"role": "user", "content": "hi"}])) == "openai"


def test_H5_cline_tools_have_their_categories() -> None:
    expected = {
        "read_file": "read", "list_files": "list", "search_files": "search",
        "execute_command": "command", "write_to_file": "write", "replace_in_file": "edit",
        "apply_diff": "edit", "browser_action": "other", "use_mcp_tool": "other",
        "new_task": "agent",
    }  # fmt: skip
    assert {name: tool_category(name) for name in expected} == expected


def test_H5_the_tag_parser_follows_clines() -> None:
    # write_to_file's content may hold its own closing tags: the last one ends it.
    text = (
        "Writing.\n<write_to_file>\n<path>a.xml</path>\n"
        "<content>\n<content>x</content>\n</content>\n</write_to_file>"
    )
    assert split_text(text) == [
        ("text", "Writing."),
        ("tool", ("write_to_file", {"path": "a.xml", "content": "<content>x</content>"})),
    ]
    # An interrupted stream keeps what was written; an unknown tag is text.
    assert parse_tool("<command>ls -l", "execute_command") == {"command": "ls -l"}
    assert split_text("<b>bold</b>") == [("text", "<b>bold</b>")]
    assert (
        status_of("The tool execution failed with the following error:\n<error>x</error>")
        == "error"
    )
    assert status_of("The user denied this operation.") == "cancelled"
    assert status_of("ok") == "success"


def test_L4_bad_messages_are_warnings_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "api_conversation_history.json"
    history = json.loads(XML.read_text())
    history.insert(2, {"role": "user", "content": 7})
    history.insert(3, "not a message")
    bad.write_text(json.dumps(history))
    transcript = turnfold.load(bad)
    assert transcript.metadata["source_format"] == "cline"
    assert len(transcript.tool_calls()) == 5
    assert {w.line for w in transcript.warnings} == {3, 4}
    assert all(w.source == str(bad) for w in transcript.warnings)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


# --- attempt_completion's command (AttemptCompletionHandler, CommandOrchestrator) -------------

ENVIRONMENT = (
    "<environment_details>\n# Current Working Directory (/site) Files\nindex.html\n"
    "</environment_details>"
)
FEEDBACK = (
    "The user has provided feedback on the results. Consider their input to continue the task, "
    "and then attempt completion again.\n<feedback>\nMake the title bigger\n</feedback>"
)


def _completion_task(answer: list[object], result: list[object]) -> list[dict[str, object]]:
    """A task whose answer is ``answer``'s blocks and whose next user message is ``result``."""
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nBuild the page\n</task>"},
                {"type": "text", "text": ENVIRONMENT},
            ],
        },
        {"role": "assistant", "content": answer},
        {"role": "user", "content": [*result, {"type": "text", "text": ENVIRONMENT}]},
    ]


def _text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


_TAGS = _text(
    "<attempt_completion>\n<result>\nThe page renders.\n</result>\n"
    "<command>open index.html</command>\n</attempt_completion>"
)
_TOOL_USE = {
    "type": "tool_use",
    "id": "toolu_done",
    "name": "attempt_completion",
    "input": {"result": "The page renders.", "command": "open index.html"},
}


def _kinds(transcript: turnfold.Transcript) -> list[tuple[str, str]]:
    shown = []
    for entry in transcript.entries:
        if isinstance(entry, (AssistantText, UserMessage)):
            shown.append((entry.kind, entry.text))
        elif isinstance(entry, turnfold.ToolCall):
            result = entry.result.text if entry.result is not None else None
            shown.append((entry.kind, f"{entry.name} {entry.status}: {result}"))
    return shown


@pytest.mark.parametrize(
    ("answer", "result", "call_id"),
    [
        # Tags: pushToolResult writes the header, then the handler's blocks.
        pytest.param(
            [_TAGS],
            [
                _text("[attempt_completion] Result:"),
                _text("Command executed.\nOutput:\nopened"),
                _text(FEEDBACK),
            ],
            "msg-2-attempt_completion-1",
            id="xml-tags",
        ),
        # Native tool_use: the handler's blocks, its own header first, in the tool_result.
        pytest.param(
            [_TOOL_USE],
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_done",
                    "content": [
                        _text("[attempt_completion] Result:"),
                        _text("Command executed.\nOutput:\nopened"),
                        _text(FEEDBACK),
                    ],
                }
            ],
            "toolu_done#command",
            id="tool-use",
        ),
    ],
)
def test_H5_attempt_completion_s_command_output_is_its_call_s_result(
    answer: list[object], result: list[object], call_id: str
) -> None:
    transcript = turnfold.load(_completion_task(answer, result), format="cline")
    assert transcript.warnings == []
    assert _kinds(transcript)[1:] == [
        ("assistant", "The page renders."),
        ("tool_call", "execute_command success: Command executed.\nOutput:\nopened"),
        ("user", "Make the title bigger"),
    ]
    [command] = transcript.tool_calls()
    assert command.args == {"command": "open index.html"}
    assert command.description == "open index.html"
    assert command.call_id == call_id


def test_H5_attempt_completion_s_command_denied_is_cancelled_not_said() -> None:
    """The handler returns a string: pushToolResult writes the header and that text."""
    denied = [
        _text("[attempt_completion] Result:"),
        _text("The user denied the command execution."),
    ]
    transcript = turnfold.load(_completion_task([_TAGS], denied), format="cline")
    assert _kinds(transcript)[1:] == [
        ("assistant", "The page renders."),
        ("tool_call", "execute_command cancelled: The user denied the command execution."),
    ]


def test_H5_feedback_given_while_the_command_ran_is_the_user_s() -> None:
    """CommandOrchestrator: the user typed while the command ran (``userRejected``)."""
    running = (
        "Command is still running in the user's terminal.\nHere's the output so far:\nserving"
        "\n\nThe user provided the following feedback:\n<feedback>\nlooks off\n</feedback>"
    )
    result = [{"type": "tool_result", "tool_use_id": "toolu_done", "content": running}]
    transcript = turnfold.load(_completion_task([_TOOL_USE], result), format="cline")
    assert _kinds(transcript)[1:] == [
        ("assistant", "The page renders."),
        (
            "tool_call",
            "execute_command success: Command is still running in the user's "
            "terminal.\nHere's the output so far:\nserving",
        ),
        ("user", "looks off"),
    ]


def test_L3_attempt_completion_s_command_without_a_result_stays_unknown() -> None:
    """The user accepted the answer (Cline writes nothing more): no outcome is recorded."""
    task = _completion_task([_TOOL_USE], [])[:2]
    transcript = turnfold.load(task, format="cline")
    [command] = transcript.tool_calls()
    assert (command.status, command.result) == ("unknown", None)


_RUNNING = (
    "Command is still running in the user's terminal.\nHere's the output so far:\nserving"
    "\n\nThe user provided the following feedback:\n<feedback>\nuse port 8080\n</feedback>"
)


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        pytest.param(
            [_text("<execute_command>\n<command>npm start</command>\n</execute_command>")],
            [_text("[execute_command for 'npm start'] Result:"), _text(_RUNNING)],
            id="xml-tags",
        ),
        pytest.param(
            [
                {
                    "type": "tool_use",
                    "id": "toolu_run",
                    "name": "execute_command",
                    "input": {"command": "npm start"},
                }
            ],
            [{"type": "tool_result", "tool_use_id": "toolu_run", "content": _RUNNING}],
            id="tool-use",
        ),
    ],
)
def test_H5_feedback_typed_while_any_command_ran_is_the_user_s_message(
    answer: list[object], result: list[object]
) -> None:
    transcript = turnfold.load(_completion_task(answer, result), format="cline")
    assert _kinds(transcript)[1:] == [
        (
            "tool_call",
            "execute_command success: Command is still running in the user's "
            "terminal.\nHere's the output so far:\nserving",
        ),
        ("user", "use port 8080"),
    ]


# --- each assistant message's modelInfo and metrics (ClineStorageMessage, since v3.37 / v3.40) --


def test_H6_metrics_give_each_response_its_usage_and_model_info_its_model() -> None:
    """Every assistant message of the hand-made history (in the shape of a real one of April
    2026) records ``modelInfo`` and ``metrics.tokens``: each response's usage sits where usage.py
    puts it, a call when the response wrote no text; the model is its texts' and the session's."""
    transcript = turnfold.load(TEXT_RESULTS)
    assert transcript.warnings == []
    carriers = [e for e in transcript.entries if getattr(e, "usage", None) is not None]
    shown = [
        (e.kind, getattr(e, "call_id", None), e.usage.input_tokens, e.usage.output_tokens)
        for e in carriers
    ]
    assert shown == [
        ("tool_call", "tooluse_A1", 1000, 100),  # use_subagents alone
        ("tool_call", "tooluse_B1", 1000, 100),  # the first of two parallel calls
        ("tool_call", "tooluse_C1", 1000, 100),
        ("assistant", None, 1000, 100),  # "Using demo-dev." before its call
        ("assistant", None, 1000, 100),  # attempt_completion's result is the text
        ("assistant", None, 1200, 80),
    ]
    # providerId openai: the handler's prompt_tokens already count the cached tokens (none here).
    assert all(e.usage.cache_read_tokens is None for e in carriers)
    assert count_tokens(transcript.entries) == {"input_tokens": 6200, "output_tokens": 580}
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert {t.model for t in texts} == {"claude_4_5_opus"}
    assert transcript.metadata["model"] == "claude_4_5_opus"
    assert transcript.metadata["model_provider"] == "openai"
    assert "cost_usd" not in transcript.metadata  # metrics without a cost


def _answer(provider: str, tokens: dict[str, int], cost: float | None = None) -> dict[str, object]:
    metrics: dict[str, object] = {"tokens": tokens}
    if cost is not None:
        metrics["cost"] = cost
    return {
        "role": "assistant",
        "content": [_text("<thinking>Look first.</thinking>"), _text("Here it is.")],
        "modelInfo": {"modelId": "claude-sonnet-4-5", "providerId": provider, "mode": "act"},
        "metrics": metrics,
        "ts": 1777073173494,
    }


@pytest.mark.parametrize(
    ("provider", "input_tokens"),
    [
        # AnthropicHandler reports input_tokens without the cache: Cline's cached is added in.
        pytest.param("anthropic", 1300, id="cache-apart"),
        pytest.param("openrouter", 1300, id="cache-subtracted"),
        # OpenAiHandler passes prompt_tokens on: the cached tokens are already counted.
        pytest.param("openai", 1000, id="prompt-holds-cache"),
    ],
)
def test_H6_cached_tokens_count_in_the_prompt_once_whatever_the_provider(
    provider: str, input_tokens: int
) -> None:
    history = [
        {"role": "user", "content": [_text("<task>\nShow it\n</task>"), _text(ENVIRONMENT)]},
        _answer(provider, {"prompt": 1000, "completion": 50, "cached": 300}, cost=0.0123),
        {"role": "user", "content": [_text("<feedback>\nthanks\n</feedback>")]},
        _answer(provider, {"prompt": 1100, "completion": 20, "cached": 0}, cost=0.002),
    ]
    transcript = turnfold.load(history, format="cline")
    assert transcript.warnings == []
    first, second = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert first.usage is not None
    assert first.usage.input_tokens == input_tokens
    assert first.usage.output_tokens == 50
    # Cline's cached lumps cache reads and writes: neither count, the number kept beside.
    assert (first.usage.cache_read_tokens, first.usage.cache_write_tokens) == (None, None)
    assert first.meta["cached_tokens"] == 300
    assert first.meta["cost_usd"] == pytest.approx(0.0123)
    assert first.model == "claude-sonnet-4-5"
    assert first.timestamp == "2026-04-24T23:26:13.494000+00:00"
    assert second.usage is not None
    assert second.usage.input_tokens == 1100
    assert "cached_tokens" not in second.meta
    assert transcript.metadata["cost_usd"] == pytest.approx(0.0143)
    assert transcript.metadata["model_provider"] == provider


def test_H6_the_task_folder_s_requests_tell_cache_reads_from_writes(tmp_path: Path) -> None:
    """With ``ui_messages.json`` beside the history, its ``api_req_started`` counts of the same
    request win (reads and writes apart), added to tokensIn by the provider's rule."""
    history = [
        {"role": "user", "content": [_text("<task>\nShow it\n</task>"), _text(ENVIRONMENT)]},
        _answer("anthropic", {"prompt": 1000, "completion": 50, "cached": 300}),
        {"role": "user", "content": [_text("<feedback>\nagain\n</feedback>")]},
        _answer("openai", {"prompt": 1300, "completion": 40, "cached": 300}),
    ]
    requests = [
        {"tokensIn": 1000, "tokensOut": 50, "cacheWrites": 100, "cacheReads": 200, "cost": 0.01},
        {"tokensIn": 1300, "tokensOut": 40, "cacheWrites": 0, "cacheReads": 300, "cost": 0.02},
    ]
    ui = [
        {"ts": 1777073170000 + n, "type": "say", "say": "api_req_started", "text": json.dumps(r)}
        for n, r in enumerate(requests)
    ]
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    transcript = turnfold.load(tmp_path / "api_conversation_history.json")
    anthropic, openai = [e.usage for e in transcript.entries if isinstance(e, AssistantText)]
    assert anthropic is not None
    assert openai is not None
    assert (anthropic.input_tokens, anthropic.cache_read_tokens, anthropic.cache_write_tokens) == (
        1300,
        200,
        100,
    )
    assert (openai.input_tokens, openai.cache_read_tokens) == (1300, 300)  # not 1600
    assert transcript.metadata["cost_usd"] == pytest.approx(0.03)


@pytest.mark.parametrize(
    ("words", "kind"),
    [
        ("Response interrupted by user", "abort"),
        ("Response interrupted by API Error", "error"),
        ("Response interrupted by user feedback", "system"),
        (
            "Response interrupted by a tool use result. Only one tool may be used at a time and "
            "should be placed at the end of the message.",
            "system",
        ),
    ],
)
def test_H5_what_cline_appends_to_a_response_it_cut_short_is_not_the_model_s(
    words: str, kind: str
) -> None:
    """The notes Cline's stream loop and ``abortStream`` append to the assistant's text (the
    same words since v2): the user stopped the turn, the stream failed, or Cline cut the rest
    of the response after a rejected call or a second tool use."""
    history = [
        {"role": "user", "content": [_text("<task>\nRead it\n</task>"), _text(ENVIRONMENT)]},
        {
            "role": "assistant",
            "content": [
                _text(f"Reading.\n\n<read_file>\n<path>a.txt</path>\n</read_file>\n\n[{words}]")
            ],
        },
    ]
    transcript = turnfold.load(history, format="cline")
    assert [e.kind for e in transcript.entries] == ["user", "assistant", "tool_call", kind]
    assert transcript.entries[1].text == "Reading."
    assert transcript.tool_calls()[0].args == {"path": "a.txt"}
    note = transcript.entries[-1]
    assert (getattr(note, "reason", None) or getattr(note, "message", None) or note.text) == words
