"""``turnfold.load``: read a transcript from a path, text, bytes, a file object or Python objects.

Each source format is a module of this package with a ``NAME``, a ``detect(source)`` that looks
only at the first records, and a ``read(source)`` that streams the rest. This module turns the
many shapes of input into a :class:`~turnfold.formats.source.Source`, picks the format, and
reports input that no format recognises (spec L-2, L-4).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from turnfold.formats import (
    anthropic,
    claude_code,
    codex,
    gemini,
    native,
    openai_chat,
    openai_responses,
    qwen,
)
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, open_source
from turnfold.gcpause import collector_paused
from turnfold.model import Transcript

__all__ = ["FORMATS", "TranscriptFormatError", "load"]

# Detection order: the most specific signatures first (Claude Code before Qwen, whose records
# also carry uuid/parentUuid; message lists last, since they are the least distinctive).
_MODULES: tuple[ModuleType, ...] = (
    native,
    claude_code,
    codex,
    gemini,
    qwen,
    anthropic,
    openai_responses,
    openai_chat,
)

#: Format names ``load(format=...)`` accepts, in detection order.
FORMATS: tuple[str, ...] = tuple(m.NAME for m in _MODULES)
_BY_NAME: dict[str, ModuleType] = {m.NAME: m for m in _MODULES}


def _first_offending_line(source: Source) -> tuple[int | None, str]:
    for line, value in source.head:
        if isinstance(value, MalformedLine):
            return line, value.reason
    if source.head:
        return source.head[0][0], "no known transcript structure"
    return None, "the source is empty"


def _read(source: Source, format: str | None) -> Transcript:
    if format is not None:
        module: ModuleType | None = _BY_NAME[format]
    else:
        module = next((m for m in _MODULES if m.detect(source)), None)
    if module is None:
        line, reason = _first_offending_line(source)
        raise TranscriptFormatError(source.name, FORMATS, line, reason)
    if not source.head:
        raise TranscriptFormatError(source.name, [module.NAME], None, "the source is empty")
    with collector_paused():
        transcript: Transcript = module.read(source)
    if source.warnings:
        transcript.warnings[:0] = source.warnings
    return transcript


def load(source: Any, format: str | None = None) -> Transcript:
    """Read a transcript.

    ``source`` is a path (``str`` or ``os.PathLike``), JSON/JSONL text, bytes, an open file, or
    Python objects (a dict, a list of messages or records, SDK objects). ``format`` forces one of
    :data:`FORMATS`; by default it is detected from the first records. Input that is not a
    transcript raises :class:`TranscriptFormatError`; nothing the caller passed is modified.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    if isinstance(source, Transcript):
        return source
    opened, stream = open_source(source)
    try:
        return _read(opened, format)
    finally:
        if stream is not None:
            stream.close()
