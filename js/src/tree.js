// @ts-check
/**
 * The shape of the view model (docs/view-model.md) and the incremental updates the widget sends.
 * Structure only: which fields hold nested nodes. No summary, partition, title or fold-default
 * logic lives in the JS (spec W-1); Python computed all of it.
 */

/** @typedef {import("./nodes").AnyNode} Node */
/** @typedef {import("./nodes").View} View */
/** @typedef {import("./messages").PatchMessage} Patch */
/** @typedef {import("./messages").NodePatch} NodePatch */

/**
 * The nodes directly inside `node`, in reading order (mirrors `viewmodel._walk`).
 * @param {Node} node @returns {Node[]}
 */
export function childrenOf(node) {
  switch (node.kind) {
    case "turn": {
      /** @type {Node[]} */
      const out = [...(node.process?.children ?? []), ...(node.outside ?? [])];
      if (node.answer) out.push(node.answer);
      return out;
    }
    case "group":
      return node.children ?? [];
    case "batch":
      return node.rows ?? [];
    case "command":
      return node.tool ? [node.tool] : [];
    case "summary":
      return node.tools ?? [];
    case "tool":
      return node.subagent?.nodes ?? [];
    default:
      return [];
  }
}

/**
 * Keys of every node below `node` (not its own). A turn's process key counts as below the turn.
 * @param {Node} node @returns {string[]}
 */
export function keysInside(node) {
  /** @type {string[]} */
  const out = [];
  if (node.kind === "turn" && node.process) out.push(node.process.key);
  /** @param {Node} n */
  const walk = (n) => {
    for (const child of childrenOf(n)) {
      out.push(child.key);
      walk(child);
    }
  };
  walk(node);
  return out;
}

/**
 * A keyed list after upserts and removals: removed keys dropped, each upserted item put after
 * the item with key `after` (first when null), replacing any item with its key. Applied in
 * order, as if one at a time, but in time linear in the list and the upserts (a followed run's
 * group gains a hundred batches per patch among hundreds): the list is linked by key once.
 * @template {{key: string}} T
 * @param {T[]} items @param {{after: string | null, item: T}[]} upserts @param {string[]} removed
 * @returns {T[]}
 */
export function upsertKeyed(items, upserts, removed) {
  const gone = new Set(removed);
  const kept = items.filter((item) => !gone.has(item.key));
  if (!upserts.length) return kept;
  /** @typedef {{item: T | null, prev: Link | null, next: Link | null}} Link */
  /** @type {Link} */
  const head = { item: null, prev: null, next: null };
  let tail = head;
  /** @type {Map<string, Link>} */
  const links = new Map();
  for (const item of kept) {
    const link = { item, prev: tail, next: null };
    tail.next = link;
    tail = link;
    links.set(item.key, link);
  }
  if (links.size !== kept.length) return upsertEach(kept, upserts); // a key twice: never sent
  for (const { after, item } of upserts) {
    const old = links.get(item.key);
    if (old) {
      /** @type {Link} */ (old.prev).next = old.next;
      if (old.next) old.next.prev = old.prev;
      else tail = /** @type {Link} */ (old.prev);
      links.delete(item.key);
    }
    // An anchor that is not there (it never should be) appends rather than losing the item.
    const anchor = after == null ? head : links.get(after) ?? tail;
    const link = { item, prev: anchor, next: anchor.next };
    if (anchor.next) anchor.next.prev = link;
    else tail = link;
    anchor.next = link;
    links.set(item.key, link);
  }
  /** @type {T[]} */
  const out = [];
  for (let link = head.next; link; link = link.next) out.push(/** @type {T} */ (link.item));
  return out;
}

/**
 * `upsertKeyed`'s upserts one at a time, each replacing every item with its key: what it gives
 * for a list with a key twice, and the reference its tests hold it to.
 * @template {{key: string}} T
 * @param {T[]} items @param {{after: string | null, item: T}[]} upserts @returns {T[]}
 */
export function upsertEach(items, upserts) {
  let out = items;
  for (const { after, item } of upserts) {
    out = out.filter((existing) => existing.key !== item.key);
    const index = after == null ? 0 : out.findIndex((existing) => existing.key === after) + 1;
    if (after != null && index === 0) out.push(item);
    else out.splice(index, 0, item);
  }
  return out;
}

