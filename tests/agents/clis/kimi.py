"""Kimi Code CLI (``@moonshot-ai/kimi-code``, Moonshot AI): OpenAI Chat Completions through its
environment-configured model, ``kimi -p … --output-format stream-json``.

Not registered in :func:`tests.agents.clis._agents`: it needs Node >= 22.19 (``zlib``'s
``createZstdDecompress``), which the harness's pinned Node does not give; the fixtures under
``tests/fixtures/kimi/`` were made with it run from a Node 22 binary (see their README).

``KIMI_MODEL_NAME``, ``KIMI_MODEL_API_KEY``, ``KIMI_MODEL_PROVIDER_TYPE`` and
``KIMI_MODEL_BASE_URL`` name the model without any ``config.toml`` or sign-in;
``KIMI_DISABLE_TELEMETRY`` and ``KIMI_CODE_NO_AUTO_UPDATE`` turn off the rest of its network use.
Each session is a folder ``~/.kimi-code/sessions/<workdir key>/<session id>/`` holding
``state.json`` and one ``agents/<agent id>/wire.jsonl`` per agent (``main`` and each sub-agent);
``-S <id>`` resumes it, the id printed in the first run's ``session.resume_hint`` line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import Request
from tests.agents.wire import chat as wire

MODEL = "fake-model"
#: A Node >= 22.19 to run it with (the harness's own is older); ``node`` on PATH where unset.
NODE_ENV = "TURNFOLD_KIMI_NODE"


class Kimi(Agent):
    name = "kimi"
    package = "@moonshot-ai/kimi-code"
    binary = "kimi"
    wire = wire
    loader = "agents.kimi"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: Its stream-json stdout is not read by turnfold.
    stream = None

    def executable(self, bin_dir: Path) -> Path:
        # The bin shim is `#!/usr/bin/env node`: run its script with the Node given instead.
        return bin_dir.parent / "@moonshot-ai" / "kimi-code" / "dist" / "main.mjs"

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        return clean_env(
            home,
            {
                "KIMI_MODEL_NAME": MODEL,
                "KIMI_MODEL_API_KEY": "sk-fake-key",
                "KIMI_MODEL_PROVIDER_TYPE": "openai",
                "KIMI_MODEL_BASE_URL": f"{base_url}/v1",
                "KIMI_DISABLE_TELEMETRY": "1",
                "KIMI_CODE_NO_AUTO_UPDATE": "1",
            },
        )

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        node = os.environ.get(NODE_ENV, "node")
        resume = ["-S", session] if index > 0 else []
        # -p runs tools without asking (--auto and --yolo are refused beside it).
        return [node, str(exe), "-p", prompt.text, *resume, "--output-format", "stream-json"]

    def session_files(self, home: Path) -> list[Path]:
        return sorted((home / ".kimi-code" / "sessions").glob("*/*/agents/main/wire.jsonl"))

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".kimi-code" / "sessions").glob("*/*/agents/*/wire.jsonl"))

    def is_side_request(self, request: Request) -> bool:
        return "Bash" not in request.tools

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p, work = call.params, context.work
        args: dict[str, Any]
        if call.action == "read":
            name, args = "Read", {"path": str(work / p["path"])}
        elif call.action == "search":
            name, args = "Grep", {"pattern": p["pattern"], "path": str(work)}
        elif call.action == "list":  # Glob lists files (never folders)
            name, args = "Glob", {"pattern": "*", "path": str(work / p["path"])}
        elif call.action == "shell":
            name, args = "Bash", {"command": p["command"]}
        elif call.action == "edit":
            name = "Edit"
            args = {"path": str(work / p["path"]), "old_string": p["old"], "new_string": p["new"]}
        elif call.action == "write":
            name, args = "Write", {"path": str(work / p["path"]), "content": p["content"]}
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
