"""Tables whose message columns Hugging Face ``datasets`` types ``Json`` (C-1, L-4, X-1).

``datasets`` 5's ``json`` loader types a field whose values differ in keys or kind from row to
row as ``Json``: Arrow's JSON extension type (``pa.json_()``), each value the text of one JSON
value, the feature named in the schema's ``huggingface`` metadata. A run's messages (one with
``tool_calls``, one without) become ``List(Json())``; a ``content`` that is text in one message
and parts in another, a call's ``arguments`` with other keys in each call, ``Json`` fields of a
struct; a ``completion`` that is text in one row and messages in another, a ``Json`` column.
Such values are read as the JSON they hold, in every path: the ``Dataset`` itself, its Parquet
file (``to_parquet``), its ``save_to_disk`` folder and that folder's Arrow shard; text that is
not typed ``Json`` is never guessed to be JSON.

The tables are made here with the real ``datasets`` (``load_dataset("json", data_files=...)``
of JSON lines: the fixture ``datasets/rollouts.jsonl``, or a few lines written in
``tmp_path``), offline; the truth is turnfold's own reading of the same JSON lines, a file of
runs. The broken tables of the last tests are written with pyarrow (``datasets`` writes no
broken JSON), typed as ``datasets`` types them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import turnfold
from turnfold.corpus.index import CACHE_ENV
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import AssistantText, ToolCall, Transcript

datasets = pytest.importorskip("datasets")
if not hasattr(datasets, "Json"):
    pytest.skip("this datasets has no Json feature (datasets 5 has)", allow_module_level=True)

ROLLOUTS = Path(__file__).parent / "fixtures" / "datasets" / "rollouts.jsonl"
SHARD = "data-00000-of-00001.arrow"
#: What a row says of its run.
SAID = ("sample", "format", "title", "turns", "tool_calls", "failed_tools", "errors", "error")
#: The schema metadata ``datasets`` keeps a dataset's features in.
HF = b"huggingface"


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own index, never the user's, and ``datasets`` never goes online."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "index"))
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    datasets.disable_progress_bars()


def _loaded(rows: Path | list[dict[str, Any]], tmp_path: Path) -> Any:
    """The ``Dataset`` ``load_dataset("json")`` makes of JSON lines (a file, or ``rows``)."""
    if isinstance(rows, list):
        path = tmp_path / "rows.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        rows = path
    return datasets.load_dataset(
        "json", data_files=str(rows), split="train", cache_dir=str(tmp_path / "hf-cache")
    )


def _paths(ds: Any, tmp_path: Path) -> dict[str, Any]:
    """The dataset in every form a scan reads: itself, its Parquet file, its saved folder and
    that folder's Arrow shard."""
    parquet = tmp_path / "runs.parquet"
    ds.to_parquet(str(parquet))
    folder = tmp_path / "saved"
    ds.save_to_disk(str(folder))
    return {"dataset": ds, "parquet": parquet, "folder": folder, "shard": folder / SHARD}


def _said(corpus: Any) -> list[dict[str, Any]]:
    return [{name: row[name] for name in SAID} for row in corpus.rows]


def _answers(run: Transcript) -> list[str]:
    return [e.text for e in run.entries if isinstance(e, AssistantText)]


def _jsonl(rows: list[dict[str, Any]], tmp_path: Path) -> Path:
    path = tmp_path / "truth.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_C1_messages_typed_json_read_in_every_path(tmp_path: Path) -> None:
    ds = _loaded(ROLLOUTS, tmp_path)
    assert str(ds.features["messages"]) == "List(Json(decode=True))"  # what datasets made
    truth = turnfold.scan(ROLLOUTS, workers=1)
    assert all(row["error"] is None and row["tool_calls"] for row in truth.rows)
    for name, source in _paths(ds, tmp_path).items():
        corpus = turnfold.scan(source, workers=1)
        assert _said(corpus) == _said(truth), name
        assert corpus[corpus.keys[1]] == truth[truth.keys[1]], name
        if name != "dataset":
            assert turnfold.load(source, sample=2) == turnfold.load(ROLLOUTS, sample=2), name
    # The worker processes read the rows of the Dataset as this process does.
    assert _said(turnfold.scan(ds, workers=2)) == _said(truth)


