"""What a reader writes itself into a transcript (an API error's wording, a stop, a retry, a
handoff) reads in the view's language, while the source's own words inside it stay as written.

The entry keeps its English text (the data, what a dump holds and an old reading shows) and the
catalog message it came from (``model.Wording``); the view model says it in its locale. Each
transcript here is a real fixture (see ``tests/fixtures/SOURCES.md``).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.adk_raised_calls import raised_among
from turnfold.i18n import catalog
from turnfold.model import AbortMarker, AssistantError, Entry, SystemNotice, Transcript, Wording
from turnfold.widget import TranscriptWidget

FIXTURES = Path(__file__).parent / "fixtures"
SOURCE = Path(turnfold.__file__).parent

#: (fixture, the reader's English as an English view shows it, the same in a Chinese view).
#: The source's own words (a status, an agent's name, an error's text) are in both.
SAID = [
    (
        "claude-code_v2.1.x_schema-coverage.jsonl",
        "Request refused (policy): Refused for policy reasons.",
        "请求被拒绝（policy）：Refused for policy reasons.",
    ),
    (
        "claude-code_v2.1.x_schema-coverage.jsonl",
        "API error 429: [trimmed for fixture]",
        "API 错误 429：[trimmed for fixture]",
    ),
    (
        "claude-code/v2.1.332_real_api-retry-then-error.jsonl",
        "API error 529: Overloaded (TF-ERR-RETRY) (attempt 1 of 1; retrying)",
        "API 错误 529：Overloaded (TF-ERR-RETRY)（第 1 次尝试，共 1 次；正在重试）",
    ),
    ("copilot/stdout/interrupt_stdout-0.jsonl", "Interrupted by the user", "已被用户中断"),
    ("copilot/interrupt-user-abort/stdout-0.jsonl", "Stopped by the user", "已被用户停止"),
    ("copilot/stdout/killed_stdout-0.jsonl", "the run never finished", "运行未结束"),
    (
        "harnesses/mini-swe-agent/mini-swe-agent_v2.4.6_response-api_step-limit.traj.json",
        "Stopped: LimitsExceeded",
        "已停止：LimitsExceeded",
    ),
    (
        "kimi/api-error/session_0b23488f-2377-4b60-bf68-a40fc5d589d6/agents/main/wire.jsonl",
        "(TF-ERR-RETRY); retrying",
        "(TF-ERR-RETRY)；正在重试",
    ),
    (
        "frameworks/pydantic-ai/pydantic-ai_v2.78.0_all-messages_capability-retry.json",
        "Retry: not final yet",
        "重试：not final yet",
    ),
    (
        "frameworks/autogen/autogen_v0.7.5_task-result_selector-team.json",
        "Next speaker: judge",
        "下一位发言者：judge",
    ),
    (
        "frameworks/adk/adk_v2.13.0_events_tool-raises.json",
        "The run ended: explode raised ValueError: boom: z",
        "运行已结束：explode 抛出了 ValueError: boom: z",
    ),
    ("crewai/crewai_v1.15.30_crew-output_two-tasks.json", "Agent: Researcher", "代理：Researcher"),
    (
        "opencode/interrupt/export.json",
        "the response never finished",
        "响应未完成（其进程已被停止）",
    ),
    (
        "cline/cline-cli-2.18.0_tasks/mistake-limit",
        "too many consecutive mistakes: Cline uses complex prompts",
        "连续出错次数过多：Cline uses complex prompts",
    ),
    (
        "cline/cline-cli-2.18.0_json/api-error.jsonl",
        "request failed (attempt 3 of 3, no retry left): 500 TF-SERVER-DOWN",
        "请求失败（第 3 次尝试，共 3 次，已无重试机会）：500 TF-SERVER-DOWN",
    ),
    (
        "codex/review-mode.jsonl",
        "Code review of current changes (uncommitted changes)",
        "代码审查：current changes（未提交的更改）",
    ),
    (
        "harnesses/atif/terminus-2/trial/agent/trajectory.json",
        "Continued in trajectory.cont-1.json.",
        "在 trajectory.cont-1.json 中继续。",
    ),
    (
        "crewai/crewai_v1.15.30_stream-frames_guardrail.jsonl",
        "Guardrail rejected the answer: The answer must contain a digit.",
        "护栏拒绝了该回答：The answer must contain a digit.",
    ),
    (
        "crewai/crewai_v1.15.30_stream-frames_async-max-iter.jsonl",
        "Iteration limit reached (max_iter = 1): CrewAI stopped",
        "已达到迭代上限（max_iter = 1）：CrewAI 停止了代理的工具调用",
    ),
    (
        "crewai/crewai_v1.15.30_crew-output_max-iter.json",
        "Iteration limit reached (max_iter): the task",
        "已达到迭代上限（max_iter）：该任务的消息以模型从未回应的工具结果结束",
    ),
    (
        "harnesses/inspect/inspect_retry-2-then-success_legacy.eval",
        "The model call failed, and the run went on: _Transient",
        "模型调用失败，运行继续进行：_Transient",
    ),
    (
        "harnesses/openhands/openhands_output-jsonl_hand-made_delegate-and-errors.jsonl",
        "Context added by the runtime (workspace_context): python",
        "运行时添加的上下文（workspace_context）：python",
    ),
    (
        "aider/aider_handmade_ask-architect-editor.md",
        "to the editor model (openai/fake-editor) to make its edits",
        "发给编辑模型（openai/fake-editor），由它完成修改",
    ),
]


def _load(name: str) -> Transcript:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return turnfold.load(FIXTURES / name)


def _bundle(transcript: Transcript, locale: str) -> dict[str, str]:
    """The text/plain and text/html a notebook shows for ``transcript``."""
    widget = TranscriptWidget(transcript, settings=turnfold.DisplaySettings(locale=locale))
    try:
        bundle = widget._repr_mimebundle_()
        assert bundle is not None
        return {mime: bundle[0][mime] for mime in ("text/plain", "text/html")}
    finally:
        widget.close()


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@pytest.mark.parametrize(("name", "english", "chinese"), SAID)
def test_the_readers_own_words_are_chinese_in_a_chinese_view(
    name: str, english: str, chinese: str
) -> None:
    transcript = _load(name)
    zh = _bundle(transcript, "zh")
    assert chinese in zh["text/plain"]
    assert _html(chinese) in zh["text/html"]
    assert english not in zh["text/plain"]
    assert _html(english) not in zh["text/html"]


@pytest.mark.parametrize(("name", "english", "chinese"), SAID)
def test_an_english_view_shows_the_stored_english(name: str, english: str, chinese: str) -> None:
    transcript = _load(name)
    en = _bundle(transcript, "en")
    assert english in en["text/plain"]
    assert _html(english) in en["text/html"]
    assert chinese not in en["text/plain"]
    # The entry holds the English the English view shows: a view never writes the data.
    assert english in "\n".join(_said(transcript))


def test_the_sources_own_error_text_is_not_translated() -> None:
    """Claude Code's own message (a plain string) and Kimi's fatal error are the source's."""
    fatal = "API Error: 400 messages: the request is not valid (TF-ERR-FATAL)"
    zh = _bundle(_load("claude-code/v2.1.332_real_api-retry-then-error.jsonl"), "zh")
    assert fatal in zh["text/plain"]
    kimi = "kimi/api-error/session_0b23488f-2377-4b60-bf68-a40fc5d589d6/agents/main/wire.jsonl"
    transcript = _load(kimi)
    errors = [e for e in transcript if isinstance(e, AssistantError)]
    assert [e.wording for e in errors] == [None]
    assert errors[0].message in _bundle(transcript, "zh")["text/plain"]


