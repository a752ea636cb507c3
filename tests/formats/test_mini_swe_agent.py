"""mini-swe-agent trajectories (spec H-2, H-6, U-1, issue 13).

The fixtures under ``tests/fixtures/harnesses/mini-swe-agent/`` were written by the real
``mini-swe-agent`` package (its ``DeterministicModel`` family from
``minisweagent/models/test_models.py``, or its ``LitellmModel`` against a scripted Chat
Completions server on 127.0.0.1, and a ``LocalEnvironment`` in a temporary folder, no
network) with :func:`write_runs`; ``python -m tests.formats.test_mini_swe_agent`` rewrites them.
One more is a real DeepSeek run from mini-swe-agent's repository, trimmed (``SOURCES.md``).
The tests below also run the package again when it is installed (the ``test`` extra), so a new
release's trajectories are read as well.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.counters_harnesses import mini_swe_agent as count_calls
from turnfold.formats import which_format
from turnfold.formats.harnesses import mini_swe_agent
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantError,
    AssistantText,
    SystemNotice,
    ToolCall,
    Usage,
    UserMessage,
)
from turnfold.usage import count_tokens

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "mini-swe-agent"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"

# --- the generator: real mini-swe-agent runs ---------------------------------------------


def _fence(thought: str, command: str) -> str:
    return f"THOUGHT: {thought}\n\n```mswea_bash_command\n{command}\n```"


def _repo(folder: Path) -> None:
    """A tiny git repository with a bug for the scripted agent to fix."""
    import subprocess

    (folder / "calc.py").write_text("def div(a, b):\n    return a / b\n\nprint(div(1, 0))\n")
    for command in (
        ["git", "init", "-q"],
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "add", "calc.py"],
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "bug"],
    ):
        subprocess.run(command, cwd=folder, check=True, capture_output=True)


def _parsing_toolcall_model() -> type:
    """mini-swe-agent's DeterministicToolcallModel, with its real tool-call parser applied to
    each scripted answer, so an answer without tool calls raises the real FormatError."""
    import yaml
    from minisweagent.models.test_models import DeterministicToolcallModel
    from minisweagent.models.utils.actions_toolcall import parse_toolcall_actions

    config = Path(sys.modules["minisweagent"].__file__ or "").parent / "config" / "mini.yaml"
    template = yaml.safe_load(config.read_text())["model"]["format_error_template"]

    class ParsingToolcallModel(DeterministicToolcallModel):  # type: ignore[misc]
        def query(self, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
            output: dict[str, Any] = super().query(messages, **kwargs)
            if not output.get("tool_calls"):
                parse_toolcall_actions([], format_error_template=template)
            return output

    return ParsingToolcallModel


def _bash(call_id: str, command: str, name: str = "bash") -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps({"command": command})}}  # fmt: skip


#: What the scripted Chat Completions server answers, in order: a command; text without a
#: call (the real parser's "No tool calls found"); a call of a tool mini-swe-agent does not
#: have (its "Unknown tool"); the submit command.
CHAT_REPLIES: list[dict[str, Any]] = [
    {"role": "assistant", "content": "Look first.", "tool_calls": [_bash("call_1", "ls")]},
    {"role": "assistant", "content": "I think I am done."},
    {"role": "assistant", "content": "Run it in Python.",
     "tool_calls": [_bash("call_2", "print(1 / 0)", name="python")]},
    {"role": "assistant", "content": None, "tool_calls": [_bash("call_3", SUBMIT)]},
]  # fmt: skip


def chat_usage(index: int) -> dict[str, Any]:
    """The usage the server writes on its ``index``-th answer (cached tokens part of the
    prompt's, as OpenAI counts them)."""
    return {"prompt_tokens": 1000 * (index + 1), "completion_tokens": 10 + index,
            "total_tokens": 1000 * (index + 1) + 10 + index,
            "prompt_tokens_details": {"cached_tokens": 512 * index},
            "completion_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip


@contextmanager
def _chat_server() -> Iterator[str]:
    """A loopback Chat Completions server answering :data:`CHAT_REPLIES` in turn."""
    answered = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            index = answered[0]
            answered[0] += 1
            message = CHAT_REPLIES[index]
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            reply = {"id": f"chatcmpl-{index}", "object": "chat.completion",
                     "created": 1767225600 + index, "model": "gpt-4o-mini-2024-07-18",
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                     "usage": chat_usage(index)}  # fmt: skip
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()


def _litellm_run(folder: Path, out: Path, **agent: Any) -> dict[str, Any]:
    """mini-swe-agent's own LitellmModel (mini.yaml's templates, as ``mini`` runs it) against
    the scripted server: the trajectory keeps each ``response`` with its usage, and the format
    errors keep the responses they rejected."""
    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    config = Path(sys.modules["minisweagent"].__file__ or "").parent / "config" / "mini.yaml"
    templates = yaml.safe_load(config.read_text())["model"]
    with _chat_server() as url:
        model = LitellmModel(
            model_name="openai/gpt-4o-mini",
            model_kwargs={"api_base": url, "api_key": "sk-fake"},
            format_error_template=templates["format_error_template"],
            observation_template=templates["observation_template"],
        )
        env = LocalEnvironment(cwd=str(folder), env={"PAGER": "cat", "GIT_PAGER": "cat"})
        run = DefaultAgent(model, env, system_template="You are a helpful assistant.",
                           instance_template="Please solve this issue: {{task}}",
                           output_path=out, cost_limit=0, **agent)  # fmt: skip
        run.run("calc.py divides by zero")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _run(kind: str, folder: Path, out: Path, **agent: Any) -> dict[str, Any]:
    """One scripted run of mini-swe-agent's DefaultAgent; its trajectory as saved."""
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models import test_models as tm

    if kind == "litellm":
        return _litellm_run(folder, out, **agent)
    fix = "sed -i 's/return a \\/ b/return a \\/ b if b else 0/' calc.py && python3 calc.py"
    model: Any
    _ParsingToolcallModel = _parsing_toolcall_model()
    if kind == "textbased":
        outputs = [
            tm.make_output(_fence("Look around.", "ls"), [{"command": "ls"}], cost=0.01),
            tm.make_output(
                _fence("Run it.", "python3 calc.py"), [{"command": "python3 calc.py"}], 0.01
            ),
            tm.make_output(_fence("Guard b.", fix), [{"command": fix}], cost=0.01),
            tm.make_output(_fence("Submit.", SUBMIT), [{"command": SUBMIT}], cost=0.01),
        ]
        model = tm.DeterministicModel(outputs=outputs, cost_per_call=0.01)
    elif kind == "toolcall":
        calls = [
            {"id": "call_1", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})}},
            {"id": "call_2", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": "cat nope.txt"})}},
        ]  # fmt: skip
        submit = [{"id": "call_3", "type": "function",
                   "function": {"name": "bash",
                                "arguments": json.dumps({"command": SUBMIT})}}]  # fmt: skip
        outputs = [
            tm.make_toolcall_output("Two looks at once.", calls,
                                    [{"command": "ls", "tool_call_id": "call_1"},
                                     {"command": "cat nope.txt", "tool_call_id": "call_2"}]),
            # No tool calls: the real parser rejects it with mini.yaml's format-error template.
            {"role": "assistant", "content": "I think I am done.", "tool_calls": [],
             "extra": {"actions": [], "cost": 1.0}},
            tm.make_toolcall_output(None, submit, [{"command": SUBMIT, "tool_call_id": "call_3"}]),
        ]  # fmt: skip
        model = _ParsingToolcallModel(outputs=outputs, cost_per_call=0.02)
    elif kind == "response-api":
        outputs = [
            tm.make_response_api_output(
                "Listing first.", [{"command": "ls", "tool_call_id": "fc_1"}]
            ),
            tm.make_response_api_output(None, [{"command": "false", "tool_call_id": "fc_2"}]),
        ]
        model = tm.DeterministicResponseAPIToolcallModel(outputs=outputs, cost_per_call=0.03)
    else:
        raise ValueError(kind)
    env = LocalEnvironment(cwd=str(folder), env={"PAGER": "cat", "GIT_PAGER": "cat"})
    run = DefaultAgent(
        model,
        env,
        system_template="You are a helpful assistant that can run bash commands.",
        instance_template="Please solve this issue: {{task}}",
        output_path=out,
        cost_limit=0,
        **agent,
    )
    run.run("calc.py divides by zero")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


