"""Runs of the real Google ADK, offline, saved as the fixtures of the "adk" format (issue 22).

Every agent runs on ``ScriptedLlm``, a ``BaseLlm`` subclass that replays fixed replies (the
ADK's own ``MockModel`` needs pytest), so nothing reaches a network. ``calc``, the root agent:

- thinks, then calls ``add`` (succeeds) and ``explode`` (raises; ``on_tool_error_callback``
  turns the exception into the tool's ``{"error": ...}`` response, so the run goes on);
- calls ``helper``, a ``single_turn`` sub-agent the ADK exposes as a tool and runs inside the
  session (its events carry the branch ``helper@<call id>``), which calls ``add`` itself;
- calls ``researcher``, an ``AgentTool`` (run in a session of its own that is discarded: the
  parent's session holds only the call and its response);
- transfers to ``writer`` (``transfer_to_agent``), which calls ``add`` and answers.

``handoff_run`` is a chain of ``transfer_to_agent`` handoffs: ``triage`` to ``billing``,
``billing`` to its sub-agent ``refunds``, and ``refunds`` back to ``billing``, which answers.

``raising_run`` is a run without the error callback: the tool's exception becomes an
``Event(error_code=...)`` and is then raised out of ``run_async``.

``long_running_run`` calls a ``LongRunningFunctionTool`` and waits until the client answers
it; ``confirming_run`` waits for the user to confirm a tool (``require_confirmation``).

``python -m tests.formats.adk_runs`` rewrites the files under ``tests/fixtures/frameworks/adk/``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from tests.formats.loops import run_async

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "adk"
PROMPT = "Add 1 and 2, try explode, ask the helper and the researcher, then let the writer answer."
HANDOFF_PROMPT = "Refund my double charge."
APP, USER = "demo", "u"


def _parts(reply: Any) -> list[Any]:
    from google.genai import types

    parts = []
    for piece in reply:
        if isinstance(piece, tuple):
            name, args, call_id = piece
            parts.append(
                types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))
            )
        elif piece.startswith("~"):
            parts.append(types.Part(text=piece[1:], thought=True))
        else:
            parts.append(types.Part(text=piece))
    return parts


def _scripted(replies: list[list[Any]], tokens: int) -> Any:
    """A ``BaseLlm`` that answers each request with the next reply: text, ``~thought`` text,
    or ``(name, args, call id)`` calls; streamed (partial text chunks, then the whole reply)
    when the runner asks for SSE."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    class ScriptedLlm(BaseLlm):
        model: str = "scripted-1"
        replies: list[list[Any]]
        tokens: int = 10

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            reply = self.replies.pop(0)
            if stream:
                for piece in reply:
                    if isinstance(piece, str) and not piece.startswith("~"):
                        for start in range(0, len(piece), 5):
                            yield LlmResponse(
                                content=types.Content(
                                    role="model", parts=_parts([piece[start : start + 5]])
                                ),
                                partial=True,
                                model_version="scripted-1",
                            )
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=self.tokens,
                candidates_token_count=5,
                cached_content_token_count=2,
                thoughts_token_count=3 if any(
                    isinstance(p, str) and p.startswith("~") for p in reply
                ) else None,
                total_token_count=self.tokens + 5,
            )  # fmt: skip
            yield LlmResponse(
                content=types.Content(role="model", parts=_parts(reply)),
                model_version="scripted-1",
                usage_metadata=usage,
            )

    return ScriptedLlm(replies=replies, tokens=tokens)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def explode(x: str) -> str:
    """Always fails."""
    raise ValueError(f"boom: {x}")


