"""A JupyterLab server and a browser page driving it, for the widget's browser tests.

``conftest.py`` turns these into fixtures; tests import :class:`Lab` from here for its helpers.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

HERE = Path(__file__).parent
ARTIFACTS = HERE.parent / "artifacts"
STATIC = HERE.parent.parent / "src" / "turnfold" / "static"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: A test page's size (:func:`new_page`); a test that changes it has it back for the next.
VIEWPORT = {"width": 1280, "height": 1000}
#: Milliseconds to wait for JupyterLab, a kernel or a widget; a cold start is slow on CI.
TIMEOUT_MS = 90_000
#: A running JupyterLab for a script's :func:`browsing_lab` to use rather than start its own
#: (:meth:`LabServer.shared`): a test hands the suite's server to the script it runs.
SHARED_LAB = "TURNFOLD_SHARED_LAB"


def missing() -> str | None:
    """Why the browser suite cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    for module in ("jupyterlab", "playwright"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


@dataclass
class LabServer:
    """A running JupyterLab: its base URL, token and root directory (where notebooks go)."""

    url: str
    token: str
    root: Path
    log: Path

    def lab_url(self, path: str = "") -> str:
        # ``reset``: start from an empty workspace, not the tabs an earlier test left open.
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"

    def shared(self) -> dict[str, str]:
        """The environment in which a script's :func:`browsing_lab` uses this server."""
        where = {"url": self.url, "token": self.token, "root": str(self.root), "log": str(self.log)}
        return {SHARED_LAB: json.dumps(where)}

    @classmethod
    def from_shared(cls, shared: str) -> LabServer:
        where = json.loads(shared)
        return cls(where["url"], where["token"], Path(where["root"]), Path(where["log"]))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _quiet_settings(directory: Path) -> None:
    """User settings that keep JupyterLab off the network and free of pop-ups during tests."""
    notifications = directory / "@jupyterlab" / "apputils-extension"
    notifications.mkdir(parents=True, exist_ok=True)
    (notifications / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True})
    )


@contextmanager
def running_lab(base: Path) -> Iterator[LabServer]:
    """A JupyterLab server under ``base`` for as long as the context lasts."""
    root = base / "notebooks"
    root.mkdir()
    settings = base / "settings"
    _quiet_settings(settings)
    token = secrets.token_hex(16)
    port = _free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYTHONUNBUFFERED": "1",
    }
    log = base / "server.log"
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        f"--port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0",
        "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
        command.append("--allow-root")
    url = f"http://127.0.0.1:{port}"
    with serving(command, env, log, f"{url}/api/status?token={token}"):
        yield LabServer(url, token, root, log)


