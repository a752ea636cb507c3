"""Codex and Gemini CLI sub-agents whose own files nest, down to ``turnfold.nesting.MAX_DEPTH``
(spec F-7; X-2: nothing dropped unsaid).

A Codex child thread has a rollout of its own, found by its thread id; a Gemini CLI sub-agent a
session file of its own in ``chats/<parent sessionId>/``. Each reader read a child's children in
turn down to four levels, no deeper: Codex dropped the fifth level's steps without a word. Now
both nest down to every reader's bound, name the one deeper in a warning (``too_deep``) on the
line of the call that ran it, and say so of a file that leads back to one it nests in.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.test_nesting_depth import nesting, stack_limit
from turnfold.cli import expand_all
from turnfold.model import AssistantText, ToolCall, Transcript
from turnfold.nesting import MAX_DEPTH, too_deep, warning_total
from turnfold.render.nodes import View
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CODEX_THREADS = FIXTURES / "codex" / "threads"
CODEX_THREAD = "019c1a00-0000-7000-8000-0000000000"  # the fixtures' thread ids, but their end
CODEX_PARENT = CODEX_THREADS / f"rollout-2026-05-12T10-00-00-{CODEX_THREAD}aa.jsonl"
CODEX_CHILD_1 = CODEX_THREADS / f"{CODEX_THREAD}c1.jsonl"
CODEX_CHILD_2 = CODEX_THREADS / f"{CODEX_THREAD}c2.jsonl"
GEMINI = FIXTURES / "gemini" / "subagent"
GEMINI_TOP = GEMINI / "session-2026-12-01T21-33-66666666.jsonl"
GEMINI_CHILD = (
    GEMINI / "66666666-7777-4888-9999-000000000000" / "71b012b7-f8df-44f8-a40c-1a45df96b2df.jsonl"
)

#: The load of a chain of either reader's files, under the lowest limit the Claude Code chains
#: of tests/test_nesting_depth.py load under: each level is read by recursion, some five (Codex)
#: or six (Gemini CLI) frames a level, and the bound keeps the whole within it.
LOAD_LIMIT = 300


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def copied(record: dict[str, Any]) -> dict[str, Any]:
    """A record to change, its fixture's left as it is."""
    return dict(json.loads(json.dumps(record)))


