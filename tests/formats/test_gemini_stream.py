"""Gemini CLI ``--output-format stream-json`` (spec H-5, H-6), and Qwen Code's stream-json.

Every fixture is the stdout of the real CLI (Gemini CLI 0.61.0, Qwen Code 0.24.4, the pinned
``tests/agents`` builds) run by the ``tests/agents`` harness against its scripted model on
127.0.0.1 inside ``unshare -n`` (tests/fixtures/SOURCES.md says how). The checks compare the
loaded transcript with counts made here from the file's own events, not with the loader's.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.agents.gemini_stream import call_status
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    Transcript,
    UserMessage,
)
from turnfold.usage import counts_of, transcript_tokens

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents"
GEMINI = FIXTURES / "gemini-stream-json"
REAL = GEMINI / "gemini-cli_v0.61.0_stream-json_tools-subagent.jsonl"
RESUMED = GEMINI / "gemini-cli_v0.61.0_stream-json_resumed.jsonl"
FAILED = GEMINI / "gemini-cli_v0.61.0_stream-json_failed-commands.jsonl"
FAILED_DEBUG = GEMINI / "gemini-cli_v0.61.0_stream-json_failed-commands_debug.jsonl"
THINKING_ONLY = GEMINI / "gemini-cli_v0.61.0_stream-json_thinking-only-error.jsonl"
API_ERROR = GEMINI / "gemini-cli_v0.61.0_stream-json_api-error.jsonl"
QWEN = FIXTURES / "qwen-stream-json" / "qwen-code_v0.24.4_stream-json_subagent.jsonl"
QWEN_RESUMED = FIXTURES / "qwen-stream-json" / "qwen-code_v0.24.4_stream-json_resumed.jsonl"


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def record_types(stream: list[dict[str, Any]]) -> Counter[str]:
    """Each event's type as the accounting names it (a message by its role)."""
    return Counter(f"message/{e['role']}" if e["type"] == "message" else e["type"] for e in stream)


def texts_of(stream: list[dict[str, Any]]) -> list[str]:
    """The assistant texts: each run of consecutive deltas joined."""
    texts: list[str] = []
    joining = False
    for event in stream:
        delta = event["type"] == "message" and event["role"] == "assistant"
        if delta and joining:
            texts[-1] += event["content"]
        elif delta:
            texts.append(event["content"])
        joining = delta
    return texts


def expected_usage(result: dict[str, Any]) -> dict[str, int]:
    """A run's usage from its result event: the prompt as input, the rest of the total as
    output (Gemini counts thoughts apart from the candidates, and in the total only)."""
    stats = result["stats"]
    return {
        "input_tokens": stats["input_tokens"],
        "output_tokens": stats["total_tokens"] - stats["input_tokens"],
        "cache_read_tokens": stats["cached"],
    }


def load_text(text: str) -> Transcript:
    return turnfold.load(text, format="gemini-stream-json")


# --- a real run --------------------------------------------------------------------------------


def test_H5_a_real_stream_reads_as_the_run_it_was() -> None:
    stream = events(REAL)
    transcript = turnfold.load(REAL)
    assert transcript.metadata["source_format"] == "gemini-stream-json"
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    mapped = {t: n["mapped"] for t, n in transcript.accounting.counts.items()}
    assert mapped == dict(record_types(stream))
    init = stream[0]
    assert transcript.metadata["session_id"] == init["session_id"]
    assert transcript.metadata["model"] == init["model"]
    prompts = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert [p.text for p in prompts] == [
        e["content"] for e in stream if e["type"] == "message" and e["role"] == "user"
    ]
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == texts_of(stream)
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert last.text.startswith("TF-DONE-1: read, listed, ran, edited, wrote and delegated.")
    assert not any(isinstance(e, Thinking) for e in transcript.entries)  # none in the stream


