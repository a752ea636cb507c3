"""Every run of a file of runs has a key of its own, and a Batch API file is known by most of its
first lines, not its first alone (C-1, C-2, C-6, C-7, B-2).

A file of runs keys a run ``path#<custom_id>`` when its record names it (an OpenAI Batch API
line) and ``path#n`` by its place otherwise. A ``custom_id`` may be digits: a run named ``"2"``
and the record at place 2 that names none were both ``path#2``, two rows under one key, so
``corpus[key]``, ``load(path, sample=...)``, a search's hits and the static site opened one of
them for both. A second line of the same ``custom_id`` was a second ``path#<id>`` too. Now a
named run keeps its name, a later run of the same name and a run with no name are keyed by their
place, and a place a run is named by is spelt ``@n`` (``wrappers.run_samples``).

A Batch API file whose first line had no ``custom_id`` was not told from its first line, so a
scan skipped the whole file without a word (``corpus.skipped``).

The files are written with the real shape of Batch API lines: the lines of the fixtures that
``tests/fixtures/datasets/openai_batch_recipe.py`` made with the types of openai 3.57.0, their
``custom_id`` and texts changed.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus import Corpus, Item, runs, summarize
from turnfold.corpus.summarize import runs_parts
from turnfold.formats import TranscriptFormatError
from turnfold.formats.source import open_source
from turnfold.formats.wrappers import CUSTOM_ID, runs_key
from turnfold.model import AssistantText, ToolCall, UserMessage
from turnfold.render.site import MANIFEST, RUNS, build_site

DATASETS = Path(__file__).parent / "fixtures" / "datasets"
BATCH_INPUT = DATASETS / "openai-3.57.0_batch_chat_input.jsonl"
BATCH_OUTPUT = DATASETS / "openai-3.57.0_batch_chat_output.jsonl"
QUERY = "zeta"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _asked(custom_id: str | None, question: str) -> dict[str, Any]:
    """A Batch API input line (``{custom_id, method, url, body}``) asking ``question``; with no
    ``custom_id`` when None (a line that names no run)."""
    line: dict[str, Any] = json.loads(BATCH_INPUT.read_text(encoding="utf-8").splitlines()[1])
    assert line["custom_id"] == "task-haiku"
    line["body"]["messages"][0]["content"] = question
    if custom_id is None:
        del line["custom_id"]
    else:
        line["custom_id"] = custom_id
    return line


def _answered(custom_id: str, city: str) -> dict[str, Any]:
    """A Batch API output line whose answer is a ``get_weather`` call for ``city``."""
    line: dict[str, Any] = json.loads(BATCH_OUTPUT.read_text(encoding="utf-8").splitlines()[1])
    assert line["custom_id"] == "task-weather"
    line["custom_id"] = custom_id
    call = line["response"]["body"]["choices"][0]["message"]["tool_calls"][0]
    call["function"]["arguments"] = json.dumps({"city": city})
    return line


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _clashing(folder: Path) -> Path:
    """A Batch API file whose names clash with places: ``"3"`` answered at place 0, ``"2"``
    asked at place 1, a dataset's row (no name) at place 2, an input line without its
    ``custom_id`` at place 3 (no name, and no run: its row is an error), ``task-4``, and
    ``"2"`` asked again at place 5."""
    return _write(folder / "batch.jsonl", [
        _answered("3", "Zeta City"),
        _asked("2", "Write a haiku about zeta."),
        {"messages": [{"role": "user", "content": "The row of no name says zeta."},
                      {"role": "assistant", "content": "Noted."}]},
        _asked(None, "A line that lost its custom_id."),
        _asked("task-4", "What is zeta four?"),
        _asked("2", "The second line named 2 asks zeta again."),
    ])  # fmt: skip


#: The key each run of :func:`_clashing` has, and the first words its run holds (the prompt, or
#: the called city).
CLASHING = [
    ("3", "Zeta City"),
    ("2", "Write a haiku about zeta."),
    ("@2", "The row of no name says zeta."),
    ("@3", None),  # the line of no run: its row's error
    ("task-4", "What is zeta four?"),
    ("5", "The second line named 2 asks zeta again."),
]


def _said(transcript: turnfold.Transcript) -> str:
    """What a run of the files here says first: its prompt, or the city its answer asks for."""
    for entry in transcript.entries:
        if isinstance(entry, UserMessage) and entry.text:
            return entry.text
        if isinstance(entry, ToolCall):
            assert isinstance(entry.args, dict)
            return str(entry.args["city"])
    raise AssertionError(transcript.entries)


def _assert_hits_open_their_runs(corpus: Corpus, hits: list[Any]) -> None:
    """Each hit's key opens the run holding the text its snippet shows, at the entry it names."""
    for hit in hits:
        entry = corpus[hit.key].get(hit.entry_id)
        assert isinstance(entry, (UserMessage, AssistantText, ToolCall)), hit
        text = json.dumps(entry.args) if isinstance(entry, ToolCall) else entry.text
        assert QUERY in text.lower(), (hit.key, hit.snippet, text)


