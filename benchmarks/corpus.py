"""Scanning a corpus of sessions against parsing their lines with json.loads (spec Q-4, C-4).

Generates ``--sessions`` session files totalling about ``--mb`` megabytes (Claude Code sessions
from ``benchmarks/load.py``'s generator, with the bundled Codex, Gemini and Qwen fixtures mixed
in), then measures in the same run:

  baseline  json.loads over every line of every file, on one core
  first     turnfold.scan(folder, workers=2) with an empty cache, in a fresh process
  rescan    the same scan again (every row from the cache)
  grown     the scan after one session file grew: that file alone is read, whole the first
            time (and checkpointed), on from its last complete line the next (spec C-4)
  memory    peak RSS of the scanning process at a quarter of the sessions and at all of them
  to_arrow  corpus.to_arrow() of a scan of a generated Parquet file of ``--rows`` short
            trajectories, against pyarrow reading that file's message column (and, beside it,
            the scan of that file itself)

The baseline, the first scan and the rescan are timed ``--repeat`` times, alternating (each
first scan with an empty index of its own), and the best of each is taken: the machine is noisy.

Bars (issue 12): first <= 1.0x baseline; rescan <= 0.03x first; peak RSS <= 300 MB whatever
the corpus size; to_arrow <= 2x the read. The figures are printed as the last line.

    python benchmarks/corpus.py [--sessions 200] [--mb 200] [--rows 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

from benchmarks.load import generate, process_env

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
MIXED = [
    "codex_rollout_v0.129_two-turns.jsonl",
    "gemini-cli_legacy-json_file-ops.json",
    "qwen-code_chatrecord.jsonl",
]
#: One session in this many is a copy of a fixture of another format.
MIX_EVERY = 5

#: Run in a fresh process: scan, then print seconds, rows, items read and peak RSS (bytes).
SCAN = """
import importlib.util, json, resource, sys, time
import turnfold
# What a kernel has imported after its first scan: timed scans leave out import costs. pyarrow
# imports pandas, when it is installed, the first time it builds an array; genai-prices prices
# the rows.
import pyarrow, pyarrow.parquet, sqlite3, platformdirs, tqdm.auto, turnfold.corpus.index
import genai_prices
if importlib.util.find_spec("pandas"):
    import pandas
paths = json.loads(sys.argv[1])
source = paths if isinstance(paths, list) else paths
if len(sys.argv) > 2:  # a process that has scanned before: what the workers need is imported
    turnfold.scan(sys.argv[2], workers=2)
began = time.perf_counter()
corpus = turnfold.scan(source, workers=2)
elapsed = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": elapsed, "rows": len(corpus), "read": corpus.read,
                  "errors": corpus.errors, "peak": peak}))
