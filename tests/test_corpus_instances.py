"""An OpenHands eval ``output.jsonl`` in a corpus (C-1, C-2, H-3, issue 13): one row per instance,
keyed ``path#<instance_id>``, the file read once; a file of one instance, or an event list, is
one row keyed by its path. And the engine under a scan: the chunks done in the scanning process
while its workers start, and the largest files started first.

Counts are checked against each instance's own ``load(path, sample=ID)`` and its widget, never
against numbers written down here.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.corpus import COLUMNS, scan, summarize
from turnfold.corpus import engine as engine_module
from turnfold.corpus.discover import Item
from turnfold.formats.harnesses import openhands

from .test_corpus import _Reads, _widget_counts

summarize_module = importlib.import_module("turnfold.corpus.summarize")
OPENHANDS = Path(__file__).parent / "fixtures" / "harnesses" / "openhands"
OUTPUT = "openhands_output-jsonl_hand-made_delegate-and-errors.jsonl"
ONE = "openhands_output-jsonl_hand-made_old-history-pairs.jsonl"
GUI = "openhands_trajectory_basic-gui-mode.json"
TREE = Path(__file__).parent / "fixtures" / "corpus"


pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    target = tmp_path / "outputs"
    shutil.copytree(OPENHANDS, target)
    return target


def _ids(path: Path) -> list[str]:
    """The instance ids of an output, read here with json (the test's own reader)."""
    ids = []
    for line in path.open():
        try:
            ids.append(str(json.loads(line)["instance_id"]))
        except json.JSONDecodeError:
            continue
    return ids


def _alone(row: dict[str, Any]) -> turnfold.Transcript:
    if row["sample"] is None:
        return turnfold.load(row["path"])
    return turnfold.load(row["path"], sample=row["sample"])


# --- rows -----------------------------------------------------------------------------------------


def test_C1_an_eval_output_is_one_row_per_instance_keyed_path_instance_id(outputs: Path) -> None:
    corpus = scan(outputs, workers=1)
    output = outputs / OUTPUT
    ids = _ids(output)
    assert len(ids) > 1
    assert [k for k in corpus.keys if k.startswith(str(output))] == [f"{output}#{i}" for i in ids]
    for row in corpus:
        assert list(row) == list(COLUMNS)
        assert row["format"] == "openhands"
        if row["path"] == str(output):
            assert row["sample"] == row["key"].partition("#")[2]


def test_C1_a_file_of_one_instance_and_an_event_list_are_one_row_keyed_by_the_path(
    outputs: Path,
) -> None:
    corpus = scan(outputs, workers=1)
    assert len(_ids(outputs / ONE)) == 1
    for name in (ONE, GUI):
        (row,) = [r for r in corpus if r["path"] == str(outputs / name)]
        assert (row["key"], row["sample"]) == (str(outputs / name), None)


def test_C2_each_instance_counts_what_its_own_load_shows(outputs: Path) -> None:
    corpus = scan(outputs, workers=1)
    tool_keys = corpus.tool_calls().column("key").to_pylist()
    turn_keys = corpus.turns().column("key").to_pylist()
    for row in corpus:
        assert row["error"] is None, row["error"]
        alone = _alone(row)
        assert corpus[row["key"]] == alone  # corpus[key] loads that instance, and only it
        shown = _widget_counts(alone)
        assert {name: row[name] for name in shown} == shown, row["key"]
        assert row["warnings"] == len(alone.warnings), row["key"]
        assert row["outcome"] == alone.metadata.get("outcome")
        assert tool_keys.count(row["key"]) == row["tool_calls"]
        assert turn_keys.count(row["key"]) == row["turns"]
    outcomes = {row["sample"]: row["outcome"] for row in corpus if row["sample"]}
    assert len(outcomes) == len(_ids(outputs / OUTPUT))


def test_C7_a_bad_line_warns_the_instance_before_it_and_an_id_met_again_is_said(
    outputs: Path,
) -> None:
    output = outputs / OUTPUT
    lines = output.read_text().splitlines()
    again = json.loads(lines[0])
    output.write_text("\n".join([lines[0], "{not json", *lines[1:], json.dumps(again)]) + "\n")
    corpus = scan(outputs, workers=1, cache=False)
    rows = [r for r in corpus if r["path"] == str(output)]
    assert [r["sample"] for r in rows] == _ids(output)[:-1]  # the repeated id is one row
    told = {}
    for row in rows:
        alone = _alone(row)
        assert row["warnings"] == len(alone.warnings)  # C-2: what its load shows
        told[row["sample"]] = [w.line for w in alone.warnings]
    # An instance's lines are its own up to the next instance's: the bad line is the first's,
    # the id met again (the file's last line) the last's.
    first, *_, final = told
    assert told[first] == [2]
    assert told[final] == [len(lines) + 2]
    assert all(not told[i] for i in told if i not in (first, final))
    (said,) = _alone(rows[-1]).warnings
    assert "again" in said.reason


def test_C5_a_large_eval_output_is_read_in_parts_by_every_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker reads its own lines of an ``output.jsonl`` (one instance a line); the rows
    are the file's read whole: an instance met again in a later part is no row, and a bad line
    of any part is counted in the row of the instance before it, whatever part that is in."""
    from turnfold.corpus import runs

    lines = (OPENHANDS / OUTPUT).read_text().splitlines()
    instances = [json.loads(line) for line in lines]
    many = [{**instances[n % len(instances)], "instance_id": f"task-{n}"} for n in range(12)]
    text = [json.dumps(instance) for instance in many]
    text.insert(7, "{not json")  # a bad line in a later part
    text.append(json.dumps(many[1]))  # task-1 again, at the end
    output = tmp_path / "output.jsonl"
    output.write_text("\n".join(text) + "\n" + "\n  \n")  # a part may hold no instance
    whole = scan(output, workers=1, cache=False)
    assert len(whole) == 12
    for span in (1, 40, 900):  # each line a part, parts across lines
        monkeypatch.setattr(runs, "SPAN_BYTES", span)
        monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
        assert scan(output, workers=2, cache=False).to_arrow().equals(whole.to_arrow())
    monkeypatch.setattr(runs, "SPAN_BYTES", max(1, output.stat().st_size // 5))
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    parts = summarize_module.runs_parts(Item(key=str(output), path=str(output),
                                             size=output.stat().st_size))  # fmt: skip
    assert parts is not None
    assert len(parts) >= 4
    assert {part.format for part in parts} == {"openhands"}
    split = scan(output, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert split.turns().equals(whole.turns())
    assert split.keys == [f"{output}#task-{n}" for n in range(12)]
    for row in split:  # the bad line and the id met again, each in the row before it
        assert row["warnings"] == len(turnfold.load(output, sample=row["sample"]).warnings)
    told = [row["warnings"] for row in split]
    assert told == [0] * 6 + [1] + [0] * 4 + [1]  # task-6, before the bad line; task-11 last


def test_C6_a_large_eval_output_is_searched_in_parts_to_the_same_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker searches its own lines of an ``output.jsonl``; an instance met again in a
    later part has no hits (the first is its row), so the hits are those of the file searched
    whole; a file of one instance (written twice) is keyed by its path."""
    from turnfold.corpus import runs

    lines = (OPENHANDS / OUTPUT).read_text().splitlines()
    instances = [json.loads(line) for line in lines]
    many = [{**instances[n % len(instances)], "instance_id": f"task-{n}"} for n in range(12)]
    text = [json.dumps(instance) for instance in many]
    text.insert(7, "{not json")
    text.append(json.dumps({**many[2], "history": []}))  # task-2 again, at the end
    output = tmp_path / "output.jsonl"
    output.write_text("\n".join(text) + "\n" + "\n  \n")
    single = tmp_path / "one" / "output.jsonl"
    single.parent.mkdir()
    single.write_text(text[0] + "\n" + text[0] + "\n")  # one instance, met again: one row
    whole = scan(tmp_path, workers=1, cache=False)
    query = "calc"
    expected = whole.search(query, limit=1000)
    keys = [hit.key for hit in expected]
    assert {f"{output}#task-{n}" for n in range(12)} <= set(keys)
    assert str(single) in keys
    for span in (1, 40, 900):  # each line a part, parts across lines
        monkeypatch.setattr(runs, "SPAN_BYTES", span)
        monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
        split = scan(tmp_path, workers=2, cache=False)
        for limit in (1, 7, 1000):
            assert split.search(query, limit=limit) == expected[:limit], (span, limit)
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)  # the parts go to the workers
    assert split.search(query, limit=1000) == expected


