"""CrewAI's runs (spec A-1): the ``CrewOutput`` that ``crew.kickoff()`` returns, the
``LiteAgentOutput`` of ``Agent.kickoff()``, a ``TaskOutput``, their saved form
(``model_dump_json()``), and the log a crew writes with ``output_log_file`` (JSON or text).

Input shapes (each object as CrewAI's own ``model_dump(mode="json")`` gives it,
:func:`plain`):

- a crew's output ``{"raw", "tasks_output": [...], "token_usage": {...}, ...}``;
- an agent's output ``{"raw", "agent_role", "usage_metrics", "messages", ...}``;
- one task's output ``{"description", "agent", "raw", "output_format", "messages", ...}``, or
  a list of them (``crew_output.tasks_output``);
- the ``output_log_file`` log saved as JSON: an array of ``{"timestamp", "task_name", "task",
  "agent", "status": "started" | "completed", "output"}``;
- the same log as text, which the crew writes when its name does not end in ``.json``
  (``output_log_file=True`` writes ``logs.txt``, appended to run after run): an entry a line
  ``<time>: task_name="…", task="…", agent="…", status="started"`` (``, output="…"`` after
  ``status="completed"``), the values unescaped (``FileHandler.log``), so they span lines and
  hold quotes. An entry is told by its start, its values by the fixed order of the keys
  (``Crew._log_task_start``, ``_process_task_result``): a value holding a separator
  (``", agent="``) makes the split a guess, said in a warning; an entry of another shape is
  a warning, not read. A value ``None`` is written as the text ``None``: no name, no agent.

Mapping (each task is one turn; every entry of a task names its agent's role in
``meta["agent"]``, and a :class:`SystemNotice` ``Agent: <role>`` (subtype ``agent``, as the
AutoGen reader announces a change of agent) after the task's prompt shows whose work the turn
is):

- a manager's calls of CrewAI's delegation tools (``Delegate work to coworker``, ``Ask
  question to coworker``; ``Process.hierarchical``) → a :class:`SubAgent` on the call, named
  by its ``coworker``, its task the ``task`` or ``question``: the output keeps the coworker's
  answer (the call's result), none of its steps (``steps_missing``);
- a task's ``description`` → the turn's :class:`UserMessage` (``meta["task"]`` its ``name``,
  ``meta["expected_output"]``); CrewAI's own rendering of it, the first ``user`` message of its
  ``messages`` (the description with the expected output and the context of earlier tasks),
  is ``meta["prompt"]``, and its agent's ``system`` message ``meta["system"]``. An agent's
  output has no description: its first ``user`` message is the prompt, what the agent was
  asked taken out of CrewAI's rendering (``Current Task: {input}`` and what its ReAct
  prompt adds), which is ``meta["prompt"]``;
- the other ``messages`` are Chat Completions messages, read by the ``openai`` reader's
  rules (:class:`~turnfold.formats.openai_chat.OpenAIChatBuilder`): ``tool_calls`` →
  :class:`ToolCall`, ``tool`` messages their results. Chat messages have no error flag, so a
  call's outcome is ``unknown``, except for the calls ``tool_failures`` lists (CrewAI 1.15's
  record of a tool that raised or reported a failure, by tool name and arguments): those are
  ``error``. A failure that matches no call is a warning :class:`SystemNotice`;
- a model without native function calling writes its calls in the text (CrewAI's ReAct
  prompt): an ``assistant`` message ``Thought: … Action: <tool> Action Input: <JSON>
  Observation: <result>`` (CrewAI appends the observation to the model's text) → a
  :class:`Thinking` for the thought and a :class:`ToolCall` settled by the observation;
- later ``user`` messages are CrewAI's own prompts, not the user's: the ``Analyze the tool
  result…`` it sends after each call a ReAct model wrote is kept with that call
  (``meta["framework_prompt"]``), so the task stays one turn; its demand for the final answer
  when the agent reached ``max_iter`` is the limit's notice (below), its words
  ``meta["framework_prompt"]``; another (a human's feedback) is a :class:`SystemNotice`
  (subtype ``framework_prompt``), where it was said;
- an agent that reached its ``max_iter`` → a warning :class:`SystemNotice` (subtype
  ``max_iterations``) after the task's answer, which CrewAI then asked for. CrewAI 1.15 asks
  in a copy of the messages, so they keep no trace of it; with function calling they then end
  with tool results no text of the model's answers, and the answer is no tool's result: that
  tells it (a ReAct model's messages end alike either way: only its frames tell it);
- ``raw`` → the turn's answer, an :class:`AssistantText`, unless the task's last text
  already says it (CrewAI keeps the model's final text out of ``messages`` on some paths);
- ``token_usage`` (a crew's) / ``usage_metrics`` (an agent's) → ``metadata["usage"]`` in
  turnfold's names and ``metadata["requests"]``. CrewAI counts tokens per crew (per LLM
  instance, added up), never per task or response, so no entry carries a usage: a turn's
  tokens are not recorded (L-3). Its zero counts of cached and reasoning tokens are its
  defaults, not measurements, and are left out;
- the log: a ``started`` entry → the task's :class:`UserMessage`, its ``completed`` entry →
  the answer; a task started and never completed gets a warning :class:`SystemNotice`. Tasks
  run side by side (``async_execution``) are logged started before any ends (and so is the
  task after them that waits for them): each is one turn all the same, its answer under its
  start, the turns in the order the tasks started (:class:`_TaskTurns`). The
  log holds no tool calls. Its ``timestamp`` is local time with no zone, kept as
  ``meta["logged_at"]``, not as the entry's time (which is read as UTC).

Live (spec A-2): CrewAI streams every event of its bus, in order, as ``StreamFrame``
objects (``type``, ``data``: the event's fields) through a ``StreamSession``: a Flow's own
``flow.stream_events()``, or a crew's through :func:`stream_events` (CrewAI's own frame
streaming, which it gives only flows, around ``crew.kickoff``)::

    for frame in turnfold.follow(stream_events(crew, inputs={...})): ...

:class:`Follower` maps the frames, each entry dated by its frame's ``timestamp`` (its event's,
in UTC):

- ``task_started`` → the task's :class:`UserMessage` (its description; the agent is told by
  ``agent_execution_started``, whose ``agent.role`` names the turn's entries and its
  ``Agent:`` notice). Tasks with ``async_execution`` run side by side, their frames
  interleaved, each told by its ``task_id``: each task is one turn, as a load of the crew's
  output shows it. A transcript only grows, so a task started while another's turn is open
  waits, out of sight, until that turn ends; then its turn shows with what it did so far
  and grows as it goes on (:class:`_TaskTurns`);
- an ``agent_execution_started`` while a call of the task's agent runs is a coworker that
  call delegated to (the delegation tools run it inside the call): a :class:`SubAgent` on the
  call, its task's description the sub-agent's prompt, and every frame until its
  ``agent_execution_completed`` (its ``started_event_id`` the start's) followed into its
  transcript, whose answer is that frame's ``output``. Coworkers of tasks run side by side
  run at once, their frames interleaved: each start is the call's its frame's ``parent_id``
  names (the call's start frame; frames with none: the running delegation naming its role
  and task), and each frame after it the coworker's whose task (the one its delegation
  made) it names (:class:`_Coworker`);
- an ``llm_call_started`` whose last message is CrewAI's demand for the final answer: the
  agent reached its ``max_iter`` (the ``agent``'s of ``agent_execution_started``), a warning
  :class:`SystemNotice` after the task's answer. CrewAI makes that call with no task nor
  agent: its frames' task is the one whose ``task_prompt`` its messages render;
- the model's calls (CrewAI's providers emit ``llm_call_started``, ``llm_stream_chunk`` when
  streaming, ``llm_call_completed``, all with the call's ``call_id``): text chunks → an
  :class:`AssistantText` growing as they arrive, thinking chunks a :class:`Thinking`; the
  completion's ``response`` the text in full (a ReAct step's thought a :class:`Thinking`, its
  final answer the text, its action shown by the tool's frames; a streamed ReAct text stays
  as written), its ``usage`` that response's, on the first entry it made (a response of
  calls only: its first call). A custom ``BaseLLM`` emits none of them unless it calls
  ``_emit_call_started_event`` and the rest itself: then only the answers show;
- ``tool_usage_started`` → a :class:`ToolCall` ``executing`` (``tool_name``, ``tool_args``),
  settled by the frame whose ``started_event_id`` is its id: ``tool_usage_finished`` →
  ``success`` (``error`` when it carries the ``failure`` the tool reported), its ``output``
  the result, the span of its ``started_at`` and ``finished_at`` its duration (they are
  local times with no zone); ``tool_usage_error`` → ``error``, the error its result. These
  are CrewAI's own outcomes, which its outputs do not keep: a load of the crew's output says
  ``unknown`` where the live view said ``success``;
- ``task_completed`` → the answer (its ``output.raw``) unless the model's last text said
  it; ``llm_guardrail_completed`` with ``success`` false → a warning :class:`SystemNotice`
  with its ``error``, the feedback CrewAI runs the task again with; ``task_failed``,
  ``agent_execution_error``, ``llm_call_failed``, ``crew_kickoff_failed`` → an
  :class:`AssistantError` with their ``error``;
- the session's result, once the stream ends, a ``CrewOutput`` → ``metadata["usage"]``.

Other frames (the flow's, the agent executor's, memory's) are not shown: the task's events
say what they do. Frames saved with ``model_dump_json()`` (JSON lines) load as
following them shows them, a call never settled ``unknown``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    TranscriptBuilder,
    as_list,
    as_text,
    checked_timestamp,
    parse_arguments,
    plain_output,
    stringify,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_chat import OpenAIChatBuilder
from turnfold.formats.source import Source, keep_warning, plain_each, plain_value, warning_count
from turnfold.formats.wording import notice as worded_notice
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    LoadWarning,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    UserMessage,
    span_ms,
)

NAME = "crewai"

_CREW, _AGENT, _TASK = "crew_output", "agent_output", "task_output"
_STARTED, _COMPLETED = "log/started", "log/completed"
_FRAME = "frame"

RECORDS = Records(
    mapped={
        _CREW: "the crew's run: each of its tasks_output a turn; token_usage → "
        'metadata["usage"] (the crew\'s total: no per-turn figures)',
        _TASK: "a turn: description → UserMessage, messages → tool calls and results "
        "(tool_failures → error), raw → the answer; the agent's role in meta",
        _AGENT: "Agent.kickoff()'s run: one turn, its first user message the prompt; "
        'usage_metrics → metadata["usage"]',
        _STARTED: "output_log_file's entry (JSON or text) of a task's start → UserMessage",
        _COMPLETED: "output_log_file's entry (JSON or text) of a task's end → its answer",
        "frame/task_started": "a task's turn begins: its description → UserMessage",
        "frame/agent_execution_started": "the agent's role names the task's entries; a "
        "coworker's, while a call of its manager runs, begins a SubAgent under that call",
        "frame/agent_execution_completed": "a coworker's answer ends its SubAgent (the task's "
        "own agent's is its task_completed's)",
        "frame/llm_call_started": "a call CrewAI makes for the final answer when the agent "
        "reached max_iter: a warning notice after the task's answer",
        "frame/llm_stream_chunk": "the model's text as it streams: an AssistantText growing "
        "(a tool call's chunks are not shown: its tool_usage_started is)",
        "frame/llm_thinking_chunk": "the model's thinking as it streams: a Thinking growing",
        "frame/llm_call_completed": "the model's text (a ReAct step: its thought a Thinking, its "
        "final answer the text) and the call's usage, on the first entry its response made",
        "frame/tool_usage_started": "a ToolCall, executing until its end frame",
        "frame/tool_usage_finished": "settles its call: success (error with a failure), output",
        "frame/tool_usage_error": "settles its call: error, the error as its result",
        "frame/task_completed": "the task's answer (output.raw)",
        "frame/llm_guardrail_completed": "a task guardrail's rejection (success false): a "
        "warning notice with its error, the feedback CrewAI reruns the task with",
        "frame/task_failed": "AssistantError (error)",
        "frame/agent_execution_error": "AssistantError (error)",
        "frame/llm_call_failed": "AssistantError (error)",
        "frame/crew_kickoff_failed": "AssistantError (error)",
    },
    ignored={
        "frame/crew_kickoff_started": "the run's start: its tasks' frames follow",
        "frame/crew_kickoff_completed": "its total_tokens only; the crew's output counts all",
        "frame/agent_logs_started": "console logging of the agent's start",
        "frame/agent_logs_execution": "console logging of the agent's answer",
        "frame/flow_started": "a flow's (or the agent executor's) bookkeeping",
        "frame/flow_finished": "a flow's (or the agent executor's) bookkeeping",
        "frame/method_execution_started": "a flow method's bookkeeping",
        "frame/method_execution_finished": "a flow method's bookkeeping",
        "frame/tool_failure_detected": "the call's own end frame settles it",
        "frame/llm_guardrail_started": "its completion says the guardrail's verdict",
        "frame/default_env": "CrewAI's note of the environment it runs in",
    },
)

#: The fields only each of CrewAI's outputs has (``model_dump`` writes them all).
_CREW_FIELDS = frozenset({"raw", "tasks_output", "token_usage"})
_AGENT_FIELDS = frozenset({"raw", "agent_role", "usage_metrics", "messages"})
_TASK_FIELDS = frozenset({"description", "agent", "raw", "output_format"})
_LOG_FIELDS = frozenset({"timestamp", "task_name", "task", "agent", "status"})
_LOG_STATUSES = ("started", "completed")
_FRAME_FIELDS = frozenset({"id", "seq", "type", "channel", "data"})

#: CrewAI's ``UsageMetrics`` names → turnfold's (spec U-1).
_USAGE_NAMES = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "cached_prompt_tokens": "cache_read_tokens",
    "cache_creation_tokens": "cache_write_tokens",
    "reasoning_tokens": "reasoning_tokens",
}
#: Counts CrewAI writes as 0 when the provider gave none.
_DEFAULTED = frozenset({"cache_read_tokens", "cache_write_tokens", "reasoning_tokens"})

#: A call written in the text (CrewAI's ReAct prompt), with the observation CrewAI appends.
_REACT = re.compile(
    r"\A(?P<thought>.*?)^Action:[ \t]*(?P<name>[^\n]*)\n"
    r"Action Input:[ \t]*(?P<input>.*?)\n"
    r"Observation:[ \t]*(?P<observation>.*)\Z",
    re.S | re.M,
)


# --- objects → records ---------------------------------------------------------------------


def plain(value: Any) -> Any:
    """CrewAI's output objects (a ``CrewOutput``, a ``LiteAgentOutput``, a ``TaskOutput``, or
    a list of them) as the records CrewAI's own ``model_dump(mode="json")`` makes of them;
    the objects are read, never modified."""
    if isinstance(value, (list, tuple)):
        return plain_each(value, plain_output)
    return plain_output(value)


# --- detection -----------------------------------------------------------------------------


def _kind(value: Any) -> str | None:
    if not isinstance(value, Mapping):
        return None
    keys = value.keys()
    if keys >= _CREW_FIELDS and isinstance(value.get("tasks_output"), list):
        return _CREW
    if keys >= _AGENT_FIELDS:
        return _AGENT
    if keys >= _TASK_FIELDS:
        return _TASK
    if keys >= _LOG_FIELDS and value.get("status") in _LOG_STATUSES:
        return _STARTED if value["status"] == "started" else _COMPLETED
    if keys >= _FRAME_FIELDS and isinstance(value.get("type"), str):
        return _FRAME
    return None


def _classify(value: Any) -> int:
    return DISTINCTIVE if _kind(value) is not None else NOT_MINE


_LACKS = "no CrewAI output (tasks_output, agent_role), output_log_file entry nor stream frame"


def detect(source: Source) -> Evidence:
    """A crew's, an agent's or a task's output as CrewAI dumps it (``tasks_output`` with
    ``token_usage``; ``agent_role`` with ``usage_metrics``; ``description``, ``agent`` and
    ``output_format``), the entries of a crew's ``output_log_file`` (``task``, ``agent``,
    ``status`` started/completed), or stream frames saved with ``model_dump_json()`` (``seq``,
    ``channel``, ``data``): fields only CrewAI writes together."""
    if source.is_document and _kind(source.document) in (_CREW, _AGENT, _TASK):
        # The messages inside are CrewAI's too: weighed with the output that holds them, as a
        # Chat reader weighs each of them (it would else outweigh the one output).
        return Evidence.of(_held(source.document), lambda _: DISTINCTIVE, _LACKS)
    return Evidence.of_events(source, _classify, _LACKS)


def _held(output: Mapping[str, Any]) -> list[Any]:
    """An output and what it holds: its tasks' outputs, and every one's messages."""
    tasks = as_list(output.get("tasks_output")) if _kind(output) == _CREW else []
    held: list[Any] = [output, *tasks]
    for part in (output, *tasks):
        if isinstance(part, Mapping):
            held += as_list(part.get("messages"))
    return held


# --- reading -------------------------------------------------------------------------------


def _usage(raw: Any, transcript: Transcript) -> None:
    """The run's token counts (a crew's, or an agent's kickoff's) as ``metadata["usage"]``."""
    if not isinstance(raw, Mapping):
        return
    counts = {}
    for name, ours in _USAGE_NAMES.items():
        value = raw.get(name)
        if type(value) is int and value >= 0 and (value or ours not in _DEFAULTED):
            counts[ours] = value
    if counts and (counts.get("input_tokens") or counts.get("output_tokens")):
        transcript.metadata["usage"] = counts
    requests = raw.get("successful_requests")
    if type(requests) is int and requests > 0:
        transcript.metadata["requests"] = requests


class _Run:
    """Writes the turns of one CrewAI run into a transcript."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.transcript = Transcript(metadata={"source_format": NAME})
        self.agents: list[str] = []
        #: The log's tasks started and not yet completed, by (task name, description, agent).
        self._open: dict[tuple[Any, ...], UserMessage] = {}
        #: The log's tasks, each one turn however their entries interleave (side by side),
        #: and the turn of each task started and not yet completed, by its key.
        self._turns = _TaskTurns(self.transcript)
        self._turn_of: dict[tuple[Any, ...], object] = {}
        #: CrewAI's demand for the final answer at ``max_iter``, met in the task's messages.
        self._forced: str | None = None

    def _agent(self, role: Any) -> dict[str, Any]:
        name = as_text(role)
        if not name:
            return {}
        if name not in self.agents:
            self.agents.append(name)
        return {"agent": name}

    # --- outputs ---

    def task(self, task: Mapping[str, Any], line: int, key: str) -> None:
        """One task's output: a turn."""
        meta = self._agent(task.get("agent"))
        prompt = UserMessage(text=as_text(task.get("description")) or "", meta=dict(meta))
        name = as_text(task.get("name"))
        if name and name != prompt.text:  # CrewAI names an unnamed task by its description
            prompt.meta["task"] = name
        if as_text(task.get("expected_output")):
            prompt.meta["expected_output"] = task["expected_output"]
        self._turn(prompt, task, line, key, from_messages=False)

    def agent(self, output: Mapping[str, Any], line: int) -> None:
        """``Agent.kickoff()``'s output: a turn whose prompt is its first user message."""
        meta = self._agent(output.get("agent_role"))
        self.transcript.metadata.setdefault("agent", meta.get("agent"))
        self._turn(UserMessage(meta=dict(meta)), output, line, "agent", from_messages=True)
        _usage(output.get("usage_metrics"), self.transcript)

    def _turn(
        self,
        prompt: UserMessage,
        output: Mapping[str, Any],
        line: int,
        key: str,
        *,
        from_messages: bool,
    ) -> None:
        messages = as_list(output.get("messages"))
        rest = self._opening(prompt, messages, from_messages)
        self.transcript.append(prompt)
        if not from_messages:  # a crew's task: one of its agents did it
            self._announce(prompt.meta)
        start = len(self.transcript.entries)
        builder = OpenAIChatBuilder(self.transcript, self.source.name)
        for number, message in enumerate(rest):
            self._message(builder, message, line, f"{key}.{number}")
        written = self.transcript.entries[start:]
        self._delegations(written)
        self._failures(output.get("tool_failures"), written, prompt.meta, line)
        self._answer(output.get("raw"), written, prompt.meta)
        self._limit(rest, output.get("raw"), prompt.meta)
        for entry in self.transcript.entries[start:]:
            if "agent" in prompt.meta:
                entry.meta.setdefault("agent", prompt.meta["agent"])

    def _announce(self, meta: Mapping[str, Any]) -> None:
        if "agent" in meta:
            self.transcript.append(_agent_notice(meta["agent"]))

    def _opening(self, prompt: UserMessage, messages: list[Any], from_messages: bool) -> list[Any]:
        """The messages after the agent's system message and CrewAI's rendering of the task,
        which are kept on the prompt (or are the prompt, for an agent's output)."""
        at = 0
        while at < len(messages) and _role(messages[at]) == "system":
            prompt.meta["system"] = _text(messages[at])
            at += 1
        if at < len(messages) and _role(messages[at]) == "user":
            rendered = _text(messages[at]).strip()
            if from_messages:
                prompt.text = _task_input(rendered)
                if prompt.text != rendered:
                    prompt.meta["prompt"] = rendered
            elif rendered:
                prompt.meta["prompt"] = rendered
            at += 1
        return messages[at:]

    def _message(self, builder: OpenAIChatBuilder, message: Any, line: int, key: str) -> None:
        role = _role(message)
        if role == "user":  # CrewAI's own prompt within the task: not a turn of the user's
            text = _text(message).strip()
            last = self.transcript.entries[-1] if self.transcript.entries else None
            if text == _POST_TOOL_REASONING and isinstance(last, ToolCall):
                # The same words after every call a ReAct model wrote: part of that call's
                # round trip, kept with it (a notice would end the task's turn, P-1).
                self.transcript.update(last, meta={**last.meta, "framework_prompt": text})
                return
            if _is_forced(text):  # said after the answer it asked for (:meth:`_limit`)
                self._forced = text
                return
            notice = SystemNotice(text=text, subtype="framework_prompt")
            self.transcript.append(notice)
        elif role == "assistant" and not message.get("tool_calls"):
            written = _REACT.match(_text(message))
            if written is not None:
                self._react(written, key)
            else:
                builder.feed(message, line)
        else:
            builder.feed(message, line)

    def _react(self, written: re.Match[str], key: str) -> None:
        """A call the model wrote in the text, with the observation CrewAI appended."""
        thought = written["thought"].strip().removeprefix("Thought:").strip()
        if thought:
            self.transcript.append(Thinking(text=thought))
        observation = written["observation"].strip()
        self.transcript.append(
            ToolCall(
                call_id=f"react@{key}",
                name=written["name"].strip(),
                args=parse_arguments(written["input"].strip()),
                status="unknown",
                result=ToolResult(text=observation),
            )
        )

    def _delegations(self, written: list[Entry]) -> None:
        """A manager's calls of ``Delegate work to coworker`` / ``Ask question to coworker``:
        the coworker ran inside the call, a sub-agent. The output keeps the coworker's
        answer (the call's result) but none of its steps."""
        for call in written:
            if isinstance(call, ToolCall) and _tool_key(call.name) in _DELEGATIONS:
                args = call.args if isinstance(call.args, Mapping) else {}
                coworker = next((args[k] for k in _COWORKER if as_text(args.get(k))), None)
                task = as_text(args.get("task")) or as_text(args.get("question"))
                sub = SubAgent(name=coworker, task=task, steps_missing=True)
                self.transcript.update(call, subagent=sub)

    def _failures(
        self, failures: Any, written: list[Entry], meta: Mapping[str, Any], line: int
    ) -> None:
        """``tool_failures``: the calls CrewAI recorded as failed, by name and arguments."""
        calls = [e for e in written if isinstance(e, ToolCall)]
        for failure in as_list(failures):
            if not isinstance(failure, Mapping):
                # The output's own warning, beside its messages': it is tallied by them.
                unread = "a tool failure that is no object not read"
                keep_warning(
                    self.transcript.warnings,
                    LoadWarning(reason=unread, line=line, source=self.source.name),
                )
                continue
            name, args = failure.get("tool_name"), failure.get("tool_args")
            call = next(
                (c for c in calls if c.status != "error" and c.name == name and _same(c, args)),
                None,
            )
            reason = failure.get("failure")
            message = as_text(reason.get("message")) if isinstance(reason, Mapping) else None
            if call is not None:
                calls.remove(call)
                self.transcript.update(call, status="error")
            else:
                key = "reader.tool_failed.said" if message else "reader.tool_failed"
                self.transcript.append(
                    worded_notice(key, {"name": name, "said": message}, level="warning",
                                  subtype="tool_failure", meta=_agent_of(meta))
                )  # fmt: skip

    def _limit(self, messages: list[Any], raw: Any, meta: Mapping[str, Any]) -> None:
        """The agent reached its ``max_iter``, said after the answer CrewAI then asked for.
        CrewAI 1.15 asks in a copy of the messages, which leaves no trace of the demand: with
        function calling, the messages then end with the results of the model's last calls,
        which no text of the model's answers, and the task's answer is no tool's result (a
        ``result_as_answer`` tool's ends a task so). A ReAct model's messages end alike
        whether or not it reached the limit: its frames alone tell it."""
        forced, self._forced = self._forced, None
        if forced is not None:
            notice = _limit_notice(None, _agent_of(meta))
            notice.meta["framework_prompt"] = forced
            self.transcript.append(notice)
            return
        last = messages[-1] if messages else None
        answer = as_text(raw)
        if _role(last) == "tool" and answer and answer.strip() != _text(last).strip():
            self.transcript.append(_limit_notice(None, _agent_of(meta), told=True))

    def _answer(self, raw: Any, written: list[Entry], meta: Mapping[str, Any]) -> None:
        text = as_text(raw)
        if not text:
            return
        last = next((e for e in reversed(written) if isinstance(e, AssistantText)), None)
        if last is None or last.text.strip() != text.strip():
            self.transcript.append(AssistantText(text=text, meta=_agent_of(meta)))

    # --- the log ---

    def logged(self, entry: Mapping[str, Any], kind: str, said: list[str]) -> None:
        """One ``output_log_file`` entry; a time that is no time is left out, said of the
        entry in ``said`` (``common.warned_timestamp``)."""
        meta = self._agent(entry.get("agent"))
        task = as_text(entry.get("task")) or ""
        named = as_text(entry.get("task_name")) or task[:60]
        logged = warned_timestamp(entry.get("timestamp"), checked_timestamp, said.append,
                                  f"the log's {entry.get('status')} entry of task {named!r}",
                                  name="timestamp")  # fmt: skip
        if logged is not None:
            meta["logged_at"] = logged
        key = (as_text(entry.get("task_name")), task, meta.get("agent"))
        turn = object()  # each start a turn (a log appended to run after run repeats tasks)
        if kind == _STARTED:
            prompt = UserMessage(text=task, meta=meta)
            if key[0]:
                prompt.meta["task"] = key[0]
            # Tasks run side by side (async_execution) start before the first ends: each
            # waits for the turns of those started before it (:class:`_TaskTurns`).
            self._turns.start(turn, prompt)
            if "agent" in meta:
                self._turns.add(turn, _agent_notice(meta["agent"]))
            self._open[key], self._turn_of[key] = prompt, turn
            return
        if self._open.pop(key, None) is None:  # its start is not in the log: the task shown
            self._turns.start(turn, UserMessage(text=task, meta=dict(meta)))
            if "agent" in meta:
                self._turns.add(turn, _agent_notice(meta["agent"]))
        else:
            turn = self._turn_of.pop(key)
        output = as_text(entry.get("output"))
        if output:
            self._turns.add(turn, AssistantText(text=output, meta=meta))
        self._turns.end(turn)

    def _announced(self, prompt: UserMessage) -> bool:
        """Whether ``prompt`` is followed by its agent's notice alone: the log's last task."""
        entries = self.transcript.entries
        return len(entries) > 1 and entries[-2] is prompt and entries[-1].kind == "system"

    def finish(self) -> Transcript:
        self._turns.show_all()
        for prompt in self._open.values():
            unfinished = worded_notice("reader.task_unfinished", level="warning",
                                       subtype="unfinished", meta=dict(prompt.meta))  # fmt: skip
            if self.transcript.entries[-1] is prompt or self._announced(prompt):
                self.transcript.append(unfinished)
            else:  # other tasks ran after it: said where the run's warnings are
                self.source.warn(f"task {prompt.text[:60]!r}: {unfinished.text}")
        if self.agents:
            self.transcript.metadata["agents"] = list(self.agents)
        return self.transcript