def test_H5_calls_and_their_results_are_linked_by_tool_id() -> None:
    stream = events(REAL)
    uses = [e for e in stream if e["type"] == "tool_use"]
    results = {e["tool_id"]: e for e in stream if e["type"] == "tool_result"}
    calls = turnfold.load(REAL).tool_calls()
    assert [(c.call_id, c.name, c.args) for c in calls] == [
        (u["tool_id"], u["tool_name"], u["parameters"]) for u in uses
    ]
    for call, use in zip(calls, uses, strict=True):
        result = results[use["tool_id"]]
        assert (call.started_at, call.ended_at) == (use["timestamp"], result["timestamp"])
        recorded = result.get("error", {}).get("message") or result.get("output") or None
        assert (call.result.text if call.result else None) == recorded
    assert [(c.name, c.status) for c in calls] == [
        ("read_file", "success"), ("list_directory", "success"), ("read_file", "error"),
        # ``printf 'TF-OK-%s\n' 23`` and ``echo TF-FAIL-OUT; ls /tf-missing; exit 3``: the CLI
        # prints both as ``success`` with the command's output alone, which is all a non-zero
        # exit shows too: the stream does not record how they ended (L-3).
        ("run_shell_command", "unknown"), ("run_shell_command", "unknown"),
        ("replace", "success"), ("write_file", "success"), ("invoke_agent", "success"),
    ]  # fmt: skip
    # Calls one response issued are one batch: read + list, replace + write.
    batches = [c.batch_id for c in calls]
    assert batches[0] == batches[1] != batches[2]
    assert batches[5] == batches[6] != batches[4]
    assert len(set(batches)) == 6


def test_H5_a_failed_call_is_an_error_with_the_cli_s_message() -> None:
    missing = turnfold.load(REAL).tool_calls()[2]
    assert missing.status == "error"
    assert missing.result is not None
    assert missing.result.text == "File not found: /home/user/project/tf-missing.txt"
    assert missing.meta["error_type"] == "file_not_found"
    assert missing.meta["display"] == "File not found."


def test_H5_the_sub_agent_is_one_call_whose_steps_the_stream_does_not_hold() -> None:
    agent = turnfold.load(REAL).tool_calls()[-1]
    assert agent.subagent is not None
    assert agent.subagent.steps_missing
    assert agent.subagent.transcript is None
    assert agent.subagent.name == "generalist"
    assert agent.subagent.task == "TF-SUBTASK: echo a word and report back."


def test_H6_the_run_s_usage_and_stats_are_the_result_s() -> None:
    stream = events(REAL)
    result = stream[-1]
    assert result["type"] == "result"
    transcript = turnfold.load(REAL)
    usage = expected_usage(result)
    assert transcript.metadata["usage"] == usage
    assert transcript_tokens(transcript).own == usage
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert counts_of(last.usage) == usage  # the run's usage on its last text, once
    carriers = [e for e in transcript.entries if getattr(e, "usage", None) is not None]
    assert carriers == [last]
    assert transcript.metadata["duration_ms"] == result["stats"]["duration_ms"]
    assert transcript.metadata["tool_calls"] == result["stats"]["tool_calls"]
    assert transcript.metadata["model_usage"] == result["stats"]["models"]
    assert "outcome" not in transcript.metadata  # a run that ended well is not a judged pass


# --- failed commands -------------------------------------------------------------------------


def test_H5_a_command_that_printed_nothing_and_failed_is_an_error() -> None:
    """``exit 4`` prints nothing: the CLI shows ``Command exited with code: 4``. A command
    that printed something shows only its output, whatever its exit code: its outcome is
    not recorded (it was shown as a success, though it exited 3)."""
    calls = turnfold.load(FAILED).tool_calls()
    assert [(c.args["command"], c.status) for c in calls] == [
        ("echo TF-FAIL-OUT; exit 3", "unknown"), ("exit 4", "error"),
    ]  # fmt: skip
    assert calls[1].result is not None
    assert calls[1].result.text == "Command exited with code: 4"


