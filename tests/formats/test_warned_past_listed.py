"""A record that warned is accounted as warned, past the listed warnings too (spec L-4, X-2).

Past :data:`~turnfold.formats.source.MAX_LISTED_WARNINGS` a load's warnings are counted in one
:class:`~turnfold.formats.source.UnlistedWarnings`, so their list stops growing: a reader that
told a warned record by the list's length tallied it "mapped" (or "warned" and "mapped" both).
Each input below holds more bad records than are listed (the bound lowered to
:data:`LISTED`: ``keep_warning`` and ``warning_count`` read it at each call), every one of them
warning; its records are shaped as the reader's own tests and fixtures shape them.

Also: a time that is no time in Codex's ``session_meta`` (or legacy header) is warned of on its
line and the record accounted as warned about; in Claude Code's ``queued_command`` attachment it
is said with the reader's other bad times (one notice for the file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.adk_runs import dumped_event
from turnfold.formats import source
from turnfold.formats.source import UnlistedWarnings
from turnfold.model import Transcript, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures"
#: The warnings listed in these loads; :data:`BAD` records warn, the rest only counted.
LISTED = 3
BAD = LISTED + 3
TS = "2026-05-12T10:00:00.000Z"


@pytest.fixture
def few_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_LISTED_WARNINGS", LISTED)


def jsonl(records: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def counts(transcript: Transcript) -> dict[str, dict[str, int]]:
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    return transcript.accounting.counts


def assert_counted_past_listed(transcript: Transcript) -> None:
    """The load went past the listed warnings: the last of those it read says how many more."""
    shown = [w for w in transcript.warnings if isinstance(w, UnlistedWarnings)]
    assert len(shown) == 1
    assert shown[0].count >= BAD - LISTED


# --- Codex rollouts (formats/codex.py) ---------------------------------------------------------


def codex_record(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": TS, "type": kind, "payload": payload}


CODEX_META = codex_record(
    "session_meta", {"id": "sess-1", "timestamp": TS, "cwd": "/repo", "cli_version": "0.129.0"}
)


def test_L4_codex_outputs_past_the_listed_warnings_are_each_accounted_warned(
    few_listed: None,
) -> None:
    # The outputs of calls the rollout no longer holds (its head cut off): one warning each.
    outputs = [
        codex_record(
            "response_item",
            {"type": "function_call_output", "call_id": f"call_gone_{n}", "output": "done"},
        )
        for n in range(BAD)
    ]
    transcript = turnfold.load(jsonl([CODEX_META, *outputs]), format="codex")
    assert counts(transcript)["response_item/function_call_output"] == {"warned": BAD}
    assert_counted_past_listed(transcript)


# --- codex exec --json (formats/agents/codex_exec.py) ---------------------------------------

EXEC_FIXTURES = FIXTURES / "agents" / "codex-exec-json"


def test_L4_codex_exec_an_item_warned_past_the_listed_warnings_is_not_also_mapped(
    few_listed: None,
) -> None:
    # A newer Codex's item types (each warned of), then an MCP call whose block MCP does not
    # define, as in the hand-made every-item fixture (exec_events.rs).
    lines = (EXEC_FIXTURES / "hand-made_exec-json_every-item.jsonl").read_text().splitlines()
    started = json.loads(lines[0])
    mcp = next(json.loads(t) for t in lines if '"item.completed"' in t and "mcp_tool_call" in t)
    mcp["item"]["result"]["content"] = [{"type": "video", "uri": "file:///clip.mp4"}]
    newer = [
        {"type": "item.completed", "item": {"id": f"item_{n + 90}", "type": "hologram"}}
        for n in range(BAD)
    ]
    events = [started, *newer, mcp]
    transcript = turnfold.load(events, format="codex-exec-json")
    tally = counts(transcript)
    assert tally["item/mcp_tool_call"] == {"warned": 1}
    assert transcript.accounting is not None
    assert transcript.accounting.total() == len(events)  # one account for each event
    assert_counted_past_listed(transcript)


def test_L4_codex_exec_legacy_events_warned_past_the_listed_warnings_are_not_also_mapped(
    few_listed: None,
) -> None:
    # The legacy fixture's exec_command_end (Codex < 0.44), of calls whose begin is missing.
    legacy = EXEC_FIXTURES / "hand-made_legacy-exec-json_codex-0.43-shape.jsonl"
    end = next(json.loads(t) for t in legacy.read_text().splitlines() if "command_end" in t)
    ends = []
    for n in range(BAD):
        event = json.loads(json.dumps(end))
        event["msg"]["call_id"] = f"call_gone_{n}"
        ends.append(event)
    events = [{"id": "0", "msg": {"type": "task_started"}}, *ends]
    transcript = turnfold.load(jsonl(events), format="codex-exec-json")
    assert counts(transcript)["msg/exec_command_end"] == {"warned": BAD}
    assert_counted_past_listed(transcript)


# --- mini-swe-agent (formats/harnesses/mini_swe_agent.py) -------------------------------------


def test_L4_mini_swe_agent_outputs_past_the_listed_warnings_are_each_accounted_warned(
    few_listed: None,
) -> None:
    # A trajectory the real mini-swe-agent 2.4.6 wrote, its tool output repeated for calls
    # the trajectory does not hold.
    path = "harnesses/mini-swe-agent/mini-swe-agent_v2.4.6_toolcall_format-error.traj.json"
    written = json.loads((FIXTURES / path).read_text())
    system, task, _, output = written["messages"][:4]
    assert output["role"] == "tool"
    strays = [{**output, "tool_call_id": f"call_gone_{n}"} for n in range(BAD)]
    transcript = turnfold.load({**written, "messages": [system, task, *strays]})
    assert transcript.metadata["source_format"] == "mini-swe-agent"
    assert counts(transcript)["tool"] == {"warned": BAD}
    assert_counted_past_listed(transcript)


# --- ShareGPT (formats/sharegpt.py) -------------------------------------------------------------


SHAREGPT_ROW = FIXTURES / "messages" / "sharegpt_llama-factory_function-calls.json"


def test_L4_sharegpt_calls_past_the_listed_warnings_are_each_accounted_warned(
    few_listed: None,
) -> None:
    # The LLaMA-Factory row's call that is no {name, arguments} JSON, made again and again.
    row = json.loads(SHAREGPT_ROW.read_text())
    messages = row["conversations"]
    prompt, unparsed = messages[7], messages[8]
    assert unparsed["value"] == "order_pizza(size=large)"
    transcript = turnfold.load([prompt, *[unparsed] * BAD])
    assert transcript.metadata["source_format"] == "sharegpt"
    assert counts(transcript)["function_call"] == {"warned": BAD}
    assert_counted_past_listed(transcript)


# --- OpenAI Agents SDK (formats/frameworks/openai_agents.py) -------------------------------------


def agents_item(kind: str, raw: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": kind, "raw_item": raw, "agent": {"name": "triage"}, **extra}


def stray_handoffs() -> list[dict[str, Any]]:
    """Handoff outputs of calls the items do not hold: one builder warning each."""
    writer = {"name": "writer"}
    outputs = [{"type": "function_call_output", "call_id": f"gone_{n}", "output": "{}"}
               for n in range(BAD)]  # fmt: skip
    return [agents_item("handoff_output_item", raw, target_agent=writer) for raw in outputs]


def test_X1_openai_agents_items_past_the_listed_warnings_are_counted_and_accounted_warned(
    few_listed: None,
) -> None:
    transcript = turnfold.load(stray_handoffs())
    assert counts(transcript) == {"handoff_output_item": {"warned": BAD}}
    # The run's warnings were listed each, whatever their number: a hostile state of a
    # million bad items held a warning object each.
    assert len(transcript.warnings) == LISTED + 1
    assert str(transcript.warnings[-1]).endswith(
        f"{BAD - LISTED} more problem(s) like those above, not listed one by one"
    )


def test_X1_openai_agents_a_call_read_in_place_past_the_listed_warnings_is_accounted_warned(
    few_listed: None,
) -> None:
    # A RunResult's own ToolCallItem objects (read in place): the second reuses the first's
    # call id before its output, which warns.
    from agents.items import ToolCallItem
    from openai.types.responses import ResponseFunctionToolCall

    from agents import Agent

    agent = Agent(name="triage")
    raw = ResponseFunctionToolCall(type="function_call", call_id="c1", name="add", arguments="{}")
    calls = [ToolCallItem(agent=agent, raw_item=raw.model_copy()) for _ in "ab"]
    transcript = turnfold.load({"new_items": [*stray_handoffs(), *calls]})
    assert counts(transcript)["tool_call_item"] == {"mapped": 1, "warned": 1}
    assert len(transcript.warnings) == LISTED + 1
    assert str(transcript.warnings[-1]).endswith(
        f"{BAD + 1 - LISTED} more problem(s) like those above, not listed one by one"
    )


# --- Google ADK (formats/frameworks/adk.py) -----------------------------------------------------


@pytest.mark.parametrize("as_lines", [False, True], ids=["events", "jsonl"])
def test_L4_adk_events_warned_past_the_listed_warnings_are_accounted_once_each(
    few_listed: None, as_lines: bool
) -> None:
    answers = [{"id": f"call_gone_{n}", "name": "add", "response": {"result": 1}}
               for n in range(BAD)]  # fmt: skip
    responses = [dumped_event("calc", [{"function_response": answer}]) for answer in answers]
    events = [dumped_event("user", [{"text": "add them"}]), *responses]
    transcript = turnfold.load(jsonl(events) if as_lines else events, format="adk")
    # Once each, under its type: not a second time as the JSON object it is.
    assert counts(transcript) == {"user": {"mapped": 1}, "function_response": {"warned": BAD}}
    assert_counted_past_listed(transcript)


# --- bad times said on their line -----------------------------------------------------------------


def test_L4_codex_a_session_meta_time_that_is_no_time_is_warned_of() -> None:
    # The real two-turn rollout (Codex 0.129), its session_meta's time made unreadable.
    lines = (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])
    assert meta["type"] == "session_meta"
    meta["payload"]["timestamp"] = "yesterday"
    transcript = turnfold.load("\n".join([json.dumps(meta), *lines[1:]]), format="codex")
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (1, "session_meta: its timestamp 'yesterday' is no time; left out")
    ]
    assert "started_at" not in transcript.metadata
    assert transcript.metadata["session_id"] == meta["payload"]["id"]  # the rest still read
    assert counts(transcript)["session_meta"] == {"warned": 1}


def test_L4_codex_a_legacy_header_time_that_is_no_time_is_warned_of() -> None:
    # The envelope-less layout of mid-2025 (test_codex.LEGACY): the header's time, a number.
    header = {"id": "legacy-1", "timestamp": 1748772000, "instructions": None, "git": {}}
    prompt = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Create a README"}],
    }
    transcript = turnfold.load(jsonl([header, prompt]), format="codex")
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (1, "the header: its timestamp 1748772000 is no time; left out")
    ]
    assert transcript.metadata["session_id"] == "legacy-1"
    assert "started_at" not in transcript.metadata


def test_L4_claude_code_a_queued_command_time_that_is_no_time_is_said(tmp_path: Path) -> None:
    # The hand-made session of queued prompts (Claude Code 2.1 shapes), the queued_command
    # attachment's own time made unreadable: said at the end, one notice for the file, with the
    # lines' own bad times when its line has none either (test_claude_code's coverage fixture
    # holds three such attachments).
    fixture = FIXTURES / "claude-code" / "v2.1_queued-prompts-and-wrappers.jsonl"
    records = [json.loads(t) for t in fixture.read_text().splitlines()]
    at = next(
        n for n, r in enumerate(records)
        if r["type"] == "attachment" and r["attachment"]["type"] == "queued_command"
    )  # fmt: skip
    records[at]["attachment"]["timestamp"] = "soon"
    path = tmp_path / "session.jsonl"
    path.write_text(jsonl(records))
    transcript = turnfold.load(path)
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (at + 1, "1 queued command(s) have no readable time of their own; shown at their line's "
                 "time")
    ]  # fmt: skip
    # The prompt is still shown, at its record's time.
    queued = [e for e in transcript if isinstance(e, UserMessage) and e.meta.get("queued")]
    assert [(e.text, e.timestamp) for e in queued] == [
        ("also run the linter", records[at]["timestamp"])
    ]
    assert counts(transcript)["attachment/queued_command"] == {"mapped": 1}
    # Its record's time unreadable too: still one line without a time.
    records[at]["timestamp"] = "later"
    path.write_text(jsonl(records))
    twice = turnfold.load(path)
    assert [(w.line, w.reason) for w in twice.warnings] == [
        (at + 1, "1 line(s) have no readable timestamp; shown without a time")
    ]
