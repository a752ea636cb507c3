"""``turnfold.load``: read a transcript from a path, text, bytes, a file object or Python objects.

Each source format is a module of this package with a ``NAME``, a ``detect(source)`` that
weighs the first records (:mod:`~turnfold.formats.detection`), a ``read(source)`` that streams
the rest, and a ``RECORDS`` table of the record types it maps or ignores by design
(:mod:`~turnfold.formats.catalog`). This module turns the many shapes of input into a
:class:`~turnfold.formats.source.Source`, picks the format, reports input that no format
recognises (spec L-2, L-4) and what a load passed over (spec X-2).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from turnfold.formats import (
    anthropic,
    claude_code,
    codex,
    cursor,
    detection,
    gemini,
    native,
    openai_chat,
    openai_responses,
    qwen,
)
from turnfold.formats.agents import claude_stream, codex_exec
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, open_source
from turnfold.formats.traces import otlp
from turnfold.gcpause import collector_paused
from turnfold.model import LoadWarning, Transcript

__all__ = ["FORMATS", "TranscriptFormatError", "evidence", "load", "which_format"]

# Every format is asked for its evidence (detection.py); this order only lists them.
_MODULES: tuple[ModuleType, ...] = (
    native,
    claude_code,
    codex,
    gemini,
    qwen,
    cursor,
    otlp,
    claude_stream,
    codex_exec,
    anthropic,
    openai_responses,
    openai_chat,
)

#: Format names ``load(format=...)`` accepts.
FORMATS: tuple[str, ...] = tuple(m.NAME for m in _MODULES)
_BY_NAME: dict[str, ModuleType] = {m.NAME: m for m in _MODULES}


def _first_offending_line(source: Source) -> tuple[int | None, str]:
    for line, value in source.head:
        if isinstance(value, MalformedLine):
            return line, value.reason
    if source.head:
        return source.head[0][0], "no known transcript structure"
    return None, "the source is empty"


def evidence(source: Source) -> list[tuple[str, detection.Evidence]]:
    """What every format makes of ``source``'s first records, in :data:`FORMATS` order."""
    return [(m.NAME, m.detect(source)) for m in _MODULES]


def which_format(source: Source) -> str | None:
    """The name of the format ``load()`` would read ``source`` as, None when none fits.

    Raises :class:`~turnfold.formats.detection.AmbiguousFormat` when two fit equally well.
    """
    return detection.choose(evidence(source))


def _detect(source: Source) -> ModuleType:
    """The format whose evidence is best (issue 11); an error naming every candidate if none."""
    candidates = evidence(source)
    try:
        name = detection.choose(candidates)
    except detection.AmbiguousFormat as exc:
        line = source.head[0][0] if source.head else None
        reason = f"reads equally well as {detection.describe(exc.candidates)}; pass format="
        raise TranscriptFormatError(source.name, FORMATS, line, reason) from None
    if name is None:
        line, reason = _first_offending_line(source)
        near = [c for c in candidates if c[1].share > 0]
        if near and reason == "no known transcript structure":
            reason += "; closest: " + detection.describe(near)
        raise TranscriptFormatError(source.name, FORMATS, line, reason)
    return _BY_NAME[name]


def _read(source: Source, format: str | None) -> Transcript:
    module = _BY_NAME[format] if format is not None else _detect(source)
    if not source.head:
        raise TranscriptFormatError(source.name, [module.NAME], None, "the source is empty")
    with collector_paused():
        transcript: Transcript = module.read(source)
    if source.warnings:
        transcript.warnings[:0] = source.warnings
    transcript.accounting = source.accounting
    _report_losses(source, transcript, module)
    return transcript


def _report_losses(source: Source, transcript: Transcript, module: ModuleType) -> None:
    """Never silently (spec X-2): records the loader passed over, and a load that showed
    nothing of a non-empty source, are warnings the view shows."""
    unaccounted = source.accounting.unaccounted
    if unaccounted and getattr(module, "RECORDS", None) is not None:
        types = sorted({name for _, name in unaccounted})
        shown = ", ".join(repr(t) for t in types[:5]) + (", …" if len(types) > 5 else "")
        transcript.warnings.append(
            LoadWarning(
                reason=f"{len(unaccounted)} record(s) not read ({shown})",
                line=unaccounted[0][0],
                source=source.name,
            )
        )
    if not transcript.entries and module is not native:  # a dump of an empty one is faithful
        records = source.accounting.total() + len(unaccounted)
        what = f"{records} record(s)" if records else "its records"
        transcript.warnings.append(
            LoadWarning(
                reason=f"nothing to show: {what} read as {module.NAME}, no message among them",
                source=source.name,
            )
        )


def load(source: Any, format: str | None = None) -> Transcript:
    """Read a transcript.

    ``source`` is a path (``str`` or ``os.PathLike``), JSON/JSONL text, bytes, an open file, or
    Python objects (a dict, a list of messages or records, SDK objects). ``format`` forces one of
    :data:`FORMATS`; by default the format that reads the most of the first records wins
    (:mod:`turnfold.formats.detection`). Input that is not a transcript raises
    :class:`TranscriptFormatError`; nothing the caller passed is modified. The transcript's
    ``warnings`` list what was skipped, and its ``accounting`` what became of every record.
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
