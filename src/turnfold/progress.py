"""Progress bars: tqdm's (in a notebook, its widget), shown only for work that lasts.

A bar here starts no monitor thread. tqdm's monitor only tunes the refresh rate of a bar that
stalled, and a second thread in this process would keep the work from forking: a scan's and
a site's workers, and the child that shares `turnfold render`'s page (:mod:`turnfold.forking`),
fork only from a process with one thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

__all__ = ["DELAY_S", "bar", "is_muted", "muted"]

#: Work that ends sooner shows no bar at all.
DELAY_S = 1.0

_MUTED: ContextVar[bool] = ContextVar("turnfold_progress_muted", default=False)


@contextmanager
def muted() -> Iterator[None]:
    """No bar for the work inside: it is a part of work whose own bar counts it. A scan's bar
    counts its items; a bar of each large file read in its workers (whose standard error is
    the terminal's too) would write over it, or stack below it in a notebook."""
    token = _MUTED.set(True)
    try:
        yield
    finally:
        _MUTED.reset(token)


def is_muted() -> bool:
    """Whether this is work inside :func:`muted`."""
    return _MUTED.get()


def bar(total: int | None, desc: str, unit: str, **options: Any) -> Any:
    """A tqdm bar of ``total`` ``unit``s; ``options`` are tqdm's own (``delay``, ``leave``...).
    Inside :func:`muted`, a bar that shows nothing."""
    if _MUTED.get():
        options["disable"] = True
    return _quiet_tqdm()(total=total, desc=desc, unit=unit, **options)


@cache
def _quiet_tqdm() -> Any:
    # tqdm is imported only when a bar is made: with its notebook support it costs about a
    # tenth of a second, and most work ends before any bar would show.
    from tqdm.auto import tqdm

    class Progress(tqdm):  # type: ignore[type-arg]
        monitor_interval = 0

    return Progress
