"""Strands ``FileSessionManager`` sessions (``strands-session``): a session folder loaded from
itself or any file in it, its agents nested or picked by ``sample=``, scanned a row a session.

The committed sessions were written by the real strands-agents 1.62.0 ``FileSessionManager``
on the scripted model of ``strands_runs``
(``tests/fixtures/frameworks/strands/strands_session_recipe.py``): ``session_solo`` (``calc``,
two turns: ``add`` succeeds, ``explode`` raises), ``session_team`` (``lead`` calls the
``researcher`` agent as a tool, both stored in the one session). The recipe's ``write`` makes
them live too, with the agents and session managers, so a load of the folder is checked
against a load of Strands' own objects of the same conversation.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands")

import turnfold
from tests.formats import strands_runs
from tests.formats.counters_strands import strands_session as count_calls
from tests.formats.recipes import recipe as load_recipe
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.tools import format_subagent_line

recipe = load_recipe(strands_runs.FIXTURES / "strands_session_recipe.py")

STORAGE = recipe.FIXTURE
SOLO, TEAM = STORAGE / "session_solo", STORAGE / "session_team"


def shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What a user sees of each entry: its kind, text or call (name, args, outcome, result),
    and its time."""
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            rows.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        else:
            rows.append((type(entry).__name__, getattr(entry, "text", None)))
        rows[-1] += (entry.timestamp,)
    return rows


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    storage = tmp_path_factory.mktemp("sessions")
    return {"storage": storage, **recipe.write(storage)}


def test_a_session_folder_loads_as_strands_own_stored_messages(live: dict[str, Any]) -> None:
    folder = live["storage"] / "session_solo"
    messages = live["solo"].list_messages("solo", "calc")
    from_files = turnfold.load(folder)
    from_objects = turnfold.load(messages)
    assert shown(from_files) == shown(from_objects)
    assert from_files.metadata["source_format"] == "strands-session"
    assert from_files.metadata["session_id"] == "solo"
    assert from_files.metadata["agent"] == "calc"
    assert from_files.warnings == []


def test_a_session_shows_what_the_agent_holds(live: dict[str, Any]) -> None:
    """The agent's own messages, loaded: the same calls, outcomes and texts (the files add the
    time each message was stored)."""
    folder = turnfold.load(live["storage"] / "session_solo")
    agent = turnfold.load(live["calc"])
    assert [row[:-1] for row in shown(folder)] == [row[:-1] for row in shown(agent)]


def test_the_committed_session_two_turns_a_call_that_succeeds_and_one_that_raises() -> None:
    transcript = turnfold.load(SOLO)
    calls = {c.name: c for c in transcript.tool_calls()}
    assert (calls["add"].status, calls["add"].result and calls["add"].result.text) == (
        "success",
        "3",
    )
    assert calls["explode"].status == "error"
    assert "boom: y" in (calls["explode"].result.text or "")  # type: ignore[union-attr]
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == list(recipe.SOLO_PROMPTS)
    texts = [e.text.strip() for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts[-1] == "Still 3."
    assert all(e.timestamp is not None for e in transcript.entries)
    assert len(transcript.tool_calls(nested=True)) == count_calls(SOLO)


@pytest.mark.parametrize(
    "part", ["session.json", "agents/agent_calc/agent.json", "agents/agent_calc"]
)
def test_the_session_s_files_load_the_session(part: str) -> None:
    assert shown(turnfold.load(SOLO / part)) == shown(turnfold.load(SOLO))


def test_one_message_file_alone_is_the_message_it_holds() -> None:
    one = turnfold.load(SOLO / "agents/agent_calc/messages/message_0.json")
    assert one.metadata["source_format"] == "strands"
    assert [(type(e), e.text) for e in one.entries] == [  # type: ignore[attr-defined]
        (UserMessage, recipe.SOLO_PROMPTS[0])
    ]


def test_an_agent_used_as_a_tool_nests_under_its_call() -> None:
    transcript = turnfold.load(TEAM)
    assert transcript.metadata["agent"] == "lead"
    (call,) = transcript.tool_calls()
    assert call.name == "researcher"
    assert call.subagent is not None
    assert call.subagent.name == "researcher"
    # Its line names its task, the run's prompt: not the bare agent name twice.
    assert call.subagent.task == "what is 5+6?"
    assert format_subagent_line(call) == "✔ researcher: what is 5+6? · 1 tool"
    child = call.subagent.transcript
    assert child is not None
    assert [c.name for c in child.tool_calls()] == ["add"]
    assert child.tool_calls()[0].status == "success"
    assert isinstance(child.entries[0], UserMessage)
    assert child.entries[0].text == "what is 5+6?"
    assert transcript.warnings == []
    assert len(transcript.tool_calls(nested=True)) == count_calls(TEAM)


def test_sample_picks_one_agent_of_the_session(live: dict[str, Any]) -> None:
    researcher = turnfold.load(live["storage"] / "session_team", sample="researcher")
    assert researcher.metadata["agent"] == "researcher"
    assert shown(researcher) == shown(
        turnfold.load(live["team"].list_messages("team", "researcher"))
    )
    with pytest.raises(ValueError, match=r"no agent 'nobody'.*'researcher', 'lead'"):
        turnfold.load(TEAM, sample="nobody")


def test_a_scan_of_the_storage_folder_is_a_row_a_session(tmp_path: Path) -> None:
    storage = tmp_path / "sessions"
    shutil.copytree(STORAGE, storage)
    corpus = turnfold.scan(storage)
    rows = corpus.to_pandas().set_index("key")
    assert sorted(rows.index) == [
        str(storage / "session_solo" / "session.json"),
        str(storage / "session_team" / "session.json"),
    ]
    assert rows.loc[str(storage / "session_solo" / "session.json"), "tool_calls"] == 2
    assert rows.loc[str(storage / "session_solo" / "session.json"), "failed_tools"] == 1


def test_a_scan_inside_a_session_makes_no_row_of_a_message_file(tmp_path: Path) -> None:
    storage = tmp_path / "sessions"
    shutil.copytree(STORAGE, storage)
    rows = turnfold.scan(storage / "session_solo" / "agents").to_pandas()
    assert not any("message_" in key for key in rows["key"])


def test_a_damaged_message_file_is_a_warning_and_the_rest_is_read(tmp_path: Path) -> None:
    session = tmp_path / "session_solo"
    shutil.copytree(SOLO, session)
    # The first turn's answer: the calls before it and the second turn stay.
    (session / "agents" / "agent_calc" / "messages" / "message_5.json").write_text("{not json")
    transcript = turnfold.load(session)
    assert any("message_5.json" in w.reason for w in transcript.warnings)
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("add", "success"),
        ("explode", "error"),
    ]
    texts = [e.text.strip() for e in transcript.entries if isinstance(e, AssistantText)]
    assert "1+2=3; explode failed." not in texts
    assert texts[-1] == "Still 3."
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == list(recipe.SOLO_PROMPTS)


def test_a_session_json_without_its_folder_says_where_the_messages_are() -> None:
    from turnfold.formats.errors import TranscriptFormatError

    text = (SOLO / "session.json").read_text(encoding="utf-8")
    with pytest.raises(TranscriptFormatError, match="load its folder"):
        turnfold.load(text)
