// The search boxes' limit (spec P-11, C-6, B-1): characters as Python counts them (code points),
// not the UTF-16 code units of an input's maxlength.
import assert from "node:assert/strict";
import { test } from "node:test";

import { MAX_QUERY_LENGTH, codePoints, firstCodePoints, fitQuery } from "../src/query.js";

const EMOJI = "\u{1F600}"; // one code point, two UTF-16 code units

test("a query of the limit's count of emoji is kept whole, twice as many code units as that", () => {
  const query = EMOJI.repeat(MAX_QUERY_LENGTH);
  assert.equal(query.length, 2 * MAX_QUERY_LENGTH);
  assert.deepEqual(fitQuery(query, query.length), { value: query, caret: query.length });
});

test("a pasted query past the limit keeps its first characters, no surrogate pair split", () => {
  const pasted = "a" + EMOJI.repeat(MAX_QUERY_LENGTH);
  const { value, caret } = fitQuery(pasted, pasted.length);
  assert.equal(codePoints(value), MAX_QUERY_LENGTH);
  assert.equal(value, "a" + EMOJI.repeat(MAX_QUERY_LENGTH - 1));
  assert.equal(caret, value.length);
});

test("what was typed is cut, the text after the caret kept, as maxlength does", () => {
  const full = EMOJI.repeat(MAX_QUERY_LENGTH - 1);
  // "xyz" typed after the first emoji of a box that had room for one more character.
  const edited = EMOJI + "xyz" + full.slice(2);
  const { value, caret } = fitQuery(edited, 2 + 3);
  assert.equal(value, EMOJI + "x" + full.slice(2));
  assert.equal(codePoints(value), MAX_QUERY_LENGTH);
  assert.equal(caret, 3);
});

test("a value too long after the caret alone keeps its first characters", () => {
  const value = "b".repeat(MAX_QUERY_LENGTH + 5);
  assert.deepEqual(fitQuery(value, 0), { value: "b".repeat(MAX_QUERY_LENGTH), caret: MAX_QUERY_LENGTH });
});

test("short values pass as they are; counting goes by code points", () => {
  assert.deepEqual(fitQuery("calc.py", 3), { value: "calc.py", caret: 3 });
  assert.equal(codePoints(`${EMOJI}a${EMOJI}`), 3);
  assert.equal(firstCodePoints(`${EMOJI}a${EMOJI}`, 2), `${EMOJI}a`);
  assert.equal(firstCodePoints("\uD83D", 1), "\uD83D"); // a lone surrogate is one, as in Python
});
