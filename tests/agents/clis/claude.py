"""Claude Code (``@anthropic-ai/claude-code``): Anthropic Messages, ``claude -p``."""

from __future__ import annotations

import contextlib
import json
import shlex
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, StreamWritten, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import anthropic as wire

#: The counts a message of the stdout stream carries as the response had them.
INPUT_COUNTS = frozenset({"input_tokens", "cache_read_tokens", "cache_write_tokens"})
#: Their names in a message's ``usage`` (its ``output_tokens`` is ``message_start``'s, 1).
_WIRE_INPUTS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class Claude(Agent):
    name = "claude"
    package = "@anthropic-ai/claude-code"
    binary = "claude"
    wire = wire
    loader = "claude_code"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    interruptible = True
    #: Each message is written as the API's ``message_start`` gave it: its output count is
    #: the start's (1), not the response's; the ``result`` holds the run's own total. A
    #: sub-agent's last message is not printed (its call's result holds its text).
    stream = StreamTokens(responses=INPUT_COUNTS, subagent=INPUT_COUNTS, run_total=wire.COUNTS)

    def stream_wrote(self, stdout: str) -> StreamWritten:
        """Where the SIGINT lands decides what the CLI wrote: after the response was counted,
        its message and a ``result`` holding it; while the response streamed, its message (or
        none yet) and either no ``result`` at all (the CLI exits 0) or one whose ``usage`` is
        all zeros, its sum over no response counted, which is no total."""
        counts: set[int] = set()
        total = False
        for line in stdout.splitlines():
            event: Any = None
            with contextlib.suppress(ValueError):
                event = json.loads(line)
            if not isinstance(event, dict):
                continue
            message = event.get("message")
            usage = message.get("usage") if isinstance(message, dict) else event.get("usage")
            if not isinstance(usage, dict):
                continue
            if event.get("type") == "assistant" and event.get("parent_tool_use_id") is None:
                counts.update(v for k in _WIRE_INPUTS if type(v := usage.get(k)) is int)
            elif event.get("type") == "result":
                total = total or any(type(v) is int and v for v in usage.values())
        return StreamWritten(frozenset(counts), total)

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        return clean_env(
            home,
            {
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "sk-fake-key",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_BUG_COMMAND": "1",
                "CLAUDE_CODE_MAX_RETRIES": "1",  # the trouble scenario's overload: one retry
                "IS_SANDBOX": "1",  # needed as root with --dangerously-skip-permissions
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        where = ["--session-id", session] if index == 0 else ["--resume", session]
        return [
            str(exe),
            "-p",
            prompt.text,
            *where,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ]

    def session_files(self, home: Path) -> list[Path]:
        return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".claude" / "projects").rglob("*.jsonl"))

    def is_side_request(self, request: Request) -> bool:
        return "Bash" not in request.tools

    def call_id(self, thread: str, step: int, index: int) -> str:
        return "toolu_" + super().call_id(thread, step, index).removeprefix("call_")

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work, tools = call.params, context.work, context.request.tools
        args: dict[str, Any]
        if call.action == "read":
            name, args = "Read", {"file_path": str(work / p["path"])}
        elif call.action == "search" and "Grep" in tools:
            name, args = "Grep", {"pattern": p["pattern"], "path": str(work)}
        elif call.action == "list" and "Glob" in tools:
            name, args = "Glob", {"pattern": "*", "path": str(work / p["path"])}
        elif call.action in ("search", "list", "shell"):
            # Since 2.1.2xx there is no Grep or Glob: the model greps and lists with Bash.
            command = {
                "search": lambda: f"grep -rn {shlex.quote(p.get('pattern', ''))} .",
                "list": lambda: f"ls -la {shlex.quote(p.get('path', '.'))}",
                "shell": lambda: str(p.get("command")),
            }[call.action]()
            name, args = "Bash", {"command": command, "description": "scripted command"}
        elif call.action == "edit":
            name = "Edit"
            args = {
                "file_path": str(work / p["path"]),
                "old_string": p["old"],
                "new_string": p["new"],
            }
        elif call.action == "write":
            name, args = "Write", {"file_path": str(work / p["path"]), "content": p["content"]}
        elif call.action == "spawn":
            name = "Agent" if "Agent" in context.request.tools else "Task"
            args = {
                "description": "scripted sub-agent",
                "prompt": p["task"],
                "subagent_type": "general-purpose",
            }
            if "run_in_background" in context.request.tools[name].get("properties", {}):
                args["run_in_background"] = False
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)

    def record_type(self, record: dict[str, Any]) -> str:
        kind = str(record.get("type", "(object)"))
        inner = {
            "system": record.get("subtype"),
            "attachment": (record.get("attachment") or {}).get("type"),
            "progress": (record.get("data") or {}).get("type"),
        }.get(kind)
        return f"{kind}/{inner}" if isinstance(inner, str) else kind
