"""Readers that build a file's path from a value read in a transcript never follow it outside
the session's own folders (spec X-1: transcript content is untrusted).

A reader finds a session's other files (a sub-agent's journal, background agents' files, a
continuation, a trace's spans artifact) by ids its records hold. An id of ``..``, an absolute
path or a glob pattern in a hostile file must not make turnfold read a file elsewhere: such a
value is refused with a warning saying what was not looked for, and the rest of the session
still loads. Each hostile file here is a reader's real fixture with that one value replaced, and
a file planted where the value would lead; the planted file's marker must not reach the
transcript. A control test plants the same file where the reader does look, and the marker is
shown: its absence elsewhere means something.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus.discover import Item
from turnfold.formats.source import Source
from turnfold.formats.traces import mlflow
from turnfold.model import Transcript

FIXTURES = Path(__file__).parent / "fixtures"
#: What a planted file holds and no fixture does: seen in a transcript, the file was read.
MARKER = "PLANTED-SECRET-NOT-OF-THIS-SESSION"
#: The module (``turnfold.corpus.summarize`` is also a function's name there).
summarize = importlib.import_module("turnfold.corpus.summarize")

#: Kimi Code 2.x, made with the real CLI: a lead agent spawning one sub-agent, ``agent-0``,
#: whose journal is ``agents/agent-0/wire.jsonl``.
KIMI = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
#: Qwen Code 0.24.4, made with the real CLI: a background sub-agent's records in
#: ``subagents/<sessionId>/agent-<agentId>.jsonl`` beside ``chats/``.
QWEN = FIXTURES / "qwen" / "background-agent"
QWEN_ID = "62c225bc-6b43-451c-baad-3eaede03a4f2"
#: Harbor's ATIF trajectory of Terminus 2, continued in ``trajectory.cont-1.json``.
ATIF = FIXTURES / "harnesses" / "atif" / "terminus-2" / "trial"
#: Claude Code 2.1.337, made with the real CLI: a background agent's file in
#: ``<session>/subagents/agent-<agentId>.jsonl``.
CLAUDE = FIXTURES / "claude-code" / "v2.1.337_real_background-agent-folder"
CLAUDE_ID = "33733733-2222-4444-8888-777777777777"
CLAUDE_AGENT = "a61a790209f52daea"
#: Codex: a parent rollout naming its child thread, whose rollout is ``*<thread id>.jsonl``.
CODEX = FIXTURES / "codex" / "threads"
CODEX_PARENT = "rollout-2026-05-12T10-00-00-019c1a00-0000-7000-8000-0000000000aa.jsonl"
CODEX_CHILD = "019c1a00-0000-7000-8000-0000000000c1"
#: A session file of the real Gemini CLI 0.61, whose resume writes a stub of its session.
GEMINI_RESUMED = FIXTURES / "gemini" / "gemini-cli_v0.61_resume-api-form.jsonl"
#: A trace's ``traces.json`` artifact, written by the real mlflow-skinny 3.17.2.
MLFLOW_ARTIFACT = FIXTURES / "traces" / "mlflow" / "weather-agent_artifact-traces.json"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def shown(transcript: Transcript) -> str:
    """Everything a transcript holds: its entries and its sub-agents' (lossless), its
    warnings."""
    return transcript.dump() + "".join(w.reason for w in transcript.warnings)


def reasons(transcript: Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


def kinds(transcript: Transcript) -> list[str]:
    return [type(entry).__name__ for entry in transcript.entries]


def replaced(text: str, old: str, new: str) -> str:
    """``text`` (JSON) with the string ``old`` in its values made ``new``, escaped as JSON
    writes it (a backslash, a NUL, a newline)."""
    assert old in text
    return text.replace(old, json.dumps(new)[1:-1])


def planted(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- Kimi Code: a sub-agent's journal, ``agents/<subagentId>/wire.jsonl`` ------------------------


def kimi_session(session: Path, subagent_id: str) -> Path:
    """A copy of the real session at ``session``, its lead naming its sub-agent
    ``subagent_id``; the lead's journal."""
    shutil.copytree(KIMI, session)
    lead = session / "agents" / "main" / "wire.jsonl"
    text = lead.read_text(encoding="utf-8")
    named = '"subagentId":"agent-0"'
    assert named in text
    lead.write_text(text.replace(named, f'"subagentId":{json.dumps(subagent_id)}'))
    return lead


def kimi_plant(journal: Path) -> Path:
    """The real sub-agent's journal at ``journal``, its answer made the marker."""
    text = (KIMI / "agents" / "agent-0" / "wire.jsonl").read_text(encoding="utf-8")
    assert "TF-SUB-OK" in text
    return planted(journal, text.replace("TF-SUB-OK", MARKER))


