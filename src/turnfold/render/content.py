"""Untrusted transcript content as safe, deterministic HTML fragments (spec W-5, X-1, X-2).

Everything in a transcript is untrusted (X-1): model text, tool output, file contents, tool
names. This module is the one place that turns such text into HTML, for the static page and for
the notebook view alike (both draw the same fragments, so they cannot disagree about what is
safe). Its rules, each explained where it is implemented:

* **Characters.** Control characters never reach the page as themselves: C0 controls become
  their Unicode *control pictures* (``\\x07`` → ``␇``), C1 controls and the bidirectional
  overrides that enable "Trojan Source" tricks become a visible ``⟨U+202E⟩`` token.
* **Markdown** (W-5) is rendered by the ``markdown`` package with Pygments highlighting, with raw
  HTML switched *off* (it shows as text), and the result is then sanitized by ``nh3`` against an
  explicit allow-list. Only ``http``/``https``/``mailto`` links survive; images load only from
  inline ``data:image/…`` URLs, never from the network (X-1: no remote resources).
* **ANSI** colour is decoded by ``rich``; turnfold only maps the decoded styles to its own
  ``tf-ansi-*`` classes or to ``color``/``background-color`` values it formats itself.
* **Tool results** are capped to a few lines with the rest rendered separately for a "show
  more" control (F-12): the reader can always reach all of it (X-2).
* **Determinism** (W-4): the same input gives byte-identical output; nothing here makes ids,
  reads the clock or depends on the environment.

>>> markdown_html("**hi** <script>alert(1)</script>")
'<div class="tf-md"><p><strong>hi</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p></div>'
>>> ansi_html("\\x1b[31mred\\x1b[0m plain")
'<span class="tf-ansi-fg1">red</span> plain'
>>> escape("a < b\\x07")
'a &lt; b␇'
"""

from __future__ import annotations

import html
import io
import re
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pygments.token import STANDARD_TYPES

from turnfold import codec
from turnfold.i18n import plural, translate
from turnfold.model import ImageData, Thinking, ToolResult

if TYPE_CHECKING:  # imported where they are used: a page of prose and plain output needs none
    import markdown
    import nh3
    from pygments.formatters import HtmlFormatter
    from rich.color import Color
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

__all__ = [
    "ansi_html",
    "capped_prose",
    "capped_text",
    "content_css",
    "diff_html",
    "edit_diff",
    "escape",
    "image_html",
    "markdown_html",
    "omitted_note_html",
    "plain_text",
    "pygments_css",
    "result_text",
    "result_view",
    "sanitize",
    "text_preview",
    "thinking_html",
]

# --- Characters (X-1) ---------------------------------------------------------------------------
#
# Control characters are neutralized *visibly* rather than deleted: the reader sees that the
# output held a bell or a NUL (X-2, nothing lost), and nothing invisible can change what the page
# means. Tabs and newlines are kept; "\r\n" and a lone "\r" become "\n" so a progress bar's
# overwritten frames show as lines instead of vanishing; U+2028/U+2029 are line breaks too.
#
# Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) reorder how
# text *looks* without changing what it *is* (CVE-2021-42574, "Trojan Source"): a command could
# read as harmless and be something else. They become a visible ``⟨U+202E⟩`` token, so text keeps
# its logical order and the reader sees where a control was. Right-to-left scripts still display
# correctly: browsers order them by the characters' own direction, not by these controls.
#
# Lone surrogates (possible in JSON "\\ud800") cannot be encoded as UTF-8 and would make the view
# model unserializable; they become U+FFFD.

_BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _token(code: int) -> str:
    return f"⟨U+{code:04X}⟩"


_NEUTRAL: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n"},
    0x0D: "\n",
    0x7F: "\u2421",  # ␡
    **{code: _token(code) for code in range(0x80, 0xA0)},
    0x2028: "\n",
    0x2029: "\n",
    **{ord(char): _token(ord(char)) for char in _BIDI_CONTROLS},
    **dict.fromkeys(range(0xD800, 0xE000), "\ufffd"),
}
#: The same, leaving ESC in place for the ANSI decoder to read.
_NEUTRAL_KEEP_ESC = {code: value for code, value in _NEUTRAL.items() if code != 0x1B}
#: One-line previews: every control is a space (then collapsed); bidi stays visible.
_PREVIEW: dict[int, str] = {
    **dict.fromkeys((*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029), " "),
    **{code: value for code, value in _NEUTRAL.items() if code >= 0x202A},  # bidi, surrogates
}
_PREVIEW_KEEP_ESC = {code: value for code, value in _PREVIEW.items() if code != 0x1B}
_NEEDS_NEUTRALIZING = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


#: Every byte to itself but the ASCII characters :func:`_neutralize` replaces, which become
#: spaces: a translation that changes nothing finds none of them, for its fast path.
_ASCII_CONTROLS = bytes.maketrans(
    bytes([*range(0x09), *range(0x0B, 0x20), 0x7F]), b" " * (0x09 + 0x20 - 0x0B + 1)
)


def _has_controls(text: str) -> bool:
    if text.isprintable():  # labels, names, one-line descriptions: one C call
        return False  # every character neutralized below is non-printable
    if text.isascii():
        # Most output is ASCII: two C-speed passes beat a regex scan several times over, and a
        # translation with no deletions is twice as fast as one with them.
        raw = text.encode("ascii")
        return raw.translate(_ASCII_CONTROLS) != raw
    return _NEEDS_NEUTRALIZING.search(text) is not None


def _neutralize(text: str, *, keep_escape: bool = False) -> str:
    """``text`` with every control character made visible (see above). Idempotent."""
    if not _has_controls(text):  # the common case costs one scan
        return text
    return text.replace("\r\n", "\n").translate(_NEUTRAL_KEEP_ESC if keep_escape else _NEUTRAL)


def plain_text(text: str) -> str:
    """Text as a person should read it: escape sequences interpreted away, controls visible."""
    if "\x1b" in text:
        text = _decode_ansi(text).plain
    return _neutralize(text)


