"""A hit in a later part of a large file of many runs opens its own run (C-6, C-1, B-1).

A large file of runs in JSON lines, or an OpenHands eval ``output.jsonl``, is searched in the
parts a scan reads it in. A part numbers its records from 0 and its hits are renumbered after
the records of the parts before it; an instance met again in a later part has no hits (the
first is the row). A part stops reading at the search's limit, so it counted only the records
and instances it read; when some of its hits were then left out (a run whose row is an error,
an instance met in an earlier part), the search went on to the next part, numbered after too
few records, or not knowing the instances met after the stop: its hits were keyed by another
run than their own, and ``corpus[hit.key]`` (the browser's open) showed a run without the text.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.table_runs import eval_instance, rollouts_saying
from turnfold import browser as browser_module
from turnfold.corpus import Corpus, Item, runs
from turnfold.corpus.search import SearchHit
from turnfold.corpus.summarize import runs_parts
from turnfold.model import AssistantText, UserMessage

QUERY = "zeta"
#: The module (``turnfold.corpus.summarize`` is also the function of that name).
summarize_module = importlib.import_module("turnfold.corpus.summarize")

pytestmark = pytest.mark.usefixtures("cache_dir")


def _first_lines(path: Path) -> list[int]:
    """The line each part of ``path`` begins at, as a scan's workers share it."""
    parts = runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) or []
    return [part.part.line for part in parts if isinstance(part.part, runs.Span)]


def _assert_each_hit_opens_its_run(corpus: Corpus, hits: list[SearchHit]) -> None:
    """Each hit's key opens the run that holds the text it shows, at the entry it names."""
    for hit in hits:
        entry = corpus[hit.key].get(hit.entry_id)
        assert isinstance(entry, (UserMessage, AssistantText)), hit
        assert QUERY in entry.text, (hit.key, hit.snippet, entry.text)
        assert hit.snippet in entry.text


def _resumed_output(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An eval output whose run was resumed, ``a`` and ``f`` written again, in parts of four
    lines: the second holds ``a`` again and ``c`` (both matching: a limit of 2 is met there,
    reading ``d``) and then ``f``; the third holds ``f`` again, which alone of the two
    matches."""
    prompts = [("a", "mild run a"), ("b", "mild run b"), ("x", "mild run x"),
               ("y", "mild run y"), ("a", "zeta run a"), ("c", "zeta run c"),
               ("d", "mild run d"), ("f", "mild run f"), ("f", "zeta run f"),
               ("g", "zeta run g"), ("z", "mild run z"), ("w", "mild run w")]  # fmt: skip
    lines = [eval_instance(f"task-{name}", prompt) for name, prompt in prompts]
    assert len({len(line) for line in lines}) == 1  # parts of whole lines, four each
    output = folder / "output.jsonl"
    output.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    monkeypatch.setattr(runs, "SPAN_BYTES", 4 * (len(lines[0]) + 1) - 1)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    assert _first_lines(output) == [1, 5, 9]
    return output


def test_C6_an_instance_met_again_after_a_part_stopped_at_the_limit_keeps_no_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An eval run resumed writes an instance again (``load(path, sample=ID)`` and the scan's
    row read the first). The second part said it met ``a``, ``c`` and ``d`` only, so ``f``
    again was keyed ``#f``: the first ``f``, which holds no such text; at a limit of 1, ``c``
    was lost too."""
    output = _resumed_output(tmp_path, monkeypatch)
    whole = turnfold.scan(output, workers=1, cache=False)
    expected = whole.search(QUERY, limit=1000)
    assert [hit.key for hit in expected] == [f"{output}#task-{n}" for n in ("c", "g")]
    split = turnfold.scan(output, workers=2, cache=False)
    assert split.to_arrow().equals(whole.to_arrow())
    for limit in (1, 2, 3, 1000):
        hits = split.search(QUERY, limit=limit)
        _assert_each_hit_opens_its_run(split, hits)
        assert hits == expected[:limit], limit


def test_C6_a_run_whose_row_is_an_error_in_a_part_stopped_at_the_limit_shifts_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run its reader reads but the projection cannot take is a row with its error (C-7:
    ``summarize._summarized``), and a search leaves its hits out. Parts of three records: the
    second holds run 3 (that row) and run 4, both matching, so a limit of 2 stops it before
    run 5; run 3's hit left out, the search went on, the parts after it numbered from 5, not
    6: run 9's hit was keyed ``#8``, which opens run 8."""
    path = rollouts_saying(tmp_path, "zeta", (3, 4, 9))
    real = summarize_module._summary

    def refusing(transcript: Any, *args: Any) -> Any:
        if any(getattr(entry, "text", None) == "Done with task 3, zeta."
               for entry in transcript.entries):  # fmt: skip
            raise ValueError("this run's projection failed")
        return real(transcript, *args)

    monkeypatch.setattr(summarize_module, "_summary", refusing)
    first = len(path.read_text(encoding="utf-8").splitlines()[0]) + 1
    monkeypatch.setattr(runs, "SPAN_BYTES", 3 * first - 10)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 1)
    assert _first_lines(path) == [1, 4, 7, 10]
    split = turnfold.scan(path, workers=2, cache=False)  # too little work: read here, patched
    assert split.errors == 1
    assert "projection failed" in split.rows[3]["error"]
    readable = [f"{path}#4", f"{path}#9"]
    for limit in (2, 3, 1000):
        hits = split.search(QUERY, limit=limit)
        _assert_each_hit_opens_its_run(split, hits)
        assert [hit.key for hit in hits] == readable


def test_B1_a_hit_of_a_later_part_opens_its_run_in_the_session_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The browser lists the hits of a search with its own limit, and opening one (the view's
    ``open`` request) shows the run its key names under the table."""
    output = _resumed_output(tmp_path, monkeypatch)
    monkeypatch.setattr(browser_module, "HIT_LIMIT", 2)
    browser = browser_module.SessionBrowser(turnfold.scan(output, workers=2, cache=False))
    try:
        browser.search(QUERY)
        for thread in threading.enumerate():
            if thread.name == "turnfold-browser-search":
                thread.join()
        assert browser._hits is not None
        listed = browser._hits["hits"]
        assert [hit["key"] for hit in listed] == [f"{output}#task-{n}" for n in ("c", "g")]
        for hit in listed:
            browser._on_view_message(browser, {"type": "open", "key": hit["key"],
                                               "entry": hit["entry"]}, [])  # fmt: skip
            assert browser.selected == hit["key"]
            entry = browser.transcript_widget.transcript.get(hit["entry"])
            assert isinstance(entry, UserMessage)
            assert entry.text == hit["snippet"]
    finally:
        browser.close()
