"""Loading a large Claude Code session against parsing its lines (spec Q-1, issue 19).

Generates a Claude Code JSONL session of at least ``--mb`` megabytes with realistic shapes (many
turns, parallel tool calls split over lines that share a message id, thinking, large outputs,
errors), then measures in the same run, each as a whole fresh process (interpreter start and
imports included, with bytecode, as a user of the command or a scan worker pays them):

  baselines  read the file line by line and decode every line: with ``json.loads`` (the
             stdlib), with msgspec (the fastest decoder here; turnfold's codec) and with
             orjson (the decoder the issue names; where it is installed)
  measured   ``turnfold.load(path)``
  memory     peak RSS growth of a fresh process that only loads the file, over the file size

Bars (issue 19): load <= 1.0x the stdlib parse (<= 2x the orjson parse, and msgspec's); peak
memory no higher than before (1.39x the file). The figures are printed as the last line. Times
are best of ``--runs`` alternating runs, so machine noise hits every side alike.

    python benchmarks/load.py [--mb 50] [--runs 3] [--keep PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

SESSION = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
CWD = "/home/dev/shop"
BASE = {"sessionId": SESSION, "cwd": CWD, "version": "2.1.4", "gitBranch": "main",
        "userType": "external", "isSidechain": False}  # fmt: skip
TOOLS = [
    ("Read", lambda r: {"file_path": f"{CWD}/src/module_{r.randrange(400)}.py"}),
    ("Grep", lambda r: {"pattern": f"def handler_{r.randrange(90)}", "path": "src"}),
    ("Glob", lambda r: {"pattern": "**/*.py"}),
    ("Bash", lambda r: {"command": r.choice(["pytest -q", "npm test", "ls -la", "git status"])}),
    ("Edit", lambda r: {"file_path": f"{CWD}/src/m{r.randrange(50)}.py", "old_string": "a",
                        "new_string": "b"}),
    ("Write", lambda r: {"file_path": f"{CWD}/notes/n{r.randrange(50)}.md", "content": "x" * 400}),
]  # fmt: skip
#: A model the price table knows, so the session header, the corpus rows and their turns price
#: every response as they do for a real session (spec U-2).
MODEL = "claude-sonnet-4-5-20250929"
WORDS = ["the", "a", "parser", "config", "handler", "test", "module", "value", "default",
         "request", "user", "file", "line"]  # fmt: skip


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


#: The sizes of the tool outputs the generator writes, in characters: one picked per output.
OUTPUT_SIZES = (200, 800, 3_000, 12_000, 40_000)
#: Smaller outputs, for sessions of thousands of turns a reader opens in a notebook: with the
#: default sizes 2,000 turns are about 250 MB (benchmarks/scale.py and browser.py use these).
SMALL_OUTPUT_SIZES = (200, 800, 3_000)


def _output(rng: random.Random, sizes: tuple[int, ...]) -> str:
    size = rng.choice(sizes)
    lines = []
    while sum(map(len, lines)) < size:
        lines.append(f"{rng.randrange(10_000):>5}  {_prose(rng, 10)}")
    return "\n".join(lines)


#: When a generated session starts: 2026-01-01, UTC.
START = 1_767_225_600.0


class _Session:
    def __init__(
        self, seed: int, output_sizes: tuple[int, ...] = OUTPUT_SIZES, start: float = START
    ) -> None:
        self.rng = random.Random(seed)
        self.output_sizes = output_sizes
        self.parent: str | None = None
        self.n = 0
        self.clock = start

    def line(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        self.n += 1
        uuid = f"00000000-0000-4000-8000-{self.n:012d}"
        self.clock += self.rng.uniform(0.05, 4)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock))
        record = {**BASE, "parentUuid": self.parent, "type": kind, "uuid": uuid,
                  "timestamp": f"{stamp}.{int(self.clock % 1 * 1000):03d}Z", "message": message,
                  **extra}  # fmt: skip
        self.parent = uuid
        return json.dumps(record, ensure_ascii=False)

    def turn(self, number: int) -> Iterator[str]:
        rng = self.rng
        yield self.line("user", {"role": "user", "content": f"Task {number}: {_prose(rng, 25)}"})
        for step in range(rng.randrange(2, 7)):
            message_id = f"msg_{number:05d}_{step}"
            usage = {"input_tokens": rng.randrange(100, 9000),
                     "output_tokens": rng.randrange(50, 900),
                     "cache_read_input_tokens": rng.randrange(0, 50_000)}  # fmt: skip

            def assistant(
                block: dict[str, Any], mid: str = message_id, usage: dict[str, int] = usage
            ) -> str:
                message = {"id": mid, "type": "message", "role": "assistant", "model": MODEL,
                           "content": [block], "stop_reason": None, "usage": usage}  # fmt: skip
                return self.line("assistant", message, requestId=f"req_{mid}")

            if rng.random() < 0.6:
                yield assistant({"type": "thinking", "thinking": _prose(rng, 80), "signature": "s"})
            if rng.random() < 0.5:
                yield assistant({"type": "text", "text": _prose(rng, 30)})
            calls = []
            for _ in range(rng.choice([1, 1, 2, 3, 4])):
                name, make_args = rng.choice(TOOLS)
                call_id = f"toolu_{number:05d}_{step}_{len(calls)}"
                calls.append(call_id)
                yield assistant({"type": "tool_use", "id": call_id, "name": name,
                                 "input": make_args(rng)})  # fmt: skip
            for call_id in calls:
                output = _output(rng, self.output_sizes)
                error = rng.random() < 0.05
                result = {"type": "tool_result", "tool_use_id": call_id, "content": output,
                          "is_error": error}  # fmt: skip
                yield self.line("user", {"role": "user", "content": [result]},
                                toolUseResult={"stdout": output[:2000], "stderr": "",
                                               "interrupted": False})  # fmt: skip
        yield self.line(
            "assistant",
            {"id": f"msg_{number:05d}_final", "type": "message", "role": "assistant",
             "model": MODEL, "content": [{"type": "text", "text": _prose(rng, 60)}],
             "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 90}},
        )  # fmt: skip


def _write(path: Path, session: _Session, more: Callable[[int, int], bool]) -> int:
    """Write turns while ``more(turns written, bytes written)`` holds; the bytes written."""
    written = number = 0
    with path.open("w", encoding="utf-8") as out:
        while more(number, written):
            for line in session.turn(number):
                out.write(line + "\n")
                written += len(line.encode("utf-8")) + 1
            number += 1
    return written


def generate(path: Path, megabytes: float, seed: int = 11, start: float = START) -> int:
    """Write the session, its first line at ``start`` (seconds since the epoch); its size in
    bytes."""
    target = int(megabytes * 1024 * 1024)
    return _write(path, _Session(seed, start=start), lambda _, written: written < target)


def generate_turns(
    path: Path, turns: int, seed: int = 11, output_sizes: tuple[int, ...] = OUTPUT_SIZES
) -> int:
    """Write a session of exactly ``turns`` turns (same shapes as :func:`generate`); its size."""
    return _write(path, _Session(seed, output_sizes), lambda number, _: number < turns)


def parse_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as stream:
        for line in stream:
            json.loads(line)
            count += 1
    return count


def best_of(runs: int, *work: Callable[[], object]) -> list[float]:
    """Alternate the workloads ``runs`` times; the best time of each."""
    best = [float("inf")] * len(work)
    for _ in range(runs):
        for index, job in enumerate(work):
            start = time.perf_counter()
            job()
            best[index] = min(best[index], time.perf_counter() - start)
    return best


#: Each baseline and measured side as a fresh process: ``python -c SCRIPT FILE``.
PARSE_JSON = "import json,sys\nwith open(sys.argv[1],'rb') as f:\n for l in f: json.loads(l)"
PARSE_MSGSPEC = (
    "import msgspec,sys\nd=msgspec.json.Decoder().decode\n"
    "with open(sys.argv[1],'rb') as f:\n for l in f: d(l)"
)
#: orjson, the decoder the issue names for its second bar, where it is installed (turnfold's
#: codec is msgspec's: faster here, see turnfold.codec).
PARSE_ORJSON = (
    "import orjson,sys\nd=orjson.loads\nwith open(sys.argv[1],'rb') as f:\n for l in f: d(l)"
)
LOAD = "import sys,turnfold\nturnfold.load(sys.argv[1])"


def process_env() -> dict[str, str]:
    """The environment of a measured process: bytecode written and read, as for a user (some
    sandboxes set PYTHONDONTWRITEBYTECODE, which would recompile every import every run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TQDM_DISABLE"] = "1"
    return env


def process(*argv: str) -> Callable[[], object]:
    """A whole process to time: run once now (the warm-up that writes bytecode)."""
    command = [sys.executable, *argv]
    env = process_env()

    def run() -> object:
        return subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)

    run()
    return run