def test_H3_instances_reads_each_instance_as_load_with_its_id_does() -> None:
    from turnfold.formats.source import open_source

    path = OPENHANDS / OUTPUT
    source, stream = open_source(path)
    try:
        read = list(openhands.instances(source))
    finally:
        assert stream is not None
        stream.close()
    assert [i for i, _ in read] == _ids(path)
    for instance_id, transcript in read:
        alone = turnfold.load(path, sample=instance_id)
        assert transcript.entries == alone.entries
        assert transcript.metadata == alone.metadata
        assert transcript.accounting is not None
        assert transcript.accounting.counts["instance"] == {"mapped": 1}


def test_H3_an_event_list_as_json_lines_is_no_eval_output(tmp_path: Path) -> None:
    events = json.loads((OPENHANDS / GUI).read_text())
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in events))
    (row,) = scan(tmp_path, workers=1, cache=False).rows
    assert (row["key"], row["sample"], row["error"]) == (str(lines), None, None)
    assert row["tool_calls"] == _widget_counts(turnfold.load(lines))["tool_calls"]


def test_C2_summarize_names_one_instance_and_says_an_output_of_many_is_many_items() -> None:
    path = str(OPENHANDS / OUTPUT)
    ids = _ids(Path(path))
    many = summarize(Item(key=path, path=path))
    assert many["error"] is not None
    assert f"{len(ids)} instances" in many["error"]
    one = summarize(Item(key=f"{path}#{ids[1]}", path=path, sample=ids[1]))
    assert one["error"] is None
    assert one["turns"] == _widget_counts(turnfold.load(path, sample=ids[1]))["turns"]


