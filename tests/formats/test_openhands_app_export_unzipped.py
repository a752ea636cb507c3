"""The OpenHands app server's export unzipped into a folder, and its responses' usage (spec H-3,
C-1, U-1, U-3).

A user who double-clicks the download (``GET /api/v1/app-conversations/<id>/download``) gets
``conversation_<id>/`` holding ``meta.json`` and ``event_{i:06d}_{id}.json``, or those files
loose in the folder the zip was in: both read as the zip reads, and a scan makes one row of
them. The export has no per-response usage, only the running totals the agent server sends
after each response (``ConversationStateUpdateEvent`` ``stats``): each response's usage is
their difference where that is exact, checked against the same run's SDK folder. The fixture
is the real export of ``test_openhands_app_export.py`` (``export_recipe.py`` beside it).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.corpus import scan
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings

FOLDER = Path(__file__).parents[1] / "fixtures" / "harnesses" / "openhands-app-export"
CONVERSATION = "851dd3ea-cc68-4db8-a392-51e14f833d6a"
EXPORT = FOLDER / f"conversation_{CONVERSATION}.zip"
PERSISTED = FOLDER / "openhands-sdk_v1.58.2_persisted_851dd3eacc684db8a39251e14f833d6a.tar.gz"
#: What a row counts of its conversation, the same however the export is kept.
COUNTS = ("title", "model", "started", "ended", "turns", "tool_calls", "failed_tools", "errors",
          "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
          "cost_usd", "warnings", "error")  # fmt: skip
USAGE = DisplaySettings(show_turn_usage=True, full_detail=True)
#: The place of the stats update the agent server sent after the second response
#: (``chatcmpl-1``) among the export's events.
SECOND_STATS = 8


pytestmark = pytest.mark.usefixtures("cache_dir")


def _unzipped(into: Path) -> Path:
    """The export as unzipping the download leaves it (the fixture's members are its own)."""
    into.mkdir(parents=True)
    with zipfile.ZipFile(EXPORT) as download:
        download.extractall(into)
    return into


def _events(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """The export's events in its order, each with its id (from its file's name)."""
    return [(path.name[len("event_000000_") : -len(".json")], json.loads(path.read_text()))
            for path in sorted(folder.glob("event_*.json"))]  # fmt: skip


def _exported(path: Path, events: list[tuple[str, dict[str, Any]]]) -> Path:
    """The app server's export of ``events``: ``meta.json``, then each event numbered in its
    order, as ``_stream_conversation_zip`` names them (``event_{i:06d}_{event.id}.json``)."""
    with zipfile.ZipFile(EXPORT) as download, zipfile.ZipFile(path, "w") as export:
        export.writestr("meta.json", download.read("meta.json"))
        for index, (event_id, event) in enumerate(events):
            export.writestr(f"event_{index:06d}_{event_id}.json", json.dumps(event, indent=2))
    return path


def _row(corpus: Any) -> dict[str, Any]:
    (row,) = corpus.rows
    return {name: row[name] for name in COUNTS}


def _zip_row() -> dict[str, Any]:
    return _row(scan(EXPORT, workers=1, cache=False))


def _usages(transcript: turnfold.Transcript) -> list[tuple[str, Any, Any]]:
    """Each entry's usage and the model it is priced by (a text's field, else its meta)."""
    return [
        (type(entry).__name__, getattr(entry, "usage", None),
         getattr(entry, "model", None) or entry.meta.get("model"))
        for entry in transcript.entries
    ]  # fmt: skip


def _turn_headers(transcript: turnfold.Transcript) -> list[str]:
    view = build_view_model(transcript, USAGE)
    return [node["header"]["text"] for node in iter_nodes(view) if node["kind"] == "turn"]


# --- an export unzipped into a folder -------------------------------------------------------


def test_H3_an_export_unzipped_into_its_folder_loads_as_the_zip(tmp_path: Path) -> None:
    folder = _unzipped(tmp_path / f"conversation_{CONVERSATION}")
    exported = turnfold.load(EXPORT)
    for given in (folder, folder / "meta.json", sorted(folder.glob("event_*.json"))[6]):
        transcript = turnfold.load(given)
        assert transcript.entries == exported.entries, given
        assert transcript.metadata == exported.metadata, given
        assert transcript.warnings == [], given
        assert transcript.accounting == exported.accounting, given


def test_H3_an_export_s_files_loose_in_a_folder_load_as_the_zip(tmp_path: Path) -> None:
    """Unzipped where the zip lay, with no folder of its own; without its meta.json too (its
    first event file then stands for it), then without the title meta.json gives."""
    loose = _unzipped(tmp_path / "downloads")
    exported = turnfold.load(EXPORT)
    assert turnfold.load(loose).entries == exported.entries
    (loose / "meta.json").unlink()
    alone = turnfold.load(loose)
    assert alone.entries == exported.entries
    assert "title" not in alone.metadata
    assert alone.metadata["usage"] == exported.metadata["usage"]  # the state's stats say it


def test_C1_a_scan_finds_an_unzipped_export_as_one_row(tmp_path: Path) -> None:
    """One row, its meta.json's (every event file was a row of its own), counted as the zip's
    row is; the key opens the whole export."""
    folder = _unzipped(tmp_path / "runs" / f"conversation_{CONVERSATION}")
    corpus = scan(tmp_path / "runs", workers=1, cache=False)
    assert [(row["key"], row["format"]) for row in corpus.rows] == [
        (str(folder / "meta.json"), "openhands-sdk")
    ]
    assert (_row(corpus), corpus.skipped) == (_zip_row(), 0)
    assert corpus[str(folder / "meta.json")].entries == turnfold.load(EXPORT).entries


def test_C1_a_scan_of_an_export_s_files_named_one_by_one_is_one_row(tmp_path: Path) -> None:
    """A list or glob of its files: its event files are read with the file that stands for the
    export, never rows of their own."""
    folder = _unzipped(tmp_path / "downloads")
    named = scan(sorted(str(p) for p in folder.iterdir()), workers=1, cache=False)
    assert _row(named) == _zip_row()
    (folder / "meta.json").unlink()
    first = sorted(folder.glob("event_*.json"))[0]
    globbed = scan(str(folder / "event_*.json"), workers=1, cache=False)
    assert [row["key"] for row in globbed.rows] == [str(first)]
    assert (globbed.rows[0]["tool_calls"], globbed.rows[0]["input_tokens"]) == (3, 4600)


def test_C1_the_walk_goes_on_beside_a_loose_export(tmp_path: Path) -> None:
    """Loose files do not make their folder the export's alone: another run in a folder beside
    them is a row of its own."""
    loose = _unzipped(tmp_path / "downloads")
    other = loose / "runs" / "chat.json"
    other.parent.mkdir()
    other.write_text(json.dumps([{"role": "user", "content": "hi"},
                                 {"role": "assistant", "content": "hello"}]))  # fmt: skip
    corpus = scan(loose, workers=1, cache=False)
    assert [(row["key"], row["format"]) for row in corpus.rows] == [
        (str(loose / "meta.json"), "openhands-sdk"),
        (str(other), "openai"),
    ]
    assert corpus.rows[0]["tool_calls"] == 3


# --- each response's usage, from the running totals ------------------------------------------


def test_U1_an_export_s_responses_carry_their_usage_as_the_sdk_folder_s_do() -> None:
    """Each of the four responses' usage is the difference of the stats updates around it, on
    the entry the SDK folder's load puts it on, with its model; the turn's header shows its
    tokens, not "tokens not recorded per turn"."""
    exported = turnfold.load(EXPORT)
    persisted = turnfold.load(PERSISTED)
    assert _usages(exported) == _usages(persisted)
    assert [usage.response_id for _, usage, _ in _usages(exported) if usage is not None] == [
        "chatcmpl-0", "chatcmpl-1", "chatcmpl-2", "chatcmpl-3",
    ]  # fmt: skip
    assert _turn_headers(exported) == _turn_headers(persisted)
    assert "tokens not recorded per turn" not in _turn_headers(exported)[0]
    assert exported.warnings == []


def test_U1_a_lost_stats_update_leaves_the_usage_to_the_total_and_says_so(tmp_path: Path) -> None:
    """The update after the second response never reached the app server: the first two
    responses' events follow one update, and the next update's difference is two responses'
    (more than its ``per_turn_token``, the last response's), so three are not told apart. No
    response carries usage then (the turn's header would show the fourth's as the turn's); the
    session's total is whole, the header says tokens are not recorded per turn, a warning
    says why."""
    events = _events(_unzipped(tmp_path / "download"))
    assert events[SECOND_STATS][1]["key"] == "stats"
    lost = events[:SECOND_STATS] + events[SECOND_STATS + 1 :]
    transcript = turnfold.load(_exported(tmp_path / "lost.zip", lost))
    assert [usage for _, usage, _ in _usages(transcript) if usage is not None] == []
    assert transcript.metadata["usage"] == turnfold.load(PERSISTED).metadata["usage"]
    assert [w.reason for w in transcript.warnings] == [
        "3 of 4 model responses not told apart by the export's running totals (a stats "
        "update missing or shared): no response carries its usage; the session's total counts "
        "them all"
    ]
    assert _turn_headers(transcript)[0].endswith("tokens not recorded per turn")


def test_U1_an_update_no_response_follows_is_counted_in_the_total_only(tmp_path: Path) -> None:
    """A condenser's response sends stats too (its own use of an LLM), and makes no event of a
    response: its usage goes on no entry, and the agent's responses keep theirs."""
    events = _events(_unzipped(tmp_path / "download"))
    totals = {"prompt_tokens": 500, "completion_tokens": 50, "cache_read_tokens": 0,
              "cache_write_tokens": 0, "reasoning_tokens": 0, "per_turn_token": 550}  # fmt: skip
    condenser = {"model_name": "openai/scripted-model", "accumulated_token_usage": totals}
    at = SECOND_STATS + 2  # after the second response's observation
    changed: list[tuple[str, dict[str, Any]]] = []
    for index, (event_id, event) in enumerate(events):
        if index == at:
            before = json.loads(json.dumps(events[at - 2][1]))
            before["value"]["usage_to_metrics"]["condenser"] = condenser
            before["id"] = "00000000-0000-4000-8000-000000000001"
            before["timestamp"] = event["timestamp"]
            changed.append((before["id"], before))
        if index >= at and event.get("key") == "stats":
            event = json.loads(json.dumps(event))
            event["value"]["usage_to_metrics"]["condenser"] = condenser
        changed.append((event_id, event))
    transcript = turnfold.load(_exported(tmp_path / "condensed.zip", changed))
    assert transcript.warnings == []
    assert _usages(transcript) == _usages(turnfold.load(PERSISTED))
    assert transcript.metadata["usage"]["input_tokens"] == 4600 + 500


def test_U1_an_update_with_no_totals_before_it_is_not_differenced_from_nothing(
    tmp_path: Path,
) -> None:
    """Without the full_state the agent server sends first, the first update's totals may hold
    more than one response: that response is not told apart."""
    events = _events(_unzipped(tmp_path / "download"))
    assert events[0][1]["key"] == "full_state"
    transcript = turnfold.load(_exported(tmp_path / "no-state.zip", events[1:]))
    assert [usage for _, usage, _ in _usages(transcript) if usage is not None] == []
    assert [w.reason.split(" (")[0] for w in transcript.warnings] == [
        "1 of 4 model responses not told apart by the export's running totals"
    ]
