"""Scripted Microsoft Agent Framework runs, offline, for the agent-framework tests and fixtures.

``Scripted`` is a ``BaseChatClient`` with the framework's own layers (function invocation, chat
middleware, telemetry, in the order its clients compose them) that answers each model call from
a script, as the package's tests do with their mock chat client; function invocation is on, so
the tools really run.

The ``calc`` run: the model reasons, writes a line and calls ``add`` (succeeds) and
``explode`` (raises: its ``function_result`` carries the ``exception``) in one response, then
calls ``researcher``, an agent used as a tool (``agent.as_tool()``), then answers. Every model
call reports usage. Streamed, each text arrives word by word and ``add``'s arguments in two
JSON pieces.

The workflows: ``SequentialBuilder`` (``writer`` calls ``add`` then drafts, ``reviewer``
answers) and ``HandoffBuilder`` (``triage`` hands off to ``billing``, which calls ``add`` and
answers; the run ends by a termination condition).

The compactions (``agent_framework._compaction``), each as users turn it on:
``summarized`` is a ``CompactionProvider`` whose ``after_strategy`` is a
``SummarizationStrategy`` (its summariser a scripted client of its own) over three runs of one
session, each run's older messages summarised when it ends, a summary of the summary after the
second; ``tool_results_compacted`` is one run whose client compacts in the run
(``compaction_strategy=ToolResultCompactionStrategy``), its two older calls' results collapsed
into the framework's ``[Tool results: …]`` messages; ``sliding_window`` is a
``CompactionProvider`` with a ``SlidingWindowStrategy``, which leaves messages out of the
context with no summary.

``python -m tests.formats.agent_framework_runs`` writes the fixtures under
``tests/fixtures/frameworks/agent-framework/``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from tests.formats.loops import run_async

PROMPT = "add 1 and 2, explode y, ask the researcher"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "agent-framework"
MODEL = "scripted-model-1"


def client_class() -> type:
    from agent_framework import (
        BaseChatClient,
        ChatMiddlewareLayer,
        ChatResponse,
        ChatResponseUpdate,
        Content,
        FunctionInvocationLayer,
        Message,
        ResponseStream,
    )
    from agent_framework.observability import ChatTelemetryLayer

    class Scripted(
        FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, BaseChatClient
    ):  # type: ignore[misc]
        """Answers model call n with ``turns[n]``: ``{"id", "contents", "usage"}``."""

        def __init__(self, turns: list[dict[str, Any]]) -> None:
            super().__init__()
            self.turns = list(turns)

        def _inner_get_response(
            self, *, messages: Any, stream: bool, options: Any, **_: Any
        ) -> Any:
            turn = self.turns.pop(0)
            if stream:
                return ResponseStream(self._stream(turn), finalizer=ChatResponse.from_updates)

            async def whole() -> Any:
                return ChatResponse(
                    messages=Message("assistant", turn["contents"]),
                    model=MODEL,
                    response_id=turn["id"],
                    usage_details=turn["usage"],
                    created_at=turn["created_at"],
                )

            return whole()

        async def _stream(self, turn: dict[str, Any]) -> AsyncIterator[Any]:
            common = {"role": "assistant", "model": MODEL, "response_id": turn["id"],
                      "message_id": turn["id"], "created_at": turn["created_at"]}  # fmt: skip
            for content in turn["contents"]:
                for piece in _pieces(content, Content):
                    yield ChatResponseUpdate(contents=[piece], **common)
            usage = Content.from_usage(turn["usage"])
            yield ChatResponseUpdate(contents=[usage], role="assistant", finish_reason="stop")

    return Scripted


def _pieces(content: Any, Content: Any) -> Sequence[Any]:
    """A content as the deltas a provider streams: text word by word, a call's JSON arguments
    in two pieces (the second with the call's id, as the Chat Completions client sends it)."""
    if content.type in ("text", "text_reasoning") and content.text and " " in content.text:
        words = content.text.split(" ")
        texts = [w + " " for w in words[:-1]] + [words[-1]]
        if content.type == "text":
            return [Content.from_text(t) for t in texts]
        return [Content.from_text_reasoning(text=t) for t in texts]
    if content.type == "function_call" and isinstance(content.arguments, str):
        half = len(content.arguments) // 2
        return [
            Content.from_function_call(content.call_id, content.name, arguments=part)
            for part in (content.arguments[:half], content.arguments[half:])
        ]
    return [content]


def turn(n: int, *contents: Any, usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "id": f"resp_{n}",
        "contents": list(contents),
        "usage": usage or {"input_token_count": 10 * n, "output_token_count": n},
        "created_at": f"2025-06-01T12:00:0{n}Z",
    }


def tools() -> tuple[Any, Any]:
    from agent_framework import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @tool
    def explode(x: str) -> str:
        """Always fails."""
        raise ValueError(f"boom: {x}")

    return add, explode


def calc_agent() -> Any:
    from agent_framework import Agent, Content

    scripted = client_class()
    add, explode = tools()
    researcher = Agent(
        client=scripted([turn(1, Content.from_text("It is 11."))]),
        name="researcher",
        description="Looks things up.",
    )
    calc_turns = [
        turn(
            1,
            Content.from_text_reasoning(text="I should add and explode"),
            Content.from_text("Working on it."),
            Content.from_function_call("call_1", "add", arguments='{"a": 1, "b": 2}'),
            Content.from_function_call("call_2", "explode", arguments={"x": "y"}),
        ),
        turn(2, Content.from_function_call("call_3", "researcher", arguments={"task": "5+6?"})),
        turn(3, Content.from_text("1+2=3; explode failed; the researcher says 11.")),
    ]
    return Agent(
        client=scripted(calc_turns),
        name="calc",
        instructions="You add numbers.",
        tools=[add, explode, researcher.as_tool()],
    )


def _quiet() -> None:
    """The framework logs each failing tool; the tests' output need not show it."""
    import logging

    logging.getLogger("agent_framework").setLevel(logging.ERROR)


def run() -> tuple[Any, Any, Any]:
    """The ``calc`` agent run whole: ``(agent, session, response)``."""
    _quiet()
    agent = calc_agent()
    session = agent.create_session()
    response = run_async(agent.run(PROMPT, session=session))
    return agent, session, response


def streamed(feed: Any = None) -> tuple[Any, list[Any], Any]:
    """The ``calc`` agent run streamed: ``(agent, updates, final response)``; ``feed`` is given
    each update as it arrives."""
    _quiet()
    agent = calc_agent()

    async def go() -> tuple[list[Any], Any]:
        stream = agent.run(PROMPT, stream=True)
        updates = []
        async for update in stream:
            updates.append(update)
            if feed is not None:
                feed(update)
        return updates, await stream.get_final_response()

    updates, final = run_async(go())
    return agent, updates, final


def followed() -> tuple[Any, Any, Any]:
    """The streamed ``calc`` run through ``turnfold.follow`` (async, as in a notebook)."""
    import turnfold

    _quiet()
    agent = calc_agent()

    async def go() -> tuple[Any, Any]:
        stream = agent.run(PROMPT, stream=True)
        run = turnfold.follow(stream, display=False, agent=agent)
        async for _ in run:
            pass
        return run, await stream.get_final_response()

    run, final = run_async(go())
    return agent, run, final


def sequential() -> Any:
    from agent_framework import Agent, Content
    from agent_framework.orchestrations import SequentialBuilder

    scripted = client_class()
    add, _ = tools()
    writer = Agent(
        client=scripted([
            turn(1, Content.from_function_call("w_1", "add", arguments={"a": 1, "b": 2})),
            turn(2, Content.from_text("Draft: 1+2 is 3.")),
        ]),
        name="writer",
        tools=[add],
    )  # fmt: skip
    reviewer = Agent(client=scripted([turn(3, Content.from_text("Looks right."))]), name="reviewer")
    return SequentialBuilder(participants=[writer, reviewer]).build()


def handoff() -> Any:
    from agent_framework import Agent, Content
    from agent_framework.orchestrations import HandoffBuilder

    scripted = client_class()
    add, _ = tools()
    triage = Agent(
        client=scripted([
            turn(1, Content.from_text("Routing you to billing."),
                 Content.from_function_call("h_1", "handoff_to_billing", arguments={})),
        ]),
        name="triage",
        require_per_service_call_history_persistence=True,
    )  # fmt: skip
    billing = Agent(
        client=scripted([
            turn(2, Content.from_function_call("b_1", "add", arguments={"a": 1, "b": 2})),
            turn(3, Content.from_text("You owe 3.")),
        ]),
        name="billing",
        tools=[add],
        require_per_service_call_history_persistence=True,
    )  # fmt: skip

    def done(conversation: list[Any]) -> bool:
        return any(
            m.author_name == "billing" and m.role == "assistant" and m.text for m in conversation
        )

    return (
        HandoffBuilder(participants=[triage, billing], termination_condition=done)
        .with_start_agent(triage)
        .build()
    )


def workflow_run(workflow: Any, prompt: str) -> Any:
    """A workflow run whole: its ``WorkflowRunResult``."""
    _quiet()
    return run_async(workflow.run(prompt))


def workflow_streamed(workflow: Any, prompt: str, feed: Any = None) -> tuple[list[Any], Any]:
    """A workflow run streamed: its events and the final ``WorkflowRunResult``."""
    _quiet()

    async def go() -> tuple[list[Any], Any]:
        stream = workflow.run(prompt, stream=True)
        events = []
        async for event in stream:
            events.append(event)
            if feed is not None:
                feed(event)
        return events, await stream.get_final_response()

    return run_async(go())


#: The prompts of the ``summarized`` and ``sliding_window`` sessions, one run each.
SESSION_PROMPTS = ["add 1 and 2", "add 3 and 4", "what did we do?"]
#: What the ``summarized`` session's summariser answers, one summary after each run.
SUMMARIES = [
    "The user asked to add 1 and 2; add returned 3.",
    "Earlier: 1+2 is 3. The user asked to add 3 and 4; add returned 7.",
    "1+2 is 3 and 3+4 is 7; the user asked what was done.",
]


def _session_turns() -> list[dict[str, Any]]:
    from agent_framework import Content

    return [
        turn(1, Content.from_function_call("call_1", "add", arguments={"a": 1, "b": 2})),
        turn(2, Content.from_text("1+2 is 3.")),
        turn(3, Content.from_function_call("call_2", "add", arguments={"a": 3, "b": 4})),
        turn(4, Content.from_text("3+4 is 7.")),
        turn(5, Content.from_text("We added 1+2 and 3+4.")),
    ]


def _compacted_session(strategy: Any) -> tuple[Any, Any, list[Any]]:
    """Three runs of the ``calc`` agent in one session, its history compacted by
    ``strategy`` after each run: ``(agent, session, responses)``."""
    from agent_framework import Agent, CompactionProvider, InMemoryHistoryProvider

    _quiet()
    add, _ = tools()
    history = InMemoryHistoryProvider()
    compaction = CompactionProvider(after_strategy=strategy, history_source_id=history.source_id)
    agent = Agent(
        client=client_class()(_session_turns()),
        name="calc",
        tools=[add],
        context_providers=[history, compaction],
    )
    session = agent.create_session()
    responses = [run_async(agent.run(p, session=session)) for p in SESSION_PROMPTS]
    return agent, session, responses


#: The summariser's usage of each summary it writes (the framework keeps none of it).
SUMMARIZER_USAGE = {"input_token_count": 500, "output_token_count": 50}


def summarized() -> tuple[Any, Any, list[Any]]:
    """The session summarised after each run (``SummarizationStrategy``, one message kept)."""
    from agent_framework import Content, SummarizationStrategy

    summarizer = client_class()([
        turn(9, Content.from_text(text), usage=SUMMARIZER_USAGE) for text in SUMMARIES
    ])  # fmt: skip
    return _compacted_session(SummarizationStrategy(client=summarizer, target_count=1, threshold=0))


def sliding_window() -> tuple[Any, Any, list[Any]]:
    """The session's older groups left out after each run (``SlidingWindowStrategy``)."""
    from agent_framework import SlidingWindowStrategy

    return _compacted_session(SlidingWindowStrategy(keep_last_groups=2))


def tool_results_compacted(stream: bool = False, feed: Any = None) -> tuple[Any, Any, Any]:
    """One run of three ``add`` calls, compacted in the run before each model call (the
    client's ``ToolResultCompactionStrategy``, the newest call group kept): ``(agent,
    session, response)``; ``stream``: run streamed, ``feed`` given each update, the response
    its final one."""
    from agent_framework import Agent, Content, ToolResultCompactionStrategy

    _quiet()
    add, _ = tools()
    turns = [
        turn(1, Content.from_function_call("call_1", "add", arguments={"a": 1, "b": 2})),
        turn(2, Content.from_function_call("call_2", "add", arguments={"a": 3, "b": 4})),
        turn(3, Content.from_function_call("call_3", "add", arguments={"a": 5, "b": 6})),
        turn(4, Content.from_text("3, 7 and 11.")),
    ]
    agent = Agent(
        client=client_class()(turns),
        name="calc",
        tools=[add],
        compaction_strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
    )
    session = agent.create_session()

    async def go() -> Any:
        if not stream:
            return await agent.run("add 1+2, 3+4 and 5+6", session=session)
        updates = agent.run("add 1+2, 3+4 and 5+6", session=session, stream=True)
        async for update in updates:
            if feed is not None:
                feed(update)
        return await updates.get_final_response()

    return agent, session, run_async(go())


def _write(name: str, document: Any) -> Path:
    path = FIXTURES / name
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def write_fixtures() -> list[Path]:
    """The saved JSON forms users write: ``response.to_json()`` and ``session.to_dict()``."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    _, session, response = run()
    written = [
        _write("agent-framework_v1.23.0_response_calc.json", json.loads(response.to_json())),
        _write("agent-framework_v1.23.0_session_calc.json", session.to_dict()),
    ]
    return written + write_compaction_fixtures()


def write_compaction_fixtures() -> list[Path]:
    """The sessions and the response of the compacted runs, as users save them."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    _, summarized_session, _ = summarized()
    _, window_session, _ = sliding_window()
    _, tools_session, tools_response = tool_results_compacted()
    return [
        _write("agent-framework_v1.23.0_session_summarized.json", summarized_session.to_dict()),
        _write("agent-framework_v1.23.0_session_sliding-window.json", window_session.to_dict()),
        _write(
            "agent-framework_v1.23.0_response_tool-results-compacted.json",
            json.loads(tools_response.to_json()),
        ),
        _write(
            "agent-framework_v1.23.0_session_tool-results-compacted.json",
            tools_session.to_dict(),
        ),
    ]


if __name__ == "__main__":
    for written in write_fixtures():
        print(written)
