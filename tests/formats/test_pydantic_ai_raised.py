"""An exception ``agent.run_sync`` raised, given to ``turnfold.load`` (spec L-2): it holds none
of the run's messages, and the error says how to keep them (``capture_run_messages``), not
"no pydantic-ai messages". The runs are the real pydantic-ai's, on its ``FunctionModel``."""

from __future__ import annotations

from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.model import AssistantError, ToolCall

pytest.importorskip("pydantic_ai")


def _looping_agent() -> Any:
    """An agent whose model calls ``add`` on every request, so a request limit stops it."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        call = ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id=f"c{len(messages)}")
        return ModelResponse(parts=[call], model_name="scripted-1")

    looping = Agent(FunctionModel(respond))

    @looping.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return looping


def test_L2_a_usage_limit_exceeded_names_itself_and_how_to_keep_the_messages() -> None:
    from pydantic_ai import UsageLimitExceeded, capture_run_messages
    from pydantic_ai.usage import UsageLimits

    with capture_run_messages() as messages:
        try:
            _looping_agent().run_sync("go", usage_limits=UsageLimits(request_limit=2))
        except UsageLimitExceeded as exc:
            raised = exc
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(raised)
    reason = caught.value.reason
    assert reason.startswith("a UsageLimitExceeded exception holds no messages of the run")
    assert "with capture_run_messages() as messages:" in reason
    assert "turnfold.load(messages)" in reason
    assert "no pydantic-ai messages" not in str(caught.value)
    # The advice works: the messages captured hold the run up to the limit.
    calls = [e for e in turnfold.load(messages) if isinstance(e, ToolCall)]
    assert [(c.call_id, c.name, c.status, c.result and c.result.text) for c in calls] == [
        ("c1", "add", "success", "3"),
        ("c3", "add", "success", "3"),
    ]


def test_L2_any_exception_of_a_pydantic_ai_run_names_its_type() -> None:
    """A model's error (``ModelHTTPError``, as a provider's 429 raises it) is refused the same
    way, named by its own type."""
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.function import FunctionModel

    def overloaded(messages: list[Any], info: Any) -> Any:
        raise ModelHTTPError(429, "scripted-1", {"error": "rate limited"})

    with pytest.raises(ModelHTTPError) as failed:
        Agent(FunctionModel(overloaded)).run_sync("go")
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(failed.value)
    assert caught.value.reason.startswith("a ModelHTTPError exception holds no messages of the run")
    assert caught.value.tried == ("pydantic-ai",)


def test_L2_an_unfinished_agent_run_still_loads_with_its_error() -> None:
    """The exception alone is refused; the ``AgentRun`` it stopped still reads (its error)."""
    import asyncio

    from pydantic_ai import UsageLimitExceeded
    from pydantic_ai.usage import UsageLimits

    async def main() -> Any:
        async with _looping_agent().iter("go", usage_limits=UsageLimits(request_limit=1)) as run:
            with pytest.raises(UsageLimitExceeded):
                async for _ in run:
                    pass
            return run

    loaded = turnfold.load(asyncio.run(main()))
    assert isinstance(loaded.entries[-1], AssistantError)
    assert loaded.entries[-1].message.startswith("UsageLimitExceeded: ")
