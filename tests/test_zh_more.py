"""More of what a reader writes itself, said in the view's language: a tool's result in the
reader's words (an approver's decision, a denial, a call that never ran), words a reader puts
in a notice's values (Cline's token kinds, ADK's "a tool"), and searches in Chinese that find
them as a Chinese view shows them (spec P-11, C-6).

The English every entry stores, and an English view shows, is what it was before: only a
Chinese view says it otherwise. The transcripts are real fixtures (``tests/fixtures/SOURCES.md``)
or, where noted, shaped as the existing tests of their reader shape them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.adk_raised_calls import raised_among
from tests.formats import test_cursor_stream_json as cursor
from tests.formats.test_cline_panel_kinds import _restored
from tests.localized_views import plain_text, quiet_load, view_nodes, widget_in
from turnfold.i18n import catalog, localized
from turnfold.model import (
    AssistantError,
    SystemNotice,
    ToolCall,
    ToolResult,
    Transcript,
    Wording,
)
from turnfold.usage import TOKEN_FIELDS

FIXTURES = Path(__file__).parent / "fixtures"
STOPS = FIXTURES / "harnesses/inspect-stops/stops_four-samples.eval"


def _shown_results(transcript: Transcript, locale: str) -> dict[str, str]:
    """Each tool row's result text as a view in ``locale`` shows it, by the row's key."""
    return {
        str(node["key"]): str(node["result"]["text"])
        for node in view_nodes(transcript, locale)
        if node.get("kind") == "tool" and node.get("result")
    }


# --- a tool's result in the reader's words ------------------------------------------------------


def _inspect_terminated() -> Transcript:
    """The real Inspect log: an approver terminated the ``bash`` call."""
    return quiet_load(STOPS, sample="terminate", epoch=1)


def _codex_exec_declined() -> Transcript:
    """The hand-made ``codex exec --json`` stream (codex-rs exec_events.rs): a declined command."""
    return quiet_load(FIXTURES / "agents/codex-exec-json/hand-made_exec-json_every-item.jsonl")


def _cursor_rejected(reason: str) -> Transcript:
    """A Cursor agent stream shaped as tests/formats/test_cursor_stream_json.py shapes it: a
    shell call the permission rules rejected."""
    args = {"command": "rm x", "workingDirectory": ""}
    refused = {"rejected": {**args, "reason": reason, "isReadonly": False}}
    return quiet_load(
        cursor.jsonl(
            cursor.init(),
            cursor.said("user", "go"),
            cursor.tool("started", "c2", "shellToolCall", args),
            cursor.tool("completed", "c2", "shellToolCall", args, refused),
            cursor.result(),
        )
    )


def _langchain_invalid_call() -> Transcript:
    """The real LangChain run's ``messages_to_dict`` whose garbled call is in
    ``invalid_tool_calls``, that call's ``error`` left out (LangChain's field is optional) and
    the ``ToolMessage`` create_agent answered it with too: nothing says why it did not run."""
    path = FIXTURES / "frameworks/langchain/langchain_v1.8.3_messages-to-dict_v1-blocks.json"
    messages = json.loads(path.read_text(encoding="utf-8"))
    (invalid,) = [m for m in messages if m.get("data", {}).get("invalid_tool_calls")]
    for call in invalid["data"]["invalid_tool_calls"]:
        call.pop("error")
        messages = [m for m in messages if m["data"].get("tool_call_id") != call["id"]]
    return quiet_load(messages)


def _responses_denied(reason: str | None) -> Transcript:
    """A stored Responses conversation with a hosted MCP server whose call the user denied,
    shaped as tests/formats/test_openai.py shapes it (OpenAI's "Remote MCP" guide)."""
    answer: dict[str, Any] = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                              "approve": False}  # fmt: skip
    if reason is not None:
        answer["reason"] = reason
    return quiet_load(
        [
            {"role": "user", "content": "What transport does codex use?"},
            {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "deepwiki",
             "name": "ask_question", "arguments": '{"repoName": "openai/codex"}'},
            answer,
            {"role": "assistant", "content": "I could not look it up."},
        ],
        format="openai-responses",
    )  # fmt: skip


#: (how the transcript is made, its call's stored English (as before), the same in Chinese).
RESULTS = [
    (
        _inspect_terminated,
        "The approver (gatekeeper) decided to terminate: shutting the host down is not allowed",
        "审批者（gatekeeper）决定终止：shutting the host down is not allowed",
    ),
    (_codex_exec_declined, "declined: the command was not run", "已拒绝：命令未运行"),
    (lambda: _cursor_rejected(""), "Rejected: the tool did not run.", "已拒绝：工具未运行。"),
    (lambda: _cursor_rejected("not allowed"), "Rejected: not allowed", "已拒绝：not allowed"),
    (_langchain_invalid_call, "invalid tool call (not run)", "无效的工具调用（未运行）"),
    (lambda: _responses_denied(None), "denied by the user", "已被用户拒绝"),
    (lambda: _responses_denied("not that repo"), "denied: not that repo", "已拒绝：not that repo"),
]
RESULT_IDS = ["inspect", "codex-exec", "cursor", "cursor-reason", "langchain", "responses",
              "responses-reason"]  # fmt: skip


