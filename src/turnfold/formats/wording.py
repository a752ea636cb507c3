"""Entries whose text a reader writes itself: a notice, a stop, a failure or a tool's result in
turnfold's words.

Such text is kept in English, as the entry's data, with the catalog message it came from (a
:class:`~turnfold.model.Wording`), so a view in another locale says it in its own language
(:func:`turnfold.i18n.localized`). The values passed in are the source's (a status, a name, an
error text) and are inserted as they are, never translated; a word a reader puts in a value
(a token kind) is a message of its own (:func:`turnfold.i18n.with_words`). Text the source wrote
itself is no reader's wording: it goes into the entry as it is, with no ``wording``.

>>> handoff = notice("reader.handed_off", {"target": "billing"}, subtype="handoff")
>>> handoff.text, handoff.wording
('Handed off to billing', Wording(key='reader.handed_off', params={'target': 'billing'}))
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

from turnfold.i18n import DEFAULT_LOCALE, catalog, with_words
from turnfold.model import AbortMarker, AssistantError, SystemNotice, ToolResult, Wording


def worded(key: str, params: Mapping[str, Any] | None = None) -> tuple[str, Wording]:
    """The English text of the catalog message ``key`` with ``params``, and its wording.

    A value is written as an f-string writes it (``None`` too); the wording keeps only the
    values its message says, so one set of values serves each variant of a message."""
    message = catalog(DEFAULT_LOCALE)[key]
    named = {name for _, name, _, _ in Formatter().parse(message) if name}
    given = {
        name: str(value)
        for name, value in (params or {}).items()
        if name in named or name.partition(".")[0] in named  # a list's items (with_words)
    }
    return message.format_map(with_words(given, DEFAULT_LOCALE)), Wording(key=key, params=given)


def notice(key: str, params: Mapping[str, Any] | None = None, /, **fields: Any) -> SystemNotice:
    """A :class:`SystemNotice` in the reader's words; ``fields`` are its other fields."""
    text, wording = worded(key, params)
    return SystemNotice(text=text, wording=wording, **fields)


def stop(key: str, params: Mapping[str, Any] | None = None, /, **fields: Any) -> AbortMarker:
    """An :class:`AbortMarker` whose reason is the reader's words."""
    text, wording = worded(key, params)
    return AbortMarker(reason=text, wording=wording, **fields)


def failure(key: str, params: Mapping[str, Any] | None = None, /, **fields: Any) -> AssistantError:
    """An :class:`AssistantError` whose message is the reader's words."""
    text, wording = worded(key, params)
    return AssistantError(message=text, wording=wording, **fields)


def result(key: str, params: Mapping[str, Any] | None = None, /, **fields: Any) -> ToolResult:
    """A :class:`ToolResult` whose text is the reader's words (a call an approver refused, a
    denial): what the source says the call returned, when it holds no output of the call's."""
    text, wording = worded(key, params)
    return ToolResult(text=text, wording=wording, **fields)
