"""Google ADK handovers read alike in every trace schema (spec H-4, A-1): a run in which an
agent hands the conversation to another (``transfer_to_agent``) reads from its trace as the ADK
reader reads its session: the turns, who answered, the ``transfer_to_agent`` call holding the
other agent's steps, no made-up ``invoke_agent`` call, no answer shown twice, none of the ADK's
"For context: … [calc] called tool …" restatements as the user speaking, and a run that raised
in the agent handed to ending on that error at the top level.

Each schema traces the agent handed to somewhere else
(:mod:`turnfold.formats.traces.adk_handovers`):

- ADK 2.13's schema 1: every agent span a root (the runner's ``invocation`` span, which has no
  attribute, left out);
- its schema 2 (the default): the agent spans side by side in the runner's ``invoke_workflow``
  span;
- ADK 1.x's own tracer (``agent_run [<name>]``) and OpenInference's ADK instrumentor: the agent
  handed to inside the model span of the response that asked for the transfer. Those are the
  committed 1.15.0 fixtures (made with a real ADK 1.15.0 by
  ``tests/fixtures/traces/otlp/google-adk_delegation_recipe.py``), read against the session of
  the same recipe run by the installed ADK.

The 2.x runs are real ADK runs (google-adk 2.13.0, installed) on the scripted model of the other
ADK tests (no network), their spans captured from ADK's own tracer with opentelemetry-sdk's
in-memory exporter and written as the OTLP JSON file exporters write them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import adk_runs
from tests.formats.loops import run_async
from tests.formats.recipes import recipe
from tests.formats.test_adk_handover_and_empty_result import (
    _user_texts,
    handover_agent,
    traced,
)
from tests.formats.test_otlp import FIXTURES, outline
from turnfold.model import AssistantError, ToolCall, Transcript
from turnfold.usage import transcript_tokens

pytest.importorskip("google.adk")

APP, USER = adk_runs.APP, adk_runs.USER
SCHEMAS = ["1", "2"]
RECIPE = recipe(FIXTURES / "google-adk_delegation_recipe.py")
#: The committed ADK 1.15.0 traces of the recipe's run: its own tracer's, OpenInference's.
V1_TRACES = {"adk-1.15": RECIPE.FIXTURE, "openinference": RECIPE.OPENINFERENCE_FIXTURE}
#: Where ADK's tool spans write a call's arguments: schema 1 (``trace_tool_call``), schema 2.
ARGUMENTS = ("gcp.vertex.agent.tool_call_args", "gen_ai.tool.call.arguments")


def _turns(agent: Any, prompts: tuple[str, ...]) -> tuple[Any, BaseException | None]:
    """``agent`` run on ``prompts`` (a turn each) by a ``Runner`` in memory: the session as the
    service gives it back, even after a run that raised, and the exception raised, if any."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    async def main() -> tuple[Any, BaseException | None]:
        sessions = InMemorySessionService()
        runner = Runner(agent=agent, app_name=APP, session_service=sessions)
        session = await sessions.create_session(app_name=APP, user_id=USER)
        raised = None
        try:
            for prompt in prompts:
                message = types.Content(role="user", parts=[types.Part(text=prompt)])
                async for _ in runner.run_async(
                    user_id=USER, session_id=session.id, new_message=message
                ):
                    pass
        except ValueError as error:  # a tool's exception, which the ADK raises out of the run
            raised = error
        stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)
        return stored, raised

    return run_async(main())


def _made_up_calls(transcript: Transcript) -> list[ToolCall]:
    """The calls the trace reader makes for an agent span no call ran, at every level."""
    return [c for c in transcript.tool_calls(nested=True) if c.name == "invoke_agent"]


def _texts(rows: list[tuple[Any, ...]]) -> list[str]:
    """The assistant texts of an outline, at every level."""
    found: list[str] = []
    for row in rows:
        if row[0] == "text":
            found.append(row[1])
        elif row[0] == "call" and row[5] is not None:
            found += _texts(row[5])
    return found


def _shape(rows: list[tuple[Any, ...]]) -> list[Any]:
    """The calls of an outline by name, each with the shape of its sub-agent's."""
    return [(row[1], _shape(row[5]) if row[5] is not None else None)
            for row in rows if row[0] == "call"]  # fmt: skip


