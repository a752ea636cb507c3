"""Files whose records are runs (spec C-1, C-7): a dataset kept as JSON lines (``train.jsonl``,
one trajectory per line) or as one JSON array of rows is scanned one row per record, keyed
``path#n``, each read as ``load(record)`` reads it; ``load(path)`` says how to read them."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import turnfold
from tests.table_runs import trajectory
from turnfold.comparison import compare_rows
from turnfold.corpus import summarize
from turnfold.corpus.discover import Item
from turnfold.formats.errors import TranscriptFormatError

FIXTURES = Path(__file__).parent / "fixtures"
MESSAGES = FIXTURES / "messages"
SHAREGPT = MESSAGES / "sharegpt_llama-factory_function-calls.json"


def _rows(count: int) -> list[dict[str, Any]]:
    return [{"task_id": f"t{i}", "reward": i % 2, "messages": trajectory(i)} for i in range(count)]


pytestmark = pytest.mark.usefixtures("cache_dir")


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """What this process reads of files of runs from now on: each file, and its part read (None:
    the whole file)."""
    from turnfold.corpus import runs

    reads: list[tuple[str, Any]] = []
    real = runs.Records.__init__

    def counted(self: runs.Records, name: str, span: runs.Span | None = None) -> None:
        reads.append((name, span))
        real(self, name, span)

    monkeypatch.setattr(runs.Records, "__init__", counted)
    return reads


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
    assert rows["error"][1].startswith(f"{path}, line 2: not a transcript (invalid JSON")
    # The file and its line, not the record read as an object of its own ("<object>, line 1").
    assert rows["error"][2].startswith(f"{path}, line 3: not a transcript (")
    assert list(rows["tool_calls"][[0, 3]]) == [1, 1]
    # Opening a row that cannot be read says why as its row does, word for word (it was read
    # as a sample of an eval log: "the log holds no samples"), and so does load(path, sample=n).
    for place in (1, 2):
        for key, sample in ((f"{path}#{place}", None), (None, place)):
            with pytest.raises(TranscriptFormatError) as caught:
                corpus[key] if key is not None else turnfold.load(path, sample=sample)
            assert str(caught.value) == rows["error"][place]


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

    path = _jsonl(tmp_path / "train.jsonl", _rows(5))
    corpus = turnfold.scan(path, workers=1)
    reads = _reads(monkeypatch)
    hits = corpus.search("file_3")
    assert [(hit.key, hit.snippet) for hit in hits] == [(f"{path}#3", "file_3.py")]
    assert reads == [(str(path), None)]  # one pass over the file, not one per row
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


def _quirky(path: Path) -> Path:
    """A file of runs with what a dataset written by many hands holds: a UTF-8 byte order mark,
    blank and white lines, a cut-off line, two objects glued on one line, a record that is no
    run, a line of invalid UTF-8, and a last line with no end."""
    rows = [json.dumps(row) for row in _rows(40)]
    rows[3] = rows[3][:50]
    rows[7] = rows[7] + rows[8]
    rows[11] = json.dumps({"task_id": "none", "messages": [{"speaker": "nobody"}]})
    rows[13] = ""
    rows[14] = "   \t"
    rows[20] = rows[20].replace("Done with", "Done \udcff with")
    text = "\ufeff" + "\n".join(rows)  # no end to the last line
    path.write_bytes(text.encode("utf-8", "surrogateescape").replace(b"\xed\xb3\xbf", b"\xff"))
    return path


def test_C5_a_large_file_of_runs_is_read_in_parts_by_every_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each part numbers its records from 0; the scan renumbers them after the parts before it,
    so the rows, tool calls and turns are those of the file read whole, in one worker."""
    from turnfold.corpus import engine, runs
    from turnfold.corpus.summarize import runs_parts

    path = _quirky(tmp_path / "rollouts.jsonl")
    whole = turnfold.scan(path, workers=1, cache=False)
    assert len(whole) == 39
    assert whole.errors == 2
    assert whole.to_pandas()["warnings"][19] == 1  # its line's invalid UTF-8, said (L-4)
    assert "invalid UTF-8" in str(whole[f"{path}#19"].warnings[0])
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)  # the parts go to the workers, small as they are
    monkeypatch.setattr(runs, "SPAN_BYTES", 700)  # about three records a part
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1400)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size))
    assert parts is not None
    assert len(parts) > 8
    reads = _reads(monkeypatch)
    alone = turnfold.scan(path, workers=1, cache=False)  # no workers to share it: read whole
    assert reads == [(str(path), None)]
    assert alone.to_arrow().equals(whole.to_arrow())
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert split.turns().equals(whole.turns())
    rows = split.to_pandas()
    # The file's line, not the part's.
    assert rows["error"][3].startswith(f"{path}, line 4: not a transcript (invalid JSON")
    assert split.keys[8] == f"{path}#8"
    assert split[f"{path}#8"] == turnfold.load(_rows(40)[8])
    assert split[f"{path}#38"] == turnfold.load(_rows(40)[39])


