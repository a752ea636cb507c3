"""``turnfold render`` of a large Claude Code session against parsing its lines (spec Q-1, W-6).

Generates the same 50 MB session as ``benchmarks/load.py`` (its generator, imported from this
directory), then times whole processes, as a user of the command pays them (interpreter start
and imports included), in the same run:

  baselines  a fresh ``python -c`` that reads the file and decodes every line, once with
             ``json.loads`` and once with ``msgspec.json.decode`` (the codec under turnfold)
  measured   a fresh ``python -m turnfold render FILE -o PAGE`` (a partner process reads the
             session beside it and draws half the page: turnfold.forking.Partner), and the
             same with no partner, the child forked after the load instead
  size       the page's size over the input's size
  stages     a fresh process that times imports, load, the page (projection, view model and
             HTML), its write and its exit (the interpreter freeing the transcript) apart; the
             page once in one process and once shared with a forked child on a second core (see
             turnfold.render.page), to show whether the fork still wins

Every child runs without ``PYTHONDONTWRITEBYTECODE`` and after one warm-up run, so imports read
bytecode as they do for a user, and the price of the session's model is kept
(turnfold.kept_prices) as for a user's every render after the first of that model.
Bars (issue 19): render <= 2.5x the ``json.loads`` process; page <= 0.5x the input size.
Closed content is kept in the page (nothing silently dropped, X-2), so the page size is mostly
tool output. The figures are printed as the last line. Times
are best of ``--runs`` alternating runs.

    python benchmarks/render.py [--mb 50] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

from benchmarks.load import generate

RENDER_BAR = 2.5
SIZE_BAR = 0.5

_PARSE_JSON = """\
import json, sys
with open(sys.argv[1], "rb") as stream:
    for line in stream:
        json.loads(line)
"""
_PARSE_MSGSPEC = """\
import msgspec, sys
decode = msgspec.json.Decoder().decode
with open(sys.argv[1], "rb") as stream:
    for line in stream:
        decode(line)
"""
#: ``turnfold render`` with no partner: the page shared with a child forked after the load.
_RENDER_FORK_AFTER = """\
import sys, turnfold.cli as cli
cli.PARTNER_MIN_BYTES = 1 << 62
sys.argv[0] = "turnfold"
cli.run()
"""
#: One render timed stage by stage (argv: source, page, "fork" or "one"); prints the seconds of
#: imports, load, page and write, then the clock as it ends its work: what follows, until the
#: process has exited, is the interpreter freeing the transcript. The page is built in memory
#: first so its write is timed apart.
_STAGES = """\
import io, sys, time
start = time.perf_counter()
import turnfold.cli
from turnfold.formats import load
from turnfold.render.page import write_page
imported = time.perf_counter()
transcript = load(sys.argv[1])
loaded = time.perf_counter()
page = io.BytesIO()
write_page(page, transcript, title="session.jsonl", fork=sys.argv[3] == "fork")
built = time.perf_counter()
with open(sys.argv[2], "wb") as stream:
    stream.write(page.getbuffer())
written = time.perf_counter()
print(imported - start, loaded - imported, built - loaded, written - built, time.monotonic())
"""


def _environment() -> dict[str, str]:
    """This environment without ``PYTHONDONTWRITEBYTECODE``: children read and write .pyc."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _run(command: list[str]) -> tuple[float, list[float]]:
    """Run ``command`` to its end; its wall time, and the figures it printed with the time
    since the last one (a clock reading: ``time.monotonic`` is the same clock in every process)
    in its place."""
    start = time.perf_counter()
    done = subprocess.run(command, env=_environment(), capture_output=True, check=False)
    spent, ended = time.perf_counter() - start, time.monotonic()
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}):\n{done.stderr.decode()}")
    figures = [float(figure) for figure in done.stdout.split()]
    if figures:
        figures[-1] = ended - figures[-1]
    return spent, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the session and the page in this folder")
    options = parser.parse_args()
    python = sys.executable

    with tempfile.TemporaryDirectory() as tmp:
        folder = options.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        source, page = folder / "session.jsonl", folder / "session.html"
        stage_page = folder / "session.stage.html"
        size = generate(source, options.mb)
        lines = sum(1 for _ in source.open("rb"))
        render_args = ["render", str(source), "-o", str(stage_page)]
        commands = {
            "json": [python, "-c", _PARSE_JSON, str(source)],
            "msgspec": [python, "-c", _PARSE_MSGSPEC, str(source)],
            "render": [python, "-m", "turnfold", "render", str(source), "-o", str(page)],
            "render-fork-after": [python, "-c", _RENDER_FORK_AFTER, *render_args],
            "start-up": [python, "-c", "pass"],
            "one": [python, "-c", _STAGES, str(source), str(stage_page), "one"],
            "fork": [python, "-c", _STAGES, str(source), str(stage_page), "fork"],
        }
        best = dict.fromkeys(commands, float("inf"))
        stages: dict[str, list[float]] = {"one": [float("inf")] * 5, "fork": [float("inf")] * 5}
        for command in commands.values():  # the warm-up: writes the bytecode, fills the cache
            _run(command)
        for _ in range(options.runs):
            for name, command in commands.items():
                spent, figures = _run(command)
                best[name] = min(best[name], spent)
                if name in stages:
                    stages[name] = [min(a, b) for a, b in zip(stages[name], figures, strict=True)]
        page_size = page.stat().st_size

    parse, fast = best["json"], best["msgspec"]
    rendered = best["render"]
    print(f"{size / 2**20:.1f} MB, {lines} lines; page {page_size / 2**20:.1f} MB")
    print(
        f"whole processes: json.loads per line {parse:.2f}s, msgspec {fast:.2f}s, "
        f"turnfold render {rendered:.2f}s (python -c pass {best['start-up']:.2f}s)"
    )
    after = best["render-fork-after"]
    print(
        f"turnfold render {rendered / parse:.2f}x the json.loads process (a partner reads "
        f"files of 16 MB and more beside it); with no partner, a child forked after the load "
        f"when the session has 5,000 entries: {after / parse:.2f}x"
    )
    for name, label in (("one", "page in one process"), ("fork", "page shared with a child")):
        imports, load, built, write, leaving = stages[name]
        print(
            f"where it goes, {label} (x json.loads process): start-up "
            f"{best['start-up'] / parse:.2f}x, imports {imports / parse:.2f}x, load "
            f"{load / parse:.2f}x, page {built / parse:.2f}x ({built:.2f}s), write "
            f"{write / parse:.2f}x, exit {leaving / parse:.2f}x"
        )
    print(
        f"render/parse = {rendered / parse:.2f}x (bar {RENDER_BAR}x); "
        f"render/msgspec = {rendered / fast:.2f}x; page/input = {page_size / size:.2f}x "
        f"(bar {SIZE_BAR}x)"
    )


if __name__ == "__main__":
    main()
