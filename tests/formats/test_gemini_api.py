"""Gemini API conversation contents (``gemini-api``): google-genai's chat history and responses,
the REST API's JSON, a ``generateContent`` request (spec L-2; L-3 honest unknowns, X-2).

The ``gemini-api_google-genai-3.6.1_*`` fixtures were written by google-genai itself
(``tests/fixtures/messages/gemini_api_recipe.py``: a chat whose model a mock transport plays,
the SDK calling the Python tools and keeping the history); the shapes no SDK run makes (ids on
responses, blocked answers, unknown parts) are written by hand below in the REST API's JSON.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from turnfold import (
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptFormatError,
    UserMessage,
    load,
)
from turnfold.formats import gemini_api, which_format
from turnfold.formats.harnesses import mini_swe_agent
from turnfold.formats.source import from_object
from turnfold.model import Usage
from turnfold.session import session_facts

MESSAGES = Path(__file__).parents[1] / "fixtures" / "messages"
SDK = "gemini-api_google-genai-3.6.1"
HISTORY = MESSAGES / f"{SDK}_chat-history.json"
REQUEST = MESSAGES / f"{SDK}_rest-request.json"
CHAT_RESPONSE = MESSAGES / f"{SDK}_chat-response.json"
AFC_RESPONSE = MESSAGES / f"{SDK}_response_afc-history.json"
#: The 2x2 PNG the recipe's user pastes, in standard base64 (its dump writes it URL-safe).
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR42mOQm/AfiBggFAArdga1SJjwDwAAAABJRU5E"
    "rkJggg=="
)


def history() -> list[dict[str, Any]]:
    return json.loads(HISTORY.read_text(encoding="utf-8"))


def of_kind(transcript: Transcript, cls: type[Any]) -> list[Any]:
    return [e for e in transcript if isinstance(e, cls)]


def call(name: str, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "args": args}
    if call_id:
        spec["id"] = call_id
    return {"functionCall": spec}


def response(name: str, body: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "response": body}
    if call_id:
        spec["id"] = call_id
    return {"functionResponse": spec}


# --- detection ----------------------------------------------------------------------------------


def test_L2_the_list_that_read_as_mini_swe_agent_reads_as_gemini_api() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
    ]
    transcript = load(contents)
    assert transcript.metadata == {"source_format": "gemini-api"}
    prompt, made = transcript.entries
    assert isinstance(prompt, UserMessage)
    assert prompt.text == "hi"
    assert isinstance(made, ToolCall)
    assert (made.name, made.status) == ("f", "unknown")
    assert transcript.warnings == []


def test_L2_mini_swe_agent_claims_no_message_without_content() -> None:
    # Its user messages were readable (share 0.5) while the model's were not: mini-swe-agent
    # won a list of Gemini contents with no format marking it, and skipped every message.
    contents = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": []}]
    assert not mini_swe_agent.detect(from_object(contents)).fits


@pytest.mark.parametrize("path", [HISTORY, REQUEST, CHAT_RESPONSE, AFC_RESPONSE], ids=str)
def test_L2_every_shape_google_genai_writes_is_detected(path: Path) -> None:
    assert which_format(from_object(json.loads(path.read_text()))) == gemini_api.NAME
    assert load(path).metadata["source_format"] == gemini_api.NAME


@pytest.mark.parametrize(
    "value",
    [
        # Other APIs' messages: a Chat message, an OpenTelemetry GenAI message (typed parts).
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
        # An ADK event carries usage_metadata and a model version, and is no response.
        {"author": "agent", "invocation_id": "e-1", "usage_metadata": {}, "model_version": "m"},
    ],
)
def test_L2_other_formats_messages_carry_no_gemini_evidence(value: Any) -> None:
    assert not gemini_api.detect(from_object(value)).fits


# --- google-genai's chat history ----------------------------------------------------------------


def test_L2_a_chat_history_maps_thoughts_calls_results_and_code() -> None:
    transcript = load(HISTORY)
    assert [e.kind for e in transcript] == [
        "user", "thinking", "tool_call", "tool_call", "tool_call", "assistant",
        "user", "assistant",
        "user", "tool_call", "tool_call", "assistant",
    ]  # fmt: skip
    thought = of_kind(transcript, Thinking)[0]
    assert (thought.form, thought.text) == (
        "summary",
        "**Listing the folder**\n\nI'll look at the project first.",
    )
    listed, readme, notes, broken, fixed = transcript.tool_calls()
    # The model gave its calls ids, google-genai answered them by name: paired in order.
    assert (listed.call_id, listed.args, listed.status) == ("call-1", {"directory": "project"},
                                                            "success")  # fmt: skip
    assert listed.result is not None  # google-genai's {"result": value}: the value
    assert json.loads(listed.result.text or "") == ["project/README.md"]
    assert (readme.status, readme.result and readme.result.text) == (
        "success",
        "# Demo\nA tiny demo project.\n",
    )
    # The tool raised: google-genai answered {"error": message}, the API's failure convention.
    assert notes.status == "error"
    assert notes.result is not None
    assert "No such file: project/NOTES.md" in (notes.result.text or "")
    assert readme.batch_id == notes.batch_id != listed.batch_id
    # Code execution: the first run failed (OUTCOME_FAILED), the second printed the answer.
    assert (broken.name, broken.status, broken.meta["outcome"]) == (
        "code_execution", "error", "OUTCOME_FAILED",
    )  # fmt: skip
    assert broken.result is not None
    assert broken.result.text == "NameError: name 'fib' is not defined"
    assert broken.args == {"code": "print(fib(20))", "language": "PYTHON"}
    assert (fixed.status, fixed.result and fixed.result.text) == ("success", "6765\n")
    assert fixed.description == "a, b = 0, 1"
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "The 20th Fibonacci number is 6765."
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"user": {"mapped": 5}, "model": {"mapped": 5}}


def test_L2_a_pasted_image_is_the_prompt_s_image_in_standard_base64() -> None:
    # google-genai's JSON writes bytes in URL-safe base64 (``-``, ``_``): no data: URL shows it.
    assert "_AfiBgg" in HISTORY.read_text()
    prompt = of_kind(load(HISTORY), UserMessage)[1]
    assert prompt.text == "What does this chart show?"
    assert [(i.media_type, i.data) for i in prompt.images] == [("image/png", PNG)]
    assert prompt.meta == {"images": 1}


def test_L2_google_genai_objects_and_their_python_dumps_read_as_their_json() -> None:
    types = pytest.importorskip("google.genai.types")
    contents = [types.Content.model_validate(c) for c in history()]
    from_json = load(HISTORY)
    assert load(contents) == from_json  # chat.get_history(): load dumps them itself
    # [c.model_dump() for c in ...]: every null field, and bytes for the image and signature.
    dumped = [c.model_dump() for c in contents]
    assert isinstance(dumped[1]["parts"][1]["thought_signature"], bytes)
    assert load(dumped) == from_json
    by_alias = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents]
    assert load(by_alias) == from_json  # the REST spelling


def test_L2_json_lines_of_contents_read_as_the_list() -> None:
    lines = "\n".join(json.dumps(c) for c in history())
    assert load(lines) == load(HISTORY)


def test_L5_a_table_column_of_contents_scans_as_gemini_api() -> None:
    pandas = pytest.importorskip("pandas")
    import turnfold

    frame = pandas.DataFrame({"messages": [history(), history()[:6]], "id": [1, 2]})
    rows = turnfold.scan(frame).to_pandas()
    assert rows["format"].tolist() == ["gemini-api", "gemini-api"]
    assert rows["tool_calls"].tolist() == [5, 3]
    assert rows["failed_tools"].tolist() == [2, 1]


# --- requests and responses -----------------------------------------------------------------------


def test_L2_a_rest_request_keeps_its_system_instruction_and_tools() -> None:
    transcript = load(REQUEST)
    assert transcript.metadata["system"] == "You are a careful file assistant. Use the tools."
    assert [t["name"] for t in transcript.metadata["tools"][0]["functionDeclarations"]] == [
        "list_files",
        "read_file",
    ]
    assert transcript.metadata["generation_config"] == {
        "thinkingConfig": {"include_thoughts": True}
    }
    assert [c.status for c in transcript.tool_calls()] == ["success", "success", "error"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"user": {"mapped": 3}, "model": {"mapped": 2}}


def test_L2_google_genai_s_call_keywords_read_as_a_request() -> None:
    keywords = {
        "model": "gemini-2.5-flash",
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "config": {"system_instruction": "Be brief."},
    }
    transcript = load(keywords)
    assert transcript.metadata["system"] == "Be brief."
    assert transcript.metadata["model"] == "gemini-2.5-flash"


def test_U1_a_response_s_usage_counts_cached_prompt_and_thoughts_as_turnfold_does() -> None:
    transcript = load(CHAT_RESPONSE)
    (answer,) = transcript.entries
    assert isinstance(answer, AssistantText)
    assert answer.model == "gemini-2.5-flash"
    # promptTokenCount 330 holds the 128 cached; thoughts (12) apart from candidates (18).
    assert answer.usage == Usage(
        input_tokens=330,
        output_tokens=30,
        cache_read_tokens=128,
        reasoning_tokens=12,
        response_id="resp-3",
    )
    assert transcript.metadata["model"] == "gemini-2.5-flash"
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"response": {"mapped": 1}}


def test_U1_the_results_of_server_side_tools_count_as_input() -> None:
    """Code execution feeds its results back to the model, billed as input but counted apart
    from the prompt (``toolUsePromptTokenCount``; the total adds prompt, candidates, tool-use
    prompt and thoughts): the usage's input holds them."""
    code = [
        {"executableCode": {"code": "print(2**10)", "language": "PYTHON"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1024\n"}},
        {"text": "It is 1024."},
    ]
    value = {
        "candidates": [{"content": {"role": "model", "parts": code}, "finishReason": "STOP"}],
        "usageMetadata": {
            "promptTokenCount": 40,
            "candidatesTokenCount": 25,
            "toolUsePromptTokenCount": 160,
            "thoughtsTokenCount": 10,
            "totalTokenCount": 235,
        },
        "modelVersion": "gemini-2.5-flash",
    }
    transcript = load(value)
    (answer,) = of_kind(transcript, AssistantText)
    assert answer.usage == Usage(input_tokens=200, output_tokens=35, reasoning_tokens=10)
    (run,) = transcript.tool_calls()
    assert (run.name, run.status, run.result and run.result.text) == (
        "code_execution",
        "success",
        "1024\n",
    )


def test_L2_the_chunks_of_a_streamed_response_are_one_answer() -> None:
    """``generate_content_stream`` yields the response in chunks, each a response with the same
    ``responseId`` and the usage so far: saved as a list, the thought and the text read whole
    (not one text per chunk, the last chunk's word shown as the answer), the usage once."""

    def chunk(parts: list[dict[str, Any]], **usage: int) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": parts}}
        counts = {"promptTokenCount": 20, **usage}
        return {
            "candidates": [candidate],
            "usageMetadata": counts,
            "modelVersion": "gemini-2.5-flash",
            "responseId": "stream-1",
        }

    chunks = [
        chunk([{"text": "**Weighing** the ", "thought": True}]),
        chunk([{"text": "question.", "thought": True}, {"text": "The answer "}]),
        chunk([{"text": "is 42."}]),
        chunk([{"text": ""}], candidatesTokenCount=6, thoughtsTokenCount=4, totalTokenCount=30),
        {**chunk([{"text": "Next."}], candidatesTokenCount=2), "responseId": "other"},
    ]
    transcript = load(chunks)
    assert [(e.kind, e.text) for e in transcript.entries] == [
        ("thinking", "**Weighing** the question."),
        ("assistant", "The answer is 42."),
        ("assistant", "Next."),
    ]
    assert session_facts(transcript).tokens == {
        "input_tokens": 40, "output_tokens": 12, "reasoning_tokens": 4,
    }  # fmt: skip


def test_L4_a_response_of_several_candidates_says_only_the_first_is_shown() -> None:
    def candidate(text: str, index: int) -> dict[str, Any]:
        content = {"role": "model", "parts": [{"text": text}]}
        return {"content": content, "finishReason": "STOP", "index": index}

    value = {"candidates": [candidate("A", 0), candidate("B", 1)], "modelVersion": "gemini"}
    transcript = load(value)
    assert [e.text for e in of_kind(transcript, AssistantText)] == ["A"]
    (warning,) = transcript.warnings
    assert warning.reason == "a response of 2 candidates: the first shown"


def test_L2_a_response_shows_the_calls_automatic_function_calling_made() -> None:
    transcript = load(AFC_RESPONSE)
    kinds = [e.kind for e in transcript]
    assert kinds == ["user", "thinking", "tool_call", "tool_call", "tool_call", "assistant"]
    listed, readme, notes = transcript.tool_calls()
    assert [c.status for c in (listed, readme, notes)] == ["success", "success", "error"]
    # Each model answer of the history is a batch of its own.
    assert listed.batch_id != readme.batch_id == notes.batch_id
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert answer.usage.response_id == "resp-3"


@pytest.mark.parametrize(
    ("candidate", "kind", "text"),
    [
        ({"finishReason": "MAX_TOKENS"}, SystemNotice, "cut off at the token limit (MAX_TOKENS)"),
        ({"finishReason": "SAFETY"}, AssistantError, "The response was blocked (SAFETY)."),
        ({"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": "bad call"}, SystemNotice,
         "stopped early (MALFORMED_FUNCTION_CALL): bad call."),
    ],
)  # fmt: skip
def test_L3_a_finish_reason_that_cuts_the_answer_short_is_shown(
    candidate: dict[str, Any], kind: type[Any], text: str
) -> None:
    answer = {"role": "model", "parts": [{"text": "Part of an"}]}
    value = {"candidates": [{"content": answer, **candidate}], "modelVersion": "gemini-2.5-pro"}
    transcript = load(value)
    said = of_kind(transcript, kind)
    assert len(said) == 1
    assert text in (said[0].text if kind is SystemNotice else said[0].message)


def test_L3_a_blocked_prompt_is_an_error_that_keeps_its_usage() -> None:
    value = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
    }
    transcript = load(value)
    (error,) = transcript.entries
    assert isinstance(error, AssistantError)
    assert error.message == "The prompt was blocked (PROHIBITED_CONTENT)."
    # proto3 JSON leaves out the output count of 0; the total says it is 0, not unrecorded.
    assert error.usage == Usage(input_tokens=9, output_tokens=0)
    assert session_facts(transcript).tokens == {"input_tokens": 9, "output_tokens": 0}


def test_U1_a_blocked_answer_s_billed_prompt_counts_in_the_session_tokens_and_cost() -> None:
    """A candidate blocked before it wrote anything (``finishReason: SAFETY``, no content) was
    still billed for its prompt: its error carries the usage, so the header, the scan row and
    the cost count it."""
    blocked = {
        "candidates": [{"finishReason": "SAFETY", "safetyRatings": [{"blocked": True}]}],
        "usageMetadata": {"promptTokenCount": 1200, "totalTokenCount": 1200},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-blocked",
    }
    transcript = load(blocked)
    (error,) = transcript.entries
    assert isinstance(error, AssistantError)
    assert error.message == "The response was blocked (SAFETY)."
    assert error.usage == Usage(input_tokens=1200, output_tokens=0, response_id="resp-blocked")
    facts = session_facts(transcript)
    assert facts.tokens == {"input_tokens": 1200, "output_tokens": 0}
    assert facts.cost is not None  # estimated: the API records no cost
    assert facts.cost.usd > 0


# --- pairing and outcomes -----------------------------------------------------------------------


def test_L3_responses_pair_by_id_whatever_their_order() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "Read both."}]},
        {"role": "model", "parts": [call("read", {"path": "a"}, "c1"),
                                    call("read", {"path": "b"}, "c2")]},
        {"role": "user", "parts": [response("read", {"output": "B"}, "c2"),
                                   response("read", {"error": "no a"}, "c1")]},
    ]  # fmt: skip
    a, b = load(contents).tool_calls()
    assert (a.status, a.result and a.result.text) == ("error", "no a")
    assert (b.status, b.result and b.result.text) == ("success", "B")


