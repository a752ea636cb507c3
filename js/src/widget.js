// @ts-check
/**
 * The anywidget view of turnfold's TranscriptWidget (spec W-1 … W-3, P-8 … P-12).
 *
 * It draws the view model Python synced in `_view` (compressed JSON, inflated here: see `unpack`),
 * applies the small patches Python sends as the transcript grows (W-2), keeps the reader's
 * disclosure memory (P-10) in the `_folds` trait, and forwards user intent (a search query) back.
 * It holds no summary, partition, title or default fold logic: the view model carries all of that.
 *
 * It needs no kernel to draw (N-1): a notebook saved with widget state and exported to HTML draws
 * from `_view` alone. A view that fits Python's budget is whole there, so every fold opens; past
 * it, a closed part asks the kernel, and says it needs the running notebook when none answers.
 *
 * Messages from Python (declared in src/turnfold/transport.py, generated as ./messages.d.ts):
 * - `patch` {rev, base, upsert: [{after, node}], remove: [key], change?: [node patch], fields?}:
 *   top-level changes, a node changed inside patched in place (W-2: a growing turn redraws what
 *   it gained); applied only on top of revision `base`, otherwise the view asks for the whole
 *   view again.
 * - `full` {to, rev, view}: the whole current view, for the view that said `hello`.
 * - `replace` {rev, view, folds}: another transcript in place of this one (a session browser's
 *   reused widget): drawn whole, with `folds` as the reader's choices instead of the old ones.
 * - `reveal` {key, path, nodes, to?}: open exactly `path`, once, and scroll to `key` (P-11);
 *   `nodes` holds the content of the deferred disclosures on the path; `to`: the view that asked.
 * - `search` {to, id, hits, total, label, nodes}: the answer to this view's query (P-11).
 * - `content` {to, nodes: {key: node | null}}: what this view asked for with `content`.
 * - `output` {to, key, part, parts, text}: one part of a whole output this view asked for.
 *
 * Messages to Python: `hello`, `search` {query, id}, `content` {keys}, `output` {key}, `reveal`
 * {key} (a timeline's bar clicked, U-4), each with this view's id, so answers go to the view that
 * asked.
 */

import { byKey, h, keepKeys } from "./dom.js";
import { FoldSaver } from "./folds.js";
import { ContentLoader } from "./loader.js";
import { DisclosureMemory } from "./memory.js";
import { FADE_MS, Renderer } from "./render.js";
import { SearchBox } from "./search.js";
import { Timeline } from "./timeline.js";
import { applyPatch } from "./tree.js";

/** @typedef {import("./tree.js").View} View */
/** @typedef {import("./tree.js").Node} Node */
/** @typedef {import("./messages").PatchMessage} Patch */
/** @typedef {import("./messages").KernelMessage} KernelMessage */
/** @typedef {import("./messages").ViewRequest} ViewRequest */
/** The widget's model, typed by the traits it syncs. @typedef {import("@anywidget/types").AnyModel<import("./messages").TranscriptTraits>} Model */

/** Send the kernel one of the requests its transport answers. @param {Model} model @param {ViewRequest} request */
function ask(model, request) {
  model.send(request);
}

/** How long a view waits for the kernel to greet it before it takes it that none runs (N-1). */
const GREETING_TIMEOUT_MS = 5000;
/** How long a revealed entry not yet drawn (its container hidden) waits to be scrolled to. */
const REVEAL_WAIT_MS = 2000;

/** @typedef {import("./messages").SavedView} SavedView */

/** Nothing to draw: a widget whose `_view` is empty, or not yet inflated. */
const EMPTY = /** @type {View} */ (/** @type {unknown} */ ({ nodes: [] }));

/**
 * The `_view` trait inflated: Python packs it as zlib-compressed JSON (`transport.pack_view`),
 * which the browser's own `DecompressionStream("deflate")` reads. A front end hands a binary trait
 * over as a view of its bytes (ipywidgets: a DataView) or as an ArrayBuffer.
 * @param {unknown} data @returns {Promise<SavedView>}
 */
async function unpack(data) {
  const bytes = ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : null;
  if (!bytes || !bytes.byteLength) return { rev: -1, view: EMPTY };
  const inflated = new Blob([/** @type {BlobPart} */ (bytes)]).stream().pipeThrough(new DecompressionStream("deflate"));
  return /** @type {SavedView} */ (JSON.parse(await new Response(inflated).text()));
}

/**
 * The latest view a model was sent, kept from the model's creation on: patches that arrive before
 * a view mounts (a run followed in the cell that displays it keeps the kernel busy, so a late
 * view's `hello` would go unanswered until the run ends) are applied here, and a view mounts on
 * the latest revision instead of the `_view` the widget was created with. Messages that arrive
 * while `_view` is still being inflated wait for it, in order.
 */
