"""A file of several pretty-printed runs, one after another (``json.dump(run, f, indent=2)``
written again and again), is scanned as ``load(path, sample=n)`` reads it: one row per run, the
same row as the run saved alone, keyed ``path#n`` to open that run (spec C-1, C-2, C-7). Real
JSON lines keep their line-by-line reading in parts.

The runs are generated from the short Chat Completions trajectory of ``tests/table_runs.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import runs_parts

pytestmark = pytest.mark.usefixtures("cache_dir")

#: The columns that name where a row comes from, not what its run holds.
WHERE = ("key", "path", "sample")


def run(i: int) -> dict[str, Any]:
    return {"task_id": f"t{i}", "messages": trajectory(i)}


def pretty(i: int) -> str:
    return json.dumps(run(i), indent=2) + "\n"


def what(row: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in row.items() if name not in WHERE}


def test_C1_pretty_printed_runs_one_after_another_are_the_rows_of_each_run_saved_alone(
    tmp_path: Path,
) -> None:
    together = tmp_path / "together"
    alone = tmp_path / "alone"
    together.mkdir()
    alone.mkdir()
    path = together / "runs.json"
    path.write_text("".join(pretty(i) for i in range(3)))
    for i in range(3):
        (alone / f"run{i}.json").write_text(pretty(i))

    corpus = turnfold.scan(together, workers=1, cache=False)
    singles = turnfold.scan(alone, workers=1, cache=False)
    assert corpus.keys == [f"{path}#{n}" for n in range(3)]
    assert [row["sample"] for row in corpus] == ["0", "1", "2"]
    assert [row["error"] for row in corpus] == [None] * 3
    assert [what(row) for row in corpus] == [what(row) for row in singles]
    for n, key in enumerate(corpus.keys):
        opened = corpus[key]
        assert opened == turnfold.load(path, sample=n)
        assert opened == turnfold.load(run(n))
        assert opened.metadata["task_id"] == f"t{n}"
    assert corpus.tool_calls().num_rows == 3


def test_C5_pretty_printed_runs_are_read_whole_by_one_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file too large for one worker is cut at its lines' ends only when each line is a
    record: a pretty-printed run cut in two would be two broken halves."""
    from turnfold.corpus import runs

    path = tmp_path / "runs.json"
    path.write_text("".join(pretty(i) for i in range(3)))
    whole = turnfold.scan(path, workers=1, cache=False)
    monkeypatch.setattr(runs, "SPAN_BYTES", 200)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    size = path.stat().st_size
    assert runs_parts(Item(key=str(path), path=str(path), size=size)) is None
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert [row["error"] for row in split] == [None] * 3


def test_C5_json_lines_keep_their_reading_in_parts_whatever_their_first_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One run a line is cut in parts, also when the first line is a record no JSON reads (it
    costs that line's row alone) or holds two objects glued."""
    from turnfold.corpus import runs

    monkeypatch.setattr(runs, "SPAN_BYTES", 200)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    lines = "".join(json.dumps(run(i)) + "\n" for i in range(6))
    glued = json.dumps(run(6)) + json.dumps(run(7)) + "\n"
    for name, first in (("plain", ""), ("bad", "{not json}\n"), ("glued", glued)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(first + lines)
        size = path.stat().st_size
        assert runs_parts(Item(key=str(path), path=str(path), size=size)) is not None, name
        rows = list(turnfold.scan(path, workers=1, cache=False))
        assert [row["error"] is None for row in rows][-6:] == [True] * 6, name


def test_C7_a_cut_off_last_pretty_printed_run_is_a_row_with_its_error(tmp_path: Path) -> None:
    text = "".join(pretty(i) for i in range(3))
    path = tmp_path / "runs.json"
    path.write_text(text[:-40])  # the third run stops inside its last message
    rows = list(turnfold.scan(path, workers=1, cache=False))
    assert [row["key"] for row in rows] == [f"{path}#{n}" for n in range(3)]
    assert [row["error"] is None for row in rows] == [True, True, False]
    third = 1 + text.count("\n", 0, text.index(pretty(2)))  # the line the third run opens on
    assert f"line {third}:" in str(rows[2]["error"])
    with pytest.raises(turnfold.TranscriptFormatError, match=f"line {third}:"):
        turnfold.load(path, sample=2)


def test_C2_a_warning_inside_a_pretty_printed_run_counts_in_that_run_s_row(
    tmp_path: Path,
) -> None:
    parts = [pretty(i).encode() for i in range(3)]
    parts[1] = parts[1].replace(b"Task 1", b"Task \xff1")  # a byte that is never UTF-8
    path = tmp_path / "runs.json"
    path.write_bytes(b"".join(parts))
    rows = list(turnfold.scan(path, workers=1, cache=False))
    assert [row["warnings"] for row in rows] == [0, 1, 0]
    assert [len(turnfold.load(path, sample=n).warnings) for n in range(3)] == [0, 1, 0]
