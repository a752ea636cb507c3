"""The values a table's run makes when read are capped on every path (spec X-1, X-2, C-7), as
a Parquet file's messages were (``tests/test_memory_cap.py``): a cell whose values pass
:func:`~turnfold.formats.tables.held_values` is refused, saying so with its file (or
``<table>``), its row and the limit, and everything beside it is read. The hostile tables are
built here with pyarrow (and pandas); the cap is scaled down by the memory the process may use
(:func:`~turnfold.formats.compressed.memory_limit`).

Also here: the limit is read once per read, not once per batch; a row's ``error`` is the load's
text word for word (a path with two spaces); a compressed dataset of runs larger than a quarter
of memory is read whole by a scan, which streams it, and by ``load(path, sample=n)``.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.held_memory import lowered_memory, refusal, with_peak
from turnfold.corpus.columns import cell as shown_cell
from turnfold.corpus.columns import column
from turnfold.formats import compressed, tables
from turnfold.model import AssistantText, UserMessage

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
#: A process that may use this much memory converts at most 34,952 values at once.
_SMALL = 40 << 20


pytestmark = pytest.mark.usefixtures("cache_dir")


def _too_many(values: int, most: int) -> str:
    """What a refused cell's error says (:func:`~turnfold.formats.tables.too_many_values`),
    after its table, its row and ``not a transcript (``."""
    return (
        f"not a transcript (its messages hold {values:,} values (each list, struct and field in "
        f"them), more than the {most:,} a load converts at once ({tables.VALUE_BYTES} bytes of "
        "objects each, in the part of this process's memory one load may take); not read"
    )


def _tiny(count: int) -> list[dict[str, str]]:
    """``count`` short messages, user and assistant in turn."""
    return [{"role": ("user", "assistant")[n % 2], "content": f"m{n % 97}"} for n in range(count)]


def _errors(corpus: Any) -> dict[str, Any]:
    return {row["key"]: row["error"] for row in corpus.rows}


# --- JSON text: a string column of message lists, values datasets typed Json ---------------


def test_X1_a_json_text_cell_of_more_values_than_a_load_converts_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column of JSON text, 60,000 messages in row 1 (1.1 MB of text, far under the record
    limit, 54 MB of objects once parsed): refused in the scan's row and by a load, naming the
    file, the row and the limit; rows 0 and 2 read."""
    most = lowered_memory(monkeypatch, _SMALL)
    texts = [json.dumps(_tiny(1)), json.dumps(_tiny(60_000)), json.dumps(_tiny(2))]
    path = tmp_path / "runs.parquet"
    pq.write_table(pa.table({"messages": texts}), path)
    errors = _errors(turnfold.scan(path, workers=1))
    assert errors[f"{path}#0"] is None
    assert errors[f"{path}#2"] is None
    said = _too_many(1 + 3 * 60_000, most)
    assert errors[f"{path}#1"].startswith(f"{path}, row 1: {said}")
    raised, peak = with_peak(lambda: refusal(lambda: turnfold.load(path, sample=1)))
    assert str(raised) == errors[f"{path}#1"]
    assert peak < most * tables.VALUE_BYTES // 2  # its 60,000 messages are never parsed
    assert [type(e) for e in turnfold.load(path, sample=2).entries] == [UserMessage, AssistantText]


def test_X1_values_typed_json_that_hold_more_than_a_load_converts_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's messages typed ``Json`` (Arrow's ``arrow.json``, as ``datasets`` 5 stores
    them): two messages to Arrow, one of them a content of 20,000 parts once decoded. The
    count takes what the JSON holds, not the two texts."""
    most = lowered_memory(monkeypatch, _SMALL)
    parts = [{"type": "text", "text": "x"} for _ in range(20_000)]
    big = [json.dumps({"role": "user", "content": parts}), json.dumps(_tiny(2)[1])]
    small = [json.dumps(message) for message in _tiny(2)]
    texts = pa.ExtensionArray.from_storage(pa.json_(), pa.array([*small, *big, *small]))
    column = pa.ListArray.from_arrays(pa.array([0, 2, 4, 6], pa.int32()), texts)
    table = pa.table({"messages": column})
    assert tables.json_places(table.schema) == {"messages": [True]}
    path = tmp_path / "runs.parquet"
    pq.write_table(table, path)
    errors = _errors(turnfold.scan(path, workers=1))
    assert errors[f"{path}#0"] is None
    assert errors[f"{path}#2"] is None
    values = 1 + (3 + 3 * 20_000) + 3  # the list, each message decoded
    assert errors[f"{path}#1"].startswith(f"{path}, row 1: {_too_many(values, most)}")
    in_memory = _errors(turnfold.scan(table, workers=1))
    assert in_memory["#1"].startswith(f"<table>, row 1: {_too_many(values, most)}")
    assert in_memory["#0"] is None


# --- a run's other columns, its metadata -----------------------------------------------------


def _with_big_metadata(count: int) -> Any:
    """Three runs of two messages; row 1's ``steps`` holds ``count`` integers."""
    messages = pa.array([_tiny(2)] * 3, pa.list_(_MESSAGE))
    steps = pa.array([[1, 2], list(range(count)), [3]], pa.list_(pa.int64()))
    return pa.table({"messages": messages, "task": ["a", "b", "c"], "steps": steps})


