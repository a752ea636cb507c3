"""Scanning one large file of runs (a training run's rollouts in JSON lines; spec C-1, C-4, C-5).

Writes ``--rows`` rollouts (a task, a reward, a Chat Completions trajectory of 2 to 8 tool
calls each, about 3.5 KB) to one JSONL file, then measures in the same run, in this process
(after an untimed scan of a small file, so no import is timed):

  baseline  json.loads of every line, on one core
  parts     turnfold.scan(file, workers=2): the file cut at its lines' ends into parts that
            both workers read at once
  whole     the same scan read by one worker (workers=1), as every file of runs was before
  parquet   the same rows as a Parquet file, scanned with 2 workers (a table's rows), and
            scanned again unchanged (its rows from the index)
  search    corpus.search of a text no run holds (so every record is read), with 2 workers
            (the file searched in its parts at once) against one worker (searched whole)
  grown     after 1% more rows were appended twice: the first growth a scan sees is read whole
            (and marked), the second is read on from the mark, the new lines alone (C-4)

Each figure is the best of ``--repeat`` alternating runs (the machine is noisy).

    python benchmarks/runs.py [--rows 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def rollout(i: int, chooser: random.Random) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Task {i}: fix the bug in module {i % 97}. " + "x " * 200},
    ]
    for k in range(chooser.randint(2, 8)):
        call = f"call_{i}_{k}"
        name = chooser.choice(["bash", "read_file", "grep"])
        arguments = json.dumps({"cmd": f"cat src/m{k}.py"})
        messages.append({"role": "assistant", "content": "Let me look. " * 5, "tool_calls": [
            {"id": call, "type": "function", "function": {"name": name, "arguments": arguments}},
        ]})  # fmt: skip
        messages.append({"role": "tool", "tool_call_id": call,
                         "content": "line\n" * chooser.randint(10, 80)})  # fmt: skip
    messages.append({"role": "assistant", "content": f"Done {i}."})
    return {"task_id": f"t{i}", "reward": chooser.random(), "messages": messages}


def write(path: Path, start: int, count: int, mode: str = "w") -> None:
    chooser = random.Random(start)
    with path.open(mode) as out:
        for i in range(start, start + count):
            out.write(json.dumps(rollout(i, chooser)) + "\n")


def baseline(path: Path) -> float:
    began = time.perf_counter()
    with path.open("rb") as lines:
        for line in lines:
            json.loads(line)
    return time.perf_counter() - began


def timed_scan(source: Path, cache: Path, workers: int) -> tuple[float, int]:
    import turnfold

    os.environ["TURNFOLD_CACHE_DIR"] = str(cache)
    began = time.perf_counter()
    corpus = turnfold.scan(source, workers=workers)
    return time.perf_counter() - began, len(corpus)


def timed_search(source: Path, cache: Path, workers: int) -> float:
    """A search of a text no run holds (every record read) in the scan of ``source``."""
    import turnfold

    os.environ["TURNFOLD_CACHE_DIR"] = str(cache)
    corpus = turnfold.scan(source, workers=workers)  # from the index: scanned before
    began = time.perf_counter()
    assert corpus.search("a text no run holds") == []
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = work / "rollouts.jsonl"
        write(path, 0, args.rows)
        table = pa.Table.from_pylist([json.loads(line) for line in path.open("rb")])
        parquet = work / "rollouts.parquet"
        pq.write_table(table, parquet)
        del table
        small = work / "small.jsonl"
        write(small, 0, 20)
        timed_scan(small, work / "warm", 2)  # imports, and forks once, untimed
        print(f"{args.rows} rollouts, {path.stat().st_size / 1e6:.0f} MB")
        parses, parts, wholes, tables = [], [], [], []
        for run in range(max(1, args.repeat)):
            parses.append(baseline(path))
            seconds, rows = timed_scan(path, work / f"parts-{run}", 2)
            assert rows == args.rows, rows
            parts.append(seconds)
            wholes.append(timed_scan(path, work / f"whole-{run}", 1)[0])
            tables.append(timed_scan(parquet, work / f"parquet-{run}", 2)[0])
        parse, part, whole, table_s = min(parses), min(parts), min(wholes), min(tables)
        rescan = timed_scan(parquet, work / "parquet-0", 2)[0]
        searched = [timed_search(path, work / "parts-0", 2) for _ in range(max(1, args.repeat))]
        searched_whole = [timed_search(path, work / "whole-0", 1)
                          for _ in range(max(1, args.repeat))]  # fmt: skip
        search, search_whole = min(searched), min(searched_whole)
        print(f"baseline json.loads, one core: {parse:.2f}s (best of {len(parses)})")
        print(f"scan, 2 workers, read in parts: {part:.2f}s; one worker, read whole: {whole:.2f}s; "
              f"the same rows as Parquet, 2 workers: {table_s:.2f}s, again unchanged: "
              f"{rescan:.3f}s")  # fmt: skip
        print(f"search of a text no run holds, 2 workers, in parts: {search:.2f}s; one worker, "
              f"whole: {search_whole:.2f}s")  # fmt: skip
        more = max(1, args.rows // 100)
        write(path, args.rows, more, "a")
        first, _ = timed_scan(path, work / "parts-0", 2)  # first growth seen: whole, marked
        write(path, args.rows + more, more, "a")
        on, rows = timed_scan(path, work / "parts-0", 2)
        assert rows == args.rows + 2 * more, rows
        print(f"after {more} rows were appended: {first:.2f}s (read whole, marked); after "
              f"{more} more: {on:.3f}s (read on from the mark)")  # fmt: skip
    print(
        f"runs: parts/baseline = {part / parse:.2f}x, whole/baseline = {whole / parse:.2f}x, "
        f"parts/whole = {part / whole:.2f}x, parquet/baseline = {table_s / parse:.2f}x, "
        f"parquet rescan/first = {rescan / table_s:.3f}x, "
        f"search parts/whole = {search / search_whole:.2f}x, "
        f"read on/whole = {on / first:.3f}x"
    )


if __name__ == "__main__":
    sys.exit(main())
