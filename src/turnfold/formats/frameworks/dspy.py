"""DSPy agents (``dspy.ReAct``, ``dspy.CodeAct``, any module's ``dspy.Prediction``) after the
run and live (spec A-1, A-2, A-3).

A DSPy agent's run returns a ``Prediction``: its ``trajectory`` dict holds each step as
``thought_<i>``, ``tool_name_<i>``, ``tool_args_<i>`` and ``observation_<i>`` (``predict/
react.py``; ``CodeAct`` writes ``generated_code_<i>`` and ``code_output_<i>`` instead), and the
signature's output fields (the answer) sit beside it, with ``reasoning`` when the answer was
extracted by ``ChainOfThought`` (ReAct's is). The LM calls are not in it: DSPy keeps them in
the history of the LM (``lm.history``), of every module that made them (``program.history``)
and globally (``dspy.inspect_history()``), each entry with the call's ``usage``, ``cost``,
``model`` / ``response_model`` and ``timestamp``.

Input shapes:

- a ``Prediction`` (:func:`plain`), its ``toDict()``, and the ``json.dumps`` of either or of its
  ``trajectory`` alone (``dspy.Evaluate``'s saved results and the ``EvaluationResult`` it
  returns, a run per example, are :mod:`~turnfold.formats.frameworks.dspy_evaluate`'s);
- ``agent=``: the program that ran (``load(prediction, agent=program)``, its ``history``, and its
  tools, which say which tool is a DSPy program), the LM (its ``history``) or a list of history
  entries (``lm.history``). Each step's LM call is found in that history by its response, which
  holds the step's thought and tool name, searched from the latest call back, and gives the
  step its usage, model and time (the answer's call likewise). The history's other calls that
  ran while the run ran count too (:func:`match_calls`): those between its calls found, and,
  given the program (whose ``history`` holds only the calls made while it ran), those before
  and after them back and on to another run's (a second call of a predictor already met: a
  module's other predictors count, an earlier run of it does not). An LM's history is anyone's:
  from it, only the calls between. A call made during a step ran in its tool: a nested
  program's, found among them for its steps, or a program tool's, its sub-agent's tokens; any
  other call no entry shows is the run's own, its tokens in the run's total
  (``metadata["usage"]``, then every own call's). The run's cost is the sum of every call's,
  its sub-agents' too (``metadata["cost_usd"]``).

Mapping, per step: the thought → :class:`Thinking`; the call → :class:`ToolCall` (``step-<i>``;
DSPy gives calls no id) with the observation as its result: ``error`` when it is ReAct's own
error text (``Execution error in <tool>: …``, the traceback of what the tool raised), else
``success``; the ``finish`` call ends the run and is no call row (its thought is shown). An
observation that is itself a ``Prediction`` (a tool that returns another DSPy program's run) is
that program's run, nested as a :class:`SubAgent` under the call; a tool that is a DSPy program
(known from ``agent=``) whose run is not returned is a sub-agent whose steps are missing. A
CodeAct step is a ``python`` call of its code. Then ``reasoning`` → :class:`Thinking` and the
output fields → :class:`AssistantText` (one; ``name: value`` each when the signature has
several). A trajectory that does not end with ``finish`` (``max_iters`` reached, or a model
response that named no valid tool, which ReAct only logs) ends with a notice saying so; one
whose steps start after 0 (``truncate_trajectory`` cut the oldest off to fit the context
window, in the dict the ``Prediction`` returns) begins with one, its calls numbered as its keys.

What the objects do not record: **the inputs** (the question is not in the ``Prediction``; the
history's messages hold it only in the adapter's prompt text, which is not parsed); **call
ids, timestamps, usage and model** without ``agent=`` (the trajectory holds none); no start or
end time per tool call, only the time each LM response was recorded (local time without its
offset, as DSPy writes it: given this machine's, the one that ran the LM); what the LM calls
no entry shows (a module's other predictors', a program tool's) wrote: counted, not shown; a
model's own thinking (``reasoning_content``) is in the history's ``outputs``, not read. Runs
made at once in threads (``Evaluate(num_threads=...)``) interleave their calls in a history,
which says nothing of whose each is: given such a history, a run may count another's.

Live (A-2): ``dspy.streamify(program, ...)`` (its async generator, or ``async_streaming=False``'s
sync one): ``StreamResponse`` chunks of ``next_thought`` and ``reasoning`` grow a
:class:`Thinking`, of an output field the answer's :class:`AssistantText` (``next_tool_name``
and ``next_tool_args`` chunks are not shown: the call appears when it starts); the default
``StatusMessageProvider``'s ``Calling tool <name>...`` starts that call (``executing``), after a
thinking entry that its thought fills in at the end when no listener streamed it; a nested
program's tool calls (started while another runs) are not shown live; the final ``Prediction``
settles every entry in place, so the transcript then equals ``load(prediction)`` (with the same
``agent=``). A trajectory ReAct cut to fit the context window settles the steps shown by their
numbers: those cut off stay as shown, their outcomes unknown, and a warning says so in place of
the load's notice. Status messages of a custom provider are said once in a warning, not shown.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    TranscriptBuilder,
    checked_timestamp,
    describe_args,
    stringify,
    text_result,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import Source, join_warnings
from turnfold.formats.wording import notice
from turnfold.model import (
    AssistantText,
    Entry,
    SubAgent,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    maker,
)
from turnfold.usage import add_into, attach_usage, counts_of

NAME = "dspy"
#: ``load(prediction, agent=program)``: the program (or LM) holds the run's LM calls.
READS_AGENT = True

#: A trajectory's keys (``predict/react.py``, ``predict/code_act.py``). A step's number has at
#: most nine digits: ``int()`` refuses a string of thousands (a key of a hand-made trajectory),
#: which is then no step's key, said in a warning, where it made the load raise.
_STEP_KEY = re.compile(
    r"(thought|tool_name|tool_args|observation|generated_code|code_output)_(\d{1,9})\Z"
)
#: The tool that ends a ReAct run (``react.py``: ``tools["finish"]``).
FINISH = "finish"
#: ReAct's observation for a tool that raised (``react.py``: ``Execution error in <name>: ``).
_ERROR_PREFIX = "Execution error in "
#: CodeAct's observations for code that did not parse or failed (``code_act.py``).
_CODE_ERRORS = ("Failed to parse the generated code: ", "Failed to execute the generated code: ")
#: The tool name a CodeAct step's code is shown as.
CODE_TOOL = "python"
#: Keys of a ``Prediction`` that are no output field.
REASONING = "reasoning"
TRAJECTORY = "trajectory"
#: ``StatusMessageProvider``'s default texts (``streaming/messages.py``).
_TOOL_START = re.compile(r"Calling tool (.+)\.\.\.\Z", re.DOTALL)
_TOOL_END = "Tool calling finished! Querying the LLM with tool calling results..."
#: Stream chunks of these fields are thinking; of these, not shown (the call shows them).
_THOUGHT_FIELDS = frozenset({"next_thought", REASONING})
_CALL_FIELDS = frozenset({"next_tool_name", "next_tool_args"})


# --- detection --------------------------------------------------------------------------------


def steps_of(trajectory: Mapping[str, Any]) -> int:
    """How many step keys a trajectory has (0 when any key is no step key)."""
    count = 0
    for key in trajectory:
        if not isinstance(key, str) or _STEP_KEY.match(key) is None:
            return 0
        count += 1
    return count


def _first_step(trajectory: Mapping[str, Any]) -> int:
    """The number of a trajectory's first step: 0 unless DSPy cut steps off its start
    (``ReAct.truncate_trajectory`` drops the oldest keys when the prompt is too long)."""
    found = [_STEP_KEY.match(key) for key in trajectory if isinstance(key, str)]
    return min((int(f.group(2)) for f in found if f is not None), default=0)


def _trajectory_of(document: Any) -> Mapping[str, Any] | None:
    """The trajectory of a saved ``Prediction`` (``toDict()``), or the document itself when it
    is one (``json.dumps(prediction.trajectory)``)."""
    if not isinstance(document, MAPPINGS):
        return None
    held = document.get(TRAJECTORY)
    if isinstance(held, MAPPINGS):
        return held
    return document if document and steps_of(document) else None


def detect(source: Source) -> Evidence:
    """A saved ``Prediction`` with a step-keyed ``trajectory``, or such a trajectory alone."""
    if not source.is_document:
        return Evidence.none("not a DSPy Prediction")
    trajectory = _trajectory_of(source.document)
    if trajectory is None or not steps_of(trajectory):
        return Evidence.none("no trajectory of thought_N / tool_name_N keys")
    return Evidence(share=1.0, marks=1, sampled=1)


# --- the LM history ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Call:
    """What one LM call of the history gives its step."""

    usage: Usage | None
    model: str | None
    #: Its ``timestamp`` as the history holds it: read where a step's entries take it
    #: (:meth:`DspyBuilder._settle_call`), which says of one that is no time.
    timestamp: Any
    cost: float | None


def _history_of(agent: Any) -> list[Any]:
    """The LM calls ``agent`` holds: a program's or an LM's ``history``, or the list itself."""
    if agent is None:
        return []
    history = agent if isinstance(agent, (list, tuple)) else getattr(agent, "history", None)
    if not isinstance(history, (list, tuple)):
        raise TypeError(
            f"agent= is the DSPy program that ran, its LM or their history (a list), not a "
            f"{type(agent).__name__}"
        )
    return list(history)


def _output_text(entry: Any) -> str:
    """The text of a history entry's response (``outputs``: strings, or dicts with ``text``)."""
    if not isinstance(entry, MAPPINGS):
        return ""
    parts: list[str] = []
    for output in entry.get("outputs") or ():
        if isinstance(output, str):
            parts.append(output)
        elif isinstance(output, MAPPINGS):
            parts.extend(str(v) for k, v in output.items() if k in ("text", "tool_calls") and v)
    return "\n".join(parts)


