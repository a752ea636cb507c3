"""turnfold's own lossless JSON / JSONL format (spec L-2.1): ``load(t.dump()) == t``.

JSONL layout: a header line ``{"turnfold": 1, "metadata": {...}}``, then one entry per line, then
one ``{"warning": {...}}`` line per load warning, the last, past the listed ones, with the
``count`` of the rest (record types for the accounting: ``header``,
each entry's ``kind``, ``warning``). The JSON layout holds the same three parts in
one object. Entries carry their ``kind``; fields left at their default are omitted, so dumps stay
small and a field added later reads back as its default. A count may hold, as ``joined``, one
warning of each sub-agent's list whose warnings its reader copied into the counted ones
(:func:`turnfold.nesting.copies_counted`), so that they are counted once when read again; a
dump without it (one written before) reads as a count that joined none.

Reading checks each value against its field's type as :mod:`turnfold.model` declares it (one
table per class, derived from the type hints): a value of another type (a number written as
text included) is a warning naming the line or entry and the field, which is read as its
default, so that a hostile or corrupt file still shows all it holds and fails no view (L-4).
"""

from __future__ import annotations

import reprlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING, Field, fields, is_dataclass
from functools import cache
from types import MappingProxyType, UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import (
    Source,
    UnlistedWarnings,
    join_warnings,
    keep_warning,
    type_of_record,
)
from turnfold.model import (
    ENTRY_TYPES,
    Disposition,
    Entry,
    LoadWarning,
    Transcript,
    Wording,
)
from turnfold.nesting import MAX_DEPTH, copies_counted

FORMAT_NAME = "turnfold"
VERSION = 1


def _is_default(f: Field[Any], value: Any) -> bool:
    if f.default is not MISSING:
        return bool(value == f.default)
    if f.default_factory is not MISSING:
        return bool(value == f.default_factory())
    return False


#: What a dump writes with each count of warnings, by the count's id: the warnings of
#: sub-agents' lists it holds (:func:`turnfold.nesting.copies_counted`).
Copies = Mapping[int, list[LoadWarning]]
_NO_COPIES: Copies = MappingProxyType({})


def _encode(value: Any, copies: Copies = _NO_COPIES) -> Any:
    if isinstance(value, Transcript):
        return transcript_to_dict(value, copies)
    if is_dataclass(value) and not isinstance(value, type):
        encoded = {
            f.name: _encode(getattr(value, f.name), copies)
            for f in fields(value)
            if not _is_default(f, getattr(value, f.name))
        }
        if type(value) is UnlistedWarnings and id(value) in copies:
            # Not a field: the model keeps the chain of objects, the file what the notice
            # reads of it. Written without their own: each is a copy, not a count of the list.
            encoded["joined"] = [_encode(w) for w in copies[id(value)]]
        return {"kind": value.kind, **encoded} if isinstance(value, Entry) else encoded
    if isinstance(value, list):
        return [_encode(v, copies) for v in value]
    return value


def entry_to_dict(entry: Entry, copies: Copies = _NO_COPIES) -> dict[str, Any]:
    """One entry as a JSON-ready dict with its ``kind``; ``copies`` are what the counts of
    warnings of its sub-agents write (those of the transcript dumped)."""
    encoded: dict[str, Any] = _encode(entry, copies)
    return encoded


def sub_agent_depth(transcript: Transcript) -> int | None:
    """How many sub-agents deep the calls of ``transcript`` nest (0 when none runs one), or
    None when they nest in a circle. Walked with a stack, not by recursion, each transcript
    once: a transcript of any depth is measured before it is written."""
    height: dict[int, int] = {}
    on_path: set[int] = set()  # the transcripts whose sub-agents are being measured
    todo: list[tuple[Transcript, bool]] = [(transcript, False)]
    while todo:
        current, measured = todo.pop()
        key = id(current)
        inner = [
            call.subagent.transcript
            for call in current.tool_calls()
            if call.subagent is not None and call.subagent.transcript is not None
        ]
        if measured:
            on_path.discard(key)
            height[key] = max((height[id(child)] + 1 for child in inner), default=0)
        elif key in on_path:
            return None
        elif key not in height:
            on_path.add(key)
            todo.append((current, True))
            todo += [(child, False) for child in reversed(inner)]
    return height[id(transcript)]


