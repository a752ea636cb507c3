"""What loaders report about bad input (spec L-4): one error for a source that is not a
transcript at all, one for a source of many runs asked for none of them or for one it does not
hold, and a marker for a single unreadable line that is skipped with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

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
        formats = ", ".join(self.tried) or "none"
        super().__init__(f"{where}: not a transcript ({reason}); formats tried: {formats}")


class SampleSelectionError(ValueError):
    """A source of many runs (an eval log's samples, a checkpointer's threads) holds several
    and none was named, or not the one named: the message lists what it holds and how to
    pick one."""
