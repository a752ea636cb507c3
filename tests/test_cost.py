"""Cost, estimated honestly (spec U-2): a kept price table, the session's date, no guesses."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnfold.cost import estimate, session_cost
from turnfold.model import AssistantText, Transcript, Usage
from turnfold.prices import price_of
from turnfold.samples import claude_code_session
from turnfold.usage import transcript_tokens

WHEN = datetime(2025, 9, 7, tzinfo=timezone.utc)
LATER = datetime(2026, 6, 1, tzinfo=timezone.utc)  # Claude Sonnet 4.5 and GPT-5 are priced


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
    assert estimate([("mockllm/model", tokens)], when=WHEN) is None
    # One unknown model among known ones: the sum would leave it out, so there is none.
    assert estimate([("gpt-4o", tokens), ("mockllm/model", tokens)], when=WHEN) is None
    assert estimate([(None, tokens)], when=WHEN) is None  # no model named
    assert estimate([("gpt-4o", tokens)], when=WHEN) is not None
    # Counts the table refuses (more cached than input tokens): no cost, never a guess.
    refused = {"input_tokens": 10, "cache_read_tokens": 20}
    assert estimate([("gpt-4o", refused)], when=WHEN) is None


def test_U2_a_cost_the_source_recorded_wins_and_says_so() -> None:
    transcript = Transcript(
        [AssistantText(text="hi", model="gpt-4o", usage=Usage(input_tokens=10, output_tokens=2))],
        metadata={"cost_usd": 0.42},
    )
    cost = session_cost(transcript)
    assert cost is not None
    assert (cost.usd, cost.recorded) == (0.42, True)


def test_U2_each_response_is_priced_on_its_own_tier() -> None:
    """Claude Sonnet 4.5 costs twice as much per token in a request of more than 200k input
    tokens. Two requests of 150k each are two cheap requests, not one dear one of 300k."""
    sonnet = "claude-sonnet-4-5"
    one = {"input_tokens": 150_000, "output_tokens": 1_000}
    cost = estimate([(sonnet, one), (sonnet, one)], provider="anthropic", when=LATER)
    assert cost is not None
    by_hand = 2 * (150_000 * 3 + 1_000 * 15) / 1_000_000  # $3 and $15 per million: base tier
    assert cost.usd == pytest.approx(by_hand)
    big = {"input_tokens": 300_000, "output_tokens": 2_000}
    dear = estimate([(sonnet, big)], provider="anthropic", when=LATER)
    assert dear is not None
    assert dear.usd == pytest.approx((300_000 * 6 + 2_000 * 22.5) / 1_000_000)  # the long tier


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(["claude-sonnet-4-5", "claude-sonnet-4-20250514", "gpt-4o", "gpt-5"]),
    fed=st.integers(0, 1_500_000),
    out=st.integers(0, 200_000),
    read=st.floats(0, 1),
    written=st.floats(0, 1),
)
def test_U2_a_response_costs_what_the_price_table_itself_says(
    model: str, fed: int, out: int, read: float, written: float
) -> None:
    """The line a stretch of one tier is priced on gives the table's own price (prices.py)."""
    price = price_of(model, None, LATER.date())
    assert price is not None
    cache_read = int(fed * read)
    cache_write = int((fed - cache_read) * written)
    counts = (fed, out, cache_read, cache_write)
    assert price(counts) == pytest.approx(float(price.exact(counts)), rel=1e-9, abs=1e-12)
