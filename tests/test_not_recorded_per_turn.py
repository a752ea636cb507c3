"""Figures a source does not record per turn are not shown as if it did (spec U-1, U-3, B-3).

The files are the real ``claude -p --output-format stream-json`` and ``codex exec --json``
stdouts of ``tests/fixtures/agents`` (their READMEs say how they were made). Claude Code's
stream writes each response's input tokens but not its output tokens (a placeholder, not a
count): those are only in the ``result``, for the whole run. Codex's stream writes no response's
usage at all, only the thread's in ``turn.completed``, and no time anywhere. What was wrong:

* a turn's header (``show_turn_usage``) showed the sum of what its responses record, a part of
  its tokens (and a cost of that part) as if it were the whole, in every renderer and in the
  corpus's ``turns()`` rows, where a comparison already said "tokens not recorded per turn";
* a comparison's pair showed ``292ms → —`` where one side's turns record no time.
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.model import AssistantText, SubAgent, ToolCall, Transcript, Usage, UserMessage
from turnfold.render.compare_view import build_compare_view, compare_runs
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings
from turnfold.widget import TranscriptWidget

AGENTS = Path(__file__).parent / "fixtures" / "agents"
CLAUDE_STREAM = AGENTS / "claude-stream-json"
#: Two prompts on Claude Code's stdin: two turns, each response writing 1 output token.
CLAUDE_TWO = CLAUDE_STREAM / "claude-code_v2.1.332_stream-json_tokens-two-prompts.jsonl"
#: A run with an ``Agent`` call whose sub-agent's responses lack their output tokens too.
CLAUDE_SUBAGENT = CLAUDE_STREAM / "claude-code_v2.1.332_stream-json_tokens-first.jsonl"
CODEX = AGENTS / "codex-exec-json" / "codex_v0.171.0_exec-json_tokens-first.jsonl"
#: Gemini CLI's stream records each response's usage: its turns' own tokens.
GEMINI = AGENTS / "gemini-stream-json" / "gemini-cli_v0.61.0_stream-json_resumed.jsonl"

USAGE = DisplaySettings(show_turn_usage=True, full_detail=True)
NOT_PER_TURN = "tokens not recorded per turn"


def turn_headers(view: dict[str, object]) -> list[str]:
    """Every turn's header line, a sub-agent's turns' included, in reading order."""
    return [node["header"]["text"] for node in iter_nodes(view) if node["kind"] == "turn"]


# --- a turn's header ------------------------------------------------------------------------


def test_U3_claude_stream_turn_headers_say_tokens_not_recorded_per_turn() -> None:
    # Was "9.3k tokens · ≈ $0.03" and "21.3k tokens · ≈ $0.07": input only, and priced so,
    # while the session's 30.7k tokens hold the 120 output tokens of the results.
    view = build_view_model(turnfold.load(CLAUDE_TWO), USAGE)
    assert turn_headers(view) == [
        f"Completed · 108ms · 1 tool · {NOT_PER_TURN}",
        f"Completed · 39ms · 1 tool · {NOT_PER_TURN}",
    ]
    assert view["session"] is not None
    assert "30.7k tokens" in view["session"]["text"]  # the session's total is still shown


def test_U3_codex_exec_turn_header_says_so_rather_than_nothing() -> None:
    # No response has usage: the header said nothing, as of a turn that spent no tokens.
    view = build_view_model(turnfold.load(CODEX), USAGE)
    [header] = turn_headers(view)
    assert header == f"Completed · 3 tools · {NOT_PER_TURN}"
    assert view["session"] is not None
    assert "26.8k tokens in the session so far" in view["session"]["text"]


def test_U3_a_sub_agent_of_such_a_source_does_not_record_them_per_turn_either() -> None:
    # The sub-agent's transcript records no total of its own to tell, but its responses lack
    # their output tokens as its parent's do: its turn showed "9.2k tokens" (input only).
    view = build_view_model(turnfold.load(CLAUDE_SUBAGENT), USAGE)
    assert turn_headers(view) == [
        f"Completed · 292ms · 2 tools · {NOT_PER_TURN}",
        f"Completed · 43ms · 1 tool · {NOT_PER_TURN}",
    ]


def test_U3_a_source_that_records_tokens_per_response_keeps_its_turns_figures() -> None:
    view = build_view_model(turnfold.load(GEMINI), USAGE)
    # Its fake model has no price, and the header says so as the session's does (U-2).
    assert turn_headers(view) == [
        "Completed · 181ms · 1 tool · 30 tokens · no cost: no price for fake-model"
    ]


def test_U3_text_html_and_widget_all_say_it() -> None:
    transcript = turnfold.load(CLAUDE_TWO)
    view = build_view_model(transcript, USAGE)
    text = render_text(view)
    assert text.count(NOT_PER_TURN) == 2
    assert "9.3k" not in text
    assert "21.3k" not in text
    html = render_html(view, standalone=False)
    assert html.count(f'<span class="tf-fixed">{NOT_PER_TURN}</span>') == 2
    widget = TranscriptWidget(transcript, show_turn_usage=True)
    widget.flush()
    headers = [node["header"] for node in widget.view["nodes"] if node["kind"] == "turn"]
    assert [header.get("usage") for header in headers] == [NOT_PER_TURN, NOT_PER_TURN]
    zh = build_view_model(transcript, DisplaySettings(show_turn_usage=True, locale="zh"))
    assert [node["header"].get("usage") for node in zh["nodes"] if node["kind"] == "turn"] == [
        "未按轮记录 token",
        "未按轮记录 token",
    ]


