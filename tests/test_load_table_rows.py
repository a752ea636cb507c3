"""``turnfold.load(table, sample=n)`` of a table of runs in memory (spec §10, C-1, L-4, X-1).

A pandas or Polars DataFrame, a pyarrow Table (or record batch) and a Hugging Face ``Dataset``
hold a run per row. ``load`` refused them ("holds many runs: turnfold.scan(table) reads them
all"); it now reads row ``n`` as ``scan(table)["#n"]`` does (the same messages column,
prompt-completion and preference rows, values ``datasets`` typed ``Json``, the other columns
as metadata), a table of one row with no ``sample``; a table of several rows without one, or a
row it does not hold, is a ``SampleSelectionError`` saying how many rows it holds; a row that
cannot be read is an error naming it (``<table>, row N: …``, as the scan's error row says).

The tables are made with the real pandas, Polars, pyarrow and ``datasets`` (``Dataset``,
``load_dataset("json")`` of the fixtures' JSON lines, offline); the truth is the scan of the
same table, and turnfold's own reading of those JSON lines as a file of runs.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus.index import CACHE_ENV
from turnfold.formats.errors import SampleSelectionError, TranscriptFormatError

pandas = pytest.importorskip("pandas")
polars = pytest.importorskip("polars")
datasets = pytest.importorskip("datasets")

FIXTURES = Path(__file__).parent / "fixtures" / "datasets"
ROLLOUTS = FIXTURES / "rollouts.jsonl"
#: A conversational prompt-completion dataset: verifiers' ``vf-eval`` rows.
PROMPT_COMPLETION = FIXTURES / "verifiers_results_math-python_gpt-5-nano_two-rows.jsonl"
#: Preference pairs: LLaMA-Factory's ``chosen_messages`` / ``rejected_messages`` rows.
PAIRS = FIXTURES / "llama-factory_v1_dpo-demo_three-rows.jsonl"
#: Preference pairs in ShareGPT: ``conversations`` with a ``chosen`` and a ``rejected`` reply.
SHAREGPT_PAIRS = FIXTURES / "llama-factory_sharegpt_dpo-en-demo_three-rows.json"


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own index, never the user's, and ``datasets`` never goes online."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "index"))
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    datasets.disable_progress_bars()


def _rows(count: int) -> list[dict[str, Any]]:
    return [{"task_id": f"t{i}", "reward": i / 10, "messages": trajectory(i)}
            for i in range(count)]  # fmt: skip


#: Each kind of table in memory, made of an Arrow table of runs.
KINDS: dict[str, Callable[[pa.Table], Any]] = {
    "pyarrow": lambda table: table,
    "record batch": lambda table: table.combine_chunks().to_batches()[0],
    "pandas": lambda table: table.to_pandas(),
    "polars": lambda table: polars.from_arrow(table),
    "datasets": lambda table: datasets.Dataset(table),
}


@pytest.mark.parametrize("kind", KINDS)
def test_C1_load_reads_the_row_sample_names_as_the_scan_keys_it(kind: str) -> None:
    """``load(table, sample=n)`` is ``scan(table)["#n"]``: its messages, and its other
    columns as metadata (the reward its score); ``sample`` may be the row's number as text."""
    table = KINDS[kind](pa.Table.from_pylist(_rows(5)))
    corpus = turnfold.scan(table, workers=1)
    for n in range(5):
        loaded = turnfold.load(table, sample=n)
        assert loaded == corpus[f"#{n}"]
        assert loaded.entries == turnfold.load(trajectory(n)).entries
        assert loaded.metadata["task_id"] == f"t{n}"
        assert loaded.metadata["score"] == n / 10
    assert turnfold.load(table, sample="3") == corpus["#3"]


@pytest.mark.parametrize("kind", KINDS)
def test_C1_a_table_of_one_row_needs_no_sample(kind: str) -> None:
    """A table of one run is that run, as a log of one sample is."""
    table = KINDS[kind](pa.Table.from_pylist(_rows(1)))
    assert turnfold.load(table) == turnfold.scan(table, workers=1)["#0"]
    assert turnfold.load(table).metadata["task_id"] == "t0"


