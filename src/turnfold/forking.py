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

A :class:`Partner` is the same child forked before the input is read: each process reads the
input for itself, so neither writes a page the other shares, and the chunks are split as above.
The price is the second read, on a core that would otherwise wait for the first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

if TYPE_CHECKING:
    import logging

__all__ = ["Partner", "can_fork", "cores", "fork_imap", "fork_map", "free_core"]

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
    and with a child, as soon as it and every one before it are built, here or there."""
    if not fork or not 2 <= len(chunks) <= _MAX_CHUNKS or not can_fork():
        return map(func, chunks)
    return _shared(func, chunks)


def _shared(func: Callable[[Chunk], Result], chunks: Sequence[Chunk]) -> Iterator[Result]:
    """The work of :func:`fork_map` with a forked child."""
    split = _Split(len(chunks))
    if split.forked_child:
        split.serve(func, chunks)
    return split.collect(func, chunks)


class Partner:
    """A child forked before the input of the work is read, to share the work once it is known.

    :func:`fork_imap` forks when the input is in memory: the child has it for free, but each
    process then copies every page of it that it touches (a reference count is a write), which
    made a shared page of the 53 MB session cost a quarter more CPU than building it alone. A
    partner is forked first; both processes read the input, each for itself, and
    :meth:`imap` splits the chunks as :func:`fork_imap` does. They must read the same input:
    each says what it read (``agreed``), and when the two differ (a file that grew in between)
    this process builds every chunk itself.

    The child says nothing and writes nowhere (its standard streams go to the null device),
    and :meth:`imap` never returns in it.
    """

    def __init__(self) -> None:
        self._split = _Split(_MAX_CHUNKS)
        self.is_child = self._split.forked_child
        if self.is_child:
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            os.close(quiet)

    def imap(
        self, func: Callable[[Chunk], Result], chunks: Sequence[Chunk], agreed: bytes
    ) -> Iterator[Result]:
        """``map(func, chunks)``, shared with the child; in the child, its share, then exit."""
        if self.is_child:
            self._split.serve(func, chunks, agreed)
        return self._split.collect(func, chunks, agreed)

    def leave(self) -> None:
        """The work is done, or will not be (the input could not be read): in the child, this
        process ends; here, a child whose results were not asked for is stopped."""
        if self.is_child:
            os._exit(1)
        self._split.dismiss()


class _Split:
    """Chunks shared with one forked child through a queue of their numbers (:func:`fork_imap`).

    The child sends each result as soon as it is built, as much as the pipe takes without
    waiting, and this process collects what arrived between its own chunks: the transfer of
    megabytes of results overlaps the work instead of following it. The child closes the pipe
    before it exits, so the end of its results is seen without waiting for its memory to be
    released, and it is reaped without waiting unless it failed. The queue holds ``numbers``
    chunk numbers; a number past the chunks is passed over by whoever takes it.
    """

    def __init__(self, numbers: int) -> None:
        _reap()
        self._queue_out, queue_in = os.pipe()
        os.write(queue_in, b"".join(n.to_bytes(_NUMBER, "little") for n in range(numbers)))
        os.close(queue_in)  # drained, the queue reads as its end in both processes
        self._read_end, self._write_end = os.pipe()
        _widen(self._write_end)
        self._pid = os.fork()
        self.forked_child = self._pid == 0
        #: The child's results were gathered, and the child reaped or left to be.
        self.collected = False
        #: The child said it read what this process read (its first record).
        self._alike = False

    def serve(
        self, func: Callable[[Chunk], Result], chunks: Sequence[Chunk], agreed: bytes = b""
    ) -> NoReturn:
        """In the child: build what it takes, send it, leave without running any cleanup."""
        import pickle  # only a forked child's results are pickled

        status = 1
        try:
            write_end = self._write_end
            os.close(self._read_end)
            os.set_blocking(write_end, False)
            backlog = bytearray(_record(pickle.dumps((-1, agreed), pickle.HIGHEST_PROTOCOL)))
            for number in _taken(self._queue_out):
                if number < len(chunks):
                    result = (number, func(chunks[number]))
                    backlog += _record(pickle.dumps(result, pickle.HIGHEST_PROTOCOL))
                    _send(write_end, backlog)
            os.set_blocking(write_end, True)
            _send(write_end, backlog)
            os.close(write_end)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flushing the parent's buffered output twice

    def collect(
        self, func: Callable[[Chunk], Result], chunks: Sequence[Chunk], agreed: bytes = b""
    ) -> Iterator[Result]:
        """In this process: build what it takes and gather the child's results as they arrive,
        giving each result, in chunk order, as soon as it and every one before it are had: a
        page is written while the two processes still draw it, not after (Q-1). Whatever the
        child did not build, or built from another input than ``agreed``, is built here."""
        os.close(self._write_end)
        results: dict[int, Result] = {}  # built or received, not given yet
        given = 0  # the results given so far: chunks 0 … given - 1
        inbox = bytearray()
        read_end = self._read_end
        try:
            os.set_blocking(read_end, False)
            for number in _taken(self._queue_out):
                if number < len(chunks):
                    results[number] = func(chunks[number])
                _receive(read_end, inbox)
                self._accept(inbox, agreed, results)
                while given in results:
                    yield results.pop(given)
                    given += 1
            os.set_blocking(read_end, True)
            _receive(read_end, inbox)  # to the end: the child's last chunks
            self._accept(inbox, agreed, results)
        except BaseException:  # an error here, or a caller that stopped asking
            self.dismiss()
            raise
        finally:
            os.close(self._queue_out)
            os.close(read_end)
        self.collected = True
        if given + len(results) == len(chunks):
            _unreaped.append(self._pid)  # leaving: the next call or this process's end reaps it
            _reap()
        else:
            _, status = os.waitpid(self._pid, 0)
            log = _logger()
            if status:
                log.warning("the forked child failed (status %s); building its part here", status)
            else:
                log.debug("the forked child read another input; building its part here")
        for number in range(given, len(chunks)):
            yield results.pop(number) if number in results else func(chunks[number])

    def _accept(self, inbox: bytearray, agreed: bytes, results: dict[int, Any]) -> None:
        """Take the whole records at the start of ``inbox`` out of it: the child's first says
        what it read, and its results are kept only when that is ``agreed``."""
        for number, result in _taken_records(inbox):
            if number == -1:
                self._alike = result == agreed
            elif self._alike:
                results[number] = result

    def dismiss(self) -> None:
        """Stop the child and reap it, unless its results were gathered (it is gone, or
        leaving, and its number may be another process's by now)."""
        if self.collected:
            return
        self.collected = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self._pid, 0)


def _logger() -> logging.Logger:
    """This module's logger, imported only when there is something to say: a fork that goes
    well says nothing, and ``import logging`` takes milliseconds a render need not pay
    (issue 19)."""
    import logging

    return logging.getLogger(__name__)


def _record(pickled: bytes) -> bytes:
    """A result as the child's pipe carries it: its length, then its pickle."""
    return len(pickled).to_bytes(_LENGTH, "little") + pickled


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


def _taken_records(inbox: bytearray) -> list[tuple[int, Any]]:
    """The whole ``(number, result)`` records at the start of ``inbox``, taken out of it (a
    record still arriving, or cut short by a child that died sending it, stays)."""
    import pickle

    records = []
    at = 0
    with memoryview(inbox) as view:
        while at + _LENGTH <= len(view):
            length = int.from_bytes(view[at : at + _LENGTH], "little")
            end = at + _LENGTH + length
            if end > len(view):
                break
            records.append(pickle.loads(view[at + _LENGTH : end]))
            at = end
    del inbox[:at]
    return records


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
