"""Search in what a view shows (spec P-11): a pure function of the view model.

Only the view is searched, so reasoning hidden by ``show_thinking`` is never found, and a hit
comes with the keys that must open to show it (:func:`~turnfold.render.viewmodel.ancestor_path`),
nothing more. Generated titles and counts are not transcript text and are left out. What a view
capped (a long output or message, its rest one click away: ``all_label``) is searched whole when
the caller can give the whole text: the reader can see it, so a search must find it.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Collection, Iterator, Mapping
from itertools import chain
from typing import Any

from turnfold.i18n import translate
from turnfold.render.text import html_to_text
from turnfold.render.viewmodel import ancestor_path, iter_nodes

#: At most this many hits are reported (and opened) per query.
MAX_SEARCH_HITS = 200
#: The longest query a search takes, in characters (code points, as ``len`` and both search
#: boxes count them: js/src/query.js), in a transcript (P-11) and across runs (C-6): room
#: for a pasted prompt or a screen of output, far past anything typed. Longer is a paste gone
#: wrong, refused at once: a regular expression compiles in memory about a hundred times the
#: query's length (10 MB of query took 900 MB).
MAX_QUERY_LENGTH = 4000


class QueryTooLong(ValueError):
    """A query longer than :data:`MAX_QUERY_LENGTH`."""

    @staticmethod
    def said(locale: str) -> str:
        """What a search box says of such a query, in the reader's language."""
        return translate("search.too_long", locale, limit=f"{MAX_QUERY_LENGTH:,}")


def search_query(query: str, *, regex: bool = False) -> str:
    """What a search looks for: ``query`` without the spaces around it, which a reader never
    means (a space typed before the word, a pasted line's end) and no search box shows; a
    regular expression is taken as written (``\\s`` says what its spaces mean).

    >>> search_query("  calc.py\\n")
    'calc.py'
    """
    text = query if regex else query.strip()
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryTooLong(
            f"a search query is at most {MAX_QUERY_LENGTH:,} characters; this one has {len(text):,}"
        )
    return text


def searchable_text(node: Mapping[str, Any]) -> Iterator[str]:
    """The transcript text a node shows: what a reader would expect a search to find."""
    kind = node.get("kind")
    if kind == "tool":
        for field in ("name", "description", "args"):
            if node.get(field):
                yield html.unescape(str(node[field]))
        result = node.get("result") or {}
        # The rest of a long output goes on from its first part, often mid-line: one text, so
        # a query across the cut is found (the first part keeps the line end it may stop at).
        output = str(result.get("text") or "")
        if result.get("more_html"):
            output += html_to_text(str(result["more_html"]))
        if output:
            yield output
        line = (node.get("subagent") or {}).get("line")
        if line:
            yield html.unescape(str(line))
        return
    if kind == "user" and node.get("command"):
        yield html.unescape(str(node["command"]))
    if kind == "summary":
        yield str(node.get("text") or "")
    # A long message's rest (``more_html``) goes on from its first part, often mid-line: the
    # fragments are joined before their text is read, so a query across the cut is found and a
    # line break at the cut still parts two words.
    shown = str(node.get("html") or "") + str(node.get("more_html") or "")
    if shown:
        yield html_to_text(shown)
    if node.get("summary_html"):
        yield html_to_text(str(node["summary_html"]))
    for option in node.get("options") or []:
        yield html.unescape(str(option))


def _capped(node: Mapping[str, Any]) -> bool:
    """Whether the view holds only the first part of the node's text (its rest is fetched)."""
    if node.get("kind") == "tool":
        return bool((node.get("result") or {}).get("all_label"))
    return bool(node.get("all_label"))


def search_view(
    view: Mapping[str, Any],
    query: str,
    *,
    limit: int = MAX_SEARCH_HITS,
    skip: Collection[str] = (),
    whole: Callable[[str], str] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Nodes whose text contains ``query`` (case-insensitive), with the keys that reveal each.

    Returns ``([{"key", "path"}, …], total)``: at most ``limit`` hits in reading order, and how
    many there were in all. ``path`` is :func:`ancestor_path` of the hit: only what must open.
    Top-level nodes keyed in ``skip`` (a widget's own footer) are not searched. ``whole(key)``
    gives the whole text of a node the view capped, which is searched too. A query is taken
    as :func:`search_query` takes it (:class:`QueryTooLong` past :data:`MAX_QUERY_LENGTH`).
    """
    needle = search_query(query).casefold()
    if not needle:
        return [], 0
    hits: list[dict[str, Any]] = []
    total = 0
    for top in view.get("nodes", []):
        if top.get("key") in skip:
            continue
        # Paths are looked up inside the hit's own top-level node: O(size of its turn) each.
        scope = {"nodes": [top]}
        for node in iter_nodes(scope):
            texts = searchable_text(node)
            if whole is not None and _capped(node):
                texts = chain(texts, (whole(str(node["key"])),))
            if not any(needle in text.casefold() for text in texts):
                continue
            total += 1
            if len(hits) < limit:
                key = str(node["key"])
                hits.append({"key": key, "path": ancestor_path(scope, key) or []})
    return hits, total


__all__ = [
    "MAX_QUERY_LENGTH", "MAX_SEARCH_HITS", "QueryTooLong", "search_query", "search_view",
    "searchable_text",
]  # fmt: skip