def python(script: str, *args: str) -> Callable[[], object]:
    """``python -c script args`` as a timed process."""
    return process("-c", script, *args)


_PEAK = """
import resource, sys, turnfold
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = turnfold.load(sys.argv[1])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before * 1024, after * 1024, len(t.entries))
"""


def peak_memory(path: Path) -> tuple[int, int, int]:
    """(RSS before loading, peak RSS after, entries) of a fresh process that loads ``path``."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path)], check=True, capture_output=True, text=True
    ).stdout.split()
    return int(out[0]), int(out[1]), int(out[2])


def main() -> None:
    import turnfold

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the generated session here and keep it")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = options.keep or Path(tmp) / "session.jsonl"
        size = generate(path, options.mb)
        # First, while this process is small: Linux carries the peak RSS over into the child.
        before, peak, _ = peak_memory(path)
        lines = parse_lines(path)
        sides = [PARSE_JSON, PARSE_MSGSPEC, LOAD]
        if find_spec("orjson") is not None:
            sides.append(PARSE_ORJSON)
        parse, fast, load, *other = best_of(
            options.runs, *(python(script, str(path)) for script in sides)
        )
        transcript = turnfold.load(path)

    calls = len(transcript.tool_calls())
    print(f"{size / 2**20:.1f} MB, {lines} lines, {len(transcript.entries)} entries, {calls} calls")
    orjson = f", orjson per line {other[0]:.2f}s" if other else " (orjson not installed)"
    print(
        f"whole processes: json.loads per line {parse:.2f}s, msgspec per line {fast:.2f}s"
        f"{orjson}, turnfold.load {load:.2f}s"
    )
    print(f"peak RSS {peak / 2**20:.0f} MB (process before loading: {before / 2**20:.0f} MB)")
    by_orjson = f"load/orjson = {load / other[0]:.2f}x (bar 2.0x), " if other else ""
    print(
        f"load/parse = {load / parse:.2f}x (bar 1.0x), load/msgspec = {load / fast:.2f}x "
        f"(bar 2.0x), {by_orjson}peak RSS/file size = {peak / size:.2f}x, "
        f"growth while loading/file size = {(peak - before) / size:.2f}x"
    )


if __name__ == "__main__":
    main()
