"""Inspect AI: a sample's duration is Inspect's own timing of it, not its stamps' span (U-3,
C-2); a model-graded scorer's grader calls are not the agent's tool calls (C-2, U-3); a
multi-metric scorer's mapping gives a score and an outcome where they are well defined (H-6).

On two logs the real ``inspect_ai`` 0.3.285 wrote: ``inspect-timing/timing_mockllm.eval``
(``timing_recipe.py``: one scorer scoring each sample with a mapping of two metrics; the
computer's clock, as Inspect read it, set 43 hours forward mid-run as the ``jumped`` sample's
tool call began) and ``inspect-leftovers/leftovers_mockllm.eval`` (``leftovers_recipe.py``:
``match()`` and ``model_graded_qa()``, whose grader call Inspect records in its scorer's span).
Expectations come from the logs as inspect_ai reads them, apart from the loader.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import ModelEvent, SpanBeginEvent, ToolEvent
from inspect_ai.log import EvalSample, read_eval_log_sample

import turnfold
from tests.inspect_samples import HARNESSES, load_sample
from turnfold.corpus import scan
from turnfold.model import ToolCall, Transcript
from turnfold.process import Turn, is_scoring_call, project
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, session_header
from turnfold.session import session_facts
from turnfold.tools import format_duration

TIMING = HARNESSES / "inspect-timing" / "timing_mockllm.eval"
LEFTOVERS = HARNESSES / "inspect-leftovers" / "leftovers_mockllm.eval"


def _record(path: Path, sample: str) -> EvalSample:
    return read_eval_log_sample(str(path), id=sample, epoch=1)


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    corpus = scan(path, workers=1, cache=False)
    return {row["sample"]: row for row in corpus}


def _header_text(transcript: Transcript) -> str:
    header = session_header(transcript, "en")
    assert header is not None
    return str(header["text"])


# --- 1. a sample's duration -------------------------------------------------------------------


def test_U3_a_sample_s_duration_is_inspect_s_timing_when_its_clock_jumped() -> None:
    """The ``jumped`` sample's events and ``completed_at`` are stamped 43 hours after its start,
    while Inspect timed it at a fraction of a second (``total_time``, on a monotonic clock):
    the header and the row give Inspect's time, its start and end as Inspect recorded them, and
    a warning says the two disagree."""
    record = _record(TIMING, "jumped")
    assert record.started_at is not None
    assert record.completed_at is not None
    assert record.total_time is not None
    started = datetime.fromisoformat(record.started_at)
    completed = datetime.fromisoformat(record.completed_at)
    assert (completed - started).total_seconds() > 43 * 3600  # the wall clock's span
    # The events were stamped on the clock set forward too.
    assert (max(e.timestamp for e in record.events) - started).total_seconds() > 43 * 3600
    transcript = turnfold.load(TIMING, sample="jumped", epoch=1)
    facts = session_facts(transcript)
    assert facts.duration_s == record.total_time
    assert (facts.started, facts.ended) == (started, completed)
    assert f"· {format_duration(record.total_time * 1000, hide_trailing_zeros=True)} ·" in (
        _header_text(transcript)
    )
    [warning] = transcript.warnings
    assert "43h apart" in warning.reason
    assert "total_time" in warning.reason
    assert warning.source == str(TIMING)
    row = _rows(TIMING)["jumped/1"]
    assert (row["duration_s"], row["started"], row["ended"]) == (
        record.total_time,
        started,
        completed,
    )
    assert row["warnings"] == 1


@pytest.mark.parametrize("sample", ["split", "agree"])
def test_U3_a_sample_s_duration_is_its_total_time_and_no_warning_when_clocks_agree(
    sample: str,
) -> None:
    record = _record(TIMING, sample)
    transcript = load_sample(TIMING, sample)  # no warning, every record accounted for
    assert session_facts(transcript).duration_s == record.total_time
    assert _rows(TIMING)[f"{sample}/1"]["duration_s"] == record.total_time


def test_U3_without_total_time_the_duration_is_started_at_to_completed_at() -> None:
    """An older sample records no ``total_time``: Inspect's ``started_at`` and
    ``completed_at`` give it, rather than its events' stamps (the ``jumped`` sample's events
    are stamped 43 hours on, its record's end is not: only the events jumped)."""
    record = _record(TIMING, "jumped").model_dump(mode="json")
    record["total_time"] = record["working_time"] = None
    began = datetime.fromisoformat(record["started_at"])
    record["completed_at"] = (began + timedelta(seconds=3)).isoformat()
    transcript = turnfold.load(record)
    facts = session_facts(transcript)
    assert facts.duration_s == 3.0
    [warning] = transcript.warnings
    assert "43h apart" in warning.reason
    assert "started_at to completed_at" in warning.reason


# --- 2. a model-graded scorer's grader calls ---------------------------------------------------


def _agent_calls(record: EvalSample) -> int:
    """The calls the sample's run made, as Inspect records them: its tool events, and the model
    calls of another model role (side calls) outside the scorers' spans."""
    spans = {e.id: e for e in record.events if isinstance(e, SpanBeginEvent)}

    def scoring(span: str | None) -> bool:
        while span is not None and span in spans:
            if spans[span].type in ("scorers", "scorer"):
                return True
            span = spans[span].parent_id
        return False

    tools = sum(1 for e in record.events if isinstance(e, ToolEvent))
    side = sum(
        1 for e in record.events if isinstance(e, ModelEvent) and e.role and not scoring(e.span_id)
    )
    return tools + side


