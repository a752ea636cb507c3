"""Scripted DSPy agent runs, offline (``dspy.utils.DummyLM`` answers each LM call with the next
dict of output fields; no network: litellm's price map is its local copy), for the dspy tests,
the benchmark and the fixtures.

``solo``: a ``ReAct`` thinks and calls ``add`` (succeeds), calls ``explode`` (raises: ReAct's
``Execution error in explode: …``), calls ``finish``; its ``ChainOfThought`` extraction reasons
and answers. ``nested``: a ``ReAct`` whose ``ask_helper`` tool runs another ``ReAct`` (the
helper calls ``add``) and returns the helper's ``Prediction``.

``python tests/formats/dspy_runs.py`` writes the fixtures under ``tests/fixtures/frameworks/dspy/``
(``json.dumps(prediction.toDict())``, as users save a run).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# litellm (imported by dspy) would fetch its model price map at import: its own copy instead.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

QUESTION = "add 1 and 2, then explode"
ANSWER = "3"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "dspy"

SOLO_SCRIPT: list[dict[str, Any]] = [
    {"next_thought": "need add", "next_tool_name": "add", "next_tool_args": {"a": 1, "b": 2}},
    {"next_thought": "now explode", "next_tool_name": "explode", "next_tool_args": {"x": "y"}},
    {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "1+2=3 and explode failed", "answer": ANSWER},
]
NESTED_SCRIPT: list[dict[str, Any]] = [
    {"next_thought": "ask the helper", "next_tool_name": "ask_helper",
     "next_tool_args": {"question": "what is 2+3"}},
    # the helper's run, inside the call
    {"next_thought": "helper adds", "next_tool_name": "add", "next_tool_args": {"a": 2, "b": 3}},
    {"next_thought": "helper done", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "2+3=5", "answer": "5"},
    # the outer run goes on
    {"next_thought": "have it", "next_tool_name": "finish", "next_tool_args": {}},
    {"reasoning": "the helper said 5", "answer": "5"},
]  # fmt: skip


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def explode(x: str) -> str:
    """Always fails."""
    raise ValueError(f"boom: {x}")


def solo_agent(max_iters: int = 5) -> Any:
    import dspy

    return dspy.ReAct("question -> answer", tools=[add, explode], max_iters=max_iters)


def nested_agent() -> Any:
    import dspy

    helper = dspy.ReAct("question -> answer", tools=[add], max_iters=3)

    def ask_helper(question: str) -> Any:
        """Ask the helper agent."""
        return helper(question=question)

    return dspy.ReAct("question -> answer", tools=[ask_helper], max_iters=3)


def scripted(script: list[dict[str, Any]]) -> Any:
    from dspy.utils import DummyLM

    return DummyLM([dict(answer) for answer in script])


def run(which: str = "solo") -> tuple[Any, Any, Any]:
    """The program, its ``Prediction`` and the LM (whose ``history`` holds the calls)."""
    import dspy

    agent = solo_agent() if which == "solo" else nested_agent()
    lm = scripted(SOLO_SCRIPT if which == "solo" else NESTED_SCRIPT)
    with dspy.context(lm=lm):
        prediction = agent(question=QUESTION if which == "solo" else "what is 2+3, ask")
    return agent, prediction, lm


def stream(which: str = "solo", *, sync: bool = True, listeners: bool = False) -> Any:
    """``dspy.streamify``'s generator of a fresh run (sync, or async), and its LM: the
    generator runs under that LM when iterated."""
    import dspy

    agent = solo_agent() if which == "solo" else nested_agent()
    lm = scripted(SOLO_SCRIPT if which == "solo" else NESTED_SCRIPT)
    stream_listeners = None
    if listeners:
        stream_listeners = [
            dspy.streaming.StreamListener("next_thought", predict=agent.react, allow_reuse=True),
        ]
    program = dspy.streamify(agent, stream_listeners=stream_listeners, async_streaming=not sync)
    return agent, program, lm


def long_run(steps: int) -> tuple[Any, Any, Any]:
    """A ``ReAct`` run of ``steps`` ``add`` calls, then ``finish`` (the benchmark's)."""
    import dspy

    script: list[dict[str, Any]] = [
        {"next_thought": f"step {n}", "next_tool_name": "add", "next_tool_args": {"a": n, "b": 1}}
        for n in range(steps)
    ]
    script += [
        {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "all added", "answer": "done"},
    ]
    agent = dspy.ReAct("question -> answer", tools=[add], max_iters=steps + 1)
    lm = scripted(script)
    return agent, lm, lambda: _called(agent, lm)


def _called(agent: Any, lm: Any) -> Any:
    import dspy

    with dspy.context(lm=lm):
        return agent(question="add")


def write_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for which in ("solo", "nested"):
        _, prediction, _ = run(which)
        path = FIXTURES / f"dspy_v3.4.1_prediction-todict_{which}.json"
        path.write_text(json.dumps(prediction.toDict(), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()
