"""``turnfold show`` and ``turnfold render`` and their standard error (W-6, X-1): closed by the
shell (``2>&-``), a file name holding a newline, and the mode of a page replaced. Each test
names what the command did before."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import turnfold
from turnfold.render.html import render_html
from turnfold.render.viewmodel import build_view_model

DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
LIMIT = "TURNFOLD_MAX_RECORD_BYTES"


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "turnfold", *args]


def environment(**values: str) -> dict[str, str]:
    """The test's environment with ``values``; the limit, COLUMNS, NO_COLOR and warning
    filters of the person running the tests never reach the command."""
    drop = {"COLUMNS", "NO_COLOR", "PYTHONWARNINGS", LIMIT}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **values}


def run(*args: str, cwd: Path, **values: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        command(*args), capture_output=True, cwd=cwd, env=environment(**values), timeout=300,
        check=False,
    )  # fmt: skip


def run_with_stderr_closed(
    *args: str, cwd: Path, **values: str
) -> subprocess.CompletedProcess[bytes]:
    """The command as ``turnfold … 2>&-`` runs it: no standard error at all (``sys.stderr`` is
    None in the process), not one that goes nowhere."""
    shell = ["sh", "-c", 'exec "$@" 2>&-', "sh", *command(*args)]
    return subprocess.run(
        shell, stdout=subprocess.PIPE, cwd=cwd, env=environment(**values), timeout=300,
        check=False,
    )  # fmt: skip


def said(result: subprocess.CompletedProcess[bytes]) -> list[str]:
    return result.stderr.decode("utf-8").splitlines()


def demo_page() -> str:
    return render_html(build_view_model(turnfold.load(DEMO)), title="turnfold demo session")


def with_a_bad_line(path: Path) -> Path:
    """The demo session and a line that is not JSON: it loads, with one problem to say."""
    path.write_bytes(DEMO.read_bytes() + b"not json\n")
    return path


# --- 1. standard error closed -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "values", "says"),
    [
        (("show", "demo.jsonl"), {}, ""),
        (("render", "demo.jsonl", "-o", "-"), {}, ""),
        (("render", "bad.jsonl", "-o", "-"), {}, "turnfold: bad.jsonl: 1 problem"),
        (("show", "demo.jsonl"), {LIMIT: "abc"}, f"turnfold: warning: {LIMIT}='abc'"),
    ],
    ids=["show", "render-stdout", "load-problem", "warning"],
)
def test_W6_closed_stderr_leaves_stdout_to_the_page_or_outline(
    tmp_path: Path, args: tuple[str, ...], values: dict[str, str], says: str
) -> None:
    """``turnfold show x.jsonl 2>&-`` (and every other command) ended with status 1 and said
    nothing (``sys.stderr.isatty()`` on None); a message printed to a stderr that is None goes
    to stdout, into the page of ``-o -``."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    with_a_bad_line(tmp_path / "bad.jsonl")
    spoken = run(*args, cwd=tmp_path, **values)
    assert spoken.returncode == 0, spoken.stderr
    if says:  # there is something to say, which the closed stderr takes nowhere
        assert spoken.stderr.decode("utf-8").startswith(says)
    else:
        assert spoken.stderr == b""
    silent = run_with_stderr_closed(*args, cwd=tmp_path, **values)
    assert silent.returncode == 0
    assert silent.stdout == spoken.stdout
    assert b"turnfold: " not in silent.stdout
    if args[0] == "render":
        assert silent.stdout.decode("utf-8").startswith("<!DOCTYPE html>")


def test_W6_closed_stderr_still_writes_a_page_to_its_file(tmp_path: Path) -> None:
    """``turnfold render x.jsonl -o page.html 2>&-`` wrote no page (status 1)."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    result = run_with_stderr_closed("render", "demo.jsonl", "-o", "page.html", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == b""
    assert (tmp_path / "page.html").read_text("utf-8") == demo_page()


def test_W6_closed_stderr_still_writes_a_site(tmp_path: Path) -> None:
    """``turnfold render runs/ -o site/ 2>&-`` wrote no site (status 1)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "demo.jsonl").write_bytes(DEMO.read_bytes())
    result = run_with_stderr_closed(
        "render", "runs", "-o", "site/", cwd=tmp_path, TURNFOLD_CACHE_DIR=str(tmp_path / "c")
    )
    assert result.returncode == 0
    assert result.stdout == b""
    assert "demo.jsonl" in (tmp_path / "site" / "index.html").read_text("utf-8")


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (("show", "missing.jsonl"), 2),  # no such file
        (("show", "odd.jsonl"), 2),  # not a transcript
        (("render",), 2),  # a usage error: no FILE
        (("render", "demo.jsonl", "-o", "demo.jsonl"), 2),  # a usage error of turnfold's own
    ],
    ids=["missing", "not-a-transcript", "usage", "own-usage"],
)
def test_W6_closed_stderr_still_tells_failure_by_the_status(
    tmp_path: Path, args: tuple[str, ...], status: int
) -> None:
    """A failure with stderr closed ended with status 1 whatever it was, before saying it."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    (tmp_path / "odd.jsonl").write_text('{"a": 1}\n')
    result = run_with_stderr_closed(*args, cwd=tmp_path)
    assert result.returncode == status
    assert result.stdout == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.jsonl", "odd.jsonl"]


# --- 2. a newline in a name -------------------------------------------------------------------


def test_X1_a_newline_in_a_missing_file_s_name_stays_on_its_line(tmp_path: Path) -> None:
    """``show $'gone\\n.jsonl'`` said "turnfold: gone" and ".jsonl: no such file" as two lines."""
    result = run("show", "gone\n\x1b]0;t\x07.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert said(result) == ["turnfold: gone\\n\\x1b]0;t\\x07.jsonl: no such file"]


def test_X1_a_newline_in_a_name_and_a_reason_stays_on_its_line(tmp_path: Path) -> None:
    """The count of load problems names the file twice, in its words and in the first
    problem's (a reason the loader wrote): each newline in the name split the message."""
    with_a_bad_line(tmp_path / "two\nlines.jsonl")
    result = run("show", "two\nlines.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert said(result) == [
        "turnfold: two\\nlines.jsonl: 1 problem while loading (shown as a notice); first: "
        "two\\nlines.jsonl:19: invalid JSON: Expecting value (column 1)"
    ]


