"""Agent frameworks' runs: converting a finished run, and following one live (issue 22).

Each framework's run is scripted on its own offline model (as in the tests) with ``--steps``
tool calls, each answered, so a run holds about ``2 x steps`` messages. Measured in the same
run, best of ``--runs`` alternating runs:

  convert   ``turnfold.load(run object)`` against the framework's own serialization of the
            same object (``to_input_list()``, ``messages_to_dict``,
            ``ModelMessagesTypeAdapter.dump_python``); bar <= 1.5x
  follow    the scripted run consumed through ``turnfold.follow(events, display=False)``
            against the same run consumed bare; bar <= 1.10x (the run's wall time, the
            scripted model's and the framework's own work included)

A framework that is not installed is skipped with a line that says so.

    python benchmarks/frameworks.py [--steps 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

# benchmarks/ is not a package: its timing helper is imported from this directory.
from load import best_of

CONVERT_BAR, FOLLOW_BAR = 1.5, 1.10


@dataclass
class Case:
    """One framework: a finished run to convert, and a fresh run to consume, with a wrapper
    for its events (``turnfold.follow`` or nothing)."""

    name: str
    serialization: str
    run: Callable[[], Any]
    serialize: Callable[[Any], Any]
    consume: Callable[[Callable[[Any], Any]], Any]


def _on_thread(work: Callable[[], Any]) -> Any:
    with ThreadPoolExecutor(max_workers=1) as pool:  # a loop of its own
        return pool.submit(work).result()


# --- the OpenAI Agents SDK -------------------------------------------------------------------


def openai_agents(steps: int) -> Case:
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def agent() -> Any:
        script = [
            ModelStep(output=[function_call("add", {"a": n, "b": 1}, call_id=f"call_{n}")])
            for n in range(steps)
        ]
        script.append(ModelStep(output=[assistant_message("done")]))
        return Agent(name="calc", tools=[add], model=ScriptedModel(script))

    def run() -> Any:
        return _on_thread(lambda: Runner.run_sync(agent(), "add", max_turns=steps + 2))

    def consume(wrap: Callable[[Any], Any]) -> Any:
        async def main() -> Any:
            result = Runner.run_streamed(agent(), "add", max_turns=steps + 2)
            async for _ in wrap(result.stream_events()):
                pass
            return result

        return _on_thread(lambda: asyncio.run(main()))

    return Case(
        "openai-agents", "to_input_list()", run, lambda result: result.to_input_list(), consume
    )


# --- LangChain / LangGraph ------------------------------------------------------------------


def langchain(steps: int) -> Case:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, messages_to_dict
    from langchain_core.tools import tool

    class ToolModel(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the base class raises
            return self

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}

    def agent() -> Any:
        calls = [
            AIMessage(
                "",
                tool_calls=[{"name": "add", "args": {"a": n, "b": 1}, "id": f"call_{n}"}],
                usage_metadata=usage,  # type: ignore[arg-type]
            )
            for n in range(steps)
        ]
        model = ToolModel(responses=[*calls, AIMessage("done", usage_metadata=usage)])  # type: ignore[arg-type]
        return create_agent(model, tools=[add])

    inputs = {"messages": [("user", "add")]}
    config = {"recursion_limit": 2 * steps + 10}

    def run() -> Any:
        return agent().invoke(inputs, config)["messages"]

    def consume(wrap: Callable[[Any], Any]) -> Any:
        for _ in wrap(agent().stream(inputs, config, stream_mode="updates")):
            pass

    return Case("langchain", "messages_to_dict", run, messages_to_dict, consume)


# --- pydantic-ai ----------------------------------------------------------------------------


def pydantic_ai(steps: int) -> Case:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    unlimited = UsageLimits(request_limit=None)  # the default stops a run at 50 requests

    def script(messages: list[Any], info: Any) -> ModelResponse:
        n = len(messages) // 2  # one request and one response per step so far
        if n >= steps:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("add", {"a": n, "b": 1}, tool_call_id=f"c{n}")])

    def agent() -> Any:
        made = Agent(FunctionModel(script))

        @made.tool_plain
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        return made

    def run() -> Any:
        return _on_thread(lambda: agent().run_sync("add", usage_limits=unlimited))

    def consume(wrap: Callable[[Any], Any]) -> Any:
        async def main() -> None:
            async with agent().iter("add", usage_limits=unlimited) as nodes:
                async for _ in wrap(nodes):
                    pass

        _on_thread(lambda: asyncio.run(main()))

    return Case(
        "pydantic-ai",
        "ModelMessagesTypeAdapter.dump_python",
        run,
        lambda result: ModelMessagesTypeAdapter.dump_python(result.all_messages()),
        consume,
    )


CASES: dict[str, Callable[[int], Case]] = {
    "openai-agents": openai_agents,
    "langchain": langchain,
    "pydantic-ai": pydantic_ai,
}


def measure(case: Case, runs: int) -> tuple[float, float]:
    import turnfold

    result = case.run()
    loaded = turnfold.load(result)  # a first call of each side warms its caches (schemas)
    case.serialize(result)
    assert loaded.tool_calls(), f"{case.name}: the run holds no tool calls"
    own, ours = best_of(runs, lambda: case.serialize(result), lambda: turnfold.load(result))
    bare, followed = best_of(
        runs,
        lambda: case.consume(lambda events: events),
        lambda: case.consume(lambda events: turnfold.follow(events, display=False)),
    )
    print(
        f"{case.name}: convert {ours:.3f} s vs {case.serialization} {own:.3f} s "
        f"= {ours / own:.2f}x (bar {CONVERT_BAR}x); follow {followed:.3f} s vs bare "
        f"{bare:.3f} s = {followed / bare:.2f}x (bar {FOLLOW_BAR:.2f}x)"
    )
    return ours / own, followed / bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500, help="tool calls per run")
    parser.add_argument("--runs", type=int, default=3, help="alternating runs, best kept")
    parser.add_argument("--only", choices=list(CASES), action="append", help="these frameworks")
    options = parser.parse_args()
    converts, follows = [], []
    for name, make in CASES.items():
        if options.only and name not in options.only:
            continue
        try:
            case = make(options.steps)
        except ImportError as exc:
            print(f"{name}: skipped ({exc.name} is not installed)")
            continue
        convert, follow = measure(case, options.runs)
        converts.append(convert)
        follows.append(follow)
    if not converts:
        print("frameworks: no framework installed, nothing measured 0.00x")
        return
    print(
        f"frameworks: convert/serialize = {max(converts):.2f}x worst (bar {CONVERT_BAR}x); "
        f"followed/bare = {max(follows):.2f}x worst (bar {FOLLOW_BAR:.2f}x)"
    )


if __name__ == "__main__":
    main()
