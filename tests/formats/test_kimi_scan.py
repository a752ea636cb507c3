"""A scan of part of a Kimi session (its ``agents/`` or ``subagents/`` folder) gives the
session one row, its sub-agent nested and counted once (spec C-1: sub-agent files belong to
their parent session, never rows of their own)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from turnfold import scan

FIXTURES = Path(__file__).parent.parent / "fixtures" / "kimi"
CODE = FIXTURES / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
LEGACY = FIXTURES / "legacy" / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"
TITLE = "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step."


def _rows(source: Path) -> list[tuple[str, str, int, int]]:
    corpus = scan(source, workers=1, cache=False)
    return [(r["key"], r["title"], r["tool_calls"], r["subagents"]) for r in corpus]


@pytest.mark.parametrize("part", ["", "agents", "agents/main"])
def test_kimi_code_s_session_is_one_row_from_any_of_its_folders(tmp_path: Path,
                                                                part: str) -> None:  # fmt: skip
    sessions = tmp_path / ".kimi-code" / "sessions" / "wd_work_6703865c9087"
    session = sessions / CODE.name
    shutil.copytree(CODE, session)
    lead = str(session / "agents" / "main" / "wire.jsonl")
    assert _rows(session / part) == [(lead, TITLE, 10, 1)]
    assert _rows(tmp_path) == [(lead, TITLE, 10, 1)]


def test_a_kimi_code_sub_agent_s_journal_is_read_again_with_its_session(tmp_path: Path) -> None:
    """A change to the sub-agent's journal alone is a change to its session's row (C-4)."""
    session = tmp_path / CODE.name
    shutil.copytree(CODE, session)
    agents = session / "agents"
    first = scan(agents, workers=1)
    assert [r["subagents"] for r in first] == [1]
    child = agents / "agent-0" / "wire.jsonl"
    with child.open("a") as stream:  # a line cut mid-write: the lead's row warns of it
        stream.write('{"type": "turn.')
    again = scan(agents, workers=1)
    assert [r["key"] for r in again] == [str(agents / "main" / "wire.jsonl")]
    assert [r["warnings"] for r in again] == [r["warnings"] + 1 for r in first]


def test_the_older_kimi_cli_s_subagents_folder_is_no_row_of_its_own(tmp_path: Path) -> None:
    session = tmp_path / LEGACY.name
    shutil.copytree(LEGACY, session)
    assert _rows(session / "subagents") == []
    assert _rows(session) == [(str(session / "context.jsonl"), TITLE, 10, 1)]
