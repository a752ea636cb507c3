"""Inspect AI eval logs (spec H-1, H-6): one transcript per sample and epoch.

Inputs: an ``.eval`` log (a zip: ``header.json`` with the eval spec, one
``samples/<id>_epoch_<n>.json`` member per sample and epoch, ``summaries.json``,
``reductions.json`` and ``_journal/`` while it runs), a ``.json`` log (one document ``{version,
status, eval, plan, results, stats, samples: [...], reductions}``), or such a log or one sample
already parsed (a dict, an ``EvalLog`` or ``EvalSample``). The files are read directly, never
through ``inspect_ai``; one sample at a time: the samples of an ``.eval`` are listed from its
zip directory, and only the chosen member is decompressed (in bounded memory,
:mod:`~turnfold.formats.harnesses.archive`); a ``.json`` log is streamed with ``ijson`` and only
the chosen sample is built (the sample itself is held whole; a log with a bare ``NaN`` or
``Infinity``, which Python's ``json`` writes for a score of NaN, is read again with them made
strings, :class:`_NonFiniteStream`).

A log of one sample loads with ``turnfold.load(path)``; with several, ``load`` names them and
asks for ``sample=ID, epoch=N``. :func:`samples` lists a log's ``(id, epoch)`` pairs cheaply (the
corpus keys its items ``path#id/epoch``).

Mapping of one sample. Its ``events`` are preferred when present (they carry timing and nesting
that ``messages`` lose; logs before 0.3.42 keep them, and the content they refer to, under
``transcript``):

- ``model`` events: the messages of their input not seen before (by id; a message without one,
  as all were before 0.3.73, by its content: a copy is new past as many as were shown) as
  prompts (:class:`UserMessage`), the system message to ``metadata["system"]``, a tool result
  that settles a call no ``tool`` event settled; earlier assistant messages are history. Then
  the output, at the time the call completed: reasoning parts as :class:`Thinking`
  (``redacted`` ones with their opaque payload), text as :class:`AssistantText`, each tool
  call as a :class:`ToolCall` (one batch per message), the call's usage on its last text (else
  its first reasoning or call, with the model's name), the model the message names (else the
  output's, else the event's); a model error is an :class:`AssistantError`, unless another
  model call follows in its scope (a retried attempt: Inspect records each; or a failure the
  agent caught): then a warning notice, since the run went on. A call of another model than
  the conversation's (a model role's, ``ModelEvent.role``, or a model asked by name) whose
  answer the conversation never took in is a side call, never a prompt: a call named for the
  model (``critic model``), its prompt its description, its answer (or error) its result, what
  it was given and answered its own transcript under it (:func:`_side_calls`). Inputs pooled in
  ``events_data`` (``input_refs``) and ``attachment://`` (older ``tc://``) references are
  resolved;
- images the model returned are its text's images (shown after it); other media (audio, video,
  documents, a remote image) and provider data parts are named in the text in their place
  (``[audio]``, ``[model fallback: A → B]``, ``[data]``);
- a provider's native compaction (a ``compaction_metadata`` data part: OpenAI's in a user
  message, Anthropic's in an assistant message) is a :class:`CompactionBoundary`, never a
  prompt: it joins the boundary of the ``compaction`` event before it, and the later inputs
  that repeat it add nothing;
- Inspect's own summary compaction (``CompactionSummary``) alike: the user message it puts in
  place of the conversation (``metadata`` ``summary``) is the boundary's summary, never a
  prompt; the model call that wrote the summary is set apart (not a turn), its answer the
  boundary's summary until that message comes;
- ``tool`` events settle the call with their id: ``error`` → ``error`` (a ``cancelled`` error →
  ``cancelled``; a call an approver terminated has none, and its ``approval`` event's reason is
  the error; nor has a call whose exception ended the run, and the error of the sample or of the
  failed attempt, message and traceback, is), else ``success`` (Inspect records every tool
  failure as an error, so a result without one succeeded); result text and images; start and
  completion times. A ``pending`` event never completed (a limit cut the call): it leaves the
  call open. The events of an agent the tool ran (``agent_span_id``: ``as_tool`` agents), of its
  ``tool`` span (a handoff's is inside a ``handoff`` span), or nested in the event (older logs)
  become the call's sub-agent transcript, when they show anything (a span of sandbox commands
  and store changes alone leaves a plain call). What a handoff returned to the agent that handed
  off (the next input's user messages after its result) is never a prompt: the sub-agent's own
  messages are shown nested already; Inspect's word that it completed its work (or exceeded a
  limit) is a :class:`SystemNotice` ending the sub-agent's transcript;
- ``subtask`` events are calls of their own (name, input, result), the events of their span
  their sub-agent transcript;
- ``sample_limit`` → :class:`AbortMarker` (the limit stopped the run); ``error`` →
  :class:`AssistantError` (:class:`AbortMarker` when it is the sample's cancellation);
  ``interrupt`` → :class:`AbortMarker`, in the scope of the call it interrupted; each of the
  three cancels the calls of its scope that never ran (no ``tool`` event settled them);
  ``compaction`` → :class:`CompactionBoundary`; ``info`` → :class:`SystemNotice`;
  ``sample_init`` gives the opening messages; the events of the scorers (their spans, or
  before spans their ``step`` of type ``scorer``) are the scoring's, read after the run: a
  model-graded scorer's model calls are side calls named for the scorer (``model_graded_qa``,
  ``meta["scorer"]``), last, so the tokens they spent are counted as Inspect's ``model_usage``
  counts them; the rest is left out (scores go to metadata). Those calls are the scoring's,
  not the agent's (``meta["scoring"]``): the headers, the corpus row's ``tool_calls`` and
  ``failed_tools`` and its tool-call table count none of them, and they add no turn. Their
  tokens are counted, in the session's and the last turn's: U-1 counts every response of the
  sample once, Inspect's ``model_usage`` holds them, and the cost it records (U-2: the
  recorded cost wins) is theirs too, so tokens without them would not be what was paid for.

Without events, ``messages`` are read alike (system, user, assistant; a ``tool`` message
settles its call: ``error`` → ``error``, else ``success``).

A parsed sample is told from a bare chat request by the keys of Inspect's ``EvalSample``
(``id``, ``epoch``, ``input``, ``target`` with its ``messages`` and its ``events``, ``scores``
or ``model_usage``): its messages alone may read as plain chat messages, but only this reader
keeps its events, scores and metadata.

Metadata (H-6): ``task``, ``model``, ``agent`` (the eval's solver, when it names one),
``sample``, ``epoch``, ``target``, ``scores`` (every scorer: value, answer, explanation),
``answer`` (the first scorer's), ``score`` (one scorer: its value as a number; several: a mapping
scorer → value; letters as Inspect counts them: C 1, I 0, P 0.5, N 0; a multi-metric scorer's
mapping, ``Score(value={"a": 1, "b": 0})``, its metrics' one number when they all agree, else
the mapping of its metrics counted alike, which no one number stands for), ``outcome``,
``limit``, ``error`` (or ``cancelled``: an error that is the sample's cancellation, which
Inspect counts as none), ``error_retries`` (the errors of the attempts retried before this one,
each also a warning notice opening the transcript), ``started_at``, ``completed_at``,
``total_time``, ``working_time``, ``duration_s`` (Inspect's own timing of the sample, which the
header and the corpus row show rather than the span of its stamps, with a warning where they
disagree: :func:`_duration`), ``model_usage``, ``role_usage`` and ``cost_usd`` when the usage
records a cost; ``failed_attempts_usage`` (the tokens of the failed attempts' responses the log
keeps, which Inspect's ``model_usage`` leaves out); ``model_fallbacks``; ``invalidation`` (who
marked the sample invalid after it ran, why, when); ``eval_status`` (``started`` for an ``.eval``
still being written). ``outcome`` (one of H-6's four, an invalidated sample's as scored: the
invalidation is its own key and notice): ``"error"`` when the sample errored; else
``"incomplete"`` when a limit stopped it or it was cancelled; else from the scores: ``C``
passes, ``I`` and ``N`` (no answer) fail, a number passes at 1 (or ``True``) and fails at 0
(or ``False``); ``P`` (partial) and other numbers say nothing. Any failing scorer fails the
sample, all passing ones pass it; no scorer that says anything leaves ``outcome`` absent. A
multi-metric scorer's metrics say it as several scorers do: ``{"a": 1, "b": 0}`` fails.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, overload

from turnfold import codec
from turnfold.formats.anthropic_blocks import with_one_hour_writes
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    as_int,
    as_list,
    checked_timestamp,
    describe_args,
    stringify,
    text_and_images,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import SampleSelectionError as SampleSelectionError
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.harnesses import archive
from turnfold.formats.harnesses.inspect_bridged import (
    agent_of_solver,
    agent_of_system_prompt,
    read_user_message,
)
from turnfold.formats.harnesses.inspect_clock import (
    STAMPS,
    ClockChanges,
    clock_changes,
    restate,
    span_on_first_clock_ms,
)
from turnfold.formats.source import Source
from turnfold.formats.wording import failure, notice, stop, worded
from turnfold.formats.wrappers import sample as detection_sample
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
    Wording,
    utc,
)
from turnfold.tools import format_duration
from turnfold.usage import USAGE_KINDS, add_into, attach_usage, tokens_spent

NAME = "inspect"
#: ``turnfold.load(path, sample=ID, epoch=N)`` picks one of a log's samples.
HAS_SAMPLES = True

SampleId = str | int

RECORDS = Records(
    mapped={
        "header": "the eval: task, model and solver → metadata",
        "sample": "id, epoch, target, scores, limit, error (a cancellation: cancelled), "
        "times, model and role usage, model_fallbacks → metadata (H-6); the attempts retried "
        "before it (error_retries): the events kept of each, then its error as a warning "
        "notice; invalidation (who marked the sample invalid, why, when) → metadata and a "
        "warning notice",
        "event/model": "new input messages, then the output: reasoning, text with usage, calls; "
        "another model's call (a model role's) the conversation never took in: a side call "
        "with its prompt, answer and transcript",
        "event/tool": "settles its call: result, error status, times; an agent it ran nests "
        "(one still pending never completed: the limit, error or interrupt after it cancels it)",
        "event/subtask": "a call of its own; the events of its span are its sub-agent",
        "event/span_begin": "opens a span: agent, tool and subtask spans nest under their call",
        "event/span_end": "closes a span",
        "event/sample_init": "the sample's opening messages (its prompt)",
        "event/sample_limit": "AbortMarker: the limit that stopped the run",
        "event/error": "AssistantError: the error that ended the sample (AbortMarker: the "
        "sample was cancelled, when it is the cancellation's)",
        "event/interrupt": "AbortMarker: the run was interrupted (in the scope of the call "
        "it interrupted)",
        "event/compaction": "CompactionBoundary: the context was compacted (a summary "
        "compaction's summary joins it)",
        "event/info": "SystemNotice with the data the solver logged",
        "event/review": "a tool-result reviewer's decision to terminate the sample: a warning "
        "notice with its explanation",
        "event/sentinel": "a sentinel protocol's decision that changed the run (modify, reject, "
        "terminate), or a monitor that failed: a warning notice",
        "event/approval": "an approver's decision: its reason is the error of a call it "
        "terminated (the call's tool event says none); any other's result or error shows it",
        "message/system": 'the system message: metadata["system"]',
        "message/user": "a prompt (UserMessage); a native compaction, or the summary of "
        "Inspect's summary compaction (metadata.summary) → CompactionBoundary",
        "message/assistant": "reasoning, text, media named in the text, and tool calls, in order",
        "message/tool": "settles the call with its tool_call_id: error → error, else success",
        "scoring/model": "a scorer's model call (a model-graded scorer's grader): a side "
        "call named for the scorer, after the run, with its prompt, verdict and usage",
        "summarizing": "the model call that wrote a summary compaction's summary "
        "(CompactionSummary): set apart, not a turn; its answer is the boundary's summary "
        "until the summary message of the next input replaces it",
    },
    ignored={
        "messages": "the sample's final messages: its events hold the same, with timing",
        "scoring": "the scorers' other events (spans, steps, score events): the sample's "
        "scores go to metadata",
        "event/state": "diffs of the task state: the messages they add are model and tool events",
        "event/store": "diffs of the sample's store, not the conversation",
        "event/score": "a score: the sample's scores go to metadata",
        "event/score_edit": "a later edit of a score: the sample's scores hold the result",
        "event/logger": "Python log records of the run, not the conversation",
        "event/sandbox": "a tool's sandbox commands and file access: the tool call shows them",
        "event/input": "console input to a human-in-the-loop prompt",
        "event/step": "old step markers, superseded by spans",
        "event/anchor": "a marker for Inspect's viewer, no content",
        "event/branch": "a marker for Inspect's viewer, no content",
        "event/checkpoint": "a checkpoint for resuming the run, no content",
        "event/review:continue": "a reviewer's continue (or escalate to the next reviewer): "
        "the run went on as shown",
        "event/sentinel:report": "a monitor's observation (suspicion score), a protocol's "
        "proceed or escalate, or a report cancelled, bypassed or superseded: the run went on "
        "as shown",
        "timelines": "custom timelines: named views over the sample's own events (by uuid), "
        "which are shown in order; a notice names the views",
        "member/summaries": "one summary per sample: each sample's own record has it all",
        "member/reductions": "epoch reductions of the whole eval, not one sample's",
        "member/journal": "records written while the eval ran, superseded by the header",
        "injected context": "a bridged coding agent's context in a user message of its "
        "request (Codex's environment and instructions, Claude Code's system reminders) that "
        "came with no prompt, left out as the agent's own reader leaves it out",
    },
)

#: Event types whose record is only a marker of the conversation's structure or state.
_IGNORED_EVENTS = frozenset(
    t.removeprefix("event/") for t in RECORDS.ignored if t.startswith("event/")
)
_SCORING_SPANS = frozenset({"scorers", "scorer"})
#: The scope of the model calls that wrote a summary compaction's summary (:class:`_Events`).
_SUMMARIZING = "summarizing"
#: The strategy a ``compaction`` event names when the model was asked for a summary
#: (``CompactionSummary`` in ``inspect_ai/model/_compaction/summary.py``): ``compact_fn`` in
#: ``_compaction/_compaction.py`` logs its class name as ``metadata["strategy"]``, and as
#: ``strategy_applied`` when the strategy handed the work on (``CompactionAuto``).
_SUMMARY_STRATEGY = "CompactionSummary"
_SAMPLE_MEMBER = re.compile(r"samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json")
#: A member of a *chunked* sample (``inspect_ai/log/_recorders/chunked/format.py``; written by
#: ``convert_eval_logs_to_chunked`` since 0.3.28x): a shell (``sample.json``, the sample without
#: its messages, events and attachments; ``message_refs`` range-encode its final conversation),
#: its ``metadata.json``, and four sequences chunked by the index of their first item. Its
#: ``skeleton.json`` and ``events/{stats,uuids}.json`` are derived from the events.
_CHUNKED_MEMBER = re.compile(
    r"samples/(?P<id>.+)_epoch_(?P<epoch>\d+)/"
    r"(?:(?P<part>sample|metadata)\.json|(?P<sequence>messages|events|calls|attachments)/"
    r"(?P<start>\d+)\.json)"
)
_ATTACHMENT = "attachment://"
#: The content references of logs before 0.3.42, which Inspect reads as ``attachment://`` ones
#: (``resolve_attachment_fn`` in ``inspect_ai/log/_condense.py``: "previous flavor of content
#: reference").
_CONTENT = "tc://"
#: How Inspect counts letter grades (``value_to_float``).
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


# --- reading logs --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Listing:
    """A log's header, its samples as ``(id, epoch)``, and its bookkeeping members."""

    header: dict[str, Any]
    keys: list[tuple[SampleId, int]]
    bookkeeping: list[str]