def _tool_error(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict[str, str]:
    return {"error": str(error)}


def _runner() -> Any:
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.agent_tool import AgentTool

    helper = LlmAgent(
        name="helper",
        mode="single_turn",
        description="Adds five and five.",
        model=_scripted([[("add", {"a": 5, "b": 5}, "h_1")], ["helper: 10"]], 20),
        tools=[add],
    )
    researcher = LlmAgent(
        name="researcher",
        description="Explains things.",
        model=_scripted([["Because tools fail."]], 30),
    )
    writer = LlmAgent(
        name="writer",
        description="Writes the answer.",
        model=_scripted(
            [[("add", {"a": 3, "b": 4}, "w_1")], ["1+2=3, 3+4=7; explode failed."]], 40
        ),
        tools=[add],
    )
    calc = LlmAgent(
        name="calc",
        model=_scripted(
            [
                ["~First add, then the risky tool.", ("add", {"a": 1, "b": 2}, "call_1")],
                [("explode", {"x": "y"}, "call_2")],
                [("helper", {"request": "five and five?"}, "call_3")],
                [("researcher", {"request": "why?"}, "call_4")],
                ["Handing over.", ("transfer_to_agent", {"agent_name": "writer"}, "call_5")],
            ],
            10,
        ),
        instruction="You are terse.",
        tools=[add, explode, AgentTool(agent=researcher)],
        sub_agents=[helper, writer],
        on_tool_error_callback=_tool_error,
    )
    return InMemoryRunner(agent=calc, app_name=APP)


def root_agent() -> Any:
    """``calc``, the root agent of :func:`run`, built again: the same tree of agents and tools
    (what ``load(session, agent=...)`` reads of it is which tools are agents)."""
    return _runner().agent


def _handoff_runner() -> Any:
    """``triage`` hands off to ``billing``, which calls ``add`` and hands off to its own
    sub-agent ``refunds``; ``refunds`` calls ``add`` and hands back to ``billing`` (its
    parent), which answers: a chain two deep, a handoff back, and the answer in a child."""
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    refunds = LlmAgent(
        name="refunds",
        description="Refunds payments.",
        model=_scripted(
            [[("add", {"a": 2, "b": 2}, "f_1")],
             [("transfer_to_agent", {"agent_name": "billing"}, "f_2")]],
            30,
        ),
        tools=[add],
    )  # fmt: skip
    billing = LlmAgent(
        name="billing",
        description="Answers billing questions.",
        model=_scripted(
            [[("add", {"a": 1, "b": 1}, "b_1")],
             ["Refunds decide.", ("transfer_to_agent", {"agent_name": "refunds"}, "b_2")],
             ["Refunded 4; billed 2."]],
            20,
        ),
        tools=[add],
        sub_agents=[refunds],
    )  # fmt: skip
    triage = LlmAgent(
        name="triage",
        model=_scripted([[("transfer_to_agent", {"agent_name": "billing"}, "t_1")]], 10),
        instruction="Route the user.",
        sub_agents=[billing],
    )
    return InMemoryRunner(agent=triage, app_name=APP)


def _raising_runner() -> Any:
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    calc = LlmAgent(
        name="calc",
        model=_scripted([[("add", {"a": 1, "b": 2}, "r_1")], [("explode", {"x": "z"}, "r_2")]], 10),
        tools=[add, explode],
    )
    return InMemoryRunner(agent=calc, app_name=APP)


async def _run(
    runner: Any, wrap: Callable[[Any], Any], stream: bool, prompt: str = PROMPT
) -> tuple[Any, list[Any], BaseException | None]:
    from google.adk.agents.run_config import RunConfig
    from google.genai import types

    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    config = RunConfig.model_validate({"streaming_mode": "sse" if stream else None})
    seen: list[Any] = []
    failure: BaseException | None = None
    try:
        events = runner.run_async(
            user_id=USER, session_id=session.id, new_message=message, run_config=config
        )
        async for event in wrap(events):
            seen.append(event)
    except ValueError as exc:  # the raising run's tool error, raised after its error event
        failure = exc
    final = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session.id
    )
    return final, seen, failure


def run(
    wrap: Callable[[Any], Any] = lambda events: events, *, stream: bool = False
) -> tuple[Any, list[Any]]:
    """The scripted run: the final ``Session`` and the events ``run_async`` yielded (passed
    through ``wrap``, e.g. ``turnfold.follow``); ``stream`` asks for SSE (partial events)."""
    session, events, _ = run_async(_run(_runner(), wrap, stream))
    return session, events


def handoff_run(
    wrap: Callable[[Any], Any] = lambda events: events, *, stream: bool = False
) -> tuple[Any, list[Any]]:
    """The handoff chain triage -> billing -> refunds -> back to billing: the session and the
    events yielded (passed through ``wrap``)."""
    session, events, _ = run_async(_run(_handoff_runner(), wrap, stream, HANDOFF_PROMPT))
    return session, events


def raising_run(
    wrap: Callable[[Any], Any] = lambda events: events,
) -> tuple[Any, list[Any], BaseException | None]:
    """The run whose tool raises: the session, the events yielded and the exception raised."""
    return run_async(_run(_raising_runner(), wrap, False))  # type: ignore[no-any-return]


def followed(run: Callable[[Callable[[Any], Any]], Any]) -> tuple[Any, Any]:
    """``run(wrap)`` with its ``run_async`` events followed (``turnfold.follow``): its result
    and the followed transcript."""
    import turnfold

    follows: list[Any] = []

    def wrap(events: Any) -> Any:
        follows.append(turnfold.follow(events, display=False))
        return follows[0]

    return run(wrap), follows[0].transcript


# --- a long-running tool, and a tool that needs confirmation ---------------------------------

