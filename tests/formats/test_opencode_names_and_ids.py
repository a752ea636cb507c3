"""OpenCode's storage before 1.2 whose files' names are not the ids they hold (spec L-4, C-7).

OpenCode names each file of ``storage/`` after its id and finds it by that name: ``Session.get``
reads ``session/<project>/<id>.json``, a session's messages are ``message/<session>/*.json`` and a
message's parts ``part/<message>/*.json``, and 1.2, copying them into its database, takes every
id from the files' paths ("Derive all IDs from directory/file paths, not JSON content",
``packages/opencode/src/storage/json-migration.ts``). turnfold keys a session the same way, by its
file's name, so ``load(folder, sample=…)``, the ids its errors list and a scan's rows agree; an id
inside that differs is said, and what was filed under it is read too, never dropped unsaid.

The trees are the real one OpenCode 1.1.65 wrote (``fixtures/opencode/v1.1``, as
``test_opencode_storage.py`` reads it) with files renamed or ids changed, in the shapes a public
sweep found (jazzyalex/agent-sessions' ``stage0/agents/opencode/storage_{v2,legacy}``: a
``ses_<x>.json`` holding ``"id": "<x>"``, its messages filed under ``<x>``, messages and parts
named ``msg_0001.json``/``001.json``), which turnfold read as no session at all (a scan gave no
row and no error) or answered with an error listing the very id it said it did not hold.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

import turnfold
from tests.formats.opencode_storage import LEAD, SUB, copy_storage, session_file
from turnfold.formats.agents import opencode
from turnfold.model import Transcript, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures" / "opencode"
DATABASE = FIXTURES / "work" / "opencode.db"
#: The lead's calls in order, with the status each loads with (test_opencode_storage.py).
LEAD_CALLS = [
    ("read", "success"),
    ("grep", "success"),
    ("glob", "success"),
    ("bash", "success"),
    ("bash", "error"),
    ("edit", "success"),
    ("write", "success"),
    ("bash", "success"),
    ("task", "success"),
    ("bash", "success"),
]


def _rewrite(path: Path, **changes: object) -> None:
    document = json.loads(path.read_text())
    document.update(changes)
    path.write_text(json.dumps(document))


def _calls(transcript: Transcript) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in transcript.tool_calls()]


def _prompts(transcript: Transcript) -> list[str]:
    return [e.text.strip('"')[:9] for e in transcript.entries if isinstance(e, UserMessage)]


def _scan(folder: Path) -> turnfold.Corpus:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return turnfold.scan(folder, cache=False, workers=1)


def _drifted(tmp_path: Path) -> Path:
    """The lead session in agent-sessions' "drift" shape: ``ses_<x>.json`` holding ``"id":
    "<x>"``, its messages filed under ``<x>`` and named ``msg_0001.json``…, each message's parts
    under the id the message holds, named ``001.json``… (in the order of their ids)."""
    storage = copy_storage(tmp_path)
    inner = LEAD.removeprefix("ses_")
    _rewrite(session_file(storage, LEAD), id=inner)
    old, new = storage / "message" / LEAD, storage / "message" / inner
    old.rename(new)
    for number, message in enumerate(sorted(new.glob("msg_*.json")), 1):
        message.rename(new / f"msg_{number:04}.json")
        parts = storage / "part" / message.stem  # the id the message holds: kept as is
        for count, part in enumerate(sorted(parts.glob("prt_*.json")), 1):
            part.rename(parts / f"{count:03}.json")
    return storage


# --- a session file named otherwise than the id it holds ----------------------------------------


def test_L4_a_renamed_session_file_loads_by_its_name_and_the_error_never_contradicts_itself(
    tmp_path: Path,
) -> None:
    storage = copy_storage(tmp_path)
    renamed = session_file(storage, "ses_lead_renamed")
    session_file(storage, LEAD).rename(renamed)
    # The folder's only top-level session, by the name the error would list.
    transcript = turnfold.load(storage)
    assert turnfold.load(storage, sample="ses_lead_renamed") == transcript
    assert transcript.metadata["session_id"] == "ses_lead_renamed"
    assert _calls(transcript) == LEAD_CALLS
    assert _prompts(transcript) == ["TF-FIRST:", "TF-SECOND"]
    reasons = [w.reason for w in transcript.warnings]
    assert any(str(renamed) in r and repr(LEAD) in r for r in reasons)
    # Its messages stayed under the id it holds (message/<LEAD>/): read with it, and said.
    assert any(str(storage / "message" / LEAD) in r and "read with it" in r for r in reasons)
    # The id inside is not a name to load by: the error says which name to use instead.
    with pytest.raises(ValueError, match="no OpenCode session") as raised:
        turnfold.load(storage, sample=LEAD)
    said = str(raised.value)
    assert f"no OpenCode session {LEAD!r}" in said
    assert f"{renamed} holds that id" in said
    assert "sample='ses_lead_renamed'" in said


def test_C7_a_scan_of_a_renamed_session_file_is_its_row_as_load_reads_it(tmp_path: Path) -> None:
    [original] = _scan(copy_storage(tmp_path / "original")).rows
    storage = copy_storage(tmp_path / "renamed")
    renamed = session_file(storage, "ses_lead_renamed")
    session_file(storage, LEAD).rename(renamed)
    corpus = _scan(storage.parent)
    # The sub-agent's parentID names its lead by the id the renamed file holds: found by it,
    # the sub-agent nests under the lead's task call alone, never a row of its own too.
    [row] = corpus.rows
    assert row["key"] == str(renamed)
    assert row["error"] is None
    assert row["warnings"] == 2  # the id it holds, and the messages filed under that id
    for column in ("turns", "tool_calls", "failed_tools", "subagents", "input_tokens"):
        assert row[column] == original[column], column
    assert corpus[row["key"]].entries == turnfold.load(renamed).entries


# --- ids that are not the files' names (agent-sessions' "drift" shape) ----------------------------


def test_L4_files_named_otherwise_than_the_ids_they_hold_are_read_and_each_said(
    tmp_path: Path,
) -> None:
    storage = _drifted(tmp_path)
    lead = session_file(storage, LEAD)
    transcript = turnfold.load(storage)
    assert turnfold.load(lead).entries == transcript.entries
    assert transcript.metadata["session_id"] == LEAD  # the file's name, as OpenCode keys it
    assert _calls(transcript) == LEAD_CALLS
    assert _prompts(transcript) == ["TF-FIRST:", "TF-SECOND"]
    task = transcript.tool_calls()[8]
    assert task.subagent is not None
    assert not task.subagent.steps_missing
    reasons = [w.reason for w in transcript.warnings]
    messages = sorted((storage / "message" / LEAD.removeprefix("ses_")).glob("*.json"))
    # Each file whose id is not its name is named in a warning: the session's and every
    # message's; and each folder filed under such an id.
    for path in [lead, *messages]:
        assert any(f"{path}: holds the id" in r for r in reasons), path
    assert sum("read with it" in r for r in reasons) == 1 + len(messages)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_C7_a_scan_of_drifted_files_is_a_row_not_nothing(tmp_path: Path) -> None:
    [original] = _scan(copy_storage(tmp_path / "original")).rows
    storage = _drifted(tmp_path / "drifted")
    corpus = _scan(storage.parent)
    [row] = corpus.rows
    assert row["key"] == str(session_file(storage, LEAD))
    assert row["error"] is None
    assert row["warnings"] > 0
    for column in ("turns", "tool_calls", "failed_tools", "subagents", "input_tokens"):
        assert row[column] == original[column], column
    # The messages' and parts' files are read with their session: neither rows nor skipped.
    assert corpus.skipped == 0
    assert corpus[row["key"]].entries == turnfold.load(storage).entries


def test_L4_a_session_file_holding_another_id_is_read_by_its_name(tmp_path: Path) -> None:
    """The reverse: the file is named after the session (its messages filed under that name),
    the id it holds is another's."""
    storage = copy_storage(tmp_path)
    lead = session_file(storage, LEAD)
    _rewrite(lead, id="ses_held_inside")
    transcript = turnfold.load(lead)
    assert transcript.entries == turnfold.load(storage, sample=LEAD).entries
    assert _calls(transcript) == LEAD_CALLS
    [warning] = transcript.warnings
    assert f"{lead}: holds the id 'ses_held_inside'" in warning.reason
    [row] = _scan(storage.parent).rows
    assert (row["key"], row["error"], row["tool_calls"]) == (str(lead), None, len(LEAD_CALLS))
    with pytest.raises(ValueError, match=rf"{lead} holds that id.*sample='{LEAD}'"):
        turnfold.load(storage, sample="ses_held_inside")


