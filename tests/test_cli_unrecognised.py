"""``turnfold`` on a file no format recognises (spec L-4): the file and its first offending
line, why, the closest formats when detection weighed any, how many formats were tried (every
one with ``-v``), and the next step: naming the format with ``--format``."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnfold.cli import main
from turnfold.formats import FORMATS


def _said(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


@pytest.fixture
def unknown(tmp_path: Path) -> Path:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"foo": 1}\n', "utf-8")
    return path


def test_an_unrecognised_file_says_how_many_formats_and_what_to_do(
    unknown: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("show", "render"):
        err = _said(capsys, command, str(unknown))
        first, second = err.splitlines()
        assert first == (f"turnfold: {unknown}, line 1: not a transcript (no known transcript "
                         f"structure); {len(FORMATS)} formats tried (-v names them)")  # fmt: skip
        assert second.startswith(f"turnfold: if it is one of them, name it: turnfold {command} "
                                 f"--format NAME {unknown} (turnfold {command} --help")  # fmt: skip
        assert second.endswith(" --help names them)")  # not docs/formats.md: no wheel has it
        assert "llama-factory" not in err  # the sixty names are behind -v


def test_verbose_names_every_format_tried(unknown: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    for flag in ("-v", "--verbose"):
        first = _said(capsys, "show", flag, str(unknown)).splitlines()[0]
        assert first.endswith("formats tried: " + ", ".join(FORMATS))


def test_the_closest_formats_are_named(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n{"a": 1}\n{"b": 2}\n', "utf-8")
    first = _said(capsys, "show", str(path)).splitlines()[0]
    assert "closest: " in first
    assert "openai: reads 33% (no tool_calls or tool message)" in first


def test_a_format_named_is_the_one_tried_and_no_next_step(
    unknown: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _said(capsys, "show", "--format", "claude-code", str(unknown))
    assert err == (f"turnfold: {unknown}, line 1: not a transcript (no Claude Code records); "
                   "formats tried: claude-code\n")  # fmt: skip


def test_standard_input_s_next_step_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"not json\n")))
    err = _said(capsys, "show", "-")
    assert ", line 1: not a transcript (invalid JSON); " in err
    assert "turnfold show --format NAME - (" in err
