"""OpenHands V1 conversations: the OpenHands Software Agent SDK's persisted events (spec H-3).

OpenHands 1.x runs on the Software Agent SDK (PyPI ``openhands-sdk``,
OpenHands/software-agent-sdk). A ``LocalConversation`` with a ``persistence_dir`` (the CLI's
and the agent server's: ``~/.openhands/conversations``, ``workspace/conversations``) keeps each
conversation in a folder named by its id (``<persistence_dir>/<id hex>/``,
``conversation/persistence_const.py``, ``ConversationState.create``):

- ``base_state.json``: the ``ConversationState`` (``conversation/state.py``): its ``id``, the
  ``agent`` (its ``llm.model``, tools, condenser), the ``workspace`` (``working_dir``),
  ``execution_status``, ``leaf_event_id`` (the head of the active branch), and
  ``stats.usage_to_metrics``: per use of an LLM (``agent``, ``condenser``, a sub-agent's
  ``task:<id>`` or ``delegate:<agent id>``) its ``token_usages`` (one per response, by
  ``response_id``), ``costs`` and ``accumulated_cost``;
- ``events/event-<index, five digits or more>-<event id>.json``: one event each, as
  ``event.model_dump_json(exclude_none=True)`` writes it (``EventLog``,
  ``conversation/event_store.py``), its class in ``kind``; the folder's hidden files are the
  log's lock and length marker;
- ``subagents/<id hex>/``: the conversations its sub-agents ran, laid out the same: the ``task``
  tool's (``tools/task/manager.py``) and, from SDK 1.13, the ``delegate`` tool's
  (``tools/delegate/impl.py``). Before 1.13 neither persisted them (the ``task`` tool kept them
  in a temporary folder it removed): a call there holds only the report its observation gives.
  The SDK writes them nowhere else (not beside the conversation);
- ``meta.json``, the agent server's (``StoredConversation``): the conversation's ``title``.

``load()`` reads such a folder from its ``base_state.json`` or from any of its event files, and
:func:`read_path` from the folder itself or its ``events/``. Events without their folder (one
JSON array, JSON lines, the agent server's page ``{"items": [...]}``, or ``Event`` objects) are
read in their order, without what only ``base_state.json`` says (usage, model, the head of the
active branch): of events that fork, the branch of the last one is read, as the SDK reads a
conversation without a head, and the load warns that it chose (:func:`_last_event_branch`). So
is an OpenHands V1 eval output's instance, whose ``history`` holds them and its ``metrics`` the
usage (:func:`read_history`, called by :mod:`.openhands`). A line of a warning is the event's
place in the log: ``event-00014-…`` is line 15.

The OpenHands app server's export of a conversation (``meta.json`` and
``event_{i:06d}_<id>.json``, :func:`read_export`) is read from its zip (by :mod:`.openhands`)
or unzipped into a folder (:func:`export_of`): ``load()`` of the folder, its ``meta.json`` or
any of its event files. Its responses' usage is worked out from the running totals it holds.

Mapping (record types are the events' ``kind``):

- ``MessageEvent``: the user's prompt is a :class:`UserMessage` (its images kept; ``sender``,
  a parent agent's name, in ``meta``), the agent's reply an :class:`AssistantText`, its
  reasoning (``reasoning_content``, Anthropic ``thinking_blocks``, a Responses
  ``responses_reasoning_item``) :class:`Thinking` before it;
- ``ActionEvent``: the model's tool call (``tool_call``: its id and arguments as the model sent
  them, less the ``security_risk`` and ``summary`` the SDK asks for; a ``summary`` the model
  wrote is kept in ``meta``), after its ``thought`` (text) and reasoning. The file editor's calls
  are named with their command (``file_editor str_replace``). Calls of one response
  (``llm_response_id``) are one batch. ``finish`` is the agent's closing text, ``think`` a
  :class:`Thinking`;
- ``ObservationEvent``: the result of its call (``tool_call_id``, else ``action_id``). Status
  (:func:`status_of`): ``is_error``; a terminal command's exit code (0 success, anything else,
  ``-1`` for "still running" included, error, as for OpenHands V0) or ``timeout``. An edit with
  the file's content before and after is a ``diff``, the task tracker's list a ``todo``, a
  ``task`` a sub-agent's report. Before SDK 1.0 an observation had no ``content`` nor
  ``is_error``: its text is its ``error`` message, else its ``output`` or ``message``; its
  status its ``error`` (a flag for ``ExecuteBashObservation``, whose exit code the model was
  told is ``metadata.exit_code``; a message for the file editor and the browser);
- ``UserRejectObservation``: its call was rejected, by the user or a hook: ``cancelled``;
- ``AgentErrorEvent``: its call failed in the agent (an unknown tool, arguments that do not
  validate): ``error``; one that answers no call is an :class:`AssistantError`;
- ``Condensation``: a :class:`CompactionBoundary` with the condenser's summary;
- ``ConversationErrorEvent``: an :class:`AssistantError`; ``PauseEvent`` a notice;
  ``InterruptEvent`` an :class:`AbortMarker`, the calls still running cancelled;
- ``HookExecutionEvent``: a warning notice when a hook blocked or failed;
- ``ACPToolCallEvent``: a call an ACP agent ran (Claude Code, Codex or Gemini CLI behind
  ``ACPAgent``), named by its ``tool_kind``; the SDK writes it again as it progresses, and the
  last one says how it ended;
- sub-agents: a ``task`` call holds the conversation in ``subagents/`` whose first prompt is the
  call's ``prompt`` (the ``TaskManager`` sends it as is); resuming a task (``resume``) goes on in
  the conversation an earlier call holds. Sub-agents' own sub-agents nest so, down to
  :data:`~turnfold.nesting.MAX_DEPTH` levels: a conversation deeper is not read, and a warning
  names its folder (its call shows its line and result); one that is a link to a conversation
  it is nested in (a folder linked into itself) is not read again, said in a warning too. The
  ``delegate`` tool (SDK 1.0 to 1.22; deprecated for ``task`` in 1.16, removed in 1.23) starts
  agents with a ``spawn`` call (``ids``, ``agent_types``: a plain call, named ``delegate
  spawn``: it runs no agent) and runs them with a ``delegate`` call (``tasks``: agent id to
  task, run at once), whose observation lists each agent's final response
  (``{n}. Agent {id}: …``, or ``… ERROR: …``). Nothing persisted names an agent's conversation: each
  agent's is found by its task, the prompt ``DelegateExecutor`` sends as is, and an agent delegated
  to again goes on in it, so each call gets the round of the conversation its task begins. A call of
  one agent holds it as its sub-agent (its status the agent's: ``error`` for an agent that failed
  though the tool ran); a call of several holds a sub-agent whose transcript has one ``delegate``
  call per agent (one batch, the agent's report its result), each with its agent's round: it
  stands for them (not a run itself: ``is_run``), so a scan counts the agents, not one more. Without
  the conversation (events read alone, an eval output, an SDK before 1.13) a sub-agent says its
  steps are missing and its report is its call's result;
- usage: each response's ``token_usages`` entry goes on its text, else its first reasoning or
  call (:func:`turnfold.usage.attach_usage`), with the response's model; the conversation's own
  totals (``accumulated_token_usage`` but a sub-agent's, the condenser's included) are
  ``metadata["usage"]``, ``accumulated_cost`` ``metadata["cost_usd"]`` when the SDK priced a
  response;
- the active branch: a conversation may fork (``navigate_to``, ``fork``); its events from
  ``leaf_event_id`` back through ``parent_id`` are read, as the agent sees them, the others
  accounted as off the branch. Events written after the head (a ``base_state.json`` saved a
  step behind) that descend from it are read too.
- metadata: ``agent`` ``"openhands"``, ``agent_class`` (``Agent``, ``ACPAgent``),
  ``session_id``, ``model``, ``cwd``, ``execution_status``, ``title``, ``system``.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    NameSet,
    as_int,
    as_list,
    checked_timestamp,
    counted_usage,
    describe_args,
    parse_arguments,
    relative,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine
from turnfold.formats.harnesses.archive import SessionPath
from turnfold.formats.openai_chat import litellm_prompt_tokens
from turnfold.formats.protocol import not_read
from turnfold.formats.source import (
    NotListed,
    Source,
    Unlisted,
    folder_not_listed,
    found_file,
    join_warnings,
    read_file,
    record_limit,
)
from turnfold.formats.wording import failure, notice, result, stop
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import add_into, attach_usage, counts_of

NAME = "openhands-sdk"

BASE_STATE = "base_state.json"
EVENTS = "events"
SUBAGENTS = "subagents"


def _hook_key(outcome: str, hook: bool, tool: bool, said: bool) -> str:
    """The message key of a hook's notice that it blocked an action or failed (``outcome``),
    by whether the event names the hook, the tool and a reason.

    >>> _hook_key("failed", False, True, True)
    'reader.hook_failed.unnamed.tool.said'
    """
    parts = ("" if hook else ".unnamed", ".tool" if tool else "", ".said" if said else "")
    return f"reader.hook_{outcome}{''.join(parts)}"


#: The agent server's ``StoredConversation``: the conversation's title.
META = "meta.json"
#: ``EVENT_NAME_RE`` of ``persistence_const.py``: the writer pads the index to five digits.
EVENT_FILE = re.compile(r"^event-(\d{5,})-[0-9a-fA-F-]{8,}\.json$")
#: An event of the OpenHands app server's export of a conversation
#: (``LiveStatusAppConversationService._stream_conversation_zip``): ``event_{i:06d}_{id}.json``.
EXPORT_EVENT_FILE = re.compile(r"^event_(\d{6,})_[0-9a-fA-F-]{8,}\.json$")
_OFF_BRANCH = "(off the active branch)"
#: ``ROOT_PARENT_ID``: the parent of a root made after ``navigate_to(None)``.
_ROOT = "__root__"
_PAGE = "(page)"

RECORDS = Records(
    mapped={
        "base_state": "the conversation's id, model, working directory, status and active "
        "branch; each response's usage and the cost (stats.usage_to_metrics)",
        "meta": "an app server export's meta.json (AppConversationInfo): the conversation's "
        "id, title and model, its usage and cost",
        "SystemPromptEvent": 'the system prompt: metadata["system"]',
        "MessageEvent": "the user's prompt (UserMessage, its images kept), the agent's reply "
        "(AssistantText) after its reasoning (Thinking); a message of the environment or a "
        "hook a notice",
        "ActionEvent": "a tool call named by its tool (the file editor's with its command), "
        "after its thought (text) and reasoning (Thinking)",
        "ActionEvent/finish": "the finish tool's message: the agent's closing text",
        "ActionEvent/think": "the think tool's thought (Thinking)",
        "ObservationEvent": "the result of its call: a command's output (status by exit code), "
        "an edit's diff, the task list, a sub-agent's report",
        "UserRejectObservation": "its call was rejected by the user or a hook (cancelled)",
        "AgentErrorEvent": "its call failed in the agent (error); an AssistantError when it "
        "answers no call",
        "Condensation": "a compaction boundary with the condenser's summary",
        "ConversationErrorEvent": "the run stopped on an error (AssistantError)",
        "PauseEvent": "a notice: the user paused the agent",
        "InterruptEvent": "an abort marker; the calls still running are cancelled",
        "HookExecutionEvent": "a warning notice: a hook blocked the operation, or failed",
        "ACPToolCallEvent": "a call an ACP agent ran; its later events update it",
        "instance": "an OpenHands V1 eval output's instance (OpenHands/benchmarks EvalOutput, "
        "read by openhands): its id, instruction and test result; its history read as these "
        "events, its metrics as each response's usage and the run's cost",
    },
    ignored={
        "ObservationEvent/finish": "the finish tool's echo of its message, shown once as the "
        "closing text",
        "ObservationEvent/think": "the think tool's acknowledgement",
        "HookExecutionEvent/success": "a hook that ran and stopped nothing",
        "CondensationRequest": "a request to condense; the Condensation is shown",
        "CondensationSummaryEvent": "a condensation's summary as the model reads it; the "
        "Condensation is shown",
        "ConversationStateUpdateEvent": "state sent to remote clients; base_state.json holds it "
        "(an app server export, which has none, reads the last it was sent as its state, and "
        "each response's usage from the difference of two running totals where it is exact)",
        "SecurityAnalysisEvent": "the security analyzer's risk levels of pending actions",
        "TokenEvent": "the token ids of a response (vLLM), no text",
        "LLMCompletionLogEvent": "a raw completion log sent to a remote client",
        "StreamingDeltaEvent": "a streamed fragment of a message recorded whole",
        _OFF_BRANCH: "an event of a branch the conversation left (navigate_to, fork): the "
        "active branch is shown, as the agent sees it",
        _PAGE: "the agent server's page of events: its items are read",
        "instance/other": "the other instances of an eval output: load() shows one "
        "(sample=ID picks it)",
    },
)

#: Every event kind the SDK writes: what detection knows the format by.
EVENT_KINDS = NameSet(
    {
        name.split("/")[0]
        for name in RECORDS.known()
        if not name.startswith(("(", "base")) and name != "meta"
    }
)
#: The file editor's names (``str_replace_editor`` before SDK 1.0).
_EDITORS = NameSet({"file_editor", "planning_file_editor", "str_replace_editor"})
_EDITOR_COMMANDS = NameSet({"view", "create", "str_replace", "insert", "undo_edit"})
#: Arguments the SDK adds to every tool's schema for its own use (``security_risk``) or the
#: model's explanation (``summary``): not what the tool acts on.
_ARG_NOISE = ("security_risk", "summary")
_CLOSING, _THINK, _TASK = "finish", "think", "task"
#: The ``DelegateTool`` of SDK 1.0 to 1.22 (``tools/delegate/``), replaced by ``task``.
_DELEGATE = "delegate"
#: The uses of an LLM a sub-agent's responses are recorded under in the parent's stats:
#: ``TaskManager``'s ``task:<id>``, ``DelegateExecutor``'s ``delegate:<agent id>``.
_SUBAGENT_USES = ("task:", "delegate:")
_TODO_MARKS = {"done": "[x]", "in_progress": "[~]"}
#: ACP tool call statuses (``ToolCallStatus``) that end a call.
_ACP_STATUS: dict[str, ToolStatus] = {"completed": "success", "failed": "error"}
_DATA_URL = re.compile(r"data:(image/[\w.+-]+);base64,(.+)", re.DOTALL)


# --- where a conversation lies ----------------------------------------------------------------


def conversation_of(path: Path, not_listed: NotListed | None = None) -> Path | None:
    """The conversation folder ``path`` is, or is part of (its ``events/``, ``base_state.json``
    or an event file); None for anything else. A folder that cannot be listed or looked into
    is told to ``not_listed`` (without one, it is taken for one that holds nothing:
    :func:`read` asks of the file it reads, which lists no folder).

    >>> conversation_of(Path("/nowhere/base_state.json"))
    PosixPath('/nowhere')
    """
    if path.name == BASE_STATE:
        return path.parent
    if path.parent.name == EVENTS and EVENT_FILE.match(path.name):
        return path.parent.parent
    try:
        if not path.is_dir():
            return None
    except OSError:  # a path that cannot be looked at: opening it says why
        return None
    told = not_listed if not_listed is not None else _taken_for_empty
    if found_file(path / BASE_STATE, told) or _holds_event_files(path / EVENTS, told):
        return path
    if path.name == EVENTS and _holds_event_files(path, told):
        return path.parent
    return None


def _holds_event_files(events: Path, not_listed: NotListed) -> bool:
    """Whether ``events`` is a folder of the SDK's event files: an OpenHands V0 session keeps
    its events in ``events/`` too, named by their number alone (:mod:`.openhands`). One that
    cannot be listed is told to ``not_listed``."""
    try:
        with os.scandir(events) as entries:
            return any(EVENT_FILE.match(entry.name) for entry in entries)
    except (FileNotFoundError, NotADirectoryError):  # no events/: none
        return False
    except OSError as error:
        not_listed(events, error)
        return False


def _taken_for_empty(folder: Path, error: OSError) -> None:
    """Nothing: a folder :func:`conversation_of` could not list for a caller that told it
    none to tell (one asking of a file: no folder is listed then)."""


def export_of(path: Path, not_listed: NotListed | None = None) -> Path | None:
    """The app server's export unzipped into a folder (:func:`read_export`) that ``path`` is, or
    whose ``meta.json`` or event file it is; None for anything else. Told by the names of the
    folder's files: a folder holding an event file named as :data:`EXPORT_EVENT_FILE` is one.
    A folder that cannot be listed is told to ``not_listed`` (without one, it is none).

    >>> export_of(Path("/nowhere/meta.json")) is None
    True
    """
    folder = path.parent if _export_name(path.name) else path
    try:
        with os.scandir(folder) as entries:
            found = exported_files(entry.name for entry in entries)
    except (FileNotFoundError, NotADirectoryError):  # no folder: a file's name alone
        return None
    except OSError as error:
        if not_listed is not None:
            not_listed(folder, error)
        return None
    return folder if found else None


def _export_name(name: str) -> bool:
    return name == META or EXPORT_EVENT_FILE.match(name) is not None


def exported_files(names: Iterable[str]) -> list[str]:
    """Of the names of a folder's files, those of an unzipped export: the file that stands for
    it first (its ``meta.json``, else its first event file), then its event files; empty when
    no name is an export's event file.

    >>> exported_files(["a.txt", "event_000001_0a1b2c3d.json", "meta.json"])
    ['meta.json', 'event_000001_0a1b2c3d.json']
    """
    named = list(names)
    # The prefix first: a walk asks this of every folder's names.
    events = sorted(n for n in named if n.startswith("event_") and EXPORT_EVENT_FILE.match(n))
    if not events:
        return []
    return [META, *events] if META in named else events


def holds_conversation(folder: SessionPath) -> bool:
    """Whether ``folder`` (on disk or in an archive) is a conversation's: its
    ``base_state.json``, or event files in its ``events/``."""
    return (folder / BASE_STATE).is_file() or any(
        EVENT_FILE.match(entry.name) for entry in _listed(folder / EVENTS)
    )


def _listed(
    folder: SessionPath, said: list[str] | None = None, unread: str = "files"
) -> list[SessionPath]:
    """The entries of ``folder`` by name; none when it is not there, or cannot be listed: that
    is said in ``said`` (when given), naming the folder and what in it (``unread``) is not
    read, for the conversation's own folders hold its events and sub-agents."""
    try:
        entries: list[SessionPath] = list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        if said is not None:
            said.append(folder_not_listed(str(folder), error, unread))
        return []
    return sorted(entries, key=lambda entry: entry.name)


