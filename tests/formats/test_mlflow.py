"""MLflow traces (spec H-4, §12 U-1, H-6): fixtures the real mlflow made (see
``tests/fixtures/traces/mlflow/mlflow_recipe.py``), and live runs of the same recipe."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.fixtures.traces.mlflow import mlflow_recipe as recipe
from tests.formats.oversized import PADDING, lower_limit, skipped
from turnfold.formats import path_format
from turnfold.formats.errors import SampleSelectionError, TranscriptFormatError
from turnfold.model import (
    AssistantError,
    AssistantText,
    SubAgent,
    Thinking,
    Transcript,
    UserMessage,
)
from turnfold.session import session_facts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces" / "mlflow"

TRACE = FIXTURES / "weather-agent_trace.json"
SESSION = FIXTURES / "weather-agent_session.jsonl"
ARTIFACT = FIXTURES / "weather-agent_artifact-traces.json"
#: Traces of runs that raised, and one as a search without spans returns it (error_recipe.py).
CRASH = FIXTURES / "crash-agent_trace.json"
CRASH_NO_SPANS = FIXTURES / "crash-agent_no-spans_trace.json"
MODEL_ERROR = FIXTURES / "model-error_trace.json"


def _texts(transcript: Transcript, kind: type) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, kind)]


def _first_turn(transcript: Transcript) -> None:
    assert _texts(transcript, UserMessage)[0] == recipe.QUESTION
    assert _texts(transcript, Thinking)[0] == recipe.THOUGHT
    weather, stock = transcript.tool_calls()[:2]
    assert (weather.name, weather.args, weather.status) == (
        "get_weather", {"city": "Paris"}, "success"
    )  # fmt: skip
    assert weather.result is not None
    assert weather.result.text == "Sunny in Paris, 21 C"
    assert (stock.name, stock.args, stock.status) == ("get_stock", {"ticker": "ACME"}, "error")
    assert stock.result is not None
    assert stock.result.text == f"RuntimeError: {recipe.STOCK_ERROR}"
    assert weather.batch_id == stock.batch_id  # one response's two calls
    assert recipe.ANSWER_1 in _texts(transcript, AssistantText)


def test_H4_a_trace_json_shows_the_prompt_thinking_calls_outcomes_and_answer() -> None:
    transcript = turnfold.load(TRACE)
    assert transcript.metadata["source_format"] == "mlflow"
    _first_turn(transcript)
    assert transcript.metadata["agent"] == "support_agent"
    assert transcript.metadata["model"] == recipe.MODEL
    assert transcript.metadata["session_id"] == recipe.SESSION
    assert transcript.metadata["user"] == "tf-user"
    assert transcript.metadata["system"] == "You are a support agent."
    assert transcript.warnings == []
    # Each model call's usage once, as the scripted server sent it (its first two responses).
    usages = [e.usage for e in transcript.entries if getattr(e, "usage", None) is not None]
    assert [(u.input_tokens, u.output_tokens) for u in usages] == [(102, 11), (205, 12)]
    assert turnfold.load(TRACE, format="mlflow").entries == transcript.entries


def test_H4_a_session_of_two_traces_is_one_transcript_of_two_turns() -> None:
    transcript = turnfold.load(SESSION)
    assert _texts(transcript, UserMessage) == [recipe.QUESTION, recipe.FOLLOW_UP]
    assert len(transcript.metadata["trace_ids"]) == 2
    _first_turn(transcript)
    ask = transcript.tool_calls()[2]
    assert (ask.name, ask.status) == ("ask_analyst", "success")
    assert ask.result is not None
    assert ask.result.text == recipe.ANALYST_ANSWER
    assert isinstance(ask.subagent, SubAgent)
    assert ask.subagent.name == "analyst"
    assert _texts(ask.subagent.transcript, UserMessage) == [recipe.ANALYST]
    assert _texts(ask.subagent.transcript, AssistantText) == [recipe.ANALYST_ANSWER]
    assert _texts(transcript, AssistantText)[-1] == recipe.ANSWER_2


def test_H4_the_spans_artifact_reads_as_its_trace() -> None:
    transcript = turnfold.load(ARTIFACT)
    assert transcript.entries == turnfold.load(TRACE).entries
    assert transcript.metadata["session_id"].startswith("tr-")  # no trace info: the trace's id


def test_H4_traces_of_two_conversations_are_picked_by_sample() -> None:
    first, second = SESSION.read_text().splitlines()
    other = json.loads(second)
    other["info"]["trace_metadata"]["mlflow.trace.session"] = "TF-OTHER"
    text = first + "\n" + json.dumps(other) + "\n"
    with pytest.raises(SampleSelectionError, match=r"2 conversations.*'TF-SESSION-1', 'TF-OTHER'"):
        turnfold.load(text)
    alone = turnfold.load(text, sample="TF-OTHER")
    # The second trace alone: its prompt, then the history its model call was sent.
    assert _texts(alone, UserMessage) == [recipe.FOLLOW_UP, recipe.QUESTION]
    assert _texts(alone, AssistantText)[-1] == recipe.ANSWER_2
    assert alone.accounting is not None
    assert alone.accounting.counts["span/(other conversation)"]["ignored"] == 5


def test_L4_a_cut_off_trace_file_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_text(TRACE.read_text()[:5000])
    with pytest.raises(TranscriptFormatError, match=r"cut\.json"):
        turnfold.load(cut)


def test_L4_a_damaged_span_is_warned_of_and_the_rest_shown(tmp_path: Path) -> None:
    trace = json.loads(TRACE.read_text())
    stock = next(s for s in trace["data"]["spans"] if s["name"] == "get_stock")
    del stock["span_id"]
    transcript = turnfold.load(json.dumps(trace))
    assert any("span without a trace_id or span_id" in w.reason for w in transcript.warnings)
    assert recipe.ANSWER_1 in _texts(transcript, AssistantText)
    # Its span gone, the call is settled by the tool message of the next model call.
    stock_call = transcript.tool_calls()[1]
    assert (stock_call.name, stock_call.status) == ("get_stock", "error")
    assert stock_call.result is not None
    assert stock_call.result.text == f"Error: {recipe.STOCK_ERROR}"


def test_A3_loading_a_trace_file_imports_no_mlflow() -> None:
    from tests.test_startup import imported_by

    modules = imported_by(f"import turnfold; turnfold.load({str(TRACE)!r})")
    assert not {m for m in modules if m == "mlflow" or m.startswith("mlflow.")}


# --- live: the real mlflow, offline ----------------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, recipe.Run]:
    pytest.importorskip("mlflow")
    folder = tmp_path_factory.mktemp("mlflow")
    return folder, recipe.run(folder)


def test_H4_the_default_sqlite_store_reads_as_the_traces_json(live: tuple[Path, Any]) -> None:
    folder, run = live
    store = folder / "mlflow.db"  # MLflow 3.7+'s default tracking store
    assert store.is_file()
    transcript = turnfold.load(store)
    _first_turn(transcript)
    assert _texts(transcript, UserMessage) == [recipe.QUESTION, recipe.FOLLOW_UP]
    assert transcript.metadata["trace_ids"] == run.trace_ids
    assert transcript.metadata["cost_usd"] > 0
    # U-1: every response's usage counted once, equal to what the scripted server sent.
    usages = [
        e.usage for t in (transcript, *(c.subagent.transcript for c in transcript.tool_calls()
                                         if c.subagent is not None))
        for e in t.entries if getattr(e, "usage", None) is not None
    ]  # fmt: skip
    assert sum(u.input_tokens or 0 for u in usages) == sum(u["prompt_tokens"] for u in run.usages)
    assert sum(u.output_tokens or 0 for u in usages) == sum(
        u["completion_tokens"] for u in run.usages
    )
    assert turnfold.load(store, sample=recipe.SESSION).entries == transcript.entries


def test_X1_a_span_too_long_to_read_is_warned_of_by_its_row_and_the_rest_is_shown(
    live: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row of the store over the record limit is never read whole (SQLite refuses it): the
    span is left out with a warning naming its row and id, the conversation read as it reads
    without that row."""
    lower_limit(monkeypatch)
    folder, _ = live
    store, without = tmp_path / "mlflow.db", tmp_path / "without.db"
    for path in (store, without):
        shutil.copyfile(folder / "mlflow.db", path)
    with contextlib.closing(sqlite3.connect(without)) as db, db:
        db.execute("DELETE FROM spans WHERE name = 'get_stock'")
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        (rowid,) = db.execute("SELECT rowid FROM spans WHERE name = 'get_stock'").fetchone()
        db.execute("UPDATE spans SET content = content || ? WHERE rowid = ?", (PADDING, rowid))
    assert path_format(store) == "mlflow"
    transcript = turnfold.load(store, sample=recipe.SESSION)
    read_without = turnfold.load(without, sample=recipe.SESSION)
    warning, *consequences = transcript.warnings
    assert warning.source == str(store)
    assert warning.reason == skipped(store, "spans", rowid, "content", "span_id")
    assert [w.reason for w in consequences] == [w.reason for w in read_without.warnings]
    assert transcript.entries == read_without.entries
    assert _texts(transcript, UserMessage) == [recipe.QUESTION, recipe.FOLLOW_UP]
    assert transcript.tool_calls()[0].result.text == "Sunny in Paris, 21 C"  # type: ignore[union-attr]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["span"]["warned"] == 1


