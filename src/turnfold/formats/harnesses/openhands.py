"""OpenHands event streams and eval outputs (spec H-3).

Shapes read (``openhands/events/serialization/event.py``, ``evaluation/utils/shared.py``,
``openhands/resolver/``):

- a **list of events** (a saved trajectory), as one JSON array or as JSON lines. An event is
  ``{id, timestamp, source: "user"|"agent"|"environment", message, cause?, tool_call_metadata?,
  llm_metrics?}`` plus either ``action`` + ``args`` or ``observation`` + ``content`` +
  ``extras``;
- a V0 **session folder** (``~/.openhands/sessions/<id>/``, :func:`session_of`): one event a
  file (``events/<id>.json``) and ``metadata.json`` (the title, model, total cost and tokens).
  ``load()`` of its ``metadata.json`` or of any event file reads the whole session;
- a **session kept as an archive**: a V0 session folder or V1 conversations (read by
  :mod:`.openhands_sdk`) in a tar archive (``tar czf``, the agent server's workspace
  ``.tar.gz``; any compression :mod:`turnfold.formats.compressed` reads) or in the agent
  server's "download trajectory" zip, read in memory without extracting it (:func:`_archived`,
  :mod:`.archive`'s limits); ``load(path, sample=NAME)`` picks one of several by its folder's
  name, without it the first is shown and the others named in a warning; a scan makes a row of
  each, the archive read once (:class:`Archived`);
- an eval **``output.jsonl``**: one instance per line, ``{instance_id, instruction, history,
  test_result, metadata, metrics, error, instance}``; ``history`` is a list of events (or, in old
  outputs, of ``[action, observation]`` pairs; in OpenHands V1's, OpenHands/benchmarks', of the
  SDK's events, with the SDK's ``Metrics``: read by :func:`.openhands_sdk.read_history`, the
  transcript's ``source_format`` ``openhands-sdk``). ``load(path, sample=ID)`` shows the instance
  with that ``instance_id``; without ``sample`` it shows the first and warns about the others.
  :func:`instances` reads every instance in one pass (a corpus scan: one row each). Each is told
  the warnings of its own lines, up to the next instance's (:class:`Instances`);
- a resolver's **``output.jsonl``** (``ResolverOutput``): one issue per line, ``{issue,
  issue_type, instruction, base_commit, git_patch, history, metrics, success, comment_success,
  result_explanation, error}``, read as an eval output's instances, each picked by its issue
  number (:func:`instance_id_of`). Its ``history`` holds ``dataclasses.asdict(event)``: each
  event's own fields side by side, without ``args``, ``extras``, ``id``, ``source`` or
  ``cause`` (:func:`_is_flat`); an observation answers the action before it, a message is the
  agent's when it waits for a reply (:func:`_source`).

Mapping:

- ``message`` actions: the user's are :class:`UserMessage`, the agent's :class:`AssistantText`;
  ``system`` gives ``metadata["system"]``; ``think`` is :class:`Thinking`; ``finish`` and
  ``reject`` are the agent's closing text (``task_completed`` → metadata);
- actions that run something are :class:`ToolCall` (their ``thought`` an AssistantText before
  them), named by the tool the model called (``tool_call_metadata.function_name``: ``execute_bash``,
  ``str_replace_editor view|create|str_replace|insert|undo_edit``, ``edit_file``, ``browser``,
  ``web_read`` ...) or else by the action (``run``, ``run_ipython``, ``read``, ``write``,
  ``edit``, ``browse``, ``browse_interactive``, ``delegate``); an MCP call by its tool name.
  Calls of one model response (``model_response.id``) form a batch, with its usage (litellm's,
  :func:`~turnfold.formats.openai_chat.litellm_usage`: an Anthropic model's cache writes kept,
  and counted in the prompt);
- an observation is the result of the action its ``cause`` names (else the one with its
  ``tool_call_id``). Status (:func:`status_of`): a command's exit code (0 success, anything
  else, ``-1`` for "still running / timed out" included, error), ``error`` observations and
  browser errors are errors, a rejected action is cancelled; ``run_ipython`` output states its
  failure (a traceback, ``ERROR:``, an agentskills edit it refused), and so does the
  editor's (``impl_source: oh_aci``: a ``read`` or ``edit`` whose content starts ``ERROR:``);
  other file actions fail with an ``error`` observation, so theirs are written on success
  only. An MCP
  observation holds the server's ``CallToolResult`` as JSON (:func:`mcp_call_result`):
  ``isError`` is the status, its content blocks the result as :mod:`turnfold.formats.mcp` reads
  them (text, images, lines naming audio, links and blobs; ``structuredContent`` kept as data; a
  block of a type MCP does not define shown as JSON and warned about; the error OpenHands writes
  for a timeout first).
  An edit's diff (``extras.diff``, or a content that is a unified diff) is a ``diff`` result;
- ``delegate`` starts a sub-agent: the events up to its ``delegate`` observation are the
  child's transcript (the delegate runs in the same stream), the observation its report;
- ``condensation`` / ``condense`` are compaction boundaries, ``recall`` observations a notice of
  the context the runtime added, ``agent_state_changed`` to ``error`` an
  :class:`AssistantError`, to ``stopped`` from a run under way (the user pressed stop) an
  :class:`AbortMarker`, the calls still waiting cancelled (other states are bookkeeping: a
  session closed when the agent was done stops it too). The action pending at a stop gets
  an ``error`` observation that says it never ran (``ERROR_ACTION_NOT_EXECUTED_STOPPED``):
  ``cancelled``. A later user message resumes the session: the same run's next turn;
- H-6 metadata: ``agent`` ``"openhands"``, ``agent_class``, ``model``, ``version``, ``cost_usd``
  (``metrics.accumulated_cost``, else the last event's ``llm_metrics``; none when the model had
  no price: :func:`recorded_cost`), ``usage``, ``sample``
  (``instance_id``), ``task`` (the dataset), ``attempt`` (a V1 instance's try of an iterative
  evaluation), ``outcome`` (:func:`outcome_of`:
  ``test_result.report.resolved`` → ``pass`` / ``fail``, a failed evaluation or an instance
  ``error`` → ``error``, a resolver's verdict ``success`` → ``pass`` / ``fail``); a resolver
  output's ``sample`` is its issue number, ``task`` the repository, ``title`` the issue's, and
  its ``issue``, ``git_patch``, ``success`` and ``result_explanation`` are kept.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from turnfold import codec
from turnfold.formats import mcp
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    as_int,
    checked_timestamp,
    describe_args,
    is_unified_diff,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError, unselected
from turnfold.formats.harnesses import openhands_sdk
from turnfold.formats.harnesses.archive import (
    ArchivedPath,
    Peek,
    SessionPath,
    find_member,
    is_archive,
    read_members,
)
from turnfold.formats.harnesses.openhands_sdk import event_file_value
from turnfold.formats.openai_chat import litellm_prompt_tokens, litellm_usage
from turnfold.formats.source import (
    NotListed,
    Source,
    Unlisted,
    folder_not_listed,
    join_warnings,
    read_file,
    warning_count,
    warnings_before,
)
from turnfold.formats.wording import failure, notice, stop
from turnfold.formats.wrappers import sample
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    ImageData,
    LoadWarning,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    UserMessage,
    printable,
)

NAME = "openhands"
#: What OpenHands keeps its secrets in, beside its sessions in ``~/.openhands``: the app's
#: ``settings.json`` (``FileSettingsStore``, ``path: str = 'settings.json'``, written with
#: ``expose_secrets``: the LLM's key) and ``secrets.json`` (``FileSecretsStore``,
#: ``path: str = 'secrets.json'``: the git providers' tokens and custom secrets),
#: All-Hands-AI/OpenHands ``openhands/storage/settings/file_settings_store.py:17`` and
#: ``openhands/storage/secrets/file_secrets_store.py:17``; and the CLI's
#: ``agent_settings.json`` (``AGENT_SETTINGS_PATH``, OpenHands/OpenHands-CLI
#: ``openhands_cli/locations.py``; ``AgentStore.save`` writes the agent with its LLM key),
#: its MCP servers' ``mcp.json`` (``MCP_CONFIG_FILE``, there; ``save_mcp_config`` of
#: ``openhands_cli/mcp/mcp_utils.py`` writes each server's headers and env, its API keys) and
#: its OpenHands Cloud key, ``cloud/api_key.txt`` (``TokenStorage``,
#: ``openhands_cli/auth/token_storage.py:20-25``), all in ``$OPENHANDS_PERSISTENCE_DIR`` when
#: it is set (``get_persistence_dir``, ``locations.py``: 6b3838ce); and the app server's key
#: of the sessions it signs, ``.jwt_secret`` (``JWT_SECRET``, All-Hands-AI/OpenHands
#: ``openhands/core/config/utils.py``, written to its file store).
CREDENTIALS = Credentials(
    folders=frozenset({".openhands"}),
    files=frozenset({
        "settings.json", "secrets.json", "agent_settings.json", "mcp.json",
        "cloud/api_key.txt", ".jwt_secret",
    }),
    variables=frozenset({"OPENHANDS_PERSISTENCE_DIR"}),
)  # fmt: skip

#: Actions that run something: each is a tool call.
TOOL_ACTIONS = NameSet(
    {
        "run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive",
        "delegate", "call_tool_mcp", "task_tracking",
    }
)  # fmt: skip

RECORDS = Records(
    mapped={
        "action/message": "the user's prompt (UserMessage) or the agent's text",
        "action/system": 'the system prompt: metadata["system"], version and agent class',
        "action/think": "the agent's thought (Thinking)",
        "action/finish": "the agent's closing text; task_completed → metadata",
        "action/reject": 'the agent\'s closing text, refusing the task (meta["task_rejected"])',
        **{
            f"action/{a}": "a tool call (its thought as text before it)"
            for a in sorted(TOOL_ACTIONS)
        },
        "action/condensation": "a compaction boundary with the condenser's summary",
        "observation/run": "a command's output; its exit code gives the status",
        "observation/run_ipython": "a cell's output (error when it states a failure)",
        "observation/read": "a file read's content",
        "observation/write": "a file write's confirmation",
        "observation/edit": "an edit's result (a diff when it has one)",
        "observation/browse": "a page's text (and screenshot); error when the browser says so",
        "observation/mcp": "an MCP tool's result",
        "observation/delegate": "a sub-agent's report: ends the sub-agent",
        "observation/error": "an error: the failed action's result, or a notice",
        "observation/user_rejected": "the action was rejected by the user (cancelled)",
        "observation/success": "a success message: the action's result",
        "observation/task_tracking": "the task list's update",
        "observation/download": "a download's result",
        "observation/condense": "a compaction boundary",
        "observation/recall": "a notice of the workspace context or knowledge the runtime added",
        "observation/loop_detection": "a warning notice: the agent was stuck in a loop",
        "observation/agent_state_changed/error": "the agent stopped with an error (AssistantError)",
        "observation/agent_state_changed/rate_limited": "a warning notice",
        "observation/agent_state_changed/stopped": "stopped while running: an AbortMarker",
        "instance": "an eval output's (or a resolver output's) metadata, metrics and test "
        "result or verdict (outcome)",
        "session": "a V0 session's metadata.json: its title, model, cost and token totals",
    },
    ignored={
        "observation/null": "no observation: an action without output was done",
        "observation/think": "the runtime's 'thought logged' acknowledgement",
        "observation/agent_state_changed": "the controller's state (loading, running, ...)",
        "observation/chat": "an old echo of a chat message",
        "observation/workspace_context": "repository details the runtime added to the prompt",
        "action/change_agent_state": "a state change requested by the runtime or the user",
        "action/recall": "the runtime's request for context; its observation is shown",
        "action/condensation_request": "a request to condense; the condensation is shown",
        "action/loop_recovery": "the runtime's recovery from a loop",
        "action/null": "no action",
        "action/start": "the old start of a task; its message is shown",
        "action/pause": "runtime control",
        "action/resume": "runtime control",
        "action/stop": "runtime control",
        "action/push": "an old GitHub integration action",
        "action/send_pr": "an old GitHub integration action",
        "instance/other": "the other instances of an eval output: load() shows one "
        "(sample=ID picks it)",
    },
)

_EDITOR = "str_replace_editor"
_EDITOR_COMMANDS = NameSet({"view", "create", "str_replace", "insert", "undo_edit"})
_COMMAND_IN_CODE = re.compile(r"""['"]command['"]\s*:\s*['"](\w+)['"]""")
_ARG_NOISE = ("thought", "security_risk", "confirmation_state", "impl_source")
#: A cell's output that states its failure: a traceback, the editor's ``ERROR:``, and
#: agentskills' edits (``edit_file_by_replace``, ``insert_content_at_line``, ...) it refused
#: (``[Error editing file ...]``, or a lint failure: each ends "Your changes have NOT been
#: applied.", the file restored; ``runtime/plugins/agent_skills/file_ops``).
_FAILURE = re.compile(
    r"Traceback \(most recent call last\)|^ERROR:|^\[Error|^Your changes have NOT been applied\.",
    re.M,
)
_DELEGATE_FAILED = "encountered an error during execution"
#: The ErrorObservation ``AgentController._reset`` gives the action pending when the user pressed
#: stop (``ERROR_ACTION_NOT_EXECUTED_STOPPED``, ``…_ID``): the action never ran.
_STOPPED_ID = "AGENT_ERROR$ERROR_ACTION_NOT_EXECUTED_STOPPED"
_STOPPED_TEXT = "Stop button pressed. The action has not been executed."
#: The agent states (``core/schema/agent.py``) of a run under way, which a stop interrupts.
_ACTIVE_STATES = frozenset(
    {"running", "paused", "awaiting_user_confirmation", "user_confirmed", "rate_limited"}
)


def failure_stated(text: str) -> bool:
    """Whether a plain-text output (an IPython cell's) states a failure: the one text rule.

    >>> failure_stated("Traceback (most recent call last):\\n  ...\\nNameError: x")
    True
    >>> failure_stated("[Code executed successfully with no output]")
    False
    >>> failure_stated("[Your proposed edit has introduced new syntax error(s). ...]\\n...\\n"
    ...                "Your changes have NOT been applied. Please fix your edit command.")
    True
    """
    return bool(_FAILURE.search(text))


def status_of(observation: Mapping[str, Any]) -> ToolStatus:
    """An observation's status for the call it answers (see the module docstring)."""
    kind = observation.get("observation")
    extras = observation.get("extras")
    extras = extras if isinstance(extras, Mapping) else {}
    if kind == "error":
        stopped = extras.get("error_id") == _STOPPED_ID or _content(observation) == _STOPPED_TEXT
        return "cancelled" if stopped else "error"
    if kind == "user_rejected":
        return "cancelled"
    if kind == "run":
        metadata = extras.get("metadata")
        code = as_int(metadata.get("exit_code")) if isinstance(metadata, Mapping) else None
        if code is None:  # before CmdOutputMetadata (0.19) the observation's own field, which
            code = as_int(extras.get("exit_code"))  # observation_from_dict still moves into it
        if code is not None:
            return "success" if code == 0 else "error"
        success = observation.get("success")
        if isinstance(success, bool):
            return "success" if success else "error"
        return "unknown"
    if kind == "run_ipython":
        return "error" if failure_stated(_content(observation)) else "success"
    if kind == "browse":
        return "error" if extras.get("error") is True else "success"
    if kind == "delegate":
        return "error" if _DELEGATE_FAILED in _content(observation) else "success"
    if kind == "mcp":
        return _mcp_status(mcp_call_result(observation))
    if kind in ("read", "edit") and extras.get("impl_source") == "oh_aci":
        # The runtime's editor (openhands_aci's OHEditor) turns its failures into text, not an
        # ErrorObservation: _execute_file_editor returns f"ERROR:\n{error}", which read() and
        # edit() wrap in a FileRead/FileEditObservation (runtime/action_execution_server.py).
        return "error" if _content(observation).startswith("ERROR:") else "success"
    if kind in ("read", "write", "edit", "success", "task_tracking", "download"):
        return "success"  # the runtime's other file actions fail with an ErrorObservation
    return "unknown"


def _mcp_status(call: Mapping[str, Any] | None) -> ToolStatus:
    # MCP's isError is the outcome (absent: the call did not fail); OpenHands sets it on the
    # server's error results and on the timeouts and McpErrors it writes itself.
    return "error" if call is not None and call.get("isError") is True else "success"


def mcp_call_result(observation: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An MCP observation's content as the object it holds, None when it holds none.

    ``call_tool_mcp`` (``openhands/mcp/utils.py``) writes ``MCPObservation.content`` as JSON:
    the server's ``CallToolResult`` (``response.model_dump(mode="json")``: ``content``,
    ``structuredContent``, ``isError``, ``meta``), or for a timeout or an ``McpError``
    ``{"isError": true, "error": "...", "content": []}``.

    >>> mcp_call_result({"content": '{"isError": true, "error": "timed out", "content": []}'})
    {'isError': True, 'error': 'timed out', 'content': []}
    >>> mcp_call_result({"content": "plain text"}) is None
    True
    """
    content = observation.get("content")
    if not isinstance(content, str) or not content.startswith("{"):
        return None
    try:
        value = codec.loads(content)
    except ValueError:
        return None
    if isinstance(value, Mapping) and ("content" in value or "isError" in value):
        return value
    return None


def outcome_of(instance: Mapping[str, Any]) -> str | None:
    """The H-6 outcome of an eval instance, None when it was not graded.

    >>> outcome_of({"test_result": {"report": {"resolved": True}}})
    'pass'
    >>> outcome_of({"test_result": {"git_patch": ""}, "error": "Agent got stuck in a loop"})
    'error'
    >>> outcome_of({"issue": {"number": 5}, "issue_type": "issue", "success": True, "error": None})
    'pass'
    """
    result = instance.get("test_result")
    report = result.get("report") if isinstance(result, Mapping) else None
    report = report if isinstance(report, Mapping) else result
    if isinstance(report, Mapping):
        if report.get("error_eval") is True:
            return "error"
        resolved = report.get("resolved")
        if isinstance(resolved, bool):
            return "pass" if resolved else "fail"
    error = instance.get("error")
    if isinstance(error, str) and error.strip():
        return "error"
    success = instance.get("success")
    if isinstance(success, bool) and _is_resolver_output(instance):
        # A resolver output is graded by no test: ``success`` is the resolver's own verdict
        # (``guess_success``, a model's reading of the issue, the history and the patch), the
        # one it opens a pull request on (``resolver/send_pull_request.py``).
        return "pass" if success else "fail"
    return None


# --- detection ---------------------------------------------------------------------------


def _is_event(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    if isinstance(value.get("action"), str):
        return "args" in value or "source" in value
    if isinstance(value.get("observation"), str):
        return "extras" in value or "content" in value
    return False


def _is_instance(value: Any) -> bool:
    """An eval output's instance (``EvalOutput``) or a resolver's (``ResolverOutput``)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("history"), list)
        and ("instance_id" in value or "test_result" in value or _is_resolver_output(value))
    )


