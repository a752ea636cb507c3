"""Langfuse v4's observations API (``GET /api/public/v2/observations``) and Google ADK's own
spans through Langfuse (spec H-4, L-4).

The v2 API reads Langfuse v4's events table: ``{"data": [observation…], "meta": {"cursor"}}``,
each observation only the field groups asked for (``fields``; ``core`` and ``basic`` by
default: no input, output or metadata), its input and output the raw stored text, its
metadata flattened to dotted keys (``attributes.gen_ai.tool.name``) with each value read back
as JSON where it is JSON, its trace's ``sessionId`` and ``userId`` on it. :func:`as_v2_page`
writes an export of the v1 API in that shape, each step as Langfuse's source does it
(langfuse/langfuse at commit 6275144: ``web/src/pages/api/public/v2/observations/index.ts``,
``packages/shared/src/server/otel/utils.ts`` ``flattenJsonToPathArrays``,
``packages/shared/src/server/utils/metadata_conversion.ts``
``parseMetadataCHRecordToDomain``, ``packages/shared/src/server/repositories/
observations_converters.ts`` ``convertEventsObservation``). :func:`as_langfuse_export`
writes an OTLP trace as Langfuse ingests it (``OtelIngestionProcessor.ts``: an observation a
span, the input and output ``extractInputAndOutput`` reads, taken out of the attributes kept).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_otlp import outline
from tests.formats.test_otlp_adk_spans import adk_fixture
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.traces.spans import any_value, attributes_of, raw_spans, span_id
from turnfold.usage import transcript_tokens

LANGFUSE = Path(__file__).parent.parent / "fixtures" / "traces" / "langfuse"
#: The v2 API's field groups (``OBSERVATION_FIELD_GROUPS_PUBLIC_API``) and each one's fields.
GROUPS = {
    "core": ("id", "traceId", "startTime", "endTime", "projectId", "parentObservationId",
             "type"),
    "basic": ("name", "level", "statusMessage", "version", "environment", "bookmarked", "public",
              "userId", "sessionId", "isRootObservation"),
    "io": ("input", "output"),
    "metadata": ("metadata",),
    "model": ("model", "internalModelId", "modelParameters"),
    "usage": ("usageDetails", "costDetails", "totalCost", "usagePricingTierName"),
}  # fmt: skip
EVERY_GROUP = tuple(GROUPS)


def _flattened(value: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``flattenJsonToPathArrays``: objects' keys joined by dots, every leaf that is not a
    string (a list, a number) as ``JSON.stringify`` writes it; a null an empty string (the
    ``Array(String)`` column's ``v ?? ""``)."""
    out: list[tuple[str, Any]] = []
    for key, item in value.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(item, dict):
            out += _flattened(item, path)
        elif item is None or isinstance(item, str):
            out.append((path, item or ""))
        else:
            out.append((path, json.dumps(item, separators=(",", ":"))))
    return out


def _parsed(text: str) -> Any:
    """``parseJsonPrioritised``: JSON where the text is JSON, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _raw(value: Any) -> Any:
    """An input or output as the events table stores it: text, a structured value as JSON."""
    return value if value is None or isinstance(value, str) else json.dumps(value)


def as_v2_page(export: dict[str, Any], groups: tuple[str, ...] = EVERY_GROUP) -> dict[str, Any]:
    """The trace's observations as the v2 API gives them with the field groups ``groups``."""
    trace = export["trace"]
    data = []
    for observation in export["observations"]:
        metadata = observation["metadata"]
        metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
        full = {
            **observation,
            "userId": trace.get("userId"),
            "sessionId": trace.get("sessionId"),
            "isRootObservation": observation["parentObservationId"] is None,
            "input": _raw(observation.get("input")),
            "output": _raw(observation.get("output")),
            # The first of a key written twice wins (mapFromArrays(arrayReverse(...))).
            "metadata": {k: _parsed(v) for k, v in reversed(_flattened(metadata or {}))},
        }
        shown = {k: full.get(k) for group in groups for k in GROUPS[group]}
        shown.update(modelId=None, inputPrice=None, outputPrice=None, totalPrice=None)
        data.append(shown)
    return {"data": data, "meta": {}}


