"""Spec A-1, A-2 (with L-1, L-3, P-3, P-7): four ways a smolagents run fails, followed and
loaded alike.

What smolagents 1.26 does (``agents.py``), read from its source:

- ``ToolCallingAgent._step_stream`` raises ``AgentExecutionError`` when a ``final_answer``
  output arrives from a step that made other calls too (``len(chat_message.tool_calls) > 1``):
  the answer is refused, the step's ``tool_calls`` and ``observations`` are never written
  (``process_tool_calls`` is left at that output), ``is_final_answer`` stays false, and the
  run goes on to its next step.
- With ``stream_outputs=True`` a ``CodeAgent`` streams its whole reply, code included, before
  the step's ``ToolCall``; a reply that is only code has no thought.
- A ``KeyboardInterrupt`` in a tool passes every ``except Exception``: the step is saved with
  no error and no observations (a ``CodeAgent``'s ``tool_calls`` set, a ``ToolCallingAgent``'s
  not), then ``_run_stream`` yields it from its ``finally`` and the interrupt leaves the run.
- ``_generate_planning_step`` calls the model outside any ``try``: its error is not wrapped in
  ``AgentGenerationError`` and no step records it (``planning_start_time``, a local of
  ``_run_stream``, is the plan's only time).

Every run is the real framework on the offline scripted model of
``tests/formats/smolagents_runs.py``.
"""

from __future__ import annotations

import sys
import threading
from datetime import datetime, timezone
from typing import Any

import pytest

import turnfold
from tests.smolagents_helper_runs import smolagents_runs
from tests.test_follow_failures import _followed_then_loaded, _message, _statuses
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    Transcript,
    UserMessage,
)

#: How long a tool waits for the event that orders a step's parallel calls; never reached
#: when the run goes as scripted (a safety net against a hung test, not a timing assertion).
_WAIT = 30


def _agent(
    replies: list[Any], tools: list[Any] | None = None, *, code: bool = False, **options: Any
) -> Any:
    """A streaming agent on the scripted model, whose reply that is an exception is raised
    instead of answering (a model error, a Ctrl-C), with ``tools`` (default: ``add``)."""
    runs = smolagents_runs()
    from smolagents import CodeAgent, ToolCallingAgent

    class RaisingModel(runs._model_class()):  # type: ignore[misc]
        def generate_stream(self, messages: Any, **kwargs: Any) -> Any:
            if isinstance(self.replies[0], BaseException):
                raise self.replies.pop(0)
            yield from super().generate_stream(messages, **kwargs)

    make: Any = CodeAgent if code else ToolCallingAgent
    return make(
        tools=tools if tools is not None else [runs._tools()[0]],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=True,
        model=RaisingModel(replies),
        **options,
    )


def _calls(transcript: Transcript) -> list[tuple[str, str, str | None]]:
    return [
        (c.name, c.status, c.result.text if c.result is not None else None)
        for c in transcript.tool_calls()
    ]


def _answers(transcript: Transcript) -> list[str]:
    return [
        e.text
        for e in transcript.entries
        if isinstance(e, AssistantText) and e.meta.get("final_answer")
    ]


# --- 1. a final answer given beside another call --------------------------------------------

_REFUSAL = (
    "If you want to return an answer, please do not perform any other tool calls than the "
    "final answer tool call!"
)


