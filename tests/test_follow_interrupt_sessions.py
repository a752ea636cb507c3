"""Spec A-2 (with P-7): a Ctrl-C in a followed Agents SDK run, in real IPython processes.

Terminal IPython (``python -m IPython``, ``%autoawait`` on: its own asyncio loop, idle between
cells) driven through a pseudo-terminal (``pexpect``, which IPython itself depends on): the user
presses Ctrl-C while the tool sleeps. When the interrupt landed in the tool's own task, the
cell showed its traceback three times: IPython's, as the cell's error; again when turnfold, at
the cell's end, gave the interrupt back to the cell's code (IPython's ``run_code`` showed it);
and a third time as the Agents SDK's loop-level report of the tool task that raised it
("Background function tool task raised a fatal exception."). Now it is shown once.

A Jupyter kernel (``ipykernel`` through ``jupyter_client``; its loop runs the cell, top-level
``await`` runs on it): ``interrupt_kernel()`` while the tool sleeps. ipykernel (6 and 7,
``IPythonKernel._cancel_on_sigint``) turns the SIGINT of an awaiting cell into a cancel of the
cell's task, so the cell errors as any awaiting cell it interrupts does, once; the run is shown
stopped and the next cell runs on the same loop.

Every run is the real SDK's on its offline scripted model (``agents.testing.ScriptedModel``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")
pytest.importorskip("IPython")

pytestmark = [
    pytest.mark.slow,  # each starts a real IPython process and imports the SDK in it
    pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a POSIX signal here"),
]

PROMPT = "Add 1 and 2."
#: What the tool prints once it sleeps: the moment to press Ctrl-C.
SLEEPING = "the tool sleeps"

#: The agent the cells follow (``calc()``): its scripted model calls ``add`` once, then
#: answers. ``add`` sleeps until interrupted: awaiting, or, while ``BLOCKING`` is set,
#: blocking the loop's thread (in a terminal a Ctrl-C then lands in the tool's own task, not in
#: the loop's wait for events, outside every task).
AGENT = """
import asyncio, json, time
import turnfold
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)  # the default exporter wants OPENAI_API_KEY
PROMPT = {prompt!r}
BLOCKING = False


# Asleep for a minute, awaiting; said once the loop has nothing left to run but wait. In
# steps, as a run's I/O wakes the loop: ipykernel acts on an interrupt only once its loop
# wakes (ipython/ipykernel#881).
async def sleep_awaiting():
    asyncio.get_running_loop().call_soon(print, {sleeping!r})
    for _ in range(600):
        await asyncio.sleep(0.1)


async def add(a: int, b: int) -> int:
    # Add two numbers.
    if BLOCKING:
        print({sleeping!r}, flush=True)
        time.sleep(60)
    else:
        await sleep_awaiting()
    return a + b


# A new agent for each run: its scripted model's steps are used up as the run takes them.
def calc():
    return Agent(
        name="calc",
        tools=[function_tool(add)],
        model=ScriptedModel(
            [
                ModelStep(output=[function_call("add", {{"a": 1, "b": 2}}, call_id="call_1")]),
                ModelStep(output=[assistant_message("1+2=3.")]),
            ]
        ),
    )


# What the view of `run` holds, and the tasks of the run or of a cell still pending on the
# loop (neither the asking cell's own nor the kernel's), printed as JSON.
def state():
    from turnfold.model import AbortMarker
    from turnfold.process import Turn, project
    from turnfold.transport import unpack_view

    def module(task):
        frame = getattr(task.get_coro(), "cr_frame", None)
        return frame.f_globals.get("__name__", "") if frame is not None else ""

    saved = unpack_view(run.widget._view)
    print("STATE " + json.dumps({{
        "left": sorted(
            task.get_coro().__qualname__
            for task in asyncio.all_tasks()
            if task is not asyncio.current_task()
            and module(task).startswith(("agents", "turnfold", "__main__", "IPython"))
        ),
        "calls": [[c.name, c.status] for c in run.transcript.tool_calls()],
        "stopped_last": isinstance(run.transcript.entries[-1], AbortMarker),
        "turns": [n.header.status for n in project(run.transcript) if isinstance(n, Turn)],
        "saved": [n["status"] for n in saved["view"]["nodes"] if n["kind"] == "turn"],
        "running": run.widget.running,
        "warnings": [w.reason for w in run.transcript.warnings],
    }}))