def _worded_call(transcript: Transcript, english: str) -> ToolCall:
    (call,) = [c for c in transcript.tool_calls() if c.result and c.result.wording]
    assert call.result is not None
    assert call.result.text == english  # the stored English, as before
    return call


@pytest.mark.parametrize(("make", "english", "chinese"), RESULTS, ids=RESULT_IDS)
def test_a_result_the_reader_wrote_is_chinese_in_a_chinese_view(
    make: Any, english: str, chinese: str
) -> None:
    transcript = make()
    call = _worded_call(transcript, english)
    zh = _shown_results(transcript, "zh")
    assert zh[call.id] == chinese
    assert english not in zh.values()


@pytest.mark.parametrize(("make", "english", "chinese"), RESULTS, ids=RESULT_IDS)
def test_an_english_view_shows_the_stored_result(make: Any, english: str, chinese: str) -> None:
    transcript = make()
    call = _worded_call(transcript, english)
    assert _shown_results(transcript, "en")[call.id] == english


def test_the_source_s_own_result_text_is_the_same_in_every_view() -> None:
    """The other calls' results (an MCP server's error, a patch's files, a command's output)
    are the source's words: no wording, shown alike in both languages."""
    transcript = _codex_exec_declined()
    others = {c.id for c in transcript.tool_calls() if c.result and not c.result.wording}
    assert len(others) >= 3
    zh, en = _shown_results(transcript, "zh"), _shown_results(transcript, "en")
    assert others <= set(en)
    assert {k: zh[k] for k in others} == {k: en[k] for k in others}


@pytest.mark.parametrize("layout", ["jsonl", "json"])
def test_a_dump_keeps_a_result_s_wording_and_an_old_dump_loads_unchanged(layout: str) -> None:
    transcript = _inspect_terminated()
    english = RESULTS[0][1]
    loaded = quiet_load(transcript.dump(layout=layout))  # type: ignore[arg-type]
    assert loaded == transcript
    call = _worded_call(loaded, english)
    assert _shown_results(loaded, "zh")[call.id] == RESULTS[0][2]
    # A dump from before: no wording on any result. It loads with no warning, as it says.
    old = _without_wording(transcript.dump(layout="jsonl"))
    assert '"wording"' not in old
    before = quiet_load(old)
    assert before.warnings == transcript.warnings
    (bash,) = [c for c in before.tool_calls() if c.name == "bash"]
    assert bash.result == ToolResult(text=english)
    assert _shown_results(before, "zh")[bash.id] == english


def _without_wording(dump: str) -> str:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "wording"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    lines = (json.loads(line) for line in dump.splitlines())
    return "".join(json.dumps(strip(line), ensure_ascii=False) + "\n" for line in lines)


def test_a_hostile_result_wording_in_a_dump_is_a_warning_naming_its_line() -> None:
    header = {"turnfold": 1, "metadata": {}}
    bad = {"kind": "tool_call", "call_id": "c1", "name": "bash", "status": "error",
           "result": {"text": "x", "wording": {"key": "reader.denied.said",
                                              "params": {"said": {"a": 1}}}}}  # fmt: skip
    loaded = turnfold.load("".join(json.dumps(line) + "\n" for line in (header, bad)))
    assert [(w.line, w.reason) for w in loaded.warnings] == [
        (2, "the params of wording 'reader.denied.said' must be text")
    ]


# --- words inside a notice's values -------------------------------------------------------------


def _restore_notice(tmp_path: Path) -> tuple[Transcript, SystemNotice]:
    """A real Cline task after a checkpoint restore (as test_cline_panel_kinds makes it)."""
    _restored(tmp_path / "task")
    transcript = quiet_load(tmp_path / "task" / "ui_messages.json")
    (notice,) = [e for e in transcript.entries if isinstance(e, SystemNotice)
                 and e.subtype == "deleted_api_reqs"]  # fmt: skip
    return transcript, notice


def test_cline_s_token_kinds_in_a_restore_notice_are_chinese(tmp_path: Path) -> None:
    transcript, notice = _restore_notice(tmp_path)
    assert notice.wording is not None
    counts = {k: v for k, v in notice.wording.params.items() if k.startswith("spent.")}
    assert counts["spent.input_tokens"] == "12,021"
    # The stored English is what it was: each count then its kind's name, as Cline names it.
    spent = ", ".join(f"{n} {k.removeprefix('spent.').removesuffix('_tokens').replace('_', ' ')}"
                      for k, n in counts.items())  # fmt: skip
    assert notice.text == (
        f"a checkpoint restore deleted the messages after it; their requests' tokens ({spent})"
        " and cost stay in the session's totals"
    )
    plain = plain_text(transcript, "zh")
    assert "这些请求的 token（输入 12,021、输出 " in plain
    assert "12,021 input" not in plain
    for word in ("input", "output", "cache read", "cache write"):
        assert f" {word}" not in plain.split("这些请求的 token（", 1)[1].split("）", 1)[0]


