"""Readable text for a view model: ``text/plain`` outputs, ``turnfold show`` and nbval (W-4, W-6).

:func:`render_text` lays the view model out as an outline, one line per header, group and row,
indented by level, with ``▸`` (closed) and ``▾`` (open) showing each disclosure's *default* fold
state (P-8). Content behind a closed disclosure is left out except its title line, so a settled
transcript reads as its answers and a list of titles, like the page does before anything is
opened; what is never folded (an error's output, an edit's diff, the answer) is shown. The
result is plain text: no ANSI, no HTML, deterministic for a given view and width.

:func:`render_terminal` prints the same outline through **rich**, with colour, bold tool names
(F-13) and dim labels (F-11, F-15).

The outline is built as rich :class:`~rich.text.Text` lines once, so both outputs agree; rich
also measures East Asian wide characters, so Chinese lines wrap and truncate at the right width.

>>> view = {"locale": "en", "notice": None, "nodes": [
...     {"kind": "user", "key": "u", "label": "User", "command": None, "html": "a &lt; b"}]}
>>> print(render_text(view))
User
  a < b
"""

from __future__ import annotations

import html
import io
import re
import sys
from collections.abc import Callable
from functools import cache
from html.parser import HTMLParser
from typing import TYPE_CHECKING

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover - Python 3.10
    from typing_extensions import assert_never

from turnfold.i18n import translate
from turnfold.render.content import escape
from turnfold.render.nodes import (
    AnswerNode,
    BatchNode,
    ChildNode,
    GroupNode,
    NoticeNode,
    OutsideNode,
    ProcessNode,
    ProgressNode,
    ResultView,
    SummaryNode,
    ThinkingNode,
    ToolNode,
    TopNode,
    TurnNode,
    View,
)

if TYPE_CHECKING:  # rich is imported by the first outline: ``turnfold render`` needs none
    from rich.console import Console
    from rich.text import Text

__all__ = ["html_to_text", "render_terminal", "render_text"]


OPEN, CLOSED = "▾", "▸"
INDENT = 2

#: rich styles by role; the plain-text rendering ignores them.
STYLES: dict[str, str] = {
    "marker": "bright_black",
    "dim": "dim",
    "name": "bold",
    "label": "bold",
    "failed": "bold red",
    "stopped": "bold yellow",
    "running": "bold cyan",
    "completed": "bold green",
    "error": "red",
    "warning": "yellow",
    "pending": "bold yellow",
    "add": "green",
    "del": "red",
    "hunk": "cyan",
    "struck": "strike",
    "rejected": "yellow",
}


_SYSTEM_GLYPHS = {"info": "ℹ", "warning": "⚠", "error": "✖"}
_SYSTEM_STYLES = {"info": "dim", "warning": "warning", "error": "error"}


# --- HTML fragments back to text -----------------------------------------------------------------


