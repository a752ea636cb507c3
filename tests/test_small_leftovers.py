"""Small leftovers: an OpenHands SDK rejection without a reason and a failed OpenAI Batch API
call said in the view's language (spec P-11), and a fast-model label that names no call of
its transcript said in a warning, never dropped in silence (S-6, L-4).

The OpenHands conversation is the real one of ``tests/fixtures/harnesses/openhands-sdk/``
(OpenHands Software Agent SDK 1.22.1, ``tests/fixtures/SOURCES.md``), its user's rejection
of ``call_terminal_13`` left without its ``rejection_reason`` (a plain ``str`` in the SDK's
``UserRejectObservation``); the Batch API files are those the real ``openai`` 3.57.0 SDK
shapes (``datasets/openai-3.57.0_batch_chat_*.jsonl``); the labels are the Recorder's.
"""

from __future__ import annotations

import html
import json
import shutil
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.localized_views import quiet_load, view_nodes
from tests.test_zh_more import _shown_results, _worded_call
from turnfold.formats.wrappers import batch_line
from turnfold.model import AssistantError, ToolCall, ToolUseSummary, Transcript
from turnfold.recording import Recorder
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parent / "fixtures"
CONVERSATION = (
    FIXTURES / "harnesses/openhands-sdk/conversations/2e6c222a6c254b28bab45a8281ad9b15"
)  # fmt: skip
REJECTION = "event-00030-acb6af40-ec78-4b58-8f76-438df7dbeeda.json"
BATCH_ERRORS = FIXTURES / "datasets/openai-3.57.0_batch_chat_errors.jsonl"


# --- 1. an OpenHands SDK rejection without a reason -------------------------------------------


@pytest.mark.parametrize("reason", ["", None], ids=["empty", "absent"])
@pytest.mark.parametrize(("locale", "shown"), [("zh", "已拒绝"), ("en", "Rejected")])
def test_openhands_sdk_s_rejection_without_a_reason_is_said_in_the_view_s_language(
    tmp_path: Path, reason: str | None, locale: str, shown: str
) -> None:
    conversation = tmp_path / CONVERSATION.name
    shutil.copytree(CONVERSATION, conversation)
    path = conversation / "events" / REJECTION
    event = json.loads(path.read_text(encoding="utf-8"))
    assert event["kind"] == "UserRejectObservation"
    if reason is None:
        del event["rejection_reason"]
    else:
        event["rejection_reason"] = reason
    path.write_text(json.dumps(event), encoding="utf-8")
    transcript = quiet_load(conversation)
    call = _worded_call(transcript, "Rejected")  # the stored English, as before
    assert call.result is not None
    assert call.result.wording is not None
    assert call.result.wording.key == "reader.rejected"
    assert (call.call_id, call.status, call.meta["rejected_by"]) == (
        "call_terminal_13",
        "cancelled",
        "user",
    )
    assert _shown_results(transcript, locale)[call.id] == shown


def test_openhands_sdk_s_rejection_with_its_reason_shows_the_reason_as_it_is() -> None:
    transcript = quiet_load(CONVERSATION)
    (call,) = [c for c in transcript.tool_calls() if c.call_id == "call_terminal_13"]
    assert call.result is not None
    assert (call.result.text, call.result.wording) == ("Not now: keep the build directory.", None)
    assert _shown_results(transcript, "zh")[call.id] == "Not now: keep the build directory."


# --- 2. a failed Batch API call, as the guard of reader notices found it ------------------------


def _error_shown(transcript: Transcript, locale: str) -> str:
    (error,) = [e for e in transcript if isinstance(e, AssistantError)]
    (node,) = [n for n in view_nodes(transcript, locale) if n.get("key") == error.id]
    return html.unescape(str(node["html"]))


def test_a_failed_batch_call_s_status_is_said_in_the_view_s_language() -> None:
    """The API's own words (its error's code and message) stay as they are; the status the
    reader puts before them is its wording."""
    english = (
        "HTTP 400, integer_below_min_value: Invalid 'max_completion_tokens': integer below "
        "minimum value. Expected a value >= 1, but got -1 instead."
    )
    bad = quiet_load(BATCH_ERRORS, sample="task-bad")
    (error,) = [e for e in bad if isinstance(e, AssistantError)]
    assert error.wording is not None
    assert error.wording.key == "reader.batch_call_failed.status.said"
    assert _error_shown(bad, "en") == english
    assert _error_shown(bad, "zh") == english.replace("HTTP 400, ", "HTTP 400，")
    late = quiet_load(BATCH_ERRORS, sample="task-late")
    (said,) = [e for e in late if isinstance(e, AssistantError)]
    assert said.wording is None  # the API's words alone
    assert _error_shown(late, "zh") == _error_shown(late, "en") == said.message