def escape(text: str) -> str:
    """Plain text made safe for HTML content and quoted attributes.

    ANSI escape sequences are interpreted away (their text stays), control characters are made
    visible, and ``& < > " '`` are escaped.

    >>> escape('<b title="x">\\x1b[1mbold\\x1b[0m</b>')
    '&lt;b title=&quot;x&quot;&gt;bold&lt;/b&gt;'
    """
    if text.isascii() and text.isprintable():
        # Keys, ids, names and one-line labels, tens of thousands of them in a long session
        # printable ASCII holds nothing to neutralize (every character made visible is
        # non-printable), so only the five HTML characters are looked for, at memchr speed.
        if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
            return html.escape(text)
        return text
    if len(text) <= _SHORT:
        return _escape_short(text)
    return html.escape(plain_text(text))


#: Names, labels, statuses and ids repeat thousands of times in a long session; escaping each
#: afresh was a visible share of rendering one (Q-1), so short strings are remembered.
_SHORT = 80


@lru_cache(maxsize=4096)
def _escape_short(text: str) -> str:
    return html.escape(plain_text(text))


def text_preview(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters for a title, ending in ``…`` when shortened.

    The result is plain text (for ``textContent`` or a terminal), not HTML: pass it through
    :func:`escape` before putting it into markup. Escape sequences are interpreted away, every
    other control character and run of whitespace becomes one space, bidi controls stay visible.

    >>> text_preview("line one\\n\\tline two", 12)
    'line one li…'
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if "\x1b" in text:
        text = _decode_ansi(text, _PREVIEW_KEEP_ESC).plain
    line = " ".join(text.translate(_PREVIEW).split())
    if len(line) <= limit:
        return line
    cut = limit - 1
    # Do not split a character from what modifies it: a combining accent, an emoji's variation
    # selector or skin tone, or the parts of a zero-width-joiner sequence such as a family emoji.
    while cut > 0 and _continues_grapheme(line, cut):
        cut -= 1
    return line[:cut].rstrip() + "…"


def _continues_grapheme(text: str, index: int) -> bool:
    char = text[index]
    return bool(
        unicodedata.combining(char)
        or char in "\u200d\ufe0e\ufe0f"
        or 0x1F3FB <= ord(char) <= 0x1F3FF
        or text[index - 1] == "\u200d"
    )


# --- Markdown (W-5, X-1) ------------------------------------------------------------------------
#
# Two layers. First, Python-Markdown runs with its raw-HTML handling removed, so ``<script>`` in
# model text renders as the visible text "<script>" (nothing lost, nothing run). Second, whatever
# Markdown produced is sanitized by nh3 (the Ammonia sanitizer) against the allow-list below: the
# sanitizer is the guarantee, the first layer keeps hostile text readable. Input is neutralized
# before Markdown sees it, which also stops it forging Python-Markdown's internal placeholders
# (they are built from the STX/ETX control characters).

#: The tags Python-Markdown emits with the extensions used here, and nothing else. No script,
#: style, iframe, object, embed, form, input, svg, math, meta, base or link: they can run code,
#: load resources or restyle the page.
MARKDOWN_TAGS: frozenset[str] = frozenset(
    {
        "a", "blockquote", "br", "code", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
        "img", "li", "ol", "p", "pre", "span", "strong", "table", "tbody", "td", "th", "thead",
        "tr", "ul",
    }
)  # fmt: skip
#: Attributes per tag. No ``style`` (CSS can load URLs and overlay the page), no ``on*`` event
#: handlers, no ``id`` (ids could clash with the host page's); ``class`` is governed separately.
MARKDOWN_ATTRIBUTES: dict[str, frozenset[str]] = {
    "a": frozenset({"href", "title"}),
    "img": frozenset({"src", "alt", "title"}),
    "ol": frozenset({"start"}),
}
#: Table cell alignment, emitted as ``align`` instead of a ``style`` (see the tables config).
_ALIGN: dict[str, dict[str, set[str]]] = {
    tag: {"align": {"left", "center", "right"}} for tag in ("th", "td")
}
#: Schemes a link may use. ``data`` is admitted by the sanitizer only for image sources:
#: :func:`_filter_url` narrows each attribute to what it may hold.
LINK_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
_LINK = re.compile(r"(?:https?|mailto):", re.IGNORECASE)
#: An inline image Markdown may show: raster types only (SVG can carry script), valid base64.
_BASE64 = r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
_DATA_IMAGE_URL = re.compile(rf"data:image/(?:png|jpeg|gif|webp);base64,{_BASE64}")
#: Pygments token classes (prefixed ``tf-`` so they cannot collide with the host page's).
_PYGMENTS_CLASSES = frozenset(f"tf-{name}" for name in STANDARD_TYPES.values() if name)
_TASK_CLASSES = frozenset({"tf-task", "tf-task-todo", "tf-task-active", "tf-task-done"})
MARKDOWN_CLASSES: dict[str, frozenset[str]] = {
    "div": frozenset({"tf-code"}),
    "span": _PYGMENTS_CLASSES | {"tf-task-mark"},
    "a": frozenset({"tf-image-link"}),
    "li": _TASK_CLASSES,
}
#: Every link opens in a new tab (a click must not navigate the notebook away) and tells the
#: target nothing about the page it came from.
LINK_REL = "noopener noreferrer nofollow"


def _filter_url(tag: str, attribute: str, value: str) -> str | None:
    """Keep a URL only where it belongs: links to http(s)/mailto, images to inline data.

    nh3 calls this with the decoded value, after its own scheme check, so entity-encoded or
    mixed-case ``javascript:`` never gets here; this narrows ``data:`` to image sources.
    """
    if attribute == "href":
        return value if _LINK.match(value) else None
    if attribute == "src":
        return value if _DATA_IMAGE_URL.fullmatch(value) else None
    return value


@cache
def _sanitizer() -> nh3.Cleaner:
    """The cleaner of the allow-list above, made when first needed: a page of plain prose and
    output sanitizes nothing, and need not import nh3 (issue 19)."""
    import nh3

    return nh3.Cleaner(
        tags=set(MARKDOWN_TAGS),
        clean_content_tags={"script", "style"},
        attributes={tag: set(names) for tag, names in MARKDOWN_ATTRIBUTES.items()},
        attribute_filter=_filter_url,
        strip_comments=True,
        link_rel=LINK_REL,
        tag_attribute_values=_ALIGN,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        url_schemes=set(LINK_SCHEMES | {"data"}),
        allowed_classes={tag: set(names) for tag, names in MARKDOWN_CLASSES.items()},
        # A relative URL resolves against the notebook server: an image would load from it.
        url_relative="deny",
    )


def sanitize(fragment: str) -> str:
    """``fragment`` cleaned by the allow-list :func:`markdown_html` applies to its output.

    For HTML that came from somewhere else; turnfold's own renderers build HTML only with the
    functions of this module.

    >>> sanitize('<p onclick="x()">hi<script>alert(1)</script></p>')
    '<p>hi</p>'
    """
    return _sanitizer().clean(fragment)


#: Task states and their glyphs: text, never ``<input>`` (forms are not allowed, and a checkbox
#: would invite a click that changes nothing).
_TASK_STATES: dict[str, tuple[str, str]] = {
    " ": ("todo", "☐"),
    "~": ("active", "◧"),
    "x": ("done", "☑"),
    "X": ("done", "☑"),
}


#: Pygments styles of the code blocks; see :func:`pygments_css`.
PYGMENTS_LIGHT_STYLE = "default"
PYGMENTS_DARK_STYLE = "github-dark"

_LOCAL = threading.local()


def _markdown() -> markdown.Markdown:
    """This thread's Markdown converter (building one costs more than a typical conversion)."""
    converter: markdown.Markdown | None = getattr(_LOCAL, "markdown", None)
    if converter is None:
        from turnfold.render.converter import new_converter

        converter = new_converter()
        _LOCAL.markdown = converter
    return converter


#: Python-Markdown's link parsing takes time quadratic in the number of "[" in one block
#: (upstream issue #798: 2,000 nested brackets take about a second, 20,000 over a minute). A
#: block with more than this many is shown as plain text: readable, in linear time.
MAX_BRACKETS_PER_BLOCK = 2000
#: Python-Markdown converts about 2 MB a second and holds some twenty times its text while it
#: does: a transcript's 200 MB answer took minutes and 4 GB of the kernel (X-1). Text longer
#: than this is shown as plain text, whole (X-2), in linear time and memory.
MAX_MARKDOWN_CHARS = 1 << 20
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _too_many_brackets(text: str) -> bool:
    return text.count("[") > MAX_BRACKETS_PER_BLOCK and any(
        block.count("[") > MAX_BRACKETS_PER_BLOCK for block in _BLANK_LINE.split(text)
    )


def markdown_html(text: str) -> str:
    """Markdown as sanitized HTML in a ``<div class="tf-md">`` (W-5, X-1).

    Fenced code is highlighted with ``tf-``-prefixed Pygments classes (see :func:`pygments_css`);
    raw HTML shows as text; links keep only http(s)/mailto targets and open in a new tab. Text
    Markdown cannot render in reasonable time, or at all, shows as preformatted plain text.

    >>> markdown_html("[site](https://example.com) [x](javascript:alert(1))")
    '<div class="tf-md"><p><a href="https://example.com" target="_blank" \
rel="noopener noreferrer nofollow">site</a> \
<a target="_blank" rel="noopener noreferrer nofollow">x</a></p></div>'
    """
    source = plain_text(text)
    if not _has_markup(source):
        return _prose_html(source)
    return _converted(source)


#: Converted texts kept, most recently used first: a mode or thinking switch rebuilds every turn,
#: and converting every answer again was most of that rebuild (Q-1). Only the texts that need the
#: converter are kept (plain prose is cheaper to write than to look up); a view rebuilt in the
#: same order finds them all while a transcript has fewer than this many.
MARKDOWN_CACHE_SIZE = 8192


@lru_cache(maxsize=MARKDOWN_CACHE_SIZE)
def _converted(source: str) -> str:
    """Markdown with syntax in it, as sanitized HTML: pure, so remembered by its text."""
    if len(source) > MAX_MARKDOWN_CHARS or _too_many_brackets(source):
        return _markdown_fallback(source)
    converter = _markdown()
    converter.reset()
    try:
        rendered = converter.convert(source)
    except Exception as error:  # untrusted input must not break the view
        # E.g. RecursionError from lists nested hundreds deep; its traceback would be huge.
        import logging  # only to say so: a page that goes well imports no logging (issue 19)

        logging.getLogger(__name__).warning(
            "could not render Markdown (%r); showing it as plain text", error
        )
        _LOCAL.markdown = None  # its parser state is unknown now: start the next one afresh
        return _markdown_fallback(source)
    return f'<div class="tf-md">{sanitize(rendered)}</div>'


# Text with no Markdown syntax at all is most of what models write (thinking, progress notes).
# Converting it costs a full Markdown pass; writing the same paragraphs directly gives the same
# HTML in a fraction of the time. The test is deliberately wider than Markdown needs: any
# character that could start markup, any line starting with a space, tab, dash or digit (indented
# code, lists, rules, setext underlines), any hard line break sends the text through Markdown.
_MARKUP_CHARS = "\\`*_[]<>&|~!#=+{}\t"
_MARKUP_BYTES = _MARKUP_CHARS.encode("ascii")
_MARKUP_CHAR = re.compile(f"[{re.escape(_MARKUP_CHARS)}]")
_MARKUP_LINE = re.compile(r"\n[ \t\-0-9]")
_MARKUP_START = frozenset(" \t-0123456789")


def _has_markup(source: str) -> bool:
    """Whether ``source`` might hold Markdown syntax (see above); C-speed scans only (Q-1)."""
    if source.isascii():
        raw = source.encode("ascii")
        if len(raw.translate(None, _MARKUP_BYTES)) != len(raw):
            return True
    elif _MARKUP_CHAR.search(source):
        return True
    if source[:1] in _MARKUP_START:
        return True
    return "\n" in source and (" \n" in source or _MARKUP_LINE.search(source) is not None)


_PARAGRAPH_BREAK = re.compile(r"\n\n+")


def _prose_html(source: str) -> str:
    """Plain paragraphs, exactly as Markdown would write them (tested against it)."""
    text = source.strip("\n")
    blocks = _PARAGRAPH_BREAK.split(text) if "\n\n" in text else (text,)
    paragraphs = "\n".join(f"<p>{_escape_output(b)}</p>" for b in blocks if b)
    return f'<div class="tf-md">{paragraphs}</div>'


def _markdown_fallback(source: str) -> str:
    return f'<div class="tf-md"><pre class="tf-output tf-text">{html.escape(source)}</pre></div>'


# --- ANSI colour (W-5, X-1) ---------------------------------------------------------------------
#
# rich decodes the escape sequences; turnfold only maps rich's styles to HTML. Hyperlinks
# (OSC 8) are deliberately ignored: a terminal link's target is untrusted and the text stays.
# Other OSC commands (window titles, OSC 52 clipboard writes) are dropped, as a terminal would
# not show them either. The 16 standard colours become classes so the theme can adapt them;
# 256-colour and true-colour values become ``color``/``background-color`` declarations that
# turnfold formats from integers and checks against a strict pattern.

#: An OSC ended by BEL: rich reads only the ST (ESC \\) form, so BEL endings are rewritten to it.
_OSC_BEL = re.compile(r"\x1b\]([^\x07\x1b\n]*)\x07")
_HEX_COLOUR = re.compile(r"#[0-9a-f]{6}")


def _decode_ansi(text: str, table: dict[int, str] = _NEUTRAL_KEEP_ESC) -> Text:
    """``text`` decoded by rich, its other controls first translated by ``table``.

    Translating first matters: rich drops whatever precedes a carriage return on a line (as a
    terminal overwrites it), and some versions split lines at form feeds and the like.
    """
    from rich.text import Text  # rich only for output that holds escape sequences (issue 19)

    prepared = _OSC_BEL.sub("\x1b]\\1\x1b\\\\", text).replace("\r\n", "\n").translate(table)
    return Text.from_ansi(prepared)


@cache
def _console() -> Console:
    from rich.console import Console

    # Text.render needs a console only to resolve named styles; decoded text has none.
    return Console(file=io.StringIO(), color_system=None, force_terminal=False, width=80)


def _colour(
    color: Color | None, layer: Literal["fg", "bg"], classes: list[str], css: list[str]
) -> None:
    if color is None or color.is_default:
        return
    if color.type in _standard_types() and color.number is not None and color.number < 16:
        classes.append(f"tf-ansi-{layer}{color.number}")
        return
    red, green, blue = color.get_truecolor()
    value = f"#{red:02x}{green:02x}{blue:02x}"
    if _HEX_COLOUR.fullmatch(value):
        css.append(f"{'color' if layer == 'fg' else 'background-color'}:{value}")


@cache
def _standard_types() -> tuple[object, ...]:
    """The colour types whose first 16 numbers are the theme's ANSI colours."""
    from rich.color import ColorType

    return (ColorType.STANDARD, ColorType.EIGHT_BIT, ColorType.WINDOWS)


@lru_cache(maxsize=512)
def _ansi_attributes(style: Style) -> str:
    """The ``class``/``style`` attributes (with a leading space) for one decoded style."""
    classes: list[str] = []
    css: list[str] = []
    foreground, background = style.color, style.bgcolor
    if style.reverse:
        foreground, background = background, foreground
        if foreground is None or foreground.is_default:
            classes.append("tf-ansi-fg-inverse")
        if background is None or background.is_default:
            classes.append("tf-ansi-bg-inverse")
    _colour(foreground, "fg", classes, css)
    _colour(background, "bg", classes, css)
    for flag, name in (
        (style.bold, "bold"),
        (style.dim, "dim"),
        (style.italic, "italic"),
        (style.underline or style.underline2, "underline"),
        (style.strike, "strike"),
    ):
        if flag:
            classes.append(f"tf-ansi-{name}")
    # Concealed and blinking text show plainly: hiding text from the reader helps no one.
    attributes = f' class="{" ".join(classes)}"' if classes else ""
    return attributes + (f' style="{";".join(css)}"' if css else "")


def _styled_html(text: Text) -> str:
    """Decoded text as escaped HTML with one ``<span>`` per run of equal style."""
    runs: list[tuple[str, list[str]]] = []
    for segment in text.render(_console()):
        if not segment.text:
            continue
        attributes = _ansi_attributes(segment.style) if segment.style else ""
        chunk = html.escape(_neutralize(segment.text), quote=False)  # stray ESCs become ␛
        if runs and runs[-1][0] == attributes:
            runs[-1][1].append(chunk)
        else:
            runs.append((attributes, [chunk]))
    return "".join(
        f"<span{attributes}>{''.join(chunks)}</span>" if attributes else "".join(chunks)
        for attributes, chunks in runs
    )


def ansi_html(text: str) -> str:
    """Terminal output with ANSI colours as inline HTML (wrap it in ``<pre>`` for layout).

    >>> ansi_html("\\x1b[1;32mok\\x1b[0m \\x1b[38;2;255;0;0mred\\x1b[0m\\x07")
    '<span class="tf-ansi-fg2 tf-ansi-bold">ok</span> <span style="color:#ff0000">red</span>␇'
    """
    return _styled_html(_decode_ansi(text))


# --- Diffs (W-5) --------------------------------------------------------------------------------


_DIFF_LINE_CLASSES = {"+": "tf-diff-add", "-": "tf-diff-del", " ": "tf-diff-ctx"}


def _diff_class(line: str, previous: str, following: str) -> str:
    if line.startswith("@@"):
        return "tf-diff-hunk"
    if (line.startswith("--- ") and following.startswith("+++ ")) or (
        line.startswith("+++ ") and previous.startswith("--- ")
    ):
        return "tf-diff-meta"  # the file header pair
    # Anything else is a header or a note: "diff --git", "index …", "\\ No newline at end of file".
    return _DIFF_LINE_CLASSES.get(line[:1], "tf-diff-meta")


def _diff_lines(text: str) -> str:
    lines = text.split("\n")
    out = []
    for number, line in enumerate(lines):
        if not line:  # an empty line (or the end after a final newline) needs no span
            out.append("")
            continue
        previous = lines[number - 1] if number else ""
        following = lines[number + 1] if number + 1 < len(lines) else ""
        out.append(
            f'<span class="{_diff_class(line, previous, following)}">'
            f"{html.escape(line, quote=False)}</span>"
        )
    return "\n".join(out)


def diff_html(text: str) -> str:
    """A unified diff as a ``<pre>`` block with one classed span per line.

    Classes: ``tf-diff-add``, ``tf-diff-del``, ``tf-diff-hunk``, ``tf-diff-ctx`` and
    ``tf-diff-meta`` (file headers and notes). The text content equals the (neutralized) input.

    >>> diff_html("@@ -1 +1 @@\\n-old\\n+new")
    '<pre class="tf-output tf-diff"><span class="tf-diff-hunk">@@ -1 +1 @@</span>\\n\
<span class="tf-diff-del">-old</span>\\n<span class="tf-diff-add">+new</span></pre>'
    """
    return f'<pre class="tf-output tf-diff">{_diff_lines(plain_text(text))}</pre>'


def edit_diff(old: str, new: str, path: str) -> str:
    """A unified diff (text) of an edit, for sources that record only the old and new strings.

    Render it with :func:`diff_html`. Identical strings give an empty diff.

    >>> print(edit_diff("a\\nb\\n", "a\\nc\\n", "x.py"), end="")
    --- a/x.py
    +++ b/x.py
    @@ -1,2 +1,2 @@
     a
    -b
    +c
    """
    import difflib  # only here: a page never diffs, and need not import it (issue 19)

    name = " ".join(plain_text(path).split())  # a path with a newline must not forge a header
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), f"a/{name}", f"b/{name}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines ending in "\\n" (str.splitlines would also split on form feeds and the like)."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