REFUND_PROMPT = "Refund order A1."


def ask_approval(amount: int) -> dict[str, str]:
    """Ask a manager to approve a refund (long running): returns at once, pending."""
    return {"status": "pending", "ticket": "T-1"}


def delete(path: str) -> dict[str, str]:
    """Delete a path."""
    return {"deleted": path}


def _waiting_runner() -> Any:
    """``refunds`` calls ``lookup`` (an ordinary tool, ``add``) and ``ask_approval``, a
    ``LongRunningFunctionTool`` whose return is an interim response; it says it waits. Given
    the client's answer (a ``function_response`` of the user with the call's id), it answers."""
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.long_running_tool import LongRunningFunctionTool

    refunds = LlmAgent(
        name="refunds",
        model=_scripted(
            [[("add", {"a": 40, "b": 2}, "l_1"), ("ask_approval", {"amount": 42}, "l_2")],
             ["Waiting for approval of ticket T-1."],
             ["Refund of 42 approved."]],
            10,
        ),
        tools=[add, LongRunningFunctionTool(func=ask_approval)],
    )  # fmt: skip
    return InMemoryRunner(agent=refunds, app_name=APP)


async def _waiting(wrap: Callable[[Any], Any]) -> tuple[Any, Any]:
    from google.genai import types

    runner = _waiting_runner()
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    asked = types.Content(role="user", parts=[types.Part(text=REFUND_PROMPT)])
    async for _ in wrap(runner.run_async(user_id=USER, session_id=session.id, new_message=asked)):
        pass
    waiting = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session.id
    )
    answer = types.FunctionResponse(id="l_2", name="ask_approval", response={"status": "approved"})
    answered = types.Content(role="user", parts=[types.Part(function_response=answer)])
    async for _ in runner.run_async(user_id=USER, session_id=session.id, new_message=answered):
        pass
    done = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session.id
    )
    return waiting, done


def long_running_run(wrap: Callable[[Any], Any] = lambda events: events) -> tuple[Any, Any]:
    """The long-running tool's run: the session while the call waits (after the first
    ``run_async``, its events passed through ``wrap``) and after the client's answer (a copy
    of the same session, taken after the second ``run_async``)."""
    return run_async(_waiting(wrap))  # type: ignore[no-any-return]


def _confirming_runner() -> Any:
    """``ops`` calls ``delete``, a tool that needs the user's confirmation
    (``FunctionTool(require_confirmation=True)``): the ADK asks the client with an
    ``adk_request_confirmation`` call, and the run waits."""
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.function_tool import FunctionTool

    ops = LlmAgent(
        name="ops",
        model=_scripted([[("delete", {"path": "/a"}, "d_1")], ["Deleted."]], 10),
        tools=[FunctionTool(delete, require_confirmation=True)],
    )
    return InMemoryRunner(agent=ops, app_name=APP)


def confirming_run(
    wrap: Callable[[Any], Any] = lambda events: events,
) -> tuple[Any, list[Any]]:
    """The run that waits for the user's confirmation: the session and the events yielded."""
    session, events, _ = run_async(_run(_confirming_runner(), wrap, False, "Delete /a."))
    return session, events


def main() -> None:
    from google.adk.version import __version__

    FIXTURES.mkdir(parents=True, exist_ok=True)
    session, _ = run()
    prefix = FIXTURES / f"adk_v{__version__}"
    Path(f"{prefix}_session_subagents.json").write_text(
        session.model_dump_json(indent=1) + "\n", encoding="utf-8"
    )
    camel = session.model_dump_json(by_alias=True, exclude_none=True, indent=1)
    Path(f"{prefix}_session-camel_subagents.json").write_text(camel + "\n", encoding="utf-8")
    handoff, _ = handoff_run()
    Path(f"{prefix}_session_handoff-chain.json").write_text(
        handoff.model_dump_json(indent=1) + "\n", encoding="utf-8"
    )
    raising, _, _ = raising_run()
    events = [event.model_dump(mode="json", exclude_none=True) for event in raising.events]
    Path(f"{prefix}_events_tool-raises.json").write_text(
        json.dumps(events, indent=1) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()


def dumped_event(author: str, parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """An event as ``Event.model_dump`` writes it (the shape of this module's fixtures): a
    function response is the user's, anything else of an agent the model's; ``extra`` fields
    added."""
    role = "user" if author == "user" or any("function_response" in p for p in parts) else "model"
    return {
        "author": author,
        "invocation_id": "e-1",
        "content": {"role": role, "parts": parts},
        "actions": {"state_delta": {}},
        "timestamp": 1796000000.5,
        **extra,
    }
