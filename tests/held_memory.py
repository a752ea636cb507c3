"""A process that may use less memory than this one, and what a read holds meanwhile, for the
tests of the caps on what one read holds at once (spec X-1, X-2, Q-4; tests/test_memory_cap.py,
tests/test_table_value_caps.py, tests/test_corpus_pages_bounded.py).

The cap is scaled down through :func:`~turnfold.formats.compressed.memory_limit` (the memory the
process may use, as a container or a machine bounds it), and what is held is measured by
``tracemalloc`` (bytes allocated), not by time."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from turnfold.formats import compressed, tables
from turnfold.formats.errors import TranscriptFormatError


def lowered_memory(monkeypatch: pytest.MonkeyPatch, size: int) -> int:
    """Reads in the test see a process that may use ``size`` bytes: the values a read then
    converts at once (:func:`~turnfold.formats.tables.held_values`)."""
    monkeypatch.setattr(compressed, "memory_limit", lambda: size)
    most = tables.held_values()
    assert most == size // compressed.HELD_SHARE // tables.VALUE_BYTES
    return most


def with_peak(read: Callable[[], Any]) -> tuple[Any, int]:
    """``read()`` and the peak of the memory Python allocated meanwhile (bytes)."""
    tracemalloc.start()
    try:
        return read(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def refusal(read: Callable[[], Any]) -> TranscriptFormatError:
    """The error ``read()`` raises."""
    with pytest.raises(TranscriptFormatError) as raised:
        read()
    return raised.value
