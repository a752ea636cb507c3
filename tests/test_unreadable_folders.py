"""A folder of a session's own files that cannot be listed (spec L-4 bad input, X-2 nothing lost,
C-7 a scan never aborts): permission denied, gone between the check and the listing, an I/O
error. The load goes on: a warning names the folder and what in it was not read, and everything
else of the session loads whole.

The tests run as root, so no folder can be made unreadable with ``chmod``: the listing calls
(``os.scandir``, ``os.listdir`` and ``Path.iterdir``, whichever a reader and this Python's
``pathlib`` use) raise ``PermissionError`` for the one folder denied, as the system would for a
folder one may not read (mode ``-wx``). A folder one may not search either (mode ``000``) also
refuses a look at any name in it (``os.stat``, which ``Path.is_file`` asks): :func:`seal`.
Each case is a real fixture of the format (named beside it), loaded in place or from a copy.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.source import sibling_files
from turnfold.model import LoadWarning, Transcript

FIXTURES = Path(__file__).parent / "fixtures"

Deny = Callable[[Path], None]


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Deny:
    """Makes each folder it is given unlistable for the rest of the test."""
    denied: set[str] = set()
    scandir, listdir, iterdir = os.scandir, os.listdir, Path.iterdir

    def refused(path: Any) -> None:
        if not isinstance(path, int) and os.path.abspath(os.fsdecode(path)) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))

    def denied_scandir(path: Any = ".") -> Any:
        refused(path)
        return scandir(path)

    def denied_listdir(path: Any = ".") -> list[Any]:
        refused(path)
        return listdir(path)

    def denied_iterdir(self: Path) -> Iterator[Path]:
        refused(self)
        return iterdir(self)

    monkeypatch.setattr(os, "scandir", denied_scandir)
    monkeypatch.setattr(os, "listdir", denied_listdir)
    monkeypatch.setattr(Path, "iterdir", denied_iterdir)
    return lambda folder: denied.add(os.path.abspath(folder))


@pytest.fixture
def seal(deny: Deny, monkeypatch: pytest.MonkeyPatch) -> Deny:
    """Makes each folder it is given unlistable and unsearchable: a look at a name in it (its
    file's or folder's ``stat``) is refused too, as the system refuses it for mode ``000``."""
    sealed: set[str] = set()
    stat = os.stat

    def sealed_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if not isinstance(path, int) and os.path.dirname(os.path.abspath(path)) in sealed:
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", sealed_stat)

    def sealing(folder: Path) -> None:
        deny(folder)
        sealed.add(os.path.abspath(folder))

    return sealing


def said(transcript: Transcript, folder: Path) -> list[LoadWarning]:
    """The warnings that say ``folder`` could not be listed."""
    start = f"{folder} could not be listed (Permission denied): its "
    return [w for w in transcript.warnings if start in w.reason]


def kinds(transcript: Transcript) -> list[str]:
    return [e.kind for e in transcript.entries]


def nested(transcript: Transcript) -> list[tuple[str, str, bool]]:
    """Each call down every sub-agent: its id, its name, whether its sub-agent has steps."""
    return [
        (c.call_id, c.name, bool(c.subagent and c.subagent.transcript))
        for c in transcript.tool_calls(nested=True)
    ]


# --- the listing itself -------------------------------------------------------------------------


def test_L4_sibling_files_tells_of_a_folder_it_cannot_list_and_lists_the_others(
    tmp_path: Path, deny: Deny
) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.json").write_text("{}")
    deny(tmp_path / "b")
    told: list[tuple[Path, OSError]] = []
    found = sibling_files(tmp_path, "*/*.json", lambda folder, error: told.append((folder, error)))
    assert found == [tmp_path / "a" / "a.json", tmp_path / "c" / "c.json"]
    assert [(folder, type(error)) for folder, error in told] == [(tmp_path / "b", PermissionError)]
    with pytest.raises(PermissionError):  # with no one to tell, never an empty listing
        sibling_files(tmp_path, "*/*.json")
    assert sibling_files(tmp_path / "none", "*.json") == []  # not there: nothing in it


def test_L4_a_folder_gone_between_the_check_and_the_listing_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "x.json").write_text("{}")
    scandir = os.scandir

    def gone(path: Any = ".") -> Any:
        if os.fspath(path) == str(tmp_path):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(tmp_path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", gone)
    told: list[Path] = []
    assert sibling_files(tmp_path, "*.json", lambda folder, _: told.append(folder)) == []
    assert told == [tmp_path]


# --- Claude Code ----------------------------------------------------------------------------------

CLAUDE = FIXTURES / "claude-code"
#: A session whose sub-agent's file is in ``<session>/subagents/`` (with its ``.meta.json``).
SUBAGENT_SESSION = CLAUDE / "v2.1_progress-and-subagent-file.jsonl"
#: The real 2.1.332 Workflow run (tests/formats/test_claude_code_workflows.py).
WORKFLOW = CLAUDE / "v2.1.332_workflow"
WORKFLOW_SESSION = "11111111-2222-3333-4444-666666666666"
RUN = "wf_306ba340-b64"


def test_L4_claude_code_subagents_folder_not_listed_is_said_and_the_agent_still_read(
    deny: Deny,
) -> None:
    before = turnfold.load(SUBAGENT_SESSION)
    subagents = CLAUDE / SUBAGENT_SESSION.stem / "subagents"
    deny(subagents)
    transcript = turnfold.load(SUBAGENT_SESSION)
    [warning] = said(transcript, subagents)
    assert warning.reason.endswith(
        "its sub-agents' files (agent-*.jsonl, agent-*.meta.json) are not read"
    )
    # The agent a call names by its id is looked up by its name, no listing needed.
    assert nested(transcript) == nested(before)
    assert kinds(transcript) == kinds(before)


def test_L4_claude_code_session_s_folder_not_listed_is_said_once(deny: Deny) -> None:
    """The project folder (Claude Code 2.0's sub-agents beside the session) is listed by two
    lookups: said once."""
    before = turnfold.load(SUBAGENT_SESSION)
    deny(CLAUDE)
    transcript = turnfold.load(SUBAGENT_SESSION)
    assert len(said(transcript, CLAUDE)) == 1
    assert nested(transcript) == nested(before)


def test_L4_claude_code_workflow_runs_folder_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    """The runs folder listed for runs no call names: said; the run the session's Workflow
    call names is still read by its id."""
    copy = tmp_path / "project"
    shutil.copytree(WORKFLOW, copy)
    session = copy / f"{WORKFLOW_SESSION}.jsonl"
    before = turnfold.load(session)
    runs = copy / WORKFLOW_SESSION / "subagents" / "workflows"
    deny(runs)
    transcript = turnfold.load(session)
    [warning] = said(transcript, runs)
    assert "workflow runs (folders of agent-*.jsonl files) are not read" in warning.reason
    assert nested(transcript) == nested(before)


def test_L4_claude_code_workflow_run_folder_not_listed_keeps_the_snapshot_s_agents(
    tmp_path: Path, deny: Deny
) -> None:
    copy = tmp_path / "project"
    shutil.copytree(WORKFLOW, copy)
    session = copy / f"{WORKFLOW_SESSION}.jsonl"
    before = turnfold.load(session)
    run = copy / WORKFLOW_SESSION / "subagents" / "workflows" / RUN
    deny(run)
    transcript = turnfold.load(session)
    [warning] = said(transcript, run)
    assert warning.reason.startswith(f"workflow run {RUN!r}: ")
    assert warning.reason.endswith("its agents' files (agent-*.jsonl) are not read")
    # The snapshot names each agent by its id: its file is opened by name.
    assert nested(transcript) == nested(before)


def test_L4_claude_code_unclaimed_run_folder_not_listed_is_still_shown(
    tmp_path: Path, deny: Deny
) -> None:
    """A run no call names whose folder cannot be listed may hold agents: shown at the end with
    what its snapshot names, and said."""
    copy = tmp_path / "project"
    shutil.copytree(WORKFLOW, copy)
    session = copy / f"{WORKFLOW_SESSION}.jsonl"
    runs = copy / WORKFLOW_SESSION / "subagents" / "workflows"
    other = "wf_aaaaaaaa-bbb"
    shutil.copytree(runs / RUN, runs / other)
    shutil.copyfile(copy / WORKFLOW_SESSION / "workflows" / f"{RUN}.json",
                    copy / WORKFLOW_SESSION / "workflows" / f"{other}.json")  # fmt: skip
    deny(runs / other)
    transcript = turnfold.load(session)
    assert len(said(transcript, runs / other)) == 1
    shown = [c for c in transcript.tool_calls() if c.call_id == f"workflow:{other}"]
    assert len(shown) == 1
    assert shown[0].subagent is not None
    assert shown[0].subagent.transcript is not None  # the snapshot's agents, by their ids


def test_L4_claude_code_fork_seeds_folder_not_listed_is_said(deny: Deny) -> None:
    """A fork's own file links its first message to a seed of the folder beside the projects
    (v2.1.332_real_fork-continued): that folder not listed, the link is said dangling and the
    folder named."""
    home = CLAUDE / "v2.1.332_real_fork-continued" / "home" / ".claude"
    [fork] = sorted((home / "projects").glob("*/*.jsonl"))
    before = turnfold.load(fork)
    seeds = home / "remote-control" / "fork-seeds"
    deny(seeds)
    transcript = turnfold.load(fork)
    [warning] = said(transcript, seeds)
    assert warning.reason.endswith("its fork seeds (*.json) are not read")
    assert kinds(transcript) == kinds(before)


def test_L4_claude_code_subagents_folder_not_searchable_is_said_once(seal: Deny) -> None:
    """Mode 000: the agent's file cannot even be looked up by its name. Said once, though the
    lookup by id, by ``.meta.json`` and the listing all meet it; the call keeps its place. The
    Workflow runs folder inside it cannot be looked at either: said as its own."""
    before = turnfold.load(SUBAGENT_SESSION)
    subagents = CLAUDE / SUBAGENT_SESSION.stem / "subagents"
    seal(subagents)
    transcript = turnfold.load(SUBAGENT_SESSION)
    agent_file = subagents / "agent-ab12cd34ef56ab78c.jsonl"
    assert [w.reason for w in transcript.warnings] == [
        f"{subagents} could not be listed (Permission denied: {agent_file}): its sub-agents' "
        "files (agent-*.jsonl, agent-*.meta.json) are not read",
        f"{subagents / 'workflows'} could not be listed (Permission denied): its workflow runs "
        "(folders of agent-*.jsonl files) are not read",
    ]
    assert kinds(transcript) == kinds(before)
    assert [n for _, n, _ in nested(transcript)][: len(before.tool_calls())] == [
        c.name for c in before.tool_calls()
    ]


def test_L4_claude_code_workflow_run_folder_not_searchable_is_said_once(
    tmp_path: Path, seal: Deny
) -> None:
    copy = tmp_path / "project"
    shutil.copytree(WORKFLOW, copy)
    session = copy / f"{WORKFLOW_SESSION}.jsonl"
    before = turnfold.load(session)
    run = copy / WORKFLOW_SESSION / "subagents" / "workflows" / RUN
    seal(run)
    transcript = turnfold.load(session)
    about = [w.reason for w in transcript.warnings if str(run) in w.reason]
    # The run folder's listing and each agent's lookup meet it: one warning; its journal's
    # look is said as the journal's.
    assert len([r for r in about if "could not be listed" in r]) == 1
    assert len(transcript.tool_calls()) == len(before.tool_calls())
    workflow = next(c for c in transcript.tool_calls() if c.name == "Workflow")
    assert workflow.subagent is not None
    agents = workflow.subagent.transcript
    assert agents is not None  # the snapshot's agents, each a call with no steps
    assert all(c.subagent and c.subagent.transcript is None for c in agents.tool_calls())


def test_L4_opencode_storage_message_folder_not_searchable_is_said(
    tmp_path: Path, seal: Deny
) -> None:
    storage = opencode_copy(tmp_path)
    [session] = sorted(storage.glob(f"session/*/{OPENCODE_LEAD}.json"))
    folder = storage / "message" / OPENCODE_LEAD
    seal(folder)
    transcript = turnfold.load(session)
    assert len([w for w in transcript.warnings if str(folder) in w.reason]) == 1


def test_C7_a_scan_with_a_run_folder_not_listed_keeps_its_row(tmp_path: Path, deny: Deny) -> None:
    """The walk counts the folder it cannot list as skipped and says it; the session's row
    carries the load's warning. Nothing aborts."""
    copy = tmp_path / "project"
    shutil.copytree(WORKFLOW, copy)
    run = copy / WORKFLOW_SESSION / "subagents" / "workflows" / RUN
    deny(run)
    with pytest.warns(UserWarning, match="could not be listed"):
        rows = list(turnfold.scan(copy, workers=1, cache=False))
    [row] = rows
    assert Path(row["path"]).name == f"{WORKFLOW_SESSION}.jsonl"
    assert row["warnings"] >= 1
    assert row["error"] is None


# --- the other readers ----------------------------------------------------------------------------


def test_L4_qwen_background_agents_folder_not_listed_is_said(deny: Deny) -> None:
    project = FIXTURES / "qwen" / "background-agent"
    [session] = sorted((project / "chats").glob("*.jsonl"))
    before = turnfold.load(session)
    folder = project / "subagents" / session.stem
    deny(folder)
    transcript = turnfold.load(session)
    [warning] = said(transcript, folder)
    assert warning.reason.endswith("its background sub-agents' files (agent-*.jsonl) are not read")
    assert kinds(transcript) == kinds(before)
    # The background agent's steps were in its own file: its call keeps its place, without them.
    assert [n for _, n, steps in nested(before) if steps] == ["agent"]
    assert [n for _, n, steps in nested(transcript) if steps] == []


def test_L4_codex_folder_of_child_threads_not_listed_is_said(deny: Deny) -> None:
    threads = FIXTURES / "codex" / "threads"
    [parent] = sorted(threads.glob("rollout-*.jsonl"))
    before = turnfold.load(parent)
    deny(threads)
    transcript = turnfold.load(parent)
    assert len(said(transcript, threads)) == 1  # once, though each spawn looks
    assert kinds(transcript) == kinds(before)
    assert [c for c in transcript.tool_calls() if c.subagent and c.subagent.transcript] == []


def test_L4_cursor_subagents_folder_not_listed_is_said(deny: Deny) -> None:
    folder = FIXTURES / "cursor" / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13"
    session = folder / f"{folder.name}.jsonl"
    before = turnfold.load(session)
    deny(folder / "subagents")
    transcript = turnfold.load(session)
    [warning] = said(transcript, folder / "subagents")
    assert warning.reason.endswith("its sub-agent transcripts are not read")
    assert kinds(transcript) == kinds(before)


def test_L4_cline_session_folder_not_listed_is_said(deny: Deny) -> None:
    folder = FIXTURES / "cline" / "cline-cli-3.0.65_team-session" / "1796443893972_gleub"
    session = folder / f"{folder.name}.messages.json"
    before = turnfold.load(session)
    deny(folder)
    transcript = turnfold.load(session)
    [warning] = said(transcript, folder)
    assert "sub-agents' and teammates' sessions (*.messages.json)" in warning.reason
    assert kinds(transcript) == kinds(before)


def test_L4_gemini_subagent_sessions_folder_not_listed_is_said(deny: Deny) -> None:
    chats = FIXTURES / "gemini" / "subagent"
    [session] = sorted(chats.glob("session-*.jsonl"))
    before = turnfold.load(session)
    [folder] = [p for p in chats.iterdir() if p.is_dir()]
    deny(folder)
    transcript = turnfold.load(session)
    [warning] = said(transcript, folder)
    assert warning.reason.endswith("its sub-agents' sessions (*.json, *.jsonl) are not read")
    assert kinds(transcript) == kinds(before)


OPENCODE = FIXTURES / "opencode" / "v1.1" / "work" / "storage"
OPENCODE_LEAD = "ses_db984376cffe4173dEEMgi271X"


def opencode_copy(tmp_path: Path) -> Path:
    """OpenCode 1.1.65's storage/ (tests/formats/test_opencode_storage.py), copied: what the
    filing of a folder learned is kept by its path."""
    storage = tmp_path / "opencode" / "storage"
    shutil.copytree(OPENCODE, storage)
    return storage


def test_L4_opencode_storage_message_folder_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    storage = opencode_copy(tmp_path)
    [session] = sorted(storage.glob(f"session/*/{OPENCODE_LEAD}.json"))
    before = turnfold.load(session)
    folder = storage / "message" / OPENCODE_LEAD
    deny(folder)
    transcript = turnfold.load(session)
    assert len(said(transcript, folder)) == 1
    # Its messages are not read; its sub-agent's session, in folders of its own, still is.
    assert len(kinds(transcript)) < len(kinds(before))
    assert transcript.tool_calls(nested=True)


def test_L4_opencode_storage_part_folder_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    storage = opencode_copy(tmp_path)
    [session] = sorted(storage.glob(f"session/*/{OPENCODE_LEAD}.json"))
    before = turnfold.load(session)
    first = min((storage / "part").iterdir())  # the first prompt's message's parts
    deny(first)
    transcript = turnfold.load(session)
    assert len(said(transcript, first)) == 1
    assert len(transcript.warnings) == 1
    assert len(kinds(transcript)) == len(kinds(before)) - 1  # its one part, the prompt's text
    assert len(transcript.tool_calls(nested=True)) == len(before.tool_calls(nested=True))


def test_L4_opencode_storage_session_folder_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    """``session/`` itself: the lead's sub-agent session is looked for in each project's folder,
    which needs its listing."""
    storage = opencode_copy(tmp_path)
    [session] = sorted(storage.glob(f"session/*/{OPENCODE_LEAD}.json"))
    before = turnfold.load(session)
    deny(storage / "session")
    transcript = turnfold.load(session)
    assert len(said(transcript, storage / "session")) == 1
    assert len(transcript.warnings) == 1
    # The lead's own messages and parts are read; only its sub-agent's session is not found.
    assert kinds(transcript) == kinds(before)
    assert len(transcript.tool_calls(nested=True)) < len(before.tool_calls(nested=True))


OPENHANDS_SDK = FIXTURES / "harnesses" / "openhands-sdk" / "conversations"


def test_L4_openhands_sdk_subagents_folder_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    conversation = next(p for p in sorted(OPENHANDS_SDK.iterdir()) if (p / "subagents").is_dir())
    copy = tmp_path / conversation.name
    shutil.copytree(conversation, copy)
    before = turnfold.load(copy)
    deny(copy / "subagents")
    transcript = turnfold.load(copy)
    [warning] = said(transcript, copy / "subagents")
    assert warning.reason.endswith("its sub-agents' conversations are not read")
    assert kinds(transcript) == kinds(before)
    assert any(c.subagent and c.subagent.steps_missing for c in transcript.tool_calls())


def test_L4_openhands_sdk_sub_agent_events_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    conversation = next(p for p in sorted(OPENHANDS_SDK.iterdir()) if (p / "subagents").is_dir())
    copy = tmp_path / conversation.name
    shutil.copytree(conversation, copy)
    [child] = sorted((copy / "subagents").iterdir())
    deny(child / "events")
    transcript = turnfold.load(copy)
    assert len(said(transcript, child / "events")) >= 1
    assert transcript.entries


def test_L4_openhands_v0_events_gone_after_the_session_was_found_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A V0 session is told by a listing of its ``events/``; one that then cannot be listed
    again (its permissions changed in between) loads with what ``metadata.json`` says."""
    import tarfile

    with tarfile.open(FIXTURES / "harnesses" / "openhands"
                      / "openhands_v0.48_session-folder_coin-flip.tar.gz") as archive:  # fmt: skip
        archive.extractall(tmp_path, filter="data")
    session = tmp_path / "63b4315947a049e2b7a51249b3d4fcc3"
    iterdir = Path.iterdir

    def denied(self: Path) -> Iterator[Path]:
        if self == session / "events":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return iterdir(self)

    monkeypatch.setattr(Path, "iterdir", denied)
    transcript = turnfold.load(session / "metadata.json")
    [warning] = said(transcript, session / "events")
    assert warning.reason.endswith("its event files (<n>.json) are not read")
    assert transcript.metadata["title"] == "Coin Flip Simulation"


STRANDS = FIXTURES / "frameworks" / "strands" / "strands_v1.62.0_file-sessions"


def test_L4_strands_agent_messages_folder_not_listed_is_said(tmp_path: Path, deny: Deny) -> None:
    session = tmp_path / "session_team"
    shutil.copytree(STRANDS / "session_team", session)
    agents = sorted(p for p in (session / "agents").iterdir() if p.is_dir())
    messages = agents[-1] / "messages"
    deny(messages)
    transcript = turnfold.load(session)
    [warning] = said(transcript, messages)
    assert warning.reason.endswith("its message files are not read")


def test_L4_strands_agents_folder_not_listed_is_a_clear_error(tmp_path: Path, deny: Deny) -> None:
    """With ``agents/`` not listed there is no conversation to read: an error naming it, not
    "a session without agents"."""
    session = tmp_path / "session_solo"
    shutil.copytree(STRANDS / "session_solo", session)
    deny(session / "agents")
    with pytest.raises(TranscriptFormatError, match="could not be listed"):
        turnfold.load(session)
