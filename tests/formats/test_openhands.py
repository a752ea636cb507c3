"""OpenHands event lists and eval outputs (spec H-3, H-6, issue 13).

Fixtures: two real trajectories from OpenHands' own tests (``tests/runtime/trajs``, see
``tests/fixtures/SOURCES.md``), hand-made ``output.jsonl`` instances in the shapes of
``evaluation/utils/shared.py`` (``EvalOutput``) and ``openhands/events/serialization``, and two
real outputs, trimmed: an instance of OpenHands' Multi-SWE-bench example output and the
resolver output OpenHands keeps as a unit-test mock (``ResolverOutput``).
"""

from __future__ import annotations

import gzip
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.counters_harnesses import openhands as count_calls
from turnfold.cli import main
from turnfold.formats.errors import SampleSelectionError
from turnfold.formats.harnesses import openhands, openhands_sdk
from turnfold.formats.openai_chat import litellm_usage
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    ImageData,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.session import session_facts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "openhands"
GUI = FIXTURES / "openhands_trajectory_basic-gui-mode.json"
RENAME = FIXTURES / "openhands_trajectory_wrong-initial-state.json"
OUTPUT = FIXTURES / "openhands_output-jsonl_hand-made_delegate-and-errors.jsonl"
PAIRS = FIXTURES / "openhands_output-jsonl_hand-made_old-history-pairs.jsonl"
PONYC = FIXTURES / "openhands_output-jsonl_multi-swe-bench_ponyc-4593_trimmed.jsonl"
ISSUE_5 = FIXTURES / "openhands_resolver-output-jsonl_pr-viewer-issue-5.jsonl"
ISSUE_1 = FIXTURES / "openhands_resolver-output-jsonl_pr-viewer-issue-1_trimmed.jsonl"


@pytest.fixture
def resolver_output(tmp_path: Path) -> Path:
    """The resolver's ``output.jsonl`` as OpenHands keeps it: issue 5, then issue 1."""
    path = tmp_path / "output.jsonl"
    path.write_text(ISSUE_5.read_text(encoding="utf-8") + ISSUE_1.read_text(encoding="utf-8"))
    return path


def _all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


@pytest.mark.parametrize(
    "path", [GUI, RENAME, OUTPUT, PAIRS, PONYC, ISSUE_5, ISSUE_1], ids=lambda p: p.name
)
def test_H3_every_event_is_accounted_for_and_every_action_is_a_call(path: Path) -> None:
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "openhands"
    assert len(_all_calls(transcript)) == count_calls(path)
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.types("mapped") <= set(openhands.RECORDS.mapped)
    assert accounting.types("ignored") <= set(openhands.RECORDS.ignored)


def test_H3_commands_and_edits_pair_by_cause_with_exit_codes_and_diffs() -> None:
    transcript = turnfold.load(GUI)
    calls = transcript.tool_calls()
    assert [(c.name, turnfold.tool_category(c.name), c.status) for c in calls] == [
        ("execute_bash", "command", "success"),
        ("str_replace_editor create", "write", "success"),
        ("str_replace_editor create", "write", "success"),
        ("execute_bash", "command", "error"),  # exit code -1: no output after 30 s
    ]
    assert calls[0].call_id == "toolu_01W9Z8jBctr8X2frZV9p1RYs"
    assert calls[1].result is not None
    assert calls[1].result.kind == "diff"
    assert calls[3].result is not None
    assert "no new output after 30 seconds" in (calls[3].result.text or "")
    assert calls[0].started_at == "2025-01-20T20:29:35.040676"
    assert calls[0].ended_at == "2025-01-20T20:29:35.699033"
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts[0].usage is not None
    assert texts[0].usage.input_tokens == 3439
    users = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert len(users) == 1
    assert users[0].text.startswith("I want to create a VueJS app")


def test_H3_reads_and_finish() -> None:
    transcript = turnfold.load(RENAME)
    names = [c.name for c in transcript.tool_calls()]
    assert names == ["str_replace_editor view", "execute_bash", "str_replace_editor view"]
    assert turnfold.tool_category("str_replace_editor view") == "read"
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert "successfully renamed" in last.text


def test_H3_a_delegate_is_a_sub_agent_with_its_own_events() -> None:
    transcript = turnfold.load(OUTPUT)
    delegate = next(c for c in transcript.tool_calls() if c.subagent is not None)
    assert turnfold.tool_category("delegate") == "agent"
    assert delegate.subagent is not None
    assert delegate.subagent.name == "BrowsingAgent"
    assert delegate.subagent.task == "Find the pytest docs page on approx"
    assert delegate.status == "success"
    assert delegate.result is not None
    assert delegate.result.kind == "subagent"
    child = delegate.subagent.transcript
    assert child is not None
    [browse] = child.tool_calls()
    assert (browse.name, turnfold.tool_category("browse"), browse.status) == (
        "browse",
        "read",
        "success",
    )
    assert delegate.subagent.tool_count == 1
    assert isinstance(child.entries[0], UserMessage)
    assert not any(c.name == "browse" for c in transcript.tool_calls())  # nested, not flat


