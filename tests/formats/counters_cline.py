"""Independent tool-call counters for Cline and Roo Code task histories (issue 13), written
from Cline's source (``toolUseNames`` in ``src/core/assistant-message/index.ts``; tool_use blocks
in newer versions) apart from the loader, and for Cline 4's ``<session>.messages.json``.

A call is a ``tool_use`` block, or an XML tool tag opening a line of an assistant's text, except
the tools that are the assistant's reply rather than an action (``attempt_completion``,
``plan_mode_respond``). A Cline 4 session's calls are the ``tool_use`` blocks of its messages
and of its sub-agents' and teammates' files (``"agent": "subagent"``, ``"teammate"``) in its
session folder, each message once (a teammate's continued run repeats its earlier runs').
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

_TOOLS = [
    "execute_command",
    "read_file",
    "write_to_file",
    "replace_in_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "new_task",
    "load_mcp_documentation",
    "web_fetch",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "switch_mode",
    "codebase_search",
    "update_todo_list",
]
_OPENING = re.compile(r"^<(" + "|".join(_TOOLS) + r")>", re.MULTILINE)
_REPLIES = {"attempt_completion", "plan_mode_respond"}


#: The panel's messages that show a call (``ClineSayTool`` JSON, a command, a failed edit).
_PANEL_CALLS = {"tool", "command", "diff_error"}
#: A result header in a request's text: ``[read_file for 'a.txt'] Result:``.
_RESULT = re.compile(r"\[([a-z_]+)(?: for [^\]]*)?\] Result:\n?")
#: Headers that answer no call the panel shows: the question's answer, the replies.
_ANSWERS = {"ask_followup_question", "attempt_completion", "plan_mode_respond", "act_mode_respond"}


def count_cline_panel(path: Path) -> int:
    """The Cline CLI 2.x's ``--json`` output (the panel's messages as JSON lines): the messages
    that show a call, and where a request follows none of them, the results it sends (Cline
    prints no partial message, and a failed edit's ``diff_error`` is written partial), but for
    the question's answer and the empty second result after a failed call's."""
    count = shown = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("{"):  # the CLI's own words ("SIGINT received, shutting down")
            continue
        message = json.loads(line)
        kind = message.get(message.get("type")) if message.get("type") in ("say", "ask") else None
        if kind in _PANEL_CALLS:
            shown += 1
        if kind != "api_req_started":
            continue
        request = json.loads(message["text"]).get("request", "")
        if not shown:
            pieces = _RESULT.split(request)[1:]  # name, body, name, body…
            count += sum(
                name not in _ANSWERS and not body.startswith("(tool did not return anything)")
                for name, body in zip(pieces[::2], pieces[1::2], strict=True)
            )
        count += shown
        shown = 0
    return count + shown


def count_cline(path: Path) -> int:
    if path.suffix == ".jsonl":
        return count_cline_panel(path)
    count = 0
    for message in json.loads(path.read_text(encoding="utf-8")):
        if message.get("role") != "assistant":
            continue
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if block.get("type") == "tool_use" and block.get("name") not in _REPLIES:
                count += 1
            elif block.get("type") == "text":
                count += len(_OPENING.findall(block["text"]))
    return count


def count_cline_messages(path: Path) -> int:
    files = [path]
    if path.name == path.parent.name + ".messages.json":  # the session's own: its children too
        files += sorted(p for p in path.parent.glob("*.messages.json") if p != path)
    count = 0
    seen: set[str] = set()  # a teammate's continued run repeats its earlier runs' messages
    for file in files:
        document = json.loads(file.read_text(encoding="utf-8"))
        if file != path and document.get("agent") not in ("subagent", "teammate"):
            continue
        for message in document["messages"]:
            if document.get("agent") == "teammate" and message.get("id") in seen:
                continue
            seen.add(message.get("id"))
            content = message.get("content")
            count += sum(
                isinstance(block, dict) and block.get("type") == "tool_use"
                for block in (content if isinstance(content, list) else [])
            )
    return count


def count_cline_json(path: Path) -> int:
    """The Cline CLI's ``--json`` stdout: distinct ``toolCallId`` of the ``agent_event``s that
    start a tool (``content_start`` with ``contentType: "tool"``), the sub-agents' included
    (their events are printed with the lead's)."""
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else {}
        event = record.get("event") if record.get("type") == "agent_event" else None
        if isinstance(event, dict) and (event.get("type"), event.get("contentType")) == (
            "content_start",
            "tool",
        ):
            ids.add(event.get("toolCallId"))
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {
    "cline": count_cline,
    "cline-messages": count_cline_messages,
    "cline-json": count_cline_json,
}
