"""The credential files of Continue, Cursor and OpenHands that a scan still opened and a load
still read (C-1, C-7, L-4), as ``test_credentials_cursor_continue.py`` and
``test_scan_crush_openhands_credentials.py`` test those named before them.

Continue's (``CREDENTIALS`` of ``turnfold.formats.agents.continue_``): ``config.ts`` and the
``out/config.js`` built of it, ``.continuerc.json``, ``index/globalContext.json`` (the MCP
servers' OAuth tokens), the blocks of ``models/``, ``mcpServers/``, ``data/``, ``context/`` and
the configs of ``agents/``, ``assistants/``, ``configs/``, of ``~/.continue`` and of a project's
``.continue``; and all of them in the folder ``$CONTINUE_GLOBAL_DIR`` names, whatever its name.
Cursor's: the MCP servers' ``mcp.json`` of ``~/.cursor`` and of a project's ``.cursor``.
OpenHands': its CLI's ``mcp.json`` and ``cloud/api_key.txt``, the app server's
``.jwt_secret``, and the folder ``$OPENHANDS_PERSISTENCE_DIR`` names. Codex's, in the folder
``$CODEX_HOME`` names under another name than ``.codex``. A scan opened each
``.json`` and ``.txt`` among them to learn its format and counted the others as skipped files;
a load read any of them.

Each is shaped as its tool writes it, its values made up: Continue's blocks as
``getContentsForNewBlock`` writes a new one (``core/config/workspace/workspaceBlocks.ts``),
``globalContext.json`` as ``GlobalContext.update`` (``core/util/GlobalContext.ts``),
``config.ts`` from ``DEFAULT_CONFIG_TS_CONTENTS`` (``core/util/paths.ts``; continuedev/continue
d0a3c0b6); the MCP configs as the ``mcpServers`` map Cursor's documentation and fastmcp's
``MCPConfig`` (which OpenHands-CLI's ``save_mcp_config`` writes) share; the Cloud key as
``TokenStorage.store_api_key`` writes it, the bare key; Codex's ``auth.json`` as its ChatGPT
login writes it (``OPENAI_API_KEY``, ``tokens``, ``last_refresh``). The sessions beside them are the
committed Cursor transcript and the Continue session the real ``cn`` wrote
(tests/fixtures/SOURCES.md).

A workspace's ``state.vscdb`` of Cursor's ``User/workspaceStorage`` holds no secret (the
reasons are beside Cursor's ``CREDENTIALS``): it stays a file like any other, counted skipped
by a scan that never opens it, said to be no transcript by a load.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import turnfold
from tests.credential_homes import (
    Maker,
    indented,
    plant,
    scan_here,
    scans_of_homes,
    touched,
    written,
)
from tests.credentials_cases import each_one_named
from turnfold.formats.credentials import keeper_of
from turnfold.formats.errors import TranscriptFormatError

FIXTURES = Path(__file__).parent / "fixtures"
CURSOR_SESSION = FIXTURES / "cursor" / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13"
CONTINUE_SESSIONS = FIXTURES / "continue" / "work" / "sessions"
#: What no test may find in a path opened, an error or a warning.
TOKEN = "not-a-real-token-9d3e"
#: The folders the two variables move Continue's and OpenHands' folders to, under the home:
#: not hidden, so a walk of the home enters them as any folder.
CONTINUE_MOVED = "continue-home"
OPENHANDS_MOVED = "openhands-home"
CODEX_MOVED = "codex-home"
#: The variables that move those folders, and where each moves its tool's in a test home.
MOVED = {"CONTINUE_GLOBAL_DIR": CONTINUE_MOVED, "OPENHANDS_PERSISTENCE_DIR": OPENHANDS_MOVED,
         "CODEX_HOME": CODEX_MOVED}  # fmt: skip

#: A model block, as Continue writes a new one, with the key written in.
MODEL_BLOCK = f"""name: New model
version: 0.0.1
schema: v1
models:
  - provider: anthropic
    model: claude-sonnet-4-6
    apiKey: sk-ant-{TOKEN}
    name: Claude Sonnet 4.6
    roles:
      - chat
      - edit
