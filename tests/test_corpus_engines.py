"""Where a scan's work runs (C-5) and table sources of trajectories (C-1): worker processes,
a Dask cluster, and Parquet / Arrow / pandas inputs give the same rows as an in-process scan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import turnfold
from turnfold.corpus import COLUMNS, scan
from turnfold.corpus import engine as engine_module
from turnfold.corpus.index import CACHE_ENV
from turnfold.formats.errors import SampleSelectionError
from turnfold.session import session_facts

TREE = Path(__file__).parent / "fixtures" / "corpus"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _trajectory(i: int) -> list[dict[str, Any]]:
    """A short Chat Completions trajectory with one tool call."""
    arguments = json.dumps({"command": f"ls {i}"})
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "bash", "arguments": arguments}}  # fmt: skip
    output = f"file_{i}.py"
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Task {i}: list the files"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": output},
        {"role": "assistant", "content": f"Done with task {i}."},
    ]


def _same_run(opened: turnfold.Transcript, loaded: turnfold.Transcript) -> bool:
    """A run opened from its row is the run its messages load as, with the row's other
    columns in its metadata (C-1)."""
    kept = opened.metadata | loaded.metadata == opened.metadata
    more = len(opened.metadata) > len(loaded.metadata)
    return opened.entries == loaded.entries and kept and more


def _table(count: int) -> pa.Table:
    return pa.table({
        "task_id": [f"t{i}" for i in range(count)],
        "reward": [float(i % 2) for i in range(count)],
        "messages": [_trajectory(i) for i in range(count)],
    })  # fmt: skip


def test_C5_worker_processes_return_the_rows_of_an_in_process_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = scan(TREE, workers=1, cache=False)
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)  # spread even this little work
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 2)
    spread = scan(TREE, workers=2, cache=False)
    assert spread.to_arrow().equals(here.to_arrow())
    assert spread.tool_calls().equals(here.tool_calls())
    assert spread.search("readme") == here.search("readme")


def test_C5_workers_import_the_price_table_up_front_only_until_prices_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forkserver imports genai-prices (a fifth of a second before any worker starts) for a
    first scan; once prices are kept (kept_prices), most rows are priced without it."""
    from turnfold.kept_prices import price_book

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert "genai_prices" in engine_module._preload()
    book = price_book()
    assert book is not None
    book.keep("claude-sonnet-4-5", None, (None, None), False, None, "0")
    assert "genai_prices" not in engine_module._preload()
    assert "turnfold.corpus" in engine_module._preload()


