"""A scan of a home never opens the files Crush and OpenHands keep their keys in (C-1, C-7),
as it never opens the other agents' (``test_scan_agent_credentials.py``): Crush's
``crush.json`` of its data folder (``~/.local/share/crush``, where its TUI writes the API key
the user enters) and of ``~/.config/crush``; OpenHands' ``settings.json``, ``secrets.json``
and its CLI's ``agent_settings.json`` in ``~/.openhands``. Each is shaped as its tool writes
it (the sources cited beside each reader's ``CREDENTIALS``), its values made up. A worker
opened each to learn its format, then counted it as a skipped file. The session beside them
is the committed Codex rollout (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.credential_homes import codex_home, scan_here, scans_without_and_with, touched
from turnfold.formats.errors import TranscriptFormatError

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


pytestmark = pytest.mark.usefixtures("cache_dir")


def test_C1_a_home_scan_opens_neither_crush_s_nor_openhands_keys(
    tmp_path: Path, opened: list[str]
) -> None:
    plain, full, home = scans_without_and_with(tmp_path, SECRETS, opened)
    assert touched(opened, SECRETS) == []
    assert full.skipped == plain.skipped
    assert len(full.keys) == len(plain.keys) == 1
    opened.clear()
    for place in SECRETS:  # named one by one: still not opened, nor counted
        assert scan_here(home / place).skipped == 0, place
    assert touched(opened, SECRETS) == []


def test_C7_a_load_of_one_says_whose_keys_it_holds(tmp_path: Path, opened: list[str]) -> None:
    home = codex_home(tmp_path, SECRETS)
    opened.clear()
    for place, keeper in ((".openhands/secrets.json", "openhands"),
                          (".local/share/crush/crush.json", "crush")):  # fmt: skip
        with pytest.raises(TranscriptFormatError, match=rf"{keeper}'s credentials"):
            turnfold.load(home / place)
    assert touched(opened, SECRETS) == []
