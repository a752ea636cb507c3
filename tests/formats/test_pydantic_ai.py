"""pydantic-ai's message history (spec A-1, A-2, A-3, L-1, L-3, L-4, X-2; issue 22).

The runs are of the real pydantic-ai (``pydantic-ai-slim``, its ``FunctionModel``, no
network), scripted in ``tests/formats/pydantic_ai_runs.py``; the saved fixture under
``tests/fixtures/frameworks/pydantic-ai/`` was written by it. The small message lists built in
the tests below are hand-made, in the shape ``ModelMessagesTypeAdapter`` writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import turnfold
from tests.formats import pydantic_ai_runs as runs
from tests.formats.counters_pydantic_ai import pydantic_ai as count_saved_calls
from tests.formats.structured_answers import answer_of, structured_answers
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks import pydantic_ai as adapter
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantError,
    AssistantText,
    PendingAction,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptChange,
    UserMessage,
)
from turnfold.usage import counts_of

pytest.importorskip("pydantic_ai")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "pydantic-ai"
SAVED = sorted(FIXTURES.glob("pydantic-ai_v*_all-messages_retry-failed.json"))[-1]
STATUSES = {
    "call_1": "success",
    "call_2": "error",
    "call_3": "error",
    "call_4": "success",
    "call_5": "success",
}


@pytest.fixture(scope="module")
def result() -> Any:
    return runs.run()


def _calls(transcript: Transcript) -> dict[str, ToolCall]:
    return {c.call_id: c for c in transcript.tool_calls()}


def _outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What a followed run must share with the loaded one: calls (names, args, ids), their
    statuses and results, and the texts."""
    out: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            text = entry.result.text if entry.result else None
            out.append(("call", entry.call_id, entry.name, entry.args, entry.status, text))
        elif isinstance(entry, (AssistantText, Thinking)):
            out.append((entry.kind, entry.text))
    return out


def count_framework_calls(messages: list[Any]) -> int:
    """The run's calls counted from pydantic-ai's own types, apart from the loader."""
    from pydantic_ai.messages import ModelResponse, NativeToolCallPart, ToolCallPart

    return len(
        {
            part.tool_call_id
            for message in messages
            if isinstance(message, ModelResponse)
            for part in message.parts
            if isinstance(part, (ToolCallPart, NativeToolCallPart))
        }
    )


# --- after the run (A-1) ------------------------------------------------------------------------


def test_A1_a_run_result_reads_prompt_thinking_calls_statuses_usage_and_answer(
    result: Any,
) -> None:
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["UserMessage", "Thinking", "AssistantText"] + ["ToolCall"] * 5 + [
        "AssistantText"
    ]
    prompt = transcript.entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == runs.PROMPT
    assert prompt.timestamp is not None  # the part's own timestamp
    assert transcript.metadata["system"] == f"{runs.SYSTEM_PROMPT}\n\n{runs.INSTRUCTIONS}"
    calls = _calls(transcript)
    assert {k: c.status for k, c in calls.items()} == STATUSES
    assert calls["call_1"].args == {"a": 1, "b": 2}
    assert calls["call_1"].result.text == "3"
    assert calls["call_2"].args == {"x": "y"}  # a JSON string in the part, args_as_dict()
    assert calls["call_2"].result.text == "boom: y"
    assert calls["call_2"].meta["outcome"] == "failed"
    retry = calls["call_3"].meta["retry"]
    assert calls["call_3"].meta["outcome"] == "retried"
    assert retry["cause"] == "model_retry"
    assert calls["call_1"].batch_id == calls["call_2"].batch_id != calls["call_3"].batch_id
    assert all(c.started_at and c.ended_at for c in calls.values())
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == runs.ANSWER
    assert answer.usage is not None
    assert answer.usage.input_tokens == 400
    assert answer.usage.cache_read_tokens == 4
    assert answer.usage.cache_write_tokens is None
    assert answer.model == result.all_messages()[-1].model_name
    # A response of calls alone carries its usage in its first entry's meta.
    assert counts_of(calls["call_3"].usage) == {
        "input_tokens": 200,
        "output_tokens": 20,
        "cache_read_tokens": 2,
    }
    assert transcript.metadata["final_output"] == runs.ANSWER
    assert transcript.metadata["usage"]["requests"] == result.usage.requests
    assert transcript.metadata["usage"]["input_tokens"] == result.usage.input_tokens


def test_A1_the_message_list_and_one_message_read_like_the_result(result: Any) -> None:
    whole = turnfold.load(result)
    listed = turnfold.load(result.all_messages())
    assert listed.entries == whole.entries
    assert listed.metadata["source_format"] == adapter.NAME
    first = turnfold.load(result.all_messages()[0])
    assert [type(e) for e in first.entries] == [UserMessage]


def test_A1_the_saved_json_loads_with_detection_from_bytes_text_objects_and_a_file(
    result: Any, tmp_path: Path
) -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    expected = turnfold.load(result).entries
    saved = result.all_messages_json()
    dumped = ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")
    path = tmp_path / "history.json"
    path.write_bytes(saved)
    for value in (saved, saved.decode(), dumped, path):
        source, _ = open_source(value)
        assert which_format(source) == adapter.NAME
        transcript = turnfold.load(value)
        assert transcript.entries == expected
        assert transcript.metadata["source_format"] == adapter.NAME
    lines = tmp_path / "history.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in dumped) + "\n", encoding="utf-8")
    assert turnfold.load(lines).entries == expected