def test_X1_another_column_s_cell_of_too_many_values_is_left_out_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Row 1's ``steps`` holds 100,000 integers (under the footer's ratio and floor): kept
    before as the run's metadata, converted with the corpus's rows and by a load. Now null
    there, warned of with the file, the row, the column and the limit; the run and its other
    columns read."""
    most = lowered_memory(monkeypatch, _SMALL)
    path = tmp_path / "runs.parquet"
    pq.write_table(_with_big_metadata(100_000), path)
    warned = rf"{re.escape(str(path))}: the column 'steps' in row 1 holds 100,001 values"
    limit = rf".*more than the {most:,} a load converts at once"
    with pytest.warns(UserWarning, match=warned + limit):
        corpus = turnfold.scan(path, workers=1)
    rows = {row["key"]: row for row in corpus.rows}
    assert [rows[f"{path}#{n}"]["steps"] for n in range(3)] == [[1, 2], None, [3]]
    assert [rows[f"{path}#{n}"]["task"] for n in range(3)] == ["a", "b", "c"]
    assert {row["error"] for row in rows.values()} == {None}
    with pytest.warns(UserWarning, match=warned + limit):
        loaded = turnfold.load(path, sample=1)
    assert "steps" not in loaded.metadata
    assert loaded.metadata["task"] == "b"
    assert turnfold.load(path, sample=0).metadata["steps"] == [1, 2]


def test_X1_an_in_memory_table_s_other_column_is_capped_as_a_file_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    most = lowered_memory(monkeypatch, _SMALL)
    table = _with_big_metadata(100_000)
    warned = rf"<table>: the column 'steps' in row 1 holds 100,001 values.*{most:,}"
    with pytest.warns(UserWarning, match=warned):
        corpus = turnfold.scan(table, workers=1)
    assert [row["steps"] for row in corpus.rows] == [[1, 2], None, [3]]
    with pytest.warns(UserWarning, match=warned):
        loaded = turnfold.load(table, sample=1)
    assert "steps" not in loaded.metadata
    assert loaded.metadata["task"] == "b"


# --- tables in memory: a pyarrow Table, a DataFrame of Arrow's types -------------------------


def _runs_table(count: int) -> Any:
    """Three runs; row 1 of ``count`` messages."""
    return pa.table({"messages": pa.array([_tiny(1), _tiny(count), _tiny(2)], pa.list_(_MESSAGE))})


def test_X1_an_in_memory_table_s_cell_of_too_many_values_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    most = lowered_memory(monkeypatch, _SMALL)
    table = _runs_table(60_000)
    said = f"<table>, row 1: {_too_many(1 + 3 * 60_000, most)}"
    errors = _errors(turnfold.scan(table, workers=1))
    assert errors["#0"] is None
    assert errors["#2"] is None
    assert errors["#1"].startswith(said)
    raised, peak = with_peak(lambda: refusal(lambda: turnfold.load(table, sample=1)))
    assert str(raised).startswith(said)
    assert peak < most * tables.VALUE_BYTES // 2
    assert len(turnfold.load(table, sample=2).entries) == 2


def test_X1_a_dataframe_of_arrow_types_is_capped_as_its_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A DataFrame backed by Arrow (``dtype_backend="pyarrow"``, ``types_mapper=ArrowDtype``):
    its column was converted whole, every row at once."""
    pd = pytest.importorskip("pandas")
    most = lowered_memory(monkeypatch, _SMALL)
    frame = _runs_table(60_000).to_pandas(types_mapper=pd.ArrowDtype)
    said = f"<table>, row 1: {_too_many(1 + 3 * 60_000, most)}"
    errors = _errors(turnfold.scan(frame, workers=1))
    assert errors["#1"].startswith(said)
    assert errors["#0"] is None
    assert errors["#2"] is None
    raised = refusal(lambda: turnfold.load(frame, sample=1))
    assert str(raised).startswith(said)


