"""Cost, estimated honestly (spec U-2): a kept price table, the session's date, no guesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnfold import kept_prices
from turnfold.cost import estimate, session_cost
from turnfold.kept_prices import FILE_NAME, PriceBook
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
    hour=st.floats(0, 1),
)
def test_U2_a_response_costs_what_the_price_table_itself_says(
    model: str, fed: int, out: int, read: float, written: float, hour: float
) -> None:
    """The line a stretch of one tier is priced on gives the table's own price (prices.py),
    one-hour cache writes included (a part of the writes, at their own rate)."""
    price = price_of(model, None, LATER.date())
    assert price is not None
    cache_read = int(fed * read)
    cache_write = int((fed - cache_read) * written)
    counts = (fed, out, cache_read, cache_write, int(cache_write * hour))
    assert price(counts) == pytest.approx(float(price.exact(counts)), rel=1e-9, abs=1e-12)


_PRICE_IN_A_PROCESS = """
import sys
from datetime import datetime, timezone
from turnfold.cost import estimate
tokens = {"input_tokens": 250_000, "output_tokens": 900, "cache_read_tokens": 30_000}
provider, day, *models = sys.argv[1:]
when = datetime.fromisoformat(day).replace(tzinfo=timezone.utc) if day != "today" else None
cost = estimate([(model, tokens) for model in models], provider=provider, when=when)
print(repr(cost.usd), cost.source, "genai_prices" in sys.modules)
"""


def _price_in_a_process(
    cache: Path,
    day: str = "2026-06-01",
    models: tuple[str, ...] = ("claude-sonnet-4-5", "gpt-4o"),
    provider: str = "anthropic",
) -> tuple[str, str]:
    env = {**os.environ, "TURNFOLD_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _PRICE_IN_A_PROCESS, provider, day, *models],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    *priced, imported = done.stdout.split()
    return " ".join(priced), imported


def test_U2_a_price_kept_by_one_process_prices_the_next_without_the_table(tmp_path: Path) -> None:
    """genai-prices' import is a fifth of a second of every command that shows a cost: the
    first process keeps the prices it found, the next prices the same, to the last digit,
    without importing the table (kept_prices)."""
    first, imported = _price_in_a_process(tmp_path)
    assert imported == "True"
    assert (tmp_path / FILE_NAME).exists()
    again, imported = _price_in_a_process(tmp_path)
    assert (again, imported) == (first, "False")


def _a_model_priced(shape: str) -> tuple[str, str, list[date]]:
    """A model of the installed price table whose prices have ``shape``, as (provider, model,
    the start dates its prices list): ``one`` price whatever the date, prices that change on
    ``dates``, or dates and the ``time`` of day (off-peak prices). Found in the table itself,
    so a later table with other prices still has cases to test."""
    import genai_prices
    from genai_prices import data

    for provider in data.providers:
        for model in provider.models:
            prices = model.prices
            constraints = [c.constraint for c in prices] if isinstance(prices, list) else []
            starts = sorted({at for c in constraints if (at := getattr(c, "start_date", None))})
            timed = any(hasattr(c, "start_time") for c in constraints)
            found = {"one": not constraints, "dates": bool(starts) and not timed,
                     "time": bool(starts) and timed}[shape]  # fmt: skip
            if not found:
                continue
            try:
                priced = genai_prices.calc_price(
                    genai_prices.Usage(input_tokens=1), model.id, provider_id=provider.id
                )
            except Exception:
                continue
            if priced.model.id == model.id:  # the table finds it by its own id
                return provider.id, model.id, starts
    pytest.skip(f"the installed price table has no model priced by {shape}")


@pytest.mark.parametrize("shape", ["one", "dates", "time"])
def test_U2_a_price_is_kept_for_the_days_it_holds_for(tmp_path: Path, shape: str) -> None:
    """The table changes a model's price only on the start dates it lists: a price kept for
    one day prices a session of another day of the same span without importing the table, as
    the table prices it; a day of another span asks the table. Today's price is kept like any
    day's, unless it depends on the time of day."""
    provider, model, starts = _a_model_priced(shape)
    day = timedelta(days=1)
    if not starts:  # one price: every day is one span
        kept_on, same, other = "2026-06-01", ["2025-11-20", "today"], []
    else:  # the span from the first start date, up to the next
        first, end = starts[0], starts[1] if len(starts) > 1 else None
        last_day = end - day if end is not None else first + 30 * day
        kept_on = first.isoformat()
        same = [last_day.isoformat()]
        other = [(first - day).isoformat()]
        if end is None and shape == "dates" and first <= datetime.now(timezone.utc).date():
            same.append("today")
        if shape == "time":
            other.append("today")  # the price now depends on the time: never kept
    _price_in_a_process(tmp_path, kept_on, (model,), provider)
    for when in (*same, *other):
        fresh = tmp_path / f"fresh-{when}"  # another cache: the table prices that day itself
        expected, imported = _price_in_a_process(fresh, when, (model,), provider)
        assert imported == "True"
        table = "False" if when in same else "True"
        assert _price_in_a_process(tmp_path, when, (model,), provider) == (expected, table), when


def test_U2_kept_prices_of_another_table_or_unreadable_are_not_used(tmp_path: Path) -> None:
    first, _ = _price_in_a_process(tmp_path)
    kept = tmp_path / FILE_NAME
    stored = json.loads(kept.read_text())
    wrong = {
        key: {**entry, "spans": [[first_day, end, [found, starts, [[1.0] * 6 for _ in lines]]]
                                 for first_day, end, (found, starts, lines) in entry["spans"]]}
        for key, entry in stored["prices"].items()
    }  # fmt: skip
    # Another installed table (a new genai-prices version): its prices are not this one's.
    kept.write_text(json.dumps({**stored, "stamp": "elsewhere", "prices": wrong}))
    assert _price_in_a_process(tmp_path) == (first, "True")
    bad_spans = {key: {"timed": False, "spans": [[None, None, [1]], 1]} for key in wrong}
    old_layout = {key: [1] for key in wrong}  # a line per model and day, as kept before
    for broken in (
        "{not json",
        *(json.dumps({**stored, "prices": bad}) for bad in (bad_spans, old_layout)),
    ):
        kept.write_text(broken)
        assert _price_in_a_process(tmp_path)[0] == first


def test_U2_a_kept_price_still_asks_the_table_about_counts_it_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path))
    day = LATER.date()
    book = PriceBook(tmp_path / FILE_NAME, "a table")
    book.keep(
        "gpt-4o", None, (None, None), False, (None, [], [(0.0, 1.0, 1.0, 0.0, 0.0, 0.0)]), "0"
    )
    monkeypatch.setattr(kept_prices, "_table_stamp", lambda: "a table")
    price_of.cache_clear()
    try:
        price = price_of("gpt-4o", None, day)
        assert price is not None
        assert price((10, 5, 0, 0, 0)) == 15.0  # the kept line, whatever the table says
        with pytest.raises(ValueError, match="cannot exceed"):
            price((10, 0, 20, 0, 0))  # more cached than input tokens: the table refuses it
    finally:
        price_of.cache_clear()
