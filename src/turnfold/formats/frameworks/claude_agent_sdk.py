"""The Claude Agent SDK's messages (spec A-1, A-2, issue 22): what ``query()`` or
``ClaudeSDKClient.receive_response()`` yields, collected in a list, or followed as it arrives.

The SDK is a thin layer over the ``claude`` CLI: each message is one line of the CLI's
``stream-json`` output, parsed into a dataclass of ``claude_agent_sdk.types``. So a message
is turned back into the line the CLI printed (:func:`record_of`: ``type`` ``system`` /
``assistant`` / ``user`` / ``result`` / ``stream_event`` / ``rate_limit_event`` /
``conversation_reset``, content blocks typed again) and read by the ``claude-stream-json``
reader (:class:`~turnfold.formats.agents.claude_stream.StreamReader`), statically for
:func:`read` and live for :class:`Follower`. ``metadata["source_format"]`` says
``claude-agent-sdk``.

Input shapes: a list (or tuple) of the SDK's messages, or one message; a list of the
``SessionMessage`` objects ``get_session_messages()`` reads back; and the SDK's only saved
form, the messages saved with ``dataclasses.asdict`` (a JSON array, or JSON lines), which
drops every block's type: each block's type is recovered from its fields, which differ per
block class, and each message's class from its own fields (older releases wrote fewer). The
stream-json lines themselves (``plain``'s output, the CLI's own output) load as
``claude-stream-json``.

Mapping (see ``claude-stream-json`` for the details):

- ``SystemMessage(subtype="init")`` → metadata (session id, model, working folder, CLI
  version); each ``query()`` of a ``ClaudeSDKClient`` starts a run with one, which begins a
  turn whose prompt is marked not recorded
  (:func:`~turnfold.formats.common.prompt_not_recorded`), unless the transcript followed
  already ends with the prompt; the task messages (``TaskStartedMessage``,
  ``TaskNotificationMessage``, ``TaskUpdatedMessage``, ``background_tasks_changed``) time
  the sub-agent their ``tool_use_id`` names: ``TaskNotificationMessage.usage.duration_ms``,
  else its end less its start (below); ``TaskProgressMessage``, hook events and rate-limit
  events are left out: the sub-agent's own messages and its call's result hold what they
  announce; a
  ``MirrorErrorMessage`` (a session store's failed write, made by the SDK) is left out;
- ``AssistantMessage`` → ``TextBlock`` an :class:`AssistantText` (``model`` kept),
  ``ThinkingBlock`` a :class:`Thinking`, ``ToolUseBlock`` / ``ServerToolUseBlock`` a
  :class:`ToolCall` (``input`` as its args, batch = ``message_id``); an ``error``
  (``rate_limit``…) makes its text an :class:`AssistantError`. The CLI splits one API message
  into several ``AssistantMessage`` objects with the same ``message_id``, each holding the
  ``message_start`` usage: that usage is counted once per ``message_id``, on its last text
  (else on its first thinking or call), its output count not (``message_start``'s 1, never the
  final count) unless a ``StreamEvent`` gives it (below);
- ``UserMessage`` → ``ToolResultBlock`` settles its call: ``is_error`` true → ``error``, else
  ``success`` (the API's default); ``tool_use_result`` (the tool's structured output) is not
  shown; text is a prompt (a sub-agent's task; ``query()``'s own prompt is not among the
  messages unless the CLI replays it, ``extra_args={"replay-user-messages": None}``: then it
  comes just after its run's init and takes the place of the mark);
- messages with a ``parent_tool_use_id`` are the sub-agent's that the ``Agent``/``Task`` call
  with that id started: a :class:`SubAgent` on that call holds their transcript, its task the
  sub-agent's first prompt, else the call's ``prompt`` (a background agent's messages, which
  CLI 2.1.332 sends after its call's result, start without it);
- ``ResultMessage`` → metadata: ``outcome`` (from ``subtype`` and ``is_error``),
  ``cost_usd`` (``total_cost_usd``), ``duration_ms``, ``duration_api_ms``, ``num_turns``,
  ``usage`` (the run's totals, in turnfold's names) and ``model_usage``; a failed run's
  ``result``/``errors`` an :class:`AssistantError`. A stream with several turns (a background
  agent's notification starts one of its own) has a result per turn: their ``usage`` is added
  up (each counts its own turn), the last one's other values are kept;
- ``StreamEvent`` (``include_partial_messages=True``): a ``message_delta``'s output count
  (and input counts, when it gives all three) are its response's final ones, on the entry
  that carries the response's usage (the event has no message id: its message is the one
  its agent's last ``message_start`` began); the other
  events are left out of a load; followed live, their text and thinking deltas grow the entry
  that the block's ``AssistantMessage`` then settles.

The messages record no timestamps (CLI 2.1.337's system messages a ``written_at``, read only
to time a task), and a tool's duration only where its ``tool_use_result`` does
(``durationMs``; a foreground sub-agent's ``totalDurationMs``). A sub-agent's duration is
that, else its task's: ``TaskNotificationMessage.usage.duration_ms``, else its end less its
start (CLI 2.1.337: the task list's ``start_time`` or ``TaskStartedMessage``'s ``written_at``,
to ``TaskUpdatedMessage``'s ``patch.end_time`` or the notification's ``written_at``); a
background agent's call, whose result only says it was launched, lasted as long. No other
time is recorded, so none is shown (L-3).
:class:`Follower` takes the SDK's message objects, or the same messages as saved dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnfold.formats.agents import claude_stream
from turnfold.formats.agents.claude_stream import StreamReader, subagent_usage
from turnfold.formats.catalog import Records
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import Source, field_names, plain_each, plain_value
from turnfold.model import Transcript

NAME = "claude-agent-sdk"

#: Records the SDK makes itself (never a CLI line), left out here.
_SDK_ONLY = {"system/mirror_error": "a session store's failed write (SDK bookkeeping)"}

RECORDS = Records(
    mapped=dict(claude_stream.RECORDS.mapped),
    ignored={**claude_stream.RECORDS.ignored, **_SDK_ONLY},
)

#: ``ResultMessage`` fields under the names the CLI's ``result`` line gives them.
_RESULT_NAMES = {"model_usage": "modelUsage"}
#: Server tool use ids (``ServerToolUseBlock``, which has the fields of a ``ToolUseBlock``).
_SERVER_ID = "srvtoolu_"


# --- SDK objects → stream-json records --------------------------------------------------------


_SCALARS = (str, int, float, bool, type(None))


def _json(value: Any) -> Any:
    """A copy of a JSON-like value (what the SDK's parser keeps of the CLI's JSON); any other
    object through :func:`plain_value`."""
    kind = type(value)
    if kind is dict:
        return {k: _json(v) for k, v in value.items()}
    if kind is list:
        return [_json(v) for v in value]
    return value if kind in _SCALARS else plain_value(value)


def _fields(value: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A dataclass's fields that hold a value, as plain JSON-like values (copies)."""
    out = {}
    for name in field_names(type(value)):
        found = getattr(value, name)
        if found is not None and name not in skip:
            out[name] = _json(found)
    return out


