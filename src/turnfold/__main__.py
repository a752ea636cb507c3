"""``python -m turnfold``: the same command line as ``turnfold`` (spec W-6)."""

from __future__ import annotations

from turnfold.cli import run

if __name__ == "__main__":
    run()
