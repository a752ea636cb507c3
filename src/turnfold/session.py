"""What a whole session amounts to: the facts its header shows (spec U-3).

Agent, model(s), when it started, how long it took, turns, tool calls and how many failed,
tokens, cost, outcome and score. They are computed from the same projection as the turn headers
(:mod:`turnfold.process`), so the session header, the turn headers and a corpus row cannot
disagree about what a turn or a failed tool is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from turnfold.cost import (
    Cost,
    NoCost,
    Priced,
    default_model,
    responses_apart,
    session_cost_or_why,
    session_responses,
    within_session_total,
)
from turnfold.formats.common import as_text
from turnfold.model import (
    FAILED_STATUSES,
    AssistantError,
    AssistantText,
    Entry,
    Thinking,
    ToolCall,
    ToolUseSummary,
    Transcript,
    Usage,
    utc,
)
from turnfold.process import is_scoring_call, plan_projection
from turnfold.usage import (
    TokenCount,
    add_into,
    counts_of,
    has_subagent_tokens,
    side_request_usage,
    subagent_tokens,
    total_of,
    unattributed_subagent_tokens,
)

#: The names the agents that write each format go by (a format of many agents has none).
AGENT_NAMES: dict[str, str] = {
    "claude-code": "Claude Code", "claude-stream-json": "Claude Code", "codex": "Codex",
    "codex-exec-json": "Codex", "gemini": "Gemini CLI", "qwen": "Qwen Code", "cursor": "Cursor",
    "gemini-stream-json": "Gemini CLI", "cursor-stream-json": "Cursor", "cline-json": "Cline",
    "gemini-checkpoint": "Gemini CLI",
    "cline": "Cline", "aider": "aider", "inspect": "Inspect", "swe-agent": "SWE-agent",
    "mini-swe-agent": "mini-SWE-agent", "openhands": "OpenHands",
    "openai-agents": "OpenAI Agents SDK", "langchain": "LangChain", "pydantic-ai": "Pydantic AI",
    "claude-agent-sdk": "Claude Agent SDK", "smolagents": "smolagents", "adk": "Google ADK",
    "autogen": "AutoGen", "strands": "Strands Agents", "bob-shell": "IBM Bob Shell",
    "opencode": "OpenCode", "opencode-json": "OpenCode", "copilot": "GitHub Copilot CLI",
    "crush": "Crush", "continue": "Continue", "kimi": "Kimi Code CLI",
    "kimi-cli": "Kimi CLI", "cline-messages": "Cline", "openhands-sdk": "OpenHands",
    "llamaindex": "LlamaIndex", "dspy": "DSPy", "haystack": "Haystack",
    "agent-framework": "Microsoft Agent Framework", "agno": "Agno", "agno-db": "Agno",
    "crewai": "CrewAI", "semantic-kernel": "Semantic Kernel",
    "langgraph-checkpoints": "LangGraph", "openai-agents-db": "OpenAI Agents SDK",
    "adk-db": "Google ADK", "strands-session": "Strands Agents",
    "llamaindex-chat-store": "LlamaIndex", "autogen-state": "AutoGen", "dspy-evaluate": "DSPy",
    # Agents a reader names (metadata["agent"]): forks that write their parent's format, and
    # Gemini CLI in formats it shares with others.
    "roo-code": "Roo Code", "kilo-code": "Kilo Code", "gemini-cli": "Gemini CLI",
}  # fmt: skip


@dataclass
class SessionFacts:
    """The facts of a session, each None where the transcript does not record it."""

    agent: str | None = None
    models: list[str] = field(default_factory=list)
    started: datetime | None = None
    ended: datetime | None = None
    duration_s: float | None = None
    turns: int = 0
    tool_calls: int = 0
    failed_tools: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    """The session's token counts by :data:`~turnfold.usage.TOKEN_FIELDS` name (only those
    recorded), its sub-agents' included (:mod:`turnfold.usage` counts each response once)."""
    subagent_tokens: dict[str, int] = field(default_factory=dict)
    """The part of ``tokens`` its sub-agents spent."""
    side_request_tokens: dict[str, int] = field(default_factory=dict)
    """The part of ``tokens`` its harness's side requests spent, which no response records."""
    session_usage: dict[str, int] = field(default_factory=dict)
    """The tokens the whole session had spent when the source was written, a resumed session's
    earlier runs included (``metadata["session_usage"]``), kept only when the transcript's own
    are unknown (the run's own tokens say more). It is not this run's, so it is never in
    ``tokens``, the cost, a corpus row or a comparison."""
    failed_attempts_tokens: dict[str, int] = field(default_factory=dict)
    """What the attempts that failed before the run shown spent, as far as the source keeps
    them (``metadata["failed_attempts_usage"]``: an Inspect sample retried after an error). The
    run's own total, which the source records, leaves them out, so ``tokens`` does too."""
    cost_usd: float | None = None
    """A cost the source recorded for the session."""
    cost: Cost | None = None
    """The session's cost: the recorded one, else an estimate (:mod:`turnfold.cost`)."""
    no_cost: NoCost | None = None
    """Why ``cost`` is None, as :mod:`turnfold.cost` decided it (None where it is not)."""
    outcome: str | None = None
    score: Any = None

    @property
    def total_tokens(self) -> int | None:
        """Every token the session's responses read or wrote (input plus output)."""
        return total_of(self.tokens)