def _agent_notice(agent: str) -> SystemNotice:
    """Whose work the turn is: the notice the AutoGen reader makes for a change of agent."""
    return worded_notice("reader.agent", {"name": agent}, subtype="agent", meta={"agent": agent})


def _agent_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The agent a task's prompt names, for the entries of its turn."""
    return {"agent": meta["agent"]} if "agent" in meta else {}


#: What CrewAI tells a ReAct model after each of its calls (the ``post_tool_reasoning`` slice of
#: ``translations/en.json``, ``AgentExecutor``).
_POST_TOOL_REASONING = (
    "Analyze the tool result. If requirements are met, provide the Final Answer. Otherwise, "
    "call the next tool. Deliver only the answer without meta-commentary."
)
#: What CrewAI tells the model when its agent reached ``max_iter`` (the ``force_final_answer``
#: slice of ``translations/en.json``, ``handle_max_iterations_exceeded``): the model's last
#: call, with no tools, which writes the task's answer.
_FORCE_FINAL_ANSWER = (
    "Now it's time you MUST give your absolute best final answer. You'll ignore all previous "
    "instructions, stop using any tools, and just return your absolute BEST Final answer."
)


def _is_forced(text: str) -> bool:
    return text.strip() == _FORCE_FINAL_ANSWER