def write(path: Path, lines: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def levels(transcript: Transcript) -> list[Transcript]:
    """The transcripts of a chain, the top-level one first: each level's one call's sub-agent's,
    as far as they nest."""
    found = [transcript]
    while True:
        calls = [c for c in found[-1].tool_calls() if c.subagent and c.subagent.transcript]
        if not calls:
            return found
        (call,) = calls
        assert call.subagent is not None
        assert call.subagent.transcript is not None
        found.append(call.subagent.transcript)


def last_call(transcript: Transcript) -> ToolCall:
    (call,) = transcript.tool_calls()
    return call


def every_warning(chain: Sequence[Transcript]) -> list[str]:
    return [str(warning) for transcript in chain for warning in transcript.warnings]


def shown(view: View) -> list[str]:
    """The items of the view's notice, as they read."""
    notice = view["notice"]
    return [] if notice is None else [html.unescape(item) for item in notice["items"]]


# --- Codex: child thread rollouts ----------------------------------------------------------------


def thread(level: int) -> str:
    return f"019c1a00-0000-7000-8000-{level:012x}"


def rollout_name(level: int) -> str:
    return f"rollout-2026-05-12T10-00-{level:02d}-{thread(level)}.jsonl"


def rollout_line(lines: Sequence[dict[str, Any]], kind: str, call_id: str) -> int:
    """The index of the one record among ``lines`` whose payload is a ``kind`` of ``call_id``."""
    (index,) = [
        i
        for i, record in enumerate(lines)
        if record["payload"].get("type") == kind and record["payload"].get("call_id") == call_id
    ]
    return index


def codex_rollouts(folder: Path, spawned: Sequence[str | None]) -> list[Path]:
    """One rollout a level, beside each other as Codex writes a session's threads in its day's
    folder: level ``k`` is thread ``thread(k)``, spawned by level ``k - 1``, and spawns the
    thread ``spawned[k]`` names (None: none). The records are those of the multi-agent rollouts
    in tests/fixtures/codex/threads (hand-made in Codex 0.171's shapes, issue 21.1): the parent's
    session_meta, turn_context, prompt, ``spawn_agent`` call answered ``{agent_id, nickname}``
    and its ``collab_agent_spawn_end``, answer and ``task_complete``; a child's session_meta
    with its ``source.subagent.thread_spawn``. The spawn is line 6 of each file."""
    parent, child = records(CODEX_PARENT), records(CODEX_CHILD_1)
    spawn = parent[rollout_line(parent, "function_call", "call_sp1")]
    answered = parent[rollout_line(parent, "function_call_output", "call_sp1")]
    spawn_end = parent[rollout_line(parent, "collab_agent_spawn_end", "call_sp1")]
    turn_context, said, asked, started = parent[1:5]
    answer, answer_event, complete = parent[-3:]
    paths = []
    for level, child_id in enumerate(spawned):
        meta = copied(parent[0] if level == 0 else child[0])
        meta["payload"]["id"] = thread(level)
        if level:
            meta["payload"]["source"]["subagent"]["thread_spawn"].update(
                parent_thread_id=thread(level - 1), depth=level, agent_nickname=f"agent{level}"
            )
        task = f"task of level {level}"
        prompt, prompted = copied(said), copied(asked)
        prompt["payload"]["message"] = prompted["payload"]["content"][0]["text"] = task
        lines = [meta, turn_context, prompt, prompted, started]
        if child_id is not None:
            nickname, delegated = f"agent{level + 1}", f"task of level {level + 1}"
            call, output, end = copied(spawn), copied(answered), copied(spawn_end)
            call["payload"]["arguments"] = json.dumps({"message": delegated})
            output["payload"]["output"] = json.dumps({"agent_id": child_id, "nickname": nickname})
            end["payload"].update(
                sender_thread_id=thread(level),
                new_thread_id=child_id,
                new_agent_nickname=nickname,
                prompt=delegated,
            )
            lines += [call, output, end]
        text = f"answer of level {level}"
        reply, event, ended = copied(answer), copied(answer_event), copied(complete)
        reply["payload"]["content"][0]["text"] = event["payload"]["message"] = text
        ended["payload"]["last_agent_message"] = text
        lines += [reply, event, ended]
        paths.append(write(folder / rollout_name(level), lines))
    return paths


def codex_chain(folder: Path, depth: int) -> list[Path]:
    """Rollouts of threads each spawning the next, ``depth`` sub-agents deep."""
    return codex_rollouts(folder, [thread(level + 1) for level in range(depth)] + [None])


def test_F7_codex_child_threads_deeper_than_the_bound_load_and_the_one_past_it_is_said(
    tmp_path: Path,
) -> None:
    paths = codex_chain(tmp_path, MAX_DEPTH + 2)
    with stack_limit(LOAD_LIMIT):
        transcript = turnfold.load(paths[0])
    chain = levels(transcript)
    assert len(chain) == MAX_DEPTH + 1  # the top-level thread and every level down to the bound
    assert [t.metadata["session_id"] for t in chain] == [thread(k) for k in range(MAX_DEPTH + 1)]
    deepest = last_call(chain[-1])
    assert deepest.subagent is not None
    assert (deepest.subagent.agent_id, deepest.subagent.transcript) == (thread(MAX_DEPTH + 1), None)
    # Said once, on the spawn's line of the rollout at the bound, which the view draws; the
    # rollout under the one named is not read, so not named.
    instead = f"it loads on its own: turnfold.load({str(paths[MAX_DEPTH + 1])!r})"
    reason = too_deep(
        f"child thread rollout {rollout_name(MAX_DEPTH + 1)} of call call_sp1",
        MAX_DEPTH + 1,
        instead,
    )
    (warning,) = chain[-1].warnings
    assert (warning.source, warning.line, warning.reason) == (str(paths[MAX_DEPTH]), 6, reason)
    assert every_warning(chain) == [str(warning)]
    assert warning_total(transcript) == 1

    view = build_view_model(transcript)
    assert nesting(view) == MAX_DEPTH + 1  # the last: the line of the spawn at the bound
    (item,) = shown(view)
    assert item.endswith(f"{rollout_name(MAX_DEPTH)}:6: {reason}")
    assert item.startswith(f"Sub-agent agent{MAX_DEPTH} {thread(MAX_DEPTH)} (call_sp1): ")
    text = render_text(expand_all(view), width=4_000)
    assert f"answer of level {MAX_DEPTH}" in text
    assert f"answer of level {MAX_DEPTH + 1}" not in text

    # As the warning says, the rollout named loads on its own, the one under it nested in it.
    alone = levels(turnfold.load(paths[MAX_DEPTH + 1]))
    under = [thread(MAX_DEPTH + 1), thread(MAX_DEPTH + 2)]
    assert [t.metadata["session_id"] for t in alone] == under
    assert every_warning(alone) == []


def test_F7_codex_child_threads_past_the_old_bound_of_four_nest_whole(tmp_path: Path) -> None:
    paths = codex_chain(tmp_path, 5)
    chain = levels(turnfold.load(paths[0]))
    assert [t.metadata["session_id"] for t in chain] == [thread(k) for k in range(6)]
    assert every_warning(chain) == []
    assert chain[-1].tool_calls() == []  # the fifth sub-agent's own steps: its answer
    answers = [e.text for e in chain[-1].entries if isinstance(e, AssistantText)]
    assert answers == ["answer of level 5"]


def test_F7_codex_a_child_thread_leading_back_to_one_it_nests_in_is_said(tmp_path: Path) -> None:
    """A rollout whose spawn names the thread it runs in (no Codex writes that: each spawn
    starts a new thread): not read again, and said on its line."""
    paths = codex_rollouts(tmp_path, [thread(1), thread(2), thread(1)])
    chain = levels(turnfold.load(paths[0]))
    assert [t.metadata["session_id"] for t in chain] == [thread(0), thread(1), thread(2)]
    (warning,) = chain[-1].warnings
    assert (warning.source, warning.line, warning.reason) == (
        str(paths[2]),
        6,
        f"child thread rollout {rollout_name(1)} of call call_sp1 is already shown above it "
        "(sub-agents in a circle): not nested again",
    )
    assert every_warning(chain) == [str(warning)]
    agent = last_call(chain[-1]).subagent
    assert agent is not None
    assert (agent.agent_id, agent.transcript) == (thread(1), None)


#: The answer Codex gives the spawn in a forked child's copy of its parent's history
#: (codex-rs core/src/agent/control.rs, ``FORKED_SPAWN_AGENT_OUTPUT_MESSAGE``).
FORKED = (
    "You are the newly spawned agent. The prior conversation history was forked from your "
    "parent agent. Treat the next user message as your new task, and use the forked history "
    "only as background context."
)


def test_F7_codex_a_forked_child_replaying_its_parent_s_spawn_shows_that_thread_once(
    tmp_path: Path,
) -> None:
    """A child spawned with ``fork_context`` starts from its parent's rollout: Codex builds that
    copied it whole (codex-rs core/src/agent/control.rs: ``get_rollout_history`` of the
    parent's rollout, then the spawn's answer ``FORKED_SPAWN_AGENT_OUTPUT_MESSAGE``; codex.rs
    ``record_initial_history`` writes a forked history into the child's own rollout after its
    session_meta). Its copy of the parent's first ``spawn_agent`` names the thread the parent's
    own call runs: shown there, once, and the copy is no circle."""
    parent = records(CODEX_PARENT)
    sp2 = rollout_line(parent, "function_call", "call_sp2")
    answer = {"type": "function_call_output", "call_id": "call_sp2", "output": FORKED}
    forked = {**parent[sp2], "payload": answer}
    own = records(CODEX_CHILD_2)
    top = write(tmp_path / CODEX_PARENT.name, parent)
    write(tmp_path / CODEX_CHILD_1.name, records(CODEX_CHILD_1))
    write(tmp_path / CODEX_CHILD_2.name, [own[0], *parent[: sp2 + 1], forked, *own[1:]])
    transcript = turnfold.load(top)
    calls = {c.call_id: c for c in transcript.tool_calls()}
    first, second = calls["call_sp1"].subagent, calls["call_sp2"].subagent
    assert first is not None
    assert first.transcript is not None
    assert first.transcript.metadata["session_id"] == CODEX_CHILD_1.stem
    assert second is not None
    assert second.transcript is not None
    assert second.transcript.metadata["session_id"] == CODEX_CHILD_2.stem
    replayed = {c.call_id: c for c in second.transcript.tool_calls()}["call_sp1"].subagent
    assert replayed is not None
    assert (replayed.agent_id, replayed.transcript) == (CODEX_CHILD_1.stem, None)
    assert every_warning([transcript, first.transcript, second.transcript]) == []


# --- Gemini CLI: sub-agent session files -------------------------------------------------------


def session(level: int) -> str:
    return f"66666666-7777-4888-9999-{level:012d}"


def gemini_sessions(chats: Path, ids: Sequence[str], agents: Sequence[str | None]) -> list[Path]:
    """One session file a level, as Gemini CLI 0.61 writes a sub-agent's: in
    ``<folder of its parent's file>/<parent's sessionId>/<agentId>.jsonl``. Level ``k``'s
    header says ``sessionId: ids[k]``, its ``invoke_agent`` call ``agentId: agents[k]`` (None:
    no call). The records are those of the real session in tests/fixtures/gemini/subagent: the
    top's header and prompt, the message holding its ``invoke_agent`` call (line 3 of each file
    here) with the call's ``functionResponse``, its answer; a child's header
    (``kind: "subagent"``) and prompt."""
    top, child = records(GEMINI_TOP), records(GEMINI_CHILD)
    prompt = next(r for r in top if r.get("type") == "user" and "text" in r["content"][0])
    (message,) = [r for r in top if "invoke_agent" in json.dumps(r.get("toolCalls"))]
    (response,) = [
        r for r in top if r.get("type") == "user" and "invoke_agent" in json.dumps(r["content"])
    ]
    answer = next(r for r in top if r.get("type") == "gemini" and r.get("content"))
    paths: list[Path] = []
    for level, (own, agent) in enumerate(zip(ids, agents, strict=True)):
        header = {**(top[0] if level == 0 else child[0]), "sessionId": own}
        asked = copied(prompt if level == 0 else child[1])
        asked["content"] = [{"text": f"task of level {level}"}]
        lines = [header, asked]
        if agent is not None:
            holding = copied(message)
            (call,) = holding["toolCalls"]
            call.update(agentId=agent)
            call["args"]["prompt"] = f"task of level {level + 1}"
            lines += [holding, response]
        lines.append({**answer, "content": f"answer of level {level}"})
        if level == 0:
            path = chats / GEMINI_TOP.name
        else:
            above = paths[-1]
            path = above.parent / ids[level - 1] / f"{agents[level - 1]}.jsonl"
        paths.append(write(path, lines))
    return paths


def gemini_chain(chats: Path, depth: int) -> list[Path]:
    """Sessions each running the next as a sub-agent, ``depth`` sub-agents deep."""
    ids = [session(level) for level in range(depth + 1)]
    return gemini_sessions(chats, ids, [*ids[1:], None])


def test_F7_gemini_sub_agent_sessions_deeper_than_the_bound_load_and_the_one_past_it_is_said(
    tmp_path: Path,
) -> None:
    paths = gemini_chain(tmp_path / "chats", MAX_DEPTH + 2)
    with stack_limit(LOAD_LIMIT):
        transcript = turnfold.load(paths[0])
    chain = levels(transcript)
    assert len(chain) == MAX_DEPTH + 1
    assert [t.metadata["session_id"] for t in chain] == [session(k) for k in range(MAX_DEPTH + 1)]
    deepest = last_call(chain[-1])
    assert deepest.subagent is not None
    assert (deepest.subagent.agent_id, deepest.subagent.transcript) == (
        session(MAX_DEPTH + 1),
        None,
    )
    named = paths[MAX_DEPTH + 1]
    reason = too_deep(
        f"sub-agent session {named.name}",
        MAX_DEPTH + 1,
        f"it loads on its own: turnfold.load({str(named)!r})",
    )
    # Said once, on the line of the message holding the call; the session's file under the
    # one named is not read, and no file of the folder it lies in is said to be unlinked.
    (warning,) = chain[-1].warnings
    assert (warning.source, warning.line, warning.reason) == (str(paths[MAX_DEPTH]), 3, reason)
    assert every_warning(chain) == [str(warning)]
    assert warning_total(transcript) == 1

    view = build_view_model(transcript)
    assert nesting(view) == MAX_DEPTH + 1
    (item,) = shown(view)
    assert item.endswith(f"{paths[MAX_DEPTH].name}:3: {reason}")
    text = render_text(expand_all(view), width=4_000)
    assert f"answer of level {MAX_DEPTH}" in text
    assert f"answer of level {MAX_DEPTH + 1}" not in text

    alone = levels(turnfold.load(named))
    under = [session(MAX_DEPTH + 1), session(MAX_DEPTH + 2)]
    assert [t.metadata["session_id"] for t in alone] == under
    assert every_warning(alone) == []


def test_F7_gemini_sub_agent_sessions_past_the_old_bound_of_four_nest_whole(
    tmp_path: Path,
) -> None:
    paths = gemini_chain(tmp_path / "chats", 5)
    chain = levels(turnfold.load(paths[0]))
    assert [t.metadata["session_id"] for t in chain] == [session(k) for k in range(6)]
    assert every_warning(chain) == []
    assert chain[-1].tool_calls() == []
    assert build_view_model(chain[0])["notice"] is None


def test_F7_gemini_a_sub_agent_session_leading_back_to_one_it_nests_in_is_said(
    tmp_path: Path,
) -> None:
    """A child whose sub-agents' folder is a link to its parent's folder, where its call's
    ``agentId`` names the parent's file (no Gemini CLI writes that: a session's id is a new
    UUID, its folder a new one): not read again, said as a circle, not as too deep."""
    chats = tmp_path / "chats"
    top_id = GEMINI_TOP.name.removesuffix(".jsonl")
    paths = gemini_sessions(chats, [session(0), session(1)], [session(1), top_id])
    # The child's sub-agents' folder, beside its file: a link back to the top's folder.
    (paths[1].parent / session(1)).symlink_to(chats, target_is_directory=True)
    chain = levels(turnfold.load(paths[0]))
    assert [t.metadata["session_id"] for t in chain] == [session(0), session(1)]
    (warning,) = chain[-1].warnings
    assert (warning.source, warning.line, warning.reason) == (
        str(paths[1]),
        3,
        f"sub-agent session {GEMINI_TOP.name} is already shown above it (sub-agents in a "
        "circle): not nested again",
    )
    assert every_warning(chain) == [str(warning)]  # its file is named: not "not linked" too


@pytest.mark.parametrize("reader", ["codex", "gemini"])
def test_F7_a_chain_at_the_bound_nests_whole_with_no_warning(tmp_path: Path, reader: str) -> None:
    paths = (codex_chain if reader == "codex" else gemini_chain)(tmp_path / "s", MAX_DEPTH)
    with stack_limit(LOAD_LIMIT):
        transcript = turnfold.load(paths[0])
    chain = levels(transcript)
    assert len(chain) == MAX_DEPTH + 1
    assert every_warning(chain) == []
    assert build_view_model(transcript)["notice"] is None


@pytest.mark.parametrize("session_id", ["..", ".", "/tmp", "a/b", "..\\up"])
def test_X1_gemini_a_session_id_that_is_no_plain_name_names_no_folder_to_read(
    tmp_path: Path, session_id: str
) -> None:
    """The sub-agents' folder is named by the session's ``sessionId``, untrusted: one that is no
    plain name (``..``, a path) would have files outside the session's folder read. Not looked
    for, said; the session itself loads whole."""
    chats = tmp_path / "chats"
    paths = gemini_sessions(chats, [session(0), session(1)], [session(1), None])
    header, *rest = records(paths[0])
    write(paths[0], [{**header, "sessionId": session_id}, *rest])
    loaded = turnfold.load(paths[0])
    (warning,) = loaded.warnings
    assert warning.reason == (
        f"sessionId {session_id!r} is not a plain name: the sub-agents' sessions, in the folder "
        "it would name beside this file, are not looked for"
    )
    (call,) = loaded.tool_calls()
    assert call.subagent is not None
    assert call.subagent.transcript is None
