"""OpenCode (``opencode-ai``): OpenAI Chat Completions through a custom provider,
``opencode run --format json``.

Since 1.2 OpenCode keeps its sessions in one SQLite database,
``~/.local/share/opencode/opencode.db`` (tables ``session``, ``message``, ``part``: each row's
``data`` a JSON document, the message's or part's fields but its ids); a sub-agent (the ``task``
tool) is a session of its own whose ``parent_id`` is the lead's.

Two things its results do not tell the model, and so the harness: a command's exit code (the
result is its output alone; the tool part keeps the code in ``state.metadata.exit``), and the
start of a long output (the result keeps its tail, the whole saved to a file it names).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, clean_env
from tests.agents.scenarios import LONG_OUTPUT, LONG_OUTPUT_LAST
from tests.agents.script import Call, ConcreteCall, Prompt, Scenario
from tests.agents.server import Context
from tests.agents.wire import Request, SeenResult
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
    #: OpenCode shows a retry only as the session's live status, never stored; the error that
    #: ends the turn is the assistant message's ``error``.
    records_failures = frozenset({"fatal"})
    #: A SIGINT stops ``run`` before it records anything of the running step: the command's
    #: part stays ``running``, the step has no ``step-finish`` and the message no tokens.
    interruptible = False
    #: Each step's ``step_finish`` carries its response's counts; the sub-agent's steps are
    #: not printed, and nothing totals the run or the session.
    stream = StreamTokens(responses=wire.COUNTS)

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
        # One argument a word: ``run`` joins its arguments with spaces, one holding a space
        # put in double quotes (``"a b"``), and that quoted text would be the prompt.
        words = prompt.text.split(" ")
        return [str(exe), "run", *resume, "--format", "json", "--", *words]

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

    def adapt(self, scenario: Scenario) -> Scenario:
        """The long output's result keeps its tail: its check looks for the last line."""
        adapted = super().adapt(scenario)

        def tail(call: Call) -> Call:
            return replace(call, token=LONG_OUTPUT_LAST) if call == LONG_OUTPUT else call

        prompts = tuple(
            replace(p, turns=tuple(replace(t, calls=tuple(map(tail, t.calls))) for t in p.turns))
            for p in adapted.prompts
        )
        return replace(adapted, prompts=prompts)

    def failed(self, result: SeenResult, home: Path) -> bool:
        """The tool part's own outcome: its status ``error``, or a command's non-zero exit
        (``metadata.exit``), which the result the model got does not mention."""
        if super().failed(result, home):
            return True
        database = self.database(home)
        parts = self.records(database) if database.exists() else iter(())
        for part in parts:
            if part.get("type") == "tool" and part.get("callID") == result.call_id:
                state = part.get("state") or {}
                exit_code = (state.get("metadata") or {}).get("exit")
                return state.get("status") == "error" or exit_code not in (None, 0)
        return False

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
        """The session rows (their columns), and the message and part documents."""
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            db.row_factory = sqlite3.Row
            for row in db.execute("SELECT * FROM session"):
                yield dict(row)
            for table in ("message", "part"):
                for (data,) in db.execute(f"SELECT data FROM {table}"):
                    with contextlib.suppress(ValueError):
                        record = json.loads(data)
                        if isinstance(record, dict):
                            yield record

    def record_type(self, record: dict[str, Any]) -> str:
        """As the loader's accounting names them: ``session``, ``message/<role>``,
        ``part/<type>`` (a session row is told by its ``project_id`` column)."""
        if "project_id" in record:
            return "session"
        if "role" in record:
            return f"message/{record['role']}"
        return f"part/{record.get('type', '(object)')}"
