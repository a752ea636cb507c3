"""What a corpus converts to Python values at once stays under the one rule for values held
at once (:func:`~turnfold.formats.tables.held_values`, spec X-1, Q-4), on the paths
``tests/test_table_value_caps.py`` left: iterating a corpus (its rows, a page at a time), a
DataFrame whose Arrow-typed (``ArrowDtype``) column sits beside object columns, and Arrow's
union types (dense and sparse), which counted one value a row whatever their children held.

The hostile tables are built here with pyarrow and pandas (Arrow's union arrays by
``UnionArray.from_dense``/``from_sparse``; Parquet holds no union, an Arrow IPC file does);
the cap is scaled down by the memory the process may use
(:func:`~turnfold.formats.compressed.memory_limit`), and what is held is measured by
``tracemalloc`` (bytes allocated), not by time.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.held_memory import lowered_memory, refusal, with_peak
from turnfold.formats import tables
from turnfold.model import AssistantText, UserMessage

pa = pytest.importorskip("pyarrow")

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
#: A process that may use this much memory converts at most 34,952 values at once.
_SMALL = 40 << 20
#: ...and this much, 3,495.
_TINY = 4 << 20


pytestmark = pytest.mark.usefixtures("cache_dir")


def _too_many(values: int, most: int) -> str:
    """What a refused cell's error says (:func:`~turnfold.formats.tables.too_many_values`)."""
    return f"not a transcript ({tables.too_many_values(values, most)}"


def _tiny(count: int) -> list[dict[str, str]]:
    """``count`` short messages, user and assistant in turn."""
    return [{"role": ("user", "assistant")[n % 2], "content": f"m{n % 97}"} for n in range(count)]


def _errors(corpus: Any) -> dict[str, Any]:
    return {row["key"]: row["error"] for row in corpus.rows}


# --- a corpus's rows, a page at a time ----------------------------------------------------------


def _steps_table(runs: int, steps: int) -> Any:
    """``runs`` runs of two messages, each with a ``steps`` column of ``steps`` short texts
    (a value each, as a list of a trajectory's step names)."""
    names = [f"step{n:05}" for n in range(steps)]
    return pa.table({
        "messages": pa.array([_tiny(2)] * runs, pa.list_(_MESSAGE)),
        "steps": pa.array([names] * runs, pa.list_(pa.string())),
    })  # fmt: skip


def test_X1_a_corpus_s_rows_are_converted_a_page_of_held_values_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """48 runs whose ``steps`` each hold just under the values a load converts at once: each
    row's metadata is kept (none is over), but iterating the corpus converted a page of 1,024
    rows, all 48 at once (48 times the limit's worth of objects). Now a page holds the rows
    whose values together stay under the limit (here one), and every row is still yielded,
    in order, whole."""
    most = lowered_memory(monkeypatch, _TINY)
    steps = most - 64  # the row's own columns (C-2) bring it to about the limit
    corpus = turnfold.scan(_steps_table(48, steps), workers=1)
    table = corpus.to_arrow()  # built once, in Arrow: not what is measured

    def iterate() -> list[tuple[str, int, str]]:
        seen = []
        for row in corpus:  # each row dropped as the next is read, as a loop over rows does
            seen.append((row["key"], len(row["steps"]), row["steps"][-1]))
        return seen

    seen, peak = with_peak(iterate)
    last = f"step{steps - 1:05}"
    assert seen == [(f"#{n}", steps, last) for n in range(48)]
    assert peak < most * tables.VALUE_BYTES  # the limit's worth (1 MB); 48 rows were 11 MB
    assert corpus.rows == table.to_pylist()  # the same rows as one conversion of them all


