"""Cline's ``--json`` stdout against its session file, on the scenarios the harness plays: the
same tool calls (names, arguments, ids) with the same outcomes and results, and the same
sub-agent's calls under the call that started it. Tokens are the ``stream`` check's
(:mod:`tests.agents.truth`); this reads the plays the other tests made, so it costs a load."""

from __future__ import annotations

import pytest

import turnfold
from tests.agents.play import Play
from tests.agents.scenarios import SCENARIOS
from turnfold import ToolCall, Transcript

pytestmark = pytest.mark.agents


def _calls(transcript: Transcript) -> list[tuple[str, str, object, str, str]]:
    """Each call, a sub-agent's after the call that started it: id, name, arguments, status and
    the result's text."""
    out: list[tuple[str, str, object, str, str]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            text = entry.result.text if entry.result is not None else ""
            out.append((entry.call_id, entry.name, entry.args, entry.status, text or ""))
            if entry.subagent is not None and entry.subagent.transcript is not None:
                out += _calls(entry.subagent.transcript)
    return out


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_json_stdout_agrees_with_the_session_file(
    plays: dict[tuple[str, str], Play], scenario: str
) -> None:
    played = plays["cline", scenario]
    if played.problems():
        pytest.skip("the play itself failed (see test_agents.py::test_play)")
    (stream,) = played.streams  # Cline plays a first prompt only
    from_stream = turnfold.load(stream)
    from_session = turnfold.load(played.files[0])
    assert from_stream.metadata["source_format"] == "cline-json"
    streamed, kept = _calls(from_stream), _calls(from_session)
    assert [c[:3] for c in streamed] == [c[:3] for c in kept]
    if played.scenario.interrupt:
        # Ctrl-C kills the CLI before it prints the call's end: the session file says
        # cancelled, the stream holds what the command printed so far, its outcome unknown.
        assert [c[3] for c in streamed] == ["unknown"]
        assert [c[3] for c in kept] == ["cancelled"]
        assert "TF-SLOW-START" in streamed[0][4]
        assert any("ends before the run did" in str(w) for w in from_stream.warnings)
    else:
        assert [c[3:] for c in streamed] == [c[3:] for c in kept]
        assert not from_stream.warnings
