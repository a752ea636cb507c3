"""More real CrewAI (``crewai`` 1.15.30) runs of shapes users hit, on the scripted model of
:mod:`crewai_runs` (offline; run in its venv, as it says)::

    cd /tmp/scratch && PYTHONPATH=/path/to/turnfold/src:/path/to/turnfold/tests/formats \\
        /tmp/crew/bin/python /path/to/turnfold/tests/formats/crewai_runs_shapes.py

writes the frames of two crews streamed (:func:`~turnfold.formats.frameworks.crewai.
stream_events`): one whose first two tasks run side by side (``async_execution=True``), the
third taking both as ``context``; one whose task guardrail rejects the first answer and
passes the second.
"""

from __future__ import annotations

from typing import Any

from crewai import Agent, Crew, Task
from crewai_runs import FIXTURES, VERSION, ScriptedLLM

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


def write_fixtures() -> None:
    for name, crew in (("async", async_crew()), ("guardrail", guardrail_crew())):
        frames = [frame.model_dump_json() for frame in stream_events(crew)]
        path = FIXTURES / f"crewai_v{VERSION}_stream-frames_{name}.jsonl"
        path.write_text("\n".join(frames) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()
