"""The vocabulary of a scripted model: what it says, written once for every agent.

A scenario is written in abstract actions ("read this file", "run this command", "start a
sub-agent"); each agent's module (:mod:`tests.agents.clis`) turns an action into its own tool and
argument names. What the server finally sends is a :class:`Reply` of concrete calls, and that is
what the truth check compares the loaded transcript with.
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
    """One model response: optional thinking, then text and/or calls (several calls = parallel)."""

    thinking: str | None = None
    text: str | None = None
    calls: tuple[Call, ...] = ()


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
    agent. ``interrupt`` sends SIGINT to the CLI while the call marked ``cancelled`` runs."""

    name: str
    prompts: tuple[Prompt, ...]
    subagent: Prompt | None = None
    files: dict[str, str] = field(default_factory=dict)
    needs: frozenset[Action] = frozenset()
    interrupt: bool = False

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
class Reply:
    """A model response as the server streams it (one wire module turns it into SSE)."""

    thinking: str | None = None
    text: str | None = None
    calls: tuple[ConcreteCall, ...] = ()
