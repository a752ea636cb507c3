"""The files the Copilot CLI and Cline keep keys and tokens in beside their sessions, which a scan
opened and a load read (C-1, C-7, L-4), and the folders Cline's variables move its sessions to,
which a scan of the home never walked (C-1).

The Copilot CLI's (``CREDENTIALS`` of ``turnfold.formats.agents.copilot``), in ``~/.copilot`` or
``$COPILOT_HOME`` (GitHub's "Copilot CLI configuration directory" reference and ``copilot help
config``): ``mcp-config.json`` (the MCP servers' ``env`` and ``headers``) and ``mcp-config``,
the name without its extension older builds wrote and 1.0.102 still reads; ``settings.json``
(``proxyUrl``, whose credentials ``copilot config`` writes as they are, and the ``env`` of
inline ``hooks``); ``lsp-config.json`` (the LSP servers' ``env``); ``providers.json`` (the
bring-your-own-key providers: their keys); the user's hook files ``hooks/*.json`` (``env``);
``mcp-secrets/`` (the MCP secrets' fallback store where no keychain is); ``config`` and
``lsp-config``, the names without extension older builds wrote (0.0.420 still reads them
where no ``.json`` is; 1.0.102's XDG migration moves them into ``~/.copilot`` by those names),
``config`` holding the login's token (``copilot_tokens``, ``store_token_plaintext``);
``permissions-config.json`` and ``permissions-config`` (the tools and folders the user allowed,
by the paths of their repositories: 0.0.420's ``LOCATION_PERMISSIONS`` store, a name on
1.0.102's migration list). Builds
before 1.0 kept that folder in ``$XDG_CONFIG_HOME/.copilot`` when the variable was set (and
their sessions in ``$XDG_STATE_HOME/.copilot``): ``EI`` of 0.0.420's ``index.js``; the
migration's lists of each folder's names, ``cli-main.js`` of 1.0.102.

Cline's (``CREDENTIALS`` of ``turnfold.formats.agents.cline``), in its data folder
(``resolveClineDataDir`` of ``@cline/shared``'s storage, cline/cline
``sdk/packages/shared/src/storage/paths.ts``: ``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``,
else ``~/.cline/data``): ``secrets.json`` and ``globalState.json`` (the extension's and the
2.x CLI's stores, ``apps/vscode/src/shared/storage/storage-context.ts``: the providers' keys,
and ``openAiHeaders``), ``settings/providers.json`` (the providers' ``apiKey``,
``accessToken``, ``refreshToken``, ``headers``), ``settings/cline_mcp_settings.json`` (the MCP
servers' ``env`` and ``headers``), the connectors' ``connectors/settings.json`` (and the
``.migrated`` copy ``ConnectorStore`` leaves) and ``db/connectors.db``
(``sdk/packages/shared/src/db/connector-store.ts``); ``$CLINE_CONNECTOR_DATA_DIR`` and
``$CLINE_DB_DATA_DIR`` move those two folders. ``$CLINE_SESSION_DATA_DIR`` moves the sessions
(``resolveSessionDataDir``): a scan of the home walks it, ``$CLINE_DATA_DIR`` and
``$CLINE_DIR/data`` when no walk of the home meets them.

How each was made: the Copilot CLI's ``mcp-config.json`` and ``settings.json`` are what the
real ``copilot`` 1.0.102 wrote (``copilot mcp add github --env …``, ``copilot mcp add
--transport http context7 … --header …``, ``copilot config proxyUrl …``, run once offline in a
scratch home, ``unshare -n``); Cline's ``settings/providers.json`` and
``settings/cline_mcp_settings.json`` what the real ``cline`` 3.0.65 wrote (``cline auth -p
anthropic -k … -m claude-sonnet-4-6``, ``cline mcp add context7 … --transport http --header
… --yes``, ``cline mcp add github --yes -- npx …``, the same way). The rest are **hand-made**
in the shapes the tools' sources and docs give (``add-lsp-servers.md``, the hooks reference,
the config schema and the MCP OAuth token files of 0.0.420's ``index.js``,
``LegacySecrets`` / ``LegacyGlobalState`` of
``sdk/packages/core/src/services/storage/provider-settings-legacy-migration.ts``,
``CONNECTOR_CONFIG_SCHEMA`` of ``connector-store.ts``); every value is made up. The sessions
beside them are the committed fixtures of the real tools (tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.credential_homes import (
    Maker,
    plant,
    refused_unopened,
    said_unopened,
    scan_here,
    touched,
    written,
)
from tests.credentials_cases import each_one_named
from turnfold.formats.credentials import keeper_of
from turnfold.formats.errors import TranscriptFormatError

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "not-a-real-token-5b1f"
#: A Copilot CLI session folder (``session-state/<sessionId>/``), a Cline 4 session folder
#: (``sessions/<sessionId>/``) by the real ``cline`` 3.0.65, and a task folder
#: (``tasks/<taskId>/``) by the real Cline CLI 2.18.0.
COPILOT_SESSION = FIXTURES / "copilot" / "session-state" / "5522b163-29bf-4e3e-82c6-062172639e01"
CLINE_SESSION = FIXTURES / "cline" / "cline-cli-3.0.65_api-error" / "1796495860052_aovfe"
CLINE_TASK = FIXTURES / "cline" / "cline-cli-2.18.0_tasks" / "api-error"
#: Where each is kept under its tool's folder (``~/.copilot``; Cline's data folder).
COPILOT_PLACE = f"session-state/{COPILOT_SESSION.name}"
CLINE_SESSION_PLACE = f"sessions/{CLINE_SESSION.name}"
CLINE_TASK_PLACE = "tasks/1780000000000"

CLINE_VARIABLES = (
    "CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "CLINE_CONNECTOR_DATA_DIR",
    "CLINE_DB_DATA_DIR",
)  # fmt: skip


def _json(value: Any) -> Maker:
    """A maker writing ``value`` as both tools do (``JSON.stringify(v, null, 2)`` and a
    newline)."""
    return written(json.dumps(value, indent=2) + "\n")


def _connectors_db(path: Path) -> None:
    """``connectors.db`` as ``ConnectorStore`` creates it, with one connector's bot token."""
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS connector_configs (channel TEXT PRIMARY KEY, type TEXT "
            "NOT NULL, values_json TEXT NOT NULL DEFAULT '{}', security_enabled INTEGER NOT "
            "NULL DEFAULT 0, security_values_json TEXT NOT NULL DEFAULT '{}', configured_at "
            "TEXT NOT NULL, updated_at TEXT NOT NULL)"
        )
        db.execute(
            "INSERT INTO connector_configs VALUES (?, ?, ?, 0, '{}', ?, ?)",
            ("telegram", "telegram", json.dumps({"botToken": TOKEN}),
             "2026-12-06T19:06:31.501Z", "2026-12-06T19:06:31.501Z"),
        )  # fmt: skip
    db.close()


