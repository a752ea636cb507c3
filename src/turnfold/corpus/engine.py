"""Where the per-item work runs (spec C-5): here, in worker processes, or on a Dask cluster.

Every engine maps a picklable function over chunks of items and hands the results back in the
order of the items, with a bounded number of chunks in flight, so memory stays bounded however
many items there are, and a consumer that stops early (a search at its limit) stops the work.
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


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Not fork: a kernel has threads (ZeroMQ, the widget's), and forking a threaded process can
    # deadlock the child. forkserver starts workers from a clean process where it exists.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))


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
    window of chunks is ever materialised. ``parallel=False`` (too little work, see
    :func:`worth_workers`) keeps the work in this process unless a Dask ``client`` is given.
    """
    if client is not None:
        yield from _windowed(func, items, client, _dask_window(client))
        return
    count = default_workers() if workers is None else max(1, workers)
    if count == 1 or not parallel:
        for chunk in chunks(items):
            yield from func(chunk)
        return
    pool = _pool(count)
    try:
        yield from _windowed(func, items, pool, count * WINDOW_PER_WORKER)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _dask_window(client: Any) -> int:
    try:
        threads = int(sum(client.nthreads().values()))
    except Exception:  # an older or remote client: a modest window still overlaps the work
        threads = 2
    return max(2, threads * WINDOW_PER_WORKER)


def _windowed(
    func: Callable[[list[Item]], list[R]], items: Iterable[Item], executor: Any, window: int
) -> Iterator[R]:
    """Submit chunks while fewer than ``window`` are pending; yield results in order."""
    from concurrent.futures import ProcessPoolExecutor

    pending: deque[Future[list[R]]] = deque()
    dask = not isinstance(executor, ProcessPoolExecutor)
    try:
        for chunk in chunks(items):
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
