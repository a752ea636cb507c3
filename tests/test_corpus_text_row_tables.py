"""Datasets whose runs are rows of text columns, scanned as a Parquet file, a pyarrow Table or a
pandas DataFrame (spec C-1): each row read as the same row of the dataset's JSON lines is
(alpaca, LLaMA-Factory's alpaca ranking, ms-swift's query-response and preference rows,
glaive-function-calling-v2); a ShareGPT row's ``system`` column read with its
``conversations`` (ToolACE's calls are known by the tools its system prompt declares); a row
that holds no conversation an ``error`` (C-7). The rows are the real ones of
tests/fixtures/datasets (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import turnfold
from tests.table_runs import table_source
from turnfold.formats import tables

DATASETS = Path(__file__).parent / "fixtures" / "datasets"
KINDS = ["parquet", "arrow", "pandas"]


pytestmark = pytest.mark.usefixtures("cache_dir")


def _rows(name: str) -> list[dict[str, Any]]:
    path = DATASETS / name
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return rows


def _filled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with every row's keys, null where a row lacks one, as a dataset's table holds
    them (``pyarrow.Table.from_pylist`` takes its columns from the first row alone)."""
    keys = list(dict.fromkeys(key for row in rows for key in row))
    return [{key: row.get(key) for key in keys} for row in rows]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("ms-swift_tests_alpaca_three-rows.jsonl", "instruction+output+input+system+history"),
        ("ms-swift_tests_swift-multi_three-rows.jsonl", "query+response+system+history"),
        (
            "ms-swift_customization-doc_dpo_three-rows.jsonl",
            "query+response+system+history+rejected_response",
        ),
        (
            "llama-factory_alpaca_preference_from-dpo-en-demo_three-rows.json",
            "instruction+chosen+rejected+input+system+history",
        ),
        ("glaive-function-calling-v2_rows-25475-107105.jsonl", "chat+system"),
    ],
)
def test_C1_a_table_of_text_rows_reads_each_row_as_its_json_line_is(
    kind: str, name: str, column: str, tmp_path: Path
) -> None:
    """Every row was an error: the text column named as messages are (glaive's ``chat``, an
    alpaca row's ``history``) or no column at all was taken for the run."""
    rows = _filled(_rows(name))
    corpus = turnfold.scan(table_source(kind, tmp_path, rows, "rows.parquet"), workers=1)
    assert corpus.errors == 0
    assert not set(tables.read_columns(column)) & set(corpus.to_arrow().column_names)
    lines = turnfold.scan(DATASETS / name, workers=1)
    for key, line_key in zip(corpus.keys, lines.keys, strict=True):
        read, expected = corpus[key], lines[line_key]
        assert read.entries == expected.entries
        assert read.metadata == expected.metadata
    kinds = tables.column_kinds(table_source("arrow", tmp_path, rows, "rows.parquet").schema)
    assert tables.messages_column(list(kinds), None, kinds) == column


@pytest.mark.parametrize("kind", KINDS)
def test_C1_glaive_rows_in_a_table_keep_their_calls_and_responses(
    kind: str, tmp_path: Path
) -> None:
    rows = _rows("glaive-function-calling-v2_rows-25475-107105.jsonl")
    corpus = turnfold.scan(table_source(kind, tmp_path, rows, "glaive.parquet"), workers=1)
    frame = corpus.to_pandas()
    assert frame["tool_calls"].tolist() == [1, 0]
    (call,) = corpus[corpus.keys[0]].tool_calls()
    assert (call.name, call.args, call.status) == (
        "detect_language",
        {"text": "Je suis un étudiant"},
        "unknown",
    )
    assert call.result is not None
    assert call.result.text == '{"language": "French"}'


@pytest.mark.parametrize("kind", KINDS)
def test_C1_a_sharegpt_table_reads_the_system_column_with_the_conversations(
    kind: str, tmp_path: Path
) -> None:
    """The ``system`` column was row metadata only: ToolACE's calls, known by the tools its
    system prompt declares, were read as text, and their results as calls of their own with a
    warning each."""
    rows = _rows("toolace_data_one-row.json")
    corpus = turnfold.scan(table_source(kind, tmp_path, rows, "toolace.parquet"), workers=1)
    assert corpus.to_pandas()[["tool_calls", "warnings"]].values.tolist() == [[2, 0]]
    run = corpus[corpus.keys[0]]
    assert run.warnings == []
    assert run.metadata["system"] == rows[0]["system"]
    calls = run.tool_calls()
    assert [(c.name, c.args) for c in calls] == [
        ("GetCompetitions", {}),
        ("Get Manager Placeholder Image", {"sport": "football"}),
    ]
    assert all(c.result is not None and c.result.text for c in calls)


@pytest.mark.parametrize("kind", KINDS)
def test_C1_a_table_s_media_column_names_the_files_its_tags_stand_for(
    kind: str, tmp_path: Path
) -> None:
    """Read from a table, an ms-swift row's ``<image>`` tags stayed tags: the ``images``
    column (empty in the first row) was not read with the messages, as its JSON line is."""
    rows = _filled(_rows("ms-swift_agent_custom-dataset-doc_two-rows.jsonl"))
    corpus = turnfold.scan(table_source(kind, tmp_path, rows, "media.parquet"), workers=1)
    assert corpus.to_pandas()["title"].tolist()[1] == "[image: desktop.png]现在几点了？"
    lines = turnfold.scan(DATASETS / "ms-swift_agent_custom-dataset-doc_two-rows.jsonl", workers=1)
    assert corpus[corpus.keys[1]].entries == lines[lines.keys[1]].entries


def test_C1_a_dataframe_of_records_missing_a_column_reads_their_nan_as_absent() -> None:
    """pandas fills a record's missing ``input`` and ``history`` with NaN: the row was no
    alpaca row, an error."""
    rows = _rows("ms-swift_tests_alpaca_three-rows.jsonl")  # rows 1 and 2 lack some keys
    corpus = turnfold.scan(pd.DataFrame(rows), workers=1)
    assert corpus.errors == 0
    assert [e.text for e in corpus[corpus.keys[1]].entries] == ["aaaaa", "ccccc"]  # type: ignore[attr-defined]
    assert [e.text for e in corpus[corpus.keys[2]].entries] == ["AAAAA\nBBBBB", "CCCCC"]  # type: ignore[attr-defined]


def test_C7_a_row_holding_no_conversation_is_a_row_with_its_error() -> None:
    good = _rows("rollouts.jsonl")[0]
    frame = pd.DataFrame(
        [good, {**good, "messages": "not a conversation"}, {**good, "messages": None}]
    )
    corpus = turnfold.scan(frame, workers=1)
    rows = corpus.to_pandas()
    assert len(rows) == 3
    assert rows["error"].isna().tolist() == [True, False, False]
    assert rows["tool_calls"].tolist()[0] == 1
    assert "text that is no JSON: 'not a conversation'" in rows["error"][1]
    assert "its messages are null" in rows["error"][2]
