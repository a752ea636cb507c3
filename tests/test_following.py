"""``turnfold.follow`` (spec A-2): a framework's event stream passed through unchanged and
followed into a transcript, whatever the follower makes of it.

The frameworks' own followers are tested with each framework's real stream in
``tests/formats/test_<framework>.py``; here a small framework defined in the test stands in for
them, so the wrapper's own rules are checked alone: events pass unchanged (sync and async,
from a worker thread), the framework is found by the events' type (A-3), events before one
shows it are replayed, and a follower that fails or a stream nobody reads is said in a
warning while the run goes on.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import types
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

import turnfold
from tests.formats.loops import run_async
from turnfold.following import Follow
from turnfold.formats import frameworks
from turnfold.model import AssistantText, ToolCall, Transcript

# --- a framework of the test's own ------------------------------------------------------------

FAKE = types.ModuleType("fakefw")  # the "framework": its events' type lives in this module
ADAPTER = types.ModuleType("turnfold_test_fakefw_adapter")  # turnfold's "adapter" for it


@dataclass
class Said:
    text: str


@dataclass
class Called:
    call_id: str
    name: str


@dataclass
class Returned:
    call_id: str
    output: str


Said.__module__ = Called.__module__ = Returned.__module__ = "fakefw"


class FakeFollower:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.calls: dict[str, ToolCall] = {}
        self.closed = False

    def feed(self, event: Any) -> None:
        if isinstance(event, Said):
            if event.text == "boom":
                raise RuntimeError("the follower broke")
            self.transcript.append(AssistantText(text=event.text))
        elif isinstance(event, Called):
            call = ToolCall(name=event.name, call_id=event.call_id, status="executing")
            self.calls[event.call_id] = self.transcript.append(call)  # type: ignore[assignment]
        elif isinstance(event, Returned):
            self.transcript.update(self.calls[event.call_id], status="success")
        # plain dicts (the stream's bookkeeping) carry nothing to show

    def close(self) -> None:
        self.closed = True
        for call in self.calls.values():
            if call.status == "executing":
                self.transcript.update(call, status="unknown")


ADAPTER.NAME = "fakefw"  # type: ignore[attr-defined]
ADAPTER.Follower = FakeFollower  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def fake_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, ADAPTER.__name__, ADAPTER)
    monkeypatch.setitem(sys.modules, "fakefw", FAKE)
    monkeypatch.setattr(
        frameworks, "_ADAPTERS", (*frameworks._ADAPTERS, ("fakefw", ADAPTER.__name__))
    )
    return


RUN: list[Any] = [
    {"init": True},  # plain bookkeeping first: no framework type yet
    Said("Looking."),
    Called("c1", "Read"),
    Returned("c1", "text"),
    Called("c2", "Bash"),
    Said("Done."),
]


def _shown(transcript: Transcript) -> list[tuple[str, str]]:
    return [
        (e.kind, e.status if isinstance(e, ToolCall) else getattr(e, "text", ""))
        for e in transcript.entries
    ]


# --- A-2 ---------------------------------------------------------------------------------------


def test_A2_events_pass_unchanged_and_fold_into_the_transcript() -> None:
    followed = turnfold.follow(iter(RUN), display=False)
    seen = list(followed)
    assert seen == RUN
    assert all(a is b for a, b in zip(seen, RUN, strict=True))
    assert followed.transcript.metadata["source_format"] == "fakefw"
    # the dict before the first framework event was held, then replayed: nothing lost
    assert _shown(followed.transcript) == [
        ("assistant", "Looking."),
        ("tool_call", "success"),
        ("tool_call", "unknown"),  # still running when the stream ended: settled as a load
        ("assistant", "Done."),
    ]
    assert followed.transcript.warnings == []


def test_A2_an_async_stream_is_followed_with_async_for() -> None:
    async def events() -> AsyncIterator[Any]:
        for event in RUN:
            await asyncio.sleep(0)
            yield event

    async def main() -> tuple[list[Any], Transcript]:
        followed = turnfold.follow(events(), display=False)
        return [event async for event in followed], followed.transcript

    with ThreadPoolExecutor(1) as pool:  # a loop of its own, whatever an earlier test left
        seen, transcript = pool.submit(asyncio.run, main()).result()
    assert seen == RUN
    assert len(transcript.tool_calls()) == 2


def test_A2_for_over_an_async_stream_says_to_use_async_for() -> None:
    async def events() -> AsyncIterator[Any]:
        yield Said("hi")

    stream = events()
    with pytest.raises(TypeError, match="async for"):
        iter(turnfold.follow(stream, display=False))
    with ThreadPoolExecutor(1) as pool:  # a loop of its own, whatever an earlier test left
        pool.submit(asyncio.run, stream.aclose()).result()


def test_A2_a_sync_stream_may_be_consumed_with_async_for_too() -> None:
    async def main() -> list[Any]:
        return [event async for event in turnfold.follow(iter(RUN), display=False)]

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, main()).result() == RUN


def test_L5_a_run_followed_on_a_worker_thread_is_seen_by_an_observer_here() -> None:
    followed = turnfold.follow(iter(RUN), display=False)
    changes: list[str] = []
    lock = threading.Lock()

    def observer(change: Any) -> None:
        with lock:
            changes.append(change.action)

    followed.transcript.observe(observer)
    worker = threading.Thread(target=lambda: list(followed))
    worker.start()
    worker.join()
    assert changes.count("append") == 4  # every entry reached the observer (the widget's way)
    assert len(followed.transcript.tool_calls()) == 2


def test_X2_an_event_the_follower_fails_on_is_said_and_the_run_followed_on() -> None:
    """As a load reads on past a record its reader fails on (L-4), the event is lost, not
    the rest of the run; every event still reaches the user's loop."""
    run = [Said("first"), Said("boom"), Said("after"), Called("c1", "Read")]
    followed = turnfold.follow(run, display=False)
    assert list(followed) == run
    # The run's end is followed too: the call it never answered is settled as a load would.
    assert _shown(followed.transcript) == [
        ("assistant", "first"), ("assistant", "after"), ("tool_call", "unknown")
    ]  # fmt: skip
    (warning,) = followed.transcript.warnings
    assert warning.reason == "an event of type Said not followed: RuntimeError: the follower broke"


