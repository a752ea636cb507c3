"""Inspect AI samples that stop short of their answer, and what their logs say about it (spec
H-1, H-6, L-3, X-2), on logs the real ``inspect_ai`` 0.3.285 wrote
(``tests/fixtures/harnesses/inspect-stops/stops_recipe.py``): a time limit that cut a running tool,
an operator's cancel, a sample retried after a crash, an approver's termination, a score of
NaN in a ``.json`` log, and a log still being written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import turnfold
from turnfold import codec
from turnfold.formats.harnesses import inspect_log
from turnfold.model import AbortMarker, AssistantError, SystemNotice, ToolCall, Transcript

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "inspect-stops"
STOPS = FIXTURES / "stops_four-samples.eval"
TIME_JSON = FIXTURES / "stops_time-limit.json"
RUNNING = FIXTURES / "stops_running.eval"


def _load(path: Path, sample: str) -> Transcript:
    return turnfold.load(path, sample=sample, epoch=1)


def _call(transcript: Transcript, name: str) -> ToolCall:
    [call] = [c for c in transcript.tool_calls() if c.name == name]
    return call


# --- NaN in a .json log ---------------------------------------------------------------------


def test_H1_a_json_log_with_a_score_of_nan_loads() -> None:
    """Python's ``json`` writes a NaN score (and its metric's NaN mean) as a bare ``NaN``,
    which Inspect's ``.json`` log holds and no ijson backend reads: the log was refused."""
    assert b": NaN" in TIME_JSON.read_bytes()
    assert inspect_log.samples(TIME_JSON) == [("time", 1)]
    transcript = turnfold.load(TIME_JSON)
    assert math.isnan(transcript.metadata["scores"]["nan_scorer"]["value"])
    assert math.isnan(transcript.metadata["score"]["nan_scorer"])
    assert transcript.metadata["score"]["parts"] == {"correct": 0.0, "short": 1.0}
    assert transcript.metadata["eval_status"] == "success"
    [(key, scanned)] = list(inspect_log.transcripts(TIME_JSON))
    assert key == ("time", 1)
    assert scanned.entries == transcript.entries