def _json_lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        rows: list[dict[str, Any]] = json.loads(text)
        return rows
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("path", "column", "source_format"),
    [
        (ROLLOUTS, "messages", "openai"),  # its messages typed List(Json()) by datasets
        (PROMPT_COMPLETION, "prompt+completion", "openai"),
        (PAIRS, "chosen_messages+rejected_messages", "llama-factory"),
        (SHAREGPT_PAIRS, "conversations+chosen+rejected", "sharegpt"),
    ],
)
def test_C1_load_chooses_the_columns_the_scan_chooses(
    path: Path, column: str, source_format: str, tmp_path: Path
) -> None:
    """A run in one column, split over a prompt and a completion, or a preference pair: the
    row read from the columns the scan reads, equal to the scan's run and to turnfold's own
    reading of the dataset's JSON lines (``load(path, sample=n)``), for a ``Dataset``
    ``load_dataset("json")`` made (whose varying fields it types ``Json``), a DataFrame of
    the rows, and the Polars frame of that ``Dataset``'s Arrow table."""
    dataset = datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf-cache")
    )
    frames = {
        "datasets": dataset,
        "pandas": pandas.DataFrame(_json_lines(path)),
        "polars": polars.from_arrow(dataset.with_format("arrow")[:]),
    }
    if path == ROLLOUTS:
        assert "Json" in repr(dataset.features["messages"])
    named = turnfold.scan(dataset, workers=1, messages=column)
    assert named.rows == turnfold.scan(dataset, workers=1).rows  # the column the scan chose
    for kind, table in frames.items():
        corpus = turnfold.scan(table, workers=1)
        assert corpus.rows[0]["error"] is None, kind
        for n in range(len(corpus)):
            loaded = turnfold.load(table, sample=n)
            assert loaded == corpus[f"#{n}"], (kind, n)
            truth = turnfold.load(path, sample=n)
            assert loaded.entries == truth.entries, (kind, n)
            assert loaded.metadata == truth.metadata, (kind, n)
            assert loaded.metadata["source_format"] == source_format


def test_C1_a_selected_dataset_is_read_in_its_rows_order() -> None:
    """A ``select``, ``shuffle`` or ``filter`` keeps the table and an index of rows: row ``n``
    is the ``n``-th of the selection, as the scan keys it."""
    picked = datasets.Dataset(pa.Table.from_pylist(_rows(6))).select([4, 1, 5])
    corpus = turnfold.scan(picked, workers=1)
    for n, task in enumerate((4, 1, 5)):
        loaded = turnfold.load(picked, sample=n)
        assert loaded == corpus[f"#{n}"]
        assert loaded.metadata["task_id"] == f"t{task}"


@pytest.mark.parametrize("kind", KINDS)
def test_L4_a_table_of_several_rows_without_sample_says_how_many_and_how_to_pick(
    kind: str,
) -> None:
    table = KINDS[kind](pa.Table.from_pylist(_rows(5)))
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(table)
    said = str(caught.value)
    assert said.startswith("<table>: a ")
    assert "holds 5 runs, a row each" in said
    assert "turnfold.load(table, sample=n), n its row (0 to 4" in said
    assert "turnfold.scan(table)" in said


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sample", [5, -1, "x", "#2", 2.0, True])
def test_L4_a_row_the_table_does_not_hold_is_the_same_error(kind: str, sample: Any) -> None:
    table = KINDS[kind](pa.Table.from_pylist(_rows(5)))
    with pytest.raises(SampleSelectionError, match=r"holds no run at sample=.*; it holds 5, a"):
        turnfold.load(table, sample=sample)


def test_L4_a_table_has_no_epochs_and_an_empty_one_no_runs() -> None:
    table = pa.Table.from_pylist(_rows(3))
    with pytest.raises(SampleSelectionError, match=r"has no epochs, not epoch=1; it holds 3"):
        turnfold.load(table, sample=0, epoch=1)
    with pytest.raises(SampleSelectionError, match=r"^<table>: a pyarrow Table of no rows holds"):
        turnfold.load(table.slice(0, 0))
    with pytest.raises(SampleSelectionError, match=r"a pandas DataFrame of no rows holds no"):
        turnfold.load(table.slice(0, 0).to_pandas(), sample=0)
    with pytest.raises(ValueError, match=r"^<table>, row 0 is read as openai, whose run says"):
        turnfold.load(table, sample=0, agent=object())


