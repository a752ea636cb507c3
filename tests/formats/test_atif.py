"""ATIF trajectories (Harbor's ``trajectory.json``): the fixtures Harbor's own converters made
of real Claude Code 2.1.332 and Codex 0.171.0 sessions (the ``work`` scenario of tests/agents),
and a Terminus 2 trial built from Harbor's models (``fixtures/harnesses/atif/atif_recipe.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.formats.harnesses import atif
from turnfold.model import SubAgent, SystemNotice, Thinking, ToolCall, UserMessage
from turnfold.session import session_facts

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "atif"
CLAUDE = HERE / "claude-code_v2.1.332_harbor-0.26.0.trajectory.json"
CODEX = HERE / "codex_v0.171.0_harbor-0.26.0.trajectory.json"
TRIAL = HERE / "terminus-2" / "trial"
TERMINUS = TRIAL / "agent" / "trajectory.json"


def test_a_converted_claude_code_run_keeps_its_calls_outcomes_usage_and_sub_agent() -> None:
    transcript = turnfold.load(CLAUDE)
    assert transcript.metadata["source_format"] == "atif"
    assert transcript.metadata["agent"] == "claude-code"
    assert transcript.metadata["version"] == "2.1.332"
    # Harbor priced the run with litellm and says so (cost_source): an estimate, not a cost
    # the source recorded (U-2), so it is shown as turnfold's own, marked estimated.
    assert transcript.metadata["cost_estimate_usd"] == pytest.approx(0.627594)
    assert "cost_usd" not in transcript.metadata
    cost = session_facts(transcript).cost
    assert cost is not None
    assert not cost.recorded
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [c.name for c in calls] == [
        "Read", "Bash", "Bash", "Bash", "Bash", "Edit", "Write", "Bash", "Agent", "Bash",
    ]  # fmt: skip
    # The scenario's one failing command: Harbor keeps Claude Code's is_error in the result's
    # extra (tool_result_metadata), ATIF itself has no flag.
    failed = [c for c in calls if c.status == "error"]
    assert [c.args["command"] for c in failed] == ["echo TF-FAIL-OUT; ls /tf-missing; exit 3"]
    assert failed[0].result is not None
    assert "TF-FAIL-OUT" in (failed[0].result.text or "")
    assert all(c.status == "success" for c in calls if c not in failed)
    assert isinstance(transcript.entries[1], Thinking)
    assert transcript.entries[1].text == "TF-THINK: read, search and list at once."
    # The sub-agent's steps, flattened in by the converter (extra.is_sidechain), nest under
    # the Agent call: its prompt is no turn of the session.
    agent_call = next(c for c in calls if c.name == "Agent")
    assert isinstance(agent_call.subagent, SubAgent)
    assert agent_call.subagent.task == "TF-SUBTASK: echo a word and report back."
    assert agent_call.subagent.transcript is not None
    assert [c.args for c in agent_call.subagent.transcript.tool_calls()] == [
        {"command": "echo TF-SUB-OK", "description": "scripted command"}
    ]
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
        "TF-SECOND: one more check after the resume, please.",
    ]
    # Each step's metrics are its response's usage; prompt_tokens counts the cached ones.
    first = transcript.entries[1].usage
    assert first is not None
    assert (first.input_tokens, first.output_tokens) == (3150, 15)
    assert (first.cache_read_tokens, first.cache_write_tokens) == (1020, 1030)
    row = turnfold.scan([CLAUDE], cache=False, workers=1).to_pandas().iloc[0]
    assert (row["turns"], row["tool_calls"], row["failed_tools"], row["subagents"]) == (2, 10, 1, 1)


def test_a_converted_codex_run_fails_by_codex_s_exit_code_and_hides_its_injected_context() -> None:
    transcript = turnfold.load(CODEX)
    calls = transcript.tool_calls()
    failed = [c for c in calls if c.status == "error"]
    assert [c.args["cmd"] for c in failed] == ["echo TF-FAIL-OUT; ls /tf-missing; exit 3"]
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
        "TF-SECOND: one more check after the resume, please.",
    ]
    assert transcript.accounting is not None
    # Two of the run's own, one of its spawned agent's (its environment context).
    assert transcript.accounting.counts["injected context"] == {"ignored": 3}
    assert transcript.metadata["system"].startswith("<skills_instructions>")


def test_a_terminus_trial_reads_its_batches_summarization_continuation_and_reward() -> None:
    transcript = turnfold.load(TERMINUS)
    assert transcript.warnings == []
    meta = transcript.metadata
    assert (meta["agent"], meta["score"], meta["task"]) == ("terminus-2", 1.0, "fix-tests")
    assert meta["system"] == "You are an AI assistant solving tasks in a Linux terminal."
    calls = transcript.tool_calls()
    # Two commands sent to one terminal share its output: the last shows it.
    ls, pytest_run = calls[0], calls[1]
    assert ls.result is None
    assert ls.status == "success"
    assert pytest_run.result is not None
    assert "1 failed" in (pytest_run.result.text or "")
    # The summarization hand-off: three sub-agent files, each a delegate call of the harness.
    delegates = [c for c in calls if c.name == "delegate"]
    assert [c.subagent.name for c in delegates if c.subagent] == [
        "terminus-2-summarization-summary",
        "terminus-2-summarization-questions",
        "terminus-2-summarization-answers",
    ]
    assert all(c.meta == {"system": True} for c in delegates)
    summary = delegates[0].subagent
    assert summary is not None
    assert summary.transcript is not None
    assert summary.transcript.entries[-1].text == "SUMMARY: the tests ran; one failed."  # type: ignore[attr-defined]
    # The continuation is read on, past the steps it copied from this file.
    notices = [e.text for e in transcript.entries if isinstance(e, SystemNotice)]
    assert "Continued in trajectory.cont-1.json." in notices
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "Run the tests and fix what fails.",
        "Summary of the work so far: test_two failed with exit 1.",
    ]
    assert calls[-1].name == "mark_task_complete"
    assert calls[-1].status == "success"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["copied context"] == {"ignored": 2}


def test_a_continuation_loaded_alone_shows_the_context_it_copied() -> None:
    transcript = turnfold.load(TERMINUS.with_name("trajectory.cont-1.json"))
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts[0] == "Run the tests and fix what fails."


def test_a_scan_of_a_trial_folder_is_one_row_with_its_reward() -> None:
    corpus = turnfold.scan(HERE / "terminus-2", cache=False, workers=1)
    frame = corpus.to_pandas()
    assert list(frame["key"].map(lambda k: Path(k).name)) == ["trajectory.json"]
    assert frame.iloc[0]["score"] == 1.0
    assert frame.iloc[0]["subagents"] == 3


def _trajectory(steps: list[dict[str, object]], **more: object) -> dict[str, object]:
    return {"schema_version": "ATIF-v1.6", "session_id": "s", "steps": steps,
            "agent": {"name": "tester", "version": "1"}, **more}  # fmt: skip


def test_a_subagent_path_outside_the_folder_is_never_opened(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(_trajectory([{"step_id": 1, "source": "user", "message": "x"}])))
    inner = tmp_path / "run"
    inner.mkdir()
    refs = [{"trajectory_path": "../secret.json"}, {"trajectory_path": str(secret)},
            {"trajectory_path": "s3://bucket/t.json"}]  # fmt: skip
    step = {"step_id": 1, "source": "system", "message": "hand-off",
            "observation": {"results": [{"subagent_trajectory_ref": refs}]}}  # fmt: skip
    path = inner / "trajectory.json"
    path.write_text(json.dumps(_trajectory([step])))
    transcript = turnfold.load(path)
    delegates = transcript.tool_calls()
    assert len(delegates) == 3
    assert all(c.subagent is not None and c.subagent.steps_missing for c in delegates)
    reasons = " ".join(w.reason for w in transcript.warnings)
    assert reasons.count("not a plain name under the trajectory's folder") == 3


def test_a_continuation_that_names_itself_stops_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    first = {"step_id": 1, "source": "user", "message": "go"}
    path.write_text(json.dumps(_trajectory([first], continued_trajectory_ref="trajectory.json")))
    transcript = turnfold.load(path)
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == ["go"]
    assert any("read already" in w.reason for w in transcript.warnings)


def test_a_result_flag_or_an_unknown_call_id_is_not_lost(tmp_path: Path) -> None:
    step = {
        "step_id": 1, "source": "agent", "message": "",
        "tool_calls": [{"tool_call_id": "c1", "function_name": "run", "arguments": {"x": 1}}],
        "observation": {"results": [
            {"source_call_id": "c1", "content": "boom", "is_error": True},
            {"source_call_id": "c9", "content": "orphan output"},
        ]},
        "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.5},
    }  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_trajectory([step])))
    transcript = turnfold.load(path)
    (call,) = transcript.tool_calls()
    assert (call.status, call.result and call.result.text) == ("error", "boom")
    assert call.usage is not None
    assert call.usage.input_tokens == 10
    assert call.meta["cost_usd"] == 0.5
    assert any("c9" in w.reason for w in transcript.warnings)
    assert any(isinstance(e, SystemNotice) and e.text == "orphan output"
               for e in transcript.entries)  # fmt: skip


def test_detection_tells_atif_from_the_other_formats(tmp_path: Path) -> None:
    copy = tmp_path / "anything.json"
    shutil.copy(TERMINUS, copy)
    assert turnfold.load(copy).metadata["source_format"] == "atif"  # its folder's files absent
    assert atif.is_trajectory(json.loads(CLAUDE.read_text()))
    assert not atif.is_trajectory({"messages": [], "info": {}})
    assert isinstance(turnfold.load(CLAUDE).tool_calls()[0], ToolCall)


def test_U2_a_continued_run_costs_what_its_last_file_totals() -> None:
    """Terminus 2 writes its running totals in each file of a continued run: the first file's
    are the run's so far (its chat's two calls), the last file's the whole run's (three calls
    of its own and three of its summarization sub-agents), which its steps add up to."""
    first = json.loads(TERMINUS.read_text(encoding="utf-8"))["final_metrics"]
    last = json.loads(TERMINUS.with_name("trajectory.cont-1.json").read_text(encoding="utf-8"))
    assert (first["total_cost_usd"], last["final_metrics"]["total_cost_usd"]) == (0.004, 0.012)
    transcript = turnfold.load(TERMINUS)
    assert transcript.metadata["cost_usd"] == pytest.approx(0.012)
    facts = turnfold.session.session_facts(transcript)
    assert facts.cost is not None
    assert facts.cost.usd == pytest.approx(0.012)
    assert facts.tokens["input_tokens"] == last["final_metrics"]["total_prompt_tokens"]


def test_U1_a_continued_run_without_step_metrics_counts_its_last_file_s_totals(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "agent"
    shutil.copytree(TRIAL / "agent", agent)
    for name in ("trajectory.json", "trajectory.cont-1.json"):
        document = json.loads((agent / name).read_text(encoding="utf-8"))
        for step in document["steps"]:
            step.pop("metrics", None)
        (agent / name).write_text(json.dumps(document), encoding="utf-8")
    metadata = turnfold.load(agent / "trajectory.json").metadata
    assert metadata["usage"] == {"input_tokens": 7200, "output_tokens": 480,
                                 "cache_read_tokens": 6000}  # fmt: skip
    assert metadata["cost_usd"] == pytest.approx(0.012)


@pytest.mark.parametrize(
    ("rewards", "exception", "outcome"),
    [
        ({"reward": 1.0}, None, "pass"),
        ({"reward": 0.0}, None, "fail"),
        ({"reward": 0.5}, None, None),  # a partial reward says nothing
        ({"tests": 1, "lint": 0}, None, "fail"),
        ({"reward": 1.0}, "AgentTimeoutError", "incomplete"),
        ({"reward": 0.0}, "ContextWindowExceededError", "incomplete"),
        (None, "RewardFileNotFoundError", "error"),
        ({"reward": 1.0}, "NonZeroAgentExitCodeError", "error"),
    ],
)
def test_H6_a_trial_s_outcome_is_its_reward_unless_it_raised(
    tmp_path: Path, rewards: dict[str, float] | None, exception: str | None, outcome: str | None
) -> None:
    """Harbor's reward is the verifier's verdict (1.0 when the task's tests pass); a trial
    stopped by a limit (error_policy.py: agent timeout, context or output exceeded) is
    incomplete, one that raised anything else an error."""
    trial = tmp_path / "trial"
    shutil.copytree(TRIAL, trial)
    result = json.loads((trial / "result.json").read_text(encoding="utf-8"))
    result["verifier_result"] = None if rewards is None else {"rewards": rewards}
    if exception is not None:
        result["exception_info"] = {
            "exception_type": exception,
            "exception_message": "stopped",
            "exception_traceback": "",
            "occurred_at": "2026-12-05T10:00:06Z",
        }
    (trial / "result.json").write_text(json.dumps(result), encoding="utf-8")
    transcript = turnfold.load(trial / "agent" / "trajectory.json")
    assert transcript.metadata.get("outcome") == outcome
    assert turnfold.session.session_facts(transcript).outcome == outcome


def test_F7_a_spawned_codex_agent_embedded_without_a_ref_nests_under_its_spawn_call() -> None:
    """Harbor's Codex converter embeds the spawned agent's rollout in
    ``subagent_trajectories`` and refers to it from no step (only a result naming a task path
    gets a ref): the run nests under the ``spawn_agent`` call whose result names its id."""
    document = json.loads(CODEX.read_text(encoding="utf-8"))
    [embedded] = document["subagent_trajectories"]
    refs = [r.get("subagent_trajectory_ref") for s in document["steps"]
            for r in (s.get("observation") or {}).get("results", [])]  # fmt: skip
    assert not any(refs)
    transcript = turnfold.load(CODEX)
    assert transcript.warnings == []
    spawn = next(c for c in transcript.tool_calls() if c.name == "spawn_agent")
    assert spawn.subagent is not None
    assert spawn.subagent.agent_id == embedded["trajectory_id"]
    assert spawn.subagent.task == "TF-SUBTASK: echo a word and report back."
    child = spawn.subagent.transcript
    assert child is not None
    assert [c.args for c in child.tool_calls()] == [{"cmd": "echo TF-SUB-OK"}]
    assert child.entries[-1].text == "TF-SUB-DONE: the sub-agent echoed its word."  # type: ignore[attr-defined]
    facts = turnfold.session.session_facts(transcript)
    assert facts.subagent_tokens["input_tokens"] == embedded["final_metrics"]["total_prompt_tokens"]
    # A run that no call names is a delegate call of its own: never dropped.
    document["steps"] = [s for s in document["steps"]
                         if not any(c["function_name"] == "spawn_agent"
                                    for c in s.get("tool_calls") or [])]  # fmt: skip
    alone = turnfold.load(document)
    delegate = alone.tool_calls()[-1]
    assert (delegate.name, delegate.meta) == ("delegate", {"system": True})
    assert delegate.subagent is not None
    assert delegate.subagent.agent_id == embedded["trajectory_id"]
