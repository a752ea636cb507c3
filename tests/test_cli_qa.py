"""``turnfold show`` and ``turnfold render`` used the way a person in a terminal uses them (W-6):
output that is not a plain file, a locale that is not UTF-8, a reader that leaves, a full disk,
a mistyped argument. Each test names what the command did before."""

from __future__ import annotations

import os
import select
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import turnfold
from turnfold.render.html import render_html
from turnfold.render.viewmodel import build_view_model

TESTS = Path(__file__).parent
DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
BASELINE = TESTS / "fixtures" / "compare" / "arithmetic_baseline.eval"
CANDIDATE = TESTS / "fixtures" / "compare" / "arithmetic_candidate.eval"
FULL = Path("/dev/full")  # a device every write to fails with "no space left" (Linux)


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "turnfold", *args]


def environment(*unset: str, **values: str) -> dict[str, str]:
    """The test's environment without ``unset``, with ``values``; COLUMNS and NO_COLOR of the
    person running the tests never reach the command."""
    drop = {"COLUMNS", "NO_COLOR", *unset}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **values}


def run(*args: str, cwd: Path | None = None, **values: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), capture_output=True, text=True, encoding="utf-8", errors="replace",
        cwd=cwd, env=environment(**values), timeout=300, check=False,
    )  # fmt: skip


def demo_page() -> str:
    return render_html(build_view_model(turnfold.load(DEMO)), title="turnfold demo session")


def test_W6_a_page_written_into_a_named_pipe_goes_through_the_pipe(tmp_path: Path) -> None:
    """``-o FIFO`` (``-o /dev/stdout``, ``-o /dev/null`` likewise) wrote the page beside it and
    moved it over it: the pipe's reader got nothing and the pipe became a file (as root,
    ``-o /dev/null`` replaced the device with the page); a user without write access to the
    device's folder got "Permission denied"."""
    fifo = tmp_path / "page.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so the command's open never waits
    received = bytearray()
    try:
        process = subprocess.Popen(
            command("render", str(DEMO), "-o", str(fifo)), stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=environment(),
        )  # fmt: skip
        while True:  # read while it writes: a page is larger than a pipe holds
            ended = process.poll() is not None
            if select.select([reader], [], [], 0.05)[0]:
                with_data = os.read(reader, 1 << 16)
                received += with_data
                if with_data:
                    continue
            if ended:
                break
        assert process.stderr is not None
        err = process.stderr.read().decode()
        process.stderr.close()
    finally:
        os.close(reader)
    assert process.returncode == 0, err
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still the pipe it was
    assert received.decode("utf-8") == demo_page()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.fifo"]  # nothing left beside


