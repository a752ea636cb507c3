"""A scan of a home holding every pinned agent's folder reads each session and passes the
agents' own files over unopened and uncounted (C-1, C-7).

The files are what the real CLIs of tests/agents wrote in their scenarios' runs
(``tests/fixtures/<agent>/home-files``, each folder's README names the run): Gemini CLI 0.61.0's
and Qwen Code 0.24.4's ``/restore`` checkpoints, prompt logs, UI state and long tool outputs,
Claude Code 2.1.332's plugin store and saved tool results, Codex 0.171.0's databases and
``installation_id``, Cline's databases, caches and logs, OpenCode 1.18.33's log and tool output,
Continue 1.5.47's permissions, log and index of sessions, Kimi Code 2.1.0's ids, indexes, cache
and logs. A scan opened each JSON file and database among them to learn it held no session, and
counted all of them in ``corpus.skipped``, which is there for files that might have been
sessions. The sessions are real too: Gemini CLI's, Qwen Code's and Continue's of the same runs,
the others from tests/fixtures.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from turnfold import scan
from turnfold.corpus.discover import discover

FIXTURES = Path(__file__).parent / "fixtures"
#: Each agent's own files, and the folder of the home they go in.
HOME_FILES = {
    "gemini": ".gemini", "qwen": ".qwen", "claude-code": ".claude", "codex": ".codex",
    "cline": ".cline", "opencode": ".local", "continue": ".continue", "kimi": ".kimi-code",
}  # fmt: skip
#: Sessions from other runs, and where each agent keeps them (relative to the home).
SESSIONS = {
    FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl":
        ".claude/projects/-work/v2.1.56_real_prompt-taken-mid-turn.jsonl",
    FIXTURES / "codex_rollout_v0.129_two-turns.jsonl":
        ".codex/sessions/2026/12/06/rollout-codex_rollout_v0.129_two-turns.jsonl",
    FIXTURES / "cline" / "cline-cli-3.0.65_api-error" / "1796495860052_aovfe":
        ".cline/data/sessions/1796495860052_aovfe",
    FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5":
        ".kimi-code/sessions/wd_work_e94ed5f3a266/session_60f3c294-da52-4c40-857c-c0696d973df5",
    FIXTURES / "opencode" / "work" / "opencode.db": ".local/share/opencode/opencode.db",
}  # fmt: skip
#: Codex's helpers while it runs: links to its own binary (``codex-linux-sandbox``,
#: ``apply_patch``, ``applypatch``) in ``tmp/arg0-linux/codex-arg0<random>/``, which git
#: cannot keep pointing where they pointed, so they are made here as the run left them.
CODEX_ARG0 = ".codex/tmp/arg0-linux/codex-arg0Pj0ZKL"
CODEX_LINKS = ("apply_patch", "applypatch", "codex-linux-sandbox")

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' folders are the test's: a developer's variables would move them."""
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR",
                     "GEMINI_CLI_HOME", "XDG_DATA_HOME", "CLINE_DIR", "CLINE_DATA_DIR",
                     "CONTINUE_GLOBAL_DIR", "KIMI_CODE_HOME", "COPILOT_HOME"):  # fmt: skip
        monkeypatch.delenv(variable, raising=False)


def _home(home: Path) -> Path:
    """``home`` made the home of every agent: their own files, and their sessions."""
    for agent, folder in HOME_FILES.items():
        shutil.copytree(FIXTURES / agent / "home-files" / folder, home / folder,
                        dirs_exist_ok=True)  # fmt: skip
    for source, place in SESSIONS.items():
        (home / place).parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, home / place)
        else:
            shutil.copyfile(source, home / place)
    binary = home.parent / "bin" / "codex"  # the links lead out of the home, as the run's did
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF")
    (home / CODEX_ARG0).mkdir(parents=True)
    (home / CODEX_ARG0 / ".lock").touch()
    for name in CODEX_LINKS:
        os.symlink(binary, home / CODEX_ARG0 / name)
    return home


