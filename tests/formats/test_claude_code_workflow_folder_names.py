"""Claude Code's Workflow runs folder, ``<session>/subagents/workflows/``: every folder in it is
read as a run or said in a warning, never passed over in silence (spec L-4 bad input, X-2 nothing
lost, C-1 the corpus counts its files as the session's), and nothing there is followed out of it.

Claude Code names a run ``wf_`` and the first 12 characters of a random UUID (2.1.332's binary:
``wf_${randomUUID().slice(0,12)}``, so ``wf_306ba340-b64``); the loader reads a run only by a plain
name (``_plain``). Each case is the real 2.1.332 run of ``test_claude_code_workflows.py``
(``tests/fixtures/claude-code/v2.1.332_workflow``, ``tests/fixtures/SOURCES.md``) copied, with
one folder, file or link added to its runs folder: a user's copy of the run (``wf_….bak``),
names no run id has (a space, a newline, dots), a file, and links leading out.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnfold import ToolCall, Transcript, load, scan

REAL = Path(__file__).parent.parent / "fixtures" / "claude-code" / "v2.1.332_workflow"
SESSION = "11111111-2222-3333-4444-666666666666"
RUN = "wf_306ba340-b64"


def real_copy(tmp_path: Path) -> Path:
    """The real session, copied: its file and its ``<session>/`` folder."""
    copy = tmp_path / "project"
    shutil.copytree(REAL, copy)
    return copy


def runs_folder(copy: Path) -> Path:
    return copy / SESSION / "subagents" / "workflows"


def session_file(copy: Path) -> Path:
    return copy / f"{SESSION}.jsonl"


def shape(transcript: Transcript) -> list[Any]:
    """What a reader sees, down every sub-agent: entry kinds, then each call's id, name,
    status and its sub-agent's entry kinds."""
    seen: list[Any] = [[e.kind for e in transcript]]
    for call in transcript.tool_calls(nested=True):
        agent = call.subagent
        inner = [e.kind for e in agent.transcript] if agent and agent.transcript else None
        seen.append((call.call_id, call.name, call.status, inner))
    return seen


def as_before(tmp_path: Path) -> Transcript:
    """The untouched real run, loaded from a copy of its own."""
    return load(session_file(real_copy(tmp_path / "before")))


class Touched:
    """The paths listed or opened while loading (``os.listdir`` for ``Path.iterdir``,
    ``os.scandir`` for ``Path.glob``, ``io.open`` for ``Path.open``/``read_text``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        for module, name in ((os, "listdir"), (os, "scandir"), (io, "open")):
            monkeypatch.setattr(module, name, self._spy(getattr(module, name)))

    def _spy(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def spied(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, (str, os.PathLike)):
                self.paths.append(os.fspath(path))
            return real(path, *args, **kwargs)

        return spied

    def under(self, folder: Path) -> list[str]:
        return [p for p in self.paths if p == str(folder) or p.startswith(f"{folder}{os.sep}")]


def workflow_calls(transcript: Transcript) -> list[ToolCall]:
    return [c for c in transcript.tool_calls() if c.name == "Workflow"]


# --- a folder whose name is no run id -------------------------------------------------------------

NOT_RUN_IDS = [
    f"{RUN}.bak",  # a user's copy of the run
    "wf 1",
    "wf\n1",
    "...",
    "..bak",
    "wf_1\x1b[31m",
]


@pytest.mark.parametrize("name", NOT_RUN_IDS, ids=repr)
def test_L4_a_folder_whose_name_is_no_run_id_is_said_and_not_read(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = as_before(tmp_path)
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    # A real run's agents, journal and metadata, under a name Claude Code never writes.
    shutil.copytree(runs / RUN, runs / name)
    touched = Touched(monkeypatch)
    transcript = load(session_file(copy))
    [warning] = transcript.warnings
    assert warning.reason == (
        f"workflow run folder {name!r} is not a plain name, not a run id Claude Code writes: "
        f"its files, in {runs}, are not read"
    )
    assert warning.source == str(session_file(copy))
    # Shown escaped: no newline or terminal escape of the disk's name reaches the notice.
    assert "\n" not in warning.reason
    assert "\x1b" not in warning.reason
    # Not looked into at all: neither listed nor any of its files opened.
    assert touched.under(runs / name) == []
    # Everything else loads as before: the same run once, under its call, nothing at the end.
    assert shape(transcript) == shape(before)
    assert before.warnings == []
    assert transcript.accounting is not None
    assert before.accounting is not None
    assert transcript.accounting.counts == before.accounting.counts
    assert transcript.accounting.unaccounted == []


def test_L4_several_such_folders_are_each_said_in_name_order(tmp_path: Path) -> None:
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    for name in ("wf 2", "wf 1"):
        (runs / name).mkdir()
    transcript = load(session_file(copy))
    named = [w.reason.split("'")[1] for w in transcript.warnings]
    assert named == ["wf 1", "wf 2"]  # the same on every machine, whatever the disk's order


def test_C1_the_corpus_row_counts_the_warning_of_a_copy_it_hides(tmp_path: Path) -> None:
    """The corpus counts a copy's agent files as the session's (no rows of their own): the
    session's row carries the warning that says they were not read."""
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    shutil.copytree(runs / RUN, runs / f"{RUN}.bak")
    [row] = list(scan(copy, workers=1, cache=False))
    assert Path(row["path"]).name == f"{SESSION}.jsonl"
    assert row["warnings"] == 1