def test_W6_a_page_written_through_a_link_replaces_the_file_it_names(tmp_path: Path) -> None:
    """``-o link.html`` replaced the link itself with the page, leaving the file it named as
    it was."""
    (tmp_path / "pages").mkdir()
    real = tmp_path / "pages" / "page.html"
    real.write_text("an old page")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    result = run("render", str(DEMO), "-o", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert real.read_text("utf-8") == demo_page()
    assert sorted(p.name for p in real.parent.iterdir()) == ["page.html"]


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="/dev/fd names a process's files")
def test_W6_a_page_written_to_a_name_in_dev_goes_where_the_shell_pointed_it(
    tmp_path: Path,
) -> None:
    """``-o /dev/fd/N`` (and ``-o /dev/stdout >> log``) tried to write the page beside it, in
    /dev (status 1, or as root a file in /dev moved over the name): a log the shell opened to
    append to is written into, after what it holds."""
    log = tmp_path / "log.html"
    log.write_text("before\n")
    with log.open("ab") as appended:
        descriptor = appended.fileno()
        result = subprocess.run(
            command("render", str(DEMO), "-o", f"/dev/fd/{descriptor}"), capture_output=True,
            text=True, env=environment(), pass_fds=(descriptor,), timeout=300, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert log.read_text("utf-8") == "before\n" + demo_page()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.html"]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_W6_show_in_a_locale_that_is_not_utf8_draws_what_it_can(encoding: str) -> None:
    """With stdout in ASCII or Latin-1 (``LC_ALL=C`` with ``PYTHONUTF8=0``, a Latin-1 locale)
    ``show`` ended in a UnicodeEncodeError traceback at the first character it could not
    encode (the header's ``·`` or ``≈``)."""
    result = subprocess.run(
        command("show", str(DEMO), "--expand"), capture_output=True,
        env=environment(PYTHONIOENCODING=encoding, TZ="UTC"), timeout=300, check=False,
    )  # fmt: skip
    err = result.stderr.decode(encoding, "replace")
    assert result.returncode == 0, err
    assert "Traceback" not in err
    shown = result.stdout.decode(encoding)  # every byte in the locale's encoding
    # The start names its zone (the environment's, UTC); a glyph the encoding lacks is drawn
    # in ASCII (test_cli_leftovers.py): Latin-1 has the middle dot.
    header = "claude-sonnet-4-5 · 2026-11-02 10:00 UTC · 1m 2s · 2 turns · 8 tools (1 failed)"
    assert (header if encoding == "latin-1" else header.replace("·", "|")) in shown
    assert "Can you find out why and fix it?" in shown  # the text as it is


def test_W6_compare_to_a_reader_that_left_is_quiet(tmp_path: Path) -> None:
    """``render --compare A B -o - | head -c 1``: a BrokenPipeError traceback, where a single
    page's ``-o -`` ends quietly (status 1, as Python's recipe for SIGPIPE ends)."""
    reading, writing = os.pipe()
    os.close(reading)  # the reader left before the page came
    try:
        result = subprocess.run(
            command("render", "--compare", str(BASELINE), str(CANDIDATE), "-o", "-"),
            stdout=writing, stderr=subprocess.PIPE, text=True, env=environment(),
            timeout=300, check=False,
        )  # fmt: skip
    finally:
        os.close(writing)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""


@pytest.mark.skipif(not FULL.exists(), reason="/dev/full is Linux's")
@pytest.mark.parametrize(
    ("args", "buffered"),
    [
        (("show", str(DEMO)), True),
        (("show", str(DEMO)), False),
        (("render", str(DEMO), "-o", "-"), True),
        (("render", "--compare", str(BASELINE), str(CANDIDATE), "-o", "-"), True),
    ],
)
def test_W6_a_full_disk_under_stdout_is_said_with_status_1(
    args: tuple[str, ...], buffered: bool
) -> None:
    """``turnfold show … > file`` on a full disk: with Python's buffered stdout, status 0 and
    nothing said (the write failed at the last flush, which ignores errors); unbuffered
    (``PYTHONUNBUFFERED``), or ``render -o -``, an OSError traceback."""
    unset = ("PYTHONUNBUFFERED",) if buffered else ()
    values = {} if buffered else {"PYTHONUNBUFFERED": "1"}
    with FULL.open("wb") as full:
        result = subprocess.run(
            command(*args), stdout=full, stderr=subprocess.PIPE, text=True,
            env=environment(*unset, **values), timeout=300, check=False,
        )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "turnfold: cannot write to standard output: No space left on device"
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("show", str(DEMO), "-o", "page.html"), "show"),
        (("show", str(DEMO), "extra.jsonl"), "show"),
        (("render", str(DEMO), "--width", "80"), "render"),
    ],
)
def test_W6_unrecognised_arguments_name_the_command(args: tuple[str, ...], named: str) -> None:
    """``turnfold show FILE -o page.html`` answered with the top-level usage
    (``usage: turnfold [-h] COMMAND ...``), which names neither command's options."""
    result = run(*args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"usage: turnfold {named} ")
    assert f"turnfold {named}: error: unrecognized arguments: " in result.stderr


def test_W6_compare_refuses_a_folder_for_its_one_page(tmp_path: Path) -> None:
    """``render --compare A B -o new/`` wrote the page as a file called ``new``."""
    shutil.copy(BASELINE, tmp_path / "a.eval")
    shutil.copy(CANDIDATE, tmp_path / "b.eval")
    result = run("render", "--compare", "a.eval", "b.eval", "-o", f"new{os.sep}", cwd=tmp_path)
    assert result.returncode == 2
    assert "turnfold render: error: " in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.eval", "b.eval"]
