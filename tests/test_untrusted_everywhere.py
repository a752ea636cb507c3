"""One hostile transcript and one hostile corpus through every surface turnfold writes (spec X-1,
X-2, B-1, B-2, B-3, C-6): the exported page, the widget's ``text/html`` and view, the static site
(index and pages), the comparison (page, widget, ``text/plain``), a corpus's ``_repr_html_``, the
session browser's saved table and its search hits, and the terminal.

Every string a source can write carries every attack at once (:data:`HOSTILE`): raw HTML that
runs or loads something, markdown links and images with script schemes (mixed case, entities,
whitespace, reference links, autolinks), CSS, attribute breakers, comment and script closers,
U+2028, bidi overrides and terminal escapes. Each HTML surface is parsed and must hold no active
content; each text field the JS sets as text, and each terminal line, must hold no raw control or
bidi character; the payload must still be there to read.

``tests/test_security.py`` audits each content function alone, ``tests/test_hostile_*.py`` the
readers' files and the facts of a transcript; this file is the sweep across surfaces that found
the outcome, the fast model's label, the search snippet and the site index's sort data unguarded.
"""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import turnfold
from tests.test_security import audit as audit_fragment
from turnfold.browser import SessionBrowser
from turnfold.cli import expand_all, main
from turnfold.compare_widget import compare
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    ImageData,
    LoadWarning,
    PendingAction,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolUseSummary,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.render.compare_page import render_compare_page
from turnfold.render.page import render_page
from turnfold.render.scripts import source
from turnfold.render.site import INDEX, RUNS, build_site
from turnfold.render.text import render_terminal
from turnfold.render.viewmodel import build_view_model

#: Each attack carries ``PWN`` where it would act: the marker may be read as text, never run,
#: loaded or followed.
ATTACKS = [
    "<script>PWN</script>",
    "</script><script>PWN</script>",
    "<!--PWN-->",
    "<img src=x onerror=PWN>",
    "<svg><script>PWN</script></svg>",
    '<svg onload="PWN"></svg>',
    '<iframe srcdoc="<script>PWN</script>"></iframe>',
    '<meta http-equiv="refresh" content="0;url=http://PWN.test/">',
    '<base href="http://PWN.test/">',
    '<form action="http://PWN.test/"><button formaction="javascript:PWN">go</button></form>',
    '<div style="background:url(http://PWN.test/);width:expression(PWN)">styled</div>',
    "<style>*{background:url(http://PWN.test/)}</style>",
    '" onmouseover="PWN" x="',
    "' onmouseover='PWN' ",
    "[a](javascript:PWN) [b](data:text/html,<script>PWN</script>) [c](vbscript:PWN)",
    "[d](&#106;avascript:PWN) [e](JaVaScRiPt:PWN) [f](java\tscript:PWN) [g]( javascript:PWN)",
    '[ref]\n\n[ref]: javascript:PWN\n\n<javascript:PWN> <http://x.test/"onmouseover="PWN>',
    "![i](javascript:PWN) ![j](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9UFdOPg==)",
    '<a href="&#x6A;avascript&#58;PWN">x</a> <a href="  jav&#x0A;ascript:PWN">y</a>',
    "<math><mtext><table><mglyph><style><img src=x onerror=PWN>",
    '<noscript><p title="</noscript><img src=x onerror=PWN>">',
    "\u2028\u2029 \u202eevil\u202c \u2066x\u2069",
    "\x1b]8;;javascript:PWN\x1b\\osc8\x1b]8;;\x1b\\ \x1b]52;c;UFdO\x07",
    "\x1b]0;PWN\x07\x1b[2J\r\x1b[31mred",
]
HOSTILE = " ".join(ATTACKS)
#: What no text field, terminal line or page may hold raw (a newline or a tab aside).
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Elements that run, load, navigate or submit, whoever wrote them.
ACTIVE_TAGS = {
    "iframe", "frame", "frameset", "object", "embed", "applet", "base", "link", "form", "svg",
    "math", "template", "noscript", "audio", "video", "source", "portal", "textarea", "button",
}  # fmt: skip
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "background", "poster", "srcset",
                  "xlink:href", "data", "ping", "cite"}  # fmt: skip