# --- Images (W-5, X-1) --------------------------------------------------------------------------

#: Raster types a browser decodes without running anything. SVG is excluded: it can carry script.
IMAGE_TYPES: dict[str, str] = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",  # a common misspelling in transcripts
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}
_BASE64_DATA = re.compile(_BASE64)
_BASE64_WRAPPING = re.compile(r"[ \t\r\n]+")


def image_html(image: ImageData, *, alt: str | None = None) -> str | None:
    """An ``<img>`` showing inline image data, or None when it cannot be shown safely.

    Only PNG, JPEG, GIF and WebP are shown, and only as a ``data:`` URL whose payload is valid
    base64 (line wrapping is tolerated), so nothing is fetched from anywhere (X-1). The caller
    shows a note for None.

    >>> image_html(ImageData(media_type="image/png", data="iVBORw0KGgo="))
    '<img class="tf-image" src="data:image/png;base64,iVBORw0KGgo=" alt="image/png">'
    >>> image_html(ImageData(media_type="image/svg+xml", data="PHN2Zy8+")) is None
    True
    """
    media_type = IMAGE_TYPES.get(str(image.media_type).strip().lower())
    data = _BASE64_WRAPPING.sub("", image.data) if isinstance(image.data, str) else ""
    if media_type is None or not data or not _BASE64_DATA.fullmatch(data):
        return None
    label = escape(alt if alt is not None else media_type)
    return f'<img class="tf-image" src="data:{media_type};base64,{data}" alt="{label}">'


