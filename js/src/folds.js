// @ts-check
/**
 * The reader's fold choices on their way to a widget's `_folds` trait (P-10), for the
 * transcript view and the comparison view alike.
 *
 * A view once copied, sorted and set every choice it held at every click, so opening n folds one
 * by one cost O(n²) (most of the time of a browser test that opened 10,000 folds). Now a view
 * notes only what changed, which costs the same however many choices it holds, and the trait
 * takes the changes in bursts:
 * - the model, once at the end of the task that made the burst (one pass of a script opening
 *   everything, a reveal's path): views of the widget mounted later and the notebook's saved
 *   widget state read the model, so they have a choice as soon as the reader made it;
 * - the kernel, once the burst has been quiet for SAVE_DELAY_MS.
 * Only the changed keys are laid over what the model holds, so two views of one widget (the same
 * widget shown in two cells) never erase each other's choices, and every level rebuilt has its
 * keys sorted, so the same choices save as the same bytes (nbval).
 */

/** @typedef {import("./memory.js").Choice} Choice */
/** @typedef {import("./memory.js").Choices} Choices */
/** Changes waiting, nested as the trait is: a choice by key, or a level by name. @typedef {Map<string, Choice | Pending>} Pending */
/** What a saver uses of a widget's model. @typedef {{get(name: "_folds"): unknown, set(name: "_folds", value: any): void, save_changes(): void}} FoldModel */

/** Fold choices reach the kernel at most this often. */
export const SAVE_DELAY_MS = 150;

export class FoldSaver {
  /** @param {FoldModel} model */
  constructor(model) {
    this.model = model;
    /** @type {Pending} */
    this.pending = new Map();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.mergeTimer = undefined;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.saveTimer = undefined;
  }

  /** Whether noted choices have yet to reach the kernel. */
  get waiting() {
    return this.saveTimer !== undefined;
  }

  /**
   * Choices that changed, at `path` in the trait: `[]` for a transcript's, `[comparison, side]`
   * for one side of a comparison's.
   * @param {Choices} changed @param {string[]} [path]
   */
  note(changed, path = []) {
    let level = this.pending;
    for (const name of path) {
      let next = level.get(name);
      if (!(next instanceof Map)) {
        next = new Map();
        level.set(name, next);
      }
      level = next;
    }
    for (const [key, choice] of changed) level.set(key, choice);
    this.mergeTimer ??= setTimeout(() => this.merge(), 0);
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.save(), SAVE_DELAY_MS);
  }

  /** Lay the choices noted so far over the model's trait, now. */
  merge() {
    clearTimeout(this.mergeTimer);
    this.mergeTimer = undefined;
    if (!this.pending.size) return;
    const folds = overlay(this.model.get("_folds"), this.pending);
    this.pending = new Map();
    this.model.set("_folds", folds);
  }

  /** Send the kernel what was noted, now (the reader leaves the view). */
  save() {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    this.merge();
    this.model.save_changes();
  }

  /** Forget what was noted and not merged yet: it belonged to a transcript no longer shown. */
  drop() {
    clearTimeout(this.mergeTimer);
    clearTimeout(this.saveTimer);
    this.mergeTimer = this.saveTimer = undefined;
    this.pending = new Map();
  }
}

/**
 * `saved` with `changes` laid over it: a new object, keys sorted, at every level a change
 * reaches; a level no change reaches is kept as it is. Built with `Object.fromEntries`, so a key
 * such as `__proto__` stays a key.
 * @param {unknown} saved @param {Pending} changes @returns {Record<string, unknown>}
 */
function overlay(saved, changes) {
  const all = new Map(saved !== null && typeof saved === "object" ? Object.entries(saved) : []);
  for (const [key, change] of changes) all.set(key, change instanceof Map ? overlay(all.get(key), change) : change);
  return Object.fromEntries([...all].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