def test_A1_an_agent_run_result_dumped_by_pydantic_keeps_output_and_usage(result: Any) -> None:
    from pydantic import TypeAdapter
    from pydantic_ai.run import AgentRunResult

    saved = TypeAdapter(AgentRunResult).dump_json(result)
    transcript = turnfold.load(saved)
    assert transcript.warnings == []
    assert transcript.entries == turnfold.load(result).entries
    assert transcript.metadata["final_output"] == runs.ANSWER
    assert transcript.metadata["usage"]["tool_calls"] == result.usage.tool_calls
    assert transcript.metadata["run_id"] == result.run_id


def test_A1_the_saved_fixture_reads_every_call_and_status() -> None:
    transcript = turnfold.load(SAVED)
    assert transcript.warnings == []
    assert {k: c.status for k, c in _calls(transcript).items()} == STATUSES
    assert len(transcript.tool_calls()) == count_saved_calls(SAVED) == 5


def test_X2_an_independent_count_of_the_run_s_calls_equals_the_transcript_s(result: Any) -> None:
    transcript = turnfold.load(result)
    assert len(transcript.tool_calls()) == count_framework_calls(result.all_messages())


def test_L3_a_delegated_agent_is_a_plain_call_and_nothing_is_invented(result: Any) -> None:
    transcript = turnfold.load(result)
    research = _calls(transcript)["call_5"]
    assert research.subagent is None  # the child's messages are not in the parent's
    assert research.result is not None
    assert research.result.text == "Because inputs are bad."
    # The format records no duration of its own, and no usage where a provider gave none.
    assert research.duration_ms is None
    saved = json.loads(result.all_messages_json())
    saved[1]["usage"] = {}
    assert all(
        getattr(e, "usage", None) is None and "usage" not in e.meta
        for e in turnfold.load(saved[:3]).entries
    )


def _request(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "request", "parts": list(parts)}


def _response(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "response", "parts": list(parts), "usage": {}, "model_name": "m"}


def _call(call_id: str, name: str = "t") -> dict[str, Any]:
    return {"part_kind": "tool-call", "tool_name": name, "args": None, "tool_call_id": call_id}


def _return(call_id: str, **extra: Any) -> dict[str, Any]:
    part = {"part_kind": "tool-return", "tool_name": "t", "content": "out", "tool_call_id": call_id}
    return {**part, **extra}


def test_L1_outcomes_and_the_deprecated_retry_prompt_map_to_statuses() -> None:
    messages = [
        _request({"part_kind": "user-prompt", "content": "go"}),
        _response(_call("a"), _call("b"), _call("c"), _call("d"), _call("e")),
        _request(
            _return("a"),  # no outcome: a file older than the field
            _return("b", outcome="denied"),
            {"part_kind": "retry-prompt", "tool_name": "t", "content": "bad", "tool_call_id": "c"},
            {"part_kind": "retry-prompt", "content": [{"msg": "no"}], "tool_call_id": "x"},
            _return("d", outcome="interrupted"),
        ),
    ]
    transcript = turnfold.load(messages)
    assert transcript.warnings == []
    calls = _calls(transcript)
    statuses = {k: c.status for k, c in calls.items()}
    assert statuses == {
        "a": "success",
        "b": "cancelled",
        "c": "error",
        "d": "cancelled",
        "e": "unknown",
    }
    assert calls["c"].result is not None
    assert calls["c"].result.text == "bad"
    assert calls["c"].meta["retry"] is True
    assert calls["a"].args == {}  # args None, as args_as_dict() reads it
    notice = next(e for e in transcript.entries if isinstance(e, SystemNotice))
    assert notice.subtype == "retry"
    assert "no" in notice.text


def test_L1_a_notice_is_dated_by_its_part() -> None:
    """A capability's message and a retry's feedback are parts of a request, each with its
    own ``timestamp``: their notices keep it, so they sit in the session's time like the rest."""
    transcript = turnfold.load(FIXTURES / "pydantic-ai_v2.78.0_all-messages_capability-retry.json")
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.subtype, n.timestamp) for n in notices] == [
        ("capability", "2026-12-05T13:18:46.836957Z"),
        ("retry", "2026-12-05T13:18:46.839259Z"),
    ]
    old_retry = _request(
        {"part_kind": "retry-prompt", "content": "no", "timestamp": "2026-01-02T03:04:05Z"}
    )
    loaded = turnfold.load([_request({"part_kind": "user-prompt", "content": "go"}), old_retry])
    retry = next(e for e in loaded.entries if isinstance(e, SystemNotice))
    assert retry.timestamp == "2026-01-02T03:04:05Z"


