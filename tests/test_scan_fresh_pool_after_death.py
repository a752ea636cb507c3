"""After a worker dies, the work goes on in a fresh pool of workers (C-7, C-5).

A worker that dies breaks its pool: the chunks in flight in it are lost with it, and each is
read again in a worker of its own (``engine._rescued``). The chunks after them go to a fresh
pool (``starter.renew()``). Without it every later chunk was read in a process of its own, one
chunk at a time, started for it: a scan or search went on, its results right, at the cost of
a process start per chunk and one core. The chunks rescued one at a time are at most those in
flight at the death.

The readers die in a script of its own (its forked workers inherit its patched readers; the
scanning process must outlive them), as in tests/test_scan_worker_death.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turnfold.corpus import COLUMNS, engine, scan

TREE = Path(__file__).parent / "fixtures" / "corpus"
CODEX = next((TREE / "codex").rglob("rollout-*-a1b2c3d4-*.jsonl"))
#: Sessions beside the killer, each a chunk: many more than the chunks in flight at once.
SESSIONS = 40
WORKERS = 2

pytestmark = pytest.mark.usefixtures("cache_dir")

#: Scans the tree, then searches it, with two worker processes that read every item (none is
#: read by the scanning process), one a chunk; their readers die on ``killer.jsonl``, the
#: scan's, then the search's. Says which chunks were rescued (read again in a worker of their
#: own) and which processes read the items.
_SCRIPT = """
import importlib, json, os, sys
import turnfold
from turnfold.corpus import engine, search

summarize = importlib.import_module("turnfold.corpus.summarize")
engine.LOCAL_BYTES, engine.HERE_BYTES, engine.CHUNK_ITEMS = 0, -1, 1
tree, log = sys.argv[1], sys.argv[2]
dying = set()
rescued = []
real_rescued = engine._rescued

def rescuing(func, chunk, died):
    rescued.append([item.key for item in chunk])
    return real_rescued(func, chunk, died)

engine._rescued = rescuing

def killing(real, when):
    def reading(item, *args, **kwargs):
        if when in dying and os.path.basename(item.path or "") == "killer.jsonl":
            os._exit(3)
        with open(log, "a") as said:  # which process read it
            said.write(f"{when} {os.getpid()}\\n")
        return real(item, *args, **kwargs)
    return reading

summarize.examine = killing(summarize.examine, "scan")
search.search_item = killing(search.search_item, "search")
out = {}
dying.add("scan")
killed = turnfold.scan(tree, workers=2, cache=False)
out["rows"] = json.loads(json.dumps(killed.rows, default=str))
out["scan_rescued"], rescued[:] = list(rescued), []
dying.clear()
whole = turnfold.scan(tree, workers=2, cache=False)
rescued[:] = []
dying.add("search")
out["hits"] = [hit.key for hit in whole.search("Hello", limit=1000)]
out["search_rescued"] = list(rescued)
print(json.dumps(out))
"""


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """Sessions, and the largest file among them, which a scan's workers start first: a
    session its readers die on."""
    tree = tmp_path / "tree"
    tree.mkdir()
    text = CODEX.read_text(encoding="utf-8")
    for n in range(SESSIONS):
        (tree / f"s{n:02}.jsonl").write_text(text, encoding="utf-8")
    killer = tree / "killer.jsonl"
    killer.write_text(text + "\n" * 100, encoding="utf-8")
    return tree, killer


def _readers(log: Path, when: str) -> set[str]:
    return {line.split()[1] for line in log.read_text().splitlines() if line.startswith(when)}


def test_C7_after_a_worker_dies_the_scan_and_search_go_on_in_a_fresh_pool(
    tmp_path: Path,
) -> None:
    tree, killer = _tree(tmp_path)
    script = tmp_path / "fresh_pool_after_a_death.py"
    script.write_text(_SCRIPT)
    log = tmp_path / "readers.log"
    done = subprocess.run([sys.executable, str(script), str(tree), str(log)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    whole = scan(tree, workers=1, cache=False)  # here, where nothing dies
    expected: list[dict[str, Any]] = json.loads(json.dumps(whole.rows, default=str))
    assert len(expected) == SESSIONS + 1
    died = dict.fromkeys(COLUMNS)
    died.update(key=str(killer), path=str(killer),
                error=f"{killer}: its reader's process died (exit code 3)")  # fmt: skip
    assert out["rows"] == [died if row["key"] == str(killer) else row for row in expected]
    every = [hit.key for hit in whole.search("Hello", limit=1000)]
    assert len(every) >= SESSIONS + 1
    assert out["hits"] == [key for key in every if key != str(killer)]
    in_flight = WORKERS * engine.WINDOW_PER_WORKER
    for when in ("scan", "search"):
        rescued = out[f"{when}_rescued"]
        # The killer's chunk among those lost, each read again in a worker of its own...
        assert [str(killer)] in rescued, when
        # ...and no more of them than were in flight at the death: the rest of the work went
        # to a fresh pool, not to a worker started for each chunk.
        assert len(rescued) <= in_flight, (when, len(rescued))
        # Its readers: the two pools' workers, and one for each chunk rescued.
        assert len(_readers(log, when)) <= 2 * WORKERS + len(rescued), when
