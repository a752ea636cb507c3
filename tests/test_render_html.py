"""The static HTML page and notebook fragment (spec W-4, P-1 … P-12, F-10 … F-15, X-1).

Golden files: ``tests/golden/*.html`` hold the rendering of every fixture and of the bundled
demo session (en and zh, default mode; the demo in all three modes). The stylesheet is kept out
of them (``<style>`` is replaced by a marker) and checked once in ``tests/golden/*.css``, so a
change of colour does not rewrite every golden file. After an intended change, regenerate with

    TURNFOLD_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_render_html.py \
        tests/test_render_text.py -p no:cacheprovider

and review the diff of ``tests/golden/`` like any other change. On a mismatch the test shows
the first lines of a unified diff.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cli import expand_all
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
    UserMessage,
)
from turnfold.render.content import MORE_CHARS, content_css
from turnfold.render.html import CSP, DEEP_LINKS, nodes_html, render_html, turnfold_css
from turnfold.render.scripts import script_tag, source
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings

TESTS = Path(__file__).parent
GOLDEN = TESTS / "golden"
DEMO = Path(turnfold.__file__).parent / "samples" / "demo-session.jsonl"
FIXTURES = sorted((TESTS / "fixtures").glob("*.json*"))
SOURCES = [*FIXTURES, DEMO]
UPDATE = os.environ.get("TURNFOLD_UPDATE_GOLDEN") == "1"
MODES = ("flat", "command-first", "fully-folded")
CASES = [(path, locale, "fully-folded") for path in SOURCES for locale in ("en", "zh")] + [
    (DEMO, locale, mode) for mode in MODES[:2] for locale in ("en", "zh")
]
STYLE = re.compile(r"<style>.*?</style>", re.S)
#: The page's own script, and its hash in the policy, are checked once (test_B2_…), not in
#: every golden file.
SCRIPT = re.compile(r"<script>.*?</script>", re.S)
SCRIPT_HASH = re.compile(r"'sha256-[A-Za-z0-9+/=]+'")


def golden_page(page: str) -> str:
    """A page as its golden file holds it: the style, the script and its hash as markers."""
    page = STYLE.sub("<style>/* see page.css */</style>", page)
    page = SCRIPT.sub("<script>/* see render/scripts/deeplinks.js */</script>", page)
    return SCRIPT_HASH.sub("'sha256-…'", page)


def case_id(case: tuple[Path, str, str]) -> str:
    path, locale, mode = case
    return f"{path.stem}.{locale}.{mode}"


def load_relative(path: Path) -> turnfold.Transcript:
    """Load by a path relative to the repository, so warnings name the same file on every
    machine and checkout (the golden files must not depend on where the tests run)."""
    here = Path.cwd()
    os.chdir(TESTS.parent)
    try:
        return turnfold.load(os.path.relpath(path, TESTS.parent))
    finally:
        os.chdir(here)


def view_of(path: Path, locale: str = "en", mode: str = "fully-folded", **settings: Any) -> Any:
    return build_view_model(
        load_relative(path),
        DisplaySettings(transcript_display_mode=mode, locale=locale, **settings),
    )


def check_golden(name: str, actual: str) -> None:
    """Compare with ``tests/golden/name``; rewrite it instead when TURNFOLD_UPDATE_GOLDEN=1."""
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"no golden file {name}; run with TURNFOLD_UPDATE_GOLDEN=1 to create it"
    expected = path.read_bytes().decode("utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), f"golden/{name}", "rendered", lineterm=""
        )
        shown = "\n".join(list(diff)[:40])
        pytest.fail(f"{name} differs (TURNFOLD_UPDATE_GOLDEN=1 regenerates it):\n{shown}")


# --- a small DOM, enough to check structure -------------------------------------------------------

VOID = {"meta", "br", "img", "hr", "input", "link", "wbr", "col", "source"}


@dataclass(eq=False)
class Element:
    tag: str
    attrs: dict[str, str | None]
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            yield from child.walk()

    def ancestors(self) -> Iterator[Element]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def all_text(self) -> str:
        return "".join(self.text) + "".join(child.all_text() for child in self.children)


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs), self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_endtag(self, tag: str) -> None:
        node: Element | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None, f"</{tag}> closes nothing"
        assert node is self.current, f"</{tag}> closes <{self.current.tag}> implicitly"
        self.current = node.parent or self.root

    def handle_data(self, data: str) -> None:
        self.current.text.append(data)


def parse(markup: str) -> Element:
    builder = TreeBuilder()
    builder.feed(markup)
    builder.close()
    assert builder.current is builder.root, "unclosed elements"
    return builder.root


def keyed(root: Element) -> dict[str, Element]:
    found: dict[str, Element] = {}
    for element in root.walk():
        key = element.attrs.get("data-key")
        if key is not None:
            assert key not in found, f"data-key {key!r} twice"
            found[key] = element
    return found


def nodes_by_key(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes = {node["key"]: node for node in iter_nodes(view)}
    for node in list(nodes.values()):
        if node["kind"] == "turn" and node["process"]:
            nodes[node["process"]["key"]] = node["process"]
    if view.get("notice"):
        nodes["warnings"] = view["notice"]
    if view.get("timeline"):
        nodes["timeline"] = view["timeline"]
    return nodes


# --- golden files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_W4_html_rendering_matches_golden_file(case: tuple[Path, str, str]) -> None:
    path, locale, mode = case
    page = render_html(view_of(path, locale, mode), title=path.name)
    check_golden(f"{case_id(case)}.html", golden_page(page))


def test_W4_stylesheets_match_golden_files() -> None:
    check_golden("page.css", turnfold_css(standalone=True))
    check_golden("fragment.css", turnfold_css(standalone=False))


# --- determinism (W-4) ----------------------------------------------------------------------------

_HASH_SCRIPT = """
import hashlib, sys, turnfold
from turnfold.render.html import render_html
from turnfold.render.viewmodel import build_view_model
for path in sys.argv[1:]:
    page = render_html(build_view_model(turnfold.load(path)), title=path)
    print(hashlib.sha256(page.encode()).hexdigest())
