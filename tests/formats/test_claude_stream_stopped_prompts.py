"""A ``claude -p --input-format stream-json`` process given several prompts, a later one's run
stopped while its response streamed (spec U-1, U-2, U-3): the session's total is the finished
runs' recorded totals plus what the stopped run recorded, a lower bound.

The files are the stdout of the real Claude Code 2.1.332 in the ``tests/agents`` harness
(recipe: ``stopped_second_prompt_recipe.py`` beside them): the first prompt's run finished
(responses 1 and 2, its ``result`` counting both), the second's was stopped by a SIGINT while
its one response (3, a ``Bash`` call) streamed. The scripted server sent response n input
``1000n + 100`` uncached, cache reads ``1000n + 20``, cache writes ``1000n + 30`` and output
``10n + 5``; each message of the stream holds its input counts, never its output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "claude-stream-json"
#: The SIGINT while response 3 streamed: its message written, the second result's usage zeros.
MID_RESPONSE = FIXTURES / "claude-code_v2.1.332_stream-json_two-prompts-stopped-mid-response.jsonl"
#: The SIGINT just after response 3's message was written: no second result.
NO_RESULT = FIXTURES / "claude-code_v2.1.332_stream-json_two-prompts-stopped-no-result.jsonl"
#: Both prompts' runs finished: each result its run's total.
FINISHED = FIXTURES / "claude-code_v2.1.332_stream-json_tokens-two-prompts.jsonl"

USAGE = DisplaySettings(show_turn_usage=True)
#: The first run's result: responses 1 and 2, cached input added in, and their output.
FIRST_RUN = {"input_tokens": 9300, "output_tokens": 40, "cache_read_tokens": 3040,
             "cache_write_tokens": 3060}  # fmt: skip
#: Response 3's input as its message records it (3100 uncached, 3020 read, 3030 written).
STOPPED_INPUT = {"input_tokens": 9150, "cache_read_tokens": 3020, "cache_write_tokens": 3030}
#: The session's total: the first run's, and the stopped run's input.
SESSION = {name: FIRST_RUN[name] + STOPPED_INPUT.get(name, 0) for name in FIRST_RUN}


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _parts(path: Path) -> dict[str, tuple[str, str | None]]:
    view = build_view_model(turnfold.load(path), USAGE)
    assert view["session"] is not None
    return {p["name"]: (p["text"], p["title"]) for p in view["session"]["parts"]}


def _turn_usage(path: Path) -> list[str | None]:
    view = build_view_model(turnfold.load(path), USAGE)
    return [n["header"].get("usage") for n in iter_nodes(view) if n["kind"] == "turn"]


def test_the_files_are_what_their_names_say() -> None:
    for path in (MID_RESPONSE, NO_RESULT):
        events = _events(path)
        assert [e["type"] for e in events if e["type"] in ("system", "result")][:3] == [
            "system", "result", "system"]  # fmt: skip
        usages = [e["message"]["usage"] for e in events if e["type"] == "assistant"]
        assert [u["input_tokens"] for u in usages] == [1100, 2100, 3100]
        assert {u["output_tokens"] for u in usages} == {1}  # message_start's, every one
    (_, stopped) = [e for e in _events(MID_RESPONSE) if e["type"] == "result"]
    assert stopped["terminal_reason"] == "aborted_streaming"
    assert not any(v for k, v in stopped["usage"].items() if k.endswith("tokens"))
    assert len([e for e in _events(NO_RESULT) if e["type"] == "result"]) == 1


@pytest.mark.parametrize("path", [MID_RESPONSE, NO_RESULT], ids=["mid-response", "no-result"])
def test_U1_a_stopped_later_run_s_input_joins_the_earlier_runs_total(path: Path) -> None:
    # Was the first run's total alone (9.3k): the stopped run's input left out of the session's.
    transcript = turnfold.load(path)
    assert transcript.metadata["usage"] == SESSION
    assert session_facts(transcript).tokens == SESSION
    assert transcript.metadata["usage_lower_bound"] is True


@pytest.mark.parametrize("path", [MID_RESPONSE, NO_RESULT], ids=["mid-response", "no-result"])
def test_U3_the_header_marks_that_total_as_a_lower_bound(path: Path) -> None:
    parts = _parts(path)
    assert parts["tokens"] == (
        "≥ 18.5k tokens",
        "input 18,450, output 40, cache read 6,060, cache write 6,090",
    )
    # Response 3's output is in no total: no turn's share of the total is known either.
    assert _turn_usage(path) == ["tokens not recorded per turn"] * 2
    row = next(iter(turnfold.scan([path], cache=False, workers=1)))
    assert (row["input_tokens"], row["output_tokens"]) == (18450, 40)


def test_U2_a_result_after_the_stop_keeps_the_cost_the_cli_recorded() -> None:
    """The CLI's ``total_cost_usd`` is the process's so far, response 3 included (its
    ``model_usage_since_last_result`` counts it): the source's cost, kept."""
    parts = _parts(MID_RESPONSE)
    assert parts["cost"] == ("$0.06", "$0.06 (recorded by the source)")
    assert turnfold.load(MID_RESPONSE).metadata["outcome"] == "incomplete"


def test_U2_a_run_cut_off_after_finished_ones_records_no_session_cost() -> None:
    """The only ``total_cost_usd`` is the first run's (the header showed it, $0.03, as the
    session's): the stopped run's cost is recorded nowhere, and its output neither (no
    estimate)."""
    (first,) = [e for e in _events(NO_RESULT) if e["type"] == "result"]
    assert first["total_cost_usd"] == pytest.approx(0.029508)
    transcript = turnfold.load(NO_RESULT)
    assert "cost_usd" not in transcript.metadata
    assert "cost" not in _parts(NO_RESULT)
    assert transcript.metadata["outcome"] == "incomplete"
    assert [w.reason for w in transcript.warnings] == [
        "the stream ends inside the run begun on line 6 (no result): how that run ended is not "
        "recorded"
    ]


def test_U1_runs_that_all_recorded_their_totals_are_no_lower_bound() -> None:
    transcript = turnfold.load(FINISHED)
    assert "usage_lower_bound" not in transcript.metadata
    assert _parts(FINISHED)["tokens"][0] == "30.7k tokens"