def test_L1_a_response_the_framework_could_not_use_is_rejected_not_an_answer() -> None:
    """``retry-feedback`` is pydantic-ai's word that the response before it was unusable (its
    output failed validation, an output validator raised ``ModelRetry``): that response's
    text is a rejected reply (``meta["rejected"]``), shown labelled, not the answer of its
    turn; the text of the response that was used is not."""
    transcript = turnfold.load(FIXTURES / "pydantic-ai_v2.78.0_all-messages_capability-retry.json")
    texts = [(e.text, e.meta.get("rejected", False)) for e in transcript.entries
             if isinstance(e, AssistantText)]  # fmt: skip
    assert texts == [("draft answer", True), ("final answer", False)]
    old = [
        _request({"part_kind": "user-prompt", "content": "go"}),
        _response({"part_kind": "thinking", "content": "hm"},
                  {"part_kind": "text", "content": "no good"}),
        _request({"part_kind": "retry-prompt", "content": "try again"}),
        _response({"part_kind": "text", "content": "better"}),
    ]  # fmt: skip
    loaded = turnfold.load(old)
    assert [(type(e).__name__, e.meta.get("rejected", False)) for e in loaded.entries] == [
        ("UserMessage", False), ("Thinking", False), ("AssistantText", True),
        ("SystemNotice", False), ("AssistantText", False),
    ]  # fmt: skip


def test_A1_a_multimodal_prompt_keeps_images_and_names_other_files() -> None:
    from pydantic_ai.messages import BinaryContent, ImageUrl, ModelRequest, UserPromptPart

    prompt = UserPromptPart(
        [
            "look",
            ImageUrl("https://example.com/a.png"),
            BinaryContent(b"abc", media_type="image/png"),
        ]
    )
    message = ModelRequest(parts=[prompt])
    transcript = turnfold.load([message])
    user = transcript.entries[0]
    assert isinstance(user, UserMessage)
    assert user.text.startswith("look")
    assert "https://example.com/a.png" in user.text
    assert [i.media_type for i in user.images] == ["image/png"]
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    saved = ModelMessagesTypeAdapter.dump_json([message])
    assert turnfold.load(saved).entries == transcript.entries


