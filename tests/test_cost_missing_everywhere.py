"""Everywhere tokens are shown with no cost, the same reason says why (spec U-2, U-3, C-2, C-3,
B-3): a turn's header, a comparison of two runs and of two corpora, a corpus row and a turn
row, the session browser's table. The reason is :mod:`turnfold.cost`'s one decision
(:class:`~turnfold.cost.NoCost`, :func:`~turnfold.cost.no_cost_said`), as the session header
says it (tests/test_cost_missing_reason.py); without genai-prices installed it is that the
price table is missing and how to install it, not that the table knows no price for a model.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import turnfold
from turnfold.comparison import compare_rows
from turnfold.corpus.columns import cell, column, columns_of, label
from turnfold.cost import PRICE_TABLE_INSTALL, NoCost, session_cost_or_why, spend_of
from turnfold.model import AssistantText, Transcript, Usage, UserMessage
from turnfold.prices import price_of
from turnfold.render.compare_view import (
    NO_COST_SHOWN,
    build_compare_view,
    build_pair_table,
    compare_runs,
)
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, session_header
from turnfold.settings import DisplaySettings

WHEN = "2025-09-07T10:00:00Z"  # a day whose prices the table holds for gpt-4o
UNKNOWN = "no-such-model-xyz"
PYPROJECT = Path(__file__).parent.parent / "pyproject.toml"


def _session(model: str | None, *, prompt: str = "Fix the failing test.", **tokens: int) -> Any:
    counts = tokens or {"input_tokens": 1200, "output_tokens": 80}
    return Transcript([
        UserMessage(id="u1", timestamp=WHEN, text=prompt),
        AssistantText(id="a1", timestamp=WHEN, text="Done.", model=model, usage=Usage(**counts)),
    ])  # fmt: skip


def _session_no_cost(transcript: Transcript, locale: str = "en") -> str | None:
    header = session_header(transcript, locale)
    assert header is not None
    return next((p["text"] for p in header["parts"] if p["name"] == "no_cost"), None)


def _turn_headers(transcript: Transcript, locale: str = "en") -> list[str]:
    view = build_view_model(transcript, DisplaySettings(show_turn_usage=True, locale=locale))
    return [str(node["header"]["text"]) for node in view["nodes"] if node["kind"] == "turn"]


@pytest.fixture
def without_genai_prices(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An environment without genai-prices: its import fails, as it does where it is not
    installed (``None`` in ``sys.modules`` makes ``import`` raise ImportError and
    ``importlib.util.find_spec`` answer None). The prices this process found are forgotten
    before and after, so that neither side sees the other's."""
    price_of.cache_clear()
    monkeypatch.setitem(sys.modules, "genai_prices", None)
    yield
    monkeypatch.undo()
    price_of.cache_clear()


# --- a turn's header ---------------------------------------------------------------------------


def test_U3_a_turns_tokens_with_no_cost_say_why_as_the_session_header_does() -> None:
    transcript = _session(UNKNOWN)
    [turn] = _turn_headers(transcript)
    assert turn == f"Completed · 1.3k tokens · no cost: no price for {UNKNOWN}"
    assert turn.endswith(str(_session_no_cost(transcript)))  # one reason, one wording
    assert f"no cost: no price for {UNKNOWN}" in render_text(
        build_view_model(transcript, DisplaySettings(show_turn_usage=True))
    )
    [zh] = _turn_headers(transcript, "zh")
    assert zh.endswith(f"无费用：{UNKNOWN} 无价格")
    # A priced turn shows its cost and no reason; a turn of no model named says so.
    [priced] = _turn_headers(_session("gpt-4o"))
    assert priced.endswith("1.3k tokens · ≈ $0.0038")
    [unnamed] = _turn_headers(_session(None))
    assert unnamed.endswith("1.3k tokens · no cost: model not recorded")


def test_U2_a_turns_spend_keeps_the_reason_only_where_it_counts_tokens() -> None:
    transcript = _session(UNKNOWN)
    spent = spend_of(transcript, transcript.entries)
    assert (spent.cost, spent.no_cost) == (None, NoCost("unknown_model", (UNKNOWN,)))
    priced = _session("gpt-4o")
    assert spend_of(priced, priced.entries).no_cost is None
    # Reasoning alone counts neither input nor output: no tokens shown, nothing to explain.
    silent = _session(UNKNOWN, reasoning_tokens=40)
    assert spend_of(silent, silent.entries).no_cost is None