def test_H1_text_that_spells_nan_or_infinity_stays_text(tmp_path: Path) -> None:
    """Only the bare constants are numbers: the same words in a string (with escaped quotes
    and backslashes around them) are text, and ``-Infinity`` is read as a number."""
    log = json.loads(TIME_JSON.read_text(encoding="utf-8"))
    said = 'NaN, "Infinity" \\ -Infinity: NaN'
    sample = log["samples"][0]
    sample["scores"]["parts"]["explanation"] = said
    sample["scores"]["match"]["value"] = -math.inf
    path = tmp_path / "spelled.json"
    path.write_text(json.dumps(log, indent=2), encoding="utf-8")
    metadata = turnfold.load(path).metadata
    assert metadata["scores"]["parts"]["explanation"] == said
    assert metadata["scores"]["match"]["value"] == -math.inf


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_H1_a_bare_nan_split_between_reads_is_read_whole(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The stream is read in parts; a constant, a string or an escape cut between two of them
    reads as one."""
    whole = turnfold.load(TIME_JSON)
    monkeypatch.setattr(inspect_log, "_NON_FINITE_CHUNK", chunk)
    transcript = turnfold.load(TIME_JSON)
    assert math.isnan(transcript.metadata["scores"]["nan_scorer"]["value"])
    assert transcript.entries == whole.entries
    assert codec.dumps_exact(transcript.metadata) == codec.dumps_exact(whole.metadata)


# --- a limit, a cancel, a retry, a termination ----------------------------------------------


@pytest.mark.parametrize("path", [STOPS, TIME_JSON], ids=lambda p: p.suffix)
def test_L3_a_tool_a_time_limit_cut_off_is_cancelled_not_a_success(path: Path) -> None:
    """Inspect leaves the ``tool`` event of a call the limit cut ``pending``, its result empty
    and no error: the call never finished (it read as a success)."""
    transcript = _load(path, "time")
    sleeper = _call(transcript, "sleeper")
    assert sleeper.status == "cancelled"
    assert sleeper.result is None or not sleeper.result.text
    assert isinstance(transcript.entries[-1], AbortMarker)
    assert transcript.entries[-1].reason == "Time limit exceeded. limit: 1 seconds"
    assert transcript.metadata["outcome"] == "incomplete"
    assert transcript.metadata["limit"]["type"] == "time"


def test_H6_a_cancelled_sample_is_incomplete_not_an_error() -> None:
    """An operator's cancel: Inspect records the cancellation's repr as the sample's error
    and counts it as no error (``is_cancellation_message``)."""
    transcript = _load(STOPS, "cancel")
    assert transcript.metadata["outcome"] == "incomplete"
    assert "error" not in transcript.metadata
    assert transcript.metadata["cancelled"].startswith("CancelledError(")
    assert not [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert isinstance(transcript.entries[-1], AbortMarker)
    assert transcript.entries[-1].reason == "The sample was cancelled"


def test_H1_an_interrupted_tool_is_a_cancelled_plain_call_not_a_sub_agent() -> None:
    """The ``interrupt`` event is in the tool's own span: it stops the agent that called the
    tool, not a sub-agent of the tool's (the call became a sub-agent of one stop marker)."""
    transcript = _load(STOPS, "cancel")
    stop = _call(transcript, "stop")
    assert stop.subagent is None
    assert stop.status == "cancelled"
    after = transcript.entries[transcript.entries.index(stop) + 1]
    assert isinstance(after, AbortMarker)
    assert after.reason == "interrupted (user_cancel, during tool_call)"


def test_H6_a_retried_sample_shows_the_attempts_that_failed() -> None:
    """``retry_on_error``: the sample is the attempt that succeeded; the errors of those that
    failed are in ``error_retries``, which were dropped."""
    transcript = _load(STOPS, "retry")
    assert transcript.metadata["error_retries"] == ["RuntimeError('the first attempt crashed')"]
    assert transcript.metadata["outcome"] == "pass"
    retries = [
        e for e in transcript.entries if isinstance(e, SystemNotice) and e.subtype == "retry"
    ]
    assert [(n.level, n.text) for n in retries] == [
        ("warning", "Attempt 1 failed and the sample was retried: "
         "RuntimeError('the first attempt crashed')"),
    ]  # fmt: skip
    assert not [e for e in transcript.entries if isinstance(e, AssistantError)]


def test_H6_role_usage_goes_to_metadata_beside_model_usage() -> None:
    transcript = _load(STOPS, "retry")
    assert set(transcript.metadata["model_usage"]) == {"mockllm/model", "mockllm/critic"}
    assert transcript.metadata["role_usage"] == {
        "critic": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 180,
                   "input_tokens_cache_write": 10, "input_tokens_cache_read": 50,
                   "reasoning_tokens": 5},
    }  # fmt: skip
    assert "role_usage" not in _load(STOPS, "time").metadata  # Inspect writes {} without roles


def test_H1_a_call_an_approver_terminated_says_why() -> None:
    """The terminated call's ``tool`` event is ``failed`` with no error and no result; the
    approver's reason is in its ``approval`` event (the call showed an empty error)."""
    transcript = _load(STOPS, "terminate")
    bash = _call(transcript, "bash")
    assert bash.status == "error"
    assert bash.result is not None
    assert bash.result.text == (
        "The approver (gatekeeper) decided to terminate: shutting the host down is not allowed"
    )
    assert transcript.metadata["limit"]["type"] == "operator"
    assert transcript.metadata["outcome"] == "incomplete"


# --- a log still being written --------------------------------------------------------------


def test_H1_an_eval_log_still_being_written_says_it_started() -> None:
    """No ``header.json`` yet: Inspect reads the log as ``started``; only the finished sample
    is in it."""
    assert inspect_log.samples(RUNNING) == [("fast", 1)]
    transcript = turnfold.load(RUNNING)
    assert transcript.metadata["eval_status"] == "started"
    assert transcript.metadata["task"] == "stops"
    assert transcript.metadata["scores"]["match"]["value"] == "I"  # it answered no number
    assert transcript.metadata["outcome"] == "fail"


# --- nothing lost ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [STOPS, TIME_JSON, RUNNING], ids=lambda p: p.name)
def test_X2_every_record_of_every_stopped_sample_is_accounted_for(path: Path) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    assert log.samples is not None
    for sample in log.samples:
        transcript = _load(path, str(sample.id))
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []
        assert transcript.warnings == []
        calls = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
        # The calls of the failed attempts' kept events come first, each attempt's own.
        retried = [
            c
            for r in sample.error_retries or []
            for e in r.events or []
            if e.event == "model"
            for c in e.output.choices[0].message.tool_calls or []
        ]
        shown = [c.call_id for c in transcript.tool_calls() if not c.meta.get("side_call")]
        assert shown == [c.id for c in retried + calls]
