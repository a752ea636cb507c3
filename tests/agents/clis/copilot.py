"""GitHub Copilot CLI (``@github/copilot``): OpenAI Chat Completions through its own-key
provider (BYOK), ``copilot -p --output-format json``.

BYOK needs no GitHub sign-in: ``COPILOT_PROVIDER_BASE_URL`` and ``COPILOT_MODEL`` name the
endpoint and model, and ``COPILOT_OFFLINE`` turns off every other use of the network (sign-in,
telemetry, web tools, the GitHub MCP server, updates), as ``copilot help environment`` says.
Each session is a folder ``~/.copilot/session-state/<sessionId>/`` whose ``events.jsonl`` holds
every event, sub-agents' included. ``--session-id`` sets a new session's id and resumes it later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import chat as wire

MODEL = "fake-model"


class Copilot(Agent):
    name = "copilot"
    package = "@github/copilot"
    binary = "copilot"
    wire = wire
    loader = "agents.copilot"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: Copilot CLI retries without writing it; the error that ends the turn is
    #: ``session.error``.
    records_failures = frozenset({"fatal"})
    #: A SIGINT leaves the running call without its completion and an ``abort`` event.
    interruptible = True
    #: The ``--output-format json`` stream (read as the ``copilot`` format, as its session file
    #: is) carries no token counts: its usage events are written to ``events.jsonl`` only.
    stream = StreamTokens()

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        return clean_env(
            home,
            {
                "COPILOT_PROVIDER_BASE_URL": f"{base_url}/v1",
                "COPILOT_PROVIDER_TYPE": "openai",
                "COPILOT_PROVIDER_API_KEY": "sk-fake-key",
                "COPILOT_MODEL": MODEL,
                "COPILOT_OFFLINE": "true",
                "COPILOT_AUTO_UPDATE": "false",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        session_flag = ["--session-id", session] if index == 0 else ["--resume", session]
        return [
            str(exe),
            "-p",
            prompt.text,
            *session_flag,
            "--output-format",
            "json",
            "--allow-all",
            "--no-auto-update",
            "--disable-client-telemetry",
            "--no-ask-user",
            "--no-custom-instructions",
        ]

    def session_files(self, home: Path) -> list[Path]:
        return sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"))

    def is_side_request(self, request: Request) -> bool:
        return "bash" not in request.tools

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work = call.params, context.work
        args: dict[str, Any]
        if call.action == "read":
            name, args = "view", {"path": str(work / p["path"])}
        elif call.action == "search":
            name, args = "grep", {"pattern": p["pattern"], "paths": str(work)}
        elif call.action == "list":  # view lists a folder
            name, args = "view", {"path": str(work / p["path"])}
        elif call.action == "shell":
            name, args = "bash", {"command": p["command"], "description": "scripted command"}
        elif call.action == "edit":
            name = "edit"
            args = {"path": str(work / p["path"]), "old_str": p["old"], "new_str": p["new"]}
        elif call.action == "write":
            name, args = "create", {"path": str(work / p["path"]), "file_text": p["content"]}
        elif call.action == "spawn":
            name = "task"
            args = {
                "name": "scripted",
                "description": "scripted sub-agent",
                "prompt": p["task"],
                "agent_type": "general-purpose",
                "mode": "sync",  # the child's answer is the call's result
            }
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)
