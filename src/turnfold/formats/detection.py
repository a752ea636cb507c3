"""Detection by evidence (issue 11): every format says how much of a sample it can read.

A first-match rule misreads files: a session saved by an agent SDK has Gemini's ``sessionId``
and ``messages`` keys but Anthropic messages, and a list of Cursor records fits the loose shape of
Chat Completions messages while holding nothing Chat can read. So each format module's
``detect(source)`` returns :class:`Evidence` for a sample of the input: the share of sampled
records it recognises, and how many of them carry marks only that format writes. The best
evidence wins (:func:`choose`); a tie between distinct readings, or a sample no format reads well,
is an error that names every candidate and what it lacked.

Records that read the same in several formats (``{"role": "user", "content": "hi"}`` is valid
Chat Completions, Anthropic and Responses input) carry no marks; when nothing but such records is
sampled, the most general reading wins (:data:`PLAIN_MESSAGE_ORDER`), since every reader yields the
same transcript for them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnfold.formats.source import Source

#: A format is a candidate only when it reads at least this share of the sample.
MIN_SHARE = 0.5
#: Which format reads a sample of plain ``{role, content}`` messages (no marks anywhere).
PLAIN_MESSAGE_ORDER = ("openai", "anthropic", "openai-responses")

#: What a classifier says of one record: 0 not this format's, 1 readable, 2 readable and only
#: this format writes it.
NOT_MINE, READABLE, DISTINCTIVE = 0, 1, 2


@dataclass(frozen=True)
class Evidence:
    """How well a sample of the input reads as one format."""

    share: float = 0.0  # of the sampled records, the share this format reads (0..1)
    marks: int = 0  # sampled records that only this format writes
    lacks: str = ""  # what the sample lacked, for the error when no format fits
    sampled: int = 0  # the records weighed (0: evidence not counted record by record)

    @classmethod
    def of(cls, values: Iterable[Any], classify: Callable[[Any], int], lacks: str) -> Evidence:
        """Evidence from classifying each sampled value (:data:`READABLE`, ...)."""
        verdicts = [classify(v) for v in values]
        if not verdicts:
            return cls(lacks="no records")
        readable = sum(1 for v in verdicts if v)
        marks = sum(1 for v in verdicts if v == DISTINCTIVE)
        return cls(
            share=readable / len(verdicts),
            marks=marks,
            lacks="" if marks else lacks,
            sampled=len(verdicts),
        )

    @classmethod
    def of_events(cls, source: Source, classify: Callable[[Any], int], lacks: str) -> Evidence:
        """Evidence from a program's events (a CLI's stream): its first records, JSON lines or
        one JSON array of them; a single JSON object is weighed as one event."""
        if source.is_document and not isinstance(source.document, list):
            return cls.of([source.document], classify, lacks)
        return cls.of(source.head_values(), classify, lacks)

    @classmethod
    def none(cls, lacks: str) -> Evidence:
        return cls(lacks=lacks)

    @property
    def fits(self) -> bool:
        return self.share >= MIN_SHARE

    @property
    def conclusive(self) -> bool:
        """Every sampled record read, each with a mark of this format: no other format's
        evidence can be better (:func:`choose`), so a load need not ask the formats after it,
        nor import their modules (issue 19). Only equal evidence could tie with it, and the
        detection tests weigh every fixture against every format to find none."""
        return self.sampled > 0 and self.marks == self.sampled


class AmbiguousFormat(Exception):
    """Two formats read the sample equally well, each with marks of its own."""

    def __init__(self, candidates: Sequence[tuple[str, Evidence]]) -> None:
        self.candidates = tuple(candidates)
        super().__init__(describe(candidates))


def describe(candidates: Iterable[tuple[str, Evidence]]) -> str:
    """``openai: reads 40% (no tool_calls or role "tool")``, one per candidate, for errors."""
    parts = []
    for name, evidence in candidates:
        said = f"{name}: reads {evidence.share:.0%}"
        parts.append(f"{said} ({evidence.lacks})" if evidence.lacks else said)
    return "; ".join(parts)


def choose(candidates: Sequence[tuple[str, Evidence]]) -> str | None:
    """The format whose evidence is best, None when none fits.

    Formats with marks beat formats without; then the larger share wins, then more marks.
    Raises :class:`AmbiguousFormat` when the best two tie with marks on both sides.
    """
    fitting = [(name, ev) for name, ev in candidates if ev.fits]
    if not fitting:
        return None
    marked = [(name, ev) for name, ev in fitting if ev.marks]
    if not marked:
        plain = {name for name, _ in fitting}
        return next((n for n in PLAIN_MESSAGE_ORDER if n in plain), fitting[0][0])
    ranked = sorted(marked, key=lambda c: (c[1].share, c[1].marks), reverse=True)
    best = ranked[0]
    tied = [c for c in ranked if (c[1].share, c[1].marks) == (best[1].share, best[1].marks)]
    if len(tied) > 1:
        raise AmbiguousFormat(tied)
    return best[0]
