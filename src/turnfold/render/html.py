"""Static HTML for a view model: ``<details>`` folds that work with no kernel and no script (W-4).

:func:`render_html` draws the tree of :func:`turnfold.render.viewmodel.build_view_model` as
self-contained HTML: inline CSS, nothing loaded from anywhere. Every disclosure is
a native ``<details>``/``<summary>``, so folding works on GitHub, nbviewer, in nbconvert exports
and in the notebook's ``text/html`` output alike; each starts open or closed as the view model's
default ``open`` flag says (P-8).

The renderer only draws. It never recomputes a summary, a partition, a title or a fold default
(W-1): if this page and the notebook view disagree, the bug is here. Strings ending in ``html``
are sanitized fragments and are inserted as they are; every other string is plain text and is
escaped here, except the fields the view model documents as escaped already (tool names, call
ids, descriptions, arguments, user text, sub-agent lines, options, warnings), which are inserted
as they are so nothing is escaped twice.

The output is deterministic (W-4): no ids from counters, no clock, no hash ordering. Elements
carry ``data-key`` with the node's stable key, which tests and readers can rely on, and deep
links' anchors (B-2, :mod:`turnfold.render.anchors`): each top-level turn ``id="turn-<n>"``,
each tool row ``id="call-<key>"``. A standalone page runs one script of its own, which opens
the folds around the anchor a link names (:mod:`turnfold.render.scripts`).

>>> page = render_html({"locale": "en", "notice": None, "nodes": []}, title="<t>")
>>> "<title>&lt;t&gt;</title>" in page and page.count("<script") == 1  # its deep links'
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache, lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from turnfold.i18n import translate
from turnfold.render.anchors import call_anchor, turn_anchor
from turnfold.render.content import content_css, escape
from turnfold.render.scripts import policy, script_tag

if TYPE_CHECKING:  # the view model's schema, for types only (issue 19: not imported by a page)
    from turnfold.render.nodes import (
        AnswerNode,
        AnyNode,
        BatchNode,
        ChildNode,
        CommandNode,
        CompactionNode,
        GroupNode,
        NoticeNode,
        OutcomeNode,
        OutsideNode,
        ProgressNode,
        ResultView,
        SessionNode,
        SummaryNode,
        SystemNode,
        ThinkingIndicatorNode,
        ThinkingNode,
        TimelineNode,
        TimelineTurn,
        ToolNode,
        TopNode,
        TurnHeader,
        TurnNode,
        UserNode,
        View,
    )

#: The page's own script: its deep links open the folds around what they name (B-2).
DEEP_LINKS = "deeplinks.js"

__all__ = [
    "CSP",
    "DEEP_LINKS",
    "NO_SCRIPT",
    "html_frame",
    "nodes_encoded",
    "nodes_html",
    "notice_html",
    "page_end",
    "palette_css",
    "render_html",
    "session_html",
    "timeline_html",
    "turnfold_css",
    "wrap_html",
]

#: The page may load nothing but inline images and its own inline style, and run nothing but
#: its deep links' few lines, named by their hash (X-1, B-2): a browser refuses every other
#: script, even one a sanitizer bug let through. Computed when first read (:func:`_policy`):
#: the hash imports hashlib, which a page's head needs only once it is drawn (issue 19).
CSP: str
#: The policy of a page with no script (a comparison's: its folds are not linked, B-3).
NO_SCRIPT = policy([])


@cache
def _policy() -> str:
    """:data:`CSP`."""
    return policy([DEEP_LINKS])


if not TYPE_CHECKING:  # mypy reads CSP as declared above

    def __getattr__(name: str) -> str:
        if name == "CSP":
            return _policy()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _text(value: object) -> str:
    """Plain text from the view model, escaped for HTML content and quoted attributes.

    :func:`~turnfold.render.content.escape` also makes control and bidi characters visible:
    a fast-model label or an entry id is as untrusted as any tool output (X-1).
    """
    return escape(str(value))


def _key(node: AnyNode) -> str:
    return f' data-key="{_text(node["key"])}"'


def _rejected(
    node: AnswerNode | ProgressNode | ThinkingNode | SummaryNode | ToolNode,
) -> tuple[str, str]:
    """The class and the label of a rejected entry's node (``rejected_label``), else two
    empty strings: drawn beside it, the node muted."""
    label = node.get("rejected_label")
    if not label:
        return "", ""
    return " tf-rejected", f'<span class="tf-rlabel">{_text(label)}</span>'


def _link(key: str) -> str:
    """The ``href`` of a link to the row of the call ``key``, escaped for an attribute."""
    return _text("#" + quote(call_anchor(key), safe="/:@!$&'()*+,;=-._~"))


# --- the stylesheet (P-12, W-3) ------------------------------------------------------------------
#
# Colours are CSS variables that follow JupyterLab's theme variables (``--jp-*``) where they
# exist and fall back to a GitHub-like palette elsewhere. The notebook fragment keeps the light
# fallbacks unless a host says it is dark (JupyterLab's dark themes define the ``--jp-*`` values
# themselves; VS Code marks its body ``vscode-dark``): a page of unknown colour such as nbviewer
# must not get light text because the reader's system happens to be dark. The standalone page
# owns its background, so there the system preference decides.

#: U-4: the colour of each tool category (F-1) on the timeline, for light and dark themes: one
#: palette for the static page and the widget (:func:`timeline_css`).
CATEGORY_COLOURS: dict[str, dict[str, str]] = {
    "light": {"read": "#0969da", "search": "#8250df", "list": "#1b7c83", "edit": "#9a6700",
              "write": "#1a7f37", "command": "#bc4c00", "agent": "#bf3989", "other": "#6e7781"},
    "dark": {"read": "#4493f8", "search": "#a371f7", "list": "#39c5cf", "edit": "#d29922",
             "write": "#3fb950", "command": "#f0883e", "agent": "#db61a2", "other": "#8b949e"},
}  # fmt: skip

_LIGHT: dict[str, str] = {
    "--tf-fg": "var(--jp-ui-font-color1, #1f2328)",
    "--tf-fg-strong": "var(--jp-ui-font-color0, #000000)",
    "--tf-dim": "var(--jp-ui-font-color2, #59636e)",
    "--tf-faint": "var(--jp-ui-font-color3, #818b98)",
    "--tf-bg": "var(--jp-layout-color0, #ffffff)",
    "--tf-bg-soft": "var(--jp-layout-color2, #f6f8fa)",
    "--tf-border": "var(--jp-border-color2, #d1d9e0)",
    "--tf-rail": "var(--jp-border-color1, #9198a1)",
    "--tf-accent": "var(--jp-brand-color1, #0969da)",
    "--tf-error": "var(--jp-error-color1, #d1242f)",
    "--tf-warn": "var(--jp-warn-color1, #9a6700)",
    "--tf-ok": "var(--jp-success-color1, #1a7f37)",
    "--tf-shine": "var(--jp-ui-font-color0, #000000)",
    **{f"--tf-cat-{name}": colour for name, colour in CATEGORY_COLOURS["light"].items()},
}
_DARK: dict[str, str] = {
    "--tf-fg": "var(--jp-ui-font-color1, #e6edf3)",
    "--tf-fg-strong": "var(--jp-ui-font-color0, #ffffff)",
    "--tf-dim": "var(--jp-ui-font-color2, #9198a1)",
    "--tf-faint": "var(--jp-ui-font-color3, #6e7681)",
    "--tf-bg": "var(--jp-layout-color0, #0d1117)",
    # layout-color1, not 2: JupyterLab Dark's color2 (#424242) is so light that coloured
    # output on it read at 2:1 (red).
    "--tf-bg-soft": "var(--jp-layout-color1, #161b22)",
    "--tf-border": "var(--jp-border-color2, #3d444d)",
    "--tf-rail": "var(--jp-border-color1, #656c76)",
    "--tf-accent": "var(--jp-brand-color1, #4493f8)",
    "--tf-error": "var(--jp-error-color1, #f85149)",
    "--tf-warn": "var(--jp-warn-color1, #d29922)",
    "--tf-ok": "var(--jp-success-color1, #3fb950)",
    "--tf-shine": "var(--jp-ui-font-color0, #ffffff)",
    **{f"--tf-cat-{name}": colour for name, colour in CATEGORY_COLOURS["dark"].items()},
}
#: Hosts that announce a dark theme on an ancestor of the output (marimo: ``.dark`` on its body
#: and inside each anywidget's shadow root).
_DARK_HOSTS = ('[data-jp-theme-light="false"]', ".vscode-dark", ".dark", ".tf-dark")

_RULES = """\
.turnfold {
  color: var(--tf-fg);
  font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); line-height: 1.5; overflow-wrap: anywhere;
}
.turnfold details > summary { list-style: none; cursor: pointer; }
.turnfold details > summary::-webkit-details-marker { display: none; }
.turnfold summary:focus-visible { outline: 2px solid var(--tf-accent); outline-offset: 1px; }
.turnfold .tf-chev { flex: none; color: var(--tf-faint); font-size: 0.8em; }
.turnfold .tf-chev::before { content: "\\25B8"; }
.turnfold details[open] > summary > .tf-chev::before { content: "\\25BE"; }
.turnfold .tf-row { display: flex; align-items: baseline; gap: 6px; min-width: 0; padding: 1px 0; }
.turnfold summary.tf-row:hover, .turnfold summary.tf-row:hover .tf-chev,
.turnfold summary.tf-head:hover, .turnfold summary.tf-head:hover .tf-chev {
  color: var(--tf-fg-strong);
}
.turnfold .tf-clip { min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.turnfold .tf-fixed { flex: none; }
.turnfold .tf-dim, .turnfold .tf-sep { color: var(--tf-dim); }
.turnfold .tf-sep { flex: none; }
.turnfold .tf-md > :first-child { margin-top: 0; }
.turnfold .tf-md > :last-child { margin-bottom: 0; }
.turnfold .tf-md p { margin: 0.3em 0; }
.turnfold .tf-output { background: var(--tf-bg-soft); border-radius: 4px; }
.turnfold .tf-user { margin: 10px 0 4px; }
.turnfold .tf-ulabel { color: var(--tf-dim); font-size: 0.9em; }
.turnfold .tf-utext {
  white-space: pre-wrap; background: var(--tf-bg-soft); border-radius: 6px; padding: 6px 10px;
}
.turnfold .tf-cmd { font-family: var(--jp-code-font-family, ui-monospace, Menlo, monospace); }
.turnfold .tf-system { white-space: pre-wrap; color: var(--tf-dim); margin: 4px 0; }
.turnfold .tf-system.tf-warning { color: var(--tf-warn); }
.turnfold .tf-system.tf-error { color: var(--tf-error); }
.turnfold .tf-divider {
  display: flex; align-items: center; gap: 8px; color: var(--tf-dim); margin: 10px 0;
}
.turnfold .tf-divider::before, .turnfold .tf-divider::after {
  content: ""; flex: 1; border-top: 1px dashed var(--tf-border);
}
.turnfold .tf-turn { margin: 4px 0 10px; }
.turnfold .tf-head {
  display: flex; align-items: baseline; gap: 6px; box-sizing: border-box; width: 100%;
  padding: 3px 0; border-bottom: 1px solid var(--tf-border); color: var(--tf-dim);
}
.turnfold .tf-failed > .tf-process > .tf-head .tf-status,
.turnfold .tf-failed > .tf-head .tf-status { color: var(--tf-error); }
.turnfold .tf-stopped > .tf-process > .tf-head .tf-status,
.turnfold .tf-stopped > .tf-head .tf-status { color: var(--tf-warn); }
.turnfold .tf-running > .tf-process > .tf-head .tf-status { color: var(--tf-accent); }
.turnfold .tf-pbody { padding: 4px 0 2px; }
.turnfold .tf-pbody :is(h1, h2, h3, h4, h5, h6) { font-size: 1em; line-height: 1.4;
  margin: 0.6em 0 0.2em; }
.turnfold .tf-pbody h1 { font-size: 1.15em; }
.turnfold .tf-pbody h2 { font-size: 1.1em; }
.turnfold .tf-pbody h3 { font-size: 1.05em; }
.turnfold .tf-group > .tf-body { position: relative; padding-left: 12px; }
.turnfold .tf-group > .tf-body::before {
  content: ""; position: absolute; left: 4px; top: 0; bottom: 0; width: 2px;
  border-radius: 1px; background: transparent; pointer-events: none;
}
.turnfold .tf-group:hover > .tf-body::before,
.turnfold .tf-group:focus-within > .tf-body::before { background: var(--tf-rail); }
.turnfold .tf-name { font-weight: bold; }
.turnfold .tf-count { flex: none; color: var(--tf-dim); }
.turnfold .tf-st { flex: none; color: var(--tf-dim); font-size: 0.9em; }
.turnfold .tf-s-error > .tf-tool-head .tf-st,
.turnfold .tf-s-error > details > .tf-tool-head .tf-st { color: var(--tf-error); }
.turnfold .tf-s-confirming .tf-st { color: var(--tf-warn); }
.turnfold .tf-struck .tf-tool-head .tf-name, .turnfold .tf-struck .tf-tool-head .tf-desc {
  text-decoration: line-through;
}
.turnfold .tf-summary > summary .tf-stext { font-weight: bold; }
.turnfold .tf-summary > .tf-body { padding-left: 12px; }
.turnfold .tf-tbody { padding: 0 0 4px 12px; }
.turnfold .tf-result, .turnfold .tf-args { margin: 2px 0 4px; }
.turnfold .tf-flabel { color: var(--tf-dim); font-size: 0.9em; }
.turnfold .tf-more > summary { color: var(--tf-dim); font-size: 0.9em; }
.turnfold .tf-note { color: var(--tf-dim); font-style: italic; }
.turnfold .tf-agent-line { color: var(--tf-dim); }
.turnfold .tf-subagent {
  margin: 2px 0 4px; padding-left: 10px; border-left: 1px solid var(--tf-border);
}
.turnfold .tf-thinking .tf-tbody { color: var(--tf-dim); }
.turnfold .tf-shimmer {
  color: var(--tf-dim);
  background: linear-gradient(90deg, var(--tf-dim) 0%, var(--tf-dim) 35%, var(--tf-shine) 50%,
    var(--tf-dim) 65%, var(--tf-dim) 100%);
  background-size: 250% 100%; -webkit-background-clip: text; background-clip: text;
  -webkit-text-fill-color: transparent; animation: tf-sweep 1.2s linear infinite;
}
@keyframes tf-sweep { from { background-position: 100% 0; } to { background-position: 0 0; } }
@media (prefers-reduced-motion: reduce) {
  .turnfold .tf-shimmer {
    animation: none; background: none; -webkit-text-fill-color: currentColor;
  }
}
.turnfold .tf-outside { margin: 4px 0; padding: 4px 10px; border-radius: 6px; }
.turnfold .tf-error-box { white-space: pre-wrap; border-left: 3px solid var(--tf-error); }
.turnfold .tf-abort { white-space: pre-wrap; color: var(--tf-warn); padding-left: 0; }
.turnfold .tf-pending { border: 1px solid var(--tf-warn); }
.turnfold .tf-plabel { color: var(--tf-warn); font-weight: bold; }
.turnfold .tf-ptext { white-space: pre-wrap; }
.turnfold .tf-options { margin: 4px 0 0; padding-left: 1.4em; }
.turnfold .tf-answer { margin: 6px 0 2px; }
.turnfold .tf-tentative { opacity: 0.85; }
.turnfold .tf-rejected { color: var(--tf-dim); }
.turnfold .tf-rlabel {
  flex: none; display: inline-block; font-size: 0.85em; line-height: 1.3; color: var(--tf-warn);
  border: 1px solid currentColor; border-radius: 3px; padding: 0 4px;
}
.turnfold .tf-session {
  display: flex; flex-wrap: wrap; gap: 0 6px; color: var(--tf-dim); margin: 0 0 6px;
  font-size: 12px;
}
.turnfold .tf-session .tf-sp-agent { color: var(--tf-fg); font-weight: 600; }
.turnfold .tf-outcome { color: var(--tf-dim); margin: 0 0 4px; }
.turnfold .tf-outcome[data-status="fail"], .turnfold .tf-outcome[data-status="error"] {
  color: var(--tf-error);
}
.turnfold .tf-outcome[data-status="incomplete"] { color: var(--tf-warn); }
.turnfold .tf-notice > summary { color: var(--tf-dim); }
.turnfold .tf-notice ul { margin: 2px 0 6px; color: var(--tf-dim); }
"""

# U-4: the timeline. The widget draws it as SVG in seconds of the axis stretched to the width
# (``preserveAspectRatio="none"``), strokes keeping their pixel width (``non-scaling-stroke``),
# and widens a shape too short to see itself (``MIN_BAR_PX`` in ``js/src/timeline.js``). A page
# has no script: there each shape is a box of the plot (``.tf-tl-plot``) placed by the same
# axis as the labels above it, ``--x`` and ``--w`` of ``--tf-span``, and CSS alone keeps a turn,
# a call and its failure mark at least :data:`MIN_SHAPE_PX` wide from their start, or ending
# at the axis's end where that would pass it (so a bar never hangs outside the picture). What
# the scale says is unchanged: a shape is only ever drawn wider, never moved along the axis
# except at its end.

#: The classes of a timeline's gap, its box and its label: an idle gap, or where the clock
#: changed (``TimelineGap.clock``: ``tf-tl-clock``, drawn apart, as no time passed there), as
#: the widget's ``gapClasses`` (``js/src/timeline.js``) names them.
_GAP_SHAPE = {False: "tf-tl-gap", True: "tf-tl-gap tf-tl-clock"}
_GAP_LABEL = {False: "tf-tl-idle", True: "tf-tl-idle tf-tl-clock"}
#: The least width, in pixels, a page draws a turn, a call or a failure mark with: as the widget
#: does (``MIN_BAR_PX``), a call of a few milliseconds in an hour's session can be seen and
#: clicked.
MIN_SHAPE_PX = 4
#: A page's plot: every shape from its start, at least :data:`MIN_SHAPE_PX` wide, and never past
#: the axis's end (``left`` is the lesser of its place and the end less its width).
_PLOT_RULES = f"""\
.turnfold .tf-tl-plot {{ position: relative; height: calc(var(--h) * 1px); }}
.turnfold .tf-tl-plot > * {{
  --tf-tl-left: calc((var(--x) - var(--tf-x0)) * 100% / var(--tf-span));
  --tf-tl-width: max(calc(var(--w) * 100% / var(--tf-span)), {MIN_SHAPE_PX}px);
  position: absolute; display: block; box-sizing: border-box; margin: 0; padding: 0;
  left: min(var(--tf-tl-left), calc(100% - var(--tf-tl-width))); width: var(--tf-tl-width);
  top: calc(var(--y) * 1px); height: calc(var(--h) * 1px);
}}
.turnfold .tf-tl-plot > .tf-tl-band {{
  background: var(--tf-bg-soft); border: 1px solid var(--tf-border);
}}
/* An idle gap is long by definition: drawn as it is. */
.turnfold .tf-tl-plot > .tf-tl-gap {{
  --tf-tl-width: calc(var(--w) * 100% / var(--tf-span)); border: 1px dashed var(--tf-faint);
}}
/* Where the clock changed: no time passed there, so no idle gap's look: a solid break in the
   warning colour of the theme, tinted (its own box under it, so the tint is the colour's). */
.turnfold .tf-tl-plot > .tf-tl-clock {{ border: 1px solid var(--tf-warn); }}
.turnfold .tf-tl-plot > .tf-tl-clock::before {{
  content: ""; position: absolute; inset: 0; background: var(--tf-warn); opacity: 0.15;
}}
.turnfold .tf-tl-plot > .tf-tl-bar {{ background: var(--tf-c); border-radius: 1px; }}
.turnfold .tf-tl-plot > .tf-tl-mark {{ background: var(--tf-error); }}
/* A call's link fills its bar, which holds the place: a link has no style of its own (marimo). */
.turnfold .tf-tl-plot > .tf-tl-bar > a {{
  position: absolute; inset: 0; display: block; border-radius: inherit;
}}
.turnfold .tf-tl-plot > .tf-tl-bar > a:hover,
.turnfold .tf-tl-plot > .tf-tl-bar > a:focus-visible {{
  outline: 2px solid var(--tf-fg-strong); outline-offset: 0;
}}
"""
_TIMELINE_RULES = (
    """\
.turnfold .tf-timeline > summary, .turnfold .tf-timeline > .tf-toggle { color: var(--tf-dim); }
.turnfold .tf-tl { padding: 2px 0 6px; }
.turnfold .tf-tl-labels {
  position: relative; height: 1.4em; font-size: 11px; color: var(--tf-dim);
}
.turnfold .tf-tl-labels > span {
  position: absolute; left: calc((var(--x) - var(--tf-x0)) * 100% / var(--tf-span));
  width: calc(var(--w) * 100% / var(--tf-span)); overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; box-sizing: border-box; padding-left: 2px;
}
/* An idle gap's label ends where its gap does, clear of the turn's number at the left (a gap
   can start where its turn does) and of the next turn's number at the right. */
.turnfold .tf-tl-labels > .tf-tl-idle { text-align: right; padding: 0 4px 0 1.8em; }
.turnfold .tf-tl-labels > .tf-tl-clock { color: var(--tf-warn); }
.turnfold .tf-tl-svg { display: block; width: 100%; overflow: visible; }
.turnfold .tf-tl-svg rect { vector-effect: non-scaling-stroke; }
.turnfold .tf-tl-band { fill: var(--tf-bg-soft); stroke: var(--tf-border); stroke-width: 1px; }
.turnfold .tf-tl-gap { fill: none; stroke: var(--tf-faint); stroke-width: 1px;
  stroke-dasharray: 2 2; }
.turnfold .tf-tl-gap.tf-tl-clock { fill: var(--tf-warn); fill-opacity: 0.15;
  stroke: var(--tf-warn); stroke-dasharray: none; }
.turnfold .tf-tl-bar { fill: var(--tf-c); stroke: var(--tf-c); stroke-width: 2px; }
.turnfold .tf-tl-mark { fill: var(--tf-error); stroke: var(--tf-error); stroke-width: 2px; }
.turnfold a:focus-visible > .tf-tl-bar, .turnfold .tf-tl-hit:focus-visible > .tf-tl-bar,
.turnfold a:hover > .tf-tl-bar, .turnfold .tf-tl-hit:hover > .tf-tl-bar {
  stroke: var(--tf-fg-strong);
}
.turnfold .tf-tl-hit { cursor: pointer; outline: none; }
.turnfold .tf-tl-back { font: inherit; font-size: 0.9em; color: var(--tf-accent); cursor: pointer;
  background: none; border: 0; padding: 0; margin: 0 0 2px; }
"""
    + _PLOT_RULES
    + "\n".join(
        f".turnfold .tf-c-{name} {{ --tf-c: var(--tf-cat-{name}); }}"
        for name in CATEGORY_COLOURS["light"]
    )
)

_PAGE_RULES = """\
html { color-scheme: light dark; }
body.tf-page { margin: 0; background: var(--tf-bg); }
body.tf-page .turnfold { max-width: 900px; margin: 0 auto; padding: 16px 20px 40px; }
body.tf-page h1 { font-size: 1.25em; margin: 0 0 8px; }
"""


def _variables(selector: str, values: dict[str, str]) -> str:
    return f"{selector} {{ {' '.join(f'{name}: {value};' for name, value in values.items())} }}"


def turnfold_css(*, standalone: bool) -> str:
    """The stylesheet: turnfold's own rules plus :func:`content_css` (code, diffs, ANSI).

    Every rule of turnfold's own is scoped under ``.turnfold`` (or ``body.tf-page`` for the
    page), so the notebook fragment cannot restyle the notebook around it. The fold rail of a
    group (P-12) is drawn by CSS alone and is visual only: closing a group by clicking its rail
    needs script, which static HTML does not have; the group's title closes it.
    """
    parts = [palette_css(standalone=standalone)]
    if standalone:
        parts.append(_PAGE_RULES)
    parts.append(_RULES)
    parts.append(_TIMELINE_RULES)
    parts.append(content_css())
    return "\n".join(parts)


def palette_css(*, standalone: bool) -> str:
    """The colours every rendering draws with, as CSS variables under ``.turnfold``: light, dark
    where a host says so, and on a standalone page (``body.tf-page``) as the system prefers."""
    parts = [
        _variables(".turnfold", _LIGHT),
        _variables(", ".join(f"{host} .turnfold" for host in _DARK_HOSTS), _DARK),
    ]
    if standalone:
        dark = _variables("body.tf-page, body.tf-page .turnfold", _DARK)
        parts.append(_variables("body.tf-page", _LIGHT))
        parts.append(f"@media (prefers-color-scheme: dark) {{ {dark} }}")
    return "\n".join(parts)


def timeline_css() -> str:
    """The timeline's palette and rules, for the widget, whose own stylesheet has the rest."""
    dark_hosts = (*_DARK_HOSTS, ".vscode-high-contrast")
    light, dark = ({f"--tf-cat-{name}": colour for name, colour in CATEGORY_COLOURS[theme].items()}
                   for theme in ("light", "dark"))  # fmt: skip
    return "\n".join(
        (
            _variables(".turnfold", light),
            _variables(", ".join(f"{host} .turnfold" for host in dark_hosts), dark),
            _TIMELINE_RULES,
        )
    )