def test_every_token_kind_has_its_word_in_both_catalogs() -> None:
    for locale in ("en", "zh"):
        for name in TOKEN_FIELDS:
            assert "{value}" in catalog(locale)[f"reader.spent.{name}"], (locale, name)


def test_a_list_of_words_a_dump_cannot_say_shows_the_stored_text() -> None:
    """An item whose word the catalog lacks (a newer turnfold's, a hostile dump's)."""
    key = "reader.restore_deleted_requests.spent"
    stored = "a checkpoint restore … (3 gremlins) …"
    assert localized(stored, key, {"spent.gremlins": "3"}, "zh") == stored
    assert localized(stored, key, {"spent.input_tokens": "3"}, "zh") == (
        "恢复检查点删除了其后的消息；这些请求的 token（输入 3）和费用仍计入会话总计"
    )


@pytest.mark.parametrize(
    ("names", "english", "chinese"),
    [
        (["explode", None], "explode or a tool raised", "explode 或某个工具抛出了"),
        ([None, "a", "b"], "a, b or a tool raised", "a、b 或某个工具抛出了"),
    ],
)
def test_an_adk_tool_with_no_name_is_a_tool_in_the_view_s_language(
    names: list[str | None], english: str, chinese: str
) -> None:
    """The real ADK run in which ``explode`` raised, its model's one call made several, one
    of them with no name (as test_i18n_notices varies it)."""
    transcript = quiet_load(raised_among(names))
    (error,) = [e for e in transcript if isinstance(e, AssistantError)]
    assert error.wording is not None
    assert error.message == f"The run ended: {english} ValueError: boom: z"
    assert "a tool" not in "".join(error.wording.params.values())
    plain = plain_text(transcript, "zh")
    assert f"运行已结束：{chinese} ValueError: boom: z" in plain
    assert "a tool" not in plain


def test_every_approver_decision_has_its_words_in_both_catalogs() -> None:
    for locale in ("en", "zh"):
        for decided in ("terminated", "rejected", "decided"):
            for key in (f"reader.approver_{decided}", f"reader.approver_{decided}.said"):
                assert key in catalog(locale), (locale, key)


# --- searching in Chinese ------------------------------------------------------------------------


def test_P11_a_search_in_chinese_finds_a_notice_and_a_result_as_shown() -> None:
    crew = quiet_load(FIXTURES / "crewai/crewai_v1.15.30_crew-output_two-tasks.json")
    (notice,) = [e for e in crew if isinstance(e, SystemNotice) and e.text == "Agent: Researcher"]
    with widget_in(crew, "zh") as widget:
        assert [hit["key"] for hit in widget.search("代理：Researcher")[0]] == [notice.id]
    stopped = _inspect_terminated()
    call = _worded_call(stopped, RESULTS[0][1])
    for locale, query in (("zh", "审批者（gatekeeper）决定终止"), ("en", "decided to terminate")):
        with widget_in(stopped, locale) as widget:
            hits, total = widget.search(query)
            assert total == 1
            assert hits[0]["key"] == call.id
            assert hits[0]["path"]  # its turn's process opens to show it


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(STOPS, folder / STOPS.name)
    shutil.copy(FIXTURES / "crewai/crewai_v1.15.30_crew-output_two-tasks.json", folder)
    return folder


def test_C6_a_corpus_search_in_either_language_finds_the_reader_s_words(runs: Path) -> None:
    corpus = turnfold.scan(runs, cache=False, workers=1)
    for query, snippet in (
        ("审批者（gatekeeper）决定终止", "审批者（gatekeeper）决定终止：shutting the host"),
        ("decided to terminate", "The approver (gatekeeper) decided to terminate"),
        ("代理：Researcher", "代理：Researcher"),
        ("Agent: Researcher", "Agent: Researcher"),
    ):
        hits = corpus.search(query)
        assert len(hits) == 1, query
        assert snippet in hits[0].snippet


def test_wording_params_stay_text_the_source_s_values() -> None:
    """The reader's words are keys; a value is the source's, inserted as it is."""
    transcript = _inspect_terminated()
    call = _worded_call(transcript, RESULTS[0][1])
    assert call.result is not None
    assert call.result.wording == Wording(
        key="reader.approver_terminated.said",
        params={"approver": "gatekeeper", "said": "shutting the host down is not allowed"},
    )
