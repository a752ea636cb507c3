"""API errors as the real agents write them (the harness's ``trouble`` scenario, tests/agents):
the model's first request overloaded (a 5xx the agent retried), a later one invalid (a 400
that ended the turn). Each fixture is a trimmed copy of the session the pinned CLI wrote
against the scripted server (tests/fixtures/SOURCES.md); every error message holds
``TF-ERR-RETRY`` or ``TF-ERR-FATAL``."""

from __future__ import annotations

from pathlib import Path

import pytest

import turnfold
from turnfold.model import AssistantError, AssistantText, SystemNotice

FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))


def test_cline_3_0_65_the_display_only_error_ending_a_run_is_an_assistant_error() -> None:
    # core's recordTerminalError: an assistant message {displayOnly, displayRole: "error"}.
    path = next((FIXTURES / "cline" / "cline-cli-3.0.65_api-error").glob("*/*.messages.json"))
    transcript = turnfold.load(path)
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-RETRIED: the check, once the model answered."]
    errors = [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert [e.message for e in errors] == ["messages: the request is not valid (TF-ERR-FATAL)"]
    assert errors[0].timestamp is not None
    assert transcript.entries[-1] is errors[0]
    assert [c.status for c in transcript.tool_calls()] == ["success"]


def test_qwen_0_24_4_a_failed_request_s_telemetry_is_an_error_notice() -> None:
    # In -p mode the failed request's only record is ui_telemetry qwen-code.api_error.
    transcript = turnfold.load(FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl")
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.level, n.subtype, n.text) for n in notices] == [
        ("error", "api_error", "400 Invalid value for 'messages'. (TF-ERR-FATAL)")
    ]
    assert notices[0].meta["status_code"] == 400
    assert transcript.entries[-1] is notices[0]
    assert transcript.warnings == []


def test_kimi_2_1_0_a_retried_request_is_a_warning_and_the_failed_turn_an_error() -> None:
    path = next((FIXTURES / "kimi" / "api-error").glob("*/agents/main/wire.jsonl"))
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    failures = [
        (type(e).__name__, getattr(e, "level", None), getattr(e, "text", None) or e.message)
        for e in transcript.entries
        if isinstance(e, (AssistantError, SystemNotice))
    ]
    assert failures == [
        (
            "SystemNotice",
            "warning",
            "500 The server had an error while processing your request. (TF-ERR-RETRY);"
            " retrying (attempt 2 of 10)",
        ),
        ("AssistantError", None, "400 Invalid value for 'messages'. (TF-ERR-FATAL)"),
    ]
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts.count("TF-RETRIED: the check, once the model answered.") == 1


def test_cline_3_0_65_json_a_run_ended_by_an_error_ends_with_its_run_result() -> None:
    # `cline --json` of the same run: the error event, then run_result (finishReason
    # "error") and no done event. The run did end: no warning that the stream ends before it.
    transcript = turnfold.load(FIXTURES / "cline" / "cline-cli-3.0.65_json" / "trouble.jsonl")
    assert transcript.warnings == []
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == ["messages: the request is not valid (TF-ERR-FATAL)"]
    assert transcript.metadata["outcome"] == "error"
    assert [c.status for c in transcript.tool_calls()] == ["success"]
