"""``turnfold render`` and ``turnfold show``: one command to look at a transcript (spec W-6)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import expand_all, main, with_zone
from turnfold.render.html import CSP, render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

TESTS = Path(__file__).parent
DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
CLAUDE = TESTS / "fixtures" / "claude-code_v1.0.108_inline-sidechains.jsonl"
WITH_WARNINGS = TESTS / "fixtures" / "codex_rollout_schema-coverage.jsonl"


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal settings of whoever runs the tests do not reach the command: COLUMNS sets
    the width of plain text and NO_COLOR its colour."""
    for name in ("COLUMNS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


def run(
    *args: str, cwd: Path | None = None, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``python -m turnfold …`` in a fresh process, as a person would run it."""
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8", **env}
    return subprocess.run(
        [sys.executable, "-m", "turnfold", *args], input=stdin,
        capture_output=True, text=True, encoding="utf-8", cwd=cwd, env=environment, check=False,
    )  # fmt: skip


def test_W6_render_writes_a_standalone_page_next_to_the_file(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(CLAUDE, source)
    result = run("render", str(source))
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "session.html").read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert CSP in page
    assert page.count("<script") == 1  # its deep links (B-2)
    expected = render_html(build_view_model(turnfold.load(CLAUDE)), title="session.jsonl")
    assert page == expected
    assert "wrote" in result.stderr


def test_W6_render_to_stdout_with_dash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(DEMO), "-o", "-"]) == 0
    out = capsys.readouterr().out
    view = build_view_model(turnfold.load(DEMO))
    assert out == render_html(view, title="turnfold demo session")  # the file's own title


def test_W6_render_options_reach_the_view_model(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    args = ["render", str(DEMO), "-o", str(target), "--mode", "flat", "--no-thinking",
            "--locale", "zh", "--format", "turnfold", "--expand"]  # fmt: skip
    assert main(args) == 0
    settings = DisplaySettings(transcript_display_mode="flat", show_thinking=False, locale="zh")
    view = expand_all(build_view_model(turnfold.load(DEMO), settings))
    assert target.read_text("utf-8") == render_html(view, title="turnfold demo session")
    assert 'lang="zh"' in target.read_text("utf-8")


def test_W6_render_never_overwrites_an_html_named_transcript(tmp_path: Path) -> None:
    source = tmp_path / "odd.html"
    shutil.copy(DEMO, source)
    assert main(["render", str(source)]) == 0
    assert source.read_bytes() == DEMO.read_bytes()
    assert (tmp_path / "odd.html.html").exists()


def test_W6_show_prints_plain_text_when_not_a_terminal() -> None:
    result = run("show", str(DEMO))
    assert result.returncode == 0, result.stderr
    assert result.stdout == render_text(with_zone(build_view_model(turnfold.load(DEMO)))) + "\n"
    assert "\x1b" not in result.stdout


def test_W6_show_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(DEMO), "--mode", "command-first", "--locale", "zh", "--expand",
                 "--width", "60"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    settings = DisplaySettings(transcript_display_mode="command-first", locale="zh")
    view = with_zone(expand_all(build_view_model(turnfold.load(DEMO), settings)))
    assert out == render_text(view, width=60) + "\n"
    assert "▾ 已完成" in out


def test_W6_show_hides_thinking_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(DEMO), "--expand", "--no-thinking"]) == 0
    assert "Thinking" not in capsys.readouterr().out
    assert main(["show", str(DEMO), "--expand"]) == 0
    assert "Thinking" in capsys.readouterr().out


def test_L4_missing_file_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    result = run("render", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 2
    assert "nope.jsonl: no such file" in result.stderr
    assert "Traceback" not in result.stderr
    assert main(["show", str(tmp_path)]) == 2  # a directory is not a transcript either


def test_L4_bad_file_exits_2_with_the_loader_message(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("just some notes\nnot json at all\n", "utf-8")
    for command in ("render", "show"):
        result = run(command, str(bad))
        assert result.returncode == 2
        assert "notes.txt" in result.stderr
        assert "not a transcript" in result.stderr
        assert "formats tried" in result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "notes.html").exists()


def test_L4_a_file_of_many_runs_exits_2_and_render_names_the_site_that_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An eval log of many samples, or a dataset's JSON lines, is many runs, not one page: the
    command said so with a traceback (inspect's SampleSelectionError). It now exits 2 with the
    loader's words, and ``render`` names the site that writes a page for each run."""
    log = TESTS / "fixtures" / "harnesses" / "inspect" / "mockllm_two-epochs.eval"
    rows = tmp_path / "train.jsonl"
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    rows.write_text("".join(json.dumps({"messages": messages, "n": n}) + "\n" for n in range(3)))
    # The hint names the first run's key (a command that runs as written): an eval log's
    # first sample, a dataset's first row.
    for source, says, one in ((log, "holds 4 samples", "1/1"), (rows, "a file of runs", "0")):
        assert main(["show", str(source)]) == 2
        shown = capsys.readouterr().err
        assert says in shown
        assert "-o SITE/" not in shown
        assert f"to show one: turnfold show '{source}#{one}'" in shown  # not only Python's words
        assert main(["render", str(source)]) == 2
        rendered = capsys.readouterr().err
        assert says in rendered
        assert f"turnfold render {source} -o SITE/" in rendered
        assert f"turnfold render '{source}#{one}'" in rendered
        assert main(["render", str(source), "-o", str(tmp_path / source.stem) + "/"]) == 0
        assert (tmp_path / source.stem / "index.html").is_file()
    assert "Traceback" not in run("show", str(log)).stderr


def test_W6_file_hash_id_is_one_run_of_a_file_of_many(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``FILE#ID`` names one run as a scan keys it: an eval log's ``#sample/epoch``, a
    dataset's ``#n``; its page is written beside the file under a name of its own."""
    log = TESTS / "fixtures" / "harnesses" / "inspect" / "mockllm_two-epochs.eval"
    assert main(["show", f"{log}#1/2"]) == 0
    shown = capsys.readouterr().out
    expected = turnfold.load(log, sample=1, epoch=2)
    assert shown.rstrip("\n") == render_text(
        with_zone(build_view_model(expected, DisplaySettings())), width=100
    )
    rows = tmp_path / "train.jsonl"
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    rows.write_text("".join(json.dumps({"messages": messages, "n": n}) + "\n" for n in range(3)))
    assert main(["render", f"{rows}#2"]) == 0
    assert (tmp_path / "train-2.html").is_file()
    assert not (tmp_path / "train.html").exists()
    capsys.readouterr()
    assert main(["show", f"{rows}#7"]) == 2
    assert "holds 3 runs: no sample=7 (they are 0 to 2)" in capsys.readouterr().err
    assert main(["show", f"{tmp_path / 'gone.jsonl'}#1"]) == 2
    assert "gone.jsonl#1: no such file" in capsys.readouterr().err


def test_X2_a_file_with_nothing_to_show_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    # Issue 11: a file that maps to no entry is never an empty page that looks like success.
    empty = tmp_path / "snapshots.jsonl"
    snapshot = '{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}\n'
    empty.write_text(snapshot, "utf-8")
    for command in ("render", "show"):
        result = run(command, str(empty))
        assert result.returncode == 2
        assert "snapshots.jsonl: nothing to show" in result.stderr
    assert not (tmp_path / "snapshots.html").exists()


def test_L4_load_warnings_are_counted_on_stderr(tmp_path: Path) -> None:
    count = len(turnfold.load(WITH_WARNINGS).warnings)
    result = run("render", str(WITH_WARNINGS), "-o", str(tmp_path / "p.html"))
    assert result.returncode == 0
    assert f"{count} problems while loading" in result.stderr


def test_W6_usage_errors_and_help() -> None:
    assert run().returncode == 2  # a command is required
    assert run("render", str(DEMO), "--mode", "sideways").returncode == 2
    result = run("--help")
    assert result.returncode == 0
    assert "render" in result.stdout
    assert "show" in result.stdout
    render_help = run("render", "--help").stdout
    for option in ("-o", "--mode", "--no-thinking", "--locale", "--format", "--expand"):
        assert option in render_help


def test_W6_console_script_is_declared() -> None:
    pyproject = (TESTS.parent / "pyproject.toml").read_text("utf-8")
    assert 'turnfold = "turnfold.cli:run"' in pyproject


def test_W6_the_command_flushes_what_it_prints_before_its_quick_exit(tmp_path: Path) -> None:
    """run() ends the process without freeing what it built (Q-1): nothing printed is lost,
    the page is whole, and the status is main's."""
    page = tmp_path / "page.html"
    result = run("render", str(DEMO), "-o", str(page))
    assert result.returncode == 0
    assert "wrote" in result.stderr
    assert page.read_text("utf-8").rstrip().endswith("</html>")
    shown = run("show", str(DEMO), "--width", "80")
    assert shown.returncode == 0
    assert shown.stdout.strip()
    assert shown.stdout.endswith("\n")
    assert run("render", str(tmp_path / "missing.jsonl")).returncode != 0


def test_X2_full_output_embeds_every_output_whole(tmp_path: Path) -> None:
    lines = "\n".join(f"line {n}" for n in range(5000))
    record = {"turnfold": 1}
    entries = [
        {"kind": "user", "id": "u", "text": "go"},
        {"kind": "tool_call", "id": "t", "call_id": "c", "name": "Bash", "status": "success",
         "result": {"text": lines}},
        {"kind": "assistant", "id": "a", "text": "done"},
    ]  # fmt: skip
    source = tmp_path / "long.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in [record, *entries]) + "\n", "utf-8")
    assert main(["render", str(source), "-o", str(tmp_path / "capped.html")]) == 0
    assert main(["render", str(source), "-o", str(tmp_path / "full.html"), "--full-output"]) == 0
    capped = (tmp_path / "capped.html").read_text("utf-8")
    full = (tmp_path / "full.html").read_text("utf-8")
    assert "line 4999" in full
    assert "line 4999" not in capped
    assert "more lines not included in this page" in capped


# --- the command as a person uses it: a QA pass (help, output, bad input, terminals) ---------


def test_W6_help_describes_the_page_as_it_is() -> None:
    """The help said the page has "no script"; it has one of its own, for its deep links."""
    epilog = run("--help").stdout
    assert "no script" not in epilog
    assert "one small script" in epilog
    assert "Content-Security-Policy" in epilog
    assert "turnfold show -" in epilog


def test_W6_help_fits_a_terminal_of_80_columns() -> None:
    """The description and examples are raw text, which argparse does not wrap: they were
    written 93 columns wide and broke up on a terminal of 80."""
    for command in ([], ["render"], ["show"]):
        shown = run(*command, "--help", COLUMNS="80")
        assert shown.returncode == 0
        assert max(len(line) for line in shown.stdout.splitlines()) < 80


def test_W6_render_never_writes_its_page_over_the_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` naming the file being read replaced the transcript with its page."""
    source = tmp_path / "session.jsonl"
    shutil.copy(DEMO, source)
    for args in (
        ["render", str(source), "-o", str(tmp_path / "." / "session.jsonl")],
        ["render", "--compare", str(DEMO), str(source), "-o", str(source)],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2
        assert "is the transcript itself" in capsys.readouterr().err
        assert source.read_bytes() == DEMO.read_bytes()


class _Interrupted:
    """``write_page`` that writes half a page, then meets ``error`` (Ctrl-C, a full disk)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __call__(self, stream: object, *args: object, **kwargs: object) -> int:
        stream.write(b"<!DOCTYPE html><html><body>half a pa")  # type: ignore[attr-defined]
        raise self.error


@pytest.mark.parametrize(
    ("error", "status", "says"),
    [(KeyboardInterrupt(), 130, "turnfold: interrupted"),
     (OSError(28, "No space left on device"), 1, "No space left on device")],
)  # fmt: skip
def test_W6_render_replaces_a_page_only_with_a_whole_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    status: int,
    says: str,
) -> None:
    """The page was opened for writing over the last one: a render stopped half way (Ctrl-C,
    a full disk) left half a page and lost the whole one."""
    page = tmp_path / "page.html"
    assert main(["render", str(DEMO), "-o", str(page)]) == 0
    before = page.read_bytes()
    monkeypatch.setattr("turnfold.cli.write_page", _Interrupted(error))
    assert main(["render", str(DEMO), "-o", str(page)]) == status
    assert says in capsys.readouterr().err
    assert page.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]  # no partial file left


def test_W6_ctrl_c_ends_with_130_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("turnfold.cli.load", interrupted)
    assert main(["show", str(DEMO)]) == 130
    assert capsys.readouterr().err == "turnfold: interrupted\n"


def test_W6_a_folder_says_how_to_write_its_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``show FOLDER`` and ``render FOLDER -o -`` (a site cannot go to stdout) said "is a
    directory" and nothing of what reads one."""
    folder = tmp_path / "my runs"
    folder.mkdir()
    shutil.copy(DEMO, folder / "demo.jsonl")
    for args in (["show", str(folder)], ["render", str(folder), "-o", "-"]):
        assert main(args) == 2
        said = capsys.readouterr()
        assert said.out == ""
        assert f"turnfold render '{folder}' -o SITE/" in said.err


def test_W6_a_file_of_many_sessions_says_how_to_show_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Crush database of two sessions told the command's user to pass ``sample=``."""
    database = TESTS / "fixtures" / "crush" / "quay" / ".crush" / "crush.db"
    assert main(["show", str(database)]) == 2
    first = f"{database}#17c2d974-eab7-4a44-83d2-97c5186a5789"  # its first session's key
    assert f"to show one: turnfold show '{first}' (its first session" in capsys.readouterr().err
    assert main(["show", first]) == 0
    assert "Crush" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [["--expand"], ["--full-output"], ["--format", "inspect"], ["-o", "{tmp}/site/", "--expand"]],
)
def test_W6_a_site_refuses_the_options_it_would_ignore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """A site is drawn with the display settings alone: --expand, --full-output and --format
    were taken and silently dropped."""
    log = TESTS / "fixtures" / "harnesses" / "inspect" / "mockllm_two-epochs.eval"
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(log, folder / "a.eval")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    with pytest.raises(SystemExit) as exit_:
        main(["render", str(folder), *args])
    assert exit_.value.code == 2
    flag = next(a for a in args if a.startswith("--"))
    assert f"{flag} is for one transcript's page; a site does not take it" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "runs-site").exists()
    assert not (tmp_path / "site").exists()


def test_W6_compare_refuses_the_options_it_would_ignore(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = sorted((TESTS / "fixtures" / "compare").glob("*.eval"))
    with pytest.raises(SystemExit) as exit_:
        main(["render", "--compare", str(first), str(second), "--expand"])
    assert exit_.value.code == 2
    assert "--expand is for one transcript's page; --compare does not take it" in (
        capsys.readouterr().err
    )


def test_W6_one_run_of_a_file_of_many_is_no_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``render FILE#ID -o SITE/`` wrote the site of every run, the ``#ID`` dropped."""
    log = TESTS / "fixtures" / "harnesses" / "inspect" / "mockllm_two-epochs.eval"
    with pytest.raises(SystemExit) as exit_:
        main(["render", f"{log}#1/2", "-o", f"{tmp_path}/site/"])
    assert exit_.value.code == 2
    assert f"turnfold render {log} -o SITE/" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()


def test_W6_compare_of_one_transcript_with_many_runs_names_both(tmp_path: Path) -> None:
    first = sorted((TESTS / "fixtures" / "compare").glob("*.eval"))[0]
    result = run("render", "--compare", str(first), str(DEMO), "-o", str(tmp_path / "c.html"))
    assert result.returncode == 2
    assert f"cannot compare {DEMO} (one transcript) with {first} (many runs)" in result.stderr
    assert "Traceback" not in result.stderr


def test_L4_compare_counts_what_each_load_could_not_read(tmp_path: Path) -> None:
    """A single page said how many problems its load met; a comparison of the same file said
    nothing on stderr."""
    count = len(turnfold.load(WITH_WARNINGS).warnings)
    result = run("render", "--compare", str(WITH_WARNINGS), str(DEMO), "-o",
                 str(tmp_path / "c.html"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"{WITH_WARNINGS}: {count} problems while loading" in result.stderr


@pytest.mark.parametrize("width", ["0", "-3", "wide"])
def test_W6_width_is_a_positive_number_of_columns(
    capsys: pytest.CaptureFixture[str], width: str
) -> None:
    """``--width 0`` drew at 100 columns, ``--width -3`` at the renderer's smallest."""
    with pytest.raises(SystemExit) as exit_:
        main(["show", str(DEMO), "--width", width])
    assert exit_.value.code == 2
    assert "a positive number of columns" in capsys.readouterr().err


def test_W6_usage_errors_name_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """They were the top-level parser's: ``usage: turnfold [-h] COMMAND ...``."""
    for args in (["render"], ["render", str(DEMO), "--compare", str(DEMO), str(DEMO)]):
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: turnfold render ")
        assert "turnfold render: error: " in err


def test_W6_columns_sets_the_width_in_a_pipe() -> None:
    """``COLUMNS=60 turnfold show … | less`` drew 100 columns."""
    result = run("show", str(DEMO), "--expand", COLUMNS="60")
    assert result.returncode == 0, result.stderr
    view = with_zone(expand_all(build_view_model(turnfold.load(DEMO))))
    assert result.stdout == render_text(view, width=60) + "\n"


def _in_a_terminal(args: list[str], columns: int, **env: str) -> str:
    """What ``python -m turnfold …`` draws on a terminal of ``columns`` columns."""
    import pty
    import struct
    import termios
    from fcntl import ioctl

    leader, follower = pty.openpty()
    ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8", "TERM": "xterm-256color", **env}
    process = subprocess.Popen(
        [sys.executable, "-m", "turnfold", *args],
        stdin=follower, stdout=follower, stderr=subprocess.DEVNULL, env=environment,
    )  # fmt: skip
    os.close(follower)
    drawn = b""
    with contextlib.suppress(OSError):  # the terminal's end reads as EIO once the command ends
        while chunk := os.read(leader, 65536):
            drawn += chunk
    os.close(leader)
    assert process.wait() == 0
    return drawn.decode("utf-8").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_W6_no_color_draws_no_escape_codes_on_a_terminal() -> None:
    """Under NO_COLOR rich still drew bold and dim escapes; now the outline is plain text at
    the terminal's width."""
    coloured = _in_a_terminal(["show", str(DEMO), "--expand"], 80)
    assert "\x1b[" in coloured
    plain = _in_a_terminal(["show", str(DEMO), "--expand"], 80, NO_COLOR="1")
    assert "\x1b" not in plain
    view = with_zone(expand_all(build_view_model(turnfold.load(DEMO))))
    assert plain == render_text(view, width=80) + "\n"


def test_W6_show_and_render_read_standard_input(tmp_path: Path) -> None:
    """``-`` read a file named ``-``: "no such file"."""
    text = DEMO.read_text("utf-8")
    shown = run("show", "-", stdin=text)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == render_text(with_zone(build_view_model(turnfold.load(DEMO)))) + "\n"
    refused = run("render", "-", stdin=text)
    assert refused.returncode == 2
    assert "-o PAGE.html, or -o - for stdout" in refused.stderr
    page = tmp_path / "page.html"
    assert run("render", "-", "-o", str(page), stdin=text).returncode == 0
    view = build_view_model(turnfold.load(DEMO))
    assert page.read_text("utf-8") == render_html(view, title="turnfold demo session")
    bad = run("show", "-", stdin="not json\n")
    assert bad.returncode == 2
    assert "<stdin>, line 1: not a transcript" in bad.stderr


def test_W6_no_progress_bar_in_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long load drew its bar into stderr that was a file or a pipe: a line of carriage
    returns in a log."""
    from turnfold.formats import source as reading

    monkeypatch.setattr(reading, "PROGRESS_MIN_BYTES", 0)
    monkeypatch.setattr(reading, "PROGRESS_DELAY_S", 0.0)
    entries = [{"kind": "user", "id": f"u{n}", "text": "x" * 1000} for n in range(3000)]
    session = tmp_path / "long.jsonl"
    session.write_text("\n".join(json.dumps(r) for r in [{"turnfold": 1}, *entries]) + "\n")
    assert main(["render", str(session), "-o", str(tmp_path / "long.html")]) == 0
    err = capsys.readouterr().err
    assert "Loading" not in err
    assert "\r" not in err
    assert "wrote" in err
