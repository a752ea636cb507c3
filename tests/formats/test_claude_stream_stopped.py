"""A ``claude -p --output-format stream-json`` run whose tokens were not all counted: its stream
cut off before its ``result``, or its ``result`` written before the CLI counted the response the
user stopped (spec U-1, U-2, U-3).

Each message of the stream holds its input counts and ``message_start``'s placeholder output
(1), never the response's output count; only the ``result`` holds the run's. The files are the
stdout of the real Claude Code 2.1.332 in the ``tests/agents`` harness: ``…_killed`` (SIGKILL
while its second call ran; recipe: the folder's README) and the ``…_stopped-*`` files (a SIGINT
while its one response streamed, or as soon as it was sent; recipe:
``stopped_streams_recipe.py`` beside them). The scripted server sent response n input
``1000n + 100`` uncached, cache reads ``1000n + 20``, cache writes ``1000n + 30`` and output
``10n + 5``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import turnfold
from turnfold.cost import estimate
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings
from turnfold.usage import records_tokens_per_turn

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "claude-stream-json"
KILLED = FIXTURES / "claude-code_v2.1.332_stream-json_killed.jsonl"
#: The SIGINT while the response streamed: its message written, the result's usage zeros.
MID_RESPONSE = FIXTURES / "claude-code_v2.1.332_stream-json_stopped-mid-response.jsonl"
#: The SIGINT before any message: a result of zeros, its cost 0, its modelUsage empty.
BEFORE_MESSAGE = FIXTURES / "claude-code_v2.1.332_stream-json_stopped-before-message.jsonl"
#: The SIGINT just after the message was written: the CLI exits 0 without a result.
NO_RESULT = FIXTURES / "claude-code_v2.1.332_stream-json_stopped-no-result.jsonl"
#: The SIGINT while the call ran: the response was counted, the result holds it.
INTERRUPTED = FIXTURES / "claude-code_v2.1.332_stream-json_interrupted.jsonl"

USAGE = DisplaySettings(show_turn_usage=True)
#: Response 1's counts as loaded (cached input added in), its output not recorded.
FIRST_INPUTS = {"input_tokens": 3150, "cache_read_tokens": 1020, "cache_write_tokens": 1030}


def _header(path: Path) -> dict[str, Any]:
    view = build_view_model(turnfold.load(path), USAGE)
    assert view["session"] is not None
    return dict(view["session"])


def _parts(path: Path) -> dict[str, tuple[str, str | None]]:
    return {p["name"]: (p["text"], p["title"]) for p in _header(path)["parts"]}


def _turn_usage(path: Path) -> list[str | None]:
    view = build_view_model(turnfold.load(path), USAGE)
    return [n["header"].get("usage") for n in iter_nodes(view) if n["kind"] == "turn"]


def _result(path: Path) -> dict[str, Any]:
    lines: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()]
    (result,) = [e for e in lines if e["type"] == "result"]
    return result


# --- cut off before its result: the output is recorded nowhere ---------------------------------


def test_U1_a_killed_run_s_header_marks_its_input_only_total_as_a_lower_bound() -> None:
    # Was "9.3k tokens · ≈ $0.03": the input of its two responses read as the run's tokens, and
    # priced as its cost, though what they wrote is recorded nowhere in the stream.
    parts = _parts(KILLED)
    assert parts["tokens"] == (
        "≥ 9.3k tokens",
        "input 9,300, output not recorded, cache read 3,040, cache write 3,060",
    )
    assert "cost" not in parts
    assert "$" not in _header(KILLED)["text"]


def test_U3_a_killed_run_s_turn_says_its_tokens_are_not_recorded() -> None:
    # Was "9.3k tokens · ≈ $0.03", as the same run's turn with its result says it already.
    assert _turn_usage(KILLED) == ["tokens not recorded per turn"]
    assert not records_tokens_per_turn(turnfold.load(KILLED))


def test_C2_a_killed_run_s_row_has_its_inputs_and_no_output_nor_cost() -> None:
    row = next(iter(turnfold.scan([KILLED], cache=False, workers=1)))
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (9300, None, None)


def test_U1_each_message_keeps_its_input_but_not_the_placeholder_output() -> None:
    # Every message of the file says output_tokens 1 (message_start's): never shown as a count.
    raw = [json.loads(line) for line in NO_RESULT.read_text().splitlines()]
    assert [e["message"]["usage"]["output_tokens"] for e in raw if e["type"] == "assistant"] == [1]
    facts = session_facts(turnfold.load(NO_RESULT))
    assert facts.tokens == FIRST_INPUTS
    assert _parts(NO_RESULT)["tokens"][0] == "≥ 3.1k tokens"


def test_U2_a_response_without_its_output_count_gets_no_cost() -> None:
    inputs_only = {"input_tokens": 3150, "cache_read_tokens": 1020}
    assert estimate([("claude-opus-4-1", inputs_only)]) is None
    assert estimate([("claude-opus-4-1", {**inputs_only, "output_tokens": 15})]) is not None


# --- stopped before the CLI counted its response: the result's zeros are no total ---------------


def test_U1_a_result_of_zeros_after_a_stop_mid_response_is_not_the_run_s_total() -> None:
    """The SIGINT landed while the response streamed, before its ``message_delta``: the CLI
    wrote the call's event (its input counts) and a ``result`` whose ``usage`` is all zeros.
    The header showed no tokens at all (the zeros), the corpus row 0 for each count."""
    result = _result(MID_RESPONSE)
    assert result["terminal_reason"] == "aborted_streaming"
    assert {k: v for k, v in result["usage"].items() if k.endswith("tokens")} == dict.fromkeys(
        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
         "output_tokens"), 0)  # fmt: skip
    transcript = turnfold.load(MID_RESPONSE)
    assert "usage" not in transcript.metadata
    assert session_facts(transcript).tokens == FIRST_INPUTS
    parts = _parts(MID_RESPONSE)
    assert parts["tokens"][0] == "≥ 3.1k tokens"
    # The cost the CLI recorded (from its own count of the response) is still the source's.
    assert parts["cost"] == ("$0.01", "$0.01 (recorded by the source)")
    row = next(iter(turnfold.scan([MID_RESPONSE], cache=False, workers=1)))
    assert (row["input_tokens"], row["output_tokens"]) == (3150, None)


def test_U2_a_stop_before_any_message_records_neither_tokens_nor_a_cost() -> None:
    """No message was written; the ``result``'s zeros and its cost of 0 are the CLI's sum over
    no response (its ``modelUsage`` is empty): the header showed ``$0.00``."""
    result = _result(BEFORE_MESSAGE)
    assert (result["total_cost_usd"], result["modelUsage"]) == (0, {})
    transcript = turnfold.load(BEFORE_MESSAGE)
    assert "usage" not in transcript.metadata
    assert "cost_usd" not in transcript.metadata
    text = _header(BEFORE_MESSAGE)["text"]
    assert "tokens" not in text
    assert "$" not in text
    row = next(iter(turnfold.scan([BEFORE_MESSAGE], cache=False, workers=1)))
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (None, None, None)
    assert transcript.metadata["outcome"] == "incomplete"


def test_U1_a_stop_after_the_response_was_counted_keeps_the_result_s_total() -> None:
    """The SIGINT while the call ran (``aborted_tools``): the result holds response 1 whole,
    its output included, and the header shows it, as recorded."""
    transcript = turnfold.load(INTERRUPTED)
    assert transcript.metadata["usage"] == {**FIRST_INPUTS, "output_tokens": 15}
    parts = _parts(INTERRUPTED)
    assert parts["tokens"][0] == "3.2k tokens"
    assert parts["cost"][0] == "$0.01"
