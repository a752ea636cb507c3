"""The ``stream`` check of Claude Code's stdout in the ``interrupt`` scenario, wherever the SIGINT
lands (no CLI needed: the streams are the real ones of ``tests/fixtures/agents/
claude-stream-json``, the record the server's for that scenario).

``test_truth[claude-interrupt-stream]`` failed once on a loaded machine: the SIGINT landed
before the CLI had counted the one response, the CLI exited 0 without a ``result``, and the check
took the exit code for a run that wrote its total, so it wanted the 15 output tokens the server
sent, which the stream holds nowhere. What the stream holds is what its load must show: each
response it wrote with its input counts, its total where it wrote one; no more, and no less.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import turnfold
from tests.agents import truth
from tests.agents.clis import AGENTS
from tests.agents.script import Reply, SentUsage
from tests.agents.server import Exchange, Record
from tests.agents.wire import anthropic

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "claude-stream-json"
#: The SIGINT while the response streamed: its message, no result, exit code 0.
NO_RESULT = FIXTURES / "claude-code_v2.1.332_stream-json_stopped-no-result.jsonl"
#: ...its message, and a result whose usage is all zeros (the response never counted).
MID_RESPONSE = FIXTURES / "claude-code_v2.1.332_stream-json_stopped-mid-response.jsonl"
#: ...no message at all, a result of zeros.
BEFORE_MESSAGE = FIXTURES / "claude-code_v2.1.332_stream-json_stopped-before-message.jsonl"
#: The SIGINT while the call ran: the message, and a result holding the response whole.
INTERRUPTED = FIXTURES / "claude-code_v2.1.332_stream-json_interrupted.jsonl"

#: The one response the server sent in the scenario (the call of ``sleep 45``).
SENT = SentUsage.numbered(1, anthropic.COUNTS)


def _play(stream: Path, returncode: int = 0) -> Any:
    response = Exchange("/v1/messages", "TF-SLOW", 0, Reply(usage=SENT), number=1)
    return SimpleNamespace(
        agent=AGENTS["claude"],
        record=Record(exchanges=[response]),
        scenario=SimpleNamespace(prompts=[SimpleNamespace(marker="TF-SLOW")], subagent=None),
        streams=[stream],
        runs=[SimpleNamespace(returncode=returncode)],
    )


def _stream_findings(stream: Path, transcript: turnfold.Transcript | None = None) -> list[str]:
    play = _play(stream)
    if transcript is None:
        return [str(f) for f in truth._check_streams(play)]
    written = play.agent.stream_wrote(stream.read_text())
    found = truth._check_stream(
        play, play.agent.stream, "stdout", stream, transcript, 0, ended=True, written=written
    )
    return [str(f) for f in found]


@pytest.mark.parametrize(
    "stream", [NO_RESULT, MID_RESPONSE, BEFORE_MESSAGE, INTERRUPTED],
    ids=["no-result", "mid-response", "before-message", "after-the-count"],
)  # fmt: skip
def test_wherever_the_interrupt_lands_the_load_shows_what_the_stream_holds(stream: Path) -> None:
    assert _stream_findings(stream) == []


def test_what_the_stream_holds_is_read_from_the_file() -> None:
    claude = AGENTS["claude"]
    first = set(SENT.counts().values())
    no_result = claude.stream_wrote(NO_RESULT.read_text())
    assert (no_result.counts is not None and first & no_result.counts, no_result.total) == (
        {1020, 1030}, False)  # fmt: skip
    mid = claude.stream_wrote(MID_RESPONSE.read_text())
    assert mid.total is False  # a result of zeros: no total
    before = claude.stream_wrote(BEFORE_MESSAGE.read_text())
    assert (before.counts, before.total) == (frozenset(), False)
    assert claude.stream_wrote(INTERRUPTED.read_text()).total is True


def test_a_stream_that_holds_the_total_is_still_held_to_the_server_s_sums() -> None:
    # Not weakened: where the result holds the run's total, a load without it is a finding.
    transcript = turnfold.load(INTERRUPTED)
    assert transcript.metadata["usage"]["output_tokens"] == SENT.output_tokens
    del transcript.metadata["usage"]
    found = _stream_findings(INTERRUPTED, transcript)
    assert any("the header's totals" in f and "'output_tokens': 15" in f for f in found)


def test_a_result_of_zeros_shown_as_the_total_is_a_finding() -> None:
    # The CLI's zeros are no count: a load that showed them as the run's total is held to the
    # response's input counts, which the stream wrote on its message.
    transcript = turnfold.load(MID_RESPONSE)
    zeros = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens",
                           "cache_write_tokens"), 0)  # fmt: skip
    transcript.metadata["usage"] = zeros
    found = _stream_findings(MID_RESPONSE, transcript)
    assert any("the header's totals" in f and "'input_tokens': 3150" in f for f in found)


def test_a_response_the_stream_wrote_must_be_counted() -> None:
    transcript = turnfold.load(NO_RESULT)
    for entry in transcript.entries:
        if getattr(entry, "usage", None) is not None:
            transcript.update(entry, usage=None)
    found = _stream_findings(NO_RESULT, transcript)
    assert "[stream] stdout: response 1 (step 0): not counted" in found
