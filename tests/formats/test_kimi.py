"""Kimi Code CLI sessions (``kimi`` format): the real journals @moonshot-ai/kimi-code 2.1.0 wrote
playing the harness's ``work`` and ``interrupt`` scenarios (tests/agents/scenarios.py) against
the scripted Chat Completions server (tests/fixtures/kimi/kimi_recipe.py says how)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import turnfold
from turnfold.corpus import scan
from turnfold.model import AbortMarker, AssistantText, Thinking, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures" / "kimi"
WORK_SESSION = FIXTURES / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
WORK = WORK_SESSION / "agents" / "main" / "wire.jsonl"
SUBAGENT = WORK_SESSION / "agents" / "agent-0" / "wire.jsonl"
INTERRUPT_SESSION = FIXTURES / "interrupt" / "session_37d8302d-669d-4890-9429-1e0d87879dfe"
INTERRUPT = INTERRUPT_SESSION / "agents" / "main" / "wire.jsonl"


def truth(scenario: str) -> dict:
    return json.loads((FIXTURES / scenario / "truth.txt").read_text())


def test_the_work_session_holds_the_servers_calls_and_outcomes() -> None:
    t = turnfold.load(WORK)
    assert t.metadata["source_format"] == "kimi"
    assert not t.warnings
    assert t.accounting is not None
    assert not t.accounting.unaccounted
    issued = [i for i in truth("work")["issued"] if i["thread"] != "TF-SUBTASK"]
    got = t.tool_calls()
    assert [c.call_id for c in got] == [i["call_id"] for i in issued]
    assert [c.name for c in got] == [i["name"] for i in issued]
    status = {"ok": "success", "fail": "error"}
    assert [c.status for c in got] == [status[i["outcome"]] for i in issued]
    for call, seen in zip(got, issued, strict=True):
        assert call.result is not None
        assert call.result.text is not None
        # The model is sent the output with the CLI's framing around it (a "Wall time" line,
        # an error marker, the tool's note: meta["note"]); the journal holds the output.
        assert call.result.text[:100] in seen["result"]
    # A parallel read, search and list is one batch; the next call is another.
    assert len({c.batch_id for c in got[:3]}) == 1
    assert got[3].batch_id != got[0].batch_id
    assert got[0].args == {"path": str(Path(t.metadata["cwd"]) / "notes.txt")}
    failed = got[4]
    assert failed.args == {"command": "echo TF-FAIL-OUT; ls /tf-missing; exit 3"}
    assert failed.result is not None
    assert "exit code: 3" in (failed.result.text or "")


def test_the_work_session_holds_prompts_thinking_and_texts() -> None:
    t = turnfold.load(WORK)
    users = [e.text for e in t.entries if isinstance(e, UserMessage)]
    assert [u.split(":")[0] for u in users] == ["TF-FIRST", "TF-SECOND"]
    thinking = [e.text for e in t.entries if isinstance(e, Thinking)]
    assert thinking == ["TF-THINK: read, search and list at once."]
    texts = [e for e in t.entries if isinstance(e, AssistantText)]
    assert [x.text.split(":")[0] for x in texts] == ["TF-FIX", "TF-DONE-1", "TF-DONE-2"]
    assert {x.model for x in texts} == {"fake-model"}
    assert t.metadata["session_id"] == WORK_SESSION.name
    assert t.metadata["system_prompt"].startswith("You are Kimi Code CLI")


def test_each_response_carries_the_usage_the_server_sent() -> None:
    """usage.record / step.end ``inputOther`` is the prompt less its cache reads."""
    t = turnfold.load(WORK)
    sent = [r for r in truth("work")["responses"] if not r["side"]]
    own = [r["usage"] for r in sent if r["thread"] != "TF-SUBTASK"]
    child = [r["usage"] for r in sent if r["thread"] == "TF-SUBTASK"]

    def usages(transcript: turnfold.Transcript) -> list[tuple[int | None, ...]]:
        return [
            (u.input_tokens, u.output_tokens, u.cache_read_tokens)
            for e in transcript.entries
            if (u := getattr(e, "usage", None)) is not None
        ]

    assert usages(t) == [(u["input_tokens"], u["output_tokens"], u["cache_read_tokens"])
                         for u in own]  # fmt: skip
    agent = t.tool_calls()[-2].subagent
    assert agent is not None
    assert agent.transcript is not None
    assert usages(agent.transcript) == [
        (u["input_tokens"], u["output_tokens"], u["cache_read_tokens"]) for u in child
    ]


def test_the_subagent_is_nested_in_its_agent_call() -> None:
    t = turnfold.load(WORK)
    spawn = next(c for c in t.tool_calls() if c.name == "Agent")
    assert spawn.status == "success"
    assert "TF-SUB-DONE" in (spawn.result.text or "")
    agent = spawn.subagent
    assert agent is not None
    assert agent.agent_id == "agent-0"
    assert agent.name == "coder"
    assert agent.task == "TF-SUBTASK: echo a word and report back."
    child = agent.transcript
    assert child is not None
    inner = child.tool_calls()
    assert [(c.call_id, c.name, c.status) for c in inner] == [
        ("call_tfsubtask_0_0", "Bash", "success")
    ]
    assert inner[0].result is not None
    assert inner[0].result.text == "TF-SUB-OK\n"
    texts = [e.text for e in child.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-SUB-DONE: the sub-agent echoed its word."]
    prompt = next(e for e in child.entries if isinstance(e, UserMessage))
    assert prompt.meta["origin"] == "system_trigger"


def test_the_interrupted_call_is_cancelled_after_an_abort() -> None:
    t = turnfold.load(INTERRUPT)
    assert not t.warnings
    (call,) = t.tool_calls()
    assert call.args == {"command": "echo TF-SLOW-START; sleep 45"}
    assert call.status == "cancelled"
    assert call.result is not None
    assert "TF-SLOW-START" in (call.result.text or "")
    aborts = [e for e in t.entries if isinstance(e, AbortMarker)]
    assert [a.reason for a in aborts] == ["user_cancelled"]
    # The interrupted step's step.end has no usage: its usage.record is the response's.
    assert call.usage is not None
    assert call.usage.input_tokens == 2120


def test_journals_are_detected_as_kimi_and_nothing_else() -> None:
    for path in (WORK, SUBAGENT, INTERRUPT):
        assert turnfold.load(path).metadata["source_format"] == "kimi"


def test_a_subagent_journal_loads_on_its_own() -> None:
    t = turnfold.load(SUBAGENT)
    assert [c.name for c in t.tool_calls()] == ["Bash"]
    assert "session_id" in t.metadata


def test_a_scan_of_kimi_code_gives_one_row_per_session(tmp_path: Path) -> None:
    """A session folder holds state.json and a journal per agent (and the CLI's file history,
    task logs and diagnostic log): the lead agent's journal is the one row; the sub-agent's
    journal, the session index and workspaces list at the top are none."""
    root = tmp_path / ".kimi-code"
    sessions = root / "sessions" / "wd_work_6703865c9087"
    for session in (WORK_SESSION, INTERRUPT_SESSION):
        folder = sessions / session.name
        shutil.copytree(session, folder)
        (folder / "notify").mkdir()
        (folder / "notify" / "state.json").write_text("{}")
        (folder / "agents" / "main" / "tasks").mkdir()
        (folder / "agents" / "main" / "tasks" / "bash-1.json").write_text('{"id": "bash-1"}')
    index = [{"sessionId": s.name, "sessionDir": str(sessions / s.name), "workDir": "/w"}
             for s in (WORK_SESSION, INTERRUPT_SESSION)]  # fmt: skip
    (root / "session_index.jsonl").write_text("".join(json.dumps(i) + "\n" for i in index))
    corpus = scan(tmp_path, workers=1, cache=False)
    rows = [r for r in corpus if r["format"] == "kimi"]
    assert sorted(r["key"] for r in rows) == sorted(
        str(sessions / s.name / "agents" / "main" / "wire.jsonl")
        for s in (WORK_SESSION, INTERRUPT_SESSION)
    )
    assert all(r["error"] is None for r in rows)
    assert sorted(r["tool_calls"] for r in rows) == [1, 10]
    assert not [r["key"] for r in corpus if "agent-0" in r["key"] or "tasks" in r["key"]]