def test_A1_a_prompt_of_several_texts_reads_as_its_texts_and_a_tool_s_list_as_its_value() -> None:
    """``run_sync(["Compare:", "a", "b"])``: a prompt is ``str | Sequence[UserContent]``, each
    string a text of it, not a JSON array; a tool that returns a list of strings returned that
    value, which stays JSON."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("names", {}, tool_call_id="n1")])
        return ModelResponse(parts=[TextPart("Both.")])

    agent = Agent(FunctionModel(respond))

    @agent.tool_plain
    def names() -> list[str]:
        """Two names."""
        return ["ada", "bob"]

    result = runs.on_thread(lambda: agent.run_sync(["Compare these:", "first", "second"]))
    for form in (result, result.all_messages_json()):
        transcript = turnfold.load(form)
        prompt = transcript.entries[0]
        assert isinstance(prompt, UserMessage)
        assert prompt.text == "Compare these:\n\nfirst\n\nsecond"
        (call,) = transcript.tool_calls()
        assert call.result is not None
        assert json.loads(call.result.text) == ["ada", "bob"]


def test_L1_builtin_tools_files_compaction_and_a_cut_off_response_read_alike_saved() -> None:
    from pydantic import BaseModel
    from pydantic_ai.messages import (
        BinaryContent,
        CompactionPart,
        FilePart,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        NativeToolCallPart,
        NativeToolReturnPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    class Point(BaseModel):
        x: int

    messages = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(
            parts=[
                ThinkingPart("", signature="sig", provider_name="anthropic"),
                NativeToolCallPart("web_search", {"query": "q"}, tool_call_id="b1"),
                NativeToolReturnPart("web_search", {"results": [1]}, tool_call_id="b1"),
                FilePart(BinaryContent(b"png", media_type="image/png")),
                ToolCallPart("point", {"a": 1}, tool_call_id="c1"),
            ],
            finish_reason="length",
        ),
        ModelRequest(parts=[ToolReturnPart("point", Point(x=3), tool_call_id="c1")]),
        ModelResponse(parts=[CompactionPart(content="summary"), TextPart("done")]),
    ]
    transcript = turnfold.load(messages)
    assert transcript.warnings == []
    assert turnfold.load(ModelMessagesTypeAdapter.dump_json(messages)).entries == (
        transcript.entries
    )
    kinds = [e.kind for e in transcript.entries]
    assert kinds == [
        "user",
        "thinking",
        "tool_call",
        "assistant",
        "tool_call",
        "system",
        "compaction",
        "assistant",
    ]
    thinking, search, drawn = transcript.entries[1], transcript.entries[2], transcript.entries[3]
    assert isinstance(drawn, AssistantText)  # a file the model returned: its image is shown
    assert [(i.media_type, i.data) for i in drawn.images] == [("image/png", "cG5n")]
    assert isinstance(thinking, Thinking)
    assert (thinking.form, thinking.data) == ("encrypted", "sig")
    assert isinstance(search, ToolCall)
    assert search.status == "success"
    assert search.meta["builtin"] is True
    point = _calls(transcript)["c1"]
    assert point.result is not None
    assert json.loads(point.result.text or "") == {"x": 3}  # a model, by pydantic-ai's dump
    notice = transcript.entries[5]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "length"


def test_L4_objects_of_the_wrong_kind_are_a_format_error_naming_the_source() -> None:
    from pydantic_ai.messages import ToolCallPart

    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load([ToolCallPart("add", {"a": 1}, tool_call_id="c")])
    assert "<object>" in str(raised.value)


def test_L4_a_malformed_saved_file_keeps_what_it_can_with_warnings(tmp_path: Path) -> None:
    good = _request({"part_kind": "user-prompt", "content": "hi"})
    odd = _response({"part_kind": "mystery"}, {"part_kind": "text", "content": "answer"})
    path = tmp_path / "broken.jsonl"
    path.write_text(
        json.dumps(good) + "\n" + json.dumps(odd) + "\n" + '{"kind": "respo\n', encoding="utf-8"
    )
    transcript = turnfold.load(path, format=adapter.NAME)
    assert [type(e) for e in transcript.entries] == [UserMessage, AssistantText]
    reasons = [w.reason for w in transcript.warnings]
    assert any("mystery" in r for r in reasons)
    assert any("JSON" in r for r in reasons)
    orphan = _request(_return("nobody"))
    loaded = turnfold.load([good, orphan])
    assert any("unknown tool_call_id" in w.reason for w in loaded.warnings)


# --- live (A-2) ---------------------------------------------------------------------------------


def _follow(events: list[Any]) -> tuple[Transcript, list[TranscriptChange], list[Any]]:
    """The events fed to a Follower one by one; the changes it made and, after each event,
    the statuses of the calls."""
    transcript = Transcript(metadata={"source_format": adapter.NAME})
    changes: list[TranscriptChange] = []
    transcript.observe(changes.append)
    follower = adapter.Follower(transcript)
    statuses: list[Any] = []
    for event in events:
        follower.feed(event)
        statuses.append({c.call_id: c.status for c in transcript.tool_calls()})
    follower.close()
    return transcript, changes, statuses


def test_A2_iter_nodes_follow_to_the_transcript_load_gives() -> None:
    nodes, result = runs.iter_nodes()
    assert type(nodes[-1]).__name__ == "End"
    transcript, changes, statuses = _follow(nodes)
    loaded = turnfold.load(result)
    assert transcript.entries == loaded.entries
    assert transcript.metadata["final_output"] == runs.ANSWER
    assert transcript.warnings == []
    assert {c.entry.id for c in changes if c.action == "append"} == {
        e.id for e in transcript.entries
    }
    # After the CallToolsNode of the first response, its calls run until their returns come.
    first = next(i for i, n in enumerate(nodes) if type(n).__name__ == "CallToolsNode")
    assert statuses[first] == {"call_1": "executing", "call_2": "executing"}


def test_A2_stream_events_follow_to_the_calls_statuses_and_answer_load_gives() -> None:
    events = runs.stream_events()
    assert type(events[-1]).__name__ == "AgentRunResultEvent"
    transcript, changes, statuses = _follow(events)
    loaded = turnfold.load(events[-1].result)
    assert transcript.warnings == []
    # The events carry no prompt: everything after it is the same.
    assert isinstance(loaded.entries[0], UserMessage)
    assert _outline(transcript) == _outline(loaded)
    assert [e.timestamp for e in transcript.entries] == [e.timestamp for e in loaded.entries[1:]]
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert last.usage == loaded.entries[-1].usage
    assert transcript.metadata["final_output"] == runs.ANSWER
    assert transcript.metadata["system"] == loaded.metadata["system"]
    # A call runs from its FunctionToolCallEvent to its FunctionToolResultEvent.
    started = next(i for i, e in enumerate(events) if type(e).__name__ == "FunctionToolCallEvent")
    assert statuses[started]["call_1"] == "executing"
    assert any(c.action == "update" and "text" in c.fields for c in changes)  # text streamed


def test_A2_stream_events_begun_with_their_handle_follow_to_the_loaded_transcript() -> None:
    transcript = Transcript(metadata={"source_format": adapter.NAME})
    events = runs.stream_followed(adapter.Follower(transcript))
    loaded = turnfold.load(events[-1].result)
    assert transcript.warnings == []
    assert transcript.entries == loaded.entries  # the prompt too, from the handle's history
    assert transcript.metadata["usage"] == loaded.metadata["usage"]


def test_A2_an_event_stream_handler_s_events_follow_to_the_same_calls() -> None:
    events, result = runs.handler_events()
    transcript, _, _ = _follow(events)
    assert transcript.warnings == []
    assert _outline(transcript) == _outline(turnfold.load(result))


def test_A2_turnfold_follow_passes_nodes_through_and_picks_the_format() -> None:
    following = pytest.importorskip("turnfold.following")
    nodes, result = runs.iter_nodes()
    run = following.follow(nodes, display=False)
    assert list(run) == nodes
    assert run.transcript.metadata["source_format"] == adapter.NAME
    assert _outline(run.transcript) == _outline(turnfold.load(result))


# --- a tool's image, deferred calls, retries run out (the real pydantic-ai) ---------------------


@pytest.fixture(scope="module")
def deferred() -> Any:
    return runs.deferred_run()


#: The deferred run's calls: how each waits, and the pending action shown for it.
WAITING = {
    "p1": ("success", None),
    "d1": ("confirming", ("permission", "Approve delete?", "approval")),
    "q1": ("pending", ("question", "ask: Which name?", "question")),
    "x1": ("pending", ("question", "Result of fetch, run outside the agent", "external")),
}


def _waiting(transcript: Transcript) -> dict[str, Any]:
    """Each call's status and its pending action (action, text, what it waits for)."""
    actions = {
        e.call_id: (e.action, e.text, e.meta.get("deferred"))
        for e in transcript.entries
        if isinstance(e, PendingAction)
    }
    return {c.call_id: (c.status, actions.get(c.call_id)) for c in transcript.tool_calls()}


