"""Tokens and cost found wrong by a QA pass (spec U-1, U-2, U-3, B-3).

* Anthropic's one-hour cache writes cost more than its five-minute ones (claude-opus-4-6: $10
  and $6.25 a million). Claude Code 2.1 records which is which in ``usage.cache_creation``; a
  session whose writes are all one-hour was priced at the five-minute rate.
* A comparison of two corpora showed the sum of the costs it had as the corpus's ``≈ $X``,
  leaving the runs without a cost out without a word.
* A live widget's header left out the tokens of a response that failed and was billed (a
  refusal), which a static rendering of the same run counts.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import kept_prices
from turnfold.comparison import compare_rows
from turnfold.cost import estimate
from turnfold.kept_prices import FILE_NAME, PriceBook
from turnfold.prices import price_of
from turnfold.render.compare_view import build_pair_table
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts
from turnfold.usage import USAGE_KINDS, count_tokens

FIXTURES = Path(__file__).parent / "fixtures"
#: Claude Code 2.1.56, two responses of claude-opus-4-6 whose cache writes are all one-hour.
ONE_HOUR = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
#: Raw stream events the anthropic SDK (2.15.0) yielded for two calls (its recipe is beside it).
STREAM = FIXTURES / "messages" / "anthropic-2.15.0_stream-events_two-calls.jsonl"
OPUS = "claude-opus-4-6"
SESSION_DAY = datetime(2026, 2, 25, tzinfo=timezone.utc)

#: genai-prices' figures for claude-opus-4-6 (US dollars a million tokens, requests under its
#: 200k tier): input, output, cache read, cache write (five-minute), one-hour cache write.
RATES = {"input": 5, "output": 25, "cache_read": 0.5, "cache_write": 6.25, "cache_write_1h": 10}
#: The fixture's two responses, as its lines record them (``usage`` of lines 5 and 13):
#: uncached input, cache reads, cache writes (all one-hour: ``ephemeral_1h_input_tokens``),
#: output.
RESPONSES = [(1, 115_718, 504, 339), (1, 116_222, 461, 8)]


def _by_hand(write_rate: float) -> float:
    return sum(
        fresh * RATES["input"] + read * RATES["cache_read"] + written * write_rate
        + out * RATES["output"]
        for fresh, read, written, out in RESPONSES
    ) / 1_000_000  # fmt: skip


def test_U2_the_table_s_figures_the_hand_prices_use() -> None:
    import genai_prices

    found = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1), OPUS, provider_id="anthropic",
        genai_request_timestamp=SESSION_DAY,
    )  # fmt: skip
    price = found.model_price
    assert (price.input_mtok.base, price.output_mtok.base, price.cache_read_mtok.base,
            price.cache_write_mtok.base, price.cache_write_1h_mtok.base) == tuple(
        RATES.values()
    )  # fmt: skip
    assert min(tier.start for tier in price.input_mtok.tiers) > max(
        fresh + read + written for fresh, read, written, _ in RESPONSES
    )


def test_U2_one_hour_cache_writes_of_a_real_claude_code_session_are_priced_at_their_rate() -> None:
    transcript = turnfold.load(ONE_HOUR)
    carriers = [e for e in transcript.entries if isinstance(e, USAGE_KINDS) and e.usage]
    # Each response once (Claude Code writes its usage on every line of it).
    ones = {e.usage.response_id: e.usage.cache_write_1h_tokens for e in carriers if e.usage}
    assert sorted(ones.values()) == [461, 504]
    facts = session_facts(transcript)
    assert facts.cost is not None
    assert facts.cost.usd == pytest.approx(_by_hand(RATES["cache_write_1h"]), rel=1e-12)
    # 0.134305, where the five-minute rate gave 0.13068625.
    assert facts.cost.usd != pytest.approx(_by_hand(RATES["cache_write"]), rel=1e-6)
    # The header's tokens are what they were: the one-hour writes are among the cache writes.
    fresh = sum(r[0] for r in RESPONSES)
    read = sum(r[1] for r in RESPONSES)
    written = sum(r[2] for r in RESPONSES)
    out = sum(r[3] for r in RESPONSES)
    assert facts.total_tokens == fresh + read + written + out == 233_254
    assert facts.tokens["cache_write_tokens"] == written
    header = build_view_model(transcript)["session"]
    assert header is not None
    tokens = next(part for part in header["parts"] if part["name"] == "tokens")
    assert tokens["text"] == "233.3k tokens"
    assert tokens["title"] == "input 232,907, output 347, cache read 231,940, cache write 965"
    # A corpus row's cost is the same figure.
    (row,) = turnfold.scan([transcript], cache=False, workers=1)
    assert row["cost_usd"] == pytest.approx(facts.cost.usd, rel=1e-12)
    assert row["cache_write_tokens"] == written


def test_U2_an_api_stream_s_one_hour_writes_are_read_from_its_message_start() -> None:
    """The SDK's raw events keep ``message_start``'s ``cache_creation`` (its
    ``accumulate_event``: a ``message_delta`` gives the total writes only): the real fixture's
    first response, its writes made one-hour ones in both events, each event checked against
    the SDK's own types."""
    import genai_prices
    from anthropic.types import RawMessageDeltaEvent, RawMessageStartEvent

    events = [json.loads(line) for line in STREAM.read_text(encoding="utf-8").splitlines()]
    first_delta = next(i for i, e in enumerate(events) if e["type"] == "message_delta")
    events = events[: first_delta + 2]  # the first response, to its message_stop
    start, delta = events[0], events[first_delta]
    start["message"]["usage"].update(
        cache_creation_input_tokens=300,
        cache_creation={"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 300},
    )
    delta["usage"]["cache_creation_input_tokens"] = 300
    RawMessageStartEvent.model_validate(start)
    RawMessageDeltaEvent.model_validate(delta)
    transcript = turnfold.load("".join(json.dumps(e) + "\n" for e in events))
    tokens = count_tokens(transcript.entries)
    assert (tokens["cache_write_tokens"], tokens["cache_write_1h_tokens"]) == (300, 300)
    model = start["message"]["model"]
    counts = {"input_tokens": 420 + 1200 + 300, "output_tokens": 88, "cache_read_tokens": 1200,
              "cache_write_tokens": 300, "cache_write_1h_tokens": 300}  # fmt: skip
    assert tokens == counts
    cost = session_facts(transcript).cost
    assert cost is not None
    assert cost.priced_on is None  # the events record no date: today's prices
    table = genai_prices.calc_price(genai_prices.Usage(**counts), model, provider_id="anthropic")
    assert cost.usd == pytest.approx(float(table.total_price), rel=1e-12)
    five_minute = genai_prices.calc_price(
        genai_prices.Usage(**dict(counts, cache_write_1h_tokens=0)), model, provider_id="anthropic"
    )
    assert cost.usd > float(five_minute.total_price)


def test_U1_writes_none_of_which_is_one_hour_leave_the_part_unset() -> None:
    """Claude Code 1.0 records ``ephemeral_1h_input_tokens: 0`` on every line: the counts
    read as before, with no part of no tokens."""
    from turnfold.samples import claude_code_session

    tokens = count_tokens(claude_code_session().entries)
    assert tokens["cache_write_tokens"] > 0
    assert "cache_write_1h_tokens" not in tokens


def test_U2_a_dump_keeps_the_one_hour_writes_and_an_older_dump_still_loads() -> None:
    transcript = turnfold.load(ONE_HOUR)
    dumped = transcript.dump()
    again = turnfold.load(dumped)
    assert again.dump() == dumped
    assert count_tokens(again.entries) == count_tokens(transcript.entries)
    assert count_tokens(again.entries)["cache_write_1h_tokens"] == 965
    assert session_facts(again).cost == session_facts(transcript).cost
    # A dump written before the field existed has no such key: its writes are read as the
    # five-minute ones they were priced as.
    older = "".join(
        json.dumps(_without_one_hour(json.loads(line))) + "\n" for line in dumped.splitlines()
    )
    assert "cache_write_1h_tokens" not in older
    loaded = turnfold.load(older)
    assert "cache_write_1h_tokens" not in count_tokens(loaded.entries)
    cost = session_facts(loaded).cost
    assert cost is not None
    assert cost.usd == pytest.approx(_by_hand(RATES["cache_write"]), rel=1e-12)


def _without_one_hour(record: dict[str, Any]) -> dict[str, Any]:
    usage = record.get("usage")
    if isinstance(usage, dict):
        usage.pop("cache_write_1h_tokens", None)
    return record


@pytest.mark.parametrize(
    "counts",
    [
        {"input_tokens": 1_000, "output_tokens": 10, "cache_write_tokens": 600,
         "cache_write_1h_tokens": 600},
        {"input_tokens": 250_000, "output_tokens": 10, "cache_write_tokens": 600,
         "cache_write_1h_tokens": 200},  # past the 200k tier: the tier's one-hour rate
    ],
    ids=["under the tier", "past the tier"],
)  # fmt: skip
def test_U2_a_one_hour_write_costs_what_the_table_says(counts: dict[str, int]) -> None:
    import genai_prices

    cost = estimate([(OPUS, counts)], provider="anthropic", when=SESSION_DAY)
    assert cost is not None
    table = genai_prices.calc_price(
        genai_prices.Usage(**counts), OPUS, provider_id="anthropic",
        genai_request_timestamp=SESSION_DAY,
    )  # fmt: skip
    assert cost.usd == pytest.approx(float(table.total_price), rel=1e-12)


def test_U2_more_one_hour_writes_than_writes_get_no_cost() -> None:
    refused = {"input_tokens": 1_000, "output_tokens": 1, "cache_write_tokens": 10,
               "cache_write_1h_tokens": 20}  # fmt: skip
    assert estimate([(OPUS, refused)], provider="anthropic", when=SESSION_DAY) is None


def test_U2_a_kept_price_prices_one_hour_writes_and_one_kept_before_is_not_misread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path))
    day = SESSION_DAY.date()
    counts = (120_000, 300, 100_000, 5_000, 4_000)
    price_of.cache_clear()
    kept_prices._BOOKS.clear()
    try:
        first = price_of(OPUS, "anthropic", day)  # priced by the table, and kept
        assert first is not None
        exact = float(first.exact(counts))
        assert (tmp_path / FILE_NAME).exists()
        price_of.cache_clear()
        kept_prices._BOOKS.clear()
        kept = price_of(OPUS, "anthropic", day)  # read back from the kept file
        assert kept is not None
        assert kept(counts) == pytest.approx(exact, rel=1e-12)
        # A file kept before the one-hour count existed: five numbers a line, under its stamp.
        stamp = kept_prices._table_stamp()
        assert stamp is not None
        layout, _, rest = stamp.partition(":")
        assert layout != "spans"
        price_of.cache_clear()
        kept_prices._BOOKS.clear()
        (tmp_path / FILE_NAME).unlink()
        old = PriceBook(tmp_path / FILE_NAME, f"spans:{rest}")
        line = (0.0, 5e-6, 25e-6, 0.5e-6, 6.25e-6)  # a line of the older layout
        old.keep(OPUS, "anthropic", (None, None), False, ("anthropic", [], [line]), "0")  # type: ignore[list-item]
        read_again = price_of(OPUS, "anthropic", day)
        assert read_again is not None
        assert read_again(counts) == pytest.approx(exact, rel=1e-12)
    finally:
        price_of.cache_clear()
        kept_prices._BOOKS.clear()


