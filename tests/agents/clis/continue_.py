"""Continue CLI (``@continuedev/cli``, command ``cn``): OpenAI Chat Completions through a local
``config.yaml`` model (``provider: openai``, ``apiBase`` the scripted server), ``cn -p --auto``.
The fixture recipe (``tests/fixtures/continue/continue_recipe.py``) plays it too.

Continue keeps each session as one JSON document, ``~/.continue/sessions/<sessionId>.json``
(``sessionId``, ``title``, ``workspaceDirectory``, ``history`` of chat-history items, ``usage``),
with a ``sessions.json`` index beside it. ``--resume`` takes the newest session file.

What 1.5.47 does not do, and so the harness does not ask: keep a Chat Completions response's
``reasoning_content`` (its stream handler reads ``content`` and ``tool_calls`` alone: the
scripted model sends no thinking), run the beta ``Subagent`` tool headless (its call fails with
"No active session found": no sub-agent), and save anything of a step a SIGINT stops (the session
file is written when a step ends: not interruptible). A failed command's result is its stderr and
exit code, not its stdout; a long output keeps its tail.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, clean_env
from tests.agents.scenarios import LONG_OUTPUT, LONG_OUTPUT_LAST
from tests.agents.script import Call, ConcreteCall, Prompt, Scenario, Turn
from tests.agents.server import Context
from tests.agents.wire import Request, SeenResult
from tests.agents.wire import chat as wire

MODEL = "fake-model"


def config(base_url: str) -> str:
    """The ``config.yaml``: the scripted model, for chat."""
    model = {
        "name": "Fake model",
        "provider": "openai",
        "model": MODEL,
        "apiBase": f"{base_url}/v1",
        "apiKey": "sk-fake-key",
        "roles": ["chat"],
        "capabilities": ["tool_use"],
    }
    document = {"name": "scripted", "version": "0.0.1", "schema": "v1", "models": [model]}
    # JSON is YAML: no YAML writer needed.
    return json.dumps(document, indent=2)


class Continue(Agent):
    name = "continue"
    package = "@continuedev/cli"
    binary = "cn"
    wire = wire
    loader = "agents.continue_"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write"})
    #: A fatal API error ends ``cn -p`` before it saves the session: no file (as after a
    #: SIGINT).
    records_failures = None
    #: A SIGINT while a command runs ends ``cn`` before it saves: no session file at all.
    interruptible = False
    #: ``-p`` prints the last answer's text, no JSON events and no token counts: turnfold has
    #: no stream to read (the run's stdout is kept, not checked).
    stream = None
    config_file = Path("config.yaml")

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        folder = home / ".continue"
        folder.mkdir(parents=True)
        # A local config: without one ``cn`` asks to log in to the hub.
        self.config_file = folder / "config.yaml"
        self.config_file.write_text(config(base_url))
        return clean_env(
            home,
            {
                "CONTINUE_GLOBAL_DIR": str(folder),
                "CONTINUE_CLI_ENABLE_TELEMETRY": "0",
                "CONTINUE_METRICS_ENABLED": "0",
                # Tells the update check it has just updated: no second update.
                "CONTINUE_CLI_AUTO_UPDATED": "true",
                "FORCE_NO_TTY": "1",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        resume = ["--resume"] if index > 0 else []
        return [
            str(exe),
            "-p",
            prompt.text,
            *resume,
            "--config",
            str(self.config_file),
            "--auto",
        ]

    def session_id(self, stdout: str) -> str | None:
        return None  # ``--resume`` takes the newest session: no id to pass

    def session_files(self, home: Path) -> list[Path]:
        folder = home / ".continue" / "sessions"
        return sorted(p for p in folder.glob("*.json") if p.name != "sessions.json")

    def adapt(self, scenario: Scenario) -> Scenario:
        """No thinking (the CLI drops ``reasoning_content``: the model sends none); a failed
        command's check looks for its stderr, a long output's for its last line."""
        adapted = super().adapt(scenario)

        def seen(call: Call) -> Call:
            if call == LONG_OUTPUT:
                return replace(call, token=LONG_OUTPUT_LAST)
            if call.outcome == "fail":
                return replace(call, token="/tf-missing")
            return call

        def turn(t: Turn) -> Turn:
            return replace(t, thinking=None, calls=tuple(map(seen, t.calls)))

        prompts = tuple(
            replace(p, turns=tuple(turn(t) for t in p.turns if t.text or t.calls or t.failure))
            for p in adapted.prompts
        )
        return replace(adapted, prompts=prompts)

    def failed(self, result: SeenResult, home: Path) -> bool:
        """The CLI's own mark of a tool that threw, "Error executing tool <name>: ..." (a
        command's: "Error (exit code 3): <stderr>"), which it saves as the status ``errored``.
        A command that exits non-zero with nothing on stderr is no error to it: its result is
        the output alone, ``done``."""
        return result.text.startswith("Error executing tool ")

    def is_side_request(self, request: Request) -> bool:
        return "Bash" not in request.tools

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work = call.params, context.work
        args: dict[str, Any]
        if call.action == "read":
            name, args = "Read", {"filepath": str(work / p["path"])}
        elif call.action == "search":
            name, args = "Search", {"pattern": p["pattern"], "path": str(work)}
        elif call.action == "list":
            name, args = "List", {"dirpath": str(work / p["path"])}
        elif call.action == "shell":
            name, args = "Bash", {"command": p["command"]}
        elif call.action == "edit":
            name = "Edit"
            args = {
                "file_path": str(work / p["path"]),
                "old_string": p["old"],
                "new_string": p["new"],
            }
        elif call.action == "write":
            name, args = "Write", {"filepath": str(work / p["path"]), "content": p["content"]}
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)

    def records(self, path: Path) -> Iterator[dict[str, Any]]:
        """The session document and its history items. The ``sessions.json`` index beside them
        is no session file (turnfold reads none of it): the drift report leaves it out."""
        document = json.loads(path.read_text())
        yield document
        for item in document.get("history") or []:
            if isinstance(item, dict):
                yield item

    def record_type(self, record: dict[str, Any]) -> str:
        """As the loader's accounting names them: ``session``, ``item/<role>``."""
        if "history" in record:
            return "session"
        message = record.get("message")
        return f"item/{message.get('role')}" if isinstance(message, dict) else "(object)"
