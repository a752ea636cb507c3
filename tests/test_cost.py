"""Cost, estimated honestly (spec U-2): a kept price table, the session's date, no guesses."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from turnfold.cost import estimate, session_cost
from turnfold.model import AssistantText, Transcript, Usage
from turnfold.samples import claude_code_session
from turnfold.usage import transcript_tokens

WHEN = datetime(2025, 9, 7, tzinfo=timezone.utc)


def test_U2_the_bundled_session_is_priced_by_hand_at_claude_sonnet_4_rates() -> None:
    transcript = claude_code_session()
    cost = session_cost(transcript, WHEN)
    assert cost is not None
    assert not cost.recorded
    assert "genai-prices" in cost.source
    assert "2025-09-07" in cost.source
    # By hand, Claude Sonnet 4's published rates per million tokens: $3 input, $15 output,
    # $0.30 cache read, $3.75 cache write; cached input is priced apart from fresh input.
    tokens = transcript_tokens(transcript).combined
    fresh = tokens["input_tokens"] - tokens["cache_read_tokens"] - tokens["cache_write_tokens"]
    by_hand = (fresh * 3 + tokens["output_tokens"] * 15 + tokens["cache_read_tokens"] * 0.3
               + tokens["cache_write_tokens"] * 3.75) / 1_000_000  # fmt: skip
    assert cost.usd == pytest.approx(by_hand)


def test_U2_a_model_the_table_does_not_know_gets_no_cost() -> None:
    tokens = {"input_tokens": 1000, "output_tokens": 10}
    assert estimate({"mockllm/model": tokens}, when=WHEN) is None
    # One unknown model among known ones: the sum would leave it out, so there is none.
    assert estimate({"gpt-4o": tokens, "mockllm/model": tokens}, when=WHEN) is None
    assert estimate({None: tokens}, when=WHEN) is None  # no model named
    assert estimate({"gpt-4o": tokens}, when=WHEN) is not None


def test_U2_a_cost_the_source_recorded_wins_and_says_so() -> None:
    transcript = Transcript(
        [AssistantText(text="hi", model="gpt-4o", usage=Usage(input_tokens=10, output_tokens=2))],
        metadata={"cost_usd": 0.42},
    )
    cost = session_cost(transcript)
    assert cost is not None
    assert (cost.usd, cost.recorded) == (0.42, True)