def test_C5_dask_cluster_returns_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions of a folder, and a file of runs read and searched in parts (C-1, C-6),
    as here."""
    from turnfold.corpus import runs
    from turnfold.corpus.discover import Item
    from turnfold.corpus.summarize import runs_parts

    distributed = pytest.importorskip("distributed")
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text("".join(json.dumps(row) + "\n" for row in _table(20).to_pylist()))
    monkeypatch.setattr(runs, "SPAN_BYTES", 1000)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 2000)
    whole = Item(key=str(rollouts), path=str(rollouts), size=rollouts.stat().st_size)
    assert len(runs_parts(whole) or []) > 2
    source = [TREE, rollouts]
    here = scan(source, workers=1, cache=False)
    assert len(here) == len(scan(TREE, workers=1, cache=False)) + 20
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        there = scan(source, client=client, cache=False)
        assert there.to_arrow().equals(here.to_arrow())
        assert there.turns().equals(here.turns())
        assert there.search("readme", limit=2) == here.search("readme", limit=2)
        # The file of runs searched in its parts by the cluster's workers, one for each thread.
        assert engine_module.part_share(None, client) == 2
        every = here.search("list the files", limit=1000)
        assert len(every) == 20
        assert there.search("list the files", limit=1000) == every


def test_C1_arrow_table_rows_are_trajectories_with_their_columns_kept() -> None:
    table = _table(5)
    corpus = scan(table)
    frame = corpus.to_arrow()
    assert frame.column_names == [*COLUMNS, "task_id", "reward"]
    assert frame.column("task_id").to_pylist() == table.column("task_id").to_pylist()
    assert corpus.keys == [f"#{i}" for i in range(5)]
    assert frame.column("format").to_pylist() == ["openai"] * 5
    assert frame.column("tool_calls").to_pylist() == [1] * 5
    # A rollout's reward is its score (H-6), as a row of a file of runs gives it.
    assert frame.column("score").to_pylist() == table.column("reward").to_pylist()
    # The run opened from its row has the row's other columns as its metadata, and its view
    # the row's score.
    opened = corpus["#2"]
    assert opened.entries == turnfold.load(_trajectory(2)).entries
    assert opened.metadata == {"source_format": "openai", "system": "You are a coding agent.",
                               "task_id": "t2", "reward": 0.0, "score": 0.0}  # fmt: skip
    assert session_facts(opened).score == 0.0


#: A script that scans with worker processes at its top level, as quick scripts are written:
#: with no ``if __name__ == "__main__":`` guard (the workers' start must not run it again).
#: With an argument, it first starts a thread (a kernel has several), so its workers start
#: from a forkserver, which a guard then keeps from running the scan again.
_SCRIPT = """
import sys, threading
import turnfold
from turnfold.corpus import engine
engine.LOCAL_BYTES, engine.CHUNK_ITEMS = 0, 2  # spread even this little work,
engine.HERE_BYTES = -1  # all of it to the workers
def scanned():
    corpus = turnfold.scan(sys.argv[1], workers=2, cache=False)
    print(len(corpus), corpus.errors)
if len(sys.argv) > 2:
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    if __name__ == "__main__":
        scanned()
        stop.set()
else:
    scanned()
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_C5_a_script_scans_with_workers_whether_or_not_it_has_threads(
    tmp_path: Path, threads: int
) -> None:
    """One thread: the workers are forked from the script, which no worker runs again (an
    unguarded script broke the pool: every forkserver worker ran its scan again). Two: they
    start from a forkserver, as in a kernel."""
    import subprocess
    import sys

    script = tmp_path / "scan_sessions.py"
    script.write_text(_SCRIPT)
    extra = ["threaded"] if threads == 2 else []
    done = subprocess.run([sys.executable, str(script), str(TREE), *extra], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(scan(TREE, workers=1, cache=False))), "2"]


def test_C1_the_parquet_shards_of_a_dataset_scan_as_one_table(tmp_path: Path) -> None:
    """A dataset of trajectories is often written in shards (``train-00000-of-00002.parquet``):
    a folder, a glob or a list of them scans as one table, each row keyed by its own file and
    row, a column one shard lacks null in its rows; a shard that is no Parquet says which."""
    data = tmp_path / "data"
    data.mkdir()
    first, second = data / "train-00000-of-00002.parquet", data / "train-00001-of-00002.parquet"
    pq.write_table(_table(3), first)
    pq.write_table(_table(5).slice(3).drop_columns(["reward"]), second)
    for source in (data, str(data / "*.parquet"), [first, second]):
        corpus = scan(source, workers=1)
        assert corpus.keys == [f"{first}#0", f"{first}#1", f"{first}#2", f"{second}#0",
                               f"{second}#1"]  # fmt: skip
        assert [row["path"] for row in corpus] == [str(first)] * 3 + [str(second)] * 2
        assert corpus.to_arrow().column("reward").to_pylist() == [0.0, 1.0, 0.0, None, None]
        assert corpus.to_arrow().column("task_id").to_pylist() == [f"t{i}" for i in range(5)]
        assert corpus[f"{second}#1"].entries == turnfold.load(_trajectory(4)).entries
        assert corpus[f"{second}#1"].metadata["task_id"] == "t4"  # no reward in its shard
        assert "reward" not in corpus[f"{second}#1"].metadata
    (data / "notes.parquet").write_bytes(b"PAR1 not a table PAR1")
    with pytest.raises(ValueError, match=r"notes\.parquet: not a readable Parquet file"):
        scan(data, workers=1)