#: Where a link or an image may point: the web, mail, the page itself, the site's own pages,
#: an inline raster image.
SAFE_URL = re.compile(
    r"(?:https?:|mailto:|#|\.\./[\w.-]+\.html$|(?:runs/)?[\w.-]+\.html(?:#|$)"
    r"|data:image/(?:png|jpeg|gif|webp);base64,)"
)


class _Active(HTMLParser):
    """Everything in a page that could act: a script that is not one of the page's own (the
    files its Content-Security-Policy names by hash, compared by source), an active element, an
    event handler, a script or remote URL in a style, a refresh, a comment (what a closer could
    have opened)."""

    def __init__(self, own_scripts: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.own = own_scripts
        self.problems: list[str] = []
        self.inside: str | None = None
        self.body: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ACTIVE_TAGS:
            self.problems.append(f"<{tag}>")
        if (
            tag == "input"
            and dict(attrs).get("type") != "search"
            and "data-failed" not in dict(attrs)
        ):  # the site index's own two filters
            self.problems.append(f"<input {attrs}>")
        if tag == "meta" and (dict(attrs).get("http-equiv") or "").lower() not in (
            "", "content-security-policy",
        ):  # fmt: skip
            self.problems.append(f"<meta {attrs}>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") or name == "srcdoc":
                self.problems.append(f"{name}= on <{tag}>")
            if name in URL_ATTRIBUTES and not SAFE_URL.match(value):
                self.problems.append(f"{name}={value[:80]!r} on <{tag}>")
            elif name == "src" and not value.startswith("data:image/"):  # loads when drawn
                self.problems.append(f"src={value[:80]!r} on <{tag}>")
            if name == "style" and re.search(r"url\(|expression|@import|script|PWN", value, re.I):
                self.problems.append(f"style={value[:80]!r} on <{tag}>")
        if tag in ("script", "style"):
            self.inside, self.body = tag, []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.inside = None

    def handle_endtag(self, tag: str) -> None:
        if tag == self.inside:
            body = "".join(self.body)
            if tag == "script" and body not in self.own:
                self.problems.append(f"a script not the page's own: {body[:80]!r}")
            if "PWN" in body:
                self.problems.append(f"the payload inside <{tag}>")
            self.inside = None

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.body.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment {data[:40]!r}")


def _inert(page: str, scripts: tuple[str, ...] = ()) -> None:
    """Fail unless ``page`` holds nothing active and shows the payload as text (X-2)."""
    parser = _Active({source(name) for name in scripts})
    parser.feed(page)
    parser.close()
    assert parser.problems == [], parser.problems[:10]
    assert not RAW_CONTROLS.search(page.replace("\n", "")), "a raw control or bidi character"
    assert "&lt;script&gt;PWN&lt;/script&gt;" in page  # there to read


def _texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a widget's view or state with its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(item, f"{path}.{key}")
    elif isinstance(value, list):
        for at, item in enumerate(value):
            yield from _texts(item, f"{path}[{at}]")
    elif isinstance(value, str):
        yield path, value


def _shown_as_text(state: Any) -> list[tuple[str, str]]:
    """The strings a view sets as text that hold a raw control or bidi character: not its
    ``*html`` fields (audited as fragments), not keys, nor a filter's value (never shown: its
    label is)."""
    return [
        (path, text[:60])
        for path, text in _texts(state)
        if RAW_CONTROLS.search(text)
        and not re.search(r"(html|key|\.value|\.links\..*)$", path, re.S)
    ]


def _bundle(widget: Any) -> dict[str, Any]:
    """A widget's display bundle: its view, text/plain and text/html."""
    bundle = widget._repr_mimebundle_()
    assert bundle is not None
    data: dict[str, Any] = bundle[0]
    return data


def hostile_transcript(prompt: str = HOSTILE) -> Transcript:
    """Every entry kind, every text and fact a source can write, each :data:`HOSTILE`."""
    image = ImageData(media_type="image/png", data="iVBORw0KGgo=")
    usage = Usage(input_tokens=3, output_tokens=5, response_id=HOSTILE)
    child = Transcript(
        [UserMessage(text=HOSTILE), AssistantText(text=HOSTILE, model=HOSTILE, usage=usage)],
        metadata={"model": HOSTILE, "agent": HOSTILE},
    )
    tools = [("Read", "text"), ("Grep", "text"), ("Bash", "ansi"), ("Edit", "diff"),
             ("Write", "markdown"), (HOSTILE, "json"), ("TodoWrite", "todo"),
             ("ExitPlanMode", "plan"), ("Task", "subagent")]  # fmt: skip
    calls = [
        ToolCall(
            id=f"c{n}{HOSTILE}", call_id=f"call{n}{HOSTILE}", name=name, description=HOSTILE,
            args={"file_path": HOSTILE, "command": HOSTILE, "pattern": HOSTILE, HOSTILE: HOSTILE},
            status="error" if n % 3 == 0 else "success", batch_id="b1",
            started_at="2025-01-01T00:00:00Z", ended_at="2025-01-01T00:00:05Z",
            result=ToolResult(text=HOSTILE, kind=kind, images=[image]),  # type: ignore[arg-type]
            subagent=SubAgent(name=HOSTILE, task=HOSTILE, transcript=child, agent_id=HOSTILE,
                              reason=HOSTILE, tool_count=1, duration_ms=10, output_tokens=5)
            if name == "Task" else None,
        )
        for n, (name, kind) in enumerate(tools)
    ]  # fmt: skip
    entries = [
        UserMessage(id=f"u1{HOSTILE}", text=prompt, command=f"/{HOSTILE}", images=[image],
                    timestamp="2025-01-01T00:00:00Z"),
        Thinking(text=HOSTILE), Thinking(text=HOSTILE, form="summary"),
        Thinking(form="redacted", data=HOSTILE), Thinking(form="encrypted", data=HOSTILE),
        AssistantText(text=HOSTILE, model=HOSTILE, usage=usage), *calls,
        # S-1: the fast model's label (or a file's), as untrusted as what it summarizes.
        ToolUseSummary(label=HOSTILE, call_ids=[call.call_id for call in calls]),
        SystemNotice(text=HOSTILE, level="warning", subtype=HOSTILE),
        CompactionBoundary(summary=HOSTILE, trigger=HOSTILE, pre_tokens=5),
        UserMessage(text="again"), AssistantText(text=HOSTILE), AbortMarker(reason=HOSTILE),
        UserMessage(text="third"), AssistantError(message=HOSTILE),
        PendingAction(action="question", text=HOSTILE, call_id=HOSTILE, options=[HOSTILE]),
        UserMessage(text="fourth"), AssistantText(text=HOSTILE, model=HOSTILE),
    ]  # fmt: skip
    facts = ("title", "agent", "model", "session_id", "cwd", "git_branch", "version", "outcome",
             "stop_reason", "error", "final_output", "task", "sample", "epoch")  # fmt: skip
    metadata: dict[str, Any] = dict.fromkeys(facts, HOSTILE)
    metadata.update(score={HOSTILE: HOSTILE}, cost_usd=HOSTILE,
                    scores={HOSTILE: {"value": HOSTILE, "explanation": HOSTILE}})  # fmt: skip
    return Transcript(
        entries, metadata=metadata, warnings=[LoadWarning(reason=HOSTILE, line=1, source=HOSTILE)]
    )


#: A run's file name an attacker chose: the site's index links it, the browser lists it.
HOSTILE_NAME = "<img src=x onerror=PWN>\u202e\x1b]0;PWN\x07\"'&.jsonl"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / HOSTILE_NAME).write_text(hostile_transcript().dump(), encoding="utf-8")
    (folder / "b.jsonl").write_text(hostile_transcript("other").dump(), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "unsafe",
    [
        "<script>x</script>",
        '<img src="http://evil.test/t.png">',
        '<a href="javascript:x">x</a>',
        '<a href=" data:text/html,x">x</a>',
        '<span onclick="x">x</span>',
        '<span style="background:url(http://evil.test/)">x</span>',
        '<meta http-equiv="refresh" content="0;url=http://evil.test/">',
        "<iframe></iframe>",
        "<!-- x -->",
        "<style>PWN</style>",
    ],
)
def test_X1_the_sweep_s_audit_catches_active_content(unsafe: str) -> None:
    with pytest.raises(AssertionError):
        _inert(f"<p>&lt;script&gt;PWN&lt;/script&gt;</p>{unsafe}")


