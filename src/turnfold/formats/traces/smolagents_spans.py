"""A smolagents run traced by OpenInference (``openinference-instrumentation-smolagents``):
its spans read as the smolagents loader reads the run itself
(:mod:`~turnfold.formats.frameworks.smolagents`).

What is smolagents' own here: whether an agent span is a smolagents run's, a tool span's
arguments as the model gave them, a model span's messages as the loader shows them (its
input is the agent's memory written again; its text is thinking; a ``final_answer`` call is
the answer), a ``CodeAgent``'s reply as its thought and code, and a step's error. The reader
(:mod:`~turnfold.formats.traces.otlp`) uses these where an agent span is a smolagents run's.

Apart from the conventions every trace may use (:mod:`~turnfold.formats.traces.messages`)
because only one framework's runs need it; named apart from
:mod:`turnfold.formats.frameworks.smolagents`, which reads smolagents' own run objects.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from turnfold.formats.common import MAPPINGS, as_list, parse_arguments
from turnfold.formats.frameworks.smolagents import answer_text
from turnfold.formats.traces.spans import Span, json_value

#: The attribute OpenInference writes for the first tool a model call was offered.
_TOOLS_OFFERED = "llm.tools.0.tool.json_schema"
#: The step limit of a smolagents agent (OpenInference's ``_RunWrapper``).
_MAX_STEPS = "smolagents.max_steps"
#: smolagents' tool whose call ends a run with its answer (``FinalAnswerTool``): the answer, as
#: the smolagents loader shows it (:mod:`~turnfold.formats.frameworks.smolagents`), not a call.
SMOLAGENTS_FINAL_ANSWER = "final_answer"


def is_smolagents(span: Span) -> bool:
    """Whether an agent span is a smolagents run's (OpenInference's ``_RunWrapper`` writes
    ``smolagents.*`` attributes)."""
    return any(key.startswith("smolagents.") for key in span.attributes)


#: How a streamed run's last chunk, the step that ends smolagents' ``_run_stream``, is written:
#: the ``repr`` of the dataclass ``FinalAnswerStep(output: Any)``.
_FINAL_ANSWER_STEP = "FinalAnswerStep(output="


def streamed_answer(span: Span) -> str | None:
    """The answer of a smolagents run made with ``run(stream=True)`` (its agent span's input,
    the ``run`` arguments, says ``"stream": true``); None for a run not streamed, whose
    output is ``str()`` of its answer.

    For a streamed run OpenInference's ``_RunWrapper`` (openinference-instrumentation-smolagents
    0.1.43) writes as the output every chunk the stream yielded, their ``str()`` joined (it
    looks for ``agent.monitor.steps``, which smolagents' ``Monitor`` has not): the steps, tool
    calls and outputs the other spans show, then the step that ends the stream
    (:func:`final_answer_step`)."""
    arguments = json_value(span.attributes.get("input.value"))
    if not isinstance(arguments, MAPPINGS) or arguments.get("stream") is not True:
        return None
    output = span.attributes.get("output.value")
    return final_answer_step(output) if isinstance(output, str) else ""


def final_answer_step(output: str) -> str:
    """The answer in a streamed run's joined chunks: the output of the
    :data:`_FINAL_ANSWER_STEP` they end with, a literal (a string, a number…) as the loader
    shows it (:func:`answer_text`), anything else its ``repr`` as written; ``""`` when they end
    without one (the caller stopped reading the stream, or the run raised).

    >>> final_answer_step("ActionOutput(output=3)FinalAnswerStep(output='three')")
    'three'
    >>> final_answer_step("ActionOutput(output=3)FinalAnswerStep(output=[1, 2])")
    '```json\\n[\\n  1,\\n  2\\n]\\n```'
    >>> final_answer_step("ToolCall(name='add', arguments={}, id='call_1')")
    ''
    """
    if not output.endswith(")"):
        return ""
    # The first mark whose rest is one literal: the answer's own text may hold the mark, but
    # no earlier chunk's can, as the chunks after it are no literal.
    at = output.find(_FINAL_ANSWER_STEP)
    written = ""
    while at >= 0:
        written = output[at + len(_FINAL_ANSWER_STEP) : -1]
        try:
            value = ast.literal_eval(written)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            at = output.find(_FINAL_ANSWER_STEP, at + 1)
            continue
        return value if isinstance(value, str) else answer_text(value, None)
    return written


#: The step span OpenInference's smolagents instrumentor writes (``_StepWrapper``): named
#: ``Step <agent.step_number>``, its input the ``memory_step`` smolagents' ``_step_stream``
#: takes.
_STEP_NAME = re.compile(r"Step \d+")


def is_smolagents_span(span: Span) -> bool:
    """Whether a span is one OpenInference's smolagents instrumentor wrote inside a run: a
    step (``CHAIN``, :data:`_STEP_NAME`, input ``{"memory_step": …}``), a model call of one of
    smolagents' model classes (its input the ``messages`` of ``Model.generate``, smolagents'
    ``ChatMessage`` objects written as their ``repr``), or a tool's run (its input the
    arguments of ``Tool.__call__``). The run's own agent span is missing when the run raised
    (the ``_RunWrapper`` of openinference-instrumentation-smolagents 0.1.43 records the error
    and re-raises without ending its span, so no exporter gets it): these spans are then all
    there is of the run."""
    value = json_value(span.attributes.get("input.value"))
    if not isinstance(value, MAPPINGS):
        return False
    if span.op == "CHAIN":
        return _STEP_NAME.fullmatch(span.name) is not None and "memory_step" in value
    if span.op == "LLM":
        messages = value.get("messages")
        first = messages[0] if isinstance(messages, list) and messages else None
        return isinstance(first, str) and first.startswith("ChatMessage(")
    return span.op == "TOOL" and set(value) == _SMOLAGENTS_CALL


#: How smolagents writes a run's task into the model's input (``TaskStep.to_messages``).
_NEW_TASK = "New task:\n"


def smolagents_task(inputs: list[dict[str, Any]]) -> str | None:
    """A run's task as a model span's input holds it (the agent's memory written again: the
    task as :data:`_NEW_TASK` and the task; the last, the one being run, when the agent ran
    several without ``reset``), for a run whose agent span, which holds the task, is missing.

    >>> smolagents_task([{"role": "system", "content": "S"},
    ...                  {"role": "user", "content": "New task:\\nadd 1 and 2"}])
    'add 1 and 2'
    """
    for message in reversed(inputs):
        content = message.get("content") if message.get("role") == "user" else None
        if isinstance(content, list):  # text and images: the task is the first text part
            texts = [p.get("text") for p in content if isinstance(p, MAPPINGS)]
            content = next((t for t in texts if isinstance(t, str)), None)
        if isinstance(content, str) and content.startswith(_NEW_TASK):
            return content.removeprefix(_NEW_TASK)
    return None


#: The parameters OpenInference's smolagents instrumentor binds a tool span's ``input.value``
#: to: those of ``Tool.__call__(self, *args, sanitize_inputs_outputs=False, **kwargs)``
#: (openinference-instrumentation-smolagents ``_ToolCallWrapper``, smolagents ``tools.py``).
_SMOLAGENTS_CALL = frozenset({"args", "sanitize_inputs_outputs", "kwargs"})


def _smolagents_arguments(value: Any, attributes: Mapping[str, Any]) -> Any:
    """A smolagents tool's arguments as the model gave them, not the wrapper of its call:
    keyword arguments as they are, one dict of the tool's inputs as ``Tool.__call__`` takes it,
    positional ones (a CodeAgent's ``final_answer("done")``) by the names of the tool's inputs
    (``tool.parameters``, in the order ``forward`` takes them).

    >>> _smolagents_arguments({"args": ["done"], "sanitize_inputs_outputs": False, "kwargs": {}},
    ...                       {"tool.parameters": '{"answer": {"type": "any"}}'})
    {'answer': 'done'}
    """
    if not isinstance(value, MAPPINGS) or set(value) != _SMOLAGENTS_CALL:
        return value
    args, kwargs = value["args"], value["kwargs"]
    if not isinstance(args, list) or not isinstance(kwargs, MAPPINGS):
        return value
    if len(args) == 1 and not kwargs and isinstance(args[0], MAPPINGS):
        return args[0]
    names = json_value(attributes.get("tool.parameters"))
    names = list(names) if isinstance(names, MAPPINGS) else []
    if len(args) > len(names):
        return value
    return {**dict(zip(names, args, strict=False)), **kwargs}


def smolagents_model_messages(
    inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], *, forced: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool]:
    """A smolagents model span's messages as the smolagents loader shows its run, and whether
    the output is the run's final answer.

    Its input is the agent's memory written again for the model (``write_memory_to_messages``:
    the task after ``New task:``, a step's text apart from its calls, the calls and results as
    ``tool-call`` / ``tool-response`` text): what it holds, the agent, model and tool spans
    record themselves, so only its system prompt is read. The model's text is thinking (the
    loader's: a step's ``model_output``, the text before it acts, or a plan, ``PlanningStep``);
    a ``final_answer`` call is the answer's text; so is the text of the call smolagents makes
    for an answer when the run hit ``max_steps`` (``provide_final_answer``: ``forced``)."""
    system = [m for m in inputs if m.get("role") == "system"]
    shown: list[dict[str, Any]] = []
    answered = False
    for message in outputs:
        if forced:
            shown.append(message)
            answered = answered or bool(message.get("content"))
            continue
        if "content" in message:
            message = dict(message)
            message["reasoning_content"] = message.pop("content")
        calls = as_list(message.get("tool_calls"))
        finals = [c for c in calls if _function(c).get("name") == SMOLAGENTS_FINAL_ANSWER]
        if finals:
            message = {**message, "tool_calls": [c for c in calls if c not in finals]}
        shown.append(message)
        for call in finals:
            shown.append({"role": "assistant", "content": _final_answer(call)})
            answered = True
    return system, shown, answered


#: Where a ``CodeAgent``'s reply holds its code, with the closing tag the stop sequences of its
#: model call cut off: its default ``code_block_tags``, else the Markdown block smolagents
#: falls back to (``parse_code_blobs``; also its ``code_block_tags="markdown"``).
_CODE_BLOCKS = (
    ("</code>", re.compile(r"<code>(.*?)</code>", re.DOTALL)),
    ("\n```", re.compile(r"```(?:python|py)(.*?)\n```", re.DOTALL)),
)


def smolagents_code(text: str) -> tuple[str, str]:
    """A ``CodeAgent``'s reply as its thought and the code it ran, as smolagents parses it
    (``parse_code_blobs``, the closing tag added when the reply stops before it): the code of
    every block, the thought the text before the first without the ``Thought:`` label (as the
    smolagents loader shows it). A reply with no block was run whole: smolagents runs a reply
    that parses as Python, so an agent of other tags ran it (the default agent's closing tag
    added, no reply parses: the step failed, ``AgentParsingError``, and no code is read).

    >>> smolagents_code("Thought: add.\\n<code>\\nprint(add(a=1, b=2))\\n")
    ('add.', 'print(add(a=1, b=2))')
    """
    for closing, pattern in _CODE_BLOCKS:
        found = list(pattern.finditer(text if text.rstrip().endswith(closing) else text + closing))
        if found:
            code = "\n\n".join(match.group(1).strip() for match in found)
            return _thought(text[: found[0].start()]), code
    return "", text.strip()


def _thought(text: str) -> str:
    text = text.strip()
    return text.removeprefix("Thought:").strip()


def _function(call: Any) -> Mapping[str, Any]:
    function = call.get("function") if isinstance(call, MAPPINGS) else None
    return function if isinstance(function, MAPPINGS) else {}


def _final_answer(call: Mapping[str, Any]) -> str:
    """The answer a ``final_answer`` call gives: its ``answer`` argument, else its arguments
    (as smolagents' ``ToolCallingAgent.process_tool_calls`` takes them), shown as the
    smolagents loader shows it (:func:`~turnfold.formats.frameworks.smolagents.answer_text`)."""
    args = parse_arguments(_function(call).get("arguments"))
    answer = args.get("answer", args) if isinstance(args, MAPPINGS) else args
    return answer if isinstance(answer, str) else answer_text(answer, None)


#: The error smolagents raises out of ``run`` when a step's model call failed (its
#: ``_run_stream`` re-raises it, unlike the errors a step recovers from): the run's failure.
GENERATION_ERROR = "AgentGenerationError"


def _step_error(span: Span) -> tuple[str, str] | None:
    """The type (its class name) and message of a span's first ``exception`` event, or of the
    ``agent.step_recovery`` event OpenInference's smolagents instrumentor writes for a step's
    tool error (``AgentError.dict()``)."""
    for name, attributes in span.events:
        if name in ("exception", "agent.step_recovery"):
            message = attributes.get("exception.message", attributes.get("message"))
            if isinstance(message, str) and message:
                kind = attributes.get("exception.type", attributes.get("type"))
                kind = kind.rsplit(".", 1)[-1] if isinstance(kind, str) and kind else "AgentError"
                return kind, message
    return None
