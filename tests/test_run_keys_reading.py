"""Three leftovers of the keys of a file of runs (C-1, C-7, W-6).

1. The command line's hint for a file of runs named ``FILE#0`` whenever the file's first record
   named no run: for a Batch API file whose first line lost its ``custom_id`` (its row is an
   error, no run) and for a dataset whose first record holds no run, the printed command
   failed as written. It now names the first record that holds a run, keyed as the scan keys
   it (its ``custom_id``; its place, spelt ``@n`` where a run is named ``n``).
2. A file some of whose first records hold runs, too few for a file of runs, was skipped and
   counted in ``corpus.skipped`` without a word. The scan now says which file and why.
3. ``corpus[key]`` for a run keyed by its place read the file to its end (a later run might be
   named so): the corpus knows the file's keys, so it reads up to that place alone, while
   ``load(path, sample=n)``, which does not, still reads to the end.

The Batch API lines are those of the fixtures ``tests/fixtures/datasets/openai_batch_recipe.py``
made with the types of openai 3.57.0 (``tests/test_run_keys.py``'s ``_asked``).
"""

from __future__ import annotations

import gzip
import json
import re
import shlex
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
import turnfold.formats
from tests.table_runs import trajectory
from tests.test_run_keys import CLASHING, _asked, _clashing, _mostly_rows, _said, _write
from turnfold.cli import main

pytestmark = pytest.mark.usefixtures("cache_dir")


def _row(i: int) -> dict[str, Any]:
    """A dataset's row (no name): the ``i``-th run, its prompt ``Task i: list the files``."""
    return {"messages": trajectory(i)}


# --- 1. the hint names a key that opens a run ---------------------------------------------------


#: Files of runs whose first record holds no run, and the key the hint must name: its first
#: run's, as the scan keys it.
FIRST_RECORD_NO_RUN: dict[str, tuple[list[Any], str, str]] = {
    "batch-first-line-without-custom_id": (
        [_asked(None, "A line that lost its custom_id."),
         *(_asked(f"task-{i}", f"Question {i}?") for i in range(1, 5))],
        "task-1", "Question 1?",
    ),
    "dataset-first-record-no-run": (
        [{"note": "exported by hand"}, *(_row(i) for i in range(1, 5))],
        "1", "Task 1: list the files",
    ),
    "dataset-first-run-at-a-place-a-run-is-named": (
        [{"note": "exported by hand"}, _row(1), _asked("1", "Question named 1?"),
         *(_row(i) for i in range(3, 6))],
        "@1", "Task 1: list the files",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FIRST_RECORD_NO_RUN))
def test_W6_the_hint_of_a_file_whose_first_record_holds_no_run_names_a_key_that_opens_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    records, sample, said = FIRST_RECORD_NO_RUN[case]
    path = _write(tmp_path / "runs.jsonl", records)
    corpus = turnfold.scan(path, workers=1, cache=False)
    assert corpus.rows[0]["error"] is not None  # the first record is no run
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    command = re.search(r"; to show one: (turnfold show .+?) \(its first run; (.+?), as a", err)
    assert command is not None, err
    key = f"{path}#{sample}"
    assert shlex.split(command.group(1)) == ["turnfold", "show", key]
    assert key in corpus  # as the scan keys it
    shape = "FILE#<custom_id> names any" if case.startswith("batch") else "FILE#N names the n-th"
    assert command.group(2).startswith(shape)
    assert main(["render", str(path)]) == 2
    assert f"or for one: turnfold render {shlex.quote(key)} (its first run" in (
        capsys.readouterr().err
    )
    # The command runs as written, and shows that run.
    assert main(["show", key, "--width", "100"]) == 0
    assert said in capsys.readouterr().out


# --- 2. a file of too few runs is skipped, and said -------------------------------------------


