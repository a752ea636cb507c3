"""Tables of runs as a scan takes them, for the tests of runs split over columns
(tests/test_corpus_prompt_completion.py, tests/test_corpus_preference_tables.py), the short
trajectory the tests of files and tables of runs fill them with, and the files of runs and eval
instances the search tests make of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def table_source(kind: str, folder: Path, rows: list[dict[str, Any]], name: str) -> Any:
    """``rows`` as a pyarrow Table, a pandas DataFrame, or a Parquet file ``name`` in
    ``folder`` (its path)."""
    table = pa.Table.from_pylist(rows)
    if kind == "arrow":
        return table
    if kind == "pandas":
        return table.to_pandas()
    path = folder / name
    pq.write_table(table, path)
    return path


def trajectory(i: int) -> list[dict[str, Any]]:
    """A short Chat Completions trajectory with one tool call, the ``i``-th of a table."""
    arguments = json.dumps({"command": f"ls {i}"})
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "bash", "arguments": arguments}}  # fmt: skip
    return [
        {"role": "user", "content": f"Task {i}: list the files"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": f"file_{i}.py"},
        {"role": "assistant", "content": f"Done with task {i}."},
    ]


def rollouts_saying(folder: Path, word: str, saying: tuple[int, ...]) -> Path:
    """``rollouts.jsonl`` in ``folder``: twelve runs a line (``task_id``, ``messages``), those
    at the places ``saying`` ending with ``word`` (a search's query)."""
    rows = []
    for i in range(12):
        messages = trajectory(i)
        if i in saying:
            messages[-1] = {**messages[-1], "content": f"Done with task {i}, {word}."}
        rows.append({"task_id": f"t{i}", "messages": messages})
    path = folder / "rollouts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


#: A hand-made OpenHands eval output (tests/fixtures/SOURCES.md): its first instance is the
#: base of each instance :func:`eval_instance` makes, its prompt replaced.
EVAL_OUTPUT = (
    Path(__file__).parent / "fixtures" / "harnesses" / "openhands"
    / "openhands_output-jsonl_hand-made_delegate-and-errors.jsonl"
)  # fmt: skip
EVAL_PROMPT = "Fix the failing test in calc.py"


def eval_instance(instance_id: str, prompt: str) -> str:
    """A line of an OpenHands eval output: the instance ``instance_id``, asked ``prompt``."""
    base = EVAL_OUTPUT.read_text(encoding="utf-8").splitlines()[0]
    assert EVAL_PROMPT in base
    record = json.loads(base.replace(EVAL_PROMPT, prompt))
    record["instance_id"] = instance_id
    return json.dumps(record)
