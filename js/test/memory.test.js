// Disclosure memory, rule by rule (spec P-10; P-8 defaults underneath, P-11 one-off opens).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DisclosureMemory } from "../src/memory.js";

// A settled turn as the view model keys it: process > group > summary > tool.
const PROCESS = "process:turn:e0";
const GROUP = "group:e1";
const SUMMARY = "summary:e2";
const TOOL = "e2";
const INSIDE_PROCESS = [GROUP, "e1", "batch:e2", SUMMARY, TOOL, "e3"];
const INSIDE_GROUP = ["e1", "batch:e2", SUMMARY, TOOL, "e3"];

/** A memory that records what it tells the view to save, one object per change. */
function memory(initial = {}) {
  const saved = [];
  const m = new DisclosureMemory(initial, (changed) => saved.push(Object.fromEntries(changed)));
  return { m, saved };
}

/** Every choice a memory holds, as the `_folds` trait holds them. */
const held = (m) => Object.fromEntries(m.choices);

/** What a reader sees after clicking a header: the state shown, flipped. */
function click(m, key, defaultOpen, inside = []) {
  return m.toggle(key, m.isOpen(key, defaultOpen, inside));
}

describe("P-8 defaults apply only to keys the reader never touched", () => {
  test("untouched keys follow the view model's open flag", () => {
    const { m } = memory();
    assert.equal(m.isOpen(PROCESS, false, INSIDE_PROCESS), false);
    assert.equal(m.isOpen(PROCESS, true, INSIDE_PROCESS), true);
  });

  test("a default that changes later (completion) applies to untouched keys", () => {
    const { m } = memory();
    assert.equal(m.isOpen(GROUP, true, INSIDE_GROUP), true); // running: open
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), false); // settled: closed
  });
});

describe("P-10 each header toggles only its own level", () => {
  test("opening a group changes neither its parent nor its children", () => {
    const { m } = memory();
    click(m, PROCESS, false, INSIDE_PROCESS);
    click(m, GROUP, false, INSIDE_GROUP);
    assert.equal(m.choice(SUMMARY), undefined);
    assert.equal(m.isOpen(SUMMARY, false), false);
    assert.equal(m.choice(PROCESS), "open");
  });

  test("clicking twice closes again", () => {
    const { m } = memory();
    assert.equal(click(m, GROUP, false), true);
    assert.equal(click(m, GROUP, false), false);
    assert.equal(m.isOpen(GROUP, true), false, "an explicit close beats an open default");
  });
});

describe("P-10 parent and child states are independent", () => {
  test("closing a parent keeps its children's choices; reopening restores them", () => {
    const { m } = memory();
    click(m, PROCESS, false, INSIDE_PROCESS);
    click(m, GROUP, false, INSIDE_GROUP);
    click(m, SUMMARY, false, [TOOL]);
    click(m, TOOL, false);
    click(m, PROCESS, true, INSIDE_PROCESS); // close the turn
    assert.equal(m.isOpen(PROCESS, false, INSIDE_PROCESS), false);
    assert.deepEqual([GROUP, SUMMARY, TOOL].map((k) => m.choice(k)), ["open", "open", "open"]);
    click(m, PROCESS, false, INSIDE_PROCESS); // reopen
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), true);
    assert.equal(m.isOpen(SUMMARY, false, [TOOL]), true);
    assert.equal(m.isOpen(TOOL, false), true);
  });

  test("a child closed by the reader stays closed when its parent reopens", () => {
    const { m } = memory();
    m.setOpen(PROCESS, true);
    m.setOpen(GROUP, false);
    m.setOpen(PROCESS, false);
    m.setOpen(PROCESS, true);
    assert.equal(m.isOpen(GROUP, true, INSIDE_GROUP), false);
  });
});

describe("P-10 siblings are not an accordion", () => {
  test("opening one group leaves its open sibling open", () => {
    const { m } = memory();
    click(m, "group:a", false);
    click(m, "group:b", false);
    assert.equal(m.isOpen("group:a", false), true);
    assert.equal(m.isOpen("group:b", false), true);
    click(m, "group:a", true);
    assert.equal(m.isOpen("group:b", false), true);
  });
});

describe("P-10 interacting inside marks a container the reader's, without toggling it", () => {
  test("own() keeps an open-by-default group open after its default closes", () => {
    const { m } = memory();
    assert.equal(m.isOpen(GROUP, true, INSIDE_GROUP), true);
    m.own([GROUP, PROCESS]); // a click, focus or selection inside the group
    assert.equal(m.choice(GROUP), "owned");
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), true, "completion does not close it");
    assert.equal(m.isOpen(PROCESS, false, INSIDE_PROCESS), true);
  });

  test("own() never overrides a choice the reader made", () => {
    const { m } = memory();
    m.setOpen(GROUP, false);
    assert.equal(m.own([GROUP]), false);
    assert.equal(m.choice(GROUP), "closed");
  });

  test("an owned container still closes when the reader says so", () => {
    const { m } = memory();
    m.own([GROUP]);
    click(m, GROUP, false, INSIDE_GROUP);
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), false);
  });
});

