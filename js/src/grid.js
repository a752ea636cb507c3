// @ts-check
/**
 * The table of runs (spec B-1): one page of rows as an ARIA grid, drawn as Python sent it.
 *
 * Every cell's text, tone and tooltip, every heading and its sort state come from the kernel
 * (`_page`); the grid draws them as text, never as markup, and turns what the reader does
 * into requests: a heading click asks for another sort, moving past the page's last row (arrow
 * keys, PageDown, the wheel at the bottom) for the next page, Enter or a click to open a row,
 * Escape to close the row open.
 * The cursor (the active row) is the grid's own; which row is open is the kernel's (`selected`).
 */

import { h, text, token } from "./dom.js";

/** @typedef {import("./browser").Page} Page */
/** @typedef {import("./browser").Query} Query */

/**
 * @typedef {object} GridActions
 * @property {(patch: Partial<Query>) => void} query  ask for another page of rows
 * @property {(key: string) => void} open  show this row's run under the table
 * @property {() => void} close  show no run under the table
 */

/** Whether a cell shows less than its whole text. @param {HTMLElement} cell */
function isCut(cell) {
  const clip = /** @type {HTMLElement | null} */ (cell.querySelector(".tf-b-clip"));
  // A .tf-b-clip shows its first line only: its text cut short runs on into lines not shown.
  if (clip) return clip.scrollHeight > clip.clientHeight + 1;
  return cell.scrollWidth > cell.clientWidth;
}

export class RunsGrid {
  /** @param {GridActions} actions @param {() => Record<string, string>} strings */
  constructor(actions, strings) {
    this.actions = actions;
    this.strings = strings;
    /** @type {Page | null} */
    this.page = null;
    /** @type {string | null} */
    this.selected = null;
    this.cursor = 0;
    /** Where the cursor goes when the page asked for arrives: its first row or its last. @type {"first" | "last" | null} */
    this.landing = null;
    /** A page was asked for and has not arrived: the wheel asks for no other meanwhile. */
    this.waiting = false;
    this.table = h("table", "tf-b-grid", { role: "grid" });
    this.head = h("thead", "");
    this.body = h("tbody", "");
    this.table.append(this.head, this.body);
    this.scroller = h("div", "tf-b-scroll");
    this.scroller.append(this.table);
    this.table.addEventListener("keydown", (event) => this.onKey(event));
    this.scroller.addEventListener("wheel", (event) => this.onWheel(event), { passive: true });
    // A row focused otherwise than by the grid's keys (pressed and let go elsewhere, a screen
    // reader's cursor) becomes the cursor: Enter opens the row that shows the focus.
    this.body.addEventListener("focusin", (event) => {
      const row = /** @type {HTMLElement} */ (event.target).closest?.("tr");
      const index = row ? [...this.body.children].indexOf(row) : -1;
      if (index >= 0 && index !== this.cursor) this.moveTo(index, false);
    });
    // A text cell is cut with an ellipsis at 36em, or sooner when the table is too narrow for
    // every column (see drawRow). Python gives a long text its tooltip by its length, but wide
    // letters (capitals, CJK) and narrow tables cut well before that length: a cell cut without a
    // tooltip gets its own text as one when the pointer reaches it (measured then, not per draw).
    this.body.addEventListener("mouseover", (event) => {
      const cell = /** @type {HTMLElement} */ (event.target).closest?.("td");
      if (cell && !cell.title && isCut(cell)) cell.title = cell.textContent ?? "";
    });
  }

