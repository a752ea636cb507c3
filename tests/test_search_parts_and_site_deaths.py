"""A part of a large file of runs that a search cannot read, and a run whose reader kills its
worker while a static site is built (C-6, C-7, B-2).

A large file of runs in JSON lines is searched in the parts a scan reads it in; each part
numbers its records from 0 and its hits are renumbered after the records of the parts before
it. A part that could not be read (its worker died, its bytes could not be read) said no count,
so the hits of every later part of that file were keyed too low: each opened another run than
the one holding the text. Those hits are now left out, the file named in the search's warning.

A site's worker that died on a file stopped the whole build (``ReaderDied``); now the file is a
run that could not be read, as a run whose load raised is: a row of the index saying why, no
page. The killers are made as tests/test_scan_worker_death.py makes them: a script of its own
whose forked workers inherit its patched reader.
"""

from __future__ import annotations

import errno
import html
import json
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold.corpus import Item, runs
from turnfold.corpus.search import SearchHit
from turnfold.corpus.summarize import runs_parts
from turnfold.model import UserMessage
from turnfold.render.site import INDEX, MANIFEST, RUNS, build_site, page_name

TREE = Path(__file__).parent / "fixtures" / "corpus"
CODEX = next((TREE / "codex").rglob("rollout-*-a1b2c3d4-*.jsonl"))
#: Every record's prompt holds it ("Task 7: list the files").
QUERY = "list the files"
#: Records in the file of runs, and the record whose part cannot be read.
RECORDS, BROKEN = 40, 20
#: The parts are this many bytes (three records each), as tests of parts make them.
SPAN = 1000

pytestmark = pytest.mark.usefixtures("cache_dir")


def _rollouts(folder: Path) -> Path:
    """A file of runs in JSON lines, one trajectory (tests/table_runs.py) a line."""
    path = folder / "rollouts.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"t{i}", "messages": trajectory(i)}) + "\n"
                            for i in range(RECORDS)))  # fmt: skip
    return path


def _spans(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[runs.Span]:
    monkeypatch.setattr(runs, "SPAN_BYTES", SPAN)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 2 * SPAN)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) or []
    return [part.part for part in parts if isinstance(part.part, runs.Span)]


def _broken_offset(path: Path) -> int:
    """The first byte of record :data:`BROKEN`: its part is the one that cannot be read."""
    lines = path.read_bytes().splitlines(keepends=True)
    return sum(len(line) for line in lines[:BROKEN])


def _first_of_broken_part(path: Path, spans: list[runs.Span]) -> int:
    """The record the broken part begins with (one record a line)."""
    offset = _broken_offset(path)
    (span,) = [span for span in spans if span.start <= offset < span.end]
    assert span is not spans[0]
    assert span is not spans[-1]  # a middle part: parts follow it
    return span.line - 1


def _assert_each_hit_opens_its_run(path: Path, hits: list[SearchHit]) -> None:
    """Each hit's key, opened with a corpus of the file, gives the run that holds the text the
    hit shows, at the entry it names."""
    corpus = turnfold.scan(path, workers=1, cache=False)
    for hit in hits:
        entry = corpus[hit.key].get(hit.entry_id)
        assert isinstance(entry, UserMessage), hit
        assert hit.snippet == entry.text, (hit.key, hit.snippet, entry.text)


# --- 1. a part that cannot be read ----------------------------------------------------------------


#: Scans the file of runs with two workers (nothing dies), then searches it with the reader of
#: the part that holds the byte offset given dying in its worker; prints the hits and warnings.
_SEARCH_SCRIPT = """
import json, os, sys, warnings
import turnfold
from turnfold.corpus import engine, runs, search

engine.LOCAL_BYTES, engine.HERE_BYTES, engine.CHUNK_ITEMS = 0, -1, 1
runs.SPAN_BYTES, runs.SPLIT_BYTES = int(sys.argv[3]), 2 * int(sys.argv[3])
path, offset, query = sys.argv[1], int(sys.argv[2]), sys.argv[4]
corpus = turnfold.scan(path, workers=2, cache=False)
real = search.search_item

def reading(item, *args, **kwargs):
    part = item.part
    if isinstance(part, runs.Span) and part.start <= offset < part.end:
        os._exit(3)
    return real(item, *args, **kwargs)

search.search_item = reading
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    hits = corpus.search(query, limit=1000)
print(json.dumps({"hits": [[hit.key, hit.turn, hit.entry_id, hit.snippet] for hit in hits],
                  "warnings": [str(w.message) for w in caught]}))
"""


