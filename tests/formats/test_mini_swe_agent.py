"""mini-swe-agent trajectories (spec H-2, H-6, issue 13).

The fixtures under ``tests/fixtures/harnesses/mini-swe-agent/`` were written by the real
``mini-swe-agent`` package (its ``DeterministicModel`` family from
``minisweagent/models/test_models.py`` and a ``LocalEnvironment`` in a temporary folder, no
network) with :func:`write_runs`; ``python tests/formats/test_mini_swe_agent.py`` rewrites them.
The tests below also run the package again when it is installed (the ``test`` extra), so a new
release's trajectories are read as well.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.harnesses import mini_swe_agent
from turnfold.formats.source import open_source
from turnfold.model import AssistantError, SystemNotice, ToolCall, UserMessage

sys.path.insert(0, str(Path(__file__).parent))
from counters_harnesses import mini_swe_agent as count_calls

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


def _run(kind: str, folder: Path, out: Path, **agent: Any) -> dict[str, Any]:
    """One scripted run of mini-swe-agent's DefaultAgent; its trajectory as saved."""
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models import test_models as tm

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


#: The runs the fixtures hold: file name → (model kind, extra agent settings).
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "mini-swe-agent_v2.4.6_textbased_submitted.traj.json": ("textbased", {}),
    "mini-swe-agent_v2.4.6_toolcall_format-error.traj.json": ("toolcall", {}),
    "mini-swe-agent_v2.4.6_response-api_step-limit.traj.json": ("response-api", {"step_limit": 2}),
}


def write_runs(target: Path) -> list[Path]:
    """Run every scripted run of :data:`RUNS` and write its trajectory into ``target``; also a
    bare message list of the text-based run (``role`` and ``content`` only, as trajectory data
    sets publish them) and its 1.x-style ``mini-swe-agent-1`` file."""
    _quiet_config()
    written = []
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