def image_note(image: ImageData) -> dict[str, Any]:
    """The note shown instead of an image :func:`image_html` cannot show: its type is not
    displayed, or (a displayed type) its data is redacted or broken (issue 21.14).

    >>> image_note(ImageData(media_type="image/png", data="[redacted]"))["key"]
    'tool.image_unreadable'
    >>> image_note(ImageData(media_type="image/svg+xml", data="PHN2Zy8+"))["key"]
    'tool.image_unsupported'
    """
    media_type = text_preview(str(image.media_type), 80)
    if str(image.media_type).strip().lower() in IMAGE_TYPES:
        return {"key": "tool.image_unreadable", "params": {"media_type": media_type}}
    return {"key": "tool.image_unsupported", "params": {"media_type": media_type}}


# --- Tool results (F-12, W-5, X-2) --------------------------------------------------------------
#
# A long result is capped to its first ``max_lines`` lines and ``max_chars`` characters. The
# rest is rendered too, as ``more_html``, for a "show more" control: capped, never dropped
# (F-12, X-2). The cut prefers a line end, and in Markdown a block boundary outside code
# fences, so each part renders sensibly on its own.


@dataclass(frozen=True)
class _Parts:
    html: str
    text: str
    lines: int
    more_html: str | None = None
    more_lines: int = 0


