"""Building large, long-lived object graphs without the cyclic collector walking them (Q-1)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a load or a view model builds (spec Q-1).

    Both allocate millions of objects that stay alive, so every collection during them walks
    an ever larger heap: about a third of the load time of a 50 MB session. Reference
    counting still frees what is dropped, and the collector is restored however the read ends.
    The kept objects are then moved straight to the oldest generation (``freeze`` + ``unfreeze``
    splice two lists), so the first collection afterwards does not walk them all at once; this is
    skipped when the program froze objects itself, since ``unfreeze`` would undo that.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()
