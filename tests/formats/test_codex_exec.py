"""Codex ``exec --json`` events (spec H-5, H-6; issue 13).

``codex_v0.171.0_exec-json_spawn-agent.jsonl`` is the stdout of the real ``codex exec --json``
(Codex CLI 0.171.0 from ``tests/agents``) against the harness's scripted model on 127.0.0.1;
``hand-made_exec-json_every-item.jsonl`` is hand-made from ``codex-rs/exec/src/exec_events.rs``
to hold every item type, a declined command, a failed patch and MCP call, a failed turn. The
``…_tokens-*`` files are a real run and its ``resume``, each response with token counts of its
own (recipe: ``../claude-stream-json/README.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.agents.codex_exec import call_status
from turnfold.formats.source import open_source
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    UserMessage,
)
from turnfold.process import plan_projection, segment_answer
from turnfold.session import session_facts
from turnfold.usage import USAGE_KINDS, transcript_tokens

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "codex-exec-json"
REAL = FIXTURES / "codex_v0.171.0_exec-json_spawn-agent.jsonl"
EVERY = FIXTURES / "hand-made_exec-json_every-item.jsonl"
TOKENS_FIRST = FIXTURES / "codex_v0.171.0_exec-json_tokens-first.jsonl"
TOKENS_RESUMED = FIXTURES / "codex_v0.171.0_exec-json_tokens-resumed.jsonl"
FATAL = FIXTURES / "codex_v0.171.0_exec-json_fatal-error.jsonl"


def test_H5_a_real_exec_json_run_reads_as_the_session_it_was() -> None:
    transcript = turnfold.load(REAL)
    assert transcript.metadata["source_format"] == "codex-exec-json"
    assert transcript.metadata["session_id"] == "01a2339e-0289-7703-8350-d1745609cafb"
    assert transcript.warnings == []
    calls = [(c.name, c.status) for c in transcript.tool_calls()]
    assert calls == [
        ("exec_command", "success"), ("exec_command", "success"), ("exec_command", "success"),
        ("exec_command", "error"), ("apply_patch", "success"), ("spawn_agent", "success"),
        ("wait", "success"),
    ]  # fmt: skip
    failed = transcript.tool_calls()[3]
    assert failed.result is not None
    assert "TF-FAIL-OUT" in (failed.result.text or "")
    assert any(isinstance(e, Thinking) for e in transcript.entries)
    assert isinstance(transcript.entries[-1], AssistantText)


def test_H6_a_failed_turn_repeating_its_error_shows_the_error_once() -> None:
    """Codex prints a fatal error as an ``error`` event, then ends the turn with a
    ``turn.failed`` repeating it (its last critical error): one error, not two."""
    transcript = turnfold.load(FATAL)
    assert transcript.warnings == []
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert len(errors) == 1
    assert "Invalid value for 'messages'. (TF-ERR-FATAL)" in errors[0]
    assert transcript.metadata["outcome"] == "error"
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [("exec_command", "success")]
    answer, notice = (
        [e.text for e in transcript.entries if isinstance(e, AssistantText)],
        [e.text for e in transcript.entries if isinstance(e, SystemNotice)],
    )
    assert answer == ["TF-RETRIED: the check, once the model answered."]
    assert notice
    assert notice[0].startswith("Model metadata for `fake-model` not found.")
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    # A turn.failed of its own (no error event before it) is still the turn's error.
    alone = turnfold.load(
        '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
        '{"type":"turn.failed","error":{"message":"boom"}}\n',
        format="codex-exec-json",
    )
    assert [e.message for e in alone.entries if isinstance(e, AssistantError)] == ["boom"]


def test_H5_a_spawned_agent_is_a_sub_agent_whose_steps_the_stream_does_not_hold() -> None:
    spawn, wait = turnfold.load(REAL).tool_calls()[5:7]
    assert spawn.subagent is not None
    assert spawn.subagent.steps_missing
    assert spawn.subagent.task == "TF-SUBTASK: echo a word and report back."
    assert wait.result is not None
    assert "TF-SUB-DONE" in (wait.result.text or "")


def test_H5_every_item_type_becomes_an_entry_updated_by_its_later_events() -> None:
    transcript = turnfold.load(EVERY)
    assert transcript.warnings == []
    calls = [(c.name, c.status) for c in transcript.tool_calls()]
    assert calls == [
        ("update_plan", "unknown"), ("web_search", "success"), ("mcp__docs__search", "success"),
        ("mcp__docs__fetch", "error"), ("exec_command", "error"), ("apply_patch", "error"),
        ("exec_command", "unknown"),
    ]  # fmt: skip
    plan = transcript.tool_calls()[0]
    assert plan.result is not None
    assert plan.result.kind == "plan"
    assert "[x] TF-STEP-1" in (plan.result.text or "")
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == [
        "TF-TURN-FAILED: stream disconnected before completion", "TF-FATAL: reconnecting failed"
    ]  # fmt: skip
    assert transcript.metadata["outcome"] == "error"


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"status": "completed", "exit_code": 0}, "success"),
        ({"status": "completed", "exit_code": 1}, "error"),
        ({"status": "failed", "exit_code": None}, "error"),
        ({"status": "declined"}, "error"),
        ({"status": "in_progress"}, "unknown"),
        ({"status": "completed", "error": {"message": "x"}}, "error"),
    ],
)
def test_H5_a_call_s_status_follows_its_status_and_exit_code(
    item: dict[str, object], expected: str
) -> None:
    assert call_status(item) == expected


def test_H5_exec_json_is_not_read_as_a_codex_rollout() -> None:
    assert which_format(open_source(REAL)[0]) == "codex-exec-json"
    assert which_format(open_source(EVERY)[0]) == "codex-exec-json"


def test_H5_an_mcp_call_s_result_shows_every_block_kind() -> None:
    """``codex exec --json`` writes an MCP call's ``CallToolResult`` as the server sent it
    (``McpToolCallItemResult``: ``content`` and ``structured_content``): a link, an embedded
    resource and audio are named as MCP results are everywhere (:mod:`turnfold.formats.mcp`),
    not shown as their JSON."""
    content = [
        {"type": "text", "text": "found"},
        {"type": "resource_link", "uri": "file:///docs/a.md", "name": "a.md"},
        {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "embedded text"}},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
    ]
    item = {"id": "item_1", "type": "mcp_tool_call", "server": "docs", "tool": "search",
            "arguments": {}, "status": "completed", "error": None,
            "result": {"content": content, "structured_content": {"hits": 1}}}  # fmt: skip
    events = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": item},
    ]
    (call,) = turnfold.load(events, format="codex-exec-json").tool_calls()
    assert call.result is not None
    assert call.result.structured == {"hits": 1}
    lines = (call.result.text or "").splitlines()
    assert [lines[0], lines[2]] == ["found", "embedded text"]
    assert "file:///docs/a.md" in lines[1]
    assert "audio/wav" in lines[3]
    assert "{" not in (call.result.text or "")


def test_H5_an_mcp_call_s_unknown_blocks_are_said_once_and_an_empty_result_is_none() -> None:
    """As every reader of MCP results (:func:`turnfold.formats.mcp.warn_unknown`): a block of
    a type MCP does not define is shown as its JSON and warned of once, its event accounted as
    warned about; a result of no content is no result, and an error comes before the content."""
    video = {"type": "video", "uri": "file:///clip.mp4"}

    def item(n: int, result: object, error: object = None) -> dict[str, object]:
        return {"type": "item.completed", "item": {
            "id": f"item_{n}", "type": "mcp_tool_call", "server": "s", "tool": f"t{n}",
            "arguments": {}, "status": "completed", "error": error, "result": result}}  # fmt: skip

    events = [
        {"type": "thread.started", "thread_id": "t"},
        item(1, {"content": [video], "structured_content": None}),
        item(2, {"content": [video], "structured_content": None}),
        item(3, {"content": [], "structured_content": None}),
        item(4, {"content": [{"type": "text", "text": "partial"}]}, {"message": "timed out"}),
    ]
    transcript = turnfold.load(events, format="codex-exec-json")
    first, second, empty, failed = transcript.tool_calls()
    assert first.result is not None
    assert second.result == first.result
    assert first.result.text == json.dumps(video, indent=2)
    assert empty.result is None
    assert failed.result is not None
    assert failed.result.text == "timed out\npartial"
    assert [w.reason for w in transcript.warnings] == [
        "unknown MCP content block type 'video' shown as JSON"
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["item/mcp_tool_call"] == {"warned": 1, "mapped": 3}


def _sent(*numbers: int) -> dict[str, int]:
    """What the scripted server sent with the play's responses ``numbers``, summed (its
    README: every count a number of its own; input holds the cached, output the reasoning)."""
    return {
        "input_tokens": sum(2000 * n + 120 for n in numbers),
        "output_tokens": sum(20 * n + 9 for n in numbers),
        "cache_read_tokens": sum(1000 * n + 20 for n in numbers),
        "reasoning_tokens": sum(10 * n + 4 for n in numbers),
    }


@pytest.mark.parametrize(
    ("path", "responses"),
    [(TOKENS_FIRST, (1, 2, 4, 6)), (TOKENS_RESUMED, (1, 2, 4, 6, 7, 8))],
    ids=["first", "resumed"],
)
def test_U1_turn_completed_is_the_thread_s_usage_so_far_not_the_run_s(
    path: Path, responses: tuple[int, ...]
) -> None:
    """``turn.completed``'s ``usage`` is Codex's ``total_token_usage``: every response of the
    thread since it started (a resumed run's holds the first run's too; the spawned agent's
    thread, responses 3 and 5, is not in it). It is the session's so far, and no response's or
    run's own counts are in the stream: the transcript's tokens are not recorded."""
    transcript = turnfold.load(path)
    assert transcript.metadata["session_usage"] == _sent(*responses)
    assert not any(isinstance(e, USAGE_KINDS) and e.usage for e in transcript.entries)
    assert transcript_tokens(transcript).combined == {}
    assert session_facts(transcript).tokens == {}


LEGACY = FIXTURES / "hand-made_legacy-exec-json_codex-0.43-shape.jsonl"


def test_H5_the_legacy_exec_json_of_codex_before_0_44_is_read() -> None:
    """``codex exec --json`` before 0.44 printed settings, the prompt and ``{"id", "msg"}``
    protocol events; it was "not a transcript". The fixture is hand-made in the shape of
    ``event_processor_with_json_output.rs`` and ``protocol.rs`` at openai/codex 7fc3edf8a^."""
    transcript = turnfold.load(LEGACY)
    meta = transcript.metadata
    assert meta["source_format"] == "codex-exec-json"
    assert (meta["model"], meta["cwd"]) == ("gpt-5-codex", "/home/u/proj")
    assert transcript.warnings == []
    [prompt] = [e for e in transcript if isinstance(e, UserMessage)]
    assert prompt.text == "Add a greeting to hello.txt and check the tests"
    calls = transcript.tool_calls()
    assert [(c.name, c.description, c.status) for c in calls] == [
        ("exec_command", "ls", "success"),
        ("apply_patch", "hello.txt", "success"),
        ("mcp__docs__search", "greeting style", "success"),
        ("mcp__docs__fetch", None, "error"),  # Err: the server disconnected
        ("web_search", "pytest exit code 5", "success"),
        ("update_plan", None, "success"),
        ("exec_command", "pytest -q", "error"),  # exit code 5
    ]
    results = [c.result.text if c.result else None for c in calls]
    assert results[0] == "hello.txt\ntests\n"
    assert results[2] == "Use a friendly tone."
    assert results[3] is not None
    assert "server disconnected" in results[3]
    assert calls[0].duration_ms == pytest.approx(41.273)
    # Each token_count is one response's: on its entries, summed; the last total the thread's.
    carriers = [e for e in transcript if isinstance(e, USAGE_KINDS) and e.usage is not None]
    assert [(type(e).__name__, e.usage.input_tokens) for e in carriers] == [
        ("Thinking", 5210),
        ("AssistantText", 6420),
    ]
    assert meta["usage"] == meta["session_usage"] == {
        "input_tokens": 11630, "output_tokens": 180, "cache_read_tokens": 9216,
        "reasoning_tokens": 64,
    }  # fmt: skip
    [notice] = [e for e in transcript if isinstance(e, SystemNotice)]
    assert notice.level == "warning"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["msg/exec_command_output_delta"] == {"ignored": 1}
    assert transcript.accounting.counts["config"] == {"mapped": 1}


def test_L4_a_legacy_event_of_an_unknown_call_or_type_is_warned_and_accounted() -> None:
    lines = [
        {"id": "0", "msg": {"type": "task_started"}},
        {"id": "0", "msg": {"type": "exec_command_end", "call_id": "nope", "exit_code": 0}},
        {"id": "0", "msg": {"type": "brand_new_event"}},
        {"id": "0", "msg": {"type": "error", "message": "stream disconnected"}},
    ]
    transcript = turnfold.load("".join(json.dumps(r) + "\n" for r in lines))
    assert transcript.metadata["source_format"] == "codex-exec-json"
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (2, "msg/exec_command_end for an unknown call_id 'nope' skipped"),
        (3, "unknown event type 'msg/brand_new_event' skipped"),
    ]
    assert transcript.metadata["outcome"] == "error"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts["msg/exec_command_end"] == {"warned": 1}


def test_a_command_is_described_without_the_shell_wrapper_codex_prints() -> None:
    # Codex 0.171 prints each command as one quoted string, /bin/bash -lc '<the command>'.
    calls = turnfold.load(REAL).tool_calls()
    commands = [(c.args["command"], c.description) for c in calls if c.name == "exec_command"]
    assert commands == [
        ("/bin/bash -lc 'cat notes.txt'", "cat notes.txt"),
        ("/bin/bash -lc 'ls -la .'", "ls -la ."),
        ("/bin/bash -lc \"printf 'TF-OK-%s\\\\n' 23\"", "printf 'TF-OK-%s\\n' 23"),
        (
            "/bin/bash -lc 'echo TF-FAIL-OUT; ls /tf-missing; exit 3'",
            "echo TF-FAIL-OUT; ls /tf-missing; exit 3",
        ),
    ]


# --- turns whose prompt the stream does not record (spec P-1) -------------------------------


def _marks(transcript: turnfold.Transcript) -> list[bool]:
    """For each prompt of the transcript: whether it marks a prompt not recorded."""
    return [
        (e.text, e.meta) == ("", {"prompt_not_recorded": True})
        for e in transcript.entries
        if isinstance(e, UserMessage)
    ]


def _answers(transcript: turnfold.Transcript) -> list[str | None]:
    answers = [segment_answer(p.segment) for p in plan_projection(transcript) if p.segment]
    return [a.text if a else None for a in answers]


def test_P1_turn_started_begins_a_turn_whose_prompt_is_not_recorded() -> None:
    """``turn.started`` carries no prompt (nor does any event of the real stream): the turn
    begins with a mark saying so, after the notice Codex printed before it, and the session
    has no title made of it."""
    transcript = turnfold.load(TOKENS_FIRST)
    assert transcript.warnings == []
    assert [e.kind for e in transcript.entries[:3]] == ["system", "user", "thinking"]
    assert _marks(transcript) == [True]
    assert _answers(transcript) == ["TF-DONE-1: read and delegated."]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["turn.started"] == {"mapped": 1}
    row = turnfold.scan([TOKENS_FIRST], cache=False).to_pandas().iloc[0]
    assert row.isna()["title"]


def test_P1_a_resumed_exec_appended_to_the_first_is_its_second_turn(tmp_path: Path) -> None:
    """``codex exec --json resume <thread> … >> run.jsonl``: the real first run's stream and
    its resumed run's in one file read as two turns, each with its own answer."""
    both = tmp_path / "run.jsonl"
    both.write_text(TOKENS_FIRST.read_text() + TOKENS_RESUMED.read_text())
    transcript = turnfold.load(both)
    assert transcript.warnings == []
    assert _marks(transcript) == [True, True]
    assert _answers(transcript) == [
        "TF-DONE-1: read and delegated.", "TF-DONE-2: still fine after the resume."]  # fmt: skip
    assert session_facts(transcript).turns == 2


def test_L4_a_stream_cut_off_mid_turn_says_the_turn_s_end_is_not_recorded(
    tmp_path: Path,
) -> None:
    """The real stream without its last line (``turn.completed``), as a closed pipe leaves
    it: everything read is shown, a warning says how the run ended is not recorded, and the
    turn reads stopped (the rule every headless stream shares, ``common.stream_cut_off``)."""
    lines = TOKENS_FIRST.read_text().splitlines(keepends=True)
    assert json.loads(lines[-1])["type"] == "turn.completed"
    started = next(i for i, line in enumerate(lines, 1) if '"turn.started"' in line)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]))
    transcript = turnfold.load(cut)
    assert [w.reason for w in transcript.warnings] == [
        f"the stream ends inside the run begun on line {started} (no turn.completed or "
        "turn.failed): how that run ended is not recorded"
    ]
    assert transcript.metadata["outcome"] == "incomplete"
    assert isinstance(transcript.entries[-1], AbortMarker)
    assert _answers(transcript) == ["TF-DONE-1: read and delegated."]
    assert len(transcript.tool_calls()) == len(turnfold.load(TOKENS_FIRST).tool_calls())