# --- comparisons -------------------------------------------------------------------------------


def test_B3_each_run_of_a_comparison_says_why_it_has_no_cost() -> None:
    view = build_compare_view(compare_runs(_session(UNKNOWN), _session("gpt-4o")))
    a, b = (side["session"] for side in view["sides"])
    assert a is not None
    assert b is not None
    said = {part["name"]: part["text"] for part in a["parts"]}
    assert said["no_cost"] == f"no cost: no price for {UNKNOWN}"
    assert "no_cost" not in {part["name"] for part in b["parts"]}
    assert {part["name"] for part in b["parts"]} >= {"cost"}


def _row(sample: str, cost: float | None, no_cost: str | None) -> dict[str, Any]:
    return {"key": f"log#{sample}", "path": None, "sample": sample, "format": None,
            "outcome": "pass", "score": None, "cost_usd": cost, "no_cost": no_cost}  # fmt: skip


def test_B3_a_corpus_total_says_why_its_items_have_no_cost_in_the_readers_language() -> None:
    unknown = NoCost("unknown_model", (UNKNOWN,)).said
    a = [_row("1/1", 0.5, None), _row("2/1", None, unknown), _row("3/1", None, unknown),
         _row("4/1", None, NoCost("unnamed_model").said), _row("5/1", None, None)]  # fmt: skip
    b = [_row("1/1", None, unknown)]
    found = compare_rows(a, b)
    assert found.totals_a.no_cost == (f"no price for {UNKNOWN}", "model not recorded")
    en = build_pair_table(found, "en")["totals"]
    assert en[0]["text"] == (
        f"5 items · pass rate 100% · ≈ $0.50 for 1 of 5 items · "
        f"no cost: no price for {UNKNOWN}; model not recorded"
    )
    # No item priced: no sum, and the reason still said.
    assert en[1]["text"] == f"1 item · pass rate 100% · no cost: no price for {UNKNOWN}"
    zh = build_pair_table(found, "zh")["totals"]
    assert zh[0]["text"].endswith(f"无费用：{UNKNOWN} 无价格；未记录模型")


def test_B3_a_corpus_total_names_a_few_reasons_and_keeps_one_it_cannot_read() -> None:
    models = [f"model-{n}" for n in range(NO_COST_SHOWN + 2)]
    rows = [_row(f"{n}/1", None, NoCost("unknown_model", (m,)).said) for n, m in enumerate(models)]
    line = build_pair_table(compare_rows(rows, rows), "en")["totals"][0]["text"]
    shown = "; ".join(f"no price for {m}" for m in models[:NO_COST_SHOWN])
    assert line.endswith(f"no cost: {shown}; …")
    # A reason some other turnfold wrote is shown as the row holds it, its controls visible.
    odd = [_row("1/1", None, "priced\u202eelsewhere")]
    line = build_pair_table(compare_rows(odd, odd), "zh")["totals"][0]["text"]
    assert "\u202e" not in line
    assert "无费用：priced" in line
    assert "elsewhere" in line


def test_U2_a_rows_reason_reads_back_as_the_decision_it_says() -> None:
    for said in (
        NoCost("unknown_model", ("gpt-x", "gpt-y")),
        NoCost("unsplit_total"),
        NoCost("no_price_source"),
        NoCost("output_not_recorded"),
    ):
        assert NoCost.read(said.said) == said
    assert NoCost.read("no price for ") is None  # no model named: no reason's text
    assert NoCost.read("") is None


# --- the corpus --------------------------------------------------------------------------------


