"""Runs of the real pydantic-ai and Microsoft Agent Framework, offline, for what releases newer
than the pinned ones write (pydantic-ai-slim 2.78, agent-framework-core 1.26) and for the
Agent Framework orchestrations not covered by ``agent_framework_runs.py``.

- ``budget_agent``: pydantic-ai's ``FunctionModel`` calls ``check`` (which, from 2.78, enqueues
  a ``CapabilityPart`` with ``ctx.enqueue``), answers a draft its output validator rejects
  (``ModelRetry``), then the final answer;
- ``denied_session``: an Agent Framework tool with ``approval_mode="always_require"`` whose
  approval the user refuses;
- ``concurrent``, ``group_chat``, ``magentic``: the orchestrations' builders on the scripted
  chat client of ``agent_framework_runs``.

``python -m tests.formats.framework_drift_runs`` (in an environment with the newer releases)
writes the fixtures named after the installed versions.
"""

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.formats.agent_framework_runs import FIXTURES as AF_FIXTURES
from tests.formats.agent_framework_runs import client_class, tools, turn
from tests.formats.loops import run_async
from tests.formats.pydantic_ai_runs import FIXTURES as PAI_FIXTURES
from tests.formats.pydantic_ai_runs import on_thread

DRAFT, FINAL, RETRY = "draft answer", "final answer", "not final yet"
REQUESTS_LEFT = "2 model requests left."


def _capability_part() -> Any:
    """A ``CapabilityPart`` kind of the application's (2.78 and later), else None."""
    from pydantic_ai import messages

    if not hasattr(messages, "InstructionCapabilityPart"):
        return None

    @dataclass(kw_only=True)
    class RequestsLeftPart(messages.InstructionCapabilityPart, namespace="budget"):  # type: ignore[misc, call-arg]
        pass

    return RequestsLeftPart(content=REQUESTS_LEFT, source=messages.OperatorSource())


def budget_agent() -> Any:
    from pydantic_ai import Agent, ModelRetry, RunContext
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def step(messages: list[Any]) -> int:
        return sum(1 for m in messages if isinstance(m, ModelRequest))

    def respond(messages: list[Any], info: Any) -> Any:
        if step(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("check", {"n": 1}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart(DRAFT if step(messages) == 2 else FINAL)])

    async def stream(messages: list[Any], info: Any) -> Any:
        if step(messages) == 1:
            yield {0: DeltaToolCall(name="check", json_args='{"n": 1}', tool_call_id="c1")}
        else:
            yield DRAFT if step(messages) == 2 else FINAL

    agent = Agent(FunctionModel(respond, stream_function=stream), name="budgeted")

    @agent.tool
    def check(ctx: RunContext[None], n: int) -> str:
        """Check the budget."""
        part = _capability_part()
        if part is not None:
            ctx.enqueue(part)
        return "checked"

    @agent.output_validator
    def validate(output: str) -> str:
        if output.startswith("draft"):
            raise ModelRetry(RETRY)
        return output

    return agent


def budget_run() -> Any:
    return on_thread(lambda: budget_agent().run_sync("go"))


def budget_followed(follower: Any) -> list[Any]:
    """``run_stream_events()`` of the budget agent, fed to ``follower`` (begun with its handle)."""

    async def go() -> list[Any]:
        seen = []
        async with budget_agent().run_stream_events("go") as events:
            follower.begin(events)
            async for event in events:
                follower.feed(event)
                seen.append(event)
        follower.close()
        return seen

    return on_thread(lambda: asyncio.run(go()))


def denied_session() -> Any:
    """The session of a run whose ``delete`` call the user refused to approve."""
    from agent_framework import Agent, Content, Message, tool

    @tool(approval_mode="always_require")
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    agent = Agent(
        client=client_class()([
            turn(1, Content.from_function_call("d_1", "delete", arguments={"path": "x"})),
            turn(2, Content.from_text("Not deleted.")),
        ]),
        name="janitor",
        tools=[delete],
    )  # fmt: skip
    session = agent.create_session()
    first = run_async(agent.run("delete x", session=session))
    request = next(
        c for m in first.messages for c in m.contents if c.type == "function_approval_request"
    )
    refusal = Message("user", [request.to_function_approval_response(approved=False)])
    run_async(agent.run(refusal, session=session))
    return session


