"""Google ADK 1.x traces (spec H-4): its own tracer's, where each agent's run is a span named
``agent_run [<name>]`` with no attribute (its early 1.x releases: 1.0.0 to at least 1.15.0),
and OpenInference's ADK instrumentor's, which writes a model's thought as a ``reasoning``
content part.

Both fixtures are one run of ``google-adk`` 1.15.0 made by
``tests/fixtures/traces/otlp/google-adk_delegation_recipe.py`` (which says how, in a virtual
environment of its own): the root agent ``calc`` thinks, calls ``ls`` (a list) and ``status``
(no arguments, it returns ``{}``) in one response, then the agent ``researcher`` as a tool
(``AgentTool``), then hands over to its sub-agent ``helper`` (``transfer_to_agent``), which
answers. The same recipe runs again with the installed ADK (2.x), whose spans the reader
already read as agents: the 1.x trace reads as that one does. The handover reads as the ADK
reader reads the session (tests/formats/test_adk_handover_schemas.py): the ``helper``'s run
under the ``transfer_to_agent`` call, its answer the turn's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.recipes import recipe
from tests.formats.test_otlp import FIXTURES, outline
from tests.formats.test_otlp_adk_spans import adk_fixture
from turnfold.model import Transcript
from turnfold.usage import transcript_tokens

RECIPE = recipe(FIXTURES / "google-adk_delegation_recipe.py")
PROMPT = RECIPE.PROMPT
#: The run as the ADK reader reads its session: the helper's run held by the
#: ``transfer_to_agent`` call that named it, empty here (the session's prompt it was given is
#: not repeated, ADK's "For context" notes of what ``calc`` did are not the user speaking) but
#: for its answer, the turn's, at the top level. The researcher's run (an ``AgentTool``'s, an
#: invocation of its own) is under its call, as the trace records it.
EXPECTED = [
    ("user", PROMPT),
    ("thinking", "list and check"),
    ("call", "ls", {"path": "."}, "success", '[\n  "a.txt",\n  "b.txt"\n]', None),
    ("call", "status", {}, "success", "{}", None),
    ("call", "researcher", {"request": "meaning"}, "success", "TF-42",
     [("user", "meaning"), ("text", "TF-42")]),
    ("call", "transfer_to_agent", {"agent_name": "helper"}, "success", None, []),
    ("text", "TF-HELPED"),
]  # fmt: skip


def _spans(path: Path) -> list[dict[str, Any]]:
    request = json.loads(path.read_text("utf-8").splitlines()[0])
    return [
        span
        for resource in request["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def _handed_over(transcript: Transcript) -> tuple[Any, ...]:
    """The run the ``transfer_to_agent`` call holds: its agent and its outline."""
    [call] = [c for c in transcript.tool_calls() if c.name == "transfer_to_agent"]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    return call.subagent.name, outline(call.subagent.transcript)


def test_H4_adk_1x_agent_runs_are_agents_sub_agents_nested() -> None:
    """ADK 1.x names each agent's run ``agent_run [<name>]`` and writes nothing else on it: the
    root's run is the session's (its agent ``calc``), the ``researcher`` an ``AgentTool`` ran
    is that call's sub-agent, the ``helper`` the root handed over to (its run inside the root's
    model span, after the ``transfer_to_agent`` tool span) the run of that call, as the reader
    reads ADK 2.x's ``invoke_agent`` spans.
    Its tool spans always hold their content (1.15 has no switch to leave it out): the
    ``{}`` that ``status`` returned is the empty object it is."""
    path = RECIPE.FIXTURE
    runs = [s for s in _spans(path) if s["name"].startswith("agent_run [")]
    assert sorted(s["name"] for s in runs) == [
        "agent_run [calc]", "agent_run [helper]", "agent_run [researcher]"
    ]  # fmt: skip
    assert not any(_attributes(s) for s in runs)  # the premise: the name is all it says
    transcript = turnfold.load(path)
    assert outline(transcript) == EXPECTED
    assert _handed_over(transcript) == ("helper", [])
    assert transcript.metadata["agent"] == "calc"
    assert transcript.metadata["model"] == "scripted-1"
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    # Each response's usage once (20 + turn in, turn out; the researcher's response its
    # sub-agent's, the helper's with its answer at the top level, as the ADK reader counts it).
    assert transcript_tokens(transcript).own == {"input_tokens": 87, "output_tokens": 7}
    assert transcript_tokens(transcript).combined == {"input_tokens": 108, "output_tokens": 8}


def test_H4_adk_1x_trace_reads_as_the_installed_adk_traces_the_same_run(tmp_path: Path) -> None:
    """Compatibility: the same run traced now by the installed ADK (2.x; its default schema 2,
    content on the spans) reads as the 1.x trace does, but for the thought, which schema 2
    writes as text (google/adk/telemetry/_experimental_semconv.py, ``_to_part``: a
    ``Text`` part, ``thought`` not kept). ADK's "For context" notes the helper is given,
    worded otherwise in 2.x, are read as neither: the trace holds ``calc``'s steps."""
    pytest.importorskip("google.adk")
    settings = {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "2",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}  # fmt: skip
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        RECIPE.write(tmp_path / "now.jsonl")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    now = turnfold.load(tmp_path / "now.jsonl")
    thought = ("thinking", "list and check")
    assert outline(now)[: len(EXPECTED)] == [
        ("text", thought[1]) if row == thought else row for row in EXPECTED
    ]
    assert _handed_over(now) == _handed_over(turnfold.load(RECIPE.FIXTURE))
    assert now.metadata["agent"] == "calc"
    assert now.warnings == []


