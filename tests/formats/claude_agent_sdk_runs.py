"""Runs of the real Claude Agent SDK, offline, for the "claude-agent-sdk" format (issue 22).

``query()`` runs over a scripted ``Transport`` (the SDK's own transport interface, documented
as unstable; recipe in ``shared/notes/agent-frameworks.md`` §4): the transport answers the
SDK's control requests and, when the prompt is written, plays the stream-json lines the
``claude`` CLI prints for such a run, which the SDK's own parser
(``claude_agent_sdk._internal.message_parser``) turns into its message dataclasses. No CLI,
no model, no network.

The run: the model thinks and calls ``mcp__calc__add`` (succeeds) in one API message that
the CLI splits into two ``assistant`` events with the same message id and the
``message_start`` usage (the pitfall the notes describe), runs ``Bash false`` (fails:
``is_error``), delegates to a ``general-purpose`` sub-agent through the ``Agent`` tool (the
sub-agent's messages carry ``parent_tool_use_id``; it runs ``Glob``), and answers; the
``result`` message holds the totals. With ``partial=True`` the stream also has the
``stream_event`` deltas that ``include_partial_messages=True`` asks for.

``python tests/formats/claude_agent_sdk_runs.py`` rewrites the fixture under
``tests/fixtures/frameworks/claude-agent-sdk/``: the messages ``query()`` yielded, each saved
with ``dataclasses.asdict`` (the only serialization the SDK's types have). With
``--cli <fake_anthropic.py>``, run inside ``unshare -n`` (no network but loopback), it also
runs the ``claude`` CLI bundled in the SDK's wheel (2.1.332) against that scripted fake
Anthropic API on 127.0.0.1 (:func:`cli_run`) and saves those messages the same way, with and
without ``include_partial_messages``: the ``…_cli-*.json`` fixtures.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "claude-agent-sdk"
PROMPT = "Add 1 and 2, run false, then ask a sub-agent for the answer file."
SESSION = "0b6f6f8e-1f6a-4c52-9d51-3c1f2a7d9e10"
MODEL = "claude-sonnet-4-5"
ANSWER = "1 + 2 = 3; `false` failed (exit code 1); the sub-agent found answer.txt."


def _ids(parent: str | None) -> dict[str, Any]:
    return {"session_id": SESSION, "parent_tool_use_id": parent}


def _assistant(
    uuid: str, message_id: str, block: dict[str, Any], parent: str | None = None
) -> dict[str, Any]:
    """One ``assistant`` line: the CLI prints one per content block, each with the usage of
    the API's ``message_start`` (``output_tokens: 1``), the same for every block."""
    return {
        "type": "assistant",
        "uuid": uuid,
        **_ids(parent),
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 120, "output_tokens": 1, "cache_read_input_tokens": 40},
        },
    }