def _premise(spans: list[Any], schema: str) -> None:
    """How the schema traces the handover: the agent spans side by side, in the runner's
    ``invocation`` span (schema 1, no attribute: left out) or its ``invoke_workflow`` span
    (schema 2); the agents' model spans of a turn name one invocation."""
    outer = "invocation" if schema == "1" else "invoke_workflow"
    holders = {s.context.span_id: s for s in spans if s.name.split(" ")[0] == outer}
    agents = [s for s in spans if s.name.startswith("invoke_agent ")]
    assert agents
    assert all(s.parent is not None and s.parent.span_id in holders for s in agents)
    if schema == "1":
        assert not any(s.attributes for s in holders.values())
    by_trace: dict[int, set[str]] = {}
    for span in spans:
        invocation = span.attributes.get("gcp.vertex.agent.invocation_id")
        if invocation:
            by_trace.setdefault(span.context.trace_id, set()).add(invocation)
    assert all(len(ids) == 1 for ids in by_trace.values())


# --- ADK 2.13: schema 1 and schema 2 -----------------------------------------------------------


@pytest.mark.parametrize("schema", SCHEMAS)
def test_H4_adk_handover_reads_as_its_session_in_each_schema(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``calc`` calls ``five``, hands over to ``writer``, which calls ``five`` and answers; the
    next turn ``writer`` answers (the ADK keeps it in control). Read from its trace, in either
    schema, the run is its session's: ``writer``'s steps under the ``transfer_to_agent`` call,
    its answer once (schema 2 made up an ``invoke_agent`` call after the transfer and showed
    the answer again in the next turn, whose request repeats it), each response's tokens
    once, every span read."""
    (session, _), trace, spans = traced(
        lambda: _turns(handover_agent(), ("go", "again")), tmp_path / "turns.jsonl",
        monkeypatch, schema,
    )  # fmt: skip
    _premise(spans, schema)
    loaded = turnfold.load(session)
    assert outline(trace) == outline(loaded)
    assert outline(trace) == [
        ("user", "go"),
        ("call", "five", {}, "success", "5", None),
        ("text", "Handing over."),
        ("call", "transfer_to_agent", {"agent_name": "writer"}, "success", None,
         [("call", "five", {}, "success", "5", None)]),
        ("text", "TF-WRITTEN"),
        ("user", "again"),
        ("text", "TF-AGAIN"),
    ]  # fmt: skip
    [transfer] = [c for c in trace.tool_calls() if c.name == "transfer_to_agent"]
    assert transfer.subagent is not None
    assert transfer.subagent.name == "writer"
    assert _made_up_calls(trace) == []
    assert _user_texts(trace) == ["go", "again"]
    assert trace.metadata["agent"] == loaded.metadata["agent"] == "calc"
    assert "outcome" not in trace.metadata
    assert trace.warnings == []
    assert trace.accounting is not None
    assert trace.accounting.unaccounted == []
    assert transcript_tokens(trace) == transcript_tokens(loaded)


def test_H4_adk_schema_2_next_turn_does_not_repeat_the_answer_of_the_agent_handed_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Schema 2: the next turn's run is ``writer``'s (its ``invoke_workflow`` span names it),
    and its request holds ``writer``'s first answer, as history: that answer is shown once, at
    the end of the first turn."""
    _, trace, spans = traced(
        lambda: _turns(handover_agent(), ("go", "again")), tmp_path / "turns.jsonl",
        monkeypatch, "2",
    )  # fmt: skip
    workflows = sorted((s for s in spans if s.name.startswith("invoke_workflow")),
                       key=lambda s: s.start_time)  # fmt: skip
    assert [s.name for s in workflows] == ["invoke_workflow calc", "invoke_workflow writer"]
    last = max((s for s in spans if s.name.startswith("generate_content")),
               key=lambda s: s.start_time)  # fmt: skip
    assert "TF-WRITTEN" in last.attributes["gen_ai.input.messages"]  # the premise
    assert _texts(outline(trace)).count("TF-WRITTEN") == 1


@pytest.mark.parametrize("schema", SCHEMAS)
def test_H4_adk_handover_chain_and_handback_read_as_the_session_in_each_schema(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``triage`` hands over to ``billing``, which hands over to ``refunds``, which hands back to
    ``billing``, which answers: ``refunds`` under ``billing``'s call, ``billing``'s run going
    on after the handback, its answer the turn's. The scripted model gives its calls ids of
    its own (``b_1``): schema 2 writes a response's id without its tool's name, in the shape
    of the ids it makes up (``<tool>_<index>``), which a call of that id in the history tells
    apart (a call ``b`` was made up of it)."""
    session, trace, spans = traced(lambda: adk_runs.handoff_run()[0], tmp_path / "chain.jsonl",
                                   monkeypatch, schema)  # fmt: skip
    _premise(spans, schema)
    if schema == "2":
        parts = [
            part
            for s in spans
            for message in json.loads(s.attributes.get("gen_ai.input.messages", "[]"))
            for part in message["parts"]
        ]
        [answered] = [p for p in parts if p["type"] == "tool_call_response" and p["id"] == "b_1"
                      and p["response"] == {"result": 2}][:1]  # fmt: skip
        assert "name" not in answered  # the premise
    assert outline(trace) == outline(turnfold.load(session))
    assert _made_up_calls(trace) == []
    assert trace.metadata["agent"] == "triage"
    assert trace.warnings == []


@pytest.mark.parametrize("schema", SCHEMAS)
def test_H4_adk_handover_without_content_has_the_session_s_shape(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Content not captured: the ``transfer_to_agent`` spans name no agent, and the chain
    nests as the session's all the same (the invocation's next agent is the one handed to),
    the load saying what the trace lacks."""
    session, trace, spans = traced(lambda: adk_runs.handoff_run()[0], tmp_path / "chain.jsonl",
                                   monkeypatch, schema, content=False)  # fmt: skip
    transfers = [s for s in spans if s.name == "execute_tool transfer_to_agent"]
    assert len(transfers) == 3
    # The premise: no arguments written (schema 1's placeholder "{}", schema 2's none).
    written = {s.attributes.get(k) for s in transfers for k in ARGUMENTS}
    assert written <= {None, "{}"}
    assert _shape(outline(trace)) == _shape(outline(turnfold.load(session)))
    assert _made_up_calls(trace) == []
    assert "no message content" in trace.warnings[0].reason


@pytest.mark.parametrize("schema", SCHEMAS)
def test_H4_adk_run_that_raised_in_the_agent_handed_to_ends_on_the_error_at_the_top(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``writer``'s tool raises, and the ADK raises it out of the run. The session reader says
    the run ended on it at the top level, where the turn's outcome is read; so does the trace,
    in either schema: the failed call in ``writer``'s steps, the error once, after the call,
    not in ``writer``'s fold (schema 2's ``invoke_workflow`` span, failed too, said it at the
    top as well). Each reader words the error its own way: the session's names the tool from
    the ADK's error event, the trace's is the exception its spans recorded."""
    (session, raised), trace, spans = traced(
        lambda: _turns(handover_agent(writer_raises=True), ("go",)), tmp_path / "raised.jsonl",
        monkeypatch, schema,
    )  # fmt: skip
    assert str(raised) == "boom: y"  # the premise
    [writer] = [s for s in spans if s.name == "invoke_agent writer"]
    assert not writer.status.is_ok
    loaded = turnfold.load(session)
    rows, expected = outline(trace), outline(loaded)
    assert rows[:-1] == expected[:-1]
    assert rows[-2] == (
        "call", "transfer_to_agent", {"agent_name": "writer"}, "success", None,
        [("call", "explode", {"x": "y"}, "error", "ValueError: boom: y", None)],
    )  # fmt: skip
    assert rows[-1] == ("error", "ValueError: boom: y")
    assert expected[-1] == ("error", "The run ended: explode raised ValueError: boom: y")
    assert isinstance(trace.entries[-1], AssistantError)
    assert trace.metadata["outcome"] == "error"
    assert _made_up_calls(trace) == []


# --- ADK 1.x: its own tracer and OpenInference's ----------------------------------------------


@pytest.fixture(scope="module")
def recipe_session() -> Transcript:
    """The recipe's run by the installed ADK, read from its session."""
    return turnfold.load(RECIPE.delegation_run())


def _agent_tool_runs_left_out(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """An outline with the runs of ``AgentTool`` calls (``researcher``) left out: each is an
    invocation of its own, in a session of its own the session reader does not read; the trace
    holds it under its call."""
    return [(*row[:5], None) if row[:2] == ("call", "researcher") else row for row in rows]


@pytest.mark.parametrize("trace", list(V1_TRACES), ids=list(V1_TRACES))
def test_H4_adk_1x_handover_reads_as_the_session_of_the_same_run(
    trace: str, recipe_session: Transcript
) -> None:
    """ADK 1.15's own tracer and OpenInference's instrumentor put the run of ``helper``, handed
    over to, inside ``calc``'s model span after its ``transfer_to_agent`` tool span (the
    premise): read as the session reads the same run, ``helper``'s run under the call (the
    session's prompt and ADK's "For context" restatements of ``calc``'s steps not repeated in
    it), its answer the turn's; no made-up call."""
    path = V1_TRACES[trace]
    request = json.loads(path.read_text("utf-8").splitlines()[0])
    spans = {
        s["spanId"]: s
        for r in request["resourceSpans"] for scope in r["scopeSpans"] for s in scope["spans"]
    }  # fmt: skip
    [helper] = [s for s in spans.values() if s["name"] == "agent_run [helper]"]
    holder = spans[helper["parentSpanId"]]
    assert holder["name"] == "call_llm"
    assert any(s["name"] == "execute_tool transfer_to_agent" and
               s.get("parentSpanId") == holder["spanId"] for s in spans.values())  # fmt: skip
    loaded = turnfold.load(path)
    rows = outline(loaded)
    assert _agent_tool_runs_left_out(rows) == outline(recipe_session)
    assert rows[-2:] == [
        ("call", "transfer_to_agent", {"agent_name": "helper"}, "success", None, []),
        ("text", "TF-HELPED"),
    ]
    [transfer] = [c for c in loaded.tool_calls() if c.name == "transfer_to_agent"]
    assert transfer.subagent is not None
    assert transfer.subagent.name == "helper"
    assert _made_up_calls(loaded) == []
    assert not any(t.startswith("For context:") for t in _user_texts(loaded))
    assert loaded.metadata["agent"] == "calc"
    assert loaded.warnings == []
    assert transcript_tokens(loaded).own == transcript_tokens(recipe_session).own


def test_H4_openinference_adk_restatements_are_the_user_s_words_no_longer(
    tmp_path: Path,
) -> None:
    """OpenInference writes ADK's request flattened (``llm.input_messages.<i>.message.
    contents.<j>.message_content.text``): ``helper``'s request restates each of ``calc``'s
    steps as a user message opening "For context:" (the premise). They are not the user
    speaking: ``calc``'s own spans hold those steps. In a file of ``helper``'s spans alone,
    ``calc`` has no span and the restatements are the only record of its steps: shown as the
    ADK relayed them, nothing lost."""
    lines = RECIPE.OPENINFERENCE_FIXTURE.read_text("utf-8").splitlines()
    request = json.loads(lines[0])
    spans = [s for r in request["resourceSpans"] for scope in r["scopeSpans"]
             for s in scope["spans"]]  # fmt: skip
    [helper] = [s for s in spans if s["name"] == "agent_run [helper]"]
    [model] = [s for s in spans if s.get("parentSpanId") == helper["spanId"]]
    opening = re.compile(r"^llm\.input_messages\.\d+\.message\.contents\.0\.message_content\.text$")
    relayed = [
        a
        for a in model["attributes"]
        if opening.match(a["key"]) and a["value"]["stringValue"] == "For context:"
    ]
    assert len(relayed) == 6  # the premise
    whole = turnfold.load(RECIPE.OPENINFERENCE_FIXTURE)
    assert not any(t.startswith("For context:") for t in _user_texts(whole))

    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s is helper or s is model]
    path = tmp_path / "helper-alone.jsonl"
    path.write_text(json.dumps(request) + "\n", encoding="utf-8")
    texts = _user_texts(turnfold.load(path))
    shown = [t for t in texts if t.startswith("For context:")]
    assert len(shown) == 6
    assert all("[calc]" in t for t in shown)
    assert texts[0] == RECIPE.PROMPT
