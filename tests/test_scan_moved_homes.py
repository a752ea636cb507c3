"""A scan of the home walks the folders the agents' own variables move their sessions to (C-1),
their credentials unopened (C-7); a project's ``.mcp.json`` is Claude Code's credentials in any
folder, refused by name (C-7, L-4).

Where each tool writes its sessions when a variable is set, read in its own code:

- Codex: ``$CODEX_HOME`` is ``~/.codex`` under any name (``find_codex_home``, openai/codex
  ``codex-rs/rmcp-client/src/find_codex_home.rs``; a relative value canonicalised from the
  working folder), its
  ``sessions/`` with it.
- Qwen Code 0.24.4 (``@qwen-code/qwen-code``, ``Storage`` of ``packages/core/src/config/
  storage.ts``): ``$QWEN_HOME`` is ``~/.qwen`` (``getGlobalQwenDir``); ``$QWEN_RUNTIME_DIR`` is
  where the sessions go instead (``getRuntimeBaseDir`` → ``projects/<project>/chats/``), the
  config staying in ``$QWEN_HOME``; both resolved from the working folder when relative.
- Gemini CLI 0.61.0 (``@google/gemini-cli``, ``homedir()`` of ``packages/core/src/utils/
  paths.ts``): ``$GEMINI_CLI_HOME`` stands for the home folder, so its ``.gemini`` is the one
  that holds ``tmp/<project>/chats/``.
- Continue (``$CONTINUE_GLOBAL_DIR``: ``sessions/``), OpenHands' CLI
  (``$OPENHANDS_PERSISTENCE_DIR``: ``conversations/``), Kimi Code 2.1.0 (``$KIMI_CODE_HOME``,
  ``defaultKimiHome`` of ``@moonshot-ai/kimi-code``: ``sessions/``) and the Kimi CLI before it
  (``$KIMI_SHARE_DIR``, ``resolveLegacySourceHome`` there, which reads its folder as kimi-cli
  wrote it); the Copilot CLI (``$COPILOT_HOME``: named in the 1.0.102 loader of
  ``@github/copilot``, whose application code is fetched at run time and not here;
  ``session-state/`` under it as GitHub's config-dir reference and toolpath-copilot's ``paths``
  module describe it); Cline (``resolveClineDataDir`` and ``resolveSessionDataDir`` of
  ``@cline/shared``, cline/cline ``sdk/packages/shared/src/storage/paths.ts``:
  ``$CLINE_SESSION_DATA_DIR`` holds the sessions, else ``$CLINE_DATA_DIR/sessions``, else
  ``$CLINE_DIR/data/sessions``; tests/test_credentials_copilot_cline.py); Claude Code
  (``$CLAUDE_CONFIG_DIR``, tests/test_credentials_agents.py) and Crush
  (``$CRUSH_GLOBAL_DATA``, tests/test_corpus_gaps.py).

The sessions are committed fixtures made by the real tools (tests/fixtures/SOURCES.md), placed
where each tool writes them. The ``.mcp.json`` is what ``claude mcp add --scope project`` of
Claude Code 2.1.332 wrote (an HTTP server's ``--header`` and a stdio server's ``-e``), run once
in a scratch folder, its values made up.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import turnfold
from tests.credential_homes import ROLLOUT, plant, scan_here, touched, written
from turnfold.corpus.discover import MOVED_HOMES
from turnfold.formats.credentials import keeper_of
from turnfold.formats.errors import TranscriptFormatError

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "not-a-real-token-5b1f"
QWEN = FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl"
GEMINI = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
CONTINUE = FIXTURES / "continue" / "work" / "sessions" / "4b888bc9-986f-432a-9fe4-8f6b4db60a07.json"
OPENHANDS = (
    FIXTURES / "harnesses" / "openhands-sdk" / "conversations" / "2e6c222a6c254b28bab45a8281ad9b15"
)
KIMI = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
KIMI_CLI = FIXTURES / "kimi" / "legacy" / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"
COPILOT = FIXTURES / "copilot" / "session-state" / "5522b163-29bf-4e3e-82c6-062172639e01"
CLAUDE = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
CLINE = FIXTURES / "cline" / "cline-cli-3.0.65_api-error" / "1796495860052_aovfe"
CRUSH = FIXTURES / "crush" / "cisco-auto" / "crush.db"

#: Each variable, with where its tool writes a session under the folder it names, the session
#: put there, its format, and the tool's credential files in that folder (each a place under
#: it, written with a made-up token), which no scan may open.
MOVED: dict[str, tuple[str, Path, str, tuple[str, ...]]] = {
    "CODEX_HOME": ("sessions/2025/01/01/rollout-2025-01-01T00-00-00.jsonl", ROLLOUT, "codex",
                   ("auth.json", "config.toml", ".env")),
    "QWEN_HOME": ("projects/-home-me-work/chats/e004f15a-a6bf-4936-9841-21e2ce04b434.jsonl",
                  QWEN, "qwen", ("settings.json", "oauth_creds.json", "mcp-oauth-tokens.json")),
    "QWEN_RUNTIME_DIR": (
        "projects/-home-me-work/chats/e004f15a-a6bf-4936-9841-21e2ce04b434.jsonl", QWEN, "qwen",
        ()),
    "GEMINI_CLI_HOME": (".gemini/tmp/0f3c/chats/session-2026-04-29T21-39-3f1e2d3c.jsonl",
                        GEMINI, "gemini", (".gemini/settings.json", ".gemini/oauth_creds.json")),
    "CONTINUE_GLOBAL_DIR": (f"sessions/{CONTINUE.name}", CONTINUE, "continue",
                            ("config.yaml", "config.json", ".env")),
    "OPENHANDS_PERSISTENCE_DIR": (f"conversations/{OPENHANDS.name}", OPENHANDS, "openhands-sdk",
                                  ("agent_settings.json", "mcp.json", "settings.json")),
    "KIMI_CODE_HOME": (f"sessions/5f2b/{KIMI.name}", KIMI, "kimi",
                       ("credentials/kimi-code.json",)),
    "KIMI_SHARE_DIR": (f"sessions/7a1c/{KIMI_CLI.name}", KIMI_CLI, "kimi-cli",
                       ("credentials/kimi-code.json",)),
    "COPILOT_HOME": (f"session-state/{COPILOT.name}", COPILOT, "copilot",
                     ("config.json", "mcp-oauth-config/github.json", "mcp-config.json",
                      "settings.json")),
    "CLINE_DIR": (f"data/sessions/{CLINE.name}", CLINE, "cline-messages",
                  ("data/secrets.json", "data/settings/providers.json",
                   "data/settings/cline_mcp_settings.json")),
    "CLINE_DATA_DIR": (f"sessions/{CLINE.name}", CLINE, "cline-messages",
                       ("secrets.json", "globalState.json", "settings/providers.json")),
    "CLINE_SESSION_DATA_DIR": (CLINE.name, CLINE, "cline-messages", ()),
    "CLAUDE_CONFIG_DIR": ("projects/-home-me-work/99eb466a-df8b-4ca2-9471-56f1db50c815.jsonl",
                          CLAUDE, "claude-code", ("settings.json", ".credentials.json")),
    "CRUSH_GLOBAL_DATA": (".crush/crush.db", CRUSH, "crush", ("crush.json",)),
}  # fmt: skip

#: ``.mcp.json`` as ``claude mcp add --scope project`` wrote it.
MCP_JSON = {"mcpServers": {
    "context7": {"type": "http", "url": "https://mcp.context7.example.invalid/mcp",
                 "headers": {"CONTEXT7_API_KEY": TOKEN}},
    "github": {"type": "stdio", "command": "npx",
               "args": ["-y", "@modelcontextprotocol/server-github"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"ghp_{TOKEN}"}},
}}  # fmt: skip

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools' folders are the test's: a developer's own variables would name others."""
    for variable in ("XDG_DATA_HOME", *MOVED):
        monkeypatch.delenv(variable, raising=False)


