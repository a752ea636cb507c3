"""A static site of many runs against rendering each run alone (spec B-2, issue 16).

Generates the corpus benchmark's sessions (``benchmarks/corpus.py``'s ``make_corpus``: Claude
Code sessions from ``benchmarks/load.py``'s generator with Codex, Gemini and Qwen fixtures mixed
in), then measures in the same run:

  baseline  each session rendered alone, one after the other on one core: ``turnfold.load``
            and ``write_page`` to a file, as ``turnfold render FILE`` does (imports done once,
            before the clock: a process per session would add its start to the baseline)
  first     ``build_site(folder, SITE, workers=2)`` in a fresh process (imports and the price
            table loaded before the clock by a site of one session, the worker processes'
            start inside it): the index and every page
  rebuild   the same, after one session grew by a line: that file alone is read and its page
            written; every other page is left as it is
  size      the site's pages against the sessions' bytes

Bars (issue 16): first <= 0.7x baseline (two cores); rebuild <= 0.05x first. Times are best of
``--runs`` alternating runs, each first build into an empty folder. The figures are printed as
the last line.

    python benchmarks/site.py [--sessions 200] [--mb 200] [--runs 2]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.*

from benchmarks.corpus import FIXTURES, MIXED, grow, make_corpus
from benchmarks.load import process_env

FIRST_BAR = 0.7
REBUILD_BAR = 0.05

#: A build in a fresh process, timed after what a first build imports and loads (the
#: formats, markdown, the price table): a site of one session is built first, outside the
#: clock, as the corpus benchmark imports ahead of its scans. Prints seconds and counts.
BUILD = """
import json, sys, tempfile, time
from turnfold.render.site import build_site
with tempfile.TemporaryDirectory() as warm:
    build_site(sys.argv[3], warm, workers=1, progress=False)
began = time.perf_counter()
report = build_site(sys.argv[1], sys.argv[2], workers=2, progress=False)
print(json.dumps({"seconds": time.perf_counter() - began, "rows": report.rows,
                  "written": report.written, "kept": report.kept}))
"""
#: What the warm-up build reads: one small session of the corpus benchmark's mix.
WARM_UP = FIXTURES / MIXED[0]


def alone(paths: list[Path], folder: Path) -> float:
    """Seconds to render every session alone, one after the other, in this process."""
    import turnfold
    from turnfold.render.page import write_page

    folder.mkdir(parents=True, exist_ok=True)
    total = 0.0
    for number, path in enumerate(paths):
        began = time.perf_counter()
        transcript = turnfold.load(path)
        with (folder / f"{number}.html").open("wb") as stream:
            write_page(stream, transcript, title=path.name, fork=False)
        total += time.perf_counter() - began
        del transcript
    return total


def build(source: Path, site: Path) -> dict[str, float]:
    command = [sys.executable, "-c", BUILD, str(source), str(site), str(WARM_UP)]
    done = subprocess.run(command, check=True, env=process_env(), capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--runs", type=int, default=2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "sessions"
        paths = make_corpus(folder, options.sessions, options.mb)
        size = sum(path.stat().st_size for path in paths)
        print(f"{len(paths)} sessions, {size / 1e6:.0f} MB")
        build(folder, work / "warm-up")  # bytecode written, as for a user
        baselines, firsts, rebuilds = [], [], []
        for run in range(max(1, options.runs)):
            baselines.append(alone(paths, work / f"alone-{run}"))
            shutil.rmtree(work / f"alone-{run}")
            site = work / f"site-{run}"
            firsts.append(build(folder, site))
            grow(paths[run % len(paths)], run)
            rebuilds.append(build(folder, site))
        pages = sum(page.stat().st_size for page in (work / "site-0" / "runs").glob("*.html"))
    baseline = min(baselines)
    first = min(firsts, key=lambda result: result["seconds"])
    rebuild = min(rebuilds, key=lambda result: result["seconds"])
    print(f"baseline, each session rendered alone on one core: {baseline:.2f}s "
          f"(best of {len(baselines)})")  # fmt: skip
    print(f"first build, 2 workers: {first['seconds']:.2f}s, {first['rows']:.0f} rows, "
          f"{first['written']:.0f} pages written; pages {pages / 1e6:.0f} MB")  # fmt: skip
    print(f"rebuild after one session grew: {rebuild['seconds']:.3f}s, "
          f"{rebuild['written']:.0f} page written, {rebuild['kept']:.0f} kept")  # fmt: skip
    print(
        f"site: first/baseline = {first['seconds'] / baseline:.2f}x (bar {FIRST_BAR}x), "
        f"rebuild/first = {rebuild['seconds'] / first['seconds']:.3f}x (bar {REBUILD_BAR}x), "
        f"pages/input = {pages / size:.2f}x"
    )


if __name__ == "__main__":
    main()
