"""``turnfold.follow``: an agent framework's run shown live while its events stream (spec A-2).

A framework already gives its run as a stream of events (LangGraph ``stream``, the Agents SDK's
``stream_events()``, pydantic-ai's ``agent.iter()``, the Claude Agent SDK's ``query()``…).
:func:`follow` wraps that stream: it yields every event unchanged, and maps each one into a
:class:`~turnfold.model.Transcript` as it passes, through the framework's ``Follower``
(:mod:`turnfold.formats.frameworks`), so a :class:`~turnfold.widget.TranscriptWidget` shown in
the cell from the first event folds the run while it happens.

>>> from turnfold.formats.frameworks.openai_agents import NAME
>>> run = follow([], format=NAME, display=False)
>>> list(run), run.transcript.entries
([], [])

The stream stays the user's: an event turnfold cannot map is passed on all the same and said
in a warning of the transcript (never silently, spec X-2), and nothing the follower does can
break the run. Both ``for`` and ``async for`` work, so a notebook can ``await`` its way through
an async framework under Jupyter's running event loop, and the follower is locked, so events
may come from a worker thread (spec L-5). The widget coalesces its updates as it always does,
so a fast stream never floods the notebook's connection.

A run can die without its stream ever being closed: a ``KeyboardInterrupt`` raised in a task of
the framework's own (the Agents SDK runs each tool in one) leaves the event loop at once, and the
cell's task that iterated the stream is never stepped again. So in IPython a followed run whose
cell is over is ended at that cell's end, shown stopped (P-7), unless it is going on in the
background (:meth:`Follow._cell_ended`). The tasks the interrupt left pending (the cell's own,
the run's) are stopped there too (:meth:`Follow._stop_stranded`): the next cell that awaits
would step them, and get that interrupt again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from turnfold.formats.frameworks import is_interrupt
from turnfold.model import (
    ACTIVE_STATUSES,
    AbortMarker,
    AssistantError,
    LoadWarning,
    Transcript,
)

if TYPE_CHECKING:
    from turnfold.widget import TranscriptWidget

__all__ = ["Follow", "follow"]

_LOG = logging.getLogger(__name__)

#: Events kept while none of them shows which framework sent them (Strands' first events are
#: plain dicts); past this many, following stops and says so rather than hold the stream.
_UNDECIDED_LIMIT = 64
#: Events a follower fails on before following stops: each is warned of and the run followed
#: on, but a follower that fails at every event would bury the run under its warnings.
_FAILURE_LIMIT = 20
#: How long the tasks a Ctrl-C left stranded may take to stop at the cell's end (seconds), and
#: how many times the interrupt may be raised again meanwhile, before they are left as they
#: are (and the transcript says so): a task that will not stop must not hold the shell.
_STOP_SECONDS = 10.0
_STOP_RAISES = 20


class Follow:
    """A framework's event stream, passed through and followed into :attr:`transcript`.

    Made by :func:`follow`; iterate it with ``for`` or ``async for`` (as the stream it wraps
    allows). :attr:`widget` is the live view, shown in the cell at the first event when
    ``display`` is on and a notebook kernel runs.
    """

    def __init__(
        self,
        events: Any,
        *,
        format: str | None = None,
        transcript: Transcript | None = None,
        display: bool = True,
        agent: Any = None,
    ) -> None:
        self.events = events
        self.transcript = transcript if transcript is not None else Transcript()
        #: The agent the run was made with, for what its events leave out (see :func:`follow`).
        self.agent = agent
        self._adapter: ModuleType | None = None
        if format is not None:
            from turnfold.formats.frameworks import adapter_named

            self._adapter = adapter_named(format)
        #: The run object whose events are followed, when given one (see :func:`follow`).
        self.run: Any = None
        if not hasattr(events, "__iter__") and not hasattr(events, "__aiter__"):
            self._open_run(events)
        elif type(events).__module__ not in ("builtins", "_collections_abc"):
            self._stream_object(events)
        else:
            self._generator(events)
        self._follower: Any = None
        self._undecided: list[Any] = []
        self._gave_up = False
        self._failed = False
        self._failures = 0
        self._ended = False
        self._display = display
        self._widget: TranscriptWidget | None = None
        self._lock = threading.RLock()
        #: What steps the stream (see :meth:`_watch_cells`), and what stops watching cells.
        self._driver: asyncio.Task[Any] | threading.Thread | None = None
        self._unwatch: Any = None
        #: The IPython shell whose cells are watched (where the interrupt is shown).
        self._shell: Any = None
        #: Whether the stream is being stepped (asked for its next event, not yet given it):
        #: between two events its user holds it, and may step it again in a later cell.
        self._stepping = False
        #: The interrupt that left the cell's task stepping the stream, once that task is
        #: cancelled for it (:meth:`_stop_stranded`): what the cancel is turned back into.
        self._interrupt: BaseException | None = None

    def _open_run(self, run: Any) -> None:
        """A run object that streams (the Agents SDK's ``RunResultStreaming``): its framework's
        ``events_of(run)`` gives its events, and the follower is told the run itself first
        (``begin(run)``), so what only the run holds (the input) is shown too."""
        from turnfold.formats.frameworks import adapter_of

        adapter = self._adapter or adapter_of(run)
        events_of = getattr(adapter, "events_of", None)
        events = events_of(run) if events_of is not None else None
        if events is None:
            raise TypeError(
                f"{type(run).__name__} is not an event stream: pass the events the framework "
                "streams (see turnfold.follow)"
            )
        self._adapter, self.run, self.events = adapter, run, events

    def _stream_object(self, events: Any) -> None:
        """A framework's own stream object (pydantic-ai's ``AgentRunEvents``) is the run too:
        its follower is told it first (``begin``), for what no event carries (the prompt)."""
        from turnfold.formats.frameworks import adapter_of

        adapter = self._adapter or adapter_of(events)
        if adapter is not None and hasattr(adapter.Follower, "begin"):
            self._adapter, self.run = adapter, events

    def _generator(self, events: Any) -> None:
        """A framework's own generator (Agno's ``run(stream=True)``) is known by the module of
        its code; where its framework reads the run it builds off it (``run_of_generator``),
        that run is told to the follower first (``begin``), for what no event carries."""
        frame = getattr(events, "gi_frame", None) or getattr(events, "ag_frame", None)
        if frame is None:
            return
        from turnfold.formats.frameworks import adapter_of_module

        adapter = self._adapter or adapter_of_module(frame.f_globals.get("__name__"))
        run_of = getattr(adapter, "run_of_generator", None)
        run = run_of(events) if run_of is not None else None
        if run is not None:
            self._adapter, self.run = adapter, run

    # --- the view ----------------------------------------------------------------------------

    @property
    def widget(self) -> TranscriptWidget:
        """The live :class:`~turnfold.widget.TranscriptWidget` of :attr:`transcript` (made on
        first use when it was not shown)."""
        with self._lock:
            if self._widget is None:
                from turnfold.widget import TranscriptWidget

                # Made running (not told so after): the first view is built as the run is, and
                # no second build follows at once on the update timer, beside the display.
                self._widget = TranscriptWidget(self.transcript, running=not self._ended)
            return self._widget

    def _show(self) -> None:
        if not self._display or self._widget is not None:
            return
        from turnfold.display import kernel_shell

        if kernel_shell() is None:
            return  # a script or a terminal: nothing to draw in
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """A ``Follow`` left as a cell's last value shows its widget."""
        return self.widget._repr_mimebundle_(**kwargs)

    # --- the stream --------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Any]:
        if not hasattr(self.events, "__iter__"):
            raise TypeError(
                f"{type(self.events).__name__} is an async stream: use `async for` over "
                "turnfold.follow(...) (in a notebook cell, top-level `async for` works)"
            )
        return self._sync()

    def __aiter__(self) -> AsyncIterator[Any]:
        if not hasattr(self.events, "__aiter__"):
            if hasattr(self.events, "__iter__"):
                return self._async_over_sync()
            raise TypeError(f"{type(self.events).__name__} is not an event stream")
        return self._async()

    def _sync(self, driver: asyncio.Task[Any] | None = None) -> Iterator[Any]:
        self._watch_cells(driver or threading.current_thread())
        self._stepping = True
        try:
            for event in self.events:
                self.see(event)
                self._stepping = False
                yield event
                self._stepping = True
        except BaseException as exc:
            self._broke_off(exc)
            raise
        finally:
            self.end()

    async def _async(self) -> AsyncIterator[Any]:
        self._watch_cells(_current_task())
        self._stepping = True
        try:
            await self._read_run()
            async for event in self.events:
                self.see(event)
                self._stepping = False
                yield event
                self._stepping = True
        except BaseException as exc:
            self._broke_off(exc)
            if isinstance(exc, Exception):
                await self._read_end()
            if isinstance(exc, asyncio.CancelledError) and self._interrupt is not None:
                # The cancel is turnfold's, at the cell's end: the cell's code gets the user's
                # own interrupt where its stream stopped, as it would have, without the frames
                # of the framework's raising it again meanwhile. The shell showed it already:
                # not again if the cell lets it through (_shown_once).
                raise self._interrupt.with_traceback(None) from None
            raise
        else:
            await self._read_end()
        finally:
            self.end()

    async def _read_run(self) -> None:
        """What the run starts from that only an await reads, read on the loop that runs the
        stream before its first event: its framework's ``read_run_async(run)`` (LangGraph: a
        thread's history in an async checkpointer, whose sync read would wait on this very
        loop). The follower is told the run at the first event, as a sync stream's is."""
        read = getattr(self._adapter, "read_run_async", None)
        if self.run is None or read is None:
            return
        try:
            await read(self.run)
        except Exception as exc:  # the agent's run must go on whatever turnfold makes of it
            with self._lock:
                self._warn_of("could not read what the run starts from", exc)

    async def _read_end(self) -> None:
        """What the run's end needs that only an await reads, read on the loop that runs the
        stream once its events are over (an async session store may belong to that loop):
        its follower's ``read_end_async()`` (Google ADK: the session, from the runner's
        session service), before :meth:`end` closes the follower. Not after a cancel (the
        loop is leaving) nor when the user's loop left early (``aclose``, where an await
        may not be possible)."""
        read = getattr(self._follower, "read_end_async", None)
        if read is None or self._failed or self._ended:
            return
        try:
            await read()
        except Exception as exc:  # the agent's run must go on whatever turnfold makes of it
            with self._lock:
                self._warn_of("could not read how the run ended", exc)

    def _broke_off(self, exc: BaseException) -> None:
        """The stream raised ``exc``: the run's end says so in the transcript, as a session file
        records a failed turn (spec P-3) or an interrupted one (P-7), not as a run that just
        stopped; a follower that reads how its framework's run ended (``broke_off(exc)``,
        True when it said it) says it as a load of the run does. The user's loop leaving
        early (``break``) is no failure of the run."""
        with self._lock:
            if self._ended or self._said_by_follower(exc) or isinstance(exc, GeneratorExit):
                return
            if is_interrupt(exc):
                for call in self.transcript.tool_calls():
                    if call.status in ACTIVE_STATUSES:
                        self.transcript.update(call, status="cancelled")
                self.transcript.append(AbortMarker(reason="interrupted"))
            elif isinstance(exc, Exception):
                self.transcript.append(AssistantError(message=f"{type(exc).__name__}: {exc}"))

    def _said_by_follower(self, exc: BaseException) -> bool:
        if self._failed:
            return False
        try:
            if self._follower is None and getattr(self._adapter, "BREAKS_OFF_EARLY", False):
                # The run raised before its first event (smolagents: its first plan's model
                # call): its follower, told the run, still says how it ended, as a load does.
                self._start(None)
            said = getattr(self._follower, "broke_off", None)
            return said is not None and bool(said(exc))
        except Exception as error:  # the run's own exception goes on whatever turnfold makes of it
            self._warn_of("could not read how the run ended", error)
            return False

    async def _async_over_sync(self) -> AsyncIterator[Any]:
        for event in self._sync(_current_task()):
            yield event

    # --- the cell's end ----------------------------------------------------------------------

    def _watch_cells(self, driver: asyncio.Task[Any] | threading.Thread | None) -> None:
        """In IPython, check at each cell's end (``post_run_cell``) whether ``driver``, the
        task or thread that steps the stream, can still step it (:meth:`_cell_ended`); only
        while the run is followed, so a finished run costs a cell nothing."""
        ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
        shell = ipython() if ipython is not None else None
        events = getattr(shell, "events", None)
        if events is None or driver is None:
            return  # no cell ends outside IPython; a trio loop's tasks are not asyncio's
        with self._lock:
            if self._ended or self._unwatch is not None:
                return
            self._driver, self._shell = driver, shell
            events.register("post_run_cell", self._cell_ended)
            self._unwatch = lambda: _unregister(events, self._cell_ended)

    def _cell_ended(self, result: Any = None) -> None:
        """A cell ended while the run is followed: if its stream was being stepped and nothing
        can step it any more, the run is ended as a Ctrl-C ends it (shown stopped, P-7; the
        calls it cut off cancelled), and the widget stops running (which saves its view, N-1).

        Nothing can when the task that stepped it is done, or its loop closed, or it is the
        cell's own task (IPython runs a cell's top-level ``await`` as one ``run_cell_async``
        task): that cell is over, and the step it was waiting for was left unfinished by an
        exception that left the loop (a ``KeyboardInterrupt`` in a framework's task), never to
        be taken again. A stream its user holds between two events (``await anext(it)``, cell
        by cell) is no such stream: it goes on when stepped again. A thread that stepped it can
        no more once it is dead. A run iterated on a task of the user's (``create_task``) or on
        a thread of its own goes on in the background after its cell: it is checked again at
        the next cell's end. A sync stream stepped by the cell's own thread is closed with the
        loop that left it (the generator is dropped), so one still open there is held on
        purpose (``next(it)`` cell by cell), and left to its user."""
        with self._lock:
            if self._ended or not self._stepping or not self._driver_gone():
                return
            self._broke_off(KeyboardInterrupt())
        self.end()
        self._stop_stranded(getattr(result, "error_in_exec", None))

    def _stop_stranded(self, interrupt: Any) -> None:
        """The cell's task, left stepping the stream by ``interrupt`` (what ended the cell: a
        Ctrl-C raised in a task of the framework's, which left the loop at once), is cancelled,
        and IPython's loop run until the tasks the run left are done. Left pending, the next
        cell that awaits would step them and get that interrupt again: the Agents SDK turns
        the cancel of a tool's task back into the tool's ``KeyboardInterrupt``
        (``_FunctionToolBatchExecutor._await_invoke_task``).

        Cancelling the cell's task stops the run as its framework stops a run whose reader is
        cancelled (the Agents SDK: ``stream_events`` calls ``RunResultStreaming.cancel()``).
        The cell's code gets ``interrupt`` there (:meth:`_async`), as it would have had the
        interrupt not left the loop first, so the rest of the cell never runs. Waited for: the
        cell's task, the run's (its framework's ``tasks_of(run)``: a clean-up may start only
        once the run is done) and every task whose cancel is under way, which the run's cancel
        reached in turn. The interrupt raised again meanwhile is the one the cell got already,
        and is absorbed; any other (a second Ctrl-C) goes on to the user. Shown already as the
        cell's error, it is not shown again meanwhile (:func:`_shown_once`).

        Only where the loop is idle here (IPython's own runner, between cells). A kernel whose
        loop runs the cell leaves nothing stranded: ipykernel interrupts an awaiting cell by
        cancelling its task, which ends the stream (:meth:`_async`) and so the run, and a
        ``KeyboardInterrupt`` raised in a task there leaves the kernel's loop, and the kernel
        ends."""
        driver = self._driver
        if not isinstance(driver, asyncio.Task) or driver.done():
            return
        if not isinstance(interrupt, BaseException) or not is_interrupt(interrupt):
            return
        loop = driver.get_loop()
        if loop.is_closed() or loop.is_running() or _running_loop() is not None:
            return
        tasks_of = getattr(self._adapter, "tasks_of", None)
        run = self.run

        def stranded() -> list[asyncio.Task[Any]]:
            # Besides the run's own tasks, whatever the cancel reached in turn: a framework may
            # cancel a task without waiting for its end (the Agents SDK, a tool's).
            named = tasks_of(run) if tasks_of is not None and run is not None else []
            stopping = [task for task in asyncio.all_tasks(loop) if _cancelling(task)]
            return [task for task in (driver, *named, *stopping) if not task.done()]

        self._interrupt = interrupt
        driver.cancel()
        waiting = loop.create_task(_all_done(stranded, loop.time() + _STOP_SECONDS))
        with _shown_once(interrupt, self._shell, loop):
            for _ in range(_STOP_RAISES):
                try:
                    loop.run_until_complete(waiting)
                    break
                except BaseException as exc:
                    if exc is not interrupt:
                        waiting.cancel()  # not to wait on in a later cell
                        raise
        if not waiting.done() or stranded():
            waiting.cancel()
            names = sorted({getattr(task.get_coro(), "__qualname__", "?") for task in stranded()})
            with self._lock:
                self._warn(
                    "the run's tasks did not stop after the interrupt and are left pending "
                    f"on the event loop: {', '.join(names) or 'the wait for them'}"
                )
            if self._widget is not None:  # the run ended already: no event will draw it
                self._widget.refresh()
                self._widget.save_view()

    def _driver_gone(self) -> bool:
        driver = self._driver
        if isinstance(driver, threading.Thread):
            return not driver.is_alive()
        if driver is None:
            return False
        if driver.done() or driver.get_loop().is_closed():
            return True
        return getattr(driver.get_coro(), "__name__", None) == "run_cell_async"

    # --- following ---------------------------------------------------------------------------

    def see(self, event: Any) -> None:
        """Map one event into the transcript (what iterating does for each event); never
        raises: an event it fails on is logged and warned of, and the next one followed."""
        with self._lock:
            if self._failed or self._gave_up or self._ended:
                return
            try:
                self._show()
                if self._follower is None and not self._start(event):
                    return
                self._follower.feed(event)
            except Exception as exc:  # the agent's run must go on whatever turnfold makes of it
                self._lost(event, exc)

    def _start(self, event: Any) -> bool:
        """Find the framework (by the event's type, spec A-3) and replay the events held back
        while it was unknown; False while it still is."""
        adapter = self._adapter
        if adapter is None:
            from turnfold.formats.frameworks import adapter_of

            adapter = adapter_of(event)
        if adapter is None:
            self._undecided.append(event)
            if len(self._undecided) >= _UNDECIDED_LIMIT:
                self._gave_up = True
                self._undecided.clear()
                self._warn(
                    f"no agent framework sends events like these ({type(event).__name__}); "
                    "the run was not followed. Pass format= to name the framework"
                )
            return False
        from turnfold.formats import agent_keyword

        self._adapter = adapter
        self.transcript.metadata.setdefault("source_format", adapter.NAME)
        self._follower = adapter.Follower(
            self.transcript, **agent_keyword(adapter, "the followed run", self.agent)
        )
        if self.run is not None and hasattr(self._follower, "begin"):
            self._follower.begin(self.run)
        held, self._undecided = self._undecided, []
        for earlier in held:
            self._follower.feed(earlier)
        return True

    def end(self) -> None:
        """The stream ended (or broke off): calls still running are settled as the loader
        would leave them, and the widget stops showing the run as in progress."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            if self._unwatch is not None:
                self._unwatch()
            try:
                if self._follower is not None and not self._failed:
                    self._follower.close()
            except Exception as exc:
                self._fail("could not finish following the run", exc)
            finally:
                if self._widget is not None:
                    self._widget.running = False

    def _lost(self, event: Any, exc: Exception) -> None:
        """An event the follower failed on (a shape no one here has seen) is one warned event,
        and the run is followed on, as a load reads on past such a record (L-4); a follower
        that fails again and again stops following, so the warnings do not drown the run."""
        self._failures += 1
        if self._failures >= _FAILURE_LIMIT:
            self._fail(f"stopped following after {self._failures} events it could not map", exc)
        else:
            self._warn_of(f"an event of type {type(event).__name__} not followed", exc)

    def _fail(self, what: str, exc: Exception) -> None:
        self._failed = True
        self._warn_of(what, exc)

    def _warn_of(self, what: str, exc: Exception) -> None:
        """``what`` failed with ``exc``: logged with its traceback, and said in a warning."""
        _LOG.warning("turnfold.follow: %s", what, exc_info=exc)
        self._warn(f"{what}: {type(exc).__name__}: {exc}")

    def _warn(self, reason: str) -> None:
        self.transcript.warnings.append(LoadWarning(reason=reason, source="<follow>"))


def _current_task() -> asyncio.Task[Any] | None:
    """The asyncio task stepping the stream; None under another event loop (trio)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _cancelling(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` was asked to cancel and has not ended (before Python 3.11, whose
    tasks do not tell, never)."""
    cancelling = getattr(task, "cancelling", None)
    return cancelling is not None and not task.done() and cancelling() > 0


@contextlib.contextmanager
def _shown_once(
    interrupt: BaseException, shell: Any, loop: asyncio.AbstractEventLoop
) -> Iterator[None]:
    """While the stranded tasks stop, ``interrupt`` (already shown by the shell as the cell's
    error, with the frames where it was raised) is not shown again; anything else is, as ever.

    Twice it would be: the cell's code gets it back at its ``async for`` (:meth:`Follow._async`)
    and, not catching it, IPython's ``run_code`` shows its traceback (``showtraceback``); and a
    framework may report a task of its own that raised it through the loop's exception handler
    (the Agents SDK 0.24: "Background function tool task raised a fatal exception.",
    ``agents/run_internal/tool_execution.py``, ``_consume_function_tool_task_result``), which
    asyncio logs with that traceback. Both are the one Ctrl-C the user saw; the transcript
    shows the run it stopped."""
    show = getattr(shell, "showtraceback", None)
    own = "showtraceback" in getattr(shell, "__dict__", {})  # set on the instance already

    def showtraceback(*args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("exc_tuple", args[0] if args else None)
        shown = given[1] if isinstance(given, tuple) and len(given) > 1 else sys.exc_info()[1]
        if shown is interrupt:
            return None
        return show(*args, **kwargs) if show is not None else None

    previous = loop.get_exception_handler()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("exception") is interrupt:
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    if show is not None:
        shell.showtraceback = showtraceback
    loop.set_exception_handler(handle)
    try:
        yield
    finally:
        loop.set_exception_handler(previous)
        if show is not None:
            if own:
                shell.showtraceback = show
            else:
                del shell.showtraceback  # the class's own again


async def _all_done(tasks: Any, deadline: float) -> None:
    """Wait until ``tasks()`` holds no pending task (asked again as each is done: a task's end
    may start another, a framework's clean-up) or ``deadline`` (the loop's time) passes."""
    loop = asyncio.get_running_loop()
    while (pending := tasks()) and loop.time() < deadline:
        await asyncio.wait(pending, timeout=deadline - loop.time(), return_when="FIRST_COMPLETED")


def _unregister(events: Any, callback: Any) -> None:
    with contextlib.suppress(ValueError):  # the shell's callbacks reset meanwhile
        events.unregister("post_run_cell", callback)


def follow(
    events: Any,
    *,
    format: str | None = None,
    transcript: Transcript | None = None,
    display: bool = True,
    agent: Any = None,
) -> Follow:
    """Follow an agent framework's event stream live (spec A-2).

    ``events`` is the stream the framework gives (sync or async); iterate the returned
    :class:`Follow` in its place: it yields every event unchanged. A run object that streams
    its events may be given instead (``follow(Runner.run_streamed(agent, prompt))``), which
    shows what only the run holds, such as the prompt. The framework is known by
    the events' types (``format`` names it instead: one of ``load``'s formats for a framework).
    In a notebook kernel the live :class:`~turnfold.widget.TranscriptWidget` is shown from the
    first event (``display=False``: not shown; ``.widget`` still makes one). ``.transcript``
    holds the run, and when the stream ends it holds what ``turnfold.load`` of the run's final
    object gives. ``agent`` is the agent the run was made with, for a framework whose events
    leave out what the agent knows, as ``load``'s (Google ADK: which tools are agents;
    smolagents: its managed agents' runs).
    """
    return Follow(events, format=format, transcript=transcript, display=display, agent=agent)