"""
MCP_BLOCK = f"""name: New MCP server
version: 0.0.1
schema: v1
mcpServers:
  - name: Linear
    command: npx
    args:
      - -y
      - mcp-remote
    env:
      LINEAR_API_KEY: lin_api_{TOKEN}
"""
DATA_BLOCK = f"""name: New data
version: 0.0.1
schema: v1
data:
  - name: Team analytics
    destination: https://analytics.example.invalid/ingest
    schema: 0.2.0
    apiKey: {TOKEN}
"""
CONTEXT_BLOCK = f"""name: New context
version: 0.0.1
schema: v1
context:
  - provider: jira
    params:
      domain: example.atlassian.net
      token: {TOKEN}
"""
#: A whole config, as ``agents/``, ``assistants/`` and ``configs/`` hold one.
ASSISTANT = f"""name: Team assistant
version: 1.0.0
schema: v1
models:
  - name: GPT-4o
    provider: openai
    model: gpt-4o
    apiKey: sk-{TOKEN}
"""
#: The ``mcpServers`` map of a JSON MCP config (Claude Desktop's shape, which Continue's
#: ``mcpServers/*.json``, Cursor's and OpenHands-CLI's ``mcp.json`` all read).
MCP_JSON = {
    "mcpServers": {
        "context7": {"url": "https://mcp.context7.example.invalid/mcp",
                     "headers": {"CONTEXT7_API_KEY": TOKEN}},
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"ghp_{TOKEN}"}},
    }
}  # fmt: skip
CONFIG_TS = f"""export function modifyConfig(config: Config): Config {{
  config.models.push({{
    title: "GPT-4o", provider: "openai", model: "gpt-4o", apiKey: "sk-{TOKEN}",
  }});
  return config;
}}
"""
CONFIG_JS = f"""var modifyConfig = function(config) {{
  config.models.push({{
    title: "GPT-4o", provider: "openai", model: "gpt-4o", apiKey: "sk-{TOKEN}"
  }});
  return config;
}};
export {{ modifyConfig }};
"""
CONTINUERC = {
    "models": [{"title": "GPT-4o", "provider": "openai", "model": "gpt-4o",
                "apiKey": f"sk-{TOKEN}"}],
    "mergeBehavior": "merge",
}  # fmt: skip
GLOBAL_CONTEXT = {
    "mcpOauthStorage": {
        "https://mcp.linear.example.invalid/sse": {
            "clientInformation": {"client_id": "client-1", "redirect_uris": []},
            "tokens": {"access_token": TOKEN, "token_type": "Bearer", "refresh_token": TOKEN},
            "codeVerifier": TOKEN,
        }
    },
    "indexingPaused": False,
}
CONTINUE_JSON = {
    "models": [{"title": "GPT-4o", "provider": "openai", "model": "gpt-4o",
                "apiKey": f"sk-{TOKEN}"}],
}  # fmt: skip
AGENT_SETTINGS = {"llm": {"model": "claude-sonnet-4-5", "api_key": f"sk-{TOKEN}"}, "tools": []}
CODEX_AUTH = {
    "OPENAI_API_KEY": None,
    "tokens": {"id_token": f"eyJ.{TOKEN}", "access_token": f"eyJ.{TOKEN}",
               "refresh_token": f"rt_{TOKEN}", "account_id": "acct-1"},
    "last_refresh": "2026-01-01T00:00:00Z",
}  # fmt: skip


#: Each credential file by its place in the home, with what makes it, and whose it is.
SECRETS: dict[str, tuple[Maker, str]] = {
    ".continue/config.ts": (written(CONFIG_TS), "continue"),
    ".continue/out/config.js": (written(CONFIG_JS), "continue"),
    ".continue/.continuerc.json": (indented(CONTINUERC), "continue"),
    ".continue/index/globalContext.json": (indented(GLOBAL_CONTEXT), "continue"),
    ".continue/models/new-model.yaml": (written(MODEL_BLOCK), "continue"),
    ".continue/mcpServers/new-mcp-server.yaml": (written(MCP_BLOCK), "continue"),
    ".continue/mcpServers/mcp.json": (indented(MCP_JSON), "continue"),
    "work/.continue/models/new-model.yaml": (written(MODEL_BLOCK), "continue"),
    "work/.continue/mcpServers/servers.json": (indented(MCP_JSON), "continue"),
    "work/.continue/data/new-data.yaml": (written(DATA_BLOCK), "continue"),
    "work/.continue/context/new-context.yaml": (written(CONTEXT_BLOCK), "continue"),
    "work/.continue/agents/team.yaml": (written(ASSISTANT), "continue"),
    "work/.continue/assistants/team.yaml": (written(ASSISTANT), "continue"),
    "work/.continue/configs/team.yaml": (written(ASSISTANT), "continue"),
    f"{CONTINUE_MOVED}/config.json": (indented(CONTINUE_JSON), "continue"),
    f"{CONTINUE_MOVED}/config.yaml": (written(ASSISTANT), "continue"),
    f"{CONTINUE_MOVED}/.env": (written(f"ANTHROPIC_API_KEY=sk-ant-{TOKEN}\n"), "continue"),
    f"{CONTINUE_MOVED}/mcpServers/mcp.json": (indented(MCP_JSON), "continue"),
    f"{CONTINUE_MOVED}/index/globalContext.json": (indented(GLOBAL_CONTEXT), "continue"),
    ".cursor/mcp.json": (indented(MCP_JSON), "cursor"),
    "work/.cursor/mcp.json": (indented(MCP_JSON), "cursor"),
    ".openhands/mcp.json": (indented(MCP_JSON), "openhands"),
    ".openhands/cloud/api_key.txt": (written(f"sk-oh-{TOKEN}"), "openhands"),
    ".openhands/.jwt_secret": (written(TOKEN.replace("-", "")), "openhands"),
    f"{OPENHANDS_MOVED}/agent_settings.json": (indented(AGENT_SETTINGS), "openhands"),
    f"{OPENHANDS_MOVED}/mcp.json": (indented(MCP_JSON), "openhands"),
    f"{OPENHANDS_MOVED}/cloud/api_key.txt": (written(f"sk-oh-{TOKEN}"), "openhands"),
    f"{CODEX_MOVED}/auth.json": (indented(CODEX_AUTH), "codex"),
}


pytestmark = pytest.mark.usefixtures("cache_dir")


def _home(root: Path, monkeypatch: pytest.MonkeyPatch, secrets: bool) -> Path:
    """A home with a Cursor agent transcript and a Continue session in ``~/.continue`` and in
    the folder ``$CONTINUE_GLOBAL_DIR`` names (each of :data:`MOVED` set to its folder), and
    (with ``secrets``) every file of :data:`SECRETS`."""
    home = root / "me"
    transcripts = home / ".cursor" / "projects" / "home-me-work" / "agent-transcripts"
    shutil.copytree(CURSOR_SESSION, transcripts / CURSOR_SESSION.name)
    shutil.copytree(CONTINUE_SESSIONS, home / ".continue" / "sessions")
    shutil.copytree(CONTINUE_SESSIONS, home / CONTINUE_MOVED / "sessions")
    (home / "work").mkdir()
    for variable, folder in MOVED.items():
        monkeypatch.setenv(variable, str(home / folder))
    if secrets:
        plant(home, {place: make for place, (make, _) in SECRETS.items()})
    return home


def test_C1_a_home_scan_opens_none_of_the_newly_named_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    plain, full, home = scans_of_homes(
        lambda root, secrets: _home(root, monkeypatch, secrets), tmp_path, opened
    )
    assert touched(opened, SECRETS) == []
    # Neither opened nor counted: the YAML blocks, config.ts and config.js were skipped files.
    assert (full.skipped, len(full.keys)) == (plain.skipped, len(plain.keys))
    assert sorted(row["format"] for row in full.rows) == ["continue", "continue", "cursor"]
    assert all(row["error"] is None for row in full.rows)
    for folder in (".continue", "work", ".openhands", *MOVED.values()):
        scan_here(home / folder)
    assert touched(opened, SECRETS) == []


(
    test_C7_one_named_to_scan_is_said_and_never_opened,
    test_L4_one_named_to_load_is_refused_unopened,
) = each_one_named(SECRETS, TOKEN, lambda root, monkeypatch: _home(root, monkeypatch, secrets=True))


def test_C7_the_moved_folders_go_by_the_variables_as_they_are_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the folder a variable names is the tool's: unset, the same files are anyone's; a
    relative value is the working folder's, as Continue resolves it."""
    continue_config = tmp_path / "settings" / "config.json"
    openhands_key = tmp_path / "oh" / "cloud" / "api_key.txt"
    codex_auth = tmp_path / "cx" / "auth.json"
    for variable in MOVED:
        monkeypatch.delenv(variable, raising=False)
    assert keeper_of(continue_config) is keeper_of(openhands_key) is keeper_of(codex_auth) is None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", "settings")
    monkeypatch.setenv("OPENHANDS_PERSISTENCE_DIR", str(tmp_path / "oh"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    assert [keeper_of(continue_config), keeper_of(openhands_key), keeper_of(codex_auth)] == [
        "continue",
        "openhands",
        "codex",
    ]
    assert keeper_of(tmp_path / "settings" / "sessions" / "config.json") is None
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(tmp_path / "elsewhere"))
    assert keeper_of(continue_config) is None


def test_C7_files_of_those_names_elsewhere_are_no_one_s_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's ``models/`` or ``mcp.json``, a ``config.ts`` of any other program, are files
    like any other: only the tools' own folders' are passed over."""
    for variable in MOVED:
        monkeypatch.delenv(variable, raising=False)
    for place in ("project/models/model.yaml", "project/mcp.json", "project/config.ts",
                  "project/out/config.js",
                  "project/index/globalContext.json", "project/cloud/api_key.txt",
                  "project/.jwt_secret", "project/data/runs.json", "project/tools/mcp.json",
                  ".continue/sessions/mcp.json",
                  ".openhands/conversations/api_key.txt"):  # fmt: skip
        assert keeper_of(tmp_path / place) is None, place
    for place, (_, keeper) in SECRETS.items():
        if not place.startswith(tuple(MOVED.values())):
            assert keeper_of(tmp_path / place) == keeper, place


def _workspace_database(path: Path) -> None:
    """A workspace's ``state.vscdb``: VS Code's ``ItemTable`` (its schema, ``src/vs/base/parts/
    storage/node/storage.ts``) with Cursor's list of the workspace's chats and its prompts."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        composers = {"allComposers": [{"composerId": "c1", "name": "Fix the failing test"}]}
        db.executemany("INSERT INTO ItemTable VALUES (?, ?)", [
            ("composer.composerData", json.dumps(composers)),
            ("aiService.prompts", json.dumps([{"text": "fix the failing test",
                                               "commandType": 4}])),
        ])  # fmt: skip


def test_C7_a_workspace_state_of_cursor_is_no_credentials_and_is_skipped_unopened(
    tmp_path: Path, opened: list[str], connected: list[str]
) -> None:
    """Not refused (it holds no secret), and not read either: no reader takes a ``.vscdb``, so
    a scan counts it and its backup as skipped files without opening them, and a load says it
    is no transcript, naming the file. A guard: the code before these files were named did the
    same."""
    workspace = tmp_path / ".config" / "Cursor" / "User" / "workspaceStorage" / "0f1e2d3c"
    workspace.mkdir(parents=True)
    database = workspace / "state.vscdb"
    _workspace_database(database)
    shutil.copyfile(database, workspace / "state.vscdb.backup")
    (workspace / "workspace.json").write_text(json.dumps({"folder": "file:///home/me/work"}))
    for path in (database, workspace / "state.vscdb.backup"):
        assert keeper_of(path) is None
    opened.clear()
    connected.clear()
    corpus = scan_here(tmp_path / ".config" / "Cursor")
    assert (len(corpus), corpus.skipped) == (0, 3)
    assert not [path for path in opened + connected if "state.vscdb" in path]
    with pytest.raises(TranscriptFormatError, match=r"not a transcript") as raised:
        turnfold.load(database)
    assert str(database) in str(raised.value)
    assert "credentials" not in str(raised.value)
