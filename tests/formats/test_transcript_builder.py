"""What every builder shares (``formats/common.py``): how a call ends without its result,
waiting on the user or with no recorded outcome, and warnings said once (spec L-1, L-3, L-4).

The framework adapters (pydantic-ai, Strands, ADK, AutoGen, smolagents, LangChain, OpenAI
Agents) all mark waiting calls and settle open ones through these methods; their own tests
check what each shows.
"""

from __future__ import annotations

from typing import Any

import pytest

from turnfold.formats.common import TranscriptBuilder, approval_text
from turnfold.model import Entry, ToolCall, ToolStatus, Transcript, TranscriptChange


def _builder(*statuses: ToolStatus) -> tuple[TranscriptBuilder, list[ToolCall], list[Any]]:
    """A builder whose transcript holds a call of each status, and the changes observed after."""
    builder = TranscriptBuilder(Transcript(), "<test>")
    calls = [
        ToolCall(call_id=f"c{n}", name="delete", status=status)
        for n, status in enumerate(statuses, start=1)
    ]
    builder.transcript.extend(calls)
    changes: list[Any] = []

    def seen(change: TranscriptChange) -> None:
        changes.append((change.action, change.entry.id, change.fields))

    builder.transcript.observe(seen)
    return builder, calls, changes


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("delete", "Approve delete?"),
        (None, "Approve the call?"),  # ADK: no original call named
        ("", "Approve the call?"),  # pydantic-ai: a call the file left nameless
        (5, "Approve the call?"),  # no string, no name
    ],
)
def test_L1_an_approval_asks_for_the_tool_by_name_or_for_the_call(name: Any, text: str) -> None:
    assert approval_text(name) == text


def test_L1_an_open_call_waits_on_the_user_and_its_action_is_the_caller_s_to_place() -> None:
    builder, (call,), changes = _builder("executing")
    pending = builder.wait_on_user(call, "permission", "Approve delete?", meta={"hint": "sure?"})
    assert call.status == "confirming"
    assert changes == [("update", call.id, ("status",))]
    assert (pending.action, pending.text, pending.call_id, pending.meta) == (
        "permission", "Approve delete?", "c1", {"hint": "sure?"},
    )  # fmt: skip
    assert pending not in builder.transcript.entries  # appended where the reader says


def test_L1_a_call_waiting_as_asked_or_with_its_outcome_is_left_as_it_is() -> None:
    """A second interrupt of a call already waiting (Strands), or an interrupt of a call that
    has its result: the action names the call, which no observer hears changed."""
    builder, (waiting, done), changes = _builder("confirming", "success")
    for call in (waiting, done):
        pending = builder.wait_on_user(call, "question", "interrupt")
        assert pending.call_id == call.call_id
    assert (waiting.status, done.status, changes) == ("confirming", "success", [])


def test_L1_a_call_waiting_for_an_answer_is_pending_and_its_meta_says_what_for() -> None:
    """pydantic-ai's deferred calls: a question waits ``pending``, its call's ``meta`` says it
    is deferred, in one update."""
    builder, (call,), changes = _builder("unknown")
    call.meta = {"agent": "a"}
    builder.wait_on_user(call, "question", "ask", status="pending", call_meta={"deferred": "q"})
    assert (call.status, call.meta) == ("pending", {"agent": "a", "deferred": "q"})
    assert changes == [("update", call.id, ("status", "meta"))]


def test_L1_a_pending_action_of_no_call_changes_no_call() -> None:
    builder, (call,), changes = _builder("executing")
    pending = builder.wait_on_user(None, "question", "interrupt")
    assert (pending.call_id, pending.meta, call.status, changes) == (None, {}, "executing", [])


def test_L3_calls_left_running_end_unknown_and_calls_waiting_on_the_user_wait() -> None:
    builder, calls, _ = _builder(
        "pending", "executing", "confirming", "success", "unknown", "executing"
    )
    builder.settle_open(calls, waiting={"c6"})
    assert [c.status for c in calls] == [
        "unknown", "unknown", "confirming", "success", "unknown", "executing",
    ]  # fmt: skip


def test_L3_a_builder_that_tells_others_of_its_updates_settles_through_them() -> None:
    """AutoGen's child runs tell their caller's call of each update; ADK updates a call in the
    transcript of its sub-agent: settling goes through the builder's own ``update``."""
    told: list[str] = []

    class Telling(TranscriptBuilder):
        def update(self, entry: Entry, **changes: Any) -> None:
            super().update(entry, **changes)
            told.append(entry.id)

    builder = Telling(Transcript(), "<test>", live=True)
    call = ToolCall(call_id="c1", name="t", status=builder.open_status)
    builder.transcript.append(call)
    builder.settle_open([call])
    assert (call.status, told) == ("unknown", [call.id])
    builder.wait_on_user(call, "permission", "Approve t?")
    assert told == [call.id, call.id]


def test_L4_a_warning_given_once_is_said_once_at_its_first_line() -> None:
    """A follower skips an event of a kind it does not show: said once per kind, not per event."""
    builder = TranscriptBuilder(Transcript(), "<stream>")
    for line in (3, 4):
        builder.warn_once("event Tick not shown", line)
    builder.warn_once("event Tock not shown")
    assert [(w.reason, w.line, w.source) for w in builder.transcript.warnings] == [
        ("event Tick not shown", 3, "<stream>"),
        ("event Tock not shown", None, "<stream>"),
    ]