def test_H3_statuses_thoughts_compaction_and_notices() -> None:
    transcript = turnfold.load(OUTPUT)
    by_id = {c.call_id: c for c in transcript.tool_calls()}
    assert by_id["toolu_01"].status == "error"  # exit code 1
    assert by_id["toolu_03"].status == "error"  # IPython traceback
    assert by_id["toolu_04"].status == "error"  # ErrorObservation
    assert by_id["toolu_05"].result is not None
    assert by_id["toolu_05"].result.kind == "diff"
    assert by_id["toolu_07"].status == "success"
    assert by_id["toolu_01"].batch_id == "resp-1"
    kinds = [type(e) for e in transcript.entries]
    assert Thinking in kinds
    assert CompactionBoundary in kinds
    assert any(isinstance(e, SystemNotice) and e.subtype == "recall" for e in transcript)
    assert transcript.metadata["system"].startswith("You are OpenHands agent")
    assert transcript.metadata["version"] == "0.62.0"
    assert transcript.metadata["task_completed"] == "true"


def test_H6_eval_output_metadata_and_outcome() -> None:
    transcript = turnfold.load(OUTPUT)
    meta = transcript.metadata
    assert (meta["sample"], meta["task"], meta["outcome"]) == ("calc__calc-1", "calc-bench", "pass")
    assert meta["model"] == "anthropic/claude-sonnet-4-5"
    assert meta["agent"] == "openhands"
    assert meta["cost_usd"] == pytest.approx(0.0421)
    assert meta["usage"]["input_tokens"] == 9600
    assert any("1 more instance" in w.reason for w in transcript.warnings)
    second = turnfold.load(PAIRS)
    assert second.metadata["outcome"] == "fail"
    assert any(isinstance(e, AssistantError) for e in second)
    [call] = second.tool_calls()
    assert call.status == "success"
    assert call.result is not None
    assert call.result.text == "calc.py"


@pytest.mark.parametrize(
    ("instance", "outcome"),
    [
        ({"test_result": {"report": {"resolved": True}}}, "pass"),
        ({"test_result": {"report": {"resolved": False, "failed_apply_patch": True}}}, "fail"),
        ({"test_result": {"report": {"resolved": False, "error_eval": True}}}, "error"),
        ({"test_result": {"git_patch": "diff"}}, None),
        ({"test_result": {"git_patch": ""}, "error": "RuntimeError: sandbox died"}, "error"),
        ({"test_result": {"resolved": True}}, "pass"),
    ],
)
def test_H6_outcome_rule(instance: dict[str, Any], outcome: str | None) -> None:
    assert openhands.outcome_of(instance) == outcome


def _run(exit_code: int | None, success: bool | None = None) -> dict[str, Any]:
    metadata = {} if exit_code is None else {"metadata": {"exit_code": exit_code}}
    event: dict[str, Any] = {"observation": "run", "content": "", "extras": metadata}
    if success is not None:
        event["success"] = success
    return event


#: What ``call_tool_mcp`` (OpenHands 0.62.0, ``openhands/mcp/utils.py``) writes for a timeout.
_MCP_TIMEOUT = json.dumps(
    {"isError": True, "error": 'Tool "fetch" timed out after 30 seconds', "content": []}
)


def _mcp_call(text: str, is_error: bool, **fields: Any) -> str:
    """A ``CallToolResult`` as ``call_tool_mcp`` writes it: ``model_dump(mode="json")``."""
    content = [{"type": "text", "text": text, "annotations": None, "meta": None}]
    result = {"meta": None, "content": content, "structuredContent": None, "isError": is_error}
    return json.dumps({**result, **fields})


def _editor(kind: str, content: str) -> dict[str, Any]:
    """A read or edit by the runtime's editor (``impl_source: oh_aci``)."""
    return {"observation": kind, "content": content, "extras": {"impl_source": "oh_aci"}}


def _mcp(content: str) -> dict[str, Any]:
    return {"observation": "mcp", "content": content, "extras": {"name": "fetch"}}


@pytest.mark.parametrize(
    ("observation", "status"),
    [
        (_run(0), "success"), (_run(2), "error"), (_run(-1), "error"),
        (_run(None, True), "success"), (_run(None, False), "error"), (_run(None), "unknown"),
        ({"observation": "error", "content": "bad"}, "error"),
        ({"observation": "user_rejected", "content": ""}, "cancelled"),
        ({"observation": "run_ipython", "content": "Traceback (most recent call last):"}, "error"),
        ({"observation": "run_ipython", "content": "[Code executed successfully]"}, "success"),
        ({"observation": "browse", "content": "", "extras": {"error": True}}, "error"),
        ({"observation": "edit", "content": "--- a\n+++ b"}, "success"),
        (_editor("edit", "ERROR:\nNo replacement was performed, old_str `x` did not appear"),
         "error"),
        (_editor("read", "ERROR:\nInvalid `view_range` parameter: [100, 150]."), "error"),
        (_editor("edit", "The file /a.py has been edited."), "success"),
        ({"observation": "read", "content": "ERROR: a log line of the file read"}, "success"),
        ({"observation": "run", "content": "", "extras": {"exit_code": 1}}, "error"),
        ({"observation": "run", "content": "", "extras": {"exit_code": 0}}, "success"),
        ({"observation": "delegate", "content": "X encountered an error during execution."},
         "error"),
        (_mcp(_MCP_TIMEOUT), "error"), (_mcp(_mcp_call("Error: 404 Not Found", True)), "error"),
        (_mcp(_mcp_call("ok", False)), "success"), (_mcp('{"ok": true}'), "success"),
        (_mcp("plain text"), "success"),
    ],
)  # fmt: skip
def test_H3_status_rule(observation: dict[str, Any], status: str) -> None:
    assert openhands.status_of(observation) == status