def session_facts(transcript: Transcript, *, turns: int | None = None) -> SessionFacts:
    """The facts of ``transcript``'s session, from its metadata and its entries.

    ``turns`` is the number of turns when the caller has the projection planned already.
    """
    return SessionTally(transcript, keep=False).facts(turns=turns)


#: A moment as a key that sorts as the moments do: the UTC time to the second, and the digits of
#: its fraction. Most sources write UTC in one ISO form, whose key takes no parsing: a session's
#: first and last moments are found among thousands of stamps in a few milliseconds (Q-3).
_Key = tuple[str, str]
_CANONICAL = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.(\d+))?(?:Z|\+00:00)?"
)


class _Part(NamedTuple):
    """What one entry adds to the session's facts (a tuple: one is made per entry)."""

    first: _Key | None
    last: _Key | None
    model: str | None
    call: bool
    failed: bool
    usage: Usage | None
    delegates: bool = False  # a call whose sub-agent transcript is loaded


class SessionTally:
    """A session's facts kept up to date entry by entry, so that a live widget's header costs
    about the entries that changed, not the whole transcript, at each update (Q-3)."""

    def __init__(self, transcript: Transcript, *, keep: bool = True) -> None:
        self.transcript = transcript
        #: Whether each entry's part is kept for later updates (a widget's tally), or only the
        #: totals are counted (one reading: a page, a corpus row), which is faster.
        self._keep = keep
        self._parts: dict[str, _Part] = {}
        self._calls = self._failed = 0
        #: The models the entries name, with how many name each, in order of first appearance.
        self._models: dict[str, int] = {}
        self._tokens = TokenCount()
        self._counted: dict[str, int] | None = None  # the tokens of one reading (keep=False)
        self._found: Priced | None = None  # ...and its responses
        self._delegating: set[str] = set()  # the calls that hold a sub-agent transcript
        self._priced: tuple[Any, Cost | NoCost] | None = None  # what was priced, its cost
        self._first: _Key | None = None
        self._last: _Key | None = None

    def facts(
        self, changed: Iterable[str] | None = None, *, turns: int | None = None
    ) -> SessionFacts:
        """The facts now; ``changed``: the ids of the entries changed since the last call
        (None: every entry is read again)."""
        transcript = self.transcript
        if changed is None or not self._parts:
            self._parts.clear()
            self._calls = self._failed = 0
            self._models.clear()
            self._tokens = TokenCount()
            self._delegating.clear()
            self._counted = self._found = None
            if self._keep:
                for entry in transcript.entries:
                    self._add(entry.id, _part_of(entry))
                self._first, self._last = self._span()
            else:
                self._count_all()
        else:
            stale = reorder = False
            for entry_id in changed:
                changed_entry = transcript.get(entry_id)
                old = self._parts.pop(entry_id, None)
                if old is not None:
                    self._remove(entry_id, old)
                    stale = stale or old.first == self._first or old.last == self._last
                if changed_entry is not None:
                    part = _part_of(changed_entry)
                    self._add(entry_id, part)
                    # A model changed in place may change which comes first: count again.
                    reorder = reorder or (old is not None and old.model != part.model)
                    self._first = _earlier(self._first, part.first)
                    self._last = _later(self._last, part.last)
            if stale:
                self._first, self._last = self._span()
            if reorder:
                self._models.clear()
                for entry in transcript.entries:
                    model = self._parts[entry.id].model if entry.id in self._parts else None
                    if model:
                        self._models[model] = self._models.get(model, 0) + 1
        return self._facts(turns)

    def _count_all(self) -> None:
        """:meth:`_add` of every entry's part, with no part made or kept (one pass, inlined)."""
        first = last = None
        calls = failed = 0
        models = self._models
        # The responses found once: their own counted here, and all of them priced (_facts),
        # the own within the total the source recorded, which the header counts.
        delegated, own = responses_apart(self.transcript.entries, default_model(self.transcript))
        self._counted = {}
        for _, counted in own:
            add_into(self._counted, counted)
        self._found = delegated + within_session_total(self.transcript, own)
        for entry in self.transcript.entries:
            if isinstance(entry, ToolUseSummary):
                continue  # as _part_of: not a moment of the agent's session
            moment = _key(entry.timestamp) if entry.timestamp else None
            latest = moment
            if isinstance(entry, ToolCall):
                if not is_scoring_call(entry):  # the scoring's, not the agent's (process.py)
                    calls += 1
                    failed += entry.status in FAILED_STATUSES
                ended = _key(entry.ended_at) if entry.ended_at else None
                if ended is not None and (latest is None or ended > latest):
                    latest = ended
                if has_subagent_tokens(entry):
                    self._delegating.add(entry.id)
                if entry.meta and (named := _named(entry)):
                    models[named] = models.get(named, 0) + 1
            elif isinstance(entry, AssistantText) and entry.model:
                models[entry.model] = models.get(entry.model, 0) + 1
            elif isinstance(entry, Thinking) and entry.meta and (named := _named(entry)):
                models[named] = models.get(named, 0) + 1
            if moment is not None and (first is None or moment < first):
                first = moment
            if latest is not None and (last is None or latest > last):
                last = latest
        self._calls, self._failed, self._first, self._last = calls, failed, first, last

    def _add(self, entry_id: str, part: _Part) -> None:
        self._parts[entry_id] = part
        self._calls += part.call
        self._failed += part.failed
        if part.model:
            self._models[part.model] = self._models.get(part.model, 0) + 1
        self._tokens.set(entry_id, part.usage)
        if part.delegates:
            self._delegating.add(entry_id)

    def _remove(self, entry_id: str, part: _Part) -> None:
        self._calls -= part.call
        self._failed -= part.failed
        if part.model:
            left = self._models[part.model] - 1
            if left:
                self._models[part.model] = left
            else:
                del self._models[part.model]
        self._tokens.set(entry_id, None)
        self._delegating.discard(entry_id)

    def _when(self) -> datetime | None:
        """The session's date, at whose prices it is estimated (its first moment)."""
        return _moment(self._first) if self._first is not None else None

    def _span(self) -> tuple[_Key | None, _Key | None]:
        firsts = [p.first for p in self._parts.values() if p.first is not None]
        lasts = [p.last for p in self._parts.values() if p.last is not None]
        return (min(firsts) if firsts else None, max(lasts) if lasts else None)

    def _facts(self, turns: int | None) -> SessionFacts:
        transcript, meta = self.transcript, self.transcript.metadata
        facts = SessionFacts(
            agent=agent_name(meta), outcome=as_text(meta.get("outcome")), score=meta.get("score"),
            tool_calls=self._calls, failed_tools=self._failed,
        )  # fmt: skip
        if turns is None:
            turns = sum(1 for item in plan_projection(transcript) if item.segment is not None)
        facts.turns = turns
        models: dict[str, None] = {}
        if (model := as_text(meta.get("model"))) is not None:
            models[model] = None
        models.update(dict.fromkeys(self._models))
        facts.models = one_name_each(models)
        recorded = meta.get("usage")  # a total the source recorded (Codex) wins
        if isinstance(recorded, Mapping):
            own = counts_of(recorded)
        elif self._counted is not None:
            own = self._counted
        else:
            own = self._tokens.totals
        # Sub-agents are read again at each update: their transcripts change in place.
        calls = [transcript.get(i) for i in self._delegating]
        facts.subagent_tokens = subagent_tokens(c for c in calls if c is not None)
        unattributed = unattributed_subagent_tokens(transcript)
        add_into(facts.subagent_tokens, unattributed)
        # Tokens of sub-agents with no responses of their own (agents used as tools) name no
        # model, so no price: an estimate without them would not be the session's (U-2).
        unpriced = bool(unattributed) or any(
            isinstance(c, ToolCall) and c.subagent is not None and c.subagent.transcript is None
            for c in calls
        )
        side = side_request_usage(transcript)
        for _, counts in side:
            add_into(facts.side_request_tokens, counts)
        facts.tokens = dict(own)
        add_into(facts.tokens, facts.subagent_tokens)
        add_into(facts.tokens, facts.side_request_tokens)
        so_far = meta.get("session_usage")
        if not own and isinstance(so_far, Mapping):
            facts.session_usage = counts_of(so_far)
        failed = meta.get("failed_attempts_usage")
        if isinstance(failed, Mapping):
            facts.failed_attempts_tokens = counts_of(failed)
        # Priced again only when the tokens or the models named changed (a model renamed in
        # place is priced, or named as the one no price is known for, anew): a live session's
        # updates are mostly not new responses, and pricing walks every response.
        priced = (facts.tokens, frozenset(self._models), model, meta.get("cost_usd"))
        if self._priced is None or self._priced[0] != priced:
            found = self._found
            if side:
                # Each side request is priced as its model's (U-2); the counts an older dump
                # keeps under no model are priced by none, so the estimate is none.
                if found is None:
                    found = session_responses(transcript)
                found = found + side
            self._priced = (priced, session_cost_or_why(transcript, when=self._when(), found=found))
        decided = self._priced[1]
        if unpriced and isinstance(decided, Cost) and not decided.recorded:
            decided = NoCost("subagent_unpriced")
        if isinstance(decided, Cost):
            facts.cost = decided
        else:
            facts.no_cost = decided
        cost = meta.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost):
            facts.cost_usd = float(cost)
        first, last = self._first, self._last
        # The run's own start and end where the source records them (a sample's, a run
        # result's): its span, setup and scoring included, not only its entries'.
        start = _key(meta.get("started_at") or meta.get("start_time"))
        end = _key(meta.get("ended_at") or meta.get("completed_at"))
        for recorded in (start, end):
            if recorded is not None:
                first, last = _earlier(first, recorded), _later(last, recorded)
        if first is not None and last is not None:
            facts.started, facts.ended = _moment(first), _moment(last)
            if facts.started is not None and facts.ended is not None:
                facts.duration_s = (facts.ended - facts.started).total_seconds() or None
        measured = meta.get("duration_s")
        if isinstance(measured, float) and math.isfinite(measured) and measured > 0:
            # A duration in seconds the source measured for the run itself (an Inspect sample's
            # total_time, on a clock that never jumps) wins over the span of the moments, which
            # a change of the wall clock stretches (its reader warns of one); the run's
            # recorded start and end, where it records them, are its own.
            facts.duration_s = measured
            facts.started = _moment(start) if start is not None else facts.started
            facts.ended = _moment(end) if end is not None else facts.ended
        duration_ms = meta.get("duration_ms")
        if facts.duration_s is None and isinstance(duration_ms, (int, float)) and duration_ms > 0:
            facts.duration_s = duration_ms / 1000
            if facts.started is not None and facts.ended == facts.started:
                # A recorded duration from the one moment known (a store that dates its
                # session, not its entries): its end is that long after.
                facts.ended = facts.started + timedelta(seconds=facts.duration_s)
        return facts


