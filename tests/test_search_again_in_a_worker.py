"""A search that reads a part of a file again, or a file again for more hits, reads it in a
worker, where a reader that kills its process kills no kernel (C-6, C-7).

A part of a large file of runs that stopped at the search's limit with hits left out (a run whose
row is an error) is searched again to its end; so is a file read whole that stopped so, for the
hits its rows still want. That second search ran in the calling process (a notebook's kernel)
even when the first ran in the scan's workers: a file whose reader kills its process (a crash in
a C extension, the out-of-memory killer) killed the kernel there. Now it runs in a worker process
of its own, as the engine reads again a chunk lost with a dying worker, and a death there makes
the file one the search could not read again, named in its warning, the hits read before it
kept.

The killers are made as tests/test_search_parts_and_site_deaths.py makes them: a script of its
own, whose workers inherit its patched reader, kills the process that searches again (a part to
its end, with no limit; a file for the hits its rows want). The script is guarded, its patches
made at its top: a worker forked from a forkserver imports it without running the search.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import turnfold
from tests.table_runs import rollouts_saying
from turnfold.corpus import Item, engine, runs
from turnfold.corpus.summarize import runs_parts
from turnfold.model import AssistantText

QUERY = "zeta"
#: Runs 3, 4 and 9 say the query; run 3's projection fails, so its row is an error and its hit
#: is left out.
SAYING, REFUSED = (3, 4, 9), "Done with task 3, zeta."

pytestmark = pytest.mark.usefixtures("cache_dir")

#: Scans ``argv[1]`` (a file or folder) with two workers, the projection of run 3 failing, then
#: searches it at a limit of 2 with the scan's workers; the reader that searches again
#: (``argv[3]``: "part", a part to its end; "file", a file for the hits its rows want) exits
#: with code 3. Prints the hits and warnings.
_SCRIPT = """
import importlib, json, os, sys, warnings
import turnfold
from turnfold.corpus import engine, runs, search

summarize_module = importlib.import_module("turnfold.corpus.summarize")
engine.LOCAL_BYTES, engine.HERE_BYTES, engine.CHUNK_ITEMS = 0, -1, 1
if int(sys.argv[2]):
    runs.SPAN_BYTES, runs.SPLIT_BYTES = int(sys.argv[2]), 1
real_summary, real_search = summarize_module._summary, search.search_item


def refusing(transcript, *args):
    if any(getattr(e, "text", None) == "Done with task 3, zeta." for e in transcript.entries):
        raise ValueError("this run's projection failed")
    return real_summary(transcript, *args)


def reading(item, query, regex, limit, *args, **kwargs):
    kept = args[0] if args else kwargs.get("kept")
    again = limit == sys.maxsize if sys.argv[3] == "part" else kept is not None
    if again:  # the search again: to a part's end, or of the rows a file's kept runs
        os._exit(3)
    return real_search(item, query, regex, limit, *args, **kwargs)


summarize_module._summary, search.search_item = refusing, reading

if __name__ == "__main__":
    corpus = turnfold.scan(sys.argv[1], workers=2, cache=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hits = corpus.search("zeta", limit=2)
    print(json.dumps({"errors": [row["key"] for row in corpus.rows if row["error"]],
                      "hits": [hit.key for hit in hits],
                      "warnings": [str(w.message) for w in caught]}))
"""


def _search_with_a_killer(tmp_path: Path, source: Path, span: int, killed: str) -> dict:
    script = tmp_path / "search_again_killed.py"
    script.write_text(_SCRIPT)
    printed, said = tmp_path / "stdout.json", tmp_path / "stderr.txt"
    # Output to files, not pipes: a worker the dead script left holds no pipe open; its
    # process group, the script's own, is ended whatever happens.
    with printed.open("wb") as stdout, said.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(script), str(source), str(span), killed],
            stdout=stdout, stderr=stderr, cwd=tmp_path, start_new_session=True,
        )  # fmt: skip
        try:
            code = process.wait(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    # The searching process lives on (it exited with 3 where it searched again itself).
    assert code == 0, (code, said.read_text("utf-8")[-2000:])
    out: dict = json.loads(printed.read_text("utf-8"))
    return out


def _span(path: Path) -> int:
    """Parts of three records (one a line, of about one length)."""
    first = len(path.read_text(encoding="utf-8").splitlines()[0]) + 1
    return 3 * first - 10


def test_C6_C7_a_part_searched_again_in_a_dying_worker_leaves_the_caller_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parts of three records: the second (runs 3, 4, 5) stops at a limit of 2 with run 3's
    hit left out, and is searched again to its end; that reader dies. Run 4's hit, numbered
    right, stands; the parts after it (run 9's) are left out, and the warning names the file
    and how its reader died."""
    path = rollouts_saying(tmp_path, QUERY, SAYING)
    span = _span(path)
    monkeypatch.setattr(runs, "SPAN_BYTES", span)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) or []
    assert [part.part.line for part in parts if isinstance(part.part, runs.Span)] == [1, 4, 7, 10]
    out = _search_with_a_killer(tmp_path, path, span, "part")
    assert out["errors"] == [f"{path}#3"]
    assert out["hits"] == [f"{path}#4"]
    (said,) = out["warnings"]
    assert "could not read 1 file(s) again" in said
    assert f"{path}: its reader's process died (exit code 3)" in said


def test_C6_C7_a_file_searched_again_in_a_dying_worker_leaves_the_caller_alive(
    tmp_path: Path,
) -> None:
    """Two files of runs, read whole (too small to cut) by the workers: the first stops at a
    limit of 2 with run 3's hit left out, and is searched again for its rows' hits; that
    reader dies. Run 4's hit stands, and the warning names the file."""
    data = tmp_path / "data"
    (data / "a").mkdir(parents=True)
    (data / "b").mkdir()
    first = rollouts_saying(data / "a", QUERY, SAYING)
    rollouts_saying(data / "b", "mild", (1,))
    out = _search_with_a_killer(tmp_path, data, 0, "file")
    assert out["errors"] == [f"{first}#3"]
    assert out["hits"] == [f"{first}#4"]
    (said,) = out["warnings"]
    assert f"{first}: its reader's process died (exit code 3)" in said


def test_C6_a_part_searched_again_in_a_worker_gives_the_hits_of_the_file_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing dies: the part searched again in a worker of its own gives the hits a search of
    the file read whole gives, each opening its run."""
    import importlib

    summarize_module = importlib.import_module("turnfold.corpus.summarize")
    path = rollouts_saying(tmp_path, QUERY, SAYING)
    real = summarize_module._summary

    def refusing(transcript: turnfold.Transcript, *args: object) -> object:
        if any(getattr(e, "text", None) == REFUSED for e in transcript.entries):
            raise ValueError("this run's projection failed")
        return real(transcript, *args)

    monkeypatch.setattr(summarize_module, "_summary", refusing)
    whole = turnfold.scan(path, workers=1, cache=False)
    assert whole.errors == 1
    expected = whole.search(QUERY, limit=1000)
    assert [hit.key for hit in expected] == [f"{path}#4", f"{path}#9"]
    monkeypatch.setattr(runs, "SPAN_BYTES", _span(path))
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    split = turnfold.scan(path, workers=2, cache=False)  # too little work: read here, patched
    assert split.to_arrow().equals(whole.to_arrow())
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)  # the search in workers, and again
    for limit in (2, 3):
        hits = split.search(QUERY, limit=limit)
        assert hits == expected[:limit]
        for hit in hits:
            entry = split[hit.key].get(hit.entry_id)
            assert isinstance(entry, AssistantText)
            assert QUERY in entry.text
