"""ATIF trajectories (Harbor's Agent Trajectory Interchange Format, ``ATIF-v1.0`` … ``v1.8``).

Harbor (Terminal-Bench's harness) writes every agent's run as one ATIF document,
``<trial>/agent/trajectory.json``: its own agent's (Terminus 2) natively, and Claude Code's,
Codex's, Gemini CLI's, OpenHands' and two dozen other agents' converted from their own logs;
other tools export it too. The document (``harbor/models/trajectories``)::

    {"schema_version": "ATIF-v1.7", "session_id", "trajectory_id",
     "agent": {"name", "version", "model_name", "tool_definitions", "extra"},
     "steps": [{"step_id", "timestamp", "source": "system" | "user" | "agent", "model_name",
                "message": str | [ContentPart], "reasoning_content",
                "tool_calls": [{"tool_call_id", "function_name", "arguments", "extra"}],
                "observation": {"results": [{"source_call_id", "content",
                                             "subagent_trajectory_ref": [...], "extra"}]},
                "metrics": {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd",
                            "extra"},
                "is_copied_context", "llm_call_count", "extra"}],
     "notes", "final_metrics": {"total_prompt_tokens", …, "total_cost_usd", "total_steps"},
     "continued_trajectory_ref", "subagent_trajectories": [Trajectory], "extra"}

Mapping, per step:

- ``system``: the first, before any other step, is the system prompt (``metadata["system"]``);
  a later one is an info :class:`SystemNotice` of its message (``context_management`` in its
  ``extra``, Terminus 2's summarization: a compaction);
- ``user``: a :class:`UserMessage` (text parts joined; a media part named by its path, which
  turnfold does not open);
- ``agent``: ``reasoning_content`` a :class:`Thinking`, ``message`` an :class:`AssistantText`
  with the step's model (else the agent's), each tool call a :class:`ToolCall` (one batch),
  and ``metrics`` the response's usage (``prompt_tokens`` counts the cached ones, as turnfold
  does; cache writes where the producer names them in ``extra``:
  ``cache_creation_input_tokens``, ``cache_write_input_tokens``; reasoning tokens where named);
- an observation result settles the call its ``source_call_id`` names. ATIF has no error flag:
  a result is an error where its producer says so (``is_error`` on the result or in its
  ``extra``, Harbor's Claude Code converter's ``tool_result_metadata.is_error`` and
  ``tool_result_is_error``), else a success. A result without ``source_call_id`` is the shared
  output of the step's calls that have none (Terminus 2 sends several commands to one terminal
  and reads its screen once): the last of them shows it, the others succeed with no output of
  their own; in a step with no call it is an info notice (subtype ``observation``);
- ``subagent_trajectory_ref``: the delegated run, nested as a :class:`SubAgent` under the call
  the result settles, or (a result of no call: a delegation the harness made itself, Terminus
  2's summarization) under a ``delegate`` call of its own, marked ``meta["system"]``. The run
  is the parent's embedded ``subagent_trajectories`` entry of the ref's ``trajectory_id``, or
  the file of its ``trajectory_path`` when that is a plain name under the trajectory's folder
  (a remote or absolute location is not opened: the content is untrusted); else its steps are
  missing.

A trajectory continued in another file (``continued_trajectory_ref``, Terminus 2's
``trajectory.cont-<n>.json`` after a summarization) is read on from that file, past the steps
it copied for context (``is_copied_context``: shown from the file before); a continuation file
loaded alone shows them. Metadata: ``agent`` (the agent's name), ``model``, ``version``,
``session_id``, ``schema_version``, ``notes``; ``cost_usd`` from ``final_metrics.total_cost_usd``
(the run's cost, its sub-agents' included), or ``cost_estimate_usd`` when its ``extra`` says
Harbor estimated it (``cost_source: litellm_estimate``: no cost recorded, so turnfold's own
estimate, U-2, applies); the final totals as ``metadata["usage"]`` only when
no step records metrics; a continued run's from its last file (Terminus 2 writes its running
totals in each). Beside a Harbor trial's ``agent/`` folder, its ``result.json`` gives the reward
(``score``) and the ``outcome``: ``incomplete`` when a limit stopped the trial (an agent
timeout, the context or output exceeded), ``error`` when it raised anything else, else from the
reward as from an Inspect score (1 passes, 0 fails, a partial reward says nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    checked_timestamp,
    counted_usage,
    stringify,
    warned_timestamp,
)
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.harnesses.inspect_log import score_outcome
from turnfold.formats.source import (
    Source,
    json_object_file,
    open_source,
    record_limit,
    warning_count,
)
from turnfold.formats.wording import notice
from turnfold.model import (
    AssistantText,
    Entry,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.tools import tool_category
from turnfold.usage import attach_usage

NAME = "atif"
#: ``final_metrics.extra.cost_source`` of a cost Harbor estimated with litellm's prices.
ESTIMATED = "litellm_estimate"

RECORDS = Records(
    mapped={
        "system": 'the system prompt (metadata["system"]), or a later system step: a notice',
        "user": "UserMessage (text parts; media named by their path)",
        "agent": "Thinking (reasoning_content), AssistantText (message), a ToolCall per tool "
        "call settled by the observation's results, the metrics as the response's usage",
        "observation result": "settles its call (error where its producer says so); without a "
        "call id the shared output of the step's calls, or a notice; a subagent ref nested",
        "subagent trajectory": "an embedded or referenced trajectory: a SubAgent's transcript",
        "continuation": "continued_trajectory_ref: the next file's steps, read on",
        "trajectory": "agent, model, version, session, notes, final_metrics: metadata",
        "trial result": "a Harbor trial's result.json beside agent/: score and outcome",
    },
    ignored={
        "copied context": "a continuation's is_copied_context steps, shown from the file before",
        "injected context": "a converted Codex run's user steps of context Codex injected "
        "(environment, instructions, notifications), as the codex format reads them",
    },
)

_VERSION = re.compile(r"ATIF-v\d+(\.\d+)*\Z")
_SOURCES = frozenset({"system", "user", "agent"})
#: Subagent and continuation files read below one trajectory, at most: a trajectory that names
#: itself, or a chain of files made to exhaust memory, stops there with a warning.
MOST_FILES = 256
#: A trajectory_path that is a plain relative name (no scheme, not absolute, no ``..``, no NUL,
#: which no file name holds: the OS call would raise, not answer that there is no such file).
#: DOTALL: a ``..`` after a newline in the name is one too.
_PLAIN_PATH = re.compile(r"(?![/\\])(?!.*(^|[/\\])\.\.([/\\]|$))[^:\x00]+\Z", re.DOTALL)
#: Where producers put a result's error flag (ATIF itself has none).
_ERROR_KEYS = ("is_error", "tool_result_is_error")
#: Where producers name a response's cache writes and reasoning tokens in ``metrics.extra``.
_CACHE_WRITES = ("cache_creation_input_tokens", "cache_write_input_tokens")
_REASONING = ("reasoning_output_tokens", "reasoning_tokens")
#: The exceptions of a Harbor trial that a limit stopped (``harbor/models/trial/
#: error_policy.py`` grades them: the agent ran out of time, context or output, no fault).
HARBOR_LIMITS = frozenset({
    "AgentTimeoutError", "ContextWindowExceededError", "ContextLengthExceededError",
    "OutputTokenExceededError", "OutputLengthExceededError",
})  # fmt: skip
#: Harbor names a run's continuation ``<stem>.cont-<n>.json``.
CONTINUATION = re.compile(r"(?P<stem>[^/\\]+?)\.cont-\d+\.json\Z")


def is_trajectory(value: Any) -> bool:
    """An ATIF document: its ``schema_version``, or (a producer that left it out) an agent and
    steps of ATIF's own shape."""
    if not isinstance(value, MAPPINGS):
        return False
    version = value.get("schema_version")
    if isinstance(version, str) and _VERSION.match(version):
        return True
    steps, agent = value.get("steps"), value.get("agent")
    if not isinstance(steps, list) or not steps or not isinstance(agent, MAPPINGS):
        return False
    first = steps[0]
    return isinstance(first, MAPPINGS) and "step_id" in first and _source_of(first) is not None


