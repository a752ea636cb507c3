"""Three reading defects (spec L-4, C-5, C-7, C-2, X-1):

- JSON lines whose first record was cut off at its line's end (its writer died mid-record, then
  went on) were taken for the opening of a pretty-printed value and read whole, as one document:
  a scan did not read such a file in parts, and a file larger than the record limit was refused
  whole by ``load`` and never cut at all. The cut line is now its record's alone.
- A count of warnings past the listed ones (``UnlistedWarnings``) handed to the ``warn`` that a
  Claude Code session gives its Workflow runs counted as one warning.
- ``load(path, sample=ID)`` of an OpenHands eval output that mixes instances with events showed
  every warning of the file, not the instance's own share (with its events', which every load
  of the file shows).

(The fourth, the Copilot CLI's ``permissions-config`` opened by a scan, is one more of its
credential files in tests/test_credentials_copilot_cline.py.)

The runs of the first part are generated from the short Chat Completions trajectory of
``tests/table_runs.py``; the Claude Code session with a Workflow run is the committed one of the
real Claude Code 2.1.332, the OpenHands instance the real one of OpenHands' Multi-SWE-bench
example output (tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus import runs
from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import runs_parts
from turnfold.formats import claude_code_workflows as workflows
from turnfold.formats.source import MAX_LISTED_WARNINGS, UnlistedWarnings, warning_count
from turnfold.model import LoadWarning

pytestmark = pytest.mark.usefixtures("cache_dir")

FIXTURES = Path(__file__).parent / "fixtures"


# --- JSON lines whose first record was cut off --------------------------------------------------


def run(i: int) -> dict[str, Any]:
    return {"task_id": f"t{i}", "messages": trajectory(i)}


#: A record, and where its writer may have died in it: each leaves a line whose JSON runs out
#: at its end (the stdlib reads none of them as a mistake before it).
RECORD = json.dumps(run(9))
CUTS = {
    "after a key": RECORD.index('"messages": ') + len('"messages": '),
    "after a comma": RECORD.index('"messages"'),
    "after an opening bracket": RECORD.index("[") + 1,
    "after a whole value": RECORD.index(', "messages"'),
}


def _cut_file(path: Path, cut: int, runs_after: int = 6) -> Path:
    path.write_text(RECORD[:cut] + "\n" + "".join(json.dumps(run(i)) + "\n"
                                                  for i in range(runs_after)))  # fmt: skip
    return path


@pytest.mark.parametrize("where", list(CUTS))
def test_C5_json_lines_whose_first_record_was_cut_off_are_read_in_parts(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _cut_file(tmp_path / "rollouts.jsonl", CUTS[where])
    whole = turnfold.scan(path, workers=1, cache=False)
    monkeypatch.setattr(runs, "SPAN_BYTES", 200)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size))
    assert parts is not None
    assert len(parts) > 1
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    rows = list(split)
    assert [row["key"] for row in rows] == [f"{path}#{n}" for n in range(7)]
    # The cut line is its own record's row, its error naming the file and the line.
    assert str(rows[0]["error"]).startswith(f"{path}, line 1: ")
    assert [row["error"] for row in rows[1:]] == [None] * 6
    for n in range(1, 7):
        assert split[f"{path}#{n}"] == turnfold.load(run(n - 1))


def test_L4_a_file_of_runs_over_the_record_limit_whose_first_record_was_cut_off_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read whole, the file was one document over the record limit: refused, every run lost."""
    path = _cut_file(tmp_path / "rollouts.jsonl", CUTS["after a key"], runs_after=20)
    longest = max(len(line) for line in path.read_bytes().splitlines(keepends=True))
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(4 * longest))
    assert path.stat().st_size > 4 * longest
    assert turnfold.load(path, sample=5) == turnfold.load(run(4))
    with pytest.raises(turnfold.TranscriptFormatError, match=f"^{path}, line 1: "):
        turnfold.load(path, sample=0)
    monkeypatch.setattr(runs, "SPAN_BYTES", 2 * longest)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    assert runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) is not None
    rows = list(turnfold.scan(path, workers=2, cache=False))
    assert [row["error"] is None for row in rows] == [False] + [True] * 20


