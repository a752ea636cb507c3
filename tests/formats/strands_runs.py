"""Scripted Strands Agents runs, offline (a ``Model`` subclass replays the model's stream
chunks; ``../shared/notes/agent-frameworks.md`` §8), for the strands tests and fixture.

The run: the ``calc`` agent calls ``add`` twice in one response (both succeed), ``explode``
(raises: its toolResult is ``status: "error"``) and ``researcher``, an agent used as a tool
(``Agent.as_tool()``) that itself calls ``add``; then it reasons and answers. Every response
reports usage, the last one with cache counts. ``orchestrator`` is an agent whose tools are
agents given the other two ways: an ``Agent`` in ``tools=``, and a ``@tool`` function calling
an agent.

``python tests/formats/strands_runs.py`` writes the fixture under
``tests/fixtures/frameworks/strands/``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

PROMPT = "add 1 and 2 and 3 and 4, explode y, ask the researcher"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "strands"
T = TypeVar("T")


def turn(*blocks: tuple[Any, ...], stop: str, usage: dict[str, int] | None = None) -> list[Any]:
    """One model response as Bedrock ConverseStream chunks: blocks are ``("tool", id, name,
    args)``, ``("text", s)`` or ``("reasoning", s)``."""
    events: list[Any] = [{"messageStart": {"role": "assistant"}}]
    for block in blocks:
        if block[0] == "tool":
            start = {"toolUse": {"toolUseId": block[1], "name": block[2]}}
            text = json.dumps(block[3])
            events.append({"contentBlockStart": {"start": start}})
            # Two chunks, so a live view sees the input grow.
            for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                events.append({"contentBlockDelta": {"delta": {"toolUse": {"input": piece}}}})
        elif block[0] == "text":
            for piece in block[1].split(" "):
                events.append({"contentBlockDelta": {"delta": {"text": piece + " "}}})
        else:
            delta = {"reasoningContent": {"text": block[1]}}
            events.append({"contentBlockDelta": {"delta": delta}})
            signature = {"reasoningContent": {"signature": "sig-1"}}
            events.append({"contentBlockDelta": {"delta": signature}})
        events.append({"contentBlockStop": {}})
    counts = usage or {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    return [
        *events,
        {"messageStop": {"stopReason": stop}},
        {"metadata": {"usage": counts, "metrics": {"latencyMs": 7}}},
    ]


def scripted_model(turns: list[list[Any]]) -> Any:
    from strands.models.model import Model

    class ScriptedModel(Model):
        def __init__(self) -> None:
            self.turns = list(turns)
            self.config: dict[str, Any] = {"model_id": "scripted-1"}

        def update_config(self, **kw: Any) -> None:
            self.config.update(kw)

        def get_config(self) -> Any:
            return self.config

        def structured_output(self, *a: Any, **kw: Any) -> Any:
            raise NotImplementedError

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                         **kw: Any) -> AsyncIterator[Any]:  # fmt: skip
            for event in self.turns.pop(0):
                yield event

    return ScriptedModel()


def make_agent(**options: Any) -> Any:
    """The ``calc`` agent, with its tools and the ``researcher`` agent as a tool."""
    from strands import Agent, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @tool
    def explode(x: str) -> str:
        """Always fails."""
        raise ValueError(f"boom: {x}")

    researcher = Agent(
        name="researcher",
        description="Looks things up.",
        tools=[add],
        callback_handler=None,
        model=scripted_model(
            [
                turn(("tool", "r_1", "add", {"a": 5, "b": 6}), stop="tool_use"),
                turn(("text", "It is 11."), stop="end_turn"),
            ]
        ),
    )
    usage = {"inputTokens": 40, "outputTokens": 9, "totalTokens": 49,
             "cacheReadInputTokens": 30, "cacheWriteInputTokens": 2}  # fmt: skip
    return Agent(
        name="calc",
        **options,
        tools=[add, explode, researcher.as_tool()],
        system_prompt="You are terse.",
        callback_handler=None,
        model=scripted_model(
            [
                turn(
                    ("tool", "call_1", "add", {"a": 1, "b": 2}),
                    ("tool", "call_2", "add", {"a": 3, "b": 4}),
                    stop="tool_use",
                ),
                turn(
                    ("text", "Now the failing one."),
                    ("tool", "call_3", "explode", {"x": "y"}),
                    stop="tool_use",
                ),
                turn(("tool", "call_4", "researcher", {"input": "what is 5+6?"}), stop="tool_use"),
                turn(
                    ("reasoning", "All done; explode failed."),
                    ("text", "1+2=3, 3+4=7; explode failed; the researcher says 11."),
                    stop="end_turn",
                    usage=usage,
                ),
            ]
        ),
    )


ORCHESTRATOR_PROMPT = "draft a note, then check that 2+2=4"
ORCHESTRATOR_ANSWER = "Drafted and checked: 2+2=4."


def orchestrator(*, twice: bool = False, **options: Any) -> Any:
    """The ``lead`` agent, whose tools are agents in the two other ways Strands allows: the
    ``writer`` ``Agent`` given in ``tools=`` itself, and ``check``, a ``@tool`` function that
    calls the ``checker`` agent (the agents-as-tools pattern), which calls ``add``; ``draft``
    makes an agent of its own inside the function. With ``twice``, the writer is called a
    second time at the end."""
    from strands import Agent, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    writer = Agent(
        name="writer",
        description="Writes short notes.",
        callback_handler=None,
        model=scripted_model(
            [turn(("text", "Note: all good."), stop="end_turn"),
             turn(("text", "Second note."), stop="end_turn")]
        ),
    )  # fmt: skip
    checker = Agent(
        name="checker",
        tools=[add],
        callback_handler=None,
        model=scripted_model(
            [
                turn(("tool", "k_1", "add", {"a": 2, "b": 2}), stop="tool_use"),
                turn(("text", "Checked: 4."), stop="end_turn"),
            ]
        ),
    )

    @tool
    def check(claim: str) -> str:
        """Check a claim with the checker agent."""
        return str(checker(claim))

    @tool
    def draft(topic: str) -> str:
        """Draft a text with a fresh agent."""
        drafter = Agent(
            callback_handler=None,
            model=scripted_model([turn(("text", f"Draft on {topic}."), stop="end_turn")]),
        )
        return str(drafter(topic))

    turns = [
        turn(("tool", "l_1", "writer", {"input": "a note"}), stop="tool_use"),
        turn(("tool", "l_2", "check", {"claim": "2+2=4"}), stop="tool_use"),
        turn(("tool", "l_3", "draft", {"topic": "sums"}), stop="tool_use"),
    ]
    if twice:
        turns.append(turn(("tool", "l_4", "writer", {"input": "another"}), stop="tool_use"))
    return Agent(
        name="lead",
        **options,
        tools=[writer, check, draft],
        callback_handler=None,
        model=scripted_model([*turns, turn(("text", ORCHESTRATOR_ANSWER), stop="end_turn")]),
    )


def orchestrator_run(follow: bool = False, twice: bool = False) -> tuple[Any, Any]:
    """The ``lead`` agent after its run, and the ``AgentResult`` (or, with ``follow``, the
    ``turnfold.follow`` of its ``stream_async``)."""

    async def go() -> tuple[Any, Any]:
        agent = orchestrator(twice=twice)
        if not follow:
            return agent, await agent.invoke_async(ORCHESTRATOR_PROMPT)
        import turnfold

        followed = turnfold.follow(agent.stream_async(ORCHESTRATOR_PROMPT), display=False)
        async for _ in followed:
            pass
        return agent, followed

    return on_fresh_thread(go)


def on_fresh_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine with ``asyncio.run`` on a thread of its own: Strands' sync call runs
    its own loop, which refuses to start beside one an earlier test left running."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def run(**options: Any) -> tuple[Any, Any]:
    """The agent after the scripted run, and the run's ``AgentResult``; ``options`` go to
    the ``Agent`` (a ``session_manager``, say)."""

    async def go() -> tuple[Any, Any]:
        agent = make_agent(**options)
        result = await agent.invoke_async(PROMPT)
        return agent, result

    return on_fresh_thread(go)


def live_run(on_event: Callable[[Any], None] | None = None) -> tuple[Any, list[Any]]:
    """The same run streamed: the agent afterwards and every ``stream_async`` event, each
    also given to ``on_event`` as it arrives (events hold the live agent, whose messages grow
    after the event: a follower must see each one then, not replayed after the run)."""

    async def go() -> tuple[Any, list[Any]]:
        agent = make_agent()
        events = []
        async for event in agent.stream_async(PROMPT):
            events.append(event)
            if on_event is not None:
                on_event(event)
        return agent, events

    return on_fresh_thread(go)


def followed_run() -> tuple[Any, Any]:
    """The run streamed through ``turnfold.follow`` (``async for`` over it, as in a notebook
    cell); the agent afterwards and the ``Follow``."""
    import turnfold

    async def go() -> tuple[Any, Any]:
        agent = make_agent()
        followed = turnfold.follow(agent.stream_async(PROMPT), display=False)
        async for _ in followed:
            pass
        return agent, followed

    return on_fresh_thread(go)


def long_run(cycles: int, on_event: Callable[[Any], None]) -> Any:
    """An agent that calls ``add`` ``cycles`` times, one response each, streamed to
    ``on_event``; the agent afterwards (its default conversation manager keeps 40 messages)."""
    from strands import Agent, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    turns = [
        turn(("text", f"Step {i}."), ("tool", f"c{i}", "add", {"a": i, "b": 1}), stop="tool_use")
        for i in range(cycles)
    ]
    model = scripted_model([*turns, turn(("text", "Done."), stop="end_turn")])

    async def go() -> Any:
        agent = Agent(tools=[add], callback_handler=None, model=model)
        async for event in agent.stream_async("count"):
            on_event(event)
        return agent

    return on_fresh_thread(go)


# --- a run stopped by interrupts -----------------------------------------------------------------

INTERRUPT_PROMPT = "read /a, delete /a and /b"
INTERRUPT_ANSWER = "Read /a, deleted /a, kept /b."


def interrupting_agent() -> Any:
    """``ops`` calls ``read`` and ``delete`` twice in one response; a ``BeforeToolCallEvent``
    hook interrupts each ``delete`` for approval (``event.interrupt(...)``), so the run stops
    (``stop_reason`` ``"interrupt"``) after ``read`` ran; resumed with the answers (yes for
    /a, no for /b: the hook cancels that call), it answers."""
    from strands import Agent, tool
    from strands.hooks import BeforeToolCallEvent

    @tool
    def read(path: str) -> str:
        """Read a path."""
        return f"contents of {path}"

    @tool
    def delete(path: str) -> str:
        """Delete a path."""
        return f"deleted {path}"

    def approve(event: Any) -> None:
        if event.tool_use["name"] == "delete":
            answer = event.interrupt(
                "approve-delete", reason={"path": event.tool_use["input"]["path"]}
            )
            if answer != "yes":
                event.cancel_tool = f"user said {answer}"

    agent = Agent(
        name="ops",
        tools=[read, delete],
        callback_handler=None,
        model=scripted_model(
            [
                turn(
                    ("tool", "i_1", "read", {"path": "/a"}),
                    ("tool", "i_2", "delete", {"path": "/a"}),
                    ("tool", "i_3", "delete", {"path": "/b"}),
                    stop="tool_use",
                ),
                turn(("text", INTERRUPT_ANSWER), stop="end_turn"),
            ]
        ),
    )
    agent.hooks.add_callback(BeforeToolCallEvent, approve)
    return agent


def interrupted_run(follow: bool = False) -> tuple[Any, Any]:
    """The ``ops`` agent stopped by its interrupts, and the run's ``AgentResult`` (or, with
    ``follow``, the ``turnfold.follow`` of its ``stream_async``)."""

    async def go() -> tuple[Any, Any]:
        agent = interrupting_agent()
        if not follow:
            return agent, await agent.invoke_async(INTERRUPT_PROMPT)
        import turnfold

        followed = turnfold.follow(agent.stream_async(INTERRUPT_PROMPT), display=False)
        async for _ in followed:
            pass
        return agent, followed

    return on_fresh_thread(go)


def resume(agent: Any, result: Any) -> Any:
    """``agent`` resumed with the answers to ``result``'s interrupts: yes for /a, no for /b."""
    answers = [
        {"interruptResponse": {"interruptId": i.id,
                               "response": "yes" if i.reason["path"] == "/a" else "no"}}
        for i in result.interrupts
    ]  # fmt: skip
    return on_fresh_thread(lambda: agent.invoke_async(answers))


def version() -> str:
    from importlib.metadata import version as installed

    return installed("strands-agents")


def main() -> None:
    agent, _ = run()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path = FIXTURES / f"strands_v{version()}_messages_agent-tool.json"
    path.write_text(json.dumps(agent.messages, indent=1) + "\n", encoding="utf-8")
    print(path)
    lead, _ = orchestrator_run()
    path = FIXTURES / f"strands_v{version()}_messages_agents-as-tools.json"
    path.write_text(json.dumps(lead.messages, indent=1) + "\n", encoding="utf-8")
    print(path)


if __name__ == "__main__":
    main()