def test_H4_adk_schema_1_empty_result_with_content_on_is_an_empty_object(tmp_path: Path) -> None:
    """ADK 2.x's schema 1 writes ``"{}"`` for a tool span's arguments and result both where
    content capture is off and where a tool of no arguments returned ``{}``: its trace tells
    them apart (a ``call_llm`` span's request is ``"{}"`` only with capture off). With it on,
    ``status``'s call has its arguments ``{}`` and its result ``{}``; with it off (the
    committed trace of another run), its calls have neither, and the load says why."""
    pytest.importorskip("google.adk")
    saved = os.environ.get("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN")
    os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
    try:
        RECIPE.write(tmp_path / "schema-1.jsonl")
    finally:
        if saved is None:
            os.environ.pop("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", None)
        else:
            os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = saved
    [status] = [
        s for s in _spans(tmp_path / "schema-1.jsonl") if s["name"] == "execute_tool status"
    ]
    written = _attributes(status)
    assert written["gcp.vertex.agent.tool_call_args"] == "{}"  # the premise
    assert written["gcp.vertex.agent.tool_response"] == "{}"
    rows = outline(turnfold.load(tmp_path / "schema-1.jsonl"))
    assert [row[:5] for row in rows if row[:2] == ("call", "status")] == [
        ("call", "status", {}, "success", "{}")
    ]
    uncaptured = turnfold.load(adk_fixture("schema-1_no-content"))
    assert all(row[2] is None and row[4] in (None, "TOOL_ERROR") for row in outline(uncaptured))
    assert "no message content" in uncaptured.warnings[0].reason


def test_H4_openinference_adk_thought_is_thinking() -> None:
    """OpenInference's ADK instrumentor (0.1.28) writes a model's thought (a Gemini part with
    ``thought``) as a content part of type ``reasoning``
    (``llm.output_messages.0.message.contents.0.message_content.type``), in the response and
    again in the next request's history: it is the model's thinking, shown once, not text.
    The run reads as ADK's own tracer has it (its ``agent_run`` spans are OpenInference's
    ``AGENT`` spans)."""
    path = RECIPE.OPENINFERENCE_FIXTURE
    types = [
        value
        for span in _spans(path)
        for key, value in _attributes(span).items()
        if key.endswith("message_content.type")
    ]
    assert types.count("reasoning") == 3  # the premise: the response, twice in history
    transcript = turnfold.load(path)
    assert outline(transcript)[: len(EXPECTED)] == EXPECTED
    assert ("text", "list and check") not in outline(transcript)
    assert _handed_over(transcript) == _handed_over(turnfold.load(RECIPE.FIXTURE))
    assert transcript.warnings == []