class Latest {
  /** @param {Model} model */
  constructor(model) {
    this.view = EMPTY;
    this.rev = -1;
    /** @type {KernelMessage[] | null} messages that came before `_view` was read */
    let early = [];
    /** @param {KernelMessage} message */
    this.follow = (message) => {
      if (early) early.push(message);
      else this.apply(message);
    };
    model.on("msg:custom", this.follow);
    /** @type {Promise<void>} */
    this.ready = unpack(model.get("_view"))
      .then((saved) => {
        this.view = saved.view;
        this.rev = saved.rev;
      })
      // Unread (rev -1), the view greets the kernel as having nothing, and gets the whole view.
      .catch((error) => console.warn("turnfold: could not read the saved view", error))
      .then(() => {
        for (const message of early ?? []) this.apply(message);
        early = null;
      });
  }

  /** @param {KernelMessage} message  untrusted: checked before use */
  apply(message) {
    if (!message || typeof message !== "object") return;
    if (message.type === "patch" && message.base === this.rev) {
      this.view = applyPatch(this.view, message);
      this.rev = message.rev;
    } else if (message.type === "full" && message.view && message.rev > this.rev) {
      this.view = message.view;
      this.rev = message.rev;
    } else if (message.type === "replace" && message.view) {
      this.view = message.view;
      this.rev = message.rev;
    }
  }
}

/** @type {WeakMap<Model, Latest>} */
const latest = new WeakMap();

/** @param {Model} model */
function latestOf(model) {
  let known = latest.get(model);
  if (!known) {
    known = new Latest(model);
    latest.set(model, known);
  }
  return known;
}

/** @param {{model: Model}} context */
function initialize({ model }) {
  const known = latestOf(model);
  return () => model.off("msg:custom", known.follow);
}

