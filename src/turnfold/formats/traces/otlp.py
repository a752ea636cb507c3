"""OpenTelemetry traces as OTLP JSON (spec H-4), with GenAI or OpenInference attributes.

Input: what the OTLP file exporters write, one ``ExportTraceServiceRequest`` per line
(``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``) or one such
document. Span ids are hex as the OTLP JSON encoding says, or base64 as a plain protobuf JSON
mapping writes them; ``intValue`` may be a string. Also spans as the SDK's ``ConsoleSpanExporter``
prints them (``ReadableSpan.to_json()``: ``context`` ids with ``0x``, ``parent_id``, ISO times,
plain attributes), one a line or a JSON list of them (:func:`.spans.is_console_span`), and a Jaeger
export (``{"data": [{"traceID", "spans": [{"tags", "references", "logs"…}]}]}``, what its UI
downloads: :func:`.spans.jaeger_traces`). A span written again (a processor printing each span as it
starts and as it ends) is read once, the copy that ended (``span/(repeated)``). Every span is
one record of the accounting, typed ``span/<operation>``: the GenAI ``gen_ai.operation.name``
(``chat``, ``execute_tool``, ``invoke_agent``…; LiteLLM's call types read as theirs; an
``invoke_workflow``, as opentelemetry-util-genai and Google ADK write around a run, an
``invoke_agent``), the
OpenInference ``openinference.span.kind`` (``LLM``, ``TOOL``, ``AGENT``, ``CHAIN``…), older
OpenLLMetry's ``llm.request.type``, OpenLLMetry's decorators' ``traceloop.span.kind`` (an
``@tool`` an ``execute_tool``, an ``@agent`` or ``@workflow`` an ``invoke_agent``, an ``@task``
a ``task``), the Vercel AI SDK's ``ai.operationId`` or, for Google ADK 1.x's agent span named
``agent_run [<name>]`` with no attribute, an ``invoke_agent`` (:func:`.spans.operation`); spans
of none (HTTP, database) are ``span/(other)``, left out, and so are Strands'
``execute_event_loop_cycle`` spans and OpenLLMetry's tasks (``span/task``: the spec has no
entry kind for a step, so its spans are read as its run's); a span under a span left out hangs
from the nearest span read above it (:func:`reparent`: Strands starts every model and tool
span inside an event-loop cycle).

One conversation is one transcript: a trace belongs to the conversation its spans name
(``gen_ai.conversation.id``, else OpenInference's ``session.id``), else it is a conversation of
its own; traces naming the same conversation are one transcript (a chat app writes a trace per
turn). A file holding several conversations is not guessed at: ``load(path, sample=ID)`` picks
one (:data:`HAS_SAMPLES`), and without it the error lists their ids.

Rebuilding the conversation from the span tree (never from the root span alone: an
``invoke_agent`` span may hold only the first prompt and the final reply):

- the spans of a conversation are taken in start order; an agent span (``invoke_agent``,
  ``AGENT``) inside another agent's tree is a sub-agent: its own spans make its own transcript,
  nested under the tool call that ran it (the ``execute_tool`` span it sits in), else under
  the unsettled call of its name a model span asked for (a smolagents managed agent, run
  inside its manager's step), else under the one call of the last response still waiting for
  its result (an agent called over A2A, traced in the same trace), else under a call of its
  own named ``invoke_agent``. An agent span among model spans outside any agent span is a
  sub-agent of the conversation they make; one right under an agent span of its name is the
  same run (OpenLLMetry's LangGraph graph and workflow spans: :meth:`_Rebuild._inner`). An
  OpenLLMetry ``@workflow`` (or a GenAI ``invoke_workflow``, named by its
  ``gen_ai.workflow.name``) is thus the session's run and an ``@agent`` in it a sub-agent, an
  agent named by its span's ``traceloop.entity.name`` (every span inside an ``@agent``
  carries that agent's ``gen_ai.agent.name``: :func:`.messages.agent_name`). An outermost
  agent span recording nothing of its own around agent spans (OpenInference's OpenAI Agents
  instrumentor's span of the SDK's trace) is read through: those are the session's runs
  (:meth:`_Rebuild._wrapper`); an agent a tool span ran is that call's sub-agent even when
  the session's agent span is missing (a run exported before it ended). Google ADK's agent
  handed over to (``transfer_to_agent``), beside the run that handed over (2.x) or inside its
  model span (1.x), is that run going on: its ``transfer_to_agent`` call holds it, the last
  agent's answer (or the error the run ended on) the turn's, as the ADK reader shows its
  session (:mod:`.adk_handovers`). The metadata's
  ``agent`` and ``outcome`` are the session's runs' (a handover's failure the run's), never a
  sub-agent's;
- a model span (``chat``, ``LLM``) gives its input and output messages: ``gen_ai.input.messages``
  / ``gen_ai.output.messages`` (JSON strings or structured values, the ``parts`` form; also on
  the ``gen_ai.client.inference.operation.details`` event), OpenInference's flattened
  ``llm.input_messages.N.message.*`` / ``llm.output_messages.N.message.*``, the older flattened
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` and the older per-message events
  (``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message``, ``gen_ai.choice``), a completion call's ``llm.prompts`` and reply
  (:func:`.messages.completion_prompts`); where OpenInference's LangChain instrumentor kept
  no flattened messages (its ``TraceConfig`` hides them), the LangChain run's inputs and
  outputs it writes as ``input.value`` / ``output.value``, LangChain's serialized messages
  (:mod:`.langchain_messages`); Google ADK's own ``call_llm`` span, its whole request and
  response (``gcp.vertex.agent.llm_request`` / ``llm_response``, :mod:`.adk_spans`). Each
  model call's input repeats the history, so
  only the messages not seen before are added (the history as a prefix, else by content);
  messages then map as Chat Completions messages do (:mod:`~turnfold.formats.openai_chat`),
  the parts of a GenAI message in their order (:func:`.messages._from_parts`, the part types of the
  semantic conventions' ``gen-ai-input-messages.json`` / ``gen-ai-output-messages.json``, and
  those pydantic-ai writes in their place, :func:`.messages.pydantic_ai_part`, ``thinking`` as
  reasoning): a ``server_tool_call`` is a :class:`~turnfold.model.ToolCall` its
  ``server_tool_call_response`` settles (:func:`.messages.server_tool_outcome`), a ``compaction`` a
  :class:`~turnfold.model.CompactionBoundary` with its summary, a ``blob`` image an image of
  the prompt, model text or tool result it is in (in a system message, where no image is
  shown, a line naming it and a warning), a ``uri`` or ``file`` part and any other blob a line
  naming it
  (never fetched); a part of a type the schemas do not define is shown by its name, with a
  warning. Strands writes Bedrock Converse content: in its older events the blocks themselves
  (``[{"text"}, {"toolUse"}, {"toolResult"}]``), in its latest mode the parts it maps them to,
  the blocks without a schema type as ``{"type": <block key>, "content"}``: both read alike
  (:func:`.messages.converse_parts`), reasoning as :class:`~turnfold.model.Thinking`, guarded and
  cited text as text, media as a line naming them (the tracer writes no bytes), cache points as
  nothing;
  usage (``gen_ai.usage.*``, ``llm.token_count.*``) and model go on the span's last text, its
  calls are one batch (one response's); a model span inside a model span that recorded usage
  is the same call traced again (a framework's span and its client instrumentor's): its usage
  is not counted twice (:meth:`_Rebuild._counted_above`); a model span with an error status is
  an :class:`~turnfold.model.AssistantError`. A trace without message content (capture is off
  by default in Google ADK, the OpenAI instrumentor, the Microsoft Agent Framework: a warning
  says so): the calls the tool spans after a model span that recorded no output make are its
  response's, one batch, the first carrying its usage; where a response's usage has no entry
  to carry it (an answer not recorded), the model spans' sum is ``metadata["usage"]``, the
  transcript's recorded total (:meth:`_Rebuild._settle_usage`); Google ADK's ``(merged
  tools)`` span, beside the spans of a response's parallel calls, is none;
- a tool span (``execute_tool``, ``TOOL``) settles the call with its id (``gen_ai.tool.call.id``,
  ``tool_call.id``, ``tool.id``; without one, the first unsettled call of its name, or of
  that call's response the one with the span's arguments: a response's calls may run in
  parallel; a Gemini call, which has none, takes that of Google ADK's tool span under its model
  span, or after it where ADK's own tracer runs the tools beside it:
  :meth:`_Rebuild._given_ids`) with its
  result (``gen_ai.tool.call.result``, ``output.value``, pydantic-ai's older ``tool_response``,
  Google ADK's ``gcp.vertex.agent.tool_response``, its ``{"result": x}`` the value ``x`` and
  its ``{"error": e}`` a failure, as the ADK reader reads them; a value that is a list of
  anything but content parts is shown whole as JSON, as the tool returned it:
  :func:`.messages.returned_content`; OpenLLMetry's and OpenInference's LangChain result is
  a serialized ``ToolMessage``, read as its content, status and call id:
  :func:`.messages.langchain_tool_message`;
  else its output messages' or Strands' ``gen_ai.choice`` event's: :func:`.messages.tool_response`;
  the AI SDK's ``ai.toolCall.result``; OpenLLMetry's ``traceloop.entity.output``, the
  function's return value; a tool message of a later model span gives it when the span has
  none, the span's status and end standing), its times, and its status: an error
  status or an ``exception`` event is ``error``, a result whose text states a failure (a
  non-zero exit code, timed out, rejected) is ``error``
  (:func:`~turnfold.formats.gemini_parts.corrected_status`), any other ended span ``success``. A
  tool span no model span asked for (content capture off, or an OpenLLMetry ``@tool`` the
  user's own code called) is a call of its own, its arguments those of
  :func:`.messages.tool_arguments` (smolagents' as the model gave them, an ``@tool``'s keyword
  arguments: :func:`.messages.traceloop_arguments`). An ``@tool`` span carries no call id: it
  settles the call of its name (and arguments) a model span read before it asked for; a
  result whose JSON says ``"status": "error"`` is the function's value, the span's status
  stands;
- an agent span's own input and output (``gen_ai.input.messages``, ``input.value`` /
  ``output.value`` as text, :func:`.messages.value_text`: smolagents' run arguments as their
  ``task``; an OpenLLMetry ``@agent`` / ``@workflow``'s ``traceloop.entity.input`` / ``output``,
  :func:`.messages.traceloop_text`) are the prompt and the reply when no model span carried
  them (Strands' reply repeats the last model text with a newline: not shown twice); its
  usage (the sum of its model calls') counts only when none of its model spans recorded any
  (:meth:`_Rebuild._run`);
- a smolagents run traced by OpenInference (its agent span has ``smolagents.*`` attributes)
  reads as the smolagents loader reads the run itself
  (:mod:`~turnfold.formats.frameworks.smolagents`): its model spans' input is the agent's
  memory written again, of which only the system prompt is read
  (:func:`.smolagents_spans.smolagents_model_messages`); the model's text (a plan, a step's thought)
  is thinking; a ``final_answer`` call is the answer, not a call, and so is the ``final_answer``
  tool span's output (JSON: a number, a list or a dict as the loader shows it, where the agent
  span writes its ``str()``); a step (``CHAIN`` span) that
  failed settles the calls it asked for that no tool span ran (an unknown tool) as ``error``,
  and an error no call of it holds (a reply read as no call or no code,
  ``AgentParsingError``) is an error notice after the step's entries;
  a ``CodeAgent``'s step (its model span offered no tools and asked for no call) is one
  ``python`` call of the code the model wrote (:func:`.smolagents_spans.smolagents_code`), its
  result and status the step's (its observations, its error), the tool spans its code ran part
  of it;
  a run that hit ``max_steps`` is a warning notice, then the reply of the model call the agent
  makes after its last step (``provide_final_answer``) as the answer (traced without model
  spans: a run that answered in none of the steps it was allowed);
  a run made with ``run(stream=True)`` records as its output every chunk of the stream joined:
  its answer is the last chunk's, once (:func:`.smolagents_spans.streamed_answer`);
  the calls of a step no model span recorded are one batch;
  a step's ``AgentGenerationError`` (its model call failed) is the run's failure, an
  :class:`~turnfold.model.AssistantError` with its message in place of the model span's;
  a run that raised has no agent span (the instrumentor never ends it): its spans, known
  by their smolagents shapes (:func:`.smolagents_spans.is_smolagents_span`), are read as
  its run, the task the one its model calls were given, a managed agent's under the
  manager's step that ran it (:meth:`_Rebuild._stand_in_missing_runs`); a call for an
  answer at ``max_steps`` that failed is that model span's error, not the text smolagents
  answers in its place;
- Gemini CLI's own spans (:mod:`.gemini_cli_spans`): ``llm_call`` a model span, its Gemini
  contents read as GenAI messages, the ``<session_context>`` briefing a notice;
  ``tool_call`` a tool span, its call id ``gen_ai.tool.call_id``, its status and result the
  CLI's ``CompletedToolCall`` (corrected by the result's text, as the chat recordings' are);
  ``agent_call`` a sub-agent run by the ``invoke_agent`` call it sits in; the scheduler's
  ``schedule_tool_calls`` and the interactive ``user_prompt`` / ``system_prompt`` turns read
  through. A value the tracer cut at 10,000 characters is read as far as it is whole, and the
  cut is warned of with its span;
- metadata (H-6): ``session_id`` (the conversation), ``agent`` (``gen_ai.agent.name``,
  ``agent.name``), ``model`` (not OpenLLMetry's placeholder ``unknown``: its LangChain
  metadata's ``ls_model_name`` then; an OpenInference LangChain span's response metadata
  where it has no ``llm.model_name``), ``outcome`` ``error`` when the outermost agent span
  failed; an agent span's error that repeats the one just shown (the exception of a model
  call passed up, worded by each span its own way) is shown once.

Limits: the spans of a file are held in memory to rebuild the tree (a conversation's tree can
start at its last line); one line is parsed whole by the reader (:mod:`turnfold.formats.source`).

The reader is this module: detection, the rebuilding of a conversation from its span tree
(the builder) and reading; it imports the pieces, which never import it:
:mod:`.spans` (the :class:`~.spans.Span` type and the wire forms decoded into it),
:mod:`.messages` (a span's messages, calls, results and usage by each convention) and
:mod:`.smolagents_spans` (a smolagents run traced by OpenInference). A name with a leading
underscore is private to this package.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    NameSet,
    as_int,
    as_list,
    describe_args,
    result_kind,
    text_result,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, unselected
from turnfold.formats.frameworks.smolagents import (
    CODE_TOOL,
    CODE_TOOL_SHOWN,
    answer_text,
    max_steps_notice,
)
from turnfold.formats.frameworks.strands import thinking_of
from turnfold.formats.gemini import AGENT, names_gemini_cli, session_context_notice
from turnfold.formats.gemini_parts import corrected_status
from turnfold.formats.openai_chat import OpenAIChatBuilder
from turnfold.formats.openai_responses import describe_call, output_content
from turnfold.formats.source import Source, keep_warning
from turnfold.formats.traces.adk_handovers import (
    answer_at_top,
    leave_out_relayed_steps,
    nest_handovers,
)
from turnfold.formats.traces.adk_spans import (
    call_id_not_recorded,
    drop_uncaptured_placeholders,
    restore_adk_span,
    returned_none,
)
from turnfold.formats.traces.chat_keys import _FAILED, _IMAGES, _PART, _UNSHOWN
from turnfold.formats.traces.gemini_cli_spans import BRIEFING, cut_reasons, tool_call_outcome
from turnfold.formats.traces.langchain_messages import run_output_model
from turnfold.formats.traces.messages import (
    _History,
    agent_name,
    agent_span_name,
    langchain_tool_message,
    model_messages,
    server_tool_outcome,
    span_usage,
    system_instructions,
    tool_arguments,
    tool_response,
    traceloop_text,
    value_text,
)
from turnfold.formats.traces.smolagents_spans import (
    _MAX_STEPS,
    _TOOLS_OFFERED,
    GENERATION_ERROR,
    SMOLAGENTS_FINAL_ANSWER,
    _step_error,
    _thought,
    is_smolagents,
    is_smolagents_span,
    smolagents_code,
    smolagents_model_messages,
    smolagents_task,
    streamed_answer,
)
from turnfold.formats.traces.spans import (
    Span,
    Warn,
    _console_span,
    _jaeger_span,
    _span,
    is_console_span,
    iso_nanos,
    jaeger_traces,
    json_value,
    raw_spans,
)
from turnfold.formats.wording import failure, notice, result
from turnfold.model import (
    Accounting,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    ImageData,
    LoadWarning,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import Tokens, add_into, attach_usage, counts_of

NAME = "otlp"

RECORDS = Records(
    mapped={
        "span/chat": "a model call: the messages new in its input, its output, usage and model",
        "span/text_completion": "a model call, as span/chat",
        "span/generate_content": "a model call, as span/chat",
        "span/LLM": "an OpenInference model call, as span/chat",
        "span/execute_tool": "the result, times and status of the tool call with its id",
        "span/TOOL": "an OpenInference tool run, as span/execute_tool; run by a smolagents "
        "CodeAgent's code, part of that step's python call",
        "span/invoke_agent": "an agent run: the outermost is the session, nested ones sub-agents",
        "span/AGENT": "an OpenInference agent run, as span/invoke_agent",
        "span/CHAIN": "an OpenInference step: its model and tool spans are read; its own "
        "input and output only when it is the outermost span; a smolagents CodeAgent step's "
        "output and error are its python call's result; a smolagents step's error no call "
        "holds is an error notice",
        "span/create_agent": "the agent's name (metadata)",
    },
    ignored={
        "span/(other)": "spans of no GenAI operation (HTTP, database, framework internals); "
        "the spans under them are read as if under the span above them",
        "span/execute_tool (merged)": "Google ADK's record of the merged responses of calls "
        "run in parallel: each call's own span is read",
        "span/execute_event_loop_cycle": "Strands' event-loop cycles: their messages repeat "
        "those of the model and tool spans under them, which are read",
        "span/embeddings": "embedding calls carry no conversation",
        "span/EMBEDDING": "embedding calls carry no conversation",
        "span/task": "OpenLLMetry's steps of a run (an ``@task`` function, LangChain's "
        "``execute_task``): no entry kind is a step, so the model, tool and agent spans under "
        "one are read as its run's",
        "span/RETRIEVER": "retrieval steps: their documents are not messages",
        "span/RERANKER": "reranking steps: their documents are not messages",
        "span/GUARDRAIL": "guardrail checks: not part of the conversation",
        "span/EVALUATOR": "evaluations: not part of the conversation",
        "span/(other conversation)": "spans of another conversation of the file (read with "
        "sample=<conversation id>)",
        "request/(empty)": "an export request with no spans",
        "span/(repeated)": "a span written again (printed as it started and as it ended, or "
        "by two exporters): the copy that ended is read",
        "span/schedule_tool_calls": "Gemini CLI's batch of tool calls: each call's own "
        "tool_call span is read",
        "span/user_prompt": "Gemini CLI's interactive turn, written without its prompt: the "
        "llm_call spans in it carry the conversation",
        "span/system_prompt": "Gemini CLI's interactive turn it continues by itself, written "
        "without content: the llm_call spans in it carry the conversation",
    },
)

#: The operations of a model call (:func:`.spans.operation`): its span gives the messages new in
#: its input, its output and its usage; a reader of another export of these spans (Langfuse's)
#: knows a model call by them.
MODEL_OPS = NameSet({"chat", "text_completion", "generate_content", "LLM"})
_TOOL_OPS = NameSet({"execute_tool", "TOOL"})
_AGENT_OPS = NameSet({"invoke_agent", "AGENT"})
_KNOWN_OPS = NameSet(set(RECORDS.mapped) | set(RECORDS.ignored))


def record_type(op: str) -> str:
    """The accounting type of a span of operation ``op``."""
    kind = f"span/{op}"
    return kind if kind in _KNOWN_OPS else "span/(other)"


# --- detection ------------------------------------------------------------------------------


def _is_request(value: Any) -> bool:
    return isinstance(value, MAPPINGS) and isinstance(value.get("resourceSpans"), list)


def _classify(value: Any) -> int:
    if _is_request(value) or is_console_span(value) or jaeger_traces(value) is not None:
        return DISTINCTIVE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """``{"resourceSpans": [...]}`` objects: one per line, or one document; spans as
    ``ConsoleSpanExporter`` prints them, one per line or a list of them; a Jaeger export."""
    if source.is_document and isinstance(source.document, MAPPINGS):
        return Evidence.of([source.document], _classify, "no resourceSpans")
    return Evidence.of(source.head_values(), _classify, "no resourceSpans")


# --- building -------------------------------------------------------------------------------


def _repeats_reply(builder: _Builder, message: Mapping[str, Any]) -> bool:
    """Whether an agent span's reply is the text its last model span already gave: Strands'
    agent span ends with ``str(AgentResult)``, the last message's texts each followed by a
    newline (strands/agent/agent_result.py ``__str__``), so the two differ in white space."""
    text = message.get("content")
    if message.get("role") != "assistant" or not isinstance(text, str) or len(message) > 2:
        return False
    texts: list[str] = []
    for entry in reversed(builder.transcript.entries):
        if isinstance(entry, AssistantText):
            texts.append(entry.text or "")
        elif not isinstance(entry, Thinking):
            break
    return bool(texts) and "".join("".join(texts).split()) == "".join(text.split())


def _str(a: Mapping[str, Any], *keys: str) -> str | None:
    return next((a[k] for k in keys if isinstance(a.get(k), str) and a[k]), None)


#: The model names a model span may carry, the response's first; last, the LangChain
#: metadata's ``ls_model_name`` OpenLLMetry copies into its association properties.
_MODEL_KEYS = (
    "gen_ai.response.model",
    "llm.model_name",
    "ai.response.model",
    "gen_ai.request.model",
    "ai.model.id",
    "traceloop.association.properties.ls_model_name",
)
#: What OpenLLMetry's LangChain instrumentation writes as the request and response model when
#: LangChain's metadata names none (``_extract_model_name_from_association_metadata`` in
#: opentelemetry-instrumentation-langchain): no model, not one called "unknown".
_NO_MODEL = "unknown"


def _model_name(attributes: Mapping[str, Any]) -> str | None:
    """The model a model span called (:data:`_MODEL_KEYS`), else the one that answered an
    OpenInference LangChain run (its ``output.value``'s response metadata:
    :func:`.langchain_messages.run_output_model`), else the one OpenInference's request
    parameters name (``llm.invocation_parameters``, ``model_name`` as LangChain's OpenAI and
    Gemini models write it, or ``model``: its ``llm.model_name`` is the response's, which a
    call that failed never had); None where it names none."""
    for key in _MODEL_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value and value != _NO_MODEL:
            return value
    answered = run_output_model(attributes.get("output.value"))
    if answered is not None:
        return answered
    parameters = json_value(attributes.get("llm.invocation_parameters"))
    if not isinstance(parameters, MAPPINGS):
        return None
    return next((m for k in ("model_name", "model")
                 if isinstance(m := parameters.get(k), str) and m), None)  # fmt: skip


def _exceptions(span: Span) -> Iterator[tuple[str, str]]:
    """Each ``exception`` event of ``span``: its text (``<type>: <message>``) and its
    message alone, either empty where the event has none."""
    for name, attributes in span.events:
        if name == "exception":
            kind, message = attributes.get("exception.type"), attributes.get("exception.message")
            yield ": ".join(str(p) for p in (kind, message) if p), str(message or "")


def _exception_text(span: Span) -> str | None:
    return next((text for text, _ in _exceptions(span) if text), None)


def _error_texts(span: Span) -> set[str]:
    """Every way ``span`` words its error: its status message, and each ``exception``
    event's message alone and with its type. An exception raised inside a span and passed up
    is recorded again by every span it leaves, each wording it its own way (the SDK's
    ``start_as_current_span`` sets ``<type name>: <message>`` as the status, an instrumentor
    ``str(exception)``), so one error is recognised by any of them."""
    texts = {span.status_message or ""}
    for text, message in _exceptions(span):
        texts.update((text, message))
    return texts - {""}


def _is_generation_error(error: tuple[str, str] | None) -> bool:
    """Whether a smolagents step's error (:func:`_step_error`) is the failure of its model
    call that ended the run."""
    return error is not None and error[0] == GENERATION_ERROR


def _fingerprint(message: Mapping[str, Any]) -> str:
    return codec.dumps(message, default=str, sort_keys=True)


class _Calls(dict[str, ToolCall]):
    """A builder's calls by id, also in order as a list, counting the ids whose call was
    replaced (a reused id: the list changes where it does not only grow)."""

    def __init__(self) -> None:
        super().__init__()
        self.ordered: list[ToolCall] = []
        self.position: dict[str, int] = {}
        self.replaced = 0

    def __setitem__(self, key: str, value: ToolCall) -> None:
        index = self.position.get(key)
        if index is None:
            self.position[key] = len(self.ordered)
            self.ordered.append(value)
        else:
            self.ordered[index] = value
            self.replaced += 1
        super().__setitem__(key, value)


@dataclass
class _Silent:
    """A model span that recorded no output, and the usage none of its entries took yet."""

    span: Span
    usage: Usage | None
    model: str | None


class _Builder(OpenAIChatBuilder):
    """Chat messages of one agent's spans; a tool message is the result only of a call no tool
    span has settled (a tool span knows the status, the message does not)."""

    def __init__(
        self, transcript: Transcript, name: str, depth: int = 0, session: Transcript | None = None
    ) -> None:
        super().__init__(transcript, name)
        #: How many sub-agents deep this builder's transcript nests (the session's is 0): its
        #: sub-agents nest down to :data:`~turnfold.nesting.MAX_DEPTH`, no deeper.
        self.depth = depth
        #: The session's transcript, whose warnings the view shows (a sub-agent's are out of
        #: sight): what nests too deep is said there.
        self.session = transcript if session is None else session
        self._ordered = self._calls = _Calls()
        #: The calls tool spans settled, by span id, and how many spans settled each (by id).
        self.by_span: dict[str, ToolCall] = {}
        self._claimed: Counter[int] = Counter()
        #: For :meth:`unclaimed`: per name, a position of ``_calls.ordered`` before which every
        #: call of that name is claimed; valid while no call is unclaimed or replaced.
        self._cursors: dict[str, int] = {}
        self._replaced = 0
        #: The messages fed, in order, and (once needed) how many of each content.
        self.fed: list[dict[str, Any]] = []
        self._counts: Counter[str] | None = None
        self.history = _History()
        #: Server tool calls whose response has not come, oldest first.
        self._server_open: list[ToolCall] = []
        #: How many model spans' usage was put on entries (an agent span's own usage counts
        #: only where none was: :meth:`_Rebuild._run`).
        self.model_usages = 0
        #: Whether these are a smolagents run's spans (:func:`smolagents_model_messages`),
        #: whether the run's answer was given (by a model span or the ``final_answer`` tool
        #: span), the calls of each step (the ``CHAIN`` span, by id), when the run's last step
        #: started (a model span after it is the call for an answer at ``max_steps``), and
        #: whether the run was read as one that hit ``max_steps``.
        self.smolagents = False
        self.answered = False
        self.step_calls: dict[str, list[ToolCall]] = {}
        self.last_step: int | None = None
        self.hit_max_steps = False
        #: The python call of each step read as a ``CodeAgent``'s (by the step's span id): the
        #: tool spans and managed agents under the step ran from its code.
        self.code_calls: dict[str, ToolCall] = {}
        #: The last model span, when it recorded no output (content capture off): the calls
        #: the tool spans after it make are its response's (:meth:`_Rebuild._tool`).
        self.silent: _Silent | None = None
        #: The usage of every model span read, and whether some found no entry to carry it:
        #: then the sum is the transcript's recorded total (:meth:`_Rebuild._settle_usage`).
        self.usage_total: Tokens = {}
        self.unplaced = False
        #: The calls the last model span asked for.
        self.asked: list[ToolCall] = []
        #: The ids the tool spans gave calls their model span wrote without one, per tool
        #: name in the order the calls were asked for (:meth:`_Rebuild._given_ids`).
        self.given_ids: dict[str, list[str]] = {}

    def calls(self) -> dict[str, ToolCall]:
        return self._calls

    def in_step(self, step: Span, call: ToolCall) -> None:
        """Record that the smolagents step ``step`` ran ``call``."""
        calls = self.step_calls.setdefault(step.span_id, [])
        if not any(c is call for c in calls):
            calls.append(call)

    def claimed(self, call: ToolCall) -> bool:
        """Whether a tool or agent span settled ``call``."""
        return self._claimed[id(call)] > 0

    def claim(self, span_id: str, call: ToolCall) -> None:
        """Record that the tool span ``span_id`` settles ``call``."""
        previous = self.by_span.get(span_id)
        if previous is not None:  # a span id seen twice: the call it settled may be free again
            self._claimed[id(previous)] -= 1
            self._cursors.clear()
        self.by_span[span_id] = call
        self._claimed[id(call)] += 1

    def unclaimed(self, name: str, args: Any = None) -> ToolCall | None:
        """The first call named ``name`` that no tool span has settled: a tool span without a
        call id (OpenInference's often have none) is the run of the call asked for first, or,
        when the span records its ``args``, of the first of that response's calls with those
        arguments (a response's calls may run in parallel, in any order: smolagents runs them
        in a thread pool).

        Searched from where the last search for the name stopped, not from the first call:
        claimed calls stay claimed and new ones come last, so the calls before it are still
        all claimed (a replaced call resets that)."""
        calls = self._ordered
        if calls.replaced != self._replaced:
            self._replaced = calls.replaced
            self._cursors.clear()
        ordered = calls.ordered
        claimed = self._claimed
        for index in range(self._cursors.get(name, 0), len(ordered)):
            call = ordered[index]
            if call.name == name and not claimed[id(call)]:
                self._cursors[name] = index
                if args is None or call.args == args or call.batch_id is None:
                    return call
                for later in itertools.islice(ordered, index + 1, None):
                    if later.batch_id != call.batch_id:
                        break
                    if later.name == name and not claimed[id(later)] and later.args == args:
                        return later
                return call
        self._cursors[name] = len(ordered)
        return None

    def _tool_result(self, message: Mapping[str, Any], line: int) -> None:
        call_id = message.get("tool_call_id")
        # An id of another type (a list, a number) is warned about as unknown by the base class.
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is not None and call.result is not None:
            self.recognized += 1
            return
        # A tool span that settled the call without its result (pydantic-ai's before its
        # version 3 names it otherwise, content capture off on tool spans): the message gives
        # the result, the span's status and end stand.
        ran = (call.status, call.ended_at) if call is not None and self._claimed[id(call)] else None
        super()._tool_result(message, line)
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is not None and call.result is not None:
            recorded = call.status if ran is None else ran[0]
            status = (
                "error" if message.get(_FAILED) else corrected_status(recorded, call.result.text)
            )
            if status != call.status:
                self.transcript.update(call, status=status)
            if ran is not None and ran[1] != call.ended_at:
                self.transcript.update(call, ended_at=ran[1])
            images = message.get(_IMAGES)
            if images:
                shown = [*call.result.images, *(ImageData(media_type=m, data=d) for m, d in images)]
                self.transcript.update(call, result=replace(call.result, images=shown))

    # --- what the Chat shape has no place for (_from_parts) ---------------------------------

    def _message(self, message: Mapping[str, Any], line: int) -> None:
        part = message.get(_PART)
        if part is not None:
            self._part(part, line)
            return
        before = len(self.transcript.entries)
        super()._message(message, line)
        for reason in message.get(_UNSHOWN, ()):
            self.warn(reason, line)
        images = message.get(_IMAGES) if message.get("role") == "assistant" else None
        if images and len(self.transcript.entries) > before:  # not history already shown
            shown = [ImageData(media_type=m, data=d) for m, d in images]
            added = self.transcript.entries[before:]
            text = next((e for e in reversed(added) if isinstance(e, AssistantText)), None)
            if text is None:
                self._append(AssistantText(images=shown))
            else:
                self.transcript.update(text, images=[*text.images, *shown])

    def _user(self, message: Mapping[str, Any]) -> None:
        images = message.get(_IMAGES)
        if not images:
            super()._user(message)
            return
        self.recognized += 1
        text = message.get("content")
        shown = [ImageData(media_type=m, data=d) for m, d in images]
        self._append(
            UserMessage(
                text=text if isinstance(text, str) else "",
                images=shown,
                meta={"images": len(shown)},  # as the Chat and Anthropic loaders count them
            )
        )

    def _part(self, part: Mapping[str, Any], line: int) -> None:
        kind = part.get("type")
        if kind == "compaction":
            summary = part.get("content")  # the schema's unencrypted summary, when available
            summary = summary if isinstance(summary, str) and summary else None
            self._append(CompactionBoundary(summary=summary))
        elif kind == "server_tool_call":
            self._server_call(part, line)
        elif kind == "reasoningContent":  # Strands' reasoning without text (_from_parts)
            thinking = thinking_of(part.get("content"))
            if thinking is not None:
                self._append(thinking)
        elif kind == BRIEFING:  # Gemini CLI's <session_context>: the CLI speaking, no prompt
            briefing = str(part.get("content"))
            if names_gemini_cli(briefing):
                self.transcript.metadata["agent"] = AGENT
            self._append(session_context_notice(briefing))
        else:
            self._server_response(part, line)

    def _server_call(self, part: Mapping[str, Any], line: int) -> None:
        """A tool the provider runs (web search, code interpreter…): a call like any other,
        named by the part's ``name``, its arguments the ``server_tool_call`` payload; its
        response settles it, as a hosted call of the Responses API is shown."""
        payload = part.get("server_tool_call")
        name = part.get("name")
        if not (isinstance(name, str) and name) and isinstance(payload, MAPPINGS):
            name = payload.get("type")
        call_id = part.get("id")
        if not (isinstance(call_id, str) and call_id):  # the schemas' id is optional
            call_id = f"server_tool_call@{line}.{len(self.transcript.entries)}"
        name = name if isinstance(name, str) else ""
        call = self._new_call(call_id, name, payload, f"msg-{line}", None, line)
        self._calls[call_id] = call
        self._server_open.append(call)

    def _server_response(self, part: Mapping[str, Any], line: int) -> None:
        """A server tool's response settles the call with its id; without an id, the last
        server call still waiting for one."""
        call_id = part.get("id")
        call: ToolCall | None = None
        if isinstance(call_id, str) and call_id:
            call = self._calls.get(call_id)
        elif self._server_open:
            call = self._server_open[-1]
        response = part.get("server_tool_call_response")
        if call is None:
            self.warn(f"server tool response for an unknown call id {call_id!r}", line)
            name = response.get("type") if isinstance(response, MAPPINGS) else None
            own = call_id if isinstance(call_id, str) and call_id else f"server_tool@{line}"
            call = self._new_call(
                own, name if isinstance(name, str) else "", None, None, None, line
            )
            self._calls[own] = call
        self._server_open = [c for c in self._server_open if c is not call]
        if call.result is not None:  # settled already: the response is repeated history
            return
        status, result = server_tool_outcome(response)
        self.transcript.update(call, status=status, result=result)

    def add_new(
        self,
        messages: list[dict[str, Any]],
        line: int,
        history: _History | None = None,
    ) -> list[dict[str, Any]]:
        """Feed the messages not fed before: after the history when it is their prefix, else
        those whose content has not been seen (a framework that trims or reorders history).

        Every model span repeats the history, so this runs over most of a file's messages: the
        prefix is compared as values (in C, stopping at the first difference), and the content
        counts of what was fed are kept up to date rather than recounted for each span. When
        ``messages`` extends the last input of the same agent (``history``), only its new tail
        is counted: fed counts only grow, so a message that was seen then is seen now."""
        count = len(self.fed)
        prints: dict[int, str] = {}
        if messages[:count] == self.fed:
            new = list(range(count, len(messages)))
        else:
            fed = self._fed_counts()
            start = 0
            occurrences: Counter[str] = Counter()
            if history is not None:
                last = history.counted
                if last and messages[: len(last)] == last:
                    start, occurrences = len(last), history.occurrences
            new = []
            for index in range(start, len(messages)):
                fingerprint = _fingerprint(messages[index])
                occurrences[fingerprint] += 1
                # The first fed[f] messages of content f were seen; any more are new.
                if occurrences[fingerprint] > fed[fingerprint]:
                    new.append(index)
                    prints[index] = fingerprint
            if history is not None:
                history.counted, history.occurrences = messages, occurrences
        added = [messages[i] for i in new]
        for index in new:
            message = messages[index]
            self.fed.append(message)
            if self._counts is not None:
                self._counts[prints.get(index) or _fingerprint(message)] += 1
            self.feed(message, line)
        return added

    def saw(self, messages: list[dict[str, Any]]) -> None:
        """Count as fed, without showing them, the messages of a run that goes on with this
        one's history: a Google ADK agent handed over to (:mod:`.adk_handovers`) and the run
        that handed over, each of whose later requests repeat what the other fed. A message
        this builder fed as often already adds nothing (the prompt both were given is one)."""
        fed = self._fed_counts()
        before = Counter(fed)
        occurrences: Counter[str] = Counter()
        for message in messages:
            fingerprint = _fingerprint(message)
            occurrences[fingerprint] += 1
            if occurrences[fingerprint] > before[fingerprint]:
                self.fed.append(message)
                fed[fingerprint] += 1

    def _fed_counts(self) -> Counter[str]:
        """How many messages of each content were fed: made when first needed (a file whose
        history always grows as a prefix never needs it), then kept up to date."""
        if self._counts is None:
            self._counts = Counter(_fingerprint(m) for m in self.fed)
        return self._counts


class _Rebuild:
    """The transcript of one conversation from its spans."""

    def __init__(self, spans: list[Span], name: str) -> None:
        self.name = name
        drop_uncaptured_placeholders(spans)  # Google ADK's "{}" for content not captured
        self.handovers = nest_handovers(spans)  # Google ADK: one run, handed over
        leave_out_relayed_steps(spans)  # Google ADK's restatement of other agents' steps
        self.by_id = {(s.trace_id, s.span_id): s for s in spans}
        self.roots: list[Span] = []
        for span in sorted(spans, key=lambda s: s.start):
            parent = self.by_id.get((span.trace_id, span.parent_id or ""))
            (parent.children if parent is not None else self.roots).append(span)
        self._stand_in_missing_runs()
        self.models: list[str] = []
        #: How many model spans recorded messages, and how many none (content capture off).
        self.spoken = self.silent = 0
        #: The agent spans read as the session's own runs (not its sub-agents): the agent and
        #: outcome of the metadata are theirs.
        self.runs: list[Span] = []

    def _stand_in_missing_runs(self) -> None:
        """Give the spans of a smolagents run whose agent span is missing (the run raised:
        :func:`is_smolagents_span`) a stand-in agent span, with the missing span's id, so that
        they read as that run's: the session's, or a managed agent's under the step of its
        manager that ran it (the shortest step its spans fall within, as smolagents runs a
        managed agent inside the step that called it)."""
        lost: dict[tuple[str, str], list[Span]] = {}
        for root in self.roots:
            if root.parent_id is not None and root.op not in _AGENT_OPS:
                lost.setdefault((root.trace_id, root.parent_id), []).append(root)
        for (trace, missing), spans in lost.items():
            held = list(itertools.chain(*map(self._walk, spans)))
            if not any(map(is_smolagents_span, held)):
                continue
            # Failed when its spans say so (a step's model call, a plan's); else it may be a
            # run still going when its spans were exported, its agent span not yet ended.
            failed = any(
                s.failed and (s.op in MODEL_OPS or _is_generation_error(_step_error(s)))
                for s in held
                if s.op != "AGENT"
            )
            end = max(iso_nanos(s.ended_at) for s in spans)
            steps = [
                s for s in self.by_id.values()
                if s.op == "CHAIN" and s.trace_id == trace and s.parent_id != missing
                and s.start <= spans[0].start and iso_nanos(s.ended_at) >= end
            ]  # fmt: skip
            step = min(steps, key=lambda s: iso_nanos(s.ended_at) - s.start, default=None)
            agent = Span(
                trace_id=trace,
                span_id=missing,
                parent_id=step.span_id if step is not None else None,
                name="",
                op="AGENT",
                start=spans[0].start,
                started_at=spans[0].started_at,
                ended_at=max((s.ended_at for s in spans if s.ended_at), default=None)
                if failed
                else None,
                attributes={},
                events=[],
                failed=failed,
                status_message=None,
                line=spans[0].line,
                children=spans,
                missing=True,
            )
            self.roots = [r for r in self.roots if all(r is not s for s in spans)]
            self.by_id[(trace, missing)] = agent
            if step is None:
                self.roots.append(agent)
                self.roots.sort(key=lambda s: s.start)
            else:
                step.children.append(agent)
                step.children.sort(key=lambda s: s.start)

    def transcript(self) -> Transcript:
        transcript = Transcript(metadata={"source_format": NAME})
        builder = _Builder(transcript, self.name)
        scope: list[Span] = []
        for root in self.roots:
            if root.op in _AGENT_OPS and self._wrapper(root):
                scope += [s for child in root.children for s in self._walk(child)]
            else:
                scope += [root] if root.op in _AGENT_OPS else self._walk(root)
        scope.sort(key=lambda s: s.start)
        self._scope(builder, scope, outermost=True)
        self._settle_usage(builder)
        hosts = [
            builder.by_span[s] for s in sorted(self.handovers.transfers) if s in builder.by_span
        ]
        transcript = answer_at_top(transcript, hosts)
        if self.silent and not self.spoken:
            reason = (
                "the trace records no message content (its instrumentation's content capture "
                "was off): prompts, the model's texts and most tool arguments and results are "
                "not in it"
            )
            transcript.warnings.append(LoadWarning(reason=reason, source=self.name))
        if self.runs:
            name = agent_name(self.runs[0])
            if name:
                transcript.metadata["agent"] = name
            if any(a.failed for a in [*self.runs, *self.handovers.agents]):
                transcript.metadata["outcome"] = "error"
        if self.models:
            transcript.metadata["model"] = self.models[0]
        return transcript

    def _wrapper(self, span: Span) -> bool:
        """Whether an outermost agent span only wraps the agent runs under it: it records no
        agent name, messages, input, output, usage or failure of its own. OpenInference's
        OpenAI Agents instrumentor starts one such ``AGENT`` span per trace of the SDK, named
        by its workflow (``on_trace_start``: ``"Agent workflow"``, no other attribute), around
        the agent runs: those are the session's own runs (a handoff's one after another),
        not sub-agents of a session with no prompt."""
        a = span.attributes
        if span.failed or span.missing or agent_name(span) or span_usage(a) is not None:
            return False
        if any(model_messages(span)) or value_text(a.get("input.value"), prompt=True):
            return False
        if value_text(a.get("output.value"), prompt=False):
            return False
        if traceloop_text(a, prompt=True) or traceloop_text(a, prompt=False):
            return False
        inside = (s for child in span.children for s in self._walk(child))
        return any(s.op in _AGENT_OPS for s in inside)

    def _inner(self, span: Span) -> list[Span]:
        """The spans of an agent's run below its agent span; an agent span of the same name
        right under it is the same run again, read through (OpenLLMetry's LangGraph
        instrumentation writes ``invoke_agent`` for the graph, and again for its workflow)."""
        name = agent_name(span)
        inner: list[Span] = []
        todo = span.children[::-1]  # a stack, not recursion: spans may nest thousands deep
        while todo:
            child = todo.pop()
            same = child.op in _AGENT_OPS and name is not None
            if same and agent_name(child) == name:
                todo += child.children[::-1]
            else:
                inner += self._walk(child)
        return inner

    def _walk(self, span: Span) -> list[Span]:
        """``span`` and its descendants, stopping at (and including) agent spans."""
        out: list[Span] = []
        todo = [span]  # a stack, not recursion: spans may nest thousands deep
        while todo:
            current = todo.pop()
            out.append(current)
            if current.op not in _AGENT_OPS:
                todo += current.children[::-1]
        return out

    def _scope(self, builder: _Builder, spans: list[Span], *, outermost: bool = False) -> None:
        """Spans of one agent, in start order; an agent span in the outermost scope is the
        session's own run (a sub-agent where a tool span read above it ran it, or where the
        outermost scope holds model spans outside any agent span and one call of the last of
        them waits for its result: the session's conversation ran it), in an agent's scope a
        sub-agent."""
        talks = outermost and any(s.op in MODEL_OPS for s in spans)
        step: Span | None = None  # the smolagents step whose spans come now
        for span in spans:
            if step is not None and self._step_of(span) is not step:
                self._step_ended(builder, step)
                step = None
            if builder.smolagents and span.op == "CHAIN":
                step = span
            if span.op in _AGENT_OPS:
                # An agent a tool span ran is that call's sub-agent even at the top: the
                # session's agent span is missing (a run still going when its spans were
                # exported: the agent span ends last) and its tool spans are roots.
                ran = self._host_call(builder, span) is not None
                if outermost and not (ran or (talks and self._waiting(builder) is not None)):
                    self.runs.append(span)
                    self._run(builder, span)  # the session's own agent span
                else:
                    self._subagent(builder, span)
            elif span.op in MODEL_OPS:
                self._model(builder, span)
            elif span.op in _TOOL_OPS:
                self._tool(builder, span)
            elif span.op == "CHAIN" and outermost and span.parent_id is None:
                self._agent_io(builder, span, before=True)
        if step is not None:
            self._step_ended(builder, step)

    def _run(self, builder: _Builder, span: Span) -> None:
        """An agent span's prompt, the spans of its tree, then its reply; the agent span's own
        usage only where none of its model spans recorded any. Instrumentors write on the
        agent span the sum of its model calls' usage (Strands' ``end_agent_span``:
        ``accumulated_usage``; smolagents' ``_RunWrapper``: the agent monitor's totals), which
        model spans, when there are any, record call by call: counted once, as Phoenix counts
        only LLM spans' ``llm.token_count.*`` (Arize-ai/phoenix#12775)."""
        inner = self._inner(span)
        builder.smolagents = builder.smolagents or is_smolagents(span)
        builder.answered = builder.hit_max_steps = False
        builder.last_step = max((s.start for s in inner if s.op == "CHAIN"), default=None)
        self._system(builder, span)
        if span.missing:
            self._agentless_run(builder, sorted(inner, key=lambda s: s.start))
        else:
            self._agent_io(builder, span, before=True)
        start, counted = len(builder.transcript.entries), builder.model_usages
        self._scope(builder, sorted(inner, key=lambda s: s.start))
        if builder.smolagents and not (builder.answered or builder.hit_max_steps or span.failed):
            self._max_steps(builder, span, sum(1 for s in inner if s.op == "CHAIN"))
        self._agent_io(builder, span, before=False)
        if builder.model_usages == counted:
            usage = span_usage(span.attributes)
            attach_usage(builder.transcript.entries[start:], usage, builder.transcript)

    def _agentless_run(self, builder: _Builder, spans: list[Span]) -> None:
        """A smolagents run whose agent span is missing (its run raised: the instrumentor
        then never ends it, :func:`is_smolagents_span`; :meth:`_stand_in_missing_runs`): its
        steps, model and tool spans read as the run's, the task the one its model calls were
        given (:func:`smolagents_task`), else the prompt of its only call, a plan's (whose
        template holds the task); none without model spans, and then said."""
        builder.smolagents = True
        inputs = [model_messages(s)[0] for s in spans if s.op in MODEL_OPS]
        task = next((t for each in inputs if (t := smolagents_task(each)) is not None), None)
        if task is None and inputs:
            prompts = [m.get("content") for m in inputs[0] if m.get("role") == "user"]
            task = next((p for p in prompts if isinstance(p, str) and p), None)
        if task is None:
            reason = (
                "the trace has no agent span for this smolagents run (OpenInference's "
                "instrumentor exports none for a run that raised) and no model span giving "
                "its task: the task is not shown"
            )
            keep_warning(builder.transcript.warnings, LoadWarning(reason=reason, source=self.name))
            return
        builder.add_new([{"role": "user", "content": task}], spans[0].line)
        self._stamp(builder, 1, spans[0].started_at)

    def _agent_io(self, builder: _Builder, span: Span, *, before: bool) -> None:
        inputs, outputs = model_messages(span)
        if not inputs and not outputs:
            key = "input.value" if before else "output.value"
            text = value_text(span.attributes.get(key), prompt=before)
            text = text or traceloop_text(span.attributes, prompt=before)
            if not before and builder.smolagents:  # a streamed run's: the chunks, joined
                streamed = streamed_answer(span)
                text = text if streamed is None else streamed
            if text:
                role = "user" if before else "assistant"
                (inputs if before else outputs).append({"role": role, "content": text})
        if not before and builder.answered:
            outputs = []  # smolagents' str(answer) of the answer its final_answer call gave
        messages = inputs if before else [m for m in outputs if not _repeats_reply(builder, m)]
        if messages:
            fed = builder.add_new(messages, span.line)
            self._stamp(builder, len(fed), span.started_at if before else span.ended_at)
        if before or not span.failed:
            return
        told = span.status_message or _exception_text(span)
        failed = (AssistantError(message=told, timestamp=span.ended_at) if told
                  else failure("reader.agent_run_failed", timestamp=span.ended_at))  # fmt: skip
        entries = builder.transcript.entries
        last = entries[-1] if entries else None
        # Said already: a stand-in's run by its error, or the exception a span inside the
        # agent's raised, which OpenTelemetry records again on every span it passes through.
        said = isinstance(last, AssistantError) and (
            span.missing or last.message == failed.message or last.message in _error_texts(span)
        )
        if not said:
            builder.transcript.append(failed)

    def _system(self, builder: _Builder, span: Span) -> None:
        """``gen_ai.system_instructions`` of a model or agent span (a span attribute, or on
        the details event as Strands' latest mode writes it) as the system prompt."""
        system = json_value(system_instructions(span))
        if isinstance(system, list):
            texts = [p.get("content") for p in system if isinstance(p, MAPPINGS)]
            system = "\n\n".join(t for t in texts if isinstance(t, str))
        if isinstance(system, str) and system and "system" not in builder.transcript.metadata:
            builder.transcript.metadata["system"] = system

    def _stamp(self, builder: _Builder, count: int, when: str | None) -> None:
        """Give the entries the last messages added their span's time (the source has no
        per-message times)."""
        if count and when is not None:
            for entry in builder.transcript.entries[-count:]:
                if entry.timestamp is None:
                    entry.timestamp = when

    def _model(self, builder: _Builder, span: Span) -> None:
        inputs, outputs = model_messages(span, builder.history)
        outputs = self._given_ids(builder, span, outputs, asked=True)
        inputs = self._given_ids(builder, span, inputs, asked=False)
        for reason in cut_reasons(span):
            builder.warn(reason, span.line)
        if inputs or outputs:
            self.spoken += 1
        else:
            self.silent += 1
        step = self._code_step(span, outputs) if builder.smolagents else None
        shown = outputs
        forced = builder.smolagents and self._forced_answer(builder, span)
        if builder.smolagents:  # a CodeAgent's step: its thought and code (_code_action)
            inputs, shown, builder.answered = smolagents_model_messages(
                inputs, outputs if step is None else [], forced=forced
            )
        self._system(builder, span)
        before = len(builder.transcript.entries)
        builder.add_new(inputs, span.line, builder.history)
        if forced:  # as the loader shows the step smolagents records for it
            builder.transcript.append(max_steps_notice())
            builder.hit_max_steps = True
        for entry in builder.transcript.entries[before:]:
            entry.timestamp = entry.timestamp or span.started_at
        middle = len(builder.transcript.entries)
        builder.add_new(shown, span.line)
        if step is not None:
            self._code_action(builder, span, step, outputs)
        model = _model_name(span.attributes)
        if model:
            self.models.append(model)
        builder.asked = []
        for entry in builder.transcript.entries[middle:]:
            entry.timestamp = entry.timestamp or span.ended_at
            if isinstance(entry, AssistantText):
                entry.model = entry.model or model
            if isinstance(entry, ToolCall):
                # One model span is one response: its calls one batch (the spans of a trace
                # are often all on one line, which the builder would make one batch of).
                entry.batch_id = f"span-{span.span_id}"
                entry.started_at = entry.started_at or span.ended_at
                builder.asked.append(entry)
                if builder.smolagents and step is None:
                    builder.step_calls.setdefault(span.parent_id or "", []).append(entry)
        usage = span_usage(span.attributes)
        if usage is not None and self._counted_above(span):
            # The same call traced twice: a framework's model span and, inside it, its client
            # instrumentor's (OpenInference's OpenAI Agents and OpenAI instrumentors together,
            # LangChain's and the provider's): its usage is the outer span's, counted once,
            # as MLflow aggregates a trace's usage (spans under one that has usage skipped).
            usage = None
        carrier = None
        if usage is not None:
            response = _str(span.attributes, "gen_ai.response.id")
            usage.response_id = response  # one chat span is one response (U-1)
            builder.model_usages += 1
            add_into(builder.usage_total, counts_of(usage))
            carrier = attach_usage(builder.transcript.entries[middle:], usage, builder.transcript)
        self._unsilence(builder)
        if not outputs and not span.failed:
            builder.silent = _Silent(span, usage if carrier is None else None, model)
        elif usage is not None and carrier is None:
            builder.unplaced = True
        if forced and span.failed:
            # smolagents gives the failure as the run's answer ("Error in generating final
            # LLM output", provide_final_answer), which the agent span writes as the str()
            # of its content: this model span's error says it.
            builder.answered = True
        step = self._step_of(span) if builder.smolagents else None
        if span.failed and not (step is not None and _is_generation_error(_step_error(step))):
            told = span.status_message or _exception_text(span)
            builder.transcript.append(
                AssistantError(message=told, timestamp=span.ended_at) if told
                else failure("reader.model_call_failed", timestamp=span.ended_at)
            )  # fmt: skip

    def _given_ids(
        self, builder: _Builder, span: Span, messages: list[dict[str, Any]], *, asked: bool
    ) -> list[dict[str, Any]]:
        """``messages`` with the ids of their calls that have none, where a tool span gives
        it. Gemini's calls carry no id: Google ADK gives each call of a response one
        (``adk-…``, ``populate_client_function_call_id``) after OpenInference's instrumentor
        has written the response, and takes it out again before the next request. Its tool
        spans, which run inside the model span that asked for them, carry it
        (``gen_ai.tool.call.id``). A response's calls (``asked``) take the ids of the tool
        spans under its span, in order by name; a later span's history, its calls and the
        tool messages answering them (by name, no call id either), the ids given so far, in
        order by name, as the history repeats them. ADK's own tracer runs a response's tools
        after its ``call_llm`` span ended, beside it: where no tool span is under the model
        span, those after it up to the next model span give the ids
        (:meth:`_following_tools`). Other id-less calls are left as they are (warned of by
        the builder)."""
        if not asked and not builder.given_ids:
            return messages
        runs: dict[str, list[str]] = {}
        if asked:
            tools = sorted(self._walk(span)[1:], key=lambda s: s.start)
            if not any(t.op in _TOOL_OPS for t in tools) and any(
                not c.get("id") for m in messages for c in as_list(m.get("tool_calls"))
            ):
                tools = self._following_tools(span)
            for tool in tools:
                # A Google ADK tool span that does not record the call's id (a tool that
                # raised) gives one of its own: not ADK's placeholder, which others share.
                own = (f"span-{tool.span_id}" if call_id_not_recorded(tool)
                       else _str(tool.attributes, "gen_ai.tool.call.id", "tool.id"))  # fmt: skip
                name = _str(tool.attributes, "gen_ai.tool.name", "tool.name")
                if tool.op in _TOOL_OPS and own and name and own not in builder.calls():
                    runs.setdefault(name, []).append(own)
            if not runs:
                return messages
        seen: Counter[tuple[str, str]] = Counter()  # (role, tool name): id-less ones so far

        def given(role: str, name: Any) -> str | None:
            if not isinstance(name, str):
                return None
            index = seen[(role, name)]
            seen[(role, name)] += 1
            ids = runs.get(name, []) if asked else builder.given_ids.get(name, [])
            if asked and index < len(ids):
                builder.given_ids.setdefault(name, []).append(ids[index])
            return ids[index] if index < len(ids) else None

        out = []
        for message in messages:
            calls = message.get("tool_calls") if message.get("role") == "assistant" else None
            if isinstance(calls, list) and any(not c.get("id") for c in calls):
                filled = []
                for call in calls:
                    name = (call.get("function") or {}).get("name")
                    own = None if call.get("id") else given("assistant", name)
                    filled.append({**call, "id": own} if own else call)
                message = {**message, "tool_calls": filled}
            elif not asked and message.get("role") == "tool" and not message.get("tool_call_id"):
                own = given("tool", message.get("name"))
                message = {**message, "tool_call_id": own} if own else message
            out.append(message)
        return out

    def _following_tools(self, span: Span) -> list[Span]:
        """The tool spans beside ``span`` (under its parent) that start after it, up to the
        next model span: the runs of its response's calls, where its tracer ran them outside
        its span."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        siblings = parent.children if parent is not None else self.roots
        tools: list[Span] = []
        for sibling in sorted(siblings, key=lambda s: s.start):
            if sibling is span or sibling.start < span.start:
                continue
            if sibling.op in MODEL_OPS:
                break
            if sibling.op in _TOOL_OPS:
                tools.append(sibling)
        return tools

    def _counted_above(self, span: Span) -> bool:
        """Whether a model span above ``span`` in its agent's tree recorded usage (one that
        ``span`` is the same call of)."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        while parent is not None and parent.op not in _AGENT_OPS and parent.op not in _TOOL_OPS:
            if parent.op in MODEL_OPS and span_usage(parent.attributes) is not None:
                return True
            parent = self.by_id.get((parent.trace_id, parent.parent_id or ""))
        return False

    def _unsilence(self, builder: _Builder) -> None:
        """The calls of the last model span that recorded no output have all come: its
        usage, if none of them took it, is carried by no entry."""
        if builder.silent is not None and builder.silent.usage is not None:
            builder.unplaced = True
        builder.silent = None

    def _settle_usage(self, builder: _Builder) -> None:
        """Where some model span's usage has no entry to carry it (a trace without message
        content: a response that was only text), the model spans' sum is the transcript's
        recorded total, so that the session's tokens are all counted."""
        self._unsilence(builder)
        if builder.unplaced and builder.usage_total:
            builder.transcript.metadata["usage"] = dict(builder.usage_total)

    def _tool(self, builder: _Builder, span: Span) -> None:
        a = span.attributes
        message = langchain_tool_message(span)
        # Google ADK's "<not specified>" (a tool that raised) names no call: found by name.
        call_id = None if call_id_not_recorded(span) else _str(
            a, "gen_ai.tool.call.id", "gen_ai.tool.call_id", "tool_call.id", "tool.id",
            "ai.toolCall.id")  # fmt: skip
        if call_id is None and message is not None:
            call_id = _str(message, "tool_call_id")
        call = builder.calls().get(call_id) if call_id else None
        # OpenLLMetry's decorators named a tool only traceloop.entity.name before they wrote
        # gen_ai.tool.name too.
        name = _str(
            a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name", "traceloop.entity.name"
        ) or span.name.removeprefix("execute_tool ")
        step = self._step_of(span) if builder.smolagents else None
        if builder.smolagents and name == SMOLAGENTS_FINAL_ANSWER:
            self._tool_answer(builder, span, step)
            return
        if step is not None and step.span_id in builder.code_calls:
            return  # run by the code of a CodeAgent's step: part of its python call
        args = tool_arguments(span) if call is None else None
        if call is None and call_id is None:
            call = builder.unclaimed(name, args)
        if call is None:
            own = call_id or f"span-{span.span_id}"
            # The calls one smolagents step ran, or those run after a model span that recorded
            # no output: one response's, the order of the parallel ones not recorded without
            # its model span's output (smolagents runs them in a thread pool).
            silent = builder.silent
            batch = step or (silent.span if silent is not None else None)
            call = ToolCall(
                call_id=own,
                name=name,
                args=args,
                description=describe_call(name, args, None),
                status="unknown",
                timestamp=span.started_at,
                batch_id=f"span-{batch.span_id}" if batch is not None else None,
            )
            builder.transcript.append(call)
            builder.calls()[own] = call
            if silent is not None and silent.usage is not None:
                attach_usage([call], silent.usage, builder.transcript, model=silent.model)
                silent.usage = None
        builder.claim(span.span_id, call)
        if call.args is None and args is None:
            # The model's call recorded no arguments (OpenInference writes a Gemini call's
            # only when there are some): the tool span's, where it records them.
            args = tool_arguments(span)
            if args is not None:
                builder.transcript.update(
                    call, args=args, description=describe_call(call.name, args, None)
                )
        if step is not None:
            builder.in_step(step, call)
        for reason in cut_reasons(span):
            builder.warn(reason, span.line)
        gemini = tool_call_outcome(span)
        if gemini is not None:
            # Gemini CLI's span is OK for a call that failed: the status is its output's.
            recorded, told = gemini
            told = told or call.result
            given: ToolStatus = "error" if span.failed else recorded
            builder.transcript.update(
                call,
                status=corrected_status(given, told.text if told is not None else None),
                result=told,
                started_at=span.started_at,
                ended_at=span.ended_at,
            )
            return
        if message is not None:
            text, images = output_content(message.get("content"))
            failed = message.get("status") == "error"
        else:
            text, images, failed = tool_response(span)
        status: ToolStatus
        if span.failed or _exception_text(span) or failed:
            status = "error"
            text = text or span.status_message or _exception_text(span)
        else:
            status = corrected_status("success" if span.ended_at else "unknown", text)
        builder.transcript.update(
            call,
            status=status,
            result=text_result(text, images=images)
            if text is not None or images or returned_none(span)
            else call.result,
            started_at=span.started_at,
            ended_at=span.ended_at,
        )

    def _too_deep(self, builder: _Builder, span: Span, name: str) -> None:
        """An agent span one level deeper than sub-agents nest: its call keeps its line, and
        a warning among the session's names its spans and those under it, left unread."""
        spans, todo = 0, [span]
        lines: list[int] = []
        while todo:  # a stack, not recursion: the spans under it may nest thousands deep
            current = todo.pop()
            spans += 1
            lines.append(current.line)
            todo += current.children
        first, last = min(lines), max(lines)
        what = f"sub-agent span {span.span_id}" + (f" ({name})" if name else "")
        if spans == 1:
            instead = f"its span (line {first}) is not read"
        else:
            at = f"line {first}" if first == last else f"lines {first}-{last}"
            instead = f"it and the {spans - 1:,} spans under it ({at}) are not read"
        warning = LoadWarning(
            reason=too_deep(what, builder.depth + 1, instead), line=first, source=self.name
        )
        keep_warning(builder.session.warnings, warning)

    def _subagent(self, builder: _Builder, span: Span) -> None:
        name = agent_name(span) or agent_span_name(span)
        child: Transcript | None = None
        # Each level is read by recursion (some ten frames): sub-agents nest down to every
        # reader's bound, so a trace of agents thousands deep does not end the load.
        if builder.depth >= MAX_DEPTH:
            self._too_deep(builder, span, name)
        else:
            child = Transcript(metadata={"source_format": NAME})
            sub = _Builder(child, self.name, builder.depth + 1, builder.session)
            # A run handed over to (Google ADK) goes on with the session's history: what one
            # of them fed, the other has seen.
            handed = any(span is a for a in self.handovers.agents)
            if handed:
                sub.saw(builder.fed)
            self._run(sub, span)
            self._settle_usage(sub)
            if handed:
                builder.saw(sub.fed)
        entries = child.entries if child is not None else []
        task = next((e.text for e in entries if isinstance(e, UserMessage)), None)
        subagent = SubAgent(
            name=name or None,
            task=task,
            transcript=child,
            agent_id=_str(span.attributes, "gen_ai.agent.id"),
            tool_count=len(child.tool_calls()) if child is not None else None,
        )
        answer = next((e.text for e in reversed(entries) if isinstance(e, AssistantText)), None)
        status: ToolStatus = "error" if span.failed else "success" if span.ended_at else "unknown"
        host = self._host_call(builder, span)
        if host is None:  # a managed agent a CodeAgent's code called: its step's python call
            step = self._step_of(span) if builder.smolagents else None
            host = builder.code_calls.get(step.span_id) if step is not None else None
            host = host if host is not None and host.subagent is None else None
        if host is not None:
            builder.transcript.update(host, subagent=subagent)
            return
        # An agent called as a tool of its name with no tool span (a smolagents managed agent,
        # run by its manager's step): the call the model asked for; else the one call of the
        # last response still waiting for its result (an agent called over the network, A2A:
        # its spans in the trace, the call's tool no span of its own).
        host = builder.unclaimed(name) if name else None
        if host is None:
            host = self._waiting(builder)
        if host is not None:
            builder.claim(span.span_id, host)
            given = host.args.get("task") if isinstance(host.args, dict) else None
            if isinstance(given, str) and given:  # the task before smolagents wraps it
                subagent.task = given
            result = host.result or (text_result(answer) if answer else None)
            builder.transcript.update(
                host,
                subagent=subagent,
                status=status,
                result=result,
                started_at=span.started_at,
                ended_at=span.ended_at,
            )
            return
        call = ToolCall(
            call_id=f"agent-{span.span_id}",
            name="invoke_agent",
            args={"agent": name, "prompt": task} if task else {"agent": name},
            description=name or None,
            status=status,
            result=text_result(answer) if answer else None,
            started_at=span.started_at,
            ended_at=span.ended_at,
            timestamp=span.started_at,
            subagent=subagent,
        )
        builder.transcript.append(call)
        step = self._step_of(span) if builder.smolagents else None
        if step is not None:
            builder.in_step(step, call)

    def _code_step(self, span: Span, outputs: list[dict[str, Any]]) -> Span | None:
        """The step (``CHAIN`` span) whose model call ``span`` is, when that is a
        ``CodeAgent``'s: it offered the model no tools (a ``ToolCallingAgent`` offers its
        tools, ``final_answer`` at least, on every step's call: OpenInference's ``llm.tools``)
        and the model asked for no call but wrote text, its code."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        if parent is None or parent.op != "CHAIN" or span.failed:
            return None
        if _TOOLS_OFFERED in span.attributes or any(m.get("tool_calls") for m in outputs):
            return None
        return parent if any(isinstance(m.get("content"), str) for m in outputs) else None

    def _code_action(
        self, builder: _Builder, span: Span, step: Span, outputs: list[dict[str, Any]]
    ) -> None:
        """A ``CodeAgent``'s step as the smolagents loader reads it: the thought, then a
        ``python`` call of the code (smolagents' ``python_interpreter``, :func:`smolagents_code`),
        its result the step's observations (``output.value``: execution logs and last output),
        with the error when the step failed. A step that could not parse code from the reply
        (``AgentParsingError``) ran none: the reply is the thought, the error a notice."""
        reply = "\n".join(m["content"] for m in outputs if isinstance(m.get("content"), str))
        error = _step_error(step)
        unparsed = error is not None and error[0] == "AgentParsingError"
        thought, code = (_thought(reply), None) if unparsed else smolagents_code(reply)
        if thought:
            builder.transcript.append(Thinking(text=thought, form="text"))
        if code is None:
            return  # no call: the step's error is its notice (_step_ended)
        observations = _str(step.attributes, "output.value")
        status: ToolStatus = "success" if step.ended_at else "unknown"
        told = text_result(observations) if observations is not None else None
        if error is not None or step.failed:
            status = "error"
            message = error[1] if error is not None else step.status_message
            if message:
                told = text_result(f"{observations}\n{message}" if observations else message)
            elif observations:  # a failure the span does not explain: the reader says it
                said = {"observations": observations}
                kind = result_kind(observations)
                told = result("reader.step_failed.observed", said, kind=kind)
            else:
                told = result("reader.step_failed")
        call = ToolCall(
            call_id=f"span-{span.span_id}",
            name=CODE_TOOL_SHOWN,
            args=code,
            description=describe_args(CODE_TOOL_SHOWN, code),
            status=status,
            result=told,
            started_at=span.ended_at,
            ended_at=step.ended_at,
            meta={"tool_name": CODE_TOOL},
        )
        builder.transcript.append(call)
        builder.code_calls[step.span_id] = call
        builder.in_step(step, call)

    def _step_of(self, span: Span) -> Span | None:
        """The nearest step (``CHAIN`` span) above ``span`` in its agent's tree."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        while parent is not None and parent.op not in _AGENT_OPS:
            if parent.op == "CHAIN":
                return parent
            parent = self.by_id.get((parent.trace_id, parent.parent_id or ""))
        return None

    def _step_ended(self, builder: _Builder, step: Span) -> None:
        """A smolagents step whose spans have all been read: when it failed (its ``CHAIN``
        span's error, or the recovery event OpenInference writes for a tool error the agent
        goes on from), as the smolagents loader reads a step's error. The calls it asked for
        that no tool span ran (an unknown tool, a managed agent that raised), its only one or
        those the message names, are ``error`` with the message as their result; an error
        that no call of the step holds (a reply that could not be read as calls or code,
        ``AgentParsingError``) is an error notice."""
        error = _step_error(step)
        if error is not None and _is_generation_error(error):
            # The step's model call failed and smolagents ended the run: the run's failure,
            # as the smolagents loader shows it (the model span's own error is its cause).
            text = f"{error[0]}: {error[1]}"
            builder.transcript.append(AssistantError(message=text, timestamp=step.ended_at))
            return
        message = error[1] if error is not None else step.status_message
        if not message and not step.failed:
            return
        calls = builder.step_calls.get(step.span_id, [])
        for call in calls:
            # A managed agent whose run raised is ``error`` (its stand-in agent span) without
            # a result: the step's error is what its manager was told.
            unsettled = call.status == "unknown" or (call.status == "error" and not call.result)
            if unsettled and (len(calls) == 1 or (message and f"'{call.name}'" in message)):
                told = text_result(message) if message else result("reader.step_failed")
                builder.transcript.update(call, status="error", result=told)
        if not any(call.status == "error" for call in calls):
            at = step.ended_at
            said = f"{error[0]}: {error[1]}" if error is not None else message
            builder.transcript.append(
                SystemNotice(text=said, level="error", subtype="step", timestamp=at) if said
                else notice("reader.step_failed", level="error", subtype="step", timestamp=at)
            )  # fmt: skip

    def _forced_answer(self, builder: _Builder, span: Span) -> bool:
        """Whether a smolagents model span is the call for an answer a run that hit
        ``max_steps`` makes (``provide_final_answer``): the agent's own (a step's are in the
        step), with no step after it (a plan is followed by the step it plans)."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        if parent is None or parent.op not in _AGENT_OPS or parent.missing:
            return False  # a run whose agent span is missing raised: it asked for no answer
        return builder.last_step is None or span.start > builder.last_step

    def _max_steps(self, builder: _Builder, span: Span, steps: int) -> None:
        """A smolagents run that ended without an answer from its steps, and did not fail,
        after as many steps as it was allowed (its ``run`` arguments' ``max_steps``, else the
        agent's, ``smolagents.max_steps``), hit ``max_steps``: traced without its model calls,
        its answer is only the agent span's output, after the notice the loader shows."""
        arguments = json_value(span.attributes.get("input.value"))
        allowed = as_int(arguments.get("max_steps")) if isinstance(arguments, MAPPINGS) else None
        allowed = allowed if allowed is not None else as_int(span.attributes.get(_MAX_STEPS))
        if allowed is not None and steps >= allowed:
            builder.transcript.append(max_steps_notice(span.ended_at))

    def _tool_answer(self, builder: _Builder, span: Span, step: Span | None) -> None:
        """The ``final_answer`` tool's run: its output is the run's answer, unless a model
        span gave it (the call's argument) or its step failed (smolagents refused it). It
        records the answer itself, which the agent span's output writes as ``str()``: a
        number, a list or a dict is shown as the loader shows it (JSON, :func:`answer_text`)."""
        if builder.answered or span.failed:
            return
        if step is not None and (step.failed or _step_error(step) is not None):
            return
        raw = span.attributes.get("output.value")
        if not isinstance(raw, str):
            return
        is_json = span.attributes.get("output.mime_type") == "application/json"
        value = json_value(raw) if is_json else raw
        text = value if isinstance(value, str) else answer_text(value, None)
        before = len(builder.transcript.entries)
        builder.feed({"role": "assistant", "content": text}, span.line)
        self._stamp(builder, len(builder.transcript.entries) - before, span.ended_at)
        builder.answered = True

    def _waiting(self, builder: _Builder) -> ToolCall | None:
        """The one call of the last response still waiting for its result, if one is."""
        waiting = [c for c in builder.asked if c.result is None and not builder.claimed(c)]
        return waiting[0] if len(waiting) == 1 and waiting[0].subagent is None else None

    def _host_call(self, builder: _Builder, span: Span) -> ToolCall | None:
        """The call of the nearest tool span above ``span``, if the agent ran as a tool."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        while parent is not None and parent.op not in _AGENT_OPS:
            if parent.op in _TOOL_OPS and parent.span_id in builder.by_span:
                return builder.by_span[parent.span_id]
            parent = self.by_id.get((parent.trace_id, parent.parent_id or ""))
        return None


# --- reading --------------------------------------------------------------------------------


def conversation_of(spans: list[Span]) -> str:
    """The conversation a trace belongs to: the first ``gen_ai.conversation.id`` or
    ``session.id`` its spans carry, else its trace id."""
    for span in sorted(spans, key=lambda s: s.start):
        value = _str(span.attributes, "gen_ai.conversation.id", "session.id")
        if value:
            return value
    return spans[0].trace_id


def conversations(spans: list[Span]) -> dict[str, list[Span]]:
    """Spans by conversation id, conversations in the order their first span started."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    grouped: dict[str, list[Span]] = {}
    for trace in sorted(traces.values(), key=lambda t: min(s.start for s in t)):
        grouped.setdefault(conversation_of(trace), []).extend(trace)
    return grouped


#: ``load(path, sample=<conversation id>)`` picks one conversation of a file (formats/__init__).
HAS_SAMPLES = True


def read(source: Source, *, sample: str | None = None, epoch: int | None = None) -> Transcript:
    """The conversation of ``source`` (the one named ``sample`` when the file holds several);
    traces have no epochs, so ``epoch`` is refused."""
    if epoch is not None:
        raise ValueError(f"{source.name}: OTLP conversations have no epochs; pass sample= only")
    spans = _read_spans(source)
    grouped = conversations(spans)
    if not grouped:
        transcript = Transcript(metadata={"source_format": NAME})
        return transcript
    key = chosen_conversation(source.name, NAME, grouped, sample, "conversation id")
    held = _kinds_held(grouped)
    set_aside_other_conversations(source.accounting, sum(held.values(), Counter()) - held[key])
    return conversation_transcript(source.name, key, grouped)


def chosen_conversation(
    name: str, format: str, grouped: Mapping[str, Any], sample: str | None, id_name: str
) -> str:
    """The conversation of ``grouped`` that ``load(source, sample=)`` reads: the one named
    ``sample``, or the only one; an error naming the source and listing them otherwise."""
    # A file of several conversations is a transcript source, not a malformed one: which one is
    # meant is a selection error (L-4), as every other source of many runs raises.
    if (sample is None and len(grouped) > 1) or (sample is not None and sample not in grouped):
        raise unselected(name, list(grouped), sample, "conversation", f"<{id_name}>")
    return sample if sample is not None else next(iter(grouped))


def read_each(source: Source) -> Iterator[tuple[str | None, Transcript]]:
    """Every conversation of ``source``, the file read once, as its id (None when the file
    holds one, which ``load(path)`` reads) and the transcript ``load(path, sample=id)`` gives:
    the rows a scan makes of a file of several (``path#<conversation id>``), as it makes one
    per sample of an eval log. The file's own warnings (a line that is no JSON) are each one's.
    """
    from turnfold.formats import settle_load

    grouped = conversations(_read_spans(source))
    module = sys.modules[__name__]
    if not grouped:  # no span of a conversation: one empty transcript, as read() gives
        yield None, settle_load(Transcript(metadata={"source_format": NAME}), source, module)
    held = _kinds_held(grouped)
    every = sum(held.values(), Counter())
    for key in grouped:
        accounting = source.accounting.copy()
        set_aside_other_conversations(accounting, every - held[key])
        transcript = conversation_transcript(source.name, key, grouped)
        yield (
            (key if len(grouped) > 1 else None),
            settle_load(transcript, source, module, accounting),
        )


def _read_spans(source: Source) -> list[Span]:
    """The spans of ``source`` read (their parents left out hung from the span above); every
    span is noted in the source's accounting. A span written again (a span processor that
    prints each span as it starts and as it ends, two exporters on one stream) is read once:
    the copy that ended, else the last."""
    spans: list[Span] = []
    #: Where each span read is in ``spans``, by (trace id, span id).
    at: dict[tuple[str, str], int] = {}
    #: The parents of the spans left out, by (trace id, span id), to hang the spans read under
    #: them from the span above (:func:`reparent`).
    left_out: dict[tuple[str, str], str | None] = {}
    #: What the spans' times that are no time say (a span written twice says it once).
    said: set[str] = set()
    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        warn = said_once(source, line, said)
        traces = jaeger_traces(record)
        if is_console_span(record):
            found = [_console_span(record, line, warn)]
        elif traces is not None:
            found = [
                _jaeger_span(raw, line, warn)
                for trace in traces
                for raw in as_list(trace.get("spans"))
                if isinstance(raw, MAPPINGS)
            ]
        elif _is_request(record):
            found = [_span(raw, line, warn) for raw in raw_spans(record)]
            if not found:
                source.ignored("request/(empty)")
        else:
            source.warn("not an OTLP export request (no resourceSpans) nor a span", line)
            continue
        for span in found:
            if span is None:
                source.warn("span without a traceId or spanId skipped", line, record_type="span")
                continue
            restore_adk_span(span.attributes)  # Google ADK's own spans (.adk_spans)
            key = (span.trace_id, span.span_id)
            if key in at or key in left_out:
                source.ignored("span/(repeated)")
                earlier = at.get(key)
                if earlier is not None and (span.ended_at or not spans[earlier].ended_at):
                    spans[earlier] = span
                continue
            kind = record_type(span.op)
            source.note(kind, "ignored" if kind in RECORDS.ignored else "mapped")
            if kind in RECORDS.mapped:
                at[key] = len(spans)
                spans.append(span)
            else:
                left_out[key] = span.parent_id
    reparent(spans, left_out)
    return spans


def said_once(source: Source, line: int, said: set[str]) -> Warn:
    """A warning of ``source`` on ``line``, unless ``said`` holds its reason already (a span
    written twice says what is wrong with it once)."""

    def warn(reason: str) -> None:
        if reason not in said:
            said.add(reason)
            source.warn(reason, line)

    return warn


def conversation_transcript(name: str, key: str, grouped: Mapping[str, list[Span]]) -> Transcript:
    """The transcript of conversation ``key`` of ``grouped`` (:func:`conversations`), rebuilt
    from its spans, as every reader of spans gives one: ``session_id`` its id, and ``sample``
    its id too when ``grouped`` holds several. ``name``: the source's, for its warnings."""
    transcript = _Rebuild(grouped[key], name).transcript()
    transcript.metadata["session_id"] = key
    if len(grouped) > 1:
        transcript.metadata["sample"] = key
    return transcript


def reparent(spans: list[Span], left_out: Mapping[tuple[str, str], str | None]) -> None:
    """Hang each span whose parent was left out from the nearest span read above it (or make
    it a root). Strands' tracer starts every model and tool span of an agent inside an
    ``execute_event_loop_cycle`` span (strands/event_loop/event_loop.py,
    ``start_event_loop_cycle_span``): read through, they are the agent's own spans, not roots
    of their own that would come after the agent's reply; an HTTP server span above an agent
    is read through the same way."""
    if not left_out:
        return
    for span in spans:
        parent = span.parent_id
        for _ in range(len(left_out)):  # a bound: a malformed file's parents may loop
            if parent is None or (span.trace_id, parent) not in left_out:
                break
            parent = left_out[(span.trace_id, parent)]
        span.parent_id = parent


def _kinds_held(grouped: Mapping[str, list[Span]]) -> dict[str, Counter[str]]:
    """How many spans of each record type each conversation holds (every span read is a
    mapped one: :func:`_read_spans`)."""
    return {key: Counter(record_type(span.op) for span in spans) for key, spans in grouped.items()}


def set_aside_other_conversations(accounting: Accounting, others: Counter[str]) -> None:
    """Count the spans of the conversations not read (``others``: how many of each record
    type) as ``span/(other conversation)``, left out, in ``accounting``: they were counted as
    mapped when they were read, since choosing one conversation needs the whole file."""
    counts = accounting.counts
    for kind, count in others.items():
        counts[kind]["mapped"] -= count
        if not counts[kind]["mapped"]:
            del counts[kind]["mapped"]
            if not counts[kind]:
                del counts[kind]
    if others.total():
        accounting.note("span/(other conversation)", "ignored", others.total())