def _waiting_add(until: threading.Event) -> Any:
    """``add`` that returns only once ``until`` is set: the order of a step's parallel
    calls, told by the run's own events."""
    from smolagents import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: first number
            b: second number
        """
        until.wait(_WAIT)
        return a + b

    return add


@pytest.mark.parametrize("final_first", [False, True], ids=["answer-last", "answer-first"])
def test_A2_a_final_answer_given_beside_another_call_is_a_refused_call_followed_and_loaded(
    final_first: bool,
) -> None:
    """The model calls ``add`` and ``final_answer`` in one step: smolagents refuses the answer
    (``AgentExecutionError``) and the run goes on. The refused answer is a failed call (its
    error its result), not the run's final answer, followed and loaded; ``add``'s outcome is
    recorded nowhere (``unknown``). Its output is held until the refused answer's has arrived,
    so the followed run saw no output of it either."""
    answered = threading.Event()
    calls = [("add", {"a": 1, "b": 2}, "c1"), ("final_answer", {"answer": "refused"}, "c2")]
    agent = _agent(
        [
            _message("Both at once.", *(calls[::-1] if final_first else calls)),
            _message(None, ("final_answer", {"answer": "3"}, "c3")),
        ],
        [_waiting_add(answered)],
    )

    def on_event(event: Any) -> None:
        if type(event).__name__ == "ToolOutput" and event.is_final_answer:
            answered.set()

    live, loaded, raised = _followed_then_loaded(agent, on_event)
    assert raised is None
    assert type(agent.memory.steps[1].error).__name__ == "AgentExecutionError"
    assert _calls(live) == [("add", "unknown", None), ("final_answer", "error", _REFUSAL)]
    assert live.tool_calls()[1].args == {"answer": "refused"}
    assert _answers(live) == ["3"]
    assert not [e for e in live.entries if isinstance(e, SystemNotice)]
    assert _statuses(live) == _statuses(loaded) == ["completed"]
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


def test_A2_a_call_that_returned_before_the_refused_answer_keeps_its_output_followed() -> None:
    """The other call's output arrives first (the answer is held until the run has yielded
    it): followed, that ``ToolOutput`` showed its output (the follower keeps what each output
    said); smolagents' step records none of it, so the load says ``unknown``. The refused
    answer is the same failed call in both."""
    from smolagents.default_tools import FinalAnswerTool

    added = threading.Event()

    class LateFinalAnswer(FinalAnswerTool):  # type: ignore[misc]
        def forward(self, answer: Any) -> Any:
            added.wait(_WAIT)
            return answer

    agent = _agent(
        [
            _message(
                "Both.",
                ("add", {"a": 1, "b": 2}, "c1"),
                ("final_answer", {"answer": "refused"}, "c2"),
            ),
            _message(None, ("final_answer", {"answer": "3"}, "c3")),
        ],
        [smolagents_runs()._tools()[0], LateFinalAnswer()],
    )

    def on_event(event: Any) -> None:
        if type(event).__name__ == "ToolOutput" and event.id == "c1":
            added.set()

    live, loaded, _ = _followed_then_loaded(agent, on_event)
    refused = ("final_answer", "error", _REFUSAL)
    assert _calls(live) == [("add", "success", "3"), refused]
    assert _calls(loaded) == [("add", "unknown", None), refused]
    assert _answers(live) == _answers(loaded) == ["3"]


# --- 2. a streamed reply that is only code -------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "<code>\nprint(add(a=1, b=2))\n</code>",
        "Thought:\n<code>\nprint(add(a=1, b=2))\n</code>",
        '{"thought": "", "code": "print(add(a=1, b=2))"}',
    ],
    ids=["code-only", "label-only", "structured-empty-thought"],
)
def test_A2_a_streamed_reply_without_thought_shows_no_empty_thinking(reply: str) -> None:
    """A ``CodeAgent`` streams a reply whose thought is empty: no Thinking entry is made for
    it (the load has none), followed or loaded; the next step's thought streams as before."""
    options: dict[str, Any] = {}
    if reply.startswith("{"):
        options["use_structured_outputs_internally"] = True
    final = (
        '{"thought": "done.", "code": "final_answer(\'3\')"}'
        if options
        else "Thought: done.\n<code>\nfinal_answer('3')\n</code>"
    )
    agent = _agent([_message(reply), _message(final)], code=True, **options)
    live, loaded, raised = _followed_then_loaded(agent)
    assert raised is None
    thoughts = [e.text for e in live.entries if isinstance(e, Thinking)]
    assert thoughts == ["done."]
    assert [c.name for c in live.tool_calls()] == ["python", "python"]
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


def test_A2_a_streamed_thought_held_back_is_shown_before_its_step_s_call() -> None:
    """A ``ToolCallingAgent`` reply that opens with a code fence is held back while it
    streams (it could be code alone) and shown when the step's first call arrives, before
    that call, where the load places it."""
    agent = _agent(
        [
            _message("```\n1 + 2\n```\nLet me add.", ("add", {"a": 1, "b": 2}, "c1")),
            _message(None, ("final_answer", {"answer": "3"}, "c2")),
        ]
    )
    live, loaded, _ = _followed_then_loaded(agent)
    kinds = [type(e).__name__ for e in live.entries]
    assert kinds == ["UserMessage", "Thinking", "ToolCall", "AssistantText"]
    thought = live.entries[1]
    assert isinstance(thought, Thinking)
    assert thought.text == "```\n1 + 2\n```\nLet me add."
    assert live.entries == loaded.entries


# --- 3. Ctrl-C inside a tool ---------------------------------------------------------------


def _stop_tool() -> Any:
    from smolagents import tool

    @tool
    def stop(x: str) -> str:
        """Stands for a tool the user stops with Ctrl-C.

        Args:
            x: anything
        """
        raise KeyboardInterrupt

    return stop


