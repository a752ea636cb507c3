"""The one JSON codec of turnfold (issue 19): every loader, the static page, the widget's wire
form and the corpus decode and encode through it.

It is msgspec's JSON decoder and encoder, with the stdlib behind them for what they refuse.
Measured on the 53 MB benchmark session (best of three, one core): ``json.loads`` of every line
0.239 s, ``orjson.loads`` 0.089 s, ``msgspec`` 0.079 s. msgspec is also exact where orjson is
not: orjson turns an integer past 64 bits into a float, msgspec keeps it an ``int``. Typed
decoding (msgspec ``Struct`` records) would skip more, but every loader reads plain dicts.

What msgspec refuses and the stdlib reads (``NaN`` and ``Infinity``, which Python tools write;
lone surrogate escapes) is decoded by the stdlib, so a file reads the same as before. A line
that neither reads raises :class:`JSONDecodeError` with the stdlib's message and column, the
ones a load's warnings and errors quote.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable
from typing import Any, Literal

import msgspec

#: What :func:`loads` raises on text that is not JSON (the stdlib's, with ``msg`` and ``colno``).
JSONDecodeError = json.JSONDecodeError

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def loads(data: bytes | bytearray | str) -> Any:
    """The value of one JSON text.

    Raises :class:`JSONDecodeError` for text that is not JSON, or that no reader can hold
    (nested deeper than Python's recursion limit, a number of thousands of digits), and
    ``UnicodeDecodeError`` for bytes that are not UTF-8 (the caller decides how to show them).
    A UTF-8 byte order mark before the text (Windows tools write one) is passed over.
    """
    try:
        return _decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    return loads_refused(data)


def loads_refused(data: bytes | bytearray | str) -> Any:
    """:func:`loads` of a text msgspec refused already (:func:`fast_loads` raised on its very
    bytes): the stdlib's reading alone. A load asks it of each bad line, which may be millions
    (a log file), so msgspec is not asked twice.
    """
    if data[:1] == "\ufeff":
        return loads(data[1:])
    if data[:3] == _BOM:
        return loads(data[3:])
    try:
        return json.loads(data)
    except JSONDecodeError:
        raise
    except RecursionError:
        raise _unreadable(data, "nested too deeply to read") from None
    except ValueError:  # an integer past sys.get_int_max_str_digits()
        limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
        digits = f" (over {limit} digits)" if limit else ""
        raise _unreadable(data, f"a number too long to read{digits}") from None


_BOM = b"\xef\xbb\xbf"


class UnreadableJSON(JSONDecodeError):
    """JSON that no reader here can hold: nested too deeply, or a number too long."""


def _unreadable(data: bytes | bytearray | str, reason: str) -> UnreadableJSON:
    text = data if isinstance(data, str) else bytes(data[:200]).decode("utf-8", "replace")
    return UnreadableJSON(reason, text, 0)


#: The value of one JSON line (bytes, or a view of them), or raises ``msgspec.DecodeError`` for
#: anything unusual (a blank line, invalid UTF-8, ``NaN``): the hot path of a load, whose caller
#: then takes the careful one (:func:`loads` on decoded text). The decoder's own method, with no
#: Python function around it: a load calls it once a line.
fast_loads: Callable[[bytes | memoryview], Any] = _decode


#: What :func:`fast_loads` raises: msgspec's error, Python's recursion limit reached by a
#: value nested thousands deep (a hostile line must not end the load), or, before msgspec
#: 0.23, the ``UnicodeDecodeError`` of a string that is not UTF-8.
FastDecodeError = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)


def dumps(
    value: Any, *, default: Callable[[Any], Any] | None = None, sort_keys: bool = False
) -> str:
    """Compact JSON text (``,`` and ``:`` with no spaces), non-ASCII kept as it is.

    ``default`` turns a value JSON cannot hold into one it can (``repr``, ``str``); with
    ``sort_keys`` equal values give equal text. ``NaN`` and the infinities become ``null``;
    :func:`dumps_exact` keeps them.
    """
    return dump_bytes(value, default=default, sort_keys=sort_keys).decode("utf-8")


def dump_bytes(
    value: Any, *, default: Callable[[Any], Any] | None = None, sort_keys: bool = False
) -> bytes:
    """:func:`dumps` as UTF-8 bytes, for writing a file or a page with no second copy."""
    try:
        if default is None and not sort_keys:
            return _encode(value)
        order: Literal["sorted"] | None = "sorted" if sort_keys else None
        return msgspec.json.encode(value, enc_hook=default, order=order)
    except (TypeError, OverflowError, UnicodeEncodeError):
        # Keys that are not strings, a lone surrogate: what the stdlib still writes.
        try:
            text = json.dumps(value, ensure_ascii=False, default=default, sort_keys=sort_keys)
        except RecursionError:
            text = _deep(value, None, default, sort_keys=sort_keys)
        return text.encode("utf-8", "surrogatepass")
    except RecursionError:
        return _deep(value, None, default, sort_keys=sort_keys).encode("utf-8", "surrogatepass")


def pretty(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """JSON indented by two spaces, for people to read (tool arguments, structured results):
    the text of ``json.dumps(value, indent=2, ensure_ascii=False, default=default)``.

    Written by msgspec when that gives the same text, which is most tool arguments: ``indent``
    sends every value through the stdlib's pure-Python encoder, a large share of building a big
    view (Q-1). Floats, NaN and anything else msgspec writes otherwise go to the stdlib.
    """
    try:
        if _flat_alike(value) or _written_alike(value):
            try:
                return msgspec.json.format(_encode(value), indent=2).decode("utf-8")
            except (TypeError, OverflowError, UnicodeEncodeError):  # a lone surrogate, a huge int
                pass
        return json.dumps(value, indent=2, ensure_ascii=False, default=default)
    except RecursionError:
        return _deep(value, 2, default)


#: The values msgspec writes exactly as ``json.dumps`` does. Not floats: msgspec writes the
#: shortest form (``0.000015``, ``1e100``), the stdlib ``repr``'s (``1.5e-05``, ``1e+100``), and
#: pages and their golden files keep the stdlib's; not NaN, which msgspec writes as ``null``.
_EXACT_LEAVES = frozenset({str, int, bool, type(None)})


def _written_alike(value: Any) -> bool:
    """Whether :func:`pretty` writes ``value`` as ``json.dumps`` does (below):
    plain dicts with string keys, lists and those leaves, no subclass of any of them."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _EXACT_LEAVES:
            continue
        if kind is dict:
            if not all(type(key) is str for key in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        else:
            return False
    return True


def _flat_alike(value: Any) -> bool:
    """:func:`_written_alike` for one dict of leaves (most tool arguments), with no stack."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str or type(item) not in _EXACT_LEAVES:
            return False
    return True


def dumps_exact(value: Any, *, indent: int | None = None) -> str:
    """JSON that reads back to an equal value, ``NaN`` and the infinities included.

    For turnfold's own lossless format (``Transcript.dump``): the compact encoder writes
    non-finite floats as ``null``, so a value holding one is written by the stdlib, which
    writes ``NaN`` and ``Infinity`` as :func:`loads` reads them. A value JSON has no form for
    (a Python object a framework's message held, kept as it was) is written as its ``str``,
    as every view shows it: a file can hold no more of it.
    """
    try:
        if indent is None and not _has_non_finite(value):
            try:
                return _encode(value).decode("utf-8")
            except (TypeError, OverflowError, UnicodeEncodeError):
                pass
        return json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    except RecursionError:
        return _deep(value, indent, str)


def _deep(
    value: Any,
    indent: int | None,
    default: Callable[[Any], Any] | None,
    *,
    sort_keys: bool = False,
) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False, default=default)`` (compact
    separators when ``indent`` is None) without recursion, for a value nested too deeply for
    the encoders above (spec X-1, X-2).

    :func:`loads` reads a value nested almost to the recursion limit when the reader's stack
    is shallow; the encoders then meet it deeper in the stack, while a page or a view is built,
    and a transcript author's ``[[[…]]]`` must not make the whole transcript unshowable.

    >>> deep = [{"a": 1}]
    >>> for _ in range(5_000):
    ...     deep = [deep]
    >>> _deep(deep, None, None) == "[" * 5_001 + '{"a":1}' + "]" * 5_001
    True
    >>> _deep({"k": [1, "é", None, {}], "e": []}, 2, None) == json.dumps(
    ...     {"k": [1, "é", None, {}], "e": []}, indent=2, ensure_ascii=False)
    True
    """
    out: list[str] = []
    key_separator = ": " if indent is not None else ":"
    # What is left to write, last first: text as it is, or a value and its depth.
    todo: list[tuple[Any, int, bool]] = [(value, 0, False)]  # (item, depth, is it text)
    while todo:
        item, depth, is_text = todo.pop()
        if is_text:
            out.append(item)
            continue
        if isinstance(item, (dict, list, tuple)):
            pairs: Iterable[tuple[Any, Any]] | None = (
                item.items() if isinstance(item, dict) else None
            )
            if not item:
                out.append("{}" if pairs is not None else "[]")
                continue
            if pairs is not None and sort_keys:
                pairs = sorted(pairs)
            inner = "\n" + " " * (indent * (depth + 1)) if indent is not None else ""
            outer = "\n" + " " * (indent * depth) if indent is not None else ""
            parts: list[tuple[Any, int, bool]] = []
            for at, element in enumerate(pairs if pairs is not None else item):
                lead = ("," if at else "") + inner
                if pairs is not None:
                    key, element = element
                    name = key if isinstance(key, str) else json.dumps(key)
                    lead += json.dumps(name, ensure_ascii=False) + key_separator
                parts += [(lead, 0, True), (element, depth + 1, False)]
            opening, closing = ("{", "}") if pairs is not None else ("[", "]")
            todo += [(outer + closing, 0, True), *reversed(parts), (opening, 0, True)]
        elif item is None or isinstance(item, (str, int, float, bool)):
            out.append(json.dumps(item, ensure_ascii=False))
        elif default is not None:
            todo.append((default(item), depth, False))
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
    return "".join(out)


def _has_non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False
