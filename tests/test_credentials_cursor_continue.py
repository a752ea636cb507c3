"""A scan never opens the files Cursor and Continue keep their keys and tokens in (C-1, C-7), as
it never opens the other agents' (``test_scan_agent_credentials.py``); a load of one is refused
unopened (L-4). A worker opened each ``.json`` among them to learn its format, then counted it
as a skipped file, and a load read it to say it was no transcript.

Cursor's (``CREDENTIALS`` of ``turnfold.formats.cursor``): the ``cursor-agent`` login's
``auth.json`` (``~/.cursor`` on macOS, ``$XDG_CONFIG_HOME/cursor`` on Linux) and the IDE's
``User/globalStorage/state.vscdb`` with its ``.backup``, the database that holds the IDE's chats
(``cursorDiskKV``) beside its tokens (``ItemTable``'s ``cursorAuth/*``): turnfold reads no chat
of it, so it is never opened at all. Continue's (``CREDENTIALS`` of
``turnfold.formats.agents.continue_``): ``~/.continue``'s ``config.yaml``, ``config.json``,
``.env`` and the CLI's ``auth.json``, and a project's ``.continue/.env``.

Each is shaped as its tool writes it (the sources cited beside each reader's ``CREDENTIALS``;
the database by VS Code's own ``ItemTable`` schema, ``src/vs/base/parts/storage/node/
storage.ts``, and Cursor's ``cursorDiskKV`` of the same shape), its values made up. The sessions
beside them are the committed Cursor transcript and the Continue session the real ``cn`` wrote
(tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.credential_homes import (
    Maker,
    plant,
    scan_here,
    scans_of_homes,
    touched,
    written,
)
from tests.credentials_cases import each_one_named
from turnfold.formats.credentials import keeper_of

FIXTURES = Path(__file__).parent / "fixtures"
CURSOR_SESSION = FIXTURES / "cursor" / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13"
CONTINUE_SESSIONS = FIXTURES / "continue" / "work" / "sessions"
#: What no test may find in a path opened, an error or a warning.
TOKEN = "not-a-real-token-2f7c"
CURSOR_AUTH = {"accessToken": f"eyJ.{TOKEN}", "refreshToken": f"eyJ.{TOKEN}",
               "apiKey": f"crsr_{TOKEN}"}  # fmt: skip
#: ``cn``'s onboarding's ``config.yaml`` (``extensions/cli/src/util/yamlConfigUpdater.ts``).
CONTINUE_YAML = f"""name: Local Config
version: 1.0.0
schema: v1
models:
  - name: Claude Sonnet
    provider: anthropic
    model: claude-sonnet-4-5
    apiKey: sk-ant-{TOKEN}
    roles:
      - chat
"""
CONTINUE_JSON = {
    "models": [{"title": "GPT-4o", "provider": "openai", "model": "gpt-4o",
                "apiKey": f"sk-{TOKEN}"}],
    "tabAutocompleteModel": {"title": "Codestral", "provider": "mistral",
                             "model": "codestral-latest", "apiKey": TOKEN},
}  # fmt: skip
#: The CLI's hub login before 92b99cad (``AuthenticatedConfig``, ``auth/workos.ts``).
CONTINUE_AUTH = {
    "userId": "user_01", "userEmail": "me@example.invalid", "accessToken": f"eyJ.{TOKEN}",
    "refreshToken": TOKEN, "expiresAt": 1790000000000, "organizationId": None,
}  # fmt: skip
IDE_DATABASE = ".config/Cursor/User/globalStorage/state.vscdb"


def _ide_database(path: Path) -> None:
    """The IDE's global ``state.vscdb``: VS Code's ``ItemTable`` with Cursor's login in it, and
    Cursor's ``cursorDiskKV`` holding a chat (a composer's data and one of its bubbles)."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for table in ("ItemTable", "cursorDiskKV"):
            db.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.executemany("INSERT INTO ItemTable VALUES (?, ?)", [
            ("cursorAuth/accessToken", f"eyJ.{TOKEN}"),
            ("cursorAuth/refreshToken", f"eyJ.{TOKEN}"),
            ("cursorAuth/cachedEmail", "me@example.invalid"),
            ("cursorAuth/stripeMembershipType", "pro"),
        ])  # fmt: skip
        composer = {"composerId": "c1", "fullConversationHeadersOnly": [{"bubbleId": "b1"}]}
        bubble = {"bubbleId": "b1", "type": 1, "text": "fix the failing test"}
        db.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", [
            ("composerData:c1", json.dumps(composer)), ("bubbleId:c1:b1", json.dumps(bubble)),
        ])  # fmt: skip


