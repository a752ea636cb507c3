"""``turnfold show`` and ``render`` where the last QA left them (W-6): a locale that is not UTF-8,
a reader that leaves, the time zone of a time, a named pipe as FILE, a mistyped choice. Each
test names what the command did before."""

from __future__ import annotations

import gzip
import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import turnfold

TESTS = Path(__file__).parent
DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
EVAL = TESTS / "fixtures" / "compare" / "arithmetic_baseline.eval"
#: A dataset of three runs (ms-swift's test data): a file of many, not one transcript.
RUNS = TESTS / "fixtures" / "datasets" / "ms-swift_tests_sharegpt_three-rows.jsonl"
#: Long enough that a command that hangs is one, however slow the machine.
HANG = 120
#: The demo's first line, its start (10:00 UTC) in the zone the test pins.
HEADER = (
    "claude-sonnet-4-5 {dot} 2026-11-02 {time} {dot} 1m 2s {dot} 2 turns {dot} 8 tools (1 failed)"
)


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "turnfold", *args]


def environment(*unset: str, **values: str) -> dict[str, str]:
    """The test's environment without ``unset``, with ``values``, in the time zone UTC unless
    it says another; the terminal settings of whoever runs the tests never reach the command."""
    drop = {"COLUMNS", "NO_COLOR", "TZ", *unset}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "TZ": "UTC", **values}


def run(
    *args: str, unset: tuple[str, ...] = (), **values: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        command(*args), capture_output=True, env=environment(*unset, **values), timeout=HANG,
        check=False,
    )  # fmt: skip


#: A locale with no UTF-8 (Python's UTF-8 mode off, which a C locale turns on by itself).
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}


def test_W6_show_in_an_ascii_locale_draws_its_glyphs_in_ascii() -> None:
    """Under ``LC_ALL=C`` (``PYTHONIOENCODING`` unset) every fold mark, ``·``, ``≈`` and the
    timeline's bars were ``?``: ``? Completed ? 25s ? 7 tools``."""
    result = run("show", str(DEMO), "--expand", "--width", "120", unset=("PYTHONIOENCODING",),
                 **ASCII_LOCALE)  # fmt: skip
    assert result.returncode == 0, result.stderr
    shown = result.stdout.decode("ascii")  # nothing but ASCII
    lines = shown.splitlines()
    assert lines[0] == HEADER.format(dot="|", time="10:00 UTC") + " | 12.8k tokens | ~ $0.04"
    assert lines[1].startswith("> Timeline _")  # the timeline's bars as a ramp of ASCII
    assert set(lines[1].removeprefix("> Timeline ")) <= set("_.:-=+*#")
    assert "v Completed | 25s | 7 tools" in lines
    assert "  v Thought, searched and read files | 3 operations" in lines
    assert "    * Read config parser and tests" in lines  # F-15's label
    assert "    v Task + reviewer: review the fix | 2 tools | 12s | 2.4k tokens" in lines  # F-7
    # A character of the transcript's own is escaped as Python's own tools escape what they
    # cannot encode (pydoc, sys.stderr): the jest cross (U+2715) is readable, never "?".
    assert "        \\u2715 defaults port to 8080" in lines
    # No character became "?": the outline in UTF-8, two cells narrower (see the next test),
    # holds as many, the transcript's own ("fix it?", "data.port ?? 8080").
    utf8 = run("show", str(DEMO), "--expand", "--width", "118", PYTHONIOENCODING="utf-8")
    assert shown.count("?") == utf8.stdout.decode("utf-8").count("?") > 0