"""


def test_W4_same_view_renders_byte_identical_html() -> None:
    for path in SOURCES:
        view = view_of(path)
        assert render_html(view, title="t") == render_html(view_of(path), title="t")
        assert render_html(view, standalone=False) == render_html(view, standalone=False)


def test_W4_html_does_not_depend_on_hash_seed_or_process() -> None:
    paths = [str(DEMO), str(FIXTURES[0])]
    expected = [
        hashlib.sha256(
            render_html(build_view_model(turnfold.load(p)), title=p).encode()
        ).hexdigest()
        for p in paths
    ]
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _HASH_SCRIPT, *paths],
            capture_output=True, text=True, check=True, env=env,
        ).stdout.split()  # fmt: skip
        assert out == expected, f"PYTHONHASHSEED={seed}"


# --- structure (P-1, P-3, P-8, W-4) ---------------------------------------------------------------

#: Views with open folds too: settled groups and thinking kept open, a running turn, all open.
VARIANTS: list[tuple[str, dict[str, Any], bool, bool]] = [
    ("default", {}, False, False),
    ("keep-open", {"auto_collapse_settled_groups": False, "auto_collapse_thinking": False},
     False, False),
    ("running", {}, True, False),
    ("expanded", {"show_tool_call_args": True}, False, True),
]  # fmt: skip


def variant_views() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in SOURCES:
        for name, settings, running, expand in VARIANTS:
            for mode in MODES:
                transcript = turnfold.load(path)
                if running:  # the last turn is still at work: a command is executing
                    transcript.append(ToolCall(call_id="live", name="Bash", description="make",
                                               status="executing"))  # fmt: skip
                view = build_view_model(
                    transcript, DisplaySettings(transcript_display_mode=mode, **settings)
                )
                yield f"{path.stem}/{name}/{mode}", expand_all(view) if expand else view


VIEWS = list(variant_views())


def test_P8_running_hint_on_a_turn_ending_in_a_memory_only_batch() -> None:
    view = build_view_model(turnfold.load(DEMO), running=True)
    assert view["nodes"][-1]["process"]["open"]


@pytest.mark.parametrize("view", [v for _, v in VIEWS], ids=[n for n, _ in VIEWS])
def test_P1_one_process_details_per_turn_with_answer_and_surfaces_outside(
    view: dict[str, Any],
) -> None:
    elements = keyed(parse(render_html(view)))
    for turn in (n for n in iter_nodes(view) if n["kind"] == "turn"):
        section = elements[turn["key"]]
        assert section.tag == "section"
        processes = [c for c in section.children if "tf-process" in c.classes]
        assert len(processes) == (1 if turn["process"] else 0)
        for element in section.walk():  # no second process of this turn anywhere inside
            if "tf-process" in element.classes and element not in processes:
                owner = next(a for a in element.ancestors() if a.tag == "section")
                assert owner is not section
        order = section.children
        for surface in turn["outside"]:  # P-3: visible without opening the process
            element = elements[surface["key"]]
            assert element.parent is section
            assert not processes or order.index(element) > order.index(processes[0])
        if turn["answer"]:  # P-1: the answer sits after the process, outside it
            answer = elements[turn["answer"]["key"]]
            assert answer.parent is section
            assert order[-1] is answer


@pytest.mark.parametrize("view", [v for _, v in VIEWS], ids=[n for n, _ in VIEWS])
def test_P8_details_open_exactly_where_the_view_model_says(view: dict[str, Any]) -> None:
    root = parse(render_html(view))
    nodes = nodes_by_key(view)
    elements = keyed(root)
    for element in root.walk():
        if element.tag != "details":
            continue
        is_open = "open" in element.attrs
        key = element.attrs.get("data-key")
        if key is None and "tf-tool-d" in element.classes:
            key = element.parent.attrs.get("data-key") if element.parent else None
        if key is not None:
            assert is_open == bool(nodes[key].get("open")), key
        else:  # "show more", compaction summaries: closed until the reader opens them
            assert not is_open
    for key, node in nodes.items():
        if node.get("open"):
            element = elements[key]
            details = element if element.tag == "details" else element.children[0]
            if details.tag != "details":  # a tool row with nothing behind its title
                assert node["kind"] == "tool", key
                continue
            assert "open" in details.attrs, key


def without_own_script(page: str) -> str:
    """``page`` less its deep-link script (B-2), which it holds at most once and exactly as
    ``render/scripts/deeplinks.js`` is written: no other script, nothing from a transcript."""
    tag = script_tag(DEEP_LINKS)
    assert page.lower().count("<script") == page.count(tag) <= 1
    return page.replace(tag, "")


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_X1_page_is_self_contained_with_strict_csp(path: Path) -> None:
    page = render_html(view_of(path), title=path.name)
    assert script_tag(DEEP_LINKS) in page
    root = parse(without_own_script(page))
    metas = [e for e in root.walk() if e.tag == "meta"]
    assert metas[0].attrs == {"charset": "utf-8"}
    csp = [e for e in metas if e.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert [e.attrs["content"] for e in csp] == [CSP]
    # B-2: one script may run, the page's own, named by its hash; nothing else.
    digest = hashlib.sha256(source(DEEP_LINKS).encode("utf-8")).digest()
    allowed = f"'sha256-{base64.b64encode(digest).decode('ascii')}'"
    assert (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {allowed}" == CSP
    )
    head = next(e for e in root.walk() if e.tag == "head")
    assert head.children.index(csp[0]) < [c.tag for c in head.children].index("style")
    assert_no_external_resources(root)


def assert_no_external_resources(root: Element) -> None:
    for element in root.walk():
        assert element.tag not in ("link", "script", "iframe", "object", "embed", "base")
        src = element.attrs.get("src")
        if src is not None:
            assert element.tag == "img", src
            assert src.startswith("data:image/"), src
        href = element.attrs.get("href")
        if href is not None:
            assert element.tag == "a", href
            # the timeline's links go to a call's row on the same page (U-4)
            assert re.match(r"(https?|mailto):|#call-", href), href
        if element.tag == "style":
            css = element.all_text()
            assert "url(" not in css
            assert "@import" not in css


def test_W4_fragment_is_one_scoped_root_div() -> None:
    fragment = render_html(view_of(DEMO), standalone=False)
    root = parse(fragment)
    (div,) = root.children
    assert div.tag == "div"
    assert div.classes == ["turnfold"]
    assert div.children[0].tag == "style"
    assert "<!DOCTYPE" not in fragment
    assert "<meta" not in fragment
    assert "<script" not in fragment
    own = turnfold_css(standalone=False).replace(content_css(), "")
    for selector in css_selectors(own):
        assert ".turnfold" in selector, f"unscoped rule {selector!r}"
    assert_no_external_resources(root)


def css_selectors(css: str) -> Iterator[str]:
    """The selectors of style rules (not at-rules, not keyframe steps)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    depth, start, in_keyframes = 0, 0, False
    for index, char in enumerate(css):
        if char == "{":
            prelude = css[start:index].strip()
            if prelude.startswith("@keyframes"):
                in_keyframes = True
            elif not prelude.startswith("@") and not in_keyframes:
                yield prelude
            depth += 1
            start = index + 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                in_keyframes = False
            start = index + 1
        elif char == ";":
            start = index + 1


