"""Feather V1 files as tables of runs (C-1): what ``pyarrow.feather.write_feather(table, path,
version=1)`` writes (and ``DataFrame.to_feather`` before pandas 1.1) scans and loads as the
same table in Parquet or Feather V2 does, memory-mapped, its rows views of the map; V1 holds
no nested type, so its messages are a column of JSON text. A file whose metadata places an
array past its end is refused with the file named: pyarrow's V1 reader would read past the
map (and crash the process)."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus import engine as engine_module
from turnfold.corpus import scan
from turnfold.formats import tables

pytestmark = pytest.mark.usefixtures("cache_dir")


def _table(count: int) -> pa.Table:
    """Runs as a V1 file holds them: their messages as JSON text."""
    return pa.table({
        "task_id": [f"t{i}" for i in range(count)],
        "reward": [float(i % 2) for i in range(count)],
        "messages": [json.dumps(trajectory(i)) for i in range(count)],
    })  # fmt: skip


def _write_v1(path: Path, table: pa.Table) -> Path:
    with warnings.catch_warnings():  # pyarrow 25 deprecates writing V1
        warnings.simplefilter("ignore", DeprecationWarning)
        feather.write_feather(table, path, version=1)
    assert path.read_bytes()[:4] == b"FEA1"
    return path


def test_C1_a_feather_v1_file_scans_as_the_same_table_in_parquet(tmp_path: Path) -> None:
    """It was "not a readable Arrow file, neither Arrow's IPC file nor stream format"."""
    path = _write_v1(tmp_path / "rollouts.feather", _table(70))
    pq.write_table(_table(70), tmp_path / "rollouts.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pyarrow's deprecation of V1 is not the reader's to say
        corpus = scan(path, workers=1)
    assert corpus.keys == [f"{path}#{i}" for i in range(70)]
    assert (corpus.errors, corpus.skipped) == (0, 0)
    same = scan(tmp_path / "rollouts.parquet", workers=1).to_arrow().drop_columns(["key", "path"])
    assert corpus.to_arrow().drop_columns(["key", "path"]).equals(same)
    assert corpus.to_arrow().column("task_id").to_pylist()[:3] == ["t0", "t1", "t2"]
    assert corpus.tool_calls().column("name").to_pylist() == ["bash"] * 70
    run = corpus[f"{path}#69"]
    assert run.entries == turnfold.load(trajectory(69)).entries
    (call,) = run.tool_calls()
    assert (call.args, call.result.text if call.result else None) == (
        {"command": "ls 69"}, "file_69.py")  # fmt: skip
    assert (run.metadata["task_id"], run.metadata["score"]) == ("t69", 1.0)
    assert turnfold.load(path, sample=33).metadata["task_id"] == "t33"
    with pytest.raises(turnfold.TranscriptFormatError, match=r"an Arrow file of runs"):
        turnfold.load(path)
    unnamed = tmp_path / "rollouts.bin"  # known by its first bytes, not its name
    unnamed.write_bytes(path.read_bytes())
    assert turnfold.load(unnamed, sample=5).entries == turnfold.load(trajectory(5)).entries
    assert [h.key for h in corpus.search("Done with task 42.")] == [f"{path}#42"]


def test_C5_a_feather_v1_file_is_read_in_parts_by_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its one batch is cut anywhere (a view of it): any range of rows is those rows, and a
    scan in parts is the scan of the file whole."""
    path = _write_v1(tmp_path / "rollouts.feather", _table(90))
    whole = scan(path, workers=1, cache=False)
    monkeypatch.setattr(tables, "BATCH_ROWS", 7)
    column = _table(90).column("messages")
    for start, end in [(0, 90), (5, 6), (13, 77), (89, 90)]:
        got = list(tables.cells(str(path), "messages", tables.Rows(start, end)))
        assert got == column.slice(start, end - start).to_pylist(), (start, end)
    assert tables.row_count(str(path)) == 90
    assert tables.other_cells(str(path), "messages", 41) == {"task_id": "t41", "reward": 1.0}
    monkeypatch.setattr(tables, "PART_BYTES", 1000)
    monkeypatch.setattr(tables, "PART_ROWS", 8)
    parts = tables.parts(str(path), "messages", 2)
    assert parts is not None
    cuts = [part for part, _ in parts]
    assert len(cuts) > 4
    assert (cuts[0].start, cuts[-1].end) == (0, 90)
    assert all(a.end == b.start for a, b in itertools.pairwise(cuts))
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    split = scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())


