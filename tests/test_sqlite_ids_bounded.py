"""A SQLite store's id or time too long to be one (X-1, C-7): every reader of a store of many
sessions read its ids and times (a session's, a message's, a checkpoint's id; a
``created_at``) whole, up to the record limit: a hostile id of 16 MB was held by Python in
every listing and load, and one over the limit refused the whole store. Each is now read no
longer than ``databases.KEY_BYTES``, measured and cut in SQL (``bounded=`` of
``databases.rows``), so it never enters Python whole; the session it names is listed by a
stand-in whose load is an error naming the file, the row and the size (a scan: that session's
error row), and every other session loads as before. A message's or a session's time of that
size costs its row, or is left out, with a warning.

The stores are copies of the committed databases the real tools wrote (and MLflow's, written
by the real mlflow from its recipe), one row given a hostile id by SQLite's own ``printf``.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import turnfold
from tests.fixtures.traces.mlflow import mlflow_recipe
from tests.formats.oversized import LIMIT, lower_limit, shown
from turnfold.formats import databases
from turnfold.formats.agents import crush, opencode
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import adk_db, agno_db, langgraph_checkpoints, openai_agents_db
from turnfold.formats.traces import mlflow

FIXTURES = Path(__file__).parent / "fixtures"
#: The hostile id: far above an id's bound, far below the record limit (which refuses it).
HOSTILE = 16 * 1024 * 1024


@dataclass(frozen=True)
class Store:
    """A committed store, and the row of its sessions' table given a hostile id: a copy of
    the first row ``where`` picks, its ``column`` the hostile value."""

    reader: ModuleType
    fixture: Path
    table: str
    column: str
    where: str = "1"

    @property
    def name(self) -> str:
        return str(self.reader.NAME)


STORES = [
    Store(crush, FIXTURES / "crush" / "cisco-auto" / "crush.db", "sessions", "id",
          "parent_session_id IS NULL"),
    Store(opencode, FIXTURES / "opencode" / "work" / "opencode.db", "session", "id",
          "parent_id IS NULL"),
    Store(agno_db, FIXTURES / "frameworks" / "agno" / "agno_v3.1.10_sqlitedb.db",
          "agno_sessions", "session_id"),
    Store(adk_db, FIXTURES / "frameworks" / "adk" / "adk_v2.13.0_databasesessionservice.db",
          "sessions", "id"),
    Store(openai_agents_db, FIXTURES / "frameworks" / "openai-agents"
          / "openai-agents_v0.24.0_sqlitesession.db", "agent_sessions", "session_id"),
    Store(langgraph_checkpoints, FIXTURES / "frameworks" / "langchain"
          / "langgraph_v1.2.24_sqlitesaver_checkpoints.sqlite", "checkpoints", "thread_id",
          "checkpoint_id = (SELECT MAX(checkpoint_id) FROM checkpoints)"),
]  # fmt: skip


def _hostile(store: Store, source: Path, path: Path, size: int) -> None:
    """``path``: a copy of ``source`` with one more row of ``store.table``, a copy of the
    first ``store.where`` picks, its ``store.column`` ``size`` bytes long."""
    shutil.copyfile(source, path)
    table = databases.quoted(store.table)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        picked = ", ".join("printf('%.*c', ?, 'x')" if name == store.column
                           else databases.quoted(name) for name in names)  # fmt: skip
        columns = ", ".join(databases.quoted(name) for name in names)
        db.execute(f"INSERT INTO {table} ({columns}) SELECT {picked} FROM {table} "
                   f"WHERE {store.where} ORDER BY rowid LIMIT 1", (size,))  # fmt: skip


def _said(column: str, size: int) -> str:
    return f"its {column} of {size:,} bytes, over the 1,024 bytes an id or a time may hold"


def _listed_and_loaded(
    reader: ModuleType, path: Path, samples: list[str]
) -> tuple[int, list[str], dict[str, turnfold.Transcript]]:
    """The peak of Python's memory while the store at ``path`` is listed and each of
    ``samples`` loaded, with the listing and the loads (the readers imported before, by a
    load of the committed store: an import's allocations are no load's)."""
    tracemalloc.start()
    try:
        listed = [session for session, _ in reader.sessions(path)]
        loaded = {sample: turnfold.load(path, sample=sample) for sample in samples}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, listed, loaded


def _check(store: Store, source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / source.name
    _hostile(store, source, path, HOSTILE)
    samples = [session for session, _ in store.reader.sessions(source)]
    whole = {sample: turnfold.load(source, sample=sample) for sample in samples}
    peak, listed, loaded = _listed_and_loaded(store.reader, path, samples)
    assert peak < HOSTILE // 4  # the id was held whole: listed, and named in every warning
    (unread,) = [session for session in listed if session not in samples]
    assert sorted(listed) == sorted([*samples, unread])
    assert unread.startswith(databases.UNREADABLE_ID)
    assert _said(store.column, HOSTILE) in unread
    for sample in samples:  # every other session as before
        assert shown(loaded[sample].entries) == shown(whole[sample].entries), sample
    said = re.escape(_said(store.column, HOSTILE))
    with pytest.raises(TranscriptFormatError, match=rf"{re.escape(str(path))}.*{said}"):
        turnfold.load(path, sample=unread)
    frame = turnfold.scan(folder, cache=False, workers=1).to_pandas().set_index("key")
    assert sorted(frame.index) == sorted(f"{path}#{s}" for s in [*samples, unread])
    assert frame["error"].drop(f"{path}#{unread}").isna().all()
    assert re.search(said, frame.loc[f"{path}#{unread}", "error"])


@pytest.mark.parametrize("store", STORES, ids=[s.name for s in STORES])
def test_X1_a_session_whose_id_is_megabytes_long_costs_only_its_own_row(
    store: Store, tmp_path: Path
) -> None:
    _check(store, store.fixture, tmp_path)


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MLflow's default SQLite store as the real mlflow left it (its recipe's session of two
    traces played against a scripted server)."""
    pytest.importorskip("mlflow")
    folder = tmp_path_factory.mktemp("mlflow")
    mlflow_recipe.run(folder)
    return folder / "mlflow.db"