def _event_records(
    events: SessionPath, warn: list[str], named: re.Pattern[str] = EVENT_FILE, beside: str = ""
) -> list[tuple[int, Any]]:
    """The events of a log folder (its files ``named`` so) in their order, each as (its index
    + 1, its value or a :class:`MalformedLine`); what the folder holds besides (but the file
    named ``beside``) is said in ``warn``."""
    found: dict[int, SessionPath] = {}
    for path in _listed(events, warn, "event files"):
        match = named.match(path.name)
        if match is not None and path.is_file():  # no pipe is waited on (sibling_files)
            index = int(match.group(1))
            if index in found:
                warn.append(f"{path.name}: a second event file of index {index}, not read")
            else:
                found[index] = path
        elif not path.name.startswith(".") and path.name != beside:  # hidden: the log's lock
            warn.append(f"{path.name} in {events}: not an event file, not read")
    # The first gap is at most len(found): an index named far beyond (event-99999999999-…)
    # must not make this a loop over every number below it.
    first = next(index for index in range(len(found) + 1) if index not in found)
    if found and first < max(found):
        stops = " (the SDK stops there)" if named is EVENT_FILE else ""
        warn.append(
            f"no event file for index {first} of {events}{stops}: the events after it are read"
        )
    return [(index + 1, event_file_value(found[index])) for index in sorted(found)]