def test_C1_a_polars_dataframe_scans_as_its_arrow_table() -> None:
    """A Polars DataFrame was refused ("Series among them": it iterates as its columns); it is
    a table of runs like pyarrow's and pandas', and one of its cells (a Series) loads."""
    polars = pytest.importorskip("polars")
    frame = polars.from_arrow(_table(4))
    assert isinstance(frame, polars.DataFrame)
    corpus = scan(frame, workers=1)
    # The same rows; its own columns keep Polars' types (large strings).
    assert corpus.to_arrow().to_pylist() == scan(_table(4), workers=1).to_arrow().to_pylist()
    assert turnfold.load(frame["messages"][3]) == turnfold.load(_trajectory(3))
    assert _same_run(corpus["#3"], turnfold.load(_trajectory(3)))
    assert turnfold.load(frame, sample=3) == corpus["#3"]
    with pytest.raises(SampleSelectionError, match=r"a polars DataFrame holds 4 runs"):
        turnfold.load(frame)


def test_C1_a_hugging_face_dataset_scans_its_rows_as_selected() -> None:
    """``datasets.load_dataset(...)["train"]`` is how RL rollouts and SFT trajectories are held:
    a ``Dataset`` is read as its Arrow table, in the order and selection of its rows (a shuffle,
    a ``select`` or a ``filter`` keeps the table and an index of rows); a ``DatasetDict`` and a
    streamed ``IterableDataset`` are refused with what to do instead."""
    datasets = pytest.importorskip("datasets")
    dataset = datasets.Dataset(_table(6))
    corpus = scan(dataset, workers=1)
    assert corpus.to_arrow().equals(scan(_table(6), workers=1).to_arrow())
    picked = dataset.select([4, 1]).filter(lambda row: row["task_id"] != "t9")
    chosen = scan(picked, workers=1)
    assert chosen.to_arrow().column("task_id").to_pylist() == ["t4", "t1"]
    assert turnfold.load(picked[0]["messages"]) == turnfold.load(_trajectory(4))
    assert _same_run(chosen["#0"], turnfold.load(_trajectory(4)))
    splits = datasets.DatasetDict(train=dataset, test=picked)
    with pytest.raises(TypeError, match=r"one table per split \('train', 'test'\): scan one"):
        scan(splits)
    with pytest.raises(TypeError, match=r"without streaming=True"):
        scan(dataset.to_iterable_dataset())
    assert turnfold.load(picked, sample=0) == chosen["#0"]
    with pytest.raises(SampleSelectionError, match=r"a datasets Dataset holds 6 runs"):
        turnfold.load(dataset)
    with pytest.raises(TypeError, match="holds many runs, a table per split"):
        turnfold.load(splits)


def test_C1_pandas_dataframe_and_messages_naming_the_column() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"id": [1, 2], "steps": [_trajectory(0), _trajectory(1)],
                              "note": ["a", "b"]})  # fmt: skip
    with pytest.raises(ValueError, match="messages="):
        scan(frame[["id", "note"]])
    corpus = scan(frame, messages="steps")
    assert list(corpus.to_pandas().columns) == [*COLUMNS, "id", "note"]
    assert [row["turns"] for row in corpus] == [1, 1]
    assert _same_run(corpus["#1"], turnfold.load(_trajectory(1)))