def test_X1_held_pages_hold_no_more_values_than_a_load_converts_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pages a corpus is iterated by, counted: each holds at most the limit's values, or
    one row (a row of more, as a corpus row of capped metadata and its own columns can be);
    together they are the table, in order. Rows of a few values fill a page up to the limit."""
    most = lowered_memory(monkeypatch, _TINY)
    rows = [1, most - 10, 5, 4, most + 20, 3, 2] + [most // 4] * 9
    table = pa.table({"steps": [list(range(n - 1)) for n in rows]})
    pages = list(tables.held_pages(table))
    counts = [tables._values(page) for page in pages]
    assert list(itertools.chain.from_iterable(counts)) == rows
    # 1 + (most - 10) + 5 + 4 is the limit; the row over it alone; 3 + 2 and three quarters.
    assert [len(page) for page in counts] == [4, 1, 5, 4, 2]
    for page in counts:
        assert sum(page) <= most or len(page) == 1
    assert pa.Table.from_batches(pages).equals(table)
    small = pa.table({"n": list(range(3000))})
    assert [page.num_rows for page in tables.held_pages(small)] == [1024, 1024, 952]


# --- a DataFrame of Arrow-typed and object columns ----------------------------------------------


def _mixed_frame(count: int, at: int = 1) -> Any:
    """Three runs in an ``ArrowDtype`` column, row ``at`` of ``count`` messages, beside an
    object column (so the frame is not Arrow's throughout)."""
    pd = pytest.importorskip("pandas")
    runs = [_tiny(1), _tiny(2), _tiny(3)]
    runs[at] = _tiny(count)
    table = pa.table({"messages": pa.array(runs, pa.list_(_MESSAGE))})
    frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    frame["task"] = pd.Series([{"id": n} for n in range(3)], dtype=object)
    return frame


def test_X1_an_arrow_typed_column_beside_object_columns_is_read_through_arrow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An ``ArrowDtype`` messages column in a frame that also has an object column: converted
    whole by ``tolist()`` before (every row at once, the hostile row uncapped), and row by row
    uncapped by ``corpus[key]`` and ``load(frame, sample=n)``. Now read through Arrow a few
    rows at a time, and a row of more values than the limit is refused, naming it."""
    most = lowered_memory(monkeypatch, _SMALL)
    frame = _mixed_frame(60_000)
    said = f"<table>, row 1: {_too_many(1 + 3 * 60_000, most)}"
    corpus = turnfold.scan(frame, workers=1)
    errors = _errors(corpus)
    assert errors["#1"].startswith(said)
    assert errors["#0"] is None
    assert errors["#2"] is None
    assert [row["task"] for row in corpus.rows] == [{"id": n} for n in range(3)]
    raised, peak = with_peak(lambda: refusal(lambda: turnfold.load(frame, sample=1)))
    assert str(raised).startswith(said)
    assert peak < most * tables.VALUE_BYTES // 2  # its 60,000 messages are never converted
    assert str(refusal(lambda: corpus["#1"])).startswith(said)
    assert [type(e) for e in corpus["#2"].entries] == [UserMessage, AssistantText, UserMessage]


def test_X1_an_arrow_typed_first_row_is_neither_converted_for_its_kind_nor_its_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hostile run in row 0: a column's kind was told by converting its first cells, and
    a later row's load read row 0 for the dataset's format, both uncapped. Now the kind is the
    column's Arrow type, and row 0 is read capped (refused, so no format is learnt from it)."""
    most = lowered_memory(monkeypatch, _SMALL)
    frame = _mixed_frame(60_000, at=0)
    loaded, peak = with_peak(lambda: turnfold.load(frame, sample=2))
    assert len(loaded.entries) == 3
    assert peak < most * tables.VALUE_BYTES // 2
    errors = _errors(turnfold.scan(frame, workers=1))
    assert errors["#0"].startswith(f"<table>, row 0: {_too_many(1 + 3 * 60_000, most)}")
    assert errors["#1"] is None


def test_X1_a_split_run_of_an_arrow_typed_and_an_object_column_is_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A prompt-completion frame: ``prompt`` an object column, ``completion`` an
    ``ArrowDtype`` one whose row 1 holds 60,000 messages. The rows of both were converted
    whole by ``to_dict("records")``; now the Arrow column is read capped, the object column as
    it is held, and each row is the run of both."""
    pd = pytest.importorskip("pandas")
    most = lowered_memory(monkeypatch, _SMALL)
    prompts = [[{"role": "user", "content": f"task {n}"}] for n in range(3)]
    replies = [[{"role": "assistant", "content": f"done {n}"}] for n in range(3)]
    replies[1] = [{"role": "assistant", "content": "x"}] * 60_000
    completion = pa.table({"completion": pa.array(replies, pa.list_(_MESSAGE))})
    frame = completion.to_pandas(types_mapper=pd.ArrowDtype)
    frame.insert(0, "prompt", pd.Series(prompts, dtype=object))
    corpus = turnfold.scan(frame, workers=1)
    errors = _errors(corpus)
    assert errors["#1"].startswith(f"<table>, row 1: {_too_many(1 + 3 * 60_000, most)}")
    assert errors["#0"] is None
    assert errors["#2"] is None
    texts = [getattr(e, "text", None) for e in corpus["#2"].entries]
    assert texts == ["task 2", "done 2"]
    assert [getattr(e, "text", None) for e in turnfold.load(frame, sample=0).entries] == [
        "task 0", "done 0"]  # fmt: skip


# --- union types ---------------------------------------------------------------------------------

_PART = pa.struct([("type", pa.string()), ("text", pa.string())])


def _union_contents(contents: list[Any], mode: str) -> Any:
    """A ``content`` column that is text or a list of parts, as an Arrow union of ``mode``
    (type codes 3 and 7, not the children's places)."""
    codes = [7 if isinstance(content, list) else 3 for content in contents]
    texts = [c for c in contents if not isinstance(c, list)]
    parts = [c for c in contents if isinstance(c, list)]
    kinds = pa.array(codes, pa.int8())
    if mode == "dense":
        places, seen = [], {3: 0, 7: 0}
        for code in codes:
            places.append(seen[code])
            seen[code] += 1
        children = [pa.array(texts, pa.string()), pa.array(parts, pa.list_(_PART))]
        return pa.UnionArray.from_dense(kinds, pa.array(places, pa.int32()), children,
                                        ["text", "parts"], [3, 7])  # fmt: skip
    text_child = pa.array([None if isinstance(c, list) else c for c in contents], pa.string())
    parts_child = pa.array([c if isinstance(c, list) else None for c in contents],
                           pa.list_(_PART))  # fmt: skip
    return pa.UnionArray.from_sparse(kinds, [text_child, parts_child], ["text", "parts"], [3, 7])


@pytest.mark.parametrize("mode", ["dense", "sparse"])
def test_X1_a_union_counts_the_values_of_the_child_each_row_holds(mode: str) -> None:
    """A union counted one value a row: its children's values are what each row converts to."""
    contents = ["hi", [{"type": "text", "text": "a"}] * 4, None, [], "yo",
                [{"type": "text", "text": "b"}] * 2]  # fmt: skip
    union = _union_contents(contents, mode)
    assert union.to_pylist() == contents
    assert tables._values(pa.record_batch({"c": union})) == [1, 13, 1, 1, 1, 7]
    sliced = union.slice(1, 4)  # Arrow's type codes and offsets of a slice start at its own
    assert tables._values(pa.record_batch({"c": sliced})) == [13, 1, 1, 1]
    assert tables._values(pa.record_batch({"c": union.slice(5)})) == [7]


def _union_runs(parts: int, mode: str) -> Any:
    """Three runs of a user and an assistant message whose ``content`` is a union of text and
    parts; row 1's user message holds ``parts`` parts (60,000: 180,001 values to convert,
    four values to a count of one a row)."""
    contents = ["hi", "hello", [{"type": "text", "text": "x"}] * parts, "ok", "bye", "ciao"]
    content = _union_contents(contents, mode)
    roles = pa.array(["user", "assistant"] * 3)
    messages = pa.StructArray.from_arrays([roles, content], ["role", "content"])
    column = pa.ListArray.from_arrays(pa.array([0, 2, 4, 6], pa.int32()), messages)
    return pa.table({"messages": column})


@pytest.mark.parametrize("mode", ["dense", "sparse"])
def test_X1_a_hostile_union_column_is_counted_by_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A run whose message content is a union holding 60,000 parts: counted as a few values,
    so converted whole, by a scan and by a load, of the table and of its Arrow file. Now
    refused, naming the row and the limit; the other runs read."""
    ipc = pytest.importorskip("pyarrow.ipc")
    most = lowered_memory(monkeypatch, _SMALL)
    table = _union_runs(60_000, mode)
    values = 1 + 3 + (1 + 1 + (1 + 3 * 60_000))  # the list, a message, a message of parts
    said = _too_many(values, most)
    errors = _errors(turnfold.scan(table, workers=1))
    assert errors["#1"].startswith(f"<table>, row 1: {said}")
    assert errors["#0"] is None
    assert errors["#2"] is None
    raised, peak = with_peak(lambda: refusal(lambda: turnfold.load(table, sample=1)))
    assert str(raised).startswith(f"<table>, row 1: {said}")
    assert peak < most * tables.VALUE_BYTES // 2
    path = tmp_path / "runs.arrow"
    with ipc.new_file(path, table.schema) as writer:
        writer.write_table(table)
    errors = _errors(turnfold.scan(path, workers=1, cache=False))
    assert errors[f"{path}#1"].startswith(f"{path}, row 1: {said}")
    assert errors[f"{path}#2"] is None
    assert [e.text for e in turnfold.load(path, sample=2).entries] == ["bye", "ciao"]


def test_X1_a_union_of_other_columns_is_left_out_by_what_its_children_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run's metadata column that is a dense union of a number and a list: row 1's list of
    100,000 numbers was counted as one value and kept; now it is left out with a warning."""
    most = lowered_memory(monkeypatch, _SMALL)
    numbers = pa.array([list(range(100_000))], pa.list_(pa.int64()))
    children = [pa.array([7, 9], pa.int64()), numbers]
    steps = pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()),
                                     pa.array([0, 0, 1], pa.int32()), children)  # fmt: skip
    table = pa.table({"messages": pa.array([_tiny(2)] * 3, pa.list_(_MESSAGE)), "steps": steps})
    warned = rf"<table>: the column 'steps' in row 1 holds 100,001 values.*{most:,}"
    with pytest.warns(UserWarning, match=warned):
        corpus = turnfold.scan(table, workers=1)
    assert [row["steps"] for row in corpus.rows] == [7, None, 9]
    assert {row["error"] for row in corpus.rows} == {None}


