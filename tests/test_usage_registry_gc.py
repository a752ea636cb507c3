"""The registry of fast-model usage by transcript (``usage_for``) and the garbage collector.

A transcript's tracker is forgotten by a finalizer when the transcript dies. The collector runs
finalizers at any allocation, on whichever thread allocates: here, inside ``usage_for``'s own
critical section, while it makes the new tracker. A plain lock there hung a test run (the
thread waited on itself in ``UsageTracker.__init__``)."""

from __future__ import annotations

import gc
import importlib
import threading

import pytest

from turnfold.model import Transcript
from turnfold.summaries.usage import UsageTracker, usage_for

#: The module (``turnfold.summaries.usage`` the name is its function ``usage``).
usage_module = importlib.import_module("turnfold.summaries.usage")


def test_a_dead_transcript_forgotten_while_a_tracker_is_made_does_not_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = Transcript()
    usage_for(dead)
    key = id(dead)
    assert key in usage_module._BY_TRANSCRIPT
    made = UsageTracker.__init__

    def collecting(self: UsageTracker, *args: object, **kwargs: object) -> None:
        # What an allocation may do at any time: collect, and run the dead one's finalizer.
        gc.collect()
        made(self, *args, **kwargs)

    monkeypatch.setattr(UsageTracker, "__init__", collecting)
    alive = Transcript()
    found: list[UsageTracker] = []
    gc.disable()  # the transcript dies only in the collection inside usage_for
    try:
        cycle: list[object] = [dead]
        cycle.append(cycle)  # unreachable once the names go: freed only by a collection
        del dead, cycle
        worker = threading.Thread(target=lambda: found.append(usage_for(alive)), daemon=True)
        worker.start()
        worker.join(timeout=30)
    finally:
        gc.enable()
    assert not worker.is_alive(), "usage_for waited on its own lock"
    assert found
    assert found[0] is usage_for(alive)
    assert key not in usage_module._BY_TRANSCRIPT or key == id(alive)  # the dead one forgotten
