"""A file rewritten in place with its size and modification time kept (C-4, C-6).

Tools that copy or sync keep the source's modification time (``cp -p``, ``rsync -t``, a backup
restored); a run rewritten to the same length (a task renumbered, a score flipped) then has
the size and ``mtime`` the scan saw. The index took it for unchanged and gave the old rows, and
a search after the scan took it for the file the rows describe. The inode's change time
(``st_ctime_ns``) moves with any write and cannot be set back by ``utime``: it is in the same
``stat`` a rescan makes anyway, so the rescan stays stat-only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import turnfold
from tests.table_runs import trajectory

pytestmark = pytest.mark.usefixtures("cache_dir")


def _runs(folder: Path, tasks: list[int]) -> Path:
    """A file of runs, one trajectory (tests/table_runs.py) a line."""
    path = folder / "rollouts.jsonl"
    rows = [{"task_id": f"t{i}", "messages": trajectory(i)} for i in tasks]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _rewrite_keeping_size_and_mtime(path: Path, tasks: list[int]) -> None:
    """Rewrite ``path`` with other runs of the same length, then set its modification time
    back, as ``cp -p`` or ``rsync -t`` would."""
    before = path.stat()
    size = before.st_size
    _runs(path.parent, tasks)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns  # what tells the rewrite


def test_C4_a_rescan_reads_a_file_rewritten_with_its_size_and_mtime_kept(
    tmp_path: Path,
) -> None:
    _runs(tmp_path, [1, 2, 3])
    first = turnfold.scan(tmp_path, workers=1)
    again = turnfold.scan(tmp_path, workers=1)
    assert (again.read, again.cached) == (0, 1)  # an unchanged file is not opened
    _rewrite_keeping_size_and_mtime(tmp_path / "rollouts.jsonl", [7, 8, 9])
    rewritten = turnfold.scan(tmp_path, workers=1)
    assert (rewritten.read, rewritten.cached) == (1, 0)
    assert [row["title"] for row in rewritten] == [f"Task {i}: list the files" for i in (7, 8, 9)]
    assert [row["title"] for row in first] == [f"Task {i}: list the files" for i in (1, 2, 3)]
    assert rewritten.to_arrow().equals(turnfold.scan(tmp_path, cache=False).to_arrow())
    settled = turnfold.scan(tmp_path, workers=1)  # and once read, it is kept again
    assert (settled.read, settled.cached) == (0, 1)


def test_C6_a_search_says_a_file_rewritten_with_its_size_and_mtime_kept(tmp_path: Path) -> None:
    path = _runs(tmp_path, [1, 2, 3])
    corpus = turnfold.scan(tmp_path, workers=1)
    assert [hit.key for hit in corpus.search("task 2:")] == [f"{path}#1"]
    _rewrite_keeping_size_and_mtime(path, [7, 8, 9])
    with pytest.warns(UserWarning, match=r"1 file\(s\) changed since the scan") as caught:
        assert corpus.search("task 2:") == []
    said = str(caught[0].message)
    assert f"{path} (modified, same size)" in said
    assert "scan again" in said
