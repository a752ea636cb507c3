"""Running a framework's coroutine or blocking call in a test: on a thread of its own.

``asyncio.run`` (and the frameworks' ``run_sync``) refuse to start beside a running event loop,
and some test before may leave one running on the main thread (the suite runs in one process:
the browser tests' Playwright, the Inspect tests); a fresh thread has none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` on a fresh thread's event loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def on_thread(work: Callable[[], T]) -> T:
    """``work()`` on a thread of its own."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work).result()
