"""A user's QA pass of following a framework's run live (spec A-2, N-1).

The run is the real OpenAI Agents SDK's, offline on its own scripted model
(``agents.testing.ScriptedModel``), streamed with ``Runner.run_streamed`` as a notebook user
follows it while watching: on a loop of its own, after the cell that shows the widget ended.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import turnfold
from turnfold.transport import unpack_view

pytest.importorskip("agents")

PROMPT = "Read a.txt, add 1 and 2, then answer."
ANSWER = "a.txt holds hello; 1+2=3."


def _agent() -> Any:
    """An agent whose scripted model reads a file and adds in one response, then answers."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # the default exporter wants OPENAI_API_KEY

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return "hello"

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = ScriptedModel(
        [
            ModelStep(
                output=[
                    function_call("read_file", {"path": "a.txt"}, call_id="call_1"),
                    function_call("add", {"a": 1, "b": 2}, call_id="call_2"),
                ]
            ),
            ModelStep(output=[assistant_message(ANSWER)]),
        ]
    )
    return Agent(name="reader", tools=[read_file, add], model=model)


def test_N1_A2_a_run_watched_live_leaves_its_end_in_what_the_notebook_saves() -> None:
    """The run followed in the background ends after its cell did, so no cell's end renews the
    widget's saved view: a notebook saved with widget state then showed an empty widget where
    the screen showed the finished run. The run's end renews it."""
    from agents import Runner

    async def main() -> Any:
        result = Runner.run_streamed(_agent(), PROMPT)
        followed = turnfold.follow(result, display=False)
        widget = followed.widget  # the cell's value, shown before the first event
        async for _ in followed:
            pass
        return followed, widget, result

    with ThreadPoolExecutor(1) as pool:  # a loop of its own, as a notebook's background task
        followed, widget, result = pool.submit(asyncio.run, main()).result()
    try:
        assert widget.running is False
        saved = unpack_view(widget._view)
        assert saved["rev"] == widget._transport.rev
        assert saved["view"] == widget._transport.wire_view()
        text = json.dumps(saved["view"])
        assert ANSWER in text
        assert PROMPT in text
        # and it is the view of the run as loaded
        loaded = turnfold.TranscriptWidget(turnfold.load(result))
        assert followed.transcript == loaded.transcript
        assert widget.view == loaded.view
        loaded.close()
    finally:
        widget.close()
