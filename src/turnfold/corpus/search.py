"""Search across runs (spec C-6): stream the items, match their text, stop at the limit.

No full-text index yet: each item is read again by a worker and its prompts, answers, thinking,
tool arguments and outputs (and errors and notices) are matched. A hit names the entry, so
``TranscriptWidget.reveal(hit.entry_id)`` on ``corpus[hit.key]`` opens the folds around it (P-11).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from turnfold import codec, progress
from turnfold.corpus import runs
from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import entries_by_turn, load_item, log_transcripts
from turnfold.formats import tables
from turnfold.formats.harnesses import inspect_log, openhands
from turnfold.formats.source import open_source
from turnfold.formats.wrappers import OneFormat
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)

#: Characters of context on each side of a match in a snippet.
SNIPPET_CONTEXT = 60


@dataclass(frozen=True)
class SearchHit:
    """One match: the item, the turn (1-based; None outside turns), the entry and a snippet."""

    key: str
    turn: int | None
    entry_id: str
    snippet: str


def _texts(entry: Entry) -> Iterator[str]:
    if isinstance(entry, (UserMessage, AssistantText, Thinking, SystemNotice, PendingAction)):
        yield entry.text
    elif isinstance(entry, AssistantError):
        yield entry.message
    elif isinstance(entry, ToolCall):
        yield entry.name
        if entry.args is not None:
            args = entry.args
            # As the view shows arguments (indented JSON), so a query copied from it matches.
            yield args if isinstance(args, str) else codec.pretty(args, default=repr)
        if entry.result is not None and entry.result.text:
            yield entry.result.text


def _snippet(text: str, start: int, end: int) -> str:
    left = max(0, start - SNIPPET_CONTEXT)
    right = min(len(text), end + SNIPPET_CONTEXT)
    body = " ".join(text[left:right].split())
    return ("…" if left else "") + body + ("…" if right < len(text) else "")


def search_item(item: Item, query: str, regex: bool, limit: int) -> list[SearchHit]:
    """Up to ``limit`` hits in one item, at most one per entry; an unreadable item has none.

    An eval log named without a sample is every sample of it, the log read once, each hit
    keyed by its sample (``path#id/epoch``)."""
    pattern = re.compile(query if regex else re.escape(query), re.IGNORECASE)
    if item.path is not None and item.sample is None and item.format == inspect_log.NAME:
        return _search_log(item, pattern, limit)
    if item.path is not None and item.sample is None and item.format == openhands.NAME:
        found = _search_instances(item, pattern, limit)
        if found is not None:
            return found
    if item.path is not None and item.sample is None and item.format == runs.FILE:
        return _search_runs(item, pattern, limit)
    try:
        transcript = load_item(item, item.format)
    except Exception:  # the row already says why it cannot be read (C-7)
        return []
    return _hits(item.key, transcript, pattern, limit)


def _search_log(item: Item, pattern: re.Pattern[str], limit: int) -> list[SearchHit]:
    hits: list[SearchHit] = []
    try:
        for each, transcript in log_transcripts(item):
            if isinstance(transcript, Transcript):
                hits += _hits(each.key, transcript, pattern, limit - len(hits))
            if len(hits) >= limit:
                break
    except Exception:  # the log cannot be read: its rows say so (C-7)
        pass
    return hits


def _search_instances(item: Item, pattern: re.Pattern[str], limit: int) -> list[SearchHit] | None:
    """The hits of every instance of an OpenHands eval output, the file read once, keyed as the
    scan keys them (``path#instance_id``; the path alone for a file of one instance). None when
    the file is no eval output (an event list): it is then searched as one transcript."""
    assert item.path is not None
    hits: list[SearchHit] = []
    ids: list[str] = []
    try:
        source, stream = open_source(item.path)
    except Exception:  # the row already says why it cannot be read (C-7)
        return []
    try:
        if source.is_document:
            return None
        for instance_id, transcript in openhands.instances(source):
            ids.append(instance_id)
            if len(ids) > 1 and len(hits) >= limit:
                break  # a second instance is met: the keys are the instances'
            if len(hits) < limit:
                hits += _hits(f"{item.key}#{instance_id}", transcript, pattern, limit - len(hits))
    except openhands.NotAnEvalOutput:
        return None
    except Exception:  # the file broke off: its rows say so (C-7)
        pass
    finally:
        if stream is not None:
            stream.close()
    if len(ids) == 1:
        return [SearchHit(item.key, h.turn, h.entry_id, h.snippet) for h in hits]
    return hits


def _search_runs(item: Item, pattern: re.Pattern[str], limit: int) -> list[SearchHit]:
    """The hits of every record of a file of runs, or row of a Parquet file of trajectories,
    the file read once, keyed as the scan keys them (``path#n``); a record that cannot be read
    has none (its row says why)."""
    assert item.path is not None
    hits: list[SearchHit] = []
    try:
        if item.column is not None:
            read = OneFormat(tables.read_messages)
            found: Iterator[tuple[int, Any]] = (
                (place, _or_none(read, cell))
                for place, cell in enumerate(tables.cells(item.path, item.column))
            )
        else:
            found = ((place, transcript) for place, _, transcript in runs.Runs(item.path))
        for place, transcript in found:
            if not isinstance(transcript, Transcript):
                continue
            hits += _hits(f"{item.key}#{place}", transcript, pattern, limit - len(hits))
            if len(hits) >= limit:
                break
    except Exception:  # the file cannot be read: its rows say so (C-7)
        pass
    return hits


def _or_none(read: OneFormat, cell: Any) -> Transcript | None:
    try:
        return read(cell)
    except Exception:
        return None


def _hits(
    key: str, transcript: Transcript, pattern: re.Pattern[str], limit: int
) -> list[SearchHit]:
    hits: list[SearchHit] = []
    for turn, entry in entries_by_turn(transcript):
        for text in _texts(entry):
            match = pattern.search(text) if text else None
            if match:
                hits.append(
                    SearchHit(key, turn, entry.id, _snippet(text, match.start(), match.end()))
                )
                break
        if len(hits) >= limit:
            break
    return hits


@dataclass(frozen=True)
class SearchMany:
    """:func:`search_item` over a chunk, as a picklable callable for the engines."""

    query: str
    regex: bool
    limit: int

    def __call__(self, items: list[Item]) -> list[list[SearchHit]]:
        with progress.muted():  # no bar of each file read: the worker's output is the user's
            return [search_item(item, self.query, self.regex, self.limit) for item in items]
