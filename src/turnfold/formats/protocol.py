"""What a format module is: the protocols every reader in ``turnfold.formats`` implements (#14).

``load()`` finds a format's module by name (``formats._REGISTRY``) and calls it by these names
only, so a module is a format exactly when it has them. Declaring them as protocols lets mypy
check every registered module against them (the block at the end of this file), so a new format,
or a renamed function in an old one, is caught by the type checker, not by a user's load.

- :class:`SourceFormat`: every format. ``NAME``; ``RECORDS``, the catalogue of the record types
  it maps or ignores by design (:mod:`~turnfold.formats.catalog`); ``detect(source)``, the
  evidence its first records give (:mod:`~turnfold.formats.detection`); ``read(source)``.
- :class:`SampledFormat`: a format whose files hold many runs (eval logs, traces):
  ``HAS_SAMPLES`` and ``read(source, *, sample, epoch)``.
- :class:`PathFormat`: a format that reads its files itself (an archive, a log too big to parse
  whole, a Markdown history), or a folder as one run (an OpenHands V1 conversation, listed in
  ``formats.FOLDER_FORMATS``): ``detect_path(path)`` (None: not mine) and ``read_path(path, …)``.
- :class:`FrameworkAdapter`: an agent framework's run objects (spec A-1 … A-3): ``plain(value)``
  turns them into records, and ``Follower(transcript)`` folds its live events
  (:class:`EventFollower`).
- :class:`ResumableFormat`: a format whose pass over a file can stop after a line and go on
  later (a growing file, spec C-4): ``reader(source)`` gives a :class:`RecordReader`.
- :class:`AgentReader`: a framework whose runs leave out what only the agent knows (ADK:
  which tools are agents; smolagents: its managed agents' runs): ``READS_AGENT``,
  ``read(source, *, agent)`` and
  ``Follower(transcript, *, agent)`` (``load(..., agent=)``, ``follow(..., agent=)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from turnfold.formats.catalog import Records
    from turnfold.formats.detection import Evidence
    from turnfold.formats.source import Source
    from turnfold.model import Transcript


class SourceFormat(Protocol):
    """A format ``load()`` can detect and read."""

    NAME: str
    RECORDS: Records

    def detect(self, source: Source) -> Evidence:
        """How well ``source``'s first records read as this format."""
        ...

    def read(self, source: Source) -> Transcript:
        """The transcript of ``source``, accounting for every record (issue 11)."""
        ...