def _result_line(
    uuid: str, tool_use_id: str, text: str, is_error: bool, tool_use_result: Any,
    parent: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if is_error:
        block["is_error"] = True
    return {
        "type": "user",
        "uuid": uuid,
        **_ids(parent),
        "message": {"role": "user", "content": [block]},
        "tool_use_result": tool_use_result,
    }


def _tool(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


AGENT_ARGS = {
    "description": "find the answer file",
    "prompt": "Find the file that holds the answer.",
    "subagent_type": "general-purpose",
}


def script() -> list[dict[str, Any]]:
    """The stream-json lines the CLI prints for the run (without partial messages)."""
    thinking = {"type": "thinking", "thinking": "Add first, then run false.", "signature": "c2ln"}
    return [
        {"type": "system", "subtype": "init", "uuid": "i0", "session_id": SESSION,
         "model": MODEL, "cwd": "/work/project", "claude_code_version": "2.1.332",
         "tools": ["Bash", "Glob", "Agent", "mcp__calc__add"], "permissionMode": "default",
         "apiKeySource": "none", "mcp_servers": [{"name": "calc", "status": "connected"}]},
        _assistant("a1", "msg_01", thinking),
        _assistant("a2", "msg_01", _tool("toolu_01", "mcp__calc__add", {"a": 1, "b": 2})),
        _result_line("u1", "toolu_01", "3", False, {"result": 3}),
        _assistant("a3", "msg_02", _tool("toolu_02", "Bash", {"command": "false"})),
        _result_line("u2", "toolu_02", "Exit code 1", True, "Error: Exit code 1"),
        _assistant("a4", "msg_03", _tool("toolu_03", "Agent", AGENT_ARGS)),
        {"type": "system", "subtype": "task_started", "uuid": "t1", "session_id": SESSION,
         "task_id": "task_1", "tool_use_id": "toolu_03", "description": "find the answer file",
         "task_type": "local_agent"},
        {"type": "user", "uuid": "s0", **_ids("toolu_03"),
         "message": {"role": "user", "content": [_text(AGENT_ARGS["prompt"])]}},
        _assistant("s1", "msg_s1", _tool("toolu_s1", "Glob", {"pattern": "*.txt"}), "toolu_03"),
        _result_line("s2", "toolu_s1", "answer.txt", False,
                     {"filenames": ["answer.txt"], "numFiles": 1}, "toolu_03"),
        _assistant("s3", "msg_s2", _text("The answer is in answer.txt."), "toolu_03"),
        {"type": "system", "subtype": "task_notification", "uuid": "t2", "session_id": SESSION,
         "task_id": "task_1", "tool_use_id": "toolu_03", "status": "completed",
         "output_file": "", "summary": "find the answer file",
         "usage": {"total_tokens": 300, "tool_uses": 1, "duration_ms": 900}},
        {"type": "user", "uuid": "u3", **_ids(None),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_03",
                     "content": [_text("The answer is in answer.txt.")]}]},
         "tool_use_result": {"status": "completed", "totalToolUseCount": 1}},
        _assistant("a5", "msg_04", _text(ANSWER)),
        {"type": "rate_limit_event", "uuid": "r1", "session_id": SESSION,
         "rate_limit_info": {"status": "allowed", "rateLimitType": "five_hour"}},
        {"type": "result", "subtype": "success", "uuid": "z1", "session_id": SESSION,
         "duration_ms": 4200, "duration_api_ms": 3100, "is_error": False, "num_turns": 4,
         "result": ANSWER, "stop_reason": "end_turn", "total_cost_usd": 0.0123,
         "usage": {"input_tokens": 600, "output_tokens": 90, "cache_read_input_tokens": 200},
         "modelUsage": {MODEL: {"inputTokens": 600, "outputTokens": 90, "costUSD": 0.0123}},
         "permission_denials": [], "terminal_reason": "completed"},
    ]  # fmt: skip


