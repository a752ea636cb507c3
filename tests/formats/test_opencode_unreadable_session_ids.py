"""An OpenCode database whose message and part rows name a session by an id too long to read
(spec X-1, C-7): one stand-in for each such session, not one for each row.

The sessions a database's message and part rows name without a row of their own are listed
(``GROUP BY session_id``); a hostile ``session_id`` over the record limit, which SQLite refuses
to group, sort or compare, came back row by row, and each row was listed as a session of its
own: a scan gave an error row for every message and part of one session, and the rows of a
session whose own row holds such an id were listed beside it too. Now those ids are told apart
by their size and digest, read a piece at a time, never whole.

The database is the real one OpenCode 1.18.33 wrote (``fixtures/opencode/work``), copied, its
rows given hostile ids by SQLite's own ``printf``.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

import turnfold
from tests.formats.oversized import LIMIT, lower_limit
from turnfold.formats import databases
from turnfold.formats.agents import opencode
from turnfold.formats.errors import TranscriptFormatError

pytestmark = pytest.mark.usefixtures("cache_dir")

DATABASE = Path(__file__).parents[1] / "fixtures" / "opencode" / "work" / "opencode.db"
DB_LEAD = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
#: An id over the record limit of these tests (which SQLite refuses), and one over an id's
#: bound only: both the same length for every session, so that only what they hold tells.
OVER_THE_LIMIT, OVER_AN_ID = 2 * LIMIT, 2_000


def _hostile(path: Path, table: str, letter: str, size: int, rows: int) -> list[int]:
    """``rows`` copies of the first row of ``table``, each naming the session made of
    ``size`` times ``letter``; their rowids."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        picked = ", ".join({"id": "id || ?", "session_id": "printf('%.*c', ?, ?)"}.get(c, c)
                           for c in columns)  # fmt: skip
        made = []
        for n in range(rows):
            cursor = db.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {picked} "
                                f"FROM {table} ORDER BY rowid LIMIT 1",
                                (f"_{letter}{n}", size, letter))  # fmt: skip
            assert cursor.lastrowid is not None
            made.append(cursor.lastrowid)
    return made


def _stand_in(table: str, rowid: int, size: int) -> str:
    if size > LIMIT:
        why = f"over the limit of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES)"
    else:
        why = f"over the {databases.KEY_BYTES:,} bytes an id or a time may hold"
    return f"{databases.UNREADABLE_ID}{table} row {rowid}: its session_id of {size:,} bytes, {why}>"


def test_X1_rows_naming_one_session_by_an_id_over_the_limit_list_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three messages and a part of one session, two parts of another and two messages of a
    session whose own row holds its id, all over the record limit and of one length: one
    stand-in each for the first two, whose loads say why, and none for the third (its row's
    stand-in lists it); a scan gives an error row for each."""
    path = tmp_path / "opencode.db"
    shutil.copyfile(DATABASE, path)
    x = _hostile(path, "message", "x", OVER_THE_LIMIT, 3)
    _hostile(path, "part", "x", OVER_THE_LIMIT, 1)
    y = _hostile(path, "part", "y", OVER_THE_LIMIT, 2)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(session)")]
        picked = ", ".join("printf('%.*c', ?, 'z')" if c == "id" else c for c in columns)
        cursor = db.execute(f"INSERT INTO session ({', '.join(columns)}) SELECT {picked} FROM "
                            "session WHERE id = ?", (OVER_THE_LIMIT, DB_LEAD))  # fmt: skip
        z = cursor.lastrowid
    _hostile(path, "message", "z", OVER_THE_LIMIT, 2)
    lower_limit(monkeypatch)
    listed = [session for session, _ in opencode.sessions(path)]
    row_of_z = (f"{databases.UNREADABLE_ID}session row {z}: its id of {OVER_THE_LIMIT:,} bytes, "
                f"over the limit of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES)>")  # fmt: skip
    assert listed == [
        DB_LEAD,
        row_of_z,
        _stand_in("message", x[0], OVER_THE_LIMIT),
        _stand_in("part", y[0], OVER_THE_LIMIT),
    ]
    for stand_in in listed[1:]:
        reason = re.escape(stand_in[len(databases.UNREADABLE_ID) : -1])
        with pytest.raises(TranscriptFormatError, match=rf"{re.escape(str(path))}.*{reason}"):
            turnfold.load(path, sample=stand_in)
    assert turnfold.load(path, sample=DB_LEAD).warnings == []
    corpus = turnfold.scan(tmp_path, workers=1)
    assert corpus.keys == [f"{path}#{session}" for session in listed]
    assert [row["error"] is None for row in corpus.rows] == [True, False, False, False]


def test_X1_a_message_and_a_part_naming_one_long_id_list_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id over an id's bound but within the record limit: SQLite groups each table's rows
    by it, but a message's and a part's were two sessions."""
    path = tmp_path / "opencode.db"
    shutil.copyfile(DATABASE, path)
    message = _hostile(path, "message", "x", OVER_AN_ID, 2)
    _hostile(path, "part", "x", OVER_AN_ID, 2)
    part = _hostile(path, "part", "y", OVER_AN_ID, 1)
    lower_limit(monkeypatch)
    assert [session for session, _ in opencode.sessions(path)] == [
        DB_LEAD,
        _stand_in("message", message[0], OVER_AN_ID),
        _stand_in("part", part[0], OVER_AN_ID),
    ]