#: A hostile ``subagentId`` and the journal it would have read: (session, a folder outside).
KIMI_HOSTILE: dict[str, Callable[[Path, Path], tuple[str, Path]]] = {
    "parent": lambda session, _: ("..", session / "wire.jsonl"),
    "current": lambda session, _: (".", session / "agents" / "wire.jsonl"),
    "absolute": lambda _, elsewhere: (str(elsewhere), elsewhere / "wire.jsonl"),
    # A separator on Windows, where it leaves agents/; refused wherever the file is read.
    "backslash": lambda session, _: (
        "..\\agent-0",
        session / "agents" / "..\\agent-0" / "wire.jsonl",
    ),
    # Cut at its NUL by a C call, it would name the real sub-agent's folder.
    "nul": lambda session, _: ("agent-0\x00", session / "agents" / "agent-0" / "wire.jsonl"),
}


@pytest.mark.parametrize("case", sorted(KIMI_HOSTILE))
def test_X1_kimi_a_subagent_id_that_is_no_plain_name_names_no_journal_to_read(
    tmp_path: Path, case: str
) -> None:
    """Kimi Code names a sub-agent ``agent-<n>``: any id that is no plain name is refused,
    said on its ``subagent.spawned`` line, its call kept with its steps missing."""
    session = tmp_path / "sessions" / KIMI.name
    subagent_id, journal = KIMI_HOSTILE[case](session, tmp_path / "elsewhere")
    lead = kimi_session(session, subagent_id)
    kimi_plant(journal)
    transcript = turnfold.load(lead)
    assert MARKER not in shown(transcript)
    assert reasons(transcript) == [
        f"subagentId {subagent_id!r} is not a plain name: its journal, in the folder it would "
        "name beside this one's, is not looked for"
    ]
    (agent,) = [call.subagent for call in transcript.tool_calls() if call.subagent]
    assert agent.transcript is None
    assert agent.steps_missing
    # The rest of the session loads whole: every entry the real one has.
    assert kinds(transcript) == kinds(turnfold.load(KIMI / "agents" / "main" / "wire.jsonl"))


def test_X1_kimi_a_subagent_id_with_wildcards_names_one_folder_not_a_pattern(
    tmp_path: Path,
) -> None:
    """``agent-*`` is a plain name: the folder of that very name, not every ``agent-…``."""
    session = tmp_path / "sessions" / KIMI.name
    lead = kimi_session(session, "agent-*")
    kimi_plant(session / "agents" / "agent-9" / "wire.jsonl")
    transcript = turnfold.load(lead)
    assert MARKER not in shown(transcript)
    assert "sub-agent 'agent-*': no journal wire.jsonl beside this one" in reasons(transcript)


def test_X1_kimi_control_the_journal_at_the_sub_agents_own_place_is_read(tmp_path: Path) -> None:
    """The planted journal where the real id leads is read: the marker is seen when read."""
    session = tmp_path / "sessions" / KIMI.name
    lead = kimi_session(session, "agent-0")
    kimi_plant(session / "agents" / "agent-0" / "wire.jsonl")
    assert MARKER in shown(turnfold.load(lead))


# --- Qwen Code: background sub-agents' files, ``subagents/<sessionId>/agent-*.jsonl`` ------------


def qwen_project(project: Path, session_id: str, *, background: bool = True) -> Path:
    """A copy of the real project at ``project``, its chat's ``sessionId`` made
    ``session_id``; the chat. ``background=False``: without the background agent's folder."""
    shutil.copytree(QWEN, project)
    if not background:
        shutil.rmtree(project / "subagents")
    chat = project / "chats" / f"{QWEN_ID}.jsonl"
    chat.write_text(replaced(chat.read_text(encoding="utf-8"), QWEN_ID, session_id))
    return chat


def qwen_plant(folder: Path) -> Path:
    """The real background agent's records in ``folder``, its answer made the marker."""
    (real,) = (QWEN / "subagents" / QWEN_ID).glob("agent-*.jsonl")
    text = real.read_text(encoding="utf-8")
    assert "subagent done: from-subagent" in text
    return planted(folder / "agent-planted.jsonl",
                   text.replace("subagent done: from-subagent", MARKER))  # fmt: skip


