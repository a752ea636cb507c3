"""``turnfold.scan(Path.home())`` finds every agent's sessions where the agent writes them
(spec C-1), each once: the hidden folders of a home (``.claude``, ``.continue``, ``.copilot``,
``.kimi-code``, ``.kimi``, a project's ``.crush``) and, of its data folder ``.local/share``,
only the agents' own (OpenCode's ``opencode/``, Kilo Code's ``kilo/``, ``crush server``'s
``crush/``). OpenCode's and Kilo Code's databases were missed: ``.local`` was not walked.

The home is made of the real files the agents wrote (tests/fixtures, SOURCES.md), each put
where its reader's docstring says the agent keeps it.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from turnfold import scan

FIXTURES = Path(__file__).parent / "fixtures"
KIMI_CODE = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
KIMI_CLI = FIXTURES / "kimi" / "legacy" / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"
COPILOT = FIXTURES / "copilot" / "session-state"
CONTINUE = FIXTURES / "continue" / "work" / "sessions"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
KILO = FIXTURES / "opencode" / "kilo" / "work" / "kilo.db"
CRUSH_PROJECT = FIXTURES / "crush" / "quay" / ".crush" / "crush.db"
CRUSH_SERVER = FIXTURES / "crush" / "cisco-auto" / "crush.db"


def _place(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)
    return target


def _keys_of_alone(path: Path) -> list[str]:
    """The keys a scan of one database gives (its top-level sessions)."""
    return scan([path], workers=1, cache=False).keys


@pytest.fixture(autouse=True)
def own_data_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' data folders are the home's: a developer's ``$XDG_DATA_HOME`` or
    ``$CRUSH_GLOBAL_DATA`` would add their sessions to the scan."""
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("CRUSH_GLOBAL_DATA", raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, list[str]]]:
    """A home folder holding each agent's sessions at its default place, and the keys a scan
    should give for each agent."""
    home = tmp_path / "me"
    share = home / ".local" / "share"
    opencode = _place(OPENCODE, share / "opencode" / "opencode.db")
    kilo = _place(KILO, share / "kilo" / "kilo.db")
    # Crush keeps a project's sessions in the project (``<project>/.crush/crush.db``), and
    # ``crush server``'s in its workspace, ``~/.local/share/crush`` (charmbracelet/crush
    # internal/cmd/server.go, config.GlobalWorkspaceDir).
    project = _place(CRUSH_PROJECT, home / "code" / "quay" / ".crush" / "crush.db")
    server = _place(CRUSH_SERVER, share / "crush" / ".crush" / "crush.db")
    sessions = _place(CONTINUE, home / ".continue" / "sessions")
    copilot = _place(COPILOT, home / ".copilot" / "session-state")
    kimi = _place(KIMI_CODE, home / ".kimi-code" / "sessions" / "wd_work_6703865c9087"
                  / KIMI_CODE.name)  # fmt: skip
    workdir = hashlib.md5(str(home / "work").encode()).hexdigest()  # kimi-cli's folder name
    legacy = _place(KIMI_CLI, home / ".kimi" / "sessions" / workdir / KIMI_CLI.name)
    monkeypatch.setenv("HOME", str(home))
    expected = {
        "opencode": _keys_of_alone(opencode),
        "kilo-code": _keys_of_alone(kilo),
        "crush": _keys_of_alone(project) + _keys_of_alone(server),
        "continue": [str(sessions / "4b888bc9-986f-432a-9fe4-8f6b4db60a07.json")],
        "copilot": sorted(str(p / "events.jsonl") for p in copilot.iterdir()),
        "kimi-code": [str(kimi / "agents" / "main" / "wire.jsonl")],
        "kimi-cli": [str(legacy / "context.jsonl")],
    }
    assert all(expected.values())
    return home, expected


def test_C1_a_scan_of_the_home_folder_finds_each_agent_s_sessions_once(
    home: tuple[Path, dict[str, list[str]]],
) -> None:
    folder, expected = home
    assert Path.home() == folder
    corpus = scan(Path.home(), workers=1, cache=False)
    keys = corpus.keys
    assert len(keys) == len(set(keys))  # no session twice
    for agent, wanted in expected.items():
        assert [key for key in keys if key in wanted] == sorted(wanted), agent
    assert sorted(keys) == sorted(key for wanted in expected.values() for key in wanted)
    assert all(row["error"] is None for row in corpus)
    assert {row["agent"] for row in corpus if row["key"] in expected["kilo-code"]} == {"kilo-code"}


def test_C1_nothing_else_of_dot_local_is_walked_or_counted(
    home: tuple[Path, dict[str, list[str]]],
) -> None:
    """Installed programs' files and other applications' data under ``~/.local`` are neither
    rows nor skipped files, even one that reads as a session; a ``.local`` scanned by name is
    walked as any folder is."""
    folder, _ = home
    before = scan(folder, workers=1, cache=False)
    session = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
    local = folder / ".local"
    strays = [
        _place(session, local / "share" / "some-app" / "history.jsonl"),
        _place(session, local / "share" / "session.jsonl"),
        _place(OPENCODE, local / "share" / "notes.db"),
        _place(session, local / "lib" / "python3.12" / "site-packages" / "pkg" / "data.jsonl"),
        _place(session, local / "state" / "opencode" / "log.jsonl"),
        _place(session, local / "notes.json"),
    ]
    after = scan(folder, workers=1, cache=False)
    assert after.keys == before.keys
    assert after.skipped == before.skipped
    named = scan(local / "share", workers=1, cache=False).keys
    assert {str(strays[0]), str(strays[1])} <= set(named)
