"""Independent tool-call counters for the trace and agent-output formats (issue 13).

Written from the formats' documentation apart from the loaders (see ``counters.py``): each
counts the tool calls the file records, sub-agents' included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.formats.counters import records


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    attributes = span.get("attributes", [])
    if isinstance(attributes, dict):  # a span as ConsoleSpanExporter prints it
        return attributes
    return {a["key"]: next(iter(a["value"].values()), None) for a in attributes}


def _spans(path: Path) -> list[dict[str, Any]]:
    """The spans of an OTLP export, of ConsoleSpanExporter's lines (``context`` ids with
    ``0x``, ``parent_id``) or of a Jaeger export (``data[].spans``, ``tags``, a ``CHILD_OF``
    reference) as OTLP names their ids; a span printed again counted once."""
    spans: dict[str, dict[str, Any]] = {}
    for record in records(path):
        for trace in record.get("data", []) if isinstance(record.get("data"), list) else []:
            for span in trace.get("spans", []):
                parent = [r["spanID"] for r in span.get("references", [])
                          if r.get("refType") == "CHILD_OF"]  # fmt: skip
                attributes = {t["key"]: t.get("value") for t in span.get("tags", [])}
                spans[span["spanID"]] = {"spanId": span["spanID"], "name": span["operationName"],
                                         "parentSpanId": parent[0] if parent else None,
                                         "attributes": attributes}  # fmt: skip
        if "context" in record:
            span = {
                **record,
                "spanId": record["context"]["span_id"].removeprefix("0x"),
                "parentSpanId": (record["parent_id"] or "").removeprefix("0x") or None,
            }
            spans[span["spanId"]] = span
            continue
        for resource in record.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                spans.update((span["spanId"], span) for span in scope.get("spans", []))
    return list(spans.values())


# A GenAI workflow runs its agents; Gemini CLI's own spans are agent_call and tool_call.
_AGENTS = ("invoke_agent", "invoke_workflow", "AGENT", "agent_call")
_TOOLS = ("execute_tool", "TOOL", "tool_call")
#: Spans that say what they are otherwise: OpenLLMetry's decorators' ``traceloop.span.kind``
#: (an ``@agent`` or ``@workflow`` an agent run, a ``@tool`` a tool run) and the Vercel AI
#: SDK's ``ai.operationId`` (``ai.toolCall``, a tool run).
_OTHER_KINDS = {"agent": "invoke_agent", "workflow": "invoke_agent", "tool": "execute_tool",
                "ai.toolCall": "execute_tool"}  # fmt: skip


#: Google ADK 1.x's span of an agent's run, ``agent_run [<name>]``, with no attributes
#: (google/adk/agents/base_agent.py, 1.0–1.15: ``tracer.start_as_current_span(f'agent_run
#: [{self.name}]')``).
_ADK_1_AGENT = re.compile(r"agent_run \[(.+)\]")

#: The attributes that only say which kind a span is.
_KIND_KEYS = frozenset({"openinference.span.kind", "gen_ai.operation.name"})


def otlp(path: Path) -> int:
    """Tool executions: the ``execute_tool`` / ``TOOL`` spans, or the distinct tool-call ids the
    model spans' outputs asked for where more (content captured, tools not traced), plus agent
    spans run by another agent with no tool span between them and no call of their name asked
    for (a sub-agent with no tool span of its own: smolagents' managed agents run inside the
    manager's ``CHAIN`` step, as the call of their name when the model spans are traced; an
    agent span under a root agent span that says only its kind is no one's sub-agent). In
    a smolagents trace (spans with ``smolagents.*`` attributes) a ``final_answer`` call is the
    answer, not a call (as counters_smolagents.py counts), and a CodeAgent's step (a ``CHAIN``
    span whose ``LLM`` span was offered no tools, ``llm.tools.*``, and asked for none) is one
    call, its code, unless smolagents could not parse code from the reply
    (``AgentParsingError``): the tool spans under it ran from that code, and the first agent
    span under it is that call's sub-agent. Google ADK's ``(merged tools)`` span, written
    after a response's parallel calls beside their own spans, is no call."""
    spans = _spans(path)
    attributes = {span["spanId"]: _attributes(span) for span in spans}
    smolagents = any(k.startswith("smolagents.") for a in attributes.values() for k in a)
    answer = "final_answer" if smolagents else ""  # "": a name no tool has
    kinds = {}
    parents = {}
    asked: dict[str, str] = {}  # call id -> tool name
    for span in spans:
        a = attributes[span["spanId"]]
        kinds[span["spanId"]] = (
            a.get("gen_ai.operation.name")
            or a.get("openinference.span.kind")
            or _OTHER_KINDS.get(a.get("traceloop.span.kind") or a.get("ai.operationId") or "")
        )
        if a.get("gen_ai.tool.name") == "(merged tools)":  # ADK's, beside each call's own span
            kinds[span["spanId"]] = None
        if not kinds[span["spanId"]] and _ADK_1_AGENT.fullmatch(span["name"]):
            kinds[span["spanId"]] = "invoke_agent"
        parents[span["spanId"]] = span.get("parentSpanId")
        try:
            output = json.loads(a.get("gen_ai.output.messages") or "[]")
        except ValueError:  # cut by its tracer (Gemini CLI's, at 10,000 characters)
            output = []
        for message in output if isinstance(output, list) else []:
            asked |= {p["id"]: p.get("name") for p in message.get("parts", [])
                      if p.get("type") == "tool_call"}  # fmt: skip
        for key, value in a.items():
            if key.startswith("llm.output_messages.") and key.endswith(".tool_call.id"):
                asked[value] = a.get(key.removesuffix("id") + "function.name")

    def above(span_id: str) -> str | None:
        """The nearest agent or tool span above ``span_id``."""
        parent = parents.get(span_id)
        for _ in spans:
            if parent is None or kinds.get(parent) in _AGENTS + _TOOLS:
                break
            parent = parents.get(parent)
        return parent

    def runner(span_id: str) -> str | None:
        """The kind of the nearest agent or tool span above ``span_id``."""
        parent = above(span_id)
        return kinds.get(parent) if parent is not None else None

    def agent_name(span: dict[str, Any]) -> str:
        a = attributes[span["spanId"]]
        name = (a.get("gen_ai.agent.name") or a.get("agent.name") or a.get("gen_ai.workflow.name")
                or span["name"])  # fmt: skip
        name = str(name).removeprefix("invoke_agent ").removeprefix("invoke_workflow ")
        adk_1 = _ADK_1_AGENT.fullmatch(name)
        if adk_1:
            name = adk_1.group(1)
        return name.removesuffix(".run")

    def step(span_id: str) -> str | None:
        """The nearest ``CHAIN`` span above ``span_id`` below its agent span."""
        parent = parents.get(span_id)
        for _ in spans:
            if parent is None or kinds.get(parent) in _AGENTS:
                return None
            if kinds.get(parent) == "CHAIN":
                return parent
            parent = parents.get(parent)
        return None

    def unparsed(span: dict[str, Any]) -> bool:
        return any(
            _attributes(event).get("exception.type", "").endswith("AgentParsingError")
            for event in span.get("events", [])
        )

    code_steps = {
        parents[span["spanId"]] for span in spans
        if smolagents and kinds[span["spanId"]] == "LLM"
        and kinds.get(parents[span["spanId"]]) == "CHAIN"
        and not any(k.startswith("llm.tools.") or ".message.tool_calls." in k
                    for k in attributes[span["spanId"]])
    } - {span["spanId"] for span in spans if unparsed(span)}  # fmt: skip
    tools = sum(
        1 for span in spans
        if kinds[span["spanId"]] in _TOOLS and attributes[span["spanId"]].get("tool.name") != answer
        and step(span["spanId"]) not in code_steps
    )  # fmt: skip
    calls = [name for name in asked.values() if name != answer]
    by_id = {span["spanId"]: span for span in spans}

    def again(span: dict[str, Any]) -> bool:
        """An agent span right under an agent span of its name: the same run (OpenLLMetry's
        LangGraph graph and workflow spans, a GenAI workflow named after its root agent)."""
        parent = by_id.get(span.get("parentSpanId") or "")
        a, b = attributes[span["spanId"]], attributes[parent["spanId"]] if parent else {}
        return (
            parent is not None
            and kinds[parent["spanId"]] in _AGENTS
            and bool(a.get("gen_ai.agent.name"))
            and a.get("gen_ai.agent.name")
            == (b.get("gen_ai.agent.name") or b.get("gen_ai.workflow.name"))
        )

    def wrapper(span_id: str | None) -> bool:
        """A root agent span that says nothing but its kind (OpenInference's span of an OpenAI
        Agents SDK trace, named after its workflow): the agents under it are no one's."""
        return (
            span_id is not None and parents.get(span_id) is None
            and kinds.get(span_id) in _AGENTS and set(attributes[span_id]) <= _KIND_KEYS
        )  # fmt: skip

    # Google ADK 1.x runs an agent handed the conversation to (``transfer_to_agent``) inside
    # the model span that asked for it, beside that call's tool span (flows/llm_flows/
    # base_llm_flow.py 1.15.0, ``_postprocess_handle_function_calls_async``): that call's run.
    handed = set()
    for span in spans:
        a = attributes[span["spanId"]]
        if kinds[span["spanId"]] in _TOOLS and a.get("gen_ai.tool.name") == "transfer_to_agent":
            args = json.loads(a.get("gcp.vertex.agent.tool_call_args") or "{}")
            handed.add((span.get("parentSpanId"), args.get("agent_name")))
    direct = sum(
        1 for span in spans
        if kinds[span["spanId"]] in _AGENTS and runner(span["spanId"]) in _AGENTS
        and agent_name(span) not in calls and step(span["spanId"]) not in code_steps
        and not again(span) and not wrapper(above(span["spanId"]))
        and (span.get("parentSpanId"), agent_name(span)) not in handed
    )  # fmt: skip
    # Agents a code step ran beyond the one its call holds are calls of their own.
    run_by_code = [step(s["spanId"]) for s in spans if kinds[s["spanId"]] in _AGENTS]
    run_by_code = [s for s in run_by_code if s in code_steps]
    more = len(run_by_code) - len(set(run_by_code))
    return max(tools, len(calls)) + direct + len(code_steps) + more