def test_H5_with_debug_the_output_states_every_exit_code() -> None:
    """``gemini --debug`` prints the model's text of a command's result: ``Exit Code: N``."""
    calls = turnfold.load(FAILED_DEBUG).tool_calls()
    assert [c.status for c in calls] == ["error", "error"]
    assert calls[0].result is not None
    assert "Exit Code: 3" in (calls[0].result.text or "")


@pytest.mark.parametrize(
    ("name", "status", "output", "failed", "expected"),
    [
        ("run_shell_command", "success", "Command exited with code: 1", False, "error"),
        ("run_shell_command", "success", "Command exited with code: 0", False, "success"),
        ("run_shell_command", "success", "Command terminated by signal: SIGKILL", False, "error"),
        ("run_shell_command", "success", "Command failed: spawn ENOENT", False, "error"),
        ("run_shell_command", "success", "Output: ok\nExit Code: 0", False, "success"),
        # The model's text (--debug) states a non-zero exit code: without one it succeeded.
        ("run_shell_command", "success", "Output: ok\nProcess Group PGID: 7", False, "success"),
        ("run_shell_command", "success", "<untrusted_context>\nOutput: ok\n", False, "success"),
        # The display of a command that printed: its own output, whatever its exit code.
        ("run_shell_command", "success", "TF-FAIL-OUT", False, "unknown"),
        ("run_shell_command", "success", "", False, "success"),
        # A file that reads like a command's display is what the tool returned, not a failure;
        # an exit code on a line of its own is one for any tool (gemini_parts' shared rule).
        ("read_file", "success", "Command terminated by signal: SIGKILL", False, "success"),
        ("read_file", "success", "Command exited with code: 1", False, "error"),
        ("read_file", "error", "File not found.", True, "error"),
        ("read_file", "cancelled", None, False, "unknown"),
        ("read_file", None, None, False, "unknown"),
    ],
)
def test_L3_a_call_s_status_is_the_recorded_one_corrected_by_a_stated_failure(
    name: str, status: Any, output: str | None, failed: bool, expected: str
) -> None:
    assert call_status(name, status, output, failed) == expected


# --- errors ----------------------------------------------------------------------------------


def test_H6_an_error_event_is_an_error_and_the_run_s_outcome() -> None:
    """A response of thoughts only: the CLI prints an ``error`` event, then a failed result."""
    stream = events(THINKING_ONLY)
    transcript = turnfold.load(THINKING_ONLY)
    assert transcript.warnings == []
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == [e["message"] for e in stream if e["type"] == "error"]
    assert transcript.metadata["outcome"] == "error"
    assert transcript.metadata["usage"] == expected_usage(stream[-1])


def test_H6_a_failed_request_is_the_result_s_error() -> None:
    """An API error ends the run with a result that holds it (and exit code 1)."""
    result = events(API_ERROR)[-1]
    transcript = turnfold.load(API_ERROR)
    assert transcript.warnings == []
    last = transcript.entries[-1]
    assert isinstance(last, AssistantError)
    assert last.message == result["error"]["message"]
    assert "TF-BAD-REQUEST" in last.message
    assert last.meta["error_type"] == result["error"]["type"]
    assert transcript.metadata["outcome"] == "error"


def test_H5_a_warning_event_is_a_warning_notice() -> None:
    stream = events(FAILED)
    warning = {"type": "error", "timestamp": stream[2]["timestamp"], "severity": "warning",
               "message": "Loop detected, stopping execution"}  # fmt: skip
    lines = [*stream[:2], warning, *stream[2:]]
    transcript = load_text("\n".join(json.dumps(e) for e in lines))
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.text, n.level) for n in notices] == [
        ("Loop detected, stopping execution", "warning")
    ]
    assert transcript.warnings == []


# --- resumed and appended runs ---------------------------------------------------------------


def test_H5_a_resumed_run_is_the_same_session() -> None:
    first, second = turnfold.load(REAL), turnfold.load(RESUMED)
    assert second.metadata["session_id"] == first.metadata["session_id"]
    assert [c.status for c in second.tool_calls()] == ["unknown"]  # ``echo TF-AGAIN``
    assert second.metadata["usage"] == expected_usage(events(RESUMED)[-1])