def _put(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)


def test_C1_the_table_of_moved_folders_is_the_one_tested() -> None:
    assert {variable for variable, _ in MOVED_HOMES} == set(MOVED)


@pytest.mark.parametrize("where", ["outside the home", "hidden in the home"])
@pytest.mark.parametrize("variable", list(MOVED))
def test_C1_a_home_scan_walks_the_folder_each_agent_s_variable_names(
    variable: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """A session in the moved folder is a row of a scan of the home, once; the tool's
    credentials there are never opened; a relative value (a folder of wherever the tool ran)
    adds nothing, and a scan of any other folder is not widened."""
    place, session, format, secrets = MOVED[variable]
    home = tmp_path / "me"
    (home / "work").mkdir(parents=True)
    moved = {"outside the home": tmp_path / "moved",
             "hidden in the home": home / ".moved"}[where]  # fmt: skip
    _put(session, moved / place)
    plant(moved, {secret: written(f'{{"key": "{TOKEN}"}}') for secret in secrets})
    wanted = scan_here(moved / place).keys
    assert wanted
    monkeypatch.setenv("HOME", str(home))
    assert scan_here(Path.home()).keys == []
    monkeypatch.setenv(variable, str(moved))
    opened.clear()
    corpus = scan_here(Path.home())
    assert sorted(corpus.keys) == sorted(wanted)
    assert {row["format"] for row in corpus} == {format}
    assert all(row["error"] is None for row in corpus)
    assert touched(opened, secrets) == []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, os.path.relpath(moved))
    assert scan_here(Path.home()).keys == []
    monkeypatch.setenv(variable, str(moved))
    assert scan_here(home / "work").keys == []


