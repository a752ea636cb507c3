"""Real CrewAI (``crewai`` 1.15.30) runs, offline: crews and an agent with real tools on a
scripted model (:class:`ScriptedLLM`, a subclass of CrewAI's own ``BaseLLM`` whose replies
are written out here), so nothing reaches the network; CrewAI's telemetry and tracing are off.

CrewAI is not in the ``frameworks`` extra: it pins ``aiosqlite~=0.21``, ``json-repair~=0.60``
and OpenTelemetry ``>=1.45.1`` against the test set's pins (google-adk holds OpenTelemetry at
1.44), and pulls chromadb and lancedb (about 1 GB, two minutes to install). It is run in a
venv of its own::

    python3 -m venv /tmp/crew && /tmp/crew/bin/pip install crewai==1.15.30 pytest
    cd /tmp/scratch && PYTHONPATH=/path/to/turnfold/src /tmp/crew/bin/python \\
        /path/to/turnfold/tests/formats/crewai_runs.py

which writes the committed fixtures (:func:`write_fixtures`): each output's
``model_dump_json()``, as users save it, the crew's ``output_log_file``, and the frames of
the crew's run streamed (:func:`~turnfold.formats.frameworks.crewai.stream_events`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

# Before CrewAI reads them: no telemetry, no tracing prompt, no network.
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ["OTEL_SDK_DISABLED"] = "true"

from crewai import Agent, Crew, Process, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

from turnfold.formats.frameworks.crewai import stream_events

FIXTURES = Path(__file__).parent.parent / "fixtures" / "crewai"
VERSION = "1.15.30"
#: What every scripted model call reports having spent.
CALL_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


class ScriptedLLM(BaseLLM):
    """Answers each call with the next scripted reply: a list of OpenAI-style tool calls, or
    a text. ``native=False`` says it has no function calling, so CrewAI prompts it to write
    its calls in the text (ReAct)."""

    def __init__(self, replies: list[Any], *, native: bool = True) -> None:
        super().__init__(model="scripted-model")
        object.__setattr__(self, "_replies", list(replies))
        object.__setattr__(self, "_native", native)

    def call(self, messages: Any, tools: Any = None, *args: Any, **kwargs: Any) -> Any:
        reply = self._replies.pop(0)  # type: ignore[attr-defined]
        self._track_token_usage_internal(CALL_USAGE)
        return reply

    def supports_function_calling(self) -> bool:
        return bool(self._native)  # type: ignore[attr-defined]

    def get_context_window_size(self) -> int:
        return 8192


def call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@tool("add")
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool("explode")
def explode(x: str) -> str:
    """Always fails."""
    raise ValueError(f"boom: {x}")


def crew_run(log_file: str | None = None) -> Any:
    """:func:`crew_with_tools` kicked off: its ``CrewOutput``."""
    return crew_with_tools(log_file).kickoff()


def crew_with_tools(log_file: str | None = None) -> Any:
    """Two agents, two tasks: the researcher calls ``add`` (succeeds) and ``explode`` (raises),
    the writer answers from the first task's output."""
    researcher = Agent(
        role="Researcher",
        goal="Find numbers",
        backstory="You add things.",
        tools=[add, explode],
        llm=ScriptedLLM(
            [
                [call("call_1", "add", {"a": 1, "b": 2})],
                [call("call_2", "explode", {"x": "y"})],
                "1+2=3; explode failed.",
            ]
        ),
    )
    writer = Agent(
        role="Writer",
        goal="Write a summary",
        backstory="You write tersely.",
        llm=ScriptedLLM(["The sum is 3."]),
    )
    research = Task(
        description="Add 1 and 2, then explode y.",
        expected_output="The sum.",
        agent=researcher,
        name="research",
    )
    write = Task(
        description="Write one sentence about the result.",
        expected_output="One sentence.",
        agent=writer,
    )
    return Crew(
        agents=[researcher, writer],
        tasks=[research, write],
        process=Process.sequential,
        output_log_file=log_file,
    )


def react_run() -> Any:
    """One agent whose model has no function calling: its calls are written in the text."""
    texter = Agent(
        role="Texter",
        goal="Compute",
        backstory="You reason in text.",
        tools=[add, explode],
        llm=ScriptedLLM(
            [
                'Thought: I should add.\nAction: add\nAction Input: {"a": 1, "b": 2}',
                'Thought: try explode.\nAction: explode\nAction Input: {"x": "q"}',
                "Thought: I know it.\nFinal Answer: 3, and explode failed.",
            ],
            native=False,
        ),
    )
    task = Task(description="Add 1 and 2 in text mode.", expected_output="The sum.", agent=texter)
    return Crew(agents=[texter], tasks=[task]).kickoff()


def agent_run() -> Any:
    """``Agent.kickoff()``: two calls in one response, one of which raises."""
    calculator = Agent(
        role="Calculator",
        goal="Compute sums",
        backstory="You are terse.",
        tools=[add, explode],
        llm=ScriptedLLM(
            [
                [call("call_a", "add", {"a": 2, "b": 5}), call("call_b", "explode", {"x": "z"})],
                "2+5=7; explode failed.",
            ]
        ),
    )
    return calculator.kickoff("Add 2 and 5, and explode z.")


def write_fixtures(folder: Path = FIXTURES) -> None:
    """Each run's ``model_dump_json()``, and the crew's ``output_log_file`` (written in the
    working folder by CrewAI, then moved here)."""
    log = Path(f"crewai_v{VERSION}_output-log.json")
    log.unlink(missing_ok=True)
    saved = {
        "crew-output_two-tasks": crew_run(str(log)),
        "crew-output_react-text": react_run(),
        "agent-kickoff": agent_run(),
    }
    for name, output in saved.items():
        (folder / f"crewai_v{VERSION}_{name}.json").write_text(output.model_dump_json(indent=2))
    log.replace(folder / log.name)
    frames = folder / f"crewai_v{VERSION}_stream-frames.jsonl"
    with frames.open("w", encoding="utf-8") as file:
        for frame in stream_events(crew_with_tools()):
            file.write(frame.model_dump_json() + "\n")


if __name__ == "__main__":
    write_fixtures(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES)