def _image_of(transcript: Transcript) -> list[tuple[str, str]]:
    photo = _calls(transcript)["p1"]
    assert photo.result is not None
    assert photo.result.text is None  # no JSON dump of the image's bytes
    return [(i.media_type, i.data) for i in photo.result.images]


def test_A1_an_image_a_tool_returns_alone_is_the_result_s_image(deferred: Any) -> None:
    """A tool returning one ``BinaryContent`` leaves it as the return's whole content (not a
    list), which pydantic-ai reads as a file: it was shown as a JSON dump of its base64 data,
    with no image."""
    import base64

    png = [("image/png", base64.b64encode(runs.PNG).decode("ascii"))]
    assert type(deferred.all_messages()[2].parts[0].content).__name__ == "BinaryContent"
    assert _image_of(turnfold.load(deferred)) == png
    assert _image_of(turnfold.load(deferred.all_messages_json())) == png
    assert _image_of(_follow(runs.deferred_events())[0]) == png


def test_A1_a_run_ending_on_deferred_calls_shows_each_waiting_with_its_pending_action(
    deferred: Any,
) -> None:
    """A run whose output is ``DeferredToolRequests`` waits on its calls: an approval, a
    question, a call run outside the agent. Each was a bare ``unknown`` call, with nothing
    saying the run waits on the user."""
    from pydantic import TypeAdapter
    from pydantic_ai.run import AgentRunResult

    assert type(deferred.output).__name__ == "DeferredToolRequests"
    transcript = turnfold.load(deferred)
    assert transcript.warnings == []
    assert _waiting(transcript) == WAITING
    asked = next(
        e for e in transcript.entries if isinstance(e, PendingAction) and e.call_id == "q1"
    )
    assert asked.meta["metadata"] == {"form": "name"}  # CallDeferred's metadata for the call
    assert _calls(transcript)["d1"].meta["deferred"] == "approval"
    from pydantic_ai import DeferredToolRequests

    saved = TypeAdapter(AgentRunResult[str | DeferredToolRequests]).dump_json(deferred)
    assert turnfold.load(saved).entries == transcript.entries
    # The messages alone do not say the run waits (the output does): nothing is invented.
    history = turnfold.load(deferred.all_messages_json())
    assert not any(isinstance(e, PendingAction) for e in history.entries)
    assert {c.call_id: c.status for c in history.tool_calls()}["d1"] == "unknown"


def test_L1_a_deferred_approval_of_a_nameless_call_asks_for_the_tool() -> None:
    """The approval names the tool; a call the file left nameless reads as ``tool``, as this
    reader's other deferred texts do (ADK's reads ``the call``)."""
    nameless = _call("d1", name="")
    output = {"approvals": [nameless], "calls": []}
    transcript = turnfold.load({"messages": [_request(), _response(nameless)], "output": output})
    assert transcript.warnings == []
    assert _waiting(transcript) == {
        "d1": ("confirming", ("permission", "Approve the call?", "approval")),
    }


def test_A2_a_followed_run_ending_on_deferred_calls_shows_them_waiting_as_load_does(
    deferred: Any,
) -> None:
    """``DeferredToolRequestsEvent`` was an event "not shown" (a warning), and the calls ended
    ``unknown``; followed from its events, its nodes, or only up to that event (an
    ``event_stream_handler`` sees no closing result), the run shows what a load shows. Its
    nodes left the photo's call ``unknown``: its return is in no node."""
    loaded = _waiting(turnfold.load(deferred))
    events = runs.deferred_events()
    transcript, _, statuses = _follow(events)
    assert transcript.warnings == []
    assert _waiting(transcript) == loaded
    asked = events.index(next(e for e in events if type(e).__name__ == "DeferredToolRequestsEvent"))
    assert statuses[asked]["d1"] == "confirming"  # waiting from its event on
    handled, _, _ = _follow(events[:-1])
    assert handled.warnings == []
    assert _waiting(handled) == loaded
    # Its nodes, with the run handle: the last request (the photo's return) is in the run's
    # history only, after the last node's message.
    from turnfold.following import follow

    followed, result = runs.deferred_followed(lambda run: follow(run, display=False))
    assert followed.transcript.warnings == []
    assert followed.transcript.entries == turnfold.load(result).entries


def test_A2_a_followed_run_whose_retries_run_out_ends_its_last_call_in_error() -> None:
    """The run raises ``UnexpectedModelBehavior`` when a tool used up its retries, and its
    history holds no return for that last call: followed, the call was left ``unknown`` beside
    the error that names the tool."""
    from turnfold.following import follow

    followed, failure, captured = runs.retries_followed(lambda run: follow(run, display=False))
    assert type(failure).__name__ == "UnexpectedModelBehavior"
    transcript = followed.transcript
    last = _calls(transcript)["r3"]
    assert last.status == "error"
    assert last.result is not None
    assert last.result.text == "Tool 'flaky' exceeded max retries count of 2"
    assert (last.meta["outcome"], last.meta["retries_exceeded"]) == ("retried", 2)
    assert [c.status for c in transcript.tool_calls()] == ["error", "error", "error"]
    assert isinstance(transcript.entries[-1], AssistantError)
    # The captured messages alone say nothing of it: a load leaves the call unknown (L-3).
    assert _calls(turnfold.load(captured))["r3"].status == "unknown"