@overload
def _string(value: Any, default: str = "") -> str: ...
@overload
def _string(value: Any, default: None) -> str | None: ...
def _string(value: Any, default: str | None = "") -> str | None:
    """``value`` when it is a string, else ``default`` (JSON of the wrong shape, L-4)."""
    return value if isinstance(value, str) else default


def _typed_id(text: str) -> SampleId:
    """A sample id from a member name: an integer when it reads back the same, else text."""
    return int(text) if text.isdigit() and str(int(text)) == text else text


def _json(data: bytes, name: str, member: str) -> Any:
    try:
        return codec.loads(data)
    except ValueError as exc:
        raise archive.ArchiveError(name, f"invalid JSON ({exc})", member) from None


@dataclass
class _ChunkedMembers:
    """The members of one chunked sample: its shell, its metadata, and each sequence's chunks
    as ``(start, member)``."""

    shell: Any = None
    metadata: Any = None
    sequences: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)


class _EvalLog:
    """An ``.eval`` zip: the header and directory at open, one sample member per read (a
    chunked sample's members together)."""

    def __init__(self, zipped: Any, name: str, limits: archive.ArchiveLimits) -> None:
        self._zip = zipped
        self._name = name
        self._limits = limits
        self._members: dict[tuple[str, int], Any] = {}
        self._chunked: dict[tuple[str, int], _ChunkedMembers] = {}
        self._order: list[tuple[SampleId, int]] = []
        bookkeeping: list[str] = []
        header_info = None
        for info in zipped.infolist():
            match = _SAMPLE_MEMBER.fullmatch(info.filename)
            chunk = None if match is not None else _CHUNKED_MEMBER.fullmatch(info.filename)
            if match is not None:
                key = (match["id"], int(match["epoch"]))
                self._members[key] = info
                self._order.append((_typed_id(key[0]), key[1]))
            elif chunk is not None:
                key = (chunk["id"], int(chunk["epoch"]))
                if key not in self._chunked:
                    self._chunked[key] = _ChunkedMembers()
                    self._order.append((_typed_id(key[0]), key[1]))
                members = self._chunked[key]
                if chunk["part"] == "sample":
                    members.shell = info
                elif chunk["part"] == "metadata":
                    members.metadata = info
                else:
                    members.sequences.setdefault(chunk["sequence"], []).append(
                        (int(chunk["start"]), info)
                    )
            elif info.filename == "header.json":
                header_info = info
            elif info.filename == "summaries.json":
                bookkeeping.append("member/summaries")
            elif info.filename == "reductions.json":
                bookkeeping.append("member/reductions")
            elif info.filename.startswith("_journal/") and "member/journal" not in bookkeeping:
                bookkeeping.append("member/journal")
        if header_info is None:  # a log still being written has only its journal
            header_info = next(
                (i for i in zipped.infolist() if i.filename == "_journal/start.json"), None
            )
        header: dict[str, Any] = {}
        if header_info is not None:
            value = _json(self._bytes(header_info, header=True), name, header_info.filename)
            header = value if isinstance(value, dict) else {}
        if header_info is not None and header_info.filename != "header.json":
            # What Inspect reads such a log as (``read_log`` of ``log/_recorders/eval.py``).
            header.setdefault("status", "started")
        self.listing = _Listing(header, self._order, bookkeeping)

    def _bytes(self, info: Any, *, header: bool = False) -> bytes:
        limit = self._limits.max_header_bytes if header else self._limits.max_member_bytes
        setting = "max_header_bytes" if header else "max_member_bytes"
        return archive.read_member(self._zip, info, name=self._name, limit=limit, setting=setting)

    def sample(self, key: tuple[SampleId, int]) -> Any:
        chunked = self._chunked.get((str(key[0]), key[1]))
        if chunked is not None:
            return self._chunked_sample(chunked)
        info = self._members[(str(key[0]), key[1])]
        return _json(self._bytes(info), self._name, info.filename)

    def _chunked_sample(self, members: _ChunkedMembers) -> Any:
        """A chunked sample put back in the shape of a whole one: its sequences joined, its
        final conversation taken from the messages its ``message_refs`` name, the messages and
        calls as the pool its events refer to (``events_data``), its attachments by index (its
        references are ``attachment://<index>``). All its members share one sample's limit."""
        if members.shell is None:
            prefix = next(info for chunks in members.sequences.values() for _, info in chunks)
            raise archive.ArchiveError(self._name, "a chunked sample without its sample.json",
                                       prefix.filename)  # fmt: skip
        budget = self._limits.max_member_bytes

        def read(info: Any) -> Any:
            nonlocal budget
            data = archive.read_member(
                self._zip, info, name=self._name, limit=budget, setting="max_member_bytes"
            )
            budget -= len(data)
            return _json(data, self._name, info.filename)

        shell = read(members.shell)
        if not isinstance(shell, dict):
            return shell
        joined: dict[str, list[Any]] = {}
        for sequence, chunks in members.sequences.items():
            items: list[Any] = []
            for start, info in sorted(chunks, key=lambda chunk: chunk[0]):
                if start != len(items):  # a chunk left out would shift every later index
                    raise archive.ArchiveError(
                        self._name, f"chunk starts at {start}, after {len(items)} items",
                        info.filename,
                    )  # fmt: skip
                chunk = read(info)
                if not isinstance(chunk, list):
                    raise archive.ArchiveError(self._name, "a chunk is not a list", info.filename)
                items.extend(chunk)
            joined[sequence] = items
        record = dict(shell)
        pool = joined.get("messages", [])
        refs = record.pop("message_refs", None)
        record["messages"] = [
            message
            for ref in (refs if isinstance(refs, list) else [])
            if isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref)
            for message in pool[ref[0] : ref[1]]
        ]
        record["events"] = joined.get("events", [])
        record["events_data"] = {"messages": pool, "calls": joined.get("calls", [])}
        record["attachments"] = {str(i): a for i, a in enumerate(joined.get("attachments", []))}
        if members.metadata is not None:
            record["metadata"] = read(members.metadata)
        return record

    def items(
        self, select: Callable[[tuple[SampleId, int]], bool]
    ) -> Iterator[tuple[tuple[SampleId, int], Mapping[str, Any] | None]]:
        for key in self._order:
            yield key, self.sample(key) if select(key) else None


_OPEN = frozenset({"start_map", "start_array"})
_CLOSE = frozenset({"end_map", "end_array"})


def _value(event: str, value: Any, events: Iterator[tuple[str, Any]]) -> Any:
    """The JSON value that starts with ``event`` (ijson basic events), built whole."""
    if event not in _OPEN:
        return value
    import ijson  # type: ignore[import-untyped]

    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for inner, inner_value in events:
        builder.event(inner, inner_value)
        if inner in _OPEN:
            depth += 1
        elif inner in _CLOSE:
            depth -= 1
            if depth == 0:
                break
    return builder.value


def _skip(event: str, events: Iterator[tuple[str, Any]]) -> None:
    """Pass over the JSON value that starts with ``event`` without building it."""
    if event not in _OPEN:
        return
    depth = 1
    for inner, _ in events:
        if inner in _OPEN:
            depth += 1
        elif inner in _CLOSE:
            depth -= 1
            if depth == 0:
                return


def _same(key: tuple[SampleId, int], wanted: tuple[SampleId, int]) -> bool:
    """Whether two sample keys are one: ids compare as text (``1`` is member ``1_epoch_1``)."""
    return str(key[0]) == str(wanted[0]) and key[1] == wanted[1]


#: How many bytes :class:`_NonFiniteStream` reads at a time (ijson's own buffer size).
_NON_FINITE_CHUNK = 64 * 1024
#: What a bare non-finite constant becomes in :class:`_NonFiniteStream`: a string no log
#: holds (it starts with a NUL), which :func:`_finite_back` turns back into the float.
_NON_FINITE_MARK = "\x00turnfold-non-finite:"
_NON_FINITE_VALUES = {
    f"{_NON_FINITE_MARK}{name}": float(name) for name in ("NaN", "Infinity", "-Infinity")
}
_OUTSIDE_STRINGS = re.compile(rb'"|NaN|-?Infinity')
_IN_STRING = re.compile(rb'[\\"]')
_NON_FINITE_TOKENS = (b"NaN", b"Infinity", b"-Infinity")


class _NonFiniteStream:
    """A JSON byte stream read with every bare ``NaN``, ``Infinity`` and ``-Infinity`` (outside
    strings) written as a string ijson reads, :data:`_NON_FINITE_MARK` and the constant; the
    values built from it go through :func:`_finite_back`. Whether a byte is in a string, and
    whether a backslash escapes the next, is carried from one read to the next, and so is the
    start of a constant cut by the end of a read."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._in_string = False
        self._escaped = False
        self._held = b""

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson asks for nothing to learn whether the stream gives bytes
            return b""
        while True:
            data = self._raw.read(_NON_FINITE_CHUNK)
            buffer, self._held = self._held + data, b""
            if not buffer:
                return b""
            written = self._convert(buffer, last=not data)
            if written:
                return written

    def _convert(self, buffer: bytes, *, last: bool) -> bytes:
        out = bytearray()
        start = at = 0
        end = len(buffer)
        while at < end:
            if self._escaped:
                self._escaped, at = False, at + 1
            elif self._in_string:
                found = _IN_STRING.search(buffer, at)
                if found is None:
                    break
                at = found.end()
                if found.group() == b"\\":
                    self._escaped = True
                else:
                    self._in_string = False
            else:
                found = _OUTSIDE_STRINGS.search(buffer, at)
                if found is None:
                    if not last:  # a constant the read cut: its start waits for the rest
                        end -= _cut_constant(buffer[at:])
                    break
                at = found.end()
                if found.group() == b'"':
                    self._in_string = True
                    continue
                out += buffer[start : found.start()]
                out += codec.dumps_exact(_NON_FINITE_MARK + found.group().decode()).encode()
                start = at
        self._held = buffer[end:]
        out += buffer[start:end]
        return bytes(out)


def _cut_constant(tail: bytes) -> int:
    """How many bytes at the end of ``tail`` may start a non-finite constant."""
    for size in range(min(len(tail), max(map(len, _NON_FINITE_TOKENS)) - 1), 0, -1):
        if any(token.startswith(tail[-size:]) for token in _NON_FINITE_TOKENS):
            return size
    return 0


def _finite_back(value: Any) -> Any:
    """``value`` with the strings :class:`_NonFiniteStream` made of constants turned back."""
    if isinstance(value, str):
        return _NON_FINITE_VALUES.get(value, value) if value.startswith("\x00") else value
    if isinstance(value, list):
        return [_finite_back(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite_back(v) for k, v in value.items()}
    return value


def _same_value(value: Any) -> Any:
    return value


class _JsonLog:
    """A ``.json`` log streamed with ijson: the keys before ``samples`` are the header; each
    sample is built only when it is selected (Inspect writes its ``id`` and ``epoch`` first, so
    the others are passed over unbuilt). One pass per listing or read."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._header: dict[str, Any] = {}
        self._non_finite = False
        try:
            keys = [key for key, _ in self.items(lambda key: False)]
        except TranscriptFormatError:
            # Python's ``json`` writes a non-finite float as a bare ``NaN`` or ``Infinity``
            # (Inspect's log of a score of NaN, and of its metric's NaN mean), which no ijson
            # backend reads: such a log is read through :class:`_NonFiniteStream`, which only
            # a log ijson refused pays for.
            self._header, self._non_finite = {}, True
            keys = [key for key, _ in self.items(lambda key: False)]
        self.listing = _Listing(self._header, keys, [])

    def sample(self, key: tuple[SampleId, int]) -> Any:
        for _, sample in self.items(lambda k: _same(k, key)):
            if sample is not None:
                return sample
        raise KeyError(key)

    def items(
        self, select: Callable[[tuple[SampleId, int]], bool]
    ) -> Iterator[tuple[tuple[SampleId, int], Mapping[str, Any] | None]]:
        """Every sample's key, and the sample itself when ``select(key)``."""
        import ijson

        restore = _finite_back if self._non_finite else _same_value
        with self._path.open("rb") as raw:
            stream = _NonFiniteStream(raw) if self._non_finite else raw
            events: Iterator[tuple[str, Any]] = iter(ijson.basic_parse(stream, use_float=True))
            try:
                if next(events, (None, None))[0] != "start_map":
                    raise TranscriptFormatError(str(self._path), [NAME], 1, "not a JSON object")
                for event, value in events:
                    if event != "map_key":
                        break
                    first, first_value = next(events)
                    if value != "samples" or first != "start_array":
                        self._header[value] = restore(_value(first, first_value, events))
                        continue
                    for item, _ in events:
                        if item != "start_map":
                            _skip(item, events)
                            if item == "end_array":
                                break
                            continue
                        key, sample = self._sample(events, select, restore)
                        if key is not None:
                            yield key, sample
            except ijson.JSONError as exc:
                reason = f"invalid JSON ({exc})"
                raise TranscriptFormatError(str(self._path), [NAME], None, reason) from None

    @staticmethod
    def _sample(
        events: Iterator[tuple[str, Any]],
        select: Callable[[tuple[SampleId, int]], bool],
        restore: Callable[[Any], Any],
    ) -> tuple[tuple[SampleId, int] | None, dict[str, Any] | None]:
        """One sample object (after its ``start_map``): its key, and the object if selected."""
        fields: dict[str, Any] = {}
        keep: bool | None = None  # undecided until both id and epoch are read
        for event, name in events:
            if event == "end_map":
                break
            first, first_value = next(events)
            if keep is False:
                _skip(first, events)
                continue
            fields[name] = restore(_value(first, first_value, events))
            if keep is None and "id" in fields and "epoch" in fields:
                keep = select((fields["id"], as_int(fields["epoch"]) or 1))
        if "id" not in fields:
            return None, None
        key = (fields["id"], as_int(fields.get("epoch")) or 1)
        return key, fields if keep or (keep is None and select(key)) else None


