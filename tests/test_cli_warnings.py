"""The command's warnings (W-6, C-7) read as the rest of what it says, ``turnfold: warning: …``,
not as a Python ``UserWarning`` pointing at turnfold's entry point (``__main__.py:8`` and its
``run()`` line), which tells the reader nothing about their own files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl"


def _turnfold(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "TURNFOLD_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    environment.pop("PYTHONWARNINGS", None)
    return subprocess.run(
        [sys.executable, "-m", "turnfold", *args], capture_output=True, text=True,
        env=environment, timeout=300, check=False,
    )  # fmt: skip


def test_W6_a_site_build_says_its_warning_as_a_line_of_its_own(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copyfile(SESSION, runs / "session.jsonl")
    # A Parquet file among the sessions: a scan skips it and warns (its runs are scanned alone).
    messages = [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]]
    pq.write_table(pa.table({"messages": messages}), runs / "rollouts.parquet")
    done = _turnfold("render", str(runs), "-o", str(tmp_path / "site"), cache=tmp_path / "c")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    parquet = runs / "rollouts.parquet"
    warning = [line for line in lines if "skipped a Parquet file" in line]
    assert warning == [
        f"turnfold: warning: skipped a Parquet file among the sessions ({parquet}); a scan "
        "reads a Parquet file's runs when given Parquet files alone: scan it on its own"
    ]
    assert "UserWarning" not in done.stderr
    assert "__main__" not in done.stderr
    assert "run()" not in done.stderr
    assert lines[-1].startswith("turnfold: wrote ")
