"""Scripted LangChain / LangGraph runs for the tests (spec A-1, A-2; issue 22), offline.

``create_agent`` drives a ``FakeMessagesListChatModel`` subclass (the recipe of the notes):
``bind_tools`` returns the model itself, and ``_stream`` splits each scripted response into
chunks (a thinking block, then the text word by word, then the tool-call chunks with the
usage), so ``stream_mode="messages"`` yields real ``AIMessageChunk`` tokens. The run: a call
of ``add`` (success), a call of ``explode`` (a ``ToolException`` the tool handles, so its
``ToolMessage`` has ``status="error"``), then the answer, with thinking and usage on every
response. The parent run calls ``ask_helper``, a tool that invokes a child agent.
``handoff_graph`` is a swarm of agents handing off with ``transfer_to_<name>`` tools that
return ``Command(goto=<name>, graph=Command.PARENT)``: triage -> billing -> refunds -> back
to billing, which answers. Further runs: ``command_graph`` (a hand-built ``ToolNode`` graph
whose tool answers with a ``Command``), ``image_agent`` (a tool returning image blocks in
every form), ``server_tool_agent`` (a model that ran a provider's own web search),
``interrupt_agent`` (``interrupt()`` in a tool, or ``HumanInTheLoopMiddleware``) and
``parallel_parent`` (two agents used as tools, called in parallel).

``python tests/formats/langchain_runs.py`` writes the fixtures under
``tests/fixtures/frameworks/langchain/``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import InjectedToolCallId, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import BaseModel

from turnfold.model import Transcript

PROMPT = "Add 1 and 2, then try the exploding tool."
ANSWER = "1+2=3; the exploding tool failed with boom: y."
MODEL = "fake-model-1"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "langchain"


class FakeToolModel(FakeMessagesListChatModel):
    """The scripted model: its responses in order, streamed as chunks when asked to."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the base class raises
        return self

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        response = self.responses[self.i]
        self.i = self.i + 1 if self.i < len(self.responses) - 1 else 0
        for chunk in _chunks(response):
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)