def transcript_to_dict(transcript: Transcript, copies: Copies | None = None) -> dict[str, Any]:
    """The JSON layout of ``transcript``; ``copies`` are those of the transcript dumped when it
    is a sub-agent's, else found for it (:func:`turnfold.nesting.copies_counted`)."""
    if copies is None:
        copies = copies_counted(transcript)
    return {
        FORMAT_NAME: VERSION,
        "metadata": transcript.metadata,
        "entries": [entry_to_dict(e, copies) for e in transcript.entries],
        "warnings": [_encode(w, copies) for w in transcript.warnings],
    }


#: How many sub-agents deep a dump nests (level 0 the transcript dumped): twice the levels
#: every reader nests (:data:`turnfold.nesting.MAX_DEPTH`), room for a transcript built through
#: the model. Each level is four levels of JSON and some six frames of the loader's (eight of
#: the writer's): 64 levels read back in some 400 of Python's default 1,000 frames, the rest
#: left to a notebook's own stack. A file much deeper is one no JSON reader here reads back
#: (they stop at the recursion limit), so :func:`dumps` refuses it rather than write it.
MOST_LEVELS = 2 * MAX_DEPTH


class TooDeepToDump(ValueError):
    """A transcript :func:`dumps` refuses: its sub-agents nest deeper than :data:`MOST_LEVELS`,
    or in a circle (a transcript that runs itself, or one it is nested in)."""


def dumps(transcript: Transcript, *, layout: Literal["jsonl", "json"] = "jsonl") -> str:
    """Serialize ``transcript``; non-ASCII text is kept as is.

    Raises :class:`TooDeepToDump` for a transcript whose sub-agents nest deeper than
    :data:`MOST_LEVELS` or in a circle: ``load(t.dump()) == t`` must hold, and turnfold could
    not read such a file back (a circle would be a file without end). Refused before anything
    is written, as no part of it would be the transcript given."""
    depth = sub_agent_depth(transcript)
    if depth is None:
        raise TooDeepToDump(
            "cannot dump: sub-agents nest in a circle (a transcript runs itself, or one it is "
            "nested in); turnfold's format holds each sub-agent's transcript inside its call"
        )
    if depth > MOST_LEVELS:
        raise TooDeepToDump(
            f"cannot dump: sub-agents nest {depth:,} deep, past the {MOST_LEVELS} turnfold's "
            "format holds (a file deeper than that could not be loaded back within Python's "
            "recursion limit)"
        )
    if layout == "json":
        return codec.dumps_exact(transcript_to_dict(transcript), indent=1) + "\n"
    if layout != "jsonl":
        raise ValueError(f"layout must be 'jsonl' or 'json', not {layout!r}")
    copies = copies_counted(transcript)
    lines = [{FORMAT_NAME: VERSION, "metadata": transcript.metadata}]
    lines += [entry_to_dict(e, copies) for e in transcript.entries]
    lines += [{"warning": _encode(w, copies)} for w in transcript.warnings]
    return "".join(codec.dumps_exact(line) + "\n" for line in lines)


# --- reading -------------------------------------------------------------------------------------


class _WrongType(Exception):
    """A value not of its declared type: its field is read as its default, with a warning."""


#: A field that falls back to its default (the value dropped, or the entry's ``kind`` tag).
_DEFAULT: Any = object()

#: What was wrong with the values of one record, each as ``"<field>: <why>; <what was kept>"``:
#: the loader turns each into a warning naming the file, the line or entry, and the field.
Problems = list[str]
#: A value made to fit its declared type, or :class:`_WrongType`; ``ValueError`` for a nested
#: record that cannot be read at all (its entry is then unreadable, spec L-4).
Convert = Callable[[Any, str, Problems], Any]
#: How one field is checked: a value of one of the exact types, or one of the texts, is kept
#: with no further look (every value of a valid dump but records and typed lists), the rest
#: converted. Two set lookups: the checks run on every field of every entry of a large file.
Check = tuple[frozenset[type], frozenset[str], Convert]

_NO_TEXTS: frozenset[str] = frozenset()

_JSON_TYPES: frozenset[type] = frozenset({str, int, float, bool, type(None), list, dict})
_WORDS: dict[type, str] = {str: "text", int: "an integer", float: "a number", bool: "true or false",
                           type(None): "null", list: "a list", dict: "an object"}  # fmt: skip
