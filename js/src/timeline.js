// @ts-check
/**
 * The timeline under the session header (spec U-4): draws, as SVG, the layout Python computed.
 *
 * Python placed everything (turns, bars, lanes, idle gaps, labels, colours by category) on an
 * axis of seconds; the SVG's viewBox is that axis, stretched to the view's width, and the row of
 * labels above it is placed by CSS from the same numbers (`--x`, `--w` of `--tf-span`). Nothing
 * here computes a position. A bar's click reveals its call (P-11: the kernel answers with the
 * ancestor path); a coarse timeline's turn zooms into that turn, whose calls are fetched by key.
 * While the timeline is open, a live session's patches redraw only the turns that changed.
 *
 * One thing is the view's own, because only the view knows its width in pixels: a turn or a
 * call too short to see at this scale (a few milliseconds of a long session) is drawn
 * `MIN_BAR_PX` wide from its start (from further left at the axis's end, so it stays on the
 * picture, where the pointer finds it), so it can be seen, pointed at and clicked. What it
 * covers always holds its true span; the axis and its tooltip (the true duration) are Python's.
 */

import { h, text, token } from "./dom.js";
import { applyTimeline } from "./tree.js";

/** @typedef {import("./nodes").TimelineNode} TimelineNode */
/** @typedef {import("./nodes").TimelineTurn} TimelineTurn */
/** @typedef {import("./nodes").TimelineBar} TimelineBar */
/** @typedef {import("./nodes").TimelineGap} TimelineGap */

const SVG = "http://www.w3.org/2000/svg";
/** Pixels: the least width a turn's band, a bar and its failure mark are drawn with. */
export const MIN_BAR_PX = 4;

/**
 * Where a shape from `x` lasting `w` seconds is drawn when the axis spans `span` seconds from
 * `origin` over `pixels`: as it is, or `MIN_BAR_PX` wide if it is narrower, from `x`, or
 * ending at the axis's end if it would pass it. Before layout (no pixels), as it is.
 * @param {number} x @param {number} w @param {number} origin @param {number} span @param {number} pixels
 * @returns {{x: number, w: number}}
 */
export function drawnPlace(x, w, origin, span, pixels) {
  const least = (MIN_BAR_PX * span) / pixels;
  if (!(pixels > 0) || !(span > 0) || w >= least) return { x, w };
  return { x: Math.max(origin, Math.min(x, origin + span - least)), w: least };
}

/**
 * An SVG element with attributes (numbers and tokens only; text goes in through `title`).
 * @param {string} tag @param {Record<string, string | number>} attrs
 */
function svg(tag, attrs) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  return element;
}

/**
 * A rect on the time axis: its true place kept in `data-x` and `data-w`, where it is drawn set
 * by `fit`.
 * @param {string} className @param {number} x @param {number} y @param {number} w @param {number} height
 */
function timed(className, x, y, w, height) {
  return svg("rect", { class: className, x, y, width: w, height, "data-x": x, "data-w": w });
}

/** A tooltip, set as text. @param {Element} element @param {string} label */
function titled(element, label) {
  const title = document.createElementNS(SVG, "title");
  title.textContent = label;
  element.append(title);
  return element;
}

/**
 * A shape the reader acts on: clickable, and focusable with Enter or Space for the keyboard (W-3).
 * @param {Element} shape @param {string} label @param {() => void} act
 */
function actionable(shape, label, act) {
  const hit = svg("g", { class: "tf-tl-hit", tabindex: 0, role: "button" });
  hit.setAttribute("aria-label", label);
  hit.append(titled(shape, label));
  hit.addEventListener("click", act);
  hit.addEventListener("keydown", (event) => {
    const key = /** @type {KeyboardEvent} */ (event).key;
    if (key !== "Enter" && key !== " ") return;
    event.preventDefault();
    act();
  });
  return hit;
}

/**
 * The classes of a gap's box and of its label: an idle gap, or where the computer's clock
 * changed (`tf-tl-clock`: no time passed there, so it is drawn apart from idle time), as a
 * page names them (`_GAP_SHAPE` and `_GAP_LABEL` in `turnfold/render/html.py`).
 * @param {TimelineGap} gap @returns {{shape: string, label: string}}
 */
