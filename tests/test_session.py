"""The session header (spec U-3): one line of the session's facts above the turns."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

import turnfold
from turnfold.model import AssistantText, Transcript, Usage
from turnfold.recording import Recorder
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, session_header
from turnfold.samples import claude_code_session, demo_session
from turnfold.session import SessionTally, session_facts
from turnfold.settings import DisplaySettings
from turnfold.transport import unpack_view
from turnfold.widget import TranscriptWidget


@pytest.fixture
def utc_clock() -> Iterator[None]:
    """Local time is UTC for the test (the header shows the reader's local time)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_U3_the_bundled_claude_code_session_reads_as_its_facts(utc_clock: None) -> None:
    header = session_header(claude_code_session(), "en")
    assert header is not None
    # Counted by hand from the fixture: 13 calls, two of them (Task, Edit) failed; the first and
    # last timestamps are 09:52:03 and 09:54:26; tokens as tests/test_usage.py counts them.
    assert header["text"] == (
        "Claude Code · claude-sonnet-4 · 2025-09-07 09:52 · 2m 23s · 1 turn · 13 tools (2 failed)"
        " · 375.8k tokens incl. sub-agents · ≈ $0.33"
    )
    parts = {p["name"]: p for p in header["parts"]}
    assert parts["model"]["title"] == "claude-sonnet-4-20250514"  # the full name in the title
    assert parts["started"]["title"] == "started 2025-09-07 09:52:03 UTC"
    assert parts["tokens"]["title"].startswith("input ")
    assert parts["cost"]["title"].startswith("estimated with genai-prices")


def test_U3_the_header_shows_in_the_page_the_text_and_the_widget(utc_clock: None) -> None:
    transcript = claude_code_session()
    view = build_view_model(transcript)
    page = render_html(view, title="t")
    assert page.index('class="tf-session"') < page.index('class="tf-user"')
    assert 'title="claude-sonnet-4-20250514"' in page
    assert render_text(view).split("\n")[0].startswith("Claude Code · claude-sonnet-4 · ")
    widget = TranscriptWidget(transcript)
    try:
        assert unpack_view(widget._view)["view"]["session"] == view["session"]
    finally:
        widget.close()
    zh = build_view_model(transcript, DisplaySettings(locale="zh"))["session"]
    assert zh is not None
    assert "1 轮 · 13 个工具（2 个失败）" in zh["text"]


def test_U3_a_session_that_records_nothing_has_no_header() -> None:
    assert session_header(Transcript(), "en") is None
    assert build_view_model(Transcript())["session"] is None


def test_U3_a_timestamp_of_no_calendar_day_is_no_moment_not_a_crash() -> None:
    """A loader that keeps a start time as written may keep "2025-99-99T…" or a 30th of
    February: the header shows what the other times tell (it raised ValueError)."""
    entries = [AssistantText(text="hi", timestamp="2025-01-02T03:04:05Z")]
    for broken in ("2025-99-99T99:99:99Z", "2025-02-30T10:00:00Z"):
        facts = session_facts(Transcript(entries, metadata={"started_at": broken}))
        assert facts.duration_s is None
        assert session_header(Transcript(entries, metadata={"started_at": broken}), "en")


def test_U3_a_cost_the_source_recorded_is_shown_as_recorded() -> None:
    transcript = Transcript([AssistantText(text="hi")], metadata={"cost_usd": 0.4213})
    header = session_header(transcript, "en")
    assert header is not None
    (cost,) = [p for p in header["parts"] if p["name"] == "cost"]
    assert (cost["text"], cost["title"]) == ("$0.42", "$0.42 (recorded by the source)")


def test_U3_a_live_tally_equals_the_facts_read_afresh() -> None:
    """The widget's header is kept up to date entry by entry (Q-3); after every change it must
    say what a fresh reading of the whole transcript says."""
    clock = iter(f"2026-01-01T00:{m:02d}:{s:02d}Z" for m in range(60) for s in range(0, 60, 7))
    rec = Recorder(clock=lambda: next(clock))
    tally = SessionTally(rec.transcript)
    changed: set[str] = set()
    rec.transcript.observe(lambda change: changed.add(change.entry.id))

    def check() -> None:
        turns = session_facts(rec.transcript).turns
        assert asdict(tally.facts(set(changed), turns=turns)) == asdict(
            session_facts(rec.transcript)
        )
        changed.clear()

    check()
    for n in range(4):
        rec.user(f"question {n}")
        check()
        call = rec.start_tool("Bash", {"command": f"make {n}"})
        check()
        rec.finish_tool(call, "oops", status="error" if n % 2 else "success")
        check()
        rec.transcript.append(
            AssistantText(text=f"answer {n}", model=f"m{n % 2}", usage=Usage(output_tokens=10))
        )
        check()
    facts = session_facts(rec.transcript)
    assert (facts.turns, facts.tool_calls, facts.failed_tools) == (4, 4, 2)
    assert facts.models == ["m0", "m1"]
    assert facts.tokens == {"output_tokens": 40}
    # Entries changed in place: a usage corrected, a model renamed, a failure turned success.
    texts = [e for e in rec.transcript.entries if isinstance(e, AssistantText)]
    rec.transcript.update(texts[1], usage=Usage(output_tokens=0, cache_read_tokens=5))
    check()
    rec.transcript.update(texts[0], model="m9")
    check()
    failed = [c for c in rec.transcript.tool_calls() if c.status == "error"]
    rec.transcript.update(failed[0], status="success")
    check()
    facts = session_facts(rec.transcript)
    assert facts.tokens == {"output_tokens": 30, "cache_read_tokens": 5}
    assert (facts.failed_tools, facts.models) == (1, ["m9", "m1", "m0"])


def test_U3_the_demo_session_header_in_chinese() -> None:
    header = session_header(demo_session(), "zh")
    assert header is not None
    assert "2 轮" in header["text"]


def test_U3_a_fast_model_label_written_later_is_not_part_of_the_session_s_time() -> None:
    from turnfold.model import ToolUseSummary

    transcript = Transcript([
        AssistantText(text="a", timestamp="2026-01-01T09:00:00Z"),
        AssistantText(text="b", timestamp="2026-01-01T09:00:30Z"),
        ToolUseSummary(label="Read a file", timestamp="2026-12-02T08:00:00Z"),  # labelled today
    ])  # fmt: skip
    assert session_facts(transcript).duration_s == 30


FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json*"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_U3_a_corpus_row_says_what_the_session_header_says(path: Path) -> None:
    """One definition of a session's facts (C-2, U-3): the corpus row and the header agree."""
    from turnfold.corpus.discover import Item
    from turnfold.corpus.summarize import summarize

    row = summarize(Item(key=str(path), path=str(path)))
    facts = session_facts(turnfold.load(path))
    assert (row["turns"], row["tool_calls"], row["failed_tools"]) == (
        facts.turns, facts.tool_calls, facts.failed_tools,
    )  # fmt: skip
    assert (row["started"], row["ended"]) == (facts.started, facts.ended)
    assert row["duration_s"] == facts.duration_s or (not row["duration_s"] and not facts.duration_s)
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        assert row[name] == facts.tokens.get(name), name
    assert row["model"] == (facts.models[0] if facts.models else None)
