"""Runs of the real OpenAI Agents SDK, offline, saved as the fixtures of the "openai-agents"
format (issue 13, issue 22).

Every agent is on the SDK's own scripted model (``agents.testing.ScriptedModel``, the SDK's
``Model`` interface, so no network). The handoff run: ``triage`` reasons, calls ``add``
(succeeds) and ``explode`` (raises, so the SDK sends the model its fixed error text as the
tool's output and the run goes on) beside ``research``, an agent used as a tool
(``as_tool()``, whose own steps the run items do not hold), then hands off to ``writer``,
which calls ``add`` again and answers. The chain run (:func:`chain`): ``triage`` calls
``add`` and hands off to ``writer``, which calls ``add`` and hands off onward to ``editor``,
which writes a note, calls ``add`` and hands back to ``writer``, which calls ``add`` once
more and answers.

``python -m tests.formats.openai_agents_runs`` rewrites the files under
``tests/fixtures/frameworks/openai-agents/``: ``RunResult.to_input_list()`` and
``RunResult.to_state().to_json()`` and its ``generated_items`` alone, and the chain run's
``to_state().to_json()``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.formats.loops import on_thread

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "openai-agents"
PROMPT = "Add 1 and 2, try the exploding tool, then let the writer answer."
CHAIN_PROMPT = "Add the numbers, and let the writer and the editor check them."
CHAIN_ANSWER = "1+2=3, 3+4=7 and 3+7=10, checked by the editor."


def run(agent: Callable[[], Any] | None = None, prompt: str | list[Any] = PROMPT) -> Any:
    """The scripted run's ``RunResult`` (the handoff run's unless ``agent`` makes another;
    ``prompt``: a text, or input items, a previous run's say)."""
    from agents import Runner

    return on_thread(lambda: Runner.run_sync((agent or _triage)(), prompt))


def run_chain() -> Any:
    """The chain run's ``RunResult``."""
    return run(chain, CHAIN_PROMPT)


def run_streamed(
    wrap: Callable[[Any], Any] = lambda run: run.stream_events(),
    agent: Callable[[], Any] | None = None,
    prompt: str = PROMPT,
) -> Any:
    """The same run streamed: ``wrap(result)`` (``turnfold.follow``) is given the streamed
    run (``Runner.run_streamed``) and its events consumed; the finished ``RunResultStreaming``."""
    from agents import Runner

    async def main() -> Any:
        result = Runner.run_streamed((agent or _triage)(), prompt)
        async for _ in wrap(result):
            pass
        return result

    return on_thread(lambda: asyncio.run(main()))


def _tools() -> tuple[Any, Any]:
    """The scripted runs' tools: ``add``, and ``explode``, which always fails."""
    from agents import function_tool

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @function_tool
    def explode(x: str) -> str:
        """Always fails."""
        raise ValueError(f"boom: {x}")

    return add, explode