def test_C1_each_run_of_a_file_whose_names_clash_with_places_has_a_key_of_its_own(
    tmp_path: Path,
) -> None:
    path = _clashing(tmp_path)
    corpus = turnfold.scan(path, workers=1, cache=False)
    keys = [row["key"] for row in corpus.rows]
    assert keys == [f"{path}#{key}" for key, _ in CLASHING]
    assert [row["sample"] for row in corpus.rows] == [key for key, _ in CLASHING]
    (error,) = [row["error"] for row in corpus.rows if row["error"]]
    assert error.startswith(f"{path}, line 4: not a transcript")
    # The tool call of the run named "3" is its alone, not shared with the record at place 3.
    called = corpus.tool_calls().select(["key", "name"]).to_pylist()
    assert called == [{"key": f"{path}#3", "name": "get_weather"}]
    # The runs that hold an answer have a turn (an input line holds a request alone).
    assert corpus.turns().column("key").to_pylist() == [f"{path}#3", f"{path}#@2"]


def test_C1_corpus_getitem_and_load_open_the_run_the_key_names(tmp_path: Path) -> None:
    path = _clashing(tmp_path)
    corpus = turnfold.scan(path, workers=1, cache=False)
    for key, said in CLASHING:
        if said is None:
            with pytest.raises(TranscriptFormatError, match=f"{path}, line 4: "):
                corpus[f"{path}#{key}"]
            with pytest.raises(TranscriptFormatError, match=f"{path}, line 4: "):
                turnfold.load(path, sample=key)
            continue
        assert _said(corpus[f"{path}#{key}"]) == said, key
        assert _said(turnfold.load(path, sample=key)) == said, key
    # A place given as a number is read as the scan keys it: the run named so first.
    assert _said(turnfold.load(path, sample=2)) == "Write a haiku about zeta."
    assert _said(turnfold.load(path, sample=3)) == "Zeta City"
    assert _said(turnfold.load(path, sample=5)) == "The second line named 2 asks zeta again."


def test_C6_hits_of_a_file_whose_names_clash_open_their_runs(tmp_path: Path) -> None:
    path = _clashing(tmp_path)
    corpus = turnfold.scan(path, workers=1, cache=False)
    hits = corpus.search(QUERY, limit=1000)
    assert [hit.key for hit in hits] == [
        f"{path}#{key}" for key, said in CLASHING if said is not None
    ]
    _assert_hits_open_their_runs(corpus, hits)
    for limit in (1, 2, 3):  # stopped at the limit before the names after it are read
        assert corpus.search(QUERY, limit=limit) == hits[:limit]


def test_C5_summarize_of_one_run_reads_the_run_its_sample_names(tmp_path: Path) -> None:
    path = _clashing(tmp_path)
    for sample, said in CLASHING:
        row = summarize(Item(key=f"{path}#{sample}", path=str(path), sample=sample))
        assert row["key"] == f"{path}#{sample}"
        assert (row["error"] is None) == (said is not None), (sample, row["error"])
        if said is not None and said != "Zeta City":  # an answer alone has no prompt
            assert row["title"] == said, sample