#: ``~/.copilot/mcp-config.json`` as ``copilot mcp add`` wrote it.
COPILOT_MCP = {"mcpServers": {
    "github": {"tools": ["*"], "type": "local", "command": "npx",
               "args": ["-y", "@modelcontextprotocol/server-github"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"ghp_{TOKEN}"}},
    "context7": {"tools": ["*"], "type": "http", "url": "https://mcp.context7.example.invalid/mcp",
                 "headers": {"CONTEXT7_API_KEY": TOKEN}},
}}  # fmt: skip
#: ``~/.copilot/settings.json`` as ``copilot config proxyUrl …`` wrote it, with a user-level
#: hook's ``env`` (``hooks``, the schema of ``.github/hooks/*.json``).
COPILOT_HOOK = {"type": "command", "bash": "./notify.sh", "env": {"SLACK_TOKEN": f"xoxb-{TOKEN}"}}
COPILOT_SETTINGS = {"proxyUrl": f"http://me:{TOKEN}@proxy.example.invalid:3128",
                    "hooks": {"sessionStart": [COPILOT_HOOK]}}  # fmt: skip
#: The config of builds before 1.0 (the schema of 0.0.420's ``index.js``): the login, and its
#: token kept in the file where ``store_token_plaintext`` is set or no keychain is, keyed
#: ``<host>:<login>``.
COPILOT_OLD_CONFIG = {
    "last_logged_in_user": {"host": "https://github.com", "login": "me"},
    "logged_in_users": [{"host": "https://github.com", "login": "me"}],
    "store_token_plaintext": True,
    "copilot_tokens": {"https://github.com:me": f"gho_{TOKEN}"},
}
COPILOT_LSP = {"lspServers": {"python": {
    "command": "pyright-langserver", "args": ["--stdio"],
    "fileExtensions": {".py": "python"}, "env": {"PYRIGHT_TOKEN": TOKEN}}}}  # fmt: skip