def test_C7_a_file_some_of_whose_records_are_runs_is_skipped_with_a_warning_saying_why(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    log = _write(folder / "log.jsonl", [
        {"event": "start", "at": 1}, {"event": "tick", "at": 2}, {"event": "tick", "at": 3},
        _asked("task-1", "Question 1?"), {"event": "stop", "at": 4},
    ])  # fmt: skip
    _write(folder / "events.jsonl", [{"event": "start", "at": 1}, {"event": "stop", "at": 2}])
    runs = _write(folder / "runs.jsonl", [_row(i) for i in range(3)])
    with pytest.warns(UserWarning, match="whose records are not mostly runs") as caught:
        corpus = turnfold.scan(folder, workers=1, cache=False)
    assert [row["key"] for row in corpus.rows] == [f"{runs}#{i}" for i in range(3)]
    assert corpus.skipped == 2
    assert repr(corpus) == "<Corpus: 3 rows, 0 errors, 2 skipped>"
    (said,) = [str(w.message) for w in caught if "skipped" in str(w.message)]
    # The file of some runs is named with why; the file of none is no such file: only counted.
    assert f"{log}: 1 of its first 5 records holds a run (1 under 'custom_id')" in said
    assert "events.jsonl" not in said
    assert said.startswith("skipped 1 file(s) whose records are not mostly runs")


def test_C7_a_file_of_runs_scanned_says_nothing_of_skipped_files(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    _write(folder / "runs.jsonl", [_row(i) for i in range(3)])
    _write(folder / "events.jsonl", [{"event": "start", "at": 1}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corpus = turnfold.scan(folder, workers=1, cache=False)
    assert (len(corpus), corpus.skipped) == (3, 1)


# --- 3. corpus[key] reads a file of runs up to the run ------------------------------------------


class _Counted:
    """``turnfold.formats.warned_records``, counting the records a load of one run reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.records = 0
        real = turnfold.formats.warned_records

        def counted(source: Any) -> Iterator[Any]:
            for record in real(source):
                self.records += 1
                yield record

        monkeypatch.setattr(turnfold.formats, "warned_records", counted)

    def of(self, read: Any) -> tuple[Any, int]:
        """What ``read()`` returns, and how many records it read."""
        self.records = 0
        return read(), self.records


RECORDS = 40


@pytest.mark.parametrize("compressed", [False, True], ids=["jsonl", "jsonl.gz"])
def test_C2_corpus_getitem_reads_a_file_of_unnamed_runs_up_to_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    path = _write(tmp_path / "runs.jsonl", [_row(i) for i in range(RECORDS)])
    if compressed:
        packed = tmp_path / "runs.jsonl.gz"
        with path.open("rb") as raw, gzip.open(packed, "wb") as out:
            shutil.copyfileobj(raw, out)
        path.unlink()
        path = packed
    corpus = turnfold.scan(path, workers=1, cache=False)
    counted = _Counted(monkeypatch)
    for place in (0, 3, RECORDS - 1):
        run, read = counted.of(lambda p=place: corpus[f"{path}#{p}"])
        assert _said(run) == f"Task {place}: list the files"
        assert read == place + 1, place
        # The same run as load() reads, which knows no keys and reads the file to its end.
        loaded, all_read = counted.of(lambda p=place: turnfold.load(path, sample=p))
        assert all_read == RECORDS
        assert run.dump() == loaded.dump()


def test_C2_corpus_getitem_reads_a_file_whose_names_clash_up_to_each_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _clashing(tmp_path)
    corpus = turnfold.scan(path, workers=1, cache=False)
    counted = _Counted(monkeypatch)
    for place, (key, said) in enumerate(CLASHING):
        if said is None:  # the line of no run: its error, as before
            with pytest.raises(turnfold.formats.TranscriptFormatError, match=", line 4: "):
                corpus[f"{path}#{key}"]
            continue
        run, read = counted.of(lambda k=key: corpus[f"{path}#{k}"])
        assert _said(run) == said, key
        assert read == place + 1, key  # a name is met where it is, a place is final too
        assert run.dump() == turnfold.load(path, sample=key).dump()


def test_C2_corpus_getitem_of_a_mostly_unnamed_file_opens_each_run_its_key_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, keys = _mostly_rows(tmp_path)
    corpus = turnfold.scan(path, workers=1, cache=False)
    counted = _Counted(monkeypatch)
    for place, key in enumerate(keys):
        run, read = counted.of(lambda k=key: corpus[f"{path}#{k}"])
        assert read == place + 1, key
        assert run.dump() == turnfold.load(path, sample=key).dump(), key


def test_C2_corpus_getitem_of_a_file_changed_since_the_scan_reads_it_as_load_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run named ``3`` appended since the scan: ``#3`` names it now, as ``load`` reads it."""
    path = _write(tmp_path / "runs.jsonl", [_row(i) for i in range(RECORDS)])
    corpus = turnfold.scan(path, workers=1, cache=False)
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(_asked("3", "Question named 3?")) + "\n")
    counted = _Counted(monkeypatch)
    run, read = counted.of(lambda: corpus[f"{path}#3"])
    assert read == RECORDS + 1
    assert _said(run) == "Question named 3?"
