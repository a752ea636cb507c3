"""The credential files a scan still opened and a load still read (C-1, C-7, L-4), as
``test_credentials_agents.py`` and the others test those named before them, and what telling
them costs a scan (Q-4).

Where each tool keeps them, read in its own code (cited beside each reader's ``CREDENTIALS``):

- Continue (continuedev/continue d0a3c0b6): a team's remote config cached in
  ``~/.continue/.configs/<host>/`` (``config.json``, ``config.js``; ``getPathToRemoteConfig``,
  ``core/util/paths.ts``); the blocks' folders read at any depth (``walkDir``'s
  ``recursive: true``), so ``mcpServers/team/github.json`` is a block; the CLI's hook settings
  ``.continue/settings.json`` (an HTTP hook's ``headers``, ``extensions/cli/src/hooks/``); a
  workspace's ``.continuerc.json`` at its root, and every ``<name>.continuerc.json`` there:
  ``getWorkspaceRcConfigs`` reads each name that ``endsWith(".continuerc.json")``
  (``core/config/json/loadRcConfigs.ts``), a config like ``config.json`` with its models' keys.
- The Copilot CLI: ``~/.copilot/ide/<uuid>.lock``, the IDE's MCP server's ``Authorization``
  header (``createLockFile``, microsoft/vscode-copilot-chat ``src/extension/chatSessions/
  copilotcli/vscode-node/lockFile.ts``), and a repository's ``.github/mcp.json`` (GitHub's CLI
  command reference, "MCP server loading priority"), its hook files ``.github/hooks/*.json``
  and the inline ``hooks`` of ``.github/copilot/settings.json`` and ``settings.local.json``,
  whose command hooks carry an ``env`` (GitHub's "Copilot hooks reference", "Hooks
  locations" and "Command hooks"; an HTTP hook, ``headers``).
- Qwen Code 0.24.4 and Claude Code 2.1.332: ``ide/<port>.lock`` of ``~/.qwen`` and
  ``~/.claude``, the IDE companion's ``authToken`` (``IdeClient`` in ``@qwen-code/qwen-code``'s
  bundle; the ``ws-ide`` config of the ``claude`` binary); Claude Code's
  ``~/.claude/daemon/pipe.key``, the private nonce naming its daemon's pipes (the binary writes
  16 hex digits with ``mode: 384``, 0600).
- Cline: ``$CLINE_PROVIDER_SETTINGS_PATH``, ``$CLINE_MCP_SETTINGS_PATH``,
  ``$CLINE_CONNECTOR_SETTINGS_PATH``, ``$CLINE_CONNECTORS_DB_PATH``, each naming one file
  (cline/cline ``sdk/packages/shared/src/storage/paths.ts``).
- The machine's managed settings: Claude Code's ``managed-settings.json``,
  ``managed-settings.d/*`` and ``managed-mcp.json`` of ``/etc/claude-code`` (the ``claude``
  binary 2.1.332), Codex's ``/etc/codex/config.toml`` and ``managed_config.toml`` (the
  ``codex`` binary 0.171.0). A test cannot write ``/etc``: the same tree under a temporary
  folder stands for the machine's root, as an image's or a container's root does.
- Windows: Node's ``homedir()`` is ``%USERPROFILE%`` there, so ``.claude.json`` is Claude
  Code's in that folder; only ``.claude.json`` is Claude Code's right in the home, so a
  user's ``~/settings.json`` is a file like any other (a scan reads it, finds no session and
  counts it skipped, C-7).

Each file is **hand-made** in the shape the cited source writes (the lock files as
``JSON.stringify(lockInfo, null, 2)``; the configs in the schemas the tools read), every value
made up. The session beside them is the committed Codex rollout (tests/fixtures/SOURCES.md).
``$QWEN_RUNTIME_DIR`` (and the ``runtimeOutputDir`` setting) and ``$OPENCODE_DB`` move no
credentials (``getRuntimeBaseDir`` holds ``tmp/``, ``debug/``, ``projects/``; OpenCode's
``auth.json`` stays in its data folder): nothing of theirs is here.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

import turnfold
from tests.credential_homes import (
    ROLLOUT,
    Maker,
    codex_home,
    indented,
    plant,
    refused_unopened,
    said_unopened,
    scan_here,
    scans_of_homes,
    touched,
    written,
)
from turnfold.formats import credentials
from turnfold.formats.credentials import (
    LIKELY_DEEP_FOLDERS,
    LIKELY_ENDINGS,
    LIKELY_FILE_VARIABLES,
    Credentials,
    home_folder,
    home_variable,
    is_credentials,
    keeper_of,
    keepers,
    named_like,
)
from turnfold.formats.errors import TranscriptFormatError

discover = sys.modules["turnfold.corpus.discover"]

#: What no test may find in a path opened, an error or a warning.
TOKEN = "not-a-real-token-4c8a"
#: A model with its key, as Continue's config and blocks write one.
MODEL = {"name": "Claude", "provider": "anthropic", "model": "claude-sonnet-4-6",
         "apiKey": f"sk-ant-{TOKEN}"}  # fmt: skip
#: An MCP server with a token in its ``env`` and one in its ``headers``.
MCP = {"mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"ghp_{TOKEN}"}},
    "context7": {"type": "http", "url": "https://mcp.context7.example.invalid/mcp",
                 "headers": {"CONTEXT7_API_KEY": TOKEN}},
}}  # fmt: skip
#: The Copilot IDE lock file (``LockFileInfo`` of ``lockFile.ts``).
COPILOT_LOCK = {"socketPath": "/tmp/vscode-copilot-cli-1.sock", "scheme": "unix",
                "headers": {"Authorization": f"Nonce {TOKEN}"}, "pid": 4242,
                "ideName": "Visual Studio Code", "timestamp": 1790000000000,
                "workspaceFolders": ["/home/me/work"], "isTrusted": True}  # fmt: skip
#: The IDE lock file Claude Code's and Qwen Code's IDE companions write.
IDE_LOCK = {"pid": 4242, "workspaceFolders": ["/home/me/work"], "ideName": "VS Code",
            "transport": "ws", "port": 40123, "authToken": TOKEN}  # fmt: skip
#: A Copilot CLI command hook with a token in its ``env``, and an HTTP hook with one in its
#: ``headers`` (the hooks reference's "Command hooks" and "HTTP hooks").
COPILOT_HOOKS = {"preToolUse": [
    {"type": "command", "bash": "./scripts/audit.sh", "powershell": "./scripts/audit.ps1",
     "cwd": ".", "env": {"AUDIT_TOKEN": TOKEN}, "timeoutSec": 30},
    {"type": "http", "url": "https://hooks.example.invalid/copilot",
     "headers": {"Authorization": f"Bearer {TOKEN}"}, "timeoutSec": 30},
]}  # fmt: skip
#: Managed settings: an ``env`` with a key and an ``apiKeyHelper``.
MANAGED = {"env": {"ANTHROPIC_API_KEY": f"sk-ant-{TOKEN}"},
           "apiKeyHelper": f"echo sk-ant-{TOKEN}"}  # fmt: skip
CODEX_TOML = f"""[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = {{ GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_{TOKEN}" }}
"""

#: Each file by its place in a home, with its maker and whose it is.
HOME_SECRETS: dict[str, tuple[Maker, str]] = {
    ".continue/.configs/team.example.invalid/config.json": (indented({"models": [MODEL]}),
                                                            "continue"),
    ".continue/.configs/team.example.invalid/config.js": (
        written("export function modifyConfig(config) {\n  config.models[0].apiKey = "
                f'"sk-{TOKEN}";\n  return config;\n}}\n'), "continue"),
    ".continue/mcpServers/team/github.json": (indented(MCP), "continue"),
    ".continue/models/team/claude.yaml": (
        written(f"name: Team models\nversion: 0.0.1\nschema: v1\nmodels:\n"
                f"  - provider: anthropic\n    model: claude-sonnet-4-6\n"
                f"    apiKey: sk-ant-{TOKEN}\n    name: Claude\n"), "continue"),
    "work/.continue/data/team/sink.json": (indented({"apiKey": TOKEN}), "continue"),
    ".continue/settings.json": (indented({"hooks": {"PostToolUse": [{"hooks": [
        {"type": "http", "url": "https://hooks.example.invalid/",
         "headers": {"Authorization": f"Bearer {TOKEN}"}}]}]}}), "continue"),
    "work/.continuerc.json": (indented({"models": [MODEL], "mergeBehavior": "merge"}),
                              "continue"),
    "work/team.continuerc.json": (indented({"models": [MODEL], "mergeBehavior": "overwrite"}),
                                  "continue"),
    ".copilot/ide/0b7f0e7e-9c1b-4d59-9b63-3a0e5b0f6b1e.lock": (indented(COPILOT_LOCK),
                                                              "copilot"),
    "work/.github/mcp.json": (indented(MCP), "copilot"),
    "work/.github/hooks/audit.json": (indented({"version": 1, "hooks": COPILOT_HOOKS}),
                                      "copilot"),
    "work/.github/copilot/settings.json": (indented({"hooks": COPILOT_HOOKS}), "copilot"),
    "work/.github/copilot/settings.local.json": (indented({"hooks": COPILOT_HOOKS}),
                                                 "copilot"),
    ".qwen/ide/40123.lock": (indented(IDE_LOCK), "qwen"),
    ".claude/ide/40123.lock": (indented(IDE_LOCK), "claude-code"),
    ".claude/daemon/pipe.key": (written("3f9a0c7e1b2d4a68"), "claude-code"),
}  # fmt: skip
#: The machine's managed settings, by their place under the machine's root.
MACHINE_SECRETS: dict[str, tuple[Maker, str]] = {
    "etc/claude-code/managed-settings.json": (indented(MANAGED), "claude-code"),
    "etc/claude-code/managed-settings.d/10-keys.json": (indented(MANAGED), "claude-code"),
    "etc/claude-code/managed-mcp.json": (indented(MCP), "claude-code"),
    "etc/codex/config.toml": (written(CODEX_TOML), "codex"),
    "etc/codex/managed_config.toml": (written(CODEX_TOML), "codex"),
}

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools' folders are the test's: a developer's own variables would name others."""
    for variable in ("XDG_DATA_HOME", "CONTINUE_GLOBAL_DIR", "COPILOT_HOME", "QWEN_HOME",
                     "CLAUDE_CONFIG_DIR", "CODEX_HOME", *LIKELY_FILE_VARIABLES):  # fmt: skip
        monkeypatch.delenv(variable, raising=False)


def _home(root: Path, secrets: bool) -> Path:
    home = codex_home(root, None)
    (home / "work").mkdir()
    if secrets:
        plant(home, {place: make for place, (make, _) in HOME_SECRETS.items()})
    return home


def test_C1_a_home_scan_opens_none_of_the_leftovers_and_counts_none(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "full" / "me"))
    plain, full, home = scans_of_homes(_home, tmp_path, opened)
    assert touched(opened, HOME_SECRETS) == []
    assert (full.skipped, len(full.keys)) == (plain.skipped, len(plain.keys)) == (0, 1)
    # The hidden folders a home scan does not enter, named: the same.
    for folder in (".continue/.configs", ".continue/mcpServers", "work/.github", ".copilot/ide",
                   ".qwen", ".claude/ide", ".claude/daemon", "work/.continue", "work/.github/hooks",
                   "work/.github/copilot"):  # fmt: skip
        corpus = scan_here(home / folder)
        assert (len(corpus), corpus.skipped) == (0, 0), folder
    assert touched(opened, HOME_SECRETS) == []


@pytest.mark.parametrize("place", list(HOME_SECRETS))
def test_C7_L4_one_named_is_said_to_scan_and_refused_to_load_unopened(
    place: str, tmp_path: Path, opened: list[str]
) -> None:
    home = _home(tmp_path, secrets=True)
    opened.clear()
    said_unopened(home / place, HOME_SECRETS[place][1])
    refused_unopened(home / place, HOME_SECRETS[place][1], TOKEN)
    assert touched(opened, HOME_SECRETS) == []


def test_C7_those_names_elsewhere_are_no_one_s_credentials(tmp_path: Path) -> None:
    """A project's ``ide/x.lock`` or ``mcpServers/x.json``, a ``.github`` folder's other
    files, a ``codex/config.toml`` outside ``etc``, a name that only holds
    ``continuerc.json``: files like any other."""
    for place in ("project/ide/1.lock", "project/mcpServers/team/x.json",
                  "project/.github/workflows/ci.json", "project/.github/config.json",
                  "project/.configs/host/config.json", "codex/config.toml",
                  "etc/claude/managed-settings.json", ".continue/sessions/team/x.json",
                  ".copilot/session-state/ide/x.lock", "project/continuerc.json",
                  "project/.continuerc.json.orig", "project/.github/workflows/hooks.json",
                  "project/.github/copilot/config.json", "project/.github/hooks/notes.md",
                  "project/copilot/settings.json"):  # fmt: skip
        assert keeper_of(tmp_path / place) is None, place
    test = named_like([keeper for _, keeper in keepers()])
    assert not test(str(tmp_path / "project" / ".continuerc.json.orig"))
    assert test(str(tmp_path / "project" / "team.continuerc.json"))


def _machine(root: Path, secrets: bool) -> Path:
    """A machine's root: a Codex home under ``home/``, and (with ``secrets``) the managed
    settings of ``etc/``."""
    top = root / "root"
    codex_home(top / "home", None)
    (top / "etc").mkdir()
    if secrets:
        plant(top, {place: make for place, (make, _) in MACHINE_SECRETS.items()})
    return top


def test_C1_a_scan_of_the_machine_or_its_etc_opens_no_managed_settings(
    tmp_path: Path, opened: list[str]
) -> None:
    plain, full, top = scans_of_homes(_machine, tmp_path, opened)
    assert touched(opened, MACHINE_SECRETS) == []
    assert (full.skipped, len(full.keys)) == (plain.skipped, len(plain.keys)) == (0, 1)
    for folder in ("etc", "etc/claude-code", "etc/codex"):
        corpus = scan_here(top / folder)
        assert (len(corpus), corpus.skipped) == (0, 0), folder
    for place, (_, keeper) in MACHINE_SECRETS.items():
        said_unopened(top / place, keeper)
        refused_unopened(top / place, keeper, TOKEN)
    assert touched(opened, MACHINE_SECRETS) == []


def _connectors_db(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE connector_configs (channel TEXT PRIMARY KEY, type TEXT, "
                   "values_json TEXT)")  # fmt: skip
        db.execute("INSERT INTO connector_configs VALUES ('telegram', 'telegram', ?)",
                   (json.dumps({"botToken": TOKEN}),))  # fmt: skip
    db.close()


#: Each of Cline's variables that names one file, with a file of another name it names.
CLINE_FILES: dict[str, tuple[str, Maker]] = {
    "CLINE_PROVIDER_SETTINGS_PATH": ("keys/cline-providers.json", indented({
        "version": 1, "providers": {"anthropic": {"settings": {
            "provider": "anthropic", "apiKey": f"sk-ant-{TOKEN}"}}}})),
    "CLINE_MCP_SETTINGS_PATH": ("keys/cline-mcp.json", indented(MCP)),
    "CLINE_CONNECTOR_SETTINGS_PATH": ("keys/connectors.json", indented({"connectors": {
        "telegram": {"type": "telegram", "values": {"botToken": TOKEN}}}})),
    "CLINE_CONNECTORS_DB_PATH": ("keys/connectors.sqlite", _connectors_db),
}  # fmt: skip


@pytest.mark.parametrize("variable", list(CLINE_FILES))
def test_C1_the_one_file_a_cline_variable_names_is_never_opened(
    variable: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened: list[str],
    connected: list[str],
) -> None:
    """Whatever its name, the file is passed over by a scan of its folder (not counted) and
    refused to a load; with the variable unset it is a file like any other."""
    place, make = CLINE_FILES[variable]
    plant(tmp_path, {place: make})
    path = tmp_path / place
    monkeypatch.setenv(variable, str(path))
    opened.clear()
    connected.clear()
    corpus = scan_here(path.parent)
    assert (len(corpus), corpus.skipped) == (0, 0)
    said_unopened(path, "cline")
    refused_unopened(path, "cline", TOKEN)
    assert touched(opened, [place]) == touched(connected, [place]) == []
    monkeypatch.delenv(variable)
    assert keeper_of(path) is None
    assert scan_here(path.parent).skipped == 1


def test_C7_only_claude_json_is_claude_code_s_right_in_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's ``~/settings.json`` (some other program's) is no agent's secret: a home scan
    reads it as any ``.json``, finds no session and counts it skipped (C-7); a load says it
    is no transcript, not that it is Claude Code's. ``~/.claude.json`` stays Claude Code's."""
    home = codex_home(tmp_path, None)
    monkeypatch.setenv("HOME", str(home))
    before = scan_here(home).skipped
    plant(home, {"settings.json": indented({"theme": "dark", "fontSize": 14}),
                 ".claude.json": indented({"primaryApiKey": f"sk-ant-{TOKEN}"})})  # fmt: skip
    assert scan_here(home).skipped == before + 1
    assert keeper_of(home / "settings.json") is None
    assert keeper_of(home / ".claude.json") == "claude-code"
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(home / "settings.json")
    assert "credentials" not in str(raised.value)


def test_C7_a_windows_home_is_userprofile_as_node_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Node's ``homedir()`` reads ``USERPROFILE`` on Windows and ``HOME`` elsewhere (libuv's
    ``uv_os_homedir``): the home whose ``.claude.json`` is Claude Code's follows it."""
    windows = {"USERPROFILE": r"C:\Users\me", "HOME": "/c/Users/me"}  # Git Bash sets both
    assert (home_variable(True), home_variable(False)) == ("USERPROFILE", "HOME")
    assert home_folder(windows, windows=True) == r"C:\Users\me"
    assert home_folder(windows, windows=False) == "/c/Users/me"
    assert home_folder({}, windows=True) == os.path.expanduser("~")
    profile, posix = tmp_path / "profile", tmp_path / "posix"
    monkeypatch.setenv("USERPROFILE", str(profile))
    monkeypatch.setenv("HOME", str(posix))
    monkeypatch.setattr(credentials, "WINDOWS", True)
    assert keeper_of(profile / ".claude.json") == "claude-code"
    assert keeper_of(posix / ".claude.json") is None
    monkeypatch.setattr(credentials, "WINDOWS", False)
    assert keeper_of(profile / ".claude.json") is None
    assert keeper_of(posix / ".claude.json") == "claude-code"


def test_Q4_files_of_a_data_or_models_folder_pay_no_full_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan asks the full test (:func:`~turnfold.formats.credentials.is_credentials`) of no
    file of a ``data/`` or ``models/`` folder but a tool's own (Continue's ``.continue``, or
    any when ``$CONTINUE_GLOBAL_DIR`` moves it): each cost a match of every reader's
    patterns. Measured (5,000 files in ``data/``, walk only): 2.4 s before, as ``rows/``
    (65 ms) after."""
    checked: list[str] = []

    def counting(path: Path, keepers: Iterable[Credentials]) -> bool:
        checked.append(path.name)
        return is_credentials(path, keepers)

    monkeypatch.setattr(discover, "is_credentials", counting)
    for folder in ("data", "models", "mcpServers"):
        for index in range(3):
            plant(tmp_path / "project", {f"{folder}/{index}.json": written("{}")})
    assert scan_here(tmp_path / "project").skipped == 9
    assert checked == []
    test = named_like([keeper for _, keeper in keepers()])
    for folder in LIKELY_DEEP_FOLDERS:
        assert not test(f"/x/{folder}/any.json"), folder
    # Each deep folder in the folder of a tool that keeps one (Continue's ``models/``, the Kimi
    # CLI's ``plugins/``, Kimi Code's ``credentials/``) is looked at, at any depth.
    deep = {(tool, p.split("/")[0]) for _, k in keepers() for p in k.files if p.endswith("/**")
            for tool in k.folders}  # fmt: skip
    assert {folder for _, folder in deep} == set(LIKELY_DEEP_FOLDERS)
    for tool, folder in sorted(deep):
        assert test(f"/x/{tool}/{folder}/any.json"), (tool, folder)
        assert test(f"/x/{tool}/{folder}/team/deeper/any.json"), (tool, folder)
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(tmp_path / "moved"))
    test = named_like([keeper for _, keeper in keepers()])
    assert test("/x/data/any.json")


def test_C7_the_deep_folders_endings_and_file_variables_load_goes_by_are_the_readers() -> None:
    """``keeper_of`` goes by these before importing a reader: they are every reader's."""
    deep = {p.split("/")[0] for _, k in keepers() for p in k.files if p.endswith("/**")}
    variables = {v for _, k in keepers() for v in k.file_variables}
    endings = {e for _, k in keepers() for e in k.endings}
    assert (deep, variables, endings) == (
        set(LIKELY_DEEP_FOLDERS), set(LIKELY_FILE_VARIABLES), set(LIKELY_ENDINGS))  # fmt: skip


def test_C1_a_rollout_among_them_is_still_read(tmp_path: Path) -> None:
    """A session under a folder of a deep pattern's name outside the tools' folders is a
    row, read as any."""
    plant(tmp_path / "project", {"data/rollout.jsonl": written(ROLLOUT.read_text("utf-8"))})
    corpus = scan_here(tmp_path / "project")
    assert [row["format"] for row in corpus] == ["codex"]
