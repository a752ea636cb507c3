"""Real Agno (``agno`` 3.1.10) runs, offline: an ``Agent`` and a ``Team`` with real tools on
a scripted model (:class:`Scripted`, a subclass of Agno's own ``Model`` base class whose
replies are written out here), so nothing reaches the network; Agno's telemetry is off.

``python tests/formats/agno_runs.py`` writes the committed fixtures (``write_fixtures``):
each run's ``to_json()``, as users save it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ["AGNO_TELEMETRY"] = "false"  # before Agno reads it: no telemetry call

from agno.agent import Agent
from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.team import Team

FIXTURES = Path(__file__).parent.parent / "fixtures" / "frameworks" / "agno"
VERSION = "3.1.10"

# A raising tool is logged with its traceback, and every run sets the level again: off.
for _name in ("agno", "agno-team"):
    logging.getLogger(_name).disabled = True

#: One reply: (reasoning, text, [(call id, tool, arguments)], (input tokens, output tokens)).
Reply = tuple[str | None, str | None, list[tuple[str, str, dict[str, Any]]], tuple[int, int]]


@dataclass
class Scripted(Model):
    """Agno's ``Model`` replying from ``script``: the reply after as many assistant messages
    as the conversation holds since its last user message (copies of the model, as Agno makes
    for each run, reply alike). Streamed, a reply comes as its reasoning, its text in two
    pieces, then its calls and usage, as a provider's chunks do."""

    id: str = "scripted-1"
    name: str = "Scripted"
    provider: str = "Scripted"
    script: list[Reply] = field(default_factory=list)

    def _reply(self, messages: list[Any]) -> ModelResponse:
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        step = sum(1 for m in messages[last_user:] if m.role == "assistant")
        reasoning, text, calls, (given, made) = self.script[step]
        response = ModelResponse(role="assistant", content=text, reasoning_content=reasoning)
        response.tool_calls = [
            {"id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for call_id, name, args in calls
        ]  # fmt: skip
        response.response_usage = MessageMetrics(
            input_tokens=given, output_tokens=made, total_tokens=given + made
        )
        return response

    def invoke(self, messages: list[Any], assistant_message: Any, **_: Any) -> ModelResponse:
        return self._reply(messages)

    async def ainvoke(self, messages: list[Any], assistant_message: Any, **_: Any) -> ModelResponse:
        return self._reply(messages)

    def invoke_stream(
        self, messages: list[Any], assistant_message: Any, **_: Any
    ) -> Iterator[ModelResponse]:
        reply = self._reply(messages)
        if reply.reasoning_content:
            yield ModelResponse(reasoning_content=reply.reasoning_content)
        text = reply.content or ""
        for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
            if piece:
                yield ModelResponse(content=piece)
        yield ModelResponse(tool_calls=reply.tool_calls, response_usage=reply.response_usage)

    async def ainvoke_stream(  # type: ignore[override]
        self, messages: list[Any], assistant_message: Any, **_: Any
    ) -> AsyncIterator[ModelResponse]:
        for chunk in self.invoke_stream(messages, assistant_message):
            yield chunk

    def _parse_provider_response(self, response: Any, **_: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def explode(x: str) -> str:
    """A tool that always fails."""
    raise ValueError(f"boom: {x}")


SOLO: list[Reply] = [
    ("I should add first.", "Let me add.",
     [("call_1", "add", {"a": 1, "b": 2}), ("call_2", "explode", {"x": "y"})], (10, 5)),
    (None, "1+2=3; explode failed.", [], (20, 6)),
]  # fmt: skip
HELPER: list[Reply] = [
    ("Two and two.", None, [("h_1", "add", {"a": 2, "b": 2})], (3, 1)),
    (None, "2+2=4", [], (4, 2)),
]
LEAD: list[Reply] = [
    (None, None,
     [("t_1", "delegate_task_to_member", {"member_id": "helper", "task": "add 2 and 2"})],
     (7, 3)),
    (None, "The helper says 4.", [], (9, 4)),
]  # fmt: skip
PROMPTS = {"solo": "What is 1+2?", "team": "What is 2+2?"}


def agent(script: list[Reply] = SOLO, **settings: Any) -> Agent:
    return Agent(
        name="solo", model=Scripted(script=script), tools=[add, explode],
        instructions="Be brief.", telemetry=False, **settings,
    )  # fmt: skip


def team() -> Team:
    helper = Agent(
        name="helper", id="helper", model=Scripted(script=HELPER), tools=[add], telemetry=False
    )
    return Team(name="lead", members=[helper], model=Scripted(script=LEAD), telemetry=False)


def runner(which: str) -> Agent | Team:
    return team() if which == "team" else agent()


def run(which: str) -> Any:
    """The finished run ``which`` (``solo``: an agent; ``team``: a team and its member)."""
    return runner(which).run(PROMPTS[which])


def long_run(steps: int, **stream: Any) -> Any:
    """A run of ``steps`` calls of ``add``, one per response, then an answer (the
    benchmark's); ``stream`` (``stream=True, stream_events=True``) streams it."""
    script: list[Reply] = [
        (None, f"step {i}", [(f"call_{i}", "add", {"a": i, "b": 1})], (100 + i, 10))
        for i in range(steps)
    ]
    script.append((None, "done", [], (200, 5)))
    made = Agent(
        name="counter", model=Scripted(script=script), tools=[add], telemetry=False,
        tool_call_limit=steps + 1,
    )  # fmt: skip
    return made.run("count", **stream)


def write_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for which in ("solo", "team"):
        path = FIXTURES / f"agno_v{VERSION}_run_{which}.json"
        path.write_text(run(which).to_json(indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()
