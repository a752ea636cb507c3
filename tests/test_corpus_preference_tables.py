"""A table of preference pairs (spec C-1), as TRL's DPO, ORPO and KTO datasets hold them
(UltraFeedback binarized, Anthropic HH in TRL's form): ``prompt``, ``chosen`` and
``rejected`` columns of messages, or ``chosen`` and ``rejected`` alone, each the whole
conversation. A Parquet file, a pyarrow Table or a pandas DataFrame of them scans as one run a
row, read as ``load(row)`` reads the row as JSON: the conversation, the rejected reply marked,
then the chosen reply, the answer; the other columns are the row's metadata."""

from __future__ import annotations

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
from turnfold.render.viewmodel import build_view_model

V1_PAIRS = Path(__file__).parent / "fixtures/datasets/llama-factory_v1_dpo-demo_three-rows.jsonl"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _say(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


def _area_call() -> list[dict[str, Any]]:
    """A reply that calls a tool, reads its result and answers."""
    arguments = json.dumps({"radius": 2})
    call = {"id": "call_0", "type": "function",
            "function": {"name": "circle_area", "arguments": arguments}}  # fmt: skip
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "12.57"},
        _say("assistant", "About 12.57."),
    ]


#: Each row's prompt, chosen reply and rejected reply: a system prompt, a tool call in the
#: chosen reply, a conversation of two prompts.
PAIRS = [
    ([_say("system", "Be brief."), _say("user", "Capital of France?")],
     [_say("assistant", "Paris.")], [_say("assistant", "Lyon.")]),
    ([_say("user", "How big is a circle of radius 2?")],
     _area_call(), [_say("assistant", "About 12.")]),
    ([_say("user", "Say hi."), _say("assistant", "Hi!"), _say("user", "Louder.")],
     [_say("assistant", "HI!")], [_say("assistant", "No.")]),
]  # fmt: skip


def _rows(shape: str) -> list[dict[str, Any]]:
    """The pairs as TRL's explicit prompt (``prompt``) or implicit prompt (``chosen`` and
    ``rejected`` each the whole conversation), with two columns of their own."""
    rows = []
    for place, (prompt, chosen, rejected) in enumerate(PAIRS):
        if shape == "prompt":
            row: dict[str, Any] = {"prompt": prompt, "chosen": chosen, "rejected": rejected}
        else:
            row = {"chosen": prompt + chosen, "rejected": prompt + rejected}
        rows.append({**row, "score_chosen": 9.0 - place, "source": f"set-{place}"})
    return rows


def _source(kind: str, tmp_path: Path, rows: list[dict[str, Any]]) -> Any:
    return table_source(kind, tmp_path, rows, "pairs.parquet")


def _shown(transcript: turnfold.Transcript) -> list[tuple[list[tuple[str, Any]], str]]:
    """Each turn's progress notes inside its process, with their "Rejected" labels, and the
    HTML of its answer."""
    turns = [n for n in build_view_model(transcript)["nodes"] if n["kind"] == "turn"]
    inside = [t["process"]["children"] if t["process"] else [] for t in turns]
    return [([(c["html"], c.get("rejected_label")) for c in children if c["kind"] == "progress"],
             t["answer"]["html"]) for t, children in zip(turns, inside, strict=True)]  # fmt: skip


@pytest.mark.parametrize("shape", ["prompt", "implicit"])
@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_table_of_preference_pairs_scans_a_run_a_row(
    kind: str, shape: str, tmp_path: Path
) -> None:
    """It raised "which column holds the messages?"; each row is now its pair's run."""
    rows = _rows(shape)
    corpus = turnfold.scan(_source(kind, tmp_path, rows), workers=1)
    assert len(corpus) == 3
    assert corpus.errors == 0
    arrow = corpus.to_arrow()
    assert not {"prompt", "chosen", "rejected"} & set(arrow.column_names)
    assert arrow.column("score_chosen").to_pylist() == [9.0, 8.0, 7.0]
    assert arrow.column("source").to_pylist() == ["set-0", "set-1", "set-2"]
    for key, scanned, row in zip(corpus.keys, corpus.rows, rows, strict=True):
        expected = turnfold.load(row)
        counted = turnfold.scan([expected], workers=1).rows[0]  # the row of the run alone
        for name in ("turns", "tool_calls", "title", "format"):
            assert scanned[name] == counted[name], name
        assert corpus[key].entries == expected.entries
    assert [row["tool_calls"] for row in corpus.rows] == [0, 1, 0]
    assert corpus.rows[0]["title"] == "Capital of France?"


