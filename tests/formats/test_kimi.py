"""Kimi Code CLI sessions (``kimi`` format): the real journals @moonshot-ai/kimi-code 2.1.0 wrote
playing the harness's ``work`` and ``interrupt`` scenarios (tests/agents/scenarios.py) against
the scripted Chat Completions server (tests/fixtures/kimi/kimi_recipe.py says how)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus import scan
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import AbortMarker, AssistantText, CompactionBoundary, Thinking, UserMessage
from turnfold.nesting import MAX_DEPTH

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


def test_C7_sub_agents_nest_down_to_the_bound_and_one_deeper_is_named(tmp_path: Path) -> None:
    """Sub-agents that spawn sub-agents: their journals nested only 8 deep, the ninth said to be
    missing ("no journal beside this one"), which it was not. Now they nest down to every
    reader's bound (turnfold.nesting); the one a level deeper is named in a warning saying
    where its journal is, which loads on its own, its own sub-agent nested in it. Each link is
    the lead's real journal, its ``subagent.spawned`` naming the next link's folder."""
    session = tmp_path / WORK_SESSION.name
    shutil.copytree(WORK_SESSION, session)
    journal = WORK.read_text()
    spawned = '"subagentId":"agent-0"'
    assert journal.count(spawned) == 3  # spawned, started, completed
    links = [f"link-{k}" for k in range(1, MAX_DEPTH + 2)]
    for at, spawns in zip(["main", *links], [*links, "agent-0"], strict=True):
        folder = session / "agents" / at
        folder.mkdir(exist_ok=True)
        (folder / "wire.jsonl").write_text(journal.replace(spawned, f'"subagentId":"{spawns}"'))
    transcript = turnfold.load(session / "agents" / "main" / "wire.jsonl")
    levels, inner = [], transcript
    while True:  # down the chain: each level holds one sub-agent
        (agent,) = [c.subagent for c in inner.tool_calls() if c.subagent]
        levels.append(agent.agent_id)
        if agent.transcript is None:
            break
        inner = agent.transcript
    assert levels == links
    assert not agent.steps_missing  # recorded, and named in the warning
    past = links[-1]
    assert [w.reason for w in transcript.warnings] == [
        f"sub-agent {past!r} is {MAX_DEPTH + 1} sub-agents deep, past the {MAX_DEPTH} that nest "
        f"under their calls: not shown here; its journal {past}/wire.jsonl loads as a session "
        "of its own"
    ]
    alone = turnfold.load(session / "agents" / past / "wire.jsonl")
    (spawn,) = [c for c in alone.tool_calls() if c.subagent]
    assert spawn.subagent is not None
    assert spawn.subagent.agent_id == "agent-0"
    assert spawn.subagent.transcript is not None
    assert not alone.warnings


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


API_ERROR_SESSION = FIXTURES / "api-error" / "session_0b23488f-2377-4b60-bf68-a40fc5d589d6"
SESSIONS = (WORK_SESSION, INTERRUPT_SESSION, API_ERROR_SESSION)
MAIN = ("agents", "main", "wire.jsonl")


def same_load(folder: Path, journal: Path) -> turnfold.Transcript:
    """The folder's load, checked equal to its journal's (with and without ``format=``)."""
    by_file = turnfold.load(journal)
    for by_folder in (turnfold.load(folder), turnfold.load(str(folder), format="kimi")):
        assert by_folder.entries == by_file.entries
        assert by_folder.warnings == by_file.warnings
        assert by_folder.metadata == by_file.metadata
        assert by_folder.accounting == by_file.accounting
    return by_file


def test_a_session_folder_loads_as_its_lead_agents_journal() -> None:
    """``ls ~/.kimi-code/sessions/<workdir>/`` shows session folders: one loads as the journal
    a scan makes its row of, its sub-agent nested and its state.json's facts in the metadata."""
    for session in SESSIONS:
        t = same_load(session, session.joinpath(*MAIN))
        assert t.metadata["session_id"] == session.name
    t = turnfold.load(WORK_SESSION)
    issued = truth("work")["issued"]
    calls = [c for c in t.tool_calls() if c.subagent is None]
    assert [c.call_id for c in t.tool_calls()] == [
        i["call_id"] for i in issued if i["thread"] != "TF-SUBTASK"
    ]
    (agent,) = [c.subagent for c in t.tool_calls() if c.subagent is not None]
    assert agent.transcript is not None
    assert [c.name for c in agent.transcript.tool_calls()] == ["Bash"]
    assert len(calls) == 9
    aborts = [e for e in turnfold.load(INTERRUPT_SESSION).entries if isinstance(e, AbortMarker)]
    assert [a.reason for a in aborts] == ["user_cancelled"]


def test_a_journal_cut_mid_line_loads_from_its_folder_as_from_its_file(tmp_path: Path) -> None:
    """The CLI killed while writing: the cut line is a warning, the rest shown, the same
    whichever path is given."""
    folder = tmp_path / "any-name"
    shutil.copytree(WORK_SESSION, folder)
    journal = folder.joinpath(*MAIN)
    data = journal.read_bytes()
    journal.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 40])
    t = same_load(folder, journal)
    (cut,) = t.warnings
    assert (cut.source, cut.line) == (str(journal), data.count(b"\n"))
    assert cut.reason.startswith("invalid JSON")
    assert [c.name for c in t.tool_calls()][:3] == ["Read", "Grep", "Glob"]