def test_C6_a_large_file_of_runs_is_searched_in_parts_to_the_same_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker searches its own part of the file, as a scan reads it; a part numbers its
    records from 0, and its hits are renumbered after the records of the parts before it, so
    the hits are the file's searched whole, keyed by their rows, at any limit."""
    from turnfold.corpus import engine, runs

    path = _quirky(tmp_path / "rollouts.jsonl")
    whole = turnfold.scan(path, workers=1, cache=False)
    queries = ("list the files", "file_3", "done with task 3", "\\bfile_\\d9\\b")
    expected = {q: whole.search(q, regex=q.startswith("\\"), limit=1000) for q in queries}
    assert len(expected["list the files"]) == 37  # every readable run's prompt
    # Task 30 is record 29: two blank lines hold none, a line of two glued objects two.
    assert [h.key for h in expected["done with task 3"]][:2] == [f"{path}#29", f"{path}#30"]
    monkeypatch.setattr(runs, "SPAN_BYTES", 700)  # about three records a part
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1400)
    split = turnfold.scan(path, workers=2, cache=False)
    reads = _reads(monkeypatch)  # the work stays in this process: too little for workers
    for query, hits in expected.items():
        for limit in (1, 5, 1000):
            assert split.search(query, regex=query.startswith("\\"), limit=limit) == hits[:limit]
    assert len({span for _, span in reads if span is not None}) > 8  # read in its parts
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)  # the parts go to the workers
    assert split.search("list the files", limit=1000) == expected["list the files"]
    for hit in expected["done with task 3"]:  # each hit opens on its entry
        entry = split[hit.key].get(hit.entry_id)
        assert entry is not None
        assert "task 3" in entry.text.lower()


