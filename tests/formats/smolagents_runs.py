"""Runs of the real smolagents (1.26), offline, for the "smolagents" format's tests and
fixtures (issue 22).

Every agent runs on a scripted ``smolagents.models.Model`` subclass (the notes' recipe: it
returns the next prepared ``ChatMessage``, so no network and no API key). The main run is a
``ToolCallingAgent`` that plans, thinks, calls ``add`` (succeeds), ``explode`` (raises: the
step's ``error`` is an ``AgentToolExecutionError`` and its ``tool_calls`` stay ``None``), two
``add`` calls in one step, its managed agent ``helper`` (a ``ToolCallingAgent`` with its own
``memory.steps``, one ``add`` and its own final answer), then answers through the
``final_answer`` tool. A ``CodeAgent`` runs code that prints, code that raises, and code that
calls ``final_answer``.

``python tests/formats/smolagents_runs.py`` rewrites the fixtures under
``tests/fixtures/frameworks/smolagents/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "smolagents"
TASK = "Plan, add 1 and 2, try explode, add twice at once, ask the helper, then answer."
ANSWER = "1+2=3; explode failed; 2+2=4 and 3+3=6; the helper says 11."
CODE_TASK = "Add 1 and 2 in code, try explode, then answer."
CODE_ANSWER = "done: 3"


def _message(content: str | None, *calls: tuple[str, Any, str], tokens: int = 5) -> Any:
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction
    from smolagents.monitoring import TokenUsage

    return ChatMessage(
        role="assistant",  # smolagents coerces the role's name
        content=content,
        token_usage=TokenUsage(input_tokens=10, output_tokens=tokens),
        tool_calls=[
            ChatMessageToolCall(
                id=cid,
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=args),
            )
            for name, args, cid in calls
        ]
        or None,
    )


def _model_class() -> type:
    from smolagents.models import (
        ChatMessageStreamDelta,
        ChatMessageToolCallFunction,
        ChatMessageToolCallStreamDelta,
        Model,
    )
    from smolagents.monitoring import TokenUsage

    class ScriptedModel(Model):  # type: ignore[misc]
        """Returns the prepared replies in order; ``generate_stream`` streams each one as
        text deltas, one delta per tool call and a last delta with the usage."""

        def __init__(self, replies: list[Any]) -> None:
            super().__init__(model_id="scripted-1")
            self.replies = list(replies)

        def generate(self, messages: Any, **kwargs: Any) -> Any:
            return self.replies.pop(0)

        def generate_stream(self, messages: Any, **kwargs: Any) -> Iterator[Any]:
            reply = self.replies.pop(0)
            text = reply.content or ""
            for start in range(0, len(text), 8):
                yield ChatMessageStreamDelta(content=text[start : start + 8])
            for index, call in enumerate(reply.tool_calls or []):
                arguments = call.function.arguments
                yield ChatMessageStreamDelta(
                    tool_calls=[
                        ChatMessageToolCallStreamDelta(
                            index=index,
                            id=call.id,
                            type="function",
                            function=ChatMessageToolCallFunction(
                                name=call.function.name,
                                arguments=json.dumps(arguments)
                                if not isinstance(arguments, str)
                                else arguments,
                            ),
                        )
                    ]
                )
            usage = reply.token_usage
            yield ChatMessageStreamDelta(
                token_usage=TokenUsage(
                    input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
                )
            )

    return ScriptedModel


def _quiet() -> Any:
    """A logger that prints nothing: smolagents prints tool errors and streamed text (a rich
    ``Live`` view) to the terminal even at ``verbosity_level=0``."""
    import io

    from rich.console import Console
    from smolagents.monitoring import AgentLogger, LogLevel

    return AgentLogger(LogLevel.OFF, console=Console(file=io.StringIO()))


def _tools() -> tuple[Any, Any]:
    from smolagents import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: first number
            b: second number
        """
        return a + b

    @tool
    def explode(x: str) -> str:
        """Always fails.

        Args:
            x: anything
        """
        raise ValueError(f"boom: {x}")

    return add, explode


