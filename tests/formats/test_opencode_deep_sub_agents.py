"""OpenCode sub-agents that run sub-agents, many levels deep (spec C-1, C-7: nothing dropped
unsaid).

A sub-agent whose agent may use the ``task`` tool runs sub-agents of its own, each a session
naming its lead (``parent_id``; ``parentID`` before 1.2) and named by its lead's ``task`` call
(``state.metadata.sessionId``). Such a chain nested only 8 deep: the ninth session was neither
under its call nor a row of its own, and nothing said so. Now a chain nests down to
``turnfold.nesting.MAX_DEPTH`` (what the view can nest with room to spare: it builds a level by
recursion); a session deeper is named in a warning and loads as a session of its own.

The chains are made of the real sessions OpenCode wrote (``fixtures/opencode/work``, 1.18.33's
database; ``fixtures/opencode/v1.1``, 1.1.65's ``storage/``): the lead's message that holds its
``task`` call, copied as each link's session, its call naming the next link, and the real
sub-agent at the bottom.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.opencode_storage import LEAD, SUB, copy_storage, session_file
from turnfold.formats.errors import SampleSelectionError
from turnfold.model import ToolCall, Transcript
from turnfold.nesting import MAX_DEPTH
from turnfold.render.viewmodel import build_view_model

DATABASE = Path(__file__).parents[1] / "fixtures" / "opencode" / "work" / "opencode.db"
DB_LEAD = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
DB_SUB = "ses_db99c7864ffeCvby45SXJ73ZRj"
#: The database lead's message holding its task call, and that call's part.
DB_TASK_MESSAGE = "msg_246638772001fg865GujJmGog3"
DB_TASK_PART = "prt_246638796001eKPH6Hy1xHhiZ0"
#: The storage lead's message holding its task call, and that call's part.
TASK_MESSAGE = "msg_2467bcb600016c43twagZnHIrr"
TASK_PART = "prt_2467bcb6f001jH8LqFL2E2WqA9"
DEPTH = MAX_DEPTH


def _link(k: int) -> str:
    return f"ses_chain{k:03d}"


def _named(data: str, session: str, lead: str) -> str:
    """A task part's ``data`` naming ``session`` as its sub-agent's, run by ``lead``."""
    part = json.loads(data)
    part["state"]["metadata"].update(sessionId=session, parentSessionId=lead)
    return json.dumps(part)


def _database_chain(tmp_path: Path, links: int) -> Path:
    """The work database with ``links`` sessions between the lead and its real sub-agent: the
    lead's task call names the first, each link's the next, the last link's the sub-agent."""
    path = tmp_path / "opencode.db"
    shutil.copyfile(DATABASE, path)
    ids = [DB_LEAD, *(_link(k) for k in range(1, links + 1)), DB_SUB]
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for k in range(1, links + 1):
            _copy_session(db, DB_LEAD, id=ids[k], parent_id=ids[k - 1], title=f"link {k}")
            db.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) "
                       "SELECT id || ?, ?, time_created + ?, time_updated + ?, data FROM message "
                       "WHERE id = ?", (f"_{k:03d}", ids[k], k, k, DB_TASK_MESSAGE))  # fmt: skip
            db.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, "
                       "data) SELECT id || ?, message_id || ?, ?, time_created, time_updated, "
                       "data FROM part WHERE message_id = ?",
                       (f"_{k:03d}", f"_{k:03d}", ids[k], DB_TASK_MESSAGE))  # fmt: skip
        for k in range(links + 1):  # the lead's call and each link's name the next session
            part = DB_TASK_PART if k == 0 else f"{DB_TASK_PART}_{k:03d}"
            (data,) = db.execute("SELECT data FROM part WHERE id = ?", (part,)).fetchone()
            db.execute("UPDATE part SET data = ? WHERE id = ?",
                       (_named(data, ids[k + 1], ids[k]), part))  # fmt: skip
        db.execute("UPDATE session SET parent_id = ? WHERE id = ?", (ids[links], DB_SUB))
    return path


