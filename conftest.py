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
from typing import Any

import pytest

from turnfold.caches import CACHE_ENV
from turnfold.settings import SETTING_NAMES

#: A thread a test leaves running fails the run, named, instead of keeping it from ending.
pytest_plugins = ("tests.threads_left",)

#: Test folders whose tests share one costly thing: the JupyterLab server and Chromium of the
#: browser suite, the plays of the real coding agents. Each runs in so many parts, each part
#: whole on one pytest-xdist worker, which starts that thing once for it. One part each: the
#: browser suite in two parts (two JupyterLab servers and two Chromiums on two cores) took
#: longer in all than in one, measured in clean-clone CI.
_SHARED = {"browser": 1, "agents": 1}

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


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: a plain run has no scheduler
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The work of ``pytest -n auto --dist loadfile`` (the README's test command): each file's
    tests on one worker, in order (a notebook's cells under nbval share its kernel; a module's
    fixtures are made once), and each part of a folder of :data:`_SHARED` too, whole, as one
    unit.

    Units are handed out in the order they were collected, not the largest first: the shared
    folders' parts, the longest units by far, then start within the run's first minutes."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    tests = Path(__file__).parent / "tests"
    part_of = {
        f"tests/{folder}/{file.name}": f"tests/{folder}/ (part {index % parts + 1} of {parts})"
        for folder, parts in _SHARED.items()
        for index, file in enumerate(sorted((tests / folder).glob("test_*.py")))
    }

    class SharedFolders(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            return part_of.get(file, file)

    config.option.loadscopereorder = False
    return SharedFolders(config, log)