def detect(source: Source) -> Evidence:
    """One ATIF document (a ``trajectory.json``)."""
    document = source.document if source.is_document else None
    if is_trajectory(document):
        return Evidence(share=1.0, marks=1, sampled=1)
    return Evidence.none("no ATIF schema_version, agent and steps")


def read(source: Source) -> Transcript:
    document = source.document if source.is_document else None
    if not is_trajectory(document):
        raise TranscriptFormatError(source.name, [NAME], None, "not an ATIF trajectory")
    assert isinstance(document, Mapping)
    transcript = Transcript(metadata={"source_format": NAME})
    folder = source.path.parent if source.path is not None else None
    reader = _Reader(source, folder)
    reader.trajectory(document, transcript, top=True)
    if source.path is not None:
        _trial_result(source, transcript)
    return transcript


class _Reader:
    """Reads one trajectory and, below it, its sub-agents and continuations."""

    def __init__(self, source: Source, folder: Path | None) -> None:
        self.source = source
        self.folder = folder
        self.files = 0
        self.agent: str | None = None  # the producing agent's name (its outputs' conventions)
        self.opened: set[Path] = set()
        #: The embedded sub-agent runs a ``subagent_trajectory_ref`` nested (by ``id()``).
        self.nested: set[int] = set()
        if source.path is not None:
            self.opened.add(source.path.resolve())

    def trajectory(self, document: Mapping[str, Any], transcript: Transcript, *,
                   top: bool = False, embedded: list[Any] | None = None) -> None:  # fmt: skip
        """``document``'s metadata and steps into ``transcript``, then its continuations."""
        meta = transcript.metadata
        agent = document.get("agent")
        if top:
            self.agent = _name_of(document)
        if isinstance(agent, MAPPINGS):
            for key, name in (("name", "agent"), ("model_name", "model"), ("version", "version")):
                value = agent.get(key)
                if isinstance(value, str) and value:
                    meta.setdefault(name, value)
            if isinstance(agent.get("tool_definitions"), list):
                meta.setdefault("tools", agent["tool_definitions"])
        for key in ("session_id", "trajectory_id", "schema_version", "notes"):
            value = document.get(key)
            if isinstance(value, str) and value:
                meta.setdefault(key, value)
        self.source.mapped("trajectory")
        own = document.get("subagent_trajectories")
        runs = [*(own if isinstance(own, list) else []), *(embedded or [])]
        measured = self.steps(document, transcript, runs, copied=True)
        self.totals(document, transcript, measured)
        self.continuations(document, transcript, runs, measured)
        self.unreferenced(own if isinstance(own, list) else [], transcript)

    def unreferenced(self, runs: list[Any], transcript: Transcript) -> None:
        """The embedded sub-agent runs no step's result refers to, nested all the same.

        Harbor's Codex converter embeds every spawned agent's rollout in
        ``subagent_trajectories`` but refers to it only from a ``spawn_agent`` result naming
        its task (``_attach_subagent_ref`` in ``agents/installed/codex.py``); Codex's own
        result names the agent by its thread id, the run's ``trajectory_id``. A run nests under
        the latest delegating call without a sub-agent whose result names that id; a run no
        call names is a ``delegate`` call of its own, marked ``meta["system"]``: never lost."""
        for index, run in enumerate(runs):
            if not isinstance(run, MAPPINGS) or id(run) in self.nested:
                continue
            wanted = run.get("trajectory_id")
            wanted = wanted if isinstance(wanted, str) and wanted else None
            child = Transcript(metadata={"source_format": NAME})
            self.trajectory(run, child)
            self.source.mapped("subagent trajectory")
            task = next((e.text for e in child.entries if isinstance(e, UserMessage)), None)
            subagent = SubAgent(name=_name_of(run), task=task, transcript=child,
                                agent_id=wanted, tool_count=len(child.tool_calls()))  # fmt: skip
            host = next((entry for entry in reversed(transcript.entries)
                         if isinstance(entry, ToolCall) and entry.subagent is None
                         and tool_category(entry.name) == "agent" and wanted is not None
                         and wanted in (entry.result.text or "" if entry.result else "")),
                        None)  # fmt: skip
            if host is not None:
                host.subagent = subagent
                continue
            transcript.append(ToolCall(
                call_id=f"subagent-{wanted or index}", name="delegate",
                args={"agent": subagent.name} if subagent.name else None, description=task,
                status="success", subagent=subagent, meta={"system": True},
            ))  # fmt: skip

    @staticmethod
    def totals(document: Mapping[str, Any], transcript: Transcript, measured: bool) -> None:
        """The run's cost (and, when no step ``measured`` its response, its tokens) from a
        file's ``final_metrics``. Terminus 2 writes its running totals in each file of a
        continued run (``_dump_trajectory_with_continuation_index``: the agent context's
        totals when the file was written, its sub-agents' added at the end), so a later file's
        totals replace an earlier one's: the last file holds the whole run's."""
        final = document.get("final_metrics")
        if not isinstance(final, MAPPINGS):
            return
        meta = transcript.metadata
        cost = final.get("total_cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
            extra = final.get("extra")
            # Harbor prices a converted run with litellm when the agent recorded no cost (its
            # Claude Code converter without the run's result line) and says so: an estimate,
            # not a cost the source recorded (U-2), so kept apart from ``cost_usd``.
            estimated = isinstance(extra, MAPPINGS) and extra.get("cost_source") == ESTIMATED
            key, other = ("cost_estimate_usd", "cost_usd") if estimated else (
                "cost_usd", "cost_estimate_usd")  # fmt: skip
            meta[key] = float(cost)
            meta.pop(other, None)  # a later file's totals are the run's
        if not measured:
            usage = counted_usage(final.get("total_prompt_tokens"),
                                  final.get("total_completion_tokens"),
                                  final.get("total_cached_tokens"))  # fmt: skip
            if usage is not None:
                meta["usage"] = {k: v for k, v in vars(usage).items() if v is not None}

    def steps(self, document: Mapping[str, Any], transcript: Transcript, runs: list[Any], *,
              copied: bool) -> bool:  # fmt: skip
        """The steps of ``document`` onto ``transcript`` (``copied``: its copied-context ones
        too); whether any recorded metrics."""
        steps = document.get("steps")
        if not isinstance(steps, list):
            self.source.warn("a trajectory without a steps list: no steps read",
                             record_type="trajectory")  # fmt: skip
            return False
        measured = False
        side: list[tuple[int, Mapping[str, Any]]] = []  # a sub-agent's steps, flattened in
        for position, step in enumerate(steps, start=1):
            if not isinstance(step, MAPPINGS) or _source_of(step) is None:
                self.source.warn(f"step {position} is no system, user or agent step: not read",
                                 record_type="step")  # fmt: skip
                continue
            if step.get("is_copied_context") is True and not copied:
                self.source.ignored("copied context")
                continue
            measured |= isinstance(step.get("metrics"), MAPPINGS)
            agent_id = _sidechain(step)
            if side and agent_id != _sidechain(side[0][1]):
                self.sidechain(side, transcript, runs)
                side = []
            if agent_id is not None:
                side.append((position, step))
            else:
                self.step(step, position, transcript, runs)
        if side:
            self.sidechain(side, transcript, runs)
        return measured

    def sidechain(self, side: list[tuple[int, Mapping[str, Any]]], transcript: Transcript,
                  runs: list[Any]) -> None:  # fmt: skip
        """A sub-agent's steps that a converter flattened into its parent's (Harbor's Claude
        Code converter marks them ``extra.is_sidechain`` with the ``agent_id``): nested under
        the parent's latest delegating call that has no sub-agent yet, the one whose result
        names the agent first; shown in place when there is none."""
        agent_id = _sidechain(side[0][1])
        child = Transcript(metadata={"source_format": NAME})
        for position, step in side:
            self.step(step, position, child, runs)
        hosts = [entry for entry in reversed(transcript.entries) if isinstance(entry, ToolCall)
                 and entry.subagent is None and tool_category(entry.name) == "agent"]  # fmt: skip
        named = [h for h in hosts if h.result and agent_id and agent_id in (h.result.text or "")]
        host = (named or hosts)[0] if named or hosts else None
        if host is None:
            transcript.extend(child.entries)
            return
        task = next((e.text for e in child.entries if isinstance(e, UserMessage)), None)
        host.subagent = SubAgent(name=agent_id, task=task, transcript=child, agent_id=agent_id,
                                 tool_count=len(child.tool_calls()))  # fmt: skip

    def step(self, step: Mapping[str, Any], position: int, transcript: Transcript,
             runs: list[Any]) -> None:  # fmt: skip
        kind = step["source"]
        before = warning_count(self.source.warnings)
        when = warned_timestamp(step.get("timestamp"), checked_timestamp, self.source.warn,
                                f"step {position}", name="timestamp")  # fmt: skip
        untimed = warning_count(self.source.warnings) > before
        text = _text(step.get("message"))
        made: list[Entry] = []
        if kind == "system":
            if not transcript.entries and "system" not in transcript.metadata and text:
                transcript.metadata["system"] = text
            elif text:
                extra = step.get("extra")
                managed = isinstance(extra, MAPPINGS) and "context_management" in extra
                made.append(SystemNotice(text=text, subtype="compaction" if managed else None))
        elif kind == "user":
            if self.agent == "codex" and _injected(text):
                self.source.ignored("injected context")  # as the codex format reads it
                return
            made.append(UserMessage(text=text))
        else:
            reasoning = step.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                made.append(Thinking(text=reasoning))
            if text:
                model = step.get("model_name")
                named = model if isinstance(model, str) and model else None
                made.append(
                    AssistantText(text=text, model=named or transcript.metadata.get("model"))
                )
        calls = self.calls(step, position)
        made.extend(calls)
        made.extend(self.observation(step, position, calls, runs))
        for entry in made:
            entry.timestamp = when
        if kind == "agent":
            usage = _usage(step.get("metrics"))
            model = step.get("model_name")
            carrier = attach_usage(made, usage, model=model if isinstance(model, str) else None)
            cost = step["metrics"].get("cost_usd") if carrier is not None else None
            if (
                carrier is not None
                and isinstance(cost, (int, float))
                and not isinstance(cost, bool)
            ):
                carrier.meta = {**carrier.meta, "cost_usd": cost}  # the response's, as Cline's
        transcript.extend(made)
        self.source.note(kind, "warned" if untimed else "mapped")

    def calls(self, step: Mapping[str, Any], position: int) -> list[ToolCall]:
        listed = step.get("tool_calls")
        if listed is None:
            return []
        if not isinstance(listed, list):
            self.source.warn(
                f"step {position}: tool_calls is no list: not read", record_type="agent"
            )
            return []
        calls: list[ToolCall] = []
        batch = f"step-{position}"
        for index, raw in enumerate(listed):
            if not isinstance(raw, MAPPINGS):
                self.source.warn(f"step {position}: tool call {index} is no object: not read")
                continue
            call_id = raw.get("tool_call_id")
            name = raw.get("function_name")
            calls.append(ToolCall(
                call_id=call_id if isinstance(call_id, str) and call_id else f"{batch}-{index}",
                name=name if isinstance(name, str) and name else "(unnamed tool)",
                args=raw.get("arguments"), status="unknown", batch_id=batch,
            ))  # fmt: skip
        from turnfold.formats.common import describe_args

        for call in calls:
            call.description = describe_args(call.name, call.args)
        return calls

    def observation(self, step: Mapping[str, Any], position: int, calls: list[ToolCall],
                    runs: list[Any]) -> list[Entry]:  # fmt: skip
        """Settle ``calls`` by the step's observation results; the entries a result of no
        call makes (a notice, a delegation's call)."""
        observation = step.get("observation")
        if observation is None:
            return []
        results = observation.get("results") if isinstance(observation, MAPPINGS) else None
        if not isinstance(results, list):
            self.source.warn(f"step {position}: an observation without results: not read",
                             record_type="observation result")  # fmt: skip
            return []
        by_id = {call.call_id: call for call in calls}
        made: list[Entry] = []
        for index, result in enumerate(results):
            if not isinstance(result, MAPPINGS):
                self.source.warn(f"step {position}: observation result {index} is no object",
                                 record_type="observation result")  # fmt: skip
                continue
            self.source.mapped("observation result")
            named = result.get("source_call_id")
            call = by_id.get(named) if isinstance(named, str) else None
            if named is not None and call is None:
                self.source.warn(f"step {position}: a result for call {named!r}, which the step "
                                 "does not make: shown as a notice")  # fmt: skip
            shared = call is None and named is None
            waiting = [c for c in calls if c.result is None and c.status == "unknown"]
            if shared and waiting:
                for earlier in waiting[:-1]:
                    earlier.status = "success"  # their output is the batch's, on the last one
                call = waiting[-1]
            refs = result.get("subagent_trajectory_ref")
            subagents = self.subagents(refs, runs, position) if isinstance(refs, list) else []
            content = _text(result.get("content")) if result.get("content") is not None else None
            if call is not None:
                call.result = ToolResult(text=content)
                call.status = "error" if _failed(result) or self.exited(content) else "success"
                if subagents:
                    call.subagent = subagents.pop(0)
            elif content and not subagents:
                made.append(SystemNotice(text=content, subtype="observation"))
            for number, subagent in enumerate(subagents):
                made.append(ToolCall(
                    call_id=f"step-{position}-delegate-{index}-{number}", name="delegate",
                    args={"agent": subagent.name} if subagent.name else None,
                    description=subagent.task, status="success", subagent=subagent,
                    result=ToolResult(text=content) if content else None, meta={"system": True},
                ))  # fmt: skip
        return made

    def exited(self, content: str | None) -> bool:
        """Whether a converted Codex run's output says its command failed: Codex's own header
        (``Process exited with code 3``, :func:`turnfold.formats.codex.exec_output`), which
        Harbor's converter keeps as the result's text with no flag."""
        if self.agent != "codex" or not content:
            return False
        from turnfold.formats.codex import exec_output

        output = exec_output(content)
        return output is not None and output.exit_code not in (None, 0)

    def subagents(self, refs: list[Any], runs: list[Any], position: int) -> list[SubAgent]:
        found: list[SubAgent] = []
        for ref in refs:
            if not isinstance(ref, MAPPINGS):
                self.source.warn(f"step {position}: a subagent ref that is no object")
                continue
            wanted = ref.get("trajectory_id")
            document = next((run for run in runs if isinstance(run, MAPPINGS)
                             and wanted is not None and run.get("trajectory_id") == wanted),
                            None)  # fmt: skip
            path = ref.get("trajectory_path")
            if document is None and isinstance(path, str):
                document = self.file(path, f"step {position}'s subagent")
            extra = ref.get("extra")
            summary = extra.get("summary") if isinstance(extra, MAPPINGS) else None
            task = summary if isinstance(summary, str) and summary else None
            if document is None:
                name = wanted or path or ref.get("session_id")
                found.append(SubAgent(name=str(name) if name else None, task=task,
                                      steps_missing=True))  # fmt: skip
                continue
            self.nested.add(id(document))
            child = Transcript(metadata={"source_format": NAME})
            self.trajectory(document, child, embedded=None)
            found.append(SubAgent(
                name=_name_of(document), task=task, transcript=child,
                agent_id=wanted if isinstance(wanted, str) else None,
                tool_count=len(child.tool_calls()),
            ))  # fmt: skip
            self.source.mapped("subagent trajectory")
        return found

    def continuations(self, document: Mapping[str, Any], transcript: Transcript,
                      runs: list[Any], measured: bool) -> None:  # fmt: skip
        ref = document.get("continued_trajectory_ref")
        while isinstance(ref, str) and ref:
            following = self.file(ref, "continuation")
            if following is None:
                transcript.append(notice("reader.continues_unread", {"ref": ref},
                                         level="warning", subtype="continuation"))  # fmt: skip
                return
            transcript.append(notice("reader.continued_in", {"ref": ref}, subtype="continuation"))
            measured |= self.steps(following, transcript, runs, copied=False)
            if measured:  # the steps' own usage counts: no file's totals stand in for it
                transcript.metadata.pop("usage", None)
            self.totals(following, transcript, measured)
            self.source.mapped("continuation")
            ref = following.get("continued_trajectory_ref")

    def file(self, name: str, what: str) -> Mapping[str, Any] | None:
        """The ATIF document of a file the trajectory names, under its folder; None (said in a
        warning) when it is not there, not a plain name under the folder, read already, too
        large, past :data:`MOST_FILES` or not ATIF."""
        if self.folder is None:
            self.source.warn(f"{what} {name}: a trajectory read from no file has no folder to "
                             "find it in")  # fmt: skip
            return None
        if not _PLAIN_PATH.match(name):
            self.source.warn(f"{what} {name}: not a plain name under the trajectory's folder: "
                             "not opened")  # fmt: skip
            return None
        path = (self.folder / name).resolve()
        if not path.is_relative_to(self.folder.resolve()) or not path.is_file():
            self.source.warn(f"{what} {name}: no such file beside the trajectory")
            return None
        if path in self.opened or self.files >= MOST_FILES:
            self.source.warn(f"{what} {name}: read already, or past {MOST_FILES} files: not read")
            return None
        if path.stat().st_size > record_limit():
            self.source.warn(f"{what} {name}: larger than {record_limit():,} bytes "
                             "(TURNFOLD_MAX_RECORD_BYTES): not read")  # fmt: skip
            return None
        self.opened.add(path)
        self.files += 1
        try:
            opened, stream = open_source(path)
        except (OSError, ValueError) as exc:
            self.source.warn(f"{what} {name}: could not be read ({exc})")
            return None
        if stream is not None:
            stream.close()
        document = opened.document if opened.is_document else None
        if not is_trajectory(document):
            self.source.warn(f"{what} {name}: not an ATIF trajectory")
            return None
        return document


def _source_of(step: Mapping[str, Any]) -> str | None:
    """A step's ``source`` when it is one ATIF knows (``system``, ``user``, ``agent``)."""
    source = step.get("source")
    return source if isinstance(source, str) and source in _SOURCES else None


def _injected(text: str) -> bool:
    """Context Codex injected as a user message (its environment, instructions, a sub-agent's
    notification), which a converted Codex run keeps as user steps."""
    from turnfold.formats.codex import is_injected_context

    return is_injected_context(text)


def _sidechain(step: Mapping[str, Any]) -> str | None:
    """The agent id of a flattened sub-agent's step (``extra.is_sidechain``), else None."""
    extra = step.get("extra")
    if not isinstance(extra, MAPPINGS) or extra.get("is_sidechain") is not True:
        return None
    agent_id = extra.get("agent_id")
    return agent_id if isinstance(agent_id, str) and agent_id else "sub-agent"


def _name_of(document: Mapping[str, Any]) -> str | None:
    agent = document.get("agent")
    name = agent.get("name") if isinstance(agent, MAPPINGS) else None
    return name if isinstance(name, str) and name else None


def _text(message: Any) -> str:
    """A message or result: a string, or content parts (text parts joined; a media part named
    by where it is, which turnfold does not open)."""
    if isinstance(message, str):
        return message
    if not isinstance(message, list):
        return "" if message is None else stringify(message)
    texts: list[str] = []
    for part in message:
        if not isinstance(part, MAPPINGS):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") in ("image", "audio"):
            where = part.get("source")
            path = where.get("path") if isinstance(where, MAPPINGS) else None
            texts.append(
                f"[{part['type']}: {path}]" if isinstance(path, str) else f"[{part['type']}]"
            )
    return "\n".join(texts)


def _failed(result: Mapping[str, Any]) -> bool:
    """Whether a result's producer marked it an error (ATIF has no field for it)."""
    places = [result, result.get("extra")]
    extra = result.get("extra")
    if isinstance(extra, MAPPINGS):
        places.append(extra.get("tool_result_metadata"))
    return any(isinstance(p, MAPPINGS) and any(p.get(k) is True for k in _ERROR_KEYS)
               for p in places)  # fmt: skip


def _usage(metrics: Any) -> Usage | None:
    if not isinstance(metrics, MAPPINGS):
        return None
    extra = metrics.get("extra")
    extra = extra if isinstance(extra, MAPPINGS) else {}
    written = next((extra[k] for k in _CACHE_WRITES if k in extra), None)
    reasoning = next((extra[k] for k in _REASONING if k in extra), None)
    return counted_usage(metrics.get("prompt_tokens"), metrics.get("completion_tokens"),
                         metrics.get("cached_tokens"), written, reasoning)  # fmt: skip


def _trial_result(source: Source, transcript: Transcript) -> None:
    """A Harbor trial's reward and failure, from ``<trial>/result.json`` beside ``agent/``."""
    assert source.path is not None
    if source.path.parent.name != "agent":
        return
    result = source.path.parent.parent / "result.json"
    if not result.is_file() or result.stat().st_size > record_limit():
        return
    found = json_object_file(result)
    if "trial_name" not in found:
        return
    verifier = found.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, MAPPINGS) else None
    said: list[str | None] = []
    if isinstance(rewards, MAPPINGS) and rewards:
        values = list(rewards.values())
        transcript.metadata["score"] = values[0] if len(values) == 1 else dict(rewards)
        said = [score_outcome(value) for value in values]
    known = [outcome for outcome in said if outcome is not None]
    if known:  # a reward of 1 passes, of 0 fails, as an Inspect score does (H-6)
        transcript.metadata["outcome"] = "fail" if "fail" in known else "pass"
    failure = found.get("exception_info")
    if isinstance(failure, MAPPINGS):
        kind = failure.get("exception_type")
        limited = isinstance(kind, str) and kind in HARBOR_LIMITS
        transcript.metadata["outcome"] = "incomplete" if limited else "error"
        if isinstance(kind, str):
            transcript.metadata["exception"] = kind
    task = found.get("task_name")
    if isinstance(task, str) and task:
        transcript.metadata.setdefault("task", task)
    source.note("trial result", "mapped")
