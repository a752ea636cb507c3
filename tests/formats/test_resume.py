"""A growing file read on from its last complete line (spec C-4, ``formats/resume.py``).

Every sample session of the resumable formats (Claude Code and Codex) is cut at line after line:
the first part is read and checkpointed, the file grows to its whole, and reading it on from the
checkpoint must give exactly what ``turnfold.load`` of the whole file gives (entries, metadata,
warnings and the accounting of every record), as must a line still being written when the
checkpoint is taken.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.formats import resume
from turnfold.formats.resume import Checkpoint, read_growing, resumable
from turnfold.model import Transcript

FIXTURES = Path(__file__).parent.parent / "fixtures"
SESSIONS = sorted(
    [
        *(FIXTURES / "claude-code").glob("*.jsonl"),
        FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl",
        FIXTURES / "claude-code_v2.1.x_schema-coverage.jsonl",
        *(FIXTURES / "codex").glob("*.jsonl"),
        FIXTURES / "codex_rollout_schema-coverage.jsonl",
        FIXTURES / "codex_rollout_v0.129_two-turns.jsonl",
        *(FIXTURES / "gemini").glob("*.jsonl"),
    ]
)
#: Cuts tried per file: every line of a short file, this many spread over a longer one.
CUTS = 12


def _format(path: Path) -> str:
    relative = str(path.relative_to(FIXTURES))
    return next((f for f in ("codex", "gemini") if f in relative), "claude-code")


def _same(read: Transcript, loaded: Transcript) -> None:
    assert read == loaded  # entries, metadata and warnings
    assert read.accounting is not None
    assert loaded.accounting is not None
    assert read.accounting.counts == loaded.accounting.counts
    assert read.accounting.unaccounted == loaded.accounting.unaccounted


def _growing(tmp_path: Path, fixture: Path) -> Path:
    """Where the growing copy is written, beside a copy of what the session keeps next to it
    (a sub-agent folder named after it)."""
    beside = fixture.with_suffix("")
    if beside.is_dir():
        shutil.copytree(beside, tmp_path / beside.name)
    return tmp_path / fixture.name


def _cuts(count: int) -> list[int]:
    if count <= CUTS:
        return list(range(1, count))
    return sorted({1 + (count - 2) * i // (CUTS - 1) for i in range(CUTS)})


@pytest.mark.parametrize("fixture", SESSIONS, ids=lambda p: p.name)
def test_C4_a_file_read_on_from_its_checkpoint_is_the_file_loaded_whole(
    tmp_path: Path, fixture: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    format = _format(fixture)
    assert resumable(format)
    restored: list[object] = []  # what each reading restored from its checkpoint
    real = resume._restore
    monkeypatch.setattr(
        resume, "_restore", lambda *args: restored.append(real(*args)) or real(*args)
    )
    lines = fixture.read_bytes().splitlines(keepends=True)
    target = _growing(tmp_path, fixture)
    for cut in _cuts(len(lines)):
        target.write_bytes(b"".join(lines[:cut]))
        first, checkpoint = read_growing(target, format)
        _same(first, turnfold.load(target, format=format))
        if cut == 1:  # one JSON line is read as one document, as load reads it: no lines yet
            assert checkpoint is None
        else:
            assert checkpoint is not None
            assert checkpoint.offset == target.stat().st_size
        with target.open("ab") as out:  # the agent writes on
            out.write(b"".join(lines[cut:]))
        restored.clear()
        grown, again = read_growing(target, format, checkpoint)
        _same(grown, turnfold.load(target, format=format))
        assert (restored[0] is not None) == (checkpoint is not None)  # read on, not read again
        assert again is not None
        assert again.offset == target.stat().st_size


@pytest.mark.parametrize("fixture", SESSIONS[:: max(1, len(SESSIONS) // 4)], ids=lambda p: p.name)
def test_C4_a_line_still_being_written_is_read_after_the_checkpoint(
    tmp_path: Path, fixture: Path
) -> None:
    format = _format(fixture)
    lines = fixture.read_bytes().splitlines(keepends=True)
    target = _growing(tmp_path, fixture)
    cut = len(lines) // 2
    half = lines[cut][: len(lines[cut]) // 2]
    target.write_bytes(b"".join(lines[:cut]) + half)  # the agent is mid-line
    partial, checkpoint = read_growing(target, format)
    _same(partial, turnfold.load(target, format=format))  # the torn line warned about, as load
    assert checkpoint is not None
    assert checkpoint.offset == len(b"".join(lines[:cut]))  # before the torn line
    with target.open("ab") as out:
        out.write(lines[cut][len(half) :] + b"".join(lines[cut + 1 :]))
    grown, _ = read_growing(target, format, checkpoint)
    _same(grown, turnfold.load(target, format=format))


def test_C4_a_file_rewritten_rather_than_appended_to_is_read_whole(tmp_path: Path) -> None:
    fixture = FIXTURES / "claude-code_v2.1.x_schema-coverage.jsonl"
    lines = fixture.read_bytes().splitlines(keepends=True)
    target = tmp_path / fixture.name
    target.write_bytes(b"".join(lines[:10]))
    _, checkpoint = read_growing(target, "claude-code")
    assert checkpoint is not None
    # Other bytes before the checkpoint (the file was written anew, as long or longer).
    target.write_bytes(b"".join(lines[1:]))
    read, _ = read_growing(target, "claude-code", checkpoint)
    _same(read, turnfold.load(target, format="claude-code"))
    # Another file in its place (another inode), even with the same first lines.
    replaced = tmp_path / "other.jsonl"
    replaced.write_bytes(b"".join(lines))
    replaced.replace(target)
    read, _ = read_growing(target, "claude-code", checkpoint)
    _same(read, turnfold.load(target, format="claude-code"))


def test_C4_a_checkpoint_of_another_format_or_a_file_with_no_line_is_not_used(
    tmp_path: Path,
) -> None:
    fixture = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
    target = tmp_path / fixture.name
    shutil.copyfile(fixture, target)
    _, checkpoint = read_growing(target, "codex")
    assert isinstance(checkpoint, Checkpoint)
    other = dataclasses.replace(checkpoint, format="claude-code")
    read, _ = read_growing(target, "codex", other)
    _same(read, turnfold.load(target, format="codex"))
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(fixture.read_bytes().splitlines()[0][:40])  # no complete line yet
    with pytest.raises(turnfold.TranscriptFormatError):
        turnfold.load(torn, format="codex")
    with pytest.raises(turnfold.TranscriptFormatError):
        read_growing(torn, "codex")
