"""Inspect AI: a side call after the final answer leaves the answer the answer (spec P-2, H-1); a
model-graded scorer's calls are read, so the session header's tokens are Inspect's own
``model_usage`` (U-1, U-3, H-1).

On ``tests/fixtures/harnesses/inspect-leftovers/leftovers_mockllm.eval``, which the real
``inspect_ai`` 0.3.285 wrote (``leftovers_recipe.py``): in each sample the eval's model calls
``lookup`` and answers ``42``; then the solver asks the ``critic`` role a question (``after``) or
has the ``grader`` role grade the conversation (``check``), or does nothing more (``plain``).
``model_graded_qa()`` scores every sample by asking the ``grader`` role, in its scorer's span.
"""

from __future__ import annotations

import pytest
from inspect_ai.log import read_eval_log_sample

from tests.inspect_samples import HARNESSES, load_sample
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.process import Turn, project
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts

LEFTOVERS = HARNESSES / "inspect-leftovers" / "leftovers_mockllm.eval"
SAMPLES = ("after", "check", "plain")


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


def _side_calls(transcript: Transcript) -> list[ToolCall]:
    return [c for c in transcript.tool_calls() if c.meta.get("side_call")]


# --- 1. a side call after the answer -------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "name", "asked"),
    [
        ("after", "critic model", "Critic: is 42 right?"),
        ("check", "grader model", "Grade the work so far, in one word."),
    ],
)
def test_P2_a_side_call_after_the_answer_leaves_the_answer_the_answer(
    sample: str, name: str, asked: str
) -> None:
    """The solver asks another model after the eval's model answered: the call is a step of the
    turn's process, and the answer stays the answer, outside it."""
    transcript = load_sample(LEFTOVERS, sample)
    side = next(c for c in _side_calls(transcript) if c.name == name)
    assert side.description == asked
    answer = next(e for e in transcript.entries if isinstance(e, AssistantText) and e.text == "42")
    assert transcript.entries.index(side) > transcript.entries.index(answer)  # as Inspect ran it
    [turn] = _turns(transcript)
    assert turn.answer is answer
    assert turn.header.status == "completed"
    assert side.id in repr(turn.process)
    assert answer.id not in repr(turn.process)


def test_P2_the_text_rendering_ends_the_turn_with_its_answer() -> None:
    """The readable text (W-4's text/plain) shows the answer after the folded process, as it
    does for a turn with no side call."""
    shown = render_text(build_view_model(load_sample(LEFTOVERS, "after")))
    assert shown.rstrip().endswith("42")


# --- 2. a model-graded scorer's calls -------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES)
def test_U1_the_header_s_tokens_are_inspect_s_model_usage(sample: str) -> None:
    """Inspect's ``model_usage`` counts the grader the scorer asked: the header's tokens do too,
    each response once."""
    record = read_eval_log_sample(str(LEFTOVERS), id=sample, epoch=1)
    usage = list(record.model_usage.values())
    tokens = session_facts(load_sample(LEFTOVERS, sample)).tokens
    assert tokens == {
        "input_tokens": sum(u.input_tokens for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
    }


def test_H1_a_model_graded_scorer_s_call_is_the_scorer_s() -> None:
    """``model_graded_qa`` asks the grader in its scorer's span: a call named for the scorer,
    after the answer, its grading prompt and verdict (with its usage) under it; the answer and
    the sample's score stay as they were."""
    transcript = load_sample(LEFTOVERS, "plain")
    [scorer] = _side_calls(transcript)
    assert (scorer.name, scorer.status, scorer.meta.get("scorer")) == (
        "model_graded_qa",
        "success",
        "model_graded_qa",
    )
    assert scorer.args["model"] == "mockllm/grader"
    assert scorer.args["role"] == "grader"
    assert scorer.result is not None
    assert scorer.result.text == "The submission says 42, as the criterion does.\n\nGRADE: C"
    assert transcript.entries[-1] is scorer  # the scoring came after the run
    assert scorer.subagent is not None
    child = scorer.subagent.transcript
    assert child is not None
    [prompt] = [e for e in child.entries if isinstance(e, UserMessage)]
    assert "[Submission]: 42" in prompt.text
    [verdict] = [e for e in child.entries if isinstance(e, AssistantText)]
    assert verdict.model == "mockllm/grader"
    assert verdict.usage is not None
    assert (verdict.usage.input_tokens, verdict.usage.output_tokens) == (200, 7)
    [turn] = _turns(transcript)
    assert turn.answer is not None
    assert turn.answer.text == "42"
    assert transcript.metadata["score"] == {"match": 1.0, "model_graded_qa": 1.0}
    assert transcript.accounting is not None
    assert transcript.accounting.counts["scoring/model"] == {"mapped": 1}


def test_H1_the_grader_of_a_side_call_and_of_the_scorer_are_two_calls() -> None:
    """The ``check`` sample asks the grader twice: in the solver (a side call of the run) and in
    the scorer (the scorer's call): each is shown once, where it ran."""
    transcript = load_sample(LEFTOVERS, "check")
    assert [(c.name, c.meta.get("scorer")) for c in _side_calls(transcript)] == [
        ("grader model", None),
        ("model_graded_qa", "model_graded_qa"),
    ]