# --- B-3: a corpus's cost leaves no run out without saying so ------------------------------------


def _row(sample: str, cost: float | None) -> dict[str, Any]:
    return {"key": f"log#{sample}", "path": None, "sample": sample, "format": None,
            "outcome": "pass", "score": None, "cost_usd": cost}  # fmt: skip


def test_B3_a_corpus_cost_that_leaves_runs_out_says_how_many_it_counts() -> None:
    a = [_row("1/1", 0.5), _row("2/1", 0.25), _row("3/1", None)]
    b = [_row("1/1", 0.5), _row("2/1", 0.25), _row("3/1", 0.25)]
    c = [_row("1/1", None), _row("2/1", None), _row("3/1", None)]
    for locale, expected in (
        ("en", ["3 items · pass rate 100% · ≈ $0.75 for 2 of 3 items",
                "3 items · pass rate 100% · ≈ $1.00"]),
        ("zh", ["3 项 · 通过率 100% · ≈ $0.75（3 项中的 2 项）", "3 项 · 通过率 100% · ≈ $1.00"]),
    ):  # fmt: skip
        table = build_pair_table(compare_rows(a, b), locale)
        assert [line["text"] for line in table["totals"]] == expected
    found = compare_rows(a, c)
    assert (found.totals_a.priced, found.totals_b.priced) == (2, 0)
    assert found.totals_b.cost_usd is None
    assert [line["text"] for line in build_pair_table(found, "en")["totals"]][1] == (
        "3 items · pass rate 100%"
    )


