"""OpenCode sub-agents that no ``task`` call of their lead names, and sub-agents whose lead is not
there (spec C-1, C-7: nothing dropped unsaid).

A sub-agent's session names its lead (``parentID``; the database's ``parent_id``) and the lead's
``task`` call names the sub-agent (``state.metadata.sessionId``). A sub-agent is a row of its own
only when its lead is not there, else it nests under the call: one whose call's part file is
gone, or whose call a version recorded otherwise, was neither, and a database's sub-agent whose
lead's row is gone was never listed. Now the first is shown under its lead where its start
places it, and the second is a row of its own, each with a warning naming it.

The trees are the real ones OpenCode wrote (``fixtures/opencode/v1.1``, 1.1.65's storage;
``fixtures/opencode/work``, 1.18.33's database), copied, with files or rows deleted or changed
as those events leave them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

import turnfold
from tests.formats.opencode_storage import LEAD, STORAGE, SUB, copy_storage, session_file
from tests.formats.oversized import LIMIT, lower_limit
from turnfold.formats.agents import opencode
from turnfold.model import ToolCall, Transcript

pytestmark = pytest.mark.usefixtures("cache_dir")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "opencode"
DATABASE = FIXTURES / "work" / "opencode.db"
#: The lead's task call's part file (its ninth call, which ran the sub-agent).
TASK_PART = Path("part") / "msg_2467bcb600016c43twagZnHIrr" / "prt_2467bcb6f001jH8LqFL2E2WqA9.json"
DB_LEAD = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
DB_SUB = "ses_db99c7864ffeCvby45SXJ73ZRj"


def _calls(transcript: Transcript) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in transcript.tool_calls()]


def _scan(folder: Path) -> tuple[turnfold.Corpus, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = turnfold.scan(folder, workers=1)
    return corpus, [str(w.message) for w in caught]


def _unclaimed(transcript: Transcript, sub: str) -> ToolCall:
    """The one call standing for the sub-agent ``sub`` that no call names."""
    [call] = [c for c in transcript.tool_calls() if c.meta.get("synthetic")]
    assert call.meta["synthetic"] == "unclaimed sub-agent session"
    assert (call.name, call.status, call.call_id) == ("task", "unknown", f"task:{sub}")
    assert call.subagent is not None
    assert call.subagent.agent_id == sub
    return call


def _said(sub: str, lead: str) -> str:
    return (f"sub-agent session {sub} names session {lead} as its lead (parentID), but no task "
            "call of it names the sub-agent: shown where its start places it")  # fmt: skip


# --- storage/ (before 1.2) ------------------------------------------------------------------------


def test_C7_a_sub_agent_whose_task_part_is_gone_is_shown_under_its_lead_and_said(
    tmp_path: Path,
) -> None:
    original = turnfold.load(session_file(STORAGE, LEAD))
    storage = copy_storage(tmp_path)
    (storage / TASK_PART).unlink()  # its message's other parts, and the sub-agent, are there
    transcript = turnfold.load(session_file(storage, LEAD))
    call = _unclaimed(transcript, SUB)
    # Where the lost call was: the sub-agent ran in the first turn, not the last.
    calls = _calls(original)
    assert calls[8] == ("task", "success")
    assert _calls(transcript) == [*calls[:8], ("task", "unknown"), *calls[9:]]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    nested = original.tool_calls()[8].subagent
    assert nested is not None
    assert nested.transcript is not None
    assert call.subagent.transcript.entries == nested.transcript.entries
    assert (call.subagent.name, call.subagent.task) == ("general", "scripted sub-agent")
    assert call.started_at == nested.transcript.metadata["started_at"]
    assert [w.reason for w in transcript.warnings] == [_said(SUB, LEAD)]
    # The folder holds one session of its own, read the same; a scan's row counts it.
    assert turnfold.load(storage).entries == transcript.entries
    corpus, _ = _scan(storage.parent)
    [row] = corpus.rows
    assert row["key"] == str(session_file(storage, LEAD))
    assert (row["tool_calls"], row["subagents"], row["warnings"], row["error"]) == (10, 1, 1, None)


def test_C7_a_task_call_that_names_its_sub_agent_otherwise_keeps_it_shown(tmp_path: Path) -> None:
    """A version that records the link elsewhere than ``metadata.sessionId``: the call shows
    its outcome, its steps missing; the sub-agent is shown beside it, said."""
    storage = copy_storage(tmp_path)
    part = storage / TASK_PART
    document = json.loads(part.read_text())
    del document["state"]["metadata"]["sessionId"]
    part.write_text(json.dumps(document, indent=2))
    transcript = turnfold.load(session_file(storage, LEAD))
    call = _unclaimed(transcript, SUB)
    tasks = [c for c in transcript.tool_calls() if c.name == "task"]
    assert len(tasks) == 2
    [named] = [c for c in tasks if c is not call]
    assert named.subagent is not None
    assert named.subagent.steps_missing
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert _calls(call.subagent.transcript) == [("bash", "success")]
    assert [w.reason for w in transcript.warnings] == [_said(SUB, LEAD)]


def test_C7_a_sub_agent_lost_after_a_first_load_is_found_by_the_next(tmp_path: Path) -> None:
    """Which sessions name a lead is learned once per storage/ folder and kept while its
    folders are unchanged: a sub-agent's session added since is found."""
    storage = copy_storage(tmp_path)
    lead = session_file(storage, LEAD)
    assert turnfold.load(lead).warnings == []
    (storage / TASK_PART).unlink()
    assert [w.reason for w in turnfold.load(lead).warnings] == [_said(SUB, LEAD)]
    # A second sub-agent (a copy of the first's session and messages under another id).
    other = "ses_db9843492ffeZZZZZZZZZZZZZZ"
    document = json.loads(session_file(storage, SUB).read_text())
    session_file(storage, other).write_text(json.dumps({**document, "id": other}))
    shutil.copytree(storage / "message" / SUB, storage / "message" / other)
    transcript = turnfold.load(lead)
    assert [w.reason for w in transcript.warnings] == [_said(SUB, LEAD), _said(other, LEAD)]
    agents = [c.subagent.agent_id for c in transcript.tool_calls() if c.subagent is not None]
    assert agents == [SUB, other]


