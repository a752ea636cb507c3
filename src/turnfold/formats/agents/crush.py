"""Crush sessions (``@charmland/crush``, charmbracelet/crush): its SQLite database.

Crush keeps a project's sessions in ``.crush/crush.db`` in the project's folder (its data
directory; ``internal/db``, migrations by goose; read only, never written here). A session is a
row of ``sessions`` (``id``, ``parent_session_id`` for a sub-agent's run or a title's, ``title``,
``prompt_tokens``, ``completion_tokens``, ``cost``, ``created_at`` in seconds); its messages are
rows of ``messages`` (``role`` user, assistant or tool, ``model``, ``provider``, ``created_at``),
each message's ``parts`` a JSON list of ``{"type", "data"}`` (``internal/message/message.go``
``marshalParts``; the part structs are ``internal/message/content.go``):

- a user message: ``text`` is the prompt; ``binary`` an attachment (an image shown with the
  prompt; a text file or paste shown after the prompt's text under an ``[attachment: <path>]``
  line, without the ``<system_info>`` wrapper Crush sends the model it in, which the user did
  not write); ``image_url`` an image by URL (a
  notice naming it); ``shell_command`` a command the user ran with ``!`` (a
  user-initiated call with its output and exit code);
- an assistant message is one model response (but the summary Crush has the model write of
  the conversation so far, ``is_summary_message`` or the session's ``summary_message_id``: a
  :class:`~turnfold.model.CompactionBoundary` holding its text): ``reasoning`` a
  :class:`~turnfold.model.Thinking`, ``text`` an :class:`~turnfold.model.AssistantText` (the
  message's ``model``), ``tool_call`` a :class:`~turnfold.model.ToolCall` (``input`` its JSON
  arguments); ``finish`` the response's end: ``canceled`` an
  :class:`~turnfold.model.AbortMarker`, ``error`` (and ``content_filter``, a refusal) an
  :class:`~turnfold.model.AssistantError` with its ``message`` and ``details``, others
  (``end_turn``, ``tool_use``, ``max_tokens``) the response's ``finish_reason``;
- a tool message holds ``tool_result`` parts: the call's result (an image where ``data`` and
  ``mime_type`` hold one), its ``is_error`` the outcome (``error``; the result Crush writes for a
  call the user cancelled, or denied permission to, and for the calls after it, ``cancelled``;
  an ``agent`` call whose sub-agent's run ended on an error, answered as a success, ``error``;
  a ``bash`` or ``job_output`` command that exited non-zero, answered as a success whose output
  ends on ``Exit code N``, ``error`` with ``meta["exit_code"]``, and one an interrupt stopped,
  ending on ``Command was aborted before completion``, ``cancelled``).
  A call no result answers has no recorded outcome (``unknown``). Crush adds a ``finish``
  (``stop``) to every message not the model's: ignored.

A sub-agent's run (the ``agent`` and ``agentic_fetch`` tools) is a session of its own whose
``parent_session_id`` is the lead's and whose id is ``<message id>$$<call id>`` (before 0.10,
the call's id alone): read and nested under its call (:class:`~turnfold.model.SubAgent`), its
own sub-agents' in turn, down to :data:`~turnfold.nesting.MAX_DEPTH` levels; one deeper is named
in a warning (``sample=`` its id loads it). The title Crush has a model write is a child
session too (``title-<id>``), nested nowhere: it is no turn of the conversation.

Usage: Crush records no tokens per message. The session's ``cost`` is what its responses cost,
as Crush kept it: ``cost_usd`` (newer releases add its sub-agents' runs in,
``updateParentSessionCost``; one of October 2025 left a failed sub-agent's out). Its
``prompt_tokens`` and ``completion_tokens`` are the last response's (set, not summed, by
``updateSessionUsage``: the prompt's counting the cached reads in), the context the session
fills, not what it spent: kept as ``metadata["last_response_tokens"]``, no usage total.

``sample=`` names the session (its id); a database of one top-level session needs none.
Detection: the SQLite header and the ``sessions`` and ``messages`` tables, ``messages`` with its
``parts`` column (:func:`detect_path`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnfold import codec
from turnfold.formats import databases
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    as_int,
    as_text,
    describe_args,
    epoch_iso,
    parse_arguments,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError, unselected
from turnfold.formats.source import Source
from turnfold.formats.wording import failure, notice, stop
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH, too_deep

NAME = "crush"
#: A database holds many sessions: ``sample=`` names one by its id.
HAS_SAMPLES = True
#: What Crush keeps its secrets in: ``crush.json`` of its data folder
#: (``$XDG_DATA_HOME/crush``, ``~/.local/share/crush``: ``GlobalConfigData`` of
#: charmbracelet/crush ``internal/config/load.go``), where ``SetProviderAPIKey``
#: (``internal/config/config.go``) writes each provider's ``api_key`` (and OAuth tokens) the
#: user enters; and the user's own ``crush.json`` of ``~/.config/crush`` (``GlobalConfig``),
#: whose ``providers`` hold ``api_key`` too. ``$CRUSH_GLOBAL_DATA`` names the data folder under
#: any name (``GlobalConfigData`` is ``$CRUSH_GLOBAL_DATA/crush.json``).
CREDENTIALS = Credentials(
    folders=frozenset({"crush"}),
    files=frozenset({"crush.json"}),
    variables=frozenset({"CRUSH_GLOBAL_DATA"}),
)

RECORDS = Records(
    mapped={
        "session": "the session's id, title, cost (``cost_usd``) and its last response's "
        "tokens (``last_response_tokens``) → metadata",
        "message/user": "a prompt: its parts",
        "message/assistant": "a model response: its parts",
        "message/tool": "the results of the calls before it: its parts",
        "part/text": "a user message's prompt, an assistant text",
        "part/reasoning": "thinking",
        "part/tool_call": "a tool call with its input; an ``agent`` or ``agentic_fetch`` call "
        "nests its sub-agent's session",
        "part/tool_result": "the result of its call, ``is_error`` its outcome (the user's "
        "cancel or denial: cancelled)",
        "part/finish": "the response's end: ``canceled`` an abort marker, ``error`` and "
        "``content_filter`` an error entry, others its ``finish_reason``",
        "part/binary": "an image of the prompt, or an attached text file or paste shown with "
        "the prompt under its name",
        "part/image_url": "a notice naming the image the prompt links",
        "part/shell_command": "a command the user ran (``!``), a user-initiated call",
    },
    ignored={},
)

#: The database's name (``.crush/crush.db`` of a project), by which a scan finds it.
DATABASE = "crush.db"
_TABLES = frozenset({"sessions", "messages"})
#: The results Crush writes for a call the user's cancel stopped (``internal/agent/agent.go``),
#: for one whose permission the user denied (``Permission denied``; later ``User denied
#: permission``), and for the calls after it in the same response, which never ran.
_CANCELLED = frozenset({
    "Error: user cancelled assistant tool calling", "Permission denied",
    "User denied permission", "Tool execution canceled by user",
})  # fmt: skip
#: Finish reasons of a response that failed: an error, a provider's refusal.
_FAILED = frozenset({"error", "content_filter"})
#: The tools that run a command and answer its end in their output, not in ``is_error``:
#: ``bash`` (``formatOutput`` of ``tools/bash.go`` adds ``Exit code N``, or ``Command was
#: aborted before completion`` for one an interrupt stopped, as the output's last line, before
#: the ``<cwd>`` note) and ``job_output`` (a background command's, ``Exit code N`` last).
_SHELL_TOOLS = frozenset({"bash", "job_output"})
_EXIT_LINE = re.compile(r"Exit code (-?\d+)")
_ABORTED_LINE = "Command was aborted before completion"
#: The note ``bash`` ends its output with: the folder the command ran in.
_CWD_NOTE = re.compile(r"\n\n<cwd>[^\n]*</cwd>\Z")
#: The ids and times of the sessions' and messages' rows, read no longer than an id may be
#: (``databases.KEY_BYTES``): a hostile one costs its row, never the database.
_KEYS = ("id", "session_id", "parent_session_id", "summary_message_id", "created_at",
         "updated_at", "finished_at")  # fmt: skip
#: Of those, the times: one too long to be a time is left out of its row, the row still read.
_TIMES = ("created_at", "updated_at", "finished_at")
# --- detection ------------------------------------------------------------------------------------


def detect_path(path: Path) -> Evidence | None:
    """Crush's database: a SQLite file with its sessions and messages (of parts) tables."""
    found = databases.tables(path)
    if found is None or not found >= _TABLES:
        return None
    return Evidence(share=1.0, marks=1) if "parts" in databases.columns(path, "messages") else None