def test_A1_an_agent_run_a_usage_limit_stopped_loads_with_its_error_as_followed() -> None:
    """``agent.iter()`` stopped by ``UsageLimitExceeded``: the ``AgentRun`` has no result, but
    its messages so far; it loads as the follow of it ended (the calls, and the error that
    stopped it), not as "not a transcript"."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    def respond(messages: list[Any], info: Any) -> Any:
        call = ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id=f"c{len(messages)}")
        return ModelResponse(parts=[call], model_name="scripted-1")

    looping = Agent(FunctionModel(respond))

    @looping.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    agent_run, followed, exc, _ = runs.stopped_run(
        looping, usage_limits=UsageLimits(request_limit=2)
    )
    assert type(exc).__name__ == "UsageLimitExceeded"
    assert agent_run.result is None
    loaded = turnfold.load(agent_run)
    assert loaded.warnings == []
    assert loaded.entries == followed.transcript.entries
    assert _outline(loaded) == [
        ("call", "c1", "add", {"a": 1, "b": 2}, "success", "3"),
        ("call", "c3", "add", {"a": 1, "b": 2}, "success", "3"),
    ]
    error = loaded.entries[-1]
    assert isinstance(error, AssistantError)
    assert error.message == f"UsageLimitExceeded: {exc}"


def test_A1_an_agent_run_whose_retries_ran_out_loads_its_last_call_failed_as_followed() -> None:
    agent_run, followed, exc, _ = runs.stopped_run(runs.retries_agent())
    assert type(exc).__name__ == "UnexpectedModelBehavior"
    loaded = turnfold.load(agent_run)
    assert loaded.entries == followed.transcript.entries
    assert [c.status for c in loaded.tool_calls()] == ["error", "error", "error"]
    last = _calls(loaded)["r3"]
    assert last.result is not None
    assert last.result.text == "Tool 'flaky' exceeded max retries count of 2"


# --- no cost when unused (A-3) ------------------------------------------------------------------


def test_A3_the_module_imports_without_pydantic_ai_and_imports_none_of_it() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "import turnfold.formats.frameworks.pydantic_ai as m\n"
        "import turnfold\n"
        't = turnfold.load(\'[{"kind": "request", "parts": '
        '[{"part_kind": "user-prompt", "content": "hi"}]}]\')\n'
        "print(m.NAME, t.entries[0].text)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["pydantic-ai", "hi"]


def test_A1_usage_of_releases_before_0_7_is_read_by_its_old_names() -> None:
    """pydantic-ai before 0.7 saved each response's ``Usage`` as ``request_tokens`` /
    ``response_tokens`` (``total_tokens``, ``requests``, ``details``); hand-made in that shape
    (pydantic-ai 0.4 ``usage.py``), its counts are the response's input and output."""
    messages = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Roll.",
                                       "timestamp": "2025-06-21T12:30:34.839940Z"}]},
        {"kind": "response", "model_name": "deepseek-chat", "timestamp": "2025-06-21T12:30:35Z",
         "parts": [{"part_kind": "text", "content": "A four."}],
         "usage": {"requests": 1, "request_tokens": 2951, "response_tokens": 423,
                   "total_tokens": 3374, "details": None}},
    ]  # fmt: skip
    transcript = turnfold.load(messages)
    assert transcript.warnings == []
    usage = transcript.entries[-1].usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (2951, 423)


# --- structured output (P-2) --------------------------------------------------------------------


class City(BaseModel):
    name: str
    population: int
    country: str = "FR"  # left at its default: part of the output all the same


CITY = {"name": "Paris", "population": 3, "country": "FR"}