# --- drawing ------------------------------------------------------------------------------------

#: The chevron of a disclosure, drawn by CSS (▸/▾ after the last token, P-7), so copied text
#: holds no glyphs; and the separator between a title's parts.
_CHEVRON = '<span class="tf-chev" aria-hidden="true"></span>'
_SEP = '<span class="tf-sep">·</span>'


class _Renderer:
    """Appends the HTML of view-model nodes to one list; one method per node kind.

    Each block this renderer opens starts a new line, so the page source (and a golden file's
    diff) reads as one element per line; no such block is ever inside a ``<pre>`` or a
    ``pre-wrap`` text, so the newlines change nothing on the page.

    A long session's page is hundreds of thousands of these pieces (Q-1), so the markup around
    each node is written as few strings as it can be, and fragments of content (a result's
    HTML, an answer) as parts of their own: they are copied once, by the final join.
    """

    def __init__(self, locale: str, first_turn: int | None = 1) -> None:
        self.locale = locale
        #: The number of the next top-level turn (its anchor, B-2; None: no turn has one), and
        #: how deep in sub-agents' transcripts the drawing is: their turns have no anchor.
        self.turn_number = first_turn
        self.depth = 0
        self.out: list[str] = []
        #: Where in :attr:`out` the long fragments of content are (see :func:`_utf8`).
        self.long: list[int] = []
        self._top: dict[str, Callable[[Any], None]] = {
            "user": self.user,
            "system": self.system,
            "compaction": self.compaction,
            "turn": self.turn,
        }
        self._child: dict[str, Callable[[Any], None]] = {
            "group": self.group,
            "thinking": self.thinking,
            "thinking-indicator": self.thinking_indicator,
            "progress": self.progress,
            "command": self.command,
            "batch": self.batch,
        }
        # Phrases every tool row may need, looked up once per renderer.
        self._arguments = _text(translate("tool.arguments", locale))

    # -- helpers

    def write(self, *parts: str) -> None:
        self.out.extend(parts)

    def fragment(self, html: str) -> None:
        """A fragment of content (an output, an answer): copied once, by the final join."""
        if len(html) >= _OWN_PART:
            self.long.append(len(self.out))
        self.out.append(html)

    # -- top level

    def notice(self, notice: NoticeNode) -> None:
        """The loader's warnings as one quiet, closed disclosure (L-4)."""
        self.out.append(
            f'\n<details class="tf-notice"{_key(notice)}><summary class="tf-row">'
            f'<span class="tf-clip">{_text(notice["text"])}</span>{_CHEVRON}</summary><ul>'
        )
        self.write(*(f"<li>{item}</li>" for item in notice["items"]))  # escaped
        self.out.append("</ul></details>")

    def top(self, node: TopNode) -> None:
        self._top[node["kind"]](node)

    def user(self, node: UserNode) -> None:
        command = node["command"]
        code = f'<code class="tf-cmd">{command}</code> ' if command else ""  # escaped
        self.out.append(
            f'\n<div class="tf-user"{_key(node)}>\n<div class="tf-ulabel">{_text(node["label"])}'
            f'</div>\n<div class="tf-utext">{code}'
        )
        self.fragment(node["html"])
        more = node.get("more_label")
        if more:  # a long message: the rest behind "Show the whole message", as an output's
            self.out.append(f'<details class="tf-more"><summary>{_escaped(more)}</summary>')
            self.fragment(node.get("more_html", ""))
            self.out.append("</details>")
        self.out.append("</div></div>")

    def system(self, node: SystemNode) -> None:
        level = _text(node["level"])
        self.out += (f'\n<div class="tf-system tf-{level}"{_key(node)}>', node["html"], "</div>")

    def compaction(self, node: CompactionNode) -> None:
        label = f"<span>{_text(node['text'])}</span>"
        summary = node["summary_html"]
        if not summary:
            self.out.append(f'\n<div class="tf-divider"{_key(node)}>{label}</div>')
            return
        self.out += (
            f'\n<details class="tf-compaction"{_key(node)}><summary class="tf-divider">{label}'
            f'{_CHEVRON}</summary>\n<div class="tf-body">',
            summary,
            "</div></details>",
        )

    # -- a turn (P-1, P-3, P-7)

    @staticmethod
    def turn_header(header: TurnHeader, *, foldable: bool) -> str:
        why = header.get("duration_title")  # no duration, and why (P-7: never a wrong one)
        title = f' title="{_text(why)}"' if why else ""
        parts = [f'<span class="tf-status"{title}>{_text(header["label"])}</span>']
        for part in (header["duration"], header["count"]):
            if part:
                parts.append(f'{_SEP}<span class="tf-fixed">{_text(part)}</span>')
        usage = header.get("usage")
        if usage:
            # U-2: tokens with no cost say why in full on hover, as the session header does.
            full = header.get("usage_title")
            title = f' title="{_text(full)}"' if full else ""
            parts.append(f'{_SEP}<span class="tf-fixed"{title}>{_text(usage)}</span>')
        if foldable:
            parts.append(_CHEVRON)  # P-7: the fold indicator right after the count
        return "".join(parts)

    def turn(self, node: TurnNode) -> None:
        out = self.out
        status = _text(node["status"])
        key = _key(node)
        if not self.depth and self.turn_number is not None:
            key += f' id="{turn_anchor(self.turn_number)}"'
            self.turn_number += 1
        process = node["process"]
        if process:
            header = self.turn_header(node["header"], foldable=True)
            out.append(
                f'\n<section class="tf-turn tf-{status}"{key}>\n<details class="tf-process"'
                f'{_key(process)}{" open" if process["open"] else ""}><summary class="tf-head">'
                f'{header}</summary>\n<div class="tf-pbody">'
            )
            if process.get("left_out"):  # an output over its size budget (render_html's budget)
                out.append(f'\n<div class="tf-note">{_text(self.t("turn.not_included"))}</div>')
            else:
                self.children(process["children"])
            out.append("</div></details>")
        else:
            out.append(
                f'\n<section class="tf-turn tf-{status}"{key}>\n<div class="tf-head">'
                f"{self.turn_header(node['header'], foldable=False)}</div>"
            )
        for surface in node["outside"]:
            self.outside(surface)
        answer = node["answer"]
        if answer:
            tentative = " tf-tentative" if answer["tentative"] else ""
            rejected, label = _rejected(answer)
            out.append(f'\n<div class="tf-answer{tentative}{rejected}"{_key(answer)}>{label}')
            self.fragment(answer["html"])
            self.omitted(answer)
            out.append("</div></section>")
        else:
            out.append("</section>")

    def outside(self, node: OutsideNode) -> None:
        """Errors, the stop marker and pending decisions, visible without opening (P-3)."""
        kind = node["kind"]
        if node["kind"] == "pending":
            self.write(f'\n<div class="tf-outside tf-pending"{_key(node)}>')
            self.write(f'\n<div class="tf-plabel">{_text(node["label"])}</div>')
            self.write(f'\n<div class="tf-ptext">{node["html"]}</div>')
            options = node["options"]
            if options:
                self.write('<ul class="tf-options">')
                self.write(*(f"<li>{option}</li>" for option in options))  # escaped
                self.write("</ul>")
            self.write("</div>")
            return
        css = "tf-error-box" if kind == "error" else "tf-abort"
        self.write(f'\n<div class="tf-outside {css}"{_key(node)}>{node["html"]}</div>')

    # -- the process (P-4 … P-9)

    def children(self, nodes: list[ChildNode]) -> None:
        child = self._child
        for node in nodes:
            child[node["kind"]](node)

    def group(self, node: GroupNode) -> None:
        # P-12: the title starts on the group's own left edge; its rows indent 12 px, and the
        # gutter holds the CSS-only fold rail.
        count = node["count"]
        counted = f'{_SEP}<span class="tf-count">{_text(count)}</span>' if count else ""
        self.out.append(
            f'\n<details class="tf-group"{_key(node)}{" open" if node["open"] else ""}>'
            f'<summary class="tf-row"><span class="tf-clip">{_text(node["title"])}</span>'
            f'{counted}{_CHEVRON}</summary>\n<div class="tf-body">'
        )
        self.children(node["children"])
        self.out.append("</div></details>")

    def thinking(self, node: ThinkingNode) -> None:
        """A reasoning row (P-9); withheld reasoning is labelled by its fragment, never empty."""
        shimmer = " tf-shimmer" if node["streaming"] else ""
        phrase = node["form_label"]
        withheld = ""
        if phrase:
            withheld = f'{_SEP}<span class="tf-clip tf-dim">{_text(phrase)}</span>'
        rejected, label = _rejected(node)
        self.out.append(
            f'\n<details class="tf-thinking{rejected}"{_key(node)}'
            f'{" open" if node["open"] else ""}><summary class="tf-row">'
            f'<span class="tf-tlabel{shimmer}">{_text(node["label"])}</span>{withheld}{label}'
            f'{_CHEVRON}</summary>\n<div class="tf-tbody">'
        )
        self.fragment(node["html"] or "")
        self.out.append("</div></details>")

    def thinking_indicator(self, node: ThinkingIndicatorNode) -> None:
        # P-9: a static label whose highlight sweeps by CSS; still under reduced motion.
        self.out.append(
            f'\n<div class="tf-row tf-indicator"{_key(node)}>'
            f'<span class="tf-shimmer">{_text(node["label"])}</span></div>'
        )

    def progress(self, node: ProgressNode) -> None:
        rejected, label = _rejected(node)
        self.out.append(f'\n<div class="tf-progress{rejected}"{_key(node)}>{label}')
        self.fragment(node["html"])
        self.omitted(node)
        self.out.append("</div>")

    def omitted(self, node: AnswerNode | ProgressNode) -> None:
        """What a message past ``content.PROSE_CHARS`` leaves out, and where it is (X-2)."""
        label = node.get("omitted_label")
        if label:
            self.out.append(f'\n<div class="tf-note tf-omitted">{_escaped(label)}</div>')

    def command(self, node: CommandNode) -> None:
        self.out.append(f'\n<div class="tf-command"{_key(node)}>')
        self.tool(node["tool"])
        self.out.append("</div>")

    def batch(self, node: BatchNode) -> None:
        out = self.out
        out.append(f'\n<div class="tf-batch"{_key(node)}>')
        for row in node["rows"]:
            if row["kind"] == "summary":
                self.summary_row(row)
            else:
                self.tool(row)
        memory, label = node["memory"], node["label"]
        if memory:  # F-11: badges, dim
            out.append(f'\n<div class="tf-row tf-dim tf-memory">{_text(memory)}</div>')
        if label:  # F-15: the fast model's label, dim, after the batch
            out.append(f'\n<div class="tf-row tf-dim tf-label">{_text(label)}</div>')
        out.append("</div>")

    def summary_row(self, node: SummaryNode) -> None:
        """The collapsible tools of a batch as one line that opens to its tools (F-10a)."""
        rejected, label = _rejected(node)
        self.out.append(
            f'\n<details class="tf-summary{rejected}"{_key(node)}'
            f'{" open" if node["open"] else ""}><summary class="tf-row">'
            f'<span class="tf-stext tf-clip">{_text(node["text"])}</span>{label}{_CHEVRON}'
            '</summary>\n<div class="tf-body">'
        )
        for tool in node["tools"]:
            self.tool(tool)
        self.out.append("</div></details>")

    # -- one tool (F-7, F-10, F-12, F-13, P-12)

    @staticmethod
    def tool_title(node: ToolNode) -> str:
        title = f'<span class="tf-name tf-fixed">{node["name"]}</span>'  # escaped, F-13
        subagent = node["subagent"]
        line = subagent["line"] if subagent else None
        description = node["description"]
        if line:  # F-7 stands in for the description: it names the task
            title += f'<span class="tf-agent-line tf-clip">{line}</span>'
        elif description:
            title += f'<span class="tf-desc tf-clip">{description}</span>'
        status = node["status_label"]
        if status is not None:
            title += f'<span class="tf-st">{_text(status)}</span>'
        scoring = node.get("scoring_label")
        if scoring:  # a scorer's call, not the agent's: labelled as a status is
            title += f'<span class="tf-st tf-scoring">{_text(scoring)}</span>'
        return title + _rejected(node)[1]

    def tool(self, node: ToolNode) -> None:
        """Title, a closed ``<details>`` for what is folded, and what is never folded beneath.

        An edit's diff is never folded, so it sits directly beneath the file title: one row
        level (P-12). Arguments and a folded result (F-12) wait behind the title.
        """
        out = self.out
        status = _text(node["status"])
        struck = " tf-struck" if node["struck"] else ""
        rejected = _rejected(node)[0]
        anchor = _text(call_anchor(node["key"]))
        head = f'\n<div class="tf-tool tf-s-{status}{struck}{rejected}"{_key(node)} id="{anchor}">'
        result, args = node["result"], node["args"]
        fold = node["fold"]
        no_output = fold["note"]
        subagent = node["subagent"] if fold["subagent"] else None
        if fold["args"] or fold["result"] or no_output or subagent:
            out.append(
                f'{head}\n<details class="tf-tool-d"{" open" if node["open"] else ""}>'
                f'<summary class="tf-row tf-tool-head">{self.tool_title(node)}{_CHEVRON}'
                '</summary>\n<div class="tf-tbody">'
            )
            if fold["args"] and args:
                out.append(self.arguments(args))
            if fold["result"] and result:
                self.result(result)
            if no_output:
                out.append(f'\n<div class="tf-note">{_text(no_output)}</div>')
            if subagent:  # the child transcript, nested in the row that spawned it
                out.append('\n<div class="tf-subagent">')
                self.depth += 1
                for child in subagent["nodes"]:
                    self.top(child)
                self.depth -= 1
                out.append("</div>")
            out.append("</div></details>")
        else:
            out.append(f'{head}\n<div class="tf-row tf-tool-head">{self.tool_title(node)}</div>')
        if args and node["show_args"]:
            out.append(self.arguments(args))
        if result is not None and not fold["result"]:
            self.result(result)
        out.append("</div>")

    def arguments(self, args: str) -> str:
        return (
            f'\n<div class="tf-args">\n<div class="tf-flabel">{self._arguments}</div>'
            f'<pre class="tf-output tf-json">{args}</pre></div>'  # escaped
        )

    def result(self, result: ResultView) -> None:
        """A capped result plus the rest behind "Show N more lines" (F-12: never dropped)."""
        out = self.out
        out.append('\n<div class="tf-result">')
        self.fragment(result["html"])
        more = result["more_label"]
        if more is not None:
            out.append(f'\n<details class="tf-more"><summary>{_escaped(more)}</summary>')
            self.fragment(result.get("more_html", ""))
            omitted = result["omitted_label"]
            if omitted:  # say exactly what the page leaves out, and where it is
                note = _escaped(omitted)
                out.append(f'\n<div class="tf-note tf-omitted">{note}</div></details>')
            else:
                out.append("</details>")
        for image in result["images"]:
            self.fragment(image)
        for note in result["notes_text"]:
            out.append(f'\n<div class="tf-note">{_text(note)}</div>')
        out.append("</div>")

    # -- catalog phrases

    def t(self, key: str) -> str:
        return translate(key, self.locale)