def _copy_session(db: sqlite3.Connection, source: str, **values: str) -> None:
    """A row of ``session``: a copy of the row ``source``, its columns ``values`` changed."""
    columns = [row[1] for row in db.execute("PRAGMA table_info(session)")]
    picked = ", ".join("?" if c in values else c for c in columns)
    db.execute(f"INSERT INTO session ({', '.join(columns)}) SELECT {picked} FROM session "
               "WHERE id = ?", [*(values[c] for c in columns if c in values), source])  # fmt: skip


def _nested(transcript: Transcript) -> list[tuple[str | None, ToolCall]]:
    """Each level's sub-agent down the chain (its id) with the task call that runs it."""
    levels = []
    while True:
        tasks = [c for c in transcript.tool_calls() if c.name == "task"]
        if len(tasks) != 1 or tasks[0].subagent is None:
            return levels
        call = tasks[0]
        assert call.subagent is not None
        levels.append((call.subagent.agent_id, call))
        if call.subagent.transcript is None:
            return levels
        transcript = call.subagent.transcript


def _too_deep(session: str, lead: str, depth: int) -> str:
    return (f"sub-agent session {session} of session {lead} is {depth} sub-agents deep, past "
            f"the {DEPTH} that nest under their calls: not shown here; sample={session!r} "
            "loads it as a session of its own")  # fmt: skip


def test_C7_a_chain_of_sub_agents_deeper_than_eight_nests_whole(tmp_path: Path) -> None:
    """Twelve links and the real sub-agent: thirteen levels, each under its call."""
    path = _database_chain(tmp_path, 12)
    transcript = turnfold.load(path)
    levels = _nested(transcript)
    assert [agent for agent, _ in levels] == [_link(k) for k in range(1, 13)] + [DB_SUB]
    assert all(not call.subagent.steps_missing for _, call in levels if call.subagent)
    bottom = levels[-1][1].subagent
    assert bottom is not None
    assert bottom.transcript is not None
    assert [(c.name, c.status) for c in bottom.transcript.tool_calls()] == [("bash", "success")]
    assert transcript.warnings == []


def test_C7_a_sub_agent_past_the_nesting_bound_is_named_and_loads_on_its_own(
    tmp_path: Path,
) -> None:
    """The chain nests down to the bound; the session one deeper is named, not dropped, and
    loads with its own sub-agents nested; a sub-agent no call names at the bound is named too.
    The deepest nesting shown is one the view draws."""
    path = _database_chain(tmp_path, DEPTH + 2)
    # A sub-agent of the deepest session shown that no call names.
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        _copy_session(db, DB_SUB, id="ses_unnamed", parent_id=_link(DEPTH))
    transcript = turnfold.load(path)
    levels = _nested(transcript)
    assert [agent for agent, _ in levels] == [_link(k) for k in range(1, DEPTH + 2)]
    past = levels[-1][1].subagent
    assert past is not None
    # Recorded, and named in the warning: not "not recorded in this file".
    assert not past.steps_missing
    assert past.transcript is None
    assert [w.reason for w in transcript.warnings] == [
        _too_deep(_link(DEPTH + 1), _link(DEPTH), DEPTH + 1),
        _too_deep("ses_unnamed", _link(DEPTH), DEPTH + 1),
    ]
    alone = turnfold.load(path, sample=_link(DEPTH + 1))
    assert [agent for agent, _ in _nested(alone)] == [_link(DEPTH + 2), DB_SUB]
    assert alone.warnings == []
    # The view builds every level nested (the last the call whose steps are not shown), by
    # recursion, within half of Python's default limit: the rest is the notebook's.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(500)
    try:
        view = build_view_model(transcript)
    finally:
        sys.setrecursionlimit(limit)
    assert _nesting(view) == DEPTH + 1


