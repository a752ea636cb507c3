"""Every test and notebook runs with the built-in display defaults, whatever the machine has.

A developer's saved turnfold defaults or TURNFOLD_* variables would otherwise change what the
tests and notebooks show and fail stored outputs (spec T-5 layers those over the defaults). An empty
user config directory is used rather than JUPYTER_NO_CONFIG, whose stand-in directory is shared
by the whole process, so one test saving defaults there would leak into every later one.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from turnfold.caches import CACHE_ENV
from turnfold.settings import SETTING_NAMES

#: A thread a test leaves running fails the run, named, instead of keeping it from ending.
pytest_plugins = ("tests.threads_left",)

#: Test folders whose tests share one costly thing, a whole run long: the JupyterLab server and
#: Chromium of the browser suite, the plays of the real coding agents. Each is one group for
#: pytest-xdist, so one worker starts it once.
_SHARED = ("browser", "agents")

#: The variables that change what turnfold shows (other TURNFOLD_* ones, such as the golden-file
#: switch of the renderer tests, are left alone).
_DISPLAY_VARIABLES = {f"TURNFOLD_{name.upper()}" for name in SETTING_NAMES}


def pytest_configure() -> None:
    os.environ["JUPYTER_CONFIG_DIR"] = tempfile.mkdtemp(prefix="turnfold-nbval-config-")
    # turnfold's caches (the corpus index, kept prices) in a folder of the run's own, never the
    # developer's, removed when it ends; a test of a cache points it at its own folder.
    os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="turnfold-cache-")
    atexit.register(shutil.rmtree, os.environ[CACHE_ENV], ignore_errors=True)
    for name in [n for n in os.environ if n in _DISPLAY_VARIABLES or n.startswith("TURNFOLD_FAST")]:
        del os.environ[name]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests for ``pytest -n auto --dist loadgroup`` (the README's test command): a
    file's tests run on one worker, in order (a notebook's cells under nbval share its kernel;
    a module's fixtures are made once), and each folder of :data:`_SHARED` on one worker."""
    tests = Path(__file__).parent / "tests"
    for item in items:
        group = next(
            (name for name in _SHARED if item.path.is_relative_to(tests / name)),
            str(item.path),
        )
        item.add_marker(pytest.mark.xdist_group(group))
