// @ts-check
/**
 * Draws view-model nodes as DOM (spec W-1). One method per node kind; each reads only the fields
 * docs/view-model.md documents, plus the phrases the widget adds from the catalogs (`fold`,
 * `status_label`, `more_label`, `notes_text`, `form_label`). Nothing here decides what is shown,
 * summarized, grouped or open by default: Python did.
 *
 * Every disclosure is a `<button aria-expanded>` header (keyboard operable, W-3) over a body that
 * is created only when first opened. Open state = the reader's memory on top of the view
 * model's default (P-10, `memory.js`).
 */

import { byKey, escapedText, h, setHtml, text, token } from "./dom.js";
import { NESTED, keysInside } from "./tree.js";

/** @typedef {import("./tree.js").Node} Node */
/** @typedef {import("./nodes").TopNode} TopNode */
/** @typedef {import("./nodes").ChildNode} ChildNode */
/** @typedef {import("./nodes").ToolNode} ToolNode */
/** @typedef {import("./memory.js").DisclosureMemory} DisclosureMemory */

/**
 * @typedef {object} Control  what the widget can do with a drawn disclosure
 * @property {string} key
 * @property {(open: boolean) => void} apply  show open or closed (no memory change)
 * @property {HTMLButtonElement} button
 * @property {(spec: DisclosureSpec) => void} respec  draw the header and class anew from `spec`, which
 *   fills the body from now on, and show the fold as the memory says on top of its default
 * @property {() => HTMLElement | null} body  the body, if it was drawn (it is, once opened)
 */

/**
 * @typedef {object} Loader  what the widget fetches from Python when the reader opens it
 * @property {(key: string) => Node | null | undefined} ready  content already here (undefined: not yet asked for)
 * @property {() => boolean} silent  no kernel answered this view: what must be asked for needs the running notebook
 * @property {(key: string) => Promise<Node | null>} content  the node `key` with what it holds; null when it is gone
 * @property {(key: string, onPart: (text: string, done: boolean) => void) => void} output  the whole output of tool `key`, in parts
 */

/**
 * @typedef {object} DisclosureSpec
 * @property {string} key
 * @property {boolean} defaultOpen  the view model's `open` (P-8)
 * @property {Iterable<string>} [inside]  keys nested inside, for the memory's container rule
 *   (read only when the memory needs them)
 * @property {string} className  classes of the wrapper
 * @property {string} headerClass  classes of the header button
 * @property {(header: HTMLButtonElement) => void} header
 * @property {(body: HTMLElement) => void} body  fills the body, the first time it opens
 * @property {string} [bodyClass]
 * @property {boolean} [rail]  a fold rail in the body's gutter (P-12)
 */

/** How long a vanished hidden-reasoning indicator takes to fade out (P-9). */
export const FADE_MS = 220;

/** How long a fold waits for its content before it says the kernel did not answer. */
const LOAD_TIMEOUT_MS = 5000;

/** Characters of a whole output drawn per animation frame (see `wholeOutput`). */
const BLOCK_CHARS = 64 * 1024;

const chevron = () => h("span", "tf-chev", { "aria-hidden": "true" });
/** The class of a rejected entry's node (Python says which: `rejected_label`). @param {{rejected_label: string | null}} node */
const rejected = (node) => (node.rejected_label ? " tf-rejected" : "");
/** A tool row's classes: its status, struck when cancelled (F-10), muted when rejected. @param {ToolNode} node */
const toolClass = (node) => `tf-tool tf-s-${token(node.status)}${node.struck ? " tf-struck" : ""}${rejected(node)}`;
/** Its label, drawn beside the node, or nothing. @param {HTMLElement} parent @param {{rejected_label: string | null}} node */
const rejectedLabel = (parent, node) => {
  if (node.rejected_label) parent.append(text("span", "tf-rlabel", node.rejected_label));
};
/**
 * A text of the reply (a progress note, the answer): a rejected one's label above it.
 * @param {string} className @param {import("./nodes").ProgressNode | import("./nodes").AnswerNode} node
 */
const prose = (className, node) => {
  const box = setHtml(h("div", className + rejected(node), { "data-key": node.key }), node.html);
  if (node.rejected_label) box.prepend(text("span", "tf-rlabel", node.rejected_label));
  return box;
};
const separator = () => text("span", "tf-sep", "·");

export class Renderer {
  /**
   * @param {DisclosureMemory} memory
   * @param {() => Record<string, string>} strings  the view's own phrases, in the locale
   * @param {Loader} loader
   * @param {(key: string, open: boolean) => void} [onToggle]  told after the reader toggles a
   *   disclosure (a compare view opens its counterpart on the other side, B-3)
   */
  constructor(memory, strings, loader, onToggle = () => {}) {
    this.memory = memory;
    this.strings = strings;
    this.loader = loader;
    this.onToggle = onToggle;
    /** @type {WeakMap<Element, Control>} */
    this.controls = new WeakMap();
  }

