"""Independent tool-call counters (issue 11): each counts a source file's own tool-call records.

Written apart from the loaders, from the formats' documentation, in a few lines each, so that a
loader that drops calls (a new record type, a sub-agent file it did not find) disagrees with
them. A counter counts what the source holds, sub-agents included: a call recorded twice (in a
sub-agent file and in the parent's progress records) is one call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def records(path: Path) -> Iterator[Any]:
    """A file's JSON values: a document's items (or the document), else its JSON lines."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        document = json.loads(text)
    except ValueError:
        for line in text.splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue
        return
    yield from document if isinstance(document, list) else [document]


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def claude_code(path: Path) -> int:
    """Distinct ``tool_use`` ids in the session, its inline sidechains, its progress records and
    its sub-agent files, plus ``!`` shell commands (``<bash-input>`` prompts).

    A sub-agent's step in a progress record is ``data.message``: a user/assistant record whose
    ``message`` holds the blocks, or (some writers) the bare message itself. A background
    task's notification is a user record too, but never a shell command. A Workflow run's
    agents (``subagents/workflows/<runId>/agent-*.jsonl``) are one ``agent`` call each, plus
    the calls in their files; so is the compaction agent's file (``agent-acompact-*.jsonl``),
    which no call of the session started.
    """
    files = [path, *sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))]
    files += sorted(p for p in path.parent.glob("agent-*.jsonl") if p != path)
    workflow_agents = sorted(
        (path.parent / path.stem / "subagents").glob("workflows/*/agent-*.jsonl")
    )
    files += workflow_agents
    compaction_agents = sorted(
        (path.parent / path.stem / "subagents").glob("agent-acompact-*.jsonl")
    )
    ids: set[str] = set()
    shells = 0
    for file in files:
        for record in _claude_records(file):
            if not isinstance(record, dict):
                continue
            messages = [record.get("message")]
            data = record.get("data")
            if record.get("type") == "progress" and isinstance(data, dict):
                step = data.get("message") or {}
                messages.append(step.get("message") if "message" in step else step)
            for message in messages:
                for block in _blocks(message):
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        ids.add(str(block.get("id")))
            content = (record.get("message") or {}).get("content")
            shell = isinstance(content, str) and "<bash-input>" in content
            notified = (record.get("origin") or {}).get("kind") == "task-notification"
            shells += record.get("type") == "user" and shell and not notified
    return len(ids) + shells + len(workflow_agents) + len(compaction_agents)


def _claude_records(path: Path) -> Iterator[Any]:
    """A Claude Code file's records; of a Remote Control fork seed, one JSON document
    ``{version, parentSessionId, createdAt, messages}``, its messages."""
    for record in records(path):
        if isinstance(record, dict) and "parentSessionId" in record:
            yield from record.get("messages") or []
        else:
            yield record


#: Codex response items that are tool calls, and those that are their outputs.
_CODEX_CALLS = {
    "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
    "image_generation_call", "tool_search_call",
}  # fmt: skip
_CODEX_OUTPUTS = {"function_call_output", "custom_tool_call_output", "tool_search_output"}
#: End events of calls a code-mode script made: no response item holds them.
_CODEX_INNER_ENDS = {"mcp_tool_call_end", "patch_apply_end", "exec_command_end"}


def _codex_header(path: Path) -> dict[str, Any]:
    first = next(records(path), None)
    payload = first.get("payload") if isinstance(first, dict) else None
    return payload if isinstance(payload, dict) and first.get("type") == "session_meta" else {}


