// The view model's structure and the incremental patches Python sends (spec W-2).
import assert from "node:assert/strict";
import { test } from "node:test";

import { applyPatch, childrenOf, keysInside } from "../src/tree.js";

const user = (key) => ({ kind: "user", key, html: key });
const view = (...keys) => ({ locale: "en", mode: "fully-folded", nodes: keys.map(user) });
const keys = (v) => v.nodes.map((node) => node.key);

test("an appended node goes after its anchor", () => {
  const next = applyPatch(view("a", "b"), { upsert: [{ after: "b", node: user("c") }], remove: [] });
  assert.deepEqual(keys(next), ["a", "b", "c"]);
});

test("a changed node is replaced in place", () => {
  const changed = { ...user("b"), html: "new" };
  const next = applyPatch(view("a", "b", "c"), { upsert: [{ after: "a", node: changed }], remove: [] });
  assert.deepEqual(keys(next), ["a", "b", "c"]);
  assert.equal(next.nodes[1].html, "new");
});

test("a null anchor puts the node first; removed keys go", () => {
  const next = applyPatch(view("a", "b"), { upsert: [{ after: null, node: user("z") }], remove: ["b"] });
  assert.deepEqual(keys(next), ["z", "a"]);
});

test("consecutive upserts anchor on each other", () => {
  const next = applyPatch(view("a"), {
    upsert: [
      { after: "a", node: user("b") },
      { after: "b", node: user("c") },
    ],
    remove: [],
  });
  assert.deepEqual(keys(next), ["a", "b", "c"]);
});

test("a missing anchor appends instead of losing the node", () => {
  const next = applyPatch(view("a"), { upsert: [{ after: "nowhere", node: user("b") }], remove: [] });
  assert.deepEqual(keys(next), ["a", "b"]);
});

test("view fields travel only when changed, and the input view is not modified", () => {
  const before = view("a");
  const next = applyPatch(before, { upsert: [], remove: [], fields: { mode: "flat" } });
  assert.equal(next.mode, "flat");
  assert.equal(before.mode, "fully-folded");
  assert.equal(next.locale, "en");
});

test("keysInside walks turns, groups, batches, summaries, commands and sub-agents", () => {
  const tool = (key, nodes) => ({ kind: "tool", key, subagent: nodes ? { nodes } : null });
  const turn = {
    kind: "turn",
    key: "turn:e0",
    process: {
      key: "process:turn:e0",
      children: [
        {
          kind: "group",
          key: "group:e1",
          children: [
            { kind: "batch", key: "batch:e1", rows: [{ kind: "summary", key: "summary:e1", tools: [tool("e1")] }] },
            { kind: "command", key: "command:e2", tool: tool("e2", [user("e2/e0")]) },
          ],
        },
      ],
    },
    outside: [{ kind: "error", key: "e3" }],
    answer: { kind: "answer", key: "e4" },
  };
  assert.deepEqual(keysInside(turn), [
    "process:turn:e0", "group:e1", "batch:e1", "summary:e1", "e1", "command:e2", "e2", "e2/e0", "e3", "e4",
  ]);
  assert.deepEqual(childrenOf({ kind: "progress", key: "p" }), []);
});
