"""The files of Claude Code, Gemini CLI, Qwen Code and Codex that hold keys and tokens beside
their sessions and that a scan still opened and a load still read (C-1, C-7, L-4), as
``test_scan_agent_credentials.py`` and ``test_credentials_more.py`` test those named before.

Claude Code's (``CREDENTIALS`` of ``turnfold.formats.claude_code``): its global config
``~/.claude.json`` (the user's and each project's MCP servers with their ``env`` and
``headers``; ``primaryApiKey``, an API key where no keychain is), in the home folder itself or
in ``$CLAUDE_CONFIG_DIR``, the copies of it under ``backups/`` and the legacy ``.config.json``;
``settings.json`` and ``settings.local.json`` (``env``, ``apiKeyHelper``) of ``~/.claude``, of
a project's ``.claude`` and of ``$CLAUDE_CONFIG_DIR``. Gemini CLI's and Qwen Code's:
``settings.json`` (MCP servers' ``env`` and ``headers``; Qwen's ``security.auth.apiKey`` and
``env``) and ``.env`` of ``~/.gemini``, ``~/.qwen`` and a project's ``.gemini``, ``.qwen``;
Qwen's encrypted token store ``mcp-oauth-tokens-v2.json`` and ``extension-secrets-v1.json``;
everything of Qwen's in ``$QWEN_HOME``. Codex's: ``config.toml`` (MCP servers' ``env``,
``http_headers``, ``bearer_token``; model providers' ``experimental_bearer_token``) and
``.env``, of ``~/.codex``, a project's ``.codex`` and ``$CODEX_HOME``.

Each is shaped as the real tool wrote it (``claude mcp add`` of Claude Code 2.1.332, ``gemini
mcp add`` of Gemini CLI 0.61.0, ``qwen mcp add`` of Qwen Code 0.24.4, ``codex mcp add`` of Codex
0.171.0, all run once in a scratch home), with its values made up; the settings' ``env`` and
``apiKeyHelper`` and Qwen's ``security.auth`` as the tools' settings schemas name them. The
sessions beside them are the committed Claude Code session and Codex rollout
(tests/fixtures/SOURCES.md).

A scan of the home also walks the folder ``$CLAUDE_CONFIG_DIR`` names when no walk of the home
meets it (outside the home, or hidden in it): its ``projects/`` were never read.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.credential_homes import (
    ROLLOUT,
    Maker,
    indented,
    plant,
    scan_here,
    scans_of_homes,
    touched,
    written,
)
from tests.credentials_cases import each_one_named
from turnfold import scan
from turnfold.formats.credentials import keeper_of

FIXTURES = Path(__file__).parent / "fixtures"
#: A real Claude Code session (tests/fixtures/SOURCES.md), kept under its session id.
CLAUDE_SESSION = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
CLAUDE_SESSION_NAME = "99eb466a-df8b-4ca2-9471-56f1db50c815.jsonl"
PROJECT = "-home-me-work"  # Claude Code's folder of ~/work under projects/
#: What no test may find in a path opened, an error or a warning.
TOKEN = "not-a-real-token-5b1f"
#: The folders the variables move the tools' folders to, under the home: not hidden, so a walk
#: of the home enters them as any folder.
CLAUDE_MOVED = "claude-home"
QWEN_MOVED = "qwen-home"
CODEX_MOVED = "codex-home"
MOVED = {"CLAUDE_CONFIG_DIR": CLAUDE_MOVED, "QWEN_HOME": QWEN_MOVED, "CODEX_HOME": CODEX_MOVED}

#: The MCP servers as each tool's ``mcp add`` wrote them: a stdio server's ``env`` (user scope)
#: and an HTTP server's ``headers`` (project scope).
CLAUDE_STDIO = {"type": "stdio", "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"ghp_{TOKEN}"}}  # fmt: skip
CLAUDE_HTTP = {"type": "http", "url": "https://mcp.context7.example.invalid/mcp",
               "headers": {"CONTEXT7_API_KEY": TOKEN}}  # fmt: skip
#: ``~/.claude.json`` as ``claude mcp add --scope user`` left it, with the ``primaryApiKey`` a
#: key approved at ``/login`` adds and a project's MCP servers (``--scope local``).
CLAUDE_JSON = {
    "firstStartTime": "2026-12-06T18:28:48.467Z",
    "firstStartVersion": "2.1.332",
    "userID": "6b48395a991944f42776e59e5c05fa33b3833ebabad7035844cfec536d71e604",
    "primaryApiKey": f"sk-ant-api03-{TOKEN}",
    "mcpServers": {"github": CLAUDE_STDIO},
    "projects": {"/home/me/work": {"mcpServers": {"context7": CLAUDE_HTTP}}},
}
CLAUDE_SETTINGS = {"env": {"ANTHROPIC_API_KEY": f"sk-ant-api03-{TOKEN}"},
                   "apiKeyHelper": "~/bin/anthropic-key.sh"}  # fmt: skip
CLAUDE_LOCAL_SETTINGS = {"env": {"GITLAB_TOKEN": f"glpat-{TOKEN}"},
                         "permissions": {"allow": ["Bash(npm test)"]}}  # fmt: skip
GEMINI_SETTINGS = {"mcpServers": {"github": {
    "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"ghp_{TOKEN}"}}}}  # fmt: skip
GEMINI_PROJECT_SETTINGS = {"mcpServers": {"context7": {
    "url": "https://mcp.context7.example.invalid/mcp", "type": "http",
    "headers": {"CONTEXT7_API_KEY": TOKEN}}}}  # fmt: skip
QWEN_SETTINGS = {
    "security": {"auth": {"selectedType": "openai", "apiKey": f"sk-{TOKEN}"}},
    "env": {"DASHSCOPE_API_KEY": f"sk-{TOKEN}"},
    **GEMINI_SETTINGS,
}
QWEN_HTTP_SETTINGS = {"mcpServers": {"context7": {
    "httpUrl": "https://mcp.context7.example.invalid/mcp",
    "headers": {"CONTEXT7_API_KEY": TOKEN}}}}  # fmt: skip
#: ``config.toml`` as ``codex mcp add github --env …`` wrote it, with an HTTP server's static
#: headers and a model provider's bearer token (``RawMcpServerConfig``, ``ModelProviderInfo``).
CODEX_CONFIG = f"""[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]

