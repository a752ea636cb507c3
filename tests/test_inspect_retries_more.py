"""An Inspect AI sample retried after an error (spec B-2, U-1, U-3, H-6, C-2, B-3), on logs the
real ``inspect_ai`` 0.3.285 wrote: ``inspect-stops``' ``retry`` sample (a tool crashed on the
first attempt, whose kept events reuse the call id ``retry-flaky`` of the attempt that ran last)
and ``inspect-unread``'s ``invalid`` sample (marked invalid after it ran).
"""

from __future__ import annotations

import io
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log_sample
from inspect_ai.model import ModelUsage

import turnfold
from turnfold.model import ToolCall, Transcript
from turnfold.render.anchors import call_anchor
from turnfold.render.page import write_page
from turnfold.render.site import build_site
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts
from turnfold.settings import snapshot_of

FIXTURES = Path(__file__).parent / "fixtures" / "harnesses"
STOPS = FIXTURES / "inspect-stops" / "stops_four-samples.eval"
UNREAD = FIXTURES / "inspect-unread" / "unread_mockllm.eval"


def _retried() -> Transcript:
    return turnfold.load(STOPS, sample="retry", epoch=1)


def _flaky(transcript: Transcript) -> list[ToolCall]:
    """The attempts' calls of the tool that crashed (the critic's model call is a call too)."""
    return [c for c in transcript.tool_calls() if c.name == "flaky"]


class _Anchors(HTMLParser):
    """Every ``id`` of a page (with the ``data-key`` beside it) and every ``#`` link."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.keys: dict[str, str | None] = {}
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(str(found["id"]))
            self.keys[str(found["id"])] = found.get("data-key")
        href = found.get("href")
        if tag == "a" and href and href.startswith("#"):
            self.links.append(href[1:])


def _anchors(html: str) -> _Anchors:
    parser = _Anchors()
    parser.feed(html)
    return parser


def _page(transcript: Transcript) -> str:
    stream = io.BytesIO()
    write_page(stream, transcript)
    return stream.getvalue().decode("utf-8")


# --- 1. anchors: one call id, two attempts ---------------------------------------------------


def test_B2_a_retried_sample_s_page_has_one_anchor_per_call() -> None:
    """Inspect reuses the call id across attempts; a call's anchor is its entry's key, which
    a transcript never repeats, so each attempt's call has an anchor of its own."""
    transcript = _retried()
    calls = _flaky(transcript)
    assert [(c.call_id, c.status) for c in calls] == [
        ("retry-flaky", "error"),  # the attempt that crashed
        ("retry-flaky", "success"),  # the attempt that ran last
    ]
    page = _anchors(_page(transcript))
    assert [i for i, n in Counter(page.ids).items() if n > 1] == []
    assert {call_anchor(c.id) for c in calls} <= set(page.ids)
    assert len({call_anchor(c.id) for c in calls}) == 2


def test_B2_U4_each_timeline_link_lands_on_its_own_attempt_s_call() -> None:
    transcript = _retried()
    page = _anchors(_page(transcript))
    landed = []
    for link in page.links:
        assert link in page.keys, f"#{link} names no element of the page"
        key = page.keys[link]
        assert key is not None
        assert call_anchor(key) == link
        entry = transcript.get(key)
        assert isinstance(entry, ToolCall)
        landed.append(entry)
    flaky = [c for c in landed if c.name == "flaky"]
    assert sorted(c.status for c in flaky) == ["error", "success"]
    assert len({id(c) for c in flaky}) == 2


def test_P11_revealing_each_call_s_anchor_opens_its_own_attempt() -> None:
    """The widget takes the page's anchors (B-2): each opens the turn of its own attempt."""
    transcript = _retried()
    widget = turnfold.TranscriptWidget(transcript)
    failed, last = _flaky(transcript)
    opened_failed = widget.reveal("#" + call_anchor(failed.id))
    opened_last = widget.reveal("#" + call_anchor(last.id))
    assert opened_failed is not None
    assert opened_last is not None
    assert opened_failed[0] != opened_last[0]  # two turns' process folds, one per attempt


def test_C6_search_hits_name_each_attempt_s_call_apart() -> None:
    corpus = turnfold.scan(STOPS, cache=False, workers=1)
    [key] = [k for k in corpus.to_pandas()["key"] if k.endswith("#retry/1")]
    hits = [h for h in corpus.search('"x"') if h.key == key]  # the calls' arguments
    transcript = corpus[key]
    page = _anchors(_page(transcript))
    found = [transcript.get(h.entry_id) for h in hits]
    assert [c.status for c in found if isinstance(c, ToolCall)] == ["error", "success"]
    for hit in hits:
        assert page.keys[call_anchor(hit.entry_id)] == hit.entry_id


def test_B2_the_site_s_page_of_a_retried_sample_repeats_no_id(tmp_path: Path) -> None:
    build_site(STOPS, tmp_path, workers=1, progress=False)
    [page] = [p for p in (tmp_path / "runs").glob("*.html") if "retry" in p.name]
    anchors = _anchors(page.read_text(encoding="utf-8"))
    assert [i for i, n in Counter(anchors.ids).items() if n > 1] == []
    assert sum(1 for i in anchors.ids if i.startswith("call-")) == 3  # and the critic's


# --- 2. tokens: Inspect's sample total is the last attempt's ---------------------------------


