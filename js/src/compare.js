// @ts-check
/**
 * The anywidget view of turnfold's CompareWidget (spec B-3): two runs side by side.
 *
 * Python aligned the runs, wrote every header and chose every default fold (the `_compare`
 * view model, declared in src/turnfold/render/compare_nodes.py, generated as ./compare.d.ts);
 * each side's turns are the nodes the transcript view draws, drawn here by the same Renderer.
 * This view only draws them, keeps each side's disclosure memory (P-10) and links the folds
 * Python paired: opening a turn's process on one side opens its counterpart on the other.
 *
 * For two corpora, `_table` holds the page of changed samples Python chose, then of samples only
 * one corpus holds; choosing a row (click, or Enter; the arrow keys move between rows) asks
 * Python for that pair, or that one run (`select` with the row's `only`), and the pager asks
 * for another page (`page`). Content Python deferred is fetched by key
 * as the transcript view fetches it (`content`, `output`, answered by the kernel's transport).
 */

import { h, keepKeys, text, token } from "./dom.js";
import { FoldSaver } from "./folds.js";
import { ContentLoader } from "./loader.js";
import { DisclosureMemory } from "./memory.js";
import { Renderer } from "./render.js";

/** @typedef {import("./compare").CompareView} CompareView */
/** @typedef {import("./compare").CompareSide} CompareSide */
/** @typedef {import("./compare").PairNode} PairNode */
/** @typedef {import("./compare").PairTable} PairTable */
/** @typedef {import("./messages").KernelMessage} KernelMessage */
/** The widget's model, typed by the traits it syncs. @typedef {import("@anywidget/types").AnyModel<import("./compare").CompareTraits>} Model */
/** @typedef {"a" | "b"} Side */

/** @type {Side[]} */
const SIDES = ["a", "b"];