def _triage() -> Any:
    """The run's first agent, its tools, the agent it uses as a tool and the one it hands
    off to, each on a scripted model."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from agents.usage import Usage
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Summary

    from agents import Agent, handoff, set_tracing_disabled

    set_tracing_disabled(True)  # the default exporter wants OPENAI_API_KEY

    add, explode = _tools()

    def usage(n: int) -> Usage:
        return Usage(requests=1, input_tokens=10 * n, output_tokens=n, total_tokens=11 * n)

    reasoning = ResponseReasoningItem(
        id="rs_1",
        type="reasoning",
        summary=[Summary(text="First add, then the risky tool.", type="summary_text")],
    )
    writer = Agent(
        name="writer",
        instructions="You write the final answer.",
        tools=[add],
        model=ScriptedModel(
            [
                ModelStep(
                    output=[function_call("add", {"a": 3, "b": 4}, call_id="call_4")],
                    usage=usage(4),
                    response_id="resp_4",
                ),
                ModelStep(
                    output=[assistant_message("1+2=3, 3+4=7; explode failed.", item_id="msg_5")],
                    usage=usage(5),
                    response_id="resp_5",
                ),
            ]
        ),
    )
    researcher = Agent(
        name="researcher",
        instructions="You find reasons.",
        model=ScriptedModel(
            [
                ModelStep(
                    output=[assistant_message("Because tools fail.", item_id="msg_r")],
                    usage=usage(6),
                    response_id="resp_r",
                )
            ]
        ),
    )
    research = researcher.as_tool(tool_name="research", tool_description="Ask the researcher.")
    triage = Agent(
        name="triage",
        instructions="You are terse.",
        tools=[add, explode, research],
        handoffs=[handoff(writer)],
        model=ScriptedModel(
            [
                ModelStep(
                    output=[
                        reasoning,
                        assistant_message("Adding first.", item_id="msg_1"),
                        function_call("add", {"a": 1, "b": 2}, call_id="call_1"),
                    ],
                    usage=usage(1),
                    response_id="resp_1",
                ),
                ModelStep(
                    output=[
                        function_call("explode", {"x": "y"}, call_id="call_2"),
                        function_call("research", {"input": "why?"}, call_id="call_2r"),
                    ],
                    usage=usage(2),
                    response_id="resp_2",
                ),
                ModelStep(
                    output=[function_call("transfer_to_writer", {}, call_id="call_3")],
                    usage=usage(3),
                    response_id="resp_3",
                ),
            ]
        ),
    )
    return triage


def _usage(n: int) -> Any:
    from agents.usage import Usage

    return Usage(requests=1, input_tokens=10 * n, output_tokens=n, total_tokens=11 * n)


def chain() -> Any:
    """The chain run's first agent: ``triage`` → ``writer`` → ``editor`` → back to ``writer``."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, set_tracing_disabled

    set_tracing_disabled(True)

    add, _ = _tools()

    def step(n: int, *output: Any) -> Any:
        return ModelStep(output=list(output), usage=_usage(n), response_id=f"resp_c{n}")

    editor = Agent(
        name="editor",
        instructions="You check sums.",
        tools=[add],
        model=ScriptedModel(
            [
                step(
                    5,
                    assistant_message("Checking the first sum.", item_id="msg_c5"),
                    function_call("add", {"a": 1, "b": 2}, call_id="call_c5"),
                ),
                step(6, function_call("transfer_to_writer", {}, call_id="call_c6")),
            ]
        ),
    )
    writer = Agent(
        name="writer",
        instructions="You write the answer.",
        tools=[add],
        model=ScriptedModel(
            [
                step(3, function_call("add", {"a": 3, "b": 4}, call_id="call_c3")),
                step(4, function_call("transfer_to_editor", {}, call_id="call_c4")),
                step(7, function_call("add", {"a": 3, "b": 7}, call_id="call_c7")),
                step(8, assistant_message(CHAIN_ANSWER, item_id="msg_c8")),
            ]
        ),
    )
    # Each hands off to the other: the editor's handoff goes back to an agent whose handoff
    # call holds it.
    writer.handoffs = [editor]
    editor.handoffs = [writer]
    return Agent(
        name="triage",
        instructions="You route.",
        tools=[add],
        handoffs=[writer],
        model=ScriptedModel(
            [
                step(1, function_call("add", {"a": 1, "b": 2}, call_id="call_c1")),
                step(2, function_call("transfer_to_writer", {}, call_id="call_c2")),
            ]
        ),
    )


def _chat_step(n: int, text: str | None, *calls: str, tool: str = "add") -> Any:
    """A scripted response of a Chat Completions model: ``text`` and calls of ``tool`` (ids
    ``calls``) as the SDK converts its message (every item's id ``__fake_id__``, the
    response's none); input tokens ``10 * n``."""
    from agents.models.chatcmpl_converter import Converter
    from agents.testing import ModelStep
    from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageFunctionToolCall
    from openai.types.chat.chat_completion_message_function_tool_call import Function

    message = ChatCompletionMessage(
        role="assistant",
        content=text,
        tool_calls=[
            ChatCompletionMessageFunctionToolCall(
                id=call,
                type="function",
                function=Function(name=tool, arguments='{"a":1,"b":2}'),
            )
            for call in calls
        ]
        or None,
    )  # the SDK's own conversion of a Chat Completions message, as its model does it
    output = Converter.message_to_output_items(message)
    return ModelStep(output=output, usage=_usage(n), response_id=None)