  /** The control of the disclosure drawn for `key` under `root`, if drawn. @param {ParentNode} root @param {string} key */
  control(root, key) {
    const element = byKey(root, key);
    return element ? this.controls.get(element) : undefined;
  }

  // --- the disclosure ---------------------------------------------------------------------------

  /** @param {DisclosureSpec} first */
  disclosure(first) {
    let spec = first;
    const wrap = h("div", `tf-disc ${spec.className}`, { "data-key": spec.key });
    const button = h("button", `tf-toggle ${spec.headerClass}`, { type: "button", "aria-expanded": "false" });
    spec.header(button);
    wrap.append(button);
    /** @type {HTMLElement | null} */
    let body = null;
    /** @param {boolean} open */
    const apply = (open) => {
      button.setAttribute("aria-expanded", String(open));
      wrap.classList.toggle("tf-open", open);
      if (open && body === null) {
        // what a closed disclosure holds is drawn only when it is first opened, from the
        // latest node a patch left (`respec`).
        body = h("div", `tf-body ${spec.bodyClass ?? ""}`.trim());
        if (spec.rail) body.append(this.rail(spec.key, apply, button));
        spec.body(body);
        button.after(body); // right under its header, above anything always shown
      }
      if (body) body.hidden = !open;
    };
    button.addEventListener("click", () => {
      const open = this.memory.toggle(spec.key, button.getAttribute("aria-expanded") === "true");
      apply(open);
      this.onToggle(spec.key, open);
    });
    /** @param {DisclosureSpec} next */
    const respec = (next) => {
      // The wrapper's class follows the node too (a summary row turns rejected or stops being
      // so). Only the spec's own classes are swapped: the open state and what the widget marks
      // for a while (a search hit, a revealed row) stay.
      wrap.classList.remove(...spec.className.split(" ").filter(Boolean));
      spec = next;
      wrap.classList.add(...spec.className.split(" ").filter(Boolean));
      button.replaceChildren();
      spec.header(button);
      apply(this.memory.isOpen(spec.key, spec.defaultOpen, spec.inside ?? []));
    };
    this.controls.set(wrap, { key: spec.key, apply, button, respec, body: () => body });
    apply(this.memory.isOpen(spec.key, spec.defaultOpen, spec.inside ?? []));
    return wrap;
  }

  /**
   * P-12: the group's fold rail, in the 12 px gutter of its body: invisible at rest, a 2 px bar
   * on hover or focus; clicking it closes the group. Mouse-only: the header is the keyboard and
   * screen-reader control, so the rail stays out of the tab order and the accessibility tree.
   * @param {string} key @param {(open: boolean) => void} apply @param {HTMLButtonElement} header
   */
  rail(key, apply, header) {
    const rail = h("button", "tf-rail", {
      type: "button",
      tabindex: "-1",
      "aria-hidden": "true",
      title: this.strings().close_group ?? "",
    });
    rail.addEventListener("click", (event) => {
      event.stopPropagation();
      this.memory.setOpen(key, false);
      apply(false);
      header.focus({ preventScroll: true });
    });
    return rail;
  }

  /**
   * fill `body` with the content of `key`, which Python sent only as a header: at once if it
   * is already here (a reveal or search brings it along), otherwise after asking for it.
   * @template {Node} T
   * @param {HTMLElement} body @param {string} key @param {(node: T) => void} fill  the content
   *   of `key`: a node of the kind that was drawn with its content left out
   */
  onDemand(body, key, fill) {
    const here = /** @type {T | null | undefined} */ (this.loader.ready(key));
    if (here !== undefined) {
      if (here) fill(here);
      return;
    }
    const unavailable = () => this.strings().unavailable ?? "";
    const waiting = text("div", "tf-note tf-loading", this.loader.silent() ? unavailable() : this.strings().loading ?? "…");
    waiting.setAttribute("role", "status");
    body.append(waiting);
    // No kernel (a notebook opened with its saved widget state, N-1) never answers: say so, and
    // still draw the content should the answer come after all.
    const slow = setTimeout(() => {
      waiting.textContent = unavailable();
    }, LOAD_TIMEOUT_MS);
    this.loader.content(key).then((node) => {
      clearTimeout(slow);
      waiting.remove();
      if (node) fill(/** @type {T} */ (node));
    });
  }

  // --- top level --------------------------------------------------------------------------------

