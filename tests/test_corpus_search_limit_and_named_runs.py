"""A search across runs keeps to its limit honestly, and a file of runs some of which are named
is read in parts as load names its runs (C-6, C-7, C-5).

A file searched whole (too small to cut, or read by one worker) stopped reading at the limit,
counting toward it the hits of runs whose rows are errors, which the search then left out: it
gave fewer hits than the limit where more existed (``limit=2`` gave ``[#4]``, not
``[#4, #9]``).

A file of runs whose first record names no run (a dataset's row) but whose later records are
OpenAI Batch API lines, each named by its ``custom_id``, is cut into parts by a scan (its
first records decide that). A part keyed those runs by their names, and the scan, renumbering
each part's keys after the parts before it, failed on them (``'task-5'`` is no number), as did
a search of the file (``int('task-5')``). Named runs keep their names (``path#<custom_id>``),
the others their places (``path#n``), as ``load(path, sample=...)`` reads them.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import eval_instance, rollouts_saying, trajectory
from turnfold.corpus import Corpus, Item, runs
from turnfold.corpus.search import SearchHit
from turnfold.corpus.summarize import runs_parts
from turnfold.model import AssistantText, ToolCall, UserMessage

QUERY = "zeta"
#: The module (``turnfold.corpus.summarize`` is also the function of that name).
summarize_module = importlib.import_module("turnfold.corpus.summarize")
DATASETS = Path(__file__).parent / "fixtures" / "datasets"
#: Generated with the real types of openai 3.57.0 (tests/fixtures/SOURCES.md).
BATCH_INPUT = DATASETS / "openai-3.57.0_batch_chat_input.jsonl"
BATCH_OUTPUT = DATASETS / "openai-3.57.0_batch_chat_output.jsonl"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _assert_each_hit_opens_its_run(corpus: Corpus, hits: list[SearchHit]) -> None:
    """Each hit's key opens the run that holds the text it shows, at the entry it names."""
    for hit in hits:
        entry = corpus[hit.key].get(hit.entry_id)
        assert isinstance(entry, (UserMessage, AssistantText, ToolCall)), hit
        said = entry.text if not isinstance(entry, ToolCall) else json.dumps(entry.args)
        assert QUERY in said.lower(), (hit.key, hit.snippet, said)
        assert isinstance(entry, ToolCall) or hit.snippet in said


