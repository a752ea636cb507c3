"""A scan of a home walks the agents' folders (``~/.codex``, ``~/.gemini``, ``~/.qwen``,
``~/.copilot``, ``~/.cline``, ``~/.kimi``, ``~/.kimi-code``…, spec C-1), which hold, beside the
sessions, the files each agent keeps its keys and tokens in. A worker opened each to learn its
format, then counted it as a skipped file (C-7): each reader names its tool's credential files
(``CREDENTIALS``, :mod:`turnfold.formats.credentials`), and a scan passes them over by name and
folder, never opened and not counted; a file of the same name elsewhere is read as any file is.

The credentials are shaped as each tool writes them, their values made up: Codex's
``auth.json`` (its ``docs/authentication.md`` schema), Gemini CLI's and Qwen Code's
``oauth_creds.json`` (google-auth-library's ``Credentials``), the Cline CLI's
``data/secrets.json``, Kimi Code's ``credentials/kimi-code.json``, the Copilot CLI's
``config.json``. The session beside them is the committed Codex rollout
(tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.credential_homes import codex_home, scan_here, scans_without_and_with, touched

GOOGLE_TOKENS = {
    "access_token": "ya29.not-a-real-token",
    "refresh_token": "1//not-a-real-refresh",
    "scope": "https://www.googleapis.com/auth/cloud-platform",
    "token_type": "Bearer",
    "expiry_date": 1760000000000,
}
#: Each credential file, by its place in the home, and what it holds.
SECRETS: dict[str, Any] = {
    ".codex/auth.json": {
        "OPENAI_API_KEY": None,
        "tokens": {"id_token": "x.y.z", "access_token": "x.y.z", "refresh_token": "rt_not"},
        "last_refresh": "2025-10-17T18:45:04Z",
    },
    ".codex/.credentials.json": {"notes|abc": {"access_token": "not-a-real-token"}},
    ".gemini/oauth_creds.json": GOOGLE_TOKENS,
    ".gemini/google_accounts.json": {"active": "me@example.invalid", "old": []},
    ".gemini/mcp-oauth-tokens.json": [{"serverName": "notes", "token": {"accessToken": "no"}}],
    ".gemini/gemini-credentials.json": {"not": "encrypted here"},
    ".qwen/oauth_creds.json": {**GOOGLE_TOKENS, "resource_url": "portal.qwen.ai"},
    ".qwen/mcp-oauth-tokens.json": [],
    ".claude/.credentials.json": {"claudeAiOauth": {"accessToken": "sk-ant-oat01-not"}},
    ".copilot/config.json": {"copilot_tokens": {"https://github.com:me": "gho_not_a_token"}},
    ".copilot/mcp-oauth-config/notes.tokens.json": {"access_token": "not-a-real-token"},
    ".cline/data/secrets.json": {"apiKey": "sk-ant-not-a-real-key"},
    ".kimi/credentials/kimi-code.json": {"access_token": "no", "refresh_token": "no"},
    ".kimi-code/credentials/kimi-code.json": {"access_token": "no", "refresh_token": "no"},
}


pytestmark = pytest.mark.usefixtures("cache_dir")


def test_C1_a_home_scan_opens_no_agent_s_credentials_and_counts_none(
    tmp_path: Path, opened: list[str]
) -> None:
    plain, full, home = scans_without_and_with(tmp_path, SECRETS, opened)
    assert touched(opened, SECRETS) == []
    assert full.skipped == plain.skipped
    assert [key.replace(str(home), "~") for key in full.keys] == [
        key.replace(str(tmp_path / "plain" / "me"), "~") for key in plain.keys
    ]
    assert len(full.keys) == 1


def test_C1_credentials_named_by_a_glob_or_by_their_path_are_not_opened(
    tmp_path: Path, opened: list[str]
) -> None:
    """Met one by one, not in a walk (``~/.gemini/*``, or the file itself): still never opened
    or counted, hidden ones included."""
    home = codex_home(tmp_path, SECRETS)
    opened.clear()
    folders = sorted({place.split("/")[0] for place in SECRETS})
    for pattern in [*(f"{home / folder}/**" for folder in folders), *(home / p for p in SECRETS)]:
        corpus = scan_here(str(pattern))
        assert corpus.skipped == 0, pattern
        assert all(".codex/sessions/" in key for key in corpus.keys), pattern
    assert touched(opened, SECRETS) == []


def test_C7_a_file_of_such_a_name_outside_the_agent_s_folder_is_read_as_any(
    tmp_path: Path,
) -> None:
    """Only the agents' own folders' files are passed over: a project's ``auth.json`` or
    ``config.json`` is a file like any other (here no transcript: an error row, C-7)."""
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    for name in ("auth.json", "config.json", "oauth_creds.json", "data/secrets.json"):
        (project / name).write_text(json.dumps({"key": "value"}), "utf-8")
    corpus = scan_here(project)
    assert len(corpus.keys) + corpus.skipped == 4