  /** @param {TopNode} node @returns {HTMLElement} */
  top(node) {
    switch (node.kind) {
      case "user":
        return this.user(node);
      case "system":
        return setHtml(h("div", `tf-system tf-${token(node.level)}`, { "data-key": node.key }), node.html);
      case "compaction":
        return this.compaction(node);
      case "turn":
        return this.turn(node);
      default: {
        /** @type {never} */
        const unknown = node; // tsc: a kind of TopNode this switch does not draw
        // At run time a kind this view does not know yet goes where unknown children go.
        return this.child(/** @type {ChildNode} */ (/** @type {unknown} */ (unknown)));
      }
    }
  }

  /** U-3: the session's facts, one line above the turns; each fact's fuller form is its title. @param {import("./nodes").SessionNode} session */
  session(session) {
    const line = h("div", "tf-session", { "data-key": session.key });
    session.parts.forEach((part, index) => {
      if (index) line.append(separator());
      const span = text("span", `tf-sp tf-sp-${token(part.name)}`, part.text);
      if (part.title) span.title = part.title;
      line.append(span);
    });
    return line;
  }

  /** H-6: the run's outcome and score, one line above the turns. @param {import("./nodes").OutcomeNode} outcome */
  outcome(outcome) {
    const line = text("div", "tf-outcome", outcome.text);
    line.dataset.status = String(outcome.status ?? "other");
    return line;
  }

  /** L-4: the loader's warnings, one quiet closed notice. @param {import("./nodes").NoticeNode} notice */
  notice(notice) {
    return this.disclosure({
      key: notice.key,
      defaultOpen: false,
      className: "tf-notice",
      headerClass: "tf-row",
      header: (button) => button.append(text("span", "tf-clip", notice.text), chevron()),
      body: (body) => {
        const list = h("ul", "");
        for (const item of notice.items ?? []) list.append(escapedText("li", "", item));
        body.append(list);
      },
    });
  }

  /** @param {import("./nodes").UserNode} node */
  user(node) {
    const box = h("div", "tf-user", { "data-key": node.key });
    const body = h("div", "tf-utext");
    if (node.command) body.append(escapedText("code", "tf-cmd", node.command), " ");
    body.append(setHtml(h("span", ""), node.html));
    if (node.more_label) body.append(this.more(`${node.key}#more`, node.more_label, node.more_html));
    box.append(text("div", "tf-ulabel", node.label), this.capped(node, body, false));
    return box;
  }

  /** @param {import("./nodes").CompactionNode} node */
  compaction(node) {
    if (!node.summary_html) {
      const line = h("div", "tf-divider", { "data-key": node.key });
      line.append(text("span", "", node.text));
      return line;
    }
    return this.disclosure({
      key: node.key,
      defaultOpen: false,
      className: "tf-compaction",
      headerClass: "tf-divider",
      header: (button) => button.append(text("span", "", node.text), chevron()),
      body: (body) => setHtml(body, node.summary_html),
    });
  }

  // --- a turn (P-1, P-3, P-7) -------------------------------------------------------------------

  /** @param {import("./nodes").TurnNode} node */
  turn(node) {
    const section = h("section", `tf-turn tf-${token(node.status)}`, { "data-key": node.key });
    if (node.process) section.append(this.disclosure(this.processSpec(node, node.process)));
    else {
      const head = h("div", "tf-head");
      this.turnHeader(head, node.header, false);
      section.append(head);
    }
    this.turnTail(section, node);
    return section;
  }

  /** P-3, P-2: what follows the process: the surfaces outside the fold, then the answer. @param {HTMLElement} section @param {import("./nodes").TurnNode} node */
  turnTail(section, node) {
    for (const surface of node.outside ?? []) section.append(this.outside(surface));
    const answer = node.answer;
    if (answer) {
      section.append(this.capped(answer, prose(answer.tentative ? "tf-answer tf-tentative" : "tf-answer", answer)));
    }
  }

  /**
   * The disclosure of a turn's process, under the turn's header.
   * @param {import("./nodes").TurnNode} node @param {import("./nodes").ProcessNode} process
   * @returns {DisclosureSpec}
   */
  processSpec(node, process) {
    return {
      key: process.key,
      defaultOpen: Boolean(process.open),
      inside: keysUnder(process.children),
      className: "tf-process",
      headerClass: "tf-head",
      header: (button) => this.turnHeader(button, node.header, true),
      bodyClass: "tf-pbody",
      body: (body) =>
        process.deferred
          ? this.onDemand(body, process.key, (/** @type {import("./nodes").ProcessNode} */ full) =>
              this.children(body, full.children),
            )
          : this.children(body, process.children),
    };
  }

  // --- patched in place (W-2) -------------------------------------------------------------------

