"""Two runs side by side (B-3) where one has no turn, or no prompt: what the alignment left.

* A run with no turns at all (a Gemini CLI session quit before its first prompt holds only its
  header, or only the context it opens with) showed its name over an empty line, and the
  summary read "0 turns aligned". Its head says "no turns" now, and so does the summary.
* A run made only of a notice was cut into one block, which was paired with the other run's
  first turn: "1 turn aligned · 1 differs · other prompt" of a run that has no turn. The block
  is aligned with nothing now: the notice shows on its side, a pair of its own, counted apart.
* A turn the transcript holds no prompt for (OpenCode's ``run --format json`` and Cline's
  ``--json`` print the run, not the prompt) was compared as an empty prompt: "other prompt"
  against a prompt recorded, "prompt not recorded in" only the other run when both record
  none, nothing said between two of them. It is a prompt not recorded, as a ``claude -p``
  stream's is.
* Two agents' runs were told apart by H-6's ``agent`` alone, which a Claude Code or Gemini CLI
  session file does not record: their tools were compared by name (``Agent 1 → 0,
  run_shell_command 0 → 2``). They are told apart by the agent their headers name.

The runs with no turn are the first lines of a real Gemini CLI 0.61 session, written to a
temporary file by each test: the session header the CLI writes when it starts, then the
context it opens with; both precede the first prompt in the real file.
"""

from __future__ import annotations

import re
from pathlib import Path

import turnfold
from turnfold.compare_widget import CompareWidget
from turnfold.comparison import two_agents
from turnfold.model import Transcript
from turnfold.render.compare_html import render_compare_html
from turnfold.render.compare_nodes import CompareView
from turnfold.render.compare_text import render_compare_text
from turnfold.render.compare_view import build_compare_view, compare_runs
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parent / "fixtures"
#: Gemini CLI 0.61: its session header, its opening context, then three prompts.
GEMINI = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
#: A Claude Code session file (no ``agent`` in its metadata): one prompt, an ``Agent`` call.
CLAUDE = FIXTURES / "claude-code" / "v2.1.332_real_subagent-hand-back.jsonl"
#: ``claude -p --output-format stream-json``: its prompt is not recorded.
CLAUDE_STREAM = (
    FIXTURES / "agents" / "claude-stream-json"
    / "claude-code_v2.1.332_stream-json_tokens-first.jsonl"
)  # fmt: skip
#: Two runs of ``opencode run --format json``: no prompt in either.
OPENCODE = FIXTURES / "opencode" / "work" / "stdout-0.jsonl"
OPENCODE_NEXT = FIXTURES / "opencode" / "work" / "stdout-1.jsonl"


