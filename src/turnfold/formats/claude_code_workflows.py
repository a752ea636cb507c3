"""Claude Code's ``Workflow`` tool: each run's agents nested under the call that launched it.

A ``Workflow`` call runs a script that starts agents (``agent()`` / ``parallel()`` /
``pipeline()``) in the background. Its result line's ``toolUseResult`` (Claude Code's own
``WorkflowOutput`` type) says ``status: "async_launched"`` and gives ``runId``, ``taskId``,
``workflowName``, ``summary`` and ``transcriptDir``. Claude Code then writes, under the session's
directory ``<project>/<sessionId>/``:

- ``subagents/workflows/<runId>/agent-<agentId>.jsonl``: each agent's transcript (a Claude Code
  session file of its own, ``agent-<agentId>.meta.json`` beside it), and ``journal.jsonl``
  (``started`` / ``result`` records by ``agentId``: the order agents started, what each
  returned);
- ``workflows/<runId>.json``: the run's snapshot (``status``, ``workflowName``, ``summary``,
  ``durationMs``, ``agentCount``, ``totalToolCalls``, ``error``, ``result``, and
  ``workflowProgress``: one ``workflow_agent`` item per ``index`` with ``label``, ``agentId``,
  ``state``, ``toolCalls``, ``durationMs``, ``phaseTitle``, ``promptPreview``,
  ``resultPreview``, ``cached``).

A call holds one :class:`SubAgent` (spec L-1), and a run has several agents, so the run is the
Workflow call's sub-agent and its child transcript holds one ``agent`` call per agent (the
script's own ``agent()`` call), each with that agent's transcript as *its* sub-agent. A reader
opens the Workflow line onto one F-7 line per agent, each opening onto what the agent did.

The files are looked up only where Claude Code writes them, below the session's own directory,
by a ``runId`` / ``agentId`` that is a plain name (spec X-1): ``transcriptDir`` is an absolute
path of the machine that wrote it, so it only names the run when ``runId`` is absent. An agent
replayed from an earlier run's cache (``cached: true``, ``resumeFromRunId``) did not run again:
its line says so, and its steps are shown once, under the run it ran in. An agent the snapshot
lists but whose file is missing says so (``steps_missing``) instead of opening onto nothing,
and so does a run with no files at all. Run directories no Workflow call of the session names
(the call's result line was never written: the session was killed mid-call) are still shown, as
a Workflow call of their own at the end of the session with a warning: the corpus counts these
files as the session's (spec C-1), so nothing may be left out. For the same reason a folder there
that is not read as a run is said in a warning, never passed over in silence: one whose name is
not a run id Claude Code writes (a user's copy ``wf_1.bak``; its name came from the disk, so it
never becomes part of a path), and a link leading out of the runs folder (its files are not the
session's: not followed). A file there is no run (Claude Code writes only folders) and is passed
over, but for an agent's file (``agent-<agentId>.jsonl``): the corpus counts it as the session's
(its name is a sub-agent's), and Claude Code writes a run's agents only in the run's folder
(``runAgent``'s ``transcriptSubdir: runId ? `workflows/${runId}` : undefined``, in the bundle of
``@anthropic-ai/claude-code`` 2.1.332: with no run id the agent's file goes to ``subagents/``
itself), so one there is said in a warning and not read: no run names it. A folder of the
session's that cannot be listed (permission denied, gone since it was found, an I/O error) is
said in a warning naming it and what in it is not read, the rest of the session loaded whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from turnfold import codec
from turnfold.formats.common import NameSet, stringify
from turnfold.formats.errors import MalformedLine
from turnfold.formats.source import (
    NotListed,
    Unlisted,
    folder_not_listed,
    found_file,
    json_lines,
    once_a_folder,
    sibling_files,
)
from turnfold.model import (
    LoadWarning,
    SubAgent,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    UserMessage,
)

#: The tool that launches a workflow run.
WORKFLOW_TOOLS = NameSet({"Workflow"})
#: The same, for a call's name (always a str): a plain set's test, on the per-result path.
WORKFLOW_TOOL_NAMES = frozenset(WORKFLOW_TOOLS)
#: The name of each agent's call in a run's child transcript: the script's ``agent()``.
AGENT_CALL = "agent"

#: ``status`` of a run's snapshot → the Workflow call's status (others stay ``unknown``, L-3).
_RUN_STATUS: dict[str, ToolStatus] = {
    "completed": "success",
    "failed": "error",
    "killed": "cancelled",
    "cancelled": "cancelled",
    "stopped": "cancelled",
    "aborted": "cancelled",
}
#: ``state`` of a ``workflow_agent`` progress item → its agent call's status.
_AGENT_STATE: dict[str, ToolStatus] = {
    "done": "success",
    "completed": "success",
    "error": "error",
    "failed": "error",
    "cancelled": "cancelled",
    "killed": "cancelled",
    "stopped": "cancelled",
    "skipped": "cancelled",
}

#: Reads one agent file with the session's own loader (its records accounted for in the
#: session's accounting); None when it holds nothing readable (the loader has warned).
ReadChild = Callable[[Path, int | None], Transcript | None]


@dataclass(slots=True)
class WorkflowLaunch:
    """A Workflow call whose result line named its run."""

    call: ToolCall
    line: int
    run_id: str | None
    workflow_name: str | None = None
    summary: str | None = None
    remote: bool = False
    #: Where ``run_id`` was read: ``runId``, or the last name of ``transcriptDir`` without it.
    run_id_from: str = "runId"


@dataclass
class WorkflowRuns:
    """The run directories of one session, shared by the session and the sub-agents it loads
    (a sub-agent may launch a workflow too), so that each run is nested once."""

    session_dir: Path | None = None
    claimed: set[str] = field(default_factory=set)

    @property
    def runs_dir(self) -> Path | None:
        return self.session_dir / "subagents" / "workflows" if self.session_dir else None

    def run_dir(self, run_id: str) -> Path | None:
        return self.runs_dir / run_id if self.runs_dir and _plain(run_id) else None

    def snapshot_path(self, run_id: str) -> Path | None:
        if self.session_dir is None or not _plain(run_id):
            return None
        return self.session_dir / "workflows" / f"{run_id}.json"

    def agent_file(self, run_id: str, agent_id: str, not_listed: NotListed) -> Path | None:
        """``agent-<agentId>.jsonl`` of this run, when it is there; a run folder that cannot
        be searched is told to ``not_listed``."""
        own = self.run_dir(run_id)
        path = own / f"agent-{agent_id}.jsonl" if own is not None and _plain(agent_id) else None
        return path if path is not None and found_file(path, not_listed) else None

    def all_folders(self, warn: Callable[[LoadWarning], None], source_name: str) -> list[Path]:
        """Every folder of the runs folder (a link to one too), in name order: each is read as
        a run or said not to be (:func:`unclaimed`). A file there is no run: an agent's file
        is said in a warning (:func:`_stray_agent`), any other passed over. A runs folder that
        cannot be listed is said in a warning, and holds no run to read."""
        runs = self.runs_dir
        if runs is None:
            return []
        try:
            if not runs.is_dir():
                return []
            entries = sorted(runs.iterdir())
        except OSError as error:
            reason = folder_not_listed(
                runs, error, "workflow runs (folders of agent-*.jsonl files)"
            )
            warn(LoadWarning(reason=reason, source=source_name))
            return []
        folders = []
        for path in entries:
            try:
                folder = path.is_dir()
                stray = not folder and _is_agent_file(path.name) and path.is_file()
            except OSError as error:  # a link whose target cannot be looked at
                warn(LoadWarning(reason=f"{path}: not read ({error.strerror or error})",
                                 source=source_name))  # fmt: skip
                continue
            if folder:
                folders.append(path)
            elif stray:
                warn(LoadWarning(reason=_stray_agent(path), source=source_name))
        return folders

    def leads_out(self, folder: Path) -> bool:
        """Whether ``folder`` of the runs folder is a link (or junction) leading out of it:
        what it leads to is not this session's to read. Resolved, both sides, so a runs folder
        reached through a link of its own (a linked ``~/.claude``) still holds its runs."""
        runs = self.runs_dir
        if runs is None:
            return True
        try:
            real, root = folder.resolve(strict=True), runs.resolve(strict=True)
        except (OSError, RuntimeError):  # gone since it was listed, or a loop of links
            return True
        return real == root or not real.is_relative_to(root)


def launched(call: ToolCall, extra: Any, line: int) -> WorkflowLaunch | None:
    """The run a Workflow result line names (``toolUseResult``), or None when it names none
    (a syntax error: the call's own result says so)."""
    if not isinstance(extra, dict):
        return None
    status = extra.get("status")
    if status not in ("async_launched", "remote_launched"):
        return None
    run_id, run_id_from = _str(extra.get("runId")), "runId"
    if run_id is None and (folder := _str(extra.get("transcriptDir"))):
        run_id = folder.replace("\\", "/").rstrip("/").rpartition("/")[2] or None
        run_id_from = "transcriptDir's last name"
    return WorkflowLaunch(
        call,
        line,
        run_id,
        workflow_name=_str(extra.get("workflowName")),
        summary=_str(extra.get("summary")),
        remote=status == "remote_launched",
        run_id_from=run_id_from,
    )


def attach(
    launch: WorkflowLaunch,
    runs: WorkflowRuns,
    read_child: ReadChild,
    warn: Callable[[LoadWarning], None],
    source_name: str,
) -> None:
    """Give ``launch``'s call its run as a :class:`SubAgent` whose transcript lists the agents."""
    call = launch.call
    agent = SubAgent(name=launch.workflow_name, task=launch.summary or call.description)
    call.subagent = agent
    run_id = launch.run_id
    if launch.remote or run_id is None:
        # Dispatched to a cloud session (or the line names no run): nothing is written here.
        agent.steps_missing = call.status not in ("error", "cancelled")
        return
    if runs.session_dir is None:
        return  # read from text or a stream: there is no directory to look in
    if not _plain(run_id):
        # Claude Code names a run ``wf_<hex>-<hex>``: any other id could name folders outside
        # the session's (``..``, an absolute path), where a hostile run's files would be read.
        agent.steps_missing = call.status not in ("error", "cancelled")
        reason = (
            f"{launch.run_id_from} {run_id!r} is not a plain name: its workflow run's files, in "
            "the folders it would name under this session's, are not looked for"
        )
        warn(LoadWarning(reason=reason, line=launch.line, source=source_name))
        return
    runs.claimed.add(run_id)
    folder = runs.run_dir(run_id)
    if folder is not None and _is_folder(folder) and runs.leads_out(folder):
        agent.steps_missing = call.status not in ("error", "cancelled")
        reason = _link_out_reason(run_id, runs)
        warn(LoadWarning(reason=reason, line=launch.line, source=source_name))
        return
    _fill(agent, call, run_id, runs, read_child, warn, source_name, launch.line)


def unclaimed(
    runs: WorkflowRuns,
    read_child: ReadChild,
    warn: Callable[[LoadWarning], None],
    source_name: str,
) -> list[ToolCall]:
    """A Workflow call for each run directory of the session that no call named; a warning
    for each folder there not read as a run."""
    calls: list[ToolCall] = []
    for folder in runs.all_folders(warn, source_name):
        run_id = folder.name
        if run_id in runs.claimed:
            continue
        if not _plain(run_id):
            # Its files may be a real run's, yet no call can name it and a name from the disk
            # never becomes part of a path: not looked into at all, only said.
            reason = (
                f"workflow run folder {run_id!r} is not a plain name, not a run id Claude Code "
                f"writes: its files, in {runs.runs_dir}, are not read"
            )
            warn(LoadWarning(reason=reason, source=source_name))
            continue
        if runs.leads_out(folder):
            runs.claimed.add(run_id)
            warn(LoadWarning(reason=_link_out_reason(run_id, runs), source=source_name))
            continue
        unread = Unlisted()
        if not sibling_files(folder, "agent-*.jsonl", unread) and not unread.folders:
            continue  # no agent ran in it: nothing to show
        # A folder that could not be listed may hold agents: shown with what its snapshot
        # names, and its reading (:func:`_agents`) says what was not listed.
        runs.claimed.add(run_id)
        warn(
            LoadWarning(
                reason=f"workflow run {run_id!r} names no Workflow call of the session; its "
                "agents are shown at the end",
                source=source_name,
            )
        )
        call = ToolCall(
            call_id=f"workflow:{run_id}",
            name="Workflow",
            args={"runId": run_id},
            status="unknown",
            meta={"synthetic": "unclaimed workflow run"},
        )
        agent = SubAgent()
        call.subagent = agent
        _fill(agent, call, run_id, runs, read_child, warn, source_name, None)
        calls.append(call)
    return calls


# --- one run ------------------------------------------------------------------------------------


def _fill(
    agent: SubAgent,
    call: ToolCall,
    run_id: str,
    runs: WorkflowRuns,
    read_child: ReadChild,
    warn: Callable[[LoadWarning], None],
    source_name: str,
    line: int | None,
) -> None:
    snapshot_path = runs.snapshot_path(run_id)
    snapshot = _read_json(snapshot_path, warn)
    _apply_snapshot(agent, call, snapshot)
    journal = _read_journal(runs.run_dir(run_id), warn)
    child = Transcript(metadata={"source_format": "claude-code", "workflow_run": run_id})
    refused: set[str] = set()

    def say(where: Path, error: OSError) -> None:
        reason = f"workflow run {run_id!r}: {folder_not_listed(where, error, _AGENT_FILES)}"
        warn(LoadWarning(reason=reason, line=line, source=source_name))

    unlisted = once_a_folder(say)  # each folder once, though each agent's lookup meets it

    for item in _agents(run_id, runs, snapshot, journal, unlisted):
        if item.agent_id and not _plain(item.agent_id) and item.agent_id not in refused:
            # The snapshot's ``agentId`` could name a file outside the run's folder (``..``,
            # an absolute path): the agent keeps its call, its steps said missing.
            refused.add(item.agent_id)
            warn(
                LoadWarning(
                    reason=f"agentId {item.agent_id!r} of workflow run {run_id!r} is not a "
                    "plain name: its agent's file, in the run's folder, is not looked for",
                    source=str(snapshot_path),
                )
            )
        path = runs.agent_file(run_id, item.agent_id, unlisted) if item.agent_id else item.path
        if item.progress.get("cached") is True:
            path = None  # replayed, not run again: its steps are under the run it ran in
        transcript = read_child(path, line) if path is not None else None
        child.append(_agent_call(run_id, item, transcript, journal.results))
    if child.entries:
        agent.transcript = child
        agent.subagent_count = len(child.entries)
    elif call.status not in ("error", "cancelled") and _expects_agents(snapshot):
        agent.steps_missing = True
        where = runs.run_dir(run_id)
        warn(
            LoadWarning(
                reason=f"workflow run {run_id!r}: no agent transcripts in {where}; the run's "
                "steps are not shown",
                line=line,
                source=source_name,
            )
        )


def _apply_snapshot(agent: SubAgent, call: ToolCall, snapshot: dict[str, Any]) -> None:
    if not snapshot:
        return
    agent.name = agent.name or _str(snapshot.get("workflowName"))
    agent.task = agent.task or _str(snapshot.get("summary")) or _str(snapshot.get("title"))
    count = snapshot.get("totalToolCalls")
    if isinstance(count, int) and not isinstance(count, bool):
        agent.tool_count = count
    duration = _number(snapshot.get("durationMs"))
    if duration is not None:
        agent.duration_ms = duration
    status = _RUN_STATUS.get(str(snapshot.get("status")))
    if call.status == "unknown" and status is not None:
        # Launched in the background, the call stayed unknown; the snapshot has the outcome
        # (a task notification, when there was one, settled the call already).
        call.status = status
        result = snapshot.get("result")
        if result is not None:
            before = call.result.text if call.result and call.result.text else ""
            text = "\n\n".join(p for p in (before, stringify(result)) if p)
            call.result = ToolResult(text=text)
    error = _str(snapshot.get("error"))
    if error is not None:
        agent.reason = error.splitlines()[0]


def _expects_agents(snapshot: dict[str, Any]) -> bool:
    """Whether the run should have left agent files: a snapshot saying none ran, no."""
    none_ran = snapshot.get("agentCount") == 0 and not snapshot.get("workflowProgress")
    return not none_ran


@dataclass(slots=True)
class _AgentItem:
    """One agent of a run: what the snapshot says of it, and where its file is."""

    index: int | None
    agent_id: str | None
    progress: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


@dataclass(slots=True)
class _Journal:
    order: list[str] = field(default_factory=list)  # agent ids, in the order they started
    results: dict[str, str] = field(default_factory=dict)  # agent id → what it returned


def _agents(
    run_id: str,
    runs: WorkflowRuns,
    snapshot: dict[str, Any],
    journal: _Journal,
    unlisted: Callable[[Path, OSError], None],
) -> list[_AgentItem]:
    """The run's agents, in the order they were started: the snapshot's items by ``index``,
    then files the snapshot does not list, by the journal's start order, then by name. A run
    folder that cannot be listed is told to ``unlisted``: the snapshot's agents are still
    looked for by their ids."""
    items: dict[int, _AgentItem] = {}
    progress = snapshot.get("workflowProgress")
    for entry in progress if isinstance(progress, list) else []:
        if not isinstance(entry, dict) or entry.get("type") != "workflow_agent":
            continue
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            continue
        merged = {**items[index].progress, **entry} if index in items else dict(entry)
        items[index] = _AgentItem(index, _str(merged.get("agentId")), merged)
    ordered = [items[i] for i in sorted(items)]
    listed = {item.agent_id for item in ordered if item.agent_id}
    folder = runs.run_dir(run_id)
    files = sibling_files(folder, "agent-*.jsonl", unlisted) if folder else []
    started = {agent_id: n for n, agent_id in enumerate(journal.order)}
    extra: list[tuple[float, str, Path]] = []
    for path in files:
        agent_id = path.name.removeprefix("agent-").removesuffix(".jsonl")
        if agent_id not in listed:
            extra.append((started.get(agent_id, float("inf")), path.name, path))
    for _, _, path in sorted(extra):
        agent_id = path.name.removeprefix("agent-").removesuffix(".jsonl")
        ordered.append(_AgentItem(None, agent_id if _plain(agent_id) else None, path=path))
    return ordered


def _agent_call(
    run_id: str,
    item: _AgentItem,
    transcript: Transcript | None,
    results: dict[str, str],
) -> ToolCall:
    progress = item.progress
    cached = progress.get("cached") is True
    label = _str(progress.get("label"))
    prompt = _str(progress.get("promptPreview")) or _computed_task(_first_prompt(transcript))
    status = _AGENT_STATE.get(str(progress.get("state")), "unknown")
    result = results.get(item.agent_id or "") or _str(progress.get("resultPreview"))
    key = item.agent_id or (f"#{item.index}" if item.index is not None else "?")
    subagent = SubAgent(
        name=label or _str(progress.get("agentType")),
        task=_first_line(prompt),
        transcript=transcript,
        agent_id=item.agent_id,
        tool_count=_count(progress.get("toolCalls")),
        duration_ms=_number(progress.get("durationMs")),
        reason=_str(progress.get("error")) if status in ("error", "cancelled") else None,
        # The snapshot lists the agent, yet no file holds its steps (L-1, issue 21.14).
        steps_missing=transcript is None and status != "cancelled" and not cached,
    )
    if transcript is not None and item.agent_id:
        transcript.metadata["agent_id"] = item.agent_id
    args: dict[str, Any] = {"label": label} if label else {}
    if _str(progress.get("phaseTitle")):
        args["phase"] = progress["phaseTitle"]
    if prompt:
        args["prompt"] = prompt
    meta: dict[str, Any] = {"workflow_run": run_id}
    if cached:
        meta["cached"] = True  # replayed from an earlier run's cache
    return ToolCall(
        call_id=f"{run_id}/{key}",
        name=AGENT_CALL,
        args=args,
        description=f"{label} (from an earlier run)" if cached and label else label,
        status=status,
        result=ToolResult(text=result, kind="subagent") if result else None,
        started_at=_first_time(transcript),
        timestamp=_first_time(transcript),
        duration_ms=subagent.duration_ms,  # the agent's run is the call's
        subagent=subagent,
        meta=meta,
    )


# --- reading the run's own files ----------------------------------------------------------------


def _read_json(path: Path | None, warn: Callable[[LoadWarning], None]) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        if not path.is_file():  # its folder not searchable: raised, as by the read
            return {}
        value = codec.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warn(LoadWarning(reason=f"workflow snapshot unreadable: {exc}", source=str(path)))
        return {}
    if not isinstance(value, dict):
        warn(LoadWarning(reason="workflow snapshot is not a JSON object", source=str(path)))
        return {}
    return value


def _read_journal(folder: Path | None, warn: Callable[[LoadWarning], None]) -> _Journal:
    """The journal's start order and results, read line by line with the record limit of every
    other reader (:func:`~turnfold.formats.source.json_lines`): a journal of any size, or with
    a line of any length, holds one chunk of it and one line at a time (spec X-1)."""
    journal = _Journal()
    path = folder / "journal.jsonl" if folder is not None else None
    if path is None:
        return journal
    try:
        if not path.is_file():  # its folder not searchable: raised, as by the read
            return journal
        with path.open("rb") as stream:
            _read_journal_lines(stream, path, journal, warn)
    except OSError as exc:
        warn(LoadWarning(reason=f"workflow journal unreadable: {exc}", source=str(path)))
    return journal


def _read_journal_lines(
    stream: IO[bytes], path: Path, journal: _Journal, warn: Callable[[LoadWarning], None]
) -> None:
    # The lines' own warnings (invalid UTF-8, shown as U+FFFD) are handed on as each line is
    # read: the session's list caps them, this one never grows past a line's worth.
    undecodable: list[LoadWarning] = []
    source = json_lines(stream, str(path), path=path, warnings=undecodable)
    for number, record in source.records():
        for warning in undecodable:
            warn(warning)
        undecodable.clear()
        # The journal's records are not the session's to account for (C-1 counts its lines);
        # each is noted so that its source keeps no list of the lines it was not told of.
        if isinstance(record, MalformedLine):
            source.note("journal", "warned")
            # Where no line was read (one over the record limit), the reason says why.
            said = "malformed journal line; skipped" if record.text is not None else record.reason
            warn(LoadWarning(reason=said, line=number, source=str(path)))
            continue
        source.note("journal", "mapped")
        agent_id = _str(record.get("agentId")) if isinstance(record, dict) else None
        if agent_id is None:
            continue
        if record.get("type") == "started" and agent_id not in journal.order:
            journal.order.append(agent_id)
        elif record.get("type") == "result" and record.get("result") is not None:
            journal.results[agent_id] = stringify(record["result"])
    for warning in undecodable:  # of lines after the last record, if any held none
        warn(warning)


# --- small helpers ------------------------------------------------------------------------------


#: What a run folder's listing looks for, as a warning names it.
_AGENT_FILES = "agents' files (agent-*.jsonl)"


def _is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder one can look into; one that cannot be looked at (a folder
    above it not searchable) is not taken for a link leading out: the run is read, and its
    lookups in it say what they could not find."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_agent_file(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def _stray_agent(path: Path) -> str:
    """What an agent's file directly in the runs folder, in no run's folder, is said as."""
    return (
        f"agent file {path.name} in {path.parent} is not inside a workflow run's folder, where "
        "Claude Code writes a run's agents: no run names it, not read"
    )


def _link_out_reason(run_id: str, runs: WorkflowRuns) -> str:
    """What a run folder that is a link leading out of the runs folder is said as."""
    return (
        f"workflow run folder {run_id!r} is a link leading out of {runs.runs_dir}: not "
        "followed, its files are not read"
    )


def _plain(name: str) -> bool:
    """Run and agent ids come from the files: only plain names may become part of a path."""
    return bool(name) and name.replace("-", "").replace("_", "").isalnum()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _first_line(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return None


def _first_prompt(transcript: Transcript | None) -> str | None:
    entries: Iterable[Any] = transcript.entries if transcript is not None else ()
    return next((e.text for e in entries if isinstance(e, UserMessage) and e.text), None)


#: How Claude Code frames the prompt a workflow script computed (``promptFramed: true``): a
#: notice that the script, not the user, wrote it, then the text with every line indented.
_FRAME_START = "[Workflow harness"
_FRAME_END = "follows:\n"


def _computed_task(prompt: str | None) -> str | None:
    """The task the script computed, without the harness's frame around it."""
    if prompt is None or not prompt.startswith(_FRAME_START) or _FRAME_END not in prompt:
        return prompt
    body = prompt.split(_FRAME_END, 1)[1]
    return "\n".join(line.removeprefix("  ") for line in body.splitlines()) or prompt


def _first_time(transcript: Transcript | None) -> str | None:
    entries: Iterable[Any] = transcript.entries if transcript is not None else ()
    return next((e.timestamp for e in entries if e.timestamp), None)