  /**
   * Make `element`, drawn for an earlier form of `node`, show `node` (a patch applied to it,
   * `tree.applyNodePatch`), redrawing only what `patch` says changed: fields of its own, and in
   * its list of nested nodes the ones upserted, removed or changed. Folds stay as they were, and
   * a body never opened stays undrawn (it draws the latest node when it opens, Q-2). False when
   * it cannot (a process that appeared, went, or was deferred): the caller draws `node` anew.
   * @param {Element} element @param {Node} node @param {import("./messages").NodePatch} patch
   * @returns {boolean}
   */
  update(element, node, patch) {
    switch (node.kind) {
      case "turn":
        return this.updateTurn(/** @type {HTMLElement} */ (element), node, patch);
      case "group":
        return this.updateList(element, node, patch, this.groupSpec(node));
      case "summary":
        return this.updateList(element, node, patch, this.summarySpec(node));
      case "batch":
        return this.updateBatch(/** @type {HTMLElement} */ (element), node, patch);
      case "tool":
        return this.updateTool(element, node, patch);
      default:
        return false;
    }
  }

  /**
   * A tool whose sub-agent's transcript grew (W-2): the sub-agent's nodes patched where its
   * body was drawn; its row drawn anew (false) when the tool's own fields changed.
   * @param {Element} row @param {ToolNode} node @param {import("./messages").NodePatch} patch
   */
  updateTool(row, node, patch) {
    if (Object.keys(patch.fields ?? {}).length) return false;
    const control = this.controls.get(row);
    if (!control) return false;
    const body = control.body();
    control.respec(this.toolSpec(node));
    if (!body) return true; // drawn from the latest node when it opens
    const nested = /** @type {HTMLElement | null} */ (body.querySelector(":scope > .tf-subagent"));
    if (!nested) return false;
    return this.patchList(nested, /** @type {Node[]} */ (node.subagent?.nodes ?? []), patch, (top) => this.top(/** @type {TopNode} */ (top)));
  }

  /** @param {HTMLElement} section @param {import("./nodes").TurnNode} node @param {import("./messages").NodePatch} patch */
  updateTurn(section, node, patch) {
    const fields = patch.fields ?? {};
    if ("process" in fields) return false;
    section.className = `tf-turn tf-${token(node.status)}`;
    const process = node.process;
    const disclosure = process ? childByKey(section, process.key) : null;
    if (process && !disclosure) return false;
    if (process && disclosure) {
      const change = (patch.change ?? []).find((nested) => nested.key === process.key);
      if (change || "header" in fields) {
        if (!this.updateList(disclosure, process, change ?? { key: process.key }, this.processSpec(node, process))) return false;
      }
    } else if ("header" in fields) {
      const head = section.querySelector(":scope > .tf-head");
      if (!head) return false;
      head.replaceChildren();
      this.turnHeader(/** @type {HTMLElement} */ (head), node.header, false);
    }
    if ("outside" in fields || "answer" in fields) {
      for (const old of section.querySelectorAll(":scope > .tf-outside, :scope > .tf-answer")) old.remove();
      this.turnTail(section, node);
    }
    return true;
  }

  /**
   * A disclosure that holds a list (a process, a group, a summary row): its header and fold from
   * `spec`, then, if its body was drawn, the changes to its list.
   * @param {Element} element @param {Node} node @param {import("./messages").NodePatch} patch @param {DisclosureSpec} spec
   */
  updateList(element, node, patch, spec) {
    const control = this.controls.get(element);
    if (!control) return false;
    const body = control.body(); // before respec, which may draw it whole from `node`
    const listChanged = Boolean(patch.upsert?.length || patch.remove?.length || patch.change?.length);
    // A deferred process's body was drawn from content fetched by key, which the patch does not
    // describe: drawn anew, it fetches the new content.
    if (body && listChanged && /** @type {{deferred?: boolean}} */ (node).deferred) return false;
    control.respec(spec);
    if (!body || !listChanged) return true;
    const field = NESTED[node.kind];
    return this.patchList(body, /** @type {Node[]} */ (/** @type {Record<string, any>} */ (node)[field] ?? []), patch);
  }

  /** F-10 … F-15: a batch's rows patched, its memory and label lines drawn anew if they changed. @param {HTMLElement} box @param {import("./nodes").BatchNode} node @param {import("./messages").NodePatch} patch */
  updateBatch(box, node, patch) {
    const fields = patch.fields ?? {};
    if (!this.patchList(box, node.rows ?? [], patch)) return false;
    if ("memory" in fields || "label" in fields) {
      for (const line of box.querySelectorAll(":scope > .tf-memory, :scope > .tf-label")) line.remove();
      if (node.memory) box.append(text("div", "tf-row tf-dim tf-memory", node.memory));
      if (node.label) box.append(text("div", "tf-row tf-dim tf-label", node.label));
    }
    return true;
  }

