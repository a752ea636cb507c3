"""Label finished batches in the background, never in the way (spec S-2, S-6).

A :class:`TranscriptLabeller` watches one transcript. Attached to a :class:`~turnfold.Recorder`,
it hears of each batch as it closes; once every call of the batch has finished, it queues one
request to the fast model on a small pool of daemon threads and returns at once, so appending,
displaying and the kernel never wait for the model (threads, not the event loop: it works the
same inside a running Jupyter loop). One attempt, with a timeout. The label is appended as a
:class:`~turnfold.model.ToolUseSummary` covering the batch's call ids and naming its calls' entry
ids, so it attaches to its batch however many batches arrived meanwhile, even one that shares
its call ids, and the widget shows it as the ``● label`` line.

Nothing happens, silently, when the feature is off (:mod:`~turnfold.summaries.gate`), when no
tool of the batch succeeded, when the turn is aborted before the label comes back, when the
model fails, times out or answers with no usable label (logged; counted in :attr:`usage`).
Batches of a sub-agent's own transcript are never labelled: a labeller labels only top-level
batches of its own transcript (the parent batch holding the sub-agent call is labelled).

>>> from turnfold import Recorder, Transcript
>>> transcript = Transcript()
>>> labeller = TranscriptLabeller(transcript, lambda request: "Read README.md")
>>> rec = Recorder(labeller=labeller, clock=lambda: "2026-01-01T00:00:00Z")
>>> _ = rec.user("What is this project?")
>>> call = rec.start_tool("Read", {"file_path": "README.md"})
>>> _ = rec.finish_tool(call, "# turnfold")
>>> _ = rec.assistant("It shows agent transcripts.")  # closes the batch: labelled meanwhile
>>> labeller.wait(5)
True
>>> [(e.kind, getattr(e, "label", None)) for e in transcript][-1]
('tool_use_summary', 'Read README.md')
>>> labeller.close()
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from turnfold.batches import iter_batches, label_key, labels_by_call
from turnfold.model import (
    ACTIVE_STATUSES,
    AbortMarker,
    Entry,
    ToolCall,
    ToolUseSummary,
    Transcript,
    TranscriptChange,
    UserMessage,
)
from turnfold.summaries.clean import clean_summary
from turnfold.summaries.gate import summaries_enabled
from turnfold.summaries.models import FastModel, resolve_model
from turnfold.summaries.prompt import DEFAULT_MAX_TOKENS, build_request, intent_before
from turnfold.summaries.usage import PURPOSE, UsageTracker, usage_for

if TYPE_CHECKING:
    from turnfold.recording import Recorder

__all__ = [
    "DEFAULT_TIMEOUT",
    "TranscriptLabeller",
    "is_subagent_transcript",
    "label_batches",
]

_LOG = logging.getLogger("turnfold.summaries")

#: Seconds a label request may take before it is given up (one attempt).
DEFAULT_TIMEOUT = 10.0
#: A reply that arrives this much past the timeout (a server trickling bytes) is not used.
_GRACE_S = 0.25
#: An idle worker thread ends after this many seconds; the next batch starts another.
_IDLE_S = 30.0


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- sub-agent transcripts -----------------------------------------------------------------------

_SUBAGENTS: dict[int, weakref.ref[Transcript]] = {}
_SUBAGENTS_LOCK = threading.Lock()


def _mark_subagent(transcript: Transcript) -> None:
    key = id(transcript)
    with _SUBAGENTS_LOCK:
        if key in _SUBAGENTS and _SUBAGENTS[key]() is transcript:
            return

        def forget(ref: weakref.ref[Transcript], key: int = key) -> None:
            with _SUBAGENTS_LOCK:
                if _SUBAGENTS.get(key) is ref:
                    del _SUBAGENTS[key]

        _SUBAGENTS[key] = weakref.ref(transcript, forget)


def _mark_children(calls: Iterable[ToolCall]) -> None:
    for call in calls:
        child = call.subagent.transcript if call.subagent else None
        if child is not None:
            _mark_subagent(child)
            _mark_children(child.tool_calls())


def is_subagent_transcript(transcript: Transcript) -> bool:
    """Whether ``transcript`` is known as a sub-agent's own transcript (never labelled, S-2).

    A transcript becomes known as one when a labeller or :func:`label_batches` sees it nested
    under a call of another transcript.
    """
    with _SUBAGENTS_LOCK:
        ref = _SUBAGENTS.get(id(transcript))
        return ref is not None and ref() is transcript


# --- a small pool of daemon threads --------------------------------------------------------------

_STOP = object()


class _Pool:
    """At most ``size`` daemon worker threads, started on demand, ending when idle.

    Daemon threads, so a model that never answers can never hold up the kernel's exit.
    """

    def __init__(self, size: int, name: str) -> None:
        self.size = max(1, int(size))
        self.name = name
        self._queue: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0
        self._closed = False

    def submit(self, work: Callable[[], None]) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the labeller is closed")
            self._queue.put(work)
            if self._queue.qsize() > self._idle and self._workers < self.size:
                self._workers += 1
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{self._workers}", daemon=True
                )
                thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            try:
                work = self._queue.get(timeout=_IDLE_S)
            except queue.Empty:
                work = None
            with self._lock:
                self._idle -= 1
                if work is _STOP or (work is None and (self._closed or self._queue.empty())):
                    self._workers -= 1
                    return
            if work is not None:
                work()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = self._workers
        for _ in range(workers):
            self._queue.put(_STOP)


# --- the labeller --------------------------------------------------------------------------------


@dataclass(eq=False)
class _Job:
    calls: tuple[ToolCall, ...]
    turn: int
    future: Future[ToolUseSummary | None] = field(default_factory=Future)
    aborted: bool = False


@dataclass(eq=False)
class _Waiting:
    """A closed batch whose calls are still running: labelled when the last one finishes."""

    calls: tuple[ToolCall, ...]
    turn: int


class TranscriptLabeller:
    """Writes tool-use summary labels for the batches of ``transcript`` (spec §4).

    ``model`` is a fast model: a callable ``fn(request) -> str``, a model name, a mapping of
    endpoint options or a :class:`~turnfold.summaries.models.FastModel` (see
    :func:`~turnfold.summaries.models.resolve_model`); by default the ``fast_model`` of
    ``settings``. ``settings`` (a DisplaySettings or mapping; by default the layered defaults of
    spec T-5) supplies ``emit_tool_use_summaries``; the ``TURNFOLD_EMIT_TOOL_USE_SUMMARIES``
    variable overrides it (S-3), read from ``environ`` (default ``os.environ``) at each batch.

    ``timeout`` (seconds) bounds each request; ``max_workers`` threads send requests at once;
    ``redact=False`` sends secrets unredacted; ``max_tokens`` is the output budget. Usage is
    counted in ``usage`` (by default the transcript's own tracker, which the widget's footer
    shows, and which reports to the process-wide :func:`~turnfold.summaries.usage.usage`).

    Use :meth:`attach` (or ``Recorder(..., labeller=labeller)``) to label a live run, or
    :meth:`label_existing` / :func:`label_batches` for a transcript already loaded: nothing is
    labelled implicitly. :meth:`wait` blocks until the queued requests are done; :meth:`close`
    stops everything (labels still in flight are dropped). A labeller is a context manager.
    """

    def __init__(
        self,
        transcript: Transcript,
        model: Any = None,
        *,
        settings: Any = None,
        timeout: float | None = None,
        max_workers: int = 2,
        redact: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        usage: UsageTracker | None = None,
        clock: Callable[[], str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(transcript, Transcript):
            raise TypeError(f"a labeller labels a Transcript, not {type(transcript).__name__}")
        if settings is None:
            from turnfold.config import load_settings

            settings = load_settings()
        self.transcript = transcript
        self.settings = settings
        spec = model if model is not None else _setting(settings, "fast_model")
        self.model: FastModel | None = resolve_model(spec, environ=environ)
        model_timeout = getattr(self.model, "timeout", None)
        self.timeout = float(timeout or model_timeout or DEFAULT_TIMEOUT)
        self.redact = redact
        self.max_tokens = max_tokens
        self.usage = usage if usage is not None else usage_for(transcript)
        self._clock = clock or _utc_now
        self._environ = environ
        self._pool = _Pool(max_workers, "turnfold-labeller")
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._turn = 0
        self._jobs: set[_Job] = set()
        self._waiting: dict[int, _Waiting] = {}
        self._scheduled: set[tuple[str, ...]] = set()
        self._detachers: list[Callable[[], None]] = []
        self._closed = False
        self._warned = False
        _mark_children(transcript.tool_calls())
        self._stop_observing = transcript.observe(self._on_change)

    # --- switches ---------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """Whether a batch closing now would be labelled at all (S-2, S-3)."""
        return (
            not self._closed
            and not is_subagent_transcript(self.transcript)
            and summaries_enabled(self.settings, fast_model=self.model, environ=self._environ)
        )

    # --- wiring -----------------------------------------------------------------------------

    def attach(self, recorder: Recorder) -> TranscriptLabeller:
        """Label each batch ``recorder`` closes (and drop the turn's labels on its abort).

        A recorder writing another transcript (a sub-agent's) may be attached too: its batches
        are not this labeller's and are never labelled.
        """
        self._detachers.append(recorder.on_batch_closed(self._on_batch_closed))
        self._detachers.append(recorder.on_abort(self.turn_aborted))
        return self

    def batch_closed(self, calls: Sequence[ToolCall]) -> Future[ToolUseSummary | None] | None:
        """A batch of this transcript closed: label it once its calls have all finished.

        For agent loops that do not use a Recorder. Returns the future of the label (its result
        is the appended ToolUseSummary, or None), or None when nothing was queued (yet).
        """
        batch = tuple(calls)
        if not batch or self._closed:
            return None
        if not all(self.transcript.get(call.id) is call for call in batch):
            _LOG.debug("turnfold: not labelling a batch of another (sub-agent) transcript")
            return None
        with self._lock:
            key = tuple(map(label_key, batch))
            if key in self._scheduled:
                return None
            if any(call.status in ACTIVE_STATUSES for call in batch):
                waiting = _Waiting(batch, self._turn)
                for call in batch:
                    self._waiting[id(call)] = waiting
                return None
            turn = self._turn
        return self._schedule(batch, turn)

    def _on_batch_closed(self, calls: list[ToolCall]) -> None:
        self.batch_closed(calls)

    def turn_aborted(self) -> None:
        """The current turn was aborted: labels of its batches still to come are dropped."""
        with self._lock:
            for job in self._jobs:
                if job.turn == self._turn:
                    job.aborted = True
            for key, waiting in list(self._waiting.items()):
                if waiting.turn == self._turn:
                    del self._waiting[key]

    def _on_change(self, change: TranscriptChange) -> None:
        """Observer of the transcript (runs on the appending thread; must stay quick)."""
        entry = change.entry
        if change.action == "append":
            if isinstance(entry, UserMessage):
                with self._lock:
                    self._turn += 1
            elif isinstance(entry, AbortMarker):
                self.turn_aborted()
            return
        if not isinstance(entry, ToolCall):
            return
        if "subagent" in change.fields:
            _mark_children([entry])
        if "status" not in change.fields or entry.status in ACTIVE_STATUSES:
            return
        with self._lock:
            waiting = self._waiting.get(id(entry))
            if waiting is None or any(c.status in ACTIVE_STATUSES for c in waiting.calls):
                return
            for call in waiting.calls:
                self._waiting.pop(id(call), None)
        self._schedule(waiting.calls, waiting.turn)

    # --- labelling --------------------------------------------------------------------------

    def _schedule(
        self, calls: tuple[ToolCall, ...], turn: int
    ) -> Future[ToolUseSummary | None] | None:
        if not self.enabled or not any(call.status == "success" for call in calls):
            return None
        job = _Job(calls, turn)
        with self._lock:
            # By entry keys, not call ids: a batch that repeats an earlier one's call ids (a
            # retried attempt) is a batch of its own, labelled too.
            key = tuple(map(label_key, calls))
            if key in self._scheduled or self._closed:
                return None
            self._scheduled.add(key)
            self._jobs.add(job)
            self._pending += 1
        try:
            self._pool.submit(lambda: self._run(job))
        except RuntimeError:  # closed meanwhile
            self._finish(job, None)
        return job.future

    def _run(self, job: _Job) -> None:
        summary = None
        try:
            summary = self._label(job)
        except Exception:  # never escapes a worker; the view stays as it was (S-6)
            _LOG.exception("turnfold: labelling a batch failed")
        finally:
            self._finish(job, summary)

    def _finish(self, job: _Job, summary: ToolUseSummary | None) -> None:
        with self._lock:
            self._jobs.discard(job)
            self._pending -= 1
            self._idle.notify_all()
        if not job.future.done():
            job.future.set_result(summary)

    def _label(self, job: _Job) -> ToolUseSummary | None:
        model = self.model
        if job.aborted or self._closed or model is None:
            return None
        intent = intent_before(self.transcript.entries, job.calls[0])
        request = build_request(job.calls, intent, redact=self.redact, max_tokens=self.max_tokens)
        if request is None or job.aborted:
            return None
        started = time.monotonic()
        try:
            completion = model.complete(request, timeout=self.timeout)
        except Exception as exc:
            self.usage.record_failure(PURPOSE)
            self._log_failure(model, exc)
            return None
        elapsed = time.monotonic() - started
        if elapsed > self.timeout + _GRACE_S:
            self.usage.record_call(
                PURPOSE,
                input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens,
                failed=True,
            )
            self._log_failure(model, TimeoutError(f"answered after {elapsed:.1f}s"))
            return None
        self.usage.record_call(
            PURPOSE, input_tokens=completion.input_tokens, output_tokens=completion.output_tokens
        )
        label = clean_summary(completion.text)
        if not label:
            self.usage.record_rejected(PURPOSE)
            _LOG.debug("turnfold: no usable label in %r", completion.text[:200])
            return None
        # An id of its own, derived from the batch's first entry (unique, where its call id need
        # not be): the agent's entries keep their ids (e0, e1…) whenever the label lands among
        # them, and two batches of one call id labelled at once get the same ids whichever
        # answer comes first, so a view of the run is the same on every run.
        summary = ToolUseSummary(
            id=f"label-{job.calls[0].id}",
            label=label,
            call_ids=list(request.call_ids),
            entry_ids=[call.id for call in job.calls],
            timestamp=self._clock(),
        )
        # Checked under the transcript's lock: an abort from another thread lands either before
        # (and the label is dropped) or after the label, never between the check and the append.
        if self.transcript.append_unless(summary, lambda: job.aborted or self._closed) is None:
            self.usage.record_dropped(PURPOSE)
            return None
        return summary

    def _log_failure(self, model: FastModel, exc: BaseException) -> None:
        # The first failure says so plainly (a wrong key or URL fails every batch); the rest
        # only at debug level, so a broken endpoint never floods the notebook.
        message = "turnfold: the fast model %s gave no label (%s: %s); labels are skipped"
        args = (model.name, type(exc).__name__, exc)
        if not self._warned:
            self._warned = True
            _LOG.warning(message, *args)
        else:
            _LOG.debug(message, *args)

    # --- a loaded transcript ----------------------------------------------------------------

    def label_existing(self) -> list[Future[ToolUseSummary | None]]:
        """Queue a label for every finished top-level batch that has none (opt-in, never
        implicit). A batch the turn's abort interrupted is skipped, as it would have been live.
        """
        entries = list(self.transcript.entries)
        labels = labels_by_call(entries)  # once, not a scan of the transcript per batch
        position = {id(entry): index for index, entry in enumerate(entries)}
        futures = []
        for batch in iter_batches(entries):
            labelled = any(label_key(call) in labels for call in batch)
            if labelled or _interrupted(entries, position[id(batch[-1])]):
                continue
            future = self.batch_closed(batch)
            if future is not None:
                futures.append(future)
        return futures

    # --- lifetime ---------------------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued request is done (or ``timeout`` seconds passed); True when
        none is left. Batches still waiting for their calls to finish are not waited for."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    @property
    def pending(self) -> int:
        """How many requests are queued or in flight."""
        with self._lock:
            return self._pending

    def close(self) -> None:
        """Stop labelling: detach from recorders and the transcript; drop labels in flight."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._waiting.clear()
            detachers, self._detachers = self._detachers, []
        for detach in detachers:
            detach()
        self._stop_observing()
        self._pool.close()

    def __enter__(self) -> TranscriptLabeller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("on" if self.enabled else "off")
        name = self.model.name if self.model is not None else None
        return f"<TranscriptLabeller {state}, model={name}, pending={self.pending}>"


def _setting(settings: Any, name: str) -> Any:
    if isinstance(settings, Mapping):
        camel = name.split("_")[0] + "".join(p.title() for p in name.split("_")[1:])
        return settings.get(name, settings.get(camel))
    return getattr(settings, name, None)


def _interrupted(entries: Sequence[Entry], last: int) -> bool:
    """Whether the entry after ``entries[last]`` (labels aside) is an abort marker."""
    for index in range(last + 1, len(entries)):  # no slice: it would copy the rest each time
        entry = entries[index]
        if isinstance(entry, ToolUseSummary):
            continue
        return isinstance(entry, AbortMarker)
    return False


def label_batches(
    transcript: Transcript,
    model: Any = None,
    *,
    settings: Any = None,
    timeout: float | None = None,
    max_workers: int = 2,
    redact: bool = True,
    usage: UsageTracker | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[ToolUseSummary]:
    """Label the finished batches of an already-loaded transcript that have no label; returns
    the labels added (in the transcript too, so ``dump()`` saves them).

    Opt-in: loading never labels anything. The same rules as live labelling apply: the switch
    and setting (S-2, S-3), only successful tools sent, one attempt per batch with a timeout,
    failures skipped, sub-agent transcripts never labelled. Blocks until every request is done
    (each is bounded by ``timeout``).
    """
    if is_subagent_transcript(transcript):
        return []
    with TranscriptLabeller(
        transcript,
        model,
        settings=settings,
        timeout=timeout,
        max_workers=max_workers,
        redact=redact,
        usage=usage,
        environ=environ,
    ) as labeller:
        futures = labeller.label_existing()
        labeller.wait()
    return [summary for future in futures if (summary := future.result()) is not None]