def test_a_session_folder_without_its_journal_is_an_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / WORK_SESSION.name
    shutil.copytree(WORK_SESSION, folder)
    journal = folder.joinpath(*MAIN)
    journal.write_bytes(b"")
    for format in (None, "kimi"):
        said = re.escape("agents/main/wire.jsonl is empty")
        with pytest.raises(TranscriptFormatError, match=said) as e:
            turnfold.load(folder, format=format)
        assert e.value.source == str(folder)
    journal.unlink()
    said = re.escape("agents/main/wire.jsonl is missing")
    with pytest.raises(TranscriptFormatError, match=said) as e:
        turnfold.load(folder)
    assert e.value.source == str(folder)


def test_an_empty_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / WORK_SESSION.name
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match=re.escape(str(folder))):
        turnfold.load(folder)  # nothing in it says whose it is
    with pytest.raises(TranscriptFormatError, match=re.escape("wire.jsonl is missing")) as e:
        turnfold.load(folder, format="kimi")
    assert e.value.source == str(folder)


def test_a_session_folder_is_told_by_its_contents_not_its_name(tmp_path: Path) -> None:
    """The folder's state.json says it is a Kimi Code session; a folder of that name whose
    state.json is another's is not one, and a session renamed still is."""
    renamed = tmp_path / "renamed"
    shutil.copytree(WORK_SESSION, renamed)
    assert turnfold.load(renamed).metadata["session_id"] == WORK_SESSION.name
    impostor = tmp_path / WORK_SESSION.name
    shutil.copytree(WORK_SESSION, impostor)
    (impostor / "state.json").write_text('{"version": 1, "todos": []}')
    with pytest.raises(IsADirectoryError):
        turnfold.load(impostor)
    with pytest.raises(TranscriptFormatError, match=re.escape("context.jsonl is missing")):
        turnfold.load(WORK_SESSION, format="kimi-cli")  # nor read as the older CLI's


def test_a_scan_of_the_fixtures_parent_still_gives_one_row_per_session() -> None:
    """Discovery makes each session folder one row, of its main file (the lead agent's
    journal; the older CLI's context.jsonl), whose summary is that of the folder's load."""
    legacy = FIXTURES / "legacy"
    mains = {
        **{s: s.joinpath(*MAIN) for s in SESSIONS},
        **{s: s / "context.jsonl" for s in sorted(legacy.glob("*/*-*-*-*-*"))},
    }
    assert len(mains) == 5
    rows = {r["key"]: r for r in scan(FIXTURES, workers=1, cache=False)}
    assert sorted(rows) == sorted(str(m) for m in mains.values())
    loaded = scan([turnfold.load(s) for s in mains], workers=1, cache=False)
    for main, row in zip(mains.values(), loaded, strict=True):
        place = ("key", "path", "sample")
        assert {k: v for k, v in rows[str(main)].items() if k not in place} == {
            k: v for k, v in row.items() if k not in place
        }


def test_a_steered_prompt_is_shown_once_and_its_queue_record_is_no_warning(
    tmp_path: Path,
) -> None:
    """A prompt sent while the turn runs: 2.1.0 writes ``prompt.steered`` when it is queued,
    then, as the loop takes it, its context copy and ``turn.steer`` with that copy's id (the
    records' shapes from the CLI's bundle, ``PromptSteered``, ``materializeMessage`` and
    ``TurnSteer``; no real session of the harness steers, so they are written here)."""
    head = WORK.read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(head) if '"turn.prompt"' in line)
    text = [{"type": "text", "text": "TF-STEER: also list the tests."}]
    steer = [
        {"type": "prompt.steered", "agentId": "main", "activePromptId": "msg_A",
         "promptIds": ["msg_S"], "messageId": "msg_S", "content": text,
         "steeredAt": "2026-12-05T13:55:07.400Z", "time": 1796478907400},
        {"type": "context.append_message", "agentId": "main", "message": {
            "role": "user", "content": text, "toolCalls": [], "id": "msg_S",
            "origin": {"kind": "user", "inTurn": True}}, "time": 1796478907401},
        {"type": "turn.steer", "agentId": "main", "input": text, "origin": {"kind": "user"},
         "messageId": "msg_S", "promptIds": ["msg_S"], "turnId": 0, "time": 1796478907402},
    ]  # fmt: skip
    journal = tmp_path / "wire.jsonl"
    lines = head[: start + 2] + [json.dumps(r) for r in steer]
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = turnfold.load(journal)
    assert not t.warnings
    prompts = [e.text for e in t.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
        "TF-STEER: also list the tests.",
    ]


def test_a_steer_without_its_context_copy_is_still_shown(tmp_path: Path) -> None:
    record = {"type": "turn.steer", "agentId": "main", "messageId": "msg_S", "turnId": 0,
              "input": [{"type": "text", "text": "TF-STEER"}], "time": 1796478907402}  # fmt: skip
    journal = tmp_path / "wire.jsonl"
    journal.write_text(json.dumps(record) + "\n", encoding="utf-8")
    t = turnfold.load(journal)
    assert [e.text for e in t.entries if isinstance(e, UserMessage)] == ["TF-STEER"]


def test_a_compaction_keeps_its_summary_and_the_context_size_before_it(tmp_path: Path) -> None:
    """``context.apply_compaction`` as ``ContextApplyCompaction`` writes it (the CLI's bundle;
    no session of the harness compacts): the summary, and ``tokensBefore``."""
    record = {"type": "context.apply_compaction", "agentId": "main", "summary": "TF-SUMMARY",
              "compactedCount": 12, "tokensBefore": 181000, "tokensAfter": 9000,
              "summaryOutputTokens": 700, "time": 1796478907402}  # fmt: skip
    journal = tmp_path / "wire.jsonl"
    journal.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (boundary,) = turnfold.load(journal).entries
    assert isinstance(boundary, CompactionBoundary)
    assert (boundary.summary, boundary.pre_tokens) == ("TF-SUMMARY", 181000)
    assert boundary.meta["messages_compacted"] == 12
