"""Independent pieces of work shared between this process and one forked child (spec Q-1).

A standalone page of a long session is the HTML of top-level nodes that do not depend on each
other, and building them is pure Python (the GIL keeps threads from helping). On a machine with
a second core, :func:`fork_map` forks once: the child inherits the loaded transcript for free
(copy-on-write, nothing is pickled on the way in), builds every other chunk and pipes back its
results (strings, cheap to pickle), while this process builds the rest. The results come back in
chunk order, so the output is byte-identical to building everything here.

Forking is only safe in a process with one thread (a lock held by another thread at the moment of
the fork stays locked forever in the child) and only exists on POSIX, so anywhere else, in a
Jupyter kernel for instance, the chunks are simply built here one after the other. A child that
fails or dies costs only time: its chunks are then built here, where an error surfaces with its
real traceback.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["can_fork", "cores", "fork_map"]

_LOG = logging.getLogger(__name__)

Chunk = TypeVar("Chunk")
Result = TypeVar("Result")


def cores() -> int:
    """How many cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether a forked child can share the work: POSIX, a second core, and no other thread."""
    return hasattr(os, "fork") and cores() >= 2 and threading.active_count() == 1


def fork_map(
    func: Callable[[Chunk], Result], chunks: Sequence[Chunk], *, fork: bool = True
) -> list[Result]:
    """``[func(chunk) for chunk in chunks]``, the odd-numbered chunks built in a forked child.

    Interleaving balances the two halves without estimating what each chunk costs. ``fork=False``
    (or :func:`can_fork` being false, or fewer than two chunks) builds everything here.
    ``func``'s results travel through a pipe, so they must pickle.
    """
    if not fork or len(chunks) < 2 or not can_fork():
        return [func(chunk) for chunk in chunks]
    theirs = range(1, len(chunks), 2)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: build its chunks, send them, leave without running any cleanup
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps([func(chunks[i]) for i in theirs], pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flushing the parent's buffered output twice
    os.close(write_end)
    results: list[Result | None] = [None] * len(chunks)
    try:
        for index in range(0, len(chunks), 2):
            results[index] = func(chunks[index])
        # The child finished its chunks before writing; it waits on the pipe until read here.
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        for index, result in zip(theirs, pickle.loads(payload), strict=True):
            results[index] = result
    else:
        _LOG.warning("the forked child failed (status %s); building its part here", status)
        for index in theirs:
            results[index] = func(chunks[index])
    return results  # type: ignore[return-value]  # every slot is filled above
