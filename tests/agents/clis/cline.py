"""Cline CLI (``cline``, on ``@cline/core``): Anthropic Messages, ``cline --json``.

A session is a folder ``~/.cline/data/sessions/<sessionId>/`` holding ``<sessionId>.messages.json``
(one JSON document), the manifest ``<sessionId>.json`` and each sub-agent's
``<agentId>.messages.json``. Its batch tools answer with ``ToolOperationResult`` lists whose
``query`` echoes the call's argument (the path read, the command run).
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import SeenResult
from tests.agents.wire import anthropic as wire

#: A model of the CLI's own catalogue for ``anthropic`` (its context window, its prices).
MODEL = "claude-sonnet-4-6"
MESSAGES = ".messages.json"


class Cline(Agent):
    name = "cline"
    package = "cline"
    binary = "cline"
    wire = wire
    loader = "agents.cline_messages"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: Cline retries in the SDK and writes the retry only to ``cline.log``; the error that ends
    #: the turn is a display-only assistant message (``metadata.displayRole: "error"``).
    records_failures = frozenset({"fatal"})
    #: Ctrl-C aborts the command; its result says so and the manifest's status is "cancelled".
    interruptible = True
    #: ``--id <session>`` resumes a session in the terminal UI only: with it the CLI drops the
    #: prompt and refuses ``--json`` ("JSON output mode requires a prompt argument").
    resumable = False
    #: ``--json`` prints the runtime's own events (``agent_event``, ``hook_event``,
    #: ``run_result``; the ``cline-json`` format): each model call's ``usage`` event has every
    #: count, the sub-agent's too (its events are printed with the lead's), and ``run_result``
    #: the lead's own total, without the sub-agent's.
    stream = StreamTokens(responses=wire.COUNTS, subagent=wire.COUNTS, run_total=wire.COUNTS)

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        settings = home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True)
        provider = {
            "provider": "anthropic",
            "apiKey": "sk-fake-key",
            "model": MODEL,
            "baseUrl": f"{base_url}/v1",
        }
        providers = {
            "version": 1,
            "lastUsedProvider": "anthropic",
            "providers": {
                "anthropic": {
                    "settings": provider,
                    "updatedAt": "2026-01-01T00:00:00.000Z",
                    "tokenSource": "manual",
                }
            },
        }
        (settings / "providers.json").write_text(json.dumps(providers, indent=2))
        (settings / "global-settings.json").write_text(
            json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}, indent=2)
        )
        return clean_env(
            home,
            {
                "CLINE_NO_AUTO_UPDATE": "1",
                # The default ("auto") starts a detached hub daemon that outlives the run.
                "CLINE_SESSION_BACKEND_MODE": "local",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        return [str(exe), "--json", "-P", "anthropic", "-m", MODEL, prompt.text]

    def session_files(self, home: Path) -> list[Path]:
        """Each session's own messages file (its sub-agents' are named by their agent ids)."""
        return [p for p in self.all_files(home) if p.name == p.parent.name + MESSAGES]

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".cline" / "data" / "sessions").glob(f"*/*{MESSAGES}"))

    def returned(self, result: SeenResult) -> str:
        """The operations' results and errors, without the ``query`` each echoes."""
        with contextlib.suppress(ValueError):
            returned = json.loads(result.text)
            operations = returned if isinstance(returned, list) else [returned]
            if all(isinstance(o, dict) and "query" in o for o in operations):
                return json.dumps([{k: o[k] for k in o if k != "query"} for o in operations])
        return result.text

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work = call.params, context.work
        args: dict[str, Any]
        if call.action == "read":
            name, args = "read_files", {"files": [{"path": str(work / p["path"])}]}
        elif call.action == "search":
            name, args = "search_codebase", {"queries": [p["pattern"]]}
        elif call.action in ("list", "shell"):
            # No tool lists a folder: the model lists with a command.
            command = f"ls -la {shlex.quote(p['path'])}" if call.action == "list" else p["command"]
            name, args = "run_commands", {"commands": [command]}
        elif call.action == "edit":
            name = "editor"
            args = {"path": str(work / p["path"]), "old_text": p["old"], "new_text": p["new"]}
        elif call.action == "write":  # the editor creates a file that is missing
            name, args = "editor", {"path": str(work / p["path"]), "new_text": p["content"]}
        elif call.action == "spawn":
            name = "spawn_agent"
            args = {"systemPrompt": "You are a scripted sub-agent.", "task": p["task"]}
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)

    def records(self, path: Path) -> Iterator[dict[str, Any]]:
        """The messages of a messages file (one JSON document, not lines)."""
        with contextlib.suppress(OSError, ValueError):
            document = json.loads(path.read_text(errors="replace"))
            messages = document.get("messages") if isinstance(document, dict) else None
            yield from (m for m in messages or [] if isinstance(m, dict))

    def record_type(self, record: dict[str, Any]) -> str:
        """A message's role, as the loader's catalogue names it."""
        return str(record.get("role", "(object)"))