def test_C1_a_dataframe_cell_of_framework_messages_is_read_and_left_as_it_was() -> None:
    """A cell of plain values is read without a second copy; one holding a framework's objects
    (LangChain messages kept in a DataFrame) is still read as load() reads it. Neither the
    user's cells nor their messages change (L-4: nothing the user passed is modified)."""
    import copy

    pandas = pytest.importorskip("pandas")
    messages = pytest.importorskip("langchain_core.messages")
    steps = [
        messages.HumanMessage("list the files"),
        messages.AIMessage(
            "", tool_calls=[{"name": "bash", "args": {"command": "ls"}, "id": "call_1"}]
        ),
        messages.ToolMessage("a.py", tool_call_id="call_1"),
        messages.AIMessage("One file."),
    ]
    frame = pandas.DataFrame({"messages": [steps, _trajectory(1)], "id": [1, 2]})
    before = copy.deepcopy(frame["messages"].tolist())
    corpus = scan(frame, workers=1)
    assert corpus.errors == 0
    assert [row["tool_calls"] for row in corpus] == [1, 1]
    # The format the first row was read as is tried first for the next; its row names the one
    # it was read as.
    assert [row["format"] for row in corpus] == ["langchain", "openai"]
    assert _same_run(corpus["#0"], turnfold.load(steps))
    assert _same_run(corpus["#1"], turnfold.load(_trajectory(1)))
    assert frame["messages"].tolist() == before


