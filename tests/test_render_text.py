"""The plain-text outline and the terminal rendering (spec W-4, W-6, P-8, X-1).

Golden files: ``tests/golden/*.txt`` hold the text rendering of every fixture and of the bundled
demo session (en and zh, default mode; the demo in all three modes). After an intended change,
regenerate them with

    TURNFOLD_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_render_text.py \
        -p no:cacheprovider

and review the diff of ``tests/golden/``. On a mismatch the test shows a short unified diff.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

import turnfold
from tests.test_render_html import rejected_reply
from turnfold.cli import expand_all
from turnfold.model import AssistantText, Thinking, ToolCall, ToolResult, Transcript, UserMessage
from turnfold.render.text import CLOSED, OPEN, html_to_text, render_terminal, render_text
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings

TESTS = Path(__file__).parent
GOLDEN = TESTS / "golden"
DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
FIXTURES = sorted((TESTS / "fixtures").glob("*.json*"))
SOURCES = [*FIXTURES, DEMO]
UPDATE = os.environ.get("TURNFOLD_UPDATE_GOLDEN") == "1"
MODES = ("flat", "command-first", "fully-folded")
CASES = [(path, locale, "fully-folded") for path in SOURCES for locale in ("en", "zh")] + [
    (DEMO, locale, mode) for mode in MODES[:2] for locale in ("en", "zh")
]
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def case_id(case: tuple[Path, str, str]) -> str:
    path, locale, mode = case
    return f"{path.stem}.{locale}.{mode}"


def load_relative(path: Path) -> turnfold.Transcript:
    """Load by a path relative to the repository, so warnings name the same file on every
    machine and checkout (the golden files must not depend on where the tests run)."""
    here = Path.cwd()
    os.chdir(TESTS.parent)
    try:
        return turnfold.load(os.path.relpath(path, TESTS.parent))
    finally:
        os.chdir(here)


def view_of(path: Path, locale: str = "en", mode: str = "fully-folded", **settings: Any) -> Any:
    return build_view_model(
        load_relative(path),
        DisplaySettings(transcript_display_mode=mode, locale=locale, **settings),
    )


def check_golden(name: str, actual: str) -> None:
    """Compare with ``tests/golden/name``; rewrite it instead when TURNFOLD_UPDATE_GOLDEN=1."""
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"no golden file {name}; run with TURNFOLD_UPDATE_GOLDEN=1 to create it"
    expected = path.read_bytes().decode("utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), f"golden/{name}", "rendered", lineterm=""
        )
        shown = "\n".join(list(diff)[:40])
        pytest.fail(f"{name} differs (TURNFOLD_UPDATE_GOLDEN=1 regenerates it):\n{shown}")


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_W4_text_rendering_matches_golden_file(case: tuple[Path, str, str]) -> None:
    path, locale, mode = case
    check_golden(f"{case_id(case)}.txt", render_text(view_of(path, locale, mode)) + "\n")


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_W4_text_is_plain_deterministic_and_fits_the_width(path: Path) -> None:
    for width in (40, 100):
        for view in (view_of(path), expand_all(view_of(path, locale="zh"))):
            text = render_text(view, width=width)
            assert text == render_text(view, width=width)
            assert not CONTROL.search(text), "no ANSI, no control or bidi characters"
            assert "<" not in text.replace("&lt;", "") or "<" in str(view)  # no markup added
            for line in text.split("\n"):
                assert cell_len(line) <= width, line
                assert line == line.rstrip()


def test_W4_text_does_not_depend_on_the_hash_seed() -> None:
    script = (
        "import sys, turnfold\n"
        "from turnfold.render.text import render_text\n"
        "from turnfold.render.viewmodel import build_view_model\n"
        "sys.stdout.write(render_text(build_view_model(turnfold.load(sys.argv[1]))))\n"
    )
    expected = render_text(view_of(DEMO))
    for seed in ("3", "777"):
        out = subprocess.run(
            [sys.executable, "-c", script, str(DEMO)],
            capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed}, check=True,
        ).stdout.decode("utf-8")  # fmt: skip
        assert out == expected


def test_P8_settled_turns_show_only_titles_and_answers() -> None:
    text = render_text(view_of(DEMO))
    lines = text.split("\n")
    assert lines[0].startswith("claude-sonnet-4-5 · ")  # U-3: the session header comes first
    assert lines[1].startswith(f"{CLOSED} Timeline ")  # U-4: under it, closed
    assert lines[5] == f"{CLOSED} Completed · 25s · 7 tools"
    assert "Thought, searched" not in text  # inside the closed process
    assert "src/server.ts:4" not in text
    assert "All 14 tests pass" in text  # the answer sits outside the fold


def test_P8_markers_follow_the_default_open_flags() -> None:
    view = view_of(DEMO, auto_collapse_settled_groups=False)
    view["nodes"][1]["process"]["open"] = True
    lines = render_text(view).split("\n")
    assert f"  {OPEN} Thought, searched and read files · 3 operations" in lines
    assert f"    {CLOSED} Thinking" in lines  # auto_collapse_thinking still closes it
    assert f"    {CLOSED} Searched parseConfig, read src/config.ts, tests/config.test.ts" in lines


def test_F12_expanded_outline_shows_folded_output_and_never_drops_the_rest() -> None:
    long_output = "\n".join(f"line {n}" for n in range(40))
    transcript = Transcript([
        UserMessage(text="go"),
        ToolCall(call_id="c1", name="Bash", description="make", status="success",
                 result=ToolResult(text=long_output)),
        AssistantText(text="done"),
    ])  # fmt: skip
    view = build_view_model(transcript)
    (tool,) = (n for n in iter_nodes(view) if n["kind"] == "tool")
    expanded = render_text(expand_all(view))
    assert "line 0" in expanded
    assert "line 39" not in expanded
    assert f"{CLOSED} Show {tool['result']['more_lines']} more lines" in expanded
    grep = render_text(expand_all(view_of(DEMO)))
    assert "src/server.ts:4" in grep
    assert "Arguments" in grep


def test_F13_terminal_names_are_bold_and_labels_dim() -> None:
    view = expand_all(view_of(DEMO))
    console = Console(record=True, force_terminal=True, width=90, color_system="standard",
                      file=io.StringIO())  # fmt: skip
    render_terminal(view, console)
    styled = console.export_text(styles=True, clear=False)
    assert "\x1b[1mGrep\x1b[0m" in styled
    assert "\x1b[2m● Read config parser and tests\x1b[0m" in styled
    plain = console.export_text(styles=False)
    assert [line.rstrip() for line in plain.rstrip("\n").split("\n")] == render_text(
        view, width=90
    ).split("\n")


def test_P9_hidden_thinking_shows_only_the_indicator() -> None:
    transcript = Transcript([UserMessage(text="go"), Thinking(text="secret plan", streaming=True)])
    text = render_text(build_view_model(transcript, DisplaySettings(show_thinking=False)))
    assert "Thinking…" in text
    assert "secret plan" not in text


def test_X1_hostile_text_cannot_reach_the_terminal() -> None:
    payload = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[31mred\x1b[0m \u202eevil\x00 <b>&amp;</b>"
    transcript = Transcript([
        UserMessage(text=payload, command=payload),
        Thinking(text=payload),
        ToolCall(call_id="c", name=payload, description=payload, args={"a": payload},
                 status="error", result=ToolResult(text=payload, kind="ansi")),
        AssistantText(text=payload),
    ])  # fmt: skip
    text = render_text(expand_all(build_view_model(transcript)))
    assert not CONTROL.search(text)
    assert "red" in text
    assert "<b>&amp;</b>" in text


def test_html_to_text_keeps_blocks_lists_and_preformatted_text() -> None:
    fragment = (
        '<div class="tf-md"><h2>Title</h2><p>one\n two  &lt;x&gt;</p><ul><li>a</li><li>b</li>'
        "</ul><pre>  indented\n    code</pre></div>"
    )
    assert html_to_text(fragment) == "Title\none two <x>\n• a\n• b\n  indented\n    code"


def test_L2_a_rejected_reply_is_labelled_and_dim_and_the_answer_is_not() -> None:
    view = expand_all(build_view_model(rejected_reply()))
    lines = render_text(view).split("\n")
    assert f"  {OPEN} Thinking [Rejected]" in lines
    at = lines.index("  [Rejected]")  # the label, then the text it marks
    assert lines[at + 1] == "  About 10."
    assert f"  {OPEN} Bash guess [Cancelled] [Rejected]" in lines
    assert lines[-1] == "About 12.57."
    assert sum("Rejected" in line for line in lines) == 3
    zh = render_text(expand_all(build_view_model(rejected_reply(), DisplaySettings(locale="zh"))))
    assert zh.count("[被拒绝]") == 3
    console = Console(record=True, force_terminal=True, width=90, color_system="standard",
                      file=io.StringIO())  # fmt: skip
    render_terminal(view, console)
    styled = console.export_text(styles=True, clear=False)
    assert "\x1b[2mAbout 10.\x1b[0m" in styled  # muted
    assert "\x1b[33m[Rejected]\x1b[0m" in styled
    assert "\x1b[2mAbout 12.57" not in styled


def test_X1_a_huge_answer_is_laid_out_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich wraps a line in about 0.1 ms: a transcript's 200 MB answer took minutes of the
    kernel's time in its text/plain output. A line that fits is laid out without it, and reads
    exactly as wrapped; a line that does not fit is still wrapped at the width."""
    from rich.text import Text

    lines = ["word " * 15 + "end", "naïve café", "x" * 250]
    answer = "\n\n".join(lines * 3)
    view = build_view_model(Transcript([UserMessage(text="go"), AssistantText(text=answer)]))
    wrapped: list[str] = []
    wrap = Text.wrap

    def counted(self: Text, *args: Any, **kwargs: Any) -> Any:
        wrapped.append(self.plain)
        return wrap(self, *args, **kwargs)

    monkeypatch.setattr(Text, "wrap", counted)
    out = render_text(view, width=100).splitlines()
    assert sorted(set(wrapped)) == ["naïve café", "x" * 250]  # only what may not fit as is
    start = out.index("word " * 15 + "end")
    assert out[start : start + 5] == [
        "word " * 15 + "end", "naïve café", "x" * 100, "x" * 100, "x" * 50,
    ]  # fmt: skip
    assert all(cell_len(line) <= 100 for line in out)