#: What the user answers at each prompt of the interactive run: a command of their own (human
#: mode), a switch to confirm mode, a rejection of the model's two calls, the confirmation of
#: its submit call.
INTERACTIVE_ANSWERS = ["python3 calc.py", "/c", "no, do not delete files", ""]
INTERACTIVE = "mini-swe-agent_v2.4.6_interactive_user-command_rejected-calls.traj.json"


def _interactive_run(folder: Path, out: Path) -> dict[str, Any]:
    """mini-swe-agent's InteractiveAgent (what ``mini`` runs) with a tool-calling model, the
    user's answers typed at its prompts (:data:`INTERACTIVE_ANSWERS`, fed to the real prompt
    handling, slash commands included): a command the user runs in human mode, two calls the
    user rejects in confirm mode (mini-swe-agent pads their outputs "not executed"), the
    submit call confirmed."""
    from unittest import mock

    from minisweagent.agents import interactive
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models import test_models as tm

    calls = [_bash("call_1", "rm calc.py"), _bash("call_2", "ls")]
    outputs = [
        tm.make_toolcall_output("Delete it and look.", calls,
                                [{"command": "rm calc.py", "tool_call_id": "call_1"},
                                 {"command": "ls", "tool_call_id": "call_2"}]),
        tm.make_toolcall_output(None, [_bash("call_3", SUBMIT)],
                                [{"command": SUBMIT, "tool_call_id": "call_3"}]),
    ]  # fmt: skip
    answers = iter(INTERACTIVE_ANSWERS)
    typed = mock.Mock(prompt=lambda *args, **kwargs: next(answers))
    with mock.patch.object(interactive, "prompt_session", typed):
        env = LocalEnvironment(cwd=str(folder), env={"PAGER": "cat", "GIT_PAGER": "cat"})
        run = interactive.InteractiveAgent(
            tm.DeterministicToolcallModel(outputs=outputs, cost_per_call=0.02), env,
            system_template="You are a helpful assistant.",
            instance_template="Please solve this issue: {{task}}", output_path=out,
            mode="human", confirm_exit=False, cost_limit=0,
        )  # fmt: skip
        run.run("calc.py divides by zero")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


