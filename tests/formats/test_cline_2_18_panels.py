"""The real Cline CLI 2.18.0 (Cline core 3.82.0) on scripted tasks: each kind of message its chat
panel shows, read from the task folder's ``ui_messages.json`` (what the panel showed), from the
``api_conversation_history.json`` beside it, and from the CLI's ``--json`` output, which prints
the same messages as JSON lines (``tests/fixtures/cline/cline-cli-2.18.0_tasks/``,
``cline-cli-2.18.0_json/``; recipes in ``tests/fixtures/SOURCES.md``).

The scripted server answered with XML tool tags and usage ``prompt 1000n+7, completion 10n+3,
100(n-1) cached`` for its n-th response; the OpenAI-compatible handler passes ``prompt_tokens``
on with the cached tokens in it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold import AssistantText, SystemNotice, ToolCall, UserMessage
from turnfold.caches import CACHE_ENV
from turnfold.model import AbortMarker, AssistantError, PendingAction, Thinking, Transcript
from turnfold.process import Turn, project
from turnfold.session import session_facts
from turnfold.tools import tool_category
from turnfold.usage import transcript_tokens

CLINE = Path(__file__).parents[1] / "fixtures" / "cline"
TASKS = CLINE / "cline-cli-2.18.0_tasks"
JSON = CLINE / "cline-cli-2.18.0_json"
#: The ``ask`` task folder cut at the edit that waits for approval.
WAITING = CLINE / "cline-cli-2.18.0_tasks_trimmed" / "ask-approval"
PANEL_WARNING = (
    "read as what Cline's chat panel showed: the model's own messages "
    "(api_conversation_history.json) are beside it; load that file for them"
)


def panel(name: str) -> Transcript:
    return turnfold.load(TASKS / name / "ui_messages.json")


def usages(transcript: Transcript) -> list[tuple[str, int, int, int | None]]:
    return [
        (type(e).__name__, e.usage.input_tokens, e.usage.output_tokens, e.usage.cache_read_tokens)
        for e in transcript.entries
        if isinstance(e, (AssistantText, Thinking, ToolCall)) and e.usage is not None
    ]


def notices(transcript: Transcript) -> list[tuple[str, str | None, str]]:
    return [(e.level, e.subtype, e.text) for e in transcript.entries if isinstance(e, SystemNotice)]


# --- ui_messages.json: edits, reasoning, a failed edit, a question yolo mode answered ----------


def test_edits_reasoning_and_a_failed_edit_as_the_panel_showed_them() -> None:
    transcript = panel("edits")
    assert [w.reason for w in transcript.warnings] == [PANEL_WARNING]
    assert [e.text for e in transcript.entries if isinstance(e, Thinking)] == [
        "TF-REASON-1: create the file first.",
        "TF-REASON-2: now the notes.",
    ]
    calls = transcript.tool_calls()
    # The panel shows the calls as its kinds (say: tool, "newFileCreated",
    # "editedExistingFile"): each is the tool the model called, as the result's header names it.
    assert [(c.name, c.status, c.description) for c in calls] == [
        ("write_to_file", "success", "hello.py"),
        ("replace_in_file", "success", "notes.txt"),
        # say: diff_error (written partial): the edit whose SEARCH block matched nothing.
        ("replace_in_file", "error", "notes.txt"),
    ]
    assert [tool_category(c.name) for c in calls] == ["write", "edit", "edit"]
    new, edit, failed = calls
    assert new.args["content"] == 'def hello():\n    return "TF-HELLO"'
    assert edit.args["content"] == (
        "------- SEARCH\nTF-NOTE-LINE: the line the edit replaces.\n=======\n"
        "TF-NOTE-LINE: replaced by the edit.\n+++++++ REPLACE"
    )
    assert edit.args["startLineNumbers"] == [2]
    assert new.result is not None
    assert edit.result is not None
    assert failed.result is not None
    assert new.result.text.startswith("The content was successfully saved to hello.py.")
    assert "TF-NOTE-LINE: replaced by the edit." in edit.result.text
    assert failed.args == {"path": "notes.txt"}
    assert failed.result.text.startswith(
        "The tool execution failed with the following error:\n<error>\nThe SEARCH block:\n"
        "TF-NOT-THERE\n...does not match anything in the file."
    )
    # The question yolo mode answered itself: the panel shows only its notice.
    assert notices(transcript) == [
        (
            "info",
            "info",
            '[YOLO MODE] Auto-responding to question: "TF-QUESTION: which greeting should '
            'hello() return?"',
        )
    ]
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts[-1] == "TF-DONE-EDITS: wrote hello.py and edited notes.txt."


def test_a_response_shown_only_as_a_notice_leaves_every_request_s_usage_as_the_total() -> None:
    transcript = panel("edits")
    # The 4th response (the question yolo mode answered) has no entry to carry its usage.
    assert usages(transcript) == [
        ("AssistantText", 1007, 13, 0),
        ("Thinking", 2007, 23, 100),
        ("AssistantText", 3007, 33, 200),
        ("AssistantText", 5007, 53, 400),
    ]
    assert transcript.metadata["usage"] == {
        "input_tokens": 15035, "output_tokens": 165, "cache_read_tokens": 1000,
        "cache_write_tokens": 0,
    }  # fmt: skip
    assert transcript.metadata["api_requests"] == 5


def test_the_history_beside_it_holds_the_same_calls_and_no_empty_second_result() -> None:
    transcript = turnfold.load(TASKS / "edits" / "api_conversation_history.json")
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("write_to_file", "success"),
        ("replace_in_file", "success"),
        ("replace_in_file", "error"),
        ("ask_followup_question", "success"),
    ]
    assert (
        calls[2].args["diff"] == "------- SEARCH\nTF-NOT-THERE\n=======\nTF-NEVER\n+++++++ REPLACE"
    )
    assert calls[3].result is not None
    assert calls[3].result.text.startswith("[YOLO MODE: User input is not available")
    # Cline sends "[replace_in_file for 'notes.txt'] Result:\n(tool did not return anything)"
    # after the failed edit's error: no one's words.
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "TF-EDITS: write hello.py and fix the notes."
    ]
    assert [e.text for e in transcript.entries if isinstance(e, Thinking)] == [
        "TF-REASON-1: create the file first.",
        "TF-REASON-2: now the notes.",
    ]


# --- a question, an edit awaiting approval, the user's words -----------------------------------


def history(name: str) -> Transcript:
    return turnfold.load(TASKS / name / "api_conversation_history.json")


def said(transcript: Transcript) -> list[tuple[str, str]]:
    return [
        (type(e).__name__, e.text)
        for e in transcript.entries
        if isinstance(e, (UserMessage, AssistantText, SystemNotice))
    ]


def test_the_answer_the_history_never_saved_is_the_panel_s_with_its_request_s_usage() -> None:
    """The CLI stops at the ``completion_result`` it shows, before Cline saves that response to
    the history (it does when the stream ends): the history ends with the user's message."""
    transcript = history("edits")
    assert transcript.warnings == []
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "TF-DONE-EDITS: wrote hello.py and edited notes.txt."
    assert answer.timestamp is not None
    assert answer.timestamp.startswith("2026-12-05T10:35:17.244")
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (5007, 53)
    assert answer.usage.cache_read_tokens == 400
    # the four calls the history holds, not repeated from the panel
    assert [c.name for c in transcript.tool_calls()] == [
        "write_to_file", "replace_in_file", "replace_in_file", "ask_followup_question",
    ]  # fmt: skip
    assert said(history("ask"))[-2:] == [
        ("UserMessage", "TF-NO: do not write it, just finish."),
        ("AssistantText", "TF-DONE-ASK: answered and left the file alone."),
    ]


