// @ts-check
/**
 * DOM helpers, and the only two ways transcript strings reach the page (spec X-1):
 *
 * - `setHtml` inserts the view model's `*html` fields (and `images`), which Python sanitized;
 * - `text` / `escapedText` set `textContent`, so nothing else can ever be parsed as markup.
 *
 * Fields the view model documents as *escaped* (tool names, descriptions, arguments, commands,
 * options, warnings, sub-agent lines) hold HTML-escaped text; they are unescaped here by a fixed
 * table and then set as text, never as markup.
 */

/**
 * An element with classes and attributes.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {string} [className] @param {Record<string, string>} [attrs]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, className, attrs) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  for (const [name, value] of Object.entries(attrs ?? {})) element.setAttribute(name, value);
  return element;
}

/** @param {string} tag @param {string} className @param {unknown} value */
export function text(tag, className, value) {
  const element = h(/** @type {keyof HTMLElementTagNameMap} */ (tag), className);
  element.textContent = value == null ? "" : String(value);
  return element;
}

// html.escape(quote=True) in Python writes exactly these; &amp; goes last so "&amp;lt;" stays "&lt;".
const ENTITIES = /** @type {const} */ ([
  ["&lt;", "<"],
  ["&gt;", ">"],
  ["&quot;", '"'],
  ["&#x27;", "'"],
  ["&#39;", "'"],
  ["&amp;", "&"],
]);

/** Escaped text from the view model back to plain text. @param {unknown} value */
export function unescape(value) {
  let out = value == null ? "" : String(value);
  for (const [entity, char] of ENTITIES) out = out.split(entity).join(char);
  return out;
}

/** An element showing an escaped view-model field as text. @param {string} tag @param {string} className @param {unknown} value */
export function escapedText(tag, className, value) {
  return text(tag, className, unescape(value));
}

/**
 * Insert a sanitized fragment from Python (a field ending in `html`, or an `images` item).
 * @template {Element} E
 * @param {E} element @param {unknown} fragment @returns {E}
 */
export function setHtml(element, fragment) {
  element.innerHTML = typeof fragment === "string" ? fragment : "";
  return element;
}

/** A class-name token from a view-model enum (status, level, kind, a header part's name such as
 * `tokens_so_far`, spelt as the page's HTML spells it); anything else is dropped. @param {unknown} value */
export function token(value) {
  return typeof value === "string" && /^[a-z][a-z0-9_-]*$/.test(value) ? value : "unknown";
}

/** The element with `data-key` = `key` under `root`, if it is drawn. @param {ParentNode} root @param {string} key */
export function byKey(root, key) {
  return /** @type {HTMLElement | null} */ (root.querySelector(`[data-key="${CSS.escape(key)}"]`));
}

/**
 * Keep the keys typed in `element` from JupyterLab's notebook shortcuts, which would otherwise
 * act on the notebook too: its command mode binds arrows (move to another cell), `a` / `b`
 * (insert a cell), `d d` (delete one), Enter (edit one) to the focused element itself
 * (`… :focus`), which `data-lm-suppress-shortcuts` on an ancestor does not stop. The element's
 * own handlers, under it, have run by then; keys with Ctrl, Alt or Meta (the application's own
 * shortcuts: save, the command palette) still reach JupyterLab; Shift+Enter does not (the
 * search box steps back with it).
 * @param {HTMLElement} element
 */
export function keepKeys(element) {
  element.setAttribute("data-lm-suppress-shortcuts", "true");
  element.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.altKey || event.metaKey) return;
    event.stopPropagation();
  });
}