#: The runs the fixtures hold: file name → (model kind, extra agent settings).
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "mini-swe-agent_v2.4.6_textbased_submitted.traj.json": ("textbased", {}),
    "mini-swe-agent_v2.4.6_toolcall_format-error.traj.json": ("toolcall", {}),
    "mini-swe-agent_v2.4.6_response-api_step-limit.traj.json": ("response-api", {"step_limit": 2}),
    "mini-swe-agent_v2.4.6_litellm_usage-rejected-responses.traj.json": ("litellm", {}),
}


def write_runs(target: Path) -> list[Path]:
    """Run every scripted run of :data:`RUNS` and write its trajectory into ``target``; also a
    bare message list of the text-based run (``role`` and ``content`` only, as trajectory data
    sets publish them) and its 1.x-style ``mini-swe-agent-1`` file."""
    _quiet_config()
    written = []
    with tempfile.TemporaryDirectory() as folder:
        _repo(Path(folder))
        data = _interactive_run(Path(folder), Path(folder) / "run.traj.json")
    (target / INTERACTIVE).write_text(json.dumps(data, indent=2) + "\n")
    written.append(target / INTERACTIVE)
    for name, (kind, agent) in RUNS.items():
        with tempfile.TemporaryDirectory() as folder:
            _repo(Path(folder))
            data = _run(kind, Path(folder), Path(folder) / "run.traj.json", **agent)
        path = target / name
        path.write_text(json.dumps(data, indent=2) + "\n")
        written.append(path)
        if kind == "textbased":
            bare = [
                {"role": m["role"], "content": m["content"]}
                for m in data["messages"]
                if m["role"] != "exit"
            ]
            path = target / "mini-swe-agent_bare-messages_textbased.json"
            path.write_text(json.dumps(bare, indent=2) + "\n")
            written.append(path)
    return written


