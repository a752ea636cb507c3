"""The older Python Kimi CLI (``kimi-cli`` on PyPI, Moonshot AI, archived at 1.52.0): OpenAI Chat
Completions through a ``openai_legacy`` provider of its ``~/.kimi/config.json``,
``--print -p … --output-format stream-json``.

Not registered in :func:`tests.agents.clis._agents`: it is a Python package (Python 3.12+), not
one of the harness's npm CLIs; the fixtures under ``tests/fixtures/kimi/legacy/`` were made
with it (see ``tests/fixtures/kimi/kimi_cli_recipe.py``). 1.52.0's ``kimi`` entry point only
prints a deprecation notice (or runs an installer of the new CLI); its original Typer CLI is
still in the package (``kimi_cli.__main__.run_original_cli``) and is what runs here, as every
release before 1.52.0 ran it.

``telemetry = false`` in the config, ``KIMI_DISABLE_TELEMETRY`` and ``KIMI_CLI_NO_AUTO_UPDATE``
keep it off the network (print mode checks for no update anyway). Each session is a folder
``~/.kimi/sessions/<md5 of the work folder>/<session id>/``: ``context.jsonl`` (the model's
messages), ``wire.jsonl`` (the UI events) and ``state.json``; a sub-agent's are under
``subagents/<agent id>/``. ``-S <id>`` creates the session with that id if there is none, and
resumes it after.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt, Turn
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import chat as wire

MODEL = "fake-model"
#: A sub-agent's last answer shorter than this is sent back for a longer one
#: (``kimi_cli.subagents.runner.SUMMARY_MIN_LENGTH``).
SUMMARY_MIN_LENGTH = 200
#: The original CLI of the package, which 1.52.0's entry point no longer reaches.
RUN = (
    "import sys; from kimi_cli.__main__ import run_original_cli; "
    "sys.exit(run_original_cli(sys.argv[1:]))"
)


def config(base_url: str) -> dict[str, Any]:
    """``~/.kimi/config.json``: one OpenAI-compatible provider at the scripted server, thinking
    on (its ``reasoning_content`` is read as the model's thinking)."""
    return {
        "default_model": "scripted",
        "default_thinking": True,
        "telemetry": False,
        "providers": {
            "scripted": {
                "type": "openai_legacy",
                "base_url": f"{base_url}/v1",
                "api_key": "sk-fake-key",
            }
        },
        "models": {
            "scripted": {
                "provider": "scripted",
                "model": MODEL,
                "max_context_size": 200000,
                "capabilities": ["thinking"],
            }
        },
    }


class KimiCli(Agent):
    name = "kimi-cli"
    package = "kimi-cli"
    binary = "python"
    wire = wire
    loader = "agents.kimi"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: Its stream-json stdout is not read by turnfold.
    stream = None

    def executable(self, bin_dir: Path) -> Path:
        # ``bin_dir`` is the bin folder of a venv where kimi-cli is installed.
        return bin_dir / "python"

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        (home / ".kimi").mkdir(parents=True)
        (home / ".kimi" / "config.json").write_text(json.dumps(config(base_url), indent=1))
        return clean_env(home, {"KIMI_DISABLE_TELEMETRY": "1", "KIMI_CLI_NO_AUTO_UPDATE": "1"})

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        # --print approves every tool call; -S with a new id creates the session under that id.
        return [str(exe), "-c", RUN, "--print", "-p", prompt.text, "-S", session,
                "--output-format", "stream-json"]  # fmt: skip

    def session_id(self, stdout: str) -> str | None:
        return None  # the id given with -S is kept

    def session_files(self, home: Path) -> list[Path]:
        return sorted((home / ".kimi" / "sessions").glob("*/*/context.jsonl"))

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".kimi" / "sessions").glob("*/*/**/*.jsonl"))

    def subagent_turn(self, turn: Turn, last: bool) -> Turn:
        # A short summary would make the CLI ask the sub-agent again, a prompt of its own.
        if last and turn.text and len(turn.text) < SUMMARY_MIN_LENGTH:
            pad = " It ran the one command it was given and saw its word printed."
            return replace(turn, text=turn.text + pad * 4)
        return turn

    def is_side_request(self, request: Request) -> bool:
        return "Shell" not in request.tools

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work = call.params, context.work
        args: dict[str, Any]
        if call.action == "read":
            name, args = "ReadFile", {"path": str(work / p["path"])}
        elif call.action == "search":
            name, args = "Grep", {"pattern": p["pattern"], "path": str(work)}
        elif call.action == "list":
            name, args = "Glob", {"pattern": "*", "directory": str(work / p["path"])}
        elif call.action == "shell":
            name, args = "Shell", {"command": p["command"], "description": "scripted command"}
        elif call.action == "edit":
            name = "StrReplaceFile"
            args = {"path": str(work / p["path"]), "edit": {"old": p["old"], "new": p["new"]}}
        elif call.action == "write":
            name, args = "WriteFile", {"path": str(work / p["path"]), "content": p["content"]}
        elif call.action == "spawn":
            name = "Agent"
            args = {
                "description": "scripted sub-agent",
                "prompt": p["task"],
                "subagent_type": "coder",
                "run_in_background": False,  # the child's answer is the call's result
            }
        else:
            raise ValueError(f"no {call.action} tool")
        return ConcreteCall(call_id, name, args)