def event_file_value(path: SessionPath) -> Any:
    """The JSON of one event's file (on disk or in an archive), or a :class:`MalformedLine`
    saying why it is not read."""
    try:
        size = path.stat().st_size
        if size > record_limit():
            return MalformedLine(
                f"{path.name}: {size:,} bytes, over the limit of "
                f"{record_limit():,} (TURNFOLD_MAX_RECORD_BYTES); not read"
            )
        data = path.read_bytes()
    except OSError as exc:
        return MalformedLine(f"{path.name}: not read: {exc.strerror or exc}")
    if not data.strip():
        return MalformedLine(f"{path.name}: empty")
    try:
        return codec.loads(data)
    except (ValueError, RecursionError) as exc:
        return MalformedLine(f"{path.name}: invalid JSON: {exc}")


def _state_of(folder: SessionPath, warn: list[str]) -> dict[str, Any]:
    """The folder's ``base_state.json``, empty when it has none (an events folder alone)."""
    path = folder / BASE_STATE
    if not path.is_file():
        return {}
    try:
        value = codec.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        warn.append(f"{path}: not read: {exc}")
        return {}
    if not isinstance(value, dict):
        warn.append(f"{path}: not a conversation's state")
        return {}
    return value


# --- detection --------------------------------------------------------------------------------


def _is_state(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A ``ConversationState`` dump: its id, agent (a discriminated model) and workspace."""
    return (
        isinstance(value, MAPPINGS)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("agent"), MAPPINGS)
        and isinstance(value["agent"].get("kind"), str)
        and isinstance(value.get("workspace"), MAPPINGS)
    )


def _is_page(value: Any) -> TypeGuard[Mapping[str, Any]]:
    return (
        isinstance(value, MAPPINGS)
        and isinstance(value.get("items"), list)
        and (
            "next_page_id" in value
            or (bool(value["items"]) and all(map(_classify, value["items"][:5])))
        )
    )


def _classify(value: Any) -> int:
    if isinstance(value, MAPPINGS) and value.get("kind") in EVENT_KINDS:
        return DISTINCTIVE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """A conversation's state, an event (``kind`` an SDK event class), a list or page of them."""
    document = source.document if source.is_document else None
    if _is_state(document):
        return Evidence(share=1.0, marks=1, sampled=1)
    if _is_page(document):
        return Evidence.of(document["items"][:30], _classify, "no OpenHands SDK events")
    if isinstance(document, list):
        return Evidence.of(document[:30], _classify, "no OpenHands SDK events")
    return Evidence.of(source.head_values(), _classify, "no OpenHands SDK events")


def detect_path(path: Path) -> Evidence | None:
    """A conversation folder or its ``events/``; an unzipped export, or its ``meta.json`` or an
    event file of it (:func:`export_of`); None for other files, which are read as JSON."""
    if path.is_file():
        return Evidence(share=1.0, marks=1) if export_of(path) is not None else None
    # A folder (or its events/) that cannot be listed is no sign it is not a conversation.
    unlisted = Unlisted()
    if (conversation_of(path, unlisted) or export_of(path, unlisted)) is not None:
        return Evidence(share=1.0, marks=1)
    unlisted.not_mine(path)
    return None


# --- reading ----------------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """The conversation a ``base_state.json`` or an event file belongs to, read from its folder;
    the unzipped export a ``meta.json`` or an event file of it belongs to (:func:`export_of`);
    else the events ``source`` holds."""
    document = source.document if source.is_document else None
    path = source.path
    exported = export_of(path) if path is not None and _export_name(path.name) else None
    if exported is not None:
        return read_export(exported, source)
    folder = conversation_of(path) if path is not None else None
    if path is not None and folder is not None:
        given = document if _is_state(document) and path.name == BASE_STATE else None
        if given is not None or (folder / EVENTS).is_dir():
            return _conversation(folder, source, given, 0)
    transcript = _new_transcript()
    if _is_state(document):
        reader = _Reader(source, transcript, None, 0)
        reader.state(document)
    else:
        # Which events are on the branch is known only once every event is read: the records
        # are read ahead, then accounted for as the reader reads them again.
        unaccounted = source.accounting.unaccounted
        mark = len(unaccounted)
        records = list(source.records())
        del unaccounted[mark:]
        again = Source(
            source.name,
            iter(records),
            path=source.path,
            warnings=source.warnings,
            accounting=source.accounting,
        )
        reader = _Reader(again, transcript, None, 0)
        reader.branch = _last_event_branch(records, again)
        _feed_all(reader, again.records())
    reader.finish()
    return transcript


def read_path(path: Path) -> Transcript:
    """A conversation from its folder, its ``events/``, its ``base_state.json`` or an event
    file; an unzipped export from its folder, its ``meta.json`` or an event file; a file of
    events from its path (``load(path, format="openhands-sdk")``)."""
    unlisted = Unlisted()
    folder = conversation_of(path, unlisted)
    if folder is not None:
        return _conversation(folder, None, None, 0)
    exported = export_of(path, unlisted)
    if exported is not None:
        source = Source(str(path), iter(()), path=path)
        return source.hand_over(read_export(exported, source))
    if path.is_dir():  # not opened as a file: which conversation it is could not be told
        unlisted.not_mine(path)
    return read_file(path, read)


def is_event(value: Any) -> bool:
    """Whether ``value`` is an SDK event (its class in ``kind``)."""
    return _classify(value) == DISTINCTIVE


def read_history(
    source: Source, transcript: Transcript, history: list[Any], metrics: Any, line: int
) -> None:
    """An OpenHands V1 eval instance's events into ``transcript`` (OpenHands/benchmarks
    ``EvalOutput``: ``history`` is the conversation's events, ``metrics`` the SDK's combined
    ``Metrics`` of its responses); every event is accounted for on the instance's ``line``."""
    reader = _Reader(source, transcript, None, 0)
    if isinstance(metrics, MAPPINGS):
        reader.stats({"agent": metrics})
    records = [(line, event) for event in history]
    reader.branch = _last_event_branch(records, source)
    for event in history:
        try:
            reader.feed(event, line)
        except Exception as exc:  # one event of a shape never seen is lost, not the rest (L-4)
            not_read(source, line, exc)
    reader.finish()


def _new_transcript() -> Transcript:
    return Transcript(metadata={"source_format": NAME, "agent": "openhands"})


def read_conversation(folder: SessionPath, into: Source) -> Transcript:
    """The conversation in ``folder`` (on disk, or in an archive :mod:`.openhands` read), its
    warnings and accounting on ``into``."""
    return _conversation(folder, into, None, 0)


def holds_export(folder: SessionPath) -> bool:
    """Whether ``folder`` (in an archive) is the app server's export of a conversation: event
    files named as :data:`EXPORT_EVENT_FILE` at its top."""
    return any(EXPORT_EVENT_FILE.match(entry.name) for entry in _listed(folder))


def exported_id(folder: SessionPath) -> str | None:
    """The conversation id the ``meta.json`` of an export names, None where it names none."""
    meta = folder / META
    info = event_file_value(meta) if meta.is_file() else None
    found = info.get("id") if isinstance(info, dict) else None
    return found if isinstance(found, str) and found else None


def read_export(folder: SessionPath, into: Source) -> Transcript:
    """The OpenHands app server's export of a conversation (``GET
    /api/v1/app-conversations/<id>/download``), its warnings and accounting on ``into``.

    ``_stream_conversation_zip`` (OpenHands ``openhands/app_server/app_conversation/
    live_status_app_conversation_service.py``) writes ``meta.json``, the ``AppConversationInfo``
    (title, model, the run's ``metrics``: a ``MetricsSnapshot``), then each event the agent
    server sent the app server, in time order, as ``event_{i:06d}_{event id}.json``
    (``event.model_dump(mode="json")``: every field, ``None`` ones too). No
    ``base_state.json``: the state is what the agent server sent as
    ``ConversationStateUpdateEvent``s (the last ``full_state``, then each later key), and the
    head of the active branch is unknown (the branch of the last event is read, as for events
    read without their folder). Its sub-agents' conversations are not in it.

    Its stats are running totals: each response's usage is worked out from them
    (:func:`_exported_usages`) when that is exact for every response; else no response carries
    any (a turn's header would show a part of its tokens as the whole, U-1), the session's total
    counts them all, and a warning says how many responses could not be told apart."""
    said: list[str] = []
    records = _event_records(folder, said, EXPORT_EVENT_FILE, beside=META)
    source = Source(str(folder), iter(records), warnings=into.warnings,
                    accounting=into.accounting)  # fmt: skip
    for reason in said:
        source.warn(reason)
    transcript = _new_transcript()
    reader = _Reader(source, transcript, None, 0)
    _exported_info(folder / META, reader)
    reader.state(_sent_state(records))
    reader.branch = _last_event_branch(records, source)
    _feed_all(reader, source.records())
    worked_out, untold = _exported_usages(records)
    # A full_state sent again holds the responses' own token_usages so far: they win.
    unknown = [r for r in reader.responses if r in untold and r not in reader.usages]
    if not unknown:
        for response, usage in worked_out.items():
            reader.usages.setdefault(response, usage)
    elif transcript.metadata.get("usage"):
        reader.usages.clear()
        source.warn(
            f"{len(unknown)} of {len(reader.responses)} model responses not told apart by the "
            "export's running totals (a stats update missing or shared): no response carries "
            "its usage; the session's total counts them all"
        )
    reader.finish()
    return transcript