_DESCRIBE = reprlib.Repr()  # a hostile value is named in a warning, never shown whole
_DESCRIBE.maxstring = _DESCRIBE.maxother = 40
_DESCRIBE.maxlist = _DESCRIBE.maxdict = 4
_DESCRIBE.maxlevel = 2


def _wrong(value: Any, expected: str, numeric: bool = False) -> _WrongType:
    said = f"{_DESCRIBE.repr(value)} is not {expected}"
    if numeric and isinstance(value, str):
        try:
            float(value)
        except ValueError:
            pass
        else:  # a dump writes numbers as numbers: text that reads as one is not taken for one
            said += " (a number written as text is not read as one)"
    return _WrongType(said)


def _refused(types: frozenset[type], expected: str) -> Convert:
    """The convert of a field whose values are all plain (:data:`Check`): any other is wrong."""
    numeric = bool(types & {int, float})

    def convert(value: Any, path: str, problems: Problems) -> Any:
        raise _wrong(value, expected, numeric)

    return convert


def _keep(value: Any, path: str, problems: Problems) -> Any:
    return value


def _one_of(values: tuple[Any, ...]) -> Check:
    if not all(type(v) is str for v in values):
        raise TypeError(f"no check for a Literal of other values than text: {values!r}")
    return (
        frozenset(),
        frozenset(values),
        _refused(frozenset(), "one of " + ", ".join(map(repr, values))),
    )


def _list_of(item: Any) -> Check:
    plain, texts, convert = _check(item)
    if plain is _JSON_TYPES:
        return frozenset({list}), _NO_TEXTS, _refused(frozenset({list}), "a list")

    def convert_list(value: Any, path: str, problems: Problems) -> Any:
        if type(value) is not list:
            raise _wrong(value, "a list")
        if not texts and all(type(v) in plain for v in value):
            return value
        kept = []
        for index, v in enumerate(value):
            try:
                kept.append(v if type(v) in plain else convert(v, f"{path}[{index}]", problems))
            except _WrongType as wrong:
                problems.append(f"{path}[{index}]: {wrong}; left out")
        return kept

    return frozenset(), _NO_TEXTS, convert_list


def _dict_of(item: Any) -> Check:
    plain, texts, convert = _check(item)
    if plain is _JSON_TYPES:
        return frozenset({dict}), _NO_TEXTS, _refused(frozenset({dict}), "an object")
    if texts:
        raise TypeError("no check for a mapping of enumerated values")

    def convert_dict(value: Any, path: str, problems: Problems) -> Any:
        if type(value) is not dict:
            raise _wrong(value, "an object")
        kept = {}
        for key, v in value.items():
            try:
                kept[key] = v if type(v) in plain else convert(v, f"{path}[{key!r}]", problems)
            except _WrongType as wrong:
                problems.append(f"{path}[{key!r}]: {wrong}; left out")
        return kept

    return frozenset(), _NO_TEXTS, convert_dict


#: Converts that raise no :class:`_WrongType`: a record either reads or is unreadable.
_SHAPES: set[Convert] = set()


def _record_of(cls: type[Any]) -> Check:
    read = _READERS.get(cls, _build)

    def convert(value: Any, path: str, problems: Problems) -> Any:
        if type(value) is not dict:  # a record's shape, not a value: its entry is unreadable
            raise ValueError(f"{path}: {_DESCRIBE.repr(value)} is not a {cls.__name__} object")
        return read(cls, value, f"{path}.", problems)

    _SHAPES.add(convert)
    return frozenset(), _NO_TEXTS, convert


def _union_of(members: tuple[Any, ...]) -> Check:
    checks = [_check(m) for m in members]
    plain = frozenset().union(*(p for p, _, _ in checks))
    texts = frozenset().union(*(t for _, t, _ in checks))
    # A member of plain types or texts only has nothing to convert.
    converts = [c for p, t, c in checks if not p and not t]
    if len(converts) == 1 and converts[0] in _SHAPES:
        return plain, texts, converts[0]  # one record or null: nothing of its own to say
    expected = " or ".join(_expected(m) for m in members)
    numeric = bool(plain & {int, float})

    def convert(value: Any, path: str, problems: Problems) -> Any:
        for member in converts:
            try:
                return member(value, path, problems)
            except _WrongType:
                continue
        raise _wrong(value, expected, numeric)

    return plain, texts, convert


