"""A bound on a test that waits on a Dask cluster, and steps taken while it waits.

A scan on a cluster without workers waits for one, as it should (an adaptive cluster adds
them), so a test whose cluster lost its workers would wait for ever. :class:`Meanwhile` takes
a test's steps on a thread of its own while the main thread waits (a scan), each once its
condition holds, and bounds the whole: past its seconds, or when a step fails, the main thread
is interrupted (KeyboardInterrupt, as Ctrl-C: a scan interrupted cancels its tasks on the
cluster) and the test fails, naming what did not happen.
"""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Callable
from types import TracebackType

import pytest

#: How long a test may wait on its cluster: several times what the slowest of these takes on
#: a busy machine (each worker a fresh interpreter, 10 s or more to start there).
DEADLINE = 600.0

#: A step: what it is (named when it is not taken), when it is taken, what it does.
Step = tuple[str, Callable[[], bool], Callable[[], object]]


class Meanwhile:
    """``steps`` taken in turn on a thread of their own while the ``with`` body waits, within
    ``seconds`` in all; a step's error, or the deadline, interrupts the body and fails the
    test. A body that ends first leaves the steps not yet taken untaken."""

    def __init__(self, *steps: Step, seconds: float = DEADLINE) -> None:
        self.steps = steps
        self.seconds = seconds
        self._failure: str | None = None
        self._over = threading.Event()
        self._lock = threading.Lock()  # the body's end and an interrupt of it: one or the other
        self._thread = threading.Thread(target=self._run, name="meanwhile", daemon=True)
        self._sigint: Callable[..., object] | int | None = None

    def __enter__(self) -> Meanwhile:
        assert threading.current_thread() is threading.main_thread(), "interrupts the main thread"
        # An interrupt raises KeyboardInterrupt only where SIGINT has Python's handler; a test
        # runner's worker may have set another.
        self._sigint = signal.signal(signal.SIGINT, signal.default_int_handler)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        with self._lock:
            self._over.set()
        self._thread.join(timeout=10)
        signal.signal(signal.SIGINT, self._sigint)
        if self._failure is not None:
            pytest.fail(self._failure, pytrace=False)
        return False

    def _run(self) -> None:
        deadline = time.monotonic() + self.seconds
        try:
            for what, condition, action in self.steps:
                while not condition():
                    if self._over.wait(0.05):
                        return
                    if time.monotonic() > deadline:
                        self._interrupt(f"not within {self.seconds:g} s: {what}")
                        return
                action()
        except Exception as exc:  # a step that failed: its error fails the test
            self._interrupt(f"{what}: {exc!r}")
            return
        if not self._over.wait(max(0.0, deadline - time.monotonic())):
            self._interrupt(f"the wait on the Dask cluster went on past {self.seconds:g} s")

    def _interrupt(self, failure: str) -> None:
        with self._lock:
            if self._over.is_set():
                return
            self._failure = failure
            _thread.interrupt_main()