def test_C1_gemini_cli_home_names_the_folder_that_holds_dot_gemini(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$GEMINI_CLI_HOME`` stands for a home folder: only its ``.gemini`` is Gemini CLI's, so
    a home scan walks that, not the rest of the folder (``/`` would be the whole machine)."""
    home, other = tmp_path / "me", tmp_path / "other"
    home.mkdir()
    _put(GEMINI, other / ".gemini" / "tmp" / "0f3c" / "chats" / "session-a.jsonl")
    _put(ROLLOUT, other / "runs" / "rollout-2025-01-01T00-00-00.jsonl")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(other))
    assert [Path(key).name for key in scan_here(Path.home()).keys] == ["session-a.jsonl"]


def test_C1_a_moved_folder_the_home_walk_meets_is_walked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set to a folder a walk of the home enters (or two variables to one folder, as
    ``$QWEN_RUNTIME_DIR`` may be ``$QWEN_HOME``), each session is one row."""
    home = tmp_path / "me"
    place = MOVED["QWEN_HOME"][0]
    _put(QWEN, home / "qwen-home" / place)
    _put(ROLLOUT, tmp_path / "codex" / MOVED["CODEX_HOME"][0])
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("QWEN_HOME", str(home / "qwen-home"))
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(home / "qwen-home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(tmp_path / "codex"))
    keys = scan_here(Path.home()).keys
    assert sorted(Path(key).name for key in keys) == sorted(
        [Path(place).name, Path(MOVED["CODEX_HOME"][0]).name]
    )


# --- a project's .mcp.json ---------------------------------------------------------------------


def _project(tmp_path: Path) -> Path:
    """A project with a Claude Code session beside its ``.mcp.json``."""
    project = tmp_path / "project"
    _put(CLAUDE, project / "session.jsonl")
    plant(project, {".mcp.json": written(json.dumps(MCP_JSON, indent=2))})
    return project


@pytest.mark.parametrize("format", [None, "claude-code"])
def test_L4_a_project_s_mcp_json_is_refused_by_name_unopened(
    format: str | None, tmp_path: Path, opened: list[str]
) -> None:
    path = _project(tmp_path) / ".mcp.json"
    opened.clear()
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(path, format=format)
    assert str(path) in str(raised.value)
    assert "claude-code's credentials (keys, tokens), never opened" in str(raised.value)
    assert TOKEN not in str(raised.value)
    assert touched(opened, [".mcp.json"]) == []


def test_C7_a_project_s_mcp_json_is_never_opened_by_a_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """Named, it is said and not read; met by a walk (hidden) or matched by a glob, it is passed
    over unopened and uncounted, the session beside it read."""
    project = _project(tmp_path)
    path = project / ".mcp.json"
    opened.clear()
    said = rf"^{re.escape(str(path))}: claude-code's credentials \(keys, tokens\), never opened$"
    with pytest.warns(UserWarning, match=said):
        named = scan_here(path)
    assert (len(named), named.skipped) == (0, 0)
    session = [str(project / "session.jsonl")]
    walked = scan_here(project)
    assert (walked.keys, walked.skipped) == (session, 0)
    globbed = scan_here(str(project / ".*"))
    assert (globbed.keys, globbed.skipped) == ([], 0)
    with pytest.warns(UserWarning, match=said):
        listed = scan_here([path, *session])
    assert (listed.keys, listed.skipped) == (session, 0)
    assert touched(opened, [".mcp.json"]) == []


def test_C7_mcp_json_is_claude_code_s_in_any_folder_and_only_by_its_name(tmp_path: Path) -> None:
    for place in (".mcp.json", "a/b/.mcp.json", ".claude/.mcp.json", "plugins/p/.mcp.json"):
        assert keeper_of(tmp_path / place) == "claude-code", place
    for place in ("a/mcp.json", "a/.mcp.json.bak", "a/x.mcp.json"):
        assert keeper_of(tmp_path / place) is None, place
