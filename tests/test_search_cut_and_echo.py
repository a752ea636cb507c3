"""P-11: the transcript's search reads a long message or output the way its reader does, its
first part and the rest behind "show more" as one text, so a query across the cut is found;
its answer echoes the query as it was searched, never more than ``MAX_QUERY_LENGTH``; and the
search boxes of the widget and the session browser take no longer query than that."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.model import AssistantText, ToolResult, Transcript, UserMessage
from turnfold.render.content import result_view
from turnfold.render.search import MAX_QUERY_LENGTH, search_view, searchable_text
from turnfold.render.text import html_to_text
from turnfold.render.viewmodel import USER_CHARS, ancestor_path, build_view_model, iter_nodes
from turnfold.widget import TranscriptWidget

REPO = Path(__file__).resolve().parents[1]
#: A session the real Claude Code (2.1.332) wrote (see fixtures/SOURCES.md): the prompt on its
#: first line, a ``Bash`` call's result on its fifth.
SESSION = REPO / "tests" / "fixtures" / "claude-code" / "v2.1.332_real_api-retry-then-error.jsonl"
PROMPT_LINE, BASH_RESULT_LINE = 0, 4
#: A word found nowhere else in the session, written across the cut.
WORD = "Quetzalcoatlus"


def _session_with(tmp_path: Path, line: int, change: Callable[[dict[str, Any]], None]) -> Path:
    """The real session with one record changed by ``change(record)``, written to tmp_path."""
    records = [json.loads(text) for text in SESSION.read_text(encoding="utf-8").splitlines()]
    change(records[line])
    path = tmp_path / SESSION.name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _across(text: str, cut: int) -> str:
    """``text`` with :data:`WORD` written over position ``cut``, half before it, half after."""
    start = cut - len(WORD) // 2
    return text[:start] + WORD + text[start + len(WORD) :]


def _search(path: Path, query: str) -> tuple[list[dict[str, Any]], int, str, dict[str, Any]]:
    """The widget's answer to ``query`` in the session ``path``, and its view."""
    widget = TranscriptWidget(turnfold.load(path))
    try:
        hits, total, label = widget.search_hits(query)
        return [dict(hit) for hit in hits], total, label, dict(widget.view)
    finally:
        widget.close()


def _prompt(view: dict[str, Any]) -> dict[str, Any]:
    (prompt,) = [n for n in iter_nodes(view) if n["kind"] == "user"]
    assert "more_html" in prompt  # the view did cut it
    return dict(prompt)