[mcp_servers.github.env]
GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_{TOKEN}"

[mcp_servers.context7]
url = "https://mcp.context7.example.invalid/mcp"
http_headers = {{ "CONTEXT7_API_KEY" = "{TOKEN}" }}

[model_providers.proxy]
name = "proxy"
base_url = "https://llm.example.invalid/v1"
experimental_bearer_token = "{TOKEN}"
"""
ENV = f"OPENAI_API_KEY=sk-{TOKEN}\nGEMINI_API_KEY={TOKEN}\n"
#: An encrypted token store's file as ``FileTokenStorage`` writes it (``iv:tag:ciphertext``).
ENCRYPTED = f"0f1e2d3c4b5a69788796a5b4:c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8:{TOKEN.encode().hex()}"


#: Each credential file by its place in the home, with what makes it, and whose it is.
SECRETS: dict[str, tuple[Maker, str]] = {
    ".claude.json": (indented(CLAUDE_JSON), "claude-code"),
    ".claude/backups/.claude.json.backup.1796581728618": (indented(CLAUDE_JSON), "claude-code"),
    ".claude/.config.json": (indented(CLAUDE_JSON), "claude-code"),
    ".claude/settings.json": (indented(CLAUDE_SETTINGS), "claude-code"),
    "work/.claude/settings.json": (indented(CLAUDE_SETTINGS), "claude-code"),
    "work/.claude/settings.local.json": (indented(CLAUDE_LOCAL_SETTINGS), "claude-code"),
    f"{CLAUDE_MOVED}/.claude.json": (indented(CLAUDE_JSON), "claude-code"),
    f"{CLAUDE_MOVED}/settings.json": (indented(CLAUDE_SETTINGS), "claude-code"),
    f"{CLAUDE_MOVED}/.credentials.json": (
        indented({"claudeAiOauth": {"accessToken": f"sk-ant-oat01-{TOKEN}"}}), "claude-code"),
    f"{CLAUDE_MOVED}/backups/.claude.json.backup.1796581734840": (
        indented(CLAUDE_JSON), "claude-code"),
    ".gemini/settings.json": (indented(GEMINI_SETTINGS), "gemini"),
    ".gemini/.env": (written(ENV), "gemini"),
    "work/.gemini/settings.json": (indented(GEMINI_PROJECT_SETTINGS), "gemini"),
    "work/.gemini/.env": (written(ENV), "gemini"),
    ".qwen/settings.json": (indented(QWEN_SETTINGS), "qwen"),
    ".qwen/.env": (written(ENV), "qwen"),
    ".qwen/mcp-oauth-tokens-v2.json": (written(ENCRYPTED), "qwen"),
    ".qwen/extension-secrets-v1.json": (written(ENCRYPTED), "qwen"),
    "work/.qwen/settings.json": (indented(QWEN_HTTP_SETTINGS), "qwen"),
    f"{QWEN_MOVED}/settings.json": (indented(QWEN_HTTP_SETTINGS), "qwen"),
    f"{QWEN_MOVED}/oauth_creds.json": (
        indented({"access_token": TOKEN, "refresh_token": TOKEN, "token_type": "Bearer"}), "qwen"),
    ".codex/config.toml": (written(CODEX_CONFIG), "codex"),
    ".codex/.env": (written(ENV), "codex"),
    "work/.codex/config.toml": (written(CODEX_CONFIG), "codex"),
    f"{CODEX_MOVED}/config.toml": (written(CODEX_CONFIG), "codex"),
}  # fmt: skip


pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools' folders are the test's: a developer's own variables would name others."""
    for variable in ("XDG_DATA_HOME", "CRUSH_GLOBAL_DATA", "GEMINI_CLI_HOME", *MOVED):
        monkeypatch.delenv(variable, raising=False)