  /**
   * The keyed children of `container` after `patch`'s changes to its list: removed ones go (a
   * hidden-reasoning indicator fades out, P-9), upserted ones are drawn and put after their
   * anchor (in place of their old element), changed ones are patched in place.
   * @param {HTMLElement} container @param {Node[]} items  the list now @param {import("./messages").NodePatch} patch
   * @param {(node: Node) => HTMLElement} [draw]  how a node of the list is drawn (a sub-agent's are top-level nodes)
   */
  patchList(container, items, patch, draw = (node) => this.child(/** @type {ChildNode} */ (node))) {
    // The keyed children by key, read once and kept as they change: a followed run's group
    // gains a hundred batches per patch among hundreds, each looked up twice (itself, its anchor).
    /** @type {Map<string, HTMLElement> | null} */
    let index = null;
    /** @param {string} key @returns {HTMLElement | null} */
    const drawn = (key) => {
      if (index === null) {
        index = new Map();
        for (const child of container.children) {
          const own = /** @type {HTMLElement} */ (child).dataset.key;
          if (own && !index.has(own)) index.set(own, /** @type {HTMLElement} */ (child));
        }
      }
      return index.get(key) ?? null;
    };
    /** @param {string} key @param {HTMLElement | null} element */
    const keep = (key, element) => {
      if (index === null) return;
      if (element) index.set(key, element);
      else index.delete(key);
    };
    for (const key of patch.remove ?? []) {
      const element = drawn(key);
      if (element) this.retire(element);
      keep(key, null);
    }
    for (const { after, node } of patch.upsert ?? []) {
      const old = drawn(node.key);
      const fresh = draw(node);
      const anchor = after == null ? null : drawn(after);
      keep(node.key, fresh);
      if (old && previousKeyed(old) === anchor) replaceKeepingFocus(old, fresh);
      else {
        old?.remove();
        const first = after == null ? container.querySelector(":scope > [data-key]") : null;
        if (anchor) anchor.after(fresh);
        else if (first) first.before(fresh);
        // An empty list (or an anchor not drawn, which never should be): before the batch's
        // memory and label lines, if any, else last.
        else container.insertBefore(fresh, container.querySelector(":scope > .tf-memory, :scope > .tf-label"));
      }
    }
    if (patch.change?.length) {
      const byKey = new Map(items.map((item) => [item.key, item]));
      for (const change of patch.change) {
        const element = drawn(change.key);
        const node = byKey.get(change.key);
        if (!element || !node || this.update(element, node, change)) continue;
        const fresh = draw(node);
        replaceKeepingFocus(element, fresh);
        keep(change.key, fresh);
      }
    }
    return true;
  }

  /** A removed row goes; a hidden-reasoning indicator fades out where it was (P-9). @param {HTMLElement} element */
  retire(element) {
    if (!element.classList.contains("tf-indicator")) {
      element.remove();
      return;
    }
    const ghost = /** @type {HTMLElement} */ (element.cloneNode(true));
    ghost.classList.add("tf-fading");
    ghost.removeAttribute("data-key");
    ghost.removeAttribute("role");
    ghost.setAttribute("aria-hidden", "true");
    element.replaceWith(ghost);
    setTimeout(() => ghost.remove(), FADE_MS);
  }

  /**
   * P-7: status, recorded duration, direct tool count (U-3: then tokens and cost, when the
   * reader asked for them), then the fold indicator right after it.
   * @param {HTMLElement} head @param {import("./nodes").TurnHeader} header @param {boolean} foldable
   */
  turnHeader(head, header, foldable) {
    const status = text("span", "tf-status", header?.label);
    // No duration, and why (its stamps' clock changed): Python words it.
    if (header?.duration_title) status.title = header.duration_title;
    head.append(status);
    for (const part of [header?.duration, header?.count]) {
      if (part) head.append(separator(), text("span", "tf-fixed", part));
    }
    if (header?.usage) {
      const usage = text("span", "tf-fixed", header.usage);
      // U-2: tokens with no cost say why in full on hover, as the session header does.
      if (header.usage_title) usage.title = header.usage_title;
      head.append(separator(), usage);
    }
    if (foldable) head.append(chevron());
  }

  /** P-3: errors, the stop marker and pending decisions, outside the fold. @param {import("./nodes").OutsideNode} node */
  outside(node) {
    if (node.kind === "pending") {
      const box = h("div", "tf-outside tf-pending", { "data-key": node.key });
      box.append(text("div", "tf-plabel", node.label), setHtml(h("div", "tf-ptext"), node.html));
      if (node.options?.length) {
        const list = h("ul", "tf-options");
        for (const option of node.options) list.append(escapedText("li", "", option));
        box.append(list);
      }
      return box;
    }
    const css = node.kind === "error" ? "tf-outside tf-error-box" : "tf-outside tf-abort";
    return setHtml(h("div", css, { "data-key": node.key }), node.html);
  }

