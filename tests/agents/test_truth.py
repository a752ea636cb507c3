"""The truth check's own rules, on hand-made transcripts (no CLI needed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.agents import truth
from tests.agents.script import Reply, SentUsage
from tests.agents.server import Exchange
from tests.agents.wire import anthropic, chat, gemini, responses
from turnfold import AssistantText, SystemNotice, ToolCall, Transcript, Usage, UserMessage


def _play(*prompts: str) -> Any:
    return SimpleNamespace(
        scenario=SimpleNamespace(prompts=[SimpleNamespace(text=p) for p in prompts])
    )


def _resumed() -> Transcript:
    return Transcript(
        [UserMessage(text="FIRST"), AssistantText(text="a"), UserMessage(text="SECOND")]
    )


def test_a_gemini_resume_stub_beside_the_session_is_no_second_session() -> None:
    # Gemini CLI 0.61, resumed in a later minute: a stub file of the briefing alone.
    stub = Transcript([SystemNotice(text="<session_context> briefing")])
    findings: list[truth.Finding] = []
    files = [(Path("session-23-11.jsonl"), _resumed()), (Path("session-23-12.jsonl"), stub)]
    main = truth._main_transcript(_play("FIRST", "SECOND"), files, findings)
    assert findings == []
    assert main is files[0][1]


def test_a_second_file_holding_a_call_is_a_finding() -> None:
    other = Transcript([ToolCall(call_id="c", name="Bash", status="success")])
    findings: list[truth.Finding] = []
    files = [(Path("a.jsonl"), _resumed()), (Path("b.jsonl"), other)]
    truth._main_transcript(_play("FIRST", "SECOND"), files, findings)
    assert [f.check for f in findings] == ["resume"]
    assert "2 session files, not one: a.jsonl, b.jsonl" in findings[0].message


# --- tokens ---------------------------------------------------------------------------------------


def _numbered(n: int, thread: str = "T", side: bool = False) -> Exchange:
    usage = SentUsage.numbered(n, responses.COUNTS)
    return Exchange("/v1/responses", thread, n, Reply(text="x", usage=usage), side, number=n)


def _token_play(*exchanges: Exchange) -> Any:
    return SimpleNamespace(
        record=SimpleNamespace(exchanges=list(exchanges)),
        agent=SimpleNamespace(wire=responses),
    )


def _answer(n: int, response_id: str | None = None, **changed: int) -> AssistantText:
    counts = {**SentUsage.numbered(n, responses.COUNTS).counts(), **changed}
    return AssistantText(text="x", usage=Usage(**counts, response_id=response_id))


def _token_findings(play: Any, *entries: AssistantText, sent: list[Exchange]) -> list[str]:
    loaded: dict[int, str] = {}
    found = truth._check_responses(play, "s", Transcript(list(entries)), sent, loaded)
    return [f.message for f in found]


@pytest.mark.parametrize("wire", [anthropic, chat, gemini, responses])
def test_every_count_of_every_response_is_a_number_of_its_own(wire: Any) -> None:
    sent = [SentUsage.numbered(n, wire.COUNTS).counts() for n in range(1, 200)]
    counts = [v for usage in sent for v in usage.values()]
    assert len(set(counts)) == len(counts)


def test_each_response_counted_once_as_sent() -> None:
    first, second = _numbered(1), _numbered(2)
    play = _token_play(first, second)
    entries = (_answer(1, "r1"), _answer(1, "r1"), _answer(2))
    assert _token_findings(play, *entries, sent=[first, second]) == []


def test_a_response_written_twice_without_its_id_is_counted_twice() -> None:
    first = _numbered(1)
    found = _token_findings(_token_play(first), _answer(1), _answer(1), sent=[first])
    assert len(found) == 1
    assert "response 1 counted again" in found[0]


def test_a_count_the_server_did_not_send_is_a_finding() -> None:
    first = _numbered(1)
    sent = SentUsage.numbered(1, responses.COUNTS)
    doubled = sent.output_tokens + (sent.reasoning_tokens or 0)  # the reasoning added twice
    found = _token_findings(_token_play(first), _answer(1, output_tokens=doubled), sent=[first])
    assert len(found) == 1
    assert f"'output_tokens': {doubled}" in found[0]


def test_a_zero_loaded_for_a_missing_count_is_a_finding() -> None:
    # A response whose usage the file lacks stays None: a zero is a count nobody sent.
    first = _numbered(1)
    zeros = AssistantText(text="x", usage=Usage(input_tokens=0, output_tokens=0))
    found = _token_findings(_token_play(first), zeros, sent=[first])
    assert len(found) == 1
    assert "no response the server sent" in found[0]


def test_a_zero_in_a_count_the_wire_has_no_field_for_counts_nothing() -> None:
    first = _numbered(1)
    stated = _answer(1, cache_write_tokens=0)  # Codex writes cache_write_input_tokens: 0
    assert _token_findings(_token_play(first), stated, sent=[first]) == []


def test_a_side_request_counted_in_the_session_is_a_finding() -> None:
    title, first = _numbered(1, thread="", side=True), _numbered(2)
    found = _token_findings(_token_play(title, first), _answer(1), _answer(2), sent=[first])
    assert len(found) == 1
    assert found[0].endswith(": response 1, beside the conversation, counted here")


def test_a_count_a_stream_does_not_record_must_load_as_not_recorded() -> None:
    # Claude Code's stream writes each message with message_start's output count (1).
    first = _numbered(1)
    sent = SentUsage.numbered(1, responses.COUNTS)
    inputs = frozenset({"input_tokens", "cache_read_tokens"})
    for output, found in ((1, 1), (None, 0)):
        usage = Usage(
            input_tokens=sent.input_tokens,
            output_tokens=output,
            cache_read_tokens=sent.cache_read_tokens,
        )
        transcript = Transcript([AssistantText(text="x", usage=usage)])
        findings = truth._check_responses(
            _token_play(first), "s", transcript, [first], {}, inputs, "stream"
        )
        assert [f.check for f in findings] == ["stream"] * found