class _DocumentLog:
    """A log (or one sample) already parsed: a dict, or an ``EvalLog`` / ``EvalSample`` dumped."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        if _is_sample(document):
            self._samples = [document]
            header: dict[str, Any] = {}
        else:
            listed = document.get("samples")
            self._samples = [s for s in listed if _is_sample(s)] if isinstance(listed, list) else []
            header = {k: v for k, v in document.items() if k != "samples"}
        keys = [(s["id"], as_int(s.get("epoch")) or 1) for s in self._samples]
        self.listing = _Listing(header, keys, [])

    def sample(self, key: tuple[SampleId, int]) -> Any:
        pairs = zip(self._samples, self.listing.keys, strict=True)
        return next(s for s, k in pairs if _same(k, key))

    def items(
        self, select: Callable[[tuple[SampleId, int]], bool]
    ) -> Iterator[tuple[tuple[SampleId, int], Mapping[str, Any] | None]]:
        for sample, key in zip(self._samples, self.listing.keys, strict=True):
            yield key, sample if select(key) else None


def _is_sample(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("id"), (str, int))
        and ("messages" in value or "events" in value or "events" in _legacy_transcript(value))
        and ("epoch" in value or "target" in value or "scores" in value)
    )


#: The fields of every sample Inspect writes (``EvalSample`` in ``inspect_ai/log/_log.py``
#: requires ``id``, ``epoch``, ``input`` and ``target``; ``messages`` is its conversation), and
#: those only a sample that ran holds: a document with them is a sample, however plain its
#: messages.
_SAMPLE_FIELDS = ("id", "epoch", "input", "target", "messages")
_RUN_FIELDS = ("events", "scores", "model_usage")


def _is_whole_sample(value: Any) -> bool:
    return (
        _is_sample(value)
        and all(key in value for key in _SAMPLE_FIELDS)
        and as_int(value["epoch"]) is not None
        and isinstance(value["input"], (str, list))
        and isinstance(value["target"], (str, list))
        and isinstance(value["messages"], list)
        and any(key in value for key in _RUN_FIELDS)
    )


def _is_log(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("eval"), Mapping)
        and ("task" in value["eval"] or "eval_id" in value["eval"])
        and ("samples" in value or "version" in value or "status" in value)
    )


def samples(
    path: str | Path, *, limits: archive.ArchiveLimits | None = None
) -> list[tuple[SampleId, int]]:
    """Every ``(sample id, epoch)`` of an Inspect log, in the log's order, cheaply.

    An ``.eval`` is listed from its zip directory (no member is decompressed); a ``.json`` log
    is streamed once without building its samples. Ids are the log's own (an ``.eval`` names
    them in member names: an id of digits that reads back the same is an ``int``).
    ``turnfold.load(path, sample=id, epoch=epoch)`` reads one of them.

    >>> samples("tests/fixtures/harnesses/inspect/mockllm_two-epochs.eval")
    [(1, 1), (2, 1), (1, 2), (2, 2)]
    """
    with _opened(Path(path), limits) as log:
        return list(log.listing.keys)


def task_of(path: str | Path, *, limits: archive.ArchiveLimits | None = None) -> str | None:
    """The name of the task an Inspect log ran, from its header (what two runs of the same
    samples are joined by, spec B-3), as cheaply as :func:`samples`.

    >>> task_of("tests/fixtures/harnesses/inspect/mockllm_two-epochs.eval")
    'task'
    """
    with _opened(Path(path), limits) as log:
        metadata: dict[str, Any] = {}
        _header_metadata(log.listing.header, metadata)
        task = metadata.get("task")
        return task if isinstance(task, str) else None


@contextlib.contextmanager
def _opened(path: Path, limits: archive.ArchiveLimits | None) -> Iterator[Any]:
    if archive.is_zip(path):
        limits = limits or archive.LIMITS
        with archive.open_archive(path, limits) as zipped:
            yield _EvalLog(zipped, str(path), limits)
    else:
        yield _JsonLog(path)


# --- detection and reading -----------------------------------------------------------------

#: The start Inspect writes for a ``.json`` log (``{"version": 2, "status": ...``).
_JSON_LOG_START = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"')
_SNIFF = 4096


def detect_path(path: Path) -> Evidence | None:
    """An Inspect log at ``path``, told by its first bytes (and, for a zip, its member names);
    None when the file is not one, so other formats read it as usual."""
    if archive.is_zip(path):
        try:
            with archive.open_archive(path) as zipped:
                names = set(zipped.namelist())
        except archive.ArchiveError:
            # An ``.eval`` whose directory may not be read is still Inspect's: its load says why.
            return Evidence(share=1.0, marks=1) if path.suffix == ".eval" else None
        # Both the name and Inspect's own bookkeeping member are marks: a chunked sample's
        # ``samples/<id>_epoch_<n>/events/0.json`` is also what an OpenHands session zip holds.
        marks = (path.suffix == ".eval") + bool({"header.json", "_journal/start.json"} & names)
        return Evidence(share=1.0, marks=marks) if marks else None
    try:
        with path.open("rb") as stream:
            head = stream.read(_SNIFF)
    except OSError:
        return None
    if _JSON_LOG_START.match(head) and b'"eval"' in head:
        return Evidence(share=1.0, marks=1)
    return None


def read_path(
    path: Path,
    *,
    sample: SampleId | None = None,
    epoch: int | None = None,
    limits: archive.ArchiveLimits | None = None,
) -> Transcript:
    """The transcript of one sample of the log at ``path`` (the only one, or the one picked)."""
    with _opened(path, limits) as log:
        key = _pick(log.listing.keys, sample, epoch, str(path))
        return _of_log(Source(str(path), iter(()), path=path), log, log.sample(key))


def _of_log(source: Source, log: Any, record: Any) -> Transcript:
    """The transcript of one sample read from a log file, with its warnings and accounting."""
    for member in log.listing.bookkeeping:
        source.ignored(member)
    return source.hand_over(_transcript(source, log.listing.header, record))


class Samples(NamedTuple):
    """A part of a log: its samples from ``start`` up to ``end``, in the log's order (a scan's
    workers read a large ``.eval`` log in parts, each its own members)."""

    start: int
    end: int


def transcripts(
    path: str | Path,
    *,
    limits: archive.ArchiveLimits | None = None,
    part: Samples | None = None,
) -> Iterator[tuple[tuple[SampleId, int], Transcript]]:
    """Every sample of the log at ``path`` (of its ``part``) as ``((id, epoch), transcript)``,
    in the log's order, the file opened and its directory read once (a scan of all samples;
    ``load(path, sample=, epoch=)`` opens the log each time). One sample is held at a time.

    >>> [key for key, _ in transcripts("tests/fixtures/harnesses/inspect/mockllm_one-sample.json")]
    [(1, 1)]
    """
    from turnfold import formats  # the package imports this module: at call time only

    path = Path(path)
    module = sys.modules[__name__]
    with _opened(path, limits) as log:
        wanted = None if part is None else set(log.listing.keys[part.start : part.end])
        for key, record in log.items(lambda key: wanted is None or key in wanted):
            if record is None:
                continue
            source = Source(f"{path}#{key[0]}/{key[1]}", iter(()), path=path)
            transcript = _of_log(source, log, record)
            # The same warnings as load(path, sample=, epoch=): nothing is lost silently.
            formats.report_losses(str(path), source.accounting, transcript, module)
            yield key, transcript


def detect(source: Source) -> Evidence:
    """A parsed log or sample (a dict or Inspect's own objects)."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and _is_whole_sample(document):
        # Its messages alone read as a chat request (Chat Completions marks plain messages
        # with tool calls as its own), a reading that loses the sample's events, scores and
        # metadata. Every record of a sample (each sampled item of its lists) is Inspect's, and
        # the sample itself one more: no reading of one of its lists has as many marks.
        records = 1 + sum(
            len(detection_sample(v)) for v in document.values() if isinstance(v, list)
        )
        return Evidence(share=1.0, marks=records, sampled=records)
    if _is_log(document) or _is_sample(document):
        return Evidence(share=1.0, marks=1)
    return Evidence.none("no eval log or sample")


def read(source: Source, *, sample: SampleId | None = None, epoch: int | None = None) -> Transcript:
    """The transcript of one sample of a parsed log (or of the sample itself)."""
    document = source.document if source.is_document else None
    if not isinstance(document, Mapping) or not (_is_log(document) or _is_sample(document)):
        raise TranscriptFormatError(source.name, [NAME], None, "not an Inspect log or sample")
    log = _DocumentLog(document)
    key = _pick(log.listing.keys, sample, epoch, source.name)
    transcript = Transcript()
    for _ in source.records():  # the document is one record: the log (or the sample)
        transcript = _transcript(source, log.listing.header, log.sample(key))
    return transcript


def _pick(
    keys: Sequence[tuple[SampleId, int]], sample: SampleId | None, epoch: int | None, name: str
) -> tuple[SampleId, int]:
    """The one sample ``sample``/``epoch`` name, or an error saying how to name one."""
    if not keys:
        raise SampleSelectionError(f"{name}: the log holds no samples")
    chosen = [
        k
        for k in keys
        if (sample is None or str(k[0]) == str(sample)) and (epoch is None or k[1] == epoch)
    ]
    if len(chosen) == 1:
        return chosen[0]
    ids = list(dict.fromkeys(k[0] for k in keys))
    epochs = sorted({k[1] for k in keys})
    shown = ", ".join(repr(i) for i in ids[:10]) + (", …" if len(ids) > 10 else "")
    held = f"{len(keys)} samples (ids {shown}; epochs {', '.join(map(str, epochs))})"
    example = (
        f"sample={chosen[0][0]!r}, epoch={chosen[0][1]}"
        if chosen
        else (f"sample={keys[0][0]!r}, epoch={keys[0][1]}")
    )
    if not chosen:
        asked = ", ".join(
            f"{n}={v!r}" for n, v in (("sample", sample), ("epoch", epoch)) if v is not None
        )
        raise SampleSelectionError(f"{name}: no sample with {asked}; it holds {held}")
    raise SampleSelectionError(
        f"{name} holds {held}: pick one with turnfold.load(path, {example}), "
        "or read them all with turnfold.scan(path)"
    )


# --- one sample → a transcript -------------------------------------------------------------


def _transcript(source: Source, header: Mapping[str, Any], record: Any) -> Transcript:
    if not isinstance(record, Mapping):
        raise TranscriptFormatError(source.name, [NAME], None, "the sample is not a JSON object")
    transcript = Transcript(metadata={"source_format": NAME})
    if header:
        source.mapped("header")
        _header_metadata(header, transcript.metadata)
    source.mapped("sample")
    context = _Context(source, record, _string(transcript.metadata.get("model"), None))
    context.agent = agent_of_solver(header, record)
    _invalidation(record, transcript)
    _timelines(source, record, transcript)
    _failed_attempts(context, record, transcript)
    conversation = _Conversation(context, transcript)
    conversation.solver_agent = context.agent
    events = _events_of(record)
    if isinstance(events, list) and events:
        if record.get("messages"):
            source.ignored("messages")
        _Events(context, events, crash=_crash(record.get("error"))).read(conversation, _ROOT)
    else:
        messages = record.get("messages")
        for message in messages if isinstance(messages, list) else []:
            conversation.read_message(message, noted=True)
        conversation.context_unshown()
    _sample_metadata(record, transcript, conversation)
    _duration(context, record, transcript)
    return transcript


def _invalidation(record: Mapping[str, Any], transcript: Transcript) -> None:
    """A sample marked invalid after it ran (``EvalSample.invalidation``, the ``ProvenanceData``
    ``invalidate_samples`` in ``inspect_ai/log/_edit.py`` writes: author, reason, timestamp):
    ``metadata["invalidation"]`` and a warning notice opening the transcript. Its scores stay
    as Inspect scored them; an eval set runs such a sample again."""
    raw = record.get("invalidation")
    if not isinstance(raw, Mapping):
        return
    facts: dict[str, Any] = {
        k: raw[k] for k in ("author", "reason", "timestamp") if isinstance(raw.get(k), str)
    }
    if isinstance(raw.get("metadata"), Mapping) and raw["metadata"]:
        facts["metadata"] = dict(raw["metadata"])
    transcript.metadata["invalidation"] = facts
    said = {"author": facts.get("author") or "?", "when": facts.get("timestamp") or "?"}
    key = "reader.sample_invalidated.no_reason"
    if facts.get("reason"):
        key, said = "reader.sample_invalidated", {**said, "reason": facts["reason"]}
    transcript.append(notice(key, said, level="warning", subtype="invalidated"))


def _timelines(source: Source, record: Mapping[str, Any], transcript: Transcript) -> None:
    """Custom timelines (``EvalSample.timelines``, ``Transcript.add_timeline``): named trees
    over the sample's own events, which refer to them by uuid (``TimelineEvent`` in
    ``inspect_ai/event/_timeline.py``). Those events are shown, in order; another grouping of
    them is not, and a notice names what is not shown."""
    timelines = record.get("timelines")
    if not isinstance(timelines, list) or not timelines:
        return
    names = []
    for timeline in timelines:
        source.ignored("timelines")
        name = timeline.get("name") if isinstance(timeline, Mapping) else None
        names.append(name if isinstance(name, str) and name else "?")
    said = {"names": ", ".join(names)}
    transcript.append(notice("reader.timelines_not_shown", said, subtype="timelines"))


def _failed_attempts(context: _Context, record: Mapping[str, Any], transcript: Transcript) -> None:
    """The attempts of a sample retried after an error (``retry_on_error``), before the one
    the sample holds: for each, the events Inspect kept of it (``EvalRetryError.events``, from
    its last model call on: ``_eval_retry_error`` in ``inspect_ai/_eval/task/run.py``), read
    apart from the other attempts (each begins anew from the sample's prompt, with the same
    message ids), then its error as a warning notice.

    Their responses' tokens are ``metadata["failed_attempts_usage"]``, not on their entries:
    Inspect's sample total (``model_usage``) counts the attempt that ran last alone (each
    attempt starts its sample's usage anew, ``init_sample_model_data`` in
    ``_task_run_sample_attempt``), and the header's tokens and cost are that total (U-1)."""
    spent: dict[str, int] = {}
    for attempt, retry in enumerate(_retry_records(record), start=1):
        events = retry.get("events")
        if isinstance(events, list) and events:
            kept = {"attempt": attempt}
            transcript.append(notice("reader.attempt_kept", kept, subtype="attempt"))
            start = len(transcript.entries)
            conversation = _Conversation(context, transcript)
            conversation.solver_agent = context.agent
            _Events(context, events, crash=_crash(retry)).read(conversation, _ROOT)
            conversation.cancel_open_calls(None)  # the attempt ended in its error
            add_into(spent, _usage_set_apart(transcript.entries[start:]))
        tried = {"attempt": attempt, "said": str(retry.get("message") or "an error")}
        transcript.append(notice("reader.sample_retried", tried, level="warning", subtype="retry"))
    if any(spent.values()):
        transcript.metadata["failed_attempts_usage"] = spent


def _usage_set_apart(entries: list[Entry]) -> dict[str, int]:
    """What ``entries``' responses spent (each once, their sub-agents' included), taken off
    them: their tokens are counted apart from the session's own."""
    spent = tokens_spent(entries)
    for entry in entries:
        if isinstance(entry, USAGE_KINDS):
            entry.usage = None
        agent = entry.subagent if isinstance(entry, ToolCall) else None
        if agent is not None:
            agent.usage = None
            if agent.transcript is not None:
                _usage_set_apart(agent.transcript.entries)
    return spent


def _legacy_transcript(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``transcript`` of a sample of an older log (before 0.3.42): ``{events, content}``,
    which Inspect reads as the sample's ``events`` and ``attachments`` (``migrate_deprecated``
    of ``EvalSample`` in ``inspect_ai/log/_log.py``); empty for any other sample."""
    legacy = record.get("transcript")
    return legacy if isinstance(legacy, Mapping) else {}


def _events_of(record: Mapping[str, Any]) -> Any:
    """A sample's events: its own, else those of its older ``transcript``."""
    events = record.get("events")
    if isinstance(events, list) and events:
        return events
    return _legacy_transcript(record).get("events", events)


class _Context:
    """What every part of one sample's mapping shares: the accounting, the attachments and the
    message pool that condensed events refer to."""

    def __init__(self, source: Source, record: Mapping[str, Any], model: str | None) -> None:
        self.source = source
        #: The eval's model (its header's), which the sample's own conversation runs on.
        self.model = model
        #: The bridged coding agent the sample's solver is (:func:`agent_of_solver`), if any.
        self.agent: str | None = None
        attachments: dict[str, Any] = {}
        for found in (_legacy_transcript(record).get("content"), record.get("attachments")):
            if isinstance(found, Mapping):
                attachments.update(found)
        self.attachments: Mapping[str, Any] = attachments
        data = record.get("events_data")
        pool = data.get("messages") if isinstance(data, Mapping) else None
        self.pool: list[Any] = pool if isinstance(pool, list) else []
        #: The events whose times were read (:func:`_times`), by id: a time that is no time
        #: is said once of its event (each kept, so no other event is given its id).
        self.timed: dict[int, Mapping[str, Any]] = {}

    def resolve(self, value: Any) -> Any:
        """``value`` with its ``attachment://`` (and older ``tc://``) references replaced by
        what they refer to; a reference to nothing the sample holds stays as it is."""
        if isinstance(value, str):
            for protocol in (_ATTACHMENT, _CONTENT):
                if value.startswith(protocol):
                    return self.attachments.get(value[len(protocol) :], value)
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, Mapping):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def warn(self, reason: str, record_type: str | None = None) -> None:
        self.source.warn(reason, record_type=record_type)


