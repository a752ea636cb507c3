"""Search across runs (spec C-6): stream the items, match their text, stop at the limit.

No full-text index yet: each item is read again by a worker and its prompts, answers, thinking,
tool arguments and outputs (and errors, notices and stops) are matched. A hit names the entry, so
``TranscriptWidget.reveal(hit.entry_id)`` on ``corpus[hit.key]`` opens the folds around it (P-11).

A large file of many runs is searched in the parts a scan reads it in (:func:`search_parts`),
by every worker at once: a dataset of rollouts in one file is most of a corpus's text. The hits
of its parts are keyed as the scan keys its rows (:class:`InOrder`).

A file of runs is keyed as a whole (a run named ``3`` takes ``path#3`` from the record at place
3: :func:`~turnfold.formats.wrappers.run_samples`), which a worker reading a part, or stopping at
the limit, cannot know: its hits say each record's place, and the search keys them as the scan
keyed the rows of that file, in order, one a record (:func:`files_of_runs`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

from turnfold import codec, keys, progress
from turnfold.corpus import runs
from turnfold.corpus.discover import Item
from turnfold.corpus.engine import default_workers, isolated
from turnfold.corpus.summarize import (
    archive_transcripts,
    entries_by_turn,
    eval_log_parts,
    guessed_format,
    is_archive,
    is_instances_part,
    load_item,
    log_transcripts,
    runs_parts,
    table_file_parts,
)
from turnfold.formats import FORMATS, tables
from turnfold.formats import _module as _format_module
from turnfold.formats.harnesses import inspect_log, openhands
from turnfold.formats.source import open_source
from turnfold.formats.wrappers import OneFormat
from turnfold.i18n import DEFAULT_LOCALE, SUPPORTED_LOCALES, localized
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    Entry,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
    Wording,
)
from turnfold.render.content import plain_text
from turnfold.render.search import search_query

#: Characters of context on each side of a match in a snippet.
SNIPPET_CONTEXT = 60


@dataclass(frozen=True)
class SearchHit:
    """One match: the item, the turn (1-based; None outside turns), the entry and a snippet.

    ``entry_id`` is the entry's id, or for an entry of a sub-agent's transcript its key in the
    view (``e1/e2``: the spawning call's, then its own), which ``reveal`` opens alike."""

    key: str
    turn: int | None
    entry_id: str
    snippet: str


def _texts(entry: Entry) -> Iterator[str]:
    if isinstance(entry, (UserMessage, AssistantText, Thinking, PendingAction)):
        yield entry.text
    elif isinstance(entry, SystemNotice):
        yield from _said(entry.text, entry.wording)
    elif isinstance(entry, AssistantError):
        yield from _said(entry.message, entry.wording)
    elif isinstance(entry, AbortMarker):
        if entry.reason:
            yield from _said(entry.reason, entry.wording)
    elif isinstance(entry, ToolCall):
        yield entry.name
        if entry.args is not None:
            args = entry.args
            # As the view shows arguments (indented JSON), so a query copied from it matches.
            yield args if isinstance(args, str) else codec.pretty(args, default=repr)
        if entry.result is not None and entry.result.text:
            yield from _said(entry.result.text, entry.result.wording)


def _said(text: str, wording: Wording | None) -> Iterator[str]:
    """Text as a view shows it in each language: a reader's own words (:class:`Wording`) read
    differently in each, and a corpus has no view language, so a query in any of them finds
    them."""
    yield text
    if wording is not None:
        for locale in SUPPORTED_LOCALES:
            if locale != DEFAULT_LOCALE:
                yield localized(text, wording.key, wording.params, locale)


def _snippet(text: str, start: int, end: int) -> str:
    left = max(0, start - SNIPPET_CONTEXT)
    right = min(len(text), end + SNIPPET_CONTEXT)
    # A transcript's text: the browser sets it as text and a notebook may print it, so
    # its escape sequences are interpreted away and its controls and bidi made visible.
    body = " ".join(plain_text(text[left:right]).split())
    return ("…" if left else "") + body + ("…" if right < len(text) else "")


@dataclass(frozen=True)
class Found:
    """What searching one item of the work gave: its ``hits``; of a part of a file of runs in
    JSON lines, how many ``records`` it holds (it numbers them from 0, as a scan's part does:
    :class:`InOrder` renumbers its hits after the parts before it); of a part of an eval
    output, the ``instances`` it met (one met again in a later part is no row); ``unread``,
    why the file could not be read again; ``stopped``, whether it stopped at the search's limit
    before the end of its part or file (its ``records`` and ``instances`` are those read until
    then); of a file of runs (or its part), the place of each hit's record (``places``, from 0
    in the part), by which :class:`InOrder` keys it as the scan keyed the record's row."""

    hits: list[SearchHit]
    records: int = 0
    instances: tuple[str, ...] = ()
    stopped: bool = False
    places: tuple[int, ...] = ()
    #: Why the item's file could not be read again, though its scan read it: the file went or
    #: broke since. Said by the search (its rows hold no error to say it), never a silent miss.
    unread: str | None = None


@dataclass(frozen=True)
class Missed:
    """What a search read otherwise than its scan did, by file: the files it could not read
    again (``unread``: why, from :attr:`Found.unread`), and the files ``changed`` since the scan
    (how), searched as they are now, which their rows do not describe (a trajectory overwritten
    with text reads as an empty run: its "no hit" is no answer). Each is for the reader to scan
    again."""

    unread: dict[str, str]
    changed: dict[str, str]

    def __bool__(self) -> bool:
        return bool(self.unread or self.changed)

    def warning(self) -> str:
        """The one warning that says it all, naming each file."""
        said = []
        if self.unread:
            said.append(f"could not read {len(self.unread)} file(s) again since the scan, so "
                        "their runs were not searched")  # fmt: skip
        if self.changed:
            said.append(f"{len(self.changed)} file(s) changed since the scan, so their runs were "
                        "searched as the files are now, not as their rows were read")  # fmt: skip
        why = "; ".join([*self.unread.values(), *self.changed.values()])
        return f"search(): {'; and '.join(said)} (scan again to update the rows): {why}"


def compile_query(query: str, regex: bool) -> re.Pattern[str]:
    """The pattern a search matches, case-insensitive: ``query`` as :func:`search_query` takes
    it (a :class:`~turnfold.render.search.QueryTooLong` past its limit, before any compiling),
    escaped unless ``regex``; a ValueError for nothing to look for or no regular expression."""
    text = search_query(query, regex=regex)
    if not text:
        spaces = " but for spaces" if query else ""
        raise ValueError(f"search() needs something to look for: the query is empty{spaces}")
    try:
        return re.compile(text if regex else re.escape(text), re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"search(): {query!r} is no regular expression: {exc}") from exc


def search_item(
    item: Item, query: str, regex: bool, limit: int, kept: Container[str] | None = None,
    keys: Sequence[str] | None = None,
) -> Found:  # fmt: skip
    """Up to ``limit`` hits in one item (or part of a file, :func:`search_parts`), at most one
    per entry; an unreadable item has none.

    An eval log named without a sample is every sample of it, the log read once, each hit
    keyed by its sample (``path#id/epoch``); so are a file of runs' records (``path#n``), a
    Parquet file's rows and an eval output's instances. The query is taken as
    :func:`compile_query` takes it. Given the keys ``kept`` (a file read whole: its keys are
    the rows'), a run keyed otherwise is not searched, and its hits count toward no limit; a
    file of runs is then keyed by ``keys``, its rows' keys in order (:func:`files_of_runs`)."""
    pattern = compile_query(query, regex)
    if item.part is not None:
        return _search_part(item, pattern, limit)
    if item.path is not None and item.sample is None and item.format == inspect_log.NAME:
        return _search_log(item, pattern, limit, kept)
    if item.path is not None and item.sample is None and item.format == openhands.NAME:
        if is_archive(item.path):  # its sessions, each keyed as the scan keys its row
            return _search_archive(item, pattern, limit, kept)
        found = _search_instances(item, pattern, limit, kept)
        if found is not None:
            return found
    if item.path is not None and item.sample is None and item.format == runs.FILE:
        return _search_runs(item, pattern, limit, kept, keys)
    if item.path is not None and item.sample is None and reads_each(item.format):
        return _search_conversations(item, pattern, limit, kept)
    try:
        transcript = load_item(item, item.format)
    except Exception as exc:  # a row with an error is not searched: this one broke since
        return Found([], unread=_unread(item, exc))
    return Found(_hits(item.key, transcript, pattern, limit))


def _unread(item: Item, exc: Exception) -> str:
    """Why ``item`` could not be read again, naming its file."""
    reason = str(exc) or type(exc).__name__
    return reason if item.path is None or item.path in reason else f"{item.path}: {reason}"


def search_parts(item: Item, share: int) -> list[Item] | None:
    """A file a search reads in one pass (:func:`search_item`) as the parts a scan reads it in,
    for ``share`` workers: a large eval log, Parquet file, file of runs or eval output; None
    for any other item, and for a file too small to cut."""
    if item.path is None or item.sample is not None:
        return None
    if item.format == inspect_log.NAME:
        return eval_log_parts(item, share)
    if item.format not in (runs.FILE, openhands.NAME):
        return None
    plain = replace(item, format=None)  # told apart again, as a scan tells them
    return table_file_parts(plain, share) if item.column is not None else runs_parts(plain)


def files_of_runs(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The keys of the rows of each file with samples (``path#<sample>``), in their order, by
    the file's key: for a file of runs, one a record, in its records' order, so its ``n``-th
    is the key of the run at place ``n`` (a name, a place, ``@n``), as the scan keyed it."""
    files: dict[str, list[str]] = {}
    for row in rows:
        key, sample = row["key"], row["sample"]
        if sample is not None and key.endswith("#" + sample):
            files.setdefault(key[: -len(sample) - 1], []).append(key)
    return files


class InOrder:
    """The hits of a search's work, given in its order, keyed as the scan keys its rows: a part
    of a file of runs numbers its records from 0, so its hits are renumbered after the records
    of the parts before it, and a hit of a file of runs is keyed by its record's place, as the
    scan keyed the row at that place (``files``: :func:`files_of_runs`); an instance of an eval
    output met in an earlier part has no hits (the first is the row), and a file of one
    instance is keyed by its path. Every part before the one a search stops at was read whole,
    so each renumbering knows what came before it: a part that stopped at the limit
    (:attr:`Found.stopped`) ends the search unless some of its hits are left out here (a run
    whose row is an error, an instance met before), and such a part is searched again to its
    end (:meth:`left_out`, :meth:`searched_on`) before it is taken: numbered on past the
    records it had read, or not knowing the instances it had not, the hits of the parts after
    it opened other runs than theirs. A file read whole that stopped so is searched on, its
    left-out runs skipped (:meth:`searched_on`). That search again runs where the first did
    (``workers``, ``client``, ``parallel``: :func:`~turnfold.corpus.engine.ordered_map`'s): in
    a worker process of its own when the first ran in workers, so a reader that kills its
    process kills no kernel (C-7), the file then named as one that could not be read again.

    A part that could not be read whole (:attr:`Found.unread`: its worker died, its bytes
    failed) leaves its records uncounted, and nothing else counts them: the rows keep no part
    or line, a line may hold no record or several, and reading the part here to count them
    may fail or kill this process as it did the worker. So the later parts' hits of its file
    are left out (numbered on past it, each would open another run than its own); the search
    names the file in its warning. The hits before the break stand: they were numbered right."""

    def __init__(
        self,
        readable: set[str],
        files: Mapping[str, Sequence[str]] | None = None,
        *,
        workers: int | None = None,
        client: Any = None,
        parallel: bool = False,
    ) -> None:
        self._readable = readable
        self._files = files or {}
        count = default_workers() if workers is None else max(1, workers)
        self._apart = client is not None or (parallel and count > 1)
        self._client = client
        self._before: dict[str, int] = {}
        self._met: dict[str, set[str]] = {}
        self._broken: set[str] = set()  # files of runs with a part not read whole

    def __call__(self, item: Item, found: Found) -> list[SearchHit]:
        hits = self._keyed(item, found)
        if is_instances_part(item):
            self._met.setdefault(item.key, set()).update(found.instances)
        elif isinstance(item.part, runs.Span) and item.key not in self._broken:
            if found.unread is not None:
                self._broken.add(item.key)
            self._before[item.key] = self._before.get(item.key, 0) + found.records
        return hits

    def left_out(self, item: Item, found: Found) -> bool:
        """Whether ``found``, of a part or file that stopped at the search's limit, has hits
        left out here: the search then needs more of it than it read (:meth:`searched_on`)."""
        if not found.stopped or item.key in self._broken:
            return False
        return len(self._keyed(item, found)) < len(found.hits)

    def searched_on(self, item: Item, found: Found, query: str, regex: bool, wanted: int) -> Found:
        """``found``, or when it has hits left out (:meth:`left_out`), ``item`` searched again:
        a part to its end; a file read whole for ``wanted`` hits of its
        rows alone. Its hits left out took the places of others under the limit, and a file
        read whole may be of any size, so it is not read to its end. Should that reading kill
        its worker, ``found`` stands with the reason (:attr:`Found.unread`)."""
        if not self.left_out(item, found):
            return found
        if item.part is not None:
            again = SearchMany(query, regex, sys.maxsize)
        else:
            kept = frozenset(k for k in self._files.get(item.key, ()) if k in self._readable)
            keys = tuple(self._files.get(item.key, ()))
            again = SearchMany(query, regex, wanted, kept or frozenset(self._readable), keys)
        if not self._apart:
            return again([item])[0]

        def died(item: Item, why: str) -> Found:
            return replace(found, unread=why)

        (searched,) = isolated(again, [item], client=self._client, died=died)
        return searched

    def _keyed(self, item: Item, found: Found) -> list[SearchHit]:
        """The hits of ``found`` as the scan keys its rows, after the parts taken before it."""
        hits = found.hits
        if is_instances_part(item):
            met = self._met.get(item.key, set())
            hits = [hit for hit in hits if _place(item, hit) not in met]
            if item.key in self._readable:  # a file of one instance: its row is the path's
                hits = [replace(hit, key=item.key) for hit in hits]
        elif isinstance(item.part, runs.Span) or (item.part is None and item.format == runs.FILE):
            if item.key in self._broken:
                return []
            before = self._before.get(item.key, 0)
            keys = self._files.get(item.key, ())
            places = (before + place for place in found.places)
            hits = [replace(hit, key=keys[at] if at < len(keys) else f"{item.key}#{at}")
                    for hit, at in zip(hits, places, strict=True)]  # fmt: skip
        # An eval log's samples are read as one item: its unreadable ones give no hit.
        return [hit for hit in hits if hit.key in self._readable]


def _place(item: Item, hit: SearchHit) -> str:
    """What follows the file's key in a hit's key: its record's place, its instance's id."""
    return hit.key[len(item.key) + 1 :]


def _search_part(item: Item, pattern: re.Pattern[str], limit: int) -> Found:
    if isinstance(item.part, inspect_log.Samples):  # keyed by their samples
        return _search_log(item, pattern, limit)
    if is_instances_part(item):
        return _search_instances(item, pattern, limit) or Found([])
    return _search_runs(item, pattern, limit)


def _search_log(
    item: Item, pattern: re.Pattern[str], limit: int, kept: Container[str] | None = None
) -> Found:
    hits: list[SearchHit] = []
    try:
        for each, transcript in log_transcripts(item):
            if isinstance(transcript, Transcript) and _kept(each.key, kept):
                hits += _hits(each.key, transcript, pattern, limit - len(hits))
            if len(hits) >= limit:
                return Found(hits, stopped=True)
    except Exception as exc:  # the log cannot be read now, though its scan read it
        return Found(hits, unread=_unread(item, exc))
    return Found(hits)


def _kept(key: str, kept: Container[str] | None) -> bool:
    """Whether a run keyed ``key`` is searched: it is one of the runs ``kept``, if given."""
    return kept is None or key in kept


def _search_archive(
    item: Item, pattern: re.Pattern[str], limit: int, kept: Container[str] | None = None
) -> Found:
    """The hits of every OpenHands session of an archive, the archive read once, keyed as the
    scan keys them (``path#<session>``; the path alone for an archive of one session)."""
    hits: list[SearchHit] = []
    try:
        for each, transcript in archive_transcripts(item):
            # One that cannot be read is not searched: its row says why.
            if not isinstance(transcript, Exception) and _kept(each.key, kept):
                hits += _hits(each.key, transcript, pattern, limit - len(hits))
            if len(hits) >= limit:
                return Found(hits, stopped=True)
    except Exception as exc:  # the archive cannot be read now, though its scan read it
        return Found(hits, unread=_unread(item, exc))
    return Found(hits)


def _search_instances(
    item: Item, pattern: re.Pattern[str], limit: int, kept: Container[str] | None = None
) -> Found | None:
    """The hits of every instance of an OpenHands eval output (of its part), the file read
    once, keyed as the scan keys them (``path#instance_id``; the path alone for a file of one
    instance). None when the file is no eval output (an event list): it is then searched as
    one transcript."""
    assert item.path is not None
    hits: list[SearchHit] = []
    ids: list[str] = []
    stopped = False
    stream: IO[bytes] | None
    try:
        if isinstance(item.part, runs.Span):
            source, stream = runs.part_source(item.path, item.part)
        else:
            source, stream = open_source(item.path)
    except Exception as exc:  # the file went or broke since the scan
        return Found([], unread=_unread(item, exc))
    try:
        if source.is_document:
            return None
        for instance_id, transcript in openhands.instances(source):
            ids.append(instance_id)
            if len(ids) > 1 and len(hits) >= limit:
                stopped = True
                break  # a second instance is met: the keys are the instances'
            key = f"{item.key}#{instance_id}"
            # A file of one instance is keyed by its path (below), which ``kept`` holds.
            if len(hits) < limit and (_kept(key, kept) or _kept(item.key, kept)):
                hits += _hits(key, transcript, pattern, limit - len(hits))
    except openhands.NotAnEvalOutput:
        return None
    except Exception:  # the file broke off: its rows say so (C-7)
        pass
    finally:
        if stream is not None:
            stream.close()
    if len(ids) == 1 and item.part is None:  # a part's keys are the file's to settle
        return Found([SearchHit(item.key, h.turn, h.entry_id, h.snippet) for h in hits])
    return Found(hits, instances=tuple(ids), stopped=stopped)


def reads_each(format: str | None) -> bool:
    """Whether ``format`` keeps several conversations in one file, read in one pass by its
    ``read_each`` (an OTLP file's, a LlamaIndex chat store's, a DSPy evaluation's examples),
    each a row keyed ``path#<conversation id>``."""
    return format in FORMATS and hasattr(_format_module(format), "read_each")


def _search_conversations(
    item: Item, pattern: re.Pattern[str], limit: int, kept: Container[str] | None = None
) -> Found:
    """The hits of every conversation of a file of several, the file read once, keyed as the
    scan keys them (``path#<conversation id>``; the path alone for a file of one)."""
    assert item.path is not None
    assert item.format is not None
    hits: list[SearchHit] = []
    try:
        source, stream = open_source(item.path)
    except Exception as exc:  # the file went or broke since the scan
        return Found(hits, unread=_unread(item, exc))
    try:
        for conversation, transcript in _format_module(item.format).read_each(source):
            key = item.key if conversation is None else f"{item.key}#{conversation}"
            if _kept(key, kept):
                hits += _hits(key, transcript, pattern, limit - len(hits))
            if len(hits) >= limit:
                return Found(hits, stopped=True)
    except Exception as exc:  # the file cannot be read now, though its scan read it
        return Found(hits, unread=_unread(item, exc))
    finally:
        if stream is not None:
            stream.close()
    return Found(hits)


def _search_runs(
    item: Item, pattern: re.Pattern[str], limit: int, kept: Container[str] | None = None,
    keys: Sequence[str] | None = None,
) -> Found:  # fmt: skip
    """The hits of every record of a file of runs, or row of a Parquet file of trajectories
    (of its part), the file read once, keyed ``path#n`` by place (from 0 in a part of a file
    of runs, with how many records it holds), or by ``keys`` (its rows' keys, in order) where
    given; each hit's place in :attr:`Found.places`, by which :class:`InOrder` keys it as the
    scan keyed the record (a run its record names by that name). A record that cannot be read
    has none (its row says why)."""
    assert item.path is not None
    hits: list[SearchHit] = []
    places: list[int] = []
    records = 0
    guess = guessed_format(item)
    try:
        if item.column is not None:
            read = OneFormat(tables.read_messages, guess=guess)
            part = item.part if isinstance(item.part, tables.Rows) else None
            cells = tables.cells(item.path, item.column, part)
            first = part.start if part is not None else 0  # rows are keyed as the file's
            found: Iterator[tuple[int, Any]] = (
                (place, _or_none(read, cell)) for place, cell in enumerate(cells, first)
            )
        else:
            span = item.part if isinstance(item.part, runs.Span) else None
            found = ((place, transcript)
                     for place, _, _, transcript in runs.Runs(item.path, span, guess))  # fmt: skip
        for place, transcript in found:
            records += 1
            key = keys[place] if keys is not None and place < len(keys) else f"{item.key}#{place}"
            if not isinstance(transcript, Transcript) or not _kept(key, kept):
                continue
            more = _hits(key, transcript, pattern, limit - len(hits))
            hits += more
            places += [place] * len(more)
            if len(hits) >= limit:
                return Found(hits, records=records, stopped=True, places=tuple(places))
    except Exception as exc:  # the file cannot be read now, though its scan read it
        return Found(hits, records=records, unread=_unread(item, exc), places=tuple(places))
    return Found(hits, records=records, places=tuple(places))


def _or_none(read: OneFormat, cell: Any) -> Transcript | None:
    try:
        return read(cell)
    except Exception:
        return None


def _hits(
    key: str, transcript: Transcript, pattern: re.Pattern[str], limit: int
) -> list[SearchHit]:
    hits: list[SearchHit] = []
    for turn, entry_id, entry in _searched(transcript):
        for text in _texts(entry):
            match = pattern.search(text) if text else None
            if match:
                hits.append(
                    SearchHit(key, turn, entry_id, _snippet(text, match.start(), match.end()))
                )
                break
        if len(hits) >= limit:
            break
    return hits


def _searched(transcript: Transcript) -> Iterator[tuple[int | None, str, Entry]]:
    """Every entry a search reads, with its turn and the id a hit names it by: a sub-agent's
    entries follow the call that spawned them, in that call's turn, each named by its key in
    the view (the call's key, then its own id: ``e1/e2``), which ``reveal`` opens (P-11). Its
    transcript is part of the session (C-1): a word only a sub-agent read or wrote is found."""
    for turn, entry in entries_by_turn(transcript):
        yield turn, entry.id, entry
        yield from _delegated(entry, turn, "")


def _delegated(
    entry: Entry, turn: int | None, prefix: str
) -> Iterator[tuple[int | None, str, Entry]]:
    if not isinstance(entry, ToolCall) or entry.subagent is None:
        return
    child = entry.subagent.transcript
    if child is None:
        return
    inner = keys.child_prefix(keys.entry(entry.id, prefix))
    for sub in child.entries:
        yield turn, keys.entry(sub.id, inner), sub
        yield from _delegated(sub, turn, inner)


@dataclass(frozen=True)
class SearchMany:
    """:func:`search_item` over a chunk, as a picklable callable for the engines; for an item
    searched again (:meth:`InOrder.searched_on`), of the runs ``kept`` alone (a file of runs
    keyed by ``keys``, its rows')."""

    query: str
    regex: bool
    limit: int
    kept: frozenset[str] | None = None
    keys: tuple[str, ...] | None = None

    def __call__(self, items: list[Item]) -> list[Found]:
        with progress.muted():  # no bar of each file read: the worker's output is the user's
            return [search_item(item, self.query, self.regex, self.limit, self.kept, self.keys)
                    for item in items]  # fmt: skip
