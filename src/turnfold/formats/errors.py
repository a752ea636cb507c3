"""What loaders report about bad input (spec L-4): one error for a source that is not a
transcript at all, one for a source of many runs asked for none of them or for one it does not
hold, and a marker for a single unreadable line that is skipped with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: How much of a bad line its :class:`MalformedLine` keeps: enough to know a tool's own words
#: printed among its JSON lines, never a copy of a huge line.
KEPT_TEXT_CHARS = 300


@dataclass(frozen=True)
class MalformedLine:
    """Stands in for a line that is not valid JSON, or a framework's object that could not be
    turned into a record, so a loader can skip it with a warning."""

    reason: str
    #: Its type in a load's accounting.
    record_type: str = "(invalid JSON)"
    #: The line's first :data:`KEPT_TEXT_CHARS` characters, its line ending dropped, so that a
    #: reader can tell its tool's own non-JSON line (the Cline CLI's word of a signal) from a
    #: broken record; None where no line was read (an oversized line, an object). Not compared:
    #: two lines that failed alike are the same failure.
    text: str | None = field(default=None, compare=False, repr=False)


class TranscriptFormatError(ValueError):
    """The source is not a transcript in any format turnfold knows.

    The message names the source, the formats tried and the first offending line, so a person
    can find the problem without a debugger.
    """

    def __init__(self, source: str, tried: Sequence[str], line: int | None, reason: str) -> None:
        self.source = source
        self.tried = tuple(tried)
        self.line = line
        self.reason = reason
        where = f"{source}, line {line}" if line is not None else source
        super().__init__(f"{where}: not a transcript ({reason}); {tried_said(tried, True)}")


#: The formats tried a message names where a person reads it (a format the user named); more,
#: every format detection tried (some sixty), it counts: the command line, a corpus cell.
TRIED_NAMED = 3


def tried_said(tried: Sequence[str], named: bool = False) -> str:
    """The formats tried as a message says them: named (all of them when ``named``), or
    counted when more than :data:`TRIED_NAMED`.

    >>> tried_said(["a", "b"]), tried_said(["a", "b", "c", "d"]), tried_said([], True)
    ('formats tried: a, b', '4 formats tried', 'formats tried: none')
    """
    if named or len(tried) <= TRIED_NAMED:
        return f"formats tried: {', '.join(tried) or 'none'}"
    return f"{len(tried)} formats tried"


class SampleSelectionError(ValueError):
    """A source of many runs (an eval log's samples, a checkpointer's threads) holds several
    and none was named, or not the one named: the message lists what it holds and how to
    pick one."""


#: How many ids an error of a source of many runs names (:func:`how_to_pick`): enough to
#: recognise one, never a listing of thousands.
LISTED_IDS = 10


def how_to_pick(held: Sequence[str], placeholder: str, count: int | None = None) -> str:
    """How to load one of the runs ``held`` (their ids, the first :data:`LISTED_IDS` named, the
    first as a call that runs as written), or read them all: the end of every
    :class:`SampleSelectionError` of a source of many runs. ``count``: how many it holds, when
    ``held`` names only the first.

    >>> how_to_pick(["a", "b"], "<session id>")
    "pick one with sample=<session id> (ids 'a', 'b'), as turnfold.load(path, sample='a'), or read them all with turnfold.scan(path)"
    """  # noqa: E501
    more = ", …" if max(len(held), count or 0) > LISTED_IDS else ""
    shown = ", ".join(repr(i) for i in held[:LISTED_IDS]) + more
    return (
        f"pick one with sample={placeholder} (ids {shown}), as turnfold.load(path, "
        f"sample={held[0]!r}), or read them all with turnfold.scan(path)"
    )


def unselected(
    where: object,
    held: Sequence[str],
    sample: Any,
    noun: str,
    placeholder: str,
    *,
    plural: str | None = None,
    count: int | None = None,
    because: str | None = None,
) -> SampleSelectionError:
    """The error of a load of the source ``where`` that holds the runs ``held`` (each a
    ``noun``: ``"Crush session"``) and names none of several (``sample`` None), or one it does
    not hold (``because``: why, where the reader knows): what it holds, and how to pick one
    (``sample=`` + ``placeholder``, :func:`how_to_pick`) or read them all. ``count``: how
    many it holds, when ``held`` names only the first.

    >>> str(unselected("a.db", ["t1", "t2"], "t9", "LangGraph thread", "<thread id>"))
    "a.db holds no LangGraph thread 't9'; it holds 2: pick one with sample=<thread id> (ids 't1', 't2'), as turnfold.load(path, sample='t1'), or read them all with turnfold.scan(path)"
    """  # noqa: E501
    plural = plural or f"{noun}s"
    why = f" ({because})" if because else ""
    if not held:
        return SampleSelectionError(f"{where} holds no {plural}{why}")
    count = len(held) if count is None else count
    how = how_to_pick(held, placeholder, count)
    if sample is None:
        return SampleSelectionError(f"{where} holds {count} {plural}: {how}")
    return SampleSelectionError(f"{where} holds no {noun} {sample!r}{why}; it holds {count}: {how}")