#: What the user allowed where, as 0.0.420's ``LOCATION_PERMISSIONS`` store keeps it: by the
#: path of each repository (``git rev-parse --show-toplevel``) or folder.
COPILOT_PERMISSIONS = {"locations": {
    f"/home/me/work/{TOKEN}": {
        "tool_approvals": [
            {"kind": "commands", "commandIdentifiers": ["git push", "npm publish"]},
            {"kind": "mcp", "serverName": "github", "toolName": None},
            {"kind": "write"},
        ],
        "allowed_directories": ["/home/me/private/taxes"],
    },
}}  # fmt: skip
COPILOT_SECRETS: dict[str, Maker] = {
    "mcp-config.json": _json(COPILOT_MCP),
    "mcp-config": _json(COPILOT_MCP),
    "settings.json": _json(COPILOT_SETTINGS),
    "lsp-config.json": _json(COPILOT_LSP),
    "providers.json": _json({"providers": {"azure": {
        "type": "azure", "baseUrl": "https://llm.example.invalid", "apiKey": TOKEN}},
        "models": {}}),
    "hooks/notify.json": _json({"version": 1, "hooks": {"sessionEnd": [COPILOT_HOOK]}}),
    "mcp-secrets/index.json": _json({"github": {"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN}}),
    "config": _json(COPILOT_OLD_CONFIG),
    "lsp-config": _json(COPILOT_LSP),
    "permissions-config.json": _json(COPILOT_PERMISSIONS),
    "permissions-config": _json(COPILOT_PERMISSIONS),
}  # fmt: skip

#: Cline's data folder: ``settings/`` as ``cline auth`` and ``cline mcp add`` wrote it, the
#: 2.x stores and the connectors' settings.
CLINE_PROVIDERS = {"version": 1, "lastUsedProvider": "anthropic", "modes": {}, "providers": {
    "anthropic": {"settings": {"provider": "anthropic", "apiKey": f"sk-ant-api03-{TOKEN}",
                               "model": "claude-sonnet-4-6"},
                  "updatedAt": "2026-12-06T19:06:31.501Z", "tokenSource": "manual"}}}  # fmt: skip
CLINE_MCP = {"mcpServers": {
    "context7": {"transport": {"type": "streamableHttp",
                               "url": "https://mcp.context7.example.invalid/mcp",
                               "headers": {"CONTEXT7_API_KEY": TOKEN}}},
    "github": {"transport": {"type": "stdio", "command": "npx",
                             "args": ["-y", "@modelcontextprotocol/server-github"]}},
}}  # fmt: skip
CLINE_CONNECTORS = {"connectors": {"telegram": {
    "type": "telegram", "values": {"botToken": TOKEN}, "configuredAt": "2026-12-06T19:06:31.501Z",
    "updatedAt": "2026-12-06T19:06:31.501Z"}}}  # fmt: skip
CLINE_DATA_SECRETS: dict[str, Maker] = {
    "secrets.json": _json({"apiKey": f"sk-ant-api03-{TOKEN}", "openRouterApiKey": TOKEN}),
    "globalState.json": _json({"actModeApiProvider": "openai",
                               "openAiBaseUrl": "https://llm.example.invalid/v1",
                               "openAiHeaders": {"api-key": TOKEN}}),
    "settings/providers.json": _json(CLINE_PROVIDERS),
    "settings/cline_mcp_settings.json": _json(CLINE_MCP),
    "connectors/settings.json": _json(CLINE_CONNECTORS),
    "connectors/settings.json.migrated": _json(CLINE_CONNECTORS),
    "db/connectors.db": _connectors_db,
}  # fmt: skip

#: Every credential file of a home, by its place, with its maker and whose it is.
SECRETS: dict[str, tuple[Maker, str]] = {
    **{f".copilot/{place}": (make, "copilot") for place, make in COPILOT_SECRETS.items()},
    **{f".cline/data/{place}": (make, "cline") for place, make in CLINE_DATA_SECRETS.items()},
}


@pytest.fixture(autouse=True)
def own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools' folders are the test's: a developer's own variables would name others."""
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "COPILOT_HOME",
                     *CLINE_VARIABLES):  # fmt: skip
        monkeypatch.delenv(variable, raising=False)


pytestmark = pytest.mark.usefixtures("cache_dir")


def _put(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target)


def _sessions(copilot: Path, cline_data: Path) -> None:
    """The Copilot CLI's session in its folder ``copilot``, a Cline 4 session and a Cline
    2.x task in Cline's data folder ``cline_data``."""
    _put(COPILOT_SESSION, copilot / COPILOT_PLACE)
    _put(CLINE_SESSION, cline_data / CLINE_SESSION_PLACE)
    _put(CLINE_TASK, cline_data / CLINE_TASK_PLACE)


def _home(root: Path, monkeypatch: pytest.MonkeyPatch, secrets: bool) -> Path:
    home = root / "me"
    _sessions(home / ".copilot", home / ".cline" / "data")
    monkeypatch.setenv("HOME", str(home))
    if secrets:
        plant(home, {place: make for place, (make, _) in SECRETS.items()})
    return home


def test_C1_a_home_scan_opens_none_of_copilot_s_and_cline_s_secrets_and_counts_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    plain = scan_here(_home(tmp_path / "plain", monkeypatch, secrets=False))
    home = _home(tmp_path / "full", monkeypatch, secrets=True)
    opened.clear()
    full = scan_here(home)
    assert touched(opened, SECRETS) == []
    assert full.skipped == plain.skipped
    assert [key.replace(str(home), "~") for key in full.keys] == [
        key.replace(str(tmp_path / "plain" / "me"), "~") for key in plain.keys
    ]
    assert sorted(row["format"] for row in full) == ["cline", "cline-messages", "copilot"]
    assert all(row["error"] is None for row in full)
    for folder in (".copilot", ".cline", ".cline/data", ".cline/data/settings"):
        scan_here(home / folder)
    assert touched(opened, SECRETS) == []


(
    test_C7_one_named_to_scan_is_said_and_never_opened,
    test_L4_one_named_to_load_is_refused_unopened,
) = each_one_named(SECRETS, TOKEN, lambda root, monkeypatch: _home(root, monkeypatch, secrets=True))


#: Each variable, with whose tool it moves, that tool's credential files under the folder it
#: names (by their places, with their makers), and its sessions there (with the session put
#: at each place).
MOVED: dict[str, tuple[str, dict[str, Maker], dict[str, Path]]] = {
    "COPILOT_HOME": ("copilot", COPILOT_SECRETS, {COPILOT_PLACE: COPILOT_SESSION}),
    "CLINE_DIR": ("cline", {f"data/{place}": make for place, make in CLINE_DATA_SECRETS.items()},
                  {f"data/{CLINE_SESSION_PLACE}": CLINE_SESSION,
                   f"data/{CLINE_TASK_PLACE}": CLINE_TASK}),
    "CLINE_DATA_DIR": ("cline", CLINE_DATA_SECRETS,
                       {CLINE_SESSION_PLACE: CLINE_SESSION, CLINE_TASK_PLACE: CLINE_TASK}),
    "CLINE_SESSION_DATA_DIR": ("cline", {}, {CLINE_SESSION.name: CLINE_SESSION}),
    "CLINE_CONNECTOR_DATA_DIR": ("cline", {"settings.json": _json(CLINE_CONNECTORS),
                                           "settings.json.migrated": _json(CLINE_CONNECTORS)},
                                 {}),
    "CLINE_DB_DATA_DIR": ("cline", {"connectors.db": _connectors_db}, {}),
}  # fmt: skip


@pytest.mark.parametrize("where", ["outside the home", "hidden in the home"])
@pytest.mark.parametrize("variable", list(MOVED))
def test_C1_a_home_scan_walks_the_moved_folders_and_opens_none_of_their_secrets(
    variable: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """Each session in the folder a variable names is a row of a scan of the home, once; the
    tool's credentials there are never opened, and named to ``load`` they are refused; with
    the variable unset, the same files are anyone's."""
    keeper, secrets, sessions = MOVED[variable]
    home = tmp_path / "me"
    home.mkdir()
    moved = {"outside the home": tmp_path / "moved",
             "hidden in the home": home / ".moved"}[where]  # fmt: skip
    for place, session in sessions.items():
        _put(session, moved / place)
    plant(moved, secrets)
    wanted = sorted(key for place in sessions for key in scan_here(moved / place).keys)
    assert len(wanted) == len(sessions)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(variable, str(moved))
    opened.clear()
    corpus = scan_here(Path.home())
    assert sorted(corpus.keys) == wanted
    assert all(row["error"] is None for row in corpus)
    assert touched(opened, secrets) == []
    for place in secrets:
        assert keeper_of(moved / place) == keeper, place
        with pytest.raises(TranscriptFormatError, match=f"{keeper}'s credentials"):
            turnfold.load(moved / place)
    assert touched(opened, secrets) == []
    monkeypatch.delenv(variable)
    assert [keeper_of(moved / place) for place in secrets] == [None] * len(secrets)


def test_C7_files_of_those_names_elsewhere_are_no_one_s_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's ``mcp-config.json``, ``providers.json`` or ``globalState.json``, and files of
    those names deeper in the tools' folders than the tools keep them, are files like any
    other."""
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    for place in ("project/mcp-config.json", "project/mcp-config", "project/lsp-config.json",
                  "project/providers.json", "project/globalState.json",
                  "project/cline_mcp_settings.json", "project/hooks/notify.json",
                  "project/mcp-secrets/index.json", "project/connectors.db",
                  "me/.copilot/session-state/x/settings.json",
                  "me/.copilot/session-state/x/providers.json",
                  "me/.cline/data/sessions/x/globalState.json",
                  "me/.cline/data/tasks/1/settings/providers.json"):  # fmt: skip
        assert keeper_of(tmp_path / place) is None, place
    for place, (_, keeper) in SECRETS.items():
        assert keeper_of(tmp_path / "me" / place) == keeper, place


#: What builds before 1.0 kept in ``$XDG_CONFIG_HOME/.copilot``, by the names the XDG migration
#: of 1.0.102 lists (``config.json``, ``config``, ``mcp-config``, ``lsp-config``,
#: ``mcp-oauth-config``, ``hooks``…): the login's token, the MCP servers' and LSP servers'
#: ``env``, an MCP server's OAuth tokens (``<server>.tokens.json``), a hook's ``env``.
XDG_CONFIG_SECRETS: dict[str, Maker] = {
    "config": _json(COPILOT_OLD_CONFIG),
    "config.json": _json(COPILOT_OLD_CONFIG),
    "mcp-config": _json(COPILOT_MCP),
    "lsp-config": _json(COPILOT_LSP),
    "mcp-oauth-config/3f9a1c0e.tokens.json": written(
        {"access_token": TOKEN, "token_type": "Bearer", "refresh_token": TOKEN}),
    "hooks/notify.json": _json({"version": 1, "hooks": {"sessionEnd": [COPILOT_HOOK]}}),
}  # fmt: skip


def test_C1_the_xdg_folders_of_copilot_builds_before_1_0_are_its_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """With ``$XDG_CONFIG_HOME`` and ``$XDG_STATE_HOME`` set, a build before 1.0 kept its
    config in ``$XDG_CONFIG_HOME/.copilot`` and its sessions in ``$XDG_STATE_HOME/.copilot``,
    folders of the same name as ``~/.copilot``: a scan opens none of the first's credentials
    and counts none, each one named is said and refused unopened, and a session of the second
    is read."""
    config, state = tmp_path / "xdg" / "config", tmp_path / "xdg" / "state"
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    plant(config / ".copilot", XDG_CONFIG_SECRETS)
    _put(COPILOT_SESSION, state / ".copilot" / COPILOT_PLACE)
    opened.clear()
    for folder in (config, config / ".copilot", config / ".copilot" / "mcp-oauth-config"):
        corpus = scan_here(folder)
        assert (len(corpus), corpus.skipped) == (0, 0), folder
    for place in XDG_CONFIG_SECRETS:
        said_unopened(config / ".copilot" / place, "copilot")
        refused_unopened(config / ".copilot" / place, "copilot", TOKEN)
    assert touched(opened, XDG_CONFIG_SECRETS) == []
    assert [row["format"] for row in scan_here(state / ".copilot")] == ["copilot"]
