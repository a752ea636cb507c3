"""What a view in one language shows of a transcript, for the tests that what a reader writes
itself is said in the view's language (spec P-11; tests/test_zh_more.py,
tests/test_zh_notices_rest.py): the transcript loaded, a widget in a locale, the nodes of its
view and its ``text/plain``, each widget closed once read."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import turnfold
from turnfold.model import Transcript
from turnfold.render.viewmodel import iter_nodes
from turnfold.widget import TranscriptWidget


def quiet_load(source: Any, **options: Any) -> Transcript:
    """``turnfold.load(source, **options)``, its warnings not raised: these tests look at the
    words a view shows, and some sources (hand-shaped events) warn of what they lack."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return turnfold.load(source, **options)


@contextmanager
def widget_in(transcript: Transcript, locale: str) -> Iterator[TranscriptWidget]:
    """A widget showing ``transcript`` in ``locale``, closed when the block ends."""
    widget = TranscriptWidget(transcript, settings=turnfold.DisplaySettings(locale=locale))
    try:
        yield widget
    finally:
        widget.close()


def view_nodes(transcript: Transcript, locale: str) -> list[dict[str, Any]]:
    """Every node of the view a widget in ``locale`` draws, in order."""
    with widget_in(transcript, locale) as widget:
        return [dict(node) for node in iter_nodes(widget.view)]


def plain_text(transcript: Transcript, locale: str) -> str:
    """The ``text/plain`` a widget in ``locale`` gives a notebook."""
    with widget_in(transcript, locale) as widget:
        bundle = widget._repr_mimebundle_()
        assert bundle is not None
        return str(bundle[0]["text/plain"])
