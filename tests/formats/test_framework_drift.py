"""What releases newer than the pinned ones write (pydantic-ai-slim 2.78, agent-framework-core
1.26), read from fixtures those releases wrote and from runs of whichever release is installed;
and the Agent Framework orchestrations (concurrent, group chat, magentic) on its scripted client.
"""

from typing import Any

import pytest

import turnfold
from turnfold.model import AssistantText, SystemNotice, Transcript

pytest.importorskip("pydantic_ai")
pytest.importorskip("agent_framework")

from tests.formats import framework_drift_runs as runs
from tests.formats.counters_agent_framework import agent_framework as count_af_calls
from tests.formats.counters_pydantic_ai import pydantic_ai as count_pai_calls
from turnfold.formats.frameworks import agent_framework, pydantic_ai

CAPABILITY = runs.PAI_FIXTURES / "pydantic-ai_v2.78.0_all-messages_capability-retry.json"
DENIED = runs.AF_FIXTURES / "agent-framework_v1.26.0_session_denied.json"


def outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None),
         getattr(e, "status", None) or getattr(e, "subtype", None))
        for e in transcript.entries
    ]  # fmt: skip


# --- pydantic-ai ---------------------------------------------------------------------------------


def test_A1_a_capability_part_of_2_78_is_shown_where_the_model_was_given_it() -> None:
    transcript = turnfold.load(CAPABILITY)
    assert transcript.warnings == []
    assert outline(transcript) == [
        ("UserMessage", "go", None),
        ("ToolCall", "check", "success"),
        ("SystemNotice", runs.REQUESTS_LEFT, "capability"),
        ("AssistantText", runs.DRAFT, None),
        ("SystemNotice", f"Retry: {runs.RETRY}", "retry"),
        ("AssistantText", runs.FINAL, None),
    ]
    notice = transcript.entries[2]
    assert notice.meta == {"capability_kind": "budget.requests_left", "voice": "instruction"}
    assert len(transcript.tool_calls()) == count_pai_calls(CAPABILITY)


def test_A2_a_rejected_streamed_response_is_kept_apart_from_the_one_replacing_it() -> None:
    """The output validator rejects the streamed draft: the follower keeps the draft and the
    answer as two responses (the draft was overwritten by the answer before); from 2.78 the
    ``ModelResponseRejectedEvent`` also gives the retry notice, so the follow equals the load."""
    transcript = Transcript(metadata={"source_format": pydantic_ai.NAME})
    events = runs.budget_followed(pydantic_ai.Follower(transcript))
    loaded = turnfold.load(events[-1].result)
    assert transcript.warnings == []
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == [runs.DRAFT, runs.FINAL]
    if any(type(e).__name__ == "ModelResponseRejectedEvent" for e in events):
        assert transcript.entries == loaded.entries
        assert ("SystemNotice", runs.REQUESTS_LEFT, "capability") in outline(transcript)
    else:  # before 2.78 the events carry neither the feedback nor the enqueued part
        assert [e for e in outline(loaded) if e[0] != "SystemNotice"] == outline(transcript)


def test_A2_a_compaction_end_event_is_the_boundary_a_load_shows() -> None:
    messages = pytest.importorskip("pydantic_ai.messages")
    if not hasattr(messages, "CompactionEndEvent"):
        pytest.skip("CompactionEndEvent is new in pydantic-ai 2.78")
    import inspect

    record_type = messages.CompactionRecord
    fields = inspect.signature(record_type).parameters
    values = {"part": messages.CompactionPart(content="Summary so far."), "handler": "h",
              "reason": "requested", "model_name": "m", "provider_name": "p",
              "messages_before": 4, "messages_after": 1, "kept_from": 3,
              "part_message_index": 0, "part_index": 0}  # fmt: skip
    record = record_type(**{k: v for k, v in values.items() if k in fields})
    transcript = Transcript(metadata={"source_format": pydantic_ai.NAME})
    follower = pydantic_ai.Follower(transcript)
    follower.feed(messages.CompactionEndEvent(record=record))
    follower.close()
    assert transcript.warnings == []
    boundary = transcript.entries[-1]
    assert type(boundary).__name__ == "CompactionBoundary"
    assert boundary.summary == "Summary so far."


# --- agent-framework -----------------------------------------------------------------------------