def _part_of(entry: Entry) -> _Part:
    if isinstance(entry, ToolUseSummary):
        # A label the fast model wrote later (S-1): not a moment of the agent's session.
        return _Part(None, None, None, False, False, None)
    moment = _key(entry.timestamp)
    if isinstance(entry, ToolCall):
        ended = _key(entry.ended_at)
        last = moment if ended is None else ended if moment is None else max(moment, ended)
        delegates = has_subagent_tokens(entry)
        own = not is_scoring_call(entry)  # a scorer's call is not the agent's (process.py)
        failed = own and entry.status in FAILED_STATUSES
        return _Part(moment, last, _named(entry), own, failed, entry.usage, delegates)
    if isinstance(entry, AssistantText):
        return _Part(moment, moment, entry.model, False, False, entry.usage)
    if isinstance(entry, Thinking):
        return _Part(moment, moment, _named(entry), False, False, entry.usage)
    if isinstance(entry, AssistantError):
        # A failed response that was billed carries its usage (usage.carries), which a
        # reading counts (_count_all): so does a live header. Its model, as there, is not.
        return _Part(moment, moment, None, False, False, entry.usage)
    return _Part(moment, moment, None, False, False, None)


def _named(entry: Entry) -> str | None:
    """The model a response of no text names on its first entry (``meta["model"]``,
    :mod:`turnfold.usage`'s convention): a model that only called tools ran all the same."""
    model = entry.meta.get("model") if entry.meta else None
    return model if isinstance(model, str) and model else None


