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

A file whose reading kills its worker (a crash in a C extension, the out-of-memory killer) stops
no scan (C-7): the chunks lost with that worker are read again in a worker of their own, whole,
and the chunk that kills it again one item at a time, so the item that kills its worker is found
and given to the caller's ``died``; every other item is read. The work goes on in fresh workers.

On a Dask cluster the work waits for workers as Dask does (a cluster may add them), but not
without a word: a cluster without workers for a while is named in a warning, and an interrupt
cancels the work's tasks there.
"""

from __future__ import annotations

import itertools
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from turnfold.corpus.discover import Item
from turnfold.userwarn import warn_at_caller

if TYPE_CHECKING:  # imported where workers start: a scan done in this process needs neither
    from concurrent.futures import Future, ProcessPoolExecutor

R = TypeVar("R")
#: What a caller makes of an item whose reading killed its worker process (C-7): given the
#: item and why it gave nothing (naming its file), the result the item's work would have given.
Died = Callable[[Item, str], R]


class Deaths(Generic[R]):
    """A ``died`` (:data:`Died`) that makes a file whose reading killed a worker one result
    of a file that could not be read (C-7), read whole or in parts: ``unreadable(item, why)``
    for an item that is a whole file; for a part of one, ``nothing()``, its file noted, whose
    error :meth:`of` tells once the file's parts are gathered (the rows of its other parts,
    numbered on past a part that gave none, would open other runs than theirs)."""

    def __init__(self, unreadable: Died[R], nothing: Callable[[], R]) -> None:
        self.unreadable = unreadable
        self._nothing = nothing
        self._killed: dict[str, str] = {}  # the files a part of which killed its worker: why

    def __call__(self, item: Item, error: str) -> R:
        if item.part is None:
            return self.unreadable(item, error)
        self._killed.setdefault(item.key, error)
        return self._nothing()

    def of(self, item: Item) -> str | None:
        """Why a part of ``item``'s file killed its worker, if one did (told once)."""
        return self._killed.pop(item.key, None)


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
        self._workers = workers
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

    def renew(self) -> ProcessPoolExecutor:
        """A fresh pool in place of the one a dying worker broke (C-7), its workers up."""
        self.shutdown()
        self.pool = _fresh_pool(self._workers)
        return self.pool


def _fresh_pool(workers: int) -> ProcessPoolExecutor:
    """A pool whose workers are up when it is returned: forked from this process when it has
    one thread, else from a forkserver (spawned where there is none)."""
    import multiprocessing

    from turnfold.forking import can_fork

    if can_fork():
        return _forked_pool(workers)
    methods = multiprocessing.get_all_start_methods()
    return _pool(workers, "forkserver" if "forkserver" in methods else "spawn")


class ReaderDied(RuntimeError):
    """An item's reading killed its worker process, and the caller gave no ``died`` (C-7)."""