def _session(target: Path, source: Path = CLAUDE_SESSION) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def _home(root: Path, monkeypatch: pytest.MonkeyPatch, secrets: bool) -> Path:
    """A home (``$HOME``) with a Claude Code session in ``~/.claude`` and in the folder
    ``$CLAUDE_CONFIG_DIR`` names, a Codex rollout in ``~/.codex`` and in ``$CODEX_HOME``'s (each
    of :data:`MOVED` set to its folder), and (with ``secrets``) every file of :data:`SECRETS`."""
    home = root / "me"
    for folder in (".claude", CLAUDE_MOVED):
        _session(home / folder / "projects" / PROJECT / CLAUDE_SESSION_NAME)
    for folder in (".codex", CODEX_MOVED):
        _session(home / folder / "sessions" / "rollout-2025-01-01T00-00-00.jsonl", ROLLOUT)
    (home / "work").mkdir()
    (home / QWEN_MOVED).mkdir()
    monkeypatch.setenv("HOME", str(home))
    for variable, folder in MOVED.items():
        monkeypatch.setenv(variable, str(home / folder))
    if secrets:
        plant(home, {place: make for place, (make, _) in SECRETS.items()})
    return home


def test_C1_a_home_scan_opens_none_of_the_agents_settings_and_counts_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    plain, full, home = scans_of_homes(
        lambda root, secrets: _home(root, monkeypatch, secrets), tmp_path, opened
    )
    assert touched(opened, SECRETS) == []
    # Neither opened nor counted: config.toml was a skipped file, the settings opened ones.
    assert full.skipped == plain.skipped
    assert [key.replace(str(home), "~") for key in full.keys] == [
        key.replace(str(tmp_path / "plain" / "me"), "~") for key in plain.keys
    ]
    assert sorted(row["format"] for row in full.rows) == [
        "claude-code", "claude-code", "codex", "codex"]  # fmt: skip
    assert all(row["error"] is None for row in full.rows)
    for folder in (".claude", ".gemini", ".qwen", ".codex", "work", *MOVED.values()):
        scan_here(home / folder)
    assert touched(opened, SECRETS) == []


(
    test_C7_one_named_to_scan_is_said_and_never_opened,
    test_L4_one_named_to_load_is_refused_unopened,
) = each_one_named(SECRETS, TOKEN, lambda root, monkeypatch: _home(root, monkeypatch, secrets=True))


