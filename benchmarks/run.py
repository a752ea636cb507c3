"""Every benchmark at full size, one after the other, then each one's summary line.

    python benchmarks/run.py             # all of them (about half an hour on 2 cores)
    python benchmarks/run.py scale load  # some of them, by name

Each script prints its own figures as it goes (ratios against a baseline measured in the same
run, see its docstring); this one repeats their last lines at the end, the figures the README's
performance table quotes. The browser benchmark needs ``/usr/bin/chromium`` and JupyterLab (the
test extras); without them it says why and the others still run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "load", "render", "batches", "scale", "browser", "corpus", "runs", "site", "harnesses",
    "traces", "frameworks", "compare", "bad_lines",
)  # fmt: skip


def run(name: str) -> tuple[int, str]:
    """Run ``benchmarks/<name>.py``, showing its output; its exit status and last line."""
    print(f"\n=== {name} ===", flush=True)
    process = subprocess.Popen(
        [sys.executable, str(HERE / f"{name}.py")],
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert process.stdout is not None
    last = ""
    for line in process.stdout:
        print(line, end="", flush=True)
        if line.strip():
            last = line.strip()
    return process.wait(), last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"which to run (default: {', '.join(BENCHMARKS)})"
    )
    names = parser.parse_args().names or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    results = {name: run(name) for name in names}
    print("\n=== summary ===")
    for name, (status, last) in results.items():
        print(f"{name:8} {last if status == 0 else f'failed with status {status}: {last}'}")
    return max((status for status, _ in results.values()), default=0)


if __name__ == "__main__":
    raise SystemExit(main())
