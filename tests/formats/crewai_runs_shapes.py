"""More real CrewAI (``crewai`` 1.15.30) runs of shapes users hit, on the scripted model of
:mod:`tests.formats.crewai_runs` (offline; run in its venv, as it says)::

    cd /tmp/scratch && PYTHONPATH=/path/to/turnfold/src:/path/to/turnfold \\
        /tmp/crew/bin/python /path/to/turnfold/tests/formats/crewai_runs_shapes.py

writes the frames of two crews streamed (:func:`~turnfold.formats.frameworks.crewai.
stream_events`): one whose first two tasks run side by side (``async_execution=True``), the
third taking both as ``context``; one whose task guardrail rejects the first answer and
passes the second. Then a crew whose two tasks side by side each call a tool
(:func:`async_tools_crew`): its output's ``model_dump_json()``, its ``output_log_file`` as
JSON and as text, and its frames; an agent that reaches its ``max_iter``
(:func:`max_iter_crew`): its output and its frames; and the frames of one that reaches it
while a task beside it runs (:func:`async_max_iter_crew`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from crewai import Agent, Crew, Task
from crewai.tools import tool

from tests.formats.crewai_runs import FIXTURES, VERSION, ScriptedLLM, add, call
from turnfold.formats.frameworks.crewai import stream_events


def async_crew() -> Any:
    """Two tasks run side by side, a third joins their outputs."""
    agents = [
        Agent(role=role, goal="g", backstory="b", llm=ScriptedLLM([reply]))
        for role, reply in (("A", "alpha done"), ("B", "beta done"), ("C", "both done"))
    ]
    alpha, beta, join = (
        Task(description=text, expected_output="x", agent=agent, async_execution=side)
        for text, agent, side in (
            ("Do alpha.", agents[0], True),
            ("Do beta.", agents[1], True),
            ("Join them.", agents[2], False),
        )
    )
    join.context = [alpha, beta]
    return Crew(agents=agents, tasks=[alpha, beta, join])


def must_have_digit(output: Any):  # type: ignore[no-untyped-def]
    # No return annotation: CrewAI checks it is Tuple[bool, Any], and here it is a string.
    if any(ch.isdigit() for ch in output.raw):
        return True, output.raw
    return False, "The answer must contain a digit."


def guardrail_crew() -> Any:
    """A task whose guardrail rejects the first answer (``three``), passes the second."""
    counter = Agent(role="Counter", goal="g", backstory="b", llm=ScriptedLLM(["three", "3"]))
    task = Task(
        description="Count to three.",
        expected_output="A number.",
        agent=counter,
        guardrail=must_have_digit,
        guardrail_max_retries=2,
    )
    return Crew(agents=[counter], tasks=[task])


@tool("add_slowly")
def add_slowly(a: int, b: int) -> int:
    """Add two numbers, taking a while."""
    time.sleep(0.3)  # so that the calls of the tasks run side by side overlap
    return a + b


def async_tools_crew(log_file: str | bool | None = None) -> Any:
    """Two tasks run side by side (``async_execution=True``), each agent calling
    ``add_slowly`` before it answers (their calls overlap), a third task joining them."""
    alpha_agent, beta_agent = (
        Agent(
            role=role,
            goal="Add",
            backstory="You add.",
            tools=[add_slowly],
            llm=ScriptedLLM([[call(call_id, "add_slowly", args)], answer]),
        )
        for role, call_id, args, answer in (
            ("Alpha", "call_alpha", {"a": 1, "b": 2}, "alpha: 3"),
            ("Beta", "call_beta", {"a": 3, "b": 4}, "beta: 7"),
        )
    )
    joiner = Agent(role="Joiner", goal="Join", backstory="You join.", llm=ScriptedLLM(["3 and 7"]))
    alpha = Task(
        description="Add 1 and 2.",
        expected_output="A sum.",
        agent=alpha_agent,
        async_execution=True,
    )
    beta = Task(
        description="Add 3 and 4.", expected_output="A sum.", agent=beta_agent, async_execution=True
    )
    join = Task(
        description="Say both sums.",
        expected_output="Two sums.",
        agent=joiner,
        context=[alpha, beta],
    )
    return Crew(
        agents=[alpha_agent, beta_agent, joiner],
        tasks=[alpha, beta, join],
        output_log_file=log_file,
    )


def max_iter_crew(*, native: bool = True) -> Any:
    """An agent with ``max_iter=2`` whose model keeps calling ``add``: CrewAI stops its loop
    and asks for its final answer, without tools (``native=False``: calls in the text)."""
    if native:
        replies: list[Any] = [
            [call("call_1", "add", {"a": 1, "b": 2})],
            [call("call_2", "add", {"a": 3, "b": 4})],
            "Out of steps: 3 and 7 so far.",
        ]
    else:
        replies = [
            'Thought: add.\nAction: add\nAction Input: {"a": 1, "b": 2}',
            'Thought: again.\nAction: add\nAction Input: {"a": 3, "b": 4}',
            "Thought: no more steps.\nFinal Answer: Out of steps: 3 and 7 so far.",
        ]
    looper = Agent(
        role="Looper",
        goal="Add",
        backstory="You keep adding.",
        tools=[add],
        max_iter=2,
        llm=ScriptedLLM(replies, native=native),
    )
    task = Task(description="Keep adding numbers.", expected_output="The sums.", agent=looper)
    return Crew(agents=[looper], tasks=[task])


def async_max_iter_crew() -> Any:
    """Two tasks side by side, the second's agent reaching its ``max_iter`` (1) while the
    first's call runs: the call CrewAI then makes for its final answer names no task."""
    steady = Agent(
        role="Steady",
        goal="Add",
        backstory="You add once.",
        tools=[add_slowly],
        llm=ScriptedLLM([[call("call_s", "add_slowly", {"a": 3, "b": 4})], "7"]),
    )
    looper = Agent(
        role="Looper",
        goal="Add",
        backstory="You keep adding.",
        tools=[add],
        max_iter=1,
        llm=ScriptedLLM([[call("call_l", "add", {"a": 1, "b": 2})], "Out of steps: 3."]),
    )
    joiner = Agent(role="Joiner", goal="Join", backstory="You join.", llm=ScriptedLLM(["3, 7"]))
    first, second = (
        Task(description=text, expected_output=expected, agent=agent, async_execution=True)
        for text, expected, agent in (
            ("Add 3 and 4.", "A sum.", steady),
            ("Keep adding.", "Sums.", looper),
        )
    )
    join = Task(description="Say both.", expected_output="Sums.", agent=joiner, context=[first])
    return Crew(agents=[steady, looper, joiner], tasks=[first, second, join])


