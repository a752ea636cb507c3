"""smolagents runs (spec A-1, A-2, issue 22): an agent (``ToolCallingAgent``, ``CodeAgent``),
its ``memory``, a list of its steps, a ``RunResult``, and the saved form of the steps
(``[step.dict() for step in memory.steps]``, ``memory.get_full_steps()`` or
``get_succinct_steps()`` written as JSON), from objects, text or files.

Input shapes: a list of step records, or a document whose ``steps`` are step records (a
``RunResult.dict()``, and what :func:`plain` makes of an agent or its memory: the steps, the
system prompt, the agent's name and model, and each managed agent's own document under
``managed_agents``). ``step.dict()`` writes no type, so a record's kind is read from its keys:
``step_number`` + ``timing`` is an ``ActionStep``, ``plan`` + ``timing`` a ``PlanningStep``,
``task`` a ``TaskStep``, ``system_prompt`` alone a ``SystemPromptStep``, ``output`` alone a
``FinalAnswerStep``. :func:`plain` writes the same records from the step objects by reading
their fields (without the history each step re-sends, ``model_input_messages``, which makes
``step.dict()`` quadratic in the run's length), so objects and files read alike. Steps saved by
smolagents 1.8 to 1.18 (``step`` for ``step_number``, timing fields on the step) are read as
:func:`current_step` makes them.

Mapping:

- ``TaskStep.task`` → :class:`UserMessage` (its images counted in ``meta["task_images"]``);
  ``SystemPromptStep`` / the memory's system prompt → ``metadata["system"]``;
- ``PlanningStep.plan`` → :class:`Thinking` (the plan the agent wrote for itself);
- ``ActionStep``: ``model_output`` (the model's text before it acts, smolagents' "Thought")
  → :class:`Thinking`, a ``CodeAgent``'s code block cut out of it (the code is the call;
  with ``use_structured_outputs_internally`` the text is the JSON's ``thought``; the closing
  tag smolagents appends to an output without code is none of the model's);
  each call of ``tool_calls`` → :class:`ToolCall` with parsed arguments, the step's calls one
  batch. A failed step has ``tool_calls = None`` (``[]`` saved) and its calls only in
  ``model_output_message.tool_calls``: they are read from there. ``timing`` → every entry's
  ``timestamp`` (ISO-8601, UTC): its ``start_time``, the final answer's its ``end_time`` (the
  answer exists when the step ends); the step's number and duration in each call's ``meta``;
  ``token_usage`` → the :class:`Usage` of the step's last text (else ``usage`` of its
  first entry); the agent's ``model.model_id`` → ``AssistantText.model`` and
  ``metadata["model"]`` when the agent was given;
- status from smolagents' own signal, the step's ``error``: a step without one ran every
  call (``success``); with one (``AgentToolExecutionError``, ``AgentToolCallError``,
  ``AgentExecutionError``), its only call, or the call whose name the message quotes, is
  ``error`` with the message as its result, the others ``unknown`` (L-3). An error no call
  owns (``AgentParsingError``) is an error :class:`SystemNotice`; ``AgentMaxStepsError`` a
  warning notice, its ``action_output`` (the forced answer) the final answer; an answer a
  ``final_answer_checks`` function refused (``AgentError`` ``Check … failed with error``,
  raised after the step's calls ran) leaves the calls settled as in a step without error,
  the refused answer shown with ``meta["refused"]``, then the error notice; a
  ``final_answer`` call beside other calls of its step is refused as its output arrives
  (an ``AgentExecutionError``, the step's calls and outputs unrecorded): it is a call, not
  the answer, failed with the error as its result, after the step's other calls (``unknown``);
  a step with calls but neither ``observations`` nor ``error`` was left while its calls ran,
  by an exception smolagents does not catch: its calls are ``cancelled`` when that was the
  user's interruption, else ``unknown``;
- ``observations`` (one string per step, no call id) → the result of the step's call. For
  several calls smolagents joins their outputs with newlines in the order of their sorted
  ids, the order of ``tool_calls``: when the text has exactly one line per call each call
  gets its line; otherwise the first call holds the whole text and each call says so in
  ``meta["shared_observations"]``, since which part came from which call is not recorded.
  A failed step records no output of the calls that did run (its observations are empty);
- ``code_action`` (``CodeAgent``) → a call named ``python`` (smolagents' ``python_interpreter``,
  kept in ``meta["tool_name"]``; category command) with the code as its arguments and the
  observations (execution logs and last output) as its result;
- the ``final_answer`` tool call → :class:`AssistantText`, the final answer (not a call row):
  its observation, or, for a number, a list or a dict (of which the observation is the
  ``str()``), its JSON (:func:`answer_text`), a list's or a dict's as a fenced block (P-2,
  :func:`code_answer`); a ``CodeAgent``'s final step → its ``action_output`` (JSON when not
  text, alike); a ``FinalAnswerStep`` (in a list of streamed
  events) → the answer when no step gave one;
- managed agents (sub-agents, L-1): given the agent (``load(agent)``, or
  ``load(steps, agent=agent)``), the call that ran a managed agent holds a :class:`SubAgent`
  whose transcript is that agent's own ``memory.steps``: a ``ToolCallingAgent``'s call of its
  name, or the ``python`` call of the ``CodeAgent`` step whose code called it
  (``helper(task=…)``; its task the one the code writes out, when it does). A managed agent's
  memory keeps only its last run. It ran during the step whose recorded start and end hold
  its steps' times: that step's call of its name (the one whose ``task`` its task step
  quotes, when several) holds it, else that step's python call. One step's code calling it
  several times kept the last call's run; a step's code calling two managed agents has one
  python call, which holds the earlier run, the later a call of the agent's name of its own
  after it (``meta["called_by"]`` the python call; no model response asked for it). A run
  whose times no step holds ran outside the steps (the managed agent run on its own since):
  not nested. Only without recorded times does the last call that could have run it (of its
  name, or code calling it; the one whose task its task step quotes) hold it, a warning
  saying so when several could. A run not nested is said in a warning, its records counted
  in the accounting as warned about. Every other call of a managed agent (by name, or code that
  calls it) and, given only the parent's steps, every call whose result is smolagents'
  managed-agent report (``Here is the final answer from your managed agent '…'``, anywhere in
  a python call's logs) or error (``…request to team member '…'``) are :class:`SubAgent` with
  ``steps_missing``.

Live (:class:`Follower`, ``agent.run(task, stream=True)``): a ``ToolCall`` event shows its
call ``executing``; ``ToolOutput`` settles it ``success`` with its own observation (so live,
several calls of one step each show their own output); the ``ActionStep`` that ends the step
reconciles the step's calls (errors, timestamps, usage) as a load does; ``ChatMessageStreamDelta``
text (when the model streams) is a streaming :class:`Thinking` that its step's ``model_output``
or plan completes, held back while it may be a reply with no thought (a ``CodeAgent``'s code
alone: the stream holds the code too) and shown, when it has a thought, as the step's first
call arrives; ``PlanningStep`` and ``FinalAnswerStep`` as above; ``ActionOutput`` repeats
what its step holds. The stream carries neither a managed agent's steps nor the task (the
``TaskStep`` is written to memory before the stream starts), but the agent holds both, and
the generator ``run`` returns holds the agent (its ``self``, :func:`run_of_generator`), as
``agent=`` gives it too (``follow(events, agent=agent)``, for events that are not that very
generator). Given the agent, each step's ``ActionStep`` finds the run it made in the managed
agent's memory (by the times, as a load), so every call's run nests, not only the last one
kept (a step's code calling one agent several times: its last), and when the run ends a kept
run no step made (a run of an earlier task: ``reset=True`` clears only the agent's own
memory) is warned of, as a load warns of it; the task is its memory's
last ``TaskStep`` when the first event arrives, shown after the steps before it (a run with
``reset=False`` goes on from the earlier runs' steps, kept in memory: the whole conversation
is shown, as a load of the agent after the run shows it), and the agent's name, class, model
and system prompt are read as a load of it reads them. Without it, a managed agent's call is a
sub-agent with ``steps_missing``, as in a load of the parent's steps alone, and a followed
run has no :class:`UserMessage`. A run that hits ``max_steps`` yields its previous step
again in place of the forced answer's step: given the agent, that step (its time and
usage) is read from its memory. Without streaming a step's text arrives with its
``ActionStep``, after the step's calls. A plan is shown when its ``PlanningStep`` is
yielded; smolagents sets that step's time only after yielding it, and the plan takes that
time at the next event. Where a load can only share a step's observations
between its calls, or call a sibling of a failed call ``unknown``, the follower keeps what
each ``ToolOutput`` said; otherwise a followed run ends as a load of ``agent.memory.steps`` reads.
A run whose stream raises ends as a load of the agent in the ``except`` block reads it: a
model's ``AgentGenerationError`` fails the turn at its step's end; any error of a plan's model
call (which smolagents does not wrap, nor save a step for) fails it at the plan's start, read
off the exception's frames (``_run_stream``'s ``planning_start_time``), even before the
stream's first event; a user's interruption (``agent.interrupt()``, whose
``AgentError("Agent interrupted.")`` the next step raises, or a ``KeyboardInterrupt``) stops
it (an :class:`AbortMarker`, the calls it left running ``cancelled``), which a load reads off
the exception still held, or off the agent's ``interrupt_switch``, set until its next run.
A model call that raises mid-stream leaves its step (or plan) none of its text: the text
streamed so far stays shown before the error or the stop, cut off, dated at the step's (the
plan's) start; a load reads it off the held exception's frames (``_step_stream``'s
``chat_message_stream_deltas``, ``_generate_planning_step``'s ``plan_message_content``).

smolagents records no per-call timing (only the step's, which includes the model's
response), no reasoning of the model besides its text, and no model name in the steps.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timezone
from enum import Enum
from functools import partial
from typing import Any, TypeAlias

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    TranscriptBuilder,
    describe_args,
    fenced_json,
    parse_arguments,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.frameworks import generator_arguments
from turnfold.formats.source import Source, plain_each, type_of_record, warning_count
from turnfold.formats.wording import failure, notice, stop
from turnfold.model import (
    Accounting,
    AssistantError,
    AssistantText,
    Entry,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "smolagents"

#: The tool whose call is the agent's final answer (``smolagents.default_tools.FinalAnswerTool``).
FINAL_ANSWER_TOOL = "final_answer"
#: The name ``CodeAgent`` gives its code action's call, and the name shown for it.
CODE_TOOL, CODE_TOOL_SHOWN = "python_interpreter", "python"
#: The default ``managed_agent.report`` prompt template's opening, and the opening of the
#: error ``execute_tool_call`` raises for a managed agent: the only trace in a parent's steps
#: that a call ran a managed agent.
MANAGED_REPORT = "Here is the final answer from your managed agent '"
MANAGED_ERROR = "Error executing request to team member '"
#: Step errors that belong to a tool call rather than to the step as a whole.
_CALL_ERRORS = ("AgentToolExecutionError", "AgentToolCallError", "AgentExecutionError")
MAX_STEPS_ERROR = "AgentMaxStepsError"
#: What ``_run_stream`` raises at the next step once ``agent.interrupt()`` was called (an
#: ``AgentError`` of these words), and what a user's Ctrl-C raises through it: the run was
#: stopped, not failed.
INTERRUPTED = ("AgentError", "Agent interrupted.")
KEYBOARD_INTERRUPT = "KeyboardInterrupt"
#: The opening of the ``AgentError`` a failed ``final_answer_checks`` function raises
#: (``_validate_final_answer``): the step's calls ran, and its answer was refused.
CHECK_FAILED = "Check "
#: What ``ToolCallingAgent._step_stream`` raises as a ``final_answer`` output arrives from a
#: step that made other calls too (an answer refused; no other call of that agent raises
#: this very type: a tool's failure is an ``AgentToolExecutionError``, ``AgentToolCallError``).
REFUSED_ANSWER_ERROR = "AgentExecutionError"


def max_steps_notice(timestamp: str | None = None) -> SystemNotice:
    """The warning of a run that hit ``max_steps`` where no step records it, in the words of
    the error smolagents records then (``AgentMaxStepsError("Reached max steps.")``)."""
    return notice("reader.max_steps", level="warning", subtype="max_steps", timestamp=timestamp)


STEP_TYPES = ("SystemPromptStep", "TaskStep", "PlanningStep", "ActionStep", "FinalAnswerStep")
#: Events of ``run(stream=True)`` that a load of a list of them passes over: the steps that
#: follow them hold the same calls and outputs.
STREAM_EVENTS = ("ToolCall", "ToolOutput", "ActionOutput", "ChatMessageStreamDelta")
_UNREADABLE = "(unreadable)"
_EVENT = "(stream event)"


# --- record kinds and detection ------------------------------------------------------------


def step_kind(record: Any) -> str | None:
    """The step type of a saved step record (``step.dict()`` names none), or None."""
    if not isinstance(record, Mapping):
        return None
    timing = record.get("timing")
    if "step_number" in record and isinstance(timing, Mapping):
        return "ActionStep"
    if "plan" in record and isinstance(timing, Mapping):
        return "PlanningStep"
    if isinstance(record.get("task"), str) and set(record) <= {"task", "task_images"}:
        return "TaskStep"
    if set(record) == {"system_prompt"}:
        return "SystemPromptStep"
    if set(record) == {"output"}:
        return "FinalAnswerStep"
    return None


#: The timing fields smolagents before 1.17 kept on an action step itself.
_OLD_TIMING = ("start_time", "end_time", "duration")


def current_step(record: Any) -> Any:
    """A step record of smolagents 1.8 to 1.18 in the shape later releases write, else the
    record as it is. Before 1.19 ``ActionStep.dict()`` named the number ``step``, and before
    1.17 kept ``start_time`` / ``end_time`` / ``duration`` on the step rather than in
    ``timing``; a ``PlanningStep`` had no ``timing`` before 1.17."""
    if not isinstance(record, Mapping):
        return record
    if "step" in record and "step_number" not in record and "tool_calls" in record:
        timing = record.get("timing")
        if not isinstance(timing, Mapping) and "start_time" not in record:
            return record
        out = {k: v for k, v in record.items() if k != "step" and k not in _OLD_TIMING}
        out["step_number"] = record["step"]
        out["timing"] = timing if isinstance(timing, Mapping) else {
            name: record.get(name) for name in _OLD_TIMING
        }  # fmt: skip
        return out
    if "plan" in record and "timing" not in record and "model_output_message" in record:
        return {**record, "timing": {}}
    return record


def _classify(record: Any) -> int:
    record = current_step(record)
    kind = step_kind(record)
    if kind in ("ActionStep", "PlanningStep"):
        timing = record["timing"]
        return DISTINCTIVE if "start_time" in timing else READABLE
    if kind == "TaskStep" and "task_images" in record:
        return DISTINCTIVE
    return READABLE if kind is not None else NOT_MINE


def _steps_of(document: Any) -> list[Any] | None:
    if isinstance(document, Mapping) and isinstance(document.get("steps"), list):
        steps: list[Any] = document["steps"]
        return steps
    return None


def detect(source: Source) -> Evidence:
    """A list of saved steps (an action step's ``step_number`` and epoch ``timing`` are
    smolagents' marks), or a document whose ``steps`` are such records (``RunResult.dict()``)."""
    document = source.document if source.is_document else None
    steps = _steps_of(document)
    if steps is not None:
        evidence = Evidence.of(steps[:30], _classify, "no smolagents step in steps")
        if not evidence.marks:
            return Evidence.none("steps holds no smolagents action or planning step")
        return Evidence(share=evidence.share, marks=evidence.marks + 1)
    if isinstance(document, Mapping):
        return Evidence.none("no smolagents steps")
    return Evidence.of(source.head_values(), _classify, "no smolagents step (step_number, timing)")


# --- values --------------------------------------------------------------------------------


def _iso(epoch: Any) -> str | None:
    """An epoch time (``time.time()``) as an ISO-8601 UTC timestamp; None when unreadable."""
    if isinstance(epoch, bool) or not isinstance(epoch, (int, float)) or not math.isfinite(epoch):
        return None
    if epoch <= 0:
        return None
    try:
        return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def _duration_ms(timing: Mapping[str, Any]) -> float | None:
    bounds = _bounds(timing.get("start_time"), timing.get("end_time"))
    return (bounds[1] - bounds[0]) * 1000 if bounds is not None else None


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None
    counts = {k: raw.get(k) for k in ("input_tokens", "output_tokens")}
    counts = {k: v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)}
    return Usage(**counts) if counts else None


