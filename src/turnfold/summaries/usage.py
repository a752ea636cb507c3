"""What the fast model cost, per purpose (spec S-8).

Every request is counted under its purpose (``tool_use_summary_generation`` for labels): calls,
input and output tokens as the provider reported them, and the calls that failed. Counts live in
two places: the process-wide :func:`usage` tracker (everything this kernel spent) and one tracker
per transcript (:func:`usage_for`), which the transcript widget shows in its footer.

>>> tracker = UsageTracker()
>>> tracker.record_call(PURPOSE, input_tokens=412, output_tokens=6)
>>> tracker.record_failure(PURPOSE)
>>> tracker.get(PURPOSE)
UsageCounter(calls=2, input_tokens=412, output_tokens=6, failures=1, rejected=0, dropped=0)
>>> tracker.snapshot()[PURPOSE]["calls"]
2
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from turnfold.i18n import plural, translate
from turnfold.tools import format_token_count

__all__ = [
    "PURPOSE",
    "UsageCounter",
    "UsageTracker",
    "usage",
    "usage_footer",
    "usage_for",
]

#: The purpose label-generation requests are counted under.
PURPOSE = "tool_use_summary_generation"


@dataclass
class UsageCounter:
    """The counts of one purpose.

    ``calls`` counts every request sent, failed ones included; ``failures`` the requests that
    raised, timed out or got an HTTP error; ``rejected`` the replies that held no usable label
    (empty, an error message, a refusal); ``dropped`` the labels that came back after their turn
    was aborted. Tokens are those the provider reported (a callable model may report none).
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0
    rejected: int = 0
    dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


Listener = Callable[[], None]


class UsageTracker:
    """Thread-safe per-purpose counters; what it records it also records in its ``parent``.

    ``observe(callback)`` calls ``callback()`` after every change (from the recording thread).
    """

    def __init__(self, parent: UsageTracker | None = None) -> None:
        self.parent = parent
        self._lock = threading.Lock()
        self._counters: dict[str, UsageCounter] = {}
        self._listeners: list[Listener] = []

    # --- recording ---------------------------------------------------------------------------

    def record_call(
        self,
        purpose: str = PURPOSE,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        failed: bool = False,
    ) -> None:
        """One request was sent (and failed, when ``failed``)."""
        self._add(
            purpose,
            calls=1,
            input_tokens=max(0, int(input_tokens or 0)),
            output_tokens=max(0, int(output_tokens or 0)),
            failures=1 if failed else 0,
        )

    def record_failure(self, purpose: str = PURPOSE) -> None:
        """One request was sent and failed (an error, a timeout)."""
        self.record_call(purpose, failed=True)

    def record_rejected(self, purpose: str = PURPOSE) -> None:
        """A reply held no usable label (already counted as a call)."""
        self._add(purpose, rejected=1)

    def record_dropped(self, purpose: str = PURPOSE) -> None:
        """A label came back after its turn was aborted and was dropped."""
        self._add(purpose, dropped=1)

    def _add(self, purpose: str, **amounts: int) -> None:
        with self._lock:
            counter = self._counters.setdefault(purpose, UsageCounter())
            for name, amount in amounts.items():
                setattr(counter, name, getattr(counter, name) + amount)
            listeners = list(self._listeners)
        for listener in listeners:
            listener()
        if self.parent is not None:
            self.parent._add(purpose, **amounts)

    # --- reading -----------------------------------------------------------------------------

    def get(self, purpose: str = PURPOSE) -> UsageCounter:
        """A copy of the counts of ``purpose`` (zeros when nothing was recorded)."""
        with self._lock:
            counter = self._counters.get(purpose)
            return UsageCounter(**counter.as_dict()) if counter else UsageCounter()

    def snapshot(self) -> dict[str, dict[str, int]]:
        """Every purpose's counts as plain dicts."""
        with self._lock:
            return {purpose: c.as_dict() for purpose, c in self._counters.items()}

    def reset(self) -> None:
        """Forget every count (the parent keeps its own)."""
        with self._lock:
            self._counters.clear()
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def observe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener()`` after every change; returns a function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def __repr__(self) -> str:
        return f"UsageTracker({self.snapshot()!r})"


_GLOBAL = UsageTracker()
_BY_TRANSCRIPT: dict[int, UsageTracker] = {}
#: Re-entrant: the garbage collector may run a dead transcript's finalizer (:func:`_forget`) on
#: the very thread that holds the lock, at any allocation inside :func:`usage_for`. With a plain
#: lock that thread waited on itself forever (seen: a test run hung in ``UsageTracker()``).
_REGISTRY_LOCK = threading.RLock()


def usage() -> UsageTracker:
    """The process-wide tracker: what every fast-model request of this process cost."""
    return _GLOBAL


def usage_for(transcript: Any) -> UsageTracker:
    """The tracker of requests made for ``transcript`` (created on first use; it reports to
    :func:`usage` as well). It lives as long as the transcript does."""
    key = id(transcript)
    with _REGISTRY_LOCK:
        tracker = _BY_TRANSCRIPT.get(key)
        if tracker is None:
            tracker = _BY_TRANSCRIPT[key] = UsageTracker(parent=_GLOBAL)
            weakref.finalize(transcript, _forget, key, tracker)
        return tracker


def _forget(key: int, tracker: UsageTracker) -> None:
    with _REGISTRY_LOCK:
        if _BY_TRANSCRIPT.get(key) is tracker:
            del _BY_TRANSCRIPT[key]


# --- the widget's footer line --------------------------------------------------------------------


def _phrase(key: str, locale: str, *, count: int | None = None, **params: Any) -> str:
    if count is not None:
        return plural(key, count, locale, **params)
    return translate(key, locale, **params)


def usage_footer(tracker: UsageTracker | None, locale: str = "en", purpose: str = PURPOSE) -> str:
    """The footer line for ``purpose``, or ``""`` while nothing was sent.

    >>> t = UsageTracker()
    >>> usage_footer(t)
    ''
    >>> t.record_call(input_tokens=2412, output_tokens=7)
    >>> usage_footer(t)
    'Fast model, tool-use labels: 1 call · 2.4k input tokens · 7 output tokens'
    """
    if tracker is None:
        return ""
    counter = tracker.get(purpose)
    if not counter.calls:
        return ""
    parts = [_phrase("usage.calls", locale, count=counter.calls)]
    if counter.input_tokens:
        tokens = format_token_count(counter.input_tokens)
        parts.append(_phrase("usage.input_tokens", locale, tokens=tokens))
    if counter.output_tokens:
        tokens = format_token_count(counter.output_tokens)
        parts.append(_phrase("usage.output_tokens", locale, tokens=tokens))
    if counter.failures:
        parts.append(_phrase("usage.failures", locale, count=counter.failures))
    return _phrase("usage.footer", locale, parts=" · ".join(parts))