def test_C5_a_run_reads_in_the_dataset_s_format_whatever_part_it_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that only its dataset's format reads (detection alone finds no format in it: its
    messages are half broken) is read in that format, the dataset's first run's, whether it is
    read whole, in a part that begins with it, or alone by ``load(path, sample=n)``
    (``corpus[key]``). A part began with detection, and so made the run an error row (found
    by a fuzz of cut files)."""
    from turnfold.corpus import runs
    from turnfold.corpus.summarize import runs_parts

    odd = _rows(3)[2]
    odd["messages"] = [*odd["messages"][:2], {**odd["messages"][2], "content": {"a": 1}},
                       {"role": "tool", "tool_call_id": "call_2"},
                       {"content": "It reads: # demo"}]  # fmt: skip
    with pytest.raises(TranscriptFormatError):
        turnfold.load(odd)  # alone, no format reads it
    path = _jsonl(tmp_path / "train.jsonl", [*_rows(2), odd, *_rows(5)[3:]])
    whole = turnfold.scan(path, workers=1, cache=False)
    assert whole.errors == 0
    assert whole[f"{path}#2"] == turnfold.load(odd, format="openai")
    assert turnfold.load(path, sample=2) == whole[f"{path}#2"]
    monkeypatch.setattr(runs, "SPAN_BYTES", len(path.read_text().split("\n")[0]) * 2)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size))
    assert parts is not None
    assert parts[1].part is not None
    assert parts[1].part.line == 3  # the odd run begins the second part
    assert turnfold.scan(path, workers=2, cache=False).to_arrow().equals(whole.to_arrow())


def test_C5_the_parts_of_a_file_of_runs_cover_it_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from turnfold.corpus import runs

    monkeypatch.setattr(runs, "_BLOCK", 64)  # cuts near and across the ends of blocks
    chooser = random.Random(7)
    for trial in range(60):
        monkeypatch.setattr(runs, "SPAN_BYTES", chooser.randint(1, 300))
        lines = [b"x" * chooser.choice((0, 1, 5, 80, 400)) for _ in range(chooser.randint(1, 40))]
        data = b"\n".join(lines) + chooser.choice((b"", b"\n"))
        path = tmp_path / f"{trial}.jsonl"
        path.write_bytes(data)
        spans = runs.spans(str(path), len(data))
        if spans is None:
            continue
        assert spans[0].start == 0
        assert spans[-1].end == len(data)
        for before, after in itertools.pairwise(spans):
            assert before.end == after.start
            assert data[after.start - 1 : after.start] == b"\n"
        for span in spans:
            assert span.line == data[: span.start].count(b"\n") + 1
            assert span.end > span.start


def test_C5_what_is_not_cut_in_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compressed file, one in UTF-16, a JSON array and a session of any size are each read
    by one worker, as before."""
    from turnfold.corpus import runs
    from turnfold.corpus.summarize import runs_parts

    monkeypatch.setattr(runs, "SPAN_BYTES", 300)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 600)
    text = "".join(json.dumps(row) + "\n" for row in _rows(10))
    files = {
        "rollouts.jsonl.gz": gzip.compress(text.encode()),
        "utf16.jsonl": text.encode("utf-16"),
        "array.json": json.dumps(_rows(10)).encode(),
        "session.jsonl": (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_bytes(),
        "plain.jsonl": text.encode(),
    }
    cut = {}
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        item = Item(key=str(path), path=str(path), size=len(data))
        cut[name] = runs_parts(item) is not None
    assert cut == {"rollouts.jsonl.gz": False, "utf16.jsonl": False, "array.json": False,
                   "session.jsonl": False, "plain.jsonl": True}  # fmt: skip
    corpus = turnfold.scan(tmp_path, workers=2, cache=False)
    assert len(corpus) == 41
    assert corpus.errors == 0


def test_C4_a_file_of_runs_read_in_parts_is_one_entry_of_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnfold.corpus import runs

    monkeypatch.setattr(runs, "SPAN_BYTES", 500)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1000)
    path = _jsonl(tmp_path / "train.jsonl", _rows(12))
    first = turnfold.scan(tmp_path, workers=2)
    again = turnfold.scan(tmp_path, workers=2)
    assert (first.read, again.read, again.cached) == (1, 0, 1)
    assert again.to_arrow().equals(first.to_arrow())
    assert again.tool_calls().equals(first.tool_calls())
    with path.open("a") as out:
        out.write(json.dumps(_rows(13)[12]) + "\n")
    grown = turnfold.scan(tmp_path, workers=2)
    assert grown.keys == [f"{path}#{n}" for n in range(13)]
    assert grown.to_arrow().equals(turnfold.scan(path, workers=1, cache=False).to_arrow())


