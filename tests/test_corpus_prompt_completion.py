"""A table whose runs are split over two columns (spec C-1): ``prompt``, the system and user
messages, and ``completion``, the model's messages and its tools' results, as TRL's
conversational prompt-completion datasets and verifiers' / prime-rl's rollouts hold them. A
Parquet file, a pyarrow Table or a pandas DataFrame of them scans as whole runs, each read as
``load({"prompt": ..., "completion": ...})`` reads its row; the other columns are the row's
metadata."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import turnfold
from tests.table_runs import table_source
from turnfold.corpus import engine as engine_module
from turnfold.formats import tables
from turnfold.model import UserMessage

VERIFIERS = (
    Path(__file__).parent
    / "fixtures/datasets/verifiers_results_math-python_gpt-5-nano_two-rows.jsonl"
)
KEPT = ("prompt", "completion", "task", "answer", "reward")


pytestmark = pytest.mark.usefixtures("cache_dir")


def _rows() -> list[dict[str, Any]]:
    """Three verifiers rollouts: the fixture's two (a Python call and its result in each
    completion), and a third made of the first, which failed (reward 0) after two calls."""
    found = [json.loads(line) for line in VERIFIERS.read_text().splitlines() if line.strip()]
    rows = [{key: row[key] for key in KEPT} for row in found]
    third = copy.deepcopy(rows[0])
    third["prompt"][1]["content"] = "What is 6 * 7? Use python."
    call, result = third["completion"][:2]
    third["completion"] = [call, result, call, result, {"role": "assistant", "content": "41"}]
    third["reward"] = 0.0
    return [*rows, third]


def _pair(row: dict[str, Any]) -> dict[str, Any]:
    return {"prompt": row["prompt"], "completion": row["completion"]}


def _source(kind: str, tmp_path: Path, rows: list[dict[str, Any]]) -> Any:
    return table_source(kind, tmp_path, rows, "results.parquet")


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_run_split_over_prompt_and_completion_scans_whole(kind: str, tmp_path: Path) -> None:
    """It raised "which column holds the messages?"; each row is now its whole run."""
    rows = _rows()
    corpus = turnfold.scan(_source(kind, tmp_path, rows), workers=1)
    assert len(corpus) == 3
    assert corpus.errors == 0
    arrow = corpus.to_arrow()
    assert "prompt" not in arrow.column_names
    assert "completion" not in arrow.column_names
    assert arrow.column("task").to_pylist() == [row["task"] for row in rows]
    for key, scanned, row in zip(corpus.keys, corpus.rows, rows, strict=True):
        expected = turnfold.load(_pair(row))
        counted = turnfold.scan([expected], workers=1).rows[0]  # the row of the run alone
        assert scanned["turns"] == counted["turns"]
        assert scanned["tool_calls"] == counted["tool_calls"]
        assert scanned["score"] == row["reward"]
        assert scanned["title"]  # the user's prompt, which the completion alone lacks
        transcript = corpus[key]
        assert transcript.entries == expected.entries
        first = transcript.entries[0]
        assert isinstance(first, UserMessage)
        assert first.text == row["prompt"][1]["content"]
        assert transcript.metadata["system"] == row["prompt"][0]["content"]
    assert [row["tool_calls"] for row in corpus.rows] == [1, 1, 2]


def test_C1_load_reads_one_row_of_a_prompt_completion_parquet_file(tmp_path: Path) -> None:
    rows = _rows()
    path = _source("parquet", tmp_path, rows)
    for place in (0, 2):
        loaded = turnfold.load(path, sample=place)
        assert loaded.entries == turnfold.load(_pair(rows[place])).entries
        assert isinstance(loaded.entries[0], UserMessage)


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_messages_completion_still_reads_the_completion_alone(kind: str, tmp_path: Path) -> None:
    rows = _rows()
    corpus = turnfold.scan(_source(kind, tmp_path, rows), messages="completion", workers=1)
    assert "prompt" in corpus.to_arrow().column_names  # kept as the row's metadata
    for key, row in zip(corpus.keys, rows, strict=True):
        assert corpus[key].entries == turnfold.load(row["completion"]).entries


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_messages_prompt_plus_completion_names_the_pair(kind: str, tmp_path: Path) -> None:
    """A column named as messages are wins unless the pair is named; a pair lacking one of its
    columns is an error naming it."""
    rows = [{**row, "history": row["completion"]} for row in _rows()]
    source = _source(kind, tmp_path, rows)
    assert turnfold.scan(source, workers=1).rows[0]["title"] is None  # ``history``'s run
    corpus = turnfold.scan(source, messages="prompt+completion", workers=1)
    assert "history" in corpus.to_arrow().column_names
    assert corpus[corpus.keys[1]].entries == turnfold.load(_pair(rows[1])).entries
    alone = _source(kind, tmp_path, [{"prompt": row["prompt"]} for row in rows])
    with pytest.raises(ValueError, match=r"no column 'completion'; the columns are prompt"):
        turnfold.scan(alone, messages="prompt+completion", workers=1)


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_prompt_column_without_a_completion_is_the_messages(kind: str, tmp_path: Path) -> None:
    rows = [{"prompt": row["prompt"], "reward": row["reward"]} for row in _rows()]
    corpus = turnfold.scan(_source(kind, tmp_path, rows), workers=1)
    for key, row in zip(corpus.keys, rows, strict=True):
        assert corpus[key].entries == turnfold.load(row["prompt"]).entries


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_completion_column_of_text_is_the_model_s_reply(kind: str, tmp_path: Path) -> None:
    """TRL's conversational prompt with a sampled reply as text: the pair too."""
    rows = [{"prompt": row["prompt"], "completion": f"\\boxed{{{row['answer']}}}",
             "reward": row["reward"]} for row in _rows()]  # fmt: skip
    corpus = turnfold.scan(_source(kind, tmp_path, rows), workers=1)
    for key, scanned, row in zip(corpus.keys, corpus.rows, rows, strict=True):
        expected = turnfold.load(_pair(row))
        assert corpus[key].entries == expected.entries
        assert scanned["turns"] == 1
        assert scanned["score"] == row["reward"]


