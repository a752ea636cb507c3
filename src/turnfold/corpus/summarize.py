"""One item → one row of spec C-2, plus its tool-call and turn rows (C-3). Pure and picklable.

:func:`summarize` is the function every engine maps: the scan's worker processes, a Dask
cluster, or Ray Data / Spark in a user's own pipeline. It reads the item, builds its transcript,
projects it with :mod:`turnfold.process` (the code the widget's headers are drawn from, so the
counts here are the counts the widget shows) and keeps nothing: the transcript is dropped
before the row is returned.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import math
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from turnfold import progress
from turnfold.corpus import runs
from turnfold.corpus.discover import (
    CANDIDATE_SUFFIXES,
    DATABASE_SUFFIXES,
    LOOSE,
    SESSION_DATABASES,
    TEXT_SUFFIXES,
    Item,
    is_loose,
    is_session_bookkeeping,
    is_subagent_file,
    session_of,
)
from turnfold.cost import no_cost_said, spend_of
from turnfold.formats import (
    TranscriptFormatError,
    load,
    path_format,
    read_source,
    readable_format,
)
from turnfold.formats import _module as _format_module
from turnfold.formats import tables as table_runs  # ``tables``: whether to build them
from turnfold.formats.common import as_text
from turnfold.formats.databases import one_look
from turnfold.formats.frameworks import crewai
from turnfold.formats.harnesses import archive, inspect_log, openhands
from turnfold.formats.plain_names import is_plain_name
from turnfold.formats.source import Source, open_source, sibling_files
from turnfold.formats.traces import otlp
from turnfold.formats.wrappers import (
    CUSTOM_ID,
    UNKNOWN,
    OneFormat,
    RunChoice,
    runs_key,
    too_few_runs,
)
from turnfold.model import (
    AssistantError,
    Entry,
    SystemNotice,
    ToolCall,
    ToolUseSummary,
    Transcript,
    UserMessage,
)
from turnfold.nesting import warning_total
from turnfold.process import (
    Segment,
    TurnHeader,
    is_scoring_call,
    plan_projection,
    segment_header,
)
from turnfold.session import AGENT_NAMES, session_facts, utc
from turnfold.tools import safe_description, tool_category
from turnfold.usage import records_tokens_per_turn

if TYPE_CHECKING:
    import pyarrow as pa

#: The row of C-2, in its order, then ``no_cost``: why a row whose tokens are known has no
#: cost (:class:`~turnfold.cost.NoCost`, as its session header says it). It follows the
#: spec's columns rather than sitting beside ``cost_usd``, so each of those keeps its place.
COLUMNS: tuple[str, ...] = (
    "key", "path", "sample", "format", "agent", "title", "model", "started", "ended",
    "duration_s", "turns", "tool_calls", "failed_tools", "errors", "subagents", "input_tokens",
    "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd", "outcome", "score",
    "warnings", "error", "no_cost",
)  # fmt: skip
#: One row per tool call (C-3).
TOOL_CALL_COLUMNS: tuple[str, ...] = (
    "key", "turn", "call_id", "name", "category", "status", "started", "duration_ms",
    "description", "error",
)  # fmt: skip
#: One row per turn (C-3), then ``no_cost`` as the session row's, of the turn's tokens.
TURN_COLUMNS: tuple[str, ...] = (
    "key", "turn", "status", "started", "duration_s", "tool_calls", "input_tokens",
    "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd", "no_cost",
)  # fmt: skip
TOKEN_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
#: Columns holding UTC datetimes (the cache stores them as ISO text).
DATETIME_COLUMNS = frozenset({"started", "ended"})

TITLE_LIMIT = 120
#: The locale of the turn headers the counts are read from (counts do not depend on it).
LOCALE = "en"
ERROR_LINE_LIMIT = 200
#: What :func:`examine` can be asked to do with each transcript it reads, and that transcript's
#: row, before it drops the transcript (a static site writes its page: B-2).
Visit = Callable[[Transcript, dict[str, Any]], None]

#: What reading an item found: rows (one for a session; one per sample and epoch of an eval
#: log, none for a log of no sample is an error row), a file no loader recognises
#: (``skipped``), a sub-agent's file (``child``), a file that is part of another file's
#: session (``part``: a Gemini CLI resume's briefing stub), or a file of a session's that no
#: session reads (``loose``: :func:`~turnfold.corpus.discover.is_loose`), which the scan says.
Kind = Literal["rows", "skipped", "child", "part", "loose"]


#: Rows an eval log's summary holds as dicts before it packs them into Arrow record batches,
#: a tenth of their memory: a log of tens of thousands of samples is summarised in bounded
#: memory (issue 13: a 200 MB log scanned in 300 MB).
PACK_ROWS = 2000


@dataclass
class Summary:
    """What reading one item found: its rows (with their tables), or a file that is not one."""

    kind: Kind
    rows: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    packed: list[tuple[pa.RecordBatch, pa.RecordBatch, pa.RecordBatch]] = field(
        default_factory=list
    )
    """Earlier rows, tool-call rows and turn rows already packed as record batches
    (:meth:`pack`), in their order, before :attr:`rows`."""
    checkpoint: bytes | None = None
    """A file seen growing: where to read it on from next time (:func:`_examine_growing`)."""
    session: str | None = None
    """A sub-agent's (``child``) file: the pattern of its session file's path, when it can be
    told (:func:`~turnfold.corpus.discover.session_of`)."""
    leading: int = 0
    """A part of an eval output's: how many of the file's warnings (an unreadable line) came
    before its first instance, counted in that instance's row; the instance before it is
    theirs in the file read whole (:class:`~turnfold.formats.harnesses.openhands.Instances`)."""
    shares: dict[str, int] = field(default_factory=dict)
    """A part of an eval output's: each instance's share of the file's warnings, after its
    line, counted in its row (:func:`joined_instances` moves the share of an instance met
    again in an earlier part to the instance before it)."""
    unread: str | None = None
    """A skipped archive's: what of it was not looked at for a session (a large tar archive's
    members past the bounds of :func:`~turnfold.formats.harnesses.archive.find_member`)."""
    why_skipped: str | None = None
    """A skipped file's whose first records hold runs, too few for a file of runs: how many
    (:func:`~turnfold.formats.wrappers.too_few_runs`), which the scan says."""
    names: dict[int, str] = field(default_factory=dict)
    """A part of a file of runs': the names its records give their runs (a Batch API line's
    ``custom_id``), by place (from 0, in the part), which key those runs once the file's parts
    are joined (:func:`~turnfold.corpus.runs.joined`); till then, every run is keyed by its
    place."""

    @property
    def count(self) -> int:
        """How many rows it holds, packed or not."""
        return len(self.rows) + sum(part[0].num_rows for part in self.packed)

    def extend(self, other: Summary) -> None:
        self.rows += other.rows
        self.tool_calls += other.tool_calls
        self.turns += other.turns

    def pack(self) -> None:
        """Turn the rows held as dicts into record batches (pyarrow imported here)."""
        from turnfold.corpus.tables import file_batches

        self.packed.append(file_batches(self.rows, self.tool_calls, self.turns))
        self.rows, self.tool_calls, self.turns = [], [], []


def _one(row: dict[str, Any]) -> Summary:
    return Summary("rows", [row])


def summarize(item: Item) -> dict[str, Any]:
    """The C-2 row of ``item``: pure, picklable, never raises for bad input (C-7).

    A file no loader recognises, a sub-agent's own file or a Gemini resume's stub still gets a
    row here, with ``error`` saying so; :func:`turnfold.scan` leaves such files out of the
    corpus instead. An eval log of several samples is several items: name one by its
    ``sample`` (``"id/epoch"``; :func:`log_items` lists them), or the row's ``error`` says so;
    so is an OpenHands eval output of several instances (``sample`` is an ``instance_id``).

    >>> from turnfold.corpus.discover import Item
    >>> row = summarize(Item(key="t", messages=[{"role": "user", "content": "hi"},
    ...                                         {"role": "assistant", "content": "hello"}]))
    >>> row["format"], row["title"], row["turns"], row["error"]
    ('openai', 'hi', 1, None)
    """
    if _is_eval_log(item) and item.sample is None:
        try:
            listed = log_items(item)
        except Exception as exc:
            return error_row(item, _reason(exc), inspect_log.NAME)
        if not listed:
            return error_row(item, "the log holds no samples", inspect_log.NAME)
        if len(listed) > 1:
            names = ", ".join(repr(i.sample) for i in listed[:5])
            more = ", …" if len(listed) > 5 else ""
            why = f"an eval log of {len(listed)} samples: name one as Item(sample=…): {names}{more}"
            return error_row(item, why, inspect_log.NAME)
        item = listed[0]
    found = examine(item, tables=False)
    if len(found.rows) > 1:  # an eval output of several instances, or a dataset's rows
        names = ", ".join(repr(row["sample"]) for row in found.rows[:5])
        more = ", …" if len(found.rows) > 5 else ""
        format = found.rows[0]["format"]
        count = len(found.rows)
        many = f"a file of {count} runs"
        if format == openhands.NAME:  # an archive's sessions, or an eval output's instances
            many = (f"an archive of {count} OpenHands sessions" if _is_archive(item)
                    else f"an eval output of {count} instances")  # fmt: skip
        why = f"{many}: name one as Item(sample=…): {names}{more}"
        return error_row(item, why, format)
    if found.rows:
        return found.rows[0]
    why = {
        "child": "a sub-agent's file: it belongs to its parent session",
        "part": "a Gemini CLI resume's briefing stub: it belongs to the session of its sessionId",
        "loose": LOOSE,
    }.get(found.kind, "no loader recognises this file")
    return error_row(item, why)


def log_items(item: Item) -> list[Item]:
    """The items of the eval log ``item`` names, one per sample and epoch, keyed
    ``<key>#<id>/<epoch>`` (C-1), in the log's order; the log's directory is read, no sample."""
    assert item.path is not None
    return [_sample_item(item, sample, epoch) for sample, epoch in inspect_log.samples(item.path)]