def _expected(tp: Any) -> str:
    """How a warning names a declared type."""
    if tp is Any:
        return "any value"
    if get_origin(tp) is Literal:
        return "one of " + ", ".join(map(repr, get_args(tp)))
    if get_origin(tp) in (Union, UnionType):
        return " or ".join(_expected(m) for m in get_args(tp))
    origin = get_origin(tp) or tp
    return _WORDS.get(origin) or f"a {getattr(origin, '__name__', origin)} object"


@cache
def _check(tp: Any) -> Check:
    """The check of a value declared ``tp`` in :mod:`turnfold.model`, derived from the type
    itself so that a field added there is checked with no change here."""
    if tp is Any:
        return _JSON_TYPES, _NO_TEXTS, _keep
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return _one_of(args)
    if origin in (Union, UnionType):
        return _union_of(args)
    if origin is list:
        return _list_of(args[0] if args else Any)
    if origin is dict:
        return _dict_of(args[1] if args else Any)
    if tp is float:  # an int is a float's value (the numeric tower): kept as it is, no copy
        return frozenset({float, int}), _NO_TEXTS, _refused(frozenset({float, int}), "a number")
    if tp is Transcript:
        _SHAPES.add(_nested_transcript)
        return frozenset(), _NO_TEXTS, _nested_transcript
    if isinstance(tp, type) and is_dataclass(tp):
        return _record_of(tp)
    if tp in _WORDS:
        return frozenset({tp}), _NO_TEXTS, _refused(frozenset({tp}), _WORDS[tp])
    raise TypeError(f"no check for the model's type {tp!r}")  # a new kind of field: add one


def _field_check(tp: Any, default: Any) -> Check:
    plain, texts, convert = _check(tp)
    if convert in _SHAPES:
        return plain, texts, convert
    if default is MISSING:  # a required field has no default: its record is unreadable

        def required(value: Any, path: str, problems: Problems) -> Any:
            try:
                return convert(value, path, problems)
            except _WrongType as wrong:
                raise ValueError(f"{path}: {wrong}") from None

        return plain, texts, required
    shown = "left out" if default in (None, "", [], {}) else f"read as {default!r}"

    def check(value: Any, path: str, problems: Problems) -> Any:
        try:
            return convert(value, path, problems)
        except _WrongType as wrong:
            problems.append(f"{path}: {wrong}; {shown}")
            return _DEFAULT

    return plain, texts, check


def _tag(value: Any, path: str, problems: Problems) -> Any:
    return _DEFAULT  # an entry's kind names its class; ToolResult.kind is a real field


_CHECKS: dict[type[Any], dict[str, Check]] = {}


def _checks(cls: type[Any]) -> dict[str, Check]:
    """Each field of ``cls`` with its check, built once per class: ``dataclasses.fields()`` and
    type hints are far too slow to ask for each record of a large file."""
    checks = _CHECKS.get(cls)
    if checks is None:
        hints = get_type_hints(cls)
        checks = {}
        for f in fields(cls):
            default = f.default_factory() if f.default_factory is not MISSING else f.default
            checks[f.name] = _field_check(hints[f.name], default)
        if issubclass(cls, Entry):
            checks["kind"] = (frozenset(), _NO_TEXTS, _tag)
        _CHECKS[cls] = checks
    return checks


def _build(cls: type[Any], data: dict[str, Any], path: str, problems: Problems) -> Any:
    """``cls`` from a dump's object: an unknown or missing field makes it unreadable
    (``ValueError``, ``TypeError``); a value of the wrong type is a problem, its field read as
    its default, so that every view can draw what the record holds (spec L-4)."""
    checks = _CHECKS.get(cls) or _checks(cls)
    values = {}
    for name, value in data.items():
        check = checks.get(name)
        if check is None:
            unknown = sorted(str(k) for k in data.keys() - checks.keys())
            raise ValueError(f"unknown field(s) {', '.join(unknown)} for {cls.__name__}")
        kind = type(value)
        if kind not in check[0] and (kind is not str or value not in check[1]):
            value = check[2](value, path + name, problems)
            if value is _DEFAULT:
                continue
        values[name] = value
    return cls(**values)


