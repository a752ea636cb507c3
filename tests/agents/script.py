"""The vocabulary of a scripted model: what it says, written once for every agent.

A scenario is written in abstract actions ("read this file", "run this command", "start a
sub-agent"); each agent's module (:mod:`tests.agents.clis`) turns an action into its own tool and
argument names. What the server finally sends is a :class:`Reply` of concrete calls, and that is
what the truth check compares the loaded transcript with, as it compares the loaded token
counts with the :class:`SentUsage` each reply carried.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: What a call should come to: the command succeeded, it failed (a non-zero exit, a missing
#: file), or the run was interrupted while it ran (no result ever reaches the model).
Outcome = Literal["ok", "fail", "cancelled"]

#: The abstract actions a scenario may use. ``wait`` collects a sub-agent started by an earlier
#: ``spawn`` (Codex needs it; elsewhere the spawn call returns the child's answer itself);
#: ``finish`` is how a sub-agent ends where a closing text is not enough (Gemini's
#: ``complete_task``), written by the agent module, not by scenarios.
Action = Literal["read", "search", "list", "shell", "edit", "write", "spawn", "wait", "finish"]

#: A model request answered with an API error instead of a reply: ``retry`` a transient one the
#: agent retries (overloaded, unavailable), ``fatal`` one it must not (an invalid request), which
#: ends its turn. Each wire module writes them in its provider's status and error body.
Failure = Literal["retry", "fatal"]


@dataclass(frozen=True)
class Call:
    """One tool call in abstract form.

    ``token`` is a string the result must contain, both in what the agent sent back to the model
    (which checks the scenario itself) and in the loaded transcript (which checks the loader).
    """

    action: Action
    params: dict[str, Any] = field(default_factory=dict)
    outcome: Outcome = "ok"
    token: str | None = None


@dataclass(frozen=True)
class Turn:
    """One model response: optional thinking, then text and/or calls (several calls = parallel).

    ``failure`` answers the step's request with an API error instead: ``retry`` the first
    request only (the agent's retry gets the turn), ``fatal`` every one (the turn says nothing
    else)."""

    thinking: str | None = None
    text: str | None = None
    calls: tuple[Call, ...] = ()
    failure: Failure | None = None


@dataclass(frozen=True)
class Prompt:
    """A user prompt and the model's turns answering it. ``marker`` must appear in ``text``:
    it is how the server tells which conversation a request belongs to."""

    marker: str
    text: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Scenario:
    """Prompts run one after another in one session (the second and later ones by resuming it),
    the sub-agent's script, the files the work folder starts with, and what it needs from the
    agent. ``interrupt`` sends SIGINT to the CLI while the call marked ``cancelled`` runs;
    ``fails`` says the last run ends on a fatal API error (its exit code may say so)."""

    name: str
    prompts: tuple[Prompt, ...]
    subagent: Prompt | None = None
    files: dict[str, str] = field(default_factory=dict)
    needs: frozenset[Action] = frozenset()
    interrupt: bool = False
    fails: bool = False

    def markers(self) -> dict[str, Prompt]:
        """Every conversation of the scenario by its marker (prompts and the sub-agent's task)."""
        threads = {p.marker: p for p in self.prompts}
        if self.subagent is not None:
            threads[self.subagent.marker] = self.subagent
        return threads


@dataclass(frozen=True)
class ConcreteCall:
    """A call as the server sends it: the agent's own tool name and arguments."""

    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class SentUsage:
    """The token counts the server sent with one response, in turnfold's convention (input
    includes the cached reads and writes, output the reasoning: :mod:`turnfold.usage`), so that
    they compare with a loaded :class:`~turnfold.model.Usage` as they are. A count the wire API
    has no field for is None; each wire module writes the rest in its own fields."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None

    @classmethod
    def numbered(cls, n: int, counts: frozenset[str]) -> SentUsage:
        """The counts of the play's ``n``-th response (from 1), for a wire API that has the
        ``counts`` named. Every count of every response differs from every other (the field is
        the last digits, ``n`` the rest), so a count loaded in the wrong field or from the wrong
        response, or a response counted twice, shows in the totals; input keeps an uncached
        part of its own and output a visible one, so either may be written apart."""
        read = 1000 * n + 20 if "cache_read_tokens" in counts else None
        write = 1000 * n + 30 if "cache_write_tokens" in counts else None
        reasoning = 10 * n + 4 if "reasoning_tokens" in counts else None
        return cls(
            input_tokens=1000 * n + 100 + (read or 0) + (write or 0),
            output_tokens=10 * n + 5 + (reasoning or 0),
            cache_read_tokens=read,
            cache_write_tokens=write,
            reasoning_tokens=reasoning,
        )

    def counts(self) -> dict[str, int]:
        """The counts sent, by :data:`turnfold.usage.TOKEN_FIELDS` name (those the wire has)."""
        return {k: v for k, v in vars(self).items() if v is not None}

    @property
    def uncached_input(self) -> int:
        """Input neither read from nor written to the cache (Anthropic's ``input_tokens``)."""
        return self.input_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0)

    @property
    def visible_output(self) -> int:
        """Output that is not reasoning (Gemini's ``candidatesTokenCount``)."""
        return self.output_tokens - (self.reasoning_tokens or 0)


@dataclass(frozen=True)
class Reply:
    """A model response as the server streams it (one wire module turns it into SSE), with the
    token counts the server numbered it with (None until it has). A reply with an ``error`` is
    that API error and nothing else: no content, no token counts."""

    thinking: str | None = None
    text: str | None = None
    calls: tuple[ConcreteCall, ...] = ()
    usage: SentUsage | None = None
    error: Failure | None = None
