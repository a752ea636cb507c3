"""Inspect AI logs written by the real ``inspect_ai`` package, for the loader's tests (spec H-1).

:func:`write_log` runs a small task against Inspect's ``mockllm/model`` and returns the log file
it wrote (``.eval`` or ``.json``). The scripted model answers from what it is asked (the number
of tool results it has seen), so the run is the same for every sample and epoch whatever the
concurrency. Every run of the ``tools`` kind holds:

- a tool that succeeds (``add``) and one that raises ``ToolError`` (``lookup``), called in one
  model response (one batch of two calls);
- an agent called as a tool (``as_tool(researcher)``), whose own model call and ``add`` call are
  recorded inside its span: a sub-agent with a nested call;
- a subtask (``@subtask``) run by a solver before the model is asked: a span of its own;
- an assistant message with reasoning, one part of it redacted;
- two scorers (``match`` and ``includes``) and two epochs by default.

The ``limit`` kind stops at a message limit (``sample.limit``); the ``error`` kind raises an
ordinary exception in a tool, which fails the sample (``sample.error``).

``mockllm`` counts tokens with ``tiktoken``, whose encoding is downloaded on first use; the
tests run offline, so :func:`write_log` replaces ``tiktoken.get_encoding`` with a rough
counter while the eval runs.

Run as a script to regenerate the committed fixtures (``tests/fixtures/harnesses/inspect``):
``.venv/bin/python tests/formats/inspect_logs.py``.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal
from unittest import mock

import tiktoken
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import Agent, AgentState, agent, as_tool
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    ModelOutput,
    execute_tools,
    get_model,
)
from inspect_ai.scorer import includes, match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, use_tools
from inspect_ai.tool import Tool, ToolCall, ToolError, tool
from inspect_ai.util import subtask

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "inspect"

Kind = Literal["tools", "limit", "error"]


class _RoughEncoding:
    """Stands in for a tiktoken encoding: a token per four characters is close enough here."""

    name = "rough"

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        return list(range(max(1, len(text) // 4)))

    def encode_ordinary(self, text: str) -> list[int]:
        return self.encode(text)


@contextlib.contextmanager
def _offline_tokens() -> Iterator[None]:
    with (
        mock.patch.object(tiktoken, "get_encoding", return_value=_RoughEncoding()),
        mock.patch.object(tiktoken, "encoding_for_model", return_value=_RoughEncoding()),
    ):
        yield


@tool
def add() -> Tool:
    """The tool that succeeds (also the two compared runs' of ``inspect_runs.py``)."""

    async def execute(x: int, y: int) -> int:
        """Add two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return x + y

    return execute


def _task(kind: Kind, samples: int, epochs: int) -> Task:
    @tool
    def lookup() -> Tool:
        async def execute(key: str) -> str:
            """Look a key up in the store.

            Args:
                key: The key.
            """
            if kind == "error":
                raise RuntimeError(f"the store is down (asked for {key})")
            raise ToolError(f"no such key: {key}")

        return execute

    @agent
    def researcher() -> Agent:
        """Researches a question with the add tool."""

        async def execute(state: AgentState) -> AgentState:
            """Research a question with the add tool."""
            tools = [add()]
            asked = await get_model().generate(state.messages, tools=tools)
            state.messages.append(asked.message)
            state.messages.extend((await execute_tools(state.messages, tools)).messages)
            state.output = await get_model().generate(state.messages, tools=tools)
            state.messages.append(state.output.message)
            return state

        return execute

    @subtask
    async def fetch_notes(topic: str) -> str:
        return f"notes about {topic}"

    @solver
    def prepare() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.metadata["notes"] = await fetch_notes("arithmetic")
            return state

        return solve

    dataset = [
        Sample(input=f"What is {n} + {n + 1}? Look up the key too.", target=str(2 * n + 1), id=n)
        for n in range(1, samples + 1)
    ]
    return Task(
        dataset=dataset,
        solver=[prepare(), use_tools([add(), lookup(), as_tool(researcher())]), generate()],
        scorer=[match(), includes()],
        epochs=epochs,
        message_limit=3 if kind == "limit" else None,
    )


def _script(input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    """The mock model's answer to ``input``: a fixed run, chosen by what ``input`` holds."""
    model = "mockllm/model"
    prompt = next((m.text for m in input if m.role == "user"), "")
    if "researcher" not in {t.name for t in tools} and tools:  # the sub-agent's own call
        if any(m.role == "tool" for m in input):
            return ModelOutput.from_content(model, "The researcher found 3.")
        return ModelOutput.for_tool_call(model, "add", {"x": 1, "y": 2}, tool_call_id="sub-add")
    results = sum(1 for m in input if m.role == "tool")
    number = int(prompt.split()[2]) if prompt.startswith("What is") else 1
    if results == 0:
        message = ChatMessageAssistant(
            content=[
                ContentReasoning(reasoning="I should add, and look the key up."),
                ContentReasoning(reasoning="", redacted=True, signature="opaque-signature"),
                ContentText(text="Adding and looking up."),
            ],
            tool_calls=[
                ToolCall(id="call-add", function="add", arguments={"x": number, "y": number + 1}),
                ToolCall(id="call-lookup", function="lookup", arguments={"key": "answer"}),
            ],
            model=model,
        )
        return ModelOutput.from_message(message)
    if results == 2:
        return ModelOutput.for_tool_call(
            model, "researcher", {"input": "check 1 + 2"}, tool_call_id="call-researcher"
        )
    return ModelOutput.from_content(model, str(2 * number + 1))


def write_log(
    directory: Path,
    *,
    format: Literal["eval", "json"] = "eval",
    kind: Kind = "tools",
    samples: int = 2,
    epochs: int = 2,
) -> Path:
    """Run the task with ``mockllm/model`` and return the log file it wrote in ``directory``.

    Inspect's ``eval()`` starts an event loop of its own, which it cannot do in a thread where
    one already runs (a notebook's, or Playwright's in the browser tests of the same session),
    so it runs on a thread of its own.
    """

    def run() -> Path:
        with _offline_tokens():
            [log] = inspect_eval(
                _task(kind, samples, epochs),
                model="mockllm/model",
                model_args={"custom_outputs": _script},
                log_dir=str(directory),
                log_format=format,
                display="none",
                fail_on_error=False,
            )
        return Path(log.location)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def recompress(path: Path, target: Path, method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A copy of the ``.eval`` zip ``path`` with every member stored with ``method``: older
    Inspect versions wrote deflate members, current ones Zstandard."""
    from turnfold.formats.harnesses.archive import LIMITS, read_member

    with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w", method) as copy:
        for info in source.infolist():
            data = read_member(source, info, name=str(path), limit=LIMITS.max_member_bytes)
            copy.writestr(info.filename, data)
    return target


def main() -> None:
    """Write the committed fixtures: a one-sample ``.json`` log (the nothing-lost tests load
    every fixture with ``load(path)``), a two-sample, two-epoch ``.eval`` (Zstandard members)
    and its deflate copy."""
    import tempfile

    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        one = write_log(Path(tmp) / "json", format="json", samples=1, epochs=1)
        shutil.copy(one, FIXTURES / "mockllm_one-sample.json")
        many = write_log(Path(tmp) / "eval", format="eval")
        shutil.copy(many, FIXTURES / "mockllm_two-epochs.eval")
        recompress(many, FIXTURES / "mockllm_two-epochs_deflate.eval")
    print(f"wrote fixtures to {FIXTURES}", file=sys.stderr)


if __name__ == "__main__":
    main()