def _said(transcript: Transcript) -> Iterator[str]:
    for entry in transcript:
        if isinstance(entry, SystemNotice):
            yield entry.text
        elif isinstance(entry, AbortMarker):
            yield entry.reason or ""
        elif isinstance(entry, AssistantError):
            yield entry.message


def _wordings(transcript: Transcript) -> list[Wording]:
    """The wordings of the entries a reader wrote itself, in order."""
    return [w for e in transcript if (w := getattr(e, "wording", None)) is not None]


@pytest.mark.parametrize("layout", ["jsonl", "json"])
def test_a_dump_keeps_the_wording_and_reads_back_in_chinese(layout: str) -> None:
    transcript = _load("claude-code_v2.1.x_schema-coverage.jsonl")
    keys = {wording.key for wording in _wordings(transcript)}
    assert {"reader.api_error", "reader.api_error.status.said", "reader.message_from"} <= keys
    loaded = turnfold.load(transcript.dump(layout=layout))  # type: ignore[arg-type]
    assert loaded == transcript
    assert _wordings(loaded) == _wordings(transcript)
    assert "API 错误 429：[trimmed for fixture]" in _bundle(loaded, "zh")["text/plain"]


def test_an_old_dump_without_wording_loads_unchanged_and_shows_its_english() -> None:
    transcript = _load("claude-code_v2.1.x_schema-coverage.jsonl")
    lines = [json.loads(line) for line in transcript.dump().splitlines()]
    old = "".join(
        json.dumps({k: v for k, v in line.items() if k != "wording"}, ensure_ascii=False) + "\n"
        for line in lines
    )
    assert '"wording"' in transcript.dump()
    assert '"wording"' not in old
    loaded = turnfold.load(old)
    assert loaded.warnings == transcript.warnings
    assert list(_said(loaded)) == list(_said(transcript))
    assert _wordings(loaded) == []
    plain = _bundle(loaded, "zh")["text/plain"]
    assert "API error 429: [trimmed for fixture]" in plain  # as the dump says it


