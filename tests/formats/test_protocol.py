"""Every registered format is held to its protocol by mypy (``formats/protocol.py``, issue 14).

mypy checks the modules listed in ``protocol._conforms``; this test keeps that list equal to the
registry, so a format added to ``load()`` is type-checked from its first commit.
"""

from __future__ import annotations

import ast
from pathlib import Path

from turnfold import formats
from turnfold.formats import protocol


def _listed() -> dict[str, set[str]]:
    """The modules ``_conforms`` assigns to each protocol's list, by the list's name."""
    tree = ast.parse(Path(protocol.__file__).read_text(encoding="utf-8"))
    imported: dict[str, str] = {}
    lists: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("turnfold"):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.List):
            assert isinstance(node.target, ast.Name)
            names = {e.id for e in node.value.elts if isinstance(e, ast.Name)}
            lists[node.target.id] = {imported[name] for name in names}
    return lists


def test_every_registered_format_is_checked_against_a_protocol() -> None:
    lists = _listed()
    registered = set(formats._MODULE_NAMES.values())
    checked = lists["formats"] | lists["sampled"] | lists["frameworks"]
    assert checked == registered
    assert not lists["formats"] & lists["sampled"]  # each under the one protocol that fits


def test_each_module_is_listed_under_the_protocols_its_attributes_claim() -> None:
    lists = _listed()
    for name in formats.FORMATS:
        module = formats._module(name)
        qualified = formats._MODULE_NAMES[name]
        assert (qualified in lists["sampled"]) == bool(getattr(module, "HAS_SAMPLES", False))
        assert (qualified in lists["paths"]) == hasattr(module, "read_path")
        assert (qualified in lists["frameworks"]) == hasattr(module, "Follower")
        assert (qualified in lists["resumable"]) == hasattr(module, "reader")