def test_H3_events_as_json_lines_pair_by_tool_call_id_and_mcp_names() -> None:
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "hi"}},
        {"id": 2, "source": "agent", "action": "call_tool_mcp",
         "tool_call_metadata": {"function_name": "fetch", "tool_call_id": "c1"},
         "args": {"name": "fetch", "arguments": {"url": "https://example.org"}, "thought": ""}},
        {"id": 3, "source": "agent", "observation": "mcp", "content": "{\"ok\": true}",
         "tool_call_metadata": {"function_name": "fetch", "tool_call_id": "c1"},
         "extras": {"name": "fetch", "arguments": {}}},
        {"id": 4, "source": "agent", "action": "teleport", "args": {}},
        {"id": 5, "source": "environment", "observation": "agent_state_changed", "content": "",
         "extras": {"agent_state": "error", "reason": "RateLimitError: too many requests"}},
    ]  # fmt: skip
    text = "".join(json.dumps(e) + "\n" for e in events) + "{broken\n"
    transcript = turnfold.load(text)
    assert transcript.metadata["source_format"] == "openhands"
    [call] = transcript.tool_calls()
    assert (call.name, call.args, call.status) == (
        "fetch",
        {"url": "https://example.org"},
        "success",
    )
    assert any(isinstance(e, AssistantError) and "RateLimitError" in e.message for e in transcript)
    assert len(transcript.warnings) == 2  # the unknown action and the broken line
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H3_an_mcp_result_is_its_content_and_isError_its_status() -> None:
    """``isError`` (a timeout or an McpError OpenHands caught, or an error result of the
    server) makes the call an error; the result is the text of the content blocks, an image
    block an image, ``structuredContent`` structured data, not the JSON OpenHands wrote."""
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "meta": None}
    observations = [
        _MCP_TIMEOUT,
        _mcp_call("Error: 404 Not Found", True),
        _mcp_call("TF-PAGE", False, structuredContent={"status": 200}),
        json.dumps({"meta": None, "content": [image], "structuredContent": None, "isError": False}),
    ]
    events: list[dict[str, Any]] = []
    for index, content in enumerate(observations):
        call_id = f"toolu_{index}"
        metadata = {"function_name": "fetch", "tool_call_id": call_id}
        events += [
            {"id": 2 * index, "source": "agent", "action": "call_tool_mcp",
             "tool_call_metadata": metadata,
             "args": {"name": "fetch", "arguments": {"url": f"https://x/{index}"}, "thought": ""}},
            {"id": 2 * index + 1, "cause": 2 * index, "source": "agent", "observation": "mcp",
             "content": content, "tool_call_metadata": metadata,
             "extras": {"name": "fetch", "arguments": {"url": f"https://x/{index}"}}},
        ]  # fmt: skip
    calls = turnfold.load(events).tool_calls()
    assert [c.status for c in calls] == ["error", "error", "success", "success"]
    results = [c.result for c in calls]
    assert all(r is not None for r in results)
    assert [(r.text, r.structured) for r in results if r is not None][:3] == [
        ('Tool "fetch" timed out after 30 seconds', None),
        ("Error: 404 Not Found", None),
        ("TF-PAGE", {"status": 200}),
    ]
    last = results[3]
    assert last is not None
    assert last.images == [ImageData(media_type="image/png", data="iVBORw0KGgo=")]


