"""LangGraph's SQLite checkpointer database (``langgraph-checkpoint-sqlite`` 3.x ``SqliteSaver``
/ ``AsyncSqliteSaver``): the file a graph compiled with ``checkpointer=`` keeps its threads in
(``SqliteSaver.from_conn_string("checkpoints.sqlite")``, any name the user picks), read only,
never written here.

The saver's layout (``langgraph/checkpoint/sqlite/__init__.py``, ``setup``): a ``checkpoints``
table (``thread_id``, ``checkpoint_ns``, ``checkpoint_id``, ``parent_checkpoint_id``, ``type``,
``checkpoint``, ``metadata``), a row per step of a thread, and a ``writes`` table (the writes
of the tasks run from a checkpoint: ``task_id``, ``idx``, ``channel``, ``type``, ``value``).
Checkpoint ids are time-ordered (UUID v6), so a thread's newest checkpoint is its greatest id,
as ``SqliteSaver.get_tuple`` takes it. The tables are told by their columns.

A checkpoint is serialised by LangGraph's ``JsonPlusSerializer``: ``type`` ``msgpack`` (its
objects as msgpack extension types that name a Python constructor: module, class and its
arguments) or, from before the msgpack migration, ``json`` (LangChain's ``dumpd``
constructors, ``lc: 2`` constructors of other classes). A file is untrusted content, and
LangGraph's own decoder imports the modules a file names and calls their constructors: it is
never used here (nor pickle). :func:`decoded` reads the msgpack with msgspec and turns each
extension into plain data: a LangChain message into the ``dumpd`` form its module, class and
fields give (``{"lc": 1, "type": "constructor", "id": [..., class], "kwargs": fields}``),
anything else into its arguments, as LangGraph's ``_msgpack_ext_hook_to_json`` reads them. A
``pickle`` payload (``JsonPlusSerializer(pickle_fallback=True)``) is refused with a warning.

A thread is its newest checkpoint of the root namespace (``checkpoint_ns == ""``): its
``messages`` channel (the whole conversation) is read by
:mod:`~turnfold.formats.frameworks.langchain`'s rules, as ``graph.get_state(config)
.values["messages"]`` would be (their content blocks, a provider's or langchain-core 1.x's
standard ones, by :mod:`~turnfold.formats.langchain_blocks`), with the state's other keys
as that reader reads a state's (``structured_response``, scalars to metadata; LangGraph's
own channels left out) and ``HumanInTheLoopMiddleware``'s edits of every turn
(``hitl_edited_tool_calls``: the checkpoint's, and each review's in the ``writes`` table,
as the thread's history holds them), each edited call shown as it ran; the interrupts
written at that checkpoint (the ``writes`` table's ``__interrupt__`` channel: ``interrupt()``
waiting on a human) are that reader's graph result's ``__interrupt__``, a
:class:`~turnfold.model.PendingAction` each; a task's error (``__error__``) a warning. A
checkpoint that cannot be read (damaged, a pickle, an unknown ``type``) is a warning naming
it, and the thread is read from its newest readable one.
A graph that removed messages from its state (``RemoveMessage``: LangChain's
``SummarizationMiddleware`` replacing the history by its summary, or a graph deleting old
messages and keeping a ``summary``) left its newest checkpoint without them: they are in the
checkpoints the removing tasks ran from, which the ``writes`` table names (a ``RemoveMessage``
written to ``messages``). Those checkpoints alone are read besides the newest, and the thread
is the whole conversation (:func:`langchain.merged_history`): each message once by its id,
what was said before the summary, the compaction (the summary message, or a notice of the
state's ``summary``), then what followed.
The messages record no time; each checkpoint does (``ts``: when the graph saved it). The
thread's span is its first checkpoint's time (``started_at``: the input its first run started
from) to its newest's (``updated_at``), its ``duration_ms``; its entries stay undated, since
dating each by the first checkpoint that holds its message would decode every checkpoint of
the thread, each a copy of the whole conversation so far (a load in time of the thread's length
squared).
A ``DeltaChannel`` messages channel (``Annotated[list, DeltaChannel(reducer)]``, langgraph
1.2+, beta) is in a checkpoint only every ``snapshot_frequency`` updates (a ``_DeltaSnapshot``
extension): between snapshots it is rebuilt as LangGraph's ``get_delta_channel_history`` does,
from the nearest ancestor that holds it and the ``messages`` writes since, applied as
``add_messages`` applies them (the user's reducer is code, never run here).
A subgraph's checkpoints are those of another namespace (``langgraph.pregel._algo``:
``<node>:<task id>`` of the task that ran it, nested ones joined by ``|``; a
``checkpointer=True`` subgraph's without the task ids, ``main.py``'s
``_own_checkpoint_config``), :meth:`_Database.nest` reads each one's newest by the rule the
LangChain reader follows a ``subgraphs=True`` stream by (:func:`langchain.tool_task`): an agent
invoked inside a tool (``tools:<task id>``: a child compiled without a checkpointer saves into
its parent's) is a :class:`~turnfold.model.SubAgent` of the call that task ran, told by the
tool message the task wrote (the ``writes`` table keeps it), named by its checkpoint's
``lc_agent_name``, its task its run's prompt; a graph used as a node, whose messages all came
back in its parent's, is counted; one nothing ties to its call or node is shown after the
thread's messages (a synthetic ``subgraph`` call holding it), with a warning.

``sample=`` names a thread by its id; a database of one thread needs none.
Detection: the SQLite header, then a table with the saver's checkpoint columns.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from turnfold import codec
from turnfold.formats import databases
from turnfold.formats.catalog import Records
from turnfold.formats.common import checked_timestamp, warned_timestamp
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError, unselected
from turnfold.formats.frameworks import langchain
from turnfold.formats.source import Source, from_json_value
from turnfold.model import SubAgent, ToolCall, Transcript, UserMessage, utc

NAME = "langgraph-checkpoints"
#: A database holds many threads: ``sample=`` names one by its id.
HAS_SAMPLES = True

RECORDS = Records(
    mapped={
        **langchain.RECORDS.mapped,
        "checkpoint": "the thread's newest readable checkpoint of the root namespace: its "
        "messages channel read as a graph result's messages, its state's other keys as a "
        "result's (LangGraph's own channels left out), the reviewer's edits of every turn "
        "(hitl_edited_tool_calls, the writes table's); its thread id, step, source, "
        "agent name and time → metadata",
        "__error__": "a pending write of a task that failed: a warning with its error",
        "delta write": "an earlier step's messages write, replayed (as add_messages applies "
        "it) onto the nearest snapshot when the messages channel is a DeltaChannel, which a "
        "checkpoint between snapshots does not hold",
        "summarised checkpoint": "an earlier checkpoint from which a task removed messages "
        "(a RemoveMessage write: SummarizationMiddleware, a graph trimming its history): the "
        "messages the newest no longer holds, each shown once (by id) before the compaction "
        "(the summary message, else a CompactionBoundary of the state's summary)",
        "subgraph checkpoint": "a subgraph's newest readable checkpoint (another namespace): "
        "an agent invoked inside a tool (tools:<task id>) → the SubAgent of the call that task "
        "ran (its tool message in the writes table), its task the run's prompt; one nothing "
        "ties to a call → shown after the thread's messages, with a warning",
    },
    ignored={
        **langchain.RECORDS.ignored,
        "earlier checkpoint": "the thread's (and each subgraph's) earlier states, whose "
        "messages the newest (or a summarised checkpoint) holds (the thread's first one's "
        "time → metadata started_at)",
        "subgraph node checkpoint": "the newest checkpoint of a graph used as a node, whose "
        "messages all came back in its parent's messages (not shown twice)",
        "pending write": "a write of the newest checkpoint's tasks other than an interrupt or "
        "an error (a step left unfinished: the state does not hold it yet)",
    },
)

#: The columns that make a table the saver's checkpoints table (``SqliteSaver.setup``).
_CHECKPOINT_COLUMNS = frozenset(
    {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint",
     "metadata"}
)  # fmt: skip
#: The columns that make a table the saver's writes table.
_WRITE_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx",
                            "channel", "type", "value"})  # fmt: skip
#: How LangGraph's own channels begin (``langgraph._internal._constants``' reserved names,
#: ``graph/state.py``'s ``branch:to:<node>``, ``join:...``; ``start:<node>`` before 0.3):
#: a checkpoint's ``channel_values`` that are no key of the graph's state.
_INTERNAL = ("__", "branch:", "join:", "start:")
#: The separator of nested namespaces (``langgraph._internal._constants.NS_SEP``).
_NS_SEP = "|"
#: The saver's own names, preferred when a file holds several tables of those columns.
_DEFAULTS = ("checkpoints", "writes")

# ``langgraph.checkpoint.serde.jsonplus``'s msgpack extension codes.
_SINGLE_ARG, _POS_ARGS, _KW_ARGS, _METHOD = 0, 1, 2, 3
_PYDANTIC_V1, _PYDANTIC_V2, _NUMPY, _DELTA = 4, 5, 6, 7
#: The module of LangChain's message classes, whose constructors become ``dumpd`` records.
_MESSAGES_MODULE = "langchain_core.messages"


class DamagedCheckpoint(ValueError):
    """A checkpoint's blob that cannot be read: its reason."""


