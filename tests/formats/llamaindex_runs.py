"""Scripted LlamaIndex agent runs, offline (``MockFunctionCallingLLM`` replies with scripted
``ChatMessage`` blocks; ``../shared/notes/agent-frameworks.md`` §9), for the llamaindex tests
and fixtures.

``solo``: a ``FunctionAgent`` thinks and calls ``add`` (succeeds), calls ``explode`` (raises:
``ToolOutput.is_error``) and answers. ``handoff``: an ``AgentWorkflow`` whose ``lead`` agent
hands off to ``math``, which calls ``add`` and answers.

``python -m tests.formats.llamaindex_runs`` writes the fixtures under
``tests/fixtures/frameworks/llamaindex/`` (the memory's messages, ``ChatMessage.model_dump()``
each, as users save them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.formats.loops import run_async

PROMPT = "add 1 and 2, then explode"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "llamaindex"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def explode(x: str) -> str:
    """Always fails."""
    raise ValueError(f"boom: {x}")


def scripted(replies: list[list[Any]]) -> Any:
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    left = list(replies)
    return MockFunctionCallingLLM(
        response_generator=lambda messages, **kw: ChatMessage(role="assistant", blocks=left.pop(0))
    )


def solo_agent() -> Any:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock

    replies = [
        [ThinkingBlock(content="need add"),
         ToolCallBlock(tool_call_id="call_1", tool_name="add", tool_kwargs={"a": 1, "b": 2})],
        [ToolCallBlock(tool_call_id="call_2", tool_name="explode", tool_kwargs={"x": "y"})],
        [TextBlock(text="1+2=3; explode failed.")],
    ]  # fmt: skip
    return FunctionAgent(tools=[add, explode], llm=scripted(replies), system_prompt="Be terse.")


def handoff_workflow() -> Any:
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.base.llms.types import TextBlock, ToolCallBlock

    handing = {"to_agent": "math", "reason": "needs math"}
    lead = FunctionAgent(
        name="lead", description="routes", tools=[], can_handoff_to=["math"],
        system_prompt="Route.",
        llm=scripted([[TextBlock(text="handing off"),
                       ToolCallBlock(tool_call_id="h1", tool_name="handoff",
                                     tool_kwargs=handing)]]),
    )  # fmt: skip
    math = FunctionAgent(
        name="math", description="adds", tools=[add], system_prompt="Add.",
        llm=scripted([[ToolCallBlock(tool_call_id="c1", tool_name="add",
                                     tool_kwargs={"a": 2, "b": 3})],
                      [TextBlock(text="2+3=5")]]),
    )  # fmt: skip
    return AgentWorkflow(agents=[lead, math], root_agent="lead")


def counting_agent(steps: int) -> Any:
    """A ``FunctionAgent`` that thinks and calls ``add`` ``steps`` times, then answers; each
    response's token counts in its ``additional_kwargs``, as LlamaIndex's integrations write
    them (``prompt_tokens`` / ``completion_tokens``)."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    def reply(messages: list[Any], **kw: Any) -> Any:
        n = sum(1 for m in messages if m.role == "tool")  # one result per step so far
        usage = {"prompt_tokens": 10 + n, "completion_tokens": 2}
        if n >= steps:
            return ChatMessage(role="assistant", blocks=[TextBlock(text=f"{steps} added")],
                               additional_kwargs=usage)  # fmt: skip
        call = ToolCallBlock(tool_call_id=f"c{n}", tool_name="add", tool_kwargs={"a": n, "b": 1})
        blocks = [ThinkingBlock(content=f"step {n}"), call]
        return ChatMessage(role="assistant", blocks=blocks, additional_kwargs=usage)

    llm = MockFunctionCallingLLM(response_generator=reply)
    return FunctionAgent(tools=[add], llm=llm, system_prompt="Count.")


async def _run(agent: Any, prompt: str, on_event: Any = None) -> tuple[Any, Any, list[Any]]:
    handler = agent.run(user_msg=prompt)
    events = []
    async for event in handler.stream_events():
        events.append(event)
        if on_event is not None:
            on_event(event)
    output = await handler
    return handler, output, events


def run(which: str = "solo", on_event: Any = None) -> tuple[Any, Any, list[Any]]:
    """The awaited handler, its ``AgentOutput`` and the events it streamed."""
    agent = solo_agent() if which == "solo" else handoff_workflow()
    prompt = PROMPT if which == "solo" else "what is 2+3"
    return run_async(_run(agent, prompt, on_event))


def run_agent(agent: Any, prompt: str) -> tuple[Any, Any, list[Any]]:
    """``agent``'s run of ``prompt``, as :func:`run` gives it."""
    return run_async(_run(agent, prompt))


def memory_of(handler: Any) -> list[Any]:
    """The run's messages, as a user reads them: ``await memory.aget_all()``."""

    async def messages() -> list[Any]:
        memory = await handler.ctx.store.get("memory")
        return list(await memory.aget_all())

    return run_async(messages())


def write_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for which in ("solo", "handoff"):
        handler, _, _ = run(which)
        records = [m.model_dump(mode="json") for m in memory_of(handler)]
        path = FIXTURES / f"llama-index-core_v0.14.25_memory_{which}.json"
        path.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()
