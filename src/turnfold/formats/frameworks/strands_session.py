"""Strands Agents' ``FileSessionManager`` sessions (issue 22): the folder an agent made with
``Agent(session_manager=FileSessionManager(session_id=..., storage_dir=...))`` keeps its
conversation in, read through :mod:`~turnfold.formats.frameworks.strands`'s rules.

The layout (``strands/session/file_session_manager.py``; ``storage_dir`` defaults to
``~/.strands/sessions``)::

    <storage_dir>/session_<session id>/
        session.json                               Session: session_id, session_type, created_at
        agents/agent_<agent id>/agent.json         SessionAgent: agent_id, state,
                                                   conversation_manager_state, _internal_state
        agents/agent_<agent id>/messages/message_<n>.json   SessionMessage, n from 0
        multi_agents/multi_agent_<id>/multi_agent.json      a Swarm's or Graph's own state

Each message file is ``SessionMessage.to_dict()``, a Bedrock Converse message with its
``message_id``, ``created_at`` and ``redact_message``, read as the strands format reads a
stored message (the redacted content when redacted, entries stamped with ``created_at``). The
files keep every message: what an agent's conversation manager later removed from
``agent.messages`` (``removed_message_count`` of ``agent.json``) is still here, and shown.
A run's structured output (``structured_output_model=``) is stored only as those messages
hold it, the structured output tool's call and its result (``SessionAgent`` keeps no result of a
run): the strands format's rule makes that call's input the answer.
An agent stopped by interrupts keeps its interrupt state in ``agent.json``
(``_internal_state.interrupt_state``): the results of the calls that ran settle them and each
open interrupt is a pending action, as a load of the agent shows it.

``load()`` reads a session from its folder, its ``session.json``, an agent's folder or its
``agent.json``; one ``message_<n>.json`` loaded alone is read as the message it holds (by the
strands format). A session
of one agent is that agent's conversation. A session of several (agents that share one
session manager, each its own ``agent_id``) is read as its lead's (the oldest agent whose runs
are not all answers to another agent's calls), each run of another agent nested under the
call whose result is that run's answer (an agent used as a tool,
``as_tool(preserve_context=True)``): a run nested nowhere is said in a warning. ``sample=``
names an agent by its id and reads its conversation alone. A message file that is no JSON is a
warning naming it, and the others are read; a gap in the numbering is said too.
``multi_agents/`` holds a Swarm's or Graph's orchestration state (no messages: Strands keeps
no session of their node agents) and is not read.

A scan of a storage folder makes one row per session (``corpus.discover``): its message files
are parts of it, never rows of their own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import as_text
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError, unselected
from turnfold.formats.frameworks import strands
from turnfold.formats.harnesses.openhands_sdk import event_file_value
from turnfold.formats.source import Source, folder_not_listed, join_warnings
from turnfold.model import AssistantText, SubAgent, Transcript, UserMessage

NAME = "strands-session"
#: A session may hold several agents: ``sample=`` names one by its id.
HAS_SAMPLES = True

SESSION_FILE = "session.json"
SESSION_PREFIX = "session_"
AGENTS, AGENT_PREFIX, AGENT_FILE = "agents", "agent_", "agent.json"
MESSAGES = "messages"
MULTI_AGENTS = "multi_agents"
#: ``MESSAGE_PREFIX`` and the index ``list_messages`` sorts the files by.
MESSAGE_FILE = re.compile(r"^message_(\d+)\.json$")

RECORDS = Records(
    mapped={
        **strands.RECORDS.mapped,
        "session": 'session.json: metadata["session_id"] and started_at',
        "agent": "agent.json: the agent's id (metadata); its interrupt state when stopped: "
        "the calls' completed results, a PendingAction per open interrupt",
    },
    ignored={
        **strands.RECORDS.ignored,
        "multi_agent": "a Swarm's or Graph's orchestration state: no messages",
        "other agent": "the session's other agents, when sample= names one",
    },
)


# --- where a session lies ---------------------------------------------------------------------


def _is_session(folder: Path) -> bool:
    return (
        folder.name.startswith(SESSION_PREFIX)
        and (folder / SESSION_FILE).is_file()
        and (folder / AGENTS).is_dir()
    )


def session_of(path: Path) -> Path | None:
    """The session folder ``path`` is, or is part of (``session.json``, an agent's folder,
    ``agent.json`` or a message file); None for anything else.

    >>> session_of(Path("/nowhere/session_a/session.json")) is None
    True
    """
    try:
        for candidate in (path, *list(path.parents)[:5]):
            if candidate.name.startswith(SESSION_PREFIX) and _is_session(candidate):
                inside = path.relative_to(candidate).parts
                if not inside or inside[0] in (SESSION_FILE, AGENTS, MULTI_AGENTS):
                    return candidate
                return None
    except OSError:
        return None
    return None


def is_session_folder(folder: Path, files: list[str], dirs: list[str]) -> bool:
    """Whether a walked folder is a session (its ``session.json`` and ``agents/``), which a
    scan makes one row of (discovery opens no file: the place and names tell)."""
    return folder.name.startswith(SESSION_PREFIX) and SESSION_FILE in files and AGENTS in dirs


# --- detection --------------------------------------------------------------------------------


def _is_session_document(value: Any) -> bool:
    """``Session.to_dict()``: its id and type (``SessionType``: ``AGENT``), and nothing that a
    transcript of another format would hold."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("session_id"), str)
        and value.get("session_type") == "AGENT"
        and value.keys() <= {"session_id", "session_type", "created_at", "updated_at"}
    )