def test_C6_C7_a_part_whose_reader_dies_leaves_no_hit_that_opens_another_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _rollouts(tmp_path)
    spans = _spans(path, monkeypatch)
    assert len(spans) >= 4, spans
    first = _first_of_broken_part(path, spans)
    script = tmp_path / "search_with_a_killing_part.py"
    script.write_text(_SEARCH_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(path), str(_broken_offset(path)), str(SPAN), QUERY],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    hits = [SearchHit(key, turn, entry_id, snippet) for key, turn, entry_id, snippet in out["hits"]]
    _assert_each_hit_opens_its_run(path, hits)
    # The parts before the one that died were searched whole: their hits are all there.
    assert [hit.key for hit in hits] == [f"{path}#{i}" for i in range(first)]
    (said,) = out["warnings"]
    assert "could not read 1 file(s) again" in said
    assert said.count(str(path)) == 1
    assert f"{path}: its reader's process died (exit code 3)" in said


def test_C6_a_part_whose_bytes_cannot_be_read_leaves_no_hit_that_opens_another_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fails in the middle of a part (EIO after two of its three records): the hits
    read before it stand, numbered right; the later parts' were numbered on from the two
    records counted, each opening the run before its own."""
    path = _rollouts(tmp_path)
    spans = _spans(path, monkeypatch)
    first = _first_of_broken_part(path, spans)
    broken = next(span for span in spans if span.line - 1 == first)
    corpus = turnfold.scan(path, workers=2, cache=False)
    assert corpus.errors == 0
    every = corpus.search(QUERY, limit=1000)
    assert [hit.key for hit in every] == [f"{path}#{i}" for i in range(RECORDS)]
    real = runs.Records._lines

    def failing(self: runs.Records, stream: Any, span: runs.Span) -> Iterator[Any]:
        for read, record in enumerate(real(self, stream, span)):
            if span == broken and read == 2:
                raise OSError(errno.EIO, "Input/output error", self.path)
            yield record

    monkeypatch.setattr(runs.Records, "_lines", failing)
    with pytest.warns(UserWarning, match=r"could not read 1 file\(s\) again") as caught:
        hits = corpus.search(QUERY, limit=1000)
    _assert_each_hit_opens_its_run(path, hits)
    assert hits == every[: first + 2]  # the part's two records read before the failure too
    (said,) = [str(w.message) for w in caught]
    assert said.count(str(path)) == 1
    assert "Input/output error" in said


def test_C6_a_search_stopped_by_its_limit_before_the_broken_part_warns_of_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is met in the first part: the broken part is never waited for, nothing is
    said of it, and the hits are those of the file read whole."""
    path = _rollouts(tmp_path)
    spans = _spans(path, monkeypatch)
    first = _first_of_broken_part(path, spans)
    broken = next(span for span in spans if span.line - 1 == first)
    corpus = turnfold.scan(path, workers=2, cache=False)
    every = corpus.search(QUERY, limit=1000)
    real = runs.Records._lines

    def failing(self: runs.Records, stream: Any, span: runs.Span) -> Iterator[Any]:
        if span == broken:
            raise OSError(errno.EIO, "Input/output error", self.path)
        yield from real(self, stream, span)

    monkeypatch.setattr(runs.Records, "_lines", failing)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert corpus.search(QUERY, limit=3) == every[:3]


# --- 2. a site goes on past a reader's death ------------------------------------------------------


#: Builds a site with two worker processes; the readers of the file named (or of the part of a
#: Parquet file that begins at the row given) die. Builds it a second time, then prints both
#: reports.
_SITE_SCRIPT = """
import json, os, sys
from turnfold.corpus import engine
from turnfold.formats import tables
from turnfold.render import site

engine.LOCAL_BYTES, engine.HERE_BYTES, engine.CHUNK_ITEMS = 0, -1, 2
tables.PART_MOST_ROWS, tables.PART_ROWS = 8, 4
source, out, killer, row = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
real = site.examine

def reading(item, *args, **kwargs):
    part = item.part
    if os.path.basename(item.path or "") == killer and (
        part is None if row < 0 else isinstance(part, tables.Rows) and part.start == row
    ):
        os._exit(3)
    return real(item, *args, **kwargs)

site.examine = reading
reports = [site.build_site(source, out, workers=2, progress=False) for _ in range(2)]
print(json.dumps([[r.rows, r.written, r.kept, r.skipped] for r in reports]))
"""