def _text(value: Any) -> str | None:
    """A message's content (a string, or a list of ``{"type": "text"}`` parts) as text."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [
            str(p["text"])
            for p in value
            if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return stringify(value)


#: The code block tags smolagents' ``CodeAgent`` knows (``code_block_tags``: its default and
#: ``"markdown"``), opening tags longest first.
_CODE_OPENINGS = ("<code>", "```python", "```py", "```")


def _structured_thought(text: str) -> str | None:
    """The thought of a ``CodeAgent`` run with ``use_structured_outputs_internally``: its
    model output is the JSON ``{"thought": …, "code": …}`` (``CODEAGENT_RESPONSE_FORMAT``),
    not text around a code block. None for any other text."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("code"), str):
        return None
    thought = value.get("thought")
    return thought if isinstance(thought, str) else ""


def _thought(text: str | None, code: Any) -> str | None:
    """A step's text before it acts; a ``CodeAgent``'s code block (the call's own arguments)
    cut out of it."""
    if not text:
        return None
    structured = _structured_thought(text)
    if structured is not None:
        text = structured
    elif isinstance(code, str) and code.strip():
        at = text.find(code.strip())
        if at < 0:
            # Several code blocks, which smolagents joins into one code action: the text
            # before the first of them.
            found = [i for i in (text.find(tag) for tag in _CODE_OPENINGS) if i >= 0]
            at = min(found) if found else -1
        if at >= 0:
            head = text[:at].rstrip()
            for opening in _CODE_OPENINGS:
                if head.endswith(opening):
                    head = head[: -len(opening)].rstrip()
                    break
            text = head
    else:
        text = _without_added_closing(text)
    text = text.strip()
    if text.startswith("Thought:"):  # the label smolagents' prompts ask the model to write
        text = text[len("Thought:") :].strip()
    return text or None


def _no_thought_yet(text: str) -> bool:
    """Whether streamed model text could still be a reply whose thought is empty: nothing yet
    but a ``Thought:`` label (or part of one) and the opening of a code block (or of the
    JSON of structured outputs), which :func:`_thought` cuts off.

    >>> [_no_thought_yet(t) for t in ("Thou", "Thought:\\n<co", "```py", "Thought: add.")]
    [True, True, True, False]
    """
    head = text.lstrip()
    label = "Thought:"
    if label.startswith(head):
        return True
    if head.startswith(label):
        head = head[len(label) :].lstrip()
    if not head or head.startswith("{"):
        return True
    return any(tag.startswith(head) or head.startswith(tag) for tag in _CODE_OPENINGS)


def _without_added_closing(text: str) -> str:
    """A ``CodeAgent``'s text without the closing code tag smolagents appends to every model
    output that does not end with one (so the history nudges the model to stop there): in an
    output with no code block (a parsing error) the tag closes nothing the model wrote."""
    stripped = text.rstrip()
    if stripped.endswith("</code>") and stripped.count("<code>") < stripped.count("</code>"):
        return stripped[: -len("</code>")]
    if stripped.endswith("```") and stripped.count("```") % 2:  # markdown: a fence unopened
        return stripped[: -len("```")]
    return text


def _error_of(raw: Any) -> tuple[str, str] | None:
    """A step's ``error`` (``AgentError.dict()``) as its type and message."""
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        kind = raw.get("type")
        message = raw.get("message")
        return (
            kind if isinstance(kind, str) and kind else "AgentError",
            message if isinstance(message, str) else stringify(message),
        )
    return "AgentError", stringify(raw)


def _is_check_failure(error: tuple[str, str]) -> bool:
    """Whether a step's error is a ``final_answer_checks`` function refusing its answer."""
    kind, message = error
    return kind == "AgentError" and message.startswith(CHECK_FAILED) and " failed " in message