  // --- the process (P-4 … P-9) ------------------------------------------------------------------

  /** @param {HTMLElement} parent @param {(ChildNode | import("./nodes").RowNode)[]} nodes */
  children(parent, nodes) {
    for (const node of nodes ?? []) parent.append(this.child(node));
  }

  /** @param {ChildNode | import("./nodes").RowNode} node @returns {HTMLElement} */
  child(node) {
    switch (node.kind) {
      case "group":
        return this.group(node);
      case "thinking":
        return this.thinking(node);
      case "thinking-indicator":
        return this.indicator(node);
      case "progress":
        return this.capped(node, prose("tf-progress", node));
      case "command": {
        const box = h("div", "tf-command", { "data-key": node.key });
        box.append(this.tool(node.tool));
        return box;
      }
      case "batch":
        return this.batch(node);
      case "summary":
        return this.summary(node);
      case "tool":
        return this.tool(node);
      default: {
        /** @type {never} */
        const unknown = node; // tsc: a kind of ChildNode or RowNode this switch does not draw
        // A kind this view does not know yet: say so rather than drop it.
        return text("div", "tf-note", `[${/** @type {{kind: string}} */ (unknown).kind}]`);
      }
    }
  }

  /** P-6, P-12: title · count ▸, rows indented 12 px with the fold rail in the gutter. @param {import("./nodes").GroupNode} node */
  group(node) {
    return this.disclosure(this.groupSpec(node));
  }

  /** @param {import("./nodes").GroupNode} node @returns {DisclosureSpec} */
  groupSpec(node) {
    return {
      key: node.key,
      defaultOpen: Boolean(node.open),
      inside: keysUnder([node], false),
      className: "tf-group",
      headerClass: "tf-row",
      header: (button) => {
        button.append(text("span", "tf-clip", node.title));
        if (node.count) button.append(separator(), text("span", "tf-count", node.count));
        button.append(chevron());
      },
      rail: true,
      body: (body) => this.children(body, node.children),
    };
  }

  /** P-9: a reasoning row; withheld reasoning is labelled, never an empty box. @param {import("./nodes").ThinkingNode} node */
  thinking(node) {
    return this.disclosure({
      key: node.key,
      defaultOpen: Boolean(node.open),
      className: `tf-thinking${rejected(node)}`,
      headerClass: "tf-row",
      header: (button) => {
        button.append(text("span", node.streaming ? "tf-tlabel tf-shimmer" : "tf-tlabel", node.label));
        if (node.form_label) button.append(separator(), text("span", "tf-clip tf-dim", node.form_label));
        rejectedLabel(button, node);
        button.append(chevron());
      },
      bodyClass: "tf-tbody",
      body: (body) => setHtml(body, node.html),
    });
  }

  /** P-9: the shimmering label while hidden reasoning streams (CSS sweep; static under reduced motion). @param {import("./nodes").ThinkingIndicatorNode} node */
  indicator(node) {
    const row = h("div", "tf-row tf-indicator", { "data-key": node.key, role: "status" });
    row.append(text("span", "tf-shimmer", node.label));
    return row;
  }

  /** F-10 … F-15: rows, then the dim memory badges and the dim `● label` line. @param {import("./nodes").BatchNode} node */
  batch(node) {
    const box = h("div", "tf-batch", { "data-key": node.key });
    for (const row of node.rows ?? []) box.append(row.kind === "summary" ? this.summary(row) : this.tool(row));
    if (node.memory) box.append(text("div", "tf-row tf-dim tf-memory", node.memory));
    if (node.label) box.append(text("div", "tf-row tf-dim tf-label", node.label));
    return box;
  }

  /** F-10a: the summary row opens to its tools, each a row of its own. @param {import("./nodes").SummaryNode} node */
  summary(node) {
    return this.disclosure(this.summarySpec(node));
  }

  /** @param {import("./nodes").SummaryNode} node @returns {DisclosureSpec} */
  summarySpec(node) {
    return {
      key: node.key,
      defaultOpen: Boolean(node.open),
      inside: keysUnder([node], false),
      className: `tf-summary${rejected(node)}`,
      headerClass: "tf-row",
      header: (button) => {
        button.append(text("span", "tf-stext tf-clip", node.text));
        rejectedLabel(button, node);
        button.append(chevron());
      },
      body: (body) => this.children(body, node.tools),
    };
  }

