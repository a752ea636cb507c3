"""The session header (spec U-3): one line of the session's facts above the turns."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

import turnfold
from turnfold.model import AssistantText, ToolCall, Transcript, Usage
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


def test_a_model_configured_by_its_route_and_named_by_its_responses_is_one_model() -> None:
    # mini-swe-agent and OpenHands record litellm's route (openai/gpt-4o-mini); the responses
    # name the model that served them (gpt-4o-mini): the header named both.
    transcript = Transcript(metadata={"model": "openai/gpt-4o-mini"})
    for model in ("gpt-4o-mini", "gpt-4o"):
        transcript.append(AssistantText(text="hi", model=model, usage=Usage(output_tokens=1)))
    assert session_facts(transcript).models == ["openai/gpt-4o-mini", "gpt-4o"]
    header = session_header(transcript, "en")
    assert header is not None
    assert "openai/gpt-4o-mini, gpt-4o ·" in header["text"]


def test_a_run_s_recorded_end_ends_the_session() -> None:
    # A smolagents RunResult's timing, an Inspect sample's completed_at: the run ended after
    # its last entry (the last step's end, the scoring), as it started at its recorded start.
    transcript = Transcript(metadata={"started_at": "2026-01-01T00:00:00Z",
                                      "ended_at": "2026-01-01T00:00:09Z"})  # fmt: skip
    transcript.append(AssistantText(text="hi", timestamp="2026-01-01T00:00:05Z"))
    facts = session_facts(transcript)
    assert facts.duration_s == 9.0
    frameworks = Path(__file__).parent / "fixtures" / "frameworks"
    run = turnfold.load(frameworks / "smolagents" / "smolagents_v1.26.0_run-result_code-agent.json")
    assert session_facts(run).duration_s == 0.027184  # timing: 03:43:54.307351 to .334535


def test_a_model_that_only_called_tools_is_among_the_session_s_models() -> None:
    # A response of calls only names its model on its first call (meta["model"], the usage
    # convention): Claude Code's switch to another model for one tool call stayed unnamed.
    transcript = Transcript(metadata={"model": "m-main"})
    transcript.append(ToolCall(name="Read", call_id="c1", usage=Usage(output_tokens=3),
                               meta={"model": "m-tools"}))  # fmt: skip
    transcript.append(AssistantText(text="done", model="m-main", usage=Usage(output_tokens=1)))
    assert session_facts(transcript).models == ["m-main", "m-tools"]
    tally = SessionTally(transcript)
    assert tally.facts(set(), turns=1).models == ["m-main", "m-tools"]


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


CODEX_EXEC = Path(__file__).parent / "fixtures" / "agents" / "codex-exec-json"
QWEN = Path(__file__).parent / "fixtures" / "agents" / "qwen-stream-json"


@pytest.mark.parametrize(
    ("name", "text", "exact"),
    [("tokens-first", "26.8k tokens in the session so far", "26,776"),
     ("tokens-resumed", "57.3k tokens in the session so far", "57,334")],
)  # fmt: skip
def test_U1_a_stream_without_its_own_tokens_shows_the_session_s_so_far_labelled_so(
    name: str, text: str, exact: str
) -> None:
    """codex exec --json records only the thread's tokens so far (a resumed run's earlier runs
    included): the header says so, and the run's own tokens and cost stay unknown."""
    from turnfold.corpus.discover import Item
    from turnfold.corpus.summarize import summarize

    path = CODEX_EXEC / f"codex_v0.171.0_exec-json_{name}.jsonl"
    transcript = turnfold.load(path)
    facts = session_facts(transcript)
    assert facts.session_usage == transcript.metadata["session_usage"]
    assert (facts.tokens, facts.total_tokens, facts.cost) == ({}, None, None)
    header = session_header(transcript, "en")
    assert header is not None
    parts = {p["name"]: p for p in header["parts"]}
    assert "tokens" not in parts
    assert parts["tokens_so_far"]["text"] == text
    assert parts["tokens_so_far"]["title"].startswith(f"{exact} tokens spent by the whole session")
    zh = session_header(transcript, "zh")
    assert zh is not None
    assert zh["text"].endswith("会话至今 " + text.split()[0] + " 个 token")
    row = summarize(Item(key=str(path), path=str(path)))
    for column in ("input_tokens", "output_tokens", "cache_read_tokens", "cost_usd"):
        assert row[column] is None, column