def _earlier(a: _Key | None, b: _Key | None) -> _Key | None:
    return b if a is None else a if b is None else min(a, b)


def _later(a: _Key | None, b: _Key | None) -> _Key | None:
    return b if a is None else a if b is None else max(a, b)


def _key(stamp: Any) -> _Key | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    canonical = _CANONICAL.fullmatch(stamp)
    if canonical is not None:  # UTC (or naive, taken as UTC): its text sorts as its moment
        return stamp[:19], (canonical.group(1) or "").rstrip("0")
    moment = utc(stamp)  # another offset, a space for the T, …: parsed
    if moment is None:
        return None
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return moment.strftime("%Y-%m-%dT%H:%M:%S"), fraction


def _moment(key: _Key) -> datetime | None:
    """The moment of a key; None for a day no calendar has (a 30th of February), which the
    shape :data:`_CANONICAL` reads cannot tell."""
    seconds, fraction = key
    try:
        moment = datetime.fromisoformat(seconds).replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return moment.replace(microsecond=int(fraction[:6].ljust(6, "0"))) if fraction else moment


def agent_name(meta: Mapping[str, Any]) -> str | None:
    """The agent a run's metadata names (H-6's ``agent``), else the agent that writes its
    format (:data:`AGENT_NAMES`), as the session header names it; None for neither."""
    named = as_text(meta.get("agent"))
    if named is not None:
        return AGENT_NAMES.get(named, named)
    return AGENT_NAMES.get(str(meta.get("source_format")))


