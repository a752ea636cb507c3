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
 */

import { h, text, token } from "./dom.js";
import { applyTimeline } from "./tree.js";

/** @typedef {import("./nodes").TimelineNode} TimelineNode */
/** @typedef {import("./nodes").TimelineTurn} TimelineTurn */
/** @typedef {import("./nodes").TimelineBar} TimelineBar */

const SVG = "http://www.w3.org/2000/svg";

/**
 * An SVG element with attributes (numbers and tokens only; text goes in through `title`).
 * @param {string} tag @param {Record<string, string | number>} attrs
 */
function svg(tag, attrs) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  return element;
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
    this.canvas = { labels, svg: picture, frame };
    this.drawn.clear();
    this.frame(node);
    for (const turn of node.turns ?? []) this.drawTurn(turn, node);
    body.replaceChildren(frame);
  }

  /** The axis and the size, which a live session's patches change. @param {TimelineNode} node */
  frame(node) {
    if (!this.canvas) return;
    const { frame, svg: picture } = this.canvas;
    frame.style.setProperty("--tf-x0", String(node.origin));
    frame.style.setProperty("--tf-span", String(node.span));
    picture.setAttribute("viewBox", `${node.origin} 0 ${node.span} ${node.height}`);
    picture.setAttribute("height", String(node.height));
  }

  /** @param {TimelineTurn} turn @param {TimelineNode} node */
  drawTurn(turn, node) {
    if (!this.canvas) return;
    const group = svg("g", { "data-key": turn.key });
    group.append(titled(svg("rect", { class: "tf-tl-band", x: turn.x, y: 0, width: turn.w, height: node.height }), turn.label));
    /** @type {Element[]} */
    const labels = [];
    if (turn.number) labels.push(placed("tf-tl-num", turn.x, turn.w, turn.number));
    for (const gap of turn.gaps ?? []) {
      group.append(titled(svg("rect", { class: "tf-tl-gap", x: gap.x, y: 0, width: gap.w, height: node.height }), gap.label));
      const label = placed("tf-tl-idle", gap.x, gap.w, gap.label);
      label.title = gap.label;
      labels.push(label);
    }
    const mark = (/** @type {number} */ x, /** @type {number} */ w) =>
      group.append(svg("rect", { class: "tf-tl-mark", x, y: 0, width: w, height: node.mark - 1 }));
    if (turn.bars == null) {
      // A coarse timeline: the turn as one bar; clicking it zooms into the turn's calls.
      const bar = svg("rect", { class: `tf-tl-bar tf-c-${token(turn.category)}`, x: turn.x, y: node.mark, width: turn.w, height: node.bar });
      group.append(actionable(bar, turn.label, () => this.zoom(turn.key)));
      if (turn.failed) mark(turn.x, turn.w);
    } else {
      for (const one of turn.bars) {
        const bar = svg("rect", { class: `tf-tl-bar tf-c-${token(one.category)}`, x: one.x, y: one.y, width: one.w, height: node.bar });
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