def chat_completions() -> Any:
    """An agent on a model that is not the Responses API's (Chat Completions, LiteLLM): the
    SDK gives every item the id ``__fake_id__`` and every response none. It calls ``add``
    twice in one response, once more in the next, and answers."""
    from agents.testing import ScriptedModel

    from agents import Agent, set_tracing_disabled

    set_tracing_disabled(True)

    add, _ = _tools()
    steps = [
        _chat_step(1, "Adding twice.", "c1", "c2"),
        _chat_step(2, "Once more.", "c3"),
        _chat_step(3, "3."),
    ]
    return Agent(name="adder", tools=[add], model=ScriptedModel(steps))


def gated(gate: threading.Event) -> Any:
    """An agent on a Chat Completions model (no ids) whose first response calls ``add``, its
    second ``wait``, which returns only once ``gate`` is set, and its third answers: the run
    is held after its first response's items, with its second response streamed already."""
    from agents.testing import ScriptedModel

    from agents import Agent, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    add, _ = _tools()

    @function_tool
    def wait(a: int, b: int) -> str:
        """Wait for the gate."""
        gate.wait(timeout=10)
        return "waited"

    steps = [
        _chat_step(1, None, "c1"),
        _chat_step(2, "Waiting.", "c2", tool="wait"),
        _chat_step(3, "Done."),
    ]
    return Agent(name="gated", tools=[add, wait], model=ScriptedModel(steps))


def solo() -> Any:
    """One agent, every kind of step the flat read of a finished run knows (issue 22):
    reasoning (a summary, then encrypted only), a text before a call in one response and one
    after a call in another, two calls in one (one raises: the SDK's error text), an agent
    used as a tool, a patch tool (a diff), a plan tool (a checklist) and usage with cached and
    reasoning tokens."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from agents.usage import Usage
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Summary
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    from agents import Agent, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    add, explode = _tools()

    @function_tool
    def apply_patch(input: str) -> str:
        """Apply a patch."""
        return "Done!"

    @function_tool(strict_mode=False)  # a plan's steps are objects of free keys
    def update_plan(plan: list[dict[str, str]]) -> str:
        """Record the plan."""
        return "Plan updated"

    def usage(n: int) -> Usage:
        return Usage(
            requests=1,
            input_tokens=10 * n,
            input_tokens_details=InputTokensDetails(cached_tokens=n, cache_write_tokens=0),
            output_tokens=n,
            output_tokens_details=OutputTokensDetails(reasoning_tokens=n // 2),
            total_tokens=11 * n,
        )

    def step(n: int, *output: Any) -> Any:
        return ModelStep(output=list(output), usage=usage(n), response_id=f"resp_s{n}")

    summary = Summary(text="Add, then the risky tools.", type="summary_text")
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
    researcher = Agent(
        name="researcher",
        model=ScriptedModel([step(9, assistant_message("Tools fail.", item_id="msg_r"))]),
    )
    research = researcher.as_tool(tool_name="research", tool_description="Ask the researcher.")
    script = [
        step(
            1,
            ResponseReasoningItem(id="rs_1", type="reasoning", summary=[summary]),
            assistant_message("Adding first.", item_id="msg_1"),
            function_call("add", {"a": 1, "b": 2}, call_id="call_s1"),
        ),
        step(
            2,
            function_call("explode", {"x": "y"}, call_id="call_s2"),
            function_call("research", {"input": "why?"}, call_id="call_s3"),
        ),
        step(
            3,
            assistant_message("Now the edit.", item_id="msg_3"),
            function_call("apply_patch", {"input": patch}, call_id="call_s4"),
        ),
        step(
            4,
            function_call(
                "update_plan",
                {"plan": [{"step": "edit", "status": "completed"}]},
                call_id="call_s5",
            ),
            assistant_message("Planned.", item_id="msg_4"),
        ),
        step(
            5,
            ResponseReasoningItem(
                id="rs_6", type="reasoning", summary=[], encrypted_content="opaque"
            ),
            assistant_message("Done: 3, a failure, an edit and a plan.", item_id="msg_6"),
        ),
    ]
    return Agent(
        name="solo",
        instructions="You are terse.",
        tools=[add, explode, research, apply_patch, update_plan],
        model=ScriptedModel(script),
    )


def reused_ids(handoff: bool = False) -> Any:
    """An agent whose texts all have the id the SDK's own ``assistant_message`` gives by
    default (``scripted-message``), as a provider may reuse ids too: ``r0`` calls ``add``;
    ``r1`` writes a text and calls ``add`` (or, with ``handoff``, hands off to ``writer``,
    which makes the rest); ``r2`` writes two texts (one id twice in one response) and calls
    ``add``; ``r3`` answers. Input tokens: :data:`REUSED_USAGE`."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from agents.usage import Usage

    from agents import Agent, set_tracing_disabled

    set_tracing_disabled(True)

    add, _ = _tools()

    def step(n: int, *output: Any) -> Any:
        tokens = REUSED_USAGE[n]
        usage = Usage(requests=1, input_tokens=tokens, output_tokens=1, total_tokens=tokens + 1)
        return ModelStep(output=list(output), usage=usage, response_id=f"r{n}")

    later = [
        step(
            2,
            assistant_message("one"),
            assistant_message("two"),
            function_call("add", {"a": 5, "b": 5}, call_id="w1"),
        ),
        step(3, assistant_message("final")),
    ]
    name = "transfer_to_writer" if handoff else "add"
    first = [
        step(0, function_call("add", {"a": 1, "b": 2}, call_id="c1")),
        step(1, assistant_message("let me hand off"), function_call(name, {}, call_id="h1")),
    ]
    if not handoff:
        return Agent(name="solo", tools=[add], model=ScriptedModel(first + later))
    writer = Agent(name="writer", tools=[add], model=ScriptedModel(later))
    return Agent(name="triage", tools=[add], handoffs=[writer], model=ScriptedModel(first))


