"""A header that shows tokens and no cost says why (spec U-2, U-3).

The reason is :mod:`turnfold.cost`'s own decision (:class:`~turnfold.cost.NoCost`): a model
the price table does not know, a total of several models recorded with no split, output not
recorded, sub-agents' tokens under no model. The text rendering, the page and the widget all
show it from the one view model: in the header's line, and in full in the part's title.
"""

from __future__ import annotations

from typing import Any, get_args

import pytest

from turnfold.cost import NoCost, Reason, session_cost, session_cost_or_why
from turnfold.model import AssistantText, SubAgent, ToolCall, Transcript, Usage, UserMessage
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, session_header
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings
from turnfold.transport import unpack_view
from turnfold.widget import TranscriptWidget

WHEN = "2025-09-07T10:00:00Z"  # a day whose prices the table holds for gpt-4o and Claude


def _session(*entries: Any, **metadata: Any) -> Transcript:
    asked = UserMessage(id="u1", timestamp=WHEN, text="Fix the failing test.")
    return Transcript([asked, *entries], metadata=metadata)


def _answer(model: str | None, **tokens: int) -> AssistantText:
    return AssistantText(id=f"a-{model}", timestamp=WHEN, text="Done.", model=model,
                         usage=Usage(**tokens))  # fmt: skip


def _cost_part(
    transcript: Transcript, locale: str = "en", name: str = "no_cost"
) -> dict[str, Any] | None:
    """The header's part ``name``: its reason for no cost, else its cost (``"cost"``)."""
    header = session_header(transcript, locale)
    assert header is not None
    return next((part for part in header["parts"] if part["name"] == name), None)


def test_U2_a_model_the_table_does_not_know_is_named_as_the_reason() -> None:
    transcript = _session(_answer("no-such-model-xyz", input_tokens=1200, output_tokens=80))
    assert session_cost(transcript) is None  # as before: no cost, never a guess
    assert session_cost_or_why(transcript) == NoCost("unknown_model", ("no-such-model-xyz",))

    part = _cost_part(transcript)
    assert part is not None
    assert part["text"] == "no cost: no price for no-such-model-xyz"
    assert part["title"] is not None
    assert "genai-prices" in part["title"]
    assert "no-such-model-xyz" in part["title"]


def test_U2_output_not_recorded_is_the_reason_beside_a_lower_bound() -> None:
    transcript = _session(_answer("gpt-4o", input_tokens=1200))
    header = session_header(transcript, "en")
    assert header is not None
    texts = [part["text"] for part in header["parts"]]
    assert texts[-2:] == ["≥ 1.2k tokens", "no cost: output not recorded"]


def test_U2_a_total_of_two_models_with_no_split_says_so() -> None:
    """The session records its total (``usage``) beyond its two models' responses, as a VS
    Code Copilot session's shutdown does, and not each model's part of it."""
    total = {"input_tokens": 52000, "output_tokens": 160, "cache_read_tokens": 30000}
    answers = (_answer("claude-haiku-4.5", output_tokens=120), _answer("gpt-5", output_tokens=40))
    transcript = _session(*answers, usage=total)

    facts = session_facts(transcript)
    assert facts.cost is None
    assert facts.no_cost == NoCost("unsplit_total", ("claude-haiku-4.5", "gpt-5"))
    part = _cost_part(transcript)
    assert part is not None
    assert part["text"] == "no cost: total not split by model"
    assert "claude-haiku-4.5, gpt-5" in (part["title"] or "")
    # With the split, each model's part is priced: a cost, and no reason.
    split = {
        "claude-haiku-4.5": {
            "input_tokens": 30000,
            "output_tokens": 120,
            "cache_read_tokens": 20000,
        },
        "gpt-5": {"input_tokens": 22000, "output_tokens": 40, "cache_read_tokens": 10000},
    }
    priced = session_facts(_session(*answers, usage=total, usage_by_model=split))
    assert priced.cost is not None
    assert priced.no_cost is None