# --- one transcript -------------------------------------------------------------------------------


def test_X1_W4_W6_the_page_and_the_widget_s_html_are_inert() -> None:
    transcript = hostile_transcript()
    _inert(render_page(transcript, expand=True, title=HOSTILE), ("deeplinks.js",))
    _inert(render_page(transcript), ("deeplinks.js",))
    data = _bundle(turnfold.TranscriptWidget(transcript))
    _inert(data["text/html"], ("deeplinks.js",))


def test_X1_W1_the_widget_s_view_is_sanitized_html_or_text_with_visible_controls() -> None:
    # The JS sets the view's `*html` fields as HTML and everything else as text (js/src/dom.js):
    # the first must be sanitized, the second free of raw controls and bidi overrides. The
    # outcome line and the fast model's `● label` line were neither: U+202E reordered them.
    widget = turnfold.TranscriptWidget(hostile_transcript())
    for path, text in _texts(widget.view):
        if path.endswith("html"):
            audit_fragment(text)
    assert _shown_as_text(widget.view) == []
    outcome = widget.view["outcome"]
    assert outcome is not None
    assert "⟨U+202E⟩evil" in outcome["text"]
    labels = [text for path, text in _texts(widget.view) if path.endswith(".label")]
    assert any(label.startswith("● <script>PWN</script>") for label in labels)