def _as_counted(usages: list[ModelUsage]) -> dict[str, int]:
    """Inspect's usage in turnfold's convention (U-1): the scripted model counts its cache
    apart from ``input_tokens``, as Anthropic does (``total_tokens`` holds all four)."""
    for u in usages:
        read, written = u.input_tokens_cache_read or 0, u.input_tokens_cache_write or 0
        assert u.total_tokens == u.input_tokens + u.output_tokens + read + written
    return {
        "input_tokens": sum(
            u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0)
            for u in usages
        ),
        "output_tokens": sum(u.output_tokens for u in usages),
        "cache_read_tokens": sum(u.input_tokens_cache_read or 0 for u in usages),
        "cache_write_tokens": sum(u.input_tokens_cache_write or 0 for u in usages),
        "reasoning_tokens": sum(u.reasoning_tokens or 0 for u in usages),
    }


def test_U1_a_retried_sample_s_header_tokens_are_its_model_usage() -> None:
    """Inspect starts a sample's usage anew at each attempt (``init_sample_model_data`` in
    ``_task_run_sample_attempt``): ``model_usage`` is the last attempt's. The header's tokens
    and the corpus row's are that total; the failed attempt's kept call is counted apart."""
    sample = read_eval_log_sample(str(STOPS), id="retry", epoch=1)
    own = _as_counted(list(sample.model_usage.values()))
    transcript = _retried()
    assert session_facts(transcript).tokens == own
    rows = {row["sample"]: row for row in turnfold.scan(STOPS, cache=False, workers=1)}
    row = rows["retry/1"]
    assert row["input_tokens"] == own["input_tokens"]
    assert row["output_tokens"] == own["output_tokens"]
    [retry] = sample.error_retries or []
    events = retry.events or []
    kept = [e.output.usage for e in events if isinstance(e, ModelEvent) and e.output.usage]
    assert len(kept) == 1
    failed = _as_counted(kept)
    assert transcript.metadata["failed_attempts_usage"] == failed
    assert session_facts(transcript).failed_attempts_tokens == failed


def test_U3_the_header_says_the_failed_attempts_tokens_apart() -> None:
    transcript = _retried()
    parts = {}
    for locale in ("en", "zh"):
        session = build_view_model(transcript, snapshot_of({"locale": locale}))["session"]
        assert session is not None
        parts[locale] = {p["name"]: p for p in session["parts"]}
    # 481 in + 60 out: model_usage's, the critic's model call (a call's, H-1) among them
    assert parts["en"]["tokens"]["text"] == "541 tokens incl. sub-agents"
    said = parts["en"]["tokens_failed_attempts"]
    assert said["text"] == "≥ 180 tokens in failed attempts"
    assert said["title"] is not None
    assert said["title"].startswith("180 tokens spent by the attempts that failed")
    assert "180" in parts["zh"]["tokens_failed_attempts"]["text"]
    assert "失败" in parts["zh"]["tokens_failed_attempts"]["text"]


def test_U1_a_sample_never_retried_has_no_failed_attempts_tokens() -> None:
    transcript = turnfold.load(STOPS, sample="time", epoch=1)
    assert "failed_attempts_usage" not in transcript.metadata
    session = build_view_model(transcript)["session"]
    assert session is not None
    assert "tokens_failed_attempts" not in {p["name"] for p in session["parts"]}


# --- 3. an invalidated sample: its scored outcome, and the invalidation said apart -----------


def test_H6_an_invalidated_sample_s_outcome_is_one_of_the_four() -> None:
    transcript = turnfold.load(UNREAD, sample="invalid", epoch=1)
    assert transcript.metadata["outcome"] == "pass"
    assert set(transcript.metadata["invalidation"]) == {"author", "reason", "timestamp"}
    view = build_view_model(transcript)
    assert view["outcome"] is not None
    assert (view["outcome"]["status"], view["outcome"]["text"]) == (
        "pass",
        "Passed · score 1 · marked invalid",
    )
    zh = build_view_model(transcript, snapshot_of({"locale": "zh"}))["outcome"]
    assert zh is not None
    assert zh["text"].endswith("已标记为无效")


def test_B3_a_comparison_says_which_side_was_marked_invalid() -> None:
    invalid = turnfold.load(UNREAD, sample="invalid", epoch=1)
    plain = turnfold.load(UNREAD, sample="timeline", epoch=1)
    bundle = turnfold.compare(invalid, plain)._repr_mimebundle_()
    assert isinstance(bundle, tuple)  # anywidget's: the data, then its metadata
    text = bundle[0]["text/plain"]
    first, second = text.splitlines()[:2]
    assert first.startswith("A: ")
    assert first.endswith("Passed · score 1 · marked invalid")
    assert second.startswith("B: ")
    assert second.endswith("Passed · score 1")


def test_B2_the_site_lists_an_invalidated_sample_as_scored(tmp_path: Path) -> None:
    """The index's row keeps the scored outcome (C-2 has no other column for it); the run's
    page says it was marked invalid, under the notice that says who and why."""
    build_site(UNREAD, tmp_path, workers=1, progress=False)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    [row] = [r for r in index.split("<tr ")[1:] if "invalid: what is 6 times 7?" in r]
    assert 'data-outcome="pass"' in row
    assert "✔ Passed" in row
    [page] = [p for p in (tmp_path / "runs").glob("*.html") if "invalid" in p.name]
    html = page.read_text(encoding="utf-8")
    assert "Passed · score 1 · marked invalid" in html
    assert "This sample was marked invalid by qa-team" in html