def _quiet_config() -> None:
    """mini-swe-agent reads (and creates) a global config folder on import: a temporary one."""
    os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", tempfile.mkdtemp(prefix="mswea-config-"))
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    # litellm prices the scripted model's calls from its own copy of the price map, offline.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _real_package() -> None:
    _quiet_config()
    pytest.importorskip("minisweagent", reason="mini-swe-agent is in the test extra")


# --- tests -------------------------------------------------------------------------------


def _fixture(name: str) -> Path:
    return FIXTURES / name


def test_H2_a_textbased_traj_json_is_commands_with_outputs_and_the_submission() -> None:
    path = _fixture("mini-swe-agent_v2.4.6_textbased_submitted.traj.json")
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "mini-swe-agent"
    calls = transcript.tool_calls()
    assert [c.args["command"] for c in calls][:2] == ["ls", "python3 calc.py"]
    assert all(c.name == "bash" for c in calls)
    assert turnfold.tool_category("bash") == "command"
    assert [c.status for c in calls] == ["success", "error", "success", "success"]
    assert "ZeroDivisionError" in (calls[1].result.text or "")  # raw output, no tags
    assert "<returncode>" not in (calls[0].result.text or "")
    assert "calc.py" in (calls[3].result.text or "")  # the submission is the submit's result
    user = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert [u.text for u in user] == ["Please solve this issue: calc.py divides by zero"]
    assert calls[0].started_at is not None
    assert calls[0].ended_at is not None
    assert transcript.warnings == []


def test_H6_outcome_and_cost_come_from_info() -> None:
    submitted = turnfold.load(_fixture("mini-swe-agent_v2.4.6_textbased_submitted.traj.json"))
    meta = submitted.metadata
    assert meta["exit_status"] == "Submitted"
    assert "outcome" not in meta
    assert meta["agent"] == "mini-swe-agent"
    assert meta["model"] == "deterministic"
    assert meta["version"] == "2.4.6"
    assert meta["api_calls"] == 4
    assert meta["cost_usd"] == pytest.approx(0.04)
    assert "diff --git" in meta["submission"]
    limited = turnfold.load(_fixture("mini-swe-agent_v2.4.6_response-api_step-limit.traj.json"))
    assert limited.metadata["outcome"] == "incomplete"
    assert limited.metadata["exit_status"] == "LimitsExceeded"


@pytest.mark.parametrize(
    ("status", "outcome"),
    [("Submitted", None), ("LimitsExceeded", "incomplete"), ("TimeExceeded", "incomplete"),
     ("RepeatedFormatError", "error"), ("RuntimeError", "error"), ("", None), (None, None)],
)  # fmt: skip
def test_H6_exit_statuses_as_outcomes(status: str | None, outcome: str | None) -> None:
    assert mini_swe_agent.outcome_of(status) == outcome


