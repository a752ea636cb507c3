"""The grammar of view-model keys: every key is built and read back here (spec P-10, issue 14).

Fold memory rests on keys (the JS view remembers what the reader opened by key), so a key must
stay the same when entries are appended, a mode is switched or an item becomes a group: keys are
made from entry ids, never from positions or labels. A key is a *prefix* and a *local* part:

==============  ===================================  ============================================
kind            local part                           what it names
==============  ===================================  ============================================
``entry``       ``<id>``                             an entry's own node (a tool, a thinking row)
``turn``        ``turn:<id>``                        a turn, by its first entry
``process``     ``process:turn:<id>``                the one process disclosure of that turn
``batch``       ``batch:<id>``                       a batch, by its first call
``batch-tail``  ``batch-tail:<id>``                  a batch's badges after a trailing command
``command``     ``command:<id>``                     a command-first row
``summary``     ``summary:<id>``                     a summary row, by its first call
``group``       ``group:<the first member's key>``   an activity group (the prefix is the member's)
``timeline``    ``timeline:<the turn's key>``        one turn of the timeline, drawn in detail (U-4)
==============  ===================================  ============================================

The whole timeline, like the session header, has a key of its own outside the grammar:
:data:`TIMELINE`.

Inside a sub-agent's transcript every key is prefixed with ``<key of the spawning call>/``, so
the prefix of a key is the chain of calls that leads to it, and an entry id is never read as a
prefix: ids hold no ``/`` (loaders keep source ids verbatim, and none of the formats' ids do;
:func:`parse` of a key whose id does is not exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

KeyKind = Literal[
    "entry", "turn", "process", "batch", "batch-tail", "command", "summary", "group", "timeline"
]

#: Ends the key of a spawning call in the prefix of every key of its sub-agent's transcript.
SEPARATOR = "/"
#: The local parts' leading words, longest first where one starts another (``batch-tail:``).
_MARKS: tuple[tuple[str, KeyKind], ...] = (
    ("process:turn:", "process"),
    ("turn:", "turn"),
    ("batch-tail:", "batch-tail"),
    ("batch:", "batch"),
    ("command:", "command"),
    ("summary:", "summary"),
)
_GROUP = "group:"
_TIMELINE = "timeline:"
#: The kinds whose key wraps another key.
_WRAPPING: tuple[tuple[str, KeyKind], ...] = ((_GROUP, "group"), (_TIMELINE, "timeline"))
_WRAPPING_MARKS = (_GROUP, _TIMELINE)
#: The key of the whole timeline under the session header (U-4).
TIMELINE = "timeline"


@dataclass(frozen=True)
class Key:
    """A key read back into its parts; :meth:`text` builds it again."""

    kind: KeyKind
    id: str
    """The entry id the key is made from (a group's: its first member's)."""
    prefix: str = ""
    """``""`` at the top level, else ``"<spawning call key>/"`` (chained for nested agents)."""
    member: Key | None = None
    """A group's first member; a timeline turn's turn."""

    def text(self) -> str:
        """The key as the view model writes it."""
        wrapping = next((mark for mark, kind in _WRAPPING if kind == self.kind), None)
        if wrapping is not None:
            assert self.member is not None
            return wrapping + self.member.text()
        mark = next((mark for mark, kind in _MARKS if kind == self.kind), "")
        return f"{self.prefix}{mark}{self.id}"


def entry(entry_id: str, prefix: str = "") -> str:
    """The key of an entry's own node."""
    return f"{prefix}{entry_id}"


def turn(first_id: str, prefix: str = "") -> str:
    """The key of the turn whose first entry (its prompt, or its first step) is ``first_id``."""
    return f"{prefix}turn:{first_id}"


def process(first_id: str, prefix: str = "") -> str:
    """The key of the process disclosure of the turn whose first entry is ``first_id``."""
    return f"{prefix}process:turn:{first_id}"


def batch(first_id: str, prefix: str = "", *, tail: bool = False) -> str:
    """The key of the batch whose first call is ``first_id`` (``tail``: the badges after it)."""
    return f"{prefix}{'batch-tail' if tail else 'batch'}:{first_id}"


def command(entry_id: str, prefix: str = "") -> str:
    """The key of a command-first row of the call ``entry_id``."""
    return f"{prefix}command:{entry_id}"


def summary(first_id: str, prefix: str = "") -> str:
    """The key of the summary row whose first call is ``first_id``."""
    return f"{prefix}summary:{first_id}"


def group(member_key: str) -> str:
    """The key of the activity group whose first member has the key ``member_key``."""
    return _GROUP + member_key


def timeline(turn_key: str) -> str:
    """The key of the turn ``turn_key`` in the timeline, drawn in detail when zoomed (U-4)."""
    return _TIMELINE + turn_key


def child_prefix(call_key: str) -> str:
    """The prefix of every key inside the sub-agent transcript of the call ``call_key``."""
    return call_key + SEPARATOR


def prefix_of(key: str) -> str:
    """The prefix of ``key``: ``""`` at the top level (the view model asks once per batch,
    so this reads no more of the key than it must)."""
    if key.startswith(_WRAPPING_MARKS):
        return parse(key).prefix
    return key[: key.rfind(SEPARATOR) + 1]


def parse(key: str) -> Key:
    """The parts of a key :func:`entry`, :func:`turn`, … built.

    >>> parse("toolu_1/batch:toolu_7")
    Key(kind='batch', id='toolu_7', prefix='toolu_1/', member=None)
    >>> parse("group:toolu_1/batch:toolu_7").prefix
    'toolu_1/'
    """
    for mark, wrapping in _WRAPPING:
        if key.startswith(mark):
            member = parse(key[len(mark) :])
            return Key(wrapping, member.id, member.prefix, member)
    head, separator, local = key.rpartition(SEPARATOR)
    prefix = head + separator
    for mark, kind in _MARKS:
        if local.startswith(mark):
            return Key(kind, local[len(mark) :], prefix)
    return Key("entry", local, prefix)


def call_path(key: str) -> list[str]:
    """The entry ids of the spawning calls that lead to ``key``, outermost first, and then the
    id ``key`` names: how to find its entry from the top-level transcript.

    >>> call_path("toolu_1/toolu_2/summary:toolu_9")
    ['toolu_1', 'toolu_2', 'toolu_9']
    """
    parts = parse(key)
    outer = [parse(part).id for part in parts.prefix.split(SEPARATOR)[:-1]]
    return [*outer, parts.id]


__all__ = [
    "SEPARATOR",
    "TIMELINE",
    "Key",
    "KeyKind",
    "batch",
    "call_path",
    "child_prefix",
    "command",
    "entry",
    "group",
    "parse",
    "prefix_of",
    "process",
    "summary",
    "timeline",
    "turn",
]