def _written(tmp_path: Path, value: Any, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _export(name: str) -> dict[str, Any]:
    export: dict[str, Any] = json.loads((LANGFUSE / f"{name}.trace.json").read_text("utf-8"))
    return export


@pytest.mark.parametrize(
    "name",
    ["openai-agents-2025-09-30", "google-adk-2025-08-28", "langgraph-python-2025-08-22",
     "pydantic-ai-tools-2025-12-04"],
)  # fmt: skip
def test_H4_a_v2_observations_page_reads_as_the_trace_it_was_made_of(
    name: str, tmp_path: Path
) -> None:
    """Each span's attributes are made again from the flattened metadata (their values text,
    as v1 gives them), its input and output read from their raw text: the same conversation,
    calls, results and tokens as the v1 export; the session is the one the observations
    name."""
    export = _export(name)
    page = _written(tmp_path, as_v2_page(export), "page.json")
    assert isinstance(as_v2_page(export)["data"][0]["metadata"], dict)
    v1, v2 = turnfold.load(LANGFUSE / f"{name}.trace.json"), turnfold.load(page)
    assert outline(v2) == outline(v1)
    assert v2.metadata.get("session_id") == v1.metadata.get("session_id")
    assert [w.reason for w in v2.warnings] == [w.reason for w in v1.warnings]
    assert transcript_tokens(v2).own == transcript_tokens(v1).own
    assert v2.accounting is not None
    assert v2.accounting.unaccounted == []


def test_L4_a_v2_page_of_the_default_fields_says_what_to_export(tmp_path: Path) -> None:
    """By default the v2 API gives no input, output or metadata: nothing of the conversation
    is there, and the load says which fields to ask for (not an empty transcript)."""
    export = _export("openai-agents-2025-09-30")
    page = _written(tmp_path, as_v2_page(export, ("core", "basic")), "page.json")
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(page)
    said = str(raised.value)
    assert "without their input and output" in said
    assert f"traceId={export['trace']['id']}&fields=core,basic,io,metadata" in said


def test_L4_a_v2_page_without_metadata_is_read_by_type_with_a_warning(tmp_path: Path) -> None:
    """Without the ``metadata`` group the spans' attributes are not there: the observations
    are read by their type, name, input and output, as the Langfuse SDK's own are, and a
    warning says what is missing and what to export."""
    export = _export("openai-agents-2025-09-30")
    page = as_v2_page(export, ("core", "basic", "io", "model", "usage"))
    transcript = turnfold.load(_written(tmp_path, page, "page.json"))
    assert any(
        "without their metadata" in w.reason and "fields=core,basic,io,metadata" in w.reason
        for w in transcript.warnings
    )


# --- Google ADK's own spans through Langfuse -------------------------------------------------

#: Where ``extractInputAndOutput`` reads an ADK span's input and output, and what it takes out
#: of the attributes it keeps (langfuse/langfuse#9707).
_ADK_INPUTS = ("gcp.vertex.agent.llm_request", "gcp.vertex.agent.tool_call_args")
_ADK_OUTPUTS = ("gcp.vertex.agent.llm_response", "gcp.vertex.agent.tool_response")


def _iso(nanos: str) -> str:
    moment = datetime.fromtimestamp(int(nanos) / 1e9, tz=timezone.utc)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _adk_io(attributes: dict[str, Any], keys: tuple[str, str]) -> Any:
    """``attributes[keys[0]]``, or, where that is missing or ``"{}"``, ``attributes[keys[1]]``."""
    value = attributes.get(keys[0])
    return attributes.get(keys[1]) if value in (None, "{}") else value


def as_langfuse_export(path: Path) -> dict[str, Any]:
    """An OTLP trace of ADK's own spans as Langfuse's trace export gives it: each span an
    observation (typed as ``ObservationTypeMapper`` types ADK's), its input and output the
    ADK attributes read, those taken out of ``metadata.attributes``."""
    request = json.loads(path.read_text("utf-8").splitlines()[0])
    observations = []
    for raw in raw_spans(request):
        attributes = attributes_of(raw.get("attributes"))
        inp, out = _adk_io(attributes, _ADK_INPUTS), _adk_io(attributes, _ADK_OUTPUTS)
        kept = {
            k: v if isinstance(v, str) else json.dumps(v)
            for k, v in attributes.items()
            if k not in _ADK_INPUTS + _ADK_OUTPUTS
        }
        op = attributes.get("gen_ai.operation.name")
        kind = {"execute_tool": "TOOL", "invoke_agent": "AGENT"}.get(str(op), "SPAN")
        if op == "generate_content" or "gcp.vertex.agent.llm_request" in attributes:
            kind = "GENERATION"
        status = raw.get("status") or {}
        observations.append({
            "id": span_id(raw["spanId"], 8), "traceId": span_id(raw["traceId"], 16),
            "parentObservationId": span_id(raw.get("parentSpanId"), 8), "type": kind,
            "name": raw["name"], "startTime": _iso(raw["startTimeUnixNano"]),
            "endTime": _iso(raw["endTimeUnixNano"]),
            "level": "ERROR" if status.get("code") == "STATUS_CODE_ERROR" else "DEFAULT",
            "statusMessage": status.get("message"), "input": _parsed(inp) if inp else None,
            "output": _parsed(out) if out else None,
            "model": attributes.get("gen_ai.request.model"), "usageDetails": {}, "projectId": "p",
            "metadata": json.dumps({"attributes": kept, "scope": {"name": "gcp.vertex.agent"}}),
        })  # fmt: skip
    session = next(
        (any_value(a["value"]) for s in raw_spans(request) for a in s.get("attributes", [])
         if a["key"] == "gen_ai.conversation.id"), None,
    )  # fmt: skip
    trace_id = observations[0]["traceId"]
    return {"trace": {"id": trace_id, "sessionId": session}, "observations": observations}


@pytest.mark.parametrize("variant", ["schema-1_content", "schema-2_content"])
def test_H4_adk_s_own_spans_exported_by_langfuse_read_as_the_trace(
    variant: str, tmp_path: Path
) -> None:
    """Langfuse read ADK's request and response, or tool arguments and result, as each
    observation's input and output and keeps them no more in the attributes: put back under
    ADK's keys, the export (and its v2 page) reads as the OTLP trace does, each call with
    its result. (Schema 2's model spans keep their GenAI messages here, as exports before
    langfuse/langfuse#9707 do; its tool spans' ADK keys are read the same.)"""
    trace = turnfold.load(adk_fixture(variant))
    export = as_langfuse_export(adk_fixture(variant))
    assert not any(
        k.startswith("gcp.vertex.agent.tool_") for o in export["observations"]
        for k in json.loads(o["metadata"])["attributes"]
    )  # fmt: skip
    for value in (export, as_v2_page(export)):
        read = turnfold.load(_written(tmp_path, value, "export.json"))
        assert outline(read) == outline(trace)
        assert read.warnings == []
        assert transcript_tokens(read).own == transcript_tokens(trace).own