def test_W3_light_and_dark_themes_follow_jupyterlab_variables() -> None:
    page, fragment = turnfold_css(standalone=True), turnfold_css(standalone=False)
    assert "var(--jp-ui-font-color1, #1f2328)" in fragment
    assert '[data-jp-theme-light="false"] .turnfold' in fragment
    assert "@media (prefers-color-scheme: dark) { body.tf-page" in page
    # A page of unknown colour (nbviewer) keeps the light fallbacks in the fragment.
    assert "prefers-color-scheme: dark) { body.tf-page" not in fragment
    assert content_css() in page
    assert content_css() in fragment


# --- layout (P-7, P-12) ---------------------------------------------------------------------------


def demo_page(**settings: Any) -> tuple[dict[str, Any], dict[str, Element]]:
    view = view_of(DEMO, **settings)
    return view, keyed(parse(render_html(view)))


def test_P7_turn_header_is_one_row_with_the_indicator_after_the_count() -> None:
    view, elements = demo_page()
    turn = view["nodes"][1]
    summary = elements[turn["process"]["key"]].children[0]
    assert summary.tag == "summary"
    assert summary.classes == ["tf-head"]
    texts = [c.all_text() for c in summary.children]
    assert texts == ["Completed", "·", "25s", "·", "7 tools", ""]
    assert summary.children[-1].classes == ["tf-chev"]
    css = turnfold_css(standalone=True)
    assert "border-bottom: 1px solid var(--tf-border)" in css  # the thin divider
    hover = re.findall(r"summary\.tf-head:hover[^{]*\{([^}]*)\}", css)
    assert hover
    assert all(rule.strip().startswith("color:") for rule in hover)
    assert "background" not in "".join(hover)