def _wording(cls: type[Any], data: dict[str, Any], path: str, problems: Problems) -> Wording:
    # Its params are formatted into a catalog's message: a dump's other values are refused
    # here, with the line named, rather than failing a render later.
    if not isinstance(data.get("key"), str) or not isinstance(data.get("params", {}), dict):
        raise ValueError("a wording needs a key and a mapping of params")
    if not all(isinstance(v, str) for v in data.get("params", {}).values()):
        raise ValueError(f"the params of wording {data['key']!r} must be text")
    wording: Wording = _build(cls, data, path, problems)
    return wording


#: Records read by more than :func:`_build`: a wording that does not fit its message is no
#: wording at all (its entry is unreadable), as ``tests/test_i18n_notices.py`` requires.
_READERS: dict[type[Any], Callable[[type[Any], dict[str, Any], str, Problems], Any]] = {
    Wording: _wording
}


class _Reading(threading.local):
    """How many sub-agents deep the transcript being read nests, in each thread."""

    level = 0


_READING = _Reading()


def _nested_transcript(value: Any, path: str, problems: Problems) -> Transcript:
    if type(value) is not dict:
        raise ValueError(f"{path}: {_DESCRIBE.repr(value)} is not a transcript object")
    if _READING.level >= MOST_LEVELS:
        # Read by recursion, some six frames a level: a file nesting deeper than a dump does
        # (written by hand, or hostile) must not end the load. The call keeps its line and
        # result; the field's problem names where its sub-agent's steps were left unread.
        problems.append(
            f"{path}: sub-agents nest deeper than the {MOST_LEVELS} levels turnfold's format "
            f"holds; the steps of the sub-agent at level {MOST_LEVELS + 1} (and any under "
            "it) are not read"
        )
        return _DEFAULT  # type: ignore[no-any-return]
    _READING.level += 1
    try:
        return _transcript(value, None, _no_note, f"{path}.", problems)
    finally:
        _READING.level -= 1


def entry_from_dict(data: dict[str, Any], problems: Problems | None = None) -> Entry:
    """The inverse of :func:`entry_to_dict`; raises ValueError on an unknown kind or field.

    A value not of its field's declared type is added to ``problems`` and its field read as
    its default; without ``problems``, it raises ValueError.
    """
    kind = data.get("kind") if isinstance(data, dict) else None
    cls = ENTRY_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown entry kind {kind!r}")
    found: Problems = [] if problems is None else problems
    entry: Entry = _build(cls, data, "", found)
    if problems is None and found:
        raise ValueError(found[0])
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
    return _transcript(data, source, note, "", None)


def _metadata(value: Any, problems: Problems) -> dict[str, Any]:
    if type(value) is dict:
        return value
    if value is not None:
        problems.append(f"metadata: {_DESCRIBE.repr(value)} is not an object; left out")
    return {}


def _items(data: dict[str, Any], name: str, problems: Problems) -> list[Any]:
    value = data.get(name)
    if type(value) is list:
        return value
    if value is not None:
        problems.append(f"{name}: {_DESCRIBE.repr(value)} is not a list; none read")
    return []


def _transcript(
    data: dict[str, Any], source: str | None, note: Note, path: str, outer: Problems | None
) -> Transcript:
    """A transcript of the JSON layout. A nested one (a sub-agent's) tells what it could not
    read to ``outer``, the problems of the entry that holds it, for the file's warnings to name
    them: its own warnings are data of the dump, which no view shows."""
    problems: Problems = []
    transcript = Transcript(metadata=_metadata(data.get("metadata"), problems))
    entries, recorded = _items(data, "entries", problems), _items(data, "warnings", problems)
    warnings, kept = transcript.warnings, []
    for index, item in enumerate(entries):
        found: Problems = []
        try:
            entry = entry_from_dict(item, found)
        except (ValueError, TypeError, AttributeError) as exc:
            if outer is None:
                keep_warning(warnings, LoadWarning(reason=f"entry {index}: {exc}", source=source))
            else:  # its own warnings would be out of sight
                problems.append(f"entries[{index}]: {exc}")
            note(entry_type(item), "warned")
            continue
        kept.append(entry)
        note(entry_type(item), "mapped")
        if found and outer is not None:
            problems += [f"entries[{index}].{p}" for p in found]
        elif found:
            where = f"entry {index}: {entry.kind} field "
            for p in found:
                keep_warning(
                    warnings, LoadWarning(reason=where + p, source=source, record=entry.id or None)
                )
    transcript.extend(kept)
    read: list[LoadWarning] = []
    for index, item in enumerate(recorded):
        try:
            _keep_loaded(read, _load_warning(item, problems, f"warnings[{index}]."))
        except (ValueError, TypeError) as exc:
            problems.append(f"warnings[{index}]: {exc}")
            note("warning", "warned")
        else:
            note("warning", "mapped")
    join_warnings(warnings, read, before=True)
    if outer is not None:
        outer += [path + p for p in problems]
    else:
        join_warnings(warnings, [LoadWarning(reason=p, source=source) for p in problems])
    return transcript