def test_the_task_starts_when_the_panel_said_it_as_the_json_output_does() -> None:
    """The history stamps its first message when the first request is built (10:35:08.548),
    a second after the user gave the task (``say: task``, 10:35:07.516): the session starts
    then, in the folder as in the CLI's --json output of the same run."""
    folder, printed = history("edits"), turnfold.load(JSON / "edits.jsonl")
    task = folder.entries[0]
    assert isinstance(task, UserMessage)
    assert task.timestamp == "2026-12-05T10:35:07.516000+00:00"
    assert session_facts(folder).started == session_facts(printed).started
    assert session_facts(folder).duration_s == pytest.approx(9.728)


def test_what_only_the_panel_records_is_put_where_it_happened_in_the_history() -> None:
    limit = said(history("mistake-limit"))
    assert [kind for kind, _ in limit] == [
        "UserMessage", "AssistantText", "SystemNotice", "AssistantText", "SystemNotice",
        "AssistantText", "SystemNotice", "SystemNotice", "UserMessage", "AssistantText",
    ]  # fmt: skip
    assert limit[6][1].startswith("too many consecutive mistakes: Cline uses complex prompts")
    assert limit[7][1].startswith("[TASK RESUMPTION]")
    assert limit[-1] == ("AssistantText", "TF-DONE-LIMIT: guided by the user.")
    failed = history("api-error")
    assert [type(e).__name__ for e in failed.entries] == [
        "UserMessage", *["SystemNotice"] * 4, "AssistantError",
    ]  # fmt: skip
    assert failed.entries[-1].message == "500 TF-SERVER-DOWN: the scripted server failed"
    yolo = said(history("yolo-mistakes"))
    assert yolo[-1] == (
        "SystemNotice",
        "[YOLO MODE] Task failed: Too many consecutive mistakes (2). The model may not be "
        "capable enough for this task. Consider using a more capable model.",
    )
    assert len(yolo) == 5  # the texts are the history's, not repeated from the panel