def block_record(block: Any) -> Any:
    """A content block object as the typed block of the API message it came from."""
    from claude_agent_sdk import types as t

    if isinstance(block, t.TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, t.ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, t.ToolUseBlock):
        return {"type": "tool_use", **_fields(block)}
    if isinstance(block, t.ServerToolUseBlock):
        return {"type": "server_tool_use", **_fields(block)}
    if isinstance(block, t.ToolResultBlock):
        return {"type": "tool_result", **_fields(block)}
    if isinstance(block, t.ServerToolResultBlock):
        return {"type": "advisor_tool_result", **_fields(block)}
    return plain_value(block) if isinstance(block, (Mapping, str)) else {"type": _name(block)}


def _content(content: Any) -> Any:
    return [block_record(b) for b in content] if isinstance(content, list) else content


def _name(value: Any) -> str:
    return f"({type(value).__name__})"


def record_of(message: Any) -> Any:
    """One of the SDK's messages as the stream-json line the CLI printed for it; a dict
    (a message saved with ``dataclasses.asdict``) through :func:`record_of_dict`; any other
    value as a record of its type's name, which the reader warns about."""
    if isinstance(message, Mapping):
        return record_of_dict(message)
    from claude_agent_sdk import types as t

    if isinstance(message, t.AssistantMessage):
        inner = {
            "id": message.message_id,
            "type": "message",
            "role": "assistant",
            "model": message.model,
            "content": _content(message.content),
            "stop_reason": message.stop_reason,
            "usage": _json(message.usage),
        }
        outer = _fields(message, ("content", "model", "message_id", "stop_reason", "usage"))
        return {
            "type": "assistant",
            "parent_tool_use_id": message.parent_tool_use_id,
            **outer,
            "message": {k: v for k, v in inner.items() if v is not None},
        }
    if isinstance(message, t.UserMessage):
        return {
            "type": "user",
            "parent_tool_use_id": message.parent_tool_use_id,
            **_fields(message, ("content",)),
            "message": {"role": "user", "content": _content(message.content)},
        }
    if isinstance(message, t.SystemMessage):  # task, hook and mirror messages too
        data = _json(message.data) if isinstance(message.data, Mapping) else {}
        return {"type": "system", **data, "subtype": message.subtype}
    if isinstance(message, t.ResultMessage):
        found = _fields(message)
        return {"type": "result", **{_RESULT_NAMES.get(k, k): v for k, v in found.items()}}
    if isinstance(message, t.StreamEvent):
        return {"type": "stream_event", **_fields(message)}
    if isinstance(message, t.RateLimitEvent):
        info = message.rate_limit_info
        return {
            "type": "rate_limit_event",
            "uuid": message.uuid,
            "session_id": message.session_id,
            "rate_limit_info": _json(info.raw) if info.raw else _fields(info, ("raw",)),
        }
    if isinstance(message, t.ConversationResetMessage):
        return {"type": "conversation_reset", **_fields(message)}
    if isinstance(message, t.SessionMessage):
        return _fields(message, ("parent_agent_id",))
    return {"type": _name(message)}