def _chunks(message: BaseMessage) -> list[AIMessageChunk]:
    """A scripted response as the chunks a provider would stream."""
    assert isinstance(message, AIMessage)
    chunks: list[AIMessageChunk] = []
    if message.additional_kwargs:  # reasoning_content streams first, as DeepSeek's does
        chunks.append(AIMessageChunk(content="", additional_kwargs=message.additional_kwargs))
    blocks = message.content if isinstance(message.content, list) else [message.content]
    for index, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "thinking":
            chunks.append(AIMessageChunk(content=[{**block, "index": index}]))
        elif isinstance(block, dict) and block.get("type") == "text":
            for piece in _words(str(block["text"])):
                chunks.append(
                    AIMessageChunk(content=[{"type": "text", "text": piece, "index": index}])
                )
        elif isinstance(block, str):  # a string content streams as string chunks
            chunks += [AIMessageChunk(content=piece) for piece in _words(block)]
        elif isinstance(block, dict):  # any other block (a server tool's) streams whole
            chunks.append(AIMessageChunk(content=[{**block, "index": index}]))
    call_chunks = [
        {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": n}
        for n, c in enumerate(message.tool_calls)
    ]
    chunks.append(
        AIMessageChunk(
            content="" if isinstance(message.content, str) else [],
            tool_call_chunks=call_chunks,  # type: ignore[arg-type]
            usage_metadata=message.usage_metadata,
            response_metadata=message.response_metadata,
            chunk_position="last",
        )
    )
    return chunks


def _words(text: str) -> list[str]:
    return [word if n == 0 else " " + word for n, word in enumerate(text.split(" "))]


def _usage(tokens_in: int, tokens_out: int) -> Any:
    return {
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "input_token_details": {"cache_read": 4, "cache_creation": 1},
        "output_token_details": {"reasoning": 3},
    }


def _response(
    thinking: str, text: str | None, calls: list[tuple[str, dict[str, Any], str]], n: int
) -> AIMessage:
    content: list[str | dict[str, Any]] = [{"type": "thinking", "thinking": thinking}]
    if text:
        content.append({"type": "text", "text": text})
    return AIMessage(
        content=content,
        tool_calls=[{"name": name, "args": args, "id": cid} for name, args, cid in calls],
        usage_metadata=_usage(100 + n, 10 + n),
        response_metadata={"model_name": MODEL},
    )


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(x: str) -> str:
    """Always fails."""
    raise ToolException(f"boom: {x}")


explode.handle_tool_error = True  # the error becomes a ToolMessage(status="error")


def scripted_model() -> FakeToolModel:
    return FakeToolModel(
        responses=[
            _response("I add first.", None, [("add", {"a": 1, "b": 2}, "call_1")], 1),
            _response("Now the failing one.", "Trying it.", [("explode", {"x": "y"}, "call_2")], 2),
            AIMessage(
                content=ANSWER,
                additional_kwargs={"reasoning_content": "Both calls are done."},
                usage_metadata=_usage(130, 20),
                response_metadata={"model_name": MODEL},
            ),
        ]
    )


def scripted_agent(name: str | None = "calculator") -> Any:
    return create_agent(
        scripted_model(),
        tools=[add, explode],
        system_prompt="You are terse.",
        name=name,
        checkpointer=InMemorySaver(),
    )


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def run_result() -> dict[str, Any]:
    """``agent.invoke``'s result: ``{"messages": [...]}``."""
    result: dict[str, Any] = scripted_agent().invoke(
        {"messages": [("user", PROMPT)]}, _config("invoke")
    )
    return result


def stream_run(stream_mode: Any, **kwargs: Any) -> tuple[list[Any], Any]:
    """The events of ``agent.stream(..., stream_mode, **kwargs)`` and the run's final state
    (read from the checkpointer, so it is the very run the events came from)."""
    agent = scripted_agent()
    config = _config(f"stream-{stream_mode}")
    events = list(
        agent.stream({"messages": [("user", PROMPT)]}, config, stream_mode=stream_mode, **kwargs)
    )
    return events, agent.get_state(config).values


async def follow_astream(
    stream_mode: Any, agent: Any = None, prompt: str = PROMPT
) -> tuple[Any, list[Any], Any]:
    """``turnfold.follow`` over ``agent.astream(...)`` (the scripted agent's unless given)
    with ``async for``: the follow, the events it passed on, and the run's final state."""
    import turnfold

    agent = scripted_agent() if agent is None else agent
    config = _config(f"astream-{stream_mode}")
    run = turnfold.follow(
        agent.astream({"messages": [("user", prompt)]}, config, stream_mode=stream_mode),
        display=False,
    )
    events = [event async for event in run]
    return run, events, (await agent.aget_state(config)).values


CHILD_ANSWER = "2+3=5."
PARENT_ANSWER = "The helper says 2+3=5."


def parent_agent() -> Any:
    """A parent whose ``ask_helper`` tool invokes a child agent (named ``helper``), which
    calls ``add`` itself."""
    child = create_agent(
        FakeToolModel(
            responses=[
                _response("Child adds.", None, [("add", {"a": 2, "b": 3}, "child_call_1")], 5),
                AIMessage(content=CHILD_ANSWER, usage_metadata=_usage(50, 5)),
            ]
        ),
        tools=[add],
        name="helper",
    )

    @tool
    def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        answer = child.invoke({"messages": [("user", question)]})["messages"][-1]
        return str(answer.content)

    return create_agent(
        FakeToolModel(
            responses=[
                _response("Ask the helper.", None, [("ask_helper", {"question": "2+3?"}, "p1")], 7),
                AIMessage(content=PARENT_ANSWER, usage_metadata=_usage(60, 6)),
            ]
        ),
        tools=[ask_helper],
        name="parent",
        checkpointer=InMemorySaver(),
    )


def stream_parent(stream_mode: Any) -> tuple[list[Any], Any]:
    """The parent run streamed with ``subgraphs=True``, and its final state."""
    agent = parent_agent()
    config = _config(f"parent-{stream_mode}")
    events = list(
        agent.stream(
            {"messages": [("user", "What is 2+3? Ask the helper.")]},
            config,
            stream_mode=stream_mode,
            subgraphs=True,
        )
    )
    return events, agent.get_state(config).values


HANDOFF_PROMPT = "Refund my double charge."
HANDOFF_ANSWER = "Refunded 4; billed 2."


def handoff_tool(agent: str) -> Any:
    """A ``transfer_to_<agent>`` tool as langgraph-swarm and langgraph-supervisor make it
    (neither is installed: built from ``langgraph`` alone): it answers its call with a
    ``ToolMessage`` and hands control to the ``agent`` node of the parent graph with
    ``Command(goto=agent, graph=Command.PARENT)``."""

    @tool(f"transfer_to_{agent}", description=f"Hand the conversation to {agent}.")
    def transfer(
        state: Annotated[dict[str, Any], InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
    ) -> Command[Any]:
        done = ToolMessage(
            f"Successfully transferred to {agent}",
            name=f"transfer_to_{agent}",
            tool_call_id=tool_call_id,
        )
        return Command(
            goto=agent, graph=Command.PARENT, update={"messages": [*state["messages"], done]}
        )

    return transfer


def handoff_graph() -> Any:
    """A swarm of three ``create_agent`` agents, each a node of a ``StateGraph``:
    ``triage`` hands off to ``billing``, which calls ``add`` and hands off to ``refunds``,
    which calls ``add`` and hands back to ``billing``, which answers."""
    from langgraph.graph import START, MessagesState, StateGraph

    def agent(name: str, responses: list[AIMessage], tools: list[Any]) -> Any:
        return create_agent(FakeToolModel(responses=responses), tools=tools, name=name)

    triage = agent(
        "triage",
        [_response("Billing handles this.", None, [("transfer_to_billing", {}, "t_1")], 1)],
        [handoff_tool("billing")],
    )
    billing = agent(
        "billing",
        [
            _response("Check the sum.", None, [("add", {"a": 1, "b": 1}, "b_1")], 2),
            _response("Refunds decide.", "Refunds will know.",
                      [("transfer_to_refunds", {}, "b_2")], 3),
            AIMessage(content=HANDOFF_ANSWER, usage_metadata=_usage(90, 9),
                      response_metadata={"model_name": MODEL}),
        ],
        [add, handoff_tool("refunds")],
    )  # fmt: skip
    refunds = agent(
        "refunds",
        [
            _response("Refund it.", None, [("add", {"a": 2, "b": 2}, "f_1")], 4),
            _response("Back to billing.", None, [("transfer_to_billing", {}, "f_2")], 5),
        ],
        [add, handoff_tool("billing")],
    )
    graph = StateGraph(MessagesState)
    graph.add_node("triage", triage, destinations=("billing",))
    graph.add_node("billing", billing, destinations=("refunds",))
    graph.add_node("refunds", refunds, destinations=("billing",))
    graph.add_edge(START, "triage")
    return graph.compile(checkpointer=InMemorySaver())


def stream_handoffs(stream_mode: Any, *, subgraphs: bool = False) -> tuple[list[Any], Any]:
    """The handoff graph's run streamed, and its final state."""
    graph = handoff_graph()
    config = _config(f"handoffs-{stream_mode}-{subgraphs}")
    events = list(
        graph.stream(
            {"messages": [("user", HANDOFF_PROMPT)]},
            config,
            stream_mode=stream_mode,
            subgraphs=subgraphs,
        )
    )
    return events, graph.get_state(config).values


# --- a ToolNode writing a Command beside a plain result (one update per write) ------------


@tool
def set_flag(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Set a flag: the tool answers with a ``Command(update=...)`` of its own message."""
    done = ToolMessage("flag set", tool_call_id=tool_call_id)
    return Command(update={"messages": [done]})


def command_graph() -> Any:
    """The classic hand-built ReAct graph (``StateGraph`` + ``ToolNode`` + ``tools_condition``)
    whose one AI message calls ``add`` and ``set_flag``: the one ``ToolNode`` task writes the
    ``messages`` channel twice, so its ``updates`` event lists two updates."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    model = FakeToolModel(
        responses=[
            AIMessage("", tool_calls=[
                {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"},
                {"name": "set_flag", "args": {}, "id": "c2"},
            ]),
            AIMessage("Added and flagged."),
        ]
    )  # fmt: skip
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([add, set_flag]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


class PydanticState(BaseModel):
    """A state schema of a Pydantic model (:func:`schema_graph`)."""

    messages: Annotated[list[AnyMessage], add_messages]
    turns: int = 0


@dataclasses.dataclass
class DataclassState:
    """A state schema of a dataclass (:func:`schema_graph`)."""

    messages: Annotated[list[AnyMessage], add_messages] = dataclasses.field(default_factory=list)
    turns: int = 0


def schema_graph(schema: str) -> Any:
    """A ``StateGraph`` on a state schema of a Pydantic model or a dataclass (``schema``:
    ``"pydantic"`` or ``"dataclass"``), a scalar beside its messages: the model calls
    ``add``, then answers. With ``version="v2"`` LangGraph hands its state over as that
    schema's object, not a dict."""
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    state = PydanticState if schema == "pydantic" else DataclassState
    model = FakeToolModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}]),
            AIMessage("1+2=3."),
        ]
    )
    graph = StateGraph(state)
    graph.add_node(
        "agent", lambda s: {"messages": [model.invoke(s.messages)], "turns": s.turns + 1}
    )
    graph.add_node("tools", ToolNode([add]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def stream_graph(graph: Any, prompt: str, stream_mode: Any, **kwargs: Any) -> tuple[list[Any], Any]:
    """``graph``'s run streamed, and its final state (from the checkpointer)."""
    config = _config(f"{id(graph)}-{stream_mode}")
    events = list(
        graph.stream({"messages": [("user", prompt)]}, config, stream_mode=stream_mode, **kwargs)
    )
    return events, graph.get_state(config).values


# --- images in a tool's result --------------------------------------------------------------

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
#: A tool's image content blocks in each form LangChain passes on
#: (``langchain_core.messages.content.ImageContentBlock``, the v0 ``source_type`` form,
#: Anthropic's ``source``, OpenAI's ``image_url``) and a file block, with what the
#: result must show of each: an image, or a line naming it (never fetched).
IMAGE_BLOCKS: list[tuple[dict[str, Any], str | None]] = [
    ({"type": "image", "base64": PNG, "mime_type": "image/png"}, None),
    ({"type": "image", "url": f"data:image/png;base64,{PNG}"}, None),
    ({"type": "image", "url": "https://example.com/a.png"}, "[image: https://example.com/a.png]"),
    ({"type": "image", "file_id": "file-abc"}, "[image: file-abc]"),
    ({"type": "image", "source_type": "base64", "data": PNG, "mime_type": "image/png"}, None),
    ({"type": "image", "source_type": "id", "id": "file-v0"}, "[image: file-v0]"),
    ({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}, None),
    (
        {"type": "image", "source": {"type": "url", "url": "https://example.com/b.png"}},
        "[image: https://example.com/b.png]",
    ),
    ({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}, None),
    (
        {
            "type": "file",
            "base64": "JVBERi0=",
            "mime_type": "application/pdf",
            "extras": {"filename": "report.pdf"},
        },
        "[file: report.pdf · application/pdf]",
    ),
]


@tool
def screenshot(page: str) -> list[Any]:
    """Take a screenshot: the page's text, then its images in every form."""
    return [{"type": "text", "text": f"page {page}"}, *(block for block, _ in IMAGE_BLOCKS)]


def image_agent() -> Any:
    return create_agent(
        FakeToolModel(
            responses=[
                AIMessage(
                    "", tool_calls=[{"name": "screenshot", "args": {"page": "a"}, "id": "s1"}]
                ),
                AIMessage("It shows a dot."),
            ]
        ),
        tools=[screenshot],
        checkpointer=InMemorySaver(),
    )


# --- a provider's own (server-side) tools ----------------------------------------------------

#: Anthropic's web search as langchain-anthropic keeps it in the content (the call is not in
#: ``tool_calls``): ``server_tool_use`` answered by ``web_search_tool_result``.
ANTHROPIC_SEARCH: list[Any] = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
     "input": {"query": "weather"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
     "content": [{"type": "web_search_result", "url": "https://w.example", "title": "Weather"}]},
    {"type": "text", "text": "It is sunny."},
]  # fmt: skip


def server_tool_agent(standard: bool) -> Any:
    """An agent whose model searched the web itself (Anthropic's blocks, or LangChain's
    standard ``server_tool_call`` / ``server_tool_result`` that ``content_blocks`` makes of
    them), then calls ``add``."""
    searched = AIMessage(
        content=ANTHROPIC_SEARCH,
        tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}],
        response_metadata={"model_provider": "anthropic", "model_name": MODEL},
    )
    if standard:
        searched = AIMessage(
            content=searched.content_blocks,  # type: ignore[arg-type]
            tool_calls=searched.tool_calls,
            response_metadata={"output_version": "v1", "model_name": MODEL},
        )
    return create_agent(
        FakeToolModel(responses=[searched, AIMessage("Sunny; 1+2=3.")]),
        tools=[add],
        checkpointer=InMemorySaver(),
    )


