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


CASES: dict[str, Callable[[int], Case]] = {"openai-agents": openai_agents}


def measure(case: Case, runs: int) -> tuple[float, float]:
    import turnfold

    result = case.run()
    loaded = turnfold.load(result)
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
    options = parser.parse_args()
    converts, follows = [], []
    for name, make in CASES.items():
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