def test_H3_an_mcp_observation_s_json_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its status, its result and the warning of unknown blocks come of one parse."""
    parsed: list[object] = []
    read = openhands.mcp_call_result

    def counted(observation: Any) -> Any:
        parsed.append(observation)
        return read(observation)

    monkeypatch.setattr(openhands, "mcp_call_result", counted)
    metadata = {"function_name": "fetch", "tool_call_id": "toolu_1"}
    events = [
        {"id": 1, "source": "agent", "action": "call_tool_mcp", "tool_call_metadata": metadata,
         "args": {"name": "fetch", "arguments": {}, "thought": ""}},
        {"id": 2, "cause": 1, "source": "agent", "observation": "mcp",
         "content": _mcp_call("Error: 404 Not Found", True), "tool_call_metadata": metadata,
         "extras": {"name": "fetch", "arguments": {}}},
    ]  # fmt: skip
    (call,) = turnfold.load(events).tool_calls()
    assert (call.status, call.result.text if call.result else None) == (
        "error",
        "Error: 404 Not Found",
    )
    assert len(parsed) == 1


def test_H3_a_cut_off_delegate_keeps_its_steps() -> None:
    events = [
        {"id": 1, "source": "agent", "action": "delegate",
         "args": {"agent": "BrowsingAgent", "inputs": {"task": "look"}, "thought": ""}},
        {"id": 2, "source": "agent", "action": "browse", "args": {"url": "https://a.b"}},
    ]  # fmt: skip
    [delegate] = turnfold.load(events).tool_calls()
    assert delegate.status == "unknown"
    assert delegate.subagent is not None
    assert delegate.subagent.transcript is not None
    assert len(delegate.subagent.transcript.tool_calls()) == 1


def test_an_eval_output_instance_is_picked_by_its_id() -> None:
    """``load(output, sample=ID)`` shows that instance (spec §10); the first is the default."""
    first = turnfold.load(OUTPUT)
    assert first.metadata["sample"] == "calc__calc-1"
    assert any("sample=ID" in w.reason and "calc__calc-2" in w.reason for w in first.warnings)
    second = turnfold.load(OUTPUT, sample="calc__calc-2")
    assert second.metadata["sample"] == "calc__calc-2"
    assert second.entries != first.entries
    assert not any("more instance" in w.reason for w in second.warnings)
    assert second.accounting is not None
    assert second.accounting.counts["instance/other"] == {"ignored": 1}
    with pytest.raises(SampleSelectionError, match=r"'nope'.*'calc__calc-1', 'calc__calc-2'"):
        turnfold.load(OUTPUT, sample="nope")
    with pytest.raises(ValueError, match="no epochs"):
        turnfold.load(OUTPUT, epoch=2)


def test_H3_a_failed_editor_call_is_an_error() -> None:
    """The runtime's editor reports a failure as a read or edit observation whose content starts
    ``ERROR:`` (``_execute_file_editor``, ``openhands/runtime/action_execution_server.py``),
    not as an ``error`` observation: those calls failed (a real Multi-SWE-bench instance)."""
    transcript = turnfold.load(PONYC)
    editor = [c for c in transcript.tool_calls() if c.name.startswith("str_replace_editor")]
    shown = [
        (c.name, c.status, (c.result.text or "").split("\n")[1][:24] if c.status == "error" else "")
        for c in editor
        if c.result is not None
    ]
    assert shown == [
        ("str_replace_editor view", "error", "Invalid `view_range` par"),
        ("str_replace_editor view", "success", ""),
        ("str_replace_editor str_replace", "error", "Parameter `old_str` is r"),
        ("str_replace_editor str_replace", "error", "No replacement was perfo"),
        ("str_replace_editor insert", "success", ""),
        ("str_replace_editor str_replace", "error", "No replacement was perfo"),
    ]
    assert len(editor) == len(shown)
    # The validation error OpenHands writes for a call it could not run answers no action.
    assert any(
        isinstance(e, AssistantError) and "Parameter 'command'" in e.message for e in transcript
    )


def test_H3_H6_a_resolver_output_is_read_issue_by_issue(resolver_output: Path) -> None:
    """A resolver's ``output.jsonl`` (``ResolverOutput``, ``history`` of
    ``dataclasses.asdict(event)``: no ``args``, ``extras``, ids or sources) is read like an
    eval output: one issue a line, picked by its number; each observation answers the action
    before it; the resolver's verdict is the outcome."""
    first = turnfold.load(resolver_output)
    meta = first.metadata
    assert (meta["sample"], meta["task"], meta["title"]) == (
        5,
        "neubig/pr-viewer",
        "Add MIT license",
    )
    assert (meta["outcome"], meta["success"], meta["issue_type"]) == ("pass", True, "issue")
    assert meta["cost_usd"] == pytest.approx(0.070713)
    assert meta["git_patch"].startswith("diff --git a/LICENSE b/LICENSE")
    assert "MIT License" in meta["result_explanation"]
    calls = first.tool_calls()
    assert [(c.name, c.status, c.description) for c in calls] == [
        ("run", "success", "touch LICENSE"),
        ("run_ipython", "success", 'mit_license = """MIT License'),
        ("run", "success", "cat LICENSE"),
    ]
    assert calls[2].result is not None
    assert (calls[2].result.text or "").startswith("MIT License")
    assert calls[0].args == {"command": "touch LICENSE", "keep_prompt": True,
                             "is_confirmed": "confirmed", "action_risk": None}  # fmt: skip
    [user] = [e for e in first.entries if isinstance(e, UserMessage)]  # the prompt, once
    assert user.text.startswith("Please fix the following issue")
    assert isinstance(first.entries[-1], AssistantText)
    assert "successfully added" in first.entries[-1].text
    assert any("sample=ID" in w.reason and "(1)" in w.reason for w in first.warnings)
    second = turnfold.load(resolver_output, sample=1)
    assert (second.metadata["sample"], second.metadata["title"]) == (
        1,
        "Add a toggle for dark mode",
    )
    assert len(second.tool_calls()) == count_calls(ISSUE_1)
    with pytest.raises(SampleSelectionError, match=r"no OpenHands instance 7; .*\(ids '5', '1'\)"):
        turnfold.load(resolver_output, sample=7)


