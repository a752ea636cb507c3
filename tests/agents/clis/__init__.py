"""The agents: how each is configured, started, resumed and found on disk, and how the
scenario's abstract actions become its own tool calls.

Everything an agent needs to stay offline is here: a temp ``HOME`` holding only the settings
below, and the variables that turn off telemetry, error reporting and update checks (from
``shared/notes/real-agents``). The model endpoint is the scripted server's port.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.agents.script import Action, Call, ConcreteCall, Failure, Prompt, Scenario, Turn
from tests.agents.server import Context
from tests.agents.wire import Request, SeenResult

#: "Exit code: 2", "Exit Code: 2", "Process exited with code 2": the failure in a result's text.
EXIT_CODE = re.compile(r"(?:exit(?:ed with)? code|Exit Code)[:\s]+(-?\d+)", re.IGNORECASE)


def exit_code(text: str) -> int | None:
    """The exit code a command's result text reports, if any."""
    match = EXIT_CODE.search(text)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class StreamTokens:
    """What an agent's stdout stream (the JSON events its :meth:`Agent.command` prints) records
    of the token counts the server sent (the ``stream`` check of :mod:`tests.agents.truth`
    holds a load of it to this). Counts are :data:`turnfold.usage.TOKEN_FIELDS` names; an
    empty set records none. A stream that records less than every count is no loader bug:
    what it does not record must load as not recorded, and what it does, as sent."""

    #: The counts each response of the run's own conversation carries.
    responses: frozenset[str] = frozenset()
    #: The counts each sub-agent response carries, of those the stream shows at all.
    subagent: frozenset[str] = frozenset()
    #: The counts of the run's own total (``metadata["usage"]``), and whether it holds the
    #: sub-agents' responses too.
    run_total: frozenset[str] = frozenset()
    run_total_subagents: bool = False
    #: The counts of the session's total so far, every earlier run of a resumed session
    #: included (``metadata["session_usage"]``), and whether it holds the sub-agents' too.
    session_total: frozenset[str] = frozenset()
    session_total_subagents: bool = False


@dataclass(frozen=True)
class StreamWritten:
    """What one run's stdout holds of its tokens, read from the file itself (not from a load of
    it), where a stop decides what the CLI wrote before it ended: the ``stream`` check holds a
    load to what the stream holds, not to what the server sent when a SIGINT landed before the
    CLI wrote it. None: the file does not tell (every response the server sent; the run's
    total where the run exited 0 or the load found one)."""

    #: Every count the stream's own responses carry (each response's counts are numbers of
    #: their own, :meth:`~tests.agents.script.SentUsage.numbered`: one names the response).
    counts: frozenset[int] | None = None
    #: Whether the stream holds the run's total (:attr:`StreamTokens.run_total`).
    total: bool | None = None


