"""Runs of the real AutoGen AgentChat, offline, for the "autogen" format's tests and fixtures
(issue 22).

Every model is AutoGen's own ``ReplayChatCompletionClient`` (``autogen_ext.models.replay``:
it replays scripted ``CreateResult``\\s, so no network). The solo run: ``calc`` thinks, calls
``add`` (succeeds), then in one response ``explode`` (raises, so AutoGen records
``is_error=True`` and the run goes on) beside ``researcher``, an agent used as a tool
(``AgentTool``) that calls ``add`` itself, then thinks again and answers. The team run: a
``Swarm`` where ``triage`` calls ``add`` and hands off to ``writer``, which answers. The chain
run (:func:`chain`): a ``Swarm`` where ``triage`` calls ``add`` and hands off to ``writer``,
which asks a research team used as a tool (``TeamTool``, whose ``researcher`` calls ``add``)
and hands off onward to ``checker``, which calls ``explode`` (fails) and hands back to
``writer``, which answers.

``python -m tests.formats.autogen_runs [name...]`` rewrites the files under
``tests/fixtures/frameworks/autogen/`` (those whose names contain a given ``name``, else all):
each ``TaskResult`` as ``model_dump_json()`` and the solo run's messages as
``[m.dump() for m in result.messages]``. A fourth run, a ``SelectorGroupChat``, covers the
other message types (:func:`selector_stream`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tests.formats.loops import run_async

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "autogen"
PROMPT = "Add 1 and 2, try the exploding tool, and ask the researcher why."
TEAM_PROMPT = "Add 1 and 2, then let the writer answer."
ANSWER = "1+2=3; explode failed, because tools fail."
TEAM_ANSWER = "The sum is 3. TERMINATE"
CHAIN_PROMPT = "Add 1 and 2; the writer and the checker check it."
CHAIN_ANSWER = "The sum is 3, checked twice. TERMINATE"
CHAIN_TASK = "Why is it 3?"
SELECTOR_PROMPT = "Add 1 and 2."
MEMORY = "The user likes short answers."
PROXY_REPLY = "Now run some code."
CODE = "```python\nimport sys\nprint('bad')\nsys.exit(3)\n```"

_MODEL_INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}
T = TypeVar("T")


#: ``coroutine`` run on a fresh thread's event loop (a test may leave one running).
in_thread = run_async


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def explode(x: str) -> str:
    """Always fails."""
    raise ValueError(f"boom: {x}")


def _client(responses: list[Any]) -> Any:
    from autogen_ext.models.replay import ReplayChatCompletionClient

    return ReplayChatCompletionClient(responses, model_info=_MODEL_INFO)  # type: ignore[arg-type]


def _calls(n: int, *calls: tuple[str, str, str], thought: str | None = None) -> Any:
    """A model response of function calls, with usage ``10n`` prompt / ``n`` completion."""
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, RequestUsage

    return CreateResult(
        content=[FunctionCall(id=i, name=name, arguments=args) for i, name, args in calls],
        finish_reason="function_calls",
        usage=RequestUsage(prompt_tokens=10 * n, completion_tokens=n),
        cached=False,
        thought=thought,
    )


def _text(n: int, text: str, thought: str | None = None) -> Any:
    from autogen_core.models import CreateResult, RequestUsage

    return CreateResult(
        content=text,
        finish_reason="stop",
        usage=RequestUsage(prompt_tokens=10 * n, completion_tokens=n),
        cached=False,
        thought=thought,
    )


def solo_agent(*, stream: bool = False) -> Any:
    """``calc`` with ``add``, ``explode`` and the ``researcher`` agent as a tool.

    With ``stream`` the model client streams: the replay client streams a plain string
    response word by word (``ModelClientStreamingChunkEvent``), so the answer is one.
    """
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.tools import AgentTool

    researcher = AssistantAgent(
        "researcher",
        model_client=_client(
            [_calls(7, ("call_r1", "add", '{"a": 5, "b": 5}')), _text(8, "Because tools fail.")]
        ),
        tools=[add],
        description="Finds reasons.",
        max_tool_iterations=3,
    )
    answer: Any = ANSWER if stream else _text(3, ANSWER, thought="Both done; answer.")
    client = _client(
        [
            _calls(1, ("call_1", "add", '{"a": 1, "b": 2}'), thought="First add."),
            _calls(
                2,
                ("call_2", "explode", '{"x": "y"}'),
                ("call_3", "researcher", '{"task": "Why do tools fail?"}'),
            ),
            answer,
        ]
    )
    return AssistantAgent(
        "calc",
        model_client=client,
        tools=[add, explode, AgentTool(researcher)],
        system_message="You are terse.",
        max_tool_iterations=5,  # the default 1 ends the run after one round of tools
        model_client_stream=stream,
    )


def team() -> Any:
    """A ``Swarm``: ``triage`` calls ``add``, hands off to ``writer``, which answers."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import TextMentionTermination
    from autogen_agentchat.teams import Swarm

    triage = AssistantAgent(
        "triage",
        model_client=_client(
            [
                _calls(1, ("call_1", "add", '{"a": 1, "b": 2}')),
                _calls(2, ("call_2", "transfer_to_writer", "{}"), thought="The writer answers."),
            ]
        ),
        tools=[add],
        handoffs=["writer"],
        max_tool_iterations=5,
    )
    writer = AssistantAgent("writer", model_client=_client([_text(3, TEAM_ANSWER)]))
    return Swarm([triage, writer], termination_condition=TextMentionTermination("TERMINATE"))


