"""Live recording (spec L-5): the Recorder API, observers, thread safety."""

from __future__ import annotations

import copy
import itertools
import json
import pickle
import threading

import pytest

from turnfold.display import transcript_mimebundle
from turnfold.model import (
    AssistantText,
    ToolCall,
    ToolResult,
    Transcript,
    TranscriptChange,
    UserMessage,
)
from turnfold.recording import Recorder


def clock() -> str:
    return "2026-01-01T00:00:00Z"


def recorder() -> tuple[Recorder, list[TranscriptChange]]:
    rec = Recorder(clock=clock, cwd="/repo")
    changes: list[TranscriptChange] = []
    rec.transcript.observe(changes.append)
    return rec, changes


def test_L5_a_turn_recorded_step_by_step() -> None:
    rec, changes = recorder()
    rec.user("Fix the tests")
    thinking = rec.thinking("Let me look", streaming=True)
    rec.stream(thinking, " around.", done=True)
    read = rec.start_tool("Read", {"file_path": "/repo/src/a.ts"})
    grep = rec.start_tool("Grep", {"pattern": "TODO"}, call_id="toolu_9")
    rec.finish_tool(read, "contents")
    rec.finish_tool("toolu_9", "src/a.ts:1", status="error")
    rec.assistant("Done.")
    t = rec.transcript
    assert [e.kind for e in t] == ["user", "thinking", "tool_call", "tool_call", "assistant"]
    assert thinking.text == "Let me look around."
    assert not thinking.streaming
    assert read.description == "src/a.ts"  # relative to cwd, from the arguments
    assert (read.status, read.result) == ("success", ToolResult(text="contents"))
    assert (grep.call_id, grep.status) == ("toolu_9", "error")
    assert read.batch_id == grep.batch_id is not None
    assert read.started_at == read.ended_at == clock()
    assert [(c.action, c.entry.kind, c.fields) for c in changes] == [
        ("append", "user", ()),
        ("append", "thinking", ()),
        ("update", "thinking", ("text", "streaming")),
        ("append", "tool_call", ()),
        ("append", "tool_call", ()),
        ("update", "tool_call", ("status", "ended_at", "result")),
        ("update", "tool_call", ("status", "ended_at", "result")),
        ("append", "assistant", ()),
    ]


def test_L5_batches_close_on_text_thinking_user_and_end_batch() -> None:
    rec, _ = recorder()
    a = rec.start_tool("Read")
    b = rec.start_tool("Read")
    rec.end_batch()
    c = rec.start_tool("Read")
    rec.assistant("progress")
    d = rec.start_tool("Bash")
    rec.thinking("hm")
    e = rec.start_tool("Bash")
    rec.user("more")
    f = rec.start_tool("Bash")
    batches = [x.batch_id for x in (a, b, c, d, e, f)]
    assert batches[0] == batches[1]
    assert len(set(batches)) == 5


def test_L5_ids_are_stable_while_the_transcript_grows() -> None:
    rec, _ = recorder()
    first = rec.user("one")
    ids = [first.id]
    for n in range(50):
        ids.append(rec.assistant(str(n)).id)
    assert [e.id for e in rec.transcript] == ids
    assert first.id == "e0"


def test_L5_update_tool_status_and_confirmation() -> None:
    rec, changes = recorder()
    call = rec.start_tool("Bash", {"command": "rm -rf build"})
    rec.update_tool(call, status="confirming")
    rec.update_tool(call, status="executing", result="removing…")
    assert call.status == "executing"
    assert call.result == ToolResult(text="removing…")
    assert changes[-1].fields == ("status", "result")
    with pytest.raises(ValueError, match="cannot be 'executing'"):
        rec.finish_tool(call, status="executing")


def test_L5_abort_cancels_running_calls_and_fail_records_an_error() -> None:
    rec, _ = recorder()
    done = rec.start_tool("Read")
    rec.finish_tool(done, "x")
    running = rec.start_tool("Bash")
    waiting = rec.start_tool("Bash", status="confirming")
    marker = rec.abort("user pressed stop")
    assert (done.status, running.status, waiting.status) == ("success", "cancelled", "cancelled")
    assert marker.reason == "user pressed stop"
    error = rec.fail("API error 529")
    assert rec.transcript.entries[-1] is error
    assert error.message == "API error 529"


