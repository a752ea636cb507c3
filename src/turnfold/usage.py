"""Tokens, counted once (spec U-1): the one place that says how a transcript's usage adds up.

The rules:

* **Where usage sits.** A model response's :class:`~turnfold.model.Usage` sits on an entry that
  response wrote: its text, or, when it wrote none, its first reasoning or tool call (which then
  names the response's model in ``meta["model"]``: a cost is priced by it). Entries of any other
  kind carry none.
* **Each response once.** Usages with the same ``response_id`` are one response's, however many
  entries carry them (a source may write the usage on every content block, as Claude Code does
  on every line of one message): it is counted once, at the largest count recorded for each
  field (a response's later lines hold its final counts). A usage with no ``response_id`` is a
  response of its own.
* **One convention.** ``input_tokens`` counts every token of the prompt, the cached ones
  included; ``cache_read_tokens`` and ``cache_write_tokens`` are the parts of it read from and
  written to the cache, and ``cache_write_1h_tokens`` the part of the writes kept for an hour
  (priced apart, never added to a total again). ``output_tokens`` counts every token the model
  wrote, reasoning included; ``reasoning_tokens`` is the part of it spent reasoning. A
  session's total is input plus output. (This is OpenAI's, Gemini's, the OpenTelemetry GenAI
  conventions' and genai-prices' convention; Anthropic counts cached input apart, and its
  loaders add it in.)
* **Sub-agents.** A delegated agent's usage is counted under the call that delegated to it, and
  apart from the session's own: a total says whether it includes them. The usage the source
  records for the agent itself (:func:`recorded_subagent_tokens`) wins over its transcript's
  responses, in its tokens and in its cost (:mod:`turnfold.cost`) alike. Where a source
  records the tokens of several delegated agents only as one total
  (``metadata["subagent_usage"]``: agents used as tools that share the run's usage), that
  total is the sub-agents' too, under no call, never the session's own.
* **Side requests.** Requests a harness made of its own that no response records (Claude
  Code's: a title, a command's check, made with its small fast model) but its run's total
  counts (``metadata["side_request_usage"]``, by model) are a part of their own: in the
  session's total, neither its responses' nor a sub-agent's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar

from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    SubAgent,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    walk_calls,
)

#: The token counts of a :class:`~turnfold.model.Usage`, in the order they are shown.
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                "cache_write_1h_tokens", "reasoning_tokens")  # fmt: skip
#: The entry kinds that may carry a response's usage.
USAGE_KINDS = (AssistantText, Thinking, ToolCall, AssistantError)

Tokens = dict[str, int]
"""Token counts by :data:`TOKEN_FIELDS` name; a count nothing recorded is absent."""
K = TypeVar("K")


def counts_of(usage: Usage | Mapping[str, Any] | None) -> Tokens:
    """The counts a usage (or a mapping of the same names) records: non-negative integers."""
    counted: Tokens = {}
    if usage is None:
        return counted
    if type(usage) is Usage:  # the common case, read without a Mapping check per field
        values: Iterable[Any] = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                                 usage.cache_write_tokens, usage.cache_write_1h_tokens,
                                 usage.reasoning_tokens)  # fmt: skip
    elif isinstance(usage, Mapping):
        values = map(usage.get, TOKEN_FIELDS)
    else:
        values = (getattr(usage, name) for name in TOKEN_FIELDS)
    for name, value in zip(TOKEN_FIELDS, values, strict=True):
        integer = type(value) is int or (isinstance(value, int) and not isinstance(value, bool))
        if integer and value >= 0:
            counted[name] = value
    return counted


def total_of(tokens: Mapping[str, int]) -> int | None:
    """Every token read or written: input plus output (cache and reasoning are parts of them).

    >>> total_of({"input_tokens": 1200, "cache_read_tokens": 1000, "output_tokens": 80})
    1280
    """
    counted = [tokens[name] for name in ("input_tokens", "output_tokens") if name in tokens]
    return sum(counted) if counted else None


def add_into(totals: Tokens, tokens: Mapping[str, int]) -> None:
    for name, value in tokens.items():
        totals[name] = totals.get(name, 0) + value


def usage_carrier(entries: Iterable[Entry]) -> Entry | None:
    """The entry a response's usage goes on (:func:`attach_usage`): its last text, else its
    first reasoning or call, else its error (a response that failed is billed too); None when
    it has none of them."""
    carrier: Entry | None = None
    # One pass, no list made: a load attaches the usage of every response it reads.
    for entry in entries:
        if isinstance(entry, AssistantText):
            carrier = entry  # a later text wins over anything before it
        elif carrier is None and isinstance(entry, USAGE_KINDS):
            carrier = entry  # the first reasoning or call, unless a text follows
    return carrier


def carries(
    entry: Entry | None, usage: Usage
) -> TypeGuard[AssistantText | Thinking | ToolCall | AssistantError]:
    """Whether ``entry`` may carry a response's ``usage``: a text, reasoning or call; an error
    only a usage of some tokens, a failed response that was billed. One of none is a tool's
    stand-in (Claude Code writes its API errors as messages of zero usage), which would count
    as a response the model sent."""
    if isinstance(entry, AssistantError):
        return any(counts_of(usage).values())
    return isinstance(entry, USAGE_KINDS)


def attach_usage(
    entries: Sequence[Entry],
    usage: Usage | None,
    transcript: Transcript | None = None,
    *,
    model: str | None = None,
) -> Entry | None:
    """Put a response's usage where the rules say: on its last text, else on its first
    reasoning or call; through ``transcript.update`` when given, so a live view hears of it.
    A reasoning, call or error that carries it also keeps the response's ``model`` in
    ``meta["model"]``: only a text has a field for it, and a cost is priced by it
    (turnfold.cost). The entry that took the usage, None when none did."""
    if usage is None:
        return None
    carrier = usage_carrier(entries)
    if carrier is None:
        return None
    if not carries(carrier, usage):
        return None
    named = model and not isinstance(carrier, AssistantText)
    meta = {**carrier.meta, "model": model} if named else None
    if transcript is None:
        setattr(carrier, "usage", usage)  # noqa: B010 (a USAGE_KINDS entry)
        if meta is not None:
            carrier.meta = meta
    elif meta is None:
        transcript.update(carrier, usage=usage)
    else:
        transcript.update(carrier, usage=usage, meta=meta)
    return carrier


class TokenCount:
    """The usage of a set of entries, each response counted once, kept up to date as entries
    are added, changed and removed (a live widget's header, spec Q-3)."""

    def __init__(self) -> None:
        #: Each response's usages by the entry that carries them, and what the response adds.
        self._responses: dict[object, dict[str, Tokens]] = {}
        self._counted: dict[object, Tokens] = {}
        self._entries: dict[str, object] = {}  # entry id → its response's key
        self._totals: Tokens = {}
        self._recorded: dict[str, int] = {}  # how many responses record each count

    def set(self, entry_id: str, usage: Usage | None) -> None:
        """Record (or forget, with None) the usage ``entry_id`` carries."""
        old = self._entries.pop(entry_id, None)
        if old is not None:
            self._responses[old].pop(entry_id, None)
            self._recount(old)
        if usage is None:
            return
        key: object = usage.response_id if usage.response_id is not None else ("entry", entry_id)
        self._entries[entry_id] = key
        self._responses.setdefault(key, {})[entry_id] = counts_of(usage)
        self._recount(key)

    def _recount(self, key: object) -> None:
        for name, value in self._counted.pop(key, {}).items():
            self._totals[name] -= value
            self._recorded[name] -= 1
            if not self._recorded[name]:  # no response records it any more (a 0 recorded stays)
                del self._totals[name], self._recorded[name]
        usages = self._responses.get(key)
        if not usages:
            self._responses.pop(key, None)
            return
        counted: Tokens = {}
        for tokens in usages.values():
            for name, value in tokens.items():
                if value > counted.get(name, -1):
                    counted[name] = value
        self._counted[key] = counted
        for name, value in counted.items():
            self._totals[name] = self._totals.get(name, 0) + value
            self._recorded[name] = self._recorded.get(name, 0) + 1

    @property
    def totals(self) -> Tokens:
        return dict(self._totals)


def count_tokens(entries: Iterable[Entry]) -> Tokens:
    """The tokens of ``entries``' own responses, each counted once (no sub-agents).

    >>> from turnfold.model import ToolCall
    >>> once = Usage(input_tokens=10, output_tokens=3, response_id="msg_1")
    >>> count_tokens([Thinking(usage=once), ToolCall(usage=once), ToolCall()])
    {'input_tokens': 10, 'output_tokens': 3}
    """
    return count_tokens_by(entries, _whole).get(None, {})


def _whole(entry: Entry) -> None:
    return None


def count_tokens_by(entries: Iterable[Entry], key: Callable[[Entry], K]) -> dict[K, Tokens]:
    """:func:`count_tokens` split by ``key``: each response counted once, under the key of the
    first entry that carries its usage; the keys in the order they are first met.

    >>> once = Usage(input_tokens=10, output_tokens=3, response_id="msg_1")
    >>> count_tokens_by([Thinking(usage=once), ToolCall(usage=once)], lambda e: e.kind)
    {'thinking': {'input_tokens': 10, 'output_tokens': 3}}
    """
    found: dict[K, Tokens] = {}
    for group, counted in responses(entries, key):
        add_into(found.setdefault(group, {}), counted)
    return found


def responses(entries: Iterable[Entry], key: Callable[[Entry], K]) -> list[tuple[K, Tokens]]:
    """Each response among ``entries`` once, as the key of the first entry that carries its
    usage and its counts (the largest recorded for each field), in the order first met: what a
    response is priced on (:mod:`turnfold.cost`).

    >>> first = Usage(input_tokens=10, output_tokens=1, response_id="msg_1")
    >>> final = Usage(input_tokens=10, output_tokens=3, response_id="msg_1")
    >>> responses([ToolCall(usage=first), AssistantText(usage=final)], lambda e: e.kind)
    [('tool_call', {'input_tokens': 10, 'output_tokens': 3})]
    """
    found: list[tuple[K, Tokens]] = []
    by_id: dict[str, Tokens] = {}  # one pass without TokenCount's bookkeeping: a page, a row
    for entry in entries:
        usage = getattr(entry, "usage", None) if isinstance(entry, USAGE_KINDS) else None
        if usage is None:
            continue
        counted = counts_of(usage)
        if usage.response_id is None:
            found.append((key(entry), counted))
            continue
        seen = by_id.get(usage.response_id)
        if seen is None:
            by_id[usage.response_id] = counted
            found.append((key(entry), counted))
        else:
            for name, value in counted.items():
                seen[name] = max(seen.get(name, value), value)
    return found


def subagent_tokens(entries: Iterable[Entry]) -> Tokens:
    """The tokens of the sub-agents the calls among ``entries`` delegated to, nested ones
    included (each sub-agent's own responses counted once; a total its source recorded,
    :func:`recorded_subagent_tokens`, wins over them, as a session's own does).

    Every level is counted, however deep, by the model's walk of the calls
    (:func:`~turnfold.model.walk_calls`: a stack, not recursion, as sub-agents may nest
    thousands deep). A sub-agent whose transcript is already on the way down (one that
    runs itself, or one it is nested in) is not counted again: its tokens count where it
    first nests, not forever (:func:`turnfold.cost.responses_apart` prices the same ones)."""
    totals: Tokens = {}
    for call, entered in walk_calls(entries, set()):
        agent = call.subagent
        if agent is None or (agent.transcript is not None and not entered):
            continue
        recorded = recorded_subagent_tokens(agent)
        if recorded is not None:
            add_into(totals, recorded)
        elif agent.transcript is not None:
            add_into(totals, count_tokens(agent.transcript.entries))
    return totals


def recorded_subagent_tokens(agent: SubAgent) -> Tokens | None:
    """The tokens the source records for a delegated agent as a whole, its own responses' (its
    nested sub-agents apart): :attr:`~turnfold.model.SubAgent.usage`, else its transcript's
    recorded total (``metadata["usage"]``). None where it records none, or one of no count (a
    usage that counts nothing records nothing, as a session's own total): its transcript's
    responses count it then. What it records wins over those responses, which may lack a
    count (the Claude Agent SDK streams a placeholder output count)."""
    counted = counts_of(agent.usage)
    if not counted and agent.transcript is not None:
        recorded = agent.transcript.metadata.get("usage")
        counted = counts_of(recorded) if isinstance(recorded, Mapping) else {}
    return counted or None


def has_subagent_tokens(call: Entry) -> bool:
    """Whether ``call`` delegated to a sub-agent whose tokens :func:`subagent_tokens` counts:
    one with a transcript, or with a usage of its own."""
    agent = call.subagent if isinstance(call, ToolCall) else None
    return agent is not None and (agent.transcript is not None or agent.usage is not None)


def unattributed_subagent_tokens(transcript: Transcript) -> Tokens:
    """The tokens of sub-agents that ``transcript``'s source records only as one total, under
    no call (``metadata["subagent_usage"]``)."""
    recorded = transcript.metadata.get("subagent_usage")
    return counts_of(recorded) if isinstance(recorded, Mapping) else {}


def tokens_spent(entries: Sequence[Entry]) -> Tokens:
    """What ``entries`` (a turn's) spent: their own responses once each, and the sub-agents
    their calls delegated to, as a turn's header (``show_turn_usage``), the corpus's
    ``turns()`` and a comparison's pair headers count it."""
    tokens = count_tokens(entries)
    add_into(tokens, subagent_tokens(entries))
    return tokens


def side_request_usage(transcript: Transcript) -> list[tuple[str | None, Tokens]]:
    """The tokens of the requests ``transcript``'s harness made of its own, which no response
    records, by the model that spent them (``metadata["side_request_usage"]``: model → counts),
    so that each is priced as that model's (U-2). A dump of an older turnfold keeps them as one
    mapping of counts under no model: read all the same, under None, which no estimate prices.

    >>> t = Transcript(metadata={"side_request_usage": {"m": {"input_tokens": 3}}})
    >>> side_request_usage(t)
    [('m', {'input_tokens': 3})]
    """
    recorded = transcript.metadata.get("side_request_usage")
    if not isinstance(recorded, Mapping):
        return []
    found: list[tuple[str | None, Tokens]] = [
        (str(model), counts_of(counts))
        for model, counts in recorded.items()
        if isinstance(counts, Mapping)
    ]
    found.append((None, counts_of(recorded)))
    return [(model, counts) for model, counts in found if counts]


def side_request_tokens(transcript: Transcript) -> Tokens:
    """The tokens of the requests ``transcript``'s harness made of its own
    (:func:`side_request_usage`), every model's added."""
    tokens: Tokens = {}
    for _, counts in side_request_usage(transcript):
        add_into(tokens, counts)
    return tokens


@dataclass
class SessionTokens:
    """A session's tokens: its own responses', its sub-agents' and its harness's side
    requests' apart."""

    own: Tokens = field(default_factory=dict)
    subagents: Tokens = field(default_factory=dict)
    side_requests: Tokens = field(default_factory=dict)

    @property
    def combined(self) -> Tokens:
        """The parts added: what the session spent in all."""
        totals = dict(self.own)
        add_into(totals, self.subagents)
        add_into(totals, self.side_requests)
        return totals


def transcript_tokens(transcript: Transcript) -> SessionTokens:
    """``transcript``'s tokens; a session total the source recorded for its own responses
    (``metadata["usage"]``, as Codex does) wins over the sum of its responses."""
    recorded = transcript.metadata.get("usage")
    own = counts_of(recorded) if isinstance(recorded, Mapping) else {}
    subagents = subagent_tokens(transcript.entries)
    add_into(subagents, unattributed_subagent_tokens(transcript))
    return SessionTokens(
        own=own or count_tokens(transcript.entries),
        subagents=subagents,
        side_requests=side_request_tokens(transcript),
    )


def output_not_recorded(tokens: Mapping[str, int]) -> bool:
    """Whether ``tokens`` record what was read but not what was written: their total is then
    the input's alone, a lower bound of the tokens spent, and no price (U-2) can be put on
    them (Claude Code's stream-json cut off before its ``result``: each message holds its
    input counts and ``message_start``'s placeholder output, which is not the response's).

    >>> output_not_recorded({"input_tokens": 1200}), output_not_recorded({"input_tokens": 1200,
    ...     "output_tokens": 80}), output_not_recorded({})
    (True, False, False)
    """
    return "input_tokens" in tokens and "output_tokens" not in tokens


def records_tokens_per_turn(transcript: Transcript) -> bool:
    """Whether ``transcript``'s turns record the tokens its session header adds up (U-1).

    Not where the source records a session total only (Codex's ``exec --json`` stream: no
    response has usage, ``turn.completed`` the thread's), or a total holding a count its
    responses lack (Claude Code's stream-json: output tokens only in the ``result``): a turn's
    sum of what its responses record would then be a figure no header shows. Nor where the
    responses record no output count and no total does either (the same stream cut off before
    its ``result``, :func:`output_not_recorded`): a turn's input alone would read as its
    tokens. A turn's header (``show_turn_usage``) and a comparison's pair say so instead.
    """
    totals: Tokens = {}
    for key in ("usage", "session_usage"):
        recorded = transcript.metadata.get(key)
        if isinstance(recorded, Mapping):
            add_into(totals, counts_of(recorded))
    responses = count_tokens(transcript.entries)
    if not any(totals.values()):
        return not output_not_recorded(responses)
    return all(name in responses for name, count in totals.items() if count)


__all__ = [
    "TOKEN_FIELDS",
    "USAGE_KINDS",
    "SessionTokens",
    "TokenCount",
    "Tokens",
    "add_into",
    "attach_usage",
    "carries",
    "count_tokens",
    "count_tokens_by",
    "counts_of",
    "has_subagent_tokens",
    "output_not_recorded",
    "recorded_subagent_tokens",
    "records_tokens_per_turn",
    "responses",
    "side_request_tokens",
    "side_request_usage",
    "subagent_tokens",
    "tokens_spent",
    "total_of",
    "transcript_tokens",
    "unattributed_subagent_tokens",
]