def chain() -> Any:
    """A ``Swarm``: ``triage`` → ``writer`` (a ``TeamTool`` call) → ``checker`` → ``writer``."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import TextMentionTermination
    from autogen_agentchat.teams import RoundRobinGroupChat, Swarm
    from autogen_agentchat.tools import TeamTool

    researcher = AssistantAgent(
        "researcher",
        model_client=_client(
            [_calls(4, ("call_4", "add", '{"a": 2, "b": 1}')), _text(5, "Because 2+1=3 too.")]
        ),
        tools=[add],
        description="Finds reasons.",
        max_tool_iterations=3,
    )
    research = TeamTool(
        RoundRobinGroupChat([researcher], max_turns=1),
        name="research",
        description="Ask the research team.",
    )
    triage = AssistantAgent(
        "triage",
        model_client=_client(
            [
                _calls(1, ("call_1", "add", '{"a": 1, "b": 2}')),
                _calls(2, ("call_2", "transfer_to_writer", "{}"), thought="The writer answers."),
            ]
        ),
        tools=[add],
        handoffs=["writer"],
        max_tool_iterations=5,
    )
    writer = AssistantAgent(
        "writer",
        model_client=_client(
            [
                _calls(3, ("call_3", "research", json.dumps({"task": CHAIN_TASK}))),
                _calls(6, ("call_6", "transfer_to_checker", "{}")),
                _text(9, CHAIN_ANSWER),
            ]
        ),
        tools=[research],
        handoffs=["checker"],
        max_tool_iterations=5,
    )
    checker = AssistantAgent(
        "checker",
        model_client=_client(
            [
                _calls(7, ("call_7", "explode", '{"x": "3"}')),
                _calls(8, ("call_8", "transfer_to_writer", "{}")),
            ]
        ),
        tools=[explode],
        handoffs=["writer"],
        max_tool_iterations=5,
    )
    return Swarm(
        [triage, writer, checker], termination_condition=TextMentionTermination("TERMINATE")
    )


async def _selector_stream() -> list[Any]:
    """A ``SelectorGroupChat`` (its speaker selection on a replay client too): ``summer``
    queries its memory and calls ``add`` (``max_tool_iterations`` 1: its reply is a
    ``ToolCallSummaryMessage``), ``proxy`` (a ``UserProxyAgent``) asks the person, ``coder``
    (a ``CodeExecutorAgent`` on a local executor) runs code that exits with 3 and says so,
    ``judge`` answers with a ``StructuredMessage``."""
    import tempfile

    from autogen_agentchat.agents import AssistantAgent, CodeExecutorAgent, UserProxyAgent
    from autogen_agentchat.conditions import MaxMessageTermination
    from autogen_agentchat.messages import StructuredMessage
    from autogen_agentchat.teams import SelectorGroupChat
    from autogen_core.memory import ListMemory, MemoryContent
    from autogen_ext.code_executors.local import LocalCommandLineCodeExecutor
    from pydantic import BaseModel

    class Answer(BaseModel):
        """The judge's structured answer."""

        n: int

    memory = ListMemory()
    await memory.add(MemoryContent(content=MEMORY, mime_type="text/plain"))  # type: ignore[arg-type]
    summer = AssistantAgent(
        "summer",
        model_client=_client([_calls(1, ("call_1", "add", '{"a": 1, "b": 2}'))]),
        tools=[add],
        memory=[memory],
        description="Adds.",
    )
    proxy = UserProxyAgent("proxy", input_func=lambda prompt: PROXY_REPLY, description="The user.")
    judge = AssistantAgent(
        "judge",
        model_client=_client([_text(4, '{"n": 3}')]),
        output_content_type=Answer,
        description="Answers.",
    )
    with tempfile.TemporaryDirectory() as work_dir:
        executor = LocalCommandLineCodeExecutor(work_dir=work_dir)
        await executor.start()
        coder = CodeExecutorAgent(
            "coder",
            code_executor=executor,
            model_client=_client([_text(2, CODE), _text(3, "The code failed with exit code 3.")]),
            max_retries_on_error=0,
            description="Runs code.",
        )
        team = SelectorGroupChat(
            [summer, proxy, coder, judge],
            model_client=_client(["summer", "proxy", "coder", "judge"]),
            termination_condition=MaxMessageTermination(5),
            emit_team_events=True,
            custom_message_types=[StructuredMessage[Answer]],
        )
        try:
            return await _collect(team.run_stream(task=SELECTOR_PROMPT))
        finally:
            await executor.stop()