def _tool_nodes(node: Any) -> list[dict[str, Any]]:
    """Every tool node of a view, at any depth (a sub-agent's transcript's too)."""
    if isinstance(node, list):
        return [found for child in node for found in _tool_nodes(child)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("kind") == "tool" else []
    return own + [found for value in node.values() for found in _tool_nodes(value)]


def _graders(record: EvalSample) -> int:
    spans = {e.id: e for e in record.events if isinstance(e, SpanBeginEvent)}
    return sum(
        1
        for e in record.events
        if isinstance(e, ModelEvent) and e.span_id in spans and spans[e.span_id].type == "scorer"
    )


@pytest.mark.parametrize("sample", ["after", "check", "plain"])
def test_C2_a_grader_call_is_not_one_of_the_agent_s_tool_calls(sample: str) -> None:
    """``model_graded_qa`` asks its grader after the run: the call is shown, named for the
    scorer, but the headers, the row's ``tool_calls`` and the tool-call table count the calls
    the run made alone; its tokens are counted (U-1: Inspect's ``model_usage`` holds them)."""
    record = _record(LEFTOVERS, sample)
    assert _graders(record) == 1
    expected = _agent_calls(record)
    transcript = load_sample(LEFTOVERS, sample)
    [grader] = [c for c in transcript.tool_calls() if is_scoring_call(c)]
    assert (grader.name, grader.meta["scorer"]) == ("model_graded_qa", "model_graded_qa")
    assert len(transcript.tool_calls()) == expected + 1  # shown, where it ran
    [turn] = [item for item in project(transcript) if isinstance(item, Turn)]
    assert grader.id in repr(turn.process)
    assert turn.header.tool_count == expected
    drawn = _tool_nodes(build_view_model(transcript)["nodes"])
    assert [n.get("scoring", False) for n in drawn if n["call_id"] == grader.call_id] == [True]
    assert sum(1 for n in drawn if not n.get("scoring")) == expected
    facts = session_facts(transcript)
    assert (facts.tool_calls, facts.failed_tools) == (expected, 0)
    word = "tool" if expected == 1 else "tools"
    assert f"· {expected} {word} ·" in _header_text(transcript)
    usage = list(record.model_usage.values())
    assert facts.tokens["input_tokens"] == sum(u.input_tokens for u in usage)
    corpus = scan(LEFTOVERS, workers=1, cache=False)
    [row] = [r for r in corpus if r["sample"] == f"{sample}/1"]
    assert (row["tool_calls"], row["failed_tools"]) == (expected, 0)
    assert row["input_tokens"] == facts.tokens["input_tokens"]
    calls = [c for c in corpus.tool_calls().to_pylist() if c["key"] == row["key"]]
    assert len(calls) == expected
    assert "model_graded_qa" not in {c["name"] for c in calls}
    [turn_row] = [t for t in corpus.turns().to_pylist() if t["key"] == row["key"]]
    assert turn_row["tool_calls"] == expected


def test_C2_a_grader_call_that_failed_is_no_failed_tool_of_the_agent() -> None:
    """The grader's model call erred (the ``plain`` sample's, its error set in the record):
    the call shows the error, and no header or row counts it among the failed tools."""
    record = _record(LEFTOVERS, "plain").model_dump(mode="json")
    spans = {e["id"]: e for e in record["events"] if e["event"] == "span_begin"}
    [grading] = [
        e
        for e in record["events"]
        if e["event"] == "model" and spans.get(e["span_id"], {}).get("type") == "scorer"
    ]
    grading["error"] = "RuntimeError: the grader is down"
    transcript = turnfold.load(record)
    [grader] = [c for c in transcript.tool_calls() if is_scoring_call(c)]
    assert grader.status == "error"
    agent = [c for c in transcript.tool_calls() if not is_scoring_call(c)]
    facts = session_facts(transcript)
    assert (facts.tool_calls, facts.failed_tools) == (len(agent), 0)
    assert all(isinstance(c, ToolCall) and c.status == "success" for c in agent)


# --- 3. a multi-metric scorer's mapping ---------------------------------------------------------


def test_H6_metrics_that_differ_have_no_one_score_and_fail_as_scorers_would() -> None:
    """``Score(value={"a": 1, "b": 0})``: no number stands for both (the row's score is null,
    the header shows each), and ``b``'s 0 fails the sample, as a second scorer's would."""
    [score] = _record(TIMING, "split").scores.values()  # type: ignore[union-attr]
    assert score.value == {"a": 1, "b": 0}
    transcript = load_sample(TIMING, "split")
    assert transcript.metadata["score"] == {"a": 1.0, "b": 0.0}
    assert transcript.metadata["outcome"] == "fail"
    assert "Failed · score a 1, b 0" in render_text(build_view_model(transcript))
    row = _rows(TIMING)["split/1"]
    assert (row["score"], row["outcome"]) == (None, "fail")


@pytest.mark.parametrize("sample", ["agree", "jumped"])
def test_H6_metrics_that_agree_are_one_score(sample: str) -> None:
    """``{"a": "C", "b": 1}`` and ``{"a": 1, "b": 1}``: every reduction of the metrics is 1 (a
    letter as Inspect counts it), so the sample's score is 1 and it passes."""
    [score] = _record(TIMING, sample).scores.values()  # type: ignore[union-attr]
    assert isinstance(score.value, dict)
    assert len(score.value) == 2
    transcript = turnfold.load(TIMING, sample=sample, epoch=1)
    assert (transcript.metadata["score"], transcript.metadata["outcome"]) == (1.0, "pass")
    row = _rows(TIMING)[f"{sample}/1"]
    assert (row["score"], row["outcome"]) == (1.0, "pass")