class Agent(ABC):
    """One coding-agent CLI, as the harness drives it."""

    #: Short name used in test ids and the drift report.
    name: str
    #: Its npm package and the executable it installs.
    package: str
    binary: str
    #: Other npm packages it runs with, installed beside it at the versions pinned in
    #: ``tests/agents/package.json`` (the drift report too: a newer agent, the same companions).
    companions: tuple[str, ...] = ()
    #: The wire module of the model API it speaks.
    wire: ModuleType
    #: turnfold's loader module for its session files (``turnfold.formats.<loader>``).
    loader: str
    #: The abstract actions it has tools for.
    supports: frozenset[Action]
    #: Whether a SIGINT during a tool call leaves a session file that records the interruption.
    interruptible: bool = False
    #: Whether a later prompt can resume the session non-interactively (else a scenario plays
    #: its first prompt only).
    resumable: bool = True
    #: The API errors its session file records (the ``failures`` check of
    #: :mod:`tests.agents.truth`): ``retry``, a request it retried (a notice of the retry);
    #: ``fatal``, the error that ended its turn. A kind left out is one it does not write at
    #: all, which the check holds its files to. None: a fatal error leaves no session file, and
    #: a scenario that ends on one (``Scenario.fails``) is not played.
    records_failures: frozenset[Failure] | None = frozenset({"retry", "fatal"})
    #: The token counts its session file records of those the server sent (None: every one):
    #: a count it leaves out loads as not recorded.
    session_counts: frozenset[str] | None = None
    #: What its stdout stream records of the tokens; None where turnfold does not read the
    #: stream at all (then it is kept, not checked).
    stream: StreamTokens | None = StreamTokens()

    def executable(self, bin_dir: Path) -> Path:
        return bin_dir / self.binary

    def stream_wrote(self, stdout: str) -> StreamWritten:
        """What a run's ``stdout`` holds of the tokens (:class:`StreamWritten`), where the
        agent's stream can tell; by default it does not."""
        return StreamWritten()

    @abstractmethod
    def setup(self, home: Path, work: Path, base_url: str) -> dict[str, str]:
        """Write the agent's settings under ``home``; the environment variables to add."""

    @abstractmethod
    def command(self, exe: Path, prompt: Prompt, index: int, session: str) -> list[str]:
        """The command line of prompt ``index``: 0 starts a session (with the id ``session``
        where the CLI takes one), later ones resume ``session``."""

    def session_id(self, stdout: str) -> str | None:
        """The session id a first run reports in its JSON output (for CLIs that choose it)."""
        for line in stdout.splitlines():
            with contextlib.suppress(ValueError, AttributeError):
                record = json.loads(line)
                for key in ("session_id", "thread_id", "sessionId"):
                    if isinstance(record.get(key), str):
                        return str(record[key])
        return None

    @abstractmethod
    def session_files(self, home: Path) -> list[Path]:
        """The main session file(s) the runs wrote (sub-agents' files are the loader's to find)."""

    def all_files(self, home: Path) -> list[Path]:
        """Every session file written, sub-agents' included (the drift report reads them all)."""
        return self.session_files(home)

    def returned(self, result: SeenResult) -> str:
        """What the tool returned, of the result the agent sent: all of it, unless the agent
        sends the call's own arguments back beside it."""
        return result.text

    def is_side_request(self, request: Request) -> bool:
        """A request that is not a turn of the conversation (titles, routing checks...)."""
        return False

    def call_id(self, thread: str, step: int, index: int) -> str:
        slug = re.sub(r"[^A-Za-z0-9]", "", thread).lower()
        return f"call_{slug}_{step}_{index}"

    @abstractmethod
    def concrete(self, call: Call, call_id: str, context: Context) -> ConcreteCall:
        """``call`` as this agent's tool call."""

    def plays(self, scenario: Scenario) -> bool:
        """Whether a play of ``scenario`` leaves a session file to check: not after an
        interrupt the agent does not record, nor after a fatal API error that leaves none."""
        if scenario.interrupt and not self.interruptible:
            return False
        return not (scenario.fails and self.records_failures is None)

    def adapt(self, scenario: Scenario) -> Scenario:
        """The scenario without the calls this agent has no tool for (a turn left with nothing
        to say is dropped), and without its later prompts where the agent cannot resume:
        scenarios are written once, for every agent."""

        def keep(prompt: Prompt) -> Prompt:
            turns = []
            for turn in prompt.turns:
                calls = tuple(c for c in turn.calls if c.action in self.supports)
                if calls or turn.text or turn.failure or (turn.thinking and not turn.calls):
                    turns.append(replace(turn, calls=calls))
            return replace(prompt, turns=tuple(turns))

        sub = keep(scenario.subagent) if scenario.subagent is not None else None
        prompts = scenario.prompts if self.resumable else scenario.prompts[:1]
        return replace(scenario, prompts=tuple(keep(p) for p in prompts), subagent=sub)

    def subagent_turn(self, turn: Turn, last: bool) -> Turn:
        """A turn of the sub-agent's script as this agent needs it (Gemini ends with a call)."""
        return turn

    def failed(self, result: SeenResult, home: Path) -> bool:
        """Whether the result the agent sent says the call failed: its error flag where the wire
        has one, else a non-zero exit code in the text. An agent whose results do not say
        reads the outcome its own files record under ``home`` (never turnfold's load of them)."""
        if result.is_error:
            return True
        code = exit_code(result.text)
        return code is not None and code != 0

    def records(self, path: Path) -> Iterator[dict[str, Any]]:
        """The records of session file ``path`` (the drift report reads their fields): its JSON
        lines that are objects."""
        for line in path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    yield record

    def record_type(self, record: dict[str, Any]) -> str:
        """A session record's type, named as turnfold's accounting names it."""
        return str(record.get("type", "(object)"))


def clean_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """A minimal environment: no proxy, no credentials, no settings of the developer's own."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "TMPDIR": str(home / "tmp"),
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(extra)
    return env


def _agents() -> dict[str, Agent]:
    from tests.agents.clis.claude import Claude
    from tests.agents.clis.cline import Cline
    from tests.agents.clis.codex import Codex
    from tests.agents.clis.continue_ import Continue
    from tests.agents.clis.copilot import Copilot
    from tests.agents.clis.gemini import Gemini
    from tests.agents.clis.kimi import Kimi
    from tests.agents.clis.opencode import OpenCode
    from tests.agents.clis.qwen import Qwen

    agents = (Claude(), Codex(), Qwen(), Gemini(), Cline(), OpenCode(), Copilot(), Continue(),
              Kimi())  # fmt: skip
    return {a.name: a for a in agents}


AGENTS: dict[str, Agent] = _agents()
