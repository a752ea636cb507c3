"""Progress bars: tqdm's (in a notebook, its widget), shown only for work that lasts.

A bar here starts no monitor thread. tqdm's monitor only tunes the refresh rate of a bar that
stalled, and a second thread in this process would keep the work from forking: a scan's and
a site's workers, and the child that shares `turnfold render`'s page (:mod:`turnfold.forking`),
fork only from a process with one thread.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["DELAY_S", "bar"]

#: Work that ends sooner shows no bar at all.
DELAY_S = 1.0


def bar(total: int | None, desc: str, unit: str, **options: Any) -> Any:
    """A tqdm bar of ``total`` ``unit``s; ``options`` are tqdm's own (``delay``, ``leave``...)."""
    return _quiet_tqdm()(total=total, desc=desc, unit=unit, **options)


@cache
def _quiet_tqdm() -> Any:
    # tqdm is imported only when a bar is made: with its notebook support it costs about a
    # tenth of a second, and most work ends before any bar would show.
    from tqdm.auto import tqdm

    class Progress(tqdm):  # type: ignore[type-arg]
        monitor_interval = 0

    return Progress