def _output_tool_agent() -> Any:
    """An agent with ``output_type=City``: it calls ``add``, then pydantic-ai's output tool
    (``final_result``), whose return says only "Final result processed."."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def call(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            return ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="call_1")
        args = {"name": "Paris", "population": 3}
        return ToolCallPart(info.output_tools[0].name, args, tool_call_id="call_2")

    def script(messages: list[Any], info: Any) -> Any:
        return ModelResponse(parts=[call(messages, info)])

    async def stream(messages: list[Any], info: Any) -> Any:
        part = call(messages, info)
        yield {0: DeltaToolCall(name=part.tool_name, tool_call_id=part.tool_call_id)}
        yield {0: DeltaToolCall(json_args=json.dumps(part.args))}

    agent = Agent(FunctionModel(script, stream_function=stream), output_type=City)

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    return agent


def test_P2_an_output_tool_s_structured_output_is_the_turn_s_answer() -> None:
    result = runs.on_thread(lambda: _output_tool_agent().run_sync("Which city?"))
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    output_call = _calls(transcript)["call_2"]
    assert output_call.name == "final_result"  # stays in the process, as it ran
    assert output_call.status == "success"
    assert output_call.result is not None
    assert output_call.result.text == "Final result processed."
    answer, shown = answer_of(transcript)
    assert answer.meta == {"structured_output": True}
    assert answer.text.startswith("```json\n")
    assert answer.text.endswith("\n```")
    assert json.loads(shown) == CITY
    # The response that produced it: the last one, with the output call.
    last = result.all_messages()[-2]
    assert answer.model == last.model_name
    assert answer.timestamp == output_call.started_at
    assert answer.timestamp is not None
    assert transcript.metadata["final_output"] == CITY
    # Saved as pydantic dumps the result, it loads the same.
    from pydantic import TypeAdapter
    from pydantic_ai.run import AgentRunResult

    saved = turnfold.load(TypeAdapter(AgentRunResult[City]).dump_json(result))
    assert saved.entries == transcript.entries


def test_P2_a_followed_output_tool_run_ends_with_the_answer_load_gives() -> None:
    import asyncio

    from turnfold.following import follow

    async def nodes() -> tuple[Any, Any]:
        async with _output_tool_agent().iter("Which city?") as agent_run:
            followed = follow(agent_run, display=False)
            async for _ in followed:
                pass
        return followed, agent_run.result

    # The output call's return is in the run's last request, which no node carries: read
    # from the run handle, as a deferred run's last returns are.
    followed, result = runs.on_thread(lambda: asyncio.run(nodes()))
    loaded = turnfold.load(result)
    assert structured_answers(loaded)
    assert followed.transcript.warnings == []
    assert followed.transcript.entries == loaded.entries

    async def events(follower: Any) -> Any:
        async with _output_tool_agent().run_stream_events("Which city?") as stream:
            follower.begin(stream)
            seen = [event async for event in stream]
        for event in seen:
            follower.feed(event)
        follower.close()
        return seen[-1].result

    transcript = Transcript(metadata={"source_format": adapter.NAME})
    result = runs.on_thread(lambda: asyncio.run(events(adapter.Follower(transcript))))
    assert transcript.warnings == []
    assert transcript.entries == turnfold.load(result).entries
    assert json.loads(answer_of(transcript)[1]) == CITY


def test_P2_native_or_prompted_output_is_its_own_text_and_gets_no_second_answer() -> None:
    from pydantic_ai import Agent, NativeOutput, PromptedOutput
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    def script(messages: list[Any], info: Any) -> Any:
        return ModelResponse(parts=[TextPart('{"name": "Paris", "population": 3}')])

    for output in (NativeOutput(City), PromptedOutput(City)):
        agent = Agent(FunctionModel(script), output_type=output)
        result = runs.on_thread(lambda agent=agent: agent.run_sync("Which city?"))
        transcript = turnfold.load(result)
        answer, _ = answer_of(transcript)
        assert answer.text == '{"name": "Paris", "population": 3}'  # the default unsaid
        assert structured_answers(transcript) == []


def test_P2_a_plain_string_output_is_shown_as_before(result: Any) -> None:
    transcript = turnfold.load(result)
    assert answer_of(transcript)[0].text == runs.ANSWER
    assert structured_answers(transcript) == []


def test_P2_an_output_of_deferred_calls_is_never_an_answer() -> None:
    """An output that is a ``DeferredToolRequests`` is calls left waiting, never an answer,
    even when none of them is a call this transcript holds."""
    saved = {
        "messages": [
            {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Go."}]},
            {"kind": "response", "parts": [{"part_kind": "text", "content": "Waiting."}]},
        ],
        "output": {"calls": [], "approvals": [], "metadata": {}},
    }
    transcript = turnfold.load(json.dumps(saved), format=adapter.NAME)
    assert structured_answers(transcript) == []
    assert answer_of(transcript)[0].text == "Waiting."


# --- a run given a message history (a conversation's next turn) ---------------------------------

AGAIN = "And once more?"


def _again(first: Any) -> Any:
    """The scripted agent's next turn: ``run_sync`` given ``first``'s messages as its history
    (its model answers at once: the history's requests count as its steps)."""
    history = first.all_messages()
    return runs.on_thread(lambda: runs.agent().run_sync(AGAIN, message_history=history))


def _each_response_once(messages: list[Any]) -> dict[str, int]:
    """The input and output tokens of every response of ``messages``, from pydantic-ai's own
    types, apart from the loader."""
    from pydantic_ai.messages import ModelResponse

    responses = [m for m in messages if isinstance(m, ModelResponse)]
    return {
        "input_tokens": sum(m.usage.input_tokens for m in responses),
        "output_tokens": sum(m.usage.output_tokens for m in responses),
    }


def test_U1_a_run_given_a_message_history_counts_every_response_shown_once(result: Any) -> None:
    """``RunUsage`` counts only the run's own requests, while the run's messages (and the
    transcript) hold the history's responses too: the session's tokens are every response's,
    as a load of the saved messages counts them, and the ``RunUsage`` stays ``run_usage``."""
    from pydantic import TypeAdapter
    from pydantic_ai.run import AgentRunResult

    from turnfold.session import session_facts

    again = _again(result)
    shown = _each_response_once(again.all_messages())
    assert shown != counts_of(again.usage.__dict__)  # the run's usage lacks the history's
    for form in (again, TypeAdapter(AgentRunResult).dump_json(again), again.all_messages_json()):
        transcript = turnfold.load(form)
        assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
            runs.PROMPT,
            AGAIN,
        ]
        facts = session_facts(transcript)
        assert {k: facts.tokens[k] for k in shown} == shown, form
    loaded = turnfold.load(again)
    assert loaded.metadata["usage"]["requests"] == 5  # four of the first run, one of this
    assert loaded.metadata["run_usage"]["requests"] == again.usage.requests == 1
    assert counts_of(loaded.metadata["run_usage"]) == counts_of(again.usage.__dict__)