def test_H6_a_run_ended_by_an_exception_of_any_name_is_an_error() -> None:
    """A real SWE-bench run (PR 816's DeepSeek artifacts) that litellm's ``Timeout`` ended: the
    status is the exception's class, which does not end in ``Error``; its traceback says so."""
    transcript = turnfold.load(
        _fixture("mini-swe-agent_v2.2.7_deepseek-reasoner_litellm-timeout_pvlib-1154.traj.json")
    )
    assert transcript.metadata["exit_status"] == "Timeout"
    assert transcript.metadata["outcome"] == "error"
    errors = [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert len(errors) == 1
    assert errors[0].message.startswith("Timeout: litellm.Timeout")


@pytest.mark.parametrize(
    ("content", "extra", "status"),
    [
        ("<returncode>0</returncode>\n<output>\nok\n</output>", {}, "success"),
        ("<returncode>127</returncode>\n<output>\nsh: nope: not found\n</output>", {}, "error"),
        ("<returncode>0</returncode>", {"returncode": 1}, "error"),  # the recorded code wins
        ("<returncode>-1</returncode>", {}, "error"),
        ("<exception>timed out</exception>\n<returncode>-1</returncode>", {}, "error"),
        ("<returncode>0</returncode>", {"exception_info": "An error occurred"}, "error"),
        ("plain text, no code", {}, "unknown"),
    ],
)
def test_H2_command_status_is_the_return_code(
    content: str, extra: dict[str, Any], status: str
) -> None:
    assert mini_swe_agent.status_of(content, extra) == status


def test_H2_tool_calls_pair_by_id_and_a_format_error_is_a_notice() -> None:
    transcript = turnfold.load(_fixture("mini-swe-agent_v2.4.6_toolcall_format-error.traj.json"))
    calls = transcript.tool_calls()
    assert [c.call_id for c in calls] == ["call_1", "call_2", "call_3"]
    assert calls[0].batch_id == calls[1].batch_id != calls[2].batch_id
    assert [c.status for c in calls] == ["success", "error", "success"]
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [n.subtype for n in notices] == ["format_error"]
    assert not any(
        "Format error" in u.text for u in transcript.entries if isinstance(u, UserMessage)
    )


def test_H2_response_api_items_are_calls_and_a_limit_is_a_notice() -> None:
    transcript = turnfold.load(_fixture("mini-swe-agent_v2.4.6_response-api_step-limit.traj.json"))
    calls = transcript.tool_calls()
    assert [(c.call_id, c.status) for c in calls] == [("fc_1", "success"), ("fc_2", "error")]
    assert any(isinstance(e, SystemNotice) and "LimitsExceeded" in e.text for e in transcript)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H2_a_bare_message_list_is_read_as_mini_swe_agent_not_plain_chat() -> None:
    """Issue 13: the older bare list was misread as plain chat with no tool calls."""
    path = _fixture("mini-swe-agent_bare-messages_textbased.json")
    source, stream = open_source(path)
    try:
        assert which_format(source) == "mini-swe-agent"
    finally:
        if stream is not None:
            stream.close()
    transcript = turnfold.load(path)
    calls = transcript.tool_calls()
    assert len(calls) == count_calls(path) == 4
    # The submit command's output is in the exit message, which a bare list does not keep.
    assert [c.status for c in calls] == ["success", "error", "success", "unknown"]
    assert all(
        not u.text.startswith("<returncode>") for u in transcript if isinstance(u, UserMessage)
    )


ONE_ACTION_ERROR = "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."


def test_H2_1x_bash_fences_and_format_error_wording() -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": "THOUGHT: two\n```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "user", "content": ONE_ACTION_ERROR},
        {"role": "assistant", "content": "THOUGHT: one\n```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n</output>"},
    ]  # fmt: skip
    transcript = turnfold.load(messages)
    assert transcript.metadata["source_format"] == "mini-swe-agent"
    [call] = transcript.tool_calls()
    assert (call.args, call.status, call.result and call.result.text) == (
        {"command": "ls"}, "success", "a.py\n"
    )  # fmt: skip
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "AssistantText", "SystemNotice", "AssistantText", "ToolCall",
    ]  # fmt: skip


def test_H2_a_chat_with_bash_blocks_but_no_outputs_stays_chat() -> None:
    chat = [
        {"role": "user", "content": "How do I list files?"},
        {"role": "assistant", "content": "Use:\n```bash\nls -la\n```"},
    ]
    assert turnfold.load(chat).metadata["source_format"] == "openai"