def _image(url: Any) -> ImageData | None:
    """An inline image from a ``data:`` URL (remote images are not fetched)."""
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return None
    media_type, data = url[5:].split(";base64,", 1)
    return ImageData(media_type=media_type or "image/png", data=data)


def _part_text(part: Mapping[str, Any]) -> str | ImageData | None:
    """One content part of a tool result or prompt as text or an image."""
    kind = part.get("type")
    if kind == "text":
        return _string(part.get("text"), None)
    if kind == "image":
        return _image(part.get("image")) or "[image]"
    if kind in ("audio", "video", "document"):
        return f"[{kind}]"
    if kind == "data":
        return stringify(part.get("data"))
    return None


class _NativeCompaction(NamedTuple):
    """A provider's own compaction of the context, carried in a ``ContentData`` part."""

    kind: str  # the provider's: "openai_compact", "anthropic_compact"
    key: str  # what every copy of it shares: the later inputs that repeat it
    summary: str | None


def _native_compaction(part: Any) -> _NativeCompaction | None:
    """The native compaction a content part carries, None for any other part.

    Inspect keeps a provider's compaction as ``ContentData(data={"compaction_metadata":
    {"type": ...}})``: OpenAI's (``type: "openai_compact"``, opaque ``encrypted_content``) in a
    ``ChatMessageUser`` of its own (``chat_messages_from_compact_response`` in
    ``inspect_ai/model/_openai_responses.py``), Anthropic's (``type: "anthropic_compact"``, the
    summary in ``content``) in the assistant message (``_content_data_for_compaction`` in
    ``inspect_ai/model/_providers/anthropic.py``). The encrypted content is nothing a reader
    can show: the boundary keeps only what kind of compaction it was.
    """
    if not isinstance(part, Mapping) or part.get("type") != "data":
        return None
    data = part.get("data")
    metadata = data.get("compaction_metadata") if isinstance(data, Mapping) else None
    if not isinstance(metadata, Mapping):
        return None
    kind = _string(metadata.get("type"), "compaction")
    summary = _string(metadata.get("content"), None) or None
    return _NativeCompaction(kind, stringify(metadata), summary)


def _placeholder(part: Mapping[str, Any]) -> str:
    """A part of an assistant message that is no text, named in the text in its place.

    Assistant output holds media: Inspect's Google provider writes the images and audio a
    Gemini model returns as ``ContentImage`` and ``ContentAudio`` (``inspect_ai/model/
    _providers/google.py``, ``inline_data`` parts), and the ``Content`` union
    (``inspect_ai/_util/content.py``) lets any message hold video, documents and ``ContentData``.
    An inline image is the text's own (``AssistantText.images``); any other part is named where
    it stood, as the prompts' media are (:func:`_part_text`). A data part is a provider's
    internal payload;
    Anthropic's model fallback (``_content_data_for_fallback`` in ``anthropic.py``: the
    requested model declined and another wrote the rest) says which models.
    """
    kind = part.get("type")
    data = part.get("data")
    fallback = data.get("fallback_metadata") if isinstance(data, Mapping) else None
    if kind == "data" and isinstance(fallback, Mapping):
        ends = [fallback.get(end) for end in ("from", "to")]
        models = [(_string(e.get("model")) or "?") if isinstance(e, Mapping) else "?" for e in ends]
        return f"[model fallback: {models[0]} → {models[1]}]"
    return f"[{kind}]" if isinstance(kind, str) and kind else "[part]"


def _message_key(message: Mapping[str, Any]) -> str:
    """What tells a message without an id (its references resolved) from another: its role,
    its content and the calls it makes or answers, not where it came from (``source``)."""
    # Compact: only compared with other keys, and made again for every message each model
    # input repeats (the whole conversation, before message ids).
    return codec.dumps_exact(
        [message.get(k) for k in ("role", "content", "tool_calls", "tool_call_id", "function")]
    )