def test_U3_a_live_view_redraws_its_turns_when_a_session_total_shows_them_partial() -> None:
    # A claude -p run followed live: its turns are drawn before the result that holds the
    # output tokens arrives; once it does, the turns built before it say so too.
    transcript = Transcript()
    widget = TranscriptWidget(transcript, show_turn_usage=True)
    for n, prompt in enumerate(("one", "two")):
        transcript.append(UserMessage(text=prompt))
        usage = Usage(input_tokens=100 * (n + 1), output_tokens=1, response_id=f"msg_{n}")
        transcript.append(AssistantText(text="done", usage=usage))
        widget.flush()

    def shown() -> list[str | None]:
        return [n["header"].get("usage") for n in widget.view["nodes"] if n["kind"] == "turn"]

    unnamed = "no cost: model not recorded"  # the responses name no model (U-2)
    assert shown() == [f"101 tokens · {unnamed}", f"201 tokens · {unnamed}"]
    transcript.metadata["usage"] = {"input_tokens": 300, "output_tokens": 40,
                                    "reasoning_tokens": 12}  # fmt: skip
    widget.flush()
    assert shown() == [NOT_PER_TURN, NOT_PER_TURN]


def test_U3_a_live_sub_agents_turns_are_redrawn_too() -> None:
    # Its parent's result arrives after the sub-agent's turns were drawn, which the sub-agent's
    # view had kept: "51 tokens", its input and the placeholder output count.
    child = Transcript(
        [
            UserMessage(text="look"),
            AssistantText(
                text="seen", usage=Usage(input_tokens=50, output_tokens=1, response_id="msg_sub")
            ),
        ]
    )
    transcript = Transcript()
    widget = TranscriptWidget(transcript, show_turn_usage=True)
    transcript.append(UserMessage(text="delegate"))
    transcript.append(
        ToolCall(
            call_id="c1",
            name="Agent",
            status="success",
            subagent=SubAgent(name="looker", transcript=child),
        )
    )
    transcript.append(AssistantText(text="done", usage=Usage(
        input_tokens=100, output_tokens=1, response_id="msg_top")))  # fmt: skip
    widget.flush()

    def shown() -> list[str | None]:
        return [n["header"].get("usage") for n in iter_nodes(widget.view) if n["kind"] == "turn"]

    unnamed = "no cost: model not recorded"  # the responses name no model (U-2)
    # The turn counts its sub-agent's (U-1).
    assert shown() == [f"152 tokens · {unnamed}", f"51 tokens · {unnamed}"]
    transcript.metadata["usage"] = {"input_tokens": 100, "output_tokens": 30,
                                    "reasoning_tokens": 4}  # fmt: skip
    widget.flush()
    assert shown() == [NOT_PER_TURN, NOT_PER_TURN]


def test_C3_the_corpus_turn_rows_record_no_partial_tokens_either(tmp_path: Path) -> None:
    for path in (CLAUDE_TWO, CODEX):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    rows = corpus.turns().to_pylist()
    assert len(rows) == 3
    for row in rows:
        assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (None, None, None)
    # The session's row keeps what the source records for the session.
    by_name = {Path(row["key"]).name: row for row in corpus}
    assert by_name[CLAUDE_TWO.name]["output_tokens"] == 120


# --- a comparison's pair -----------------------------------------------------------------------


def pair_parts(a: Path, b: Path, locale: str = "en") -> dict[str, str]:
    run_a, run_b = turnfold.load(a), turnfold.load(b)
    names = [str(run.metadata.get("agent")) for run in (run_a, run_b)]
    snapshot = DisplaySettings(locale=locale).snapshot()
    view = build_compare_view(compare_runs(run_a, run_b, snapshot), snapshot, names=names)
    [pair] = view["pairs"]
    return {part["name"]: part["text"] for part in pair["header"]["parts"]}


def test_B3_a_pair_says_which_side_records_no_time_for_its_turn() -> None:
    # Codex's events carry no time: the pair showed "292ms → —".
    parts = pair_parts(CLAUDE_SUBAGENT, CODEX)
    assert parts["duration"] == "292ms in claude-code, time not recorded in codex"
    assert parts["tokens"] == NOT_PER_TURN
    assert pair_parts(CODEX, CLAUDE_SUBAGENT)["duration"] == parts["duration"]
    zh = pair_parts(GEMINI, CODEX, "zh")["duration"]
    assert zh == "gemini-cli 用时 181ms，codex 未记录用时"


def test_B3_a_pair_of_two_timed_sides_or_none_is_as_before() -> None:
    assert pair_parts(CLAUDE_SUBAGENT, GEMINI)["duration"] == "292ms → 181ms"
    codex_resumed = AGENTS / "codex-exec-json" / "codex_v0.171.0_exec-json_tokens-resumed.jsonl"
    assert "duration" not in pair_parts(CODEX, codex_resumed)  # neither records time