# --- a table source's own columns read into the corpus's rows -----------------------------------


def test_X1_a_table_s_generation_ms_becomes_durations_in_arrow_not_a_list_of_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verifiers rollout's ``generation_ms`` fills the rows' ``duration_s`` (C-1): it was
    converted to a Python number per row, every row at once (200,000 rows: some 13 MB of
    objects, past the limit's worth). Now computed in Arrow; the same durations (0, negative
    and null: not timed)."""
    from turnfold.corpus import _wrapper_columns

    most = lowered_memory(monkeypatch, _TINY)
    count = 200_000
    rows = pa.table({"duration_s": pa.nulls(count, pa.float64())})
    took = pa.array([None, 0, -5, 1500, 2.5, *range(count - 5)], pa.float64())
    kept, peak = with_peak(lambda: _wrapper_columns(rows, pa.table({"generation_ms": took})))
    assert peak < most * tables.VALUE_BYTES
    durations = kept.column("duration_s")
    assert durations.slice(0, 7).to_pylist() == [None, None, None, 1.5, 0.0025, None, 0.001]
    assert durations.null_count == 4
    ints = pa.table({"generation_ms": pa.array([1500, 0, None], pa.int64())})
    three = pa.table({"duration_s": pa.array([None, 2.0, None], pa.float64())})
    assert _wrapper_columns(three, ints).column("duration_s").to_pylist() == [1.5, 2.0, None]