def test_H5_runs_appended_to_one_file_read_as_one_session(tmp_path: Path) -> None:
    """``gemini -p … >> run.jsonl`` twice (the second with ``--resume``): two turns, each
    run's usage on its own last text, the session's the sum."""
    path = tmp_path / "appended.jsonl"
    path.write_bytes(REAL.read_bytes() + RESUMED.read_bytes())
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "gemini-stream-json"
    assert transcript.warnings == []
    assert len([e for e in transcript.entries if isinstance(e, UserMessage)]) == 2
    assert len(transcript.tool_calls()) == 9
    one, two = expected_usage(events(REAL)[-1]), expected_usage(events(RESUMED)[-1])
    assert transcript.metadata["usage"] == {k: one[k] + two[k] for k in one}
    carriers = [e for e in transcript.entries if getattr(e, "usage", None) is not None]
    assert [counts_of(e.usage) for e in carriers if isinstance(e, AssistantText)] == [one, two]


# --- a stream cut off, and what this version does not write ------------------------------------


def test_H5_runs_of_two_sessions_in_one_file_name_both(tmp_path: Path) -> None:
    path = tmp_path / "two-sessions.jsonl"
    path.write_bytes(FAILED.read_bytes() + API_ERROR.read_bytes())
    transcript = turnfold.load(path)
    ids = [events(FAILED)[0]["session_id"], events(API_ERROR)[0]["session_id"]]
    assert transcript.metadata["session_id"] == ids[0]
    assert transcript.metadata["session_ids"] == ids
    assert transcript.metadata["outcome"] == "error"


def test_L3_a_stream_cut_off_mid_run_keeps_what_it_holds(tmp_path: Path) -> None:
    """The process was killed while the failing command ran: its call has no outcome, the
    half-written line is one warning, the missing ``result`` another, and the run has no
    usage; its outcome is not recorded (``incomplete``)."""
    lines = REAL.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "TF-FAIL-OUT; ls" in line)
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(lines[: cut + 1]) + lines[cut + 1][:40], encoding="utf-8")
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "gemini-stream-json"
    statuses = [c.status for c in transcript.tool_calls()]
    assert statuses == ["success", "success", "error", "unknown", "unknown"]
    assert len(transcript.warnings) == 2
    assert transcript.warnings[0].line == cut + 2
    assert transcript.warnings[1].reason.startswith("the stream ends inside the run begun on")
    assert "usage" not in transcript.metadata
    assert transcript.metadata["outcome"] == "incomplete"
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-LOOK: reading the notes and listing the folder."]


def test_L4_an_unknown_event_is_warned_about_and_the_rest_read() -> None:
    stream = events(FAILED)
    stamp = stream[1]["timestamp"]
    odd = [
        {"type": "thought", "timestamp": stamp, "content": "TF-NEW: a later version's event"},
        {"type": "message", "timestamp": stamp, "role": "system", "content": "TF-ROLE"},
        {"type": "tool_result", "timestamp": stamp, "tool_id": "nowhere", "status": "success"},
    ]
    lines = [*stream[:2], *odd, *stream[2:]]
    transcript = load_text("\n".join(json.dumps(e) for e in lines))
    reasons = [w.reason for w in transcript.warnings]
    assert reasons == [
        "unknown stream-json event 'thought' skipped",
        "unknown stream-json event 'message/system' skipped",
        "tool result for unknown tool id 'nowhere' skipped",
    ]
    assert [w.line for w in transcript.warnings] == [3, 4, 5]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["thought"] == {"warned": 1}
    assert transcript.accounting.unaccounted == []
    assert len(transcript.tool_calls()) == 2  # the rest of the run is read


