"""The command line's hint for a file of many runs names the first run's real key, as a scan
keys it, and the command it prints runs as written (spec W-6, L-4): it named the first
sample of an eval log only, and said ``FILE#ID`` for every database of sessions and every
dataset, a command that fails as written.

The sources are the real tools' (``tests/formats/many_sessions.py``, tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

import turnfold
from tests.formats.many_sessions import (
    ADK,
    AGENTS_SDK,
    AGNO,
    BATCH_OUTPUT,
    CRUSH,
    FIXTURES,
    LANGGRAPH,
    mlflow_of_two,
    opencode_of_two,
)
from turnfold.cli import main

DATASETS = FIXTURES / "datasets"

#: Each source of many runs, and what its first run is.
SOURCES: list[tuple[str, Callable[[Path], Path], str]] = [
    ("crush", lambda _: CRUSH, "session"),
    ("opencode", opencode_of_two, "session"),
    ("adk", lambda _: ADK, "session"),
    ("agno", lambda _: AGNO, "session"),
    ("agents-sdk", lambda _: AGENTS_SDK, "session"),
    ("langgraph", lambda _: LANGGRAPH, "session"),
    ("mlflow", mlflow_of_two, "session"),
    ("dataset", lambda _: DATASETS / "llama-factory_v1_sft-demo_three-rows.jsonl", "run"),
    ("batch", lambda _: BATCH_OUTPUT, "run"),
    ("dspy-json", lambda _: DATASETS / "dspy_v3.4.1_evaluate-save-as-json.json", "run"),
    ("dspy-csv", lambda _: DATASETS / "dspy_v3.4.1_evaluate-save-as-csv.csv", "run"),
    (
        "arrow",
        lambda _: DATASETS / "verifiers_math-python_two-rows_save-to-disk"
        / "data-00000-of-00001.arrow",
        "run",
    ),
]  # fmt: skip


pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.mark.parametrize(
    ("make", "what"), [source[1:] for source in SOURCES], ids=[source[0] for source in SOURCES]
)
def test_W6_the_hint_of_a_file_of_many_runs_names_its_first_key_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Path], what: str
) -> None:
    path = make(tmp_path)
    first = turnfold.scan(path, workers=1, cache=False).keys[0]
    assert main(["show", str(path)]) == 2
    said = capsys.readouterr().err
    assert f"{path}#ID" not in said
    command = re.search(r"; to show one: (turnfold show .+?) \(its first (\w+);", said)
    assert command is not None, said
    assert command.group(2) == what
    assert shlex.split(command.group(1)) == ["turnfold", "show", first]
    assert main(["render", str(path)]) == 2
    assert f"or for one: turnfold render {shlex.quote(first)} (its first" in capsys.readouterr().err
    # The command runs as written: the first run, shown.
    assert main(["show", first]) == 0
    assert capsys.readouterr().out.strip()