  /** @param {Page} page */
  draw(page) {
    const moved = this.page?.query.offset !== page.query.offset;
    const hadFocus = this.table.contains(document.activeElement);
    this.page = page;
    this.waiting = false;
    this.table.setAttribute("aria-label", this.strings().label ?? "");
    this.table.setAttribute("aria-rowcount", String(page.total + 1));
    this.table.setAttribute("aria-colcount", String(page.columns.length));
    this.drawHead(page);
    this.body.replaceChildren(...page.rows.map((row, index) => this.drawRow(page, row, index)));
    const last = Math.max(0, page.rows.length - 1);
    // A page the kernel turned to (a search hit's run opened from another page) lands on the
    // row open, which the reader asked to see; a page the reader turned, where they moved.
    const open = moved && !this.landing ? this.indexOf(this.selected) : -1;
    if (this.landing === "last") this.cursor = last;
    else if (open >= 0) this.cursor = open;
    else if (this.landing === "first" || moved) this.cursor = 0;
    this.cursor = Math.min(this.cursor, last);
    if (this.landing === "last") this.scroller.scrollTop = this.scroller.scrollHeight;
    else if (moved) this.scroller.scrollTop = 0;
    this.landing = null;
    this.moveTo(this.cursor, hadFocus);
    if (open >= 0) this.reveal(open);
  }

  /** The place of row `key` on this page, or -1. @param {string | null} key */
  indexOf(key) {
    return key == null ? -1 : (this.page?.rows ?? []).findIndex((row) => row.key === key);
  }

  /** @param {Page} page */
  drawHead(page) {
    const row = h("tr", "", { role: "row", "aria-rowindex": "1" });
    for (const column of page.columns) {
      const cell = h("th", column.numeric ? "tf-num" : "", { role: "columnheader", scope: "col" });
      cell.setAttribute("aria-sort", column.sort ?? "none");
      const button = h("button", "tf-b-sort", { type: "button" });
      button.append(text("span", "", column.label));
      if (column.sort) button.append(text("span", "tf-b-arrow", column.sort === "ascending" ? "▲" : "▼"));
      button.addEventListener("click", () => {
        const query = page.query;
        // Numbers read largest first; text from A. A second click turns the order round.
        const descending = query.sort === column.name ? !query.descending : column.numeric;
        this.actions.query({ sort: column.name, descending, offset: 0 });
      });
      cell.append(button);
      row.append(cell);
    }
    this.head.replaceChildren(row);
  }

  /** @param {Page} page @param {import("./browser").Row} row @param {number} index */
  drawRow(page, row, index) {
    const tr = h("tr", row.tone ? `tf-tone-row-${token(row.tone)}` : "", {
      role: "row",
      "aria-rowindex": String(page.query.offset + index + 2),
      "aria-selected": "false",
      tabindex: "-1",
      "data-key": row.key,
    });
    if (row.key === this.selected) tr.classList.add("tf-b-open");
    row.cells.forEach((cell, column) => {
      const head = page.columns[column];
      const classes = [head?.numeric ? "tf-num" : "", cell.tone ? `tf-tone-${token(cell.tone)}` : ""].filter(Boolean).join(" ");
      // A text column's cell holds its text in a .tf-b-clip, which the table may narrow (to a few
      // letters and an ellipsis) where it is too narrow for every column: a number is never cut.
      const td = head?.clip ? h("td", classes) : text("td", classes, cell.text);
      if (head?.clip) td.append(text("span", "tf-b-clip", cell.text));
      td.setAttribute("role", "gridcell");
      if (cell.title) td.title = cell.title;
      tr.append(td);
    });
    tr.addEventListener("click", () => {
      this.moveTo(index, true);
      this.actions.open(row.key);
    });
    return tr;
  }

  /** The row open under the table changed: it becomes the cursor, scrolled into the table's
   * view (opened from a search hit, it may have been out of it). @param {string | null} key */
  markOpen(key) {
    this.selected = key;
    for (const row of this.body.children) {
      row.classList.toggle("tf-b-open", /** @type {HTMLElement} */ (row).dataset.key === key);
    }
    const index = this.indexOf(key);
    if (index >= 0 && index !== this.cursor) {
      this.moveTo(index, this.table.contains(document.activeElement));
      this.reveal(index);
    }
  }