@pytest.mark.parametrize(
    ("event", "source"),
    [
        ({"action": "message", "content": "Fix it.", "wait_for_response": False}, "user"),
        ({"action": "message", "content": "Which file?", "wait_for_response": True}, "agent"),
        ({"action": "message", "args": {"content": "hi", "wait_for_response": True}}, "agent"),
        ({"action": "message", "source": "user", "args": {"wait_for_response": True}}, "user"),
    ],
)
def test_H3_a_message_without_its_source_is_the_agents_when_it_waits(
    event: dict[str, Any], source: str
) -> None:
    """``dataclasses.asdict`` and ``event_to_memory`` drop ``source``: CodeActAgent's messages
    wait for a reply (``MessageAction(..., wait_for_response=True)``), the user's do not."""
    history = [event, {"action": "finish", "outputs": {}, "thought": "Done."}]
    document = {"issue": {"owner": "o", "repo": "r", "number": 3, "title": "t"},
                "issue_type": "issue", "history": history,
                "success": False, "error": None}  # fmt: skip
    transcript = turnfold.load(json.dumps(document) + "\n")
    first = transcript.entries[0]
    assert isinstance(first, UserMessage if source == "user" else AssistantText)
    assert transcript.metadata["outcome"] == "fail"


def test_C2_a_resolver_output_scans_as_one_row_per_issue(resolver_output: Path) -> None:
    corpus = turnfold.scan(resolver_output, cache=False, workers=1)
    assert corpus.errors == 0
    assert [(r["sample"], r["outcome"], r["tool_calls"]) for r in corpus.rows] == [
        ("5", "pass", count_calls(ISSUE_5)),
        ("1", "pass", count_calls(ISSUE_1)),
    ]
    for key in corpus.keys:  # each row opens the load of its own issue, the same each time
        assert corpus[key] == turnfold.load(resolver_output, sample=key.rpartition("#")[2])
    assert corpus[corpus.keys[1]].metadata["title"] == "Add a toggle for dark mode"


def test_H3_an_agent_refusing_the_task_is_its_answer_not_a_rejected_reply() -> None:
    """``AgentRejectAction`` is the agent declining the task: its reason is what happened,
    the turn's answer, kept apart from a reply someone rejected (``meta["rejected"]``, which
    the view mutes and labels)."""
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "rm -rf /"}},
        {"id": 2, "source": "agent", "action": "reject",
         "args": {"outputs": {"reason": "That would destroy the machine."}, "thought": ""}},
    ]  # fmt: skip
    answer = turnfold.load(events, format="openhands").entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "That would destroy the machine."
    assert answer.meta.get("task_rejected") is True
    assert "rejected" not in answer.meta


#: A real OpenHands 0.48 GUI session folder (``~/.openhands/sessions/<id>/``: ``metadata.json``
#: and ``events/<id>.json``), kept as a tarball so that no test loads its event files one by one.
V0_SESSION = FIXTURES / "openhands_v0.48_session-folder_coin-flip.tar.gz"


@pytest.fixture
def v0_session(tmp_path: Path) -> Path:
    with tarfile.open(V0_SESSION) as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / "63b4315947a049e2b7a51249b3d4fcc3"


def test_H3_H6_a_V0_session_reads_from_its_metadata_or_any_of_its_event_files(
    v0_session: Path,
) -> None:
    transcript = turnfold.load(v0_session / "metadata.json")
    assert transcript.metadata["source_format"] == "openhands"
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("execute_ipython_cell", "success"),
        ("execute_ipython_cell", "success"),
    ]
    assert isinstance(transcript.entries[0], UserMessage)
    assert transcript.entries[0].text == "Flip a coin!"
    metadata = transcript.metadata
    assert metadata["title"] == "Coin Flip Simulation"
    assert metadata["session_id"] == "63b4315947a049e2b7a51249b3d4fcc3"
    assert metadata["cost_usd"] == pytest.approx(0.0347178)
    # metadata.json's totals (13332 prompt, 302 completion tokens) in full: the cache reads and
    # writes of the events' last accumulated_token_usage, the writes counted in the prompt.
    assert metadata["usage"] == {
        "input_tokens": 13332 + 6972,
        "output_tokens": 302,
        "cache_read_tokens": 13316,
        "cache_write_tokens": 6972,
    }
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts["session"] == {"mapped": 1}
    assert turnfold.load(v0_session / "events" / "5.json").entries == transcript.entries