@pytest.mark.parametrize(
    ("line", "english", "key"),
    [
        ({"response": {"status_code": 500, "body": None}, "error": None}, "HTTP 500",
         "reader.batch_call_failed.status"),
        ({"response": {"status_code": 400, "body": {"error": {}}}, "error": None},
         "HTTP 400, an error with no message", "reader.batch_call_failed.status.no_message"),
        ({"response": None, "error": {"message": ""}}, "an error with no message",
         "reader.batch_call_failed.no_message"),
        ({"response": None, "error": None}, "neither a response nor an error",
         "reader.batch_call_failed.unexplained"),
        ({"response": None, "error": {"code": "batch_expired", "message": "Not run."}},
         "batch_expired: Not run.", None),
    ],
    ids=["status", "status-no-message", "no-message", "neither", "the-api-s"],
)  # fmt: skip
def test_each_failure_the_reader_says_of_a_batch_line_has_its_wording(
    line: dict[str, Any], english: str, key: str | None
) -> None:
    parsed = batch_line({"id": "batch_req_1", "custom_id": "t-1", **line})
    assert parsed is not None
    assert parsed.failure == english  # as before
    assert (parsed.wording.key if parsed.wording else None) == key


# --- 3. a fast-model label that names no call of its transcript ---------------------------------


def _labelled() -> Transcript:
    """A recorded turn of two reads in one batch, labelled by the fast model."""
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user("go")
    first = rec.start_tool("Read", {"file_path": "a"}, call_id="x")
    second = rec.start_tool("Read", {"file_path": "b"}, call_id="y")
    rec.finish_tool(first, "a")
    rec.finish_tool(second, "b")
    rec.assistant("done")
    label = rec.label([first, second], "Read a and b")
    assert label.entry_ids == [first.id, second.id]
    return rec.transcript


def _batch_labels(view: Mapping[str, Any]) -> list[Any]:
    return [node.get("label") for node in iter_nodes(view) if node["kind"] == "batch"]


def _view(transcript: Transcript) -> Mapping[str, Any]:
    return build_view_model(transcript, DisplaySettings(full_detail=False))


def test_S6_a_label_whose_calls_are_gone_is_said_in_a_warning_naming_it() -> None:
    """A dump whose calls' lines were lost (cut short as a file being written is): the loader
    warns of the lines, and the view of the label that names none of the calls left."""
    dumped = _labelled().dump().splitlines()
    cut = [line[: len(line) // 2] if '"kind":"tool_call"' in line else line for line in dumped]
    loaded = turnfold.load("\n".join(cut))
    assert [w.line for w in loaded.warnings] == [3, 4]
    assert [e.kind for e in loaded] == ["user", "assistant", "tool_use_summary"]
    with pytest.warns(UserWarning, match="names no tool call") as caught:
        view = _view(loaded)
    (warning,) = caught
    assert str(warning.message) == (
        "the tool-use summary label 'Read a and b' names no tool call of this transcript "
        "(entry ids 'e1', 'e2'): it is shown on no batch"
    )
    assert warning.filename == __file__  # the reader's line, not turnfold's
    assert _batch_labels(view) == []


def test_S6_a_label_of_call_ids_only_that_name_no_call_warns_too() -> None:
    transcript = Transcript([ToolUseSummary(label="Read c", call_ids=["nowhere"])])
    with pytest.warns(UserWarning, match=r"label 'Read c' names no tool call .*call ids 'nowhere'"):
        _view(transcript)


def test_S6_a_label_with_some_of_its_calls_left_attaches_to_those_without_a_warning() -> None:
    transcript = _labelled()
    (label,) = [e for e in transcript if isinstance(e, ToolUseSummary)]
    first, second = transcript.tool_calls()
    kept = Transcript(
        [e for e in transcript if e is not second], metadata=transcript.metadata
    )  # fmt: skip
    assert [e.id for e in kept if isinstance(e, ToolCall)] == [first.id]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _batch_labels(_view(kept)) == ["● Read a and b"]
        assert _batch_labels(_view(transcript)) == ["● Read a and b"]
    assert label.entry_ids == [first.id, second.id]


def test_S6_a_label_stored_before_the_calls_it_names_is_no_warning() -> None:
    """Entry ids name their calls wherever the label stands (batches.LabelIndex)."""
    transcript = _labelled()
    label = next(e for e in transcript if isinstance(e, ToolUseSummary))
    moved = Transcript([label, *(e for e in transcript if e is not label)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _batch_labels(_view(moved)) == ["● Read a and b"]


def test_S6_a_live_widget_warns_once_of_a_label_that_names_no_call(
    widgets: list[turnfold.TranscriptWidget],
) -> None:
    transcript = Transcript([ToolUseSummary(label="Read c", entry_ids=["e99"])])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # each warning made, not only the first of its line
        widget = turnfold.TranscriptWidget(transcript)
        widgets.append(widget)
        transcript.append(ToolCall(call_id="z", name="Read", status="success"))
        widget.flush()
    assert [str(w.message) for w in caught] == [
        "the tool-use summary label 'Read c' names no tool call of this transcript "
        "(entry ids 'e99'): it is shown on no batch"
    ]
