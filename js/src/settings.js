// @ts-check
/**
 * The settings panel's own view (spec T-4, N-2), for the front ends that draw only widgets that
 * bring their own ES module, such as marimo; JupyterLab draws the panel's ipywidgets controls
 * instead. It draws the `_panel` state Python computes (each control's label, value, whether it
 * shows and is indented) and sends the reader's choices back; it decides nothing itself.
 *
 * Messages to Python: `{type: "set", name, value}` (a checkbox ticked, a mode chosen) and
 * `{type: "save"}` ("Save as my defaults").
 */

import { h, text } from "./dom.js";

/** @typedef {import("./settings").PanelState} PanelState */
/** @typedef {import("./settings").PanelRow} PanelRow */
/** @typedef {import("@anywidget/types").AnyModel<{_panel: PanelState}>} Model */

/** Scoped to the panel: its host may style nothing of it. */
const STYLE = `
.tf-settings { display: flex; flex-direction: column; gap: 4px; font: inherit; }
.tf-settings .tf-set-child { margin-left: 2em; }
.tf-settings .tf-set-row { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
.tf-settings button {
  font: inherit; color: inherit; background: transparent; cursor: pointer; padding: 1px 8px;
  border: 1px solid color-mix(in srgb, currentColor 35%, transparent); border-radius: 4px;
}
.tf-settings .tf-set-choice button[aria-pressed="true"] {
  font-weight: bold; background: color-mix(in srgb, currentColor 12%, transparent);
}
.tf-settings .tf-set-status { opacity: 0.75; }
`;

/** @param {{model: Model, el: HTMLElement}} context */
function render({ model, el }) {
  const root = h("div", "tf-settings");
  const style = document.createElement("style");
  style.textContent = STYLE;
  /** @param {string} name @param {unknown} value */
  const choose = (name, value) => model.send({ type: "set", name, value });

  /** @param {PanelRow} row */
  function control(row) {
    const css = `tf-set-row${row.child ? " tf-set-child" : ""}`;
    if (row.kind === "choice") {
      const group = h("div", `${css} tf-set-choice`, { role: "group", "data-name": row.name });
      group.setAttribute("aria-label", row.label);
      group.append(text("span", "", row.label));
      for (const option of row.options) {
        const button = text("button", "", option.label);
        button.setAttribute("type", "button");
        button.setAttribute("aria-pressed", String(option.value === row.value));
        button.dataset.value = option.value;
        button.addEventListener("click", () => choose(row.name, option.value));
        group.append(button);
      }
      return group;
    }
    const label = h("label", css, { "data-name": row.name });
    const box = h("input", "", { type: "checkbox" });
    box.checked = row.value === true;
    box.addEventListener("change", () => choose(row.name, box.checked));
    label.append(box, text("span", "", row.label));
    return label;
  }

  /** Draw `_panel` again, keeping the keyboard focus on the control that had it. */
  function draw() {
    const panel = model.get("_panel");
    const focused = /** @type {HTMLElement | null} */ (root.querySelector(":focus"));
    const where = focused && [focused.closest("[data-name]")?.getAttribute("data-name"), focused.dataset.value];
    const rows = (panel?.rows ?? []).filter((row) => row.visible).map(control);
    const save = text("button", "", panel?.save ?? "");
    save.setAttribute("type", "button");
    save.addEventListener("click", () => model.send({ type: "save" }));
    const footer = h("div", "tf-set-row");
    footer.append(save, text("span", "tf-set-status", panel?.status ?? ""));
    root.replaceChildren(style, ...rows, footer);
    if (where) {
      const row = root.querySelector(`[data-name="${CSS.escape(where[0] ?? "")}"]`);
      const target = where[1] ? row?.querySelector(`[data-value="${CSS.escape(where[1])}"]`) : row?.querySelector("input");
      /** @type {HTMLElement | null | undefined} */ (target)?.focus();
    }
  }

  model.on("change:_panel", draw);
  draw();
  el.replaceChildren(root);
  return () => model.off("change:_panel", draw);
}

export default { render };
