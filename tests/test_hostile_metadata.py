"""Hostile values where a transcript keeps its facts, not its text (spec X-1): every metadata
key a reader sets (title, agent, model, session id, working directory, outcome, score, error,
final output…), the keys of a usage record, a response id, a call's id and batch, a sub-agent's
name, an image's media type, a run's key (its file's name), the names of a comparison's sides.
They reach the session line, the corpus row, the site's index and the comparison's header,
where no content function escapes them for the renderer.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from tests.hostile_inputs import PAYLOAD
from tests.test_compare import _CompareAudit
from tests.test_render_html import audit as audit_page
from turnfold.corpus import scan
from turnfold.model import (
    AssistantError,
    AssistantText,
    ImageData,
    LoadWarning,
    SubAgent,
    SystemNotice,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.render.compare_page import render_compare_page
from turnfold.render.page import render_page
from turnfold.render.site import INDEX, RUNS, build_site
from turnfold.widget import TranscriptWidget

KEYS = ["title", "agent", "model", "session_id", "cwd", "git_branch", "version", "outcome",
        "stop_reason", "error", "final_output", "agent_id", "task", "goal", "system_prompt",
        "target", "user_id", "started_at", "cost_usd", "score"]  # fmt: skip
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_facts(prompt: str = "go") -> Transcript:
    usage = Usage(input_tokens=3, output_tokens=5, response_id=PAYLOAD)
    images = [ImageData(media_type="image/svg+xml", data="PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"),
              ImageData(media_type=PAYLOAD, data="AAAA"),
              ImageData(media_type="image/png", data="data:text/html,<b>x</b>")]  # fmt: skip
    metadata: dict[str, object] = dict.fromkeys(KEYS, PAYLOAD)
    metadata.update(usage={PAYLOAD: 5, "input_tokens": 3}, scores={PAYLOAD: PAYLOAD},
                    models=[PAYLOAD], subagent_usage={PAYLOAD: PAYLOAD})  # fmt: skip
    child = Transcript([UserMessage(text="sub"), AssistantText(text="done", usage=usage)],
                       metadata=dict(metadata))  # fmt: skip
    call = ToolCall(call_id=PAYLOAD, name=PAYLOAD, args={PAYLOAD: PAYLOAD}, status="error",
                    batch_id=PAYLOAD, started_at=PAYLOAD, ended_at=PAYLOAD, usage=usage,
                    result=ToolResult(text="out", images=images, structured={PAYLOAD: 1}),
                    subagent=SubAgent(name=PAYLOAD, task=PAYLOAD, agent_id=PAYLOAD,
                                      reason=PAYLOAD, transcript=child, usage=usage))  # fmt: skip
    return Transcript(
        [UserMessage(text=prompt, images=images, timestamp=PAYLOAD), call,
         AssistantError(message="failed"), SystemNotice(text="note"),
         AssistantText(text="the answer", usage=usage, meta={PAYLOAD: PAYLOAD})],
        metadata=metadata, warnings=[LoadWarning(reason="w", line=1, source=PAYLOAD)],
    )  # fmt: skip


class _Handlers(HTMLParser):
    """What no page may hold, whatever its own markup: a tag that runs or loads something, an
    event handler, a script or ``data:text`` URL."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("iframe", "object", "embed", "base", "link", "form", "svg", "img"):
            self.problems.append(tag)
        for name, value in attrs:
            if name.startswith("on") or name == "srcdoc":
                self.problems.append(f"{name} on <{tag}>")
            if re.match(r"\s*(?:java|vb)script:|\s*data:text", value or "", re.I):
                self.problems.append(f"{name}={value!r}")


def _inert(page: str) -> None:
    """Only the page's own script (the deep links', the index's: one, by hash), nothing a
    payload made an element or an attribute of."""
    assert page.lower().count("<script") <= 1
    assert "__pwned" not in "".join(re.findall(r"<script>(.*?)</script>", page, re.S))
    assert not RAW_CONTROLS.search(page.replace("\n", ""))
    parser = _Handlers()
    parser.feed(re.sub(r"<script>.*?</script>", "", page, flags=re.S))
    parser.close()
    assert parser.problems == [], parser.problems


def test_X1_hostile_facts_stay_text_in_the_page_and_the_widget_s_html() -> None:
    transcript = hostile_facts()
    for page in (render_page(transcript, expand=True), render_page(transcript, title=PAYLOAD),
                 TranscriptWidget(transcript)._repr_mimebundle_()[0]["text/html"]):  # fmt: skip
        # H-6: the outcome line's status is one of the view model's words (checked apart).
        statuses = re.findall(r'<div class="tf-outcome" data-status="([^"]*)">', page)
        assert statuses == ["other"]
        audit_page(page.replace(' data-status="other"', ""))
        assert "&lt;script&gt;window.__pwned=&#x27;script&#x27;&lt;/script&gt;" in page


def test_X1_hostile_facts_and_side_names_stay_text_in_the_comparison() -> None:
    page = render_compare_page(hostile_facts(), hostile_facts("other"), names=(PAYLOAD, "b"),
                               title=PAYLOAD)  # fmt: skip
    audit = _CompareAudit()
    audit.feed(page)
    audit.close()
    assert audit.problems == []
    _inert(page)


def test_X1_B2_hostile_facts_and_run_keys_stay_text_in_the_site_and_the_corpus(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    named = "<img src=x onerror=\"window.__pwned='key'\">\u202e\x1b]0;t\x07"
    (runs / f"{named}.jsonl").write_text(hostile_facts().dump(), encoding="utf-8")
    (runs / "b.jsonl").write_text(hostile_facts("other").dump(), encoding="utf-8")
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    for page in [out / INDEX, *(out / RUNS).glob("*.html")]:
        _inert(page.read_text("utf-8"))
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", p.name) for p in (out / RUNS).iterdir())
    corpus = scan(runs, workers=1)
    _inert(render_compare_page(corpus, corpus, key="path", names=(PAYLOAD, "b")))