def test_X2_a_follower_that_fails_again_and_again_stops_following_and_says_so() -> None:
    run = [Said("first"), *[Said("boom")] * 30, Said("never shown")]
    followed = turnfold.follow(run, display=False)
    assert list(followed) == run
    assert _shown(followed.transcript) == [("assistant", "first")]
    *lost, stopped = followed.transcript.warnings
    assert len(lost) == 19
    assert all("not followed" in w.reason for w in lost)
    assert stopped.reason.startswith("stopped following after 20 events it could not map")


def _raising(events: list[Any], error: BaseException) -> Iterator[Any]:
    yield from events
    raise error


def test_A2_a_run_that_raises_ends_in_its_error_and_the_error_reaches_the_user() -> None:
    """The transcript says the run failed, as a session file records a failed turn (P-3),
    instead of ending as if the run had just stopped; the user's loop gets the exception."""
    followed = turnfold.follow(_raising(RUN[:5], RuntimeError("API down")), display=False)
    with pytest.raises(RuntimeError, match="API down"):
        for _ in followed:
            pass
    assert _shown(followed.transcript)[-2:] == [("tool_call", "unknown"), ("error", "")]
    assert followed.transcript.entries[-1].message == "RuntimeError: API down"  # type: ignore[attr-defined]


def test_A2_leaving_the_loop_early_is_no_failure_of_the_run() -> None:
    followed = turnfold.follow(iter(RUN), display=False)
    for event in followed:
        if isinstance(event, Called):
            break
    assert [kind for kind, _ in _shown(followed.transcript)] == ["assistant", "tool_call"]


def test_A2_an_async_run_that_raises_ends_in_its_error() -> None:
    async def events() -> AsyncIterator[Any]:
        for event in RUN[:3]:
            yield event
        raise ValueError("bad tool schema")

    async def main() -> Follow:
        followed = turnfold.follow(events(), display=False)
        with pytest.raises(ValueError, match="bad tool schema"):
            async for _ in followed:
                pass
        return followed

    followed = run_async(main())  # a loop of its own, whatever an earlier test left
    assert followed.transcript.entries[-1].message == "ValueError: bad tool schema"  # type: ignore[attr-defined]


def test_X2_a_stream_no_framework_sends_is_passed_on_and_said() -> None:
    run = [{"n": n} for n in range(100)]
    followed = turnfold.follow(run, display=False)
    assert list(followed) == run
    (warning,) = followed.transcript.warnings
    assert "no agent framework sends events like these" in warning.reason
    assert followed.transcript.entries == []


def test_A2_format_names_the_framework_and_an_unknown_one_is_refused() -> None:
    with pytest.raises(ValueError, match="no agent framework reads 'nope'"):
        turnfold.follow([], format="nope")
    with pytest.raises(ValueError, match="openai-agents"):  # the error lists the real ones
        turnfold.follow([], format="claude-code")


def test_A2_a_run_object_that_does_not_stream_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="not an event stream"):
        turnfold.follow(Said("a result, not a stream"))


def test_A2_the_stream_breaking_off_still_ends_the_followed_run() -> None:
    def events() -> Iterator[Any]:
        yield Called("c1", "Bash")
        raise KeyboardInterrupt  # the user interrupts the cell

    followed = turnfold.follow(events(), display=False)
    with pytest.raises(KeyboardInterrupt):
        list(followed)
    (call,) = followed.transcript.tool_calls()
    # Closed, not left "executing" forever; cut off by an interrupt, so cancelled (the loaders'
    # rule), and the run's end reads stopped (P-7).
    assert call.status == "cancelled"
    assert followed.transcript.entries[-1].kind == "abort"
    assert followed.widget.running is False
    followed.widget.close()


def test_A2_the_widget_follows_the_same_transcript_and_runs_while_the_stream_does() -> None:
    followed = turnfold.follow(iter(RUN), display=False)
    widget = followed.widget  # made before the run: running
    assert widget.running is True
    list(followed)
    assert widget.running is False
    assert followed.widget is widget
    assert "Done." in widget._repr_mimebundle_()[0]["text/plain"]
    widget.close()
