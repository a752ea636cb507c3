"""A transcript as one standalone HTML page, built on two cores when it is long (spec W-6, Q-1).

:func:`render_page` gives the same page as ``render_html(build_view_model(transcript), ...)``
without ever holding the whole view model: it plans the projection once (cheap), then projects,
builds and draws the top-level items chunk by chunk, each chunk straight to UTF-8. Chunks are
independent, so for a long session (``turnfold render`` of tens of megabytes) on a machine
with an idle core, :func:`turnfold.forking.fork_map` has a forked child build some of them
while this process builds the rest; bytes, unlike strings, cross the pipe without being
re-encoded.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, BinaryIO

from turnfold.forking import Partner, fork_imap, free_core
from turnfold.gcpause import collector_paused
from turnfold.model import Transcript
from turnfold.process import PlannedItem
from turnfold.render.content import MORE_CHARS
from turnfold.render.html import (
    html_frame,
    nodes_encoded,
    notice_html,
    outcome_html,
    page_end,
    session_html,
    timeline_html,
)
from turnfold.render.viewmodel import ViewPlan, open_all, plan_view
from turnfold.settings import SettingsSnapshot

if TYPE_CHECKING:  # a name for types only: the class imports traitlets (issue 19)
    from turnfold.live_settings import DisplaySettings

__all__ = ["FORK_MIN_ENTRIES", "render_page", "write_page"]

#: Below this many entries a page takes well under a tenth of a second to build, less than
#: forking a process that holds the transcript would save.
FORK_MIN_ENTRIES = 5_000

#: Chunks per page: enough that interleaving evens out turns of very different sizes, few enough
#: that each chunk's overhead (a renderer, a list, a pickled string) stays invisible.
_CHUNKS = 64


def write_page(
    stream: BinaryIO,
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    title: str | None = None,
    more_chars: int | None = MORE_CHARS,
    expand: bool = False,
    fork: bool | None = None,
    end: bool = True,
    partner: Partner | None = None,
) -> int:
    """Write the standalone page of ``transcript`` to ``stream`` as UTF-8; returns its size.

    ``expand`` opens every fold. ``fork`` chooses whether a forked child shares the work: None
    (the default) forks for transcripts of at least :data:`FORK_MIN_ENTRIES` entries when a core
    is idle (:func:`turnfold.forking.free_core`), True whenever
    :func:`turnfold.forking.can_fork`; the page is the same either way. ``end=False`` stops
    after the transcript, before what closes the page (:func:`~turnfold.render.html.page_end`),
    for a caller that ends it itself: a static site adds the links to the pages beside it once
    it knows them (B-2). A ``partner`` forked before ``transcript`` was read, which read it too,
    shares the chunks instead (:class:`turnfold.forking.Partner`; in the partner this call
    does not return).
    """
    if fork is None:
        fork = partner is None and len(transcript.entries) >= FORK_MIN_ENTRIES and free_core()
    with collector_paused():  # as build_view_model: millions of new objects, few of them garbage
        plan = plan_view(transcript, settings, more_chars=more_chars, head=False)
        locale = plan.options.settings.locale
        mode = plan.options.settings.transcript_display_mode

        def draw(chunk: tuple[int, list[PlannedItem]] | None) -> list[bytes]:
            if chunk is None:  # the page's head and the transcript's heading
                before, _ = html_frame({"locale": locale, "mode": mode}, title=title)
                return [before.encode("utf-8"), _heading(plan).encode("utf-8")]
            first_turn, items = chunk
            nodes = plan.nodes(items)
            return nodes_encoded(open_all(nodes) if expand else nodes, locale, first_turn)

        size = -(-len(plan.items) // _CHUNKS) or 1  # ceiling division: at most _CHUNKS chunks
        # The heading is a piece of work like the turns' chunks, and the first: the session's
        # facts, its price and its timeline walk every entry (a tenth of a second on a 50 MB
        # session, a third when the price table must be imported: turnfold.kept_prices), and a
        # forked child or this process builds it while the other draws turns. Without a fork it
        # is built first, as it is written. The page's head goes with it: its stylesheet imports
        # Pygments for the colours of code, which need not wait for the turns (issue 19).
        chunks: list[tuple[int, list[PlannedItem]] | None] = [None]
        turns = 1  # the number of each chunk's first turn: its anchor (B-2)
        for start in range(0, len(plan.items), size):
            items = plan.items[start : start + size]
            chunks.append((turns, items))
            turns += sum(1 for item in items if item.segment is not None)
        if partner is not None:
            drawn = partner.imap(draw, chunks, _read_alike(transcript, plan))
        else:
            drawn = fork_imap(draw, chunks, fork=fork)
        written = 0
        # Each chunk is written as soon as it is drawn (in one process): a page of tens of
        # megabytes is never held whole, and its memory is reused by the next chunk.
        for pieces in drawn:
            for piece in pieces:
                stream.write(piece)
                written += len(piece)
    if not end:
        return written
    tail = page_end().encode("utf-8")  # html_frame's end of a page
    stream.write(tail)
    return written + len(tail)


def _read_alike(transcript: Transcript, plan: ViewPlan) -> bytes:
    """What two processes that read one input each for itself agree on when they read the
    same (:class:`~turnfold.forking.Partner`): the planned items, and of the transcript and
    every sub-agent's, the entries, warnings, last entry and every call's status. A file that
    grew between the two reads, or a line half written when one of them read it, differs.

    It is sent as ``hash()`` of all that: a partner is forked from this process, so both share
    the interpreter's hash key, and 64 bits tell two reads apart as well as a digest would,
    without importing hashlib for it (issue 19)."""
    from turnfold.formats.source import warning_count  # a page's file was loaded: imported

    said = ["\n".join(item.key for item in plan.items)]
    pending = [transcript]
    while pending:
        read = pending.pop()
        last = read.entries[-1].id if read.entries else ""
        said.append(f"|{len(read.entries)},{warning_count(read.warnings)},{last}")
        for call in read.tool_calls():
            said.append(f"{call.id}:{call.status};")
            if call.subagent is not None and call.subagent.transcript is not None:
                pending.append(call.subagent.transcript)
    return hash("".join(said)).to_bytes(8, "little", signed=True)


def _heading(plan: ViewPlan) -> str:
    """U-3, U-4, H-6, L-4: the session header, the timeline, the outcome and the notice above
    the turns, as render_html draws them."""
    head = plan.head
    heading = session_html(head.session) + timeline_html(head.timeline)
    return heading + outcome_html(head.outcome) + notice_html(head.notice, head.locale)


def render_page(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    title: str | None = None,
    more_chars: int | None = MORE_CHARS,
    expand: bool = False,
    fork: bool | None = None,
) -> str:
    """The standalone page of ``transcript`` as a string; arguments as :func:`write_page`."""
    buffer = io.BytesIO()
    write_page(
        buffer, transcript, settings, title=title, more_chars=more_chars, expand=expand, fork=fork
    )
    return buffer.getvalue().decode("utf-8")