class _Conversation:
    """Entries of one transcript from Inspect messages, fed in order."""

    def __init__(self, context: _Context, transcript: Transcript) -> None:
        self.context = context
        self.transcript = transcript
        self.calls: dict[str, ToolCall] = {}
        self.seen: set[str] = set()  # ids of messages already shown
        #: Messages without an id already shown, by :func:`_message_key`: how many of each.
        self.unnamed: Counter[str] = Counter()
        self.errored = False  # an error event or message was shown
        self.compactions: set[str] = set()  # keys of the native compactions already shown
        #: The boundary of a ``compaction`` event whose compacted messages the next model
        #: input brings (``compact_fn`` in ``inspect_ai/model/_compaction/_compaction.py``
        #: logs the event, then the model is called with the compacted input).
        self.compacting: CompactionBoundary | None = None
        #: Each handoff's call and the ids of its sub-agent's messages, by the call's id.
        self.handoffs: dict[str, tuple[ToolCall, set[str]]] = {}
        #: The approver's word on each call it did not approve, by the call's id.
        self.refusals: dict[str, tuple[str, Wording]] = {}
        #: A reviewer's word on the termination it asked for, shown after the stop marker of
        #: the limit event that follows (:meth:`after_stop`), so the turn reads as stopped.
        self.stopped_by: list[Entry] = []
        #: The coding agent (``codex``, ``claude_code``) whose requests to its model, made
        #: through Inspect's agent bridge, this conversation is from its first system message
        #: on: the sample's solver says so (:attr:`solver_agent`), else that system prompt does.
        self.agent: str | None = None
        #: The agent the sample's solver is, for the sample's own conversation (set by its
        #: reader; a side call's or a sub-agent's has its system prompt alone to tell).
        self.solver_agent: str | None = None
        #: Context that agent injected, waiting for the prompt it came with.
        self.injected: list[str] = []
        #: The prompts the sample opened with (``sample_init``), which the agent's first
        #: request relays as a message of its own (the bridge gives it a new id).
        self.opening: list[UserMessage] = []

    def append(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def after_stop(self) -> None:
        """What was said of a stop before its marker (:attr:`stopped_by`), after it."""
        for entry in self.stopped_by:
            self.append(entry)
        self.stopped_by.clear()

    def handed_back(self, message: Mapping[str, Any], call_id: str, at: str | None) -> None:
        """A user message the handoff ``call_id`` returned (``agent_handoff`` in
        ``inspect_ai/model/_call_tools.py``), never a prompt: the sub-agent's own message,
        which its output filter may have rewritten (``content_only`` turns a tool result into a
        user message, keeping its id) and which the call shows nested; or Inspect's word that
        the agent has completed its work or exceeded a limit, a notice that ends the
        sub-agent's transcript (or stands after the call, when it shows none)."""
        call, sub_agent = self.handoffs[call_id]
        message = self.context.resolve(message)
        own_id = message.get("id")
        if isinstance(own_id, str):
            self.seen.add(own_id)
        else:
            self.unnamed[_message_key(message)] += 1
        if own_id in sub_agent:
            return
        text, _ = text_and_images(message.get("content"), _part_text)
        if not text:
            return
        notice = SystemNotice(text=text, subtype="handoff", timestamp=at)
        child = call.subagent.transcript if call.subagent is not None else None
        (child or self.transcript).append(notice)

    def cancel_open_calls(self, at: str | None) -> None:
        """The calls the run asked for but never ran: a limit, an error or an interrupt
        stopped it before their tool event (a token limit stops it right after the response
        that asked for them, ``check_token_limit`` in ``inspect_ai/model/_model.py``)."""
        for call in self.calls.values():
            if call.status == "unknown" and call.result is None:
                self.transcript.update(call, status="cancelled", ended_at=at)

    def read_message(
        self,
        raw: Any,
        *,
        noted: bool = False,
        timestamp: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        """Add the entries of one message (``noted``: account for it as ``message/<role>``)."""
        if not isinstance(raw, Mapping):
            if noted:
                self.context.warn("a message that is not an object", "message/(invalid)")
            return
        message = self.context.resolve(raw)
        role = message.get("role")
        own_id = message.get("id")
        if isinstance(own_id, str):
            self.seen.add(own_id)
        else:
            self.unnamed[_message_key(message)] += 1
        if role == "system":
            text, _ = text_and_images(message.get("content"), _part_text)
            if text:
                previous = self.transcript.metadata.get("system")
                self.transcript.metadata["system"] = f"{previous}\n\n{text}" if previous else text
                self.agent = self.agent or self.solver_agent or agent_of_system_prompt(text)
        elif role == "user" and _is_summary(message):
            self.compaction_summary(message.get("content"), timestamp)
        elif role == "user":
            content = message.get("content")
            if isinstance(content, list):  # OpenAI's compaction comes as a user message
                self.compaction_parts(content, timestamp)
                content = [part for part in content if _native_compaction(part) is None]
            text, images = text_and_images(content, _part_text)
            if self.agent is not None:
                named = own_id if isinstance(own_id, str) else None
                self.agent_user(self.agent, content, images, timestamp, named)
            elif text or images:
                self.append(UserMessage(text=text or "", images=images, timestamp=timestamp))
        elif role == "assistant":
            self.context_unshown()
            self.assistant(message, timestamp, usage)
        elif role == "tool":
            self.context_unshown()
            self.tool_message(message)
        else:
            if noted:
                self.context.warn(f"message with unknown role {role!r} skipped", "message/(role)")
            return
        if noted:
            self.context.source.mapped(f"message/{role}")

    def agent_user(
        self,
        agent: str,
        content: Any,
        images: list[ImageData],
        timestamp: str | None,
        message_id: str | None = None,
    ) -> None:
        """A user message of a bridged ``agent``'s request, read as the agent's own reader reads
        it (:mod:`~turnfold.formats.harnesses.inspect_bridged`): the context it injected waits
        for the prompt it came with, whose ``injected_context`` meta keeps it."""
        parts = content if isinstance(content, list) else [content]
        pieces = [_part_text(p) if isinstance(p, Mapping) else p for p in parts]
        texts = [piece for piece in pieces if isinstance(piece, str)]
        read = read_user_message(agent, texts, timestamp, message_id)
        self.injected.extend(read.injected)
        prompt = next((e for e in read.shown if isinstance(e, UserMessage)), None)
        if prompt is None and images:
            prompt = UserMessage(text="", timestamp=timestamp)
            read.shown.append(prompt)
        for entry in read.shown:
            if entry is not prompt:
                self.append(entry)
                continue
            prompt.images = images
            injected, self.injected = self.injected, []
            opening = self.relayed(prompt)
            if opening is None:
                if injected:
                    prompt.meta["injected_context"] = injected
                self.append(prompt)
            else:
                changes: dict[str, Any] = {}
                if prompt.command != opening.command:  # the agent read it as a slash command
                    changes.update(text=prompt.text, command=prompt.command)
                if injected:
                    earlier = opening.meta.get("injected_context", [])
                    changes["meta"] = {**opening.meta, "injected_context": [*earlier, *injected]}
                if changes:
                    self.transcript.update(opening, **changes)

    def relayed(self, prompt: UserMessage) -> UserMessage | None:
        """The prompt the sample opened with, when ``prompt`` is the agent's copy of it, sent
        right after it (its first request): one prompt, not two. Claude Code reads an opening
        ``/name args`` as its slash command: the same words."""
        last = self.transcript.entries[-1] if self.transcript.entries else None
        opening = next((m for m in self.opening if m is last), None)
        if opening is None or prompt.images:
            return None
        said = [f"{m.command} {m.text}".strip() if m.command else m.text for m in (opening, prompt)]
        return opening if said[0] == said[1] else None

    def context_unshown(self) -> None:
        """The injected context no prompt came with: left out, as the agent's reader does."""
        for _ in self.injected:
            self.context.source.ignored("injected context")
        self.injected.clear()

    def compaction_parts(self, parts: Sequence[Any], timestamp: str | None) -> None:
        """The native compactions among a message's content parts, each shown once.

        A compaction is shown where it first appears: the compacted context it stands for is
        the input of every later model call, and each repeats it. The boundary a
        ``compaction`` event just added is the same compaction: it is joined, not doubled.
        """
        for part in parts:
            native = _native_compaction(part)
            if native is None or native.key in self.compactions:
                continue
            self.compactions.add(native.key)
            boundary, self.compacting = self.compacting, None
            if boundary is None:
                meta = {"native": native.kind}
                self.append(
                    CompactionBoundary(summary=native.summary, timestamp=timestamp, meta=meta)
                )
            else:
                meta = {**boundary.meta, "native": native.kind}
                summary = boundary.summary or native.summary
                self.transcript.update(boundary, summary=summary, meta=meta)

    def compaction_summary(self, content: Any, timestamp: str | None) -> None:
        """The user message a summary compaction puts in place of the conversation: the
        boundary's summary, never a prompt (Inspect says as much in it: "it is not a message
        from the user", ``CompactionSummary.compact``).

        It joins the boundary of the ``compaction`` event before it; without one (a sample
        read from its messages) it is a boundary of its own. Every later input repeats it: it
        is read once, as each message is (by its id).
        """
        text, _ = text_and_images(content, _part_text)
        boundary, self.compacting = self.compacting, None
        if boundary is None:
            self.append(CompactionBoundary(summary=text or None, timestamp=timestamp))
        else:
            self.transcript.update(boundary, summary=text or boundary.summary)

    def assistant(
        self, message: Mapping[str, Any], timestamp: str | None, usage: Usage | None
    ) -> None:
        model = _string(message.get("model"), None)
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts: list[str] = []
        images: list[ImageData] = []  # the model's images, shown after the text they are in
        batch = _string(message.get("id"), None)
        start = len(self.transcript.entries)

        def flush() -> None:
            if texts or images:
                text = AssistantText(
                    text="\n\n".join(texts), model=model, timestamp=timestamp, images=list(images)
                )
                self.append(text)
                texts.clear()
                images.clear()

        for part in parts:
            if not isinstance(part, Mapping):
                self.context.warn("an assistant content part that is not an object skipped")
                continue
            kind = part.get("type")
            if kind == "text":
                if isinstance(part.get("text"), str) and part["text"]:
                    texts.append(part["text"])
            elif kind == "reasoning":
                flush()
                self.append(_thinking(part, timestamp))
            elif kind == "tool_use":
                flush()
                self._server_tool(part, batch, timestamp)
            elif _native_compaction(part) is not None:
                flush()
                self.compaction_parts([part], timestamp)
            elif kind == "image" and (image := _image(part.get("image"))) is not None:
                images.append(image)  # a Gemini answer's image (google.py ``inline_data``)
            else:
                texts.append(_placeholder(part))  # a remote image is named, never fetched
        flush()
        for raw in as_list(message.get("tool_calls")):
            if isinstance(raw, Mapping):
                self.start_call(raw, batch, timestamp)
        # A response of reasoning or calls alone keeps its usage too, and names its model.
        attach_usage(self.transcript.entries[start:], usage, self.transcript, model=model)

    def start_call(
        self, raw: Mapping[str, Any], batch: str | None, timestamp: str | None
    ) -> ToolCall:
        name = _string(raw.get("function"))
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else ""
        if not call_id:
            call_id = f"call@{len(self.transcript.entries)}"
            self.context.warn("a tool call without an id")
        args = raw.get("arguments")
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status="unknown",  # a static log: no result recorded yet means none (L-3)
            batch_id=batch,
            started_at=timestamp,
            timestamp=timestamp,
        )
        if raw.get("parse_error"):
            call.meta["parse_error"] = raw["parse_error"]
        self.append(call)
        self.calls[call_id] = call
        return call

    def _server_tool(
        self, part: Mapping[str, Any], batch: str | None, timestamp: str | None
    ) -> ToolCall:
        """A tool the provider ran itself (web search, MCP, code execution): call and result."""
        name = _string(part.get("name"))
        args = part.get("arguments")
        with contextlib.suppress(ValueError):
            args = codec.loads(args) if isinstance(args, str) else args
        error = part.get("error")
        status: ToolStatus = "error" if error else "success"
        result = part.get("result")
        text = error if isinstance(error, str) and error else stringify(result)
        call = ToolCall(
            call_id=str(part.get("id") or f"server@{len(self.transcript.entries)}"),
            name=name,
            args=args,
            description=describe_args(name, args),
            status=status,
            result=ToolResult(text=text),
            batch_id=batch,
            timestamp=timestamp,
            meta={"server_tool": part.get("tool_type")},
        )
        self.append(call)
        return call

    def tool_message(self, message: Mapping[str, Any]) -> None:
        call_id = message.get("tool_call_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.context.warn(f"tool result for an unknown tool_call_id {call_id!r}")
            call = self.start_call(
                {"id": call_id or "", "function": message.get("function")}, None, None
            )
        text, images = text_and_images(message.get("content"), _part_text)
        self.settle(call, text, images, message.get("error"))

    def settle(
        self,
        call: ToolCall,
        text: str | None,
        images: list[ImageData],
        error: Any,
        **times: Any,
    ) -> None:
        """Give ``call`` its result: Inspect records every failure as ``error`` (L-3)."""
        status: ToolStatus = "success"
        if isinstance(error, Mapping):
            status = "cancelled" if error.get("type") == "cancelled" else "error"
            said = error.get("message")
            if isinstance(said, str) and said and said not in (text or ""):
                text = f"{text}\n{said}" if text else said
        result = ToolResult(text=text, images=images)
        if isinstance(error, Mapping) and error.get("wording") and text == error.get("message"):
            result.wording = error["wording"]  # the reader's words alone: an approver's
        self.transcript.update(call, status=status, result=result, **times)


def _thinking(part: Mapping[str, Any], timestamp: str | None) -> Thinking:
    reasoning = _string(part.get("reasoning"))
    summary = _string(part.get("summary"), None)
    if part.get("redacted"):
        payload = reasoning or part.get("signature")
        if summary:
            return Thinking(text=summary, form="summary", data=payload, timestamp=timestamp)
        return Thinking(
            form="redacted", data=payload if isinstance(payload, str) else None, timestamp=timestamp
        )
    if not reasoning and summary:
        return Thinking(text=summary, form="summary", timestamp=timestamp)
    return Thinking(text=reasoning, form="text", timestamp=timestamp)


_ROOT = ""  # the scope of the sample's own events


class _Events:
    """A sample's flat event list, split into scopes: the sample's own, and one per call whose
    tool ran an agent (or whose ``tool`` span holds events) or per subtask span.

    Inspect records every event in one list, each with the ``span_id`` of the span it happened
    in; spans nest by ``parent_id``. An event belongs to the nearest enclosing span that a call
    claims; the scorers' spans are set apart, and so are the model calls that wrote the summary
    of a summary compaction (:func:`_summarizing_calls`).
    """

    def __init__(self, context: _Context, events: list[Any], *, crash: str | None = None) -> None:
        self.context = context
        #: The error that ended the run these events are of (a failed attempt's, the sample's):
        #: what the call whose exception ended it returned, as Inspect records none on it.
        self.crash = crash
        self.scopes: dict[str, list[Mapping[str, Any]]] = {}
        spans: dict[str, tuple[str | None, str | None, str | None]] = {}  # id → parent, type, name
        claimed: dict[str, str] = {}  # span id → scope key
        tool_spans: list[tuple[str, int, int]] = []  # (span id, begin index, end index)
        begins: dict[str, int] = {}
        for index, event in enumerate(events):
            if not isinstance(event, Mapping):
                continue
            kind = event.get("event")
            if kind == "span_begin" and isinstance(event.get("id"), str):
                parent = event.get("parent_id")
                spans[event["id"]] = (
                    parent if isinstance(parent, str) else None,
                    _string(event.get("type"), None),
                    _string(event.get("name"), None),
                )
                begins[event["id"]] = index
                if event.get("type") == "subtask":
                    claimed[event["id"]] = f"subtask:{event['id']}"
            elif kind == "span_end" and isinstance(event.get("id"), str):
                began = begins.get(event["id"])
                if began is not None and spans[event["id"]][1] == "tool":
                    tool_spans.append((event["id"], began, index))
            elif kind == "tool" and isinstance(event.get("agent_span_id"), str):
                claimed[event["agent_span_id"]] = f"call:{event.get('id')}"
        for span_id, began, ended in tool_spans:  # a tool span belongs to the tool event in it
            parent, _, name = spans[span_id]
            # A handoff's tool span is inside a ``handoff`` span (``call_tool`` in
            # ``inspect_ai/model/_call_tools.py``), while its tool event keeps the span of the
            # agent that handed off: the handoff span's parent.
            if parent in spans and spans[parent][1] == "handoff":
                parent = spans[parent][0]
            for event in events[began + 1 : ended]:
                if (
                    isinstance(event, Mapping)
                    and event.get("event") == "tool"
                    and event.get("span_id") == parent
                    and event.get("function") == name
                ):
                    claimed.setdefault(span_id, f"call:{event.get('id')}")
                    break
        self._spans = spans
        self._claimed = claimed
        #: The summarizing calls of each summary compaction, by the ``id()`` of its event.
        self.summarizers = _summarizing_calls(events, context.pool)
        set_apart = {id(call) for calls in self.summarizers.values() for call in calls}
        scoring: list[str | None] = []  # the names of the old scorer steps open
        call_scopes: dict[str, str] = {}  # the scope of each tool event, by its call's id
        #: The scorer whose span (or old step) each model call of the scoring ran in, by the
        #: call's ``id()``: a model-graded scorer's call is shown as that scorer's.
        self.scorers: dict[int, str | None] = {}
        for event in events:
            scope = self._scope(event) if isinstance(event, Mapping) else _ROOT
            if id(event) in set_apart:
                scope = _SUMMARIZING
            kind = event.get("event") if isinstance(event, Mapping) else None
            call_id = event.get("id") if kind == "tool" else None
            interrupted = event.get("interrupted_tool_call_id") if kind == "interrupt" else None
            if isinstance(call_id, str):
                call_scopes.setdefault(call_id, scope)
            elif isinstance(interrupted, str) and interrupted in call_scopes:
                # Written in the span of the tool it interrupted (``_fire_on_interrupt`` of
                # ``inspect_ai/log/_samples.py`` runs in the tool): it stopped the agent
                # that called the tool, whose scope the call is in.
                scope = call_scopes[interrupted]
            # Before spans (0.3.94), a scorer ran in a ``step`` of type ``scorer``
            # (``transcript().step(name=scorer_name, type="scorer")`` in
            # ``inspect_ai/_eval/task/run.py``): its events, a model-graded scorer's model call
            # among them, are the scoring's, as a scorer span's are.
            step = isinstance(event, Mapping) and event.get("event") == "step"
            if step and event.get("type") in _SCORING_SPANS and event.get("action") == "begin":
                scoring.append(_string(event.get("name"), None) or None)
            if scoring:
                scope = "scoring"
            if scope == "scoring" and kind == "model":
                self.scorers[id(event)] = self._scorer(event) or (scoring[-1] if scoring else None)
            if step and event.get("type") in _SCORING_SPANS and event.get("action") == "end":
                scoring = scoring[:-1]
            self.scopes.setdefault(scope, []).append(event)
        #: The model calls that failed and were followed by another in their scope (by
        #: ``id()``): Inspect records each attempt of a retried call as a model event of its
        #: own, and a failure the agent caught lets the run go on; neither ended the turn.
        self.survived: set[int] = set()
        for scoped in self.scopes.values():
            failed: list[int] = []
            for event in scoped:
                if isinstance(event, Mapping) and event.get("event") == "model":
                    self.survived.update(failed)
                    failed = [id(event)] if event.get("error") else []
        #: The side calls (by ``id()``): :func:`_side_calls` of each conversation's scope.
        self.side_calls: set[int] = set()
        for scope, scoped in self.scopes.items():
            if scope not in ("scoring", _SUMMARIZING):
                main = context.model if scope == _ROOT else None
                self.side_calls.update(_side_calls(scoped, main, context))

    def _scope(self, event: Mapping[str, Any]) -> str:
        span = event.get("span_id")
        if event.get("event") == "subtask" and isinstance(span, str) and span in self._spans:
            span = self._spans[span][0]  # the subtask's call belongs to the span that ran it
        seen: set[str] = set()
        while isinstance(span, str) and span in self._spans and span not in seen:
            seen.add(span)
            parent, kind, _ = self._spans[span]
            if kind in _SCORING_SPANS:
                return "scoring"
            if span in self._claimed:
                return self._claimed[span]
            span = parent
        return _ROOT

    def _scorer(self, event: Mapping[str, Any]) -> str | None:
        """The name of the scorer whose span ``event`` ran in (``span(name=scorer_name,
        type="scorer")``, inside the ``scorers`` span, in ``inspect_ai/_eval/task/run.py``)."""
        span = event.get("span_id")
        seen: set[str] = set()
        while isinstance(span, str) and span in self._spans and span not in seen:
            seen.add(span)
            parent, kind, name = self._spans[span]
            if kind == "scorer":
                return name
            span = parent
        return None

    def read(self, conversation: _Conversation, scope: str) -> None:
        """Feed the events of ``scope`` to ``conversation``, its calls' scopes nested."""
        source = self.context.source
        for event in self.scopes.get(scope, []):
            if not isinstance(event, Mapping):
                self.context.warn("an event that is not an object", "event/(invalid)")
                continue
            kind = event.get("event")
            kind = kind if isinstance(kind, str) else "(none)"
            record_type = f"event/{kind}"
            handler = _HANDLERS.get(kind)
            if handler is not None:
                # A handler returns the record type it did not show, if it showed nothing.
                unshown = handler(self, conversation, event)
                if unshown is None:
                    source.mapped(record_type)
                else:
                    source.ignored(unshown)
            elif kind in _IGNORED_EVENTS:
                source.ignored(record_type)
            else:
                self.context.warn(f"unknown event type {kind!r} skipped", record_type)
        conversation.after_stop()  # a termination no limit event followed still says so
        conversation.context_unshown()
        if scope == _ROOT:
            # The scoring ran after the run: a model-graded scorer's calls come last, each a
            # side call named for its scorer, whose tokens Inspect's model_usage counts (U-1).
            for event in self.scopes.get("scoring", []):
                if isinstance(event, Mapping) and event.get("event") == "model":
                    scorer = self.scorers.get(id(event))
                    _side_call(self, conversation, event, scoring=True, scorer=scorer)
                    source.mapped("scoring/model")
                else:
                    source.ignored("scoring")
            for _ in self.scopes.get(_SUMMARIZING, []):
                source.mapped(_SUMMARIZING)  # in the boundary of its compaction event

    def message_ids(self, scope: str) -> set[str]:
        """The ids of the messages the events of ``scope`` gave a model, it answered, or its
        tools returned."""
        ids: set[str] = set()
        for event in self.scopes.get(scope, []):
            kind = event.get("event") if isinstance(event, Mapping) else None
            if kind == "model":
                answer = _answer(event)
                messages = [*_model_input(event, self.context.pool), answer or {}]
                ids.update(
                    m["id"]
                    for m in messages
                    if isinstance(m, Mapping) and isinstance(m.get("id"), str)
                )
            elif kind == "tool" and isinstance(event.get("message_id"), str):
                ids.add(event["message_id"])
        return ids

    def child(self, scope: str, nested: Any) -> Transcript | None:
        """The transcript of a call's scope (or of events nested in its event), None when it
        shows nothing.

        Inspect opens a ``tool`` span around every tool it runs (``span(name=call.function,
        type="tool")`` in ``inspect_ai/model/_call_tools.py``), so a tool that ran no agent has
        a scope too: its own ``span_end``, and what the tool did there that is no step of a
        conversation: its sandbox commands and file access (``sandbox`` events, from
        ``inspect_ai/util/_sandbox/events.py``), its store changes (``store``), log records.
        Those are accounted for as they are read, and the call stays a plain call, not a
        sub-agent of no steps."""
        if scope not in self.scopes and not (isinstance(nested, list) and nested):
            return None
        child = Transcript()
        conversation = _Conversation(self.context, child)
        if scope in self.scopes:
            self.read(conversation, scope)
        if isinstance(nested, list) and nested:  # older logs nest a call's events in it
            _Events(self.context, nested).read(conversation, _ROOT)
        return child if child.entries else None


def _is_summary(message: Any) -> bool:
    """Whether ``message`` is the summary a summary compaction put in place of the
    conversation: Inspect marks it ``metadata={"summary": True}`` (``CompactionSummary.compact``
    in ``inspect_ai/model/_compaction/summary.py``) and finds it by the key alone
    (``"summary" in (m.metadata or {})``, there and in ``model/_trim.py``)."""
    metadata = message.get("metadata") if isinstance(message, Mapping) else None
    return isinstance(metadata, Mapping) and "summary" in metadata


def _summarizing_calls(events: list[Any], pool: list[Any]) -> dict[int, list[Mapping[str, Any]]]:
    """The model calls that wrote the summary of each summary compaction, in the order they
    ran, by the ``id()`` of its ``compaction`` event.

    Inspect marks no such call: ``CompactionSummary.compact`` calls ``model.generate`` on the
    conversation and a prompt of its own, with no span of its own (the event is in the span of
    the agent it compacts, its ``role`` the compacted model's), once per pass
    (``_perform_compaction`` in ``_compaction/_compaction.py`` summarizes again while the
    input is over the threshold); then ``compact_fn`` logs the ``compaction`` event. So they
    are the model events of that span right before the event whose answer no model call was
    ever given: the summary reaches the conversation rewritten, as a user message of its own,
    while each answer of the agent's is in the next input (the summarizing call's among them).
    """
    found: dict[int, list[Mapping[str, Any]]] = {}
    given: set[str] | None = None  # ids of the messages some model call was given
    for index, event in enumerate(events):
        if not isinstance(event, Mapping) or event.get("event") != "compaction":
            continue
        if event.get("type") != "summary" or not _summarized(events, index, pool):
            continue
        if given is None:
            given = {
                m["id"]
                for e in events
                if isinstance(e, Mapping) and e.get("event") == "model"
                for m in _model_input(e, pool)
                if isinstance(m, Mapping) and isinstance(m.get("id"), str)
            }
        calls: list[Mapping[str, Any]] = []
        for earlier in events[index - 1 :: -1] if index else ():
            if not isinstance(earlier, Mapping) or earlier.get("span_id") != event.get("span_id"):
                continue  # an event of another span, run alongside
            kind = earlier.get("event")
            answer = _answer(earlier) if kind == "model" else None
            if answer is not None and isinstance(answer.get("id"), str):
                if answer["id"] in given:
                    break  # the agent's own answer: the compaction came before its next call
                calls.append(earlier)
            elif kind not in _IGNORED_EVENTS:  # a log record between them is no step
                break
        if calls:
            found[id(event)] = calls[::-1]
    return found


def _summarized(events: list[Any], index: int, pool: list[Any]) -> bool:
    """Whether the ``compaction`` event at ``index`` had the model write a summary: it names
    ``CompactionSummary`` as the strategy that applied, or (a strategy of another name: an
    older ``CompactionAuto`` did not say which of native compaction and a summary applied, a
    subclass has a name of its own) the next model call of its span is given a summary message
    that no call was given before."""
    event = events[index]
    metadata = event.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    if (metadata.get("strategy_applied") or metadata.get("strategy")) == _SUMMARY_STRATEGY:
        return True
    span = event.get("span_id")
    after = next(
        (
            e
            for e in events[index + 1 :]
            if isinstance(e, Mapping) and e.get("event") == "model" and e.get("span_id") == span
        ),
        None,
    )
    summaries = [m for m in _model_input(after, pool) if _is_summary(m)] if after else []
    if not summaries:
        return False
    before = {
        m.get("id")
        for e in events[:index]
        if isinstance(e, Mapping) and e.get("event") == "model"
        for m in _model_input(e, pool)
        if isinstance(m, Mapping)
    }
    return any(m.get("id") not in before for m in summaries)


def _side_calls(events: list[Mapping[str, Any]], main: str | None, context: _Context) -> set[int]:
    """The model calls of ``events`` (one scope's) that are side calls, by ``id()``: calls of a
    model other than the one the scope's conversation runs on, whose answer that conversation
    never took in.

    A solver or a tool may call another model on the way: a model role (``get_model(role=
    "critic")``, ``ModelEvent.role``; the eval's own model has none) or another model by
    name. Inspect records its call in the span it ran in, beside the conversation's, with an
    input of its own (Inspect's viewer titles it ``Model Call (critic): mockllm/critic``): its
    prompt is no user's. The scope's own calls are those without a role, of the eval's model
    in the sample's own scope (``main``; an agent's scope runs on its own model). A scope with
    none of them runs on a role's model altogether (an agent given ``get_model(role=…)``): then
    none is a side call. A call whose answer a later own call was given took part in the
    conversation (a solver appended it to the messages): it is read as one of its steps.
    """
    calls = [e for e in events if isinstance(e, Mapping) and e.get("event") == "model"]

    def own(event: Mapping[str, Any]) -> bool:
        role = event.get("role")
        if isinstance(role, str) and role:
            return False
        return main is None or event.get("model") in (None, "", main)

    if all(own(e) for e in calls) or not any(own(e) for e in calls):
        return set()

    def key(message: Any) -> str | None:
        if not isinstance(message, Mapping):
            return None
        own_id = message.get("id")
        return own_id if isinstance(own_id, str) else _message_key(context.resolve(message))

    side: set[int] = set()
    given: set[str | None] = set()  # the messages the own calls after this one were given
    for event in reversed(calls):
        if own(event):
            given.update(key(m) for m in _model_input(event, context.pool))
        elif (answer := _answer(event)) is None or key(answer) not in given:
            side.add(id(event))
    return side


def _answer_text(context: _Context, event: Mapping[str, Any]) -> str | None:
    """The text a model event answered (its reasoning and calls left out)."""
    answer = _answer(event)
    content = context.resolve(answer.get("content")) if answer is not None else None
    text, _ = text_and_images(content, _part_text)
    return text or None


def _times(context: _Context, event: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """An event's ``timestamp`` and ``completed``; one that is no time is left out, said once
    of the event however often its times are read."""
    said = id(event) in context.timed
    context.timed[id(event)] = event
    warn = (lambda _: None) if said else context.warn
    uuid, kind = event.get("uuid"), event.get("event")
    what = f"{str(kind)[:40]} event" if isinstance(kind, str) else "an event"
    what += f" {uuid[:80]}" if isinstance(uuid, str) and uuid else ""
    return (
        warned_timestamp(event.get("timestamp"), checked_timestamp, warn, what, name="timestamp"),
        warned_timestamp(event.get("completed"), checked_timestamp, warn, what, name="completed"),
    )


def _model_input(event: Mapping[str, Any], pool: list[Any]) -> list[Any]:
    """The input messages of a model event: its own, else the ranges of the sample's message
    pool (``events_data``) its ``input_refs`` name."""
    inputs = event.get("input")
    if not inputs and isinstance(event.get("input_refs"), list):
        inputs = []
        for ref in event["input_refs"]:
            if isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref):
                inputs.extend(pool[ref[0] : ref[1]])
    return inputs if isinstance(inputs, list) else []


def _answer(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The message a model event's output holds (its first choice's), None without one."""
    output = event.get("output")
    choices = output.get("choices") if isinstance(output, Mapping) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    return message if isinstance(message, Mapping) else None


def _model_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    if id(event) in events.side_calls:
        _side_call(events, conversation, event)
    else:
        _conversation_step(events, conversation, event)


def _side_call(
    events: _Events,
    conversation: _Conversation,
    event: Mapping[str, Any],
    *,
    scoring: bool = False,
    scorer: str | None = None,
) -> None:
    """A side call (:func:`_side_calls`): a step of the conversation it was made in, named for
    the model (``critic model``, by its role; else the model's name), whose prompt is its
    description and whose answer (or error) is its result. What it was given and what it
    answered (reasoning, text with its usage, calls) are its own transcript, under the call
    (the messages the conversation already showed left out), never the user's turn. A call of
    the scoring (``scoring``) says so in ``meta["scoring"]``: the headers and the corpus row
    count it as none of the agent's tool calls (:func:`turnfold.process.is_scoring_call`);
    its scorer's (``scorer``: the scorer's name, ``model_graded_qa``) is named for the scorer
    and says so in ``meta["scorer"]``."""
    started, completed = _times(conversation.context, event)
    role = _string(event.get("role"), None) or None
    model = _string(event.get("model"), None) or None
    child = Transcript()
    side = _Conversation(events.context, child)
    side.seen = set(conversation.seen)
    side.unnamed = Counter(conversation.unnamed)
    _conversation_step(events, side, event)
    prompt = "\n\n".join(e.text for e in child.entries if isinstance(e, UserMessage) and e.text)
    error = _string(event.get("error"), None)
    status: ToolStatus = "unknown"  # never answered: a limit or an error cut it (L-3)
    if error:
        status = "error"
    elif event.get("pending") is not True and _answer(event) is not None:
        status = "success"
    name = scorer or (f"{role} model" if role else model or "model")
    meta: dict[str, Any] = {"side_call": True}
    if scoring:
        meta["scoring"] = True
    if scorer:
        meta["scorer"] = scorer
    uuid = event.get("uuid")
    call = ToolCall(
        call_id=f"model:{uuid}"
        if isinstance(uuid, str)
        else f"model@{len(conversation.transcript)}",
        name=name,
        args={"model": model, "role": role, "input": prompt},
        description=prompt.strip().split("\n", 1)[0] or None,
        status=status,
        result=ToolResult(text=error or _answer_text(events.context, event)),
        started_at=started,
        ended_at=completed,
        timestamp=started,
        meta=meta,
        subagent=SubAgent(
            name=role or model,
            task=prompt or None,
            transcript=child if child.entries else None,
            tool_count=len(child.tool_calls()),
            is_run=False,
        ),
    )
    conversation.append(call)


def _conversation_step(
    events: _Events, conversation: _Conversation, event: Mapping[str, Any]
) -> None:
    """A model call of the conversation: its new input messages, then its answer."""
    started, completed = _times(conversation.context, event)
    copies: Counter[str] = Counter()  # of each message without an id in this input
    handoff: str | None = None  # the handoff whose returned messages these are
    for message in _model_input(event, events.context.pool):
        role = message.get("role") if isinstance(message, Mapping) else None
        own_id = message.get("id") if isinstance(message, Mapping) else None
        if role == "tool":
            handoff = str(message.get("tool_call_id"))
            handoff = handoff if handoff in conversation.handoffs else None
        elif role == "assistant" and (
            handoff is None or own_id not in conversation.handoffs[handoff][1]
        ):
            handoff = None  # the agent that handed off speaks again
        if isinstance(own_id, str) and own_id in conversation.seen:
            continue
        if own_id is None and isinstance(message, Mapping):
            # Messages had no id before 0.3.73 (``ChatMessage.id``), and each input
            # repeats the conversation so far: a copy is new only past as many copies of its
            # content as were shown (a prompt said twice is two prompts).
            key = _message_key(events.context.resolve(message))
            copies[key] += 1
            if copies[key] <= conversation.unnamed[key]:
                continue
        if role == "user" and handoff is not None:
            conversation.handed_back(message, handoff, started)
            continue
        if role == "assistant":
            # An earlier answer this scope did not see: history, not a new step. But Anthropic's
            # native compaction is an assistant message of the compacted input (``compact`` in
            # ``inspect_ai/model/_providers/anthropic.py``): its summary is the boundary's.
            content = events.context.resolve(message.get("content"))
            if isinstance(content, list):
                conversation.compaction_parts(content, started)
            continue
        if role == "tool":
            # A result only the next input shows (tools an agent ran out of Inspect's sight,
            # in a sandbox agent bridge) settles its call; any other is history.
            call = conversation.calls.get(str(message.get("tool_call_id")))
            if call is None or call.result is not None:
                continue
        conversation.read_message(message, timestamp=started)
    conversation.compacting = None  # the input a compaction event stood for has been read
    # The answer came when the call completed (``completed``, since 0.3.71). Without it, the
    # event's time is the only one: the answer's up to 0.3.47 (the event was written after the
    # call), the call's start after it (written before the call, ``pending``).
    answered = completed or started
    output = event.get("output")
    message = _answer(event)
    if message is not None:
        raw_usage = output.get("usage") if isinstance(output, Mapping) else None
        usage = usage_from(
            raw_usage,
            cache_apart=_cache_apart(raw_usage),
            input_tokens="input_tokens",
            output_tokens="output_tokens",
            cache_read_tokens="input_tokens_cache_read",
            cache_write_tokens="input_tokens_cache_write",
            reasoning_tokens="reasoning_tokens",
        )
        # Inspect's usage has one count of cache writes; an Anthropic response's own usage,
        # in the raw call, says how many were written for an hour (which costs more).
        call = events.context.resolve(event.get("call"))
        response = call.get("response") if isinstance(call, Mapping) else None
        usage = with_one_hour_writes(
            usage, response.get("usage") if isinstance(response, Mapping) else None
        )
        message = dict(message)
        message["model"] = _response_model(message, output, event)
        fallback = output.get("fallback") if isinstance(output, Mapping) else None
        if isinstance(fallback, Mapping):  # before the answer, which stays the turn's last
            said = {"model": fallback.get("model"), "fallback": message["model"]}
            conversation.append(
                notice("reader.model_fallback", said, subtype="model_fallback", timestamp=answered)
            )
        conversation.read_message(message, timestamp=answered, usage=usage)
    error = event.get("error")
    if isinstance(error, str) and error:
        if id(event) in events.survived:
            conversation.append(
                notice("reader.model_call_failed_went_on", {"said": error}, level="warning",
                       subtype="model_error", timestamp=answered)
            )  # fmt: skip
        else:
            conversation.append(AssistantError(message=error, timestamp=answered))


def _response_model(message: Mapping[str, Any], output: Any, event: Mapping[str, Any]) -> Any:
    """The model that wrote a response: the fallback model that served it when the one asked
    for did not (``ModelOutput.fallback.fallback_model``), else the message's own
    (``ChatMessageAssistant.model``, since 0.3.83), else the output's (``ModelOutput.model``:
    the provider's name of it, ``gpt-4o-mini-2024-07-18``; ``""`` when unknown), else the
    event's (Inspect's name of the model it was asked for, ``openai/gpt-4o-mini``)."""
    said = output.get("model") if isinstance(output, Mapping) else None
    fallback = output.get("fallback") if isinstance(output, Mapping) else None
    served = fallback.get("fallback_model") if isinstance(fallback, Mapping) else None
    for model in (served, message.get("model"), said, event.get("model")):
        if isinstance(model, str) and model:
            return model
    return None


def _cache_apart(usage: Any) -> bool:
    """Whether an Inspect ``ModelUsage`` counts cached input apart from ``input_tokens``.

    Inspect keeps each provider's own convention: its Anthropic provider counts the cache
    apart (``total_tokens`` = input + output + cache reads + cache writes), its OpenAI and
    Google providers within (``total_tokens`` = input + output). The total says which.
    """
    if not isinstance(usage, Mapping):
        return False
    given, written, total = (
        usage.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")
    )
    cached = [usage.get(k) for k in ("input_tokens_cache_read", "input_tokens_cache_write")]
    if not (isinstance(given, int) and isinstance(written, int) and isinstance(total, int)):
        return False
    extra = sum(c for c in cached if isinstance(c, int))
    return extra > 0 and given + written + extra == total


def _tool_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    started, ended = _times(conversation.context, event)
    call_id = _string(event.get("id"))
    call = conversation.calls.get(call_id)
    if call is None:  # a call no model output of this scope made (a solver ran the tool)
        call = conversation.start_call(
            {"id": call_id, "function": event.get("function"), "arguments": event.get("arguments")},
            None,
            started,
        )
    if event.get("pending") is True:
        # Written when the call started and never completed: a limit, an error or an
        # interrupt cut it (which cancels it), or the log is still being written. Its empty
        # result is no result (L-3).
        conversation.transcript.update(call, started_at=started or call.started_at)
        _nest(events, conversation, call, event)
        return
    result = events.context.resolve(event.get("result"))
    text, images = text_and_images(result, _part_text)
    if text is None and result is not None and not isinstance(result, list):
        text = stringify(result)
    if event.get("truncated"):
        call.meta["truncated"] = event["truncated"]
    error = events.context.resolve(event.get("error"))
    if error is None and event.get("failed") is True:  # a hard failure that said nothing
        # An approver's termination is one (``call_tool`` in ``inspect_ai/model/
        # _call_tools.py`` raises before the tool runs): its approval event says why. Else the
        # tool raised: ``execute_tools`` re-raises the exception, which ends the run, and the
        # error of the attempt or the sample is the exception's.
        said, wording = conversation.refusals.get(call_id, (events.crash or "", None))
        error = {"type": "failed", "message": said, "wording": wording}
    conversation.settle(
        call,
        text,
        images,
        error,
        started_at=started or call.started_at,
        ended_at=ended,
    )
    _nest(events, conversation, call, event)


def _nest(
    events: _Events, conversation: _Conversation, call: ToolCall, event: Mapping[str, Any]
) -> None:
    """The agent a ``tool`` event ran (its scope, or the events nested in it) under its call."""
    call_id = _string(event.get("id"))
    child = events.child(f"call:{call_id}", event.get("events"))
    if isinstance(event.get("agent"), str):  # a handoff (``ToolEvent.agent``)
        conversation.handoffs[call_id] = (call, events.message_ids(f"call:{call_id}"))
    if child is not None:
        agent = event.get("agent") if isinstance(event.get("agent"), str) else call.name
        conversation.transcript.update(
            call,
            subagent=SubAgent(
                name=agent,
                task=_task_of(call.args),
                transcript=child,
                tool_count=len(child.tool_calls()),
            ),
        )


def _task_of(args: Any) -> str | None:
    if isinstance(args, Mapping):
        for key in ("input", "task", "prompt", "message"):
            if isinstance(args.get(key), str):
                return str(args[key])
    return None


def _subtask_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    started, ended = _times(conversation.context, event)
    name = _string(event.get("name"), "subtask")
    args = events.context.resolve(event.get("input"))
    span = event.get("span_id")
    call = ToolCall(
        call_id=f"subtask:{span if isinstance(span, str) else len(conversation.transcript)}",
        name=name,
        args=args,
        description=describe_args(name, args),
        status="unknown",
        started_at=started,
        timestamp=started,
        meta={"subtask": True},
    )
    conversation.append(call)
    result = events.context.resolve(event.get("result"))
    status: ToolStatus = "success" if ended is not None else "unknown"
    conversation.transcript.update(
        call,
        status=status,
        result=ToolResult(text=None if result is None else stringify(result)),
        ended_at=ended,
    )
    child = events.child(f"subtask:{span}", event.get("events"))
    if child is not None and child.entries:
        conversation.transcript.update(
            call,
            subagent=SubAgent(name=name, transcript=child, tool_count=len(child.tool_calls())),
        )


def _sample_init(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    state = event.get("state")
    messages = state.get("messages") if isinstance(state, Mapping) else None
    started, _ = _times(conversation.context, event)
    for message in messages if isinstance(messages, list) else []:
        shown = len(conversation.transcript.entries)
        conversation.read_message(message, timestamp=started)
        new = conversation.transcript.entries[shown:]
        conversation.opening.extend(e for e in new if isinstance(e, UserMessage))


def _limit_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    said = _string(event.get("message"), None)
    at = _times(conversation.context, event)[0]
    conversation.cancel_open_calls(at)
    conversation.append(
        AbortMarker(reason=said, timestamp=at) if said
        else stop("reader.limit_reached", {"limit": event.get("type")}, timestamp=at)
    )  # fmt: skip
    conversation.after_stop()


def _error_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    error = event.get("error")
    said = error.get("message") if isinstance(error, Mapping) else None
    conversation.cancel_open_calls(_times(conversation.context, event)[0])
    at = _times(conversation.context, event)[0]
    if _is_cancellation(said):
        conversation.append(stop(_CANCELLED, timestamp=at))
    else:
        conversation.append(
            AssistantError(message=str(said), timestamp=at) if said
            else failure("reader.sample_failed", timestamp=at)
        )  # fmt: skip
    conversation.errored = True


_CANCELLED = "reader.sample_cancelled"


def _is_cancellation(message: Any) -> bool:
    """Whether a sample's error is its cancellation, which Inspect counts as no error: the repr
    of the backend's cancellation exception (``is_cancellation_message`` in
    ``inspect_ai/_util/error.py``), what an operator's cancel of one sample records."""
    return isinstance(message, str) and message.startswith(("CancelledError(", "Cancelled("))


