"""Files whose records are runs (spec C-1, C-7): a dataset kept as JSON lines (``train.jsonl``,
one trajectory per line) or as one JSON array of rows is scanned one row per record, keyed
``path#n``, each read as ``load(record)`` reads it; ``load(path)`` says how to read them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.comparison import compare_rows
from turnfold.corpus import summarize
from turnfold.corpus.discover import Item
from turnfold.formats.errors import TranscriptFormatError

MESSAGES = Path(__file__).parent / "fixtures" / "messages"
SHAREGPT = MESSAGES / "sharegpt_llama-factory_function-calls.json"


def _trajectory(i: int) -> list[dict[str, Any]]:
    arguments = json.dumps({"command": f"ls {i}"})
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "bash", "arguments": arguments}}  # fmt: skip
    return [
        {"role": "user", "content": f"Task {i}: list the files"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": f"file_{i}.py"},
        {"role": "assistant", "content": f"Done with task {i}."},
    ]


def _rows(count: int) -> list[dict[str, Any]]:
    return [{"task_id": f"t{i}", "reward": i % 2, "messages": _trajectory(i)} for i in range(count)]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(folder))
    return folder


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_C1_json_lines_of_trajectories_are_one_row_each(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "train.jsonl", _rows(3))
    corpus = turnfold.scan(path, workers=1)
    assert corpus.keys == [f"{path}#{n}" for n in range(3)]
    rows = corpus.to_pandas()
    assert list(rows["sample"]) == ["0", "1", "2"]
    assert list(rows["format"]) == ["openai"] * 3
    assert list(rows["tool_calls"]) == [1, 1, 1]
    assert rows["error"].isna().all()
    # Counted as a table of the same rows counts them (C-2: one definition of each count).
    pandas = pytest.importorskip("pandas")
    table = turnfold.scan(pandas.DataFrame(_rows(3)), workers=1).to_pandas()
    for column in ("format", "title", "turns", "tool_calls", "failed_tools", "errors"):
        assert list(rows[column]) == list(table[column]), column
    opened = corpus[f"{path}#2"]
    assert opened == turnfold.load(_rows(3)[2])
    assert opened.metadata["task_id"] == "t2"  # the row's other fields, as load(record) keeps them
    assert list(rows["score"]) == [0, 1, 0]  # a rollout's reward is its score (H-6)
    assert corpus.tool_calls().num_rows == 3


def test_C1_a_json_array_of_sharegpt_rows_and_a_compressed_file(tmp_path: Path) -> None:
    row = json.loads(SHAREGPT.read_text())
    short = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}
    array = tmp_path / "glaive_demo.json"
    array.write_text(json.dumps([row, short], indent=2))
    packed = tmp_path / "rollouts.jsonl.gz"
    packed.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in _rows(2)).encode()))
    corpus = turnfold.scan([array, packed], workers=1)
    rows = corpus.to_pandas()
    assert list(rows["key"]) == [f"{array}#0", f"{array}#1", f"{packed}#0", f"{packed}#1"]
    assert list(rows["format"]) == ["sharegpt", "sharegpt", "openai", "openai"]
    assert list(rows["tool_calls"]) == [4, 0, 1, 1]
    assert corpus[f"{array}#0"].tool_calls() == turnfold.load(row).tool_calls()
    assert corpus[f"{packed}#1"] == turnfold.load(_rows(2)[1])


def test_L4_load_of_a_file_of_runs_says_how_to_read_them(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "train.jsonl", _rows(3))
    with pytest.raises(TranscriptFormatError, match=r"a file of runs .*under 'messages'.*scan"):
        turnfold.load(path)
    # sample= names one by its place, as the scan keys it (path#n).
    assert turnfold.load(path, sample=2) == turnfold.load(_rows(3)[2])
    assert turnfold.load(path, sample="0") == turnfold.load(_rows(3)[0])
    with pytest.raises(ValueError, match=r"holds 3 runs: no sample=3 \(they are 0 to 2\)"):
        turnfold.load(path, sample=3)
    with pytest.raises(ValueError, match=r"a record's place in it .*not sample='t1'"):
        turnfold.load(path, sample="t1")
    # A format with samples of its own still reads them (an OTLP file's records hold lists).
    otlp = (
        Path(__file__).parent / "fixtures" / "traces" / "otlp" / "genai_openai_weather-agent.jsonl"
    )
    with pytest.raises(ValueError, match=r"no conversation '0'; it holds"):
        turnfold.load(otlp, sample="0")
    one = _jsonl(tmp_path / "one.jsonl", _rows(1))  # one run: a document load() reads
    assert turnfold.load(one) == turnfold.load(_rows(1)[0])


def test_C7_a_record_that_cannot_be_read_is_a_row_with_its_error(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    lines = [json.dumps(r) for r in _rows(4)]
    lines[1] = lines[1][:40]  # cut off
    lines[2] = json.dumps({"task_id": "t2", "messages": [{"speaker": "nobody"}]})
    path.write_text("\n".join(lines) + "\n")
    corpus = turnfold.scan(path, workers=1)
    rows = corpus.to_pandas()
    assert len(rows) == 4
    assert corpus.errors == 2
    assert rows["error"][1].startswith("line 2: invalid JSON")
    assert "not a transcript" in rows["error"][2]
    assert list(rows["tool_calls"][[0, 3]]) == [1, 1]


def test_C4_a_file_of_runs_comes_from_the_index_and_a_grown_one_is_read_again(
    tmp_path: Path,
) -> None:
    path = _jsonl(tmp_path / "train.jsonl", _rows(2))
    first = turnfold.scan(tmp_path, workers=1)
    again = turnfold.scan(tmp_path, workers=1)
    assert (again.read, again.cached) == (0, 1)
    assert again.to_arrow().equals(first.to_arrow())
    with path.open("a") as out:  # a rollout written on
        out.write(json.dumps(_rows(3)[2]) + "\n")
    grown = turnfold.scan(tmp_path, workers=1)
    assert grown.read == 1
    assert grown.keys == [f"{path}#{n}" for n in range(3)]
    assert grown[f"{path}#2"] == turnfold.load(_rows(3)[2])


def test_C2_summarize_names_one_run_of_a_file_of_runs(tmp_path: Path) -> None:
    path = str(_jsonl(tmp_path / "train.jsonl", _rows(3)))
    many = summarize(Item(key=path, path=path))
    assert many["error"] == "a file of 3 runs: name one as Item(sample=…): '0', '1', '2'"
    one = summarize(Item(key=f"{path}#1", path=path, sample="1"))
    assert (one["key"], one["error"], one["tool_calls"], one["format"]) == (
        f"{path}#1", None, 1, "openai",
    )  # fmt: skip


def test_C6_search_reads_a_file_of_runs_once_and_keys_each_hit_by_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnfold.corpus import runs

    path = _jsonl(tmp_path / "train.jsonl", _rows(5))
    corpus = turnfold.scan(path, workers=1)
    passes: list[str] = []
    real = runs.records

    def counted(name: str) -> Any:
        passes.append(name)
        return real(name)

    monkeypatch.setattr(runs, "records", counted)
    hits = corpus.search("file_3")
    assert [(hit.key, hit.snippet) for hit in hits] == [(f"{path}#3", "file_3.py")]
    assert passes == [str(path)]  # one pass over the file, not one per row
    assert [hit.key for hit in corpus.search("list the files", limit=2)] == [
        f"{path}#0", f"{path}#1",
    ]  # fmt: skip


def test_B3_two_files_of_runs_compare_record_by_record_by_their_rewards(tmp_path: Path) -> None:
    """A baseline's rollouts against a candidate's: joined by their place in the file, a reward
    that fell is a regression (the rewards are the scores, H-6)."""
    baseline = _rows(4)
    candidate = [{**row, "reward": 1 - row["reward"]} for row in baseline]
    a = turnfold.scan(_jsonl(tmp_path / "baseline.jsonl", baseline), workers=1)
    b = turnfold.scan(_jsonl(tmp_path / "candidate.jsonl", candidate), workers=1)
    compared = compare_rows(a.rows, b.rows)
    changes = {pair.key: pair.change for pair in compared.changed}
    assert changes == {"0": "improved", "1": "regressed", "2": "improved", "3": "regressed"}
