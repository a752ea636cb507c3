"""Gemini CLI (``@google/gemini-cli``): Gemini ``streamGenerateContent``, ``gemini -p``.

A sub-agent (``invoke_agent`` of the ``generalist``) must end with ``complete_task``; any other
ending makes it retry about twenty times, so the sub-agent's closing text becomes that call.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt, Turn
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import gemini as wire

SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


class Gemini(Agent):
    name = "gemini"
    package = "@google/gemini-cli"
    binary = "gemini"
    wire = wire
    loader = "gemini"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: Gemini CLI writes no API error into its session file, retried or not: the failed turn
    #: leaves the file at the last result (the error goes to a ``gemini-client-error-*.json``
    #: report in its temp folder), and ``-p`` exits 144.
    records_failures = frozenset()
    #: A model message's ``toolCalls`` are written only once the calls finish: after a SIGINT
    #: during one the file holds an empty model message, nothing a loader could show.
    interruptible = False
    #: Only the run's total (``result.stats``), its sub-agents' requests included; its output
    #: counts the thoughts too, which it does not count apart.
    stream = StreamTokens(
        run_total=frozenset({"input_tokens", "output_tokens", "cache_read_tokens"}),
        run_total_subagents=True,
    )

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        (home / ".gemini").mkdir(parents=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
        return clean_env(
            home,
            {
                "GEMINI_API_KEY": "fake-key",
                "GOOGLE_GEMINI_BASE_URL": base_url,  # also switches the auth to a gateway
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
                # No second node process for a larger heap: it costs seconds per run.
                "GEMINI_CLI_NO_RELAUNCH": "true",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        where = ["--session-id", session] if index == 0 else ["--resume", "latest"]
        flags = ["-m", "fake-model", "--output-format", "stream-json", "--yolo", "--skip-trust"]
        return [str(exe), "-p", prompt.text, *where, *flags]

    def session_files(self, home: Path) -> list[Path]:
        return sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".gemini" / "tmp").glob("*/chats/**/*.jsonl"))

    def is_side_request(self, request: Request) -> bool:
        return "run_shell_command" not in request.tools

    def subagent_turn(self, turn: Turn, last: bool) -> Turn:
        if not last or turn.calls:
            return turn
        finish = Call("finish", {"response": turn.text or ""})
        return replace(turn, text=None, calls=(finish,))

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work = call.params, context.work
        args: dict[str, Any]
        if call.action == "read":
            name, args = "read_file", {"file_path": str(work / p["path"])}
        elif call.action == "search":
            name, args = "grep_search", {"pattern": p["pattern"], "dir_path": str(work)}
        elif call.action == "list":
            name, args = "list_directory", {"dir_path": str(work / p["path"])}
        elif call.action == "shell":
            name, args = "run_shell_command", {"command": p["command"], "description": "scripted"}
        elif call.action == "edit":
            name = "replace"
            args = {
                "file_path": str(work / p["path"]),
                "old_string": p["old"],
                "new_string": p["new"],
                "instruction": "scripted edit",
            }
        elif call.action == "write":
            name, args = "write_file", {"file_path": str(work / p["path"]), "content": p["content"]}
        elif call.action == "spawn":
            name, args = "invoke_agent", {"agent_name": "generalist", "prompt": p["task"]}
        elif call.action == "finish":
            name, args = "complete_task", {"result": {"response": p["response"]}}
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)

    def record_type(self, record: dict[str, Any]) -> str:
        if "$set" in record:
            return "$set/messages" if "messages" in record["$set"] else "$set"
        if "type" in record:
            return str(record["type"])
        return "metadata" if "sessionId" in record else "(object)"