class _Died(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Lone:
    """A worker process of its own, for work that may kill it (C-7): its death breaks no other
    work, so it tells which work died, and how; the next work then gets a fresh one."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def run(self, func: Callable[[list[Item]], list[R]], chunk: list[Item]) -> list[R]:
        """``func(chunk)`` in the worker; :class:`_Died` when the worker dies doing it."""
        from concurrent.futures.process import BrokenProcessPool

        if self._pool is None:
            self._pool = _fresh_pool(1)
        pool = self._pool
        future = pool.submit(func, chunk)
        # Its one worker, whose end says how it died: the pool's exception does not.
        processes = list(pool._processes.values())
        try:
            return future.result()
        except BrokenProcessPool:
            self._pool = None
            pool.shutdown(wait=True)  # the worker reaped, its exit code known
            raise _Died(_how_it_died(processes)) from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _how_it_died(processes: list[Any]) -> str:
    """How a worker process ended, as its exit code says (minus a signal's number)."""
    import signal

    codes = [process.exitcode for process in processes if process.exitcode is not None]
    if not codes:
        return "its reader's process died"
    code = codes[0]
    if code >= 0:
        return f"its reader's process died (exit code {code})"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"its reader's process died (signal {-code})"
    return f"its reader's process died (signal {-code}, {name})"


def _buried(died: Died[R] | None, item: Item, why: str) -> R:
    """The result of an item whose reading killed its worker: ``died``'s, naming its file."""
    said = f"{item.path or item.key}: {why}"
    if died is None:
        raise ReaderDied(said)
    return died(item, said)


def _rescued(
    func: Callable[[list[Item]], list[R]], chunk: list[Item], died: Died[R] | None
) -> list[R]:
    """The results of a chunk lost with a worker that died (C-7): it is read again in a worker
    of its own, whole (it may only have been in flight beside the work that killed), and when
    that worker dies too, one item at a time, so every item but the one that kills its worker
    is read."""
    lone = _Lone()
    try:
        try:
            return lone.run(func, chunk)
        except _Died as death:
            if len(chunk) == 1:
                return [_buried(died, chunk[0], death.why)]
        results: list[R] = []
        for item in chunk:
            try:
                results += lone.run(func, [item])
            except _Died as death:
                results.append(_buried(died, item, death.why))
        return results
    finally:
        lone.close()


def isolated(
    func: Callable[[list[Item]], list[R]], items: list[Item], *, client: Any = None,
    died: Died[R] | None = None,
) -> list[R]:  # fmt: skip
    """``func(items)`` away from this process: in a worker process of its own (on the Dask
    cluster of ``client``), read as a chunk lost with a dying worker is read again
    (:func:`_rescued`), so an item whose reading kills that worker gives what ``died`` makes of
    it (C-7) and this process, a kernel say, never reads it. For work that follows a map's (a
    search's part read again to its end), whose pool is busy or gone."""
    if client is not None:
        return _rescued_on_dask(_DaskWait(client), func, items, died)
    return _rescued(func, items, died)


def _outcome(
    future: Future[list[R]], func: Callable[[list[Item]], list[R]], chunk: list[Item],
    died: Died[R] | None,
) -> list[R]:  # fmt: skip
    """The results of a chunk of a pool that broke: its own, if it ended before; else read
    again (:func:`_rescued`)."""
    from concurrent.futures.process import BrokenProcessPool

    failure = future.exception()
    if failure is None:
        return future.result()
    if isinstance(failure, BrokenProcessPool):
        return _rescued(func, chunk, died)
    raise failure


def _rescued_in_flight(
    starter: _Starter,
    func: Callable[[list[Item]], list[R]],
    in_flight: Iterable[tuple[Future[list[R]], list[Item]]],
    died: Died[R] | None,
) -> Iterator[tuple[Future[list[R]], list[R]]]:
    """Each chunk that was in flight in the pool a dying worker broke, every one of them lost
    with it (C-7), as its future and its results (:func:`_outcome`), in the order of
    ``in_flight``; once all are given, the work goes on in a fresh pool, ``starter.pool``."""
    starter.shutdown()
    for future, chunk in in_flight:
        yield future, _outcome(future, func, chunk, died)
    starter.renew()


def _submitted(
    pool: ProcessPoolExecutor, func: Callable[[list[Item]], list[R]], chunk: list[Item]
) -> Future[list[R]]:
    """``func(chunk)`` submitted to ``pool``; a pool a dying worker broke already gives a
    future that says so, as the chunks in flight with it do."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    try:
        return pool.submit(func, chunk)
    except BrokenProcessPool as exc:
        lost: Future[list[R]] = Future()
        lost.set_exception(exc)
        return lost


def ordered_map(
    func: Callable[[list[Item]], list[R]],
    items: Iterable[Item],
    *,
    workers: int | None,
    client: Any = None,
    parallel: bool = True,
    died: Died[R] | None = None,
) -> Iterator[R]:
    """``func`` over chunks of ``items``, one result per item, in the order of ``items``.

    ``items`` may be a generator (the rows of a Parquet file, read batch by batch): at most a
    window of chunks is ever materialised, besides the chunks done here while the workers
    start. ``parallel=False`` (too little work, see :func:`worth_workers`) keeps the work in
    this process unless a Dask ``client`` is given. An item whose reading kills its worker
    gives what ``died`` makes of it (without ``died``, :class:`ReaderDied` names its file).
    """
    if client is not None:
        yield from _on_dask(func, chunks(items), client, _dask_window(client), died)
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
                work = itertools.chain([chunk], stream)
                yield from _in_order(func, work, starter, count * WINDOW_PER_WORKER, died)
                return
            yield from func(chunk)  # the workers are still starting
    finally:
        starter.shutdown()


def spread(
    func: Callable[[list[Item]], list[R]], items: list[Item], *, workers: int | None,
    parallel: bool = True, died: Died[R] | None = None,
) -> Iterator[tuple[int, R]]:  # fmt: skip
    """``func`` over chunks of ``items``, as ``(index in items, result)``, in the order the
    work ends, for a consumer that puts the results in place itself.

    The largest files go to the workers first, so that no large one is left running alone at
    the end while the other workers idle; the smallest are done here while the workers start,
    one file at a time: the rest of a chunk begun here goes to the workers once they are up,
    which otherwise waited idle until this process ended the chunk (a few hundredths of a
    second of every core). An item whose reading kills its worker gives what ``died`` makes
    of it, as in :func:`ordered_map`.
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
    from concurrent.futures.process import BrokenProcessPool

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
        starter.wait()
        running: dict[Future[list[R]], list[int]] = {}
        while planned or running:
            while planned and len(running) < count * WINDOW_PER_WORKER:
                indices = planned.popleft()
                running[_submitted(starter.pool, func, [items[i] for i in indices])] = indices
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            if any(isinstance(future.exception(), BrokenProcessPool) for future in finished):
                lost = ((future, [items[i] for i in running[future]]) for future in running)
                for future, results in _rescued_in_flight(starter, func, lost, died):
                    yield from zip(running[future], results, strict=True)
                running.clear()
                continue
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


def _in_order(
    func: Callable[[list[Item]], list[R]],
    stream: Iterator[list[Item]],
    starter: _Starter,
    window: int,
    died: Died[R] | None,
) -> Iterator[R]:
    """Submit chunks to the starter's pool while fewer than ``window`` are pending; yield
    results in order. A worker that dies breaks its pool, and every chunk pending in it is
    lost: each is rescued (:func:`_rescued_in_flight`), and a fresh pool reads on (C-7)."""
    from concurrent.futures.process import BrokenProcessPool

    starter.wait()
    pending: deque[tuple[Future[list[R]], list[Item]]] = deque()
    try:
        while True:
            for chunk in itertools.islice(stream, window - len(pending)):
                pending.append((_submitted(starter.pool, func, chunk), chunk))
            if not pending:
                return
            try:
                results = pending[0][0].result()
            except BrokenProcessPool:
                for _, rescued in _rescued_in_flight(starter, func, pending, died):
                    yield from rescued
                pending.clear()
                continue
            pending.popleft()
            yield from results
    finally:
        for future, _ in pending:
            future.cancel()


#: How long a scan waits on a Dask result before it looks at whether the cluster has workers
#: (seconds): a look is one round trip to the scheduler.
DASK_LOOK_SECONDS = 2.0
#: A cluster seen without a worker this long (seconds) is named in a warning: long enough for
#: a worker to restart after it died, or for a cluster that adds workers (an adaptive one) to
#: start one.
DASK_NO_WORKERS_SECONDS = 30.0


class _DaskWait:
    """One map's waits for results from a Dask cluster.

    Dask keeps a task until a worker can run it, rightly: a cluster that adds workers (an
    adaptive one) starts one for it. A cluster that lost every worker, or never had one,
    keeps it too, and a scan would wait for ever without a word; so while a result is awaited
    the cluster is looked at, and one without workers for :data:`DASK_NO_WORKERS_SECONDS` is
    named in a warning, once. The scan still waits: an interrupt (KeyboardInterrupt) stops it,
    and its tasks are cancelled on the cluster (:func:`_cancelled`)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._alone_since: float | None = None  # when the cluster was first seen without workers
        self._warned = False

    def result(self, future: Any) -> Any:
        """``future``'s result (or its error), however long it takes."""
        from distributed import TimeoutError as NotYet

        self._alone_since = None  # counted within a wait: a result had, a worker had run it
        while True:
            try:
                return future.result(timeout=DASK_LOOK_SECONDS)
            except NotYet:
                if future.done():  # the task's own TimeoutError, or it ended just now
                    return future.result()
            self._look()

    def _look(self) -> None:
        from distributed import TimeoutError as NotYet

        if self._warned:
            return
        try:
            workers = len(self.client.nthreads())
        except (OSError, NotYet):
            # No news of its workers: the scheduler did not answer this time. A client that
            # lost its scheduler for good cancels its futures itself, which ends the wait.
            return
        if workers:
            self._alone_since = None
            return
        now = time.monotonic()
        if self._alone_since is None:
            self._alone_since = now
        elif now - self._alone_since >= DASK_NO_WORKERS_SECONDS:
            self._warned = True
            warn_at_caller(
                f"the Dask cluster at {_scheduler_address(self.client)} has had no workers for "
                f"{DASK_NO_WORKERS_SECONDS:g} s: the scan waits for one (a cluster that adds "
                "workers goes on by itself; interrupt the scan to stop it)"
            )


def _scheduler_address(client: Any) -> str:
    try:
        return str(client.scheduler.address)
    except AttributeError:  # a client not connected (yet): its repr names what it knows
        return repr(client)


def _cancelled(client: Any, futures: list[Any]) -> None:
    """Cancel ``futures`` on the cluster, in one message: a scan stopped (interrupted, or its
    consumer done early) leaves no task of its own queued there, whose references an
    interrupt's traceback would otherwise keep alive."""
    if futures:
        client.cancel(futures)


def _on_dask(
    func: Callable[[list[Item]], list[R]],
    stream: Iterator[list[Item]],
    client: Any,
    window: int,
    died: Died[R] | None,
) -> Iterator[R]:
    """Submit chunks to a Dask cluster while fewer than ``window`` are pending; yield results
    in order. A chunk Dask gave up on, its workers dying (``KilledWorker``), is read again an
    item a task (:func:`_rescued_on_dask`). A cluster without workers is warned of while the
    scan waits (:class:`_DaskWait`); whatever stops the scan cancels its pending tasks."""
    waiting = _DaskWait(client)
    pending: deque[tuple[Any, list[Item]]] = deque()
    try:
        for chunk in stream:
            pending.append((client.submit(func, chunk, pure=False), chunk))
            while len(pending) >= window:
                yield from _dask_outcome(waiting, func, pending, died)
        while pending:
            yield from _dask_outcome(waiting, func, pending, died)
    finally:
        _cancelled(client, [future for future, _ in pending])


def _dask_outcome(
    waiting: _DaskWait, func: Callable[[list[Item]], list[R]],
    pending: deque[tuple[Any, list[Item]]], died: Died[R] | None,
) -> list[R]:  # fmt: skip
    """The results of the first of ``pending``, taken off it once they are had (until then
    an interrupt cancels it with the rest)."""
    future, chunk = pending[0]
    try:
        results: list[R] = waiting.result(future)
    except Exception as exc:
        from distributed import KilledWorker  # only a Dask client's scan gets here

        if not isinstance(exc, KilledWorker):
            raise
        results = _rescued_on_dask(waiting, func, chunk, died)
    pending.popleft()
    return results


#: Why an item Dask gave up on gave nothing: Dask says no exit code.
DASK_DIED = "its reader's process died (every Dask worker that read it died: KilledWorker)"


def _rescued_on_dask(
    waiting: _DaskWait, func: Callable[[list[Item]], list[R]], chunk: list[Item],
    died: Died[R] | None,
) -> list[R]:  # fmt: skip
    """The results of a chunk Dask gave up on (C-7): each item a task of its own; an item
    given up on too runs again alone among them (a task beside it on a dying worker is given
    up on with it), and given up on again, it is the one that kills its worker."""
    from distributed import KilledWorker

    client = waiting.client
    futures = [client.submit(func, [item], pure=False) for item in chunk]
    results: list[list[R] | None] = []
    try:
        for future in futures:
            try:
                results.append(waiting.result(future))
            except KilledWorker:
                results.append(None)
    except BaseException:
        _cancelled(client, futures[len(results) :])
        raise
    rescued: list[R] = []
    for item, result in zip(chunk, results, strict=True):
        if result is None:
            alone = client.submit(func, [item], pure=False)
            try:
                result = waiting.result(alone)
            except KilledWorker:
                result = [_buried(died, item, DASK_DIED)]
            except BaseException:
                _cancelled(client, [alone])
                raise
        rescued += result
    return rescued


def _small(chunk: list[Item]) -> bool:
    return sum(item.size or 0 for item in chunk) <= HERE_BYTES
