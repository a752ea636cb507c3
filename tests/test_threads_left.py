"""The test run's guard against a thread left running (``tests.threads_left``): a run whose test
leaves a thread Python's exit would wait for ends anyway, with its own status, naming the
thread, the test that started it and where it waits. Before it, such a run printed its summary
and then never ended (CI's time ran out)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LEAVES_A_THREAD = """
import threading

never = threading.Event()


def test_passes_but_leaves_a_thread_waiting():
    threading.Thread(target=never.wait, name="left-waiting").start()


def test_a_pool_worker_is_not_counted():
    from concurrent.futures import ThreadPoolExecutor

    ThreadPoolExecutor(1).submit(int).result()  # its exit hook stops it: no hang
"""


def _run(tmp_path: Path, code: str, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest on ``code`` with the guard and the ``options``' plugins alone: the installed
    plugins (nbval, the frameworks' own) took most of each run's time to import."""
    (tmp_path / "test_left.py").write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.threads_left",
         "--rootdir", str(tmp_path), "-c", "/dev/null", *options, str(tmp_path / "test_left.py")],
        capture_output=True, text=True, timeout=120, check=False,
        cwd=Path(__file__).parents[1], env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )  # fmt: skip


def test_a_thread_left_running_is_named_and_the_run_ends_with_its_own_status(
    tmp_path: Path,
) -> None:
    result = _run(tmp_path, LEAVES_A_THREAD)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "2 passed" in out
    assert "1 thread(s) left running, which Python's exit would wait for (the run ends" in out
    assert (
        "- 'left-waiting', started in test_left.py::test_passes_but_leaves_a_thread_waiting" in out
    )
    assert "in wait" in out  # where it waits


def test_a_run_that_leaves_no_thread_ends_as_it_did(tmp_path: Path) -> None:
    result = _run(tmp_path, "def test_nothing_left():\n    pass\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "left running" not in result.stdout


def test_a_failed_run_that_leaves_a_thread_ends_failed(tmp_path: Path) -> None:
    result = _run(tmp_path, LEAVES_A_THREAD + "\n\ndef test_fails():\n    assert False\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 2 passed" in result.stdout
    assert "left running" in result.stdout


def test_a_pytest_xdist_worker_that_leaves_a_thread_ends_properly(tmp_path: Path) -> None:
    """CI runs the tests on pytest-xdist workers: a worker ended at once by the guard never told
    its controller it finished ("node down: Not properly terminated"), and the run failed."""
    result = _run(tmp_path, LEAVES_A_THREAD, "-p", "xdist", "-n", "1")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "2 passed" in result.stdout
    assert "node down" not in out