def test_W6_show_in_latin1_keeps_what_latin1_has() -> None:
    """Latin-1 has ``·``: only what it lacks is drawn in ASCII (``▸``, ``≈``)."""
    result = run("show", str(DEMO), "--width", "120", PYTHONIOENCODING="latin-1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("latin-1").splitlines()
    assert lines[0] == HEADER.format(dot="·", time="10:00 UTC") + " · 12.8k tokens · ~ $0.04"
    assert "> Completed · 25s · 7 tools" in lines


def test_W6_a_cut_line_in_ascii_stays_within_the_width() -> None:
    """``…`` is ``...`` in ASCII, two cells more: a line cut at the width still fits it. (Before,
    a cut line ended in ``?``.)"""
    result = run("show", str(DEMO), "--expand", "--width", "40", unset=("PYTHONIOENCODING",),
                 **ASCII_LOCALE)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("ascii").splitlines()
    assert max(len(line) for line in lines) <= 40
    # The lines the outline cut, in UTF-8 at the width the ASCII one is laid out at.
    utf8 = run("show", str(DEMO), "--expand", "--width", "38", PYTHONIOENCODING="utf-8")
    laid_out = utf8.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(laid_out)
    cut = [i for i, line in enumerate(laid_out) if line.endswith("…")]
    assert cut
    for i in cut:
        assert lines[i].endswith("...")
        assert len(lines[i]) == len(laid_out[i]) + 2


@pytest.mark.parametrize(
    "args", [("show", str(DEMO)), ("render", str(DEMO), "-o", "-")], ids=["show", "render"]
)
def test_W6_a_reader_that_left_ends_the_command_silently_with_status_1(
    args: tuple[str, ...],
) -> None:
    """``turnfold show X | head -1`` ended with status 0, as if all of it was read. Python's
    recipe for SIGPIPE (docs: signal, "Note on SIGPIPE") ends silently with status 1, as Python
    itself does on EPIPE."""
    reading, writing = os.pipe()
    os.close(reading)  # the reader left before the outline came
    try:
        result = subprocess.run(
            command(*args), stdout=writing, stderr=subprocess.PIPE, env=environment(),
            timeout=HANG, check=False,
        )  # fmt: skip
    finally:
        os.close(writing)
    assert result.returncode == 1
    assert result.stderr == b""


@pytest.mark.parametrize(
    ("zone", "time"),
    [
        ("UTC", "10:00 UTC"),
        ("JST-9", "19:00 JST"),  # POSIX rules: no time-zone database needed
        ("CET-1CEST,M3.5.0,M10.5.0/3", "11:00 CET"),  # 2 November: winter time
        ("EST5EDT,M3.2.0,M11.1.0", "05:00 EST"),  # DST ended the day before, at 2:00
    ],
)
def test_U3_show_says_the_zone_of_the_start_it_shows(zone: str, time: str) -> None:
    """The header's start was the local time with no zone (``2026-11-02 10:00``): the page
    tells it on hover (the exact moment in UTC), a terminal cannot."""
    result = run("show", str(DEMO), TZ=zone, PYTHONIOENCODING="utf-8")
    assert result.returncode == 0, result.stderr
    first = result.stdout.decode("utf-8").splitlines()[0]
    assert first.startswith(HEADER.format(dot="·", time=time) + " · ")


# --- a named pipe as FILE --------------------------------------------------------------------


@contextmanager
def fifo_written(tmp_path: Path, data: bytes, *, after: threading.Event | None = None,
                 name: str = "in.fifo") -> Iterator[Path]:  # fmt: skip
    """A named pipe that a thread writes ``data`` into (once ``after`` is set, if given), as a
    shell's ``<(gzip -dc x.gz)`` does; the thread is released at the end if nothing read."""
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def write() -> None:
        if after is not None:
            after.wait()
        try:
            with fifo.open("wb") as stream:
                stream.write(data)
        except BrokenPipeError:  # the command read what it needed and left
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield fifo
    finally:
        if after is not None:
            after.set()
        with_reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a blocked writer goes on
        writer.join(HANG)
        os.close(with_reader)


@pytest.mark.parametrize(
    "data", [DEMO.read_bytes(), gzip.compress(DEMO.read_bytes())], ids=["jsonl", "gzip"]
)
@pytest.mark.parametrize("verb", ["show", "render"])
def test_W6_a_named_pipe_is_read_as_a_file_is(tmp_path: Path, data: bytes, verb: str) -> None:
    """``turnfold show <(gzip -dc x.jsonl.gz)`` read it (this held before: kept so)."""
    with fifo_written(tmp_path, data) as fifo:
        args = ("-o", "-") if verb == "render" else ()
        result = run(verb, str(fifo), *args, PYTHONIOENCODING="utf-8")
    assert result.returncode == 0, result.stderr
    if verb == "show":
        assert result.stdout.decode().startswith(HEADER.format(dot="·", time="10:00 UTC"))
    else:
        assert b"The config tests fail since yesterday." in result.stdout


def test_W6_a_named_pipe_of_many_runs_is_said_not_waited_on(tmp_path: Path) -> None:
    """A file of many runs through a pipe hung for ever: the hint that names its first run
    opened the pipe again, which nothing writes to any more."""
    with fifo_written(tmp_path, RUNS.read_bytes()) as fifo:
        result = run("show", str(fifo))
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.startswith(f"turnfold: {fifo}, line 1: not a transcript (a file of runs")
    assert "is read once: save it to a file to show one of its runs" in err


@pytest.mark.parametrize("through", ["fifo", "stdin"])
def test_W6_an_archive_through_a_pipe_is_said_to_need_a_file(tmp_path: Path, through: str) -> None:
    """An eval log (a zip) through a pipe was "binary data, not JSON text", with a hint to name
    its format, which cannot read it from a pipe either."""
    if through == "stdin":
        result = subprocess.run(
            command("show", "-"), input=EVAL.read_bytes(), capture_output=True,
            env=environment(), timeout=HANG, check=False,
        )  # fmt: skip
        named = "<stdin>"
    else:
        with fifo_written(tmp_path, EVAL.read_bytes(), name="log.eval") as fifo:
            result = run("show", str(fifo))
        named = str(fifo)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        f"turnfold: {named}: a zip archive (an eval log?) is read from its index at its end, "
        "which a pipe cannot give: save it to a file, then: turnfold show FILE"
    ]


