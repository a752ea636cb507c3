"""Tests and benchmarks import the code they share by its package name (``tests.formats.loops``,
``tests.browser.labkit``, ``benchmarks.load``), never by a bare name that resolves only because
pytest put the test file's folder on ``sys.path`` (its "prepend" import mode): so that
``python -c "import tests.formats.test_adk"`` works, and one helper is never loaded twice under
two names. Fixture recipes (``tests/fixtures/**/*_recipe.py``) are scripts: they put the
repository on ``sys.path`` themselves, and only their imports are checked."""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
TESTS = REPOSITORY / "tests"
BENCHMARKS = REPOSITORY / "benchmarks"
#: What is no code of the tests: generated output, saved pages, the agents' npm packages.
NOT_CODE = {"__pycache__", "node_modules", "artifacts", "golden"}


def _code(root: Path) -> list[Path]:
    """The ``.py`` files under ``root``, never walking into what is no code (``rglob`` walked
    the agents' npm packages, thousands of folders, at every worker's collection)."""
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if name not in NOT_CODE)
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return sorted(found)


FILES = _code(TESTS) + _code(BENCHMARKS)
#: The folders whose modules could be imported by a bare name if they were on sys.path.
SHARED = [TESTS, *(p for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_CODE)]
SHARED_NAMES = {
    path.stem
    for folder in [*SHARED, BENCHMARKS]
    for path in folder.glob("*.py")
    if path.stem not in ("__init__", "conftest")
}


def _of_the_repository(name: str) -> bool:
    """Whether the top-level ``name`` is one of the tests' or benchmarks' own modules (not a
    module installed under the same name, such as the stdlib's ``site`` or the Agents SDK's
    ``agents``)."""
    if name not in SHARED_NAMES:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None:
        return True
    if not spec.has_location or spec.origin is None:  # built in, frozen (``site``)
        return False
    return any(Path(spec.origin).resolve().is_relative_to(root) for root in (TESTS, BENCHMARKS))


def _bare_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [
            f"{path.relative_to(REPOSITORY)}:{node.lineno}: {name}"
            for name in names
            if _of_the_repository(name.split(".")[0])
        ]
    return found


def _path_changes(path: Path) -> list[str]:
    """``sys.path.insert(...)`` / ``sys.path.append(...)`` calls in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(REPOSITORY)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("insert", "append")
        and ast.unparse(node.func.value) == "sys.path"
    ]


def test_shared_code_is_imported_by_its_package_name() -> None:
    bare = [line for path in FILES for line in _bare_imports(path)]
    assert bare == []


def test_no_test_puts_a_folder_on_sys_path() -> None:
    tests = [path for path in _code(TESTS) if "fixtures" not in path.relative_to(TESTS).parts]
    assert [line for path in tests for line in _path_changes(path)] == []


#: The folders of test code: recipes' folders of fixtures are none (recipes are scripts,
#: imported by path: tests/formats/recipes.py).
FOLDERS = sorted(
    {path.parent for path in _code(TESTS) if "fixtures" not in path.relative_to(TESTS).parts}
    - {TESTS}
)


@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(TESTS)) for f in FOLDERS])
def test_every_folder_of_test_code_is_a_package(folder: Path) -> None:
    """A folder without ``__init__.py`` is what pytest puts on sys.path (its modules then
    importable by bare names)."""
    assert (folder / "__init__.py").is_file(), folder.relative_to(REPOSITORY)