def _limit_notice(limit: int | None, meta: Mapping[str, Any], told: bool = False) -> SystemNotice:
    """A warning that the agent reached its ``max_iter`` (``limit``, when known), as its run's
    frames (or an older CrewAI's messages, which kept the demand) say it, or as a task's
    messages let it be ``told``."""
    key = (
        "reader.iteration_limit_told" if told
        else "reader.iteration_limit" if limit is None else "reader.iteration_limit.max_iter"
    )  # fmt: skip
    notice = worded_notice(key, {"limit": limit}, level="warning", subtype="max_iterations",
                           meta=dict(meta))  # fmt: skip
    if limit is not None:
        notice.meta["max_iter"] = limit
    return notice


#: CrewAI's delegation tools (``crewai/tools/agent_tools/``), by :func:`_tool_key`: a native
#: call names them sanitized (``delegate_work_to_coworker``), a ReAct text as CrewAI wrote them.
_DELEGATIONS = frozenset({"delegate_work_to_coworker", "ask_question_to_coworker"})
#: The coworker's argument, as CrewAI accepts it (``BaseAgentTool._get_coworker``).
_COWORKER = ("coworker", "co_worker")


#: How CrewAI renders an agent's task for its model, around what it was asked (``{input}``):
#: the ``native_task``, ``task`` and ``task_no_tools`` slices of ``translations/en.json``.
_TASK_SLICES = tuple(
    re.compile(rf"\ACurrent Task: (?P<input>.*?){re.escape(end)}\Z", re.S)
    for end in (
        "\n\nBegin! This is VERY important to you, use the tools available and give your best "
        "Final Answer, your job depends on it!\n\nThought:",
        "\n\nProvide your complete response:",
        "",
    )
)


