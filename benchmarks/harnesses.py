"""Inspect AI eval logs: loading every sample, one sample, and scanning a large log (issue 13).

Builds an ``.eval`` log of at least ``--mb`` megabytes with the real ``inspect_ai`` package: the
bundled fixture's samples (a real ``mockllm`` run: tool calls, a failing tool, a sub-agent, two
scorers) copied under new ids until the log is that large, written by inspect_ai's own ``.eval``
recorder as an eval run writes it (see ``_write``). Then measures in the same run:

  baseline  ``json.loads`` of every sample's JSON member of the zip (decompression included)
  all       ``inspect_log.transcripts(path)``: every sample as a transcript, one at a time
  one       ``turnfold.load(path, sample=ID, epoch=1)`` of the last sample
  memory    peak RSS of a fresh process that scans the log (``turnfold.scan``, one worker)

Bars (issue 13): loading all <= 3x the baseline; one sample <= 0.05x loading all; the scan's
peak RSS <= 300 MB for a 200 MB log. Times are best of ``--runs`` alternating runs.

    python benchmarks/harnesses.py [--mb 200] [--runs 3] [--keep PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

from benchmarks.load import best_of, process_env

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "tests/fixtures/harnesses/inspect/mockllm_two-epochs.eval"
)
ONE_BAR, ALL_BAR, RSS_BAR_MB = 0.05, 3.0, 300
#: The fixture's samples as (id, epoch): each copy holds all four.
ORIGINAL_KEYS = ((1, 1), (2, 1), (1, 2), (2, 2))
#: About what one sample adds to the log, compressed: the first guess of how many to write,
#: before the log's own size says; it is the file's size that decides when it is enough.
FIXTURE_SAMPLE_BYTES = 5_000


#: Samples written between two flushes of the log, as an eval run flushes its recorder.
FLUSH_EVERY = 1000


def generate(path: Path, megabytes: float) -> tuple[int, int]:
    """Write a log of at least ``megabytes`` MB; (its size, how many samples it holds)."""
    return asyncio.run(_write(path, megabytes * 1024 * 1024))


async def _write(path: Path, target: float) -> tuple[int, int]:
    """The log written by inspect_ai's own ``.eval`` recorder, as ``inspect eval`` writes
    one: started, the samples logged and flushed every :data:`FLUSH_EVERY`, then finished.

    Not ``write_eval_log(log)`` of one log holding every sample: it buffers them all before
    writing any, and each sample it buffers is checked against every sample buffered before
    (quadratic: 4,000 samples took 98 s, a 200 MB log holds 40,000), and it condenses each
    copy anew. A copy differs from its original only in its id, so the originals are
    condensed once (as ``write_eval_log`` condenses every sample) and the copies logged."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.log._condense import condense_sample
    from inspect_ai.log._recorders.eval import EvalRecorder

    log = read_eval_log(str(FIXTURE))
    originals = [condense_sample(sample) for sample in log.samples or []]
    recorder = EvalRecorder(str(path.parent))
    await recorder.log_init(log.eval, str(path), clean=True)
    await recorder.log_start(log.eval, log.plan)
    samples = size = 0
    while size < target:
        # Up to FLUSH_EVERY samples, fewer once the bytes a sample adds say fewer will do.
        per_sample = size / samples if samples else FIXTURE_SAMPLE_BYTES
        wanted = min(FLUSH_EVERY, int((target - size) / per_sample) + 1)
        for _ in range(-(-wanted // len(originals))):  # whole copies of the fixture's samples
            copy = samples // len(originals)
            for sample in originals:
                update = {"id": f"{sample.id}-{copy}"}
                await recorder.log_sample(log.eval, sample.model_copy(update=update))
            samples += len(originals)
        await recorder.flush(log.eval)
        size = path.stat().st_size
    await recorder.log_finish(
        log.eval, log.status, log.stats, log.results, log.reductions, log.error
    )
    return path.stat().st_size, samples


def _sample_names(path: Path) -> list[str]:
    """The names of the log's sample members."""
    with zipfile.ZipFile(path) as archive:
        return [n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json")]


def parse_members(path: Path) -> int:
    """The baseline: every sample member of the zip decompressed and parsed by the stdlib."""
    with zipfile.ZipFile(path) as archive:
        for name in _sample_names(path):
            json.loads(archive.read(name))
    return len(_sample_names(path))


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
    parser.add_argument("--keep", type=Path, help="keep the log here; an existing one is reused")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = options.keep or Path(tmp) / "large.eval"
        if options.keep is not None and path.exists():
            # As generate() does: inspect_ai teaches zipfile the Zstandard members it writes,
            # which the baseline's json.loads of every member needs.
            import inspect_ai.log  # noqa: F401

            size, samples = path.stat().st_size, len(_sample_names(path))
        else:
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
