"""An MLflow span without a start time keeps its place (spec H-4): real traces, made by the real
mlflow (``tests/fixtures/traces/mlflow/mlflow_recipe.py``: ``mlflow.openai.autolog()`` and
``@mlflow.trace`` tools against a scripted server, MLflow's default local store), each span's
``start_time_unix_nano`` taken out in turn.

MLflow writes a trace's spans in the order they started (``_Trace.to_mlflow_trace`` lists
``span_dict``, filled by ``register_span`` as each span starts: mlflow/tracing/trace_manager.py,
mlflow/tracing/processor/base_mlflow.py ``on_start``), a parent before its children."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import turnfold
from tests.fixtures.traces.mlflow import mlflow_recipe as recipe
from turnfold.model import ToolCall, Transcript


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The recipe's two traces of one session, each as ``Trace.to_dict()`` writes it."""
    pytest.importorskip("mlflow")
    run = recipe.run(tmp_path_factory.mktemp("mlflow"))
    import mlflow

    return [mlflow.get_trace(trace_id).to_dict() for trace_id in run.trace_ids]


def _shown(transcript: Transcript) -> list[Any]:
    """What a reader sees of each entry, in order, times aside (a span without a start has no
    time to give): its kind, text or name, a call's status, result and sub-agent's entries."""
    shown: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            inner = entry.subagent.transcript if entry.subagent is not None else None
            nested = _shown(inner) if inner is not None else None
            shown.append(("call", entry.name, entry.status, result, nested))
        else:
            shown.append((type(entry).__name__, getattr(entry, "text", None)))
    return shown


def _load(traces: list[dict[str, Any]]) -> Transcript:
    return turnfold.load("\n".join(json.dumps(trace) for trace in traces))


def _startless(traces: list[dict[str, Any]], trace: int, span: int) -> list[dict[str, Any]]:
    changed = copy.deepcopy(traces)
    del changed[trace]["data"]["spans"][span]["start_time_unix_nano"]
    return changed


def test_H4_the_recipe_s_traces_nest_calls_and_a_sub_agent(traces: list[dict[str, Any]]) -> None:
    """The intact session, the reference the changed ones are compared with below."""
    shown = _shown(_load(traces))
    calls = [item for item in shown if item[0] == "call"]
    assert [(name, status) for _, name, status, _, _ in calls] == [
        ("get_weather", "success"),
        ("get_stock", "error"),
        ("ask_analyst", "success"),
    ]
    assert calls[0][3] == "Sunny in Paris, 21 C"
    assert calls[2][4] is not None  # the analyst agent, a sub-agent of its call
    assert [item[1] for item in shown if item[0] == "UserMessage"] == [
        recipe.QUESTION,
        recipe.FOLLOW_UP,
    ]


def test_H4_a_span_without_a_start_time_keeps_its_place(traces: list[dict[str, Any]]) -> None:
    intact = _shown(_load(traces))
    moved = []
    for trace, whole in enumerate(traces):
        for span, raw in enumerate(whole["data"]["spans"]):
            if _shown(_load(_startless(traces, trace, span))) != intact:
                moved.append(f"trace {trace + 1}, span {span} {raw['name']}")
    assert moved == []
