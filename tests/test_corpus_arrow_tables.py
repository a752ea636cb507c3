"""Hugging Face datasets saved with ``save_to_disk`` and Arrow IPC files as tables of runs (C-1):
a ``Dataset``'s folder (its ``.arrow`` shards, ``state.json``, ``dataset_info.json``) scans as
one table, a row per run keyed ``shard#n``, its json files neither rows nor skipped; a
``DatasetDict``'s folder as every split's runs; pyarrow's IPC files and streams (``new_file``,
``new_stream``, Feather) as Parquet files do, read a record batch at a time from the mapped file.

The two saved folders were written by ``datasets`` 5.2.0 from the two real ``vf-eval`` rows of
``verifiers_results_math-python_gpt-5-nano_two-rows.jsonl``::

    ds = datasets.Dataset.from_list([json.loads(line) for line in open(rows)])
    ds.save_to_disk("verifiers_math-python_two-rows_save-to-disk")
    datasets.DatasetDict(train=ds.select([0]), test=ds.select([1])).save_to_disk(
        "verifiers_math-python_two-rows_save-to-disk_dict")
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus import engine as engine_module
from turnfold.corpus import scan
from turnfold.formats import tables

FIXTURES = Path(__file__).parent / "fixtures"
DATASETS = FIXTURES / "datasets"
ROWS = DATASETS / "verifiers_results_math-python_gpt-5-nano_two-rows.jsonl"
SAVED = DATASETS / "verifiers_math-python_two-rows_save-to-disk"
SAVED_DICT = DATASETS / "verifiers_math-python_two-rows_save-to-disk_dict"
SHARD = "data-00000-of-00001.arrow"
SESSION = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
#: What a row says of its run, beside where it is.
SAID = ("sample", "format", "title", "turns", "tool_calls", "failed_tools", "score",
        "duration_s", "error")  # fmt: skip


pytestmark = pytest.mark.usefixtures("cache_dir")


def _said(corpus: Any) -> list[dict[str, Any]]:
    return [{name: row[name] for name in SAID} for row in corpus.rows]


def _table(count: int) -> pa.Table:
    return pa.table({
        "task_id": [f"t{i}" for i in range(count)],
        "reward": [float(i % 2) for i in range(count)],
        "messages": [trajectory(i) for i in range(count)],
    })  # fmt: skip


def _write_ipc(path: Path, table: pa.Table, stream: bool, batch_rows: int) -> Path:
    """``table`` as pyarrow writes an IPC stream (``new_stream``) or file (``new_file``)."""
    new = pa.ipc.new_stream if stream else pa.ipc.new_file
    with new(str(path), table.schema) as writer:
        writer.write_table(table, max_chunksize=batch_rows)
    return path


def _copy(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / folder.name
    shutil.copytree(folder, target)
    return target


# --- a dataset saved with save_to_disk ----------------------------------------------------------


def test_C1_a_dataset_saved_to_disk_scans_as_one_table_of_its_runs() -> None:
    """Its folder scanned as no runs and three skipped files; it is one table: a row per run,
    keyed by its shard and row, the same runs as the JSON lines it was made of, its other
    columns the rows' metadata, and neither ``state.json`` nor ``dataset_info.json`` skipped."""
    corpus = scan(SAVED, workers=1)
    shard = f"{SAVED / SHARD}"
    assert corpus.keys == [f"{shard}#0", f"{shard}#1"]
    assert (corpus.errors, corpus.skipped) == (0, 0)
    assert [row["path"] for row in corpus] == [shard, shard]
    assert _said(corpus) == _said(scan(ROWS, workers=1))
    first, second = _said(corpus)
    assert (first["format"], first["tool_calls"], first["score"]) == ("openai", 1, 1.0)
    assert first["title"].startswith(r"Let \[f(x) = \left\{")
    assert second["title"].startswith("A rectangular band formation")
    assert round(second["duration_s"], 3) == 25.290  # its generation_ms
    table = corpus.to_arrow()
    assert table.column("answer").to_pylist() == ["0", "98"]
    assert table.column("reward").to_pylist() == [1.0, 1.0]
    calls = corpus.tool_calls().to_pylist()
    assert [(c["key"], c["name"], c["call_id"]) for c in calls] == [
        (f"{shard}#0", "python", "call_M7VDvRdmPgW8MpbszWdt25eL"),
        (f"{shard}#1", "python", calls[1]["call_id"]),
    ]  # fmt: skip
    run = corpus[f"{shard}#1"]
    assert run.entries == turnfold.load(ROWS, sample=1).entries
    assert run.metadata["answer"] == "98"
    assert run.metadata["system"].startswith("Use python for all calculations.")
    (call,) = run.tool_calls()
    assert call.name == "python"
    assert call.args["code"].startswith("# compute possible N values\nsolutions = []\n")
    assert call.result is not None
    assert (
        call.result.text == "Out[1]: [(1, 6, 8), (2, 8, 18), (3, 10, 32), (4, 12, 50), "
        "(5, 14, 72), (6, 16, 98)]"
    )
    hits = corpus.search("rectangular band formation")
    assert [hit.key for hit in hits] == [f"{shard}#1"]