# --- decoding, never importing --------------------------------------------------------------


def _ext(code: int, data: memoryview) -> Any:
    """A msgpack extension of ``JsonPlusSerializer`` as plain data: never imported, never
    called (the module and class it names are only text)."""
    inner = _DECODER.decode(data)
    if code == _DELTA:
        return inner  # a DeltaChannel's snapshot: the channel's whole value
    if code == _NUMPY:
        return {"(array)": inner[1] if isinstance(inner, list) and len(inner) > 1 else None}
    if not (isinstance(inner, list) and len(inner) >= 3 and isinstance(inner[0], str)
            and isinstance(inner[1], str)):  # fmt: skip
        raise DamagedCheckpoint(f"an extension of type {code} is not (module, class, data)")
    module, name, payload = inner[0], inner[1], inner[2]
    if code in (_PYDANTIC_V1, _PYDANTIC_V2) and isinstance(payload, dict):
        if module == _MESSAGES_MODULE or module.startswith(_MESSAGES_MODULE + "."):
            return {"lc": 1, "type": "constructor", "id": [*module.split("."), name],
                    "kwargs": payload}  # fmt: skip
        return payload
    if code == _SINGLE_ARG and (module, name) == ("uuid", "UUID") and isinstance(payload, str):
        return f"{payload[:8]}-{payload[8:12]}-{payload[12:16]}-{payload[16:20]}-{payload[20:]}"
    if code in (_SINGLE_ARG, _POS_ARGS, _KW_ARGS, _METHOD):
        return payload
    raise DamagedCheckpoint(f"an extension of unknown type {code} ({module}.{name})")


_DECODER = msgspec.msgpack.Decoder(ext_hook=_ext)