def test_L4_an_uncaught_exception_exit_is_an_error_and_unknown_outputs_warn() -> None:
    document = {
        "info": {"exit_status": "RuntimeError", "submission": "", "mini_version": "2.4.6"},
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "tool", "tool_call_id": "nope", "content": "<returncode>0</returncode>"},
            "not a message",
            {"role": "exit", "content": "boom", "extra": {"exit_status": "RuntimeError"}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    transcript = turnfold.load(document)
    assert transcript.metadata["outcome"] == "error"
    assert any(isinstance(e, AssistantError) and "boom" in e.message for e in transcript)
    assert len(transcript.warnings) == 2
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_X2_every_message_type_is_accounted_for() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        transcript = turnfold.load(path)
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == [], path.name
        known = mini_swe_agent.RECORDS.known()
        assert set(transcript.accounting.counts) <= known, path.name


@pytest.mark.parametrize("name", sorted(RUNS))
def test_H2_runs_of_the_installed_package_read_like_the_fixtures(name: str, tmp_path: Path) -> None:
    """The package in the test extra, run now: same calls, statuses and outcome as the file
    committed from 2.4.6 (paths and times differ)."""
    _real_package()
    written = {p.name: p for p in write_runs(tmp_path)}
    fresh, committed = turnfold.load(written[name]), turnfold.load(_fixture(name))
    shape: Callable[[ToolCall], tuple[str, str]] = lambda c: (c.name, c.status)  # noqa: E731
    assert [shape(c) for c in fresh.tool_calls()] == [shape(c) for c in committed.tool_calls()]
    assert len(fresh.tool_calls()) == count_calls(written[name])
    assert fresh.metadata.get("outcome") == committed.metadata.get("outcome")
    assert fresh.accounting is not None
    assert fresh.accounting.unaccounted == []


if __name__ == "__main__":
    for written_path in write_runs(FIXTURES):
        print(written_path)


DEEPSEEK = "mini-swe-agent_v2.2.7_deepseek_sqlfluff-2419_trimmed.traj.json"
LITELLM = "mini-swe-agent_v2.4.6_litellm_usage-rejected-responses.traj.json"


def _recorded_usage(path: Path) -> dict[str, int]:
    """The sum of every ``extra.response.usage`` the file holds, read apart from the loader."""
    totals: dict[str, int] = {}
    for message in json.loads(path.read_text())["messages"]:
        usage = ((message.get("extra") or {}).get("response") or {}).get("usage")
        if not usage:
            continue
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        for name, count in (("input_tokens", usage["prompt_tokens"]),
                            ("output_tokens", usage["completion_tokens"]),
                            ("cache_read_tokens", cached)):  # fmt: skip
            if count is not None:
                totals[name] = totals.get(name, 0) + count
    return totals


def test_U1_each_response_s_usage_and_model_are_read_from_a_real_run() -> None:
    """A real DeepSeek run (2.2.7): each assistant message's ``extra.response`` holds litellm's
    usage, cached tokens part of the prompt's; the run's cost is ``info.model_stats``."""
    path = _fixture(DEEPSEEK)
    transcript = turnfold.load(path)
    responses = [m for m in json.loads(path.read_text())["messages"] if m["role"] == "assistant"]
    carried = [e.usage for e in transcript if isinstance(e, (AssistantText, ToolCall)) and e.usage]
    assert [u.response_id for u in carried] == [m["extra"]["response"]["id"] for m in responses]
    assert count_tokens(transcript.entries) == _recorded_usage(path)
    assert carried[0] == Usage(input_tokens=1540, output_tokens=85, cache_read_tokens=320,
                               response_id="5939e557-58d3-45f4-b926-0783c5b88aeb")  # fmt: skip
    texts = [e for e in transcript if isinstance(e, AssistantText)]
    assert {t.model for t in texts} == {"deepseek-chat"}  # the response's, as the API named it
    meta = transcript.metadata
    assert (meta["model"], meta["api_calls"]) == ("deepseek/deepseek-chat", 41)
    assert meta["cost_usd"] == pytest.approx(0.014207648)  # the whole run's, trimmed or not
    assert transcript.warnings == []


def test_U1_a_rejected_response_is_shown_with_its_usage_and_its_calls_cancelled() -> None:
    """Since 2.3.1 a format error keeps the response it rejected (``extra.response``, with its
    ``cost``): its text is shown, marked rejected, with its usage; its call never ran."""
    transcript = turnfold.load(_fixture(LITELLM))
    shown = [
        (type(e).__name__, getattr(e, "name", None) or getattr(e, "text", "")[:17],
         e.status if isinstance(e, ToolCall) else "", e.meta.get("rejected", False))
        for e in transcript.entries
    ]  # fmt: skip
    assert shown == [  # a rejected response's call is marked so too, not only its text
        ("UserMessage", "Please solve this", "", False),
        ("AssistantText", "Look first.", "", False),
        ("ToolCall", "bash", "success", False),
        ("AssistantText", "I think I am done", "", True),
        ("SystemNotice", "Tool call error:\n", "", False),
        ("AssistantText", "Run it in Python.", "", True),
        ("ToolCall", "python", "cancelled", True),
        ("SystemNotice", "Tool call error:\n", "", False),
        ("ToolCall", "bash", "success", False),
    ]
    expected: dict[str, int] = {}
    for index in range(len(CHAT_REPLIES)):
        usage = chat_usage(index)
        for name, count in (("input_tokens", usage["prompt_tokens"]),
                            ("output_tokens", usage["completion_tokens"]),
                            ("cache_read_tokens", usage["prompt_tokens_details"]["cached_tokens"]),
                            ("reasoning_tokens", 0)):  # fmt: skip
            expected[name] = expected.get(name, 0) + count
    assert count_tokens(transcript.entries) == expected  # every billed response, once
    rejected = transcript.entries[3]
    assert isinstance(rejected, AssistantText)
    assert rejected.model == "gpt-4o-mini-2024-07-18"
    assert rejected.usage is not None
    assert rejected.usage.response_id == "chatcmpl-1"
    assert rejected.meta["cost"] > 0
    submit = transcript.entries[-1]  # a response of a call alone: the call keeps what it has
    assert isinstance(submit, ToolCall)
    assert submit.usage is not None
    assert submit.usage.response_id == "chatcmpl-3"
    assert submit.meta["model"] == "gpt-4o-mini-2024-07-18"
    assert submit.meta["cost"] > 0
    stats = json.loads(_fixture(LITELLM).read_text())["info"]["model_stats"]
    assert transcript.metadata["cost_usd"] == pytest.approx(stats["instance_cost"])
    assert transcript.metadata["api_calls"] == 4 == len(CHAT_REPLIES)


@pytest.mark.parametrize(
    ("response", "usage"),
    [
        ({"id": "r", "usage": {"prompt_tokens": 1995, "completion_tokens": 93,
                               "prompt_tokens_details": {"cached_tokens": 320},
                               "completion_tokens_details": None}},
         Usage(input_tokens=1995, output_tokens=93, cache_read_tokens=320, response_id="r")),
        # Anthropic through litellm: its prompt_tokens already hold the cache reads and writes.
        ({"id": "msg", "usage": {"prompt_tokens": 1300, "completion_tokens": 20,
                                 "prompt_tokens_details": {"cached_tokens": 1000,
                                                           "cache_creation_tokens": 200},
                                 "cache_creation_input_tokens": 200}},
         Usage(input_tokens=1300, output_tokens=20, cache_read_tokens=1000,
               cache_write_tokens=200, response_id="msg")),
        # Older litellm names the cache writes at the top only; a count of them alone is usage.
        ({"id": "msg", "usage": {"prompt_tokens": 1300, "completion_tokens": 20,
                                 "cache_creation_input_tokens": 200}},
         Usage(input_tokens=1300, output_tokens=20, cache_write_tokens=200, response_id="msg")),
        ({"id": "msg", "usage": {"completion_tokens": None, "cache_creation_input_tokens": 200}},
         Usage(cache_write_tokens=200, response_id="msg")),
        ({"object": "response", "id": "resp_1",
          "usage": {"input_tokens": 500, "output_tokens": 40,
                    "input_tokens_details": {"cached_tokens": 128},
                    "output_tokens_details": {"reasoning_tokens": 32}}},
         Usage(input_tokens=500, output_tokens=40, cache_read_tokens=128, reasoning_tokens=32,
               response_id="resp_1")),
        ({"id": "r", "usage": None}, None),
        ({"id": "r"}, None),
    ],
)  # fmt: skip
def test_U1_response_usage_rule(response: dict[str, Any], usage: Usage | None) -> None:
    assert mini_swe_agent.response_usage(response) == usage


def test_U1_a_responses_api_message_carries_its_own_usage_and_model() -> None:
    message = {
        "object": "response", "id": "resp_1", "model": "gpt-5-mini",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "Listing."}]},
                   {"type": "function_call", "call_id": "fc_1", "name": "bash",
                    "arguments": json.dumps({"command": "ls"})}],
        "usage": {"input_tokens": 500, "output_tokens": 40,
                  "input_tokens_details": {"cached_tokens": 128}},
        "extra": {"actions": [{"command": "ls", "tool_call_id": "fc_1"}], "cost": 0.001},
    }  # fmt: skip
    document = {"info": {"mini_version": "2.4.6", "model_stats": {"instance_cost": 0.001,
                                                                  "api_calls": 1}},
                "messages": [{"role": "user", "content": "Go."}, message],
                "trajectory_format": "mini-swe-agent-1.1"}  # fmt: skip
    transcript = turnfold.load(document)
    text = transcript.entries[1]
    assert isinstance(text, AssistantText)
    assert (text.model, text.meta) == ("gpt-5-mini", {"cost": 0.001})
    assert text.usage == Usage(input_tokens=500, output_tokens=40, cache_read_tokens=128,
                               response_id="resp_1")  # fmt: skip
    assert transcript.metadata["model"] == "gpt-5-mini"  # no info.config names one