@contextmanager
def serving(
    command: list[str], env: dict[str, str], log: Path, ready: str
) -> Iterator[subprocess.Popen[bytes]]:
    """A server process (its output in ``log``) for as long as the context lasts, from the
    moment the URL ``ready`` answers."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_until_up(process, ready, log)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def browsing_lab() -> Iterator[tuple[Browser, LabServer, Path]]:
    """For a script (the benchmarks; the tests have ``conftest.py``'s fixtures): headless
    Chromium, a JupyterLab server and a temporary directory. The server is the one
    ``$TURNFOLD_SHARED_LAB`` names (:meth:`LabServer.shared`), else one started in that
    directory: a test that runs a script spares it a server's start, most of a small run."""
    from playwright.sync_api import sync_playwright

    shared = os.environ.get(SHARED_LAB)
    with (
        tempfile.TemporaryDirectory() as base,
        nullcontext(LabServer.from_shared(shared)) if shared else running_lab(Path(base)) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser, server, Path(base)
        finally:
            browser.close()


def _wait_until_up(process: subprocess.Popen[bytes], ready: str, log: Path) -> None:
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(ready, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{process.args!r} did not answer:\n{log.read_text(errors='replace')}")


def code_notebook(cells: list[str]) -> Any:
    """A notebook of code cells for the python3 kernel (an ``nbformat`` node)."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return notebook


@contextmanager
def new_page(browser: Browser) -> Iterator[Page]:
    """A page in a fresh browser context (no cookies, no cache), closed with the context."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()


@dataclass
class Lab:
    """One browser page on the test JupyterLab, with helpers for notebooks and the widget."""

    page: Page
    server: LabServer
    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    # -- notebooks

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        """A notebook of code cells in the server's root, for the python3 kernel."""
        import nbformat

        path = self.server.root / name
        nbformat.write(code_notebook(cells), path)
        return path

    def open(self, name: str) -> None:
        """Open a notebook and wait until its kernel is ready.

        On a page already showing this JupyterLab the notebook opens in it, as a reader opens
        one (``docmanager:open``): JupyterLab's own start, 5–10 s on CI, is paid once per
        page, not once per test (see ``conftest.py``'s ``lab``)."""
        if self._in_lab():
            self.page.evaluate(  # the command's result, the panel, is not for Python
                "async (path) => {"
                " await window.jupyterapp.commands.execute('docmanager:open', { path }); }",
                name,
            )
        else:
            self.page.goto(self.server.lab_url(name))
        self.page.wait_for_function(
            "(path) => window.jupyterapp && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.context?.path === path"
            " && window.jupyterapp.shell.currentWidget.sessionContext",
            arg=name,
            timeout=TIMEOUT_MS,
        )
        self.page.evaluate(
            """async () => {
                const panel = window.jupyterapp.shell.currentWidget;
                await panel.context.ready;
                await panel.sessionContext.ready;
            }"""
        )
        self.page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel"
            "?.connectionStatus === 'connected'",
            timeout=TIMEOUT_MS,
        )

    def _in_lab(self) -> bool:
        return self.page.url.startswith(self.server.url) and bool(
            self.page.evaluate("() => Boolean(window.jupyterapp?.shell)")
        )

    def close_all(self) -> None:
        """Close every notebook and shut every kernel down, leaving the page in JupyterLab for
        the next test, as a fresh page would leave it: the viewport and media as
        :func:`new_page` makes them. A page whose JupyterLab shows a dialog, or fails to
        answer, is left for ``about:blank``: the next :meth:`open` loads JupyterLab anew."""
        try:
            left = self.page.evaluate(
                """async () => {
                    const app = window.jupyterapp;
                    if (!app) return 0;
                    for (const widget of [...app.shell.widgets('main')]) {
                        if (!widget.context) continue;
                        widget.context.model.dirty = false;  // closes without asking to save
                        widget.close();
                    }
                    await app.serviceManager.sessions.shutdownAll();
                    return document.querySelectorAll('.jp-Dialog').length
                        + [...app.shell.widgets('main')].filter((w) => w.context).length;
                }"""
            )
            self.page.set_viewport_size(VIEWPORT)
            self.page.emulate_media(reduced_motion="no-preference", color_scheme="light")
        except Exception:  # a page a test broke is replaced, whatever broke it
            left = 1
        if left:
            self.page.goto("about:blank")

    def command(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Run a JupyterLab command (``window.jupyterapp`` is exposed by the fixture)."""
        return self.page.evaluate(
            "([name, args]) => window.jupyterapp.commands.execute(name, args)", [name, args or {}]
        )

    def run_all(self) -> None:
        self.command("notebook:run-all-cells")
        self.wait_idle()

    def run_cell(self, index: int) -> None:
        """Run the cell at ``index`` again (a new output, a new view of the same widget)."""
        self.start_cell(index)
        self.wait_idle()

    def start_cell(self, index: int) -> None:
        """Start the cell at ``index`` without waiting for it: its run is watched while it runs.

        Run a cell to the end first (``run_cell``): until the kernel has been idle once, the
        widget manager is still asking it for the widgets it holds, and draws no new widget."""
        self.page.evaluate(
            "(index) => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = index; }",
            index,
        )
        self.command("notebook:run-cell")

    def execute(self, code: str) -> None:
        """Run ``code`` in the notebook's kernel, outside any cell (no output is shown)."""
        self.page.evaluate(
            """async (code) => {
                const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
                const reply = await kernel.requestExecute({ code, store_history: false }).done;
                if (reply.content.status !== 'ok') throw new Error(JSON.stringify(reply.content));
            }""",
            code,
        )

    def wait_idle(self) -> None:
        """Until every cell has run (no ``[*]`` prompt) and the kernel is idle."""
        self.page.wait_for_function(
            """() => {
                const panel = window.jupyterapp.shell.currentWidget;
                const kernel = panel.sessionContext.session?.kernel;
                const busy = [...panel.content.node.querySelectorAll('.jp-InputPrompt')]
                    .some((prompt) => prompt.textContent.includes('*'));
                return kernel && kernel.status === 'idle' && !busy;
            }""",
            timeout=TIMEOUT_MS,
        )

    def open_notebook(self, name: str, cells: list[str], *, widgets: int = 1) -> Locator:
        """Write, open and run a notebook; returns its first widget once ``widgets`` are drawn."""
        self.write_notebook(name, cells)
        self.open(name)
        self.run_all()
        views = self.views()
        views.nth(widgets - 1).wait_for(timeout=TIMEOUT_MS)
        return views.first

    def views(self) -> Locator:
        """Every widget view in the notebook now shown, in order."""
        panel = self.page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
        return self.page.locator(f"#{panel} .tf-widget")

    # -- the widget

    @staticmethod
    def keyed(widget: Locator, key: str) -> Locator:
        return widget.locator(f'[data-key="{key}"]').first

    def header(self, widget: Locator, key: str) -> Locator:
        """The header button of the disclosure ``key``."""
        return self.keyed(widget, key).locator(":scope > .tf-toggle")

    def toggle(self, widget: Locator, key: str) -> None:
        self.header(widget, key).click()

    def expanded(self, widget: Locator, key: str) -> bool:
        return self.header(widget, key).get_attribute("aria-expanded") == "true"

    def open_everything(self, widget: Locator, rounds: int = 40) -> int:
        """Click every closed header until none is left; how many clicks it took.

        Bodies are drawn when opened and their content may be asked of the kernel (Q-2), so a
        round ends when every header drawn so far is open, and the next starts once no fold is
        still loading. A header is clicked only if it is still closed when its turn comes: in
        a comparison, opening one side opens its counterpart (B-3), which a second click would
        close again. The closed headers are listed once per pass, not looked for again from
        the top after each click: on a page of 100,000 elements that search was most of the
        time a hostile test took."""
        from playwright.sync_api import expect

        total = 0
        for _ in range(rounds):
            expect(widget.locator(".tf-loading")).to_have_count(0, timeout=TIMEOUT_MS)
            clicked = widget.evaluate(
                """(root) => {
                    const seen = new Set();
                    let clicked = 0;
                    for (;;) {
                        const closed = [...root.querySelectorAll(
                            '.tf-toggle[aria-expanded="false"]')].filter((b) => !seen.has(b));
                        if (!closed.length) return clicked;
                        for (const button of closed) {
                            seen.add(button);
                            if (button.isConnected
                                    && button.getAttribute('aria-expanded') === 'false') {
                                button.click();
                                clicked += 1;
                            }
                        }
                    }
                }"""
            )
            total += clicked
            if not clicked:
                break
        return total

    def assert_inert(self, widget: Locator) -> None:
        """X-1: after the hostile content was opened, nothing of it ran (no dialog, no console
        line it wrote), loaded anything, or became an element or attribute that could."""
        assert self.dialogs == []
        assert not [line for line in self.console if "TF-PWNED" in line]
        assert not [url for url in self.requests if "evil.test" in url]
        assert widget.locator("script, iframe, object, embed, form").count() == 0
        handlers = widget.evaluate(
            "(root) => [...root.querySelectorAll('*')].flatMap(e => [...e.attributes])"
            ".filter(a => /^on/i.test(a.name) || /^\\s*javascript:/i.test(a.value)).length"
        )
        assert handlers == 0

    # -- look

    def set_theme(self, dark: bool) -> None:
        theme = "JupyterLab Dark" if dark else "JupyterLab Light"
        self.page.emulate_media(color_scheme="dark" if dark else "light")
        self.command("apputils:change-theme", {"theme": theme})
        self.page.wait_for_function(
            "(light) => document.body.dataset.jpThemeLight === light",
            arg="false" if dark else "true",
            timeout=TIMEOUT_MS,
        )
        self.page.wait_for_timeout(500)  # the theme's stylesheet applies after the attribute

    def screenshot(self, name: str, target: Locator | None = None) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        (target or self.page).screenshot(path=str(path))
        return path
