"""Small things a new user tripped on (a QA pass): a corpus's plain table showed two epochs of
one sample as two identical rows, the command line's hint for an eval log said ``FILE#ID``
where a real key runs as written, and a transcript's repr said ``1 tool calls``."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.model import Entry, ToolCall, Transcript, UserMessage

INSPECT = Path(__file__).parent / "fixtures" / "harnesses" / "inspect"
TWO_EPOCHS = INSPECT / "mockllm_two-epochs.eval"
FOUR_SAMPLES = INSPECT / "react_four-samples_two-epochs.eval"
TREE = Path(__file__).parent / "fixtures" / "corpus"


def _table(html: str) -> tuple[list[str], list[str]]:
    """A plain table's column heads, and each row's text (its cells', joined by ``|``)."""
    heads = [unescape(h) for h in re.findall(r"<th[^>]*>([^<]*)</th>", html)]
    rows = [
        "|".join(unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td.*?</td>", row))
        for row in re.findall(r"<tr>(.*?)</tr>", html)
        if "<td" in row
    ]
    return heads, rows


def test_B1_a_corpus_s_plain_table_tells_the_epochs_of_one_sample_apart() -> None:
    corpus = turnfold.scan(TWO_EPOCHS, workers=1, cache=False)
    titles = [row["title"] for row in corpus]
    assert len(set(titles)) < len(titles)  # sample 1's two epochs share their prompt
    heads, rows = _table(corpus._repr_html_())
    assert heads[:2] == ["Title", "Sample"]
    assert len(rows) == len(corpus) == len(set(rows))  # no two rows read the same
    assert [row.split("|")[1] for row in rows] == [row["sample"] for row in corpus]
    assert [row["sample"] for row in corpus] == ["1/1", "2/1", "1/2", "2/2"]


def test_B1_a_corpus_of_one_run_a_file_keeps_its_compact_table() -> None:
    corpus = turnfold.scan(TREE, workers=1, cache=False)
    paths = [row["path"] for row in corpus]
    assert len(paths) == len(set(paths))
    heads, _ = _table(corpus._repr_html_())
    assert "Sample" not in heads
    assert heads[0] == "Title"


def test_W6_an_eval_log_s_hint_names_its_first_sample_s_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = turnfold.scan(FOUR_SAMPLES, workers=1, cache=False).keys[0]
    assert first == f"{FOUR_SAMPLES}#crash/1"
    for command in ("show", "render"):
        assert main([command, str(FOUR_SAMPLES)]) == 2
        said = capsys.readouterr().err
        assert f"turnfold {command} '{first}' (its first sample" in said, said
        assert "#ID" not in said
    assert main(["show", first]) == 0  # the hint's command runs as written
    assert "crash" in capsys.readouterr().out.lower()


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        ([], "<Transcript: 0 entries, 0 tool calls>"),
        ([ToolCall(call_id="c1", name="Read")], "<Transcript: 1 entry, 1 tool call>"),
        (
            [UserMessage(text="hi"), ToolCall(call_id="c1", name="Read"),
             ToolCall(call_id="c2", name="Grep")],
            "<Transcript: 3 entries, 2 tool calls>",
        ),
    ],
)  # fmt: skip
def test_L1_a_transcript_s_repr_counts_one_in_the_singular(entries: list[Entry], said: str) -> None:
    assert repr(Transcript(entries=entries)) == said
