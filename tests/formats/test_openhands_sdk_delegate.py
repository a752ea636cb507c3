"""OpenHands V1 sub-agents of the ``delegate`` tool (SDK 1.0 to 1.22), nested under their calls.

The fixture is a real run of the SDK 1.22.1 (``tests/fixtures/harnesses/openhands-sdk/README.md``):
a ``spawn`` of three agents, a ``delegate`` call running all three at once (one answers, one
runs a command that fails, one fails on the model's error), then a second ``delegate`` call to
one of them, which goes on in the same conversation. The other shapes are written here in the
SDK's own field names, as ``EventLog`` writes them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import turnfold
from turnfold.formats.harnesses import openhands_sdk
from turnfold.model import AssistantError, AssistantText, ToolCall, Transcript, UserMessage
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings
from turnfold.tools import tool_category

FIXTURE = Path(__file__).parents[1] / "fixtures" / "harnesses" / "openhands-sdk" / "conversations"
CONVERSATION = FIXTURE / "c0116151826b4305addf9630a6efc922"
LINES = "SUBTASK lines: count the lines of hello.txt"
WORDS = "SUBTASK words: count the words of notes.txt"
BROKEN = "SUBTASK broken: say hello"
CHARS = "SUBTASK lines: now count the characters of hello.txt"


def _nested(call: ToolCall) -> Transcript:
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    return call.subagent.transcript


def _steps(transcript: Transcript) -> list[tuple[str, str | None, str]]:
    return [(c.name, c.description, c.status) for c in transcript.tool_calls()]


def test_H3_each_delegated_agent_s_steps_nest_under_the_call_that_ran_it() -> None:
    transcript = openhands_sdk.read_path(CONVERSATION)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    spawn, together, again = transcript.tool_calls()
    assert (spawn.name, spawn.description, spawn.status) == (
        "delegate spawn", "lines, words, broken", "success"
    )  # fmt: skip
    assert spawn.subagent is None  # it starts no run
    assert tool_category(spawn.name) != "agent"  # nor is shown or counted as one (F-7)
    # Three agents at once: one delegate call each, in one batch, under the call.
    assert together.description == "delegate lines, words, broken"
    assert together.status == "success"  # the tool ran; one of its agents failed
    assert together.result is not None
    assert together.result.kind == "subagent"
    assert together.result.text is not None
    assert together.result.text.startswith("Completed delegation of 3 tasks with 1 errors")
    assert together.subagent is not None
    assert together.subagent.subagent_count == 3
    lines, words, broken = _nested(together).entries
    assert isinstance(lines, ToolCall)
    assert isinstance(words, ToolCall)
    assert isinstance(broken, ToolCall)
    assert [(c.name, c.description, c.status) for c in (lines, words, broken)] == [
        ("delegate", "lines (counter)", "success"),
        ("delegate", "words (counter)", "success"),
        ("delegate", "broken (counter)", "error"),
    ]
    assert {c.batch_id for c in (lines, words, broken)} == {together.call_id}
    assert lines.result is not None
    assert lines.result.text == "hello.txt has 2 lines."  # its own report, cut from the list
    assert words.result is not None
    assert words.result.text == "notes.txt does not exist, so I could not count its words."
    assert broken.result is not None
    assert (broken.result.text or "").startswith("Sub-agent broken failed: Conversation run")
    assert broken.subagent is not None
    assert (broken.subagent.reason or "").endswith("OpenAIException - scripted failure")
    # Each agent's own steps: its prompt, its calls and their outcomes, its answer.
    assert lines.subagent is not None
    assert (lines.subagent.name, lines.subagent.task, lines.subagent.agent_id) == (
        "lines (counter)", LINES, "lines"
    )  # fmt: skip
    assert lines.subagent.tool_count == 1
    first = _nested(lines)
    assert [type(e).__name__ for e in first.entries] == ["UserMessage", "ToolCall", "AssistantText"]
    assert _steps(first) == [("terminal", "wc -l hello.txt", "success")]
    assert _steps(_nested(words)) == [("terminal", "wc -w notes.txt", "error")]  # no such file
    failed = _nested(broken).entries
    assert [type(e) for e in failed] == [UserMessage, AssistantError]
    assert isinstance(failed[1], AssistantError)
    assert "scripted failure" in failed[1].message
    # Delegated to again: the same agent's next round, not its first.
    assert again.description == "delegate lines"
    assert again.status == "success"
    assert again.subagent is not None
    assert (again.subagent.name, again.subagent.task) == ("lines (counter)", CHARS)
    second = _nested(again)
    assert [e.text for e in second.entries if isinstance(e, UserMessage)] == [CHARS]
    assert _steps(second) == [("terminal", "wc -c hello.txt", "success")]
    assert [e.text for e in second.entries if isinstance(e, AssistantText)] == [
        "hello.txt has 26 characters."
    ]
    assert "usage" not in second.metadata  # the conversation's totals are two rounds'
    assert second.metadata["session_id"] == first.metadata["session_id"]


def test_U1_delegated_agents_usage_is_theirs_not_the_parent_s_own() -> None:
    transcript = openhands_sdk.read_path(CONVERSATION)
    # base_state.json counts the agents' responses under delegate:<id> too: the parent's own
    # are its four responses (prompt 1000 + 100 n).
    assert transcript.metadata["usage"]["input_tokens"] == 1000 + 1100 + 1200 + 1300
    _, together, _ = transcript.tool_calls()
    lines = _nested(together).tool_calls()[0]
    carriers = [e for e in _nested(lines).entries if getattr(e, "usage", None) is not None]
    assert [e.usage.input_tokens for e in carriers] == [1000, 1100]  # type: ignore[attr-defined]


def test_L2_load_and_scan_read_the_agents_with_their_parent(tmp_path: Path) -> None:
    whole = openhands_sdk.read_path(CONVERSATION)
    assert turnfold.load(CONVERSATION) == whole
    assert turnfold.load(CONVERSATION / "base_state.json") == whole
    root = tmp_path / "conversations"
    shutil.copytree(CONVERSATION, root / CONVERSATION.name)
    for source in (root, str(root / "**")):
        rows = turnfold.scan(source, workers=1, cache=False)
        assert [row["key"] for row in rows] == [str(root / CONVERSATION.name / "base_state.json")]
        (row,) = rows
        assert row["error"] is None
        assert row["tool_calls"] == 3  # the parent's: its agents' are theirs, nested
        # The three agents the first delegate call ran and the one the second ran; the spawn
        # none, and the first call is its three agents, not a fourth.
        assert row["subagents"] == 4


def test_H3_delegated_agents_without_their_conversations_keep_their_reports() -> None:
    events = [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((CONVERSATION / "events").glob("event-*.json"))
    ]
    transcript = turnfold.load(json.dumps(events))  # events alone, as an eval output holds them
    _, together, again = transcript.tool_calls()
    agents = _nested(together).tool_calls()
    assert [(c.description, c.status) for c in agents] == [
        ("lines (counter)", "success"),
        ("words (counter)", "success"),
        ("broken (counter)", "error"),
    ]
    assert agents[0].result is not None
    assert agents[0].result.text == "hello.txt has 2 lines."
    assert all(c.subagent is not None and c.subagent.steps_missing for c in agents)
    assert again.subagent is not None
    assert again.subagent.steps_missing
    assert again.result is not None
    assert again.result.text is not None
    assert again.result.text.endswith("1. Agent lines: hello.txt has 26 characters.")


# --- shapes written here ----------------------------------------------------------------------


def _write(folder: Path, events: list[dict[str, Any]], session: str) -> Path:
    (folder / "events").mkdir(parents=True)
    state = {"id": session, "agent": {"llm": {"model": "m"}, "kind": "Agent"},
             "workspace": {"working_dir": "/repo", "kind": "LocalWorkspace"}}  # fmt: skip
    (folder / "base_state.json").write_text(json.dumps(state), encoding="utf-8")
    for index, event in enumerate(events):
        name = f"event-{index:05d}-{event['id']}.json"
        (folder / "events" / name).write_text(json.dumps(event), encoding="utf-8")
    return folder


def _user(event_id: str, text: str) -> dict[str, Any]:
    return {"id": event_id, "timestamp": "2026-01-01T10:00:00", "source": "user",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "kind": "MessageEvent"}  # fmt: skip


def _reply(event_id: str, text: str) -> dict[str, Any]:
    return {"id": event_id, "timestamp": "2026-01-01T10:00:05", "source": "agent",
            "llm_message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "kind": "MessageEvent"}  # fmt: skip


def _delegate(event_id: str, args: dict[str, Any], report: str) -> list[dict[str, Any]]:
    call = f"call-{event_id}"
    return [
        {"id": event_id, "timestamp": "2026-01-01T10:00:01", "source": "agent", "thought": [],
         "tool_name": "delegate", "tool_call_id": call,
         "tool_call": {"id": call, "name": "delegate", "arguments": json.dumps(args)},
         "kind": "ActionEvent"},
        {"id": event_id.replace("-0000", "-0001"), "timestamp": "2026-01-01T10:00:09",
         "source": "environment",
         "tool_name": "delegate", "tool_call_id": call, "action_id": event_id,
         "observation": {"content": [{"type": "text", "text": report}], "is_error": False,
                         "command": args["command"], "kind": "DelegateObservation"},
         "kind": "ObservationEvent"},
    ]  # fmt: skip


def test_H3_one_failed_agent_fails_its_call_and_rounds_no_call_claims_are_said(
    tmp_path: Path,
) -> None:
    report = "Completed delegation of 1 tasks with 1 errors\n\nResults:\n1. Agent a ERROR: boom"
    events = [
        *_delegate("d1000001-0000", {"command": "spawn", "ids": ["a"]}, "Successfully spawned"),
        *_delegate("d1000002-0000", {"command": "delegate", "tasks": {"a": "Do it"}}, report),
    ]
    folder = _write(tmp_path / "c", events, "parent")
    # The agent's conversation holds a second round that no call of the log asked for.
    _write(
        folder / "subagents" / "s1",
        [
            _user("e1000000-0000", "Do it"),
            _reply("e2000000-0000", "half"),
            _user("e3000000-0000", "Again"),
            _reply("e4000000-0000", "more"),
        ],
        "child",
    )
    transcript = openhands_sdk.read_path(folder)
    _, call = transcript.tool_calls()
    assert call.status == "error"  # its one agent failed
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.reason) == ("a (default)", "boom")
    assert [e.text for e in _nested(call).entries] == ["Do it", "half"]  # type: ignore[attr-defined]
    assert [w.reason for w in transcript.warnings] == [
        "sub-agent conversation child: 1 prompt(s) answer no delegate call: not shown"
    ]


def test_H3_a_re_spawned_agent_goes_on_in_its_new_conversation(tmp_path: Path) -> None:
    done = "Completed delegation of 1 tasks\n\nResults:\n1. Agent a: ok"
    events = [
        *_delegate("d2000001-0000", {"command": "spawn", "ids": ["a"]}, "Successfully spawned"),
        *_delegate("d2000002-0000", {"command": "delegate", "tasks": {"a": "Look"}}, done),
        *_delegate("d2000003-0000", {"command": "spawn", "ids": ["a"]}, "Successfully spawned"),
        *_delegate("d2000004-0000", {"command": "delegate", "tasks": {"a": "Look"}}, done),
    ]
    folder = _write(tmp_path / "c", events, "parent")
    old = [_user("f1000000-0000", "Look"), _reply("f2000000-0000", "first")]
    old[0]["timestamp"] = "2026-01-01T09:00:00"
    _write(
        folder / "subagents" / "s2",
        [_user("f3000000-0000", "Look"), _reply("f4000000-0000", "second")],
        "new",
    )
    _write(folder / "subagents" / "s1", old, "old")
    transcript = openhands_sdk.read_path(folder)
    assert transcript.warnings == []
    _, first, _, second = transcript.tool_calls()
    assert _nested(first).metadata["session_id"] == "old"
    assert _nested(second).metadata["session_id"] == "new"


# --- how many sub-agents a delegation of several is ----------------------------------------------


def _three_agents(tmp_path: Path) -> Path:
    """A conversation folder whose one ``delegate`` call runs three agents, each conversation
    in ``subagents/``, in a folder of its own (as a scan finds it)."""
    report = (
        "Completed delegation of 3 tasks\n\nResults:\n"
        "1. Agent a: A done\n2. Agent b: B done\n3. Agent c: C done"
    )
    tasks = {"a": "Task A", "b": "Task B", "c": "Task C"}
    events = [
        _user("b0000001-0000", "Split the work"),
        *_delegate("b1000001-0000", {"command": "spawn", "ids": list(tasks)}, "Spawned"),
        *_delegate("b2000001-0000", {"command": "delegate", "tasks": tasks}, report),
        _reply("b3000001-0000", "All three are done."),
    ]
    folder = _write(tmp_path / "conversations" / "c", events, "parent")
    for index, (agent, task) in enumerate(tasks.items()):
        _write(
            folder / "subagents" / f"s{index}",
            [_user(f"c{index}000001-0000", task), _reply(f"c{index}000002-0000", f"{agent} done")],
            f"child-{agent}",
        )
    return folder


def test_C2_F7_a_delegate_call_of_three_agents_is_three_sub_agents_not_four(
    tmp_path: Path,
) -> None:
    """The call nests its three agents (one row each, with its own F-7 line and steps); the
    scan row counts three sub-agents: the call that ran them is not a fourth."""
    folder = _three_agents(tmp_path)
    transcript = openhands_sdk.read_path(folder)
    assert transcript.warnings == []
    _, call = transcript.tool_calls()
    assert call.subagent is not None
    assert call.subagent.subagent_count == 3
    assert [(c.description, c.status) for c in _nested(call).tool_calls()] == [
        ("a (default)", "success"), ("b (default)", "success"), ("c (default)", "success")
    ]  # fmt: skip
    assert [
        [e.text for e in _nested(agent).entries]  # type: ignore[attr-defined]
        for agent in _nested(call).tool_calls()
    ] == [["Task A", "a done"], ["Task B", "b done"], ["Task C", "c done"]]
    # The view: the call's line says three sub-agents; under it, each agent's own row.
    plain = build_view_model(transcript, DisplaySettings(locale="en"))
    (turn,) = [node for node in plain["nodes"] if node["kind"] == "turn"]
    rows = _rows(turn["process"]["children"])
    delegate = next(row for row in rows if row["subagent"] is not None)
    assert delegate["subagent"]["line"] == "✔ a, b, c · 3 sub-agents · 8s"
    nested = [row for node in delegate["subagent"]["nodes"] if node["kind"] == "turn"
              for row in _rows(node["process"]["children"])]  # fmt: skip
    assert [row["description"] for row in nested] == ["a (default)", "b (default)", "c (default)"]
    assert all(row["subagent"]["line"] for row in nested)
    # The header (U-3) and the session's facts count the parent's calls, not its agents'.
    facts = session_facts(transcript)
    assert facts.tool_calls == 2
    parts = {part["name"]: part["text"] for part in plain["session"]["parts"]}
    assert parts["tools"] == "2 tools"
    (row,) = turnfold.scan(folder.parent, workers=1, cache=False)
    assert row["error"] is None
    assert (row["tool_calls"], row["subagents"]) == (2, 3)


def _rows(children: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool rows of a process's nodes, in groups and batches."""
    found: list[dict[str, Any]] = []
    for node in children:
        if node["kind"] in ("group", "batch"):
            found += _rows(node["children"] if node["kind"] == "group" else node["rows"])
        elif node["kind"] == "tool":
            found.append(node)
    return found