def test_X1_an_mlflow_trace_whose_id_is_megabytes_long_costs_only_its_own_row(
    mlflow_store: Path, tmp_path: Path
) -> None:
    """A third trace, a copy of the first with a hostile ``request_id``: listed by a stand-in,
    the conversation of the other two loads as before (the copy's row warned of: it says it
    is the conversation's too, by its ``session_id``)."""
    store = Store(mlflow, mlflow_store, "trace_info", "request_id")
    path = tmp_path / "mlflow.db"
    _hostile(store, mlflow_store, path, HOSTILE)
    whole = turnfold.load(mlflow_store, sample=mlflow_recipe.SESSION)
    peak, listed, loaded = _listed_and_loaded(mlflow, path, [mlflow_recipe.SESSION])
    assert peak < HOSTILE // 4
    (unread,) = [session for session in listed if session != mlflow_recipe.SESSION]
    assert unread.startswith(databases.UNREADABLE_ID)
    assert shown(loaded[mlflow_recipe.SESSION].entries) == shown(whole.entries)
    assert any(_said("request_id", HOSTILE) in w.reason
               for w in loaded[mlflow_recipe.SESSION].warnings)  # fmt: skip
    with pytest.raises(TranscriptFormatError, match=re.escape(_said("request_id", HOSTILE))):
        turnfold.load(path, sample=unread)


#: The stores whose listing neither sorts nor groups by the session's id: there an id over
#: the record limit, which SQLite refuses to load at all, is still skipped alone.
UNSORTED = [s for s in STORES if s.reader in (crush, agno_db, adk_db, openai_agents_db)]