def _sample_item(item: Item, sample: Any, epoch: int) -> Item:
    name = f"{sample}/{epoch}"
    return Item(key=f"{item.key}#{name}", path=item.path, sample=name, format=inspect_log.NAME,
                size=item.size, mtime_ns=item.mtime_ns)  # fmt: skip


def sample_of(sample: str) -> tuple[str, int]:
    """The ``(id, epoch)`` a row's ``sample`` (``"id/epoch"``) names; an id may hold ``/``."""
    name, _, epoch = sample.rpartition("/")
    return name, int(epoch)


def _is_eval_log(item: Item) -> bool:
    """Whether ``item`` is an eval log file, which holds one item per sample and epoch (H-1).

    Told from the file's first bytes or its zip directory, before it is read as JSON lines."""
    if item.path is None or item.format not in (None, inspect_log.NAME):
        return False
    if item.format == inspect_log.NAME:
        return True
    try:
        return inspect_log.detect_path(Path(item.path)) is not None
    except OSError:
        return False


def _is_other_text(item: Item) -> bool:
    """Whether ``item`` is a text file (:data:`TEXT_SUFFIXES`) that is no crew's text log:
    told from its first bytes alone, so another program's file, however large, is not read."""
    if item.path is None or item.format not in (None, crewai.NAME) or item.sample is not None:
        return False
    return item.path.endswith(TEXT_SUFFIXES) and crewai.detect_path(Path(item.path)) is None


def _path_format(path: str) -> str | None:
    try:
        return path_format(Path(path))
    except OSError:  # unreadable: opening it as JSON lines says why (C-7)
        return None


def examine(item: Item, *, tables: bool = True, visit: Visit | None = None) -> Summary:
    """Read ``item`` and summarise it; the tool-call and turn rows too when ``tables``.

    An eval log file (no ``sample`` named) gives one row per sample and epoch, the log opened
    once (:func:`_examine_log`); an OpenHands eval output one per instance
    (:func:`_examine_instances`). ``visit`` is called with each transcript read and its row
    (a row may still change its key afterwards: a file of one instance is keyed by its path).
    """
    with progress.muted():  # the scan's bar counts the item: no bar of its file's own
        return _examine(item, tables, visit)