def _lc2(value: Any) -> Any:
    """A ``json`` checkpoint's value with its ``lc: 2`` constructors (``JsonPlusSerializer``'s
    own, of other classes than LangChain's) as their arguments; ``lc: 1`` ones (``dumpd``) are
    what the LangChain reader reads."""
    if isinstance(value, list):
        return [_lc2(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("lc") == 2 and value.get("type") == "constructor":
        kwargs, args = value.get("kwargs"), value.get("args")
        return _lc2(kwargs if kwargs else args)
    return {k: _lc2(v) for k, v in value.items()}


def decoded(kind: Any, blob: Any) -> Any:
    """A value the serializer wrote as ``(kind, blob)``, as plain data.

    Raises :class:`DamagedCheckpoint` when it cannot be read: a pickle (never unpickled), an
    unknown type, a blob that is no msgpack or JSON."""
    if kind == "null":
        return None
    if kind in ("bytes", "bytearray"):
        return bytes(blob)
    if kind == "pickle":
        raise DamagedCheckpoint("a pickle, which turnfold never unpickles (it can run code)")
    if not isinstance(blob, (bytes, str)):
        raise DamagedCheckpoint(f"its blob is {type(blob).__name__}, not bytes")
    try:
        if kind == "msgpack":
            return _DECODER.decode(blob.encode() if isinstance(blob, str) else blob)
        if kind == "json":
            return _lc2(codec.loads(blob))
    except DamagedCheckpoint:
        raise
    except (msgspec.DecodeError, ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:
        raise DamagedCheckpoint(f"its {kind} blob is damaged ({exc})") from None
    raise DamagedCheckpoint(f"of an unknown serialisation type {kind!r}")


# --- the tables -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Store:
    """The saver's checkpoints table, and its writes table (None: there is none)."""

    checkpoints: str
    writes: str | None


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: The ids of the checkpoints' and writes' rows, read no longer than an id may be
#: (``databases.KEY_BYTES``): a hostile one costs its row, never the database.
_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "task_id",
         "task_path", "channel")  # fmt: skip


def _store(db: sqlite3.Connection) -> _Store | None:
    """The saver's tables of ``db``, told by their columns; None when it has none."""
    columns: dict[str, set[str]] = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns[table] = {row[1] for row in db.execute(f"PRAGMA table_info({_quoted(table)})")}

    def pick(wanted: frozenset[str], default: str) -> str | None:
        found = sorted((t for t, c in columns.items() if c >= wanted),
                       key=lambda t: (t != default, t))  # fmt: skip
        return found[0] if found else None

    checkpoints = pick(_CHECKPOINT_COLUMNS, _DEFAULTS[0])
    return _Store(checkpoints, pick(_WRITE_COLUMNS, _DEFAULTS[1])) if checkpoints else None


def _layout(path: Path) -> _Store | None:
    """The stores of the SQLite file at ``path``; None when it is no readable SQLite file."""
    return databases.layout(path, _store)


# --- detection --------------------------------------------------------------------------------


def detect_path(path: Path) -> Evidence | None:
    """LangGraph's checkpointer database: a SQLite file with a table of the saver's checkpoint
    columns."""
    return Evidence(share=1.0, marks=1) if _layout(path) else None


def detect(source: Source) -> Evidence:
    """JSON records are never this format's: its threads are a database (:func:`detect_path`);
    a thread's messages saved as JSON are :mod:`~turnfold.formats.frameworks.langchain`'s."""
    return Evidence.none("no LangGraph checkpointer database (SQLite, read from its file)")


# --- reading ----------------------------------------------------------------------------------


def _metadata(raw: Any) -> dict[str, Any]:
    """A checkpoint's ``metadata`` column (the saver writes it as JSON); unreadable, empty."""
    with contextlib.suppress(ValueError, TypeError):
        value = codec.loads(raw) if isinstance(raw, (bytes, str)) else None
        if isinstance(value, dict):
            return value
    return {}


@dataclass
class _Thread:
    """A graph's state (its newest readable checkpoint's) and when it began and was last
    saved: its first checkpoint's time (the input a run starts from) and its newest's."""

    state: dict[str, Any]
    started: str | None = None
    ended: str | None = None

    def span(self, metadata: dict[str, Any]) -> None:
        """The thread's span into ``metadata``: ``started_at``, and ``duration_ms`` from its
        first checkpoint to its newest (its entries have no time of their own)."""
        if self.started is None:
            return
        metadata["started_at"] = self.started
        began, ended = utc(self.started), utc(self.ended)
        if began is not None and ended is not None and ended > began:
            metadata["duration_ms"] = (ended - began).total_seconds() * 1000


class _Database:
    """The threads of a checkpointer database, read on demand."""

    def __init__(self, db: sqlite3.Connection, store: _Store, source: Source) -> None:
        self.db, self.store, self.source = db, store, source
        self.table = _quoted(store.checkpoints)

    def threads(self) -> list[tuple[str, str]]:
        """Every thread (id, title: its agent's name, as its newest checkpoint names it),
        oldest first (checkpoint ids are time-ordered)."""
        newest: dict[str, tuple[str, Any]] = {}  # each thread's checkpoint id and metadata
        for row in databases.rows(
            self.db, self.store.checkpoints, "thread_id, checkpoint_id, metadata",
            f"WHERE checkpoint_ns = '' AND checkpoint_id IN (SELECT MAX(checkpoint_id) FROM "
            f"{self.table} WHERE checkpoint_ns = '' GROUP BY thread_id) "
            f"ORDER BY (SELECT MIN(checkpoint_id) FROM {self.table} AS t "
            f"WHERE t.thread_id = {self.table}.thread_id)", key="thread_id", bounded=_KEYS,
            # A thread id too long to load cannot be grouped by: then every checkpoint of
            # every thread, in the order they were written, the newest kept.
            unordered="WHERE checkpoint_ns = '' ORDER BY rowid",
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                newest.setdefault(databases.listed(row), ("", None))  # warned of when read
                continue
            thread, checkpoint, metadata = str(row[0]), str(row[1]), row[2]
            if checkpoint >= newest.get(thread, ("", None))[0]:
                newest[thread] = (checkpoint, metadata)
        found = []
        for thread, (_, metadata) in newest.items():
            agent = _metadata(metadata).get("lc_agent_name")
            found.append((thread, f"thread {agent}" if isinstance(agent, str) else "thread"))
        return found

    def read(self, thread: str, transcript: Transcript, namespace: str = "") -> _Thread | None:
        """The graph result of ``thread``'s graph of ``namespace`` (``{"messages",
        "__interrupt__"}``) from its newest readable checkpoint, its metadata put in
        ``transcript``, and when each of its messages was saved (:class:`_Thread`); None: no
        such thread."""
        rows = databases.rows(
            self.db, self.store.checkpoints, "checkpoint_id, type, checkpoint",
            "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC",
            (thread, namespace), key="checkpoint_id", bounded=_KEYS,
        )  # fmt: skip
        read: _Thread | None = None
        newest = True
        seen = unread = summarised = 0
        first: DamagedCheckpoint | None = None
        where = f"thread {thread}" + (f", namespace {namespace}" if namespace else "")
        oldest: tuple[str, str, bytes] | None = None  # the thread's first checkpoint: its time
        for row in rows:
            seen += 1
            if isinstance(row, databases.OversizedRow):
                if read is None:  # as a damaged checkpoint: the next older one is read
                    self.source.warn(f"{where}: {row.reason}", record_type="checkpoint")
                    newest, unread = False, unread + 1
                    first = first or DamagedCheckpoint(row.reason)
                continue  # an earlier state, counted
            checkpoint_id, kind, blob = row
            if read is not None:
                oldest = (checkpoint_id, kind, blob)
                continue  # counted: an earlier state
            try:
                checkpoint = decoded(kind, blob)
                values = checkpoint.get("channel_values") if isinstance(checkpoint, dict) else None
                if not isinstance(values, dict):
                    raise DamagedCheckpoint("it holds no channel_values")
            except DamagedCheckpoint as exc:
                self.source.warn(f"{where}: checkpoint {checkpoint_id} is not read: {exc}",
                                 record_type="checkpoint")  # fmt: skip
                newest, unread, first = False, unread + 1, first or exc
                continue
            read = _Thread(self._state(thread, namespace, checkpoint_id, values, newest))
            read.started = read.ended = self._time(where, checkpoint_id, checkpoint)
            summarised = self._history(thread, namespace, checkpoint_id, read.state, values)
            metadata = self._metadata_of(where, thread, namespace, checkpoint_id)
            if namespace:  # what becomes of it is for nest() to say
                agent = metadata.get("lc_agent_name")
                if isinstance(agent, str):
                    transcript.metadata["agent"] = agent
                continue
            self._describe(transcript, thread, checkpoint_id, read.ended, metadata)
            self.source.mapped("checkpoint")
        if seen == 0:
            return None
        if read is None:
            raise TranscriptFormatError(self.source.name, [NAME], None,
                                        f"{where}: none of its {seen} checkpoints "
                                        f"can be read (the newest: {first})")  # fmt: skip
        if oldest is not None:
            with contextlib.suppress(DamagedCheckpoint):  # else it began when nothing says
                read.started = self._time(where, oldest[0], decoded(*oldest[1:]))
        earlier = seen - 1 - unread - summarised
        if earlier > 0:
            self.source.accounting.note("earlier checkpoint", "ignored", earlier)
        return read

    def _metadata_of(
        self, where: str, thread: str, namespace: str, checkpoint_id: str
    ) -> dict[str, Any]:
        """The ``metadata`` of the checkpoint a thread is read from (its step, source, agent's
        name), read apart from its state: a value over the record limit (a large ``writes``
        of an older saver, the user's own metadata) is left out with a warning naming the
        thread, and costs it none of its messages."""
        row = next(databases.rows(
            self.db, self.store.checkpoints, "metadata",
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread, namespace, checkpoint_id), key="checkpoint_id",
        ), None)  # fmt: skip
        if isinstance(row, databases.OversizedRow):
            self.source.warn(f"{where}: {row.said}; left out (the checkpoint's step, source "
                             "and agent's name are not shown)",
                             record_type="checkpoint")  # fmt: skip
            return {}
        return _metadata(row[0]) if row is not None else {}

    def nest(self, thread: str, root: Transcript, messages: list[Any]) -> None:
        """The newest checkpoint of each of ``thread``'s subgraphs (``root``: its transcript,
        of ``messages``), parents before their children: an agent run inside a tool call
        (namespace ``tools:<task id>``, :func:`langchain.tool_task`) a :class:`SubAgent` of
        the call its parent's task ran; a graph used as a node, whose messages all came back
        in its parent's, counted; any other (``checkpointer=True`` drops the task id, a
        node's own state schema) shown after the thread's messages, with a warning."""
        found = []
        for row in databases.rows(
            self.db, self.store.checkpoints, "checkpoint_ns",
            "WHERE thread_id = ? AND checkpoint_ns != '' GROUP BY checkpoint_ns "
            "ORDER BY MIN(checkpoint_id)", (thread,), key="checkpoint_ns", bounded=_KEYS,
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                self.source.warn(f"thread {thread}: a subgraph's {row.reason}",
                                 record_type="checkpoint")  # fmt: skip
                continue
            found.append(str(row[0]))
        graphs: dict[str, tuple[Transcript, set[str]]] = {"": (root, _ids(messages))}
        for namespace in sorted(found, key=lambda ns: ns.count(_NS_SEP)):  # stable: time order
            parts = namespace.split(_NS_SEP)
            parent = graphs.get(_NS_SEP.join(parts[:-1]))
            said = Transcript(metadata={})
            read = self.read(thread, said, namespace)
            assert read is not None  # the namespace was found in the thread's rows
            state = read.state
            ids = _ids(state["messages"])
            task = langchain.tool_task(parts[-1])
            if task is None and parent is not None and ids and ids <= parent[1]:
                self.source.ignored("subgraph node checkpoint")
                graphs[namespace] = parent  # its calls are its parent's: a child's nests there
                continue
            result = from_json_value(state, f"{self.source.name}#{namespace}")
            result.warnings, result.accounting = self.source.warnings, self.source.accounting
            child = langchain.read(result)
            child.metadata.update(said.metadata, source_format=NAME, checkpoint_ns=namespace)
            graphs[namespace] = (child, ids)
            agent = said.metadata.get("agent")
            call_id = (self._task_call(thread, _NS_SEP.join(parts[:-1]), task)
                       if task is not None and parent is not None else None)  # fmt: skip
            calls = parent[0].tool_calls() if parent is not None and call_id is not None else []
            call = next((c for c in calls if c.call_id == call_id and c.subagent is None), None)
            if parent is not None and call is not None:
                # Its task is what it was asked: its run's prompt, the tool's input to it.
                task = next((e.text for e in child.entries if isinstance(e, UserMessage)), None)
                parent[0].update(call, subagent=SubAgent(name=agent, task=task, transcript=child))
                self.source.mapped("subgraph checkpoint")
                continue
            self.source.warn(f"thread {thread}: nothing names the call or node that ran the "
                             f"subgraph of namespace {namespace}: shown after the thread's "
                             "messages", record_type="subgraph checkpoint")  # fmt: skip
            root.append(ToolCall(name="subgraph", status="unknown", meta={"synthetic":
                                 "unlinked subgraph"}, subagent=SubAgent(
                                 name=agent, task=namespace, transcript=child)))  # fmt: skip

    def _history(
        self, thread: str, namespace: str, newest: str, state: dict[str, Any],
        values: Mapping[str, Any],
    ) -> int:  # fmt: skip
        """The whole conversation into ``state["messages"]`` when the graph removed messages
        from its state (``RemoveMessage``: ``SummarizationMiddleware`` replacing the history by
        its summary, a graph trimming old messages), which the newest checkpoint no longer
        holds: they are in the checkpoints the removing tasks ran from (the ``writes`` of a
        ``RemoveMessage`` to ``messages`` name them), each read once, oldest first, and merged
        by :func:`langchain.merged_history`. Only those checkpoints are decoded, not every
        step's copy of the conversation. How many were accounted for (read, or warned of)."""
        if self.store.writes is None:
            return 0
        removing: list[str] = []
        # Each write is asked apart (not by SQL's instr, which a value over the record limit
        # fails for the whole thread): a long one is warned of, the others still searched.
        for row in databases.rows(
            self.db, self.store.writes, "checkpoint_id, value",
            "WHERE thread_id = ? AND checkpoint_ns = ? AND channel = 'messages' "
            "AND checkpoint_id < ? ORDER BY checkpoint_id", (thread, namespace, newest),
            key="checkpoint_id", bounded=_KEYS,
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                self.source.warn(f"thread {thread}: {row.reason}: the messages it removed, if "
                                 "any, are not shown",
                                 record_type="summarised checkpoint")  # fmt: skip
                continue
            checkpoint_id, value = row
            held = value.encode() if isinstance(value, str) else value
            if isinstance(held, bytes) and _REMOVE_MARK in held and checkpoint_id not in removing:
                removing.append(checkpoint_id)
        states: list[tuple[list[Any], Any]] = []
        warned = 0
        for checkpoint_id in removing:
            row = next(databases.rows(
                self.db, self.store.checkpoints, "type, checkpoint",
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (thread, namespace, checkpoint_id), key="checkpoint_id",
            ), None)  # fmt: skip
            try:
                if row is None or isinstance(row, databases.OversizedRow):
                    raise DamagedCheckpoint(row.reason if row is not None else "it is missing")
                checkpoint = decoded(row[0], row[1])
                found = checkpoint.get("channel_values") if isinstance(checkpoint, dict) else None
                if not isinstance(found, dict):
                    raise DamagedCheckpoint("it holds no channel_values")
            except DamagedCheckpoint as exc:
                self.source.warn(f"thread {thread}: checkpoint {checkpoint_id}, from which "
                                 f"messages were removed, is not read ({exc}): the messages "
                                 "removed there are not shown", record_type="summarised "
                                 "checkpoint")  # fmt: skip
                warned += 1
                continue
            messages = found.get("messages")
            if messages is None:
                messages = self._replayed(thread, namespace, checkpoint_id)
            if isinstance(messages, list):
                states.append((messages, found.get("summary")))
                self.source.mapped("summarised checkpoint")
        if states:
            state["messages"] = langchain.merged_history(
                [*states, (state["messages"], values.get("summary"))]
            )
        return len(states) + warned

    def _task_call(self, thread: str, namespace: str, task: str) -> str | None:
        """The id of the tool call the task ``task`` of the graph of ``namespace`` ran: the
        ``tool_call_id`` of the tool message it wrote (the saver keeps every task's writes)."""
        if self.store.writes is None:
            return None
        for row in databases.rows(
            self.db, self.store.writes, "type, value", "WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND task_id = ? AND channel = 'messages' ORDER BY idx", (thread, namespace, task),
        ):  # fmt: skip
            with contextlib.suppress(DamagedCheckpoint):  # then nothing names it: a warning
                if isinstance(row, databases.OversizedRow):
                    raise DamagedCheckpoint(row.reason)
                value = decoded(*row)
                for message in value if isinstance(value, list) else [value]:
                    found = langchain.message_of(message)
                    if found and found[0] == "tool" and isinstance(
                            found[1].get("tool_call_id"), str):  # fmt: skip
                        return str(found[1]["tool_call_id"])
        return None

    def _state(
        self, thread: str, namespace: str, checkpoint_id: str, values: dict[str, Any],
        newest: bool,
    ) -> dict[str, Any]:  # fmt: skip
        messages = values.get("messages")
        if messages is None:
            messages = self._replayed(thread, namespace, checkpoint_id)
        if messages is None:
            where = f"thread {thread}" + (f", namespace {namespace}" if namespace else "")
            raise TranscriptFormatError(self.source.name, [NAME], None,
                                        f"{where}: checkpoint {checkpoint_id} holds no "
                                        "messages channel")  # fmt: skip
        # The state's own keys, as ``get_state(config).values`` holds them: LangGraph's
        # channels (``__start__``, ``branch:to:<node>``, ``__pregel_tasks``...) are no key.
        state: dict[str, Any] = {
            key: value
            for key, value in values.items()
            if isinstance(key, str) and not key.startswith(_INTERNAL)
        }
        state["messages"] = messages
        reviews = self._reviews(thread, namespace, checkpoint_id, values.get(langchain._REVIEWS))
        state.pop(langchain._REVIEWS, None)
        if reviews is not None:
            state[langchain._REVIEWS] = reviews
        if newest and self.store.writes is not None:
            interrupts = self._pending(thread, namespace, checkpoint_id)
            if interrupts:
                state["__interrupt__"] = interrupts
        return state

    def _reviews(self, thread: str, namespace: str, checkpoint_id: str, newest: Any) -> Any:
        """``HumanInTheLoopMiddleware``'s edits of every turn (``hitl_edited_tool_calls``):
        a checkpoint holds those of its last turn with calls only (``newest``), the writes
        table those of each review, merged oldest first, as the load of the thread's history
        (``get_state_history``) merges its states'. A write that cannot be read, or is no
        mapping of edits, is a warning; the others are still shown."""
        if self.store.writes is None:
            return newest
        merged: dict[str, Any] = {}
        for row in databases.rows(
            self.db, self.store.writes, "checkpoint_id, type, value",
            "WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND checkpoint_id < ? "
            "ORDER BY checkpoint_id, task_id, idx",
            (thread, namespace, langchain._REVIEWS, checkpoint_id), key="checkpoint_id",
            bounded=_KEYS,
        ):  # fmt: skip
            try:
                if isinstance(row, databases.OversizedRow):
                    raise DamagedCheckpoint(row.reason)
                value = decoded(row[1], row[2])
            except DamagedCheckpoint as exc:
                self.source.warn(f"thread {thread}: a reviewer's edits are not read ({exc}): "
                                 "the calls they edited show as the model asked",
                                 record_type=langchain._REVIEWS)  # fmt: skip
                continue
            if isinstance(value, Mapping):
                merged.update(value)
            elif value is not None:
                self.source.warn(f"thread {thread}: a reviewer's edits of a "
                                 f"{type(value).__name__} (not read) at checkpoint {row[0]}",
                                 record_type=langchain._REVIEWS)  # fmt: skip
        if not merged:
            return newest
        return {**merged, **newest} if isinstance(newest, Mapping) else merged

    def _replayed(self, thread: str, namespace: str, checkpoint_id: str) -> list[Any] | None:
        """A ``DeltaChannel`` messages channel (langgraph 1.2+, beta), which a checkpoint
        stores only as a snapshot every ``snapshot_frequency`` updates and is otherwise absent
        from: rebuilt as ``BaseCheckpointSaver.get_delta_channel_history`` and
        ``DeltaChannel.replay_writes`` do, from the nearest ancestor (by
        ``parent_checkpoint_id``, the checkpoint itself excluded) that holds the channel, then
        the ``messages`` writes of the ancestors after it, oldest first, in
        ``writes_sort_key`` order (``task_path``, ``task_id``, ``idx``). The user's reducer is
        code, never run here: the writes are applied as ``add_messages`` applies them (the
        messages channel's reducer), by :func:`_add_messages`. None: no ancestor holds the
        channel and none wrote to it (a graph without one)."""
        if self.store.writes is None:
            return None
        chain: list[str] = []
        seed: list[Any] | None = None
        walked = {checkpoint_id}
        parent = self._parent(thread, namespace, checkpoint_id)
        while parent is not None and parent not in walked:  # a re-put id can make a loop
            walked.add(parent)
            row = next(databases.rows(
                self.db, self.store.checkpoints, "type, checkpoint, parent_checkpoint_id",
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (thread, namespace, parent), key="checkpoint_id", bounded=_KEYS,
            ), None)  # fmt: skip
            if row is None:
                break
            chain.append(parent)
            try:
                if isinstance(row, databases.OversizedRow):
                    raise DamagedCheckpoint(row.reason)
                checkpoint = decoded(row[0], row[1])
                values = checkpoint.get("channel_values") if isinstance(checkpoint, dict) else None
            except DamagedCheckpoint as exc:
                # Its writes still count, and an older snapshot seeds them: said, not silent.
                self.source.warn(f"thread {thread}: checkpoint {parent} is not read ({exc}): "
                                 "the messages are rebuilt from an older one",
                                 record_type="delta write")  # fmt: skip
                values = None
            if isinstance(values, dict) and values.get("messages") is not None:
                found = values["messages"]
                seed = list(found) if isinstance(found, list) else [found]
                break
            parent = (self._parent(thread, namespace, parent)
                      if isinstance(row, databases.OversizedRow) else row[2])  # fmt: skip
        writes = self._channel_writes(thread, namespace, chain)
        if seed is None and not writes:
            return None
        messages = seed or []
        for value in writes:
            messages = _add_messages(messages, value)
        return messages

    def _parent(self, thread: str, namespace: str, checkpoint_id: str) -> str | None:
        row = next(databases.rows(
            self.db, self.store.checkpoints, "parent_checkpoint_id",
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread, namespace, checkpoint_id), key="checkpoint_id", bounded=_KEYS,
        ), None)  # fmt: skip
        if isinstance(row, databases.OversizedRow):  # the chain ends there, said
            self.source.warn(f"thread {thread}: {row.reason}: the checkpoints before it are "
                             "not read", record_type="delta write")  # fmt: skip
            return None
        return row[0] if row is not None and isinstance(row[0], str) else None

    def _channel_writes(self, thread: str, namespace: str, chain: list[str]) -> list[Any]:
        """The ``messages`` writes of the checkpoints of ``chain`` (newest first), oldest
        checkpoint first; a write that cannot be read is a warning (the rest still apply)."""
        assert self.store.writes is not None
        columns = {r[1] for r in self.db.execute(
            f"PRAGMA table_info({_quoted(self.store.writes)})")}  # fmt: skip
        # Savers before task_path existed sort a step's writes by task and index alone.
        path = "task_path" if "task_path" in columns else "''"
        out: list[Any] = []
        for checkpoint in reversed(chain):
            for row in databases.rows(
                self.db, self.store.writes, "task_id, type, value",
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
                f"AND channel = 'messages' ORDER BY {path}, task_id, idx",
                (thread, namespace, checkpoint), key="task_id", bounded=_KEYS,
            ):  # fmt: skip
                if isinstance(row, databases.OversizedRow):
                    self.source.warn(f"thread {thread}: {row.reason}", record_type="delta write")
                    continue
                task, kind, blob = row
                try:
                    out.append(decoded(kind, blob))
                    self.source.mapped("delta write")
                except DamagedCheckpoint as exc:
                    self.source.warn(f"thread {thread}: task {task}'s messages write at "
                                     f"checkpoint {checkpoint} is not read: {exc}",
                                     record_type="delta write")  # fmt: skip
        return out

    def _pending(self, thread: str, namespace: str, checkpoint_id: str) -> list[Any]:
        """The writes of the tasks run from the newest checkpoint: its interrupts (returned),
        its tasks' errors (warnings); the others counted."""
        assert self.store.writes is not None
        interrupts: list[Any] = []
        for row in databases.rows(
            self.db, self.store.writes, "task_id, channel, type, value",
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_id, idx",
            (thread, namespace, checkpoint_id), key="task_id", bounded=_KEYS,
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                self.source.warn(f"thread {thread}: {row.reason}", record_type="pending write")
                continue
            task, channel, kind, blob = row
            if channel not in ("__interrupt__", "__error__"):
                self.source.ignored("pending write")
                continue
            try:
                value = decoded(kind, blob)
            except DamagedCheckpoint as exc:
                self.source.warn(f"thread {thread}: task {task}'s {channel} write is not read: "
                                 f"{exc}", record_type=channel)  # fmt: skip
                continue
            if channel == "__error__":
                self.source.warn(f"thread {thread}: task {task} failed: {value}",
                                 record_type="__error__")  # fmt: skip
            else:
                interrupts += value if isinstance(value, list) else [value]
        return interrupts

    def _time(self, where: str, checkpoint_id: str, checkpoint: Any) -> str | None:
        """A checkpoint's time (``ts``, ISO 8601), when it has one; one that is no time is
        left out with a warning naming the checkpoint, which is still read (the one rule,
        ``common.warned_timestamp``)."""
        when = checkpoint.get("ts") if isinstance(checkpoint, Mapping) else None
        return warned_timestamp(when, checked_timestamp,
                                partial(self.source.warn, record_type="checkpoint"),
                                f"{where}: checkpoint {checkpoint_id}", name="ts")  # fmt: skip

    @staticmethod
    def _describe(
        transcript: Transcript,
        thread: str,
        checkpoint_id: str,
        when: str | None,
        metadata: Mapping[str, Any],
    ) -> None:
        said = transcript.metadata
        said["session_id"] = thread
        said["checkpoint_id"] = checkpoint_id
        for key, name in (("step", "step"), ("source", "checkpoint_source"),
                          ("lc_agent_name", "agent")):  # fmt: skip
            if isinstance(metadata.get(key), (str, int)):
                said[name] = metadata[key]
        if when is not None:
            said["updated_at"] = when


#: The roles ``convert_to_messages`` knows, as the message types they make.
_ROLE_TYPES = {"user": "human", "human": "human", "assistant": "ai", "ai": "ai",
               "system": "system", "developer": "system", "tool": "tool",
               "function": "function"}  # fmt: skip


def _as_message(value: Any) -> Any:
    """A message as ``add_messages`` takes it (``convert_to_messages``) in the saved form the
    LangChain reader reads: a string is a human message, a ``(role, content)`` pair (a list,
    as msgpack keeps a tuple; a graph's input is often one) or a ``{"role", "content"}`` dict
    is the message of its role; anything else as it is.

    >>> _as_message(["user", "hi"])
    {'type': 'human', 'data': {'content': 'hi'}}
    """
    fields: dict[str, Any]
    if isinstance(value, str):
        role, fields = "human", {"content": value}
    elif (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
          and value[0] in _ROLE_TYPES):  # fmt: skip
        role, fields = value[0], {"content": value[1]}
    elif (
        isinstance(value, dict)
        and "role" in value
        and "content" in value
        and not ("type" in value or "lc" in value)
    ):
        role, fields = value["role"], {k: v for k, v in value.items() if k != "role"}
    else:
        return value
    kind = _ROLE_TYPES.get(role) if isinstance(role, str) else None
    return {"type": kind, "data": fields} if kind is not None else value


def _add_messages(messages: list[Any], update: Any) -> list[Any]:
    """``langgraph.graph.message.add_messages`` on saved messages: ``update`` (a message or
    a list, each as :func:`_as_message` reads it) replaces the messages of its ids, appends the
    others, and its ``RemoveMessage``\\s delete theirs; ``RemoveMessage(REMOVE_ALL_MESSAGES)``
    first drops everything before.

    >>> m = lambda i, t="human": {"type": t, "data": {"id": i, "content": i}}
    >>> [x["data"]["id"] for x in _add_messages([m("a"), m("b")], [m("c"), m("a", "remove")])]
    ['b', 'c']
    """
    updates = [_as_message(u) for u in (update if isinstance(update, list) else [update])]
    if updates and langchain._id_of(updates[0]) == langchain._REMOVE_ALL:
        messages, updates = [], updates[1:]
    out = list(messages)
    at = {i: n for n, m in enumerate(out) if (i := langchain._id_of(m)) is not None}
    removed: set[int] = set()
    for message in updates:
        own = langchain._id_of(message)
        found = langchain.message_of(message)
        if found is not None and found[0] == "remove":
            if own is not None and own in at:
                removed.add(at[own])
        elif own is not None and own in at:
            out[at[own]] = message
            removed.discard(at[own])
        else:
            if own is not None:
                at[own] = len(out)
            out.append(message)
    return [m for n, m in enumerate(out) if n not in removed]


def _ids(messages: Any) -> set[str]:
    """The ids of a messages channel's messages (those that have one)."""
    found = (langchain._id_of(m) for m in messages) if isinstance(messages, list) else ()
    return {i for i in found if i is not None}


#: What a ``RemoveMessage`` write holds, msgpack or JSON: its class's name.
_REMOVE_MARK = b"RemoveMessage"


def _opened(path: Path) -> tuple[sqlite3.Connection, _Store]:
    db = databases.opened(path, NAME)
    try:
        store = _store(db)
    except sqlite3.Error as exc:
        db.close()
        raise databases.unreadable(path, NAME, exc) from None
    if store is None:
        db.close()
        raise TranscriptFormatError(str(path), [NAME], None, "no LangGraph checkpoints table")
    return db, store


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The thread ``sample`` names (by its id) of the checkpointer database at ``path``; with
    none, its only thread."""
    if epoch is not None:
        raise ValueError(f"{path} is a LangGraph checkpointer database: its threads have no epochs")
    source = Source(str(path), iter(()), path=path)
    transcript = Transcript(metadata={})
    db, store = _opened(path)
    with contextlib.closing(db):
        try:
            database = _Database(db, store, source)
            if sample is None:
                threads = [thread for thread, _ in database.threads()]
                if len(threads) != 1:
                    raise unselected(path, threads, None, "LangGraph thread", "<thread id>")
                sample = threads[0]
            thread = database.read(str(sample), transcript)
            if thread is None:
                threads = [t for t, _ in database.threads()]
                raise unselected(path, threads, sample, "LangGraph thread", "<thread id>")
            # The messages as a graph result, read by the LangChain reader's rules, its
            # warnings and accounting those of this load.
            result = from_json_value(thread.state, str(path))
            result.warnings, result.accounting = source.warnings, source.accounting
            read = langchain.read(result)
            thread.span(transcript.metadata)
            database.nest(str(sample), read, thread.state["messages"])
        except sqlite3.Error as exc:
            raise databases.unreadable(path, NAME, exc) from None
    read.metadata.update(transcript.metadata)
    read.metadata["source_format"] = NAME
    return source.hand_over(read)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The database at ``source.path`` (``load(path, format="langgraph-checkpoints")`` of an
    open file)."""
    return databases.read_at_path(
        source, NAME, "LangGraph's checkpointer", read_path, sample=sample, epoch=epoch
    )


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The threads (id, title) of the checkpointer database at ``path``, oldest first."""
    db, store = _opened(path)
    with contextlib.closing(db):
        yield from _Database(db, store, Source(str(path), iter(()))).threads()