# --- interrupts (human in the loop) ----------------------------------------------------------


@tool
def delete_file(path: str) -> str:
    """Delete a file once a human says yes."""
    from langgraph.types import interrupt

    answer = interrupt({"question": f"Delete {path}?", "path": path})
    return f"deleted {path}" if answer == "yes" else f"kept {path}"


def interrupt_agent(paths: list[str], middleware: Any = ()) -> Any:
    """An agent whose one response calls ``delete_file`` on each of ``paths`` (``d1``,
    ``d2``…); the tool asks a human with ``interrupt()`` unless ``middleware`` asks first."""
    calls = [
        {"name": "delete_file", "args": {"path": path}, "id": f"d{n}"}
        for n, path in enumerate(paths, start=1)
    ]
    return create_agent(
        FakeToolModel(responses=[AIMessage("", tool_calls=calls), AIMessage("Done.")]),
        tools=[delete_file],
        middleware=list(middleware),
        checkpointer=InMemorySaver(),
    )


#: What a run of ``interrupt_agent(["/a"])`` resumed with ``"yes"`` shows, by :func:`said`: the
#: prompt, the call the interrupt stopped (settled by its result) and the answer.
RESUMED = [("UserMessage", "rm /a", None), ("ToolCall", "delete_file", "success"),
           ("AssistantText", "Done.", None)]  # fmt: skip


