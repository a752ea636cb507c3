"""Scripted LlamaIndex ``ReActAgent`` and ``CodeActAgent`` runs, offline, for
``test_llamaindex_react``.

The model is a ``CustomLLM`` that writes scripted text (streamed in two pieces), so what the
agents do with it is LlamaIndex's own: ``ReActOutputParser`` parses the Thought / Action /
Action Input / Answer text, the ``ReActAgent`` retries an unparseable reply, a ``CodeActAgent``
runs the ``<execute>`` code through its ``code_execute_fn``.

``react``: thinks and calls ``add`` (succeeds), writes a reply the parser refuses (retried),
calls ``explode`` (raises: ``ToolOutput.is_error``) and answers. ``codeact``: runs code that
prints, then code that raises, and answers. ``react_handoff``: an ``AgentWorkflow`` of two
ReAct agents, ``lead`` handing off to ``math``.
"""

from __future__ import annotations

from typing import Any

from tests.formats.llamaindex_runs import add, explode
from tests.formats.loops import run_async

PROMPT = "add 1 and 2, then explode"

REACT_REPLIES = [
    'Thought: I need to add.\nAction: add\nAction Input: {"a": 1, "b": 2}',
    "Thought: what now?\nAction: add\nAction Input: none",
    'Thought: Now explode.\nAction: explode\nAction Input: {"x": "y"}',
    "Thought: I have both results.\nAnswer: 1+2=3; explode failed.",
]
CODE_REPLIES = [
    "Let me compute.\n<execute>\nprint(1 + 2)\n</execute>",
    "<execute>\nexplode('y')\n</execute>",
    "1+2=3, and explode failed.",
]


def scripted_text(replies: list[str]) -> Any:
    """A ``CustomLLM`` that writes ``replies`` in turn, each streamed in two pieces."""
    from llama_index.core.llms import (
        CompletionResponse,
        CompletionResponseGen,
        CustomLLM,
        LLMMetadata,
    )

    left = list(replies)

    class ScriptedText(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted", is_chat_model=False)

        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
            return CompletionResponse(text=left.pop(0))

        def stream_complete(
            self, prompt: str, formatted: bool = False, **kw: Any
        ) -> CompletionResponseGen:
            text = left.pop(0)
            half = len(text) // 2
            yield CompletionResponse(text=text[:half], delta=text[:half])
            yield CompletionResponse(text=text, delta=text[half:])

    return ScriptedText()


def react_agent(streaming: bool = True, retry: bool = True) -> Any:
    """The ReAct run; ``retry=False``: without the reply the parser refuses."""
    from llama_index.core.agent.workflow import ReActAgent

    replies = REACT_REPLIES if retry else [REACT_REPLIES[0], *REACT_REPLIES[2:]]
    return ReActAgent(
        tools=[add, explode], llm=scripted_text(replies), system_prompt="Be terse.",
        streaming=streaming,
    )  # fmt: skip


def code_execute(code: str) -> str:
    """Runs the scripted code: a print's output, or the failure the code raises."""
    if "explode" in code:
        raise RuntimeError("boom: y")
    return "3\n"


def codeact_agent() -> Any:
    from llama_index.core.agent.workflow import CodeActAgent

    return CodeActAgent(code_execute_fn=code_execute, llm=scripted_text(CODE_REPLIES))


def react_handoff() -> Any:
    from llama_index.core.agent.workflow import AgentWorkflow, ReActAgent

    lead = ReActAgent(
        name="lead", description="routes", tools=[], can_handoff_to=["math"],
        system_prompt="Route.",
        llm=scripted_text(['Thought: math is needed.\nAction: handoff\nAction Input: '
                           '{"to_agent": "math", "reason": "needs math"}']),
    )  # fmt: skip
    math = ReActAgent(
        name="math", description="adds", tools=[add], system_prompt="Add.",
        llm=scripted_text(['Thought: add them.\nAction: add\nAction Input: {"a": 2, "b": 3}',
                           "Thought: done.\nAnswer: 2+3=5"]),
    )  # fmt: skip
    return AgentWorkflow(agents=[lead, math], root_agent="lead")


async def _run(agent: Any, prompt: str, on_event: Any = None) -> tuple[Any, Any, list[Any]]:
    handler = agent.run(user_msg=prompt)
    events = []
    async for event in handler.stream_events():
        events.append(event)
        if on_event is not None:
            on_event(event)
    output = await handler
    return handler, output, events


def run(which: str, on_event: Any = None, **options: Any) -> tuple[Any, Any, list[Any]]:
    """The awaited handler, its ``AgentOutput`` and the events it streamed."""
    makers = {"react": react_agent, "codeact": codeact_agent, "react_handoff": react_handoff}
    prompt = "what is 2+3" if which == "react_handoff" else PROMPT
    return run_async(_run(makers[which](**options), prompt, on_event))
