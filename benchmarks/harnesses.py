"""Inspect AI eval logs: loading every sample, one sample, and scanning a large log (issue 13).

Builds an ``.eval`` log of at least ``--mb`` megabytes with the real ``inspect_ai`` package: the
bundled fixture's samples (a real ``mockllm`` run: tool calls, a failing tool, a sub-agent, two
scorers) copied under new ids until the log is that large, written by ``write_eval_log``. Then
measures in the same run:

  baseline  ``json.loads`` of every sample's JSON member of the zip (decompression included)
  all       ``inspect_log.transcripts(path)``: every sample as a transcript, one at a time
  one       ``turnfold.load(path, sample=ID, epoch=1)`` of the last sample
  memory    peak RSS of a fresh process that scans the log (``turnfold.scan``, one worker)

Bars (issue 13): loading all <= 3x the baseline; one sample <= 0.05x loading all; the scan's
peak RSS <= 300 MB for a 200 MB log. Times are best of ``--runs`` alternating runs.

    python benchmarks/harnesses.py [--mb 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# benchmarks/ is not a package: its timing helper is imported from this directory.
from load import best_of, process_env

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "tests/fixtures/harnesses/inspect/mockllm_two-epochs.eval"
)
ONE_BAR, ALL_BAR, RSS_BAR_MB = 0.05, 3.0, 300
#: The fixture's samples as (id, epoch): each copy holds all four.
ORIGINAL_KEYS = ((1, 1), (2, 1), (1, 2), (2, 2))


def generate(path: Path, megabytes: float) -> tuple[int, int]:
    """Write a log of at least ``megabytes`` MB; (its size, how many samples it holds)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(FIXTURE))
    originals = list(log.samples or [])
    size = FIXTURE.stat().st_size
    # The fixture's own size gives the copies needed; one more write if it was not enough.
    copies = max(1, int(megabytes * 1024 * 1024 / size) + 1)
    while True:
        log.samples = [
            sample.model_copy(update={"id": f"{sample.id}-{copy}"})
            for copy in range(copies)
            for sample in originals
        ]
        write_eval_log(log, str(path), format="eval")
        written = path.stat().st_size
        if written >= megabytes * 1024 * 1024:
            return written, len(log.samples)
        copies = int(copies * megabytes * 1024 * 1024 / written) + 1


def parse_members(path: Path) -> int:
    """The baseline: every sample member of the zip decompressed and parsed by the stdlib."""
    count = 0
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("samples/") and name.endswith(".json"):
                json.loads(archive.read(name))
                count += 1
    return count


def load_all(path: Path) -> int:
    from turnfold.formats.harnesses import inspect_log

    return sum(1 for _ in inspect_log.transcripts(path))


def load_one(path: Path, sample: str) -> None:
    import turnfold

    turnfold.load(path, sample=sample, epoch=1)


# VmHWM, not ru_maxrss: a child started by this (large) process inherits its ru_maxrss, while
# the high-water mark belongs to the child's own memory since exec.
_SCAN = """
import os, sys, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()
import turnfold
corpus = turnfold.scan(sys.argv[1], workers=1, cache=False)
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(peak * 1024, len(corpus.to_arrow()))
"""


def scan_peak(path: Path) -> tuple[int, int]:
    """(peak RSS in bytes, rows) of a fresh process that scans the log."""
    done = subprocess.run(
        [sys.executable, "-c", _SCAN, str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=process_env(),
    )
    peak, rows = done.stdout.split()
    return int(peak), int(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.eval"
        size, samples = generate(path, options.mb)
        one_id = f"2-{samples // len(ORIGINAL_KEYS) - 1}"  # the last copy's second sample
        peak, rows = scan_peak(path)
        parse, every, one = best_of(
            options.runs,
            lambda: parse_members(path),
            lambda: load_all(path),
            lambda: load_one(path, one_id),
        )

    print(f"{size / 2**20:.1f} MB log, {samples} samples; scan: {rows} rows")
    print(f"json.loads of every sample: {parse:.2f}s   all samples: {every:.2f}s   one: {one:.3f}s")
    print(
        f"harnesses: all/parse = {every / parse:.2f}x (bar {ALL_BAR}x); "
        f"one/all = {one / every:.3f}x (bar {ONE_BAR}x); "
        f"scan peak RSS = {peak / 2**20:.0f} MB (bar {RSS_BAR_MB} MB at 200 MB)"
    )


if __name__ == "__main__":
    main()