def _examine(item: Item, tables: bool, visit: Visit | None) -> Summary:
    if item.column is not None:
        return _examine_table_file(item, tables, visit)
    if isinstance(item.part, inspect_log.Samples):
        return _examine_log(item, tables, visit)
    if is_instances_part(item):
        try:
            found = _examine_instances(item, tables, visit)
        except Exception as exc:  # a scan never aborts on one item (C-7)
            return _one(error_row(item, _reason(exc), openhands.NAME))
        reason = "a part of an eval output holds a line that is no instance"
        return found or _one(error_row(item, reason, openhands.NAME))
    if item.part is not None:
        return _examine_runs(item, tables, visit)
    if _is_other_text(item):
        return Summary("skipped")  # another program's text file, told by its first bytes
    if _is_eval_log(item) and item.sample is None:
        return _examine_log(item, tables, visit)
    if _is_archive(item):
        return _examine_archive(item, tables, visit)
    if item.sample is None and (database := _session_database(item)) is not None:
        return _examine_sessions(item, database, tables, visit)
    if item.format is None and item.path is not None and item.path.endswith(DATABASE_SUFFIXES):
        return Summary("skipped")  # a database of no agent's sessions: no JSON to read either
    # A crew's text log is read whole: it is no JSON, which reading on from a line needs.
    text = item.path is not None and item.path.endswith(TEXT_SUFFIXES)
    if item.grew and item.path is not None and item.sample is None and not text:
        growing = _examine_growing(item, tables, visit)
        if growing is not None:
            return growing
    format = item.format
    if item.path is not None and is_session_bookkeeping(Path(item.path), format):
        session = session_of(Path(item.path), format, [])
        if session is None and is_loose(Path(item.path)):
            return Summary("loose")
        return Summary("child", session=session)
    try:
        transcript: Transcript | None = None
        if item.path is not None and format is None:
            # The file is opened once: the records its format was told from are read on (a
            # sample of it is picked by load_item).
            source, stream = open_source(item.path)
            try:
                try:
                    format = _detect(source)
                except (_NotASession, TranscriptFormatError) as exc:
                    # A file a format reads itself (aider's Markdown history), which no format
                    # tells from JSON records: as load(path) reads it. Asked only here, so a
                    # session file is not opened once more for it.
                    format = _path_format(item.path) if item.sample is None else None
                    if format is None:
                        skipped = isinstance(exc, _NotASession) and exc.kind == "skipped"
                        if not skipped:
                            raise
                        if runs_key(source) is None:  # said, when some records hold runs
                            return Summary("skipped", why_skipped=too_few_runs(source))
                        return _examine_runs(item, tables, visit)  # a dataset's rows, one each
                if format == openhands.NAME and not source.is_document and item.sample is None:
                    found = _examine_instances(item, tables, visit)
                    if found is not None:
                        return found
                if item.sample is None and hasattr(_format_module(format), "read_each"):
                    return _examine_conversations(source, item, format, tables, visit)
                if item.sample is None:
                    transcript = read_source(source, format)
            finally:
                if stream is not None:
                    stream.close()
        if transcript is None:
            transcript = load_item(item, format)
        if format is None or item.format_guessed:  # a row the table's format did not fit
            format = as_text(transcript.metadata.get("source_format")) or format
        if format == "gemini" and item.path is not None and _is_resume_stub(item.path, transcript):
            return Summary("part")
    except _NotASession as exc:
        return Summary(exc.kind, session=exc.session)
    except Exception as exc:  # a scan never aborts on one item (C-7)
        return _one(error_row(item, _reason(exc), format))
    return _summarized(transcript, item, format, tables, visit)


def _examine_growing(item: Item, tables: bool, visit: Visit | None) -> Summary | None:
    """A file seen growing, read on from its checkpoint (C-4), with its checkpoint now; None
    when its format is read whole (as any changed file is)."""
    from turnfold.formats.resume import Checkpoint, read_growing, resumable

    assert item.path is not None
    checkpoint: Checkpoint | None = None
    if item.checkpoint is not None:
        with contextlib.suppress(Exception):  # one of another make or a broken blob: unused
            checkpoint = pickle.loads(item.checkpoint)
        if not isinstance(checkpoint, Checkpoint):  # a file of runs' mark (runs.Mark)
            checkpoint = None
    format = item.format or (checkpoint.format if checkpoint is not None else None)
    try:
        if format is None:
            source, stream = open_source(item.path)
            try:
                format = _detect(source)
            finally:
                if stream is not None:
                    stream.close()
        if not resumable(format):
            return None
        transcript, kept = read_growing(Path(item.path), format, checkpoint)
    except _NotASession as exc:
        if exc.kind == "skipped":
            return None  # no session: maybe a dataset's rows, which examine() reads whole
        return Summary(exc.kind, session=exc.session)
    except Exception as exc:  # a scan never aborts on one item (C-7)
        return _one(error_row(item, _reason(exc), format))
    found = _summarized(transcript, item, format, tables, visit)
    found.checkpoint = pickle.dumps(kept, pickle.HIGHEST_PROTOCOL) if kept is not None else None
    return found


def _summarized(
    transcript: Transcript, item: Item, format: str | None, tables: bool, visit: Visit | None
) -> Summary:
    try:
        found = _summary(transcript, item, format, tables)
    except Exception as exc:  # a loader's transcript the projection cannot take is still a row
        return _one(error_row(item, _reason(exc), format))
    if visit is not None:
        visit(transcript, found.rows[0])
    return found


def log_transcripts(item: Item) -> Iterator[tuple[Item, Transcript | Exception]]:
    """Every sample of the eval log ``item`` names, as its item (keyed ``path#id/epoch``) and
    its transcript, or the exception that says why it cannot be read.

    The log is opened once and read one sample at a time (``inspect_log.transcripts``); after a
    sample that cannot be read, the rest are loaded one by one, so one bad sample costs no other
    its transcript (C-7). Raises when the log itself cannot be read (not a zip, truncated)."""
    assert item.path is not None
    part = item.part if isinstance(item.part, inspect_log.Samples) else None
    done = 0
    try:
        for (sample, epoch), transcript in inspect_log.transcripts(item.path, part=part):
            yield _sample_item(item, sample, epoch), transcript
            done += 1
        return
    except Exception as exc:
        failure = exc
    try:
        every = log_items(item)
        rest = (every if part is None else every[part.start : part.end])[done:]
    except Exception:
        raise failure from None
    if rest:
        yield rest[0], failure
    for each in rest[1:]:
        try:
            yield each, load_item(each, inspect_log.NAME)
        except Exception as exc:
            yield each, exc


def _each_a_row(
    found: Summary,
    runs: Iterable[tuple[Item, Transcript | Exception]],
    format: str,
    tables: bool,
    visit: Visit | None,
) -> None:
    """Each of a file's runs (an eval log's samples, an archive's sessions) a row of ``found``,
    one that could not be read a row with its ``error``; packed as they pile up."""
    for each, transcript in runs:
        if isinstance(transcript, Exception):
            found.extend(_one(error_row(each, _reason(transcript), format)))
        else:
            found.extend(_summarized(transcript, each, format, tables, visit))
        if len(found.rows) >= PACK_ROWS:
            found.pack()


def _examine_log(item: Item, tables: bool, visit: Visit | None) -> Summary:
    """Every sample of an eval log (of its part ``item.part``), each a row keyed
    ``path#id/epoch`` (C-1, H-1); one that cannot be read is a row with its ``error``, a log
    that cannot be read one error row."""
    found = Summary("rows")
    try:
        _each_a_row(found, log_transcripts(item), inspect_log.NAME, tables, visit)
    except Exception as exc:
        if not found.count:
            return _one(error_row(item, _reason(exc), inspect_log.NAME))
    if not found.count:
        return _one(error_row(item, "the log holds no samples", inspect_log.NAME))
    return found


def _session_database(item: Item) -> Any:
    """The module of the database of sessions ``item`` is (one of ``SESSION_DATABASES``: an
    agent's, MLflow's, a framework's store), which holds one item per session; None when it is
    none."""
    if item.path is None or (item.format is None and not item.path.endswith(DATABASE_SUFFIXES)):
        return None
    path = Path(item.path)
    with one_look(path):  # each reader asks of its tables: the file is opened once
        for database in SESSION_DATABASES:
            if item.format in (None, database.NAME) and database.detect_path(path):
                return database
    return None


