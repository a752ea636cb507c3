// @ts-check
/**
 * Disclosure memory (spec P-10): what the reader opened, closed or took over, keyed by the view
 * model's stable keys, applied on top of the view model's default fold states (P-8).
 *
 * A flat map from key to choice, on purpose: because no entry refers to another, each header
 * toggles only its own level, closing a parent leaves its children's choices in place (reopening
 * restores them) and siblings never act as an accordion. Keys come from entry ids, so choices
 * survive appends, status changes, completion, mode and thinking switches and a single item
 * becoming a group. The map is presentation state: the widget keeps it in its `_folds` trait so a
 * re-mounted view restores it (`folds.js` takes each change there), and it never reaches the
 * transcript or the settings.
 *
 * Choices:
 * - "open" / "closed": the reader toggled the disclosure (or a reveal or search opened it, once).
 * - "owned": the reader interacted inside it (clicked, focused, selected) without toggling it.
 *   It stays open: completion never closes a container the reader is working in.
 */

/** @typedef {"open" | "closed" | "owned"} Choice */
/** Choices by key. @typedef {Map<string, Choice>} Choices */

const CHOICES = new Set(["open", "closed", "owned"]);

export class DisclosureMemory {
  /**
   * @param {Record<string, unknown>} [initial] choices saved earlier (the `_folds` trait)
   * @param {(changed: Choices) => void} [onChange] told after every change, with only the keys
   *   that changed: a click costs the same however many choices the memory holds
   */
  constructor(initial = {}, onChange = () => {}) {
    /** @type {Map<string, Choice>} */
    this.choices = new Map();
    this.reset(initial);
    this.onChange = onChange;
  }

  /**
   * Forget every choice and take these instead (another transcript shown in the same view, whose
   * keys may name other entries). Nothing is saved: the choices came from the kernel.
   * @param {Record<string, unknown>} [initial]
   */
  reset(initial = {}) {
    this.choices.clear();
    for (const [key, value] of Object.entries(initial ?? {})) {
      if (typeof value === "string" && CHOICES.has(value)) this.choices.set(key, /** @type {Choice} */ (value));
    }
  }

  /** @param {string} key @returns {Choice | undefined} */
  choice(key) {
    return this.choices.get(key);
  }

  /**
   * Whether the disclosure `key` shows open.
   *
   * The reader's own choice wins. Without one, a container holding something the reader opened
   * or worked in stays open even if its default says closed (P-10: completion never closes a
   * container that holds something the user opened, focused or selected; this also covers a
   * single opened item that has just become part of a new group). Otherwise the view model's
   * default applies (P-8).
   *
   * @param {string} key
   * @param {boolean} defaultOpen the view model's `open`
   * @param {Iterable<string>} [inside] keys of every disclosure nested in this one
   */
  isOpen(key, defaultOpen, inside = []) {
    if (!this.choices.size) return Boolean(defaultOpen); // nothing chosen: no need to walk `inside`
    const own = this.choices.get(key);
    if (own !== undefined) return own !== "closed";
    for (const nested of inside) {
      const choice = this.choices.get(nested);
      if (choice === "open" || choice === "owned") return true;
    }
    return Boolean(defaultOpen);
  }

  /**
   * The reader clicked the header of `key`, which showed `shownOpen`: flip it, and only it.
   * @param {string} key @param {boolean} shownOpen @returns {boolean} the new state
   */
  toggle(key, shownOpen) {
    this.set(key, shownOpen ? "closed" : "open");
    return !shownOpen;
  }

  /** @param {string} key @param {boolean} open */
  setOpen(key, open) {
    this.set(key, open ? "open" : "closed");
  }

  /**
   * The reader interacted inside these open containers: keep them open from now on, without
   * toggling anything. Containers the reader already decided about keep that decision.
   * @param {Iterable<string>} keys @returns {boolean} whether anything changed
   */
  own(keys) {
    /** @type {Choices} */
    const changed = new Map();
    for (const key of keys) {
      if (!this.choices.has(key)) {
        this.choices.set(key, "owned");
        changed.set(key, "owned");
      }
    }
    if (changed.size) this.onChange(changed);
    return changed.size > 0;
  }

  /**
   * Open exactly these keys, now (P-11: reveal and search open only the ancestor path). This is
   * a one-off request, not a rule: a later manual close of any of them stands.
   * @param {Iterable<string>} keys
   */
  openPath(keys) {
    /** @type {Choices} */
    const changed = new Map();
    for (const key of keys) {
      if (this.choices.get(key) !== "open") {
        this.choices.set(key, "open");
        changed.set(key, "open");
      }
    }
    if (changed.size) this.onChange(changed);
  }

  /** @param {string} key @param {Choice} choice */
  set(key, choice) {
    if (this.choices.get(key) === choice) return;
    this.choices.set(key, choice);
    this.onChange(new Map([[key, choice]]));
  }
}
