"""A harness's own side requests, said apart and priced by their model (spec U-1, U-2, U-3).

Claude Code counts in its ``cost-state``'s ``modelUsage`` requests it made of its own (a title,
a command's check, made with its small fast model) that no response records
(:func:`turnfold.formats.claude_code.uncounted_subagent_usage`). They are in the session's
total, so the header says that part apart, as it does the sub-agents'; the reader keeps them
per model (the ``modelUsage`` key), so an estimate prices each by its own model.

The Claude Code run is the real one of tests/test_claude_background_leftovers.py (Claude Code
2.1.337, its session file alone: the background agent's own file is not beside it), with a
second model in its ``modelUsage`` as the CLI writes a side request's (line 42). The other
transcripts are built here, as a reader or an older turnfold dump leaves them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.claude_background_runs import agent_call, read_events, write_events
from turnfold.cost import estimate
from turnfold.model import AssistantText, Transcript, Usage, UserMessage
from turnfold.session import session_facts
from turnfold.widget import TranscriptWidget

FIXTURES = Path(__file__).parent / "fixtures"
ALONE = FIXTURES / "claude-code" / "v2.1.337_real_background-agent-report.jsonl"
#: A side request's counts as ``modelUsage`` writes them, and the same in turnfold's names.
HAIKU = {"inputTokens": 300, "outputTokens": 12, "cacheReadInputTokens": 0,
         "cacheCreationInputTokens": 0, "cacheCreationEphemeral1hInputTokens": 0}  # fmt: skip
HAIKU_COUNTED = {"input_tokens": 300, "output_tokens": 12, "cache_read_tokens": 0,
                 "cache_write_tokens": 0, "cache_write_1h_tokens": 0}  # fmt: skip
DAY = "2026-12-06T10:00:00Z"


def _run_with_side_requests(tmp_path: Path, side: dict[str, dict[str, int]]) -> Transcript:
    events = read_events(ALONE)
    (state,) = [e for e in events if e.get("type") == "cost-state"]
    state["modelUsage"].update(side)
    transcript = turnfold.load(write_events(events, tmp_path / "session.jsonl"))
    assert transcript.warnings == []
    return transcript


def _tokens_part(widget: TranscriptWidget) -> dict[str, Any]:
    session = widget.view["session"]
    assert session is not None
    (part,) = [p for p in session["parts"] if p["name"] == "tokens"]
    return dict(part)


def _answered(metadata: dict[str, Any]) -> Transcript:
    """One prompt and one answer of ``claude-sonnet-4-5`` (100 in, 10 out), on a day the
    price table knows, with ``metadata``."""
    answer = AssistantText(id="a", text="Done.", model="claude-sonnet-4-5", timestamp=DAY,
                           usage=Usage(input_tokens=100, output_tokens=10))  # fmt: skip
    prompt = UserMessage(id="u", text="Do it.", timestamp=DAY)
    return Transcript([prompt, answer], metadata={"source_format": "claude-code", **metadata})


# --- the reader keeps the part per model ------------------------------------------------------


def test_U2_the_reader_keeps_each_side_request_model_s_counts(tmp_path: Path) -> None:
    """Two models of ``modelUsage`` that neither the lead's responses nor the agent
    (``resolvedModel`` ``claude-opus-5-5``) used: each its own counts, under its name."""
    other = {**HAIKU, "inputTokens": 40, "outputTokens": 3}
    transcript = _run_with_side_requests(
        tmp_path, {"claude-haiku-4-5": HAIKU, "claude-3-5-haiku-20241022": other}
    )
    assert transcript.metadata["side_request_usage"] == {
        "claude-haiku-4-5": HAIKU_COUNTED,
        "claude-3-5-haiku-20241022": {**HAIKU_COUNTED, "input_tokens": 40, "output_tokens": 3},
    }
    facts = session_facts(transcript)
    side = facts.side_request_tokens
    assert (side["input_tokens"], side["output_tokens"]) == (340, 15)
    # The agent keeps the rest of what modelUsage counts beyond the responses (U-1).
    agent = agent_call(transcript).subagent
    assert agent is not None
    assert agent.usage is not None
    assert (agent.usage.input_tokens, agent.usage.output_tokens) == (20, 10)
    assert (facts.tokens["input_tokens"], facts.tokens["output_tokens"]) == (390, 40)


# --- the header says the part -----------------------------------------------------------------


def test_U3_the_header_says_the_side_requests_part_in_widget_text_and_html(
    tmp_path: Path,
) -> None:
    """30 + 15 of the lead's, 20 + 10 of the agent's, 300 + 12 of the side requests: the
    total, 387, is said to hold both parts, each in the tooltip."""
    transcript = _run_with_side_requests(tmp_path, {"claude-haiku-4-5": HAIKU})
    english = TranscriptWidget(transcript, locale="en")
    part = _tokens_part(english)
    assert part["text"] == "387 tokens incl. sub-agents and side requests"
    assert part["title"] is not None
    assert part["title"].endswith(
        "; 30 of them spent by sub-agents"
        "; 312 of them spent by the agent's own side requests (a title, a command's check),"
        " which no response records"
    )
    bundle = english._repr_mimebundle_()
    assert bundle is not None
    shown = bundle[0]
    assert "387 tokens incl. sub-agents and side requests" in shown["text/plain"]
    assert "312 of them spent by the agent&#x27;s own side requests" in shown["text/html"]
    assert "387 tokens incl. sub-agents and side requests</span>" in shown["text/html"]
    chinese = _tokens_part(TranscriptWidget(transcript, locale="zh"))
    assert chinese["text"] == "387 个 token（含子代理和辅助请求）"
    assert chinese["title"] is not None
    assert "其中子代理 30" in chinese["title"]
    assert "其中代理自身的辅助请求 312" in chinese["title"]


def test_U3_side_requests_without_sub_agents_are_said_alone() -> None:
    transcript = _answered({"side_request_usage": {"claude-haiku-4-5": HAIKU_COUNTED}})
    part = _tokens_part(TranscriptWidget(transcript, locale="en"))
    assert part["text"] == "422 tokens incl. side requests"
    assert part["title"] is not None
    assert "sub-agents" not in part["title"]
    assert part["title"].endswith(
        "; 312 of them spent by the agent's own side requests (a title, a command's check),"
        " which no response records"
    )
    chinese = _tokens_part(TranscriptWidget(transcript, locale="zh"))
    assert chinese["text"] == "422 个 token（含辅助请求）"


def test_U3_a_session_without_side_requests_reads_as_before() -> None:
    part = _tokens_part(TranscriptWidget(_answered({}), locale="en"))
    assert part["text"] == "110 tokens"
    assert part["title"] is not None
    assert "side requests" not in part["title"]


# --- priced by their model --------------------------------------------------------------------


def test_U2_side_requests_are_priced_by_their_own_model() -> None:
    """No recorded cost: the estimate is the answer's at ``claude-sonnet-4-5``'s prices and the
    side requests' at ``claude-haiku-4-5``'s, not no cost."""
    transcript = _answered({"side_request_usage": {"claude-haiku-4-5": HAIKU_COUNTED}})
    facts = session_facts(transcript)
    assert facts.cost is not None
    assert not facts.cost.recorded
    when = datetime(2026, 12, 6, 10, tzinfo=timezone.utc)
    answer = estimate([("claude-sonnet-4-5", {"input_tokens": 100, "output_tokens": 10})],
                      provider="anthropic", when=when)  # fmt: skip
    side = estimate([("claude-haiku-4-5", HAIKU_COUNTED)], provider="anthropic", when=when)
    assert answer is not None
    assert side is not None
    assert side.usd > 0
    assert facts.cost.usd == pytest.approx(answer.usd + side.usd, rel=1e-12)
    assert facts.cost.priced_on == when.date()
    # The corpus row's cost is the header's (C-2).
    assert turnfold.scan([transcript], cache=False).to_pandas()["cost_usd"][0] == facts.cost.usd


def test_U2_a_side_request_model_the_price_table_does_not_know_leaves_no_cost() -> None:
    transcript = _answered({"side_request_usage": {"tf-unknown-model-9": HAIKU_COUNTED}})
    facts = session_facts(transcript)
    assert facts.cost is None
    assert facts.side_request_tokens["input_tokens"] == 300


def test_U2_an_older_dump_s_side_requests_of_no_model_are_read_and_left_unpriced(
    tmp_path: Path,
) -> None:
    """A dump an older turnfold wrote keeps one flat count of the side requests, under no
    model: still read, still said apart, but no estimate (which model spent it is unknown)."""
    flat = {"input_tokens": 300, "output_tokens": 12}
    path = tmp_path / "old.jsonl"
    path.write_text(_answered({"side_request_usage": flat}).dump(), encoding="utf-8")
    transcript = turnfold.load(path)
    assert transcript.metadata["side_request_usage"] == flat
    facts = session_facts(transcript)
    assert facts.side_request_tokens == flat
    assert (facts.tokens["input_tokens"], facts.tokens["output_tokens"]) == (400, 22)
    assert facts.cost is None
    part = _tokens_part(TranscriptWidget(transcript, locale="en"))
    assert part["text"] == "422 tokens incl. side requests"
