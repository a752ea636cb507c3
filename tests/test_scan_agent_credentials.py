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
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from turnfold import scan
from turnfold.corpus import Corpus

FIXTURES = Path(__file__).parent / "fixtures"
ROLLOUT = FIXTURES / "codex_rollout_schema-coverage.jsonl"
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
#: What a scan must never open.
UNOPENED = tuple(f"{os.sep}{place}".replace("/", os.sep) for place in SECRETS)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(folder))
    return folder


def _home(root: Path, secrets: bool) -> Path:
    """A home whose ``.codex`` holds a session, and (with ``secrets``) every agent's folder
    its credentials."""
    home = root / "me"
    sessions = home / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copyfile(ROLLOUT, sessions / "rollout-2025-01-01T00-00-00.jsonl")
    if secrets:
        for place, value in SECRETS.items():
            path = home / place
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value), "utf-8")
    return home


def _scan(source: Any) -> Corpus:
    return scan(source, workers=1, cache=False)


def _secrets_opened(opened: list[str]) -> list[str]:
    return [path for path in opened if path.endswith(UNOPENED)]


def test_C1_a_home_scan_opens_no_agent_s_credentials_and_counts_none(
    tmp_path: Path, opened: list[str]
) -> None:
    plain = _scan(_home(tmp_path / "plain", secrets=False))
    home = _home(tmp_path / "full", secrets=True)
    opened.clear()
    full = _scan(home)
    assert _secrets_opened(opened) == []
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
    home = _home(tmp_path, secrets=True)
    opened.clear()
    folders = sorted({place.split("/")[0] for place in SECRETS})
    for pattern in [*(f"{home / folder}/**" for folder in folders), *(home / p for p in SECRETS)]:
        corpus = _scan(str(pattern))
        assert corpus.skipped == 0, pattern
        assert all(".codex/sessions/" in key for key in corpus.keys), pattern
    assert _secrets_opened(opened) == []


def test_C7_a_file_of_such_a_name_outside_the_agent_s_folder_is_read_as_any(
    tmp_path: Path,
) -> None:
    """Only the agents' own folders' files are passed over: a project's ``auth.json`` or
    ``config.json`` is a file like any other (here no transcript: an error row, C-7)."""
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    for name in ("auth.json", "config.json", "oauth_creds.json", "data/secrets.json"):
        (project / name).write_text(json.dumps({"key": "value"}), "utf-8")
    corpus = _scan(project)
    assert len(corpus.keys) + corpus.skipped == 4