def nodes_html(nodes: list[TopNode], locale: str, first_turn: int | None = 1) -> str:
    """The HTML of some top-level nodes, in order: a piece of a page's body, whose first turn
    is the transcript's ``first_turn``-th (its anchor, B-2); with None, turns have no anchor
    (a comparison's sides, whose pairs are anchored instead)."""
    renderer = _Renderer(locale, first_turn)
    for node in nodes:
        renderer.top(node)
    return "".join(renderer.out)


def nodes_encoded(nodes: list[TopNode], locale: str, first_turn: int = 1) -> list[bytes]:
    """:func:`nodes_html` as UTF-8, in pieces to write one after the other (W-6)."""
    renderer = _Renderer(locale, first_turn)
    for node in nodes:
        renderer.top(node)
    return _utf8(renderer.out, renderer.long)


#: Parts at least this long (fragments of content: outputs, answers) are encoded on their own.
_OWN_PART = 1024


def _utf8(parts: list[str], long: list[int]) -> list[bytes]:
    """``"".join(parts).encode("utf-8")`` in pieces, each character copied once, and cheaper.

    One ``·`` makes a whole joined string non-ASCII, and encoding a non-ASCII string goes
    character by character where an ASCII one is copied as a block (five times faster). So each
    long part (at the indices ``long``, in order) is encoded on its own and the markup between
    them in runs: the outputs that are most of a page are ASCII and copied as blocks (Q-1).
    """
    encoded: list[bytes] = []
    start = 0
    for at in long:
        if start < at:
            encoded.append("".join(parts[start:at]).encode("utf-8"))
        encoded.append(parts[at].encode("utf-8"))
        start = at + 1
    if start < len(parts):
        encoded.append("".join(parts[start:]).encode("utf-8"))
    return encoded


