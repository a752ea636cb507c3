// @ts-check
/**
 * The search box (spec P-11). The view only collects the query and shows the answer: Python finds
 * the hits in the transcript text it shows (hidden reasoning is not searched) and replies with
 * each hit's key and ancestor path. The widget opens exactly those paths, once, and this box
 * highlights the hits and steps through them.
 *
 * Where the browser has the CSS Custom Highlight API, the matched text itself is marked (ranges
 * over the drawn text, so the DOM of the transcript is never changed) and the current hit's row
 * is outlined; elsewhere, or when a hit's match is not in its drawn text (a folded argument), the
 * hit's row is tinted instead.
 */

import { byKey, h, text } from "./dom.js";
import { limitQuery } from "./query.js";

/**
 * @typedef {object} SearchReply
 * @property {number} id
 * @property {string} query
 * @property {{key: string, path: string[]}[]} hits
 * @property {number} total
 * @property {string} label  "3 matches", localized by Python
 */

const DEBOUNCE_MS = 200;

/** Names in the page's highlight registry, shared by every view: each keeps its own ranges. */
const MARKS = { hit: "turnfold-hit", current: "turnfold-hit-current" };

/** The registry's highlight `name`, created on first use; null without the API. @param {string} name */
function sharedHighlight(name) {
  const registry = globalThis.CSS?.highlights;
  if (!registry || typeof Highlight === "undefined") return null;
  let highlight = registry.get(name);
  if (!highlight) {
    highlight = new Highlight();
    registry.set(name, highlight);
  }
  return highlight;
}

/**
 * Ranges over every occurrence of `needle` (lower-cased) in the text drawn inside `element`.
 * @param {Element} element @param {string} needle @returns {Range[]}
 */
function textRanges(element, needle) {
  /** @type {Range[]} */
  const ranges = [];
  if (!needle) return ranges;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const haystack = (node.nodeValue ?? "").toLowerCase();
    for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + needle.length);
      ranges.push(range);
    }
  }
  return ranges;
}

export class SearchBox {
  /**
   * @param {object} options
   * @param {() => Record<string, string>} options.strings
   * @param {(query: string, id: number) => void} options.send  ask Python
   * @param {(paths: string[][]) => void} options.open  open these ancestor paths, once
   * @param {HTMLElement} options.root  where hits are drawn
   */
  constructor({ strings, send, open, root }) {
    this.strings = strings;
    this.send = send;
    this.open = open;
    this.root = root;
    this.request = 0;
    this.query = "";
    /** @type {string[]} */
    this.hits = [];
    /** @type {{hit: Range[], current: Range[]}} this view's ranges in the shared highlights */
    this.marked = { hit: [], current: [] };
    this.current = -1;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;

    this.element = h("div", "tf-search", { role: "search" });
    this.input = h("input", "tf-search-input", {
      type: "search",
      spellcheck: "false",
      autocomplete: "off",
    });
    // No longer query than Python searches (query.js): a paste gone wrong is cut here rather
    // than sent to the kernel to be refused.
    limitQuery(this.input);
    this.count = text("span", "tf-search-count", "");
    this.count.setAttribute("aria-live", "polite");
    this.previous = this.stepButton("‹", -1);
    this.next = this.stepButton("›", 1);
    this.element.append(this.input, this.count, this.previous, this.next);
    this.relabel();

    this.input.addEventListener("input", () => this.schedule());
    this.input.addEventListener("keydown", (event) => {
      // Typing here must not reach the notebook's own shortcuts (JupyterLab command mode).
      event.stopPropagation();
      if (event.key === "Enter") {
        event.preventDefault();
        if (this.timer !== undefined) this.ask();
        else this.step(event.shiftKey ? -1 : 1);
      } else if (event.key === "Escape") {
        this.input.value = "";
        this.ask();
      }
    });
  }

  /** The phrases of the box, again after a locale switch. */
  relabel() {
    const strings = this.strings();
    this.input.placeholder = strings.search ?? "";
    this.input.setAttribute("aria-label", strings.search ?? "");
    this.previous.setAttribute("aria-label", strings.previous ?? "");
    this.previous.title = strings.previous ?? "";
    this.next.setAttribute("aria-label", strings.next ?? "");
    this.next.title = strings.next ?? "";
  }

  /** @param {string} glyph @param {number} delta */
  stepButton(glyph, delta) {
    const button = h("button", "tf-search-step", { type: "button" });
    button.textContent = glyph;
    button.addEventListener("click", () => this.step(delta));
    return button;
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.ask(), DEBOUNCE_MS);
  }

  ask() {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.request += 1;
    const query = this.input.value;
    if (!query.trim()) {
      this.show({ id: this.request, query, hits: [], total: 0, label: "" });
      return;
    }
    this.send(query, this.request);
  }

  /** Python's answer; an answer to an older query is dropped. @param {SearchReply} reply */
  receive(reply) {
    if (reply.id !== this.request) return;
    this.show(reply);
  }

  /** @param {SearchReply} reply */
  show(reply) {
    this.query = reply.query ?? "";
    this.open(reply.hits.map((hit) => hit.path));
    this.hits = reply.hits.map((hit) => hit.key);
    this.current = this.hits.length ? 0 : -1;
    this.label = reply.label;
    this.highlight(true);
  }

  /** @param {number} delta */
  step(delta) {
    if (!this.hits.length) return;
    this.current = (this.current + delta + this.hits.length) % this.hits.length;
    this.highlight(true);
  }

  /** Mark the hits again (after a live update redrew a turn), without scrolling. */
  reapply() {
    this.highlight(false);
  }

  /** @param {boolean} scroll */
  highlight(scroll) {
    for (const element of this.root.querySelectorAll(".tf-hit")) {
      element.classList.remove("tf-hit", "tf-hit-current", "tf-hit-row");
    }
    const hit = sharedHighlight(MARKS.hit);
    const current = sharedHighlight(MARKS.current);
    this.unmark();
    const needle = this.query.trim().toLowerCase();
    this.hits.forEach((key, index) => {
      const element = byKey(this.root, key);
      if (!element) return;
      const isCurrent = index === this.current;
      element.classList.add("tf-hit");
      if (isCurrent) element.classList.add("tf-hit-current");
      const ranges = hit && current ? textRanges(element, needle) : [];
      if (!ranges.length) element.classList.add("tf-hit-row"); // nothing to mark: tint the row
      for (const range of ranges) {
        (isCurrent ? current : hit)?.add(range);
        (isCurrent ? this.marked.current : this.marked.hit).push(range);
      }
      if (isCurrent && scroll) element.scrollIntoView({ block: "nearest" });
    });
    const position = this.hits.length ? `${this.current + 1}/${this.hits.length} · ` : "";
    this.count.textContent = this.label ? `${position}${this.label}` : "";
  }

  /** Take this view's ranges out of the shared highlights. */
  unmark() {
    for (const range of this.marked.hit) sharedHighlight(MARKS.hit)?.delete(range);
    for (const range of this.marked.current) sharedHighlight(MARKS.current)?.delete(range);
    this.marked = { hit: [], current: [] };
  }

  destroy() {
    clearTimeout(this.timer);
    this.unmark();
  }
}