@pytest.mark.parametrize(
    ("stats", "cost"),
    [({"instance_cost": 0.25, "api_calls": 3}, 0.25),
     ({"instance_cost": 0.0, "api_calls": 3}, None),  # cost_tracking: ignore_errors
     ({"instance_cost": 0.0, "api_calls": 0}, 0.0)],  # no call made: it cost nothing
)  # fmt: skip
def test_H6_cost_usd_is_the_run_s_recorded_cost(stats: dict[str, Any], cost: float | None) -> None:
    """``instance_cost`` is the run's cost, but a call mini-swe-agent could not price adds 0.0
    (``cost_tracking: ignore_errors``): 0 for calls made is no recorded cost (spec U-2)."""
    document = {"info": {"mini_version": "2.4.6", "model_stats": stats, "exit_status": ""},
                "messages": [{"role": "user", "content": "Go."}],
                "trajectory_format": "mini-swe-agent-1.1"}  # fmt: skip
    meta = turnfold.load(document).metadata
    assert meta.get("cost_usd") == cost
    assert meta["api_calls"] == stats["api_calls"]


def test_F14_a_command_the_user_ran_in_human_mode_is_the_user_s_call_not_a_prompt() -> None:
    """InteractiveAgent in human mode: the user's command is a user message with
    ``extra.actions`` ("User command: ..."), its output the user message after it. A
    user-initiated call with its outcome, never two prompts (the output shown as the user's)."""
    transcript = turnfold.load(_fixture(INTERACTIVE))
    assert transcript.warnings == []
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts[0] == "Please solve this issue: calc.py divides by zero"
    assert not any("User command" in p or "<returncode>" in p for p in prompts)
    ran = transcript.tool_calls()[0]
    assert (ran.args, ran.user_initiated, ran.status) == (
        {"command": "python3 calc.py"}, True, "error",
    )  # fmt: skip
    assert ran.result is not None
    assert "ZeroDivisionError" in (ran.result.text or "")
    assert not any(c.user_initiated for c in transcript.tool_calls()[1:])


