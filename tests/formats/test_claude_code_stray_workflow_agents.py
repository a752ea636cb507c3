"""An agent's file directly in ``<session>/subagents/workflows/``, in no run's folder (spec L-4
bad input, X-2 nothing lost, C-1 the corpus counts its files as the session's).

The corpus counts ``agent-*.jsonl`` there as the session's file (``is_subagent_file``: its name
is a sub-agent's), so it is no row of its own; Claude Code writes a run's agents only in the
run's folder (2.1.332's ``runAgent``: ``transcriptSubdir: runId ? `workflows/${runId}` :
undefined``; with no run id an agent's file goes to ``subagents/`` itself), so no run names
one there. The loader says it in a warning naming the file and does not read it, never passes
it over in silence. Each case is the real 2.1.332 run (``tests/fixtures/claude-code/
v2.1.332_workflow``) copied, with an agent's file put one level up from its run's folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.formats.test_claude_code_workflow_folder_names import (
    RUN,
    SESSION,
    real_copy,
    runs_folder,
)
from turnfold import ToolCall, Transcript, load, scan


def agent_files(copy: Path) -> list[Path]:
    return sorted((runs_folder(copy) / RUN).glob("agent-*.jsonl"))


def nested_texts(transcript: Transcript) -> list[str]:
    """Every text the load shows, down every sub-agent: what a file read would add to."""
    texts = [getattr(e, "text", "") for e in transcript.entries]
    for call in transcript.tool_calls(nested=True):
        agent = call.subagent
        if agent is not None and agent.transcript is not None:
            texts += [getattr(e, "text", "") for e in agent.transcript.entries]
    return texts


def test_L4_an_agent_file_beside_the_runs_is_said_and_not_read(tmp_path: Path) -> None:
    before = load(real_copy(tmp_path / "before") / f"{SESSION}.jsonl")
    copy = real_copy(tmp_path)
    stray = runs_folder(copy) / "agent-a0000000000000001.jsonl"
    shutil.copyfile(agent_files(copy)[0], stray)
    transcript = load(copy / f"{SESSION}.jsonl")
    [warning] = transcript.warnings
    assert warning.reason == (
        f"agent file {stray.name} in {runs_folder(copy)} is not inside a workflow run's "
        "folder, where Claude Code writes a run's agents: no run names it, not read"
    )
    # The run reads as it did: the stray copy adds no call, and nothing of it is shown twice.
    assert nested_texts(transcript) == nested_texts(before)
    calls = [c.call_id for c in transcript.tool_calls(nested=True)]
    assert calls == [c.call_id for c in before.tool_calls(nested=True)]


def test_L4_a_stray_agent_file_is_said_when_no_run_is_there(tmp_path: Path) -> None:
    """The runs folder holding nothing but the stray file: no run to show, the file still said."""
    copy = real_copy(tmp_path)
    source = agent_files(copy)[0]
    moved = runs_folder(copy) / source.name
    shutil.move(source, moved)
    shutil.rmtree(runs_folder(copy) / RUN)
    (copy / SESSION / "workflows" / f"{RUN}.json").unlink()
    transcript = load(copy / f"{SESSION}.jsonl")
    strays = [w for w in transcript.warnings if w.reason.startswith(f"agent file {moved.name}")]
    assert len(strays) == 1
    assert "not inside a workflow run's folder" in strays[0].reason
    workflow = next(c for c in transcript.tool_calls() if c.name == "Workflow")
    assert isinstance(workflow, ToolCall)
    assert workflow.subagent is not None
    assert workflow.subagent.transcript is None


def test_L4_every_stray_is_said_in_name_order_and_other_files_pass(tmp_path: Path) -> None:
    copy = real_copy(tmp_path)
    first, *_ = agent_files(copy)
    for name in ("agent-b2.jsonl", "agent-a1.jsonl"):
        shutil.copyfile(first, runs_folder(copy) / name)
    (runs_folder(copy) / "agent-a1.meta.json").write_text("{}", encoding="utf-8")
    (runs_folder(copy) / "notes.jsonl").write_text("{}\n", encoding="utf-8")
    transcript = load(copy / f"{SESSION}.jsonl")
    named = [w.reason.split(" in ")[0] for w in transcript.warnings]
    assert named == ["agent file agent-a1.jsonl", "agent file agent-b2.jsonl"]


def test_C1_the_session_s_row_counts_the_stray_s_warning(tmp_path: Path) -> None:
    """The corpus gives the stray no row (it is the session's file); the session's row carries
    the warning that says it was not read, so it is lost in neither place."""
    copy = real_copy(tmp_path)
    shutil.copyfile(agent_files(copy)[0], runs_folder(copy) / "agent-a0000000000000001.jsonl")
    [row] = list(scan(copy, workers=1, cache=False))
    assert Path(row["path"]).name == f"{SESSION}.jsonl"
    assert row["warnings"] == 1