def test_C4_an_unchanged_saved_dataset_is_read_from_the_index(tmp_path: Path) -> None:
    folder = _copy(SAVED, tmp_path)
    scanned = scan(folder, workers=1)
    again = scan(folder, workers=1)
    assert (scanned.read, again.read, again.cached) == (1, 0, 1)
    assert again.to_arrow().equals(scanned.to_arrow())


def test_L4_load_of_a_saved_dataset_says_what_it_is_and_reads_a_row(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``load(folder, sample=n)`` is the dataset's ``n``-th row (as ``load_from_disk(folder)[n]``),
    a shard's ``sample=n`` its own, as a scan keys it (``turnfold show shard#n``)."""
    from turnfold.cli import main

    with pytest.raises(turnfold.TranscriptFormatError, match=r"a dataset saved by datasets .*scan"):
        turnfold.load(SAVED)
    run = turnfold.load(SAVED, sample=1)
    assert run.entries == turnfold.load(ROWS, sample=1).entries
    assert (run.metadata["answer"], run.metadata["score"]) == ("98", 1.0)
    assert turnfold.load(SAVED / SHARD, sample=1) == scan(SAVED, workers=1)[f"{SAVED / SHARD}#1"]
    with pytest.raises(ValueError, match=r"holds 2 runs: no sample=2 \(they are 0 to 1\)"):
        turnfold.load(SAVED, sample=2)
    with pytest.raises(turnfold.TranscriptFormatError, match=r"an Arrow file of runs .*scan"):
        turnfold.load(SAVED / SHARD)
    assert main(["show", f"{SAVED / SHARD}#0", "--expand"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("16.2s · 1 turn · 1 tool\nscore 1\n")
    assert "Therefore a + b = -3 + 3 = 0." in shown


def test_C1_a_dataset_dict_saved_to_disk_scans_every_split_in_its_order() -> None:
    """A ``DatasetDict`` holds a dataset per split, each in its folder: a scan of its folder
    reads every split's runs, keyed by their shards (so by their split), in the order the
    dict lists them (train before test); ``dataset_dict.json`` is no skipped file. ``load``
    of the folder names the splits, a split's folder reads as a dataset."""
    corpus = scan(SAVED_DICT, workers=1)
    train, test = SAVED_DICT / "train" / SHARD, SAVED_DICT / "test" / SHARD
    assert corpus.keys == [f"{train}#0", f"{test}#0"]
    assert (corpus.errors, corpus.skipped) == (0, 0)
    both = _said(scan(ROWS, workers=1))
    assert _said(corpus) == [both[0], {**both[1], "sample": "0"}]
    assert corpus.to_arrow().column("answer").to_pylist() == ["0", "98"]
    with pytest.raises(
        turnfold.TranscriptFormatError, match=r"a dataset per split \(train, test\)"
    ):
        turnfold.load(SAVED_DICT, sample=0)
    assert turnfold.load(SAVED_DICT / "test", sample=0).metadata["answer"] == "98"
    assert [row["key"] for row in scan(SAVED_DICT / "test", workers=1)] == [f"{test}#0"]


def test_C7_a_split_a_dataset_dict_names_that_is_gone_is_said(tmp_path: Path) -> None:
    folder = _copy(SAVED_DICT, tmp_path)
    shutil.rmtree(folder / "test")
    with pytest.warns(UserWarning, match=r"dataset_dict\.json names splits that have no folder "
                      r"here \('test'\): their runs are not read"):  # fmt: skip
        corpus = scan(folder, workers=1)
    assert corpus.keys == [f"{folder / 'train' / SHARD}#0"]


def test_C1_a_dataset_saved_in_shards_is_read_shard_after_shard(tmp_path: Path) -> None:
    """``save_to_disk(folder, num_shards=2)``: each row keyed by its shard and its row there;
    ``load(folder, sample=n)`` is the dataset's ``n``-th row, as ``load_from_disk`` has it."""
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "rollouts"
    datasets.Dataset(_table(5)).save_to_disk(str(folder), num_shards=2)
    first, second = folder / "data-00000-of-00002.arrow", folder / "data-00001-of-00002.arrow"
    corpus = scan(folder, workers=1)
    assert corpus.keys == [f"{first}#0", f"{first}#1", f"{first}#2", f"{second}#0",
                           f"{second}#1"]  # fmt: skip
    assert (corpus.errors, corpus.skipped) == (0, 0)
    assert corpus.to_arrow().column("task_id").to_pylist() == [f"t{i}" for i in range(5)]
    assert [row["tool_calls"] for row in corpus] == [1] * 5
    run = turnfold.load(folder, sample=3)
    assert run == corpus[f"{second}#0"]
    assert run.entries == turnfold.load(trajectory(3)).entries
    assert run.metadata["task_id"] == "t3"
    with pytest.raises(ValueError, match=r"holds 5 runs: no sample=5 \(they are 0 to 4\)"):
        turnfold.load(folder, sample=5)


def test_C7_what_else_is_in_a_saved_dataset_s_folder_is_said(tmp_path: Path) -> None:
    """A ``map()``'s cache file beside the shards (its rows again) is skipped, not read as
    more runs; a shard the state names that is gone, and a shard that is no Arrow, are errors
    naming the file, never a dataset read short or "invalid JSON"."""
    folder = _copy(SAVED, tmp_path)
    shutil.copy(folder / SHARD, folder / "cache-0123456789abcdef.arrow")
    corpus = scan(folder, workers=1)
    assert (len(corpus), corpus.skipped) == (2, 1)
    state = json.loads((folder / tables.DATASET_STATE).read_text())
    state["_data_files"].append({"filename": "data-00001-of-00002.arrow"})
    (folder / tables.DATASET_STATE).write_text(json.dumps(state))
    with pytest.raises(ValueError, match=r"data-00001-of-00002\.arrow: not a readable Arrow file"):
        scan(folder, workers=1)
    (folder / "data-00001-of-00002.arrow").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    with pytest.raises(ValueError, match=r"00002\.arrow: not a readable Arrow file, neither"):
        scan(folder, workers=1)
    # A state that names a file outside its folder is no dataset's: its files are read as any.
    state["_data_files"] = [{"filename": "../elsewhere.arrow"}]
    (folder / tables.DATASET_STATE).write_text(json.dumps(state))
    assert tables.saved_dataset(folder, [p.name for p in folder.iterdir()]) is None


def test_C7_a_saved_dataset_among_sessions_is_named_when_passed_over(tmp_path: Path) -> None:
    """As Parquet files among sessions are: its shard counted and named; its json files, the
    dataset's own, neither skipped nor read as sessions."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(SESSION, folder / SESSION.name)
    saved = _copy(SAVED, folder)
    with pytest.warns(UserWarning, match=r"skipped an Arrow file among the sessions") as told:
        corpus = scan(folder, workers=1)
    assert (len(corpus), corpus.skipped, corpus.errors) == (1, 1, 0)
    assert f"({saved / SHARD}); a scan reads an Arrow file's runs" in str(told[0].message)


# --- Arrow IPC files and streams ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["stream", "file", "feather"])
def test_C1_an_arrow_file_scans_as_the_same_table_in_parquet(tmp_path: Path, kind: str) -> None:
    """An Arrow IPC stream (``datasets``' format), file or Feather (compressed) file of runs
    gave one error row, "line 1: invalid JSON"; its rows are those of the same table in
    Parquet, keyed by its own path."""
    table = _table(70)
    if kind == "feather":
        path = tmp_path / "rollouts.feather"
        feather.write_feather(table, path, chunksize=16)  # lz4-compressed batches
    else:
        path = _write_ipc(tmp_path / "rollouts.arrow", table, kind == "stream", 16)
    pq.write_table(table, tmp_path / "rollouts.parquet", row_group_size=16)
    corpus = scan(path, workers=1)
    assert corpus.keys == [f"{path}#{i}" for i in range(70)]
    assert corpus.errors == 0
    same = scan(tmp_path / "rollouts.parquet", workers=1).to_arrow().drop_columns(["key", "path"])
    assert corpus.to_arrow().drop_columns(["key", "path"]).equals(same)
    assert corpus.tool_calls().column("name").to_pylist() == ["bash"] * 70
    run = corpus[f"{path}#69"]
    assert run.entries == turnfold.load(trajectory(69)).entries
    assert (run.metadata["task_id"], run.metadata["score"]) == ("t69", 1.0)
    assert turnfold.load(path, sample=33).metadata["task_id"] == "t33"
    unnamed = tmp_path / "rollouts.bin"  # known by its first bytes, not its name
    unnamed.write_bytes(path.read_bytes())
    assert turnfold.load(unnamed, sample=5).entries == turnfold.load(trajectory(5)).entries


@pytest.mark.parametrize("stream", [True, False])
def test_C5_an_arrow_file_is_read_in_parts_by_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """A part is a range of rows, cut anywhere in a batch (a view of it, nothing decoded
    again): its cells are those rows whatever the batches, and a scan in parts is the scan of
    the file whole."""
    import random

    path = _write_ipc(tmp_path / "rollouts.arrow", _table(90), stream, 20)
    whole = scan(path, workers=1, cache=False)
    monkeypatch.setattr(tables, "BATCH_ROWS", 7)
    column = _table(90).column("messages")
    chooser = random.Random(5)
    for _ in range(30):
        start = chooser.randrange(90)
        end = chooser.randint(start + 1, 90)
        got = list(tables.cells(str(path), "messages", tables.Rows(start, end)))
        assert got == column.slice(start, end - start).to_pylist(), (start, end)
    assert tables.cell(str(path), "messages", 41) == column[41].as_py()
    monkeypatch.setattr(tables, "PART_BYTES", 1000)
    monkeypatch.setattr(tables, "PART_ROWS", 8)
    parts = tables.parts(str(path), "messages", 2)
    assert parts is not None
    cuts = [part for part, _ in parts]
    assert len(cuts) > 4
    assert (cuts[0].start, cuts[-1].end) == (0, 90)
    assert all(a.end == b.start for a, b in itertools.pairwise(cuts))
    assert any(part.start % 20 for part in cuts)  # a batch cut inside
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    split = scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())


def test_C5_an_arrow_stream_is_read_from_the_mapped_file_not_into_memory(tmp_path: Path) -> None:
    """A shard of one large record batch: its rows are views of the mapped file, converted a
    few at a time; read into memory (an ``OSFile``'s stream, or ``read_all``), Arrow would hold
    the whole batch."""
    text = "x" * 20_000
    rows = [[{"role": "user", "content": f"{i} {text}"}] for i in range(1000)]  # 20 MB
    path = _write_ipc(tmp_path / "big.arrow", pa.table({"messages": rows}), True, 1000)
    before = pa.total_allocated_bytes()
    most = 0
    for i, cell in enumerate(tables.cells(str(path), "messages")):
        assert cell[0]["content"].startswith(f"{i} ")
        most = max(most, pa.total_allocated_bytes() - before)
    assert most < 2 * 1024 * 1024


def test_L4_a_file_named_arrow_that_is_no_arrow_says_so(tmp_path: Path) -> None:
    """A binary file that is no table: "not a readable Arrow file", not "invalid JSON"."""
    path = tmp_path / "model.arrow"
    path.write_bytes(b"\x00\x01\x02garbage" * 50)
    with pytest.raises(ValueError, match=r"model\.arrow: not a readable Arrow file"):
        turnfold.load(path, sample=0)
    with pytest.raises(ValueError, match=r"model\.arrow: not a readable Arrow file"):
        scan(path, workers=1)


def test_L4_a_binary_file_that_is_no_table_says_it_is_binary(tmp_path: Path) -> None:
    """Any other binary file given by name (an image, a program) was "invalid JSON"."""
    path = tmp_path / "plot.bin"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    with pytest.raises(turnfold.TranscriptFormatError, match=r"line 1: not a transcript "
                       r"\(binary data, not JSON text\)"):  # fmt: skip
        turnfold.load(path)
    with pytest.raises(turnfold.TranscriptFormatError) as caught:
        turnfold.load(path)
    assert [row["error"] for row in scan(path, workers=1)] == [str(caught.value)]
