"""Hostile transcripts in real Chromium (spec X-1): the exported page, the static site (its
index and its pages) and the comparison page, written by ``turnfold render`` from the readers'
real files carrying payloads in every written string (``tests/hostile_inputs.py``), opened from
``file://`` as a reader opens what someone sent them, every fold opened and every element
hovered. A trap installed before any of the page's own script records anything a payload runs.

The pages' own Content-Security-Policy would block most payloads anyway; a payload the policy
blocked is still a failure here (``securitypolicyviolation``): the sanitizer, not the policy, is
what keeps the page inert, and the policy is checked apart.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.hostile_inputs import NEW_READERS, PAYLOAD, hostile_copy
from turnfold.cli import main
from turnfold.render.html import CSP

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

#: Installed before the page's own script: ``window.__pwned`` set, a dialog opened, or a CSP
#: violation reported (a payload that reached the page as markup) is written down.
TRAP = """
window.__caught = [];
Object.defineProperty(window, '__pwned', {
  configurable: false,
  get() { return undefined; },
  set(value) { window.__caught.push('pwned: ' + value); },
});
for (const name of ['alert', 'confirm', 'prompt']) {
  window[name] = (message) => { window.__caught.push(name + ': ' + message); };
}
document.addEventListener('securitypolicyviolation', (event) => {
  window.__caught.push('csp: ' + event.violatedDirective + ' ' + event.blockedURI);
});
"""


@pytest.fixture
def readers(tmp_path: Path) -> Path:
    """The readers' real files, hostile, in a folder; one of them named by a payload too (a
    run's key, which the site's index shows and links)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in NEW_READERS:
        hostile_copy(name, folder)
    named = folder / ("<img src=x onerror=\"window.__pwned='key'\">\u202e" + "run.json")
    shutil.copy(folder / Path(NEW_READERS[-1]).name, named)
    return folder


def _visit(chromium: Browser, page_path: Path) -> tuple[Page, list[str]]:
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    context.add_init_script(TRAP)
    requests: list[str] = []
    page = context.new_page()
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (requests.append("dialog"), dialog.dismiss()))
    page.goto(page_path.as_uri())
    return page, requests


def _everything_opened_and_hovered(page: Page) -> None:
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    page.evaluate(
        """() => document.querySelectorAll('body *').forEach((e) => {
            for (const kind of ['mouseover', 'mouseenter', 'focus', 'click']) {
                if (kind === 'click' && e.closest('a')) continue;  // no navigating away
                e.dispatchEvent(new Event(kind, {bubbles: true}));
            }
        })"""
    )
    page.wait_for_timeout(500)  # any handler a payload managed to attach has fired by now


def _assert_inert(page: Page, requests: list[str]) -> None:
    assert page.evaluate("() => window.__caught") == []
    assert {url.split(":", 1)[0] for url in requests} <= {"file", "data"}, requests
    assert "evil.test" not in " ".join(requests)
    assert page.locator("iframe, object, embed, form, base, link, svg script").count() == 0
    bad = page.evaluate(
        """() => [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes]
            .filter((a) => /^on/i.test(a.name) || a.name === 'srcdoc'
                || /^\\s*(javascript|vbscript|data:text)/i.test(a.value))
            .map((a) => e.tagName + ' ' + a.name + '=' + a.value))"""
    )
    assert bad == []


def test_X1_an_exported_page_of_each_reader_runs_nothing(
    chromium: Browser, readers: Path, tmp_path: Path
) -> None:
    for source in sorted(readers.iterdir()):
        out = tmp_path / f"{source.stem}.html"
        assert main(["render", str(source), "-o", str(out), "--expand"]) == 0
        html = out.read_text("utf-8")
        assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in html
        page, requests = _visit(chromium, out)
        _everything_opened_and_hovered(page)
        _assert_inert(page, requests)
        # the payload is there to read, as text.
        assert "<script>window.__pwned='script'</script>" in page.locator("body").inner_text()
        page.context.close()


def test_X1_B2_the_site_of_hostile_runs_runs_only_its_own_script(
    chromium: Browser, readers: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    assert main(["render", str(readers), "-o", f"{site}/"]) == 0
    pages = [site / "index.html", *sorted((site / "runs").glob("*.html"))]
    assert len(pages) > len(NEW_READERS)
    for path in pages:
        page, requests = _visit(chromium, path)
        assert re.search(r"script-src 'sha256-[^']+'", page.content())  # its own, by hash
        _everything_opened_and_hovered(page)
        _assert_inert(page, requests)
        assert page.locator("script").count() == 1
        if path.name == "index.html":  # every run, the one named by a payload too
            assert page.locator("tbody tr").count() == len(NEW_READERS) + 1
            page.locator(".tf-site-filters input[type=search]").fill("pwned")
            page.wait_for_timeout(200)
            _assert_inert(page, requests)
        page.context.close()


def test_X1_the_comparison_of_two_hostile_runs_runs_nothing(
    chromium: Browser, readers: Path, tmp_path: Path
) -> None:
    a = readers / Path(NEW_READERS[0]).name
    b = readers / Path(NEW_READERS[1]).name
    out = tmp_path / "compare.html"
    assert main(["render", "--compare", str(a), str(b), "-o", str(out)]) == 0
    page, requests = _visit(chromium, out)
    assert page.locator("details").count() > 0
    _everything_opened_and_hovered(page)
    _assert_inert(page, requests)
    assert PAYLOAD[:30] in page.locator("body").inner_text()
    page.context.close()


@pytest.mark.parametrize(
    ("head", "caught"),
    [("", "pwned: img"), (f'<meta http-equiv="Content-Security-Policy" content="{CSP}">', "csp: ")],
)
def test_X1_the_trap_itself_catches_a_payload_that_ran_or_that_the_policy_stopped(
    chromium: Browser, tmp_path: Path, head: str, caught: str
) -> None:
    path = tmp_path / "unsafe.html"
    path.write_text(f"<!DOCTYPE html><html><head>{head}</head><body>"
                    "<img src=x onerror=\"window.__pwned='img'\"></body></html>")  # fmt: skip
    page, _ = _visit(chromium, path)
    page.wait_for_timeout(300)
    assert any(line.startswith(caught) for line in page.evaluate("() => window.__caught"))
    page.context.close()
