"""A fast-model label names the calls it covers by their entry ids (spec S-1, S-6), so two
batches of one call id labelled after both finished each keep their own label: in the
transcript, through a dump and a reload, in the planner and the widget as labels arrive.

On ``inspect-relabel/relabel_mockllm.eval``, written by the real ``inspect_ai`` 0.3.285
(``relabel_recipe.py``): a sample retried after its first attempt crashed, each attempt a
successful ``lookup`` of the call id ``twice-lookup`` (results ``alpha``, then ``beta``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import turnfold
from turnfold.batches import label_for, labels_by_call
from turnfold.model import ToolCall, ToolUseSummary, Transcript, UserMessage
from turnfold.process import ProjectionPlanner, Turn, project
from turnfold.recording import Recorder
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings
from turnfold.summaries.prompt import SummaryRequest
from turnfold.summaries.scheduler import TranscriptLabeller
from turnfold.widget import TranscriptWidget

RELABEL = Path(__file__).parent / "fixtures" / "harnesses" / "inspect-relabel"
RETRIED = RELABEL / "relabel_mockllm.eval"
SETTINGS = DisplaySettings()  # the feature on; the model is the callable below
NO_ENV: dict[str, str] = {}
WORDS = ("Looked up alpha", "Looked up beta")


def clock() -> str:
    return "2026-01-01T00:00:00Z"


def fast_model(request: SummaryRequest) -> str:
    """Labels a batch by the page its lookup found, so each label says which batch it is for."""
    return WORDS[0] if "page alpha" in request.prompt else WORDS[1]


def _retried() -> Transcript:
    transcript = turnfold.load(RETRIED, sample="twice", epoch=1)
    assert transcript.warnings == []
    return transcript


def _lookups(transcript: Transcript) -> list[ToolCall]:
    calls = [c for c in transcript.tool_calls() if c.name == "lookup"]
    assert [(c.call_id, c.status) for c in calls] == [("twice-lookup", "success")] * 2
    return calls


def _label_existing(transcript: Transcript) -> list[ToolUseSummary]:
    labeller = TranscriptLabeller(
        transcript, fast_model, settings=SETTINGS, environ=NO_ENV, clock=clock
    )
    try:
        futures = labeller.label_existing()
        assert labeller.wait(10)
    finally:
        labeller.close()
    return [summary for future in futures if (summary := future.result()) is not None]


def _shown(turns: list[Turn]) -> list[list[str]]:
    """The labels each turn's process shows."""
    return [[w for w in WORDS if w in repr(turn.process)] for turn in turns]


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


def _batch_labels(view: Mapping[str, Any]) -> list[Any]:
    """The ``● label`` line of every batch the view draws, in transcript order."""
    return [node.get("label") for node in iter_nodes(view) if node["kind"] == "batch"]


# --- the labeller ----------------------------------------------------------------------------


def test_S1_S6_two_attempts_of_one_call_id_labelled_after_both_keep_their_own_labels() -> None:
    transcript = _retried()
    first, second = _lookups(transcript)
    added = _label_existing(transcript)
    # Both batches are labelled (S-1: once per batch), each naming its own call.
    assert sorted((s.label, s.call_ids, s.entry_ids) for s in added) == [
        (WORDS[0], ["twice-lookup"], [first.id]),
        (WORDS[1], ["twice-lookup"], [second.id]),
    ]
    assert all(s in transcript.entries for s in added)
    labels = labels_by_call(transcript.entries)
    assert [getattr(label_for([c], labels), "label", None) for c in (first, second)] == [*WORDS]
    assert _shown(_turns(transcript)) == [[WORDS[0]], [WORDS[1]]]
    assert _batch_labels(build_view_model(transcript, SETTINGS)) == [f"● {w}" for w in WORDS]
    # Labelled already: asked again, nothing more is queued.
    assert _label_existing(transcript) == []


def test_S1_label_ids_do_not_depend_on_which_answer_came_first() -> None:
    """Two labels of one call id get ids from their batches' entries, not the order the fast
    model answered in (deterministic output)."""
    transcript = _retried()
    first, second = _lookups(transcript)
    added = _label_existing(transcript)
    assert sorted(s.id for s in added) == [f"label-{first.id}", f"label-{second.id}"]


# --- a dump and a reload ---------------------------------------------------------------------


def test_S1_entry_ids_round_trip_and_each_label_stays_on_its_batch_when_loaded() -> None:
    transcript = _retried()
    _label_existing(transcript)
    for layout in ("jsonl", "json"):
        dumped = transcript.dump(layout=layout)
        assert '"entry_ids"' in dumped
        loaded = turnfold.load(dumped)
        assert loaded.warnings == []
        assert loaded == transcript
        assert _shown(_turns(loaded)) == [[WORDS[0]], [WORDS[1]]]
        assert _batch_labels(build_view_model(loaded, SETTINGS)) == [f"● {w}" for w in WORDS]


