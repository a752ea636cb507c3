"""API errors as the real agents write them (the harness's ``trouble`` scenario, tests/agents):
the model's first request overloaded (a 5xx the agent retried), a later one invalid (a 400
that ended the turn). Each fixture is a trimmed copy of the session the pinned CLI wrote
against the scripted server (tests/fixtures/SOURCES.md); every error message holds
``TF-ERR-RETRY`` or ``TF-ERR-FATAL``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cli import main
from turnfold.model import AssistantError, AssistantText, SystemNotice, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures"


pytestmark = pytest.mark.usefixtures("cache_dir")


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


def test_qwen_0_24_4_a_failed_request_nothing_answers_ended_the_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In -p mode the failed request's only record is ui_telemetry qwen-code.api_error, and no
    # response follows it: the turn failed there (not "Completed" with a notice after it).
    transcript = turnfold.load(FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl")
    assert transcript.warnings == []
    assert not [e for e in transcript.entries if isinstance(e, SystemNotice)]
    errors = [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert [e.message for e in errors] == ["400 Invalid value for 'messages'. (TF-ERR-FATAL)"]
    assert errors[0].meta["status_code"] == 400
    assert errors[0].timestamp == "2026-12-05T18:37:28.905Z"
    assert transcript.entries[-1] is errors[0]
    assert [c.status for c in transcript.tool_calls()] == ["success"]
    row = turnfold.scan(FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl").to_pandas()
    assert (row.loc[0, "turns"], row.loc[0, "errors"], row.loc[0, "failed_tools"]) == (1, 1, 0)
    assert main(["show", str(FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl")]) == 0
    view = capsys.readouterr().out
    assert "▸ Failed" in view
    assert "Completed" not in view


def _qwen_records() -> list[dict[str, Any]]:
    path = FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_qwen_0_24_4_a_failed_request_a_response_follows_was_retried(tmp_path: Path) -> None:
    # Qwen Code's own retry layer (retryWithBackoff around the logging generator) writes an
    # api_error for each failed attempt: here a 429 before the model's first answer, which
    # then came. The real file with that attempt put in: a warning, the turn still failed
    # at its end by the 400.
    records = _qwen_records()
    failed = records[6]
    attempt = {
        **failed,
        "uuid": "retried-attempt",
        "parentUuid": records[2]["uuid"],
        "systemPayload": {
            "uiEvent": {
                **failed["systemPayload"]["uiEvent"],
                "error_message": "429 Too many requests (TF-ERR-RETRY)",
                "status_code": 429,
            }
        },
    }
    records[3]["parentUuid"] = "retried-attempt"
    records.insert(3, attempt)
    path = tmp_path / "retried.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    failures = [
        (type(e).__name__, getattr(e, "level", None), getattr(e, "text", None) or e.message)
        for e in transcript.entries
        if isinstance(e, (AssistantError, SystemNotice))
    ]
    assert failures == [
        ("SystemNotice", "warning", "429 Too many requests (TF-ERR-RETRY)"),
        ("AssistantError", None, "400 Invalid value for 'messages'. (TF-ERR-FATAL)"),
    ]
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-RETRIED: the check, once the model answered."]


def test_qwen_a_failed_request_then_the_next_prompt_and_a_turn_result(tmp_path: Path) -> None:
    # The next prompt settles it too: the turn before it failed. Of two failed attempts in a
    # row the first was retried. A turn_result error (ACP mode) already records the failure:
    # the api_error stays an error notice, so the turn's failure counts once.
    records = _qwen_records()
    failed, prompt = records[6], records[0]

    def api_error(uuid: str, parent: str, message: str) -> dict[str, Any]:
        event = {**failed["systemPayload"]["uiEvent"], "error_message": message}
        return {**failed, "uuid": uuid, "parentUuid": parent, "systemPayload": {"uiEvent": event}}

    records[6] = api_error("e1", records[5]["uuid"], "first attempt")
    records += [
        api_error("e2", "e1", "second attempt"),
        {**prompt, "uuid": "p2", "parentUuid": "e2", "message": {"role": "user", "parts": [
            {"text": "again"}]}},
        api_error("e3", "p2", "third attempt"),
        {**failed, "uuid": "t1", "parentUuid": "e3", "subtype": "turn_result", "systemPayload": {
            "state": "error", "error": {"message": "the turn failed"}}},
    ]  # fmt: skip
    path = tmp_path / "failed-twice.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    transcript = turnfold.load(path)
    failures = [
        (type(e).__name__, getattr(e, "level", None), getattr(e, "text", None) or e.message)
        for e in transcript.entries
        if isinstance(e, (AssistantError, SystemNotice, UserMessage))
    ]
    assert failures == [
        ("UserMessage", None, "TF-TROUBLE: run the check, then carry on."),
        ("SystemNotice", "warning", "first attempt"),
        ("AssistantError", None, "second attempt"),
        ("UserMessage", None, "again"),
        ("SystemNotice", "error", "third attempt"),
        ("AssistantError", None, "the turn failed"),
    ]


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
