// @ts-check
/**
 * The shape of the view model (docs/view-model.md) and the incremental updates the widget sends.
 * Structure only: which fields hold nested nodes. No summary, partition, title or fold-default
 * logic lives in the JS (spec W-1); Python computed all of it.
 */

/** @typedef {import("./nodes").AnyNode} Node */
/** @typedef {import("./nodes").View} View */
/** @typedef {import("./messages").PatchMessage} Patch */

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
 * The view after a patch from Python: removed keys dropped, each upserted node put after the node
 * with key `after` (first when null), replacing any node with its key. Returns a new view.
 * @param {View} view @param {Patch} patch @returns {View}
 */
export function applyPatch(view, patch) {
  const gone = new Set(patch.remove ?? []);
  let nodes = view.nodes.filter((node) => !gone.has(node.key));
  for (const { after, node } of patch.upsert ?? []) {
    nodes = nodes.filter((existing) => existing.key !== node.key);
    const index = after == null ? 0 : nodes.findIndex((existing) => existing.key === after) + 1;
    // An anchor that is not there (it never should be) appends rather than losing the node.
    if (after != null && index === 0) nodes.push(node);
    else nodes.splice(index, 0, node);
  }
  return { ...view, .../** @type {Partial<View>} */ (patch.fields ?? {}), nodes };
}