"""


def make_corpus(folder: Path, sessions: int, megabytes: float) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    each = megabytes / max(1, sessions - sessions // MIX_EVERY)
    paths = []
    for i in range(sessions):
        if i % MIX_EVERY == MIX_EVERY - 1:
            fixture = FIXTURES / MIXED[(i // MIX_EVERY) % len(MIXED)]
            target = folder / f"s{i:04d}-{fixture.name}"
            shutil.copyfile(fixture, target)
        else:
            target = folder / f"s{i:04d}-claude.jsonl"
            generate(target, each, seed=i)
        paths.append(target)
    return paths


def baseline(paths: list[Path]) -> float:
    began = time.perf_counter()
    for path in paths:
        with path.open("rb") as lines:
            if path.suffix == ".json":
                json.loads(lines.read())
                continue
            for line in lines:
                if line.strip():
                    json.loads(line)
    return time.perf_counter() - began


def scan_in_process(source: object, cache: Path, before: Path | None = None) -> dict[str, float]:
    """Scan ``source`` in a fresh process with the index in ``cache``, after an untimed scan of
    ``before`` when given (the kernel of a user who scanned another folder first)."""
    env = {**process_env(), "TURNFOLD_CACHE_DIR": str(cache)}  # bytecode written, as for a user
    warm = [str(before)] if before is not None else []
    done = subprocess.run([sys.executable, "-c", SCAN, json.dumps(source), *warm], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def grow(session: Path, n: int) -> None:
    """The agent writes on: one more user line at the end of ``session``."""
    with session.open("a") as out:
        record = {"type": "user", "sessionId": "grown", "uuid": f"g-{n}",
                  "message": {"role": "user", "content": "more"}}  # fmt: skip
        out.write(json.dumps(record) + "\n")


def read_on(session: Path) -> tuple[float, float]:
    """Reading ``session`` on from a checkpoint at its last line but one, and reading it whole
    (best of three each, in this process)."""
    import turnfold
    from turnfold.formats.resume import read_growing

    lines = session.read_bytes().splitlines(keepends=True)
    part = session.with_name("part-" + session.name)
    part.write_bytes(b"".join(lines[:-1]))
    _, checkpoint = read_growing(part, "claude-code")
    with part.open("ab") as out:
        out.write(lines[-1])
    resumed = min(_timed(lambda: read_growing(part, "claude-code", checkpoint)) for _ in range(3))
    whole = min(_timed(lambda: turnfold.load(part, format="claude-code")) for _ in range(3))
    part.unlink()
    return resumed, whole


def trajectories(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def one(i: int) -> list[dict[str, object]]:
        return [
            {"role": "user", "content": f"Task {i}: what is {i} + {i}?"},
            {"role": "assistant", "content": f"It is {2 * i}."},
        ]

    batch = 10_000
    writer = None
    for start in range(0, rows, batch):
        count = min(batch, rows - start)
        table = pa.table({"task": [f"t{start + i}" for i in range(count)],
                          "messages": [one(start + i) for i in range(count)]})  # fmt: skip
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()


def arrow_bar(folder: Path, rows: int) -> tuple[float, float, float, int]:
    """to_arrow() of a scanned Parquet file, reading its message column, and the scan."""
    import pyarrow.parquet as pq

    import turnfold

    path = folder / "rollouts.parquet"
    trajectories(path, rows)
    read = min(_timed(lambda: pq.read_table(path, columns=["messages"])) for _ in range(3))
    began = time.perf_counter()
    corpus = turnfold.scan(path, workers=2)
    scanned = time.perf_counter() - began
    tables = []
    for _ in range(3):
        corpus._table = None  # measure building the table, not the memo of the last call
        tables.append(_timed(corpus.to_arrow))
    return min(tables), read, scanned, len(corpus)


def _timed(work: object) -> float:
    began = time.perf_counter()
    work()  # type: ignore[operator]
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "sessions"
        paths = make_corpus(folder, args.sessions, args.mb)
        size = sum(p.stat().st_size for p in paths)
        print(f"{len(paths)} sessions, {size / 1e6:.0f} MB")
        quarter = [str(p) for p in paths[: max(1, len(paths) // 4)]]
        small = scan_in_process(quarter, work / "cache-quarter")
        # Another user's folder, scanned first in the "process that has scanned before" case:
        # sessions of other days, so no price of the corpus's days is kept by it.
        other = work / "other"
        other.mkdir()
        for seed in (1_001, 1_002):  # each as large as a session of the corpus, at most 2.5 MB
            each = min(2.5, args.mb / max(1, args.sessions))
            generate(other / f"other-{seed}.jsonl", each, seed=seed, start=1_700_000_000.0)
        parses, firsts, warms, agains = [], [], [], []
        for run in range(max(1, args.repeat)):
            parses.append(baseline(paths))
            firsts.append(scan_in_process(str(folder), work / f"cache-{run}"))
            agains.append(scan_in_process(str(folder), work / f"cache-{run}"))
            warms.append(scan_in_process(str(folder), work / f"cache-warm-{run}", other))
        parse = min(parses)
        first = min(firsts, key=lambda r: r["seconds"])
        warm = min(warms, key=lambda r: r["seconds"])
        again = min(agains, key=lambda r: r["seconds"])
        print(f"baseline json.loads, one core: {parse:.2f}s (best of {len(parses)})")
        print(f"first scan, 2 workers, in a fresh process: {first['seconds']:.2f}s, "
              f"{first['rows']:.0f} rows, {first['errors']:.0f} errors")  # fmt: skip
        print(f"first scan, 2 workers, in a process that scanned another folder before (what "
              f"its workers need imported already): {warm['seconds']:.2f}s")  # fmt: skip
        print(f"rescan: {again['seconds']:.3f}s, {again['read']:.0f} files read")
        grow(paths[0], 1)
        after = scan_in_process(str(folder), work / "cache-0")
        print(f"after one file grew: {after['read']:.0f} file(s) read (whole, checkpointed), "
              f"{after['seconds']:.3f}s")  # fmt: skip
        grow(paths[0], 2)
        on = scan_in_process(str(folder), work / "cache-0")
        print(f"after it grew again: {on['read']:.0f} file(s) read on from the checkpoint, "
              f"{on['seconds']:.3f}s")  # fmt: skip
        resumed, whole = read_on(paths[0])
        print(f"that file read on from its checkpoint: {resumed * 1000:.1f} ms, "
              f"read whole: {whole * 1000:.1f} ms")  # fmt: skip
        mb = 1024 * 1024
        print(f"peak RSS of the scanning process: {small['peak'] / mb:.0f} MB at {len(quarter)} "
              f"sessions, {first['peak'] / mb:.0f} MB at {len(paths)}")  # fmt: skip
        table, read, scanned, rows = arrow_bar(work, args.rows)
        print(f"to_arrow of {rows} rows: {table * 1000:.1f} ms; reading the message column: "
              f"{read * 1000:.1f} ms; the scan of the file: {scanned:.2f}s")  # fmt: skip
    print(
        f"corpus: first/baseline = {first['seconds'] / parse:.2f}x (after another scan "
        f"{warm['seconds'] / parse:.2f}x), "
        f"rescan/first = {again['seconds'] / first['seconds']:.3f}x, "
        f"to_arrow/read = {table / read:.2f}x, grown read {after['read']:.0f}, "
        f"read on/whole = {resumed / whole:.2f}x, "
        f"peak RSS {small['peak'] / mb:.0f}/{first['peak'] / mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
