// The reader's fold choices on their way to the `_folds` trait (P-10): what a click costs, when
// the model and the kernel hear of it, and what the trait holds after.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

import { FoldSaver, SAVE_DELAY_MS } from "../src/folds.js";
import { DisclosureMemory } from "../src/memory.js";

/** A widget model as anywidget hands it to a view, counting what a view asks of it. */
function model(folds = {}) {
  const calls = { get: 0, set: 0, save: 0 };
  const state = { _folds: folds };
  return {
    calls,
    state,
    get: (name) => {
      calls.get += 1;
      return state[name];
    },
    set: (name, value) => {
      calls.set += 1;
      state[name] = value;
    },
    save_changes: () => {
      calls.save += 1;
    },
  };
}

/** A view of `widget`: its memory, whose changes its saver takes to the trait. */
function view(widget) {
  const saver = new FoldSaver(widget);
  const memory = new DisclosureMemory(widget.get("_folds") ?? {}, (changed) => saver.note(changed));
  return { memory, saver };
}

const keysOf = (object) => Object.keys(object);
const sorted = (keys) => [...keys].sort();

beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
afterEach(() => mock.timers.reset());

describe("P-10 a click costs the same however many folds are open", () => {
  test("opening n folds in one burst reads and sets the trait once, and saves once", () => {
    const widget = model();
    const { memory } = view(widget);
    widget.calls.get = 0;
    const n = 5000;
    for (let i = 0; i < n; i += 1) memory.setOpen(`e${i}`, true);
    assert.deepEqual(widget.calls, { get: 0, set: 0, save: 0 }, "a click touches no trait");
    mock.timers.tick(0); // the task that clicked has ended
    assert.deepEqual(widget.calls, { get: 1, set: 1, save: 0 });
    assert.equal(keysOf(widget.state._folds).length, n);
    mock.timers.tick(SAVE_DELAY_MS);
    assert.deepEqual(widget.calls, { get: 1, set: 1, save: 1 }, "the kernel hears of the burst once");
  });

  test("clicks closer together than the delay reach the model as they come and the kernel once", () => {
    const widget = model();
    const { memory } = view(widget);
    for (const key of ["c", "a", "b"]) {
      memory.setOpen(key, true);
      mock.timers.tick(SAVE_DELAY_MS - 1);
      assert.equal(widget.state._folds[key], "open", "other views mounted now read it from the model");
    }
    assert.equal(widget.calls.save, 0);
    mock.timers.tick(1);
    assert.equal(widget.calls.save, 1);
    assert.deepEqual(widget.state._folds, { a: "open", b: "open", c: "open" });
  });
});

describe("P-10 the saved trait", () => {
  test("has sorted keys, whatever order the choices came in or the model held them", () => {
    const widget = model({ zeta: "closed", beta: "open" });
    const { memory } = view(widget);
    memory.setOpen("gamma", true);
    memory.own(["alpha"]);
    mock.timers.tick(0);
    const keys = keysOf(widget.state._folds);
    assert.deepEqual(keys, ["alpha", "beta", "gamma", "zeta"]);
    assert.deepEqual(keys, sorted(keys));
  });

  test("two views of one widget never erase each other's choices", () => {
    const widget = model();
    const first = view(widget);
    first.memory.setOpen("k1", true);
    mock.timers.tick(0);
    const second = view(widget); // the widget shown again in another cell
    assert.equal(second.memory.choice("k1"), "open");
    second.memory.setOpen("k1", false);
    second.memory.setOpen("k2", true);
    mock.timers.tick(0);
    first.memory.setOpen("k3", true); // the first view still holds k1 open: it does not say so again
    mock.timers.tick(0);
    assert.deepEqual(widget.state._folds, { k1: "closed", k2: "open", k3: "open" });
  });

  test("a key such as __proto__ stays a key", () => {
    const widget = model();
    const { memory } = view(widget);
    memory.setOpen("__proto__", true);
    mock.timers.tick(0);
    assert.deepEqual(keysOf(widget.state._folds), ["__proto__"]);
    assert.equal(JSON.stringify(widget.state._folds), '{"__proto__":"open"}');
  });
});

describe("B-3 a comparison's trait: one memory per side of each comparison", () => {
  test("a side's changes rebuild only their comparison, every rebuilt level sorted", () => {
    const other = { a: { x: "open" }, b: {} };
    const widget = model({ "pair-2": other, "pair-1": { b: { old: "closed" } }, broken: null });
    const saver = new FoldSaver(widget);
    saver.note(new Map([["t2", "open"], ["t1", "closed"]]), ["pair-1", "b"]);
    saver.note(new Map([["t9", "owned"]]), ["pair-1", "a"]);
    saver.note(new Map([["t0", "open"]]), ["broken", "a"]);
    mock.timers.tick(0);
    const folds = widget.state._folds;
    assert.deepEqual(keysOf(folds), ["broken", "pair-1", "pair-2"]);
    assert.equal(folds["pair-2"], other, "a comparison nobody touched is kept as it was");
    assert.deepEqual(keysOf(folds["pair-1"]), ["a", "b"]);
    assert.deepEqual(keysOf(folds["pair-1"].b), ["old", "t1", "t2"]);
    assert.deepEqual(folds["pair-1"].a, { t9: "owned" });
    assert.deepEqual(folds.broken, { a: { t0: "open" } }, "what the model held there was no level");
  });
});

describe("leaving the view, or another transcript in its place", () => {
  test("save sends the choices now, and once", () => {
    const widget = model();
    const { memory, saver } = view(widget);
    memory.setOpen("k", true);
    assert.equal(saver.waiting, true);
    saver.save(); // focus left the view: the session browser may show another run next
    assert.deepEqual(widget.state._folds, { k: "open" });
    assert.equal(widget.calls.save, 1);
    assert.equal(saver.waiting, false);
    mock.timers.tick(SAVE_DELAY_MS);
    assert.equal(widget.calls.save, 1);
  });

  test("drop forgets what was not merged yet: it never reaches the model or the kernel", () => {
    const widget = model({ kept: "open" });
    const { memory, saver } = view(widget);
    memory.setOpen("old-run", true);
    saver.drop();
    assert.equal(saver.waiting, false);
    mock.timers.tick(SAVE_DELAY_MS);
    assert.deepEqual(widget.state._folds, { kept: "open" });
    assert.equal(widget.calls.set + widget.calls.save, 0);
  });
});
