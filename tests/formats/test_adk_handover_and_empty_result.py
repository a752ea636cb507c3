"""Google ADK (google-adk 2.13.0, installed): real runs on a scripted model (no network), read
from their session and from their trace alike (spec A-1, H-4, L-3).

- A tool's return as the ADK answers the model with it (google/adk/flows/llm_flows/tools/
  _caller.py, ``_build_function_response_content``): a dict as it is, anything else wrapped as
  ``{"result": value}``. ``{}`` is an empty object the tool returned: both readers show it;
  ``{"result": None}`` (a tool that returned ``None``) is a result with no text, never "no
  output recorded"; media the tool returned go into the function response's ``parts``, its
  response then ``{}``: the session shows them as the result, not ``{}``.
- A handover (``transfer_to_agent`` to a sub-agent): in ADK's telemetry schema 1 every agent of
  the run is an ``invoke_agent`` span under the runner's ``invocation`` span, which has no
  attribute, so each read as a run of the session of its own. It reads as the session does:
  one run, the ``transfer_to_agent`` call holding the other agent's steps, the last agent's
  answer at the top level; the ADK's "For context:" restatements of the other agents' steps in
  each request are not the user speaking.

Spans are captured with opentelemetry-sdk's in-memory exporter on the global tracer provider
ADK's tracer sends to, as the other ADK trace tests do (``_global_spans``), and written as the
OTLP JSON file exporters write them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import adk_runs
from tests.formats.loops import run_async
from tests.formats.test_otlp import _request_line, outline
from tests.formats.test_otlp_own_tracers import _global_spans
from turnfold.model import ToolCall, Transcript, UserMessage
from turnfold.usage import transcript_tokens

pytest.importorskip("google.adk")

APP, USER = adk_runs.APP, adk_runs.USER
#: A PNG of one pixel, what ``picture`` returns.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def empty() -> dict[str, Any]:
    """The service's status: nothing to report."""
    return {}


def nothing() -> None:
    """Does its work and returns nothing."""


def five() -> int:
    """Five."""
    return 5


def blank() -> str:
    """An empty text."""
    return ""


def picture() -> Any:
    """A picture."""
    from google.genai import types

    return types.Part.from_bytes(data=PNG, mime_type="image/png")


def report() -> Any:
    """A report, as a file."""
    from google.genai import types

    return types.Part.from_uri(file_uri="gs://b/report.pdf", mime_type="application/pdf")


def _agent(name: str, replies: list[list[Any]], tools: list[Any], **more: Any) -> Any:
    """An ``LlmAgent`` on the scripted model, whose calls carry no id, as Gemini's do."""
    from google.adk.agents import LlmAgent

    return LlmAgent(name=name, model=adk_runs._scripted(replies, 10), tools=tools, **more)


