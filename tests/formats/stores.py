"""The tests of the frameworks' session databases (Agno's, LangGraph's checkpointer, the Agents
SDK's, ADK's) change copies of them: a row damaged, a table of another program's beside them."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def writable(path: Path) -> Iterator[sqlite3.Connection]:
    """The database at ``path`` (made when missing) opened for writing, committed and closed
    at the end of the block."""
    db = sqlite3.connect(path)
    try:
        yield db
        db.commit()
    finally:
        db.close()