def test_L5_attach_subagent_and_label_and_pending() -> None:
    rec, changes = recorder()
    task = rec.start_tool("Task", {"description": "research"})
    child = Recorder(clock=clock)
    child.user("research")
    agent = rec.attach_subagent(task, child.transcript, name="researcher", tool_count=0)
    assert task.subagent is agent
    assert (agent.name, agent.task, agent.tool_count) == ("researcher", "research", 0)
    assert changes[-1].fields == ("subagent",)
    label = rec.label([task], "Researched imports")
    assert label.call_ids == [task.call_id]
    pending = rec.pending("permission", "Allow rm?", call_id=task.call_id)
    assert rec.transcript.entries[-1] is pending


def test_L5_unknown_call_and_field_are_clear_errors() -> None:
    rec, _ = recorder()
    with pytest.raises(KeyError, match="nope"):
        rec.finish_tool("nope")
    call = rec.start_tool("Read")
    with pytest.raises(AttributeError, match="colour"):
        rec.transcript.update(call, colour="red")
    with pytest.raises(AttributeError, match="'id'"):
        rec.transcript.update(call, id="other")
    with pytest.raises(KeyError):
        rec.transcript.update(ToolCall(id=call.id, name="Read"), status="success")


def test_L5_a_value_of_the_wrong_kind_is_refused_at_the_call() -> None:
    """The agent's own line gets the error, not the view later (it failed on a None text or
    an unknown status when drawn), and the transcript is left as it was."""
    rec, _ = recorder()
    with pytest.raises(TypeError, match=r"Recorder\.user\(\) takes text \(a str\), not NoneType"):
        rec.user(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Recorder\.assistant\(\) takes text .*not list"):
        rec.assistant(["done"])  # type: ignore[arg-type]
    call = rec.start_tool("Bash", {"command": "ls"})
    with pytest.raises(ValueError, match=r"no tool status 'done'; one of pending, executing"):
        rec.finish_tool(call, "ok", status="done")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no tool status 'ok'"):
        rec.start_tool("Read", status="ok")  # type: ignore[arg-type]
    assert [e.kind for e in rec.transcript.entries] == ["tool_call"]
    assert call.status == "executing"


def test_L5_a_tool_s_output_of_any_kind_is_shown_as_a_loader_shows_it() -> None:
    """Tools return dicts, lists and numbers: the result is their readable JSON."""
    rec, _ = recorder()
    call = rec.finish_tool(rec.start_tool("lookup", {"q": "x"}), {"rows": 2, "ok": True})
    assert call.result is not None
    assert json.loads(call.result.text or "") == {"rows": 2, "ok": True}
    counted = rec.finish_tool(rec.start_tool("count"), 3)
    assert counted.result is not None
    assert counted.result.text == "3"
    transcript_mimebundle(rec.transcript)


def test_L5_observers_can_stop_and_see_only_later_changes() -> None:
    t = Transcript([UserMessage(text="before")])
    seen: list[TranscriptChange] = []
    stop = t.observe(seen.append)
    t.append(AssistantText(text="during"))
    stop()
    stop()  # stopping twice is harmless
    t.append(AssistantText(text="after"))
    assert [c.entry.text for c in seen] == ["during"]  # type: ignore[attr-defined]


def test_L5_appending_from_many_threads_is_safe_and_observed_in_order() -> None:
    rec = Recorder(clock=clock)
    observed: list[str] = []
    rec.transcript.observe(
        lambda change: observed.append(change.entry.id) if change.action == "append" else None
    )
    start = threading.Barrier(8)

    def agent(n: int) -> None:
        start.wait()
        for i in range(200):
            call = rec.start_tool("Bash", {"command": f"echo {n}-{i}"})
            rec.finish_tool(call, f"{n}-{i}")
            rec.assistant(f"{n}-{i}")

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entries = rec.transcript.entries
    assert len(entries) == 8 * 200 * 2
    assert len({e.id for e in entries}) == len(entries)
    assert observed == [e.id for e in entries]
    calls = rec.transcript.tool_calls()
    assert all(c.status == "success" for c in calls)
    assert len({c.call_id for c in calls}) == len(calls)


def test_L5_transcripts_copy_and_pickle_without_their_observers() -> None:
    rec, _ = recorder()
    rec.user("x")
    for clone in (copy.deepcopy(rec.transcript), pickle.loads(pickle.dumps(rec.transcript))):
        assert clone == rec.transcript
        seen: list[TranscriptChange] = []
        clone.observe(seen.append)
        clone.append(AssistantText(text="only in the clone"))
        assert len(seen) == 1
        assert len(rec.transcript) == 1


def test_L5_recorded_transcript_round_trips() -> None:
    import turnfold

    rec, _ = recorder()
    rec.user("go")
    for name, status in itertools.product(["Read", "Bash"], ["success", "error"]):
        rec.finish_tool(rec.start_tool(name, {"command": "x"}), "out", status=status)  # type: ignore[arg-type]
    rec.abort()
    assert turnfold.load(rec.transcript.dump()) == rec.transcript


# --- MessageSync: a growing OpenAI or Anthropic message list ----------------------------------

from turnfold.recording import MessageSync  # noqa: E402


def openai_turn() -> list[dict[str, object]]:
    return [
        {"role": "user", "content": "What is in src?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "list_directory", "arguments": '{"path": "src"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"},
        {"role": "assistant", "content": "Two files: a.py and b.py."},
    ]  # fmt: skip


def anthropic_turn() -> list[dict[str, object]]:
    return [
        {"role": "user", "content": "What is in src?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "List it.", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "LS", "input": {"path": "src"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py", "is_error": True},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "It failed."}]},
    ]  # fmt: skip