def test_W6_a_named_pipe_nothing_writes_to_is_said_while_waited_on(tmp_path: Path) -> None:
    """``turnfold show FIFO`` with nothing writing to it yet waited silently, for ever if
    nothing came: now it says that it waits, and reads what comes."""
    writer_may_start = threading.Event()
    with fifo_written(tmp_path, DEMO.read_bytes(), after=writer_may_start) as fifo:
        process = subprocess.Popen(
            command("show", str(fifo)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=environment(PYTHONIOENCODING="utf-8"),
        )  # fmt: skip
        try:
            assert process.stderr is not None
            ready = select.select([process.stderr], [], [], HANG)[0]
            said = process.stderr.readline().decode() if ready else ""
            writer_may_start.set()
            out, rest = process.communicate(timeout=HANG)
        finally:
            process.kill()
            process.wait()
    assert said == (
        f"turnfold: {fifo}: waiting for a program to write into this named pipe (Ctrl-C stops)\n"
    )
    assert process.returncode == 0, rest
    assert out.decode().startswith(HEADER.format(dot="·", time="10:00 UTC"))


# --- a mistyped choice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--format", "claude"),
            "argument --format: invalid choice: 'claude', maybe you "
            "meant 'claude-code'? (choose from ",
        ),
        (
            ("--format", "gemni"),
            "argument --format: invalid choice: 'gemni', maybe you meant 'gemini'? (choose from ",
        ),
        (
            ("--mode", "command_first"),
            "argument --mode: invalid choice: 'command_first', maybe "
            "you meant 'command-first'? (choose from flat, command-first, fully-folded)",
        ),
        (
            ("--mode", "folded"),
            "argument --mode: invalid choice: 'folded', maybe you meant "
            "'fully-folded'? (choose from flat, command-first, fully-folded)",
        ),
    ],
)
@pytest.mark.parametrize("verb", ["show", "render"])
def test_W6_a_mistyped_choice_is_given_the_closest(
    args: tuple[str, ...], said: str, verb: str
) -> None:
    """``--format claude`` said ``invalid choice: 'claude' (choose from 'turnfold',
    'claude-code', …)`` with some sixty names and no pointer to the one meant; ``--mode`` the
    same. The wording is argparse's own for ``suggest_on_error`` (Python 3.14)."""
    result = run(verb, str(DEMO), *args)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.startswith(f"usage: turnfold {verb} ")
    assert f"turnfold {verb}: error: {said}" in err


def test_W6_a_choice_far_from_any_suggests_none() -> None:
    result = run("show", str(DEMO), "--mode", "xyz")
    assert result.returncode == 2
    err = result.stderr.decode()
    assert (
        "turnfold show: error: argument --mode: invalid choice: 'xyz' (choose from flat, "
        "command-first, fully-folded)"
    ) in err


@pytest.mark.parametrize(
    ("typed", "meant"), [("shwo", "show"), ("rendr", "render"), ("Show", "show")]
)
def test_W6_a_mistyped_command_is_given_the_closest(typed: str, meant: str) -> None:
    """``turnfold shwo FILE`` said ``invalid choice: 'shwo' (choose from 'render', 'show')``,
    no pointer to the command meant, where a mistyped option's value had one: the command's
    name was checked by argparse alone. Nothing is read or written; the usage and the error
    are all that is said."""
    result = run(typed, str(DEMO))
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode().splitlines() == [
        "usage: turnfold [-h] COMMAND ...",
        f"turnfold: error: argument COMMAND: invalid choice: {typed!r}, maybe you meant "
        f"{meant!r}? (choose from render, show)",
    ]


def test_W6_a_command_far_from_any_suggests_none_and_a_right_one_takes_its_arguments() -> None:
    result = run("xyzzy", str(DEMO))
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[-1] == (
        "turnfold: error: argument COMMAND: invalid choice: 'xyzzy' (choose from render, show)"
    )
    # The command's own arguments (a file, an option's value) are not taken for a command.
    shown = run("show", str(DEMO), "--mode", "flat", "--width", "100")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.decode().startswith(HEADER.format(dot="·", time="10:00 UTC"))