def test_X1_B3_the_comparison_is_inert_as_a_page_a_widget_and_text() -> None:
    a, b = hostile_transcript(), hostile_transcript()
    _inert(render_compare_page(a, b, names=(HOSTILE, HOSTILE), title=HOSTILE))
    widget = compare(a, b, names=("a", "b"))
    state = widget.get_state()
    for path, text in _texts(state):
        if path.endswith("html"):
            audit_fragment(text)
    assert _shown_as_text(state) == []
    data = _bundle(widget)
    _inert(data["text/html"])
    # The outcome line reached the comparison's text/plain raw: a screen clear, a title change
    # and a clipboard write for a terminal that prints it.
    assert not RAW_CONTROLS.search(data["text/plain"].replace("\n", ""))
    assert "⟨U+202E⟩evil" in data["text/plain"]


def test_X1_W6_the_terminal_shows_controls_and_bidi_as_marks(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, color_system="truecolor", width=120)
    render_terminal(expand_all(build_view_model(hostile_transcript())), console)
    drawn = re.sub(r"\x1b\[[0-9;]*m", "", terminal.getvalue())  # rich's own colours
    assert not RAW_CONTROLS.search(drawn.replace("\n", ""))
    assert "<script>PWN</script>" in drawn
    assert main(["show", str(runs / HOSTILE_NAME), "--expand"]) == 0
    out, err = capsys.readouterr()
    for printed in (out, err):
        assert not RAW_CONTROLS.search(re.sub(r"\x1b\[[0-9;]*m", "", printed).replace("\n", ""))
    assert "⟨U+202E⟩evil" in out


# --- a corpus -------------------------------------------------------------------------------------


def test_X1_B1_C6_the_corpus_table_the_browser_and_its_search_hits_are_inert(runs: Path) -> None:
    corpus = turnfold.scan(runs, workers=1, cache=False)
    assert [row["error"] for row in corpus.rows] == [None, None]
    _inert(corpus._repr_html_())
    browser = SessionBrowser(corpus)
    data = _bundle(browser)
    _inert(data["text/html"])
    assert not RAW_CONTROLS.search(data["text/plain"].replace("\n", ""))
    # B-1: the outcome cell and its filter's label reached the browser's text raw.
    assert _shown_as_text(browser.get_state()) == []
    # C-6: a snippet is the transcript's text: shown, never obeyed, wherever it is printed.
    hits = corpus.search("evil")
    assert hits
    for hit in hits:
        assert not RAW_CONTROLS.search(hit.snippet), hit.snippet
    assert any("⟨U+202E⟩evil" in hit.snippet for hit in hits)
    _inert(render_compare_page(corpus, corpus, key="path", names=(HOSTILE, "b"), title=HOSTILE))