def test_C1_json_fields_inside_messages_are_decoded(tmp_path: Path) -> None:
    rows = [
        {"task": "a", "messages": [
            {"role": "user", "content": "List the folder.", "tool_calls": None},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
             "function": {"name": "ls", "arguments": {"path": "."}}}]},
            {"role": "tool", "content": "a.py b.py", "tool_calls": None},
            {"role": "assistant", "content": [{"type": "text", "text": "Two files."}],
             "tool_calls": None},
        ]},
        {"task": "b", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Find TODO."}],
             "tool_calls": None},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function",
             "function": {"name": "grep", "arguments": {"pattern": "TODO", "limit": 3}}}]},
            {"role": "tool", "content": "src/x.py:1: TODO", "tool_calls": None},
            {"role": "assistant", "content": "One TODO.", "tool_calls": None},
        ]},
    ]  # fmt: skip
    ds = _loaded(rows, tmp_path)
    message = ds.features["messages"].feature
    assert str(message["content"]) == "Json(decode=True)"
    assert str(message["tool_calls"].feature["function"]["arguments"]) == "Json(decode=True)"
    truth = _jsonl(rows, tmp_path)
    for name, source in _paths(ds, tmp_path).items():
        corpus = turnfold.scan(source, workers=1)
        assert _said(corpus) == _said(turnfold.scan(truth, workers=1)), name
        run = corpus[corpus.keys[1]]
        (call,) = [e for e in run.entries if isinstance(e, ToolCall)]
        assert call.args == {"pattern": "TODO", "limit": 3}, name
        assert corpus.rows[1]["title"] == "Find TODO.", name
        assert not run.warnings, name
    loaded = turnfold.load(tmp_path / "runs.parquet", sample=0)
    texts = _answers(loaded)
    assert texts == ["Two files."]


def test_C1_completion_typed_json_is_read_as_the_run_split_over_columns(tmp_path: Path) -> None:
    rows = [
        {"prompt": [{"role": "user", "content": "What is 2+2?"}], "completion": "Four.",
         "reward": 1.0},
        {"prompt": [{"role": "user", "content": "Say hi."}],
         "completion": [{"role": "assistant", "content": "Hi!"}], "reward": 0.5},
    ]  # fmt: skip
    ds = _loaded(rows, tmp_path)
    assert str(ds.features["completion"]) == "Json(decode=True)"
    truth = _said(turnfold.scan(_jsonl(rows, tmp_path), workers=1))
    for name, source in _paths(ds, tmp_path).items():
        corpus = turnfold.scan(source, workers=1)
        assert _said(corpus) == truth, name
        assert _answers(corpus[corpus.keys[1]]) == ["Hi!"], name
        assert "reward" in corpus.to_arrow().column_names, name


def test_C1_text_not_typed_json_is_not_guessed_to_be_json(tmp_path: Path) -> None:
    # The same texts datasets typed Json, in a column of plain text: read as they are (text,
    # which is no message), never parsed on a guess.
    ds = _loaded(ROLLOUTS, tmp_path)
    table = ds.with_format("arrow")[:].replace_schema_metadata(None)
    plain = table.set_column(
        table.schema.get_field_index("messages"), "messages",
        table.column("messages").cast(pa.list_(pa.string())),
    )  # fmt: skip
    path = tmp_path / "plain.parquet"
    pq.write_table(plain, path)
    rows = turnfold.scan(path, workers=1).rows
    assert len(rows) == 3
    assert all(row["error"] is not None and row["turns"] is None for row in rows)


def test_C1_json_told_by_features_or_by_the_extension_name(tmp_path: Path) -> None:
    """A column whose Arrow type lost the JSON type is still ``datasets``' ``Json`` when its
    features say so, or when its field names the type (how a pyarrow that does not know the
    type reads a file ``datasets`` wrote)."""
    ds = _loaded(ROLLOUTS, tmp_path)
    truth = _said(turnfold.scan(ROLLOUTS, workers=1))
    table = ds.with_format("arrow")[:]
    assert HF in table.schema.metadata
    at = table.schema.get_field_index("messages")
    texts = table.column("messages").cast(pa.list_(pa.string()))
    by_features = table.set_column(at, "messages", texts)
    named = pa.field("item", pa.string(), metadata={b"ARROW:extension:name": b"arrow.json"})
    by_name = table.replace_schema_metadata(None).set_column(
        at, "messages", texts.cast(pa.list_(named))
    )
    for kind, source in (("features", by_features), ("extension name", by_name)):
        assert _said(turnfold.scan(source, workers=1)) == truth, kind
        path = tmp_path / f"{kind}.arrow"
        with pa.ipc.new_file(str(path), source.schema) as writer:
            writer.write_table(source)
        assert _said(turnfold.scan(path, workers=1)) == truth, kind