@pytest.mark.parametrize("shape", ["prompt", "implicit"])
def test_C1_a_pair_shows_its_rejected_reply_marked_and_its_chosen_reply_answers(
    shape: str, tmp_path: Path
) -> None:
    corpus = turnfold.scan(_source("arrow", tmp_path, _rows(shape)), workers=1)
    first, second, third = (corpus[key] for key in corpus.keys)
    assert first.metadata["system"] == "Be brief."
    ((notes, answer),) = _shown(first)
    assert notes == [('<div class="tf-md"><p>Lyon.</p></div>', "Rejected")]
    assert answer == '<div class="tf-md"><p>Paris.</p></div>'
    rejected, chosen = [e for e in second.entries if e.meta.get("rejected")], second.tool_calls()
    assert [e.text for e in rejected] == ["About 12."]
    assert [(call.name, call.result.text if call.result else None) for call in chosen] == [
        ("circle_area", "12.57")
    ]
    assert _shown(second)[-1][1] == '<div class="tf-md"><p>About 12.57.</p></div>'
    earlier, last = _shown(third)  # the conversation's first turn, then the pair's
    assert earlier == ([], '<div class="tf-md"><p>Hi!</p></div>')
    assert last == ([('<div class="tf-md"><p>No.</p></div>', "Rejected")],
                    '<div class="tf-md"><p>HI!</p></div>')  # fmt: skip


@pytest.mark.parametrize("shape", ["prompt", "implicit"])
def test_C1_load_reads_one_row_of_a_preference_parquet_file(shape: str, tmp_path: Path) -> None:
    rows = _rows(shape)
    path = _source("parquet", tmp_path, rows)
    for place in (1, 2):
        assert turnfold.load(path, sample=place).entries == turnfold.load(rows[place]).entries


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_messages_names_the_pair_beside_a_column_named_as_messages_are(
    kind: str, tmp_path: Path
) -> None:
    """UltraFeedback binarized's shape: ``prompt`` as text, the pair with its prompt in both
    lists, and ``messages``, the chosen conversation again, which is read unless the pair is
    named; a pair lacking one of its columns is an error naming it."""
    rows = [{"prompt": row["chosen"][-2]["content"], "messages": row["chosen"], **row}
            for row in _rows("implicit")]  # fmt: skip
    source = _source(kind, tmp_path, rows)
    read = turnfold.scan(source, workers=1)  # ``messages``: the chosen conversation alone
    assert not any(e.meta.get("rejected") for e in read[read.keys[0]].entries)
    corpus = turnfold.scan(source, messages="chosen+rejected", workers=1)
    assert {"prompt", "messages"} <= set(corpus.to_arrow().column_names)
    for key, row in zip(corpus.keys, rows, strict=True):
        pair = {"chosen": row["chosen"], "rejected": row["rejected"]}
        assert corpus[key].entries == turnfold.load(pair).entries
    lacking = _source(kind, tmp_path, [{"chosen": row["chosen"]} for row in rows])
    with pytest.raises(ValueError, match=r"no column 'rejected'; the columns are chosen"):
        turnfold.scan(lacking, messages="chosen+rejected", workers=1)
    with pytest.raises(ValueError, match=r"no column 'prompt'; the columns are chosen"):
        turnfold.scan(lacking, messages="prompt+chosen+rejected", workers=1)


