"""Aligning two long runs against building one widget (spec B-3, issue 18).

Generates a ``--turns``-turn Claude Code session with ``benchmarks/load.py``'s generator (tool
outputs of up to 3,000 characters, as ``scale.py``), loads it, and makes a second run of the
same task from it: every 20th turn dropped, a turn of another session inserted after every 25th,
the prompt of every 10th edited (a sentence appended). Then measures, in this process, best of
``--runs`` alternating runs:

  baseline   ``TranscriptWidget(a)``: building the widget of the first run
  alignment  both runs planned and cut into blocks (``comparison.side_of``) and their prompts
             aligned (``comparison.align``): the bar
  unrelated  the same for two unrelated runs (another seed): no prompt equal to anchor on, so
             every prompt is matched by similarity, within ``SIMILARITY_BUDGET`` comparisons
  facts      the alignment and every pair's facts (``comparison.compare_transcripts``)
  widget     ``CompareWidget(a, b)``: all of it, and both sides' views (no bar)

Bars (issue 18): alignment <= 1 s and <= 0.5x the baseline. The figures are ratios against the
baseline measured in the same run; the alignment's seconds are printed too, for its absolute bar.

    python benchmarks/compare.py [--turns 2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

import turnfold
from benchmarks.load import SMALL_OUTPUT_SIZES, best_of, generate_turns
from turnfold.compare_widget import CompareWidget
from turnfold.comparison import align, compare_transcripts, side_of
from turnfold.model import Entry, Transcript, UserMessage
from turnfold.widget import TranscriptWidget

RATIO_BAR = 0.5
SECONDS_BAR = 1.0
EDIT = " Keep the public interface as it is."


def turns_of(transcript: Transcript) -> list[list[Entry]]:
    """The entries of each prompt and what followed it."""
    turns: list[list[Entry]] = []
    for entry in transcript.entries:
        if isinstance(entry, UserMessage) or not turns:
            turns.append([])
        turns[-1].append(entry)
    return turns


def second_run(first: Transcript, other: Transcript) -> Transcript:
    """``first`` as another run of its task would differ: turns dropped, inserted, edited."""
    entries: list[Entry] = []
    inserts = turns_of(other)
    for number, turn in enumerate(turns_of(first)):
        if number % 20 == 7:
            continue
        prompt = turn[0]
        if number % 10 == 5 and isinstance(prompt, UserMessage):
            turn = [replace(prompt, text=prompt.text + EDIT), *turn[1:]]
        entries += turn
        if number % 25 == 3:
            inserted = inserts[number % len(inserts)]
            entries += [replace(entry, id=f"inserted-{number}-{entry.id}") for entry in inserted]
    return Transcript(entries, metadata=dict(first.metadata))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns of the first run")
    parser.add_argument("--runs", type=int, default=3, help="alternating runs, best of")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        first_path, other_path = Path(tmp) / "first.jsonl", Path(tmp) / "other.jsonl"
        size = generate_turns(first_path, options.turns, output_sizes=SMALL_OUTPUT_SIZES)
        generate_turns(other_path, options.turns, seed=12, output_sizes=SMALL_OUTPUT_SIZES)
        first, other = turnfold.load(first_path), turnfold.load(other_path)
    second = second_run(first, other)
    print(f"runs: {options.turns:,} turns ({size / 2**20:.1f} MB) and its second run "
          f"({len(turns_of(second)):,} turns); an unrelated run of {options.turns:,}")  # fmt: skip

    def widget() -> None:
        TranscriptWidget(first).close()

    def alignment(b: Transcript) -> None:
        a_side, b_side = side_of(first), side_of(b)
        align([block.text for block in a_side.blocks], [block.text for block in b_side.blocks])

    def facts() -> None:
        compare_transcripts(side_of(first), side_of(second))

    def compare_widget() -> None:
        CompareWidget(first, second).close()

    baseline, aligned, unrelated, with_facts, whole = best_of(
        options.runs, widget, lambda: alignment(second), lambda: alignment(other), facts,
        compare_widget,
    )  # fmt: skip
    a_side, b_side = side_of(first), side_of(second)
    pairs = align([block.text for block in a_side.blocks], [block.text for block in b_side.blocks])
    paired = sum(1 for pair in pairs if pair.a is not None and pair.b is not None)
    edited = sum(1 for pair in pairs if 0 < pair.similarity < 1)
    print(f"aligned: {paired:,} pairs ({edited:,} edited), {len(pairs) - paired:,} gaps")
    print(f"baseline: TranscriptWidget(a) {baseline:.3f} s")
    ratio = aligned / baseline
    met = "met" if ratio <= RATIO_BAR and aligned <= SECONDS_BAR else "NOT MET"
    print(
        f"alignment: {aligned:.3f} s, {ratio:.2f}x (bars {RATIO_BAR}x and {SECONDS_BAR:g} s: {met})"
    )
    print(f"unrelated runs: {unrelated:.3f} s, {unrelated / baseline:.2f}x")
    print(f"with each pair's facts: {with_facts / baseline:.2f}x")
    print(f"CompareWidget(a, b): {whole / baseline:.2f}x")
    print(
        f"compare: align/widget = {ratio:.2f}x ({aligned:.2f} s; bars {RATIO_BAR}x and "
        f"{SECONDS_BAR:g} s: {met}); unrelated {unrelated / baseline:.2f}x; with facts "
        f"{with_facts / baseline:.2f}x; CompareWidget {whole / baseline:.2f}x"
    )


if __name__ == "__main__":
    main()