def test_C1_a_sub_agent_whose_lead_is_gone_says_so(tmp_path: Path) -> None:
    storage = copy_storage(tmp_path)
    session_file(storage, LEAD).unlink()
    transcript = turnfold.load(session_file(storage, SUB))
    assert _calls(transcript) == [("bash", "success")]
    [warning] = transcript.warnings
    assert warning.reason == (
        f"session {SUB} is a sub-agent's: its lead, session {LEAD} (its parentID), is not in "
        f"{storage}: shown as a session of its own"
    )
    # Its lead there, it is said by no load of its own.
    assert turnfold.load(session_file(STORAGE, SUB)).warnings == []


# --- the database (1.2 and later) ---------------------------------------------------------------


def _database(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "opencode.db"
    path.parent.mkdir()
    shutil.copyfile(DATABASE, path)
    return path


def test_C7_a_database_s_sub_agent_no_call_names_is_shown_under_its_lead(tmp_path: Path) -> None:
    original = turnfold.load(DATABASE)
    path = _database(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM part WHERE json_extract(data, '$.tool') = 'task'")
    db.close()
    transcript = turnfold.load(path)
    call = _unclaimed(transcript, DB_SUB)
    calls = _calls(original)
    assert calls[8] == ("task", "success")
    assert _calls(transcript) == [*calls[:8], ("task", "unknown"), *calls[9:]]
    nested = original.tool_calls()[8].subagent
    assert nested is not None
    assert nested.transcript is not None
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert call.subagent.transcript.entries == nested.transcript.entries
    assert [w.reason for w in transcript.warnings] == [_said(DB_SUB, DB_LEAD)]
    corpus, _ = _scan(path.parent)
    [row] = corpus.rows
    assert (row["tool_calls"], row["subagents"], row["warnings"]) == (10, 1, 1)


def test_C1_a_database_s_sub_agent_whose_lead_row_is_gone_is_a_row_of_its_own(
    tmp_path: Path,
) -> None:
    path = _database(tmp_path)
    with sqlite3.connect(path) as db:
        # As OpenCode deletes a row (db.ts: foreign keys on): its messages and parts with it.
        # With them left, they are a session of their own (test_opencode_leads.py).
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM session WHERE id = ?", (DB_LEAD,))
    db.close()
    assert list(opencode.sessions(path)) == [(DB_SUB, "scripted sub-agent (@general subagent)")]
    transcript = turnfold.load(path)
    assert _calls(transcript) == [("bash", "success")]
    [warning] = transcript.warnings
    assert warning.reason == (
        f"session {DB_SUB} is a sub-agent's: its lead, session {DB_LEAD} (its parentID), is "
        "not in this database: shown as a session of its own"
    )
    corpus, _ = _scan(path.parent)
    assert corpus.keys == [f"{path}#{DB_SUB}"]
    assert (corpus.rows[0]["tool_calls"], corpus.rows[0]["warnings"]) == (1, 1)


@pytest.mark.parametrize("size", [2_000, 2 * LIMIT], ids=["over-an-id", "over-the-limit"])
def test_X1_a_sub_agent_whose_parent_id_is_too_long_is_listed_with_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A hostile ``parent_id`` names no lead that is there: the sub-agent is a row of its own,
    the listing of every other session as it was (one over the record limit read without
    loading it: the rows SQLite refuses are read apart). Shown there, it is shown once: the
    lead's call that ran it says where, its steps not nested under it too."""
    path = _database(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE session SET parent_id = printf('%.*c', ?, 'x') WHERE id = ?",
                   (size, DB_SUB))  # fmt: skip
    db.close()
    lower_limit(monkeypatch)
    listed = [session for session, _ in opencode.sessions(path)]
    assert listed == [DB_LEAD, DB_SUB]
    lead = turnfold.load(path, sample=DB_LEAD)
    assert _calls(lead) == _calls(turnfold.load(DATABASE))
    task = lead.tool_calls()[8].subagent
    assert task is not None
    assert (task.agent_id, task.steps_missing) == (DB_SUB, True)
    assert [w.reason for w in lead.warnings] == [
        f"session {DB_SUB}, the sub-agent a task call names, is a session of its own (its "
        "parent_id is too long to read): shown there, not under the call"
    ]
    corpus, _ = _scan(path.parent)
    assert corpus.keys == [f"{path}#{DB_LEAD}", f"{path}#{DB_SUB}"]
    assert [(r["tool_calls"], r["warnings"]) for r in corpus.rows] == [(10, 1), (1, 1)]
    sub = turnfold.load(path, sample=DB_SUB)
    assert _calls(sub) == [("bash", "success")]
    [warning] = sub.warnings
    assert f"its parent_id of {size:,} bytes" in warning.reason