export function gapClasses(gap) {
  const clock = gap.clock ? " tf-tl-clock" : "";
  return { shape: `tf-tl-gap${clock}`, label: `tf-tl-idle${clock}` };
}

/** A label placed on the axis by CSS. @param {string} className @param {number} x @param {number} w @param {string} label */
function placed(className, x, w, label) {
  const span = text("span", className, label);
  span.style.setProperty("--x", String(x));
  span.style.setProperty("--w", String(w));
  return span;
}

export class Timeline {
  /**
   * @param {import("./render.js").Renderer} renderer  draws the disclosure, fetches content
   * @param {(key: string) => void} reveal  asks the kernel to reveal the call `key` here (P-11)
   */
  constructor(renderer, reveal) {
    this.renderer = renderer;
    this.reveal = reveal;
    /** @type {TimelineNode | null} the whole timeline with its turns, once drawn */
    this.whole = null;
    /** @type {HTMLElement | null} the disclosure's body, once opened */
    this.body = null;
    /** @type {string | null} the key of the turn zoomed into */
    this.zoomed = null;
    /** @type {Map<string, Element[]>} each drawn turn's elements (its group, its labels) */
    this.drawn = new Map();
    /** @type {{labels: HTMLElement, svg: SVGElement, frame: HTMLElement} | null} */
    this.canvas = null;
    /** The drawn axis (its start and its length in seconds), and its width in pixels when last
     * laid out. */
    this.origin = 0;
    this.span = 0;
    this.pixels = 0;
    /** Fits the short shapes to the width the picture is laid out at, and again on resize. */
    this.resizer =
      typeof ResizeObserver === "function"
        ? new ResizeObserver((entries) => {
            const entry = entries[entries.length - 1];
            if (entry && entry.target === this.canvas?.svg) this.fit(entry.contentRect.width);
          })
        : null;
  }

  /** The closed disclosure of `node` (its turns may come when it opens, Q-2). @param {TimelineNode} node */
  element(node) {
    this.whole = null;
    this.body = null;
    this.zoomed = null;
    return this.renderer.disclosure({
      key: node.key,
      defaultOpen: Boolean(node.open),
      className: "tf-timeline",
      headerClass: "tf-row",
      header: (button) => {
        button.append(text("span", "tf-tl-title", node.title));
        if (node.note) button.append(text("span", "tf-sep", "·"), text("span", "tf-dim", node.note));
        button.append(h("span", "tf-chev", { "aria-hidden": "true" }));
      },
      bodyClass: "tf-tl",
      body: (body) => {
        this.body = body;
        if (node.deferred) this.renderer.onDemand(body, node.key, (/** @type {TimelineNode} */ full) => this.show(full));
        else this.show(node);
      },
    });
  }

  /** Draw the whole timeline. @param {TimelineNode} node */
  show(node) {
    this.whole = node;
    this.zoomed = null;
    this.draw(node);
  }

  /**
   * A patch's changes to the timeline: the turns that changed are drawn again, the rest stay.
   * @param {import("./messages").TimelinePatch} patch
   */
  patch(patch) {
    if (!this.whole) return; // not drawn yet: it comes whole when opened
    this.whole = applyTimeline(this.whole, patch);
    if (this.zoomed || !this.canvas) return;
    this.frame(this.whole);
    for (const key of patch.remove ?? []) this.forget(key);
    const turns = new Map(this.whole.turns.map((turn) => [turn.key, turn]));
    for (const { turn } of patch.upsert ?? []) {
      this.forget(turn.key);
      if (turns.has(turn.key)) this.drawTurn(turn, this.whole);
    }
    this.fit(); // the span may have grown: every short shape's least width in seconds shrank
  }

  /** @param {string} key */
  forget(key) {
    for (const element of this.drawn.get(key) ?? []) element.remove();
    this.drawn.delete(key);
  }