async def _events_again(first: Any, follower: Any) -> list[Any]:
    seen = []
    history = first.all_messages()
    async with runs.agent().run_stream_events(AGAIN, message_history=history) as events:
        follower.begin(events)
        async for event in events:
            follower.feed(event)
            seen.append(event)
    follower.close()
    return seen


async def _iter_again(first: Any) -> tuple[Any, Any]:
    from turnfold.following import follow

    async with runs.agent().iter(AGAIN, message_history=first.all_messages()) as run:
        followed = follow(run, display=False)
        async for _ in followed:
            pass
    return followed, run.result


def test_A2_a_followed_run_given_a_message_history_shows_it_as_load_does(result: Any) -> None:
    """The history the run was given is in no event: read from the run handle, before the
    run's own prompt (not its first prompt in its place), its responses whole; the streamed
    responses then take their own usage and timestamps, not the history's."""
    import asyncio

    transcript = Transcript(metadata={"source_format": adapter.NAME})
    follower = adapter.Follower(transcript)
    events = runs.on_thread(lambda: asyncio.run(_events_again(result, follower)))
    loaded = turnfold.load(events[-1].result)
    assert transcript.warnings == []
    assert transcript.entries == loaded.entries
    assert transcript.metadata["usage"] == loaded.metadata["usage"]
    assert transcript.metadata["run_usage"] == loaded.metadata["run_usage"]
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == [runs.PROMPT, AGAIN]

    followed, finished = runs.on_thread(lambda: asyncio.run(_iter_again(result)))
    assert followed.transcript.warnings == []
    assert followed.transcript.entries == turnfold.load(finished).entries


# --- a tool's content for the model (ToolReturn.content) ----------------------------------------


def _content_agent() -> Any:
    """An agent whose tool ``look`` returns a value and, as ``ToolReturn.content``, a text and
    an image the model reads as user content; and whose tool ``danger`` needs approval."""
    from pydantic_ai import Agent, BinaryContent, DeferredToolRequests, ToolReturn
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        prompt = next(p for p in messages[-1].parts if isinstance(p, UserPromptPart))
        if messages[-1] is messages[0] and prompt.content == "Look.":
            return ModelResponse(parts=[ToolCallPart("look", {}, tool_call_id="l1")])
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("danger", {}, tool_call_id="d1")])
        return ModelResponse(parts=[TextPart("Seen.")])

    async def stream(messages: list[Any], info: Any) -> Any:
        response = respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                yield part.content
            else:
                yield {
                    index: DeltaToolCall(
                        name=part.tool_name, json_args="{}", tool_call_id=part.tool_call_id
                    )
                }

    agent = Agent(
        FunctionModel(respond, stream_function=stream), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    def look() -> Any:
        """A screenshot."""
        image = BinaryContent(b"\x89PNG\r\n\x1a\n", media_type="image/png")
        return ToolReturn(return_value="screenshot taken", content=["The screen:", image])

    @agent.tool_plain(requires_approval=True)
    def danger() -> str:
        """Needs approval."""
        return "done"

    return agent


def test_L1_a_tool_s_content_for_the_model_is_its_result_not_the_user_s_prompt() -> None:
    """``ToolReturn(content=...)`` reaches the model as a ``UserPromptPart`` after the
    returns; it is the tool's output: the rest of its call's result (text and image), loaded,
    saved or followed, not a prompt of the user's that would split the turn. A new run's prompt
    beside the results of deferred calls (another run's request) stays the user's."""
    import asyncio

    from pydantic_ai import DeferredToolResults

    from turnfold.following import follow

    agent = _content_agent()
    result = runs.on_thread(lambda: agent.run_sync("Look."))

    async def events() -> Transcript:
        transcript = Transcript(metadata={"source_format": adapter.NAME})
        follower = adapter.Follower(transcript)
        async with agent.run_stream_events("Look.") as stream:
            follower.begin(stream)
            async for event in stream:
                follower.feed(event)
        follower.close()
        return transcript

    async def nodes() -> Any:
        async with agent.iter("Look.") as run:
            followed = follow(run, display=False)
            async for _ in followed:
                pass
        return followed.transcript

    forms = (
        turnfold.load(result),
        turnfold.load(result.all_messages_json()),
        runs.on_thread(lambda: asyncio.run(events())),
        runs.on_thread(lambda: asyncio.run(nodes())),
    )
    for form in forms:
        prompts = [e.text for e in form.entries if isinstance(e, UserMessage)]
        assert prompts == ["Look."], forms.index(form)
        (call,) = form.tool_calls()
        assert call.result is not None
        assert call.result.text == "screenshot taken\n\nThe screen:"
        assert [i.media_type for i in call.result.images] == ["image/png"]
        assert call.meta["user_content"] is True
        assert isinstance(form.entries[-1], AssistantText)

    stopped = runs.on_thread(lambda: agent.run_sync("Do it."))
    approved = DeferredToolResults(approvals={"d1": True})
    resumed = runs.on_thread(
        lambda: agent.run_sync(
            "And say thanks.",
            message_history=stopped.all_messages(),
            deferred_tool_results=approved,
        )
    )
    transcript = turnfold.load(resumed)
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == ["Do it.", "And say thanks."]
    assert [c.result.text for c in transcript.tool_calls() if c.result] == ["done"]
