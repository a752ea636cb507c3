"""Cline's and Roo Code's panel kinds read as what they are (a result, a notice, spent tokens),
the CLI 2.x's signal line as the stop it is, and a question's answer without Cline's wrapper.

Each had been warned of (``Cline UI message … shown as a notice``, invalid JSON) or shown raw.
The Cline cases are hand-edited from the real CLI 2.18.0 fixtures (``cline-cli-2.18.0_tasks/``,
``cline-cli-2.18.0_json/``); Roo Code's panel is hand-made in the shapes its sources write
(``packages/types/src/message.ts`` and the ``say`` calls named in each test), as no Roo Code
run can be made here (a VS Code extension)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import AssistantText, SystemNotice, UserMessage
from turnfold.formats import source
from turnfold.formats.errors import KEPT_TEXT_CHARS, MalformedLine
from turnfold.model import AbortMarker, Transcript
from turnfold.process import Turn, project
from turnfold.usage import transcript_tokens

CLINE = Path(__file__).parents[1] / "fixtures" / "cline"
TASKS = CLINE / "cline-cli-2.18.0_tasks"
STOPPED = CLINE / "cline-cli-2.18.0_json" / "stopped.jsonl"
#: Every request of the ``edits`` task, counted as its panel counts them (openai: the prompt
#: holds the cached tokens).
EDITS = {"input_tokens": 15035, "output_tokens": 165, "cache_read_tokens": 1000}


def _tokens(counts: dict[str, int]) -> dict[str, int]:
    return {k: counts.get(k, 0) for k in EDITS}


def _statuses(transcript: Transcript) -> list[str]:
    return [item.header.status for item in project(transcript) if isinstance(item, Turn)]


def _shown_as_notices(transcript: Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings if "shown as a notice" in w.reason]


# --- the CLI's line on a signal ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "\x1b[33mSIGTERM received, shutting down...\x1b[0m",  # a kill: the same handler's words
        "SIGINT received, shutting down...",  # its colours taken off (piped through a filter)
    ],
)
def test_P7_the_cli_s_signal_line_is_the_run_s_stop(tmp_path: Path, line: str) -> None:
    lines = STOPPED.read_text().splitlines()
    assert lines[3] == "\x1b[33mSIGINT received, shutting down...\x1b[0m"  # the real one
    lines[3] = line
    (tmp_path / "run.jsonl").write_text("\n".join(lines) + "\n")
    transcript = turnfold.load(tmp_path / "run.jsonl")
    stops = [e for e in transcript.entries if isinstance(e, AbortMarker)]
    assert [s.reason for s in stops] == [line.removeprefix("\x1b[33m").removesuffix("\x1b[0m")]
    assert _statuses(transcript) == ["stopped"]
    assert [w.line for w in transcript.warnings] == [None]


def test_L4_a_line_that_only_looks_like_the_signal_s_is_still_invalid_json(tmp_path: Path) -> None:
    lines = STOPPED.read_text().splitlines()
    lines[3] = "SIGINT received, shutting down... (or not)"
    (tmp_path / "run.jsonl").write_text("\n".join(lines) + "\n")
    transcript = turnfold.load(tmp_path / "run.jsonl")
    assert [w.line for w in transcript.warnings] == [None, 4]
    assert not any(isinstance(e, AbortMarker) for e in transcript.entries)
    assert _statuses(transcript) == ["completed"]


def test_L4_a_bad_line_s_marker_keeps_its_start_and_never_a_huge_copy() -> None:
    # What a reader knows a tool's own non-JSON line by; a good line pays nothing for it.
    ((_, short),) = source._careful("SIGINT received, shutting down...\r\n", 4)
    assert isinstance(short, MalformedLine)
    assert short.text == "SIGINT received, shutting down..."
    ((_, huge),) = source._careful("x" * 1_000_000 + "\n", 5)
    assert isinstance(huge, MalformedLine)
    assert huge.text == "x" * KEPT_TEXT_CHARS
    ((_, broken),) = source._careful('{"a": }\n', 6)
    assert isinstance(broken, MalformedLine)
    assert broken.text == '{"a": }'
    # The text is a clue, not the failure: two lines that failed alike are equal.
    assert MalformedLine(huge.reason) == huge


# --- requests a checkpoint restore deleted --------------------------------------------------


def _restored(task: Path) -> None:
    """``edits`` as Cline leaves it after restoring the checkpoint at its second edit
    (``checkpoints/index.ts``, ``taskAndWorkspace``): the panel cut after that message, the
    history after its results, and ``deleted_api_reqs`` saying what the deleted requests spent
    (``getApiMetrics`` of the deleted messages)."""
    shutil.copytree(TASKS / "edits", task)
    messages = json.loads((task / "ui_messages.json").read_text())
    at = 7  # the second edit's tool message (conversationHistoryIndex 3)
    requests = [m for m in messages if m.get("say") == "api_req_started"]
    for request in requests:  # a cent a request: costs the restore must keep too
        request["text"] = json.dumps({**json.loads(request["text"]), "cost": 0.01})
    deleted = [json.loads(m["text"]) for m in messages[at + 1 :] if m in requests]
    spent = {key: sum(d[key] for d in deleted) for key in ("tokensIn", "tokensOut",
             "cacheWrites", "cacheReads", "cost")}  # fmt: skip
    history = json.loads((task / "api_conversation_history.json").read_text())[: 3 + 2]
    kept = messages[: at + 1]
    kept.append({"ts": kept[-1]["ts"] + 5000, "type": "say", "say": "deleted_api_reqs",
                 "text": json.dumps(spent), "modelInfo": kept[-1]["modelInfo"],
                 "conversationHistoryIndex": len(history) - 1})  # fmt: skip
    (task / "ui_messages.json").write_text(json.dumps(kept))
    (task / "api_conversation_history.json").write_text(json.dumps(history))


@pytest.mark.parametrize("name", ["ui_messages.json", "api_conversation_history.json"])
def test_U1_the_requests_a_restore_deleted_stay_in_the_session_s_totals(
    tmp_path: Path, name: str
) -> None:
    _restored(tmp_path / "task")
    transcript = turnfold.load(tmp_path / "task" / name)
    assert _shown_as_notices(transcript) == []
    assert _tokens(transcript_tokens(transcript).own) == EDITS  # all five requests, as before
    assert transcript.metadata["cost_usd"] == pytest.approx(0.05)
    (notice,) = [e for e in transcript.entries if e.__class__ is SystemNotice
                 and e.subtype == "deleted_api_reqs"]  # fmt: skip
    assert notice.text.startswith("a checkpoint restore deleted the messages after it")
    assert "12,021 input" in notice.text  # 3007 + 4007 + 5007
    assert "stay in the session's totals" in notice.text
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


# --- Roo Code's kinds -------------------------------------------------------------------------


def _say(ts: int, say: str, text: Any = None, **more: Any) -> dict[str, Any]:
    shown = text if isinstance(text, str) or text is None else json.dumps(text)
    return {"ts": ts, "type": "say", "say": say, "text": shown, **more}


def _request(ts: int, request: str, tokens_in: int, cost: float) -> dict[str, Any]:
    info = {"request": request, "tokensIn": tokens_in, "tokensOut": 10, "cacheWrites": 0,
            "cacheReads": 0, "cost": cost}  # fmt: skip
    return _say(ts, "api_req_started", info)


def _tool(ts: int, **shown: Any) -> dict[str, Any]:
    return {"ts": ts, "type": "ask", "ask": "tool", "text": json.dumps(shown)}


#: A Roo Code task's panel: the task said as text (Task.startTask), the MCP tools warning
#: (Task.startTask), codebase_search and its results (CodebaseSearchTool), a rate-limit wait
#: (Task.maybeWaitForProviderRateLimit: the countdown, then the finished message without
#: text), the todo list the user edited (UpdateTodoListTool), an image generated
#: (GenerateImageTool), a checkpoint restore (checkpoints/index.ts: api_req_deleted).
ROO = [
    _say(1000, "text", "TF-ROO: find the parser and draw a logo."),
    _say(1001, "too_many_tools_warning", {"toolCount": 62, "serverCount": 5, "threshold": 40}),
    _request(1002, "<task>\nTF-ROO: find the parser and draw a logo.\n</task>", 100, 0.01),
    _tool(1003, tool="codebaseSearch", query="parser", path="src"),
    _say(
        1004,
        "codebase_search_result",
        {
            "tool": "codebaseSearch",
            "content": {
                "query": "parser",
                "results": [
                    {
                        "filePath": "src/parse.ts",
                        "score": 0.91,
                        "startLine": 1,
                        "endLine": 3,
                        "codeChunk": "export function parse() {}",
                    }
                ],
            },
        },
    ),
    _say(1005, "api_req_rate_limit_wait", partial=False),
    _request(1006, "[codebase_search for 'parser'] Result:\nQuery: parser", 200, 0.02),
    _tool(
        1007,
        tool="updateTodoList",
        todos=[{"id": "1", "content": "read parse.ts", "status": "pending"}],
    ),
    _say(
        1008,
        "user_edit_todos",
        {
            "tool": "updateTodoList",
            "todos": [
                {"id": "1", "content": "read parse.ts", "status": "completed"},
                {"id": "2", "content": "fix it", "status": "pending"},
            ],
        },
    ),
    _request(1009, "[update_todo_list] Result:\nUser edits todo:\n\n[x] read parse.ts", 300, 0.03),
    _tool(1010, tool="generateImage", path="logo.png", content="a logo"),
    _say(
        1011,
        "image",
        {"imageUri": "vscode-webview://x/repo/logo.png?t=1", "imagePath": "/repo/logo.png"},
    ),
    _request(1012, "[generate_image for 'logo.png'] Result:\nlogo.png", 400, 0.04),
    _say(
        1013,
        "api_req_deleted",
        {"tokensIn": 500, "tokensOut": 50, "cacheWrites": 0, "cacheReads": 0, "cost": 0.05},
    ),
    _say(1014, "completion_result", "TF-ROO-DONE"),
]


def test_H5_roo_code_s_kinds_are_results_notices_and_spent_tokens() -> None:
    transcript = turnfold.load(ROO)
    assert _shown_as_notices(transcript) == []
    calls = {c.name: c for c in transcript.tool_calls()}
    assert list(calls) == ["codebase_search", "update_todo_list", "generate_image"]
    found = calls["codebase_search"].result
    assert found is not None
    assert found.text is not None
    assert found.text.splitlines()[:5] == [
        "Query: parser", "Results:", "", "File path: src/parse.ts", "Score: 0.91"
    ]  # fmt: skip
    assert "Code Chunk: export function parse() {}" in found.text
    image = calls["generate_image"].result
    assert image is not None
    assert image.text == "/repo/logo.png"
    assert all(c.status == "success" for c in calls.values())
    notices = [(e.level, e.subtype, e.text) for e in transcript.entries
               if isinstance(e, SystemNotice)]  # fmt: skip
    assert notices[0] == (
        "warning", "too_many_tools_warning",
        "too many tools enabled: 62 tools from 5 MCP servers (keep below 40)",
    )  # fmt: skip
    assert notices[1] == (
        "info", "user_edit_todos", "the user edited the todo list:\n[x] read parse.ts\n[ ] fix it"
    )  # fmt: skip
    assert notices[2][1] == "deleted_api_reqs"
    assert transcript_tokens(transcript).own["input_tokens"] == 100 + 200 + 300 + 400 + 500
    assert transcript.metadata["cost_usd"] == pytest.approx(0.15)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["say/api_req_rate_limit_wait"] == {"ignored": 1}
    assert transcript.accounting.unaccounted == []
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "TF-ROO: find the parser and draw a logo."
    ]
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == ["TF-ROO-DONE"]


# --- the user's answer to a question ----------------------------------------------------------


def test_H5_a_question_s_result_is_the_user_s_answer_without_cline_s_wrapper(
    tmp_path: Path,
) -> None:
    """A ``tool_use`` question answered by a ``tool_result`` (Cline's native tool calls):
    ``AskFollowupQuestionToolHandler`` returns ``<answer>\\n…\\n</answer>``, the wrapper Cline
    marks the user's words with (``USER_CONTENT_TAGS``), noise to the reader; what the user
    attached after it (a file's text) is kept."""
    asked = {"type": "tool_use", "id": "toolu_q", "name": "ask_followup_question",
             "input": {"question": "Which port?"}}  # fmt: skip
    answered = '<answer>\nTF-PORT-8080\n</answer>\n\n<file_content path="a.txt">A</file_content>'
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nTF-Q\n</task>"}]},
        {"role": "assistant", "content": [asked]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_q",
                                      "content": [{"type": "text", "text": answered}]}]},
    ]  # fmt: skip
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(history))
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "cline"
    (call,) = transcript.tool_calls()
    assert call.result is not None
    assert call.result.text == 'TF-PORT-8080\n\n<file_content path="a.txt">A</file_content>'


def test_H5_roo_code_s_failed_condensing_is_a_warning_notice(tmp_path: Path) -> None:
    panel = [
        {"ts": 1700000000000, "type": "say", "say": "task", "text": "TF-ROO: go"},
        {"ts": 1700000001000, "type": "say", "say": "condense_context_error", "text": "too big"},
        {"ts": 1700000002000, "type": "say", "say": "completion_result", "text": "done"},
    ]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(panel))
    transcript = turnfold.load(path)
    assert _shown_as_notices(transcript) == []
    notices = [(e.level, e.subtype, e.text) for e in transcript.entries
               if isinstance(e, SystemNotice)]  # fmt: skip
    assert notices == [
        ("warning", "condense_context_error", "condensing the context failed: too big")
    ]
