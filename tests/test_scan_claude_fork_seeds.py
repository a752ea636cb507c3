"""Claude Code's Remote Control fork seed is a session: read, and a row of a scan (C-1, C-7, L-2).

Claude Code 2.1.332 (its ``claude`` binary, tests/agents) writes
``~/.claude/remote-control/fork-seeds/<fork's session id>.json`` when claude.ai forks a session
under Remote Control: ``{version: 1, parentSessionId, createdAt, messages}``, the messages the
fork starts from. The fork's process takes them up at each start without writing them to its own
``.jsonl`` (``primeFilelessResume``), so the seed is the only record of how the fork began
(:data:`turnfold.formats.claude_code.FORK_SEED`). The seed here holds the messages of a session
the real Claude Code 2.1.332 wrote (tests/fixtures/claude-code/v2.1.332_real_fork-seed). The
fork's own ``.jsonl`` starts with a message whose ``parentUuid`` is the seed's last: its load
names the seed beside it that holds its first messages (v2.1.332_real_fork-continued).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.credential_homes import scan_here
from turnfold.model import ToolCall, UserMessage
from turnfold.tools import format_subagent_line

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = FIXTURES / "claude-code" / "v2.1.332_real_fork-seed" / "remote-control" / "fork-seeds"
SEED = next(SEEDS.glob("session_*.json"))
FORK = SEED.stem
PARENT = "session_01KBZ7M2Q4R6S8T0V2W4X6Y8Z0"
SESSION = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
#: What the scenario's two prompts asked, in the order the user typed them.
PROMPTS = [
    "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
    "TF-SECOND: one more check after the resume, please.",
]
#: The fields Claude Code adds to a message only when it writes it to a session file
#: (``efl`` and the transcript's writer): a message the fork's parent made in this process and
#: never read back from a file is held without them.
ENVELOPE = ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "gitBranch",
            "entrypoint")  # fmt: skip

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's folder is the test's: a developer's variable would move it."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


def _seed() -> dict[str, Any]:
    value = json.loads(SEED.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _write_seed(folder: Path, seed: dict[str, Any], name: str = FORK) -> Path:
    """``seed`` written as Claude Code writes one, compact JSON (``JSON.stringify``)."""
    path = folder / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(seed, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
    return path


def _prompts(transcript: turnfold.Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, UserMessage)]


def _calls(transcript: turnfold.Transcript) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in transcript.entries if isinstance(c, ToolCall)]


def test_L2_a_fork_seed_loads_as_the_claude_code_session_it_starts() -> None:
    transcript = turnfold.load(SEED)
    assert transcript.metadata["source_format"] == "claude-code"
    assert transcript.metadata["session_id"] == FORK  # the fork's, which names the file
    assert transcript.metadata["forked_from_id"] == PARENT
    assert (transcript.metadata["cwd"], transcript.metadata["version"]) == (
        "/home/user/work", "2.1.332",
    )  # fmt: skip
    assert _prompts(transcript) == PROMPTS
    calls = _calls(transcript)
    assert [name for name, _ in calls] == [
        "Read", "Bash", "Bash", "Bash", "Bash", "Edit", "Write", "Bash", "Agent", "Bash",
    ]  # fmt: skip
    assert [status for _, status in calls].count("error") == 1  # the check that exits 3
    answers = [e.text for e in transcript.entries if type(e).__name__ == "AssistantText"]
    assert answers[-1] == "TF-DONE-2: still fine after the resume."
    assert transcript.warnings == []
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["fork-seed"] == {"mapped": 1}
    assert accounting.counts["assistant"] == {"mapped": 14}


def test_L2_a_seed_s_messages_are_read_in_the_order_held_with_or_without_their_links(
    tmp_path: Path,
) -> None:
    """A message the parent made in memory has no ``parentUuid`` nor ``sessionId``: the fork
    chains them in the order held, and so does the load (no message taken for a root of its
    own, a rewind's branch or a sidechain)."""
    held = _seed()
    held["messages"] = [{k: v for k, v in m.items() if k not in ENVELOPE}
                        for m in held["messages"]]  # fmt: skip
    from_memory = turnfold.load(held)
    written = turnfold.load(SEED)
    assert _prompts(from_memory) == PROMPTS
    assert _calls(from_memory) == _calls(written)
    assert [type(e).__name__ for e in from_memory.entries] == [
        type(e).__name__ for e in written.entries
    ]
    assert from_memory.warnings == []
    assert "session_id" not in from_memory.metadata  # no file names the fork
    assert from_memory.metadata["forked_from_id"] == PARENT
    # Nor does a copy of the seed out of Claude Code's folder of seeds, whatever its name.
    elsewhere = _write_seed(tmp_path, _seed())
    assert "session_id" not in turnfold.load(elsewhere).metadata


def test_L4_a_seed_s_unreadable_message_is_warned_of_and_the_rest_shown(tmp_path: Path) -> None:
    seed = _seed()
    seed["messages"].insert(1, "not a record")
    unknown = {"type": "holo-message", "uuid": "b1d8c0de-0000-4000-8000-000000000001"}
    seed["messages"].insert(2, unknown)
    path = _write_seed(tmp_path, seed)
    transcript = turnfold.load(path)
    assert _prompts(transcript) == PROMPTS
    assert len(_calls(transcript)) == 10
    reasons = [w.reason for w in transcript.warnings]
    assert any("not a JSON object" in reason for reason in reasons), reasons
    assert any("holo-message" in reason for reason in reasons), reasons
    assert {w.source for w in transcript.warnings} == {str(path)}
    assert all(w.line == 1 for w in transcript.warnings if w.line is not None)


def _home(root: Path) -> tuple[Path, Path, Path]:
    """A home with a real Claude Code session and a fork seed beside it, in their places."""
    home = root / "me"
    session = home / ".claude" / "projects" / "-work" / "3f1c2b8e-1d2a-4c55-9a51-6c0f8f0b7a10.jsonl"
    session.parent.mkdir(parents=True)
    shutil.copyfile(SESSION, session)
    seed = home / ".claude" / "remote-control" / "fork-seeds" / SEED.name
    seed.parent.mkdir(parents=True)
    shutil.copyfile(SEED, seed)
    return home, session, seed


def test_C1_a_home_scan_lists_the_fork_seed_as_a_claude_code_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, session, seed = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    corpus = scan_here(home)
    assert (sorted(corpus.keys), corpus.skipped) == (sorted([str(session), str(seed)]), 0)
    row = next(r for r in corpus.rows if r["key"] == str(seed))
    assert (row["format"], row["agent"], row["error"]) == ("claude-code", "claude-code", None)
    assert row["title"] == PROMPTS[0]
    assert (row["turns"], row["tool_calls"], row["failed_tools"]) == (2, 10, 1)
    assert row["warnings"] == 0
    # The row opens as the load reads the file.
    assert _prompts(corpus[str(seed)]) == PROMPTS


def test_C4_a_seed_taken_up_again_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork's process rewrites nothing of a seed it takes up, but refreshes its time
    (``adoptSeed``); a seed written anew (a second fork of that id) is a new session start."""
    home, _, seed = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    first = turnfold.scan(home, workers=1)
    assert str(seed) in first.keys
    shorter = _seed()
    shorter["messages"] = shorter["messages"][:11]  # forked before the first answer
    _write_seed(seed.parent, shorter)
    again = turnfold.scan(home, workers=1)
    row = next(r for r in again.rows if r["key"] == str(seed))
    assert (row["title"], row["tool_calls"], row["error"]) == (PROMPTS[0], 0, None)


def test_C7_a_seed_with_no_message_of_a_session_is_an_error_row_never_a_lost_file(
    tmp_path: Path,
) -> None:
    """Claude Code deletes a seed its schema refuses; one left (its messages broken) is said,
    not passed over: the scan names it, with why."""
    seed = _seed()
    seed["messages"] = [{"type": "user", "uuid": "b1d8c0de-0000-4000-8000-000000000002"}]
    path = _write_seed(tmp_path / "fork-seeds", seed)
    corpus = scan_here(path)
    assert (len(corpus), corpus.skipped) == (1, 0)
    assert corpus.rows[0]["error"] is not None
    assert str(path) in corpus.rows[0]["key"]


# --- the fork's own session file ----------------------------------------------------------------

#: A Remote Control fork's own session file beside the seed it continues, from the real Claude
#: Code 2.1.332 (tests/fixtures/claude-code/v2.1.332_real_fork-continued/recipe.py): the seed is
#: named by the body of the fork's server session id, the fork's file by its local id.
FORK_HOME = FIXTURES / "claude-code" / "v2.1.332_real_fork-continued" / "home"
FORK_FILE = next((FORK_HOME / ".claude" / "projects").glob("*/*.jsonl"))
FORK_SEED = next((FORK_HOME / ".claude" / "remote-control" / "fork-seeds").glob("*.json"))
FORK_PARENT = "session_01KC2F6M8P0R2T4V6X8Z0B2D4F"


def _raw(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _first_link() -> tuple[str, int]:
    """The fork file's first message's ``parentUuid`` and its line, read from the raw lines."""
    rows = _raw(FORK_FILE)
    line, row = next((n, r) for n, r in enumerate(rows, 1) if r.get("parentUuid"))
    return row["parentUuid"], line


def _fork_elsewhere(root: Path, seeds: list[Path]) -> Path:
    """The fork's file in a Claude Code folder of its own under ``root``, ``seeds`` beside it."""
    file = root / ".claude" / "projects" / FORK_FILE.parent.name / FORK_FILE.name
    file.parent.mkdir(parents=True)
    shutil.copyfile(FORK_FILE, file)
    for seed in seeds:
        target = root / ".claude" / "remote-control" / "fork-seeds" / seed.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(seed, target)
    return file


def test_L4_a_fork_s_own_file_names_the_seed_its_first_messages_are_in() -> None:
    link, line = _first_link()
    # Claude Code chains the fork's first message to the seed's last (efl, primeFilelessResume).
    assert _seed_last_uuid(FORK_SEED) == link
    transcript = turnfold.load(FORK_FILE)
    assert [(w.reason, w.line) for w in transcript.warnings] == [
        (
            f"parentUuid {link!r} is not in the file: the session continues the fork seed "
            f"{FORK_SEED}; its first messages are there",
            line,
        )
    ]
    assert transcript.metadata["forked_from_id"] == FORK_PARENT  # the seed's parentSessionId
    assert transcript.metadata["session_id"] == FORK_FILE.stem  # the fork's own, not the seed's
    # Everything the fork's file holds is shown, from its first prompt on.
    assert _prompts(transcript) == [PROMPTS[1]]
    assert _calls(transcript) == [("Bash", "success")]


def _seed_last_uuid(path: Path) -> str:
    messages = json.loads(path.read_text(encoding="utf-8"))["messages"]
    last = [m for m in messages if m["type"] != "progress"][-1]
    assert isinstance(last["uuid"], str)
    return last["uuid"]


@pytest.mark.parametrize("beside", ["no seed", "another fork's seed"])
def test_L4_a_fork_s_file_without_its_seed_keeps_the_missing_link_warning(
    tmp_path: Path, beside: str
) -> None:
    """A seed Claude Code deleted (the fork revoked or discarded) or another fork's explains
    nothing: the link is said missing as any other."""
    seeds = [] if beside == "no seed" else [SEED]  # v2.1.332_real_fork-seed: other messages
    transcript = turnfold.load(_fork_elsewhere(tmp_path, seeds))
    link, line = _first_link()
    assert [(w.reason, w.line) for w in transcript.warnings] == [
        (f"parentUuid {link!r} is not in the file; read as a root", line)
    ]
    assert "forked_from_id" not in transcript.metadata
    assert _prompts(transcript) == [PROMPTS[1]]


def test_C1_a_home_scan_shows_the_fork_s_file_and_its_seed_each_a_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(FORK_HOME))
    corpus = scan_here(FORK_HOME)
    assert sorted(corpus.keys) == sorted([str(FORK_FILE), str(FORK_SEED)])
    rows = {r["key"]: r for r in corpus.rows}
    assert (rows[str(FORK_FILE)]["warnings"], rows[str(FORK_FILE)]["error"]) == (1, None)
    assert (rows[str(FORK_SEED)]["warnings"], rows[str(FORK_SEED)]["error"]) == (0, None)
    assert rows[str(FORK_SEED)]["title"] == PROMPTS[0]


def test_L4_a_seed_s_agent_call_says_its_steps_are_not_in_the_record() -> None:
    """The seed names no folder of the session it was forked from, where the Agent call's
    sub-agent file is: the call keeps its result and says its steps are not recorded, instead
    of a count of steps that opens onto nothing."""
    for seed in (SEED, FORK_SEED):
        transcript = turnfold.load(seed)
        (call,) = [c for c in transcript.tool_calls() if c.name == "Agent"]
        assert call.status == "success"
        assert call.result is not None
        assert call.result.text == "TF-SUB-DONE: the sub-agent echoed its word."
        agent = call.subagent
        assert agent is not None
        assert (agent.transcript, agent.steps_missing) == (None, True)
        assert "steps not recorded in this file" in format_subagent_line(call).split(" · ")
        assert transcript.warnings == []
