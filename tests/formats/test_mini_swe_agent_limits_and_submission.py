"""How a mini-swe-agent run ended (spec H-2, H-6, P-7, W-5, F-12): a 1.x run, which writes no
``exit`` message, reads as a 2.x run that ended the same way, and a submitted patch is a diff.

mini-swe-agent 1.x (``agents/default.py``) ends ``DefaultAgent.run`` on ``str(e)`` of the
``TerminatingException`` that stopped it, as a user message: the submission for
``Submitted``, ``""`` for ``LimitsExceeded()``. An exception the runner catches
(``run/extra/swebench.py``) saves its name as ``info.exit_status``, its text as
``info.submission`` and ``info.traceback``; the messages end where it broke. 2.x writes an
``exit`` message for each (``LimitsExceeded``, ``TimeExceeded``, ``RepeatedFormatError``, an
uncaught exception's class name, ``Submitted``); ``FormatError`` and 1.x's
``ExecutionTimeoutError`` never end a run.

Fixtures (``tests/fixtures/SOURCES.md``): the 1.15.0 runs made by ``v1_recipe.py`` with the
real package (a cost limit, an exception), the real 1.15.0 SWE-bench run ``requests-2317``,
and 2.x runs (2.4.6 made by the real package, 2.2.7 real). Expectations come from the files'
JSON, apart from the loader.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cli import expand_all
from turnfold.model import AssistantError, Entry, SystemNotice, Transcript, Wording
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

HERE = Path(__file__).parents[1] / "fixtures" / "harnesses" / "mini-swe-agent"
V1_LIMIT = HERE / "mini-swe-agent_v1.15.0_cost-limit.traj.json"
V1_ERROR = HERE / "mini-swe-agent_v1.15.0_runtime-error.traj.json"
V1_SUBMITTED = HERE / "mini-swe-agent_v1.15.0_gemini-3-pro_requests-2317_timeout_trimmed.traj.json"
V2_LIMIT = HERE / "mini-swe-agent_v2.4.6_response-api_step-limit.traj.json"
V2_ERROR = HERE / "mini-swe-agent_v2.2.7_deepseek-reasoner_litellm-timeout_pvlib-1154.traj.json"
V2_SUBMITTED = HERE / "mini-swe-agent_v2.4.6_textbased_submitted.traj.json"
V2_REAL_SUBMITTED = HERE / "mini-swe-agent_v2.2.7_deepseek_sqlfluff-2419_trimmed.traj.json"


def _document(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _notice(entry: Entry) -> tuple[str, str, str | None, Wording | None]:
    """What a reader sees of the notice that ends a run (its wording: in each locale)."""
    assert isinstance(entry, SystemNotice), f"the run ends on {entry!r}"
    return (entry.text, entry.level, entry.subtype, entry.wording)


def _last_turn_status(transcript: Transcript) -> str:
    view = build_view_model(transcript, DisplaySettings())
    statuses = [n["status"] for n in view["nodes"] if n["kind"] == "turn"]
    return statuses[-1]


def test_H2_v1_limit_reads_as_2x_limit_with_its_stop_notice() -> None:
    v1, v2 = _document(V1_LIMIT), _document(V2_LIMIT)
    assert v1["info"]["exit_status"] == v2["info"]["exit_status"] == "LimitsExceeded"
    assert v1["trajectory_format"] == "mini-swe-agent-1"
    assert "exit" not in {m["role"] for m in v1["messages"]}  # 1.x writes none
    assert v1["messages"][-1] == {"role": "user", "content": ""}  # str(LimitsExceeded())
    assert v2["messages"][-1]["role"] == "exit"
    old, new = turnfold.load(V1_LIMIT), turnfold.load(V2_LIMIT)
    assert _notice(old.entries[-1]) == _notice(new.entries[-1])
    assert _notice(old.entries[-1])[:3] == ("Stopped: LimitsExceeded", "warning", "exit")
    assert old.metadata["outcome"] == new.metadata["outcome"] == "incomplete"
    # Every command the run made ran and answered (returncode 0): the limit cut no call.
    outputs = [m for m in v1["messages"][2:] if m["role"] == "user" and m["content"]]
    assert [c.status for c in old.tool_calls()] == ["success"] * len(outputs) == ["success"] * 3
    assert old.warnings == []
    view = build_view_model(old, DisplaySettings(transcript_display_mode="flat"))
    assert "Stopped: LimitsExceeded" in render_text(expand_all(view), width=200)


def test_H2_v1_exception_reads_as_2x_uncaught_exception() -> None:
    v1, v2 = _document(V1_ERROR), _document(V2_ERROR)
    info = v1["info"]
    assert info["exit_status"] == "RuntimeError"
    assert "traceback" in info
    said = info["submission"]  # 1.x's runner saves str(e) as the result
    assert said.startswith("Global cost/call limit exceeded")
    assert v1["messages"][-1]["content"].startswith("<returncode>0</returncode>")  # broke mid-run
    old, new = turnfold.load(V1_ERROR), turnfold.load(V2_ERROR)
    assert isinstance(old.entries[-1], AssistantError)
    assert old.entries[-1].message == f"RuntimeError: {said}"
    exit_message = v2["messages"][-1]
    assert new.entries[-1] == AssistantError(
        message=f"{exit_message['extra']['exit_status']}: {exit_message['content']}",
        id=new.entries[-1].id,
    )
    assert old.metadata["outcome"] == new.metadata["outcome"] == "error"
    assert _last_turn_status(old) == _last_turn_status(new) == "failed"  # P-7
    assert old.warnings == []


def test_H6_a_run_that_ended_on_an_exception_submitted_nothing() -> None:
    """1.x's runner saves the exception's text as ``info.submission`` (2.x saves ``""`` and the
    text as ``exception_str``): the session's submission is none in both, and the text is the
    error's alone. A submitted run keeps its patch as its submission."""
    said = _document(V1_ERROR)["info"]["submission"]
    old, new = turnfold.load(V1_ERROR), turnfold.load(V2_ERROR)
    assert "submission" not in old.metadata
    assert "submission" not in new.metadata
    errors = [e for e in old.entries if isinstance(e, AssistantError)]
    assert [e.message for e in errors] == [f"RuntimeError: {said}"]
    assert not any(said in str(value) for value in old.metadata.values())
    patch = _document(V1_SUBMITTED)["info"]["submission"]
    assert turnfold.load(V1_SUBMITTED).metadata["submission"] == patch