/**
 * The timeline after a patch's changes to it (U-4): its fields, and its turns when the view has
 * them (a deferred timeline is only its fields until it is opened).
 * @param {import("./nodes").TimelineNode} timeline @param {import("./messages").TimelinePatch} patch
 * @returns {import("./nodes").TimelineNode}
 */
export function applyTimeline(timeline, patch) {
  const fields = /** @type {Partial<import("./nodes").TimelineNode>} */ (patch.fields ?? {});
  if (timeline.deferred) return { ...timeline, ...fields, turns: [], deferred: true };
  const upserts = (patch.upsert ?? []).map(({ after, turn }) => ({ after, item: turn }));
  return { ...timeline, ...fields, turns: upsertKeyed(timeline.turns ?? [], upserts, patch.remove ?? []) };
}

/**
 * The kinds of node that hold a list of nested nodes, and the field that holds it: what a node
 * patch reaches into (mirrors `ondemand.NESTED`).
 * @type {Record<string, "children" | "rows" | "tools">}
 */
export const NESTED = { process: "children", group: "children", batch: "rows", summary: "tools" };

/**
 * A node after a patch of what changed inside it (`NodePatch`, W-2): its own fields replaced,
 * its list of nested nodes upserted and removed by key, nested nodes patched in turn (a turn's
 * process among them, and a tool's sub-agent nodes). Returns a new node; what did not change is
 * shared with the old one. A deferred process holds no children here (they come when it
 * opens): only its fields change.
 * @template {Node} T
 * @param {T} node @param {NodePatch} patch @returns {T}
 */
export function applyNodePatch(node, patch) {
  /** @type {Record<string, any>} */
  const next = { ...node, ...(patch.fields ?? {}) };
  const field = NESTED[next.kind];
  if (field && !next.deferred) {
    /** @type {Node[]} */
    let items = next[field] ?? [];
    if (patch.upsert?.length || patch.remove?.length) {
      const upserts = (patch.upsert ?? []).map(({ after, node: item }) => ({ after, item: /** @type {Node} */ (item) }));
      items = upsertKeyed(items, upserts, patch.remove ?? []);
    }
    next[field] = applyChanges(items, patch.change);
  }
  if (next.kind === "turn" && next.process) next.process = applyChanges([next.process], patch.change)[0];
  if (next.kind === "tool" && next.subagent) {
    // A sub-agent's nodes are top-level nodes of its own transcript, patched as the view's are.
    const upserts = (patch.upsert ?? []).map(({ after, node: item }) => ({ after, item: /** @type {Node} */ (item) }));
    const nodes = upsertKeyed(/** @type {Node[]} */ (next.subagent.nodes ?? []), upserts, patch.remove ?? []);
    next.subagent = { ...next.subagent, nodes: applyChanges(nodes, patch.change) };
  }
  return /** @type {T} */ (next);
}

/**
 * `items` with each node a patch names patched (`applyNodePatch`).
 * @template {Node} T
 * @param {T[]} items @param {NodePatch[] | undefined} changes @returns {T[]}
 */
function applyChanges(items, changes) {
  if (!changes?.length) return items;
  const byKey = new Map(changes.map((change) => [change.key, change]));
  return items.map((item) => {
    const change = byKey.get(item.key);
    return change ? applyNodePatch(item, change) : item;
  });
}

/**
 * The view after a patch from Python: removed keys dropped, each upserted node put after the node
 * with key `after` (first when null), replacing any node with its key, each changed node patched
 * (`applyNodePatch`). Returns a new view.
 * @param {View} view @param {Patch} patch @returns {View}
 */
export function applyPatch(view, patch) {
  const upserts = (patch.upsert ?? []).map(({ after, node }) => ({ after, item: node }));
  const nodes = applyChanges(upsertKeyed(view.nodes, upserts, patch.remove ?? []), patch.change);
  const next = { ...view, .../** @type {Partial<View>} */ (patch.fields ?? {}), nodes };
  if (patch.timeline && next.timeline) next.timeline = applyTimeline(next.timeline, patch.timeline);
  return next;
}
