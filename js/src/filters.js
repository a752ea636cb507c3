// @ts-check
/**
 * The browser's filters and column picker (spec B-1), drawn from what Python offers (`_choices`).
 *
 * Each control stands for one filter `column op value` Python defined (agent, model and outcome
 * choices with their counts, "has failures", a date range); any other filter is the reader's own,
 * made from a column, one of the operators Python allows for it and a value, and shown as a chip.
 * The controls only write the query's `filters` and `columns`; Python checks them, applies them
 * and says in the page what it could not use.
 */

import { h, text } from "./dom.js";

/** @typedef {import("./browser").Choices} Choices */
/** @typedef {import("./browser").Control} Control */
/** @typedef {import("./browser").Filter} Filter */
/** @typedef {import("./browser").Page} Page */
/** @typedef {import("./browser").Query} Query */

/** @param {Filter} filter @param {{column: string, op: string}} control */
const same = (filter, control) => filter.column === control.column && filter.op === control.op;

export class Filters {
  /**
   * @param {Choices} choices
   * @param {() => Record<string, string>} strings
   * @param {(patch: Partial<Query>) => void} query  ask for rows with these filters or columns
   * @param {() => Query} asked  the query asked for last, answered or not: a change builds on it
   */
  constructor(choices, strings, query, asked) {
    this.choices = choices;
    this.strings = strings;
    this.query = query;
    this.asked = asked;
    /** @type {Query | null} */
    this.current = null;
    this.element = h("div", "tf-b-filters");
    /** @type {{control: Control, input: HTMLInputElement | HTMLSelectElement}[]} */
    this.inputs = choices.controls.map((control) => this.control(control));
    this.chips = h("span", "tf-b-chips");
    this.clear = text("button", "tf-b-clear", strings().clear);
    this.clear.setAttribute("type", "button");
    this.clear.addEventListener("click", () => this.query({ filters: [], offset: 0 }));
    this.columns = h("details", "tf-b-columns");
    this.columnBoxes = this.columnPicker();
    this.element.append(...this.inputs.map(({ input }) => /** @type {HTMLElement} */ (input.parentElement)), this.builder(), this.chips, this.clear, this.columns);
  }

  /** @param {Control} control */
  control(control) {
    const wrap = h("label", `tf-b-control tf-b-${control.kind}`);
    /** @type {HTMLInputElement | HTMLSelectElement} */
    let input;
    if (control.kind === "choice") {
      input = h("select", "");
      input.append(new Option(this.strings().any ?? "", ""));
      for (const option of control.options) input.append(new Option(`${option.label} (${option.count})`, option.value));
    } else {
      input = h("input", "", { type: control.kind === "flag" ? "checkbox" : "date" });
    }
    input.addEventListener("change", () => this.set(control, this.valueOf(control, input)));
    wrap.append(text("span", "", control.label), input);
    return { control, input };
  }

  /** @param {Control} control @param {HTMLInputElement | HTMLSelectElement} input @returns {string | number | null} */
  valueOf(control, input) {
    if (control.kind === "flag") return /** @type {HTMLInputElement} */ (input).checked ? control.value : null;
    return input.value || null;
  }

  /** Replace the filter a control stands for. @param {{column: string, op: Filter["op"]}} control @param {string | number | null} value */
  set(control, value) {
    const filters = (this.asked().filters ?? []).filter((filter) => !same(filter, control));
    if (value !== null) filters.push({ column: control.column, op: control.op, value });
    this.query({ filters, offset: 0 });
  }

  /** The reader's own filter: a column, an operator it takes, a value. */
  builder() {
    const wrap = h("span", "tf-b-builder");
    const column = h("select", "", { "aria-label": this.strings().filters ?? "" });
    for (const choice of this.choices.columns) column.append(new Option(choice.label, choice.name));
    const op = h("select", "", { "aria-label": "op" });
    const value = h("input", "", { type: "text", placeholder: this.strings().value ?? "" });
    const fill = () => {
      const choice = this.choices.columns.find((c) => c.name === column.value);
      op.replaceChildren(...(choice?.ops ?? []).map((name) => new Option(this.choices.op_labels?.[name] ?? name, name)));
    };
    fill();
    column.addEventListener("change", fill);
    const add = text("button", "", this.strings().add);
    add.setAttribute("type", "button");
    const submit = () => {
      const filters = [...(this.asked().filters ?? [])];
      filters.push({ column: column.value, op: /** @type {Filter["op"]} */ (op.value), value: value.value || null });
      value.value = "";
      this.query({ filters, offset: 0 });
    };
    add.addEventListener("click", submit);
    value.addEventListener("keydown", (event) => {
      if (event.key === "Enter") submit();
    });
    wrap.append(text("span", "", this.strings().filters), column, op, value, add);
    return wrap;
  }

  /** Which columns the table shows, by a checkbox each. */
  columnPicker() {
    this.columns.append(text("summary", "", this.strings().columns));
    const list = h("div", "tf-b-column-list");
    /** @type {Map<string, HTMLInputElement>} */
    const boxes = new Map();
    for (const choice of this.choices.columns) {
      const label = h("label", "");
      const box = h("input", "", { type: "checkbox" });
      box.addEventListener("change", () => {
        const shown = (this.asked().columns ?? []).filter((name) => name !== choice.name);
        if (box.checked) shown.push(choice.name);
        if (shown.length) this.query({ columns: shown });
        else box.checked = true; // a table of no column shows nothing: keep the last one
      });
      label.append(box, text("span", "", choice.label));
      list.append(label);
      boxes.set(choice.name, box);
    }
    this.columns.append(list);
    return boxes;
  }

  /** Show the query a page answered. @param {Page} page */
  update(page) {
    const query = page.query;
    this.current = query;
    for (const { control, input } of this.inputs) {
      const filter = query.filters.find((f) => same(f, control));
      if (input instanceof HTMLInputElement && input.type === "checkbox") input.checked = filter?.value === control.value;
      else input.value = filter?.value == null ? "" : String(filter.value);
    }
    const own = query.filters.filter((f) => !this.choices.controls.some((control) => same(f, control)));
    this.chips.replaceChildren(...own.map((filter) => this.chip(filter)));
    this.clear.hidden = query.filters.length === 0;
    for (const [name, box] of this.columnBoxes) box.checked = query.columns.includes(name);
  }

  /** @param {Filter} filter */
  chip(filter) {
    const label = this.choices.columns.find((c) => c.name === filter.column)?.label ?? filter.column;
    const chip = h("span", "tf-b-chip");
    const remove = text("button", "", "×");
    remove.setAttribute("type", "button");
    remove.setAttribute("aria-label", this.strings().remove ?? "");
    // The asked filter may still hold the value as typed (`"2"` for the 2 shown).
    const other = (/** @type {Filter} */ f) => !same(f, filter) || String(f.value) !== String(filter.value);
    remove.addEventListener("click", () => this.query({ filters: (this.asked().filters ?? []).filter(other), offset: 0 }));
    const op = this.choices.op_labels?.[filter.op] ?? filter.op;
    chip.append(text("span", "", `${label} ${op} ${filter.value ?? "∅"}`), remove);
    return chip;
  }
}
