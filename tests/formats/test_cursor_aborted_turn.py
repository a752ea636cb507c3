"""A Cursor turn the user stopped ends ``{"type": "turn_ended", "status": "aborted"}``.

cursor-agent (2026 builds) closes a turn the user interrupted with Escape so, its ``error``
``"User aborted/interrupted manually."``: the shape several public readers of
``agent-transcripts/`` record and test (Cursor's own source is not public). Hand-made here.
"""

from __future__ import annotations

import json
from typing import Any

import turnfold
from turnfold.model import AbortMarker, AssistantError, ToolCall


def transcript_of(end: dict[str, Any]) -> turnfold.Transcript:
    records = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\nnow "
                                                  "delete them\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [
            {"type": "text", "text": "Deleting."},
            {"type": "tool_use", "name": "Shell", "input": {"command": "rm -r src"}},
        ]}},
        end,
    ]  # fmt: skip
    return turnfold.load("".join(json.dumps(r) + "\n" for r in records), format="cursor")


def test_P7_an_aborted_turn_is_stopped_with_cursor_s_reason() -> None:
    reason = "User aborted/interrupted manually."
    t = transcript_of({"type": "turn_ended", "status": "aborted", "error": reason})
    stops = [e for e in t.entries if isinstance(e, AbortMarker)]
    assert [s.reason for s in stops] == [reason]
    assert not [e for e in t.entries if isinstance(e, AssistantError)]
    assert t.warnings == []
    assert t.accounting is not None
    assert t.accounting.counts["turn_ended/aborted"] == {"mapped": 1}
    kinds = [type(e) for e in t.entries]
    assert kinds.index(AbortMarker) == kinds.index(ToolCall) + 1  # after the call it stopped


def test_P7_an_aborted_turn_without_a_reason_says_the_user_stopped_it() -> None:
    t = transcript_of({"type": "turn_ended", "status": "aborted"})
    [stop] = [e for e in t.entries if isinstance(e, AbortMarker)]
    assert stop.reason == "Stopped by the user"
    assert stop.wording is not None
    assert stop.wording.key == "reader.stopped_by_user"
    assert t.warnings == []