#: A hostile ``sessionId`` and the folder of agent files it would have read.
QWEN_HOSTILE: dict[str, Callable[[Path, Path], tuple[str, Path]]] = {
    "parent": lambda project, _: ("..", project),
    "current": lambda project, _: (".", project / "subagents"),
    "absolute": lambda _, elsewhere: (str(elsewhere), elsewhere),
    # A separator on Windows, where it leaves subagents/; refused wherever the file is read.
    "backslash": lambda project, _: ("..\\x", project / "subagents" / "..\\x"),
}


@pytest.mark.parametrize("case", sorted(QWEN_HOSTILE))
def test_X1_qwen_a_session_id_that_is_no_plain_name_names_no_folder_to_read(
    tmp_path: Path, case: str
) -> None:
    """Qwen Code's session ids are UUIDs: one that is no plain name names no folder of
    background agents' files, said; the chat itself loads whole."""
    project = tmp_path / "project"
    session_id, folder = QWEN_HOSTILE[case](project, tmp_path / "elsewhere")
    chat = qwen_project(project, session_id)
    qwen_plant(folder)
    transcript = turnfold.load(chat)
    assert MARKER not in shown(transcript)
    said = (f"sessionId {session_id!r} is not a plain name: the background sub-agents' files, "
            "in the folder it would name under subagents/, are not looked for")  # fmt: skip
    assert said in reasons(transcript)
    # The rest of the session loads whole, as it loads with no background agent's files.
    alone = turnfold.load(qwen_project(tmp_path / "alone", session_id, background=False))
    assert reasons(transcript) == reasons(alone)  # the hostile id's warning too
    assert kinds(transcript) == kinds(alone)


def test_X1_qwen_a_session_id_with_wildcards_names_one_folder_not_a_pattern(
    tmp_path: Path,
) -> None:
    """``*`` is a plain name: ``subagents/*/``, a folder of that very name, which no Qwen Code
    writes and is not there: no background agent's file is read, the real session's neither."""
    project = tmp_path / "project"
    chat = qwen_project(project, "*")
    qwen_plant(project / "subagents" / QWEN_ID)
    transcript = turnfold.load(chat)
    assert MARKER not in shown(transcript)
    alone = turnfold.load(qwen_project(tmp_path / "alone", "*", background=False))
    assert kinds(transcript) == kinds(alone)


def test_X1_qwen_control_an_agent_file_in_the_sessions_own_folder_is_read(tmp_path: Path) -> None:
    """The planted file in the session's own folder is read: the marker is seen when read."""
    project = tmp_path / "project"
    chat = qwen_project(project, QWEN_ID)
    qwen_plant(project / "subagents" / QWEN_ID)
    assert MARKER in shown(turnfold.load(chat))


# --- ATIF: a continuation named by ``continued_trajectory_ref`` ----------------------------------


def atif_trial(trial: Path, ref: str) -> Path:
    """A copy of the real trial at ``trial``, its trajectory continued in ``ref``."""
    shutil.copytree(ATIF, trial)
    path = trial / "agent" / "trajectory.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["continued_trajectory_ref"] == "trajectory.cont-1.json"
    document["continued_trajectory_ref"] = ref
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def atif_plant(path: Path) -> Path:
    """The real continuation at ``path``, its summary made the marker."""
    text = (ATIF / "agent" / "trajectory.cont-1.json").read_text(encoding="utf-8")
    summary = "Summary of the work so far: test_two failed with exit 1."
    assert summary in text
    return planted(path, text.replace(summary, MARKER))


#: A hostile continuation's name and the file it would have read (trial, a folder outside).
ATIF_HOSTILE: dict[str, Callable[[Path, Path], tuple[str, Path]]] = {
    "parent": lambda trial, _: ("../planted.json", trial / "planted.json"),
    "absolute": lambda _, elsewhere: (str(elsewhere / "planted.json"), elsewhere / "planted.json"),
    # A NUL raised from the OS call, and the whole load failed naming no file.
    "nul": lambda trial, _: ("planted.json\x00", trial / "agent" / "planted.json"),
    # A ``..`` after a newline passed the pattern (only the folder's bounds held).
    "newline": lambda trial, _: ("x\n/../../planted.json", trial / "planted.json"),
}


@pytest.mark.parametrize("case", sorted(ATIF_HOSTILE))
def test_X1_atif_a_continuation_that_is_no_plain_name_under_its_folder_is_not_opened(
    tmp_path: Path, case: str
) -> None:
    """A continuation outside the trajectory's folder is not opened, said; the trajectory
    loads as it does with a continuation that is not there."""
    trial = tmp_path / "trial"
    ref, target = ATIF_HOSTILE[case](trial, tmp_path / "elsewhere")
    path = atif_trial(trial, ref)
    (path.parent / "x\n").mkdir()  # the newline's folder, there for the ``..`` to leave
    atif_plant(target)
    transcript = turnfold.load(path)
    assert MARKER not in shown(transcript)
    said = f"continuation {ref}: not a plain name under the trajectory's folder: not opened"
    assert said in reasons(transcript)
    # The rest loads whole, as with a continuation that is not there.
    missing = turnfold.load(atif_trial(tmp_path / "missing", "missing.json"))
    assert kinds(transcript) == kinds(missing)