def test_P12_group_rows_indent_12px_with_a_visual_only_rail() -> None:
    view, elements = demo_page(auto_collapse_settled_groups=False)
    group = next(n for n in iter_nodes(view) if n["kind"] == "group")
    details = elements[group["key"]]
    summary, body = details.children
    assert summary.tag == "summary"
    assert body.classes == ["tf-body"]
    assert summary.children[-1].classes == ["tf-chev"]  # title first: one left edge
    css = turnfold_css(standalone=True)
    assert ".turnfold .tf-group > .tf-body { position: relative; padding-left: 12px; }" in css
    assert "width: 2px" in css
    assert "background: transparent; pointer-events: none" in css
    assert ".turnfold .tf-pbody { padding: 4px 0 2px; }" in css  # P-12: no extra level


def test_P12_edit_with_diff_has_one_row_level() -> None:
    view, elements = demo_page()
    edit = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["name"] == "Edit")
    row = elements[edit["key"]]
    title, result = row.children
    assert title.tag == "details"
    assert title.children[0].all_text().startswith("Editsrc/config.ts")
    assert result.classes == ["tf-result"]
    assert result.children[0].tag == "pre"
    assert "tf-diff" in result.children[0].classes


def test_F13_tool_names_bold_and_F15_labels_dim() -> None:
    view, elements = demo_page()
    page = render_html(view)
    names = re.findall(r'<span class="tf-name tf-fixed">([^<]*)</span>', page)
    assert names == ["Grep", "Read", "Read", "Bash", "Edit", "Bash", "Task", "Read", "Grep"]
    assert ".turnfold .tf-name { font-weight: bold; }" in turnfold_css(standalone=True)
    labels = [e for e in elements.values() if e.tag == "div" and "tf-batch" in e.classes]
    dims = [c for b in labels for c in b.children if "tf-label" in c.classes]
    assert [d.all_text() for d in dims] == [
        "● Read config parser and tests",
        "● Verified fix with tests and review",
    ]
    assert all("tf-dim" in d.classes for d in dims)
    memory = [c for b in labels for c in b.children if "tf-memory" in c.classes]
    assert [m.all_text() for m in memory] == ["Wrote 1 memory"]
    assert all("tf-dim" in m.classes for m in memory)


def test_F10a_summary_row_opens_to_its_tools() -> None:
    view, elements = demo_page()
    summary = next(n for n in iter_nodes(view) if n["kind"] == "summary")
    details = elements[summary["key"]]
    assert details.tag == "details"
    assert "open" not in details.attrs
    tools = [c.attrs["data-key"] for c in details.children[1].children]
    assert tools == [tool["key"] for tool in summary["tools"]]
    # F-12: a read's plain output folds behind the tool's own title, inside the summary.
    grep = elements[summary["tools"][0]["key"]]
    assert grep.children[0].tag == "details"
    assert grep.children[0].children[1].children[-1].classes == ["tf-result"]


def test_F7_subagent_line_and_child_transcript_nest_in_the_tool_row() -> None:
    view, elements = demo_page()
    task = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["subagent"])
    row = elements[task["key"]]
    head = row.children[0].children[0]
    assert "✔ reviewer: review the fix · 2 tools · 12s · 2.4k tokens" in head.all_text()
    for child in task["subagent"]["nodes"]:
        assert row in elements[child["key"]].ancestors()