def _mentions(text: str, value: Any) -> bool:
    """Whether a response's text holds ``value`` as the adapter wrote it (ChatAdapter as is,
    JSONAdapter JSON-escaped)."""
    if not isinstance(value, str) or not value:
        return True  # nothing to look for: no evidence against
    if value in text:
        return True
    from turnfold import codec

    return codec.dumps(value)[1:-1] in text


def _local_time(value: Any) -> str | None:
    """An LM call's ``timestamp``: ``BaseLM`` writes ``datetime.now().isoformat()``, the
    local time without its offset (read as UTC, it is hours off wherever local time is not
    UTC). The history is only read from the LM object itself (``agent=lm``), in the process
    that ran it, so its local offset is this machine's: given here. None for no time."""
    stamp = checked_timestamp(value)
    if stamp is None:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    return moment.astimezone().isoformat() if moment.tzinfo is None else stamp


def _call_of(entry: Mapping[str, Any]) -> _Call:
    usage = usage_from(
        entry.get("usage"),
        input_tokens="prompt_tokens",
        output_tokens="completion_tokens",
        cache_read_tokens=("prompt_tokens_details", "cached_tokens"),
        reasoning_tokens=("completion_tokens_details", "reasoning_tokens"),
    )
    model = entry.get("response_model") or entry.get("model")
    cost = entry.get("cost")
    return _Call(
        usage=usage,
        model=model if isinstance(model, str) and model else None,
        timestamp=entry.get("timestamp"),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )


