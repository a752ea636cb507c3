// @ts-check
/**
 * The longest query a search box takes (spec P-11, C-6, B-1), counted as Python counts it.
 *
 * Python refuses a query past `MAX_QUERY_LENGTH` characters (render/search.py, kept equal by
 * tests/test_search_cut_and_echo.py): code points, as `len()` counts them. An input's
 * `maxlength` counts UTF-16 code units, two for each character outside the Basic Multilingual
 * Plane (an emoji, a CJK extension ideograph): a box with it cut a query of 4,000 emoji at
 * 2,000, which Python takes whole. So a box counts code points itself and, as `maxlength`
 * does, keeps what was there and cuts what a paste or a key adds past the limit: whatever it
 * holds Python searches, and a query Python refuses cannot be typed. The view has no settings
 * from Python to carry the number.
 */

export const MAX_QUERY_LENGTH = 4000;

/** How many characters (code points) `value` holds. @param {string} value */
export function codePoints(value) {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

/**
 * The first `limit` characters (code points) of `value`; a pair of surrogates is never split.
 * @param {string} value @param {number} limit
 */
export function firstCodePoints(value, limit) {
  if (value.length <= limit) return value; // no more code points than code units
  let units = 0;
  let count = 0;
  for (const character of value) {
    if (count === limit) break;
    units += character.length;
    count += 1;
  }
  return value.slice(0, units);
}

/**
 * A box's value after an edit left `value` with the caret at `caret`, kept within `limit`
 * characters as `maxlength` keeps it: the text before the caret (what was just typed or pasted
 * ends there) is cut so that it and the text after the caret fit; the caret stays after it.
 * @param {string} value @param {number} caret @param {number} [limit]
 * @returns {{value: string, caret: number}}
 */
export function fitQuery(value, caret, limit = MAX_QUERY_LENGTH) {
  if (value.length <= limit || codePoints(value) <= limit) return { value, caret };
  const after = value.slice(caret);
  const room = limit - codePoints(after);
  if (room < 0) {
    // Set from elsewhere, too long even after the caret: its first characters are kept.
    const kept = firstCodePoints(value, limit);
    return { value: kept, caret: kept.length };
  }
  const before = firstCodePoints(value.slice(0, caret), room);
  return { value: before + after, caret: before.length };
}

/**
 * Keep `input` within `MAX_QUERY_LENGTH` characters (see the module's comment). An edit being
 * composed (an input method's) is fitted once it is committed.
 * @param {HTMLInputElement} input
 */
export function limitQuery(input) {
  const fit = () => {
    const caret = input.selectionEnd ?? input.value.length;
    const fitted = fitQuery(input.value, caret);
    if (fitted.value === input.value) return;
    input.value = fitted.value;
    input.setSelectionRange(fitted.caret, fitted.caret);
  };
  // Registered before the box's own listeners, so they see the value fitted.
  input.addEventListener("input", (event) => {
    if (!(/** @type {InputEvent} */ (event).isComposing)) fit();
  });
  input.addEventListener("compositionend", fit);
}
