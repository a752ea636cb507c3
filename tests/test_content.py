"""Content rendering: Markdown, ANSI, diffs, images and capped tool results (spec W-5, F-12, P-9).

The hostile-input side of the same functions lives in ``test_security.py``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnfold.model import ImageData, Thinking, ToolResult
from turnfold.render import content
from turnfold.render.content import (
    ansi_html,
    content_css,
    diff_html,
    edit_diff,
    escape,
    image_html,
    markdown_html,
    pygments_css,
    result_view,
    text_preview,
    thinking_html,
)

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible(fragment: str) -> str:
    """The text a browser would show for ``fragment``."""
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.parts)


# --- W-5: Markdown ------------------------------------------------------------------------------


def test_W5_markdown_headings_lists_and_emphasis() -> None:
    out = markdown_html("# Title\n\n## Sub\n\n- one\n- **two**\n\n1. first\n2. `second`\n")
    assert out.startswith('<div class="tf-md">')
    assert "<h1>Title</h1>" in out
    assert "<h2>Sub</h2>" in out
    assert "<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>" in out
    assert "<ol>\n<li>first</li>\n<li><code>second</code></li>\n</ol>" in out


def test_W5_markdown_tables_align_without_style_attributes() -> None:
    out = markdown_html("| a | b |\n|:--|--:|\n| 1 | 2 |\n")
    assert '<th align="left">a</th>' in out
    assert '<td align="right">2</td>' in out
    assert "style" not in out


def test_W5_fenced_code_is_highlighted_with_prefixed_classes() -> None:
    out = markdown_html('```python\ndef f():\n    return "<x>"\n```\n')
    assert '<div class="tf-code"><pre>' in out
    assert '<span class="tf-k">def</span>' in out
    assert "&lt;x&gt;" in out
    assert "style=" not in out
    classes = set(re.findall(r'class="([^"]+)"', out))
    assert all(name.startswith("tf-") for value in classes for name in value.split())


def test_W5_unknown_language_and_indented_code_stay_plain() -> None:
    out = markdown_html("```nosuchlanguage\nx = 1\n```\n\n    indented <b>\n")
    assert "x = 1" in visible(out)
    assert "indented <b>" in visible(out)


def test_W5_sane_lists_keep_list_types_apart() -> None:
    out = markdown_html("1. one\n\n- two\n")
    assert "<ol>" in out
    assert "<ul>" in out


def test_W5_links_open_in_a_new_tab_without_referrer() -> None:
    out = markdown_html("[docs](https://example.com/a?b=1&c=2)")
    assert 'href="https://example.com/a?b=1&amp;c=2"' in out
    assert 'target="_blank"' in out
    assert 'rel="noopener noreferrer nofollow"' in out


def test_W5_task_items_get_glyphs_not_inputs() -> None:
    out = markdown_html("- [x] done\n- [ ] todo\n- [~] doing\n\n```\n- [x] code\n```\n")
    assert "<input" not in out
    text = visible(out)
    assert "☑ done" in text
    assert "☐ todo" in text
    assert "◧ doing" in text
    assert "- [x] code" in text  # code blocks are left alone
    assert 'class="tf-task tf-task-done"' in out


def test_W5_inline_data_images_show_and_remote_images_become_links() -> None:
    out = markdown_html(f"![dot](data:image/png;base64,{PNG}) ![remote](https://x.test/a.png)")
    assert f'src="data:image/png;base64,{PNG}"' in out
    assert "https://x.test/a.png" not in re.findall(r'src="([^"]*)"', out)
    assert '<a class="tf-image-link" href="https://x.test/a.png"' in out
    assert "🖼 remote" in visible(out)


def test_W5_raw_html_shows_as_text() -> None:
    out = markdown_html("before <b>bold</b> after")
    assert "<b>" not in out
    assert visible(out) == "before <b>bold</b> after"


def test_W5_markdown_that_cannot_render_shows_as_text() -> None:
    nested = "".join("  " * depth + "- x\n" for depth in range(600))
    out = markdown_html(nested)
    assert visible(out) == nested
    brackets = "[" * 5000 + "x" + "]" * 5000  # quadratic in Python-Markdown; plain text instead
    assert visible(markdown_html(brackets)) == brackets


def test_W5_pygments_css_covers_both_themes_and_stays_scoped() -> None:
    css = pygments_css()
    assert ".tf-code .tf-k" in css
    assert '[data-jp-theme-light="false"] .tf-code .tf-k' in css
    assert ".tf-dark .tf-code .tf-k" in css
    assert "@media (prefers-color-scheme: dark)" in css
    for line in css.splitlines():
        if "{" in line and not line.startswith("@media"):
            assert ".tf-code" in line.split("{")[0], line  # never an unscoped rule like `pre {`


def test_W5_content_css_styles_the_fragments() -> None:
    css = content_css()
    for name in ("tf-diff-add", "tf-diff-del", "tf-diff-hunk", "tf-diff-meta", "tf-ansi-fg1",
                 "tf-ansi-bg15", "tf-ansi-bold", "tf-task-mark", "tf-code"):  # fmt: skip
        assert f".{name}" in css
    assert content_css() == css


# --- W-5: ANSI ----------------------------------------------------------------------------------


def test_W5_ansi_standard_colours_become_classes() -> None:
    out = ansi_html("\x1b[31mred\x1b[0m \x1b[1;42mbold on green\x1b[0m \x1b[94mbright\x1b[0m")
    assert '<span class="tf-ansi-fg1">red</span>' in out
    assert '<span class="tf-ansi-bg2 tf-ansi-bold">bold on green</span>' in out
    assert '<span class="tf-ansi-fg12">bright</span>' in out
    assert visible(out) == "red bold on green bright"


def test_W5_ansi_256_and_true_colour_become_checked_styles() -> None:
    out = ansi_html("\x1b[38;5;208morange\x1b[0m\x1b[48;2;1;2;255mblue\x1b[0m")
    styles = re.findall(r'style="([^"]*)"', out)
    assert styles == ["color:#ff8700", "background-color:#0102ff"]


def test_W5_ansi_attributes_and_reverse_video() -> None:
    out = ansi_html("\x1b[3;4;9mx\x1b[0m\x1b[2my\x1b[0m\x1b[7mz\x1b[0m")
    assert 'class="tf-ansi-italic tf-ansi-underline tf-ansi-strike"' in out
    assert 'class="tf-ansi-dim"' in out
    assert 'class="tf-ansi-fg-inverse tf-ansi-bg-inverse"' in out


def test_W5_ansi_output_is_escaped_and_controls_are_visible() -> None:
    out = ansi_html("\x1b[32m<b>&</b>\x1b[0m\x07\x00\x1b")
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in out
    assert visible(out) == "<b>&</b>␇␀␛"


def test_W5_ansi_hyperlinks_keep_their_text_and_drop_their_target() -> None:
    out = ansi_html("\x1b]8;;https://example.com\x1b\\site\x1b]8;;\x1b\\ and \x1b]0;title\x07x")
    assert "<a" not in out
    assert "example.com" not in out
    assert visible(out) == "site and x"


def test_W5_carriage_returns_keep_every_frame() -> None:
    assert visible(ansi_html("10%\r50%\r100%\n")) == "10%\n50%\n100%\n"
    assert escape("a\r\nb") == "a\nb"


# --- X-1 characters: controls and bidi ----------------------------------------------------------


def test_X1_escape_makes_controls_and_bidi_visible() -> None:
    assert escape("<a href='x'>") == "&lt;a href=&#x27;x&#x27;&gt;"
    assert escape("bell\x07 nul\x00 del\x7f") == "bell␇ nul␀ del␡"
    assert escape("abc\u202edef") == "abc⟨U+202E⟩def"
    assert escape("c1\x9b") == "c1⟨U+009B⟩"
    assert escape("tab\tnew\nline") == "tab\tnew\nline"
    assert escape("lone \ud800 surrogate") == "lone \ufffd surrogate"


def test_text_preview_is_one_clean_line() -> None:
    assert text_preview("  \x1b[1mRead\x1b[0m\n\tfile.py \x07 ", 40) == "Read file.py"
    assert text_preview("abcdefghij", 5) == "abcd…"
    assert text_preview("abc", 3) == "abc"
    assert text_preview("e\u0301e\u0301e\u0301", 4) == "e\u0301…"  # accents stay with letters
    assert text_preview("x\u202ey", 20) == "x⟨U+202E⟩y"
    with pytest.raises(ValueError, match="limit"):
        text_preview("x", 0)


# --- W-5: diffs ---------------------------------------------------------------------------------


def test_W5_diff_lines_are_classed() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n same\n-old <x>\n+new\n\\ No newline\n"
    out = diff_html(text)
    assert out.startswith('<pre class="tf-output tf-diff">')
    assert '<span class="tf-diff-meta">--- a/x.py</span>' in out
    assert '<span class="tf-diff-meta">+++ b/x.py</span>' in out
    assert '<span class="tf-diff-hunk">@@ -1,3 +1,3 @@</span>' in out
    assert '<span class="tf-diff-ctx"> same</span>' in out
    assert '<span class="tf-diff-del">-old &lt;x&gt;</span>' in out
    assert '<span class="tf-diff-add">+new</span>' in out
    assert visible(out) == text


def test_W5_edit_diff_from_old_and_new_strings() -> None:
    diff = edit_diff("a\nb\nc\n", "a\nB\nc\n", "src/x.py")
    assert diff.splitlines() == [
        "--- a/src/x.py", "+++ b/src/x.py", "@@ -1,3 +1,3 @@", " a", "-b", "+B", " c",
    ]  # fmt: skip
    assert edit_diff("same", "same", "x") == ""
    assert edit_diff("", "new", "n.txt").splitlines()[-2:] == [
        "+new",
        "\\ No newline at end of file",
    ]
    assert "\n" not in edit_diff("a", "b", "evil\npath").splitlines()[0]


# --- W-5, X-1: images ---------------------------------------------------------------------------


def test_W5_png_image_becomes_a_data_url() -> None:
    out = image_html(ImageData(media_type="image/png", data=PNG))
    assert out == f'<img class="tf-image" src="data:image/png;base64,{PNG}" alt="image/png">'


@pytest.mark.parametrize("media_type", ["image/jpeg", "image/jpg", "IMAGE/GIF", "image/webp"])
def test_W5_raster_types_are_accepted(media_type: str) -> None:
    assert image_html(ImageData(media_type=media_type, data=PNG)) is not None


def test_W5_wrapped_base64_is_accepted_and_alt_is_escaped() -> None:
    wrapped = "\n".join(PNG[i : i + 20] for i in range(0, len(PNG), 20))
    out = image_html(ImageData(media_type="image/png", data=wrapped), alt='"><script>')
    assert out is not None
    assert PNG in out
    assert 'alt="&quot;&gt;&lt;script&gt;"' in out


@pytest.mark.parametrize(
    ("media_type", "data"),
    [
        ("image/svg+xml", "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"),
        ("text/html", PNG),
        ("image/png", "https://evil.test/track.png"),
        ("image/png", 'AAAA" onerror="alert(1)'),
        ("image/png", "AAA"),  # not a whole number of base64 quads
        ("image/png", ""),
    ],
)
def test_W5_unsafe_or_broken_images_are_refused(media_type: str, data: str) -> None:
    assert image_html(ImageData(media_type=media_type, data=data)) is None


# --- F-12: capped tool results --------------------------------------------------------------------


def test_F12_short_result_is_not_truncated() -> None:
    view = result_view(ToolResult(text="one\ntwo\n"))
    assert view == {
        "kind": "text",
        "html": '<pre class="tf-output tf-text">one\ntwo\n</pre>',
        "text": "one\ntwo\n",
        "lines": 2,
        "truncated": False,
        "images": [],
        "notes": [],
    }


def test_F12_long_text_is_capped_and_the_rest_is_kept() -> None:
    original = "".join(f"line {n} <{n}>\n" for n in range(100))
    view = result_view(ToolResult(text=original), max_lines=12)
    assert view is not None
    assert view["truncated"] is True
    assert view["lines"] == 100
    assert view["more_lines"] == 88
    assert view["text"] == "".join(f"line {n} <{n}>\n" for n in range(12))
    assert visible(view["html"]) + visible(view["more_html"]) == original


def test_F12_one_huge_line_is_capped_by_characters() -> None:
    original = "x" * 10_000
    view = result_view(ToolResult(text=original), max_chars=4000, more_chars=None)
    assert view is not None
    assert len(view["text"]) == 4000
    assert visible(view["html"]) + visible(view["more_html"]) == original
    capped = result_view(ToolResult(text=original), max_chars=4000, more_chars=3000)
    assert capped is not None
    assert visible(capped["html"]) + visible(capped["more_html"]) == original[:7000]
    assert capped["omitted_lines"] == 1  # the rest of that line is counted, not lost silently


def test_F12_character_cap_prefers_a_line_end() -> None:
    original = ("y" * 30 + "\n") * 10
    view = result_view(ToolResult(text=original), max_chars=100)
    assert view is not None
    assert view["text"] == ("y" * 30 + "\n") * 3


@given(st.text(), st.integers(1, 20), st.integers(1, 200))
@settings(deadline=None)
def test_F12_nothing_is_dropped(text: str, max_lines: int, max_chars: int) -> None:
    clean = escape(text)  # the text as it is shown (controls visible)
    view = result_view(ToolResult(text=text), max_lines=max_lines, max_chars=max_chars)
    assert view is not None
    shown = visible(view["html"]) + visible(view.get("more_html", ""))
    assert shown == visible(clean)


def test_F12_ansi_colour_carries_over_the_cut() -> None:
    original = "\x1b[31m" + "".join(f"red {n}\n" for n in range(20)) + "\x1b[0m"
    view = result_view(ToolResult(text=original, kind="ansi"), max_lines=5)
    assert view is not None
    assert view["more_html"].startswith('<pre class="tf-output tf-ansi"><span class="tf-ansi-fg1">')
    assert visible(view["html"]) + visible(view["more_html"]) == "".join(
        f"red {n}\n" for n in range(20)
    )
    assert "\x1b" not in view["text"]


def test_F12_text_with_escape_sequences_is_shown_in_colour() -> None:
    view = result_view(ToolResult(text="\x1b[31mfail\x1b[0m", kind="text"))
    assert view is not None
    assert '<span class="tf-ansi-fg1">fail</span>' in view["html"]
    assert view["kind"] == "text"


def test_F12_markdown_is_cut_at_a_block_boundary() -> None:
    source = "intro line\n\n" + "".join(f"para {n}\nmore {n}\n\n" for n in range(10))
    view = result_view(ToolResult(text=source, kind="markdown"), max_lines=10)
    assert view is not None
    assert view["text"].endswith("\n\n")
    assert view["html"].count("<p>") == view["text"].count("\n\n")
    assert "para 9" in visible(view["more_html"])


def test_F12_markdown_is_not_cut_inside_a_code_fence() -> None:
    source = "\n".join(["intro", "", "text", "```python"] + [f"x{n} = {n}" for n in range(30)])
    view = result_view(ToolResult(text=source + "\n```\n", kind="markdown"), max_lines=12)
    assert view is not None
    assert "```" not in view["text"]
    assert 'class="tf-code"' in view["more_html"]


@pytest.mark.parametrize("kind", ["markdown", "plan", "subagent"])
def test_W5_markdown_kinds_render_markdown(kind: str) -> None:
    view = result_view(ToolResult(text="**done**", kind=kind))  # type: ignore[arg-type]
    assert view is not None
    assert view["html"] == '<div class="tf-md"><p><strong>done</strong></p></div>'


def test_W5_todo_checklist_renders_glyphs() -> None:
    view = result_view(ToolResult(text="[x] write tests\n[~] fix <bug>\n[ ] ship", kind="todo"))
    assert view is not None
    assert view["html"] == (
        '<ul class="tf-todo">'
        '<li class="tf-task tf-task-done"><span class="tf-task-mark">☑</span> write tests</li>'
        '<li class="tf-task tf-task-active"><span class="tf-task-mark">◧</span> '
        "fix &lt;bug&gt;</li>"
        '<li class="tf-task tf-task-todo"><span class="tf-task-mark">☐</span> ship</li></ul>'
    )


def test_W5_plan_with_task_list_renders_glyphs() -> None:
    view = result_view(ToolResult(text="Why\n\n- [x] one\n- [ ] two", kind="plan"))
    assert view is not None
    assert "☑ one" in visible(view["html"])
    assert "☐ two" in visible(view["html"])


def test_W5_json_is_pretty_printed_and_escaped() -> None:
    view = result_view(ToolResult(text='{"a": [1, "<b>"], "中": "😀"}', kind="json"))
    assert view is not None
    assert view["html"] == (
        '<pre class="tf-output tf-json">{\n  "a": [\n    1,\n    "&lt;b&gt;"\n  ],\n'
        '  "中": "😀"\n}</pre>'
    )
    broken = result_view(ToolResult(text="{not json", kind="json"))
    assert broken is not None
    assert visible(broken["html"]) == "{not json"


def test_X2_structured_result_without_text_shows_as_json() -> None:
    view = result_view(ToolResult(text=None, kind="todo", structured=[{"content": "a"}]))
    assert view is not None
    assert view["kind"] == "todo"
    assert '"content": "a"' in visible(view["html"])


def test_W5_diff_result_renders_diff() -> None:
    view = result_view(ToolResult(text="@@ -1 +1 @@\n-a\n+b\n", kind="diff"))
    assert view is not None
    assert '<span class="tf-diff-add">+b</span>' in view["html"]


def test_W5_result_images_and_notes() -> None:
    result = ToolResult(
        text="screenshot",
        images=[
            ImageData(media_type="image/png", data=PNG),
            ImageData(media_type="image/svg+xml", data="PHN2Zz4="),
        ],
    )
    view = result_view(result)
    assert view is not None
    assert view["images"] == [image_html(result.images[0])]
    assert view["notes"] == [
        {"key": "tool.image_unsupported", "params": {"media_type": "image/svg+xml"}}
    ]


def test_result_view_of_nothing() -> None:
    assert result_view(None) is None
    empty = result_view(ToolResult())
    assert empty is not None
    assert empty["text"] == ""
    assert empty["lines"] == 0
    with pytest.raises(ValueError, match="at least 1"):
        result_view(ToolResult(text="x"), max_lines=0)


# --- W-4: determinism; CJK and emoji --------------------------------------------------------------

SAMPLES = [
    ToolResult(text="# 标题\n\n中文段落 😀 👨‍👩‍👧\n\n```js\nlet 变量 = '🎉'\n```", kind="markdown"),
    ToolResult(text="\x1b[35m紫色\x1b[0m 🚀\n" * 30, kind="ansi"),
    ToolResult(text="@@ -1 +1 @@\n-旧\n+新 ✅\n", kind="diff"),
    ToolResult(text='{"键": "值 🔑"}', kind="json"),
    ToolResult(text="[x] 完成 ✔\n[ ] 待办", kind="todo"),
    ToolResult(text="".join(f"行 {n} 😀\n" for n in range(40))),
]


@pytest.mark.parametrize("result", SAMPLES, ids=lambda r: r.kind)
def test_W4_rendering_is_deterministic(result: ToolResult) -> None:
    assert result_view(result) == result_view(result)
    assert repr(result_view(result)) == repr(result_view(result))


@pytest.mark.parametrize("result", SAMPLES, ids=lambda r: r.kind)
def test_W5_cjk_and_emoji_survive(result: ToolResult) -> None:
    view = result_view(result, max_lines=1000, max_chars=100_000)
    assert view is not None
    text = visible(view["html"])
    for word in re.findall(r"[\u4e00-\u9fff]+|[\U0001f300-\U0001faff]", result.text or ""):
        assert word in text


def test_W5_cjk_markdown_survives_exactly() -> None:
    assert visible(markdown_html("中文 😀 👨‍👩‍👧 café")) == "中文 😀 👨‍👩‍👧 café"


# --- P-9: thinking --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["redacted", "encrypted"])
@pytest.mark.parametrize("locale", ["en", "zh"])
def test_P9_withheld_reasoning_is_labelled_never_empty(form: str, locale: str) -> None:
    out = thinking_html(Thinking(form=form, data="opaque"), locale)  # type: ignore[arg-type]
    assert f"tf-thinking-{form}" in out
    assert visible(out).strip()


def test_P9_reasoning_text_is_markdown_and_summary_is_labelled() -> None:
    assert thinking_html(Thinking(text="**plan**"), "en") == (
        '<div class="tf-md"><p><strong>plan</strong></p></div>'
    )
    summary = thinking_html(Thinking(text="short", form="summary"), "en")
    assert visible(summary).startswith("Reasoning summary")
    assert thinking_html(Thinking(text="  "), "en") == ""


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*"abc xyz.,;:?'\"()/@%$^\n\r\u00e9中文😀\x00\u202e", "  ", "\n\n", "http://x.y",
             "3 ", "\n\n\n", " \n", "-", "1.", "2)", "\t", "*", "#", "=", "<b>", "&amp;"]
        ),
        max_size=40,
    ).map("".join)
)  # fmt: skip
def test_W5_plain_prose_fast_path_writes_what_markdown_writes(text: str) -> None:
    """Text without Markdown syntax skips the converter (Q-1); the HTML must not change."""
    source = content.plain_text(text)
    if content._has_markup(source):
        return
    converter = content._markdown()
    converter.reset()
    expected = f'<div class="tf-md">{content.sanitize(converter.convert(source))}</div>'
    assert content.markdown_html(text) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Plan:\n- read\n- test", "<p>Plan:</p>\n<ul>\n<li>read</li>\n<li>test</li>\n</ul>"),
        ("Steps:\n1. one\n2. two", "<p>Steps:</p>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>"),
        ("Year\n2. not a list", "<p>Year\n2. not a list</p>"),  # only 1. interrupts a paragraph
    ],
)
def test_W5_a_list_may_start_right_under_a_paragraph(source: str, expected: str) -> None:
    assert markdown_html(source) == f'<div class="tf-md">{expected}</div>'


def test_W5_list_markers_inside_code_fences_stay_code() -> None:
    assert "<li>" not in markdown_html("```\ntext\n- not a list\n```")


def test_Q1_converted_markdown_is_remembered_by_its_text() -> None:
    """A mode or thinking switch rebuilds every turn; the answers are not converted again."""
    text = "## Plan\n\n- read `a.py`\n- run the tests"
    content._converted.cache_clear()
    first = markdown_html(text)
    assert markdown_html(text) is first
    assert content._converted.cache_info().hits == 1
    assert markdown_html("just prose") == '<div class="tf-md"><p>just prose</p></div>'
    assert content._converted.cache_info().currsize == 1  # plain prose is not kept


_TRICKY = "ab \t\n&<>\"'\x00\x07\x1b\x7f\x85\u202e\u2028é中"


@given(st.text(alphabet=st.sampled_from(_TRICKY), max_size=40))
@settings(max_examples=300, deadline=None)
def test_Q1_the_fast_paths_of_escaping_give_what_the_careful_path_gives(text: str) -> None:
    import html

    assert content.escape(text) == html.escape(content.plain_text(text))
    assert content._escape_output(text) == html.escape(text, quote=False)
    assert content._has_controls(text) == (content._NEEDS_NEUTRALIZING.search(text) is not None)


@pytest.mark.parametrize(
    "value",
    [
        {"path": "a.py", "limit": 10, "all": True, "none": None, "é": "中\u2028\x7f"},
        {"nested": [{"a": 1}, [], {}], "big": 2**70},
        {"ratio": 1.5e-05, "huge": 1e100, "nan": float("nan")},  # floats: the stdlib's repr
        {1: "int key"},
        {"lone": "\ud800"},
        [1, "two", None],
        {},
    ],
)
def test_Q1_arguments_written_by_the_codec_read_as_the_stdlib_writes_them(value: object) -> None:
    import json

    assert content.pretty_json(value) == json.dumps(
        value, indent=2, ensure_ascii=False, default=repr
    )