def _line_count(text: str, start: int = 0) -> int:
    """Lines in ``text[start:]``, counted in place (no copy of a long output's tail)."""
    return text.count("\n", start) + (1 if len(text) > start and not text.endswith("\n") else 0)


def _cut_offset(text: str, max_lines: int, max_chars: int) -> int | None:
    """Where to cut ``text`` to show at most ``max_lines`` lines and ``max_chars`` characters."""
    end = -1
    for _ in range(max_lines):
        end = text.find("\n", end + 1)
        if end == -1:
            break
    cut = len(text) if end == -1 else end + 1
    if cut > max_chars:
        newline = text.rfind("\n", 0, max_chars)
        # End on a whole line unless that would show less than half of what fits.
        cut = newline + 1 if newline + 1 >= max_chars // 2 else max_chars
    return cut if cut < len(text) else None


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _markdown_cut(source: str, cut: int) -> int:
    """Move a cut in Markdown back to a block boundary, and out of a code fence, when it can.

    A boundary is a line after a blank line, outside fences. It is used when it keeps at least
    half of the shown part; otherwise a cut outside a fence stays where it is (a list or table
    split in two still renders), and a cut inside a fence moves to the fence's start.
    """
    best = fence_start = position = 0
    fence: str | None = None
    after_blank = False
    for line in _lines(source[:cut]):
        if fence is None and after_blank:
            best = position
        match = _FENCE.match(line)
        if fence is None and match:
            fence, fence_start = match.group(1), position
        elif fence is not None and match:
            marker = match.group(1)
            if marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None if not line[match.end() :].strip() else fence
        after_blank = fence is None and not line.strip()
        position += len(line)
    if fence is None and after_blank:
        return cut
    if best >= cut // 2 and best > 0:
        return best
    if fence is not None and fence_start > 0:
        return fence_start
    return cut


def capped_text(text: str, max_lines: int, max_chars: int) -> tuple[str, str | None, int]:
    """Plain text escaped for HTML (as :func:`escape`), cut as a tool's output is (F-12): the
    first ``max_lines`` lines within ``max_chars``, the rest (None when nothing was cut), and
    the number of lines in the rest.

    >>> capped_text("a\\nb\\nc <d>\\n", 2, 100)
    ('a\\nb\\n', 'c &lt;d&gt;\\n', 1)
    """
    plain = plain_text(text)
    head, tail = _split(plain, _cut_offset(plain, max_lines, max_chars))
    if tail is None:
        return html.escape(head), None, 0
    return html.escape(head), html.escape(tail), _line_count(tail)


def _split(text: str, cut: int | None) -> tuple[str, str | None]:
    return (text, None) if cut is None else (text[:cut], text[cut:])


def _pre(inner: str, kind: str) -> str:
    return f'<pre class="tf-output tf-{kind}">{inner}</pre>'


