"""Cline chat panels (``ui_messages.json``) in shapes real tasks wrote, hand-made here.

Cline writes each request into its ``api_req_started`` as its content blocks joined by a blank
line (``userContent.map((block) => formatContentBlockToMarkdown(block)).join("\\n\\n")``,
``src/core/task/index.ts``; a ``tool_result``'s content after ``[Tool]\\n``,
``src/integrations/misc/export-markdown.ts``). A real task of February 2026 (parallel
``readFile`` calls) read a Cline history file whose JSON holds ``"text":"[write_to_file for
'…'] Result:"``: counted as results, those made the six reads ``unknown``, and two writes
nobody ran. Real tasks of October 2025 called an MCP tool whose server answered ``isError``
(Cline's ``Error:`` line before the content: ``UseMcpToolHandler``), shown as a success, and
met ``ask: auto_approval_max_req_reached``, warned of as a kind not read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import turnfold
from turnfold.formats.agents.cline import _results
from turnfold.model import SystemNotice

TS = 1770577417000
#: What the first file read holds: a Cline history, whose text quotes a result's header.
HISTORY = (
    '[{"role":"user","content":[{"type":"text","text":"[write_to_file for \'fib.py\'] Result:'
    '\\nThe content was successfully saved to fib.py."}]}]'
)


READ_HEADER = "[read_file for 'task_sample/api_conversation_history.json'] Result:"
ENVIRONMENT = "<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"


def say(offset: int, kind: str, text: str, index: int) -> dict[str, Any]:
    return {"ts": TS + offset, "type": "say", "say": kind, "text": text,
            "conversationHistoryIndex": index}  # fmt: skip


def read(offset: int, path: str) -> dict[str, Any]:
    tool = {"tool": "readFile", "path": path, "content": f"/work/{path}",
            "operationIsLocatedInWorkspace": True}  # fmt: skip
    return say(offset, "tool", json.dumps(tool), 2)


def request(offset: int, blocks: list[str]) -> dict[str, Any]:
    counts = {"tokensIn": 10, "tokensOut": 20, "cacheWrites": 0, "cacheReads": 0, "cost": 0.01}
    return say(offset, "api_req_started", json.dumps({"request": "\n\n".join(blocks), **counts}), 1)


def panel(tmp_path: Path) -> Path:
    messages = [
        say(0, "task", "Why does the history view miss the sub-prompts?", -1),
        request(1, ["<task>\nWhy does the history view miss the sub-prompts?\n</task>"]),
        say(2, "text", "Let me read both files.", 2),
        read(3, "task_sample/api_conversation_history.json"),
        read(4, "src/summary.rs"),
        request(
            5,
            [
                READ_HEADER,
                HISTORY,
                "[read_file for 'src/summary.rs'] Result:",
                "pub fn summary() {}",
                ENVIRONMENT,
            ],
        ),
        say(6, "completion_result", "The sub-prompts are user_feedback messages.", 4),
    ]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(messages))
    return path


def test_a_header_quoted_in_a_files_text_settles_no_call(tmp_path: Path) -> None:
    calls = turnfold.load(panel(tmp_path)).tool_calls()
    assert [(c.name, c.status) for c in calls] == [("read_file", "success")] * 2
    first = calls[0].result
    assert first is not None
    assert first.text == HISTORY
    assert [c.args["path"] for c in calls] == [
        "task_sample/api_conversation_history.json", "src/summary.rs",
    ]  # fmt: skip


def test_results_are_the_headers_that_open_a_block() -> None:
    quoted = "[read_file for 'a.json'] Result:\n" + HISTORY
    assert [name for name, _, _ in _results(quoted)] == ["read_file"]
    # A tool_result block: its content follows "[Tool]" (or "[Tool (Error)]") and a newline.
    blocks = (
        "[Tool]\n[read_file for 'a.txt'] Result:\nA"
        "\n\n[Tool (Error)]\n[execute_command for 'x'] Result:\nB"
    )
    assert [name for name, _, _ in _results(blocks)] == ["read_file", "execute_command"]


def test_an_mcp_result_the_server_flagged_an_error_fails_the_call(tmp_path: Path) -> None:
    use = {"type": "use_mcp_tool", "serverName": "vscode-commands", "toolName": "change_theme",
           "arguments": '{\n  "theme": "Default Dark+"\n}'}  # fmt: skip
    failed = "Error:\nError: Command timeout: vscode-commands.changeTheme"
    messages = [
        say(0, "task", "Switch to the dark theme.", -1),
        request(1, ["<task>\nSwitch to the dark theme.\n</task>"]),
        {"ts": TS + 2, "type": "ask", "ask": "use_mcp_server", "text": json.dumps(use),
         "conversationHistoryIndex": 2},
        say(3, "mcp_server_request_started", "", 3),
        say(4, "mcp_server_response", failed, 3),
        request(5, ["[use_mcp_tool for 'vscode-commands'] Result:", failed]),
        say(6, "completion_result", "The extension is not connected.", 4),
    ]  # fmt: skip
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(messages))
    (call,) = turnfold.load(path).tool_calls()
    assert (call.name, call.status) == ("use_mcp_tool", "error")
    assert call.result is not None
    assert call.result.text == failed


def test_the_auto_approval_limit_is_a_notice_not_a_warning(tmp_path: Path) -> None:
    limit = (
        "Cline has auto-approved 20 API requests. Would you like to reset the count and proceed"
        " with the task?"
    )
    messages = [
        say(0, "task", "Build it.", -1),
        request(1, ["<task>\nBuild it.\n</task>"]),
        say(2, "text", "Building.", 2),
        {"ts": TS + 3, "type": "ask", "ask": "auto_approval_max_req_reached", "text": limit,
         "conversationHistoryIndex": 2},
        request(4, ["<environment_details>\n</environment_details>"]),
        say(5, "completion_result", "Built.", 4),
    ]  # fmt: skip
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(messages))
    t = turnfold.load(path)
    notices = [e for e in t.entries if isinstance(e, SystemNotice)]
    assert [(n.subtype, n.text, n.level) for n in notices] == [
        ("auto_approval_max_req_reached", limit, "info")
    ]
    assert len(t.warnings) == 1  # only that the history was not beside the panel