  /** Focus the cursor's row (the keyboard's place once the run under the table is closed). */
  focus() {
    this.moveTo(this.cursor, true);
  }

  /**
   * Scroll row `index` into the table's own view, below its sticky heading: the table's box
   * only, not the notebook around it (the reader is looking at the hits above it).
   * @param {number} index
   */
  reveal(index) {
    const row = /** @type {HTMLElement | undefined} */ (this.body.children[index]);
    if (!row) return;
    const box = this.scroller.getBoundingClientRect();
    const top = box.top + this.head.getBoundingClientRect().height;
    const { top: rowTop, bottom: rowBottom } = row.getBoundingClientRect();
    if (rowTop < top) this.scroller.scrollTop -= top - rowTop;
    else if (rowBottom > box.bottom) this.scroller.scrollTop += rowBottom - box.bottom;
  }

  /** Make row `index` the cursor (`aria-selected`, the one tab stop), focused if `focus`. @param {number} index @param {boolean} focus */
  moveTo(index, focus) {
    const rows = /** @type {HTMLElement[]} */ ([...this.body.children]);
    this.cursor = index;
    rows.forEach((row, at) => {
      row.setAttribute("aria-selected", String(at === index));
      row.tabIndex = at === index ? 0 : -1;
    });
    this.table.tabIndex = rows.length ? -1 : 0; // an empty page is still reachable
    const row = rows[index];
    if (row && focus) {
      row.focus({ preventScroll: true });
      row.scrollIntoView({ block: "nearest" });
    }
  }

  /** Ask for the page after this one, landing on its first row. */
  next() {
    const page = this.page;
    if (!page || page.query.offset + page.rows.length >= page.total) return false;
    this.turn(page.query.offset + page.rows.length, "first");
    return true;
  }

  /** Ask for the page before this one, landing on its last row (or its first). @param {"first" | "last"} landing */
  previous(landing) {
    const page = this.page;
    if (!page || page.query.offset === 0) return false;
    // The row before this page's first: Python answers with the whole page that holds it (the
    // page before a short last page is a full one, not as short).
    this.turn(page.query.offset - 1, landing);
    return true;
  }

  /** @param {number} offset @param {"first" | "last"} landing */
  turn(offset, landing) {
    this.landing = landing;
    this.waiting = true;
    this.actions.query({ offset });
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    const page = this.page;
    if (!page || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Escape" && this.selected != null) {
      this.actions.close();
      event.preventDefault();
      return;
    }
    // The rows' keys: on a heading's sort button, Enter sorts (it had opened the cursor's row
    // and the sort never came) and the arrows are the page's.
    if (!(/** @type {HTMLElement} */ (event.target).closest("tbody"))) return;
    const last = page.rows.length - 1;
    let handled = true;
    if (event.key === "ArrowDown") {
      if (this.cursor < last) this.moveTo(this.cursor + 1, true);
      else this.next();
    } else if (event.key === "ArrowUp") {
      if (this.cursor > 0) this.moveTo(this.cursor - 1, true);
      else this.previous("last");
    } else if (event.key === "PageDown") {
      if (!this.next()) this.moveTo(last, true);
    } else if (event.key === "PageUp") {
      if (!this.previous("first")) this.moveTo(0, true);
    } else if (event.key === "Home") {
      this.moveTo(0, true);
    } else if (event.key === "End") {
      this.moveTo(last, true);
    } else if (event.key === "Enter") {
      const row = page.rows[this.cursor];
      if (row) this.actions.open(row.key);
    } else {
      handled = false;
    }
    if (handled) event.preventDefault();
  }

  /** The wheel past either end of the scrolled rows turns the page. @param {WheelEvent} event */
  onWheel(event) {
    if (this.waiting || !event.deltaY) return;
    const box = this.scroller;
    const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 1;
    if (event.deltaY > 0 && atEnd) this.next();
    else if (event.deltaY < 0 && box.scrollTop <= 0) this.previous("last");
  }
}