def test_C4_the_pair_and_the_completion_are_two_readings_of_a_file(tmp_path: Path) -> None:
    """The index's entry of a file read as the pair is not the completion's."""
    path = _source("parquet", tmp_path, _rows())
    whole = turnfold.scan(path, workers=1)
    assert turnfold.scan(path, workers=1).cached == 1
    alone = turnfold.scan(path, messages="completion", workers=1)
    assert alone.read == 1
    assert alone.rows[0]["title"] is None
    assert whole.rows[0]["title"]


def test_C5_a_prompt_completion_parquet_file_is_read_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part's weight counts both columns, and each worker reads its rows as pairs."""
    rows = [{**row, "prompt": copy.deepcopy(row["prompt"])} for row in _rows() * 30]
    for place, row in enumerate(rows):
        row["prompt"][1]["content"] += f" ({place})" + " padding" * 500
    path = tmp_path / "results.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=20)
    whole = turnfold.scan(path, workers=1, cache=False)
    monkeypatch.setattr(tables, "PART_BYTES", 50_000)
    monkeypatch.setattr(tables, "PART_ROWS", 8)
    pair = tables.parts(str(path), tables.PROMPT_COMPLETION, 2) or []
    completion = tables.parts(str(path), "completion", 2) or []
    assert len(pair) > len(completion)  # the prompts' bytes are the pair's too
    part = pair[1][0]
    cell = next(tables.cells(str(path), tables.PROMPT_COMPLETION, part))
    assert set(cell) == {"prompt", "completion"}
    assert tables.read_messages(cell).entries == turnfold.load(_pair(rows[part.start])).entries
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert [hit.key for hit in split.search("(7) padding")] == [f"{path}#7"]