def _interrupt_event(
    events: _Events, conversation: _Conversation, event: Mapping[str, Any]
) -> None:
    said = {"source": event.get("source"), "during": event.get("interrupted")}
    conversation.cancel_open_calls(_times(conversation.context, event)[0])
    conversation.append(
        stop("reader.interrupted_during", said, timestamp=_times(conversation.context, event)[0])
    )


def _compaction_event(
    events: _Events, conversation: _Conversation, event: Mapping[str, Any]
) -> None:
    # A summary compaction's summary is the answer of its last summarizing call (the one whose
    # result was kept), until the summary message of the next input says it as Inspect wrote
    # it into the conversation (:meth:`_Conversation.compaction_summary`): a sample that ended
    # right after the compaction has no such input.
    summarizers = events.summarizers.get(id(event))
    boundary = CompactionBoundary(
        summary=_answer_text(events.context, summarizers[-1]) if summarizers else None,
        trigger=_string(event.get("type"), None),
        pre_tokens=as_int(event.get("tokens_before")),
        timestamp=_times(conversation.context, event)[0],
    )
    conversation.append(boundary)
    conversation.compacting = boundary


def _approval_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    call = event.get("call")
    call_id = call.get("id") if isinstance(call, Mapping) else None
    decision = _string(event.get("decision"))
    if isinstance(call_id, str) and decision not in ("approve", "modify", "escalate"):
        # The reader's words, said in the view's language (turnfold.formats.wording).
        key = _APPROVER_SAID.get(decision, "reader.approver_decided")
        said = {"approver": _string(event.get("approver"), "?"), "decision": decision}
        explanation = _string(event.get("explanation"))
        if explanation:
            key, said = f"{key}.said", {**said, "said": explanation}
        conversation.refusals[call_id] = worded(key, said)