def test_a_question_the_user_answered_and_an_edit_never_approved() -> None:
    transcript = panel("ask")
    said = [
        (type(e).__name__, e.text)
        for e in transcript.entries
        if isinstance(e, (UserMessage, AssistantText))
    ]
    assert said == [
        ("UserMessage", "TF-ASK: ask me before writing hello.py."),
        ("AssistantText", "TF-TEXT-ASK: I need to know one thing."),
        ("AssistantText", "TF-QUESTION: which greeting should hello() return?"),  # ask: followup
        ("UserMessage", "TF-ANSWER: return TF-HI please."),  # say: user_feedback
        ("UserMessage", "TF-NO: do not write it, just finish."),
        ("AssistantText", "TF-DONE-ASK: answered and left the file alone."),
    ]
    # ask: tool waited for approval until the CLI timed out; the resumed task never ran it.
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("write_to_file", "cancelled")
    assert call.args["path"] == "hello.py"
    assert call.result is None
    assert [n[1] for n in notices(transcript)] == ["task_resumption", "task_resumption"]
    assert [e.text for e in transcript.entries if isinstance(e, Thinking)] == [
        "TF-REASON-ASK: the user answered."
    ]


def test_an_edit_still_waiting_for_approval_is_confirming() -> None:
    """The ``ask`` run's folder cut at its ``ask: tool`` (the first 9 panel messages and 4
    history messages, unedited): as the folder stood while the edit waited for approval."""
    transcript = turnfold.load(WAITING / "ui_messages.json")
    (call,) = transcript.tool_calls()
    # No request followed it to name the tool: the panel's kind says it (a new file).
    assert (call.name, call.status) == ("write_to_file", "confirming")
    assert call.args["path"] == "hello.py"
    assert call.result is None
    pending = transcript.entries[-1]
    assert isinstance(pending, PendingAction)
    assert (pending.action, pending.text, pending.call_id) == (
        "permission", "Approve write_to_file?", call.call_id,
    )  # fmt: skip


def test_the_history_beside_a_waiting_approval_has_its_call_confirming() -> None:
    transcript = turnfold.load(WAITING / "api_conversation_history.json")
    assert transcript.warnings == []
    # The question was answered by resuming the task: only the last ask can still wait, and
    # the question the resume dropped never got its answer (cancelled).
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("ask_followup_question", "cancelled"),
        ("write_to_file", "confirming"),
    ]
    write = transcript.tool_calls()[-1]
    assert write.args["path"] == "hello.py"
    pending = transcript.entries[-1]
    assert isinstance(pending, PendingAction)
    assert (pending.action, pending.text, pending.call_id) == (
        "permission", "Approve write_to_file?", write.call_id,
    )  # fmt: skip