def selector_stream() -> list[Any]:
    """Everything the selector team's ``run_stream`` yields (its ``TaskResult`` last)."""
    import warnings

    with warnings.catch_warnings():  # the local executor's and the approval's advice
        warnings.simplefilter("ignore", UserWarning)
        return in_thread(_selector_stream())


async def _collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


def solo_run() -> Any:
    """The solo run's ``TaskResult``."""
    return in_thread(solo_agent().run(task=PROMPT))


def solo_stream(*, stream: bool = True) -> list[Any]:
    """Everything ``run_stream`` yields for the solo run (its ``TaskResult`` last)."""
    return in_thread(_collect(solo_agent(stream=stream).run_stream(task=PROMPT)))


def team_run() -> Any:
    return in_thread(team().run(task=TEAM_PROMPT))


def team_stream() -> list[Any]:
    return in_thread(_collect(team().run_stream(task=TEAM_PROMPT)))


def chain_run() -> Any:
    return in_thread(chain().run(task=CHAIN_PROMPT))


def chain_stream() -> list[Any]:
    return in_thread(_collect(chain().run_stream(task=CHAIN_PROMPT)))


def version() -> str:
    from importlib.metadata import version as installed

    return installed("autogen-agentchat")


def main(names: list[str]) -> None:
    """Write the fixtures whose names contain one of ``names`` (all when there is none):
    each run's clock and ids are new, so a file left alone stays as it was."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    tag = f"autogen_v{version()}"
    solo: list[Any] = []

    def solo_result() -> Any:
        if not solo:
            solo.append(solo_run())
        return solo[0]

    makers: dict[str, Callable[[], Any]] = {
        f"{tag}_task-result_agent-tool.json": lambda: json.loads(solo_result().model_dump_json()),
        f"{tag}_messages_agent-tool.json": lambda: [m.dump() for m in solo_result().messages],
        f"{tag}_task-result_swarm-handoff.json": lambda: json.loads(team_run().model_dump_json()),
        f"{tag}_task-result_swarm-chain.json": lambda: json.loads(chain_run().model_dump_json()),
        f"{tag}_task-result_selector-team.json": lambda: json.loads(
            selector_stream()[-1].model_dump_json()
        ),
    }
    files = {
        name: make() for name, make in makers.items() if not names or any(n in name for n in names)
    }
    for name, value in files.items():
        text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
        (FIXTURES / name).write_text(text, encoding="utf-8")
        print(FIXTURES / name)


if __name__ == "__main__":
    main(sys.argv[1:])