def cancelled_and_long_transcript() -> Transcript:
    long_output = "\n".join(f"line {n}" for n in range(40))
    return Transcript([
        UserMessage(text="go"),
        ToolCall(call_id="c1", name="Read", description="a.py", status="cancelled",
                 result=ToolResult(text="partial"), batch_id="b1"),
        ToolCall(call_id="c2", name="Read", description="b.py", status="success",
                 result=ToolResult(text="ok"), batch_id="b1"),
        ToolCall(call_id="c3", name="Bash", description="make", status="success",
                 result=ToolResult(text=long_output), batch_id="b2"),
        Thinking(form="redacted"),
        AssistantText(text="done"),
    ])  # fmt: skip


def test_F10_cancelled_collapsible_tool_is_struck_and_keeps_its_output() -> None:
    view = build_view_model(cancelled_and_long_transcript())
    elements = keyed(parse(render_html(view)))
    cancelled = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["struck"])
    row = elements[cancelled["key"]]
    assert "tf-struck" in row.classes
    assert "tf-s-cancelled" in row.classes
    assert "partial" in row.children[-1].all_text()  # not folded away
    assert "text-decoration: line-through" in turnfold_css(standalone=True)


def test_F12_long_output_is_capped_with_the_rest_behind_show_more() -> None:
    view = build_view_model(cancelled_and_long_transcript())
    elements = keyed(parse(render_html(view)))
    bash = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["name"] == "Bash")
    result = elements[bash["key"]].children[-1]
    shown, more = result.children[:2]
    assert "line 0" in shown.all_text()
    assert "line 39" not in shown.all_text()
    assert more.tag == "details"
    assert "open" not in more.attrs
    assert more.children[0].all_text() == f"Show {bash['result']['more_lines']} more lines"
    assert "line 39" in more.all_text()  # never dropped


def test_P9_redacted_thinking_is_labelled_not_empty() -> None:
    view = build_view_model(cancelled_and_long_transcript())
    elements = keyed(parse(render_html(view)))
    thinking = next(n for n in iter_nodes(view) if n["kind"] == "thinking")
    text = elements[thinking["key"]].all_text()
    assert "Thinking" in text
    assert "Reasoning redacted by the provider" in text


def test_P9_thinking_indicator_shimmers_and_stills_under_reduced_motion() -> None:
    transcript = Transcript([UserMessage(text="go"), Thinking(text="hmm", streaming=True)])
    view = build_view_model(transcript, DisplaySettings(show_thinking=False))
    elements = keyed(parse(render_html(view)))
    (indicator,) = (n for n in iter_nodes(view) if n["kind"] == "thinking-indicator")
    label = elements[indicator["key"]].children[0]
    assert label.classes == ["tf-shimmer"]
    assert label.all_text() == "Thinking"
    css = turnfold_css(standalone=False)
    assert "animation: tf-sweep 1.2s linear infinite" in css
    reduced = css.split("@media (prefers-reduced-motion: reduce)")[1]
    assert "animation: none" in reduced.split("}")[0]


def test_L4_warnings_render_as_one_quiet_closed_notice() -> None:
    path = next(p for p in FIXTURES if turnfold.load(p).warnings)
    view = view_of(path)
    root = parse(render_html(view))
    notices = [e for e in root.walk() if "tf-notice" in e.classes]
    assert len(notices) == 1
    assert notices[0].tag == "details"
    assert "open" not in notices[0].attrs
    items = [e for e in notices[0].walk() if e.tag == "li"]
    assert len(items) == len(view["notice"]["items"])


def test_W4_title_is_escaped() -> None:
    page = render_html(view_of(DEMO), title="</title><script>x</script>")
    assert "<title>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;</title>" in page
    assert "<script" not in without_own_script(page)


