"""Deep links (spec B-2): the ``id`` of each turn and tool call in a static page, and back.

Every static page gives the sections of its top-level turns ``id="turn-<n>"`` (``n`` counts
the turns from 1, so a turn keeps its number as a session grows) and every tool row
``id="call-<key>"`` (its view-model key, sub-agents' calls included). A link to either opens the
``<details>`` around it (the page's own script, :mod:`turnfold.render.scripts`, or the browser
itself), and :meth:`turnfold.TranscriptWidget.reveal` takes the same anchors, so a link copied
from a page opens the same place in the notebook.

A call's anchor is its key, never the source's ``call_id``: a source may give two calls one id
(Inspect reuses its ids in each attempt of a retried sample), and a transcript never gives two
entries one (:meth:`turnfold.model.Transcript.append` suffixes a repeated one, ``~2``), so every
link (timeline bars, search hits, ``reveal``) lands on the one call it names.

>>> call_anchor("toolu_1/toolu_7"), turn_anchor(3)
('call-toolu_1/toolu_7', 'turn-3')
>>> view = {"nodes": [{"kind": "user", "key": "u1"}, {"kind": "turn", "key": "turn:e0"},
...                   {"kind": "turn", "key": "turn:e5"}]}
>>> key_of_anchor(view, "#turn-2"), key_of_anchor(view, "call-e7"), key_of_anchor(view, "#x")
('turn:e5', 'e7', None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CALL", "TURN", "call_anchor", "key_of_anchor", "turn_anchor"]

#: What an anchor starts with: a tool call's (then its key), a turn's (then its number).
CALL = "call-"
TURN = "turn-"


def call_anchor(key: str) -> str:
    """The ``id`` of the row of the tool call ``key``."""
    return CALL + key


def turn_anchor(number: int) -> str:
    """The ``id`` of the ``number``-th top-level turn (1-based)."""
    return f"{TURN}{number}"


def key_of_anchor(view: Mapping[str, Any], anchor: str) -> str | None:
    """The key of the node an anchor (``#turn-3``, ``call-<key>``, with or without ``#``)
    names in ``view``; None when it names none."""
    name = anchor.removeprefix("#")
    if name.startswith(CALL) and len(name) > len(CALL):
        return name[len(CALL) :]
    number = name[len(TURN) :] if name.startswith(TURN) else ""
    if not number.isdigit() or int(number) < 1:
        return None
    turns = (node for node in view["nodes"] if node["kind"] == "turn")
    for count, node in enumerate(turns, start=1):
        if count == int(number):
            return str(node["key"])
    return None