def _examine_sessions(item: Item, database: Any, tables: bool, visit: Visit | None) -> Summary:
    """Every top-level session of an agent's database, each a row keyed ``path#<session id>``
    (as an eval log's samples are; sub-agents' sessions nest in their parents' rows); a session
    that cannot be read is a row with its ``error``, a database that cannot be read one."""
    assert item.path is not None
    name = database.NAME
    found = Summary("rows")
    try:
        ids = [session for session, _ in database.sessions(Path(item.path))]
    except Exception as exc:
        return _one(error_row(item, _reason(exc), name))
    for session in ids:
        each = Item(key=f"{item.key}#{session}", path=item.path, sample=session,
                    format=name, size=item.size, mtime_ns=item.mtime_ns)  # fmt: skip
        try:
            transcript = load(item.path, format=name, sample=session)
        except Exception as exc:  # one session's failure costs no other its row (C-7)
            found.extend(_one(error_row(each, _reason(exc), name)))
            continue
        found.extend(_summarized(transcript, each, name, tables, visit))
        if len(found.rows) >= PACK_ROWS:
            found.pack()
    if not found.count:
        return _one(error_row(item, "the database holds no session", name))
    return found


def is_archive(path: str) -> bool:
    """Whether the file at ``path`` is a tar archive (compressed or not) or a zip, which may
    hold OpenHands sessions (:class:`~turnfold.formats.harnesses.openhands.Archived`). A file
    named as JSON (or an ``.eval`` log) is not opened to ask: every session file would be."""
    if path.endswith(CANDIDATE_SUFFIXES):
        return False
    where = Path(path)
    return archive.is_zip(where) or archive.is_tar(where)


def _is_archive(item: Item) -> bool:
    """Whether ``item`` is an archive's (a session of it, with ``sample``), read as OpenHands
    sessions; an eval log that is a zip is not."""
    return (
        item.path is not None
        and item.part is None
        and item.column is None
        and item.format in (None, openhands.NAME)
        and is_archive(item.path)
        and not _is_eval_log(item)
    )


def archive_transcripts(item: Item) -> Iterator[tuple[Item, Transcript | Exception]]:
    """Every OpenHands session of the archive ``item`` names (the one its ``sample`` names,
    when it names one), as its item and its transcript (as ``load(path, sample=NAME)`` reads
    it), or the exception that says why it cannot be read; the archive is read once. Its
    sessions are keyed ``path#<session>`` (their folders' names, which ``sample=`` takes), as
    an eval log's samples are; an archive of one session is one item keyed by its path, as
    ``load(path)`` reads it.

    Raises :class:`_NotASession` for an archive that names no session's member (a tarball of
    source code: told from its members' names, as ``load()`` tells it, never read whole), and
    why the archive cannot be read (past its limits, no session in it)."""
    assert item.path is not None
    path = Path(item.path)
    peek = openhands.holds_sessions(path)
    if peek is None or not peek.found:
        raise _NotASession("skipped", unread=peek.unread if peek is not None else None)
    sessions = openhands.Archived(path)
    names = [item.sample] if item.sample is not None else sessions.names
    named = item.sample is not None or len(names) > 1
    for name in names:
        key = f"{item.key}#{name}" if named and item.sample is None else item.key
        each = Item(key=key, path=item.path, sample=name if named else None,
                    format=openhands.NAME, size=item.size, mtime_ns=item.mtime_ns)  # fmt: skip
        try:
            transcript: Transcript | Exception = sessions.transcript(each.sample)
        except Exception as exc:  # one session's failure costs no other its row (C-7)
            transcript = exc
        yield each, transcript


def _examine_archive(item: Item, tables: bool, visit: Visit | None) -> Summary:
    """Every OpenHands session of an archive (:func:`archive_transcripts`), each a row; one
    that cannot be read is a row with its ``error``, an archive that cannot be read one error
    row, an archive of no session skipped."""
    found = Summary("rows")
    try:
        _each_a_row(found, archive_transcripts(item), openhands.NAME, tables, visit)
    except _NotASession as exc:
        return Summary(exc.kind, unread=exc.unread)
    except Exception as exc:  # a scan never aborts on one item (C-7)
        return _one(error_row(item, _reason(exc), openhands.NAME))
    return found


def _examine_instances(item: Item, tables: bool, visit: Visit | None) -> Summary | None:
    """Every instance of an OpenHands eval ``output.jsonl``, each a row keyed
    ``path#instance_id`` (as an eval log's samples are), the file read once; a file of one
    instance stays one row keyed by its path. None when the file is no such output (an event
    list): it is then read as one transcript."""
    assert item.path is not None
    stream: IO[bytes] | None
    if isinstance(item.part, runs.Span):
        source, stream = runs.part_source(item.path, item.part)
    else:
        source, stream = open_source(item.path)
    found = Summary("rows")
    reading = openhands.Instances(source)
    try:
        for instance_id, transcript in reading:
            each = Item(key=f"{item.key}#{instance_id}", path=item.path, sample=instance_id,
                        format=openhands.NAME, size=item.size, mtime_ns=item.mtime_ns)  # fmt: skip
            found.extend(_summarized(transcript, each, openhands.NAME, tables, visit))
    except openhands.NotAnEvalOutput:
        return None
    except Exception as exc:  # the file broke off: the instances read so far stay rows (C-7)
        if not found.rows:
            raise
        found.extend(_one(error_row(item, _reason(exc), openhands.NAME)))
    finally:
        if stream is not None:
            stream.close()
    if not found.rows and item.part is None:  # a part of blank lines holds no instance
        return None
    if item.part is not None:  # each instance was told its share of the file's warnings
        found.leading, found.shares = reading.leading, reading.shares
    if len(found.rows) == 1 and item.part is None:  # a part's rows are joined with the others'
        _one_instance(found, item.key)
    return found


def _examine_conversations(
    source: Source, item: Item, format: str, tables: bool, visit: Visit | None
) -> Summary:
    """Every conversation of a file of several (an OTLP file's, a LlamaIndex chat store's: a
    format with ``read_each``), each a row keyed ``path#<conversation id>`` (as an eval log's
    samples are), the file read once; a file of one conversation is one row keyed by its path,
    as ``load(path)`` reads it."""
    found = Summary("rows")
    for conversation, transcript in _format_module(format).read_each(source):
        key = item.key if conversation is None else f"{item.key}#{conversation}"
        each = Item(key=key, path=item.path, sample=conversation, format=format,
                    size=item.size, mtime_ns=item.mtime_ns)  # fmt: skip
        found.extend(_summarized(transcript, each, format, tables, visit))
        if len(found.rows) >= PACK_ROWS:
            found.pack()
    return found