# --- hostile content (X-1) ------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "<svg><script>alert(1)</script></svg>",
    '<a href="javascript:alert(1)">click</a>',
    "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html;base64,PHNjcmlwdD4=)",
    "![t](http://evil.test/track.png) ![s](data:image/svg+xml;base64,PHN2Zy8+) <http://evil.test>",
    "[r]\n\n[r]: javascript:alert(1)",
    '<div style="background:url(http://evil.test/x)">css</div><style>@import "http://e";</style>',
    "<link rel=stylesheet href=http://evil.test/x.css><iframe src=//evil.test></iframe>",
    "\x1b]8;;javascript:alert(1)\x07click\x1b]8;;\x07 \x1b]52;c;ZXZpbA==\x07 \x1b[31mred\x1b[0m",
    "\x1b[38;2;1;2;3mtrue\x1b[0m \x9b31m \x1bP+q\x1b\\ bell\x07 nul\x00",
    "access \u202e\u2066evil\u2069\u202c granted",
    "</details></section><details open ontoggle=alert(1)><summary>x",
    "' onmouseover='alert(1)' data-x='",
]
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "section", "details",
    "summary", "div", "span", "code", "ul", "li", "pre", "a", "blockquote", "br", "em", "h2",
    "h3", "h4", "h5", "h6", "hr", "img", "ol", "p", "strong", "table", "tbody", "td", "th",
    "thead", "tr", "svg", "g", "rect",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "class", "data-key", "data-mode", "lang", "open", "aria-hidden", "charset", "http-equiv",
    "content", "name", "href", "src", "alt", "title", "target", "rel", "align", "start", "style",
    "id", "role", "aria-label", "viewbox", "preserveaspectratio", "x", "y", "width", "height",
}  # fmt: skip
ANSI_STYLE = re.compile(r"(?:color:#[0-9a-f]{6})?;?(?:background-color:#[0-9a-f]{6})?")
NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
#: U-4: the timeline places its labels, its shapes and its axis by numbers in CSS variables only.
AXIS_STYLE = re.compile(
    rf"--x:{NUMBER};--w:{NUMBER}(?:;--y:{NUMBER};--h:{NUMBER})?|--h:{NUMBER}"
    rf"|--tf-x0:{NUMBER};--tf-span:{NUMBER}"
)
SCRIPT_URL = re.compile(r"\s*(java|vb)script:|\s*data:text", re.I)
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,\S*")
FORBIDDEN_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_transcript(p: str) -> Transcript:
    """Every field a person can see, holding ``p``."""
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVO"
    png += "RK5CYII="
    kinds = ["text", "ansi", "markdown", "json", "diff", "plan", "todo", "subagent"]
    child = Transcript([UserMessage(text=p), ToolCall(call_id="k1", name=p, description=p,
                        args={"a": p}, status="success", result=ToolResult(text=p)),
                        AssistantText(text=p)])  # fmt: skip
    # Timed, so the timeline draws them too (U-4), with an idle gap before the answer.
    calls = [
        ToolCall(call_id=f"r{i}", name=p, description=p, args={p: p}, status=status,
                 result=ToolResult(text=p + "\n" * 30 + p, kind=kind), batch_id="b1",
                 started_at=f"2026-01-01T00:00:{i:02d}Z", duration_ms=1500)
        for i, (kind, status) in enumerate(
            (k, s) for k in kinds for s in ("success", "error", "cancelled")
        )
    ]  # fmt: skip
    return Transcript(
        [
            UserMessage(text=p, command=p),
            Thinking(text=p),
            Thinking(text=p, form="summary"),
            Thinking(form="encrypted", data=p),
            AssistantText(text=p),
            *calls,
            ToolCall(call_id="g1", name="Grep", description=p, args=p, status="success",
                     result=ToolResult(text=p, images=[ImageData(media_type="image/svg+xml",
                     data=p), ImageData(media_type="image/png", data=png)]), batch_id="b2"),
            ToolCall(call_id="g2", name="Read", description=p, status="success",
                     result=ToolResult(text=p), batch_id="b2"),
            ToolCall(call_id="m1", name="save_memory", description=p, status="success",
                     memory="write", result=ToolResult(text=p), batch_id="b3"),
            ToolCall(call_id="g3", name="Read", description=p, status="success",
                     result=ToolResult(text=p), batch_id="b3"),
            ToolUseSummary(label=p, call_ids=["g1", "g2"]),
            ToolCall(call_id="t1", name="Task", description=p, status="error", batch_id="b4",
                     result=ToolResult(text=p, kind="subagent"),
                     subagent=SubAgent(name=p, task=p, reason=p, transcript=child)),
            ToolCall(call_id="s1", name="Bash", args={"command": p}, status="executing",
                     batch_id="b5"),
            SystemNotice(text=p, level="warning"),
            CompactionBoundary(summary=p),
            UserMessage(text=p),
            AssistantError(message=p),
            AbortMarker(reason=p),
            PendingAction(action="question", text=p, options=[p, p + "2"]),
            AssistantText(text=p, timestamp="2026-01-01T00:09:00Z"),
        ],
        metadata={"title": p},
        warnings=[LoadWarning(reason=p, line=3, source=p)],
    )  # fmt: skip


class Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.styles = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        self.styles += tag == "style"
        for name, value in attrs:
            value = value or ""
            if name not in ALLOWED_ATTRIBUTES or name.startswith("on"):
                self.problems.append(f"attribute {name}= on <{tag}>")
            if name in ("href", "src") and SCRIPT_URL.match(value):
                self.problems.append(f"script URL {value!r}")
            if name == "href" and not re.match(r"(https?|mailto):|#call-e\d+(?:/e\d+)*$", value):
                self.problems.append(f"href {value!r}")
            if name == "src" and not DATA_IMAGE.fullmatch(value):
                self.problems.append(f"src {value!r}")
            if name == "id" and not re.fullmatch(r"call-e\d+(?:/e\d+)*|turn-\d+", value):
                self.problems.append(f"id {value!r}")
            if name in ("x", "y", "width", "height") and not re.fullmatch(NUMBER, value):
                self.problems.append(f"{name} {value!r}")
            if name == "viewbox" and not re.fullmatch(rf"{NUMBER}(?: {NUMBER}){{3}}", value):
                self.problems.append(f"viewBox {value!r}")
            ansi = tag == "span" and ANSI_STYLE.fullmatch(value)
            if name == "style" and not ansi and not AXIS_STYLE.fullmatch(value):
                self.problems.append(f"style {value!r} on <{tag}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")


