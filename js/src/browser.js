// @ts-check
/**
 * The anywidget view of turnfold's SessionBrowser (spec B-1, Q-5).
 *
 * Python sorts, filters, searches and pages; this view draws what it sent and says what the
 * reader wants. It holds one page of rows at a time (`_page`) and writes the reader's `query`
 * (sort, filters, columns, the page's first row) for the next. A search across runs is a
 * `search` request answered in `_hits`; opening a row or a hit is an `open` request, answered by
 * the kernel showing that run in the transcript widget under the table (`_transcript`, made
 * with the first run opened, drawn here through anywidget's host) and marking it `selected`; the
 * close control above it (or Escape in the table) is a `close_run` request.
 *
 * Traits and requests are declared in src/turnfold/browser.py, generated as ./browser.d.ts.
 * Keyboard: the grid's arrow keys, Home/End, PageUp/PageDown, Enter and Escape (see grid.js); `/`
 * anywhere in the browser focuses the search box; Escape there clears the search.
 */

import { h, keepKeys, text } from "./dom.js";
import { limitQuery } from "./query.js";
import { Filters } from "./filters.js";
import { RunsGrid } from "./grid.js";
import { HitList } from "./hits.js";

/** @typedef {import("./browser").BrowserTraits} BrowserTraits */
/** @typedef {import("./browser").BrowserRequest} BrowserRequest */
/** @typedef {import("./browser").Query} Query */
/** @typedef {import("@anywidget/types").AnyModel<BrowserTraits>} Model */

/** @param {Model} model @param {BrowserRequest} request */
function ask(model, request) {
  model.send(request);
}

/** @param {{model: Model, el: HTMLElement, host?: import("@anywidget/types").Host, signal?: AbortSignal}} context */
function render({ model, el, host, signal }) {
  const strings = () => model.get("_strings") ?? {};

  /**
   * Ask for rows: the query asked for last, with `patch`. Not the query the last page answered:
   * a second change made before the kernel answered the first (two filters set in a row, while
   * the kernel is busy) had dropped the first. The kernel writes back what it could not use.
   * @param {Partial<Query>} patch
   */
  const query = (patch) => {
    model.set("query", { ...model.get("query"), ...patch });
    model.save_changes();
  };
  const asked = () => model.get("query");
  /** @param {string} key @param {string | null} entry */
  const open = (key, entry = null) => ask(model, { type: "open", key, entry });

  const root = h("div", "turnfold tf-browser");
  // Keys typed here are the browser's: JupyterLab's command-mode shortcuts (arrows move cells,
  // Enter edits one) must not take them (an arrow key on a filter's select had moved the
  // notebook's active cell, and the focus with it, instead of the choice).
  const controls = h("div", "tf-b-controls");
  keepKeys(controls);
  const search = h("input", "tf-b-search", { type: "search", placeholder: strings().search ?? "", "aria-label": strings().search ?? "" });
  limitQuery(search); // no longer query than Python searches (query.js)
  const hint = text("span", "tf-b-keys", strings().keys);
  const bar = h("div", "tf-b-bar");
  bar.append(search, hint);
  const hits = new HitList(strings, (key, entry) => open(key, entry), () => {
    search.value = "";
    ask(model, { type: "search", query: "" });
    // The list (and the hit or the button that had the focus) hides: the keyboard goes back
    // to where the search began rather than to the page's body.
    search.focus();
  });
  // A new view of a browser with hits (its cell run again) says what they are of.
  search.value = model.get("_hits")?.query ?? "";
  let filters = new Filters(model.get("_choices"), strings, query, asked);
  const closeRun = () => ask(model, { type: "close_run" });
  const grid = new RunsGrid({ query, open: (key) => open(key), close: closeRun }, strings);
  const pager = h("div", "tf-b-pager");
  const previous = h("button", "", { type: "button" });
  const next = h("button", "", { type: "button" });
  previous.textContent = strings().previous ?? "";
  next.textContent = strings().next ?? "";
  previous.addEventListener("click", () => grid.previous("first"));
  next.addEventListener("click", () => grid.next());
  const range = h("span", "tf-b-range", { "aria-live": "polite" });
  const problems = h("span", "tf-b-problems");
  // The corpus's rows, errors and files skipped, as `repr(corpus)` says them: a file the scan
  // could not use is counted here even when no row shows it.
  const counts = h("span", "tf-b-counts");
  pager.append(previous, range, next, counts, problems);
  controls.append(bar, hits.element, filters.element, grid.scroller, pager);
  // The run open under the table, and the control that closes it: outside the transcript's own
  // element, which its widget's view owns.
  const shown = h("div", "tf-b-shown");
  const shownBar = h("div", "tf-b-shown-bar");
  const close = text("button", "tf-b-close-run", strings().close_run);
  close.setAttribute("type", "button");
  close.addEventListener("click", () => {
    closeRun();
    // The button hides with the run: the keyboard goes back to the table, on the row closed.
    grid.focus();
  });
  keepKeys(shownBar);
  shownBar.append(close);
  const transcript = h("div", "tf-b-transcript");
  shown.append(shownBar, transcript);
  root.append(controls, shown);
  el.replaceChildren(root);

  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") ask(model, { type: "search", query: search.value });
    else if (event.key === "Escape") {
      search.value = "";
      ask(model, { type: "search", query: "" });
    }
  });
  controls.addEventListener("keydown", (event) => {
    const target = /** @type {HTMLElement} */ (event.target);
    const typing = target.closest("input, select, textarea");
    if (event.key === "/" && !typing) {
      search.focus();
      event.preventDefault();
    }
  });

  function drawPage() {
    const page = model.get("_page");
    grid.draw(page);
    filters.update(page);
    range.textContent = page.label;
    problems.textContent = page.problems.join(" · ");
    previous.disabled = page.query.offset === 0;
    next.disabled = page.query.offset + page.rows.length >= page.total;
  }
  function drawSelected() {
    const key = model.get("selected");
    grid.markOpen(key);
    shown.hidden = key == null;
  }
  const drawHits = () => hits.update(model.get("_hits"));
  const drawCounts = () => {
    counts.textContent = model.get("_counts") ?? "";
  };
  // Another corpus (a rescan set from the kernel) offers other values to filter by.
  const drawChoices = () => {
    const fresh = new Filters(model.get("_choices"), strings, query, asked);
    fresh.update(model.get("_page"));
    filters.element.replaceWith(fresh.element);
    filters = fresh;
  };

  model.on("change:_page", drawPage);
  model.on("change:selected", drawSelected);
  model.on("change:_hits", drawHits);
  model.on("change:_counts", drawCounts);
  model.on("change:_choices", drawChoices);
  drawPage();
  drawSelected();
  drawHits();
  drawCounts();

  // The run a reader opens shows under the table in the one transcript widget the kernel makes
  // with the first run and reuses for every other (its own view, drawn through anywidget's host).
  let mounted = false;
  const mountTranscript = () => {
    const ref = model.get("_transcript");
    if (mounted || !ref || !host) return;
    mounted = true;
    host
      .getWidget(ref)
      .then((child) => child.render({ el: transcript, signal }))
      .catch((error) => console.warn("turnfold: could not draw the transcript widget", error));
  };
  model.on("change:_transcript", mountTranscript);
  mountTranscript();

  return () => {
    model.off("change:_page", drawPage);
    model.off("change:selected", drawSelected);
    model.off("change:_hits", drawHits);
    model.off("change:_counts", drawCounts);
    model.off("change:_choices", drawChoices);
    model.off("change:_transcript", mountTranscript);
  };
}

export default { render };
