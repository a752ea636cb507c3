// @ts-check
/**
 * The search box (spec P-11). The view only collects the query and shows the answer: Python finds
 * the hits in the transcript text it shows (hidden reasoning is not searched) and replies with
 * each hit's key and ancestor path. The widget opens exactly those paths, once, and this box
 * highlights the hits and steps through them.
 */

import { byKey, h, text } from "./dom.js";

/**
 * @typedef {object} SearchReply
 * @property {number} id
 * @property {string} query
 * @property {{key: string, path: string[]}[]} hits
 * @property {number} total
 * @property {string} label  "3 matches", localized by Python
 */

const DEBOUNCE_MS = 200;

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
    /** @type {string[]} */
    this.hits = [];
    this.current = -1;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;

    this.element = h("div", "tf-search", { role: "search" });
    this.input = h("input", "tf-search-input", { type: "search", spellcheck: "false", autocomplete: "off" });
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
      element.classList.remove("tf-hit", "tf-hit-current");
    }
    this.hits.forEach((key, index) => {
      const element = byKey(this.root, key);
      if (!element) return;
      element.classList.add("tf-hit");
      if (index === this.current) {
        element.classList.add("tf-hit-current");
        if (scroll) element.scrollIntoView({ block: "nearest" });
      }
    });
    const position = this.hits.length ? `${this.current + 1}/${this.hits.length} · ` : "";
    this.count.textContent = this.label ? `${position}${this.label}` : "";
  }

  destroy() {
    clearTimeout(this.timer);
  }
}