def _task_input(rendered: str) -> str:
    """What an agent was asked, out of CrewAI's rendering of it (``rendered`` stripped); the
    rendering itself when it is no slice of CrewAI's (another language, a custom template)."""
    for slice_ in _TASK_SLICES:
        match = slice_.match(rendered)
        if match is not None and match["input"].strip():
            return match["input"].strip()
    return rendered


def _tool_key(name: str) -> str:
    return "_".join(name.lower().split())


def _delegating(
    running: list[ToolCall], parent: str | None, role: str | None, task: str | None
) -> ToolCall:
    """The call a coworker starting now runs in, of the ``running`` calls no coworker runs
    in yet: the one its start's scope names (``parent_id``); else the latest delegation
    naming the coworker and its task (CrewAI matches the role case and spaces aside,
    ``BaseAgentTool.sanitize_agent_name``); else the latest delegation, else the latest call."""
    named = next((c for c in running if parent is not None and c.call_id == parent), None)
    if named is not None:
        return named
    delegations = [c for c in running if _tool_key(c.name) in _DELEGATIONS]
    naming = [c for c in delegations if _names(c.args, role, task)]
    return (naming or delegations or running)[-1]


def _names(args: Any, role: str | None, task: str | None) -> bool:
    """Whether a delegation's ``args`` name the coworker ``role`` and its ``task``."""
    if not isinstance(args, Mapping) or not role:
        return False
    coworker = next((args[k] for k in _COWORKER if isinstance(args.get(k), str)), "")
    asked = args.get("task", args.get("question"))
    same_task = task is None or not isinstance(asked, str) or asked.strip() == task.strip()
    return _sanitized(coworker) == _sanitized(role) and same_task