def _build_with_a_killer(
    tmp_path: Path, source: Path, out: Path, killer: str, row: int = -1
) -> list[list[int]]:
    script = tmp_path / "site_with_a_killer.py"
    script.write_text(_SITE_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(source), str(out), killer, str(row)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports: list[list[int]] = json.loads(done.stdout)
    return reports


def _index_rows(out: Path) -> list[str]:
    """Each row of the site's index, as its HTML, its text unescaped."""
    index = (out / INDEX).read_text("utf-8")
    return [html.unescape(row) for row in re.findall(r"<tr [^>]*>.*?</tr>", index, re.S)]


def _manifest(out: Path) -> dict[str, Any]:
    files: dict[str, Any] = json.loads((out / MANIFEST).read_text("utf-8"))["files"]
    return files


def _died_row_of(out: Path, name: str) -> str:
    (row,) = [row for row in _index_rows(out) if f"⚠ {name}" in row]
    return row


def test_B2_C7_a_site_goes_on_past_a_run_whose_reader_kills_its_worker(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    killer = tree / "killer.jsonl"
    shutil.copyfile(CODEX, killer)
    out, expected = tmp_path / "site", tmp_path / "expected"
    build_site(tree, expected, workers=1, progress=False)  # here, where nothing dies
    first, again = _build_with_a_killer(tmp_path, tree, out, killer.name)
    whole = turnfold.scan(tree, workers=1, cache=False)
    readable = [row["key"] for row in whole if row["error"] is None]
    assert str(killer) in readable
    # Every run is a row of the index; every other run has its page, the killer none.
    assert first == [len(whole), len(readable) - 1, 0, whole.skipped]
    pages = sorted(page.name for page in (out / RUNS).glob("*.html"))
    assert pages == sorted(page_name(key) for key in readable if key != str(killer))
    # Each the page a build where nothing dies writes, up to its links (the killer was a
    # neighbour there).
    bodies = {run["page"]: run["body"] for entry in _manifest(out).values()
              for run in entry["runs"] if run["page"]}  # fmt: skip
    for page in pages:
        built, alone = (out / RUNS / page).read_bytes(), (expected / RUNS / page).read_bytes()
        assert built[: bodies[page]] == alone[: bodies[page]]
    # Its row says why, as the row of a run whose load raised does, and links to no page.
    row = _died_row_of(out, killer.name)
    assert f"⚠ {killer.name}: its reader's process died (exit code 3)</span>" in row
    assert "<a href" not in row
    assert len(_index_rows(out)) == len(whole)
    errors = whole.errors + 1
    assert f"{len(whole)} runs, {errors} error{'s' if errors != 1 else ''}" in (
        out / INDEX
    ).read_text("utf-8")
    # The manifest keeps its row: a rebuild reads nothing again, and kills no worker.
    assert again == [len(whole), 0, len(readable) - 1, whole.skipped]
    (run,) = _manifest(out)[str(killer)]["runs"]
    assert run["page"] is None
    assert run["row"]["error"] == f"{killer}: its reader's process died (exit code 3)"


def test_B2_C7_a_part_of_a_parquet_file_whose_reader_dies_makes_the_file_one_unreadable_run(
    tmp_path: Path,
) -> None:
    """As the scan makes it (tests/test_scan_worker_death.py): the file is one row naming it
    and how its reader died; the pages its other parts wrote are not left behind."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    data.mkdir()
    rows = [{"task": f"t{i}", "messages": trajectory(i)} for i in range(40)]
    parquet = data / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet, row_group_size=8)
    out = tmp_path / "site"
    first, again = _build_with_a_killer(tmp_path, data, out, parquet.name, row=16)
    assert first == [1, 0, 0, 0]
    assert again == [1, 0, 0, 0]
    assert list((out / RUNS).iterdir()) == []
    row = _died_row_of(out, parquet.name)
    assert f"⚠ {parquet.name}: its reader's process died (exit code 3)</span>" in row
    (entry,) = _manifest(out).values()
    assert [run["row"]["key"] for run in entry["runs"]] == [str(parquet)]
