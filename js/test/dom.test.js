// Class-name tokens: a view-model name becomes a class the page's HTML spells the same way, and
// nothing else (transcript text never reaches a class attribute).
import assert from "node:assert/strict";
import { test } from "node:test";

import { token } from "../src/dom.js";

test("a header part's name keeps its underscores, as the page's HTML class does", () => {
  assert.equal(token("tokens_so_far"), "tokens_so_far");
  assert.equal(token("no_cost"), "no_cost");
  assert.equal(token("error"), "error");
});

test("anything that is not a lower-case name is 'unknown'", () => {
  for (const value of ["Error", "a b", "x\"y", "1abc", "", null, 3, "a<b"]) {
    assert.equal(token(value), "unknown");
  }
});