#: A ``TokenUsage``'s counts, which a response adds to its LLM's running totals.
_COUNTS = (
    "prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
    "reasoning_tokens",
)  # fmt: skip


def _exported_usages(
    records: list[tuple[int, Any]],
) -> tuple[dict[str, tuple[Usage, str | None]], set[str]]:
    """Each model response's usage in an export, worked out from its stats updates, by
    response id; and the responses whose usage cannot be.

    The agent server sends the conversation's ``stats`` after every response of its LLMs
    (``Telemetry.on_response`` calls the callback of ``EventService._setup_stats_streaming``),
    before the events that response makes (its ``llm_response_id``): each own use's
    ``accumulated_token_usage``, a running total. Its difference from the update before is one
    response's usage when exactly one use changed, by what one response adds (the total's
    ``per_turn_token`` is the last response's prompt and completion tokens), and the events up
    to the next update are one response's. Anything else (no totals before it, several uses
    changed, updates lost or merged) leaves those responses' usage untold. A sub-agent's use
    fires no update of this conversation: it is counted under its call, not here.
    """
    usages: dict[str, tuple[Usage, str | None]] = {}
    untold: set[str] = set()
    before: Mapping[str, Any] | None = None  # the own uses' totals last sent
    spent: tuple[Usage, str | None] | None = None  # what the last update says one response used
    exact = False  # whether the last update tells ``spent`` (None: nothing counted was used)
    window: list[str] = []  # the responses whose events came since the last update

    def close() -> None:
        responses = set(window)
        if exact and len(responses) == 1 and spent is not None:
            (response,) = responses
            usage, model = spent
            usage.response_id = response
            usages[response] = (usage, model)
        elif not exact or len(responses) > 1:
            untold.update(responses)

    for event in _events_of(records):
        if event.get("kind") == "ConversationStateUpdateEvent":
            key, value = event.get("key"), _mapping(event.get("value"))
            if key not in (_FULL_STATE, "stats"):
                continue
            close()
            window = []
            uses = (value.get("stats") if key == _FULL_STATE else value) or {}
            now = _own_uses(uses)
            exact, spent = _spent(before, now) if key == "stats" else (False, None)
            before = now
        elif isinstance(event.get("llm_response_id"), str) and event["llm_response_id"]:
            window.append(event["llm_response_id"])
    close()
    return usages, untold


def _own_uses(stats: Any) -> Mapping[str, Any] | None:
    """The uses of the conversation's own LLMs in a ``ConversationStats`` (``usage_to_metrics``),
    a sub-agent's left out; None for no stats."""
    uses = _mapping(stats).get("usage_to_metrics")
    if not isinstance(uses, MAPPINGS):
        return None
    return {
        str(use): metrics
        for use, metrics in uses.items()
        if not str(use).startswith(_SUBAGENT_USES) and isinstance(metrics, MAPPINGS)
    }


def _totals(metrics: Any) -> dict[str, int]:
    usage = _mapping(_mapping(metrics).get("accumulated_token_usage"))
    return {name: as_int(usage.get(name)) or 0 for name in _COUNTS}


def _spent(
    before: Mapping[str, Any] | None, now: Mapping[str, Any] | None
) -> tuple[bool, tuple[Usage, str | None] | None]:
    """Whether what one response used is known from two stats updates' running totals, and
    that usage and its model (None when it used nothing counted)."""
    if before is None or now is None:
        return False, None
    changed = [use for use in before.keys() | now.keys()
               if _totals(before.get(use)) != _totals(now.get(use))]  # fmt: skip
    if not changed:
        return True, None
    if len(changed) > 1:
        return False, None
    (use,) = changed
    then, total = _totals(before.get(use)), _totals(now.get(use))
    delta = {name: total[name] - then[name] for name in _COUNTS}
    last = as_int(_mapping(_mapping(now.get(use)).get("accumulated_token_usage")).get(
        "per_turn_token"))  # fmt: skip
    one = last is None or last == delta["prompt_tokens"] + delta["completion_tokens"]
    if not one or min(delta.values()) < 0:
        return False, None
    usage = _usage(delta)
    model = _str(_mapping(now.get(use)).get("model_name"))
    return (True, (usage, model)) if usage is not None else (False, None)


def _exported_info(path: SessionPath, reader: _Reader) -> None:
    """An export's ``meta.json`` (``AppConversationInfo``) as H-6 metadata: the state the
    agent server sent, read after it, says more where it says anything (each response's
    usage, the working directory)."""
    if not path.is_file():
        return
    info = event_file_value(path)
    if isinstance(info, MalformedLine) or not isinstance(info, MAPPINGS):
        reason = info.reason if isinstance(info, MalformedLine) else "not an object"
        reader.source.warn(f"{path}: not read ({reason})", record_type="meta")
        return
    reader.source.note("meta", "mapped")
    metadata = reader.transcript.metadata
    for key, name in (("id", "session_id"), ("title", "title"), ("llm_model", "model")):
        if isinstance(info.get(key), str) and info[key].strip():
            metadata[name] = info[key].strip()
    metrics = _mapping(info.get("metrics"))
    totals = counts_of(_usage(metrics.get("accumulated_token_usage")))
    if totals:
        metadata["usage"] = totals
    cost = metrics.get("accumulated_cost")
    # A snapshot keeps no per-response costs: 0.0 is also what a model litellm has no price
    # for costs, so only a cost above it is one (L-3).
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
        metadata["cost_usd"] = float(cost)


#: ``ConversationStateUpdateEvent``: the agent server's ``key`` for the whole state.
_FULL_STATE = "full_state"


def _sent_state(records: list[tuple[int, Any]]) -> dict[str, Any]:
    """The conversation's state as the agent server last sent it in its events: the last
    ``full_state``, then each key sent after it (``stats``, ``execution_status`` ...)."""
    state: dict[str, Any] = {}
    for event in _events_of(records):
        if event.get("kind") != "ConversationStateUpdateEvent":
            continue
        key, value = event.get("key"), event.get("value")
        if key == _FULL_STATE and isinstance(value, MAPPINGS):
            state = dict(value)
        elif isinstance(key, str) and key != _FULL_STATE:
            state[key] = value
    return state


def _conversation(
    folder: SessionPath,
    into: Source | None,
    state: Mapping[str, Any] | None,
    depth: int,
    within: frozenset[str] = frozenset(),
) -> Transcript:
    """The conversation in ``folder``, ``depth`` sub-agents deep, nested in the conversations
    whose real paths are ``within``; its warnings and accounting go to ``into`` (the source
    ``load()`` opened), else onto the transcript."""
    said: list[str] = []
    if state is None:
        state = _state_of(folder, said)
    records = _event_records(folder / EVENTS, said)
    events = folder / EVENTS
    source = Source(
        str(events),
        iter(records),
        path=events if isinstance(events, Path) else None,  # an archive's names open nothing
        warnings=into.warnings if into is not None else None,
        accounting=into.accounting if into is not None else None,
    )
    for reason in said:
        source.warn(reason)
    transcript = _new_transcript()
    reader = _Reader(source, transcript, folder, depth, within)
    reader.state(state)
    meta = folder / META
    stored = event_file_value(meta) if meta.is_file() else None  # it only adds the title
    title = stored.get("title") if isinstance(stored, dict) else None
    if isinstance(title, str) and title.strip():
        transcript.metadata["title"] = title.strip()
    reader.branch = _active_branch(records, state.get("leaf_event_id"), source)
    _feed_all(reader, source.records())
    reader.finish()
    return source.hand_over(transcript) if into is None else transcript


def _feed_all(reader: _Reader, records: Iterator[tuple[int, Any]]) -> None:
    source = reader.source
    for line, record in records:
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        try:
            reader.feed(record, line)
        except Exception as exc:  # one event of a shape never seen is lost, not the rest (L-4)
            not_read(source, line, exc)


#: Events that are no node of the conversation's tree (``ConversationState.append_event`` does
#: not move the head to them; ``_resolve_active_leaf`` passes over them).
_NOT_NODES = NameSet({"ConversationStateUpdateEvent", "ConversationErrorEvent"})


def _events_of(records: list[tuple[int, Any]]) -> Iterator[Mapping[str, Any]]:
    """The events of ``records`` in log order, a page's items in its place."""
    for _, value in records:
        if _is_page(value):
            yield from (item for item in value["items"] if isinstance(item, MAPPINGS))
        elif isinstance(value, MAPPINGS):
            yield value


def _last_event_branch(records: list[tuple[int, Any]], source: Source) -> set[str] | None:
    """The branch of the last event, for events read without their ``base_state.json``.

    The head the SDK keeps there is the last event appended, except after a ``navigate_to``
    with nothing appended since: the events cannot tell that. So the branch of the last event
    is read (the SDK's own rule for a conversation with no head, ``_resolve_active_leaf``) and
    a load of events that fork says which branch it chose; None when nothing forks.
    """
    leaf = next(
        (
            event.get("id")
            for event in reversed(list(_events_of(records)))
            if event.get("kind") not in _NOT_NODES and isinstance(event.get("id"), str)
        ),
        None,
    )
    branch = _active_branch(records, leaf, source, partial=True)
    if branch is None:
        return None
    off = sum(
        1
        for event in _events_of(records)
        if event.get("kind") not in _NOT_NODES and not _on(event.get("id"), branch)
    )
    if not off:
        return None  # only bookkeeping events sit beside the branch: nothing forks
    source.warn(
        f"these events fork (navigate_to, fork) and no base_state.json says which branch is "
        f"active: the branch of the last event is shown, {off} event(s) of the others are not"
    )
    return branch


