"""Fields and events of an Inspect AI sample the reader passed over (spec H-1, H-6, U-1, X-2), on
logs the real ``inspect_ai`` 0.3.285 wrote: ``tests/fixtures/harnesses/inspect-unread/
unread_recipe.py`` (an invalidated sample, a custom timeline, a reviewer's termination, sentinel
reports, an Anthropic model fallback with one-hour cache writes) and ``inspect-stops``'
``retry`` sample (an attempt that crashed, its events in ``error_retries``).
"""

from __future__ import annotations

import turnfold
from tests.inspect_samples import HARNESSES, STOPS, load_sample
from turnfold.i18n import localized
from turnfold.model import (
    AbortMarker,
    AssistantText,
    SystemNotice,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.render.viewmodel import outcome_badge

UNREAD = HARNESSES / "inspect-unread" / "unread_mockllm.eval"
FALLBACK = HARNESSES / "inspect-unread" / "unread_anthropic-fallback.eval"


def _notices(transcript: Transcript, subtype: str) -> list[SystemNotice]:
    return [e for e in transcript.entries if isinstance(e, SystemNotice) and e.subtype == subtype]


def _zh(notice: SystemNotice) -> str:
    assert notice.wording is not None
    return localized(notice.text, notice.wording.key, notice.wording.params, "zh")


def _ignored(transcript: Transcript, record_type: str) -> int:
    assert transcript.accounting is not None
    return transcript.accounting.counts.get(record_type, {}).get("ignored", 0)


# --- 1. a sample marked invalid after the fact -----------------------------------------------


def test_H6_an_invalidated_sample_says_who_why_and_when() -> None:
    """``invalidate_samples`` writes ``EvalSample.invalidation`` (``ProvenanceData``): the
    sample read as a plain pass."""
    transcript = load_sample(UNREAD, "invalid")
    assert transcript.metadata["invalidation"] == {
        "author": "qa-team",
        "reason": "the target was wrong in the dataset",
        "timestamp": "2026-05-04T12:30:00Z",
    }
    [said] = _notices(transcript, "invalidated")
    assert transcript.entries[0] is said
    assert said.level == "warning"
    assert said.text == (
        "This sample was marked invalid by qa-team (2026-05-04T12:30:00Z): "
        "the target was wrong in the dataset"
    )
    assert _zh(said).startswith("此样本已被 qa-team")
    # H-6's outcomes are four: the scored one stays, the invalidation is said apart.
    assert transcript.metadata["outcome"] == "pass"
    assert transcript.metadata["score"] == 1.0  # as Inspect scored it


def test_C2_an_invalidated_sample_s_row_keeps_its_outcome_and_header_says_invalid() -> None:
    rows = {row["sample"]: row for row in turnfold.scan(UNREAD, cache=False, workers=1)}
    assert rows["invalid/1"]["outcome"] == "pass"  # H-6: one of four; C-2 has no other column
    assert rows["invalid/1"]["score"] == 1.0
    assert rows["timeline/1"]["outcome"] == "pass"
    badge = outcome_badge(load_sample(UNREAD, "invalid").metadata, "en")
    assert badge is not None
    assert badge["text"] == "Passed · score 1 · marked invalid"
    assert badge["status"] == "pass"


def test_H6_a_sample_nobody_invalidated_has_no_such_notice() -> None:
    transcript = load_sample(UNREAD, "timeline")
    assert "invalidation" not in transcript.metadata
    assert _notices(transcript, "invalidated") == []


# --- 2. timelines: other views of the same events --------------------------------------------


def test_X2_a_custom_timeline_is_counted_and_named_not_dropped() -> None:
    """A ``Timeline`` groups events the transcript already shows (by uuid): it is not shown
    again, but a notice names it and the load counts it as not shown."""
    transcript = load_sample(UNREAD, "timeline")
    [said] = _notices(transcript, "timelines")
    assert said.text == "Inspect timelines not shown (other views of these events): by-agent"
    assert _zh(said).endswith("by-agent")
    assert _ignored(transcript, "timelines") == 1
    assert [type(e) for e in transcript.entries if not isinstance(e, SystemNotice)] == [
        UserMessage,
        AssistantText,
    ]


# --- 3. model fallbacks ----------------------------------------------------------------------


def test_H1_a_model_fallback_is_said_and_the_answer_names_the_model_that_answered() -> None:
    """Inspect's Anthropic provider records ``output.fallback`` and the sample's
    ``model_fallbacks``: the answer is the fallback model's, and a notice says so."""
    transcript = load_sample(FALLBACK, "fallback")
    [answer] = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert answer.model == "claude-sonnet-4-5"
    [said] = _notices(transcript, "model_fallback")
    assert said.text == "Model fallback: claude-sonnet-4-5 answered in place of claude-opus-4-1"
    assert transcript.entries.index(said) < transcript.entries.index(answer)  # answer stays last
    assert _zh(said) == "模型回退：由 claude-sonnet-4-5 代替 claude-opus-4-1 作答"
    assert transcript.metadata["model_fallbacks"] == [
        {"model": "claude-opus-4-1", "fallback_model": "claude-sonnet-4-5", "count": 1}
    ]


# --- 4. the events of a failed attempt -------------------------------------------------------


def test_H6_a_retried_sample_shows_the_failed_attempt_s_events_apart() -> None:
    """``error_retries[].events`` (from the failed attempt's last model call on) are that
    attempt's: its prompt, answer and the call that crashed, then the retry notice, then the
    attempt that ran last, each with its own prompt (not merged into one turn)."""
    transcript = load_sample(STOPS, "retry")
    entries = transcript.entries
    [kept] = _notices(transcript, "attempt")
    [retried] = _notices(transcript, "retry")
    assert kept.text == "Attempt 1, which failed: its last model call and what followed"
    assert retried.text.startswith("Attempt 1 failed and the sample was retried:")
    first = entries[entries.index(kept) + 1 : entries.index(retried)]
    assert [type(e).__name__ for e in first] == [
        "UserMessage", "Thinking", "AssistantText", "ToolCall",
    ]  # fmt: skip
    assert isinstance(first[0], UserMessage)
    assert first[0].text == "retry: crash once."
    failed = first[-1]
    assert isinstance(failed, ToolCall)
    assert (failed.name, failed.status) == ("flaky", "error")
    rest = entries[entries.index(retried) + 1 :]
    assert isinstance(rest[0], UserMessage)
    assert rest[0].text == "retry: crash once."
    [flaky] = [e for e in rest if isinstance(e, ToolCall) and e.name == "flaky"]
    assert flaky.status == "success"
    assert _zh(kept) == "第 1 次尝试（失败）：其最后一次模型调用及之后的事件"


# --- 5. review and sentinel events -----------------------------------------------------------


def test_H1_a_reviewer_s_termination_says_why() -> None:
    """A tool-result reviewer terminated the sample: the limit event says only that it did,
    the ``review`` event says why."""
    transcript = load_sample(UNREAD, "review")
    [said] = _notices(transcript, "review")
    assert said.level == "warning"
    assert said.text == (
        "The reviewer (strict) terminated the sample after lookup: the result leaks the answer key"
    )
    assert _zh(said).startswith("审查者（strict）")
    # After Inspect's stop marker, so the turn still reads as stopped (P-7), not split.
    stopped = transcript.entries[transcript.entries.index(said) - 1]
    assert isinstance(stopped, AbortMarker)
    assert stopped.reason == "Tool result reviewer requested termination."


def test_H1_a_sentinel_decision_is_shown_an_observation_counted() -> None:
    """A protocol's ``reject`` changed the run: a notice. A monitor's suspicion score and a
    reviewer's ``continue`` are counted as not shown, never dropped without a word."""
    transcript = load_sample(UNREAD, "sentinel")
    [said] = _notices(transcript, "sentinel")
    assert said.text == (
        "Sentinel defer_to_trusted decided to reject (tool_call): the key names the answer sheet"
    )
    assert _zh(said).startswith("哨兵 defer_to_trusted")
    assert _ignored(transcript, "event/sentinel:report") == 1
    assert _ignored(transcript, "event/review:continue") == 1
    assert _notices(transcript, "review") == []


# --- 6. one-hour cache writes in the raw Anthropic response ----------------------------------


def test_U1_one_hour_cache_writes_come_from_the_raw_anthropic_usage() -> None:
    """Inspect's ``ModelUsage`` has one cache-write count; the raw response in the model event's
    ``call`` splits it (``cache_creation.ephemeral_1h_input_tokens``), which prices it."""
    transcript = load_sample(FALLBACK, "fallback")
    [answer] = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert answer.usage is not None
    assert answer.usage.cache_write_tokens == 200
    assert answer.usage.cache_write_1h_tokens == 150