def make_agent(*, stream_outputs: bool = False) -> Any:
    """The main run's ``ToolCallingAgent`` (with its managed agent), not yet run."""
    from smolagents import ToolCallingAgent

    model = _model_class()
    add, explode = _tools()
    helper = ToolCallingAgent(
        tools=[add],
        name="helper",
        description="Adds numbers for its manager.",
        verbosity_level=0,
        logger=_quiet(),
        model=model(
            [
                _message(None, ("add", {"a": 5, "b": 6}, "h_1"), tokens=3),
                _message(None, ("final_answer", {"answer": "11"}, "h_2"), tokens=2),
            ]
        ),
    )
    replies = [
        _message("1. add 1 and 2\n2. try explode\n3. ask the helper", tokens=7),  # the plan
        _message("Let me add first.", ("add", {"a": 1, "b": 2}, "call_1")),
        _message(None, ("explode", {"x": "y"}, "call_2")),
        _message(
            "Two sums at once.",
            ("add", {"a": 2, "b": 2}, "call_3a"),
            ("add", {"a": 3, "b": 3}, "call_3b"),
        ),
        _message(None, ("helper", {"task": "add 5 and 6"}, "call_4")),
        _message(None, ("final_answer", {"answer": ANSWER}, "call_5"), tokens=9),
    ]  # fmt: skip
    return ToolCallingAgent(
        tools=[add, explode],
        managed_agents=[helper],
        planning_interval=10,
        verbosity_level=0,
        logger=_quiet(),
        stream_outputs=stream_outputs,
        model=model(replies),
    )


def run() -> Any:
    """The main run, finished: the agent (``agent.memory.steps``, ``agent.managed_agents``)."""
    agent = make_agent()
    agent.run(TASK)
    return agent


def run_stream(
    wrap: Callable[[Any], Any] = lambda events: events, *, stream_outputs: bool = False
) -> tuple[Any, list[Any]]:
    """The main run streamed (``run(task, stream=True)``), each event passed through
    ``wrap`` (``turnfold.follow``); the finished agent and the events it yielded."""
    agent = make_agent(stream_outputs=stream_outputs)
    events = list(wrap(agent.run(TASK, stream=True)))
    return agent, events


def make_code_agent() -> Any:
    from smolagents import CodeAgent

    add, explode = _tools()
    replies = [
        _message("Thought: I add in code.\n<code>\nprint(add(a=1, b=2))\n</code>"),
        _message("Thought: now the failing tool.\n<code>\nexplode(x='y')\n</code>"),
        _message(f"Thought: done.\n<code>\nfinal_answer('{CODE_ANSWER}')\n</code>", tokens=4),
    ]
    return CodeAgent(
        tools=[add, explode], verbosity_level=0, logger=_quiet(), model=_model_class()(replies)
    )


def run_code() -> Any:
    """A ``CodeAgent`` run, finished."""
    agent = make_code_agent()
    agent.run(CODE_TASK)
    return agent


CODE_MANAGER_TASK = "Ask the helper in code, then twice more and the scribe in one step."
CODE_MANAGER_ANSWER = "11, then 15; noted"


def _managed(name: str, replies: list[Any]) -> Any:
    """A managed ``ToolCallingAgent`` with ``add``, scripted with ``replies``."""
    from smolagents import ToolCallingAgent

    add, _ = _tools()
    return ToolCallingAgent(
        tools=[add],
        name=name,
        description=f"The {name}: does what its manager asks.",
        verbosity_level=0,
        logger=_quiet(),
        model=_model_class()(replies),
    )