def test_C2_a_row_with_tokens_and_no_cost_says_why_after_the_spec_s_columns() -> None:
    silent = Transcript(
        [
            UserMessage(id="u1", timestamp=WHEN, text="Hello."),
            AssistantText(id="a1", timestamp=WHEN, text="Hi.", model=UNKNOWN),
        ]
    )
    runs = [_session(UNKNOWN), _session("gpt-4o"), _session(None), silent]
    corpus = turnfold.scan(runs, cache=False, workers=1)
    table = corpus.to_arrow()
    names = table.column_names
    assert names[-2:] == ["error", "no_cost"]  # C-2's columns keep their places
    assert table.select(["cost_usd", "no_cost"]).to_pylist() == [
        {"cost_usd": None, "no_cost": f"no price for {UNKNOWN}"},
        {"cost_usd": pytest.approx(0.0038), "no_cost": None},
        {"cost_usd": None, "no_cost": "model not recorded"},
        {"cost_usd": None, "no_cost": None},  # no tokens: no missing cost to explain
    ]
    # Each row's reason is its session header's, in the row's English.
    for transcript, said in zip(runs, table.column("no_cost").to_pylist(), strict=True):
        shown = _session_no_cost(transcript)
        assert shown == (f"no cost: {said}" if said is not None else None)
    # The turns table says it of each turn, as its header does (show_turn_usage).
    turns = corpus.turns()
    assert turns.column_names[-2:] == ["cost_usd", "no_cost"]
    assert turns.column("no_cost").to_pylist() == [f"no price for {UNKNOWN}", None,
                                                   "model not recorded", None]  # fmt: skip


def test_B1_the_browser_offers_the_reason_as_a_column_of_its_own() -> None:
    assert "no_cost" in [c.name for c in columns_of({})]
    assert label("no_cost", "en") == "Why no cost"
    assert label("no_cost", "zh") == "无费用原因"
    col = column("no_cost")
    assert col.clip  # free text: cut short in a narrow table
    assert not col.numeric
    said = NoCost("unknown_model", (UNKNOWN,))
    assert cell(col, said.said, "en") == {"text": said.said, "title": said.title_in("en")}
    assert cell(col, said.said, "zh") == {"text": f"{UNKNOWN} 无价格", "title": said.title_in("zh")}
    assert cell(col, None, "en") == {"text": ""}


# --- without genai-prices ----------------------------------------------------------------------


@pytest.mark.usefixtures("without_genai_prices")
def test_U2_without_the_price_table_the_reason_is_the_install_not_the_model() -> None:
    transcript = _session("gpt-4o")  # a model genai-prices prices (see the test above)
    assert session_cost_or_why(transcript) == NoCost("no_price_source")
    install = f"no cost: no price table installed ({PRICE_TABLE_INSTALL})"
    assert _session_no_cost(transcript) == install
    header = session_header(transcript, "en")
    assert header is not None
    [part] = [p for p in header["parts"] if p["name"] == "no_cost"]
    assert "genai-prices" in (part["title"] or "")
    assert PRICE_TABLE_INSTALL in (part["title"] or "")
    assert _turn_headers(transcript) == [f"Completed · 1.3k tokens · {install}"]
    assert _session_no_cost(transcript, "zh") == f"无费用：未安装价格表（{PRICE_TABLE_INSTALL}）"
    [row] = turnfold.scan([transcript], cache=False, workers=1).to_arrow().to_pylist()
    said = f"no price table installed ({PRICE_TABLE_INSTALL})"
    assert (row["cost_usd"], row["no_cost"]) == (None, said)
    # A model no table could price either says the same: without the table, nothing is known.
    assert session_cost_or_why(_session(UNKNOWN)) == NoCost("no_price_source")
    # A cost the source recorded needs no table.
    recorded = _session("gpt-4o")
    recorded.metadata["cost_usd"] = 0.25
    assert _session_no_cost(recorded) is None


def test_U2_with_the_price_table_back_the_same_session_is_priced() -> None:
    """Run after the test above (file order): the hidden table's answers were not kept."""
    transcript = _session("gpt-4o")
    assert session_cost_or_why(transcript) != NoCost("no_price_source")
    assert _session_no_cost(transcript) is None


def test_U2_the_install_hint_names_the_package_pyproject_depends_on() -> None:
    """genai-prices is one of turnfold's dependencies, not an extra: the hint installs it by
    its own name. Were it moved to an extra, the hint would have to name the extra."""
    project = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]
    named = [dep.split(">")[0].split("=")[0].strip() for dep in project["dependencies"]]
    assert "genai-prices" in named
    extras = project.get("optional-dependencies", {})
    assert not any(dep.startswith("genai-prices") for deps in extras.values() for dep in deps)
    assert PRICE_TABLE_INSTALL.split()[:2] == ["pip", "install"]
    assert PRICE_TABLE_INSTALL.split()[2:] == ["genai-prices"]
