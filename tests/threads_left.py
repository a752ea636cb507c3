"""A test run never hangs at its end on a thread a test left running.

Python waits, before it exits, for every thread that is not a daemon. A thread a test started
and left waiting (a worker of an event loop that was never told to stop, say) kept a whole run
from ending after its summary, and CI from finishing at all. So each test's new threads are
noted; at the end of the run, those Python would still wait for are named, each with the test
that started it and where it waits, and the process ends with the run's own status without
waiting for them. The threads are a test's hygiene, not a verdict on what the tests checked:
they are said, loudly, and do not fail the run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator

import pytest

#: How long the end of the run gives a thread still winding down.
GRACE = 5.0
#: Each thread a test left behind, with that test's id.
_started_by: dict[threading.Thread, str] = {}
#: The run's status, once threads were left: the process ends with it, not waiting for them.
_ended_with: list[int] = []


def waited_on() -> list[threading.Thread]:
    """The threads Python's exit waits for, but for a thread pool's workers, which its own exit
    hook tells to stop (``concurrent.futures``: an event loop's default executor among them)."""
    from concurrent.futures import thread as pools

    pooled = set(pools._threads_queues)  # what that hook stops (a private name: tests only)
    main = threading.main_thread()
    return [t for t in threading.enumerate() if not t.daemon and t is not main and t not in pooled]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    before = set(waited_on())
    yield
    for thread in waited_on():
        if thread not in before:
            _started_by.setdefault(thread, item.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    deadline = time.monotonic() + GRACE
    for thread in waited_on():
        thread.join(max(0.0, deadline - time.monotonic()))
    left = [t for t in waited_on() if t.is_alive()]
    if not left:
        return
    frames = sys._current_frames()
    lines = [
        f"{len(left)} thread(s) left running, which Python's exit would wait for "
        "(the run ends without them):"
    ]
    for thread in left:
        lines.append(f"- {thread.name!r}, started in {_started_by.get(thread, 'no test')}")
        frame = frames.get(thread.ident or -1)
        if frame is not None:
            lines += ["    " + line for line in "".join(traceback.format_stack(frame)).splitlines()]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line, file=sys.stderr)
    _ended_with.append(int(session.exitstatus))


def pytest_unconfigure() -> None:
    if _ended_with:  # the threads left would keep the process from ever ending
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_ended_with[0])