def test_H2_calls_the_user_rejected_were_never_run_and_the_submit_call_ran() -> None:
    """The user rejected the model's two calls: mini-swe-agent writes each an output "action
    was not executed" (returncode -1) before the rejection, and pads the submit call alike when
    its ``Submitted`` cut the step short; the run's exit says the submit call ran."""
    transcript = turnfold.load(_fixture(INTERACTIVE))
    calls = {c.call_id: c for c in transcript.tool_calls()}
    assert [calls[i].status for i in ("call_1", "call_2")] == ["cancelled", "cancelled"]
    rejection = next(e for e in transcript.entries if e.meta.get("interrupt") == "UserRejection")
    assert "no, do not delete files" in rejection.text  # type: ignore[attr-defined]
    assert calls["call_3"].status == "success"
    assert transcript.metadata["exit_status"] == "Submitted"
    assert [c.status for c in transcript.tool_calls()].count("error") == 1  # the user's own run


def test_H2_an_interactive_run_of_the_installed_package_reads_like_the_fixture(
    tmp_path: Path,
) -> None:
    _real_package()
    _repo(tmp_path)
    fresh = turnfold.load(_interactive_run(tmp_path, tmp_path / "run.traj.json"))
    committed = turnfold.load(_fixture(INTERACTIVE))
    shape: Callable[[ToolCall], tuple[str, str, bool]] = lambda c: (  # noqa: E731
        c.call_id, c.status, c.user_initiated,
    )  # fmt: skip
    assert [shape(c) for c in fresh.tool_calls()] == [shape(c) for c in committed.tool_calls()]