def _escape_output(text: str) -> str:
    """``html.escape(text, quote=False)``: most output holds none of ``& < >``, and looking for
    each (memchr) costs far less than replacing it (a counting pass each) over megabytes (Q-1)."""
    if "&" in text or "<" in text or ">" in text:
        return html.escape(text, quote=False)
    return text


def _plain_parts(text: str, kind: str, max_lines: int, max_chars: int) -> _Parts:
    plain = _neutralize(text)
    cut = _cut_offset(plain, max_lines, max_chars)
    if cut is None:
        return _Parts(_pre(_escape_output(plain), kind), plain, _line_count(plain))
    head, tail = plain[:cut], plain[cut:]
    more_lines = _line_count(tail)
    return _Parts(
        html=_pre(_escape_output(head), kind),
        text=head,
        # The line the cut splits (if any) is the tail's first: counted once, by the tail.
        lines=head.count("\n") + more_lines,
        more_html=_pre(_escape_output(tail), kind),
        more_lines=more_lines,
    )


def _ansi_parts(text: str, max_lines: int, max_chars: int) -> _Parts:
    # Decode the whole text before cutting: a colour set on line 3 still applies on line 20.
    decoded = _decode_ansi(text)
    cut = _cut_offset(decoded.plain, max_lines, max_chars)
    if cut is None:
        head, tail = decoded, None
    else:
        head, tail = decoded.divide([cut])
    return _Parts(
        html=_pre(_styled_html(head), "ansi"),
        text=_neutralize(head.plain),
        lines=_line_count(decoded.plain),
        more_html=None if tail is None else _pre(_styled_html(tail), "ansi"),
        more_lines=0 if tail is None else _line_count(tail.plain),
    )


def _diff_parts(text: str, max_lines: int, max_chars: int) -> _Parts:
    plain = plain_text(text)
    head, tail = _split(plain, _cut_offset(plain, max_lines, max_chars))
    return _Parts(
        html=_pre(_diff_lines(head), "diff"),
        text=head,
        lines=_line_count(plain),
        more_html=None if tail is None else _pre(_diff_lines(tail), "diff"),
        more_lines=0 if tail is None else _line_count(tail),
    )


def _block_parts(text: str, render: Callable[[str], str], max_lines: int, max_chars: int) -> _Parts:
    source = plain_text(text)
    cut = _cut_offset(source, max_lines, max_chars)
    head, tail = _split(source, None if cut is None else _markdown_cut(source, cut))
    return _Parts(
        html=render(head),
        text=head,
        lines=_line_count(source),
        more_html=None if tail is None else render(tail),
        more_lines=0 if tail is None else _line_count(tail),
    )


_TODO_LINE = re.compile(r"\s*(?:[-*+]\s+)?\[([ xX~])\](?:\s+(.*))?")


def _todo_html(text: str) -> str:
    """A checklist (``[x] done`` lines, as loaders write todo lists) as a list with glyphs.

    Anything else is Markdown, whose task items get the same glyphs.
    """
    rows = [line for line in text.split("\n") if line.strip()]
    matches = [_TODO_LINE.fullmatch(row) for row in rows]
    if not rows or any(match is None for match in matches):
        return markdown_html(text)
    items = []
    for match in matches:
        assert match is not None  # checked above
        state, glyph = _TASK_STATES[match.group(1)]
        items.append(
            f'<li class="tf-task tf-task-{state}"><span class="tf-task-mark">{glyph}</span> '
            f"{html.escape(match.group(2) or '')}</li>"
        )
    return f'<ul class="tf-todo">{"".join(items)}</ul>'


def pretty_json(value: Any) -> str:
    """``json.dumps(value, indent=2)`` for display; what JSON cannot hold is shown by ``repr``."""
    return codec.pretty(value, default=repr)


def _pretty_json(text: str) -> str:
    try:
        return pretty_json(codec.loads(text))
    except ValueError:  # not JSON after all: show it as it is
        return text


#: How many characters of an output's hidden rest are rendered. A long session's outputs are
#: mostly log lines nobody opens; rendering them whole made a static page nearly as large as
#: the session and most of the render time (Q-1, Q-2). What lies beyond is counted and named
#: (``omitted_lines``), never silently dropped (F-12, X-2): the transcript keeps it.
MORE_CHARS = 3_000


def _within_budget(text: str, budget: int | None) -> tuple[str, int]:
    """``text`` cut at a line end near ``budget`` characters, and the lines cut off."""
    if budget is None or len(text) <= budget:
        return text, 0
    cut = _cut_near(text, budget)
    return text[:cut], _line_count(text, cut)


def _cut_near(text: str, budget: int) -> int:
    """Where to cut ``text`` longer than ``budget``: the last line end within it, unless that
    keeps less than half (one very long line is cut mid-line)."""
    end = text.rfind("\n", 0, budget)
    return end + 1 if end + 1 >= budget // 2 else budget


#: Characters of one message's text (an answer, a progress note, a prompt, reasoning) a view
#: draws at most. Past this the view shows the first part and says how much it left out; the
#: widget fetches the whole on request and the transcript keeps it (X-2). A view, its
#: ``text/plain`` and its ``text/html`` each copied a 200 MB answer whole: gigabytes of the
#: kernel, and a notebook that saves every copy (X-1).
PROSE_CHARS = 1 << 18


def capped_prose(text: str, limit: int | None = None) -> tuple[str, int]:
    """``text`` cut at a line end near ``limit`` characters (:data:`PROSE_CHARS`), and how many
    characters were cut.

    >>> capped_prose("ab\\ncd\\n", 4)
    ('ab\\n', 3)
    """
    limit = PROSE_CHARS if limit is None else limit
    if len(text) <= limit:
        return text, 0
    cut = _cut_near(text, limit)
    return text[:cut], len(text) - cut


def omitted_note_html(count: int, locale: str | None = "en") -> str:
    """The note under a message :func:`capped_prose` cut: how much is left out, and where it is;
    "" when nothing was."""
    if not count:
        return ""
    note = html.escape(plural("text.not_included", count, locale))
    return f'<div class="tf-note tf-omitted">{note}</div>'


def _shown_text(result: ToolResult) -> tuple[str, str]:
    """The kind a result is drawn as, and its whole text as drawn (before any cap)."""
    kind: str = result.kind
    text = result.text
    if text is None and result.structured is not None:
        return "json", pretty_json(result.structured)
    text = text or ""
    return kind, _pretty_json(text) if kind == "json" else text


