"""The search boxes keep to Python's limit in characters (code points), in a real Chromium
(P-11, C-6, B-1): a query of 4,000 emoji is typed whole (an input's ``maxlength``, which counts
UTF-16 code units, cut it at 2,000), and nothing more is. The session browser's box is that of
the built bundle; the widget's is its ``SearchBox`` (js/src/search.js), each on a page of its
own served here, no JupyterLab needed. The counting itself: js/test/query.test.js."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.labkit import STATIC, new_page
from turnfold.render.search import MAX_QUERY_LENGTH, search_query

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

SOURCES = Path(__file__).resolve().parents[2] / "js" / "src"
ORIGIN = "http://turnfold.test"
EMOJI = "\N{GRINNING FACE}"
#: Script of the page: the box made, and ``window.sent`` the queries it asked Python for.
WIDGET_BOX = """
import { SearchBox } from "./src/search.js";
window.sent = [];
const root = document.createElement("div");
const box = new SearchBox({ strings: () => ({}), send: (query) => window.sent.push(query),
                            open: () => {}, root });
document.body.append(box.element, root);
window.box = box.input;
"""
BROWSER_BOX = """
import view from "./static/browser.js";
window.sent = [];
const traits = {
  _strings: {}, _hits: null, _counts: "", selected: null, _transcript: null,
  _choices: { controls: [], columns: [], op_labels: {} },
  _page: { query: { offset: 0, filters: [], columns: [], sort: null, descending: false },
           rows: [], columns: [], total: 0, label: "", problems: [] },
};
traits.query = traits._page.query;
const model = { get: (name) => traits[name], set: (name, value) => { traits[name] = value; },
                save_changes() {}, on() {}, off() {},
                send: (message) => window.sent.push(message) };
const el = document.createElement("div");
document.body.append(el);
view.render({ model, el });
window.box = el.querySelector(".tf-b-search");
"""


def _served(route: Route) -> None:
    path = route.request.url.removeprefix(ORIGIN)
    if path == "/":
        route.fulfill(body="<!doctype html><meta charset=utf-8><body></body>",
                      content_type="text/html")  # fmt: skip
        return
    folder, name = path.lstrip("/").split("/", 1)
    root = {"src": SOURCES, "static": STATIC}[folder]
    route.fulfill(path=str(root / name), content_type="text/javascript")


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    if not (STATIC / "browser.js").is_file():
        pytest.fail("the widget bundle is not built: run `npm ci && npm run build` in js/")
    with new_page(chromium) as opened:
        opened.route(f"{ORIGIN}/**", _served)
        opened.goto(f"{ORIGIN}/")
        yield opened


def _code_points(page: Page) -> int:
    return int(page.evaluate("() => [...window.box.value].length"))


@pytest.mark.parametrize("script", [WIDGET_BOX, BROWSER_BOX], ids=["widget", "session-browser"])
def test_P11_B1_a_box_takes_the_limit_in_emoji_and_no_more(page: Page, script: str) -> None:
    page.add_script_tag(content=script, type="module")
    page.wait_for_function("() => window.box instanceof HTMLInputElement")
    page.evaluate("() => window.box.focus()")
    page.keyboard.insert_text(EMOJI * MAX_QUERY_LENGTH)  # a paste
    assert _code_points(page) == MAX_QUERY_LENGTH
    assert page.evaluate("() => window.box.value") == EMOJI * MAX_QUERY_LENGTH
    page.keyboard.press("Enter")  # asked of Python whole, which searches it
    sent = page.evaluate("() => window.sent.at(-1)")
    query = sent if isinstance(sent, str) else sent["query"]
    assert search_query(query) == EMOJI * MAX_QUERY_LENGTH
    page.keyboard.insert_text("x")  # typed past the limit: refused, the query kept
    assert page.evaluate("() => window.box.value") == EMOJI * MAX_QUERY_LENGTH
    page.evaluate("() => window.box.setSelectionRange(0, 0)")
    page.keyboard.insert_text("abc" + EMOJI * 10)  # pasted at the start of a full box
    assert page.evaluate("() => window.box.value") == EMOJI * MAX_QUERY_LENGTH
    page.evaluate("() => { window.box.value = ''; }")
    page.keyboard.insert_text("y" * (MAX_QUERY_LENGTH + 50))  # a paste gone wrong
    assert page.evaluate("() => window.box.value") == "y" * MAX_QUERY_LENGTH
