"""Loading a session full of bad lines against trying each line with the stdlib (spec X-1, L-4).

A log file loaded by mistake, or a JSONL damaged by a binary overwrite, is millions of lines
that are not JSON records; each is counted and warned of (past the first listed warnings, only
counted). Generates, for each kind of bad line, a real-shaped Claude Code session (the
generator of ``benchmarks/load.py``) whose middle is ``--lines`` bad lines of that kind, then
measures in the same run, each as a whole fresh process:

  baseline   read the file line by line and try every line with ``json.loads``, catching its
             error: the least a reader that reports each bad line pays
  measured   ``turnfold.load(path)``

The kinds: log lines (``2026-01-01 12:00:07 INFO …``, whose leading numbers read as glued
values), words, JSON cut off mid-record, records holding ``NaN`` (read as values), glued
records ``{…}{…}`` (read as values) and binary garbage (invalid UTF-8).

No bar is set yet: a log line is six glued numbers and a bad tail, seven warned records, so
it costs several times the baseline. At small ``--lines`` the interpreter's start and imports
weigh on the load side. The figures are printed as the last line. Times are best of
``--runs`` alternating runs, so machine noise hits every side alike.

    python benchmarks/bad_lines.py [--lines 1000000] [--runs 3] [--kinds log,binary]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

from benchmarks.load import SMALL_OUTPUT_SIZES, best_of, generate_turns, python


def _binary(rng: random.Random) -> Callable[[int], bytes]:
    return lambda _: rng.randbytes(40).replace(b"\n", b" ")


def _log(_: random.Random) -> Callable[[int], bytes]:
    def line(i: int) -> bytes:
        stamp = f"2026-01-01 12:{i // 60 % 60:02d}:{i % 60:02d}"
        return f"{stamp} INFO worker {i % 7} done in {i % 90}ms".encode()

    return line


#: Each kind of bad line, as a maker of the line of a given number.
KINDS: dict[str, Callable[[random.Random], Callable[[int], bytes]]] = {
    "log": _log,
    "words": lambda _: lambda i: b"x" if i % 2 else b"Traceback (most recent call last):",
    "truncated": lambda _: lambda i: b'{"type":"user","mess',
    "nan": lambda _: lambda i: b'{"type":"progress","uuid":"p%d","data":{"loss":NaN}}' % i,
    "glued": lambda _: lambda i: b'{"type":"progress","uuid":"g%d"}{"type":"progress"}' % i,
    "binary": _binary,
}


def write_session(path: Path, kind: str, lines: int) -> int:
    """A session of a few real turns whose middle is ``lines`` bad lines of ``kind``; its
    size in bytes."""
    head = path.with_suffix(".head")
    generate_turns(head, 3, output_sizes=SMALL_OUTPUT_SIZES)
    good = head.read_bytes().splitlines(keepends=True)
    head.unlink()
    bad = KINDS[kind](random.Random(7))
    with path.open("wb") as out:
        out.writelines(good[:-1])
        for number in range(lines):
            out.write(bad(number) + b"\n")
        out.write(good[-1])
    return path.stat().st_size


#: Each line tried with the stdlib, its error caught: the baseline.
TRY_EACH = (
    "import json,sys\nwith open(sys.argv[1],'rb') as f:\n for l in f:\n"
    "  try: json.loads(l)\n  except ValueError: pass"
)
LOAD = "import sys,turnfold\nturnfold.load(sys.argv[1])"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS), help="which kinds, comma-separated")
    options = parser.parse_args()
    kinds = options.kinds.split(",")
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kind {', '.join(unknown)}; choose from {', '.join(KINDS)}")

    ratios: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            path = Path(tmp) / f"{kind}.jsonl"
            size = write_session(path, kind, options.lines)
            baseline, load = best_of(
                options.runs, python(TRY_EACH, str(path)), python(LOAD, str(path))
            )
            ratios[kind] = load / baseline
            print(f"{kind}: {options.lines:,} bad lines, {size / 2**20:.1f} MB, "
                  f"load/try-each = {ratios[kind]:.2f}x", flush=True)  # fmt: skip
            path.unlink()
    worst = max(ratios, key=ratios.__getitem__)
    figures = ", ".join(f"{kind} {ratio:.2f}x" for kind, ratio in ratios.items())
    print(f"bad lines: load/try-each = {ratios[worst]:.2f}x at worst ({worst}): {figures}")


if __name__ == "__main__":
    main()
