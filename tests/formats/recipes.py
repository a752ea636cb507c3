"""A fixture's recipe module (``*_recipe.py``, beside the fixtures it makes) imported by the tests
that read those fixtures: its constants name them (the file, the sessions in it), and some tests
run it live. A recipe lives in a folder of fixtures, not a package, so it is imported by path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def recipe(path: Path) -> ModuleType:
    """The recipe module at ``path``, imported under its file's name."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None, path
    assert spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
