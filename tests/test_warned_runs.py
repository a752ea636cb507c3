"""Each run of a file of many runs is told its own warnings, past the listed ones too; a list of
warnings that grows with the input is capped wherever it is kept (spec L-4, C-2, X-1).

A file of runs (a dataset's JSON lines, a JSON array of rows, a compressed one) is read as one
source, whose list of warnings counts what it holds past
:data:`~turnfold.formats.source.MAX_LISTED_WARNINGS` with no line; the runs' shares of it were
told by line, so the count went to one run and every later run was told none. The files here are
generated: OpenAI Chat Completions message lists (``{"messages": [...]}``, the shape of the
datasets of :mod:`turnfold.corpus.runs`), with undecodable bytes in some lines.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import turnfold
from tests.held_memory import with_peak
from turnfold import scan
from turnfold.formats.source import MAX_LISTED_WARNINGS, UnlistedWarnings, warning_count

FIXTURES = Path(__file__).parent / "fixtures"
#: A real session of Claude Code 2.1.332 with a Workflow run and its journal
#: (tests/fixtures/claude-code/v2.1.332_workflow-recipe/README.md).
WORKFLOW = FIXTURES / "claude-code" / "v2.1.332_workflow"
SESSION = "11111111-2222-3333-4444-666666666666"
#: A byte that is never UTF-8: the line it is on is read with U+FFFD and warned of.
UNDECODABLE = b"\xff"


def run(place: int, *, alien: bool = False) -> dict[str, object]:
    """One run of a dataset; ``alien``: with a message its reader skips with a warning."""
    messages = [{"role": "user", "content": f"question {place} MARK"}]
    if alien:
        messages.append({"role": "alien", "content": "not a chat role"})
    messages.append({"role": "assistant", "content": f"answer {place}"})
    return {"messages": messages}


def marked(text: bytes, bad: bool) -> bytes:
    return text.replace(b"MARK", UNDECODABLE if bad else b"ok")


def rows_by_place(corpus: turnfold.Corpus) -> dict[int, dict[str, object]]:
    return {int(str(row["sample"])): row for row in corpus}


# --- a file of runs in JSON lines: each run its own line's warnings ----------------------------

RUNS = MAX_LISTED_WARNINGS + 200


def test_C2_each_run_of_a_jsonl_file_past_the_listed_warnings_counts_its_own(
    tmp_path: Path,
) -> None:
    # Every run but each tenth has an undecodable line: 1,080 of them, past the listed 1,000;
    # each third also has a message of its own that its reader warns of.
    bad = {place for place in range(RUNS) if place % 10}
    alien = {place for place in range(RUNS) if place % 3 == 0}
    path = tmp_path / "train.jsonl"
    path.write_bytes(
        b"".join(
            marked(json.dumps(run(place, alien=place in alien)).encode(), place in bad) + b"\n"
            for place in range(RUNS)
        )
    )
    rows = rows_by_place(scan(path, workers=1, cache=False))
    assert len(rows) == RUNS
    assert all(row["error"] is None for row in rows.values())
    told = {place: row["warnings"] for place, row in rows.items()}
    assert told == {place: (place in bad) + (place in alien) for place in range(RUNS)}

    # load(path, sample=n) tells the same, its line's warning listed with its line.
    late = turnfold.load(path, sample=RUNS - 1)
    at = json.dumps(run(RUNS - 1)).encode().index(b"MARK")
    assert [(w.line, w.reason.split(";")[0]) for w in late.warnings] == [
        (RUNS, f"invalid UTF-8 at byte {at}")
    ]
    assert turnfold.load(path, sample=RUNS - 10).warnings == []


# --- one JSON document of runs: no run can be told by line --------------------------------------


def test_L4_every_run_of_one_json_document_is_told_once_of_the_file_s_problems(
    tmp_path: Path,
) -> None:
    # 100 runs in one pretty-printed array, 50 undecodable lines in each: 5,000 problems,
    # which its records (numbered by their place, not by line) cannot be told apart by.
    runs = [
        {"messages": [{"role": "user", "content": f"run {n} line {i} MARK"} for i in range(50)]}
        for n in range(100)
    ]
    path = tmp_path / "data.json"
    path.write_bytes(marked(json.dumps(runs, indent=1).encode(), True))
    rows = rows_by_place(scan(path, workers=1, cache=False))
    assert len(rows) == 100
    assert {row["warnings"] for row in rows.values()} == {1}

    (said,) = turnfold.load(path, sample=60).warnings
    assert said.line == 6  # the first undecodable line of the file
    assert said.reason.startswith("invalid UTF-8 at byte ")
    assert "the first of 5,000 problem(s) found reading this file of runs whole" in said.reason
    assert "every run is told of them" in said.reason
    assert turnfold.load(path, sample=0).warnings == [said]


# --- the file's own warnings (its data cut off): told to the run where it stops ---------------


def test_L4_a_cut_off_compressed_file_of_runs_tells_the_run_it_stops_in(tmp_path: Path) -> None:
    lines = b"".join(json.dumps(run(place)).encode() + b"\n" for place in range(200))
    whole = gzip.compress(lines)
    path = tmp_path / "train.jsonl.gz"
    path.write_bytes(whole[: len(whole) - 30])  # the stream cut inside its last lines
    rows = rows_by_place(scan(path, workers=1, cache=False))
    readable = [row for row in rows.values() if row["error"] is None]
    assert len(readable) == len(rows) - 1
    assert all(row["warnings"] == 0 for row in readable)
    (cut,) = [row for row in rows.values() if row["error"] is not None]
    assert int(str(cut["sample"])) == max(rows)  # the last record: the line cut off
    assert "the gzip data is cut off or corrupt after" in str(cut["error"])
    assert turnfold.load(path, sample=0).warnings == []


# --- several pretty-printed runs one after another: a run owns the lines up to the next --------


def test_L4_a_warning_inside_a_pretty_printed_run_is_that_run_s(tmp_path: Path) -> None:
    parts = [marked(json.dumps(run(n), indent=2).encode(), n == 1) for n in range(3)]
    path = tmp_path / "runs.json"
    path.write_bytes(b"\n".join(parts) + b"\n")
    second = 1 + parts[0].count(b"\n") + 1  # the line the second run starts on
    warned = turnfold.load(path, sample=1).warnings
    assert [w.reason.split(";")[0] for w in warned] == ["invalid UTF-8 at byte 29"]
    assert warned[0].line == second + 4  # its user message's content, inside the run
    assert turnfold.load(path, sample=0).warnings == []
    assert turnfold.load(path, sample=2).warnings == []


# --- lists a reader kept by hand: capped as a source's --------------------------------------


def dump_lines(transcript: turnfold.Transcript) -> list[str]:
    return transcript.dump().splitlines(keepends=True)


def test_X1_a_dump_s_recorded_warnings_past_the_bound_are_counted(tmp_path: Path) -> None:
    header, *entries = dump_lines(turnfold.load(FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"))
    recorded = [
        json.dumps({"warning": {"reason": "recorded", "line": n, "source": "s.jsonl"}}) + "\n"
        for n in range(1, RUNS + 1)
    ]
    path = tmp_path / "dump.jsonl"
    path.write_text("".join([header, *entries, *recorded]))
    loaded = turnfold.load(path)
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    assert isinstance(loaded.warnings[-1], UnlistedWarnings)
    assert warning_count(loaded.warnings) == RUNS


def test_X1_a_dump_of_many_bad_lines_holds_only_the_listed_warnings(tmp_path: Path) -> None:
    header, *entries = dump_lines(turnfold.load(FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"))
    bad = 40_000
    path = tmp_path / "dump.jsonl"
    path.write_text("".join([header, *entries, "not json\n"]))
    turnfold.load(path)  # the modules a load imports, not measured below
    path.write_text("".join([header, *entries, *(f"not json {n}\n" for n in range(bad))]))
    loaded, peak = with_peak(lambda: turnfold.load(path))
    assert warning_count(loaded.warnings) == bad
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    # A warning object each (the list the reader kept before joining it) held about 9 MB.
    assert peak < 4_000_000


def test_X1_a_workflow_journal_of_many_bad_lines_holds_only_the_listed_warnings(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    shutil.copytree(WORKFLOW, folder)
    session = folder / f"{SESSION}.jsonl"
    (journal,) = (folder / SESSION / "subagents" / "workflows").glob("*/journal.jsonl")
    kept = journal.read_text()
    turnfold.load(session)  # the modules a load imports, not measured below
    bad = [f"not json {n}\n" for n in range(40_000)]

    def peak_with(lines: list[str]) -> tuple[turnfold.Transcript, int]:
        journal.write_text(kept + "".join(lines))
        return with_peak(lambda: turnfold.load(session))

    # As many blank lines, which warn of nothing, are the baseline: what reading the journal
    # holds besides the warnings.
    _, blank = peak_with([" " * (len(line) - 1) + "\n" for line in bad])
    loaded, peak = peak_with(bad)
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    assert warning_count(loaded.warnings) == len(bad)
    assert loaded.warnings[0].reason == "malformed journal line; skipped"
    # A warning object each, listed on the session's source until the load ended: about 5 MB.
    assert peak - blank < 1_500_000


def test_X1_a_file_of_runs_read_run_by_run_lists_no_record_of_it(tmp_path: Path) -> None:
    """Each record of a file of runs is a run, read as a transcript of its own: the file's
    source counts them, where it listed each as unaccounted (one entry a record: millions for a
    large dataset, held to the end of its reading)."""
    from turnfold.formats.source import open_source, warned_records

    path = tmp_path / "runs.jsonl"
    run = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}
    path.write_text(json.dumps(run) + "\n" + "not json\n" + json.dumps(run) + "\n")
    source, opened = open_source(str(path))
    try:
        assert [line for line, _, _ in warned_records(source)] == [1, 2, 3]
    finally:
        if opened is not None:
            opened.close()
    assert source.accounting.unaccounted == []
    assert source.accounting.counts == {"run": {"mapped": 3}}