def plain(value: Any) -> Any:
    """The SDK's messages (a list, a tuple or one message) as the stream-json lines the CLI
    printed for them; the messages are read, never modified."""
    messages = value if isinstance(value, (list, tuple)) else [value]
    return plain_each(messages, record_of)


# --- messages saved with dataclasses.asdict ---------------------------------------------------


def _kind_of_dict(value: Mapping[str, Any]) -> str | None:
    """Which message class a dict of ``dataclasses.asdict`` was, by its fields; None for a
    dict that is none of them (a stream-json line has a ``type``, and is kept as it is)."""
    if "type" in value or "role" in value:
        return None
    if "subtype" in value and isinstance(value.get("data"), Mapping):
        return "system"
    if {"subtype", "duration_api_ms", "num_turns", "is_error"} <= value.keys():
        return "result"
    if "rate_limit_info" in value:
        return "rate_limit_event"
    if "new_conversation_id" in value:
        return "conversation_reset"
    if {"event", "uuid", "session_id"} <= value.keys():
        return "stream_event"
    if {"content", "model", "message_id"} <= value.keys():
        return "assistant"
    if {"content", "tool_use_result", "parent_tool_use_id"} <= value.keys():
        return "user"
    # Releases before 0.2.141 (and claude-code-sdk) wrote fewer fields: an AssistantMessage
    # without ``message_id``, a UserMessage without ``tool_use_result`` (before 0.1.30). Their
    # fields and no other ones tell them apart.
    if isinstance(value.get("content"), list) and "model" in value and value.keys() <= _ASSISTANT:
        return "assistant"
    if "content" in value and value.keys() <= _USER:
        return "user"
    return None


#: The fields ``asdict`` writes for ``AssistantMessage`` and ``UserMessage``, in any release.
_ASSISTANT = frozenset(
    {"content", "model", "parent_tool_use_id", "error", "usage", "message_id", "stop_reason",
     "session_id", "uuid"}
)  # fmt: skip
_USER = frozenset({"content", "uuid", "parent_tool_use_id", "tool_use_result", "origin"})


def _block_of_dict(block: Any) -> Any:
    """A block saved with ``asdict`` typed again by its fields (each class has its own)."""
    if not isinstance(block, Mapping) or "type" in block:
        return block
    if "thinking" in block:
        kind = "thinking"
    elif "tool_use_id" in block:
        server = "is_error" not in block and isinstance(block.get("content"), Mapping)
        kind = "advisor_tool_result" if server else "tool_result"
    elif {"id", "name", "input"} <= block.keys():
        call_id = block.get("id")
        server = isinstance(call_id, str) and call_id.startswith(_SERVER_ID)
        kind = "server_tool_use" if server else "tool_use"
    elif "text" in block:
        kind = "text"
    else:
        return block
    return {"type": kind, **{k: v for k, v in block.items() if v is not None}}