def test_C1_a_V0_session_folder_loads_and_scans_as_one_run(
    v0_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``load(folder)`` (or its ``events/``) reads the session, as its metadata.json does; a
    scan makes one row of it, not one of each event file; ``turnfold show`` reads it."""
    whole = turnfold.load(v0_session / "metadata.json")
    for given in (v0_session, v0_session / "events"):
        transcript = turnfold.load(given)
        assert transcript.entries == whole.entries
        assert transcript.metadata["title"] == "Coin Flip Simulation"
        assert transcript.warnings == []
    corpus = turnfold.scan(v0_session.parent, cache=False, workers=1)
    assert (len(corpus), corpus.skipped) == (1, 0)
    assert corpus.to_pandas()["tool_calls"].tolist() == [2]
    assert main(["show", str(v0_session)]) == 0
    assert "Flip a coin!" in capsys.readouterr().out
    with pytest.raises(ValueError, match="no sample="):
        turnfold.load(v0_session, sample="x")


def test_L2_a_V0_session_is_no_V1_conversation(v0_session: Path) -> None:
    """Both keep their events in ``events/``: only the SDK's ``event-<index>-<id>.json`` files
    make a V1 conversation (its reader found none of them here and showed nothing)."""
    assert openhands_sdk.conversation_of(v0_session) is None
    assert openhands_sdk.detect_path(v0_session) is None


def test_L4_what_a_V0_session_s_events_folder_holds_besides_events_is_said(
    v0_session: Path,
) -> None:
    (v0_session / "events" / "notes.txt").write_text("not an event", encoding="utf-8")
    transcript = turnfold.load(v0_session / "metadata.json")
    assert any("notes.txt" in w.reason for w in transcript.warnings)
    assert len(transcript.tool_calls()) == 2


def _resume(session: Path) -> None:
    """Resume the real session as OpenHands does (``agent_controller.py``): the restored
    conversation goes on in the same ``events/`` folder, its ids after the last; no second
    system message (``_add_system_message`` finds the first); a later user message asks for
    ``knowledge`` (no microagent answered: a ``null`` observation), then the agent runs."""
    events = session / "events"
    call = json.loads((events / "10.json").read_text(encoding="utf-8"))
    observation = json.loads((events / "11.json").read_text(encoding="utf-8"))
    finish = json.loads((events / "12.json").read_text(encoding="utf-8"))
    call["tool_call_metadata"].update(tool_call_id="toolu_round2")
    call["tool_call_metadata"]["model_response"]["id"] = "chatcmpl-round2"
    call["args"]["thought"] = "Flipping again:"
    observation["tool_call_metadata"].update(tool_call_id="toolu_round2")
    observation.update(cause=20, content="The coin flip result is: Tails")
    finish["tool_call_metadata"]["model_response"]["id"] = "chatcmpl-round2-finish"
    finish["args"]["final_thought"] = "This time it came up Tails."

    def state(agent_state: str) -> dict[str, Any]:
        return {"source": "environment", "message": "", "observation": "agent_state_changed",
                "content": "", "extras": {"agent_state": agent_state, "reason": ""}}  # fmt: skip

    added = [
        state("loading"),
        state("finished"),
        {"source": "user", "message": "Flip it once more.", "action": "message",
         "args": {"content": "Flip it once more.", "file_urls": [], "image_urls": [],
                  "wait_for_response": False}},
        {"source": "user", "action": "recall",
         "args": {"recall_type": "knowledge", "query": "Flip it once more.", "thought": ""}},
        state("running"),
        {"source": "environment", "message": "No observation", "cause": 17,
         "observation": "null", "content": "", "extras": {}},
        call,
        observation,
        finish,
        state("finished"),
    ]  # fmt: skip
    for index, event in enumerate(added, start=14):
        event.update(id=index, timestamp=f"2025-07-09T14:02:{index:02d}.000001")
        (events / f"{index}.json").write_text(json.dumps(event), encoding="utf-8")


def test_H3_a_resumed_V0_session_goes_on_in_further_turns_of_one_run(
    v0_session: Path,
) -> None:
    """A conversation resumed after the agent finished (a new user message, after a restart
    or not) is the same session's next turn: one run, its first round unchanged, its new
    call paired and its new answer the turn's."""
    first = turnfold.load(v0_session)
    _resume(v0_session)
    transcript = turnfold.load(v0_session)
    assert transcript.warnings == []
    assert transcript.entries[: len(first.entries)] == first.entries
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "Flip a coin!",
        "Flip it once more.",
    ]
    last = transcript.entries[len(first.entries) :]
    assert [type(e).__name__ for e in last] == [
        "UserMessage", "AssistantText", "ToolCall", "AssistantText"
    ]  # fmt: skip
    call = last[2]
    assert isinstance(call, ToolCall)
    assert (call.call_id, call.status) == ("toolu_round2", "success")
    assert call.result is not None
    assert "Tails" in call.result.text
    assert last[-1].text == "This time it came up Tails."  # type: ignore[union-attr]
    facts = session_facts(transcript)
    assert (facts.turns, facts.tool_calls) == (2, 3)
    assert turnfold.scan(v0_session.parent, cache=False, workers=1).to_pandas()[
        ["turns", "tool_calls"]
    ].values.tolist() == [[2, 3]]


