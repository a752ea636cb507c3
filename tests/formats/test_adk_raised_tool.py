"""A Google ADK run whose tool raised, read from its trace as from its session (spec H-4, H-6,
L-3): the failed call once, with its error, and the run's outcome ``"error"`` in both.

No ``on_tool_error_callback`` answers the exception, so the ADK raises it out of
``Runner.run_async`` (google/adk/flows/llm_flows/tools/_caller.py 2.13.0, ``_run_with_trace``:
``raise tool_error``). Its tool span is then traced with no function response event
(``trace_tool_call`` in google/adk/telemetry/tracing.py): it writes ``"<not specified>"`` as the
call's id (``gen_ai.tool.call.id``), not the id of the call the model asked for. Where that call
had an id of its own (the model's), the trace reader showed the call twice: the model's, of
unknown outcome, and the span's, failed. Where it had none (Gemini's), the placeholder became
its id, one id for every call that raised.

The runs are real ADK runs (google-adk 2.13.0, installed) on the scripted model of the other
ADK tests (no network), in both of its telemetry schemas, content captured or not, their spans
captured with opentelemetry-sdk's in-memory exporter (``traced``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import adk_runs
from tests.formats.test_adk_handover_and_empty_result import _agent, five
from tests.formats.test_adk_handover_schemas import SCHEMAS, _turns, traced
from tests.formats.test_adk_run_end import RAISES, asked_again, raised_events
from tests.formats.test_otlp import outline
from turnfold.model import AssistantError, Transcript

FIXTURES = Path(__file__).parent.parent / "fixtures" / "frameworks" / "adk"
#: A real run whose tool raised (``adk_runs.raising_run``), its events.
#: A real run whose ``explode`` failed through ``on_tool_error_callback`` and went on.
WENT_ON = FIXTURES / "adk_v2.13.0_session_subagents.json"
#: What ADK's tool span writes as the call id without a function response.
UNSPECIFIED = "<not specified>"


def _raising_agent(call_id: str | None) -> Any:
    """``calc`` calls ``explode``, which raises; ``call_id`` is the id the model gives the
    call (None: none, as Gemini gives)."""
    return _agent("calc", [[("explode", {"x": "y"}, call_id)], ["never said"]],
                  [adk_runs.explode])  # fmt: skip


def _tool_spans(spans: list[Any], name: str) -> list[Any]:
    return [s for s in spans if s.name == f"execute_tool {name}"]


@pytest.mark.parametrize("content", [True, False], ids=["content", "no-content"])
@pytest.mark.parametrize("call_id", ["r_1", None], ids=["model-id", "no-id"])
@pytest.mark.parametrize("schema", SCHEMAS)
def test_H4_adk_a_tool_that_raised_is_one_failed_call_in_its_trace_as_in_its_session(
    schema: str, call_id: str | None, content: bool, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The tool span names no call (the premise: ADK's placeholder id, no event id, failed);
    the trace shows the model's call once, failed with the exception, as the session does
    (the call and its status; its arguments where content was captured), the run ending on
    the error, its outcome ``"error"`` in both readers."""
    (session, raised), trace, spans = traced(
        lambda: _turns(_raising_agent(call_id), ("go",)), tmp_path / "raised.jsonl",
        monkeypatch, schema, content=content,
    )  # fmt: skip
    assert str(raised) == "boom: y"
    [tool] = _tool_spans(spans, "explode")
    assert tool.attributes["gen_ai.tool.call.id"] == UNSPECIFIED
    assert "gcp.vertex.agent.event_id" not in tool.attributes
    assert not tool.status.is_ok
    loaded = turnfold.load(session)

    [call] = trace.tool_calls(nested=True)
    assert (call.name, call.status) == ("explode", "error")
    assert call.result is not None
    assert call.result.text == "ValueError: boom: y"
    assert call.call_id != UNSPECIFIED
    assert call.args == ({"x": "y"} if content else None)
    [read] = loaded.tool_calls(nested=True)
    assert (read.name, read.status) == (call.name, call.status)
    assert isinstance(trace.entries[-1], AssistantError)
    assert trace.entries[-1].message == "ValueError: boom: y"
    if content:
        # Each reader words the run's end its own way (the session's names the tool).
        assert outline(trace)[:-1] == outline(loaded)[:-1]
        assert trace.warnings == []
    else:
        assert [w.reason for w in trace.warnings] == [
            "the trace records no message content (its instrumentation's content capture was "
            "off): prompts, the model's texts and most tool arguments and results are not in it"
        ]
    assert trace.metadata["outcome"] == loaded.metadata["outcome"] == "error"