def _active_branch(
    records: list[tuple[int, Any]], leaf: Any, source: Source, *, partial: bool = False
) -> set[str] | None:
    """The ids of the events on the active branch (``EventLog.path_to_root`` from the head, by
    ``_effective_parent_id``: an event without a ``parent_id`` follows the one before it); None
    when every event is on it (no head, or a chain that breaks: then nothing is hidden).
    ``partial``: the events may begin mid-log (a page of them), so a parent not among them ends
    the branch instead of breaking it."""
    parents: dict[str, str | None] = {}  # in log order
    last: str | None = None
    for value in _events_of(records):
        event_id = value.get("id")
        if isinstance(event_id, str):
            parent = value.get("parent_id")
            parent = parent if isinstance(parent, str) else last
            parents[event_id] = None if parent == _ROOT else parent
            last = event_id
    if not isinstance(leaf, str) or leaf not in parents:
        return None
    branch: set[str] = set()
    current: str | None = leaf
    while current is not None:
        if partial and current not in parents and current not in branch:
            break  # the events begin below this ancestor
        if current in branch or current not in parents:
            source.warn(f"the active branch breaks at event {current}: every event is read")
            return None
        branch.add(current)
        current = parents[current]
    # Events written after the head (a base_state.json saved a step behind) that descend
    # from it are on the branch too; a child comes after its parent in the log. One whose
    # parent is an ancestor of the head forks off it instead, and is not.
    ids = list(parents)
    descendants = {leaf}
    for event_id in ids[ids.index(leaf) + 1 :]:
        if parents[event_id] in descendants:
            descendants.add(event_id)
    branch |= descendants
    return None if len(branch) == len(parents) else branch