@lru_cache(maxsize=1024)
def _escaped(phrase: str) -> str:
    """A count phrase, escaped: a long session's results ask for the same few thousand."""
    return _text(phrase)


def session_html(session: SessionNode | None) -> str:
    """U-3: the session header, one line above the turns; each fact a span whose ``title``
    holds its fuller form (the full model name, the exact time, the token breakdown)."""
    if not session:
        return ""
    spans = []
    for part in session["parts"]:
        title = f' title="{_text(part["title"])}"' if part["title"] else ""
        name = _text(part["name"])
        spans.append(f'<span class="tf-sp tf-sp-{name}"{title}>{_text(part["text"])}</span>')
    return f'<div class="tf-session" data-key="session">{_SEP.join(spans)}</div>\n'


def timeline_html(timeline: TimelineNode | None) -> str:
    """U-4: the timeline, a closed ``<details>`` under the session header, drawn with no script
    as boxes placed on the axis by CSS (:data:`_PLOT_RULES`): each call's bar links to its row
    (``#call-<key>``), which the browser opens its way to; a coarse timeline's turn links to the
    turn's first call."""
    if not timeline:
        return ""
    note = timeline["note"]
    noted = f'{_SEP}<span class="tf-dim">{_text(note)}</span>' if note else ""
    axis = f"--tf-x0:{timeline['origin']};--tf-span:{timeline['span']}"
    out = [
        f'<details class="tf-timeline" data-key="{_text(timeline["key"])}"'
        f'{" open" if timeline["open"] else ""}><summary class="tf-row">'
        f'<span class="tf-tl-title">{_text(timeline["title"])}</span>{noted}{_CHEVRON}</summary>'
        f'\n<div class="tf-body tf-tl" style="{axis}">\n<div class="tf-tl-labels">'
    ]
    for turn in timeline["turns"]:
        if turn["number"]:
            out.append(
                f'<span class="tf-tl-num" style="--x:{turn["x"]};--w:{turn["w"]}">'
                f"{_text(turn['number'])}</span>"
            )
        for gap in turn["gaps"]:
            label = _text(gap["label"])
            out.append(
                f'<span class="{_GAP_LABEL[gap["clock"]]}" style="--x:{gap["x"]};--w:{gap["w"]}" '
                f'title="{label}">{label}</span>'
            )
    height = timeline["height"]
    out.append(
        f'</div>\n<div class="tf-tl-plot" style="--h:{height}" role="group" '
        f'aria-label="{_text(timeline["title"])}">'
    )
    for turn in timeline["turns"]:
        out.append(_timeline_turn(turn, timeline["bar"], timeline["mark"], height))
    out.append("</div></div></details>\n")
    return "".join(out)


