// @ts-check
// The index of a static site of runs (spec B-2): sort by a column, filter by agent, model,
// outcome and failures, and search titles, samples and first prompts, all in the page. Every row
// is in the page already, with what this needs in data attributes written by Python: `data-sort`
// (each cell's value to sort by, in column order: a sample's is its place in the order Python
// counts samples in), `data-text` (title, sample and first prompt, lower-cased), and
// the filters' values. Without script the whole table shows and the filters stay hidden.
(() => {
  const table = document.querySelector("table.tf-runs-table");
  const filters = document.querySelector(".tf-site-filters");
  if (!(table instanceof HTMLTableElement) || !(filters instanceof HTMLElement)) return;
  const body = table.tBodies[0];
  const rows = [...body.rows];
  const search = filters.querySelector('input[type="search"]');
  const choices = [...filters.querySelectorAll("select[data-column]")];
  const failed = filters.querySelector("input[data-failed]");
  const shown = filters.querySelector(".tf-site-shown");

  /** @param {HTMLTableRowElement} row @param {string} name */
  const data = (row, name) => row.getAttribute(`data-${name}`) ?? "";

  const apply = () => {
    const needle = search instanceof HTMLInputElement ? search.value.trim().toLowerCase() : "";
    let count = 0;
    for (const row of rows) {
      const keep =
        data(row, "text").includes(needle) &&
        choices.every((choice) => !(choice instanceof HTMLSelectElement) || !choice.value || data(row, choice.dataset.column ?? "") === choice.value) &&
        (!(failed instanceof HTMLInputElement) || !failed.checked || data(row, "failed") === "1");
      row.hidden = !keep;
      if (keep) count += 1;
    }
    if (shown instanceof HTMLElement) {
      shown.textContent = (shown.dataset.template ?? "").replace("{shown}", String(count)).replace("{total}", String(rows.length));
    }
  };

  /** Order rows by column `at`; missing values last either way. @param {number} at @param {boolean} descending */
  const sort = (at, descending) => {
    /** @param {HTMLTableRowElement} row @returns {string | number | null} */
    const value = (row) => JSON.parse(data(row, "sort") || "[]")[at] ?? null;
    const keyed = rows.map((row, index) => ({ row, index, value: value(row) }));
    keyed.sort((a, b) => {
      if (a.value === null || b.value === null) return a.value === b.value ? a.index - b.index : a.value === null ? 1 : -1;
      const order = a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
      return (descending ? -order : order) || a.index - b.index;
    });
    rows.splice(0, rows.length, ...keyed.map((entry) => entry.row));
    body.append(...rows);
  };

  const heads = [...(table.tHead?.rows[0]?.cells ?? [])];
  heads.forEach((head, at) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = head.textContent;
    head.replaceChildren(button);
    button.addEventListener("click", () => {
      const now = head.getAttribute("aria-sort");
      // Numbers read largest first, words from A; a second click turns the order round.
      const descending = now ? now === "ascending" : head.classList.contains("tf-num");
      for (const other of heads) other.removeAttribute("aria-sort");
      head.setAttribute("aria-sort", descending ? "descending" : "ascending");
      sort(at, descending);
    });
  });
  for (const control of [search, failed, ...choices]) control?.addEventListener("input", apply);
  filters.hidden = false;
  apply();
})();
