"""Many runs as one corpus (spec §13): ``turnfold.scan(source) -> Corpus``.

A scan lists the items of its source (:mod:`~turnfold.corpus.discover`), takes what the on-disk
index already knows (:mod:`~turnfold.corpus.index`), maps :func:`summarize` over the rest in
worker processes or on a Dask cluster (:mod:`~turnfold.corpus.engine`) and streams the rows into
Arrow tables (:mod:`~turnfold.corpus.tables`). It keeps no transcript: ``corpus[key]`` loads one
when asked.

Ray Data or Spark users map the same pure function themselves::

    from turnfold.corpus import Item, summarize
    rows = ray.data.from_items([{"path": p} for p in paths]).map(
        lambda r: summarize(Item(key=r["path"], path=r["path"])))
    rows = spark.sparkContext.parallelize(paths).map(lambda p: summarize(Item(key=p, path=p)))

An eval log is one item per sample and epoch: ``log_items(Item(key=p, path=p))`` (``from
turnfold.corpus.summarize import log_items``) lists them, keyed ``p#id/epoch``, each one row.
An OpenHands eval ``output.jsonl`` is one row per instance, keyed ``p#<instance_id>`` (one
instance: one row keyed ``p``); ``summarize(Item(key=..., path=p, sample=<instance_id>))``
summarises one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnfold.corpus import runs
from turnfold.corpus.discover import (
    SESSION_DATABASES,
    Found,
    Item,
    discover,
    iter_paths,
    loose_warning,
    table_files,
)
from turnfold.corpus.engine import (
    Deaths,
    default_workers,
    ordered_map,
    part_share,
    spread,
    worth_workers,
)
from turnfold.corpus.parts import Parts, read_on
from turnfold.corpus.search import (
    InOrder,
    Missed,
    SearchHit,
    SearchMany,
    compile_query,
    files_of_runs,
    search_parts,
)
from turnfold.corpus.summarize import (
    COLUMNS,
    TOOL_CALL_COLUMNS,
    TURN_COLUMNS,
    Summary,
    error_row,
    examine,
    examine_many,
    summarize,
)
from turnfold.formats import FORMATS
from turnfold.formats import tables as table_runs  # corpus.tables is the corpus's own
from turnfold.formats.frameworks import runs_of_object
from turnfold.formats.source import (
    expanded,
    holds_runs,
    table_of_runs,
)
from turnfold.model import Transcript
from turnfold.userwarn import warn_at_caller

if TYPE_CHECKING:
    import pandas
    import polars
    import pyarrow as pa

    from turnfold.corpus.index import Stored

__all__ = ["COLUMNS", "Corpus", "Item", "SearchHit", "examine", "scan", "summarize"]

#: Summaries written to the index per transaction.
STORE_EVERY = 64


class Corpus:
    """One row per item (C-2), three tables (C-3), search (C-6), and each item on demand.

    Build one with :func:`turnfold.scan`. ``skipped`` counts files no loader recognises; rows
    whose item could not be read have ``error`` set (C-7).
    """

    def __init__(
        self,
        rows: pa.Table,
        tool_calls: pa.Table | Callable[[], pa.Table],
        turns: pa.Table | Callable[[], pa.Table],
        *,
        skipped: int,
        opener: Callable[[int, dict[str, Any]], Item],
        extra: pa.Table | None = None,
        workers: int | None = None,
        client: Any = None,
        read: int = 0,
        cached: int = 0,
    ) -> None:
        self._rows = rows
        # A table, or what builds it when first asked for (a rescan's, from the index).
        self._tool_calls = tool_calls
        self._turns = turns
        self._extra = extra
        self._opener = opener
        self._workers = workers
        self._client = client
        self._table: pa.Table | None = None
        #: Files no loader recognises (C-7): counted, not rows.
        self.skipped = skipped
        #: Items read by this scan, and items whose rows came from the index (C-4).
        self.read = read
        self.cached = cached
        keys = rows.column("key").to_pylist()
        self._positions: dict[str, int] = {str(key): i for i, key in enumerate(keys)}

    # --- rows ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._rows.num_rows

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # Each row's metadata is capped as a load's, a page of such rows is not: a page
        # holds what a load converts at once.
        for page in table_runs.held_pages(self.to_arrow()):
            yield from page.to_pylist()

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row as a dict, C-2 columns first (then a table source's own columns)."""
        return list(self)

    @property
    def keys(self) -> list[str]:
        return list(self._positions)

    @property
    def errors(self) -> int:
        """How many rows could not be read (their ``error`` is set)."""
        column = self._rows.column("error")
        return len(column) - column.null_count

    def __contains__(self, key: object) -> bool:
        return key in self._positions

    def __getitem__(self, key: str) -> Transcript:
        """The item's transcript, loaded now (the scan kept none)."""
        position = self._positions.get(key)
        if position is None:
            raise KeyError(_not_a_key(key, self.keys))
        from turnfold.corpus.summarize import load_item

        row = self._rows.slice(position, 1).to_pylist()[0]
        item = self._opener(position, row)
        transcript = load_item(item, row["format"], self._scanned_at(position, item))
        if self._extra is not None:  # a table's other columns: the run's metadata (C-1)
            from turnfold.formats.wrappers import keep_wrapper_keys

            others = self._extra.slice(position, 1).to_pylist()[0]
            keep_wrapper_keys(transcript, {k: v for k, v in others.items() if v is not None})
        return transcript

    def _scanned_at(self, position: int, item: Item) -> int | None:
        """The place of the run of a file of runs that the row at ``position`` is, when its key
        spells that place (``#3``, ``#@3``) and its file is as the scan saw it: the scan's keys
        are unique, so no run of the file is named so and reading it up to that place finds the
        run (``load(path, sample=n)``, not knowing the file's keys, reads to its end). The
        rows of a file of runs are its records, one each, in their order (C-7). None
        otherwise: a run named by its key is found where it is met."""
        from turnfold.formats.wrappers import RunChoice

        if item.path is None or item.sample is None or not _is_run_of_file(item):
            return None
        place = RunChoice(item.sample).place
        if place is None or place > position:
            return None
        try:
            now = os.stat(item.path)
        except OSError:  # gone: reading it says so
            return None
        if item.size is None or (now.st_size, now.st_mtime_ns, now.st_ctime_ns) != (
                item.size, item.mtime_ns, item.ctime_ns):  # fmt: skip
            return None  # not known as scanned, or changed since: a run may be named so now
        import pyarrow as pa
        import pyarrow.compute as pc

        first, paths = position - place, self._rows.column("path")
        same = pc.equal(paths.slice(first, place), pa.scalar(item.path))
        ours = pc.sum(pc.cast(same, pa.int64())).as_py() or 0
        if ours != place or (first > 0 and paths[first - 1].as_py() == item.path):
            return None  # the rows before it are not its file's first ``place``
        return place

    # --- tables ----------------------------------------------------------------------------------

    def to_arrow(self) -> pa.Table:
        """The rows as a ``pyarrow.Table``: the C-2 columns, in order, then a table source's
        other columns (renamed ``meta_<name>`` where a name is taken)."""
        if self._table is None:
            table = self._rows
            if self._extra is not None:
                for name in self._extra.column_names:
                    column = self._extra.column(name)
                    label = f"meta_{name}" if name in table.column_names else name
                    table = table.append_column(label, column)
            self._table = table
        return self._table

    def to_pandas(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame (pandas is optional)."""
        _need("pandas", "pandas")
        return self.to_arrow().to_pandas()

    def to_polars(self) -> polars.DataFrame:
        """The rows as a Polars DataFrame (``pip install 'turnfold[polars]'``)."""
        _need("polars", "turnfold[polars]")
        import polars

        frame = polars.from_arrow(self.to_arrow())
        assert isinstance(frame, polars.DataFrame)
        return frame

    def tool_calls(self) -> pa.Table:
        """One row per tool call (C-3): ``key, turn, call_id, name, category, status, started,
        duration_ms, description, error``."""
        if callable(self._tool_calls):
            self._tool_calls = self._tool_calls()
        return self._tool_calls

    def turns(self) -> pa.Table:
        """One row per turn (C-3): ``key, turn, status, started, duration_s, tool_calls``,
        tokens and ``cost_usd`` (null where the source records tokens for the session only,
        :func:`~turnfold.usage.records_tokens_per_turn`), and ``no_cost``: why a turn whose
        tokens are known has no cost, as its header says it."""
        if callable(self._turns):
            self._turns = self._turns()
        return self._turns

    def write_parquet(self, directory: str | os.PathLike[str]) -> dict[str, Path]:
        """Write ``sessions``, ``tool_calls`` and ``turns`` as Parquet files in ``directory``."""
        import pyarrow.parquet as pq

        folder = Path(expanded(os.fspath(directory)))
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(
                f"{folder} is a file: write_parquet() writes sessions.parquet, tool_calls.parquet "
                "and turns.parquet into a folder; name one"
            )
        folder.mkdir(parents=True, exist_ok=True)
        written = {}
        for name, table in (("sessions", self.to_arrow()), ("tool_calls", self.tool_calls()),
                            ("turns", self.turns())):  # fmt: skip
            target = folder / f"{name}.parquet"
            pq.write_table(table, target)
            written[name] = target
        return written

    # --- search ----------------------------------------------------------------------------------

    def search(self, query: str, regex: bool = False, limit: int = 100) -> list[SearchHit]:
        """Hits for ``query`` (case-insensitive; a regular expression when ``regex``) across
        prompts, answers, thinking, tool arguments and outputs, in row order, at most ``limit``.

        A plain query is looked for without the spaces around it, as a transcript's own search
        looks for it; no query is longer than
        :data:`~turnfold.render.search.MAX_QUERY_LENGTH` characters (a ValueError at once).

        Items are read again, in the scan's workers (a large file in the parts a scan reads it
        in, by all of them at once), and reading stops once ``limit`` is met. A file that can
        no longer be read (it went or broke since the scan), or that changed since (searched as
        it is now), is named in a warning.
        """
        hits, missed = self._searched(query, regex, limit)
        if missed:  # no hit there is no "no match": its rows read when scanned, not now
            warn_at_caller(missed.warning())
        return hits

    def _searched(
        self, query: str, regex: bool, limit: int, keys: Container[str] | None = None
    ) -> tuple[list[SearchHit], Missed]:
        """:meth:`search`'s hits, and the files it read otherwise than the scan did, which a
        caller says where its reader looks (the session browser's search status); with
        ``keys``, the hits of those rows only (the rows the browser's filters keep, B-1)."""
        if not isinstance(query, str):
            raise TypeError(f"search() looks for a str, not {type(query).__name__}")
        # A bad pattern, or a pasted query past the limit, fails here, not once per item in a
        # worker; so does a query that is no more than spaces.
        compile_query(query, regex)
        if type(limit) is not int or limit < 0:
            raise ValueError(f"search() takes a limit of 0 or more hits, not {limit!r}")
        missed = Missed({}, {})
        if limit == 0:
            return [], missed
        rows = self._rows.select(["key", "path", "sample", "format", "error"]).to_pylist()
        searched = {row["key"] for row in rows if row["error"] is None}
        if keys is not None:
            searched = {key for key in searched if key in keys}
        items: list[Item] = []
        for i, row in enumerate(rows):
            if row["key"] in searched:
                item, changed = self._search_item(i, row)
                if changed is not None:
                    missed.changed.setdefault(row["path"], changed)
                _add_search_item(items, item)
        share = part_share(self._workers, self._client)
        if share is not None:  # a large file is searched in the parts a scan reads it in
            items = [part for item in items for part in search_parts(item, share) or [item]]
        sizes = [item for item in items if item.path is not None]
        parallel = worth_workers(sizes) if len(sizes) == len(items) else len(items) >= 64
        hits: list[SearchHit] = []
        # A file read whole for a row searched gives its other rows' hits too: left out here.
        in_order = InOrder(searched, files_of_runs(rows), workers=self._workers,
                           client=self._client, parallel=parallel)  # fmt: skip
        results = ordered_map(
            SearchMany(query, regex, limit), items, workers=self._workers,
            client=self._client, parallel=parallel, died=_unsearched,
        )  # fmt: skip
        try:
            for item, found in zip(items, results, strict=False):
                # Hits left out here (a run whose row is an error) counted toward the limit
                # where it stopped: more of it is needed now.
                found = in_order.searched_on(item, found, query, regex, limit - len(hits))
                hits.extend(in_order(item, found)[: limit - len(hits)])
                if found.unread is not None:  # the parts of one file that went: said once
                    missed.unread.setdefault(item.path or item.key, found.unread)
                if len(hits) >= limit:
                    break
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # stops the workers still reading (C-6: stops at the limit)
        for path in missed.unread:  # why it could not be read says more than that it changed
            missed.changed.pop(path, None)
        return hits, missed

    def _search_item(self, position: int, row: dict[str, Any]) -> tuple[Item, str | None]:
        """The item a search reads for a row, at its file's size now, and how its file
        changed since the scan, if it did (the size, modification time and inode change time
        the scan saw, as the index tells a changed file, C-4)."""
        item = self._opener(position, row)
        if item.path is None:
            if item.format is None and row["format"]:
                item = replace(item, format=row["format"])
            return item, None
        try:
            now = os.stat(item.path)
        except OSError:  # gone: reading it says so
            return replace(item, format=row["format"], size=0), None
        changed = None
        if item.size is not None and item.mtime_ns is not None and (
            now.st_size, now.st_mtime_ns, now.st_ctime_ns) != (item.size, item.mtime_ns,
                                                              item.ctime_ns):  # fmt: skip
            changed = f"{item.path} (modified, same size)"
            if now.st_size != item.size:
                changed = f"{item.path} ({item.size:,} bytes when scanned, {now.st_size:,} now)"
        return replace(item, format=row["format"], size=now.st_size), changed

    # --- display ---------------------------------------------------------------------------------

    def describe(self, locale: str = "en") -> str:
        """Its counts in a line, in ``locale``: ``12 rows, 1 error, 0 skipped``."""
        from turnfold.i18n import plural, translate

        return translate(
            "site.counts", locale, runs=plural("corpus.rows", len(self), locale),
            errors=plural("site.errors", self.errors, locale),
            skipped=plural("site.skipped", self.skipped, locale),
        )  # fmt: skip

    def __repr__(self) -> str:
        return f"<Corpus: {self.describe()}>"

    def _repr_html_(self) -> str:
        """The counts and a table of the first rows, as the session browser's notebook
        fallback draws them (in a kernel a Corpus shows as the browser itself, B-1), in its
        default columns (:attr:`~turnfold.corpus.paging.Paging.default_columns`: ``sample``
        among them where rows share a file)."""
        from turnfold.corpus.paging import Paging
        from turnfold.render.table import runs_html

        paging = Paging(self.to_arrow())
        return runs_html(paging, paging.query(None)[0], self.describe())

    def _display_(self) -> Any:
        """marimo's display protocol, which it prefers to ``_repr_html_``: a corpus left as a
        cell's value shows as the session browser there too (B-1, N-2)."""
        from turnfold.browser import SessionBrowser

        return SessionBrowser(self)


#: The formats of databases of sessions, whose rows a search reads each by its session's id.
_DATABASE_FORMATS = frozenset(database.NAME for database in SESSION_DATABASES)


def _add_search_item(items: list[Item], item: Item) -> None:
    """Append ``item`` to what a search reads; the samples of one eval log file (the instances
    of one OpenHands eval output, the conversations of an OTLP file or chat store, the records
    of a file of runs), rows in a row, become that file, read once (a ``.json`` log is parsed
    whole to reach any one sample; an output or a file of runs is read to its instance or
    record; a Parquet file, to its row). A database's session stays its own item: it is read
    by its id, not by reading the whole database."""
    from turnfold.corpus.search import reads_each
    from turnfold.formats.harnesses import inspect_log, openhands

    if item.path is None or item.sample is None or item.format in _DATABASE_FORMATS:
        items.append(item)
        return
    # A row of a file with samples: an eval log's, an eval output's, a file of conversations',
    # else a dataset's record.
    grouped = item.format in (inspect_log.NAME, openhands.NAME) or reads_each(item.format)
    kind = item.format if grouped else runs.FILE
    log = replace(item, key=item.key[: -len(item.sample) - 1], sample=None, format=kind)
    if not items or items[-1] != log:
        items.append(log)


def _is_run_of_file(item: Item) -> bool:
    """Whether ``item`` is a run of a file of runs (:mod:`~turnfold.corpus.runs`): a sample of
    a file no eval log, eval output, file of conversations, database or table."""
    from turnfold.corpus.search import reads_each
    from turnfold.formats.harnesses import inspect_log, openhands

    return (
        item.path is not None and item.sample is not None and item.column is None
        and item.format not in _DATABASE_FORMATS
        and item.format not in (inspect_log.NAME, openhands.NAME) and not reads_each(item.format)
    )  # fmt: skip


def _need(module: str, extra: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(f"this needs {module}: pip install '{extra}'")


# --- scan ---------------------------------------------------------------------------------------


def _is_table_file(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike)) and os.fspath(value).endswith(
        table_runs.TABLE_SUFFIXES
    ) and os.path.isfile(value)  # fmt: skip


class _Run:
    """Counts and tables of one scan, filled as summaries stream in."""

    def __init__(self) -> None:
        from turnfold.corpus.tables import TableBuilder

        self.rows = TableBuilder(COLUMNS)
        self.tool_calls = TableBuilder(TOOL_CALL_COLUMNS)
        self.turns = TableBuilder(TURN_COLUMNS)
        self.skipped = 0
        self.children = 0
        self.errors = 0
        self.read = 0
        self.cached = 0
        self.tallied = 0  # rows of files counted by :meth:`tally`, for the progress bar
        self.positions: list[int] = []  # for each row, the index of its item in the source

    def _counted(self, kind: str) -> bool:
        """Count a file that is no row (C-7: unrecognised; or part of another row's session)."""
        if kind == "skipped":
            self.skipped += 1
        elif kind != "rows":
            self.children += 1
        return kind == "rows"

    def take(self, summary: Summary, position: int, path: str | None = None) -> None:
        """An item's rows as dicts (transcripts and rows of a table)."""
        if not self._counted(summary.kind):
            return
        for row in summary.rows:
            if path is not None:
                row = {**row, "path": path}
            if row["error"] is not None:
                self.errors += 1
            self.rows.add(row)
            self.positions.append(position)
        self.tool_calls.extend(summary.tool_calls)
        self.turns.extend(summary.turns)

    def tally(self, stored: Stored, *, retract: bool = False) -> None:
        """Count a file's rows, errors and what it is (C-7), as it is read or found in the
        index; :meth:`take_file` adds its rows, in the order of the items, once all are.
        ``retract`` takes back the count of a file found in the index but read again."""
        rows = stored.rows
        if stored.kind != "rows" or rows is None:
            if not retract:
                self._counted(stored.kind)
            return
        sign = -1 if retract else 1
        errors = rows.column(COLUMNS.index("error"))
        self.errors += sign * (len(errors) - errors.null_count)
        self.tallied += sign * rows.num_rows

    def take_file(self, stored: Stored, position: int) -> None:
        """A file's rows as record batches, read now or from the index (C-4)."""
        rows = stored.rows
        if stored.kind != "rows" or rows is None:
            return
        self.rows.add_batch(rows)
        if stored.tool_calls is not None:
            self.tool_calls.add_part(stored.tool_calls)
        if stored.turns is not None:
            self.turns.add_part(stored.turns)
        self.positions.extend([position] * rows.num_rows)


def _progress(total: int | None, desc: str) -> Any:
    from turnfold import progress

    return progress.bar(total, desc, "item", delay=progress.DELAY_S, leave=True)


def _report(bar: Any, run: _Run) -> None:
    rows = run.rows.count + run.tallied
    bar.set_postfix_str(f"{rows} rows, {run.errors} errors, {run.skipped} skipped",
                        refresh=False)  # fmt: skip


def scan(
    source: Any,
    *,
    format: str | None = None,
    messages: str | None = None,
    cache: bool = True,
    workers: int | None = None,
    client: Any = None,
) -> Corpus:
    """Scan ``source`` into a :class:`Corpus` of one row per session (spec C-1).

    ``source`` is a folder (walked; sub-agent files belong to their parent; a path may start
    with ``~``, the home folder), a glob, a file, a list (or any iterable) of paths, a Parquet
    or Arrow file or the shards of one dataset (a folder, glob or list of nothing but such
    files; a folder ``datasets`` saved a ``Dataset`` in, or a ``DatasetDict``, every split), a
    ``pyarrow.Table``, pandas or Polars DataFrame or Hugging Face ``datasets.Dataset`` of
    trajectories (the ``messages`` column, found by name when not given; other columns kept
    as row metadata), or a list of :class:`~turnfold.Transcript`. A table whose runs are split
    over columns is read as whole runs when no column is named as messages are: a ``prompt``
    column of messages and a ``completion`` column of messages or text (TRL's conversational
    prompt-completion datasets, verifiers' and prime-rl's rollouts), the prompt's messages then
    the completion's; a preference pair's ``prompt``, ``chosen`` and ``rejected`` columns of
    messages, or ``chosen`` and ``rejected`` alone, each the whole conversation (TRL's
    conversational DPO, ORPO and KTO datasets; LLaMA-Factory's ``chosen_messages`` and
    ``rejected_messages``), the conversation, the rejected reply marked, then the chosen one.
    ``messages`` names such columns joined by ``+`` (``"prompt+completion"``,
    ``"chosen+rejected"``), or one column alone (``"completion"``). A file of many runs (an eval
    log, a dataset's JSON lines, a Parquet file) is a row per run, keyed ``path#…``. Session
    files may be compressed (gzip, bzip2, xz, Zstandard). ``format`` forces a loader.

    ``cache=False`` bypasses the index of already-read files (C-4: a file is read again when
    it changed, or when a sub-agent's file of its session did; a session or a file of runs
    that grew is read on from its last complete line). ``workers`` is the number of worker
    processes (None: every core; 1: this process); ``client`` a ``distributed.Client``, whose
    cluster then does the work (C-5). A large file of many runs is read in parts, by every
    worker at once.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    if workers is not None and (type(workers) is not int or workers < 1):
        raise ValueError(
            f"scan() takes workers=1 or more (1: this process; None: every core), not {workers!r}"
        )
    if workers is None and client is None:
        workers = default_workers()
    if isinstance(source, Transcript):
        source = [source]
    if isinstance(source, (str, os.PathLike)):
        source = expanded(os.fspath(source))  # "~/.claude/projects"
    table = table_of_runs(source)
    if table is not None:
        return _scan_table(table, format, messages, workers, client)
    if _is_table_file(source):
        return _scan_tables([source], format, messages, cache, workers, client)
    if holds_runs(source):  # a DatasetDict of splits, or a streamed IterableDataset
        raise TypeError(_one_table(source))
    runs = runs_of_object(source)  # a DSPy EvaluationResult, iterable over its field names
    if runs is not None:
        return _scan_transcripts(runs)
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes, Mapping, os.PathLike)):
        source = list(source)  # Path.glob(...), a generator of Transcripts...
    if source and isinstance(source, list) and all(isinstance(s, Transcript) for s in source):
        return _scan_transcripts(source)
    if not _is_paths(source):
        raise TypeError(
            "scan() takes a folder, a glob, a file or a list of paths, a Parquet file, a "
            "pyarrow Table, pandas or Polars DataFrame or Hugging Face Dataset of "
            "trajectories, or a list of Transcripts; got "
            f"{_kind(source)}"
        )
    found = discover(source, format)
    if found.tables and not found.items:
        # Nothing but table files: the shards of one dataset of trajectories (Parquet files;
        # the Arrow shards of a dataset ``datasets`` saved, of each of its splits).
        # The files beside them no runs were read from are still said (C-7): discovery counts
        # the table files among the skipped, each read here.
        others = found.skipped - len(found.tables)
        return _scan_tables(found.tables, format, messages, cache, workers, client, others)
    return _scan_files(source, found, cache, workers, client)


def _not_a_key(key: object, keys: list[str]) -> object:
    """What a ``KeyError`` for ``key`` says: the key itself, or for a position, how to read it."""
    if type(key) is int and -len(keys) <= key < len(keys):
        return (f"{key}: a corpus is read by key (its rows' 'key' column), not by position; "
                f"the row there is {keys[key]!r}")  # fmt: skip
    return key


def _one_table(source: Any) -> str:
    """Why scan() does not read a Hugging Face dataset that is no one ``Dataset``."""
    kind = type(source).__name__
    if isinstance(source, Mapping):
        splits = ", ".join(repr(str(name)) for name in source)
        return (f"a {kind} holds one table per split ({splits}): scan one of them, "
                "turnfold.scan(dataset['train'])")  # fmt: skip
    return (f"this {kind} is read one example at a time, from its source: load it without "
            "streaming=True to scan it, or scan the examples you take as a pandas DataFrame, "
            "turnfold.scan(pandas.DataFrame(dataset.take(1000)))")  # fmt: skip


def _is_paths(source: Any) -> bool:
    if isinstance(source, (str, os.PathLike)):
        return True
    return isinstance(source, list) and all(isinstance(e, (str, os.PathLike)) for e in source)


def _kind(source: Any) -> str:
    if isinstance(source, list):
        odd = next(e for e in source if not isinstance(e, (str, os.PathLike)))
        return f"{type(odd).__name__} among them"
    return type(source).__name__


def _scan_transcripts(transcripts: list[Transcript]) -> Corpus:
    run = _Run()
    for position, transcript in enumerate(transcripts):
        item = Item(key=f"#{position}", sample=str(position), transcript=transcript)
        run.take(examine(item), position)
        run.read += 1

    def opener(position: int, row: dict[str, Any]) -> Item:
        return Item(key=row["key"], transcript=transcripts[run.positions[position]])

    return _corpus(run, opener, None, 1, None)


def _corpus(
    run: _Run, opener: Callable[[int, dict[str, Any]], Item], extra: pa.Table | None,
    workers: int | None, client: Any,
) -> Corpus:  # fmt: skip
    rows = run.rows.table()
    if extra is not None:
        rows = _wrapper_columns(rows, extra)
    return Corpus(
        rows, run.tool_calls.table, run.turns.table, skipped=run.skipped, opener=opener,
        extra=extra, workers=workers, client=client, read=run.read, cached=run.cached,
    )  # fmt: skip


def _wrapper_columns(rows: pa.Table, extra: pa.Table) -> pa.Table:
    """What a table source's other columns say of each run where the run records nothing, as
    the same keys kept beside a run's messages do (``wrappers.keep_wrapper_keys``, which
    ``corpus[key]`` applies to the run it opens): a numeric ``reward`` is its ``score`` (H-6),
    a verifiers rollout's ``generation_ms`` (0: not timed) its duration, a text ``model`` its
    model and a text ``agent`` (else ``agent_name``) its agent, which the browser's Model and
    Agent columns and filters read (B-1)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def numeric(name: str) -> pa.ChunkedArray[Any] | None:
        if name not in extra.column_names:
            return None
        column = extra.column(name)
        number = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        return column if number else None

    def textual(name: str) -> pa.ChunkedArray[Any] | None:
        if name not in extra.column_names:
            return None
        column = extra.column(name)
        return column if pa.types.is_string(column.type) or pa.types.is_large_string(
            column.type) else None  # fmt: skip

    for name, sources in (("model", ("model",)), ("agent", ("agent", "agent_name"))):
        for source in sources:
            if (named := textual(source)) is not None:
                kind = rows.schema.field(name).type
                filled = pc.coalesce(rows.column(name), pc.cast(named, kind))
                rows = rows.set_column(rows.column_names.index(name), name, filled)
    if (reward := numeric("reward")) is not None:
        kind = rows.schema.field("score").type
        scores = pc.coalesce(rows.column("score"), pc.cast(reward, kind))
        rows = rows.set_column(rows.column_names.index("score"), "score", scores)
    if (took := numeric("generation_ms")) is not None:
        kind = rows.schema.field("duration_s").type
        seconds = pc.divide(pc.cast(took, pa.float64()), pa.scalar(1000.0))
        # 0 (or less, or NaN): not timed.
        timed = pc.if_else(pc.greater(took, pa.scalar(0)), pc.cast(seconds, kind), None)
        durations = pc.coalesce(rows.column("duration_s"), timed)
        rows = rows.set_column(rows.column_names.index("duration_s"), "duration_s", durations)
    return rows


def _scan_files(source: Any, found: Found, cache: bool, workers: int | None, client: Any) -> Corpus:
    run = _read_files(source, found, cache, workers, client)
    scanned = _scanned_as(found.items)

    def opener(position: int, row: dict[str, Any]) -> Item:
        # ``sample`` names one sample of an eval log (``id/epoch``), None for a session file.
        size, mtime_ns, ctime_ns = scanned.get(row["path"], (None, None, None))
        return Item(key=row["key"], path=row["path"], sample=row["sample"], format=row["format"],
                    size=size, mtime_ns=mtime_ns, ctime_ns=ctime_ns)  # fmt: skip

    return _corpus(run, opener, None, workers, client)


def _read_files(source: Any, found: Found, cache: bool, workers: int | None, client: Any) -> _Run:
    """The rows of the files ``found`` in ``source``: from the index where they did not change
    (C-4), the others read by the workers (C-5), in the order of the files."""
    items = found.items
    run = _Run()
    run.skipped = found.skipped
    from turnfold.corpus.index import Index

    index = Index() if cache else None
    try:
        known = index.lookup(items) if index is not None else {}
        places = [position for position in range(len(items)) if position not in known]
        if index is not None:
            # C-4: a file that grew is read on from its last complete line where it can be.
            for position, checkpoint in index.growth(items, places).items():
                items[position] = replace(items[position], grew=True, checkpoint=checkpoint)
            index.stopped_growing(items[position] for position in known)
        # C-4: a file of runs that grew is read on from its mark: its new lines alone, after
        # the rows the index kept of its old ones.
        heads = read_on(index, items, places) if index is not None else {}
        todo = [items[position] for position in places]
        # The files read now end in any order (the largest are started first): each is put in
        # its place once all are read. Their rows are kept either way, so this costs no memory.
        read: dict[int, Stored] = {}
        # A deleted file leaves the index; a sub-agent's deleted file, its session's row too.
        roots = _roots(source) if index is not None else []
        gone = index.missing(roots, iter_paths(items)) if index is not None and roots else {}
        # The sessions' patterns of the sub-agents' files read now, or gone.
        sessions: list[str] = [session for session in gone.values() if session is not None]

        # The files read and not yet made into record batches: made STORE_EVERY at a time.
        fresh: list[tuple[int, Summary]] = []
        # Archives skipped though only part of them was looked at for a session (C-7).
        unread: list[str] = []
        # Files skipped though some of their first records hold runs (C-7: said, not silent).
        few_runs: list[str] = []
        # Files of a session's that no session reads (C-7: said at every scan, the index's too).
        loose = [position for position, stored in known.items() if stored.kind == "loose"]

        def took(position: int, summary: Summary) -> None:
            if summary.kind == "loose":
                loose.append(position)
            if summary.unread is not None:
                unread.append(f"{items[position].path} ({summary.unread})")
            if summary.why_skipped is not None:
                few_runs.append(f"{items[position].path}: {summary.why_skipped}")
            if summary.session is not None:
                summary.session = _absolute(summary.session)
                sessions.append(summary.session)
            run.read += 1
            fresh.append((position, summary))
            if len(fresh) >= STORE_EVERY:
                store()

        def store() -> None:
            if not fresh:  # an unchanged rescan: nothing to make (not even empty batches)
                return
            made = _stored([summary for _, summary in fresh])
            for (position, _), stored in zip(fresh, made, strict=True):
                read[position] = stored
                run.tally(stored)
            if index is not None:
                index.store([(items[position], stored) for (position, _), stored
                             in zip(fresh, made, strict=True)])  # fmt: skip
            fresh.clear()

        # A large file is read in parts, by every worker at once (spec C-5).
        parts = Parts(todo, workers, client,
                      {i: heads[p] for i, p in enumerate(places) if p in heads})  # fmt: skip
        deaths = Deaths(_died_row, lambda: Summary("rows"))
        with _progress(len(items) + len(parts.work) - len(todo), "Scanning") as bar:
            for position in known:
                run.tally(known[position])
            run.cached = len(known)
            bar.update(len(known))
            for index_in_work, summary in _spread(parts.work, workers, client, deaths):
                bar.update(1)
                file = parts.done(index_in_work, summary)
                if file is not None:
                    position = places[file[0]]
                    error = deaths.of(items[position])
                    took(position, file[1] if error is None else _died_row(items[position], error))
                    _report(bar, run)
            # A sub-agent's file that changed (or went) changes its session's row, though the
            # session file did not (its agent still runs while the session waits): read it
            # again.
            again = _sessions_known(items, known, sessions)
            for position in again:
                run.tally(known.pop(position), retract=True)
                run.cached -= 1
            for index_in_again, summary in _spread([items[p] for p in again], workers, client):
                took(again[index_in_again], summary)
                _report(bar, run)
            store()
            _report(bar, run)
        if unread:
            warn_at_caller(
                f"skipped {len(unread)} archive(s) with no OpenHands session in the part looked "
                f"at: {'; '.join(unread)}. Extract an archive to scan its files, or read it "
                "whole with turnfold.load(path, format='openhands')"
            )
        if few_runs:
            warn_at_caller(
                f"skipped {len(few_runs)} file(s) whose records are not mostly runs, though "
                f"some are: {'; '.join(few_runs)}. Keep the runs in a file of their own to "
                "scan each as a row"
            )
        if loose:
            warn_at_caller(loose_warning([str(items[p].path) for p in sorted(set(loose))]))
        for position in range(len(items)):
            run.take_file(known.get(position) or read[position], position)
        if index is not None:
            index.forget(gone)
    finally:
        if index is not None:
            index.close()
    return run


def _scanned_as(
    items: list[Item],
) -> dict[str | None, tuple[int | None, int | None, int | None]]:
    """The size, modification time and inode change time each file had when the scan listed it,
    by path, which a search compares with the file's now: one changed since is said (C-6)."""
    return {item.path: (item.size, item.mtime_ns, item.ctime_ns) for item in items
            if item.path is not None}  # fmt: skip


def _sessions_known(items: list[Item], known: dict[int, Stored], sessions: list[str]) -> list[int]:
    """The positions of the session files the index gave rows for whose paths match one of
    ``sessions`` (patterns from :func:`~turnfold.corpus.discover.session_of`)."""
    if not sessions:
        return []
    from fnmatch import fnmatchcase

    patterns = set(sessions)
    again = []
    for position, stored in known.items():
        path = items[position].path
        if stored.kind != "rows" or path is None:
            continue
        where = os.path.abspath(path)  # as the index names it, and as _absolute the patterns
        if any(fnmatchcase(where, pattern) for pattern in patterns):
            again.append(position)
    return again


def _absolute(pattern: str) -> str:
    """A session's pattern made from a path as this process named it (relative, when the scan's
    source was), as an absolute one: a worker, even on another machine, was handed that name."""
    if os.path.isabs(pattern):
        return pattern
    from glob import escape

    return os.path.join(escape(os.getcwd()), pattern)


def _examine_chunk(items: list[Item]) -> list[Summary]:
    return examine_many(items)


def _died_row(item: Item, error: str) -> Summary:
    """An item whose reading killed its worker process: a row with its error (C-7), which the
    index keeps as it keeps any (a rescan kills no worker again unless the file changed)."""
    return Summary("rows", [error_row(item, error)])


def _unsearched(item: Item, error: str) -> Any:
    """An item whose search killed its worker process: named in the search's warning."""
    from turnfold.corpus.search import Found as Searched  # ``Found`` here is discovery's

    return Searched([], unread=error)


def _spread(
    todo: list[Item], workers: int | None, client: Any,
    died: Callable[[Item, str], Summary] = _died_row,
) -> Iterator[tuple[int, Summary]]:  # fmt: skip
    """The summaries of ``todo``, each with its index in ``todo``, in the order they end; an
    item whose reading killed its worker, what ``died`` makes of it (C-7)."""
    parallel = worth_workers(todo)
    if client is not None:
        done = ordered_map(_examine_chunk, todo, workers=workers, client=client, parallel=parallel,
                           died=died)  # fmt: skip
        yield from enumerate(done)
    else:
        yield from spread(_examine_chunk, todo, workers=workers, parallel=parallel, died=died)


def _stored(summaries: list[Summary]) -> list[Stored]:
    """Files' summaries as the index keeps them, their rows as Arrow batches (made for all of
    them at once: :func:`~turnfold.corpus.tables.summaries_batches`).

    Made here, not in the worker: building an Arrow array imports pandas where it is installed
    (pyarrow looks for pandas objects), half a second that every worker of every scan would pay,
    while the scanning process pays it once."""
    from turnfold.corpus.index import Stored
    from turnfold.corpus.tables import summaries_batches

    batches = iter(summaries_batches([s for s in summaries if s.kind == "rows"]))
    return [
        Stored("rows", *next(batches), checkpoint=summary.checkpoint)
        if summary.kind == "rows" else Stored(summary.kind, session=summary.session)
        for summary in summaries
    ]  # fmt: skip


def _roots(source: Any) -> list[str]:
    """The folders a scan walked whole: entries of the index under them whose files are gone
    are forgotten (a deleted file leaves the corpus and the index)."""
    entries = [source] if isinstance(source, (str, os.PathLike)) else source
    if not isinstance(entries, Iterable):
        return []
    return [os.fspath(e) for e in entries if isinstance(e, (str, os.PathLike))
            and os.path.isdir(e)]  # fmt: skip


def _scan_tables(
    files: list[Any], format: str | None, messages: str | None, cache: bool,
    workers: int | None, client: Any, skipped: int = 0,
) -> Corpus:  # fmt: skip
    """A table file of trajectories (Parquet, Arrow), or the shards of one dataset, each row a
    run (:mod:`turnfold.formats.tables`): read by the workers as files, from the index where
    they did not change; their other columns read here, as the rows' metadata (C-1)."""
    import pyarrow as pa

    found, schemas = table_files(files, format, messages)
    found.skipped += skipped
    column = found.items[0].column if found.items else None
    paths = [item.path for item in found.items if item.path is not None]
    run = _read_files(files, found, cache, workers, client)
    # Shards may each hold other columns: a column a shard lacks is null in its rows.
    read = table_runs.read_columns(column, schemas[paths[0]].names) if column and paths else []
    parts = [table_runs.table_columns(path, [n for n in schemas[path].names if n not in read])
             for path in paths]  # fmt: skip
    extra = pa.concat_tables(parts, promote_options="default")
    rows = run.rows.table()
    if rows.num_rows != extra.num_rows:  # a file that could not be read is one row, not its own
        starts = itertools.accumulate((part.num_rows for part in parts), initial=0)
        at = {os.path.normpath(path): start for path, start in zip(paths, starts, strict=False)}
        where = zip(rows.column("path").to_pylist(), rows.column("sample").to_pylist(),
                    strict=True)  # fmt: skip
        places = [None if row is None else at[os.path.normpath(str(path))] + int(row)
                  for path, row in where]  # fmt: skip
        extra = extra.take(pa.array(places, pa.int64()))
    kept = extra if extra.num_columns else None
    scanned = _scanned_as(found.items)

    def opener(position: int, row: dict[str, Any]) -> Item:
        size, mtime_ns, ctime_ns = scanned.get(row["path"], (None, None, None))
        return Item(key=row["key"], path=row["path"], sample=row["sample"], format=row["format"],
                    column=column, size=size, mtime_ns=mtime_ns, ctime_ns=ctime_ns)  # fmt: skip

    return _corpus(run, opener, kept, workers, client)


def _scan_table(
    source: Any, format: str | None, messages: str | None, workers: int | None, client: Any
) -> Corpus:
    import pyarrow as pa

    table = table_runs.TableRuns(source, messages)
    extra, count = table.other_columns(), len(table)
    guessed = format is None
    if guessed and count:
        # One table, one format: detect it on the first trajectory instead of on every row
        # (detection is a third of the work of a short one); a row it does not fit is detected
        # on its own.
        format = table_runs.format_of_first(table.cell(0))
    chosen = format

    def items() -> Iterator[Item]:
        for row, value in enumerate(table.cells()):
            yield Item(key=f"#{row}", sample=str(row), format=chosen, messages=value,
                       format_guessed=guessed and chosen is not None)  # fmt: skip

    run = _Run()
    parallel = count >= 64
    results = ordered_map(_examine_chunk, items(), workers=workers, client=client,
                          parallel=parallel, died=_died_row)  # fmt: skip
    with _progress(count, "Scanning") as bar:
        for position, summary in enumerate(results):
            run.read += 1
            run.take(summary, position)
            bar.update(1)
            _report(bar, run)
    if extra.num_columns and len(run.positions) != extra.num_rows:
        extra = extra.take(pa.array(run.positions))
    kept = extra if extra.num_columns else None

    def opener(position: int, row: dict[str, Any]) -> Item:
        return Item(key=row["key"], sample=row["sample"], format=row["format"],
                    messages=table.cell(run.positions[position]))  # fmt: skip

    return _corpus(run, opener, kept, workers, client)
