"""A DSPy run's LM calls that no entry shows still count (spec U-1, U-2, A-1, A-2).

``load(prediction, agent=...)`` finds each ReAct step's LM call and the answer's in the
history; a module's other predictors (a ``plan`` before its ReAct), a tool's own calls and a
nested program's calls are in the history too, and were dropped from the run's tokens and cost.
The runs are the real ``dspy`` with ``DummyLM`` (``dspy_more_runs``, ``dspy_runs``), each call
given tokens and a cost in its history (``metered``).
"""

from __future__ import annotations

from typing import Any

import pytest

import turnfold
from tests.formats import dspy_more_runs, dspy_runs
from turnfold.usage import transcript_tokens

dspy = pytest.importorskip("dspy")


def own_tokens(transcript: turnfold.Transcript) -> dict[str, int]:
    return transcript_tokens(transcript).own


def test_U1_a_module_s_predictor_before_its_react_counts_in_the_run_s_tokens_and_cost() -> None:
    """The module ran twice: the second run's four calls (plan, two steps, the extraction) are
    inputs 104 to 107; the first run's are not counted, its extraction being a call of a
    predictor the second run called too."""
    program, predictions, lm = dspy_more_runs.run_planned(times=2)
    dspy_more_runs.metered(lm.history)
    transcript = turnfold.load(predictions[-1], agent=program)
    assert own_tokens(transcript) == {"input_tokens": 104 + 105 + 106 + 107, "output_tokens": 40}
    assert transcript.metadata["cost_usd"] == pytest.approx(0.04)
    # The calls the entries show keep their own usage: the plan's is counted, not shown.
    usages = [getattr(e, "usage", None) for e in transcript.entries]
    assert [u.input_tokens for u in usages if u is not None] == [105, 106, 107]
    # Followed live with the program, the run counts the same.
    followed = turnfold.follow(iter([predictions[-1]]), display=False, agent=program)
    assert list(followed) == [predictions[-1]]
    assert own_tokens(followed.transcript) == own_tokens(transcript)
    assert followed.transcript.metadata["cost_usd"] == pytest.approx(0.04)


def test_U1_an_lm_s_history_is_anyone_s_so_only_the_calls_among_the_run_s_count() -> None:
    """An LM's history holds every program's calls that used it: before the run's first call
    found, none is known to be the run's (the plan is not counted: say the program)."""
    _, predictions, lm = dspy_more_runs.run_planned()
    dspy_more_runs.metered(lm.history)
    transcript = turnfold.load(predictions[-1], agent=lm)
    assert own_tokens(transcript) == {"input_tokens": 101 + 102 + 103, "output_tokens": 30}
    assert "usage" not in transcript.metadata  # every call counted is one an entry shows
    assert transcript.metadata["cost_usd"] == pytest.approx(0.03)


def test_U1_a_tool_s_own_lm_call_counts_in_the_run_s_tokens() -> None:
    """A tool that asks a predictor: its call runs between two steps' calls."""
    rate = dspy.Predict("text -> rating")

    def judge(text: str) -> str:
        """Rate a text."""
        return str(rate(text=text).rating)

    agent = dspy.ReAct("question -> answer", tools=[judge], max_iters=3)
    lm = dspy_runs.scripted([
        {"next_thought": "rate it", "next_tool_name": "judge", "next_tool_args": {"text": "hi"}},
        {"rating": "good"},
        {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "rated", "answer": "good"},
    ])  # fmt: skip
    with dspy.context(lm=lm):
        prediction = agent(question="rate hi")
    dspy_more_runs.metered(lm.history)
    for given in (agent, lm, lm.history):
        transcript = turnfold.load(prediction, agent=given)
        assert own_tokens(transcript) == {"input_tokens": 406, "output_tokens": 40}, given
        assert transcript.metadata["cost_usd"] == pytest.approx(0.04)
        (call,) = transcript.tool_calls()
        assert (call.name, call.result.text if call.result else None) == ("judge", "good")


def test_U1_a_nested_program_s_calls_are_its_sub_agent_s() -> None:
    """The helper's three calls ran inside ``ask_helper``: its steps and answer carry them, the
    run's own are the outer three; the cost is all six."""
    agent, prediction, lm = dspy_runs.run("nested")
    dspy_more_runs.metered(lm.history)
    transcript = turnfold.load(prediction, agent=agent)
    tokens = transcript_tokens(transcript)
    assert tokens.own == {"input_tokens": 100 + 104 + 105, "output_tokens": 30}
    assert tokens.subagents == {"input_tokens": 101 + 102 + 103, "output_tokens": 30}
    assert transcript.metadata["cost_usd"] == pytest.approx(0.06)
    (call,) = transcript.tool_calls()
    assert call.subagent is not None
    child = call.subagent.transcript
    assert child is not None
    usages = [getattr(e, "usage", None) for e in child.entries]
    assert [u.input_tokens for u in usages if u is not None] == [101, 102, 103]


def test_U1_a_program_tool_whose_run_is_not_returned_has_its_calls_tokens() -> None:
    """A program tool's observation is its ``Prediction``; one saved as its answer alone
    (``Tool(program)`` known from ``agent=``) is a sub-agent whose steps are missing: the
    calls made during it are its tokens."""
    helper = dspy.ReAct("question -> answer", tools=[dspy_runs.add], max_iters=2)
    tool = dspy.Tool(helper, name="helper", desc="a helper", args={"question": {"type": "string"}})
    agent = dspy.ReAct("question -> answer", tools=[tool], max_iters=3)
    lm = dspy_runs.scripted([
        {"next_thought": "ask", "next_tool_name": "helper",
         "next_tool_args": {"question": "2+3?"}},
        {"next_thought": "helper adds", "next_tool_name": "add",
         "next_tool_args": {"a": 2, "b": 3}},
        {"next_thought": "helper done", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "2+3=5", "answer": "5"},
        {"next_thought": "ok", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "the helper said 5", "answer": "5"},
    ])  # fmt: skip
    with dspy.context(lm=lm):
        prediction = agent(question="what is 2+3")
    dspy_more_runs.metered(lm.history)
    trajectory = dict(prediction.trajectory)
    trajectory["observation_0"] = trajectory["observation_0"].answer
    answered = dspy.Prediction(trajectory=trajectory, reasoning=prediction.reasoning,
                               answer=prediction.answer)  # fmt: skip
    transcript = turnfold.load(answered, agent=agent)
    (call,) = transcript.tool_calls()
    assert call.subagent is not None
    assert call.subagent.steps_missing
    assert call.subagent.usage is not None
    assert (call.subagent.usage.input_tokens, call.subagent.usage.output_tokens) == (306, 30)
    assert transcript_tokens(transcript).own == {"input_tokens": 309, "output_tokens": 30}
    assert transcript.metadata["cost_usd"] == pytest.approx(0.06)


def test_L4_a_history_entry_that_is_no_call_among_the_run_s_is_passed_over() -> None:
    _, predictions, lm = dspy_more_runs.run_planned()
    history: list[Any] = list(lm.history)
    history.insert(2, "not a call")
    transcript = turnfold.load(predictions[-1], agent=history)
    assert len(transcript.tool_calls()) == 1
