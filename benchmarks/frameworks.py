"""Agent frameworks' runs: converting a finished run, and following one live (issue 22).

Each framework's run is scripted on its own offline model (as in the tests) with ``--steps``
tool calls, each answered, so a run holds about ``2 x steps`` messages. Measured in the same
run, best of ``--runs`` alternating runs (of ten times as many for a conversion, which takes
milliseconds):

  convert   ``turnfold.load(run object)`` against the framework's own serialization of the
            same object (``to_input_list()``, ``messages_to_dict``,
            ``ModelMessagesTypeAdapter.dump_python``); bar <= 1.5x. Beside it, the part of
            the load that only turns the object into the records the reader reads (the
            adapter's ``plain``: for LangChain the messages themselves, read in place)
  follow    the scripted run consumed through ``turnfold.follow(events, display=False)``
            against the same run consumed bare; bar <= 1.10x (the run's wall time, the
            scripted model's and the framework's own work included)

  browser   (``--browser``) the follow bar's browser case: in a real JupyterLab (its own
            settings, as the browser tests run it) with headless Chromium
            (``/usr/bin/chromium``) showing the notebook, each run is consumed bare in one cell
            and through ``turnfold.follow(events)`` in another, whose live widget is displayed
            in that cell and drawn by the browser while the run goes on; the kernel times each
            run (the cell's work, not the browser's round trips); bar <= 1.10x

A framework that is not installed is skipped with a line that says so.

    python benchmarks/frameworks.py [--steps 500] [--runs 3] [--browser]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: benchmarks, tests

from benchmarks.load import best_of

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
        # Each response its own id, as the Responses API gives them (ModelStep's default is
        # one id for all: every call of the run would be one batch of 500).
        script = [
            ModelStep(
                output=[function_call("add", {"a": n, "b": 1}, call_id=f"call_{n}")],
                response_id=f"resp_{n}",
            )
            for n in range(steps)
        ]
        script.append(ModelStep(output=[assistant_message("done")], response_id="resp_done"))
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


def llamaindex(steps: int) -> Case:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    def script(messages: list[Any], **kw: Any) -> Any:
        n = sum(1 for m in messages if m.role == "tool")  # one result per step so far
        if n >= steps:
            return ChatMessage(role="assistant", blocks=[TextBlock(text="done")])
        call = ToolCallBlock(tool_call_id=f"c{n}", tool_name="add", tool_kwargs={"a": n, "b": 1})
        return ChatMessage(role="assistant", blocks=[call])

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def start() -> Any:
        agent = FunctionAgent(tools=[add], llm=MockFunctionCallingLLM(response_generator=script))
        return agent.run(user_msg="add", max_iterations=steps + 5)

    def run() -> Any:
        async def main() -> Any:
            handler = start()
            await handler
            memory = await handler.ctx.store.get("memory")
            return await memory.aget_all()  # the run's ChatMessages

        return _on_thread(lambda: asyncio.run(main()))

    def consume(wrap: Callable[[Any], Any]) -> Any:
        async def main() -> None:
            handler = start()
            async for _ in wrap(handler.stream_events()):
                pass
            await handler

        _on_thread(lambda: asyncio.run(main()))

    return Case(
        "llamaindex",
        "ChatMessage.model_dump",
        run,
        lambda messages: [m.model_dump() for m in messages],
        consume,
    )


def agent_framework(steps: int) -> Case:
    # The tests' scripted chat client.
    from agent_framework import Agent, Content
    from tests.formats.agent_framework_runs import _quiet, client_class, tools, turn

    _quiet()
    add, _ = tools()

    def agent() -> Any:
        turns = [
            turn(1, Content.from_function_call(f"c{n}", "add", arguments={"a": n, "b": 1}))
            for n in range(steps)
        ]
        client = client_class()([*turns, turn(2, Content.from_text("done"))])
        client.function_invocation_configuration["max_iterations"] = steps + 5
        return Agent(client=client, name="adder", tools=[add])

    def run() -> Any:
        return _on_thread(lambda: asyncio.run(agent().run("add")))

    def consume(wrap: Callable[[Any], Any]) -> Any:
        async def main() -> None:
            async for _ in wrap(agent().run("add", stream=True)):
                pass

        _on_thread(lambda: asyncio.run(main()))

    return Case("agent-framework", "AgentResponse.to_dict", run, lambda r: r.to_dict(), consume)


def dspy(steps: int) -> Case:
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price map fetched
    import dspy as dspy_
    from tests.formats import dspy_runs

    def run() -> Any:
        return dspy_runs.long_run(steps)[2]()  # the run's Prediction

    def consume(wrap: Callable[[Any], Any]) -> Any:
        agent, lm, _ = dspy_runs.long_run(steps)
        program = dspy_.streamify(agent, async_streaming=False)
        with dspy_.context(lm=lm):
            for _ in wrap(program(question="add")):
                pass

    # DSPy's own serialization of a run is json.dumps of its toDict() (Evaluate(save_as_json=)
    # writes predictions so): a Prediction is plain values already, so toDict() alone makes only
    # new dicts of the same values, the work no other framework's baseline stops at (theirs,
    # model_dump and the like, turn each message's objects into plain values).
    return Case(
        "dspy",
        "json.dumps(Prediction.toDict())",
        run,
        lambda prediction: json.dumps(prediction.toDict()),
        consume,
    )


def haystack(steps: int) -> Case:
    import os

    os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # no posthog
    from tests.formats import haystack_runs

    def consume(wrap: Callable[[Any], Any]) -> Any:
        # Haystack streams only through a callback, called on the run's own thread: the run
        # is followed as a user follows it (turnfold's Live callback), each chunk seen by the
        # Follow ``wrap`` makes of a stream of no events, which then ends it. A thread and a
        # queue between the run and turnfold.follow cost the run more than following does.
        probe: Any = iter(())
        follow = wrap(probe)
        if follow is probe:  # the bare run
            haystack_runs.long_run(steps, streaming_callback=lambda chunk: None)
            return
        haystack_runs.long_run(steps, streaming_callback=follow.see)
        for _ in follow:
            pass

    def serialize(result: Any) -> Any:
        return json.dumps([message.to_dict() for message in result["messages"]])

    return Case(
        "haystack",
        "json.dumps([m.to_dict() for m in messages])",
        lambda: haystack_runs.long_run(steps),
        serialize,
        consume,
    )


def agno(steps: int) -> Case:
    from tests.formats import agno_runs  # Agno's telemetry off, before agno is imported

    def consume(wrap: Callable[[Any], Any]) -> Any:
        for _ in wrap(agno_runs.long_run(steps, stream=True, stream_events=True)):
            pass

    # Agno's own serialization of a run is its to_json() (what users save, and what its
    # databases store of each run: to_dict(), written as JSON).
    return Case(
        "agno",
        "RunOutput.to_json()",
        lambda: agno_runs.long_run(steps),
        lambda run: run.to_json(),
        consume,
    )


CASES: dict[str, Callable[[int], Case]] = {
    "openai-agents": openai_agents,
    "langchain": langchain,
    "pydantic-ai": pydantic_ai,
    "llamaindex": llamaindex,
    "agent-framework": agent_framework,
    "dspy": dspy,
    "haystack": haystack,
    "agno": agno,
}


def verdict(ratio: float, bar: float) -> str:
    """Whether a figure holds its bar, said beside it."""
    return f"bar {bar:.2f}x, {'met' if ratio <= bar else 'NOT met'}"


def measure(case: Case, runs: int) -> tuple[float, float]:
    import turnfold
    from turnfold.formats.frameworks import adapter_of

    result = case.run()
    loaded = turnfold.load(result)  # a first call of each side warms its caches (schemas)
    case.serialize(result)
    assert loaded.tool_calls(), f"{case.name}: the run holds no tool calls"
    adapter = adapter_of(result)
    assert adapter is not None
    own, ours, copy = best_of(
        10 * runs,
        lambda: case.serialize(result),
        lambda: turnfold.load(result),
        lambda: adapter.plain(result),  # the records load reads, before any entry is made
    )
    bare, followed = best_of(
        runs,
        lambda: case.consume(lambda events: events),
        lambda: case.consume(lambda events: turnfold.follow(events, display=False)),
    )
    print(
        f"{case.name}: convert {ours:.4f} s vs {case.serialization} {own:.4f} s "
        f"= {ours / own:.2f}x ({verdict(ours / own, CONVERT_BAR)}; of which the records it "
        f"reads {copy / own:.2f}x); follow {followed:.3f} s vs bare {bare:.3f} s "
        f"= {followed / bare:.2f}x ({verdict(followed / bare, FOLLOW_BAR)})"
    )
    return ours / own, followed / bare


# --- the browser case of the follow bar --------------------------------------------------------

BROWSER_SETUP = """\
import json, sys, time
sys.path.insert(0, {repository!r})
import turnfold
from benchmarks import frameworks