def _shape(
    kind: str, x: float, w: float, y: int, h: int, label: str | None = None,
    href: str | None = None,
) -> str:  # fmt: skip
    """One box of a page's timeline: ``kind`` its classes, from ``x`` lasting ``w`` seconds of
    the axis, ``y`` and ``h`` in pixels; ``label`` its tooltip (and name, for a link to
    ``href``, which fills the box).

    The box, not the link, carries the place: marimo's ``mo.Html`` hands the attributes of a
    link to the same page (``href="#…"``) to React as they are, and React throws on a ``style``
    that is a string (its error #62), so the whole output failed to draw. A link therefore
    never has a ``style`` of its own.
    """
    style = f"--x:{x};--w:{w};--y:{y};--h:{h}"
    title = f' title="{_text(label)}"' if label is not None else ""
    if href is None:
        return f'<span class="{kind}" style="{style}"{title}></span>'
    return f'<span class="{kind}" style="{style}"><a href="{href}"{title}></a></span>'


def _timeline_turn(turn: TimelineTurn, bar: int, mark: int, height: int) -> str:
    x, w = turn["x"], turn["w"]
    parts = ["\n" + _shape("tf-tl-band", x, w, 0, height, turn["label"])]
    for gap in turn["gaps"]:
        parts.append(_shape(_GAP_SHAPE[gap["clock"]], gap["x"], gap["w"], 0, height, gap["label"]))
    bars = turn["bars"]
    if bars is None:  # coarse: the turn as one bar, linking to its first call
        kind = f"tf-tl-bar tf-c-{_text(turn['category'] or 'other')}"
        call = turn["call"]
        parts.append(_shape(kind, x, w, mark, bar, turn["label"], _link(call) if call else None))
        if turn["failed"]:
            parts.append(_shape("tf-tl-mark", x, w, 0, mark - 1))
    else:
        for one in bars:
            kind = f"tf-tl-bar tf-c-{_text(one['category'])}"
            href = _link(one["key"])
            parts.append(_shape(kind, one["x"], one["w"], one["y"], bar, one["label"], href))
            if one["failed"]:
                parts.append(_shape("tf-tl-mark", one["x"], one["w"], 0, mark - 1))
    return "".join(parts)


