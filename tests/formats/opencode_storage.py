"""The real OpenCode 1.1.65 ``storage/`` folder of tests/fixtures/opencode/v1.1/work, copied for a
test to change as OpenCode (or an interrupted delete, a rename) would: its lead session, the
sub-agent it ran, and where a session's file lies."""

from __future__ import annotations

import shutil
from pathlib import Path

STORAGE = Path(__file__).parents[1] / "fixtures" / "opencode" / "v1.1" / "work" / "storage"
#: The lead session and the sub-agent its ``task`` call ran.
LEAD = "ses_db984376cffe4173dEEMgi271X"
SUB = "ses_db9843492ffeAn3SMnhtNqHEM5"


def copy_storage(tmp_path: Path) -> Path:
    """A copy of the fixture's ``storage/`` under ``tmp_path/opencode``, as OpenCode lays it."""
    storage = tmp_path / "opencode" / "storage"
    shutil.copytree(STORAGE, storage)
    return storage


def session_file(storage: Path, name: str) -> Path:
    """The file of session ``name`` in ``storage`` (OpenCode 1.1 files sessions by project)."""
    return storage / "session" / "global" / f"{name}.json"