@pytest.mark.parametrize("call_ids", [("f_1", "r_1", "r_2"), (None, None, None)],
                         ids=["model-ids", "no-ids"])  # fmt: skip
@pytest.mark.parametrize("schema", SCHEMAS)
def test_H4_adk_calls_that_raised_side_by_side_are_each_their_own_call(
    schema: str, call_ids: tuple[str | None, ...], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """One response asks for ``five`` and ``explode`` twice; the ADK runs them side by side and
    both ``explode`` raise, each span naming no call (the premise). Each is the run of the
    call of its arguments, with its own exception, not one call holding both (without ids the
    placeholder was the id of both) nor a call of unknown outcome beside each."""
    calls = [("five", {}, call_ids[0]), ("explode", {"x": "y"}, call_ids[1]),
             ("explode", {"x": "z"}, call_ids[2])]  # fmt: skip
    calc = _agent("calc", [calls, ["never said"]], [adk_runs.explode, five])
    (session, raised), trace, spans = traced(
        lambda: _turns(calc, ("go",)), tmp_path / "raised.jsonl", monkeypatch, schema
    )
    assert raised is not None
    failed = _tool_spans(spans, "explode")
    assert [s.attributes["gen_ai.tool.call.id"] for s in failed] == [UNSPECIFIED] * 2
    shown = [(c.name, c.args, c.status, c.result.text if c.result else None)
             for c in trace.tool_calls(nested=True)]  # fmt: skip
    assert shown == [
        ("five", {}, "success", "5"),
        ("explode", {"x": "y"}, "error", "ValueError: boom: y"),
        ("explode", {"x": "z"}, "error", "ValueError: boom: z"),
    ]
    loaded = turnfold.load(session)
    assert [(c.name, c.args, c.status) for c in loaded.tool_calls(nested=True)] == [
        row[:3] for row in shown
    ]
    assert trace.warnings == []
    assert trace.metadata["outcome"] == loaded.metadata["outcome"] == "error"


# --- the session reader's outcome --------------------------------------------------------------


def test_H6_adk_a_session_whose_run_raised_has_the_outcome_error() -> None:
    """The committed run whose tool raised: the exception left ``run_async`` (the session
    ends on its error event, nothing of the invocation after it), so the run errored."""
    transcript = turnfold.load(RAISES)
    assert transcript.metadata["outcome"] == "error"
    assert transcript.warnings == []


def test_H6_adk_a_run_that_raised_then_a_next_run_keeps_the_outcome_error() -> None:
    """The user asks again (a new invocation) and the next run answers: the session still
    holds a run that errored, as its trace's failed agent span says (the trace reader's
    outcome is ``"error"`` where any of its runs failed)."""
    transcript = turnfold.load(asked_again(raised_events()))
    assert transcript.metadata["outcome"] == "error"


def _went_on(events: list[dict[str, Any]]) -> Transcript:
    """``events`` with the model answering after the error event, in the same invocation (the
    node retried: ``workflow/_node_runner.py``, a ``retry_config``): nothing was raised."""
    answer = copy.deepcopy(events[3])
    answer["content"]["parts"] = [{"text": "explode failed; 1+2=3."}]
    answer.update(id="answer", timestamp=answer["timestamp"] + 1)
    return turnfold.load([*events, answer])


@pytest.mark.parametrize("source", ["retried", "error-callback"])
def test_H6_adk_a_run_that_went_on_after_a_tool_s_error_has_no_outcome(source: str) -> None:
    """A failed call alone is no failed run: retried after the error, or answered by
    ``on_tool_error_callback`` (the committed run), the run went on and raised nothing."""
    transcript = _went_on(raised_events()) if source == "retried" else turnfold.load(WENT_ON)
    assert any(c.status == "error" for c in transcript.tool_calls())
    assert "outcome" not in transcript.metadata


def test_H6_adk_a_followed_run_that_raised_has_the_outcome_of_its_load() -> None:
    """Followed (``turnfold.follow`` on ``run_async``), the run whose tool raised ends with the
    outcome a load of its session gives."""
    pytest.importorskip("google.adk")
    (session, _, failure), live = adk_runs.followed(adk_runs.raising_run)
    assert isinstance(failure, ValueError)
    assert live.metadata["outcome"] == turnfold.load(session).metadata["outcome"] == "error"