/** @param {{model: Model, el: HTMLElement}} context */
function render({ model, el }) {
  const viewId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  const strings = () => model.get("_strings") ?? {};
  const loader = new ContentLoader(viewId, (request) => model.send(request));

  const root = h("div", "turnfold tf-widget tf-compare");
  // A focused header's or row's keys (arrows, Space, `a`, `d d`) are the reader's, not the
  // notebook's.
  keepKeys(root);
  const tableSlot = h("div", "tf-cmp-table-slot");
  const compareSlot = h("div", "tf-cmp");
  root.append(tableSlot, compareSlot);
  el.replaceChildren(root);

  // --- disclosure memory: one per side of each comparison (P-10) ------------------------------

  const folds = new FoldSaver(model);
  /** @type {Map<string, Record<Side, DisclosureMemory>>} comparison key → its sides' memories */
  const memories = new Map();
  /** @param {string} key @returns {Record<Side, DisclosureMemory>} */
  function memoriesOf(key) {
    const known = memories.get(key);
    if (known) return known;
    const saved = (model.get("_folds") ?? {})[key] ?? {};
    /** @param {Side} side */
    const remember = (side) => (/** @type {import("./memory.js").Choices} */ changed) => folds.note(changed, [key, side]);
    const made = {
      a: new DisclosureMemory(saved.a ?? {}, remember("a")),
      b: new DisclosureMemory(saved.b ?? {}, remember("b")),
    };
    memories.set(key, made);
    return made;
  }

  // --- two runs side by side ------------------------------------------------------------------

  function drawCompare() {
    const view = model.get("_compare");
    loader.clear(); // what was fetched belonged to the comparison shown before
    if (!view) {
      const choose = model.get("_table")?.rows.length ? [text("div", "tf-note", strings().choose)] : [];
      compareSlot.replaceChildren(...choose);
      return;
    }
    const memory = memoriesOf(view.key);
    /** @type {Partial<Record<Side, Renderer>>} */
    const renderers = {};
    // B-3: a toggled process opens or closes its counterpart too, in the other side's memory.
    /** @param {Side} side */
    const link = (side) => (/** @type {string} */ key, /** @type {boolean} */ open) => {
      const other = view.links[key];
      const otherSide = side === "a" ? "b" : "a";
      if (!other) return;
      memory[otherSide].setOpen(other, open);
      renderers[otherSide]?.control(compareSlot, other)?.apply(open);
    };
    for (const side of SIDES) renderers[side] = new Renderer(memory[side], strings, loader, link(side));
    const draw = /** @type {Record<Side, Renderer>} */ (renderers);

    const heads = h("div", "tf-cmp-sides");
    view.sides.forEach((side, index) => heads.append(sideHead(side, draw[SIDES[index]])));
    const pairs = h("div", "tf-cmp-pairs");
    for (const pair of view.pairs) pairs.append(drawPair(pair, view, draw));
    compareSlot.replaceChildren(heads, text("div", "tf-cmp-summary", view.summary), pairs);
    compareSlot.lang = view.locale ?? "en";
  }

  /** A run's name over the header its own view opens with (U-3, H-6, L-4). @param {CompareSide} side @param {Renderer} renderer */
  function sideHead(side, renderer) {
    const head = h("div", "tf-cmp-side", { "data-side": token(side.key) });
    head.append(text("div", "tf-cmp-name", side.name));
    if (side.session) head.append(renderer.session(side.session));
    if (side.outcome) head.append(renderer.outcome(side.outcome));
    if (side.notice) head.append(renderer.notice(side.notice));
    return head;
  }

  /** @param {PairNode} pair @param {CompareView} view @param {Record<Side, Renderer>} draw */
  function drawPair(pair, view, draw) {
    const section = h("section", "tf-pair", { "data-key": pair.key, "data-status": token(pair.header.status) });
    const head = h("div", "tf-pair-head");
    head.append(text("span", "tf-pair-label", pair.header.label), text("span", "tf-sep", "·"));
    head.append(text("span", "tf-pair-status", pair.header.status_label));
    for (const part of pair.header.parts) {
      const changed = part.changed ? " tf-dp-changed" : "";
      head.append(text("span", "tf-sep", "·"), text("span", `tf-dp tf-dp-${token(part.name)}${changed}`, part.text));
    }
    const columns = h("div", "tf-cols");
    SIDES.forEach((side, index) => {
      const column = h("div", "tf-col", { "data-side": side });
      const nodes = pair[side];
      if (nodes) for (const node of nodes) column.append(draw[side].top(node));
      else column.append(text("div", "tf-gap", view.sides[index]?.gap ?? ""));
      columns.append(column);
    });
    section.append(head, columns);
    return section;
  }

  // --- the samples that changed (two corpora) -------------------------------------------------

  function drawTable() {
    const table = model.get("_table");
    if (!table) {
      tableSlot.replaceChildren();
      return;
    }
    // The table is drawn anew on every page and selection: keep the keyboard where it was.
    const active = /** @type {HTMLElement | null} */ (document.activeElement);
    const focused = active && tableSlot.contains(active) ? active.dataset.focus : undefined;
    const box = h("div", "tf-cmp-table-box");
    for (const totals of table.totals) {
      const line = h("div", "tf-cmp-totals", { "data-side": token(totals.side) });
      line.append(text("span", "tf-cmp-name", totals.name), text("span", "tf-sep", "·"), text("span", "", totals.text));
      box.append(line);
    }
    box.append(text("div", "tf-cmp-summary", table.summary));
    if (table.empty) box.append(text("div", "tf-note", table.empty));
    // Nothing changed may still leave samples only one corpus holds, each a row to open.
    if (table.rows.length) box.append(rowsTable(table), pager(table));
    tableSlot.replaceChildren(box);
    if (focused) /** @type {HTMLElement | null} */ (tableSlot.querySelector(`[data-focus="${CSS.escape(focused)}"]`))?.focus();
  }

  /** @param {PairTable} table */
  function rowsTable(table) {
    const grid = h("table", "tf-cmp-table");
    const headRow = h("tr", "");
    for (const column of table.columns) headRow.append(text("th", "", column));
    const head = h("thead", "");
    head.append(headRow);
    const body = h("tbody", "");
    for (const row of table.rows) {
      // A sample only one corpus holds is told apart by its side too (`1` and `"1"` read alike).
      const selected = row.key === table.selected && row.only === table.selected_only;
      const line = h("tr", selected ? "tf-selected" : "", { "data-key": row.key });
      if (row.only) line.dataset.only = token(row.only);
      const pick = text("button", "tf-cmp-pick", row.key);
      pick.setAttribute("type", "button");
      pick.dataset.focus = `row:${row.only ?? ""}:${row.key}`;
      if (selected) pick.setAttribute("aria-current", "true");
      if (row.title) pick.title = row.title;
      pick.addEventListener("click", () => model.send({ type: "select", key: row.key, only: row.only }));
      const first = h("td", "");
      first.append(pick);
      if (row.title) first.append(text("div", "tf-cmp-title tf-clip", row.title));
      const change = text("td", `tf-change tf-change-${token(row.change)}`, row.change_label);
      line.append(first, change, text("td", "", row.a), text("td", "", row.b));
      body.append(line);
    }
    // The arrow keys move between the rows' buttons; Enter or Space chooses one.
    body.addEventListener("keydown", (event) => {
      if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
      const buttons = [...body.querySelectorAll(".tf-cmp-pick")];
      const at = buttons.indexOf(/** @type {Element} */ (event.target));
      const next = buttons[at + (event.key === "ArrowDown" ? 1 : -1)];
      if (at < 0 || !next) return;
      event.preventDefault();
      /** @type {HTMLElement} */ (next).focus();
    });
    grid.append(head, body);
    return grid;
  }

  /** @param {PairTable} table */
  function pager(table) {
    const bar = h("div", "tf-cmp-pager");
    /** @param {string} label @param {string} focus @param {number} page */
    const button = (label, focus, page) => {
      const go = text("button", "tf-cmp-page", label);
      go.setAttribute("type", "button");
      go.dataset.focus = focus;
      if (page < 0 || page >= table.pages) go.setAttribute("disabled", "");
      go.addEventListener("click", () => model.send({ type: "page", page }));
      return go;
    };
    bar.append(
      button(strings().previous ?? "‹", "previous", table.page - 1),
      text("span", "tf-cmp-range", table.range_label),
      button(strings().next ?? "›", "next", table.page + 1),
    );
    return bar;
  }

  // --- messages -------------------------------------------------------------------------------

  /** @param {KernelMessage} message  untrusted: checked before use */
  function onMessage(message) {
    if (!message || typeof message !== "object" || !("to" in message) || message.to !== viewId) return;
    if (message.type === "content") loader.receive(message.nodes);
    else if (message.type === "output") loader.part(message);
  }

  model.on("msg:custom", onMessage);
  model.on("change:_compare", drawCompare);
  model.on("change:_table", drawTable);
  drawTable();
  drawCompare();

  return () => {
    if (folds.waiting) folds.save();
    model.off("msg:custom", onMessage);
    model.off("change:_compare", drawCompare);
    model.off("change:_table", drawTable);
  };
}

export default { render };