def make_code_manager() -> Any:
    """A ``CodeAgent`` whose code calls its managed agents: ``helper`` in step 1; ``helper``
    twice and ``scribe`` once in step 2 (a managed agent's memory keeps only its last run:
    after the run, ``helper`` holds step 2's second); ``final_answer`` in step 3."""
    from smolagents import CodeAgent

    helper = _managed("helper", [
        _message(None, ("add", {"a": 5, "b": 6}, "h_1"), tokens=3),
        _message(None, ("final_answer", {"answer": "11"}, "h_2"), tokens=2),
        _message(None, ("final_answer", {"answer": "2"}, "h_3"), tokens=2),
        _message(None, ("add", {"a": 7, "b": 8}, "h_4"), tokens=3),
        _message(None, ("final_answer", {"answer": "15"}, "h_5"), tokens=2),
    ])  # fmt: skip
    scribe = _managed("scribe", [_message(None, ("final_answer", {"answer": "noted"}, "s_1"))])
    add, _ = _tools()
    replies = [
        _message("Thought: ask the helper.\n<code>\nprint(helper(task='add 5 and 6'))\n</code>"),
        _message(
            "Thought: twice, and the scribe.\n<code>\nhelper(task='add 1 and 1')\n"
            "print(helper(task='add 7 and 8'))\nscribe('note 15')\n</code>"
        ),
        _message(f"Thought: done.\n<code>\nfinal_answer('{CODE_MANAGER_ANSWER}')\n</code>"),
    ]
    return CodeAgent(
        tools=[add],
        managed_agents=[helper, scribe],
        verbosity_level=0,
        logger=_quiet(),
        model=_model_class()(replies),
    )


def make_long_agent(steps: int) -> Any:
    """A ``ToolCallingAgent`` scripted for ``steps`` calls of ``add`` and an answer."""
    from smolagents import ToolCallingAgent

    add, _ = _tools()
    replies = [_message(None, ("add", {"a": i, "b": 1}, f"call_{i}")) for i in range(steps)]
    replies.append(_message(None, ("final_answer", {"answer": "done"}, "call_end")))
    return ToolCallingAgent(
        tools=[add],
        verbosity_level=0,
        logger=_quiet(),
        max_steps=steps + 2,
        model=_model_class()(replies),
    )


def measure(steps: int) -> dict[str, float]:
    """Seconds a ``steps``-step run takes consumed bare and through ``turnfold.follow``,
    and ``turnfold.load(agent.memory.steps)`` against ``[s.dict() for s in steps]``; the
    counts of calls each gave under ``"calls_*"``."""
    import time

    import turnfold

    started = time.perf_counter()
    for _ in make_long_agent(steps).run("go", stream=True):
        pass
    bare = time.perf_counter() - started
    agent = make_long_agent(steps)
    started = time.perf_counter()
    run = turnfold.follow(agent.run("go", stream=True), display=False)
    for _ in run:
        pass
    followed = time.perf_counter() - started
    started = time.perf_counter()
    loaded = turnfold.load(agent.memory.steps)
    load = time.perf_counter() - started
    started = time.perf_counter()
    dicts = [s.dict() for s in agent.memory.steps]
    dict_s = time.perf_counter() - started
    return {
        "run_s": bare,
        "followed_s": followed,
        "load_s": load,
        "dict_s": dict_s,
        "calls_followed": len(run.transcript.tool_calls()),
        "calls_loaded": len(loaded.tool_calls()),
        "steps_dicts": len(dicts),
    }


def report(figures: dict[str, float], steps: int) -> str:
    overhead = (figures["followed_s"] / figures["run_s"] - 1) * 100
    return (
        f"smolagents {steps} steps: run {figures['run_s']:.2f} s, followed "
        f"{figures['followed_s']:.2f} s ({overhead:+.1f}%); load(memory.steps) "
        f"{figures['load_s'] * 1000:.0f} ms, [s.dict() for s in steps] "
        f"{figures['dict_s'] * 1000:.0f} ms"
    )


def _write(name: str, value: Any) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
    (FIXTURES / name).write_text(text, encoding="utf-8")


def main() -> None:
    import smolagents

    version = smolagents.__version__
    agent = run()
    _write(f"smolagents_v{version}_full-steps_managed-agent.json", agent.memory.get_full_steps())
    helper = agent.managed_agents["helper"]
    _write(f"smolagents_v{version}_succinct-steps_helper.json", helper.memory.get_succinct_steps())
    code = make_code_agent()
    result = code.run(CODE_TASK, return_full_result=True)
    _write(f"smolagents_v{version}_run-result_code-agent.json", result.dict())


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--measure"]:
        count = int(sys.argv[2]) if len(sys.argv) > 2 else 500
        print(report(measure(count), count))
    else:
        main()
