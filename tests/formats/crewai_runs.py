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
``model_dump_json()``, as users save it (a hierarchical crew's among them), the crews'
``output_log_file`` as JSON and as text, and the frames of runs streamed
(:func:`~turnfold.formats.frameworks.crewai.stream_events`): the two-task crew's, the same
with its models streaming, and the hierarchical crew's. Its live-object tests run there too::

    cd /path/to/turnfold && PYTHONPATH=src:. /tmp/crew/bin/python -m pytest \\
        -q -p no:cacheprovider -o addopts="" tests/formats/test_crewai.py
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

# Before CrewAI reads them: no telemetry, no tracing prompt, no network.
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ["OTEL_SDK_DISABLED"] = "true"

from crewai import Agent, Crew, Process, Task
from crewai.events.types.llm_events import LLMCallType
from crewai.llms.base_llm import BaseLLM, llm_call_context
from crewai.tools import tool

from turnfold.formats.frameworks.crewai import stream_events

FIXTURES = Path(__file__).parent.parent / "fixtures" / "crewai"
VERSION = "1.15.30"
#: What every scripted model call reports having spent.
CALL_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
_RESPONSES = itertools.count(1)


class ScriptedLLM(BaseLLM):
    """Answers each call with the next scripted reply: a list of OpenAI-style tool calls, or
    a text. ``native=False`` says it has no function calling, so CrewAI prompts it to write
    its calls in the text (ReAct). ``stream=True`` streams each reply in chunks.

    CrewAI's ``BaseLLM`` emits no events itself: each of its providers does, around its
    request. This one emits them as CrewAI's OpenAI provider does
    (``llms/providers/openai/completion.py``): ``LLMCallStartedEvent`` first, an
    ``LLMStreamChunkEvent`` per piece when streaming (a tool call's with its ``tool_call``),
    then ``LLMCallCompletedEvent`` with the response, its call type and the call's usage, all
    in one ``llm_call_context`` (their shared ``call_id``)."""

    def __init__(self, replies: list[Any], *, native: bool = True, stream: bool = False) -> None:
        super().__init__(model="scripted-model", stream=stream)
        object.__setattr__(self, "_replies", list(replies))
        object.__setattr__(self, "_native", native)

    def call(  # type: ignore[override]
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        with llm_call_context():
            self._emit_call_started_event(
                messages=messages,
                tools=tools,
                callbacks=callbacks,
                available_functions=available_functions,
                from_task=from_task,
                from_agent=from_agent,
            )
            reply = self._replies.pop(0)  # type: ignore[attr-defined]
            said = ""
            if isinstance(reply, tuple):  # text before calls: like OpenAI's provider, only
                said, reply = reply  # its stream carries the text (the response is the calls)
            response_id = f"chatcmpl-scripted-{next(_RESPONSES)}"  # unique, as a provider's
            calls = isinstance(reply, list)
            if self.stream:
                self._stream(said, reply, from_task, from_agent, response_id)
            self._track_token_usage_internal(CALL_USAGE)
            self._emit_call_completed_event(
                response=reply,
                call_type=LLMCallType.TOOL_CALL if calls else LLMCallType.LLM_CALL,
                from_task=from_task,
                from_agent=from_agent,
                messages=messages,
                usage=dict(CALL_USAGE),
                finish_reason="tool_calls" if calls else "stop",
                response_id=response_id,
            )
            return reply

    def _stream(self, said: str, reply: Any, task: Any, agent: Any, response_id: str) -> None:
        """The reply's chunks as the OpenAI provider emits them: a text in pieces, each tool
        call's arguments with the call so far."""
        for piece in re.findall(r"\S+\s*", reply if isinstance(reply, str) else said):
            self._emit_stream_chunk_event(
                chunk=piece, from_task=task, from_agent=agent, response_id=response_id
            )
        for index, made in enumerate(reply if isinstance(reply, list) else []):
            self._emit_stream_chunk_event(
                chunk=made["function"]["arguments"],
                from_task=task,
                from_agent=agent,
                tool_call={**made, "index": index},
                call_type=LLMCallType.TOOL_CALL,
                response_id=response_id,
            )

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


def crew_run(log_file: str | bool | None = None) -> Any:
    """:func:`crew_with_tools` kicked off: its ``CrewOutput``."""
    return crew_with_tools(log_file).kickoff()


def crew_with_tools(log_file: str | bool | None = None, *, stream: bool = False) -> Any:
    """Two agents, two tasks: the researcher says what it will do and calls ``add``
    (succeeds), then ``explode`` (raises), the writer answers from the first task's output.
    ``stream``: their models stream (the researcher's first words only reach the stream: a
    response of calls is the calls)."""
    researcher = Agent(
        role="Researcher",
        goal="Find numbers",
        backstory="You add things.",
        tools=[add, explode],
        llm=ScriptedLLM(
            [
                ("I will add them first.", [call("call_1", "add", {"a": 1, "b": 2})]),
                [call("call_2", "explode", {"x": "y"})],
                "1+2=3; explode failed.",
            ],
            stream=stream,
        ),
    )
    writer = Agent(
        role="Writer",
        goal="Write a summary",
        backstory="You write tersely.",
        llm=ScriptedLLM(["The sum is 3."], stream=stream),
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


def hierarchical_crew() -> Any:
    """``Process.hierarchical``: CrewAI's manager agent does the task by delegating to the
    researcher (``Delegate work to coworker``; it calls ``add``) and asking the writer
    (``Ask question to coworker``), then answers."""
    researcher = Agent(
        role="Researcher",
        goal="Find numbers",
        backstory="You add things.",
        tools=[add],
        llm=ScriptedLLM([[call("call_r1", "add", {"a": 1, "b": 2})], "1+2=3"]),
    )
    writer = Agent(
        role="Writer",
        goal="Write a summary",
        backstory="You write tersely.",
        llm=ScriptedLLM(["Say: the sum is 3."]),
    )
    delegate = {"task": "Add 1 and 2.", "context": "Use the add tool.", "coworker": "Researcher"}
    ask = {
        "question": "How would you say it?",
        "context": "The sum of 1 and 2 is 3.",
        "coworker": "Writer",
    }
    manager = ScriptedLLM(
        [
            [call("call_m1", "delegate_work_to_coworker", delegate)],
            [call("call_m2", "ask_question_to_coworker", ask)],
            "The sum is 3.",
        ]
    )
    task = Task(description="Find 1+2 and say it in one sentence.", expected_output="One line.")
    return Crew(
        agents=[researcher, writer],
        tasks=[task],
        process=Process.hierarchical,
        manager_llm=manager,
    )


def quoted_crew(log_file: str | bool | None = None) -> Any:
    """One task whose description and answer span lines and hold quotes and ``", "``: what
    the text log (``output_log_file=True``) writes unescaped."""
    editor = Agent(
        role="Editor",
        goal="Summarise",
        backstory="You quote.",
        llm=ScriptedLLM(['Costs rose.\nRevenue was "flat", said the CFO.']),
    )
    task = Task(
        description='Summarise the "Q3" report.\nKeep it to two lines.',
        expected_output="Two lines.",
        agent=editor,
        name="summary",
    )
    return Crew(agents=[editor], tasks=[task], output_log_file=log_file)


def react_run() -> Any:
    """:func:`react_crew` kicked off: its ``CrewOutput``."""
    return react_crew().kickoff()


def react_crew() -> Any:
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
    return Crew(agents=[texter], tasks=[task])


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
    """Each run's ``model_dump_json()``, the crews' ``output_log_file`` as JSON and as text
    (``True``: ``logs.txt``, which CrewAI appends to run after run), written in the working
    folder by CrewAI, then moved here, and the frames of runs streamed."""
    log, text_log = Path(f"crewai_v{VERSION}_output-log.json"), Path("logs.txt")
    log.unlink(missing_ok=True)
    text_log.unlink(missing_ok=True)
    saved = {
        "crew-output_two-tasks": crew_run(str(log)),
        "crew-output_react-text": react_run(),
        "agent-kickoff": agent_run(),
        "crew-output_hierarchical": hierarchical_crew().kickoff(),
    }
    crew_run(True)
    quoted_crew(True).kickoff()
    for name, output in saved.items():
        (folder / f"crewai_v{VERSION}_{name}.json").write_text(output.model_dump_json(indent=2))
    log.replace(folder / log.name)
    text_log.replace(folder / f"crewai_v{VERSION}_logs.txt")
    streamed = {
        "stream-frames": crew_with_tools(),
        "stream-frames_chunks": crew_with_tools(stream=True),
        "stream-frames_hierarchical": hierarchical_crew(),
    }
    for name, crew in streamed.items():
        with (folder / f"crewai_v{VERSION}_{name}.jsonl").open("w", encoding="utf-8") as file:
            for frame in stream_events(crew):
                file.write(frame.model_dump_json() + "\n")


if __name__ == "__main__":
    write_fixtures(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES)