_DATED = re.compile(r"-(?:20\d{6}|\d{4}-\d{2}-\d{2})$")


def one_name_each(models: Iterable[str]) -> list[str]:
    """``models`` in order, less a name the list also holds as a route (litellm's
    ``provider/model``): a harness configures ``openai/gpt-4o-mini``, and its responses name
    the model that served them, ``gpt-4o-mini`` or its dated release ``gpt-4o-mini-2024-07-18``,
    which is the same one.

    >>> one_name_each(["openai/gpt-4o-mini", "gpt-4o-mini", "gpt-4o"])
    ['openai/gpt-4o-mini', 'gpt-4o']
    >>> one_name_each(["openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18"])
    ['openai/gpt-4o-mini']
    >>> one_name_each(["openrouter/anthropic/claude-sonnet-4", "claude-sonnet-4"])
    ['openrouter/anthropic/claude-sonnet-4']
    """
    names = list(models)
    routed = {name.split("/", i)[-1] for name in names for i in range(1, name.count("/") + 1)}
    releases = {short_model(name) for name in routed}
    return [name for name in names if name not in routed and short_model(name) not in releases]


def short_model(model: str) -> str:
    """A model's name without the release date providers append (``claude-sonnet-4-20250514``
    → ``claude-sonnet-4``; the full name stays in the header's title).

    >>> short_model("claude-sonnet-4-20250514"), short_model("gpt-4o-2024-08-06")
    ('claude-sonnet-4', 'gpt-4o')
    """
    return _DATED.sub("", model)


__all__ = [
    "AGENT_NAMES",
    "SessionFacts",
    "SessionTally",
    "agent_name",
    "one_name_each",
    "session_facts",
    "short_model",
    "utc",
]
