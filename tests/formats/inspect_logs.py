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

The ``sandbox`` kind runs a tool that does its work in a sandbox (Inspect's ``local`` one:
commands run on this machine) and counts its runs in the sample's store: Inspect records the
commands as ``sandbox`` events and the count as a ``store`` event in the tool's span, as it does
for ``bash`` in a container or a web browser's tools. Its model answers with the calls alone, no
text, and names itself as OpenAI's API does (``gpt-4o-mini-2024-07-18``: a priced model).

The ``parts`` kind answers each of its samples with one message of the parts providers put in
assistant output besides text: a Gemini model's image and audio (Inspect's Google provider), a
video and a document (the ``Content`` union allows them), and Anthropic's model fallback marker.
The ``compaction`` kind compacts the context with Inspect's own compaction handler and
``CompactionNative``; ``mockllm`` has no compaction endpoint, so its ``compact`` returns the
messages Inspect makes of OpenAI's and of Anthropic's (:func:`_native_compact`), one provider
per sample, and a third sample is compacted by Anthropic's server inside an ordinary response.
A fourth is compacted by Inspect's own ``CompactionSummary``: the model is asked to summarize
the conversation (the scripted model answers with :data:`SUMMARIZED`), and the summary, a user
message Inspect writes, replaces the conversation in the input of every later call.

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
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    CompactionNative,
    CompactionSummary,
    ContentAudio,
    ContentData,
    ContentDocument,
    ContentImage,
    ContentReasoning,
    ContentText,
    ContentVideo,
    ModelOutput,
    compaction,
    execute_tools,
    get_model,
)
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.scorer import includes, match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, use_tools
from inspect_ai.tool import Tool, ToolCall, ToolError, tool
from inspect_ai.util import sandbox, store, subtask

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "inspect"

Kind = Literal["tools", "limit", "error", "sandbox", "parts", "compaction"]


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


#: The model the ``sandbox`` kind's scripted answers name, as OpenAI's API names it.
SANDBOX_MODEL = "gpt-4o-mini-2024-07-18"


@tool
def shell() -> Tool:
    """A tool that runs its command in the sample's sandbox, counting its runs in the store."""

    async def execute(cmd: str) -> str:
        """Run a shell command.

        Args:
            cmd: The command.
        """
        store().set("commands", store().get("commands", 0) + 1)
        return (await sandbox().exec(["sh", "-c", cmd])).stdout

    return execute


def _sandbox_task() -> Task:
    dataset = [Sample(input="Say hello from the sandbox, twice.", target="hello", id="shell")]
    return Task(
        dataset=dataset, solver=[use_tools([shell()]), generate()], scorer=match(), sandbox="local"
    )


def _sandbox_script(
    input: list[Any], tools: list[Any], tool_choice: Any, config: Any
) -> ModelOutput:
    """Two calls of ``shell`` (one response each, calls and no text), then the answer."""
    results = sum(1 for m in input if m.role == "tool")
    if results < 2:
        call = ToolCall(
            id=f"call-shell-{results}", function="shell", arguments={"cmd": "echo hello"}
        )
        message = ChatMessageAssistant(content="", tool_calls=[call], model=SANDBOX_MODEL)
        return ModelOutput.from_message(message)
    return ModelOutput.from_message(ChatMessageAssistant(content="hello", model=SANDBOX_MODEL))


#: A 1×1 PNG and a few bytes of WAV, MP4 and PDF: the media of the ``parts`` kind.
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEh"
    "QGAhKmMIQAAAABJRU5ErkJggg=="
)
_WAV = "data:audio/wav;base64,UklGRiQAAABXQVZF"
_MP4 = "data:video/mp4;base64,AAAAGGZ0eXBtcDQy"
_PDF = "data:application/pdf;base64,JVBERi0xLjQK"
#: The summary Anthropic's compaction writes, and OpenAI's opaque compacted context: both
#: longer than 100 characters, so that Inspect keeps them as ``attachment://`` references.
SUMMARY = (
    "The user asked what 1 + 2 is. The add tool returned 3; the answer is still to be given, "
    "after one more addition to check it."
)
ENCRYPTED = "gAAAAB" + "opaque-compacted-context-" * 8
#: What the scripted model answers when ``CompactionSummary`` asks it to summarize: its analysis
#: (which Inspect drops) and the summary, which Inspect wraps in a user message of its own.
SUMMARIZED = "The user asked what 1 + 2 is; the add tool returned 3. Next: check it once more."
SUMMARY_ANSWER = f"<analysis>One call of add so far.</analysis>\n\n<summary>{SUMMARIZED}</summary>"


def _parts_task() -> Task:
    dataset = [
        Sample(input="Draw a cat and say meow.", target="cat", id="gemini"),
        Sample(input="Answer even if you would rather not.", target="3", id="fallback"),
    ]
    return Task(dataset=dataset, solver=generate(), scorer=match())