def said(transcript: Transcript) -> list[tuple[str, Any, Any]]:
    """Each entry of ``transcript``: its type, its text or its tool's name, a call's status."""
    return [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None),
         getattr(e, "status", None))
        for e in transcript.entries
    ]  # fmt: skip


# --- two agents used as tools, called in parallel ------------------------------------------


def parallel_parent(wrapped: bool = False) -> Any:
    """A parent whose one response calls ``ask_alice`` and ``ask_bob``, each a tool that
    invokes a child agent; the tools return the child's answer (``wrapped``: inside text of
    their own, so no answer equals its result)."""

    def child(name: str, a: int, b: int, call_id: str) -> Any:
        return create_agent(
            FakeToolModel(
                responses=[
                    AIMessage("", tool_calls=[{"name": "add", "args": {"a": a, "b": b},
                                               "id": call_id}]),
                    AIMessage(f"{name}: {a + b}"),
                ]
            ),
            tools=[add],
            name=name,
        )  # fmt: skip

    alice, bob = child("alice", 1, 2, "ca"), child("bob", 3, 4, "cb")

    def answer(agent: Any, question: str) -> str:
        text = str(agent.invoke({"messages": [("user", question)]})["messages"][-1].content)
        return f"The helper said: {text}" if wrapped else text

    @tool
    def ask_alice(question: str) -> str:
        """Ask alice."""
        return answer(alice, question)

    @tool
    def ask_bob(question: str) -> str:
        """Ask bob."""
        return answer(bob, question)

    return create_agent(
        FakeToolModel(
            responses=[
                AIMessage("", tool_calls=[
                    {"name": "ask_alice", "args": {"question": "1+2"}, "id": "p1"},
                    {"name": "ask_bob", "args": {"question": "3+4"}, "id": "p2"},
                ]),
                AIMessage("alice 3, bob 7"),
            ]
        ),
        tools=[ask_alice, ask_bob],
        name="parent",
        checkpointer=InMemorySaver(),
    )  # fmt: skip


def main() -> None:
    """Write the saved forms of the scripted run: ``messages_to_dict`` and ``dumpd``."""
    from langchain_core import __version__
    from langchain_core.load import dumpd
    from langchain_core.messages import messages_to_dict

    messages = run_result()["messages"]
    FIXTURES.mkdir(parents=True, exist_ok=True)
    shapes = {
        "messages-to-dict": messages_to_dict(messages),
        "dumpd": [dumpd(m) for m in messages],
    }
    for what, value in shapes.items():
        path = FIXTURES / f"langchain_v{__version__}_{what}_tool-error.json"
        path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(path)
    _, state = stream_handoffs("values")
    path = FIXTURES / f"langchain_v{__version__}_messages-to-dict_handoffs.json"
    text = json.dumps(messages_to_dict(state["messages"]), indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    print(path)


if __name__ == "__main__":
    main()
