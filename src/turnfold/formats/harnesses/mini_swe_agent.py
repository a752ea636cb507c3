"""mini-swe-agent trajectories (``*.traj.json`` and bare message lists, spec H-2).

Two shapes:

- ``*.traj.json`` (``DefaultAgent.serialize``)::

      {"info": {"exit_status", "submission", "model_stats": {"instance_cost", "api_calls"},
                "config": {...}, "mini_version"},
       "messages": [...], "trajectory_format": "mini-swe-agent-1.1"}

  (``mini-swe-agent-1`` files of the 1.x releases hold plain ``{role, content}`` messages);
- a bare list of ``{role, content}`` messages, as trajectory data sets publish them, bare or as
  JSON lines.

The messages are Chat Completions messages with mini-swe-agent's ``extra``:

- ``system`` → ``metadata["system"]``; the first ``user`` message is the task;
- ``assistant``: text-based models write the command in a fenced block (```` ```mswea_bash_command
  ```` since 2.0, ```` ```bash ```` before) after a THOUGHT. The text outside the block is an
  :class:`AssistantText`, each command a ``bash`` :class:`ToolCall` (``extra.actions``, when
  recorded, says which commands ran; without it a response with more than one block was
  rejected by mini-swe-agent's one-action rule and runs nothing). Tool-calling models write
  Chat ``tool_calls``; Responses-API models a ``{"object": "response", "output": [...]}`` item
  (``message``, ``reasoning``, ``function_call``);
- a command's output is the next ``user`` message (text-based), a ``tool`` message
  (``tool_call_id``) or a ``function_call_output`` (``call_id``), usually
  ``<returncode>N</returncode><output>…</output>``. The call's status comes from the return
  code (``extra.returncode``, else the ``<returncode>`` tag; :func:`status_of`): 0 is success,
  anything else (or an ``<exception>``, or 1.x's "timed out and has been killed") error; no
  return code is unknown. The result shows
  ``extra.raw_output`` (else the ``<output>`` section, else the whole message);
- a ``user`` message with ``extra.actions`` after the task is a command the user ran in human
  mode (``InteractiveAgent``): a user-initiated ``bash`` call (spec F-14), settled by the output
  after it; an output padded for a call mini-swe-agent never ran (:data:`NOT_EXECUTED`: the
  user rejected the response, or a call before it submitted) is ``cancelled``;
- a ``user`` message with ``extra.interrupt_type`` is the harness talking: ``FormatError`` a
  warning notice (the response was rejected), a user's interruption or rejection a
  :class:`UserMessage`; either way commands still pending were not run (``cancelled``). In 1.x
  files the format-error text is recognised by its wording;
- ``exit`` (2.x) ends the run: its ``extra.exit_status`` and ``submission``. ``Submitted`` is
  raised by the submit command itself (it printed ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` and
  exited 0), so that pending call succeeded and the submission is its result, a ``diff`` when
  it is a unified diff (the patch of a SWE-bench run,
  :func:`~turnfold.formats.common.is_unified_diff`); an uncaught exception
  (``RepeatedFormatError`` too) is an :class:`AssistantError`; a limit
  (``LimitsExceeded``, ``TimeExceeded``) a warning notice, ``Stopped: LimitsExceeded``. 1.x
  writes no ``exit``: ``DefaultAgent.run`` ends on ``str(e)`` of what ended the run as a user
  message, and ``info.exit_status`` names it. A ``Submitted`` run ends on the submission, the
  output of that submit call, which succeeded just the same; a ``LimitsExceeded()`` run on an
  empty message, read as 2.x's limit; a run the runner caught an exception of
  (``info.traceback``) ends wherever it broke, with the exception's text as its
  ``submission``: read as 2.x's uncaught exception, that text the error's and no submission.

A message's time (Unix seconds, :func:`message_time`) gives entry times: 2.x writes it as
``extra.timestamp``, 1.17 as the message's own ``timestamp``, 1.16 and earlier not at all.
``extra.cost`` is kept in ``meta``.
Each model response's usage (:func:`response_usage`: ``extra.response.usage`` of a Chat
message, a Responses-API message's own ``usage``) sits on what it wrote (:mod:`turnfold.usage`),
its ``model`` on its text. Since 2.3.1 a ``FormatError`` message keeps the response it rejected
in ``extra.response``: its text is shown marked ``rejected`` with its usage, the calls it asked
for ``cancelled`` (none ran).
Metadata (H-6): ``agent`` ``"mini-swe-agent"``, ``model`` (``info.config.model.model_name``),
``exit_status``, ``submission`` (none for a run that ended on an exception), ``cost_usd``
(``instance_cost``, the run's cost, unless it is 0 for calls made: mini-swe-agent's price of a
call it could not price), ``api_calls``, ``version``; ``outcome`` (:func:`outcome_of`):
``incomplete`` for ``LimitsExceeded`` / ``TimeExceeded``, ``error`` for ``RepeatedFormatError``
and exceptions (named by their class, with their ``traceback`` in ``info``); a ``Submitted`` run
has no outcome (the patch is graded elsewhere).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    diff_or_text_result,
    mark_rejected,
    parse_arguments,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.harnesses.swe_agent import info_metadata
from turnfold.formats.openai_chat import litellm_usage
from turnfold.formats.openai_responses import responses_usage
from turnfold.formats.source import Source, type_of_record, warning_count
from turnfold.formats.wording import notice
from turnfold.formats.wrappers import sample
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "mini-swe-agent"

RECORDS = Records(
    mapped={
        "system": 'the system prompt: metadata["system"]',
        "user": "the task, a command's output (its result), a command the user ran (human "
        "mode), an interruption or a format error (and the response it rejected); 1.x's last "
        "message the submission (the submit call's result) or a limit's empty text",
        "assistant": "the THOUGHT as text; each fenced command or tool call a bash call",
        "tool": "a tool-calling model's command output, by tool_call_id",
        "response": "a Responses-API model's output: text, reasoning and function calls",
        "function_call_output": "a Responses-API command output, by call_id",
        "exit": "the end of the run: exit status and submission (the submit call's result, a "
        "diff when it is one), a limit's notice or an error",
        "info": "exit status, submission, model, cost and version: metadata (outcome, cost_usd); "
        "in 1.x (no exit message) also the limit's notice or the exception's error",
        "trajectory_format": 'metadata["trajectory_format"]',
        "other key": "other top-level keys: kept in metadata under their names",
    },
)

SHELL_TOOL = "bash"
_FENCE = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*\n(.*?)\n```", re.DOTALL)
_MINI_FENCE = "```mswea_bash_command"
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>", re.DOTALL)
#: 1.x's ``timeout_template`` (agents/default.py): the command was killed, and the message,
#: which carries no return code, is its output.
_TIMED_OUT = re.compile(r"The last command <command>.*?</command> timed out and has been killed\.",
                        re.DOTALL)  # fmt: skip
#: The 1.x format-error message, recognised by its wording when no ``extra`` says so.
_FORMAT_ERROR = re.compile(r"Please always provide EXACTLY ONE action|^Format error:", re.M)
#: What a submit command prints first (2.x, then 1.x).
_SUBMIT_WORDS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
_LIMITS = NameSet({"LimitsExceeded", "TimeExceeded"})
#: The output mini-swe-agent writes for a tool call it never ran (the user rejected the
#: response's calls, or an earlier one submitted): ``format_toolcall_observation_messages`` in
#: models/utils/actions_toolcall.py pads the outputs with it.
NOT_EXECUTED = "action was not executed"
_ROLES = NameSet({"system", "user", "assistant", "tool", "exit"})


def status_of(content: str, extra: Mapping[str, Any]) -> ToolStatus:
    """A command's status from its output message: the one rule of this format.

    >>> status_of("<returncode>0</returncode>\\n<output>\\nok</output>", {})
    'success'
    >>> status_of("<returncode>2</returncode>", {}), status_of("no code", {})
    ('error', 'unknown')
    >>> status_of("", {"returncode": -1, "exception_info": NOT_EXECUTED})
    'cancelled'
    >>> status_of("The last command <command>sleep 99</command> timed out and has been killed.", {})
    'error'
    """
    if extra.get("exception_info") == NOT_EXECUTED:
        return "cancelled"
    if extra.get("exception_info") or "<exception>" in content or _TIMED_OUT.match(content):
        return "error"
    code = extra.get("returncode")
    if not isinstance(code, int) or isinstance(code, bool):
        match = _RETURNCODE.search(content)
        code = int(match.group(1)) if match else None
    if code is None:
        return "unknown"
    return "success" if code == 0 else "error"


def outcome_of(exit_status: Any, raised: bool = False) -> str | None:
    """The H-6 outcome of an exit status (see the module docstring). ``raised``: the run ended
    on an exception, whose class names the status whatever its name (litellm's ``Timeout``):
    mini-swe-agent keeps its ``traceback`` and ``exception_str`` beside it.

    >>> outcome_of("Submitted"), outcome_of("LimitsExceeded"), outcome_of("RuntimeError")
    (None, 'incomplete', 'error')
    >>> outcome_of("Timeout"), outcome_of("Timeout", raised=True)
    (None, 'error')
    """
    if not isinstance(exit_status, str) or not exit_status or exit_status == "Submitted":
        return None
    if exit_status in _LIMITS:
        return "incomplete"
    if raised or exit_status.endswith(("Error", "Exception")) or exit_status == "KeyboardInterrupt":
        return "error"
    return None


def response_usage(response: Mapping[str, Any]) -> Usage | None:
    """The token usage of one model response as mini-swe-agent keeps it: litellm's ``usage``
    (``response.model_dump()``, ``models/litellm_model.py``), a Chat Completions usage
    (:func:`~turnfold.formats.openai_chat.litellm_usage`: its ``prompt_tokens`` with the cached
    tokens in, as :mod:`turnfold.usage` counts them, and an Anthropic model's cache writes), or
    a Responses-API ``usage`` (:func:`responses_usage`); with the response's id. None when the
    response records none.

    >>> response_usage({"id": "r1", "usage": {"prompt_tokens": 1995, "completion_tokens": 93,
    ...                 "prompt_tokens_details": {"cached_tokens": 320}}})  # doctest: +ELLIPSIS
    Usage(input_tokens=1995, output_tokens=93, cache_read_tokens=320, ..., response_id='r1')
    """
    usage = response.get("usage")
    if not isinstance(usage, Mapping):
        return None
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        counted = litellm_usage(usage)
    else:  # a Responses-API model's (models/litellm_response_model.py)
        counted = responses_usage(usage)
    if counted is not None:
        key = response.get("id")
        counted.response_id = key if isinstance(key, str) and key else None
    return counted


def commands_in(text: str) -> list[str]:
    """The fenced commands of an assistant message that mini-swe-agent would run: exactly one
    block, or none (more than one breaks its one-action rule and runs nothing).

    >>> commands_in("THOUGHT: look\\n```mswea_bash_command\\nls -la\\n```")
    ['ls -la']
    """
    blocks = [b.strip() for b in _FENCE.findall(text)]
    return blocks if len(blocks) == 1 else []


# --- detection ---------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n\n".join(p for p in parts if isinstance(p, str))
    return ""


def _classify(message: Any) -> int:
    if not isinstance(message, Mapping):
        return NOT_MINE
    if message.get("object") == "response" or message.get("type") == "function_call_output":
        return DISTINCTIVE if isinstance(message.get("extra"), Mapping) else NOT_MINE
    role = message.get("role")
    if role not in _ROLES or "content" not in message:
        # mini-swe-agent writes every message's content; one without it is another API's
        # (a Gemini Content keeps its text in ``parts``), not a message this format reads.
        return NOT_MINE
    extra = message.get("extra")
    if role == "exit" or (
        isinstance(extra, Mapping) and ({"actions", "returncode", "interrupt_type"} & set(extra))
    ):
        return DISTINCTIVE
    text = _text(message.get("content"))
    if role == "assistant" and _MINI_FENCE in text:
        return DISTINCTIVE
    if role in ("user", "tool") and _RETURNCODE.search(text):
        return DISTINCTIVE
    return READABLE


def _is_trajectory(document: Any) -> bool:
    if not isinstance(document, Mapping) or not isinstance(document.get("messages"), list):
        return False
    form = document.get("trajectory_format")
    info = document.get("info")
    return (isinstance(form, str) and form.startswith("mini-swe-agent")) or (
        isinstance(info, Mapping) and "mini_version" in info
    )


_LACKS = "no fenced bash command, <returncode> output or mini-swe-agent extra"


def detect(source: Source) -> Evidence:
    """A ``*.traj.json`` (its ``trajectory_format`` or ``info.mini_version``), or a message list
    whose fenced commands, ``<returncode>`` outputs or ``extra`` fields are mini-swe-agent's.

    A bare list of plain chat messages with ``bash`` blocks carries no marks here: only
    ``mswea_bash_command`` fences and ``<returncode>`` outputs are this format's own.
    """
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and _is_trajectory(document):
        return Evidence(share=1.0, marks=len(sample(document["messages"])) + 1)
    if isinstance(document, Mapping):
        return Evidence.none("not a mini-swe-agent trajectory")
    values = sample(document) if isinstance(document, list) else source.head_values()
    return Evidence.of(values, _classify, _LACKS)


# --- reading -----------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """The messages of ``source`` (a trajectory object, a list or JSON lines), each accounted
    for by its role."""
    transcript = Transcript(metadata={"source_format": NAME, "agent": "mini-swe-agent"})
    reader = _Reader(transcript, source)
    document = source.document if source.is_document else None
    if isinstance(document, Mapping):
        if not isinstance(document.get("messages"), list):
            raise TranscriptFormatError(source.name, [NAME], None, "no messages list")
        for key, value in document.items():
            if key != "messages":
                raised = _top_level(source, transcript, key, value)
                reader.exception = raised if raised is not None else reader.exception
        for line, message in enumerate(document["messages"], start=1):
            reader.feed(message, line)
    else:
        for line, record in _records(source):
            if isinstance(record, MalformedLine):
                source.warn(record.reason, line)
            else:
                reader.feed(record, line)
    reader.finish()
    return transcript


def _records(source: Source) -> Iterator[tuple[int, Any]]:
    document = source.document if source.is_document else None
    if isinstance(document, list):
        yield from enumerate(document, start=1)  # accounted for per message by the reader
    else:
        yield from source.records()


def _top_level(source: Source, transcript: Transcript, key: str, value: Any) -> str | None:
    """A top-level key of a trajectory as metadata; for ``info`` of a run that ended on an
    exception, the exception's text (:func:`_exception_text`), else None."""
    exception = None
    if key == "info":
        if not isinstance(value, Mapping):
            source.warn("info is not an object", record_type="info")
            return None
        # A call mini-swe-agent could not price costs 0.0 with cost_tracking "ignore_errors"
        # (models/litellm_model.py _calculate_cost): info_metadata leaves such a cost out.
        info_metadata(transcript.metadata, value)
        raised = "traceback" in value or "exception_str" in value
        if raised:
            exception = _exception_text(transcript.metadata, value)
        outcome = outcome_of(value.get("exit_status"), raised)
        if outcome is not None:
            transcript.metadata["outcome"] = outcome
        config = value.get("config")
        model = config.get("model") if isinstance(config, Mapping) else None
        name = model.get("model_name") if isinstance(model, Mapping) else None
        if isinstance(name, str) and name:
            transcript.metadata["model"] = name
        source.mapped("info")
    elif key == "trajectory_format":
        transcript.metadata["trajectory_format"] = value
        source.mapped("trajectory_format")
    else:
        transcript.metadata.setdefault(key, value)
        source.mapped("other key")
    return exception


def _exception_text(metadata: dict[str, Any], info: Mapping[str, Any]) -> str:
    """The text of the exception that ended a run (``info`` keeps its ``traceback``), taken out
    of ``metadata["submission"]``: a run that raised submitted nothing. mini-swe-agent 1.x's
    runners (``run/extra/swebench.py``, ``swebench_single.py``, ``run/mini.py`` at 1.17.5) save
    ``type(e).__name__, str(e)`` as the exit status and the result, which ``save_traj`` writes as
    ``info.submission``; 2.x saves ``""`` there and the text as ``exception_str``
    (``handle_uncaught_exception`` of ``agents/default.py``, ``run/benchmarks/swebench.py``).

    >>> meta = {"submission": "Global cost/call limit exceeded"}
    >>> _exception_text(meta, {"traceback": "..."}), meta
    ('Global cost/call limit exceeded', {})
    """
    said = metadata.pop("submission", "")
    recorded = info.get("exception_str")
    return recorded if isinstance(recorded, str) and recorded else said


def message_time(message: Mapping[str, Any], extra: Mapping[str, Any]) -> tuple[Any, str]:
    """Where a message keeps its time, and the field's name: mini-swe-agent writes
    ``time.time()`` as ``extra.timestamp`` since 2.0 (its models and action parsers), and as the
    message's own ``timestamp`` in 1.17 (``DefaultAgent.add_message``, #618); ``extra`` is the
    message's, or for a response a format error rejected, the error's.

    >>> message_time({"role": "user", "timestamp": 1764012690.5}, {})
    (1764012690.5, 'timestamp')
    >>> message_time({"timestamp": 1.0}, {"timestamp": 2.0}), message_time({}, {})
    ((2.0, 'extra.timestamp'), (None, 'extra.timestamp'))
    """
    if "timestamp" not in extra and "timestamp" in message:
        return message["timestamp"], "timestamp"
    return extra.get("timestamp"), "extra.timestamp"


def unix_time(value: Any) -> str | None:
    """A message's time (Unix seconds) as ISO 8601 UTC, None when missing or absurd."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return datetime.fromtimestamp(value, tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


class _Reader:
    """Pairs commands with their outputs while messages are fed in order."""

    def __init__(self, transcript: Transcript, source: Source) -> None:
        self.transcript = transcript
        self.source = source
        self.pending: list[ToolCall] = []  # a text-based step's commands, in order
        self.by_id: dict[str, ToolCall] = {}  # tool-calling steps' calls, by id
        self.task_seen = False
        self.step = 0
        self.commands = 0  # the user's own commands (human mode)
        self.unrun: list[ToolCall] = []  # the latest step's calls padded as never run
        self.line: int | None = None  # the message being read, for its warnings
        self.said_time = False  # whether its time was said to be no time (:meth:`_stamp`)
        self.settled: ToolCall | None = None  # the call the latest message was the output of
        self.settled_by = ""  # that message's text
        self.exited = False  # whether an ``exit`` message (2.x) ended the run
        #: The text of the exception that ended the run, as ``info`` keeps it (never its
        #: submission: :func:`_exception_text`); None when no exception ended it.
        self.exception: str | None = None

    def feed(self, message: Any, line: int) -> None:
        if not isinstance(message, Mapping):
            self.source.warn("message is not an object", line, record_type=type_of_record(message))
            return
        record_type = _record_type(message)
        self.line, self.said_time, self.settled, self.settled_by = line, False, None, ""
        # Counted, not measured: past the listed ones a warning adds nothing to the list.
        before = warning_count(self.source.warnings)
        if record_type == "response":
            self._response(message)
        elif record_type == "function_call_output":
            self._output_by_id(message.get("call_id"), message, message.get("output"), line)
        elif record_type == "system":
            self._system(message)
        elif record_type == "user":
            self._user(message)
        elif record_type == "assistant":
            self._assistant(message)
        elif record_type == "tool":
            self._output_by_id(message.get("tool_call_id"), message, message.get("content"), line)
        elif record_type == "exit":
            self._exit(message)
        else:
            self.source.warn(f"message of unknown role {record_type!r} skipped", line)
            self.source.note(record_type, "warned")
            return
        warned = warning_count(self.source.warnings) > before
        self.source.note(record_type, "warned" if warned else "mapped")

    def _stamp(self, message: Mapping[str, Any], extra: Mapping[str, Any], what: str) -> str | None:
        """A message's time (:func:`message_time`, :func:`unix_time`); one that is no time is
        left out, said once (a command's output is a user message and its call's end) of
        ``what`` holds it, on the message's line."""
        value, name = message_time(message, extra)
        return warned_timestamp(value, unix_time, self._said_time, what, name=name,
                                unit="seconds since the epoch")  # fmt: skip

    def _said_time(self, reason: str) -> None:
        if not self.said_time:
            self.said_time = True
            self.source.warn(reason, self.line)

    # --- messages -------------------------------------------------------------------------

    def _system(self, message: Mapping[str, Any]) -> None:
        text = _text(message.get("content")).strip()
        if text:
            previous = self.transcript.metadata.get("system")
            self.transcript.metadata["system"] = f"{previous}\n\n{text}" if previous else text

    def _user(self, message: Mapping[str, Any]) -> None:
        extra = _extra(message)
        text = _text(message.get("content"))
        stamp = self._stamp(message, extra, "a user message")
        interrupt = extra.get("interrupt_type")
        if isinstance(interrupt, str) or (self.task_seen and _FORMAT_ERROR.search(text)):
            self._cancel_pending()
            if isinstance(extra.get("response"), Mapping):
                self._rejected(extra["response"], extra)
            if interrupt is None or interrupt == "FormatError":
                notice = SystemNotice(
                    text=text.strip(), level="warning", subtype="format_error", timestamp=stamp
                )
                self._append(notice)
            else:
                self._append(
                    UserMessage(text=text.strip(), timestamp=stamp, meta={"interrupt": interrupt})
                )
            return
        commands = _recorded_commands(extra) if self.task_seen else None
        if commands:
            # A command the user ran in human mode (InteractiveAgent.query: "User command:"
            # with its ``extra.actions``): the user's call, whose output comes next.
            self.pending = []
            self.commands += 1
            batch = f"user-{self.commands}"
            for index, command in enumerate(commands):
                call = self._call(f"{batch}.{index}", {"command": command}, batch, stamp,
                                  user_initiated=True)  # fmt: skip
                self.pending.append(call)
            return
        if self.pending and self.task_seen:
            self._settle(self.pending.pop(0), message, text, extra)
            return
        self.task_seen = True
        if text.strip():
            self._append(UserMessage(text=text.strip(), timestamp=stamp))

    def _assistant(
        self,
        message: Mapping[str, Any],
        response: Mapping[str, Any] | None = None,
        rejected: Mapping[str, Any] | None = None,
    ) -> None:
        """A Chat message the model wrote; ``response`` is its whole response (``extra.response``
        unless given); ``rejected`` the format error's ``extra`` when mini-swe-agent rejected
        it (:meth:`_rejected`): its commands then never ran."""
        self.task_seen = True
        self.pending = []  # commands whose output never came stay unknown (spec L-3)
        self.by_id = {}
        self.unrun = []
        self.step += 1
        extra = _extra(message) if rejected is None else rejected
        if response is None:
            response = _mapping(extra.get("response"))
        written = len(self.transcript.entries)
        # A rejected response's time is its format error's (``extra``), not the API's fields.
        stamp = self._stamp(message if rejected is None else {}, extra, f"step {self.step}")
        batch = f"step-{self.step}"
        meta = _response_meta(extra, rejected is not None)
        model = _model(response)
        text = _text(message.get("content"))
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning.strip():
            self._append(Thinking(text=reasoning.strip(), timestamp=stamp))
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            if text.strip():
                self._append(AssistantText(text=text.strip(), model=model, timestamp=stamp,
                                           meta=meta))  # fmt: skip
            for index, call in enumerate(calls):
                self._chat_call(call, batch, index, stamp)
        else:
            commands = _recorded_commands(extra) if rejected is None else []
            if commands is None:
                commands = commands_in(text)
            thought = _FENCE.sub("", text).strip() if commands else text.strip()
            if thought:
                self._append(AssistantText(text=thought, model=model, timestamp=stamp, meta=meta))
            for index, command in enumerate(commands):
                call = self._call(f"{batch}.{index}", {"command": command}, batch, stamp)
                self.pending.append(call)
        if rejected is not None:  # its thinking and calls too, not only its text
            mark_rejected(self.transcript, written)
        self._usage(written, response, meta)

    def _chat_call(self, call: Any, batch: str, index: int, stamp: str | None) -> None:
        spec = call.get("function") if isinstance(call, Mapping) else None
        spec = spec if isinstance(spec, Mapping) else {}
        call_id = call.get("id") if isinstance(call, Mapping) else None
        call_id = call_id if isinstance(call_id, str) and call_id else f"{batch}.{index}"
        name = spec.get("name")
        name = name if isinstance(name, str) and name else SHELL_TOOL
        self.by_id[call_id] = self._call(
            call_id, parse_arguments(spec.get("arguments")), batch, stamp, name
        )

    def _response(
        self, message: Mapping[str, Any], rejected: Mapping[str, Any] | None = None
    ) -> None:
        """A Responses-API response (the message is the response: its ``usage`` and ``model``
        are its own); ``rejected`` as for :meth:`_assistant`."""
        self.task_seen = True
        self.unrun = []
        self.step += 1
        batch = f"step-{self.step}"
        extra = _extra(message) if rejected is None else rejected
        stamp = self._stamp(message if rejected is None else {}, extra, f"step {self.step}")
        written = len(self.transcript.entries)
        meta = _response_meta(extra, rejected is not None)
        model = _model(message)
        output = message.get("output")
        for index, item in enumerate(output if isinstance(output, list) else []):
            kind = item.get("type") if isinstance(item, Mapping) else None
            if kind == "message":
                text = _text(item.get("content")).strip()
                if text:
                    self._append(
                        AssistantText(text=text, model=model, timestamp=stamp, meta=dict(meta))
                    )
            elif kind == "reasoning":
                summary = _text(item.get("summary")).strip()
                if summary:
                    self._append(Thinking(text=summary, form="summary", timestamp=stamp))
            elif kind == "function_call":
                call_id = item.get("call_id") or item.get("id")
                call_id = call_id if isinstance(call_id, str) and call_id else f"{batch}.{index}"
                name = item.get("name") if isinstance(item.get("name"), str) else SHELL_TOOL
                args = parse_arguments(item.get("arguments"))
                self.by_id[call_id] = self._call(call_id, args, batch, stamp, name)
            else:
                self.source.warn(f"response output item {kind!r} skipped")
        if rejected is not None:
            mark_rejected(self.transcript, written)
        self._usage(written, message, meta)

    def _rejected(self, response: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
        """The response a format error rejected, which mini-swe-agent keeps in the error
        message's ``extra.response`` since 2.3.1 (``model.query()`` "must persist the response
        and cost on FormatError", models/litellm_model.py): no assistant message holds it,
        and the run's cost counts it. What it wrote is shown marked rejected, with its usage;
        the calls it asked for did not run (the whole response is rejected)."""
        if response.get("object") == "response":
            self._response(response, rejected=extra)
        else:
            choices = response.get("choices")
            first = choices[0] if isinstance(choices, list) and choices else None
            message = first.get("message") if isinstance(first, Mapping) else None
            self._assistant(_mapping(message), response=response, rejected=extra)
        self._cancel_pending()

    def _usage(self, written: int, response: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        """A response's usage on what it wrote (its last text, else its first reasoning or
        call, :mod:`turnfold.usage`); a reasoning or call that carries it also keeps the
        response's model and cost (``meta``), which only a text holds otherwise (a cost is
        priced by that model, turnfold.cost). A response that wrote nothing is warned about:
        its tokens are then not counted."""
        usage = response_usage(response)
        if usage is None:
            return
        model = _model(response)
        if model is not None:
            self.transcript.metadata.setdefault("model", model)
        entries = self.transcript.entries[written:]
        carrier = attach_usage(entries, usage, self.transcript, model=model)
        if carrier is None:
            self.source.warn(
                f"a model response ({usage.response_id or 'no id'}) wrote nothing: its usage "
                "is not counted",
                record_type="assistant",
            )
        elif "cost" in meta and not isinstance(carrier, AssistantText):
            self.transcript.update(carrier, meta={**carrier.meta, "cost": meta["cost"]})

    def _output_by_id(
        self, call_id: Any, message: Mapping[str, Any], content: Any, line: int
    ) -> None:
        call = self.by_id.pop(call_id, None) if isinstance(call_id, str) else None
        if call is None:
            self.source.warn(f"command output for an unknown call id {call_id!r}", line)
            call = self._call(str(call_id or f"output@{line}"), None, None, None)
        text = _text(content) if not isinstance(content, str) else content
        self._settle(call, message, text, _extra(message))

    def _exit(self, message: Mapping[str, Any]) -> None:
        self.exited = True
        extra = _extra(message)
        status = extra.get("exit_status")
        text = _text(message.get("content")).strip()
        submission = extra.get("submission")
        if isinstance(status, str) and status:
            self.transcript.metadata.setdefault("exit_status", status)
        if isinstance(submission, str) and submission:
            self.transcript.metadata.setdefault("submission", submission)
        if status == "Submitted":
            # Raised by the submit command itself after it exited 0 (environments/local.py).
            # InteractiveAgent still writes the outputs of the step's calls when it is raised,
            # the submit call's padded as never run: it ran.
            pending = self.pending + list(self.by_id.values())
            pending = pending or [c for c in self.unrun if _submits(c)]
            if pending:
                call = next((c for c in pending if _submits(c)), pending[-1])
                result = diff_or_text_result(submission if isinstance(submission, str) else text)
                self.transcript.update(call, status="success", result=result)
                self.pending = [c for c in self.pending if c is not call]
                self.by_id = {k: c for k, c in self.by_id.items() if c is not call}
            return
        self._stopped(status, text)

    def _stopped(self, status: Any, text: str) -> None:
        """The end of a run that did not submit: a limit's warning notice, else the error that
        ended it (``text``, the exception's, after its name); calls still pending never ran."""
        self._cancel_pending()
        if status in _LIMITS:
            self._append(notice("reader.stopped", {"reason": status}, level="warning",
                                subtype="exit"))  # fmt: skip
        elif status:
            self._append(
                AssistantError(
                    message=f"{status}: {text}" if text and text != status else str(status)
                )
            )

    # --- helpers --------------------------------------------------------------------------

    def _call(
        self,
        call_id: str,
        args: Any,
        batch: str | None,
        stamp: str | None,
        name: str = SHELL_TOOL,
        *,
        user_initiated: bool = False,
    ) -> ToolCall:
        command = args.get("command") if isinstance(args, Mapping) else None
        description = None
        if isinstance(command, str):
            description = next((ln.strip() for ln in command.splitlines() if ln.strip()), None)
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=description,
            status="unknown",
            batch_id=batch,
            started_at=stamp,
            timestamp=stamp,
            user_initiated=user_initiated,
        )
        self._append(call)
        return call

    def _settle(
        self, call: ToolCall, message: Mapping[str, Any], content: str, extra: Mapping[str, Any]
    ) -> None:
        raw = extra.get("raw_output")
        if not isinstance(raw, str):
            match = _OUTPUT.search(content) if _RETURNCODE.search(content) else None
            raw = match.group(1) if match else content
        exception = extra.get("exception_info")
        if isinstance(exception, str) and exception and exception not in raw:
            raw = f"{raw.rstrip()}\n{exception}" if raw.strip() else exception
        ended = self._stamp(message, extra, f"the output of call {call.call_id}")
        status = status_of(content, extra)
        if extra.get("exception_info") == NOT_EXECUTED:
            self.unrun.append(call)
        self.transcript.update(call, status=status, result=text_result(raw), ended_at=ended)
        self.settled, self.settled_by = call, content

    def _cancel_pending(self) -> None:
        for call in self.pending + list(self.by_id.values()):
            self.transcript.update(call, status="cancelled")
        self.pending = []
        self.by_id = {}

    def _append(self, entry: Entry) -> None:
        self.transcript.append(entry)

    def finish(self) -> None:
        """Calls whose output never came stay ``unknown`` (spec L-3); a 1.x run, which writes
        no ``exit`` message, ends as :meth:`_exit` ends a 2.x run (:meth:`_ended_in_v1`)."""
        if not self.exited:
            self._ended_in_v1()
        self.pending = []
        self.by_id = {}

    def _ended_in_v1(self) -> None:
        """How a 1.x run ended, by its ``info`` (read before the messages). A ``Submitted``
        run ends on ``str(Submitted(...))``, the submission, as the last user message
        (``DefaultAgent.run``): the submit command it answers ran (its output's first line was
        the submit word, ``has_finished``), and that text, read as a command's output so far,
        is the result as it is. A limit ends on the empty ``str(LimitsExceeded())``; an
        exception the runner caught (``run/extra/swebench.py``) saves its text as the
        ``submission``, which is the error's text here (:attr:`exception`), not a
        submission."""
        metadata = self.transcript.metadata
        status = metadata.get("exit_status")
        said = metadata.get("submission", "")
        if status == "Submitted":
            call = self.settled
            if call is not None and self.settled_by == said:
                self.transcript.update(call, status="success", result=diff_or_text_result(said))
        elif status in _LIMITS or metadata.get("outcome") == "error":
            self._stopped(status, self.exception if self.exception is not None else said)


def _response_meta(extra: Mapping[str, Any], rejected: bool) -> dict[str, Any]:
    """What a response's text keeps in ``meta``: its ``extra.cost``, and whether mini-swe-agent
    rejected it."""
    meta: dict[str, Any] = {}
    cost = extra.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        meta["cost"] = cost
    if rejected:
        meta["rejected"] = True
    return meta


def _model(response: Mapping[str, Any]) -> str | None:
    model = response.get("model")
    return model if isinstance(model, str) and model else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _submits(call: ToolCall) -> bool:
    command = call.args.get("command") if isinstance(call.args, Mapping) else None
    return isinstance(command, str) and any(word in command for word in _SUBMIT_WORDS)


def _extra(message: Mapping[str, Any]) -> Mapping[str, Any]:
    extra = message.get("extra")
    return extra if isinstance(extra, Mapping) else {}


def _recorded_commands(extra: Mapping[str, Any]) -> list[str] | None:
    actions = extra.get("actions")
    if not isinstance(actions, list):
        return None
    return [
        a["command"]
        for a in actions
        if isinstance(a, Mapping) and isinstance(a.get("command"), str)
    ]


def _record_type(message: Mapping[str, Any]) -> str:
    if message.get("object") == "response":
        return "response"
    kind = message.get("type")
    if kind == "function_call_output":
        return "function_call_output"
    role = message.get("role")
    return role if isinstance(role, str) and role else type_of_record(message)