def result_text(result: ToolResult | None) -> str:
    """The whole of a result as plain text: what :func:`result_view` caps, uncapped.

    Escape sequences are interpreted away and controls made visible; it is text, never HTML.
    """
    return plain_text(_shown_text(result)[1]) if result is not None else ""


def result_view(
    result: ToolResult | None,
    *,
    max_lines: int = 12,
    max_chars: int = 4000,
    more_chars: int | None = MORE_CHARS,
) -> dict[str, Any] | None:
    """The JSON-ready view of a tool result; None for no result.

    Keys: ``kind`` (the result's kind), ``html`` (the first part, capped), ``text`` (that part as
    plain text, controls neutralized), ``lines`` (line count of the whole result), ``truncated``;
    when truncated also ``more_html`` (the rest, rendered: F-12, nothing dropped) and
    ``more_lines``; ``omitted_lines``, the lines past ``max_chars + more_chars`` left
    unrendered (line-based outputs only; ``more_chars=None`` renders everything); ``images``
    (``<img>`` fragments) and ``notes`` (what could not be shown, as
    ``{"key": catalog key, "params": {...}}`` for the renderer to translate; param values are
    plain text to escape).

    Text is an escaped ``<pre>`` (ANSI-coloured if it holds escape sequences anyway), ``ansi`` a
    coloured ``<pre>``, ``markdown``/``plan``/``subagent`` Markdown, ``todo`` a checklist with
    ☐/◧/☑ glyphs, ``json`` pretty-printed JSON, ``diff`` classed diff lines. A result with no
    text but structured data shows that data as JSON (X-2).

    >>> view = result_view(ToolResult(text="a\\nb\\nc\\n"), max_lines=2)
    >>> view["html"], view["lines"], view["more_lines"]
    ('<pre class="tf-output tf-text">a\\nb\\n</pre>', 3, 1)
    >>> view["more_html"]
    '<pre class="tf-output tf-text">c\\n</pre>'
    """
    if result is None:
        return None
    if max_lines < 1 or max_chars < 1:
        raise ValueError("max_lines and max_chars must be at least 1")
    kind, text = _shown_text(result)
    budget = None if more_chars is None else max_chars + more_chars
    omitted = 0
    if kind in ("text", "ansi", "json", "diff"):  # line-based: safe to cut at a line end
        text, omitted = _within_budget(text, budget)
    if kind == "ansi" or (kind == "text" and "\x1b" in text):  # not every source marks colour
        parts = _ansi_parts(text, max_lines, max_chars)
    elif kind == "diff":
        parts = _diff_parts(text, max_lines, max_chars)
    elif kind == "json":
        parts = _plain_parts(text, "json", max_lines, max_chars)
    elif kind == "todo":
        parts = _block_parts(text, _todo_html, max_lines, max_chars)
    elif kind in ("markdown", "plan", "subagent"):
        parts = _block_parts(text, markdown_html, max_lines, max_chars)
    else:
        parts = _plain_parts(text, "text", max_lines, max_chars)
    images: list[str] = []
    notes: list[dict[str, Any]] = []
    for image in result.images:
        shown = image_html(image)
        if shown is not None:
            images.append(shown)
        else:
            notes.append(image_note(image))
    view: dict[str, Any] = {
        "kind": result.kind,
        # A result that is only images is its images (or their notes), no empty text box first.
        "html": parts.html if text or not result.images else "",
        "text": parts.text,
        "lines": parts.lines + omitted,
        "truncated": parts.more_html is not None or omitted > 0,
    }
    if parts.more_html is not None:
        view["more_html"] = parts.more_html
        view["more_lines"] = parts.more_lines
    if omitted:
        view["omitted_lines"] = omitted
    view["images"] = images
    view["notes"] = notes
    return view


# --- Thinking (P-9) -----------------------------------------------------------------------------


def thinking_html(thinking: Thinking, locale: str | None = "en") -> str:
    """The reasoning as Markdown HTML; a labelled placeholder when the provider withheld it.

    Redacted or encrypted reasoning is named as such, never an empty box (P-9); a summary is
    labelled so it is not mistaken for the full reasoning. Blank reasoning gives "".

    >>> thinking_html(Thinking(form="redacted"), "en")
    '<p class="tf-thinking-placeholder tf-thinking-redacted">Reasoning redacted by the provider</p>'
    """
    if thinking.form in ("redacted", "encrypted"):
        label = escape(translate(f"thinking.{thinking.form}", locale))
        return f'<p class="tf-thinking-placeholder tf-thinking-{thinking.form}">{label}</p>'
    if not thinking.text.strip():
        return ""
    shown, omitted = capped_prose(thinking.text)
    body = markdown_html(shown) + omitted_note_html(omitted, locale)
    if thinking.form == "summary":
        label = escape(translate("thinking.summary", locale))
        return f'<p class="tf-thinking-label">{label}</p>{body}'
    return body


# --- Stylesheet (W-3) ---------------------------------------------------------------------------
#
# One stylesheet serves light and dark: light by default; dark inside JupyterLab's dark themes
# (``data-jp-theme-light="false"``), VS Code's dark themes, marimo's (``.dark``), under a
# ``.tf-dark`` ancestor, or when the system prefers dark and no host theme or ``.tf-light``
# ancestor says light.

_DARK_SCOPES = ('[data-jp-theme-light="false"]', ".vscode-dark", ".dark", ".tf-dark")
_SYSTEM_DARK_SCOPE = 'body:not([data-jp-theme-light="true"]):not(.vscode-light)'


@cache
def pygments_css() -> str:
    """The code-highlighting CSS for both themes, scoped under ``.tf-code``."""
    from pygments.formatters import HtmlFormatter

    light: HtmlFormatter[str] = HtmlFormatter(style=PYGMENTS_LIGHT_STYLE, classprefix="tf-")
    dark: HtmlFormatter[str] = HtmlFormatter(style=PYGMENTS_DARK_STYLE, classprefix="tf-")

    def rules(formatter: HtmlFormatter[str], scopes: list[str]) -> str:
        # Background and token rules only: the full stylesheet also styles every <pre> on the
        # page (line-height) and line-number tables turnfold does not emit. (The stubs leave
        # these methods untyped; naming their type here keeps the calls checked.)
        background: Callable[[list[str]], list[str]] = formatter.get_background_style_defs
        tokens: Callable[[list[str]], list[str]] = formatter.get_token_style_defs
        return "\n".join([*background(scopes), *tokens(scopes)])

    system_dark = rules(dark, [f"{_SYSTEM_DARK_SCOPE} .tf-code:not(.tf-light *)"])
    return "\n".join(
        [
            rules(light, [".tf-code"]),
            rules(dark, [f"{scope} .tf-code" for scope in _DARK_SCOPES]),
            "@media (prefers-color-scheme: dark) {",
            system_dark,
            "}",
            "",
        ]
    )


