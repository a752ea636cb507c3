"""Fixtures the widget tests share (``test_widget.py``, ``test_timeline.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from turnfold.widget import TranscriptWidget


@pytest.fixture
def widgets() -> Iterator[list[TranscriptWidget]]:
    """Widgets made by a test, closed after it so no timer thread outlives it."""
    made: list[TranscriptWidget] = []
    yield made
    for widget in made:
        widget.close()
