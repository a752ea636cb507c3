"""``turnfold render`` of a large Claude Code session against parsing its lines (spec Q-1, W-6).

Generates the same 50 MB session as ``benchmarks/load.py`` (its generator, imported from this
directory), then measures in the same run:

  baseline  read the file line by line and json.loads every line
  measured  ``turnfold render FILE -o PAGE`` in-process (the CLI's main: load, view model,
            HTML, write)
  size      the page's size over the input's size
  stages    load, then the page (projection, view model and HTML, shared with a forked child
            on a second core, see turnfold.render.page) and its write, timed apart

Bars: render <= 4.0x the parse time; page <= 0.5x the input size. Closed content is kept in the
page (nothing silently dropped, X-2), so the page size is mostly tool output. The figures are
printed as the last line. Times are best of ``--runs`` alternating runs.

    python benchmarks/render.py [--mb 50] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# benchmarks/ is not a package: its generator is imported from this directory.
from load import best_of, generate, parse_lines
from turnfold.forking import can_fork

RENDER_BAR = 4.0
SIZE_BAR = 0.5


def render(source: Path, page: Path) -> None:
    from turnfold.cli import main

    with contextlib.redirect_stderr(io.StringIO()):  # "wrote …" is not part of the figure
        status = main(["render", str(source), "-o", str(page)])
    if status != 0:
        raise SystemExit(f"turnfold render failed with status {status}")


def stages(source: Path, runs: int) -> tuple[float, float, float]:
    """Best times of load, page (projection, nodes, HTML) and write, to show where time goes."""
    import turnfold
    from turnfold.render.page import write_page

    best = [float("inf")] * 3
    for _ in range(runs):
        start = time.perf_counter()
        transcript = turnfold.load(source)
        loaded = time.perf_counter()
        page = io.BytesIO()
        write_page(page, transcript)
        built = time.perf_counter()
        source.with_suffix(".stage.html").write_bytes(page.getbuffer())
        written = time.perf_counter()
        for index, spent in enumerate((loaded - start, built - loaded, written - built)):
            best[index] = min(best[index], spent)
    return best[0], best[1], best[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the session and the page in this folder")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = options.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        source, page = folder / "session.jsonl", folder / "session.html"
        size = generate(source, options.mb)
        lines = parse_lines(source)
        parse, rendered = best_of(
            options.runs, lambda: parse_lines(source), lambda: render(source, page)
        )
        page_size = page.stat().st_size
        load, page_time, write = stages(source, options.runs)

    print(f"{size / 2**20:.1f} MB, {lines} lines; page {page_size / 2**20:.1f} MB")
    print(f"json.loads per line: {parse:.2f}s   turnfold render: {rendered:.2f}s")
    print(
        f"where it goes (x parse): load {load / parse:.2f}x, page {page_time / parse:.2f}x "
        f"({'two processes' if can_fork() else 'one process'}), write {write / parse:.2f}x"
    )
    print(
        f"render/parse = {rendered / parse:.2f}x (bar {RENDER_BAR}x); "
        f"page/input = {page_size / size:.2f}x (bar {SIZE_BAR}x)"
    )


if __name__ == "__main__":
    main()