def test_a_wording_the_catalog_lacks_or_that_does_not_fit_shows_the_stored_text() -> None:
    stored = "Handed off to billing"
    entries: list[Entry] = [
        SystemNotice(text=stored, wording=Wording(key="reader.from_a_newer_turnfold")),
        SystemNotice(text=stored + ".", wording=Wording(key="reader.handed_off", params={})),
        SystemNotice(
            text="Handed off to desk",
            wording=Wording(key="reader.handed_off", params={"target": "desk"}),
        ),
    ]
    plain = _bundle(Transcript(entries), "zh")["text/plain"]
    assert stored in plain  # not an error
    assert stored + "." in plain  # not "已移交给 {target}"
    assert "已移交给 desk" in plain


def test_a_hostile_wording_in_a_dump_is_a_warning_naming_its_line() -> None:
    header = {"turnfold": 1, "metadata": {}}
    wording = {"key": "reader.agent", "params": {"name": ["{0}"]}}
    bad = {"kind": "system", "text": "x", "wording": wording}
    good = {"kind": "system", "text": "Agent: a", "wording": {**wording, "params": {"name": "a"}}}
    loaded = turnfold.load("".join(json.dumps(line) + "\n" for line in (header, bad, good)))
    assert [(w.line, w.reason) for w in loaded.warnings] == [
        (2, "the params of wording 'reader.agent' must be text")
    ]
    assert list(_said(loaded)) == ["Agent: a"]


@pytest.mark.parametrize(
    ("error", "english", "chinese"),
    [
        (None, "API error", "API 错误"),
        ({"status": 500}, "API error 500", "API 错误 500"),
        ({"message": "overloaded"}, "API error: overloaded", "API 错误：overloaded"),
        ({"status": 529, "formatted": "529 Overloaded"}, "API error 529: Overloaded",
         "API 错误 529：Overloaded"),
        ("Claude Code's own line", "Claude Code's own line", "Claude Code's own line"),
    ],
)  # fmt: skip
def test_each_shape_of_a_retried_api_error_has_its_words_in_both_languages(
    error: object, english: str, chinese: str
) -> None:
    from turnfold.formats.claude_code import retry_notice

    notice = retry_notice(error, 2, 10)
    assert notice.text == f"{english} (attempt 2 of 10; retrying)"
    plain = _bundle(Transcript([notice]), "zh")["text/plain"]
    assert f"{chinese}（第 2 次尝试，共 10 次；正在重试）" in plain


def test_every_reader_wording_the_code_names_is_in_both_catalogs() -> None:
    """test_i18n checks ``translate`` and ``plural``; the readers name their words in
    ``notice``, ``stop``, ``failure``, ``worded`` and in tables of keys."""
    named: set[str] = set()
    for path in (SOURCE / "formats").rglob("*.py"):
        named |= set(re.findall(r"""["'](reader\.[\w.]+)["']""", path.read_text()))
    assert len(named) > 50
    for locale in ("en", "zh"):
        assert named - set(catalog(locale)) == set(), locale


def test_a_dspy_run_that_never_called_finish_says_so_in_chinese() -> None:
    """A real ``dspy.ReAct`` run (a scripted ``DummyLM``) whose one iteration was a tool call."""
    from tests.formats.dspy_runs import scripted, solo_agent

    agent = solo_agent(max_iters=1)  # dspy imported after dspy_runs kept litellm offline
    import dspy  # type: ignore[import-untyped]

    script: list[dict[str, Any]] = [
        {"next_thought": "add", "next_tool_name": "add", "next_tool_args": {"a": 1, "b": 2}},
        {"reasoning": "1+2=3", "answer": "3"},
    ]
    with dspy.context(lm=scripted(script)):
        prediction = agent(question="add 1 and 2")
    transcript = turnfold.load(prediction)
    assert [w.key for w in _wordings(transcript)] == ["reader.trajectory_unfinished"]
    plain = _bundle(transcript, "zh")["text/plain"]
    assert "轨迹结束时没有调用 finish 工具：要么达到了 max_iters" in plain
    assert "without the finish tool" not in plain
    assert "The trajectory ends without the finish tool" in _bundle(transcript, "en")["text/plain"]


@pytest.mark.parametrize(
    ("names", "key", "english", "chinese"),
    [
        (["explode"], "reader.run_ended_raised", "explode raised", "explode 抛出了"),
        ([None], "reader.run_ended_raised.a_tool", "a tool raised", "某个工具抛出了"),
        (["a", "b", "c"], "reader.run_ended_raised.either", "a, b or c raised", "a、b 或 c 抛出了"),
    ],
)  # fmt: skip
def test_an_adk_run_a_tool_ended_names_it_with_the_message_s_own_or(
    names: list[str | None], key: str, english: str, chinese: str
) -> None:
    """The tools the exception may have come from are joined by the message, not an English
    value: the real ADK run in which ``explode`` raised, its model's one call made several."""
    transcript = turnfold.load(raised_among(names))
    (error,) = [e for e in transcript if isinstance(e, AssistantError)]
    assert error.wording is not None
    assert error.wording.key == key
    assert error.message == f"The run ended: {english} ValueError: boom: z"
    plain = _bundle(transcript, "zh")["text/plain"]
    assert f"运行已结束：{chinese} ValueError: boom: z" in plain
    assert f"The run ended: {english}" not in plain
