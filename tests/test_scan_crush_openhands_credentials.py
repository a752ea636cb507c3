"""A scan of a home never opens the files Crush and OpenHands keep their keys in (C-1, C-7),
as it never opens the other agents' (``test_scan_agent_credentials.py``): Crush's
``crush.json`` of its data folder (``~/.local/share/crush``, where its TUI writes the API key
the user enters) and of ``~/.config/crush``; OpenHands' ``settings.json``, ``secrets.json``
and its CLI's ``agent_settings.json`` in ``~/.openhands``. Each is shaped as its tool writes
it (the sources cited beside each reader's ``CREDENTIALS``), its values made up. A worker
opened each to learn its format, then counted it as a skipped file. The session beside them
is the committed Codex rollout (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import scan
from turnfold.formats.errors import TranscriptFormatError

FIXTURES = Path(__file__).parent / "fixtures"
ROLLOUT = FIXTURES / "codex_rollout_schema-coverage.jsonl"
SECRETS: dict[str, Any] = {
    ".local/share/crush/crush.json": {
        "providers": {"anthropic": {"api_key": "sk-ant-not-a-real-key"}},
        "recent_models": {},
    },
    ".config/crush/crush.json": {
        "providers": {"deepseek": {"type": "openai", "api_key": "sk-not-a-real-key"}},
    },
    ".openhands/settings.json": {
        "language": "en",
        "agent": "CodeActAgent",
        "llm_model": "anthropic/claude-sonnet-4-5",
        "llm_api_key": "sk-ant-not-a-real-key",
        "llm_base_url": None,
    },
    ".openhands/secrets.json": {
        "provider_tokens": {"github": {"token": "ghp_not_a_real_token", "host": None}},
        "custom_secrets": {},
    },
    ".openhands/agent_settings.json": {
        "llm": {"model": "claude-sonnet-4-5-20250929", "api_key": "sk-not-a-real-key"},
        "tools": [],
    },
}
UNOPENED = tuple(f"{os.sep}{place}".replace("/", os.sep) for place in SECRETS)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(folder))
    return folder


def _home(root: Path, secrets: bool) -> Path:
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


def test_C1_a_home_scan_opens_neither_crush_s_nor_openhands_keys(
    tmp_path: Path, opened: list[str]
) -> None:
    plain = scan(_home(tmp_path / "plain", secrets=False), workers=1, cache=False)
    home = _home(tmp_path / "full", secrets=True)
    opened.clear()
    full = scan(home, workers=1, cache=False)
    assert [path for path in opened if path.endswith(UNOPENED)] == []
    assert full.skipped == plain.skipped
    assert len(full.keys) == len(plain.keys) == 1
    opened.clear()
    for place in SECRETS:  # named one by one: still not opened, nor counted
        assert scan(home / place, workers=1, cache=False).skipped == 0, place
    assert [path for path in opened if path.endswith(UNOPENED)] == []


def test_C7_a_load_of_one_says_whose_keys_it_holds(tmp_path: Path, opened: list[str]) -> None:
    home = _home(tmp_path, secrets=True)
    opened.clear()
    for place, keeper in ((".openhands/secrets.json", "openhands"),
                          (".local/share/crush/crush.json", "crush")):  # fmt: skip
        with pytest.raises(TranscriptFormatError, match=rf"{keeper}'s credentials"):
            turnfold.load(home / place)
    assert [path for path in opened if path.endswith(UNOPENED)] == []
