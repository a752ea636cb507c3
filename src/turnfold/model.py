"""The transcript model (spec L-1): plain dataclasses, no display logic.

A :class:`Transcript` is an ordered list of entries. Every entry has a stable ``id`` that never
changes once assigned, so views can key their fold state on it while more entries arrive.
Values a source does not record stay ``None`` (spec L-3): a missing duration is never ``0``.

>>> t = Transcript()
>>> t.append(UserMessage(text="Fix the failing test"))
UserMessage(id='e0', timestamp=None, meta={}, text='Fix the failing test', command=None, images=[])
>>> t.append(ToolCall(call_id="c1", name="Read", description="a.ts", status="success")).id
'e1'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar, get_args

ToolStatus: TypeAlias = Literal[
    "pending", "executing", "confirming", "success", "error", "cancelled", "unknown"
]
TOOL_STATUSES: tuple[ToolStatus, ...] = get_args(ToolStatus)
#: A batch is active while any of its tools is in one of these states (spec F-5).
ACTIVE_STATUSES: frozenset[str] = frozenset({"pending", "executing", "confirming"})
#: A tool in one of these states failed: it ran and failed, or it was cancelled (denied,
#: interrupted) before it finished. One definition for the folds that stay open on a failure
#: (P-8), the session header (U-3) and the corpus's ``failed_tools`` (C-2).
FAILED_STATUSES: frozenset[str] = frozenset({"error", "cancelled"})

_T = TypeVar("_T")


#: Field defaults a maker (:func:`maker`) writes into its code as they are.
_LITERALS = (type(None), bool, int, str)


def maker(cls: type[_T], *names: str) -> Callable[..., _T]:
    """A maker of ``cls`` (a dataclass of this module) from the values of the fields
    ``names``, passed by position in that order; every other field gets its default, as
    ``cls(...)`` gives it. ``maker(ToolResult, "text", "kind")(t, k)`` is
    ``ToolResult(text=t, kind=k)``: the same fields, set in the same order, at a third of the
    cost: calling a class goes through ``type.__call__``, which (CPython 3.11) packs the
    keywords into a dict for ``__init__`` to unpack again, and ``__init__`` looks each default
    up. Made once per use, for the entries a large load makes one of per call, result and
    response (``new_call``, LangChain's calls, ``text_result``, ``counted_usage``; issue 22).

    >>> make = maker(ToolResult, "text", "kind")
    >>> make("ok", "text") == ToolResult(text="ok", kind="text")
    True
    """
    every = fields(cls)  # type: ignore[arg-type]
    known = {f.name for f in every}
    if not known.issuperset(names) or len(set(names)) != len(names):
        raise TypeError(f"{cls.__name__} has not each of the fields {names}")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__ a maker would skip")
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = ["    self = _new(_cls)"]
    for f in every:
        if f.name in names:
            value = f.name
        elif f.default_factory is not MISSING:
            value = f"_factory_{f.name}()"
            namespace[f"_factory_{f.name}"] = f.default_factory
        elif f.default is MISSING:
            raise TypeError(f"{cls.__name__}.{f.name} has no default: name it")
        elif type(f.default) in _LITERALS:
            value = repr(f.default)
        else:
            value = f"_default_{f.name}"
            namespace[f"_default_{f.name}"] = f.default
        body.append(f"    self.{f.name} = {value}")
    code = "\n".join([f"def make({', '.join(names)}{', /' if names else ''}):", *body])
    exec(code + "\n    return self\n", namespace)  # as dataclasses makes __init__
    make: Callable[..., _T] = namespace["make"]
    make.__qualname__ = f"maker({cls.__name__})"
    return make


ThinkingForm: TypeAlias = Literal["text", "summary", "redacted", "encrypted"]
ResultKind: TypeAlias = Literal[
    "text", "ansi", "markdown", "json", "diff", "plan", "todo", "subagent"
]
MemoryOperation: TypeAlias = Literal["read", "write"]
PendingKind: TypeAlias = Literal["permission", "question", "plan", "goal"]


@dataclass(kw_only=True)
class Entry:
    """Fields every entry has. ``meta`` keeps source details turnfold does not model."""

    kind: ClassVar[str] = "entry"
    id: str = ""
    timestamp: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class UserMessage(Entry):
    """What the user asked. ``command`` holds a slash command name when the message was one;
    ``images`` are the images the user pasted into it."""

    kind: ClassVar[str] = "user"
    text: str = ""
    command: str | None = None
    images: list[ImageData] = field(default_factory=list)


@dataclass(kw_only=True)
class Usage:
    """Token usage of one model response, as recorded by the source.

    ``response_id`` is the source's id of that response, when it has one: entries that carry
    the same response's usage count it once (spec U-1, :mod:`turnfold.usage`).
    ``cache_write_1h_tokens`` is the part of ``cache_write_tokens`` written to a cache kept for
    an hour (Anthropic's ``ephemeral_1h_input_tokens``), which costs more than the others; None
    when none was, or the source does not say.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_write_1h_tokens: int | None = None
    reasoning_tokens: int | None = None
    response_id: str | None = None


@dataclass(kw_only=True)
class AssistantText(Entry):
    """Text the model wrote: a progress note or, if nothing follows it, the turn's answer.
    ``images`` are the images the model returned with it (a Gemini model's, say)."""

    kind: ClassVar[str] = "assistant"
    text: str = ""
    model: str | None = None
    usage: Usage | None = None
    images: list[ImageData] = field(default_factory=list)


@dataclass(kw_only=True)
class Thinking(Entry):
    """The model's reasoning. ``form`` says what the source kept of it.

    ``text`` is the full reasoning, ``summary`` a provider-written summary, ``redacted`` and
    ``encrypted`` carry no readable text (``data`` keeps the opaque payload verbatim).
    """

    kind: ClassVar[str] = "thinking"
    text: str = ""
    form: ThinkingForm = "text"
    data: str | None = None
    streaming: bool = False
    #: The usage of a response that wrote no text (only reasoning and calls) sits on its first
    #: entry, so that no response's tokens are lost (spec U-1).
    usage: Usage | None = None


@dataclass(kw_only=True)
class ImageData:
    """An inline image (from a tool result, or pasted into a prompt), base64-encoded."""

    media_type: str
    data: str


@dataclass(kw_only=True)
class ToolResult:
    """What a tool returned. ``kind`` drives folding (spec F-12): only text and ANSI fold."""

    text: str | None = None
    kind: ResultKind = "text"
    images: list[ImageData] = field(default_factory=list)
    structured: Any = None
    #: Set when the reader wrote ``text`` itself (:class:`Wording`): an approver's decision,
    #: a denial, a call that never ran.
    wording: Wording | None = None


@dataclass(kw_only=True)
class SubAgent:
    """A delegated agent run: its child transcript and the stats its parent line shows (F-7)."""

    name: str | None = None
    task: str | None = None
    transcript: Transcript | None = None
    agent_id: str | None = None
    tool_count: int | None = None
    subagent_count: int | None = None
    duration_ms: float | None = None
    output_tokens: int | None = None
    #: The agent's tokens as the source records them for it where no transcript of its own
    #: counts them (an agent used as a tool runs out of sight) or where its transcript's
    #: responses do not record them all (the Claude Agent SDK streams a placeholder output
    #: count): they win over its transcript's own responses (spec U-1). None: not recorded.
    usage: Usage | None = None
    reason: str | None = None
    #: The source says the agent ran, but holds none of its steps (no sub-agent file, no
    #: progress records): the view says so instead of a tool count that opens onto nothing.
    steps_missing: bool = False
    #: Whether it is an agent's run of its own, which C-2 counts. Not where it only holds what
    #: its call ran: the agents an OpenHands ``delegate`` or a LangChain tool ran (one call
    #: each), the commands a Codex code-mode cell's script ran. Only the runs it holds count.
    is_run: bool = True


@dataclass(kw_only=True)
class ToolCall(Entry):
    """One tool call and its outcome.

    ``call_id`` is the source's own id, kept verbatim. ``batch_id`` ties together the calls one
    model response issued (a *batch*, spec §3); ``None`` means the call forms a batch of its own.
    ``memory`` marks reads and writes of the agent's memory (spec F-11). ``user_initiated`` marks a
    command the user ran directly (spec F-14).
    """

    kind: ClassVar[str] = "tool_call"
    call_id: str = ""
    name: str = ""
    args: Any = None
    description: str | None = None
    status: ToolStatus = "pending"
    result: ToolResult | None = None
    batch_id: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    memory: MemoryOperation | None = None
    user_initiated: bool = False
    subagent: SubAgent | None = None
    usage: Usage | None = None  # as Thinking.usage

    @property
    def recorded_duration_ms(self) -> float | None:
        """The duration the source recorded, else the span between its timestamps, else None."""
        if self.duration_ms is not None:
            return self.duration_ms if self.duration_ms >= 0 else None  # nonsense is not recorded
        return span_ms(self.started_at, self.ended_at)


@dataclass(kw_only=True)
class ToolUseSummary(Entry):
    """A fast-model label for a finished batch (spec S-1), attached by the call ids it covers.

    ``entry_ids`` are the entry ids of those calls, where the label's writer knew them: a
    source's call ids need not be unique in a transcript (Inspect's retried attempts repeat
    theirs), its entry ids are. Empty in a label written before they were kept; such a label
    attaches by its call ids and its place (:class:`turnfold.batches.LabelIndex`).
    """

    kind: ClassVar[str] = "tool_use_summary"
    label: str = ""
    call_ids: list[str] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Wording:
    """Text a reader wrote itself rather than found in the source, as a message of turnfold's
    catalogs (:mod:`turnfold.i18n`), so a view in another locale can say it in its language.
    The entry's own text keeps the English: it is the data, what every dump, search and old
    reading holds. ``params`` are the source's values, inserted as they are, never translated.

    >>> Wording(key="reader.handed_off", params={"target": "billing"})
    Wording(key='reader.handed_off', params={'target': 'billing'})
    """

    key: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class SystemNotice(Entry):
    """A message from the agent runtime rather than the model. ``wording`` is set when the
    reader wrote ``text`` itself (:class:`Wording`)."""

    kind: ClassVar[str] = "system"
    text: str = ""
    level: Literal["info", "warning", "error"] = "info"
    subtype: str | None = None
    wording: Wording | None = None


@dataclass(kw_only=True)
class CompactionBoundary(Entry):
    """The context was compacted here; turns never merge across it (spec P-1)."""

    kind: ClassVar[str] = "compaction"
    summary: str | None = None
    trigger: str | None = None
    pre_tokens: int | None = None


@dataclass(kw_only=True)
class AbortMarker(Entry):
    """The user (or the runtime) stopped the turn; its header reads *stopped* (spec P-7)."""

    kind: ClassVar[str] = "abort"
    reason: str | None = None
    #: Set when the reader wrote ``reason`` itself (:class:`Wording`).
    wording: Wording | None = None


@dataclass(kw_only=True)
class AssistantError(Entry):
    """The turn failed: an API error, a crash. Rendered outside the fold (spec P-3)."""

    kind: ClassVar[str] = "error"
    message: str = ""
    #: The usage of the response that failed, when it wrote nothing else to carry it (a
    #: refusal with no text, a filtered or failed response): the prompt was still billed.
    usage: Usage | None = None
    #: Set when the reader wrote ``message`` itself (:class:`Wording`).
    wording: Wording | None = None


@dataclass(kw_only=True)
class PendingAction(Entry):
    """A decision waiting on the user: a permission, a question, a plan or a goal (spec P-3)."""

    kind: ClassVar[str] = "pending_action"
    action: PendingKind = "permission"
    text: str = ""
    call_id: str | None = None
    options: list[str] = field(default_factory=list)


ENTRY_TYPES: dict[str, type[Entry]] = {
    cls.kind: cls
    for cls in (
        UserMessage,
        AssistantText,
        Thinking,
        ToolCall,
        ToolUseSummary,
        SystemNotice,
        CompactionBoundary,
        AbortMarker,
        AssistantError,
        PendingAction,
    )
}


@dataclass(kw_only=True)
class LoadWarning:
    """Something a loader skipped or could not read (spec L-4), and where: the file, the line
    and the record's own id (``uuid``, ``id``…) when it has one (issue 21.15).

    >>> str(LoadWarning(reason="unknown type", line=3, source="s.jsonl", record="a1b2"))
    's.jsonl:3 (a1b2): unknown type'
    """

    reason: str
    line: int | None = None
    source: str | None = None
    record: str | None = None

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.source, self.line) if p is not None)
        if self.record:
            where = f"{where} ({self.record})" if where else f"({self.record})"
        # The record's id, like everything it holds, is the transcript's (spec X-1), and this
        # text goes straight to a terminal (``turnfold show`` names the first problem on
        # stderr): an escape sequence in it must be shown, not obeyed.
        return printable(f"{where}: {self.reason}" if where else self.reason)