def test_X1_the_command_s_own_second_line_stays_while_the_name_s_newline_goes(
    tmp_path: Path,
) -> None:
    """A message of two lines of the command's own (not a transcript; how to name the format)
    keeps its two lines; the name in it no longer adds a third."""
    (tmp_path / "odd\n.jsonl").write_text('{"a": 1}\n')
    result = run("render", "odd\n.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    first, second = said(result)
    assert first.startswith("turnfold: odd\\n.jsonl, line 1: not a transcript (")
    assert second == (
        "turnfold: if it is one of them, name it: turnfold render --format NAME 'odd\\n.jsonl' "
        "(turnfold render --help names them)"
    )


def test_X1_a_name_in_a_usage_error_is_shown_not_obeyed(tmp_path: Path) -> None:
    """The usage errors turnfold finds itself (``-o`` naming the transcript) wrote the name as
    it is: a newline split the line, an escape sequence reached the terminal."""
    name = "x\n\x1b]0;pwned\x07.jsonl"
    (tmp_path / name).write_bytes(DEMO.read_bytes())
    result = run("render", name, "-o", name, cwd=tmp_path)
    assert result.returncode == 2
    assert b"\x1b" not in result.stderr
    assert said(result)[-1] == (
        "turnfold render: error: -o x\\n\\x1b]0;pwned\\x07.jsonl is the transcript itself; the "
        "page would replace it: choose another PAGE"
    )


def test_X1_a_newline_in_the_page_s_name_stays_on_its_line(tmp_path: Path) -> None:
    """``render x.jsonl -o $'pa\\nge.html'`` said where the page went over two lines."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    result = run("render", "demo.jsonl", "-o", "pa\nge.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [line] = said(result)
    assert line.startswith("turnfold: wrote pa\\nge.html (")
    assert (tmp_path / "pa\nge.html").read_text("utf-8") == demo_page()


def test_X1_a_newline_in_a_warning_s_name_stays_on_its_line(tmp_path: Path) -> None:
    """A warning (Python's, said as ``turnfold: warning: …``) naming a file of the folder: the
    newline in the name split it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "demo.jsonl").write_bytes(DEMO.read_bytes())
    # A Parquet file among the sessions: a scan skips it and warns, naming it.
    messages = [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]]
    pq.write_table(pa.table({"messages": messages}), runs / "roll\nouts.parquet")
    result = run(
        "render", "runs", "-o", "site/", cwd=tmp_path, TURNFOLD_CACHE_DIR=str(tmp_path / "c")
    )
    assert result.returncode == 0, result.stderr
    lines = said(result)
    assert all(line.startswith("turnfold: ") for line in lines), lines
    [warning] = [line for line in lines if "Parquet" in line]
    assert "(runs/roll\\nouts.parquet)" in warning


# --- 3. the mode of a page replaced -------------------------------------------------------


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
@pytest.mark.parametrize("given", ["-o", "beside"])
def test_W6_a_page_replaced_keeps_its_mode(tmp_path: Path, mode: int, given: str) -> None:
    """A page kept private (0600) became 0644 when written again: the new page, moved over the
    old one, had the mode a new file gets."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    page = tmp_path / "demo.html"
    page.write_text("old page\n", encoding="utf-8")
    page.chmod(mode)
    args = ("-o", "demo.html") if given == "-o" else ()
    result = run("render", "demo.jsonl", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(page.stat().st_mode) == mode
    assert page.read_text("utf-8") == demo_page()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.html", "demo.jsonl"]


def test_W6_a_new_page_gets_the_mode_of_a_new_file(tmp_path: Path) -> None:
    """A page where none was gets what the umask gives any new file, as before."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    umask = os.umask(0)
    os.umask(umask)
    result = run("render", "demo.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((tmp_path / "demo.html").stat().st_mode) == 0o666 & ~umask


def test_W6_a_link_s_page_keeps_the_mode_of_the_file_it_names(tmp_path: Path) -> None:
    """``-o link.html``: the page replaces the file the link names (the link stays), and now
    keeps that file's mode, not the link's."""
    (tmp_path / "demo.jsonl").write_bytes(DEMO.read_bytes())
    real = tmp_path / "real.html"
    real.write_text("old page\n", encoding="utf-8")
    real.chmod(0o600)
    (tmp_path / "link.html").symlink_to(real)
    result = run("render", "demo.jsonl", "-o", "link.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "link.html").is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert real.read_text("utf-8") == demo_page()
