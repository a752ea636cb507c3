"""A file whose reading kills its worker process (C-7): a segfault in a C extension, the OOM
killer, ``os._exit`` in a reader. The scan goes on, every other file read; the killer is a row
whose ``error`` names its file and how its reader's process died; the index keeps that row
(a rescan does not kill a worker again unless the file changed); a search across runs (C-6)
goes on and names the file in its warning. Locally (worker processes forked from the scanning
process, or from a forkserver as in a kernel) and on a Dask cluster; a part of a large file of
runs whose reader dies makes its file one error row.

The killer is ``killer.jsonl``, a copy of a Codex session the tests' readers die on: the
local scans run in a script of their own whose forked workers inherit its patched readers
(the scanning process must outlive them), the Dask workers get theirs from a worker plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dask_waits import DEADLINE, Meanwhile
from turnfold.corpus import COLUMNS, Corpus, Item, scan
from turnfold.corpus import engine as engine_module
from turnfold.corpus.summarize import runs_parts

TREE = Path(__file__).parent / "fixtures" / "corpus"
CODEX = next((TREE / "codex").rglob("rollout-*-a1b2c3d4-*.jsonl"))
KILLER = "killer.jsonl"
#: Found in every session of the tree, the killer's too.
QUERY = "a"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """The corpus fixtures, and among them a session its readers die on."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    killer = tree / KILLER
    shutil.copyfile(CODEX, killer)
    return tree, killer


def _rows(corpus: Corpus) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(json.dumps(corpus.rows, default=str))
    return rows


def _died_row(killer: Path, how: str) -> dict[str, Any]:
    """The killer's row: its key and path, the error, nothing read."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(key=str(killer), path=str(killer),
               error=f"{killer}: its reader's process died ({how})")  # fmt: skip
    return row


def _with_killer_dead(rows: list[dict[str, Any]], killer: Path, how: str) -> list[dict[str, Any]]:
    return [_died_row(killer, how) if row["key"] == str(killer) else row for row in rows]


#: Scans (and searches) the tree with two worker processes, which read every file (none is
#: read by the scanning process), two files a chunk; the readers of the scan, then those of the
#: search, die on the killer, as the argument says (``exit``: os._exit(3); ``kill``: SIGKILL).
_SCRIPT = """
import importlib, json, os, signal, sys, warnings
import turnfold
from turnfold.corpus import engine, search

summarize = importlib.import_module("turnfold.corpus.summarize")  # the module, not its function

engine.LOCAL_BYTES, engine.CHUNK_ITEMS = 0, 2
engine.HERE_BYTES = -1
tree, how, query = sys.argv[1], sys.argv[2], sys.argv[3]
dying = set()

def killing(real, when):
    def reading(item, *args, **kwargs):
        if when in dying and os.path.basename(item.path or "") == "killer.jsonl":
            if how == "exit":
                os._exit(3)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(item, *args, **kwargs)
    return reading

summarize.examine = killing(summarize.examine, "scan")
search.search_item = killing(search.search_item, "search")

def rows(corpus):
    return json.loads(json.dumps(corpus.rows, default=str))