def test_C4_an_eval_output_comes_from_the_index_whole(
    outputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = scan(outputs, workers=1)
    reads = _Reads(monkeypatch)
    again = scan(outputs, workers=1)
    assert (reads.count, again.read) == (0, 0)
    assert again.to_arrow().equals(first.to_arrow())
    assert again.tool_calls().equals(first.tool_calls())


def test_C6_search_keys_each_hit_by_its_instance(outputs: Path) -> None:
    corpus = scan(outputs, workers=1)
    output = outputs / OUTPUT
    hits = corpus.search("calc", limit=1000)
    keys = {hit.key for hit in hits}
    assert keys <= set(corpus.keys)
    assert {k for k in keys if k.startswith(str(output))} == {f"{output}#{i}" for i in _ids(output)}


# --- the engine under a scan --------------------------------------------------------------------


def _pids(items: list[Item]) -> list[tuple[str, int]]:
    """Which process did each item (a picklable function for the workers)."""
    time.sleep(0.02)
    return [(item.key, os.getpid()) for item in items]


def _pids_each(items: list[Item]) -> list[tuple[str, int]]:
    """:func:`_pids` at a hundredth of a second per item, as files cost."""
    time.sleep(0.01 * len(items))
    return [(item.key, os.getpid()) for item in items]


def _slow_start(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Workers that take ``seconds`` to come up, as on a busy machine or a cold forkserver: a
    kernel's, which has threads (this process alone has one, and would fork them at once)."""
    from turnfold import forking

    monkeypatch.setattr(forking, "can_fork", lambda: False)
    real: Callable[..., None] = engine_module._Starter._start

    def start(self: Any, workers: int) -> None:
        time.sleep(seconds)
        real(self, workers)

    monkeypatch.setattr(engine_module._Starter, "_start", start)


def _items(count: int, size: Callable[[int], int] = lambda i: 10) -> list[Item]:
    return [Item(key=f"k{i}", path=f"/nowhere/{i}", size=size(i)) for i in range(count)]


def test_C5_chunks_done_here_while_the_workers_start_keep_the_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 1)
    _slow_start(monkeypatch, 0.3)
    items = _items(200)  # 4 s of work here at most: a cold forkserver starts well before
    done = list(engine_module.ordered_map(_pids, items, workers=2))
    assert [key for key, _ in done] == [item.key for item in items]
    here = {pid for _, pid in done if pid == os.getpid()}
    elsewhere = {pid for _, pid in done if pid != os.getpid()}
    assert here  # this process worked while the workers started
    assert elsewhere  # and the workers did the rest


def test_C5_spread_starts_the_largest_first_and_does_small_ones_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 1)
    _slow_start(monkeypatch, 0.3)
    items = _items(60, size=lambda i: 1000 + i)  # the last items are the largest
    done = list(engine_module.spread(_pids, items, workers=2))
    assert sorted(index for index, _ in done) == list(range(len(items)))
    assert all(items[index].key == key for index, (key, _) in done)
    by_worker = [index for index, (_, pid) in done if pid != os.getpid()]
    by_here = [index for index, (_, pid) in done if pid == os.getpid()]
    assert by_here
    assert by_worker
    assert min(by_worker[:6]) > max(by_here)  # workers took the largest, this process the least


def test_C5_the_rest_of_a_chunk_begun_here_goes_to_the_workers_once_they_are_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 150)
    _slow_start(monkeypatch, 0.1)
    items = _items(300)  # two chunks, each 1.5 s of work: the workers are up well before
    done = list(engine_module.spread(_pids_each, items, workers=2))
    assert sorted(index for index, _ in done) == list(range(len(items)))
    assert all(items[index].key == key for index, (key, _) in done)
    here = [index for index, (_, pid) in done if pid == os.getpid()]
    # This process began a chunk, and left the rest of it to the workers: it did not hold
    # them idle until it ended it.
    assert 0 < len(here) < 150


def test_C5_a_scan_that_ends_before_its_workers_start_does_not_wait_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_module, "LOCAL_BYTES", 0)
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 1)
    gate = threading.Event()
    real: Callable[..., None] = engine_module._Starter._start

    def start(self: Any, workers: int) -> None:
        gate.wait(10)
        real(self, workers)

    monkeypatch.setattr(engine_module._Starter, "_start", start)
    here = scan(TREE, workers=1, cache=False)
    began = time.monotonic()
    spread_rows = scan(TREE, workers=2, cache=False)
    took = time.monotonic() - began
    gate.set()
    assert spread_rows.to_arrow().equals(here.to_arrow())
    assert spread_rows.tool_calls().equals(here.tool_calls())
    assert took < 10  # not held by the gate: the first chunks' results were awaited elsewhere