class _TextExtractor(HTMLParser):
    """The text of a sanitized fragment: blocks on their own lines, list items bulleted."""

    _BLOCKS = frozenset(
        {"p", "div", "pre", "ul", "ol", "li", "tr", "table", "blockquote", "hr",
         "h1", "h2", "h3", "h4", "h5", "h6"}
    )  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._pre = 0
        #: The lists the text is inside, innermost last: the next number of an ``<ol>``, None
        #: for a ``<ul>``.
        self._lists: list[int | None] = []
        self._marked = False  # a list item's mark was the last thing written

    def _newline(self) -> None:
        # A loose list item's paragraph (``<li><p>``) starts on its mark's line.
        if self.parts and not self.parts[-1].endswith("\n") and not self._marked:
            self.parts.append("\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "img":  # an inline image (a model's, in its text): named by its alt text
            self.parts.append(f"[{dict(attrs).get('alt') or 'image'}]")
            self._marked = False
        elif tag in self._BLOCKS:
            self._newline()
        if tag == "ol":
            start = dict(attrs).get("start")
            self._lists.append(int(start) if start and start.isdigit() else 1)
        elif tag == "ul":
            self._lists.append(None)
        elif tag == "li":
            number = self._lists[-1] if self._lists else None
            indent = "  " * max(0, len(self._lists) - 1)
            if number is None:
                self.parts.append(indent + "• ")
            else:
                self.parts.append(f"{indent}{number}. ")
                self._lists[-1] = number + 1
            self._marked = True
        elif tag == "pre":
            self._pre += 1
        elif tag in ("td", "th") and self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag in ("ol", "ul") and self._lists:
            self._lists.pop()
        if tag in self._BLOCKS:
            self._marked = False
            self._newline()

    def handle_data(self, data: str) -> None:
        if self._pre:
            self.parts.append(data)
            return
        # Outside <pre>, whitespace is layout, as in a browser.
        collapsed = " ".join(data.split())
        if data[:1].isspace() and collapsed:
            collapsed = " " + collapsed
        if data[-1:].isspace() and collapsed:
            collapsed += " "
        if self._marked:
            collapsed = collapsed.lstrip()  # the text follows its mark directly
        if collapsed:
            self.parts.append(collapsed)
            self._marked = False


def html_to_text(fragment: str) -> str:
    """The visible text of an HTML fragment, entities unescaped, trimmed.

    >>> html_to_text('<div class="tf-md"><p>a &amp; <b>b</b></p><ul><li>x</li></ul></div>')
    'a & b\\n• x'
    >>> html_to_text('<ol start="3"><li><p>loose</p></li><li>tight<ul><li>in</li></ul></li></ol>')
    '3. loose\\n4. tight\\n  • in'
    """
    parser = _TextExtractor()
    parser.feed(fragment)
    parser.close()
    lines = "".join(parser.parts).split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


# --- the outline ----------------------------------------------------------------------------------


@cache
def _measuring_console() -> Console:
    from rich.console import Console

    # Wrapping needs a console only to measure cells; this one never prints.
    return Console(
        file=io.StringIO(), width=80, color_system=None, force_terminal=False,
        force_jupyter=False, force_interactive=False, emoji=False, markup=False,
        highlight=False, legacy_windows=False, no_color=True,
    )  # fmt: skip


def _clean(text: str) -> str:
    """Text safe for a terminal: escape sequences interpreted away, controls made visible.

    The view model's plain strings (a fast-model label, a title) are untrusted too (X-1); the
    round trip through :func:`~turnfold.render.content.escape` applies its rules and nothing else.
    """
    return html.unescape(escape(text))


def _one_line(text: str) -> str:
    """Whitespace runs (newlines too) as one space, keeping one at either end."""
    text = _clean(text)
    inner = " ".join(text.split())
    if not inner:
        return " " if text else ""
    return (" " if text[0].isspace() else "") + inner + (" " if text[-1].isspace() else "")


def _style(roles: str) -> str:
    """The rich style of space-separated roles (``"name struck"``)."""
    return " ".join(STYLES[role] for role in roles.split() if role in STYLES)


def _rejected(node: ThinkingNode | SummaryNode | ToolNode) -> list[tuple[str, str]]:
    """The label of a rejected entry's title row (``rejected_label``), as the row's last part."""
    label = node.get("rejected_label")
    return [(f" [{label}]", "rejected")] if label else []


def _chevron(node: GroupNode | ThinkingNode | SummaryNode | ToolNode | ProcessNode) -> str:
    return OPEN if node.get("open") else CLOSED


class _Outline:
    """Lays view-model nodes out as indented :class:`Text` lines, one method per node kind."""

    def __init__(self, locale: str, width: int) -> None:
        from rich.text import Text

        self.locale = locale
        self.width = max(width, 20)
        self.lines: list[Text] = []
        self.text = Text

    # -- laying out lines

    def row(
        self,
        depth: int,
        parts: list[tuple[str, str]],
        marker: str = "",
        *,
        labels: list[tuple[str, str]] | None = None,
    ) -> None:
        """One title line, cut with ``…`` at the width so it stays one line.

        ``labels`` (``[Failed]``, ``[Rejected]``) end the line whole: the title gives way to
        them, as a long command made a failed call read as any other, its label past the width.
        """
        line = self.text(" " * (depth * INDENT), end="")
        if marker:
            line.append(marker + " ", STYLES["marker"])
        lead = line.cell_len
        for text, style in parts:
            line.append(_one_line(text), _style(style))
        if labels:
            tail = self.text(end="")
            for text, style in labels:
                tail.append(_one_line(text), _style(style))
            # rich cuts by cells (a wide character is two). At least the title's "…" stays:
            # a label wider than the line is cut like any text, at the end.
            line.truncate(max(self.width - tail.cell_len, lead + 1), overflow="ellipsis")
            line.append_text(tail)
        line.truncate(self.width, overflow="ellipsis")
        self.lines.append(line)

    def block(
        self,
        depth: int,
        text: str,
        style: str = "",
        *,
        per_line: Callable[[str], str] | None = None,
    ) -> None:
        """Content lines, wrapped at the width and indented to ``depth``."""
        indent = depth * INDENT
        available = max(self.width - indent, 10)
        for raw in _clean(text).split("\n"):
            line_style = per_line(raw) if per_line else _style(style)
            if not raw:
                self.lines.append(self.text(" " * indent, end=""))
                continue
            expanded = raw.expandtabs(4)
            content = self.text(expanded, line_style, end="")
            if expanded.isascii() and len(expanded) <= available:
                # A line that fits is its own wrap; rich's costs 0.1 ms a line, minutes for a
                # transcript's 200 MB answer. ASCII after _clean: one cell a character.
                self.lines.append(self.text(" " * indent, end="") + content)
                continue
            for piece in content.wrap(_measuring_console(), available, overflow="fold"):
                self.lines.append(self.text(" " * indent, end="") + piece)

    def facts(self, parts: list[str]) -> None:
        """Facts joined by `` · ``, as many to a line as fit, never one cut: a header's
        tokens and cost come last, and one of several models lost them cut at the width."""
        from rich.cells import cell_len  # as rich itself is: imported when text is drawn

        line = ""
        for part in map(_one_line, parts):
            joined = f"{line} · {part}" if line else part
            if line and cell_len(joined) > self.width:
                self.block(0, line, "dim")
                joined = part
            line = joined
        if line:
            self.block(0, line, "dim")  # a fact wider than a line is wrapped, not cut

    def t(self, key: str) -> str:
        return translate(key, self.locale)

    # -- top level

    def notice(self, notice: NoticeNode) -> None:
        self.row(0, [(notice["text"], "dim")], CLOSED)  # L-4: quiet, closed, items left out

    def top(self, node: TopNode, depth: int) -> None:
        if node["kind"] == "user":
            if self.lines:  # a blank line before each request, so turns read as paragraphs
                self.lines.append(self.text(""))
            command = node["command"]
            said_command = html.unescape(command) + " " if command else ""
            # The text is escaped, so raw markup in it can only be the pasted images' boxes.
            markup = str(node["html"])
            boxes = markup.find("<div class=")
            said, pasted = (markup, "") if boxes < 0 else (markup[:boxes], markup[boxes:])
            self.row(depth, [(node["label"], "label")])
            more = node.get("more_label")
            shown = html.unescape(said)
            words = said_command + (shown.rstrip("\n") if more else shown)
            if words:  # a prompt of pictures alone, or one not recorded, has no line of text
                self.block(depth + 1, words)
            if more:  # a long message is capped as an output is, saying how much more there is
                self.row(depth + 1, [(more, "dim")], CLOSED)
            for fragment in re.findall(r"<img [^>]*>|<div class=\"tf-note\">[^<]*", pasted):
                label = _image_label(fragment) if fragment.startswith("<img") else None
                shown = f"[{label}]" if label else html.unescape(fragment.split(">", 1)[1])
                self.row(depth + 1, [(shown, "dim")])
        elif node["kind"] == "system":  # marked, so a runtime notice never reads like an answer
            level = node.get("level", "info")
            glyph = _SYSTEM_GLYPHS.get(level, "ℹ")
            self.block(
                depth, f"{glyph} {html_to_text(node['html'])}", _SYSTEM_STYLES.get(level, "dim")
            )
        elif node["kind"] == "compaction":
            marker = CLOSED if node.get("summary_html") else ""
            self.row(depth, [(f"── {node['text']} ──", "dim")], marker)
        elif node["kind"] == "turn":
            self.turn(node, depth)
        else:  # a kind added to the schema and not drawn here: mypy says so
            assert_never(node)

    # -- a turn (P-1, P-3, P-7)

    def turn(self, node: TurnNode, depth: int) -> None:
        header, process = node["header"], node.get("process")
        parts: list[tuple[str, str]] = [(header["label"], node.get("status", "completed"))]
        shown = (header["duration"], header["count"], header.get("usage"))
        parts += [(f" · {part}", "dim") for part in shown if part]
        self.row(depth, parts, _chevron(process) if process else "")
        if process and process.get("open"):
            self.children(process["children"], depth + 1)
        for surface in node.get("outside", []):
            self.outside(surface, depth)
        answer = node.get("answer")
        if answer:
            self.prose(answer, depth)

    def prose(self, node: ProgressNode | AnswerNode, depth: int) -> None:
        """A text of the reply; a rejected one under its label, dim."""
        label = node.get("rejected_label")
        if label:
            self.row(depth, [(f"[{label}]", "rejected")])
        self.block(depth, html_to_text(node["html"]), "dim" if label else "")
        omitted = node.get("omitted_label")
        if omitted:  # a message past content.PROSE_CHARS says what it leaves out
            self.row(depth, [(omitted, "dim")])

    def outside(self, node: OutsideNode, depth: int) -> None:
        if node["kind"] == "pending":
            self.row(depth, [("? ", "pending"), (node["label"], "pending")])
            self.block(depth + 1, html.unescape(node["html"]))
            for option in node.get("options") or []:
                self.row(depth + 1, [("- " + html.unescape(option), "")])
        elif node["kind"] == "error":
            self.block(depth, "✖ " + html.unescape(node["html"]), "error")
        elif node["kind"] == "abort":
            self.block(depth, "■ " + html.unescape(node["html"]), "warning")
        else:
            assert_never(node)

    # -- the process (P-4 … P-9)

    def children(self, nodes: list[ChildNode], depth: int) -> None:
        for node in nodes:
            self.child(node, depth)

    def child(self, node: ChildNode, depth: int) -> None:
        if node["kind"] == "group":
            parts = [(node["title"], "")]
            if node.get("count"):
                parts.append((f" · {node['count']}", "dim"))
            self.row(depth, parts, _chevron(node))
            if node.get("open"):
                self.children(node["children"], depth + 1)
        elif node["kind"] == "thinking":
            parts = [(node["label"], "dim")]
            if node["form_label"]:
                parts.append((" · " + node["form_label"], "dim"))
            self.row(depth, parts, _chevron(node), labels=_rejected(node))
            if node.get("open") and node.get("html"):
                self.block(depth + 1, html_to_text(node["html"]), "dim")
        elif node["kind"] == "thinking-indicator":
            self.row(depth, [(node["label"] + "…", "dim")])
        elif node["kind"] == "progress":
            self.prose(node, depth)
        elif node["kind"] == "command":
            self.tool(node["tool"], depth)
        elif node["kind"] == "batch":
            self.batch(node, depth)
        else:
            assert_never(node)

    def batch(self, node: BatchNode, depth: int) -> None:
        for row in node.get("rows", []):
            if row["kind"] == "summary":  # F-10a: a disclosure that opens to its tools
                self.row(depth, [(row["text"], "name")], _chevron(row), labels=_rejected(row))
                if row.get("open"):
                    for tool in row.get("tools", []):
                        self.tool(tool, depth + 1)
            else:
                self.tool(row, depth)
        for extra in (node.get("memory"), node.get("label")):  # F-11, F-15: dim lines
            if extra:
                self.row(depth, [(extra, "dim")])

    # -- one tool (F-7, F-10, F-12, F-13)

    def tool(self, node: ToolNode, depth: int) -> None:
        result = node.get("result")
        fold, args, subagent = node["fold"], node["args"], node["subagent"]
        hides = fold["args"] or fold["result"] or fold["note"] or fold["subagent"]
        self.row(
            depth, self.tool_title(node), _chevron(node) if hides else "", labels=self.labels(node)
        )
        if node["open"]:  # never by default (P-8), but a view may say so
            if fold["args"] and args:
                self.arguments(args, depth + 1)
            if fold["result"] and result:
                self.result(result, depth + 1)
            if fold["note"]:
                self.row(depth + 1, [(fold["note"], "dim")])
            if fold["subagent"] and subagent:
                for child in subagent["nodes"]:
                    self.top(child, depth + 1)
        if args and node["show_args"]:
            self.arguments(args, depth + 1)
        if result is not None and not fold["result"]:
            self.result(result, depth + 1)

    @staticmethod
    def tool_title(node: ToolNode) -> list[tuple[str, str]]:
        """The tool's name and what it did: the part of its row that gives way to its labels."""
        subagent = node["subagent"]
        line = subagent["line"] if subagent else None
        description = node["description"]
        struck = " struck" if node["struck"] else ""
        parts = [(html.unescape(node["name"]), "name" + struck)]
        if line:  # F-7 stands in for the description: it names the task
            parts.append((" " + html.unescape(line), "dim"))
        elif description:
            parts.append((" " + html.unescape(description), struck.strip()))
        return parts

    @staticmethod
    def labels(node: ToolNode) -> list[tuple[str, str]]:
        """The status, scoring and rejection labels that end a tool's row."""
        labels: list[tuple[str, str]] = []
        if node["status_label"] is not None:
            style = "error" if node["status"] == "error" else "dim"
            labels.append((f" [{node['status_label']}]", style))
        scoring = node.get("scoring_label")
        if scoring:  # a scorer's call, not the agent's (process.is_scoring_call)
            labels.append((f" [{scoring}]", "dim"))
        return labels + _rejected(node)

    def arguments(self, args: str, depth: int) -> None:
        self.row(depth, [(self.t("tool.arguments"), "dim")])
        self.block(depth, html.unescape(args), "dim")

    def result(self, result: ResultView, depth: int) -> None:
        text = str(result.get("text") or "").rstrip("\n")
        if result.get("kind") in ("markdown", "plan", "subagent", "todo"):
            text = html_to_text(str(result.get("html") or ""))
        per_line = _diff_style if result.get("kind") == "diff" else None
        if text:
            self.block(depth, text, per_line=per_line)
        if result["more_label"]:  # F-12: capped, and says how much more there is
            self.row(depth, [(result["more_label"], "dim")], CLOSED)
        for image in result["images"]:
            self.row(depth, [(f"[{_image_label(image)}]", "dim")])
        for note in result["notes_text"]:
            self.row(depth, [(note, "dim")])


def _diff_style(line: str) -> str:
    if line.startswith("@@"):
        return STYLES["hunk"]
    if line.startswith(("+++", "---")):
        return STYLES["dim"]
    return STYLES.get({"+": "add", "-": "del"}.get(line[:1], ""), "")


class _Alt(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.alt = "image"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.alt = dict(attrs).get("alt") or self.alt


def _image_label(fragment: str) -> str:
    parser = _Alt()
    parser.feed(fragment)
    return parser.alt


def _outline(view: View, width: int) -> list[Text]:
    outline = _Outline(str(view.get("locale") or "en"), width)
    session = view.get("session")
    if session:  # U-3: the session's facts, dim, above everything
        outline.facts([part["text"] for part in session["parts"]])
    timeline = view.get("timeline")
    if timeline:  # U-4: the picture as one line: how busy the tools were along the axis
        parts = [(timeline["title"], "dim")]
        if timeline["note"]:
            parts.append((f" · {timeline['note']}", "dim"))
        parts.append((f"  {timeline['sparkline']}", "dim"))
        outline.row(0, parts, OPEN if timeline["open"] else CLOSED)
    outcome = view.get("outcome")
    if outcome:  # H-6
        style = "error" if outcome["status"] in ("fail", "error") else "dim"
        outline.row(0, [(outcome["text"], style)])
    notice = view.get("notice")
    if notice:
        outline.notice(notice)
    for node in view.get("nodes", []):
        outline.top(node, 0)
    return outline.lines


def render_text(view: View, *, width: int = 100) -> str:
    """The view model as an indented plain-text outline, at most ``width`` cells per line."""
    return "\n".join(line.plain.rstrip() for line in _outline(view, width))


def render_terminal(view: View, console: Console) -> None:
    """Print the outline to ``console`` with rich styles: colour, bold names, dim labels."""
    for line in _outline(view, console.width):
        console.print(line, no_wrap=True, crop=True, soft_wrap=False, highlight=False)