def audit(page: str) -> None:
    page = without_own_script(page)
    assert not re.search(r"<\s*/?\s*script", page, re.I)
    assert not FORBIDDEN_CHARACTERS.search(page.replace("\n", "")), "control or bidi character"
    parser = Audit()
    parser.feed(page)
    parser.close()
    assert parser.problems == []
    assert parser.styles == 1
    (css,) = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert css.strip() in (turnfold_css(standalone=True).strip(),
                           turnfold_css(standalone=False).strip())  # fmt: skip
    assert_no_external_resources(parse(page))


@pytest.mark.parametrize("payload", HOSTILE)
def test_X1_hostile_transcript_renders_inert(payload: str) -> None:
    transcript = hostile_transcript(payload)
    for mode in MODES:
        for settings in ({}, {"full_detail": True, "show_tool_call_args": True}):
            view = build_view_model(
                transcript, DisplaySettings(transcript_display_mode=mode, **settings)
            )
            expanded = expand_all(build_view_model(transcript, DisplaySettings(**settings)))
            for shown in (view, expanded):
                audit(render_html(shown, title=transcript.metadata["title"]))
                audit(render_html(shown, standalone=False))


def test_X1_hostile_text_stays_readable() -> None:
    page = render_html(
        expand_all(build_view_model(hostile_transcript("<script>alert(1)</script>")))
    )
    text = parse(page).all_text()
    assert text.count("<script>alert(1)</script>") > 20  # shown as text, not dropped


# --- long outputs in the page (F-12, X-2, Q-1) ----------------------------------------------------


def long_output_view(
    kind: str = "text",
    lines: int = 3000,
    more_chars: int | None = MORE_CHARS,
    locale: str = "en",
) -> dict[str, Any]:
    output = "\n".join(f"\x1b[32mok\x1b[0m line {n}" for n in range(lines))
    transcript = Transcript([
        UserMessage(text="go"),
        ToolCall(call_id="c", name="Bash", description="make", status="success",
                 result=ToolResult(text=output, kind=kind)),
        AssistantText(text="done"),
    ])  # fmt: skip
    settings = DisplaySettings(locale=locale)
    return build_view_model(transcript, settings, more_chars=more_chars)


@pytest.mark.parametrize("kind", ["text", "ansi", "diff", "json"])
def test_X2_page_caps_a_long_rest_and_says_exactly_what_it_left_out(kind: str) -> None:
    view = long_output_view(kind)
    (tool,) = (n for n in iter_nodes(view) if n["kind"] == "tool")
    result = tool["result"]
    shown, more_lines, omitted = (result["html"].count("\n"), result["more_lines"],
                                  result["omitted_lines"])  # fmt: skip
    assert more_lines > 0
    assert omitted > 0
    assert shown + more_lines + omitted == result["lines"]  # every line is accounted for
    root = parse(render_html(view))  # parse() also proves every span is closed again
    (more,) = (e for e in root.walk() if "tf-more" in e.classes)
    assert more.children[0].all_text() == f"Show {more_lines} more lines"
    assert more.children[1].all_text().count("\n") == more_lines
    (note,) = (e for e in more.walk() if "tf-omitted" in e.classes)
    assert note.all_text() == (
        f"{omitted} more lines not included in this page; the transcript keeps the full output"
    )
    whole = long_output_view(kind, more_chars=None)
    assert len(render_html(whole)) - len(render_html(view)) > 50_000
    assert not [e for e in parse(render_html(whole)).walk() if "tf-omitted" in e.classes]


def test_X2_the_omitted_note_is_localized() -> None:
    # The view model holds the phrases in the reader's language (W-1): built for it.
    view = long_output_view(locale="zh")
    assert "行未包含在此页面中" in render_html(view)


def test_X2_markdown_and_short_outputs_are_never_cut() -> None:
    from turnfold.render.content import result_view

    words = ToolResult(text="word " * 5000, kind="markdown")
    assert "omitted_lines" not in result_view(words)  # type: ignore[operator]
    short = ToolResult(text="a\nb\n")
    assert result_view(short) == result_view(short, more_chars=None)