@pytest.mark.parametrize("kind", ["pyarrow", "pandas", "polars", "datasets"])
def test_L4_an_unreadable_row_is_an_error_naming_it_as_the_scans_error_row(kind: str) -> None:
    """A cell of JSON text that is no JSON, a null cell, messages of no format: the error
    names the row, word for word the scan's row's ``error``; the rows beside it read."""
    cells = [json.dumps(trajectory(0)), "{not json", None, json.dumps([{"foo": 1}])]
    table = KINDS[kind](pa.table({"messages": cells, "task_id": ["a", "b", "c", "d"]}))
    corpus = turnfold.scan(table, workers=1)
    errors = [row["error"] for row in corpus.rows]
    assert errors[0] is None
    assert turnfold.load(table, sample=0) == corpus["#0"]
    for n, why in ((1, "its messages are text that is no JSON"), (2, "its messages are null"),
                   (3, "its message 1: no known transcript structure")):  # fmt: skip
        with pytest.raises(TranscriptFormatError) as caught:
            turnfold.load(table, sample=n)
        assert str(caught.value) == errors[n]
        assert str(caught.value).startswith(f"<table>, row {n}: not a transcript ({why}")


def test_L4_no_column_named_as_messages_says_so_and_how_the_scan_reads_one() -> None:
    table = pa.Table.from_pylist([{"a": trajectory(0), "b": trajectory(1)}])
    with pytest.raises(ValueError, match=r"^<table>: which column holds the messages\?") as got:
        turnfold.load(table)
    assert "the columns are a, b" in str(got.value)
    assert "turnfold.scan(table, messages=<column>)['#n'] is row n's run" in str(got.value)


def test_C1_a_dataset_dict_and_a_streamed_dataset_say_how_to_load_one_run() -> None:
    """Neither is one table: a ``DatasetDict`` holds one per split, a streamed dataset reads
    one example at a time."""
    dataset = datasets.Dataset(pa.Table.from_pylist(_rows(3)))
    with pytest.raises(TypeError, match=r"a table per split: turnfold\.load\(dataset\['train'\]"):
        turnfold.load(datasets.DatasetDict(train=dataset))
    with pytest.raises(TypeError, match=r"without streaming=True, then turnfold\.load\(dataset,"):
        turnfold.load(dataset.to_iterable_dataset())


def test_C1_a_record_batch_scans_as_its_table() -> None:
    """``scan(record_batch)`` failed (``'RecordBatch' object has no attribute 'to_batches'``)
    though a record batch is taken as a table of runs; it scans as its table."""
    table = pa.Table.from_pylist(_rows(3))
    batch = table.combine_chunks().to_batches()[0]
    assert turnfold.scan(batch, workers=1).rows == turnfold.scan(table, workers=1).rows


#: The text of the run in the row that a load of another row must leave unconverted.
HUGE_CHARS = 48 * 1024 * 1024


@pytest.mark.parametrize("kind", ["pyarrow", "polars", "datasets"])
def test_X1_load_converts_the_row_it_reads_not_the_table(kind: str) -> None:
    """A table held in Arrow (a Polars frame's, a ``Dataset``'s, memory-mapped) is read a row
    at a time: a load of its first row converts neither the 48 MB run beside it nor its
    48 MB metadata to Python values (a conversion of the table would hold both)."""
    huge = "x" * HUGE_CHARS
    rows = [{"note": "small", "messages": trajectory(0)},
            {"note": huge, "messages": [{"role": "user", "content": huge}]}]  # fmt: skip
    table = KINDS[kind](pa.Table.from_pylist(rows))
    del huge, rows
    tracemalloc.start()
    try:
        loaded = turnfold.load(table, sample=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.metadata["note"] == "small"
    assert peak < HUGE_CHARS // 4