def _is_resolver_output(value: Mapping[str, Any]) -> bool:
    """A ``ResolverOutput`` (``openhands/resolver/resolver_output.py``): the issue it worked on
    (``issue``: owner, repo, number, title, ...) and its ``issue_type``."""
    return isinstance(value.get("issue"), Mapping) and "issue_type" in value


def instance_id_of(instance: Mapping[str, Any]) -> str:
    """The id ``load(path, sample=ID)`` picks an instance by: an eval's ``instance_id``; a
    resolver output's issue number, as ``load_single_resolver_output`` finds one
    (``openhands/resolver/io_utils.py``).

    >>> instance_id_of({"issue": {"owner": "o", "repo": "r", "number": 5}, "issue_type": "issue"})
    '5'
    """
    if "instance_id" not in instance and _is_resolver_output(instance):
        return str(instance["issue"].get("number"))
    return str(instance.get("instance_id"))


def _classify(value: Any) -> int:
    if _is_instance(value):
        return DISTINCTIVE
    if isinstance(value, list) and len(value) == 2 and all(_is_event(v) for v in value):
        return DISTINCTIVE  # an old [action, observation] pair
    if _is_event(value):
        return DISTINCTIVE if "args" in value or "extras" in value else READABLE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """Events (``action`` + ``args``, ``observation`` + ``extras``) or eval instances; a V0
    session's ``metadata.json`` or one of its event files."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping):
        if _is_instance(document) or (source.path is not None and session_of(source.path)):
            return Evidence(share=1.0, marks=1)
        return Evidence.none("no events")
    values = sample(document) if isinstance(document, list) else source.head_values()
    return Evidence.of(values, _classify, "no action/observation events")


# --- reading -----------------------------------------------------------------------------


@dataclass
class _Context:
    """One agent's transcript: the root, or a delegate's while its events stream by."""

    transcript: Transcript
    delegate_call: ToolCall | None = None
    parent: _Context | None = None
    tools: int = 0
    responses: dict[str, AssistantText | ToolCall] = field(default_factory=dict)


class _Reader:
    def __init__(self, source: Source, transcript: Transcript) -> None:
        self.source = source
        self.root = _Context(transcript)
        self.context = self.root
        self.by_event: dict[int, tuple[_Context, ToolCall]] = {}
        self.by_call_id: dict[str, tuple[_Context, ToolCall]] = {}
        self.cost: float | None = None
        #: The last ``llm_metrics.accumulated_token_usage``: the run's totals so far.
        self.accumulated: Mapping[str, Any] | None = None
        self.warned: set[str] = set()  # the reasons warned of once (_warn_once)
        self.agent_state: Any = None  # the last agent_state_changed's

    # --- events ---------------------------------------------------------------------------

    def feed(self, event: Any, line: int, paired: ToolCall | None = None) -> ToolCall | None:
        """Read one event (accounted for by its type); the call an action started, if any."""
        if not isinstance(event, Mapping):
            self.source.warn("event is not an object", line, record_type="(event)")
            return None
        metrics = event.get("llm_metrics")
        if isinstance(metrics, Mapping):
            self.cost = recorded_cost(metrics) if "accumulated_cost" in metrics else self.cost
            accumulated = metrics.get("accumulated_token_usage")
            self.accumulated = accumulated if isinstance(accumulated, Mapping) else self.accumulated
        if isinstance(event.get("action"), str):
            return self._action(event, line)
        if isinstance(event.get("observation"), str):
            self._observation(event, line, paired)
            return None
        self.source.warn("event with neither action nor observation skipped", line,
                         record_type="(event)")  # fmt: skip
        return None

    def _stamp(self, event: Mapping[str, Any], line: int) -> str | None:
        """An event's ``timestamp``; one that is no time is left out, said on its line."""
        named = event.get("id")
        what = f"event {str(named)[:80]}" if isinstance(named, (int, str)) else "an event"
        return warned_timestamp(event.get("timestamp"), checked_timestamp,
                                partial(self.source.warn, line=line), what,
                                name="timestamp")  # fmt: skip

    def _action(self, event: Mapping[str, Any], line: int) -> ToolCall | None:
        kind: str = event["action"]
        record = f"action/{kind}"
        args: Mapping[str, Any] = _mapping(event.get("args"))
        stamp = self._stamp(event, line)
        transcript = self.context.transcript
        if kind == "message":
            text = _text(args.get("content")) or _text(event.get("message"))
            meta = _attachments(args)
            if _source(event, args) == "user":
                transcript.append(UserMessage(text=text, timestamp=stamp, meta=meta))
            else:
                entry = AssistantText(text=text, timestamp=stamp, meta=meta)
                transcript.append(entry)
                self._usage(event, entry)
        elif kind == "system":
            self._system(args)
        elif kind == "think":
            thought = _text(args.get("thought")) or _text(event.get("message"))
            if thought:
                transcript.append(Thinking(text=thought, timestamp=stamp))
        elif kind in ("finish", "reject"):
            self._closing(kind, event, args, stamp)
        elif kind in TOOL_ACTIONS:
            self.source.mapped(record)
            return self._tool(event, kind, args, stamp)
        elif kind == "condensation":
            summary = args.get("summary")
            transcript.append(
                CompactionBoundary(
                    summary=summary if isinstance(summary, str) else None,
                    trigger="condenser",
                    timestamp=stamp,
                )
            )
        elif RECORDS.disposition(record) == "ignored":
            self.source.ignored(record)
            return None
        else:
            self.source.warn(f"unknown action {kind!r} skipped", line, record_type=record)
            return None
        self.source.mapped(record)
        return None

    def _system(self, args: Mapping[str, Any]) -> None:
        metadata = self.root.transcript.metadata
        content = _text(args.get("content"))
        if content:
            metadata.setdefault("system", content)
        for key, name in (("openhands_version", "version"), ("agent_class", "agent_class")):
            if isinstance(args.get(key), str):
                metadata.setdefault(name, args[key])

    def _closing(
        self, kind: str, event: Mapping[str, Any], args: Mapping[str, Any], stamp: str | None
    ) -> None:
        outputs = _mapping(args.get("outputs"))
        text = (
            _text(args.get("final_thought"))
            or _text(event.get("message"))
            or _text(args.get("thought"))
            or _text(outputs.get("reason") if kind == "reject" else None)
        )
        # The agent refused the task: what it says is what happened (its answer), unlike a
        # reply someone rejected (meta["rejected"]), shown aside.
        meta: dict[str, Any] = {"task_rejected": True} if kind == "reject" else {}
        if outputs:
            meta["outputs"] = dict(outputs)
        if text:
            entry = AssistantText(text=text, timestamp=stamp, meta=meta)
            self.context.transcript.append(entry)
            self._usage(event, entry)
        completed = args.get("task_completed")
        if isinstance(completed, str) and self.context is self.root:
            self.root.transcript.metadata["task_completed"] = completed

    def _tool(
        self, event: Mapping[str, Any], kind: str, args: Mapping[str, Any], stamp: str | None
    ) -> ToolCall:
        context = self.context
        thought = _text(args.get("thought"))
        if thought:
            text = AssistantText(text=thought, timestamp=stamp)
            context.transcript.append(text)
            self._usage(event, text)
        metadata = event.get("tool_call_metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        event_id = as_int(event.get("id"))
        call_id = metadata.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            # A resolver's events have no id: their place among the calls, the same each load.
            call_id = (
                f"event-{event_id}" if event_id is not None else f"call-{len(self.by_call_id)}"
            )
        name = tool_name(kind, args, metadata.get("function_name"))
        call_args = _call_args(kind, args)
        response = _response_id(metadata)
        description = describe_args(name, call_args, _cwd(self.root.transcript))
        subagent = None
        if kind == "run_ipython" and isinstance(args.get("code"), str):
            description = next((ln.strip() for ln in args["code"].splitlines() if ln.strip()), None)
        if kind == "delegate":
            inputs = _mapping(args.get("inputs"))
            task = _text(inputs.get("task")) or None
            description = (task.splitlines()[0][:120] if task else None) or description
            agent = args.get("agent") if isinstance(args.get("agent"), str) else None
            subagent = SubAgent(name=agent, task=task, transcript=Transcript(
                metadata={"source_format": NAME, "agent": agent or "delegate"}))  # fmt: skip
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=call_args,
            description=description,
            status="unknown",
            batch_id=response or call_id,
            started_at=stamp,
            timestamp=stamp,
            subagent=subagent,
        )
        context.transcript.append(call)
        context.tools += 1
        if not thought:
            self._usage(event, call)
        if event_id is not None:
            self.by_event[event_id] = (context, call)
        self.by_call_id[call_id] = (context, call)
        if subagent is not None and subagent.transcript is not None:
            self.context = _Context(subagent.transcript, delegate_call=call, parent=context)
        return call

    def _usage(self, event: Mapping[str, Any], entry: AssistantText | ToolCall) -> None:
        """A model response's usage once, on its first entry (its text, else its first call)."""
        metadata = event.get("tool_call_metadata")
        response = metadata.get("model_response") if isinstance(metadata, Mapping) else None
        if not isinstance(response, Mapping):
            return
        model = response.get("model")
        if isinstance(model, str) and model:
            self.root.transcript.metadata.setdefault("model", model)
        key = _response_id(metadata) if isinstance(metadata, Mapping) else None
        if key is None or key in self.context.responses:
            return
        self.context.responses[key] = entry
        usage = litellm_usage(response.get("usage"))
        if usage is None:
            return
        if isinstance(entry, AssistantText):
            self.context.transcript.update(
                entry, usage=usage, model=model if isinstance(model, str) else None
            )
        else:  # a response of calls only: its first call carries it (turnfold.usage)
            self.context.transcript.update(entry, usage=usage)

    # --- observations ---------------------------------------------------------------------

    def _observation(self, event: Mapping[str, Any], line: int, paired: ToolCall | None) -> None:
        kind: str = event["observation"]
        record = f"observation/{kind}"
        extras = _mapping(event.get("extras"))
        stamp = self._stamp(event, line)
        if kind == "agent_state_changed":
            self._state(extras, stamp)
            return
        if kind == "delegate":
            self._end_delegate(event, stamp)
            self.source.mapped(record)
            return
        target = self._target(event, paired)
        if target is not None and kind not in ("null", "think", "recall", "condense"):
            context, call = target
            warnings = warning_count(self.source.warnings)
            if kind == "mcp":  # its JSON read once, for the status, the result and the warning
                server = mcp_call_result(event)
                status, result = _mcp_status(server), _mcp_result(server, _content(event))
                mcp.warn_unknown(
                    server.get("content") if server is not None else None,
                    lambda reason: self._warn_once(reason, line, record),
                )
            else:
                status, result = status_of(event), _result(kind, event, extras)
            context.transcript.update(call, status=status, result=result, ended_at=stamp)
            if warning_count(self.source.warnings) == warnings:  # else accounted as warned about
                self.source.mapped(record)
            return
        transcript = self.context.transcript
        if kind == "error":
            said = _content(event)
            transcript.append(
                AssistantError(message=said, timestamp=stamp) if said
                else failure("reader.error", timestamp=stamp)
            )  # fmt: skip
        elif kind == "recall":
            transcript.append(_recall_notice(extras, stamp))
        elif kind == "condense":
            transcript.append(CompactionBoundary(summary=_content(event) or None, timestamp=stamp))
        elif kind == "loop_detection":
            said = _content(event)
            transcript.append(
                SystemNotice(text=said, level="warning", subtype=kind, timestamp=stamp) if said
                else notice("reader.stuck_in_loop", level="warning", subtype=kind, timestamp=stamp)
            )  # fmt: skip
        elif RECORDS.disposition(record) == "ignored":
            self.source.ignored(record)
            return
        elif RECORDS.disposition(record) == "mapped":
            self.source.warn(f"{kind} observation for no known action skipped", line,
                             record_type=record)  # fmt: skip
            return
        else:
            self.source.warn(f"unknown observation {kind!r} skipped", line, record_type=record)
            return
        self.source.mapped(record)

    def _warn_once(self, reason: str, line: int, record: str) -> None:
        """Warn of ``reason`` on its first record only (the record is accounted as warned)."""
        if reason not in self.warned:
            self.warned.add(reason)
            self.source.warn(reason, line, record_type=record)

    def _target(
        self, event: Mapping[str, Any], paired: ToolCall | None
    ) -> tuple[_Context, ToolCall] | None:
        cause = as_int(event.get("cause"))
        if cause is not None and cause in self.by_event:
            return self.by_event.pop(cause)
        metadata = event.get("tool_call_metadata")
        call_id = metadata.get("tool_call_id") if isinstance(metadata, Mapping) else None
        if isinstance(call_id, str) and call_id in self.by_call_id:
            context, call = self.by_call_id[call_id]
            if call.result is None:
                return context, call
        if paired is not None and paired.result is None:
            return self.context, paired
        return None

    def _state(self, extras: Mapping[str, Any], stamp: str | None) -> None:
        state = extras.get("agent_state")
        reason = _text(extras.get("reason"))
        transcript = self.context.transcript
        before, self.agent_state = self.agent_state, state
        if state == "stopped" and before in _ACTIVE_STATES:
            # The user pressed stop (closing a session stops an agent that is done, too: that
            # is bookkeeping). What it still waited for never ran; a new message resumes it.
            for context, call in [*self.by_event.values(), *self.by_call_id.values()]:
                if call.status == "unknown" and call.result is None:
                    context.transcript.update(call, status="cancelled", ended_at=stamp)
            transcript.append(
                AbortMarker(reason=reason, timestamp=stamp) if reason
                else stop("reader.stopped_state", timestamp=stamp)
            )  # fmt: skip
            self.source.mapped("observation/agent_state_changed/stopped")
        elif state == "error":
            transcript.append(
                AssistantError(message=reason, timestamp=stamp) if reason
                else failure("reader.agent_stopped_on_error", timestamp=stamp)
            )  # fmt: skip
            self.source.mapped("observation/agent_state_changed/error")
        elif state == "rate_limited":
            transcript.append(
                SystemNotice(text=reason, level="warning", subtype="rate_limited", timestamp=stamp)
                if reason
                else notice("reader.rate_limited", level="warning", subtype="rate_limited",
                            timestamp=stamp)
            )  # fmt: skip
            self.source.mapped("observation/agent_state_changed/rate_limited")
        else:
            self.source.ignored("observation/agent_state_changed")

    def _end_delegate(self, event: Mapping[str, Any], stamp: str | None) -> None:
        context = self.context
        if context.delegate_call is None or context.parent is None:
            target = self._target(event, None)
            if target is not None:
                context, call = target
                result = text_result(_content(event))
                context.transcript.update(
                    call, status=status_of(event), result=result, ended_at=stamp
                )
            else:
                self.context.transcript.append(
                    SystemNotice(text=_content(event), subtype="delegate")
                )
            return
        call = context.delegate_call
        self._close(context)
        result = ToolResult(text=_content(event), kind="subagent")
        context.parent.transcript.update(
            call, status=status_of(event), result=result, ended_at=stamp
        )
        self.context = context.parent

    def _close(self, context: _Context) -> None:
        call = context.delegate_call
        if call is None or call.subagent is None:
            return
        child = context.transcript
        call.subagent.tool_count = context.tools
        call.subagent.steps_missing = not child.entries
        if not child.entries:
            call.subagent.transcript = None

    def finish(self) -> None:
        """Delegates still open at the end (a cut-off stream) keep what they did."""
        while self.context.parent is not None:
            self._close(self.context)
            self.context = self.context.parent
        if self.cost is not None:
            self.root.transcript.metadata.setdefault("cost_usd", self.cost)