def test_L3_responses_without_ids_pair_by_name_in_order() -> None:
    contents = [
        {"role": "model", "parts": [call("read", {"path": "a"}), call("ls", {"dir": "."}),
                                    call("read", {"path": "b"})]},
        {"role": "function", "parts": [response("ls", {"files": ["a", "b"]}),
                                       response("read", {"output": "A"}),
                                       response("read", {"output": "B"})]},
    ]  # fmt: skip
    transcript = load(contents)
    first, listed, second = transcript.tool_calls()
    assert (first.result and first.result.text, second.result and second.result.text) == (
        "A",
        "B",
    )
    # No output key: the whole response is the output.
    assert listed.result is not None
    assert json.loads(listed.result.text or "") == {"files": ["a", "b"]}
    assert [c.call_id for c in (first, listed, second)] == ["read@1.0", "ls@1.1", "read@1.2"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"model": {"mapped": 1}, "function": {"mapped": 1}}


def test_L3_a_call_without_its_response_stays_unknown_and_a_stray_response_is_kept() -> None:
    contents = [
        {"role": "model", "parts": [call("wait", {})]},
        {"role": "user", "parts": [response("other", {"output": "late"})]},
    ]
    transcript = load(contents)
    waiting, stray = transcript.tool_calls()
    assert waiting.status == "unknown"
    assert waiting.result is None
    assert (stray.name, stray.status, stray.meta) == ("other", "success", {"call_missing": True})
    assert [w.reason for w in transcript.warnings] == [
        "function response of 'other' answers no call in the contents: shown as a call of its own"
    ]


