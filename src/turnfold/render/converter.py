"""The Markdown converter of :func:`turnfold.render.content.markdown_html` (W-5, X-1).

Python-Markdown with raw HTML switched off (it shows as text), images that are not inline data
turned into links (nothing loads by itself), GitHub-style task items drawn with glyphs, and
lists allowed right under a paragraph line. The sanitizer in ``content`` still checks whatever
this produces; this module only makes hostile or sloppy text read well.

It is imported by the first text that needs the converter, not by every page: most of what a
session holds is prose and tool output that never reach Markdown (issue 19).
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as etree

import markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from turnfold.render.content import _DATA_IMAGE_URL, _TASK_STATES

__all__ = ["new_converter"]


class _ImagesWithoutRemoteLoads(Treeprocessor):
    """Turn an image that is not inline data into a link, so nothing loads by itself (X-1).

    The reader still sees that there was an image and where it pointed (X-2); the sanitizer
    then keeps the link only if its URL is an allowed link.
    """

    def run(self, root: etree.Element) -> None:
        for element in list(root.iter("img")):
            src = element.get("src", "")
            if _DATA_IMAGE_URL.fullmatch(src):
                continue
            label = element.get("alt") or src
            element.tag = "a"
            element.attrib = {"href": src, "class": "tf-image-link"}
            element.text = f"🖼 {label}"


_TASK = re.compile(r"\[([ xX~])\]\s+")


class _TaskListGlyphs(Treeprocessor):
    """Render GitHub-style task items (``- [x] done``) with ☐/◧/☑ glyphs.

    Working on the parsed tree (not the source) leaves ``[x]`` inside code blocks alone.
    """

    def run(self, root: etree.Element) -> None:
        for item in list(root.iter("li")):
            holder = item
            if not item.text and len(item) and item[0].tag == "p":  # loose lists wrap in <p>
                holder = item[0]
            match = _TASK.match(holder.text or "")
            if match is None:
                continue
            state, glyph = _TASK_STATES[match.group(1)]
            mark = etree.Element("span", {"class": "tf-task-mark"})
            mark.text = glyph
            mark.tail = " " + (holder.text or "")[match.end() :]
            holder.text = None
            holder.insert(0, mark)
            item.set("class", f"tf-task tf-task-{state}")


_LIST_ITEM = re.compile(r" {0,3}(?:[-*+]|1[.)])[ \t]+\S")
_LIST_CONTINUES = re.compile(r" {0,3}(?:[-*+]|\d+[.)])[ \t]+\S|[ \t]")


class _ListsAfterParagraphs(Preprocessor):
    """Let a list start right under a paragraph line, as models write them (and CommonMark
    reads them); Python-Markdown would otherwise need a blank line and render one paragraph.

    Runs after fenced code became placeholders, so code is never touched. As in CommonMark,
    only a bullet or an ordered list starting at 1 may interrupt a paragraph.
    """

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        in_list = False
        for line in lines:
            if not line.strip():
                in_list = False
            elif _LIST_ITEM.match(line) and out and out[-1].strip() and not in_list:
                out.append("")
                in_list = True
            elif not _LIST_CONTINUES.match(line):
                in_list = in_list and bool(out and out[-1].strip())
            else:
                in_list = True
            out.append(line)
        return out


class _TurnfoldMarkdown(Extension):
    """Raw HTML off (it shows as text), remote images off, task glyphs on, lists that follow a
    paragraph line."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # After fenced code (25) hid code blocks, before block parsing.
        md.preprocessors.register(_ListsAfterParagraphs(md), "tf_lists", 20)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        # After inline parsing (20) creates images and list text, before unescaping (0).
        md.treeprocessors.register(_ImagesWithoutRemoteLoads(md), "tf_images", 15)
        md.treeprocessors.register(_TaskListGlyphs(md), "tf_tasks", 14)


def new_converter() -> markdown.Markdown:
    """A converter with turnfold's extensions (building one costs more than a conversion).

    The extensions are given as instances, not by name: a name is looked up among the entry
    points of every installed distribution first (importlib.metadata), 40 ms in an environment
    of a few hundred packages, and another package registering the same name would win."""
    from markdown.extensions.codehilite import CodeHiliteExtension
    from markdown.extensions.fenced_code import FencedCodeExtension
    from markdown.extensions.sane_lists import SaneListExtension
    from markdown.extensions.tables import TableExtension

    codehilite = CodeHiliteExtension(
        css_class="tf-code",
        guess_lang=False,  # guessing is slow and unstable; unlabelled code stays plain
        linenums=False,
        noclasses=False,  # classes, styled by one stylesheet that follows the theme
        classprefix="tf-",
    )
    tables = TableExtension(use_align_attribute=True)  # align="left", not style="text-align..."
    return markdown.Markdown(
        extensions=[FencedCodeExtension(), codehilite, tables, SaneListExtension(),
                    _TurnfoldMarkdown()],
    )  # fmt: skip
