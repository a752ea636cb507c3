"""A Workflow run's ``journal.jsonl`` is read line by line, with the record limit and the
invalid-UTF-8 handling of every other reader: a journal of any size, or a line of any length,
never has to fit in memory (spec X-1), and a bad line is a warning, never a crash (L-4).

The run is the real one Claude Code 2.1.332 wrote (tests/fixtures/claude-code/
v2.1.332_workflow-recipe/README.md); its journal's own records are repeated or edited here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import turnfold
from tests.held_memory import with_peak
from turnfold.formats.source import RECORD_LIMIT_ENV

WORKFLOW = Path(__file__).parents[1] / "fixtures" / "claude-code" / "v2.1.332_workflow"
SESSION = "11111111-2222-3333-4444-666666666666"
#: The run's two agents and what each returned, as its journal records it.
RESULTS = {"a3454888b50a34f18": "TF-WF-DONE-a", "ac58b4715d156b00a": "TF-WF-DONE-b"}


def copied_run(tmp_path: Path) -> tuple[Path, Path]:
    """The session file of a copy of the real run, and the copy's journal."""
    folder = tmp_path / "project"
    shutil.copytree(WORKFLOW, folder)
    (journal,) = (folder / SESSION / "subagents" / "workflows").glob("*/journal.jsonl")
    return folder / f"{SESSION}.jsonl", journal


def agent_results(transcript: turnfold.Transcript) -> dict[str, str | None]:
    """Each workflow agent's result, by its agent id (the journal's, unless it has none)."""
    calls = [c for c in transcript.tool_calls(nested=True) if c.name == "agent"]
    return {
        str(c.subagent.agent_id if c.subagent else None): c.result.text if c.result else None
        for c in calls
    }


def test_X1_a_huge_workflow_journal_is_read_a_chunk_at_a_time(tmp_path: Path) -> None:
    session, journal = copied_run(tmp_path)
    records = journal.read_bytes()
    baseline, small = with_peak(lambda: turnfold.load(session))
    # The real records again and again (a run resumed many times): 24 MB, nothing that
    # warns or that the reader keeps more than once.
    journal.write_bytes(records * (24_000_000 // len(records)))
    loaded, peak = with_peak(lambda: turnfold.load(session))
    assert loaded.warnings == baseline.warnings == []
    assert agent_results(loaded) == agent_results(baseline) == RESULTS
    # Read whole, its text and its lines were held at once: over 60 MB.
    assert peak - small < 6_000_000


def test_X1_a_journal_line_over_the_record_limit_is_skipped_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, journal = copied_run(tmp_path)
    monkeypatch.setenv(RECORD_LIMIT_ENV, "100000")
    _, small = with_peak(lambda: turnfold.load(session))
    result = "x" * 12_000_000
    huge = f'{{"type":"result","agentId":"a3454888b50a34f18","result":"{result}"}}\n'
    journal.write_text(journal.read_text() + huge)
    line = journal.read_text().count("\n")
    loaded, peak = with_peak(lambda: turnfold.load(session))
    [warning] = loaded.warnings
    assert (warning.source, warning.line) == (str(journal), line)
    assert warning.reason == (
        f"a record of {len(huge):,} bytes, over the limit of 100,000 (TURNFOLD_MAX_RECORD_BYTES); "
        "skipped unread"
    )
    assert agent_results(loaded) == RESULTS  # the lines before it, read as ever
    # Never held: read on in chunks, only its size counted.
    assert peak - small < 4_000_000


def test_L4_a_journal_line_of_invalid_utf8_is_read_with_a_warning(tmp_path: Path) -> None:
    session, journal = copied_run(tmp_path)
    records = journal.read_bytes().splitlines(keepends=True)
    (number, original) = next(
        (n, r) for n, r in enumerate(records, 1) if b'"result":"TF-WF-DONE-a"' in r
    )
    records[number - 1] = original.replace(b"TF-WF-DONE-a", b"TF-WF-DONE-a \xff")
    journal.write_bytes(b"".join(records))
    loaded = turnfold.load(session)  # it raised UnicodeDecodeError: the session did not load
    [warning] = loaded.warnings
    assert (warning.source, warning.line) == (str(journal), number)
    assert warning.reason.startswith("invalid UTF-8 at byte ")
    assert agent_results(loaded) == {**RESULTS, "a3454888b50a34f18": "TF-WF-DONE-a \ufffd"}


def test_L4_a_malformed_journal_line_warns_as_before(tmp_path: Path) -> None:
    session, journal = copied_run(tmp_path)
    journal.write_text('{"type":"started",\n' + journal.read_text() + "\n\n")
    loaded = turnfold.load(session)
    [warning] = loaded.warnings
    assert (warning.source, warning.line) == (str(journal), 1)
    assert warning.reason == "malformed journal line; skipped"
    assert agent_results(loaded) == RESULTS  # blank lines are no records, as before