"""

#: The next cell: it awaits (on the loop the run was stopped on), then prints :func:`state`.
NEXT_CELL = "await asyncio.sleep(0.01); state()"

#: What :data:`NEXT_CELL` prints of a run stopped by the Ctrl-C: no task left, the call
#: cancelled, the turn stopped (in the live view and the saved one), no warning.
STOPPED = {
    "left": [],
    "calls": [["add", "cancelled"]],
    "stopped_last": True,
    "turns": ["stopped"],
    "saved": ["stopped"],
    "running": False,
    "warnings": [],
}


def _state(printed: str) -> dict[str, Any]:
    (line,) = [line for line in printed.splitlines() if line.startswith("STATE ")]
    state: dict[str, Any] = json.loads(line.removeprefix("STATE "))
    return state


# --- terminal IPython ------------------------------------------------------------------------

#: The cell, on one line: the simple prompt runs each complete statement as it is typed.
FOLLOW_ON_ONE_LINE = (
    "async for event in (run := turnfold.follow(Runner.run_streamed(calc(), PROMPT))): pass"
)
IN_PROMPT = r"In \[\d+\]: "


def test_A2_P7_terminal_ipython_shows_a_ctrl_c_in_a_followed_run_once(tmp_path: Path) -> None:
    """Ctrl-C while the tool sleeps, in one terminal session: in the loop's wait, then in the
    tool's own task. Each time the cell shows one traceback, the ``KeyboardInterrupt`` (the
    old code showed it twice, and three times when it landed in the tool: IPython's, the
    cell's code given it back at the cell's end, the SDK's loop-level report of its tool
    task), and the next cell that awaits runs with no task of the run left, the run shown
    stopped. The session then exits cleanly (no thread or task holds it)."""
    pexpect = pytest.importorskip("pexpect")
    (tmp_path / "agent_setup.py").write_text(
        AGENT.format(prompt=PROMPT, sleeping=SLEEPING), "utf-8"
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython"), "TERM": "dumb"}
    shell = pexpect.spawn(
        sys.executable,
        ["-m", "IPython", "--simple-prompt", "--colors=nocolor", "--no-banner",
         "--HistoryManager.hist_file=:memory:", "--autoawait=True"],
        env=env, cwd=str(tmp_path), encoding="utf-8", timeout=120, dimensions=(40, 200),
    )  # fmt: skip

    def shown() -> str:
        shell.expect(IN_PROMPT)
        return str(shell.before).replace("\r\n", "\n")

    def cell(code: str) -> str:
        shell.sendline(code)
        return shown()

    def interrupted() -> tuple[str, dict[str, Any]]:
        shell.sendline(FOLLOW_ON_ONE_LINE)
        shell.expect(SLEEPING)
        shell.sendintr()
        return shown(), _state(cell(NEXT_CELL))

    try:
        shown()
        cell("%run -i agent_setup.py")
        in_the_loop = interrupted()
        cell("BLOCKING = True")
        in_the_tool = interrupted()
        shell.sendline("exit")
        shell.expect(pexpect.EOF)
        exited = str(shell.before)
    finally:
        shell.close(force=True)

    for output, state in (in_the_loop, in_the_tool):
        assert output.count("Traceback (most recent call last)") == 1, output
        assert re.findall(r"^KeyboardInterrupt\b.*$", output, re.MULTILINE) == [
            "KeyboardInterrupt                         Traceback (most recent call last)",
            "KeyboardInterrupt: ",
        ], output
        assert "Background function tool task" not in output
        assert "Task exception was never retrieved" not in output
        assert state == STOPPED
    # Where it landed: the tool's own line is in the one traceback shown.
    assert "time.sleep(60)" in in_the_tool[0]
    assert "time.sleep(60)" not in in_the_loop[0]
    assert "Traceback" not in exited
    assert "Task was destroyed but it is pending" not in exited


# --- a Jupyter kernel ------------------------------------------------------------------------

#: The cell a notebook user writes to watch the run (its widget shown at the first event).
FOLLOW_IN_THE_CELL = """
run = turnfold.follow(Runner.run_streamed(calc(), PROMPT))
async for event in run:
    pass
