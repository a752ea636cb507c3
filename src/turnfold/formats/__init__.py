"""``turnfold.load``: read a transcript from a path, text, bytes, a file object or Python objects.

Each source format is a module of this package with a ``NAME``, a ``detect(source)`` that
weighs the first records (:mod:`~turnfold.formats.detection`), a ``read(source)`` that streams
the rest, and a ``RECORDS`` table of the record types it maps or ignores by design
(:mod:`~turnfold.formats.catalog`). This module turns the many shapes of input into a
:class:`~turnfold.formats.source.Source`, picks the format, reports input that no format
recognises (spec L-2, L-4) and what a load passed over (spec X-2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from turnfold.formats import credentials, detection, tables
from turnfold.formats.compressed import decompressed, streamed
from turnfold.formats.errors import LISTED_IDS, MalformedLine, TranscriptFormatError, unselected
from turnfold.formats.source import (
    Source,
    expanded,
    from_json_value,
    join_warnings,
    looks_like_text,
    open_source,
    table_of_runs,
    warned_records,
)
from turnfold.formats.wrappers import (
    CUSTOM_ID,
    UNKNOWN,
    OneFormat,
    RunChoice,
    how_to_load_one,
    no_such_run,
    row_runs_key,
    run_name,
    run_place,
    runs_held,
    runs_key,
)
from turnfold.gcpause import collector_paused
from turnfold.model import Accounting, LoadWarning, Transcript

__all__ = ["FORMATS", "TranscriptFormatError", "evidence", "load", "which_format"]

# Every format is asked for its evidence (detection.py), in this order. Each is its format's NAME
# and the module that reads it, imported when first needed (issue 19): a load with format=
# imports that module alone, and detection stops at the first conclusive evidence
# (Evidence.conclusive), so a Claude Code session imports the native format's module and its
# own. The order changes which modules a load imports, never the format it picks.
_REGISTRY: tuple[tuple[str, str], ...] = (
    ("turnfold", "turnfold.formats.native"),
    ("claude-code", "turnfold.formats.claude_code"),
    ("codex", "turnfold.formats.codex"),
    ("gemini", "turnfold.formats.gemini"),
    ("qwen", "turnfold.formats.qwen"),
    ("cursor", "turnfold.formats.cursor"),
    ("inspect", "turnfold.formats.harnesses.inspect_log"),
    ("swe-agent", "turnfold.formats.harnesses.swe_agent"),
    ("mini-swe-agent", "turnfold.formats.harnesses.mini_swe_agent"),
    ("openhands", "turnfold.formats.harnesses.openhands"),
    ("openhands-sdk", "turnfold.formats.harnesses.openhands_sdk"),
    ("atif", "turnfold.formats.harnesses.atif"),
    ("otlp", "turnfold.formats.traces.otlp"),
    ("mlflow", "turnfold.formats.traces.mlflow"),
    ("langfuse", "turnfold.formats.traces.langfuse"),
    ("claude-stream-json", "turnfold.formats.agents.claude_stream"),
    ("codex-exec-json", "turnfold.formats.agents.codex_exec"),
    ("gemini-stream-json", "turnfold.formats.agents.gemini_stream"),
    ("cline-json", "turnfold.formats.agents.cline_json"),
    ("cursor-stream-json", "turnfold.formats.agents.cursor_stream"),
    ("opencode-json", "turnfold.formats.agents.opencode_json"),
    ("copilot", "turnfold.formats.agents.copilot"),
    ("kimi", "turnfold.formats.agents.kimi"),
    ("kimi-cli", "turnfold.formats.agents.kimi_cli"),
    ("openai-agents", "turnfold.formats.frameworks.openai_agents"),
    ("langchain", "turnfold.formats.frameworks.langchain"),
    ("pydantic-ai", "turnfold.formats.frameworks.pydantic_ai"),
    ("claude-agent-sdk", "turnfold.formats.frameworks.claude_agent_sdk"),
    ("smolagents", "turnfold.formats.frameworks.smolagents"),
    ("adk", "turnfold.formats.frameworks.adk"),
    ("autogen", "turnfold.formats.frameworks.autogen"),
    ("autogen-state", "turnfold.formats.frameworks.autogen_state"),
    ("strands", "turnfold.formats.frameworks.strands"),
    ("strands-session", "turnfold.formats.frameworks.strands_session"),
    ("llamaindex", "turnfold.formats.frameworks.llamaindex"),
    ("llamaindex-chat-store", "turnfold.formats.frameworks.llamaindex_chat_store"),
    ("agent-framework", "turnfold.formats.frameworks.agent_framework"),
    ("dspy", "turnfold.formats.frameworks.dspy"),
    ("dspy-evaluate", "turnfold.formats.frameworks.dspy_evaluate"),
    ("haystack", "turnfold.formats.frameworks.haystack"),
    ("agno", "turnfold.formats.frameworks.agno"),
    ("agno-db", "turnfold.formats.frameworks.agno_db"),
    ("openai-agents-db", "turnfold.formats.frameworks.openai_agents_db"),
    ("adk-db", "turnfold.formats.frameworks.adk_db"),
    ("langgraph-checkpoints", "turnfold.formats.frameworks.langgraph_checkpoints"),
    ("crewai", "turnfold.formats.frameworks.crewai"),
    ("semantic-kernel", "turnfold.formats.frameworks.semantic_kernel"),
    ("cline", "turnfold.formats.agents.cline"),
    ("cline-messages", "turnfold.formats.agents.cline_messages"),
    ("aider", "turnfold.formats.agents.aider"),
    ("opencode", "turnfold.formats.agents.opencode"),
    ("crush", "turnfold.formats.agents.crush"),
    ("continue", "turnfold.formats.agents.continue_"),
    ("sharegpt", "turnfold.formats.sharegpt"),
    ("llama-factory", "turnfold.formats.llama_factory"),
    ("gemini-checkpoint", "turnfold.formats.gemini_checkpoint"),
    ("gemini-api", "turnfold.formats.gemini_api"),
    ("anthropic", "turnfold.formats.anthropic"),
    ("openai-responses", "turnfold.formats.openai_responses"),
    ("openai", "turnfold.formats.openai_chat"),
)
_NATIVE = "turnfold"  # a dump of an empty transcript is faithful, not a load that lost everything

#: Format names ``load(format=...)`` accepts.
FORMATS: tuple[str, ...] = tuple(name for name, _ in _REGISTRY)
_MODULE_NAMES: dict[str, str] = dict(_REGISTRY)


def _module(name: str) -> ModuleType:
    """The module that reads the format ``name``, imported on first use (by the import
    statement's machinery, which ``python -X importtime`` reports)."""
    module = _MODULE_NAMES[name]
    __import__(module)
    return sys.modules[module]


@cache
def _modules() -> tuple[ModuleType, ...]:
    """Every format's module, in :data:`FORMATS` order (detection asks them all)."""
    modules = tuple(_module(name) for name in FORMATS)
    for name, module in zip(FORMATS, modules, strict=True):
        if name != module.NAME:  # the registry is written by hand; a rename must reach it
            raise RuntimeError(f"{module.__name__}.NAME is {module.NAME!r}, registered as {name!r}")
    return modules


def _first_offending_line(source: Source) -> tuple[int | None, str]:
    for line, value in source.head:
        if isinstance(value, MalformedLine):
            return line, value.reason
    if source.head:
        return source.head[0][0], "no known transcript structure"
    if source.warnings:  # why nothing was read: compressed data cut off, say
        return None, f"nothing read: {source.warnings[0].reason}"
    return None, "the source is empty"


def evidence(source: Source) -> list[tuple[str, detection.Evidence]]:
    """What every format makes of ``source``'s first records, in :data:`FORMATS` order."""
    return [(m.NAME, m.detect(source)) for m in _modules()]


def _weigh(source: Source) -> list[tuple[str, detection.Evidence]]:
    """:func:`evidence`, up to the first conclusive evidence, which no later format can beat
    (:attr:`~turnfold.formats.detection.Evidence.conclusive`): the formats after it are
    neither asked nor imported."""
    candidates = []
    for name in FORMATS:
        found = _module(name).detect(source)
        candidates.append((name, found))
        if found.conclusive:
            break
    return candidates


def which_format(source: Source) -> str | None:
    """The name of the format ``load()`` would read ``source`` as, None when none fits.

    Raises :class:`~turnfold.formats.detection.AmbiguousFormat` when two fit equally well.
    """
    return detection.choose(_weigh(source))


def readable_format(source: Source) -> str | None:
    """:func:`which_format`, raising the :class:`TranscriptFormatError` ``load()`` raises for
    a source it cannot read at all: none of its first records could be read (an empty file,
    no JSON, binary data, compressed data cut off) or it reads equally well as two formats.
    None when records were read and no format fits them. The one message of such a file for
    ``load(path)``, ``corpus[key]`` and a scan's row (C-7), as :func:`malformed_run` is a
    run's."""
    if not source.head_values():
        line, reason = _first_offending_line(source)
        raise TranscriptFormatError(source.name, FORMATS, line, reason)
    return _choose(source.name, _weigh(source), source.head[0][0])


def _choose(
    name: str, candidates: list[tuple[str, detection.Evidence]], line: int | None
) -> str | None:
    """:func:`detection.choose`, a tie reported as the format error of the source ``name``."""
    try:
        return detection.choose(candidates)
    except detection.AmbiguousFormat as exc:
        reason = f"reads equally well as {detection.describe(exc.candidates)}; pass format="
        raise TranscriptFormatError(name, FORMATS, line, reason) from None


def _detect(source: Source) -> ModuleType:
    """The format whose evidence is best (issue 11); an error naming every candidate if none."""
    candidates = _weigh(source)
    name = _choose(source.name, candidates, source.head[0][0] if source.head else None)
    if name is None:
        line, reason = _first_offending_line(source)
        near = [c for c in candidates if c[1].share > 0]
        runs = runs_key(source) if reason == "no known transcript structure" else None
        if runs is not None:  # the rows of a dataset: many runs, not one session
            first = next((v for v in source.head_values() if isinstance(v, Mapping)
                          and row_runs_key(v) == runs), None)  # fmt: skip
            reason = (
                f"a file of runs (each record holds {runs_held(first, runs)}): turnfold.scan() "
                f"reads each as a row; {how_to_load_one(runs)}"
            )
        elif near and reason == "no known transcript structure":
            reason += "; closest: " + detection.describe(near)
        raise TranscriptFormatError(source.name, FORMATS, line, reason)
    return _module(name)


def read_source(
    source: Source,
    format: str | None,
    sample: Any = None,
    epoch: int | None = None,
    agent: Any = None,
    *,
    scanned_at: int | None = None,
) -> Transcript:
    """The transcript of an opened :class:`Source`, as :func:`load` reads it: one whose head
    was already read (to detect its format, say) is not read again. ``scanned_at``: the place
    a scan found the run ``sample`` keys in a file of runs (:func:`_run_of`)."""
    format = format if format is not None else source.format
    try:
        module = _module(format) if format is not None else _detect(source)
    except TranscriptFormatError:
        # No format reads it: the rows of a dataset, of which ``sample`` names one by its place.
        if sample is None or runs_key(source) is None:
            raise
        return _run_of(source, sample, epoch, agent, scanned_at)
    if not source.head:
        raise TranscriptFormatError(source.name, [module.NAME], None, "the source is empty")
    chosen = _sample_choice(module, source.name, sample, epoch) | agent_keyword(
        module, source.name, agent
    )
    with collector_paused():
        transcript: Transcript = module.read(source, **chosen)
    return settle_load(transcript, source, module)


def _run_of(
    source: Source, sample: Any, epoch: int | None, agent: Any, scanned_at: int | None = None
) -> Transcript:
    """The run a file of runs (``wrappers.runs_key``) holds keyed ``sample``, as ``scan`` keys
    it ``path#<sample>`` (``wrappers.run_samples``): the first run named so (a Batch API
    line's ``custom_id``), else the run at that place (from 0; ``@n`` too, as a place is keyed
    where a run is named ``n``). Read as ``load(record)`` reads it, in the dataset's format
    where it fits (its first run's: ``wrappers.OneFormat``), as a scan reads it.

    A run met by its place is known to be the one only at the end of the file: a later run
    may be named so, and any record may name its run (a Batch API line among a dataset's
    rows), so ``load(path, sample=n)`` reads the file to its end. ``scanned_at`` is where a
    scan of the file, unchanged since, found the run of that key (``corpus[key]``): the
    scan's keys are unique (``run_samples``), so no other run is named so, and the file is
    read up to that place alone."""
    place = run_place(sample)
    if (place is None and not isinstance(sample, str)) or epoch is not None:
        raise _no_place(source.name, sample, epoch)
    read = OneFormat(lambda value, format: read_record(value, format, agent))
    choice = RunChoice(sample)
    final = scanned_at is not None and scanned_at == choice.place
    held: tuple[int, Any, list[LoadWarning]] | None = None
    count, named = 0, False
    names: list[str] = []  # the first runs' names, which an error lists
    with streamed():  # a run at a time, each dropped: a compressed file is read whole
        for count, (line, record, warned) in enumerate(warned_records(source), start=1):
            name = run_name(record)
            named = named or name is not None
            if name is not None and len(names) < LISTED_IDS:
                names.append(name)
            met = choice.meet(count - 1, name)
            if met == RunChoice.NAMED:
                return _read_run(read, source.name, line, record, warned)
            if met == RunChoice.PLACED:
                held = (line, record, warned)
            if read.guess == UNKNOWN and not isinstance(record, MalformedLine):
                read.learn(record)  # the dataset's first run: its format
            if held is not None and final:
                break
    if held is not None:
        return _read_run(read, source.name, *held)
    if place is not None:
        raise no_such_run(source.name, count, place)
    if named:
        raise unselected(source.name, names, sample, "run named", f"<its {CUSTOM_ID}>",
                         plural="runs", count=count)  # fmt: skip
    raise _no_place(source.name, sample, epoch)


def _read_run(
    read: OneFormat, name: str, line: int, record: Any, warned: list[LoadWarning]
) -> Transcript:
    """The run of ``record``, on ``line`` of the file of runs ``name``, as ``load`` gives it."""
    if isinstance(record, MalformedLine):
        raise malformed_run(name, line, record)
    try:
        transcript = read(record)
    except TranscriptFormatError as exc:
        raise run_error(exc, name, line) from None
    except AgentRefused as exc:
        raise exc.of(f"{name}, line {line}") from None
    join_warnings(transcript.warnings, warned, before=True)  # its line's, as a scan's row counts
    return transcript


def _no_place(name: str, sample: Any, epoch: int | None) -> ValueError:
    """The error of a ``sample=`` (or an ``epoch=``) that names no record of a file of runs
    whose runs have no names."""
    return ValueError(
        f"{name} is a file of runs: sample= is a record's place in it (0, 1, …), with no "
        f"epoch; not sample={sample!r}" + (f", epoch={epoch!r}" if epoch else "")
    )


def run_error(exc: TranscriptFormatError, name: str, line: int | None) -> TranscriptFormatError:
    """A run's read error as its file's: the record was read as an object of its own
    (``<object>``, its line 1), while the user looks for the file and the line. The one
    message of that run's failure: ``load(path, sample=n)`` and ``corpus[key]`` raise it, a
    scan's row says it (C-7). Its place is not in it: a part of a large file, read by a worker
    of its own, numbers its runs from 0, and its rows are renumbered after; the key has it."""
    return TranscriptFormatError(name, exc.tried, line, exc.reason)


def malformed_run(name: str, line: int, record: MalformedLine) -> TranscriptFormatError:
    """The error of a record of the file of runs ``name`` that is no JSON (its ``line``), one
    message for ``load(path, sample=n)``, ``corpus[key]`` and a scan's row, as
    :func:`run_error` is for a record no format reads."""
    return TranscriptFormatError(name, FORMATS, line, record.reason)


def read_record(record: Any, format: str | None = None, agent: Any = None) -> Transcript:
    """The run a record of a file of runs holds, as ``load(record, format)`` reads it: a value
    this process decoded from JSON, which is neither copied nor searched for a framework's
    objects first (:func:`~turnfold.formats.source.from_json_value`)."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    return read_source(from_json_value(record), format, agent=agent)


def settle_load(
    transcript: Transcript, source: Source, module: ModuleType, accounting: Accounting | None = None
) -> Transcript:
    """What a load adds to the transcript a format read from ``source``: the source's own
    warnings first, its accounting (``accounting``: the part of it that is this transcript's,
    when the source holds several), and a warning for what was passed over (X-2)."""
    if source.warnings:
        join_warnings(transcript.warnings, source.warnings, before=True)
    kept = transcript.accounting = source.accounting if accounting is None else accounting
    report_losses(source.name, kept, transcript, module)
    return transcript


def _sample_choice(module: ModuleType, name: str, sample: Any, epoch: int | None) -> dict[str, Any]:
    """The keywords that pick one sample of a log (spec §10), for formats that hold samples
    (``HAS_SAMPLES``); asking any other format for one is an error, not silently ignored."""
    if getattr(module, "HAS_SAMPLES", False):
        return {"sample": sample, "epoch": epoch}
    if sample is not None or epoch is not None:
        raise ValueError(
            f"{name} is read as {module.NAME}, which holds one transcript: sample= and epoch= "
            "pick one sample of an eval log"
        )
    return {}


class AgentRefused(ValueError):
    """``agent=`` given for a run of a format whose runs say themselves what ran
    (:func:`agent_keyword`): an error, not silently ignored."""

    def __init__(self, name: str, format: str) -> None:
        self.format = format
        super().__init__(
            f"{name} is read as {format}, whose run says itself what ran: agent= tells "
            "an ADK session which tools of its agents are agents (AgentTool), smolagents "
            "steps where its managed agents' runs are, and a DSPy Prediction its LM calls"
        )

    def of(self, name: str) -> AgentRefused:
        """The same refusal of the run a file of runs or a table holds at ``name`` (its file
        and line, or row), which the record read as an object of its own does not know."""
        return AgentRefused(name, self.format)


def agent_keyword(module: ModuleType, name: str, agent: Any) -> dict[str, Any]:
    """``agent=`` for a format whose runs leave out what only the agent knows (``READS_AGENT``:
    which of an ADK agent's tools are agents, where a smolagents agent's managed agents ran);
    giving it to any other format is an error, not silently ignored."""
    if agent is None:
        return {}
    if not getattr(module, "READS_AGENT", False):
        raise AgentRefused(name, module.NAME)
    return {"agent": agent}


#: Formats that read a file themselves (an archive; a log too big to parse whole): besides
#: ``detect``/``read``, such a module has ``detect_path(path) -> Evidence | None`` (None: not
#: mine, read the file as JSON) and ``read_path(path, *, sample, epoch) -> Transcript`` (its
#: warnings and ``accounting`` set). ``load()`` asks them about a file before opening it as
#: JSON lines, so binary files (zips) and huge documents never reach :func:`open_source`.
#: The formats with ``read_path``, named here so that a load imports their modules alone, not
#: every format's (a test keeps this list equal to the modules that have one).
PATH_FORMATS: tuple[str, ...] = (
    "inspect", "aider", "openhands-sdk", "openhands", "opencode", "crush", "mlflow", "agno-db",
    "langgraph-checkpoints", "openai-agents-db", "adk-db", "strands-session", "kimi", "kimi-cli",
    "cline", "dspy-evaluate", "crewai",
)  # fmt: skip

#: Of :data:`PATH_FORMATS`, those whose ``read_path`` reads a folder as one run (an OpenHands
#: V1 conversation, a V0 session; OpenCode's ``storage/`` before 1.2, a session of it by
#: ``sample=``; a Kimi Code or older Kimi CLI session; a Cline task); any other is never given
#: a folder, which ``load()`` refuses as one.
FOLDER_FORMATS: tuple[str, ...] = (
    "openhands-sdk", "openhands", "opencode", "strands-session", "kimi", "kimi-cli", "cline",
)  # fmt: skip


@cache
def _path_readers() -> tuple[ModuleType, ...]:
    return tuple(_module(name) for name in PATH_FORMATS)


#: How much of a file :func:`_opens_with_a_record` reads to find its first line.
_FIRST_LINE_LIMIT = 64 * 1024


def _opens_with_a_record(path: Path) -> bool:
    """Whether the file's first line is a whole JSON object or array: JSON lines (or a
    document of one line), which every format reads from its records, so no format that reads
    files itself (:data:`PATH_FORMATS`: zips, Markdown, logs written indented) is asked about
    it, nor imported (issue 19: their modules were a twentieth of a session's load)."""
    try:
        with path.open("rb") as stream:
            # A compressed file's first line is read through its decompressor.
            text = decompressed(stream, _FIRST_LINE_LIMIT, lambda reason: None)
            head = text.read(_FIRST_LINE_LIMIT)
    except OSError:
        return False
    end = head.find(b"\n")
    if end < 0 and len(head) == _FIRST_LINE_LIMIT:
        return False  # a first line longer than this: the formats are asked, as before
    first = head[: end if end >= 0 else len(head)].strip()
    if not first.startswith((b"{", b"[")):
        return False
    from turnfold import codec

    try:
        return isinstance(codec.fast_loads(first), (dict, list))
    except codec.FastDecodeError:
        return False


def _records_not_claimed(module: ModuleType, path: Path) -> bool:
    """Whether the file at ``path``, named with the ``format=`` of a module that reads both
    files itself and records (a CrewAI text log, and its saved JSON), is JSON its
    ``detect_path`` does not claim: its records, for its ``read``."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_FIRST_LINE_LIMIT).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith((b"{", b"[")) and module.detect_path(path) is None


def _path_of(source: Any) -> Path | None:
    """The file ``source`` names, if it names one (a path, or a ``str`` that is no JSON text);
    a folder too, which only a format that reads a folder as one run takes (an OpenHands V1
    conversation): any other is refused as a folder."""
    if isinstance(source, str) and looks_like_text(source):
        return None
    if isinstance(source, (str, os.PathLike)):
        try:
            path = Path(expanded(os.fspath(source)))
            return path if path.is_file() or path.is_dir() else None
        except (OSError, ValueError):  # a name too long or with a NUL names no file
            return None
    return None


def path_format(path: Path) -> str | None:
    """The format that reads the file at ``path`` itself (:data:`PATH_FORMATS`: an eval log's
    zip, aider's Markdown history) when one claims it; None for a file of JSON records, which
    the other formats read from its records, and for a file none claims."""
    if _opens_with_a_record(path):
        return None
    from turnfold.formats.databases import one_look

    with one_look(path):  # the SQLite-backed readers share one opening of a database
        claims = [(m.NAME, e) for m in _path_readers() if (e := m.detect_path(path)) is not None]
    return _choose(str(path), claims, None)


def folder_format(folder: Path, not_told: list[OSError] | None = None) -> str | None:
    """The format of :data:`FOLDER_FORMATS` that claims ``folder``, None when none does. A
    format that could not tell, a folder it tells its kind by not listed (its probe raises
    that: :meth:`~turnfold.formats.source.Unlisted.not_mine`), claims nothing, the others
    still asked; its error is put in ``not_told``, for ``load()`` to raise when none claims
    the folder."""
    claims = []
    for name in FOLDER_FORMATS:
        try:
            evidence = _module(name).detect_path(folder)
        except OSError as error:
            if not_told is not None:
                not_told.append(error)
            continue
        if evidence is not None:
            claims.append((name, evidence))
    return _choose(str(folder), claims, None)


def _read_path(
    path: Path, format: str | None, sample: Any, epoch: int | None, agent: Any
) -> Transcript | None:
    """The transcript of ``path`` read by a format that reads files itself, None when none
    claims it. A folder is given only to a format that reads folders (:data:`FOLDER_FORMATS`):
    the others would fail on it with a bare OS error, where ``open_source`` says what to do."""
    folder = path.is_dir()
    if format is not None:
        module = _module(format)
        if not hasattr(module, "read_path") or (folder and format not in FOLDER_FORMATS):
            return None
        if not folder and hasattr(module, "detect") and _records_not_claimed(module, path):
            return None  # a file of its records (a crew's saved JSON), which its read() reads
    else:
        not_told: list[OSError] = []
        name = folder_format(path, not_told) if folder else path_format(path)
        if name is None and not_told:  # not "a folder": which kind it is could not be told
            raise not_told[0]
        if name is None:
            return None
        module = _module(name)
    chosen = _sample_choice(module, str(path), sample, epoch) | agent_keyword(
        module, str(path), agent
    )
    with collector_paused():
        transcript: Transcript = module.read_path(path, **chosen)
    accounting = transcript.accounting
    if accounting is None:
        accounting = transcript.accounting = Accounting()
    report_losses(str(path), accounting, transcript, module)
    return transcript


def report_losses(
    name: str, accounting: Accounting, transcript: Transcript, module: ModuleType
) -> None:
    """Never silently (spec X-2): records the loader passed over, and a load that showed
    nothing of a non-empty source, are warnings the view shows."""
    unaccounted = accounting.unaccounted
    if unaccounted and getattr(module, "RECORDS", None) is not None:
        types = sorted({name for _, name in unaccounted})
        shown = ", ".join(repr(t) for t in types[:5]) + (", …" if len(types) > 5 else "")
        transcript.warnings.append(
            LoadWarning(
                reason=f"{len(unaccounted)} record(s) not read ({shown})",
                line=unaccounted[0][0],
                source=name,
            )
        )
    if not transcript.entries and module.NAME != _NATIVE:
        records = accounting.total() + len(unaccounted)
        what = f"{records} record(s)" if records else "its records"
        # What the records were, by type: injected context and bookkeeping are messages and
        # records too, just none that shows as a prompt or a reply.
        kinds = [f"{sum(per_type.values())} {kind}" for kind, per_type in accounting.counts.items()]
        said = f": {', '.join(kinds[:5])}{', …' if len(kinds) > 5 else ''}" if kinds else ""
        transcript.warnings.append(
            LoadWarning(
                reason=f"nothing to show: {what} read as {module.NAME}, no prompt or reply "
                f"among them{said}",
                source=name,
            )
        )


def refuse_credentials(path: Path) -> None:
    """Refuse, unopened, a file an agent keeps its keys and tokens in (``~/.codex/auth.json``):
    no transcript, and what its read would say could quote them."""
    keeper = credentials.keeper_of(path)
    if keeper is not None:
        raise TranscriptFormatError(str(path), [], None, credentials.never_opened(keeper))


def load(
    source: Any,
    format: str | None = None,
    *,
    sample: Any = None,
    epoch: int | None = None,
    agent: Any = None,
) -> Transcript:
    """Read a transcript.

    ``source`` is a path (``str`` or ``os.PathLike``; ``~`` is the home folder) to a file, or
    to a folder that is one run (an OpenHands V1 conversation; any other folder is refused
    with an ``IsADirectoryError``: scan it; one whose kind cannot be told, a folder in it not
    listed, with an ``OSError`` naming both, as a file that cannot be read is), JSON/JSONL
    text, bytes, an open file, or Python
    objects (a dict, a list of messages or records, SDK objects, a row of a dataset read with
    pandas or pyarrow). ``format`` forces one of
    :data:`FORMATS`; by default the format that reads the most of the first records wins
    (:mod:`turnfold.formats.detection`). Input that is not a transcript raises
    :class:`TranscriptFormatError`; nothing the caller passed is modified. The transcript's
    ``warnings`` list what was skipped, and its ``accounting`` what became of every record.

    An eval log holds one transcript per sample and epoch (spec §11): ``sample`` (its id) and
    ``epoch`` pick one; a log of one sample needs neither, a log of several names them in the
    error. Formats without samples refuse ``sample``/``epoch`` with a ``ValueError``.

    A table of runs, a row each (a Parquet or Arrow file, a pandas or Polars DataFrame, a
    pyarrow Table, a Hugging Face ``Dataset``), holds one run per row: ``sample=n`` reads row
    ``n`` (from 0) as ``turnfold.scan(table)["#n"]`` does, its messages column chosen as the
    scan chooses it, its other columns its metadata. A table of one row (in memory or a file)
    needs no ``sample``; one in memory of several without it, or a row it does not hold, is a
    :class:`~turnfold.formats.errors.SampleSelectionError` saying how many rows it holds.

    ``agent`` is the agent a run was made with, for the formats whose runs leave out what only
    it knows (``READS_AGENT``). A Google ADK session's (its root agent, or the ``Runner``):
    the session does not say which tools are agents (``AgentTool``), the agent does, and their
    calls then show as sub-agents whose steps the session does not hold. A smolagents agent's:
    its managed agents' runs, which its steps do not hold, nest under their calls. A DSPy
    ``Prediction``'s (the program, its LM, or their ``history``): the LM calls, which give each
    step its usage, model and time. A run of a table or of a file of runs is read with it as
    its format reads it. Other formats refuse it with a ``ValueError`` (:class:`AgentRefused`)
    naming the run. A file an agent keeps its keys and tokens in (``~/.codex/auth.json``) is
    refused unopened, a :class:`TranscriptFormatError` saying so.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    if isinstance(source, Transcript):
        if sample is not None or epoch is not None or agent is not None:
            raise ValueError(
                "sample=, epoch= and agent= are for reading a source, not a Transcript"
            )
        return source
    table = table_of_runs(source)
    if table is not None:  # a DataFrame, a pyarrow Table, a Dataset: one row of it
        return tables.run_in_memory(table, format, sample, epoch, agent)
    path = _path_of(source)
    if path is not None:
        refuse_credentials(path)
    # A table of runs: one row of it, or none. A folder is none, whatever its name, but one
    # ``datasets`` saved a dataset in.
    if path is not None and tables.is_table(path):
        return tables.run_of(path, format, sample, epoch, agent)
    if path is not None:
        read = _read_path(path, format, sample, epoch, agent)
        if read is not None:
            return read
    opened, stream = open_source(source)
    try:
        return read_source(opened, format, sample, epoch, agent)
    finally:
        if stream is not None:
            stream.close()