def test_L3_a_code_result_pairs_by_id_and_a_timeout_is_an_error() -> None:
    parts = [
        {"executableCode": {"id": "x1", "language": "PYTHON", "code": "while True: pass"}},
        {"executableCode": {"id": "x2", "language": "PYTHON", "code": "print(1)"}},
        {"codeExecutionResult": {"id": "x2", "outcome": "OUTCOME_OK", "output": "1\n"}},
        {"codeExecutionResult": {"id": "x1", "outcome": "OUTCOME_DEADLINE_EXCEEDED"}},
    ]
    slow, quick = load([{"role": "model", "parts": parts}]).tool_calls()
    assert (slow.status, slow.result and slow.result.text) == ("error", "OUTCOME_DEADLINE_EXCEEDED")
    assert (quick.status, quick.result and quick.result.text) == ("success", "1\n")


def test_L3_a_server_side_tool_call_is_settled_by_its_response() -> None:
    parts = [
        {"toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"query": "genai"}}},
        {"toolResponse": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"hits": 3}}},
        {"text": "Three hits."},
    ]
    (search,) = load([{"role": "model", "parts": parts}]).tool_calls()
    assert (search.name, search.status, search.args) == (
        "google_search_web", "success", {"query": "genai"},
    )  # fmt: skip


