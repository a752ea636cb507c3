"""ShareGPT conversations (``from``/``value``), as Hugging Face datasets of chat and agent
trajectories hold them (LLaMA-Factory's ``sharegpt`` formatting): the function-calling fixture
is hand-made in that shape, the preference rows are real rows of LLaMA-Factory's
``data/dpo_en_demo.json`` (see tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from tests.formats.turns_shown import turns_shown
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import AssistantText, ToolCall, UserMessage

FIXTURE = Path(__file__).parents[1] / "fixtures" / "messages"
FUNCTION_CALLS = FIXTURE / "sharegpt_llama-factory_function-calls.json"


def test_L2_a_row_of_function_calls_reads_as_its_calls_and_results() -> None:
    transcript = turnfold.load(FUNCTION_CALLS)
    row = json.loads(FUNCTION_CALLS.read_text())
    assert transcript.metadata["source_format"] == "sharegpt"
    assert transcript.metadata["system"] == row["system"]
    assert [t["name"] for t in transcript.metadata["tools"]] == ["calculate_area", "convert_units"]
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["UserMessage", "ToolCall", "ToolCall", "ToolCall", "AssistantText",
                     "UserMessage", "ToolCall", "AssistantText"]  # fmt: skip
    area, circle, convert, unparsed = transcript.tool_calls()
    assert (area.name, area.args) == (
        "calculate_area",
        {"shape": "rectangle", "dimensions": [5, 3]},
    )
    # No error flag is recorded (L-3): a call with its result is unknown, never success.
    assert {c.status for c in transcript.tool_calls()} == {"unknown"}
    assert area.result is not None
    assert area.result.text == '{"area": 15}'
    # A list of calls is one batch; each result answers the oldest call still waiting.
    assert circle.batch_id == convert.batch_id != area.batch_id
    assert circle.result is not None
    assert json.loads(circle.result.text) == {"area": 50.24}
    assert convert.result is not None
    assert "unknown unit" in convert.result.text
    # A call that is no {name, arguments} JSON is kept, as its text, and said.
    assert (unparsed.name, unparsed.args) == ("function_call", {"text": "order_pizza(size=large)"})
    (warning,) = transcript.warnings
    assert warning.line == 9
    assert "no {name, arguments} JSON" in warning.reason
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_L2_bare_lists_and_json_lines_of_messages_are_sharegpt() -> None:
    messages = [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]
    for source in (messages, "\n".join(json.dumps(m) for m in messages),
                   {"conversation": messages, "id": "r1"}):  # fmt: skip
        transcript = turnfold.load(source)
        assert transcript.metadata["source_format"] == "sharegpt"
        prompt, answer = transcript.entries
        assert isinstance(prompt, UserMessage)
        assert prompt.text == "hi"
        assert isinstance(answer, AssistantText)
        assert answer.text == "hello"
    # Speakers every format names (user, assistant) under from/value are still this format.
    plain = [{"from": "user", "value": "hi"}, {"from": "assistant", "value": "hello"}]
    assert turnfold.load(plain).metadata["source_format"] == "sharegpt"


def test_L4_unknown_speakers_and_stray_results_are_warned_and_the_rest_read() -> None:
    messages = [
        {"from": "human", "value": "hi"},
        {"from": "observation", "value": "a result before any call"},
        {"from": "narrator", "value": "meanwhile"},
        "not a message",
        {"from": "gpt", "value": "hello"},
    ]
    transcript = turnfold.load(messages)
    reasons = [(w.line, w.reason) for w in transcript.warnings]
    assert (3, "message from 'narrator' skipped") in reasons
    assert (4, "not a ShareGPT message (no 'from')") in reasons
    assert any(line == 2 for line, _ in reasons)  # the result no call waited for
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == ["hello"]
    (stray,) = transcript.tool_calls()
    assert isinstance(stray, ToolCall)
    assert stray.result is not None
    assert stray.result.text == "a result before any call"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_L4_a_value_that_is_no_text_is_shown_as_its_json_and_none_as_nothing() -> None:
    messages = [{"from": "human", "value": ["part one", {"x": 1}]}, {"from": "gpt", "value": None}]
    prompt, *rest = turnfold.load(messages).entries
    assert isinstance(prompt, UserMessage)
    assert prompt.text == '["part one", {"x": 1}]'
    assert not any(isinstance(e, AssistantText) and e.text == "null" for e in rest)


def test_L4_a_list_of_no_messages_is_no_sharegpt() -> None:
    with pytest.raises(TranscriptFormatError):
        turnfold.load([{"from": "narrator", "value": "x"}], format="sharegpt")


def test_C1_a_dataset_of_conversations_scans_by_its_conversations_column() -> None:
    pandas = pytest.importorskip("pandas")
    row = json.loads(FUNCTION_CALLS.read_text())
    short = [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]
    frame = pandas.DataFrame({"conversations": [row["conversations"], short],
                              "tools": [row["tools"], "[]"]})  # fmt: skip
    corpus = turnfold.scan(frame, workers=1)
    rows = corpus.to_pandas()
    assert list(rows["format"]) == ["sharegpt", "sharegpt"]
    assert list(rows["tool_calls"]) == [4, 0]
    assert list(rows["turns"]) == [2, 1]
    assert corpus["#0"].tool_calls() == turnfold.load(row["conversations"]).tool_calls()


# --- preference (ranking) rows: LLaMA-Factory's dpo_en_demo.json ------------------------------

PAIR_ROW = FIXTURE / "sharegpt_llama-factory_dpo-en-demo_row.json"
PAIRS = (
    Path(__file__).parents[1]
    / "fixtures"
    / "datasets"
    / ("llama-factory_sharegpt_dpo-en-demo_three-rows.json")
)


def test_L2_a_preference_row_answers_with_the_chosen_reply_and_shows_the_rejected_one() -> None:
    """The conversation ends on a prompt; ``chosen`` answers it and ``rejected`` is shown before
    it, marked: neither a turn of its own nor the answer."""
    row = json.loads(PAIR_ROW.read_text())
    transcript = turnfold.load(PAIR_ROW)
    assert transcript.metadata["source_format"] == "sharegpt"
    assert set(transcript.metadata) == {"source_format"}  # the replies are no metadata
    *conversation, rejected, chosen = transcript.entries
    assert len(conversation) == len(row["conversations"])
    assert isinstance(rejected, AssistantText)
    assert (rejected.text, rejected.meta) == (row["rejected"]["value"], {"rejected": True})
    assert isinstance(chosen, AssistantText)
    assert (chosen.text, chosen.meta) == (row["chosen"]["value"], {})
    turns = turns_shown(transcript)
    assert len(turns) == 3  # one per prompt
    assert turns[-1] == ([rejected.text], chosen.text)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "human": {"mapped": 3}, "gpt": {"mapped": 3}, "rejected": {"mapped": 1},
    }  # fmt: skip


def test_L4_a_reply_that_is_no_assistant_s_stays_in_the_metadata() -> None:
    row = {"conversations": [{"from": "human", "value": "hi"}],
           "chosen": {"from": "gpt", "value": "hello"},
           "rejected": {"from": "human", "value": "hi again"}}  # fmt: skip
    transcript = turnfold.load(row)
    assert [type(e).__name__ for e in transcript.entries] == ["UserMessage", "AssistantText"]
    assert transcript.metadata["rejected"] == row["rejected"]


def test_C1_a_preference_dataset_is_scanned_a_row_per_pair() -> None:
    corpus = turnfold.scan(PAIRS, workers=1, cache=False)
    rows = corpus.to_pandas()
    assert list(rows["format"]) == ["sharegpt"] * 3
    assert list(rows["turns"]) == [1, 1, 3]
    assert rows["error"].isna().all()
    for place, row in enumerate(json.loads(PAIRS.read_text())):
        *_, rejected, chosen = turnfold.load(PAIRS, sample=place).entries
        assert isinstance(rejected, AssistantText)
        assert (rejected.text, rejected.meta) == (row["rejected"]["value"], {"rejected": True})
        assert isinstance(chosen, AssistantText)
        assert chosen.text == row["chosen"]["value"]


def test_L2_media_tags_of_a_sharegpt_row_name_the_files_of_its_media_columns() -> None:
    # LLaMA-Factory's multimodal ShareGPT rows (data/README.md: "images" beside the
    # conversations, an <image> tag where each goes); a tag no file is left for stays.
    row = {
        "conversations": [
            {"from": "human", "value": "<image>Who are they?"},
            {"from": "gpt", "value": "They're Kane and Gretzka from Bayern Munich."},
            {"from": "human", "value": "<video>And here?<image>"},
            {"from": "gpt", "value": "A goal."},
        ],
        "images": ["mllm_demo_data/1.jpg"],
        "videos": [{"path": "mllm_demo_data/4.mp4", "bytes": None}],
    }
    transcript = turnfold.load(row)
    assert transcript.metadata["source_format"] == "sharegpt"
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert prompts == [
        "[image: mllm_demo_data/1.jpg]Who are they?",
        "[video: mllm_demo_data/4.mp4]And here?<image>",
    ]
