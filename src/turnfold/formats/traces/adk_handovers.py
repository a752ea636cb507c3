"""Google ADK's handovers in its traces (spec H-4, A-1): an agent that hands the conversation
to another (``transfer_to_agent``, an ``LlmAgent`` with ``sub_agents``) within one run, read as
the ADK reader reads that run's session (:mod:`~turnfold.formats.frameworks.adk`): one run, the
``transfer_to_agent`` call holding the other agent's steps, the last agent's closing text (or
the exception the run ended on) the turn's, at the top level.

Every schema traces each agent's part of an invocation as an agent span of its own, but puts
the agent handed to somewhere else:

- ADK 2.x, telemetry schema 1 (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``): ``invoke_agent
  <name>`` spans (google/adk/telemetry/_instrumentation.py 2.13.0, ``record_agent_invocation``)
  side by side in the ``invocation`` span the runner opens (``record_invocation``), which has
  no attribute and is left out: every agent of the run a root, each read as a run of the
  session of its own. The agent handed to runs after the one that handed over, not inside it:
  the scheduler takes the ``transfer_to_agent`` action at the outer frame and runs the next
  agent (flows/llm_flows/core/_function_call_postprocessor.py: "returning control to the
  top-level coordinator").
- ADK 2.x, schema 2 (its default): the same agent spans side by side in the runner's
  ``invoke_workflow <entrypoint>`` span (``record_invocation``), which the trace reader reads
  as the run: the first agent's spans the run's, the agent handed to a sub-agent of no call
  (a made-up ``invoke_agent`` call after the transfer).
- ADK 1.x (its own tracer's ``agent_run [<name>]`` spans, 1.0.0 to 1.15.0 at least, and
  OpenInference's ADK instrumentor's ``AGENT`` spans): the agent handed to runs inside the
  ``call_llm`` span of the response that asked for the transfer, after its
  ``transfer_to_agent`` tool span (flows/llm_flows/base_llm_flow.py 1.15.0,
  ``_postprocess_handle_function_calls_async``: ``agent_to_run.run_async(invocation_context)``
  once the function response is yielded): a sub-agent of no call either.

The spans tell a handover from anything else: the agent in control before an agent span (the
agent span before it beside it in 2.x, the agent whose model span it runs inside in 1.x) ran a
``transfer_to_agent`` tool span that names it and ended before it started, and the model spans
of both carry the same ``gcp.vertex.agent.invocation_id`` (``trace_call_llm``, every schema
and release; OpenInference's spans carry it too, ADK's tracer writing on them); a next
``run_async`` is a new invocation, under a span (and a trace) of its own.

:func:`nest_handovers` hangs each such agent span where the ADK reader puts that agent's steps
(``AdkBuilder._transfer``): under the ``transfer_to_agent`` tool span that handed over to it (the
trace reader nests the run of an agent a tool span ran under that call); handed back to an agent
up the chain, under that agent's span, whose run goes on (an agent span of the same name right
under it is read as the same run). Each agent's own spans stay as they are. The run handed to
goes on with the session's history, so the reader counts what either run showed as seen by the
other (``_Builder.saw`` in the reader): the prompt is not repeated inside the call, nor the agent's
answer in the next turn, whose request holds it again. :func:`answer_at_top` then moves the last
agent's closing text to the top level, where the user reads the turn's answer, as the ADK reader
does (``AdkBuilder.end_turn``), and so the error a run that raised in the agent handed to ended
on (``AdkBuilder.run_ended_on_error``).

:func:`leave_out_relayed_steps` (every schema, 1.x and OpenInference's too) takes out of ADK's
requests the contents in which the ADK restates other agents' steps for the agent it calls the
model for ("For context: … [calc] called tool …", as the user): the trace holds those steps as
the other agents' own spans, and read as messages they were the user speaking, in the fold of
the agent handed to and in the next turn. Where the trace lacks an agent's spans, its restated
steps stay: nothing is lost.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from turnfold.formats.traces.langfuse_io import text_value
from turnfold.formats.traces.messages import _DETAILS_EVENT, agent_name, tool_arguments
from turnfold.formats.traces.spans import ADK_EVENT_ID, ADK_LLM_REQUEST, Span, iso_nanos, json_value
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    ToolCall,
    Transcript,
    UserMessage,
)

#: The tool an ADK agent hands the conversation over with
#: (google/adk/tools/transfer_to_agent_tool.py).
TRANSFER = "transfer_to_agent"
#: The record types (:func:`.spans.operation`) of an agent's run, a model call and a tool's run,
#: in ADK's own spans and OpenInference's (``AGENT``, ``LLM``, ``TOOL``); ADK's ``call_llm``
#: reads as a ``generate_content``.
_AGENT_OPS = ("invoke_agent", "AGENT")
_MODEL_OPS = ("generate_content", "chat", "LLM")
_TOOL_OPS = ("execute_tool", "TOOL")
#: What ADK's model spans say of the invocation they ran in (schema 1's ``call_llm`` and every
#: schema's ``generate_content``: google/adk/telemetry/tracing.py, ``trace_call_llm``).
_INVOCATION = "gcp.vertex.agent.invocation_id"
#: How the ADK opens the user-role content it relays another agent's steps to an agent in
#: (flows/llm_flows/context/_fencing.py 2.13.0, ``_present_other_agent_message``: its
#: ``OTHER_AGENT_CONTEXT_PREAMBLE`` as the first part; 1.x's first part is ``"For context:"``
#: alone, contents.py 1.15.0), then one part per step of that agent's event.
_RELAYED = "For context:"
#: A relayed step, naming its agent: ``[<agent>] said:``, ``[<agent>] thought:``, ``[<agent>]
#: called tool `<name>` with parameters:``, ``[<agent>] `<name>` tool returned result:``.
_RELAYED_STEP = re.compile(
    r"\[([^\]\n]+)\] (?:said:|thought:|called tool `|`[^`\n]*` tool returned result:)"
)


@dataclasses.dataclass
class Handovers:
    """What :func:`nest_handovers` nested: the ids of the ``transfer_to_agent`` tool spans that
    now hold the run of the agent they handed over to, and every agent span handed over to (the
    session's run goes on in them: a failure of theirs is the run's)."""

    transfers: set[str] = dataclasses.field(default_factory=set)
    agents: list[Span] = dataclasses.field(default_factory=list)


def nest_handovers(spans: list[Span]) -> Handovers:
    """Hang the ADK agent spans that were handed over to where their steps belong (see the
    module's description), changing their ``parent_id``; before the reader builds the span
    tree. Agent spans not handed over to stay where they are (a run, a sub-agent)."""
    if not any(_is_transfer(s) for s in spans):
        return Handovers()  # no handover in these spans (any other framework's trace)
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    below: dict[tuple[str, str], list[Span]] = {}
    for span in spans:
        key = (span.trace_id, span.parent_id or "")
        if key in by_id:
            below.setdefault(key, []).append(span)
    agents = sorted((s for s in spans if s.op in _AGENT_OPS), key=lambda s: s.start)
    # Who was in control before each agent span, read from the tree as the tracer wrote it
    # (before any span is moved): the agent span before it beside it (ADK 2.x: side by side
    # in the invocation's span, or roots where that span was left out), or the agent whose
    # model span it runs inside (ADK 1.x).
    beside: dict[tuple[str, str | None], Span] = {}
    before: list[Span | None] = []
    for span in agents:
        parent = by_id.get((span.trace_id, span.parent_id or ""))
        if parent is not None and parent.op in _MODEL_OPS:
            before.append(_agent_above(parent, by_id))
        else:
            frame = (span.trace_id, parent.span_id if parent is not None else None)
            before.append(beside.get(frame))
            beside[frame] = span
    found = Handovers()
    _nest(list(zip(agents, before, strict=True)), below, found)
    return found


def _nest(
    agents: list[tuple[Span, Span | None]],
    below: Mapping[tuple[str, str], list[Span]],
    found: Handovers,
) -> None:
    """The agent spans in start order, each with the agent in control before it: each one
    that agent handed over to is placed as the ADK reader places its steps, keeping its run's
    chain of handovers (outermost first), as that reader does; any other is a run of its own
    (its agent the speaker), whose chain starts empty."""
    invocations: dict[int, str | None] = {}

    def invocation(agent: Span) -> str | None:
        if id(agent) not in invocations:
            invocations[id(agent)] = _invocation(agent, below)
        return invocations[id(agent)]

    run_of: dict[int, Span] = {}
    chains: dict[int, list[tuple[str | None, Span]]] = {}
    for span, in_control in agents:
        name = agent_name(span)
        transfer = (
            _transfer(in_control, name, span.start, below) if in_control is not None else None
        )
        own = invocation(span)
        if transfer is None or own is None or in_control is None or own != invocation(in_control):
            run_of[id(span)] = span  # a run of its own: a next invocation, or no handover
            continue
        run = run_of.get(id(in_control), in_control)
        chain = chains.setdefault(id(run), [])
        held = [n for n, _ in chain]
        if name == agent_name(run):
            span.parent_id = run.span_id  # back to the run's agent: its run goes on
            chain.clear()
        elif name in held:
            depth = held.index(name)
            span.parent_id = chain[depth][1].span_id  # back up the chain: that agent goes on
            del chain[depth + 1 :]
        else:
            span.parent_id = transfer.span_id  # the call that handed over holds its run
            chain.append((name, span))
            found.transfers.add(transfer.span_id)
        run_of[id(span)] = run
        found.agents.append(span)


def _agent_above(span: Span, by_id: Mapping[tuple[str, str], Span]) -> Span | None:
    """The nearest agent span above ``span``; None without one."""
    current = by_id.get((span.trace_id, span.parent_id or ""))
    for _ in range(len(by_id)):  # a bound: a malformed file's parents may loop
        if current is None or current.op in _AGENT_OPS:
            return current
        current = by_id.get((current.trace_id, current.parent_id or ""))
    return None


def _is_transfer(span: Span) -> bool:
    """Whether ``span`` is the tool span of a ``transfer_to_agent`` call (ADK's own tracer
    names the tool ``gen_ai.tool.name``, OpenInference's ``tool.name`` too)."""
    a = span.attributes
    return span.op in _TOOL_OPS and a.get("gen_ai.tool.name", a.get("tool.name")) == TRANSFER


def _own_spans(agent: Span, below: Mapping[tuple[str, str], list[Span]]) -> list[Span]:
    """The spans under ``agent``, not those of the agents run inside it (an ``AgentTool``'s run
    is an invocation of its own; in 1.x the agent it handed over to runs inside its model
    span), in start order."""
    out: list[Span] = []
    todo = list(below.get((agent.trace_id, agent.span_id), ()))
    while todo:  # a stack, not recursion: spans may nest thousands deep
        span = todo.pop()
        if span.op in _AGENT_OPS:
            continue
        out.append(span)
        todo += below.get((span.trace_id, span.span_id), ())
    return sorted(out, key=lambda s: s.start)


def _invocation(agent: Span, below: Mapping[tuple[str, str], list[Span]]) -> str | None:
    """The invocation id the model spans of ``agent``'s run carry; None without one."""
    return next(
        (s.attributes[_INVOCATION] for s in _own_spans(agent, below)
         if isinstance(s.attributes.get(_INVOCATION), str) and s.attributes[_INVOCATION]),
        None,
    )  # fmt: skip


def _transfer(
    agent: Span, target: str | None, before: int, below: Mapping[tuple[str, str], list[Span]]
) -> Span | None:
    """The last ``transfer_to_agent`` tool span of ``agent``'s run that names ``target`` and
    ended before ``before`` (a span's start, Unix nanoseconds); None without one. A span whose
    arguments were not captured (``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false``) names no
    agent: the invocation's next agent is the one it handed over to, the only one the ADK runs
    next (``get_agent_to_run``)."""
    if not target:
        return None
    found = None
    for span in _own_spans(agent, below):
        if not _is_transfer(span):
            continue
        args = tool_arguments(span)
        named = args.get("agent_name") if isinstance(args, Mapping) else None
        if (args is None or named == target) and 0 < iso_nanos(span.ended_at) <= before:
            found = span
    return found


def answer_at_top(transcript: Transcript, hosts: list[ToolCall]) -> Transcript:
    """``transcript`` with the end of each turn that ended inside a handover shown at the top
    level, after the call: ``hosts`` are the top-level ``transfer_to_agent`` calls that hold a
    handed-over agent's run. A turn ends inside one when such a call is its last entry; its
    end is the last entry of the innermost run of the chain, when that is text (the answer) or
    the error the run ended on (:func:`_ended_on`), which the ADK reader says at the top level
    too (``AdkBuilder.run_ended_on_error``). Where the run's own span said that error at the top
    level already (schema 2's ``invoke_workflow`` span fails with the exception it passed
    through), the copy inside the call is taken out. The transcript returned is a new one when
    an entry moved (the model has no removal: views key on ids that never go away), its entries
    keeping their ids; else ``transcript`` itself."""
    entries = transcript.entries

    def held(entry: Entry | None) -> bool:
        return isinstance(entry, ToolCall) and any(entry is host for host in hosts)

    ends = [i for i, e in enumerate(entries) if isinstance(e, UserMessage)] + [len(entries)]
    answers: dict[int, AssistantText | AssistantError] = {}
    for end in ends:
        last = entries[end - 1] if end else None
        before = entries[end - 2] if end >= 2 else None
        if isinstance(last, ToolCall) and held(last):
            answer = _taken_end(transcript, last)
            if answer is not None:
                answers[end] = answer
        elif isinstance(last, AssistantError) and isinstance(before, ToolCall) and held(before):
            _taken_end(transcript, before, said=last.message)
    if not answers:
        return transcript
    taken = {e.id for e in entries}
    fresh = len(entries)
    placed: list[Entry] = []
    for index in range(len(entries) + 1):
        answer = answers.get(index)
        if answer is not None:
            while f"e{fresh}" in taken:  # an id of its own here, never one of the others'
                fresh += 1
            taken.add(f"e{fresh}")
            placed.append(dataclasses.replace(answer, id=f"e{fresh}"))
        if index < len(entries):
            placed.append(entries[index])
    moved = Transcript(placed, metadata=transcript.metadata, warnings=transcript.warnings)
    moved.accounting = transcript.accounting
    return moved


def _taken_end(
    owner: Transcript, call: ToolCall, *, said: str | None = None
) -> AssistantText | AssistantError | None:
    """The closing text or the error the run ended on of the run ``call`` holds, or of the run
    a handover at its end holds (innermost first), taken out of that run's transcript; None
    when that run ends otherwise. With ``said`` (an error the top level shows already), only
    an error of those words is taken out."""
    while True:
        child = call.subagent.transcript if call.subagent is not None else None
        last: Any = child.entries[-1] if child is not None and child.entries else None
        if child is None or last is None:
            return None
        deeper = last.subagent if isinstance(last, ToolCall) and last.name == TRANSFER else None
        if deeper is not None and deeper.transcript is not None:
            owner, call = child, last
            continue
        # The answer where the top level shows no error; the run's raised error, where it
        # shows none or this one.
        answered = said is None and isinstance(last, AssistantText)
        raised = isinstance(last, AssistantError) and said in (None, last.message)
        if call.subagent is None or not (answered or (raised and _ended_on(child))):
            return None
        ended: AssistantText | AssistantError = last
        rest = Transcript(child.entries[:-1], metadata=child.metadata, warnings=child.warnings)
        rest.accounting = child.accounting
        owner.update(call, subagent=dataclasses.replace(call.subagent, transcript=rest))
        return ended


def _ended_on(run: Transcript) -> bool:
    """Whether ``run`` ends on the exception a tool of its raised: an error, the agent span's
    failure, after the call that failed with the same words. The ADK raises a tool's exception
    out of the run (``Runner.run_async``), every span it passes through recording it, and its
    reader says that at the top level, the turn's outcome; a model call's error, which its
    reader shows in the agent's steps, is not one."""
    if len(run.entries) < 2:
        return False
    error, call = run.entries[-1], run.entries[-2]
    return (
        isinstance(error, AssistantError)
        and isinstance(call, ToolCall)
        and call.status == "error"
        and call.result is not None
        and call.result.text == error.message
    )


def leave_out_relayed_steps(spans: list[Span]) -> None:
    """Take out of the requests ADK's model spans recorded the user-role contents in which the
    ADK relays the steps of other agents of the session to the agent it calls the model for
    (:data:`_RELAYED`): each restates an event of another agent, which the trace holds as that
    agent's own spans. Read as messages they were the user speaking (a handed-over agent's
    history, and the next turn's when the agent handed to keeps control); the ADK reader, which
    reads the events themselves, never shows them. Only those whose agents all ran in
    ``spans`` (an agent span names each) are taken out: a trace without an agent's spans shows
    that agent's steps as the ADK relayed them, as before. The requests are those of ADK's own
    tracer (the GenAI messages) and of OpenInference's ADK instrumentor (its flattened
    ``llm.input_messages``, on spans ADK's tracer writes its event id on too)."""
    ran = {agent_name(s) for s in spans if s.op in _AGENT_OPS}
    for span in spans:
        a = span.attributes
        if ADK_EVENT_ID not in a and ADK_LLM_REQUEST not in a:
            continue
        _leave_out_flattened(a, ran)
        targets = [a, *(attrs for name, attrs in span.events if name == _DETAILS_EVENT)]
        for held in targets:
            value = held.get(_INPUT)
            if isinstance(value, str) and _RELAYED in value:
                messages = json_value(value)
                if isinstance(messages, list):
                    kept = [m for m in messages if not _relayed_by(m, ran)]
                    if len(kept) < len(messages):
                        held[_INPUT] = text_value(kept)


def _leave_out_flattened(a: dict[str, Any], ran: set[str | None]) -> None:
    """Take the relayed contents out of OpenInference's flattened request in ``a``
    (``llm.input_messages.<i>.message.*``; openinference-instrumentation-google-adk 0.1.28,
    ``_wrappers.py``: a Gemini content's parts as ``message.contents.<j>.message_content.*``),
    the messages after them numbered again from where they were taken out, as the
    instrumentor numbers a request's messages."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in a.items():
        found = _FLATTENED.match(key)
        if found:
            messages.setdefault(int(found[1]), {})[found[2]] = value
    relayed = {i for i, held in messages.items() if _relayed_by(_unflattened(held), ran)}
    if not relayed:
        return
    for key in [k for k in a if _FLATTENED.match(k)]:
        del a[key]
    kept = (i for i in sorted(messages) if i not in relayed)
    for index, old in enumerate(kept):
        for rest, value in messages[old].items():
            a[f"{_FLATTENED_INPUT}.{index}.{rest}"] = value


#: OpenInference's request, one attribute per field of each message (``llm.input_messages``).
_FLATTENED_INPUT = "llm.input_messages"
_FLATTENED = re.compile(r"^llm\.input_messages\.(\d+)\.(.+)$", re.DOTALL)
_CONTENT_PART = re.compile(r"^message\.contents\.(\d+)\.message_content\.(type|text)$")


def _unflattened(held: Mapping[str, Any]) -> dict[str, Any]:
    """One message of OpenInference's flattened request (its fields after its index) in the
    GenAI form :func:`_relayed_by` reads: its role, and its parts, a text part's text as its
    ``content``, any other part by its type alone."""
    parts: dict[int, dict[str, Any]] = {}
    for key, value in held.items():
        found = _CONTENT_PART.match(key)
        if found:
            parts.setdefault(int(found[1]), {})[found[2]] = value
    listed = [
        {"type": "text", "content": p["text"]}
        if p.get("type") == "text" and isinstance(p.get("text"), str)
        else {"type": p.get("type")}
        for _, p in sorted(parts.items())
    ]
    if isinstance(held.get("message.content"), str):  # one text, not parts
        listed = [{"type": "text", "content": held["message.content"]}]
    return {"role": held.get("message.role"), "parts": listed}


#: Where a model span's request is, as the GenAI conventions write it (ADK's schema 2; its
#: schema 1's ``call_llm`` request restored so by :func:`.adk_spans.restore_adk_span`), on the
#: span or on its details event.
_INPUT = "gen_ai.input.messages"


def _relayed_by(message: Any, ran: set[str | None]) -> bool:
    """Whether ``message`` is a content the ADK relayed other agents' steps in, every one of
    those agents among ``ran``."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    parts = message.get("parts")
    listed = parts if isinstance(parts, list) else []
    texts = [
        p["content"] for p in listed if isinstance(p, Mapping) and isinstance(p.get("content"), str)
    ]
    # Text alone, as the ADK writes it: a part of any other kind is something else.
    if not texts or len(texts) < len(listed) or not texts[0].startswith(_RELAYED):
        return False
    named = {m[1] for t in texts for m in _RELAYED_STEP.finditer(t)}
    return bool(named) and named <= ran