def _examine_runs(item: Item, tables: bool, visit: Visit | None) -> Summary:
    """Every record of a file of runs (:mod:`turnfold.corpus.runs`), or of its part
    ``item.part``, each a row keyed ``path#n`` (its place) read as ``load(record)`` reads it,
    then, the file read, as :func:`~turnfold.formats.wrappers.run_samples` keys it (a run its
    record names, a Batch API line's ``custom_id``, by that name); the one ``item.sample``
    names when it names one. A record that cannot be read is a row with its ``error`` (C-7).
    A part's summary holds its mark and its runs' names, for the scan to join the parts; a
    file seen growing, its own mark, to be read on from next time (C-4)."""
    assert item.path is not None
    found = Summary("rows")
    assert item.part is None or isinstance(item.part, runs.Span)
    reading = runs.Runs(item.path, item.part, guessed_format(item))
    if item.sample is not None:
        chosen = _chosen_run(reading, item.sample)
        if chosen is not None:
            _run_row(found, item, item.key, chosen, tables, visit)
    else:
        for place, name, _, result in reading:
            if name is not None:
                found.names[place] = name
            _run_row(found, replace(item, sample=str(place)), f"{item.key}#{place}", result,
                     tables, visit)  # fmt: skip
            if len(found.rows) >= PACK_ROWS and visit is None:  # a site names pages by rows
                found.pack()
        if found.names and item.part is None:  # a part's are the joined file's to key
            runs.keyed_by_name(found, item.key, found.count, found.names)
    if not found.count and item.part is None:
        return _one(error_row(item, f"no record #{item.sample}" if item.sample else "no runs"))
    if reading.mark is not None and (item.part is not None or item.grew):
        found.checkpoint = pickle.dumps(reading.mark, pickle.HIGHEST_PROTOCOL)
    return found


def _chosen_run(reading: runs.Runs, sample: str) -> Any:
    """The run ``sample`` names of a file of runs (its transcript, or why it cannot be read),
    as ``load(path, sample=...)`` picks it (:class:`~turnfold.formats.wrappers.RunChoice`);
    None for no such run."""
    choice, held = RunChoice(sample), None
    for place, name, _, result in reading:
        met = choice.meet(place, name)
        if met is not None:
            held = result
        if met == RunChoice.NAMED:
            break  # the rest of the file is not read
    return held


def _run_row(
    found: Summary, item: Item, key: str, result: Any, tables: bool, visit: Visit | None
) -> None:
    """The row of a run of a file of runs (``item.sample`` its place), keyed ``key``: its
    transcript's, or the error its read raised (C-7)."""
    each = Item(key=key, path=item.path, sample=item.sample, size=item.size,
                mtime_ns=item.mtime_ns)  # fmt: skip
    if isinstance(result, Transcript):
        format = as_text(result.metadata.get("source_format"))
        found.extend(_summarized(result, replace(each, format=format), format, tables, visit))
    else:
        found.extend(_one(error_row(each, _reason(result))))


def _examine_table_file(item: Item, tables: bool, visit: Visit | None) -> Summary:
    """Every row of a Parquet file of trajectories (:mod:`turnfold.formats.tables`), or of its
    part ``item.part``, each a row keyed ``path#n`` (its row in the file) read as
    ``load(messages)`` reads its messages. A row that cannot be read is a row with its
    ``error`` (C-7); so is a file that is no Parquet or lacks the column, and one that breaks
    off (changed since the scan began), after the rows read before."""
    assert item.path is not None
    assert item.column is not None
    assert item.part is None or isinstance(item.part, table_runs.Rows)
    found = Summary("rows")
    named = None if item.format_guessed else item.format  # the user's, not a part's guess
    read = OneFormat(table_runs.read_messages, named, guessed_format(item))
    first = item.part.start if item.part is not None else 0  # rows are keyed as the file's
    try:
        for place, cell in enumerate(table_runs.cells(item.path, item.column, item.part), first):
            each = Item(key=f"{item.key}#{place}", path=item.path, sample=str(place),
                        size=item.size, mtime_ns=item.mtime_ns)  # fmt: skip
            try:
                transcript = read(cell)
            except Exception as exc:
                exc = table_runs.row_error(exc, item.path, place)
                found.extend(_one(error_row(each, _reason(exc), named)))
            else:
                format = as_text(transcript.metadata.get("source_format"))
                found.extend(_summarized(transcript, replace(each, format=format), format,
                                         tables, visit))  # fmt: skip
            if len(found.rows) >= PACK_ROWS:
                found.pack()
    except Exception as exc:  # the file itself (changed since the scan began, say)
        found.extend(_one(error_row(item, _reason(exc), named)))
    return found


def guessed_format(item: Item) -> str | None:
    """The dataset's format a part of a file was given (its file's first run's, which its
    runs are read in first: :class:`~turnfold.formats.wrappers.OneFormat`), else
    :data:`~turnfold.formats.wrappers.UNKNOWN`."""
    return item.format if item.format_guessed else UNKNOWN


def file_parts(
    item: Item, share: int, mark: runs.Mark | None = None, numbered: bool = True
) -> list[Item] | None:
    """``item`` as the parts ``share`` workers read at once, when it is a large file of many
    runs: a Parquet file of trajectories, an ``.eval`` log, a file of runs in JSON lines or an
    eval output (read on from ``mark`` when given: its new lines, as one part or more); None
    for any other. ``numbered``: whether a file may be cut whose parts number their rows from
    0 (the last two: a part cannot know what the lines before it hold)."""
    if item.column is not None:
        return table_file_parts(item, share)
    if mark is None and _is_eval_log(item):
        return eval_log_parts(item, share)
    return runs_parts(item, mark) if numbered else None


def is_instances_part(item: Item) -> bool:
    """Whether ``item`` is a part of an OpenHands eval output (:func:`runs_parts`), whose rows
    are keyed by their instances' ids."""
    return item.part is not None and item.format == openhands.NAME and not item.format_guessed