def test_X1_list_views_are_counted_by_what_they_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``list_view`` column counted one value a row before. Its views may overlap: 400 rows
    that each view the same 100 messages make 40,000 once converted, from 100 stored."""
    most = lowered_memory(monkeypatch, _SMALL)
    messages = pa.array(_tiny(60_000), _MESSAGE)
    offsets = pa.array([0, 0, 2], pa.int32())
    sizes = pa.array([1, 60_000, 2], pa.int32())
    table = pa.table({"messages": pa.ListViewArray.from_arrays(offsets, sizes, messages)})
    errors = _errors(turnfold.scan(table, workers=1))
    assert errors["#1"].startswith(f"<table>, row 1: {_too_many(1 + 3 * 60_000, most)}")
    assert errors["#0"] is None
    assert errors["#2"] is None
    counts = tables._values(table.select(["messages"]).to_batches()[0])
    assert counts == [1 + 3, 1 + 3 * 60_000, 1 + 3 * 2]
    shared = pa.LargeListViewArray.from_arrays(
        pa.array([0] * 400, pa.int64()), pa.array([100] * 400, pa.int64()), messages
    )
    large = pa.table({"messages": shared})
    assert tables._values(large.to_batches()[0]) == [301] * 400
    read = turnfold.scan(large, workers=1)
    assert len(read) == 400
    assert {row["error"] for row in read.rows} == {None}


def test_X1_dictionary_and_run_end_encoded_cells_are_counted_by_what_they_hold() -> None:
    """A dictionary's index, or a run of a run-end encoded column, converts to its whole value
    in every row that holds it."""
    big = pa.array([_tiny(1000)], pa.list_(_MESSAGE))
    dictionary = pa.DictionaryArray.from_arrays(pa.array([0, 0, None]), big)
    assert tables._values(pa.record_batch({"m": dictionary})) == [3001, 3001, 1]
    runs = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.concat_arrays(
        [big, pa.array([_tiny(1)], pa.list_(_MESSAGE))]))  # fmt: skip
    assert tables._values(pa.record_batch({"m": runs})) == [3001, 3001, 4]
    assert tables._values(pa.record_batch({"m": runs.slice(1)})) == [3001, 4]


# --- the limit, read once per read ----------------------------------------------------------


def test_X1_the_memory_limit_is_read_once_per_read_not_once_per_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of 40 rows read a row at a time (40 batches of Arrow's): the cgroup's files were
    read for each."""
    monkeypatch.setattr(tables, "BATCH_ROWS", 1)
    read: list[int] = []

    def limit() -> int:
        read.append(1)
        return 8 << 30

    monkeypatch.setattr(compressed, "memory_limit", limit)
    path = tmp_path / "runs.parquet"
    table = pa.table({"messages": pa.array([_tiny(2)] * 40, pa.list_(_MESSAGE))})
    pq.write_table(table, path, row_group_size=1)
    assert pq.ParquetFile(path).metadata.num_row_groups == 40
    corpus = turnfold.scan(path, workers=1, cache=False)
    assert len(corpus) == 40
    assert len(read) == 1
    turnfold.load(path, sample=39)
    turnfold.scan(table, workers=1)
    assert len(read) == 1  # until the cache is reset
    tables.forget_held_values()
    turnfold.load(path, sample=39)
    assert len(read) == 2