# Standard ANSI colours 0-15. Light: the classic Jupyter palette; dark: VS Code's terminal.
# These are the backgrounds (text keeps the theme's own colour on them).
_ANSI_LIGHT = (
    "#3e424d", "#e75c58", "#00a250", "#ddb62b", "#208ffb", "#d160c4", "#60c6c8", "#c5c1b4",
    "#282c36", "#b22b31", "#007427", "#b27d12", "#0065ca", "#a03196", "#258f8f", "#a1a6b2",
)  # fmt: skip
_ANSI_DARK = (
    "#666666", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#8a8a8a", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
)  # fmt: skip
# The same colours as text: each darkened (light) or lightened (dark), hue and saturation kept,
# until it reads at 4.5:1 (WCAG AA) on the theme's output box, as VS Code's terminal does with
# its minimum contrast ratio: red on JupyterLab Dark's box read at 3.1:1, yellow on a light
# one at 1.7:1. The boxes are the lightest dark one (JupyterLab Dark's layout-color1, #212121)
# and the darkest light one (JupyterLab Light's layout-color2, #eeeeee);
# tests/test_ansi_contrast.py checks every pair from the CSS.
_ANSI_LIGHT_TEXT = (
    "#3e424d", "#cd221e", "#00793c", "#7e6714", "#0469cb", "#b133a3", "#297476", "#706a57",
    "#282c36", "#b22b31", "#007427", "#8d630e", "#0065ca", "#a03196", "#1e7575", "#646a7a",
)  # fmt: skip
_ANSI_DARK_TEXT = (
    "#8a8a8a", "#da6666", "#0dbc79", "#e5e510", "#428cdd", "#ca5fca", "#11a8cd", "#e5e5e5",
    "#8a8a8a", "#f15151", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
)  # fmt: skip
_LIGHT_VARIABLES = {
    **{f"--tf-ansi-{number}": colour for number, colour in enumerate(_ANSI_LIGHT_TEXT)},
    **{f"--tf-ansi-bg-{number}": colour for number, colour in enumerate(_ANSI_LIGHT)},
    "--tf-diff-add-bg": "rgba(46, 160, 67, 0.15)",
    "--tf-diff-del-bg": "rgba(248, 81, 73, 0.15)",
    "--tf-diff-hunk-fg": "#0550ae",
    "--tf-diff-meta-fg": "#57606a",
}
_DARK_VARIABLES = {
    **{f"--tf-ansi-{number}": colour for number, colour in enumerate(_ANSI_DARK_TEXT)},
    **{f"--tf-ansi-bg-{number}": colour for number, colour in enumerate(_ANSI_DARK)},
    "--tf-diff-add-bg": "rgba(46, 160, 67, 0.25)",
    "--tf-diff-del-bg": "rgba(248, 81, 73, 0.25)",
    "--tf-diff-hunk-fg": "#79c0ff",
    "--tf-diff-meta-fg": "#8b949e",
}
_CONTENT_RULES = """\
.tf-output, .tf-code pre {
  margin: 0; padding: 4px 8px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere;
  font-family: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace);
  font-size: var(--jp-code-font-size, 13px); line-height: 1.35;
}
.tf-code { border-radius: 4px; border: 1px solid var(--tf-border, #d1d9e0); }
.tf-md table { border-collapse: collapse; }
.tf-md th, .tf-md td { border: 1px solid var(--tf-border, #d0d7de); padding: 2px 8px; }
.tf-md img, .tf-image { max-width: 100%; height: auto; }
.tf-todo, .tf-md li.tf-task { list-style: none; }
.tf-todo { padding-left: 0.5em; margin: 0; }
.tf-task-mark { display: inline-block; min-width: 1.2em; }
.tf-task-done { opacity: 0.7; }
.tf-thinking-placeholder, .tf-thinking-label { font-style: italic; opacity: 0.75; margin: 0; }
.tf-diff-add, .tf-diff-del { display: inline-block; min-width: 100%; box-sizing: border-box; }
.tf-diff-add { background-color: var(--tf-diff-add-bg); }
.tf-diff-del { background-color: var(--tf-diff-del-bg); }
.tf-diff-hunk { color: var(--tf-diff-hunk-fg); }
.tf-diff-meta { color: var(--tf-diff-meta-fg); font-weight: bold; }
.tf-ansi-bold { font-weight: bold; }
.tf-ansi-dim { opacity: 0.7; }
.tf-ansi-italic { font-style: italic; }
.tf-ansi-underline { text-decoration: underline; }
.tf-ansi-strike { text-decoration: line-through; }
.tf-ansi-underline.tf-ansi-strike { text-decoration: underline line-through; }
.tf-ansi-fg-inverse { color: var(--jp-layout-color0, #ffffff); }
.tf-ansi-bg-inverse { background-color: var(--jp-content-font-color0, #000000); }
"""


def _declarations(variables: dict[str, str]) -> str:
    return " ".join(f"{name}: {value};" for name, value in variables.items())


@cache
def content_css() -> str:
    """All CSS the fragments of this module need (code, ANSI, diffs, todo lists), both themes.

    Page and widget renderers include it once; it is deterministic, so it can be embedded in
    static outputs (W-4).
    """
    ansi = "\n".join(
        f".tf-ansi-fg{number} {{ color: var(--tf-ansi-{number}); }}\n"
        f".tf-ansi-bg{number} {{ background-color: var(--tf-ansi-bg-{number}); }}"
        for number in range(16)
    )
    light, dark = _declarations(_LIGHT_VARIABLES), _declarations(_DARK_VARIABLES)
    variables = "\n".join(
        [
            f":root, .tf-light {{ {light} }}",
            f"{', '.join(_DARK_SCOPES)} {{ {dark} }}",
            f"@media (prefers-color-scheme: dark) {{ {_SYSTEM_DARK_SCOPE} {{ {dark} }} }}",
        ]
    )
    return "\n".join([variables, _CONTENT_RULES + ansi, pygments_css()])
