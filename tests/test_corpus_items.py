"""What is one corpus item (C-1, C-2, C-4, C-7): every sample and epoch of an eval log is a row
keyed ``path#id/epoch``; a Gemini CLI resume's briefing stub is part of its session, no row.

Counts are checked against the widget's view model and each item's own ``load``, never against
numbers written down here.
"""

from __future__ import annotations

import importlib
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import codec
from turnfold.corpus import COLUMNS, scan
from turnfold.corpus.discover import Item
from turnfold.corpus.index import INDEX_NAME, SCHEMA_VERSION
from turnfold.formats.harnesses import inspect_log
from turnfold.model import SystemNotice

from .test_corpus import _Reads, _widget_counts

summarize_module = importlib.import_module("turnfold.corpus.summarize")
FIXTURES = Path(__file__).parent / "fixtures"
INSPECT = FIXTURES / "harnesses" / "inspect"
GEMINI_RESUMED = FIXTURES / "gemini" / "gemini-cli_v0.61_resume-api-form.jsonl"


pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """A copy of the Inspect logs made here with the real inspect_ai (zstd and deflate .eval,
    .json), without the log of a real run kept for its retries and the ReAct agent's logs and
    recipe (tests/formats/test_inspect.py)."""
    target = tmp_path / "logs"
    ignore = shutil.ignore_patterns("inspect_retry*", "react_*")
    shutil.copytree(INSPECT, target, ignore=ignore)
    return target


def _keys(folder: Path) -> list[str]:
    return [
        f"{path}#{sample}/{epoch}"
        for path in sorted(folder.iterdir())
        for sample, epoch in inspect_log.samples(path)
    ]


# --- eval logs: one item per sample and epoch ---------------------------------------------------


def test_C1_an_eval_log_is_one_row_per_sample_and_epoch_keyed_path_id_epoch(logs: Path) -> None:
    corpus = scan(logs, workers=1)
    assert corpus.keys == _keys(logs)
    assert len(corpus) == 9  # 4 + 4 samples of the two .eval logs, 1 of the .json one
    for row in corpus:
        path, _, sample = row["key"].partition("#")
        assert (row["path"], row["sample"], row["format"]) == (path, sample, "inspect")
        assert list(row) == list(COLUMNS)