# --- a row's error, word for word ------------------------------------------------------------


def test_C7_a_row_s_error_is_the_raised_text_word_for_word(tmp_path: Path) -> None:
    """A path holding two spaces and a newline: the row's ``error`` said it with one space
    each, so a filter on the path found nothing and it differed from what opening it raised.
    The browser's cell shows it on one line; its tooltip holds it whole."""
    folder = tmp_path / "runs  of\nmay"
    folder.mkdir()
    path = folder / "runs.parquet"
    pq.write_table(pa.table({"messages": pa.array([_tiny(2), None], pa.list_(_MESSAGE))}), path)
    corpus = turnfold.scan(path, workers=1)
    error = _errors(corpus)[f"{path}#1"]
    opened = refusal(lambda: corpus[f"{path}#1"])
    loaded = refusal(lambda: turnfold.load(path, sample=1))
    assert error == str(opened) == str(loaded)
    assert error.startswith(f"{path}, row 1: ")
    assert "runs  of\nmay" in error
    shown = shown_cell(column("error"), error, "en")
    assert "\n" not in shown["text"]
    assert shown["title"] == error


# --- a compressed dataset of runs, streamed --------------------------------------------------


def _runs_lines(count: int) -> bytes:
    """``count`` runs of JSON lines, each a task of 1,000 random letters (gzip packs them
    less than twice)."""
    rng = random.Random(5)
    return b"".join(
        json.dumps({"id": n, "messages": [
            {"role": "user", "content": f"task {n} " + "".join(rng.choices("abcdefgh", k=1000))},
            {"role": "assistant", "content": f"answer {n}"}]}).encode() + b"\n"
        for n in range(count)
    )  # fmt: skip


def test_X1_a_scan_streams_a_compressed_dataset_of_runs_larger_than_a_load_may_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3,000 runs, 4.9 MB counted as held (text and lines), in a process that may use 8 MB: a
    load holds 2 MB at most, so the file was cut after some 1,000 runs with a warning. A scan
    holds one run at a time: it reads every row, and ``load(path, sample=n)`` of the last; a
    load of one session of that size is still cut."""
    monkeypatch.setattr(compressed, "memory_limit", lambda: 8 << 20)
    held = (8 << 20) // compressed.HELD_SHARE
    data = _runs_lines(3000)
    assert len(data) + compressed.LINE_BYTES * 3000 > 2 * held
    path = tmp_path / "rollouts.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    corpus = turnfold.scan(path, workers=1, cache=False)
    rows = corpus.rows
    assert len(rows) == 3000
    assert {row["error"] for row in rows} == {None}
    assert {row["warnings"] for row in rows} == {0}

    def task(transcript: Any) -> list[str]:
        return [e.text.split()[1] for e in transcript.entries if isinstance(e, UserMessage)]

    last = turnfold.load(path, sample=2999)
    assert task(last) == ["2999"]
    assert not last.warnings
    assert task(corpus[f"{path}#2999"]) == ["2999"]
    session = tmp_path / "chat.jsonl.gz"
    messages = [json.loads(line)["messages"][0] for line in data.splitlines()]
    session.write_bytes(gzip.compress(b"".join(json.dumps(m).encode() + b"\n" for m in messages)))
    cut = turnfold.load(session)
    assert len(cut.entries) < 3000
    assert any("the part of this process's" in str(w) for w in cut.warnings)