def test_H3_a_V0_run_the_user_stopped_is_stopped_and_its_pending_call_never_ran(
    v0_session: Path,
) -> None:
    """Stop pressed while a call waits for its observation (``AgentController``: the user's
    ``change_agent_state`` to ``stopped``, ``_reset``'s ErrorObservation for the pending action,
    then the state change): the call is cancelled, not failed, and the turn stopped; a new
    message resumes the session in the next turn. A stop when the agent is done (closing the
    session) is bookkeeping."""
    events = [
        json.loads((v0_session / "events" / f"{i}.json").read_text(encoding="utf-8"))
        for i in range(11)
    ]  # up to the second call, whose observation the stop replaces

    def state(agent_state: str) -> dict[str, Any]:
        return {"source": "environment", "message": "", "observation": "agent_state_changed",
                "content": "", "extras": {"agent_state": agent_state, "reason": ""}}  # fmt: skip

    stopped = {
        "source": "agent", "message": "Stop button pressed. The action has not been executed.",
        "cause": 10, "observation": "error",
        "content": "Stop button pressed. The action has not been executed.",
        "extras": {"error_id": "AGENT_ERROR$ERROR_ACTION_NOT_EXECUTED_STOPPED"},
        "tool_call_metadata": events[10]["tool_call_metadata"],
    }  # fmt: skip
    resumed = {"source": "user", "message": "Just tell me heads or tails.", "action": "message",
               "args": {"content": "Just tell me heads or tails.", "image_urls": [],
                        "wait_for_response": False}}  # fmt: skip
    answer = {"source": "agent", "message": "Heads.", "action": "message",
              "args": {"content": "Heads.", "wait_for_response": True}}  # fmt: skip
    events += [
        {"source": "user", "message": "", "action": "change_agent_state",
         "args": {"agent_state": "stopped", "thought": ""}},
        stopped,
        state("stopped"),
        resumed,
        state("running"),
        answer,
        state("awaiting_user_input"),
        state("stopped"),  # the session closed
    ]  # fmt: skip
    for index, event in enumerate(events[11:], start=11):
        event.update(id=index, timestamp=f"2025-07-09T13:42:{index:02d}.000001")
    transcript = turnfold.load(events, format="openhands")
    assert transcript.warnings == []
    first, second = transcript.tool_calls()
    assert (first.status, second.status) == ("success", "cancelled")
    assert second.result is not None
    assert second.result.text == "Stop button pressed. The action has not been executed."
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds[-4:] == ["ToolCall", "AbortMarker", "UserMessage", "AssistantText"]
    assert kinds.count("AbortMarker") == 1  # not again when the finished session closed
    facts = session_facts(transcript)
    assert (facts.turns, facts.tool_calls, facts.failed_tools) == (2, 2, 1)  # cancelled counts
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


#: An OpenHands V1 eval output (OpenHands/benchmarks ``EvalOutput``) whose history is a real
#: SDK conversation: ``ls``, ``cat missing.txt`` (exit code 1), ``finish``. Compressed, as such
#: outputs are often kept (tests/fixtures/SOURCES.md says how it was made).
V1_OUTPUT = FIXTURES / "openhands_output-jsonl_v1-benchmarks_sdk-1.58.2_terminal-error.jsonl.gz"


def test_H3_an_OpenHands_V1_eval_output_reads_its_history_as_sdk_events() -> None:
    transcript = turnfold.load(V1_OUTPUT)
    assert transcript.metadata["source_format"] == "openhands-sdk"
    assert transcript.metadata["sample"] == "example__repo-1"
    assert [(c.name, c.args, c.status) for c in transcript.tool_calls()] == [
        ("terminal", {"command": "ls"}, "success"),
        ("terminal", {"command": "cat missing.txt"}, "error"),
    ]
    assert [e.kind for e in transcript.entries] == [
        "user", "assistant", "tool_call", "tool_call", "assistant",
    ]  # fmt: skip
    assert transcript.entries[0].text == "Fix the bug described in missing.txt."  # type: ignore[attr-defined]
    # The SDK's Metrics: each response's usage on its entries; no price for the model, no cost.
    assert transcript.metadata["usage"]["input_tokens"] == 3603
    assert "cost_usd" not in transcript.metadata
    assert transcript.warnings == []
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    for disposition in ("mapped", "ignored"):
        assert all(
            openhands_sdk.RECORDS.disposition(t) == disposition
            for t in accounting.types(disposition)
        )