def _sanitized(role: str) -> str:
    return " ".join(role.split()).replace('"', "").casefold()


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else None


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    return ""


def _same(call: ToolCall, args: Any) -> bool:
    """Whether ``call`` was made with ``args`` (a failure record's, a dict or JSON text)."""
    if isinstance(args, str):
        args = parse_arguments(args)
    return args is None or call.args == args or json.dumps(call.args) == json.dumps(args)


def read(source: Source) -> Transcript:
    """The turns of ``source``: a crew's, an agent's or tasks' outputs, a crew's log, or the
    frames of a run streamed."""
    if source.path is not None and detect_path(source.path) is not None:
        return _read_text_log(source.path, source)  # load(path, format="crewai") of logs.txt
    run = _Run(source)
    frames: Follower | None = None  # stream frames saved: read as following them reads them
    first: int | None = None
    recognized = 0
    for line, record in source.records():
        first = line if first is None else first
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        kind = _kind(record)
        if kind is None:
            source.warn("not a CrewAI output, output_log_file entry nor stream frame", line)
            continue
        recognized += 1
        if kind == _CREW:
            source.mapped(kind)
            for number, task in enumerate(as_list(record.get("tasks_output"))):
                if _kind(task) == _TASK:
                    _read_output(source, run, _TASK, task, line, f"task{number}")
                else:
                    source.warn(f"tasks_output[{number}] is no task output: not read", line)
            _usage(record.get("token_usage"), run.transcript)
        elif kind == _AGENT:
            _read_output(source, run, kind, record, line, "agent")
        elif kind == _TASK:
            _read_output(source, run, kind, record, line, f"task@{line}")
        elif kind == _FRAME:
            frames = frames or Follower(run.transcript, source=source)
            record_type = f"frame/{record['type']}"
            # A frame type no one here has seen is shown as ignored: the accounting lists it.
            mapped = RECORDS.disposition(record_type) == "mapped"
            source.note(record_type, "mapped" if mapped else "ignored")
            frames.feed(record, line)
        else:
            said: list[str] = []
            run.logged(record, kind, said)
            _tally(source, kind, line, said)
    if recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first, _LACKS)
    if frames is not None:
        frames.close()
    return run.finish()


# --- the text log (output_log_file=True) ---------------------------------------------------

#: How each entry of the text log begins (``FileHandler.log``: ``f"{now}: "`` and its first
#: key), at the start of a line.
_TEXT_ENTRY = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d): task_name="', re.M)
#: What separates its values: CrewAI joins ``key="value"`` pairs with ``, ``, in the order
#: ``Crew._log_task_start`` and ``_process_task_result`` pass them.
_TASK_SEP, _AGENT_SEP = '", task="', '", agent="'
_STARTED_END, _COMPLETED_SEP = '", status="started"', '", status="completed", output="'
_SNIFF = 4096


def detect_path(path: Path) -> Evidence | None:
    """A crew's text log (``output_log_file=True`` writes ``logs.txt``, a name not ending in
    ``.json`` ``<name>.txt``): its first line is an entry, ``<time>: task_name="…"``."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_SNIFF).decode("utf-8", errors="replace")
    except OSError:
        return None
    first = _TEXT_ENTRY.match(head.lstrip("\ufeff"))
    return Evidence(share=1.0, marks=1) if first is not None else None


def read_path(path: Path) -> Transcript:
    """The transcript of the crew's text log at ``path``, with its warnings and accounting."""
    source = Source(str(path), iter(()), path=path)
    return source.hand_over(_read_text_log(path, source))