@dataclasses.dataclass
class RunCalls:
    """The LM calls of one run found in the history (:func:`match_calls`)."""

    #: Each step's call (None: not found) and the answer's.
    steps: list[_Call | None]
    answer: _Call | None = None
    #: The history entries of the calls no step or answer was found in that ran during a step
    #: (after its call, before the next call found), by the step's place: its tool ran them.
    during: dict[int, list[Any]] = dataclasses.field(default_factory=dict)
    #: The run's other calls no step or answer was found in: before its first call found,
    #: or after its answer's.
    others: list[_Call] = dataclasses.field(default_factory=list)


def _system_prompt(entry: Any) -> str | None:
    """The system message of a history entry's prompt: the adapter writes a predictor's
    signature (its fields, its instructions) there, the same for each call of that predictor."""
    messages = entry.get("messages") if isinstance(entry, MAPPINGS) else None
    first = messages[0] if isinstance(messages, list) and messages else None
    if isinstance(first, MAPPINGS) and first.get("role") == "system":
        content = first.get("content")
        return content if isinstance(content, str) else None
    return None


def match_calls(
    history: list[Any],
    steps: list[dict[str, Any]],
    answer: list[Any],
    *,
    owned: Literal["all", "program", "shared"] = "shared",
) -> RunCalls:
    """Each step's LM call, and the answer's, from ``history`` (oldest first): searched from
    the latest call back, the answer's first (its response holds the answer's values), then
    each step's (its response holds the step's thought and tool name). A step whose call is
    not found gets none: nothing is guessed.

    The calls found in none are the run's too when they ran while it ran: those between its
    first and its last call found; and what else of the history is the run's by ``owned``:
    ``"all"`` (the calls a tool made, which ran inside it), ``"program"`` (a program's
    ``history``, which holds the calls made while it ran alone: the calls before and after
    those found, back and on to a call of a predictor the run called already, which is
    another run of the program's) or ``"shared"`` (an LM's, which every program that used it
    wrote to: no more)."""
    found = RunCalls([None] * len(steps))
    if not history:  # no agent= given: no call to look for
        return found
    texts = [_output_text(entry) for entry in history]
    end = len(texts)

    def latest(wanted: list[Any]) -> int | None:
        for index in range(end - 1, -1, -1):
            if all(_mentions(texts[index], value) for value in wanted):
                return index
        return None

    places: dict[int, int | None] = {}  # a found call's index → its step's place (None: answer)
    if answer:
        at = latest(answer)
        if at is not None:
            found.answer, end, places[at] = _call_of(history[at]), at, None
    for position in range(len(steps) - 1, -1, -1):
        step = steps[position]
        wanted = [step.get("thought"), step.get("tool_name") or step.get("code")]
        if all(not isinstance(v, str) or not v for v in wanted):
            continue  # nothing to know its call by
        at = latest(wanted)
        if at is not None:
            found.steps[position], end, places[at] = _call_of(history[at]), at, position
    first, last = (min(places), max(places)) if places else (len(history), -1)
    if owned == "all":
        first, last = 0, len(history) - 1
    elif owned == "program" and places:
        seen = {_system_prompt(history[at]) for at in places}
        first = _own_calls(history, range(first - 1, -1, -1), seen, first)
        last = _own_calls(history, range(last + 1, len(history)), seen, last)
    running: int | None = None  # the step whose tool ran the calls met since its call
    for at in range(first, last + 1):
        if at in places:
            running = places[at]
        elif not isinstance(history[at], MAPPINGS):
            continue  # no LM call's record: nothing of it to count
        elif running is not None:
            found.during.setdefault(running, []).append(history[at])
        else:
            found.others.append(_call_of(history[at]))
    return found