_APPROVER_SAID = {"terminate": "reader.approver_terminated", "reject": "reader.approver_rejected"}


def _review_event(
    events: _Events, conversation: _Conversation, event: Mapping[str, Any]
) -> str | None:
    """A tool-result reviewer's decision (``ReviewEvent``, ``inspect_ai/event/_review.py``):
    ``terminate`` ends the sample, whose limit event says only that a reviewer did; the
    reviewer's explanation is a warning notice. ``continue`` and ``escalate`` (to the next
    reviewer, whose own event follows) change nothing shown."""
    if event.get("decision") != "terminate":
        return "event/review:continue"
    call = event.get("call")
    function = call.get("function") if isinstance(call, Mapping) else None
    said = {"reviewer": _string(event.get("reviewer"), "?"), "function": _string(function, "?")}
    explanation = _string(event.get("explanation"))
    key = "reader.review_terminated.no_reason"
    if explanation:
        key, said = "reader.review_terminated", {**said, "said": explanation}
    at = _times(conversation.context, event)[0]
    # Inspect's limit event (``operator``) follows: the notice goes after its stop marker.
    conversation.stopped_by.append(
        notice(key, said, level="warning", subtype="review", timestamp=at)
    )
    return None


#: The sentinel decisions that change the run (``SentinelAction`` in
#: ``inspect_ai/event/_sentinel.py``): ``proceed`` lets it go on, ``escalate`` hands the step
#: to the next layer, whose own report follows.
_SENTINEL_ACTIONS = frozenset({"modify", "reject", "terminate"})


def _sentinel_event(
    events: _Events, conversation: _Conversation, event: Mapping[str, Any]
) -> str | None:
    """A sentinel monitor's or protocol's report on one step (``SentinelEvent``): a reported
    decision that changed the run, or a monitor that raised, is a warning notice; an
    observation (a suspicion score, kept in the log for analysis), ``proceed``, ``escalate``
    and reports that took no effect (cancelled, bypassed, superseded) are counted, not
    shown."""
    status, action = event.get("status"), event.get("action")
    said = {
        "factory": _string(event.get("factory"), "?"),
        "stage": _string(event.get("stage"), "?"),
        "action": _string(action, "?"),
    }
    at = _times(conversation.context, event)[0]
    if status == "error":
        said["said"] = _string(event.get("error"), "?")
        key = "reader.sentinel_failed"
    elif status == "reported" and event.get("kind") == "decision" and action in _SENTINEL_ACTIONS:
        explanation = _string(event.get("explanation")) or _string(event.get("message"))
        key = "reader.sentinel_decided.no_reason"
        if explanation:
            key, said = "reader.sentinel_decided", {**said, "said": explanation}
    else:
        return "event/sentinel:report"
    conversation.append(notice(key, said, level="warning", subtype="sentinel", timestamp=at))
    return None


