"""API logs of raw stream events (Anthropic Messages, OpenAI Responses) and legacy
``/v1/completions`` Batch API lines, each on files the real SDKs made
(tests/fixtures/messages/api_stream_events_recipe.py,
tests/fixtures/datasets/openai_batch_completions_recipe.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold.formats import source, which_format
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    Thinking,
    ToolCall,
    UserMessage,
)
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parents[1] / "fixtures"
MESSAGES = FIXTURES / "messages"
DATASETS = FIXTURES / "datasets"
CLAUDE = MESSAGES / "anthropic-2.15.0_stream-events_two-calls.jsonl"
CLAUDE_REQUESTS = MESSAGES / "anthropic-2.15.0_stream-events_with-requests.jsonl"
OVERLOADED = MESSAGES / "anthropic-2.15.0_stream-events_overloaded.jsonl"
#: A request, then its response's events up to its last block's stop: no message_delta
#: (tests/fixtures/messages/api_stream_cut_recipe.py).
CUT_BEFORE_DELTA = MESSAGES / "anthropic-2.15.0_stream-events_cut-before-delta.jsonl"
RESPONSES = MESSAGES / "openai-3.57.0_responses_stream-events_two-calls.jsonl"
RESPONSES_ENDS = MESSAGES / "openai-3.57.0_responses_stream-events_incomplete-and-error.jsonl"


def _shown(transcript: turnfold.Transcript) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for e in transcript:
        if isinstance(e, ToolCall):
            out.append(("tool_call", (e.name, e.args, e.status)))
        elif isinstance(e, AssistantError):
            out.append(("error", e.message))
        else:
            out.append((e.kind, getattr(e, "text", None)))
    return out


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(
    ("path", "name"),
    [(CLAUDE, "anthropic"), (CLAUDE_REQUESTS, "anthropic"), (OVERLOADED, "anthropic"),
     (RESPONSES, "openai-responses"), (RESPONSES_ENDS, "openai-responses")],
)  # fmt: skip
def test_L2_a_log_of_raw_stream_events_is_detected_as_its_api(path: Path, name: str) -> None:
    opened, stream = source.open_source(path)
    try:
        assert which_format(opened) == name
    finally:
        if stream is not None:
            stream.close()


def test_L2_anthropic_stream_events_are_the_messages_they_stand_for() -> None:
    transcript = turnfold.load(CLAUDE)
    assert transcript.warnings == []
    assert _shown(transcript) == [
        ("thinking", "The notes say 3.12.4; I should check the machine itself."),
        ("assistant", "Let me check which Python is installed."),
        ("tool_call", ("bash", {"command": "python3 -V"}, "unknown")),  # input_json_delta joined
        ("assistant", "Python 3.12.4 is installed, as your notes say."),
    ]
    thinking, first, call, second = list(transcript)
    assert isinstance(thinking, Thinking)
    assert call.batch_id == "msg_01TFS0001"
    # message_delta's usage is cumulative: the final counts, not message_start's output of 1.
    assert first.usage is not None
    assert second.usage is not None
    assert (first.usage.output_tokens, first.usage.cache_read_tokens) == (88, 1200)
    assert (second.usage.output_tokens, second.usage.response_id) == (21, "msg_01TFS0002")
    assert transcript.metadata["model"] == "claude-sonnet-4-5-20250929"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["content_block_delta"] == {"mapped": 15}


def test_L2_anthropic_requests_beside_their_events_give_each_message_once() -> None:
    transcript = turnfold.load(CLAUDE_REQUESTS)
    assert transcript.warnings == []
    shown = _shown(transcript)
    assert shown[0] == ("user", "[attachment: notes.txt · text/plain · 36 B]\n\n"
                        "Which Python is installed? Check, then tell me.")  # fmt: skip
    # The second request repeats the prompt and the first response: only its result is new.
    assert [kind for kind, _ in shown] == [
        "user",
        "thinking",
        "assistant",
        "tool_call",
        "assistant",
    ]
    assert shown[3] == ("tool_call", ("bash", {"command": "python3 -V"}, "success"))
    assert transcript.metadata["system"] == "Be brief."


def test_X2_an_anthropic_stream_cut_off_is_read_as_far_as_it_goes_and_warned() -> None:
    lines = _lines(CLAUDE)
    cut = lines[: next(i for i, line in enumerate(lines) if "pytho" in line)]
    transcript = turnfold.load("\n".join(cut) + "\n")
    assert _shown(transcript)[:2] == [
        ("thinking", "The notes say 3.12.4; I should check the machine itself."),
        ("assistant", "Let me check which Python is installed."),
    ]
    call = next(e for e in transcript if isinstance(e, ToolCall))
    assert (call.name, call.args) == ("bash", '{"command')  # the cut input as it came
    assert isinstance(list(transcript)[-1], AbortMarker)
    assert transcript.metadata["outcome"] == "incomplete"
    assert [w.reason for w in transcript.warnings] == [
        "the stream ends inside the run begun on line 1 (no message_stop): how that run ended "
        "is not recorded"
    ]


def test_X2_an_anthropic_message_cut_off_before_the_next_one_is_warned() -> None:
    lines = _lines(CLAUDE)
    first_stop = lines.index('{"type":"message_stop"}')
    transcript = turnfold.load("\n".join(lines[: first_stop - 2] + lines[first_stop + 1 :]) + "\n")
    assert [kind for kind, _ in _shown(transcript)][-1] == "assistant"
    assert [w.reason for w in transcript.warnings] == [
        "the streamed message begun on line 1 ends without message_stop: it may be cut off"
    ]


def test_U1_an_anthropic_stream_cut_before_its_message_delta_records_no_output() -> None:
    """Its usage is message_start's: the input counts are the response's, but the output count
    is the API's placeholder, 1. The header showed "1.6k tokens · ≈ $0.00…", the input priced
    with 1 output token as the response's cost; the output is not recorded (U-1), the total a
    lower bound and no cost is put on it (U-2)."""
    start = json.loads(_lines(CUT_BEFORE_DELTA)[1])
    assert start["message"]["usage"]["output_tokens"] == 1
    transcript = turnfold.load(CUT_BEFORE_DELTA)
    (usage,) = [e.usage for e in transcript if isinstance(e, AssistantText) and e.usage]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (1620, 1200, None)
    view = build_view_model(transcript, DisplaySettings())
    assert view["session"] is not None
    parts = {p["name"]: (p["text"], p["title"]) for p in view["session"]["parts"]}
    assert parts["tokens"] == (
        "≥ 1.6k tokens",
        "input 1,620, output not recorded, cache read 1,200, cache write 0",
    )
    assert "cost" not in parts
    row = next(iter(turnfold.scan([CUT_BEFORE_DELTA], cache=False, workers=1)))
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (1620, None, None)
    assert transcript.metadata["outcome"] == "incomplete"


def test_U1_an_anthropic_stream_with_its_message_delta_keeps_its_output() -> None:
    # The same response whole: the message_delta's output count (88) is the response's.
    (first, _) = [e.usage for e in turnfold.load(CLAUDE) if isinstance(e, AssistantText)]
    assert first is not None
    assert (first.input_tokens, first.output_tokens) == (1620, 88)


def test_X2_an_anthropic_error_event_ends_the_stream_with_the_apis_words() -> None:
    transcript = turnfold.load(OVERLOADED)
    assert _shown(transcript) == [
        ("assistant", "Checking the installed P"),
        ("error", "overloaded_error: Overloaded"),
    ]


def test_X2_unknown_anthropic_events_and_pings_are_said_and_passed_over() -> None:
    lines = _lines(CLAUDE)
    odd = [lines[0], '{"type": "ping"}', '{"type": "content_block_glow", "index": 0}',
           '{"type": "content_block_glow", "index": 1}', *lines[1:]]  # fmt: skip
    transcript = turnfold.load("\n".join(odd) + "\n")
    assert [w.reason for w in transcript.warnings] == [
        "unknown stream event type 'content_block_glow' skipped"
    ]
    assert len(_shown(transcript)) == 4
    assert transcript.accounting is not None
    assert transcript.accounting.counts["ping"] == {"ignored": 1}


def test_L2_responses_stream_events_read_as_their_completed_responses() -> None:
    transcript = turnfold.load(RESPONSES)
    assert transcript.warnings == []
    assert _shown(transcript) == [
        ("user", "Which Python is installed?"),
        ("thinking", "**Checking** the installed Python."),
        ("tool_call", ("run_shell", {"cmd": "python3 -V"}, "unknown")),
        ("assistant", "Python 3.12.4 is installed."),
    ]
    answer = list(transcript)[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (180, 12)
    assert transcript.metadata["model"] == "o4-mini-2025-04-16"


def test_X2_a_responses_stream_cut_off_is_built_from_its_deltas_and_warned() -> None:
    lines = _lines(RESPONSES)
    cut = lines[
        : next(
            i for i, line in enumerate(lines) if '"response.function_call_arguments.done"' in line
        )
    ]
    transcript = turnfold.load("\n".join(cut) + "\n")
    assert _shown(transcript)[:3] == [
        ("user", "Which Python is installed?"),
        ("thinking", "**Checking** the installed Python."),
        ("tool_call", ("run_shell", {"cmd": "python3 -V"}, "unknown")),  # arguments joined
    ]
    assert isinstance(list(transcript)[-1], AbortMarker)
    assert [w.reason for w in transcript.warnings] == [
        "the stream ends inside the run begun on line 2 (no response.completed, "
        "response.failed or response.incomplete): how that run ended is not recorded"
    ]


def test_X2_responses_incomplete_and_error_events_say_how_each_ended() -> None:
    transcript = turnfold.load(RESPONSES_ENDS)
    assert transcript.warnings == []
    shown = _shown(transcript)
    assert shown == [
        ("assistant", "Python 3.12.4 is installed; its standard"),
        ("abort", None),  # response.incomplete: max_output_tokens
        ("assistant", "Checking the installed P"),  # its deltas, then the error event
        ("error", "server_error: The server had an error while processing your request."),
    ]
    abort = list(transcript)[1]
    assert isinstance(abort, AbortMarker)
    assert abort.reason == "max_output_tokens"


def test_X2_an_unknown_responses_event_is_said_and_passed_over() -> None:
    lines = _lines(RESPONSES)
    odd = [
        *lines[:3],
        json.dumps({"type": "response.hologram.delta", "sequence_number": 2}),
        *lines[3:],
    ]
    transcript = turnfold.load("\n".join(odd) + "\n")
    assert [w.reason for w in transcript.warnings] == [
        "unknown stream event type 'response.hologram.delta' skipped"
    ]
    assert len(_shown(transcript)) == 4


COMPLETIONS_IN = DATASETS / "openai-3.57.0_batch_completions_input.jsonl"
COMPLETIONS_OUT = DATASETS / "openai-3.57.0_batch_completions_output.jsonl"


def test_L2_legacy_completions_batch_lines_are_prompt_and_answer_runs() -> None:
    asked = turnfold.load(COMPLETIONS_IN, sample="capital-2")
    assert _shown(asked) == [("user", "Q: What is the capital of France?\nA:")]
    assert asked.metadata["url"] == "/v1/completions"
    answered = turnfold.load(COMPLETIONS_OUT, sample="capital-2")
    assert [(k, t) for k, t in _shown(answered)][1:] == [
        ("assistant", " Paris is the capital"),
        ("system", "The response was cut off at the token limit."),  # finish_reason length
    ]
    assert isinstance(next(iter(answered)), UserMessage)  # the prompt is the input file's
    haiku = list(turnfold.load(COMPLETIONS_OUT, sample="haiku-1"))[1]
    assert isinstance(haiku, AssistantText)
    assert haiku.usage is not None
    assert (haiku.usage.input_tokens, haiku.usage.output_tokens) == (12, 14)
    rows = turnfold.scan(COMPLETIONS_OUT, cache=False).to_pandas()
    assert sorted(rows["key"]) == sorted(f"{COMPLETIONS_OUT}#{n}" for n in ("capital-2", "haiku-1"))


def test_X2_a_completions_batch_line_of_several_prompts_is_refused_saying_so() -> None:
    line = {"custom_id": "two", "method": "POST", "url": "/v1/completions",
            "body": {"model": "m", "prompt": ["a", "b"]}}  # fmt: skip
    with pytest.raises(turnfold.TranscriptFormatError, match="of 2 prompts: one run is one prompt"):
        turnfold.load(line)