def eval_log_parts(item: Item, share: int) -> list[Item] | None:
    """A large ``.eval`` log as parts of its samples (each part's members read by its worker
    alone); None for a ``.json`` log (streamed whole to reach any sample) or a small one."""
    if item.path is None or item.size is None or item.sample is not None:
        return None
    if item.size < runs.SPLIT_BYTES or not archive.is_zip(Path(item.path)):
        return None
    try:
        count = len(inspect_log.samples(item.path))
    except Exception:  # its worker says what is wrong with it
        return None
    pieces = min(count, max(share, item.size // runs.SPAN_BYTES))
    if pieces < 2:
        return None
    cuts = [count * k // pieces for k in range(pieces + 1)]
    return [replace(item, part=inspect_log.Samples(a, b), size=item.size * (b - a) // count)
            for a, b in itertools.pairwise(cuts)]  # fmt: skip


def table_file_parts(item: Item, share: int) -> list[Item] | None:
    """A Parquet file of trajectories as the parts ``share`` workers read at once
    (:func:`~turnfold.formats.tables.parts`); None when it is one part."""
    if item.path is None or item.column is None or item.sample is not None:
        return None
    try:
        rows = table_runs.parts(item.path, item.column, share)
    except ValueError:
        return None  # its worker says what is wrong with it
    if rows is None:
        return None
    format, guessed = item.format, False
    if format is None:  # each part is given the dataset's format: the file's first row's
        format, guessed = table_runs.first_format(item.path, item.column), True
    return [replace(item, part=part, size=weight, format=format, format_guessed=guessed)
            for part, weight in rows]  # fmt: skip


def runs_parts(item: Item, mark: runs.Mark | None = None) -> list[Item] | None:
    """``item`` as the parts a scan's workers read at once, when it is a large file of many
    runs in JSON lines, cut at its lines' ends (:func:`~turnfold.corpus.runs.spans`): a file
    of runs, or an OpenHands eval output (its parts read as that format); None for any other
    item. From ``mark`` on (a file of runs that grew, C-4): its new lines, as one part or more."""
    if item.path is None or item.size is None or item.sample is not None:
        return None
    kind: str | None = FILE_OF_RUNS
    if mark is None:
        if item.size < runs.SPLIT_BYTES or item.format is not None:
            return None
        kind = _many_runs(item.path)
        if kind is None:
            return None
    try:
        spans = runs.spans(item.path, item.size, mark)
    except OSError:
        return None
    if spans is None or (mark is None and len(spans) < 2) or not spans:
        return None
    format: str | None = openhands.NAME
    guessed = kind != openhands.NAME
    if guessed:  # each part is given the dataset's format: the file's first run's
        format = mark.guess if mark is not None else runs.first_format(item.path)
    return [replace(item, part=span, size=span.end - span.start, checkpoint=None, format=format,
                    format_guessed=guessed) for span in spans]  # fmt: skip


#: What :func:`_many_runs` calls a file of runs (:mod:`turnfold.corpus.runs`).
FILE_OF_RUNS = "runs"


def _many_runs(path: str) -> str | None:
    """What the file at ``path`` is, when each of its records is a run: a file of runs (no
    session format reads it, and its records hold runs: :func:`~turnfold.formats.wrappers.
    runs_key`), or an OpenHands eval output in JSON lines (one instance a line)."""
    if is_archive(path):  # its sessions are read by one worker, the archive read once
        return None
    try:
        source, stream = open_source(path)
    except Exception:  # its worker says what is wrong with it
        return None
    try:
        if source.is_document:
            return None
        format = _detect(source)
        return openhands.NAME if format == openhands.NAME else None
    except _NotASession as exc:
        key = runs_key(source) if exc.kind == "skipped" else None
        # Named runs (a Batch API file's, keyed by their custom_id) are read whole; a
        # dataset's rows with a few named among them are cut, and keyed by their names once
        # the parts are joined (runs.joined), as the rule needs every name of the file.
        return FILE_OF_RUNS if key is not None and key != CUSTOM_ID else None
    except Exception:
        return None
    finally:
        if stream is not None:
            stream.close()


def joined_instances(parts: list[Summary], key: str) -> Summary:
    """The summary of an OpenHands eval output from those of its parts, in order: an instance
    met again in a later part is no row (the first is: ``load(path, sample=ID)`` reads it),
    and each instance's row counts its share of the file's warnings, as the file read whole
    tells it (:class:`~turnfold.formats.harnesses.openhands.Instances`): the warnings before a
    part's first instance are the instance's before it, and so are an instance met again (its
    share, and the warning that it is met again)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from turnfold.corpus.tables import summary_batches

    batches = [summary_batches(part) for part in parts]
    seen: set[str] = set()
    kept: list[tuple[pa.RecordBatch, pa.RecordBatch, pa.RecordBatch]] = []
    added: list[list[int]] = []  # for each part, what each of its rows kept counts more
    last: tuple[int, int] | None = None  # the part and row of the instance read last
    ahead = 0  # warnings before any instance: the first instance's

    def tell(count: int) -> None:
        nonlocal ahead
        if last is None:
            ahead += count
        else:
            added[last[0]][last[1]] += count

    for index, (part, (rows, tool_calls, turns)) in enumerate(zip(parts, batches, strict=True)):
        keys = [str(k) for k in rows.column("key").to_pylist()]
        samples = rows.column("sample").to_pylist()
        readable = [error is None for error in rows.column("error").to_pylist()]
        fresh = [k not in seen for k in keys]
        seen.update(keys)
        added.append([0] * fresh.count(True))
        if not keys:
            tell(part.leading)
        at = -1  # the row kept last, among this part's
        for place, (new, read, sample) in enumerate(zip(fresh, readable, samples, strict=True)):
            leading = part.leading if place == 0 else 0  # counted in the part's first row
            if not new:
                if read:  # no row: what it was told, and that it is met again, is told on
                    tell(leading + part.shares.get(str(sample), 0) + 1)
                continue
            at += 1
            if not read:  # an error row counts no warnings
                continue
            if leading and last is not None:
                added[index][at] -= leading
                tell(leading)
            last = (index, at)
            if ahead:
                added[index][at] += ahead
                ahead = 0
        if not all(fresh):
            mask = pa.array(fresh)
            dropped = pa.array([k for k, f in zip(keys, fresh, strict=True) if not f], pa.string())
            rows = rows.filter(mask)
            tool_calls = tool_calls.filter(pc.invert(pc.is_in(tool_calls.column("key"), dropped)))
            turns = turns.filter(pc.invert(pc.is_in(turns.column("key"), dropped)))
        kept.append((rows, tool_calls, turns))
    whole = Summary("rows")
    for (rows, tool_calls, turns), more in zip(kept, added, strict=True):
        if any(more):
            at = rows.schema.get_field_index("warnings")
            counts = pc.add(rows.column(at), pa.array(more, rows.schema.field(at).type))
            rows = rows.set_column(at, "warnings", counts)
        whole.packed.append((rows, tool_calls, turns))
    if whole.count == 1:  # a file of one instance is one row keyed by its path
        rows, tool_calls, turns = summary_batches(whole)
        whole = Summary("rows", rows.to_pylist(), tool_calls.to_pylist(), turns.to_pylist())
        _one_instance(whole, key)
    return whole


def _one_instance(found: Summary, key: str) -> None:
    """A file of one instance is one row keyed by its path, as an event list is."""
    found.rows[0].update(key=key, sample=None)
    for row in (*found.tool_calls, *found.turns):
        row["key"] = key


def _is_resume_stub(path: str, transcript: Transcript) -> bool:
    """Whether a Gemini CLI session file is a resume's stub, part of another file's session.

    Gemini CLI names a session file by the minute it starts (``session-<time>-<id8>.jsonl``);
    a resume in a later minute first writes a file of its own holding only the header and the
    ``<session_context>`` briefing, then goes on in the session's file (found with the real CLI
    0.61; ``tests/agents/truth.py``). Such a file is no session: it holds only notices, and
    another file of the same folder carries its ``sessionId``. A file of notices alone with no
    such sibling is the only record of its session and stays a row.
    """
    if not all(isinstance(entry, SystemNotice) for entry in transcript.entries):
        return False
    session = transcript.metadata.get("session_id")
    if not isinstance(session, str) or len(session) < 8 or not is_plain_name(session[:8]):
        # Gemini CLI's ids are UUIDs: one whose head is no plain name (``../../x``) is a
        # hostile file's, and must not make the pattern below look in another folder. Not
        # looked for, the file stays a row of its own: nothing of it is hidden.
        return False
    here = Path(path)
    short = glob.escape(session[:8])
    for suffix in (".jsonl", ".json"):
        # Regular files only: a named pipe so named would hold the scan for ever.
        try:
            siblings = sibling_files(here.parent, f"session-*-{short}{suffix}")
        except OSError:
            # Its folder cannot be listed (only the file itself was found): no sibling is
            # looked for, and the file stays a row of its own, nothing of it hidden.
            return False
        for sibling in siblings:
            if sibling != here and _header_session_id(sibling) == session:
                return True
    return False


#: Bytes of a Gemini session file read for its ``sessionId`` (the header's first key).
_HEADER_BYTES = 4096
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]+)"')


def _header_session_id(path: Path) -> str | None:
    try:
        with path.open("rb") as stream:
            head = stream.read(_HEADER_BYTES)
    except OSError:
        return None
    match = _SESSION_ID.search(head)
    return match.group(1).decode("utf-8", "replace") if match else None


def examine_many(items: list[Item], tables: bool = True) -> list[Summary]:
    """:func:`examine` of a chunk of items: one round trip to a worker for many small ones."""
    return [examine(item, tables=tables) for item in items]


class _NotASession(Exception):
    def __init__(self, kind: Kind, session: str | None = None, unread: str | None = None) -> None:
        super().__init__(kind)
        self.kind: Kind = kind
        self.session = session  # a sub-agent's file: its session's (Summary.session)
        self.unread = unread  # a skipped archive's (Summary.unread)


def _reason(exc: BaseException) -> str:
    """A row's ``error``: what ``corpus[key]`` and ``load(path)`` raise, word for word (C-7),
    a path's spaces and line breaks kept (a browser's cell shows it on one line)."""
    text = str(exc) or type(exc).__name__
    return (
        text
        if isinstance(exc, (TranscriptFormatError, OSError))
        else (f"{type(exc).__name__}: {text}")
    )


def _detect(source: Source) -> str:
    """The format of an opened session file, from its first records only (``Source.head``), so
    a file no loader knows costs a few lines, not a parse of the whole file.

    A file that cannot be read at all (empty, no JSON, two formats alike) raises the error
    ``load(path)`` raises for it (:func:`~turnfold.formats.readable_format`): its row's
    ``error`` is what ``corpus[key]`` says, word for word, not a shorter text of its own."""
    format = readable_format(source)
    if format is None:
        raise _NotASession("skipped")
    assert source.path is not None
    head = source.head_values()
    if is_subagent_file(source.path, format, head):
        raise _NotASession("child", session_of(source.path, format, head))
    return format


def load_item(item: Item, format: str | None, scanned_at: int | None = None) -> Transcript:
    """The transcript of ``item``: its own, its file's (one sample of an eval log when it
    names one), or its trajectory's messages read as ``format``. ``scanned_at``: for a run of
    a file of runs, the place a scan of the file, unchanged since, found it at (the file is
    read up to it alone: :func:`~turnfold.formats._run_of`)."""
    if isinstance(item.transcript, Transcript):
        return item.transcript
    if item.column is not None and item.path is not None and item.sample is not None:
        row = int(item.sample)
        try:
            return table_runs.read_messages(table_runs.cell(item.path, item.column, row), format)
        except TranscriptFormatError as exc:
            raise table_runs.row_error(exc, item.path, row) from None
    if item.path is not None and item.sample is not None:
        if format in (openhands.NAME, otlp.NAME):  # an instance, a conversation: by its id
            return load(item.path, format=format, sample=item.sample)
        if format not in (None, inspect_log.NAME) or (format is None and not _is_eval_log(item)):
            if scanned_at is not None:
                source, stream = open_source(item.path)
                with contextlib.closing(stream) if stream is not None else contextlib.nullcontext():
                    return read_source(source, None, item.sample, scanned_at=scanned_at)
            return load(item.path, sample=item.sample)  # a row of a file of runs: its place
        sample, epoch = sample_of(item.sample)
        return load(item.path, format=format or inspect_log.NAME, sample=sample, epoch=epoch)
    if item.path is not None:
        return load(item.path, format=format)
    try:
        if item.format_guessed:  # the table's first trajectory's: a row it does not fit is detected
            return OneFormat(table_runs.read_messages, guess=format)(item.messages)
        return table_runs.read_messages(item.messages, format)
    except TranscriptFormatError as exc:
        if item.sample is None or not item.sample.isdigit():
            raise
        raise table_runs.row_error(exc, table_runs.IN_MEMORY, int(item.sample)) from None


def error_row(item: Item, error: str, format: str | None = None) -> dict[str, Any]:
    """The row of an item that could not be read: its key, path, sample and format, and why
    (C-7); a scan's, a search's and a site's alike."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(key=item.key, path=item.path, sample=item.sample, format=format or item.format,
               error=error)  # fmt: skip
    return row


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _title(transcript: Transcript) -> str | None:
    """The session's first prompt as its view shows it (a slash command with its arguments),
    else the title or task its source records, else ``[image]`` for a session whose prompts
    are pictures alone (a row with no title has no words to find it or open it by)."""
    pictured = False
    for entry in transcript.entries:
        if isinstance(entry, UserMessage):
            said = " ".join(part for part in (entry.command, entry.text.strip()) if part)
            if said:
                return _one_line(said, TITLE_LIMIT)
            pictured = pictured or bool(entry.images)
    for key in ("title", "task"):
        value = transcript.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return _one_line(value, TITLE_LIMIT)
    return "[image]" if pictured else None


