"""Claude Code refuses an id that is no plain name, and says so (spec X-1).

Claude Code finds a sub-agent's own file by the ``agentId`` its records hold
(``agent-<agentId>.jsonl``), and a Workflow run's files by its ``runId`` and the ``agentId`` of
each of its agents. Only an id of letters, digits, ``-`` and ``_`` becomes part of a path: any
other (``..``, an absolute path, a separator, a glob's wildcard) is refused. Refused silently,
the call only showed its steps missing and nothing said why; it is now said once, on the line of
the record that holds the value, and the session loads whole.

Each hostile session is a real fixture with that one value replaced everywhere it is written;
its control is the same fixture with a plain id in its place whose files are missing as well,
so that the two loads differ only by the warning. A file holding :data:`MARKER` is planted
wherever the hostile value would lead outside the folders' own files; it must never be read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.model import ToolCall, Transcript

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"
#: What a planted file holds and no fixture does: seen in a transcript, the file was read.
MARKER = "PLANTED-SECRET-NOT-OF-THIS-SESSION"

#: Claude Code 2.1.337, made with the real CLI: a background agent, its file in
#: ``<session>/subagents/agent-<agentId>.jsonl``, its ``agentId`` in the launch result (line 22).
AGENT = FIXTURES / "v2.1.337_real_background-agent-folder"
AGENT_SESSION = "33733733-2222-4444-8888-777777777777"
AGENT_ID = "a61a790209f52daea"
AGENT_ID_LINE = 22
#: Claude Code 2.1.332: a Workflow run of two agents; the launch result (line 21) names the run.
WORKFLOW = FIXTURES / "v2.1.332_workflow"
WORKFLOW_SESSION = "11111111-2222-3333-4444-666666666666"
RUN_ID = "wf_306ba340-b64"
RUN_ID_LINE = 21
RUN_AGENT = "a3454888b50a34f18"

#: A plain id no file is named by: the control's, in place of the hostile one.
PLAIN = "a0c0ntr0l00000000"
#: Values Claude Code never writes as an id: the parent folder, an absolute path, a separator,
#: a glob's wildcard (plain for :func:`~turnfold.formats.plain_names.is_plain_name`, yet
#: refused by the reader's stricter letters-digits-``-``-``_`` check).
HOSTILE = ["..", "/etc", "a/b", "agent-*"]


def shown(transcript: Transcript) -> str:
    """Everything a transcript holds, its sub-agents' included, and its warnings."""
    return transcript.dump() + "".join(w.reason for w in transcript.warnings)


def entries(transcript: Transcript, plain: str | None = None, hostile: str = "") -> str:
    """The transcript as it dumps, its warnings left out (compared on their own); ``plain``
    made ``hostile`` (escaped as JSON writes it) when given."""
    lines = [line for line in transcript.dump().splitlines() if not line.startswith('{"warning"')]
    text = "\n".join(lines)
    return text.replace(plain, json.dumps(hostile)[1:-1]) if plain else text


def said(transcript: Transcript, words: str) -> list[tuple[str, int | None]]:
    return [(w.reason, w.line) for w in transcript.warnings if words in w.reason]


