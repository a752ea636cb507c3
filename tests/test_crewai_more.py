"""CrewAI: a crew's text log under the name its ``output_log_file`` gave it, found by a scan by
what it holds (C-1, C-7); two coworkers delegated to at once, each its own sub-agent (A-2).

The fixtures were written by the real crewai 1.15.30 on the scripted model of
``tests/formats/crewai_runs.py`` (``tests/fixtures/crewai/crewai_coworkers_recipe.py``): two
tasks side by side (``async_execution=True``), each task's agent delegating to a coworker of
its own while the other's coworker runs, the crew logging with
``output_log_file="two_coworkers"`` (CrewAI's ``FileHandler`` adds ``.txt``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_crewai import followed, frames_of, shown

FIXTURES = Path(__file__).parent / "fixtures" / "crewai"
NAMED_TEXT_LOG = FIXTURES / "crewai_v1.15.30_two_coworkers.txt"
TWO_COWORKERS_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_two-coworkers.jsonl"
JSON_LOG = FIXTURES / "crewai_v1.15.30_output-log_async.json"


def _crew_and_others(root: Path) -> dict[str, Path]:
    """A folder where a crew ran (its logs under the names it was given) beside other
    programs' text files, in ``root/runs``."""
    crew, other = root / "runs" / "crew", root / "runs" / "other"
    crew.mkdir(parents=True)
    other.mkdir()
    files = {
        "text log": crew / "two_coworkers.txt",  # output_log_file="two_coworkers"
        "json log": crew / "my_run.json",  # output_log_file="my_run.json"
        "notes": other / "notes.txt",
        "server log": other / "logs.txt",
        "one long line": other / "dump.txt",
        "binary": other / "blob.txt",
        "look-alike": other / "almost.txt",
    }
    shutil.copyfile(NAMED_TEXT_LOG, files["text log"])
    shutil.copyfile(JSON_LOG, files["json log"])
    files["notes"].write_text("Buy milk.\nCall Bob.\n")
    files["server log"].write_text("2026-12-06 10:00:00 INFO listening on :8080\n")
    files["one long line"].write_bytes(b"x" * 3_000_000)
    files["binary"].write_bytes(bytes(range(256)) * 64)
    # A time and a colon as CrewAI writes them, then another key: no entry of a crew's log.
    files["look-alike"].write_text('2026-12-06 10:00:00: user="bob", action="login"\n')
    return files


def test_C1_a_scan_finds_a_crew_s_named_text_log_by_what_it_holds(
    tmp_path: Path, cache_dir: Path
) -> None:
    """``Crew(output_log_file="two_coworkers")`` writes ``two_coworkers.txt``: a scan reads
    it by its first line, as it reads the JSON log of any name; every other program's text
    file is skipped, none an error row (C-7)."""
    files = _crew_and_others(tmp_path)
    corpus = turnfold.scan(tmp_path / "runs", workers=1)
    rows = {r["key"]: r for r in corpus}
    assert {(k, r["format"], r["error"]) for k, r in rows.items()} == {
        (str(files["text log"]), "crewai", None),
        (str(files["json log"]), "crewai", None),
    }
    assert corpus.skipped == 5
    text_row = rows[str(files["text log"])]
    assert (text_row["title"], text_row["turns"]) == ("Get 1+2 done.", 3)
    assert corpus[str(files["text log"])] == turnfold.load(files["text log"])
    assert [r[0] for r in shown(turnfold.load(files["text log"]))] == [
        "UserMessage", "SystemNotice", "AssistantText",
    ] * 3  # fmt: skip


def test_C4_a_rescan_opens_no_text_file_again(
    tmp_path: Path, cache_dir: Path, opened: list[str]
) -> None:
    """The verdict on each text file (a crew's log, or another program's) is kept in the
    scan's index: an unchanged one is not opened again, a crew's log nor another file."""
    files = _crew_and_others(tmp_path)
    first = turnfold.scan(tmp_path / "runs", workers=1)
    assert set(map(str, files.values())) <= set(opened)
    opened.clear()
    again = turnfold.scan(tmp_path / "runs", workers=1)
    assert [p for p in opened if p.endswith(".txt")] == []
    assert (again.read, again.skipped) == (0, first.skipped)
    assert again.to_arrow().equals(first.to_arrow())


def test_C1_a_text_log_grown_since_the_last_scan_is_read_again(
    tmp_path: Path, cache_dir: Path
) -> None:
    """A crew appends its text log run after run: the next scan reads it again."""
    runs = tmp_path / "runs"
    runs.mkdir()
    log = runs / "crew_log.txt"
    shutil.copyfile(NAMED_TEXT_LOG, log)
    assert [r["turns"] for r in turnfold.scan(runs, workers=1)] == [3]
    with log.open("ab") as appended:
        appended.write(NAMED_TEXT_LOG.read_bytes())
    assert [r["turns"] for r in turnfold.scan(runs, workers=1)] == [6]


def test_C1_a_scan_of_another_format_skips_text_files(tmp_path: Path, cache_dir: Path) -> None:
    files = _crew_and_others(tmp_path)
    corpus = turnfold.scan(tmp_path / "runs", workers=1, format="codex")
    assert [r for r in corpus if r["path"].endswith(".txt")] == []
    assert turnfold.scan(files["text log"], workers=1, format="crewai").rows[0]["turns"] == 3


# --- two coworkers at once ---------------------------------------------------------------------