"""
#: A cell that only awaits, interrupted the same way: how the kernel ends such a cell.
AWAIT_IN_THE_CELL = "await sleep_awaiting()"


class Kernel:
    """A real kernel (``ipykernel``, started by ``jupyter_client``) whose cells are run one at
    a time, each interrupted (``interrupt_kernel()``, SIGINT) once it says :data:`SLEEPING`
    when asked."""

    def __init__(self, manager: Any, client: Any) -> None:
        self.manager, self.client = manager, client

    def run(self, code: str, *, interrupt: bool = False) -> tuple[str, list[list[str]]]:
        """The cell's reply status, and what it showed: its printed text (``["stream", name,
        text]``) and its errors (``["error", ename, evalue]``), in order."""
        msg_id = self.client.execute(code)
        shown: list[list[str]] = []
        while True:
            msg = self.client.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                shown.append(["stream", content["name"], content["text"]])
                if interrupt and SLEEPING in content["text"]:
                    self.manager.interrupt_kernel()
                    interrupt = False
            elif kind == "error":
                shown.append(["error", content["ename"], content["evalue"]])
            elif kind == "status" and content["execution_state"] == "idle":
                break
        while (reply := self.client.get_shell_msg(timeout=120))["parent_header"].get(
            "msg_id"
        ) != msg_id:
            pass
        return reply["content"]["status"], shown


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    manager_module = pytest.importorskip("jupyter_client.manager")
    pytest.importorskip("ipykernel")
    (tmp_path / "agent_setup.py").write_text(
        AGENT.format(prompt=PROMPT, sleeping=SLEEPING), "utf-8"
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")}
    manager, client = manager_module.start_new_kernel(
        kernel_name="python3", startup_timeout=120, cwd=str(tmp_path), env=env
    )
    try:
        yield Kernel(manager, client)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_A2_P7_a_kernel_interrupt_while_a_followed_tool_sleeps_ends_the_cell_once(
    kernel: Kernel,
) -> None:
    """``interrupt_kernel()`` while the followed run's tool sleeps: the cell errors once, as
    the kernel ends any awaiting cell it interrupts (ipykernel cancels the cell's task: a
    ``CancelledError``, not turned into anything else, nor shown again); the next cell that
    awaits runs on the same loop with no task of the run left, and the view (live and saved)
    shows the run stopped, its call cancelled."""
    assert kernel.run("%run -i agent_setup.py") == ("ok", [])
    status, awaiting = kernel.run(AWAIT_IN_THE_CELL, interrupt=True)
    assert status == "error"
    ((_, interrupted, _),) = [shown for shown in awaiting if shown[0] == "error"]
    assert interrupted in ("KeyboardInterrupt", "CancelledError")

    status, followed = kernel.run(FOLLOW_IN_THE_CELL, interrupt=True)

    assert status == "error"
    assert [shown[1] for shown in followed if shown[0] == "error"] == [interrupted]
    assert [shown[2] for shown in followed if shown[0] == "stream"] == [SLEEPING + "\n"]
    status, after = kernel.run(NEXT_CELL)
    assert status == "ok"
    assert _state("".join(shown[2] for shown in after if shown[0] == "stream")) == STOPPED
