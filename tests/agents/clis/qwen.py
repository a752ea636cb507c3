"""Qwen Code (``@qwen-code/qwen-code``): OpenAI Chat Completions, ``qwen -p``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import chat as wire

SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "model": {"name": "fake-model"},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


class Qwen(Agent):
    name = "qwen"
    package = "@qwen-code/qwen-code"
    binary = "qwen"
    wire = wire
    loader = "qwen"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: The OpenAI SDK retries a 5xx inside the request and Qwen Code writes nothing of it; the
    #: error that ends the turn is only in a ``ui_telemetry`` record (``qwen-code.api_error``)
    #: in ``-p`` mode.
    records_failures = frozenset({"fatal"})
    interruptible = True
    #: Each response's own counts but its reasoning; a sub-agent's messages carry none; the
    #: ``result`` holds the session's so far, in its own names (input and output read alike).
    stream = StreamTokens(
        responses=frozenset({"input_tokens", "output_tokens", "cache_read_tokens"}),
        session_total=frozenset({"input_tokens", "output_tokens"}),
        session_total_subagents=True,
    )

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        (home / ".qwen").mkdir(parents=True)
        (home / ".qwen" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
        return clean_env(
            home,
            {
                "OPENAI_BASE_URL": f"{base_url}/v1",
                "OPENAI_API_KEY": "sk-fake-key",
                "OPENAI_MODEL": "fake-model",
                # No second node process for a larger heap: it costs seconds per run.
                "QWEN_CODE_NO_RELAUNCH": "true",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        resume = ["--resume", session] if index > 0 else []
        return [str(exe), "-p", prompt.text, *resume, "--output-format", "stream-json", "--yolo"]

    def session_files(self, home: Path) -> list[Path]:
        return sorted((home / ".qwen" / "projects").glob("*/chats/*.jsonl"))

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".qwen" / "projects").rglob("*.jsonl"))

    def is_side_request(self, request: Request) -> bool:
        return "run_shell_command" not in request.tools

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work, tools = call.params, context.work, context.request.tools
        args: dict[str, Any]
        if call.action == "read":
            name, args = "read_file", {"file_path": str(work / p["path"])}
        elif call.action == "search":
            name, args = "grep_search", {"pattern": p["pattern"], "path": str(work)}
        elif call.action == "list" and "list_directory" in tools:
            name, args = "list_directory", {"path": str(work / p["path"])}
        elif call.action == "list":  # list_directory is off by default since 0.2x: glob lists
            name, args = "glob", {"pattern": "*", "path": str(work / p["path"])}
        elif call.action == "shell":
            name = "run_shell_command"
            args = {
                # Qwen Code 0.24.4 settles a command on the child's "exit" event, which a busy
                # machine delivers before the output still in the pipe: the tool then returns
                # "Output: (empty)" (twice running in CI, so a second play did not save it). A
                # command that stays a second after it prints (whichever way it ends, `exit 3`
                # too) has its output read before it exits.
                "command": f"trap 'sleep 1' EXIT; {p['command']}",
                "description": "scripted command",
                "is_background": False,
            }
        elif call.action == "edit":
            name = "edit"
            args = {
                "file_path": str(work / p["path"]),
                "old_string": p["old"],
                "new_string": p["new"],
            }
        elif call.action == "write":
            name, args = "write_file", {"file_path": str(work / p["path"]), "content": p["content"]}
        elif call.action == "spawn":
            name = "agent"
            args = {
                "description": "scripted sub-agent",
                "prompt": p["task"],
                "subagent_type": "general-purpose",
            }
            if "run_in_background" in tools["agent"].get("properties", {}):
                args["run_in_background"] = False  # the default (true) returns before the child
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)

    def record_type(self, record: dict[str, Any]) -> str:
        kind = str(record.get("type", "(object)"))
        subtype = record.get("subtype")
        return f"{kind}/{subtype}" if isinstance(subtype, str) else kind
