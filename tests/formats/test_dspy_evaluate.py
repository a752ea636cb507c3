"""``dspy.Evaluate(..., save_as_json=)`` and ``save_as_csv=`` results: one run per example
(spec A-1, H-6, C-1, C-7, L-4). They were neither loaded nor scanned: a scan counted the file
as skipped, a load said only that it was no transcript.

The files are made by the real ``dspy`` 3.4.1 with ``DummyLM`` (``dspy_more_runs.evaluated``):
a ReAct over three examples, one right, one wrong after a failed tool, one whose program raised.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import dspy_more_runs, dspy_runs
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks import dspy_evaluate
from turnfold.formats.source import open_source
from turnfold.model import AssistantError, AssistantText, Thinking, Transcript, UserMessage

dspy = pytest.importorskip("dspy")

FIXTURES = Path(__file__).parents[1] / "fixtures"
JSON_FIXTURE = dspy_more_runs.EVALUATE_JSON
CSV_FIXTURE = dspy_more_runs.EVALUATE_CSV


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh Evaluate run's files, as this machine's DSPy writes them."""
    folder = tmp_path_factory.mktemp("evaluate")
    json_path, csv_path = folder / "results.json", folder / "results.csv"
    result = dspy_more_runs.evaluated(json_path, csv_path)
    assert [score for *_, score in result.results] == [True, False, 0.0]
    return json_path, csv_path


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [(c.call_id, c.name, c.args, c.status) for c in transcript.tool_calls()]


def said(transcript: Transcript) -> list[tuple[str, str]]:
    """Each entry's kind and text (a call's name)."""
    return [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None)
         or getattr(e, "message", ""))
        for e in transcript.entries
    ]  # fmt: skip


def assert_the_two_runs(path: Path) -> None:
    right = turnfold.load(path, sample=0)
    assert said(right) == [
        ("UserMessage", "add 1 and 2"), ("Thinking", "need add"), ("ToolCall", "add"),
        ("Thinking", "done"), ("Thinking", "1+2=3"), ("AssistantText", "3"),
    ]  # fmt: skip
    assert calls_of(right) == [("step-0", "add", {"a": 1, "b": 2}, "success")]
    (add,) = right.tool_calls()
    assert add.result is not None
    assert add.result.text == "3"
    assert right.metadata == {
        "source_format": "dspy-evaluate", "sample": 0, "target": "3",
        "scores": {"exact_match": {"value": True}}, "score": 1.0, "outcome": "pass",
    }  # fmt: skip
    wrong = turnfold.load(path, sample="1")
    assert calls_of(wrong) == [("step-0", "explode", {"x": "2"}, "error")]
    (explode,) = wrong.tool_calls()
    assert explode.result is not None
    assert explode.result.text is not None
    assert explode.result.text.endswith("ValueError: boom: 2")
    assert said(wrong)[-1] == ("AssistantText", "5")
    assert (wrong.metadata["target"], wrong.metadata["score"]) == ("4", 0.0)
    assert wrong.metadata["outcome"] == "fail"
    for transcript in (right, wrong):
        assert transcript.warnings == []
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []


@pytest.mark.parametrize("made", ["fixture", "fresh"])
def test_A1_a_json_of_evaluate_results_is_one_run_per_example(
    made: str, saved: tuple[Path, Path]
) -> None:
    path = JSON_FIXTURE if made == "fixture" else saved[0]
    assert_the_two_runs(path)
    failed = turnfold.load(path, sample=2)
    # The program raised: Evaluate kept an empty prediction and its failure_score. The
    # example's answer is its label, as the other rows' example_answer says.
    assert [type(e) for e in failed.entries] == [UserMessage, AssistantError]
    assert said(failed)[0] == ("UserMessage", "fail")
    error = failed.entries[1]
    assert isinstance(error, AssistantError)
    assert error.message.startswith("No prediction: the program raised on this example")
    assert failed.metadata["outcome"] == "error"
    assert (failed.metadata["target"], failed.metadata["score"]) == ("0", 0.0)
    # A file of several examples is no one run: the error names the file and says how.
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(path)
    assert raised.value.source == str(path)
    assert "3 examples" in str(raised.value)
    assert "sample=n" in str(raised.value)
    with pytest.raises(ValueError, match="holds 3 runs: no sample=3"):
        turnfold.load(path, sample=3)


def test_A1_a_csv_of_evaluate_results_reads_as_its_json_does(saved: tuple[Path, Path]) -> None:
    """``save_as_csv`` writes each value with ``str()``: the trajectory is read back as the
    Python literal of its dict, the score as ``True``/``False``; DSPy's own CSV writer takes its
    columns from the first row, so the CSV is of the two examples that ran."""
    for path in (CSV_FIXTURE, saved[1]):
        assert_the_two_runs(path)
        with pytest.raises(TranscriptFormatError, match="2 examples"):
            turnfold.load(path)