def said(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = call()
    return done, [str(w.message) for w in caught]

out = {}
dying.add("scan")
first, out["scan_warnings"] = said(lambda: turnfold.scan(tree, workers=2))
out["scan"] = rows(first)
again = turnfold.scan(tree, workers=2)
out["again"], out["again_read"] = rows(again), again.read
dying.clear()
killer = os.path.join(tree, "killer.jsonl")
stat = os.stat(killer)
os.utime(killer, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
healed = turnfold.scan(tree, workers=2)
out["healed"], out["healed_read"] = rows(healed), healed.read
dying.add("search")
hits, out["search_warnings"] = said(lambda: healed.search(query, limit=1000))
out["hits"] = [[hit.key, hit.turn, hit.entry_id] for hit in hits]
print(json.dumps(out))
"""


@pytest.mark.parametrize(("how", "said"), [("exit", "exit code 3"), ("kill", "signal 9, SIGKILL")])
def test_C7_a_file_that_kills_its_worker_is_an_error_row_and_the_scan_goes_on(
    tmp_path: Path, how: str, said: str
) -> None:
    tree, killer = _tree(tmp_path)
    script = tmp_path / "scan_with_a_killer.py"
    script.write_text(_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(tree), how, QUERY],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    whole = scan(tree, workers=1, cache=False)  # here, where nothing dies
    expected = _rows(whole)
    assert str(killer) in [row["key"] for row in expected]
    # Every other file read as here, the one beside the killer in its chunk too; the killer
    # a row naming its file and how its reader died.
    assert out["scan"] == _with_killer_dead(expected, killer, said)
    # Said as other error rows are: in the row (the scan warns of no unreadable file).
    assert out["scan_warnings"] == []
    # The index keeps the error row: a rescan reads no file and kills no worker...
    assert (out["again"], out["again_read"]) == (out["scan"], 0)
    # ...until the file changes: then it is read again.
    assert (out["healed"], out["healed_read"]) == (expected, 1)
    # A search across runs goes on past the file its reader dies on, and names it.
    every = [[hit.key, hit.turn, hit.entry_id] for hit in whole.search(QUERY, limit=1000)]
    assert str(killer) in {key for key, _, _ in every}
    assert out["hits"] == [hit for hit in every if hit[0] != str(killer)]
    assert len(out["search_warnings"]) == 1
    assert f"{killer}: its reader's process died ({said})" in out["search_warnings"][0]
    assert "could not read 1 file(s) again" in out["search_warnings"][0]


#: As in a kernel, which has threads: the workers start from a forkserver, which imports this
#: script (its patched reader, not its scan) before it forks them.
_THREADED_SCRIPT = """
import importlib, json, os, sys, threading
import turnfold
from turnfold.corpus import engine

summarize = importlib.import_module("turnfold.corpus.summarize")
engine.LOCAL_BYTES, engine.CHUNK_ITEMS, engine.HERE_BYTES = 0, 2, -1
real = summarize.examine

def reading(item, *args, **kwargs):
    if os.path.basename(item.path or "") == "killer.jsonl":
        os._exit(3)
    return real(item, *args, **kwargs)

summarize.examine = reading
if __name__ == "__main__":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    rows = turnfold.scan(sys.argv[1], workers=2, cache=False).rows
    stop.set()
    print(json.dumps(json.loads(json.dumps(rows, default=str))))
"""


def test_C7_workers_from_a_forkserver_too(tmp_path: Path) -> None:
    """In a process with threads (a kernel) the workers, and those that replace the dead, start
    from a forkserver: the killer is found and the scan goes on as well."""
    tree, killer = _tree(tmp_path)
    script = tmp_path / "threaded_scan_with_a_killer.py"
    script.write_text(_THREADED_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(tree)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = _rows(scan(tree, workers=1, cache=False))
    assert json.loads(done.stdout) == _with_killer_dead(expected, killer, "exit code 3")


def _trajectory(i: int) -> list[dict[str, Any]]:
    """A short Chat Completions trajectory: a record of a file of runs."""
    return [{"role": "user", "content": f"Task {i}: list the files"},
            {"role": "assistant", "content": f"Done with task {i}."}]  # fmt: skip


#: Scans a tree whose file of runs is read in parts (each about 1000 bytes), by two worker
#: processes; the reader of the part that holds the record at the byte offset given dies.
_PART_SCRIPT = """
import importlib, json, os, sys
import turnfold
from turnfold.corpus import engine, runs

summarize = importlib.import_module("turnfold.corpus.summarize")
engine.LOCAL_BYTES, engine.HERE_BYTES = 0, -1
runs.SPAN_BYTES, runs.SPLIT_BYTES = 1000, 2000
tree, offset = sys.argv[1], int(sys.argv[2])
real = summarize.examine

def reading(item, *args, **kwargs):
    if item.part is not None and item.part.start <= offset < item.part.end:
        os._exit(3)
    return real(item, *args, **kwargs)

summarize.examine = reading
print(json.dumps(json.loads(json.dumps(turnfold.scan(tree, workers=2).rows, default=str))))
"""


def test_C7_a_part_of_a_file_of_runs_that_kills_its_worker_makes_the_file_an_error_row(
    tmp_path: Path,
) -> None:
    """A large file of runs is read in parts (C-5); a part whose reader dies gives no rows, so
    the file is one error row naming it: its other parts' rows, numbered on past it, would
    open other runs than theirs. The other files are read."""
    from turnfold.corpus import runs

    tree, killer = _tree(tmp_path)
    killer.unlink()
    rollouts = tree / "rollouts.jsonl"
    lines = [json.dumps({"messages": _trajectory(i)}) + "\n" for i in range(40)]
    rollouts.write_text("".join(lines))
    offset = sum(len(line) for line in lines[:25])  # record 25's first byte: a later part
    item = Item(key=str(rollouts), path=str(rollouts), size=rollouts.stat().st_size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "SPAN_BYTES", 1000)
        patch.setattr(runs, "SPLIT_BYTES", 2000)
        spans = [part.part for part in runs_parts(item) or []]
    assert len(spans) > 2, spans
    assert spans[0].end <= offset  # not the first part: later parts are numbered on past it
    script = tmp_path / "scan_with_a_killing_part.py"
    script.write_text(_PART_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(tree), str(offset)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    whole = _rows(scan(tree, workers=1, cache=False))
    assert [row["key"] for row in whole if row["path"] == str(rollouts)] == [
        f"{rollouts}#{i}" for i in range(40)
    ]
    at = next(i for i, row in enumerate(whole) if row["path"] == str(rollouts))
    others = [row for row in whole if row["path"] != str(rollouts)]
    assert json.loads(done.stdout) == [*others[:at], _died_row(rollouts, "exit code 3"),
                                       *others[at:]]  # fmt: skip


def _killer_plugin(when: str) -> Any:
    """A worker plugin (pickled by value: a Dask worker imports no test module) whose workers'
    readers of the scan (``when``: ``"scan"``) or of the search die on the killer."""
    import distributed

    class Killer(distributed.WorkerPlugin):  # type: ignore[misc]
        def setup(self, worker: Any) -> None:
            import importlib

            from turnfold.corpus import search

            summarize = importlib.import_module("turnfold.corpus.summarize")
            module, name = (summarize, "examine") if when == "scan" else (search, "search_item")
            real = getattr(module, name)

            def reading(item: Any, *args: Any, **kwargs: Any) -> Any:
                if os.path.basename(item.path or "") == "killer.jsonl":
                    os._exit(3)
                return real(item, *args, **kwargs)

            setattr(module, name, reading)

    return Killer()


def test_C7_on_a_dask_cluster_a_file_that_kills_its_workers_is_an_error_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dask gives up on a task whose workers die (``KilledWorker``): the chunk's items are
    then each a task of their own, so only the killer is given up on, and it is a row."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    tree, killer = _tree(tmp_path)
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 2)  # the killer shares its chunk
    whole = scan(tree, workers=1, cache=False)
    expected = _rows(whole)
    every = [[hit.key, hit.turn, hit.entry_id] for hit in whole.search(QUERY, limit=1000)]
    # Both workers are often dead at once here, each restarting: not a cluster to warn of.
    monkeypatch.setattr(engine_module, "DASK_NO_WORKERS_SECONDS", DEADLINE)
    settings = {
        # Cheap: a task is given up on once a worker died running it.
        "distributed.scheduler.allowed-failures": 0,
        # A dead worker's nanny starts another, a fresh interpreter: 10 s and more on a busy
        # machine (two cores, pytest-xdist's processes beside it). A LocalCluster closes for
        # good a worker that is missing this long after any of its deaths (15 s by default),
        # and this test's workers die again as soon as they are back: each was closed in turn,
        # and the scan waited for ever on a cluster without workers (it hung under xdist).
        # Read at each death, so set while the cluster runs.
        "distributed.deploy.lost-worker-timeout": f"{DEADLINE}s",
    }
    with dask.config.set(settings):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)  # fmt: skip
        with cluster, distributed.Client(cluster) as client, Meanwhile():
            client.register_plugin(_killer_plugin("search"), name="search-killer")
            there = scan(tree, client=client, cache=False)
            assert _rows(there) == expected
            with pytest.warns(UserWarning, match="could not read 1 file") as caught:
                hits = there.search(QUERY, limit=1000)
            assert [[hit.key, hit.turn, hit.entry_id] for hit in hits] == [
                hit for hit in every if hit[0] != str(killer)
            ]
            why = "every Dask worker that read it died: KilledWorker"
            assert f"{killer}: its reader's process died ({why})" in str(caught[0].message)
            client.register_plugin(_killer_plugin("scan"), name="scan-killer")
            killed = scan(tree, client=client, cache=False)
            assert _rows(killed) == _with_killer_dead(expected, killer, why)