def _prompt_is(text: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["message"]["content"] = text + "\n\n" + record["message"]["content"]

    return change


def _bash_output_is(text: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["message"]["content"][0]["content"] = text
        record["toolUseResult"]["stdout"] = text

    return change


def test_P11_a_query_across_the_cut_of_a_long_prompt_is_found(tmp_path: Path) -> None:
    """A prompt pasted as one long line is cut mid-line at USER_CHARS: the word the cut splits
    is found, the hit the prompt (its rest behind "show more", as a hit in the rest is)."""
    pasted = _across("Context pasted from the log: " + "request ok; " * 400, USER_CHARS)
    path = _session_with(tmp_path, PROMPT_LINE, _prompt_is(pasted))
    hits, total, label, view = _search(path, WORD.upper())
    prompt = _prompt(view)
    head, rest = html_to_text(prompt["html"]), html_to_text(prompt["more_html"])
    assert WORD not in head
    assert WORD not in rest
    assert head.endswith(WORD[: len(WORD) // 2])
    assert rest.startswith(WORD[len(WORD) // 2 :])
    assert (hits, total, label) == ([{"key": prompt["key"], "path": []}], 1, "1 match")


def test_P11_the_parts_of_a_prompt_cut_at_a_line_end_are_not_read_as_one_word(
    tmp_path: Path,
) -> None:
    """Joined, the parts keep the line break between them: the first part's last word and the
    rest's first are two words, as the reader sees them (a guard on the join)."""
    steps = "Steps:\n" + "".join(f"step {n} Ichthyo\nsaurus\n" for n in range(20))
    path = _session_with(tmp_path, PROMPT_LINE, _prompt_is(steps))
    hits, total, _, view = _search(path, "Ichthyosaurus")
    assert html_to_text(_prompt(view)["html"]).endswith("step 5 Ichthyo")  # USER_LINES lines
    assert (hits, total) == ([], 0)
    assert _search(path, "step 5 Ichthyo saurus")[1] == 1  # whitespace as the prompt shows it


def test_P11_a_query_across_the_cut_of_a_long_output_is_found(tmp_path: Path) -> None:
    """A command's output of one long line (minified JSON) is cut mid-line, at result_view's
    ``max_chars``, in a view that renders its rest (a page's, ``more_chars``): the word the cut
    splits is found, the hit the command, in its turn. (The widget renders no rest: it searches
    the whole output of a capped one, test_search_capped.py.)"""
    minified = '{"scripts":{' + '"lint":"eslint",' * 400 + "}}"
    path = _session_with(tmp_path, BASH_RESULT_LINE, _bash_output_is(_across(minified, 4000)))
    view = dict(build_view_model(turnfold.load(path)))
    (bash,) = [n for n in iter_nodes(view) if n["kind"] == "tool"]
    result = bash["result"]
    assert result["text"].endswith(WORD[: len(WORD) // 2])
    assert html_to_text(result["more_html"]).startswith(WORD[len(WORD) // 2 :])
    hits, total = search_view(view, WORD.lower())
    assert hits == [{"key": bash["key"], "path": ancestor_path(view, bash["key"])}]
    assert total == 1
    assert hits[0]["path"][0].startswith("process:")


def test_P11_a_long_output_cut_at_a_line_end_keeps_its_lines_apart() -> None:
    """The output's first part ends at a line end: its last line and the rest's first are not
    one word (a guard on the join)."""
    shown = result_view(ToolResult(text="alpha\n" * 11 + "Ichthyo\nsaurus\n" * 3))
    assert shown is not None
    assert shown["text"].endswith("alpha\nIchthyo\n")
    node = {"kind": "tool", "key": "e1", "name": "Bash", "result": shown}
    assert not any("Ichthyosaurus" in text for text in searchable_text(node))
    assert any("alpha\nIchthyo\nsaurus" in text for text in searchable_text(node))


# --- the query echoed -----------------------------------------------------------------------------


def _answer(query: str) -> dict[str, Any]:
    """The widget's answer to a view's search request, as sent on the comm."""
    transcript = Transcript([UserMessage(text="find calc.py"), AssistantText(text="Done.")])
    widget = TranscriptWidget(transcript)
    sent: list[Any] = []

    def send(data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        sent.append(data)

    widget.comm.send = send
    try:
        widget._handle_custom_msg({"type": "search", "view": "v1", "id": 3, "query": query}, [])
    finally:
        widget.close()
    (answer,) = [
        m["content"] for m in sent
        if m.get("method") == "custom" and m["content"].get("type") == "search"
    ]  # fmt: skip
    return dict(answer)


@pytest.mark.parametrize(
    ("asked", "echoed", "label"),
    [
        ("  calc.py\n", "calc.py", "1 match"),
        # As long as the limit once stripped, longer with its padding: searched, echoed stripped.
        (" " * 50 + "c" * MAX_QUERY_LENGTH + "\n" * 50, "c" * MAX_QUERY_LENGTH, "No matches"),
    ],
)
def test_P11_the_answer_echoes_the_query_as_searched(asked: str, echoed: str, label: str) -> None:
    answer = _answer(asked)
    assert answer["query"] == echoed
    assert answer["label"] == label


def test_P11_the_answer_to_a_query_past_the_limit_echoes_no_more_than_the_limit() -> None:
    answer = _answer("  " + "x" * (10 * MAX_QUERY_LENGTH) + "  ")
    assert answer["query"] == "x" * MAX_QUERY_LENGTH
    assert f"{MAX_QUERY_LENGTH:,}" in answer["label"]
    assert (answer["hits"], answer["total"]) == ([], 0)


# --- the search boxes -----------------------------------------------------------------------------


def test_P11_B1_the_search_boxes_take_no_longer_query_than_python_searches() -> None:
    """The view's limit is a constant of query.js (the view has no settings from Python): it is
    Python's, and both boxes (the widget's and the session browser's) keep to it in code points
    (``limitQuery``, js/test/query.test.js), as Python counts; none sets ``maxlength``, which
    counts UTF-16 code units and cut a query of emoji at half the limit."""
    js = REPO / "js" / "src"
    (number,) = re.findall(
        r"^export const MAX_QUERY_LENGTH = (\d+);$",
        (js / "query.js").read_text(encoding="utf-8"),
        flags=re.MULTILINE,
    )
    assert int(number) == MAX_QUERY_LENGTH
    for box, limited in (("search.js", "limitQuery(this.input);"),
                         ("browser.js", "limitQuery(search);")):  # fmt: skip
        source = (js / box).read_text(encoding="utf-8")
        assert 'import { limitQuery } from "./query.js";' in source, box
        assert limited in source, box
        assert "maxlength" not in source, box