def record_of_dict(value: Mapping[str, Any]) -> Any:
    """A message saved with ``dataclasses.asdict`` as the CLI's stream-json line; a dict
    that is no such message as it is."""
    kind = _kind_of_dict(value)
    if kind is None:
        return value
    given = {k: v for k, v in value.items() if v is not None}
    if kind == "system":
        return {"type": "system", **value["data"], "subtype": value["subtype"]}
    if kind == "result":
        return {"type": "result", **{_RESULT_NAMES.get(k, k): v for k, v in given.items()}}
    if kind == "rate_limit_event":
        info = value["rate_limit_info"]
        raw = info.get("raw") if isinstance(info, Mapping) else None
        return {**given, "type": kind, "rate_limit_info": raw or info}
    if kind in ("conversation_reset", "stream_event"):
        return {"type": kind, **given}
    content = value.get("content")
    blocks = [_block_of_dict(b) for b in content] if isinstance(content, list) else content
    if kind == "user":
        rest = {k: v for k, v in given.items() if k != "content"}
        return {"type": "user", **rest, "message": {"role": "user", "content": blocks}}
    inner = {
        "id": value.get("message_id"),
        "type": "message",
        "role": "assistant",
        "model": value.get("model"),
        "content": blocks,
        "stop_reason": value.get("stop_reason"),
        "usage": value.get("usage"),
    }
    skip = ("content", "model", "message_id", "stop_reason", "usage")
    rest = {k: v for k, v in given.items() if k not in skip}
    return {
        "type": "assistant",
        "parent_tool_use_id": value.get("parent_tool_use_id"),
        **rest,
        "message": {k: v for k, v in inner.items() if v is not None},
    }


# --- detection ---------------------------------------------------------------------------


def _classify(value: Any) -> int:
    if not isinstance(value, Mapping):
        return NOT_MINE
    kind = _kind_of_dict(value)
    if kind == "user" and value.keys() == {"content"}:
        return READABLE  # claude-code-sdk 0.0.20's UserMessage: a field any dict may have
    if kind in ("assistant", "user", "result", "system"):
        return DISTINCTIVE
    return NOT_MINE if kind is None else READABLE


_LACKS = "no Claude Agent SDK message saved with dataclasses.asdict"


def detect(source: Source) -> Evidence:
    """Messages saved with ``dataclasses.asdict``: a JSON array or JSON lines of dicts with the
    fields of ``AssistantMessage`` (``content``, ``model``, ``message_id``), ``UserMessage``
    (``tool_use_result``), ``ResultMessage`` (``duration_api_ms``, ``num_turns``) or
    ``SystemMessage`` (``subtype``, ``data``) and no ``type``: marks only these dataclasses
    write. The CLI's typed lines are left to ``claude-stream-json``."""
    return Evidence.of_events(source, _classify, _LACKS)


# --- reading -----------------------------------------------------------------------------


def _feed(reader: StreamReader, value: Any, line: int) -> None:
    record = record_of_dict(value) if isinstance(value, Mapping) else value
    if isinstance(record, Mapping) and claude_stream._kind(record) in _SDK_ONLY:
        reader.source.ignored(claude_stream._kind(record))
        return
    reader.feed(record, line)


def read(source: Source) -> Transcript:
    """The messages of ``source`` (stream-json lines from :func:`plain`, or messages saved with
    ``dataclasses.asdict``), read as the CLI's stream-json."""
    reader = StreamReader(source, format=NAME)
    first: int | None = None
    for line, value in source.records():
        first = line if first is None else first
        _feed(reader, value, line)
    transcript = reader.finish()
    if reader.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first, "no Claude Agent SDK message")
    subagent_usage(transcript)
    return transcript


# --- live (spec A-2) ---------------------------------------------------------------------


class Follower:
    """Follows ``query()`` / ``receive_response()`` as its messages arrive: each one is fed to
    a live :class:`StreamReader`, so calls are ``executing`` until their ``ToolResultBlock``
    arrives, a sub-agent is nested under its ``Agent`` call from its first message, and
    ``StreamEvent`` deltas grow the text being written. ``close()`` leaves the transcript as
    ``load`` of the same messages gives it."""

    def __init__(self, transcript: Transcript) -> None:
        transcript.metadata.setdefault("source_format", NAME)
        self.transcript = transcript
        # The reader accounts for records in a source; here its warnings are the transcript's.
        source = Source(f"<{NAME} stream>", iter(()), warnings=transcript.warnings)
        self._reader = StreamReader(source, live=True, transcript=transcript, format=NAME)
        self._line = 0

    def feed(self, event: Any) -> None:
        """One message of the stream, as it arrives."""
        self._line += 1
        _feed(self._reader, record_of(event), self._line)

    def close(self) -> None:
        """The stream ended."""
        self._reader.finish()
        subagent_usage(self.transcript)
