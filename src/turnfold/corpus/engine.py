"""Where the per-item work runs (spec C-5): here, in worker processes, or on a Dask cluster.

Every engine maps a picklable function over chunks of items with a bounded number of chunks in
flight, so memory stays bounded however many items there are, and a consumer that stops early
(a search at its limit) stops the work. :func:`ordered_map` hands the results back in the order
of the items; :func:`spread` (a scan's files) as they end, the largest files started first.

Worker processes fork from this process when it has one thread (a script, the command line):
each starts at once with what this process imported, and none imports the script again (a
forkserver's or a spawned worker runs an unguarded script's top level again, scan and all, so a
script without ``if __name__ == "__main__":`` broke the pool). In a kernel, which has threads,
they fork from a forkserver that has imported the corpus and every format module once; while it
starts, the scanning process does the first small chunks itself.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from turnfold.corpus.discover import Item

if TYPE_CHECKING:  # imported where workers start: a scan done in this process needs neither
    from concurrent.futures import Future, ProcessPoolExecutor

R = TypeVar("R")
#: A chunk of file items aims at this many bytes, so one worker round trip is worth its cost.
CHUNK_BYTES = 4 * 1024 * 1024
#: ...and holds at most this many items (rows of a table are small).
CHUNK_ITEMS = 256
#: Less work than this is done in this process: starting workers would cost more than it saves.
LOCAL_BYTES = 4 * 1024 * 1024
LOCAL_ITEMS = 64
#: A chunk this process does itself while its workers start holds at most this many bytes of
#: files: a larger one waits for a worker, so this process never holds a large transcript.
HERE_BYTES = 2 * CHUNK_BYTES
#: Chunks in flight per worker.
WINDOW_PER_WORKER = 3


def chunks(items: Iterable[Item]) -> Iterator[list[Item]]:
    """Consecutive items in chunks of about :data:`CHUNK_BYTES` (files) or
    :data:`CHUNK_ITEMS` items."""
    chunk: list[Item] = []
    size = 0
    for item in items:
        chunk.append(item)
        size += item.size or 0
        if size >= CHUNK_BYTES or len(chunk) >= CHUNK_ITEMS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def worth_workers(items: list[Item]) -> bool:
    """Whether ``items`` are enough work to spread over worker processes."""
    if len(items) < 2:
        return False
    files = [item for item in items if item.path is not None and item.messages is None]
    if files and len(files) == len(items):
        return sum(item.size or 0 for item in files) >= LOCAL_BYTES
    return len(items) >= LOCAL_ITEMS


def part_share(workers: int | None, client: Any) -> int | None:
    """How many workers share the parts of a large file (:mod:`turnfold.corpus.parts`): every
    worker of this machine, every thread of a Dask cluster (at least two); None when one
    worker reads every file whole."""
    if client is not None:
        return workers or max(2, _dask_threads(client))
    count = workers or default_workers()
    return count if count >= 2 else None


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _preload() -> list[str]:
    """The modules the forkserver imports before it forks any worker: the corpus, every format
    module (detection asks them all) and, unless prices are kept already, the price table. A
    worker then forks with them instead of importing them itself, a third of a second each,
    paid once per kernel rather than once per worker and scan."""
    from turnfold.formats import _MODULE_NAMES
    from turnfold.kept_prices import price_book

    # genai-prices prices the rows (U-2): a fifth of a second to import, before any worker
    # starts. Prices kept by earlier processes (kept_prices, each for the days it holds for)
    # price most rows without it, and a worker that meets another model imports it then. Its
    # table (``genai_prices.data``) is imported at the first price a process asks the table
    # for, and platformdirs where turnfold keeps prices: each worker imported them on its
    # first chunk, a few hundredths of a second each.
    book = price_book()
    prices = ["genai_prices", "genai_prices.data"] if book is None or book.empty else []
    return ["__main__", "turnfold.corpus", *prices, "platformdirs", *_MODULE_NAMES.values()]


def _pool(workers: int, method: str) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(method)
    if method == "forkserver":
        # Only heeded when the forkserver starts (once per process): later scans reuse it warm.
        context.set_forkserver_preload(_preload())
    return ProcessPoolExecutor(workers, mp_context=context)


def _forked_pool(workers: int) -> ProcessPoolExecutor:
    """A pool whose workers are forked from this process, which has one thread, now.

    A pool of the ``fork`` method forks all its workers in the thread of its first submission,
    before it starts threads of its own, so no lock another thread holds is inherited locked.
    This process first imports what the forkserver would (a tenth of a second, once), so the
    workers of this scan and of every later one start with it.
    """
    import importlib

    from turnfold.gcpause import collector_paused

    # The collector would walk every object imported so far (pandas', pyarrow's): most of
    # the time the imports take.
    with collector_paused():
        for module in _preload():
            if module != "__main__":  # this process's own: not imported again
                importlib.import_module(module)
    pool = _pool(workers, "fork")
    pool.submit(os.getpid)  # forks every worker, in this thread
    return pool


class _Starter:
    """Starts a pool's workers: forked here and now from a process with one thread, else from
    a forkserver (or spawned where there is none) on a thread of their own, so this process can
    do the first chunks itself meanwhile: such a worker is ready only once the forkserver has
    started and imported what it needs (a third of a second or more), and the scanning process,
    which has, would otherwise wait idle for it. A scan that ends first does not wait for them
    at all."""

    def __init__(self, workers: int) -> None:
        import multiprocessing
        import threading

        from turnfold.forking import can_fork

        self.ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread: threading.Thread | None = None
        if can_fork():
            self.pool = _forked_pool(workers)
            self.ready.set()
            return
        # A kernel has threads (ZeroMQ's, the widget's): a child forked from it can deadlock on
        # a lock one of them held.
        methods = multiprocessing.get_all_start_methods()
        self.pool = _pool(workers, "forkserver" if "forkserver" in methods else "spawn")
        self._thread = threading.Thread(target=self._start, args=(workers,), daemon=True,
                                        name="turnfold-workers")  # fmt: skip
        self._thread.start()

    def _start(self, workers: int) -> None:
        try:
            # One trivial task per worker: the pool starts a process for each task it cannot
            # give to an idle one, so all of them are up, and running, when these return.
            for future in [self.pool.submit(os.getpid) for _ in range(workers)]:
                future.result()
        except BaseException as exc:  # the pool broke, or was shut down first
            self._failure = exc
        finally:
            self.ready.set()

    def wait(self) -> ProcessPoolExecutor:
        """The pool, once its workers are up."""
        if self._thread is not None:
            self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self.pool

    def shutdown(self) -> None:
        self.pool.shutdown(wait=self.ready.is_set(), cancel_futures=True)


def ordered_map(
    func: Callable[[list[Item]], list[R]],
    items: Iterable[Item],
    *,
    workers: int | None,
    client: Any = None,
    parallel: bool = True,
) -> Iterator[R]:
    """``func`` over chunks of ``items``, one result per item, in the order of ``items``.

    ``items`` may be a generator (the rows of a Parquet file, read batch by batch): at most a
    window of chunks is ever materialised, besides the chunks done here while the workers
    start. ``parallel=False`` (too little work, see :func:`worth_workers`) keeps the work in
    this process unless a Dask ``client`` is given.
    """
    if client is not None:
        yield from _windowed(func, chunks(items), client, _dask_window(client))
        return
    count = default_workers() if workers is None else max(1, workers)
    if count == 1 or not parallel:
        for chunk in chunks(items):
            yield from func(chunk)
        return
    starter = _Starter(count)
    try:
        stream = chunks(items)
        for chunk in stream:
            if starter.ready.is_set() or not _small(chunk):
                pending: deque[Any] = deque([starter.wait().submit(func, chunk)])
                yield from _windowed(func, stream, starter.pool, count * WINDOW_PER_WORKER,
                                     pending)  # fmt: skip
                return
            yield from func(chunk)  # the workers are still starting
    finally:
        starter.shutdown()


def spread(
    func: Callable[[list[Item]], list[R]], items: list[Item], *, workers: int | None,
    parallel: bool = True,
) -> Iterator[tuple[int, R]]:  # fmt: skip
    """``func`` over chunks of ``items``, as ``(index in items, result)``, in the order the
    work ends, for a consumer that puts the results in place itself.

    The largest files go to the workers first, so that no large one is left running alone at
    the end while the other workers idle; the smallest are done here while the workers start,
    one file at a time: the rest of a chunk begun here goes to the workers once they are up,
    which otherwise waited idle until this process ended the chunk (a few hundredths of a
    second of every core).
    """
    count = default_workers() if workers is None else max(1, workers)
    if count == 1 or not parallel:
        done = 0
        for chunk in chunks(items):
            for result in func(chunk):
                yield done, result
                done += 1
        return
    from concurrent.futures import FIRST_COMPLETED, wait

    largest = sorted(range(len(items)), key=lambda i: items[i].size or 0, reverse=True)
    planned = deque(_index_chunks(items, largest))
    starter = _Starter(count)
    try:
        while planned and not starter.ready.is_set():
            if not _small([items[i] for i in planned[-1]]):
                break
            indices = planned.pop()
            for done, index in enumerate(indices):
                if done and starter.ready.is_set():
                    planned.append(indices[done:])
                    break
                yield index, func([items[index]])[0]
        if not planned:
            return
        pool = starter.wait()
        running: dict[Future[list[R]], list[int]] = {}
        while planned or running:
            while planned and len(running) < count * WINDOW_PER_WORKER:
                indices = planned.popleft()
                running[pool.submit(func, [items[i] for i in indices])] = indices
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                yield from zip(running.pop(future), future.result(), strict=True)
    finally:
        starter.shutdown()


def _index_chunks(items: list[Item], order: list[int]) -> Iterator[list[int]]:
    """The indices of ``order`` in chunks, cut as :func:`chunks` cuts items."""
    chunk: list[int] = []
    size = 0
    for index in order:
        chunk.append(index)
        size += items[index].size or 0
        if size >= CHUNK_BYTES or len(chunk) >= CHUNK_ITEMS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _dask_window(client: Any) -> int:
    return max(2, _dask_threads(client) * WINDOW_PER_WORKER)


def _dask_threads(client: Any) -> int:
    """The threads of a Dask cluster's workers."""
    try:
        return int(sum(client.nthreads().values()))
    except Exception:  # an older or remote client: a modest count still overlaps the work
        return 2


def _windowed(
    func: Callable[[list[Item]], list[R]],
    stream: Iterator[list[Item]],
    executor: Any,
    window: int,
    pending: deque[Any] | None = None,
) -> Iterator[R]:
    """Submit chunks while fewer than ``window`` are pending; yield results in order.

    ``pending`` holds the futures (of the pool or of Dask) already under way, in order."""
    from concurrent.futures import ProcessPoolExecutor

    pending = deque() if pending is None else pending
    dask = not isinstance(executor, ProcessPoolExecutor)
    try:
        for chunk in stream:
            if dask:
                pending.append(executor.submit(func, chunk, pure=False))
            else:
                pending.append(executor.submit(func, chunk))
            while len(pending) >= window:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def _small(chunk: list[Item]) -> bool:
    return sum(item.size or 0 for item in chunk) <= HERE_BYTES
