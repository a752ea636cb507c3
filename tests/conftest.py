"""Fixtures the widget tests share (``test_widget.py``, ``test_timeline.py``, ``test_saved.py``,
``test_compare*.py``) and the tests of what a scan never opens (``opened``, ``connected``,
``cache_dir``), and what the tests folder holds that is no test."""

from __future__ import annotations

import builtins
import importlib.util
import io
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turnfold import ondemand

#: The scripts that made a fixture with an older release of a framework (run in a venv of
#: their own, as each says): no test, and their imports are that release's.
collect_ignore_glob = ["fixtures/**/*_recipe.py"]
#: The generators of the fixtures of frameworks whose pins conflict with the test set's (CrewAI,
#: Semantic Kernel): run in a venv of their own; their doctests only where it is installed.
collect_ignore = [
    f"formats/{module}.py"
    for name, modules in (("crewai", ("crewai_runs", "crewai_runs_shapes")),
                          ("semantic_kernel", ("semantic_kernel_runs",)))
    if importlib.util.find_spec(name) is None
    for module in modules
]  # fmt: skip


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """A helper module of the tests (no ``test_*.py``, no doctest in it) is not collected: the
    tests that use it import it. Collected, ``--doctest-modules`` imported each on every
    pytest-xdist worker for nothing (Inspect AI's, LangChain's, Agno's runs: seconds each)."""
    name = collection_path.name
    if collection_path.suffix != ".py" or name.startswith("test_"):
        return None
    if name in ("conftest.py", "__init__.py"):
        return None
    return ">>>" not in collection_path.read_text(encoding="utf-8", errors="replace") or None


#: Haystack sends usage telemetry (posthog) unless told not to, read when it is imported.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")


@pytest.fixture
def widgets() -> Iterator[list[Any]]:
    """Widgets made by a test (a ``TranscriptWidget``, a ``CompareWidget``), closed after it so
    no timer thread outlives it."""
    made: list[Any] = []
    yield made
    for widget in made:
        widget.close()


@pytest.fixture
def in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Widgets made in the test send their views in parts, however small (Q-2): a view within
    ``WHOLE_VIEW_BUDGET`` otherwise travels whole (N-1), with nothing left to ask for."""
    monkeypatch.setattr(ondemand, "WHOLE_VIEW_BUDGET", 0)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path this process opens through Python (``open``, ``io.open``, ``os.open``,
    ``Path.open``), as a scan with ``workers=1`` runs in it: what the tests of files a scan
    must never open (test_scan_opencode_data.py, test_scan_agent_credentials.py) look at."""
    seen: list[str] = []

    def spy(real: Any) -> Any:
        def opening(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)):
                seen.append(os.fspath(file))
            return real(file, *args, **kwargs)

        return opening

    monkeypatch.setattr(builtins, "open", spy(builtins.open))
    monkeypatch.setattr(io, "open", spy(io.open))
    monkeypatch.setattr(os, "open", spy(os.open))
    return seen


@pytest.fixture
def connected(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every database this process connects to (``sqlite3.connect``): ``opened`` sees Python's
    opens, not SQLite's (test_credentials_cursor_continue.py, test_credentials_more.py)."""
    seen: list[str] = []
    real = sqlite3.connect

    def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        seen.append(os.fspath(database))
        connection: sqlite3.Connection = real(database, *args, **kwargs)
        return connection

    monkeypatch.setattr(sqlite3, "connect", connect)
    return seen


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (``TURNFOLD_CACHE_DIR``), so no scan reads or writes the
    user's: a module asks for it with ``pytestmark = pytest.mark.usefixtures("cache_dir")``."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def browsers() -> Iterator[list[Any]]:
    """The session browsers a test makes (``browsers.append(SessionBrowser(...))``), closed when
    it ends: a browser's search thread and transcript widget end with it."""
    made: list[Any] = []
    yield made
    for browser in made:
        browser.close()