def recorded_cost(metrics: Mapping[str, Any]) -> float | None:
    """A run's cost as OpenHands' ``Metrics`` record it, None when they record none: a model
    litellm cannot price adds no ``costs`` entry (``LLM._completion_cost``), which leaves an
    ``accumulated_cost`` of 0.0 that is no price.

    >>> recorded_cost({"accumulated_cost": 0.0, "costs": []}) is None
    True
    >>> recorded_cost({"accumulated_cost": 0.25, "costs": [{"cost": 0.25}]})
    0.25
    """
    cost = metrics.get("accumulated_cost")
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        return None
    if cost == 0 and metrics.get("costs") == []:
        return None
    return float(cost)


def tool_name(kind: str, args: Mapping[str, Any], function: Any) -> str:
    """The call's name: the tool the model called, with the editor's subcommand, else the
    action type.

    >>> tool_name("read", {"path": "/a"}, "str_replace_editor")
    'str_replace_editor view'
    >>> tool_name("run", {"command": "ls"}, None)
    'run'
    """
    if kind == "call_tool_mcp" and isinstance(args.get("name"), str) and args["name"]:
        return str(args["name"])
    if kind in ("read", "edit") and (function == _EDITOR or args.get("impl_source") == "oh_aci"):
        command = args.get("command")
        if not isinstance(command, str) or not command:
            match = _COMMAND_IN_CODE.search(str(args.get("translated_ipython_code") or ""))
            command = match.group(1) if match else ("view" if kind == "read" else "")
        if command in _EDITOR_COMMANDS:
            return f"{_EDITOR} {command}"
    if isinstance(function, str) and function:
        return function
    return kind