def outcome_html(outcome: OutcomeNode | None) -> str:
    """H-6: the run's outcome, score and cost, one line above the turns."""
    if not outcome:
        return ""
    status = _text(outcome["status"])
    return f'<div class="tf-outcome" data-status="{status}">{_text(outcome["text"])}</div>\n'


def notice_html(notice: NoticeNode | None, locale: str) -> str:
    """The loader's warnings as they open a page's body ("" when there were none)."""
    if not notice:
        return ""
    renderer = _Renderer(locale)
    renderer.notice(notice)
    return "".join(renderer.out)


def render_html(
    view: View,
    *,
    title: str | None = None,
    standalone: bool = True,
    budget: int | None = None,
) -> str:
    """The view model as HTML: a whole page, or a fragment for a notebook's ``text/html``.

    ``standalone=False`` gives one ``<div class="turnfold">`` holding a scoped ``<style>`` and
    the transcript; ``standalone=True`` a complete page with a strict Content-Security-Policy
    (no script, nothing loaded from the network) and ``title`` as its title. How much of a long
    output is embedded was decided by the view model (``result_view``'s ``more_chars``); the
    page says what it left out.

    ``budget`` bounds the size: once the latest nodes' HTML reaches that many characters, the
    older turns are drawn with their header, answer and what is outside the fold, and a process
    that says it was left out (see :func:`budgeted_nodes`).
    """
    locale = _text(view.get("locale") or "en")
    nodes = view.get("nodes", [])
    if budget is None:
        body = nodes_html(nodes, locale)
    else:
        body = "".join(budgeted_nodes(nodes, locale, budget))
    head = session_html(view.get("session")) + timeline_html(view.get("timeline"))
    head += outcome_html(view.get("outcome"))
    body = head + notice_html(view.get("notice"), locale) + body
    return wrap_html(body, view, title=title, standalone=standalone)