def _read_text_log(path: Path, source: Source) -> Transcript:
    """The text log: its entries as the JSON log's. CrewAI writes the values unescaped, so
    an entry is told by its start (a line ``<time>: task_name="``) and its values by the
    fixed order of its keys; a value that holds a separator (``", agent="``) makes the split
    a guess, said in a warning; an entry of another shape is not read, with a warning."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        source.warn(f"invalid UTF-8 at byte {exc.start}; undecodable bytes shown as U+FFFD", line)
        text = raw.decode("utf-8", errors="replace")
    starts = list(_TEXT_ENTRY.finditer(text))
    if not starts:
        raise TranscriptFormatError(
            str(path),
            [NAME],
            1,
            'no entry of a crew\'s text log (<time>: task_name="…") opens a line; save the '
            'log as JSON with output_log_file="crew_log.json"',
        )
    if text[: starts[0].start()].strip():
        source.warn("text before the log's first entry not read", 1, record_type=_TEXT_UNREAD)
    run = _Run(source)
    for number, start in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(text)
        line = text.count("\n", 0, start.start()) + 1
        said: list[str] = []
        entry = _text_entry(start[1], text[start.end() : end].removesuffix("\n"), said)
        if entry is None:
            source.warn(
                'log entry not read: no status="started" or "completed" ends it as CrewAI '
                "writes it",
                line,
                record_type=_TEXT_UNREAD,
            )
            continue
        kind = _STARTED if entry["status"] == "started" else _COMPLETED
        run.logged(entry, kind, said)
        _tally(source, kind, line, said)
    return run.finish()


def _read_output(
    source: Source, run: _Run, kind: str, output: Mapping[str, Any], line: int, key: str
) -> None:
    """An agent's or a task's output, on ``line``, read, then tallied: warned if reading it
    warned (its messages' and its failures' warnings are the run's, counted past the listed)."""
    before = warning_count(run.transcript.warnings)
    if kind == _AGENT:
        run.agent(output, line)
    else:
        run.task(output, line, key)
    source.note(kind, "warned" if warning_count(run.transcript.warnings) > before else "mapped")


def _tally(source: Source, kind: str, line: int, said: list[str]) -> None:
    """A log entry read, on ``line``: what was said of it, counting it warned (once), else
    mapped; said after it is read, so a time that is no time does not leave it mapped."""
    if not said:
        source.mapped(kind)
    for index, reason in enumerate(said):
        source.warn(reason, line, record_type=kind if index == 0 else None)


_TEXT_UNREAD = "log/unreadable"


def _text_entry(stamp: str, body: str, said: list[str]) -> dict[str, Any] | None:
    """One text entry's values (after its ``task_name="``), as the JSON log's entry; a split
    that is a guess is said in ``said``."""
    entry: dict[str, Any] = {"timestamp": stamp}
    if body.endswith(_STARTED_END):
        head, entry["status"] = body.removesuffix(_STARTED_END), "started"
    elif _COMPLETED_SEP in body and body.endswith('"'):
        head, _, output = body.partition(_COMPLETED_SEP)
        entry["status"], entry["output"] = "completed", output[:-1]
    else:
        return None
    name, sep, rest = head.partition(_TASK_SEP)
    task, agent_sep, agent = rest.rpartition(_AGENT_SEP)
    if not sep or not agent_sep:
        return None
    if head.count(_TASK_SEP) > 1 or head.count(_AGENT_SEP) > 1:
        said.append(
            "a value of this entry holds '\", task=\"' or '\", agent=\"' (CrewAI writes them "
            "unescaped): where its task's name, text and agent part is a guess"
        )
    # CrewAI writes a value None as the text None (an unnamed task's name, a task's agent).
    entry["task_name"] = None if name == "None" else name
    entry["task"] = task
    entry["agent"] = None if agent == "None" else agent
    return entry


# --- live (spec A-2) -------------------------------------------------------------------------


def stream_events(crew: Any, **kickoff: Any) -> Any:
    """``crew.kickoff(**kickoff)`` run in a worker thread while its events stream, in order,
    as the ``StreamSession`` of ``StreamFrame`` objects that a Flow's ``stream_events()``
    gives (CrewAI's own frame streaming); its ``result`` is the ``CrewOutput`` once the
    frames end."""
    # CrewAI is no dependency of turnfold's, nor of its type check (its pins conflict).
    from crewai.types.streaming import (  # type: ignore[import-not-found, unused-ignore]
        StreamSession,
    )
    from crewai.utilities.streaming import (  # type: ignore[import-not-found, unused-ignore]
        create_frame_generator,
        create_frame_streaming_state,
    )

    results: list[Any] = []
    sessions: list[Any] = []
    state = create_frame_streaming_state(results)
    frames = create_frame_generator(state, lambda: crew.kickoff(**kickoff), sessions)
    session = StreamSession(sync_iterator=frames)
    sessions.append(session)  # CrewAI's generator sets the result on it when the run ends
    return session


#: The frames whose events the tasks' turns are made of.
_TASK_STARTED, _AGENT_STARTED, _AGENT_COMPLETED, _TASK_COMPLETED = (
    "task_started",
    "agent_execution_started",
    "agent_execution_completed",
    "task_completed",
)
_TOOL_STARTED, _TOOL_FINISHED, _TOOL_ERROR = (
    "tool_usage_started",
    "tool_usage_finished",
    "tool_usage_error",
)
#: A model call's frames (CrewAI's providers emit them around each request).
_LLM_STARTED, _LLM_CHUNK, _LLM_THINKING, _LLM_COMPLETED = (
    "llm_call_started",
    "llm_stream_chunk",
    "llm_thinking_chunk",
    "llm_call_completed",
)
#: A task guardrail's verdict on the answer (``success``, its ``error`` the feedback).
_GUARDRAIL_COMPLETED = "llm_guardrail_completed"
#: The frames of a failure, each with its ``error`` text; a task's ends the task.
_TASK_FAILED = "task_failed"
_FAILED = frozenset(
    {_TASK_FAILED, "agent_execution_error", "llm_call_failed", "crew_kickoff_failed"}
)

#: A ReAct text's end (CrewAI's ``crewai/agents/parser.py``): a call, or the final answer.
_REACT_ACTION = re.compile(r"\A(?P<thought>.*?)^Action:", re.S | re.M)
_REACT_FINAL = re.compile(r"\A(?P<thought>.*?)^Final Answer:[ \t]*(?P<answer>.*)\Z", re.S | re.M)


def _key(value: Any) -> str | None:
    """A frame's or a task's id as a key: a UUID (live) or its text (saved); None for any
    other value (a damaged record's)."""
    return str(value) if isinstance(value, (str, UUID)) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _task_of(data: Mapping[str, Any]) -> str | None:
    """The task a frame is of: its ``task_id``, or its ``task``'s id (an agent's frames)."""
    return _key(data.get("task_id")) or _key(_mapping(data.get("task")).get("id"))


class _TaskTurns:
    """Tasks run side by side (``async_execution``) shown one turn after another, as a
    load of the crew's output shows them: a transcript only grows, so the entries of a task
    started while another's turn is open wait, in order, until the turns before theirs end,
    then show at once and grow in place (turns are told by their prompts, spec P-1)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self._open: Any = None  # the task whose turn is the transcript's last
        self._waiting: dict[Any, list[Entry]] = {}  # by task, in the order they started
        self._ended: set[Any] = set()  # of the tasks waiting, those that ended

    def start(self, task: Any, prompt: Entry) -> None:
        if self._open is None:
            self._open = task
        if task in self._waiting:  # started again before its turn: shown with it
            self._ended.discard(task)
        elif task != self._open:
            self._waiting[task] = []
        self.add(task, prompt)

    def add(self, task: Any, entry: Entry) -> Entry:
        waiting = self._waiting.get(task)
        if waiting is None:
            return self.transcript.append(entry)
        waiting.append(entry)
        return entry

    def end(self, task: Any) -> None:
        """``task`` ended: the turn of the task that started next follows it."""
        if task in self._waiting:
            self._ended.add(task)
            return
        if task is None or task != self._open:
            return
        self._open = None
        while self._waiting and self._open is None:
            task = next(iter(self._waiting))
            self.transcript.extend(self._waiting.pop(task))
            if task in self._ended:
                self._ended.discard(task)
            else:
                self._open = task

    def show_all(self) -> None:
        """The run ended: the tasks still waiting shown, in the order they started."""
        for entries in self._waiting.values():
            self.transcript.extend(entries)
        self._waiting.clear()
        self._ended.clear()
        self._open = None


def _time(value: Any) -> str | None:
    """A CrewAI time: a ``datetime``, or its text saved (ISO 8601); None for no time."""
    if isinstance(value, datetime):
        return value.isoformat()
    return checked_timestamp(value)


def _frame(event: Any) -> tuple[Any, Mapping[str, Any], Any]:
    """A ``StreamFrame`` (or its dump) as its type, data and id."""
    if isinstance(event, Mapping):
        return event.get("type"), _mapping(event.get("data")), _key(event.get("id"))
    kind, frame_id = getattr(event, "type", None), _key(getattr(event, "id", None))
    return kind, _mapping(getattr(event, "data", None)), frame_id


def _parent(event: Any) -> str | None:
    """The frame whose scope a frame's event was emitted in (``parent_id``): a coworker's
    start names the delegating call's start."""
    parent = (
        event.get("parent_id") if isinstance(event, Mapping) else getattr(event, "parent_id", None)
    )
    return _key(parent)


@dataclass
class _Coworker:
    """A coworker running inside a call that delegated to it: its follower, the call, its
    ``agent_execution_started`` frame's id (its end's ``started_event_id``)."""

    follower: Follower
    call: ToolCall
    start: str | None


def _call_usage(data: Mapping[str, Any]) -> Usage | None:
    """An ``llm_call_completed`` frame's ``usage`` (the provider's counts, OpenAI's names)."""
    usage = usage_from(
        data.get("usage"),
        input_tokens="prompt_tokens",
        output_tokens="completion_tokens",
        cache_read_tokens="cached_prompt_tokens",
        reasoning_tokens="reasoning_tokens",
    )
    if usage is not None:
        usage.response_id = as_text(data.get("response_id"))
    return usage


def _react_parts(text: str) -> tuple[str, str | None] | None:
    """A ReAct text's thought and final answer (None for a call: its frames show it); None
    when the text is no ReAct step."""
    final = _REACT_FINAL.match(text)
    if final is not None:
        return _thought(final["thought"]), final["answer"].strip()
    action = _REACT_ACTION.match(text)
    return (_thought(action["thought"]), None) if action is not None else None


def _thought(text: str) -> str:
    return text.strip().removeprefix("Thought:").strip()


class Follower:
    """Follows a ``StreamSession`` of CrewAI's frames: each task a turn from its start, the
    model's text as it streams, its tools ``executing`` until their events settle them, its
    answer when it completes; a coworker an agent delegates to runs in a sub-agent under
    the delegating call. ``begin(session)`` keeps the session, whose ``CrewOutput`` gives
    the run's usage at the end."""

    def __init__(self, transcript: Transcript, *, source: Source | None = None) -> None:
        transcript.metadata.setdefault("source_format", NAME)
        self.transcript = transcript
        self._source = source
        name = source.name if source is not None else f"<{NAME} stream>"
        self._builder = TranscriptBuilder(transcript, name, live=source is None)
        self._session: Any = None
        self._prompt: UserMessage | None = None  # the task started last
        #: The prompts of the tasks running, by task id: ``async_execution`` runs several.
        self._prompts: dict[Any, UserMessage] = {}
        #: Each task's turn, one after another, however their frames interleave.
        self._turns = _TaskTurns(transcript)
        #: The task the frame being read is of (its ``task_id``), None for a frame of none.
        self._task: str | None = None
        self._calls: dict[Any, ToolCall] = {}  # by their start frame's id
        #: What the model is writing, by its call's ``call_id``: its text, its thinking.
        self._said: dict[Any, AssistantText] = {}
        self._thinking: dict[Any, Thinking] = {}
        #: The usage of a response of calls only, for the first call it made, by task (spec U-1).
        self._unplaced: dict[Any, Usage] = {}
        #: Each task's agent's ``max_iter``, and the notice of a task whose agent reached it,
        #: said after the task's answer (the answer CrewAI then asked for).
        self._limits: dict[Any, int] = {}
        self._limited: dict[Any, SystemNotice] = {}
        #: Each task's ``task_prompt`` (what its agent was asked), which tells the task of a
        #: model call CrewAI makes with none (:meth:`_task_of`); those calls' tasks by call id.
        self._asked: dict[Any, str] = {}
        self._call_tasks: dict[str, Any] = {}
        self._last_text: AssistantText | None = None  # the model's last text
        #: The model's last text of each task running, by task id (tasks run side by side).
        self._task_texts: dict[Any, AssistantText] = {}
        #: The time of the frame being read (a ``StreamFrame``'s own, in UTC): its entries'.
        self._stamp: str | None = None
        #: The follower the frames are fed to (a coworker's is its parent's, at any depth),
        #: and the line of the saved frame it reads: where a time that is no time is said.
        self._root = self
        self._line: int | None = None
        #: The coworkers running inside calls (delegations), in the order they started:
        #: several at once when tasks side by side delegate, their frames interleaved.
        self._coworkers: list[_Coworker] = []
        #: A coworker's own task (the one its delegation made), whose frames are its.
        self._own_task: str | None = None

    def begin(self, session: Any) -> None:
        self._session = session

    def feed(self, event: Any, line: int | None = None) -> None:
        """One frame, as it arrives (a saved one on its ``line``)."""
        self._line = line
        kind, data, frame_id = _frame(event)
        if isinstance(event, Mapping):
            stamp = event.get("timestamp")
        else:
            stamp = getattr(event, "timestamp", None)
        self._read(event, (kind, data, frame_id), self._time_of(kind, frame_id, stamp, "timestamp"))

    def _time_of(self, kind: Any, frame_id: Any, value: Any, name: str) -> str | None:
        """A frame's time ``name`` (``timestamp``, its event's in UTC; a tool's
        ``data.started_at`` …); one that is no time is left out, said of the frame where the
        frames are fed (``common.warned_timestamp``)."""
        root = self._root
        return warned_timestamp(value, _time, lambda reason: root._builder.warn(reason, root._line),
                                f"{kind} frame {frame_id}", name=name)  # fmt: skip

    def _read(
        self, event: Any, frame: tuple[Any, Mapping[str, Any], Any], stamp: str | None
    ) -> None:
        """One frame (its type, data and id) of time ``stamp``: a coworker's frames are read
        by its parent's follower first, which says once of a time that is no time."""
        kind, data, frame_id = frame
        self._stamp = stamp
        self._task = self._task_of(kind, data)
        if self._coworkers and self._to_coworker(event, kind, data):
            return
        if kind == _TASK_STARTED:
            task = _mapping(data.get("task"))
            text = as_text(task.get("description")) or as_text(data.get("task_name")) or ""
            self._prompt = UserMessage(text=text, timestamp=self._stamp)
            if as_text(task.get("expected_output")):
                self._prompt.meta["expected_output"] = task["expected_output"]
            self._prompts[self._task] = self._prompt
            self._turns.start(self._task, self._prompt)
            self._last_text = None
        elif kind == _AGENT_STARTED:
            self._agent_started(data, frame_id, _parent(event))
        elif kind == _TOOL_STARTED:
            self._calls[frame_id] = self._tool(data, frame_id)
        elif kind in (_TOOL_FINISHED, _TOOL_ERROR):
            self._settle(kind, data, frame_id)
        elif kind in (_LLM_CHUNK, _LLM_THINKING):
            self._chunk(kind, data)
        elif kind == _LLM_STARTED:
            self._forced(data)
        elif kind == _LLM_COMPLETED:
            self._model_said(data)
        elif kind == _TASK_COMPLETED:
            self._answer(as_text(_mapping(data.get("output")).get("raw")), data)
            self._task_ended()
        elif kind == _GUARDRAIL_COMPLETED and data.get("success") is False:
            # CrewAI runs the task again with this feedback: the rejected answer stays shown.
            said = as_text(data.get("error"))
            key = "reader.guardrail_rejected.said" if said else "reader.guardrail_rejected"
            meta = {**self._agent_meta(data), "retry_count": data.get("retry_count")}
            self._add(worded_notice(key, {"said": said}, level="warning", subtype="guardrail",
                                    meta=meta))  # fmt: skip
        elif kind in _FAILED:
            message = as_text(data.get("error")) or kind
            self._add(AssistantError(message=message, meta=self._agent_meta(data)))
            if kind == _TASK_FAILED:
                self._task_ended()
        elif kind is None:
            self._builder.warn_once(
                f"{type(event).__name__} is no CrewAI stream frame: not shown", None
            )

    def _task_of(self, kind: Any, data: Mapping[str, Any]) -> str | None:
        """The task of a frame: the one it names. CrewAI makes the call for the final answer
        at ``max_iter`` with no task (``llm.call(messages, callbacks)``): its task is the one
        whose ``task_prompt`` its first user message renders, its other frames by call id."""
        task = _task_of(data)
        call = _key(data.get("call_id"))
        if task is not None or call is None:
            return task
        if kind == _LLM_STARTED and call not in self._call_tasks:
            asked = next(
                (_text(m) for m in as_list(data.get("messages")) if _role(m) == "user"), ""
            )
            tasks = [t for t, prompt in self._asked.items() if prompt and prompt in asked]
            if len(tasks) == 1:
                self._call_tasks[call] = tasks[0]
        return self._call_tasks.get(call)

    def _to_coworker(self, event: Any, kind: Any, data: Mapping[str, Any]) -> bool:
        """Whether the frame was a running coworker's (followed into its run): its end, or a
        frame of its task, or of its own coworkers. The end of a delegating call ends its
        coworker too, when the coworker's own end was not streamed."""
        started = _key(data.get("started_event_id"))
        if kind == _AGENT_COMPLETED:
            ended = next((c for c in self._coworkers if c.start == started), None)
            if ended is not None:
                self._end_child(ended, data)
                return True
        if kind in (_TOOL_FINISHED, _TOOL_ERROR):
            for coworker in [c for c in self._coworkers if c.call.call_id == started]:
                self._end_child(coworker, None)
        parent = _parent(event)
        if self._task in self._prompts or (
            kind == _AGENT_STARTED and self._delegates_to(data, parent)
        ):
            return False  # a crew's task's frame, or a coworker of one of this run's calls
        claimed = [c for c in self._coworkers if c.follower._claims(kind, data, parent)]
        if not claimed and len(self._coworkers) == 1:
            claimed = self._coworkers  # a frame that names no one: the one coworker's
        if len(claimed) != 1:
            return False
        coworker = claimed[0]
        coworker.follower._read(event, _frame(event), self._stamp)
        # Tell the parent's observers the coworker's run grew.
        self._update(coworker.call, subagent=coworker.call.subagent)
        return True

    def _claims(self, kind: Any, data: Mapping[str, Any], parent: str | None) -> bool:
        """Whether a frame is of this coworker's run: of its task, a coworker starting under
        one of its calls, or a frame its own coworkers claim."""
        if self._own_task is not None and self._task_of(kind, data) == self._own_task:
            return True
        if kind == _AGENT_STARTED and self._delegates_to(data, parent):
            return True
        started = _key(data.get("started_event_id"))
        if kind == _AGENT_COMPLETED and any(c.start == started for c in self._coworkers):
            return True
        return any(c.follower._claims(kind, data, parent) for c in self._coworkers)

    def _delegates_to(self, data: Mapping[str, Any], parent: str | None) -> bool:
        """Whether the agent starting now is a coworker one of this run's calls delegated
        to: the call its start's scope names; or, of frames that name none, a running
        delegation that names it and that no coworker runs in yet."""
        if parent is not None:
            return parent in self._calls
        role = as_text(_mapping(data.get("agent")).get("role"))
        task = as_text(_mapping(data.get("task")).get("description"))
        free = self._free_calls()
        return any(_tool_key(c.name) in _DELEGATIONS and _names(c.args, role, task) for c in free)

    def _free_calls(self) -> list[ToolCall]:
        """This run's calls still running that no coworker runs in yet."""
        taken = [c.call for c in self._coworkers]
        return [
            c
            for c in self._calls.values()
            if c.status == self._builder.open_status and not any(c is t for t in taken)
        ]

    def _agent_started(self, data: Mapping[str, Any], frame_id: Any, parent: str | None) -> None:
        """An agent begins: the task's own, which names the turn's entries; or, while its
        agent's call runs, a coworker that call delegated to (CrewAI's ``Delegate work to
        coworker`` and ``Ask question to coworker`` run the coworker inside the call)."""
        agent = _mapping(data.get("agent"))
        role = as_text(agent.get("role"))
        running = self._free_calls()
        # Its own task's prompt (tasks run side by side name theirs); a coworker's task is
        # made by the delegation tool, so it is no task of the crew's.
        prompt = self._prompts.get(self._task, self._prompt)
        if prompt is not None and "agent" in prompt.meta and running:
            task = as_text(_mapping(data.get("task")).get("description"))
            self._begin_child(_delegating(running, parent, role, task), role, data, frame_id)
            return
        self._asked[self._task] = as_text(data.get("task_prompt")) or ""
        if type(agent.get("max_iter")) is int:
            self._limits[self._task] = agent["max_iter"]
        if role and prompt is not None:
            self._update(prompt, meta={**prompt.meta, "agent": role})
            self._add(_agent_notice(role))

    def _begin_child(
        self, call: ToolCall, role: str | None, data: Mapping[str, Any], frame_id: Any
    ) -> None:
        child = Follower(Transcript(), source=self._source)
        child._root = self._root
        task = as_text(_mapping(data.get("task")).get("description"))
        meta = {"agent": role} if role else {}
        child._prompt = UserMessage(text=task or "", timestamp=self._stamp, meta=dict(meta))
        child.transcript.append(child._prompt)
        limit = _mapping(data.get("agent")).get("max_iter")
        if type(limit) is int:
            child._limits[self._task] = limit
        child._asked[self._task] = as_text(data.get("task_prompt")) or ""
        child._own_task = self._task
        self._coworkers.append(_Coworker(child, call, _key(frame_id)))
        sub = SubAgent(name=role, task=task, transcript=child.transcript)
        self._update(call, subagent=sub)

    def _end_child(self, coworker: _Coworker, data: Mapping[str, Any] | None) -> None:
        self._coworkers.remove(coworker)
        if data is not None:
            coworker.follower._answer(as_text(data.get("output")), data)
        coworker.follower.close()
        self._update(coworker.call, subagent=coworker.call.subagent)

    def _agent_meta(self, data: Mapping[str, Any]) -> dict[str, Any]:
        role = as_text(data.get("agent_role"))
        prompt = self._prompts.get(self._task, self._prompt)
        if not role and prompt is not None:
            role = as_text(prompt.meta.get("agent"))
        return {"agent": role} if role else {}

    def _forced(self, data: Mapping[str, Any]) -> None:
        """A model call whose last message is CrewAI's demand for the final answer: the
        agent reached its ``max_iter`` (``handle_max_iterations_exceeded``). Said after the
        task's answer, which this call writes, so the task stays one turn."""
        messages = as_list(data.get("messages"))
        if messages and _role(messages[-1]) == "user" and _is_forced(_text(messages[-1])):
            meta = self._agent_meta(data)
            self._limited[self._task] = _limit_notice(self._limits.get(self._task), meta)

    def _task_ended(self) -> None:
        """The task of the frame being read ended: its limit said, the next task's turn."""
        notice = self._limited.pop(self._task, None)
        if notice is not None:
            self._add(notice)
        if self._prompts.pop(self._task, None) is self._prompt:
            self._prompt = None
        self._asked.pop(self._task, None)
        self._limits.pop(self._task, None)
        self._turns.end(self._task)

    def _chunk(self, kind: str, data: Mapping[str, Any]) -> None:
        """A piece of what the model writes, shown as it arrives; a tool call's pieces are
        not (its ``tool_usage_started`` frame shows the call)."""
        chunk, call_id = data.get("chunk"), _key(data.get("call_id"))
        if not isinstance(chunk, str) or not chunk or data.get("tool_call"):
            return
        if kind == _LLM_THINKING:
            thinking = self._thinking.get(call_id)
            if thinking is None:
                meta = self._agent_meta(data)
                entry = Thinking(text=chunk, streaming=True, meta=meta)
                self._thinking[call_id] = self._add(entry)
            else:
                self._update(thinking, text=thinking.text + chunk)
            return
        said = self._said.get(call_id)
        if said is None:
            said = AssistantText(text=chunk, meta=self._agent_meta(data))
            self._said[call_id] = self._said_last(said, data)
            self._add(said)
        else:
            self._update(said, text=said.text + chunk)

    def _model_said(self, data: Mapping[str, Any]) -> None:
        """A model call's end: its text (a ReAct step's thought and final answer apart) and
        its usage, on the first entry its response made."""
        call_id, usage = _key(data.get("call_id")), _call_usage(data)
        thinking, said = self._thinking.pop(call_id, None), self._said.pop(call_id, None)
        if thinking is not None:
            self._update(thinking, streaming=False)
        response = data.get("response")
        said_text = data.get("call_type") != "tool_call" and isinstance(response, str)
        text = response if said_text else None
        made: list[Entry] = [e for e in (thinking, said) if e is not None]
        if said is not None and text is not None and said.text != text:
            self._update(said, text=text)  # the response is what was said in full
        elif said is None and text and text.strip():
            made += self._written(text, data)
        if made:
            if usage is not None:
                self._update(made[0], usage=usage)
        elif usage is not None:
            self._unplaced[self._task] = usage  # a response of calls: its first call carries it

    def _written(self, text: str, data: Mapping[str, Any]) -> list[Entry]:
        """The model's text, a ReAct step's thought and final answer apart."""
        meta = self._agent_meta(data)
        parts = _react_parts(text)
        thought, answer = parts if parts is not None else ("", text.strip())
        made: list[Entry] = []
        if thought:
            made.append(self._add(Thinking(text=thought, meta=dict(meta))))
        if answer:
            said = AssistantText(text=answer, meta=meta)
            made.append(self._add(said))
            self._said_last(said, data)
        return made

    def _answer(self, raw: str | None, data: Mapping[str, Any]) -> None:
        """The task's (or a coworker's) answer, unless the model's last text (of that task,
        when tasks run side by side) said it."""
        last = self._task_texts.pop(_key(data.get("task_id")), self._last_text)
        if raw and (last is None or last.text.strip() != raw.strip()):
            self._add(AssistantText(text=raw, meta=self._agent_meta(data)))
        self._last_text = None

    def _said_last(self, said: AssistantText, data: Mapping[str, Any]) -> AssistantText:
        """``said`` is the model's last text, of the task its frame names."""
        self._last_text = said
        task = _key(data.get("task_id"))
        if task is not None:
            self._task_texts[task] = said
        return said

    def _add(self, entry: Entry) -> Any:
        """``entry`` added to its task's turn, at its frame's time unless it has its own."""
        if entry.timestamp is None:
            entry.timestamp = self._stamp
        return self._turns.add(self._task, entry)

    def _update(self, entry: Entry, **changes: Any) -> None:
        """``entry`` changed: in the transcript, whose observers are told; or, while its
        task's turn waits for the one before it, in place (it is shown as it is then)."""
        if entry.id:
            self.transcript.update(entry, **changes)
        else:
            for name, value in changes.items():
                setattr(entry, name, value)

    def _tool(self, data: Mapping[str, Any], frame_id: Any) -> ToolCall:
        args = data.get("tool_args")
        call = ToolCall(
            call_id=str(frame_id),
            name=as_text(data.get("tool_name")) or "",
            args=parse_arguments(args) if isinstance(args, str) else plain_value(args),
            status=self._builder.open_status,
            meta=self._agent_meta(data),
            usage=self._unplaced.pop(self._task, None),
        )
        self._add(call)
        return call

    def _settle(self, kind: str, data: Mapping[str, Any], frame_id: Any) -> None:
        call = self._calls.pop(_key(data.get("started_event_id")), None)
        if call is None:  # its start was not streamed (a frame dropped): shown all the same
            call = self._tool(data, data.get("started_event_id"))
        failure = data.get("failure")
        if kind == _TOOL_ERROR:
            status, text = "error", stringify(data.get("error"))
        else:
            output = data.get("output")
            status = "error" if failure else "success"
            text = output if isinstance(output, str) else stringify(output)
        # CrewAI's times are local with no zone: their span is the call's, not their hour.
        started = self._time_of(kind, frame_id, data.get("started_at"), "data.started_at")
        finished = self._time_of(kind, frame_id, data.get("finished_at"), "data.finished_at")
        duration = span_ms(started, finished)
        self._update(call, status=status, result=ToolResult(text=text), duration_ms=duration)

    def close(self) -> None:
        """The stream ended: calls never settled have no recorded outcome; the crew's usage
        is its result's."""
        for coworker in list(self._coworkers):  # the stream ended inside a coworker's run
            self._end_child(coworker, None)
        for task, notice in self._limited.items():  # a run that stopped after the limit
            self._task = task
            self._add(notice)
        self._limited.clear()
        self._turns.show_all()
        for call in self._calls.values():
            self._update(call, status="unknown")
        self._calls.clear()
        for thinking in self._thinking.values():
            self._update(thinking, streaming=False)
        self._thinking.clear()
        self._said.clear()
        try:
            result = self._session.result if self._session is not None else None
        except Exception:  # a run that failed or was cut off has no result: no usage then
            result = None
        usage = getattr(result, "token_usage", None)
        if usage is not None and hasattr(usage, "model_dump"):
            _usage(usage.model_dump(), self.transcript)
