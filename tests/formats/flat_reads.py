"""Issue 22: a finished framework run read flat, against the same run read by the builder.

Both reads must give the same transcript, dump, warnings and accounting; the adapters' own
tests say which runs are read flat and which are left to the builder.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

import turnfold
from turnfold.model import Transcript


def read_both(
    monkeypatch: pytest.MonkeyPatch, adapter: ModuleType, value: Any, *, tried: str, declined: Any
) -> tuple[Transcript, Transcript, bool]:
    """``value`` loaded as a user loads it, and loaded with ``adapter._read_flat`` declining
    (it returns ``declined``) so that the builder reads it; and whether the flat read was
    taken, as ``adapter``'s function ``tried`` says (it returns None when it declines)."""
    original = getattr(adapter, tried)
    taken: list[bool] = []

    def spy(*args: Any) -> Any:
        made = original(*args)
        taken.append(made is not None)
        return made

    with monkeypatch.context() as patched:
        patched.setattr(adapter, tried, spy)
        read = turnfold.load(value)
    with monkeypatch.context() as patched:
        patched.setattr(adapter, "_read_flat", lambda *args: declined)
        built = turnfold.load(value)
    return read, built, any(taken)


def assert_read_alike(read: Transcript, built: Transcript, label: object) -> None:
    """The two reads of one run give the same transcript, dump, accounting and warnings."""
    assert read == built, label
    assert read.dump() == built.dump(), label
    assert read.accounting == built.accounting, label
    assert read.warnings == built.warnings, label
