"""turnfold's own lossless JSON / JSONL format (spec L-2.1): ``load(t.dump()) == t``.

JSONL layout: a header line ``{"turnfold": 1, "metadata": {...}}``, then one entry per line, then
one ``{"warning": {...}}`` line per load warning (record types for the accounting: ``header``,
each entry's ``kind``, ``warning``). The JSON layout holds the same three parts in
one object. Entries carry their ``kind``; fields left at their default are omitted, so dumps stay
small and a field added later reads back as its default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, Field, fields, is_dataclass
from typing import Any, Literal

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, type_of_record
from turnfold.model import (
    ENTRY_TYPES,
    AbortMarker,
    AssistantError,
    AssistantText,
    Disposition,
    Entry,
    ImageData,
    LoadWarning,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    UserMessage,
    Wording,
)

FORMAT_NAME = "turnfold"
VERSION = 1


def _is_default(f: Field[Any], value: Any) -> bool:
    if f.default is not MISSING:
        return bool(value == f.default)
    if f.default_factory is not MISSING:
        return bool(value == f.default_factory())
    return False


def _encode(value: Any) -> Any:
    if isinstance(value, Transcript):
        return transcript_to_dict(value)
    if is_dataclass(value) and not isinstance(value, type):
        encoded = {
            f.name: _encode(getattr(value, f.name))
            for f in fields(value)
            if not _is_default(f, getattr(value, f.name))
        }
        return {"kind": value.kind, **encoded} if isinstance(value, Entry) else encoded
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """One entry as a JSON-ready dict with its ``kind``."""
    encoded: dict[str, Any] = _encode(entry)
    return encoded


def transcript_to_dict(transcript: Transcript) -> dict[str, Any]:
    return {
        FORMAT_NAME: VERSION,
        "metadata": transcript.metadata,
        "entries": [entry_to_dict(e) for e in transcript.entries],
        "warnings": [_encode(w) for w in transcript.warnings],
    }


def dumps(transcript: Transcript, *, layout: Literal["jsonl", "json"] = "jsonl") -> str:
    """Serialize ``transcript``; non-ASCII text is kept as is."""
    if layout == "json":
        return codec.dumps_exact(transcript_to_dict(transcript), indent=1) + "\n"
    if layout != "jsonl":
        raise ValueError(f"layout must be 'jsonl' or 'json', not {layout!r}")
    lines = [{FORMAT_NAME: VERSION, "metadata": transcript.metadata}]
    lines += [entry_to_dict(e) for e in transcript.entries]
    lines += [{"warning": _encode(w)} for w in transcript.warnings]
    return "".join(codec.dumps_exact(line) + "\n" for line in lines)


# --- reading -------------------------------------------------------------------------------------


_FIELD_NAMES: dict[type[Any], frozenset[str]] = {}


def _field_names(cls: type[Any]) -> frozenset[str]:
    # Cached: dataclasses.fields() is slow enough to dominate decoding a large file.
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset({"kind"} | {f.name for f in fields(cls)})
    return names


def _build(cls: type[Any], data: dict[str, Any], nested: dict[str, Any]) -> Any:
    unknown = sorted(data.keys() - _field_names(cls))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)} for {cls.__name__}")
    values = {k: nested[k](v) if k in nested and v is not None else v for k, v in data.items()}
    if issubclass(cls, Entry):  # an entry's kind is a tag; ToolResult.kind is a real field
        values.pop("kind", None)
    return cls(**values)


def _images(items: list[dict[str, Any]]) -> list[ImageData]:
    return [ImageData(**i) for i in items]


def _tool_result(data: dict[str, Any]) -> ToolResult:
    result: ToolResult = _build(ToolResult, data, {"images": _images, "wording": _wording})
    return result


def _subagent(data: dict[str, Any]) -> SubAgent:
    agent: SubAgent = _build(
        SubAgent, data, {"transcript": transcript_from_dict, "usage": lambda d: Usage(**d)}
    )
    return agent


def _wording(data: dict[str, Any]) -> Wording:
    wording: Wording = _build(Wording, data, {})
    # Its params are formatted into a catalog's message: a dump's other values are refused
    # here, with the line named, rather than failing a render later.
    if not isinstance(wording.key, str) or not isinstance(wording.params, dict):
        raise ValueError("a wording needs a key and a mapping of params")
    if not all(isinstance(v, str) for v in wording.params.values()):
        raise ValueError(f"the params of wording {wording.key!r} must be text")
    return wording


_NESTED: dict[type[Entry], dict[str, Any]] = {
    UserMessage: {"images": _images},
    AssistantText: {"usage": lambda d: Usage(**d), "images": _images},
    Thinking: {"usage": lambda d: Usage(**d)},
    ToolCall: {"result": _tool_result, "subagent": _subagent, "usage": lambda d: Usage(**d)},
    SystemNotice: {"wording": _wording},
    AbortMarker: {"wording": _wording},
    AssistantError: {"usage": lambda d: Usage(**d), "wording": _wording},
}


def entry_from_dict(data: dict[str, Any]) -> Entry:
    """The inverse of :func:`entry_to_dict`; raises ValueError on an unknown kind or field."""
    kind = data.get("kind")
    cls = ENTRY_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown entry kind {kind!r}")
    entry: Entry = _build(cls, data, _NESTED.get(cls, {}))
    return entry


Note = Callable[[str, Disposition], None]


def _no_note(record_type: str, disposition: Disposition) -> None:
    """Loads that keep no accounting (a sub-agent's nested transcript)."""


def entry_type(data: Any) -> str:
    """The record type of an entry line or item: its ``kind`` (``tool_call``, ``user``, …)."""
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) and kind else type_of_record(data)


