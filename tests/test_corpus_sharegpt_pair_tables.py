"""Runs held over columns of a table (spec C-1): LLaMA-Factory's ``sharegpt`` preference rows
(``conversations``, and ``chosen`` and ``rejected``, one message each) as a Parquet file, a
pyarrow Table or a pandas DataFrame, read as the row is read as JSON; a column whose own name
holds ``+`` named as the messages.

The pairs are the first three rows of LLaMA-Factory's ``data/dpo_en_demo.json`` (Apache-2.0;
tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import table_source
from turnfold.formats import tables

PAIRS = (
    Path(__file__).parent / "fixtures/datasets/llama-factory_sharegpt_dpo-en-demo_three-rows.json"
)


pytestmark = pytest.mark.usefixtures("cache_dir")


def _pairs() -> list[dict[str, Any]]:
    return [{**row, "source": f"demo-{n}"} for n, row in enumerate(json.loads(PAIRS.read_text()))]


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_table_of_sharegpt_pairs_reads_both_replies_as_the_json_row_does(
    kind: str, tmp_path: Path
) -> None:
    """Only ``conversations`` was read: each run was its prompt alone, both replies lost."""
    rows = _pairs()
    corpus = turnfold.scan(table_source(kind, tmp_path, rows, "pairs.parquet"), workers=1)
    assert (len(corpus), corpus.errors) == (3, 0)
    arrow = corpus.to_arrow()
    assert not {"conversations", "chosen", "rejected"} & set(arrow.column_names)
    assert arrow.column("source").to_pylist() == ["demo-0", "demo-1", "demo-2"]
    for key, row in zip(corpus.keys, rows, strict=True):
        read = corpus[key]
        assert read.entries == turnfold.load(row).entries
        assert read.metadata["source_format"] == "sharegpt"
        assert [(type(e).__name__, e.text, e.meta) for e in read.entries[-2:]] == [  # type: ignore[attr-defined]
            ("AssistantText", row["rejected"]["value"], {"rejected": True}),
            ("AssistantText", row["chosen"]["value"], {}),
        ]


def test_C1_load_reads_one_sharegpt_pair_of_a_parquet_file(tmp_path: Path) -> None:
    rows = _pairs()
    path = table_source("parquet", tmp_path, rows, "pairs.parquet")
    for place in (0, 2):
        assert turnfold.load(path, sample=place).entries == turnfold.load(rows[place]).entries


def test_C1_the_pair_columns_are_picked_only_when_the_replies_are_messages() -> None:
    kinds = {"conversations": "list", "chosen": "object", "rejected": "object"}
    names = list(kinds)
    assert tables.messages_column(names, None, kinds) == "conversations+chosen+rejected"
    # Replies as text (some other dataset's columns): ``conversations`` is the run, as before.
    text = {**kinds, "chosen": "text", "rejected": "text"}
    assert tables.messages_column(names, None, text) == "conversations"


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_column_whose_name_holds_a_plus_is_that_column(kind: str, tmp_path: Path) -> None:
    """``messages="prompt+completion"`` read ``prompt`` and ``completion`` although a column
    of that very name held the run; a table whose one column of messages is so named raised
    (no column ``prompt``)."""
    whole = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    rows = [{"prompt+completion": whole, "prompt": [{"role": "user", "content": "other"}],
             "completion": [{"role": "assistant", "content": "no"}], "id": 7}]  # fmt: skip
    source = table_source(kind, tmp_path, rows, "runs.parquet")
    corpus = turnfold.scan(source, messages="prompt+completion", workers=1, cache=False)
    assert corpus.errors == 0
    assert [e.text for e in corpus[corpus.keys[0]].entries] == ["2+2?", "4"]  # type: ignore[attr-defined]
    assert {"prompt", "completion", "id"} <= set(corpus.to_arrow().column_names)
    assert "prompt+completion" not in corpus.to_arrow().column_names
    alone = table_source(kind, tmp_path, [{"a+b": whole, "id": 7}], "alone.parquet")
    corpus = turnfold.scan(alone, workers=1, cache=False)
    assert [e.text for e in corpus[corpus.keys[0]].entries] == ["2+2?", "4"]  # type: ignore[attr-defined]
    assert corpus.to_arrow().column("id").to_pylist() == [7]


def test_C1_read_columns_splits_a_name_only_when_no_column_bears_it() -> None:
    assert tables.read_columns("prompt+completion") == ["prompt", "completion"]
    assert tables.read_columns("prompt+completion", ["prompt+completion"]) == ["prompt+completion"]