# --- U-3: a followed run's header counts a failed, billed response ------------------------------


def test_U3_a_followed_claude_sdk_run_s_header_counts_a_refused_response_as_its_load_does(
    widgets: list[Any],
) -> None:
    pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is in the frameworks extra")
    from claude_agent_sdk import types as t

    from turnfold.widget import TranscriptWidget

    def usage(fresh: int, read: int, written: int) -> dict[str, int]:
        return {"input_tokens": fresh, "output_tokens": 1, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written}  # fmt: skip

    # The Messages API's refusal: stop_reason "refusal", no content, billed (its usage). The
    # run is left before its result (whose total both would count): the responses' own counts.
    messages = [
        t.AssistantMessage(content=[t.TextBlock(text="Looking into it.")], model=OPUS,
                           message_id="msg_1", stop_reason="end_turn",
                           usage=usage(10, 100, 0), session_id="s"),
        t.AssistantMessage(content=[], model=OPUS, message_id="msg_2", stop_reason="refusal",
                           usage=usage(12, 100, 7), session_id="s"),
    ]  # fmt: skip
    run = turnfold.follow(iter(messages), display=False)
    widget = TranscriptWidget(run.transcript)
    widgets.append(widget)
    for seen, _ in enumerate(run, 1):
        widget.flush()  # the header updated by the entries that changed
        so_far = build_view_model(turnfold.load(messages[:seen]))["session"]
        assert widget.view["session"] == so_far, seen
    widget.flush()
    loaded = turnfold.load(messages)
    assert [type(e).__name__ for e in loaded.entries][-1] == "AssistantError"
    assert session_facts(loaded).tokens["input_tokens"] == 110 + 119
    assert widget.view["session"] == build_view_model(loaded)["session"]
    tokens = next(p for p in widget.view["session"]["parts"] if p["name"] == "tokens")
    assert tokens["text"] == "≥ 229 tokens"