describe("P-10 completion never closes a container holding what the reader opened", () => {
  test("a tool the reader opened keeps its untouched containers open", () => {
    const { m } = memory();
    m.setOpen(TOOL, true);
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), true);
    assert.equal(m.isOpen(PROCESS, false, INSIDE_PROCESS), true);
  });

  test("a single opened item that becomes part of a new group keeps the new group open", () => {
    const { m } = memory();
    m.setOpen("e9", true); // a thinking row, opened while it was on its own
    const newGroup = "group:e9"; // it now heads a group whose default is closed
    assert.equal(m.isOpen(newGroup, false, ["e9", "batch:e10"]), true);
  });

  test("what the reader closed inside does not hold a container open", () => {
    const { m } = memory();
    m.setOpen(TOOL, false);
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), false);
  });
});

describe("P-10 choices survive updates, preference switches and re-mounts", () => {
  test("choices are keyed by stable keys, whatever else changes around them", () => {
    const { m } = memory();
    m.setOpen(TOOL, true);
    m.setOpen("e1", false);
    // A mode switch gives the same entries new containers; the entries' own choices stand.
    assert.equal(m.isOpen(TOOL, false), true);
    assert.equal(m.isOpen("e1", true), false);
  });

  test("every change is saved and a new memory built from the saves restores it", () => {
    const { m, saved } = memory();
    m.setOpen(PROCESS, true);
    m.own([GROUP]);
    m.setOpen(TOOL, false);
    const all = Object.assign({}, ...saved);
    assert.deepEqual(all, { [TOOL]: "closed", [GROUP]: "owned", [PROCESS]: "open" });
    const remounted = new DisclosureMemory(all);
    assert.equal(remounted.isOpen(PROCESS, false), true);
    assert.equal(remounted.isOpen(GROUP, false), true);
    assert.equal(remounted.isOpen(TOOL, true), false);
  });

  test("saved state from elsewhere is validated", () => {
    const m = new DisclosureMemory({ a: "open", b: "bogus", c: 3, d: null });
    assert.deepEqual(held(m), { a: "open" });
  });

  test("nothing is saved when nothing changed", () => {
    const { m, saved } = memory();
    m.setOpen(GROUP, true);
    m.setOpen(GROUP, true);
    m.own([]);
    assert.equal(saved.length, 1);
  });
});

describe("P-11 reveal and search open exactly the ancestor path, once", () => {
  test("openPath opens the given keys and nothing else", () => {
    const { m } = memory();
    m.openPath([PROCESS, GROUP]);
    assert.equal(m.isOpen(PROCESS, false), true);
    assert.equal(m.isOpen(GROUP, false), true);
    assert.equal(m.choice(SUMMARY), undefined);
    assert.equal(m.choice(TOOL), undefined);
  });

  test("a later manual close stands", () => {
    const { m } = memory();
    m.openPath([PROCESS, GROUP]);
    click(m, GROUP, false, INSIDE_GROUP);
    assert.equal(m.isOpen(GROUP, false, INSIDE_GROUP), false);
    // Re-rendering (a patch, a re-mount) only reads the memory: the close still stands.
    assert.equal(new DisclosureMemory(held(m)).isOpen(GROUP, true, INSIDE_GROUP), false);
  });
});

describe("another transcript in the same view (a session browser's reused widget)", () => {
  test("reset forgets every choice, takes the given ones, and saves nothing", () => {
    const { m, saved } = memory({ [PROCESS]: "open", [GROUP]: "closed" });
    m.reset({ [TOOL]: "open", bogus: "sideways" });
    assert.equal(m.choice(PROCESS), undefined);
    assert.equal(m.choice(GROUP), undefined);
    assert.equal(m.choice(TOOL), "open");
    assert.equal(m.choice("bogus"), undefined);
    assert.deepEqual(saved, []);
  });
});

describe("P-10 a click tells only what it changed, whatever the memory holds", () => {
  test("a toggle, an interaction and a reveal each tell only the keys they changed", () => {
    const { m, saved } = memory({ [PROCESS]: "open" });
    click(m, GROUP, false, INSIDE_GROUP);
    m.own([PROCESS, GROUP, SUMMARY]); // the first two were chosen already
    m.openPath([PROCESS, GROUP, TOOL]); // so were these two
    assert.deepEqual(saved, [{ [GROUP]: "open" }, { [SUMMARY]: "owned" }, { [TOOL]: "open" }]);
  });

  test("opening n folds one by one tells n keys in all, not a copy of every choice each time", () => {
    const { m, saved } = memory();
    const n = 2000;
    for (let i = 0; i < n; i += 1) click(m, `e${i}`, false);
    assert.equal(saved.length, n);
    assert.equal(saved.reduce((told, changed) => told + Object.keys(changed).length, 0), n);
    assert.equal(m.choices.size, n);
  });
});