def test_C5_a_feather_v1_file_is_read_from_the_mapped_file_not_into_memory(
    tmp_path: Path,
) -> None:
    """20 MB of runs: their text is a view of the mapped file, converted a few rows at a time."""
    text = "x" * 20_000
    rows = [json.dumps([{"role": "user", "content": f"{i} {text}"}]) for i in range(1000)]
    path = _write_v1(tmp_path / "big.feather", pa.table({"messages": rows}))
    before = pa.total_allocated_bytes()
    most = 0
    for i, cell in enumerate(tables.cells(str(path), "messages")):
        assert cell.startswith(f'[{{"role": "user", "content": "{i} ')
        most = max(most, pa.total_allocated_bytes() - before)
    assert most < 2 * 1024 * 1024


def _array_field(path: Path, column: int, field: int) -> int:
    """Where in the V1 file at ``path`` the ``field`` of its ``column``-th column's values is
    (``tables._TOTAL_BYTES``, ``tables._LENGTH``…), read as the reader reads it."""
    data = path.read_bytes()
    end = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    meta = tables._Flat(data[end:])
    columns = meta.tables(meta.table(meta.u32(0)), tables._COLUMNS)
    array = meta.child(columns[column], tables._VALUES)
    slot = meta._slot(array, field)
    assert slot is not None
    return end + slot


@pytest.mark.parametrize(("field", "value"), [
    (tables._OFFSET, 1 << 40),  # its bytes past the end of the file
    (tables._TOTAL_BYTES, 1 << 40),
    (tables._LENGTH, 1 << 40),  # more values than its bytes hold
])  # fmt: skip
def test_X1_a_feather_v1_file_whose_metadata_points_past_it_is_refused(
    tmp_path: Path, field: int, value: int
) -> None:
    """pyarrow's V1 reader takes the metadata's places as they are: read, such a file crashed
    the process (a bus error or a segfault); it is "not a readable Arrow file", named."""
    path = _write_v1(tmp_path / "hostile.feather", _table(3))
    data = bytearray(path.read_bytes())
    at = _array_field(path, 2, field)
    data[at : at + 8] = value.to_bytes(8, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"hostile\.feather: not a readable Arrow file, .*"
                       r"Feather V1 \(an array of"):  # fmt: skip
        turnfold.load(path, sample=0)
    with pytest.raises(ValueError, match=r"hostile\.feather: not a readable Arrow file"):
        scan(path, workers=1)


def test_X1_a_feather_v1_file_whose_text_offsets_point_past_its_values_is_refused(
    tmp_path: Path,
) -> None:
    """Its arrays lie within the file, and its last text ends within its values (which
    pyarrow checks as it reads it), but its first text ends past them: converted, it would be
    read from past the map; the rows holding it are refused, named."""
    path = _write_v1(tmp_path / "hostile.feather", _table(3))
    data = bytearray(path.read_bytes())
    data_at = int.from_bytes(data[_array_field(path, 2, tables._OFFSET) :][:8], "little")
    first = data_at + 4  # the end of the first text (no nulls: the offsets come first)
    data[first : first + 4] = (1 << 30).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"hostile\.feather: not a readable Arrow file, its "
                       r"values are broken"):  # fmt: skip
        list(tables.cells(str(path), "messages"))