def with_id(folder: Path, old: str, new: str) -> None:
    """Every text file under ``folder`` with the id ``old`` made ``new``, escaped as JSON
    writes it."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in (".jsonl", ".json"):
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace(old, json.dumps(new)[1:-1]), encoding="utf-8")


def plant(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def leaves_folder(folder: Path, name: str) -> bool:
    """Whether ``folder / name`` is no file of ``folder`` itself: only there may a planted file
    tell a refused id's path from the session's own files (an ``agent-*.jsonl`` of the
    session's folder is shown whoever names it)."""
    return (folder / name).parent != folder


def the_call(transcript: Transcript, name: str) -> ToolCall:
    (call,) = [c for c in transcript.tool_calls() if c.name == name]
    return call


# --- a sub-agent's own file, by the ``agentId`` of its launch -----------------------------------


def agent_session(project: Path, agent_id: str, *, keep_file: bool) -> Path:
    """The real background-agent session copied to ``project``, its ``agentId`` made
    ``agent_id``; without ``keep_file``, the agent's own file and its ``.meta.json`` (which
    names the call: a second way to it) are gone, as a hostile id's would be."""
    shutil.copytree(AGENT, project)
    with_id(project, AGENT_ID, agent_id)
    if not keep_file:
        for path in (project / AGENT_SESSION / "subagents").glob("agent-*"):
            path.unlink()
    return project / f"{AGENT_SESSION}.jsonl"


def agent_plants(project: Path, agent_id: str) -> None:
    """The real agent's file, its report made the marker, wherever Claude Code's join would
    lead in the two folders it looks in: the session's ``subagents/`` and the project's."""
    real = AGENT / AGENT_SESSION / "subagents" / f"agent-{AGENT_ID}.jsonl"
    text = real.read_text(encoding="utf-8").replace("TF-REPORT", MARKER)
    for folder in (project / AGENT_SESSION / "subagents", project):
        if leaves_folder(folder, f"agent-{agent_id}.jsonl"):
            plant(folder / f"agent-{agent_id}.jsonl", text)


def agent_warning(agent_id: str) -> tuple[str, int]:
    reason = (
        f"agentId {agent_id!r} is not a plain name: its sub-agent's file, in the folder it "
        "would name beside this session's, is not looked for"
    )
    return reason, AGENT_ID_LINE


@pytest.mark.parametrize("agent_id", HOSTILE)
def test_X1_an_agent_id_that_is_no_plain_name_is_said_and_its_call_kept(
    tmp_path: Path, agent_id: str
) -> None:
    hostile_path = agent_session(tmp_path / "hostile", agent_id, keep_file=False)
    agent_plants(tmp_path / "hostile", agent_id)
    hostile = turnfold.load(hostile_path)
    control = turnfold.load(agent_session(tmp_path / "control", PLAIN, keep_file=False))

    assert said(hostile, "is not a plain name") == [agent_warning(agent_id)]
    assert said(control, "is not a plain name") == []  # a plain id with no file: not this
    call = the_call(hostile, "Agent")
    assert call.subagent is not None
    assert call.subagent.transcript is None
    assert call.subagent.steps_missing
    # Everything else is as the control shows it, warnings included.
    assert entries(hostile) == entries(control, PLAIN, agent_id)
    others = [w.reason for w in hostile.warnings if "is not a plain name" not in w.reason]
    assert others == [w.reason for w in control.warnings]
    assert MARKER not in shown(hostile)


def test_X1_a_refused_agent_id_said_once_its_file_still_found_by_its_call(
    tmp_path: Path,
) -> None:
    """The ``.meta.json`` beside an agent's file names the call that launched it: a refused
    ``agentId`` leaves that way to the file, whose name is the folder's, not the record's."""
    path = agent_session(tmp_path / "project", "..", keep_file=True)
    transcript = turnfold.load(path)
    assert said(transcript, "is not a plain name") == [agent_warning("..")]
    agent = the_call(transcript, "Agent").subagent
    assert agent is not None
    assert agent.transcript is not None
    assert not agent.steps_missing
    assert "from-subagent" in agent.transcript.dump()


def test_X1_control_a_plain_agent_id_finds_its_file_unsaid(tmp_path: Path) -> None:
    transcript = turnfold.load(agent_session(tmp_path / "project", AGENT_ID, keep_file=True))
    assert said(transcript, "plain name") == []
    agent = the_call(transcript, "Agent").subagent
    assert agent is not None
    assert agent.transcript is not None


def test_X1_an_agent_id_only_its_steps_give_is_said_on_their_line(tmp_path: Path) -> None:
    """With no ``agentId`` in the Agent call's result, the id is the one its first
    ``agent_progress`` step gives (line 3), and the warning points there."""
    fixture = FIXTURES / "v2.1_progress-and-subagent-file.jsonl"
    shutil.copytree(fixture.with_suffix(""), tmp_path / fixture.stem)
    lines = fixture.read_text(encoding="utf-8").splitlines(keepends=True)
    result = json.loads(lines[3])
    del result["toolUseResult"]["agentId"]
    lines[3] = json.dumps(result) + "\n"
    path = tmp_path / fixture.name
    path.write_text("".join(lines).replace("ab12cd34ef56ab78c", "a/b"), encoding="utf-8")
    transcript = turnfold.load(path)
    reason = (
        "agentId 'a/b' is not a plain name: its sub-agent's file, in the folder it would name "
        "beside this session's, is not looked for"
    )
    assert said(transcript, "is not a plain name") == [(reason, 3)]
    agent = the_call(transcript, "Agent").subagent
    assert agent is not None
    assert agent.transcript is not None


# --- a Workflow run's files, by its ``runId`` ---------------------------------------------------


def workflow_session(project: Path, run_id: str) -> Path:
    """The Workflow session copied to ``project``, its ``runId`` made ``run_id``, its run's
    files gone (a hostile id names none of them)."""
    shutil.copytree(WORKFLOW, project)
    shutil.rmtree(project / WORKFLOW_SESSION / "subagents" / "workflows" / RUN_ID)
    (project / WORKFLOW_SESSION / "workflows" / f"{RUN_ID}.json").unlink()
    with_id(project, RUN_ID, run_id)
    return project / f"{WORKFLOW_SESSION}.jsonl"


def workflow_plants(project: Path, run_id: str) -> None:
    """The run's real snapshot (its result made the marker) and agent file, where the joins
    of ``workflows/<runId>.json`` and ``subagents/workflows/<runId>/`` would lead."""
    session = WORKFLOW / WORKFLOW_SESSION
    snapshot = (session / "workflows" / f"{RUN_ID}.json").read_text(encoding="utf-8")
    agent = session / "subagents" / "workflows" / RUN_ID / f"agent-{RUN_AGENT}.jsonl"
    snapshots = project / WORKFLOW_SESSION / "workflows"
    if leaves_folder(snapshots, f"{run_id}.json") or run_id == "..":
        # ``...json`` is no run's name, so no other reading takes it up.
        plant(snapshots / f"{run_id}.json", snapshot.replace("TF-WF-DONE-a", MARKER))
    runs = project / WORKFLOW_SESSION / "subagents" / "workflows"
    if run_id != "..":  # ``..`` leads to ``subagents/``, whose agent files are the session's
        text = agent.read_text(encoding="utf-8").replace("TF-WF-AGENT a", MARKER)
        plant(runs / run_id / f"agent-{RUN_AGENT}.jsonl", text)


@pytest.mark.parametrize("run_id", HOSTILE)
def test_X1_a_run_id_that_is_no_plain_name_is_said_and_its_call_kept(
    tmp_path: Path, run_id: str
) -> None:
    hostile_path = workflow_session(tmp_path / "hostile", run_id)
    if run_id != "/etc":  # the join of an absolute path leaves the test's folder
        workflow_plants(tmp_path / "hostile", run_id)
    hostile = turnfold.load(hostile_path)
    control = turnfold.load(workflow_session(tmp_path / "control", PLAIN))

    reason = (
        f"runId {run_id!r} is not a plain name: its workflow run's files, in the folders it "
        "would name under this session's, are not looked for"
    )
    assert said(hostile, f"runId {run_id!r}") == [(reason, RUN_ID_LINE)]
    # ``agent-*``'s plant is a folder of the runs folder that no run id names: said on its own.
    runs = tmp_path / "hostile" / WORKFLOW_SESSION / "subagents" / "workflows"
    folder = (
        f"workflow run folder {run_id!r} is not a plain name, not a run id Claude Code writes: "
        f"its files, in {runs}, are not read"
    )
    assert said(hostile, "workflow run folder") == ([(folder, None)] if run_id == "agent-*" else [])
    call = the_call(hostile, "Workflow")
    assert call.subagent is not None
    assert call.subagent.transcript is None
    assert call.subagent.steps_missing
    assert entries(hostile) == entries(control, PLAIN, run_id)
    # The control's plain id is looked for, and its missing files said; the hostile one's not.
    assert [w.reason for w in control.warnings if "no agent transcripts" in w.reason]
    others = [w.reason for w in hostile.warnings if "is not a plain name" not in w.reason]
    assert others == [w.reason for w in control.warnings if "no agent transcripts" not in w.reason]
    assert MARKER not in shown(hostile)


# --- one agent of a Workflow run, by the ``agentId`` its snapshot lists -------------------------


def run_agent_session(project: Path, agent_id: str) -> Path:
    """The Workflow session copied to ``project``, its first agent's ``agentId`` (snapshot and
    journal) made ``agent_id``, that agent's file gone."""
    shutil.copytree(WORKFLOW, project)
    run = project / WORKFLOW_SESSION / "subagents" / "workflows" / RUN_ID
    for path in run.glob(f"agent-{RUN_AGENT}.*"):
        path.unlink()
    with_id(project, RUN_AGENT, agent_id)
    return project / f"{WORKFLOW_SESSION}.jsonl"


@pytest.mark.parametrize("agent_id", HOSTILE)
def test_X1_a_run_agent_id_that_is_no_plain_name_is_said_and_its_call_kept(
    tmp_path: Path, agent_id: str
) -> None:
    hostile_path = run_agent_session(tmp_path / "hostile", agent_id)
    run = tmp_path / "hostile" / WORKFLOW_SESSION / "subagents" / "workflows" / RUN_ID
    if leaves_folder(run, f"agent-{agent_id}.jsonl"):
        real = WORKFLOW / WORKFLOW_SESSION / "subagents" / "workflows" / RUN_ID
        text = (real / f"agent-{RUN_AGENT}.jsonl").read_text(encoding="utf-8")
        plant(run / f"agent-{agent_id}.jsonl", text.replace("TF-WF-AGENT a", MARKER))
    hostile = turnfold.load(hostile_path)
    control = turnfold.load(run_agent_session(tmp_path / "control", PLAIN))

    snapshot = tmp_path / "hostile" / WORKFLOW_SESSION / "workflows" / f"{RUN_ID}.json"
    reason = (
        f"agentId {agent_id!r} of workflow run {RUN_ID!r} is not a plain name: its agent's "
        "file, in the run's folder, is not looked for"
    )
    assert said(hostile, "is not a plain name") == [(reason, None)]
    assert [w.source for w in hostile.warnings if w.reason == reason] == [str(snapshot)]
    run_call = the_call(hostile, "Workflow")
    assert run_call.subagent is not None
    assert run_call.subagent.transcript is not None
    agents = {c.subagent.agent_id: c.subagent for c in run_call.subagent.transcript.tool_calls()
              if c.subagent is not None}  # fmt: skip
    assert agents[agent_id].transcript is None
    assert agents[agent_id].steps_missing
    assert entries(hostile) == entries(control, PLAIN, agent_id)
    others = [w.reason for w in hostile.warnings if "is not a plain name" not in w.reason]
    assert others == [w.reason for w in control.warnings]
    assert MARKER not in shown(hostile)
