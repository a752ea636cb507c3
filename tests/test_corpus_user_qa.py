"""What a user's QA pass of a corpus found (scan, search, Dask): a search that cannot read a run
again (its file went or broke since the scan) says so, naming the file, instead of reporting
"no hits" as if the run had been read (C-6, C-7)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from turnfold.corpus import scan

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "v2.1_progress-and-subagent-file.jsonl"
CODEX = FIXTURES / "codex" / "v0.171_apply-patch-and-interrupt.jsonl"
MINI = FIXTURES / "harnesses" / "mini-swe-agent"
TRAJECTORY = MINI / "mini-swe-agent_v2.4.6_textbased_submitted.traj.json"
EVAL_LOG = FIXTURES / "harnesses" / "inspect" / "react_four-samples_two-epochs.eval"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _home(tmp_path: Path) -> Path:
    """A home-like tree: a Claude Code project, a Codex session, a mini-swe-agent run and an
    Inspect log."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-shop"
    sessions = home / ".codex" / "sessions" / "2025" / "05" / "01"
    runs = home / "runs"
    for folder in (project, sessions, runs):
        folder.mkdir(parents=True)
    shutil.copy(CLAUDE, project / CLAUDE.name)
    shutil.copytree(CLAUDE.with_suffix(""), project / CLAUDE.stem)
    shutil.copy(CODEX, sessions / "rollout-2025-05-01T10-00-00-a.jsonl")
    shutil.copy(TRAJECTORY, runs / TRAJECTORY.name)
    shutil.copy(EVAL_LOG, runs / EVAL_LOG.name)
    return home


def test_C6_a_run_found_before_it_went_is_found_by_a_search() -> None:
    """The run the tests below remove holds the word they search for: its absence is theirs."""
    assert "calc.py" in TRAJECTORY.read_text()


def test_C6_a_search_says_which_run_it_could_not_read_again(tmp_path: Path) -> None:
    """It said nothing: a run removed since the scan gave "no hits" like a run that holds no
    match."""
    home = _home(tmp_path)
    corpus = scan(home, workers=1)
    trajectory = home / "runs" / TRAJECTORY.name
    assert corpus.errors == 0
    assert [hit.key for hit in corpus.search("calc.py", limit=1)] == [str(trajectory)]
    trajectory.unlink()
    with pytest.warns(UserWarning, match="could not read 1 file") as caught:
        hits = corpus.search("calc.py")
    assert hits == []
    (said,) = [str(w.message) for w in caught if "could not read" in str(w.message)]
    assert str(trajectory) in said
    assert caught[0].filename == __file__  # the reader's line, not turnfold's


def test_C6_a_search_of_runs_that_read_again_warns_of_nothing(tmp_path: Path) -> None:
    corpus = scan(_home(tmp_path), workers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [hit.turn for hit in corpus.search("A demo shop")] == [1]
        assert corpus.search("no run holds this text") == []


@pytest.mark.parametrize("gone", ["removed", "overwritten"])
def test_C6_an_eval_log_that_went_is_said_once_not_per_sample(tmp_path: Path, gone: str) -> None:
    """An eval log's samples are searched as the one file they are: its loss is one file said."""
    home = _home(tmp_path)
    corpus = scan(home, workers=1)
    log = home / "runs" / EVAL_LOG.name
    assert len([key for key in corpus.keys if key.startswith(f"{log}#")]) == 8
    assert len(corpus.search("6 * 7")) == 8
    if gone == "removed":
        log.unlink()
    else:  # no zip any more: a log being written again, a copy cut off
        log.write_bytes(b"not a zip")
    with pytest.warns(UserWarning, match="could not read 1 file") as caught:
        assert corpus.search("6 * 7") == []
    (said,) = [str(w.message) for w in caught if "could not read" in str(w.message)]
    assert str(log) in said


def test_C5_a_dask_cluster_scans_the_home_as_here_and_says_what_its_search_could_not_read(
    tmp_path: Path,
) -> None:
    """The cluster's workers read the search's items: what they could not read comes back."""
    distributed = pytest.importorskip("distributed")
    home = _home(tmp_path)
    here = scan(home, workers=1, cache=False)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        there = scan(home, client=client, cache=False)
        assert there.keys == here.keys
        assert there.to_arrow().equals(here.to_arrow())
        assert there.tool_calls().equals(here.tool_calls())
        assert there.search("calc.py") == here.search("calc.py") != []
        trajectory = home / "runs" / TRAJECTORY.name
        trajectory.unlink()
        with pytest.warns(UserWarning, match="could not read 1 file") as caught:
            assert there.search("calc.py") == []
    assert any(str(trajectory) in str(w.message) for w in caught)
