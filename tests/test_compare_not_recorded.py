"""What one run of a comparison does not record, said so in every view (spec B-3, U-1).

* A pair whose one side records no tokens for its turn (Cursor's ``stream-json`` records no
  usage at all; a Gemini CLI turn the API refused has none) read ``— → 45.5k tokens``: a dash
  that reads as a figure. It says the tokens are not recorded on that side now, in the words
  of the turn headers, in the text, HTML and widget views alike, and in zh.
* A prompt no turn answered read ``Completed → —``, and a run that never answered read
  ``answer changed``: the pair says ``not answered`` and ``no answer in B``.
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.compare_widget import CompareWidget
from turnfold.model import AssistantText, ToolCall, ToolResult, Transcript, UserMessage
from turnfold.render.compare_html import render_compare_html
from turnfold.render.compare_nodes import CompareView
from turnfold.render.compare_text import render_compare_text
from turnfold.render.compare_view import build_compare_view, compare_runs
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parent / "fixtures"
#: Cursor's agent CLI: two shell calls and an answer; its stream records no usage.
CURSOR = (
    FIXTURES / "agents" / "cursor-stream-json"
    / "cursor-agent_2026-02_stream-json_parallel-shell-calls.jsonl"
)  # fmt: skip
#: A Claude Code session: one prompt, a sub-agent, 45.5k tokens recorded per response.
CLAUDE = FIXTURES / "claude-code" / "v2.1.332_real_subagent-hand-back.jsonl"
#: Gemini CLI: a prompt the API refused (no usage), and a prompt answered (30 tokens).
GEMINI = FIXTURES / "agents" / "gemini-stream-json"
REFUSED = GEMINI / "gemini-cli_v0.61.0_stream-json_api-error.jsonl"
ANSWERED = GEMINI / "gemini-cli_v0.61.0_stream-json_resumed.jsonl"
NAMES = ("cursor", "claude-code")


def view(a: Transcript, b: Transcript, locale: str = "en", names: tuple[str, str] = NAMES
         ) -> CompareView:  # fmt: skip
    snapshot = DisplaySettings(locale=locale).snapshot()
    return build_compare_view(compare_runs(a, b, snapshot), snapshot, names=names)


def part(compared: CompareView, name: str, pair: int = 0) -> str | None:
    found = [p["text"] for p in compared["pairs"][pair]["header"]["parts"] if p["name"] == name]
    return found[0] if found else None


def test_U1_B3_tokens_one_side_does_not_record_are_not_recorded_not_a_dash() -> None:
    compared = view(turnfold.load(CURSOR), turnfold.load(CLAUDE))
    said = "45.5k tokens in claude-code, not recorded in cursor"
    assert part(compared, "tokens") == said
    # Every view draws the same header: the text, the HTML.
    text = render_compare_text(compared)
    assert said in text
    assert "— →" not in text
    html = render_compare_html(compared)
    assert said in html
    assert "— →" not in html
    # The other way round, and a run whose turn the API refused before any usage.
    assert part(view(turnfold.load(CLAUDE), turnfold.load(CURSOR), names=NAMES[::-1]),
                "tokens") == said  # fmt: skip
    refused = view(turnfold.load(REFUSED), turnfold.load(ANSWERED), names=("A", "B"))
    assert part(refused, "tokens") == "30 tokens in B, not recorded in A"


def test_U1_B3_the_widget_says_so_too(widgets: list[CompareWidget]) -> None:
    widget = turnfold.compare(CURSOR, CLAUDE, names=NAMES)
    widgets.append(widget)
    [pair] = widget._compare["pairs"]
    assert "45.5k tokens in claude-code, not recorded in cursor" in pair["header"]["text"]
    [tokens] = [p for p in pair["header"]["parts"] if p["name"] == "tokens"]
    assert tokens["text"] == "45.5k tokens in claude-code, not recorded in cursor"
    data, _ = widget._repr_mimebundle_()
    assert "45.5k tokens in claude-code, not recorded in cursor" in data["text/plain"]
    assert "45.5k tokens in claude-code, not recorded in cursor" in data["text/html"]


def test_U1_B3_in_zh_the_words_of_the_turn_headers() -> None:
    compared = view(turnfold.load(CURSOR), turnfold.load(CLAUDE), locale="zh")
    assert part(compared, "tokens") == "claude-code 45.5k 个 token，cursor 未记录"
    assert "claude-code 45.5k 个 token，cursor 未记录" in render_compare_text(compared)


def test_B3_both_sides_recording_none_show_no_tokens_at_all() -> None:
    compared = view(turnfold.load(CURSOR), turnfold.load(CURSOR))
    assert part(compared, "tokens") is None


def answered(prompt: str = "read the README") -> list[object]:
    return [UserMessage(text=prompt),
            ToolCall(call_id="c1", name="Read", status="success", result=ToolResult(text="x")),
            AssistantText(text="It says hello.")]  # fmt: skip


def test_B3_a_prompt_no_turn_answered_says_not_answered() -> None:
    # B stopped at the prompt (the run was killed before its model replied).
    compared = view(Transcript(answered()), Transcript([UserMessage(text="read the README")]),
                    names=("A", "B"))  # fmt: skip
    header = compared["pairs"][0]["header"]
    assert header["text"] == "Turn 1 · Differs · Completed → not answered · Read 1 → 0 · " \
        "no answer in B"  # fmt: skip
    assert "—" not in render_compare_text(compared)
    zh = view(Transcript(answered()), Transcript([UserMessage(text="read the README")]),
              locale="zh", names=("A", "B"))  # fmt: skip
    assert zh["pairs"][0]["header"]["text"] == "第 1 轮 · 有差异 · 已完成 → 未回答 · " \
        "Read 1 → 0 · B 无回答"  # fmt: skip


def test_B3_a_run_that_never_answered_is_no_answer_not_another_answer() -> None:
    silent = Transcript(answered()[:2])  # the same call, and no answer after it
    compared = view(silent, Transcript(answered()), names=("A", "B"))
    assert compared["pairs"][0]["header"]["text"] == "Turn 1 · Differs · 1 tool · no answer in A"
    parts = compared["pairs"][0]["header"]["parts"]
    assert [p["name"] for p in parts if p["changed"]] == ["answer"]