@pytest.mark.parametrize(
    "unsafe",
    [
        "<script>x</script>",
        '<img src="http://evil.test/x.png">',
        '<div onclick="x()">',
        '<a href="javascript:x()">',
        '<span style="background:url(http://evil.test/)">',
        '<link rel="stylesheet" href="http://evil.test/x.css">',
        "<iframe></iframe>",
        "\u202e",
        "\x1b[31m",
    ],
)
def test_X1_the_audit_itself_catches_unsafe_pages(unsafe: str) -> None:
    page = render_html(view_of(DEMO)).replace("<main", unsafe + "<main", 1)
    with pytest.raises(AssertionError):
        audit(page)


# --- W-4: a size budget for the notebook's fallback ----------------------------------------------


def test_W4_a_budget_keeps_the_latest_turns_whole_and_says_what_it_left_out() -> None:
    view = build_view_model(turnfold.load(DEMO))
    whole = render_html(view, standalone=False)
    assert render_html(view, standalone=False, budget=len(whole)) == whole  # it fits: unchanged
    turns = [n for n in view["nodes"] if n["kind"] == "turn"]
    assert len(turns) >= 2
    last = nodes_html(view["nodes"][-1:], "en")  # the budget counts the nodes, not the style
    kept = render_html(view, standalone=False, budget=len(last))
    assert len(kept) < len(whole)
    elements = keyed(parse(kept))
    for turn in turns:  # every header, answer and process fold is still there
        assert turn["key"] in elements
        assert turn["process"]["key"] in elements
        if turn["answer"]:
            assert turn["answer"]["key"] in elements
    inside = [n["key"] for n in iter_nodes({"nodes": turns[0]["process"]["children"]})]
    assert not any(key in elements for key in inside)  # the oldest turn's work: left out...
    first = elements[turns[0]["process"]["key"]]
    assert "not in this saved output" in first.all_text()  # ...and says so
    for key in (n["key"] for n in iter_nodes({"nodes": turns[-1]["process"]["children"]})):
        assert key in elements  # the latest turn keeps its work
    zh = build_view_model(turnfold.load(DEMO), DisplaySettings(locale="zh"))
    assert "此轮的工作过程未包含在内" in render_html(zh, budget=1)


# --- a rejected reply (a preference pair's, a response the harness refused) -----------------------


def rejected_reply(marked: object = True) -> Transcript:
    """A preference pair as the readers give it: the rejected reply before the chosen one."""
    rejected = {"rejected": marked}
    return Transcript([
        UserMessage(text="How big is the circle?"),
        Thinking(text="Guessing is quicker.", meta=rejected),
        AssistantText(text="About 10.", meta=rejected),
        ToolCall(call_id="c1", name="Bash", description="guess", status="cancelled",
                 meta=rejected),
        AssistantText(text="About 12.57."),
    ])  # fmt: skip


def test_L2_a_rejected_reply_is_muted_with_its_label_beside_it() -> None:
    view = build_view_model(rejected_reply())
    elements = keyed(parse(render_html(view)))
    thinking, text, tool = (elements[key] for key in ("e1", "e2", "e3"))
    for element in (thinking, text, tool):
        assert "tf-rejected" in element.classes
        labels = [e for e in element.walk() if "tf-rlabel" in e.classes]
        assert [(e.tag, e.all_text()) for e in labels] == [("span", "Rejected")]
    # Beside what it marks: in the title row of a fold, before the text of a note.
    assert "tf-rlabel" in thinking.children[0].children[-2].classes
    assert "tf-rlabel" in text.children[0].classes
    assert tool.children[0].children[0].children[-2].classes == ["tf-rlabel"]
    answer = elements["e4"]
    assert "tf-rejected" not in answer.classes
    assert "Rejected" not in answer.all_text()
    css = turnfold_css(standalone=False)
    assert ".turnfold .tf-rejected { color: var(--tf-dim); }" in css
    assert ".turnfold .tf-rlabel {" in css
    zh = render_html(build_view_model(rejected_reply(), DisplaySettings(locale="zh")))
    assert zh.count('<span class="tf-rlabel">被拒绝</span>') == 3


def test_X1_only_a_reader_s_true_marks_a_reply_rejected_and_never_with_its_markup() -> None:
    """The label is the catalog's text; a source's own value under ``rejected`` (markup, a
    string) marks nothing and reaches the page nowhere."""
    payload = '<img src=x onerror="alert(1)">'
    view = build_view_model(rejected_reply(payload))
    assert not [n for n in iter_nodes(view) if n.get("rejected_label")]
    page = render_html(view)
    audit(page)
    assert "tf-rejected" not in nodes_html(view["nodes"], "en")
    assert "onerror" not in page
