"""The Cline agent's own harness rules, on hand-made inputs (no CLI needed)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.clis.cline import Cline
from tests.agents.scenarios import WORK
from tests.agents.wire import SeenResult

CLINE = Cline()


def test_a_command_s_result_is_what_it_printed_not_the_command_it_echoes() -> None:
    # run_commands answers [{query, result, success}]: the query is the call's own argument.
    sent = [{"query": "printf 'TF-OK-%s\\n' 23", "result": "TF-OK-23\n", "success": True}]
    returned = CLINE.returned(SeenResult("c", json.dumps(sent)))
    assert "TF-OK-23" in returned
    assert "printf" not in returned
    # Any other answer (an editor's object, the sub-agent's, plain text) is all returned.
    for text in ('{"text": "TF-SUB-DONE"}', "TF-PLAIN", "[1, 2]"):
        assert CLINE.returned(SeenResult("c", text)) == text


def test_a_session_it_cannot_resume_plays_its_first_prompt_only() -> None:
    adapted = CLINE.adapt(WORK)
    assert [p.marker for p in adapted.prompts] == ["TF-FIRST"]
    assert adapted.subagent is not None


def test_its_records_are_the_messages_of_each_messages_file(tmp_path: Path) -> None:
    session = tmp_path / ".cline" / "data" / "sessions" / "s1"
    session.mkdir(parents=True)
    messages = [{"role": "user", "content": []}, 3, {"role": "assistant"}]
    document = {"version": 1, "agent": "lead", "sessionId": "s1", "messages": messages}
    (session / "s1.messages.json").write_text(json.dumps(document, indent=2))
    (session / "agent_x.messages.json").write_text(json.dumps({**document, "agent": "subagent"}))
    (session / "s1.json").write_text("{}")  # the manifest: no session file
    assert [p.name for p in CLINE.session_files(tmp_path)] == ["s1.messages.json"]
    assert [p.name for p in CLINE.all_files(tmp_path)] == [
        "agent_x.messages.json",
        "s1.messages.json",
    ]
    records = list(CLINE.records(session / "s1.messages.json"))
    assert [CLINE.record_type(r) for r in records] == ["user", "assistant"]
    (session / "broken.messages.json").write_text("{")
    assert list(CLINE.records(session / "broken.messages.json")) == []
