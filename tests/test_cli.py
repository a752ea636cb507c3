"""``turnfold render`` and ``turnfold show``: one command to look at a transcript (spec W-6)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import expand_all, main
from turnfold.render.html import CSP, render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

TESTS = Path(__file__).parent
DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
CLAUDE = TESTS / "fixtures" / "claude-code_v1.0.108_inline-sidechains.jsonl"
WITH_WARNINGS = TESTS / "fixtures" / "codex_rollout_schema-coverage.jsonl"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m turnfold …`` in a fresh process, as a person would run it."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "turnfold", *args],
        capture_output=True, text=True, encoding="utf-8", cwd=cwd, env=env, check=False,
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
    assert result.stdout == render_text(build_view_model(turnfold.load(DEMO))) + "\n"
    assert "\x1b" not in result.stdout


def test_W6_show_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(DEMO), "--mode", "command-first", "--locale", "zh", "--expand",
                 "--width", "60"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    settings = DisplaySettings(transcript_display_mode="command-first", locale="zh")
    view = expand_all(build_view_model(turnfold.load(DEMO), settings))
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
    for source, says in ((log, "holds 4 samples"), (rows, "a file of runs")):
        assert main(["show", str(source)]) == 2
        shown = capsys.readouterr().err
        assert says in shown
        assert "-o SITE/" not in shown
        assert main(["render", str(source)]) == 2
        rendered = capsys.readouterr().err
        assert says in rendered
        assert f"turnfold render {source} -o SITE/" in rendered
        assert f"turnfold render '{source}#ID'" in rendered
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
        build_view_model(expected, DisplaySettings()), width=100
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