class SampledFormat(Protocol):
    """A format whose sources hold many runs, one picked by ``sample`` (and ``epoch``)."""

    NAME: str
    RECORDS: Records
    HAS_SAMPLES: bool

    def detect(self, source: Source) -> Evidence: ...

    def read(self, source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
        """The transcript of the run ``sample`` names (by default the first)."""
        ...


class PathFormat(Protocol):
    """A format that reads its files itself, asked before a file is opened as JSON."""

    def detect_path(self, path: Path) -> Evidence | None:
        """Evidence that ``path`` is this format's file; None: not mine, read it as JSON. Of
        a folder whose kind cannot be told, a folder it is told by not listed: the ``OSError``
        of :meth:`~turnfold.formats.source.Unlisted.not_mine`, raised, not None."""
        ...

    @property
    def read_path(self) -> Callable[..., Transcript]:
        """``read_path(path)``, or ``read_path(path, *, sample, epoch)`` for a sampled format:
        the transcript, with its warnings and ``accounting`` set."""
        ...


class EventFollower(Protocol):
    """Folds one framework's live events into a transcript as they pass (spec A-2).

    ``begin(run)``, when a follower has it, is given the run object before its events (the
    prompt it was started with).
    """

    def feed(self, event: Any) -> None:
        """Fold one event in; it raises only on a bug (following then stops, with a warning)."""
        ...

    def close(self) -> None:
        """The run ended: settle the calls still running."""
        ...


class FrameworkAdapter(SourceFormat, Protocol):
    """An agent framework's run objects, after the run and live (spec A-1, A-2)."""

    def plain(self, value: Any) -> Any:
        """The framework's object as plain records this module reads."""
        ...

    @property
    def Follower(self) -> Callable[[Transcript], EventFollower]:
        """The class whose instances follow a run into a transcript."""
        ...


class RecordReader(Protocol):
    """A format's pass over one source's records, fed one at a time; picklable between two
    records once ``source`` is taken off it (:mod:`turnfold.formats.resume`), which may then
    be set to the source of the lines that follow."""

    source: Source

    def feed(self, line: int, record: Any) -> None:
        """Read one record, the source's current one."""
        ...

    def finish(self) -> Transcript:
        """The transcript of the records fed; the reader takes no more after it."""
        ...


def read_through(reader: RecordReader) -> Transcript:
    """``reader`` fed every record of its source, then finished: the whole pass that
    ``read(source)`` of a resumable format is."""
    feed_each(reader, reader.source.records())
    return reader.finish()


def feed_each(reader: RecordReader, records: Iterable[tuple[int, Any]]) -> None:
    """``reader`` fed each of ``records``. A record the reader fails on (a shape of a version
    of the format no one here has seen) is one warned record, and the records after it are
    read: the load loses that record, not the session (L-4)."""
    feed = reader.feed
    for line, record in records:
        try:
            feed(line, record)
        except Exception as exc:
            not_read(reader.source, line, exc)


def read_events(source: Source, event: Callable[[Mapping[str, Any], int], None], what: str) -> None:
    """Each record of ``source``, a JSON object, given to ``event`` with its line: the loop of a
    format whose records are a program's events (a CLI's JSON lines). A line that is no JSON,
    or no object, is warned of (``not <what>``); a record ``event`` fails on is one warned
    record (:func:`not_read`)."""
    from turnfold.formats.errors import MalformedLine

    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
        elif not isinstance(record, Mapping):
            source.warn(f"not {what}", line)
        else:
            try:
                event(record, line)
            except Exception as exc:
                not_read(source, line, exc)


def not_read(source: Source, line: int, exc: Exception) -> None:
    """Warn that the record on ``line`` was not read because its reader raised ``exc``; raise
    it again when it is about the whole source (a :class:`TranscriptFormatError`, on purpose)
    or the machine (out of memory). A reader's loop over records calls this from its
    ``except Exception``, so one record of a shape no one here has seen is lost, not the
    session (L-4)."""
    from turnfold.formats.errors import TranscriptFormatError

    if isinstance(exc, (TranscriptFormatError, MemoryError)):
        raise exc
    source.warn(f"not read: {type(exc).__name__}: {exc}", line)


class ResumableFormat(SourceFormat, Protocol):
    """A format whose reading of a growing file can be kept at a line and resumed (C-4)."""

    def reader(self, source: Source) -> RecordReader:
        """A pass over ``source``; ``read(source)`` is this pass fed every record, finished."""
        ...


class AgentReader(Protocol):
    """A framework whose run objects leave out what only the agent that made them knows."""

    READS_AGENT: bool

    def read(self, source: Source, *, agent: Any = None) -> Transcript:
        """The transcript of ``source``, told by ``agent`` (its root agent, or the runner) what
        the run does not say."""
        ...

    @property
    def Follower(self) -> Callable[..., EventFollower]:
        """``Follower(transcript, *, agent=None)``."""
        ...


if TYPE_CHECKING:  # mypy proves every registered module implements its protocols

    def _conforms() -> None:
        from turnfold.formats import (
            anthropic,
            claude_code,
            codex,
            cursor,
            gemini,
            gemini_api,
            gemini_checkpoint,
            llama_factory,
            native,
            openai_chat,
            openai_responses,
            qwen,
            sharegpt,
        )
        from turnfold.formats.agents import (
            aider,
            claude_stream,
            cline,
            cline_json,
            cline_messages,
            codex_exec,
            continue_,
            copilot,
            crush,
            cursor_stream,
            gemini_stream,
            kimi,
            kimi_cli,
            opencode,
            opencode_json,
        )
        from turnfold.formats.frameworks import (
            adk,
            adk_db,
            agent_framework,
            agno,
            agno_db,
            autogen,
            autogen_state,
            claude_agent_sdk,
            crewai,
            dspy,
            dspy_evaluate,
            haystack,
            langchain,
            langgraph_checkpoints,
            llamaindex,
            llamaindex_chat_store,
            openai_agents,
            openai_agents_db,
            pydantic_ai,
            semantic_kernel,
            smolagents,
            strands,
            strands_session,
        )
        from turnfold.formats.harnesses import (
            atif,
            inspect_log,
            mini_swe_agent,
            openhands,
            openhands_sdk,
            swe_agent,
        )
        from turnfold.formats.traces import langfuse, mlflow, otlp

        formats: list[SourceFormat] = [
            native, claude_code, codex, gemini, qwen, cursor, swe_agent, mini_swe_agent,
            openhands_sdk, atif, claude_stream, codex_exec, gemini_stream, cursor_stream,
            cline_json, cline, cline_messages, aider, sharegpt, llama_factory, anthropic,
            openai_responses, openai_chat, opencode_json, copilot, continue_, kimi, kimi_cli,
            autogen_state, gemini_api, gemini_checkpoint,
        ]  # fmt: skip
        resumable: list[ResumableFormat] = [claude_code, codex, gemini]
        sampled: list[SampledFormat] = [
            inspect_log, openhands, otlp, opencode, crush, mlflow, langfuse, agno_db,
            langgraph_checkpoints, openai_agents_db, adk_db, strands_session,
            llamaindex_chat_store, dspy_evaluate,
        ]  # fmt: skip
        paths: list[PathFormat] = [
            inspect_log, aider, openhands_sdk, openhands, opencode, crush, mlflow, agno_db,
            langgraph_checkpoints, openai_agents_db, adk_db, strands_session, kimi, kimi_cli,
            cline, dspy_evaluate, crewai,
        ]  # fmt: skip
        frameworks: list[FrameworkAdapter] = [
            openai_agents, langchain, pydantic_ai, claude_agent_sdk, smolagents, adk, autogen,
            strands, llamaindex, dspy, agent_framework, haystack, agno, crewai,
            semantic_kernel,
        ]  # fmt: skip
        agent_readers: list[AgentReader] = [adk, smolagents, dspy, agent_framework]
        del formats, sampled, paths, frameworks, resumable, agent_readers


__all__ = [
    "AgentReader",
    "EventFollower",
    "FrameworkAdapter",
    "PathFormat",
    "RecordReader",
    "ResumableFormat",
    "SampledFormat",
    "SourceFormat",
    "read_through",
]