def test_X1_atif_a_continuation_with_wildcards_names_one_file_not_a_pattern(
    tmp_path: Path,
) -> None:
    """``*.json`` names the file of that very name, not one of the folder's others."""
    trial = tmp_path / "trial"
    path = atif_trial(trial, "*.json")
    atif_plant(trial / "agent" / "planted.json")
    transcript = turnfold.load(path)
    assert MARKER not in shown(transcript)
    assert "continuation *.json: no such file beside the trajectory" in reasons(transcript)


def test_X1_atif_control_a_continuation_beside_the_trajectory_is_read(tmp_path: Path) -> None:
    """The planted continuation named plainly is read: the marker is seen when read."""
    trial = tmp_path / "trial"
    path = atif_trial(trial, "planted.json")
    atif_plant(trial / "agent" / "planted.json")
    assert MARKER in shown(turnfold.load(path))


# --- Places already safe: Claude Code's agentId, Codex's child thread id -------------------------


def claude_session(project: Path, agent_id: str) -> Path:
    """A copy of the real session in ``project``, its background agent's ``agentId`` made
    ``agent_id``."""
    shutil.copytree(CLAUDE, project)
    path = project / f"{CLAUDE_ID}.jsonl"
    path.write_text(replaced(path.read_text(encoding="utf-8"), CLAUDE_AGENT, agent_id))
    return path


def claude_plant(path: Path) -> None:
    (real,) = (CLAUDE / CLAUDE_ID / "subagents").glob("agent-*.jsonl")
    planted(path, real.read_text(encoding="utf-8").replace("TF-REPORT", MARKER))


def claude_case(tmp_path: Path, hostile: str) -> Path:
    """Claude Code looks for ``<session>/subagents/agent-<agentId>.jsonl``: a hostile id's
    file planted where that join leads (the folders it passes through made)."""
    project = tmp_path / "project"
    subagents = project / CLAUDE_ID / "subagents"
    if hostile == "parent":
        agent_id = "x/../../../planted"
        target = project / "planted.jsonl"
    else:
        agent_id = str(tmp_path / "elsewhere" / "planted")
        target = subagents / f"agent-{agent_id}.jsonl"
    path = claude_session(project, agent_id)
    (subagents / "agent-x").mkdir()  # for the ``..`` to leave
    claude_plant(target)
    return path


def codex_case(tmp_path: Path, hostile: str) -> Path:
    """Codex looks for ``*<thread id>.jsonl`` beside the parent: a hostile id's rollout, a
    child's of another parent, planted where that pattern leads."""
    folder = tmp_path / "sessions" / "2026" / "05" / "12"
    folder.mkdir(parents=True)
    thread_id = {"parent": "..", "absolute": str(tmp_path / "elsewhere" / "x"), "glob": "*"}[
        hostile
    ]
    parent = folder / CODEX_PARENT
    parent.write_text(replaced((CODEX / CODEX_PARENT).read_text(), CODEX_CHILD, thread_id))
    child = (CODEX / f"{CODEX_CHILD}.jsonl").read_text(encoding="utf-8")
    child = child.replace("0000000000aa", "0000000000ff").replace('"done"', json.dumps(MARKER))
    name = {"parent": "planted...jsonl", "absolute": f"a{thread_id}.jsonl", "glob": "x.jsonl"}
    planted(folder / name[hostile], child)
    return parent


@pytest.mark.parametrize(
    ("case", "hostile"),
    [(claude_case, "parent"), (claude_case, "absolute"),
     (codex_case, "parent"), (codex_case, "absolute"), (codex_case, "glob")],
    ids=["claude-code-parent", "claude-code-absolute", "codex-parent", "codex-absolute",
         "codex-glob"],
)  # fmt: skip
def test_X1_an_id_checked_before_it_meets_a_path_is_not_followed(
    tmp_path: Path, case: Callable[[Path, str], Path], hostile: str
) -> None:
    """Claude Code takes an ``agentId`` only of letters, digits, ``-`` and ``_``; Codex a
    thread id only as ``_SAFE_ID``, which keeps a wildcard out of its pattern."""
    transcript = turnfold.load(case(tmp_path, hostile))
    assert transcript.entries
    assert MARKER not in shown(transcript)


