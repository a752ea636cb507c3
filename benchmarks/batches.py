"""How the batch rules cost against parsing the same tool calls from JSON (spec Q-1).

Generates a large synthetic session of tool batches, then times, in the same run:
  baseline  json.loads of every serialized tool call (what any loader must pay at least)
  measured  build_batch_view + build_tool_summary over every batch
and prints the ratio measured / baseline. Absolute times on shared machines are noise; the ratio is
the number to watch.

    python benchmarks/batches.py [--batches 20000]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

from turnfold.batches import build_batch_view
from turnfold.formats.native import entry_from_dict, entry_to_dict
from turnfold.model import ToolCall, ToolResult

NAMES = ["Read", "Grep", "Glob", "LS", "Bash", "Edit", "Write", "Task", "WebFetch", "save_memory"]
STATUSES = ["success"] * 8 + ["error", "cancelled", "executing"]


def make_batches(count: int, seed: int = 7) -> list[list[ToolCall]]:
    rng = random.Random(seed)
    batches = []
    for b in range(count):
        size = rng.choice([1, 1, 2, 3, 4, 6, 10])
        batches.append(
            [
                ToolCall(
                    call_id=f"call_{b}_{i}",
                    name=rng.choice(NAMES),
                    args={"file_path": f"src/module_{rng.randrange(500)}.py"},
                    description=rng.choice([f"src/module_{i}.py", None, '{"x": 1}', "npm test"]),
                    status=rng.choice(STATUSES),  # type: ignore[arg-type]
                    result=ToolResult(text="line\n" * rng.randrange(1, 40)),
                    batch_id=f"msg_{b}",
                )
                for i in range(size)
            ]
        )
    return batches


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()

    batches = make_batches(options.batches)
    lines = [json.dumps(entry_to_dict(c)) for batch in batches for c in batch]
    parse = best_of(options.runs, lambda: [json.loads(line) for line in lines])
    decode = best_of(options.runs, lambda: [entry_from_dict(json.loads(line)) for line in lines])
    views = best_of(options.runs, lambda: [build_batch_view(b) for b in batches])
    zh_views = best_of(options.runs, lambda: [build_batch_view(b, locale="zh") for b in batches])

    print(f"{len(lines)} tool calls in {len(batches)} batches, best of {options.runs} runs")
    print(f"baseline json.loads per call:       1.00x ({parse * 1e3:.1f} ms)")
    print(f"json.loads + model decode:          {decode / parse:.2f}x")
    print(f"build_batch_view, en:               {views / parse:.2f}x")
    print(f"build_batch_view, zh:               {zh_views / parse:.2f}x")


if __name__ == "__main__":
    main()
