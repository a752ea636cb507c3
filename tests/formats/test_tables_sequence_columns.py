"""A Hugging Face dataset whose messages column is an old-style ``Sequence`` of a dict feature
(``Sequence({"role": Value("string"), "content": Value("string")})``): ``datasets`` stores it
as a struct of lists, ``{"role": [...], "content": [...]}``, not as a list of structs. Saved
with ``save_to_disk``, written with ``to_parquet`` or scanned as a ``Dataset``, each row is the
list of messages it means (the lists zipped); lists of unequal lengths are a visible warning,
every message still read. The tables here are made by the real ``datasets``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import turnfold
from turnfold.corpus import scan
from turnfold.formats import tables

datasets = pytest.importorskip("datasets")

#: Two runs, each a user's question and the assistant's answer, a list per field.
ROLES = [["user", "assistant"], ["system", "user", "assistant"]]
CONTENTS = [["What is 2 + 2?", "4."], ["Answer briefly.", "Capital of France?", "Paris."]]


pytestmark = pytest.mark.usefixtures("cache_dir")


def _sequence(fields: tuple[str, ...] = ("role", "content")) -> Any:
    return datasets.Sequence({name: datasets.Value("string") for name in fields})


def _dataset(roles: list[list[str]], contents: list[list[str]]) -> Any:
    features = datasets.Features({"messages": _sequence(), "task": datasets.Value("string")})
    rows = {"messages": [{"role": r, "content": c} for r, c in zip(roles, contents, strict=True)],
            "task": [f"t{i}" for i in range(len(roles))]}  # fmt: skip
    return datasets.Dataset.from_dict(rows, features=features)


def _sources(dataset: Any, tmp_path: Path) -> dict[str, Any]:
    """The dataset as a scan takes it: saved to disk, as Parquet, and itself."""
    dataset.save_to_disk(str(tmp_path / "saved"))
    dataset.to_parquet(str(tmp_path / "runs.parquet"))
    return {"saved": tmp_path / "saved", "parquet": tmp_path / "runs.parquet", "dataset": dataset}


def _shown(run: turnfold.Transcript) -> list[tuple[str, str | None]]:
    return [(type(e).__name__, getattr(e, "text", None)) for e in run.entries]


def test_C1_a_sequence_of_dict_column_is_stored_as_a_struct_of_lists(tmp_path: Path) -> None:
    """The shape as ``datasets`` writes it (which the rows below read)."""
    dataset = _dataset(ROLES, CONTENTS)
    kind = dataset.data.schema.field("messages").type
    assert pa.types.is_struct(kind)
    assert pa.types.is_list(kind.field("role").type)
    assert dataset[0]["messages"] == {"role": ROLES[0], "content": CONTENTS[0]}
    assert tables.is_columnar(kind)
    assert tables.column_kinds(dataset.data.schema)["messages"] == "list"
    # A struct of lists that is no message's fields (a run wrapped in an object) is no such
    # column: it is read as the object it is.
    wrapped = pa.struct([("messages", pa.list_(pa.struct([("role", pa.string())])))])
    assert not tables.is_columnar(wrapped)


@pytest.mark.parametrize("kind", ["saved", "parquet", "dataset"])
def test_C1_a_sequence_of_dict_column_reads_as_its_messages(tmp_path: Path, kind: str) -> None:
    """Each row was "not a transcript (no known transcript structure)"."""
    source = _sources(_dataset(ROLES, CONTENTS), tmp_path)[kind]
    corpus = scan(source, workers=1)
    assert (corpus.errors, len(corpus)) == (0, 2)
    assert [row["title"] for row in corpus] == ["What is 2 + 2?", "Capital of France?"]
    assert [row["warnings"] for row in corpus] == [0, 0]
    assert corpus.to_arrow().column("task").to_pylist() == ["t0", "t1"]
    first, second = (corpus[key] for key in corpus.keys)
    assert _shown(first) == [("UserMessage", "What is 2 + 2?"), ("AssistantText", "4.")]
    assert _shown(second) == [("UserMessage", "Capital of France?"), ("AssistantText", "Paris.")]
    assert second.metadata["system"] == "Answer briefly."
    assert second.warnings == []
    if kind != "dataset":
        assert turnfold.load(source, sample=1) == second


def test_C1_a_sequence_of_dict_column_of_unequal_lengths_is_a_warning(tmp_path: Path) -> None:
    """``datasets`` does not check that a row's lists are as long as each other: the messages
    are as many as the longest list, each with the fields it has, and a warning says so."""
    roles = [["user", "assistant"], ["user", "assistant"]]
    contents = [["What is 2 + 2?", "4.", "Anything else?"], ["Hi.", "Hello."]]
    source = _sources(_dataset(roles, contents), tmp_path)["parquet"]
    corpus = scan(source, workers=1)
    assert corpus.errors == 0
    run = corpus[corpus.keys[0]]
    said = [w.reason for w in run.warnings]
    assert ("its messages are a list per field of unequal lengths (2 'role', 3 'content'): "
            "read as 3, each holding the fields it has") in said  # fmt: skip
    assert _shown(run)[:2] == [("UserMessage", "What is 2 + 2?"), ("AssistantText", "4.")]
    assert corpus.to_arrow().column("warnings").to_pylist()[0] == len(run.warnings)
    assert corpus[corpus.keys[1]].warnings == []
    cells = list(tables.cells(str(source), "messages"))
    assert cells[0] == [{"role": "user", "content": "What is 2 + 2?"},
                        {"role": "assistant", "content": "4."},
                        {"content": "Anything else?"}]  # fmt: skip


def test_C1_sharegpt_and_prompt_completion_columns_of_that_shape(tmp_path: Path) -> None:
    """A ShareGPT ``conversations`` column (``from``, ``value``), and a prompt-completion
    table whose two columns are each of that shape, read as their messages."""
    sharegpt = datasets.Dataset.from_dict(
        {"conversations": [{"from": ["human", "gpt"], "value": ["Hi there.", "Hello!"]}]},
        features=datasets.Features({"conversations": _sequence(("from", "value"))}),
    )
    run = scan(sharegpt, workers=1)
    assert _shown(run[run.keys[0]]) == [("UserMessage", "Hi there."), ("AssistantText", "Hello!")]
    pairs = datasets.Dataset.from_dict(
        {"prompt": [{"role": ["user"], "content": ["Say hi."]}],
         "completion": [{"role": ["assistant"], "content": ["Hi!"]}]},
        features=datasets.Features({"prompt": _sequence(), "completion": _sequence()}),
    )  # fmt: skip
    pairs.to_parquet(str(tmp_path / "pairs.parquet"))
    corpus = scan(tmp_path / "pairs.parquet", workers=1)
    assert corpus.errors == 0
    assert _shown(corpus[corpus.keys[0]]) == [("UserMessage", "Say hi."), ("AssistantText", "Hi!")]
