"""Codex builds of 2025 wrote a response's token_count before its items (spec U-1).

Codex 0.40 and 0.60 wrote each model response as its reasoning events, then its
``token_count``, then its items (reasoning, calls, their outputs), and a ``turn_context`` and
a token_count of rate limits as the next request started. Later builds write the items
first. The usage of a response belongs on that response's entries, not on the calls of the
one before it.

The fixture is a real Codex 0.40.0 rollout trimmed by whole lines (lines 1, 2, 553, 554 and
589-615 of jnarowski/agentcmd ``packages/agent-cli-sdk/tests/fixtures/codex/sessions/2025/09/
24/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl`` at 9ce12c67, MIT).
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.model import AbortMarker, Thinking, ToolCall

FIXTURE = Path(__file__).parent.parent / "fixtures/codex/v0.40_real_usage-before-items.jsonl"


def output_tokens(entry: object) -> int | None:
    usage = getattr(entry, "usage", None)
    return None if usage is None else usage.output_tokens


def test_U1_codex_040_usage_goes_on_the_response_its_items_follow() -> None:
    t = turnfold.load(FIXTURE)
    calls = {c.call_id: c for c in t.tool_calls()}
    thinking = {e.text.split("**")[1]: e for e in t.entries if isinstance(e, Thinking)}
    # Reasoning event, token_count (63 out), then its reasoning item and the call.
    assert output_tokens(thinking["Verifying handleResult behavior"]) == 63
    assert output_tokens(calls["call_7djZaDgzcpvOx49girpGzFpC"]) is None
    # A response of one call and no reasoning: its token_count (65) comes before the call.
    assert output_tokens(calls["call_SwGJLMbubym0u9RsQYRDgDRB"]) == 65
    # The next responses' usage is on their own reasoning, not on the call before it.
    assert output_tokens(thinking["Checking createSuccessResponse function"]) == 67
    assert output_tokens(calls["call_gFXEL2xcYlY8YtnzNIYo2VPx"]) is None
    analysis = thinking["Analyzing data fetching and UI update issues"]
    assert analysis.usage is not None
    assert (analysis.usage.output_tokens, analysis.usage.reasoning_tokens) == (2759, 2688)
    assert output_tokens(calls["call_h6oXpZ20YgONegbS7WMXTFpB"]) is None
    # The response the user interrupted recorded reasoning and no token_count: no usage.
    stopped = [e for e in t.entries if isinstance(e, Thinking)][-3:]
    assert [output_tokens(e) for e in stopped] == [None, None, None]
    assert isinstance(t.entries[-1], AbortMarker)
    # Every response counted once: the entries add up to the session's usage.
    placed = sum(output_tokens(e) or 0 for e in t.entries)
    assert placed == t.metadata["usage"]["output_tokens"] == 63 + 65 + 67 + 2759
    assert t.warnings == []


def test_U1_codex_040_rollout_of_one_request_each_turn_keeps_its_usage() -> None:
    """The trimmed real rollout used elsewhere: its second response's usage is on its own
    reasoning, not on the ``update_plan`` call of the first."""
    t = turnfold.load(FIXTURE.parent / "v0.40_real_plan-updated-and-execution-error.jsonl")
    thinking = [e for e in t.entries if isinstance(e, Thinking)]
    calls = [e for e in t.entries if isinstance(e, ToolCall)]
    assert [output_tokens(e) for e in thinking] == [205, 122]
    assert [output_tokens(c) for c in calls] == [None, None]