def test_H6_a_V1_eval_output_s_model_task_and_attempt_come_from_its_EvalMetadata() -> None:
    """OpenHands/benchmarks' ``EvalOutput``: ``attempt`` (the try of an iterative, critic-led
    evaluation: ``output.critic_attempt_<n>.jsonl``, aggregated into ``output.jsonl``), and an
    ``EvalMetadata`` whose model is in ``llm`` (V0's was in ``llm_config``). An instance that
    failed before its conversation began (``Evaluation._create_error_output``: no history, no
    instruction) names its model there alone."""
    real = json.loads(gzip.decompress(V1_OUTPUT.read_bytes()))
    assert real["attempt"] == 1
    assert turnfold.load(V1_OUTPUT).metadata["attempt"] == 1
    failed = {
        "instance_id": "django__django-11099", "attempt": 2, "test_result": {},
        "instruction": None, "history": [], "metrics": None,
        "metadata": {"llm": {"model": "litellm_proxy/claude-sonnet-4-5-20250929",
                             "api_key": "**********", "usage_id": "agent"},
                     "dataset": "princeton-nlp/SWE-bench_Verified", "dataset_split": "test",
                     "max_iterations": 100, "eval_output_dir": "/out",
                     "critic": {"kind": "PassCritic"}},
        "error": "Instance failed after 3 retries. Last error: runtime died",
        "instance": {"repo": "django/django"}, "runtime_runs": None,
    }  # fmt: skip
    transcript = turnfold.load(json.dumps(failed) + "\n", format="openhands")
    metadata = transcript.metadata
    assert metadata["model"] == "litellm_proxy/claude-sonnet-4-5-20250929"
    assert metadata["task"] == "princeton-nlp/SWE-bench_Verified"
    assert (metadata["attempt"], metadata["outcome"]) == (2, "error")
    assert [e.message for e in transcript.entries if isinstance(e, AssistantError)] == [
        "Instance failed after 3 retries. Last error: runtime died"
    ]
    assert transcript.warnings == []


def test_H6_a_model_litellm_could_not_price_has_no_cost_not_a_cost_of_zero() -> None:
    """The real Multi-SWE-bench run used ``openrouter-llama-4-maverick``, which litellm had no
    price for: OpenHands adds no ``costs`` entry then, and ``accumulated_cost`` stays 0.0."""
    instance = json.loads(PONYC.read_text(encoding="utf-8").splitlines()[0])
    assert instance["metrics"]["accumulated_cost"] == 0.0
    assert instance["metrics"]["costs"] == []
    assert "cost_usd" not in turnfold.load(PONYC).metadata
    events = [e for e in instance["history"] if isinstance(e, dict)]
    assert "cost_usd" not in turnfold.load(json.dumps(events)).metadata  # its events alone
    priced = {**instance, "metrics": {**instance["metrics"], "costs": [{"cost": 0.5}],
                                      "accumulated_cost": 0.5}}  # fmt: skip
    assert turnfold.load(json.dumps(priced)).metadata["cost_usd"] == 0.5


def test_U1_litellm_s_cache_writes_are_counted_and_in_the_prompt_count() -> None:
    """litellm writes an Anthropic model's cache writes beside its Chat Completions usage
    (``cache_creation_input_tokens``); its ``prompt_tokens`` counts them in some releases
    (a January 2025 trajectory of OpenHands' tests: 3439 prompt tokens, 3435 written) and not
    in others (the 0.48 session: 4 prompt tokens, 6553 written). Both read as the whole prompt
    and its writes."""
    first = next(e for e in turnfold.load(GUI).entries if isinstance(e, AssistantText))
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.cache_read_tokens) == (3439, 0)
    assert first.usage.cache_write_tokens == 3435
    assert session_facts(turnfold.load(GUI)).tokens == {
        "input_tokens": 17297,
        "output_tokens": 2024,
        "cache_read_tokens": 11793,
        "cache_write_tokens": 5482,
    }
    usage = litellm_usage(
        {"prompt_tokens": 6559, "completion_tokens": 109, "cache_creation_input_tokens": 210,
         "prompt_tokens_details": {"cached_tokens": 6553}}
    )  # fmt: skip
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        6559 + 210,
        6553,
        210,
    )
    # later litellm: the writes in prompt_tokens_details, and counted in prompt_tokens
    usage = litellm_usage(
        {"prompt_tokens": 98805, "completion_tokens": 5120,
         "prompt_tokens_details": {"cached_tokens": 66360, "cache_creation_tokens": 32435}}
    )  # fmt: skip
    assert usage is not None
    assert (usage.input_tokens, usage.cache_write_tokens) == (98805, 32435)


def test_U1_an_eval_output_s_totals_count_the_cache_writes_in_the_prompt() -> None:
    line = {
        "instance_id": "x-1",
        "instruction": "Do it",
        "history": [],
        "metrics": {"accumulated_cost": 0.5, "accumulated_token_usage": {
            "prompt_tokens": 13332, "completion_tokens": 302, "cache_read_tokens": 13316,
            "cache_write_tokens": 6972}},
    }  # fmt: skip
    transcript = turnfold.load(json.dumps(line))
    assert transcript.metadata["usage"] == {
        "input_tokens": 20304,
        "output_tokens": 302,
        "cache_read_tokens": 13316,
        "cache_write_tokens": 6972,
    }


def test_H3_an_agentskills_edit_it_refused_is_an_error() -> None:
    """agentskills (``runtime/plugins/agent_skills/file_ops``) prints, rather than raises, an
    edit it refused: a lint failure or bad line numbers, each ending "Your changes have NOT been
    applied." (a real resolver output's edit_file_by_replace)."""
    transcript = turnfold.load(ISSUE_1)
    refused = [c for c in transcript.tool_calls() if c.status == "error"]
    assert [c.call_id for c in refused] == ["call-4", "call-5"]
    assert all(
        c.result is not None and "Your changes have NOT been applied." in c.result.text
        for c in refused
    )
    assert session_facts(transcript).failed_tools == 2
