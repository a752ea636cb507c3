"""Play one scenario on one agent: temp HOME and work folder, the scripted server, the CLI runs.

The result (:class:`Play`) holds the server's record (the truth), the session files the runs
wrote, what each run printed on stdout (a stream of JSON events), and enough of each run
(command, exit code, the ends of its output) to tell a harness failure from a loader one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.agents.clis import Agent
from tests.agents.netns import LoopbackNamespace, host_listen
from tests.agents.script import Scenario
from tests.agents.server import Issued, Record, ScriptedServer

#: A bound on each CLI run; a run takes 1–10 s.
RUN_TIMEOUT = 60.0
#: How long a scripted slow command runs before the interrupt (the CLI must have started it).
INTERRUPT_AFTER = 2.0


@dataclass
class CliRun:
    """One CLI process: what ran, how it ended, and the ends of what it printed."""

    argv: list[str]
    returncode: int | None
    seconds: float
    stdout: str
    stderr: str
    timed_out: bool = False

    def describe(self) -> str:
        tail = (self.stderr or self.stdout)[-1500:]
        late = " (timed out)" if self.timed_out else ""
        return f"rc={self.returncode} in {self.seconds:.1f}s{late}: {tail}"


@dataclass
class Play:
    """A scenario played on an agent."""

    agent: Agent
    scenario: Scenario
    record: Record
    home: Path
    work: Path
    runs: list[CliRun] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    all_files: list[Path] = field(default_factory=list)
    #: Each run's stdout, the JSON events it printed, in a file of its own (a run per prompt).
    streams: list[Path] = field(default_factory=list)
    isolated: bool = False
    #: The problems of an earlier attempt that :func:`play_again` replaced.
    retried: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """What went wrong in the harness itself (not in the loader): the truth check is
        meaningless while there are any."""
        out = [f"server: {e}" for e in self.record.errors]
        for index, run in enumerate(self.runs):
            # An interrupted run, and the last of a scenario ending on a fatal API error, may
            # end with an exit code that says so.
            failing = self.scenario.fails and index == len(self.runs) - 1
            excused = (self.scenario.interrupt or failing) and not run.timed_out
            expected = run.returncode == 0 or excused
            if not expected:
                out.append(f"cli {run.describe()}")
        if not self.files:
            out.append(f"no session file under {self.home}")
        out += self._script_problems()
        return out

    def _script_problems(self) -> list[str]:
        """The script did what it means on this agent version: each result the agent sent
        holds the call's token and fails exactly when the call is meant to fail."""
        out = []
        for issued in self.record.issued:
            result = self.record.results.get(issued.concrete.call_id)
            label = f"{issued.thread} step {issued.step} {issued.concrete.name}"
            if result is None:
                if issued.call.outcome == "ok" and issued.call.action != "finish":
                    out.append(f"script: {label}: no result came back")
                continue
            if issued.call.token and issued.call.token not in result.text:
                out.append(f"script: {label}: {issued.call.token} not in {result.text[:200]!r}")
            if self.agent.failed(result, self.home) != (issued.call.outcome == "fail"):
                out.append(
                    f"script: {label}: meant to {issued.call.outcome}, got {result.text[:200]!r}"
                )
        return out


def play(
    agent: Agent,
    scenario: Scenario,
    bin_dir: Path,
    root: Path,
    namespace: LoopbackNamespace | None,
) -> Play:
    """Run every prompt of ``scenario`` through ``agent``'s CLI from ``bin_dir``, under ``root``."""
    scenario = agent.adapt(scenario)
    home, work = root / "home", root / "work"
    home.mkdir(parents=True)
    work.mkdir(parents=True)
    for name, text in scenario.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    sock = namespace.listen() if namespace is not None else host_listen()
    server = ScriptedServer(scenario, agent, sock, work)
    env = agent.setup(home, work, f"http://127.0.0.1:{server.port}")
    result = Play(agent, scenario, server.record, home, work, isolated=namespace is not None)
    started = threading.Event()
    if scenario.interrupt:
        server.on_issue = lambda issued: _cancel_armed(issued, started)
    server.start()
    try:
        session = str(uuid.uuid4())
        for index, prompt in enumerate(scenario.prompts):
            argv = agent.command(agent.executable(bin_dir), prompt, index, session)
            if namespace is not None:
                argv = namespace.wrap(argv)
            run = _run(argv, env, work, started if scenario.interrupt else None)
            result.runs.append(run)
            stream = root / f"stdout-{index}.jsonl"
            stream.write_text(run.stdout)
            result.streams.append(stream)
            if index == 0:
                session = agent.session_id(run.stdout) or session
            if run.returncode != 0 and not scenario.interrupt:
                break
    finally:
        server.stop()
    result.files = agent.session_files(home)
    result.all_files = agent.all_files(home)
    return result


def play_again(
    agent: Agent,
    scenario: Scenario,
    bin_dir: Path,
    root: Path,
    namespace: LoopbackNamespace | None,
) -> Play:
    """:func:`play`, and once more if the CLI misbehaved (say, Qwen Code 0.24.4 on a busy machine
    now and then returns "Output: (empty)" for a command that printed). The second play is kept
    with the first one's problems in ``retried``; a play that fails twice is a real failure."""
    first = play(agent, scenario, bin_dir, root / "1", namespace)
    if not first.problems():
        return first
    second = play(agent, scenario, bin_dir, root / "2", namespace)
    second.retried = first.problems()
    return second


def _cancel_armed(issued: Issued, started: threading.Event) -> None:
    if issued.call.outcome == "cancelled":
        started.set()


def _run(
    argv: list[str], env: dict[str, str], cwd: Path, interrupt: threading.Event | None
) -> CliRun:
    begin = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the interrupt and a timeout reach all
    )
    if interrupt is not None:
        threading.Thread(target=_interrupt, args=(process, interrupt), daemon=True).start()
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    return CliRun(argv, process.returncode, time.monotonic() - begin, stdout, stderr, timed_out)


def _interrupt(process: subprocess.Popen[str], started: threading.Event) -> None:
    """Ctrl-C, as a terminal sends it: SIGINT to the whole process group while the call runs."""
    if started.wait(RUN_TIMEOUT) and process.poll() is None:
        time.sleep(INTERRUPT_AFTER)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