followed, timings = [], {{"bare": [], "followed": []}}


def wrap(events):
    followed.append(turnfold.follow(events))  # shown in this cell from the first event
    return followed[-1]"""

# One run consumed bare, then one followed with its widget in the cell; the earlier widgets are
# closed first (outside the clock), so every run draws into a fresh view.
# Each run's wall time and the kernel process's CPU time (all its threads: the widget's
# updates are built and sent on a timer thread), which a loaded machine disturbs less.
BROWSER_BARE = """\
started = time.perf_counter(), time.process_time()
case.consume(lambda events: events)
timings["bare"].append((time.perf_counter() - started[0], time.process_time() - started[1]))"""

BROWSER_FOLLOWED = """\
for run in followed:
    run.widget.close()
followed.clear()
started = time.perf_counter(), time.process_time()
case.consume(wrap)
timings["followed"].append((time.perf_counter() - started[0], time.process_time() - started[1]))"""


def browser_follow(names: list[str], steps: int, runs: int) -> list[tuple[str, float]]:
    """Each framework's followed/bare ratio in a real kernel with the widget displayed."""
    # The JupyterLab harness of the browser tests.
    from tests.browser.labkit import TIMEOUT_MS, Lab, browsing_lab, missing

    reason = missing()
    if reason is not None:
        raise SystemExit(f"cannot run in a browser here: {reason}")
    ratios = []
    with browsing_lab() as (browser, server, base):
        tab = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        lab = Lab(tab, server)
        repository = str(Path(__file__).resolve().parents[1])
        cells = [BROWSER_SETUP.format(repository=repository), BROWSER_BARE, BROWSER_FOLLOWED]
        lab.write_notebook("follow.ipynb", cells)
        lab.open("follow.ipynb")
        lab.run_cell(0)
        for name in names:
            lab.execute(f"case = frameworks.CASES[{name!r}]({steps})")
            lab.execute('timings = {"bare": [], "followed": []}')
            for _ in range(runs):
                lab.run_cell(1)
                lab.run_cell(2)
                # The followed run was drawn: its widget shows the run's turn in the page.
                lab.views().first.locator(".tf-turn").first.wait_for(timeout=TIMEOUT_MS)
            report = base / f"{name}.json"
            lab.execute(f"open({str(report)!r}, 'w').write(json.dumps(timings))")
            timings = json.loads(report.read_text(encoding="utf-8"))
            # The best of each clock on its own.
            (bare, bare_cpu), (followed, followed_cpu) = (
                (min(t[0] for t in timings[side]), min(t[1] for t in timings[side]))
                for side in ("bare", "followed")
            )
            print(
                f"{name} in JupyterLab, widget displayed: follow {followed:.3f} s vs bare "
                f"{bare:.3f} s = {followed / bare:.2f}x ({verdict(followed / bare, FOLLOW_BAR)}); "
                f"the kernel's CPU time {followed_cpu / bare_cpu:.2f}x"
            )
            ratios.append((name, followed / bare))
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500, help="tool calls per run")
    parser.add_argument("--runs", type=int, default=3, help="alternating runs, best kept")
    parser.add_argument("--only", choices=list(CASES), action="append", help="these frameworks")
    parser.add_argument(
        "--browser", action="store_true", help="the follow bar in JupyterLab and Chromium only"
    )
    options = parser.parse_args()
    if options.browser:
        names = [n for n in CASES if not options.only or n in options.only]
        ratios = browser_follow(names, options.steps, options.runs)
        worst = max(ratio for _, ratio in ratios)
        print(
            f"frameworks: followed/bare in JupyterLab = {worst:.2f}x worst "
            f"({verdict(worst, FOLLOW_BAR)})"
        )
        return
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
        f"frameworks: convert/serialize = {max(converts):.2f}x worst "
        f"({verdict(max(converts), CONVERT_BAR)}); followed/bare = {max(follows):.2f}x worst "
        f"({verdict(max(follows), FOLLOW_BAR)})"
    )


if __name__ == "__main__":
    main()