def test_U2_a_sub_agent_of_several_models_with_one_total_says_so() -> None:
    """A sub-agent whose recorded total counts more than its two models' responses: which of
    them spent the rest is not known (:func:`turnfold.cost.subagent_model`)."""
    child = Transcript([
        _answer("gpt-4o", input_tokens=1000, output_tokens=10),
        _answer("claude-sonnet-4-5", input_tokens=1000, output_tokens=10),
    ])  # fmt: skip
    agent = SubAgent(name="helper", transcript=child,
                     usage=Usage(input_tokens=5000, output_tokens=200))  # fmt: skip
    call = ToolCall(id="t1", timestamp=WHEN, name="Task", status="done", subagent=agent)
    transcript = _session(call, _answer("gpt-4o", input_tokens=100, output_tokens=5))
    decided = session_cost_or_why(transcript)
    assert decided == NoCost("unsplit_total", ("claude-sonnet-4-5", "gpt-4o"))


def test_U2_sub_agent_tokens_under_no_call_are_the_reason() -> None:
    """Tokens of sub-agents recorded as one total (``subagent_usage``) name no model: the
    session's own responses alone would be priced, which is not the session's cost."""
    transcript = _session(_answer("gpt-4o", input_tokens=1200, output_tokens=80),
                          subagent_usage={"input_tokens": 500, "output_tokens": 50})  # fmt: skip
    facts = session_facts(transcript)
    assert (facts.cost, facts.no_cost) == (None, NoCost("subagent_unpriced"))
    # A recorded cost that leaves the sub-agents out cannot add theirs either.
    recorded = _session(_answer("gpt-4o", input_tokens=1200, output_tokens=80), cost_usd=0.01,
                        cost_includes_subagents=False,
                        subagent_usage={"input_tokens": 500, "output_tokens": 50})  # fmt: skip
    assert session_cost_or_why(recorded) == NoCost("subagent_unpriced")


def test_U2_a_cost_or_no_tokens_gives_no_reason() -> None:
    priced = _session(_answer("gpt-4o", input_tokens=1200, output_tokens=80))
    part = _cost_part(priced, name="cost")
    assert part is not None
    assert part["text"].startswith("≈ $")
    assert session_facts(priced).no_cost is None
    assert _cost_part(priced) is None
    recorded = _session(_answer("no-such-model-xyz", input_tokens=1200, output_tokens=80),
                        cost_usd=0.5)  # fmt: skip
    assert (_cost_part(recorded, name="cost") or {})["text"] == "$0.50"
    assert _cost_part(recorded) is None
    # No tokens shown, no cost to explain: the header says nothing of it.
    silent = _session(AssistantText(id="a", timestamp=WHEN, text="Done.", model="gpt-4o"))
    assert session_facts(silent).no_cost is not None  # the decision still says why
    assert _cost_part(silent) is None


def test_U2_the_reason_is_translated() -> None:
    transcript = _session(_answer("gpt-4o", input_tokens=1200))
    part = _cost_part(transcript, "zh")
    assert part is not None
    assert part["text"] == "无费用：未记录输出"
    assert part["title"] is not None
    assert "输出" in part["title"]


def test_U3_the_text_the_page_and_the_widget_show_the_reason(widgets: list[Any]) -> None:
    transcript = _session(_answer("no-such-model-xyz", input_tokens=1200, output_tokens=80))
    view = build_view_model(transcript, DisplaySettings())
    assert "no cost: no price for no-such-model-xyz" in render_text(view)
    page = render_html(view)
    assert '<span class="tf-sp tf-sp-no_cost" title="not estimated: the price table' in page
    assert ">no cost: no price for no-such-model-xyz</span>" in page

    widget = TranscriptWidget(transcript)
    widgets.append(widget)
    session = unpack_view(widget._view)["view"]["session"]
    assert session == view["session"]


@pytest.mark.parametrize("reason", get_args(Reason))
def test_U2_every_reason_reads_in_every_locale(reason: Any) -> None:
    said = NoCost(reason, ("some-model",))
    for locale in ("en", "zh"):
        text, title = said.text_in(locale), said.title_in(locale)
        assert text
        assert title != text
        assert "{" not in text + title  # every placeholder filled