# --- where the rule by place stops ----------------------------------------------------------------


def test_a_folder_named_message_outside_a_storage_folder_is_not_opencode_s(tmp_path: Path) -> None:
    """Files of any name are OpenCode's only where their folders are a ``storage/`` folder's
    (``session/`` beside ``message/``): another project's ``message/notes/today.json`` is not."""
    stray = tmp_path / "project" / "message" / "notes" / "today.json"
    stray.parent.mkdir(parents=True)
    stray.write_text(json.dumps({"id": "today", "role": "user"}))
    assert opencode.legacy_kind(stray) is None
    storage = copy_storage(tmp_path)
    named = next((storage / "message" / SUB).glob("*.json")).rename(
        storage / "message" / SUB / "first.json"
    )
    assert opencode.legacy_kind(named) == "message"


def test_the_database_keys_by_its_columns_whatever_ids_a_row_s_data_holds(tmp_path: Path) -> None:
    """OpenCode's database (1.2+, and Kilo's, the same tables) keeps the ids in columns, never
    in ``data``: ids written into ``data`` change nothing of what is read (a guard: it held
    before this change too)."""
    copy = tmp_path / "opencode.db"
    shutil.copyfile(DATABASE, copy)
    before = turnfold.load(DATABASE)
    with sqlite3.connect(copy) as db:
        for table, extra in (
            ("message", {"id": "msg_other", "sessionID": "ses_other"}),
            ("part", {"id": "prt_other", "messageID": "msg_other", "sessionID": "ses_other"}),
        ):
            for rowid, data in db.execute(f"SELECT rowid, data FROM {table}").fetchall():
                changed = json.dumps({**json.loads(data), **extra})
                db.execute(f"UPDATE {table} SET data = ? WHERE rowid = ?", (changed, rowid))
    db.close()
    after = turnfold.load(copy)
    assert _calls(after) == _calls(before)
    assert after.entries == before.entries
    [row] = _scan(copy).rows
    assert row["error"] is None
    assert row["tool_calls"] == len(before.tool_calls())