def _backup(path: Path) -> None:
    """VS Code's copy of the database beside it (made after it: :data:`SECRETS`' order)."""
    shutil.copyfile(path.with_suffix(""), path)


#: Each credential file by its place in the home, with what makes it, and whose it is.
SECRETS: dict[str, tuple[Maker, str]] = {
    ".cursor/auth.json": (written(CURSOR_AUTH), "cursor"),
    ".config/cursor/auth.json": (written(CURSOR_AUTH), "cursor"),
    IDE_DATABASE: (_ide_database, "cursor"),
    f"{IDE_DATABASE}.backup": (_backup, "cursor"),
    ".continue/config.yaml": (written(CONTINUE_YAML), "continue"),
    ".continue/config.json": (written(CONTINUE_JSON), "continue"),
    ".continue/.env": (written(f"ANTHROPIC_API_KEY=sk-ant-{TOKEN}\n"), "continue"),
    ".continue/auth.json": (written(CONTINUE_AUTH), "continue"),
    "work/.continue/.env": (written(f"OPENAI_API_KEY=sk-{TOKEN}\n"), "continue"),
}


pytestmark = pytest.mark.usefixtures("cache_dir")


def _home(root: Path, secrets: bool) -> Path:
    """A home with a Cursor agent transcript (and its sub-agent's) and a Continue session,
    and (with ``secrets``) both tools' credentials."""
    home = root / "me"
    transcripts = home / ".cursor" / "projects" / "home-me-work" / "agent-transcripts"
    shutil.copytree(CURSOR_SESSION, transcripts / CURSOR_SESSION.name)
    shutil.copytree(CONTINUE_SESSIONS, home / ".continue" / "sessions")
    (home / ".config").mkdir()
    (home / "work").mkdir()
    if secrets:
        plant(home, {place: make for place, (make, _) in SECRETS.items()})
    return home


def test_C1_a_home_scan_opens_neither_cursor_s_nor_continue_s_keys(
    tmp_path: Path, opened: list[str], connected: list[str]
) -> None:
    plain, full, home = scans_of_homes(_home, tmp_path, opened, connected)
    assert touched(opened, SECRETS) == []
    assert (full.skipped, len(full.keys)) == (plain.skipped, len(plain.keys))
    assert sorted(row["format"] for row in full.rows) == ["continue", "cursor"]
    # The folders a home scan does not enter, named: their credentials still unopened, and
    # none counted (the IDE's database was a skipped file, ``auth.json`` opened and skipped).
    for folder in (home / ".config", home / ".config" / "Cursor", home / "work"):
        corpus = scan_here(folder)
        assert (len(corpus), corpus.skipped) == (0, 0), folder
    assert touched(opened, SECRETS) == touched(connected, SECRETS) == []


# A load is refused whatever format is asked for: the IDE's database, read as Cursor's, would
# be a chat store; it is refused before any reader sees it, so no token can reach a transcript.
(
    test_C7_one_named_to_scan_is_said_and_never_opened,
    test_L4_one_named_to_load_is_refused_unopened,
) = each_one_named(SECRETS, TOKEN, lambda root, _: _home(root, secrets=True))


def test_C7_files_of_those_names_elsewhere_are_no_one_s_credentials(tmp_path: Path) -> None:
    """Only the tools' own folders' files are passed over: a project's ``config.yaml`` or
    ``.env``, another program's ``state.vscdb`` (VS Code's own ``Code`` folder), are files
    like any other."""
    for place in ("project/config.yaml", "project/.env", "project/config.json",
                  ".config/Code/User/globalStorage/state.vscdb", "project/cursor.json",
                  ".continue/sessions/config.json"):  # fmt: skip
        assert keeper_of(tmp_path / place) is None, place
    for place, (_, keeper) in SECRETS.items():
        assert keeper_of(tmp_path / place) == keeper, place