def test_C7_the_moved_folders_and_the_home_go_by_the_variables_as_they_are_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the folder a variable names is the tool's: unset, the same files are anyone's; a
    relative ``$QWEN_HOME`` is the working folder's, as Qwen Code resolves it. The global config
    ``.claude.json`` is Claude Code's in the home folder ``$HOME`` names (Node's
    ``os.homedir()``), not in any other folder."""
    claude_settings = tmp_path / "cc" / "settings.json"
    claude_config = tmp_path / "cc" / ".claude.json"
    qwen_settings = tmp_path / "qw" / "settings.json"
    codex_config = tmp_path / "cx" / "config.toml"
    home_config = tmp_path / "me" / ".claude.json"
    monkeypatch.setenv("HOME", str(tmp_path / "someone"))
    moved = [claude_settings, claude_config, qwen_settings, codex_config, home_config]
    assert [keeper_of(path) for path in moved] == [None] * 5
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("QWEN_HOME", "qw")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    assert [keeper_of(path) for path in moved] == [
        "claude-code", "claude-code", "qwen", "codex", "claude-code"]  # fmt: skip
    assert keeper_of(tmp_path / "qw" / "projects" / "settings.json") is None
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "elsewhere"))
    assert keeper_of(qwen_settings) is None


def test_C7_files_of_those_names_elsewhere_are_no_one_s_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's ``settings.json``, ``config.toml`` or ``.env``, a ``.claude.json`` outside
    the home, files of those names deeper in the tools' folders, are files like any other:
    only the tools' own folders' are passed over. Gemini CLI's ``$GEMINI_CLI_HOME`` moves the
    folder that holds ``.gemini``, which keeps its name: nothing more to name."""
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    for place in ("project/settings.json", "project/settings.local.json", "project/config.toml",
                  "project/.env", "project/.claude.json", "project/.config.json",
                  "project/backups/.claude.json.backup.1796581728618",
                  "me/project/.claude.json", "me/.claude/projects/p/settings.json",
                  "me/.claude/backups/settings.json", "me/.gemini/tmp/p/settings.json",
                  "me/.qwen/projects/p/settings.json", "me/.codex/sessions/config.toml",
                  "me/.codex/config.json"):  # fmt: skip
        assert keeper_of(tmp_path / place) is None, place
    for place, (_, keeper) in SECRETS.items():
        if not place.startswith(tuple(MOVED.values())):
            assert keeper_of(tmp_path / "me" / place) == keeper, place
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    for name in ("settings.json", ".env", "oauth_creds.json"):
        assert keeper_of(tmp_path / "gemini-home" / ".gemini" / name) == "gemini"


@pytest.mark.parametrize("where", ["outside the home", "hidden in the home", "in the home"])
def test_C1_a_scan_of_the_home_walks_the_folder_claude_config_dir_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str], where: str
) -> None:
    """``$CLAUDE_CONFIG_DIR`` moves ``~/.claude`` whole (its ``projects/`` with it: Claude
    Code's config home, ``CLAUDE_CONFIG_DIR || ~/.claude``): a scan of the home walks it as it
    walks ``~/.claude``, each session once, its settings unopened. A relative value names a
    folder of wherever Claude Code ran, and a scan of another folder is not widened."""
    home = tmp_path / "me"
    moved = {"outside the home": tmp_path / "claude-config",
             "hidden in the home": home / ".claude-work",
             "in the home": home / "claude-config"}[where]  # fmt: skip
    session = _session(moved / "projects" / PROJECT / CLAUDE_SESSION_NAME)
    old = _session(home / ".claude" / "projects" / PROJECT / CLAUDE_SESSION_NAME)
    plant(
        moved, {"settings.json": indented(CLAUDE_SETTINGS), ".claude.json": indented(CLAUDE_JSON)}
    )
    wanted = sorted([*scan([session], workers=1, cache=False).keys, str(old)])
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    opened.clear()
    corpus = scan_here(Path.home())
    assert sorted(corpus.keys) == wanted
    assert {row["agent"] for row in corpus} == {"claude-code"}
    assert not [path for path in opened if os.path.dirname(path) == str(moved)]
    if where != "in the home":
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", os.path.relpath(moved))
        assert scan_here(Path.home()).keys == [str(old)]
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    assert len(scan_here(elsewhere)) == 0
