"""OpenAI Batch API files (spec C-1, L-2, L-4): the input file (``{"custom_id", "method",
"url", "body"}`` a line) and the output and error files (``{"id", "custom_id", "response":
{"status_code", "request_id", "body"}, "error"}``) are files of runs, one a line, each keyed
by its ``custom_id`` (``path#<custom_id>``). An input line is its request; an output line its
response after a prompt not recorded; a failed line a run whose error is shown; an
embeddings line a row that says it is no transcript run. The fixtures are made by
``tests/fixtures/datasets/openai_batch_recipe.py`` with the ``openai`` SDK's own types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus.discover import Item
from turnfold.formats import TranscriptFormatError
from turnfold.model import AssistantError, AssistantText, Thinking, ToolCall, UserMessage

DATASETS = Path(__file__).parents[1] / "fixtures" / "datasets"
CHAT_INPUT = DATASETS / "openai-3.57.0_batch_chat_input.jsonl"
CHAT_OUTPUT = DATASETS / "openai-3.57.0_batch_chat_output.jsonl"
CHAT_ERRORS = DATASETS / "openai-3.57.0_batch_chat_errors.jsonl"
RESPONSES_INPUT = DATASETS / "openai-3.57.0_batch_responses_input.jsonl"
RESPONSES_OUTPUT = DATASETS / "openai-3.57.0_batch_responses_output.jsonl"
EMBEDDINGS_INPUT = DATASETS / "openai-3.57.0_batch_embeddings_input.jsonl"
EMBEDDINGS_OUTPUT = DATASETS / "openai-3.57.0_batch_embeddings_output.jsonl"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _rows(path: Path | list[Path]) -> list[dict[str, object]]:
    frame = turnfold.scan(path, workers=1, cache=False).to_pandas()
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def test_C1_a_chat_batch_s_input_file_is_a_run_per_request_keyed_by_custom_id() -> None:
    rows = _rows(CHAT_INPUT)
    assert [(r["key"], r["sample"], r["format"], r["title"], r["model"]) for r in rows] == [
        (f"{CHAT_INPUT}#task-weather", "task-weather", "openai", "What is the weather in Paris?",
         "gpt-4o-mini"),
        (f"{CHAT_INPUT}#task-haiku", "task-haiku", "openai", "Write a haiku about batch jobs.",
         "gpt-4o-mini"),
        (f"{CHAT_INPUT}#task-bad", "task-bad", "openai", "Say hi.", "gpt-4o-mini"),
        (f"{CHAT_INPUT}#task-late", "task-late", "openai",
         "Summarise the plot of Hamlet in one line.", "gpt-4o-mini"),
    ]  # fmt: skip
    assert all(r["error"] is None for r in rows)
    request = turnfold.load(CHAT_INPUT, sample="task-weather")
    assert request.metadata["system"] == "You answer with the tools you are given."
    assert request.metadata["custom_id"] == "task-weather"
    assert (request.metadata["method"], request.metadata["url"]) == (
        "POST", "/v1/chat/completions")  # fmt: skip
    assert [t["function"]["name"] for t in request.metadata["tools"]] == ["get_weather"]
    assert request.warnings == []


def test_C1_a_chat_batch_s_output_is_each_call_s_answer_keyed_by_its_custom_id() -> None:
    # An output line ({"custom_id", "response": {"status_code", "body"}}) read as "a line holds
    # no request": the whole file was no transcript, and no run of a scan.
    rows = _rows(CHAT_OUTPUT)
    assert [r["key"] for r in rows] == [f"{CHAT_OUTPUT}#task-haiku", f"{CHAT_OUTPUT}#task-weather"]
    assert [(r["title"], r["model"], r["tool_calls"], r["output_tokens"], r["errors"])
            for r in rows] == [
        (None, "gpt-4o-mini-2024-07-18", 0, 19, 0),
        (None, "gpt-4o-mini-2024-07-18", 1, 15, 0),
    ]  # fmt: skip
    weather = turnfold.load(CHAT_OUTPUT, sample="task-weather")
    prompt, call = weather.entries
    assert isinstance(prompt, UserMessage)
    assert prompt.meta == {"prompt_not_recorded": True}  # the output file keeps no request
    assert isinstance(call, ToolCall)
    assert (call.call_id, call.name, call.args) == ("call_TFw1", "get_weather", {"city": "Paris"})
    haiku = turnfold.load(CHAT_OUTPUT, sample="task-haiku")
    answer = haiku.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text.startswith("Queued in the night,")
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (14, 19)
    assert {k: haiku.metadata[k] for k in ("custom_id", "status_code", "request_id")} == {
        "custom_id": "task-haiku", "status_code": 200, "request_id": "req_TFB0001"}  # fmt: skip
    assert haiku.metadata["batch_line_id"] == "batch_req_TFB0001"
    assert haiku.warnings == []
    hits = turnfold.scan(CHAT_OUTPUT, workers=1, cache=False).search("ten thousand prompts")
    assert [hit.key for hit in hits] == [f"{CHAT_OUTPUT}#task-haiku"]  # keyed as its row


def test_C1_L4_a_failed_batch_call_is_a_run_whose_error_is_shown() -> None:
    """The error file: a bad request (HTTP 400, the API's error in the body) and a request the
    batch expired before running (no response, ``error`` set): each a run of its own, its
    error shown after the prompt not recorded, counted in the row's errors; not dropped."""
    rows = _rows(CHAT_ERRORS)
    assert [(r["key"], r["errors"], r["error"]) for r in rows] == [
        (f"{CHAT_ERRORS}#task-bad", 1, None),
        (f"{CHAT_ERRORS}#task-late", 1, None),
    ]
    bad = turnfold.load(CHAT_ERRORS, sample="task-bad")
    assert [type(e) for e in bad.entries] == [UserMessage, AssistantError]
    assert bad.entries[-1].message == (  # type: ignore[union-attr]
        "HTTP 400, integer_below_min_value: Invalid 'max_completion_tokens': integer below "
        "minimum value. Expected a value >= 1, but got -1 instead."
    )
    late = turnfold.load(CHAT_ERRORS, sample="task-late")
    assert late.entries[-1].message == (  # type: ignore[union-attr]
        "batch_expired: This request could not be executed before the completion window expired."
    )
    assert late.accounting is not None
    assert late.accounting.counts == {"batch/failed": {"mapped": 1}}


def test_C1_a_responses_batch_reads_its_requests_and_its_responses() -> None:
    inputs = _rows(RESPONSES_INPUT)
    assert [(r["key"], r["format"], r["title"]) for r in inputs] == [
        (f"{RESPONSES_INPUT}#eval-0001", "openai-responses", "How many legs has a spider?"),
        (f"{RESPONSES_INPUT}#eval-0002", "openai-responses", "How many sides has a hexagon?"),
    ]
    request = turnfold.load(RESPONSES_INPUT, sample="eval-0001")  # its input is text
    assert request.metadata["system"] == "Answer with a number."
    outputs = _rows(RESPONSES_OUTPUT)
    assert [(r["key"], r["format"], r["model"], r["output_tokens"]) for r in outputs] == [
        (f"{RESPONSES_OUTPUT}#eval-0001", "openai-responses", "o4-mini-2025-04-16", 41),
        (f"{RESPONSES_OUTPUT}#eval-0002", "openai-responses", "o4-mini-2025-04-16", 42),
    ]
    response = turnfold.load(RESPONSES_OUTPUT, sample="eval-0002")
    prompt, thinking, answer = response.entries
    assert prompt.meta == {"prompt_not_recorded": True}
    assert isinstance(thinking, Thinking)
    assert isinstance(answer, AssistantText)
    assert answer.text == "6"
    assert response.metadata["custom_id"] == "eval-0002"


@pytest.mark.parametrize(
    ("path", "held"), [(EMBEDDINGS_INPUT, "request"), (EMBEDDINGS_OUTPUT, "response")]
)
def test_C1_L2_an_embeddings_batch_s_lines_say_they_are_no_transcript_runs(
    path: Path, held: str
) -> None:
    rows = _rows(path)
    assert [(r["key"], r["error"]) for r in rows] == [
        (f"{path}#{name}", f"{path}, line {line}: not a transcript ({name!r} is a Batch API "
         f"/v1/embeddings {held}, not a transcript run (no conversation to show)); formats "
         "tried: openai")
        for line, name in ((1, "doc-1"), (2, "doc-2"))
    ]  # fmt: skip
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(path, sample="doc-2")
    assert (caught.value.source, caught.value.line) == (str(path), 2)
    assert "/v1/embeddings" in caught.value.reason


def test_L2_loading_a_batch_file_whole_says_how_to_read_one_run() -> None:
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(CHAT_OUTPUT)
    assert caught.value.reason == (
        "a file of runs (each record holds one OpenAI Batch API call's outcome, named by its "
        "'custom_id'): turnfold.scan() reads each as a row; turnfold.load(path, "
        "sample=<its custom_id>) reads one"
    )
    with pytest.raises(ValueError, match="holds no run named 'task-nope'"):
        turnfold.load(CHAT_OUTPUT, sample="task-nope")


def test_C2_a_row_opens_on_its_run_by_its_custom_id_even_one_of_digits(tmp_path: Path) -> None:
    """A custom_id is the developer's: one of digits names its run, not the run at that place
    (the output file's lines come in any order)."""
    lines = _lines(CHAT_OUTPUT)
    lines[0]["custom_id"], lines[1]["custom_id"] = "1", "0"  # haiku "1", weather "0"
    path = tmp_path / "batch_output.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    corpus = turnfold.scan(path, workers=1, cache=False)
    assert corpus.keys == [f"{path}#1", f"{path}#0"]
    weather = corpus[f"{path}#0"]
    assert [e.kind for e in weather.entries] == ["user", "tool_call"]
    assert turnfold.load(path, sample=0) == weather
    assert turnfold.load(path, sample="1").entries[-1].text.startswith("Queued")  # type: ignore[union-attr]


def test_C5_a_large_batch_file_is_read_whole_its_keys_its_custom_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part of a file of runs numbers its rows for the scan to number on; a batch file's rows
    are keyed by name, so it is read whole, not in parts, and its keys stay its names."""
    from turnfold.corpus import engine, runs
    from turnfold.corpus.summarize import runs_parts

    path = tmp_path / "batch_output.jsonl"
    lines = [{**line, "custom_id": f"req-{n}"}
             for n, line in enumerate(_lines(CHAT_OUTPUT) * 10)]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    monkeypatch.setattr(engine, "LOCAL_BYTES", 0)
    monkeypatch.setattr(runs, "SPAN_BYTES", 2000)
    monkeypatch.setattr(runs, "SPLIT_BYTES", 4000)
    assert runs_parts(Item(key=str(path), path=str(path), size=path.stat().st_size)) is None
    corpus = turnfold.scan(path, workers=2, cache=False)
    assert corpus.keys == [f"{path}#req-{n}" for n in range(20)]


def test_C4_a_batch_file_that_grew_is_read_again_whole(tmp_path: Path) -> None:
    """A file of named runs leaves no mark to read on from (its parts could not be numbered on):
    one seen growing is read whole again, its rows those of the file read afresh."""
    path = tmp_path / "batch_output.jsonl"
    lines = [json.dumps({**line, "custom_id": f"req-{n}"}) + "\n"
             for n, line in enumerate(_lines(CHAT_OUTPUT) * 3)]  # fmt: skip
    path.write_text("".join(lines[:2]), encoding="utf-8")
    turnfold.scan(tmp_path, workers=1)
    # The first growth seen is read whole; a mark would have the next ones read on from it,
    # renumbering the named rows (a scan that failed: "'req-1' as a scalar of type int64").
    for start, end in ((2, 3), (3, 4), (4, 6)):
        with path.open("a", encoding="utf-8") as out:
            out.write("".join(lines[start:end]))
        grown = turnfold.scan(tmp_path, workers=1)
        assert grown.keys == [f"{path}#req-{n}" for n in range(end)]
        assert grown.to_arrow().equals(turnfold.scan(path, workers=1, cache=False).to_arrow())


def test_C1_an_output_line_whose_body_names_no_object_is_read_by_its_shape() -> None:
    """A server that writes the Batch API's files for itself may leave the body's ``object``
    out: a body of ``choices`` is still a ChatCompletion, one of ``output`` a Response."""
    chat, responses = _lines(CHAT_OUTPUT)[0], _lines(RESPONSES_OUTPUT)[0]
    for line in (chat, responses):
        del line["response"]["body"]["object"]  # type: ignore[index]
    assert turnfold.load(chat).entries[-1].text.startswith("Queued")  # type: ignore[union-attr]
    read = turnfold.load(responses)
    assert read.metadata["source_format"] == "openai-responses"
    assert read.entries[-1].text == "8"  # type: ignore[union-attr]
