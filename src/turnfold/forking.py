"""Independent pieces of work shared between this process and one forked child (spec Q-1).

A standalone page of a long session is the HTML of top-level nodes that do not depend on each
other, and building them is pure Python (the GIL keeps threads from helping). On a machine with
a second core, :func:`fork_map` forks once: the child inherits the loaded transcript for free
(copy-on-write, nothing is pickled on the way in), and the two processes take chunks from one
queue until it is empty; the child pipes back each result as it is built (bytes, cheap to
pickle). The results come back in chunk order, so the output is byte-identical to building
everything here.

Forking is not free: every page of memory either process writes after the fork (a reference
count is a write) costs a copy-on-write fault. On the 2-core VM of issue 19 a shared page of the
53 MB session cost 0.78 s of CPU against 0.62 s in one process: the split pays only when the
child gets a core of its own, so callers that choose for themselves ask :func:`free_core` first
(on a busy machine the split made the page slower: 0.76 s against 0.62 s).

Forking is only safe in a process with one thread (a lock held by another thread at the moment of
the fork stays locked forever in the child) and only exists on POSIX, so anywhere else, in a
Jupyter kernel for instance, the chunks are simply built here one after the other. A child that
fails or dies costs only time: its chunks are then built here, where an error surfaces with its
real traceback.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["can_fork", "cores", "fork_imap", "fork_map", "free_core"]

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
    return list(fork_imap(func, chunks, fork=fork))


def fork_imap(
    func: Callable[[Chunk], Result], chunks: Sequence[Chunk], *, fork: bool = True
) -> Iterator[Result]:
    """:func:`fork_map`'s results in order, each as soon as it can be had: built one at a time
    as they are asked for when there is no fork (so a page can be written as it is drawn),
    all at once when a child shares the work."""
    if not fork or not 2 <= len(chunks) <= _MAX_CHUNKS or not can_fork():
        return map(func, chunks)
    return iter(_shared(func, chunks))


def _shared(func: Callable[[Chunk], Result], chunks: Sequence[Chunk]) -> list[Result]:
    """The work of :func:`fork_map` with a forked child.

    The child sends each result as soon as it is built, as much as the pipe takes without
    waiting, and this process collects what arrived between its own chunks: the transfer of
    megabytes of results overlaps the work instead of following it. The child closes the pipe
    before it exits, so the end of its results is seen without waiting for its memory to be
    released, and it is reaped without waiting unless it failed.
    """
    import pickle  # only a forked child's results are pickled

    _reap()
    queue_out, queue_in = os.pipe()
    os.write(queue_in, b"".join(n.to_bytes(_NUMBER, "little") for n in range(len(chunks))))
    os.close(queue_in)  # drained, the queue reads as its end in both processes
    read_end, write_end = os.pipe()
    _widen(write_end)
    pid = os.fork()
    if pid == 0:  # the child: build what it takes, send it, leave without running any cleanup
        status = 1
        try:
            os.close(read_end)
            os.set_blocking(write_end, False)
            backlog = bytearray()
            for number in _taken(queue_out):
                record = pickle.dumps((number, func(chunks[number])), pickle.HIGHEST_PROTOCOL)
                backlog += len(record).to_bytes(_LENGTH, "little")
                backlog += record
                _send(write_end, backlog)
            os.set_blocking(write_end, True)
            _send(write_end, backlog)
            os.close(write_end)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flushing the parent's buffered output twice
    os.close(write_end)
    results: list[Result | None] = [None] * len(chunks)
    done = [False] * len(chunks)
    inbox = bytearray()
    try:
        os.set_blocking(read_end, False)
        for number in _taken(queue_out):
            results[number] = func(chunks[number])
            done[number] = True
            _receive(read_end, inbox)
        os.set_blocking(read_end, True)
        _receive(read_end, inbox)  # to the end: the child's last chunks
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(queue_out)
        os.close(read_end)
    for number, result in _records(inbox):
        results[number] = result
        done[number] = True
    if all(done):
        _unreaped.append(pid)  # it is leaving; the next call, or the end of this process, reaps it
        _reap()
    else:  # what a failed child took is built here
        _, status = os.waitpid(pid, 0)
        _LOG.warning("the forked child failed (status %s); building its part here", status)
        for number, finished in enumerate(done):
            if not finished:
                results[number] = func(chunks[number])
    return results  # type: ignore[return-value]  # every slot is filled above


#: A result's length before its pickle in the child's pipe.
_LENGTH = 8
#: Children whose results all arrived but which had not exited yet when last looked at.
_unreaped: list[int] = []


def _widen(pipe: int) -> None:
    """Let ``pipe`` hold a megabyte, so the child rarely finds it full (Linux only)."""
    import fcntl  # POSIX only, as fork is

    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setting is not None:
        with contextlib.suppress(OSError):  # above the system's limit: the default size will do
            fcntl.fcntl(pipe, setting, 1 << 20)


def _send(pipe: int, backlog: bytearray) -> None:
    """Write what ``pipe`` takes of ``backlog`` (all of it, if the pipe blocks) and drop it."""
    try:
        while backlog:
            del backlog[: os.write(pipe, backlog)]
    except BlockingIOError:
        pass  # the pipe is full: the rest goes after the next chunk


def _receive(pipe: int, inbox: bytearray) -> None:
    """Read what ``pipe`` holds into ``inbox``: all there is now, or to its end if it blocks."""
    try:
        while data := os.read(pipe, 1 << 20):
            inbox += data
    except BlockingIOError:
        pass  # nothing more for now


def _records(inbox: bytearray) -> Iterator[tuple[int, Any]]:
    """The ``(number, result)`` records in ``inbox``, up to the last whole one."""
    import pickle

    view = memoryview(inbox)
    at = 0
    while at + _LENGTH <= len(view):
        length = int.from_bytes(view[at : at + _LENGTH], "little")
        end = at + _LENGTH + length
        if end > len(view):
            break  # the child died while sending this one
        yield pickle.loads(view[at + _LENGTH : end])
        at = end


def _reap() -> None:
    """Reap the children of earlier calls that have exited since."""
    for pid in list(_unreaped):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                continue  # still leaving
        _unreaped.remove(pid)


def _taken(queue: int) -> Iterator[int]:
    """The chunk numbers this process takes from ``queue``, one at a time, until it is empty."""
    while number := os.read(queue, _NUMBER):
        yield int.from_bytes(number, "little")
