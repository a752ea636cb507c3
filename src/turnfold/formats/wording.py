"""Entries whose text a reader writes itself: a notice, a stop or a failure in turnfold's words.

Such text is kept in English, as the entry's data, with the catalog message it came from (a
:class:`~turnfold.model.Wording`), so a view in another locale says it in its own language
(:func:`turnfold.i18n.localized`). The values passed in are the source's (a status, a name, an
error text) and are inserted as they are, never translated. Text the source wrote itself is no
reader's wording: it goes into the entry as it is, with no ``wording``.

>>> handoff = notice("reader.handed_off", {"target": "billing"}, subtype="handoff")
>>> handoff.text, handoff.wording
('Handed off to billing', Wording(key='reader.handed_off', params={'target': 'billing'}))
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

from turnfold.i18n import DEFAULT_LOCALE, catalog
from turnfold.model import AbortMarker, AssistantError, SystemNotice, Wording


def worded(key: str, params: Mapping[str, Any] | None = None) -> tuple[str, Wording]:
    """The English text of the catalog message ``key`` with ``params``, and its wording.

    A value is written as an f-string writes it (``None`` too); the wording keeps only the
    values its message says, so one set of values serves each variant of a message."""
    message = catalog(DEFAULT_LOCALE)[key]
    named = {name for _, name, _, _ in Formatter().parse(message) if name}
    given = {name: str(value) for name, value in (params or {}).items() if name in named}
    return message.format_map(given), Wording(key=key, params=given)


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