def _agent_id(name: str | None) -> str | None:
    """The agent the session header names (U-3: ``Gemini CLI``, of a format one agent writes),
    as the ``agent`` column names agents (``gemini-cli``), when the source records none (H-6).

    >>> _agent_id("Gemini CLI"), _agent_id("OpenAI Agents SDK"), _agent_id(None)
    ('gemini-cli', 'openai-agents-sdk', None)
    """
    return "-".join(name.lower().split()) if name else None


def _delegations(transcript: Transcript) -> int:
    """Sub-agent runs in the session, nested ones included (what F-7's lines account for).

    Over ``tool_calls(nested=True)``, which walks with a stack, not by recursion (a file's
    sub-agents may nest thousands deep, and a row must come of it, X-2), and walks a
    transcript already on the way down (one that runs itself) once: its runs count where it
    first nests."""
    count = 0
    for call in transcript.tool_calls(nested=True):
        agent = call.subagent
        # The agents a call ran at once (no run of its own) count themselves, not one more.
        ran_at_once = agent is not None and agent.transcript is not None and not agent.is_run
        if (agent is not None or tool_category(call.name) == "agent") and not ran_at_once:
            count += 1
    return count


#: How much of an error's output is decoded to find its first line when it holds escape
#: sequences: a line is cut at ERROR_LINE_LIMIT characters anyway.
_DECODED_HEAD = 16 * 1024
#: What ends a line for ``str.splitlines``: each of them is also whitespace to ``str.strip``.
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _first_line(text: str | None) -> str | None:
    """The first line of ``text`` that is not blank, made one short line: found without
    splitting the rest (a failed command's output may hold megabytes)."""
    rest = (text or "").lstrip()  # blank lines are whitespace, so the first line left is not
    if rest.find("\x1b", 0, _DECODED_HEAD) >= 0:  # no copy of the head to look in
        # Terminal output's escape sequences (colours, bracketed paste's ``ESC[?2004l``) are no
        # part of the line a person reads: the view decodes them away, and so does the row.
        from turnfold.render.content import plain_text  # rich, only for such output

        rest = plain_text(rest[:_DECODED_HEAD]).lstrip()
    if not rest:
        return None
    end = _LINE_BREAK.search(rest)
    return _one_line(rest[: end.start()] if end else rest, ERROR_LINE_LIMIT)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _score(value: Any) -> float | None:
    """H-6's score as a number; a mapping of scorers counts when it holds exactly one number.

    Null otherwise, on purpose: several scorers (or one multi-metric scorer's metrics that
    differ: its reader gives their one number when they agree) have no number that stands for
    them all (their mean is a score none of them gave); the session header shows each, and
    ``outcome`` says what they say together.

    >>> _score(0.5), _score({"match": 1}), _score({"match": 1, "qa": 0}), _score({"a": {"x": 1}})
    (0.5, 1.0, None, None)
    """
    if isinstance(value, Mapping):
        numbers = [n for n in (_number(v) for v in value.values()) if n is not None]
        return numbers[0] if len(numbers) == 1 and len(value) == 1 else None
    return _number(value)


