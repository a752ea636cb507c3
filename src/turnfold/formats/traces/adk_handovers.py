"""Google ADK's handovers in its telemetry schema 1 (spec H-4, A-1): an agent that hands the
conversation to another (``transfer_to_agent``, an ``LlmAgent`` with ``sub_agents``) within one
run, read as the ADK reader reads that run's session (:mod:`~turnfold.formats.frameworks.adk`):
one run, the ``transfer_to_agent`` call holding the other agent's steps, the last agent's closing
text the turn's answer.

How ADK 2.13.0 traces a handover: each agent of an invocation runs in an ``invoke_agent <name>``
span of its own (google/adk/telemetry/_instrumentation.py, ``record_agent_invocation``), and the
agent handed to runs after the one that handed over, beside it: the scheduler takes the
``transfer_to_agent`` action at the outer frame and runs the next agent
(flows/llm_flows/core/_function_call_postprocessor.py: "returning control to the top-level
coordinator"). Both spans sit in the span the runner opens for the invocation
(``record_invocation``): in schema 2 an ``invoke_workflow`` span, which the trace reader reads as
the run, the agent handed to a sub-agent of it; in schema 1 an ``invocation`` span with no
attribute, which is no agent span and is left out, so every agent of the run was a root, read as
a run of the session of its own (and its history, ADK's "For context:" notes of what the other
agent did, ``flows/llm_flows/context/_fencing.py``, as the user speaking).

The spans tell a handover from a new invocation: the ``transfer_to_agent`` tool span of the
agent in control names the next agent (``agent_name``) and ended before its span started, and
the model spans of both carry the same ``gcp.vertex.agent.invocation_id`` (``trace_call_llm``);
a next ``run_async`` is a new invocation, under an ``invocation`` span (and a trace) of its own.

:func:`nest_handovers` hangs each such agent span where the ADK reader puts that agent's steps
(``AdkBuilder._transfer``): under the ``transfer_to_agent`` tool span that handed over to it (the
trace reader nests the run of an agent a tool span ran under that call); handed back to an agent
up the chain, under that agent's span, whose run goes on (an agent span of the same name right
under it is read as the same run). Each agent's own spans stay as they are. The run handed to
goes on with the session's history, so the reader counts what either run showed as seen by the
other (``_Builder.saw`` in the reader): the prompt is not repeated inside the call, nor the agent's
answer in the next turn, whose request holds it again. :func:`answer_at_top` then moves the last
agent's closing text to the top level, where the user reads the turn's answer, as the ADK reader
does (``AdkBuilder.end_turn``).

:func:`leave_out_relayed_steps` (every schema, 1.x too) takes out of ADK's requests the contents
in which the ADK restates other agents' steps for the agent it calls the model for ("For
context: … [calc] called tool …", as the user): the trace holds those steps as the other agents'
own spans, and read as messages they were the user speaking, in the fold of the agent handed to
and in the next turn. Where the trace lacks an agent's spans, its restated steps stay: nothing is
lost.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from turnfold.formats.traces.langfuse_io import text_value
from turnfold.formats.traces.messages import _DETAILS_EVENT, agent_name, tool_arguments
from turnfold.formats.traces.spans import ADK_EVENT_ID, ADK_LLM_REQUEST, Span, iso_nanos, json_value
from turnfold.model import AssistantText, Entry, ToolCall, Transcript, UserMessage

#: The tool an ADK agent hands the conversation over with
#: (google/adk/tools/transfer_to_agent_tool.py).
TRANSFER = "transfer_to_agent"
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
    """Hang the agent spans of ADK's schema 1 that were handed over to where their steps belong
    (see the module's description), changing their ``parent_id``; before the reader builds the
    span tree. Agent spans of one trace that are not handed over to stay roots (each a run)."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    below: dict[tuple[str, str], list[Span]] = {}
    roots: dict[str, list[Span]] = {}
    for span in spans:
        parent = (span.trace_id, span.parent_id or "")
        if parent in by_id:
            below.setdefault(parent, []).append(span)
        elif span.op == "invoke_agent":
            roots.setdefault(span.trace_id, []).append(span)
    found = Handovers()
    for agents in roots.values():
        if len(agents) > 1:
            _nest(sorted(agents, key=lambda s: s.start), below, found)
    return found


def _nest(
    agents: list[Span], below: Mapping[tuple[str, str], list[Span]], found: Handovers
) -> None:
    """The root agent spans of one trace, in start order: the first is a run (its agent the
    speaker); each later one the agent in control handed over to is placed as the ADK reader
    places its steps, keeping its chain of handovers (outermost first), as that reader does."""
    run = agents[0]
    chain: list[tuple[str | None, Span]] = []
    in_control = run
    for span in agents[1:]:
        name = agent_name(span)
        transfer = _transfer(in_control, name, span.start, below)
        invocation = _invocation(span, below)
        if transfer is None or invocation is None or invocation != _invocation(in_control, below):
            run, chain, in_control = span, [], span  # a run of its own: a next invocation
            continue
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
        found.agents.append(span)
        in_control = span


def _own_spans(agent: Span, below: Mapping[tuple[str, str], list[Span]]) -> list[Span]:
    """The spans under ``agent``, not those of the agents run inside it (an ``AgentTool``'s run
    is an invocation of its own), in start order."""
    out: list[Span] = []
    todo = list(below.get((agent.trace_id, agent.span_id), ()))
    while todo:  # a stack, not recursion: spans may nest thousands deep
        span = todo.pop()
        if span.op == "invoke_agent":
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
        if span.op != "execute_tool" or span.attributes.get("gen_ai.tool.name") != TRANSFER:
            continue
        args = tool_arguments(span)
        named = args.get("agent_name") if isinstance(args, Mapping) else None
        if (args is None or named == target) and 0 < iso_nanos(span.ended_at) <= before:
            found = span
    return found


def answer_at_top(transcript: Transcript, hosts: list[ToolCall]) -> Transcript:
    """``transcript`` with the closing text of each turn that ended inside a handover shown at
    the top level, after the call: ``hosts`` are the top-level ``transfer_to_agent`` calls that
    hold a handed-over agent's run. A turn ends inside one when such a call is its last entry;
    its answer is the last entry of the innermost run of the chain, when that is text. The
    transcript returned is a new one when an answer moved (the model has no removal: views key
    on ids that never go away), its entries keeping their ids; else ``transcript`` itself."""
    entries = transcript.entries
    ends = [i for i, e in enumerate(entries) if isinstance(e, UserMessage)] + [len(entries)]
    answers: dict[int, AssistantText] = {}
    for end in ends:
        last = entries[end - 1] if end else None
        if isinstance(last, ToolCall) and any(last is host for host in hosts):
            answer = _taken_answer(transcript, last)
            if answer is not None:
                answers[end] = answer
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


def _taken_answer(owner: Transcript, call: ToolCall) -> AssistantText | None:
    """The closing text of the run ``call`` holds, or of the run a handover at its end holds
    (innermost first), taken out of that run's transcript; None when that run ends otherwise."""
    while True:
        child = call.subagent.transcript if call.subagent is not None else None
        last: Any = child.entries[-1] if child is not None and child.entries else None
        if child is None or last is None:
            return None
        deeper = last.subagent if isinstance(last, ToolCall) and last.name == TRANSFER else None
        if deeper is not None and deeper.transcript is not None:
            owner, call = child, last
            continue
        if not isinstance(last, AssistantText) or call.subagent is None:
            return None
        rest = Transcript(child.entries[:-1], metadata=child.metadata, warnings=child.warnings)
        rest.accounting = child.accounting
        owner.update(call, subagent=dataclasses.replace(call.subagent, transcript=rest))
        return last


def leave_out_relayed_steps(spans: list[Span]) -> None:
    """Take out of the requests ADK's own tracer recorded the user-role contents in which the
    ADK relays the steps of other agents of the session to the agent it calls the model for
    (:data:`_RELAYED`): each restates an event of another agent, which the trace holds as that
    agent's own spans. Read as messages they were the user speaking (a handed-over agent's
    history, and the next turn's when the agent handed to keeps control); the ADK reader, which
    reads the events themselves, never shows them. Only those whose agents all ran in
    ``spans`` (an agent span names each) are taken out: a trace without an agent's spans shows
    that agent's steps as the ADK relayed them, as before."""
    ran = {agent_name(s) for s in spans if s.op in ("invoke_agent", "AGENT")}
    for span in spans:
        a = span.attributes
        if ADK_EVENT_ID not in a and ADK_LLM_REQUEST not in a:
            continue
        targets = [a, *(attrs for name, attrs in span.events if name == _DETAILS_EVENT)]
        for held in targets:
            value = held.get(_INPUT)
            if isinstance(value, str) and _RELAYED in value:
                messages = json_value(value)
                if isinstance(messages, list):
                    kept = [m for m in messages if not _relayed_by(m, ran)]
                    if len(kept) < len(messages):
                        held[_INPUT] = text_value(kept)


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