@pytest.mark.parametrize("code", [False, True], ids=["tool-calling", "code"])
def test_A2_a_keyboard_interrupt_inside_a_tool_cancels_the_call_followed_and_loaded(
    code: bool,
) -> None:
    """Ctrl-C while a tool runs: the call was cancelled by the user (not a success with no
    result), and the run stopped at its step's end, followed and loaded where it raised."""
    first = (
        _message("Thought: stop.\n<code>\nstop(x='y')\n</code>")
        if code
        else _message("Stop.", ("stop", {"x": "y"}, "c1"))
    )
    agent = _agent([first], [_stop_tool()], code=code)
    live, loaded, raised = _followed_then_loaded(agent)
    assert isinstance(raised, KeyboardInterrupt)
    assert agent.memory.steps[-1].error is None  # smolagents records nothing of it
    name = "python" if code else "stop"
    assert _calls(live) == [(name, "cancelled", None)]
    marker = live.entries[-1]
    assert isinstance(marker, AbortMarker)
    assert marker.reason == "Interrupted by the user"
    assert marker.timestamp is not None
    assert _statuses(live) == _statuses(loaded) == ["stopped"]
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


def test_A1_without_the_interrupt_held_the_unfinished_call_s_outcome_is_unknown() -> None:
    """Loaded after the ``except`` block (nothing holds the ``KeyboardInterrupt`` any more),
    the step only says its call never returned: ``unknown`` (L-3), not a success."""
    agent = _agent([_message("Stop.", ("stop", {"x": "y"}, "c1"))], [_stop_tool()])
    with pytest.raises(KeyboardInterrupt):
        agent.run("stop", stream=False)
    transcript = turnfold.load(agent)
    assert _calls(transcript) == [("stop", "unknown", None)]
    assert not [e for e in transcript.entries if isinstance(e, AbortMarker)]


# --- 4. a model error while planning -------------------------------------------------------

_FAILURE = "rate limited: 429 Too Many Requests"


def _planning_failure(at: str, error: BaseException) -> list[Any]:
    if at == "first-plan":
        return [error]
    return [_message("1. add"), _message("a", ("add", {"a": 1, "b": 2}, "c1")), error]


@pytest.mark.parametrize("at", ["first-plan", "second-plan"])
@pytest.mark.parametrize("kind", [RuntimeError, KeyboardInterrupt], ids=["model-error", "ctrl-c"])
def test_A2_a_model_error_while_planning_ends_the_run_followed_and_loaded(
    at: str, kind: type[BaseException]
) -> None:
    """The plan's model call raises, unwrapped: followed and loaded where it raised, the run
    ends on that error (a Ctrl-C: stopped by the user), dated at the plan's start, after the
    task and the steps before it."""
    error = kind(_FAILURE) if kind is RuntimeError else kind()
    agent = _agent(_planning_failure(at, error), planning_interval=1)
    live, loaded, raised = _followed_then_loaded(agent)
    assert raised is error
    assert isinstance(live.entries[0], UserMessage)
    last = live.entries[-1]
    if isinstance(error, KeyboardInterrupt):
        assert isinstance(last, AbortMarker)
        assert last.reason == "Interrupted by the user"
        assert _statuses(live) == _statuses(loaded) == ["stopped"]
    else:
        assert isinstance(last, AssistantError)
        assert last.message == f"RuntimeError: {_FAILURE}"
        assert _statuses(live) == _statuses(loaded) == ["failed"]
    assert last.timestamp is not None
    steps = agent.memory.steps
    if at == "second-plan":
        assert _calls(live) == [("add", "success", "3")]
        assert len(steps) == 3  # the task, the first plan, the first action: no failed step
        # The second plan's start, after the first action ended (not the first plan's).
        action_end = datetime.fromtimestamp(steps[2].timing.end_time, tz=timezone.utc)
        assert last.timestamp >= action_end.isoformat()
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


def test_A1_another_agent_s_planning_error_is_not_this_run_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a notebook the error a cell reported last (``sys.last_value``) is a run's only when
    it left that very agent's plan: a second agent whose plan failed the same way is not
    given the first one's error."""
    errors: list[BaseException] = []
    agents = [_agent([RuntimeError(_FAILURE)], planning_interval=1) for _ in range(2)]
    for agent in agents:
        try:
            agent.run("add 1 and 2")
        except RuntimeError as raised:
            errors.append(raised)
    monkeypatch.setattr(sys, "last_value", errors[0], raising=False)
    monkeypatch.setattr(sys, "last_exc", errors[0], raising=False)
    mine, other = (turnfold.load(agent) for agent in agents)
    assert isinstance(mine.entries[-1], AssistantError)
    assert isinstance(turnfold.load(agents[0].memory).entries[-1], AssistantError)
    assert [type(e).__name__ for e in other.entries] == ["UserMessage"]