def test_L4_a_csv_trajectory_that_is_no_literal_is_warned_of_and_the_rest_read(
    tmp_path: Path,
) -> None:
    rows = CSV_FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    header, first = rows[0], rows[1]
    start, end = first.index('"{'), first.index('}"') + 2
    objects = first[:start] + "\"{'thought_0': Prediction(answer=3)}\"" + first[end:]
    path = tmp_path / "objects.csv"
    path.write_text(header + objects, encoding="utf-8")
    transcript = turnfold.load(path)
    assert [w.reason for w in transcript.warnings][:1] == [
        "a trajectory that is no Python literal (an object DSPy wrote with str()): not read"
    ]
    assert transcript.warnings[0].line == 2
    assert said(transcript)[0] == ("UserMessage", "add 1 and 2")
    assert said(transcript)[-1] == ("AssistantText", "3")
    assert transcript.metadata["outcome"] == "pass"


def test_C1_a_scan_makes_a_row_of_each_example(saved: tuple[Path, Path], tmp_path: Path) -> None:
    shutil.copy(JSON_FIXTURE, tmp_path / "results.json")
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    assert corpus.skipped == 0
    key = str(tmp_path / "results.json")
    rows = {row["key"]: row for row in corpus}
    assert list(rows) == [f"{key}#0", f"{key}#1", f"{key}#2"]
    assert [(r["format"], r["agent"], r["title"], r["tool_calls"], r["failed_tools"],
             r["errors"], r["outcome"], r["score"], r["error"]) for r in rows.values()] == [
        ("dspy-evaluate", "dspy", "add 1 and 2", 1, 0, 0, "pass", 1.0, None),
        ("dspy-evaluate", "dspy", "add 2 and 2", 1, 1, 0, "fail", 0.0, None),
        ("dspy-evaluate", "dspy", "fail", 0, 0, 1, "error", 0.0, None),
    ]  # fmt: skip
    assert corpus[f"{key}#1"] == turnfold.load(key, sample=1)
    # A CSV named to the scan (a walk opens JSON files only) is read as its rows too.
    listed = turnfold.scan([str(saved[1])], cache=False, workers=1)
    assert [(r["key"], r["outcome"]) for r in listed] == [
        (f"{saved[1]}#0", "pass"), (f"{saved[1]}#1", "fail"),
    ]  # fmt: skip


def test_A1_the_results_of_a_program_with_no_trajectory_are_its_prompts_and_answers(
    tmp_path: Path,
) -> None:
    """A ``ChainOfThought`` scored by a number: the example and the prediction share
    ``answer``, which tells them apart."""
    path = tmp_path / "cot.json"
    examples = [dspy.Example(question=q, answer=a).with_inputs("question")
                for q, a in (("2+2?", "4"), ("3+3?", "6"))]  # fmt: skip
    lm = dspy_runs.scripted([{"reasoning": "two twos", "answer": "4"},
                             {"reasoning": "a guess", "answer": "7"}])  # fmt: skip

    def half(example: Any, prediction: Any, trace: Any = None) -> float:
        return 1.0 if example.answer == prediction.answer else 0.5

    with dspy.context(lm=lm):
        dspy.Evaluate(devset=examples, metric=half, num_threads=1, save_as_json=str(path))(
            dspy.ChainOfThought("question -> answer")
        )
    assert list(json.loads(path.read_text())[0]) == [
        "question", "example_answer", "reasoning", "pred_answer", "half",
    ]  # fmt: skip
    first, second = (turnfold.load(path, sample=n) for n in (0, 1))
    assert [type(e) for e in first.entries] == [UserMessage, Thinking, AssistantText]
    assert said(second) == [("UserMessage", "3+3?"), ("Thinking", "a guess"),
                            ("AssistantText", "7")]  # fmt: skip
    assert (first.metadata["outcome"], first.metadata["score"]) == ("pass", 1.0)
    assert "outcome" not in second.metadata  # 0.5 says neither pass nor fail
    assert second.metadata["score"] == 0.5


def _fixture_files() -> list[Path]:
    return sorted(
        p for p in FIXTURES.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl") and "LICENSES" not in p.parts
    )  # fmt: skip


def test_A1_no_other_json_array_or_json_lines_fixture_reads_as_evaluate_results() -> None:
    """Detection goes by a metric's score ending every row and a trajectory or an
    ``example_``/``pred_`` pair: no other fixture (message lists, dataset rows with rewards,
    eval logs) has them, and each still detects as the format it did."""
    ours = {JSON_FIXTURE}
    checked = 0
    for path in _fixture_files():
        source, stream = open_source(path)
        try:
            evidence = dspy_evaluate.detect(source)
            assert evidence.fits == (path in ours), path
            if path in ours:
                assert which_format(source) == "dspy-evaluate"
            checked += 1
        finally:
            if stream is not None:
                stream.close()
    assert checked > 100
    other_csv = FIXTURES / "not-evaluate.csv"
    assert dspy_evaluate.detect_path(other_csv) is None  # no such file: not claimed
    assert dspy_evaluate.detect_path(JSON_FIXTURE) is None  # JSON: read as records


def test_A1_a_list_of_rows_ending_with_a_reward_is_no_evaluate_result(tmp_path: Path) -> None:
    rows = [
        {"question": "q", "answer": "a", "reward": 1.0},
        {"question": "r", "answer": "b", "reward": 0.0},
    ]
    source, _ = open_source(json.dumps(rows))
    assert not dspy_evaluate.detect(source).fits
    path = tmp_path / "rows.csv"
    path.write_text("question,answer,reward\nq,a,1.0\n", encoding="utf-8")
    assert dspy_evaluate.detect_path(path) is None