def test_H4_a_trace_object_its_json_and_a_list_of_traces(live: tuple[Path, Any]) -> None:
    import mlflow

    _, run = live
    traces = [mlflow.get_trace(i) for i in run.trace_ids]
    one = turnfold.load(traces[0])
    assert one.metadata["source_format"] == "mlflow"
    _first_turn(one)
    assert one.entries == turnfold.load(traces[0].to_json()).entries
    both = turnfold.load(traces)
    assert _texts(both, UserMessage) == [recipe.QUESTION, recipe.FOLLOW_UP]
    assert both.entries == turnfold.load("\n".join(t.to_json() for t in traces)).entries
    frame = mlflow.search_traces(locations=None)
    row = frame[frame["trace_id"] == run.trace_ids[0]].iloc[0]
    assert turnfold.load(row["trace"]).entries == one.entries


def test_H4_a_trace_still_running_shows_its_call_as_executing(live: tuple[Path, Any]) -> None:
    import mlflow
    from mlflow.entities import SpanType
    from mlflow.tracing.trace_manager import InMemoryTraceManager

    held: dict[str, Any] = {}

    @mlflow.trace(span_type=SpanType.TOOL)
    def slow_lookup(city: str) -> str:
        trace_id = mlflow.get_active_trace_id()
        with InMemoryTraceManager.get_instance().get_trace(trace_id) as trace:
            held["trace"] = trace.to_mlflow_trace().to_dict()  # as it stands mid-run
        return city

    @mlflow.trace(span_type=SpanType.AGENT)
    def agent(question: str) -> str:
        return slow_lookup(question)

    agent("TF-RUNNING")
    trace = held["trace"]
    assert trace["info"]["state"] == "IN_PROGRESS"
    transcript = turnfold.load(trace)
    call = transcript.tool_calls()[0]
    assert (call.name, call.args) == ("slow_lookup", {"city": "TF-RUNNING"})
    assert call.status == "executing"
    assert _texts(transcript, UserMessage) == ["TF-RUNNING"]