  // --- one tool (F-7, F-10, F-12, F-13, P-12) ---------------------------------------------------

  /**
   * The title row; behind it (a disclosure only when something is hidden) the hidden arguments,
   * a folded result, the "no output" note and a sub-agent's own transcript; beneath it what is
   * never folded (shown arguments, an edit's diff, an error's output).
   * @param {ToolNode} node
   */
  tool(node) {
    const fold = node.fold;
    /** @type {HTMLElement} */
    let row;
    if (fold.args || fold.result || fold.note || fold.subagent) {
      row = this.disclosure(this.toolSpec(node));
    } else {
      row = h("div", toolClass(node), { "data-key": node.key });
      const head = h("div", "tf-row tf-tool-head");
      this.toolTitle(head, node);
      row.append(head);
    }
    if (node.args && node.show_args) row.append(this.args(node.args));
    if (node.result && !fold.result) row.append(this.result(node.key, node.result));
    return row;
  }

  /** A tool's row as a disclosure of what it hides. @param {ToolNode} node @returns {DisclosureSpec} */
  toolSpec(node) {
    const fold = node.fold;
    return {
      key: node.key,
      defaultOpen: Boolean(node.open),
      inside: keysUnder([node], false),
      className: toolClass(node),
      headerClass: "tf-row tf-tool-head",
      header: (button) => {
        this.toolTitle(button, node);
        button.append(chevron());
      },
      bodyClass: "tf-tbody",
      body: (body) =>
        node.deferred
          ? this.onDemand(body, node.key, (/** @type {ToolNode} */ full) => this.toolHidden(body, full, full.fold ?? fold))
          : this.toolHidden(body, node, fold),
    };
  }

  /** F-13: the name in bold; the sub-agent line (F-7) or the description; a non-success status. @param {HTMLElement} head @param {ToolNode} node */
  toolTitle(head, node) {
    head.append(escapedText("span", "tf-name tf-fixed", node.name));
    if (node.subagent?.line) head.append(escapedText("span", "tf-agent-line tf-clip", node.subagent.line));
    else if (node.description) head.append(escapedText("span", "tf-desc tf-clip", node.description));
    if (node.status_label) head.append(text("span", "tf-st", node.status_label));
    // A scorer's call, not the agent's (Python says which): labelled as a status is.
    if (node.scoring_label) head.append(text("span", "tf-st tf-scoring", node.scoring_label));
    rejectedLabel(head, node);
  }

  /** @param {HTMLElement} body @param {ToolNode} node @param {import("./nodes").ToolFold} fold */
  toolHidden(body, node, fold) {
    if (fold.args && node.args) body.append(this.args(node.args));
    if (fold.result && node.result) body.append(this.result(node.key, node.result));
    if (fold.note) body.append(text("div", "tf-note", fold.note));
    if (fold.subagent) {
      const nested = h("div", "tf-subagent");
      for (const child of node.subagent?.nodes ?? []) nested.append(this.top(child));
      body.append(nested);
    }
  }

  /** @param {string} args escaped JSON */
  args(args) {
    const box = h("div", "tf-args");
    box.append(text("div", "tf-flabel", this.strings().arguments ?? ""), escapedText("pre", "tf-output tf-json", args));
    return box;
  }

  /** F-12: the capped result, and the rest behind "Show N more lines", never dropped.
   * @param {string} key  the tool's @param {import("./nodes").ResultView} result
   */
  result(key, result) {
    const box = h("div", "tf-result");
    box.append(setHtml(h("div", "tf-result-main"), result.html));
    if (result.more_label) box.append(this.more(`${key}#more`, result.more_label, result.more_html));
    for (const image of result.images ?? []) box.append(setHtml(h("div", "tf-image-box"), image));
    for (const note of result.notes_text ?? []) box.append(text("div", "tf-note", note));
    if (result.all_label) this.wholeButton(key, box, result.all_label);
    return box;
  }

  /**
   * a message the view model cut (past `content.PROSE_CHARS`): what it leaves out, and
   * the control that fetches the whole text, as a capped output's.
   * @param {import("./nodes").ProseNode} node @param {HTMLElement} box
   * @param {boolean} [note]  whether to write the note (a prompt's is inside its "show more")
   */
  capped(node, box, note = true) {
    if (!node.all_label) return box;
    if (note && node.omitted_label) box.append(text("div", "tf-note tf-omitted", node.omitted_label));
    this.wholeButton(node.key, box, node.all_label);
    return box;
  }

  /** The button that replaces `box`'s capped content by the whole, fetched from the kernel.
   * @param {string} key @param {HTMLElement} box @param {string} label */
  wholeButton(key, box, label) {
    const all = text("button", "tf-row tf-more-head tf-all", label);
    all.setAttribute("type", "button");
    all.addEventListener("click", () => this.wholeOutput(key, box, all));
    box.append(all);
  }