def test_L4_an_unreadable_row_names_its_file_and_row(tmp_path: Path) -> None:
    rows = [
        {"id": 0, "messages": [{"role": "user", "content": "Hi."},
                               {"role": "assistant", "content": "Hello.", "name": "bot"}]},
        {"id": 1, "messages": [{"colour": "red"}, {"size": 3}]},
    ]  # fmt: skip
    ds = _loaded(rows, tmp_path)
    paths = _paths(ds, tmp_path)
    where = {"dataset": "<table>", "parquet": str(paths["parquet"]),
             "folder": str(paths["shard"]), "shard": str(paths["shard"])}  # fmt: skip
    for name, source in paths.items():
        corpus = turnfold.scan(source, workers=1)
        good, bad = corpus.rows
        assert (good["error"], good["turns"]) == (None, 1), name
        assert bad["error"].startswith(f"{where[name]}, row 1: not a transcript ("), name
        assert "<object>" not in bad["error"], name
        with pytest.raises(TranscriptFormatError, match=r"row 1: not a transcript"):
            corpus[corpus.keys[1]]
    for name in ("parquet", "folder", "shard"):
        with pytest.raises(TranscriptFormatError) as raised:
            turnfold.load(paths[name], sample=1)
        assert str(raised.value).startswith(f"{paths[name]}, row 1: not a transcript ("), name


def _json_list(texts: list[list[str]]) -> pa.Array[Any]:
    """A column of lists of values typed as ``datasets`` types ``Json`` (its texts as given:
    pyarrow's JSON type does not check them)."""
    items = pa.ExtensionArray.from_storage(
        pa.json_(), pa.array([t for row in texts for t in row], pa.string())
    )
    offsets = pa.array(list(itertools.accumulate(map(len, texts), initial=0)), pa.int32())
    return pa.ListArray.from_arrays(offsets, items)


def test_X1_a_json_value_that_is_no_json_or_too_large_is_said_the_rest_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = json.dumps({"role": "user", "content": "Count the files."})
    answer = json.dumps({"role": "assistant", "content": "Three files."})
    huge = json.dumps({"role": "assistant", "content": "x" * 600})
    table = pa.table({
        "id": [0, 1],
        "messages": _json_list([[user, '{"role": "assis', answer], [user, huge, answer]]),
        "completion": pa.ExtensionArray.from_storage(
            pa.json_(), pa.array(['"fine"', "x" * 600], pa.string())),
    })  # fmt: skip
    path = tmp_path / "broken.parquet"
    pq.write_table(table, path)
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", "500")
    corpus = turnfold.scan(path, messages="messages", workers=1)
    assert [(row["error"], row["turns"], row["title"]) for row in corpus.rows] == [
        (None, 1, "Count the files."), (None, 1, "Count the files.")
    ]  # fmt: skip
    for key, said in zip(corpus.keys, ("no JSON", "over the limit of 500 bytes"), strict=True):
        run = corpus[key]
        assert _answers(run) == ["Three files."]
        assert any(said in w.reason for w in run.warnings), (key, run.warnings)
    # A whole cell typed Json over the limit: its row is an error that says so, named.
    rows = turnfold.scan(path, messages="completion", workers=1).rows
    assert rows[1]["error"].startswith(f"{path}, row 1: not a transcript (")
    assert "over the limit of 500 bytes" in rows[1]["error"]


def test_X1_a_json_field_that_is_no_json_is_kept_as_text_and_said(tmp_path: Path) -> None:
    content = pa.ExtensionArray.from_storage(
        pa.json_(), pa.array(['"Count the files."', "Three {files"], pa.string())
    )
    messages = pa.StructArray.from_arrays(
        [pa.array(["user", "assistant"]), content], names=["role", "content"]
    )
    table = pa.table({"messages": pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()),
                                                           messages)})  # fmt: skip
    path = tmp_path / "field.parquet"
    pq.write_table(table, path)
    run = turnfold.load(path, sample=0)
    assert _answers(run) == ["Three {files"]
    assert any("no JSON" in w.reason and "kept as text" in w.reason for w in run.warnings)
