"""AutoGen AgentChat's saved state (``autogen-state``): ``await agent.save_state()`` and
``await team.save_state()`` dumped with ``json.dump``, read through the autogen reader's
rules.

The committed states were saved by the real autogen-agentchat 0.7.5 on its own
``ReplayChatCompletionClient`` (``autogen_state_runs.py``): ``calc`` after two tasks (``add``
succeeds, ``explode`` raises), and the ``Swarm`` of ``autogen_runs.team()``. The runs are made
live too, so the state is checked against the ``TaskResult`` of the same conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")

import turnfold
from tests.formats import autogen_state_runs as runs
from tests.formats.autogen_runs import FIXTURES
from tests.formats.counters_autogen import autogen_state as count_calls
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage

AGENT = FIXTURES / "autogen_v0.7.5_save-state_agent.json"
SWARM = FIXTURES / "autogen_v0.7.5_save-state_swarm.json"


def shown(transcript: Transcript, *, times: bool = True) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            rows.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        else:
            rows.append((type(entry).__name__, getattr(entry, "text", None)))
        if times:
            rows[-1] += (entry.timestamp, getattr(entry, "usage", None))
    return rows


def saved(tmp_path: Path, state: dict[str, Any]) -> Path:
    path = tmp_path / "state.json"
    with path.open("w", encoding="utf-8") as file:
        json.dump(state, file)  # as AutoGen's guide saves it
    return path


def test_a_team_s_state_loads_as_its_task_result(tmp_path: Path) -> None:
    result, state = runs.team_run()
    from_state = turnfold.load(saved(tmp_path, state))
    from_result = turnfold.load(result)
    assert shown(from_state) == shown(from_result)
    assert from_state.metadata["source_format"] == "autogen-state"
    assert from_state.warnings == []


def test_an_agent_s_state_holds_the_calls_outcomes_and_texts_of_its_runs(tmp_path: Path) -> None:
    results, state = runs.agent_run()
    from_state = turnfold.load(saved(tmp_path, state))
    from_results = [row for r in results for row in shown(turnfold.load(r), times=False)]
    assert shown(from_state, times=False) == from_results


def test_the_committed_agent_state() -> None:
    transcript = turnfold.load(AGENT)
    calls = [(c.call_id, c.name, c.status, c.result and c.result.text)
             for c in transcript.tool_calls()]  # fmt: skip
    assert calls == [("call_1", "add", "success", "3"),
                     ("call_2", "explode", "error", "boom: y")]  # fmt: skip
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == list(runs.PROMPTS)
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == list(
        runs.ANSWERS
    )
    assert transcript.metadata["agent"] == "calc"
    assert len(transcript.tool_calls(nested=True)) == count_calls(AGENT)


def test_the_committed_swarm_state() -> None:
    transcript = turnfold.load(SWARM)
    assert [c.name for c in transcript.tool_calls()] == ["add", "transfer_to_writer"]
    assert transcript.entries[-1].text == "The sum is 3. TERMINATE"  # type: ignore[union-attr]
    assert len(transcript.tool_calls(nested=True)) == count_calls(SWARM)


def test_a_damaged_context_message_is_a_warning_and_the_rest_is_read(tmp_path: Path) -> None:
    state = json.loads(AGENT.read_text(encoding="utf-8"))
    state["llm_context"]["messages"][0] = {"type": "Nonsense"}
    transcript = turnfold.load(saved(tmp_path, state))
    assert any("context/other" in w.reason for w in transcript.warnings)
    assert [c.name for c in transcript.tool_calls()] == ["add", "explode"]
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == ["And now?"]
