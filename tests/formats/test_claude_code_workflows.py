"""Claude Code's Workflow tool: each run's agents nest under the call that launched it (spec L-1
sub-agents, L-4 warnings, X-1 paths, X-2 nothing lost, C-1 sub-agent files are the session's).

Shapes: the ``toolUseResult`` is Claude Code's own ``WorkflowOutput`` type (``sdk-tools.d.ts`` of
``@anthropic-ai/claude-code`` 2.1.332: ``status``, ``taskId``, ``taskType``, ``workflowName``,
``runId``, ``summary``, ``transcriptDir``, ``scriptPath``); the run's snapshot
``<session>/workflows/<runId>.json`` has the fields the same build writes (``status``,
``workflowName``, ``summary``, ``durationMs``, ``agentCount``, ``totalToolCalls``, ``error``,
``result``, ``workflowProgress`` items of type ``workflow_agent``); the journal's
``started``/``result`` records follow daaain/claude-code-log's
``test/test_data/workflow_scriptpath`` (MIT). Everything here is written by hand in those shapes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.formats.test_claude_code import Session, text, tool_use
from turnfold import ToolCall, Transcript, load, scan
from turnfold.tools import format_subagent_line

SESSION = "sess-1"
RUN = "wf_a1b2c3d4-e5f"


def workflow_session(run_id: str | None = RUN, *, result: bool = True) -> Session:
    s = Session(session_id=SESSION)
    s.user("Sweep the docs")
    s.assistant("m1", text("Launching."), tool_use("wf1", "Workflow", script="export const meta"))
    if result:
        extra: dict[str, Any] = {
            "status": "async_launched",
            "taskId": "wtask01",
            "taskType": "local_workflow",
            "workflowName": "docs-sweep",
            "summary": "Sweep the docs in batches",
            # An absolute path of the machine that wrote the file: never followed.
            "transcriptDir": f"/home/someone/.claude/projects/-repo/{SESSION}/subagents/"
            f"workflows/{run_id}",
        }
        if run_id is not None:
            extra["runId"] = run_id
        launch = f"Workflow launched in background. Task ID: wtask01\nRun ID: {run_id}"
        s.result("wf1", launch, toolUseResult=extra)
        s.assistant("m2", text("It runs in the background."))
    return s


def agent_file(path: Path, agent_id: str, prompt: str, answer: str) -> None:
    s = Session(session_id=f"{SESSION}#agent-{agent_id}")
    fields = {"isSidechain": True, "agentId": agent_id}
    s.user(prompt, parent=None, **fields)
    s.assistant(f"{agent_id}-m1", tool_use(f"{agent_id}-t1", "Grep", pattern="x"), **fields)
    s.result(f"{agent_id}-t1", "a.md:1: x", **fields)
    s.assistant(f"{agent_id}-m2", text(answer), **fields)
    s.write(path / f"agent-{agent_id}.jsonl")
    meta = {"agentType": "workflow-subagent"}
    (path / f"agent-{agent_id}.meta.json").write_text(json.dumps(meta), encoding="utf-8")


def progress(index: int, agent_id: str, label: str, state: str, **more: Any) -> dict[str, Any]:
    return {"type": "workflow_agent", "index": index, "label": label, "phaseIndex": 1,
            "phaseTitle": "Sweep", "agentId": agent_id, "state": state, **more}  # fmt: skip


def snapshot(tmp_path: Path, run_id: str = RUN, **fields: Any) -> None:
    value = {
        "runId": run_id,
        "taskId": "wtask01",
        "timestamp": "2026-01-01T00:05:00.000Z",
        "workflowName": "docs-sweep",
        "summary": "Sweep the docs in batches",
        **fields,
    }
    folder = tmp_path / SESSION / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{run_id}.json").write_text(json.dumps(value), encoding="utf-8")


def two_agent_run(tmp_path: Path) -> Path:
    """A finished run of two agents: ``ag2`` started first (index 0), ``ag1`` second."""
    path = workflow_session().write(tmp_path / f"{SESSION}.jsonl")
    run = tmp_path / SESSION / "subagents" / "workflows" / RUN
    run.mkdir(parents=True)
    agent_file(run, "ag2", "Sweep batch a\nof the docs", "Batch a swept.")
    agent_file(run, "ag1", "Sweep batch b", "Batch b: 2 stale pages.")
    journal = [
        {"type": "started", "key": "v2:h0", "agentId": "ag2"},
        {"type": "started", "key": "v2:h1", "agentId": "ag1"},
        {"type": "result", "key": "v2:h0", "agentId": "ag2", "result": "Batch a swept."},
        {"type": "result", "key": "v2:h1", "agentId": "ag1", "result": "Batch b: 2 stale pages."},
    ]
    (run / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in journal))
    snapshot(
        tmp_path,
        status="completed",
        durationMs=4200,
        agentCount=2,
        totalTokens=999,
        totalToolCalls=2,
        result={"swept": 2},
        workflowProgress=[
            {"type": "workflow_phase", "index": 1, "title": "Sweep"},
            progress(0, "ag2", "sweep:a", "start"),
            progress(1, "ag1", "sweep:b", "error", error="rate limited", durationMs=700),
            progress(0, "ag2", "sweep:a", "done", toolCalls=1, durationMs=900, tokens=55),
        ],
    )
    return path


def workflow_call(transcript: Transcript) -> ToolCall:
    return next(c for c in transcript.tool_calls() if c.name == "Workflow")


def test_L1_workflow_agents_nest_under_their_workflow_call(tmp_path: Path) -> None:
    transcript = load(two_agent_run(tmp_path))
    assert transcript.warnings == []
    # The agents' entries live only under the call; the session reads as it did.
    assert [e.kind for e in transcript] == ["user", "assistant", "tool_call", "assistant"]
    call = workflow_call(transcript)
    run = call.subagent
    assert run is not None
    assert run.transcript is not None
    assert (run.name, run.task) == ("docs-sweep", "Sweep the docs in batches")
    assert (run.tool_count, run.subagent_count, run.duration_ms) == (2, 2, 4200.0)
    assert run.transcript.metadata["workflow_run"] == RUN
    # One `agent` call per agent, in the snapshot's order; each agent's transcript under it.
    agents = run.transcript.tool_calls()
    assert [(a.name, a.description, a.status) for a in agents] == [
        ("agent", "sweep:a", "success"),
        ("agent", "sweep:b", "error"),
    ]
    first, second = agents
    assert first.subagent is not None
    assert first.subagent.transcript is not None
    assert (first.subagent.name, first.subagent.task) == ("sweep:a", "Sweep batch a")
    assert first.subagent.agent_id == "ag2"
    assert [e.kind for e in first.subagent.transcript] == ["user", "tool_call", "assistant"]
    assert first.result is not None
    assert first.result.text == "Batch a swept."
    assert format_subagent_line(first) == "✔ sweep:a: Sweep batch a · 1 tool · 900ms"
    assert second.subagent is not None
    assert format_subagent_line(second) == "✖ sweep:b: Sweep batch b · 700ms · rate limited"
    # The background call's outcome comes from the run's snapshot, its result appended.
    assert call.status == "success"
    assert call.result is not None
    assert call.result.text.endswith('"swept": 2\n}')
    assert format_subagent_line(call) == (
        "✔ docs-sweep: Sweep the docs in batches · 2 tools · 2 sub-agents · 4.2s"
    )
    nested = transcript.tool_calls(nested=True)
    assert [c.name for c in nested] == ["Workflow", "agent", "Grep", "agent", "Grep"]


def test_X2_workflow_agent_records_are_accounted_for(tmp_path: Path) -> None:
    transcript = load(two_agent_run(tmp_path))
    counts = transcript.accounting.counts
    # 4 records in the session, 4 in each agent file (user, assistant, result, assistant).
    assert sum(sum(by.values()) for by in counts.values()) == 12


def test_L1_workflow_agents_without_a_snapshot_come_in_journal_order(tmp_path: Path) -> None:
    path = two_agent_run(tmp_path)
    (tmp_path / SESSION / "workflows" / f"{RUN}.json").unlink()
    call = workflow_call(load(path))
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    agents = call.subagent.transcript.tool_calls()
    assert [(a.subagent.agent_id if a.subagent else None) for a in agents] == ["ag2", "ag1"]
    # Without the snapshot no outcome is recorded: unknown, never invented (L-3).
    assert [a.status for a in agents] == ["unknown", "unknown"]
    assert call.status == "unknown"
    assert agents[1].result is not None
    assert agents[1].result.text == "Batch b: 2 stale pages."


def test_L1_a_listed_agent_without_a_file_says_so(tmp_path: Path) -> None:
    path = two_agent_run(tmp_path)
    (tmp_path / SESSION / "subagents" / "workflows" / RUN / "agent-ag1.jsonl").unlink()
    call = workflow_call(load(path))
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    missing = call.subagent.transcript.tool_calls()[1]
    assert missing.subagent is not None
    assert missing.subagent.transcript is None
    assert missing.subagent.steps_missing
    assert "not recorded" in format_subagent_line(missing)


def test_L4_a_run_with_no_files_says_so_and_warns(tmp_path: Path) -> None:
    path = workflow_session().write(tmp_path / f"{SESSION}.jsonl")
    transcript = load(path)
    call = workflow_call(transcript)
    assert call.subagent is not None
    assert call.subagent.transcript is None
    assert call.subagent.steps_missing
    assert (
        format_subagent_line(call)
        == "• docs-sweep: Sweep the docs in batches · steps not recorded in this file"
    )
    [warning] = transcript.warnings
    assert RUN in warning.reason
    assert "no agent transcripts" in warning.reason
    assert warning.line == 3  # the Workflow call's result line
    # Read from text there is no directory to look in: nothing is claimed missing.
    from_text = workflow_call(load(path.read_text(encoding="utf-8")))
    assert from_text.subagent is not None
    assert not from_text.subagent.steps_missing
    assert load(path.read_text(encoding="utf-8")).warnings == []


def test_L1_a_run_that_failed_before_any_agent_is_no_missing_file(tmp_path: Path) -> None:
    path = workflow_session().write(tmp_path / f"{SESSION}.jsonl")
    error = "Error: undefined is not an object (evaluating 'batches.map')\n    at workflow.js:9"
    snapshot(tmp_path, status="failed", agentCount=0, durationMs=12, error=error,
             workflowProgress=[])  # fmt: skip
    transcript = load(path)
    call = workflow_call(transcript)
    assert transcript.warnings == []
    assert call.status == "error"
    assert call.subagent is not None
    assert not call.subagent.steps_missing
    assert call.subagent.reason == "Error: undefined is not an object (evaluating 'batches.map')"
    assert format_subagent_line(call).endswith("· 12ms · " + call.subagent.reason)


def test_L2_the_task_notification_settles_the_workflow_call(tmp_path: Path) -> None:
    s = workflow_session()
    note = (
        "<task-notification>\n<task-id>wtask01</task-id>\n<status>completed</status>\n"
        '<summary>Dynamic workflow "docs-sweep" completed</summary>\n</task-notification>'
    )
    s.user(note, origin={"kind": "task-notification"})
    transcript = load(s.text())
    call = workflow_call(transcript)
    assert call.status == "success"
    assert call.result is not None
    assert "completed" in call.result.text
    assert not any(e.kind == "system" for e in transcript)  # not left as a stray notice


def test_L4_a_run_no_call_names_is_shown_at_the_end_with_a_warning(tmp_path: Path) -> None:
    """The session was killed before the Workflow result line was written."""
    path = workflow_session(result=False).write(tmp_path / f"{SESSION}.jsonl")
    run = tmp_path / SESSION / "subagents" / "workflows" / RUN
    run.mkdir(parents=True)
    agent_file(run, "ag1", "Sweep batch b", "Done.")
    transcript = load(path)
    last = transcript.entries[-1]
    assert isinstance(last, ToolCall)
    assert last.meta["synthetic"] == "unclaimed workflow run"
    assert last.subagent is not None
    assert last.subagent.transcript is not None
    [agent] = last.subagent.transcript.tool_calls()
    assert agent.subagent is not None
    assert agent.subagent.transcript is not None
    assert any("names no Workflow call" in w.reason for w in transcript.warnings)


def test_L1_a_cached_agent_s_steps_are_shown_once_under_the_run_it_ran_in(
    tmp_path: Path,
) -> None:
    """Resumed with ``resumeFromRunId``: a replayed agent did not run again; its file is in the
    earlier run, shown under that run (here named by no call: at the end), never twice."""
    path = workflow_session().write(tmp_path / f"{SESSION}.jsonl")
    earlier = tmp_path / SESSION / "subagents" / "workflows" / "wf_earlier"
    earlier.mkdir(parents=True)
    agent_file(earlier, "ag9", "Sweep batch a", "Swept before.")
    snapshot(
        tmp_path,
        status="completed",
        agentCount=1,
        workflowProgress=[progress(0, "ag9", "sweep:a", "done", cached=True, resultPreview="ok")],
    )
    transcript = load(path)
    first, second = [c for c in transcript.tool_calls() if c.name == "Workflow"]
    assert first.subagent is not None
    assert first.subagent.transcript is not None
    [replayed] = first.subagent.transcript.tool_calls()
    assert replayed.meta["cached"] is True
    assert replayed.description == "sweep:a (from an earlier run)"
    assert replayed.subagent is not None
    assert replayed.subagent.transcript is None
    assert not replayed.subagent.steps_missing
    assert second.meta["synthetic"] == "unclaimed workflow run"
    assert second.subagent is not None
    assert second.subagent.transcript is not None
    [ran] = second.subagent.transcript.tool_calls()
    assert ran.subagent is not None
    assert ran.subagent.transcript is not None
    assert sum(c.name == "Grep" for c in transcript.tool_calls(nested=True)) == 1


def test_X1_run_and_agent_ids_never_leave_the_session_directory(tmp_path: Path) -> None:
    path = workflow_session(run_id="../../x").write(tmp_path / "p" / f"{SESSION}.jsonl")
    secret = tmp_path / "x"
    secret.mkdir()
    agent_file(secret, "ag1", "secret", "secret")
    (tmp_path / "p" / SESSION / "workflows").mkdir(parents=True)
    call = workflow_call(load(path))
    assert call.subagent is not None
    assert call.subagent.transcript is None


def test_C1_workflow_agent_files_are_the_session_s_not_rows(tmp_path: Path) -> None:
    two_agent_run(tmp_path)
    corpus = scan(tmp_path, workers=1, cache=False)
    rows = {Path(r["path"]).relative_to(tmp_path).as_posix(): r for r in corpus}
    assert list(rows) == [f"{SESSION}.jsonl"]
    # The Workflow call and its two agents are the row's sub-agent runs.
    assert rows[f"{SESSION}.jsonl"]["subagents"] == 3


def test_C1_workflow_agent_files_without_their_session_stay_rows(tmp_path: Path) -> None:
    two_agent_run(tmp_path)
    (tmp_path / f"{SESSION}.jsonl").unlink()
    corpus = scan(tmp_path, workers=1, cache=False)
    paths = sorted(Path(r["path"]).name for r in corpus)
    assert paths == ["agent-ag1.jsonl", "agent-ag2.jsonl"]


# --- a run written by the real Claude Code ------------------------------------------------------

REAL = Path(__file__).parent.parent / "fixtures" / "claude-code" / "v2.1.332_workflow"
REAL_SESSION = "11111111-2222-3333-4444-666666666666"


def test_L1_a_real_workflow_run_nests_as_claude_code_2_1_332_wrote_it() -> None:
    """Claude Code 2.1.332 against the scripted model (``tests/fixtures/SOURCES.md``): a
    Workflow script running two agents in parallel, each running one command."""
    session = REAL / f"{REAL_SESSION}.jsonl"
    run_dir = next((REAL / REAL_SESSION / "subagents" / "workflows").iterdir())
    snapshot_file = REAL / REAL_SESSION / "workflows" / f"{run_dir.name}.json"
    raw = json.loads(snapshot_file.read_text(encoding="utf-8"))
    listed = [p for p in raw["workflowProgress"] if p["type"] == "workflow_agent"]
    transcript = load(session)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    call = workflow_call(transcript)
    run = call.subagent
    assert run is not None
    assert run.transcript is not None
    assert (run.name, run.task) == (raw["workflowName"], raw["summary"])
    assert (run.tool_count, run.duration_ms) == (raw["totalToolCalls"], raw["durationMs"])
    assert call.status == "success"  # its task notification: <status>completed</status>
    agents = run.transcript.tool_calls()
    assert [a.subagent.agent_id for a in agents if a.subagent] == [p["agentId"] for p in listed]
    for agent, item in zip(agents, listed, strict=True):
        assert agent.subagent is not None
        assert agent.subagent.transcript is not None
        assert (agent.description, agent.status) == (item["label"], "success")
        # The task is what the script computed, not the harness's frame around it.
        assert agent.subagent.task == item["promptPreview"]
        assert agent.result is not None
        assert agent.result.text == item["resultPreview"]
        [command] = agent.subagent.transcript.tool_calls()
        assert (command.name, command.status) == ("Bash", "success")
    corpus = scan(REAL, workers=1, cache=False)
    assert [Path(r["path"]).name for r in corpus] == [session.name]


def test_L1_without_its_snapshot_a_real_agent_s_task_is_its_prompt_unframed(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(REAL, copy)
    shutil.rmtree(copy / REAL_SESSION / "workflows")
    call = workflow_call(load(copy / f"{REAL_SESSION}.jsonl"))
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    tasks = [a.subagent.task for a in call.subagent.transcript.tool_calls() if a.subagent]
    assert tasks == ["TF-WF-AGENT a: echo a", "TF-WF-AGENT b: echo b"]  # the journal's order