def first_lines(tmp_path: Path, count: int, name: str) -> Transcript:
    """The Gemini CLI session as its file stood before the first prompt: ``count`` lines."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(GEMINI.read_text().splitlines(keepends=True)[:count]))
    return turnfold.load(path)


def no_messages(tmp_path: Path) -> Transcript:
    """The session header alone: a session that recorded nothing."""
    run = first_lines(tmp_path, 1, "empty")
    assert run.entries == []
    return run


def notice_only(tmp_path: Path) -> Transcript:
    """The header and the opening context: one notice, no prompt, no turn."""
    run = first_lines(tmp_path, 2, "quit")
    assert [type(e).__name__ for e in run.entries] == ["SystemNotice"]
    return run


def view(a: Transcript, b: Transcript, names: tuple[str, str], locale: str = "en") -> CompareView:
    snapshot = DisplaySettings(locale=locale).snapshot()
    return build_compare_view(compare_runs(a, b, snapshot), snapshot, names=names)


def side_html(compared: CompareView, side: str) -> str:
    html = render_compare_html(compared, standalone=False)
    found = re.search(rf'<div class="tf-cmp-side" data-side="{side}">.*?</div>\n</div>', html,
                      re.S)  # fmt: skip
    assert found is not None
    return found.group(0)


# --- a run with no turns ------------------------------------------------------------------------


def test_B3_a_run_of_nothing_says_no_turns_under_its_name() -> None:
    compared = view(Transcript([]), turnfold.load(GEMINI), ("empty", "gemini"))
    head = compared["sides"][0]["session"]
    assert head is not None  # was None: the name over an empty line
    assert head["text"] == "no turns"
    assert [part["name"] for part in head["parts"]] == ["turns"]
    assert compared["summary"] == "no turns in empty · 3 only in gemini"  # was "0 turns aligned…"
    text = render_compare_text(compared).split("\n")
    assert text[0] == "empty: no turns"  # was "empty"
    assert text[2] == "no turns in empty · 3 only in gemini"
    assert '<span class="tf-sp tf-sp-turns">no turns</span>' in side_html(compared, "a")


def test_B3_a_run_with_no_turns_says_so_where_its_header_counts_turns(tmp_path: Path) -> None:
    compared = view(no_messages(tmp_path), turnfold.load(GEMINI), ("empty", "gemini"))
    head = compared["sides"][0]["session"]
    assert head is not None
    # Was "Gemini CLI · <started>": nothing said of turns, where every other header counts them.
    assert [part["name"] for part in head["parts"]] == ["agent", "started", "turns"]
    assert head["text"].startswith("Gemini CLI · ")
    assert head["text"].endswith(" · no turns")
    assert compared["summary"] == "no turns in empty · 3 only in gemini"
    assert render_compare_text(compared).split("\n")[0].endswith(" · no turns")
    assert '<span class="tf-sp tf-sp-turns">no turns</span>' in side_html(compared, "a")
    # The run with turns counts them as its own header does; no "no turns" of its own.
    assert "no turns" not in side_html(compared, "b")


def test_B3_no_turns_in_zh(tmp_path: Path) -> None:
    compared = view(turnfold.load(GEMINI), no_messages(tmp_path), ("gemini", "empty"), "zh")
    assert compared["sides"][1]["session"] is not None
    assert compared["sides"][1]["session"]["text"].endswith(" · 没有轮次")
    assert compared["summary"] == "empty 中没有轮次 · 3 轮仅在 gemini 中"
    assert render_compare_text(compared).split("\n")[1].endswith(" · 没有轮次")
    nothing = view(turnfold.load(GEMINI), Transcript([]), ("gemini", "empty"), "zh")
    assert render_compare_text(nothing).split("\n")[1] == "empty: 没有轮次"


def test_B3_the_widget_sends_no_turns_too(tmp_path: Path, widgets: list[CompareWidget]) -> None:
    widget = turnfold.compare(no_messages(tmp_path), GEMINI, names=("empty", "gemini"))
    widgets.append(widget)
    assert widget._compare is not None
    assert widget._compare["sides"][0]["session"]["text"].endswith(" · no turns")
    assert widget._compare["summary"] == "no turns in empty · 3 only in gemini"
    nothing = turnfold.compare(Transcript([]), GEMINI, names=("empty", "gemini"))
    widgets.append(nothing)
    assert nothing._compare is not None
    assert nothing._compare["sides"][0]["session"]["text"] == "no turns"
    bundle = nothing._repr_mimebundle_()
    assert bundle is not None
    assert bundle[0]["text/plain"].startswith("empty: no turns\n")
    assert '<span class="tf-sp tf-sp-turns">no turns</span>' in bundle[0]["text/html"]


# --- a run made only of a notice ---------------------------------------------------------------


def test_B3_a_run_of_only_a_notice_is_not_paired_with_the_other_runs_first_turn(
    tmp_path: Path,
) -> None:
    comparison = compare_runs(notice_only(tmp_path), turnfold.load(GEMINI))
    # Was [(0, 0, "differs"), (None, 1, "only-b"), (None, 2, "only-b")].
    assert [(p.a, p.b, p.status) for p in comparison.pairs] == [
        (0, None, "notices-a"), (None, 0, "only-b"), (None, 1, "only-b"), (None, 2, "only-b"),
    ]  # fmt: skip
    # The first place to read is the other run's first turn: a notice has no process to open.
    assert comparison.first_difference == 1


def test_B3_the_notice_shows_on_its_side_and_is_counted_apart(tmp_path: Path) -> None:
    compared = view(notice_only(tmp_path), turnfold.load(GEMINI), ("quit", "gemini"))
    assert compared["summary"] == "no turns in quit · 1 notice in quit · 3 only in gemini"
    notice, *turns = compared["pairs"]
    assert notice["header"]["text"] == "1 notice · Only in quit · no turns in quit"
    assert notice["header"]["status"] == "notices-a"
    assert notice["a"] is not None
    assert [node["kind"] for node in notice["a"]] == ["system"]
    assert notice["b"] is None
    assert [pair["header"]["text"].split(" · ")[:2] for pair in turns] == [
        ["Turn 1", "Only in gemini"], ["Turn 2", "Only in gemini"], ["Turn 3", "Only in gemini"],
    ]  # fmt: skip
    assert compared["first"] == turns[0]["key"]
    head = compared["sides"][0]["session"]
    assert head is not None
    assert head["text"].endswith(" · no turns")  # after when it started

    text = render_compare_text(compared)
    assert "other prompt" not in text
    assert "turns aligned" not in text
    section = text.split("\n\n")[1].split("\n")
    assert section[:2] == ["1 notice · Only in quit · no turns in quit", "  quit"]
    assert "session_context" in section[2]
    assert section[-2:] == ["  gemini", "    (No counterpart in gemini)"]

    html = render_compare_html(compared, standalone=False)
    found = re.search(r'<section class="tf-pair"[^>]*data-status="notices-a">.*?</section>', html,
                      re.S)  # fmt: skip
    assert found is not None
    assert '<span class="tf-pair-label">1 notice</span>' in found.group(0)
    assert "session_context" in found.group(0)
    assert '<div class="tf-gap">No counterpart in gemini</div>' in found.group(0)


def test_B3_a_notice_only_run_on_the_right_and_in_zh(tmp_path: Path) -> None:
    compared = view(turnfold.load(GEMINI), notice_only(tmp_path), ("gemini", "quit"), "zh")
    assert compared["summary"] == "quit 中没有轮次 · quit 中有 1 条通知 · 3 轮仅在 gemini 中"
    notice = compared["pairs"][0]
    assert notice["header"]["status"] == "notices-b"
    assert notice["header"]["text"] == "1 条通知 · 仅在 quit 中 · quit 中没有轮次"
    assert notice["a"] is None
    assert notice["b"] is not None


def test_B3_two_runs_with_no_turns(tmp_path: Path) -> None:
    compared = view(notice_only(tmp_path), no_messages(tmp_path), ("quit", "empty"))
    assert compared["summary"] == "no turns in quit · 1 notice in quit · no turns in empty"
    assert [pair["header"]["status"] for pair in compared["pairs"]] == ["notices-a"]
    assert compared["first"] is None


def test_B3_the_widget_draws_the_notice_as_python_wrote_it(
    tmp_path: Path, widgets: list[CompareWidget]
) -> None:
    widget = turnfold.compare(notice_only(tmp_path), GEMINI, names=("quit", "gemini"))
    widgets.append(widget)
    assert widget._compare is not None
    pairs = widget._compare["pairs"]
    assert pairs[0]["header"]["text"] == "1 notice · Only in quit · no turns in quit"
    assert pairs[0]["b"] is None
    assert [n["kind"] for n in pairs[0]["a"]] == ["system"]
    assert widget._compare["summary"] == "no turns in quit · 1 notice in quit · 3 only in gemini"


# --- a turn the transcript holds no prompt for ---------------------------------------------------


def prompt_part(compared: CompareView) -> str | None:
    found = [p for p in compared["pairs"][0]["header"]["parts"] if p["name"] == "prompt"]
    assert all(not p["changed"] for p in found)  # a prompt not recorded is no difference
    return found[0]["text"] if found else None


def test_B3_a_turn_with_no_prompt_is_a_prompt_not_recorded_not_another() -> None:
    compared = view(turnfold.load(OPENCODE), turnfold.load(CLAUDE), ("opencode", "claude"))
    assert prompt_part(compared) == "prompt not recorded in opencode"  # was "other prompt"
    [pair] = compare_runs(turnfold.load(OPENCODE), turnfold.load(CLAUDE)).pairs
    assert "prompt" not in pair.differences


def test_B3_two_runs_that_hold_no_prompt_say_neither_records_it() -> None:
    both = view(turnfold.load(OPENCODE), turnfold.load(CLAUDE_STREAM), ("opencode", "claude"))
    assert prompt_part(both) == "prompts not recorded"  # was "prompt not recorded in claude"
    runs = view(turnfold.load(OPENCODE), turnfold.load(OPENCODE_NEXT), ("first", "next"))
    assert prompt_part(runs) == "prompts not recorded"  # was nothing: two "empty" prompts
    assert runs["summary"] == "1 turn aligned · 1 differs"


# --- two agents, named by their headers ---------------------------------------------------------


def test_B3_two_agents_session_files_compare_tools_by_category() -> None:
    claude, gemini = turnfold.load(CLAUDE), turnfold.load(GEMINI)
    assert "agent" not in claude.metadata
    assert "agent" not in gemini.metadata
    assert two_agents(claude, gemini)
    compared = view(claude, gemini, ("claude", "gemini"))
    tools = [p["text"] for p in compared["pairs"][0]["header"]["parts"] if p["name"] == "tools"]
    # Was "Agent 1 → 0, run_shell_command 0 → 2".
    assert tools == ["agent 1 → 0 (Agent), command 0 → 2 (run_shell_command)"]


def test_B3_one_agents_two_formats_are_one_agent() -> None:
    # A Claude Code session file and a claude -p stream: the same agent's tools, by name.
    assert not two_agents(turnfold.load(CLAUDE), turnfold.load(CLAUDE_STREAM))