def test_an_approval_ask_still_streaming_or_answered_waits_for_nothing(tmp_path: Path) -> None:
    """Hand-edited from the cut folder: an ask still ``partial`` (the model's stream cut off)
    was never put to the user; a lone history (no panel beside it) says nothing of an ask."""
    messages = json.loads((WAITING / "ui_messages.json").read_text())
    messages[-1]["partial"] = True
    (tmp_path / "ui_messages.json").write_text(json.dumps(messages))
    shutil.copy(WAITING / "api_conversation_history.json", tmp_path)
    for name in ("ui_messages.json", "api_conversation_history.json"):
        transcript = turnfold.load(tmp_path / name)
        assert transcript.tool_calls()[-1].status == "unknown"
        assert not [e for e in transcript.entries if isinstance(e, PendingAction)]
    (tmp_path / "ui_messages.json").unlink()
    lone = turnfold.load(tmp_path / "api_conversation_history.json")
    assert lone.tool_calls()[-1].status == "unknown"


def test_an_mcp_call_waiting_for_approval(tmp_path: Path) -> None:
    """Hand-made from the cut folder and Cline's ``ClineAskUseMcpServer`` (``{serverName, type,
    toolName, arguments, uri}``, ``src/shared/ExtensionMessage.ts``): the last ask is an MCP
    tool's, which waits; the same ask answered (a request after it) does not."""
    messages = json.loads((WAITING / "ui_messages.json").read_text())
    request = {"serverName": "weather", "type": "use_mcp_tool", "toolName": "get_forecast",
               "arguments": '{"city": "Paris"}'}  # fmt: skip
    messages[-1] = {**messages[-1], "ask": "use_mcp_server", "text": json.dumps(request)}
    (tmp_path / "ui_messages.json").write_text(json.dumps(messages))
    transcript = turnfold.load(tmp_path / "ui_messages.json")
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("use_mcp_tool", "confirming")
    assert call.args == {"serverName": "weather", "toolName": "get_forecast",
                         "arguments": '{"city": "Paris"}'}  # fmt: skip
    assert isinstance(transcript.entries[-1], PendingAction)
    assert transcript.entries[-1].text == "Approve use_mcp_tool?"
    assert not [w for w in transcript.warnings if "use_mcp_server" in w.reason]
    answered = {"ts": messages[-1]["ts"] + 1, "type": "ask", "ask": "resume_task", "text": ""}
    (tmp_path / "ui_messages.json").write_text(json.dumps([*messages, answered]))
    (call,) = turnfold.load(tmp_path / "ui_messages.json").tool_calls()
    assert call.status == "cancelled"  # resuming the task dropped it: it never ran


def test_an_option_the_user_picked_is_their_answer(tmp_path: Path) -> None:
    """Hand-made from the real file: the CLI answers a question only with the user's words,
    but the panel's option buttons write the pick into the question (``selected``)."""
    messages = json.loads((TASKS / "ask" / "ui_messages.json").read_text())
    question = next(m for m in messages if m.get("ask") == "followup")
    question["text"] = json.dumps({**json.loads(question["text"]), "selected": "TF-HI"})
    (tmp_path / "ui_messages.json").write_text(json.dumps(messages))
    entries = turnfold.load(tmp_path / "ui_messages.json").entries
    at = next(i for i, e in enumerate(entries) if getattr(e, "text", "").startswith("TF-QUESTION"))
    assert isinstance(entries[at + 1], UserMessage)
    assert entries[at + 1].text == "TF-HI"


# --- errors: a failed request, the mistake limit ------------------------------------------------