def detect(source: Source) -> Evidence:
    """JSON records are never Crush's: its sessions are a database, read by :func:`detect_path`."""
    return Evidence.none("no Crush database (SQLite, read from its file)")


# --- reading --------------------------------------------------------------------------------------


@dataclass
class Message:
    id: str
    role: str
    parts: list[Any]
    model: str | None
    provider: str | None
    created: Any
    #: Whether it is the summary of the conversation before it that Crush had the model write.
    summary: bool = False


@dataclass
class Session:
    info: Mapping[str, Any]
    messages: list[Message]
    children: frozenset[str]


class _Database:
    """The sessions of a Crush database, read on demand."""

    def __init__(self, db: sqlite3.Connection, source: Source) -> None:
        self.db = db
        self.source = source
        db.row_factory = sqlite3.Row

    def roots(self) -> list[tuple[str, str]]:
        found = []
        for row in databases.rows(
            self.db, "sessions", "id, title",
            "WHERE parent_session_id IS NULL ORDER BY created_at, rowid", key="id",
            bounded=_KEYS,
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                found.append((databases.listed(row), "session"))  # its title clipped when read
                continue
            found.append((str(row["id"]), str(row["title"])))
        return found

    def session(self, session_id: str) -> Session | None:
        row, clipped = databases.row(self.db, "sessions", "*", "WHERE id = ?", (session_id,),
                                     key="id", bounded=_KEYS)  # fmt: skip
        if row is None:
            return None
        for reason in clipped:
            self.source.warn(reason, record_type="session")
        self.source.mapped("session")
        children: set[str] = set()
        for child in databases.rows(self.db, "sessions", "id", "WHERE parent_session_id = ?",
                                    (session_id,), key="id", bounded=_KEYS):  # fmt: skip
            if isinstance(child, databases.OversizedRow):
                self.source.warn(f"a sub-agent's session: {child.reason}", record_type="session")
                continue
            children.add(str(child["id"]))
        keys = row.keys()
        summary_id = row["summary_message_id"] if "summary_message_id" in keys else None
        messages = []
        # created_at is in seconds: the messages of one second keep the order they were written.
        for message in databases.rows(
            self.db, "messages", "*", "WHERE session_id = ? ORDER BY created_at, rowid",
            (session_id,), key="id", bounded=_KEYS, times=_TIMES,
            warn=lambda reason: self.source.warn(reason, record_type="message"),
        ):  # fmt: skip
            if isinstance(message, databases.OversizedRow):
                self.source.warn(message.reason, record_type="message")
                continue
            parts = self._parts(message)
            if parts is None:
                continue
            mkeys = message.keys()
            messages.append(
                Message(
                    id=str(message["id"]),
                    role=str(message["role"]),
                    parts=parts,
                    model=as_text(message["model"]) if "model" in mkeys else None,
                    provider=as_text(message["provider"]) if "provider" in mkeys else None,
                    created=message["created_at"],
                    summary=message["id"] == summary_id
                    or bool("is_summary_message" in mkeys and message["is_summary_message"]),
                )
            )
        return Session({k: row[k] for k in keys}, messages, frozenset(children))

    def _parts(self, message: sqlite3.Row) -> list[Any] | None:
        """A message's parts; None, with a warning naming it, when they are no JSON list."""
        what = f"message {message['id']}"
        try:
            value = codec.loads(message["parts"])
        except (TypeError, ValueError) as exc:
            self.source.warn(f"{what}: unreadable parts ({exc})", record_type="message")
            return None
        if not isinstance(value, list):
            self.source.warn(f"{what}: its parts are no JSON list", record_type="message")
            return None
        return value


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session ``sample`` names (by its id) of the database at ``path``; with none, its
    only top-level session."""
    if epoch is not None:
        raise ValueError(f"{path} is a Crush database: its sessions have no epochs")
    source = Source(str(path), iter(()), path=path)
    db = databases.opened(path, NAME)
    with contextlib.closing(db):
        try:
            store = _Database(db, source)
            if sample is None:
                roots = store.roots()
                if len(roots) != 1:
                    ids = [i for i, _ in roots]
                    raise unselected(path, ids, None, "Crush session", "<session id>")
                sample = roots[0][0]
            session = store.session(str(sample))
            if session is None:
                ids = [i for i, _ in store.roots()]
                raise unselected(path, ids, sample, "Crush session", "<session id>")
            transcript = SessionReader(source, store).read(session)
        except sqlite3.Error as exc:
            raise databases.unreadable(path, NAME, exc) from None
    return source.hand_over(transcript)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The database at ``source.path`` (``load(path, format="crush")`` of an open file)."""
    return databases.read_at_path(
        source, NAME, "Crush's sessions", read_path, sample=sample, epoch=epoch
    )


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The top-level sessions (id, title) of the database at ``path``, oldest first."""
    with contextlib.closing(databases.connect(path)) as db:
        yield from _Database(db, Source(str(path), iter(()))).roots()


# --- one session ----------------------------------------------------------------------------------


def _failed_run(call: ToolCall) -> bool:
    """Whether the sub-agent ``call`` ran ended on an error (its last entry)."""
    child = call.subagent.transcript if call.subagent is not None else None
    return (
        child is not None and bool(child.entries) and isinstance(child.entries[-1], AssistantError)
    )


def _failed(message: Message) -> bool:
    """Whether the response ended on an error or a refusal (its ``finish`` part's reason)."""
    return any(
        _mapping(part).get("type") == "finish"
        and _mapping(_mapping(part).get("data")).get("reason") in _FAILED
        for part in message.parts
    )


def _iso(stamp: Any) -> str | None:
    """A Crush time as ISO 8601: seconds since the epoch (the schema's comments say
    milliseconds, which no version wrote; a value that large is read as such)."""
    large = isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and stamp > 10**11
    return epoch_iso(stamp, per_second=1000 if large else 1, timespec="seconds")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _decoded(data: Any) -> bytes | None:
    """A ``binary`` part's ``Data`` (Go's ``[]byte``: base64 in JSON)."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _times(metadata: Any) -> tuple[int, int] | None:
    """A result's ``start_time`` and ``end_time`` (ms, the shell tools'), when it has both."""
    if not isinstance(metadata, str) or '"start_time"' not in metadata:
        return None
    try:
        value = _mapping(codec.loads(metadata))
    except ValueError:
        return None
    start, end = as_int(value.get("start_time")), as_int(value.get("end_time"))
    if start is None or end is None or not 0 < start <= end:
        return None
    return start, end


def _command_end(content: str) -> tuple[ToolStatus, int | None] | None:
    """How a shell tool's command ended, by the line Crush adds to its output when it did not
    exit 0 (:data:`_SHELL_TOOLS`): ``error`` with its code, or ``cancelled`` for one an
    interrupt stopped; None when the output has no such line (the command exited 0)."""
    last = _CWD_NOTE.sub("", content).rsplit("\n", 1)[-1]
    if last == _ABORTED_LINE:
        return "cancelled", None
    found = _EXIT_LINE.fullmatch(last)
    return ("error", int(found.group(1))) if found is not None else None


def _attached_text(data: Mapping[str, Any]) -> tuple[str | None, str] | None:
    """A ``binary`` part that is a text file or paste: its path and its text."""
    mime = as_text(data.get("MIMEType"))
    raw = _decoded(data.get("Data"))
    if mime is None or not mime.startswith("text/") or raw is None:
        return None
    return as_text(data.get("Path")), raw.decode("utf-8", errors="replace")


def _image(data: Mapping[str, Any]) -> ImageData | None:
    """A ``binary`` part that is an image (its ``Data`` base64 already)."""
    mime, payload = as_text(data.get("MIMEType")), as_text(data.get("Data"))
    if mime is None or payload is None or not mime.startswith("image/"):
        return None
    return ImageData(media_type=mime, data=payload)


class SessionReader:
    """Builds one session's transcript, its sub-agents' sessions nested."""

    def __init__(
        self,
        source: Source,
        store: _Database,
        *,
        depth: int = 0,
        seen: frozenset[str] = frozenset(),
    ) -> None:
        self.source = source
        self.store = store
        self.depth = depth
        self.seen = seen
        self.session_id: str | None = None  # the session read (:meth:`read`)
        self.transcript = Transcript()
        self.calls: dict[str, ToolCall] = {}
        self.model: str | None = None
        self.provider: str | None = None
        self.children: frozenset[str] = frozenset()

    def warn(self, reason: str, record_type: str) -> None:
        self.source.warn(reason, record_type=record_type)

    def _time(self, value: Any, what: str, name: str, record_type: str) -> str | None:
        """A Crush time as ISO 8601 (:func:`_iso`); one that is no time is left out with a
        warning naming its record, which is still read."""
        return warned_timestamp(value, _iso, lambda reason: self.warn(reason, record_type),
                                what, name=name, unit="seconds since the epoch")  # fmt: skip

    def add(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def read(self, session: Session) -> Transcript:
        info = session.info
        self.session_id = str(info.get("id"))
        self.seen = self.seen | {self.session_id}
        self.children = session.children
        for message in session.messages:
            if message.role in ("user", "assistant", "tool"):
                self.source.mapped(f"message/{message.role}")
            else:
                self.warn(f"message {message.id}: unknown role {message.role!r}", "message")
                continue
            stamp = self._time(message.created, f"message {message.id}", "created_at", "message")
            if message.role == "user":
                self._prompt(message, stamp)
            # A summary that failed (Summarization Error) compacted nothing: read as written.
            summary = message.role == "assistant" and message.summary and not _failed(message)
            for index, part in enumerate(message.parts):
                kind = part.get("type") if isinstance(part, Mapping) else None
                if summary and kind == "text":
                    continue  # the summary's, read by _summary
                try:
                    self._part(message, kind, _mapping(part).get("data"), stamp)
                except (TranscriptFormatError, MemoryError):
                    raise
                except Exception as exc:  # a part of a shape no version seen wrote (L-4)
                    self.warn(f"message {message.id}, part {index}: not read: "
                              f"{type(exc).__name__}: {exc}", f"part/{kind}")  # fmt: skip
            if summary:
                self._summary(message, stamp)
        for call in self.calls.values():  # no result answered it: the process was stopped
            if call.status == "pending":
                self.transcript.update(call, status="unknown")
        self._metadata(info)
        return self.transcript

    def _metadata(self, info: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        meta["source_format"] = NAME
        for key, value in (
            ("session_id", info.get("id")),
            ("title", info.get("title")),
            ("parent_session_id", info.get("parent_session_id")),
            ("model", self.model),
            ("model_provider", self.provider),
        ):
            if as_text(value) is not None:
                meta[key] = value
        started = self._time(info.get("created_at"), f"session {info.get('id')}", "created_at",
                             "session")  # fmt: skip
        if started is not None:
            meta["started_at"] = started
        cost = info.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
            meta["cost_usd"] = round(float(cost), 6)
        prompt, completion = (
            as_int(info.get("prompt_tokens")),
            as_int(info.get("completion_tokens")),
        )
        if prompt or completion:
            meta["last_response_tokens"] = {"input_tokens": prompt, "output_tokens": completion}

    def _part(self, message: Message, kind: Any, data: Any, stamp: str | None) -> None:
        record_type = f"part/{kind}"
        data = _mapping(data)
        role = message.role
        if kind == "finish":
            self.source.mapped(record_type)
            if role == "assistant":
                when = self._time(data.get("time"), f"message {message.id}", "finish time",
                                  record_type)  # fmt: skip
                self._finish(data, when or stamp)
            return
        if kind == "text" and role == "user":
            return  # the prompt, read by _prompt
        if kind == "text" and role == "assistant":
            self.source.mapped(record_type)
            text = stringify(data.get("text", ""))
            if text:
                self.model = message.model or self.model
                self.provider = message.provider or self.provider
                self.add(AssistantText(text=text, model=message.model, timestamp=stamp))
            return
        if kind == "reasoning" and role == "assistant":
            self.source.mapped(record_type)
            text = stringify(data.get("thinking", ""))
            if text:
                when = self._time(data.get("started_at"), f"message {message.id}",
                                  "reasoning's started_at", record_type)  # fmt: skip
                self.add(Thinking(text=text, timestamp=when or stamp))
            return
        if kind == "tool_call" and role == "assistant":
            self.source.mapped(record_type)
            self._call(message, data, stamp)
            return
        if kind == "tool_result" and role == "tool":
            self.source.mapped(record_type)
            self._result(message, data, stamp)
            return
        if kind in ("binary", "image_url") and role == "user":
            self.source.mapped(record_type)
            self._attachment(message, kind, data, stamp)
            return
        if kind == "shell_command" and role == "user":
            self.source.mapped(record_type)
            code = as_int(data.get("exit_code"))
            command = stringify(data.get("command", ""))
            self.add(ToolCall(
                call_id=f"{message.id}:shell", name="bash", args={"command": command},
                description=command, status="error" if code else "success",
                result=text_result(stringify(data.get("output", ""))),
                user_initiated=True, timestamp=stamp, meta={"exit_code": code},
            ))  # fmt: skip
            return
        self.warn(f"message {message.id} ({role}): unexpected part type {kind!r}", record_type)

    def _prompt(self, message: Message, stamp: str | None) -> None:
        """The user message's prompt: its text parts and its attached images (the other parts
        follow it, read by :meth:`_part`)."""
        texts: list[str] = []
        files: list[tuple[str | None, str]] = []
        images: list[ImageData] = []
        for part in message.parts:
            part = _mapping(part)
            data = _mapping(part.get("data"))
            if part.get("type") == "text":
                self.source.mapped("part/text")
                if text := stringify(data.get("text", "")):
                    texts.append(text)
            elif part.get("type") == "binary" and (image := _image(data)) is not None:
                images.append(image)
            elif part.get("type") == "binary" and (attached := _attached_text(data)) is not None:
                files.append(attached)
        # An attached text (a long paste becomes paste_1.txt) is the user's: shown under its
        # name after what they typed. Crush sends it the model inside a <system_info> note of
        # its own (PromptWithTextAttachments, message.go), which is not the user's words.
        shown = [f"[attachment: {path or 'text'}]\n{body}" for path, body in files]
        text = "\n\n".join(texts + shown)
        if text or images:
            user = UserMessage(text=text, images=images, timestamp=stamp)
            user.meta["message_id"] = message.id
            self.add(user)

    def _summary(self, message: Message, stamp: str | None) -> None:
        """The summary Crush had the model write of the conversation so far (``Summarize``,
        asked for or automatic as the context fills; ``is_summary_message``, the session's
        ``summary_message_id``): a compaction boundary holding it, not the model's answer. The
        model's history starts there (``getSessionMessages``)."""
        texts: list[str] = []
        for part in message.parts:
            part = _mapping(part)
            if part.get("type") == "text":
                self.source.mapped("part/text")
                texts.append(stringify(_mapping(part.get("data")).get("text", "")))
        said = "".join(texts).strip()
        self.add(CompactionBoundary(summary=said or None, timestamp=stamp))

    def _attachment(
        self, message: Message, kind: str, data: Mapping[str, Any], stamp: str | None
    ) -> None:
        if kind == "image_url":
            url = as_text(data.get("url"))
            key = "reader.attached_image" if url else "reader.attached_image.unnamed"
            self.add(notice(key, {"url": url}, subtype="attachment", timestamp=stamp))
            return
        if _image(data) is not None or _attached_text(data) is not None:
            return  # an image or text of the prompt, read by _prompt
        mime = as_text(data.get("MIMEType")) or "application/octet-stream"
        name = as_text(data.get("Path"))
        key = "reader.attached" if name else "reader.attached.file"
        self.add(notice(key, {"name": name, "mime": mime}, subtype="attachment", timestamp=stamp))

    def _finish(self, data: Mapping[str, Any], when: str | None) -> None:
        """A ``finish`` part, dated ``when`` (its own time, else its message's)."""
        reason = as_text(data.get("reason"))
        said = ": ".join(
            t for t in (as_text(data.get("message")), as_text(data.get("details"))) if t
        )
        if reason == "canceled":
            self.add(AbortMarker(reason=said, timestamp=when) if said
                     else stop("reader.canceled", timestamp=when))  # fmt: skip
        elif reason in _FAILED:
            if said:
                error = AssistantError(message=said, timestamp=when)
            else:
                key = "reader.provider_refused" if reason != "error" else "reader.error"
                error = failure(key, timestamp=when)
            error.meta["finish_reason"] = reason
            self.add(error)
        elif reason is not None:
            last = self.transcript.entries[-1] if self.transcript.entries else None
            if last is not None:
                last.meta["finish_reason"] = reason

    def _call(self, message: Message, data: Mapping[str, Any], stamp: str | None) -> None:
        call_id = stringify(data.get("id", ""))
        name = stringify(data.get("name", ""))
        args = parse_arguments(data.get("input"))
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status="pending",
            started_at=stamp,
            timestamp=stamp,
        )
        many = sum(1 for p in message.parts if _mapping(p).get("type") == "tool_call") > 1
        if many:
            call.batch_id = message.id
        if data.get("provider_executed"):
            call.meta["provider_executed"] = True
        child = self._child_session(message.id, call_id)
        if child is not None:
            call.subagent = self._subagent(name, args, child)
        self.add(call)
        self.calls[call_id] = call

    def _result(self, message: Message, data: Mapping[str, Any], stamp: str | None) -> None:
        call_id = stringify(data.get("tool_call_id", ""))
        call = self.calls.get(call_id)
        if call is None:
            self.warn(f"message {message.id}: a result for no call ({call_id!r})",
                      "part/tool_result")  # fmt: skip
            return
        content = stringify(data.get("content", ""))
        mime, payload = as_text(data.get("mime_type")), as_text(data.get("data"))
        images = (
            [ImageData(media_type=mime, data=payload)]
            if mime and payload and mime.startswith("image/")
            else []
        )
        changes: dict[str, Any] = {"ended_at": stamp}
        status: ToolStatus = "success"
        if data.get("is_error"):
            status = "cancelled" if content.strip() in _CANCELLED else "error"
        elif _failed_run(call):
            status = "error"  # Crush answers an agent call whose run failed as if it succeeded
        elif call.name in _SHELL_TOOLS and (ended := _command_end(content)) is not None:
            # A command that exited non-zero is answered as a success: its output says so.
            status, code = ended
            if code is not None:
                changes["meta"] = {**call.meta, "exit_code": code}
        # A command's metadata holds its own times (ms); the rest of it repeats the result.
        times = _times(data.get("metadata"))
        if times is not None:
            what = f"message {message.id}"
            began = self._time(times[0], what, "metadata's start_time", "part/tool_result")
            finished = self._time(times[1], what, "metadata's end_time", "part/tool_result")
            if began is not None and finished is not None:  # else no end of a duration either
                changes.update(started_at=began, ended_at=finished,
                               duration_ms=float(times[1] - times[0]))  # fmt: skip
        self.transcript.update(
            call, status=status, result=text_result(content, images=images), **changes
        )

    def _child_session(self, message_id: str, call_id: str) -> str | None:
        """The session of the sub-agent the call ran, if the database holds one."""
        for candidate in (f"{message_id}$${call_id}", call_id):
            if candidate in self.children and candidate not in self.seen:
                return candidate
        return None

    def _subagent(self, name: str, args: Any, child_id: str) -> SubAgent:
        args = _mapping(args)
        sub = SubAgent(
            name=name,
            task=as_text(args.get("prompt")) or as_text(args.get("url")),
            agent_id=child_id,
        )
        if self.depth >= MAX_DEPTH:
            # Sub-agents nest down to every reader's bound (a cycle of ids ends sooner): one
            # deeper is named, never read here, and loads as a session of its own. Its steps are
            # recorded, so they are not said to be missing.
            shown = f"sub-agent session {child_id} of session {self.session_id}"
            instead = f"sample={child_id!r} loads it as a session of its own"
            self.source.warn(too_deep(shown, self.depth + 1, instead))
            return sub
        session = self.store.session(child_id)
        if session is None:
            sub.steps_missing = True
            return sub
        nested = SessionReader(self.source, self.store, depth=self.depth + 1, seen=self.seen)
        sub.transcript = nested.read(session)
        sub.tool_count = sum(isinstance(e, ToolCall) for e in sub.transcript.entries)
        return sub