def test_U1_the_session_s_tokens_so_far_are_not_shown_beside_the_run_s_own() -> None:
    """Qwen Code records its responses' usage and the session's so far: the run's own win."""
    transcript = turnfold.load(QWEN / "qwen-code_v0.24.4_stream-json_tokens-resumed.jsonl")
    assert transcript.metadata["session_usage"]
    facts = session_facts(transcript)
    assert (facts.session_usage, facts.total_tokens) == ({}, 4210)
    header = session_header(transcript, "en")
    assert header is not None
    # The run's tokens, then why they have no cost (fake-model has no price): not the session's.
    assert [p["name"] for p in header["parts"]][-2:] == ["tokens", "no_cost"]
    # A total the source recorded for the run's own responses is its own tokens too.
    so_far = {"input_tokens": 100, "output_tokens": 5}
    recorded = Transcript(
        [AssistantText(text="hi")], metadata={"usage": {"input_tokens": 7}, "session_usage": so_far}
    )
    assert session_facts(recorded).session_usage == {}
    alone = Transcript([AssistantText(text="hi")], metadata={"session_usage": so_far})
    assert session_facts(alone).session_usage == so_far
    assert session_facts(alone).tokens == {}


def test_U1_the_session_s_tokens_so_far_show_in_the_page_the_text_and_the_widget() -> None:
    transcript = turnfold.load(CODEX_EXEC / "codex_v0.171.0_exec-json_tokens-resumed.jsonl")
    view = build_view_model(transcript)
    assert view["session"] is not None
    assert view["session"]["text"].endswith(" · 57.3k tokens in the session so far")
    page = render_html(view, title="t")
    assert '<span class="tf-sp tf-sp-tokens_so_far" title="57,334 tokens spent' in page
    assert render_text(view).split("\n")[0] == view["session"]["text"]
    widget = TranscriptWidget(transcript)
    try:
        assert unpack_view(widget._view)["view"]["session"] == view["session"]
    finally:
        widget.close()


#: Formats whose files name no one agent: messages of any program (the API's and datasets'
#: shapes, turnfold's own), traces of any instrumented program and trajectories of any agent a
#: harness ran (ATIF names it in the file: ``metadata["agent"]``).
AGENTLESS_FORMATS = frozenset({
    "turnfold", "otlp", "mlflow", "langfuse", "atif", "sharegpt", "llama-factory", "anthropic",
    "openai-responses", "openai", "gemini-api",
})  # fmt: skip


def test_U3_every_format_of_one_agent_or_framework_names_it_in_the_header() -> None:
    """The session header names the agent (U-3): by the transcript's own ``agent`` where it
    records one, else by the format's agent or framework, which every format of one has."""
    from turnfold.formats import FORMATS
    from turnfold.session import AGENT_NAMES

    assert sorted(set(FORMATS) - AGENTLESS_FORMATS - set(AGENT_NAMES)) == []
    saved = turnfold.load(
        Path(__file__).parent / "fixtures/frameworks/haystack/haystack-ai_v3.4.1_messages_solo.json"
    )
    assert "agent" not in saved.metadata
    assert session_facts(saved).agent == "Haystack"
    # A fork that writes its parent's format is named by what the reader recorded.
    kilo = turnfold.load(Path(__file__).parent / "fixtures/opencode/kilo/work/kilo.db")
    assert session_facts(kilo).agent == "Kilo Code"
