"""OpenCode (``opencode-ai``): OpenAI Chat Completions through a custom provider,
``opencode run --format json``.

Since 1.2 OpenCode keeps its sessions in one SQLite database,
``~/.local/share/opencode/opencode.db`` (tables ``session``, ``message``, ``part``: each row's
``data`` a JSON document, the message's or part's fields but its ids); a sub-agent (the ``task``
tool) is a session of its own whose ``parent_id`` is the lead's.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import chat as wire

PROVIDER = "scripted"
MODEL = "fake-model"


def config(base_url: str) -> dict[str, Any]:
    """The ``opencode.json``: one OpenAI-compatible provider at the scripted server, every
    permission granted (a headless run cannot answer a question), nothing shared or updated."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": "sk-fake-key"},
                "models": {
                    MODEL: {"name": "Fake model", "limit": {"context": 200000, "output": 8192}}
                },
            }
        },
        "model": f"{PROVIDER}/{MODEL}",
        "small_model": f"{PROVIDER}/{MODEL}",
        "enabled_providers": [PROVIDER],
        "autoupdate": False,
        "share": "disabled",
        "permission": {"*": "allow", "external_directory": "allow"},
        "lsp": False,
        "formatter": False,
        "plugin": [],
    }


class OpenCode(Agent):
    name = "opencode"
    package = "opencode-ai"
    binary = "opencode"
    wire = wire
    loader = "agents.opencode"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    stream = None

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        folder = home / ".config" / "opencode"
        folder.mkdir(parents=True)
        (folder / "opencode.json").write_text(json.dumps(config(base_url), indent=2))
        return clean_env(
            home,
            {
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_DATA_HOME": str(home / ".local" / "share"),
                "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_STATE_HOME": str(home / ".local" / "state"),
                "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_SHARE": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_CLAUDE_CODE": "1",
                "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
                "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        resume = ["--session", session] if index > 0 else []
        return [str(exe), "run", *resume, "--format", "json", prompt.text]

    def session_id(self, stdout: str) -> str | None:
        for line in stdout.splitlines():
            with contextlib.suppress(ValueError, AttributeError):
                record = json.loads(line)
                if isinstance(record.get("sessionID"), str):
                    return str(record["sessionID"])
        return None

    def database(self, home: Path) -> Path:
        return home / ".local" / "share" / "opencode" / "opencode.db"

    def session_files(self, home: Path) -> list[Path]:
        found = self.database(home)
        return [found] if found.exists() else []

    def is_side_request(self, request: Request) -> bool:
        return "bash" not in request.tools

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work, tools = call.params, context.work, context.request.tools
        args: dict[str, Any]
        if call.action == "read":
            name, args = "read", {"filePath": str(work / p["path"])}
        elif call.action == "search":
            name, args = "grep", {"pattern": p["pattern"], "path": str(work)}
        elif call.action == "list" and "list" in tools:
            name, args = "list", {"path": str(work / p["path"])}
        elif call.action == "list":
            name, args = "glob", {"pattern": "*", "path": str(work / p["path"])}
        elif call.action == "shell":
            # 1.18's bash takes no description (older versions required one).
            name, args = "bash", {"command": p["command"]}
            if "description" in tools.get("bash", {}).get("properties", {}):
                args["description"] = "scripted command"
        elif call.action == "edit":
            name = "edit"
            args = {
                "filePath": str(work / p["path"]),
                "oldString": p["old"],
                "newString": p["new"],
            }
        elif call.action == "write":
            name, args = "write", {"filePath": str(work / p["path"]), "content": p["content"]}
        elif call.action == "spawn":
            name = "task"
            args = {
                "description": "scripted sub-agent",
                "prompt": p["task"],
                "subagent_type": "general",
            }
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)

    def records(self, path: Path) -> Iterator[dict[str, Any]]:
        """The message and part documents of the database."""
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            for table in ("message", "part"):
                for (data,) in db.execute(f"SELECT data FROM {table}"):
                    with contextlib.suppress(ValueError):
                        record = json.loads(data)
                        if isinstance(record, dict):
                            yield record

    def record_type(self, record: dict[str, Any]) -> str:
        return str(record.get("type") or record.get("role") or "(object)")