def budgeted_nodes(nodes: list[TopNode], locale: str, budget: int) -> list[str]:
    """The HTML of each top-level node, the processes of the oldest turns left out past ``budget``.

    Nodes are drawn from the last: a notebook's fallback of a long session keeps the work of the
    latest turns, and every turn's header, answer, errors and pending decisions (never silently:
    a left-out process says so when opened). Deterministic, as every rendering here.
    """
    drawn: list[str] = []
    used = 0
    over = False
    # Each node's turn number (B-2's anchors), though they are drawn from the last.
    numbers = list(accumulate((node["kind"] == "turn" for node in nodes), initial=1))
    for number, node in zip(reversed(numbers[:-1]), reversed(nodes), strict=True):
        if not over:
            piece = nodes_html([node], locale, number)
            over = used + len(piece) > budget and node.get("kind") == "turn"
            if not over:
                used += len(piece)
                drawn.append(piece)
                continue
        drawn.append(nodes_html([_without_process(node)], locale, number))
    drawn.reverse()
    return drawn


def _without_process(node: TopNode) -> TopNode:
    if node["kind"] != "turn" or not node["process"]:
        return node
    return {**node, "process": {**node["process"], "children": [], "left_out": True}}


def wrap_html(body: str, view: View, *, title: str | None = None, standalone: bool = True) -> str:
    """``body`` (the HTML of ``view``'s nodes) inside a page or a notebook fragment."""
    before, after = html_frame(view, title=title, standalone=standalone)
    return f"{before}{body}{after}"