def test_H6_thoughts_counted_in_the_total_only_are_output() -> None:
    """Gemini counts thoughts apart from the candidates; the stream only in ``total_tokens``."""
    stats = {"total_tokens": 1500, "input_tokens": 1000, "output_tokens": 200, "cached": 400,
             "input": 600, "duration_ms": 5, "tool_calls": 0}  # fmt: skip
    stream = [*events(RESUMED)[:2], {**events(RESUMED)[-1], "stats": stats}]
    transcript = load_text("\n".join(json.dumps(e) for e in stream))
    assert transcript.metadata["usage"] == {
        "input_tokens": 1000, "output_tokens": 500, "cache_read_tokens": 400,
    }  # fmt: skip


# --- detection -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(GEMINI.glob("*.jsonl")), ids=lambda p: p.name)
def test_H5_gemini_stream_json_is_detected(path: Path) -> None:
    assert which_format(open_source(path)[0]) == "gemini-stream-json"


def test_H5_a_plain_message_list_is_not_taken_for_gemini_stream_json() -> None:
    """Responses items share ``type: message`` and ``role``; the stream's events carry a
    ``timestamp`` each, which message lists do not."""
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": "hello"},
    ]
    assert which_format(open_source(items)[0]) != "gemini-stream-json"


# --- Qwen Code's stream-json: Claude Code's events, read by claude-stream-json ------------------


def test_H5_qwen_code_stream_json_reads_as_claude_stream_json() -> None:
    stream = events(QWEN)
    transcript = turnfold.load(QWEN)
    assert transcript.metadata["source_format"] == "claude-stream-json"
    assert transcript.metadata["agent"] == "qwen"
    assert transcript.metadata["version"] == "0.24.4"
    assert transcript.warnings == []
    # Every tool_use block of the file, the sub-agent's included, once.
    ids = {
        b["id"]
        for e in stream
        if e["type"] == "assistant"
        for b in e["message"]["content"]
        if b["type"] == "tool_use"
    }
    nested = transcript.tool_calls(nested=True)
    assert {c.call_id for c in nested} == ids
    assert len(nested) == len(ids)
    # Qwen Code flags a failed command (and a missing file) with is_error, unlike Gemini CLI.
    errors = {
        b["tool_use_id"]
        for e in stream
        if e["type"] == "user" and isinstance(e["message"]["content"], list)
        for b in e["message"]["content"]
        if b.get("type") == "tool_result" and b.get("is_error")
    }
    assert {c.call_id for c in nested if c.status == "error"} == errors
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("read_file", "success"), ("glob", "success"), ("read_file", "error"),
        ("run_shell_command", "success"), ("run_shell_command", "error"), ("edit", "success"),
        ("write_file", "success"), ("agent", "success"),
    ]  # fmt: skip
    first, second = transcript.entries[:2]
    assert isinstance(first, UserMessage)  # the run's prompt, which the stream does not record
    assert first.meta == {"prompt_not_recorded": True}
    assert isinstance(second, Thinking)
    agent = transcript.tool_calls()[-1]
    assert agent.subagent is not None
    assert agent.subagent.transcript is not None
    assert [c.name for c in agent.subagent.transcript.tool_calls()] == ["run_shell_command"]
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert last.text == stream[-1]["result"]


def test_H5_qwen_code_s_resumed_run_reads_too() -> None:
    transcript = turnfold.load(QWEN_RESUMED)
    assert transcript.metadata["source_format"] == "claude-stream-json"
    assert transcript.metadata["agent"] == "qwen"
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("run_shell_command", "success")
    ]
    assert isinstance(transcript.entries[-1], AssistantText)


def test_H6_of_runs_appended_to_one_file_the_outcome_is_the_last_s(tmp_path: Path) -> None:
    """Harnesses append a re-run to the failed run's file (seen in real evaluation outputs):
    the failure stays shown, but the session ended well."""
    path = tmp_path / "failed-then-passed.jsonl"
    path.write_bytes(API_ERROR.read_bytes() + REAL.read_bytes())
    transcript = turnfold.load(path)
    assert any(isinstance(e, AssistantError) for e in transcript.entries)
    assert "outcome" not in transcript.metadata
    path.write_bytes(REAL.read_bytes() + API_ERROR.read_bytes())
    assert turnfold.load(path).metadata["outcome"] == "error"