def codex(path: Path, _depth: int = 0) -> int:
    """Per rollout: its tool-call response items (bare ones in the mid-2025 layout); outputs
    whose call the file does not hold (the call ran before the file's start); inter-agent mail
    items (one row each); end events (or ``CommandExecution`` items) of code-mode calls (an
    ``exec-`` id held by no response item);
    and, recursively, the rollouts beside it whose ``session_meta`` names this thread as their
    parent."""
    lines = [r for r in records(path) if isinstance(r, dict)]
    items = [r["payload"] for r in lines if r.get("type") == "response_item"]
    if lines and "type" not in lines[0] and {"id", "timestamp"} <= lines[0].keys():
        items = [r for r in lines[1:] if "type" in r]  # mid-2025: bare items after a header
    item_ids = {p.get("call_id") for p in items if isinstance(p, dict)}
    count, calls = 0, set()
    for payload in items:
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind in _CODEX_CALLS:
            count += 1
            calls.add(payload.get("call_id"))
        else:
            orphan = kind in _CODEX_OUTPUTS and payload.get("call_id") not in calls
            count += orphan or kind == "agent_message"
    inner = {
        p.get("call_id")
        for r in lines
        if r.get("type") == "event_msg"
        and isinstance(p := r.get("payload"), dict)
        and p.get("type") in _CODEX_INNER_ENDS
        and str(p.get("call_id")).startswith("exec-")
        and p.get("call_id") not in item_ids
    }
    # Codex 0.171 writes a script's commands only as item_completed CommandExecution items.
    inner |= {
        item.get("id")
        for r in lines
        if r.get("type") == "event_msg"
        and isinstance(p := r.get("payload"), dict)
        and p.get("type") == "item_completed"
        and isinstance(item := p.get("item"), dict)
        and item.get("type") == "CommandExecution"
        and str(item.get("id")).startswith("exec-")
        and item.get("id") not in item_ids
    }
    count += len(inner)
    thread = _codex_header(path).get("id")
    if thread and _depth < 4:
        for other in sorted(path.parent.glob("*.jsonl")):
            source = (_codex_header(other).get("source") or {}) if other != path else {}
            spawn = (source.get("subagent") or {}) if isinstance(source, dict) else {}
            spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
            if isinstance(spawn, dict) and spawn.get("parent_thread_id") == thread:
                count += codex(other, _depth + 1)
    return count


def _gemini_messages(record: Any) -> list[Any]:
    """The messages a Gemini CLI line (or a legacy file) holds: itself, its ``messages``, or the
    ``messages`` of a ``$set`` checkpoint."""
    if not isinstance(record, dict):
        return []
    update = record.get("$set")
    messages = update.get("messages") if isinstance(update, dict) else record.get("messages")
    return messages if isinstance(messages, list) else [record]


def gemini(path: Path) -> int:
    """Distinct call ids of the chat's messages and of its sub-agent sessions
    (``chats/<sessionId>/*.jsonl``): ``toolCalls[].id``, and ``functionCall`` parts of the
    ``content`` (or ``parts``) of messages written in API form. A message rewritten by id, or
    restated by a checkpoint, holds the same ids."""
    ids: set[str] = set()
    session = next(iter(records(path)), None)
    files = [path]
    if isinstance(session, dict) and isinstance(session.get("sessionId"), str):
        files += sorted((path.parent / session["sessionId"]).glob("*.json*"))
    for file in files:
        for record in records(file):
            for message in _gemini_messages(record):
                if not isinstance(message, dict):
                    continue
                content = message.get("content", message.get("parts"))
                for part in content if isinstance(content, list) else []:
                    call = part.get("functionCall") if isinstance(part, dict) else None
                    if isinstance(call, dict):
                        ids.add(str(call.get("id")))
                for call in message.get("toolCalls") or []:
                    if isinstance(call, dict):
                        ids.add(str(call.get("id")))
    return len(ids)


def qwen(path: Path) -> int:
    """Distinct ``functionCall`` part ids of the records, and of the background sub-agents'
    files ``<project>/subagents/<sessionId>/agent-*.jsonl`` (the session file is
    ``<project>/chats/<sessionId>.jsonl``)."""
    ids: set[str] = set()
    files = [path, *sorted((path.parent.parent / "subagents" / path.stem).glob("agent-*.jsonl"))]
    for file in files:
        for record in records(file):
            message = record.get("message") if isinstance(record, dict) else None
            parts = message.get("parts") if isinstance(message, dict) else None
            for part in parts if isinstance(parts, list) else []:
                call = part.get("functionCall") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    ids.add(str(call.get("id")))
    return len(ids)


