// Content fetched when the reader opens it (spec Q-2), as the transcript and compare views fetch it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ContentLoader } from "../src/loader.js";

/** A loader whose requests are recorded instead of sent. */
function loader() {
  const sent = [];
  return { l: new ContentLoader("view-1", (request) => sent.push(request)), sent };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("content is asked for by key, once per task, for the view that asks", () => {
  test("keys asked for together travel as one request naming the view", async () => {
    const { l, sent } = loader();
    const first = l.content("a/process:turn:e0");
    const second = l.content("b/process:turn:e0");
    const again = l.content("a/process:turn:e0"); // already waiting: not asked twice
    await tick();
    assert.deepEqual(sent, [{ type: "content", view: "view-1", keys: ["a/process:turn:e0", "b/process:turn:e0"] }]);
    l.receive({ "a/process:turn:e0": { kind: "process", key: "a/process:turn:e0" }, "b/process:turn:e0": null });
    assert.equal((await first)?.key, "a/process:turn:e0");
    assert.equal(await second, null); // gone
    assert.equal((await again)?.key, "a/process:turn:e0");
  });

  test("what arrived is ready until the view changes under it", () => {
    const { l } = loader();
    assert.equal(l.ready("k"), undefined);
    l.receive({ k: { kind: "process", key: "k" } });
    assert.equal(l.ready("k")?.key, "k");
    l.clear();
    assert.equal(l.ready("k"), undefined);
  });

  test("a whole output arrives in parts, the last one saying so", () => {
    const { l, sent } = loader();
    const parts = [];
    l.output("a/e5", (text, done) => parts.push([text, done]));
    assert.deepEqual(sent, [{ type: "output", view: "view-1", key: "a/e5" }]);
    l.part({ type: "output", to: "view-1", key: "a/e5", part: 0, parts: 2, text: "one" });
    l.part({ type: "output", to: "view-1", key: "a/e5", part: 1, parts: 2, text: "two" });
    l.part({ type: "output", to: "view-1", key: "a/e5", part: 1, parts: 2, text: "late" });
    assert.deepEqual(parts, [["one", false], ["two", true]]);
  });
});