  /** @param {TimelineNode} node  the whole timeline, or one turn zoomed into */
  draw(node) {
    const body = this.body;
    if (!body) return;
    const frame = h("div", "tf-tl-frame");
    if (node.back) {
      const back = text("button", "tf-tl-back", `← ${node.back}`);
      back.setAttribute("type", "button");
      back.addEventListener("click", () => this.whole && this.show(this.whole));
      frame.append(back, text("div", "tf-tl-zoomed tf-dim", node.title));
    }
    const labels = h("div", "tf-tl-labels", { "aria-hidden": "true" });
    const picture = svg("svg", { class: "tf-tl-svg", preserveAspectRatio: "none", role: "group" });
    picture.setAttribute("aria-label", node.title);
    frame.append(labels, picture);
    this.resizer?.disconnect();
    this.pixels = 0;
    this.canvas = { labels, svg: picture, frame };
    this.drawn.clear();
    this.frame(node);
    for (const turn of node.turns ?? []) this.drawTurn(turn, node);
    body.replaceChildren(frame);
    this.resizer?.observe(picture); // its first report is the laid-out width
  }

  /**
   * Draw every shape at least `MIN_BAR_PX` wide at the picture's width (`pixels`, or the last
   * one measured), from its true place in `data-x` and `data-w`.
   * @param {number} [pixels]
   */
  fit(pixels) {
    if (!this.canvas) return;
    if (pixels !== undefined) this.pixels = pixels;
    for (const rect of this.canvas.svg.querySelectorAll("rect[data-w]")) {
      const [x, w] = ["data-x", "data-w"].map((name) => Number(rect.getAttribute(name)));
      const drawn = drawnPlace(x, w, this.origin, this.span, this.pixels);
      rect.setAttribute("x", String(drawn.x));
      rect.setAttribute("width", String(drawn.w));
    }
  }

  /** The axis and the size, which a live session's patches change. @param {TimelineNode} node */
  frame(node) {
    if (!this.canvas) return;
    const { frame, svg: picture } = this.canvas;
    frame.style.setProperty("--tf-x0", String(node.origin));
    frame.style.setProperty("--tf-span", String(node.span));
    picture.setAttribute("viewBox", `${node.origin} 0 ${node.span} ${node.height}`);
    picture.setAttribute("height", String(node.height));
    this.origin = node.origin;
    this.span = node.span;
  }

  /** @param {TimelineTurn} turn @param {TimelineNode} node */
  drawTurn(turn, node) {
    if (!this.canvas) return;
    const group = svg("g", { "data-key": turn.key });
    group.append(titled(timed("tf-tl-band", turn.x, 0, turn.w, node.height), turn.label));
    /** @type {Element[]} */
    const labels = [];
    if (turn.number) labels.push(placed("tf-tl-num", turn.x, turn.w, turn.number));
    for (const gap of turn.gaps ?? []) {
      const classes = gapClasses(gap);
      group.append(titled(svg("rect", { class: classes.shape, x: gap.x, y: 0, width: gap.w, height: node.height }), gap.label));
      const label = placed(classes.label, gap.x, gap.w, gap.label);
      label.title = gap.label;
      labels.push(label);
    }
    const mark = (/** @type {number} */ x, /** @type {number} */ w) =>
      group.append(timed("tf-tl-mark", x, 0, w, node.mark - 1));
    if (turn.bars == null) {
      // A coarse timeline: the turn as one bar; clicking it zooms into the turn's calls.
      const bar = timed(`tf-tl-bar tf-c-${token(turn.category)}`, turn.x, node.mark, turn.w, node.bar);
      group.append(actionable(bar, turn.label, () => this.zoom(turn.key)));
      if (turn.failed) mark(turn.x, turn.w);
    } else {
      for (const one of turn.bars) {
        const bar = timed(`tf-tl-bar tf-c-${token(one.category)}`, one.x, one.y, one.w, node.bar);
        const hit = actionable(bar, one.label, () => this.reveal(one.key));
        hit.setAttribute("data-call", one.key);
        group.append(hit);
        if (one.failed) mark(one.x, one.w);
      }
    }
    this.canvas.svg.append(group);
    this.canvas.labels.append(...labels);
    this.drawn.set(turn.key, [group, ...labels]);
  }

  /** Draw one turn of a coarse timeline in detail, fetched from the kernel. @param {string} key */
  zoom(key) {
    const body = this.body;
    if (!body) return;
    this.zoomed = key;
    this.renderer.onDemand(body, key, (/** @type {TimelineNode} */ turn) => {
      if (this.zoomed === key) this.draw(turn);
    });
  }
}