def _load_warning(value: Any, problems: Problems, path: str, *, copy: bool = False) -> LoadWarning:
    """A dumped warning; one with a ``count`` is the :class:`UnlistedWarnings` that counted a
    source's warnings past the listed ones (its ``reason`` is written from the count), and the
    sub-agents' warnings it holds, ``joined``, are what it joined (:func:`_copies`). A
    ``copy``, one of those, joined nothing of its own."""
    if type(value) is not dict:
        raise ValueError(f"{_DESCRIBE.repr(value)} is not a warning object")
    if "count" not in value:
        warning: LoadWarning = _build(LoadWarning, value, path, problems)
        return warning
    count = value["count"]
    if type(count) is not int or count < 1:  # it stands for at least one warning
        raise ValueError(f"count: {_DESCRIBE.repr(count)} is not a positive whole number")
    if copy or "joined" not in value:  # a copy's ``joined`` is an unknown field (no nesting)
        unlisted: UnlistedWarnings = _build(UnlistedWarnings, value, path, problems)
        return unlisted
    unlisted = _build(
        UnlistedWarnings, {k: v for k, v in value.items() if k != "joined"}, path, problems
    )
    unlisted.joined = _copies(value["joined"], problems, path + "joined")
    return unlisted


def _copies(value: Any, problems: Problems, path: str) -> tuple[LoadWarning, ...]:
    """The sub-agents' warnings a count holds (:func:`turnfold.nesting.copies_counted`), each
    that cannot be read a problem, left out: its sub-agent's list is then counted again."""
    if type(value) is not list:
        problems.append(f"{path}: {_DESCRIBE.repr(value)} is not a list; left out")
        return ()
    copies = []
    for index, item in enumerate(value):
        try:
            copies.append(_load_warning(item, problems, f"{path}[{index}].", copy=True))
        except (ValueError, TypeError) as exc:
            problems.append(f"{path}[{index}]: {exc}; left out")
    return tuple(copies)


def _keep_loaded(warnings: list[LoadWarning], warning: LoadWarning) -> None:
    """Keep a dumped warning in ``warnings`` as :func:`keep_warning` does; a dumped count
    joins as the count it holds (:func:`keep_warning` would count it as one warning), itself
    where it ends the warnings, so that ``load(dump(t)) == t`` (spec L-2)."""
    if type(warning) is not UnlistedWarnings:
        keep_warning(warnings, warning)
    elif warnings and type(warnings[-1]) is UnlistedWarnings:
        join_warnings(warnings, [warning])
    else:  # keep_warning listed at most MAX_LISTED_WARNINGS before it
        warnings.append(warning)


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
    problems: Problems = []
    transcript = Transcript(metadata=_metadata(first[1].get("metadata"), problems))
    note("header", "mapped")
    own_warnings = [LoadWarning(reason=p, line=first[0], source=source) for p in problems]
    for line, record in iterator:
        kind = "warning" if isinstance(record, dict) and "warning" in record else None
        problems = []
        try:
            if isinstance(record, MalformedLine):
                raise ValueError(record.reason)
            if kind is not None:
                _keep_loaded(transcript.warnings, _load_warning(record["warning"], problems, ""))
                where, record_id = "warning field ", None
            else:
                entry = entry_from_dict(record, problems)
                where, record_id = f"{entry.kind} field ", entry.id or None
                transcript.append(entry)
        except (ValueError, TypeError, AttributeError) as exc:
            keep_warning(own_warnings, LoadWarning(reason=str(exc), line=line, source=source))
            note(kind or entry_type(record), "warned")
        else:
            note(kind or entry_type(record), "mapped")
            for p in problems:
                keep_warning(
                    own_warnings,
                    LoadWarning(reason=where + p, line=line, source=source, record=record_id),
                )
    join_warnings(transcript.warnings, own_warnings)
    return transcript