def _parts_script(input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    """What the providers write: Inspect's Google provider turns a Gemini model's
    ``inline_data`` into ``ContentImage`` and ``ContentAudio`` (``_providers/google.py``);
    its Anthropic provider keeps a fallback block as ``ContentData`` (``_providers/anthropic.py``,
    ``_content_data_for_fallback``)."""
    model = "mockllm/model"
    prompt = next((m.text for m in input if m.role == "user"), "")
    if prompt.startswith("Draw"):
        content: list[Any] = [
            ContentText(text="Here is the cat:"),
            ContentImage(image=PNG),
            ContentAudio(audio=_WAV, format="wav"),
            ContentVideo(video=_MP4, format="mp4"),
            ContentDocument(document=_PDF),
        ]
    else:
        fallback = {"type": "anthropic_fallback", "from": {"model": "claude-opus-5"},
                    "to": {"model": "claude-sonnet-5"}}  # fmt: skip
        content = [ContentData(data={"fallback_metadata": fallback}), ContentText(text="3")]
    return ModelOutput.from_message(ChatMessageAssistant(content=content, model=model))


def _anthropic_compaction() -> ContentData:
    """Anthropic's compaction block as Inspect keeps it (``_content_data_for_compaction``)."""
    return ContentData(
        data={"compaction_metadata": {"type": "anthropic_compact", "content": SUMMARY}}
    )


async def _native_compact(
    self: MockLLM, input: list[ChatMessage], tools: Any, config: Any, instructions: Any = None
) -> tuple[list[ChatMessage], None]:
    """The messages Inspect makes of a provider's compacted context: OpenAI's compaction item
    as a user message of one ``ContentData`` (``chat_messages_from_compact_response`` in
    ``model/_openai_responses.py``); Anthropic's as the assistant message holding the
    compaction block and a user message asking to go on (``compact`` in ``anthropic.py``)."""
    if "OpenAI" in next((m.text for m in input if m.role == "user"), ""):
        item = {"type": "openai_compact", "id": "cmp_1", "encrypted_content": ENCRYPTED}
        data = ContentData(data={"compaction_metadata": item})
        return [ChatMessageUser(content=[data], source="generate")], None
    summary = ChatMessageAssistant(content=[_anthropic_compaction()], model="mockllm/model")
    return [summary, ChatMessageUser(content="Please continue working.")], None


def _compaction_task() -> Task:
    @solver
    def compacting() -> Solver:
        """Three model calls, the second on a context compacted (forced) natively or by a
        summary, as an agent does with Inspect's compaction handler (``compact_input`` before
        each call, the summary it returns appended to the history)."""

        async def solve(state: TaskState, generate: Generate) -> TaskState:
            tools = [add()]
            summary = "summary" in state.input_text
            forced = summary or "natively" in state.input_text
            strategy = CompactionSummary() if summary else CompactionNative()
            compact = compaction(strategy, prefix=[], tools=tools)
            for turn in range(3):
                input, summarized = await compact.compact_input(
                    state.messages, force=forced and turn == 1
                )
                if summarized is not None:
                    state.messages.append(summarized)
                state.output = await get_model().generate(input, tools=tools)
                await compact.record_output(input, state.output)
                state.messages.append(state.output.message)
                state.messages.extend((await execute_tools(state.messages, tools)).messages)
            return state

        return solve

    dataset = [
        Sample(input="Compact natively with OpenAI.", target="3", id="openai"),
        Sample(input="Compact natively with Anthropic.", target="3", id="anthropic"),
        Sample(input="Compact on Anthropic's server.", target="3", id="server"),
        Sample(input="Compact by a summary.", target="3", id="summary"),
    ]
    return Task(dataset=dataset, solver=compacting(), scorer=match())


def _compaction_script(
    input: list[Any], tools: list[Any], tool_choice: Any, config: Any
) -> ModelOutput:
    """Add 1 and 2, add once more on the compacted context, answer. Anthropic's server
    compacts inside the second response (``context_management``): its compaction block comes
    first in that response's content. ``CompactionSummary`` asks for a summary in a user
    message of its own, after the conversation (``compact`` in ``_compaction/summary.py``)."""
    model = "mockllm/model"
    if input and input[-1].role == "user" and "summarizing conversations" in input[-1].text:
        return ModelOutput.from_content(model, SUMMARY_ANSWER)
    results = sum(1 for m in input if m.role == "tool")
    compacted = any(
        (isinstance(m.content, list) and any(c.type == "data" for c in m.content))
        or (m.metadata or {}).get("summary")
        for m in input
    )
    server = "server" in next((m.text for m in input if m.role == "user"), "")
    if results == 0 and not compacted:
        return ModelOutput.for_tool_call(model, "add", {"x": 1, "y": 2}, tool_call_id="call-add")
    if (compacted and results == 0) or (server and results == 1):
        content: list[Any] = [_anthropic_compaction()] if server else []
        message = ChatMessageAssistant(
            content=[*content, ContentText(text="Adding once more.")],
            tool_calls=[ToolCall(id="call-again", function="add", arguments={"x": 2, "y": 1})],
            model=model,
        )
        return ModelOutput.from_message(message)
    return ModelOutput.from_content(model, "3")


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
    so it runs on a thread of its own. The ``sandbox``, ``parts`` and ``compaction`` kinds hold
    their own samples, one epoch each (``samples`` and ``epochs`` are for the others).
    """

    def run() -> Path:
        if kind == "parts":
            task, script = _parts_task(), _parts_script
        elif kind == "sandbox":
            task, script = _sandbox_task(), _sandbox_script
        elif kind == "compaction":
            task, script = _compaction_task(), _compaction_script
        else:
            task, script = _task(kind, samples, epochs), _script
        with _offline_tokens(), mock.patch.object(MockLLM, "compact", _native_compact):
            [log] = inspect_eval(
                task,
                model="mockllm/model",
                model_args={"custom_outputs": script},
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
