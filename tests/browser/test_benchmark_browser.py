"""``benchmarks/browser.py`` runs end to end on a tiny session and corpus (issues #7, 16).

A smoke test: the script runs as a subprocess, as a reader would run it, with its own Chromium,
on the suite's JupyterLab (``labkit.SHARED_LAB``: starting and stopping a server of its own, twice,
was half of its run). Only that it completes and prints its summary line is checked: timings on
a shared CI machine are noise, and the bars are the benchmark's business, not the suite's.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.labkit import LabServer

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "browser.py"
#: A session of 20 turns, once; a session browser of 300 rows, two round trips of each kind.
TINY = ["--turns", "20", "--runs", "1", "--rows", "300", "--trips", "2"]
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
SUMMARY = re.compile(
    rf"elements/turn = {NUMBER} \(bar 30\); "
    rf"first paint/page load = {NUMBER}x \(bar 1\.0x\); "
    rf"open = [+-]{NUMBER} elements in {NUMBER} ms \(no bar\); "
    rf"whole 5 MB output: longest frame {NUMBER}x the median \(bar 1\.5x\); "
    rf"session browser: state {NUMBER} KB \(bar 128 KB\); round trips sort {NUMBER} ms, "
    rf"filter {NUMBER} ms, page {NUMBER} ms \(bar 150 ms\); first paint {NUMBER} ms after the "
    rf"output appeared \(bar 1000 ms\)"
)


def test_the_browser_benchmark_completes_and_prints_its_summary(
    tmp_path: Path, lab_server: LabServer
) -> None:
    # A session of its own: a run that hangs is ended with the Chromium it started, and what
    # it printed until then is in the failure (a CI run once timed out here with nothing to
    # show why).
    script = subprocess.Popen(
        [sys.executable, str(SCRIPT), *TINY, "--keep", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # each line out as it is printed
        env={**os.environ, "PYTHONUNBUFFERED": "1", **lab_server.shared()},
    )
    try:
        stdout, stderr = script.communicate(timeout=300)  # here it takes about 15 s
    except subprocess.TimeoutExpired:
        os.killpg(script.pid, signal.SIGKILL)
        stdout, stderr = script.communicate()
        pytest.fail(f"no summary after 300 s; it printed:\n{stdout}\n{stderr}")
    done = subprocess.CompletedProcess(script.args, script.returncode, stdout, stderr)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert lines, done.stderr
    assert SUMMARY.fullmatch(lines[-1]), done.stdout
    assert lines[0].startswith("20 turns, "), done.stdout
    assert (tmp_path / "session.jsonl").is_file()
    assert (tmp_path / "session.html").is_file()