# --- media and parts of other kinds -------------------------------------------------------------


def test_X2_attached_files_are_attachment_lines_and_model_images_are_shown() -> None:
    contents = [
        {
            "role": "user",
            "parts": [
                {"text": "Transcribe this and read the report."},
                {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/report.pdf"}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "Here is a chart:"},
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
                {"fileData": {"mimeType": "text/csv", "fileUri": "gs://b/data.csv"}},
            ],
        },
    ]
    transcript = load(contents)
    prompt, text, image, notice = transcript.entries
    assert isinstance(prompt, UserMessage)
    assert prompt.text == (
        "Transcribe this and read the report.\n\n[attachment: file · audio/wav · 4 B]\n\n"
        "[attachment: gs://b/report.pdf · application/pdf]"
    )
    assert prompt.meta == {"files": 2}
    assert isinstance(text, AssistantText)
    assert text.text == "Here is a chart:"
    assert isinstance(image, AssistantText)
    assert [i.data for i in image.images] == [PNG]
    assert isinstance(notice, SystemNotice)
    assert notice.text == "The model returned [attachment: gs://b/data.csv · text/csv]"
    assert transcript.warnings == []


def test_X2_an_unknown_part_is_warned_once_and_its_content_accounted() -> None:
    contents = [
        {"role": "model", "parts": [{"text": "hi"}, {"hologram": {"x": 1}}, {"hologram": {}}]},
        {"role": "model", "parts": [{"thoughtSignature": "c2ln"}, {"text": "ok"}]},
    ]
    transcript = load(contents)
    assert [e.kind for e in transcript] == ["assistant", "assistant"]
    assert [w.reason for w in transcript.warnings] == ["a part of kind hologram not read"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"model": {"warned": 1, "mapped": 1}}


def test_L4_a_forced_read_of_other_messages_is_a_clear_error() -> None:
    with pytest.raises(TranscriptFormatError, match="no Gemini contents"):
        load([{"role": "user", "content": "hi"}], format="gemini-api")


def test_L4_loading_never_modifies_the_contents() -> None:
    contents = history()
    before = copy.deepcopy(contents)
    load(contents)
    assert contents == before


# --- what a user sees ---------------------------------------------------------------------------


def test_show_expand_reads_as_the_chat_went(capsys: pytest.CaptureFixture[str]) -> None:
    from turnfold.cli import main

    assert main(["show", str(HISTORY), "--expand"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("3 turns · 5 tools (2 failed)\n")
    assert "▾ read_file project/NOTES.md [Failed]" in shown
    assert "What does this chart show?\n  [image/png]" in shown
    assert "▾ code_execution print(fib(20)) [Failed]" in shown
    assert shown.rstrip().endswith("The 20th Fibonacci number is 6765.")


def test_W5_a_pasted_image_renders_as_an_image() -> None:
    from turnfold.render.viewmodel import build_view_model

    view = build_view_model(load(HISTORY))
    prompt = [n for n in view["nodes"] if n["kind"] == "user"][1]
    assert f'<img class="tf-image" src="data:image/png;base64,{PNG}"' in prompt["html"]