def _write_frames(name: str, crew: Any) -> None:
    frames = [frame.model_dump_json() for frame in stream_events(crew)]
    path = FIXTURES / f"crewai_v{VERSION}_stream-frames_{name}.jsonl"
    path.write_text("\n".join(frames) + "\n", encoding="utf-8")


def write_fixtures() -> None:
    """The fixtures, each written by CrewAI (its logs in the working folder, then moved)."""
    for name, crew in (("async", async_crew()), ("guardrail", guardrail_crew())):
        _write_frames(name, crew)
    log, text_log = Path(f"crewai_v{VERSION}_output-log_async.json"), Path("logs.txt")
    log.unlink(missing_ok=True)
    text_log.unlink(missing_ok=True)
    saved = {"async": async_tools_crew(str(log)).kickoff(), "max-iter": max_iter_crew().kickoff()}
    async_tools_crew(True).kickoff()
    for name, output in saved.items():
        path = FIXTURES / f"crewai_v{VERSION}_crew-output_{name}.json"
        path.write_text(output.model_dump_json(indent=2), encoding="utf-8")
    log.replace(FIXTURES / log.name)
    text_log.replace(FIXTURES / f"crewai_v{VERSION}_logs_async.txt")
    _write_frames("async-tools", async_tools_crew())
    _write_frames("max-iter", max_iter_crew())
    _write_frames("async-max-iter", async_max_iter_crew())


if __name__ == "__main__":
    write_fixtures()
