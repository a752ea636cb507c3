// The view model's structure and the incremental patches Python sends (spec W-2).
import assert from "node:assert/strict";
import { test } from "node:test";

import { applyNodePatch, applyPatch, applyTimeline, childrenOf, keysInside } from "../src/tree.js";

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

// U-4: a live session's timeline changes by its turns, like the top-level nodes.
const piece = (key, w) => ({ key, x: 0, w });
const timeline = (...turns) => ({ kind: "timeline", key: "timeline", span: 10, turns });

test("an open timeline takes the changed turns and fields of a patch", () => {
  const before = { ...view("a"), timeline: timeline(piece("t1", 4), piece("t2", 2)) };
  const next = applyPatch(before, {
    upsert: [],
    remove: [],
    timeline: { fields: { span: 12 }, upsert: [{ after: "t2", turn: piece("t2", 4) }, { after: "t2", turn: piece("t3", 1) }], remove: [] },
  });
  assert.deepEqual(next.timeline.turns.map((t) => [t.key, t.w]), [["t1", 4], ["t2", 4], ["t3", 1]]);
  assert.equal(next.timeline.span, 12);
  assert.equal(before.timeline.turns.length, 2); // the old view is left as it was
});

test("a closed timeline keeps only its fields until it is opened", () => {
  const closed = { ...timeline(), deferred: true };
  const next = applyTimeline(closed, { fields: { note: "one bar per turn" }, upsert: [{ after: null, turn: piece("t1", 1) }], remove: [] });
  assert.deepEqual(next.turns, []);
  assert.equal(next.deferred, true);
  assert.equal(next.note, "one bar per turn");
});

// W-2: a node that kept its key and place travels as a patch of what changed inside it.
const row = (key) => ({ kind: "tool", key });
const batch = (key, ...rows) => ({ kind: "batch", key, active: false, rows: rows.map(row), memory: null, label: null });
const growing = (...batches) => ({
  kind: "turn",
  key: "turn:e0",
  status: "running",
  header: { label: "Running", count: "1 tool" },
  process: {
    kind: "process",
    key: "process:turn:e0",
    open: true,
    children: [{ kind: "group", key: "group:b1", title: "Ran commands", children: batches }],
  },
  outside: [],
  answer: null,
});

test("a turn patch changes its fields and, by key, the nested lists of its process", () => {
  const first = batch("b1", "e1", "e2");
  const before = { ...view("a"), nodes: [user("a"), growing(first)] };
  const next = applyPatch(before, {
    upsert: [],
    remove: [],
    change: [
      {
        key: "turn:e0",
        fields: { header: { label: "Running", count: "3 tools" } },
        change: [
          {
            key: "process:turn:e0",
            change: [
              {
                key: "group:b1",
                fields: { title: "Ran commands and read files" },
                upsert: [{ after: "b1", node: batch("b2", "e4") }],
                change: [{ key: "b1", upsert: [{ after: "e2", node: row("e3") }], remove: ["e1"] }],
              },
            ],
          },
        ],
      },
    ],
  });
  const turn = next.nodes[1];
  assert.equal(turn.header.count, "3 tools");
  const group = turn.process.children[0];
  assert.equal(group.title, "Ran commands and read files");
  assert.deepEqual(group.children.map((b) => [b.key, b.rows.map((r) => r.key)]), [["b1", ["e2", "e3"]], ["b2", ["e4"]]]);
  // Nothing of the old view changed, and what the patch did not touch is shared.
  assert.deepEqual(before.nodes[1].process.children[0].children[0].rows.map((r) => r.key), ["e1", "e2"]);
  assert.equal(next.nodes[0], before.nodes[0]);
  assert.equal(next.nodes[1].outside, before.nodes[1].outside);
});

test("a deferred process takes a patch's fields and leaves its content to be asked for", () => {
  const process = { kind: "process", key: "p", open: false, active: false, children: [], deferred: true };
  const next = applyNodePatch(process, { key: "p", fields: { active: true }, upsert: [{ after: null, node: batch("b1", "e1") }] });
  assert.equal(next.active, true);
  assert.deepEqual(next.children, []);
});

test("a turn's process replaced whole by a field is taken as it comes", () => {
  const before = growing(batch("b1", "e1"));
  const replaced = { kind: "process", key: "process:turn:e0", open: false, active: false, children: [], deferred: true };
  const next = applyNodePatch(before, { key: "turn:e0", fields: { process: replaced, status: "completed" } });
  assert.equal(next.process, replaced);
  assert.equal(next.status, "completed");
});

test("upsertKeyed gives what upserting one at a time gives, moves and missing anchors included", async () => {
  const { upsertKeyed, upsertEach } = await import("../src/tree.js");
  /** The upserts applied one by one, each in a list scanned whole (the reference). */
  const oneByOne = (items, upserts, removed) =>
    upsertEach(items.filter((item) => !removed.includes(item.key)), upserts);
  let seed = 7;
  const random = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const pool = "abcdefghij".split("");
  for (let round = 0; round < 500; round++) {
    const items = pool.filter(() => random(2)).map((key) => ({ key, v: 0 }));
    const removed = pool.filter(() => random(5) === 0);
    const upserts = Array.from({ length: random(6) }, (_, n) => {
      const anchor = random(4) === 0 ? null : pool[random(pool.length)] + (random(8) === 0 ? "?" : "");
      return { after: anchor, item: { key: pool[random(pool.length)], v: n + 1 } };
    });
    assert.deepEqual(upsertKeyed(items, upserts, removed), oneByOne(items, upserts, removed), JSON.stringify({ items, upserts, removed }));
  }
});