class _Reader:
    """One conversation's events into its transcript."""

    def __init__(
        self,
        source: Source,
        transcript: Transcript,
        folder: SessionPath | None,
        depth: int,
        within: frozenset[str] = frozenset(),
    ) -> None:
        self.source = source
        self.transcript = transcript
        self.folder = folder
        self.depth = depth
        real = _real(folder) if folder is not None else None
        #: The real paths of this conversation's folder and those it is nested in: a
        #: sub-agent's folder among them is a link back up, read already (:meth:`_subagents`).
        self.within = within if real is None else within | {real}
        #: The first prompts of the sub-agents' conversations not read (nested too deep, or
        #: linked into themselves): a call of one holds its steps there, not missing.
        self.unread: set[str] = set()
        self.branch: set[str] | None = None
        self.cwd: str | None = None
        self.calls: dict[str, ToolCall] = {}  # by tool_call_id
        self.by_action: dict[str, ToolCall] = {}  # by the ActionEvent's id
        self.closing: dict[str, str] = {}  # finish and think: their tool by tool_call_id
        self.responses: dict[str, list[Entry]] = {}  # each response's entries, by its id
        self.usages: dict[str, tuple[Usage, str | None]] = {}  # its usage and model, by its id
        self.tasks: list[ToolCall] = []
        #: ``delegate`` calls of the ``delegate`` command, each with its (agent id, task) pairs.
        self.delegations: list[tuple[ToolCall, list[tuple[str, str]]]] = []
        self.agent_types: dict[str, str] = {}  # by agent id, from the ``spawn`` calls

    # --- the state --------------------------------------------------------------------------

    def state(self, state: Mapping[str, Any]) -> None:
        """What ``base_state.json`` says of the conversation (``ConversationState``)."""
        if not state:
            return
        self.source.note("base_state", "mapped")
        metadata = self.transcript.metadata
        if isinstance(state.get("id"), str):
            metadata["session_id"] = state["id"]
        agent = _mapping(state.get("agent"))
        if isinstance(agent.get("kind"), str):
            metadata["agent_class"] = agent["kind"]
        model = _mapping(agent.get("llm")).get("model")
        if isinstance(model, str) and model:
            metadata["model"] = model
        cwd = _mapping(state.get("workspace")).get("working_dir")
        if isinstance(cwd, str) and cwd:
            self.cwd = metadata["cwd"] = cwd
        if isinstance(state.get("execution_status"), str):
            metadata["execution_status"] = state["execution_status"]
        self.stats(_mapping(_mapping(state.get("stats")).get("usage_to_metrics")))

    def stats(self, uses: Mapping[str, Any]) -> None:
        """Each response's usage by its id; the conversation's own totals and its cost."""
        own: dict[str, int] = {}
        cost, priced = 0.0, False
        for use, metrics in uses.items():
            if not isinstance(metrics, MAPPINGS):
                continue
            for item in as_list(metrics.get("token_usages")):
                usage = _usage(item)
                if usage is not None and usage.response_id is not None:
                    self.usages[usage.response_id] = (usage, _str(item.get("model")))
            spent = metrics.get("accumulated_cost")
            if isinstance(spent, (int, float)) and not isinstance(spent, bool):
                cost += float(spent)
                priced = priced or bool(as_list(metrics.get("costs")))
            if not str(use).startswith(_SUBAGENT_USES):  # a sub-agent's, counted under its call
                add_into(own, counts_of(_usage(metrics.get("accumulated_token_usage"))))
        if own:
            self.transcript.metadata["usage"] = own
        if priced:  # accumulated_cost is 0.0 for a model litellm has no price for: no cost
            self.transcript.metadata["cost_usd"] = cost

    # --- events -----------------------------------------------------------------------------

    def feed(self, event: Any, line: int) -> None:
        """Read one event (accounted for by its ``kind``)."""
        if not isinstance(event, MAPPINGS):
            self.source.warn("event is not an object", line, record_type="(event)")
            return
        kind = event.get("kind")
        if _is_page(event):
            self.source.ignored(_PAGE)
            for item in event["items"]:
                try:
                    self.feed(item, line)
                except Exception as exc:
                    not_read(self.source, line, exc)
            return
        if self.branch is not None and not _on(event.get("id"), self.branch):
            self.source.ignored(_OFF_BRANCH)
            return
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, event, line)
        elif isinstance(kind, str) and kind in EVENT_KINDS:
            self.source.ignored(kind)
        else:
            name = kind if isinstance(kind, str) else "(event)"
            self.source.warn(f"unknown event kind {kind!r} skipped", line, record_type=name)

    def _stamp(self, event: Mapping[str, Any], line: int) -> str | None:
        """An event's ``timestamp``; one that is no time is left out, said on its line."""
        named = _str(event.get("id"))
        what = f"event {named[:80]}" if named else f"a {event.get('kind')} event"
        return warned_timestamp(event.get("timestamp"), checked_timestamp,
                                lambda reason: self.source.warn(reason, line), what,
                                name="timestamp")  # fmt: skip

    def _system(self, event: Mapping[str, Any], line: int) -> None:
        text = _text_of(event.get("system_prompt"))
        if text:
            self.transcript.metadata.setdefault("system", text)
        self.source.mapped("SystemPromptEvent")

    def _message(self, event: Mapping[str, Any], line: int) -> None:
        message = _mapping(event.get("llm_message"))
        stamp = self._stamp(event, line)
        text, images, remote = _content(message.get("content"))
        meta: dict[str, Any] = {"image_urls": remote} if remote else {}
        skills = [s for s in as_list(event.get("activated_skills")) if isinstance(s, str)]
        if skills:
            meta["activated_skills"] = skills
        who = event.get("source")
        if who == "user" or (who is None and message.get("role") == "user"):
            sender = event.get("sender")
            if isinstance(sender, str) and sender:
                meta["sender"] = sender
            self.transcript.append(
                UserMessage(text=text, images=images, timestamp=stamp, meta=meta)
            )
        elif who == "agent" or (who is None and message.get("role") == "assistant"):
            response = _str(event.get("llm_response_id"))
            entries: list[Entry] = [*_thinking(message, stamp)]
            if text or images:
                entries.append(AssistantText(text=text, images=images, timestamp=stamp, meta=meta))
            self._append(entries, response)
        else:
            subtype = who if isinstance(who, str) else None
            self.transcript.append(
                SystemNotice(text=text, subtype=subtype, timestamp=stamp, meta=meta)
            )
            if images:  # a notice has no images (its image_urls are in meta): said lost
                self.source.warn(
                    f"{len(images)} image(s) of a {subtype or 'system'} message not shown",
                    line,
                    record_type="MessageEvent",
                )
                return
        self.source.mapped("MessageEvent")

    def _action(self, event: Mapping[str, Any], line: int) -> None:
        stamp = self._stamp(event, line)
        response = _str(event.get("llm_response_id"))
        entries: list[Entry] = [*_thinking(event, stamp)]
        thought, _, _ = _content(event.get("thought"))
        if thought:
            entries.append(AssistantText(text=thought, timestamp=stamp))
        tool = event.get("tool_call")
        tool = tool if isinstance(tool, MAPPINGS) else {}
        name = _str(event.get("tool_name")) or _str(tool.get("name")) or "(unnamed)"
        call_id = _str(event.get("tool_call_id")) or _str(tool.get("id"))
        raw = parse_arguments(tool.get("arguments"))
        if not isinstance(raw, MAPPINGS) and isinstance(event.get("action"), MAPPINGS):
            raw = {k: v for k, v in event["action"].items() if k != "kind"}
        args = (
            {k: v for k, v in raw.items() if k not in _ARG_NOISE}
            if isinstance(raw, MAPPINGS)
            else raw
        )
        if name in (_CLOSING, _THINK):
            said = (
                _str(args.get("message" if name == _CLOSING else "thought"))
                if isinstance(args, MAPPINGS)
                else None
            )
            if said and name == _CLOSING:
                entries.append(AssistantText(text=said, timestamp=stamp))
            elif said:
                entries.append(Thinking(text=said, timestamp=stamp))
            if call_id is not None:
                self.closing[call_id] = name
            self._append(entries, response)
            self.source.mapped(f"ActionEvent/{name}")
            return
        command = args.get("command") if isinstance(args, MAPPINGS) else None
        if name in _EDITORS and command in _EDITOR_COMMANDS:
            name = f"{name} {command}"
        elif name == _DELEGATE and command == "spawn":
            # Spawning only registers agents (the delegate command runs them): no sub-agent's
            # run, so not named as the delegation that is one (spec F-7).
            name = f"{name} {command}"
        meta: dict[str, Any] = {}
        summary = raw.get("summary") if isinstance(raw, MAPPINGS) else None
        if isinstance(summary, str) and summary.strip():
            meta["summary"] = summary.strip()
        call_id = call_id or _str(event.get("id")) or f"call-{line}"
        tool = _str(event.get("tool_name"))
        task = tool == _TASK and isinstance(args, MAPPINGS)
        delegated = self._delegated(args) if tool == _DELEGATE else []
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args, self.cwd),
            status="unknown",
            batch_id=response or call_id,
            started_at=stamp,
            timestamp=stamp,
            meta=meta,
            subagent=SubAgent(
                name=_str(args.get("subagent_type")),
                task=_str(args.get("prompt")),
                agent_id=_str(args.get("resume")),
            )
            if task
            else self._delegation(delegated)
            if delegated
            else None,
        )
        if tool == _DELEGATE and isinstance(args, MAPPINGS):
            ids = [i for i in as_list(args.get("ids")) if isinstance(i, str)] or [
                i for i, _ in delegated
            ]
            if command == "spawn" and ids:
                call.description = ", ".join(ids)
            elif command == "delegate" and ids:
                call.description = f"{command} {', '.join(ids)}"
        if task:
            self.tasks.append(call)
        if delegated:
            self.delegations.append((call, delegated))
        entries.append(call)
        self._append(entries, response)
        self.calls[call_id] = call
        if isinstance(event.get("id"), str):
            self.by_action[event["id"]] = call
        self.source.mapped("ActionEvent")

    def _delegated(self, args: Any) -> list[tuple[str, str]]:
        """The (agent id, task) pairs a ``delegate`` call hands out (its ``delegate`` command's
        ``tasks``, in their order); a ``spawn`` call's agent types are kept for their names."""
        if not isinstance(args, MAPPINGS):
            return []
        if args.get("command") == "spawn":
            types = as_list(args.get("agent_types"))
            for index, agent in enumerate(as_list(args.get("ids"))):
                kind = types[index] if index < len(types) else None
                if isinstance(agent, str):
                    # DelegateExecutor._resolve_agent_type: a missing or blank type is "default"
                    kind = kind.strip() if isinstance(kind, str) else ""
                    self.agent_types[agent] = kind or "default"
            return []
        tasks = args.get("tasks") if args.get("command") == "delegate" else None
        if not isinstance(tasks, MAPPINGS):
            return []
        return [
            (agent, task.strip())
            for agent, task in tasks.items()
            if isinstance(agent, str) and isinstance(task, str)
        ]

    def _label(self, agent: str) -> str:
        """An agent's name as ``DelegateExecutor._format_agent_label`` gives it: its id and the
        type it was spawned as."""
        kind = self.agent_types.get(agent)
        return f"{agent} ({kind})" if kind else agent

    def _delegation(self, delegated: list[tuple[str, str]]) -> SubAgent:
        """A ``delegate`` call's sub-agent until its conversations are found (:meth:`finish`):
        the one agent it ran, or, for several run at once, the delegation itself."""
        if len(delegated) == 1:
            ((agent, task),) = delegated
            return SubAgent(name=self._label(agent), task=task, agent_id=agent)
        return SubAgent(
            task=", ".join(agent for agent, _ in delegated),
            subagent_count=len(delegated),
            is_run=False,  # the agents ran in threads, each its own conversation
        )

    def _append(self, entries: list[Entry], response: str | None) -> None:
        self.transcript.extend(entries)
        if response is not None:
            self.responses.setdefault(response, []).extend(entries)

    def _call_of(self, event: Mapping[str, Any]) -> ToolCall | None:
        call_id, action = event.get("tool_call_id"), event.get("action_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None and isinstance(action, str):
            call = self.by_action.get(action)
        return call

    def _observation(self, event: Mapping[str, Any], line: int) -> None:
        observation = _mapping(event.get("observation"))
        call = self._call_of(event)
        if call is None:
            call_id, tool = event.get("tool_call_id"), event.get("tool_name")
            closing = self.closing.get(call_id) if isinstance(call_id, str) else None
            closing = closing or (tool if tool in (_CLOSING, _THINK) else None)
            if closing is not None:
                self.source.ignored(f"ObservationEvent/{closing}")
                return
            self.source.warn(
                "an observation of no known call skipped", line, record_type="ObservationEvent"
            )
            return
        result = self._result(call, observation)
        stamp = self._stamp(event, line)
        self.transcript.update(call, status=status_of(observation), result=result, ended_at=stamp)
        task_id = observation.get("task_id")
        if call.subagent is not None and isinstance(task_id, str):
            agent = dataclasses.replace(call.subagent, agent_id=task_id)
            self.transcript.update(call, subagent=agent)
        self.source.mapped("ObservationEvent")

    def _result(self, call: ToolCall, observation: Mapping[str, Any]) -> ToolResult:
        text, images, _ = _content(observation.get("content"))
        kind = observation.get("kind")
        if "content" not in observation:
            text = _early_text(observation)
        if kind in _TERMINAL:
            # What the model read: the runtime's prefix and suffix (the exit code, a timeout).
            metadata = _mapping(observation.get("metadata"))
            prefix, suffix = metadata.get("prefix"), metadata.get("suffix")
            prefix = prefix if isinstance(prefix, str) else ""
            suffix = suffix if isinstance(suffix, str) else ""
            text = f"{prefix}{text}{suffix}".strip()
        if observation.get("is_error") is not True:
            diff = _edit_diff(observation, self.cwd)
            if diff is not None:
                return ToolResult(text=diff, kind="diff")
            todos = observation.get("task_list")
            if kind == "TaskTrackerObservation" and isinstance(todos, list):
                return ToolResult(text=_checklist(todos) or text, kind="todo", structured=todos)
        if call.subagent is not None:
            return ToolResult(text=text, kind="subagent", images=images)
        return text_result(text, images=images)

    def _rejection(self, event: Mapping[str, Any], line: int) -> None:
        call = self._call_of(event)
        if call is None:
            self.source.warn(
                "a rejection of no known call skipped", line, record_type="UserRejectObservation"
            )
            return
        reason = _str(event.get("rejection_reason"))
        by = _str(event.get("rejection_source"))
        meta = {**call.meta, "rejected_by": by} if by else call.meta
        self.transcript.update(
            call,
            status="cancelled",
            result=text_result(reason) if reason else result("reader.rejected"),
            meta=meta,
            ended_at=self._stamp(event, line),
        )
        self.source.mapped("UserRejectObservation")

    def _agent_error(self, event: Mapping[str, Any], line: int) -> None:
        said = _str(event.get("error"))
        stamp = self._stamp(event, line)
        call = self._call_of(event)
        if call is None:
            self.transcript.append(
                AssistantError(message=said, timestamp=stamp) if said
                else failure("reader.error", timestamp=stamp)
            )  # fmt: skip
        else:
            told = text_result(said) if said else result("reader.error")
            self.transcript.update(call, status="error", result=told, ended_at=stamp)
        self.source.mapped("AgentErrorEvent")

    def _condensation(self, event: Mapping[str, Any], line: int) -> None:
        forgotten = as_list(event.get("forgotten_event_ids"))
        self.transcript.append(
            CompactionBoundary(
                summary=_str(event.get("summary")),
                trigger="condenser",
                timestamp=self._stamp(event, line),
                meta={"forgotten_events": len(forgotten)} if forgotten else {},
            )
        )
        self.source.mapped("Condensation")

    def _conversation_error(self, event: Mapping[str, Any], line: int) -> None:
        code = _str(event.get("code"))
        said = _str(event.get("detail")) or code
        stamp = self._stamp(event, line)
        meta = {"code": code} if code else {}
        self.transcript.append(
            AssistantError(message=said, timestamp=stamp, meta=meta) if said
            else failure("reader.conversation_stopped_on_error", timestamp=stamp, meta=meta)
        )  # fmt: skip
        self.source.mapped("ConversationErrorEvent")

    def _pause(self, event: Mapping[str, Any], line: int) -> None:
        self.transcript.append(
            notice(
                "reader.user_paused_agent",
                subtype="pause",
                timestamp=self._stamp(event, line),
            )
        )
        self.source.mapped("PauseEvent")

    def _interrupt(self, event: Mapping[str, Any], line: int) -> None:
        stamp = self._stamp(event, line)
        for call in self.calls.values():
            if call.result is None and call.status == "unknown":
                self.transcript.update(call, status="cancelled", ended_at=stamp)
        self.transcript.append(stop("reader.interrupted", timestamp=stamp))
        self.source.mapped("InterruptEvent")

    def _hook(self, event: Mapping[str, Any], line: int) -> None:
        hook = _str(event.get("hook_event_type"))
        tool = _str(event.get("tool_name"))
        if event.get("blocked") is True:
            said, outcome = _str(event.get("reason")), "blocked"
        elif event.get("success") is False:
            said, outcome = _str(event.get("error")) or _str(event.get("stderr")), "failed"
        else:
            self.source.ignored("HookExecutionEvent/success")
            return
        self.transcript.append(
            notice(
                _hook_key(outcome, bool(hook), bool(tool), bool(said)),
                {"hook": hook, "tool": tool, "said": said},
                level="warning",
                subtype="hook",
                timestamp=self._stamp(event, line),
            )
        )
        self.source.mapped("HookExecutionEvent")

    def _acp(self, event: Mapping[str, Any], line: int) -> None:
        call_id = _str(event.get("tool_call_id")) or f"acp-{line}"
        stamp = self._stamp(event, line)
        status = _ACP_STATUS.get(str(event.get("status")), "unknown")
        if event.get("is_error") is True:
            status = "error"
        output = event.get("raw_output")
        text = output if isinstance(output, str) else stringify(output) if output else None
        if text is None:
            text, _, _ = _content(
                [_mapping(b).get("content", b) for b in as_list(event.get("content"))]
            )
        result = text_result(text) if text or status != "unknown" else None
        call = self.calls.get(call_id)
        if call is None:
            name = _str(event.get("tool_kind")) or "acp_tool"
            args = event.get("raw_input")
            call = ToolCall(
                call_id=call_id,
                name=name,
                args=args,
                status=status,
                result=result,
                description=_str(event.get("title")) or describe_args(name, args, self.cwd),
                batch_id=call_id,
                started_at=stamp,
                timestamp=stamp,
            )
            self.transcript.append(call)
            self.calls[call_id] = call
        else:
            ended = stamp if status != "unknown" else None
            self.transcript.update(
                call, status=status, result=result or call.result, ended_at=ended
            )
        self.source.mapped("ACPToolCallEvent")

    # --- the end ----------------------------------------------------------------------------

    def finish(self) -> None:
        """Each response's usage on its entries; each task and delegate call's sub-agent."""
        for response, entries in self.responses.items():
            usage, model = self.usages.get(response, (None, None))
            attach_usage(entries, usage, self.transcript, model=model)
            for entry in entries:
                if model is not None and isinstance(entry, AssistantText):
                    self.transcript.update(entry, model=model)
        if self.tasks or self.delegations:
            self._subagents()

    def _subagents(self) -> None:
        """Each sub-agent call's conversation (``subagents/<id hex>/``), found by its prompt.

        A ``task`` call's conversation is the one whose first prompt is the call's ``prompt``;
        a call that resumes a task goes on in that one's. A ``delegate`` call's agents each get
        the round of their conversation that begins with their task: an agent delegated to again
        goes on in the conversation it was spawned with, a later prompt of it.
        """
        children: list[_Child] = []
        folder = self.folder / SUBAGENTS if self.folder is not None else None
        if folder is not None and folder.is_dir():
            said: list[str] = []
            for path in _listed(folder, said, "sub-agents' conversations"):
                if path.is_dir() and (path / EVENTS).is_dir():
                    child = self._child(path)
                    if child is not None:
                        children.append(child)
            for reason in said:  # its calls' steps then said missing, as a file gone is
                self.source.warn(reason)
        # Folders are named by a random id: two calls with one prompt find their own
        # conversations only in the order they were started (the SDK's ISO timestamps sort).
        children.sort(key=lambda c: _started(c.transcript))
        for call in self.tasks:
            subagent = call.subagent
            assert subagent is not None
            match = next(
                (
                    c
                    for c in children
                    if not c.taken and subagent.task is not None and c.prompt(0) == subagent.task
                ),
                None,
            )
            if match is not None:
                match.taken, match.claimed = True, len(match.prompts)
                found = dataclasses.replace(
                    subagent,
                    transcript=match.transcript,
                    tool_count=len(match.transcript.tool_calls()),
                )
            elif isinstance(call.args, MAPPINGS) and call.args.get("resume"):
                continue  # its steps are in the conversation of the call it resumes
            elif subagent.task in self.unread:
                continue  # a conversation not read holds its steps, as a warning says
            else:
                found = dataclasses.replace(subagent, steps_missing=True)
            self.transcript.update(call, subagent=found)
        bound: dict[str, _Child] = {}  # each agent id's conversation, once it has run
        for call, delegated in self.delegations:
            self._delegated_rounds(call, delegated, children, bound)
        for child in children:
            session = child.transcript.metadata.get("session_id")
            if not child.taken:
                if child.transcript.entries:  # a spawned agent never delegated to has none
                    self.source.warn(
                        f"sub-agent conversation {session} answers no task or delegate call: "
                        "not shown"
                    )
            elif child.claimed < len(child.prompts):
                self.source.warn(
                    f"sub-agent conversation {session}: {len(child.prompts) - child.claimed} "
                    "prompt(s) answer no delegate call: not shown"
                )

    def _child(self, path: SessionPath) -> _Child | None:
        """The sub-agent's conversation in ``path`` (a folder of ``subagents/``), read down to
        :data:`~turnfold.nesting.MAX_DEPTH` levels: one deeper, or a link to a conversation
        this one is nested in, is named in a warning and not read (None), its first prompt
        kept so that its call does not say its steps are missing."""
        named = f"sub-agent conversation {SUBAGENTS}/{path.name}"
        real = _real(path)
        if real is not None and real in self.within:
            # Checked before the depth: read again, it would nest in itself down to the bound.
            self.source.warn(
                f"{named} is a link to {real}, a conversation it is nested in (a folder "
                "linked into itself): not read again"
            )
        elif self.depth >= MAX_DEPTH:
            self.source.warn(
                too_deep(named, self.depth + 1, "it loads as a conversation of its own")
            )
        else:
            conversation = _conversation(path, None, None, self.depth + 1, self.within)
            _report(str(path), conversation)
            if not conversation.entries:
                # Nested under no call (it answers none): what its load says (its events not
                # listed, say) is said among the lead's warnings, or nowhere.
                join_warnings(self.source.warnings, conversation.warnings)
            return _Child(conversation)
        prompt = _first_prompt(path / EVENTS)
        if prompt is not None:
            self.unread.add(prompt)
        return None

    def _delegated_rounds(
        self,
        call: ToolCall,
        delegated: list[tuple[str, str]],
        children: list[_Child],
        bound: dict[str, _Child],
    ) -> None:
        """A ``delegate`` call's agents, each with its round and its report (the call's
        result); of several agents, one ``delegate`` call each in the call's sub-agent."""
        reports = _reports(call.result.text if call.result is not None else None, delegated)
        agents: list[Entry] = []
        for agent, task in delegated:
            child = bound.get(agent)
            if child is None or child.prompt(child.claimed) != task:
                # Spawned (again): a conversation none ran before, whose first prompt is it.
                child = next((c for c in children if not c.taken and c.prompt(0) == task), None)
            round_ = child.next_round() if child is not None else None
            if child is not None:
                bound[agent] = child
            status, report = reports.get(agent, (None, None))
            first_line = report.split("\n", 1)[0] if report else None
            subagent = SubAgent(
                name=self._label(agent),
                task=task,
                agent_id=agent,
                transcript=round_,
                tool_count=len(round_.tool_calls()) if round_ is not None else None,
                reason=first_line if status == "error" else None,
                steps_missing=round_ is None and task not in self.unread,
            )
            if len(delegated) == 1:
                if status == "error":  # the agent failed, though the tool ran
                    self.transcript.update(call, status="error")
                self.transcript.update(call, subagent=subagent)
                return
            stamps = [e.timestamp for e in (round_.entries if round_ else []) if e.timestamp]
            agents.append(
                ToolCall(
                    call_id=f"{call.call_id}/{agent}",
                    name=_DELEGATE,
                    args={"id": agent, "task": task},
                    description=subagent.name,
                    status=status or call.status,
                    result=ToolResult(text=report, kind="subagent") if report else None,
                    batch_id=call.call_id,  # the agents of one call run at once
                    started_at=stamps[0] if stamps else call.started_at,
                    ended_at=stamps[-1] if stamps else call.ended_at,
                    timestamp=stamps[0] if stamps else call.started_at,
                    subagent=subagent,
                )
            )
        assert call.subagent is not None
        child_transcript = Transcript(
            agents, metadata={"source_format": NAME, "agent": "openhands"}
        )
        self.transcript.update(
            call, subagent=dataclasses.replace(call.subagent, transcript=child_transcript)
        )


@dataclasses.dataclass
class _Child:
    """A sub-agent's conversation in ``subagents/`` and how much of it calls have claimed."""

    transcript: Transcript
    taken: bool = False
    claimed: int = 0  # its prompts (rounds) claimed so far, in order
    prompts: list[int] = dataclasses.field(default_factory=list)  # each prompt's entry index

    def __post_init__(self) -> None:
        self.prompts = [
            i for i, e in enumerate(self.transcript.entries) if isinstance(e, UserMessage)
        ]

    def prompt(self, index: int) -> str | None:
        if index >= len(self.prompts):
            return None
        entry = self.transcript.entries[self.prompts[index]]
        assert isinstance(entry, UserMessage)
        return entry.text

    def next_round(self) -> Transcript:
        """The next prompt and what the agent did for it, up to the prompt after; the whole
        conversation when it has one prompt (its usage totals are then this round's)."""
        self.taken = True
        index = self.claimed
        self.claimed += 1
        if len(self.prompts) <= 1:
            return self.transcript
        start = 0 if index == 0 else self.prompts[index]
        end = self.prompts[index + 1] if index + 1 < len(self.prompts) else None
        metadata = {
            k: v for k, v in self.transcript.metadata.items() if k not in ("usage", "cost_usd")
        }
        return Transcript(self.transcript.entries[start:end], metadata=metadata)


def _reports(
    text: str | None, delegated: list[tuple[str, str]]
) -> dict[str, tuple[ToolStatus, str]]:
    r"""Each agent's report in a ``delegate`` call's result, by agent id: ``_delegate_tasks``
    lists them in the order of ``tasks``, as ``{n}. Agent {id}: {its final response}`` or
    ``{n}. Agent {id} ERROR: {why}``, one after another.

    >>> _reports("Results:\n1. Agent a: done\n2. Agent b ERROR: failed", [("a", ""), ("b", "")])
    {'a': ('success', 'done'), 'b': ('error', 'failed')}
    """
    if not text:
        return {}
    marks: list[tuple[str, int, int, ToolStatus]] = []  # agent, where its line begins, its text
    position = 0
    for number, (agent, _) in enumerate(delegated, 1):
        found: list[tuple[int, int, ToolStatus]] = []
        marked: tuple[tuple[str, ToolStatus], ...] = (
            (f"{number}. Agent {agent}: ", "success"),
            (f"{number}. Agent {agent} ERROR: ", "error"),
        )
        for mark, status in marked:
            at = text.find("\n" + mark, position)
            if at != -1:
                found.append((at + 1, at + 1 + len(mark), status))
        if not found:
            break  # not the SDK's list: nothing after is read as one
        begin, end, status = min(found)
        marks.append((agent, begin, end, status))
        position = end
    reports: dict[str, tuple[ToolStatus, str]] = {}
    for index, (agent, _, end, status) in enumerate(marks):
        stop = marks[index + 1][1] if index + 1 < len(marks) else len(text)
        reports[agent] = (status, text[end:stop].strip())
    return reports


def _real(folder: SessionPath) -> str | None:
    """The real path of a folder on disk, its links resolved; None for an archive's, which
    holds no links."""
    return os.path.realpath(folder) if isinstance(folder, Path) else None


def _first_prompt(events: SessionPath) -> str | None:
    """The text of the first user message of a conversation's ``events/`` (the task the
    ``TaskManager`` or ``DelegateExecutor`` sent), its event files read in order only up to
    it; None when it has none."""
    found: dict[int, SessionPath] = {}
    for path in _listed(events):
        match = EVENT_FILE.match(path.name)
        if match is not None and path.is_file():
            found.setdefault(int(match.group(1)), path)
    for index in sorted(found):
        event = event_file_value(found[index])
        if not isinstance(event, MAPPINGS) or event.get("kind") != "MessageEvent":
            continue
        message = _mapping(event.get("llm_message"))
        who = event.get("source")
        if who == "user" or (who is None and message.get("role") == "user"):
            return _content(message.get("content"))[0]
    return None


def _started(transcript: Transcript) -> tuple[bool, str]:
    """A sub-agent conversation's sort key: its first timestamp, one without any last."""
    stamp = next((e.timestamp for e in transcript.entries if e.timestamp is not None), None)
    return (stamp is None, stamp or "")


def _report(name: str, transcript: Transcript) -> None:
    """A sub-agent's load, reported as load() reports any (records passed over, X-2)."""
    from turnfold.formats import report_losses

    assert transcript.accounting is not None
    report_losses(name, transcript.accounting, transcript, sys.modules[__name__])


_HANDLERS: dict[str, Callable[[_Reader, Mapping[str, Any], int], None]] = {
    "SystemPromptEvent": _Reader._system,
    "MessageEvent": _Reader._message,
    "ActionEvent": _Reader._action,
    "ObservationEvent": _Reader._observation,
    "UserRejectObservation": _Reader._rejection,
    "AgentErrorEvent": _Reader._agent_error,
    "Condensation": _Reader._condensation,
    "ConversationErrorEvent": _Reader._conversation_error,
    "PauseEvent": _Reader._pause,
    "InterruptEvent": _Reader._interrupt,
    "HookExecutionEvent": _Reader._hook,
    "ACPToolCallEvent": _Reader._acp,
}


def status_of(observation: Mapping[str, Any]) -> ToolStatus:
    """An observation's status for its call: ``is_error``, and for a terminal command its
    ``timeout`` and exit code; unknown when it says neither.

    >>> status_of({"kind": "TerminalObservation", "is_error": False, "exit_code": 2})
    'error'
    >>> status_of({"kind": "FileEditorObservation", "is_error": False})
    'success'
    """
    if observation.get("is_error") is True or _early_error(observation) is True:
        return "error"
    if observation.get("kind") in _TERMINAL:
        if observation.get("timeout") is True:
            return "error"
        code = as_int(observation.get("exit_code"))
        if code is None:  # before 1.0: the code the model was told is the metadata's
            code = as_int(_mapping(observation.get("metadata")).get("exit_code"))
        if code is not None:
            return "success" if code == 0 else "error"
    if observation.get("is_error") is False or _early_error(observation) is False:
        return "success"
    return "unknown"


#: The terminal's observation: ``ExecuteBashObservation`` before SDK 1.3.
_TERMINAL = frozenset({"TerminalObservation", "ExecuteBashObservation"})


def _early_error(observation: Mapping[str, Any]) -> bool | None:
    """Whether an observation of an SDK before 1.0 (no ``content``, no ``is_error``) says it
    failed: its ``error`` flag (the terminal) or message (the file editor, the browser); None
    when it has no ``error`` field to say it.

    >>> _early_error({"kind": "BrowserObservation", "output": "", "error": "Timeout"})
    True
    >>> _early_error({"kind": "FileEditorObservation", "output": "ok", "error": None})
    False
    """
    if "content" in observation or "is_error" in observation or "error" not in observation:
        return None
    error = observation["error"]
    return bool(error) if isinstance(error, (bool, str)) or error is None else None


def _early_text(observation: Mapping[str, Any]) -> str:
    """What an observation of an SDK before 1.0 told the model (its ``to_llm_content``): its
    error message, else its ``output`` (the terminal, the file editor, the browser) or
    ``message`` (``finish``, ``delegate``)."""
    error = observation.get("error")
    if isinstance(error, str) and error:
        browser = observation.get("kind") == "BrowserObservation"
        return f"Error: {error}" if browser else error
    for key in ("output", "message"):
        value = observation.get(key)
        if isinstance(value, str):
            return value.strip()
    return ""


# --- values -----------------------------------------------------------------------------------


def _on(event_id: Any, branch: set[str]) -> bool:
    return isinstance(event_id, str) and event_id in branch


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, MAPPINGS) else {}