def test_C1_parquet_file_streams_its_rows_keyed_by_path_and_row(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.parquet"
    pq.write_table(_table(70), path, row_group_size=16)
    corpus = scan(path, workers=2)  # 70 rows: enough to use the worker processes
    assert len(corpus) == 70
    assert corpus.keys[3] == f"{path}#3"
    rows = corpus.rows
    assert {row["path"] for row in rows} == {str(path)}
    assert [row["sample"] for row in rows[:3]] == ["0", "1", "2"]
    assert corpus.to_arrow().column("reward").to_pylist() == [float(i % 2) for i in range(70)]
    assert _same_run(corpus[f"{path}#69"], turnfold.load(_trajectory(69)))
    # Arrow's null fields of a message struct (content None beside tool_calls) read correctly
    assert corpus.tool_calls().num_rows == 70
    in_memory = scan(_table(70), workers=1).rows
    same = [{k: v for k, v in row.items() if k not in ("key", "path")} for row in rows]
    assert same == [{k: v for k, v in row.items() if k not in ("key", "path")} for row in in_memory]


def test_C4_a_parquet_file_is_an_entry_of_the_index(tmp_path: Path) -> None:
    """An unchanged rescan of a dataset reads none of it (it read every row again); a shard
    that changed is read again alone."""
    data = tmp_path / "data"
    data.mkdir()
    first, second = data / "train-0.parquet", data / "train-1.parquet"
    pq.write_table(_table(6), first)
    pq.write_table(_table(4), second)
    scanned = scan(data, workers=1)
    again = scan(data, workers=1)
    assert (scanned.read, again.read, again.cached) == (2, 0, 2)
    assert again.to_arrow().equals(scanned.to_arrow())
    assert again.tool_calls().equals(scanned.tool_calls())
    pq.write_table(_table(5), second)
    changed = scan(data, workers=1)
    assert (changed.read, changed.cached, len(changed)) == (1, 1, 11)
    assert changed.to_arrow().equals(scan(data, workers=1, cache=False).to_arrow())
    # Another column named for the messages is another reading of the file: not the entry's.
    renamed = _table(6).rename_columns(["task_id", "reward", "steps"])
    pq.write_table(renamed.append_column("messages", renamed.column("steps")), first)
    assert scan(first, messages="steps", workers=1).read == 1


def test_C5_a_parquet_file_is_read_in_parts_by_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker reads its own rows from the file (the scanning process reads none of them):
    whole row groups, or a large one cut into as many parts as there are workers. The rows,
    tool calls and turns are those of the file read whole, and of the same table in memory."""
    from turnfold.formats import tables as parquet

    path = tmp_path / "rollouts.parquet"
    pq.write_table(_table(90), path, row_group_size=20)
    whole = scan(path, workers=1, cache=False)
    monkeypatch.setattr(parquet, "PART_BYTES", 1500)
    monkeypatch.setattr(parquet, "PART_ROWS", 8)
    parts = parquet.parts(str(path), "messages", 2)
    assert parts is not None
    assert [part for part, _ in parts] == [
        parquet.Rows(a, b)
        for a, b in (
            (0, 10),
            (10, 20),
            (20, 30),
            (30, 40),
            (40, 50),
            (50, 60),
            (60, 70),
            (70, 80),
            (80, 90),
        )
    ]  # fmt: skip (each group of 20 rows cut in two; the last, of 10, too small to cut)
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    split = scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert split.turns().equals(whole.turns())
    # A row no format reads, in a later part: an error row naming no format, as when whole.
    broken = tmp_path / "broken.parquet"
    rows = _table(90).to_pylist()
    rows[47]["messages"] = []
    pq.write_table(pa.Table.from_pylist(rows), broken, row_group_size=20)
    alone = scan(broken, workers=1, cache=False)
    assert alone.rows[47]["error"] is not None
    assert alone.rows[47]["format"] is None
    assert scan(broken, workers=2, cache=False).to_arrow().equals(alone.to_arrow())
    in_memory = scan(_table(90), workers=1)
    for column in ("sample", "format", "turns", "tool_calls", "task_id", "reward"):
        assert split.to_arrow().column(column).equals(in_memory.to_arrow().column(column))
    assert _same_run(split[f"{path}#87"], turnfold.load(_trajectory(87)))
    # Small row groups gather into one part of about PART_BYTES...
    monkeypatch.setattr(parquet, "PART_BYTES", 10**9)
    assert parquet.parts(str(path), "messages", 2) is None
    # ...and of at most PART_MOST_ROWS rows: a group of many short runs is cut for them.
    monkeypatch.setattr(parquet, "PART_MOST_ROWS", 16)
    one_group = tmp_path / "one-group.parquet"
    pq.write_table(_table(90), one_group)
    cut = parquet.parts(str(one_group), "messages", 2) or []
    assert [part for part, _ in cut] == [parquet.Rows(15 * k, 15 * k + 15) for k in range(6)]
    assert (
        scan(one_group, workers=2, cache=False)
        .to_arrow()
        .equals(scan(one_group, workers=1, cache=False).to_arrow())
    )


def test_C6_search_reads_a_parquet_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search read the file's column once per row it opened (minutes for a few thousand
    rows); it reads each file once, and keys each hit by its row."""
    from turnfold.formats import tables as parquet

    path = tmp_path / "rollouts.parquet"
    pq.write_table(_table(300), path, row_group_size=64)
    corpus = scan(path, workers=1)
    reads: list[str] = []
    real = parquet.cells

    def counted(name: str, column: str, part: Any = None) -> Any:
        reads.append(name)
        return real(name, column, part)

    monkeypatch.setattr(parquet, "cells", counted)
    hits = corpus.search("file_277.py")
    assert [(hit.key, hit.snippet) for hit in hits] == [(f"{path}#277", "file_277.py")]
    assert reads == [str(path)]
    assert [hit.key for hit in corpus.search("list the files", limit=2)] == [
        f"{path}#0", f"{path}#1",
    ]  # fmt: skip


def test_C6_a_large_parquet_file_is_searched_in_parts_to_the_same_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker searches its own rows, as a scan reads them; the hits are keyed by their
    rows in the file, and are those of the file searched whole, at any limit."""
    from turnfold.formats import tables as parquet

    path = tmp_path / "rollouts.parquet"
    pq.write_table(_table(90), path, row_group_size=20)
    whole = scan(path, workers=1, cache=False)
    expected = {q: whole.search(q, limit=1000) for q in ("list the files", "file_77.py", "ls 4")}
    assert [hit.key for hit in expected["ls 4"]][:2] == [f"{path}#4", f"{path}#40"]
    monkeypatch.setattr(parquet, "PART_BYTES", 1500)
    monkeypatch.setattr(parquet, "PART_ROWS", 8)
    split = scan(path, workers=2, cache=False)
    parts: list[Any] = []
    real = parquet.cells

    def counted(name: str, column: str, part: Any = None) -> Any:
        parts.append(part)
        return real(name, column, part)

    monkeypatch.setattr(parquet, "cells", counted)  # the work stays here: too little for workers
    for query, hits in expected.items():
        for limit in (1, 3, 1000):
            assert split.search(query, limit=limit) == hits[:limit]
    assert {parquet.Rows(10 * k, 10 * k + 10) for k in range(9)} <= set(parts)  # each alone
    assert None not in parts  # never the file whole
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)  # the parts go to the workers
    assert split.search("list the files", limit=1000) == expected["list the files"]


def test_C5_a_part_of_a_parquet_file_is_its_rows_whatever_its_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from turnfold.formats import tables as parquet

    monkeypatch.setattr(parquet, "BATCH_ROWS", 5)  # batches across and inside the groups
    path = tmp_path / "rollouts.parquet"
    table = _table(70)
    pq.write_table(table, path, row_group_size=16)
    column = table.column("messages")
    chooser = random.Random(3)
    for _ in range(40):
        start = chooser.randrange(70)
        end = chooser.randint(start + 1, 70)
        got = list(parquet.cells(str(path), "messages", parquet.Rows(start, end)))
        assert got == column.slice(start, end - start).to_pylist(), (start, end)
    assert list(parquet.cells(str(path), "messages")) == column.to_pylist()
    assert parquet.cell(str(path), "messages", 33) == column[33].as_py()


def test_L4_load_of_a_parquet_file_of_runs_says_how_to_read_them_and_reads_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``load`` of a Parquet file said "line 1: invalid JSON"; it says what the file is, and
    ``sample=n`` reads its ``n``-th row as a scan keys it (``turnfold show data.parquet#n``)."""
    from turnfold.cli import main

    path = tmp_path / "rollouts.parquet"
    pq.write_table(_table(40), path, row_group_size=16)
    with pytest.raises(turnfold.TranscriptFormatError, match=r"a Parquet file of runs .*scan"):
        turnfold.load(path)
    assert _same_run(turnfold.load(path, sample=33), turnfold.load(_trajectory(33)))
    assert turnfold.load(path, sample=33).metadata["score"] == 1.0  # its reward column
    assert turnfold.load(str(path), sample="2") == scan(path, workers=1)[f"{path}#2"]
    assert turnfold.load(str(path), sample="2").metadata["task_id"] == "t2"
    with pytest.raises(ValueError, match=r"holds 40 runs: no sample=40 \(they are 0 to 39\)"):
        turnfold.load(path, sample=40)
    with pytest.raises(turnfold.TranscriptFormatError, match=r"not sample='t1'"):
        turnfold.load(path, sample="t1")
    unnamed = tmp_path / "rollouts.bin"  # known by its first bytes, not its name
    unnamed.write_bytes(path.read_bytes())
    assert _same_run(turnfold.load(unnamed, sample=1), turnfold.load(_trajectory(1)))
    assert main(["show", f"{path}#5", "--expand"]) == 0
    assert "Task 5: list the files" in capsys.readouterr().out


def test_C1_a_row_s_reward_and_generation_ms_are_its_score_and_duration_opened_too() -> None:
    # A verifiers rollout's generation_ms (0: not timed) is its duration, a reward its score,
    # in the scan's row and in the run it opens, whose view shows them.
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({
        "messages": [_trajectory(i) for i in range(3)],
        "reward": [0.0, 1.0, None],
        "generation_ms": [1500, 0, None],
    })  # fmt: skip
    corpus = scan(frame)
    rows = corpus.to_arrow()
    assert rows.column("score").to_pylist() == [0.0, 1.0, None]
    assert rows.column("duration_s").to_pylist() == [1.5, None, None]
    for key, row in zip(corpus.keys, corpus, strict=True):
        facts = session_facts(corpus[key])
        assert (facts.score, facts.duration_s) == (row["score"], row["duration_s"]), key