def html_frame(
    view: Mapping[str, object],
    *,
    title: str | None = None,
    standalone: bool = True,
    css: str = "",
    deep_links: bool = True,
) -> tuple[str, str]:
    """What goes before and after the body of ``view`` (of which only its ``locale`` and
    ``mode`` are read): a page's head, or a fragment's style; ``css`` is added to the
    stylesheet (a comparison's layout, B-3). A page without ``deep_links`` runs no script at
    all, its policy allowing none."""
    locale = _text(view.get("locale") or "en")
    mode = _text(view.get("mode") or "")
    if not standalone:
        style = turnfold_css(standalone=False) + css
        before = f'<div class="turnfold" lang="{locale}" data-mode="{mode}"><style>{style}</style>'
        return before, "</div>"
    heading = _text(title) if title else "turnfold"
    head = f"<h1>{_text(title)}</h1>" if title else ""
    csp = _policy() if deep_links else NO_SCRIPT
    return (
        f'<!DOCTYPE html>\n<html lang="{locale}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{heading}</title>\n<style>\n{turnfold_css(standalone=True)}{css}</style>\n</head>\n"
        f'<body class="tf-page">\n<main class="turnfold" data-mode="{mode}">{head}'
    ), page_end(deep_links=deep_links)


def page_end(nav: str = "", *, deep_links: bool = True) -> str:
    """What closes a standalone page after its transcript: ``nav`` (a site's links to the
    pages beside it, drawn above the transcript by CSS), then the page's deep-link script."""
    script = script_tag(DEEP_LINKS) if deep_links else ""
    return f"</main>\n{nav}{script}\n</body>\n</html>\n"