#: :func:`reused_ids`' responses' input tokens, and the entry (a text, a call id) each
#: response's usage goes on: its last text, else its first call.
REUSED_USAGE = [50, 100, 200, 300]
REUSED_CARRIERS = {"c1": 50, "let me hand off": 100, "two": 200, "final": 300}


APPROVAL_PROMPT = "Read and delete /a."


def approval(texts: bool = False) -> Any:
    """An agent whose ``delete`` tool needs the user's approval (``needs_approval=True``):
    its first response calls ``read`` and ``delete``, so the run stops with ``delete``
    waiting (``RunResult.interruptions``); resumed (:func:`run_approved`), it answers.
    With ``texts``, a response writes ``Reading.`` and calls ``read`` before that one,
    which writes ``Deleting.`` too, and every text has the SDK's default id
    (``scripted-message``, as :func:`reused_ids`'); input tokens 10, 20 and 30."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    @function_tool(needs_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @function_tool
    def read(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    def step(n: int, *output: Any) -> Any:
        return ModelStep(output=list(output), usage=_usage(n), response_id=f"r{n}")

    read_a = function_call("read", {"path": "/a"}, call_id="c1")
    delete_a = function_call("delete", {"path": "/a"}, call_id="c2")
    if texts:
        script = [
            step(1, assistant_message("Reading."), read_a),
            step(2, assistant_message("Deleting."), delete_a),
            step(3, assistant_message("Done with /a.")),
        ]
    else:
        script = [
            step(1, read_a, delete_a),
            step(2, assistant_message("Done with /a.", item_id="m2")),
        ]
    return Agent(name="fs", tools=[delete, read], model=ScriptedModel(script))


def run_approved(approve: bool, *, resume: bool = True, agent: Any = None) -> tuple[Any, Any]:
    """:func:`approval`'s run (of ``agent``, one it made) stopped for ``delete``, which the
    user approves (or rejects) through the run's state: the stopped ``RunResult`` and the
    state decided, resumed (the resumed ``RunResult``) unless ``resume`` is False."""
    agent = agent or approval()
    stopped = run(lambda: agent, APPROVAL_PROMPT)
    state = stopped.to_state()
    for waiting in stopped.interruptions:
        if approve:
            state.approve(waiting)
        else:
            state.reject(waiting)
    return stopped, run(lambda: agent, state) if resume else state


def strict(calls: int = 1) -> Any:
    """An agent whose ``strict`` tool has no ``failure_error_function``: its exception ends
    the run (the SDK raises ``UserError("Error running tool strict: …")``). Its response
    calls ``add`` and ``strict`` (``calls`` times: which one raised, the error does not say)."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    add, _ = _tools()

    @function_tool(failure_error_function=None)
    def strict(x: str) -> str:
        """Always fails, and the SDK raises."""
        raise RuntimeError(f"strict {x}")

    first = [function_call("add", {"a": 1, "b": 2}, call_id="c1")] + [
        function_call("strict", {"x": "y"}, call_id=f"s{n}") for n in range(1, calls + 1)
    ]
    script = [
        ModelStep(output=first, usage=_usage(1), response_id="r1"),
        ModelStep(output=[assistant_message("Never.", item_id="m2")], usage=_usage(2)),
    ]
    return Agent(name="a", tools=[add, strict], model=ScriptedModel(script))


