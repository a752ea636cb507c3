"""The older Python Kimi CLI's sessions (``kimi-cli`` format): the real files kimi-cli 1.52.0
wrote playing the harness's ``work`` and ``interrupt`` scenarios (tests/agents/scenarios.py)
against the scripted Chat Completions server (tests/fixtures/kimi/kimi_cli_recipe.py says how)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus import scan
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import AbortMarker, AssistantText, Thinking, UserMessage
from turnfold.nesting import MAX_DEPTH

LEGACY = Path(__file__).parents[1] / "fixtures" / "kimi" / "legacy"
WORK_SESSION = LEGACY / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"
WORK = WORK_SESSION / "context.jsonl"
INTERRUPT_SESSION = LEGACY / "interrupt" / "86b9e2c1-62dd-4394-9416-54a1ba079a2b"
INTERRUPT = INTERRUPT_SESSION / "context.jsonl"


def truth(scenario: str) -> dict:
    return json.loads((LEGACY / scenario / "truth.txt").read_text())


def usages(transcript: turnfold.Transcript) -> list[tuple[int | None, ...]]:
    return [
        (u.input_tokens, u.output_tokens, u.cache_read_tokens)
        for e in transcript.entries
        if (u := getattr(e, "usage", None)) is not None
    ]


def test_the_work_session_holds_the_servers_calls_and_outcomes() -> None:
    t = turnfold.load(WORK)
    assert t.metadata["source_format"] == "kimi-cli"
    assert not t.warnings
    assert t.accounting is not None
    assert not t.accounting.unaccounted
    issued = [i for i in truth("work")["issued"] if i["thread"] != "TF-SUBTASK"]
    got = t.tool_calls()
    assert [c.call_id for c in got] == [i["call_id"] for i in issued]
    assert [c.name for c in got] == [i["name"] for i in issued]
    status = {"ok": "success", "fail": "error"}
    # The context holds no error flag: the outcome is the wire's ToolResult.is_error.
    assert [c.status for c in got] == [status[i["outcome"]] for i in issued]
    for call, seen in zip(got, issued, strict=True):
        assert call.result is not None
        assert call.result.text is not None
        # The model is sent the output after the tool's <system> message; an edit's result is
        # that message alone; a failure's shows it after its output.
        shown = call.result.text
        if call.status == "error":
            shown, _, why = shown.rpartition("\n")
            assert f"<system>ERROR: {why}</system>" in seen["result"]
        assert shown[:100] in seen["result"]
    assert len({c.batch_id for c in got[:3]}) == 1
    assert got[3].batch_id != got[0].batch_id
    assert got[0].args == {"path": str(Path(str(got[0].args["path"])).parent / "notes.txt")}
    failed = got[4]
    assert failed.args["command"] == "echo TF-FAIL-OUT; ls /tf-missing; exit 3"
    assert failed.result is not None
    # Why it failed is shown after its output (the wire keeps it beside the output).
    assert failed.result.text == (
        "TF-FAIL-OUT\nls: cannot access '/tf-missing': No such file or directory\n"
        "Command failed with exit code: 3."
    )
    assert failed.meta["note"] == "Command failed with exit code: 3."
    assert got[1].result is not None
    assert got[1].result.text == "src/app.py"  # a success's message is no part of its result
    # Paths are shown relative to the working folder the system prompt states.
    assert t.metadata["cwd"] == str(Path(str(got[0].args["path"])).parent)
    assert [c.description for c in got[:3]] == ["notes.txt", "TF-NEEDLE", "*"]
    assert got[5].result is not None
    assert got[5].result.text == (
        "File successfully edited. Applied 1 edit(s) with 1 total replacement(s)."
    )


def test_the_work_session_holds_prompts_thinking_and_texts() -> None:
    t = turnfold.load(WORK)
    users = [e.text for e in t.entries if isinstance(e, UserMessage)]
    assert [u.split(":")[0] for u in users] == ["TF-FIRST", "TF-SECOND"]
    thinking = [e.text for e in t.entries if isinstance(e, Thinking)]
    assert thinking == ["TF-THINK: read, search and list at once."]
    texts = [e.text.split(":")[0] for e in t.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-FIX", "TF-DONE-1", "TF-DONE-2"]
    assert t.metadata["session_id"] == WORK_SESSION.name
    assert t.metadata["system_prompt"].startswith("You are Kimi Code CLI")
    assert t.metadata["protocol_version"] == "1.10"


def test_each_response_carries_the_usage_the_server_sent() -> None:
    """StatusUpdate's ``input_other`` is the prompt less its cache reads; the context's own
    ``_usage`` (the context's size) is not a response's usage."""
    t = turnfold.load(WORK)
    sent = [r for r in truth("work")["responses"] if not r["side"]]
    own = [r["usage"] for r in sent if r["thread"] != "TF-SUBTASK"]
    child = [r["usage"] for r in sent if r["thread"] == "TF-SUBTASK"]
    expected = [(u["input_tokens"], u["output_tokens"], u["cache_read_tokens"]) for u in own]
    assert usages(t) == expected
    agent = next(c for c in t.tool_calls() if c.name == "Agent").subagent
    assert agent is not None
    assert agent.transcript is not None
    assert usages(agent.transcript) == [
        (u["input_tokens"], u["output_tokens"], u["cache_read_tokens"]) for u in child
    ]


def test_the_subagent_is_nested_in_its_agent_call() -> None:
    t = turnfold.load(WORK)
    spawn = next(c for c in t.tool_calls() if c.name == "Agent")
    assert spawn.status == "success"
    assert "TF-SUB-DONE" in (spawn.result.text or "") if spawn.result else False
    agent = spawn.subagent
    assert agent is not None
    assert (agent.agent_id, agent.name) == ("a999e2ce6", "coder")
    assert agent.task == "TF-SUBTASK: echo a word and report back."
    child = agent.transcript
    assert child is not None
    inner = child.tool_calls()
    assert [(c.call_id, c.name, c.status) for c in inner] == [
        ("call_tfsubtask_0_0", "Shell", "success")
    ]
    assert inner[0].result is not None
    assert inner[0].result.text == "TF-SUB-OK\n"
    texts = [e.text for e in child.entries if isinstance(e, AssistantText)]
    assert [x.split(":")[0] for x in texts] == ["TF-SUB-DONE"]


def test_the_interrupted_command_is_cancelled_in_a_stopped_turn() -> None:
    """A SIGINT kills the command (exit code -2) and ends the turn: the CLI records a failed
    result and, for a cancel, no StepInterrupted, only the turn's end; its context never got the
    step (calls are appended with their results), which the wire keeps. The model never saw the
    result: the turn was stopped, not completed, and the command was the user's to stop, not a
    failure (the harness's truth.txt: "cancelled"), its output and exit code kept."""
    t = turnfold.load(INTERRUPT)
    assert not t.warnings
    (call,) = t.tool_calls()
    assert call.args["command"] == "echo TF-SLOW-START; sleep 45"
    assert [i["outcome"] for i in truth("interrupt")["issued"]] == ["cancelled"]
    assert call.status == "cancelled"
    assert call.result is not None
    assert call.result.text == "TF-SLOW-START\nCommand failed with exit code: -2."
    assert call.meta["note"] == "Command failed with exit code: -2."
    assert isinstance(t.entries[-1], AbortMarker)
    assert t.entries.index(call) < len(t.entries) - 1
    assert usages(t) == [(2120, 29, 1020)]


def test_a_turn_ended_after_its_calls_is_stopped_and_its_running_calls_cancelled(
    tmp_path: Path,
) -> None:
    """``TurnEnd`` right after a step that made calls (Ctrl-C before the command returned): the
    call that never got its result is cancelled, the turn stopped; a turn that ends on its
    answer is not."""
    wire = tmp_path / "wire.jsonl"
    events = [
        ("TurnBegin", {"user_input": "TF-ONE"}),
        ("StepBegin", {"n": 1}),
        ("ContentPart", {"type": "text", "text": "TF-ANSWER"}),
        ("TurnEnd", {}),
        ("TurnBegin", {"user_input": "TF-TWO"}),
        ("StepBegin", {"n": 1}),
        ("ToolCall", {"type": "function", "id": "c1",
                      "function": {"name": "Shell", "arguments": '{"command": "sleep 9"}'}}),
        ("TurnEnd", {}),
    ]  # fmt: skip
    lines = [json.dumps({"type": "metadata", "protocol_version": "1.10"})]
    lines += [json.dumps({"timestamp": 1796480472.5 + n, "message": {"type": kind,
              "payload": payload}}) for n, (kind, payload) in enumerate(events)]  # fmt: skip
    wire.write_text("\n".join(lines) + "\n")
    t = turnfold.load(wire, format="kimi-cli")
    kinds = [type(e).__name__ for e in t.entries]
    assert kinds == ["UserMessage", "AssistantText", "UserMessage", "ToolCall", "AbortMarker"]
    (call,) = t.tool_calls()
    assert call.status == "cancelled"


def _nested(event: dict, runs: list[tuple[str, str]]) -> dict:
    """``event`` of the agent ``runs`` lead down to: each ``(call id, agent id)`` runs the next
    level's agent, outermost first, as the wire nests a sub-agent's events
    (``SubagentEvent`` in its parent's, ``kimi_cli/wire/``)."""
    for call_id, agent_id in reversed(runs):
        event = {"type": "SubagentEvent", "payload": {"parent_tool_call_id": call_id,
                 "agent_id": agent_id, "subagent_type": "coder", "event": event}}  # fmt: skip
    return event


def test_C7_sub_agents_nest_down_to_the_bound_and_one_deeper_is_counted(tmp_path: Path) -> None:
    """Sub-agents that run sub-agents, their events nested in the lead's wire: past 8 levels
    they were dropped, and nothing said so. Now they nest down to every reader's bound
    (turnfold.nesting); the events of the one a level deeper are counted in a warning naming
    it and its lines. The real sub-agent's events are moved down a chain of links, each an
    agent whose one call runs the next."""
    session = tmp_path / WORK_SESSION.name
    shutil.copytree(WORK_SESSION, session)
    runs = [("call_tffirst_5_0", "link-1")]
    runs += [(f"call_link_{k}", f"link-{k + 1}") for k in range(1, MAX_DEPTH)]
    runs += [(f"call_link_{MAX_DEPTH}", "a999e2ce6")]  # the real sub-agent, a level too deep
    lines: list[str] = []
    cut: list[int] = []
    for line in (WORK_SESSION / "wire.jsonl").read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("type") != "SubagentEvent":
            lines.append(line)
            continue
        if not cut:  # each link's prompt and call, before the real sub-agent's first event
            for k in range(1, MAX_DEPTH + 1):
                arguments = json.dumps({"prompt": f"TF-LINK-{k + 1}", "subagent_type": "coder"})
                for event in (
                    {"type": "TurnBegin", "payload": {"user_input": f"TF-LINK-{k}"}},
                    {"type": "StepBegin", "payload": {"n": 1}},
                    {"type": "ToolCall", "payload": {"type": "function", "id": f"call_link_{k}",
                     "function": {"name": "Agent", "arguments": arguments}}},
                ):  # fmt: skip
                    lines.append(json.dumps({**record, "message": _nested(event, runs[:k])}))
        lines.append(json.dumps({**record, "message": _nested(message["payload"]["event"], runs)}))
        cut.append(len(lines))  # its line in the file
    (session / "wire.jsonl").write_text("\n".join(lines) + "\n")
    transcript = turnfold.load(session)
    levels, inner = [], transcript
    while True:  # down the chain: each level holds one sub-agent
        (agent,) = [c.subagent for c in inner.tool_calls() if c.subagent]
        levels.append(agent.agent_id)
        if agent.transcript is None:
            break
        inner = agent.transcript
    assert levels == [agent for _, agent in runs]
    assert (agent.name, agent.task) == ("coder", f"TF-LINK-{MAX_DEPTH + 1}")
    assert [w.reason for w in transcript.warnings] == [
        f"sub-agent 'a999e2ce6' of call call_link_{MAX_DEPTH} is {MAX_DEPTH + 1} sub-agents "
        f"deep, past the {MAX_DEPTH} that nest under their calls: not shown here; its "
        f"{len(cut)} events (lines {cut[0]}-{cut[-1]}) are not read"
    ]
    assert [w.line for w in transcript.warnings] == [cut[0]]


def test_a_command_that_failed_on_its_own_before_a_stop_stays_failed(tmp_path: Path) -> None:
    """Only the command Ctrl-C killed (exit code -2) is the stop's: one that exited 3 before
    the user stopped the turn failed."""
    wire = tmp_path / "wire.jsonl"
    result = {
        "is_error": True,
        "output": "TF-OUT\n",
        "message": "Command failed with exit code: 3.",
    }
    events = [
        ("TurnBegin", {"user_input": "TF-ONE"}),
        ("StepBegin", {"n": 1}),
        ("ToolCall", {"type": "function", "id": "c1",
                      "function": {"name": "Shell", "arguments": '{"command": "exit 3"}'}}),
        ("ToolResult", {"tool_call_id": "c1", "return_value": result}),
        ("TurnEnd", {}),
    ]  # fmt: skip
    lines = [json.dumps({"type": "metadata", "protocol_version": "1.10"})]
    lines += [json.dumps({"timestamp": 1796480472.5 + n, "message": {"type": kind,
              "payload": payload}}) for n, (kind, payload) in enumerate(events)]  # fmt: skip
    wire.write_text("\n".join(lines) + "\n")
    t = turnfold.load(wire, format="kimi-cli")
    (call,) = t.tool_calls()
    assert call.status == "error"
    assert isinstance(t.entries[-1], AbortMarker)


def test_a_context_without_its_wire_is_read_from_its_messages(tmp_path: Path) -> None:
    """Early kimi-cli versions wrote no wire: the calls, their results and the
    ``<system>ERROR:`` mark come from the context itself."""
    shutil.copyfile(WORK, tmp_path / "context.jsonl")
    t = turnfold.load(tmp_path / "context.jsonl")
    assert t.metadata["source_format"] == "kimi-cli"
    assert not t.warnings
    issued = [i for i in truth("work")["issued"] if i["thread"] != "TF-SUBTASK"]
    got = t.tool_calls()
    assert [c.call_id for c in got] == [i["call_id"] for i in issued]
    status = {"ok": "success", "fail": "error"}
    assert [c.status for c in got] == [status[i["outcome"]] for i in issued]
    assert got[4].meta["note"] == "ERROR: Command failed with exit code: 3."
    assert got[4].result is not None
    assert (got[4].result.text or "").endswith(
        "directory\nERROR: Command failed with exit code: 3."
    )
    assert got[0].description == "notes.txt"
    assert [e.text for e in t.entries if isinstance(e, Thinking)] == [
        "TF-THINK: read, search and list at once."
    ]
    users = [e.text.split(":")[0] for e in t.entries if isinstance(e, UserMessage)]
    assert users == ["TF-FIRST", "TF-SECOND"]
    assert usages(t) == []  # the context records no response's usage


def test_the_wire_loads_on_its_own_and_openai_messages_stay_openai(tmp_path: Path) -> None:
    wire = turnfold.load(WORK_SESSION / "wire.jsonl")
    assert wire.metadata["source_format"] == "kimi-cli"
    assert [c.call_id for c in wire.tool_calls()] == [
        c.call_id for c in turnfold.load(WORK).tool_calls()
    ]
    # The same messages without the CLI's own records are plain Chat Completions messages.
    plain = tmp_path / "messages.jsonl"
    lines = WORK.read_text().splitlines()
    plain.write_text("".join(x + "\n" for x in lines if '"role": "_' not in x))
    assert turnfold.load(plain).metadata["source_format"] != "kimi-cli"


def test_a_scan_of_kimi_gives_one_row_per_session(tmp_path: Path) -> None:
    """A session folder holds context.jsonl, wire.jsonl, state.json and subagents/: the context
    is the one row (read with its wire); the sub-agents' files and kimi.json are none."""
    root = tmp_path / ".kimi"
    sessions = root / "sessions" / "06d00adc90eb60cfe03659fab99973de"
    for session in (WORK_SESSION, INTERRUPT_SESSION):
        shutil.copytree(session, sessions / session.name)
        (sessions / session.name / "state.json").write_text('{"version": 1, "todos": []}')
    (root / "kimi.json").write_text('{"work_dirs": []}')
    corpus = scan(tmp_path, workers=1, cache=False)
    assert sorted(r["key"] for r in corpus) == sorted(
        str(sessions / s.name / "context.jsonl") for s in (WORK_SESSION, INTERRUPT_SESSION)
    )
    assert all(r["error"] is None and r["format"] == "kimi-cli" for r in corpus)
    assert sorted(r["tool_calls"] for r in corpus) == [1, 10]  # the sub-agent's not counted


def test_an_approval_answer_is_kept_on_its_call(tmp_path: Path) -> None:
    """Print mode approves without asking, so the fixture has no approval: one is put into a
    copy of its wire in the shape of ``kimi_cli/wire/types.py`` (ApprovalRequest's id and
    tool_call_id, ApprovalResponse's request_id and response)."""
    request = {"id": "req-1", "tool_call_id": "call_tffirst_2_0", "sender": "Shell",
               "action": "run command", "description": "exit 3"}  # fmt: skip
    answer = {"request_id": "req-1", "response": "approve", "feedback": ""}
    lines = []
    for line in (WORK_SESSION / "wire.jsonl").read_text().splitlines():
        lines.append(line)
        if '"id": "call_tffirst_2_0"' in line:
            for kind, payload in (("ApprovalRequest", request), ("ApprovalResponse", answer)):
                message = {"type": kind, "payload": payload}
                lines.append(json.dumps({"timestamp": 1.0, "message": message}))
    (tmp_path / "wire.jsonl").write_text("\n".join(lines) + "\n")
    t = turnfold.load(tmp_path / "wire.jsonl")
    assert not t.warnings
    approved = [c.call_id for c in t.tool_calls() if c.meta.get("approval") == "approve"]
    assert approved == ["call_tffirst_2_0"]


def same_load(folder: Path, main: Path) -> turnfold.Transcript:
    """The folder's load, checked equal to its main file's (with and without ``format=``)."""
    by_file = turnfold.load(main)
    for by_folder in (turnfold.load(folder), turnfold.load(str(folder), format="kimi-cli")):
        assert by_folder.entries == by_file.entries
        assert by_folder.warnings == by_file.warnings
        assert by_folder.metadata == by_file.metadata
        assert by_folder.accounting == by_file.accounting
    return by_file


def test_a_session_folder_loads_as_its_context_with_its_wire() -> None:
    """``ls ~/.kimi/sessions/<hash>/`` shows session folders: one loads as the context.jsonl a
    scan makes its row of, read with the wire beside it."""
    t = same_load(WORK_SESSION, WORK)
    issued = [i for i in truth("work")["issued"] if i["thread"] != "TF-SUBTASK"]
    assert [c.call_id for c in t.tool_calls()] == [i["call_id"] for i in issued]
    assert usages(t)  # the wire's token counts: it was read, not the context alone
    assert t.metadata["session_id"] == WORK_SESSION.name
    t = same_load(INTERRUPT_SESSION, INTERRUPT)
    (call,) = t.tool_calls()
    assert call.meta["note"] == "Command failed with exit code: -2."


def test_a_session_folder_of_one_file_loads_as_that_file(tmp_path: Path) -> None:
    """Early versions wrote no wire: the folder is its context. A folder whose context is
    gone, or empty, is its wire."""
    early = tmp_path / "early"
    early.mkdir()
    shutil.copyfile(WORK, early / "context.jsonl")
    t = same_load(early, early / "context.jsonl")
    assert not usages(t)
    assert len(t.tool_calls()) == 10
    wired = tmp_path / "wired"
    wired.mkdir()
    shutil.copyfile(WORK_SESSION / "wire.jsonl", wired / "wire.jsonl")
    t = same_load(wired, wired / "wire.jsonl")
    assert usages(t)
    assert len(t.tool_calls()) == 10
    # Interrupted before the context's first message: its context empty, its wire not.
    (wired / "context.jsonl").write_bytes(b"")
    assert turnfold.load(wired).entries == t.entries


def test_a_session_never_run_is_an_error_naming_its_folder(tmp_path: Path) -> None:
    """``Session.create`` makes the folder and an empty context.jsonl; the wire comes once the
    session runs (its metadata line first)."""
    folder = tmp_path / INTERRUPT_SESSION.name
    folder.mkdir()
    (folder / "context.jsonl").write_bytes(b"")
    with pytest.raises(IsADirectoryError, match=re.escape(str(folder))):
        turnfold.load(folder)  # an empty file says nothing of whose it is
    (folder / "wire.jsonl").write_text('{"type": "metadata", "protocol_version": "1.10"}\n')
    for format in (None, "kimi-cli"):
        with pytest.raises(TranscriptFormatError, match=re.escape("context.jsonl is empty")) as e:
            turnfold.load(folder, format=format)
        assert e.value.source == str(folder)
    (folder / "context.jsonl").unlink()
    (folder / "wire.jsonl").unlink()
    with pytest.raises(TranscriptFormatError, match=re.escape("context.jsonl is missing")) as e:
        turnfold.load(folder, format="kimi-cli")
    assert e.value.source == str(folder)


def test_a_session_folder_is_told_by_its_records_not_its_name(tmp_path: Path) -> None:
    """A folder named as a session whose files hold plain Chat Completions messages is none
    of this CLI's (nor of Kimi Code's)."""
    plain = tmp_path / WORK_SESSION.name
    plain.mkdir()
    lines = WORK.read_text().splitlines()
    (plain / "context.jsonl").write_text("".join(x + "\n" for x in lines if '"role": "_' not in x))
    with pytest.raises(IsADirectoryError):
        turnfold.load(plain)
    with pytest.raises(TranscriptFormatError, match=re.escape("wire.jsonl is missing")):
        turnfold.load(WORK_SESSION, format="kimi")


def test_a_scan_of_the_legacy_fixtures_still_gives_one_row_per_session() -> None:
    rows = list(scan(LEGACY, workers=1, cache=False))
    assert sorted(r["key"] for r in rows) == sorted(str(m) for m in (WORK, INTERRUPT))
    folders = sorted((WORK_SESSION, INTERRUPT_SESSION), key=lambda s: str(s / "context.jsonl"))
    loaded = scan([turnfold.load(s) for s in folders], workers=1, cache=False)
    place = ("key", "path", "sample")
    for row, by_folder in zip(sorted(rows, key=lambda r: r["key"]), loaded, strict=True):
        assert {k: v for k, v in row.items() if k not in place} == {
            k: v for k, v in by_folder.items() if k not in place
        }
