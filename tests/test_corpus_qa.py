"""What a QA pass of the corpus (issue 12) found, used as a user uses it: a search finds what
only a sub-agent read or wrote (C-6), a folder the walk cannot list and Parquet files among
sessions are said, not passed over in silence, and a compressed file whose data is cut off
from its first bytes is no "empty file" (C-7)."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from turnfold.corpus import scan
from turnfold.corpus.index import CACHE_ENV, INDEX_NAME
from turnfold.model import ToolCall
from turnfold.widget import TranscriptWidget

FIXTURES = Path(__file__).parent / "fixtures"
#: A Claude Code session whose Task call's sub-agent has a file of its own: "A demo shop." is
#: only in the sub-agent's Read result, never in the session's own file.
WITH_SUBAGENT = FIXTURES / "claude-code" / "v2.1_progress-and-subagent-file.jsonl"
SESSION = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _project(tmp_path: Path) -> Path:
    """A ~/.claude/projects folder with the session and its sub-agent's file."""
    project = tmp_path / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    shutil.copy(WITH_SUBAGENT, project / WITH_SUBAGENT.name)
    shutil.copytree(WITH_SUBAGENT.with_suffix(""), project / WITH_SUBAGENT.stem)
    return project


# --- C-6: a search reads the sub-agents' transcripts -----------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_C6_search_finds_text_only_a_subagent_read_and_its_hit_reveals_it(
    tmp_path: Path, workers: int
) -> None:
    """The search read the session's own entries alone: no hit for the sub-agent's."""
    project = _project(tmp_path)
    assert "A demo shop" not in WITH_SUBAGENT.read_text()
    corpus = scan(project.parent, workers=workers)
    assert len(corpus) == 1  # the sub-agent's file is part of its session, no row of its own
    hits = corpus.search("a demo shop")
    assert [(h.key, h.turn) for h in hits] == [(str(project / WITH_SUBAGENT.name), 1)]
    hit = hits[0]
    transcript = corpus[hit.key]
    call_id, _, inner_id = hit.entry_id.partition("/")
    call = transcript.get(call_id)
    assert isinstance(call, ToolCall)
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    inner = call.subagent.transcript.get(inner_id)
    assert isinstance(inner, ToolCall)
    assert inner.result is not None
    assert "A demo shop." in (inner.result.text or "")
    assert hit.snippet == "# Shop A demo shop."
    # Opening the hit reveals it (P-11): the call's turn, the call, then the folds inside the
    # sub-agent's transcript around its entry.
    widget = TranscriptWidget(transcript)
    try:
        path = widget.reveal(hit.entry_id)
        assert path is not None
        assert path[:2] == ["process:turn:e0", call.id]
        assert path[2:]
        assert all(key.startswith(f"{call.id}/") for key in path[2:])
    finally:
        widget.close()


def test_C6_a_subagent_hit_counts_against_the_limit(tmp_path: Path) -> None:
    corpus = scan(_project(tmp_path).parent, workers=1)
    every = corpus.search("shop", limit=100)
    assert any("/" in h.entry_id for h in every)  # the sub-agent's own entries among them
    assert corpus.search("shop", limit=2) == every[:2]


# --- C-7: nothing passed over in silence ------------------------------------------------------


def test_C7_a_folder_that_cannot_be_listed_is_counted_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its sessions were dropped with no count and no word (os.walk ignores such errors).
    Permission is denied by the patched listing: the tests may run as root, whom chmod binds not."""
    root = tmp_path / "projects"
    for name in ("-home-dev-a", "-home-dev-b"):
        (root / name).mkdir(parents=True)
        shutil.copy(SESSION, root / name / SESSION.name)
    locked = str(root / "-home-dev-b")
    listing = os.scandir

    def scandir(path: str = ".") -> object:
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.warns(UserWarning, match="could not be listed") as told:
        corpus = scan(root, workers=1)
    assert corpus.keys == [str(root / "-home-dev-a" / SESSION.name)]
    assert corpus.skipped == 1
    assert repr(corpus) == "<Corpus: 1 row, 0 errors, 1 skipped>"
    message = str(told[0].message)
    assert f"({locked} (Permission denied)); no session in it is read" in message
    # A glob's walk says so too.
    with pytest.warns(UserWarning, match="could not be listed"):
        assert scan(f"{root}/**/*.jsonl", workers=1).skipped == 1


def test_C7_parquet_files_among_sessions_are_named_when_passed_over(tmp_path: Path) -> None:
    """A dataset of rollouts beside sessions was only a count in ``skipped``."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(SESSION, folder / SESSION.name)
    rollouts = folder / "rollouts.parquet"
    messages = [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]]
    pq.write_table(pa.table({"messages": messages}), rollouts)
    with pytest.warns(UserWarning, match=r"skipped a Parquet file among the sessions") as told:
        corpus = scan(folder, workers=1)
    assert len(corpus) == 1
    assert corpus.skipped == 1
    assert f"({rollouts}); a scan reads a Parquet file's runs" in str(told[0].message)
    assert len(scan(rollouts, workers=1)) == 1  # on its own, as the warning says


def test_C7_compressed_data_cut_off_at_its_start_is_no_empty_file(tmp_path: Path) -> None:
    """Its row said the file is empty, where load() says the gzip data is cut off."""
    folder = tmp_path / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    whole = gzip.compress(SESSION.read_bytes())
    (folder / "cut.jsonl.gz").write_bytes(whole[:12])  # the header, then nothing whole
    (folder / "empty.jsonl").write_bytes(b"")
    corpus = scan(folder.parent, workers=1)
    errors = {Path(row["key"]).name: row["error"] for row in corpus}
    empty, cut = folder / "empty.jsonl", folder / "cut.jsonl.gz"
    assert errors["empty.jsonl"].startswith(f"{empty}: not a transcript (the source is empty); ")
    assert errors["cut.jsonl.gz"].startswith(
        f"{cut}: not a transcript (nothing read: the gzip data is cut off or corrupt"
    )
    assert repr(corpus) == "<Corpus: 2 rows, 2 errors, 0 skipped>"


# --- C-4: a cache never stops a scan ------------------------------------------------------------


def test_C4_an_unreadable_index_is_made_again(tmp_path: Path, cache_dir: Path) -> None:
    """An index that is no database (a crash, a full disk, a file copied over it) made every
    scan raise "file is not a database" until the user found and deleted it."""
    folder = _project(tmp_path).parent
    first = scan(folder, workers=1)
    index = cache_dir / INDEX_NAME
    index.write_bytes(b"no SQLite database " * 200)
    with pytest.warns(UserWarning, match="the scan's index is unreadable .*; it is made again"):
        again = scan(folder, workers=1)
    assert again.to_arrow().equals(first.to_arrow())
    assert again.read == first.read  # every file read again: the session's and its sub-agent's
    assert scan(folder, workers=1).read == 0  # the index made again serves the next scan


def test_C4_a_cache_folder_that_cannot_be_used_leaves_the_scan_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file where the cache folder should be (or no permission) raised out of the scan."""
    folder = _project(tmp_path).parent
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    monkeypatch.setenv(CACHE_ENV, str(blocker))
    with pytest.warns(UserWarning, match=f"cannot be used .*set {CACHE_ENV} to a folder"):
        corpus = scan(folder, workers=1)
    assert corpus.keys == [str(folder / "-home-dev-shop" / WITH_SUBAGENT.name)]
    assert corpus.search("a demo shop")
    with pytest.warns(UserWarning, match="cannot be used"):
        assert scan(folder, workers=1).read == corpus.read  # no index: every file read again
    assert blocker.read_text() == "a file"
