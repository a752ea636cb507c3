"""``benchmarks/browser.py`` runs end to end on a tiny session (issue #7).

A smoke test: the script starts its own JupyterLab and Chromium, so it runs as a subprocess, as a
reader would run it. Only that it completes and prints its summary line is checked: timings on a
shared CI machine are noise, and the bars are the benchmark's business, not the suite's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "browser.py"
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
SUMMARY = re.compile(
    rf"elements/turn = {NUMBER} \(bar 30\); "
    rf"first paint/page load = {NUMBER}x \(bar 1\.0x\); "
    rf"open = [+-]{NUMBER} elements in {NUMBER} ms \(no bar\); "
    rf"whole 5 MB output: longest frame {NUMBER}x the median \(bar 1\.5x\)"
)


def test_the_browser_benchmark_completes_and_prints_its_summary(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--turns", "20", "--runs", "1", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,  # a cold JupyterLab on CI is slow; here it takes about 15 s
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert lines, done.stderr
    assert SUMMARY.fullmatch(lines[-1]), done.stdout
    assert lines[0].startswith("20 turns, "), done.stdout
    assert (tmp_path / "session.jsonl").is_file()
    assert (tmp_path / "session.html").is_file()
