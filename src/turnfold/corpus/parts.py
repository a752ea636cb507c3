"""A scan's files read in parts (spec C-4, C-5): where one file is more work than one worker's.

A large file of many runs is cut into parts that every worker reads at once: a file of runs in
JSON lines (:mod:`turnfold.corpus.runs`) or an OpenHands eval output, at its lines' ends; a
Parquet file of trajectories (:mod:`turnfold.formats.tables`), by its rows; an ``.eval`` log,
by its samples (each a member of the zip). A file of runs that grew since the last scan is read
from its mark on, its new lines alone, after the rows the index kept of its old ones.
:class:`Parts` plans that work and puts each file's summary back together once all its parts
are read, whatever order they end in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from turnfold.corpus import runs
from turnfold.corpus.discover import Item
from turnfold.corpus.engine import part_share
from turnfold.corpus.summarize import Summary, file_parts, is_instances_part, joined_instances

if TYPE_CHECKING:
    from turnfold.corpus.index import Index


def read_on(
    index: Index, items: list[Item], places: list[int]
) -> dict[int, tuple[Summary, runs.Mark]]:
    """For each file of runs at ``places`` that grew and still fits its mark, the rows of its
    records before the mark (from the index), and the mark; by position in ``items``. One
    that does not fit (rewritten, or its rows gone) is read whole, and marked anew."""
    marks = {p: mark for p in places if items[p].grew
             and (mark := runs.mark_of(items[p].checkpoint)) is not None}  # fmt: skip
    if not marks:
        return {}
    previous = index.previous(items, marks)
    heads: dict[int, tuple[Summary, runs.Mark]] = {}
    for position, mark in marks.items():
        item = items[position]
        kept = runs.kept(previous[position], mark.places) if position in previous else None
        if kept is None or not mark.fits(item.path or "", item.size or 0):
            items[position] = replace(item, checkpoint=None)
        else:
            heads[position] = (kept, mark)
    return heads


class Parts:
    """The work of reading ``todo`` (:attr:`work`): each large file of many runs in it as its
    parts when there are workers to share them, and each file of runs read on from its mark
    (``heads``, by index in ``todo``: the rows kept of it, and the mark) as the parts of its
    new lines. :meth:`gathered` gives each file's results (what each item's work gives) once
    all its parts are read; :meth:`done`, a scan's summary of it.

    ``numbered``: whether a file may be cut whose parts number their rows from 0, which a scan
    renumbers once they are joined (a file of runs in JSON lines, an eval output: a part
    cannot know what the lines before it hold). A site, whose pages are named by their rows'
    keys as they are written, cuts only the others (Parquet files, eval logs)."""

    def __init__(
        self,
        todo: list[Item],
        workers: int | None,
        client: Any,
        heads: dict[int, tuple[Summary, runs.Mark]],
        numbered: bool = True,
    ) -> None:
        self._todo = todo
        self._heads = heads
        self.work: list[Item] = []
        self._owners: list[int] = []  # for each item of the work, the index of its file
        self._counts: dict[int, int] = {}  # how many parts each file read in parts has
        self._got: dict[int, dict[int, Any]] = {}
        share = part_share(workers, client)
        for index_in_todo, item in enumerate(todo):
            head = heads.get(index_in_todo)
            split: list[Item] | None = None
            if head is not None or share is not None:
                split = file_parts(item, share or 1, head[1] if head is not None else None,
                                   numbered)  # fmt: skip
            if split is not None:
                self._counts[index_in_todo] = len(split)
            self.work += split or [item]
            self._owners += [index_in_todo] * len(split or [item])

    def gathered(self, index_in_work: int, result: Any) -> tuple[int, list[Any]] | None:
        """The file an item of the work is of (its index in ``todo``) and the results of its
        parts in order, once every part of it is read; None while some are not."""
        index_in_todo = self._owners[index_in_work]
        count = self._counts.get(index_in_todo)
        if count is None:
            return index_in_todo, [result]
        got = self._got.setdefault(index_in_todo, {})
        got[index_in_work] = result
        if len(got) < count:
            return None
        del self._got[index_in_todo]
        return index_in_todo, [got[w] for w in sorted(got)]

    def done(self, index_in_work: int, summary: Summary) -> tuple[int, Summary] | None:
        """:meth:`gathered`, the parts' summaries joined into the file's."""
        gathered = self.gathered(index_in_work, summary)
        if gathered is None:
            return None
        index_in_todo, summaries = gathered
        if index_in_todo not in self._counts:
            return index_in_todo, summary
        head = self._heads.get(index_in_todo)
        file = self._todo[index_in_todo]
        part = self.work[index_in_work]
        if is_instances_part(part):  # keyed by their instances' ids
            return index_in_todo, joined_instances(summaries, file.key)
        # A part of a file of runs in JSON lines numbers its rows from 0; a Parquet file's
        # and an eval log's are keyed as the file's (their rows, their samples' ids).
        numbered = isinstance(part.part, runs.Span)
        joined = runs.joined(summaries if head is None else [head[0], *summaries], file.key,
                             file.grew, numbered)  # fmt: skip
        return index_in_todo, joined