def detect_path(path: Path) -> Evidence | None:
    """A session folder, its ``session.json``, an agent's folder or ``agent.json``; None for
    anything else (read as JSON): a ``message_<n>.json`` loaded alone is the message it holds
    (the strands format's stored message), as it always was."""
    if path.is_file() and MESSAGE_FILE.match(path.name):
        return None
    return Evidence(share=1.0, marks=2) if session_of(path) is not None else None


def detect(source: Source) -> Evidence:
    """A session's ``session.json`` (read with its folder; alone it holds no message)."""
    document = source.document if source.is_document else None
    if _is_session_document(document):
        return Evidence(share=1.0, marks=2)
    return Evidence.none("no Strands session.json (session_id, session_type AGENT)")


# --- reading ----------------------------------------------------------------------------------


def _json_file(path: Path, source: Source, record_type: str) -> dict[str, Any]:
    value = event_file_value(path)
    if isinstance(value, MalformedLine):
        source.warn(f"{path}: {value.reason}", record_type=record_type)
        return {}
    if not isinstance(value, dict):
        source.warn(f"{path}: not a JSON object, not read", record_type=record_type)
        return {}
    source.mapped(record_type)
    return value


def _agents(session: Path) -> list[tuple[str, Path]]:
    """The session's agents (id, folder), the oldest ``agent.json`` first. An ``agents/`` that
    cannot be listed leaves nothing to read: an error naming it, not a session "without
    agents"."""
    found = []
    try:
        folders = sorted(p for p in (session / AGENTS).iterdir() if p.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        reason = folder_not_listed(session / AGENTS, error, "agents' conversations")
        raise TranscriptFormatError(str(session), [NAME], None, reason) from None
    for folder in folders:
        if not folder.name.startswith(AGENT_PREFIX):
            continue
        created = ""
        try:
            agent = codec.loads((folder / AGENT_FILE).read_bytes())
            created = as_text(agent.get("created_at")) or "" if isinstance(agent, dict) else ""
        except (OSError, ValueError, RecursionError):
            pass  # read again, and warned of, when the agent is read
        found.append((created, folder.name.removeprefix(AGENT_PREFIX), folder))
    return [(agent_id, folder) for _, agent_id, folder in sorted(found)]


def _messages(folder: Path, source: Source) -> list[tuple[int, Any]]:
    """An agent's message files in ``list_messages``' order, each (index + 1, its JSON or a
    :class:`MalformedLine` naming the file)."""
    found: dict[int, Path] = {}
    try:
        listed = sorted(os.scandir(folder / MESSAGES), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        source.warn(f"{folder / MESSAGES}: no messages folder")
        return []
    except OSError as error:
        source.warn(folder_not_listed(folder / MESSAGES, error, "message files"))
        return []
    for entry in listed:
        match = MESSAGE_FILE.match(entry.name)
        if match is not None and entry.is_file():
            found[int(match.group(1))] = Path(entry.path)
        elif not entry.name.startswith("."):  # ``.strands_*.tmp``: a write under way
            source.warn(f"{entry.path}: not a message file, not read")
    first = next(index for index in range(len(found) + 1) if index not in found)
    if found and first < max(found):
        source.warn(f"no message_{first}.json in {folder / MESSAGES}: the messages after it "
                    "are read")  # fmt: skip
    return [(index + 1, event_file_value(found[index])) for index in sorted(found)]


def _read_agent(source: Source, folder: Path, agent_id: str) -> tuple[Transcript, list[Any]]:
    """One agent's conversation, and its messages (read, in order) for nesting its runs."""
    transcript = Transcript(metadata={"source_format": NAME, "agent": agent_id})
    builder = strands.ConverseBuilder(transcript, str(folder))
    state = _json_file(folder / AGENT_FILE, source, "agent")
    records = []
    for line, record in _messages(folder, source):
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line, record_type="session_message")
        elif strands.is_session_message(record):
            strands._session_message(source, builder, record, line)
            records.append(record)
        else:
            source.warn(f"message_{line - 1}.json: not a Strands SessionMessage", line,
                        record_type="session_message")  # fmt: skip
    internal = state.get("_internal_state")
    stopped = internal.get("interrupt_state") if isinstance(internal, Mapping) else None
    if isinstance(stopped, Mapping) and stopped.get("activated") is True:
        pending = stopped.get("pending_tool_execution")
        results = pending.get("completed_tool_results") if isinstance(pending, Mapping) else None
        interrupts = stopped.get("interrupts")
        builder.interrupted(
            list(interrupts.values()) if isinstance(interrupts, Mapping) else [], results
        )
    return transcript, records


def _runs(records: list[Any]) -> list[list[Any]]:
    """An agent's stored messages cut into runs, each from a prompt on."""
    runs: list[list[Any]] = []
    for record in records:
        message = record.get("redact_message") or record.get("message")
        if strands._is_prompt(message) or not runs:
            runs.append([])
        runs[-1].append(record)
    return runs


def _run_transcripts(agent_id: str, records: list[Any]) -> list[tuple[Transcript, str | None]]:
    """Each run of an agent as a transcript of its own, with its answer (its last text)."""
    found = []
    for run in _runs(records):
        child = Transcript(metadata={"source_format": NAME, "agent": agent_id})
        builder = strands.ConverseBuilder(child, agent_id)
        quiet = Source(agent_id, iter(()))  # its records are the session's, counted there
        for line, record in enumerate(run, start=1):
            strands._session_message(quiet, builder, record, line)
        join_warnings(child.warnings, quiet.warnings, before=True)
        texts = [e.text.strip() for e in child.entries if isinstance(e, AssistantText)]
        found.append((child, texts[-1] if texts else None))
    return found


def _results(transcript: Transcript) -> set[str]:
    return {c.result.text.strip() for c in transcript.tool_calls()
            if c.result is not None and c.result.text}  # fmt: skip


def _nest(source: Source, lead: Transcript, agent_id: str, records: list[Any]) -> None:
    """Each run of another agent of the session under the lead's call whose result is the
    run's answer (an agent used as a tool); a run nested nowhere is warned of."""
    calls = [c for c in lead.tool_calls() if c.subagent is None and c.result is not None]
    unplaced = 0
    for child, answer in _run_transcripts(agent_id, records):
        call = next((c for c in calls if answer is not None and c.result is not None
                     and (c.result.text or "").strip() == answer), None)  # fmt: skip
        if call is None:
            unplaced += 1
            continue
        calls.remove(call)
        # Its task is the run's prompt (the lead's call input, as the agent was given it).
        prompt = next((e.text for e in child.entries if isinstance(e, UserMessage)), None)
        agent = SubAgent(name=agent_id, task=as_text(prompt), transcript=child,
                         tool_count=len(child.tool_calls()))  # fmt: skip
        lead.update(call, subagent=agent)
    if unplaced:
        source.warn(
            f"agent {agent_id!r} of this session: {unplaced} run(s) answer no call of the "
            f"agent shown; load(path, sample={agent_id!r}) reads its conversation"
        )


def _session(session: Path, source: Source, sample: Any) -> Transcript:
    agents = _agents(session)
    ids = [agent_id for agent_id, _ in agents]
    if sample is not None and str(sample) not in ids:
        raise unselected(session, ids, sample, "agent", "<agent id>")
    if not agents:
        raise TranscriptFormatError(str(session), [NAME], None, "a session without agents")
    meta = _json_file(session / SESSION_FILE, source, "session")
    chosen = [(a, f) for a, f in agents if sample is None or a == str(sample)]
    read = [(agent_id, *_read_agent(source, folder, agent_id)) for agent_id, folder in chosen]
    for _ in range(len(agents) - len(chosen)):
        source.ignored("other agent")
    # The lead: the oldest agent whose runs are not all answers of another agent's calls
    # (an agent used as a tool is made, and so stored, before the agent that uses it).
    answers = {a: [answer for _, answer in _run_transcripts(a, records)]
               for a, _, records in read}  # fmt: skip
    lead_id, transcript, _ = next(
        (
            (a, t, r) for a, t, r in read
            if not all(answer in set().union(*(_results(o) for b, o, _ in read if b != a))
                       for answer in answers[a])
        ),
        read[0],
    )  # fmt: skip
    for agent_id, _, records in read:
        if agent_id != lead_id:
            _nest(source, transcript, agent_id, records)
    if isinstance(meta.get("session_id"), str):
        transcript.metadata["session_id"] = meta["session_id"]
    if isinstance(meta.get("created_at"), str):
        transcript.metadata["started_at"] = meta["created_at"]
    try:
        multi = [p for p in (session / MULTI_AGENTS).iterdir() if p.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        multi = []
    except OSError as error:  # its multi-agent states, not read either way, are said
        multi = []
        source.warn(folder_not_listed(session / MULTI_AGENTS, error, "multi-agent states"))
    for _ in multi:
        source.ignored("multi_agent")
    return transcript


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session ``path`` is, or is a file of: its first agent's conversation with the
    others' runs nested (or the agent of the file given), or the agent ``sample`` names."""
    if epoch is not None:
        raise ValueError(f"{path} is a Strands session: its agents have no epochs")
    session = session_of(path)
    if session is None:
        raise TranscriptFormatError(str(path), [NAME], None, "no Strands session folder "
                                    "(session_<id>/ with session.json and agents/)")  # fmt: skip
    source = Source(str(session), iter(()), path=session)
    transcript = _session(session, source, sample)
    return source.hand_over(transcript)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """A ``session.json`` read with its folder; alone, it holds no message."""
    if source.path is not None and session_of(source.path) is not None:
        return read_path(source.path, sample=sample, epoch=epoch)
    raise TranscriptFormatError(
        source.name, [NAME], 1, "a Strands session.json holds no messages: load its folder "
        "(session_<id>/, with agents/)",
    )  # fmt: skip