def test_C1_a_log_of_many_samples_is_summarised_in_packed_parts_to_the_same_tables(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13 (300 MB for a 200 MB log): a log's rows are packed into Arrow batches as they
    come, not held as dicts until the log ends; the tables are the same either way."""
    whole = scan(logs, workers=1, cache=False)
    monkeypatch.setattr(summarize_module, "PACK_ROWS", 1)  # every sample's rows packed at once
    packed = scan(logs, workers=1, cache=False)
    assert packed.to_arrow().equals(whole.to_arrow())
    assert packed.tool_calls().equals(whole.tool_calls())
    assert packed.turns().equals(whole.turns())
    log = next(logs.glob("*.eval"))
    summary = summarize_module.examine(Item(key=str(log), path=str(log)))
    assert summary.count == len(summary.packed) == len(inspect_log.samples(log)) > 1
    assert summary.rows == []


def test_C5_a_large_eval_log_is_read_in_parts_of_its_samples_by_every_worker(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker reads its own samples' members of a ``.eval`` zip; the rows are the log's
    read whole, in its order, keyed by their samples. A ``.json`` log, streamed whole to reach
    any sample, is not cut."""
    from turnfold.corpus import engine, runs

    whole = scan(logs, workers=1, cache=False)
    monkeypatch.setattr(runs, "SPAN_BYTES", 1)  # as many parts as samples
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)
    log = logs / "mockllm_two-epochs.eval"
    item = Item(key=str(log), path=str(log), size=log.stat().st_size)
    parts = summarize_module.file_parts(item, 2)
    assert [part.part for part in parts or []] == [inspect_log.Samples(n, n + 1) for n in range(4)]
    json_log = logs / "mockllm_one-sample.json"
    assert summarize_module.file_parts(Item(key=str(json_log), path=str(json_log),
                                            size=json_log.stat().st_size), 2) is None  # fmt: skip
    split = scan(logs, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert split.turns().equals(whole.turns())


def test_C2_each_sample_row_counts_what_its_widget_shows_and_carries_its_outcome(
    logs: Path,
) -> None:
    corpus = scan(logs, workers=1)
    for row in corpus:
        assert row["error"] is None, row["error"]
        name, _, epoch = row["sample"].rpartition("/")
        alone = turnfold.load(row["path"], sample=name, epoch=int(epoch))
        transcript = corpus[row["key"]]
        assert transcript == alone  # corpus[key] loads that sample, and only it
        assert transcript.metadata["epoch"] == int(epoch)
        shown = _widget_counts(transcript)
        assert {name: row[name] for name in shown} == shown, row["key"]
        assert row["warnings"] == len(transcript.warnings)
        meta = transcript.metadata
        assert row["outcome"] == meta["outcome"]
        assert row["model"] == meta["model"]
        score = meta["score"]
        # one scorer: its number; several (these logs have two): no one number, so null
        expected = score if not isinstance(score, dict) else (
            next(iter(score.values())) if len(score) == 1 else None
        )  # fmt: skip
        assert row["score"] == expected
        assert row["started"] is not None
        assert row["duration_s"] is not None
    calls = corpus.tool_calls()
    assert set(calls.column("key").to_pylist()) == set(corpus.keys)
    assert calls.num_rows == sum(row["tool_calls"] for row in corpus)


def test_C2_summarize_reads_one_named_sample_and_says_a_log_of_many_is_many_items() -> None:
    log = INSPECT / "mockllm_two-epochs.eval"
    items = summarize_module.log_items(Item(key=str(log), path=str(log)))
    assert [item.key for item in items] == [f"{log}#{s}/{e}" for s, e in inspect_log.samples(log)]
    assert len(items) == 4
    row = summarize_module.summarize(items[2])
    assert (row["key"], row["sample"], row["error"]) == (f"{log}#1/2", "1/2", None)
    assert row["turns"] == _widget_counts(turnfold.load(log, sample=1, epoch=2))["turns"]
    many = summarize_module.summarize(Item(key=str(log), path=str(log)))
    assert many["error"].startswith("an eval log of 4 samples")
    one = INSPECT / "mockllm_one-sample.json"
    only = summarize_module.summarize(Item(key=str(one), path=str(one)))
    assert (only["key"], only["error"]) == (f"{one}#1/1", None)


def test_C7_a_sample_that_cannot_be_read_is_a_row_with_its_error_and_the_rest_still_read(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logs / "mockllm_two-epochs.eval"
    real = inspect_log.transcripts

    def breaks_at_the_second(path: Any, **kw: Any) -> Iterator[Any]:
        for n, pair in enumerate(real(path, **kw)):
            if n == 1:
                raise turnfold.TranscriptFormatError(str(path), ["inspect"], None, "torn sample")
            yield pair

    monkeypatch.setattr(inspect_log, "transcripts", breaks_at_the_second)
    corpus = scan(log, workers=1, cache=False)
    assert corpus.keys == _keys(logs)[1:5]
    errors = [row["error"] for row in corpus]
    assert errors[0] is None
    assert "torn sample" in errors[1]
    assert errors[2:] == [None, None]
    assert corpus.rows[2]["turns"] == _widget_counts(corpus[corpus.keys[2]])["turns"]


def test_C7_an_eval_log_that_is_no_zip_is_one_error_row(tmp_path: Path) -> None:
    broken = tmp_path / "torn.eval"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    corpus = scan(tmp_path, workers=1, cache=False)
    (row,) = corpus.rows
    assert row["key"] == str(broken)
    assert row["format"] == "inspect"
    assert row["error"]


def test_C4_an_eval_log_comes_from_the_index_whole_and_leaves_it_whole(
    logs: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = scan(logs, workers=1)
    reads = _Reads(monkeypatch)
    again = scan(logs, workers=1)
    assert (reads.count, again.read, again.cached) == (0, 0, 3)
    assert again.to_arrow().equals(first.to_arrow())
    assert again.tool_calls().equals(first.tool_calls())
    assert again.turns().equals(first.turns())
    gone = logs / "mockllm_two-epochs.eval"
    gone.unlink()
    after = scan(logs, workers=1)
    assert [k for k in after.keys if k.startswith(str(gone))] == []
    assert len(after) == len(first) - 4
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        assert str(gone) not in {p for (p,) in db.execute("SELECT path FROM files")}


def test_C4_rows_from_the_index_take_the_path_as_this_scan_spells_it(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(logs.parent)
    relative = scan(Path(logs.name), workers=1)
    assert relative.keys[0].startswith("logs/")
    absolute = scan(logs, workers=1)
    assert absolute.cached == 3
    assert absolute.read == 0
    assert absolute.keys == _keys(logs)
    assert {row["path"] for row in absolute} == {str(p) for p in logs.iterdir()}
    assert set(absolute.tool_calls().column("key").to_pylist()) == set(absolute.keys)
    assert set(absolute.turns().column("key").to_pylist()) == set(absolute.keys)


def test_C4_an_index_of_the_older_layout_is_emptied_and_filled_again(
    logs: Path, cache_dir: Path
) -> None:
    cache_dir.mkdir()
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:  # layout 1: one JSON text per path
        db.execute("CREATE TABLE entries (path TEXT PRIMARY KEY, summary TEXT)")
        db.execute("INSERT INTO entries VALUES ('x', '{}')")
    assert scan(logs, workers=1).read == 3
    assert scan(logs, workers=1).cached == 3
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert "entries" not in tables


# --- Gemini CLI: a resume's stub is part of its session ------------------------------------------


def _gemini_chats(folder: Path, *, stub: bool = True, main: bool = True) -> tuple[Path, Path]:
    """A session file written by the real Gemini CLI 0.61 and, as that CLI writes when a resume
    starts in a later minute, a stub of the same session: its header and the briefing alone."""
    chats = folder / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)
    session = chats / "session-2026-12-01T21-33-66666666.jsonl"
    later = chats / "session-2026-12-01T21-35-66666666.jsonl"
    lines = GEMINI_RESUMED.read_text().splitlines()
    header = codec.loads(lines[0])
    assert header["sessionId"].startswith("66666666")
    briefing = codec.loads(lines[1])
    assert "<session_context>" in codec.dumps(briefing)
    if main:
        session.write_text("\n".join(lines) + "\n")
    if stub:
        header = {**header, "startTime": "2026-12-01T21:35:02.000Z"}
        later.write_text(codec.dumps(header) + "\n" + codec.dumps(briefing) + "\n")
    return session, later


def test_C1_a_gemini_resume_stub_is_part_of_its_session_never_a_row_of_its_own(
    tmp_path: Path,
) -> None:
    session, stub = _gemini_chats(tmp_path)
    alone = turnfold.load(stub)
    assert alone.entries
    assert all(isinstance(e, SystemNotice) for e in alone.entries)
    corpus = scan(tmp_path, workers=1)
    assert corpus.keys == [str(session)]
    assert corpus.skipped == 0
    assert repr(corpus) == "<Corpus: 1 row, 0 errors, 0 skipped>"
    again = scan(tmp_path, workers=1)  # the verdict comes from the index too
    assert (again.keys, again.read) == ([str(session)], 0)
    row = summarize_module.summarize(Item(key=str(stub), path=str(stub)))
    assert "briefing stub" in row["error"]


def test_C1_a_gemini_file_of_the_briefing_alone_with_no_session_beside_it_is_a_row(
    tmp_path: Path,
) -> None:
    _, stub = _gemini_chats(tmp_path, main=False)
    corpus = scan(tmp_path, workers=1, cache=False)
    assert corpus.keys == [str(stub)]
    assert corpus.rows[0]["turns"] == 0
    assert corpus.rows[0]["error"] is None


def test_C6_a_large_eval_log_is_searched_in_parts_of_its_samples_to_the_same_hits(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnfold.corpus import engine, runs

    whole = scan(logs, workers=1, cache=False)
    expected = whole.search("look up the key", limit=1000)
    assert [hit.key for hit in expected] == whole.keys
    monkeypatch.setattr(runs, "SPAN_BYTES", 1)  # as many parts as samples
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    split = scan(logs, workers=2, cache=False)
    parts: list[Any] = []
    real = inspect_log.transcripts

    def counted(path: Any, **kw: Any) -> Iterator[Any]:
        parts.append(kw.get("part"))
        yield from real(path, **kw)

    monkeypatch.setattr(inspect_log, "transcripts", counted)  # the work stays here
    for limit in (1, 3, 1000):
        assert split.search("look up the key", limit=limit) == expected[:limit]
    assert inspect_log.Samples(3, 4) in parts  # each sample of the two-epoch log alone
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)  # the parts go to the workers
    assert split.search("look up the key", limit=1000) == expected


def test_C6_search_reads_an_eval_log_once_and_keys_each_hit_by_its_sample(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = scan(logs, workers=1, cache=False)
    opened: list[str] = []
    real = inspect_log.transcripts

    def counted(path: Any, **kw: Any) -> Iterator[Any]:
        opened.append(str(path))
        yield from real(path, **kw)

    monkeypatch.setattr(inspect_log, "transcripts", counted)
    hits = corpus.search("look up the key", limit=1000)
    assert sorted(opened) == sorted(str(p) for p in logs.iterdir())  # each log once
    assert [h.key for h in hits] == corpus.keys  # one prompt per sample, in row order
    assert len({(h.key, h.entry_id) for h in hits}) == len(hits)
    for hit in hits:
        prompt = corpus[hit.key].get(hit.entry_id)
        assert prompt is not None
        assert "Look up the key" in prompt.text
        assert hit.turn == 1  # a turn's prompt is given with its turn, once
    assert corpus.search("look up the key", limit=3) == hits[:3]