def _info_event(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    data = events.context.resolve(event.get("data"))
    source = _string(event.get("source"), None)
    text = stringify(data)
    text = f"{source}: {text}" if source else text
    conversation.append(
        SystemNotice(text=text, subtype="info", timestamp=_times(conversation.context, event)[0])
    )


def _structure(events: _Events, conversation: _Conversation, event: Mapping[str, Any]) -> None:
    """Spans shape the scopes (:class:`_Events`); their markers add no entry."""


_HANDLERS: dict[str, Any] = {
    "model": _model_event,
    "tool": _tool_event,
    "subtask": _subtask_event,
    "sample_init": _sample_init,
    "sample_limit": _limit_event,
    "error": _error_event,
    "interrupt": _interrupt_event,
    "compaction": _compaction_event,
    "info": _info_event,
    "approval": _approval_event,
    "review": _review_event,
    "sentinel": _sentinel_event,
    "span_begin": _structure,
    "span_end": _structure,
}


# --- metadata (H-6) ------------------------------------------------------------------------


def _header_metadata(header: Mapping[str, Any], metadata: dict[str, Any]) -> None:
    spec = header.get("eval")
    spec = spec if isinstance(spec, Mapping) else header  # a journal's start record is flatter
    for key, name in (("task", "task"), ("model", "model"), ("solver", "agent")):
        value = spec.get(key)
        if isinstance(value, str) and value:
            metadata[name] = value
    if isinstance(spec.get("eval_id"), str):
        metadata["eval_id"] = spec["eval_id"]
    if isinstance(header.get("status"), str):
        metadata["eval_status"] = header["status"]


def _score_number(value: Any) -> float | None:
    """A score value as Inspect counts it (``value_to_float``), None when it is no number."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        if value.lower() in ("yes", "true"):
            return 1.0
        if value.lower() in ("no", "false"):
            return 0.0
    return None


def _score_value(value: Any) -> Any:
    """One scorer's value as ``metadata["score"]`` holds it: a number as Inspect counts it
    (:func:`_score_number`); a multi-metric scorer's mapping (``Score(value={"a": 1, "b":
    0})``) with its values counted alike, or their one number when they are all the same
    number (any reduction of them is that number); else the value as it is.

    >>> [_score_value(v) for v in ("C", {"a": "C", "b": 1}, {"x": 1}, {"a": 1, "b": 0}, [1])]
    [1.0, 1.0, 1.0, {'a': 1.0, 'b': 0.0}, [1]]
    """
    number = _score_number(value)
    if number is not None or not isinstance(value, Mapping) or not value:
        return number if number is not None else value
    counted = {k: n if (n := _score_number(v)) is not None else v for k, v in value.items()}
    numbers = [n for n in counted.values() if isinstance(n, float) and math.isfinite(n)]
    if len(numbers) == len(counted) and len(set(numbers)) == 1:
        return numbers[0]
    # Metrics that differ have no one number: a mean would be a score no metric gave, so the
    # sample's score is the mapping (the corpus row's is null) and its outcome goes by each
    # metric (score_outcome).
    return counted


def score_outcome(value: Any) -> str | None:
    """What one scorer's value says of the sample: ``"pass"``, ``"fail"`` or None (the rule of
    the module docstring); a multi-metric scorer's mapping what its metrics say together, as
    several scorers' values do (:func:`_said_together`).

    >>> [score_outcome(v) for v in ("C", "I", "N", "P", 1, 0.0, 0.5, True, {"a": 1})]
    ['pass', 'fail', 'fail', None, 'pass', 'fail', None, 'pass', 'pass']
    >>> [score_outcome(v) for v in ({"a": 1, "b": 0}, {"a": "C", "n": 7}, {"a": 0.5}, {})]
    ['fail', 'pass', None, None]
    """
    if isinstance(value, Mapping):
        # One level only: a metric's own mapping says nothing (a hostile value may nest deep).
        return _said_together(_one_outcome(v) for v in value.values())
    return _one_outcome(value)


def _said_together(said: Iterable[str | None]) -> str | None:
    """What several values say together: any failing one fails, all passing ones pass; none
    that says anything, None."""
    known = [s for s in said if s is not None]
    if not known:
        return None
    return "fail" if "fail" in known else "pass"


def _one_outcome(value: Any) -> str | None:
    """:func:`score_outcome` of a value that is no mapping (one that is says nothing)."""
    if isinstance(value, str):
        return {"C": "pass", "I": "fail", "N": "fail"}.get(value)
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, (int, float)):
        return "pass" if value == 1 else "fail" if value == 0 else None
    return None


def _sample_metadata(
    record: Mapping[str, Any], transcript: Transcript, conversation: _Conversation
) -> None:
    metadata = transcript.metadata
    metadata["sample"] = record.get("id")
    if as_int(record.get("epoch")) is not None:
        metadata["epoch"] = record["epoch"]
    for key in ("target", "started_at", "completed_at", "total_time", "working_time"):
        if record.get(key) is not None:
            metadata[key] = record[key]
    scores: dict[str, dict[str, Any]] = {}
    raw_scores = record.get("scores")
    for scorer, score in raw_scores.items() if isinstance(raw_scores, Mapping) else ():
        if isinstance(score, Mapping):
            scores[scorer] = {
                k: score[k] for k in ("value", "answer", "explanation") if score.get(k) is not None
            }
    if scores:
        metadata["scores"] = scores
        answer = next((s["answer"] for s in scores.values() if "answer" in s), None)
        if answer is not None:
            metadata["answer"] = answer
        values = {name: s.get("value") for name, s in scores.items()}
        if len(values) == 1:
            metadata["score"] = _score_value(next(iter(values.values())))
        else:  # each scorer's value as it is, a multi-metric one's metrics under its name
            metadata["score"] = {
                name: n if (n := _score_number(v)) is not None else v for name, v in values.items()
            }
    usage = record.get("model_usage")
    if isinstance(usage, Mapping) and usage:
        metadata["model_usage"] = usage
        costs = [u.get("total_cost") for u in usage.values() if isinstance(u, Mapping)]
        known = [c for c in costs if isinstance(c, (int, float)) and not isinstance(c, bool)]
        if known:
            metadata["cost_usd"] = float(sum(known))
    roles = record.get("role_usage")
    if isinstance(roles, Mapping) and roles:  # the same tokens as model_usage, by model role
        metadata["role_usage"] = roles
    retries = _retries(record)
    if retries:
        metadata["error_retries"] = retries
    fallbacks = [  # the sample's roll-up: every generate call's, scorers' too
        {k: f[k] for k in ("model", "fallback_model", "count") if k in f}
        for f in as_list(record.get("model_fallbacks"))
        if isinstance(f, Mapping)
    ]
    if fallbacks:
        metadata["model_fallbacks"] = fallbacks
    limit = record.get("limit")
    if isinstance(limit, Mapping):
        metadata["limit"] = dict(limit)
    error = record.get("error")
    if isinstance(error, Mapping) and _is_cancellation(error.get("message")):
        metadata["cancelled"] = error["message"]
        if not conversation.errored:
            transcript.append(stop(_CANCELLED))
    elif isinstance(error, Mapping):
        said = error.get("message")
        metadata["error"] = said if isinstance(said, str) else stringify(error)
        if not conversation.errored:
            transcript.append(AssistantError(message=str(metadata["error"])))
    # An invalidated sample keeps the outcome its scores give, as Inspect keeps its scores
    # (``invalidate_samples`` changes none): H-6 has four outcomes, and the invalidation is
    # said apart (metadata["invalidation"], its notice, the outcome badge).
    outcome = _outcome(metadata, scores)
    if outcome is not None:
        metadata["outcome"] = outcome


#: How far the wall clock's span of a sample may be from Inspect's own timing of it before the
#: reader says they disagree: a minute, and a tenth of the timing. The two measure the same
#: stretch (``started_at`` is taken as the sample clock starts, ``completed_at`` as it stops,
#: in ``create_eval_sample``) and agree to the millisecond unless the computer's clock changed.
_CLOCK_SLACK_S = 60.0
_CLOCK_SLACK_SHARE = 0.1


def _duration(context: _Context, record: Mapping[str, Any], transcript: Transcript) -> None:
    """The sample's duration as Inspect timed it, ``metadata["duration_s"]``, which the session
    header and the corpus row show (:func:`turnfold.session.session_facts`) rather than the span
    of the sample's stamps: ``total_time``, the span of its sample clock (``time.monotonic``,
    ``create_eval_sample`` in ``inspect_ai/_eval/task/run.py``), which a change of the
    computer's clock leaves alone; else ``completed_at`` less ``started_at``. ``working_time``
    leaves out the waits (rate limits, retries) the sample still took, so it is no duration.

    The stamps of its events, ``started_at`` and ``completed_at`` are the wall clock's: where
    they run far from Inspect's timing (a clock set forward or back while it ran, events stamped
    after the sample completed), or they step otherwise than Inspect's own clock (an event
    stamped earlier than the one before it: a clock set back; ``started_at`` off the prompt's
    stamp and the setup's time: a clock set as the sample started;
    :mod:`~turnfold.formats.harnesses.inspect_clock`), a warning says so, and the stamps after
    each change found are put back on the clock the sample started on for the timeline
    (:func:`~turnfold.formats.harnesses.inspect_clock.restate`). The setup's stamps are no
    other sign of it: the sandbox's setup and the attempts retried before run before the
    sample's clock. Those attempts are looked at each on its own clock
    (:func:`_attempts_clock_changes`).
    """
    started, completed = utc(record.get("started_at")), utc(record.get("completed_at"))
    timed, by = _seconds(record.get("total_time")), "total_time"
    if timed is None and started is not None and completed is not None and completed > started:
        timed, by = (completed - started).total_seconds(), "started_at to completed_at"
    if timed is None:
        return
    transcript.metadata["duration_s"] = timed
    retried, first = _attempts_clock_changes(context, record)
    found = ClockChanges(first=first)
    far, span = False, 0.0
    latest = _latest(transcript, completed) if started is not None else None
    if started is not None and latest is not None:
        span = (latest - started).total_seconds()
        slack = max(_CLOCK_SLACK_S, _CLOCK_SLACK_SHARE * timed)
        far = abs(span - timed) > slack
        # How far the clock was set in all while the sample ran: its span by the wall clock
        # less by the monotonic one (the waits are in both).
        net = ((completed or latest) - started).total_seconds() - timed
        found = clock_changes(_events_of(record), started=started, ended=completed,
                              longest=timed + slack, slack_s=slack, net_s=net, first=first,
                              ended_working=_seconds(record.get("working_time")))  # fmt: skip
    if far:
        apart = format_duration(abs(span) * 1000)
        context.warn(
            f"the sample's clock times disagree with Inspect's timing of it: its start "
            f"(started_at) and its last moment (its events, completed_at) are {apart} apart, "
            f"but Inspect timed the sample at {format_duration(timed * 1000)} ({by}); the "
            "computer's clock changed while it ran, or events were stamped later. The "
            "duration shown is Inspect's, and no turn's duration holds the change"
            + _changes_said(found.changes)
        )
    elif found.changes:
        context.warn(
            "the computer's clock changed while the sample ran: its stamps (its events', "
            "started_at, completed_at) step otherwise than Inspect's own clock of the sample "
            "(working_start; the order of the log where it records none)"
            + _changes_said(found.changes)
            + ". The duration shown is Inspect's, and no turn's duration holds the change"
        )
    if not far and not found.changes and not retried:
        return
    shifts: dict[datetime, float] = {}
    for attempt in retried:
        shifts.update(attempt.shifts)
    shifts.update(found.shifts)  # the sample's own, should a stamp be in both
    restate(transcript, shifts)
    measured = all(changes.measured for changes in (found, *retried))
    located = bool(found.changes) or any(attempt.changes for attempt in retried)
    _unmeasured_turns(transcript, timed, measured, located)


def _latest(transcript: Transcript, completed: datetime | None) -> datetime | None:
    """The sample's last moment by the wall clock: ``completed_at``, or a later entry's stamp
    (an event stamped after the sample completed)."""
    stamps = [completed]
    for entry in transcript.entries:
        stamps.append(utc(entry.timestamp))
        if isinstance(entry, ToolCall):
            stamps.append(utc(entry.ended_at))
    return max((s for s in stamps if s is not None), default=None)


def _attempts_clock_changes(
    context: _Context, record: Mapping[str, Any]
) -> tuple[list[ClockChanges], float]:
    """The changes of the clock inside each attempt retried before the one the sample holds
    (``error_retries``), each warned of by its number; and the shift of the clock they left,
    which the sample's own attempt starts on (:func:`~turnfold.formats.harnesses.
    inspect_clock.clock_changes`'s ``first``).

    Each attempt's working time started anew (``init_sample_working_time`` in
    ``_task_run_sample_attempt``), and Inspect kept neither its start nor its timing: a clock
    set back is found in the events kept of it as in the sample's own, and a clock set forward
    only as setting one set back right again (how far it was set in all, ``net_s``, taken as
    none): with no timing, a wait ahead of the working time is told from a jump by nothing
    else."""
    found: list[ClockChanges] = []
    first = 0.0
    for attempt, retry in enumerate(_retry_records(record), start=1):
        changes = clock_changes(retry.get("events"), started=None, ended=None,
                                longest=math.inf, slack_s=_CLOCK_SLACK_S, net_s=0.0,
                                first=first)  # fmt: skip
        if not changes.changes and not first:
            continue
        found.append(changes)
        first -= sum(changes.changes)
        if changes.changes:
            context.warn(
                f"the computer's clock changed while attempt {attempt} of the sample ran "
                "(retried after its error): an event is stamped earlier than the one before "
                "it on Inspect's own clock of the attempt (working_start; in the order of the "
                "log where it records none)" + _changes_said(changes.changes) + ". No turn's "
                "duration holds the change"
            )
    return found, first


def _changes_said(changes: list[float]) -> str:
    """The changes found, as the warning names them: ``; it was set 43h forward``."""
    said = [
        # To the second: the two clocks are read microseconds apart, total_time kept to the
        # millisecond, and a change is one of a second at the least (inspect_clock.BACK_S).
        f"{format_duration(round(abs(change)) * 1000, hide_trailing_zeros=True)} "
        f"{'forward' if change > 0 else 'back'}"
        for change in changes[:5]
    ]
    more = f" and {len(changes) - 5} more times" if len(changes) > 5 else ""
    return f"; it was set {', then '.join(said)}{more}" if said else ""


def _unmeasured_turns(
    transcript: Transcript, timed: float, measured: bool = True, located: bool = False
) -> None:
    """After a clock change (:func:`_duration` warned of it): no turn's duration is read from
    stamps whose span may hold the change (P-7: never a wrong duration). Inspect times the
    sample alone, never a turn, so a sample of one turn takes the sample's timing (``timed``)
    as the turn's (``meta["turn_duration_ms"]`` of its last entry, the duration a source
    records for a turn: :func:`turnfold.process.recorded_duration_ms`); that holds the
    sample's setup and scoring too, a few moments that a 43-hour span does not measure better.

    In a sample of several turns, a turn whose stamps were all taken on one clock (the change
    found, and between turns: none of them shifted, or all by the same) is measured by them as
    any turn is. A turn the clock changed inside is measured by its stamps put back on the
    first clock (:func:`~turnfold.formats.harnesses.inspect_clock.span_on_first_clock_ms`):
    the step that held the change lasts the working time Inspect gave it, the others what the
    wall clock says. Where that cannot be (a change found by the wall clock alone, ``measured``
    False, whose step's length is unknown; the stamps disagree with Inspect's timing but no
    change was found in them: ``located`` False, and no entry was shifted), each of its
    entries is marked ``meta["clock_changed"]``: its header shows no duration, and says why
    (:func:`turnfold.process.clock_changed`)."""
    # The turns as the view splits them (imported here: the projection is no reader's concern
    # but for this one question, how many turns the sample shows).
    from turnfold.process import plan_projection

    turns = [item.segment for item in plan_projection(transcript) if item.segment is not None]
    # A change after every entry (at the last event) shifted none of them, but was found.
    located = located or any("clock_shift_s" in entry.meta for entry in transcript.entries)
    for segment in turns:
        entries = ([segment.user] if segment.user else []) + segment.entries
        if len(turns) == 1:
            last = entries[-1]
            transcript.update(last, meta={**last.meta, "turn_duration_ms": timed * 1000})
            continue
        if located and len(_clocks(entries)) <= 1:
            continue
        lasted = span_on_first_clock_ms(entries) if located and measured else None
        if lasted:
            last = entries[-1]
            transcript.update(last, meta={**last.meta, "turn_duration_ms": lasted})
            continue
        for entry in entries:
            transcript.update(entry, meta={**entry.meta, "clock_changed": True})


def _clocks(entries: list[Entry]) -> set[float]:
    """The shifts of the stamps of ``entries`` (:func:`~turnfold.formats.harnesses.
    inspect_clock.restate`; 0 for a stamp none moved): one, when one clock took them all."""
    clocks: set[float] = set()
    for entry in entries:
        shifts = entry.meta.get("clock_shift_s") or {}
        for name in STAMPS:
            if getattr(entry, name, None):
                clocks.add(shifts.get(name, 0.0))
    return clocks


def _seconds(value: Any) -> float | None:
    """A number of seconds that is more than none, as a float; None for anything else (an
    integer past a float's range too: a log's value is untrusted).

    >>> _seconds(214), _seconds(0.5), _seconds(0), _seconds(float("nan")), _seconds(10**400)
    (214.0, 0.5, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def _retry_records(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The attempts of a sample that failed before the one it holds (``error_retries``,
    Inspect's ``retry_on_error``), in order: each ``{message, traceback, events}``."""
    return [r for r in as_list(record.get("error_retries")) if isinstance(r, Mapping)]


def _crash(error: Any) -> str | None:
    """What an error of a run (an ``EvalError``: a sample's ``error``, one of its
    ``error_retries``) says: its message, then its traceback; None for none, and for the
    sample's cancellation (no call raised it)."""
    if not isinstance(error, Mapping) or _is_cancellation(error.get("message")):
        return None
    said = [_string(error.get(k)) for k in ("message", "traceback")]
    return "\n\n".join(part for part in said if part) or None


def _retries(record: Mapping[str, Any]) -> list[str]:
    """The errors of the attempts of a sample that failed before the one it holds."""
    return [str(retry.get("message") or "an error") for retry in _retry_records(record)]


def _outcome(metadata: Mapping[str, Any], scores: Mapping[str, Mapping[str, Any]]) -> str | None:
    if "error" in metadata:
        return "error"
    if "limit" in metadata or "cancelled" in metadata:
        return "incomplete"
    return _said_together(score_outcome(s.get("value")) for s in scores.values())