# --- a file in the runs folder ------------------------------------------------------------------


def test_L1_a_file_in_the_runs_folder_is_no_run_and_is_passed_over(tmp_path: Path) -> None:
    """Claude Code writes only folders there; a file (an agent file copied one level up, a
    note) is no run and the run reads as it did. The agent file, which the corpus counts as
    the session's, is said in a warning (tests/formats/test_claude_code_stray_workflow_agents.py);
    the note is passed over."""
    before = as_before(tmp_path)
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    agent = next(p for p in sorted((runs / RUN).iterdir()) if p.suffix == ".jsonl")
    shutil.copy(agent, runs / agent.name)
    (runs / "wf_notes").write_text("not a run\n", encoding="utf-8")
    transcript = load(session_file(copy))
    assert [w.reason.split(" in ")[0] for w in transcript.warnings] == [f"agent file {agent.name}"]
    assert shape(transcript) == shape(before)


# --- links --------------------------------------------------------------------------------------


def outside_run(tmp_path: Path, copy: Path) -> Path:
    """A copy of the real run's folder outside the session's (another session's, a copy)."""
    outside = tmp_path / "elsewhere" / "run"
    shutil.copytree(runs_folder(copy) / RUN, outside)
    return outside


def test_X1_a_link_leading_out_of_the_runs_folder_is_said_and_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = as_before(tmp_path)
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    outside = outside_run(tmp_path, copy)
    (runs / "wf_0ther000-abc").symlink_to(outside, target_is_directory=True)
    touched = Touched(monkeypatch)
    transcript = load(session_file(copy))
    [warning] = transcript.warnings
    assert warning.reason == (
        f"workflow run folder 'wf_0ther000-abc' is a link leading out of {runs}: not followed, "
        "its files are not read"
    )
    assert warning.line is None
    assert touched.under(outside) == []
    assert touched.under(runs / "wf_0ther000-abc") == []
    assert shape(transcript) == shape(before)


def test_X1_a_link_out_with_a_name_no_run_id_has_is_said_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    outside = outside_run(tmp_path, copy)
    (runs / "wf\n..").symlink_to(outside, target_is_directory=True)
    touched = Touched(monkeypatch)
    transcript = load(session_file(copy))
    [warning] = transcript.warnings
    assert "'wf\\n..' is not a plain name" in warning.reason
    assert touched.under(outside) == []


def test_X1_a_link_to_the_runs_folder_s_parent_is_not_followed(tmp_path: Path) -> None:
    """``wf_up -> ..``: the session's ``subagents`` folder is no run of its own."""
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    (runs / "wf_up").symlink_to("..", target_is_directory=True)
    transcript = load(session_file(copy))
    [warning] = transcript.warnings
    assert "'wf_up' is a link leading out of" in warning.reason
    assert len(workflow_calls(transcript)) == 1


def test_X1_a_called_run_whose_folder_leads_out_is_said_at_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Workflow call names the run, but its folder is a link to another place: the call
    says its steps are not recorded here and the warning is at its result line."""
    copy = real_copy(tmp_path)
    runs = runs_folder(copy)
    outside = outside_run(tmp_path, copy)
    shutil.rmtree(runs / RUN)
    (runs / RUN).symlink_to(outside, target_is_directory=True)
    touched = Touched(monkeypatch)
    transcript = load(session_file(copy))
    [warning] = transcript.warnings
    assert warning.reason == (
        f"workflow run folder {RUN!r} is a link leading out of {runs}: not followed, its files "
        "are not read"
    )
    assert warning.line is not None
    [call] = workflow_calls(transcript)  # said once: not again as a run no call names
    assert call.subagent is not None
    assert call.subagent.transcript is None
    assert call.subagent.steps_missing
    assert touched.under(outside) == []


def test_X1_a_runs_folder_reached_through_a_link_still_holds_its_runs(tmp_path: Path) -> None:
    """A linked folder above the runs (``~/.claude`` kept in a dotfiles repository) leads
    nowhere out of it: the run reads as before."""
    before = as_before(tmp_path)
    copy = real_copy(tmp_path)
    linked = tmp_path / "linked"
    linked.symlink_to(copy, target_is_directory=True)
    transcript = load(session_file(linked))
    assert transcript.warnings == []
    assert shape(transcript) == shape(before)


def test_the_fixture_s_runs_folder_is_as_claude_code_wrote_it() -> None:
    """The cases above add to it; the real one holds just the run, named as Claude Code
    names runs."""
    assert [p.name for p in runs_folder(REAL).iterdir()] == [RUN]