def test_L4_a_session_whose_first_line_was_cut_off_warns_of_it_over_the_record_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Codex rollout (the committed one) whose first record stops after a key: the rest is
    read, the cut line a warning naming the file and its line, as under the limit."""
    lines = (FIXTURES / "codex_rollout_schema-coverage.jsonl").read_text().splitlines(True)
    first = lines[0]
    path = tmp_path / "rollout.jsonl"
    path.write_text(first[: first.index('"payload":') + len('"payload":')] + "\n"
                    + "".join(lines[1:]))  # fmt: skip
    unlimited = turnfold.load(path)
    longest = max(len(line.encode()) for line in lines)
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(longest + 1))
    assert path.stat().st_size > longest + 1
    loaded = turnfold.load(path)
    assert loaded == unlimited
    assert loaded.entries
    assert loaded.warnings[0].line == 1
    assert str(path) in str(loaded.warnings[0])
    assert "invalid JSON" in loaded.warnings[0].reason


@pytest.mark.parametrize(
    ("first", "after", "cut"),
    [
        # Pretty-printed: the value goes on, ends, or runs out of what was read.
        ("{", '  "a": 1,\n  "b": [\n    2\n  ]\n}\n', False),
        ("{", '  "a": 1,\n  "b": [\n', False),
        ('{"messages": [', '  {"role": "user", "content": "hi"}\n]}\n{"messages": []}\n', False),
        ("[", "  1,\n  2\n]\n", False),
        # A record cut off, JSON lines after it: the next record breaks the value.
        ('{"task_id": "t9", "messages": ', '{"a": 1}\n{"b": 2}\n', True),
        ('{"task_id": "t9",', '{"a": 1}\n', True),
        ('{"task_id": "t9"', '{"a": 1}\n', True),
        ('{"messages": [', '{"a": 1}\n{"b": 2}\n', True),
        # Nothing after it, or only a record it can take as its value: no mistake seen.
        ('{"task_id": "t9", "messages": ', "", False),
        ('{"task_id": "t9", "messages": ', '{"a": 1}\n', False),
    ],
)
def test_L4_a_cut_record_is_told_from_an_opened_pretty_value(
    first: str, after: str, cut: bool
) -> None:
    from turnfold.formats.source import cut_off_record

    assert cut_off_record(first + "\n", after) is cut


# --- a count handed to a Workflow run's warn ----------------------------------------------------

#: A real session of Claude Code 2.1.332 with a Workflow run and its journal
#: (tests/fixtures/claude-code/v2.1.332_workflow-recipe/README.md).
WORKFLOW = FIXTURES / "claude-code" / "v2.1.332_workflow"
SESSION = "11111111-2222-3333-4444-666666666666"


@pytest.mark.parametrize("bad_lines", [0, MAX_LISTED_WARNINGS + 100])
def test_X1_a_count_of_warnings_a_workflow_run_hands_on_counts_all_it_counts(
    bad_lines: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many warnings the session holds already (its journal's bad lines past the
    listed ones: the list then ends with its count), a count of five handed to the ``warn``
    the session gives its Workflow run is five more warnings, not one."""
    folder = tmp_path / "project"
    shutil.copytree(WORKFLOW, folder)
    session = folder / f"{SESSION}.jsonl"
    (journal,) = (folder / SESSION / "subagents" / "workflows").glob("*/journal.jsonl")
    journal.write_text(journal.read_text() + "".join(f"not json {n}\n" for n in range(bad_lines)))
    read_journal = workflows._read_journal
    handed: list[LoadWarning] = []

    def handing_on(folder: Path | None, warn: Any) -> Any:
        journal = read_journal(folder, warn)
        for warning in handed:
            warn(warning)
        return journal

    monkeypatch.setattr(workflows, "_read_journal", handing_on)
    before = warning_count(turnfold.load(session).warnings)
    handed.append(UnlistedWarnings(reason="", line=3, source=str(journal), count=5))
    after = turnfold.load(session).warnings
    assert warning_count(after) == before + 5
    assert len(after) <= MAX_LISTED_WARNINGS + 1


# --- an OpenHands eval output that mixes instances with events ----------------------------------

REAL_INSTANCE = (
    FIXTURES
    / "harnesses"
    / "openhands"
    / "openhands_output-jsonl_multi-swe-bench_ponyc-4593_trimmed.jsonl"
)
BAD = "{not json"
#: Two events as OpenHands' ``event_to_dict`` writes them, each warned of on its line: a time
#: that is no time, an action no reader knows.
EVENT = json.dumps({"id": 99, "source": "agent", "action": "run", "timestamp": "not a time",
                    "args": {"command": "ls /workspace", "thought": ""}})  # fmt: skip
ODD_EVENT = json.dumps({"id": 98, "source": "agent", "action": "frobnicate", "args": {}})


def instance(n: int) -> str:
    """The real instance as the ``n``-th of an output, on one line."""
    return json.dumps({**json.loads(REAL_INSTANCE.read_text()), "instance_id": f"task-{n}"})


def _lines_warned(path: Path, sample: str | None) -> list[int | None]:
    return [warning.line for warning in turnfold.load(path, sample=sample).warnings]


def test_L4_an_instance_of_an_output_mixed_with_events_shows_its_own_warnings_and_its_events(
    tmp_path: Path,
) -> None:
    output = tmp_path / "output.jsonl"
    lines = [BAD, instance(0), BAD, EVENT, instance(1), BAD, BAD, ODD_EVENT, instance(2), BAD]
    output.write_text("\n".join(lines) + "\n")
    # Every load of the file shows its events, so each is told their lines' warnings (4, 8);
    # of the bad lines, those up to the next instance, as a scan's row of a plain output.
    assert _lines_warned(output, "task-0") == [1, 3, 4, 8]
    assert _lines_warned(output, "task-1") == [4, 6, 7, 8]
    assert _lines_warned(output, "task-2") == [4, 8, 10]
    assert _lines_warned(output, None)[:-1] == [1, 3, 4, 8]  # and the instances not shown
    for sample in ("task-0", "task-1", "task-2"):
        calls = turnfold.load(output, sample=sample).tool_calls()
        assert "ls /workspace" in [call.args.get("command") for call in calls], sample


def test_L4_events_before_the_first_instance_are_every_instance_s(tmp_path: Path) -> None:
    output = tmp_path / "output.jsonl"
    lines = [BAD, EVENT, instance(0), BAD, ODD_EVENT, instance(1), BAD, instance(2)]
    output.write_text("\n".join(lines) + "\n")
    assert _lines_warned(output, "task-0") == [1, 2, 4, 5]
    assert _lines_warned(output, "task-1") == [2, 5, 7]
    assert _lines_warned(output, "task-2") == [2, 5]


def test_L4_a_file_of_events_alone_is_told_every_warning_in_order(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join([BAD, EVENT, BAD, ODD_EVENT, BAD]) + "\n")
    assert _lines_warned(events, None) == [1, 2, 3, 4, 5]