def test_C4_a_file_of_runs_that_grew_is_read_on_from_its_last_complete_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A training run appends rollouts as it goes: once a scan has seen the file grow (and
    marked it, read whole), the next ones read its new lines alone and keep the rows of the old
    ones from the index, as a growing session file is read on (C-4). Every scan's rows are
    those of the file read afresh."""
    from turnfold.corpus import engine, runs

    path = tmp_path / "rollouts.jsonl"
    lines = [json.dumps(row) + "\n" for row in _rows(30)]
    path.write_text("".join(lines[:10]))
    reads = _reads(monkeypatch)
    read: list[runs.Span | None] = []  # the parts of the file the last scan read

    def scan(workers: int = 1) -> turnfold.Corpus:
        reads.clear()
        corpus = turnfold.scan(tmp_path, workers=workers)
        read[:] = [span for _, span in reads]
        fresh = turnfold.scan(path, workers=1, cache=False)
        assert corpus.to_arrow().equals(fresh.to_arrow())
        assert corpus.tool_calls().equals(fresh.tool_calls())
        assert corpus.turns().equals(fresh.turns())
        return corpus

    scan()
    assert read == [None]
    with path.open("a") as out:  # the first growth a scan sees: read whole, and marked
        out.write(lines[10])
    scan()
    assert read == [None]
    old = path.stat().st_size
    with path.open("a") as out:  # read on: the new lines alone, the last one still written
        out.write(lines[11] + lines[12][:-1].rstrip("\n") + lines[13][:30])
    grown = scan()
    assert [(span.start, span.line) for span in read[:1] if span] == [(old, 12)]
    assert grown.errors == 1  # the line being written: a row that says so, for now
    with path.open("a") as out:  # ...which the next scan reads again, whole
        out.write(lines[13][30:] + lines[14] + lines[15].replace("Task", "Tâche"))
    assert scan().errors == 0
    assert read[0] is not None
    assert read[0].start > old
    # Parts of the new lines for every worker, after the rows kept of the old ones.
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)
    monkeypatch.setattr(runs, "SPAN_BYTES", 600)
    with path.open("a") as out:
        out.write("".join(lines[16:30]))
    assert len(scan(workers=2)) == 30
    # A file rewritten (another run's rollouts, longer): no longer what was marked, read whole.
    path.write_text("".join(lines[29::-1]) + lines[0])
    read.clear()
    rewritten = scan()
    assert read == [None]
    assert len(rewritten) == 31


_LINES = st.sampled_from(
    [
        "good",
        "good",
        "good",
        "glued",
        "blank",
        "white",
        "cut",
        "nothing",
        "utf8",
        "list",
    ]
)


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(_LINES, min_size=2, max_size=30), span=st.integers(1, 900),
       end=st.sampled_from(["\n", ""]))  # fmt: skip
def test_C5_any_file_of_runs_cut_anywhere_reads_as_whole(
    kinds: list[str], span: int, end: str
) -> None:
    """Whatever a file of runs holds, and wherever its parts are cut, the scan's rows, tool
    calls and turns are those of the file read whole (the renumbering of each part's rows)."""
    import tempfile

    from turnfold.corpus import runs
    from turnfold.corpus.summarize import runs_parts

    texts = {
        "good": lambda i: json.dumps(_rows(i + 1)[i]),
        "glued": lambda i: json.dumps(_rows(i + 1)[i]) + json.dumps(_rows(i + 2)[i + 1]),
        "blank": lambda i: "",
        "white": lambda i: " \t",
        "cut": lambda i: json.dumps(_rows(i + 1)[i])[:30],
        "nothing": lambda i: json.dumps({"task_id": f"n{i}"}),
        "utf8": lambda i: json.dumps(_rows(i + 1)[i]).replace("Task", "T\udcffask"),
        "list": lambda i: json.dumps([1, 2]),
    }
    lines = [json.dumps(row) for row in _rows(6)]  # a file of runs by its first records
    lines += [texts[kind](i) for i, kind in enumerate(kinds)]
    data = ("\n".join(lines) + end).encode("utf-8", "surrogateescape")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rollouts.jsonl"
        path.write_bytes(data)
        whole = turnfold.scan(path, workers=1, cache=False)
        original = runs.SPAN_BYTES, runs.SPLIT_BYTES
        runs.SPAN_BYTES, runs.SPLIT_BYTES = span, 1
        try:
            # Not a file of runs by its first records (mostly no runs), or one part: not cut.
            assume(runs_parts(Item(key=str(path), path=str(path), size=len(data))) is not None)
            split = turnfold.scan(path, workers=2, cache=False)
        finally:
            runs.SPAN_BYTES, runs.SPLIT_BYTES = original
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    assert split.turns().equals(whole.turns())