def _own_files(home: Path) -> list[Path]:
    """The agents' own files the home holds: every file of the fixtures but the sessions."""
    sessions = set(_sessions(home))
    return [
        path
        for agent, folder in HOME_FILES.items()
        for path in sorted((FIXTURES / agent / "home-files" / folder).rglob("*"))
        if path.is_file()
        and str(home / path.relative_to(FIXTURES / agent / "home-files")) not in sessions
    ]


def _sessions(home: Path) -> list[str]:
    """The file of each session the home holds (sub-agents' files belong to them)."""
    return sorted(
        str(home / place)
        for place in (
            ".gemini/tmp/work/chats/session-2026-12-07T08-22-5a4a7738.jsonl",
            ".qwen/projects/-tmp-hF-inter-qwen-work/chats/d0752af8-28f3-4d32-86a8-79d97b29edec.jsonl",
            ".continue/sessions/93d7500f-43c8-4dcb-a949-05f41e888d0b.json",
            ".claude/projects/-work/v2.1.56_real_prompt-taken-mid-turn.jsonl",
            ".codex/sessions/2026/12/06/rollout-codex_rollout_v0.129_two-turns.jsonl",
            ".cline/data/sessions/1796495860052_aovfe/1796495860052_aovfe.messages.json",
            ".kimi-code/sessions/wd_work_e94ed5f3a266/session_60f3c294-da52-4c40-857c-c0696d973df5"
            "/agents/main/wire.jsonl",
        )
    )


def test_C7_a_home_scan_reads_every_session_and_none_of_the_agents_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path / "me")
    monkeypatch.setenv("HOME", str(home))
    found = discover(home, None)
    items = [item.path for item in found.items]
    database = str(home / SESSIONS[FIXTURES / "opencode" / "work" / "opencode.db"])
    assert {*_sessions(home), database} <= set(items)  # and Cline's manifest, read with its own
    # Discovery opens no file; a worker opens each item: the files not among the items are
    # never opened, and none is counted (the links of Codex's helpers neither).
    assert found.skipped == 0
    assert not set(map(str, _own_files(home))) & set(items)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        corpus = scan(home, workers=1, cache=False)
    assert corpus.skipped == 0
    rows = corpus.to_pandas()
    assert rows["error"].isna().all()
    assert set(rows["path"]) == {*_sessions(home), database}
    assert not any("link" in str(w.message) for w in said)


def test_C7_qwen_code_s_older_sessions_in_its_temp_folder_are_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen Code kept its chats in ``~/.qwen/tmp/<project>/chats/`` before its ``projects/``
    (shared/notes/transcript-formats.md): only the temp folder's own files are passed over,
    its long outputs (``tmp/<project>/<tool>_<call>.output``) among them."""
    home = _home(tmp_path / "me")
    monkeypatch.setenv("HOME", str(home))
    older = home / ".qwen" / "tmp" / "ad02a2a9" / "chats" / "session.jsonl"
    older.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl", older)
    found = discover(home, None)
    assert str(older) in [item.path for item in found.items]
    output = next((home / ".qwen" / "tmp").glob("*/run_shell_command_*.output"))
    assert str(output) not in [item.path for item in found.items]
    assert found.skipped == 0


def test_C7_a_checkpoint_the_user_names_is_read_as_the_session_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path / "me")
    monkeypatch.setenv("HOME", str(home))
    named = sorted((home / ".gemini" / "tmp" / "work" / "checkpoints").glob("*.json"))
    corpus = scan(named, workers=1, cache=False)
    rows = corpus.to_pandas()
    assert list(rows["format"]) == ["gemini-checkpoint", "gemini-checkpoint"]
    assert list(rows["agent"]) == ["gemini-cli", "gemini-cli"]
    assert list(rows["title"]) == ["TF-CKPT: read the notes, then fix them and add a file."] * 2
    assert (corpus.skipped, rows["error"].isna().all()) == (0, True)
    # The same file outside an agent's folder is no agent's own: a walk reads it.
    elsewhere = tmp_path / "kept" / named[0].name
    elsewhere.parent.mkdir()
    shutil.copyfile(named[0], elsewhere)
    assert [item.path for item in discover(elsewhere.parent, None).items] == [str(elsewhere)]