def test_C1_a_scan_of_a_folder_holding_the_store_has_a_row_per_conversation(
    live: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnfold.corpus import scan
    from turnfold.corpus.index import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    folder, _ = live
    store = folder / "mlflow.db"
    corpus = scan(folder, workers=1)
    rows = [row for row in corpus if row["path"] == str(store)]
    assert [(row["key"], row["format"], row["error"]) for row in rows] == [
        (f"{store}#{recipe.SESSION}", "mlflow", None)
    ]
    (row,) = rows
    transcript = turnfold.load(store, sample=recipe.SESSION)
    assert row["turns"] == 2
    assert row["tool_calls"] == len(transcript.tool_calls())
    assert corpus[row["key"]].entries == transcript.entries


# --- runs that raised (error_recipe.py) -----------------------------------------------------


def test_H4_a_trace_whose_tool_raised_through_the_agent_fails_once_and_keeps_its_steps() -> None:
    transcript = turnfold.load(CRASH)
    assert _texts(transcript, UserMessage) == [recipe.QUESTION]
    weather, stock = transcript.tool_calls()
    assert (weather.status, stock.status) == ("success", "error")
    assert stock.result is not None
    assert stock.result.text == f"RuntimeError: {recipe.STOCK_ERROR}"
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == [f"RuntimeError: {recipe.STOCK_ERROR}"]
    assert transcript.metadata["outcome"] == "error"
    facts = session_facts(transcript)
    # The model span's usage, once: the trace's ``mlflow.trace.tokenUsage`` is its sum.
    assert facts.tokens == {"input_tokens": 101, "output_tokens": 11}
    assert facts.cost is not None
    assert facts.cost.recorded
    assert facts.cost_usd == pytest.approx(2.175e-05)


def test_H4_a_trace_of_no_spans_shows_its_previews_and_says_so() -> None:
    """``search_traces(include_spans=False)`` returns each trace's info and no spans: its
    request preview is the prompt, its ``ERROR`` state the failure, at its own time, and a
    warning says the steps are not there, never a load of nothing."""
    transcript = turnfold.load(CRASH_NO_SPANS)
    [prompt, error] = transcript.entries
    assert isinstance(prompt, UserMessage)
    assert prompt.text == recipe.QUESTION
    assert prompt.timestamp == "2026-12-06T00:22:22.973000Z"
    assert isinstance(error, AssistantError)
    assert transcript.metadata["outcome"] == "error"
    assert transcript.metadata["agent"] == "support_agent"
    [warning] = transcript.warnings
    assert "holds no spans" in warning.reason
    assert session_facts(transcript).duration_s == pytest.approx(0.079)


def test_L4_a_trace_file_named_as_mlflow_keeps_its_warnings_and_accounting() -> None:
    """``load(path, format="mlflow")`` (as a corpus opens an item) reads the file itself: what
    that read warned of and counted is the load's, as when the format is detected."""
    for path in (CRASH_NO_SPANS, FIXTURES / "langgraph-v1-blocks_trace.json"):
        detected, named = turnfold.load(path), turnfold.load(path, format="mlflow")
        assert named.warnings == detected.warnings != []
        assert named.accounting is not None
        assert detected.accounting is not None
        assert named.accounting.counts == detected.accounting.counts


def test_H4_a_model_call_that_raised_fails_the_trace() -> None:
    transcript = turnfold.load(MODEL_ERROR)
    assert _texts(transcript, UserMessage) == ["TF-FAIL: the model server is down."]
    assert transcript.tool_calls() == []
    errors = {e.message for e in transcript.entries if isinstance(e, AssistantError)}
    assert errors == {"InternalServerError: Error code: 500 - TF-DOWN: upstream overloaded"}
    assert transcript.metadata["outcome"] == "error"


def test_H4_one_exception_passing_through_two_spans_is_one_error() -> None:
    # The model span and the agent span both record the one exception: one error, not two.
    transcript = turnfold.load(MODEL_ERROR)
    assert sum(isinstance(e, AssistantError) for e in transcript.entries) == 1