def _summary(transcript: Transcript, item: Item, format: str | None, tables: bool) -> Summary:
    meta = transcript.metadata
    format = format or as_text(meta.get("source_format"))
    planned = plan_projection(transcript)  # default settings: counts do not depend on them
    key = item.key
    turns = tool_calls = errors = 0
    tool_rows: list[dict[str, Any]] = []
    turn_rows: list[dict[str, Any]] = []
    per_turn = tables and records_tokens_per_turn(transcript)
    for planned_item in planned:
        segment, context = planned_item.segment, planned_item.context
        if segment is None or context is None:
            shown = planned_item.entry
            if isinstance(shown, SystemNotice) and shown.level == "error":
                errors += 1
            continue
        turns += 1
        # The turn's header and the entries shown outside its fold, as the projection makes
        # them (process.py's own functions), without projecting the rest of the turn: the batch
        # views, groups and rows a row never shows were two thirds of a summary's cost.
        header = segment_header(segment, context.running, LOCALE)
        tool_calls += header.tool_count
        errors += sum(1 for e in segment.entries if isinstance(e, AssistantError))
        if tables:
            _turn_tables(transcript, key, turns, segment, header, tool_rows, turn_rows,
                         per_turn=per_turn)  # fmt: skip
    # The session's own facts as its header states them (U-3): one definition of its span,
    # models, tokens (each response once, sub-agents included) and cost, recorded or estimated.
    facts = session_facts(transcript, turns=turns)
    tokens = facts.tokens
    no_cost = no_cost_said(tokens, facts.no_cost)  # the header's rule: tokens shown, no cost
    agent = as_text(meta.get("agent")) or _agent_id(facts.agent or AGENT_NAMES.get(str(format)))
    row = {
        "key": key, "path": item.path, "sample": item.sample, "format": format, "agent": agent,
        "title": _title(transcript), "model": facts.models[0] if facts.models else None,
        "started": facts.started, "ended": facts.ended, "duration_s": facts.duration_s,
        "turns": turns, "tool_calls": tool_calls, "failed_tools": facts.failed_tools,
        "errors": errors, "subagents": _delegations(transcript),
        **{name: tokens.get(name) for name in TOKEN_COLUMNS},
        "cost_usd": facts.cost.usd if facts.cost is not None else None,
        "outcome": as_text(meta.get("outcome")),
        "score": _score(meta.get("score")), "warnings": warning_total(transcript),
        "error": None, "no_cost": no_cost.said if no_cost is not None else None,
    }  # fmt: skip
    return Summary("rows", [row], tool_rows, turn_rows)


def _turn_tables(
    transcript: Transcript, key: str, turn: int, segment: Segment, header: TurnHeader,
    tool_rows: list[dict[str, Any]], turn_rows: list[dict[str, Any]], *, per_turn: bool,
) -> None:  # fmt: skip
    """A turn's row of ``corpus.turns()`` and its calls' rows of ``corpus.tool_calls()``;
    ``per_turn``: whether the source records tokens per turn (else the row's are null)."""
    everything: list[Entry] = ([segment.user] if segment.user else []) + segment.entries
    started: datetime | None = None
    for entry in everything:
        # A label the fast model wrote later is no moment of the session (as its header).
        moment = None if isinstance(entry, ToolUseSummary) else utc(entry.timestamp)
        if moment is not None and (started is None or moment < started):
            started = moment
        if isinstance(entry, ToolCall) and not is_scoring_call(entry):  # as the header counts
            # The call's moment, just read, is its start unless it records one of its own.
            began = utc(entry.started_at) if entry.started_at else moment
            tool_rows.append(_tool_row(key, turn, entry, began))
    # The turn's responses once each, and what its calls' sub-agents spent (U-1, U-2), as its
    # header shows them with show_turn_usage; none where the source records only the session's
    # (its header says they are not recorded per turn).
    spent = spend_of(transcript, everything, started) if per_turn else None
    duration = header.duration_ms  # the header's own (None while the turn runs)
    turn_rows.append({
        "key": key, "turn": turn, "status": header.status, "started": started,
        "duration_s": duration / 1000 if duration is not None else None,
        "tool_calls": header.tool_count,
        **{name: spent.tokens.get(name) if spent is not None else None for name in TOKEN_COLUMNS},
        "cost_usd": spent.cost.usd if spent is not None and spent.cost is not None else None,
        "no_cost": spent.no_cost.said if spent is not None and spent.no_cost is not None else None,
    })  # fmt: skip


def _tool_row(key: str, turn: int, call: ToolCall, started: datetime | None) -> dict[str, Any]:
    failed = call.status == "error" and call.result is not None
    return {
        "key": key, "turn": turn, "call_id": call.call_id, "name": call.name,
        "category": tool_category(call.name), "status": call.status, "started": started,
        "duration_ms": call.recorded_duration_ms, "description": safe_description(call.description),
        "error": _first_line(call.result.text) if failed and call.result else None,
    }  # fmt: skip


def entries_by_turn(transcript: Transcript) -> Iterable[tuple[int | None, Entry]]:
    """Every entry once, with the number of the turn that shows it (None: outside any turn).

    A turn's prompt is an item of the projection of its own and its turn's ``user``: it is
    given with its turn."""
    turn = 0
    planned = plan_projection(transcript)
    prompts = {id(p.segment.user) for p in planned if p.segment and p.segment.user is not None}
    for planned_item in planned:
        segment = planned_item.segment
        if segment is None:
            if planned_item.entry is not None and id(planned_item.entry) not in prompts:
                yield None, planned_item.entry
            continue
        turn += 1
        if segment.user is not None:
            yield turn, segment.user
        for entry in segment.entries:
            yield turn, entry