def test_A1_a_call_whose_approval_the_user_refused_is_cancelled_not_a_success() -> None:
    """1.26 marks the result it writes for a refused call; 1.23 writes the same result
    without the mark, and the user's refusal says it."""
    for transcript in (turnfold.load(DENIED), turnfold.load(runs.denied_session())):
        (call,) = transcript.tool_calls()
        assert (call.name, call.status) == ("delete", "cancelled")
        assert call.result is not None
        assert call.result.text == "Error: Tool call invocation was rejected by user."
        assert transcript.entries[-1].text == "Not deleted."
    assert count_af_calls(DENIED) == 1
    # The result alone (its user message not loaded) is known refused by 1.26's mark only.
    document = {"type": "agent_response", "messages": [
        {"type": "message", "role": "assistant", "contents": [
            {"type": "function_call", "call_id": "d", "name": "delete", "arguments": "{}"}]},
        {"type": "message", "role": "tool", "contents": [
            {"type": "function_result", "call_id": "d", "result": "Error: rejected",
             "additional_properties": {"_approval_rejection_result": True}}]},
    ]}  # fmt: skip
    assert turnfold.load(document).tool_calls()[0].status == "cancelled"


def _run_and_follow(build: Any) -> tuple[Transcript, Transcript]:
    from tests.formats.agent_framework_runs import workflow_run, workflow_streamed

    loaded = turnfold.load(workflow_run(build(), "do it"))
    transcript = Transcript()
    follower = agent_framework.Follower(transcript)
    _, final = workflow_streamed(build(), "do it", follower.feed)
    follower.close()
    assert transcript == turnfold.load(final)
    return loaded, transcript


def _nested(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls(nested=True)
    ]


def test_A1_A2_a_concurrent_workflow_nests_each_agent_and_shows_the_gathered_answers() -> None:
    loaded, followed = _run_and_follow(runs.concurrent)
    for transcript in (loaded, followed):
        assert transcript.warnings == []
        assert _nested(transcript) == [
            ("adder", None, "success", "Sum is 3."),
            ("add", {"a": 1, "b": 2}, "success", "3"),
            ("bomber", None, "success", "It exploded."),
            ("explode", {"x": "q"}, "error", "Error: Function failed."),
        ]
        adder, bomber = transcript.tool_calls()
        names = [c.subagent.name if c.subagent else None for c in (adder, bomber)]
        assert names == ["adder", "bomber"]
        # The aggregator's output gathers both answers: no agent's run of its own.
        gathered = [e for e in transcript.entries if isinstance(e, AssistantText)]
        assert [(e.text, e.meta.get("author")) for e in gathered] == [
            ("Sum is 3.", "adder"), ("It exploded.", "bomber"),
        ]  # fmt: skip


def test_A1_A2_a_group_chat_says_who_speaks_and_nests_each_agent_s_run() -> None:
    loaded, followed = _run_and_follow(runs.group_chat)
    for transcript in (loaded, followed):
        assert transcript.warnings == []
        assert outline(transcript)[:5] == [
            ("UserMessage", "do it", None),
            ("SystemNotice", "Next speaker: writer", "speaker"),
            ("ToolCall", "writer", "success"),
            ("SystemNotice", "Next speaker: critic", "speaker"),
            ("ToolCall", "critic", "success"),
        ]
        assert _nested(transcript)[:3] == [
            ("writer", None, "success", "2+2 is 4."),
            ("add", {"a": 2, "b": 2}, "success", "4"),
            ("critic", None, "success", "Approved."),
        ]


def test_A1_A2_a_magentic_workflow_shows_the_plan_the_instructions_and_each_agent() -> None:
    loaded, followed = _run_and_follow(runs.magentic)
    for transcript in (loaded, followed):
        assert transcript.warnings == []
        plan = transcript.entries[1]
        assert isinstance(plan, SystemNotice)
        assert plan.subtype == "plan"
        assert "Plan: coder adds." in plan.text
        assert "Facts: none." in plan.text
        assert outline(transcript)[2:5] == [
            ("SystemNotice", "Next speaker: coder: add 3 and 4", "speaker"),
            ("ToolCall", "coder", "success"),
            ("SystemNotice", "The task is done: scripted", "speaker"),
        ]
        coder = transcript.tool_calls()[0]
        assert coder.subagent is not None
        assert coder.subagent.transcript is not None
        assert _nested(coder.subagent.transcript) == [("add", {"a": 3, "b": 4}, "success", "7")]
        last = transcript.tool_calls()[-1]
        assert last.result is not None
        assert last.result.text == "The answer is 7."
        assert last.subagent is not None
        assert last.subagent.name == "manager"