def gemini_stream_json(path: Path) -> int:
    """Distinct ``tool_id`` of the ``tool_use`` events Gemini CLI's ``--output-format
    stream-json`` prints (a sub-agent's own calls are not printed)."""
    return len(
        {
            str(event.get("tool_id"))
            for event in records(path)
            if isinstance(event, dict) and event.get("type") == "tool_use"
        }
    )


_LIST_KEYS = ("messages", "traj", "trajectory", "history", "conversation", "chat", "items")


def _message_list(path: Path) -> list[Any]:
    """The messages of a message-list file: its lines, its list, or the list a wrapper object
    keeps under one of the usual keys (or the object itself: a request, a response)."""
    values = list(records(path))
    if len(values) == 1 and isinstance(values[0], dict):
        document = values[0]
        if isinstance(document.get("response"), dict):  # a logged call: request, then response
            request = document.get("request", document)
            return [*_message_list_of(request), document["response"]]
        return _message_list_of(document)
    return values


def _message_list_of(document: dict[str, Any]) -> list[Any]:
    lists = [document[k] for k in _LIST_KEYS if isinstance(document.get(k), list)]
    return lists[0] if lists else [document]


def anthropic(path: Path) -> int:
    """``tool_use`` blocks (client, server and MCP tools) of the messages' content lists."""
    kinds = {"tool_use", "server_tool_use", "mcp_tool_use"}
    values = _message_list(path)
    started = [v["content_block"] for v in values if isinstance(v, dict)
               and v.get("type") == "content_block_start"
               and isinstance(v.get("content_block"), dict)]  # fmt: skip
    if started:
        # Raw stream events: each call started once; a request beside them repeats the calls
        # of the responses before it, so calls are counted by id.
        blocks = [*started, *(b for m in values for b in _blocks(m))]
        return len({b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") in kinds})
    return sum(
        isinstance(block, dict) and block.get("type") in kinds
        for message in values
        for block in _blocks(message)
    )


def openai(path: Path) -> int:
    """``tool_calls`` entries and deprecated ``function_call`` objects of assistant messages
    (a ChatCompletion's: of its first choice)."""
    count = 0
    for message in _message_list(path):
        if isinstance(message, dict) and message.get("object") == "chat.completion.chunk":
            # A streamed call's first piece carries its id; the pieces after it do not.
            deltas = [c.get("delta") or {} for c in message["choices"] if c.get("index") == 0]
            count += sum(bool(call.get("id")) for d in deltas for call in d.get("tool_calls") or [])
            continue
        if isinstance(message, dict) and isinstance(message.get("choices"), list):
            message = (message["choices"][:1] or [{}])[0].get("message")
        if isinstance(message, dict):
            count += len(message.get("tool_calls") or []) + isinstance(
                message.get("function_call"), dict
            )
    return count


#: Responses API items that are tool calls, hosted tools included.
_RESPONSES_CALLS = {
    "function_call", "custom_tool_call", "local_shell_call", "computer_call",
    "tool_search_call", "web_search_call", "file_search_call", "code_interpreter_call",
    "image_generation_call", "mcp_call",
}  # fmt: skip


def openai_responses(path: Path) -> int:
    """Call items of the item list, of a request's ``input`` and of a Response's ``output``."""
    count = 0
    values = _message_list(path)
    added = [v["item"] for v in values if isinstance(v, dict)
             and v.get("type") == "response.output_item.added"
             and isinstance(v.get("item"), dict)]  # fmt: skip
    if added:
        # Raw stream events: each item added once (its done event and the terminal Response
        # repeat it).
        return sum(item.get("type") in _RESPONSES_CALLS for item in added)
    for value in values:
        whole = isinstance(value, dict) and "type" not in value  # a Response or a request
        items = (value.get("output") or value.get("input")) if whole else None
        for item in items if isinstance(items, list) else [value]:
            count += isinstance(item, dict) and item.get("type") in _RESPONSES_CALLS
    return count


def cursor(path: Path) -> int:
    """``tool_use`` blocks of the lines' ``message.content``, and of the sub-agent files in
    ``<session>/subagents/`` beside the transcript."""
    files = [path, *sorted((path.parent / "subagents").glob("*.jsonl"))]
    return sum(
        isinstance(block, dict) and block.get("type") == "tool_use"
        for file in files
        for record in records(file)
        if isinstance(record, dict)
        for block in _blocks(record.get("message"))
    )


def cursor_stream(path: Path) -> int:
    """In cursor-agent's ``--output-format stream-json`` (Cursor's "Output format" reference),
    each ``tool_call`` event of subtype ``started`` (its ``completed`` event is the same call)."""
    return sum(
        isinstance(record, dict)
        and record.get("type") == "tool_call"
        and record.get("subtype") == "started"
        for record in records(path)
    )


def sharegpt(path: Path) -> int:
    """The calls of ``function_call`` messages: one ``{name, arguments}`` each, or a list."""
    count = 0
    for row in records(path):
        messages = row.get("conversations") if isinstance(row, dict) else [row]
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and message.get("from") == "function_call":
                try:
                    value = json.loads(message.get("value"))
                except (TypeError, ValueError):
                    value = None
                count += len(value) if isinstance(value, list) else 1
    return count


def llama_factory(path: Path) -> int:
    """The ``tool_call`` parts of the messages of a row (or of a list of messages)."""
    count = 0
    for value in records(path):
        messages = value.get("messages") if isinstance(value, dict) else [value]
        for message in messages if isinstance(messages, list) else []:
            parts = message.get("content") if isinstance(message, dict) else None
            count += sum(
                isinstance(part, dict) and part.get("type") == "tool_call"
                for part in (parts if isinstance(parts, list) else [])
            )
    return count


def openhands_sdk(path: Path) -> int:
    """OpenHands SDK (``kind`` of each event): ``ActionEvent``s but the ``finish`` and ``think``
    tools' (a closing text, a thought), and ``ACPToolCallEvent``s by ``tool_call_id`` (written
    again as the call goes on). A conversation's state file or event file counts every event
    file of its folder, its sub-agents' folders (``subagents/<id>/events/``) included; any other
    file its own events. A ``delegate`` call that runs several agents at once holds an agent
    call for each too."""
    folder = path.parent if path.name == "base_state.json" else path.parent.parent
    if path.name == "base_state.json" or path.parent.name == "events":
        events = [e for f in sorted(folder.rglob("events/event-*.json")) for e in records(f)]
    else:
        events = list(records(path))
    acp = {e.get("tool_call_id") for e in events if e.get("kind") == "ACPToolCallEvent"}
    actions = [e for e in events if e.get("kind") == "ActionEvent"]
    agents = 0
    for action in actions:
        tasks = (
            action.get("action", {}).get("tasks") if action.get("tool_name") == "delegate" else None
        )
        agents += len(tasks) if isinstance(tasks, dict) and len(tasks) > 1 else 0
    return len(acp) + agents + sum(e.get("tool_name") not in ("finish", "think") for e in actions)


COUNTERS: dict[str, Callable[[Path], int]] = {
    "claude-code": claude_code,
    "codex": codex,
    "gemini": gemini,
    "qwen": qwen,
    "gemini-stream-json": gemini_stream_json,
    "anthropic": anthropic,
    "openai": openai,
    "openai-responses": openai_responses,
    "cursor": cursor,
    "cursor-stream-json": cursor_stream,
    "sharegpt": sharegpt,
    "llama-factory": llama_factory,
    "openhands-sdk": openhands_sdk,
}