def _own_calls(history: list[Any], order: range, seen: set[str | None], bound: int) -> int:
    """How far from ``bound``, going ``order``'s way, a program's history holds calls of the
    same run: up to a call of a predictor the run called already (``seen``, which the calls
    passed over join), which is another run's; or one whose predictor cannot be told."""
    for at in order:
        prompt = _system_prompt(history[at])
        if prompt is None or prompt in seen:
            break
        seen.add(prompt)
        bound = at
    return bound


# --- the builder ------------------------------------------------------------------------------


def _is_program(value: Any) -> bool:
    """A DSPy module (a user's program subclasses ``dspy.Module``), known by its classes'
    module, so nothing of DSPy is imported."""
    return any(
        cls.__module__ == "dspy.primitives.module" and cls.__name__ == "Module"
        for cls in type(value).__mro__
    )


def _program_tools(agent: Any) -> frozenset[str]:
    """The names of ``agent``'s tools that are DSPy programs (``ReAct.tools``: name → Tool)."""
    tools = getattr(agent, "tools", None)
    if not isinstance(tools, MAPPINGS):
        return frozenset()
    return frozenset(
        name for name, tool in tools.items() if _is_program(getattr(tool, "func", None))
    )


def _steps(trajectory: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The trajectory's steps in order, each as ``{"thought", "tool_name", ...}``, and the keys
    that are no step's. A trajectory as ReAct writes it is read by :func:`_react_steps`, the
    same steps at once; any other (CodeAct's, one with a step's keys out of ReAct's order or
    one missing, one put together by hand) key by key."""
    react = _react_steps(trajectory)
    if react is not None:
        return react, []
    steps: dict[int, dict[str, Any]] = {}
    unread: list[Any] = []
    for key, value in trajectory.items():
        found = _STEP_KEY.match(key) if isinstance(key, str) else None
        if found is None:
            unread.append(key)
            continue
        field, index = found.group(1), int(found.group(2))
        steps.setdefault(index, {})[_FIELD_NAMES.get(field, field)] = value
    return [steps[index] for index in sorted(steps)], unread


_FIELD_NAMES = {"tool_args": "args", "generated_code": "code", "code_output": "output"}
#: A ReAct step's keys, in the order ``react.py`` writes them (``thought_<i>``, ``tool_name_<i>``,
#: ``tool_args_<i>``, ``observation_<i>``), and the step fields they are read as.
_REACT_FIELDS = ("thought", "tool_name", "tool_args", "observation")
_REACT_STEP = tuple(_FIELD_NAMES.get(field, field) for field in _REACT_FIELDS)
#: The keys of ReAct's first steps, in order: made once, not per load (issue 22). Replaced, never
#: changed, when a longer trajectory is met, up to this many steps; the keys of a longer one are
#: made for it.
_react_key_names: tuple[str, ...] = ()
_REACT_KEYS_KEPT = 10_000


def _react_keys(start: int, count: int) -> tuple[str, ...]:
    """The keys ReAct writes for steps ``start`` to ``start + count - 1``, in its order."""
    global _react_key_names
    end = start + count
    if end > len(_react_key_names) // 4 and len(_react_key_names) < 4 * _REACT_KEYS_KEPT:
        steps = min(_REACT_KEYS_KEPT, max(end, 2 * len(_react_key_names) // 4))
        _react_key_names = tuple(f"{f}_{i}" for i in range(steps) for f in _REACT_FIELDS)
    names = _react_key_names  # one read: another thread may replace it
    if end <= len(names) // 4:
        return names[4 * start : 4 * end]
    return tuple(f"{f}_{i}" for i in range(start, end) for f in _REACT_FIELDS)


def _react_steps(trajectory: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The steps of a trajectory as ReAct writes it: each step's four keys in order, the steps
    numbered on from the first (0, or later when ReAct cut the first ones off to fit the
    context window). Its keys are compared with those names at once, no key read by
    :data:`_STEP_KEY` one at a time: the same steps :func:`_steps` reads key by key, or None
    for any other trajectory."""
    keys = tuple(trajectory)
    count, rest = divmod(len(keys), 4)
    first = keys[0] if keys else None
    found = _STEP_KEY.match(first) if type(first) is str and not rest else None
    if found is None or found.group(1) != _REACT_FIELDS[0]:
        return None
    if keys != _react_keys(int(found.group(2)), count):
        return None
    values = iter(trajectory.values())
    thought, name, args, observation = _REACT_STEP
    return [
        {thought: t, name: n, args: a, observation: o}
        for t, n, a, o in zip(values, values, values, values, strict=True)
    ]


def _outputs(document: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The signature's output fields of a saved ``Prediction``: what is neither the trajectory
    nor the reasoning, nor DSPy's own ``dspy_`` keys."""
    return [
        (key, value)
        for key, value in document.items()
        if key not in (TRAJECTORY, REASONING) and not str(key).startswith("dspy_")
    ]


def fields_text(outputs: list[tuple[str, Any]]) -> str:
    """A signature's fields as one text: the value of one, a ``name: value`` line each of
    several."""
    if len(outputs) == 1:
        return stringify(outputs[0][1])
    return "\n".join(f"{key}: {stringify(value)}" for key, value in outputs)


#: Observations that are no mapping, told by their type alone (most tools return one of these):
#: ``isinstance(value, Mapping)`` asks the ABC for each.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _nested_run(value: Any) -> Mapping[str, Any] | None:
    """An observation that is another program's run: its ``Prediction`` (as :func:`plain` and
    ``toDict()`` give it), known by its step-keyed ``trajectory``."""
    if type(value) in _SCALARS or not isinstance(value, MAPPINGS):
        return None
    trajectory = value.get(TRAJECTORY)
    return value if isinstance(trajectory, MAPPINGS) and steps_of(trajectory) else None


class DspyBuilder(TranscriptBuilder):
    """Builds a transcript from one saved ``Prediction`` (or a trajectory), its LM calls taken
    from ``agent`` (:func:`match_calls`)."""

    def __init__(
        self, transcript: Transcript | None = None, source_name: str = "<prediction>", *,
        agent: Any = None, owned: Literal["all", "program", "shared"] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(transcript, source_name)
        self.agent = agent
        self.history = _history_of(agent)
        #: Which calls of the history are the run's besides those found (:func:`match_calls`):
        #: a program's history holds its own calls, a list or an LM's may hold anyone's.
        self.owned = owned or ("program" if _is_program(agent) else "shared")
        self.program_tools = _program_tools(agent)
        self.cost: float | None = None
        #: The run's LM calls that no entry shown carries (:meth:`_count_unshown`).
        self.unshown: list[_Call] = []

    def build(self, document: Mapping[str, Any]) -> None:
        """Every entry of the run made first, each call settled by its observation, and then
        appended at once (issue 22): none is in the transcript while it is made, so none is
        updated."""
        held = document.get(TRAJECTORY)
        if isinstance(held, MAPPINGS):
            trajectory: Mapping[str, Any] = held
            outputs = _outputs(document)
            reasoning = document.get(REASONING)
        elif held is None and steps_of(document):
            trajectory, outputs, reasoning = document, [], None  # the trajectory alone
        else:
            trajectory, outputs, reasoning = {}, _outputs(document), document.get(REASONING)
            if held is not None:
                self.warn(f"a trajectory that is no dict ({type(held).__name__}): not read", 1)
        steps, unread = _steps(trajectory)
        for key in unread:
            self.warn(f"trajectory key {key!r} not read", 1)
        answer_values = [reasoning, *(v for _, v in outputs)]
        calls = match_calls(
            self.history, steps, [v for v in answer_values if isinstance(v, str) and v],
            owned=self.owned,
        )  # fmt: skip
        self.unshown.extend(calls.others)
        made: list[Entry] = []
        first = _first_step(trajectory)
        if first:
            said = {"first": first}
            made.append(notice("reader.trajectory_truncated", said, level="warning",
                               subtype="truncated"))  # fmt: skip
        for position, step in enumerate(steps, start=first):
            start = len(made)
            self._step(position, step, made, calls.during.get(position - first, []))
            found = calls.steps[position - first]
            if found is not None:
                self._settle_call(made[start:], found, f"the LM call of step {position}")
        if steps and steps[-1].get("tool_name") != FINISH and "code" not in steps[-1]:
            made.append(notice("reader.trajectory_unfinished", level="warning",
                               subtype="no_finish"))  # fmt: skip
        start = len(made)
        if isinstance(reasoning, str) and reasoning:
            made.append(_new_thinking(reasoning))
        if outputs:
            made.append(AssistantText(text=fields_text(outputs)))
        self._settle_call(made[start:], calls.answer, "the answer's LM call")
        self.transcript.extend(made)
        self._count_unshown([*calls.steps, calls.answer])
        if self.cost is not None:
            self.transcript.metadata["cost_usd"] = self.cost

    def _count_unshown(self, shown: list[_Call | None]) -> None:
        """The run's LM calls that no entry carries (a module's other predictors, a tool's own
        calls) count all the same: in the run's cost, and in its tokens, all its own calls'
        then (``metadata["usage"]``, which wins over the sum of its entries': spec U-1)."""
        if not self.unshown:
            return
        totals = _tokens_of([*(call for call in shown if call is not None), *self.unshown])
        if totals:
            self.transcript.metadata["usage"] = totals
        for call in self.unshown:
            self._add_cost(call.cost)

    def _add_cost(self, cost: float | None) -> None:
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def _settle_call(self, entries: list[Entry], call: _Call | None, what: str) -> None:
        """The LM call's usage, model and time on the entries its response wrote (not yet in
        the transcript: set, not updated); a time that is no time left out, said of ``what``
        (``common.warned_timestamp``)."""
        if call is None or not entries:
            return
        stamp = warned_timestamp(call.timestamp, _local_time,
                                 lambda reason: self.warn(reason, 1), what,
                                 name="timestamp")  # fmt: skip
        if stamp is not None:
            entries[0].timestamp = stamp
        if call.model is not None:
            self.transcript.metadata.setdefault("model", call.model)
            for entry in entries:
                if isinstance(entry, AssistantText):
                    entry.model = call.model
        attach_usage(entries, call.usage, model=call.model)
        self._add_cost(call.cost)

    def _step(
        self, position: int, step: dict[str, Any], made: list[Entry], during: list[Any]
    ) -> None:
        """A step's thought and call, onto ``made``; ``during``: the LM calls its tool made,
        a sub-agent's when its tool is a program, else the run's own."""
        thought = step.get("thought")
        if isinstance(thought, str):
            if thought:
                made.append(_new_thinking(thought))
        elif thought is not None:
            made.append(_new_thinking(stringify(thought)))
        if step.get("tool_name") != FINISH:
            call = self._call(position, step, during)
            if call is not None:
                made.append(call)
                if call.subagent is not None:
                    return  # the calls are its sub-agent's
        if during:  # most steps' tools call no LM
            self.unshown.extend(map(_call_of, during))

    def _call(self, position: int, step: dict[str, Any], during: list[Any]) -> ToolCall | None:
        """A step's call, made settled by its observation (CodeAct's steps told by their
        keys, which a ReAct step's two tests rule out)."""
        observation = step.get("observation")
        if "code" in step or (
            "tool_name" not in step
            and ("output" in step or (isinstance(observation, str) and _code_failed(observation)))
        ):
            name: Any = CODE_TOOL
            args: Any = {"code": step["code"]} if isinstance(step.get("code"), str) else None
            value = step.get("output", observation)
            failed = isinstance(observation, str) and _code_failed(observation)
        else:
            name, args, value = step.get("tool_name"), step.get("args"), observation
            failed = isinstance(value, str) and value.startswith(f"{_ERROR_PREFIX}{name}: ")
            if not isinstance(name, str) or not name:
                if observation is None and args is None:
                    self.warn(f"step {position} has no tool name", 1)
                    return None
                name = "(unnamed tool)"
        if name == CODE_TOOL and args is None and observation is not None:
            failed = True  # CodeAct's code did not parse: only the observation says so
        run = _nested_run(value)
        result = None
        if run is not None:
            outputs = _outputs(run)
            result = text_result(fields_text(outputs) if outputs else None)
        elif value is not None or "observation" in step or "output" in step:
            result = text_result(stringify(value) if value is not None else None)
        status: ToolStatus = "error" if failed else "success" if result is not None else "unknown"
        subagent = (
            self._subagent(name, args, run, during)
            if run is not None or name in self.program_tools
            else None
        )
        description = describe_args(name, args)
        return _new_call(f"step-{position}", name, args, description, status, result, subagent)

    def _subagent(
        self, name: str, args: Any, run: Mapping[str, Any] | None, during: list[Any]
    ) -> SubAgent | None:
        """A tool's run of another DSPy program: nested when the observation is its
        ``Prediction`` (its steps' LM calls found among those its tool made, ``during``), else
        (a program tool, known from ``agent=``) with its steps missing, their tokens its own."""
        task = describe_args(name, args)
        if task is None and isinstance(args, MAPPINGS) and args:
            texts = [v for v in args.values() if isinstance(v, str)]
            task = texts[0] if len(texts) == 1 else stringify(args)  # the program's input
        if run is not None:
            child = Transcript(metadata={"source_format": NAME})
            builder = DspyBuilder(child, self.source_name, agent=during, owned="all")
            builder.build(run)
            self._add_cost(builder.cost)
            join_warnings(self.transcript.warnings, child.warnings)
            child.warnings = []
            return SubAgent(
                name=name, task=task, transcript=child, tool_count=len(child.tool_calls())
            )
        if name in self.program_tools:
            calls = [_call_of(entry) for entry in during]
            for call in calls:
                self._add_cost(call.cost)
            usage = usage_from(
                _tokens_of(calls), input_tokens="input_tokens", output_tokens="output_tokens",
                cache_read_tokens="cache_read_tokens", cache_write_tokens="cache_write_tokens",
                reasoning_tokens="reasoning_tokens",
            )  # fmt: skip
            return SubAgent(name=name, task=task, steps_missing=True, usage=usage)
        return None


def _tokens_of(calls: list[_Call]) -> dict[str, int]:
    """The token counts of LM calls added up (:mod:`turnfold.usage`'s names)."""
    totals: dict[str, int] = {}
    for call in calls:
        add_into(totals, counts_of(call.usage))
    return totals


def _code_failed(observation: str) -> bool:
    """CodeAct's observation for code that did not parse or failed."""
    return observation.startswith(_CODE_ERRORS)


#: The entries a load makes one of per step, at a third of the cost of calling their classes
#: (:func:`~turnfold.model.maker`; issue 22).
_new_thinking = maker(Thinking, "text")
_new_call = maker(
    ToolCall, "call_id", "name", "args", "description", "status", "result", "subagent"
)


# --- reading ----------------------------------------------------------------------------------


def read(source: Source, *, agent: Any = None) -> Transcript:
    """The ``Prediction`` (or trajectory) of ``source``; its LM calls from ``agent``."""
    transcript = Transcript(metadata={"source_format": NAME})
    document = source.document if source.is_document else None
    if not isinstance(document, MAPPINGS):
        raise TranscriptFormatError(source.name, [NAME], None, "no DSPy Prediction (a dict)")
    builder = DspyBuilder(transcript, source.name, agent=agent)
    builder.build(document)
    if _trajectory_of(document) is None and not _outputs(document):
        raise TranscriptFormatError(source.name, [NAME], None, "no trajectory and no outputs")
    for key in document:
        if str(key).startswith("dspy_"):
            source.note("dspy_*", "ignored")
        else:
            source.note(key if key in (TRAJECTORY, REASONING) else "output field", "mapped")
    return transcript


# --- objects (spec A-1) -----------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A DSPy ``Prediction`` as the record :func:`read` reads, by attribute: its store's keys,
    an observation that is another program's ``Prediction`` as its record too (the trajectory
    is otherwise read in place, not copied)."""
    store = getattr(value, "_store", None)
    if not isinstance(store, dict) or not any(
        cls.__name__ == "Prediction" for cls in type(value).__mro__
    ):
        raise TypeError(
            f"a {type(value).__name__} is no DSPy run: load the Prediction the program returned "
            "(with agent=program or agent=lm for its LM calls)"
        )
    record = dict(store)
    trajectory = record.get(TRAJECTORY)
    # The types of its values first, at C speed: most runs hold no Prediction, and then no
    # value is looked at one by one (issue 22).
    if isinstance(trajectory, dict) and any(
        kind.__name__ == "Prediction" for kind in set(map(type, trajectory.values()))
    ):
        nested = [
            key for key, item in trajectory.items()
            if type(item).__name__ == "Prediction" and key.startswith("observation_")
        ]  # fmt: skip
        if nested:
            trajectory = dict(trajectory)
            for key in nested:
                trajectory[key] = plain(trajectory[key])
            record[TRAJECTORY] = trajectory
    return record


# --- live (spec A-2) --------------------------------------------------------------------------


class Follower:
    """Maps ``dspy.streamify(program)(...)``'s events into ``transcript`` (spec A-2)."""

    def __init__(self, transcript: Transcript, *, agent: Any = None) -> None:
        self.transcript = transcript
        transcript.metadata.setdefault("source_format", NAME)
        self.agent = agent
        self.builder = TranscriptBuilder(transcript, "<stream>", live=True)
        #: The entries shown so far, in order: the final Prediction settles them in place.
        self._shown: list[Entry] = []
        self._depth = 0  # tool calls running: one started inside another is a nested program's
        self._growing: tuple[str, str] | None = None
        self._parts: list[str] = []
        self._thought = False  # the step's thought is shown (streamed) already
        self._done = False

    def feed(self, event: Any) -> None:
        kind = type(event).__name__
        if self._done:
            self.builder.warn_once(f"event {kind} after the final Prediction not shown")
        elif kind == "StatusMessage":
            self._status(str(getattr(event, "message", "")))
        elif kind == "StreamResponse":
            self._chunk(event)
        elif kind == "Prediction":
            self._final(event)
        else:
            self.builder.warn_once(f"event {kind} not shown")

    def close(self) -> None:
        if not self._done:  # the stream ended without its Prediction: no outcomes known
            calls = [e for e in self._shown if isinstance(e, ToolCall)]
            self.builder.settle_open(calls)
            for entry in self._shown:
                if isinstance(entry, Thinking) and entry.streaming:
                    self.transcript.update(entry, streaming=False)

    def _show(self, entry: Entry) -> Entry:
        self._shown.append(self.transcript.append(entry))
        return entry

    def _status(self, message: str) -> None:
        start = _TOOL_START.match(message)
        if start is not None:
            if self._depth == 0 and start.group(1) != FINISH:
                if not self._thought:  # its thought is not streamed: filled in at the end
                    self._show(Thinking(text="", streaming=True))
                position = sum(1 for e in self._shown if isinstance(e, ToolCall))
                self._show(ToolCall(call_id=f"step-{position}", name=start.group(1),
                                    status="executing"))  # fmt: skip
            self._depth += 1
            self._thought, self._growing = False, None
        elif message == _TOOL_END:
            self._depth = max(0, self._depth - 1)
        else:
            self.builder.warn_once("status messages of a custom StatusMessageProvider not shown")

    def _chunk(self, event: Any) -> None:
        field, chunk = event.signature_field_name, event.chunk
        if self._depth > 0 or field in _CALL_FIELDS or not isinstance(chunk, str):
            return  # a nested program's, or the call's (shown when it starts)
        key = (str(event.predict_name), str(field))
        last = self._shown[-1] if self._shown else None
        if key != self._growing or last is None:
            self._growing, self._parts = key, [chunk]
            thinking = field in _THOUGHT_FIELDS
            self._show(
                Thinking(text=chunk, streaming=True) if thinking else AssistantText(text=chunk)
            )
            self._thought = self._thought or field == "next_thought"
        else:
            self._parts.append(chunk)
            self.transcript.update(last, text="".join(self._parts))
        if event.is_last_chunk:
            self._growing = None

    def _final(self, prediction: Any) -> None:
        """The run's ``Prediction``: the entries it gives settle those shown, in order."""
        self._done = True
        record = plain(prediction)
        made = Transcript(metadata={"source_format": NAME})
        DspyBuilder(made, "<stream>", agent=self.agent).build(record)
        shown, entries = self._shown, made.entries
        trajectory = record.get(TRAJECTORY)
        first = _first_step(trajectory) if isinstance(trajectory, MAPPINGS) else 0
        start = self._step_start(first) if first else None
        if start is not None:
            # ReAct cut steps off the trajectory's start: the Prediction's first step settles
            # the one shown live under its number, not the run's first (matched by place, the
            # steps after the cut were settled by the wrong steps' calls and observations).
            # The steps cut off stay as shown, their outcomes unknown; the load's notice of
            # the cut (the first entry made) is said as a warning: it cannot sit before them.
            cut = shown[:start]
            self.builder.settle_open(e for e in cut if isinstance(e, ToolCall))
            for entry in cut:
                if isinstance(entry, Thinking) and entry.streaming:
                    self.transcript.update(entry, streaming=False)
            steps = "step 0" if first == 1 else f"steps 0 to {first - 1}"
            self.builder.warn(
                f"DSPy cut {steps} off the trajectory to fit the model's context window "
                "(truncate_trajectory): shown live, their arguments and results are not in the "
                "Prediction",
                None,
            )
            shown, entries = shown[start:], entries[1:]
        for index, entry in enumerate(entries):
            live = shown[index] if index < len(shown) else None
            if live is not None and type(live) is type(entry):
                changes = {
                    f.name: getattr(entry, f.name)
                    for f in dataclasses.fields(entry)
                    if f.name != "id" and getattr(entry, f.name) != getattr(live, f.name)
                }
                if changes:
                    self.transcript.update(live, **changes)
            else:
                if live is not None:
                    self.builder.warn_once("the entries shown live differ from the Prediction's")
                entry.id = ""
                self.transcript.append(entry)
        for key, value in made.metadata.items():
            self.transcript.metadata.setdefault(key, value)
        join_warnings(self.transcript.warnings, made.warnings)

    def _step_start(self, step: int) -> int | None:
        """Where step ``step`` starts among the entries shown live: its call (``step-<n>``, as
        :meth:`_status` numbers it), after its thought when one was shown; None when it was not
        shown."""
        wanted = f"step-{step}"
        for index, entry in enumerate(self._shown):
            if isinstance(entry, ToolCall) and entry.call_id == wanted:
                before = self._shown[index - 1] if index else None
                return index - 1 if isinstance(before, Thinking) else index
        return None


RECORDS = Records(
    mapped={
        TRAJECTORY: "each step: thought → Thinking; tool_name, tool_args, observation → "
        "ToolCall (error for ReAct's 'Execution error in <tool>:'; a Prediction observation "
        "nested as its SubAgent); generated_code / code_output (CodeAct) → a python call; "
        "finish is no call",
        REASONING: "the extraction's reasoning → Thinking",
        "output field": "the signature's outputs → the answer's AssistantText",
    },
    ignored={"dspy_*": "DSPy's own dspy_ keys of a Prediction"},
)