def _is_interruption(error: Mapping[str, Any]) -> bool:
    """Whether a run's error (``{"type", "message"}``) is the user stopping it."""
    kind = error.get("type")
    return kind == KEYBOARD_INTERRUPT or (kind, error.get("message")) == INTERRUPTED


def _is_empty(record: Mapping[str, Any]) -> bool:
    """Whether an action step holds nothing of a model's response: smolagents keeps the
    response (``model_output_message``) before anything else of the step can fail, so a
    step without it, nor an error, a call or an observation, is one whose model call raised."""
    kept = ("model_output_message", "model_output", "tool_calls", "error", "observations")
    return not any(record.get(key) for key in kept) and record.get("code_action") is None


def _call_parts(raw: Any) -> tuple[str, str, Any] | None:
    """``(id, name, arguments)`` of a saved call: ``ToolCall.dict()`` or a message's
    ``ChatMessageToolCall`` (both ``{id, function: {name, arguments}}``)."""
    if not isinstance(raw, Mapping):
        return None
    function = raw.get("function")
    if isinstance(function, Mapping):
        name, arguments = function.get("name"), function.get("arguments")
    else:  # a memory ToolCall's own fields
        name, arguments = raw.get("name"), raw.get("arguments")
    if not isinstance(name, str) or not name:
        return None
    call_id = raw.get("id")
    return (call_id if isinstance(call_id, str) else "", name, parse_arguments(arguments))


def _managed_name(text: str | None) -> str | None:
    """The managed agent a call's result or error names (smolagents' default report)."""
    if not text:
        return None
    for opening in (MANAGED_REPORT, MANAGED_ERROR):
        if text.startswith(opening):
            name, quote, _ = text[len(opening) :].partition("'")
            return name if quote and name else None
    return None


def _task_of(args: Any) -> str | None:
    task = args.get("task") if isinstance(args, Mapping) else None
    return task if isinstance(task, str) and task else None


def _reported(text: str | None) -> str | None:
    """The managed agent whose report a ``CodeAgent``'s observations hold (its code printed or
    returned what the managed agent answered), the first when several."""
    at = text.find(MANAGED_REPORT) if text else -1
    return _managed_name(text[at:]) if text and at >= 0 else None


def _managed_calls(code: Any, names: Collection[str]) -> list[tuple[str, str | None]]:
    """The calls of managed agents (``names``) written in a ``CodeAgent``'s code, in the
    order written, each with its task when it is written out (``helper(task="…")``,
    ``helper("…")``); the code is read, not run, so a call in a loop is one. Code that does
    not parse ran nothing (smolagents' interpreter parses it first); nor did code too deeply
    nested to parse (Python's parser gives up with RecursionError or MemoryError).

    >>> _managed_calls("a = helper(task='x')\\nprint(helper(f'{a}'), add(1, 2))", {"helper"})
    [('helper', 'x'), ('helper', None)]
    """
    if not isinstance(code, str) or not names:
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id not in names:
                continue
            given = next((k.value for k in node.keywords if k.arg == "task"), None)
            given = given or (node.args[0] if node.args else None)
            task = given.value if isinstance(given, ast.Constant) else None
            place = (node.lineno, node.col_offset)
            found.append((place, node.func.id, task if isinstance(task, str) and task else None))
    return [(name, task) for _, name, task in sorted(found)]


def _bounds(start: Any, end: Any) -> tuple[float, float] | None:
    """A recorded start and end (epoch seconds), when both are readable and in order."""
    if _iso(start) is None or _iso(end) is None or end < start:
        return None
    return float(start), float(end)


Bounds: TypeAlias = tuple[float, float]


def _run_bounds(steps: list[Any]) -> Bounds | None:
    """From a run's first recorded step start to its last recorded step end."""
    timings = [
        s["timing"]
        for s in steps
        if isinstance(s, Mapping) and isinstance(s.get("timing"), Mapping)
    ]
    starts = [t["start_time"] for t in timings if _iso(t.get("start_time"))]
    ends = [t["end_time"] for t in timings if _iso(t.get("end_time"))]
    return _bounds(min(starts), max(ends)) if starts and ends else None


# --- the builder ---------------------------------------------------------------------------


