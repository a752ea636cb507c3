"""Copies of committed fixtures with a value or two changed, for tests of what a reader does with
a record the tool would not write (a time that is no time, a field of another type): the
fixture stays as the tool wrote it, the copy goes in the test's ``tmp_path``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def lines_copy(source: Path, tmp_path: Path, change: Callable[[list[Any]], None]) -> Path:
    """A copy of the JSON-lines file ``source``, its parsed lines changed by ``change``."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    change(records)
    path = tmp_path / source.name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def document_copy(source: Path, tmp_path: Path, change: Callable[[Any], None]) -> Path:
    """A copy of the JSON document ``source``, changed by ``change``."""
    document = json.loads(source.read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / source.name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path