def _stream_events(line: dict[str, Any], index: int, n: int) -> list[dict[str, Any]]:
    """The ``stream_event`` lines that come before an ``assistant`` line when partial
    messages are asked for: the block's start, its deltas in ``n`` pieces, its stop."""
    message = line["message"]
    (block,) = message["content"]
    events: list[dict[str, Any]] = []
    if index == 0:
        start = {k: v for k, v in message.items() if k != "content"}
        events.append({"type": "message_start", "message": {**start, "content": []}})
    if block["type"] in ("text", "thinking"):
        key = block["type"]
        whole = block[key]
        empty = {"type": key, key: ""}
        events.append({"type": "content_block_start", "index": index, "content_block": empty})
        size = max(1, -(-len(whole) // n))
        for at in range(0, len(whole), size):
            delta = {"type": f"{key}_delta", key: whole[at : at + size]}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
    else:
        start_block = {**block, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": start_block})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
    events.append({"type": "content_block_stop", "index": index})
    return [
        {"type": "stream_event", "uuid": f"{line['uuid']}-e{i}", "session_id": SESSION,
         "parent_tool_use_id": line["parent_tool_use_id"], "event": event}
        for i, event in enumerate(events)
    ]  # fmt: skip


def partial_script(pieces: int = 3) -> list[dict[str, Any]]:
    """:func:`script` with the ``stream_event`` lines of ``include_partial_messages=True``
    before each of the main agent's ``assistant`` lines."""
    lines: list[dict[str, Any]] = []
    blocks: dict[str, int] = {}
    for line in script():
        if line["type"] == "assistant" and line["parent_tool_use_id"] is None:
            message_id = line["message"]["id"]
            index = blocks[message_id] = blocks.get(message_id, -1) + 1
            lines += _stream_events(line, index, pieces)
        lines.append(line)
    return lines


def scripted_transport(lines: list[dict[str, Any]]) -> Any:
    """A ``Transport`` that plays ``lines`` once the prompt is written."""
    from claude_agent_sdk._internal.transport import Transport

    class ScriptedTransport(Transport):
        def __init__(self) -> None:
            self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        async def connect(self) -> None:
            pass

        def is_ready(self) -> bool:
            return True

        async def write(self, data: str) -> None:
            for message in map(json.loads, filter(None, data.splitlines())):
                if message["type"] == "control_request":  # initialize etc.: acknowledged
                    response = {"subtype": "success", "request_id": message["request_id"]}
                    await self.queue.put(
                        {"type": "control_response", "response": {**response, "response": {}}}
                    )
                elif message["type"] == "user":
                    for line in [*lines, None]:
                        await self.queue.put(line)

        async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
            while (line := await self.queue.get()) is not None:
                yield line

        async def end_input(self) -> None:
            pass

        async def close(self) -> None:
            pass

    return ScriptedTransport()


def _query(lines: list[dict[str, Any]], partial: bool) -> AsyncIterator[Any]:
    from claude_agent_sdk import ClaudeAgentOptions, query

    options = ClaudeAgentOptions(include_partial_messages=partial)
    return query(prompt=PROMPT, options=options, transport=scripted_transport(lines))


def _on_a_thread(main: Callable[[], Any]) -> Any:
    # A fresh loop on a thread of its own: an earlier test may leave one running here.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(main())).result()


def run(partial: bool = False) -> list[Any]:
    """The messages ``query()`` yields for the scripted run, in order."""

    async def main() -> list[Any]:
        lines = partial_script() if partial else script()
        return [message async for message in _query(lines, partial)]

    result: list[Any] = _on_a_thread(main)
    return result


def run_followed(
    wrap: Callable[[AsyncIterator[Any]], AsyncIterator[Any]], partial: bool = True
) -> list[Any]:
    """The same run, ``query()``'s messages passed through ``wrap`` (``turnfold.follow``, or a
    follower's feed) as they arrive; the messages, in order."""

    async def main() -> list[Any]:
        lines = partial_script() if partial else script()
        return [message async for message in wrap(_query(lines, partial))]

    result: list[Any] = _on_a_thread(main)
    return result


def as_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages as ``dataclasses.asdict`` saves them (block types lost)."""
    return [dataclasses.asdict(message) for message in messages]


def cli_run(server: Path, workdir: Path, port: int = 18011, partial: bool = False) -> list[Any]:
    """The messages of a run of the ``claude`` CLI bundled in the SDK's wheel, against the
    scripted fake Anthropic API ``server`` (``shared/notes/real-agents/claude/fake_anthropic.py``)
    on 127.0.0.1. Only inside ``unshare -n`` (no network but loopback): see :func:`main`."""
    import os
    import subprocess

    from claude_agent_sdk import ClaudeAgentOptions, query

    home = workdir / "home"
    project = workdir / "project"
    for folder in (home, project):
        folder.mkdir(parents=True, exist_ok=True)
    log = (workdir / "server.log").open("w")
    fake = subprocess.Popen([sys.executable, str(server), str(port), str(workdir / "requests.log")],
                            stdout=log, stderr=log)  # fmt: skip
    try:
        time.sleep(0.5)
        env = {
            "HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "sk-fake-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0", "IS_SANDBOX": "1", "PATH": os.environ["PATH"],
        }  # fmt: skip
        options = ClaudeAgentOptions(
            env=env, cwd=str(project), permission_mode="bypassPermissions",
            include_partial_messages=partial,
        )  # fmt: skip

        async def collect() -> list[Any]:
            return [m async for m in query(prompt=CLI_PROMPT, options=options)]

        result: list[Any] = _on_a_thread(collect)
        return result
    finally:
        fake.terminate()
        fake.wait()
        log.close()


#: The fake server's script starts from a prompt with this marker (Bash ok, Bash failing,
#: a sub-agent that runs Bash, an answer).
CLI_PROMPT = "FIRST-PROMPT: run echo hi"


def main() -> None:
    import claude_agent_sdk

    FIXTURES.mkdir(parents=True, exist_ok=True)
    version = claude_agent_sdk.__version__
    path = FIXTURES / f"claude-agent-sdk_v{version}_asdict_subagent.json"
    path.write_text(json.dumps(as_dicts(run()), indent=1) + "\n", encoding="utf-8")
    print(path)
    if len(sys.argv) == 3 and sys.argv[1] == "--cli":
        # unshare -n .venv/bin/python tests/formats/claude_agent_sdk_runs.py --cli <fake server>
        import subprocess
        import tempfile

        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        for partial, what in ((False, "cli-subagent"), (True, "cli-partial-messages")):
            with tempfile.TemporaryDirectory() as scratch:
                messages = cli_run(Path(sys.argv[2]), Path(scratch), partial=partial)
            cli = FIXTURES / f"claude-agent-sdk_v{version}_asdict_{what}.json"
            cli.write_text(json.dumps(as_dicts(messages), indent=1) + "\n", encoding="utf-8")
            print(cli)


if __name__ == "__main__":
    main()