def test_a_request_that_failed_its_retries_is_an_error() -> None:
    transcript = panel("api-error")
    assert [w.reason for w in transcript.warnings] == [PANEL_WARNING]
    assert notices(transcript) == [
        ("warning", "error_retry", f"request failed (attempt {n} of 3): 500 TF-SERVER-DOWN: "
         "the scripted server failed") for n in (1, 2, 3)
    ] + [
        ("warning", "error_retry", "request failed (attempt 3 of 3, no retry left): "
         "500 TF-SERVER-DOWN: the scripted server failed")
    ]  # fmt: skip
    errors = [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert [e.message for e in errors] == ["500 TF-SERVER-DOWN: the scripted server failed"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["say/api_req_retried"] == {"ignored": 3}


def test_the_mistake_limit_and_the_nudges_before_it() -> None:
    transcript = panel("mistake-limit")
    assert [w.reason for w in transcript.warnings] == [PANEL_WARNING]
    nudge = (
        "[ERROR] You did not use a tool in your previous response! Please retry with a tool use."
    )
    assert notices(transcript)[:3] == [
        ("warning", "no_tool_used", nudge),
        ("warning", "no_tool_used", nudge),
        (
            "warning",
            "mistake_limit_reached",
            "too many consecutive mistakes: Cline uses complex prompts and iterative task "
            "execution that may be challenging for less capable models. For best results, it's "
            "recommended to use Claude 4.5 Sonnet for its advanced agentic coding capabilities.",
        ),
    ]
    users = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert users == ["TF-LIMIT: talk without tools.", "TF-GUIDE: use attempt_completion."]
    assert usages(transcript)[-1] == ("AssistantText", 4007, 43, 300)


def test_yolo_mode_stops_at_the_mistake_limit_with_an_error() -> None:
    transcript = panel("yolo-mistakes")
    assert notices(transcript)[-1] == (
        "error",
        "error",
        "[YOLO MODE] Task failed: Too many consecutive mistakes (2). The model may not be "
        "capable enough for this task. Consider using a more capable model.",
    )


def test_a_lone_copy_says_the_history_was_not_found(tmp_path: Path) -> None:
    shutil.copy(TASKS / "mistake-limit" / "ui_messages.json", tmp_path / "ui_messages.json")
    transcript = turnfold.load(tmp_path / "ui_messages.json")
    assert [w.reason for w in transcript.warnings] == [
        "read as what Cline's chat panel showed: the model's own messages "
        "(api_conversation_history.json) were not found beside it"
    ]


# --- the CLI's --json output: the same messages as JSON lines -----------------------------------

PRINTED_WARNING = (
    "read as what Cline's chat panel showed (the CLI's --json output): the model's own messages "
    "are in the task's folder (api_conversation_history.json)"
)


def test_the_json_output_is_the_panel_s_messages_with_no_usage_and_the_failed_edit() -> None:
    transcript = turnfold.load(JSON / "edits.jsonl")
    assert transcript.metadata["source_format"] == "cline"
    assert transcript.metadata["session_id"] == "1796466907484"
    assert [w.reason for w in transcript.warnings] == [PRINTED_WARNING]
    calls = transcript.tool_calls()
    # The failed edit's diff_error is partial, never printed: the next request's result is it.
    assert [(c.name, c.status, c.description) for c in calls] == [
        ("write_to_file", "success", "hello.py"),
        ("replace_in_file", "success", "notes.txt"),
        ("replace_in_file", "error", "notes.txt"),
    ]
    assert calls[2].result is not None
    assert calls[2].result.text.startswith("The tool execution failed with the following error:")
    # Each api_req_started is printed before its counts are known.
    assert usages(transcript) == []
    assert "usage" not in transcript.metadata
    assert transcript.metadata["api_requests"] == 5
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts[-1] == "TF-DONE-EDITS: wrote hello.py and edited notes.txt."


def test_the_cli_s_timeout_is_an_error_and_the_run_s_outcome() -> None:
    transcript = turnfold.load(JSON / "ask-timeout.jsonl")
    assert transcript.metadata["outcome"] == "error"
    assert notices(transcript) == [("error", "cli_error", "Timeout")]
    last_said = [e for e in transcript.entries if isinstance(e, AssistantText)][-1]
    assert last_said.text == "TF-QUESTION: which greeting should hello() return?"


def test_an_error_the_panel_said_is_not_shown_twice() -> None:
    transcript = turnfold.load(JSON / "api-error.jsonl")
    assert transcript.metadata["outcome"] == "error"
    errors = [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert [e.message for e in errors] == ["500 TF-SERVER-DOWN: the scripted server failed"]
    assert not [n for n in notices(transcript) if n[1] == "cli_error"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["error"] == {"mapped": 1}


def test_a_resumed_task_s_output_replays_it_whole() -> None:
    printed = turnfold.load(JSON / "ask-resumed.jsonl")
    shown = panel("ask")
    assert [(type(e).__name__, getattr(e, "text", None)) for e in printed.entries] == [
        (type(e).__name__, getattr(e, "text", None)) for e in shown.entries
    ]
    # The replayed requests had their counts; the last one was printed before its own.
    assert usages(printed) == usages(shown)[:2]


# --- follow-ups: every request's usage once; streams Cline cut short; asks a resume dropped -----


FIELDS = (("input", "tokensIn"), ("output", "tokensOut"), ("reads", "cacheReads"),
          ("writes", "cacheWrites"), ("cost", "cost"))  # fmt: skip


def panel_sums(folder: Path) -> dict[str, float]:
    """What the panel's ``api_req_started`` messages add up to: the truth to check against."""
    sums = {"input": 0.0, "output": 0.0, "reads": 0.0, "writes": 0.0, "cost": 0.0}
    for message in json.loads((folder / "ui_messages.json").read_text()):
        if message.get("say") == "api_req_started":
            info = json.loads(message["text"])
            for key, name in FIELDS:
                sums[key] += info.get(name) or 0
    return sums


def test_every_request_s_usage_is_counted_once_in_the_history_s_totals() -> None:
    """The ``edits`` folder holds one request more than saved responses (the answer the history
    never got): its responses' requests are found by ``conversationHistoryIndex``, not only
    when the counts match, so their cache reads (100, 200, 300) are not lost."""
    edits = history("edits")
    assert [u[3] for u in usages(edits)] == [0, 100, 200, 300, 400]
    for folder in sorted(TASKS.iterdir()):
        tokens = transcript_tokens(history(folder.name)).own
        sums = panel_sums(folder)
        counted = [tokens.get(f"{name}_tokens", 0) for name in ("input", "output", "cache_read")]
        counted.append(tokens.get("cache_write_tokens", 0))
        expected = [sums["input"], sums["output"], sums["reads"], sums["writes"]]
        assert counted == expected, folder.name


def test_a_request_no_saved_response_answered_still_counts(tmp_path: Path) -> None:
    """Hand-edited from ``edits``: a request whose task was killed mid-stream (its response
    never saved; the resumed task's request has the same ``conversationHistoryIndex``) is no
    response's, and its tokens are added to the session's."""
    task = tmp_path / "task"
    shutil.copytree(TASKS / "edits", task)
    messages = json.loads((task / "ui_messages.json").read_text())
    second = next(
        at for at, m in enumerate(messages)
        if m.get("say") == "api_req_started" and m["conversationHistoryIndex"] == 1
    )  # fmt: skip
    killed = {**messages[second], "ts": messages[second]["ts"] - 10}
    killed["text"] = json.dumps({"request": "", "tokensIn": 900, "tokensOut": 9, "cacheReads": 50})
    messages.insert(second, killed)
    (task / "ui_messages.json").write_text(json.dumps(messages))
    transcript = turnfold.load(task / "api_conversation_history.json")
    assert [u[3] for u in usages(transcript)] == [0, 100, 200, 300, 400]
    tokens = transcript_tokens(transcript).own
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["cache_read_tokens"]) == (
        15035 + 900, 165 + 9, 1000 + 50,
    )  # fmt: skip


def test_a_response_the_user_stopped_ends_its_turn_and_cline_s_words_are_not_the_model_s() -> None:
    """``stopped``: SIGINT while the first response streamed; Cline saved what had streamed
    with ``[Response interrupted by user]`` after it (``abortStream``), then the task resumed."""
    transcript = history("stopped")
    assert transcript.warnings == []
    entries = transcript.entries
    text = entries[1]
    assert isinstance(text, AssistantText)
    assert text.text.startswith("TF-STREAM-0 TF-STREAM-1 ")
    assert text.text.rsplit(" ", 1)[-1].startswith("TF-STREAM-")  # what had streamed, no more
    assert "interrupted" not in text.text
    stop = entries[2]
    assert isinstance(stop, AbortMarker)
    assert stop.reason == "Response interrupted by user"
    assert [e.subtype for e in entries if isinstance(e, SystemNotice)] == ["task_resumption"]
    assert said(transcript)[-2:] == [
        ("UserMessage", "TF-AFTER-STOP: finish now."),
        ("AssistantText", "TF-DONE-TF-STOP"),
    ]
    assert session_facts(transcript).turns == 2
    assert not any(isinstance(e, AssistantError) for e in entries)


def test_a_stream_that_failed_is_an_error_after_what_it_said() -> None:
    """``stream-broke``: the server sent an error chunk mid-stream; Cline saved the text with
    ``[Response interrupted by API Error]``, kept the failure on the request
    (``streamingFailedMessage``) and said it in a retry's warning; its own retry answered.
    The panel, which never got the rest of the text, shows the same warning and error."""
    broke = "TF-STREAM-BROKE: the scripted server failed mid-stream"
    transcript = history("stream-broke")
    assert transcript.warnings == []
    kinds = [(type(e).__name__, getattr(e, "text", None) or getattr(e, "message", None))
             for e in transcript.entries]  # fmt: skip
    assert kinds[1:4] == [
        ("SystemNotice", f"request failed (attempt 1 of 3): {broke}"),
        ("AssistantText", "TF-STREAM-0 TF-STREAM-1 TF-STREAM-2 TF-STREAM-3 TF-STREAM-4"),
        ("AssistantError", broke),
    ]
    assert kinds[-1] == ("AssistantText", "TF-DONE-TF-BREAK")
    shown = panel("stream-broke")
    kinds = [(type(e).__name__, getattr(e, "text", None) or getattr(e, "message", None))
             for e in shown.entries]  # fmt: skip
    assert kinds[1:4] == [
        ("AssistantText", "TF-STREAM-0"),  # what the panel had shown when the stream broke
        ("SystemNotice", f"request failed (attempt 1 of 3): {broke}"),
        ("AssistantError", broke),
    ]


def test_the_request_s_recorded_failure_is_the_stream_s_error(tmp_path: Path) -> None:
    """Hand-edited from ``stream-broke`` as Cline before its automatic retries (3.20) wrote it:
    no ``error_retry``, the request's own ``streamingFailedMessage`` the only word of the
    failure: the history's error and the panel's are that message."""
    task = tmp_path / "task"
    shutil.copytree(TASKS / "stream-broke", task)
    messages = json.loads((task / "ui_messages.json").read_text())
    messages = [m for m in messages if m.get("say") != "error_retry"]  # before auto-retries
    first = next(m for m in messages if m.get("say") == "api_req_started")
    failure = json.dumps({"message": "TF-STREAM-BROKE: the connection dropped"})
    info = {**json.loads(first["text"]), "cancelReason": "streaming_failed"}
    first["text"] = json.dumps({**info, "streamingFailedMessage": failure})
    (task / "ui_messages.json").write_text(json.dumps(messages))
    for name in ("api_conversation_history.json", "ui_messages.json"):
        transcript = turnfold.load(task / name)
        errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
        assert errors == ["TF-STREAM-BROKE: the connection dropped"], name
        at = next(i for i, e in enumerate(transcript.entries) if isinstance(e, AssistantError))
        assert isinstance(transcript.entries[at - 1], AssistantText)  # after what it said
        assert transcript.entries[at - 1].text.startswith("TF-STREAM-0")


def test_a_response_the_panel_says_the_user_cancelled_is_stopped(tmp_path: Path) -> None:
    """Hand-edited from ``stopped``: the request with ``cancelReason: user_cancelled``, as Cline
    before 3.20 kept it (3.82's last usage update overwrites it, as in this run); the panel
    alone shows the stop after the text."""
    task = tmp_path / "task"
    shutil.copytree(TASKS / "stopped", task)
    messages = json.loads((task / "ui_messages.json").read_text())
    first = next(m for m in messages if m.get("say") == "api_req_started")
    first["text"] = json.dumps({**json.loads(first["text"]), "cancelReason": "user_cancelled"})
    (task / "ui_messages.json").write_text(json.dumps(messages))
    transcript = turnfold.load(task / "ui_messages.json")
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds[:3] == ["UserMessage", "AssistantText", "AbortMarker"]
    assert transcript.entries[2].reason == "Response interrupted by user"
    assert kinds.count("AbortMarker") == 1
    assert "AssistantError" not in kinds


def test_a_question_and_an_edit_a_resumed_task_dropped_are_cancelled_in_the_history() -> None:
    """``ask``: the question, then the edit, waited for the user when the CLI timed out; the
    resume rejected their asks (``abortTask``), so neither got a result: as the panel shows."""
    transcript = history("ask")
    assert [(c.name, c.status, c.result) for c in transcript.tool_calls()] == [
        ("ask_followup_question", "cancelled", None),
        ("write_to_file", "cancelled", None),
    ]
    (shown,) = panel("ask").tool_calls()
    assert shown.status == "cancelled"


def test_the_cli_s_output_of_a_stopped_run_says_what_streamed_then_the_stop() -> None:
    """``stopped.jsonl``: the CLI prints the text once no longer partial (``abortStream``); its
    signal handler's line before it (``\\x1b[33mSIGINT received, shutting down...\\x1b[0m``,
    ``setupSignalHandlers``) is no JSON but the stop: the turn is stopped, not completed, and
    the line is no warning of invalid JSON. It had been warned of, the turn "completed"."""
    transcript = turnfold.load(JSON / "stopped.jsonl")
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["UserMessage", "AssistantText", "AbortMarker"]  # after what it flushed
    text, stop = transcript.entries[1:]
    assert isinstance(text, AssistantText)
    assert isinstance(stop, AbortMarker)
    assert text.text.startswith("TF-STREAM-0 ")
    assert "interrupted" not in text.text
    assert stop.reason == "SIGINT received, shutting down..."
    assert [w.line for w in transcript.warnings] == [None]  # the panel's, no line's
    assert [t.header.status for t in project(transcript) if isinstance(t, Turn)] == ["stopped"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["(signal line)"] == {"mapped": 1}
    assert transcript.accounting.unaccounted == []


def test_the_unsaved_response_s_request_counts_when_nothing_carries_its_usage(
    tmp_path: Path,
) -> None:
    """Hand-edited from ``edits``: the last response, never saved, shows only an error (no text
    to carry its request's usage): its tokens still count in the session's."""
    task = tmp_path / "task"
    shutil.copytree(TASKS / "edits", task)
    messages = json.loads((task / "ui_messages.json").read_text())
    answer = next(m for m in messages if m.get("say") == "completion_result")
    answer.update(say="error", text="TF-SOMETHING-BROKE")
    (task / "ui_messages.json").write_text(json.dumps(messages))
    transcript = turnfold.load(task / "api_conversation_history.json")
    assert [e.text for e in transcript.entries if isinstance(e, SystemNotice)][-1] == (
        "TF-SOMETHING-BROKE"
    )
    tokens = transcript_tokens(transcript).own
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["cache_read_tokens"]) == (
        15035, 165, 1000,
    )  # fmt: skip


def test_C2_C4_a_task_folder_is_one_row_read_again_when_its_panel_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its history and its panel each made a row: every task counted twice (tokens, cost, runs).
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS / "edits", tasks / "edits")
    first = turnfold.scan(tasks, workers=1)
    assert [Path(key).name for key in first.keys] == ["api_conversation_history.json"]
    assert first.skipped == 0  # the panel and the metadata are read with it
    panel = tasks / "edits" / "ui_messages.json"
    messages = json.loads(panel.read_text())
    messages.append({"ts": messages[-1]["ts"] + 1000, "type": "say", "say": "text",
                     "text": "TF-LATE: a word the panel kept after the history"})  # fmt: skip
    panel.write_text(json.dumps(messages))
    again = turnfold.scan(tasks, workers=1)
    assert again.read == 2  # the panel and, for it, the history
    assert len(again) == 1


def test_L1_a_task_folder_loads_as_its_history_and_a_panel_only_folder_as_its_panel() -> None:
    # load(folder) was refused as a plain folder, though a scan reads a task folder as a run.
    folder = turnfold.load(TASKS / "edits")
    assert folder == turnfold.load(TASKS / "edits" / "api_conversation_history.json")
    assert folder.metadata["source_format"] == "cline"
    panel = CLINE / "cline-cli-2.18.0_ui-messages"
    assert turnfold.load(panel).entries == turnfold.load(panel / "ui_messages.json").entries
