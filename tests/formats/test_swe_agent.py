"""SWE-agent ``.traj`` trajectories (spec H-2, H-6, issue 13).

Fixtures: two real trajectories from SWE-agent's own repository (``tests/fixtures/SOURCES.md``):
a 0.x run whose history holds a demonstration, and a 1.x function-calling run with an edit
rejected for a syntax error; a real demonstration file (a history, no trajectory); the rest are
small hand-made documents below.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.counters_harnesses import swe_agent as count_calls
from turnfold.formats.harnesses import swe_agent
from turnfold.model import AssistantError, AssistantText, SystemNotice, ToolCall, UserMessage
from turnfold.session import session_facts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "swe-agent"
V0 = FIXTURES / "swe-agent_v0_test-repo-i1_demo-in-history.traj"
#: The ``args.yaml`` of V0's run folder, trimmed (its commands but ``open`` cut).
V0_ARGS = FIXTURES / "swe-agent_v0_test-repo_args.yaml"
V1 = FIXTURES / "swe-agent_v1_marshmallow-1867_function-calling-replace.traj"
DEMO = FIXTURES / "swe-agent_v1_demonstration_function-calling-simple.traj"


def _trajectory(*steps: dict[str, Any], **info: Any) -> dict[str, Any]:
    return {
        "environment": "main",
        "trajectory": list(steps),
        "history": [
            {"role": "system", "content": "SETTING: ...", "agent": "main",
             "message_type": "system_prompt"},
            {"role": "user", "content": "Fix the bug.", "agent": "main",
             "message_type": "observation"},
        ],
        "info": {"exit_status": "submitted", "submission": "", **info},
    }  # fmt: skip


def _step(action: str, observation: str = "", thought: str = "") -> dict[str, Any]:
    return {"action": action, "observation": observation, "thought": thought,
            "response": thought, "state": {"open_file": "/repo/a.py", "working_dir": "/repo"},
            "execution_time": 0.5}  # fmt: skip


@pytest.mark.parametrize("path", [V0, V1, DEMO], ids=lambda p: p.name)
def test_H2_each_step_is_a_thought_and_a_tool_call_with_its_result(path: Path) -> None:
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "swe-agent"
    calls = transcript.tool_calls()
    assert len(calls) == count_calls(path)
    assert all(c.result is not None for c in calls)
    assert isinstance(transcript.entries[0], UserMessage)
    assert transcript.entries[0].text.startswith("We're currently solving the following issue")
    assert isinstance(transcript.entries[1], AssistantText)
    assert calls[-1].name == "submit"
    assert calls[-1].result
    assert calls[-1].result.kind == "diff"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.warnings == []


def test_H2_commands_map_to_categories() -> None:
    transcript = turnfold.load(V1)
    names = [c.name for c in transcript.tool_calls()]
    assert names[:5] == ["create", "insert", "bash", "bash", "find_file"]
    categories = {n: turnfold.tool_category(n) for n in names}
    assert categories == {
        "create": "write", "insert": "edit", "bash": "command", "find_file": "search",
        "open": "read", "edit": "edit", "submit": "other",
    }  # fmt: skip
    opened = next(c for c in transcript.tool_calls() if c.name == "open")
    assert opened.description == "src/marshmallow/fields.py"


def test_H2_a_rejected_edit_is_an_error() -> None:
    edits = [c for c in turnfold.load(V1).tool_calls() if c.name == "edit"]
    assert [c.status for c in edits] == ["error", "unknown"]


def test_H2_demonstrations_are_not_the_run() -> None:
    transcript = turnfold.load(V0)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["history/demo"] == {"ignored": 1}
    users = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert len(users) == 1
    assert "demonstration" not in users[0].text


def test_H2_str_replace_editor_subcommands_are_named_and_parsed() -> None:
    document = _trajectory(
        _step("str_replace_editor view /repo/a.py --view_range 1 20", "1\timport os"),
        _step(
            "str_replace_editor str_replace /repo/a.py --old_str 'x = 1' --new_str 'x = 2'",
            "The file /repo/a.py has been edited.",
        ),
        _step("str_replace_editor create /repo/b.py --file_text 'print(1)\n'", "File created"),
        _step("str_replace_editor insert /repo/a.py --insert_line 3 --new_str 'y = 0'", "ok"),
    )
    calls = turnfold.load(document).tool_calls()
    assert [(c.name, turnfold.tool_category(c.name)) for c in calls] == [
        ("str_replace_editor view", "read"),
        ("str_replace_editor str_replace", "edit"),
        ("str_replace_editor create", "write"),
        ("str_replace_editor insert", "edit"),
    ]
    assert calls[0].args == {"command": "view", "path": "/repo/a.py", "view_range": [1, 20]}
    assert calls[1].args["old_str"] == "x = 1"
    assert calls[1].args["new_str"] == "x = 2"
    assert [c.description for c in calls] == ["a.py", "a.py", "b.py", "a.py"]


@pytest.mark.parametrize(
    ("observation", "failed"),
    [
        ("bash: line 1: pyhton: command not found", True),
        ('Traceback (most recent call last):\n  File "a.py"\nZeroDivisionError', True),
        ("Error: File 'nope.py' not found", True),
        ("usage: search_dir <search_term> [<dir>]", True),
        ("cat: nope.txt: No such file or directory", True),
        ("Your proposed edit has introduced new syntax error(s).", True),
        ("No replacement was performed, old_str `x` did not appear verbatim", True),
        ("The command 'sleep 99' was cancelled because it took more than 30 seconds.", True),
        ('Found 1 matches for "a.py" in /repo:\n/repo/a.py', False),
        ('No matches found for "foo" in /repo', False),
        ("[File: /repo/a.py (10 lines total)]\n1:import os", False),
        ("", False),
    ],
)
def test_H2_an_observation_that_states_a_failure_is_an_error(
    observation: str, failed: bool
) -> None:
    assert swe_agent.failure_stated(observation) is failed
    [call] = turnfold.load(_trajectory(_step("python a.py", observation))).tool_calls()
    assert call.status == ("error" if failed else "unknown")


@pytest.mark.parametrize(
    ("exit_status", "outcome"),
    [
        ("submitted", None), ("submitted (exit_cost)", "incomplete"),
        ("submitted (exit_context)", "incomplete"), ("exit_cost", "incomplete"),
        ("exit_format", "error"), ("exit_error", "error"), ("exit_api", "error"),
        ("exit_environment_error", "error"), ("exit_command_timeout", "incomplete"),
        ("", None), (None, None),
    ],
)  # fmt: skip
def test_H6_exit_status_as_outcome(exit_status: str | None, outcome: str | None) -> None:
    assert swe_agent.outcome_of(exit_status) == outcome
    metadata = turnfold.load(_trajectory(_step("ls"), exit_status=exit_status)).metadata
    assert metadata.get("outcome") == outcome


def test_H6_info_gives_cost_tokens_and_submission() -> None:
    metadata = turnfold.load(V0).metadata
    assert metadata["agent"] == "swe-agent"
    assert metadata["exit_status"] == "submitted"
    assert metadata["cost_usd"] == pytest.approx(0.53839)
    assert metadata["usage"] == {"input_tokens": 52861, "output_tokens": 326}
    assert metadata["api_calls"] == 5
    assert metadata["submission"].lstrip().startswith("diff --git")
    assert "outcome" not in metadata  # submitted: graded elsewhere


def test_H2_a_traj_wins_detection_over_its_chat_shaped_history() -> None:
    from turnfold.formats import which_format
    from turnfold.formats.source import open_source

    source, stream = open_source(V1)
    try:
        assert which_format(source) == "swe-agent"
    finally:
        assert stream is not None
        stream.close()


def test_L4_bad_steps_and_history_items_warn() -> None:
    document = _trajectory("not a step", _step(""), _step("ls", "a.py"))  # type: ignore[arg-type]
    document["history"].append({"role": "robot", "content": "?"})
    document["attempts"] = [{}, {}]
    transcript = turnfold.load(document)
    assert len(transcript.tool_calls()) == 1
    assert len(transcript.warnings) == 2
    assert transcript.metadata["attempts"] == 2
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert set(transcript.accounting.types("mapped")) <= set(swe_agent.RECORDS.mapped)
    assert set(transcript.accounting.types("ignored")) <= set(swe_agent.RECORDS.ignored)


def test_H2_steps_carry_duration_and_state() -> None:
    call: ToolCall = turnfold.load(_trajectory(_step("ls", "a.py"))).tool_calls()[0]
    assert call.duration_ms == 500.0
    assert call.meta["state"] == {"open_file": "/repo/a.py", "working_dir": "/repo"}


@pytest.mark.parametrize(
    ("report", "outcome"),
    [
        ({"marshmallow-1867": {"resolved": True, "patch_exists": True}}, "pass"),
        ({"marshmallow-1867": {"resolved": False}}, "fail"),
        ({"resolved_ids": [], "unresolved_ids": ["marshmallow-1867"], "error_ids": []}, "fail"),
        ({"resolved_ids": ["marshmallow-1867"], "unresolved_ids": []}, "pass"),
        ({"resolved": [], "error": ["marshmallow-1867"]}, "error"),
        ({"resolved_ids": ["another-instance"]}, None),
    ],
)
def test_H6_a_submitted_run_is_graded_by_the_evaluation_report_beside_it(
    tmp_path: Path, report: dict[str, Any], outcome: str | None
) -> None:
    """SWE-agent writes ``<run>/<instance>/<instance>.traj``; the SWE-bench harness's verdict
    (a per-instance ``report.json`` or the run's report) is the outcome of a submitted run."""
    folder = tmp_path / "run" / "marshmallow-1867"
    folder.mkdir(parents=True)
    traj = folder / "marshmallow-1867.traj"
    traj.write_bytes(V1.read_bytes())
    assert "outcome" not in turnfold.load(traj).metadata  # no report yet
    name = "report.json" if "marshmallow-1867" in report else "results.json"
    where = folder if name == "report.json" else folder.parent
    (where / name).write_text(json.dumps(report), encoding="utf-8")
    metadata = turnfold.load(traj).metadata
    assert metadata.get("outcome") == outcome
    if outcome is not None:
        assert metadata["resolution"] == str(where / name)


def test_H6_an_unreadable_report_gives_no_verdict(tmp_path: Path) -> None:
    traj = tmp_path / "marshmallow-1867.traj"
    traj.write_bytes(V1.read_bytes())
    (tmp_path / "report.json").write_text("{not json", encoding="utf-8")
    transcript = turnfold.load(traj)
    assert "outcome" not in transcript.metadata
    assert transcript.tool_calls()


def test_H6_a_run_s_report_is_parsed_once_for_all_its_trajectories_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnfold.formats.harnesses import swe_agent

    parsed: list[bytes] = []
    real_loads = swe_agent.codec.loads

    def counting(data: Any) -> Any:
        parsed.append(bytes(data))
        return real_loads(data)

    monkeypatch.setattr(swe_agent.codec, "loads", counting)
    swe_agent._report.cache_clear()
    run = tmp_path / "run"
    report = run / "results.json"
    names = [f"instance-{n}" for n in range(3)]
    for name in names:
        (run / name).mkdir(parents=True)
    report.write_text(json.dumps({"resolved": names[:2], "unresolved": names[2:]}), "utf-8")
    outcomes = [swe_agent.resolution(run / name / f"{name}.traj") for name in names]
    assert [o[0] if o else None for o in outcomes] == ["pass", "pass", "fail"]
    assert len(parsed) == 1
    report.write_text(json.dumps({"resolved": names}), "utf-8")  # the evaluation re-ran
    outcome = swe_agent.resolution(run / names[2] / f"{names[2]}.traj")
    assert outcome is not None
    assert outcome[0] == "pass"
    assert len(parsed) == 2


# --- demonstrations: a history without a trajectory ----------------------------------------------


def test_H2_a_demonstration_reads_its_steps_from_the_history() -> None:
    """``trajectories/demonstrations/*.traj``: ``{"history": [...]}``, which SWE-agent loads
    as an example run. It is SWE-agent's, not a Chat message list: the tool results carry
    ``tool_call_ids`` (plural), and each action is one call with the call id it was given."""
    transcript = turnfold.load(DEMO)
    assert transcript.metadata["source_format"] == "swe-agent"
    assert transcript.metadata["demonstration"] is True
    assert transcript.metadata["system"].startswith("SETTING: You are an autonomous programmer")
    calls = transcript.tool_calls()
    assert [c.name for c in calls] == ["find_file", "open", "edit", "bash", "submit"]
    assert calls[0].call_id == "call_PbWErNIge3YTrli3fiVvmIid"
    assert calls[0].result.text.startswith('Found 1 matches for "missing_colon.py"')
    assert calls[-1].result.kind == "diff"
    assert transcript.warnings == []


def test_H2_a_text_demonstration_pairs_each_action_with_the_observation_after_it() -> None:
    history = [
        {"role": "system", "content": "SETTING: ...", "agent": "main"},
        {"role": "user", "content": "Fix the bug.", "agent": "main", "message_type": "observation"},
        {"role": "assistant", "content": "Look first.\n```\nls\n```", "thought": "Look first.",
         "action": "ls", "agent": "main", "message_type": "action"},
        {"role": "user", "content": "a.py", "agent": "main", "message_type": "observation"},
        {"role": "assistant", "content": "Run it.", "thought": "Run it.",
         "action": "python a.py", "agent": "main", "message_type": "action"},
        {"role": "user", "content": "bash: python: command not found", "agent": "main",
         "message_type": "observation"},
        {"role": "assistant", "content": "Done.", "agent": "main", "message_type": "thought"},
    ]  # fmt: skip
    transcript = turnfold.load(json.dumps({"history": history, "replay_config": "{}"}))
    assert transcript.metadata["source_format"] == "swe-agent"
    assert [e.kind for e in transcript] == [
        "user", "assistant", "tool_call", "assistant", "tool_call", "assistant",
    ]  # fmt: skip
    ls, run = transcript.tool_calls()
    assert (ls.call_id, ls.status, ls.result.text) == ("step-1", "unknown", "a.py")
    assert (run.call_id, run.status) == ("step-2", "error")
    assert transcript.accounting.unaccounted == []


def test_H6_the_model_is_the_one_the_run_was_configured_with() -> None:
    """``replay_config`` holds the run's configuration: an object in the trajectories SWE-agent
    keeps, JSON text as 1.x writes it (``model_dump_json``)."""
    path = FIXTURES / "swe-agent_v1_marshmallow-1867_function-calling-replace.traj"
    assert turnfold.load(path).metadata["model"] == "gpt-4o"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["replay_config"] = json.dumps(document["replay_config"])
    assert turnfold.load(json.dumps(document)).metadata["model"] == "gpt-4o"
    document["replay_config"] = "{not json"
    transcript = turnfold.load(json.dumps(document))
    assert "model" not in transcript.metadata
    assert [w.reason for w in transcript.warnings] == [
        "replay_config is not JSON: the run's model is not read"
    ]


def test_H6_a_0x_run_s_model_is_the_one_its_args_yaml_names(tmp_path: Path) -> None:
    """A 0.x trajectory records no model; the ``args.yaml`` SWE-agent wrote beside it (the
    run's arguments) names it under ``agent.model.model_name``: the real run folder's, trimmed
    of most of its commands, read without a YAML parser (turnfold has none)."""
    assert "model" not in turnfold.load(V0).metadata
    run = tmp_path / "gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00"
    run.mkdir()
    traj = run / "swe-agent__test-repo-i1.traj"
    shutil.copy(V0, traj)
    shutil.copy(V0_ARGS, run / "args.yaml")
    assert turnfold.load(traj).metadata["model"] == "gpt4"
    # A quoted name (PyYAML quotes one that would read as another type); a name under another
    # key than the agent's model is not the run's.
    text = V0_ARGS.read_text(encoding="utf-8")
    quoted = text.replace("    model_name: gpt4", "    model_name: 'azure:gpt4 ''mini'''")
    (run / "args.yaml").write_text(quoted, encoding="utf-8")
    assert turnfold.load(traj).metadata["model"] == "azure:gpt4 'mini'"
    elsewhere = text.replace("    model_name: gpt4", "    name: gpt4").replace(
        "environment:\n", "environment:\n  model:\n    model_name: not-the-agent-s\n"
    )
    (run / "args.yaml").write_text(elsewhere, encoding="utf-8")
    assert "model" not in turnfold.load(traj).metadata


def test_H2_a_0x_step_s_state_is_json_text_naming_the_open_file() -> None:
    """SWE-agent 0.x keeps each step's ``state`` as the JSON its state command printed: the
    file an ``edit`` acts on and the working directory are read from it."""
    transcript = turnfold.load(V0)
    document = json.loads(V0.read_text(encoding="utf-8"))
    assert isinstance(document["trajectory"][0]["state"], str)
    edit = next(c for c in transcript.tool_calls() if c.name == "edit")
    assert edit.args["path"] == "/klieret__swe-agent-test-repo/tests/missing_colon.py"
    assert edit.description == "tests/missing_colon.py"
    assert transcript.metadata["cwd"] == "/klieret__swe-agent-test-repo"


def test_U2_zero_stats_of_a_model_that_counted_nothing_are_not_recorded() -> None:
    """V1 was replayed: SWE-agent's replay model counts ``api_calls`` and nothing else
    (``ReplayModel`` in sweagent/agent/models.py), so its ``info`` says 11 calls cost $0 and
    0 tokens. That is no recorded cost (it would win over an estimate, U-2) and no count."""
    document = json.loads(V1.read_text(encoding="utf-8"))
    assert document["info"]["model_stats"] == {
        "instance_cost": 0, "tokens_sent": 0, "tokens_received": 0, "api_calls": 11,
    }  # fmt: skip
    transcript = turnfold.load(V1)
    assert transcript.metadata["api_calls"] == 11
    assert "cost_usd" not in transcript.metadata
    assert "usage" not in transcript.metadata
    facts = session_facts(transcript)
    assert facts.cost is None
    assert facts.tokens == {}
    # A real count stays, and so does a cost of runs that made no call.
    counted = _trajectory(_step("ls"), model_stats={
        "instance_cost": 0, "tokens_sent": 1200, "tokens_received": 0, "api_calls": 1,
    })  # fmt: skip
    metadata = turnfold.load(counted).metadata
    assert metadata["usage"] == {"input_tokens": 1200, "output_tokens": 0}
    assert "cost_usd" not in metadata  # a call LiteLLM could not price
    idle = _trajectory(_step("ls"), model_stats={"instance_cost": 0, "api_calls": 0})
    assert turnfold.load(idle).metadata["cost_usd"] == 0.0


def _ended(path: Path, step: dict[str, Any], exit_status: str) -> dict[str, Any]:
    """The real trajectory at ``path`` ended by SWE-agent itself with ``step``, as its exit
    handling writes it (hand-made from sweagent/agent/agents.py and 0.x's SWEEnv.step)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document["trajectory"][-1:] = [step]  # in place of the submit step
    document["info"]["exit_status"] = exit_status
    return document


def test_H2_swe_agent_s_own_exit_step_is_a_notice_not_the_agent_s_answer() -> None:
    """A 0.x run stopped by the cost limit: SWE-agent's ``forward`` returns the thought "Exit
    due to cost limit" and the action ``exit_cost``, which ``SWEEnv.step`` autosubmits."""
    exit_step = {"action": "exit_cost", "thought": "Exit due to cost limit",
                 "response": "Exit due to cost limit", "observation": "Exited (autosubmitted)",
                 "state": "{}"}  # fmt: skip
    transcript = turnfold.load(_ended(V0, exit_step, "submitted (exit_cost)"))
    assert [c.name for c in transcript.tool_calls()] == ["find_file", "open", "edit", "bash"]
    last = transcript.entries[-1]
    assert isinstance(last, SystemNotice)
    assert (last.level, last.subtype) == ("warning", "exit")
    assert last.text == "Exit due to cost limit\nExited (autosubmitted)"
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert "Exit due to cost limit" not in texts
    assert transcript.metadata["outcome"] == "incomplete"


def test_H2_swe_agent_s_exit_on_an_error_is_an_error() -> None:
    """A 1.x run ended by a runtime error: ``handle_error_with_autosubmission`` writes a step
    with SWE-agent's message as its thought and no action."""
    exit_step = {"action": "", "thought": "Exit due to runtime error: the shell died",
                 "response": "Exit due to runtime error: the shell died",
                 "observation": "Exited (autosubmitted)", "execution_time": 0.0,
                 "state": {}}  # fmt: skip
    transcript = turnfold.load(_ended(V1, exit_step, "submitted (exit_error)"))
    last = transcript.entries[-1]
    assert isinstance(last, AssistantError)
    assert last.message == "Exit due to runtime error: the shell died\nExited (autosubmitted)"
    assert len(transcript.tool_calls()) == 10
    assert session_facts(transcript).outcome == "error"
    assert transcript.warnings == []
