// @ts-check
/**
 * The hits of a search across runs (spec C-6, B-1): each the run's title, where in it, and the
 * text around the match, as Python found them (`_hits`). Opening one shows its run under the
 * table with the hit revealed (P-11). Arrow keys move between hits; Escape closes the list.
 */

import { h, text } from "./dom.js";

/** @typedef {import("./browser").Hits} Hits */

export class HitList {
  /**
   * @param {() => Record<string, string>} strings
   * @param {(key: string, entry: string) => void} open
   * @param {() => void} close  forget the search
   */
  constructor(strings, open, close) {
    this.strings = strings;
    this.open = open;
    this.element = h("div", "tf-b-hits", { role: "region" });
    this.label = h("span", "tf-b-hits-label", { "aria-live": "polite" });
    const dismiss = text("button", "tf-b-close", "×");
    dismiss.setAttribute("type", "button");
    dismiss.setAttribute("aria-label", strings().close_hits ?? "");
    dismiss.addEventListener("click", close);
    this.list = h("ul", "tf-b-hit-list");
    const head = h("div", "tf-b-hits-head");
    head.append(this.label, dismiss);
    this.element.append(head, this.list);
    this.element.hidden = true;
    this.list.addEventListener("keydown", (event) => this.onKey(event, close));
  }

  /** @param {Hits | null} hits */
  update(hits) {
    this.element.hidden = !hits;
    if (!hits) return;
    this.element.setAttribute("aria-label", hits.query);
    this.label.textContent = hits.searching ? this.strings().searching ?? "" : `${hits.label} · “${hits.query}”`;
    this.list.replaceChildren(
      ...hits.hits.map((hit) => {
        const button = h("button", "tf-b-hit", { type: "button", "data-key": hit.key, "data-entry": hit.entry });
        // The title and the snippet are cut to one line with an ellipsis: each keeps its whole
        // text as a tooltip, the only place a reader can read the rest before opening the run.
        const title = text("span", "tf-b-hit-title", hit.title);
        title.title = hit.title;
        const snippet = text("span", "tf-b-hit-snippet", hit.snippet);
        snippet.title = hit.snippet;
        button.append(title);
        if (hit.where) button.append(text("span", "tf-b-hit-where", hit.where));
        button.append(snippet);
        button.addEventListener("click", () => this.open(hit.key, hit.entry));
        const item = h("li", "");
        item.append(button);
        return item;
      }),
    );
  }

  /** @param {KeyboardEvent} event @param {() => void} close */
  onKey(event, close) {
    const buttons = /** @type {HTMLElement[]} */ ([...this.list.querySelectorAll("button")]);
    const at = buttons.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const next = buttons[at + (event.key === "ArrowDown" ? 1 : -1)];
      next?.focus();
      event.preventDefault();
    } else if (event.key === "Escape") {
      close();
      event.preventDefault();
    }
  }
}