def test_C1_a_shard_lacking_a_column_of_the_pair_is_an_error_naming_it(tmp_path: Path) -> None:
    rows = _rows("prompt")
    first, second = tmp_path / "0.parquet", tmp_path / "1.parquet"
    pq.write_table(pa.Table.from_pylist(rows), first)
    pq.write_table(pa.Table.from_pylist([{**r, "rejected": None} for r in rows]).drop(
        ["rejected"]), second)  # fmt: skip
    with pytest.raises(ValueError, match=r"1\.parquet: no column 'rejected'"):
        turnfold.scan([first, second], workers=1)


@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_C1_a_table_of_llama_factory_ranking_rows_scans_a_run_a_row(
    kind: str, tmp_path: Path
) -> None:
    """LLaMA-Factory's v1 ``chosen_messages`` and ``rejected_messages``: read as the pair."""
    rows = [json.loads(line) for line in V1_PAIRS.read_text().splitlines() if line.strip()]
    corpus = turnfold.scan(_source(kind, tmp_path, rows), workers=1)
    assert corpus.errors == 0
    for key, row in zip(corpus.keys, rows, strict=True):
        expected = turnfold.load(row)
        assert corpus[key].entries == expected.entries
        assert corpus[key].metadata["source_format"] == "llama-factory"
        assert [e.meta.get("rejected", False) for e in expected.entries][-2:] == [True, False]


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_table_of_text_rows_reads_each_as_a_prompt_and_its_replies(
    kind: str, tmp_path: Path
) -> None:
    """TRL's standard rows, text in every column: a preference row is the user's prompt, the
    rejected reply marked and the chosen one the answer; a prompt-completion row the prompt
    and its completion. As JSON (they were no run ``load`` read) and as a table (whose scan
    asked which column held the messages)."""
    pairs = [{"prompt": "2+2?", "chosen": "4", "rejected": "5", "source": "math"}] * 2
    completions = [{"prompt": "2+2?", "completion": "4", "reward": 1.0}] * 2
    for rows, texts in ((pairs, ["2+2?", "5", "4"]), (completions, ["2+2?", "4"])):
        expected = turnfold.load(rows[0])
        assert [e.text for e in expected.entries] == texts  # type: ignore[attr-defined]
        corpus = turnfold.scan(_source(kind, tmp_path, rows), workers=1, cache=False)
        assert (len(corpus), corpus.errors) == (2, 0)
        assert corpus[corpus.keys[0]].entries == expected.entries


def test_C5_a_preference_parquet_file_is_read_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part's weight counts the pair's three columns; each worker reads its rows as pairs."""
    rows = _rows("prompt") * 40
    path = tmp_path / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=10)
    whole = turnfold.scan(path, workers=1, cache=False)
    monkeypatch.setattr(tables, "PART_BYTES", 1)
    monkeypatch.setattr(tables, "PART_ROWS", 8)
    monkeypatch.setattr(tables, "ROW_WORK_BYTES", 0)  # a part weighs its bytes alone
    (_, pair), (_, chosen) = ((tables.parts(str(path), c, 2) or [])[0] for c in
                              ("prompt+chosen+rejected", "chosen"))  # fmt: skip
    assert pair > chosen  # the prompt's and the rejected reply's bytes are the pair's too
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())


@pytest.mark.parametrize("kind", ["parquet", "arrow", "pandas"])
def test_C1_a_column_named_twice_in_messages_is_read_once(kind: str, tmp_path: Path) -> None:
    """``messages="chosen+chosen"`` raised a KeyError (pandas: a duplicate column warning)."""
    source = _source(kind, tmp_path, _rows("implicit"))
    twice = turnfold.scan(source, messages="chosen+chosen", workers=1, cache=False)
    once = turnfold.scan(source, messages="chosen", workers=1, cache=False)
    assert twice.to_arrow().equals(once.to_arrow())
    assert twice[twice.keys[2]].entries == once[once.keys[2]].entries