class StepsBuilder(TranscriptBuilder):
    """Entries of smolagents steps, fed one at a time: by :func:`read` (static) and by
    :class:`Follower` (``live``, where a step's calls arrive before the step itself)."""

    def __init__(
        self,
        transcript: Transcript,
        source_name: str,
        *,
        live: bool = False,
        model: str | None = None,
        runs: Mapping[str, Any] | None = None,
        read_run: Callable[[str, Mapping[str, Any]], tuple[Transcript, Accounting]] | None = None,
        accounting: Accounting | None = None,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self.model = model
        #: The agent's managed agents (known when the agent itself was given), each with where
        #: its kept run is read: its document (a load), or the managed agent itself, whose
        #: memory holds its latest run (followed live).
        self.runs = dict(runs or {})
        self.managed = set(self.runs)
        #: A managed agent's run document as its transcript, and what reading it accounted.
        self._read_run = read_run or partial(_read_child, "<follow>")
        #: The load's accounting (none live), where a kept run not shown is counted.
        self.accounting = accounting
        #: The run of each managed agent nested so far (its document, or its first step).
        self._nested: dict[str, Any] = {}
        #: Each managed agent's kept run: what identifies it, its step count (live), its
        #: document (made once per run) and its time bounds (read once per run: every timed
        #: step looks for the runs that ran in it).
        self._documents: dict[str, tuple[Any, int, Mapping[str, Any], Bounds | None]] = {}
        #: The managed agents each ``python`` call's code calls (by the call's entry id), read
        #: once, when the call starts: the step's end looks at them again.
        self._written: dict[str, list[tuple[str, str | None]]] = {}
        #: Whether an action step recorded its start and end (see :meth:`nest_untimed`).
        self._timed = False
        #: Action steps fed so far; the step being fed is the next one (its batch id).
        self.actions = 0
        #: The calls of the step being fed (live: shown before their step arrives), by id.
        self._calls: dict[str, ToolCall] = {}
        #: The entries of the step being fed, for its timestamp and usage.
        self._entries: list[Entry] = []
        #: Live: the final answer call's id while its output is awaited, the step's final
        #: answer calls held back (by id, their arguments), and whether its answer is shown.
        self._final_call: str | None = None
        self._finals: dict[str, Any] = {}
        self._answered_step = False
        #: Whether the run's final answer has been shown (since the last task).
        self.answered = False
        #: The streamed text of the model response being generated.
        self._draft: Thinking | None = None
        self._draft_text = ""
        #: The Thinking of the last plan fed (live, its step's time is set after:
        #: :meth:`Follower._time_plan`).
        self.plan: Thinking | None = None
        #: ``id(step)`` of live steps already fed: at max steps the stream repeats the last.
        self._seen: set[int] = set()
        self.recognized = 0
        #: The last step fed, when it is an action step in which nothing happened: its model
        #: call raised (:meth:`run_failed`); its number, end and start.
        self._empty_step: tuple[Any, str | None, str | None] | None = None
        #: The last step fed, when its calls never returned (:meth:`_left_unfinished`): those
        #: calls and the step's end.
        self._unfinished: tuple[list[ToolCall], str | None] | None = None

    # -- helpers

    @property
    def _batch(self) -> str:
        return f"step-{self.actions + 1}"

    def _append(self, entry: Entry) -> Entry:
        self._entries.append(entry)
        return self.transcript.append(entry)

    def _end_step(self) -> None:
        self._calls = {}
        self._entries = []
        self._final_call = None
        self._finals = {}
        self._answered_step = False
        self._draft = None
        self._draft_text = ""

    # -- records

    def feed(self, kind: str, record: Mapping[str, Any], line: int | None) -> None:
        """One step record of ``kind`` (:func:`step_kind`)."""
        self.recognized += 1
        self._empty_step = None
        self._settle_unfinished("unknown")
        if kind == "TaskStep":
            self.task(record)
        elif kind == "SystemPromptStep":
            text = _text(record.get("system_prompt"))
            if text:
                self.transcript.metadata["system"] = text
        elif kind == "PlanningStep":
            self.plan = self.planning(record, line)
        elif kind == "ActionStep":
            self.action(record, line)
        elif kind == "FinalAnswerStep":
            self.final_output(record.get("output"))

    def task(self, record: Mapping[str, Any]) -> None:
        self._end_step()
        self.answered = False
        images = record.get("task_images")
        meta = {"task_images": len(images)} if isinstance(images, list) and images else {}
        self.transcript.append(UserMessage(text=str(record.get("task") or ""), meta=meta))

    def planning(self, record: Mapping[str, Any], line: int | None = None) -> Thinking | None:
        """The plan's Thinking (None for an empty plan)."""
        timing = record.get("timing")
        timing = timing if isinstance(timing, Mapping) else {}
        timestamp = self._time(timing, "start_time", "a planning step", line)
        text = _text(record.get("plan")) or ""
        plan = self._think(text, timestamp)
        self._attach_usage(record)
        self._end_step()
        return plan

    def _attach_usage(self, record: Mapping[str, Any]) -> None:
        """The step's usage on its last text, else on its thought, else on its first call,
        whichever order they arrived in (live, a step's thought may follow its calls)."""
        entries = self._entries
        ranked = [e for e in entries if isinstance(e, Thinking)] + [
            e for e in entries if not isinstance(e, Thinking)
        ]
        attach_usage(ranked, _usage(record.get("token_usage")), self.transcript)

    def _think(self, text: str, timestamp: str | None) -> Thinking | None:
        """The model's text of this response: the streamed draft completed, or a new entry
        (None for no text)."""
        draft = self._draft
        if draft is not None:
            self.transcript.update(draft, text=text, streaming=False, timestamp=timestamp)
            self._entries.append(draft)
            self._draft = None
            return draft
        if not text:
            return None
        thought = Thinking(text=text, timestamp=timestamp)
        self._append(thought)
        return thought

    def delta(self, content: Any) -> None:
        """Live: a piece of streamed model text; held back while it may still be a reply
        with no thought (:func:`_no_thought_yet`): an entry once shown stays, and the load
        shows none for such a reply."""
        if not isinstance(content, str) or not content:
            return
        self._draft_text += content
        if self._draft is None:
            if _no_thought_yet(self._draft_text):
                return
            self._draft = Thinking(text=self._draft_text, streaming=True)
            self.transcript.append(self._draft)
        else:
            self.transcript.update(self._draft, text=self._draft_text)

    def _show_held_draft(self, code: Any) -> None:
        """Live: the step's first call arrived, so its model text is whole: text held back
        (:meth:`delta`) is shown now, before the call, as its thought (``code`` the call's,
        a ``CodeAgent``'s), when it has one."""
        if self._draft is not None or not self._draft_text:
            return
        thought = _thought(self._draft_text, code)
        self._draft_text = ""
        if thought:
            self._draft = Thinking(text=thought, streaming=True)
            self.transcript.append(self._draft)

    def _call_name(self, name: str) -> tuple[str, dict[str, Any]]:
        if name == CODE_TOOL:
            return CODE_TOOL_SHOWN, {"tool_name": CODE_TOOL}
        return name, {}

    def start_call(
        self, call_id: str, name: str, args: Any, *, refused: bool = False
    ) -> ToolCall | None:
        """A call of the step being fed (the final answer call is held back: it becomes the
        answer, unless ``refused``); the one already shown under that id when there is one."""
        if name == FINAL_ANSWER_TOOL and not refused:
            self._final_call = call_id
            self._finals[call_id] = args
            return None
        known = self._calls.get(call_id) if call_id else None
        if known is not None:
            return known
        shown, meta = self._call_name(name)
        call = ToolCall(
            call_id=call_id or f"{self._batch}-{len(self._calls) + 1}",
            name=shown,
            args=args,
            description=describe_args(shown, args),
            status=self.open_status,
            batch_id=self._batch,
            meta=meta,
        )
        self._append(call)
        self._calls[call_id or call.call_id] = call
        # A call of a managed agent ran one, by its name or in code; which call's run its
        # memory kept is told when the step ends (_nest_runs): until then, none.
        called = [(name, _task_of(args))] if name in self.managed else []
        if name == CODE_TOOL:
            called = self._written[call.id] = _managed_calls(args, self.managed)
        if called:
            agent, task = called[0]
            self.transcript.update(
                call, subagent=SubAgent(name=agent, task=task, steps_missing=True)
            )
        return call

    def settle(self, call: ToolCall, status: Any, text: str | None, **meta: Any) -> None:
        result = text_result(text) if text is not None else None
        changes: dict[str, Any] = {"status": status, "result": result}
        if meta:
            changes["meta"] = {**call.meta, **meta}
        name = call.meta.get("tool_name", call.name)
        if name == CODE_TOOL:  # code that printed a managed agent's answer
            managed = _reported(text)
            if call.subagent is None and managed is not None:
                changes["subagent"] = SubAgent(name=managed, steps_missing=True)
        elif call.subagent is None and _managed_name(text) == name:
            changes["subagent"] = SubAgent(name=name, task=_task_of(call.args), steps_missing=True)
        self.transcript.update(call, **changes)

    def answer(self, text: str, **meta: Any) -> None:
        self._append(
            AssistantText(text=text, model=self.model, meta={"final_answer": True, **meta})
        )
        self.answered = self._answered_step = True

    # -- live events

    def live_call(self, call_id: str, name: str, args: Any) -> None:
        args = parse_arguments(args)
        self._show_held_draft(args if name == CODE_TOOL else None)
        self.start_call(call_id, name, args)

    def live_output(self, call_id: str, observation: Any, is_final: bool, output: Any) -> None:
        text = observation if isinstance(observation, str) else stringify(observation)
        if is_final or (call_id and call_id == self._final_call):
            if self._calls or len(self._finals) > 1:
                # Given beside other calls (every call of a step is yielded before any
                # output), the answer is refused as it arrives (REFUSED_ANSWER_ERROR): its
                # calls are calls, whose outcome the step's error tells.
                for final_id, args in self._finals.items():
                    self.start_call(final_id, FINAL_ANSWER_TOOL, args, refused=True)
                return
            self.answer(answer_text(output, text), call_id=call_id)
            return
        call = self._calls.get(call_id)
        if call is None:
            self.warn(f"tool output for an unknown call id {call_id!r}", None)
            return
        self.settle(call, "success", text)

    # -- an action step

    def _time(
        self, timing: Mapping[str, Any], name: str, what: str, line: int | None
    ) -> str | None:
        """A step's ``start_time`` or ``end_time`` (its ``timing``'s, :func:`_iso`); one that
        is no time is left out, said of the step (``what``) that holds it."""
        return warned_timestamp(
            timing.get(name), _iso, lambda reason: self.warn(reason, line), what,
            name=name, unit="seconds since the epoch",
        )  # fmt: skip

    def action(self, record: Mapping[str, Any], line: int | None) -> None:
        timing = record.get("timing")
        timing = timing if isinstance(timing, Mapping) else {}
        number = record.get("step_number")
        what = f"step {number}" if isinstance(number, int) else "an action step"
        timestamp = self._time(timing, "start_time", what, line)
        end = self._time(timing, "end_time", what, line)
        error = _error_of(record.get("error"))
        message = record.get("model_output_message")
        message = message if isinstance(message, Mapping) else {}
        code = record.get("code_action")
        thought = _thought(_text(record.get("model_output")), code)
        if self._draft_text and _is_empty(record):
            # Its model call raised mid-stream (the step keeps none of its text): the text
            # streamed so far stays, cut off, as a load reads it off the error (run_failed).
            thought = _thought(self._draft_text, None)
        self._think(thought or "", timestamp)

        raws = record.get("tool_calls") or message.get("tool_calls") or []
        parts = [p for p in map(_call_parts, raws if isinstance(raws, list) else []) if p]
        if isinstance(raws, list) and len(parts) < len(raws):
            self.warn(f"step {number}: {len(raws) - len(parts)} unreadable tool call(s)", line)
        finals = [p for p in parts if p[1] == FINAL_ANSWER_TOOL] if code is None else []
        final = finals[-1] if finals else None
        # An answer given beside other calls is refused as its output arrives, which leaves
        # the step's calls unrecorded but for the model's message: its calls are shown after
        # the others, where the followed run shows them (it knows them refused only then).
        refused_answer = (
            bool(finals)
            and len(parts) > 1
            and error is not None
            and error[0] == REFUSED_ANSWER_ERROR
        )
        if refused_answer:
            parts = [p for p in parts if p not in finals] + finals
        calls: list[ToolCall] = []
        for call_id, name, args in parts:
            call = self.start_call(call_id, name, args, refused=refused_answer)
            if call is not None:
                calls.append(call)

        observations = record.get("observations")
        observations = observations if isinstance(observations, str) else None
        duration = _duration_ms(timing)
        step_meta: dict[str, Any] = {"step": number} if isinstance(number, int) else {}
        if duration is not None:
            step_meta["step_duration_ms"] = duration
        refused = error is not None and _is_check_failure(error)
        unfinished = error is None and observations is None and bool(calls)
        if unfinished:
            self._left_unfinished(calls, end or timestamp)
        elif error is None or refused:
            self._settle_all(calls, observations, final)
        else:
            owner = calls[-1] if refused_answer and len(finals) == 1 else None
            self._settle_failed(calls, error, observations, len(parts), owner)
        for call in calls:
            self.transcript.update(call, meta={**call.meta, **step_meta})
        self._nest_runs(timing, calls, step_meta)

        if (error is None or refused) and final is not None and not self._answered_step:
            answer = answer_text(_final_argument(final[2]), observations)
            self.answer(answer, call_id=final[0])
        if refused:
            self._refuse_answer(error[1] if error else "")
        if code is not None and record.get("is_final_answer") and error is None:
            self.answer(code_answer(record.get("action_output")))
        if error is not None and not any(c.status == "error" for c in calls):
            kind, text = error
            if kind == MAX_STEPS_ERROR:
                self._append(SystemNotice(text=text, level="warning", subtype="max_steps"))
                output = record.get("action_output")
                if output is not None:
                    self.answer(_text(output) or "")
            else:
                self._append(SystemNotice(text=f"{kind}: {text}", level="error", subtype="step"))
        images = record.get("observations_images")
        if isinstance(images, list) and images and self._entries:
            first = self._entries[0]
            self.transcript.update(first, meta={**first.meta, "observation_images": len(images)})

        # The answer exists once the step's final_answer call returned, at the step's end:
        # dated there, the run lasts until its last step ends (that step's model response,
        # which can take seconds, included), not until that step began.
        ended = end or timestamp
        for entry in self._entries:
            if entry.timestamp is None and timestamp is not None:
                answered = isinstance(entry, AssistantText) and entry.meta.get("final_answer")
                self.transcript.update(entry, timestamp=ended if answered else timestamp)
        self._attach_usage(record)
        self.actions += 1
        self._end_step()
        if _is_empty(record):
            self._empty_step = (number, end, timestamp)

    def _refuse_answer(self, message: str) -> None:
        """A final answer a ``final_answer_checks`` function refused: shown as the model gave
        it (as live, where it is shown before the check runs), said refused in its ``meta``
        and by the step's error notice; the run goes on, so it is no answer yet."""
        for entry in self._entries:
            if isinstance(entry, AssistantText) and entry.meta.get("final_answer"):
                self.transcript.update(entry, meta={**entry.meta, "refused": message})
        self.answered = False

    def run_failed(self, error: Mapping[str, Any] | None) -> bool:
        """The run ended on ``error`` (``{"type", "message"}``, the exception ``run`` raised,
        where the agent given still held it, :func:`_raised_in`; or the stream raised it,
        :meth:`Follower.broke_off`), or, without it, on what its last step tells: True when
        that was said. A user's interruption (``agent.interrupt()``, or ``KeyboardInterrupt``)
        stopped the turn (an :class:`AbortMarker`, spec P-7). When the last step is empty
        (no model output, call, error or observation) its model call raised,
        ``AgentGenerationError``, which smolagents re-raises out of ``run`` and records
        nowhere (no step error, the step saved empty): the turn failed (an
        :class:`AssistantError`), with the error's type and message where known, else saying
        what the steps tell. The model's text streamed before its call raised (``streamed``,
        read off the error's frames) is shown first, cut off (:meth:`_cut_off`)."""
        if self.answered:
            return False
        streamed = error.get("streamed") if error is not None else None
        if error is not None and error.get("while") == PLANNING:
            # The plan's model call raised, unwrapped: no step holds it; its start is its time.
            at = _iso(error.get("start_time"))
            self._cut_off(streamed if isinstance(streamed, str) else None, at)
            if _is_interruption(error):
                self.transcript.append(stop("reader.interrupted_by_user", timestamp=at))
            else:
                text = f"{error.get('type')}: {error.get('message')}"
                self.transcript.append(AssistantError(message=text, timestamp=at))
            return True
        ended = self._empty_step[1] if self._empty_step is not None else None
        if self._empty_step is not None and isinstance(streamed, str):
            self._cut_off(_thought(streamed, None), self._empty_step[2])
        if self._unfinished is not None:
            ended = self._unfinished[1]
        if error is not None and _is_interruption(error):
            self._settle_unfinished("cancelled")
            self.transcript.append(stop("reader.interrupted_by_user", timestamp=ended))
            return True
        if self._empty_step is None:
            return False
        if error is not None:
            text = f"{error.get('type')}: {error.get('message')}"
            self.transcript.append(AssistantError(message=text, timestamp=ended))
        else:
            said = {"number": self._empty_step[0]}
            self.transcript.append(failure("reader.step_without_output", said, timestamp=ended))
        return True

    def _cut_off(self, text: str | None, timestamp: str | None) -> None:
        """The model's text as far as it streamed before its call raised, kept as it was cut
        off (the run's error or the user's stop, said next, tells why it ends there), as a
        headless stream cut off keeps all it holds
        (:func:`~turnfold.formats.common.stream_cut_off`): live, the streamed draft settles
        with it; else it is shown."""
        draft, self._draft, self._draft_text = self._draft, None, ""
        if draft is not None:
            changes = {"text": text} if text else {}
            self.transcript.update(draft, streaming=False, timestamp=timestamp, **changes)
        elif text:
            self._append(Thinking(text=text, timestamp=timestamp))

    def _settle_all(self, calls: list[ToolCall], observations: str | None, final: Any) -> None:
        """A step without an error: every call returned; each gets its observation."""
        pending = [c for c in calls if c.status not in ("success", "error")]
        if not pending:
            return
        if final is not None or len(calls) == 1:
            for call in pending:
                self.settle(call, "success", observations)
            return
        lines = observations.split("\n") if observations is not None else []
        if len(lines) == len(calls):
            for call, line in zip(calls, lines, strict=True):
                if call in pending:
                    self.settle(call, "success", line)
            return
        for index, call in enumerate(calls):
            if call in pending:
                shared = observations if index == 0 else None
                self.settle(call, "success", shared, shared_observations=calls[0].call_id)

    def _left_unfinished(self, calls: list[ToolCall], ended: str | None) -> None:
        """A step whose calls never returned: smolagents writes a step's observations once
        its calls returned (a ``CodeAgent``'s when its code ran) and every error of theirs as
        the step's error, so a step with calls and neither left while they ran, by an
        exception it does not catch (a ``KeyboardInterrupt``: :meth:`run_failed` cancels
        them). Each call is left open until the run's end tells; the step's end is the
        run's."""
        self._unfinished = ([c for c in calls if c.status not in ("success", "error")], ended)

    def _settle_unfinished(self, status: ToolStatus) -> None:
        """The calls of a step left unfinished get ``status``: ``cancelled`` when the user
        stopped the run, else (the run went on, or its end is not known) ``unknown``."""
        if self._unfinished is None:
            return
        calls, self._unfinished = self._unfinished[0], None
        for call in calls:
            if call.status in ("pending", "executing", "unknown") and call.status != status:
                self.transcript.update(call, status=status)

    def _settle_failed(
        self,
        calls: list[ToolCall],
        error: tuple[str, str],
        observations: str | None,
        total: int,
        owner: ToolCall | None = None,
    ) -> None:
        """A step whose ``error`` is set: ``owner``, else the call the error names (or the
        step's only call, the final answer call counted) failed."""
        kind, message = error
        pending = [c for c in calls if c.status not in ("success", "error")]
        if owner is None and kind in _CALL_ERRORS and calls:
            if len(calls) == 1 and total == 1:
                owner = calls[0]
            else:
                named = [c for c in calls if f"'{c.meta.get('tool_name', c.name)}'" in message]
                owner = named[0] if len(named) == 1 else None
        text = f"{observations}\n{message}" if observations else message
        for call in pending:
            if call is owner:
                self.settle(call, "error", text)
            else:
                self.transcript.update(call, status="unknown")

    # -- managed agents' runs

    def _kept(self, name: str) -> tuple[Any, Mapping[str, Any], Bounds | None] | None:
        """The run ``name``'s memory keeps, as ``(what identifies it, its document, its time
        bounds)``; None when it kept none."""
        value = self.runs[name]
        steps: Any
        key: Any
        if isinstance(value, Mapping):
            steps, key, count = _steps_of(value), value, 0
        else:
            steps = getattr(getattr(value, "memory", None), "steps", None)
            # A run starts a new memory (its first step a new object): one document per run.
            key, count = (steps[0], len(steps)) if steps else (None, 0)
        if not steps:
            return None
        made = self._documents.get(name)
        if made is None or made[0] is not key or made[1] != count:
            document = value if isinstance(value, Mapping) else _plain_agent(value)
            made = (key, count, document, _run_bounds(_steps_of(document) or []))
            self._documents[name] = made
        return made[0], made[2], made[3]

    def _nest_runs(
        self, timing: Mapping[str, Any], calls: list[ToolCall], step_meta: Mapping[str, Any]
    ) -> None:
        """The kept runs that ran while this step did (their steps' recorded times within
        this step's), nested under the step's call that ran them (:meth:`_nest`), the earliest
        run first: a managed agent's run is over before the step that called it ends."""
        step = _bounds(timing.get("start_time"), timing.get("end_time"))
        if step is None or not self.runs:
            return
        self._timed = True
        ran = []
        for name in self.runs:
            kept = self._kept(name)
            if kept is None or self._nested.get(name) is kept[0]:
                continue
            bounds = kept[2]
            if bounds is not None and step[0] <= bounds[0] and bounds[1] <= step[1]:
                ran.append((bounds[0], name, kept))
        for _, name, (key, document, _) in sorted(ran, key=lambda found: found[0]):
            self._nest(name, key, document, calls, in_step=True, step_meta=step_meta)

    def nest_untimed(self) -> None:
        """After the last step: a kept run no step's time placed, when nothing was timed (the
        run's steps or the agent's record no times), nests under the last call that could
        have made it: of its name, or code that calls it. A run with times, when steps had
        them too, ran outside these steps (the managed agent was run again on its own): not
        nested, which a warning says (its steps are in no call's)."""
        for name in self.runs:
            kept = self._kept(name)
            if kept is None or self._nested.get(name) is kept[0]:
                continue
            if self._timed and kept[2] is not None:
                self.warn(f"{name}'s kept run ran outside the steps: not shown", None)
                self._unshown(name, kept[1])
                continue
            self._nest(name, kept[0], kept[1], self.transcript.tool_calls(), in_step=False)

    def _nest(
        self,
        name: str,
        key: Any,
        document: Mapping[str, Any],
        calls: list[ToolCall],
        *,
        in_step: bool,
        step_meta: Mapping[str, Any] | None = None,
    ) -> None:
        """``name``'s run (``document``) as the sub-agent of the call of ``calls`` that made
        it: a call of its name, the last whose task the run's task quotes (the memory keeps a
        managed agent's last run); else the ``python`` call whose code called it (in a step,
        the step's code ran it whether its name is written or not). The code of one step
        calling two managed agents has one call: the second run is a call of its own, that the
        code made, after it. Several calls that could have made it, none told by its task, are
        a guess, said in a warning."""
        hosts = [c for c in calls if c.meta.get("tool_name", c.name) == name]
        tasks: dict[str, list[str]] = {c.id: [t] for c in hosts if (t := _task_of(c.args))}
        if not hosts:
            for call in calls:
                if call.meta.get("tool_name") != CODE_TOOL:
                    continue
                written = [t for n, t in self._written.get(call.id, []) if n == name]
                if in_step or written:
                    hosts.append(call)
                    tasks[call.id] = [t for t in written if t]
        if not hosts:
            if not in_step:
                self.warn(f"{name}'s kept run: no call in these steps could have made it", None)
                self._unshown(name, document)
            return
        transcript, accounting = self._read_run(name, document)
        run_task = next((e.text for e in transcript.entries if isinstance(e, UserMessage)), "")
        quoted = [c for c in hosts if any(t in run_task for t in tasks.get(c.id, []))]
        host = (quoted or hosts)[-1]
        if len(quoted or hosts) > 1:
            self.warn(
                f"{name}'s memory keeps one run: nothing recorded tells which of "
                f"{len(quoted or hosts)} calls made it; it is shown under the last",
                None,
            )
        task = next((t for t in reversed(tasks.get(host.id, [])) if t in run_task), None)
        subagent = _subagent(name, task, transcript, _steps_of(document) or [])
        if host.subagent is not None and host.subagent.transcript is not None:
            if not in_step:
                self.warn(f"{name}'s run is not shown: its call holds another's", None)
                self._unshown(name, document, accounting)
                return
            answer = next(
                (e.text for e in reversed(transcript.entries) if isinstance(e, AssistantText)),
                None,
            )
            args = {"task": task} if task else {}
            host = ToolCall(
                call_id=f"{host.call_id}-{name}",
                name=name,
                args=args,
                description=describe_args(name, args),
                status="success" if answer is not None else "unknown",
                result=text_result(answer) if answer is not None else None,
                batch_id=host.batch_id,
                meta={**(step_meta or {}), "called_by": host.call_id},
            )
            self._append(host)
        self.transcript.update(host, subagent=subagent)
        self._nested[name] = key
        if self.accounting is not None:
            self.accounting.merge(accounting)

    def _unshown(
        self, name: str, document: Mapping[str, Any], accounting: Accounting | None = None
    ) -> None:
        """Count the records of ``name``'s kept run (``document``), which no call shows, as
        warned about: the warning that says it is not shown is theirs."""
        if self.accounting is None:
            return
        if accounting is None:
            accounting = self._read_run(name, document)[1]
        for record_type, per_type in accounting.counts.items():
            self.accounting.note(record_type, "warned", sum(per_type.values()))
        self.accounting.unaccounted.extend(accounting.unaccounted)

    def final_output(self, output: Any) -> None:
        """A ``FinalAnswerStep``: the answer, unless a step already gave it; none having been
        given means the run hit its step limit (the only other way smolagents ends a run)."""
        if self.answered:
            return
        self._end_step()
        self._append(max_steps_notice())
        self.answer(_text(output) or "")
        self._end_step()

    def close(self) -> None:
        """The stream ended: calls never settled have no recorded outcome (L-3)."""
        self._settle_unfinished("unknown")
        self.settle_open(self._calls.values())
        if self._draft is not None:
            self.transcript.update(self._draft, streaming=False)
        self._end_step()


def answer_text(answer: Any, observation: str | None) -> str:
    """The text of a final answer: what the ``final_answer`` tool returned (``answer``) as
    fenced JSON when it is a number, a list, a dict or None, as a ``CodeAgent``'s answer
    (``action_output``) shows (:func:`code_answer`); else its observation (``str()`` of it,
    stripped). Saved steps hold only the observation and the call's arguments: the argument
    is what the tool returned only when the observation is its ``str()`` (the default tool
    returns its argument; a state variable's name is replaced by its value).

    >>> answer_text({"a": 1}, "{'a': 1}"), answer_text({"a": 1}, "another"), answer_text(42, None)
    ('```json\\n{\\n  "a": 1\\n}\\n```', 'another', '42')
    """
    if observation is None:
        return code_answer(answer)
    if answer is None or isinstance(answer, (int, float, list, dict)):
        return code_answer(answer) if observation == str(answer) else observation
    return observation


def code_answer(output: Any) -> str:
    """A final answer's value (a ``CodeAgent``'s ``action_output``, what ``final_answer`` was
    given) as shown: text as it is; a dict or a list as a fenced JSON block, as the other
    frameworks' structured output is (:func:`~turnfold.formats.common.structured_answer`):
    as prose, Markdown folds its lines and reads a ``*`` or ``__`` in it as emphasis; a
    number (or None) as its JSON, which reads the same as prose."""
    if isinstance(output, str):
        return output
    return fenced_json(output) if isinstance(output, (list, dict)) else stringify(output)


def _final_argument(args: Any) -> Any:
    """The answer a ``final_answer`` call passes: its ``answer`` argument, else its arguments
    (as ``ToolCallingAgent.process_tool_calls`` takes them)."""
    return args["answer"] if isinstance(args, Mapping) and "answer" in args else args


# --- run objects (spec A-1) ------------------------------------------------------------------


def _mro_names(value: Any) -> set[str]:
    return {cls.__name__ for cls in type(value).__mro__}


def _jsonable(value: Any, depth: int = 0) -> Any:
    """A value of a step (tool arguments, an action's output) as JSON, without the
    framework's ``make_json_serializable`` (which parses strings that look like JSON)."""
    if isinstance(value, Enum):
        return _jsonable(value.value, depth)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return str(value)
    if depth > 12:
        return repr(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _jsonable(getattr(value, f.name, None), depth + 1)
            for f in dataclasses.fields(value)
        }
    return str(value)


def _timing(timing: Any) -> dict[str, Any] | None:
    if timing is None:
        return None
    start, end = getattr(timing, "start_time", None), getattr(timing, "end_time", None)
    duration = (
        end - start if isinstance(start, (int, float)) and isinstance(end, (int, float)) else None
    )
    return {"start_time": start, "end_time": end, "duration": duration}


def _token_usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {k: getattr(usage, k, None) for k in ("input_tokens", "output_tokens", "total_tokens")}


def _plain_call(call: Any) -> dict[str, Any]:
    """A memory ``ToolCall`` or a message's ``ChatMessageToolCall`` as ``ToolCall.dict()``."""
    function = getattr(call, "function", None)
    name = getattr(function if function is not None else call, "name", None)
    arguments = getattr(function if function is not None else call, "arguments", None)
    return {
        "id": getattr(call, "id", None),
        "type": "function",
        "function": {"name": name, "arguments": _jsonable(arguments)},
    }


def _plain_message(message: Any) -> dict[str, Any] | None:
    """A ``ChatMessage`` without its ``raw`` provider response."""
    if message is None:
        return None
    calls = getattr(message, "tool_calls", None)
    return {
        "role": _jsonable(getattr(message, "role", None)),
        "content": _jsonable(getattr(message, "content", None)),
        "tool_calls": [_plain_call(c) for c in calls] if calls else None,
        "token_usage": _token_usage(getattr(message, "token_usage", None)),
    }


def _plain_error(error: Any) -> dict[str, Any] | None:
    if error is None:
        return None
    message = getattr(error, "message", None)
    return {"type": type(error).__name__, "message": str(message if message is not None else error)}


def plain_step(step: Any) -> dict[str, Any]:
    """A memory step as its ``step.dict()`` record, without ``model_input_messages`` (the
    history it re-sends) and with images counted rather than copied."""
    names = _mro_names(step)
    if "ActionStep" in names:
        calls = step.tool_calls
        images = step.observations_images
        return {
            "step_number": step.step_number,
            "timing": _timing(step.timing) or {},
            "tool_calls": [_plain_call(c) for c in calls] if calls else [],
            "error": _plain_error(step.error),
            "model_output_message": _plain_message(step.model_output_message),
            "model_output": _jsonable(step.model_output),
            "code_action": step.code_action,
            "observations": step.observations,
            "observations_images": [f"<image {i + 1}>" for i in range(len(images))]
            if images
            else None,
            "action_output": _jsonable(step.action_output),
            "token_usage": _token_usage(step.token_usage),
            "is_final_answer": bool(step.is_final_answer),
        }
    if "PlanningStep" in names:
        return {
            "model_output_message": _plain_message(step.model_output_message),
            "plan": step.plan,
            "timing": _timing(step.timing) or {},
            "token_usage": _token_usage(step.token_usage),
        }
    if "TaskStep" in names:
        images = step.task_images
        return {
            "task": step.task,
            "task_images": [f"<image {i + 1}>" for i in range(len(images))] if images else None,
        }
    if "SystemPromptStep" in names:
        return {"system_prompt": step.system_prompt}
    if "FinalAnswerStep" in names:
        return {"output": _jsonable(step.output)}
    if type(step).__name__ in STREAM_EVENTS:
        return {_EVENT: type(step).__name__}
    return {_UNREADABLE: f"{type(step).__module__}.{type(step).__qualname__}"}


def _identity(agent: Any) -> dict[str, Any]:
    """What a document of ``agent`` says of it besides its steps: its ``agent`` (name, class,
    model) and its ``system_prompt``."""
    model_id = getattr(getattr(agent, "model", None), "model_id", None)
    system = getattr(getattr(agent.memory, "system_prompt", None), "system_prompt", None)
    return {
        "agent": {
            "name": getattr(agent, "name", None),
            "class": type(agent).__name__,
            "model_id": model_id if isinstance(model_id, str) else None,
        },
        "system_prompt": system,
    }


def _plain_agent(agent: Any, depth: int = 0) -> dict[str, Any]:
    memory = agent.memory
    out: dict[str, Any] = {**_identity(agent), "steps": plain_each(memory.steps, plain_step)}
    error = _raised_in(memory.steps) or _interrupted(agent)
    if error is not None:
        out[RUN_ERROR] = error
    managed = getattr(agent, "managed_agents", None) or {}
    if isinstance(managed, Mapping) and managed and depth < 8:
        out["managed_agents"] = _plain_managed(managed, depth + 1)
    return out


#: The document key of the error a run's last step raised (:func:`_raised_in`).
RUN_ERROR = "run_error"


def _raised_in(steps: Any) -> dict[str, Any] | None:
    """The exception the run of ``steps`` raised out of ``run``, as ``{"type", "message"}``,
    while the interpreter still holds it: the exception being handled (a load in the
    ``except`` block around ``agent.run``) or the last one a REPL or notebook reported
    (``sys.last_exc``, ``sys.last_value``). smolagents keeps it nowhere else: an
    ``AgentGenerationError`` leaves its step saved empty, and a user's interruption
    (``agent.interrupt()``'s ``AgentError``, a ``KeyboardInterrupt``) no trace at all. It is
    this run's when a frame of its traceback holds the last of ``steps`` (``_step_stream``'s
    ``memory_step``, ``_run_stream``'s ``action_step``). Any error of a plan's model call is
    the run's end too, when it is this run's (:func:`_planning_failure`): smolagents wraps
    none of them, and saves no step of the plan."""
    last = steps[-1] if isinstance(steps, list) and steps else None
    if last is None:
        return None
    for error in (
        sys.exc_info()[1],
        getattr(sys, "last_exc", None),
        getattr(sys, "last_value", None),
    ):
        if not isinstance(error, BaseException):
            continue
        said = {"type": type(error).__name__, "message": str(error)}
        planning = _planning_failure(error, steps)
        if planning is not None:
            return {**said, **planning}
        if type(last).__name__ != "ActionStep":
            continue
        if "AgentGenerationError" not in _mro_names(error) and not _is_interruption(said):
            continue
        trace = error.__traceback__
        while trace is not None:
            if any(value is last for value in trace.tb_frame.f_locals.values()):
                streamed = _streamed_in(error, last)
                return said if streamed is None else {**said, "streamed": streamed}
            trace = trace.tb_next
    return None


def _streamed_in(error: BaseException, step: Any) -> str | None:
    """The text the model streamed for ``step`` before ``error`` left its call: the deltas
    ``_step_stream`` collects (``chat_message_stream_deltas``, its local until the stream is
    whole), which no step keeps when the call raises. None when it streamed none."""
    trace = error.__traceback__
    while trace is not None:
        local = trace.tb_frame.f_locals
        deltas = local.get("chat_message_stream_deltas")
        if local.get("memory_step") is step and isinstance(deltas, list):
            text = "".join(c for d in deltas if isinstance(c := getattr(d, "content", None), str))
            return text or None
        trace = trace.tb_next
    return None


#: A run error's ``"while"`` when the plan's model call raised it (:func:`_planning_failure`).
PLANNING = "planning"


def _planning_failure(error: BaseException, steps: Any = None) -> dict[str, Any] | None:
    """``{"while": "planning", "start_time": …}`` when ``error`` left the model call of a
    plan (``_generate_planning_step``, which wraps no error in ``AgentGenerationError`` and
    saves no step for a plan that failed; ``_run_stream``'s ``planning_start_time`` is the
    plan's only time). Given ``steps``, only when the run that raised it is theirs and
    ended there: ``_run_stream``'s agent keeps ``steps`` as its memory, whose last step is
    the one that run made before the plan (its last ``action_step``, else the run's task).
    With ``"streamed"``, the plan's text streamed before the call raised, when it streamed."""
    run: Mapping[str, Any] | None = None
    streamed: Any = None
    trace = error.__traceback__
    while trace is not None:  # outermost frame first: the run, then the plan it was making
        frame = trace.tb_frame
        if frame.f_globals.get("__name__") == "smolagents.agents":
            if frame.f_code.co_name == "_generate_planning_step":
                # The plan streamed so far (streamed: its local grows by each delta).
                streamed = frame.f_locals.get("plan_message_content")
                break
            if frame.f_code.co_name == "_run_stream":
                run = frame.f_locals
        trace = trace.tb_next
    else:
        return None
    if steps is not None:
        agent = run.get("self") if run is not None else None
        if run is None or getattr(getattr(agent, "memory", None), "steps", None) is not steps:
            return None
        before = run.get("action_step")
        last = steps[-1] if steps else None
        if last is not before and (before is not None or type(last).__name__ != "TaskStep"):
            return None
    start = run.get("planning_start_time") if run is not None else None
    failed = {"while": PLANNING, "start_time": start}
    return {**failed, "streamed": streamed} if isinstance(streamed, str) and streamed else failed


def _interrupted(agent: Any) -> dict[str, str] | None:
    """The interruption ``agent.interrupt()`` asked for, as the error ``_run_stream`` raises
    for it, while the agent still says so: ``run`` clears ``interrupt_switch`` only when the
    next run starts. A run that answered first is no interrupted one
    (:meth:`StepsBuilder.run_failed`)."""
    if getattr(agent, "interrupt_switch", None) is not True:
        return None
    kind, message = INTERRUPTED
    return {"type": kind, "message": message}


def _plain_managed(managed: Mapping[str, Any], depth: int = 1) -> dict[str, Any]:
    return {str(name): _plain_agent(child, depth) for name, child in managed.items()}


def _managed_of(agent: Any) -> Mapping[str, Any]:
    """The managed agents of ``agent=`` (a smolagents agent), by name."""
    managed = getattr(agent, "managed_agents", None)
    if not isinstance(managed, Mapping) or not hasattr(agent, "memory"):
        raise TypeError(
            "agent= is the smolagents agent that ran (it has memory and managed_agents), "
            f"not {type(agent).__name__}"
        )
    return managed


def plain(value: Any) -> Any:
    """An agent, its ``AgentMemory``, a ``RunResult``, a step or a list of steps (or of
    streamed events) as the records :func:`read` reads; the value is only read."""
    from turnfold.gcpause import collector_paused

    # A long run's memory holds every step's re-sent history: a collection walks all of it.
    with collector_paused():
        return _plain(value)


def _plain(value: Any) -> Any:
    names = _mro_names(value)
    if "MultiStepAgent" in names or (hasattr(value, "memory") and hasattr(value, "managed_agents")):
        return _plain_agent(value)
    if "AgentMemory" in names:
        out = {
            "system_prompt": getattr(value.system_prompt, "system_prompt", None),
            "steps": plain_each(value.steps, plain_step),
        }
        error = _raised_in(value.steps)
        return {**out, RUN_ERROR: error} if error is not None else out
    if "RunResult" in names:
        return {
            "output": _jsonable(value.output),
            "state": value.state,
            "steps": plain_each(value.steps or [], _without_history),
            "token_usage": _token_usage(value.token_usage),
            "timing": _timing(value.timing),
        }
    if isinstance(value, (list, tuple)):
        return plain_each(value, _plain_item)
    return [_plain_item(value)]


def _without_history(step: Any) -> Any:
    """A saved step record without ``model_input_messages``: the history re-sent to the
    model, which the transcript shows once, from the steps themselves."""
    if isinstance(step, Mapping):
        return {str(k): _jsonable(v) for k, v in step.items() if k != "model_input_messages"}
    return _jsonable(step)


def _plain_item(item: Any) -> Any:
    if isinstance(item, Mapping):
        return _jsonable(item)  # already a saved step record
    if type(item).__module__.split(".")[0] == "smolagents":
        try:
            return plain_step(item)
        except Exception as exc:  # a step built by hand with fields of the wrong kind
            name = f"{type(item).__module__}.{type(item).__qualname__}"
            return {_UNREADABLE: f"{name} ({type(exc).__name__}: {exc})"}
    return {_UNREADABLE: f"{type(item).__module__}.{type(item).__qualname__}"}


# --- reading -------------------------------------------------------------------------------


#: ``load(steps, agent=)`` and ``follow(stream, agent=)``: the agent that ran knows its managed
#: agents, whose runs the steps and the stream do not hold.
READS_AGENT = True
#: ``follow``: a run can raise before its first event (the first plan's model call), and the
#: follower, told the run off its generator, still says how it ended (:meth:`Follower.broke_off`).
BREAKS_OFF_EARLY = True


def read(source: Source, *, agent: Any = None) -> Transcript:
    """The steps of ``source`` (a list of step records, or a document with ``steps``); given
    ``agent``, the agent that ran them, its managed agents' runs nest as in a load of it."""
    transcript = Transcript(metadata={"source_format": NAME})
    document = source.document if source.is_document else None
    steps = _steps_of(document)
    runs = _plain_managed(_managed_of(agent)) if agent is not None else {}
    if isinstance(document, Mapping) and steps is not None:
        builder = _read_document(source, document, steps, transcript, runs)
    else:
        builder = StepsBuilder(
            transcript,
            source.name,
            runs=runs,
            read_run=partial(_read_child, source.name),
            accounting=source.accounting,
        )
        for line, record in source.records():
            _feed(source, builder, record, line)
        builder.nest_untimed()
        builder.run_failed(None)
    if builder.recognized == 0:
        first = source.warnings[0] if source.warnings else None
        reason = f"no smolagents steps: {first.reason}" if first else "no smolagents steps"
        if steps == []:
            reason = "no smolagents steps (the memory is empty: has the agent run?)"
        raise TranscriptFormatError(source.name, [NAME], first.line if first else None, reason)
    return transcript


def _read_document(
    source: Source,
    document: Mapping[str, Any],
    steps: list[Any],
    transcript: Transcript,
    runs: Mapping[str, Any] | None = None,
) -> StepsBuilder:
    agent = document.get("agent")
    agent = agent if isinstance(agent, Mapping) else {}
    model = agent.get("model_id") if isinstance(agent.get("model_id"), str) else None
    children = document.get("managed_agents")
    children = {
        str(name): child
        for name, child in (children.items() if isinstance(children, Mapping) else ())
        if isinstance(child, Mapping)
    }
    builder = StepsBuilder(
        transcript,
        source.name,
        model=model,
        runs=children or runs,
        read_run=partial(_read_child, source.name),
        accounting=source.accounting,
    )
    for key, value in document.items():
        _top_level(source, transcript, key, value)
    for line, record in enumerate(steps, start=1):
        _feed(source, builder, record, line)
    builder.nest_untimed()
    error = document.get(RUN_ERROR)
    builder.run_failed(error if isinstance(error, Mapping) else None)
    return builder


def _top_level(source: Source, transcript: Transcript, key: str, value: Any) -> None:
    metadata = transcript.metadata
    if key in ("steps", "managed_agents"):
        return  # their records are accounted for one by one
    if key == "system_prompt":
        if isinstance(value, str) and value:
            metadata["system"] = value
    elif key == "agent":
        if isinstance(value, Mapping):
            for field, name in (("name", "agent"), ("class", "agent_class"), ("model_id", "model")):
                if isinstance(value.get(field), str) and value[field]:
                    metadata[name] = value[field]
    elif key == "output":
        if value is not None:
            metadata["final_output"] = value
    elif key == "state":
        if isinstance(value, str):
            metadata["state"] = value
    elif key == "token_usage":
        usage = _usage(value)
        if usage is not None:
            metadata["usage"] = {k: v for k, v in vars(usage).items() if v is not None}
    elif key == RUN_ERROR:
        pass  # shown once the steps are read (StepsBuilder.run_failed)
    elif key == "timing":
        if isinstance(value, Mapping):
            for field, name in (("start_time", "started_at"), ("end_time", "ended_at")):
                stamp = warned_timestamp(
                    value.get(field), _iso, source.warn, "the run", name=f"timing.{field}",
                    unit="seconds since the epoch",
                )  # fmt: skip
                if stamp is not None:
                    metadata[name] = stamp
    else:
        source.ignored("other key")
        return
    source.mapped(key)


def _feed(source: Source, builder: StepsBuilder, record: Any, line: int) -> None:
    if isinstance(record, MalformedLine):
        source.warn(record.reason, line, record_type=type_of_record(record))
        return
    record = current_step(record)
    kind = step_kind(record)
    if kind is not None:
        warnings = builder.transcript.warnings
        warned, listed = warning_count(warnings), len(warnings)
        builder.feed(kind, record, line)
        source.note(kind, "warned" if warning_count(warnings) > warned else "mapped")
        for warning in warnings[listed:]:
            warning.line = line
        return
    if isinstance(record, Mapping) and isinstance(record.get(_EVENT), str):
        source.ignored(record[_EVENT])
        return
    if isinstance(record, Mapping) and isinstance(record.get(_UNREADABLE), str):
        what = record[_UNREADABLE]
        source.warn(f"{what} is not a smolagents step; skipped", line, record_type=_UNREADABLE)
        return
    shape = type(record).__name__ if not isinstance(record, Mapping) else "object"
    keys = ", ".join(sorted(map(str, record))[:5]) if isinstance(record, Mapping) else ""
    reason = f"not a smolagents step ({shape}{': ' + keys if keys else ''}); skipped"
    source.warn(reason, line, record_type=_UNREADABLE)


def _read_child(
    parent: str, name: str, document: Mapping[str, Any]
) -> tuple[Transcript, Accounting]:
    """A managed agent's run document (:func:`plain` of it) as its own transcript, and what
    reading it accounted for: counted in the load's accounting as shown, or not shown."""
    steps = _steps_of(document) or []
    source = Source(f"{parent} ({name})", iter(enumerate(steps, start=1)), document=document)
    transcript = Transcript(metadata={"source_format": NAME, "agent": name})
    _read_document(source, document, steps, transcript)
    return transcript, source.accounting


def _subagent(name: str, task: str | None, transcript: Transcript, steps: list[Any]) -> SubAgent:
    calls = transcript.tool_calls(nested=True)
    tokens = [u.output_tokens for u in _usages(transcript) if u.output_tokens is not None]
    bounds = _run_bounds(steps)
    return SubAgent(
        name=name,
        task=task,
        transcript=transcript,
        tool_count=len(calls),
        subagent_count=sum(1 for c in calls if c.subagent is not None) or None,
        duration_ms=(bounds[1] - bounds[0]) * 1000 if bounds is not None else None,
        output_tokens=sum(tokens) if tokens else None,
    )


def _usages(transcript: Transcript) -> list[Usage]:
    found = []
    for entry in transcript.entries:
        usage = getattr(entry, "usage", None)  # a text's, or a response's that wrote none
        if isinstance(usage, Usage):
            found.append(usage)
    return found


# --- live (spec A-2) -----------------------------------------------------------------------


def run_of_generator(events: Any) -> Any:
    """The agent running ``agent.run(task, stream=True)``, the generator to follow: ``run``
    writes the task to the agent's memory, then returns ``_run_stream(task, ...)`` of the
    agent (its ``self``), whose events carry neither the task nor the managed agents' runs.
    None for any other generator."""
    given = generator_arguments(events, "smolagents.agents", ("_run_stream",))
    agent = given.get("self") if given is not None else None
    return agent if hasattr(agent, "memory") and hasattr(agent, "managed_agents") else None


class Follower:
    """``agent.run(task, stream=True)`` followed into a transcript (see the module's text)."""

    def __init__(self, transcript: Transcript, *, agent: Any = None) -> None:
        self.transcript = transcript
        self.builder = StepsBuilder(transcript, "<follow>", live=True)
        self.agent: Any = None
        #: The planning step last fed, whose time smolagents sets only after yielding it.
        self._planning: Any = None
        if agent is not None:
            self.begin(agent)

    def begin(self, agent: Any) -> None:
        """The agent whose run is followed (``agent=``, or the generator's own,
        :func:`run_of_generator`), before the first event: what the stream leaves out."""
        if self.agent is not None:
            return  # given as agent= already
        # The stream holds no managed agent's steps: each step that ran one finds its run in
        # that managed agent's memory when the step ends.
        self.builder.runs = dict(_managed_of(agent))
        self.builder.managed = set(self.builder.runs)
        self.agent = agent
        self._identify(agent)

    def _identify(self, agent: Any) -> None:
        """What the stream leaves out and the agent holds, read as a load of it reads it: its
        name, class, model and system prompt, and the run's task, which ``run`` wrote to its
        memory (the last ``TaskStep``) before the stream's first event, with every step
        before it: ``run(task, reset=False)`` keeps the earlier runs' steps in memory and
        goes on from them, so the conversation so far is this run's too."""
        source = Source("<follow>", iter(()))
        for key, value in _identity(agent).items():
            _top_level(source, self.transcript, key, value)
        model = self.transcript.metadata.get("model")
        self.builder.model = model if isinstance(model, str) else None
        steps = list(getattr(agent.memory, "steps", None) or [])
        tasks = [n for n, step in enumerate(steps) if type(step).__name__ == "TaskStep"]
        for step in steps[: tasks[-1] + 1] if tasks else ():
            record = plain_step(step)
            kind = step_kind(record)
            if kind is not None:
                self.builder.feed(kind, record, None)

    def feed(self, event: Any) -> None:
        self._time_plan()
        kind = type(event).__name__
        builder = self.builder
        if kind == "ChatMessageStreamDelta":
            builder.delta(getattr(event, "content", None))
        elif kind == "ToolCall":
            builder.live_call(str(event.id or ""), str(event.name), event.arguments)
        elif kind == "ToolOutput":
            builder.live_output(
                str(event.id or ""), event.observation, bool(event.is_final_answer), event.output
            )
        elif kind == "ActionOutput":
            return  # the ActionStep that follows holds the same output
        elif kind in STEP_TYPES:
            if id(event) in builder._seen:
                return  # the stream yields the last step again when the run hits max_steps
            if kind == "ActionStep":
                builder._seen.add(id(event))
            if kind == "FinalAnswerStep":
                self._max_steps_step()
            builder.feed(kind, plain_step(event), None)
            if kind == "PlanningStep":
                self._planning = event
        elif isinstance(event, Mapping) and step_kind(event) is not None:
            builder.feed(str(step_kind(event)), event, None)
        else:
            builder.warn(f"event of type {kind} not read", None)

    def _time_plan(self) -> None:
        """The plan shown at its step's time, as a load reads it: ``_run_stream`` yields a
        ``PlanningStep`` with the time its model call took and sets the step's ``timing``
        (from before that call) only when it resumes, so by the next event or the run's end."""
        step, plan = self._planning, self.builder.plan
        self._planning = None
        if step is None or plan is None:
            return
        timing = getattr(step, "timing", None)
        timestamp = _iso(getattr(timing, "start_time", None))
        if timestamp is not None and timestamp != plan.timestamp:
            self.transcript.update(plan, timestamp=timestamp)

    def _max_steps_step(self) -> None:
        """A run that hit ``max_steps`` writes the step of its forced answer (its error, time
        and usage) to memory but yields its previous step in its place: given the agent, that
        step is read from its memory, so the followed run counts it as a load does."""
        if self.agent is None or self.builder.answered:
            return
        steps = getattr(getattr(self.agent, "memory", None), "steps", None) or []
        last = steps[-1] if steps else None
        error = getattr(last, "error", None)
        if type(last).__name__ != "ActionStep" or id(last) in self.builder._seen:
            return
        if MAX_STEPS_ERROR not in _mro_names(error):
            return
        self.builder._seen.add(id(last))
        self.builder.feed("ActionStep", plain_step(last), None)

    def broke_off(self, exc: BaseException) -> bool:
        """The stream raised ``exc`` (:class:`~turnfold.following.Follow` asks before saying
        it its own way): a model's ``AgentGenerationError`` or a user's interruption ends the
        run as a load of the agent in the ``except`` block reads it
        (:meth:`StepsBuilder.run_failed`), the failed step's end its time; True when said.
        ``_run_stream`` yields the step it was in before the exception leaves it (its
        ``finally``), so that step is fed already."""
        self._time_plan()
        said: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
        planning = _planning_failure(exc)
        if planning is not None:
            said.update(planning)
        elif "AgentGenerationError" not in _mro_names(exc) and not _is_interruption(said):
            return False
        return self.builder.run_failed(said)

    def close(self) -> None:
        """The stream ended: given the agent, its managed agents' kept runs no step placed are
        read as a load of the agent reads them (:meth:`StepsBuilder.nest_untimed`), so a run
        of an earlier task (``reset=True`` clears only the agent's own memory) is warned of
        alike."""
        self._time_plan()
        self.builder.close()
        if self.agent is not None:
            self.builder.nest_untimed()


RECORDS = Records(
    mapped={
        "TaskStep": "UserMessage (the task; its images counted in meta)",
        "SystemPromptStep": 'metadata["system"]',
        "PlanningStep": "Thinking (the plan), usage in meta",
        "ActionStep": "Thinking (model_output), a ToolCall per call (tool_calls, else "
        "model_output_message.tool_calls), status from the step's error, observations as "
        "results, the final_answer call or a CodeAgent's final action_output as the answer "
        "(AssistantText), usage on the step's last text, timing as timestamps",
        "FinalAnswerStep": "the final answer (AssistantText) when no step gave one, after a "
        "max-steps notice",
        "steps": "the step records, one by one",
        "system_prompt": 'metadata["system"]',
        "agent": 'the agent\'s name, class and model_id: metadata["agent"], '
        '["agent_class"], ["model"]; the model on every AssistantText',
        "managed_agents": "each managed agent's steps as the SubAgent of its parent's call; "
        "a kept run whose times fall outside every step (the managed agent run again on its "
        "own) is not shown, with a warning, its records counted as warned",
        "output": 'a RunResult\'s output: metadata["final_output"]',
        "state": 'a RunResult\'s state (success, max_steps_error): metadata["state"]',
        "token_usage": 'a RunResult\'s total usage: metadata["usage"]',
        "timing": 'a RunResult\'s timing: metadata["started_at"], ["ended_at"]',
        RUN_ERROR: "the AgentGenerationError the agent's last step raised, or any error of "
        "the plan its run was making (plain() of the agent or its memory, while the "
        "interpreter holds it): the AssistantError that ends the failed run; a user's "
        "interruption (agent.interrupt(), held or still set on the agent, or a "
        "KeyboardInterrupt held): the AbortMarker that ends the stopped run, the calls it "
        "left running cancelled; the text the failed model call streamed (streamed, read "
        "off the held exception's frames): a Thinking before it, cut off",
    },
    ignored={
        **dict.fromkeys(STREAM_EVENTS, "a streamed event; the step that follows holds it"),
        "other key": "other keys of a saved document",
    },
)
