"""The ``EvaluationResult`` ``dspy.Evaluate(...)(program)`` returns, in memory: one run per
example, as the file its ``save_as_json=`` wrote (spec A-1, H-6, C-1). It read as one plain
``Prediction`` whose answer was its ``score`` and ``results``.

The runs are of the real ``dspy`` with ``DummyLM`` (``dspy_more_runs.evaluated``): a ReAct over
three examples, one right, one wrong after a failed tool, one whose program raised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import dspy_more_runs, dspy_runs
from turnfold.formats import TranscriptFormatError
from turnfold.model import AssistantError, Transcript

dspy = pytest.importorskip("dspy")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """One evaluation: its ``EvaluationResult`` and the JSON it saved."""
    path = tmp_path_factory.mktemp("evaluate") / "results.json"
    result = dspy_more_runs.evaluated(path)
    assert type(result).__name__ == "EvaluationResult"
    return result, path


def said(transcript: Transcript) -> list[tuple[str, Any]]:
    """Each entry's kind and text (a call's name and status)."""
    return [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "message", None)
         or (getattr(e, "name", None), getattr(e, "status", None)))
        for e in transcript.entries
    ]  # fmt: skip


def test_A1_an_evaluation_result_is_the_runs_its_saved_json_holds(
    evaluated: tuple[Any, Path],
) -> None:
    result, path = evaluated
    runs = [turnfold.load(result, sample=n) for n in range(3)]
    assert [said(run) for run in runs] == [
        [("UserMessage", "add 1 and 2"), ("Thinking", "need add"), ("ToolCall", ("add", "success")),
         ("Thinking", "done"), ("Thinking", "1+2=3"), ("AssistantText", "3")],
        [("UserMessage", "add 2 and 2"), ("Thinking", "explode first"),
         ("ToolCall", ("explode", "error")), ("Thinking", "guess"),
         ("Thinking", "a guess"), ("AssistantText", "5")],
        [("UserMessage", "fail"), ("AssistantError", said(runs[2])[1][1])],
    ]  # fmt: skip
    assert isinstance(runs[2].entries[1], AssistantError)
    assert runs[2].entries[1].message.startswith("No prediction: the program raised")
    assert [(r.metadata["target"], r.metadata["score"], r.metadata["outcome"]) for r in runs] == [
        ("3", 1.0, "pass"), ("4", 0.0, "fail"), ("0", 0.0, "error"),
    ]  # fmt: skip
    for place, run in enumerate(runs):
        saved = turnfold.load(path, sample=place)
        assert run.entries == saved.entries
        # The metric's name is in the file alone (its column): in memory, no "scores".
        assert run.metadata == {k: v for k, v in saved.metadata.items() if k != "scores"}
        assert run.warnings == []
        assert run.accounting is not None
        assert run.accounting.unaccounted == []


def test_A1_an_evaluation_result_of_several_examples_is_no_one_run(
    evaluated: tuple[Any, Path],
) -> None:
    result, _ = evaluated
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(result)
    assert "3 examples" in str(raised.value)
    assert "turnfold.load(result, sample=n)" in str(raised.value)
    with pytest.raises(ValueError, match="holds 3 runs: no sample=3"):
        turnfold.load(result, sample=3)


def test_C1_a_scan_of_an_evaluation_result_is_a_row_per_example_as_of_its_file(
    evaluated: tuple[Any, Path],
) -> None:
    result, path = evaluated
    columns = ("sample", "format", "agent", "title", "tool_calls", "failed_tools", "errors",
               "outcome", "score", "error")  # fmt: skip
    corpus = turnfold.scan(result, cache=False, workers=1)
    saved = turnfold.scan([str(path)], cache=False, workers=1)
    assert [row["key"] for row in corpus] == ["#0", "#1", "#2"]
    assert [row["key"] for row in saved] == [f"{path}#{n}" for n in range(3)]
    assert [tuple(row[c] for c in columns) for row in corpus] == [
        tuple(row[c] for c in columns) for row in saved
    ]
    assert [row["title"] for row in corpus] == ["add 1 and 2", "add 2 and 2", "fail"]
    assert corpus["#1"] == turnfold.load(result, sample=1)


def test_A1_in_memory_the_example_s_inputs_are_the_prompt_its_other_fields_the_target() -> None:
    """A saved file does not say which fields were inputs; the ``Example`` does
    (``with_inputs``): a label the prediction does not share is the target, not the prompt."""
    examples = [
        dspy.Example(question="2+2?", answer="4", source="book").with_inputs("question"),
    ]
    lm = dspy_runs.scripted([{"reasoning": "two twos", "answer": "4"}])

    def exact(example: Any, prediction: Any, trace: Any = None) -> bool:
        return bool(example.answer == prediction.answer)

    with dspy.context(lm=lm):
        result = dspy.Evaluate(devset=examples, metric=exact, num_threads=1)(
            dspy.ChainOfThought("question -> answer")
        )
    run = turnfold.load(result)
    assert said(run) == [("UserMessage", "2+2?"), ("Thinking", "two twos"),
                         ("AssistantText", "4")]  # fmt: skip
    assert run.metadata["target"] == {"answer": "4", "source": "book"}
    assert (run.metadata["score"], run.metadata["outcome"]) == (1.0, "pass")


def test_H6_a_metric_s_prediction_is_its_score_and_a_score_of_no_number_is_warned_of() -> None:
    """A metric may return ``dspy.Prediction(score=..., feedback=...)`` (GEPA's), which
    ``Evaluate`` sums as its number: the run's score is that number. A score that is no number
    at all is said in a warning, the run still shown."""
    from dspy.evaluate.evaluate import EvaluationResult

    examples = [dspy.Example(question="2+2?", answer="4").with_inputs("question")]
    lm = dspy_runs.scripted([{"reasoning": "two twos", "answer": "4"}])

    def graded(example: Any, prediction: Any, trace: Any = None) -> Any:
        return dspy.Prediction(score=1, feedback="right")

    with dspy.context(lm=lm):
        result = dspy.Evaluate(devset=examples, metric=graded, num_threads=1)(
            dspy.ChainOfThought("question -> answer")
        )
    run = turnfold.load(result)
    assert (run.metadata["score"], run.metadata["outcome"]) == (1.0, "pass")
    assert run.warnings == []

    ((example, prediction, _),) = result.results
    odd = turnfold.load(EvaluationResult(score=0, results=[(example, prediction, object())]))
    assert said(odd)[-1] == ("AssistantText", "4")
    assert "score" not in odd.metadata
    assert [w.reason for w in odd.warnings] == ["result #0: a score that is no number, not read"]