# --- MLflow: a trace's spans artifact, where its ``mlflow.artifactLocation`` tag says ------------


def artifact_spans(tmp_path: Path, location: str) -> tuple[list[object], list[str]]:
    """The spans the artifact at ``location`` gives a trace of a store in ``tmp_path``, and
    the warnings of its load."""
    source = Source("mlflow.db", iter(()))
    tags = {"mlflow.artifactLocation": location}
    spans = mlflow._artifact_spans(tags, "tr-1", tmp_path / "store" / "mlflow.db", source)
    return spans, [w.reason for w in source.warnings]


def test_X1_mlflow_an_artifact_outside_the_stores_folder_is_read(tmp_path: Path) -> None:
    """MLflow writes the experiment's artifact root in the tag, a folder of the server's
    choosing anywhere: followed, as a path or a ``file:`` URI."""
    folder = tmp_path / "artifacts" / "0" / "traces" / "tr-1" / "artifacts"
    planted(folder / "traces.json", MLFLOW_ARTIFACT.read_text(encoding="utf-8"))
    spans = json.loads(MLFLOW_ARTIFACT.read_text(encoding="utf-8"))["spans"]
    assert artifact_spans(tmp_path, str(folder)) == (spans, [])
    assert artifact_spans(tmp_path, folder.as_uri()) == (spans, [])


@needs_fifo
def test_X1_mlflow_an_artifact_that_is_a_named_pipe_is_never_waited_on(tmp_path: Path) -> None:
    """A hostile store's tag may name any folder: a pipe there was opened and waited on."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    os.mkfifo(folder / "traces.json")
    assert artifact_spans(tmp_path, str(folder)) == (
        [],
        [f"trace tr-1: its spans are neither in the store nor at {str(folder)!r}"],
    )


def test_X1_mlflow_an_artifact_over_the_record_limit_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was read whole, however large: now no further than the record limit, said."""
    folder = tmp_path / "elsewhere"
    artifact = planted(folder / "traces.json", MLFLOW_ARTIFACT.read_text(encoding="utf-8"))
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", "1000")
    size = artifact.stat().st_size
    assert artifact_spans(tmp_path, str(folder)) == (
        [],
        [f"trace tr-1: its spans are not in the store, and {artifact}: {size:,} bytes, over "
         "the limit of 1,000 (TURNFOLD_MAX_RECORD_BYTES); not read"],
    )  # fmt: skip


# --- A scan: a Gemini CLI resume's stub, told by the sibling files its session id names ----------


def gemini_stub(chats: Path, session_id: str | None = None) -> Path:
    """The stub the real Gemini CLI 0.61 writes when a resume starts in a later minute: the
    session's header and its briefing alone (``tests/test_corpus_items.py``), its
    ``sessionId`` made ``session_id``."""
    header, briefing = GEMINI_RESUMED.read_text(encoding="utf-8").splitlines()[:2]
    if session_id is not None:
        header = json.dumps({**json.loads(header), "sessionId": session_id})
    return planted(chats / "session-2026-12-01T21-35-66666666.jsonl", f"{header}\n{briefing}\n")


def test_X1_a_stub_whose_session_id_is_no_plain_name_looks_in_no_other_folder(
    tmp_path: Path,
) -> None:
    """Its id's head made a path (``/../../a``) made the pattern of its siblings
    ``session-*-/../../a.jsonl``: a file above ``chats/`` holding that id hid the stub's row.
    Now no sibling is looked for: the file is a row of its own, nothing of it hidden."""
    chats = tmp_path / "project" / "chats"
    hostile = "/../../a" + "-0000-4000-8000-000000000000"
    stub = gemini_stub(chats, hostile)
    (chats / "session-x-").mkdir()
    planted(tmp_path / "project" / "a.jsonl", stub.read_text(encoding="utf-8"))
    row = summarize.summarize(Item(key=str(stub), path=str(stub)))
    assert row["error"] is None


@needs_fifo
def test_X1_a_named_pipe_named_as_a_stubs_sibling_is_never_waited_on(tmp_path: Path) -> None:
    """A sibling's header was read from whatever the pattern matched: a pipe held the scan."""
    chats = tmp_path / "project" / "chats"
    stub = gemini_stub(chats)
    os.mkfifo(chats / "session-2026-12-01T21-30-66666666.jsonl")
    row = summarize.summarize(Item(key=str(stub), path=str(stub)))
    assert row["error"] is None  # no session file beside it: the stub is a row of its own