def claude_stream_json(path: Path) -> int:
    """Distinct ``tool_use`` block ids of the ``assistant`` events, sub-agents' (events with a
    ``parent_tool_use_id``) included."""
    ids = set()
    for event in records(path):
        if isinstance(event, dict) and event.get("type") == "assistant":
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    ids.add(block.get("id"))
    return len(ids)


#: Thread items that are tool calls (codex-rs/exec/src/exec_events.rs, ThreadItemDetails).
_CODEX_CALL_ITEMS = {
    "command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search",
    "todo_list",
}  # fmt: skip


#: The call events of ``codex exec --json`` before Codex 0.44, ``{"id", "msg": {"type"}}``
#: (``event_processor_with_json_output.rs``): a command, a patch, an MCP call, a web search,
#: and the ``update_plan`` tool's own event.
_LEGACY_CODEX_CALLS = frozenset(
    {"exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin",
     "plan_update"}
)  # fmt: skip


def codex_exec_json(path: Path) -> int:
    """Distinct ids of call items in ``item.started`` / ``item.updated`` / ``item.completed``;
    in the form before Codex 0.44, its call events (:data:`_LEGACY_CODEX_CALLS`)."""
    ids = set()
    legacy = 0
    for event in records(path):
        item = event.get("item") if isinstance(event, dict) else None
        if isinstance(item, dict) and item.get("type") in _CODEX_CALL_ITEMS:
            ids.add(item.get("id"))
        message = event.get("msg") if isinstance(event, dict) else None
        legacy += isinstance(message, dict) and message.get("type") in _LEGACY_CODEX_CALLS
    return len(ids) + legacy


COUNTERS: dict[str, Callable[[Path], int]] = {
    "otlp": otlp,
    "claude-stream-json": claude_stream_json,
    "codex-exec-json": codex_exec_json,
}