def test_H6_a_1x_run_that_raised_before_any_message_keeps_its_error() -> None:
    """The runner caught an exception before the agent wrote a message (a model that could not
    be reached at its first call): the run's end is still the exception, never a submission.
    The 1.15.0 run of ``v1_recipe.py`` with its messages cut to the task."""
    document = _document(V1_ERROR)
    document["messages"] = document["messages"][:2]
    said = document["info"]["submission"]
    transcript = turnfold.load(document)
    assert "submission" not in transcript.metadata
    assert transcript.entries[-1] == AssistantError(
        message=f"RuntimeError: {said}", id=transcript.entries[-1].id
    )
    assert transcript.metadata["outcome"] == "error"


def test_H2_v1_submission_settles_its_call_as_a_diff_unchanged() -> None:
    document = _document(V1_SUBMITTED)
    submission = document["info"]["submission"]
    assert submission.startswith("diff --git ")
    assert document["messages"][-1]["content"] == submission
    submit = turnfold.load(V1_SUBMITTED).tool_calls()[-1]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in submit.args["command"]
    assert submit.status == "success"
    assert submit.result is not None
    assert submit.result.kind == "diff"
    assert submit.result.text == submission


@pytest.mark.parametrize("path", [V2_SUBMITTED, V2_REAL_SUBMITTED], ids=["2.4.6", "2.2.7"])
def test_H2_v2_exit_submission_is_a_diff_unchanged(path: Path) -> None:
    exit_message = _document(path)["messages"][-1]
    assert exit_message["role"] == "exit"
    submission = exit_message["extra"]["submission"]
    assert submission.startswith("diff --git ")
    submit = turnfold.load(path).tool_calls()[-1]
    assert submit.status == "success"
    assert submit.result is not None
    assert (submit.result.kind, submit.result.text) == ("diff", submission)


def test_W5_submitted_patch_renders_as_a_diff() -> None:
    submission = _document(V1_SUBMITTED)["info"]["submission"]
    added = next(
        line for line in submission.splitlines() if line.startswith("+") and line[1:2] != "+"
    )
    transcript = turnfold.load(V1_SUBMITTED)
    page = render_html(expand_all(build_view_model(transcript, DisplaySettings())))
    assert f'<span class="tf-diff-add">{html.escape(added, quote=False)}</span>' in page


def test_H2_v1_submission_that_quotes_a_returncode_is_kept_whole() -> None:
    """1.x's submission message is no ``<returncode>`` output but the patch itself, which may
    add such a tag (a patch to mini-swe-agent's own templates): it is the result as it is,
    and the submit call succeeded. The real 1.15.0 run with its patch extended so."""
    document = _document(V1_SUBMITTED)
    patch = (
        document["info"]["submission"]
        + "diff --git a/template.txt b/template.txt\n--- a/template.txt\n+++ b/template.txt\n"
        "@@ -1 +1,2 @@\n <returncode>{{output.returncode}}</returncode>\n"
        "+<returncode>1</returncode><output>\n"
    )
    document["info"]["submission"] = document["messages"][-1]["content"] = patch
    submit = turnfold.load(document).tool_calls()[-1]
    assert submit.status == "success"
    assert submit.result is not None
    assert (submit.result.kind, submit.result.text) == ("diff", patch)