  /**
   * F-12: the rest of a capped output or message behind "Show N more lines", drawn when opened.
   * @param {string} key @param {string} label @param {string | undefined} html
   */
  more(key, label, html) {
    return this.disclosure({
      key,
      defaultOpen: false,
      className: "tf-more",
      headerClass: "tf-row tf-more-head",
      header: (button) => button.append(text("span", "", label), chevron()),
      body: (body) => setHtml(body, html),
    });
  }

  /**
   * F-12: the whole of an output the view model capped, fetched on request as plain text. Each
   * part becomes its own block, one per animation frame, and blocks off screen skip layout
   * (`content-visibility`), so even megabytes never hold the page for more than a frame.
   * @param {string} key @param {HTMLElement} box @param {HTMLElement} button
   */
  wholeOutput(key, box, button) {
    const capped = [...box.children].filter((child) => child !== button);
    const whole = h("div", "tf-whole");
    const waiting = text("div", "tf-note tf-loading", this.strings().loading ?? "…");
    waiting.setAttribute("role", "status");
    button.replaceWith(waiting);
    box.append(whole);
    const slow = setTimeout(() => {
      waiting.textContent = this.strings().unavailable ?? "";
    }, LOAD_TIMEOUT_MS);
    let started = false;
    const start = () => {
      // The capped part stays until the whole arrives: with no kernel, it is all there is.
      started = true;
      clearTimeout(slow);
      waiting.remove();
      for (const child of capped) /** @type {HTMLElement} */ (child).hidden = true;
    };
    /** @type {string[]} */
    const queue = [];
    let scheduled = false;
    const drain = () => {
      scheduled = false;
      const part = queue.shift();
      if (part === undefined) return;
      whole.append(text("pre", "tf-output tf-text tf-chunk", part));
      if (queue.length) schedule();
    };
    const schedule = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(drain);
    };
    // Blocks end at line ends (a line split between two blocks would read as two lines) and hold
    // about BLOCK_CHARS each: one part of a message is several frames of work.
    let carry = "";
    this.loader.output(key, (part, done) => {
      if (!started) start();
      let rest = carry + part;
      carry = "";
      while (rest.length > BLOCK_CHARS || (done && rest)) {
        const end = rest.length > BLOCK_CHARS ? rest.lastIndexOf("\n", BLOCK_CHARS - 1) + 1 : rest.length;
        const cut = end > 0 ? end : Math.min(rest.length, BLOCK_CHARS); // one very long line: split it
        queue.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      carry = rest;
      if (done && !queue.length && !whole.childElementCount) queue.push(""); // an empty output
      schedule();
    });
  }
}

/**
 * Keys of every node in `nodes` and below (`own`: their own keys too), walked only when read:
 * the memory reads them only when the reader chose something (a long turn's process and its
 * live group are redrawn at every patch).
 * @param {Node[]} nodes @param {boolean} [own] @returns {Iterable<string>}
 */
function keysUnder(nodes, own = true) {
  return {
    *[Symbol.iterator]() {
      for (const node of nodes ?? []) {
        if (own) yield node.key;
        yield* keysInside(node);
      }
    },
  };
}

/** The nearest keyed element before `element` among its siblings. @param {Element} element */
function previousKeyed(element) {
  let before = element.previousElementSibling;
  while (before && !(/** @type {HTMLElement} */ (before).dataset.key)) before = before.previousElementSibling;
  return before;
}

/** The child of `parent` drawn for `key`. @param {Element} parent @param {string} key */
function childByKey(parent, key) {
  for (const child of parent.children) if (/** @type {HTMLElement} */ (child).dataset.key === key) return child;
  return null;
}

/**
 * `old` replaced by `fresh`, keyboard focus moving to the same disclosure's header or element in
 * `fresh` if it was inside `old`.
 * @param {HTMLElement} old @param {HTMLElement} fresh
 */
export function replaceKeepingFocus(old, fresh) {
  const active = document.activeElement;
  const focused = active && old.contains(active) ? /** @type {HTMLElement | null} */ (active.closest("[data-key]")) : null;
  old.replaceWith(fresh);
  if (!focused) return;
  const header = active?.classList.contains("tf-toggle") ?? false;
  queueMicrotask(() => {
    const target = byKey(fresh, focused.dataset.key ?? "") ?? (fresh.dataset.key === focused.dataset.key ? fresh : null);
    const element = header ? target?.querySelector(":scope > .tf-toggle") : target;
    /** @type {HTMLElement | null | undefined} */ (element)?.focus({ preventScroll: true });
  });
}