def printable(text: str) -> str:
    r"""``text`` with every character a terminal would act on or that reorders the line
    (controls, escapes, bidi overrides) written as its Python escape, as ``repr`` would.

    >>> printable("a1\x1b]52;c;ZXZpbA==\x07 \u202eb 日本")
    'a1\\x1b]52;c;ZXZpbA==\\x07 \\u202eb 日本'
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def printable_lines(text: str) -> str:
    r"""``text`` as :func:`printable` writes it, line by line: a message of several lines for a
    terminal (stderr, a warning) keeps its line breaks.

    >>> printable_lines("a\x1b[2J\nb")
    'a\\x1b[2J\nb'
    """
    return "\n".join(printable(line) for line in text.split("\n"))


#: What a load did with one source record (issue 11): turned it into entries, left it out on
#: purpose (documented per format in docs/formats.md), or skipped it with a warning.
Disposition: TypeAlias = Literal["mapped", "ignored", "warned"]
DISPOSITIONS: tuple[Disposition, ...] = get_args(Disposition)


@dataclass(kw_only=True)
class Accounting:
    """The fate of every record a load read (spec X-2: nothing lost, never silently).

    ``counts`` maps a record type (the format's own name for it, ``event_msg/token_count`` for
    a nested one) to how many records of it were mapped, ignored by design or warned about.
    ``unaccounted`` lists ``(line, record type)`` of records the loader passed over without a
    word: a loader bug, which ``load()`` reports as a warning and the tests forbid.

    >>> a = Accounting()
    >>> a.note("user", "mapped"); a.note("progress", "ignored"); a.note("user", "mapped")
    >>> a.counts
    {'user': {'mapped': 2}, 'progress': {'ignored': 1}}
    >>> a.total()
    3
    """

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    unaccounted: list[tuple[int | None, str]] = field(default_factory=list)

    def note(self, record_type: str, disposition: Disposition, count: int = 1) -> None:
        """Count ``count`` records of ``record_type`` as ``disposition``."""
        per_type = self.counts.get(record_type)
        if per_type is None:
            per_type = self.counts[record_type] = {}
        per_type[disposition] = per_type.get(disposition, 0) + count

    def total(self, disposition: Disposition | None = None) -> int:
        """How many records were accounted for (as ``disposition``, or in any way)."""
        return sum(
            n
            for per_type in self.counts.values()
            for kind, n in per_type.items()
            if disposition is None or kind == disposition
        )

    def types(self, disposition: Disposition) -> set[str]:
        """The record types of which at least one record was ``disposition``."""
        return {name for name, per_type in self.counts.items() if per_type.get(disposition)}

    def copy(self) -> Accounting:
        """A copy sharing nothing with this one: noting in either leaves the other as it was.

        >>> a = Accounting(); a.note("user", "mapped"); b = a.copy(); b.note("user", "mapped")
        >>> a.counts, b.counts
        ({'user': {'mapped': 1}}, {'user': {'mapped': 2}})
        """
        return Accounting(
            counts={kind: dict(per_type) for kind, per_type in self.counts.items()},
            unaccounted=list(self.unaccounted),
        )

    def merge(self, other: Accounting, prefix: str = "") -> None:
        """Add ``other``'s records (a sub-agent's file, say), their types under ``prefix``."""
        for name, per_type in other.counts.items():
            for disposition, count in per_type.items():
                self.note(prefix + name, disposition, count)  # type: ignore[arg-type]
        self.unaccounted.extend((line, prefix + name) for line, name in other.unaccounted)


@dataclass(frozen=True)
class TranscriptChange:
    """What an observer is told: an entry was appended, or some of its fields were updated."""

    action: Literal["append", "update"]
    entry: Entry
    #: The fields an update changed; empty for an append.
    fields: tuple[str, ...] = ()


Observer: TypeAlias = Callable[[TranscriptChange], None]


def checked_status(value: Any) -> ToolStatus:
    """``value`` when it is one of the seven tool statuses; a ``ValueError`` naming them else
    (the view has no name for another, and would fail on it only when it drew it)."""
    for status in TOOL_STATUSES:
        if value == status:
            return status
    raise ValueError(f"no tool status {value!r}; one of {', '.join(TOOL_STATUSES)}")


def _not_an_entry(value: Any) -> TypeError:
    return TypeError(
        f"a transcript holds entries (UserMessage, AssistantText, ToolCall…), not "
        f"{type(value).__name__}: turnfold.load() reads messages and records"
    )


class Transcript:
    """An ordered list of entries with stable ids, the metadata of its source and load warnings.

    Two transcripts are equal when their entries, metadata and warnings are equal, which is what
    makes ``load(t.dump()) == t`` a meaningful round-trip check.

    A transcript may grow while it is displayed (spec L-5): :meth:`append` and :meth:`update` are
    thread-safe and tell every observer registered with :meth:`observe` exactly what changed.
    """

    def __init__(
        self,
        entries: list[Entry] | None = None,
        *,
        metadata: dict[str, Any] | None = None,
        warnings: list[LoadWarning] | None = None,
    ) -> None:
        self.entries: list[Entry] = []
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.warnings: list[LoadWarning] = list(warnings or [])
        #: What the load that made this transcript did with each source record (None when it
        #: was not loaded from a source). Not content: equality and ``dump()`` leave it out.
        self.accounting: Accounting | None = None
        self._by_id: dict[str, Entry] = {}
        self._next = 0
        self._lock = threading.RLock()
        self._observers: list[Observer] = []
        self.extend(entries or ())  # a loader hands over all its entries here (issue 19)

    def append(self, entry: Entry) -> Entry:
        """Add ``entry`` at the end, giving it a fresh id if it has none, and return it.

        Ids are never reused or renumbered, so a view keyed on them survives any later append.
        """
        with self._lock:
            try:
                if not entry.id or entry.id in self._by_id:
                    entry.id = self._fresh_id(entry.id)
            except AttributeError:
                raise _not_an_entry(entry) from None
            self._by_id[entry.id] = entry
            self.entries.append(entry)
            if self._observers:
                self._notify(TranscriptChange("append", entry))
        return entry

    def extend(self, entries: Iterable[Entry]) -> None:
        """:meth:`append` each of ``entries`` in order, under one lock.

        A transcript being made has no observers yet: then the entries are added without a
        call per entry, which a large load would pay for each of them (issue 19, issue 22).
        """
        with self._lock:
            if self._observers:
                for entry in entries:
                    self.append(entry)
                return
            by_id, kept = self._by_id, self.entries
            value: Any = None
            try:  # no test per entry: a load hands over every one of its entries here
                for value in entries:
                    if not value.id or value.id in by_id:
                        value.id = self._fresh_id(value.id)
                    by_id[value.id] = value
                    kept.append(value)
            except AttributeError:
                if isinstance(value, Entry):
                    raise
                raise _not_an_entry(value) from None

    def append_unless(self, entry: Entry, condition: Callable[[], bool]) -> Entry | None:
        """:meth:`append` ``entry`` unless ``condition()`` holds; the entry, or None.

        ``condition`` is asked while the transcript is locked, just before the append, so no
        change from another thread (its observers run under the same lock) can land between the
        check and the append: a late result can be dropped exactly when what made it moot, an
        abort for instance, arrived first.
        """
        with self._lock:
            if condition():
                return None
            return self.append(entry)

    def update(self, entry: Entry | str, **changes: Any) -> Entry:
        """Change fields of an entry already in this transcript and tell the observers.

        ``entry`` is the entry or its id. Unknown field names raise ``AttributeError`` rather
        than silently adding attributes no renderer reads.
        """
        with self._lock:
            target = self._by_id.get(entry if isinstance(entry, str) else entry.id)
            if target is None or (not isinstance(entry, str) and target is not entry):
                raise KeyError(f"no entry {entry if isinstance(entry, str) else entry.id!r} here")
            names = _updatable_fields(type(target))
            if not names.issuperset(changes):  # one set test: updates are every load's work
                name = next(name for name in changes if name not in names)
                raise AttributeError(f"{type(target).__name__} has no field {name!r} to update")
            if "status" in changes and changes["status"] not in TOOL_STATUSES:
                checked_status(changes["status"])  # raises, naming the statuses
            for name, value in changes.items():
                setattr(target, name, value)
            if self._observers:
                self._notify(TranscriptChange("update", target, tuple(changes)))
        return target

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer`` after every append or update; returns a function that stops it.

        Observers run on the thread that made the change, in order, while the transcript is
        locked, so they see changes one at a time; they should be quick (a widget queues work).
        """
        with self._lock:
            self._observers.append(observer)

        def stop() -> None:
            with self._lock:
                if observer in self._observers:
                    self._observers.remove(observer)

        return stop

    def _notify(self, change: TranscriptChange) -> None:
        for observer in list(self._observers):
            observer(change)

    def _fresh_id(self, wanted: str) -> str:
        if wanted:
            suffix = 2
            while f"{wanted}~{suffix}" in self._by_id:
                suffix += 1
            return f"{wanted}~{suffix}"
        while (fresh := f"e{self._next}") in self._by_id:
            self._next += 1
        self._next += 1  # taken now: the next search starts after it
        return fresh

    def get(self, entry_id: str) -> Entry | None:
        """The entry with ``entry_id``, or None."""
        return self._by_id.get(entry_id)

    def tool_calls(self, *, nested: bool = False) -> list[ToolCall]:
        """Every tool call of this transcript, in order; with ``nested``, each followed by the
        calls of its sub-agent's transcript (depth first, handoffs and agents as tools too)."""
        if not nested:
            return [e for e in self.entries if isinstance(e, ToolCall)]
        return [call for call, _ in walk_calls(self.entries, {id(self)})]

    def __getstate__(self) -> dict[str, Any]:
        # Copies and pickles carry the content, not the lock or the observers of this instance.
        state = self.__dict__.copy()
        del state["_lock"], state["_observers"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._observers = []

    def dump(self, *, layout: Literal["jsonl", "json"] = "jsonl") -> str:
        """Serialize to turnfold's own lossless format; ``turnfold.load`` reads it back."""
        from turnfold.formats.native import dumps

        return dumps(self, layout=layout)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Transcript):
            return NotImplemented
        return (self.entries, self.metadata, self.warnings) == (
            other.entries,
            other.metadata,
            other.warnings,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        entries, calls = len(self.entries), len(self.tool_calls())
        return (f"<Transcript: {entries} {'entry' if entries == 1 else 'entries'}, "
                f"{calls} tool {'call' if calls == 1 else 'calls'}>")  # fmt: skip

    def _display_(self) -> Any:
        """marimo's display protocol: a transcript left as a cell's value shows as the widget
        there too (N-2), not as its repr; Jupyter's is registered by ``register_display``."""
        from turnfold.widget import TranscriptWidget

        return TranscriptWidget(self)


_UPDATABLE: dict[type[Entry], frozenset[str]] = {}


def _updatable_fields(cls: type[Entry]) -> frozenset[str]:
    """The fields :meth:`Transcript.update` may set (all but ``id``), cached per class because
    ``dataclasses.fields()`` is slow enough to show in a large load."""
    names = _UPDATABLE.get(cls)
    if names is None:
        names = _UPDATABLE[cls] = frozenset(f.name for f in fields(cls) if f.name != "id")
    return names


def utc(stamp: Any) -> datetime | None:
    """An ISO-8601 timestamp as an aware UTC datetime (a naive one is taken as UTC); None when
    it is missing or unreadable."""
    if not isinstance(stamp, str) or not stamp:
        return None
    return _utc(stamp)


@lru_cache(maxsize=4096)
def _utc(stamp: str) -> datetime | None:
    # Cached: a call's start is its entry's timestamp, its span is read by its row and by its
    # turn's header, and a corpus row reads a turn's stamps for the turn and again for the
    # session, so most stamps are parsed more than once.
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def span_ms(start: Any, end: Any) -> float | None:
    """Milliseconds between two ISO-8601 timestamps (a naive one taken as UTC, as everywhere);
    None if either is missing or unreadable, or the end comes before the start."""
    began, ended = utc(start), utc(end)
    if began is None or ended is None:
        return None
    span = (ended - began).total_seconds() * 1000
    return span if span >= 0 else None


def walk_calls(entries: Iterable[Entry], on_path: set[int]) -> Iterator[tuple[ToolCall, bool]]:
    """Every tool call among ``entries``, each followed by the calls of its sub-agent's
    transcript (depth first), with whether the walk went into that transcript: not when it is
    one of ``on_path``, the transcripts already on the way down (the one ``entries`` are of,
    when they are a transcript's; one that runs itself, or one it is nested in). Its calls are
    listed where it first nests, not forever.

    Walked with a stack, not by recursion: sub-agents may nest thousands deep (a hostile file,
    agents built through this model) and Python's stack holds some 1,000 frames. The one walk
    of :meth:`Transcript.tool_calls` (``nested``) and :func:`turnfold.usage.subagent_tokens`.
    """
    todo: list[tuple[Transcript | None, Iterator[Entry]]] = [(None, iter(entries))]
    while todo:
        transcript, pending = todo[-1]
        entry = next(pending, None)
        if entry is None:
            todo.pop()
            on_path.discard(id(transcript))
            continue
        if not isinstance(entry, ToolCall):
            continue
        child = entry.subagent.transcript if entry.subagent is not None else None
        entered = child is not None and id(child) not in on_path
        yield entry, entered
        if child is not None and entered:
            on_path.add(id(child))
            todo.append((child, iter(child.entries)))