def random_agent(chance: Any, *, reuse_ids: bool = False) -> Any:
    """An agent whose scripted responses ``chance`` (a ``random.Random``) shapes: each holds
    reasoning (raw text, a summary, encrypted only, or none), texts before and after its
    calls, and one to three calls of ``add`` or of ``explode`` (which raises); counted usage
    on most (the others count zero).
    The last response answers. With ``reuse_ids`` the texts have the SDK's default id
    (``scripted-message``) and the reasoning items one id of their own, in every response."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Content, Summary

    from agents import Agent, set_tracing_disabled

    set_tracing_disabled(True)

    add, explode = _tools()

    def reasoning(n: int) -> list[Any]:
        form = chance.choice(["text", "summary", "encrypted", None])
        if form is None:
            return []
        own = "rs" if reuse_ids else f"rs_{n}"
        item = ResponseReasoningItem(id=own, type="reasoning", summary=[])
        if form == "text":
            item.content = [Content(text=f"thinking {n}", type="reasoning_text")]
        elif form == "summary":
            item.summary = [Summary(text=f"summary {n}", type="summary_text")]
        else:
            item.encrypted_content = f"opaque {n}"
        return [item]

    def text(n: int, where: str) -> list[Any]:
        if chance.random() < 0.4:
            own = "scripted-message" if reuse_ids else f"msg_{where}_{n}"
            return [assistant_message(f"{where} {n}", item_id=own)]
        return []

    script = []
    for n in range(chance.randint(1, 5)):
        calls = [
            function_call("add", {"a": n, "b": k}, call_id=f"call_{n}_{k}")
            if chance.random() < 0.7
            else function_call("explode", {"x": str(k)}, call_id=f"call_{n}_{k}")
            for k in range(chance.randint(1, 3))
        ]
        output = [*reasoning(n), *text(n, "before"), *calls, *text(n, "after")]
        counted = {"usage": _usage(n + 1)} if chance.random() < 0.8 else {}  # else all zero
        script.append(ModelStep(output=output, response_id=f"resp_{n}", **counted))
    own = "scripted-message" if reuse_ids else "msg_done"
    answer = [*reasoning(99), assistant_message("Done.", item_id=own)]
    script.append(ModelStep(output=answer, response_id="resp_done"))
    return Agent(name="random", tools=[add, explode], model=ScriptedModel(script))


def documents() -> dict[str, Any]:
    """File name → the JSON value saved under it (the SDK's own serialisations)."""
    from agents.version import __version__

    result = run()
    version = f"openai-agents_v{__version__}"
    state = result.to_state().to_json()
    return {
        f"{version}_input-list_handoff.json": result.to_input_list(),
        f"{version}_run-state_handoff.json": state,
        # The run items alone, serialised by the state (a list a user saves of new_items).
        f"{version}_run-items_handoff.json": state["generated_items"],
        f"{version}_run-state_handoff-chain.json": run_chain().to_state().to_json(),
    }


def write() -> list[Path]:
    """Write the fixtures (indented like ``RunState.to_string()``); the paths written."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, value in documents().items():
        path = FIXTURES / name
        path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write():
        print(written)