def test_S1_a_label_without_entry_ids_is_dumped_as_before_and_attaches_as_before() -> None:
    """A dump written before labels kept entry ids: the field is left out of a dump when empty
    (dumps omit defaults), and such a label names the latest call of its id before it."""
    rec = Recorder(clock=clock)
    rec.user("first")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}, call_id="x"), "a")
    rec.assistant("one")
    old = ToolUseSummary(label="Read a", call_ids=["x"], timestamp=clock())
    rec.transcript.append(old)
    rec.user("second")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "b"}, call_id="x"), "b")
    dumped = rec.transcript.dump()
    assert "entry_ids" not in dumped
    loaded = turnfold.load(dumped)
    (label,) = [e for e in loaded.entries if isinstance(e, ToolUseSummary)]
    assert label.entry_ids == []
    first, second = loaded.tool_calls()
    labels = labels_by_call(loaded.entries)
    assert (label_for([first], labels), label_for([second], labels)) == (label, None)


def test_L4_entry_ids_of_the_wrong_type_warn_and_the_label_attaches_by_its_call_ids() -> None:
    rec = Recorder(clock=clock)
    rec.user("go")
    read = rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}, call_id="x"), "a")
    rec.assistant("done")
    rec.label([read], "Read a")
    dumped = rec.transcript.dump()
    broken = dumped.replace(f'"entry_ids":["{read.id}"]', f'"entry_ids":"{read.id}"')
    assert broken != dumped
    loaded = turnfold.load(broken)
    (warning,) = loaded.warnings
    assert warning.reason.startswith("tool_use_summary field entry_ids: ")
    assert warning.line == 5
    # Still shown: by its call id, on the latest call of that id before it.
    (label,) = [e for e in loaded.entries if isinstance(e, ToolUseSummary)]
    assert (label.label, label.entry_ids) == ("Read a", [])
    assert label_for(loaded.tool_calls(), labels_by_call(loaded.entries)) is label


# --- live: the planner and the widget as the labels arrive -----------------------------------


def test_S6_the_planner_keeps_each_label_on_its_batch_as_labels_arrive() -> None:
    transcript = _retried()
    planner = ProjectionPlanner(transcript)
    planner.plan(None)
    added = _label_existing(transcript)
    items, _ = planner.plan(None, changed=[s.id for s in added])
    turns = [p for p in (item.project() for item in items) if isinstance(p, Turn)]
    assert _shown(turns) == [[WORDS[0]], [WORDS[1]]]


def test_S6_the_widget_shows_each_label_on_its_batch_live_and_loaded(
    widgets: list[TranscriptWidget],
) -> None:
    transcript = _retried()
    live = TranscriptWidget(transcript, settings=SETTINGS)
    widgets.append(live)
    live.flush()
    assert _batch_labels(live.view) == [None, None]
    _label_existing(transcript)
    live.flush()
    assert _batch_labels(live.view) == [f"● {w}" for w in WORDS]
    loaded = TranscriptWidget(turnfold.load(transcript.dump()), settings=SETTINGS)
    widgets.append(loaded)
    loaded.flush()
    assert _batch_labels(loaded.view) == [f"● {w}" for w in WORDS]


# --- a label the agent's own code writes -----------------------------------------------------


def test_S1_recorder_label_names_the_calls_it_was_given_not_a_later_call_of_their_id() -> None:
    rec = Recorder(clock=clock)
    rec.user("first")
    first = rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}, call_id="x"), "a")
    rec.assistant("one")
    rec.user("second")
    second = rec.finish_tool(rec.start_tool("Read", {"file_path": "b"}, call_id="x"), "b")
    rec.assistant("two")
    alpha = rec.label([first], WORDS[0])
    beta = rec.label(["x"], WORDS[1])  # by call id: the latest call of that id
    assert (alpha.entry_ids, beta.entry_ids) == ([first.id], [second.id])
    labels = labels_by_call(rec.transcript.entries)
    assert (label_for([first], labels), label_for([second], labels)) == (alpha, beta)
    assert _shown(_turns(turnfold.load(rec.transcript.dump()))) == [[WORDS[0]], [WORDS[1]]]


def test_S1_recorder_label_of_a_call_in_no_transcript_names_it_by_call_id() -> None:
    rec = Recorder(clock=clock)
    rec.transcript.append(UserMessage(text="go"))
    stray = ToolCall(call_id="y", name="Read", status="success")
    label = rec.label([stray], "Read y")
    assert (label.call_ids, label.entry_ids) == (["y"], [])