def _refusing(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """The projection fails on the run that says ``text``: its row is an error (C-7,
    ``summarize._summarized``), though a search reads the run itself."""
    real = summarize_module._summary

    def refusing(transcript: Any, *args: Any) -> Any:
        if any(text in (getattr(entry, "text", None) or "") for entry in transcript.entries):
            raise ValueError("this run's projection failed")
        return real(transcript, *args)

    monkeypatch.setattr(summarize_module, "_summary", refusing)


# --- 1. a file searched whole counts only the hits it keeps toward the limit -------------------


def _rollouts(folder: Path) -> Path:
    """Twelve runs; runs 3, 4 and 9 say the query, run 3 first among them."""
    return rollouts_saying(folder, "zeta", (3, 4, 9))


@pytest.mark.parametrize("workers", [1, 2])
def test_C6_a_file_searched_whole_gives_the_limit_when_a_hit_of_an_error_row_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Run 3's row is an error, so its hit is left out: at a limit of 2 the file stopped after
    runs 3 and 4 and gave run 4's alone, though run 9 holds the query too. With one worker,
    or a file too small to cut (two workers), the file is searched whole."""
    path = _rollouts(tmp_path)
    _refusing(monkeypatch, "Done with task 3, zeta.")
    corpus = turnfold.scan(path, workers=workers, cache=False)
    assert runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) is None
    assert corpus.errors == 1
    assert "projection failed" in corpus.rows[3]["error"]
    readable = [f"{path}#4", f"{path}#9"]
    for limit in (1, 2, 3, 1000):
        hits = corpus.search(QUERY, limit=limit)
        _assert_each_hit_opens_its_run(corpus, hits)
        assert [hit.key for hit in hits] == readable[:limit], limit


def test_C6_a_file_searched_whole_searches_on_past_many_hits_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More hits left out than the limit, before the one kept: the search reads on until it
    has the limit or the file ends."""
    rows = []
    for i in range(30):
        messages = trajectory(i)
        said = "broken" if i < 25 else "kept"
        if i % 2 or i >= 25:
            messages[-1] = {**messages[-1], "content": f"Done with task {i}, zeta {said}."}
        rows.append({"messages": messages})
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    _refusing(monkeypatch, "zeta broken")
    corpus = turnfold.scan(path, workers=1, cache=False)
    assert corpus.errors == 12
    for limit in (1, 3, 5, 6):
        hits = corpus.search(QUERY, limit=limit)
        _assert_each_hit_opens_its_run(corpus, hits)
        assert [hit.key for hit in hits] == [f"{path}#{i}" for i in range(25, 30)][:limit]


def test_C6_an_eval_output_searched_whole_gives_the_limit_past_an_instance_whose_row_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OpenHands eval output read whole: instance ``b``'s row is an error, so its hit is
    left out, and a limit of 1 gave nothing, not ``d``'s."""
    prompts = [("a", "mild run a"), ("b", "zeta run b"), ("c", "mild run c"),
               ("d", "zeta run d"), ("e", "zeta run e")]  # fmt: skip
    output = tmp_path / "output.jsonl"
    output.write_text("".join(eval_instance(f"task-{n}", p) + "\n" for n, p in prompts),
                      encoding="utf-8")  # fmt: skip
    _refusing(monkeypatch, "zeta run b")
    corpus = turnfold.scan(output, workers=1, cache=False)
    assert [row["key"] for row in corpus.rows if row["error"]] == [f"{output}#task-b"]
    readable = [f"{output}#task-d", f"{output}#task-e"]
    for limit in (1, 2, 1000):
        hits = corpus.search(QUERY, limit=limit)
        _assert_each_hit_opens_its_run(corpus, hits)
        assert [hit.key for hit in hits] == readable[:limit], limit


# --- 2. a file of runs whose later records name their runs, read in parts ---------------------


def _named_later(folder: Path) -> tuple[Path, list[str]]:
    """A dataset's rows (``{"messages": [...]}``, unnamed: keyed by their places, each with a
    tool call) and, at odd places, OpenAI Batch API lines, each named by its ``custom_id``
    (``task-n``; the one at place 9 is named ``5``, digits, as a ``custom_id`` may be): input
    lines, and output lines whose answer is a tool call. The first record is a row. Each says
    ``zeta``. The lines' shape is the real one of the fixtures (their weather lines, the
    question or the city replaced). The keys a scan gives their rows, in order."""
    asked = json.loads(BATCH_INPUT.read_text(encoding="utf-8").splitlines()[0])
    answered = json.loads(BATCH_OUTPUT.read_text(encoding="utf-8").splitlines()[1])
    assert asked["custom_id"] == answered["custom_id"] == "task-weather"
    records: list[dict[str, Any]] = []
    keys = []
    for i in range(16):
        if i % 2 == 0:
            messages = trajectory(i)
            messages[0] = {"role": "user", "content": f"Task {i}: list the zeta files"}
            records.append({"messages": messages})
            keys.append(str(i))
            continue
        line = json.loads(json.dumps(asked if i % 4 == 1 else answered))
        if i % 4 == 1:
            line["body"]["messages"][1]["content"] = f"Question {i}: what is zeta {i}?"
        else:
            choice = line["response"]["body"]["choices"][0]
            choice["message"]["tool_calls"][0]["function"]["arguments"] = json.dumps(
                {"city": f"Zeta {i}"}
            )
        line["custom_id"] = "5" if i == 9 else f"task-{i}"
        records.append(line)
        keys.append(line["custom_id"])
    path = folder / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path, [f"{path}#{key}" for key in keys]


def _cut(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Parts of about three records: the line each begins at."""
    monkeypatch.setattr(runs, "SPAN_BYTES", path.stat().st_size // 6)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) or []
    return [part.part.line for part in parts if isinstance(part.part, runs.Span)]


def test_C6_C5_a_file_of_runs_named_after_its_first_record_is_scanned_and_searched_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, keys = _named_later(tmp_path)
    whole = turnfold.scan(path, workers=1, cache=False)
    assert [row["key"] for row in whole.rows] == keys
    assert whole.errors == 0
    # As load names them: a named run by its custom_id alone, any other by its place.
    assert turnfold.load(path, sample="5").entries[0].text == "Question 9: what is zeta 9?"
    assert turnfold.load(path, sample=8).entries[0].text == "Task 8: list the zeta files"
    called = whole.tool_calls().select(["key", "name"]).to_pylist()
    assert {row["key"] for row in called} == {k for i, k in enumerate(keys) if i % 4 != 1}
    assert {row["name"] for row in called} == {"bash", "get_weather"}
    expected = whole.search(QUERY, limit=1000)
    assert [hit.key for hit in expected] == keys
    lines = _cut(path, monkeypatch)
    assert len(lines) >= 4, lines
    assert lines[0] == 1
    split = turnfold.scan(path, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    assert split.tool_calls().equals(whole.tool_calls())
    for limit in (1, 2, 5, 9, 1000):
        hits = split.search(QUERY, limit=limit)
        _assert_each_hit_opens_its_run(split, hits)
        assert hits == expected[:limit], limit