def _call_args(kind: str, args: Mapping[str, Any]) -> Any:
    if kind == "call_tool_mcp":
        return dict(args["arguments"]) if isinstance(args.get("arguments"), Mapping) else {}
    return {k: v for k, v in args.items() if k not in _ARG_NOISE}


def _response_id(metadata: Mapping[str, Any]) -> str | None:
    response = metadata.get("model_response")
    key = response.get("id") if isinstance(response, Mapping) else None
    return key if isinstance(key, str) and key else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _content(event: Mapping[str, Any]) -> str:
    content = event.get("content")
    return content if isinstance(content, str) else stringify(content) if content else ""


def _attachments(args: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("image_urls", "file_urls"):
        value = args.get(key)
        if isinstance(value, list) and value:
            meta[key.replace("_urls", "s")] = len(value)
    return meta


def _cwd(transcript: Transcript) -> str | None:
    cwd = transcript.metadata.get("cwd")
    return cwd if isinstance(cwd, str) else None


_DATA_URL = re.compile(r"data:(image/[\w.+-]+);base64,(.+)", re.DOTALL)


def _result(kind: str, event: Mapping[str, Any], extras: Mapping[str, Any]) -> ToolResult:
    text = _content(event)
    if kind == "run":
        metadata = extras.get("metadata")
        suffix = metadata.get("suffix") if isinstance(metadata, Mapping) else None
        if isinstance(suffix, str) and suffix.strip():
            text = f"{text.rstrip()}\n{suffix.strip()}" if text.strip() else suffix.strip()
    if kind == "edit":
        diff = extras.get("diff")
        if isinstance(diff, str) and diff.strip():
            return ToolResult(text=diff, kind="diff")
        if is_unified_diff(text):
            return ToolResult(text=text, kind="diff")
    result = text_result(text)
    if kind == "browse":
        match = _DATA_URL.match(str(extras.get("screenshot") or ""))
        if match:
            result.images.append(ImageData(media_type=match.group(1), data=match.group(2)))
    return result


def _mcp_result(call: Mapping[str, Any] | None, raw: str) -> ToolResult:
    """An MCP call's result as :func:`turnfold.formats.mcp.call_result` reads it, after the
    error OpenHands wrote for a timeout or an ``McpError``. Content that reads as nothing, or
    holds no ``CallToolResult`` (``call`` None), keeps the text OpenHands wrote."""
    if call is None:
        return text_result(raw)
    error = call.get("error")
    result = mcp.call_result(call, error if isinstance(error, str) else None)
    if result is None:  # an empty list: it returned nothing
        return text_result("" if call.get("content") == [] else raw)
    return result


def _recall_notice(extras: Mapping[str, Any], stamp: str | None) -> SystemNotice:
    what = extras.get("recall_type")
    knowledge = extras.get("microagent_knowledge")
    names = (
        [k.get("name") for k in knowledge if isinstance(k, Mapping)]
        if isinstance(knowledge, list)
        else []
    )
    shown = [n for n in names if isinstance(n, str)]
    if isinstance(what, str):
        key = "reader.runtime_context.kind.names" if shown else "reader.runtime_context.kind"
    else:
        key = "reader.runtime_context.names" if shown else "reader.runtime_context"
    said = {"kind": what, "names": ", ".join(shown)}
    return notice(key, said, subtype="recall", timestamp=stamp)


# --- whole sources -----------------------------------------------------------------------


def _events(history: list[Any]) -> Iterator[tuple[Any, bool]]:
    """Events of a history, flattening old ``[action, observation]`` pairs and nesting a
    resolver's flat events (:func:`_nested`); ``True`` marks an observation that answers the
    action just before it (a pair's, or a flat event's: it has no ``cause`` to say which)."""
    for item in history:
        if isinstance(item, list):
            for index, event in enumerate(item[:2]):
                yield event, index == 1
        elif _is_flat(item):
            nested = _nested(item)
            yield nested, "observation" in nested
        else:
            yield item, False


def _is_flat(event: Any) -> bool:
    """An event as ``dataclasses.asdict`` writes it (a resolver output's ``history``,
    ``resolver/issue_resolver.py``): the action's or observation's own fields side by side,
    no ``args`` or ``extras``, and none of the stream's ``id``, ``source``, ``cause`` or
    ``timestamp`` (they are no dataclass fields of ``Event``)."""
    if not isinstance(event, Mapping) or "source" in event:
        return False
    if isinstance(event.get("action"), str):
        return "args" not in event
    return isinstance(event.get("observation"), str) and "extras" not in event


def _nested(event: Mapping[str, Any]) -> dict[str, Any]:
    """A flat event in ``event_to_dict``'s shape, which the reader maps: an action's fields
    as its ``args``, an observation's (but its ``content``) as its ``extras``."""
    if isinstance(event.get("action"), str):
        return {"action": event["action"],
                "args": {k: v for k, v in event.items() if k != "action"}}  # fmt: skip
    extras = {k: v for k, v in event.items() if k not in ("observation", "content")}
    return {"observation": event["observation"], "content": event.get("content", ""),
            "extras": extras}  # fmt: skip


def _read_history(reader: _Reader, history: list[Any], first_line: int) -> None:
    last: ToolCall | None = None
    for offset, (event, answers) in enumerate(_events(history)):
        started = reader.feed(event, first_line, paired=last if answers else None)
        last = started if not answers else None
        del offset


def _instance(reader: _Reader, instance: Mapping[str, Any], line: int) -> None:
    metadata = reader.root.transcript.metadata
    instance_id = instance.get("instance_id")
    if isinstance(instance_id, (str, int)):
        metadata["sample"] = instance_id
    if _is_resolver_output(instance):
        _resolver_metadata(metadata, instance)
    meta = instance.get("metadata")
    if isinstance(meta, Mapping):
        if isinstance(meta.get("agent_class"), str):
            metadata["agent_class"] = meta["agent_class"]
        if isinstance(meta.get("dataset"), str):
            metadata["task"] = meta["dataset"]
        # V0's EvalMetadata names its model in ``llm_config``, V1's (OpenHands/benchmarks) in
        # ``llm``: an instance that failed before its conversation began names it nowhere else.
        llm = meta.get("llm_config", meta.get("llm"))
        if isinstance(llm, Mapping) and isinstance(llm.get("model"), str) and llm["model"]:
            metadata["model"] = llm["model"]
    attempt = instance.get("attempt")  # V1: which try of an iterative (critic) evaluation
    if isinstance(attempt, int) and not isinstance(attempt, bool):
        metadata["attempt"] = attempt
    history: list[Any] = instance["history"]
    metrics = instance.get("metrics")
    # OpenHands V1 (OpenHands/benchmarks) keeps the SDK's events and Metrics
    sdk = any(map(openhands_sdk.is_event, history[:5]))
    if isinstance(metrics, Mapping) and not sdk:
        cost = recorded_cost(metrics)
        if cost is not None:
            metadata["cost_usd"] = cost
        totals = _totals(metrics.get("accumulated_token_usage"))
        if totals:
            metadata["usage"] = totals
    result = instance.get("test_result")
    if isinstance(result, Mapping):
        metadata["test_result"] = dict(result)
    error = instance.get("error")
    if isinstance(error, str) and error.strip():
        metadata["error"] = error
    outcome = outcome_of(instance)
    if outcome is not None:
        metadata["outcome"] = outcome
    instruction = instance.get("instruction")
    if isinstance(instruction, str) and instruction.strip() and not _has_prompt(history, sdk):
        reader.root.transcript.append(UserMessage(text=instruction.strip()))
    reader.source.mapped("instance")
    if sdk:
        metadata["source_format"] = openhands_sdk.NAME
        openhands_sdk.read_history(reader.source, reader.root.transcript, history, metrics, line)
    else:
        _read_history(reader, history, line)
    if isinstance(error, str) and error.strip():
        reader.root.transcript.append(AssistantError(message=error.strip()))


def _totals(usage: Any) -> dict[str, int]:
    """A ``Metrics.accumulated_token_usage`` as H-6 usage totals (litellm's prompt count as
    :func:`litellm_prompt_tokens` reads it); empty when it records none."""
    if not isinstance(usage, Mapping):
        return {}
    read, written = as_int(usage.get("cache_read_tokens")), as_int(usage.get("cache_write_tokens"))
    counts = {
        "input_tokens": litellm_prompt_tokens(as_int(usage.get("prompt_tokens")), read, written),
        "output_tokens": as_int(usage.get("completion_tokens")),
        "cache_read_tokens": read,
        "cache_write_tokens": written,
    }
    return {name: count for name, count in counts.items() if count is not None}


def _resolver_metadata(metadata: dict[str, Any], output: Mapping[str, Any]) -> None:
    """A resolver output's issue (``sample``: its number, ``title``, ``task``: its repository),
    patch, and the resolver's verdict with its explanation (``outcome`` is :func:`outcome_of`'s)."""
    issue: Mapping[str, Any] = output["issue"]
    metadata["issue"] = dict(issue)
    if isinstance(issue.get("number"), (str, int)):
        metadata["sample"] = issue["number"]
    if isinstance(issue.get("title"), str) and issue["title"]:
        metadata["title"] = issue["title"]
    owner, repo = issue.get("owner"), issue.get("repo")
    if isinstance(owner, str) and isinstance(repo, str) and owner and repo:
        metadata["task"] = f"{owner}/{repo}"
    for key in ("issue_type", "base_commit", "git_patch", "result_explanation"):
        if isinstance(output.get(key), str) and output[key]:
            metadata[key] = output[key]
    if isinstance(output.get("success"), bool):
        metadata["success"] = output["success"]
    if isinstance(output.get("comment_success"), list):
        metadata["comment_success"] = list(output["comment_success"])


def _has_prompt(history: list[Any], sdk: bool) -> bool:
    if sdk:
        return any(
            isinstance(e, Mapping) and e.get("kind") == "MessageEvent" and e.get("source") == "user"
            for e in history
        )
    return any(
        isinstance(e, Mapping)
        and e.get("action") == "message"
        and _source(e, _mapping(e.get("args"))) == "user"
        for e, _ in _events(history)
    )


def _source(event: Mapping[str, Any], args: Mapping[str, Any]) -> Any:
    """Who wrote an event. A message without its ``source`` (``dataclasses.asdict`` and
    ``event_to_memory`` leave it out) is the agent's when it waits for a reply: CodeActAgent
    writes its messages as ``MessageAction(content, wait_for_response=True)``
    (``agenthub/codeact_agent/function_calling.py``), the user's and the fake user's replies
    keep the default ``False`` (``core/main.py``, ``resolver/issue_resolver.py``)."""
    source = event.get("source")
    if source is None and event.get("action") == "message":
        return "agent" if args.get("wait_for_response") is True else "user"
    return source


#: An eval output holds one instance per line; ``load(path, sample=ID)`` picks one (spec §10).
HAS_SAMPLES = True


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """An event list (JSON array or lines), or one instance of an eval output: the one whose
    ``instance_id`` is ``sample``, else the first (the others are named in a warning), told
    its share of the file's warnings as a scan's row counts them (:class:`Instances`)."""
    if epoch not in (None, 1):
        raise ValueError(f"{source.name}: OpenHands outputs have no epochs; epoch={epoch!r}")
    folder = session_of(source.path) if source.path is not None else None
    if folder is not None:
        if sample is not None:
            raise ValueError(f"{source.name}: a session is one run, with no sample={sample!r}")
        return _session(folder, source)
    transcript = Transcript(metadata={"source_format": NAME, "agent": "openhands"})
    reader = _Reader(source, transcript)
    document = source.document if source.is_document else None
    if isinstance(document, Mapping):
        if not _is_instance(document):
            raise TranscriptFormatError(source.name, [NAME], None, "no OpenHands events")
        _check_sample(source.name, sample, [instance_id_of(document)])
        _instance(reader, document, 1)
    elif isinstance(document, list):
        if sample is not None:
            raise ValueError(f"{source.name}: an event list is one run, with no sample={sample!r}")
        _read_history(reader, document, 1)
    else:
        shown: str | None = None
        others: list[str] = []
        last: ToolCall | None = None
        seen: dict[str, int] = {}
        # The shown instance's share of the file's warnings, as a scan's row counts it
        # (Instances), and the events': taken as each instance and event is met.
        told = _Share()
        for line, record in source.records():
            if isinstance(record, MalformedLine):
                source.warn(record.reason, line)
            elif _is_instance(record):
                instance_id = instance_id_of(record)
                if instance_id in seen:
                    source.warn(_again(instance_id, seen[instance_id]), line)
                    continue
                seen[instance_id] = line
                wanted = instance_id == str(sample) if sample is not None else shown is None
                told.met(source.warnings, line, shown=wanted and shown is None)
                if wanted and shown is None:
                    shown = instance_id
                    _instance(reader, record, line)
                else:
                    others.append(instance_id)
                    source.ignored("instance/other")
            elif isinstance(record, list):
                for event, answers in _events([record]):
                    started = reader.feed(event, line, paired=last if answers else None)
                    last = started if not answers else None
                told.event(source.warnings, line)
            else:
                last = reader.feed(record, line)
                told.event(source.warnings, line)
        if shown is None:
            _check_sample(source.name, sample, others)
        source.warnings[:] = told.kept(source.warnings)
        if others and sample is None:
            source.warn(
                f"{len(others)} more instance(s) not shown: load() reads the first instance "
                f"({shown}) of an eval output; load(path, sample=ID) reads another "
                f"({', '.join(others[:5])}{', …' if len(others) > 5 else ''})"
            )
    reader.finish()
    return transcript


# --- a V0 session's folder ---------------------------------------------------------------------

#: An OpenHands V0 conversation's folder (``openhands/storage/locations.py``):
#: ``sessions/<id>/`` (``users/<user>/conversations/<id>/`` on a server) holds
#: ``events/<event id>.json``, one event each as ``event_to_dict`` writes it, the
#: ``ConversationMetadata`` in ``metadata.json``, and pickles of the agent's state.
SESSION_METADATA = "metadata.json"
SESSION_EVENTS = "events"
_SESSION_EVENT = re.compile(r"^(\d{1,12})\.json$")


def session_of(path: Path, not_listed: NotListed | None = None) -> Path | None:
    """The V0 session folder whose ``metadata.json`` or event file ``path`` is; None for
    anything else. Told by a listing of its ``events/``; one that cannot be listed is told to
    ``not_listed``, and the folder is a session by its place when its ``metadata.json`` is
    there (read with what that says, its events said not read: :func:`_session`).

    >>> session_of(Path("/nowhere/events/3.json")) is None  # no such folder
    True
    """
    if path.name == SESSION_METADATA:
        folder = path.parent
    elif path.parent.name == SESSION_EVENTS and _SESSION_EVENT.match(path.name):
        folder = path.parent.parent
    else:
        return None
    events = folder / SESSION_EVENTS
    try:
        with os.scandir(events) as entries:
            return folder if any(_SESSION_EVENT.match(entry.name) for entry in entries) else None
    except (FileNotFoundError, NotADirectoryError):  # no events/: no session
        return None
    except OSError as error:
        if not_listed is not None:
            not_listed(events, error)
    # Its events/ not listed may hold its events all the same: never taken for no session.
    try:
        return folder if (folder / SESSION_METADATA).is_file() else None
    except OSError:  # the folder may not be searched either: nothing tells it
        return None


def _session_folder(path: Path, not_listed: NotListed | None = None) -> Path | None:
    """The V0 session folder ``path`` is, or whose ``events/`` it is; None for anything else
    (an ``events/`` that cannot be listed told to ``not_listed``, as :func:`session_of` tells
    it)."""
    folder = session_of(path / SESSION_METADATA, not_listed)
    if folder is None and path.name == SESSION_EVENTS:
        folder = session_of(path.parent / SESSION_METADATA, not_listed)
    return folder


def detect_path(path: Path) -> Evidence | None:
    """A V0 session's folder (or its ``events/``), or an archive (tar or zip) that holds a
    session (:func:`holds_sessions`); None for other files, read as JSON."""
    if path.is_file():
        peek = holds_sessions(path)
        return Evidence(share=1.0, marks=1) if peek is not None and peek.found else None
    # An events/ that cannot be listed is no sign the folder is not a session.
    unlisted = Unlisted()
    if _session_folder(path, unlisted) is not None:
        return Evidence(share=1.0, marks=1)
    unlisted.not_mine(path)
    return None


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """A V0 session from its folder, ``load(folder)``; a session kept as an archive
    (:func:`_archived`); any other path as its file of events or instances
    (``load(path, format="openhands")``)."""
    if path.is_file() and is_archive(path):
        return _archived(path, sample)
    unlisted = Unlisted()
    folder = _session_folder(path, unlisted) if path.is_dir() else None
    if folder is None:
        unlisted.not_mine(path)  # a folder, never opened as a file, whose events were not listed
        return read_file(path, partial(read, sample=sample, epoch=epoch))
    if sample is not None:
        raise ValueError(f"{path}: a session is one run, with no sample={sample!r}")
    source = Source(str(path), iter(()), path=path)
    return source.hand_over(_session(folder, source))


def _session(folder: SessionPath, into: Source) -> Transcript:
    """A V0 session: its events in their order, then what ``metadata.json`` says of the run
    (the events record no title, and their costs are per response)."""
    events = folder / SESSION_EVENTS
    found: dict[int, SessionPath] = {}
    try:
        entries: list[SessionPath] = list(events.iterdir())
    except OSError as error:  # listed as the session was found, but not now: said, not raised
        entries = []
        into.warn(folder_not_listed(str(events), error, "event files (<n>.json)"))
    for path in sorted(entries, key=lambda entry: entry.name):
        match = _SESSION_EVENT.match(path.name)
        if match is not None and path.is_file():
            found[int(match.group(1))] = path
        elif not path.name.startswith("."):
            into.warn(f"{path.name} in {events}: not an event file, not read")
    records = [(index + 1, event_file_value(found[index])) for index in sorted(found)]
    source = Source(str(events), iter(records), warnings=into.warnings,
                    path=events if isinstance(events, Path) else None,  # an archive's open nothing
                    accounting=into.accounting)  # fmt: skip
    transcript = Transcript(metadata={"source_format": NAME, "agent": "openhands"})
    reader = _Reader(source, transcript)
    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
        else:
            reader.feed(record, line)
    reader.finish()
    _session_metadata(folder / SESSION_METADATA, transcript.metadata, into, reader.accumulated)
    return transcript


def _session_metadata(
    path: SessionPath,
    metadata: dict[str, Any],
    source: Source,
    accumulated: Mapping[str, Any] | None,
) -> None:
    """``metadata.json`` (``ConversationMetadata``, ``storage/data_models``) as H-6 metadata.
    Its token totals name no cache reads or writes; the events' last ``accumulated_token_usage``
    does, and when it has the same prompt and completion counts it is these totals in full."""
    if not path.is_file():
        return
    value = event_file_value(path)
    if isinstance(value, MalformedLine) or not isinstance(value, Mapping):
        source.warn(f"{path}: not read ({getattr(value, 'reason', 'not an object')})",
                    record_type="session")  # fmt: skip
        return
    for key, name in (("conversation_id", "session_id"), ("title", "title")):
        if isinstance(value.get(key), str) and value[key].strip():
            metadata[name] = value[key].strip()
    if isinstance(value.get("llm_model"), str) and value["llm_model"]:
        metadata.setdefault("model", value["llm_model"])
    cost = value.get("accumulated_cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        metadata["cost_usd"] = float(cost)  # the run's total, the events' last is a response's
    totals = {
        name: count
        for name, key in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"))
        if (count := as_int(value.get(key))) is not None
    }
    if accumulated is not None and all(
        as_int(accumulated.get(key)) == as_int(value.get(key))
        for key in ("prompt_tokens", "completion_tokens")
    ):
        totals = _totals(accumulated) or totals
    if totals:
        metadata["usage"] = totals
    source.note("session", "mapped")


# --- a session kept as an archive ---------------------------------------------------------------
#
# A session is passed on as an archive of its folder: ``tar czf`` of ``~/.openhands/sessions/<id>``
# (V0) or ``~/.openhands/conversations/<id>`` (V1); the agent server's workspace archive
# (``GET /api/file/archive?format=tar.gz``, ``file_router._create_tar_gz_archive``: a folder's
# tree under its name, with an ``archive_manifest.json``); or its "download trajectory" zip
# (``GET /api/file/download-trajectory/<id>``, ``_create_zip_from_directory``: the
# conversation's folder under its id); or the OpenHands app server's export of a conversation
# (``GET /api/v1/app-conversations/<id>/download``: its ``meta.json`` and event files at the
# zip's top, :func:`.openhands_sdk.read_export`). It is read where it lies, in memory
# (:func:`.archive.read_members`): nothing is extracted.


def holds_sessions(path: Path) -> Peek | None:
    """Whether the archive at ``path`` holds a session's member (:func:`_is_session_member`),
    looked for in all its names, within the bounds of :func:`.archive.find_member`; None for a
    file that is no archive."""
    return find_member(path, _is_session_member)


def _is_session_member(name: str) -> bool:
    """Whether a member's name is a V0 session's or a V1 conversation's event file, a V1
    conversation's ``base_state.json``, or an event file of the app server's export."""
    parts = name.rstrip("/").split("/")
    if parts[-1] == openhands_sdk.BASE_STATE or openhands_sdk.EXPORT_EVENT_FILE.match(parts[-1]):
        return True
    return (
        len(parts) > 1
        and parts[-2] == SESSION_EVENTS
        and bool(_SESSION_EVENT.match(parts[-1]) or openhands_sdk.EVENT_FILE.match(parts[-1]))
    )


#: What reads a session folder of an archive into a transcript, its warnings on the source.
_SessionReader = Callable[[ArchivedPath, Source], Transcript]


def _archived_sessions(root: ArchivedPath) -> list[tuple[_SessionReader, ArchivedPath]]:
    """Every session folder in an archive, with what reads it (a V1 conversation, the app
    server's export of one, a V0 session), in the order of their names; a conversation's
    ``subagents/`` are its own, not sessions."""
    found: list[tuple[_SessionReader, ArchivedPath]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        if openhands_sdk.holds_conversation(folder):
            found.append((openhands_sdk.read_conversation, folder))
        elif openhands_sdk.holds_export(folder):
            found.append((openhands_sdk.read_export, folder))
        elif _holds_session_events(folder):
            found.append((_session, folder))
        else:
            pending.extend(entry for entry in folder.iterdir() if entry.is_dir())
    return sorted(found, key=lambda session: session[1])


def _holds_session_events(folder: ArchivedPath) -> bool:
    events = folder / SESSION_EVENTS
    return events.is_dir() and any(_SESSION_EVENT.match(p.name) for p in events.iterdir())


def _archived(path: Path, sample: Any) -> Transcript:
    """The session an archive holds (``sample=``: the one of that folder name, of several),
    read from the archive in memory; what the archive held that was not read is warned of."""
    return Archived(path).transcript(sample)


class Archived:
    """The OpenHands sessions of an archive, its members read into memory once
    (:func:`.archive.read_members`): each session's transcript as ``load(path, sample=NAME)``
    reads it, so a scan reads an archive of several sessions once, not once a session.

    Raises :class:`TranscriptFormatError` (naming what was not read, when something was not)
    for an archive that holds no session, :class:`.archive.ArchiveError` for one past its
    limits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        root, self._said = read_members(path, lambda name: name.endswith(".json"))
        sessions = _archived_sessions(root)
        if not sessions:
            # A session whose every member was refused (its names leave the archive) is still
            # said: the error names why nothing was read.
            more = ", …" if len(self._said) > 1 else ""
            refused = f"; {self._said[0]}{more}" if self._said else ""
            raise TranscriptFormatError(
                str(path), [NAME], None,
                f"an archive with no OpenHands session in it (no events/ of event files{refused})"
                ": extract it and load or scan its files",
            )  # fmt: skip
        self._sessions: dict[str, tuple[_SessionReader, ArchivedPath]] = {}
        for reader, folder in sessions:
            # The app server's export lies at the zip's top, in no folder: it is named by the
            # conversation's id, as its download is (``conversation_<id>.zip``).
            name = folder.name or openhands_sdk.exported_id(folder) or path.name
            first = self._sessions.setdefault(name, (reader, folder))[1]
            if first is not folder:
                # Two folders of one name (the same session archived twice, at two places):
                # a name picks one, the first; the other is said, never dropped in silence.
                self._said.append(
                    f"{folder}: a second session named {printable(name)} (the first is "
                    f"{first}); not read: extract the archive to read it"
                )

    @property
    def names(self) -> list[str]:
        """The sessions' folder names (what ``sample=`` takes), in the order of their paths."""
        return list(self._sessions)

    def transcript(self, sample: Any = None) -> Transcript:
        """The session of folder name ``sample``; without it the first, the others named in a
        warning, as ``load(path)`` shows it."""
        names = self.names
        if sample is not None and str(sample) not in names:
            raise ValueError(
                f"{self.path}: no session {sample!r}; its sessions: {', '.join(names)}"
            )
        reader, folder = self._sessions[str(sample) if sample is not None else names[0]]
        source = Source(str(self.path), iter(()), path=self.path)
        for reason in self._said:
            source.warn(reason)
        if sample is None and len(names) > 1:
            source.warn(
                f"{len(names)} OpenHands sessions in the archive: {names[0]} is shown; "
                f"load(path, sample=NAME) shows another ({', '.join(names[1:])})"
            )
        return source.hand_over(reader(folder, source))


class NotAnEvalOutput(ValueError):
    """The source is no eval output of instances, one a line (an event list, or a document)."""


def instances(source: Source) -> Instances:
    """Every instance of an eval ``output.jsonl``, in one pass (:class:`Instances`)."""
    return Instances(source)


class Instances:
    """Every instance of an eval ``output.jsonl``, in one pass, as its ``instance_id`` and the
    transcript ``load(path, sample=ID)`` shows for it (what a corpus scan makes one row each).
    Raises :class:`NotAnEvalOutput` for a document or a line that is no instance.

    Each instance is read by a reader of its own, into a transcript with its own warnings and
    accounting, and is told its share of what reading the file warned of (an unreadable line,
    an id met again, which ``load(path, sample=ID)`` cannot reach, invalid UTF-8): an
    instance's lines are its own up to the next instance's, as a run's are in a file of runs
    (:func:`~turnfold.formats.source.warned_records`); those before the first instance are the
    first's, those of no line (the file cut off) the last's. So an instance is yielded once
    the next one is met, or the file ends.

    Once read, :attr:`leading` counts the warnings before the first instance (of a part of a
    file: the last instance's of the parts before it) and :attr:`shares` each instance's share
    after its line, for a scan that joins the parts of a large file (``joined_instances``).
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        #: How many of the file's warnings came before its first instance (all, with none).
        self.leading = 0
        #: Each instance's share of the file's warnings, those before it left out.
        self.shares: dict[str, int] = {}

    def __iter__(self) -> Iterator[tuple[str, Transcript]]:
        from turnfold.formats import report_losses
        from turnfold.formats.source import Source as Own

        source = self.source
        if source.is_document:
            raise NotAnEvalOutput(f"{source.name}: one JSON document, not an eval output")
        module = sys.modules[__name__]
        seen: dict[str, int] = {}
        pending: tuple[str, Transcript] | None = None
        try:
            for line, record in source.records():
                if isinstance(record, MalformedLine):
                    source.warn(record.reason, line)
                    continue
                if not _is_instance(record):
                    raise NotAnEvalOutput(f"{source.name}: line {line} is no eval instance")
                instance_id = instance_id_of(record)
                if instance_id in seen:
                    source.warn(_again(instance_id, seen[instance_id]), line)
                    continue
                seen[instance_id] = line
                source.mapped("instance")
                before = warnings_before(source.warnings, line)
                if pending is not None:
                    yield self._told(pending, before)
                    pending, before = None, []
                else:
                    self.leading = warning_count(before)
                own = Own(source.name, iter(()), path=source.path)
                transcript = Transcript(metadata={"source_format": NAME, "agent": "openhands"})
                reader = _Reader(own, transcript)
                _instance(reader, record, line)
                reader.finish()
                join_warnings(transcript.warnings, [*before, *own.warnings], before=True)
                transcript.accounting = own.accounting
                report_losses(source.name, own.accounting, transcript, module)
                pending = instance_id, transcript
        except Exception:  # the file broke off: the instance read before it is still told
            if pending is not None:
                yield self._told(pending, warnings_before(source.warnings, None))
            raise
        rest = warnings_before(source.warnings, None)
        if pending is not None:
            yield self._told(pending, rest)
        else:
            self.leading = warning_count(rest)

    def _told(
        self, pending: tuple[str, Transcript], share: list[LoadWarning]
    ) -> tuple[str, Transcript]:
        """The instance read last, told its share of the file's warnings."""
        instance_id, transcript = pending
        self.shares[instance_id] = warning_count(share)
        join_warnings(transcript.warnings, share)
        return pending


class _Share:
    """What a load of one instance of an eval output is told of the file's warnings, taken out
    of its source's as each instance and event is met: the shown instance's share, as
    :class:`Instances` tells it (its lines up to the next instance's; those before the first
    instance the first's), and the warnings of every event's line, since every load of a file
    that mixes instances with events shows its events. A file of no instance is told all."""

    def __init__(self) -> None:
        self._shown: list[LoadWarning] = []
        self._taking = False  # whether the lines read now are the shown instance's
        #: Before the first instance, the warnings read so far: the first instance's, but the
        #: events' (by ``id``), which are the shown's whichever instance is; None past it.
        self._ahead: list[LoadWarning] | None = []
        self._events_ahead: set[int] = set()

    def _segment(self, before: list[LoadWarning]) -> None:
        """``before`` are the warnings of lines of the instance read last (or the first's)."""
        if self._ahead is not None:
            join_warnings(self._ahead, before)
        elif self._taking:
            join_warnings(self._shown, before)

    def met(self, warnings: list[LoadWarning], line: int, *, shown: bool) -> None:
        """An instance starts on ``line``, ``shown`` or not: the lines before it were the
        instance's before it (before the first instance: this one's, but the events')."""
        self._segment(warnings_before(warnings, line))
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            events = self._events_ahead
            join_warnings(self._shown, ahead if shown else [w for w in ahead if id(w) in events])
        self._taking = shown

    def event(self, warnings: list[LoadWarning], line: int) -> None:
        """An event was read on ``line``: the lines before it were the instance's before it,
        and its own line's warnings (told by now) are the shown's."""
        self._segment(warnings_before(warnings, line))
        own = warnings_before(warnings, line + 1)
        if self._ahead is not None:
            self._events_ahead.update(id(w) for w in own)
            join_warnings(self._ahead, own)
        else:
            join_warnings(self._shown, own)

    def kept(self, warnings: list[LoadWarning]) -> list[LoadWarning]:
        """The warnings the load is told, once the file is read (``warnings``: what is left
        of its source's, the last instance's): all of them when it holds no instance."""
        self._segment(warnings_before(warnings, None))
        if self._ahead is not None:
            return self._ahead
        return self._shown


def _again(instance_id: str, first: int) -> str:
    """The warning of an instance met again, which ``load(path, sample=ID)`` does not show."""
    return (
        f"instance {instance_id} again (first on line {first}): "
        f"load(path, sample={instance_id!r}) reads the first; this one is not shown"
    )


def _check_sample(name: str, sample: Any, ids: list[str]) -> None:
    """Refuse a ``sample=`` that names none of the instance ids of the output."""
    if sample is not None and str(sample) not in ids:
        raise unselected(name, ids, sample, "OpenHands instance", "<instance id>")