def _str(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _text_of(value: Any) -> str | None:
    """A ``TextContent``'s text."""
    return _str(_mapping(value).get("text"))


def _content(value: Any) -> tuple[str, list[ImageData], list[str]]:
    """Message or observation content (``TextContent`` / ``ImageContent`` parts, or a string):
    its text, its inline images, and the addresses of images it links to."""
    if isinstance(value, str):
        return value.strip(), [], []
    texts: list[str] = []
    images: list[ImageData] = []
    remote: list[str] = []
    for part in as_list(value):
        if not isinstance(part, MAPPINGS):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        for url in as_list(part.get("image_urls")):
            match = _DATA_URL.match(url) if isinstance(url, str) else None
            if match is not None:
                images.append(ImageData(media_type=match.group(1), data=match.group(2)))
            elif isinstance(url, str):
                remote.append(url)
    return "\n".join(texts).strip(), images, remote


def _thinking(value: Mapping[str, Any], stamp: str | None) -> list[Thinking]:
    """A response's reasoning: Anthropic's thinking blocks, else a Responses reasoning item,
    else ``reasoning_content`` (litellm fills it from the blocks too: one of them is shown)."""
    found: list[Thinking] = []
    for block in as_list(value.get("thinking_blocks")):
        block = _mapping(block)
        if block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
            found.append(Thinking(form="redacted", data=block["data"], timestamp=stamp))
        elif isinstance(block.get("thinking"), str) and block["thinking"].strip():
            found.append(Thinking(text=block["thinking"].strip(), timestamp=stamp))
    if found:
        return found
    item = _mapping(value.get("responses_reasoning_item"))
    summary = [s for s in as_list(item.get("summary")) if isinstance(s, str) and s.strip()]
    content = [s for s in as_list(item.get("content")) if isinstance(s, str) and s.strip()]
    if content:
        found.append(Thinking(text="\n\n".join(content), timestamp=stamp))
    elif summary:
        found.append(Thinking(text="\n\n".join(summary), form="summary", timestamp=stamp))
    elif isinstance(item.get("encrypted_content"), str):
        found.append(Thinking(form="encrypted", data=item["encrypted_content"], timestamp=stamp))
    if found:
        return found
    reasoning = _str(value.get("reasoning_content"))
    return [Thinking(text=reasoning, timestamp=stamp)] if reasoning else []


def _usage(value: Any) -> Usage | None:
    """A ``TokenUsage``: litellm's ``prompt_tokens``
    (:func:`~turnfold.formats.openai_chat.litellm_prompt_tokens`)."""
    item = _mapping(value)
    read, written = as_int(item.get("cache_read_tokens")), as_int(item.get("cache_write_tokens"))
    usage = counted_usage(
        litellm_prompt_tokens(as_int(item.get("prompt_tokens")), read, written),
        item.get("completion_tokens"),
        read,
        written,
        item.get("reasoning_tokens"),
    )
    if usage is not None:
        usage.response_id = _str(item.get("response_id"))
    return usage


def _edit_diff(observation: Mapping[str, Any], cwd: str | None) -> str | None:
    """A file editor's change as a unified diff of the file before and after, when the
    observation holds both (``old_content`` is absent for a file it created)."""
    if observation.get("command") not in ("create", "str_replace", "insert", "undo_edit"):
        return None
    new = observation.get("new_content")
    old = observation.get("old_content")
    path = observation.get("path")
    if not isinstance(new, str) or not isinstance(path, str):
        return None
    if not isinstance(old, str):
        if observation.get("prev_exist") is not False:
            return None
        old = ""
    shown = relative(path, cwd)
    before = f"a/{shown}" if observation.get("prev_exist") is not False else os.devnull
    import difflib  # only here: loading a path imports this module, and need not import it

    lines = difflib.unified_diff(_lines(old), _lines(new), before, f"b/{shown}")
    diff = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return diff or None


def _lines(text: str) -> list[str]:
    """Lines ending in "\\n" (str.splitlines would also split on form feeds and the like)."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def _checklist(todos: list[Any]) -> str:
    """The task tracker's list (``TaskItem``: title, notes, status) as a checklist."""
    rows = []
    for todo in todos:
        todo = _mapping(todo)
        title = _str(todo.get("title"))
        if title:
            rows.append(f"{_TODO_MARKS.get(str(todo.get('status')), '[ ]')} {title}")
    return "\n".join(rows)
