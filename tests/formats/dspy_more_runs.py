"""More scripted DSPy runs, offline (``dspy.utils.DummyLM``, as ``dspy_runs``), for the DSPy
tests of a module of several predictors, a ReAct run cut to fit the context window, and
``dspy.Evaluate``'s saved results.

``planned``: a module whose ``plan`` predictor runs before its ``ReAct`` (two predictors; the
``Prediction`` it returns is the ReAct's, so no entry of it shows the plan). ``cut``: a ReAct
run whose third LM call exceeds the context window once, so that ReAct drops the first step
off its trajectory (``truncate_trajectory``) and goes on. ``evaluated``: ``dspy.Evaluate`` of a
ReAct over three examples (one right, one wrong, one whose program raises), its results saved
with ``save_as_json=`` (and, for a devset with no failure, ``save_as_csv=``: DSPy's CSV writer
takes its columns from the first row and raises on a failed example's, which has fewer).

``python -m tests.formats.dspy_more_runs`` writes the Evaluate fixtures under
``tests/fixtures/datasets/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.formats import dspy_runs  # sets litellm's local price map before dspy is imported

#: Files of many runs sit with the datasets (a load names their rows; a scan makes a row of each).
FIXTURES = dspy_runs.FIXTURES.parents[1] / "datasets"
EVALUATE_JSON = FIXTURES / "dspy_v3.4.1_evaluate-save-as-json.json"
EVALUATE_CSV = FIXTURES / "dspy_v3.4.1_evaluate-save-as-csv.csv"

PLANNED_SCRIPT: list[dict[str, Any]] = [
    {"plan": "add them, then finish"},
    {"next_thought": "need add", "next_tool_name": "add", "next_tool_args": {"a": 1, "b": 2}},
    {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "1+2=3", "answer": "3"},
]


def planned() -> Any:
    """A module of two predictors: ``plan``, then a ReAct given the plan."""
    import dspy

    class Planned(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.plan = dspy.Predict("question -> plan")
            self.act = dspy.ReAct("question, plan -> answer", tools=[dspy_runs.add], max_iters=3)

        def forward(self, question: str) -> Any:
            plan = self.plan(question=question).plan
            return self.act(question=question, plan=plan)

    return Planned()


def run_planned(times: int = 1) -> tuple[Any, list[Any], Any]:
    """The ``planned`` module run ``times`` times with one LM: the module, each run's
    ``Prediction`` and the LM."""
    import dspy

    program = planned()
    lm = dspy_runs.scripted(PLANNED_SCRIPT * times)
    with dspy.context(lm=lm):
        predictions = [program(question="add 1 and 2") for _ in range(times)]
    return program, predictions, lm


def metered(history: list[Any]) -> None:
    """Gives each LM call of ``history`` (DummyLM records no tokens) ``100 + n`` input
    tokens, ``10`` output tokens and a cost of a cent, in place: every history holding the
    call (the LM's, each calling module's) then says so."""
    for place, entry in enumerate(history):
        entry["usage"] = {"prompt_tokens": 100 + place, "completion_tokens": 10}
        entry["cost"] = 0.01


def cut_lm(answers: list[dict[str, Any]], at: int) -> Any:
    """A DummyLM whose ``at``-th call (from 1) raises ``ContextWindowExceededError`` once, as a
    provider does when the prompt exceeds the model's context window."""
    from dspy.utils import DummyLM
    from dspy.utils.exceptions import ContextWindowExceededError

    class CutLM(DummyLM):  # type: ignore[misc]
        calls = 0

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == at:
                raise ContextWindowExceededError(model="dummy")
            return super().forward(*args, **kwargs)

    return CutLM(answers)


CUT_SCRIPT: list[dict[str, Any]] = [
    *(
        {"next_thought": f"step {n}", "next_tool_name": "add", "next_tool_args": {"a": n, "b": 1}}
        for n in range(3)
    ),
    {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "all added", "answer": "done"},
]


def cut() -> tuple[Any, Any]:
    """A ReAct (of ``add``) and the LM of a run cut once: the LM's third call (step 2's)
    exceeds the context window, ReAct drops step 0 and asks again."""
    import dspy

    agent = dspy.ReAct("question -> answer", tools=[dspy_runs.add], max_iters=5)
    return agent, cut_lm(CUT_SCRIPT, at=3)


EVALUATE_SCRIPT: list[dict[str, Any]] = [
    # "add 1 and 2": right
    {"next_thought": "need add", "next_tool_name": "add", "next_tool_args": {"a": 1, "b": 2}},
    {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "1+2=3", "answer": "3"},
    # "add 2 and 2": a failed tool, then a wrong answer
    {"next_thought": "explode first", "next_tool_name": "explode", "next_tool_args": {"x": "2"}},
    {"next_thought": "guess", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "a guess", "answer": "5"},
    # "fail": the extraction's response holds no answer, so the program raises
    {"next_thought": "stuck", "next_tool_name": "finish", "next_tool_args": {}},
    {"nothing": "no answer"},
]
DEVSET = [("add 1 and 2", "3"), ("add 2 and 2", "4"), ("fail", "0")]


def exact_match(example: Any, prediction: Any, trace: Any = None) -> bool:
    return bool(example.answer == prediction.answer)


def evaluated(json_path: Path | None = None, csv_path: Path | None = None) -> Any:
    """``dspy.Evaluate`` of a ReAct over :data:`DEVSET` (the CSV over its first two examples,
    which run alike), its results saved as JSON and CSV where paths are given; its
    ``EvaluationResult`` (of the JSON's run)."""
    import dspy

    agent = dspy_runs.solo_agent(max_iters=3)
    result = None
    for path, devset, keyword in ((json_path, DEVSET, "save_as_json"),
                                  (csv_path, DEVSET[:2], "save_as_csv")):  # fmt: skip
        if path is None and keyword == "save_as_csv":
            continue
        examples = [dspy.Example(question=q, answer=a).with_inputs("question") for q, a in devset]
        lm = dspy_runs.scripted(EVALUATE_SCRIPT)
        saving = {keyword: str(path)} if path is not None else {}
        evaluate = dspy.Evaluate(devset=examples, metric=exact_match, num_threads=1,
                                 max_errors=5, **saving)  # fmt: skip
        with dspy.context(lm=lm):
            outcome = evaluate(agent)
        result = result or outcome
    return result


def write_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    evaluated(EVALUATE_JSON, EVALUATE_CSV)


if __name__ == "__main__":
    write_fixtures()