def test_B2_the_site_writes_one_page_for_each_run_of_a_file_whose_names_clash(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").mkdir()
    path = _clashing(tmp_path / "data")
    out = tmp_path / "site"
    build_site(path, out, workers=1, progress=False)
    files = json.loads((out / MANIFEST).read_text("utf-8"))["files"]
    built = files[str(path)]["runs"]
    assert [run["row"]["key"] for run in built] == [f"{path}#{key}" for key, _ in CLASHING]
    pages = [run["page"] for run in built]
    assert len(set(pages)) == len(pages)  # one page a run (None: the line of no run)
    for run, (_, said) in zip(built, CLASHING, strict=True):
        if said is None:
            assert run["page"] is None
            continue
        page = (out / RUNS / run["page"]).read_text("utf-8")
        assert said in page, (run["row"]["key"], said)


# --- a file cut in parts, named runs in it ------------------------------------------------------


def _mostly_rows(folder: Path) -> tuple[Path, list[str]]:
    """Twelve records, most of them a dataset's rows (keyed by place) saying ``zeta``, and three
    Batch API lines: ``"1"`` at place 9 (the row at place 1 is then ``@1``), ``"10"`` at its own
    place 10, and ``"1"`` again at place 11 (keyed by its place). The keys, in order."""
    records: list[Any] = []
    for i in range(12):
        messages = trajectory(i)
        messages[0] = {"role": "user", "content": f"Task {i}: list the zeta files"}
        records.append({"messages": messages})
    records[9] = _asked("1", "Question 9: zeta?")
    records[10] = _asked("10", "Question 10: zeta?")
    records[11] = _asked("1", "Question 11: zeta?")
    keys = [str(i) for i in range(12)]
    keys[1], keys[9] = "@1", "1"
    return _write(folder / "mixed.jsonl", records), keys


def test_C5_C6_a_file_of_runs_read_in_parts_keys_named_runs_as_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, keys = _mostly_rows(tmp_path)
    whole = turnfold.scan(path, workers=1, cache=False)
    assert [row["key"] for row in whole.rows] == [f"{path}#{key}" for key in keys]
    assert whole.errors == 0
    assert _said(whole[f"{path}#@1"]) == "Task 1: list the zeta files"
    assert _said(whole[f"{path}#1"]) == "Question 9: zeta?"
    assert _said(whole[f"{path}#11"]) == "Question 11: zeta?"
    expected = whole.search(QUERY, limit=1000)
    assert [hit.key for hit in expected] == [f"{path}#{key}" for key in keys]
    monkeypatch.setattr(runs, "SPAN_BYTES", path.stat().st_size // 5)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) or []
    assert len(parts) >= 4
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert split.turns().equals(whole.turns())
    for limit in (1, 2, 9, 10, 1000):
        hits = split.search(QUERY, limit=limit)
        _assert_hits_open_their_runs(split, hits)
        assert hits == expected[:limit], limit


def test_C1_run_samples_keys_are_unique_whatever_the_names() -> None:
    """Names that spell places, ``@`` places and repeated names: every sample differs."""
    from turnfold.formats.wrappers import run_samples  # new with the rule

    names = {0: "3", 1: "@3", 2: "x", 4: "x", 5: "0", 6: "6", 7: "@@3"}
    samples = [run_samples(8, names).get(place, str(place)) for place in range(8)]
    assert samples == ["3", "@3", "x", "@@@3", "4", "0", "6", "@@3"]
    assert len(set(samples)) == len(samples)


# --- 2. a Batch API file whose first line names no run ------------------------------------------


def test_C7_a_batch_file_whose_first_line_has_no_custom_id_is_scanned_not_skipped(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "batches"
    folder.mkdir()
    path = _write(folder / "batch_input.jsonl", [
        _asked(None, "The first line lost its custom_id."),
        *(_asked(f"task-{i}", f"Question {i}: zeta?") for i in range(1, 5)),
    ])  # fmt: skip
    source, stream = open_source(path)
    try:
        assert runs_key(source) == CUSTOM_ID
    finally:
        if stream is not None:
            stream.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corpus = turnfold.scan(folder, workers=1, cache=False)
    assert corpus.skipped == 0
    assert [row["key"] for row in corpus.rows] == [
        f"{path}#0",
        *(f"{path}#task-{i}" for i in range(1, 5)),
    ]
    # The line that is no run is counted and says why, naming its file and line (C-7).
    assert corpus.errors == 1
    assert corpus.rows[0]["error"].startswith(f"{path}, line 1: not a transcript")
    assert _said(corpus[f"{path}#task-3"]) == "Question 3: zeta?"
    with pytest.raises(TranscriptFormatError, match="custom_id"):
        turnfold.load(path)  # told as a file of named runs, which load(sample=...) reads


def test_C7_a_file_of_which_few_lines_are_runs_is_still_skipped_and_counted(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    _write(folder / "log.jsonl", [
        {"event": "start", "at": 1}, {"event": "tick", "at": 2}, {"event": "tick", "at": 3},
        _asked("task-1", "Question 1?"),
    ])  # fmt: skip
    # Said (tests/test_run_keys_reading.py).
    with pytest.warns(UserWarning, match="not mostly runs"):
        corpus = turnfold.scan(folder, workers=1, cache=False)
    assert len(corpus) == 0
    assert corpus.skipped == 1
