"""Show a ``Transcript`` as a :class:`~turnfold.widget.TranscriptWidget` in notebooks (spec W-1).

Importing turnfold inside a Jupyter kernel calls :func:`register_display`, which teaches IPython's
display formatters to draw a transcript evaluated as the last expression of a cell as the widget,
an agent framework's run object (:data:`turnfold.formats.frameworks.RUN_OBJECTS`) as the
widget of its transcript, and a :class:`~turnfold.corpus.Corpus` as a
:class:`~turnfold.browser.SessionBrowser` (B-1).
The registration lives here, not on the model, so :mod:`turnfold.model` never imports a UI
library; the widget module itself (anywidget, ipywidgets) is imported only when a transcript is
first displayed.

Outside a kernel (a plain script, the terminal IPython shell, the CLI) nothing is registered and a
transcript keeps its ordinary ``repr``.
"""

from __future__ import annotations

import sys
from typing import Any

from turnfold.model import Transcript

__all__ = [
    "corpus_mimebundle",
    "kernel_shell",
    "register_display",
    "run_mimebundle",
    "transcript_mimebundle",
]


def transcript_mimebundle(
    transcript: Transcript, include: Any = None, exclude: Any = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The display bundle of a new widget showing ``transcript``: the widget view, text, HTML."""
    from turnfold.widget import TranscriptWidget

    bundle = TranscriptWidget(transcript)._repr_mimebundle_(include=include, exclude=exclude)
    return bundle if bundle is not None else ({}, {})


def corpus_mimebundle(
    corpus: Any, include: Any = None, exclude: Any = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The display bundle of a new session browser of ``corpus`` (spec B-1)."""
    from turnfold.browser import SessionBrowser

    bundle = SessionBrowser(corpus)._repr_mimebundle_(include=include, exclude=exclude)
    return bundle if bundle is not None else ({}, {})


def kernel_shell() -> Any:
    """The running kernel's IPython shell, None outside a kernel (a script, a terminal shell:
    nothing that can draw a widget)."""
    # A kernel imports IPython before any cell runs; importing it here only to learn that no
    # shell runs would cost a plain script a quarter of a second (issue 19).
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    if get_ipython is None:  # not imported, blocked, or still being imported
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def register_display(shell: Any = None) -> bool:
    """Register the widget display of :class:`Transcript` with a kernel's IPython shell.

    ``shell`` defaults to the running one. Returns whether a registration was made: False when
    IPython is not running or the shell is not a kernel (a terminal cannot draw widgets). Calling
    it again is harmless.
    """
    if shell is None:
        shell = kernel_shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    formatter = shell.display_formatter.mimebundle_formatter
    formatter.for_type(Transcript, transcript_mimebundle)
    # B-1: a corpus shows as the session browser; by name, so registering imports no Arrow.
    formatter.for_type_by_name("turnfold.corpus", "Corpus", corpus_mimebundle)
    from turnfold.formats.frameworks import RUN_OBJECTS

    for module, name in RUN_OBJECTS:  # by name: no framework is imported (spec A-3)
        formatter.for_type_by_name(module, name, run_mimebundle)
    return True


def run_mimebundle(
    run: Any, include: Any = None, exclude: Any = None
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The display of an agent framework's run object as its transcript's widget (spec A-1);
    None (the object's own display) when it holds no transcript turnfold can read."""
    from turnfold.formats import TranscriptFormatError, load

    try:
        transcript = load(run)
    except TranscriptFormatError:
        return None
    return transcript_mimebundle(transcript, include, exclude)