/** @param {{model: Model, el: HTMLElement}} context */
async function render({ model, el }) {
  const viewId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  const start = latestOf(model);
  await start.ready;
  /** @type {View} */
  let view = start.view;
  let rev = start.rev;
  let askedForFull = false;
  /** N-1: the kernel has answered this view (false: a saved notebook, or a kernel still busy). */
  let greeted = false;

  const folds = new FoldSaver(model);
  const memory = new DisclosureMemory(model.get("_folds") ?? {}, (changed) => folds.note(changed));
  const strings = () => model.get("_strings") ?? {};

  // content Python sent only as a header, fetched when opened and kept until a patch
  // (which may change it) arrives.
  const loader = new ContentLoader(viewId, (request) => ask(model, request));
  const renderer = new Renderer(memory, strings, loader);
  const timeline = new Timeline(renderer, (key) => ask(model, { type: "reveal", view: viewId, key }));

  const root = h("div", "turnfold tf-widget");
  // A focused disclosure's arrows, Space, `a`, `d d` are the reader's, not the notebook's.
  keepKeys(root);
  const sessionSlot = h("div", "tf-session-slot");
  const timelineSlot = h("div", "tf-timeline-slot");
  const noticeSlot = h("div", "tf-notice-slot");
  const list = h("div", "tf-nodes");
  const search = new SearchBox({
    strings,
    root: list,
    send: (query, id) => ask(model, { type: "search", view: viewId, id, query }),
    open: (paths) => openPaths(paths.flat()),
  });
  root.append(search.element, sessionSlot, timelineSlot, noticeSlot, list);
  el.replaceChildren(root);
  // A reader leaving the view (for the session browser's table, to open another run, whose
  // kernel files this run's folds away at once) has the choices just made saved now: after the
  // delay they had been lost, or saved as the next run's.
  root.addEventListener("focusout", () => {
    if (folds.waiting) folds.save();
  });

  /** @type {Map<string, HTMLElement>} top-level key → its element */
  const drawn = new Map();

  function drawNotice() {
    sessionSlot.replaceChildren(...(view.session ? [renderer.session(view.session)] : []));
    noticeSlot.replaceChildren(
      ...(view.outcome ? [renderer.outcome(view.outcome)] : []),
      ...(view.notice ? [renderer.notice(view.notice)] : []),
    );
  }

  /** U-4: the timeline, its own slot under the header: the header's updates leave it drawn. */
  function drawTimeline() {
    timelineSlot.replaceChildren(...(view.timeline ? [timeline.element(view.timeline)] : []));
  }

  function drawAll() {
    drawn.clear();
    const elements = view.nodes.map((node) => {
      const element = renderer.top(node);
      drawn.set(node.key, element);
      return element;
    });
    list.replaceChildren(...elements);
    drawNotice();
    drawTimeline();
    root.lang = view.locale ?? "en";
    search.reapply();
  }

  /** @param {Patch} patch */
  function patchView(patch) {
    loader.clear(); // what was fetched may have changed with this patch
    view = applyPatch(view, patch);
    for (const key of patch.remove ?? []) {
      drawn.get(key)?.remove();
      drawn.delete(key);
    }
    for (const { after, node } of patch.upsert ?? []) {
      const old = drawn.get(node.key);
      const fresh = redraw(old, node);
      const anchor = after == null ? null : drawn.get(after) ?? null;
      if (old && old.isConnected && old.previousElementSibling === anchor) old.replaceWith(fresh);
      else {
        old?.remove();
        if (anchor) anchor.after(fresh);
        else if (after == null) list.prepend(fresh);
        else list.append(fresh);
      }
      drawn.set(node.key, fresh);
    }
    // W-2: a node changed inside (a growing turn) is patched in place, drawn anew only when the
    // renderer cannot patch it.
    if (patch.change?.length) {
      const nodes = new Map(view.nodes.map((node) => [node.key, node]));
      for (const change of patch.change) {
        const old = drawn.get(change.key);
        const node = nodes.get(change.key);
        if (!old || !node || renderer.update(old, node, change)) continue;
        const fresh = redraw(old, node);
        old.replaceWith(fresh);
        drawn.set(node.key, fresh);
      }
    }
    const fields = patch.fields ?? {};
    if (["session", "notice", "outcome", "locale"].some((field) => field in fields)) drawNotice();
    if ("timeline" in fields) drawTimeline();
    else if (patch.timeline) timeline.patch(patch.timeline);
    if (patch.fields && "locale" in patch.fields) root.lang = view.locale ?? "en";
    search.reapply();
  }

  /**
   * Draw `node` anew in place of `old`, keeping keyboard focus where it was and letting a vanished
   * hidden-reasoning indicator fade out instead of blinking away (P-9).
   * @param {HTMLElement | undefined} old @param {import("./nodes").TopNode} node
   */
  function redraw(old, node) {
    const fresh = renderer.top(node);
    if (!old) return fresh;
    const focused = old.contains(document.activeElement) ? keyedFocus(/** @type {Element} */ (document.activeElement)) : null;
    fadeIndicators(old, fresh);
    if (focused) {
      queueMicrotask(() => {
        const target = byKey(fresh, focused.key);
        const element = focused.header ? target?.querySelector(":scope > .tf-toggle") : target;
        /** @type {HTMLElement | null | undefined} */ (element)?.focus({ preventScroll: true });
      });
    }
    return fresh;
  }

  /** @param {HTMLElement} old @param {HTMLElement} fresh */
  function fadeIndicators(old, fresh) {
    for (const indicator of old.querySelectorAll(".tf-indicator")) {
      const key = /** @type {HTMLElement} */ (indicator).dataset.key ?? "";
      if (byKey(fresh, key)) continue;
      const owner = indicator.parentElement?.closest("[data-key]");
      const body = owner ? byKey(fresh, /** @type {HTMLElement} */ (owner).dataset.key ?? "")?.querySelector(":scope > .tf-body") : null;
      if (!body || /** @type {HTMLElement} */ (body).hidden) continue;
      const ghost = /** @type {HTMLElement} */ (indicator.cloneNode(true));
      ghost.classList.add("tf-fading");
      ghost.removeAttribute("data-key");
      ghost.setAttribute("aria-hidden", "true");
      body.append(ghost);
      setTimeout(() => ghost.remove(), FADE_MS);
    }
  }

  /** Open exactly these keys, once (P-11), drawing lazily created bodies as they open. @param {string[]} keys */
  function openPaths(keys) {
    memory.openPath(keys);
    for (const key of keys) renderer.control(list, key)?.apply(true);
  }

  /**
   * Scroll `target` into view, now or, when it is not drawn yet (a browser's run revealed
   * before its hidden container is shown), as soon as it is: the reveal arrives first.
   * @param {HTMLElement} target
   */
  function scrollWhenShown(target) {
    if (target.getClientRects().length) {
      target.scrollIntoView({ block: "center" });
      return;
    }
    const watch = new ResizeObserver(() => {
      if (!target.getClientRects().length) return;
      watch.disconnect();
      target.scrollIntoView({ block: "center" });
    });
    watch.observe(target);
    // Not shown soon: the reader has moved on, and a late jump would surprise them.
    setTimeout(() => watch.disconnect(), REVEAL_WAIT_MS);
  }

  /** @param {string} key @param {string[]} path */
  function reveal(key, path) {
    openPaths(path);
    const target = byKey(list, key);
    if (!target) return;
    scrollWhenShown(target);
    target.classList.add("tf-revealed");
    setTimeout(() => target.classList.remove("tf-revealed"), 2000);
  }

  function askForFull() {
    if (askedForFull) return;
    askedForFull = true;
    try {
      ask(model, { type: "hello", view: viewId, rev });
    } catch (error) {
      console.warn("turnfold: no kernel to greet", error); // the saved view is all there is
    }
  }

  /** N-1: `_view` renewed (a cell ended): draw it if it is newer than what this view has. */
  const onSaved = () => {
    unpack(model.get("_view")).then((saved) => {
      if (saved.rev <= rev) return;
      view = saved.view;
      rev = saved.rev;
      loader.clear();
      drawAll();
    });
  };

  /** @param {KernelMessage} message  untrusted: checked before use */
  function onMessage(message) {
    if (!message || typeof message !== "object") return;
    if (message.type === "patch") {
      if (message.base === rev) {
        patchView(message);
        rev = message.rev;
      } else if (message.base > rev) {
        askForFull(); // a patch went missing: the whole view comes back, addressed to us
      }
    } else if (message.type === "full" && message.to === viewId) {
      askedForFull = false;
      greeted = true;
      loader.unanswered = false;
      search.element.hidden = false;
      if (message.view && message.rev !== rev) {
        view = message.view;
        rev = message.rev;
        loader.clear();
        drawAll();
      }
    } else if (message.type === "replace" && message.view) {
      // Choices not yet saved were the old transcript's: never saved as the new one's.
      folds.drop();
      askedForFull = false;
      memory.reset(message.folds);
      view = message.view;
      rev = message.rev;
      loader.clear();
      drawAll();
    } else if (message.type === "reveal" && (message.to == null || message.to === viewId)) {
      loader.receive(message.nodes);
      reveal(message.key, message.path ?? []);
    } else if (message.type === "search" && message.to === viewId) {
      loader.receive(message.nodes);
      search.receive(message);
    } else if (message.type === "content" && message.to === viewId) {
      loader.receive(message.nodes);
    } else if (message.type === "output" && message.to === viewId) {
      loader.part(message);
    }
  }

  // P-10: interacting inside a disclosure (pointer, focus, selection) makes it the reader's:
  // it stays open whatever the defaults do later, without being toggled.
  /** @param {EventTarget | Node | null} target */
  function ownAround(target) {
    /** @type {string[]} */
    const keys = [];
    let node = target instanceof Element ? target : /** @type {any} */ (target)?.parentElement ?? null;
    while (node && node !== list) {
      if (node.classList.contains("tf-body") && node.parentElement?.dataset.key) keys.push(node.parentElement.dataset.key);
      node = node.parentElement;
    }
    if (keys.length) memory.own(keys);
  }
  /** @param {Event} event */
  const onInteract = (event) => ownAround(event.target);
  const onSelection = () => {
    const selection = document.getSelection();
    if (selection && !selection.isCollapsed && list.contains(selection.anchorNode)) ownAround(selection.anchorNode);
  };
  list.addEventListener("pointerdown", onInteract);
  list.addEventListener("focusin", onInteract);
  document.addEventListener("selectionchange", onSelection);

  const onStrings = () => search.relabel();
  model.on("msg:custom", onMessage);
  model.on("change:_strings", onStrings);
  model.on("change:_view", onSaved);

  drawAll();
  // A view mounted after the transcript changed (the widget shown again in another cell) gets
  // the current view; until then it shows the latest one this page was sent (or `_view`), so a
  // settled transcript paints closed at once. No answer in time: no kernel runs (a saved
  // notebook), or it is busy; either way, what is not here is said to need it.
  askForFull();
  const greeting = setTimeout(() => {
    // No answer to the greeting in time: closed parts say at once that they need the kernel.
    loader.unanswered = !greeted;
    search.element.hidden = !greeted; // search runs in the kernel: no box that never answers
  }, GREETING_TIMEOUT_MS);

  return () => {
    if (folds.waiting) folds.save();
    clearTimeout(greeting);
    model.off("msg:custom", onMessage);
    model.off("change:_strings", onStrings);
    model.off("change:_view", onSaved);
    document.removeEventListener("selectionchange", onSelection);
    search.destroy();
  };

  /** @param {Element} element */
  function keyedFocus(element) {
    const keyed = /** @type {HTMLElement | null} */ (element.closest("[data-key]"));
    if (!keyed) return null;
    return { key: keyed.dataset.key ?? "", header: element.classList.contains("tf-toggle") };
  }
}

export default { initialize, render };
