"""The one rule for a query's length (P-11, C-6, B-1): at most ``MAX_QUERY_LENGTH`` characters,
counted as code points (``len``), in Python and in both search boxes (js/src/query.js, whose
cut is tested in js/test/query.test.js and in tests/browser/test_search_box_code_points.py).

A box's ``maxlength`` counts UTF-16 code units: it cut a query of 4,000 emoji at 2,000, which
Python searches whole. What a box lets through, Python must search: a query of the limit's
count of characters outside the Basic Multilingual Plane is searched everywhere; one more
character is refused, as a longer query of any character is."""

from __future__ import annotations

import threading

import pytest

from turnfold.browser import SessionBrowser
from turnfold.corpus import scan
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.render.search import MAX_QUERY_LENGTH, QueryTooLong, search_query
from turnfold.widget import TranscriptWidget

#: One code point, two UTF-16 code units.
EMOJI = "\N{GRINNING FACE}"
QUERY = EMOJI * MAX_QUERY_LENGTH


def _transcript() -> Transcript:
    return Transcript([UserMessage(text=f"Say it: {QUERY}!"), AssistantText(text="Done.")])


def test_P11_a_query_of_the_limit_in_emoji_is_searched_and_one_more_is_refused() -> None:
    assert len(QUERY.encode("utf-16-le")) // 2 == 2 * MAX_QUERY_LENGTH  # twice maxlength's count
    assert search_query(f"  {QUERY}\n") == QUERY
    with pytest.raises(QueryTooLong, match=f"this one has {MAX_QUERY_LENGTH + 1:,}"):
        search_query(QUERY + EMOJI)


def test_C6_P11_a_query_of_the_limit_in_emoji_finds_its_run_and_its_message() -> None:
    transcript = _transcript()
    hits = scan([transcript]).search(QUERY)
    assert [(hit.key, hit.turn, hit.entry_id) for hit in hits] == [("#0", 1, "e0")]
    widget = TranscriptWidget(transcript)
    try:
        found, total, label = widget.search_hits(QUERY)
    finally:
        widget.close()
    assert (len(found), total, label) == (1, 1, "1 match")


def test_B1_the_browser_searches_a_query_of_the_limit_in_emoji() -> None:
    browser = SessionBrowser(scan([_transcript()]))
    try:
        browser.search(QUERY)
        for thread in threading.enumerate():
            if thread.name == "turnfold-browser-search":
                thread.join()
        searched = browser._hits
        browser.search(QUERY + EMOJI)  # refused at once, no thread
        refused = browser._hits
    finally:
        browser.close()
    assert searched is not None
    assert (searched["query"], searched["label"]) == (QUERY, "1 hit")
    assert [hit["key"] for hit in searched["hits"]] == ["#0"]
    assert refused is not None
    assert refused["hits"] == []
    assert f"at most {MAX_QUERY_LENGTH:,} characters" in refused["label"]
