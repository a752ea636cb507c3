"""Codex CLI (``@openai/codex``): OpenAI Responses, ``codex exec``.

Codex has no read, search or list tools: its model does those with ``exec_command`` too, and so
does the script. Edits go through ``apply_patch`` inside ``exec_command``, which Codex intercepts
and applies itself (recording a patch event), as it does for a real model. A sub-agent is
``spawn_agent`` in the ``multi_agent_v1`` namespace, collected with ``wait_agent``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.agents.clis import Agent, StreamTokens, clean_env
from tests.agents.script import Call, ConcreteCall, Prompt
from tests.agents.server import Context
from tests.agents.wire import responses as wire

CONFIG = """\
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
supports_websockets = false
# One retry: the trouble scenario's 500 (Codex retries 5xx, after about 200 ms).
request_max_retries = 1
stream_max_retries = 0

# Without these Codex runs `git ls-remote` against a plugin repository at start.
[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
in_app_updates = false
"""


class Codex(Agent):
    name = "codex"
    package = "@openai/codex"
    binary = "codex"
    wire = wire
    loader = "codex"
    supports = frozenset({"read", "search", "list", "shell", "edit", "write", "spawn", "wait"})
    #: Codex retries a 5xx inside the request (``request_max_retries``) and writes nothing of
    #: it; the error that ends the turn is ``task_complete``'s ``error``, its message the whole
    #: body the API sent.
    records_failures = frozenset({"fatal"})
    interruptible = True
    #: ``turn.completed`` holds the thread's usage since it started (a resumed thread's earlier
    #: runs included, a spawned agent's thread not), and nothing holds a response's or a run's.
    stream = StreamTokens(session_total=wire.COUNTS)

    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        (home / ".codex").mkdir(parents=True)
        (home / ".codex" / "config.toml").write_text(CONFIG.format(base_url=base_url))
        return clean_env(home, {"FAKE_API_KEY": "sk-fake-key", "RUST_LOG": "warn"})

    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        flags = ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        resume = ["resume", session] if index > 0 else []
        return [str(exe), "exec", *flags, *resume, prompt.text]

    def session_files(self, home: Path) -> list[Path]:
        """The rollouts that are not a spawned agent's own (those name their parent)."""
        return [p for p in self.all_files(home) if not _is_child(p)]

    def all_files(self, home: Path) -> list[Path]:
        return sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))

    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        p = call.params
        if call.action == "spawn":
            return ConcreteCall(call_id, "spawn_agent", {"message": p["task"]})
        if call.action == "wait":
            spawned = context.result_of("spawn")
            if spawned is None:
                raise ValueError("wait before the spawn's result came back")
            agent_id = json.loads(spawned.text)["agent_id"]
            return ConcreteCall(call_id, "wait_agent", {"targets": [agent_id], "timeout_ms": 30000})
        command = {
            "read": lambda: f"cat {shlex.quote(p.get('path', ''))}",
            "search": lambda: f"grep -rn {shlex.quote(p.get('pattern', ''))} .",
            "list": lambda: f"ls -la {shlex.quote(p.get('path', '.'))}",
            "shell": lambda: str(p.get("command")),
            "edit": lambda: _patch_update(context.work, p["path"], p["old"], p["new"]),
            "write": lambda: _patch_add(p["path"], p["content"]),
        }[call.action]()
        return ConcreteCall(call_id, "exec_command", {"cmd": command})

    def record_type(self, record: dict[str, Any]) -> str:
        kind = str(record.get("type", "(object)"))
        payload = record.get("payload")
        inner = payload.get("type") if isinstance(payload, dict) else None
        if kind in ("event_msg", "response_item") and isinstance(inner, str):
            return f"{kind}/{inner}"
        return kind


def _patch_update(work: Path, path: str, old: str, new: str) -> str:
    lines = (work / path).read_text().splitlines()
    body = []
    for line in lines:
        if old in line:
            body += [f"-{line}", f"+{line.replace(old, new)}"]
        else:
            body.append(f" {line}")
    patch = "\n".join(["*** Begin Patch", f"*** Update File: {path}", "@@", *body, "*** End Patch"])
    return f"apply_patch <<'PATCH'\n{patch}\nPATCH"


def _patch_add(path: str, content: str) -> str:
    added = [f"+{line}" for line in content.splitlines()]
    patch = "\n".join(["*** Begin Patch", f"*** Add File: {path}", *added, "*** End Patch"])
    return f"apply_patch <<'PATCH'\n{patch}\nPATCH"


def _is_child(path: Path) -> bool:
    try:
        with path.open() as f:
            first = json.loads(f.readline())
    except (OSError, ValueError):
        return False
    source = first.get("payload", {}).get("source")
    return isinstance(source, dict) and "subagent" in source