def transcript_from_dict(
    data: dict[str, Any], *, source: str | None = None, note: Note = _no_note
) -> Transcript:
    """A transcript from the JSON layout; unreadable entries become warnings, not crashes.

    ``note`` is told what became of each entry and warning (spec X-2)."""
    transcript = Transcript(metadata=data.get("metadata") or {})
    for index, item in enumerate(data.get("entries") or []):
        try:
            transcript.append(entry_from_dict(item))
        except (ValueError, TypeError, AttributeError) as exc:
            transcript.warnings.append(LoadWarning(reason=f"entry {index}: {exc}", source=source))
            note(entry_type(item), "warned")
        else:
            note(entry_type(item), "mapped")
    warnings = data.get("warnings") or []
    transcript.warnings[:0] = [LoadWarning(**w) for w in warnings]
    for _ in warnings:
        note("warning", "mapped")
    return transcript


NAME = FORMAT_NAME


def detect(source: Source) -> Evidence:
    """turnfold's own files start with the ``{"turnfold": 1, ...}`` header."""
    values = source.head_values()
    if values and is_native_header(values[0]):
        return Evidence(share=1.0, marks=1)
    return Evidence.none('no {"turnfold": 1} header')


#: A dump's header, its entries by kind and its warnings.
RECORDS = Records(
    mapped={
        "header": "metadata (the first line of JSONL, the object of the JSON layout)",
        **{kind: f"{cls.__name__}, field for field" for kind, cls in ENTRY_TYPES.items()},
        "warning": "a load warning of the dumped transcript",
    },
)


def read(source: Source) -> Transcript:
    """A dump in either layout, every line (or entry) accounted for (:data:`RECORDS`)."""
    document = source.document if source.is_document else None
    if isinstance(document, dict) and "entries" in document:
        source.mapped("header")
        return transcript_from_dict(document, source=source.name, note=source.note)
    return load_records(source.records(), source=source.name, note=source.note)


def is_native_header(record: Any) -> bool:
    """Whether a parsed JSON value (a document or a JSONL first line) is turnfold's format."""
    return isinstance(record, dict) and record.get(FORMAT_NAME) == VERSION


def load_records(
    records: Iterable[tuple[int, Any]], *, source: str, note: Note = _no_note
) -> Transcript:
    """A transcript from JSONL records ``(line number, parsed value)``, header first.

    After the header, a line that could not be parsed (a :class:`MalformedLine`, such as the
    truncated last line of a file still being written) or read as an entry becomes a warning.
    ``note`` is told what became of each line before the next is read (spec X-2).
    """
    iterator: Iterator[tuple[int, Any]] = iter(records)
    first = next(iterator, None)
    if first is None or not is_native_header(first[1]):
        line = first[0] if first else 1
        raise TranscriptFormatError(source, [FORMAT_NAME], line, "missing turnfold header line")
    transcript = Transcript(metadata=first[1].get("metadata") or {})
    note("header", "mapped")
    own_warnings: list[LoadWarning] = []
    for line, record in iterator:
        kind = "warning" if isinstance(record, dict) and "warning" in record else None
        try:
            if isinstance(record, MalformedLine):
                raise ValueError(record.reason)
            if kind is not None:
                transcript.warnings.append(LoadWarning(**record["warning"]))
            else:
                transcript.append(entry_from_dict(record))
        except (ValueError, TypeError, AttributeError) as exc:
            own_warnings.append(LoadWarning(reason=str(exc), line=line, source=source))
            note(kind or entry_type(record), "warned")
        else:
            note(kind or entry_type(record), "mapped")
    transcript.warnings.extend(own_warnings)
    return transcript