@pytest.mark.parametrize("store", UNSORTED, ids=[s.name for s in UNSORTED])
def test_X1_a_session_id_over_the_record_limit_no_longer_refuses_the_store(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing raised ``not readable: ... its id of 200,000 bytes``, for every session."""
    path = tmp_path / store.fixture.name
    _hostile(store, store.fixture, path, 2 * LIMIT)
    samples = [session for session, _ in store.reader.sessions(store.fixture)]
    lower_limit(monkeypatch)
    listed = [session for session, _ in store.reader.sessions(path)]
    (unread,) = [session for session in listed if session not in samples]
    assert f"its {store.column} of {2 * LIMIT:,} bytes" in unread
    for sample in samples:
        assert turnfold.load(path, sample=sample).entries
    with pytest.raises(TranscriptFormatError, match=f"its {store.column} of 200,000 bytes"):
        turnfold.load(path, sample=unread)


def test_X1_a_crush_message_whose_time_is_megabytes_long_is_kept_without_it_with_a_warning(
    tmp_path: Path,
) -> None:
    """A message's ``created_at`` was read whole into its row, then its row was skipped: now
    the time alone is left out, said, and the message shown."""
    path = tmp_path / "crush.db"
    shutil.copyfile(STORES[0].fixture, path)
    whole = turnfold.load(STORES[0].fixture)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        rowid, message = db.execute("SELECT rowid, id FROM messages WHERE role = 'user' "
                                    "ORDER BY rowid LIMIT 1").fetchone()  # fmt: skip
        db.execute("UPDATE messages SET created_at = printf('%.*c', ?, 'x') WHERE rowid = ?",
                   (HOSTILE, rowid))  # fmt: skip
    tracemalloc.start()
    try:
        transcript = turnfold.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < HOSTILE // 4
    assert [w.reason for w in transcript.warnings] == [
        f"messages row {rowid} (id {message}): {_said('created_at', HOSTILE)}; left out"
    ]
    # Every entry shown; SQLite's ORDER BY created_at puts a text after every number.
    assert sorted(map(repr, shown(transcript.entries))) == sorted(map(repr, shown(whole.entries)))


def test_X1_an_agents_sdk_session_s_time_megabytes_long_is_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    """The session's ``created_at``, read apart from its messages: left out, said."""
    source = STORES[4].fixture
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    sample = next(iter(openai_agents_db.sessions(source)))[0]
    whole = turnfold.load(source, sample=sample)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        (rowid,) = db.execute("SELECT rowid FROM agent_sessions WHERE session_id = ?",
                              (sample,)).fetchone()  # fmt: skip
        db.execute("UPDATE agent_sessions SET created_at = printf('%.*c', ?, 'x') "
                   "WHERE rowid = ?", (HOSTILE, rowid))  # fmt: skip
    transcript = turnfold.load(path, sample=sample)
    assert [w.reason for w in transcript.warnings] == [
        f"agent_sessions row {rowid} (session_id {sample}): "
        f"{_said('created_at', HOSTILE)}; left out"
    ]
    assert "created_at" not in transcript.metadata
    assert "created_at" in whole.metadata
    assert shown(transcript.entries) == shown(whole.entries)


#: The stores whose listing sorts or groups by the session's id (OpenCode's ``ORDER BY
#: time_created, id``, LangGraph's ``GROUP BY thread_id``): SQLite refused even the rowids of
#: an order by an id over the record limit, and the listing raised for every session.
SORTED = [s for s in STORES if s.reader in (opencode, langgraph_checkpoints)]


def _refused_then_listed(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], str]:
    """The listing of the store at ``path`` (one row of it given an id over the limit), its
    sessions in order, the stand-in of the unreadable one apart; each other session loads,
    the stand-in's load is an error saying why."""
    samples = [session for session, _ in store.reader.sessions(store.fixture)]
    lower_limit(monkeypatch)
    listed = [session for session, _ in store.reader.sessions(path)]
    (unread,) = [session for session in listed if session not in samples]
    assert [session for session in listed if session != unread] == samples  # order kept
    assert f"its {store.column} of {2 * LIMIT:,} bytes" in unread
    for sample in samples:
        assert turnfold.load(path, sample=sample).entries, sample
    with pytest.raises(TranscriptFormatError, match=f"its {store.column} of 200,000 bytes"):
        turnfold.load(path, sample=unread)
    return listed, unread


@pytest.mark.parametrize("store", SORTED, ids=[s.name for s in SORTED])
def test_X1_a_session_id_over_the_record_limit_no_longer_refuses_a_sorted_listing(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing raised ``the rows of session are chosen or ordered by a value over the
    limit``: now the sessions are ordered by what SQLite can load (a tie of times broken by
    rowid; a thread's checkpoints in the order written), the same order for every other."""
    path = tmp_path / store.fixture.name
    _hostile(store, store.fixture, path, 2 * LIMIT)
    _refused_then_listed(store, path, monkeypatch)
    frame = turnfold.scan(tmp_path, cache=False, workers=1).to_pandas()
    assert frame["error"].notna().sum() == 1  # the unreadable session's row alone


def test_X1_an_agents_sdk_message_whose_session_id_is_over_the_record_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message naming a session the sessions table lacks, by an id over the limit: the
    sessions its messages name are listed by ``GROUP BY session_id``, which SQLite refused,
    and the listing with it. (The table's own id of that size: ``UNSORTED`` above.)"""
    source = STORES[4].fixture
    store = Store(openai_agents_db, source, "agent_messages", "session_id")
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("INSERT INTO agent_messages (session_id, message_data, created_at) "
                   "SELECT printf('%.*c', ?, 'x'), message_data, created_at FROM agent_messages "
                   "ORDER BY id LIMIT 1", (2 * LIMIT,))  # fmt: skip
    listed, unread = _refused_then_listed(store, path, monkeypatch)
    assert unread.startswith(f"{databases.UNREADABLE_ID}agent_messages row ")
    assert listed[-1] == unread  # its message is the newest