def _session(agent: Any, prompts: tuple[str, ...], service: Any = None) -> Any:
    """``agent`` run on ``prompts`` (a turn each) by a ``Runner`` on ``service`` (in memory
    by default); the session as the service gives it back."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    async def main() -> Any:
        sessions = service or InMemorySessionService()
        runner = Runner(agent=agent, app_name=APP, session_service=sessions)
        session = await sessions.create_session(app_name=APP, user_id=USER)
        for prompt in prompts:
            message = types.Content(role="user", parts=[types.Part(text=prompt)])
            async for _ in runner.run_async(
                user_id=USER, session_id=session.id, new_message=message
            ):
                pass
        return await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)

    return run_async(main())


def returns_run(service: Any = None) -> Any:
    """``calc`` calls four tools in one response: ``empty`` returns ``{}``, ``nothing``
    ``None``, ``five`` 5, ``blank`` ``""``; then answers."""
    calls = [(name, {}, None) for name in ("empty", "nothing", "five", "blank")]
    calc = _agent("calc", [calls, ["TF-DONE"]], [empty, nothing, five, blank])
    return _session(calc, ("Check everything.",), service)


def handover_agent(*, writer_raises: bool = False) -> Any:
    """``calc`` calls ``five``, then hands over to its sub-agent ``writer``, which calls
    ``five`` (or ``explode``, which raises) and answers, and answers the next turn too (the
    ADK keeps the agent handed to in control)."""
    first = ("explode", {"x": "y"}, None) if writer_raises else ("five", {}, None)
    writer = _agent("writer", [[first], ["TF-WRITTEN"], ["TF-AGAIN"]],
                    [five, adk_runs.explode], description="Writes the answer.")  # fmt: skip
    handing = ["Handing over.", ("transfer_to_agent", {"agent_name": "writer"}, None)]
    return _agent("calc", [[("five", {}, None)], handing], [five], sub_agents=[writer])


@functools.cache
def _exporter() -> Any:
    return _global_spans()  # one in-memory exporter for this module's runs


def traced(
    run: Callable[[], Any], path: Path, monkeypatch: pytest.MonkeyPatch, schema: str = "1", *,
    content: bool = True,
) -> tuple[Any, Transcript, list[Any]]:  # fmt: skip
    """``run()`` traced by ADK's own tracer in telemetry ``schema``, its message content
    captured on the spans or not (schema 1's switch is ADK's own, schema 2's the GenAI
    conventions'), written to ``path``: what ``run()`` returned, the trace loaded, the spans."""
    monkeypatch.setenv("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", schema)
    monkeypatch.setenv("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS", "true" if content else "false")
    monkeypatch.setenv(
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        "SPAN_ONLY" if content else "NO_CONTENT",
    )
    exporter = _exporter()
    exporter.clear()
    try:
        returned = run()
        spans = list(exporter.get_finished_spans())
        path.write_text(_request_line(exporter), encoding="utf-8")
    finally:
        exporter.clear()
    return returned, turnfold.load(path), spans


def _responses(session: Any) -> dict[str, Any]:
    """Each function response of the session by its tool's name: what the ADK wrote."""
    return {
        part.function_response.name: part.function_response
        for event in session.events
        for part in (event.content.parts or [] if event.content else [])
        if part.function_response is not None
    }


def _results(transcript: Transcript) -> list[tuple[str, Any]]:
    """Each call's name and result text; ``"(none)"`` where it has no result at all."""
    return [
        (call.name, call.result.text if call.result is not None else "(none)")
        for call in transcript.tool_calls()
    ]


def _user_texts(transcript: Transcript) -> list[str]:
    """The user's messages at every level, sub-agents' included."""
    found, todo = [], [transcript]
    while todo:
        current = todo.pop()
        found += [e.text for e in current.entries if isinstance(e, UserMessage)]
        todo += [c.subagent.transcript for c in current.tool_calls()
                 if c.subagent is not None and c.subagent.transcript is not None]  # fmt: skip
    return found


# --- a tool's return: {} an empty object, None no text ---------------------------------------


@pytest.mark.parametrize("schema", ["1", "2"])
def test_A1_H4_a_tool_s_empty_object_is_its_result_in_the_session_and_the_trace(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that returned ``{}`` finished and returned an empty object: the session shows
    ``{}`` as the trace does (it showed no result). ``None`` is ``{"result": null}`` in both:
    a result with no text in both (the trace showed it as ``null``, as ``""``, or, where no
    later request repeated it, as no result: "No output recorded")."""
    session, trace, _ = traced(returns_run, tmp_path / "returns.jsonl", monkeypatch,
                               schema=schema)  # fmt: skip
    responses = {name: r.response for name, r in _responses(session).items()}
    assert responses == {  # the premise: what the ADK wrote
        "empty": {}, "nothing": {"result": None}, "five": {"result": 5}, "blank": {"result": ""}
    }  # fmt: skip
    expected = [("empty", "{}"), ("nothing", None), ("five", "5"), ("blank", "")]
    loaded = turnfold.load(session)
    assert _results(loaded) == expected
    assert _results(trace) == expected
    assert outline(trace) == outline(loaded)
    assert trace.warnings == loaded.warnings == []


def test_A1_the_database_session_service_shows_an_empty_object_too(tmp_path: Path) -> None:
    """The same run stored by ``DatabaseSessionService`` (SQLite) reads as the session does:
    the database reader reads its events by the session reader's rules."""
    from google.adk.sessions import DatabaseSessionService

    database = tmp_path / "sessions.db"

    async def close(service: Any) -> None:
        await service.close()

    service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{database}")
    session = returns_run(service)
    run_async(close(service))
    stored = turnfold.load(database)
    assert _results(stored) == [("empty", "{}"), ("nothing", None), ("five", "5"), ("blank", "")]
    assert outline(stored) == outline(turnfold.load(session))


def test_A1_media_a_tool_returned_is_its_result_not_an_empty_object() -> None:
    """A tool that returns only media (a ``Part`` of bytes or of a file's URI): the ADK moves
    it into the function response's ``parts``, its ``response`` left ``{}``. The result is the
    image, and a line naming the file (never fetched), not ``{}``."""
    calc = _agent("calc", [[("picture", {}, None), ("report", {}, None)], ["TF-DONE"]],
                  [picture, report])  # fmt: skip
    session = _session(calc, ("Show me.",))
    responses = _responses(session)
    assert responses["picture"].response == responses["report"].response == {}  # the premise
    assert responses["picture"].parts[0].inline_data.data == PNG
    shown, named = turnfold.load(session).tool_calls()
    assert shown.result is not None
    assert shown.result.text is None
    assert [image.media_type for image in shown.result.images] == ["image/png"]
    assert named.result is not None
    assert named.result.images == []
    assert named.result.text == "[attachment: gs://b/report.pdf · application/pdf]"


# --- a handover: one run, as the session reads it ----------------------------------------------


def test_H4_adk_schema_1_handover_reads_as_one_run_as_its_session_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In schema 1 both agents' spans sit in the runner's ``invocation`` span, which has no
    attribute (the premise); their model spans name one invocation. The trace reads as the
    session: the prompt once, ``calc``'s steps, the ``transfer_to_agent`` call holding
    ``writer``'s (its history, the session's, not repeated in it), ``writer``'s answer at the
    top level; every span read, each response's tokens once."""
    session, trace, spans = traced(lambda: _session(handover_agent(), ("go",)),
                                   tmp_path / "handover.jsonl", monkeypatch)  # fmt: skip
    [invocation] = [s for s in spans if s.name == "invocation"]
    agents = [s for s in spans if s.name.startswith("invoke_agent ")]
    assert not invocation.attributes
    assert sorted(s.name for s in agents) == ["invoke_agent calc", "invoke_agent writer"]
    assert all(s.parent.span_id == invocation.context.span_id for s in agents)
    ran_in = {s.attributes["gcp.vertex.agent.invocation_id"] for s in spans if s.name == "call_llm"}
    assert len(ran_in) == 1

    loaded = turnfold.load(session)
    assert outline(trace) == outline(loaded)
    assert outline(trace) == [
        ("user", "go"),
        ("call", "five", {}, "success", "5", None),
        ("text", "Handing over."),
        ("call", "transfer_to_agent", {"agent_name": "writer"}, "success", None,
         [("call", "five", {}, "success", "5", None)]),
        ("text", "TF-WRITTEN"),
    ]  # fmt: skip
    transfer = next(c for c in trace.tool_calls() if c.name == "transfer_to_agent")
    assert transfer.subagent is not None
    assert transfer.subagent.name == "writer"
    assert transfer.result is not None  # it returned None: a result, no text
    assert trace.metadata["agent"] == "calc"
    assert "outcome" not in trace.metadata
    assert trace.warnings == []
    assert trace.accounting is not None
    assert trace.accounting.unaccounted == []
    assert transcript_tokens(trace) == transcript_tokens(loaded)
    assert transcript_tokens(trace).combined == {
        "input_tokens": 40,
        "output_tokens": 20,
        "cache_read_tokens": 8,
    }  # four responses


@pytest.mark.parametrize("content", [True, False], ids=["content", "no-content"])
def test_H4_adk_schema_1_handover_chain_nests_as_its_session_does(
    content: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``triage`` hands over to ``billing``, which hands over to ``refunds``, which hands back
    to ``billing``, which answers: four agent spans side by side. As in the session, ``billing``
    is under ``triage``'s call, ``refunds`` under ``billing``'s, ``billing``'s run goes on after
    the handback and its answer is the turn's. Without content (the calls' arguments not
    captured) the same shape: the run's next agent is the one handed to."""
    session, trace, spans = traced(lambda: adk_runs.handoff_run()[0], tmp_path / "chain.jsonl",
                                   monkeypatch, content=content)  # fmt: skip
    names = [s.name for s in sorted(spans, key=lambda s: s.start_time)]
    assert [n for n in names if n.startswith("invoke_agent")] == [
        "invoke_agent triage", "invoke_agent billing", "invoke_agent refunds",
        "invoke_agent billing",
    ]  # fmt: skip
    expected = outline(turnfold.load(session))
    if content:
        assert outline(trace) == expected
        assert trace.warnings == []
    else:
        assert _shape(outline(trace)) == _shape(expected)
        assert "no message content" in trace.warnings[0].reason
    assert trace.metadata["agent"] == "triage"


def _shape(rows: list[tuple[Any, ...]]) -> list[Any]:
    """The calls of an outline by name, each with the shape of its sub-agent's."""
    return [(row[1], _shape(row[5]) if row[5] is not None else None)
            for row in rows if row[0] == "call"]  # fmt: skip


def test_H4_adk_next_turn_after_a_handover_has_no_relayed_steps_as_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next turn ``writer`` answers (the ADK keeps it in control): its request holds
    ``calc``'s steps as the ADK relays them ("For context: … [calc] called tool …", as the
    user), and its own first answer. Neither is shown again: the second turn is the user's
    message and the answer, as in the session."""
    session, trace, spans = traced(lambda: _session(handover_agent(), ("go", "again")),
                                   tmp_path / "turns.jsonl", monkeypatch)  # fmt: skip
    models = sorted((s for s in spans if s.name == "call_llm"), key=lambda s: s.start_time)
    last = models[-1].attributes["gcp.vertex.agent.llm_request"]
    assert "For context:" in last
    assert "[calc] called tool" in last
    assert outline(trace) == outline(turnfold.load(session))
    assert _user_texts(trace) == ["go", "again"]


def test_H4_adk_relayed_steps_of_an_agent_the_trace_lacks_are_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is lost: in a file holding only the second turn's trace, ``calc`` has no span,
    and the ADK's restatement of its steps is the only record of them: shown as the ADK
    relayed them, in the history of ``writer``'s request."""
    _, _, spans = traced(lambda: _session(handover_agent(), ("go", "again")),
                         tmp_path / "turns.jsonl", monkeypatch)  # fmt: skip
    last = max(spans, key=lambda s: s.start_time).context.trace_id
    exporter = _Spans([s for s in spans if s.context.trace_id == last])
    path = tmp_path / "second-turn.jsonl"
    path.write_text(_request_line(exporter), encoding="utf-8")
    texts = _user_texts(turnfold.load(path))
    relayed = [t for t in texts if t.startswith("For context:")]
    assert relayed
    assert all("[calc]" in t for t in relayed)
    assert texts[0] == "go"
    assert texts[-1] == "again"


class _Spans:
    """Spans as the in-memory exporter gives them, for :func:`_request_line`."""

    def __init__(self, spans: list[Any]) -> None:
        self.spans = spans

    def get_finished_spans(self) -> list[Any]:
        return self.spans


def test_H4_adk_a_failure_after_a_handover_is_the_run_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``writer``'s tool raises and the ADK raises it out of the run: its agent span failed.
    The handover is the session's run going on, so the session's outcome is an error, the
    failed call in ``writer``'s steps under the handover."""

    def run() -> Any:
        with contextlib.suppress(ValueError):  # the tool's exception, raised out of the run
            _session(handover_agent(writer_raises=True), ("go",))

    _, trace, spans = traced(run, tmp_path / "raised.jsonl", monkeypatch)
    [writer] = [s for s in spans if s.name == "invoke_agent writer"]
    assert not writer.status.is_ok  # the premise
    assert trace.metadata["outcome"] == "error"
    transfer = next(c for c in trace.tool_calls() if c.name == "transfer_to_agent")
    assert transfer.subagent is not None
    assert transfer.subagent.transcript is not None
    [explode] = transfer.subagent.transcript.tool_calls()
    assert (explode.name, explode.status) == ("explode", "error")
    assert isinstance(explode, ToolCall)
