"""Fixtures for the widget tests in a real browser against a real JupyterLab (issue 5).

Every test in ``tests/browser/`` is marked ``browser`` (``pytest -m "not browser"`` leaves them
out) and is skipped, with the reason, only when Debian's Chromium (``/usr/bin/chromium``),
JupyterLab or Playwright is missing. No browser is ever downloaded: Playwright drives the system
Chromium.

Fixtures, from the outside in:

``lab_server`` (package)
    A JupyterLab server on a free loopback port with a random token, rooted in a temporary
    directory, with its own settings and workspaces (the reader's own JupyterLab settings never
    leak in) and ``window.jupyterapp`` exposed so tests can run JupyterLab commands.
``chromium`` (package)
    ``/usr/bin/chromium`` launched headless by Playwright.
``lab_page`` (package)
    One browser page that stays in JupyterLab from test to test.
``lab`` (per test)
    That page wrapped in :class:`Lab`: write a notebook, open it, run all cells, switch the
    theme, take screenshots, and what the page logged during the test: ``lab.console``,
    ``lab.dialogs`` (dismissed at once) and ``lab.requests``. After the test its notebooks are
    closed and its kernels shut down (:meth:`Lab.close_all`). JupyterLab starts once on the
    page, not once per test: its start took 5–10 s of each test on CI, the most of many. A
    test marked ``own_page`` gets a fresh page of its own instead, for what only a page's
    start reads: an init script it adds, or a JupyterLab setting it writes first.

The first two are shared by every test in this folder and stopped after its last one, not at
the end of the run: the rest of the suite does not share two cores with an idle JupyterLab and
Chromium, nor its main thread with Playwright's event loop, which made ``asyncio.run`` in a later
test fail ("cannot be called from a running event loop").

A typical test (helpers in ``labkit.py``)::

    from tests.browser.labkit import Lab

    def test_something(lab: Lab) -> None:
        widget = lab.open_notebook("x.ipynb", [DEMO_SETUP, "widget"])
        lab.toggle(widget, "process:turn:e0")
        assert lab.expanded(widget, "process:turn:e0")

Screenshots go to ``tests/artifacts/`` (git-ignored; CI keeps them as artifacts).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.labkit import (
    CHROMIUM,
    CHROMIUM_ARGS,
    STATIC,
    Lab,
    LabServer,
    missing,
    new_page,
    running_lab,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Request

HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; repeated here so the marker exists with --strict-markers
    # whatever the configuration file says.
    config.addinivalue_line("markers", "browser: runs a real Chromium against a real JupyterLab")
    config.addinivalue_line(
        "markers", "own_page: a browser test's `lab` is a fresh page of its own (conftest.py)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = missing()
    for item in items:
        if not item.path.is_relative_to(HERE):
            continue
        item.add_marker(pytest.mark.browser)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"browser suite: {reason}"))


@pytest.fixture(scope="package")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    reason = missing()
    if reason is not None:
        pytest.skip(f"browser suite: {reason}")
    if not (STATIC / "widget.js").is_file():
        pytest.fail("the widget bundle is not built: run `npm ci && npm run build` in js/")
    with running_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="package")
def chromium() -> Iterator[Browser]:
    reason = missing()
    if reason is not None:
        pytest.skip(f"browser suite: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture(scope="package")
def lab_page(chromium: Browser) -> Iterator[Page]:
    with new_page(chromium) as page:
        yield page


@pytest.fixture
def lab(request: pytest.FixtureRequest, chromium: Browser, lab_server: LabServer) -> Iterator[Lab]:
    own = request.node.get_closest_marker("own_page") is not None
    with (
        new_page(chromium)
        if own
        else contextlib.nullcontext(request.getfixturevalue("lab_page")) as page
    ):
        helper = Lab(page, lab_server)

        def on_console(message: ConsoleMessage) -> None:
            helper.console.append(f"{message.type}: {message.text}")

        def on_dialog(dialog: Dialog) -> None:
            helper.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        def on_request(request: Request) -> None:
            helper.requests.append(request.url)

        page.on("console", on_console)
        page.on("dialog", on_dialog)
        page.on("request", on_request)
        try:
            yield helper
        finally:
            page.remove_listener("console", on_console)
            page.remove_listener("dialog", on_dialog)
            page.remove_listener("request", on_request)
            # The next test starts clean: no notebook open, no kernel running.
            helper.close_all()