def test_X1_B2_the_site_runs_only_its_own_script_and_its_sort_data_parses(
    runs: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    build_site(runs, site, workers=1, progress=False)
    index = (site / INDEX).read_text("utf-8")
    _inert(index, ("site-index.js",))
    # The index's script sorts by each row's `data-sort`, JSON.parse'd: a model named with a
    # U+2028 became a raw newline inside a JSON string there, and sorting threw.
    sorts = re.findall(r' data-sort="([^"]*)"', index)
    assert len(sorts) == 2
    for sort in sorts:
        values = json.loads(html.unescape(sort))
        assert isinstance(values, list)
    pages = sorted((site / RUNS).glob("*.html"))
    assert len(pages) == 2
    for page in pages:
        _inert(page.read_text("utf-8"), ("deeplinks.js",))


# --- an Inspect log the real inspect_ai wrote -----------------------------------------------------


def _hostile_eval(folder: Path) -> Path:
    """An Inspect AI ``.eval`` log written by the real ``inspect_ai`` on ``mockllm/model``: a
    sample whose id, input, target and metadata are hostile, a tool that fails with a hostile
    error, a hostile answer, a scorer whose value, answer, explanation and metadata are
    hostile. Run on a thread of its own (Inspect starts an event loop: see inspect_logs.py)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState, generate, use_tools
    from inspect_ai.tool import Tool, ToolError, tool

    from tests.formats.inspect_logs import _offline_tokens

    @tool
    def probe() -> Tool:
        async def execute(path: str) -> str:
            """Read a path.

            Args:
                path: The path.
            """
            raise ToolError(HOSTILE)

        return execute

    @scorer(metrics=[accuracy()])
    def judge() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=HOSTILE, answer=HOSTILE, explanation=HOSTILE,
                         metadata={HOSTILE: HOSTILE})  # fmt: skip

        return score

    def answer(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        if not any(message.role == "tool" for message in input):
            return ModelOutput.for_tool_call("mockllm/model", "probe", {"path": HOSTILE},
                                             tool_call_id="c1")  # fmt: skip
        return ModelOutput.from_content("mockllm/model", HOSTILE)

    sample = Sample(id=HOSTILE[:120], input=HOSTILE, target=HOSTILE,
                    metadata={HOSTILE: HOSTILE, "note": HOSTILE})  # fmt: skip
    task = Task(dataset=[sample], solver=[use_tools(probe()), generate()], scorer=judge())

    def run() -> Path:
        with _offline_tokens():
            [log] = inspect_eval(task, model="mockllm/model", model_args={"custom_outputs": answer},
                                 log_dir=str(folder), display="none")  # fmt: skip
        return Path(log.location)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def test_X1_H1_a_hostile_inspect_log_is_inert_in_its_table_its_page_and_its_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("inspect_ai")
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    log = _hostile_eval(tmp_path / "logs")
    corpus = turnfold.scan(log, workers=1, cache=False)
    assert [row["error"] for row in corpus.rows] == [None]
    _inert(corpus._repr_html_())
    transcript = corpus[corpus.rows[0]["key"]]
    assert transcript.metadata["target"] == HOSTILE  # the log was read, payloads and all
    _inert(render_page(transcript, expand=True), ("deeplinks.js",))
    widget = turnfold.TranscriptWidget(transcript)
    assert _shown_as_text(widget.view) == []
    site = tmp_path / "site"
    build_site(log, site, workers=1, progress=False)
    _inert((site / INDEX).read_text("utf-8"), ("site-index.js",))
    for page in (site / RUNS).glob("*.html"):
        _inert(page.read_text("utf-8"), ("deeplinks.js",))