def concurrent() -> Any:
    from agent_framework import Agent, Content
    from agent_framework.orchestrations import ConcurrentBuilder

    scripted = client_class()
    add, explode = tools()
    adder = Agent(
        client=scripted([
            turn(1, Content.from_function_call("a_1", "add", arguments={"a": 1, "b": 2})),
            turn(2, Content.from_text("Sum is 3.")),
        ]),
        name="adder",
        tools=[add],
    )  # fmt: skip
    bomber = Agent(
        client=scripted([
            turn(3, Content.from_function_call("x_1", "explode", arguments={"x": "q"})),
            turn(4, Content.from_text("It exploded.")),
        ]),
        name="bomber",
        tools=[explode],
    )  # fmt: skip
    return ConcurrentBuilder(participants=[adder, bomber]).build()


def group_chat() -> Any:
    from agent_framework import Agent, Content
    from agent_framework.orchestrations import GroupChatBuilder

    scripted = client_class()
    add, _ = tools()
    writer = Agent(
        client=scripted([
            turn(1, Content.from_function_call("g_1", "add", arguments={"a": 2, "b": 2})),
            turn(2, Content.from_text("2+2 is 4.")),
        ]),
        name="writer",
        tools=[add],
    )  # fmt: skip
    critic = Agent(client=scripted([turn(3, Content.from_text("Approved."))]), name="critic")
    order = iter(["writer", "critic"])
    return GroupChatBuilder(
        participants=[writer, critic], selection_func=lambda state: next(order), max_rounds=2
    ).build()


def _ledger(done: bool, speaker: str, instruction: str) -> Any:
    from agent_framework import Content

    def item(answer: Any) -> dict[str, Any]:
        return {"reason": "scripted", "answer": answer}

    return Content.from_text(json.dumps({
        "is_request_satisfied": item(done), "is_in_loop": item(False),
        "is_progress_being_made": item(True), "next_speaker": item(speaker),
        "instruction_or_question": item(instruction),
    }))  # fmt: skip


def magentic() -> Any:
    """``StandardMagenticManager`` on a scripted manager agent: facts, plan, a progress ledger
    naming ``coder``, one saying the task is done, the final answer."""
    from agent_framework import Agent, Content
    from agent_framework.orchestrations import MagenticBuilder

    scripted = client_class()
    add, _ = tools()
    manager = Agent(
        client=scripted([
            turn(1, Content.from_text("Facts: none.")),
            turn(2, Content.from_text("Plan: coder adds.")),
            turn(3, _ledger(False, "coder", "add 3 and 4")),
            turn(5, _ledger(True, "coder", "")),
            turn(6, Content.from_text("The answer is 7.")),
        ]),
        name="manager",
    )  # fmt: skip
    coder = Agent(
        client=scripted([
            turn(4, Content.from_function_call("m_1", "add", arguments={"a": 3, "b": 4})),
            turn(5, Content.from_text("3+4 is 7.")),
        ]),
        name="coder",
        description="Adds numbers.",
        tools=[add],
    )  # fmt: skip
    return MagenticBuilder(participants=[coder], manager_agent=manager).build()


def write_fixtures() -> list[Path]:
    from importlib.metadata import version

    written = []
    pai = version("pydantic-ai-slim")
    if _capability_part() is not None:
        path = PAI_FIXTURES / f"pydantic-ai_v{pai}_all-messages_capability-retry.json"
        path.write_text(
            json.dumps(json.loads(budget_run().all_messages_json()), indent=1) + "\n",
            encoding="utf-8",
        )
        written.append(path)
    af = version("agent-framework-core")
    path = AF_FIXTURES / f"agent-framework_v{af}_session_denied.json"
    path.write_text(json.dumps(denied_session().to_dict(), indent=1) + "\n", encoding="utf-8")
    written.append(path)
    return written


if __name__ == "__main__":
    for written in write_fixtures():
        print(written)
