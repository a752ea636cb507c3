"""Each instance of an OpenHands eval ``output.jsonl`` counts its own warnings (spec C-2, C-7,
L-4): an instance's lines are its own up to the next instance's (a bad line, an id met again,
invalid UTF-8), those before the first instance are the first's, and what concerns the file
with no line (its compressed data cut off) is the last instance's; one instance's bad line no
longer counts on every row. A row counts what ``load(path, sample=ID)`` shows, and a file read
in parts by several workers gives the rows of the file read whole.

The outputs are generated from the real instance ``ponylang__ponyc-4593`` of OpenHands'
Multi-SWE-bench example output (tests/fixtures/SOURCES.md), its ``instance_id`` changed.
"""

from __future__ import annotations

import gzip
import importlib
import json
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus import engine as engine_module
from turnfold.corpus import runs, scan
from turnfold.corpus.discover import Item
from turnfold.formats.source import warning_count

summarize_module = importlib.import_module("turnfold.corpus.summarize")

pytestmark = pytest.mark.usefixtures("cache_dir")

REAL = (
    Path(__file__).parent
    / "fixtures"
    / "harnesses"
    / "openhands"
    / "openhands_output-jsonl_multi-swe-bench_ponyc-4593_trimmed.jsonl"
)
BAD = "{not json"


def instance(n: int) -> str:
    """The real instance as the ``n``-th of an output, on one line."""
    return json.dumps({**json.loads(REAL.read_text()), "instance_id": f"task-{n}"})


def told(path: Path, **options: object) -> dict[str, int]:
    """Each instance's warnings as the scan's rows count them, checked against its load."""
    counts = {}
    for row in scan(path, cache=False, **options):  # type: ignore[arg-type]
        assert row["error"] is None, row["error"]
        shown = turnfold.load(row["path"], sample=row["sample"])
        assert row["warnings"] == warning_count(shown.warnings), row["key"]
        counts[str(row["sample"])] = row["warnings"]
    return counts


def test_C2_a_bad_line_counts_on_the_row_of_the_instance_before_it(tmp_path: Path) -> None:
    output = tmp_path / "output.jsonl"
    lines = [instance(0), BAD, instance(1), BAD, BAD, instance(2)]
    output.write_text("\n".join(lines) + "\n")
    assert told(output, workers=1) == {"task-0": 1, "task-1": 2, "task-2": 0}
    # The load of one instance lists its own lines' warnings, no other instance's.
    second = turnfold.load(output, sample="task-1")
    assert [w.line for w in second.warnings] == [4, 5]
    assert turnfold.load(output, sample="task-2").warnings == []


def test_C2_lines_before_the_first_instance_are_its_own_and_an_id_met_again_the_one_before(
    tmp_path: Path,
) -> None:
    output = tmp_path / "output.jsonl"
    lines = [BAD, instance(0), instance(1), instance(0), instance(2)]
    output.write_text("\n".join(lines) + "\n")
    assert told(output, workers=1) == {"task-0": 1, "task-1": 1, "task-2": 0}
    (again,) = turnfold.load(output, sample="task-1").warnings
    assert again.line == 4
    assert "instance task-0 again (first on line 2)" in again.reason


def test_L4_invalid_utf8_counts_on_its_own_instance_s_row(tmp_path: Path) -> None:
    output = tmp_path / "output.jsonl"
    lines = [instance(n).encode() for n in range(3)]
    lines[1] = lines[1].replace(b"ponyc", b"pony\xffc", 1)  # a byte that is never UTF-8
    output.write_bytes(b"\n".join(lines) + b"\n")
    assert told(output, workers=1) == {"task-0": 0, "task-1": 1, "task-2": 0}
    (said,) = turnfold.load(output, sample="task-1").warnings
    assert (said.line, said.reason.startswith("invalid UTF-8")) == (2, True)


def test_L4_a_cut_off_compressed_output_warns_its_last_instance(tmp_path: Path) -> None:
    whole = gzip.compress("".join(instance(n) + "\n" for n in range(4)).encode())
    output = tmp_path / "output.jsonl.gz"
    output.write_bytes(whole[:-30])  # the stream cut inside its last instance
    counts = told(output, workers=1)
    assert list(counts) == ["task-0", "task-1", "task-2"]
    # The cut last line, and the cut data (no line), are the last instance read's.
    assert counts["task-0"] == counts["task-1"] == 0
    assert counts["task-2"] >= 2
    reasons = [w.reason for w in turnfold.load(output, sample="task-2").warnings]
    assert any("cut off" in reason for reason in reasons)


def test_C5_parts_read_by_every_worker_count_as_the_file_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad lines before the first instance, at the start of a part and in a part of their
    own, and an instance met again at the start of a later part: each row counts what the file
    read whole tells it, whatever part its warnings were read in."""
    text = [BAD, instance(0), instance(1), BAD, BAD, instance(2), instance(0), BAD, instance(3)]
    text += [instance(n) for n in range(4, 9)] + [instance(5), BAD]
    output = tmp_path / "output.jsonl"
    output.write_text("\n".join(text) + "\n")
    expected = {f"task-{n}": 0 for n in range(9)}
    expected |= {"task-0": 1, "task-1": 2, "task-2": 2, "task-8": 2}
    whole = scan(output, workers=1, cache=False)
    assert told(output, workers=1) == expected
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)  # the parts go to the workers
    for span in (1, 40, len(text[1]) + 5, 3 * len(text[1])):  # each line a part, and across
        monkeypatch.setattr(runs, "SPAN_BYTES", span)
        item = Item(key=str(output), path=str(output), size=output.stat().st_size)
        parts = summarize_module.runs_parts(item)
        assert parts is not None
        assert len(parts) > 1
        split = scan(output, workers=2, cache=False)
        assert split.to_arrow().equals(whole.to_arrow()), span


def test_C7_an_instance_that_breaks_the_read_leaves_the_one_before_a_row_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each instance is yielded once the next is met: when reading the next one fails, the
    instance before it is still a row, with the bad line after it, and only once."""
    from turnfold.formats.harnesses import openhands

    output = tmp_path / "output.jsonl"
    output.write_text("\n".join([instance(0), BAD, instance(1), instance(2)]) + "\n")
    real = openhands._instance

    def breaking(reader: object, record: dict[str, object], line: int) -> None:
        if record["instance_id"] == "task-1":
            raise OSError("the disk went away")
        real(reader, record, line)  # type: ignore[arg-type]

    monkeypatch.setattr(openhands, "_instance", breaking)
    rows = list(scan(output, workers=1, cache=False))
    assert [(row["sample"], row["warnings"]) for row in rows] == [("task-0", 1), (None, None)]
    assert "the disk went away" in str(rows[1]["error"])