@pytest.mark.parametrize(("messages", "format"), [(openai_turn(), "openai"),
                                                  (anthropic_turn(), "anthropic")])  # fmt: skip
def test_L5_sync_appends_only_the_new_part(messages: list[dict[str, object]], format: str) -> None:
    sync = MessageSync()
    changes: list[TranscriptChange] = []
    sync.transcript.observe(changes.append)
    grown: list[dict[str, object]] = []
    counts = []
    for message in messages:
        grown.append(message)
        counts.append(sync.sync(grown))
    assert counts == [1, 1, 1, 1]
    assert sync.sync(grown) == 0
    assert sync.format == format
    (call,) = sync.transcript.tool_calls()
    # The call was appended while running, then updated in place when its result arrived.
    call_changes = [(c.action, c.fields) for c in changes if c.entry is call]
    assert call_changes[0] == ("append", ())
    assert any(action == "update" and "status" in fields for action, fields in call_changes[1:])
    assert call.status == ("error" if format == "anthropic" else "unknown")
    assert call.result is not None
    kinds = [e.kind for e in sync.transcript]
    assert kinds[0] == "user"
    assert kinds[-1] == "assistant"
    assert kinds.count("user") == 1  # a tool result is not a user prompt
    assert messages == (openai_turn() if format == "openai" else anthropic_turn())  # untouched


def test_L5_sync_matches_a_static_load_of_the_same_list() -> None:
    import turnfold

    sync = MessageSync()
    messages = anthropic_turn()
    for end in range(1, len(messages) + 1):
        sync.sync(messages[:end])
    loaded = turnfold.load(messages)
    assert [(e.kind, getattr(e, "text", None)) for e in sync.transcript] == [
        (e.kind, getattr(e, "text", None)) for e in loaded
    ]


def test_L5_sync_refuses_a_list_that_shrank() -> None:
    sync = MessageSync()
    sync.sync(openai_turn())
    with pytest.raises(ValueError, match="shrank from 4 to 1"):
        sync.sync(openai_turn()[:1])


def test_L5_sync_with_an_explicit_format_and_unknown_format() -> None:
    sync = MessageSync(format="anthropic")
    sync.sync(anthropic_turn()[:1])
    assert sync.format == "anthropic"
    with pytest.raises(ValueError, match="not 'codex'"):
        MessageSync(format="codex").sync(openai_turn())