#: What each lead's turn shows: its delegation, settled by its coworker's answer.
TWO_COWORKERS_SHOWN = [
    ("UserMessage", "Lead A", "Get 1+2 done."),
    ("SystemNotice", "Lead A", "Agent: Lead A"),
    ("call", "Lead A", "delegate_work_to_coworker",
     {"task": "Add 1 and 2.", "context": "Use add_slowly.", "coworker": "Adder"},
     "success", "1+2=3"),
    ("AssistantText", "Lead A", "A: 3"),
    ("UserMessage", "Lead B", "Get 3+4 done."),
    ("SystemNotice", "Lead B", "Agent: Lead B"),
    ("call", "Lead B", "delegate_work_to_coworker",
     {"task": "Add 3 and 4.", "context": "Use add_slowly.", "coworker": "Multiplier"},
     "success", "3+4=7"),
    ("AssistantText", "Lead B", "B: 7"),
    ("UserMessage", "Joiner", "Say both."),
    ("SystemNotice", "Joiner", "Agent: Joiner"),
    ("AssistantText", "Joiner", "3, 7"),
]  # fmt: skip
#: Each coworker's own run, nothing of the other's.
COWORKERS_SHOWN = {
    "Adder": [
        ("UserMessage", "Adder", "Add 1 and 2."),
        ("call", "Adder", "add_slowly", {"a": 1, "b": 2}, "success", "3"),
        ("AssistantText", "Adder", "1+2=3"),
    ],
    "Multiplier": [
        ("UserMessage", "Multiplier", "Add 3 and 4."),
        ("call", "Multiplier", "add_slowly", {"a": 3, "b": 4}, "success", "7"),
        ("AssistantText", "Multiplier", "3+4=7"),
    ],
}


def _coworkers(transcript: turnfold.Transcript) -> dict[str, list[tuple[Any, ...]]]:
    runs = {}
    for call in transcript.tool_calls():
        assert call.subagent is not None, call.args
        assert call.subagent.transcript is not None
        assert call.subagent.task == call.args["task"]
        runs[call.subagent.name] = shown(call.subagent.transcript)
    return runs


def test_A2_two_coworkers_running_at_once_are_each_their_own_sub_agent() -> None:
    """Their frames interleave (each coworker's calls overlap the other's): each is told by
    the delegating call its start names (``parent_id``) and its task's id after that."""
    frames = frames_of(TWO_COWORKERS_FRAMES)
    coworkers_calls = [
        (f["type"], f["data"]["agent_role"])
        for f in frames
        if f["type"].startswith("tool_usage_") and f["data"]["tool_name"] == "add_slowly"
    ]
    assert coworkers_calls == [  # the run interleaved them
        ("tool_usage_started", "Multiplier"),
        ("tool_usage_started", "Adder"),
        ("tool_usage_finished", "Multiplier"),
        ("tool_usage_finished", "Adder"),
    ]
    transcript = followed(frames)
    assert shown(transcript) == TWO_COWORKERS_SHOWN
    assert _coworkers(transcript) == COWORKERS_SHOWN
    assert transcript.warnings == []


def test_A2_saved_frames_of_two_coworkers_load_as_following_them_shows_them() -> None:
    loaded = turnfold.load(TWO_COWORKERS_FRAMES)
    assert shown(loaded) == TWO_COWORKERS_SHOWN
    assert _coworkers(loaded) == COWORKERS_SHOWN
    assert loaded.accounting.unaccounted == []


def test_A2_coworkers_told_apart_without_parent_ids_by_the_call_that_names_them() -> None:
    """Frames of an older CrewAI (no ``parent_id``): a coworker's start is matched to the
    running delegation call that names its role and task."""
    frames = [{**f, "parent_id": None} for f in frames_of(TWO_COWORKERS_FRAMES)]
    transcript = followed(frames)
    assert shown(transcript) == TWO_COWORKERS_SHOWN
    assert _coworkers(transcript) == COWORKERS_SHOWN


def test_A2_a_coworker_whose_end_is_lost_ends_with_its_call_the_other_runs_on() -> None:
    frames = frames_of(TWO_COWORKERS_FRAMES)
    adder_end = next(
        i
        for i, f in enumerate(frames)
        if f["type"] == "agent_execution_completed" and f["data"]["agent"]["role"] == "Adder"
    )
    transcript = followed(frames[:adder_end] + frames[adder_end + 1 :])
    assert shown(transcript) == TWO_COWORKERS_SHOWN
    assert _coworkers(transcript) == COWORKERS_SHOWN


def test_A2_two_coworkers_followed_live_and_their_named_log_scanned(
    tmp_path: Path, cache_dir: Path
) -> None:
    """The same crew run live (where crewai is installed, as tests/formats/crewai_runs.py
    says): however its threads interleave, each coworker is its own sub-agent; and the log it
    writes with ``output_log_file="<folder>/two_coworkers"`` is ``two_coworkers.txt``, which a
    scan finds."""
    pytest.importorskip("crewai")
    from tests.fixtures.crewai.crewai_coworkers_recipe import two_coworkers_crew
    from turnfold.formats.frameworks.crewai import stream_events

    run = turnfold.follow(stream_events(two_coworkers_crew()), display=False)
    list(run)
    assert shown(run.transcript) == TWO_COWORKERS_SHOWN
    assert _coworkers(run.transcript) == COWORKERS_SHOWN
    runs = tmp_path / "runs"
    runs.mkdir()
    two_coworkers_crew(str(runs / "two_coworkers")).kickoff()
    assert [(r["path"], r["format"], r["turns"]) for r in turnfold.scan(runs, workers=1)] == [
        (str(runs / "two_coworkers.txt"), "crewai", 3)
    ]
