"""The benchmark scripts still run (issues #3, #7): each at a tiny size, as a subprocess.

Only that each exits 0 and ends with its one-line summary of ratio figures is checked. Timings
are never asserted: on a shared CI machine they are noise, and at these sizes meaningless. The
full-size figures come from running the scripts by hand (see each one's docstring).
``benchmarks/browser.py`` needs JupyterLab and Chromium and is left to the browser tests;
``benchmarks/frameworks.py`` runs in the test's own process (its frameworks imported there already).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

#: A ratio figure as the scripts print them, such as "1.23x".
RATIO = re.compile(r"\d+\.\d+x")

#: Each script with tiny options, and how its last line starts.
CASES = [
    ("load.py", ["--mb", "1", "--runs", "1"], "load/parse = "),
    ("render.py", ["--mb", "1", "--runs", "1"], "render/parse = "),
    ("batches.py", ["--batches", "500", "--runs", "1"], "build_batch_view, zh:"),
    ("scale.py", ["--mb", "1", "--turns", "20", "--runs", "1"], "projection/parse = "),
    (
        "corpus.py",
        ["--sessions", "5", "--mb", "2", "--rows", "200", "--repeat", "1"],
        "corpus: first/baseline = ",
    ),
    ("runs.py", ["--rows", "200", "--repeat", "1"], "runs: parts/baseline = "),
    ("site.py", ["--sessions", "5", "--mb", "2", "--runs", "1"], "site: first/baseline = "),
    ("harnesses.py", ["--mb", "0.3", "--runs", "1"], "harnesses: all/parse = "),
    ("traces.py", ["--mb", "0.2", "--runs", "1"], "traces: load/parse = "),
    ("compare.py", ["--turns", "30", "--runs", "1"], "compare: align/widget = "),
    ("bad_lines.py", ["--lines", "2000", "--runs", "1"], "bad lines: load/try-each = "),
]


@pytest.mark.parametrize(("script", "options", "summary"), CASES, ids=[case[0] for case in CASES])
def test_benchmark_runs_small_and_prints_its_ratios(
    script: str, options: list[str], summary: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *options],
        capture_output=True,
        text=True,
        timeout=300,  # a hang fails the test instead of the whole CI run
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    lines = done.stdout.strip().splitlines()
    assert lines, f"{script} printed nothing"
    last = lines[-1]
    assert last.startswith(summary), f"{script} ended with {last!r}"
    assert RATIO.search(last), f"{script} ended without a ratio figure: {last!r}"


def test_the_frameworks_benchmark_runs_small_in_this_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``benchmarks/frameworks.py`` as its ``main()`` runs it, here: the eight frameworks it
    scripts are imported in this process already (the tests of each import it), and as a
    subprocess importing them again took most of its minute."""
    from benchmarks import frameworks

    monkeypatch.setattr(sys, "argv", ["frameworks.py", "--steps", "5", "--runs", "1"])
    frameworks.main()
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines
    assert lines[-1].startswith("frameworks: convert/serialize = "), lines[-1]
    assert RATIO.search(lines[-1])


def test_the_one_command_for_every_benchmark_knows_their_names() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run.py"), "no-such-benchmark"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    names = "load, render, batches, scale, browser, corpus, runs, site, harnesses"
    assert f"choose from {names}" in done.stderr