def _nesting(view: Any) -> int:
    """How many sub-agents deep the view model's nodes nest (walked without recursion)."""
    deepest, todo = 0, [(view, 0)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            todo += [(v, depth + (k == "subagent" and bool(v))) for k, v in node.items()]
        elif isinstance(node, list):
            todo += [(v, depth) for v in node]
    return deepest


def _storage_chain(tmp_path: Path, links: int) -> Path:
    """The 1.1.65 storage with ``links`` sessions between the lead and its real sub-agent, each
    a copy of the lead's task message, filed and named as OpenCode files them."""
    storage = copy_storage(tmp_path)
    ids = [LEAD, *(_link(k) for k in range(1, links + 1)), SUB]
    lead = json.loads(session_file(storage, LEAD).read_text())
    message = json.loads((storage / "message" / LEAD / f"{TASK_MESSAGE}.json").read_text())
    parts = {p.stem: json.loads(p.read_text()) for p in (storage / "part" / TASK_MESSAGE).iterdir()}
    for k in range(1, links + 1):
        session = {**lead, "id": ids[k], "parentID": ids[k - 1], "title": f"link {k}"}
        session["time"] = {**lead["time"], "created": lead["time"]["created"] + k}
        session_file(storage, ids[k]).write_text(json.dumps(session))
        message_id = f"{TASK_MESSAGE}{k:03d}"
        (storage / "message" / ids[k]).mkdir()
        (storage / "message" / ids[k] / f"{message_id}.json").write_text(
            json.dumps({**message, "id": message_id, "sessionID": ids[k]})
        )
        (storage / "part" / message_id).mkdir()
        for part_id, part in parts.items():
            copied = {**part, "id": f"{part_id}{k:03d}", "messageID": message_id,
                      "sessionID": ids[k]}  # fmt: skip
            (storage / "part" / message_id / f"{part_id}{k:03d}.json").write_text(
                json.dumps(copied)
            )
    for k in range(links + 1):
        part_id = TASK_PART if k == 0 else f"{TASK_PART}{k:03d}"
        folder = TASK_MESSAGE if k == 0 else f"{TASK_MESSAGE}{k:03d}"
        file = storage / "part" / folder / f"{part_id}.json"
        file.write_text(_named(file.read_text(), ids[k + 1], ids[k]))
    sub = session_file(storage, SUB)
    sub.write_text(json.dumps({**json.loads(sub.read_text()), "parentID": ids[links]}))
    return storage


def test_C7_storage_nests_a_chain_down_to_the_bound(tmp_path: Path) -> None:
    """Before 1.2, the sub-agent exactly at the bound nests too: its walk up to its top took
    one lead too few, and it was a row of its own."""
    storage = _storage_chain(tmp_path, DEPTH - 1)
    transcript = turnfold.load(session_file(storage, LEAD))
    levels = [agent for agent, _ in _nested(transcript)]
    assert levels == [_link(k) for k in range(1, DEPTH)] + [SUB]
    assert transcript.warnings == []
    # The folder holds that one session: the chain is no row of its own.
    assert turnfold.load(storage).entries == transcript.entries


def test_C7_storage_lists_a_session_past_the_bound_as_a_row_of_its_own(tmp_path: Path) -> None:
    """Before 1.2 a session deeper than the bound is a row of its own (as it was), and the call
    that names it says why, not that its lead is missing."""
    storage = _storage_chain(tmp_path, DEPTH + 1)
    transcript = turnfold.load(session_file(storage, LEAD))
    levels = [agent for agent, _ in _nested(transcript)]
    assert levels == [_link(k) for k in range(1, DEPTH + 2)]
    assert [w.reason for w in transcript.warnings] == [
        f"session {_link(DEPTH + 1)}, the sub-agent a task call names, is a session of its own "
        f"(its leads go deeper than the {DEPTH} sub-agents that nest): shown there, not under "
        "the call"
    ]
    listed = ", ".join(repr(session) for session in (LEAD, _link(DEPTH + 1), SUB))
    with pytest.raises(SampleSelectionError, match=re.escape(f"holds 3 OpenCode sessions: pick "
                                                             f"one with sample=<session id> "
                                                             f"(ids {listed})")):  # fmt: skip
        turnfold.load(storage)
