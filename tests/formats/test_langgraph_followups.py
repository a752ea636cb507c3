"""LangGraph follow-ups (spec A-2, L-1, L-4, P-3, P-7): a reviewer's rejection streamed before
the call it answers, and a node's error its error handler recovered from.

The runs are real (langgraph 1.2, langchain 1.5, offline), built as in
``tests/formats/test_langgraph_leftovers.py``: ``create_agent`` with
``HumanInTheLoopMiddleware`` and an ``InMemorySaver``, interrupted and resumed with
``Command(resume=...)``; hand-built ``StateGraph`` graphs whose node raises and whose
``add_node(..., error_handler=...)`` handler routes on. The model is the scripted offline one of
``tests/formats/langchain_runs.py``. Streams are saved with ``langchain_core.load.dumps``.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain_core.load import dumps as lc_dumps
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import turnfold
from tests.formats.test_langgraph_leftovers import (
    EDIT_AND_REJECT,
    TASK_MODES,
    _config,
    _followed,
    _reviewed_agent,
    _routed,
    _shown,
    _tool_routed,
)
from turnfold.model import AssistantError, SystemNotice, Transcript
from turnfold.process import Turn, project
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

# --- 1. a rejection streamed before the call it answers ---------------------------------------

#: The modes of a saved stream in which ``HumanInTheLoopMiddleware``'s rejection (its
#: ``ToolMessage``, a ``messages`` event) comes before the ``updates`` event of its node, which
#: holds the model's message with the call it rejects (``messages`` streams a node's new
#: messages as it writes them, ``updates`` once its task is over).
REVIEW_MODES = [["updates", "messages"], ["messages", "updates"], ["updates", "messages", "tasks"]]

EDITED_RAN = (
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in your "
    "message is the one you produced, not the one that executed. This was intentional and "
    "authorized. Do not re-issue your original call. Executed instead: remove with arguments "
    '{"path": "/b"}.\n\nTool response:\nremoved /b'
)
REJECTED = "User rejected the tool call for `remove` with reason: keep /c"


def _resumed_stream(mode: Any, thread: str, resume: Command[Any]) -> Any:
    """The reviewed agent run to its interrupt, then the stream of its resumed run."""
    agent, config = _reviewed_agent(), _config(thread)
    list(agent.stream({"messages": [("user", "rm /a /c")]}, config, stream_mode=mode))
    return agent.stream(resume, config, stream_mode=mode)


def _every_way(mode: Any, resume: Command[Any]) -> list[Transcript]:
    """The resumed stream saved (as objects, and by ``dumps``) and loaded, followed from the
    saved events (a stream of the user's own: no checkpointer to read) and followed live."""
    events = list(_resumed_stream(mode, f"saved-{mode}", resume))
    rejected = [
        e for e in events
        if e[0] == "messages" and getattr(e[1][0], "tool_call_id", None) is not None
        and e[1][1]["langgraph_node"] == "HumanInTheLoopMiddleware.after_model"
    ]  # fmt: skip
    first_update = next(n for n, e in enumerate(events) if e[0] == "updates")
    assert rejected
    assert events.index(rejected[0]) < first_update  # the order this is about
    return [
        turnfold.load(events),
        turnfold.load(lc_dumps(events)),
        _followed(iter(events)),
        _followed(_resumed_stream(mode, f"live-{mode}", resume)),
    ]


@pytest.mark.parametrize("mode", REVIEW_MODES, ids=str)
def test_A2_a_rejection_streamed_before_its_call_shows_once_on_its_call(mode: Any) -> None:
    """The rejection of ``r2`` comes before the model's message with ``r1`` and ``r2``: each
    call shows once, in the model's order, ``r2`` cancelled with the reviewer's message, and
    no warning of an unknown ``tool_call_id``. Old code showed ``r2`` first (a call made up
    for the rejection) and again from the model's message, left ``unknown``, with a warning."""
    for transcript in _every_way(mode, EDIT_AND_REJECT):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == [
            ("call", "r1", "remove", "success", EDITED_RAN),
            ("call", "r2", "remove", "cancelled", REJECTED),
            ("notice", 'remove edited before it ran; the model asked for {"path":"/a"}'),
            ("AssistantText", "Done."),
        ]
        (edited, _) = transcript.tool_calls()
        assert edited.args == {"path": "/b"}


def test_A2_every_call_rejected_each_shows_once_with_its_rejection() -> None:
    """Two rejections in a row, both before their calls' message: both held, both shown on
    their calls, each once."""
    reject_both: Command[Any] = Command(
        resume={"decisions": [{"type": "reject", "message": "keep /a"},
                              {"type": "reject", "message": "keep /c"}]}
    )  # fmt: skip
    said = "User rejected the tool call for `remove` with reason: keep {}"
    for transcript in _every_way(["updates", "messages"], reject_both):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == [
            ("call", "r1", "remove", "cancelled", said.format("/a")),
            ("call", "r2", "remove", "cancelled", said.format("/c")),
            ("AssistantText", "Done."),
        ]


def test_L4_a_rejection_whose_call_no_event_holds_is_still_shown_with_its_warning() -> None:
    """A ``messages`` stream alone holds no message of the model's with the rejected call:
    the rejection is still shown (held for nothing, then let go at the next event), on a call
    of its own, with the warning that says where the call is."""
    events = list(_resumed_stream("messages", "messages-only", EDIT_AND_REJECT))
    for transcript in (turnfold.load(lc_dumps(events)), _followed(iter(events))):
        calls = [(c.call_id, c.status, c.result.text if c.result else None)
                 for c in transcript.tool_calls()]  # fmt: skip
        assert ("r2", "cancelled", REJECTED) in calls
        assert [c[0] for c in calls].count("r2") == 1
        (warning,) = [w.reason for w in transcript.warnings if "'r2'" in w.reason]
        assert warning.startswith("tool result for an unknown tool_call_id 'r2'")


# --- 2. an error its node's error handler recovered from --------------------------------------


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


def _streams(make: Any, mode: Any, checkpointed: bool) -> list[Transcript]:
    def stream() -> Any:
        graph = make(InMemorySaver() if checkpointed else None)
        return graph.stream({"messages": [("user", "go")]}, _config("h"), stream_mode=mode)

    events = list(stream())
    return [turnfold.load(events), turnfold.load(lc_dumps(events)), _followed(stream())]


@pytest.mark.parametrize(("mode", "checkpointed"), TASK_MODES, ids=str)
def test_P7_a_plain_node_s_handled_error_is_a_visible_error_notice_not_the_run_s_failure(
    mode: Any, checkpointed: bool
) -> None:
    """``fetch`` raises, its error handler writes and routes to ``fallback``, which answers:
    the run recovered, so no turn reads failed and the last one (the run's end) completed;
    the node's error stays visible, in its place, as an error notice naming its node in its
    meta. Old code showed it as the run's error (:class:`AssistantError`): the turn failed."""
    for transcript in _streams(_routed, mode, checkpointed):
        assert [w.reason for w in transcript.warnings] == []
        assert not [e for e in transcript.entries if isinstance(e, AssistantError)]
        assert _shown(transcript)[1:] == [
            ("AssistantText", "Let me check."),
            ("notice", "ConnectionError: host unreachable"),
            ("AssistantText", "fetch failed: host unreachable"),
            ("AssistantText", "Recovered: cache."),
        ]
        (handled,) = [e for e in transcript.entries if isinstance(e, SystemNotice)]
        assert (handled.level, handled.meta) == ("error", {"node": "fetch"})
        statuses = [turn.header.status for turn in _turns(transcript)]
        assert "failed" not in statuses
        assert statuses[-1] == "completed"
        text = render_text(build_view_model(transcript, DisplaySettings()))
        assert "ConnectionError: host unreachable" in text


@pytest.mark.parametrize(("mode", "checkpointed"), TASK_MODES, ids=str)
def test_P7_a_tool_node_s_handled_error_fails_its_call_not_the_turn(
    mode: Any, checkpointed: bool
) -> None:
    """A ``ToolNode`` raising, its handler answering the call with the error and asking the
    model again: the call is ``error`` (a failed tool does not fail its turn, P-7), the
    node's error an error notice, and the run's end, the model's answer, completes it."""
    for transcript in _streams(_tool_routed, mode, checkpointed):
        assert [w.reason for w in transcript.warnings] == []
        assert not [e for e in transcript.entries if isinstance(e, AssistantError)]
        assert _shown(transcript)[1:] == [
            ("AssistantText", "Looking."),
            ("call", "c1", "crash", "error", "ValueError: disk gone: /a"),
            ("notice", "ValueError: disk gone: /a"),
            ("AssistantText", "The disk is gone."),
        ]
        statuses = [turn.header.status for turn in _turns(transcript)]
        assert "failed" not in statuses
        assert statuses[-1] == "completed"
