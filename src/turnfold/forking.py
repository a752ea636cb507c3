"""Independent pieces of work shared between this process and one forked child (spec Q-1).

A standalone page of a long session is the HTML of top-level nodes that do not depend on each
other, and building them is pure Python (the GIL keeps threads from helping). On a machine with
a second core, :func:`fork_map` forks once: the child inherits the loaded transcript for free
(copy-on-write, nothing is pickled on the way in), and the two processes take chunks from one
queue until it is empty; the child pipes back what it built (bytes, cheap to pickle). The
results come back in chunk order, so the output is byte-identical to building everything here.

Forking is not free: every page of memory either process writes after the fork (a reference
count is a write) costs a copy-on-write fault, about a third of the work of a page on a 2-core
VM. It pays only when the child gets a core of its own, so callers that choose for themselves
ask :func:`free_core` first (issue 19: on a busy machine the split made a page slower).

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
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ["can_fork", "cores", "fork_map", "free_core"]

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


#: Chunk numbers in the queue are this many bytes: a read of that many from a pipe is atomic, so
#: each number goes to exactly one of the two processes.
_NUMBER = 4
#: The queue is written whole before the fork, so it must fit in a pipe's buffer (64 KiB on
#: Linux, at least 4 KiB by POSIX); more chunks than this are built here.
_MAX_CHUNKS = 1024


#: Where Linux counts the tasks running or ready to run (the fourth field, ``ready/all``).
_LOADAVG = "/proc/loadavg"


def free_core() -> bool:
    """Whether a core is idle now, so that a forked child would run beside this process.

    Linux says how many tasks are running or ready to run (``/proc/loadavg``, this process
    among them): fewer than the cores leaves one idle. Elsewhere the one-minute load average
    stands in, with a core to spare for this process.
    """
    try:
        with open(_LOADAVG, "rb") as stream:
            runnable = int(stream.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0] <= cores() - 1
        except OSError:  # no load average to read: the core count is all there is to go by
            return True
    return runnable < cores()


def fork_map(
    func: Callable[[Chunk], Result], chunks: Sequence[Chunk], *, fork: bool = True
) -> list[Result]:
    """``[func(chunk) for chunk in chunks]``, some of the chunks built in a forked child.

    The two processes take chunks in order from one queue (a pipe of chunk numbers) until it is
    empty, so each builds as much as its core lets it: on a busy machine, where the child gets
    little time, this process builds nearly everything and waits for at most the chunk the child
    holds. ``fork=False`` (or :func:`can_fork` being false, fewer than two chunks, or more than
    :data:`_MAX_CHUNKS`) builds everything here. ``func``'s results travel through a pipe, so
    they must pickle.
    """
    if not fork or not 2 <= len(chunks) <= _MAX_CHUNKS or not can_fork():
        return [func(chunk) for chunk in chunks]
    queue_out, queue_in = os.pipe()
    os.write(queue_in, b"".join(n.to_bytes(_NUMBER, "little") for n in range(len(chunks))))
    os.close(queue_in)  # drained, the queue reads as its end in both processes
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: build what it takes, send it, leave without running any cleanup
        status = 1
        try:
            os.close(read_end)
            built = [(number, func(chunks[number])) for number in _taken(queue_out)]
            payload = pickle.dumps(built, pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flushing the parent's buffered output twice
    os.close(write_end)
    results: list[Result | None] = [None] * len(chunks)
    done = [False] * len(chunks)
    try:
        for number in _taken(queue_out):
            results[number] = func(chunks[number])
            done[number] = True
        # The child sends what it built once the queue is empty; it waits on the pipe until read.
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(queue_out)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        for number, result in pickle.loads(payload):
            results[number] = result
            done[number] = True
    else:
        _LOG.warning("the forked child failed (status %s); building its part here", status)
    for number, finished in enumerate(done):
        if not finished:  # what a failed child took
            results[number] = func(chunks[number])
    return results  # type: ignore[return-value]  # every slot is filled above


def _taken(queue: int) -> Iterator[int]:
    """The chunk numbers this process takes from ``queue``, one at a time, until it is empty."""
    while number := os.read(queue, _NUMBER):
        yield int.from_bytes(number, "little")
