"""A scan of a home enters OpenCode's data folder (``~/.local/share/opencode``, spec C-1), which
holds, beside its database, the providers' keys (``auth.json``) and the MCP servers' OAuth
tokens (``mcp-auth.json``), and while OpenCode runs the database's ``-wal`` and ``-shm``
files. A worker opened the credentials to learn their format, then skipped them, and the
``-wal``/``-shm`` files were counted as skipped files (C-7): the credentials are passed over
by name, never opened, and a database's ``-wal``/``-shm``/``-journal`` files are part of the
database, never skipped files, wherever they lie.

The database is the committed one OpenCode wrote (tests/fixtures/SOURCES.md); the credentials
are shaped as OpenCode writes them (``Auth.Info`` of ``packages/opencode/src/auth/index.ts``,
``McpAuth.Entry`` of ``src/mcp/auth.ts``), their values made up.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from turnfold import scan
from turnfold.corpus import Corpus

FIXTURES = Path(__file__).parent / "fixtures"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
LANGGRAPH = (
    FIXTURES / "frameworks" / "langchain" / "langgraph_v1.2.24_sqlitesaver_checkpoints.sqlite"
)
AUTH = {"anthropic": {"type": "api", "key": "sk-ant-not-a-real-key"}}
MCP_AUTH = {
    "notes": {
        "tokens": {"accessToken": "not-a-real-token", "refreshToken": "not-a-real-refresh"},
        "serverUrl": "https://mcp.example.invalid/mcp",
    }
}
#: What a scan must never open, by name.
UNOPENED = ("auth.json", "mcp-auth.json", "-wal", "-shm", "-journal")


pytestmark = pytest.mark.usefixtures("cache_dir")


def _home(root: Path, extras: bool) -> Path:
    """A home whose OpenCode data folder holds its database (and, with ``extras``, its
    credentials and the database's ``-wal``/``-shm``), and a folder of a LangGraph database
    (with ``extras``, its rollback ``-journal``)."""
    home = root / "me"
    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    shutil.copyfile(OPENCODE, data / "opencode.db")
    runs = home / "runs"
    runs.mkdir()
    shutil.copyfile(LANGGRAPH, runs / "checkpoints.sqlite")
    if extras:
        (data / "auth.json").write_text(json.dumps(AUTH), "utf-8")
        (data / "mcp-auth.json").write_text(json.dumps(MCP_AUTH), "utf-8")
        # Empty, as SQLite leaves them between writes: a journal of no bytes is not hot, so
        # the read-only connection reads the database as it stands.
        for part in ("opencode.db-wal", "opencode.db-shm"):
            (data / part).write_bytes(b"")
        (runs / "checkpoints.sqlite-journal").write_bytes(b"")
    return home


def _scan(source: Any) -> Corpus:
    return scan(source, workers=1, cache=False)


def test_C1_a_home_scan_opens_no_credential_and_counts_no_part_of_a_database(
    tmp_path: Path, opened: list[str]
) -> None:
    plain = _scan(_home(tmp_path / "plain", extras=False))
    home = _home(tmp_path / "full", extras=True)
    opened.clear()
    full = _scan(home)
    assert [p for p in opened if Path(p).name.endswith(UNOPENED)] == []
    assert full.skipped == plain.skipped
    assert [key.replace(str(home), "~") for key in full.keys] == [
        key.replace(str(tmp_path / "plain" / "me"), "~") for key in plain.keys
    ]
    assert any(key.startswith(f"{home}/.local/share/opencode/opencode.db#") for key in full.keys)


def test_C1_a_glob_of_the_data_folder_opens_no_credential_and_counts_no_part(
    tmp_path: Path, opened: list[str]
) -> None:
    """Named by a glob, the files are met one by one, not in a walk: still never opened or
    counted."""
    home = _home(tmp_path, extras=True)
    opened.clear()
    for pattern in (home / ".local" / "share" / "opencode" / "*", home / "runs" / "*"):
        corpus = _scan(str(pattern))
        assert corpus.skipped == 0, pattern
        assert len(corpus.keys) >= 1
    assert [p for p in opened if Path(p).name.endswith(UNOPENED)] == []
